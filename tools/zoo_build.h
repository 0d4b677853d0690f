/* SPDX-License-Identifier: MIT */
/*
 * A small builder of format 3.0 graphs with seeded random int8 weights,
 * for the network zoo (zoo.h). Header-only on purpose: every tools/ .c file is a
 * program of its own and librkaccel exports only what librkaccel.map names,
 * so a header beside args.h is what rkaccel-mkmodel, rkaccel-info, the
 * host's reference program and the guest's zoo_test can all include.
 *
 * Quantization keeps activations in range without running the network:
 * the builder tracks each int8 tensor's mean square of (q - zero_point)
 * (an estimate from the weights it drew), and gives each convolution the
 * weight_scale whose OUT_CVT multiplier maps the accumulator's spread to a
 * fixed spread of the output (standard deviation 60 before a ReLU into
 * zero point -128, 40 for a linear output at zero point 0). Every
 * convolution's output has the same scale ZB_ACT_SCALE, so concat inputs
 * always agree; only adds choose their own output scale. Scales are
 * rounded to 8-bit mantissas with frexp/ldexp and all arithmetic is on
 * doubles without fused operations, so every architecture writes the same
 * bytes for the same seed.
 */
#ifndef RKACCEL_TOOLS_ZOO_BUILD_H
#define RKACCEL_TOOLS_ZOO_BUILD_H

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rkaccel.h"

#define ZB_ACT_SCALE	(1.0f / 32)	/* every convolution output */
#define ZB_IN_SCALE	(1.0f / 64)	/* the graph input */
#define ZB_SIGMA_RELU	60.0		/* target spread before a ReLU (zero point -128) */
#define ZB_SIGMA_LINEAR	40.0		/* target spread of a linear output (zero point 0) */

/* What a convolution or FC writes. */
enum zb_out {
	ZB_RELU,	/* int8, ReLU, zero point -128 */
	ZB_LINEAR,	/* int8, no activation, zero point 0 */
	ZB_ACC,		/* int32 accumulator, for an add */
};

struct zb {
	uint32_t batch;
	uint64_t rng;
	int err;			/* first error: -ENOMEM or -EINVAL */
	char msg[160];
	struct rkaccel_graph_tensor *t;
	double *msq;			/* per tensor: mean square of q - zero point */
	uint32_t nt, cap_t, cap_msq;
	struct rkaccel_graph_node *n;
	uint32_t *first;		/* per node: its first edge */
	uint32_t nn, cap_n, cap_first;
	uint32_t *e;
	uint32_t ne, cap_e;
	void **own;			/* names and arrays to free */
	uint32_t nown, cap_own;
	uint64_t macs;			/* per image: convolutions and FC */
	uint64_t weight_bytes;		/* weights and biases */
	struct rkaccel_graph_input in;
	uint32_t out;
	struct rkaccel_graph_desc desc;
};

