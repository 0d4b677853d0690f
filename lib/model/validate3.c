// SPDX-License-Identifier: MIT
/*
 * The rules of a 3.0 graph (Documentation/model-format.rst, "Version 3.0:
 * graphs", "Rules"), checked on a description: counts and caps, tensors,
 * names, the nodes' wiring and order, each op's attributes and shapes, then
 * the arrays. The description may come from anyone: every index is checked
 * before it is used, every product is bounded before it is formed.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph3.h"

#define PRODUCER_NONE	-1
#define PRODUCER_INPUT	-2

const char *rkaccel_graph_op_name(uint32_t op)
{
	static const char *const names[RKACCEL_GOP_COUNT] = {
		"conv", "dwconv", "groupconv", "fc", "maxpool", "avgpool",
		"global_avgpool", "add", "concat", "softmax", "dequantize",
	};

	return op < RKACCEL_GOP_COUNT ? names[op] : "?";
}

static bool scale_ok(float f)
{
	uint32_t u = g3_fbits(f), exp = (u >> 23) & 0xff;

	return !(u >> 31) && exp != 0 && exp != 0xff;
}

static bool finite(float f)
{
	return ((g3_fbits(f) >> 23) & 0xff) != 0xff;
}

static bool is_cpu_op(uint32_t op)
{
	return op == RKACCEL_GOP_SOFTMAX || op == RKACCEL_GOP_DEQUANTIZE;
}

static bool is_conv(uint32_t op)
{
	return op <= RKACCEL_GOP_GROUPCONV;
}

static bool is_window_pool(uint32_t op)
{
	return op == RKACCEL_GOP_MAXPOOL || op == RKACCEL_GOP_AVGPOOL;
}

bool g3_has_weights(uint32_t op)
{
	return op <= RKACCEL_GOP_FC;
}

static bool is_q8(uint32_t type)
{
	return type == RKACCEL_DTYPE_INT8 || type == RKACCEL_DTYPE_UINT8;
}

uint32_t g3_channels(const struct rkaccel_graph_tensor *t)
{
	return t->dims[t->n_dims - 1];
}

/* Elements after the batch: the K of a fully connected layer. */
static uint64_t per_slice(const struct rkaccel_graph_tensor *t)
{
	uint64_t n = 1;

	for (uint32_t i = 1; i < t->n_dims; i++)
		n *= t->dims[i];
	return n;
}

uint64_t g3_weights_size(const struct rkaccel_graph_desc *d, const struct rkaccel_graph_node *n)
{
	const struct rkaccel_graph_tensor *in = &d->tensors[n->inputs[0]];
	const struct rkaccel_graph_tensor *out = &d->tensors[n->output];

	if (n->op == RKACCEL_GOP_FC)
		return (uint64_t)g3_channels(out) * per_slice(in);
	if (!is_conv(n->op))
		return 0;
	return (uint64_t)g3_channels(out) * n->kernel_h * n->kernel_w *
	       (g3_channels(in) / n->groups);
}

uint64_t g3_bias_size(const struct rkaccel_graph_desc *d, const struct rkaccel_graph_node *n)
{
	return g3_has_weights(n->op) ? 4 * (uint64_t)g3_channels(&d->tensors[n->output]) : 0;
}

uint64_t g3_wscales_size(const struct rkaccel_graph_desc *d, const struct rkaccel_graph_node *n)
{
	return g3_bias_size(d, n);
}

/* "1x8x8x16" */
static const char *dims_str(const struct rkaccel_graph_tensor *t, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (uint32_t i = 0; i < t->n_dims && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, i ? "x%u" : "%u", t->dims[i]);
	return buf;
}

/* --- tensors ------------------------------------------------------------------ */

static int check_name(const struct rkaccel_graph_tensor *t, uint32_t i, char *msg, size_t msg_len)
{
	size_t len;

	if (!t->name)
		return model_bad(msg, msg_len, "tensor %u: name is NULL", i);
	len = strnlen(t->name, RKACCEL_GRAPH_MAX_NAME + 1);
	if (len < 1 || len > RKACCEL_GRAPH_MAX_NAME)
		return model_bad(msg, msg_len, "tensor %u: name length %zu%s out of range 1..%u", i,
			      len, len > RKACCEL_GRAPH_MAX_NAME ? "+" : "",
			      RKACCEL_GRAPH_MAX_NAME);
	for (size_t k = 0; k < len; k++)
		if ((unsigned char)t->name[k] < 0x21 || (unsigned char)t->name[k] > 0x7e)
			return model_bad(msg, msg_len,
				      "tensor %u: name byte %zu is 0x%02x, not printable ASCII without blanks",
				      i, k, (unsigned char)t->name[k]);
	return 0;
}

static int check_quant(const struct rkaccel_graph_tensor *t, uint32_t i, char *msg,
		       size_t msg_len)
{
	int32_t lo = t->type == RKACCEL_DTYPE_UINT8 ? 0 : -128;

	if (t->type == RKACCEL_DTYPE_FLOAT32) {
		if (g3_fbits(t->scale) || t->zero_point)
			return model_bad(msg, msg_len,
				      "tensor %u '%s': float32 takes scale 0 and zero point 0", i,
				      t->name);
		return 0;
	}
	if (!scale_ok(t->scale))
		return model_bad(msg, msg_len,
			      "tensor %u '%s': scale %g (bits 0x%08x) is not a positive normal finite number",
			      i, t->name, (double)t->scale, g3_fbits(t->scale));
	if (t->type == RKACCEL_DTYPE_INT32 ? t->zero_point != 0 :
	    t->zero_point < lo || t->zero_point > lo + 255)
		return model_bad(msg, msg_len, "tensor %u '%s': zero point %d out of range for its type",
			      i, t->name, t->zero_point);
	return 0;
}

