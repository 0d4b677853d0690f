/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The CPU reference of the quantized arithmetic the simulated NPU must
 * match bit for bit: fully connected stacks, one convolution, pooling. It
 * is written from the arithmetic's definition (Documentation/datapath.rst),
 * not from the library: it derives the requantization multiplier on its
 * own. Pure computation, no device: the selftests (through conv_run.h and
 * net_ref.h) and the converter's host int8 executor use it.
 */
#ifndef RKACCEL_QUANT_REF_H
#define RKACCEL_QUANT_REF_H

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "rkaccel.h"

/* --- CPU reference ---------------------------------------------------------- */

/*
 * As Documentation/datapath.rst defines OUT_CVT: multiplier = m * 2^e with
 * m in [0.5, 1), scale = floor(m * 2^15) + 1, shift = 15 - e.
 */
static inline void ref_requant(float multiplier, int64_t *scale, int *shift)
{
	int e;
	double m = frexp((double)multiplier, &e);

	*scale = (int64_t)floor(m * 32768.0) + 1;
	*shift = 15 - e;
}

/* EW_CVT of the added tensor: the same without the + 1. */
static inline void ref_requant_ew(float multiplier, int64_t *scale, int *shift)
{
	int e;
	double m = frexp((double)multiplier, &e);

	*scale = (int64_t)floor(m * 32768.0);
	*shift = 15 - e;
}

/* One layer on the CPU: @out is int8 or int32 [rows][N]. */
static inline void ref_layer(const struct rkaccel_layer_desc *l, uint32_t rows,
			     const int8_t *in, void *out)
{
	bool int32 = l->flags & RKACCEL_LAYER_OUT_INT32;
	int64_t scale = 1;
	int shift = 0;
	uint32_t r, n, k;

	if (!int32)
		ref_requant(l->in_scale * l->weight_scale / l->out_scale, &scale, &shift);
	for (r = 0; r < rows; r++) {
		for (n = 0; n < l->out_features; n++) {
			int64_t acc = l->bias[n], y;

			for (k = 0; k < l->in_features; k++)
				acc += (int64_t)(in[(size_t)r * l->in_features + k] -
						 l->in_zero_point) *
				       l->weights[(size_t)n * l->in_features + k];
			if ((l->flags & RKACCEL_LAYER_RELU) && acc < 0)
				acc = 0;
			if (int32) {
				((int32_t *)out)[(size_t)r * l->out_features + n] = (int32_t)acc;
				continue;
			}
			y = acc * scale;
			if (shift)
				y = (y + ((int64_t)1 << (shift - 1))) >> shift;
			y += l->out_zero_point;
			y = y < -128 ? -128 : y > 127 ? 127 : y;
			((int8_t *)out)[(size_t)r * l->out_features + n] = (int8_t)y;
		}
	}
}

/* The whole model on the CPU; @out as ref_layer's. Returns 0 or -ENOMEM. */
static inline int ref_model(const struct rkaccel_model_desc *d, const int8_t *in, void *out)
{
	int8_t *a = NULL, *b = NULL;
	const int8_t *cur = in;
	uint32_t i;

	for (i = 0; i < d->num_layers; i++) {
		const struct rkaccel_layer_desc *l = &d->layers[i];

		if (i + 1 == d->num_layers) {
			ref_layer(l, d->rows, cur, out);
			break;
		}
		b = malloc((size_t)d->rows * l->out_features);
		if (!b) {
			free(a);
			return -ENOMEM;
		}
		ref_layer(l, d->rows, cur, b);
		free(a);
		a = b;
		cur = a;
	}
	free(a);
	return 0;
}

/* --- CPU reference of one convolution --------------------------------------- */

/*
 * A KxK convolution as the arithmetic defines it, with no register or
 * layout in sight: input x[y][x][c] (row-major, channels last), weights
 * w[n][ky][kx][c] (depthwise: w[c][ky][kx], output channel c reads input
 * channel c), padding reads the input zero point, i.e. contributes nothing.
 */
