/* SPDX-License-Identifier: MIT */
/*
 * rkaccel's ONNX converter, host side: read a model, clean its graph up for
 * the NPU, run it in float. Errors come back as text in a cv_diag, one line
 * per problem, all problems of a step at once.
 */
#ifndef RKACCEL_CONVERT_H
#define RKACCEL_CONVERT_H

#include <stddef.h>
#include <stdint.h>

#include "graph.h"

/* The opsets whose semantics the reader and executor follow. */
#define CV_OPSET_MIN 7
#define CV_OPSET_MAX 17
#define CV_MAX_FILE_BYTES ((size_t)1 << 30)

struct cv_graph *cv_onnx_read_mem(const uint8_t *buf, size_t len, struct cv_diag *d);
struct cv_graph *cv_onnx_read_file(const char *path, struct cv_diag *d);

/* Fixes a graph input's shape where the file's is symbolic (before cv_prepare). */
int cv_set_input_shape(struct cv_graph *g, const char *name, int rank, const int64_t *dims,
		       struct cv_diag *d);

/* The whole clean-up pipeline, then the placement check (see convert.rst). */
int cv_prepare(struct cv_graph *g, struct cv_diag *d);

/* The passes, each in its own file, in pipeline order. */
int cv_pass_remove_identity(struct cv_graph *g, struct cv_diag *d);
int cv_pass_fold_constants(struct cv_graph *g, struct cv_diag *d);
int cv_pass_infer_shapes(struct cv_graph *g, struct cv_diag *d);
int cv_pass_fold_batchnorm(struct cv_graph *g, struct cv_diag *d);
int cv_pass_merge_pad(struct cv_graph *g, struct cv_diag *d);
int cv_pass_gemm_to_fc(struct cv_graph *g, struct cv_diag *d);
int cv_pass_flatten_into_fc(struct cv_graph *g, struct cv_diag *d);
int cv_pass_fuse_activation(struct cv_graph *g, struct cv_diag *d);
int cv_pass_check_support(struct cv_graph *g, struct cv_diag *d);

/* Shape inference of one node (shape_infer.c); constant inputs must be folded. */
int cv_infer_node(struct cv_graph *g, struct cv_node *n, struct cv_diag *d);

/*
 * Float executor with ONNX semantics. inputs[i] and outputs[i] follow
 * g->inputs and g->outputs, each dense row-major float32 of the tensor's shape.
 */
int cv_exec(const struct cv_graph *g, const float *const *inputs, float *const *outputs,
	    struct cv_diag *d);
/*
 * cv_exec with every tensor shown to @visit as it is made (the graph inputs
 * first, then each node's output in graph order): calibration's view.
 */
typedef void (*cv_visit_fn)(void *ctx, int tensor, const float *data);
int cv_exec_visit(const struct cv_graph *g, const float *const *inputs, float *const *outputs,
		  cv_visit_fn visit, void *ctx, struct cv_diag *d);
/* One node over float buffers (exec_*.c); bufs[t] holds tensor t. */
int cv_exec_node(const struct cv_graph *g, const struct cv_node *n, float **bufs,
		 struct cv_diag *d);

#endif
