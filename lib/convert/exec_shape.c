// SPDX-License-Identifier: MIT
/*
 * Float executor: data movement (Concat, the reshaping ops, Pad) and Softmax,
 * the op kept on the CPU at the output.
 */
#include <math.h>
#include <string.h>

#include "internal.h"

int cv_exec_concat(const struct cv_graph *g, const struct cv_node *n, float **bufs,
		   struct cv_diag *d)
{
	const struct cv_tensor *o = &g->tensors[n->out[0]];
	int axis = cv_axis(cv_attr_int(n, "axis", 0), o->rank);
	int64_t outer = 1, inner = 1, off = 0;

	(void)d;
	for (int i = 0; i < axis; i++)
		outer *= o->dims[i];
	for (int i = axis + 1; i < o->rank; i++)
		inner *= o->dims[i];
	for (int k = 0; k < n->n_in; k++) {
		int64_t part = g->tensors[n->in[k]].dims[axis] * inner;
		const float *src = bufs[n->in[k]];

		for (int64_t i = 0; i < outer; i++)
			memcpy(bufs[n->out[0]] + i * o->dims[axis] * inner + off, src + i * part,
			       part * sizeof(float));
		off += part;
	}
	return 0;
}

/* Flatten, Reshape, Identity, Dropout (inference): the same bytes. */
int cv_exec_copy(const struct cv_graph *g, const struct cv_node *n, float **bufs,
		 struct cv_diag *d)
{
	(void)d;
	memcpy(bufs[n->out[0]], bufs[n->in[0]],
	       cv_tensor_elems(&g->tensors[n->out[0]]) * sizeof(float));
	return 0;
}

int cv_exec_softmax(const struct cv_graph *g, const struct cv_node *n, float **bufs,
		    struct cv_diag *d)
{
	const struct cv_tensor *x = &g->tensors[n->in[0]];
	int axis = cv_axis(cv_softmax_axis(g, n), x->rank);
	int64_t outer = 1, len = 1, inner = 1;

	if (axis < 0) {
		cv_diag_node(d, n, "axis out of range");
		return -1;
	}
	/* Before opset 13 the input is coerced to 2-D at axis: one row per outer index. */
	for (int i = 0; i < x->rank; i++) {
		if (i < axis)
			outer *= x->dims[i];
		else if (i == axis || g->opset < 13)
			len *= x->dims[i];
		else
			inner *= x->dims[i];
	}
	for (int64_t o = 0; o < outer; o++)
		for (int64_t in = 0; in < inner; in++) {
			const float *xs = bufs[n->in[0]] + o * len * inner + in;
			float *ys = bufs[n->out[0]] + o * len * inner + in;
			double mx = -INFINITY, sum = 0;

			for (int64_t k = 0; k < len; k++)
				mx = fmax(mx, xs[k * inner]);
			for (int64_t k = 0; k < len; k++)
				sum += exp((double)xs[k * inner] - mx);
			for (int64_t k = 0; k < len; k++)
				ys[k * inner] = (float)(exp((double)xs[k * inner] - mx) / sum);
		}
	return 0;
}
