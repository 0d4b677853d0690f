// SPDX-License-Identifier: MIT
/*
 * A 3.0 graph lowered to the layers the compiler takes: the inverse of
 * from_model3.c, for the graphs whose NPU part the layers can express (one
 * int8 input and one output; each layer reads any earlier tensor; a
 * residual add only into a convolution's int32 accumulator; concats along
 * channels, written in place by the producers or by a copy layer; softmax
 * and dequantize after the last layer, as the model's CPU op at the
 * output: output_op.c). A graph that is a chain
 * gives a chain (a 1.x/2.x model); the others carry their links
 * (model_links.h). Anything else is refused with the node and the reason,
 * never lowered to a different model. The batch stays the graph's: the
 * layers describe one slice.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph3.h"
#include "model.h"

#define NONE	UINT32_MAX

/* Channels a producer's DPU writes at once: a concat's inputs but the last fill them. */
#define CONCAT_GROUP	32

struct lower {
	const struct rkaccel_graph_desc *g;
	/* arrays of num_nodes + edges entries (a node's layer, a concat input's copy) */
	struct rkaccel_layer_desc *layers;
	uint32_t *layer_node;		/* node that names layer i */
	struct model_io *io;
	uint8_t *in_concat;		/* chain tensor already written into a concat */
	uint32_t *cat, num_cat;		/* concat inputs, all concats */
	void **owned;			/* weights made here (copies, groups), until the model copies them */
	uint32_t num_owned;
	uint32_t n;			/* layers so far */
	uint32_t cur;			/* graph tensor the layer being made reads */
	uint32_t last;			/* graph tensor of the last layer */
	uint32_t *chain;		/* graph tensor -> chain tensor (0, i + 1), or NONE */
	uint32_t *pending;		/* int32 accumulator -> its convolution node, or NONE */
	/* the CPU op at the output: the NPU tensor it reads, what it gives */
	struct rkaccel_output_op out_op;
	uint32_t npu_out, cpu_out;	/* graph tensors, NONE until a CPU node */
	char *msg;
	size_t msg_len;
};

