/* SPDX-License-Identifier: MIT */
/* Helpers shared by the passes, the shape inference and the executor. */
#ifndef RKACCEL_CONVERT_INTERNAL_H
#define RKACCEL_CONVERT_INTERNAL_H

#include "convert.h"

/* A 2-D conv or pool window with its padding resolved (auto_pad applied). */
struct cv_window {
	int64_t kh, kw, sh, sw, dh, dw;
	int64_t pt, pl, pb, pr;		/* top, left, bottom, right */
	int64_t oh, ow;
	bool ceil_mode;
};

/* kh/kw come from the weights for Conv (pass 0 to read kernel_shape). */
int cv_window_get(const struct cv_node *n, int64_t h, int64_t w, int64_t kh, int64_t kw,
		  struct cv_window *win, struct cv_diag *d);

/* An int list given as an attribute (older opsets) or a constant int64 input. */
int cv_node_ints_arg(const struct cv_graph *g, const struct cv_node *n, int input,
		     const char *attr, int64_t *out, int max);
/* A float given as an attribute or a constant scalar input; def when absent. */
float cv_node_float_arg(const struct cv_graph *g, const struct cv_node *n, int input,
			const char *attr, float def);
int cv_node_set_int(struct cv_node *n, const char *name, int64_t v);
int cv_node_set_ints(struct cv_node *n, const char *name, const int64_t *v, int count);
/* A live node's only consumer, or -1 (also when t is a graph output). */
int cv_only_consumer(const struct cv_graph *g, int t);
/* Normalises a possibly negative axis; -1 when out of range. */
int cv_axis(int64_t axis, int rank);
/* Numpy broadcasting of two shapes; -1 if incompatible. */
int cv_broadcast(const struct cv_tensor *a, const struct cv_tensor *b, int *rank,
		 int64_t *dims);
/* Softmax axis with the opset's default. */
int64_t cv_softmax_axis(const struct cv_graph *g, const struct cv_node *n);

/* Points every live consumer of tensor from at tensor to instead. */
void cv_replace_uses(struct cv_graph *g, int from, int to);
/* A constant float tensor made by a pass (folded weights, biases). */
int cv_new_const_f32(struct cv_graph *g, int rank, const int64_t *dims, const float *data);

/* Slice and Transpose of constant tensors (fold_layout.c). */
int cv_fold_slice(struct cv_graph *g, struct cv_node *n, struct cv_tensor *o, struct cv_diag *d);
int cv_fold_transpose(struct cv_graph *g, struct cv_node *n, struct cv_tensor *o,
		      struct cv_diag *d);

#endif
