/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The CPU reference of a whole network (model format 2.0): each layer
 * through the per-operation references of quant_ref.h, in order, the
 * integer parameters derived here from the model's scales as
 * Documentation/model-format.rst defines them, not taken from the library.
 */
#ifndef RKACCEL_NET_REF_H
#define RKACCEL_NET_REF_H

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

/* Every tensor's shape, from the layers alone. */
static inline void net_shapes(const struct rkaccel_model_desc *d, struct net_shape *t)
{
	uint32_t i;

	t[0] = (struct net_shape){ d->height ? d->height : d->rows, d->width ? d->width : 1,
				   d->layers[0].in_features, d->layers[0].in_scale,
				   d->layers[0].in_zero_point };
	for (i = 0; i < d->num_layers; i++) {
		const struct rkaccel_layer_desc *l = &d->layers[i];
		struct net_shape *o = &t[i + 1];

		*o = (struct net_shape){ t[i].h, t[i].w, l->out_features, l->out_scale,
					 l->out_zero_point };
		if (l->op == RKACCEL_OP_AVGPOOL && !l->kernel_w) {
			o->h = o->w = 1;
		} else if (l->op != RKACCEL_OP_FC) {
			o->h = net_window_out(t[i].h, l->kernel_h, l->pad_top, l->pad_bottom,
					      l->stride);
			o->w = net_window_out(t[i].w, l->kernel_w, l->pad_left, l->pad_right,
					      l->stride);
		}
	}
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

/*
 * The network on @in (row-major [y][x][c]); @out gets the last tensor
 * (int8, or int32 with OUT_INT32). Every tensor is kept: residual adds
 * read earlier ones. Returns 0 or -ENOMEM.
 */
static inline int ref_net(const struct rkaccel_model_desc *d, const int8_t *in, void *out)
{
	struct net_shape t[RKACCEL_MODEL_MAX_LAYERS + 1];
	int8_t *data[RKACCEL_MODEL_MAX_LAYERS + 1] = { (int8_t *)in };
	int16_t mul[RKACCEL_MODEL_MAX_FEATURES];
	uint32_t i, last = d->num_layers;
	int ret = 0;

	net_shapes(d, t);
	for (i = 0; i < last && !ret; i++) {
		const struct rkaccel_layer_desc *l = &d->layers[i];
		bool int32 = l->flags & RKACCEL_LAYER_OUT_INT32;

		data[i + 1] = i + 1 == last ? out :
			      malloc((size_t)t[i + 1].h * t[i + 1].w * t[i + 1].c);
		if (!data[i + 1]) {
			ret = -ENOMEM;
			break;
		}
		if (l->op == RKACCEL_OP_MAXPOOL || l->op == RKACCEL_OP_AVGPOOL) {
			struct ref_pool p;

			net_pool_params(l, &t[i], &p);
			ref_pool_run(&p, data[i], data[i + 1]);
		} else {
			struct ref_conv p;

			net_conv_params(l, &t[i], &t[l->add_input], data[l->add_input], mul, &p);
			ref_conv_run(&p, data[i], int32, data[i + 1]);
		}
	}
	for (i = 1; i < last; i++)
		free(data[i]);
	return ret;
}

#endif /* RKACCEL_NET_REF_H */
