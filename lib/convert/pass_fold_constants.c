// SPDX-License-Identifier: MIT
/*
 * Pass: constant folding, in graph order with shape inference interleaved so
 * that Shape sees its input's static shape. Constant and ConstantOfShape
 * become data; Shape becomes its input's dims; a node whose inputs are all
 * constant is evaluated here (the int64 shape arithmetic torch exports before
 * Reshape and Pad: Gather, Unsqueeze, Squeeze, Concat, Cast, Add/Sub/Mul/Div,
 * Slice, Transpose) or by
 * the float executor (any float op it runs). Folded nodes are removed.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int fold_constant(struct cv_graph *g, struct cv_node *n, struct cv_tensor *o,
			 struct cv_diag *d)
{
	const struct cv_attr *a = cv_attr_find(n, "value");
	int64_t one = 1;

	if (a && a->type == CV_ATTR_TENSOR) {
		const struct cv_tensor *v = &g->tensors[a->tensor];

		return cv_tensor_set_const(o, v->dtype, v->rank, v->dims, v->data);
	}
	if ((a = cv_attr_find(n, "value_float")) && a->type == CV_ATTR_FLOAT)
		return cv_tensor_set_const(o, CV_F32, 0, &one, &a->f);
	if ((a = cv_attr_find(n, "value_int")) && a->type == CV_ATTR_INT)
		return cv_tensor_set_const(o, CV_I64, 0, &one, &a->i);
	if ((a = cv_attr_find(n, "value_ints")) && a->type == CV_ATTR_INTS) {
		int64_t len = a->n_ints;

		return cv_tensor_set_const(o, CV_I64, 1, &len, a->ints);
	}
	cv_diag_node(d, n, "no value of a supported kind (tensor, float, int, ints)");
	return -1;
}

static int fold_constant_of_shape(struct cv_graph *g, struct cv_node *n, struct cv_tensor *o,
				  struct cv_diag *d)
{
	const struct cv_tensor *s = &g->tensors[n->in[0]];
	const struct cv_attr *a = cv_attr_find(n, "value");
	const struct cv_tensor *v = a && a->type == CV_ATTR_TENSOR ? &g->tensors[a->tensor] : NULL;
	enum cv_dtype dt = v ? v->dtype : CV_F32;

	if (s->dtype != CV_I64 || s->rank != 1 || cv_tensor_set_shape(o, (int)s->dims[0], s->data)) {
		cv_diag_node(d, n, "shape input is not a valid int64 vector");
		return -1;
	}
	int64_t e = cv_tensor_elems(o);
	size_t es = cv_dtype_size(dt);
	uint8_t *buf = calloc(e ? e : 1, es);

	if (!buf)
		return -1;
	for (int64_t i = 0; v && i < e; i++)
		memcpy(buf + i * es, v->data, es);
	free(o->data);
	o->data = buf;
	o->dtype = dt;
	return 0;
}

static int fold_shape(struct cv_graph *g, struct cv_node *n, struct cv_tensor *o)
{
	const struct cv_tensor *x = &g->tensors[n->in[0]];
	int64_t start = x->rank - o->dims[0];	/* from the inferred length */
	int64_t s = cv_attr_int(n, "start", 0);

	s = s < 0 ? s + x->rank : s;
	start = s < 0 ? 0 : s > x->rank ? x->rank : s;
	return cv_tensor_set_const(o, CV_I64, 1, o->dims, x->dims + start);
}

static int64_t i64_arith(enum cv_op op, int64_t a, int64_t b)
{
	switch (op) {
	case CV_OP_ADD:
		return a + b;
	case CV_OP_SUB:
		return a - b;
	case CV_OP_MUL:
		return a * b;
	default:
		return b ? a / b : 0;
	}
}

/* Element-wise int64 arithmetic: equal shapes or one single value. */
static int fold_i64_binary(struct cv_graph *g, struct cv_node *n, struct cv_tensor *o,
			   struct cv_diag *d)
{
	const struct cv_tensor *a = &g->tensors[n->in[0]], *b = &g->tensors[n->in[1]];
	int64_t ea = cv_tensor_elems(a), eb = cv_tensor_elems(b), e = cv_tensor_elems(o);
	const int64_t *A = a->data, *B = b->data;
	int64_t *y = malloc((e ? e : 1) * sizeof(int64_t));

