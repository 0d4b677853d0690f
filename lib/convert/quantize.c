// SPDX-License-Identifier: MIT
/*
 * Quantization of a calibrated graph: every activation tensor gets int8
 * asymmetric parameters from the range its algorithm keeps (cut at 6 after
 * a fused ReLU6, whose clip is then the int8 saturation); pools and
 * reshapes share their input's (the NPU's pools do not requantize), and a
 * Concat's inputs share the concat's: the union of all their ranges.
 * Conv and FullyConnected weights become int8 symmetric per output channel
 * (or per layer), biases int32 in units of input scale x weight scale.
 *
 * Per-channel scales are made representable: the NPU scales channel n by
 * mul[n] / 2^14 relative to the layer's largest scale, so each scale is
 * snapped to scale_max * mul / 2^14 before the weights are rounded, and the
 * int8 model computes exactly with the scales it records.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quant.h"

#define MUL_ONE 16384.0		/* 2^14: the per-channel multiplier's 1.0 */
#define MAX_ABS_BIAS (1 << 30)

static bool passes_quant(enum cv_op op)
{
	return op == CV_OP_MAXPOOL || op == CV_OP_AVGPOOL || op == CV_OP_GLOBALAVGPOOL ||
	       op == CV_OP_FLATTEN || op == CV_OP_RESHAPE || op == CV_OP_IDENTITY;
}

/* Union-find over tensors: the groups that must share one quantization. */
static int group_of(int *parent, int t)
{
	while (parent[t] != t)
		t = parent[t] = parent[parent[t]];
	return t;
}

static void join(int *parent, int a, int b)
{
	a = group_of(parent, a);
	b = group_of(parent, b);
	if (a != b)
		parent[a < b ? b : a] = a < b ? a : b;
}

/*
 * One quantization per group: a pool or reshape and its input (the NPU's
 * pools do not requantize), a Concat and all its inputs (the format 3.0
 * quantizes every concat input as the concat: the producers write into it).
 * A group's range is the union of the ranges of its members that are not
 * made by those nodes (the pool's input, the concat's inputs).
 */
static void make_groups(const struct cv_graph *g, int *parent)
{
	for (int t = 0; t < g->n_tensors; t++)
		parent[t] = t;
	for (int i = 0; i < g->n_nodes; i++) {
		const struct cv_node *n = &g->nodes[i];

		if (n->dead || n->out[0] < 0)
			continue;
		if (passes_quant(n->op) && n->in[0] >= 0)
			join(parent, n->in[0], n->out[0]);
		if (n->op == CV_OP_CONCAT)
			for (int k = 0; k < n->n_in; k++)
				if (n->in[k] >= 0)
					join(parent, n->in[k], n->out[0]);
	}
}

/*
 * A ReLU6 whose output shares a wider range (a concat with other inputs)
 * would not saturate at 6: refused, naming the node.
 */
static int check_relu6(const struct cv_graph *g, const struct cv_qgraph *q, struct cv_diag *d)
{
	int bad = 0;

	for (int i = 0; i < g->n_nodes; i++) {
		const struct cv_node *n = &g->nodes[i];
		const struct cv_qparam *p = n->out[0] >= 0 ? &q->t[n->out[0]] : NULL;

		if (n->dead || n->act != CV_ACT_RELU6 || !p || !p->set)
			continue;
		if ((127 - p->zp) * (double)p->scale > 6.0 + p->scale / 2) {
			cv_diag_node(d, n, "ReLU6 output '%s' shares a range above 6 (a Concat's): the int8 saturation would not be the clip",
				     g->tensors[n->out[0]].name);
			bad = 1;
		}
	}
	return bad ? -1 : 0;
}

static int act_params(const struct cv_graph *g, const struct cv_calib *c,
		      const struct cv_quant_opts *o, struct cv_qgraph *q, struct cv_diag *d)
{
	int *parent = malloc((g->n_tensors + 1) * sizeof(int));
	float *lo = malloc((g->n_tensors + 1) * sizeof(float));
	float *hi = malloc((g->n_tensors + 1) * sizeof(float));
	bool *seen = calloc(g->n_tensors + 1, sizeof(bool));
	int rc = 0;

	if (!parent || !lo || !hi || !seen) {
		cv_diag_add(d, "out of memory");
		rc = -1;
		goto out;
	}
	make_groups(g, parent);
	for (int t = 0; t < g->n_tensors; t++) {
		float l, h;
		int p, r;

		p = g->tensors[t].producer;
		if (!c->t[t].seen || (p >= 0 && (passes_quant(g->nodes[p].op) ||
						 g->nodes[p].op == CV_OP_CONCAT)))
			continue;	/* made of its inputs' values: they give the range */
		cv_algo_range(&c->t[t], o->algo, &l, &h);
		if (p >= 0 && g->nodes[p].act == CV_ACT_RELU6 && h > 6.0f)
			h = 6.0f;	/* ReLU6: the int8 saturation at 6 is the clip */
		r = group_of(parent, t);
		lo[r] = seen[r] && lo[r] < l ? lo[r] : l;
		hi[r] = seen[r] && hi[r] > h ? hi[r] : h;
		seen[r] = true;
	}
	for (int t = 0; t < g->n_tensors; t++) {
		int r = group_of(parent, t);

		if (!c->t[t].seen || !seen[r])
			continue;
		cv_range_to_qparams(lo[r], hi[r], &q->t[t].scale, &q->t[t].zp);
		q->t[t].set = true;
	}
	rc = check_relu6(g, q, d);
out:
	free(parent);
	free(lo);
	free(hi);
	free(seen);
	return rc;
}