static int check_tensor(const struct rkaccel_graph_desc *d, uint32_t i, char *msg, size_t msg_len)
{
	static const uint32_t elem[] = { 0, 1, 1, 4, 4 };
	const struct rkaccel_graph_tensor *t = &d->tensors[i];
	uint64_t bytes;
	int ret = check_name(t, i, msg, msg_len);

	if (ret)
		return ret;
	if (t->type < RKACCEL_DTYPE_INT8 || t->type > RKACCEL_DTYPE_FLOAT32)
		return model_bad(msg, msg_len, "tensor %u '%s': unknown type %u", i, t->name, t->type);
	if (t->n_dims < 1 || t->n_dims > 4)
		return model_bad(msg, msg_len, "tensor %u '%s': n_dims %u out of range 1..4", i,
			      t->name, t->n_dims);
	bytes = elem[t->type];
	for (uint32_t k = 0; k < 4; k++) {
		if (k >= t->n_dims ? t->dims[k] != 0 :
		    t->dims[k] < 1 || t->dims[k] > RKACCEL_GRAPH_MAX_DIM)
			return model_bad(msg, msg_len, "tensor %u '%s': dims[%u] %u out of range %s", i,
				      t->name, k, t->dims[k],
				      k >= t->n_dims ? "(0 beyond n_dims)" : "1..65536");
		/* at most 2^31 times 2^16 before the test: no wrap */
		if (k < t->n_dims)
			bytes *= t->dims[k];
		if (bytes > RKACCEL_GRAPH_MAX_TENSOR_BYTES)
			return model_bad(msg, msg_len, "tensor %u '%s': more than %u bytes", i, t->name,
				      RKACCEL_GRAPH_MAX_TENSOR_BYTES);
	}
	if (t->dims[0] != d->batch)
		return model_bad(msg, msg_len, "tensor %u '%s': dims[0] %u is not the batch %u", i,
			      t->name, t->dims[0], d->batch);
	return check_quant(t, i, msg, msg_len);
}

/* qsort() has no context argument: the comparator's tensors, per thread. */
static __thread const struct rkaccel_graph_tensor *sort_base;

static int cmp_names(const void *a, const void *b)
{
	int r = strcmp(sort_base[*(const uint32_t *)a].name, sort_base[*(const uint32_t *)b].name);

	return r ? r : (*(const uint32_t *)a > *(const uint32_t *)b) -
		       (*(const uint32_t *)a < *(const uint32_t *)b);
}

/* Names unique: sorted, then neighbours compared. */
static int check_unique_names(const struct rkaccel_graph_desc *d, char *msg, size_t msg_len)
{
	uint32_t *idx = malloc(d->num_tensors * sizeof(*idx));
	int ret = 0;

	if (!idx) {
		model_bad(msg, msg_len, "out of memory");
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < d->num_tensors; i++)
		idx[i] = i;
	sort_base = d->tensors;
	qsort(idx, d->num_tensors, sizeof(*idx), cmp_names);
	for (uint32_t i = 1; i < d->num_tensors && !ret; i++)
		if (!strcmp(d->tensors[idx[i - 1]].name, d->tensors[idx[i]].name))
			ret = model_bad(msg, msg_len, "tensors %u and %u have the same name '%s'",
				     idx[i - 1], idx[i], d->tensors[idx[i]].name);
	free(idx);
	return ret;
}

/* --- wiring and order ------------------------------------------------------------ */

/*
 * Some node's input comes from itself or a later node: tell a cycle from mere
 * disorder. Kahn's algorithm over the node-to-node edges; on a cycle, walk
 * back from a node it left to land on the cycle and name that node.
 */
