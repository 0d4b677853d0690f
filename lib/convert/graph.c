// SPDX-License-Identifier: MIT
/* The graph container: tensors by name, nodes, edges, topological order. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"

static const char *const op_names[CV_OP_COUNT] = {
	[CV_OP_UNKNOWN] = "?",
	[CV_OP_CONV] = "Conv", [CV_OP_GEMM] = "Gemm", [CV_OP_MATMUL] = "MatMul",
	[CV_OP_ADD] = "Add", [CV_OP_SUB] = "Sub", [CV_OP_MUL] = "Mul", [CV_OP_DIV] = "Div",
	[CV_OP_CONCAT] = "Concat", [CV_OP_MAXPOOL] = "MaxPool",
	[CV_OP_AVGPOOL] = "AveragePool", [CV_OP_GLOBALAVGPOOL] = "GlobalAveragePool",
	[CV_OP_RELU] = "Relu", [CV_OP_CLIP] = "Clip", [CV_OP_LEAKYRELU] = "LeakyRelu",
	[CV_OP_SIGMOID] = "Sigmoid", [CV_OP_BATCHNORM] = "BatchNormalization",
	[CV_OP_FLATTEN] = "Flatten", [CV_OP_RESHAPE] = "Reshape", [CV_OP_SOFTMAX] = "Softmax",
	[CV_OP_PAD] = "Pad", [CV_OP_IDENTITY] = "Identity", [CV_OP_DROPOUT] = "Dropout",
	[CV_OP_CONSTANT] = "Constant", [CV_OP_CONSTANTOFSHAPE] = "ConstantOfShape",
	[CV_OP_SHAPE] = "Shape", [CV_OP_GATHER] = "Gather", [CV_OP_UNSQUEEZE] = "Unsqueeze",
	[CV_OP_SQUEEZE] = "Squeeze", [CV_OP_CAST] = "Cast", [CV_OP_SLICE] = "Slice",
	[CV_OP_TRANSPOSE] = "Transpose",
	[CV_OP_FC] = "FullyConnected", [CV_OP_CHANNEL_AFFINE] = "ChannelAffine",
};

enum cv_op cv_op_from_name(const char *name)
{
	/* The internal ops are not ONNX names: a file cannot ask for them. */
	for (int i = 1; i < CV_OP_FC; i++)
		if (!strcmp(op_names[i], name))
			return (enum cv_op)i;
	return CV_OP_UNKNOWN;
}

const char *cv_op_name(enum cv_op op)
{
	return op < CV_OP_COUNT ? op_names[op] : "?";
}

static void diag_vadd(struct cv_diag *d, const char *prefix, const char *fmt, va_list ap)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "%s", prefix);

	vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	size_t add = strlen(line) + 1;
	char *t = realloc(d->text, d->len + add + 1);

	if (!t)
		return;
	d->text = t;
	memcpy(d->text + d->len, line, add - 1);
	d->len += add;
	d->text[d->len - 1] = '\n';
	d->text[d->len] = 0;
	d->count++;
}

void cv_diag_add(struct cv_diag *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_vadd(d, "", fmt, ap);
	va_end(ap);
}

void cv_diag_node(struct cv_diag *d, const struct cv_node *n, const char *fmt, ...)
{
	char prefix[200];
	va_list ap;

	snprintf(prefix, sizeof(prefix), "node '%.80s' (%.60s): ", n->name, n->op_name);
	va_start(ap, fmt);
	diag_vadd(d, prefix, fmt, ap);
	va_end(ap);
}

void cv_diag_free(struct cv_diag *d)
{
	free(d->text);
	memset(d, 0, sizeof(*d));
}

struct cv_graph *cv_graph_new(void)
{
	return calloc(1, sizeof(struct cv_graph));
}

static void node_free(struct cv_node *n)
{
	free(n->name);
	free(n->op_name);
	free(n->in);
	free(n->out);
	for (int i = 0; i < n->n_attrs; i++) {
		free(n->attrs[i].name);
		free(n->attrs[i].s);
	}
	free(n->attrs);
}