static const struct rkaccel_graph_tensor *tensor(const struct lower *lw, uint32_t t)
{
	return &lw->g->tensors[t];
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int refuse(const struct lower *lw, uint32_t node, const char *fmt, ...)
{
	const struct rkaccel_graph_node *n = &lw->g->nodes[node];
	char why[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return model_bad(lw->msg, lw->msg_len, "node '%s' (%s): not compiled yet: %s",
		      tensor(lw, n->output)->name, rkaccel_graph_op_name(n->op), why);
}

/* Height, width and channels of a 4-D NHWC or a 2-D [N, C] tensor. */
static int hwc(const struct rkaccel_graph_tensor *t, uint32_t *h, uint32_t *w, uint32_t *c)
{
	if (t->n_dims == 4) {
		*h = t->dims[1];
		*w = t->dims[2];
		*c = t->dims[3];
		return 0;
	}
	if (t->n_dims == 2) {
		*h = *w = 1;
		*c = t->dims[1];
		return 0;
	}
	return -EINVAL;
}

static uint32_t channels_of(const struct lower *lw, uint32_t t)
{
	uint32_t h, w, c = 0;

	hwc(tensor(lw, t), &h, &w, &c);
	return c;
}

/* No room for another layer: true, with the refusal in the message. */
static bool full(struct lower *lw, uint32_t node)
{
	if (lw->n < RKACCEL_MODEL_MAX_MEM_LAYERS)
		return false;
	refuse(lw, node, "more than %u layers: the limit of a model in memory",
	       RKACCEL_MODEL_MAX_MEM_LAYERS);
	return true;
}

/* The new layer that reads the chain's current tensor. */
static struct rkaccel_layer_desc *new_layer(struct lower *lw, uint32_t node)
{
	const struct rkaccel_graph_tensor *in = tensor(lw, lw->cur);
	struct rkaccel_layer_desc *l = &lw->layers[lw->n];

	*l = (struct rkaccel_layer_desc){
		.in_features = channels_of(lw, lw->cur),
		.in_zero_point = in->zero_point, .in_scale = in->scale,
		.weight_scale = 1.0f,	/* a pool's: unused, the chain wants one */
	};
	lw->layer_node[lw->n] = node;
	lw->io[lw->n] = (struct model_io){ .src = lw->chain[lw->cur] };
	return l;
}

/* Layer @l writes graph tensor @t: it becomes the chain's current tensor. */
static void end_layer(struct lower *lw, struct rkaccel_layer_desc *l, uint32_t t)
{
	const struct rkaccel_graph_tensor *o = tensor(lw, t);

	l->out_features = channels_of(lw, t);
	l->out_scale = o->scale;
	l->out_zero_point = o->zero_point;
	lw->chain[t] = ++lw->n;
	lw->last = t;
}

/* The window fields of a convolution or a pool. */
static int window(const struct lower *lw, uint32_t node, struct rkaccel_layer_desc *l)
{
	const struct rkaccel_graph_node *n = &lw->g->nodes[node];

	if (n->stride_h != n->stride_w)
		return refuse(lw, node, "stride %ux%u: the chain has one stride for both axes",
			      n->stride_h, n->stride_w);
	if (n->dilation_h > 1 || n->dilation_w > 1)
		return refuse(lw, node, "dilation %ux%u: the chain has none", n->dilation_h,
			      n->dilation_w);
	l->kernel_h = n->kernel_h;
	l->kernel_w = n->kernel_w;
	l->stride = n->stride_h;
	l->pad_top = n->pad_top;
	l->pad_left = n->pad_left;
	l->pad_bottom = n->pad_bottom;
	l->pad_right = n->pad_right;
	return 0;
}

static bool is_1x1(const struct rkaccel_graph_node *n)
{
	return n->kernel_h == 1 && n->kernel_w == 1 && n->stride_h == 1 && n->stride_w == 1 &&
	       !n->pad_top && !n->pad_left && !n->pad_bottom && !n->pad_right;
}

/*
 * A grouped convolution as one convolution over all the input channels,
 * its weights block-diagonal: output channel o of group k has group k's
 * weights at input channels k * in/groups on and zeros elsewhere. Exact
 * (a zero weight adds nothing to the int32 sum) at groups times the MACs
 * and weight bytes of per-group convolutions: the array has no groups.
 */
static int expand_groups(struct lower *lw, uint32_t node, struct rkaccel_layer_desc *l)
{
	const struct rkaccel_graph_node *n = &lw->g->nodes[node];
	uint32_t cin = channels_of(lw, n->inputs[0]), cout = channels_of(lw, n->output);
	uint32_t ig = cin / n->groups, og = cout / n->groups, taps = n->kernel_h * n->kernel_w;
	int8_t *w = calloc((size_t)cout * taps, cin);

	if (!w)
		return model_bad(lw->msg, lw->msg_len, "out of memory");
	lw->owned[lw->num_owned++] = w;
	for (size_t o = 0; o < cout; o++)
		for (size_t t = 0; t < taps; t++)
			memcpy(w + (o * taps + t) * cin + o / og * ig,
			       n->weights + (o * taps + t) * ig, ig);
	l->weights = w;
	return 0;
}

/* A convolution, grouped convolution or FC node. */
static int conv_layer(struct lower *lw, uint32_t node, struct rkaccel_layer_desc *l)
{
	const struct rkaccel_graph_node *n = &lw->g->nodes[node];
	const struct rkaccel_graph_tensor *in = tensor(lw, lw->cur);
	uint32_t h = 1, w = 1, c = 0;
	int ret;

	if (n->act == RKACCEL_ACT_CLIP || n->act == RKACCEL_ACT_LEAKY)
		return refuse(lw, node, "activation %s: the chain has ReLU only",
			      n->act == RKACCEL_ACT_CLIP ? "clip" : "leaky");
	hwc(in, &h, &w, &c);
	if (n->op == RKACCEL_GOP_FC) {
		/*
		 * The chain's FC is per pixel: it is a flattening FC on one pixel.
		 * Over an HxW map, the FC is the unpadded HxW convolution: its
		 * weights [out][K], K flattened NHWC, are [out][ky][kx][in].
		 */
		l->op = RKACCEL_OP_FC;
		if (h * w != 1) {
			if (h > 11 || w > 11)
				return refuse(lw, node,
					      "fc flattens %ux%ux%u: as a convolution its %ux%u kernel exceeds 11x11",
					      h, w, c, h, w);
			l->op = RKACCEL_OP_CONV;
			l->kernel_h = h;
			l->kernel_w = w;
			l->stride = 1;
		}
	} else if (n->op != RKACCEL_GOP_DWCONV && is_1x1(n)) {
		l->op = RKACCEL_OP_FC;	/* the chain's 1x1 op, read as one column */
	} else {
		l->op = n->op == RKACCEL_GOP_DWCONV ? RKACCEL_OP_DWCONV : RKACCEL_OP_CONV;
		ret = window(lw, node, l);
		if (ret)
			return ret;
	}
	l->flags = n->act == RKACCEL_ACT_RELU ? RKACCEL_LAYER_RELU : 0;
	l->weight_scale = n->weight_scale;
	l->weights = n->weights;
	l->bias = n->bias;
	l->weight_scales = n->weight_scales;
	return n->op == RKACCEL_GOP_GROUPCONV ? expand_groups(lw, node, l) : 0;
}

/*
 * A max pool in ceil mode: its windows cut by the input's end are more
 * padding at the bottom and right, which the max skips as it skips any
 * padding. The graph's output tensor has the ceil-mode size already.
 */
static int ceil_pads(struct lower *lw, uint32_t node, struct rkaccel_layer_desc *l)
{
	const struct rkaccel_graph_node *n = &lw->g->nodes[node];
	uint32_t h = 1, w = 1, c, oh = 1, ow = 1;

	hwc(tensor(lw, n->inputs[0]), &h, &w, &c);
	hwc(tensor(lw, n->output), &oh, &ow, &c);
	while ((w + l->pad_left + l->pad_right - l->kernel_w) / l->stride + 1 < ow)
		l->pad_right++;
	while ((h + l->pad_top + l->pad_bottom - l->kernel_h) / l->stride + 1 < oh)
		l->pad_bottom++;
	return 0;
}

static int pool_layer(struct lower *lw, uint32_t node, struct rkaccel_layer_desc *l)
{
	const struct rkaccel_graph_node *n = &lw->g->nodes[node];
	int ret;

	if (n->op == RKACCEL_GOP_GLOBAL_AVGPOOL) {
		l->op = RKACCEL_OP_AVGPOOL;
		return 0;
	}
	if (n->op == RKACCEL_GOP_AVGPOOL && !(n->flags & RKACCEL_NODE_COUNT_INCLUDE_PAD) &&
	    (n->pad_top || n->pad_left || n->pad_bottom || n->pad_right))
		return refuse(lw, node, "padding left out of the count: the chain divides by the whole window");
	l->op = n->op == RKACCEL_GOP_MAXPOOL ? RKACCEL_OP_MAXPOOL : RKACCEL_OP_AVGPOOL;
	ret = window(lw, node, l);
	if (ret || !(n->flags & RKACCEL_NODE_CEIL_MODE))
		return ret;
	if (n->op != RKACCEL_GOP_MAXPOOL)
		return refuse(lw, node, "average pooling in ceil mode: the datapath divides a window cut by the end by the whole window");
	return ceil_pads(lw, node, l);
}

/* The ADD of a convolution's int32 accumulator: the flag ADD on that layer. */
static int add_into(struct lower *lw, uint32_t node, struct rkaccel_layer_desc *l,
		    uint32_t acc, uint32_t conv_node)
{
	const struct rkaccel_graph_node *a = &lw->g->nodes[node];
	uint32_t other = a->inputs[0] == acc ? a->inputs[1] : a->inputs[0];
	const struct rkaccel_graph_node *conv = &lw->g->nodes[conv_node];
	float acc_scale = l->in_scale * l->weight_scale;

	if (a->act != RKACCEL_ACT_NONE && a->act != RKACCEL_ACT_RELU)
		return refuse(lw, node, "activation after the add: the chain has ReLU only");
	if (conv->act != RKACCEL_ACT_NONE)
		return refuse(lw, conv_node, "activation before the add: the chain applies it after");
	if (lw->chain[other] == NONE)
		return refuse(lw, node, "adds '%s', not a tensor of the chain",
			      tensor(lw, other)->name);
	if (g3_fbits(tensor(lw, acc)->scale) != g3_fbits(acc_scale))
		return refuse(lw, conv_node, "accumulator '%s' has scale %.9g, the chain's is input x weight scale %.9g",
			      tensor(lw, acc)->name, (double)tensor(lw, acc)->scale,
			      (double)acc_scale);
	l->flags = (a->act == RKACCEL_ACT_RELU ? RKACCEL_LAYER_RELU : 0) | RKACCEL_LAYER_ADD;
	l->add_input = lw->chain[other];
	return 0;
}

/*
 * A copy of graph tensor @t into a concat of @node: a depthwise 1x1 layer
 * with weight 1 and no bias. The format quantizes a concat's inputs as the
 * concat, so the requantization multiplies by exactly 1 and the copy is
 * exact. Used where no layer can write @t in place: @t is the graph input,
 * or it is written into another concat already.
 */
static int copy_layer(struct lower *lw, uint32_t node, uint32_t t, uint32_t *ct)
{
	const struct rkaccel_graph_tensor *o = tensor(lw, lw->g->nodes[node].output);
	uint32_t c = channels_of(lw, t);
	struct rkaccel_layer_desc *l;
	int32_t *bias;
	int8_t *ones;

	if (full(lw, node))
		return -EINVAL;
	bias = calloc(c, sizeof(*bias) + sizeof(*ones));
	if (!bias)
		return model_bad(lw->msg, lw->msg_len, "out of memory");
	lw->owned[lw->num_owned++] = bias;
	ones = (int8_t *)(bias + c);
	memset(ones, 1, c);
	lw->cur = t;
	l = new_layer(lw, node);
	l->op = RKACCEL_OP_DWCONV;
	l->kernel_h = l->kernel_w = l->stride = 1;
	l->weights = ones;
	l->bias = bias;
	l->out_features = c;
	l->out_scale = o->scale;
	l->out_zero_point = o->zero_point;
	*ct = ++lw->n;		/* readers of @t other than the concat keep the original */
	return 0;
}

/*
 * A concat along channels as a layer without tasks: its producers write
 * into its tensor at their channel offsets, and every input but the last
 * fills whole groups of 32 channels (the DPU writes 32 at a time). An
 * input no layer can write in place goes through a copy layer.
 * The format quantizes every input as the concat (rkaccel_graph_validate()):
 * each producer's output conversion writes the concat's scale directly.
 */
static int concat_layer(struct lower *lw, uint32_t node)
{
	const struct rkaccel_graph_node *n = &lw->g->nodes[node];
	const struct rkaccel_graph_tensor *o = tensor(lw, n->output);
	struct rkaccel_layer_desc *l;
	uint32_t off = 0;
	int ret;

	if (o->n_dims != 4 || n->axis != 3)
		return refuse(lw, node, "axis %u of %u dimensions: only channels of NHWC tensors are concatenated",
			      n->axis, o->n_dims);
	if (o->type != RKACCEL_DTYPE_INT8)
		return refuse(lw, node, "output type %u: a concat gives int8", o->type);
	for (uint32_t k = 0; k < n->num_inputs; k++) {
		uint32_t t = n->inputs[k], ct = lw->chain[t], c = channels_of(lw, t);

		if (ct == NONE)
			return refuse(lw, node, "input '%s' is no tensor a layer computes",
				      tensor(lw, t)->name);
		if (k + 1 < n->num_inputs && c % CONCAT_GROUP)
			return refuse(lw, node, "input '%s' has %u channels at offset %u: every input but the last needs a multiple of %u, the channels the DPU writes at once",
				      tensor(lw, t)->name, c, off, CONCAT_GROUP);
		if (!ct || lw->in_concat[ct]) {
			ret = copy_layer(lw, node, t, &ct);
			if (ret)
				return ret;
		}
		lw->in_concat[ct] = 1;
		lw->cat[lw->num_cat + k] = ct;
		off += c;
	}
	if (full(lw, node))
		return -EINVAL;
	l = &lw->layers[lw->n];
	*l = (struct rkaccel_layer_desc){
		.op = RKACCEL_OP_CONCAT, .in_features = off, .in_scale = o->scale,
		.in_zero_point = o->zero_point, .weight_scale = 1.0f,
	};
	lw->layer_node[lw->n] = node;
	lw->io[lw->n] = (struct model_io){ .cat_first = lw->num_cat, .cat_count = n->num_inputs };
	lw->num_cat += n->num_inputs;
	end_layer(lw, l, n->output);
	return 0;
}

static int add_node(struct lower *lw, uint32_t node);

/* Whether every node after @node runs on the CPU. */
static bool only_cpu_after(const struct lower *lw, uint32_t node)
{
	for (uint32_t k = node + 1; k < lw->g->num_nodes; k++)
		if (lw->g->nodes[k].op != RKACCEL_GOP_SOFTMAX &&
		    lw->g->nodes[k].op != RKACCEL_GOP_DEQUANTIZE)
			return false;
	return true;
}

/* Softmax along @axis of @t: the elements of one slice as outer x len x inner. */
static void axis_split(const struct rkaccel_graph_tensor *t, uint32_t axis,
		       struct rkaccel_output_op *op)
{
	op->outer = op->inner = 1;
	op->axis_len = t->dims[axis];
	for (uint32_t k = 1; k < axis; k++)
		op->outer *= t->dims[k];
	for (uint32_t k = axis + 1; k < t->n_dims; k++)
		op->inner *= t->dims[k];
}

/*
 * A softmax or dequantize: the model's CPU op at the output, which reads
 * a tensor of the NPU (int8, or int32 to dequantize) or the dequantize
 * before it. At most a dequantize then a softmax.
 */
static int take_output_op(struct lower *lw, uint32_t node)
{
	const struct rkaccel_graph_node *n = &lw->g->nodes[node];
	uint32_t t = n->inputs[0];
	const struct rkaccel_graph_tensor *in = tensor(lw, t);
	struct rkaccel_output_op *op = &lw->out_op;

	if (lw->cpu_out != NONE && (t != lw->cpu_out || n->op != RKACCEL_GOP_SOFTMAX ||
				    op->flags & RKACCEL_OUTPUT_SOFTMAX))
		return refuse(lw, node, "a second CPU op: the model runs a dequantize, a softmax, or a dequantize then a softmax at its output");
	if (lw->cpu_out == NONE) {
		if (lw->chain[t] == NONE || !lw->chain[t])
			return refuse(lw, node, "reads '%s', which no layer of the NPU computes",
				      in->name);
		if (in->type != RKACCEL_DTYPE_INT8 && in->type != RKACCEL_DTYPE_INT32)
			return refuse(lw, node, "input type %u: the NPU gives int8 or int32", in->type);
		*op = (struct rkaccel_output_op){
			.in_bytes = in->type == RKACCEL_DTYPE_INT32 ? 4 : 1,
			.scale = in->scale, .zero_point = in->zero_point,
		};
		axis_split(in, in->n_dims - 1, op);	/* no softmax: any split */
		lw->npu_out = t;
	}
	if (n->op == RKACCEL_GOP_SOFTMAX) {
		op->flags = RKACCEL_OUTPUT_SOFTMAX;
		axis_split(in, n->axis, op);
	}
	op->graph_tensor = n->output;
	lw->cpu_out = n->output;
	return 0;
}

/* The NPU ops the layers have; an int32 convolution waits for its ADD. */
static int lower_node(struct lower *lw, uint32_t *i)
{
	const struct rkaccel_graph_desc *g = lw->g;
	const struct rkaccel_graph_node *n = &g->nodes[*i];
	const struct rkaccel_graph_tensor *out = tensor(lw, n->output);
	struct rkaccel_layer_desc *l;
	int ret;

	switch (n->op) {
	case RKACCEL_GOP_CONCAT:
		return concat_layer(lw, *i);
	case RKACCEL_GOP_SOFTMAX:
	case RKACCEL_GOP_DEQUANTIZE:
		return take_output_op(lw, *i);
	case RKACCEL_GOP_ADD:
		return add_node(lw, *i);
	default:
		break;
	}
	if (n->num_inputs != 1 || lw->chain[n->inputs[0]] == NONE)
		return refuse(lw, *i, "reads '%s', which no layer computes",
			      tensor(lw, n->inputs[0])->name);
	if (full(lw, *i))
		return -EINVAL;
	lw->cur = n->inputs[0];
	l = new_layer(lw, *i);
	if (n->op >= RKACCEL_GOP_MAXPOOL) {
		if (out->type != RKACCEL_DTYPE_INT8)
			return refuse(lw, *i, "output type %u: the chain's pools give int8", out->type);
		ret = pool_layer(lw, *i, l);
		if (!ret)
			end_layer(lw, l, n->output);
		return ret;
	}
	ret = conv_layer(lw, *i, l);
	if (ret)
		return ret;
	if (out->type == RKACCEL_DTYPE_INT8) {
		end_layer(lw, l, n->output);
		return 0;
	}
	if (out->type != RKACCEL_DTYPE_INT32)
		return refuse(lw, *i, "output type %u: the chain gives int8 or int32", out->type);
	if (only_cpu_after(lw, *i)) {
		/* the last layer's raw accumulator */
		l->flags |= RKACCEL_LAYER_OUT_INT32;
		end_layer(lw, l, n->output);
		return 0;
	}
	/*
	 * The accumulator waits for its add, where the layer is made: the add's
	 * other operand may come after the convolution (a ResNet shortcut).
	 */
	lw->pending[n->output] = *i;
	return 0;
}

/* An ADD of a pending int32 accumulator and a tensor computed before the ADD. */
static int add_node(struct lower *lw, uint32_t node)
{
	const struct rkaccel_graph_node *a = &lw->g->nodes[node];
	struct rkaccel_layer_desc *l;
	uint32_t acc = NONE, conv;
	int ret;

	for (uint32_t k = 0; k < 2; k++)
		if (acc == NONE && lw->pending[a->inputs[k]] != NONE)
			acc = a->inputs[k];
	if (acc == NONE)
		return refuse(lw, node, "the chain adds only into the int32 accumulator of a convolution (issue 26)");
	conv = lw->pending[acc];
	lw->pending[acc] = NONE;
	if (full(lw, conv))
		return -EINVAL;
	lw->cur = lw->g->nodes[conv].inputs[0];
	l = new_layer(lw, conv);
	ret = conv_layer(lw, conv, l);
	if (!ret)
		ret = add_into(lw, node, l, acc, conv);
	if (ret)
		return ret;
	if (tensor(lw, a->output)->type != RKACCEL_DTYPE_INT8)
		return refuse(lw, node, "the chain's add gives int8");
	end_layer(lw, l, a->output);
	return 0;
}

/* One int8 input, one output; image or [N, C]. */
static int check_io(struct lower *lw)
{
	const struct rkaccel_graph_desc *g = lw->g;
	const struct rkaccel_graph_input *in = &g->inputs[0];
	const struct rkaccel_graph_tensor *t;
	uint32_t h = 1, w = 1, c = 0;

	if (g->num_inputs != 1 || g->num_outputs != 1)
		return model_bad(lw->msg, lw->msg_len,
			      "%u inputs, %u outputs: not compiled yet: the compiler takes one of each (issue 26)",
			      g->num_inputs, g->num_outputs);
	t = tensor(lw, in->tensor);
	if (t->type != RKACCEL_DTYPE_INT8)
		return model_bad(lw->msg, lw->msg_len,
			      "input '%s': not compiled yet: type %u, the chain takes int8", t->name,
			      t->type);
	if (hwc(t, &h, &w, &c))
		return model_bad(lw->msg, lw->msg_len,
			      "input '%s': not compiled yet: %u dimensions, the chain takes NHWC or [N, C]",
			      t->name, t->n_dims);
	if (in->mean || in->std || in->channel_order != RKACCEL_CHANNELS_AS_IS)
		return model_bad(lw->msg, lw->msg_len,
			      "input '%s': not compiled yet: normalisation (mean, std, channel order) is not run yet (issue 26)",
			      t->name);
	return 0;
}

/* "node 'x' (op): " before a message of rkaccel_model_validate() about layer i. */
static int chain_refused(struct lower *lw, const char *why)
{
	unsigned int i;

	if (sscanf(why, "layer %u:", &i) == 1 && i < lw->n)
		return refuse(lw, lw->layer_node[i], "%s", strchr(why, ':') + 2);
	return model_bad(lw->msg, lw->msg_len, "not compiled yet: %s", why);
}

/* A chain when every layer reads the one before and none concatenates. */
static bool is_chain(const struct lower *lw)
{
	for (uint32_t i = 0; i < lw->n; i++)
		if (lw->io[i].src != i || lw->layers[i].op == RKACCEL_OP_CONCAT)
			return false;
	return true;
}

/*
 * Every tensor a layer writes has the graph's shape: a lowering that
 * changed a window (ceil mode's padding, an FC as a convolution) must
 * give the pixels the graph's consumers and outputs expect.
 */
static int check_shapes(struct lower *lw, const struct rkaccel_model *m)
{
	for (uint32_t t = 0; t < lw->g->num_tensors; t++) {
		struct rkaccel_tensor_shape s = { 0 };
		uint32_t h = 1, w = 1, c = 0;

		if (lw->chain[t] == NONE || !lw->chain[t])
			continue;
		hwc(tensor(lw, t), &h, &w, &c);
		if (rkaccel_model_shape(m, lw->chain[t], &s) ||
		    s.height != h || s.width != w || s.channels != c)
			return refuse(lw, lw->layer_node[lw->chain[t] - 1],
				      "'%s' lowers to %ux%ux%u, the graph has %ux%ux%u",
				      tensor(lw, t)->name, s.height, s.width, s.channels, h, w, c);
	}
	return 0;
}

/* Which graph tensor each model tensor holds, for rkaccel_model_graph_tensor(). */
static int keep_graph_tensors(struct lower *lw, struct rkaccel_model *m)
{
	uint32_t n = m->desc.num_layers + 1;

	m->graph_tensor = malloc(n * sizeof(*m->graph_tensor));
	if (!m->graph_tensor)
		return model_bad(lw->msg, lw->msg_len, "out of memory");
	for (uint32_t t = 0; t < n; t++)
		m->graph_tensor[t] = MODEL_NO_TENSOR;
	/* a copy into a concat or an int32 accumulator has no chain tensor */
	for (uint32_t g = 0; g < lw->g->num_tensors; g++)
		if (lw->chain[g] != NONE)
			m->graph_tensor[lw->chain[g]] = g;
	return 0;
}

/* The graph's output: the last layer's tensor, or the CPU op's after it. */
static int check_output(struct lower *lw)
{
	uint32_t out = lw->g->outputs[0];

	if (lw->cpu_out != NONE && out != lw->cpu_out)
		return model_bad(lw->msg, lw->msg_len,
			      "output '%s': not compiled yet: CPU ops ('%s') run only at the output",
			      tensor(lw, out)->name, tensor(lw, lw->cpu_out)->name);
	if (lw->cpu_out != NONE && lw->npu_out != lw->last)
		return model_bad(lw->msg, lw->msg_len,
			      "output '%s': not compiled yet: its CPU op reads '%s', not the last layer's tensor '%s'",
			      tensor(lw, out)->name, tensor(lw, lw->npu_out)->name,
			      tensor(lw, lw->last)->name);
	if (lw->cpu_out == NONE && out != lw->last)
		return model_bad(lw->msg, lw->msg_len,
			      "output '%s': not compiled yet: the output is the last layer's tensor '%s'",
			      tensor(lw, out)->name, tensor(lw, lw->last)->name);
	return 0;
}

static int lower_all(struct lower *lw, struct rkaccel_model **model)
{
	const struct rkaccel_graph_desc *g = lw->g;
	const struct rkaccel_graph_tensor *in;
	struct rkaccel_model_desc d;
	bool all_fc = true, chain;
	uint32_t h = 1, w = 1, c = 0;
	char why[256];
	int ret = check_io(lw);

	if (ret)
		return ret;
	lw->last = g->inputs[0].tensor;
	lw->chain[lw->last] = 0;
	for (uint32_t i = 0; i < g->num_nodes && !ret; i++)
		ret = lower_node(lw, &i);
	if (ret)
		return ret;
	ret = check_output(lw);
	if (ret)
		return ret;
	in = tensor(lw, g->inputs[0].tensor);
	hwc(in, &h, &w, &c);
	for (uint32_t i = 0; i < lw->n; i++)
		all_fc &= lw->layers[i].op == RKACCEL_OP_FC;
	chain = is_chain(lw);
	/* an MLP (1.x) when nothing needs the image: rows x 1 */
	d = (struct rkaccel_model_desc){
		.rows = h * w, .num_layers = lw->n, .layers = lw->layers,
		.height = all_fc && chain && w == 1 ? 0 : h,
		.width = all_fc && chain && w == 1 ? 0 : w,
	};
	ret = model_check(&d, chain ? NULL : lw->io, lw->cat, lw->num_cat, NULL, why, sizeof(why));
	if (ret)
		return chain_refused(lw, why);
	ret = model_copy_links(&d, chain ? NULL : lw->io, lw->cat, lw->num_cat, model, why,
			       sizeof(why));
	if (ret)
		return model_bad(lw->msg, lw->msg_len, "%s", ret == -ENOMEM ? "out of memory" : why);
	ret = check_shapes(lw, *model);
	if (!ret)
		ret = keep_graph_tensors(lw, *model);
	(*model)->out_op = lw->out_op;
	(*model)->has_out_op = lw->cpu_out != NONE;
	if (ret) {
		rkaccel_model_free(*model);
		*model = NULL;
	}
	return ret;
}

static int lower_alloc(struct lower *lw)
{
	const struct rkaccel_graph_desc *g = lw->g;
	size_t nodes = g->num_nodes, edges = 0, layers;

	for (uint32_t i = 0; i < g->num_nodes; i++)
		edges += g->nodes[i].num_inputs;
	layers = nodes + edges;	/* a node makes one layer, a concat input one copy */
	lw->layers = calloc(layers, sizeof(*lw->layers));
	lw->layer_node = calloc(layers, sizeof(*lw->layer_node));
	lw->io = calloc(layers, sizeof(*lw->io));
	lw->in_concat = calloc(layers + 1, 1);
	lw->cat = calloc(edges, sizeof(*lw->cat));
	lw->owned = calloc(edges + nodes, sizeof(*lw->owned));
	lw->chain = malloc(g->num_tensors * sizeof(*lw->chain));
	lw->pending = malloc(g->num_tensors * sizeof(*lw->pending));
	if (!lw->layers || !lw->layer_node || !lw->io || !lw->in_concat || !lw->cat ||
	    !lw->owned || !lw->chain || !lw->pending)
		return -ENOMEM;
	memset(lw->chain, 0xff, g->num_tensors * sizeof(*lw->chain));
	memset(lw->pending, 0xff, g->num_tensors * sizeof(*lw->pending));
	return 0;
}

static void lower_free(struct lower *lw)
{
	free(lw->layers);
	free(lw->layer_node);
	free(lw->io);
	free(lw->in_concat);
	free(lw->cat);
	for (uint32_t i = 0; i < lw->num_owned; i++)
		free(lw->owned[i]);
	free(lw->owned);
	free(lw->chain);
	free(lw->pending);
}

int rkaccel_graph_to_model(const struct rkaccel_graph_desc *desc, struct rkaccel_model **model,
			   char *msg, size_t msg_len)
{
	struct lower lw = { .g = desc, .msg = msg, .msg_len = msg_len, .npu_out = NONE,
			    .cpu_out = NONE };
	int ret;

	if (!desc || !model)
		return model_bad(msg, msg_len, "invalid arguments");
	ret = rkaccel_graph_validate(desc, msg, msg_len);
	if (ret)
		return ret;
	ret = lower_alloc(&lw);
	if (ret)
		model_bad(msg, msg_len, "out of memory");
	else
		ret = lower_all(&lw, model);
	lower_free(&lw);
	return ret;
}
