// SPDX-License-Identifier: MIT
/*
 * Lowering a quantized graph that is not a chain (lower_chain.c keeps
 * those) to a model format 3.0 graph (lib/model, model-format.rst "Version
 * 3.0: graphs"), batch 1: one 3.0 node per NPU node, NCHW tensors as NHWC,
 * ONNX's tensor names. What the datapath does and the float model asks:
 *
 * - Conv: conv, dwconv or groupconv; weights from [o][c][ky][kx] to
 *   [o][ky][kx][c]. FullyConnected: fc over the whole map, its weights
 *   permuted from ONNX's NCHW flattening to NHWC's (GlobalAveragePool,
 *   Flatten and Gemm thus lower to global_avgpool and fc).
 * - ReLU6 (Clip(0, 6) fused) is ReLU with the output range cut at 6
 *   (quantize.c): the int8 saturation is the clip, exactly when the range
 *   reaches 6, a plain range clip otherwise.
 * - Add: the residual add of the datapath, into a convolution's int32
 *   accumulator: the convolution that only this Add reads writes int32
 *   (scale input x weight scale) and the add sums it with the other operand.
 * - MaxPool with padding: the NPU pads with the input zero point, which is
 *   the float model's "ignore the padding" only when it is -128, the least
 *   int8 (behind a ReLU): otherwise refused.
 * - MaxPool in ceil mode: the node's ceil flag; the runtime pads the end,
 *   so the padding rule above holds for that padding too. AveragePool in
 *   ceil mode only where it adds no window (the NPU divides by the whole).
 * - Concat along channels: every input quantized as the concat (quantize.c
 *   unifies their ranges), every input but the last a multiple of 32
 *   channels (cv_check_concats(), also before calibration).
 * - Flatten/Reshape of [1, C, 1, 1] to [1, C]: the same 3.0 tensor.
 * - A Conv or FullyConnected that makes a graph output writes its int32
 *   accumulator, as the chain's last layer does.
 * - Softmax placed on the CPU (after the last NPU node): a softmax node of
 *   the format along the NHWC axis of ONNX's; fed by a Conv or
 *   FullyConnected, that one writes its int32 accumulator and a dequantize
 *   node ('<name>:dequantized') comes between, so the logits are not cut
 *   to int8 before the softmax. The runtime runs both on the CPU
 *   (rkaccel_model_output_op()). Sigmoid on the CPU is refused: the format
 *   has no CPU op for it.
 *
 * Anything else gets one message naming its node; all are reported at once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "quant.h"

/* Channels a producer writes into a concat at once (lib/model/to_model3.c's). */
#define CONCAT_GROUP 32

struct lg {
	const struct cv_graph *g;
	const struct cv_qgraph *q;
	struct cv_graph3 *o;
	int *map;		/* cv tensor -> 3.0 tensor, -1 */
	bool *acc;		/* per cv node: writes the int32 accumulator an Add sums */
	struct cv_diag *d;
};