static int order_error(const struct rkaccel_graph_desc *d, const int32_t *producer,
		       uint32_t node, uint32_t tensor, char *msg, size_t msg_len)
{
	uint32_t *indeg = calloc(d->num_nodes, sizeof(*indeg));
	uint32_t *queue = malloc(d->num_nodes * sizeof(*queue));
	uint32_t *first = calloc((size_t)d->num_nodes + 1, sizeof(*first));
	uint32_t *next = NULL, head = 0, tail = 0, edges = 0;
	int ret = -ENOMEM;

	for (uint32_t i = 0; i < d->num_nodes; i++)
		edges += d->nodes[i].num_inputs;
	next = malloc((edges ? edges : 1) * sizeof(*next));
	if (!indeg || !queue || !first || !next)
		goto out;
	/* consumers of node p: first[p]..first[p + 1] of next[] (counting sort) */
	for (uint32_t i = 0; i < d->num_nodes; i++)
		for (uint32_t k = 0; k < d->nodes[i].num_inputs; k++)
			if (producer[d->nodes[i].inputs[k]] >= 0) {
				first[producer[d->nodes[i].inputs[k]] + 1]++;
				indeg[i]++;
			}
	for (uint32_t p = 0; p < d->num_nodes; p++)
		first[p + 1] += first[p];
	for (uint32_t i = 0, *fill = queue; i < d->num_nodes; i++)
		fill[i] = first[i];	/* queue doubles as the fill cursor here */
	for (uint32_t i = 0; i < d->num_nodes; i++)
		for (uint32_t k = 0; k < d->nodes[i].num_inputs; k++)
			if (producer[d->nodes[i].inputs[k]] >= 0)
				next[queue[producer[d->nodes[i].inputs[k]]]++] = i;
	for (uint32_t i = 0; i < d->num_nodes; i++)
		if (!indeg[i])
			queue[tail++] = i;
	while (head < tail) {
		uint32_t p = queue[head++];

		for (uint32_t e = first[p]; e < first[p + 1]; e++)
			if (!--indeg[next[e]])
				queue[tail++] = next[e];
	}
	if (tail == d->num_nodes) {
		ret = model_bad(msg, msg_len,
			     "node %u (%s): input tensor %u '%s' is the output of node %d, which is not before it: nodes must be in topological order",
			     node, rkaccel_graph_op_name(d->nodes[node].op), tensor,
			     d->tensors[tensor].name, producer[tensor]);
	} else {
		uint32_t at = 0;

		while (!indeg[at])
			at++;
		/* each step goes to a producer still blocked; n steps end on the cycle */
		for (uint32_t s = 0; s < d->num_nodes; s++) {
			const struct rkaccel_graph_node *n = &d->nodes[at];

			for (uint32_t k = 0; k < n->num_inputs; k++) {
				int32_t p = producer[n->inputs[k]];

				if (p >= 0 && indeg[p]) {
					at = (uint32_t)p;
					break;
				}
			}
		}
		ret = model_bad(msg, msg_len, "node %u (%s): on a cycle: the graph is not acyclic",
			     at, rkaccel_graph_op_name(d->nodes[at].op));
	}
out:
	free(indeg);
	free(queue);
	free(first);
	free(next);
	return ret;
}

/* Node outputs and graph inputs: every tensor made once, by one of them. */
static int check_producers(const struct rkaccel_graph_desc *d, int32_t *producer, char *msg,
			   size_t msg_len)
{
	uint64_t edges = 0;

	for (uint32_t t = 0; t < d->num_tensors; t++)
		producer[t] = PRODUCER_NONE;
	for (uint32_t i = 0; i < d->num_inputs; i++) {
		const struct rkaccel_graph_input *in = &d->inputs[i];

		if (in->tensor >= d->num_tensors)
			return model_bad(msg, msg_len, "input %u: tensor %u out of range (%u tensors)",
				      i, in->tensor, d->num_tensors);
		if (producer[in->tensor] != PRODUCER_NONE)
			return model_bad(msg, msg_len, "input %u: tensor %u '%s' is listed twice", i,
				      in->tensor, d->tensors[in->tensor].name);
		producer[in->tensor] = PRODUCER_INPUT;
	}
	for (uint32_t i = 0; i < d->num_nodes; i++) {
		const struct rkaccel_graph_node *n = &d->nodes[i];

		if (n->op >= RKACCEL_GOP_COUNT)
			return model_bad(msg, msg_len, "node %u: unknown op %u", i, n->op);
		if (n->num_inputs < 1 || n->num_inputs > RKACCEL_GRAPH_MAX_NODE_INPUTS || !n->inputs)
			return model_bad(msg, msg_len, "node %u (%s): %u inputs%s, want 1..%u", i,
				      rkaccel_graph_op_name(n->op), n->num_inputs,
				      n->inputs ? "" : " (NULL)", RKACCEL_GRAPH_MAX_NODE_INPUTS);
		edges += n->num_inputs;
		if (edges > RKACCEL_GRAPH_MAX_EDGES)
			return model_bad(msg, msg_len, "node %u: more than %u node inputs in all", i,
				      RKACCEL_GRAPH_MAX_EDGES);
		if (n->output >= d->num_tensors)
			return model_bad(msg, msg_len, "node %u (%s): output tensor %u out of range (%u tensors)",
				      i, rkaccel_graph_op_name(n->op), n->output, d->num_tensors);
		if (producer[n->output] == PRODUCER_INPUT)
			return model_bad(msg, msg_len, "node %u (%s): output tensor %u '%s' is a graph input",
				      i, rkaccel_graph_op_name(n->op), n->output,
				      d->tensors[n->output].name);
		if (producer[n->output] != PRODUCER_NONE)
			return model_bad(msg, msg_len,
				      "node %u (%s): output tensor %u '%s' is already the output of node %d",
				      i, rkaccel_graph_op_name(n->op), n->output,
				      d->tensors[n->output].name, producer[n->output]);
		producer[n->output] = (int32_t)i;
	}
	return 0;
}

