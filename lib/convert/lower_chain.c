// SPDX-License-Identifier: MIT
/*
 * Lowering a quantized graph to the model format 2.0 (lib/model): a chain
 * where each node reads the one before it. Conv becomes a convolution or a
 * depthwise one, MaxPool/AveragePool/GlobalAveragePool pools, and a
 * FullyConnected over a C x H x W map a convolution with an H x W kernel
 * (a plain fully connected layer when H = W = 1); ReLU is the layer flag and
 * the last layer writes its int32 accumulator. Weights are permuted from
 * ONNX's [out][c][ky][kx] to the format's [out][ky][kx][c]. Whatever does
 * not fit gets one message naming its node; all are reported at once.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "quant.h"

struct chw {
	int64_t c, h, w;
};

static bool window_ok(const struct cv_node *n, const struct cv_window *win, int64_t h,
		      int64_t w, int64_t kmax, int64_t smax, struct cv_diag *d)
{
	const char *why = NULL;

	if (win->dh != 1 || win->dw != 1)
		why = "dilation other than 1";
	else if (win->sh != win->sw || win->sh < 1 || win->sh > smax)
		why = smax == 2 ? "strides other than 1x1 or 2x2" : "unequal strides";
	else if (win->kh < 1 || win->kh > kmax || win->kw < 1 || win->kw > kmax)
		why = kmax == 7 ? "kernel above 7x7" : "kernel above 16x16";
	else if (win->pt >= win->kh || win->pb >= win->kh || win->pl >= win->kw ||
		 win->pr >= win->kw)
		why = "padding not below the kernel";
	else if (win->oh != (h + win->pt + win->pb - win->kh) / win->sh + 1 ||
		 win->ow != (w + win->pl + win->pr - win->kw) / win->sw + 1)
		why = "ceil_mode adds an output row or column";
	if (why)
		cv_diag_node(d, n, "%s: not in the NPU model format 2.0", why);
	return !why;
}

static void set_window(struct rkaccel_layer_desc *l, const struct cv_window *win)
{
	l->kernel_h = (uint32_t)win->kh;
	l->kernel_w = (uint32_t)win->kw;
	l->stride = (uint32_t)win->sh;
	l->pad_top = (uint32_t)win->pt;
	l->pad_left = (uint32_t)win->pl;
	l->pad_bottom = (uint32_t)win->pb;
	l->pad_right = (uint32_t)win->pr;
}

/* Weights into [n][ky][kx][c] from [n][c][ky][kx] (spatial @hw, @c channels). */
static int8_t *permute_weights(const struct cv_qweights *qw, int64_t c, int64_t hw)
{
	int8_t *w = malloc(qw->n_out * qw->per_out + 1);

	for (int64_t n = 0; w && n < qw->n_out; n++)
		for (int64_t ch = 0; ch < c; ch++)
			for (int64_t p = 0; p < hw; p++)
				w[(n * hw + p) * c + ch] = qw->w[(n * c + ch) * hw + p];
	return w;
}

static int lower_conv(const struct cv_graph *g, const struct cv_node *n, const struct chw *in,
		      const struct cv_qweights *qw, struct rkaccel_layer_desc *l,
		      struct cv_diag *d)
{
	const struct cv_tensor *wt = &g->tensors[n->in[1]];
	int64_t group = cv_attr_int(n, "group", 1);
	struct cv_window win;

	if (cv_window_get(n, in->h, in->w, wt->dims[2], wt->dims[3], &win, d) ||
	    !window_ok(n, &win, in->h, in->w, 7, 2, d))
		return -1;
	set_window(l, &win);
	if (group == 1) {
		l->op = RKACCEL_OP_CONV;
		l->weights = permute_weights(qw, in->c, win.kh * win.kw);
	} else if (group == in->c && wt->dims[0] == in->c && wt->dims[1] == 1) {
		l->op = RKACCEL_OP_DWCONV;	/* [c][1][ky][kx] is already [c][ky][kx] */
		l->weights = malloc(qw->n_out * qw->per_out + 1);
		if (l->weights)
			memcpy((int8_t *)l->weights, qw->w, qw->n_out * qw->per_out);
	} else {
		cv_diag_node(d, n, "group %lld is neither 1 nor depthwise: not in the NPU model format 2.0",
			     (long long)group);
		return -1;
	}
	return 0;
}