/* The 3.0 tensor for cv tensor @t (NCHW [1, C, H, W] or [1, K]); -1 on error. */
static int new_tensor(struct lg *lg, int t, uint32_t type, const struct cv_node *n)
{
	const struct cv_tensor *ct = &lg->g->tensors[t];
	const struct cv_qparam *qp = &lg->q->t[t];
	struct cv_graph3 *o = lg->o;
	struct rkaccel_graph_tensor *nt = &o->tensors[o->desc.num_tensors];
	size_t len = ct->name ? strlen(ct->name) : 0;
	bool usable = len && len <= RKACCEL_GRAPH_MAX_NAME;

	for (size_t i = 0; usable && i < len; i++)
		usable = ct->name[i] >= 0x21 && ct->name[i] <= 0x7e;
	const char *why = NULL;

	if (!ct->shape_known || ct->dims[0] != 1 || (ct->rank != 4 && ct->rank != 2))
		why = "is not [1, C, H, W] or [1, K]";
	else if (type == RKACCEL_DTYPE_INT8 && !qp->set)
		why = "is not calibrated";
	if (why && n)
		cv_diag_node(lg->d, n, "tensor '%s' %s", ct->name, why);
	else if (why)
		cv_diag_add(lg->d, "input '%s' %s", ct->name, why);
	if (why)
		return -1;
	o->names[o->desc.num_tensors] = malloc(usable ? len + 1 : 24);
	if (!o->names[o->desc.num_tensors]) {
		cv_diag_add(lg->d, "out of memory");
		return -1;
	}
	if (usable)
		memcpy(o->names[o->desc.num_tensors], ct->name, len + 1);
	else
		snprintf(o->names[o->desc.num_tensors], 24, "cv:t%d", t);
	*nt = (struct rkaccel_graph_tensor){
		.name = o->names[o->desc.num_tensors], .type = type,
		.n_dims = (uint32_t)ct->rank, .dims = { 1 },
	};
	if (ct->rank == 4) {
		nt->dims[1] = (uint32_t)ct->dims[2];
		nt->dims[2] = (uint32_t)ct->dims[3];
		nt->dims[3] = (uint32_t)ct->dims[1];
	} else {
		nt->dims[1] = (uint32_t)ct->dims[1];
	}
	if (type == RKACCEL_DTYPE_INT8) {
		nt->scale = qp->scale;
		nt->zero_point = qp->zp;
	}
	lg->map[t] = (int)o->desc.num_tensors;
	return (int)o->desc.num_tensors++;
}

/* A new node reading the mapped @ins; its output is made by the caller. */
static struct rkaccel_graph_node *new_node(struct lg *lg, uint32_t op, const int *ins, int n_in)
{
	struct cv_graph3 *o = lg->o;
	struct rkaccel_graph_node *gn = &o->nodes[o->desc.num_nodes++];

	memset(gn, 0, sizeof(*gn));
	gn->op = op;
	gn->num_inputs = (uint32_t)n_in;
	gn->inputs = &o->edges[o->n_edges];
	for (int k = 0; k < n_in; k++)
		o->edges[o->n_edges++] = (uint32_t)lg->map[ins[k]];
	return gn;
}

static bool window_fits(struct lg *lg, const struct cv_node *n, const struct cv_window *w,
			bool pool)
{
	int64_t kmax = pool ? 16 : 11, smax = pool ? 16 : 4, dmax = pool ? 1 : 4;
	const char *why = NULL;

	if (w->kh > kmax || w->kw > kmax)
		why = pool ? "kernel above 16x16" : "kernel above 11x11";
	else if (w->sh > smax || w->sw > smax)
		why = pool ? "stride above 16" : "stride above 4";
	else if (w->dh > dmax || w->dw > dmax)
		why = pool ? "dilation" : "dilation above 4";
	else if (w->pt > (w->kh - 1) * w->dh || w->pb > (w->kh - 1) * w->dh ||
		 w->pl > (w->kw - 1) * w->dw || w->pr > (w->kw - 1) * w->dw)
		why = "padding beyond the kernel";
	if (why)
		cv_diag_node(lg->d, n, "%s: not in the NPU model format 3.0", why);
	return !why;
}

static void set_window(struct rkaccel_graph_node *gn, const struct cv_window *w)
{
	gn->kernel_h = (uint32_t)w->kh;
	gn->kernel_w = (uint32_t)w->kw;
	gn->stride_h = (uint32_t)w->sh;
	gn->stride_w = (uint32_t)w->sw;
	gn->pad_top = (uint32_t)w->pt;
	gn->pad_left = (uint32_t)w->pl;
	gn->pad_bottom = (uint32_t)w->pb;
	gn->pad_right = (uint32_t)w->pr;
	gn->dilation_h = (uint32_t)w->dh;
	gn->dilation_w = (uint32_t)w->dw;
}

/* ReLU6 is ReLU with the range cut at 6 (quantize.c); LeakyRelu its slope. */
static void set_act(const struct cv_node *n, struct rkaccel_graph_node *gn)
{
	if (n->act == CV_ACT_RELU || n->act == CV_ACT_RELU6) {
		gn->act = RKACCEL_ACT_RELU;
	} else if (n->act == CV_ACT_LEAKY) {
		gn->act = RKACCEL_ACT_LEAKY;
		gn->leaky_slope = n->act_alpha;
	}
}

