// SPDX-License-Identifier: MIT
/* Float executor: op dispatch and the run over a whole graph in order. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int cv_exec_conv(const struct cv_graph *g, const struct cv_node *n, float **b, struct cv_diag *d);
int cv_exec_gemm(const struct cv_graph *g, const struct cv_node *n, float **b, struct cv_diag *d);
int cv_exec_matmul(const struct cv_graph *g, const struct cv_node *n, float **b,
		   struct cv_diag *d);
int cv_exec_fc(const struct cv_graph *g, const struct cv_node *n, float **b, struct cv_diag *d);
int cv_exec_pool(const struct cv_graph *g, const struct cv_node *n, float **b, struct cv_diag *d);
int cv_exec_binary(const struct cv_graph *g, const struct cv_node *n, float **b,
		   struct cv_diag *d);
int cv_exec_activation(const struct cv_graph *g, const struct cv_node *n, float **b,
		       struct cv_diag *d);
void cv_exec_fused_act(const struct cv_graph *g, const struct cv_node *n, float **b);
int cv_exec_channel(const struct cv_graph *g, const struct cv_node *n, float **b,
		    struct cv_diag *d);
int cv_exec_concat(const struct cv_graph *g, const struct cv_node *n, float **b,
		   struct cv_diag *d);
int cv_exec_copy(const struct cv_graph *g, const struct cv_node *n, float **b, struct cv_diag *d);
int cv_exec_softmax(const struct cv_graph *g, const struct cv_node *n, float **b,
		    struct cv_diag *d);

typedef int (*exec_fn)(const struct cv_graph *, const struct cv_node *, float **,
		       struct cv_diag *);

static exec_fn exec_for(enum cv_op op)
{
	switch (op) {
	case CV_OP_CONV:
		return cv_exec_conv;
	case CV_OP_GEMM:
		return cv_exec_gemm;
	case CV_OP_MATMUL:
		return cv_exec_matmul;
	case CV_OP_FC:
		return cv_exec_fc;
	case CV_OP_MAXPOOL:
	case CV_OP_AVGPOOL:
	case CV_OP_GLOBALAVGPOOL:
		return cv_exec_pool;
	case CV_OP_ADD:
	case CV_OP_SUB:
	case CV_OP_MUL:
	case CV_OP_DIV:
		return cv_exec_binary;
	case CV_OP_RELU:
	case CV_OP_CLIP:
	case CV_OP_LEAKYRELU:
	case CV_OP_SIGMOID:
		return cv_exec_activation;
	case CV_OP_BATCHNORM:
	case CV_OP_CHANNEL_AFFINE:
		return cv_exec_channel;
	case CV_OP_CONCAT:
		return cv_exec_concat;
	case CV_OP_FLATTEN:
	case CV_OP_RESHAPE:
	case CV_OP_IDENTITY:
	case CV_OP_DROPOUT:
		return cv_exec_copy;
	case CV_OP_SOFTMAX:
		return cv_exec_softmax;
	default:
		return NULL;
	}
}

int cv_exec_node(const struct cv_graph *g, const struct cv_node *n, float **bufs,
		 struct cv_diag *d)
{
	exec_fn fn = exec_for(n->op);

	if (!fn) {
		cv_diag_node(d, n, "the float executor does not run this op");
		return -1;
	}
	for (int i = 0; i < n->n_in; i++)
		if (n->in[i] >= 0 && g->tensors[n->in[i]].dtype == CV_F32 && !bufs[n->in[i]]) {
			cv_diag_node(d, n, "input %d has no data", i);
			return -1;
		}
	if (fn(g, n, bufs, d))
		return -1;
	cv_exec_fused_act(g, n, bufs);
	return 0;
}

static void free_bufs(const struct cv_graph *g, float **bufs, const char *owned)
{
	for (int t = 0; t < g->n_tensors; t++)
		if (owned[t])
			free(bufs[t]);
	free(bufs);
}

int cv_exec(const struct cv_graph *g, const float *const *inputs, float *const *outputs,
	    struct cv_diag *d)
{
	return cv_exec_visit(g, inputs, outputs, NULL, NULL, d);
}

int cv_exec_visit(const struct cv_graph *g, const float *const *inputs, float *const *outputs,
		  cv_visit_fn visit, void *ctx, struct cv_diag *d)
{
	float **bufs = calloc(g->n_tensors + 1, sizeof(float *));
	char *owned = calloc(g->n_tensors + 1, 1);
	int *order = malloc((g->n_nodes + 1) * sizeof(int));
	int count = -1, rc = -1;

	if (!bufs || !owned || !order) {
		cv_diag_add(d, "out of memory");
		goto out;
	}
	count = cv_graph_topo_order(g, order, d);
	if (count < 0)
		goto out;
	for (int t = 0; t < g->n_tensors; t++)
		if (g->tensors[t].data && g->tensors[t].dtype == CV_F32)
			bufs[t] = g->tensors[t].data;
	for (int i = 0; i < g->n_inputs; i++) {
		bufs[g->inputs[i]] = (float *)inputs[i];
		if (visit)
			visit(ctx, g->inputs[i], inputs[i]);
	}
	for (int i = 0; i < count; i++) {
		const struct cv_node *n = &g->nodes[order[i]];
		int o = n->out[0];

		if (!g->tensors[o].shape_known) {
			cv_diag_node(d, n, "output shape unknown");
			goto out;
		}
		bufs[o] = malloc(cv_tensor_elems(&g->tensors[o]) * sizeof(float) + 1);
		owned[o] = 1;
		if (!bufs[o] || cv_exec_node(g, n, bufs, d))
			goto out;
		if (visit)
			visit(ctx, o, bufs[o]);
	}
	for (int i = 0; i < g->n_outputs; i++) {
		int t = g->outputs[i];

		memcpy(outputs[i], bufs[t], cv_tensor_elems(&g->tensors[t]) * sizeof(float));
	}
	rc = 0;
out:
	if (bufs)
		free_bufs(g, bufs, owned);
	free(owned);
	free(order);
	return rc;
}
