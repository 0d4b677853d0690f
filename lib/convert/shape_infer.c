// SPDX-License-Identifier: MIT
/*
 * Static shape inference, one node at a time, and the pass that runs it over
 * the graph in order. Returns 1 (and leaves the output unknown) for an op it
 * does not know or an input whose shape is unknown: the support check names
 * those nodes later, all at once.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static struct cv_tensor *in_t(struct cv_graph *g, const struct cv_node *n, int i)
{
	return i < n->n_in && n->in[i] >= 0 ? &g->tensors[n->in[i]] : NULL;
}

static int set_out(struct cv_graph *g, struct cv_node *n, int o, enum cv_dtype dt, int rank,
		   const int64_t *dims, struct cv_diag *d)
{
	if (o >= n->n_out || n->out[o] < 0)
		return 0;
	struct cv_tensor *t = &g->tensors[n->out[o]];

	if (cv_tensor_set_shape(t, rank, dims)) {
		cv_diag_node(d, n, "output shape out of bounds");
		return -1;
	}
	t->dtype = dt;
	return 0;
}

static int same_as_input(struct cv_graph *g, struct cv_node *n, struct cv_diag *d)
{
	const struct cv_tensor *x = in_t(g, n, 0);

	return set_out(g, n, 0, x->dtype, x->rank, x->dims, d);
}

static int infer_conv(struct cv_graph *g, struct cv_node *n, struct cv_diag *d)
{
	const struct cv_tensor *x = in_t(g, n, 0), *w = in_t(g, n, 1);
	int64_t group = cv_attr_int(n, "group", 1);
	struct cv_window win;

	if (!w || !w->shape_known)
		return 1;
	if (x->rank != 4 || w->rank != 4) {
		cv_diag_node(d, n, "only 2-D convolution (4-D input and weights) is supported");
		return -1;
	}
	if (group < 1 || x->dims[1] % group || w->dims[1] * group != x->dims[1] ||
	    w->dims[0] % group) {
		cv_diag_node(d, n, "%lld input channels, weights [%lld, %lld, ...], group %lld "
			     "do not match", (long long)x->dims[1], (long long)w->dims[0],
			     (long long)w->dims[1], (long long)group);
		return -1;
	}
	const struct cv_tensor *b = in_t(g, n, 2);

	if (b && (!b->shape_known || b->rank != 1 || b->dims[0] != w->dims[0])) {
		cv_diag_node(d, n, "bias is not a vector of %lld", (long long)w->dims[0]);
		return -1;
	}
	if (cv_window_get(n, x->dims[2], x->dims[3], w->dims[2], w->dims[3], &win, d))
		return -1;
	if (win.kh != w->dims[2] || win.kw != w->dims[3]) {
		cv_diag_node(d, n, "kernel_shape does not match the weights");
		return -1;
	}
	int64_t dims[4] = { x->dims[0], w->dims[0], win.oh, win.ow };

	return set_out(g, n, 0, CV_F32, 4, dims, d);
}

static int infer_pool(struct cv_graph *g, struct cv_node *n, struct cv_diag *d)
{
	const struct cv_tensor *x = in_t(g, n, 0);
	struct cv_window win;

	if (x->rank != 4) {
		cv_diag_node(d, n, "only 2-D pooling (4-D input) is supported");
		return -1;
	}
	if (n->op == CV_OP_GLOBALAVGPOOL) {
		int64_t dims[4] = { x->dims[0], x->dims[1], 1, 1 };

		return set_out(g, n, 0, CV_F32, 4, dims, d);
	}
	if (cv_attr_find(n, "kernel_shape") == NULL) {
		cv_diag_node(d, n, "kernel_shape missing");
		return -1;
	}
	if (cv_window_get(n, x->dims[2], x->dims[3], 0, 0, &win, d))
		return -1;
	int64_t dims[4] = { x->dims[0], x->dims[1], win.oh, win.ow };

	return set_out(g, n, 0, CV_F32, 4, dims, d);
}

static int infer_gemm(struct cv_graph *g, struct cv_node *n, struct cv_diag *d)
{
	const struct cv_tensor *a = in_t(g, n, 0), *b = in_t(g, n, 1);

	if (!b || !b->shape_known)
		return 1;
	if (a->rank != 2 || b->rank != 2) {
		cv_diag_node(d, n, "Gemm needs 2-D inputs");
		return -1;
	}
	bool ta = cv_attr_int(n, "transA", 0), tb = cv_attr_int(n, "transB", 0);
	int64_t m = a->dims[ta], k = a->dims[!ta], kb = b->dims[tb], nn = b->dims[!tb];

	if (k != kb) {
		cv_diag_node(d, n, "inner dimensions %lld and %lld differ", (long long)k,
			     (long long)kb);
		return -1;
	}
	int64_t dims[2] = { m, nn };

	return set_out(g, n, 0, CV_F32, 2, dims, d);
}

static int infer_matmul(struct cv_graph *g, struct cv_node *n, struct cv_diag *d)
{
	const struct cv_tensor *a = in_t(g, n, 0), *b = in_t(g, n, 1);
	int64_t dims[CV_MAX_RANK];

	if (!b || !b->shape_known)
		return 1;
	if (a->rank < 2 || b->rank < 2 || (b->rank != 2 && b->rank != a->rank)) {
		cv_diag_node(d, n, "MatMul needs inputs of rank >= 2, the second 2-D or of the "
			     "first's rank");
		return -1;
	}
	if (a->dims[a->rank - 1] != b->dims[b->rank - 2]) {
		cv_diag_node(d, n, "inner dimensions differ");
		return -1;
	}
	for (int i = 0; i < a->rank - 2; i++) {
		if (b->rank > 2 && b->dims[i] != a->dims[i]) {
			cv_diag_node(d, n, "batch dimensions differ");
			return -1;
		}
		dims[i] = a->dims[i];
	}
	dims[a->rank - 2] = a->dims[a->rank - 2];
	dims[a->rank - 1] = b->dims[1 + (b->rank - 2)];
	return set_out(g, n, 0, CV_F32, a->rank, dims, d);
}

static int infer_fc(struct cv_graph *g, struct cv_node *n, struct cv_diag *d)
{
	const struct cv_tensor *x = in_t(g, n, 0), *w = in_t(g, n, 1);
	int axis = (int)cv_attr_int(n, "axis", 1);
	int64_t rows = 1, k = 1;

	for (int i = 0; i < x->rank; i++)
		*(i < axis ? &rows : &k) *= x->dims[i];
	if (w->rank != 2 || w->dims[1] != k) {
		cv_diag_node(d, n, "weights do not match %lld input features", (long long)k);
		return -1;
	}
	struct cv_tensor *o = &g->tensors[n->out[0]];

	/* Keep the shape the replaced Gemm/MatMul gave (MatMul keeps its rank). */
	if (o->shape_known && cv_tensor_elems(o) == rows * w->dims[0] &&
	    o->dims[o->rank - 1] == w->dims[0])
		return 0;
	int64_t dims[2] = { rows, w->dims[0] };

	return set_out(g, n, 0, CV_F32, 2, dims, d);
}