/* Weights, bias and scales of a conv or fc node; @w already in the format's order. */
static int set_weights(struct lg *lg, int idx, struct rkaccel_graph_node *gn, int8_t *w)
{
	const struct cv_qweights *qw = &lg->q->w[idx];
	int32_t *b = malloc(qw->n_out * sizeof(int32_t));
	float *s = malloc(qw->n_out * sizeof(float));
	struct cv_graph3 *o = lg->o;

	o->arrays[o->n_arrays++] = w;
	o->arrays[o->n_arrays++] = b;
	o->arrays[o->n_arrays++] = s;
	if (!w || !b || !s) {
		cv_diag_add(lg->d, "out of memory");
		return -1;
	}
	memcpy(b, qw->bias, qw->n_out * sizeof(int32_t));
	memcpy(s, qw->scales, qw->n_out * sizeof(float));
	gn->weights = w;
	gn->bias = b;
	gn->weight_scales = s;
	gn->weight_scale = qw->scale_max;
	return 0;
}

/* Whether tensor @t is read by one node, a Softmax placed on the CPU. */
static bool feeds_cpu_softmax(const struct cv_graph *g, int t)
{
	int first;

	return cv_graph_consumers(g, t, &first) == 1 && g->nodes[first].op == CV_OP_SOFTMAX &&
	       g->nodes[first].on_cpu && !g->tensors[t].is_output;
}

/*
 * The output of a conv or fc: int32 (an Add's accumulator, a graph output,
 * the logits of a CPU softmax) or int8.
 */
static int weighted_output(struct lg *lg, int idx, struct rkaccel_graph_node *gn)
{
	const struct cv_node *n = &lg->g->nodes[idx];
	const struct cv_tensor *out = &lg->g->tensors[n->out[0]];
	int first, t;

	if (lg->acc[idx] || (out->is_output && !cv_graph_consumers(lg->g, n->out[0], &first)) ||
	    feeds_cpu_softmax(lg->g, n->out[0])) {
		const struct rkaccel_graph_tensor *in = &lg->o->tensors[gn->inputs[0]];

		t = new_tensor(lg, n->out[0], RKACCEL_DTYPE_INT32, n);
		if (t >= 0)	/* the accumulator's scale, as the datapath has it */
			lg->o->tensors[t].scale = in->scale * gn->weight_scale;
		if (lg->acc[idx])
			gn->act = RKACCEL_ACT_NONE;
	} else {
		t = new_tensor(lg, n->out[0], RKACCEL_DTYPE_INT8, n);
	}
	gn->output = (uint32_t)t;
	return t < 0 ? -1 : 0;
}

static int lower_conv(struct lg *lg, int idx)
{
	const struct cv_node *n = &lg->g->nodes[idx];
	const struct cv_tensor *x = &lg->g->tensors[n->in[0]], *wt = &lg->g->tensors[n->in[1]];
	const struct cv_qweights *qw = &lg->q->w[idx];
	int64_t group = cv_attr_int(n, "group", 1), c = x->dims[1], hw, cg;
	struct rkaccel_graph_node *gn;
	struct cv_window win;
	int8_t *w;

	if (x->rank != 4 || wt->rank != 4 || group < 1 || c % group) {
		cv_diag_node(lg->d, n, "not a 2-D convolution of a [1, C, H, W] tensor");
		return -1;
	}
	if (cv_window_get(n, x->dims[2], x->dims[3], wt->dims[2], wt->dims[3], &win, lg->d) ||
	    !window_fits(lg, n, &win, false))
		return -1;
	gn = new_node(lg, group == 1 ? RKACCEL_GOP_CONV :
		      group == c && wt->dims[0] == c ? RKACCEL_GOP_DWCONV : RKACCEL_GOP_GROUPCONV,
		      n->in, 1);
	set_window(gn, &win);
	gn->groups = (uint32_t)group;
	set_act(n, gn);
	hw = win.kh * win.kw;
	cg = c / group;
	w = malloc(qw->n_out * qw->per_out + 1);
	for (int64_t o = 0; w && o < qw->n_out; o++)	/* [o][c][ky][kx] -> [o][ky][kx][c] */
		for (int64_t ch = 0; ch < cg; ch++)
			for (int64_t p = 0; p < hw; p++)
				w[(o * hw + p) * cg + ch] = qw->w[(o * cg + ch) * hw + p];
	if (set_weights(lg, idx, gn, w))
		return -1;
	return weighted_output(lg, idx, gn);
}

