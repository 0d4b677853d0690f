// SPDX-License-Identifier: MIT
/*
 * Pass: placement check. Every node left after the clean-up must be one the
 * NPU path takes, with its constraints met, or Softmax/Sigmoid placed on the
 * CPU after the last NPU layer. Each node that cannot be placed adds one line
 * naming it; the pass fails once, after looking at all of them.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static bool cpu_op(enum cv_op op)
{
	return op == CV_OP_SOFTMAX || op == CV_OP_SIGMOID;
}

static void check_window(const struct cv_node *n, struct cv_diag *d, int *bad)
{
	int64_t v[CV_MAX_ATTR_INTS];

	if (cv_attr_ints(n, "dilations", v, 2) == 2 && (v[0] != 1 || v[1] != 1)) {
		cv_diag_node(d, n, "dilation %lld not supported", (long long)(v[0] != 1 ? v[0] : v[1]));
		*bad = 1;
	}
	if (n->op == CV_OP_MAXPOOL && (cv_attr_int(n, "storage_order", 0) || n->n_out > 1)) {
		cv_diag_node(d, n, "the Indices output and storage_order are not supported");
		*bad = 1;
	}
}

static void check_node(const struct cv_graph *g, const struct cv_node *n, struct cv_diag *d,
		       int *bad)
{
	switch (n->op) {
	case CV_OP_CONV:
		if (!cv_tensor_is_const(g, n->in[1]) ||
		    (n->n_in > 2 && n->in[2] >= 0 && !cv_tensor_is_const(g, n->in[2]))) {
			cv_diag_node(d, n, "weights and bias must be constants");
			*bad = 1;
		}
		check_window(n, d, bad);
		return;
	case CV_OP_MAXPOOL:
	case CV_OP_AVGPOOL:
		check_window(n, d, bad);
		return;
	case CV_OP_GEMM:
		cv_diag_node(d, n, "only with constant B, no transA and C a vector of N "
			     "(a fully connected layer)");
		*bad = 1;
		return;
	case CV_OP_MATMUL:
		cv_diag_node(d, n, "only with a constant 2-D second input (a fully connected layer)");
		*bad = 1;
		return;
	case CV_OP_PAD:
		cv_diag_node(d, n, "only a zero constant spatial Pad merged into the Conv "
			     "(or counting AveragePool) it alone feeds");
		*bad = 1;
		return;
	case CV_OP_BATCHNORM:
		cv_diag_node(d, n, "could not be folded (needs constant parameters, rank >= 2)");
		*bad = 1;
		return;
	case CV_OP_SUB:
	case CV_OP_DIV:
		cv_diag_node(d, n, "only on constants (folded); not on activations");
		*bad = 1;
		return;
	case CV_OP_FC: case CV_OP_CHANNEL_AFFINE: case CV_OP_ADD: case CV_OP_MUL:
	case CV_OP_CONCAT: case CV_OP_GLOBALAVGPOOL: case CV_OP_RELU: case CV_OP_CLIP:
	case CV_OP_LEAKYRELU: case CV_OP_FLATTEN: case CV_OP_RESHAPE: case CV_OP_IDENTITY:
	case CV_OP_DROPOUT: case CV_OP_SOFTMAX: case CV_OP_SIGMOID:
		return;
	default:
		cv_diag_node(d, n, n->op == CV_OP_UNKNOWN ? "operator not supported" :
			     "only on constant inputs (folded); not on activations");
		*bad = 1;
	}
}

/* Softmax/Sigmoid read only by other CPU ops or graph outputs run on the CPU. */
static void place_cpu(struct cv_graph *g, const int *order, int count, struct cv_diag *d,
		      int *bad)
{
	for (int i = count - 1; i >= 0; i--) {
		struct cv_node *n = &g->nodes[order[i]];
		bool tail = true;

		for (int k = 0; k < g->n_nodes; k++)
			for (int j = 0; j < g->nodes[k].n_in; j++)
				if (g->nodes[k].in[j] == n->out[0] && !g->nodes[k].on_cpu)
					tail = false;
		if (cpu_op(n->op) && !tail) {
			cv_diag_node(d, n, "runs on the CPU, so only after the last NPU layer");
			*bad = 1;
		}
		n->on_cpu = cpu_op(n->op) && tail;
	}
}

static void check_tensors(const struct cv_graph *g, const struct cv_node *n, struct cv_diag *d,
			  int *bad)
{
	for (int o = 0; o < n->n_out; o++) {
		const struct cv_tensor *t = n->out[o] >= 0 ? &g->tensors[n->out[o]] : NULL;

		if (t && (!t->shape_known || t->dtype != CV_F32)) {
			cv_diag_node(d, n, "output '%s' has %s", t->name ? t->name : "?",
				     t->shape_known ? "a non-float type" : "no static shape");
			*bad = 1;
			return;
		}
	}
}

int cv_pass_check_support(struct cv_graph *g, struct cv_diag *d)
{
	int *order = malloc((g->n_nodes + 1) * sizeof(int));
	int count = order ? cv_graph_topo_order(g, order, d) : -1, bad = 0;

	for (int i = 0; i < g->n_inputs; i++)
		if (!g->tensors[g->inputs[i]].shape_known) {
			cv_diag_add(d, "graph input '%s' has a symbolic shape: give a fixed one",
				    g->tensors[g->inputs[i]].name);
			bad = 1;
		}
	for (int i = 0; i < count; i++) {
		int before = d->count;

		check_node(g, &g->nodes[order[i]], d, &bad);
		if (d->count == before)
			check_tensors(g, &g->nodes[order[i]], d, &bad);
	}
	if (count >= 0)
		place_cpu(g, order, count, d, &bad);
	free(order);
	return count < 0 || bad ? -1 : 0;
}