static int infer_broadcast(struct cv_graph *g, struct cv_node *n, struct cv_diag *d)
{
	const struct cv_tensor *a = in_t(g, n, 0), *b = in_t(g, n, 1);
	int64_t dims[CV_MAX_RANK];
	int rank;

	if (!b || !b->shape_known)
		return 1;
	if (cv_broadcast(a, b, &rank, dims)) {
		cv_diag_node(d, n, "input shapes do not broadcast");
		return -1;
	}
	return set_out(g, n, 0, a->dtype, rank, dims, d);
}

static int infer_concat(struct cv_graph *g, struct cv_node *n, struct cv_diag *d)
{
	const struct cv_tensor *x = in_t(g, n, 0);
	int axis = cv_axis(cv_attr_int(n, "axis", 0), x->rank);
	int64_t dims[CV_MAX_RANK];

	if (axis < 0) {
		cv_diag_node(d, n, "axis out of range");
		return -1;
	}
	memcpy(dims, x->dims, sizeof(dims));
	dims[axis] = 0;
	for (int i = 0; i < n->n_in; i++) {
		const struct cv_tensor *t = in_t(g, n, i);

		if (!t || !t->shape_known)
			return 1;
		for (int k = 0; k < x->rank; k++)
			if (t->rank != x->rank || (k != axis && t->dims[k] != x->dims[k])) {
				cv_diag_node(d, n, "input %d's shape does not match input 0", i);
				return -1;
			}
		dims[axis] += t->dims[axis];
	}
	return set_out(g, n, 0, x->dtype, x->rank, dims, d);
}