static int lower_fc(struct lg *lg, int idx)
{
	const struct cv_node *n = &lg->g->nodes[idx];
	const struct cv_tensor *x = &lg->g->tensors[n->in[0]];
	const struct cv_qweights *qw = &lg->q->w[idx];
	int64_t c = x->dims[1], hw = x->rank == 4 ? x->dims[2] * x->dims[3] : 1;
	struct rkaccel_graph_node *gn;
	int8_t *w;

	if (cv_attr_int(n, "axis", 1) != 1 || c * hw != qw->per_out) {
		cv_diag_node(lg->d, n, "reads %lld values per row, not the whole input '%s'",
			     (long long)qw->per_out, x->name);
		return -1;
	}
	gn = new_node(lg, RKACCEL_GOP_FC, n->in, 1);
	set_act(n, gn);
	w = malloc(qw->n_out * qw->per_out + 1);
	for (int64_t o = 0; w && o < qw->n_out; o++)	/* NCHW flattening to NHWC's */
		for (int64_t ch = 0; ch < c; ch++)
			for (int64_t p = 0; p < hw; p++)
				w[o * qw->per_out + p * c + ch] = qw->w[o * qw->per_out + ch * hw + p];
	if (set_weights(lg, idx, gn, w))
		return -1;
	return weighted_output(lg, idx, gn);
}

/* Ceil mode makes a window cut by the end: padding the runtime adds there. */
static bool ceil_adds(const struct cv_window *w, int64_t h, int64_t wd)
{
	int64_t fh = (h + w->pt + w->pb - w->dh * (w->kh - 1) - 1) / w->sh + 1;
	int64_t fw = (wd + w->pl + w->pr - w->dw * (w->kw - 1) - 1) / w->sw + 1;

	return w->ceil_mode && (w->oh > fh || w->ow > fw);
}

static int lower_pool(struct lg *lg, int idx)
{
	const struct cv_node *n = &lg->g->nodes[idx];
	const struct cv_tensor *x = &lg->g->tensors[n->in[0]];
	struct rkaccel_graph_node *gn;
	struct cv_window win;
	int t;

	if (x->rank != 4) {
		cv_diag_node(lg->d, n, "input '%s' is not [1, C, H, W]", x->name);
		return -1;
	}
	if (n->op == CV_OP_GLOBALAVGPOOL) {
		gn = new_node(lg, RKACCEL_GOP_GLOBAL_AVGPOOL, n->in, 1);
	} else {
		if (cv_window_get(n, x->dims[2], x->dims[3], 0, 0, &win, lg->d) ||
		    !window_fits(lg, n, &win, true))
			return -1;
		bool ceil_pad = ceil_adds(&win, x->dims[2], x->dims[3]);

		if (n->op == CV_OP_AVGPOOL && ceil_pad) {
			cv_diag_node(lg->d, n, "ceil_mode adds an output row or column: the NPU divides a window cut by the end by the whole window");
			return -1;
		}
		if (n->op == CV_OP_MAXPOOL && (win.pt || win.pl || win.pb || win.pr || ceil_pad) &&
		    lg->q->t[n->in[0]].zp != -128) {
			cv_diag_node(lg->d, n, "padding with input zero point %d: the NPU pads a max pool with the zero point, which equals ONNX's (padding ignored) only at -128, the least int8 (behind a ReLU)",
				     lg->q->t[n->in[0]].zp);
			return -1;
		}
		gn = new_node(lg, n->op == CV_OP_MAXPOOL ? RKACCEL_GOP_MAXPOOL : RKACCEL_GOP_AVGPOOL,
			      n->in, 1);
		set_window(gn, &win);
		if (ceil_pad)	/* else ceil mode gives floor mode's windows */
			gn->flags |= RKACCEL_NODE_CEIL_MODE;
		if (n->op == CV_OP_AVGPOOL && cv_attr_int(n, "count_include_pad", 0))
			gn->flags |= RKACCEL_NODE_COUNT_INCLUDE_PAD;
	}
	t = new_tensor(lg, n->out[0], RKACCEL_DTYPE_INT8, n);
	gn->output = (uint32_t)t;
	return t < 0 ? -1 : 0;
}

