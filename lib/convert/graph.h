/* SPDX-License-Identifier: MIT */
/*
 * The converter's in-memory graph: nodes over named tensors. The ONNX reader
 * fills it, one pass per file rewrites it, the float executor runs it, and a
 * later step lowers it to NPU layers. Tensors carry static shapes and, for
 * constants, their data; nodes carry their attributes and fusion marks.
 */
#ifndef RKACCEL_CONVERT_GRAPH_H
#define RKACCEL_CONVERT_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CV_MAX_RANK 6
/* Bounds for untrusted files: a real model stays far below each. */
#define CV_MAX_DIM (1 << 20)
#define CV_MAX_ELEMS ((int64_t)1 << 26)
#define CV_MAX_NODES 100000
#define CV_MAX_TENSORS 400000
#define CV_MAX_NODE_IO 1024
#define CV_MAX_ATTR_INTS 64

/* Same numbers as ONNX's TensorProto.DataType. */
enum cv_dtype { CV_F32 = 1, CV_I64 = 7 };

enum cv_op {
	CV_OP_UNKNOWN,
	CV_OP_CONV, CV_OP_GEMM, CV_OP_MATMUL, CV_OP_ADD, CV_OP_SUB, CV_OP_MUL,
	CV_OP_DIV, CV_OP_CONCAT, CV_OP_MAXPOOL, CV_OP_AVGPOOL, CV_OP_GLOBALAVGPOOL,
	CV_OP_RELU, CV_OP_CLIP, CV_OP_LEAKYRELU, CV_OP_SIGMOID, CV_OP_BATCHNORM,
	CV_OP_FLATTEN, CV_OP_RESHAPE, CV_OP_SOFTMAX, CV_OP_PAD, CV_OP_IDENTITY,
	CV_OP_DROPOUT, CV_OP_CONSTANT, CV_OP_CONSTANTOFSHAPE, CV_OP_SHAPE,
	CV_OP_GATHER, CV_OP_UNSQUEEZE, CV_OP_SQUEEZE, CV_OP_CAST, CV_OP_SLICE, CV_OP_TRANSPOSE,
	/* Made by the passes, not found in ONNX files. */
	CV_OP_FC,		/* fully connected: in [rows, k] (flattened), w [n, k], b [n] */
	CV_OP_CHANNEL_AFFINE,	/* standalone batch norm: x * scale[c] + bias[c] */
	CV_OP_COUNT
};

/* Activation fused into the node before it (a mark for the NPU output stage). */
enum cv_act { CV_ACT_NONE, CV_ACT_RELU, CV_ACT_RELU6, CV_ACT_LEAKY };

enum cv_attr_type { CV_ATTR_INT, CV_ATTR_FLOAT, CV_ATTR_INTS, CV_ATTR_STRING, CV_ATTR_TENSOR };

struct cv_attr {
	char *name;
	enum cv_attr_type type;
	int64_t i;
	float f;
	int64_t ints[CV_MAX_ATTR_INTS];
	int n_ints;
	char *s;
	int tensor;		/* CV_ATTR_TENSOR: index of an unnamed constant tensor */
};

struct cv_tensor {
	char *name;
	enum cv_dtype dtype;
	bool shape_known;
	int rank;
	int64_t dims[CV_MAX_RANK];
	void *data;		/* constant data (float or int64_t), or NULL */
	int producer;		/* node index, -1 for inputs and constants */
	bool is_input, is_output;
};

struct cv_node {
	char *name;
	char *op_name;		/* as written in the file, for messages */
	enum cv_op op;
	int n_in, n_out;
	int *in, *out;		/* tensor indices; -1 for an omitted optional input */
	int n_attrs;
	struct cv_attr *attrs;
	bool dead;		/* removed by a pass; compacted away by cv_graph_compact */
	enum cv_act act;
	float act_alpha;	/* CV_ACT_LEAKY's slope */
	bool on_cpu;		/* placed on the CPU after the last NPU layer */
};

struct cv_graph {
	int64_t opset;
	int n_nodes, cap_nodes;
	struct cv_node *nodes;
	int n_tensors, cap_tensors;
	struct cv_tensor *tensors;
	int *name_hash;		/* open addressing over tensor indices, -1 empty */
	int hash_cap;
	int n_inputs, n_outputs;
	int *inputs, *outputs;	/* tensor indices, in the file's order */
};

/* Messages for the user, one line per problem: callers report all at once. */
struct cv_diag {
	char *text;
	size_t len;
	int count;
};

void cv_diag_add(struct cv_diag *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void cv_diag_node(struct cv_diag *d, const struct cv_node *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void cv_diag_free(struct cv_diag *d);

struct cv_graph *cv_graph_new(void);
void cv_graph_free(struct cv_graph *g);
int cv_graph_tensor(struct cv_graph *g, const char *name);	/* find or add; -1 on OOM */
int cv_graph_find(const struct cv_graph *g, const char *name);
int cv_graph_anon_tensor(struct cv_graph *g);
struct cv_node *cv_graph_add_node(struct cv_graph *g, const char *name, const char *op,
				  int n_in, int n_out);
void cv_graph_compact(struct cv_graph *g);
/* Producers and consumers rebuilt after a pass rewires edges. */
void cv_graph_link(struct cv_graph *g);
int cv_graph_consumers(const struct cv_graph *g, int tensor, int *first);
int cv_graph_topo_order(const struct cv_graph *g, int *order, struct cv_diag *d);

enum cv_op cv_op_from_name(const char *name);
const char *cv_op_name(enum cv_op op);

const struct cv_attr *cv_attr_find(const struct cv_node *n, const char *name);
int64_t cv_attr_int(const struct cv_node *n, const char *name, int64_t def);
float cv_attr_float(const struct cv_node *n, const char *name, float def);
/* Copies up to max ints; returns how many, or -1 if absent. */
int cv_attr_ints(const struct cv_node *n, const char *name, int64_t *out, int max);
const char *cv_attr_string(const struct cv_node *n, const char *name, const char *def);

int64_t cv_tensor_elems(const struct cv_tensor *t);
size_t cv_dtype_size(enum cv_dtype dt);
/* Replaces t's data with a copy of data in the given shape. */
int cv_tensor_set_const(struct cv_tensor *t, enum cv_dtype dt, int rank, const int64_t *dims,
			const void *data);
int cv_tensor_set_shape(struct cv_tensor *t, int rank, const int64_t *dims);
bool cv_tensor_is_const(const struct cv_graph *g, int idx);

#endif
