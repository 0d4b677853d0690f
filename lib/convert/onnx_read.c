// SPDX-License-Identifier: MIT
/*
 * ONNX reader: protobuf-c decodes the file (it bounds-checks the wire
 * format), this file turns the decoded model into a cv_graph and refuses what
 * an untrusted file could use to hurt us or mislead the user: absurd dims,
 * data whose size does not match its shape, NaN/Inf weights, external data,
 * tensors produced twice, opsets we do not follow.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "onnx.pb-c.h"

static int check_dims(const char *what, const char *name, size_t rank, const int64_t *dims,
		      struct cv_diag *d)
{
	int64_t e = 1;

	if (rank > CV_MAX_RANK) {
		cv_diag_add(d, "%s '%s': rank %zu above the limit of %d", what, name, rank,
			    CV_MAX_RANK);
		return -1;
	}
	for (size_t i = 0; i < rank; i++) {
		if (dims[i] < 0 || dims[i] > CV_MAX_DIM) {
			cv_diag_add(d, "%s '%s': dim %zu is %lld (allowed 0..%d)", what, name, i,
				    (long long)dims[i], CV_MAX_DIM);
			return -1;
		}
		e *= dims[i];
		if (e > CV_MAX_ELEMS) {
			cv_diag_add(d, "%s '%s': more than %lld elements", what, name,
				    (long long)CV_MAX_ELEMS);
			return -1;
		}
	}
	return 0;
}

static int finite_check(const char *name, const float *v, int64_t n, struct cv_diag *d)
{
	for (int64_t i = 0; i < n; i++)
		if (!isfinite(v[i])) {
			cv_diag_add(d, "initializer '%s': element %lld is %s; weights must be finite",
				    name, (long long)i, isnan(v[i]) ? "NaN" : "Inf");
			return -1;
		}
	return 0;
}

/* Fills t from a TensorProto: float32, int64 or int32 (widened to int64). */
static int load_tensor(struct cv_tensor *t, const Onnx__TensorProto *p, const char *name,
		       struct cv_diag *d)
{
	int64_t n = 1;
	size_t esz;
	const void *src;
	size_t src_elems;
	enum cv_dtype dt;

	if (check_dims("initializer", name, p->n_dims, p->dims, d))
		return -1;
	for (size_t i = 0; i < p->n_dims; i++)
		n *= p->dims[i];
	if (p->has_data_location && p->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
		cv_diag_add(d, "initializer '%s': external data files are not supported", name);
		return -1;
	}
	switch (p->data_type) {
	case 1:
		dt = CV_F32, esz = 4;
		src = p->float_data, src_elems = p->n_float_data;
		break;
	case 7:
		dt = CV_I64, esz = 8;
		src = p->int64_data, src_elems = p->n_int64_data;
		break;
	case 6:
		dt = CV_I64, esz = 4;
		src = p->int32_data, src_elems = p->n_int32_data;
		break;
	default:
		cv_diag_add(d, "initializer '%s': data type %d not supported (float32, int64, int32)",
			    name, p->data_type);
		return -1;
	}
	if (p->has_raw_data) {
		if (p->raw_data.len != (size_t)n * esz) {
			cv_diag_add(d, "initializer '%s': %zu bytes of data for %lld elements of %zu bytes",
				    name, p->raw_data.len, (long long)n, esz);
			return -1;
		}
		src = p->raw_data.data;
	} else if (src_elems != (size_t)n) {
		cv_diag_add(d, "initializer '%s': %zu values for %lld elements", name, src_elems,
			    (long long)n);
		return -1;
	}
	void *buf = malloc(n ? (size_t)n * cv_dtype_size(dt) : 1);

	if (!buf) {
		cv_diag_add(d, "initializer '%s': out of memory", name);
		return -1;
	}
	if (p->data_type == 6) {
		const uint8_t *s = src;

		for (int64_t i = 0; i < n; i++) {
			int32_t v;

			memcpy(&v, s + 4 * i, 4);
			((int64_t *)buf)[i] = v;
		}
		dt = CV_I64;
	} else if (n) {
		memcpy(buf, src, (size_t)n * esz);
	}
	if (dt == CV_F32 && finite_check(name, buf, n, d)) {
		free(buf);
		return -1;
	}
	cv_tensor_set_shape(t, (int)p->n_dims, p->dims);
	free(t->data);
	t->data = buf;
	t->dtype = dt;
	return 0;
}