/* splitmix64: the same sequence everywhere. */
static inline uint64_t zb_rand(struct zb *b)
{
	uint64_t z = (b->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in -r..r. */
static inline int64_t zb_uniform(struct zb *b, int64_t r)
{
	return (int64_t)(zb_rand(b) % (uint64_t)(2 * r + 1)) - r;
}

/* @x rounded to an 8-bit mantissa (exact in binary32). */
static inline float zb_q8(double x)
{
	int e;
	double m = frexp(x, &e);

	return (float)ldexp(floor(m * 256.0 + 0.5), e - 8);
}

static inline void zb_fail(struct zb *b, int err, const char *what)
{
	if (!b->err) {
		b->err = err;
		snprintf(b->msg, sizeof(b->msg), "%s", what);
	}
}

static inline bool zb_grow(struct zb *b, void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
	void *p;
	uint32_t c;

	if (need <= *cap)
		return true;
	c = *cap ? *cap * 2 : 64;
	while (c < need)
		c *= 2;
	p = realloc(*arr, (size_t)c * elem);
	if (!p) {
		zb_fail(b, -ENOMEM, "out of memory");
		return false;
	}
	*arr = p;
	*cap = c;
	return true;
}

/* @p, freed with the builder; NULL (and the builder failed) when @p is. */
static inline void *zb_own(struct zb *b, void *p)
{
	if (!p || !zb_grow(b, (void **)&b->own, &b->cap_own, b->nown + 1, sizeof(void *))) {
		free(p);
		zb_fail(b, -ENOMEM, "out of memory");
		return NULL;
	}
	b->own[b->nown++] = p;
	return p;
}

static inline void zb_init(struct zb *b, uint32_t batch, uint32_t seed)
{
	memset(b, 0, sizeof(*b));
	b->batch = batch;
	b->rng = 0x5eed000000000000ull ^ seed;
}

static inline void zb_free(struct zb *b)
{
	for (uint32_t i = 0; i < b->nown; i++)
		free(b->own[i]);
	free(b->own);
	free(b->t);
	free(b->msq);
	free(b->n);
	free(b->first);
	free(b->e);
	memset(b, 0, sizeof(*b));
}

/* A tensor [batch, h, w, c] (or [batch, c] with @h 0); its index. */
static inline uint32_t zb_tensor(struct zb *b, const char *name, uint32_t type, uint32_t h,
				 uint32_t w, uint32_t c, float scale, int32_t zp, double msq)
{
	struct rkaccel_graph_tensor *t;
	char *s;

	if (!zb_grow(b, (void **)&b->t, &b->cap_t, b->nt + 1, sizeof(*b->t)) ||
	    !zb_grow(b, (void **)&b->msq, &b->cap_msq, b->nt + 1, sizeof(*b->msq)))
		return 0;
	s = zb_own(b, strdup(name));
	if (!s)
		return 0;
	t = &b->t[b->nt];
	*t = (struct rkaccel_graph_tensor){
		.name = s, .type = type, .n_dims = h ? 4 : 2,
		.dims = { b->batch, h ? h : c, h ? w : 0, h ? c : 0 },
		.scale = scale, .zero_point = zp,
	};
	b->msq[b->nt] = msq;
	return b->nt++;
}

static inline uint32_t zb_h(const struct zb *b, uint32_t t) { return b->t[t].n_dims == 4 ? b->t[t].dims[1] : 1; }
static inline uint32_t zb_w(const struct zb *b, uint32_t t) { return b->t[t].n_dims == 4 ? b->t[t].dims[2] : 1; }
static inline uint32_t zb_c(const struct zb *b, uint32_t t)
{
	return b->t[t].dims[b->t[t].n_dims - 1];
}

/* A node of @op reading @ins, writing @out; its record to fill in. */
static inline struct rkaccel_graph_node *zb_node(struct zb *b, uint32_t op, const uint32_t *ins,
						 uint32_t num_ins, uint32_t out)
{
	static struct rkaccel_graph_node dummy;
	struct rkaccel_graph_node *n;

	if (b->err)
		return memset(&dummy, 0, sizeof(dummy));
	if (!zb_grow(b, (void **)&b->n, &b->cap_n, b->nn + 1, sizeof(*b->n)) ||
	    !zb_grow(b, (void **)&b->first, &b->cap_first, b->nn + 1, sizeof(*b->first)) ||
	    !zb_grow(b, (void **)&b->e, &b->cap_e, b->ne + num_ins, sizeof(*b->e)))
		return memset(&dummy, 0, sizeof(dummy));
	n = &b->n[b->nn];
	*n = (struct rkaccel_graph_node){ .op = op, .num_inputs = num_ins, .output = out };
	b->first[b->nn++] = b->ne;
	memcpy(b->e + b->ne, ins, num_ins * sizeof(*ins));
	b->ne += num_ins;
	return n;
}

static inline uint32_t zb_window_out(uint32_t in, uint32_t k, uint32_t pa, uint32_t pb,
				     uint32_t s)
{
	return in + pa + pb < k ? 0 : (in + pa + pb - k) / s + 1;
}

/*
 * A convolution of @in: @cout outputs (ignored when depthwise), KxK, stride
 * @s, padding @pad on every side; ZB_RELU, ZB_LINEAR or ZB_ACC. Returns the
 * output tensor.
 */
static inline uint32_t zb_conv_ex(struct zb *b, const char *name, uint32_t in, uint32_t cout,
				  uint32_t k, uint32_t s, uint32_t pad, bool dw, enum zb_out kind)
{
	uint32_t cin = zb_c(b, in), oh, ow, per_out, i;
	float s_in = b->t[in].scale, s_w, s_out = ZB_ACT_SCALE;
	uint64_t count, sumsq = 0;
	double msq_acc, sigma_acc, m, sq;
	struct rkaccel_graph_node *n;
	int8_t *w;
	int32_t *bias;
	int64_t br;
	uint32_t out;

	if (b->err)
		return 0;
	if (dw)
		cout = cin;
	oh = zb_window_out(zb_h(b, in), k, pad, pad, s);
	ow = zb_window_out(zb_w(b, in), k, pad, pad, s);
	if (!oh || !ow) {
		char why[160];

		snprintf(why, sizeof(why), "'%s': the input %ux%u is too small for a %ux%u window",
			 name, zb_h(b, in), zb_w(b, in), k, k);
		zb_fail(b, -EINVAL, why);
		return 0;
	}
	per_out = k * k * (dw ? 1 : cin);
	count = (uint64_t)cout * per_out;
	w = zb_own(b, malloc(count ? count : 1));
	bias = zb_own(b, malloc((size_t)cout * sizeof(*bias)));
	if (!w || !bias)
		return 0;
	for (uint64_t j = 0; j < count; j++) {
		w[j] = (int8_t)zb_uniform(b, 127);
		sumsq += (uint64_t)(w[j] * w[j]);
	}
	msq_acc = (double)sumsq / cout * b->msq[in];
	sigma_acc = sqrt(msq_acc);
	br = (int64_t)(sigma_acc / 4);
	for (i = 0; i < cout; i++)
		bias[i] = (int32_t)zb_uniform(b, br < (1 << 28) ? br : (1 << 28));
	if (kind == ZB_ACC) {
		s_w = 1.0f / 128;
		out = zb_tensor(b, name, RKACCEL_DTYPE_INT32, oh, ow, cout, s_in * s_w, 0, msq_acc);
	} else {
		m = (kind == ZB_RELU ? ZB_SIGMA_RELU : ZB_SIGMA_LINEAR) / sigma_acc;
		s_w = zb_q8(m * (double)s_out / (double)s_in);
		m = (double)(s_in * s_w / s_out);	/* the multiplier the file gives */
		sq = sigma_acc * m * sigma_acc * m;
		out = zb_tensor(b, name, RKACCEL_DTYPE_INT8, oh, ow, cout, s_out,
				kind == ZB_RELU ? -128 : 0, kind == ZB_RELU ? sq / 2 : sq);
	}
	n = zb_node(b, dw ? RKACCEL_GOP_DWCONV : RKACCEL_GOP_CONV, &in, 1, out);
	n->kernel_h = n->kernel_w = k;
	n->stride_h = n->stride_w = s;
	n->pad_top = n->pad_left = n->pad_bottom = n->pad_right = pad;
	n->dilation_h = n->dilation_w = 1;
	n->groups = dw ? cin : 1;
	n->act = kind == ZB_RELU ? RKACCEL_ACT_RELU : RKACCEL_ACT_NONE;
	n->weight_scale = s_w;
	n->weights = w;
	n->bias = bias;
	b->macs += (uint64_t)oh * ow * count;
	b->weight_bytes += count + (uint64_t)cout * sizeof(*bias);
	return out;
}

/* A plain convolution with "same" padding ((k - 1) / 2). */
static inline uint32_t zb_conv(struct zb *b, const char *name, uint32_t in, uint32_t cout,
			       uint32_t k, uint32_t s, enum zb_out kind)
{
	return zb_conv_ex(b, name, in, cout, k, s, (k - 1) / 2, false, kind);
}

static inline uint32_t zb_dw(struct zb *b, const char *name, uint32_t in, uint32_t k,
			     uint32_t s, enum zb_out kind)
{
	return zb_conv_ex(b, name, in, 0, k, s, (k - 1) / 2, true, kind);
}

/*
 * Fully connected: [N, ...] -> [N, @nout], K the input's elements per
 * image. The same weights and scales as a convolution over one pixel.
 */
static inline uint32_t zb_fc(struct zb *b, const char *name, uint32_t in, uint32_t nout,
			     enum zb_out kind)
{
	uint64_t k = (uint64_t)zb_h(b, in) * zb_w(b, in) * zb_c(b, in), count, sumsq = 0;
	float s_in = b->t[in].scale, s_w, s_out = ZB_ACT_SCALE;
	struct rkaccel_graph_node *n;
	double msq_acc, sigma_acc, m, sq;
	int8_t *w;
	int32_t *bias;
	int64_t br;
	uint32_t out;

	if (b->err)
		return 0;
	count = k * nout;
	w = zb_own(b, malloc(count));
	bias = zb_own(b, malloc((size_t)nout * sizeof(*bias)));
	if (!w || !bias)
		return 0;
	for (uint64_t j = 0; j < count; j++) {
		w[j] = (int8_t)zb_uniform(b, 127);
		sumsq += (uint64_t)(w[j] * w[j]);
	}
	msq_acc = (double)sumsq / nout * b->msq[in];
	sigma_acc = sqrt(msq_acc);
	br = (int64_t)(sigma_acc / 4);
	for (uint32_t i = 0; i < nout; i++)
		bias[i] = (int32_t)zb_uniform(b, br < (1 << 28) ? br : (1 << 28));
	m = (kind == ZB_RELU ? ZB_SIGMA_RELU : ZB_SIGMA_LINEAR) / sigma_acc;
	s_w = zb_q8(m * (double)s_out / (double)s_in);
	m = (double)(s_in * s_w / s_out);
	sq = sigma_acc * m * sigma_acc * m;
	out = zb_tensor(b, name, RKACCEL_DTYPE_INT8, 0, 0, nout, s_out, kind == ZB_RELU ? -128 : 0,
			kind == ZB_RELU ? sq / 2 : sq);
	n = zb_node(b, RKACCEL_GOP_FC, &in, 1, out);
	n->act = kind == ZB_RELU ? RKACCEL_ACT_RELU : RKACCEL_ACT_NONE;
	n->weight_scale = s_w;
	n->weights = w;
	n->bias = bias;
	b->macs += count;
	b->weight_bytes += count + (uint64_t)nout * sizeof(*bias);
	return out;
}

/* Max pool KxK stride @s, padding @pad (skipped by the max). */
static inline uint32_t zb_maxpool(struct zb *b, const char *name, uint32_t in, uint32_t k,
				  uint32_t s, uint32_t pad)
{
	const struct rkaccel_graph_tensor *t;
	struct rkaccel_graph_node *n;
	uint32_t out, oh, ow;

	if (b->err)
		return 0;
	t = &b->t[in];
	oh = zb_window_out(zb_h(b, in), k, pad, pad, s);
	ow = zb_window_out(zb_w(b, in), k, pad, pad, s);
	if (!oh || !ow) {
		char why[160];

		snprintf(why, sizeof(why), "'%s': the input %ux%u is too small for a %ux%u window",
			 name, zb_h(b, in), zb_w(b, in), k, k);
		zb_fail(b, -EINVAL, why);
		return 0;
	}
	/* the largest of k x k: a larger spread than its input's (measured: 1.7x) */
	out = zb_tensor(b, name, t->type, oh, ow, zb_c(b, in), t->scale, t->zero_point,
			b->msq[in] * (k > 1 ? 2.0 : 1.0));
	n = zb_node(b, RKACCEL_GOP_MAXPOOL, &in, 1, out);
	n->kernel_h = n->kernel_w = k;
	n->stride_h = n->stride_w = s;
	n->pad_top = n->pad_left = n->pad_bottom = n->pad_right = pad;
	n->dilation_h = n->dilation_w = 1;
	return out;
}

static inline uint32_t zb_global_avgpool(struct zb *b, const char *name, uint32_t in)
{
	const struct rkaccel_graph_tensor *t;
	uint32_t out;

	if (b->err)
		return 0;
	t = &b->t[in];
	/* an upper bound: a mean is no larger than the map's root mean square */
	out = zb_tensor(b, name, t->type, 1, 1, zb_c(b, in), t->scale, t->zero_point,
			b->msq[in]);
	zb_node(b, RKACCEL_GOP_GLOBAL_AVGPOOL, &in, 1, out);
	return out;
}

/*
 * The residual add the datapath has: the int32 accumulator @acc of a
 * convolution plus the int8 tensor @res, then ReLU or not; the output
 * scale spreads the sum as a convolution's output.
 */
static inline uint32_t zb_add(struct zb *b, const char *name, uint32_t acc, uint32_t res,
			      bool relu)
{
	const struct rkaccel_graph_tensor *a, *r;
	double real, target = relu ? ZB_SIGMA_RELU : ZB_SIGMA_LINEAR;
	struct rkaccel_graph_node *n;
	uint32_t ins[2] = { acc, res }, out;
	float s_out;

	if (b->err)
		return 0;
	a = &b->t[acc];
	r = &b->t[res];
	real = (double)a->scale * a->scale * b->msq[acc] + (double)r->scale * r->scale * b->msq[res];
	s_out = zb_q8(sqrt(real) / target);
	/*
	 * An upper bound: a rectified residual is never negative, so the
	 * ReLU may take nothing away.
	 */
	out = zb_tensor(b, name, RKACCEL_DTYPE_INT8, zb_h(b, acc), zb_w(b, acc), zb_c(b, acc),
			s_out, relu ? -128 : 0, target * target);
	n = zb_node(b, RKACCEL_GOP_ADD, ins, 2, out);
	n->act = relu ? RKACCEL_ACT_RELU : RKACCEL_ACT_NONE;
	return out;
}

/* Concat along channels; the inputs share the output's scale and zero point. */
static inline uint32_t zb_concat(struct zb *b, const char *name, const uint32_t *ins,
				 uint32_t num)
{
	uint32_t c = 0, out;
	double msq = 0;
	struct rkaccel_graph_node *n;

	if (b->err)
		return 0;
	for (uint32_t i = 0; i < num; i++) {
		c += zb_c(b, ins[i]);
		msq += b->msq[ins[i]] * zb_c(b, ins[i]);
	}
	out = zb_tensor(b, name, b->t[ins[0]].type, zb_h(b, ins[0]), zb_w(b, ins[0]), c,
			b->t[ins[0]].scale, b->t[ins[0]].zero_point, msq / c);
	n = zb_node(b, RKACCEL_GOP_CONCAT, ins, num, out);
	n->axis = 3;
	return out;
}

/* The graph input: int8 [batch, h, w, c], uniform input (mean square 128^2 / 3). */
static inline uint32_t zb_input(struct zb *b, uint32_t h, uint32_t w, uint32_t c)
{
	uint32_t t = zb_tensor(b, "input", RKACCEL_DTYPE_INT8, h, w, c, ZB_IN_SCALE, 0,
			       128.0 * 128.0 / 3);

	b->in.tensor = t;
	return t;
}

/*
 * The description of what was built, @out its one output; validated.
 * Returns 0 or the builder's (or the validator's) error with b->msg.
 */
static inline int zb_finish(struct zb *b, uint32_t out)
{
	struct rkaccel_graph_desc *d = &b->desc;
	int ret;

	if (b->err)
		return b->err;
	for (uint32_t i = 0; i < b->nn; i++)
		b->n[i].inputs = b->e + b->first[i];
	b->out = out;
	*d = (struct rkaccel_graph_desc){
		.batch = b->batch, .num_tensors = b->nt, .tensors = b->t, .num_nodes = b->nn,
		.nodes = b->n, .num_inputs = 1, .inputs = &b->in, .num_outputs = 1,
		.outputs = &b->out,
	};
	ret = rkaccel_graph_validate(d, b->msg, sizeof(b->msg));
	if (ret)
		b->err = ret;
	return ret;
}

#endif /* RKACCEL_TOOLS_ZOO_BUILD_H */
