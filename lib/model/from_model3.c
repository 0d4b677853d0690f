// SPDX-License-Identifier: MIT
/*
 * A 1.x/2.x layer chain as a 3.0 graph: generation code, kept apart from
 * the parsers. It reads only a description rkaccel_model_validate() has
 * accepted and hands what it builds to rkaccel_graph_validate().
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph3.h"
#include "model.h"

#define NAME_BYTES	24	/* "layer15.acc" and its NUL, with room */

static uint64_t align64(uint64_t v)
{
	return (v + 63) & ~(uint64_t)63;
}

/* Bytes of data the arrays of @d take in the graph. */
static uint64_t data_bytes(const struct rkaccel_model_desc *d)
{
	uint64_t size = 0;

	for (uint32_t i = 0; i < d->num_layers; i++) {
		const struct rkaccel_layer_desc *l = &d->layers[i];
		uint64_t n = (uint64_t)l->out_features * 4;

		if (l->op > RKACCEL_OP_DWCONV)
			continue;
		size = align64(align64(size + weights_size(l)) + n);
		if (l->weight_scales)
			size = align64(size + n);
	}
	return size;
}

struct builder {
	struct rkaccel_graph *g;
	uint32_t tensors, nodes, edges;
	uint8_t *data;
};

static uint32_t add_tensor(struct builder *b, const char *name, uint32_t type,
			   const struct rkaccel_tensor_shape *s, float scale, int32_t zp)
{
	struct rkaccel_graph_tensor *t = &b->g->tensors[b->tensors];
	char *dst = b->g->names + (size_t)b->tensors * NAME_BYTES;

	snprintf(dst, NAME_BYTES, "%s", name);
	*t = (struct rkaccel_graph_tensor){
		.name = dst, .type = type, .n_dims = 4,
		.dims = { 1, s->height, s->width, s->channels },
		.scale = scale, .zero_point = zp,
	};
	return b->tensors++;
}

/* A copy of @src (@n bytes) in the graph's data, 64-byte aligned. */
static const void *add_array(struct builder *b, const void *src, uint64_t n)
{
	void *dst = b->data;

	memcpy(dst, src, n);
	b->data += align64(n);
	return dst;
}

/* The node of layer @l, reading tensor @in, writing tensor @out. */
static void layer_node(struct builder *b, const struct rkaccel_layer_desc *l, uint32_t in,
		       uint32_t out, uint32_t channels)
{
	struct rkaccel_graph_node *n = &b->g->nodes[b->nodes++];
	bool global = l->op == RKACCEL_OP_AVGPOOL && !l->kernel_w && !l->kernel_h;

	b->g->edges[b->edges] = in;
	n->inputs = &b->g->edges[b->edges++];
	n->num_inputs = 1;
	n->output = out;
	if (!global) {
		n->kernel_h = l->op == RKACCEL_OP_FC ? 1 : l->kernel_h;
		n->kernel_w = l->op == RKACCEL_OP_FC ? 1 : l->kernel_w;
		n->stride_h = n->stride_w = l->op == RKACCEL_OP_FC ? 1 : l->stride;
		n->pad_top = l->pad_top;
		n->pad_left = l->pad_left;
		n->pad_bottom = l->pad_bottom;
		n->pad_right = l->pad_right;
		n->dilation_h = n->dilation_w = 1;
	}
	switch (l->op) {
	case RKACCEL_OP_FC:
	case RKACCEL_OP_CONV:
		n->op = RKACCEL_GOP_CONV;
		n->groups = 1;
		break;
	case RKACCEL_OP_DWCONV:
		n->op = RKACCEL_GOP_DWCONV;
		n->groups = channels;
		break;
	case RKACCEL_OP_MAXPOOL:
		n->op = RKACCEL_GOP_MAXPOOL;
		return;
	default:
		/* 2.0 divides by the whole window, padding counted as the zero point */
		n->op = global ? RKACCEL_GOP_GLOBAL_AVGPOOL : RKACCEL_GOP_AVGPOOL;
		n->flags = global ? 0 : RKACCEL_NODE_COUNT_INCLUDE_PAD;
		return;
	}
	if ((l->flags & RKACCEL_LAYER_RELU) && !(l->flags & RKACCEL_LAYER_ADD))
		n->act = RKACCEL_ACT_RELU;
	n->weight_scale = l->weight_scale;
	n->weights = add_array(b, l->weights, weights_size(l));
	n->bias = add_array(b, l->bias, (uint64_t)l->out_features * 4);
	if (l->weight_scales)
		n->weight_scales = add_array(b, l->weight_scales, (uint64_t)l->out_features * 4);
}

