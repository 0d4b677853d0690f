// SPDX-License-Identifier: MIT
/*
 * Float executor: broadcasting arithmetic, activations (standalone and fused
 * marks), batch norm and the per-channel affine a standalone one becomes.
 */
#include <math.h>

#include "internal.h"

/* Strides of t aligned to an output of rank r; 0 where t broadcasts. */
static void bcast_strides(const struct cv_tensor *t, int r, const int64_t *odims, int64_t *st)
{
	int64_t s = 1;

	for (int i = r - 1; i >= 0; i--) {
		int ti = i - (r - t->rank);
		int64_t dim = ti >= 0 ? t->dims[ti] : 1;

		st[i] = dim == 1 && odims[i] != 1 ? 0 : s;
		s *= dim;
	}
}

/* Float arithmetic, as the ONNX op computes on float32 tensors. */
static float arith(enum cv_op op, float a, float b)
{
	switch (op) {
	case CV_OP_ADD:
		return a + b;
	case CV_OP_SUB:
		return a - b;
	case CV_OP_MUL:
		return a * b;
	default:
		return a / b;
	}
}

int cv_exec_binary(const struct cv_graph *g, const struct cv_node *n, float **bufs,
		   struct cv_diag *d)
{
	const struct cv_tensor *a = &g->tensors[n->in[0]], *b = &g->tensors[n->in[1]];
	const struct cv_tensor *o = &g->tensors[n->out[0]];
	const float *A = bufs[n->in[0]], *B = bufs[n->in[1]];
	float *Y = bufs[n->out[0]];
	int64_t sa[CV_MAX_RANK], sb[CV_MAX_RANK], idx[CV_MAX_RANK] = { 0 };
	int64_t total = cv_tensor_elems(o), ia = 0, ib = 0;
	int r = o->rank;

	(void)d;
	bcast_strides(a, r, o->dims, sa);
	bcast_strides(b, r, o->dims, sb);
	for (int64_t e = 0; e < total; e++) {
		Y[e] = arith(n->op, A[ia], B[ib]);
		for (int i = r - 1; i >= 0; i--) {
			ia += sa[i], ib += sb[i];
			if (++idx[i] < o->dims[i])
				break;
			ia -= sa[i] * idx[i], ib -= sb[i] * idx[i];
			idx[i] = 0;
		}
	}
	return 0;
}

static float act_one(enum cv_op op, float v, float lo, float hi, float alpha)
{
	switch (op) {
	case CV_OP_RELU:
		return v > 0 ? v : 0.0f;
	case CV_OP_CLIP:
		return v < lo ? lo : v > hi ? hi : v;
	case CV_OP_LEAKYRELU:
		return v >= 0 ? v : v * alpha;
	default:
		return (float)(1.0 / (1.0 + exp(-(double)v)));
	}
}

int cv_exec_activation(const struct cv_graph *g, const struct cv_node *n, float **bufs,
		       struct cv_diag *d)
{
	const float *x = bufs[n->in[0]];
	float *y = bufs[n->out[0]];
	int64_t count = cv_tensor_elems(&g->tensors[n->out[0]]);
	float lo = -INFINITY, hi = INFINITY, alpha = cv_attr_float(n, "alpha", 0.01f);

	if (n->op == CV_OP_CLIP) {
		lo = cv_node_float_arg(g, n, 1, g->opset < 11 ? "min" : NULL, -INFINITY);
		hi = cv_node_float_arg(g, n, 2, g->opset < 11 ? "max" : NULL, INFINITY);
		if (isnan(lo) || isnan(hi)) {
			cv_diag_node(d, n, "min and max must be constant scalars");
			return -1;
		}
	}
	for (int64_t i = 0; i < count; i++)
		y[i] = act_one(n->op, x[i], lo, hi, alpha);
	return 0;
}

/* A fused activation mark, applied to the node's own output. */
void cv_exec_fused_act(const struct cv_graph *g, const struct cv_node *n, float **bufs)
{
	float *y = bufs[n->out[0]];
	int64_t count = cv_tensor_elems(&g->tensors[n->out[0]]);

	for (int64_t i = 0; i < count && n->act != CV_ACT_NONE; i++) {
		if (n->act == CV_ACT_RELU)
			y[i] = y[i] > 0 ? y[i] : 0.0f;
		else if (n->act == CV_ACT_RELU6)
			y[i] = y[i] < 0 ? 0.0f : y[i] > 6 ? 6.0f : y[i];
		else
			y[i] = y[i] >= 0 ? y[i] : y[i] * n->act_alpha;
	}
}

/* BatchNormalization in inference form, or ChannelAffine (inputs x, scale, bias). */
int cv_exec_channel(const struct cv_graph *g, const struct cv_node *n, float **bufs,
		    struct cv_diag *d)
{
	const struct cv_tensor *x = &g->tensors[n->in[0]];
	const float *X = bufs[n->in[0]], *scale = bufs[n->in[1]], *bias = bufs[n->in[2]];
	float *Y = bufs[n->out[0]];
	int64_t C = x->dims[1], inner = 1;
	bool bn = n->op == CV_OP_BATCHNORM;
	double eps = cv_attr_float(n, "epsilon", 1e-5f);

	(void)d;
	for (int i = 2; i < x->rank; i++)
		inner *= x->dims[i];
	for (int64_t nb = 0; nb < x->dims[0]; nb++)
		for (int64_t c = 0; c < C; c++) {
			double s = scale[c], b = bias[c], mean = 0;

			if (bn) {
				mean = bufs[n->in[3]][c];
				s /= sqrt((double)bufs[n->in[4]][c] + eps);
			}
			const float *xs = X + (nb * C + c) * inner;
			float *ys = Y + (nb * C + c) * inner;

			for (int64_t i = 0; i < inner; i++)
				ys[i] = (float)((xs[i] - mean) * s + b);
		}
	return 0;
}