static int read_attr(struct cv_graph *g, struct cv_node *n, const Onnx__AttributeProto *p,
		     struct cv_diag *d)
{
	struct cv_attr *a = &n->attrs[n->n_attrs];

	if (!p->name || !*p->name) {
		cv_diag_node(d, n, "attribute without a name");
		return -1;
	}
	memset(a, 0, sizeof(*a));
	switch (p->type) {
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
		a->type = CV_ATTR_INT, a->i = p->i;
		break;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
		a->type = CV_ATTR_FLOAT, a->f = p->f;
		break;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
		if (p->n_ints > CV_MAX_ATTR_INTS) {
			cv_diag_node(d, n, "attribute '%s' has %zu values (limit %d)", p->name,
				     p->n_ints, CV_MAX_ATTR_INTS);
			return -1;
		}
		a->type = CV_ATTR_INTS, a->n_ints = (int)p->n_ints;
		if (p->n_ints)
			memcpy(a->ints, p->ints, p->n_ints * sizeof(int64_t));
		break;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING:
		a->type = CV_ATTR_STRING;
		a->s = calloc(1, p->s.len + 1);
		if (!a->s)
			return -1;
		if (p->s.len)
			memcpy(a->s, p->s.data, p->s.len);
		break;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: {
		int t = p->t ? cv_graph_anon_tensor(g) : -1;

		if (t < 0 || load_tensor(&g->tensors[t], p->t, p->name, d))
			return -1;
		a->type = CV_ATTR_TENSOR, a->tensor = t;
		break;
	}
	default:
		return 0;	/* kinds no supported op uses: the op check names the node */
	}
	a->name = strdup(p->name);
	if (!a->name)
		return -1;
	n->n_attrs++;
	return 0;
}

/* Inputs an op cannot do without (opset-dependent where they moved). */
static int required_inputs(const struct cv_graph *g, enum cv_op op)
{
	switch (op) {
	case CV_OP_CONV: case CV_OP_GEMM: case CV_OP_MATMUL: case CV_OP_ADD: case CV_OP_SUB:
	case CV_OP_MUL: case CV_OP_DIV: case CV_OP_RESHAPE: case CV_OP_GATHER:
		return 2;
	case CV_OP_BATCHNORM:
		return 5;
	case CV_OP_PAD:
		return g->opset >= 11 ? 2 : 1;
	case CV_OP_UNSQUEEZE:
		return g->opset >= 13 ? 2 : 1;
	case CV_OP_SLICE:
		return g->opset >= 10 ? 3 : 1;
	case CV_OP_CONSTANT:
	case CV_OP_UNKNOWN:
		return 0;
	default:
		return 1;
	}
}

/*
 * Every pass and the executor may then rely on a known op's required inputs
 * and first output being there (Concat: all its inputs).
 */
static int check_arity(const struct cv_graph *g, const struct cv_node *n, struct cv_diag *d)
{
	int need = n->op == CV_OP_CONCAT ? n->n_in : required_inputs(g, n->op);

	if (n->op == CV_OP_UNKNOWN)
		return 0;
	for (int i = 0; i < need; i++)
		if (i >= n->n_in || n->in[i] < 0) {
			cv_diag_node(d, n, "input %d is required", i);
			return -1;
		}
	if (n->out[0] < 0 || (n->op == CV_OP_CONCAT && n->n_in == 0)) {
		cv_diag_node(d, n, "needs an output and its inputs");
		return -1;
	}
	return 0;
}