/*
 * A Concat the NPU takes: along the channels of [1, C, H, W] activations
 * (none constant), every input but the last a multiple of CONCAT_GROUP
 * channels (its producer writes whole groups of channels into the concat's
 * tensor: lib/model/to_model3.c refuses the rest at run time). -1 with a
 * message naming the node otherwise.
 */
static int check_concat(const struct cv_graph *g, const struct cv_node *n, struct cv_diag *d)
{
	const struct cv_tensor *o = &g->tensors[n->out[0]];
	int64_t off = 0;

	if (o->rank != 4 || cv_axis(cv_attr_int(n, "axis", 0), o->rank) != 1) {
		cv_diag_node(d, n, "axis %lld of %d dimensions: the NPU concatenates only the channels of [1, C, H, W] tensors",
			     (long long)cv_attr_int(n, "axis", 0), o->rank);
		return -1;
	}
	for (int k = 0; k < n->n_in; k++) {
		const struct cv_tensor *t = &g->tensors[n->in[k]];

		if (cv_tensor_is_const(g, n->in[k])) {
			cv_diag_node(d, n, "input '%s' is a constant: the NPU concatenates computed tensors",
				     t->name);
			return -1;
		}
		if (k + 1 < n->n_in && t->dims[1] % CONCAT_GROUP) {
			cv_diag_node(d, n, "input '%s' has %lld channels at offset %lld: every input but the last needs a multiple of %d, the channels the NPU writes at once",
				     t->name, (long long)t->dims[1], (long long)off, CONCAT_GROUP);
			return -1;
		}
		off += t->dims[1];
	}
	return 0;
}

int cv_check_concats(const struct cv_graph *g, struct cv_diag *d)
{
	int bad = 0;

	for (int i = 0; i < g->n_nodes; i++)
		if (!g->nodes[i].dead && g->nodes[i].op == CV_OP_CONCAT && !g->nodes[i].on_cpu)
			bad |= check_concat(g, &g->nodes[i], d) ? 1 : 0;
	return bad ? -1 : 0;
}

/*
 * Quantization gave every input the concat's scale and zero point
 * (quantize.c), as the format wants; the runtime lets each producer write
 * into the concat's tensor, or copies the graph input and tensors already in
 * another concat.
 */
static int lower_concat(struct lg *lg, int idx)
{
	const struct cv_node *n = &lg->g->nodes[idx];
	struct rkaccel_graph_node *gn;
	int t;

	if (check_concat(lg->g, n, lg->d))
		return -1;
	gn = new_node(lg, RKACCEL_GOP_CONCAT, n->in, n->n_in);
	gn->axis = 3;		/* NCHW's channels are NHWC's last axis */
	t = new_tensor(lg, n->out[0], RKACCEL_DTYPE_INT8, n);
	gn->output = (uint32_t)t;
	return t < 0 ? -1 : 0;
}

static int lower_add(struct lg *lg, int idx)
{
	const struct cv_node *n = &lg->g->nodes[idx];
	struct rkaccel_graph_node *gn = new_node(lg, RKACCEL_GOP_ADD, n->in, 2);
	int t;

	set_act(n, gn);
	t = new_tensor(lg, n->out[0], RKACCEL_DTYPE_INT8, n);
	gn->output = (uint32_t)t;
	return t < 0 ? -1 : 0;
}

