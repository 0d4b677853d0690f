// SPDX-License-Identifier: MIT
/*
 * Pass: BatchNormalization (inference form) folded into the Conv before it:
 * w'[m] = w[m] * s[m], b'[m] = (b[m] - mean[m]) * s[m] + beta[m] with
 * s = gamma / sqrt(var + eps), computed in double. Where no Conv of its own
 * precedes it, the batch norm becomes a per-channel scale and add
 * (ChannelAffine). A zero variance is valid: epsilon keeps s finite.
 */
#include <math.h>
#include <stdlib.h>

#include "internal.h"

struct bn_params {
	int64_t c;
	double *scale, *shift;	/* y = x * scale + shift */
};

static int bn_params(const struct cv_graph *g, const struct cv_node *n, struct bn_params *p,
		     struct cv_diag *d)
{
	const float *v[4];
	double eps = cv_attr_float(n, "epsilon", 1e-5f);

	p->c = g->tensors[n->in[0]].dims[1];
	for (int k = 0; k < 4; k++) {
		const struct cv_tensor *t = &g->tensors[n->in[k + 1]];

		if (!t->data || t->dtype != CV_F32 || t->rank != 1 || t->dims[0] != p->c) {
			cv_diag_node(d, n, "scale, bias, mean and var must be constant vectors of %lld",
				     (long long)p->c);
			return -1;
		}
		v[k] = t->data;
	}
	p->scale = calloc(p->c + 1, sizeof(double));
	p->shift = calloc(p->c + 1, sizeof(double));
	if (!p->scale || !p->shift)
		return -1;
	for (int64_t c = 0; c < p->c; c++) {
		if (v[3][c] + eps <= 0) {
			cv_diag_node(d, n, "variance + epsilon of channel %lld is not positive",
				     (long long)c);
			return -1;
		}
		p->scale[c] = v[0][c] / sqrt((double)v[3][c] + eps);
		p->shift[c] = v[1][c] - v[2][c] * p->scale[c];
	}
	return 0;
}

/* The Conv this BN can fold into: const weights, its output read only here. */
static struct cv_node *foldable_conv(struct cv_graph *g, const struct cv_node *bn)
{
	int x = bn->in[0], p = g->tensors[x].producer;

	if (p < 0 || cv_only_consumer(g, x) < 0)
		return NULL;
	struct cv_node *c = &g->nodes[p];

	if (c->op != CV_OP_CONV || c->act != CV_ACT_NONE || !cv_tensor_is_const(g, c->in[1]) ||
	    (c->n_in > 2 && c->in[2] >= 0 && !cv_tensor_is_const(g, c->in[2])))
		return NULL;
	return c;
}

static int fold_into_conv(struct cv_graph *g, struct cv_node *conv, const struct cv_node *bn,
			  const struct bn_params *p)
{
	const struct cv_tensor *wt = &g->tensors[conv->in[1]];
	int64_t m = wt->dims[0], per = cv_tensor_elems(wt) / m;
	const float *w = wt->data;
	const float *b = conv->n_in > 2 && conv->in[2] >= 0 ? g->tensors[conv->in[2]].data : NULL;
	float *nw = malloc(cv_tensor_elems(wt) * sizeof(float) + 1);
	float *nb = malloc(m * sizeof(float) + 1);
	int rc = -1;

	if (!nw || !nb)
		goto out;
	for (int64_t k = 0; k < m; k++) {
		for (int64_t i = 0; i < per; i++)
			nw[k * per + i] = (float)(w[k * per + i] * p->scale[k]);
		nb[k] = (float)((b ? b[k] : 0.0) * p->scale[k] + p->shift[k]);
	}
	int tw = cv_new_const_f32(g, wt->rank, wt->dims, nw);
	int tb = cv_new_const_f32(g, 1, &m, nb);
	int *in = realloc(conv->in, 3 * sizeof(int));

	if (tw < 0 || tb < 0 || !in)
		goto out;
	conv->in = in;
	conv->in[1] = tw;
	conv->in[2] = tb;
	conv->n_in = 3;
	/* The conv now writes what the batch norm wrote. */
	conv->out[0] = bn->out[0];
	rc = 0;
out:
	free(nw);
	free(nb);
	return rc;
}

static int to_channel_affine(struct cv_graph *g, struct cv_node *bn, const struct bn_params *p)
{
	float *s = malloc(p->c * sizeof(float) + 1), *b = malloc(p->c * sizeof(float) + 1);
	int rc = -1;

	if (s && b) {
		for (int64_t c = 0; c < p->c; c++)
			s[c] = (float)p->scale[c], b[c] = (float)p->shift[c];
		int ts = cv_new_const_f32(g, 1, &p->c, s), tb = cv_new_const_f32(g, 1, &p->c, b);

		if (ts >= 0 && tb >= 0) {
			bn->op = CV_OP_CHANNEL_AFFINE;
			bn->in[1] = ts;
			bn->in[2] = tb;
			bn->n_in = 3;
			rc = 0;
		}
	}
	free(s);
	free(b);
	return rc;
}

int cv_pass_fold_batchnorm(struct cv_graph *g, struct cv_diag *d)
{
	int rc = 0;

	for (int i = 0; i < g->n_nodes; i++) {
		struct cv_node *bn = &g->nodes[i];
		struct bn_params p = { 0 };

		if (bn->dead || bn->op != CV_OP_BATCHNORM)
			continue;
		if (bn->n_in != 5 || bn->n_out != 1 || cv_attr_int(bn, "training_mode", 0)) {
			cv_diag_node(d, bn, "only the inference form (5 inputs, 1 output) is supported");
			rc = -1;
			continue;
		}
		if (!g->tensors[bn->in[0]].shape_known || g->tensors[bn->in[0]].rank < 2)
			continue;
		if (bn_params(g, bn, &p, d)) {
			rc = -1;
		} else {
			struct cv_node *conv = foldable_conv(g, bn);

			if (conv ? fold_into_conv(g, conv, bn, &p) : to_channel_affine(g, bn, &p))
				rc = -1;
			else if (conv)
				bn->dead = true;
		}
		free(p.scale);
		free(p.shift);
	}
	cv_graph_compact(g);
	return rc;
}