/* Every node input made before the node; every tensor used. */
static int check_order(const struct rkaccel_graph_desc *d, const int32_t *producer,
		       uint8_t *used, char *msg, size_t msg_len)
{
	for (uint32_t i = 0; i < d->num_nodes; i++) {
		const struct rkaccel_graph_node *n = &d->nodes[i];

		for (uint32_t k = 0; k < n->num_inputs; k++) {
			uint32_t t = n->inputs[k];

			if (t >= d->num_tensors)
				return model_bad(msg, msg_len,
					      "node %u (%s): input %u: tensor %u out of range (%u tensors)",
					      i, rkaccel_graph_op_name(n->op), k, t, d->num_tensors);
			if (producer[t] == PRODUCER_NONE)
				return model_bad(msg, msg_len,
					      "node %u (%s): input tensor %u '%s' is made by no node and is no graph input",
					      i, rkaccel_graph_op_name(n->op), t, d->tensors[t].name);
		}
	}
	for (uint32_t i = 0; i < d->num_nodes; i++) {
		const struct rkaccel_graph_node *n = &d->nodes[i];

		for (uint32_t k = 0; k < n->num_inputs; k++) {
			uint32_t t = n->inputs[k];

			if (producer[t] >= (int32_t)i)
				return order_error(d, producer, i, t, msg, msg_len);
			used[t] = 1;
		}
	}
	for (uint32_t i = 0; i < d->num_outputs; i++) {
		uint32_t t = d->outputs[i];

		if (t >= d->num_tensors)
			return model_bad(msg, msg_len, "output %u: tensor %u out of range (%u tensors)",
				      i, t, d->num_tensors);
		if (used[t] & 2)
			return model_bad(msg, msg_len, "output %u: tensor %u '%s' is listed twice", i, t,
				      d->tensors[t].name);
		if (producer[t] < 0)
			return model_bad(msg, msg_len, "output %u: tensor %u '%s' is made by no node", i,
				      t, d->tensors[t].name);
		used[t] |= 2;
	}
	for (uint32_t t = 0; t < d->num_tensors; t++) {
		if (producer[t] == PRODUCER_NONE)
			return model_bad(msg, msg_len, "tensor %u '%s' is made by no node and is no graph input",
				      t, d->tensors[t].name);
		if (!used[t])
			return model_bad(msg, msg_len,
				      "tensor %u '%s' is used by no node and is no graph output", t,
				      d->tensors[t].name);
	}
	return 0;
}

/* --- ops ----------------------------------------------------------------------- */

/* Output size of a window over @in; 0 when none fits. PyTorch's ceil mode. */
static uint32_t window_out(uint32_t in, uint32_t k, uint32_t dil, uint32_t p0, uint32_t p1,
			   uint32_t s, bool ceil_mode)
{
	uint64_t span = (uint64_t)in + p0 + p1, keff = (uint64_t)(k - 1) * dil + 1, out;

	if (span < keff)
		return 0;
	out = ceil_mode ? (span - keff + s - 1) / s + 1 : (span - keff) / s + 1;
	/* the last window must start inside the input or its leading padding */
	if (ceil_mode && (out - 1) * s >= (uint64_t)in + p0)
		out--;
	return (uint32_t)out;
}