struct ref_conv {
	uint32_t in_w, in_h, c, n;		/* n == c when depthwise */
	uint32_t kw, kh, stride_x, stride_y;
	uint32_t pad_l, pad_t, pad_r, pad_b;
	bool depthwise, relu;
	int32_t in_zp, out_zp;
	int64_t scale;				/* requantization: (v * scale) >> shift */
	int shift;
	const int8_t *w;
	const int32_t *bias;
	const int16_t *mul;			/* per-channel multipliers, or NULL */
	int mul_shift;				/* (v * mul[n]) >> mul_shift first */
	const int8_t *res;			/* tensor added, [oy][ox][n], or NULL */
	int32_t res_offset;			/* ((res + offset) * scale) >> shift */
	int64_t res_scale;
	int res_shift;
	bool res_relu;				/* ReLU after the add */
};

/* (v + half) >> shift: rounding half up, as datapath.rst defines it. */
static inline int64_t ref_round_shift(int64_t v, int shift)
{
	return shift ? (v + ((int64_t)1 << (shift - 1))) >> shift : v;
}

static inline uint32_t ref_conv_out_w(const struct ref_conv *p)
{
	return (p->in_w + p->pad_l + p->pad_r - p->kw) / p->stride_x + 1;
}

static inline uint32_t ref_conv_out_h(const struct ref_conv *p)
{
	return (p->in_h + p->pad_t + p->pad_b - p->kh) / p->stride_y + 1;
}

/*
 * sum over @c channels of (x - zp) * w: in int32 runs of 32768 (each term
 * is at most 255 x 128), exact like the int64 sum it stands for.
 */
static inline int64_t ref_dot(const int8_t *x, const int8_t *w, uint32_t c, int32_t zp)
{
	int64_t acc = 0;
	uint32_t ch = 0;

	if (zp < -128 || zp > 127) {
		for (; ch < c; ch++)
			acc += (int64_t)(x[ch] - zp) * w[ch];
		return acc;
	}
	while (ch < c) {
		uint32_t end = c - ch > 32768 ? ch + 32768 : c;
		int32_t s = 0;

		for (; ch < end; ch++)
			s += (x[ch] - zp) * w[ch];
		acc += s;
	}
	return acc;
}

/* sum over the window of (x - in_zp) * w, plus the bias; out of the input: 0. */
static inline int64_t ref_conv_acc(const struct ref_conv *p, const int8_t *in,
				   uint32_t n, uint32_t ox, uint32_t oy)
{
	int64_t acc = p->bias[n];
	uint32_t ky, kx;

	for (ky = 0; ky < p->kh; ky++) {
		long iy = (long)(oy * p->stride_y + ky) - (long)p->pad_t;

		if (iy < 0 || iy >= (long)p->in_h)
			continue;
		for (kx = 0; kx < p->kw; kx++) {
			long ix = (long)(ox * p->stride_x + kx) - (long)p->pad_l;
			const int8_t *x = in + ((size_t)iy * p->in_w + (size_t)ix) * p->c;
			size_t tap = ((size_t)n * p->kh + ky) * p->kw + kx;

			if (ix < 0 || ix >= (long)p->in_w)
				continue;
			/* depthwise: channel n alone */
			if (p->depthwise)
				acc += (int64_t)(x[n] - p->in_zp) * p->w[tap];
			else
				acc += ref_dot(x, p->w + tap * p->c, p->c, p->in_zp);
		}
	}
	return acc;
}

/* Largest |accumulator|, to choose a shift that spreads the outputs. */
static inline int64_t ref_conv_max_acc(const struct ref_conv *p, const int8_t *in)
{
	uint32_t ow = ref_conv_out_w(p), oh = ref_conv_out_h(p), n, i;
	int64_t max = 1;

	for (i = 0; i < ow * oh; i++) {
		for (n = 0; n < p->n; n++) {
			int64_t a = ref_conv_acc(p, in, n, i % ow, i / ow);

			if (a > max)
				max = a;
			if (-a > max)
				max = -a;
		}
	}
	return max;
}