/*
 * Each Add sums into the int32 accumulator of a convolution that only it
 * reads and that has no activation (its other operand any tensor): marks
 * that convolution in lg->acc. Refuses the Adds where neither operand is one.
 */
static int mark_accumulators(struct lg *lg)
{
	const struct cv_graph *g = lg->g;
	int errors = lg->d->count;

	for (int i = 0; i < g->n_nodes; i++) {
		const struct cv_node *n = &g->nodes[i];
		const struct cv_tensor *a, *b;
		int k;

		if (n->dead || n->op != CV_OP_ADD)
			continue;
		a = &g->tensors[n->in[0]];
		b = &g->tensors[n->in[1]];
		if (a->rank != b->rank || memcmp(a->dims, b->dims, a->rank * sizeof(a->dims[0]))) {
			cv_diag_node(lg->d, n, "adds %s and %s of other shapes: the NPU adds two tensors of one shape",
				     a->name, b->name);
			continue;
		}
		for (k = 0; k < 2; k++) {
			int p = g->tensors[n->in[k]].producer;

			if (p >= 0 && !lg->acc[p] && g->nodes[p].op == CV_OP_CONV &&
			    g->nodes[p].act == CV_ACT_NONE && cv_only_consumer(g, n->in[k]) == i) {
				lg->acc[p] = true;
				break;
			}
		}
		if (k == 2)
			cv_diag_node(lg->d, n, "neither '%s' nor '%s' is a convolution without activation that only this Add reads: the NPU adds into a convolution's accumulator",
				     a->name, b->name);
	}
	return lg->d->count > errors ? -1 : 0;
}

/*
 * Flatten or Reshape of [1, C, 1, 1] to [1, C] (a network ending in a
 * global average pool, as SqueezeNet): the NHWC bytes are the same, so the
 * output is the input's 3.0 tensor (quantize.c gave both one quantization).
 */
static int lower_flatten(struct lg *lg, int idx)
{
	const struct cv_node *n = &lg->g->nodes[idx];
	const struct cv_tensor *x = &lg->g->tensors[n->in[0]], *y = &lg->g->tensors[n->out[0]];

	if (x->rank != 4 || x->dims[2] != 1 || x->dims[3] != 1 || y->rank != 2 ||
	    y->dims[1] != x->dims[1]) {
		cv_diag_node(lg->d, n, "reshapes '%s' otherwise than [1, C, 1, 1] to [1, C]: not in the NPU model format 3.0",
			     x->name);
		return -1;
	}
	lg->map[n->out[0]] = lg->map[n->in[0]];
	return 0;
}

/*
 * ONNX's softmax axis of @x ([1, C, H, W] or [1, K]) as the NHWC tensor's,
 * or -1. Before opset 13 the softmax spans every axis from it on: one
 * format axis only when the others of them are 1.
 */
static int softmax_axis(const struct lg *lg, const struct cv_node *n, const struct cv_tensor *x)
{
	static const int nhwc[4] = { 0, 3, 1, 2 };
	int a = cv_axis(cv_softmax_axis(lg->g, n), x->rank), last = lg->g->opset < 13 ?
		x->rank - 1 : a, found = -1;

	if (a < 1 || (x->rank != 4 && x->rank != 2))
		return -1;
	for (int k = a; k <= last; k++)
		if (x->dims[k] > 1) {
			if (found >= 0)
				return -1;
			found = k;
		}
	found = found < 0 ? a : found;
	return x->rank == 4 ? nhwc[found] : found;
}

/* A 3.0 tensor with no ONNX tensor behind it: @like's shape, @type, "@like:@suffix". */
static int extra_tensor(struct lg *lg, uint32_t like, uint32_t type, const char *suffix)
{
	struct cv_graph3 *o = lg->o;
	uint32_t t = o->desc.num_tensors;
	size_t len = strlen(o->tensors[like].name) + strlen(suffix) + 2;
	char *name = malloc(len);

	if (!name) {
		cv_diag_add(lg->d, "out of memory");
		return -1;
	}
	snprintf(name, len, "%s:%s", o->tensors[like].name, suffix);
	o->names[t] = name;
	o->tensors[t] = o->tensors[like];
	o->tensors[t].name = name;
	o->tensors[t].type = type;
	o->tensors[t].scale = 0.0f;
	o->tensors[t].zero_point = 0;
	o->desc.num_tensors++;
	return (int)t;
}

