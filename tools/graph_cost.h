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
	uint64_t ns;			/* modelled time on one core at 1 GHz */
	uint32_t *node_tasks;		/* per node, or NULL when not asked */
	uint64_t *node_ns;		/* per node: modelled time */
};

/*
 * The node a layer of @m computes: the one whose output is the layer's
 * tensor, or for a copy into a concat (no tensor of the graph) that
 * concat's. -1 when none is found.
 */
static inline int gc_layer_node(const struct rkaccel_graph_desc *d, const struct rkaccel_model *m,
				uint32_t layer)
{
	const struct rkaccel_model_desc *md = rkaccel_model_desc(m);
	int g = rkaccel_model_graph_tensor(m, layer + 1);

	for (uint32_t j = layer + 1; g < 0 && j < md->num_layers; j++) {
		uint32_t in[64];
		int n = rkaccel_model_inputs(m, j, in, 64);

		for (int k = 0; md->layers[j].op == RKACCEL_OP_CONCAT && k < n && k < 64; k++)
			if (in[k] == layer + 1)
				g = rkaccel_model_graph_tensor(m, j + 1);
	}
	for (uint32_t k = 0; g >= 0 && k < d->num_nodes; k++)
		if (d->nodes[k].output == (uint32_t)g)
			return (int)k;
	return -1;
}

/*
 * Per node: the tasks and modelled time (rkaccel_program_layer()) of the
 * layers it lowered to. A convolution into an int32 accumulator and the
 * add that reads it are one layer: the add gets it.
 */
static inline int gc_node_costs(const struct rkaccel_graph_desc *d, const struct rkaccel_model *m,
				const struct rkaccel_program *p, struct gc_compiled *c)
{
	c->node_tasks = calloc(d->num_nodes, sizeof(*c->node_tasks));
	c->node_ns = calloc(d->num_nodes, sizeof(*c->node_ns));
	if (!c->node_tasks || !c->node_ns)
		return -ENOMEM;
	for (uint32_t i = 0; i < rkaccel_model_desc(m)->num_layers; i++) {
		int k = gc_layer_node(d, m, i);
		uint32_t tasks = 0;
		uint64_t ns = 0;

		if (k < 0 || rkaccel_program_layer(p, i, &tasks, &ns))
			return -EINVAL;
		c->node_tasks[k] += tasks;
		c->node_ns[k] += ns;
	}
	return 0;
}

/* Compile @d for @info: c->ret 0 with the figures (per node with @per_node), or the refusal. */
static inline void gc_compile(const struct rkaccel_graph_desc *d, const struct rkaccel_info *info,
			      bool per_node, struct gc_compiled *c)
{
	struct rkaccel_model *m = NULL;
	struct rkaccel_program *p = NULL;

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
	for (uint32_t i = 0; i < rkaccel_model_desc(m)->num_layers; i++) {
		uint64_t ns = 0;

		rkaccel_program_layer(p, i, NULL, &ns);
		c->ns += ns;
	}
	if (per_node && gc_node_costs(d, m, p, c)) {
		free(c->node_tasks);
		free(c->node_ns);
		c->node_tasks = NULL;
		c->node_ns = NULL;
	}
	rkaccel_program_free(p);
	rkaccel_model_free(m);
}

static inline void gc_free(struct gc_compiled *c)
{
	free(c->node_tasks);
	free(c->node_ns);
	c->node_ns = NULL;
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
