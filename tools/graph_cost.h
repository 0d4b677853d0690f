/* SPDX-License-Identifier: MIT */
/*
 * What a format 3.0 graph costs: multiply-accumulates and weight bytes per
 * node (from the description alone), and when the library compiles it,
 * hardware tasks and register-command bytes, in all and per node.
 * rkaccel-info, the zoo's host reference program and zoo_test share it.
 *
 * Compiling goes through the one path the library has for graphs today,
 * rkaccel_graph_to_model() then rkaccel_program_compile(); its refusal
 * ("not compiled yet: ...") is reported, not treated as a failure.
 */
#ifndef RKACCEL_TOOLS_GRAPH_COST_H
#define RKACCEL_TOOLS_GRAPH_COST_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rkaccel.h"
#include "rkaccel_drm.h"

/* Channels, and height x width, of tensor @t (NHWC or [N, C]). */
static inline uint32_t gc_channels(const struct rkaccel_graph_tensor *t)
{
	return t->dims[t->n_dims - 1];
}

static inline uint64_t gc_pixels(const struct rkaccel_graph_tensor *t)
{
	uint64_t p = 1;

	for (uint32_t k = 1; k + 1 < t->n_dims; k++)
		p *= t->dims[k];
	return p;
}

/* Multiply-accumulates of one image: convolutions and FC (pools, adds: 0). */
static inline uint64_t gc_node_macs(const struct rkaccel_graph_desc *d,
				    const struct rkaccel_graph_node *n)
{
	const struct rkaccel_graph_tensor *i = &d->tensors[n->inputs[0]];
	const struct rkaccel_graph_tensor *o = &d->tensors[n->output];

	switch (n->op) {
	case RKACCEL_GOP_CONV:
	case RKACCEL_GOP_GROUPCONV:
	case RKACCEL_GOP_DWCONV:
		return gc_pixels(o) * gc_channels(o) * n->kernel_h * n->kernel_w *
		       (gc_channels(i) / n->groups);
	case RKACCEL_GOP_FC:
		return gc_pixels(i) * gc_channels(i) * gc_channels(o);
	default:
		return 0;
	}
}

/* Bytes of the node's weights and bias. */
static inline uint64_t gc_node_weight_bytes(const struct rkaccel_graph_desc *d,
					    const struct rkaccel_graph_node *n)
{
	const struct rkaccel_graph_tensor *i = &d->tensors[n->inputs[0]];
	const struct rkaccel_graph_tensor *o = &d->tensors[n->output];
	uint64_t cout = gc_channels(o);

	switch (n->op) {
	case RKACCEL_GOP_CONV:
	case RKACCEL_GOP_GROUPCONV:
	case RKACCEL_GOP_DWCONV:
		return cout * n->kernel_h * n->kernel_w * (gc_channels(i) / n->groups) + cout * 4;
	case RKACCEL_GOP_FC:
		return gc_pixels(i) * gc_channels(i) * cout + cout * 4;
	default:
		return 0;
	}
}

/* The device a program is compiled for when there is none: RK3588's limits. */
static inline struct rkaccel_info gc_rk3588(void)
{
	return (struct rkaccel_info){
		.soc = DRM_RKACCEL_SOC_RK3588, .soc_name = "RK3588", .num_cores = 3,
		.core_mask = 7, .max_tasks = 4095, .cbuf_size = 384 * 1024,
	};
}

struct gc_compiled {
	int ret;			/* 0, or why not (with msg) */
	char msg[256];
	uint32_t tasks;			/* one inference (one slice of the batch) */
	size_t regcmd_bytes;
	size_t internal_bytes;		/* peak activation memory between layers */
	uint32_t *node_tasks;		/* per node, or NULL when not known */
};

/*
 * Tasks of each layer of @m: the difference of compiling its first i + 1
 * layers and its first i. Stores them in @layer_tasks; 0 or an error.
 */
static inline int gc_layer_tasks(const struct rkaccel_model_desc *m,
				 const struct rkaccel_info *info, uint32_t *layer_tasks)
{
	uint32_t before = 0;

	for (uint32_t i = 0; i < m->num_layers; i++) {
		struct rkaccel_model_desc pre = *m;
		struct rkaccel_program *p;
		int ret;

		pre.num_layers = i + 1;
		ret = rkaccel_program_compile(&pre, info, &p);
		if (ret)
			return ret;
		layer_tasks[i] = rkaccel_program_tasks(p) - before;
		before = rkaccel_program_tasks(p);
		rkaccel_program_free(p);
	}
	return 0;
}