static int infer_flatten(struct cv_graph *g, struct cv_node *n, struct cv_diag *d)
{
	const struct cv_tensor *x = in_t(g, n, 0);
	int64_t axis = cv_attr_int(n, "axis", 1), dims[2] = { 1, 1 };

	if (axis < 0)
		axis += x->rank;
	if (axis < 0 || axis > x->rank) {
		cv_diag_node(d, n, "axis out of range");
		return -1;
	}
	for (int i = 0; i < x->rank; i++)
		dims[i >= axis] *= x->dims[i];
	return set_out(g, n, 0, x->dtype, 2, dims, d);
}

static int infer_reshape(struct cv_graph *g, struct cv_node *n, struct cv_diag *d)
{
	const struct cv_tensor *x = in_t(g, n, 0);
	int64_t dims[CV_MAX_RANK], known = 1;
	int r = cv_node_ints_arg(g, n, 1, "shape", dims, CV_MAX_RANK), minus = -1;

	if (r == -2 && n->in[1] >= 0 && !g->tensors[n->in[1]].data)
		return 1;	/* shape not constant (yet) */
	if (r < 0) {
		cv_diag_node(d, n, "target shape must be a constant of rank <= %d", CV_MAX_RANK);
		return -1;
	}
	bool allowzero = cv_attr_int(n, "allowzero", 0);

	for (int i = 0; i < r; i++) {
		if (dims[i] == 0 && !allowzero) {
			if (i >= x->rank)
				goto bad;
			dims[i] = x->dims[i];
		}
		if (dims[i] == -1) {
			if (minus >= 0)
				goto bad;
			minus = i;
			continue;
		}
		if (dims[i] < 0 || dims[i] > CV_MAX_DIM)
			goto bad;
		known *= dims[i];
	}
	if (minus >= 0) {
		if (!known || cv_tensor_elems(x) % known)
			goto bad;
		dims[minus] = cv_tensor_elems(x) / known;
		known *= dims[minus];
	}
	if (known != cv_tensor_elems(x))
		goto bad;
	return set_out(g, n, 0, x->dtype, r, dims, d);
bad:
	cv_diag_node(d, n, "target shape does not fit %lld elements",
		     (long long)cv_tensor_elems(x));
	return -1;
}

static int infer_pad(struct cv_graph *g, struct cv_node *n, struct cv_diag *d)
{
	const struct cv_tensor *x = in_t(g, n, 0);
	int64_t p[2 * CV_MAX_RANK], dims[CV_MAX_RANK];
	int k = cv_node_ints_arg(g, n, 1, g->opset < 11 ? "pads" : NULL, p, 2 * CV_MAX_RANK);

	if (k != 2 * x->rank) {
		cv_diag_node(d, n, "pads must be a constant of %d values", 2 * x->rank);
		return -1;
	}
	for (int i = 0; i < x->rank; i++)
		dims[i] = x->dims[i] + p[i] + p[i + x->rank];
	return set_out(g, n, 0, x->dtype, x->rank, dims, d);
}