static int read_node(struct cv_graph *g, const Onnx__NodeProto *p, int idx, struct cv_diag *d)
{
	char auto_name[32];
	const char *name = p->name && *p->name ? p->name : auto_name;
	const char *op = p->op_type ? p->op_type : "";

	snprintf(auto_name, sizeof(auto_name), "#%d", idx);
	if (p->n_input > CV_MAX_NODE_IO || p->n_output > CV_MAX_NODE_IO || p->n_output == 0) {
		cv_diag_add(d, "node '%s' (%s): %zu inputs, %zu outputs", name, op, p->n_input,
			    p->n_output);
		return -1;
	}
	struct cv_node *n = cv_graph_add_node(g, name, op, (int)p->n_input, (int)p->n_output);

	if (!n)
		return -1;
	/* Another domain (com.microsoft...) is not ONNX's op of the same name. */
	if (p->domain && *p->domain && strcmp(p->domain, "ai.onnx"))
		n->op = CV_OP_UNKNOWN;
	n->attrs = calloc(p->n_attribute ? p->n_attribute : 1, sizeof(struct cv_attr));
	if (!n->attrs)
		return -1;
	for (size_t i = 0; i < p->n_attribute; i++)
		if (read_attr(g, n, p->attribute[i], d))
			return -1;
	for (size_t i = 0; i < p->n_input; i++) {
		n->in[i] = *p->input[i] ? cv_graph_tensor(g, p->input[i]) : -1;
		if (*p->input[i] && n->in[i] < 0)
			return -1;
	}
	for (size_t i = 0; i < p->n_output; i++) {
		int t = *p->output[i] ? cv_graph_tensor(g, p->output[i]) : -1;

		n->out[i] = t;
		if (t < 0)
			continue;
		if (g->tensors[t].producer >= 0 || g->tensors[t].data || g->tensors[t].is_input) {
			cv_diag_node(d, n, "output '%s' is already defined elsewhere", p->output[i]);
			return -1;
		}
		g->tensors[t].producer = idx;
	}
	return check_arity(g, n, d);
}