	if (!y || (ea != e && ea != 1) || (eb != e && eb != 1) || b->dtype != CV_I64) {
		free(y);
		cv_diag_node(d, n, "int64 arithmetic on these shapes not supported");
		return -1;
	}
	for (int64_t i = 0; i < e; i++)
		y[i] = i64_arith(n->op, A[ea == 1 ? 0 : i], B[eb == 1 ? 0 : i]);
	free(o->data);
	o->data = y;
	return 0;
}

static int fold_gather(struct cv_graph *g, struct cv_node *n, struct cv_tensor *o,
		       struct cv_diag *d)
{
	const struct cv_tensor *x = &g->tensors[n->in[0]], *ix = &g->tensors[n->in[1]];
	int axis = cv_axis(cv_attr_int(n, "axis", 0), x->rank);
	int64_t outer = 1, inner = 1, ni = cv_tensor_elems(ix), es = cv_dtype_size(x->dtype);
	const int64_t *idx = ix->data;

	for (int i = 0; i < axis; i++)
		outer *= x->dims[i];
	for (int i = axis + 1; i < x->rank; i++)
		inner *= x->dims[i];
	uint8_t *y = malloc((cv_tensor_elems(o) + 1) * es);

	if (!y || ix->dtype != CV_I64) {
		free(y);
		cv_diag_node(d, n, "indices must be int64");
		return -1;
	}
	for (int64_t i = 0; i < outer; i++)
		for (int64_t k = 0; k < ni; k++) {
			int64_t j = idx[k] < 0 ? idx[k] + x->dims[axis] : idx[k];

			if (j < 0 || j >= x->dims[axis]) {
				free(y);
				cv_diag_node(d, n, "index %lld out of range", (long long)idx[k]);
				return -1;
			}
			memcpy(y + (i * ni + k) * inner * es,
			       (uint8_t *)x->data + (i * x->dims[axis] + j) * inner * es, inner * es);
		}
	free(o->data);
	o->data = y;
	return 0;
}

/* Concat of constants of either type, through the executor's float path
 * where float, byte-wise here where int64. */
static int fold_concat_i64(struct cv_graph *g, struct cv_node *n, struct cv_tensor *o)
{
	int axis = cv_axis(cv_attr_int(n, "axis", 0), o->rank);
	int64_t outer = 1, inner = 1, off = 0;
	int64_t *y = malloc((cv_tensor_elems(o) + 1) * sizeof(int64_t));

	if (!y)
		return -1;
	for (int i = 0; i < axis; i++)
		outer *= o->dims[i];
	for (int i = axis + 1; i < o->rank; i++)
		inner *= o->dims[i];
	for (int k = 0; k < n->n_in; k++) {
		const struct cv_tensor *t = &g->tensors[n->in[k]];
		int64_t part = t->dims[axis] * inner;

		for (int64_t i = 0; i < outer; i++)
			memcpy(y + i * o->dims[axis] * inner + off, (int64_t *)t->data + i * part,
			       part * sizeof(int64_t));
		off += part;
	}
	free(o->data);
	o->data = y;
	return 0;
}

static int fold_cast(struct cv_graph *g, struct cv_node *n, struct cv_tensor *o)
{
	const struct cv_tensor *x = &g->tensors[n->in[0]];
	int64_t e = cv_tensor_elems(x);
	void *y = malloc((e + 1) * cv_dtype_size(o->dtype));

	if (!y)
		return -1;
	for (int64_t i = 0; i < e; i++) {
		double v = x->dtype == CV_F32 ? ((float *)x->data)[i] : ((int64_t *)x->data)[i];

		if (o->dtype == CV_F32)
			((float *)y)[i] = (float)v;
		else
			((int64_t *)y)[i] = (int64_t)v;
	}
	free(o->data);
	o->data = y;
	return 0;
}

/* Same bytes, new shape: Reshape, Flatten, Unsqueeze, Squeeze, Identity. */
static int fold_view(struct cv_graph *g, struct cv_node *n, struct cv_tensor *o)
{
	const struct cv_tensor *x = &g->tensors[n->in[0]];
	size_t bytes = cv_tensor_elems(x) * cv_dtype_size(x->dtype);
	void *y = malloc(bytes + 1);

	if (!y)
		return -1;
	memcpy(y, x->data, bytes);
	free(o->data);
	o->data = y;
	return 0;
}