static int infer_unsqueeze(struct cv_graph *g, struct cv_node *n, struct cv_diag *d)
{
	const struct cv_tensor *x = in_t(g, n, 0);
	int64_t axes[CV_MAX_RANK], dims[CV_MAX_RANK];
	int k = cv_node_ints_arg(g, n, 1, "axes", axes, CV_MAX_RANK);
	bool sq = n->op == CV_OP_SQUEEZE;
	int r = sq ? x->rank - (k > 0 ? k : 0) : x->rank + k;
	char mark[CV_MAX_RANK + 1] = { 0 };

	if ((!sq && k < 0) || r < 0 || r > CV_MAX_RANK) {
		cv_diag_node(d, n, "axes missing or out of range");
		return -1;
	}
	for (int i = 0; i < k; i++) {
		int a = cv_axis(axes[i], sq ? x->rank : r);

		if (a < 0 || mark[a] || (sq && x->dims[a] != 1)) {
			cv_diag_node(d, n, "axis %lld invalid", (long long)axes[i]);
			return -1;
		}
		mark[a] = 1;
	}
	int j = 0;

	if (sq) {
		r = 0;
		for (int i = 0; i < x->rank; i++)
			if (!(k > 0 ? mark[i] : x->dims[i] == 1))
				dims[r++] = x->dims[i];
	} else {
		for (int i = 0; i < r; i++)
			dims[i] = mark[i] ? 1 : x->dims[j++];
	}
	return set_out(g, n, 0, x->dtype, r, dims, d);
}

static int infer_gather(struct cv_graph *g, struct cv_node *n, struct cv_diag *d)
{
	const struct cv_tensor *x = in_t(g, n, 0), *idx = in_t(g, n, 1);
	int axis = cv_axis(cv_attr_int(n, "axis", 0), x->rank);
	int64_t dims[CV_MAX_RANK];
	int r = 0;

	if (!idx || !idx->shape_known)
		return 1;
	if (axis < 0 || x->rank - 1 + idx->rank > CV_MAX_RANK) {
		cv_diag_node(d, n, "axis or indices out of range");
		return -1;
	}
	for (int i = 0; i < axis; i++)
		dims[r++] = x->dims[i];
	for (int i = 0; i < idx->rank; i++)
		dims[r++] = idx->dims[i];
	for (int i = axis + 1; i < x->rank; i++)
		dims[r++] = x->dims[i];
	return set_out(g, n, 0, x->dtype, r, dims, d);
}

static int infer_shape_op(struct cv_graph *g, struct cv_node *n, struct cv_diag *d)
{
	const struct cv_tensor *x = in_t(g, n, 0);
	int64_t start = cv_attr_int(n, "start", 0), end = cv_attr_int(n, "end", x->rank);

	start = start < 0 ? start + x->rank : start;
	end = end < 0 ? end + x->rank : end;
	start = start < 0 ? 0 : start > x->rank ? x->rank : start;
	end = end < start ? start : end > x->rank ? x->rank : end;
	int64_t dims[1] = { end - start };

	return set_out(g, n, 0, CV_I64, 1, dims, d);
}

static int infer_cast(struct cv_graph *g, struct cv_node *n, struct cv_diag *d)
{
	const struct cv_tensor *x = in_t(g, n, 0);
	int64_t to = cv_attr_int(n, "to", 0);

	if (to != 1 && to != 7 && to != 6) {
		cv_diag_node(d, n, "cast to type %lld not supported", (long long)to);
		return -1;
	}
	return set_out(g, n, 0, to == 1 ? CV_F32 : CV_I64, x->rank, x->dims, d);
}

/* Ops that compute on float values take float inputs only. */
static bool float_only(enum cv_op op)
{
	switch (op) {
	case CV_OP_CONV: case CV_OP_GEMM: case CV_OP_MATMUL: case CV_OP_FC:
	case CV_OP_MAXPOOL: case CV_OP_AVGPOOL: case CV_OP_GLOBALAVGPOOL: case CV_OP_RELU:
	case CV_OP_CLIP: case CV_OP_LEAKYRELU: case CV_OP_SIGMOID: case CV_OP_BATCHNORM:
	case CV_OP_CHANNEL_AFFINE: case CV_OP_SOFTMAX:
		return true;
	default:
		return false;
	}
}