static int lower_fc(const struct cv_node *n, const struct chw *in, const struct cv_qweights *qw,
		    struct rkaccel_layer_desc *l, struct cv_diag *d)
{
	if (in->c * in->h * in->w != qw->per_out) {
		cv_diag_node(d, n, "reads %lld values per row, not one whole %lldx%lldx%lld map",
			     (long long)qw->per_out, (long long)in->c, (long long)in->h,
			     (long long)in->w);
		return -1;
	}
	if (in->h > 7 || in->w > 7) {
		cv_diag_node(d, n, "a fully connected layer over a %lldx%lld map (above 7x7) is not in the NPU model format 2.0",
			     (long long)in->w, (long long)in->h);
		return -1;
	}
	if (in->h * in->w > 1) {
		l->op = RKACCEL_OP_CONV;	/* over the whole map: an HxW kernel */
		l->kernel_h = (uint32_t)in->h;
		l->kernel_w = (uint32_t)in->w;
		l->stride = 1;
	}
	l->weights = permute_weights(qw, in->c, in->h * in->w);
	return 0;
}

static int lower_pool(const struct cv_node *n, const struct chw *in,
		      struct rkaccel_layer_desc *l, struct cv_diag *d)
{
	struct cv_window win;

	l->op = n->op == CV_OP_MAXPOOL ? RKACCEL_OP_MAXPOOL : RKACCEL_OP_AVGPOOL;
	if (n->op == CV_OP_GLOBALAVGPOOL)
		return 0;
	if (cv_window_get(n, in->h, in->w, 0, 0, &win, d) ||
	    !window_ok(n, &win, in->h, in->w, 16, 16, d))
		return -1;
	if (n->op == CV_OP_AVGPOOL && (win.pt || win.pl || win.pb || win.pr) &&
	    !cv_attr_int(n, "count_include_pad", 0)) {
		cv_diag_node(d, n, "padding not counted (count_include_pad 0): the NPU's average counts it");
		return -1;
	}
	set_window(l, &win);
	return 0;
}

/* The C x H x W a tensor stands for: [1, C, H, W] or [1, K]; -1 otherwise. */
static int tensor_chw(const struct cv_tensor *t, struct chw *s)
{
	if (!t->shape_known || t->dims[0] != 1 || (t->rank != 4 && t->rank != 2))
		return -1;
	*s = (struct chw){ t->dims[1], t->rank == 4 ? t->dims[2] : 1, t->rank == 4 ? t->dims[3] : 1 };
	return 0;
}

static int lower_node(const struct cv_graph *g, const struct cv_qgraph *q, int idx,
		      const struct chw *in, struct rkaccel_layer_desc *l, struct cv_diag *d)
{
	const struct cv_node *n = &g->nodes[idx];
	const struct cv_qparam *qi = &q->t[n->in[0]], *qo = &q->t[n->out[0]];
	const struct cv_qweights *qw = &q->w[idx];
	int rc;

	if (n->act != CV_ACT_NONE && n->act != CV_ACT_RELU) {
		cv_diag_node(d, n, "fused %s: only ReLU is in the NPU model format 2.0",
			     n->act == CV_ACT_RELU6 ? "Clip(0, 6)" : "LeakyRelu");
		return -1;
	}
	if (!qi->set || !qo->set) {
		cv_diag_node(d, n, "not calibrated");
		return -1;
	}
	*l = (struct rkaccel_layer_desc){
		.in_features = (uint32_t)in->c, .in_zero_point = qi->zp, .in_scale = qi->scale,
		.out_zero_point = qo->zp, .out_scale = qo->scale, .weight_scale = 1.0f,
		.flags = n->act == CV_ACT_RELU ? RKACCEL_LAYER_RELU : 0,
	};
	switch (n->op) {
	case CV_OP_CONV:
		rc = lower_conv(g, n, in, qw, l, d);
		break;
	case CV_OP_FC:
		rc = lower_fc(n, in, qw, l, d);
		break;
	case CV_OP_MAXPOOL:
	case CV_OP_AVGPOOL:
	case CV_OP_GLOBALAVGPOOL:
		l->out_features = (uint32_t)in->c;
		return lower_pool(n, in, l, d);
	default:
		cv_diag_node(d, n, "%s", n->on_cpu ?
			     "runs on the CPU: the NPU model format 2.0 has no CPU layers" :
			     "not a layer of the NPU model format 2.0");
		return -1;
	}
	if (rc)
		return -1;
	l->out_features = (uint32_t)qw->n_out;
	l->weight_scale = qw->scale_max;
	l->bias = malloc(qw->n_out * sizeof(int32_t));
	l->weight_scales = malloc(qw->n_out * sizeof(float));
	if (!l->weights || !l->bias || !l->weight_scales) {
		cv_diag_add(d, "out of memory");
		return -1;
	}
	memcpy((int32_t *)l->bias, qw->bias, qw->n_out * sizeof(int32_t));
	memcpy((float *)l->weight_scales, qw->scales, qw->n_out * sizeof(float));
	return 0;
}