/* The whole output, [oy][ox][n], int8 (or int32 with @int32: no requantization). */
static inline void ref_conv_run(const struct ref_conv *p, const int8_t *in, bool int32,
				void *out)
{
	uint32_t ow = ref_conv_out_w(p), oh = ref_conv_out_h(p), n, i;

	for (i = 0; i < ow * oh; i++) {
		for (n = 0; n < p->n; n++) {
			int64_t y = ref_conv_acc(p, in, n, i % ow, i / ow);

			if (p->mul) {
				y = ref_round_shift(y * p->mul[n], p->mul_shift);
				y = y < INT32_MIN ? INT32_MIN : y > INT32_MAX ? INT32_MAX : y;
			}
			if (p->relu && y < 0)
				y = 0;
			if (p->res) {
				y += ref_round_shift(((int64_t)p->res[(size_t)i * p->n + n] +
						      p->res_offset) * p->res_scale, p->res_shift);
				y = y < INT32_MIN ? INT32_MIN : y > INT32_MAX ? INT32_MAX : y;
				if (p->res_relu && y < 0)
					y = 0;
			}
			if (int32) {
				((int32_t *)out)[(size_t)i * p->n + n] = (int32_t)y;
				continue;
			}
			y = ref_round_shift(y * p->scale, p->shift) + p->out_zp;
			y = y < -128 ? -128 : y > 127 ? 127 : y;
			((int8_t *)out)[(size_t)i * p->n + n] = (int8_t)y;
		}
	}
}

/* --- CPU reference of pooling ------------------------------------------------- */

/*
 * Max or average pooling of x[y][x][c] as datapath.rst defines it: padding
 * is skipped by max and reads @pad_value for the average, which is
 * (sum x recip_w x recip_h + 2^31) >> 32, saturated to int8.
 */
struct ref_pool {
	uint32_t in_w, in_h, c, kw, kh, stride_x, stride_y;
	uint32_t pad_l, pad_t, pad_r, pad_b;
	bool max;
	int32_t pad_value;
	uint32_t recip_w, recip_h;
};

static inline uint32_t ref_pool_out_w(const struct ref_pool *p)
{
	return (p->in_w + p->pad_l + p->pad_r - p->kw) / p->stride_x + 1;
}

static inline uint32_t ref_pool_out_h(const struct ref_pool *p)
{
	return (p->in_h + p->pad_t + p->pad_b - p->kh) / p->stride_y + 1;
}

/* @out: [oy][ox][c]. */
static inline void ref_pool_run(const struct ref_pool *p, const int8_t *in, int8_t *out)
{
	uint32_t ow = ref_pool_out_w(p), oh = ref_pool_out_h(p), ox, oy, ch, kx, ky;

	for (oy = 0; oy < oh; oy++) {
		for (ox = 0; ox < ow; ox++) {
			for (ch = 0; ch < p->c; ch++) {
				int64_t sum = 0;
				int best = -128;

				for (ky = 0; ky < p->kh; ky++) {
					for (kx = 0; kx < p->kw; kx++) {
						long y = (long)(oy * p->stride_y + ky) - (long)p->pad_t;
						long x = (long)(ox * p->stride_x + kx) - (long)p->pad_l;
						bool inside = y >= 0 && x >= 0 && y < (long)p->in_h &&
							      x < (long)p->in_w;
						int v = inside ? in[((size_t)y * p->in_w + x) * p->c + ch] :
							p->pad_value;

						if (!inside && p->max)
							continue;
						best = v > best ? v : best;
						sum += v;
					}
				}
				if (!p->max) {
					sum = (sum * p->recip_w * p->recip_h + ((int64_t)1 << 31)) >> 32;
					best = sum < -128 ? -128 : sum > 127 ? 127 : (int)sum;
				}
				out[((size_t)oy * ow + ox) * p->c + ch] = (int8_t)best;
			}
		}
	}
}

#endif /* RKACCEL_QUANT_REF_H */