/* A Softmax after the last NPU node: the format's CPU softmax (a dequantize first on int32). */
static int lower_cpu(struct lg *lg, int idx)
{
	const struct cv_node *n = &lg->g->nodes[idx];
	const struct cv_tensor *x = &lg->g->tensors[n->in[0]];
	int axis = softmax_axis(lg, n, x), t;
	uint32_t src = (uint32_t)lg->map[n->in[0]];
	struct rkaccel_graph_node *gn;

	if (n->op != CV_OP_SOFTMAX) {
		cv_diag_node(lg->d, n, "runs on the CPU, but the NPU model format 3.0 has softmax and dequantize only there");
		return -1;
	}
	if (axis < 0) {
		cv_diag_node(lg->d, n, "axis %lld of '%s' (opset %d) spans more than one axis longer than 1: the format's softmax takes one",
			     (long long)cv_softmax_axis(lg->g, n), x->name, (int)lg->g->opset);
		return -1;
	}
	if (lg->o->tensors[src].type == RKACCEL_DTYPE_INT32) {
		t = extra_tensor(lg, src, RKACCEL_DTYPE_FLOAT32, "dequantized");
		if (t < 0)
			return -1;
		new_node(lg, RKACCEL_GOP_DEQUANTIZE, n->in, 1)->output = (uint32_t)t;
		src = (uint32_t)t;	/* the softmax reads the dequantized logits */
	}
	gn = new_node(lg, RKACCEL_GOP_SOFTMAX, n->in, 1);
	lg->o->edges[lg->o->n_edges - 1] = src;
	gn->axis = (uint32_t)axis;
	t = new_tensor(lg, n->out[0], RKACCEL_DTYPE_FLOAT32, n);
	gn->output = (uint32_t)t;
	return t < 0 ? -1 : 0;
}

static int lower_node(struct lg *lg, int idx)
{
	const struct cv_node *n = &lg->g->nodes[idx];

	for (int k = 0; k < n->n_in; k++) {
		int t = n->in[k];

		if (t >= 0 && !cv_tensor_is_const(lg->g, t) && lg->map[t] < 0) {
			if (!lg->d->count)	/* else it follows from a refusal above */
				cv_diag_node(lg->d, n, "reads '%s', which is not lowered",
					     lg->g->tensors[t].name);
			return -1;
		}
	}
	switch (n->op) {
	case CV_OP_CONV:
		return lower_conv(lg, idx);
	case CV_OP_FC:
		return lower_fc(lg, idx);
	case CV_OP_MAXPOOL:
	case CV_OP_AVGPOOL:
	case CV_OP_GLOBALAVGPOOL:
		return lower_pool(lg, idx);
	case CV_OP_ADD:
		return lower_add(lg, idx);
	case CV_OP_CONCAT:
		return lower_concat(lg, idx);
	case CV_OP_FLATTEN:
	case CV_OP_RESHAPE:
		return lower_flatten(lg, idx);
	case CV_OP_SOFTMAX:
	case CV_OP_SIGMOID:
		if (n->on_cpu)
			return lower_cpu(lg, idx);
		/* fall through */
	default:
		cv_diag_node(lg->d, n, "%s", n->on_cpu ?
			     "runs on the CPU: not lowered to the NPU model format 3.0 yet" :
			     "not a node of the NPU model format 3.0 yet");
		return -1;
	}
}

