/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The CPU reference of a whole network (model format 2.0, and the models
 * lowered from 3.0 graphs): each layer through the per-operation references
 * of quant_ref.h, in order, reading the tensor it names (a chain: the one
 * before), a concat as the copy of its inputs' channels side by side, the
 * integer parameters derived here from the model's scales as
 * Documentation/model-format.rst defines them, not taken from the library.
 */
#ifndef RKACCEL_NET_REF_H
#define RKACCEL_NET_REF_H

#include <string.h>

#include "quant_ref.h"

/* Shape of tensor @t: 0 the input, i + 1 the output of layer i. */
struct net_shape {
	uint32_t h, w, c;
	float scale;
	int32_t zp;
};

static inline uint32_t net_window_out(uint32_t in, uint32_t k, uint32_t p0, uint32_t p1,
				      uint32_t s)
{
	return (in + p0 + p1 - k) / s + 1;
}

/*
 * What each layer reads: src[i] the tensor (0 the input, j + 1 layer j), a
 * concat's inputs cat[first[i] .. first[i] + count[i] - 1]. A chain: src[i]
 * = i, no concat.
 */
struct net_links {
	uint32_t *src, *first, *count, *cat;
};

/* Tensor @i's shape from layer @i - 1 and what it reads. */
static inline void net_shape_of(const struct rkaccel_model_desc *d, const struct net_links *k,
				uint32_t i, struct net_shape *t)
{
	const struct rkaccel_layer_desc *l = &d->layers[i];
	const struct net_shape *in = &t[k->src[i]];
	struct net_shape *o = &t[i + 1];

	*o = (struct net_shape){ in->h, in->w, l->out_features, l->out_scale, l->out_zero_point };
	if (l->op == RKACCEL_OP_CONCAT) {
		o->h = t[k->cat[k->first[i]]].h;
		o->w = t[k->cat[k->first[i]]].w;
	} else if (l->op == RKACCEL_OP_AVGPOOL && !l->kernel_w) {
		o->h = o->w = 1;
	} else if (l->op != RKACCEL_OP_FC) {
		o->h = net_window_out(in->h, l->kernel_h, l->pad_top, l->pad_bottom, l->stride);
		o->w = net_window_out(in->w, l->kernel_w, l->pad_left, l->pad_right, l->stride);
	}
}

/* Every tensor's shape, from the layers and links alone. */
static inline void net_shapes_links(const struct rkaccel_model_desc *d,
				    const struct net_links *k, struct net_shape *t)
{
	uint32_t i;

	t[0] = (struct net_shape){ d->height ? d->height : d->rows, d->width ? d->width : 1,
				   d->layers[0].in_features, d->layers[0].in_scale,
				   d->layers[0].in_zero_point };
	for (i = 0; i < d->num_layers; i++)
		net_shape_of(d, k, i, t);
}

/* A convolution layer as ref_conv: requantization from the float scales. */
static inline void net_conv_params(const struct rkaccel_layer_desc *l, const struct net_shape *in,
				   const struct net_shape *add, const int8_t *add_data,
				   int16_t *mul, struct ref_conv *p)
{
	bool fc = l->op == RKACCEL_OP_FC;
	uint32_t n;

	*p = (struct ref_conv){
		.in_w = in->w, .in_h = in->h, .c = in->c, .n = l->out_features,
		.kw = fc ? 1 : l->kernel_w, .kh = fc ? 1 : l->kernel_h,
		.stride_x = fc ? 1 : l->stride, .stride_y = fc ? 1 : l->stride,
		.pad_l = l->pad_left, .pad_t = l->pad_top, .pad_r = l->pad_right,
		.pad_b = l->pad_bottom, .depthwise = l->op == RKACCEL_OP_DWCONV,
		.in_zp = l->in_zero_point, .out_zp = l->out_zero_point,
		.w = l->weights, .bias = l->bias,
	};
	/* ReLU: in the BS stage, or after the add when there is one */
	p->relu = (l->flags & RKACCEL_LAYER_RELU) && !(l->flags & RKACCEL_LAYER_ADD);
	ref_requant(l->in_scale * l->weight_scale / l->out_scale, &p->scale, &p->shift);
	if (l->weight_scales) {
		for (n = 0; n < l->out_features; n++)
			mul[n] = (int16_t)floor((double)l->weight_scales[n] /
						(double)l->weight_scale * 16384.0 + 0.5);
		p->mul = mul;
		p->mul_shift = 14;
	}
	if (l->flags & RKACCEL_LAYER_ADD) {
		p->res = add_data;
		p->res_offset = -add->zp;
		ref_requant_ew(add->scale / (l->in_scale * l->weight_scale), &p->res_scale,
			       &p->res_shift);
		p->res_relu = l->flags & RKACCEL_LAYER_RELU;
	}
}

/* A pooling layer as ref_pool: padding reads the input zero point. */
static inline void net_pool_params(const struct rkaccel_layer_desc *l, const struct net_shape *in,
				   struct ref_pool *p)
{
	bool global = !l->kernel_w && !l->kernel_h;
	uint32_t kw = global ? in->w : l->kernel_w, kh = global ? in->h : l->kernel_h;