#define NODE_BAD(fmt, ...) \
	model_bad(msg, msg_len, "node %u (%s): " fmt, i, rkaccel_graph_op_name(n->op), ##__VA_ARGS__)

static bool window_fields_zero(const struct rkaccel_graph_node *n)
{
	return !(n->kernel_h | n->kernel_w | n->stride_h | n->stride_w | n->pad_top |
		 n->pad_left | n->pad_bottom | n->pad_right | n->dilation_h | n->dilation_w |
		 n->groups);
}

/* The fields an op does not take are zero: flags, axis, activation, weight scale. */
static int check_unused(const struct rkaccel_graph_node *n, uint32_t i, char *msg,
			size_t msg_len)
{
	uint32_t flags_ok = n->op == RKACCEL_GOP_AVGPOOL ? RKACCEL_NODE_CEIL_MODE |
			    RKACCEL_NODE_COUNT_INCLUDE_PAD :
			    n->op == RKACCEL_GOP_MAXPOOL ? RKACCEL_NODE_CEIL_MODE : 0;
	bool acts = g3_has_weights(n->op) || n->op == RKACCEL_GOP_ADD;

	if (n->flags & ~flags_ok)
		return NODE_BAD("flags 0x%x not allowed", n->flags & ~flags_ok);
	if (n->op != RKACCEL_GOP_CONCAT && n->op != RKACCEL_GOP_SOFTMAX && n->axis)
		return NODE_BAD("axis %u on an op without one", n->axis);
	if (!is_conv(n->op) && !is_window_pool(n->op) && !window_fields_zero(n))
		return NODE_BAD("kernel, stride, padding, dilation or groups on an op without a window");
	if (!g3_has_weights(n->op) && g3_fbits(n->weight_scale))
		return NODE_BAD("weight_scale on an op without weights");
	if (n->act > RKACCEL_ACT_LEAKY)
		return NODE_BAD("unknown activation %u", n->act);
	if (n->act && !acts)
		return NODE_BAD("activation %u on an op without one", n->act);
	if (n->act == RKACCEL_ACT_CLIP) {
		if (!finite(n->clip_min) || !finite(n->clip_max) || !(n->clip_min < n->clip_max) ||
		    g3_fbits(n->leaky_slope))
			return NODE_BAD("clip %g..%g is not a finite range (or a leaky slope is set)",
					(double)n->clip_min, (double)n->clip_max);
	} else if (n->act == RKACCEL_ACT_LEAKY) {
		if (!finite(n->leaky_slope) || !(n->leaky_slope > 0.0f) ||
		    !(n->leaky_slope < 1.0f) || g3_fbits(n->clip_min) || g3_fbits(n->clip_max))
			return NODE_BAD("leaky slope %g is not in (0, 1) (or a clip is set)",
					(double)n->leaky_slope);
	} else if (g3_fbits(n->clip_min) || g3_fbits(n->clip_max) || g3_fbits(n->leaky_slope)) {
		return NODE_BAD("clip or leaky slope without that activation");
	}
	return 0;
}

static int want_inputs(const struct rkaccel_graph_node *n, uint32_t i, uint32_t lo, uint32_t hi,
		       char *msg, size_t msg_len)
{
	if (n->num_inputs < lo || n->num_inputs > hi)
		return NODE_BAD("%u inputs, want %u..%u", n->num_inputs, lo, hi);
	return 0;
}

/* Kernel, stride, dilation, padding; the output's height and width. */
static int check_window(const struct rkaccel_graph_desc *d, const struct rkaccel_graph_node *n,
			uint32_t i, uint32_t kmax, uint32_t smax, uint32_t dmax, char *msg,
			size_t msg_len)
{
	const struct rkaccel_graph_tensor *in = &d->tensors[n->inputs[0]];
	const struct rkaccel_graph_tensor *out = &d->tensors[n->output];
	bool ceil_mode = n->flags & RKACCEL_NODE_CEIL_MODE;
	uint32_t oh, ow;
	char a[48], b[48];

	if (in->n_dims != 4 || out->n_dims != 4)
		return NODE_BAD("input '%s' and output '%s' must be NHWC (4 dims)", in->name,
				out->name);
	if (n->kernel_h < 1 || n->kernel_h > kmax || n->kernel_w < 1 || n->kernel_w > kmax)
		return NODE_BAD("kernel %ux%u out of range 1..%u", n->kernel_h, n->kernel_w, kmax);
	if (n->stride_h < 1 || n->stride_h > smax || n->stride_w < 1 || n->stride_w > smax)
		return NODE_BAD("stride %ux%u out of range 1..%u", n->stride_h, n->stride_w, smax);
	if (n->dilation_h < 1 || n->dilation_h > dmax || n->dilation_w < 1 ||
	    n->dilation_w > dmax)
		return NODE_BAD("dilation %ux%u out of range 1..%u", n->dilation_h, n->dilation_w,
				dmax);
	if (n->pad_top > (n->kernel_h - 1) * n->dilation_h ||
	    n->pad_bottom > (n->kernel_h - 1) * n->dilation_h ||
	    n->pad_left > (n->kernel_w - 1) * n->dilation_w ||
	    n->pad_right > (n->kernel_w - 1) * n->dilation_w)
		return NODE_BAD("padding %u,%u,%u,%u (top, left, bottom, right) not below the kernel",
				n->pad_top, n->pad_left, n->pad_bottom, n->pad_right);
	oh = window_out(in->dims[1], n->kernel_h, n->dilation_h, n->pad_top, n->pad_bottom,
			n->stride_h, ceil_mode);
	ow = window_out(in->dims[2], n->kernel_w, n->dilation_w, n->pad_left, n->pad_right,
			n->stride_w, ceil_mode);
	if (!oh || !ow)
		return NODE_BAD("the window does not fit the %s input '%s'",
				dims_str(in, a, sizeof(a)), in->name);
	if (out->dims[1] != oh || out->dims[2] != ow)
		return NODE_BAD("output '%s' is %s, the op gives %ux%u pixels from %s",
				out->name, dims_str(out, a, sizeof(a)), oh, ow,
				dims_str(in, b, sizeof(b)));
	return 0;
}

static int check_conv(const struct rkaccel_graph_desc *d, const struct rkaccel_graph_node *n,
		      uint32_t i, char *msg, size_t msg_len)
{
	const struct rkaccel_graph_tensor *in = &d->tensors[n->inputs[0]];
	const struct rkaccel_graph_tensor *out = &d->tensors[n->output];
	uint32_t cin, cout;
	int ret = want_inputs(n, i, 1, 1, msg, msg_len);

	if (!ret)
		ret = check_window(d, n, i, 11, 4, 4, msg, msg_len);
	if (ret)
		return ret;
	cin = in->dims[3];
	cout = out->dims[3];
	if (n->op == RKACCEL_GOP_CONV && n->groups != 1)
		return NODE_BAD("groups %u, a plain convolution has 1", n->groups);
	if (n->op == RKACCEL_GOP_DWCONV && (n->groups != cin || cout != cin))
		return NODE_BAD("groups %u, input channels %u, output channels %u: depthwise needs all equal",
				n->groups, cin, cout);
	if (n->op == RKACCEL_GOP_GROUPCONV &&
	    (n->groups < 2 || cin % n->groups || cout % n->groups))
		return NODE_BAD("groups %u must be 2 or more and divide %u input and %u output channels",
				n->groups, cin, cout);
	return 0;
}

static int check_fc(const struct rkaccel_graph_desc *d, const struct rkaccel_graph_node *n,
		    uint32_t i, char *msg, size_t msg_len)
{
	const struct rkaccel_graph_tensor *in = &d->tensors[n->inputs[0]];
	const struct rkaccel_graph_tensor *out = &d->tensors[n->output];
	int ret = want_inputs(n, i, 1, 1, msg, msg_len);

	if (ret)
		return ret;
	if (in->n_dims < 2 || out->n_dims != 2)
		return NODE_BAD("input '%s' needs 2..4 dims and output '%s' 2 ([batch, out])",
				in->name, out->name);
	return 0;
}

/* A pool or concat keeps its input's type, scale and zero point. */
static int same_quant(const struct rkaccel_graph_tensor *a, const struct rkaccel_graph_tensor *b)
{
	return a->type == b->type && g3_fbits(a->scale) == g3_fbits(b->scale) &&
	       a->zero_point == b->zero_point;
}

static int check_pool(const struct rkaccel_graph_desc *d, const struct rkaccel_graph_node *n,
		      uint32_t i, char *msg, size_t msg_len)
{
	const struct rkaccel_graph_tensor *in = &d->tensors[n->inputs[0]];
	const struct rkaccel_graph_tensor *out = &d->tensors[n->output];
	int ret = want_inputs(n, i, 1, 1, msg, msg_len);

	if (ret)
		return ret;
	if (n->op == RKACCEL_GOP_GLOBAL_AVGPOOL) {
		if (in->n_dims != 4 || out->n_dims != 4 || out->dims[1] != 1 || out->dims[2] != 1)
			return NODE_BAD("input '%s' must be NHWC and output '%s' Nx1x1xC", in->name,
					out->name);
	} else {
		if (n->groups)
			return NODE_BAD("groups %u on a pool", n->groups);
		ret = check_window(d, n, i, 16, 16, 1, msg, msg_len);
		if (ret)
			return ret;
	}
	if (out->dims[3] != in->dims[3])
		return NODE_BAD("output '%s' has %u channels, input '%s' %u", out->name,
				out->dims[3], in->name, in->dims[3]);
	if (!is_q8(in->type) || !same_quant(in, out))
		return NODE_BAD("output '%s' must keep the int8/uint8 type, scale and zero point of input '%s'",
				out->name, in->name);
	return 0;
}

static bool same_dims(const struct rkaccel_graph_tensor *a, const struct rkaccel_graph_tensor *b)
{
	return a->n_dims == b->n_dims && !memcmp(a->dims, b->dims, sizeof(a->dims));
}

static int check_add(const struct rkaccel_graph_desc *d, const struct rkaccel_graph_node *n,
		     uint32_t i, char *msg, size_t msg_len)
{
	const struct rkaccel_graph_tensor *out = &d->tensors[n->output];
	char a[48], b[48];
	int ret = want_inputs(n, i, 2, 2, msg, msg_len);

	if (ret)
		return ret;
	if (!is_q8(out->type))
		return NODE_BAD("output '%s' must be int8 or uint8", out->name);
	for (uint32_t k = 0; k < 2; k++) {
		const struct rkaccel_graph_tensor *in = &d->tensors[n->inputs[k]];

		/* float32 only comes from CPU ops, refused before as inputs of the NPU */
		if (!same_dims(in, out))
			return NODE_BAD("input '%s' is %s, the output '%s' %s", in->name,
					dims_str(in, a, sizeof(a)), out->name,
					dims_str(out, b, sizeof(b)));
	}
	return 0;
}

static int check_concat(const struct rkaccel_graph_desc *d, const struct rkaccel_graph_node *n,
			uint32_t i, char *msg, size_t msg_len)
{
	const struct rkaccel_graph_tensor *out = &d->tensors[n->output];
	uint64_t sum = 0;
	char a[48], b[48];
	int ret = want_inputs(n, i, 2, RKACCEL_GRAPH_MAX_NODE_INPUTS, msg, msg_len);

	if (ret)
		return ret;
	if (n->axis < 1 || n->axis >= out->n_dims)
		return NODE_BAD("axis %u out of range 1..%u", n->axis, out->n_dims - 1);
	if (!is_q8(out->type))
		return NODE_BAD("output '%s' must be int8 or uint8", out->name);
	for (uint32_t k = 0; k < n->num_inputs; k++) {
		const struct rkaccel_graph_tensor *in = &d->tensors[n->inputs[k]];

		if (!same_quant(in, out))
			return NODE_BAD("input '%s' differs from the output '%s' in type, scale or zero point",
					in->name, out->name);
		if (in->n_dims != out->n_dims)
			return NODE_BAD("input '%s' has %u dims, the output %u", in->name,
					in->n_dims, out->n_dims);
		for (uint32_t x = 0; x < out->n_dims; x++)
			if (x != n->axis && in->dims[x] != out->dims[x])
				return NODE_BAD("input '%s' is %s, the output '%s' %s: only axis %u may differ",
						in->name, dims_str(in, a, sizeof(a)), out->name,
						dims_str(out, b, sizeof(b)), n->axis);
		sum += in->dims[n->axis];
	}
	if (sum != out->dims[n->axis])
		return NODE_BAD("inputs add up to %llu along axis %u, the output '%s' has %u",
				(unsigned long long)sum, n->axis, out->name, out->dims[n->axis]);
	return 0;
}

static int check_cpu(const struct rkaccel_graph_desc *d, const struct rkaccel_graph_node *n,
		     uint32_t i, char *msg, size_t msg_len)
{
	const struct rkaccel_graph_tensor *in = &d->tensors[n->inputs[0]];
	const struct rkaccel_graph_tensor *out = &d->tensors[n->output];
	int ret = want_inputs(n, i, 1, 1, msg, msg_len);

	if (ret)
		return ret;
	if (out->type != RKACCEL_DTYPE_FLOAT32 || !same_dims(in, out))
		return NODE_BAD("output '%s' must be float32 of the input's dims", out->name);
	if (n->op == RKACCEL_GOP_SOFTMAX) {
		if (in->type == RKACCEL_DTYPE_INT32)
			return NODE_BAD("input '%s' is int32", in->name);
		if (n->axis < 1 || n->axis >= in->n_dims)
			return NODE_BAD("axis %u out of range 1..%u", n->axis, in->n_dims - 1);
	} else if (in->type == RKACCEL_DTYPE_FLOAT32) {
		return NODE_BAD("input '%s' is already float32", in->name);
	}
	return 0;
}

/* Types common to the NPU's ops; CPU ops only behind them. */
static int check_npu_io(const struct rkaccel_graph_desc *d, const struct rkaccel_graph_node *n,
			uint32_t i, const int32_t *producer, char *msg, size_t msg_len)
{
	const struct rkaccel_graph_tensor *out = &d->tensors[n->output];

	for (uint32_t k = 0; k < n->num_inputs; k++) {
		int32_t p = producer[n->inputs[k]];

		if (p >= 0 && is_cpu_op(d->nodes[p].op))
			return NODE_BAD("input '%s' comes from the CPU op of node %d: CPU ops go at the outputs only",
					d->tensors[n->inputs[k]].name, p);
	}
	if (g3_has_weights(n->op)) {
		if (!is_q8(d->tensors[n->inputs[0]].type))
			return NODE_BAD("input '%s' must be int8 or uint8",
					d->tensors[n->inputs[0]].name);
		if (out->type == RKACCEL_DTYPE_FLOAT32)
			return NODE_BAD("output '%s' is float32", out->name);
		if (!scale_ok(n->weight_scale))
			return NODE_BAD("weight_scale %g is not a positive normal finite number",
					(double)n->weight_scale);
	}
	return 0;
}

static int check_node(const struct rkaccel_graph_desc *d, uint32_t i, const int32_t *producer,
		      char *msg, size_t msg_len)
{
	const struct rkaccel_graph_node *n = &d->nodes[i];
	int ret = check_unused(n, i, msg, msg_len);

	if (!ret && !is_cpu_op(n->op))
		ret = check_npu_io(d, n, i, producer, msg, msg_len);
	if (ret)
		return ret;
	switch (n->op) {
	case RKACCEL_GOP_CONV:
	case RKACCEL_GOP_DWCONV:
	case RKACCEL_GOP_GROUPCONV:
		return check_conv(d, n, i, msg, msg_len);
	case RKACCEL_GOP_FC:
		return check_fc(d, n, i, msg, msg_len);
	case RKACCEL_GOP_MAXPOOL:
	case RKACCEL_GOP_AVGPOOL:
	case RKACCEL_GOP_GLOBAL_AVGPOOL:
		return check_pool(d, n, i, msg, msg_len);
	case RKACCEL_GOP_ADD:
		return check_add(d, n, i, msg, msg_len);
	case RKACCEL_GOP_CONCAT:
		return check_concat(d, n, i, msg, msg_len);
	default:
		return check_cpu(d, n, i, msg, msg_len);
	}
}

/* --- the whole ----------------------------------------------------------------- */

static int check_counts(const struct rkaccel_graph_desc *d, char *msg, size_t msg_len)
{
	if (d->batch < 1 || d->batch > RKACCEL_GRAPH_MAX_BATCH)
		return model_bad(msg, msg_len, "batch %u out of range 1..%u", d->batch,
			      RKACCEL_GRAPH_MAX_BATCH);
	if (d->num_tensors < 2 || d->num_tensors > RKACCEL_GRAPH_MAX_TENSORS || !d->tensors)
		return model_bad(msg, msg_len, "num_tensors %u out of range 2..%u (or tensors NULL)",
			      d->num_tensors, RKACCEL_GRAPH_MAX_TENSORS);
	if (d->num_nodes < 1 || d->num_nodes > RKACCEL_GRAPH_MAX_NODES || !d->nodes)
		return model_bad(msg, msg_len, "num_nodes %u out of range 1..%u (or nodes NULL)",
			      d->num_nodes, RKACCEL_GRAPH_MAX_NODES);
	if (d->num_inputs < 1 || d->num_inputs > RKACCEL_GRAPH_MAX_IO || !d->inputs)
		return model_bad(msg, msg_len, "num_inputs %u out of range 1..%u (or inputs NULL)",
			      d->num_inputs, RKACCEL_GRAPH_MAX_IO);
	if (d->num_outputs < 1 || d->num_outputs > RKACCEL_GRAPH_MAX_IO || !d->outputs)
		return model_bad(msg, msg_len, "num_outputs %u out of range 1..%u (or outputs NULL)",
			      d->num_outputs, RKACCEL_GRAPH_MAX_IO);
	if (d->custom && strnlen(d->custom, RKACCEL_GRAPH_MAX_CUSTOM + 1) > RKACCEL_GRAPH_MAX_CUSTOM)
		return model_bad(msg, msg_len, "custom string longer than %u bytes",
			      RKACCEL_GRAPH_MAX_CUSTOM);
	return 0;
}

static int check_inputs(const struct rkaccel_graph_desc *d, char *msg, size_t msg_len)
{
	for (uint32_t i = 0; i < d->num_inputs; i++) {
		const struct rkaccel_graph_input *in = &d->inputs[i];
		const struct rkaccel_graph_tensor *t = &d->tensors[in->tensor];

		if (!is_q8(t->type))
			return model_bad(msg, msg_len, "input %u: tensor '%s' must be int8 or uint8", i,
				      t->name);
		if (in->channel_order > RKACCEL_CHANNELS_BGR)
			return model_bad(msg, msg_len, "input %u: unknown channel order %u", i,
				      in->channel_order);
		if (in->channel_order && (t->n_dims != 4 || t->dims[3] != 3))
			return model_bad(msg, msg_len,
				      "input %u: channel order RGB/BGR needs an NHWC image of 3 channels", i);
	}
	return 0;
}

int g3_check_structure(const struct rkaccel_graph_desc *d, char *msg, size_t msg_len)
{
	uint64_t weight_bytes = 0;
	int32_t *producer;
	uint8_t *used;
	int ret;

	if (msg && msg_len)
		msg[0] = '\0';
	if (!d)
		return model_bad(msg, msg_len, "graph description is NULL");
	ret = check_counts(d, msg, msg_len);
	for (uint32_t t = 0; !ret && t < d->num_tensors; t++)
		ret = check_tensor(d, t, msg, msg_len);
	if (!ret)
		ret = check_unique_names(d, msg, msg_len);
	if (ret)
		return ret;
	producer = malloc(d->num_tensors * sizeof(*producer));
	used = calloc(d->num_tensors, 1);
	if (!producer || !used) {
		free(producer);
		free(used);
		model_bad(msg, msg_len, "out of memory");
		return -ENOMEM;
	}
	ret = check_producers(d, producer, msg, msg_len);
	if (!ret)
		ret = check_order(d, producer, used, msg, msg_len);
	if (!ret)
		ret = check_inputs(d, msg, msg_len);
	for (uint32_t i = 0; !ret && i < d->num_nodes; i++) {
		ret = check_node(d, i, producer, msg, msg_len);
		weight_bytes += ret ? 0 : g3_weights_size(d, &d->nodes[i]);
	}
	if (!ret && weight_bytes > RKACCEL_MODEL_MAX_WEIGHT_BYTES)
		ret = model_bad(msg, msg_len, "total weights %llu bytes exceed the limit of %u",
			     (unsigned long long)weight_bytes, RKACCEL_MODEL_MAX_WEIGHT_BYTES);
	free(producer);
	free(used);
	return ret;
}

int g3_check_arrays(const struct rkaccel_graph_desc *d, char *msg, size_t msg_len)
{
	for (uint32_t i = 0; i < d->num_nodes; i++) {
		const struct rkaccel_graph_node *n = &d->nodes[i];
		uint32_t cout = g3_channels(&d->tensors[n->output]);

		if (!g3_has_weights(n->op)) {
			if (n->weights || n->bias || n->weight_scales)
				return NODE_BAD("weights, bias or weight_scales on an op without weights");
			continue;
		}
		if (!n->weights || !n->bias)
			return NODE_BAD("weights or bias is NULL");
		for (uint32_t c = 0; c < cout; c++)
			if (n->bias[c] < -RKACCEL_MODEL_MAX_ABS_BIAS ||
			    n->bias[c] > RKACCEL_MODEL_MAX_ABS_BIAS)
				return NODE_BAD("bias[%u] = %d out of range -%d..%d", c, n->bias[c],
						RKACCEL_MODEL_MAX_ABS_BIAS, RKACCEL_MODEL_MAX_ABS_BIAS);
		for (uint32_t c = 0; n->weight_scales && c < cout; c++)
			if (!scale_ok(n->weight_scales[c]) || n->weight_scales[c] > n->weight_scale)
				return NODE_BAD("weight_scales[%u] %g is not a positive normal number up to weight_scale",
						c, (double)n->weight_scales[c]);
	}
	for (uint32_t i = 0; i < d->num_inputs; i++) {
		const struct rkaccel_graph_input *in = &d->inputs[i];
		uint32_t c = g3_channels(&d->tensors[in->tensor]);

		if (!in->mean != !in->std)
			return model_bad(msg, msg_len, "input %u: mean and std go together", i);
		for (uint32_t k = 0; in->mean && k < c; k++)
			if (!finite(in->mean[k]) || !scale_ok(in->std[k]))
				return model_bad(msg, msg_len,
					      "input %u: channel %u: mean %g must be finite, std %g positive normal",
					      i, k, (double)in->mean[k], (double)in->std[k]);
	}
	return 0;
}

int rkaccel_graph_validate(const struct rkaccel_graph_desc *desc, char *msg, size_t msg_len)
{
	int ret = g3_check_structure(desc, msg, msg_len);

	return ret ? ret : g3_check_arrays(desc, msg, msg_len);
}