static int fold_float(struct cv_graph *g, struct cv_node *n, struct cv_tensor *o,
		      struct cv_diag *d)
{
	float **bufs = calloc(g->n_tensors, sizeof(float *));
	float *y = malloc((cv_tensor_elems(o) + 1) * sizeof(float));
	int rc = -1;

	if (bufs && y) {
		for (int k = 0; k < n->n_in; k++)
			if (n->in[k] >= 0)
				bufs[n->in[k]] = g->tensors[n->in[k]].data;
		bufs[n->out[0]] = y;
		rc = cv_exec_node(g, n, bufs, d);
	}
	free(bufs);
	if (rc) {
		free(y);
		return -1;
	}
	free(o->data);
	o->data = y;
	return 0;
}

static bool all_inputs_const(const struct cv_graph *g, const struct cv_node *n)
{
	for (int k = 0; k < n->n_in; k++)
		if (n->in[k] >= 0 && !g->tensors[n->in[k]].data)
			return false;
	return n->n_in > 0;
}

/* 1: folded, 0: left alone, -1: error. */
static int fold_node(struct cv_graph *g, struct cv_node *n, struct cv_diag *d)
{
	struct cv_tensor *o = n->out[0] >= 0 ? &g->tensors[n->out[0]] : NULL;
	int rc;

	if (!o || n->n_out != 1)
		return 0;
	if (n->op == CV_OP_CONSTANT)
		return fold_constant(g, n, o, d) ? -1 : 1;
	if (n->op == CV_OP_CONSTANTOFSHAPE && all_inputs_const(g, n))
		return fold_constant_of_shape(g, n, o, d) ? -1 : 1;
	if (n->op == CV_OP_SLICE && all_inputs_const(g, n))
		return cv_fold_slice(g, n, o, d) ? -1 : 1;
	if (n->op == CV_OP_TRANSPOSE && all_inputs_const(g, n))
		return cv_fold_transpose(g, n, o, d) ? -1 : 1;
	rc = cv_infer_node(g, n, d);
	if (rc)
		return rc < 0 ? -1 : 0;
	if (n->op == CV_OP_SHAPE)
		return fold_shape(g, n, o) ? -1 : 1;
	if (!all_inputs_const(g, n))
		return 0;
	enum cv_dtype dt = g->tensors[n->in[0]].dtype;

	switch (n->op) {
	case CV_OP_GATHER:
		rc = fold_gather(g, n, o, d);
		break;
	case CV_OP_CAST:
		rc = fold_cast(g, n, o);
		break;
	case CV_OP_RESHAPE:
	case CV_OP_FLATTEN:
	case CV_OP_UNSQUEEZE:
	case CV_OP_SQUEEZE:
	case CV_OP_IDENTITY:
		rc = fold_view(g, n, o);
		break;
	case CV_OP_CONCAT:
		rc = dt == CV_I64 ? fold_concat_i64(g, n, o) : fold_float(g, n, o, d);
		break;
	case CV_OP_ADD:
	case CV_OP_SUB:
	case CV_OP_MUL:
	case CV_OP_DIV:
		rc = dt == CV_I64 ? fold_i64_binary(g, n, o, d) : fold_float(g, n, o, d);
		break;
	default:
		if (dt != CV_F32)
			return 0;
		/* Ops outside the executor stay; the support check names them. */
		struct cv_diag quiet = { 0 };

		rc = fold_float(g, n, o, &quiet);
		cv_diag_free(&quiet);
		if (rc)
			return 0;
	}
	return rc ? -1 : 1;
}

int cv_pass_fold_constants(struct cv_graph *g, struct cv_diag *d)
{
	int *order = malloc((g->n_nodes + 1) * sizeof(int));
	int count = order ? cv_graph_topo_order(g, order, d) : -1, rc = 0;

	for (int i = 0; i < count; i++) {
		struct cv_node *n = &g->nodes[order[i]];
		int r = fold_node(g, n, d);

		if (r < 0)
			rc = -1;
		if (r > 0) {
			n->dead = true;
			g->tensors[n->out[0]].producer = -1;
			g->tensors[n->out[0]].shape_known = true;
		}
	}
	free(order);
	cv_graph_compact(g);
	return count < 0 ? -1 : rc;
}