void cv_graph_free(struct cv_graph *g)
{
	if (!g)
		return;
	for (int i = 0; i < g->n_nodes; i++)
		node_free(&g->nodes[i]);
	for (int i = 0; i < g->n_tensors; i++) {
		free(g->tensors[i].name);
		free(g->tensors[i].data);
	}
	free(g->nodes);
	free(g->tensors);
	free(g->name_hash);
	free(g->inputs);
	free(g->outputs);
	free(g);
}

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

int cv_graph_find(const struct cv_graph *g, const char *name)
{
	if (!g->hash_cap)
		return -1;
	for (uint32_t i = name_hash(name);; i++) {
		int t = g->name_hash[i & (g->hash_cap - 1)];

		if (t < 0)
			return -1;
		if (!strcmp(g->tensors[t].name, name))
			return t;
	}
}

/* Keeps the table at most half full: lookups stay short on big files. */
static int hash_insert(struct cv_graph *g, int t)
{
	if (2 * (g->n_tensors + 1) > g->hash_cap) {
		int cap = g->hash_cap ? 2 * g->hash_cap : 256;
		int *h = malloc(cap * sizeof(int));

		if (!h)
			return -1;
		memset(h, 0xff, cap * sizeof(int));
		free(g->name_hash);
		g->name_hash = h;
		g->hash_cap = cap;
		for (int k = 0; k < g->n_tensors; k++)
			if (g->tensors[k].name && k != t)
				hash_insert(g, k);
	}
	uint32_t i = name_hash(g->tensors[t].name);

	while (g->name_hash[i & (g->hash_cap - 1)] >= 0)
		i++;
	g->name_hash[i & (g->hash_cap - 1)] = t;
	return 0;
}

static int add_tensor(struct cv_graph *g, const char *name)
{
	if (g->n_tensors >= CV_MAX_TENSORS)
		return -1;
	if (g->n_tensors == g->cap_tensors) {
		int cap = g->cap_tensors ? 2 * g->cap_tensors : 64;
		struct cv_tensor *t = realloc(g->tensors, cap * sizeof(*t));

		if (!t)
			return -1;
		g->tensors = t;
		g->cap_tensors = cap;
	}
	struct cv_tensor *t = &g->tensors[g->n_tensors];

	memset(t, 0, sizeof(*t));
	t->dtype = CV_F32;
	t->producer = -1;
	if (name && !(t->name = strdup(name)))
		return -1;
	if (name && hash_insert(g, g->n_tensors)) {
		free(t->name);
		return -1;
	}
	return g->n_tensors++;
}

int cv_graph_tensor(struct cv_graph *g, const char *name)
{
	int i = cv_graph_find(g, name);

	return i >= 0 ? i : add_tensor(g, name);
}

int cv_graph_anon_tensor(struct cv_graph *g)
{
	return add_tensor(g, NULL);
}

struct cv_node *cv_graph_add_node(struct cv_graph *g, const char *name, const char *op,
				  int n_in, int n_out)
{
	if (g->n_nodes >= CV_MAX_NODES)
		return NULL;
	if (g->n_nodes == g->cap_nodes) {
		int cap = g->cap_nodes ? 2 * g->cap_nodes : 32;
		struct cv_node *nn = realloc(g->nodes, cap * sizeof(*nn));

		if (!nn)
			return NULL;
		g->nodes = nn;
		g->cap_nodes = cap;
	}
	struct cv_node *n = &g->nodes[g->n_nodes];

	memset(n, 0, sizeof(*n));
	n->name = strdup(name);
	n->op_name = strdup(op);
	n->in = calloc(n_in ? n_in : 1, sizeof(int));
	n->out = calloc(n_out ? n_out : 1, sizeof(int));
	if (!n->name || !n->op_name || !n->in || !n->out) {
		node_free(n);
		return NULL;
	}
	n->op = cv_op_from_name(op);
	n->n_in = n_in;
	n->n_out = n_out;
	g->n_nodes++;
	return n;
}