/* Type rules: float ops take float; element-wise ops and Concat one type. */
static int check_types(struct cv_graph *g, const struct cv_node *n, struct cv_diag *d)
{
	bool same = n->op == CV_OP_ADD || n->op == CV_OP_SUB || n->op == CV_OP_MUL ||
		    n->op == CV_OP_DIV || n->op == CV_OP_CONCAT;

	for (int i = 0; i < n->n_in; i++) {
		const struct cv_tensor *t = in_t(g, n, i);

		if (!t || (!float_only(n->op) && !same))
			continue;
		if ((float_only(n->op) && t->dtype != CV_F32) ||
		    (same && t->dtype != g->tensors[n->in[0]].dtype)) {
			cv_diag_node(d, n, "input %d has the wrong element type", i);
			return -1;
		}
	}
	return 0;
}

/* BatchNormalization's four vectors, ChannelAffine's two: one per channel. */
static int check_channel_params(struct cv_graph *g, const struct cv_node *n, struct cv_diag *d)
{
	int want = n->op == CV_OP_BATCHNORM ? 5 : 3;
	int64_t c = in_t(g, n, 0)->dims[1];

	for (int i = 1; i < want; i++) {
		const struct cv_tensor *t = in_t(g, n, i);

		if (n->n_in < want || !t || !t->shape_known || t->rank != 1 || t->dims[0] != c) {
			cv_diag_node(d, n, "parameter %d is not a vector of %lld channels", i,
				     (long long)c);
			return -1;
		}
	}
	return 0;
}

int cv_infer_node(struct cv_graph *g, struct cv_node *n, struct cv_diag *d)
{
	const struct cv_tensor *x = in_t(g, n, 0);

	if (!x || !x->shape_known)
		return 1;
	if (check_types(g, n, d))
		return -1;
	switch (n->op) {
	case CV_OP_CONV:
		return infer_conv(g, n, d);
	case CV_OP_MAXPOOL:
	case CV_OP_AVGPOOL:
	case CV_OP_GLOBALAVGPOOL:
		return infer_pool(g, n, d);
	case CV_OP_GEMM:
		return infer_gemm(g, n, d);
	case CV_OP_MATMUL:
		return infer_matmul(g, n, d);
	case CV_OP_FC:
		return infer_fc(g, n, d);
	case CV_OP_ADD:
	case CV_OP_SUB:
	case CV_OP_MUL:
	case CV_OP_DIV:
		return infer_broadcast(g, n, d);
	case CV_OP_CONCAT:
		return infer_concat(g, n, d);
	case CV_OP_FLATTEN:
		return infer_flatten(g, n, d);
	case CV_OP_RESHAPE:
		return infer_reshape(g, n, d);
	case CV_OP_PAD:
		return infer_pad(g, n, d);
	case CV_OP_UNSQUEEZE:
	case CV_OP_SQUEEZE:
		return infer_unsqueeze(g, n, d);
	case CV_OP_GATHER:
		return infer_gather(g, n, d);
	case CV_OP_SHAPE:
		return infer_shape_op(g, n, d);
	case CV_OP_CAST:
		return infer_cast(g, n, d);
	case CV_OP_BATCHNORM:
	case CV_OP_CHANNEL_AFFINE:
		if (x->rank < 2) {
			cv_diag_node(d, n, "input needs a channel dimension");
			return -1;
		}
		if (check_channel_params(g, n, d))
			return -1;
		return same_as_input(g, n, d);
	case CV_OP_RELU:
	case CV_OP_CLIP:
	case CV_OP_LEAKYRELU:
	case CV_OP_SIGMOID:
	case CV_OP_SOFTMAX:
	case CV_OP_IDENTITY:
	case CV_OP_DROPOUT:
		return same_as_input(g, n, d);
	default:
		return 1;
	}
}

int cv_pass_infer_shapes(struct cv_graph *g, struct cv_diag *d)
{
	int *order = malloc((g->n_nodes + 1) * sizeof(int));
	int count = order ? cv_graph_topo_order(g, order, d) : -1, rc = 0;

	for (int i = 0; i < count; i++)
		if (cv_infer_node(g, &g->nodes[order[i]], d) < 0)
			rc = -1;
	free(order);
	return count < 0 ? -1 : rc;
}