/*
 * Per node: the tasks of the chain layer it lowered to. A layer of the
 * chain is one node, or a convolution into an int32 accumulator and the
 * add that reads it (the add gets the layer's tasks).
 */
static inline void gc_node_tasks(const struct rkaccel_graph_desc *d, const uint32_t *layer_tasks,
				 uint32_t num_layers, uint32_t *node_tasks)
{
	uint32_t layer = 0;

	for (uint32_t k = 0; k < d->num_nodes; k++) {
		const struct rkaccel_graph_node *n = &d->nodes[k];
		bool acc = d->tensors[n->output].type == RKACCEL_DTYPE_INT32 &&
			   k + 1 < d->num_nodes && d->nodes[k + 1].op == RKACCEL_GOP_ADD;

		node_tasks[k] = 0;
		if (acc || layer >= num_layers)
			continue;
		node_tasks[k] = layer_tasks[layer++];
	}
}

/* Whether every layer of @m reads the one before (prefixes then compile alone). */
static inline bool gc_is_chain(const struct rkaccel_model *m)
{
	const struct rkaccel_model_desc *d = rkaccel_model_desc(m);

	for (uint32_t i = 0; i < d->num_layers; i++) {
		uint32_t t[2];

		if (rkaccel_model_inputs(m, i, t, 2) != 1 || t[0] != i)
			return false;
	}
	return true;
}

/*
 * Compile @d for @info: c->ret 0 with the figures, or the refusal in c->msg.
 * Tasks per node only for a chain: a branched model's prefixes are not
 * models of their own.
 */
static inline void gc_compile(const struct rkaccel_graph_desc *d, const struct rkaccel_info *info,
			      bool per_node, struct gc_compiled *c)
{
	struct rkaccel_model *m = NULL;
	struct rkaccel_program *p = NULL;
	uint32_t *layer_tasks;

	memset(c, 0, sizeof(*c));
	c->ret = rkaccel_graph_to_model(d, &m, c->msg, sizeof(c->msg));
	if (c->ret)
		return;
	c->ret = rkaccel_program_compile_model(m, info, &p);
	if (c->ret) {
		snprintf(c->msg, sizeof(c->msg), "compile: %s", rkaccel_strerror(c->ret));
		rkaccel_model_free(m);
		return;
	}
	c->tasks = rkaccel_program_tasks(p);
	c->regcmd_bytes = rkaccel_program_size(p, RKACCEL_BUF_REGCMD);
	c->internal_bytes = rkaccel_program_size(p, RKACCEL_BUF_INTERNAL);
	rkaccel_program_free(p);
	layer_tasks = per_node && gc_is_chain(m) ? calloc(rkaccel_model_desc(m)->num_layers, sizeof(uint32_t)) : NULL;
	c->node_tasks = layer_tasks ? calloc(d->num_nodes, sizeof(uint32_t)) : NULL;
	if (c->node_tasks && !gc_layer_tasks(rkaccel_model_desc(m), info, layer_tasks)) {
		gc_node_tasks(d, layer_tasks, rkaccel_model_desc(m)->num_layers, c->node_tasks);
	} else {
		free(c->node_tasks);
		c->node_tasks = NULL;
	}
	free(layer_tasks);
	rkaccel_model_free(m);
}

static inline void gc_free(struct gc_compiled *c)
{
	free(c->node_tasks);
	c->node_tasks = NULL;
}

/* "12.3 M" style figures for the tables. */
static inline const char *gc_si(uint64_t v, char *buf, size_t len)
{
	if (v >= 10000000000ull)
		snprintf(buf, len, "%.2f G", (double)v / 1e9);
	else if (v >= 10000000)
		snprintf(buf, len, "%.2f M", (double)v / 1e6);
	else if (v >= 10000)
		snprintf(buf, len, "%.1f k", (double)v / 1e3);
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
	return buf;
}

#endif /* RKACCEL_TOOLS_GRAPH_COST_H */