/* Drops dead nodes; tensor indices stay valid. */
void cv_graph_compact(struct cv_graph *g)
{
	int w = 0;

	for (int r = 0; r < g->n_nodes; r++) {
		if (g->nodes[r].dead)
			node_free(&g->nodes[r]);
		else
			g->nodes[w++] = g->nodes[r];
	}
	g->n_nodes = w;
	cv_graph_link(g);
}

void cv_graph_link(struct cv_graph *g)
{
	for (int i = 0; i < g->n_tensors; i++)
		g->tensors[i].producer = -1;
	for (int i = 0; i < g->n_nodes; i++) {
		if (g->nodes[i].dead)
			continue;
		for (int o = 0; o < g->nodes[i].n_out; o++)
			if (g->nodes[i].out[o] >= 0)
				g->tensors[g->nodes[i].out[o]].producer = i;
	}
}

int cv_graph_consumers(const struct cv_graph *g, int tensor, int *first)
{
	int count = 0;

	*first = -1;
	for (int i = 0; i < g->n_nodes; i++) {
		const struct cv_node *n = &g->nodes[i];

		if (n->dead)
			continue;
		for (int k = 0; k < n->n_in; k++) {
			if (n->in[k] != tensor)
				continue;
			if (*first < 0)
				*first = i;
			count++;
		}
	}
	return count;
}

/* Each missing input named; returns how many. */
static int report_missing(const struct cv_graph *g, struct cv_diag *d)
{
	int bad = 0;

	for (int i = 0; i < g->n_nodes; i++) {
		const struct cv_node *n = &g->nodes[i];

		for (int k = 0; k < n->n_in && !n->dead; k++) {
			const struct cv_tensor *t = n->in[k] >= 0 ? &g->tensors[n->in[k]] : NULL;

			if (!t || t->is_input || t->data || t->producer >= 0)
				continue;
			cv_diag_node(d, n, "input '%s' is not produced by any node, "
				     "not a graph input and not an initializer",
				     t->name ? t->name : "?");
			bad++;
		}
	}
	return bad;
}

/*
 * Kahn's algorithm over live nodes, O(nodes + edges): a node is ready when
 * the producers of all its inputs have run. Nodes never ready are on a cycle
 * (or fed by one) and are named. Deterministic: the ready nodes in file
 * order, then breadth first.
 */
int cv_graph_topo_order(const struct cv_graph *g, int *order, struct cv_diag *d)
{
	int nn = g->n_nodes, edges = 0, head = 0, done = 0, bad;
	int *waiting = calloc(nn + 1, sizeof(int)), *first = calloc(nn + 2, sizeof(int));
	int *users = NULL;

	if (report_missing(g, d))
		bad = 1;
	else
		bad = !waiting || !first;
	for (int i = 0; i < nn && !bad; i++)
		for (int k = 0; k < g->nodes[i].n_in; k++) {
			int t = g->nodes[i].in[k], p = t >= 0 ? g->tensors[t].producer : -1;

			if (g->nodes[i].dead || p < 0 || g->tensors[t].data || g->tensors[t].is_input)
				continue;
			waiting[i]++;
			first[p + 1]++;	/* counts per producer, made offsets below */
			edges++;
		}
	if (!bad && !(users = malloc((edges + 1) * sizeof(int))))
		bad = 1;
	for (int i = 0; i < nn && !bad; i++)
		first[i + 1] += first[i];
	int *fill = bad ? NULL : calloc(nn + 1, sizeof(int));

	for (int i = 0; i < nn && fill; i++)
		for (int k = 0; k < g->nodes[i].n_in; k++) {
			int t = g->nodes[i].in[k], p = t >= 0 ? g->tensors[t].producer : -1;

			if (g->nodes[i].dead || p < 0 || g->tensors[t].data || g->tensors[t].is_input)
				continue;
			users[first[p] + fill[p]++] = i;
		}
	for (int i = 0; i < nn && fill; i++)
		if (!g->nodes[i].dead && !waiting[i])
			order[done++] = i;
	while (fill && head < done) {
		int p = order[head++];

		for (int u = first[p]; u < first[p + 1]; u++)
			if (--waiting[users[u]] == 0)
				order[done++] = users[u];
	}
	for (int i = 0; i < nn && fill; i++)
		if (!g->nodes[i].dead && waiting[i]) {
			cv_diag_node(d, &g->nodes[i], "on a cycle (or fed by one)");
			bad = 1;
		}
	if (!fill && !bad)
		bad = 1;
	if (bad && !d->count)
		cv_diag_add(d, "out of memory ordering the graph");
	free(fill);
	free(users);
	free(waiting);
	free(first);
	return bad ? -1 : done;
}