/* Per-channel scales from the largest |w|, snapped to the NPU's multiplier. */
static void weight_scales(const float *w, struct cv_qweights *qw, bool per_layer)
{
	double max_all = 0;

	for (int64_t n = 0; n < qw->n_out; n++) {
		double m = 0;

		for (int64_t k = 0; k < qw->per_out; k++)
			m = fmax(m, fabs(w[n * qw->per_out + k]));
		qw->scales[n] = (float)(m / 127.0);
		max_all = fmax(max_all, m);
	}
	qw->scale_max = max_all > 0 ? (float)(max_all / 127.0) : 1.0f;
	for (int64_t n = 0; n < qw->n_out; n++) {
		double mul = per_layer ? MUL_ONE : round(qw->scales[n] / qw->scale_max * MUL_ONE);

		mul = mul < 1 ? 1 : mul > MUL_ONE ? MUL_ONE : mul;
		qw->scales[n] = (float)(qw->scale_max * (mul / MUL_ONE));
	}
}

static int quant_weights(const struct cv_graph *g, const struct cv_node *n,
			 const struct cv_qparam *in, bool per_layer, struct cv_qweights *qw,
			 struct cv_diag *d)
{
	const struct cv_tensor *wt = &g->tensors[n->in[1]];
	const float *w = wt->data;
	const float *b = n->n_in > 2 && n->in[2] >= 0 ? g->tensors[n->in[2]].data : NULL;

	if (!w || wt->dtype != CV_F32 || !in->set) {
		cv_diag_node(d, n, "%s", !in->set ? "input not calibrated" :
			     "weights are not constant float");
		return -1;
	}
	qw->n_out = wt->dims[0];
	qw->per_out = cv_tensor_elems(wt) / (qw->n_out ? qw->n_out : 1);
	qw->w = malloc(qw->n_out * qw->per_out + 1);
	qw->scales = malloc(qw->n_out * sizeof(float) + 1);
	qw->bias = malloc(qw->n_out * sizeof(int32_t) + 1);
	if (!qw->w || !qw->scales || !qw->bias) {
		cv_diag_add(d, "out of memory");
		return -1;
	}
	weight_scales(w, qw, per_layer);
	for (int64_t o = 0; o < qw->n_out; o++) {
		double unit = (double)in->scale * qw->scales[o];
		double bq = b ? round(b[o] / unit) : 0;

		for (int64_t k = 0; k < qw->per_out; k++) {
			double v = round(w[o * qw->per_out + k] / qw->scales[o]);

			qw->w[o * qw->per_out + k] = (int8_t)(v < -127 ? -127 : v > 127 ? 127 : v);
		}
		if (fabs(bq) > MAX_ABS_BIAS) {
			cv_diag_node(d, n, "channel %lld: bias %lld exceeds 2^30 at input scale %g",
				     (long long)o, (long long)bq, (double)in->scale);
			return -1;
		}
		qw->bias[o] = (int32_t)bq;
	}
	return 0;
}

int cv_quantize(const struct cv_graph *g, const struct cv_calib *c,
		const struct cv_quant_opts *o, struct cv_qgraph *q, struct cv_diag *d)
{
	memset(q, 0, sizeof(*q));
	q->n_tensors = g->n_tensors;
	q->n_nodes = g->n_nodes;
	q->t = calloc(g->n_tensors + 1, sizeof(*q->t));
	q->w = calloc(g->n_nodes + 1, sizeof(*q->w));
	if (!q->t || !q->w) {
		cv_diag_add(d, "out of memory");
		goto fail;
	}
	if (act_params(g, c, o, q, d))
		goto fail;
	for (int i = 0; i < g->n_nodes; i++) {
		const struct cv_node *n = &g->nodes[i];

		if (n->dead || (n->op != CV_OP_CONV && n->op != CV_OP_FC))
			continue;
		if (quant_weights(g, n, &q->t[n->in[0]], o->per_layer, &q->w[i], d))
			goto fail;
	}
	return 0;
fail:
	cv_qgraph_free(q);
	return -1;
}

void cv_qgraph_free(struct cv_qgraph *q)
{
	for (int i = 0; q->w && i < q->n_nodes; i++) {
		free(q->w[i].w);
		free(q->w[i].scales);
		free(q->w[i].bias);
	}
	free(q->w);
	free(q->t);
	memset(q, 0, sizeof(*q));
}

void cv_quantize_input(const float *src, int64_t C, int64_t H, int64_t W,
		       const struct cv_qparam *p, int8_t *dst)
{
	for (int64_t c = 0; c < C; c++)
		for (int64_t i = 0; i < H * W; i++) {
			double v = round((double)src[c * H * W + i] / p->scale) + p->zp;

			dst[i * C + c] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
		}
}