/* Layer @i's tensors and nodes; @map: 2.0 tensor numbers to graph tensors. */
static void add_layer(struct builder *b, const struct rkaccel_model_desc *d, uint32_t i,
		      uint32_t *map)
{
	const struct rkaccel_layer_desc *l = &d->layers[i];
	struct rkaccel_tensor_shape in, out;
	bool last = i + 1 == d->num_layers, int32 = l->flags & RKACCEL_LAYER_OUT_INT32;
	char name[NAME_BYTES];
	uint32_t acc;

	rkaccel_model_tensor(d, i, &in);
	rkaccel_model_tensor(d, i + 1, &out);
	snprintf(name, sizeof(name), last ? "output" : "layer%u", i);
	if (!(l->flags & RKACCEL_LAYER_ADD)) {
		map[i + 1] = add_tensor(b, name, int32 ? RKACCEL_DTYPE_INT32 : RKACCEL_DTYPE_INT8,
					&out, l->out_scale, l->out_zero_point);
		layer_node(b, l, map[i], map[i + 1], in.channels);
		return;
	}
	/* 2.0 adds in the accumulator: a convolution to int32, then the add */
	snprintf(name, sizeof(name), "layer%u.acc", i);
	acc = add_tensor(b, name, RKACCEL_DTYPE_INT32, &out, l->in_scale * l->weight_scale, 0);
	layer_node(b, l, map[i], acc, in.channels);
	snprintf(name, sizeof(name), last ? "output" : "layer%u", i);
	map[i + 1] = add_tensor(b, name, RKACCEL_DTYPE_INT8, &out, l->out_scale,
				l->out_zero_point);
	{
		struct rkaccel_graph_node *n = &b->g->nodes[b->nodes++];

		b->g->edges[b->edges] = acc;
		b->g->edges[b->edges + 1] = map[l->add_input];
		*n = (struct rkaccel_graph_node){
			.op = RKACCEL_GOP_ADD, .num_inputs = 2, .inputs = &b->g->edges[b->edges],
			.output = map[i + 1],
			.act = l->flags & RKACCEL_LAYER_RELU ? RKACCEL_ACT_RELU : RKACCEL_ACT_NONE,
		};
		b->edges += 2;
	}
}

int rkaccel_graph_from_model(const struct rkaccel_model_desc *desc,
			     struct rkaccel_graph **graph, char *msg, size_t msg_len)
{
	uint32_t *map, adds = 0;	/* chain tensor -> graph tensor */
	struct rkaccel_tensor_shape in;
	struct builder b = { 0 };
	int ret;

	if (!graph)
		return model_bad(msg, msg_len, "invalid arguments");
	ret = rkaccel_model_validate(desc, msg, msg_len);
	if (ret)
		return ret;
	for (uint32_t i = 0; i < desc->num_layers; i++)
		adds += !!(desc->layers[i].flags & RKACCEL_LAYER_ADD);
	ret = g3_alloc(1 + desc->num_layers + adds, desc->num_layers + adds,
		       desc->num_layers + 2 * adds, 1, 1,
		       (size_t)(1 + desc->num_layers + adds) * NAME_BYTES, data_bytes(desc), &b.g);
	if (ret) {
		model_bad(msg, msg_len, "out of memory");
		return ret;
	}
	map = malloc(((size_t)desc->num_layers + 1) * sizeof(*map));
	if (!map) {
		rkaccel_graph_free(b.g);
		model_bad(msg, msg_len, "out of memory");
		return -ENOMEM;
	}
	b.data = b.g->data;
	rkaccel_model_tensor(desc, 0, &in);
	map[0] = add_tensor(&b, "input", RKACCEL_DTYPE_INT8, &in, in.scale, in.zero_point);
	for (uint32_t i = 0; i < desc->num_layers; i++)
		add_layer(&b, desc, i, map);
	b.g->desc.batch = 1;
	b.g->inputs[0].tensor = map[0];
	b.g->outputs[0] = map[desc->num_layers];
	free(map);
	ret = rkaccel_graph_validate(&b.g->desc, msg, msg_len);
	if (ret) {
		rkaccel_graph_free(b.g);
		return ret;
	}
	*graph = b.g;
	return 0;
}