static int read_input(struct cv_graph *g, const Onnx__ValueInfoProto *v, struct cv_diag *d)
{
	int64_t dims[CV_MAX_RANK];

	if (!v->name || !*v->name) {
		cv_diag_add(d, "graph input without a name");
		return -1;
	}
	int t = cv_graph_find(g, v->name);

	if (t >= 0 && g->tensors[t].data)
		return 0;	/* an initializer listed as input (IR < 4): a constant */
	if (t >= 0) {
		cv_diag_add(d, "graph input '%s' listed twice", v->name);
		return -1;
	}
	t = cv_graph_tensor(g, v->name);
	if (t < 0)
		return -1;
	const Onnx__TypeProto *ty = v->type;

	if (!ty || ty->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
	    !ty->tensor_type->has_elem_type || ty->tensor_type->elem_type != 1) {
		cv_diag_add(d, "graph input '%s': only float32 tensors are supported", v->name);
		return -1;
	}
	struct cv_tensor *ts = &g->tensors[t];
	const Onnx__TensorShapeProto *sh = ty->tensor_type->shape;
	bool known = sh != NULL;

	ts->is_input = true;
	if (sh && sh->n_dim > CV_MAX_RANK) {
		cv_diag_add(d, "graph input '%s': rank %zu above the limit of %d", v->name,
			    sh->n_dim, CV_MAX_RANK);
		return -1;
	}
	for (size_t i = 0; sh && i < sh->n_dim; i++) {
		if (sh->dim[i]->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
			known = false;
		else
			dims[i] = sh->dim[i]->dim_value;
	}
	if (known) {
		if (check_dims("graph input", v->name, sh->n_dim, dims, d))
			return -1;
		cv_tensor_set_shape(ts, (int)sh->n_dim, dims);
	}
	g->inputs[g->n_inputs++] = t;
	return 0;
}

static int read_opset(struct cv_graph *g, const Onnx__ModelProto *m, struct cv_diag *d)
{
	for (size_t i = 0; i < m->n_opset_import; i++) {
		const Onnx__OperatorSetIdProto *o = m->opset_import[i];

		if (!o->domain || !*o->domain || !strcmp(o->domain, "ai.onnx"))
			g->opset = o->version;
	}
	if (g->opset < CV_OPSET_MIN || g->opset > CV_OPSET_MAX) {
		cv_diag_add(d, "ONNX opset %lld: supported are %d to %d", (long long)g->opset,
			    CV_OPSET_MIN, CV_OPSET_MAX);
		return -1;
	}
	return 0;
}

static int read_graph(struct cv_graph *g, const Onnx__GraphProto *gp, struct cv_diag *d)
{
	if (gp->n_node > CV_MAX_NODES || gp->n_initializer > CV_MAX_TENSORS ||
	    gp->n_input > CV_MAX_NODE_IO || gp->n_output > CV_MAX_NODE_IO) {
		cv_diag_add(d, "graph too large: %zu nodes, %zu initializers, %zu inputs, %zu outputs",
			    gp->n_node, gp->n_initializer, gp->n_input, gp->n_output);
		return -1;
	}
	g->inputs = calloc(gp->n_input + 1, sizeof(int));
	g->outputs = calloc(gp->n_output + 1, sizeof(int));
	if (!g->inputs || !g->outputs)
		return -1;
	for (size_t i = 0; i < gp->n_initializer; i++) {
		const char *name = gp->initializer[i]->name;

		if (!name || !*name || cv_graph_find(g, name) >= 0) {
			cv_diag_add(d, "initializer '%s': no name or defined twice", name ? name : "");
			return -1;
		}
		int t = cv_graph_tensor(g, name);

		if (t < 0 || load_tensor(&g->tensors[t], gp->initializer[i], name, d))
			return -1;
	}
	for (size_t i = 0; i < gp->n_input; i++)
		if (read_input(g, gp->input[i], d))
			return -1;
	for (size_t i = 0; i < gp->n_node; i++)
		if (read_node(g, gp->node[i], (int)i, d))
			return -1;
	if (!gp->n_output || !g->n_inputs) {
		cv_diag_add(d, "graph has %d inputs and %zu outputs: needs at least one of each",
			    g->n_inputs, gp->n_output);
		return -1;
	}
	for (size_t i = 0; i < gp->n_output; i++) {
		const char *name = gp->output[i]->name ? gp->output[i]->name : "";
		int t = cv_graph_find(g, name);

		if (t < 0 || (g->tensors[t].producer < 0 && !g->tensors[t].is_input)) {
			cv_diag_add(d, "graph output '%s' is produced by no node", name);
			return -1;
		}
		g->tensors[t].is_output = true;
		g->outputs[g->n_outputs++] = t;
	}
	return 0;
}

struct cv_graph *cv_onnx_read_mem(const uint8_t *buf, size_t len, struct cv_diag *d)
{
	Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, buf);
	struct cv_graph *g;

	if (!m) {
		cv_diag_add(d, "not a valid ONNX file: the protobuf does not decode "
			    "(truncated or corrupt)");
		return NULL;
	}
	g = cv_graph_new();
	if (!g || !m->graph || read_opset(g, m, d) || read_graph(g, m->graph, d)) {
		if (!m->graph)
			cv_diag_add(d, "ONNX file holds no graph");
		else if (!d->count)
			cv_diag_add(d, "out of memory reading the ONNX graph");
		cv_graph_free(g);
		g = NULL;
	}
	onnx__model_proto__free_unpacked(m, NULL);
	return g;
}

struct cv_graph *cv_onnx_read_file(const char *path, struct cv_diag *d)
{
	FILE *f = fopen(path, "rb");
	struct cv_graph *g = NULL;
	uint8_t *buf = NULL;
	long size;

	if (!f) {
		cv_diag_add(d, "%s: cannot open", path);
		return NULL;
	}
	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		cv_diag_add(d, "%s: cannot read", path);
	} else if ((size_t)size > CV_MAX_FILE_BYTES) {
		cv_diag_add(d, "%s: %ld bytes, above the limit of %zu", path, size,
			    CV_MAX_FILE_BYTES);
	} else if (!(buf = malloc(size ? size : 1)) || fread(buf, 1, size, f) != (size_t)size) {
		cv_diag_add(d, "%s: cannot read", path);
	} else {
		g = cv_onnx_read_mem(buf, size, d);
	}
	free(buf);
	fclose(f);
	return g;
}

int cv_set_input_shape(struct cv_graph *g, const char *name, int rank, const int64_t *dims,
		       struct cv_diag *d)
{
	int t = cv_graph_find(g, name);

	if (t < 0 || !g->tensors[t].is_input) {
		cv_diag_add(d, "no graph input named '%s'", name);
		return -1;
	}
	if (cv_tensor_set_shape(&g->tensors[t], rank, dims)) {
		cv_diag_add(d, "graph input '%s': shape out of bounds", name);
		return -1;
	}
	return 0;
}
