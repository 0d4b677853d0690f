// SPDX-License-Identifier: MIT
/*
 * Pass: a Flatten, or a Reshape to [prod(dims[:a]), rest], that only feeds a
 * FullyConnected layer is dropped; the layer reads the 4-D (or other) tensor
 * directly and flattens from axis a itself. The element order is the ONNX
 * (NCHW, row-major) one: a lowering to NHWC permutes the weights, not data.
 */
#include "internal.h"

/* The flatten axis a Flatten/Reshape output [rows, k] of x stands for, or -1. */
static int flatten_axis(const struct cv_graph *g, const struct cv_node *n)
{
	const struct cv_tensor *x = &g->tensors[n->in[0]], *o = &g->tensors[n->out[0]];
	int64_t rows = 1;

	if (!x->shape_known || !o->shape_known || o->rank != 2)
		return -1;
	if (n->op == CV_OP_FLATTEN) {
		int64_t a = cv_attr_int(n, "axis", 1);

		return (int)(a < 0 ? a + x->rank : a);
	}
	for (int a = 0; a <= x->rank; a++) {
		if (rows == o->dims[0])
			return a;
		if (a < x->rank)
			rows *= x->dims[a];
	}
	return -1;
}

int cv_pass_flatten_into_fc(struct cv_graph *g, struct cv_diag *d)
{
	for (int i = 0; i < g->n_nodes; i++) {
		struct cv_node *fc = &g->nodes[i];

		if (fc->dead || fc->op != CV_OP_FC || cv_attr_int(fc, "axis", 1) != 1)
			continue;
		int p = g->tensors[fc->in[0]].producer;

		if (p < 0 || cv_only_consumer(g, fc->in[0]) != i)
			continue;
		struct cv_node *f = &g->nodes[p];

		if (f->op != CV_OP_FLATTEN && f->op != CV_OP_RESHAPE)
			continue;
		int axis = flatten_axis(g, f);

		if (axis < 0 || cv_node_set_int(fc, "axis", axis)) {
			if (axis >= 0) {
				cv_diag_node(d, fc, "out of memory");
				return -1;
			}
			continue;
		}
		fc->in[0] = f->in[0];
		f->dead = true;
	}
	cv_graph_compact(g);
	return 0;
}