	*p = (struct ref_pool){
		.in_w = in->w, .in_h = in->h, .c = in->c, .kw = kw, .kh = kh,
		.stride_x = global ? 1 : l->stride, .stride_y = global ? 1 : l->stride,
		.pad_l = l->pad_left, .pad_t = l->pad_top, .pad_r = l->pad_right,
		.pad_b = l->pad_bottom, .max = l->op == RKACCEL_OP_MAXPOOL,
		.pad_value = l->in_zero_point,
		.recip_w = (65536 + kw / 2) / kw, .recip_h = (65536 + kh / 2) / kh,
	};
}

/* A concat: each pixel's channels, input after input. */
static inline void ref_concat(const struct net_links *k, uint32_t i, const struct net_shape *t,
			      int8_t *const *data, int8_t *out)
{
	uint32_t c = t[i + 1].c, off = 0;
	size_t px, pixels = (size_t)t[i + 1].h * t[i + 1].w;

	for (uint32_t j = 0; j < k->count[i]; j++) {
		uint32_t s = k->cat[k->first[i] + j], cs = t[s].c;

		for (px = 0; px < pixels; px++)
			memcpy(out + px * c + off, data[s] + px * cs, cs);
		off += cs;
	}
}

/*
 * The network on @in (row-major [y][x][c]) with links @k; @out gets the
 * last tensor (int8, or int32 with OUT_INT32). Every tensor is kept:
 * branches, residual adds and concats read earlier ones. Returns 0 or
 * -ENOMEM.
 */
static inline int ref_net_links(const struct rkaccel_model_desc *d, const struct net_links *k,
				const int8_t *in, void *out)
{
	uint32_t i, last = d->num_layers;
	struct net_shape *t = calloc(last + 1, sizeof(*t));
	int8_t **data = calloc(last + 1, sizeof(*data));
	int16_t *mul = calloc(RKACCEL_MODEL_MAX_FEATURES, sizeof(*mul));
	int ret = t && data && mul ? 0 : -ENOMEM;

	if (!ret) {
		net_shapes_links(d, k, t);
		data[0] = (int8_t *)in;
	}
	for (i = 0; i < last && !ret; i++) {
		const struct rkaccel_layer_desc *l = &d->layers[i];
		bool int32 = l->flags & RKACCEL_LAYER_OUT_INT32;
		uint32_t s = k->src[i];

		data[i + 1] = i + 1 == last ? out :
			      malloc((size_t)t[i + 1].h * t[i + 1].w * t[i + 1].c);
		if (!data[i + 1]) {
			ret = -ENOMEM;
			break;
		}
		if (l->op == RKACCEL_OP_CONCAT) {
			ref_concat(k, i, t, data, data[i + 1]);
		} else if (l->op == RKACCEL_OP_MAXPOOL || l->op == RKACCEL_OP_AVGPOOL) {
			struct ref_pool p;

			net_pool_params(l, &t[s], &p);
			ref_pool_run(&p, data[s], data[i + 1]);
		} else {
			struct ref_conv p;

			net_conv_params(l, &t[s], &t[l->add_input], data[l->add_input], mul, &p);
			ref_conv_run(&p, data[s], int32, data[i + 1]);
		}
	}
	for (i = 1; data && i < last; i++)
		free(data[i]);
	free(t);
	free(data);
	free(mul);
	return ret;
}

static inline void net_links_free(struct net_links *k)
{
	free(k->src);
	free(k->first);
	free(k->count);
	free(k->cat);
}

/* The links of @m as rkaccel_model_inputs() gives them; a chain's when @m is NULL. */
static inline int net_links_of(const struct rkaccel_model *m, uint32_t n, struct net_links *k)
{
	uint32_t i, used = 0;

	k->src = calloc(n, sizeof(*k->src));
	k->first = calloc(n, sizeof(*k->first));
	k->count = calloc(n, sizeof(*k->count));
	k->cat = calloc((size_t)n * RKACCEL_GRAPH_MAX_NODE_INPUTS, sizeof(*k->cat));
	if (!k->src || !k->first || !k->count || !k->cat) {
		net_links_free(k);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		int got = m ? rkaccel_model_inputs(m, i, k->cat + used,
						   RKACCEL_GRAPH_MAX_NODE_INPUTS) : 1;

		if (got < 1 || got > RKACCEL_GRAPH_MAX_NODE_INPUTS) {
			net_links_free(k);
			return -EINVAL;
		}
		k->src[i] = m ? k->cat[used] : i;
		k->first[i] = used;
		k->count[i] = (uint32_t)got;
		if (m && rkaccel_model_desc(m)->layers[i].op == RKACCEL_OP_CONCAT)
			used += (uint32_t)got;
	}
	return 0;
}

/* A chain (model format 1.x/2.x): layer i reads tensor i. */
static inline int ref_net(const struct rkaccel_model_desc *d, const int8_t *in, void *out)
{
	struct net_links k;
	int ret = net_links_of(NULL, d->num_layers, &k);

	if (ret)
		return ret;
	ret = ref_net_links(d, &k, in, out);
	net_links_free(&k);
	return ret;
}

/* A model with its links (rkaccel_model_inputs()): a lowered 3.0 graph. */
static inline int ref_model_net(const struct rkaccel_model *m, const int8_t *in, void *out)
{
	const struct rkaccel_model_desc *d = rkaccel_model_desc(m);
	struct net_links k;
	int ret = net_links_of(m, d->num_layers, &k);

	if (ret)
		return ret;
	ret = ref_net_links(d, &k, in, out);
	net_links_free(&k);
	return ret;
}

#endif /* RKACCEL_NET_REF_H */