static int alloc_graph(const struct cv_graph *g, struct cv_graph3 *o)
{
	int edges = 0;

	for (int i = 0; i < g->n_nodes; i++)
		edges += g->nodes[i].n_in;
	/* a CPU softmax may add a dequantize: a node, a tensor, an edge */
	o->tensors = calloc(g->n_tensors + g->n_nodes + 1, sizeof(*o->tensors));
	o->names = calloc(g->n_tensors + g->n_nodes + 1, sizeof(*o->names));
	o->nodes = calloc(2 * g->n_nodes + 1, sizeof(*o->nodes));
	o->edges = calloc(edges + g->n_nodes + 1, sizeof(*o->edges));
	o->outputs = calloc(g->n_outputs + 1, sizeof(*o->outputs));
	o->arrays = calloc(3 * g->n_nodes + 1, sizeof(*o->arrays));
	return o->tensors && o->names && o->nodes && o->edges && o->outputs && o->arrays ? 0 : -1;
}

/* The graph input and outputs, and the checks of the whole. */
static int finish(struct lg *lg)
{
	const struct cv_graph *g = lg->g;
	struct cv_graph3 *o = lg->o;
	char msg[256];

	for (int i = 0; i < g->n_outputs; i++) {
		if (lg->map[g->outputs[i]] < 0) {
			cv_diag_add(lg->d, "graph output '%s' is not lowered",
				    g->tensors[g->outputs[i]].name);
			return -1;
		}
		o->outputs[i] = (uint32_t)lg->map[g->outputs[i]];
	}
	o->desc.batch = 1;
	o->desc.tensors = o->tensors;
	o->desc.nodes = o->nodes;
	o->desc.num_inputs = 1;
	o->desc.inputs = &o->input;
	o->desc.num_outputs = (uint32_t)g->n_outputs;
	o->desc.outputs = o->outputs;
	if (rkaccel_graph_validate(&o->desc, msg, sizeof(msg))) {
		cv_diag_add(lg->d, "the lowered graph is not valid: %s", msg);
		return -1;
	}
	return 0;
}

int cv_lower_graph(const struct cv_graph *g, const struct cv_qgraph *q, struct cv_graph3 *o,
		   struct cv_diag *d)
{
	int *order = malloc((g->n_nodes + 1) * sizeof(int)), count, errors = d->count;
	struct lg lg = { g, q, o, malloc((g->n_tensors + 1) * sizeof(int)),
			 calloc(g->n_nodes + 1, sizeof(bool)), d };

	memset(o, 0, sizeof(*o));
	if (!order || !lg.map || !lg.acc || alloc_graph(g, o)) {
		cv_diag_add(d, "out of memory");
		goto fail;
	}
	if (g->n_inputs != 1 || g->n_outputs > RKACCEL_GRAPH_MAX_IO) {
		cv_diag_add(d, "%d inputs and %d outputs: the converter lowers one input and up to %d outputs",
			    g->n_inputs, g->n_outputs, RKACCEL_GRAPH_MAX_IO);
		goto fail;
	}
	for (int t = 0; t < g->n_tensors; t++)
		lg.map[t] = -1;
	if (new_tensor(&lg, g->inputs[0], RKACCEL_DTYPE_INT8, NULL) < 0)
		goto fail;
	o->input.tensor = 0;
	count = cv_graph_topo_order(g, order, d);
	if (count < 0 || mark_accumulators(&lg))
		goto fail;
	for (int i = 0; i < count; i++)
		lower_node(&lg, order[i]);	/* every refusal at once */
	if (d->count > errors || finish(&lg))
		goto fail;
	free(order);
	free(lg.map);
	free(lg.acc);
	return 0;
fail:
	free(order);
	free(lg.map);
	free(lg.acc);
	cv_graph3_free(o);
	return -1;
}

void cv_graph3_free(struct cv_graph3 *o)
{
	for (uint32_t i = 0; o->names && i < o->desc.num_tensors; i++)
		free(o->names[i]);
	for (int i = 0; o->arrays && i < o->n_arrays; i++)
		free(o->arrays[i]);
	free(o->names);
	free(o->arrays);
	free(o->tensors);
	free(o->nodes);
	free(o->edges);
	free(o->outputs);
	memset(o, 0, sizeof(*o));
}