const struct cv_attr *cv_attr_find(const struct cv_node *n, const char *name)
{
	for (int i = 0; i < n->n_attrs; i++)
		if (!strcmp(n->attrs[i].name, name))
			return &n->attrs[i];
	return NULL;
}

int64_t cv_attr_int(const struct cv_node *n, const char *name, int64_t def)
{
	const struct cv_attr *a = cv_attr_find(n, name);

	return a && a->type == CV_ATTR_INT ? a->i : def;
}

float cv_attr_float(const struct cv_node *n, const char *name, float def)
{
	const struct cv_attr *a = cv_attr_find(n, name);

	return a && a->type == CV_ATTR_FLOAT ? a->f : def;
}

int cv_attr_ints(const struct cv_node *n, const char *name, int64_t *out, int max)
{
	const struct cv_attr *a = cv_attr_find(n, name);

	if (!a || a->type != CV_ATTR_INTS)
		return -1;
	int k = a->n_ints < max ? a->n_ints : max;

	memcpy(out, a->ints, k * sizeof(int64_t));
	return a->n_ints;
}

const char *cv_attr_string(const struct cv_node *n, const char *name, const char *def)
{
	const struct cv_attr *a = cv_attr_find(n, name);

	return a && a->type == CV_ATTR_STRING ? a->s : def;
}

size_t cv_dtype_size(enum cv_dtype dt)
{
	return dt == CV_I64 ? 8 : 4;
}

int64_t cv_tensor_elems(const struct cv_tensor *t)
{
	int64_t e = 1;

	for (int i = 0; i < t->rank; i++)
		e *= t->dims[i];
	return e;
}

int cv_tensor_set_shape(struct cv_tensor *t, int rank, const int64_t *dims)
{
	int64_t e = 1;

	if (rank < 0 || rank > CV_MAX_RANK)
		return -1;
	for (int i = 0; i < rank; i++) {
		if (dims[i] < 0 || dims[i] > CV_MAX_DIM)
			return -1;
		e *= dims[i];
		if (e > CV_MAX_ELEMS)
			return -1;
	}
	t->rank = rank;
	if (rank)
		memcpy(t->dims, dims, rank * sizeof(int64_t));
	t->shape_known = true;
	return 0;
}

int cv_tensor_set_const(struct cv_tensor *t, enum cv_dtype dt, int rank, const int64_t *dims,
			const void *data)
{
	if (cv_tensor_set_shape(t, rank, dims))
		return -1;
	size_t bytes = (size_t)cv_tensor_elems(t) * cv_dtype_size(dt);
	void *copy = malloc(bytes ? bytes : 1);

	if (!copy)
		return -1;
	if (bytes)
		memcpy(copy, data, bytes);
	free(t->data);
	t->data = copy;
	t->dtype = dt;
	return 0;
}

bool cv_tensor_is_const(const struct cv_graph *g, int idx)
{
	return idx >= 0 && g->tensors[idx].data != NULL;
}
