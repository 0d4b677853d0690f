// SPDX-License-Identifier: MIT
/*
 * Pass: Gemm and MatMul with constant weights become FullyConnected layers
 * with weights [N, K] (output-major, as the NPU reads kernels) and a bias
 * [N]; Gemm's alpha, beta and transB are folded into them. A Gemm with
 * transA, a non-constant B or a C that varies along M stays a Gemm (the
 * support check refuses it); a MatMul with a constant 2-D B keeps its
 * leading dims (axis = rank - 1).
 */
#include <stdlib.h>

#include "internal.h"

static int make_fc(struct cv_graph *g, struct cv_node *n, const float *w, int64_t nn,
		   int64_t k, const float *bias, int axis)
{
	int64_t wd[2] = { nn, k };
	int tw = cv_new_const_f32(g, 2, wd, w);
	int tb = bias ? cv_new_const_f32(g, 1, &nn, bias) : -1;
	int *in = realloc(n->in, 3 * sizeof(int));

	if (tw < 0 || (bias && tb < 0) || !in)
		return -1;
	n->in = in;
	n->in[1] = tw;
	n->in[2] = tb;
	n->n_in = 3;
	n->op = CV_OP_FC;
	return cv_node_set_int(n, "axis", axis);
}

/* C as a bias vector of N, or -1 when it varies along M. */
static int gemm_bias(const struct cv_graph *g, const struct cv_node *n, int64_t nn, double beta,
		     float *bias)
{
	const struct cv_tensor *c = n->n_in > 2 && n->in[2] >= 0 ? &g->tensors[n->in[2]] : NULL;

	for (int64_t j = 0; j < nn; j++)
		bias[j] = 0;
	if (!c)
		return 0;
	int64_t e = cv_tensor_elems(c), last = c->rank ? c->dims[c->rank - 1] : 1;

	if (!c->data || c->dtype != CV_F32 || c->rank > 2 || (last != 1 && last != nn) ||
	    e != last)
		return -1;
	for (int64_t j = 0; j < nn; j++)
		bias[j] = (float)(beta * ((float *)c->data)[last == 1 ? 0 : j]);
	return 0;
}

static int gemm_to_fc(struct cv_graph *g, struct cv_node *n)
{
	const struct cv_tensor *b = &g->tensors[n->in[1]];

	if (cv_attr_int(n, "transA", 0) || !b->data || b->dtype != CV_F32 || b->rank != 2)
		return 0;
	bool tb = cv_attr_int(n, "transB", 0);
	double alpha = cv_attr_float(n, "alpha", 1.0f), beta = cv_attr_float(n, "beta", 1.0f);
	int64_t k = b->dims[tb], nn = b->dims[!tb];
	float *w = malloc((nn * k + 1) * sizeof(float)), *bias = malloc((nn + 1) * sizeof(float));
	const float *B = b->data;
	int rc = -1;

	if (w && bias) {
		for (int64_t j = 0; j < nn; j++)
			for (int64_t i = 0; i < k; i++)
				w[j * k + i] = (float)(alpha * (tb ? B[j * k + i] : B[i * nn + j]));
		rc = gemm_bias(g, n, nn, beta, bias) ? 0 : make_fc(g, n, w, nn, k, bias, 1);
	}
	free(w);
	free(bias);
	return rc;
}

static int matmul_to_fc(struct cv_graph *g, struct cv_node *n)
{
	const struct cv_tensor *a = &g->tensors[n->in[0]], *b = &g->tensors[n->in[1]];

	if (!b->data || b->dtype != CV_F32 || b->rank != 2 || !a->shape_known)
		return 0;
	int64_t k = b->dims[0], nn = b->dims[1];
	float *w = malloc((nn * k + 1) * sizeof(float));
	const float *B = b->data;
	int rc = -1;

	if (w) {
		for (int64_t j = 0; j < nn; j++)
			for (int64_t i = 0; i < k; i++)
				w[j * k + i] = B[i * nn + j];
		rc = make_fc(g, n, w, nn, k, NULL, a->rank - 1);
	}
	free(w);
	return rc;
}

int cv_pass_gemm_to_fc(struct cv_graph *g, struct cv_diag *d)
{
	for (int i = 0; i < g->n_nodes; i++) {
		struct cv_node *n = &g->nodes[i];
		int rc = 0;

		if (n->dead || n->n_in < 2)
			continue;
		if (n->op == CV_OP_GEMM)
			rc = gemm_to_fc(g, n);
		else if (n->op == CV_OP_MATMUL)
			rc = matmul_to_fc(g, n);
		if (rc) {
			cv_diag_node(d, n, "out of memory");
			return -1;
		}
	}
	return 0;
}
