/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The CPU reference of a whole format 3.0 graph: node by node in the
 * file's topological order, each through quant_ref.h's per-operation
 * references (ref_conv_run, ref_pool_run) with the integer parameters
 * derived here from the tensors' scales as Documentation/model-format.rst
 * and datapath.rst define them, never from the library or its compiler.
 * graph_ref_test checks it byte for byte against net_ref.h on every chain
 * the 2.0 tests generate; scripts/zoo-data.sh uses it for the zoo's
 * expected outputs; rkaccel-run --dump-layers compares every
 * layer of the NPU with it (dual-licensed for that MIT tool, as is
 * quant_ref.h).
 *
 * What the datapath does not define is refused with a message, not
 * guessed: an add of two int8 tensors (the EW stage adds an int8 tensor to
 * an accumulator), leaky ReLU, average pooling over padding without
 * COUNT_INCLUDE_PAD, dilation, uint8 tensors. Softmax and dequantize are
 * model-format.rst's CPU arithmetic (one rounding, expf(), a float sum in
 * index order). ReLU6/clip clamps
 * the requantized output to the quantized bounds, round(bound / scale) +
 * zero point (the converter's folding of a clip into the output range).
 */
#ifndef RKACCEL_GRAPH_REF_H
#define RKACCEL_GRAPH_REF_H

#include <stdio.h>
#include <string.h>

#include "quant_ref.h"

/* Called after each node of each image with its output (may be NULL). */
typedef void (*graph_ref_hook)(void *arg, uint32_t image, uint32_t node, const void *data,
			       size_t bytes);

static inline size_t gref_elem(uint32_t type)
{
	return type == RKACCEL_DTYPE_INT32 || type == RKACCEL_DTYPE_FLOAT32 ? 4 : 1;
}

/* Elements of one image of tensor @t. */
static inline size_t gref_count(const struct rkaccel_graph_tensor *t)
{
	size_t n = 1;

	for (uint32_t k = 1; k < t->n_dims; k++)
		n *= t->dims[k];
	return n;
}

static inline size_t gref_bytes(const struct rkaccel_graph_tensor *t)
{
	return gref_count(t) * gref_elem(t->type);
}

/* Height, width, channels of an NHWC tensor ([N, C]: 1, 1, C). */
static inline void gref_hwc(const struct rkaccel_graph_tensor *t, uint32_t *h, uint32_t *w,
			    uint32_t *c)
{
	*h = t->n_dims == 4 ? t->dims[1] : 1;
	*w = t->n_dims == 4 ? t->dims[2] : t->n_dims == 3 ? t->dims[1] : 1;
	*c = t->dims[t->n_dims - 1];
}

#define GREF_BAD(...)	(snprintf(msg, msg_len, __VA_ARGS__), -ENOTSUP)

/* Clip bounds on the int8 output, from the real bounds. */
static inline void gref_clip(const struct rkaccel_graph_node *n,
			     const struct rkaccel_graph_tensor *o, int *lo, int *hi)
{
	double a = floor((double)n->clip_min / o->scale + 0.5) + o->zero_point;
	double b = floor((double)n->clip_max / o->scale + 0.5) + o->zero_point;

	*lo = a < -128 ? -128 : a > 127 ? 127 : (int)a;
	*hi = b < -128 ? -128 : b > 127 ? 127 : (int)b;
}

static inline void gref_apply_clip(const struct rkaccel_graph_node *n,
				   const struct rkaccel_graph_tensor *o, int8_t *out, size_t count)
{
	int lo, hi;

	if (n->act != RKACCEL_ACT_CLIP)
		return;
	gref_clip(n, o, &lo, &hi);
	for (size_t i = 0; i < count; i++)
		out[i] = (int8_t)(out[i] < lo ? lo : out[i] > hi ? hi : out[i]);
}

/*
 * A convolution (groups 1 or depthwise) or FC (one pixel of K channels):
 * ref_conv with the requantization of its tensors' scales. @res: the add
 * folded in (NULL: none). @mul: room for the per-channel multipliers.
 */
static inline void gref_conv_params(const struct rkaccel_graph_node *n,
				    const struct rkaccel_graph_tensor *i,
				    const struct rkaccel_graph_tensor *o, int16_t *mul,
				    struct ref_conv *p)
{
	bool fc = n->op == RKACCEL_GOP_FC;
	uint32_t h, w, c, oh, ow, oc;

	gref_hwc(i, &h, &w, &c);
	gref_hwc(o, &oh, &ow, &oc);
	if (fc) {
		c = (uint32_t)gref_count(i);
		h = w = 1;
	}
	*p = (struct ref_conv){
		.in_w = w, .in_h = h, .c = c, .n = oc,
		.kw = fc ? 1 : n->kernel_w, .kh = fc ? 1 : n->kernel_h,
		.stride_x = fc ? 1 : n->stride_w, .stride_y = fc ? 1 : n->stride_h,
		.pad_l = n->pad_left, .pad_t = n->pad_top, .pad_r = n->pad_right,
		.pad_b = n->pad_bottom, .depthwise = n->op == RKACCEL_GOP_DWCONV,
		.relu = n->act == RKACCEL_ACT_RELU || n->act == RKACCEL_ACT_CLIP,
		.in_zp = i->zero_point, .out_zp = o->zero_point,
		.w = n->weights, .bias = n->bias,
	};
	/* clip: ReLU when the lower bound is 0 or above, then the bounds */
	if (n->act == RKACCEL_ACT_CLIP && n->clip_min < 0)
		p->relu = false;
	if (o->type != RKACCEL_DTYPE_INT32)
		ref_requant(i->scale * n->weight_scale / o->scale, &p->scale, &p->shift);
	if (n->weight_scales) {
		for (uint32_t k = 0; k < oc; k++)
			mul[k] = (int16_t)floor((double)n->weight_scales[k] /
						(double)n->weight_scale * 16384.0 + 0.5);
		p->mul = mul;
		p->mul_shift = 14;
	}
}

/* A grouped convolution: one ref_conv per group on its slice of channels. */
static inline int gref_groupconv(const struct rkaccel_graph_node *n,
				 const struct rkaccel_graph_tensor *i,
				 const struct rkaccel_graph_tensor *o, const int8_t *in, void *out,
				 int16_t *mul)
{
	uint32_t h, w, c, oh, ow, oc, g = n->groups, ig, og;
	size_t es = gref_elem(o->type);
	struct ref_conv p;
	int8_t *sin;
	uint8_t *sout;

	gref_hwc(i, &h, &w, &c);
	gref_hwc(o, &oh, &ow, &oc);
	ig = c / g;
	og = oc / g;
	sin = malloc((size_t)h * w * ig);
	sout = malloc((size_t)oh * ow * og * es);
	if (!sin || !sout) {
		free(sin);
		free(sout);
		return -ENOMEM;
	}
	gref_conv_params(n, i, o, mul, &p);
	for (uint32_t k = 0; k < g; k++) {
		struct ref_conv q = p;

		q.c = ig;
		q.n = og;
		q.w = n->weights + (size_t)k * og * n->kernel_h * n->kernel_w * ig;
		q.bias = n->bias + (size_t)k * og;
		q.mul = p.mul ? p.mul + (size_t)k * og : NULL;
		for (size_t px = 0; px < (size_t)h * w; px++)
			memcpy(sin + px * ig, in + px * c + (size_t)k * ig, ig);
		ref_conv_run(&q, sin, o->type == RKACCEL_DTYPE_INT32, sout);
		for (size_t px = 0; px < (size_t)oh * ow; px++)
			memcpy((uint8_t *)out + (px * oc + (size_t)k * og) * es,
			       sout + px * og * es, og * es);
	}
	free(sin);
	free(sout);
	return 0;
}

/* Max, average or global average pooling. */
static inline int gref_pool(const struct rkaccel_graph_node *n,
			    const struct rkaccel_graph_tensor *i,
			    const struct rkaccel_graph_tensor *o, const int8_t *in, int8_t *out,
			    char *msg, size_t msg_len)
{
	bool global = n->op == RKACCEL_GOP_GLOBAL_AVGPOOL, max = n->op == RKACCEL_GOP_MAXPOOL;
	uint32_t h, w, c, oh, ow, oc, kw, kh;
	struct ref_pool p;

	gref_hwc(i, &h, &w, &c);
	gref_hwc(o, &oh, &ow, &oc);
	kw = global ? w : n->kernel_w;
	kh = global ? h : n->kernel_h;
	p = (struct ref_pool){
		.in_w = w, .in_h = h, .c = c, .kw = kw, .kh = kh,
		.stride_x = global ? 1 : n->stride_w, .stride_y = global ? 1 : n->stride_h,
		.pad_l = n->pad_left, .pad_t = n->pad_top, .pad_r = n->pad_right,
		.pad_b = n->pad_bottom, .max = max, .pad_value = i->zero_point,
		.recip_w = (65536 + kw / 2) / kw, .recip_h = (65536 + kh / 2) / kh,
	};
	if (!max && !(n->flags & RKACCEL_NODE_COUNT_INCLUDE_PAD) &&
	    (p.pad_l | p.pad_t | p.pad_r | p.pad_b))
		return GREF_BAD("average over padding without count_include_pad: the datapath divides by the whole window");
	if (n->flags & RKACCEL_NODE_CEIL_MODE) {
		if (!max)
			return GREF_BAD("average pooling in ceil mode: no divisor defined");
		/* the max skips padding: ceil mode is more padding at the end */
		while (ref_pool_out_w(&p) < ow)
			p.pad_r++;
		while (ref_pool_out_h(&p) < oh)
			p.pad_b++;
	}
	ref_pool_run(&p, in, out);
	return 0;
}

/*
 * The datapath's add: an int32 accumulator (scale a_scale) plus an int8
 * tensor through EW_CVT, saturated, ReLU, OUT_CVT (datapath.rst, as
 * net_ref's residual layers).
 */
static inline int gref_add(const struct rkaccel_graph_node *n,
			   const struct rkaccel_graph_tensor *t0,
			   const struct rkaccel_graph_tensor *t1,
			   const struct rkaccel_graph_tensor *o, const void *d0, const void *d1,
			   int8_t *out, char *msg, size_t msg_len)
{
	const struct rkaccel_graph_tensor *a = t0, *r = t1;
	const void *ad = d0, *rd = d1;
	int64_t ew_scale, scale;
	int ew_shift, shift;
	size_t count = gref_count(o);

	if (t1->type == RKACCEL_DTYPE_INT32) {
		a = t1;
		r = t0;
		ad = d1;
		rd = d0;
	}
	if (a->type != RKACCEL_DTYPE_INT32 || r->type != RKACCEL_DTYPE_INT8)
		return GREF_BAD("add of %s and %s: the datapath adds an int8 tensor to an int32 accumulator",
				t0->type == RKACCEL_DTYPE_INT32 ? "int32" : "int8",
				t1->type == RKACCEL_DTYPE_INT32 ? "int32" : "int8");
	ref_requant_ew(r->scale / a->scale, &ew_scale, &ew_shift);
	ref_requant(a->scale / o->scale, &scale, &shift);
	for (size_t k = 0; k < count; k++) {
		int64_t y = ((const int32_t *)ad)[k];

		y += ref_round_shift(((int64_t)((const int8_t *)rd)[k] - r->zero_point) * ew_scale,
				     ew_shift);
		y = y < INT32_MIN ? INT32_MIN : y > INT32_MAX ? INT32_MAX : y;
		if ((n->act == RKACCEL_ACT_RELU || (n->act == RKACCEL_ACT_CLIP && n->clip_min >= 0)) &&
		    y < 0)
			y = 0;
		y = ref_round_shift(y * scale, shift) + o->zero_point;
		out[k] = (int8_t)(y < -128 ? -128 : y > 127 ? 127 : y);
	}
	gref_apply_clip(n, o, out, count);
	return 0;
}

/* Concat: per outer index, each input's block in turn. */
static inline void gref_concat(const struct rkaccel_graph_desc *d,
			       const struct rkaccel_graph_node *n, void *const *data, void *out)
{
	const struct rkaccel_graph_tensor *o = &d->tensors[n->output];
	size_t outer = 1, es = gref_elem(o->type), at = 0;

	for (uint32_t k = 1; k < n->axis; k++)
		outer *= o->dims[k];
	for (size_t i = 0; i < outer; i++) {
		for (uint32_t j = 0; j < n->num_inputs; j++) {
			const struct rkaccel_graph_tensor *t = &d->tensors[n->inputs[j]];
			size_t block = gref_count(t) / outer * es;

			memcpy((uint8_t *)out + at, (uint8_t *)data[n->inputs[j]] + i * block, block);
			at += block;
		}
	}
}

/* (q - zero_point) x scale in double, rounded once (model-format.rst). */
static inline float gref_dequant(const struct rkaccel_graph_tensor *t, const void *in, size_t k)
{
	double q = t->type == RKACCEL_DTYPE_INT32 ? ((const int32_t *)in)[k] :
		   t->type == RKACCEL_DTYPE_FLOAT32 ? ((const float *)in)[k] :
		   ((const int8_t *)in)[k];

	if (t->type == RKACCEL_DTYPE_FLOAT32)
		return (float)q;
	return (float)((q - t->zero_point) * (double)t->scale);
}

/*
 * Softmax along the node's axis, as model-format.rst defines it: each
 * line's maximum subtracted, expf(), the sum in float in index order,
 * each element divided by it.
 */
static inline void gref_softmax(const struct rkaccel_graph_node *n,
				const struct rkaccel_graph_tensor *i, const void *in, float *out)
{
	size_t outer = 1, inner = 1, len = i->dims[n->axis];

	for (uint32_t k = 1; k < n->axis; k++)
		outer *= i->dims[k];
	for (uint32_t k = n->axis + 1; k < i->n_dims; k++)
		inner *= i->dims[k];
	for (size_t k = 0; k < outer * len * inner; k++)
		out[k] = gref_dequant(i, in, k);
	for (size_t o = 0; o < outer; o++) {
		for (size_t j = 0; j < inner; j++) {
			float *x = out + o * len * inner + j, max = x[0], sum = 0.0f;

			for (size_t a = 1; a < len; a++)
				if (x[a * inner] > max)
					max = x[a * inner];
			for (size_t a = 0; a < len; a++) {
				x[a * inner] = expf(x[a * inner] - max);
				sum += x[a * inner];
			}
			for (size_t a = 0; a < len; a++)
				x[a * inner] /= sum;
		}
	}
}

/* One node of one image: @data[t] is tensor t's bytes (inputs made). */
static inline int gref_node(const struct rkaccel_graph_desc *d, uint32_t idx, void *const *data,
			    int16_t *mul, char *msg, size_t msg_len)
{
	const struct rkaccel_graph_node *n = &d->nodes[idx];
	const struct rkaccel_graph_tensor *i = &d->tensors[n->inputs[0]];
	const struct rkaccel_graph_tensor *o = &d->tensors[n->output];
	void *out = data[n->output];
	const void *in = data[n->inputs[0]];
	struct ref_conv p;

	for (uint32_t k = 0; k < n->num_inputs; k++)
		if (d->tensors[n->inputs[k]].type == RKACCEL_DTYPE_UINT8)
			return GREF_BAD("uint8 tensors: quant_ref has int8 only");
	if (o->type == RKACCEL_DTYPE_UINT8)
		return GREF_BAD("uint8 tensors: quant_ref has int8 only");
	if (n->act == RKACCEL_ACT_LEAKY)
		return GREF_BAD("leaky ReLU: not in the datapath's definition");
	if (n->dilation_h > 1 || n->dilation_w > 1)
		return GREF_BAD("dilation: not in the datapath's definition");
	switch (n->op) {
	case RKACCEL_GOP_CONV:
	case RKACCEL_GOP_DWCONV:
	case RKACCEL_GOP_FC:
		gref_conv_params(n, i, o, mul, &p);
		ref_conv_run(&p, in, o->type == RKACCEL_DTYPE_INT32, out);
		if (o->type == RKACCEL_DTYPE_INT8)
			gref_apply_clip(n, o, out, gref_count(o));
		return 0;
	case RKACCEL_GOP_GROUPCONV: {
		int ret = gref_groupconv(n, i, o, in, out, mul);

		if (!ret && o->type == RKACCEL_DTYPE_INT8)
			gref_apply_clip(n, o, out, gref_count(o));
		return ret;
	}
	case RKACCEL_GOP_MAXPOOL:
	case RKACCEL_GOP_AVGPOOL:
	case RKACCEL_GOP_GLOBAL_AVGPOOL:
		if (i->type != RKACCEL_DTYPE_INT8)
			return GREF_BAD("pooling of int32: the datapath pools int8");
		return gref_pool(n, i, o, in, out, msg, msg_len);
	case RKACCEL_GOP_ADD:
		return gref_add(n, i, &d->tensors[n->inputs[1]], o, in, data[n->inputs[1]], out,
				msg, msg_len);
	case RKACCEL_GOP_CONCAT:
		gref_concat(d, n, data, out);
		return 0;
	case RKACCEL_GOP_DEQUANTIZE:
		for (size_t k = 0; k < gref_count(o); k++)
			((float *)out)[k] = gref_dequant(i, in, k);
		return 0;
	case RKACCEL_GOP_SOFTMAX:
		gref_softmax(n, i, in, out);
		return 0;
	default:
		return GREF_BAD("op %s: no integer definition", rkaccel_graph_op_name(n->op));
	}
}

/*
 * Run graph @d on @in (per graph input, the whole batch: image after
 * image) into @out (per graph output, the whole batch). Tensors are freed
 * after their last reader. @hook, when non-NULL, sees every node's output.
 * Returns 0, -ENOMEM, or -ENOTSUP with a message naming the node.
 */
static inline int graph_ref_run(const struct rkaccel_graph_desc *d, const void *const *in,
				void *const *out, graph_ref_hook hook, void *hook_arg,
				char *msg, size_t msg_len)
{
	void **data = calloc(d->num_tensors, sizeof(*data));
	uint32_t *last = calloc(d->num_tensors, sizeof(*last));
	int16_t *mul = NULL;
	uint32_t max_c = 1;
	int ret = 0;

	for (uint32_t t = 0; t < d->num_tensors; t++)
		max_c = d->tensors[t].dims[d->tensors[t].n_dims - 1] > max_c ?
			d->tensors[t].dims[d->tensors[t].n_dims - 1] : max_c;
	mul = malloc(max_c * sizeof(*mul));
	if (!data || !last || !mul) {
		ret = -ENOMEM;
		goto out;
	}
	/* a tensor lives until its last reader; graph outputs until the end */
	for (uint32_t k = 0; k < d->num_nodes; k++)
		for (uint32_t j = 0; j < d->nodes[k].num_inputs; j++)
			last[d->nodes[k].inputs[j]] = k + 1;
	for (uint32_t k = 0; k < d->num_outputs; k++)
		last[d->outputs[k]] = UINT32_MAX;
	for (uint32_t img = 0; img < d->batch && !ret; img++) {
		for (uint32_t k = 0; k < d->num_inputs; k++) {
			const struct rkaccel_graph_tensor *t = &d->tensors[d->inputs[k].tensor];

			data[d->inputs[k].tensor] = (uint8_t *)in[k] + img * gref_bytes(t);
			last[d->inputs[k].tensor] |= 0x80000000u;	/* not ours to free */
		}
		for (uint32_t k = 0; k < d->num_outputs; k++) {
			const struct rkaccel_graph_tensor *t = &d->tensors[d->outputs[k]];

			data[d->outputs[k]] = (uint8_t *)out[k] + img * gref_bytes(t);
		}
		for (uint32_t k = 0; k < d->num_nodes && !ret; k++) {
			const struct rkaccel_graph_node *n = &d->nodes[k];
			const struct rkaccel_graph_tensor *o = &d->tensors[n->output];

			if (!data[n->output])
				data[n->output] = malloc(gref_bytes(o));
			if (!data[n->output]) {
				ret = -ENOMEM;
				break;
			}
			ret = gref_node(d, k, data, mul, msg, msg_len);
			if (ret == -ENOTSUP) {
				char why[160];

				snprintf(why, sizeof(why), "%.150s", msg);
				snprintf(msg, msg_len, "node %u '%.64s' (%s): %s", k, o->name,
					 rkaccel_graph_op_name(n->op), why);
			}
			if (hook && !ret)
				hook(hook_arg, img, k, data[n->output], gref_bytes(o));
			/* free what no later node reads */
			for (uint32_t j = 0; j < n->num_inputs; j++) {
				uint32_t t = n->inputs[j];

				if (last[t] == k + 1) {
					free(data[t]);
					data[t] = NULL;
				}
			}
		}
		for (uint32_t t = 0; t < d->num_tensors; t++) {
			if (last[t] & 0x80000000u) {
				data[t] = NULL;		/* inputs and outputs: the caller's */
			} else {
				free(data[t]);
				data[t] = NULL;
			}
		}
	}
out:
	free(data);
	free(last);
	free(mul);
	return ret;
}

#endif /* RKACCEL_GRAPH_REF_H */