static void free_layer(struct rkaccel_layer_desc *l)
{
	free((void *)l->weights);
	free((void *)l->bias);
	free((void *)l->weight_scales);
	memset(l, 0, sizeof(*l));
}

/* The last layer hands its int32 accumulator out (scale in x weight). */
static void make_last(struct rkaccel_layer_desc *l)
{
	if (l->op == RKACCEL_OP_MAXPOOL || l->op == RKACCEL_OP_AVGPOOL)
		return;
	l->flags |= RKACCEL_LAYER_OUT_INT32;
	l->out_zero_point = 0;
	l->out_scale = l->in_scale * l->weight_scale;
}

static int walk_chain(const struct cv_graph *g, const struct cv_qgraph *q, const int *order,
		      int count, struct cv_lowered *lw, struct cv_diag *d)
{
	int cur = lw->input, errors = d->count, first;
	struct chw in;

	for (int i = 0; i < count; i++) {
		const struct cv_node *n = &g->nodes[order[i]];

		if (n->in[0] != cur) {
			cv_diag_node(d, n, "reads '%s', not the previous layer's output: not a chain",
				     g->tensors[n->in[0]].name);
		} else if (cv_graph_consumers(g, cur, &first) > 1) {
			cv_diag_node(d, n, "its input '%s' has other readers: not a chain",
				     g->tensors[cur].name);
		} else if (lw->desc.num_layers == RKACCEL_MODEL_MAX_LAYERS) {
			cv_diag_node(d, n, "more than %d layers", RKACCEL_MODEL_MAX_LAYERS);
		} else if (tensor_chw(&g->tensors[cur], &in)) {
			cv_diag_node(d, n, "input is not [1, C, H, W] or [1, K]");
		} else if (!lower_node(g, q, order[i], &in, &lw->layers[lw->desc.num_layers], d)) {
			lw->layer_tensor[lw->desc.num_layers++] = n->out[0];
		} else {
			free_layer(&lw->layers[lw->desc.num_layers]);
		}
		cur = n->out[0];
	}
	if (cur != lw->output)
		cv_diag_add(d, "the chain ends at '%s', not at the graph output '%s'",
			    g->tensors[cur].name, g->tensors[lw->output].name);
	return d->count > errors || !lw->desc.num_layers ? -1 : 0;
}

int cv_lower_chain(const struct cv_graph *g, const struct cv_qgraph *q, struct cv_lowered *lw,
		   struct cv_diag *d)
{
	int *order = malloc((g->n_nodes + 1) * sizeof(int)), count, rc = -1;
	struct chw in;
	char msg[256];

	memset(lw, 0, sizeof(*lw));
	lw->desc.layers = lw->layers;
	if (!order) {
		cv_diag_add(d, "out of memory");
		return -1;
	}
	if (g->n_inputs != 1 || g->n_outputs != 1) {
		cv_diag_add(d, "%d inputs and %d outputs: the NPU model format 2.0 has one of each",
			    g->n_inputs, g->n_outputs);
		goto out;
	}
	lw->input = g->inputs[0];
	lw->output = g->outputs[0];
	if (tensor_chw(&g->tensors[lw->input], &in) || in.h * in.w > RKACCEL_MODEL_MAX_ROWS) {
		cv_diag_add(d, "input '%s' is not [1, C, H, W] or [1, K] of at most %d pixels",
			    g->tensors[lw->input].name, RKACCEL_MODEL_MAX_ROWS);
		goto out;
	}
	lw->in_c = in.c;
	lw->in_h = in.h;
	lw->in_w = in.w;
	lw->desc.rows = (uint32_t)(in.h * in.w);
	lw->desc.height = (uint32_t)in.h;
	lw->desc.width = (uint32_t)in.w;
	count = cv_graph_topo_order(g, order, d);
	if (count < 0 || walk_chain(g, q, order, count, lw, d))
		goto out;
	make_last(&lw->layers[lw->desc.num_layers - 1]);
	if (rkaccel_model_validate(&lw->desc, msg, sizeof(msg))) {
		cv_diag_add(d, "the lowered model is not valid: %s", msg);
		goto out;
	}
	rc = 0;
out:
	free(order);
	if (rc)
		cv_lowered_free(lw);
	return rc;
}

void cv_lowered_free(struct cv_lowered *lw)
{
	for (int i = 0; i < RKACCEL_MODEL_MAX_LAYERS; i++)
		free_layer(&lw->layers[i]);
	cv_graph3_free(&lw->g3);
	memset(lw, 0, sizeof(*lw));
}
