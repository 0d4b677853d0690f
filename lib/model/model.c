// SPDX-License-Identifier: MIT
/*
 * Quantized MLP models: validation, the file format (parse, serialize, load,
 * save, CRC) and copies of descriptions; the seeded generator is
 * model_random.c. Documentation/model-format.rst is the spec.
 *
 * Nothing here trusts the file: every field is read with explicit
 * little-endian loads at offsets proven to lie inside the image, every size
 * and offset is checked in 64-bit arithmetic that cannot wrap (all factors
 * are range-checked first), and arrays are copied out before any use.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model.h"

/* File layout, version 1.0. */
#define MAGIC			"RKML"
#define HEADER_SIZE		64u
#define RECORD_SIZE		64u
#define MAX_EXT_SIZE		4096u	/* header_size, record_size of newer minors */
#define DATA_ALIGN		64u

/* Header fields (byte offsets). */
#define H_MAGIC			0
#define H_MAJOR			4
#define H_MINOR			6
#define H_HEADER_SIZE		8
#define H_RECORD_SIZE		12
#define H_FLAGS			16
#define H_ROWS			20
#define H_NUM_LAYERS		24
#define H_RESERVED0		28
#define H_FILE_SIZE		32
#define H_CHECKSUM		40
#define H_RESERVED1		44	/* to 64 */

/* Layer record fields (byte offsets). */
#define R_IN_FEATURES		0
#define R_OUT_FEATURES		4
#define R_FLAGS			8
#define R_IN_ZP			12
#define R_OUT_ZP		16
#define R_IN_SCALE		20
#define R_WEIGHT_SCALE		24
#define R_OUT_SCALE		28
#define R_WEIGHTS_OFFSET	32
#define R_WEIGHTS_SIZE		40
#define R_BIAS_OFFSET		48
#define R_BIAS_SIZE		56

/* Version 2.0: the header's bytes 44..51 and a 128-byte record's second half. */
#define H2_HEIGHT		44
#define H2_WIDTH		48
#define H2_RESERVED		52	/* to 64 */
#define RECORD2_SIZE		128u
#define R_OP			64
#define R_KERNEL_W		68
#define R_KERNEL_H		72
#define R_STRIDE		76
#define R_PAD_TOP		80
#define R_PAD_LEFT		84
#define R_PAD_BOTTOM		88
#define R_PAD_RIGHT		92
#define R_ADD_INPUT		96
#define R_RESERVED2		100	/* to 112 */
#define R_WSCALES_OFFSET	112
#define R_WSCALES_SIZE		120

/* --- helpers ------------------------------------------------------------- */

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void set_msg(char *msg, size_t msg_len, const char *fmt, ...)
{
	va_list ap;

	if (!msg || !msg_len)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, msg_len, fmt, ap);
	va_end(ap);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static uint32_t float_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

float bits_float(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

/* A positive normal binary32: not zero, subnormal, negative, infinite, NaN. */
static int scale_ok(float f)
{
	uint32_t u = float_bits(f);
	uint32_t exp = (u >> 23) & 0xff;

	return !(u >> 31) && exp != 0 && exp != 0xff;
}

static uint64_t align_up(uint64_t v)
{
	return (v + DATA_ALIGN - 1) & ~(uint64_t)(DATA_ALIGN - 1);
}

/*
 * CRC-32 (ISO-HDLC: reflected polynomial 0xEDB88320, init and final xor
 * 0xFFFFFFFF), the one of zlib and PNG; crc32("123456789") = 0xCBF43926.
 * @crc is the running value with the final xor undone: start with 0.
 */
uint32_t crc32_update(uint32_t crc, const uint8_t *p, size_t len)
{
	static uint32_t table[256];
	static int ready;

	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
		/* Idempotent: racing threads write the same values. */
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;

			for (int k = 0; k < 8; k++)
				c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
			__atomic_store_n(&table[i], c, __ATOMIC_RELAXED);
		}
		__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	}
	crc = ~crc;
	while (len--)
		crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

/* The file checksum: CRC-32 of the whole image, the checksum field as zero. */
uint32_t model_file_crc(const uint8_t *img, size_t len)
{
	static const uint8_t zero[4];
	uint32_t crc;

	crc = crc32_update(0, img, H_CHECKSUM);
	crc = crc32_update(crc, zero, sizeof(zero));
	return crc32_update(crc, img + H_CHECKSUM + 4, len - H_CHECKSUM - 4);
}

/* --- array sizes --------------------------------------------------------- */

/* Bytes of a layer's weights; the kernel fields are range-checked or zero. */
uint64_t weights_size(const struct rkaccel_layer_desc *l)
{
	uint64_t taps = (uint64_t)(l->kernel_w ? l->kernel_w : 1) * (l->kernel_h ? l->kernel_h : 1);

	switch (l->op) {
	case RKACCEL_OP_FC:
		return (uint64_t)l->in_features * l->out_features;
	case RKACCEL_OP_CONV:
		return (uint64_t)l->in_features * l->out_features * taps;
	case RKACCEL_OP_DWCONV:
		return (uint64_t)l->out_features * taps;
	default:
		return 0;
	}
}

static uint64_t bias_size(const struct rkaccel_layer_desc *l)
{
	return l->op <= RKACCEL_OP_DWCONV ? (uint64_t)l->out_features * sizeof(int32_t) : 0;
}

static uint64_t wscales_size(const struct rkaccel_layer_desc *l)
{
	return l->weight_scales ? (uint64_t)l->out_features * sizeof(float) : 0;
}

/* --- validation ---------------------------------------------------------- */

/* set_msg() and -EINVAL: every validator's refusal (model.h). */
int model_bad(char *msg, size_t msg_len, const char *fmt, ...)
{
	va_list ap;

	if (msg && msg_len) {
		va_start(ap, fmt);
		vsnprintf(msg, msg_len, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int check_scale(const char *name, unsigned int i, float f, char *msg, size_t msg_len)
{
	if (scale_ok(f))
		return 0;
	return model_bad(msg, msg_len,
		   "layer %u: %s %g (bits 0x%08x) is not a positive normal finite number",
		   i, name, (double)f, float_bits(f));
}

/* --- graphs (version 2.0) ------------------------------------------------ */

static bool has_weights(const struct rkaccel_layer_desc *l)
{
	return l->op <= RKACCEL_OP_DWCONV;
}

static bool is_pool(const struct rkaccel_layer_desc *l)
{
	return l->op == RKACCEL_OP_MAXPOOL || l->op == RKACCEL_OP_AVGPOOL;
}

/* Whether @d needs version 2.0: anything a fully connected stack does not have. */
static bool is_graph(const struct rkaccel_model_desc *d)
{
	if (d->height || d->width)
		return true;
	for (uint32_t i = 0; i < d->num_layers; i++) {
		const struct rkaccel_layer_desc *l = &d->layers[i];

		if (l->op || l->kernel_w || l->kernel_h || l->stride || l->pad_top ||
		    l->pad_left || l->pad_bottom || l->pad_right || l->add_input ||
		    l->weight_scales || (l->flags & RKACCEL_LAYER_ADD))
			return true;
	}
	return false;
}

/* Output size of a window of @k with @pads and @stride over @in; 0 if none fits. */
static uint32_t window_out(uint32_t in, uint32_t k, uint32_t pad0, uint32_t pad1, uint32_t s)
{
	uint64_t span = (uint64_t)in + pad0 + pad1;

	if (!s || span < k)
		return 0;
	return (uint32_t)((span - k) / s + 1);
}

/* Shape of layer @l's output for an input of @h x @w. */
static void layer_out_hw(const struct rkaccel_layer_desc *l, uint32_t h, uint32_t w,
			 uint32_t *oh, uint32_t *ow)
{
	if (l->op == RKACCEL_OP_FC) {
		*oh = h;
		*ow = w;
	} else if (l->op == RKACCEL_OP_AVGPOOL && !l->kernel_w && !l->kernel_h) {
		*oh = 1;
		*ow = 1;
	} else {
		*oh = window_out(h, l->kernel_h, l->pad_top, l->pad_bottom, l->stride);
		*ow = window_out(w, l->kernel_w, l->pad_left, l->pad_right, l->stride);
	}
}

/* The input's shape: tensor 0. */
static struct rkaccel_tensor_shape input_shape(const struct rkaccel_model_desc *d)
{
	return (struct rkaccel_tensor_shape){
		.height = d->height ? d->height : d->rows, .width = d->width ? d->width : 1,
		.channels = d->layers[0].in_features, .scale = d->layers[0].in_scale,
		.zero_point = d->layers[0].in_zero_point,
	};
}

/* Layer @l's output shape for its input of shape @in (a concat: its first). */
static struct rkaccel_tensor_shape layer_out(const struct rkaccel_layer_desc *l,
					     const struct rkaccel_tensor_shape *in)
{
	struct rkaccel_tensor_shape o = { .channels = l->out_features, .scale = l->out_scale,
					  .zero_point = l->out_zero_point };

	if (l->op == RKACCEL_OP_CONCAT) {
		o.height = in->height;
		o.width = in->width;
	} else {
		layer_out_hw(l, in->height, in->width, &o.height, &o.width);
	}
	return o;
}

int rkaccel_model_tensor(const struct rkaccel_model_desc *desc, uint32_t t,
			 struct rkaccel_tensor_shape *shape)
{
	struct rkaccel_tensor_shape s;

	if (!desc || !shape || !desc->layers || t > desc->num_layers ||
	    desc->num_layers > RKACCEL_MODEL_MAX_MEM_LAYERS)
		return -EINVAL;
	/* a chain: each shape from the one before, no array */
	s = input_shape(desc);
	for (uint32_t i = 0; i < t; i++)
		s = layer_out(&desc->layers[i], &s);
	*shape = s;
	return 0;
}

/* Convolution windows: AlexNet's 11x11/4 (Documentation/datapath.rst). */
#define CONV_MAX_KERNEL	11
#define CONV_MAX_STRIDE	4

/* Kernel, stride and padding of a convolution or pool. */
static int check_window(const struct rkaccel_layer_desc *l, unsigned int i, uint32_t kmax,
			uint32_t smax, char *msg, size_t msg_len)
{
	if (l->op == RKACCEL_OP_AVGPOOL && !l->kernel_w && !l->kernel_h) {
		if (l->stride || l->pad_top || l->pad_left || l->pad_bottom || l->pad_right)
			return model_bad(msg, msg_len,
				   "layer %u: a global average pool takes no stride or padding", i);
		return 0;
	}
	if (l->kernel_w < 1 || l->kernel_w > kmax || l->kernel_h < 1 || l->kernel_h > kmax)
		return model_bad(msg, msg_len, "layer %u: kernel %ux%u out of range 1..%u", i,
			   l->kernel_w, l->kernel_h, kmax);
	if (l->stride < 1 || l->stride > smax)
		return model_bad(msg, msg_len, "layer %u: stride %u out of range 1..%u", i, l->stride,
			   smax);
	if (l->pad_top >= l->kernel_h || l->pad_bottom >= l->kernel_h ||
	    l->pad_left >= l->kernel_w || l->pad_right >= l->kernel_w)
		return model_bad(msg, msg_len,
			   "layer %u: padding %u,%u,%u,%u (top, left, bottom, right) not below the kernel",
			   i, l->pad_top, l->pad_left, l->pad_bottom, l->pad_right);
	return 0;
}

/* What each operation allows of the 2.0 fields. */
static int check_op(const struct rkaccel_layer_desc *l, unsigned int i, char *msg,
		    size_t msg_len)
{
	if (l->op >= RKACCEL_OP_COUNT)
		return model_bad(msg, msg_len, "layer %u: unknown op %u", i, l->op);
	if (l->op == RKACCEL_OP_FC) {
		if (l->kernel_w || l->kernel_h || l->stride || l->pad_top || l->pad_left ||
		    l->pad_bottom || l->pad_right)
			return model_bad(msg, msg_len,
				   "layer %u: a fully connected layer has no kernel, stride or padding",
				   i);
		return 0;
	}
	if (!is_pool(l))
		return check_window(l, i, CONV_MAX_KERNEL, CONV_MAX_STRIDE, msg, msg_len);
	if (l->op == RKACCEL_OP_MAXPOOL && !l->kernel_w && !l->kernel_h)
		return model_bad(msg, msg_len, "layer %u: max pooling needs a kernel", i);
	if (l->flags)
		return model_bad(msg, msg_len, "layer %u: flags 0x%x on a pool", i, l->flags);
	if (l->weight_scales)
		return model_bad(msg, msg_len, "layer %u: weight_scales on a pool", i);
	if (l->out_zero_point != l->in_zero_point ||
	    float_bits(l->out_scale) != float_bits(l->in_scale))
		return model_bad(msg, msg_len,
			   "layer %u: a pool keeps the quantization: out_scale %.9g, out_zero_point %d differ from the input's",
			   i, (double)l->out_scale, l->out_zero_point);
	return check_window(l, i, 16, 16, msg, msg_len);
}

/* Shapes, the residual input, per-channel scales: what needs the tensors. */
static int check_graph_layer(const struct rkaccel_layer_desc *l, unsigned int i, uint32_t src,
			     const struct rkaccel_tensor_shape *t, char *msg, size_t msg_len)
{
	int ret = check_op(l, i, msg, msg_len);

	if (ret)
		return ret;
	if ((l->op == RKACCEL_OP_DWCONV || is_pool(l)) && l->out_features != l->in_features)
		return model_bad(msg, msg_len, "layer %u: out_features %u must equal in_features %u",
			   i, l->out_features, l->in_features);
	if (!t[i + 1].height || !t[i + 1].width)
		return model_bad(msg, msg_len, "layer %u: the window does not fit the %ux%u input", i,
			   t[src].height, t[src].width);
	if (!(l->flags & RKACCEL_LAYER_ADD)) {
		if (l->add_input)
			return model_bad(msg, msg_len, "layer %u: add_input %u without flag ADD", i,
				   l->add_input);
	} else if (l->add_input > i) {
		return model_bad(msg, msg_len, "layer %u: add_input %u is not an earlier tensor", i,
			   l->add_input);
	} else if (l->flags & RKACCEL_LAYER_OUT_INT32) {
		return model_bad(msg, msg_len, "layer %u: flag ADD needs an int8 output", i);
	} else if (t[l->add_input].height != t[i + 1].height ||
		   t[l->add_input].width != t[i + 1].width ||
		   t[l->add_input].channels != t[i + 1].channels) {
		return model_bad(msg, msg_len, "layer %u: add_input %u is %ux%ux%u, the output %ux%ux%u",
			   i, l->add_input, t[l->add_input].height, t[l->add_input].width,
			   t[l->add_input].channels, t[i + 1].height, t[i + 1].width,
			   t[i + 1].channels);
	}
	for (uint32_t n = 0; l->weight_scales && n < l->out_features; n++) {
		float f = l->weight_scales[n];

		if (!scale_ok(f) || f > l->weight_scale)
			return model_bad(msg, msg_len,
				   "layer %u: weight_scales[%u] %g is not a positive normal number up to weight_scale",
				   i, n, (double)f);
	}
	return 0;
}

/* Tensor @src feeds layer @i: channels and quantization as the layer takes them. */
static int check_feed(const struct rkaccel_layer_desc *l, unsigned int i, uint32_t src,
		      const struct rkaccel_tensor_shape *t, char *msg, size_t msg_len)
{
	const struct rkaccel_tensor_shape *s = &t[src];
	char from[32];

	if (src)
		snprintf(from, sizeof(from), "layer %u has out", src - 1);
	else
		snprintf(from, sizeof(from), "the input has in");
	if (l->in_features != s->channels)
		return model_bad(msg, msg_len, "layer %u: in_features %u does not chain: %s_features %u",
			   i, l->in_features, from, s->channels);
	if (l->in_zero_point != s->zero_point)
		return model_bad(msg, msg_len,
			   "layer %u: in_zero_point %d does not chain: %s_zero_point %d",
			   i, l->in_zero_point, from, s->zero_point);
	if (float_bits(l->in_scale) != float_bits(s->scale))
		return model_bad(msg, msg_len, "layer %u: in_scale %.9g does not chain: %s_scale %.9g",
			   i, (double)l->in_scale, from, (double)s->scale);
	return 0;
}

/* A concat: earlier tensors of one size and its quantization, channels summed. */
static int check_concat(const struct rkaccel_layer_desc *l, unsigned int i,
			const struct model_io *io, const uint32_t *cat, uint32_t num_cat,
			const struct rkaccel_tensor_shape *t, char *msg, size_t msg_len)
{
	uint64_t sum = 0;

	if (io->cat_count < 2 || io->cat_first > num_cat || io->cat_count > num_cat - io->cat_first)
		return model_bad(msg, msg_len, "layer %u: concat of %u inputs at %u", i,
			   io->cat_count, io->cat_first);
	if (l->flags || l->weight_scales || l->in_features != l->out_features)
		return model_bad(msg, msg_len,
			   "layer %u: a concat has no flags or weight scales, in_features == out_features",
			   i);
	for (uint32_t k = 0; k < io->cat_count; k++) {
		uint32_t s = cat[io->cat_first + k];

		if (s > i)
			return model_bad(msg, msg_len, "layer %u: concat input %u is not an earlier tensor",
				   i, s);
		if (t[s].height != t[cat[io->cat_first]].height ||
		    t[s].width != t[cat[io->cat_first]].width)
			return model_bad(msg, msg_len, "layer %u: concat input %u is %ux%u, the first %ux%u",
				   i, s, t[s].height, t[s].width, t[cat[io->cat_first]].height,
				   t[cat[io->cat_first]].width);
		if (t[s].zero_point != l->out_zero_point ||
		    float_bits(t[s].scale) != float_bits(l->out_scale))
			return model_bad(msg, msg_len,
				   "layer %u: concat input %u is quantized otherwise than the concat", i, s);
		sum += t[s].channels;
	}
	if (sum != l->out_features)
		return model_bad(msg, msg_len, "layer %u: concat inputs have %llu channels, out_features %u",
			   i, (unsigned long long)sum, l->out_features);
	return 0;
}

/*
 * The input shape, then every layer against the tensors before it; each
 * shape follows the tensor the layer reads (@io NULL: the one before).
 */
static int check_graph(const struct rkaccel_model_desc *d, const struct model_io *io,
		       const uint32_t *cat, uint32_t num_cat, struct rkaccel_tensor_shape *t,
		       char *msg, size_t msg_len)
{
	int ret;

	if ((d->height || d->width) && (uint64_t)d->height * d->width != d->rows)
		return model_bad(msg, msg_len, "height %u x width %u is not rows %u", d->height,
			   d->width, d->rows);
	t[0] = input_shape(d);
	for (uint32_t i = 0; i < d->num_layers; i++) {
		const struct rkaccel_layer_desc *l = &d->layers[i];
		uint32_t src = io ? io[i].src : i;

		if (l->op == RKACCEL_OP_CONCAT) {
			if (!io)
				return model_bad(msg, msg_len, "layer %u: unknown op %u", i, l->op);
			ret = check_concat(l, i, &io[i], cat, num_cat, t, msg, msg_len);
			if (ret)
				return ret;
			t[i + 1] = layer_out(l, &t[cat[io[i].cat_first]]);
			continue;
		}
		if (src > i)
			return model_bad(msg, msg_len, "layer %u: input %u is not an earlier tensor", i,
				   src);
		if (i || src)
			ret = check_feed(l, i, src, t, msg, msg_len);
		else
			ret = 0;
		if (ret)
			return ret;
		t[i + 1] = layer_out(l, &t[src]);
		ret = check_graph_layer(l, i, src, t, msg, msg_len);
		if (ret)
			return ret;
	}
	return 0;
}

static int check_layer(const struct rkaccel_layer_desc *l, unsigned int i, int last,
		       char *msg, size_t msg_len)
{
	int ret;

	if (l->in_features < 1 || l->in_features > RKACCEL_MODEL_MAX_FEATURES)
		return model_bad(msg, msg_len, "layer %u: in_features %u out of range 1..%u",
			   i, l->in_features, RKACCEL_MODEL_MAX_FEATURES);
	if (l->out_features < 1 || l->out_features > RKACCEL_MODEL_MAX_FEATURES)
		return model_bad(msg, msg_len, "layer %u: out_features %u out of range 1..%u",
			   i, l->out_features, RKACCEL_MODEL_MAX_FEATURES);
	if (l->flags & ~LAYER_FLAGS)
		return model_bad(msg, msg_len, "layer %u: unknown flags 0x%x", i,
			   l->flags & ~LAYER_FLAGS);
	if ((l->flags & RKACCEL_LAYER_OUT_INT32) && !last)
		return model_bad(msg, msg_len,
			   "layer %u: flag OUT_INT32 is allowed on the last layer only", i);
	if (l->in_zero_point < -128 || l->in_zero_point > 127)
		return model_bad(msg, msg_len, "layer %u: in_zero_point %d out of range -128..127",
			   i, l->in_zero_point);
	if (l->out_zero_point < -128 || l->out_zero_point > 127)
		return model_bad(msg, msg_len, "layer %u: out_zero_point %d out of range -128..127",
			   i, l->out_zero_point);
	if ((l->flags & RKACCEL_LAYER_OUT_INT32) && l->out_zero_point)
		return model_bad(msg, msg_len, "layer %u: out_zero_point %d must be 0 with OUT_INT32",
			   i, l->out_zero_point);
	ret = check_scale("in_scale", i, l->in_scale, msg, msg_len);
	if (!ret)
		ret = check_scale("weight_scale", i, l->weight_scale, msg, msg_len);
	if (!ret)
		ret = check_scale("out_scale", i, l->out_scale, msg, msg_len);
	if (ret)
		return ret;
	if (!has_weights(l))
		return 0;
	if (!l->weights)
		return model_bad(msg, msg_len, "layer %u: weights is NULL", i);
	if (!l->bias)
		return model_bad(msg, msg_len, "layer %u: bias is NULL", i);
	for (uint32_t n = 0; n < l->out_features; n++) {
		int32_t b = l->bias[n];

		if (b < -RKACCEL_MODEL_MAX_ABS_BIAS || b > RKACCEL_MODEL_MAX_ABS_BIAS)
			return model_bad(msg, msg_len,
				   "layer %u: bias[%u] = %d out of range -%d..%d", i, n, b,
				   RKACCEL_MODEL_MAX_ABS_BIAS, RKACCEL_MODEL_MAX_ABS_BIAS);
	}
	return 0;
}

static int check_chain(const struct rkaccel_layer_desc *p, const struct rkaccel_layer_desc *l,
		       unsigned int i, char *msg, size_t msg_len)
{
	if (l->in_features != p->out_features)
		return model_bad(msg, msg_len,
			   "layer %u: in_features %u does not chain: layer %u has out_features %u",
			   i, l->in_features, i - 1, p->out_features);
	if (l->in_zero_point != p->out_zero_point)
		return model_bad(msg, msg_len,
			   "layer %u: in_zero_point %d does not chain: layer %u has out_zero_point %d",
			   i, l->in_zero_point, i - 1, p->out_zero_point);
	if (float_bits(l->in_scale) != float_bits(p->out_scale))
		return model_bad(msg, msg_len,
			   "layer %u: in_scale %.9g does not chain: layer %u has out_scale %.9g",
			   i, (double)l->in_scale, i - 1, (double)p->out_scale);
	return 0;
}

int model_check(const struct rkaccel_model_desc *desc, const struct model_io *io,
		const uint32_t *cat, uint32_t num_cat, struct rkaccel_tensor_shape *shapes,
		char *msg, size_t msg_len)
{
	struct rkaccel_tensor_shape *t;
	uint64_t weight_bytes = 0;
	int ret;

	if (msg && msg_len)
		msg[0] = '\0';
	if (!desc)
		return model_bad(msg, msg_len, "model description is NULL");
	if (desc->rows < 1 || desc->rows > RKACCEL_MODEL_MAX_ROWS)
		return model_bad(msg, msg_len, "rows %u out of range 1..%u", desc->rows,
			   RKACCEL_MODEL_MAX_ROWS);
	if (desc->num_layers < 1 || desc->num_layers > RKACCEL_MODEL_MAX_MEM_LAYERS)
		return model_bad(msg, msg_len, "num_layers %u out of range 1..%u", desc->num_layers,
			   RKACCEL_MODEL_MAX_MEM_LAYERS);
	if (!desc->layers)
		return model_bad(msg, msg_len, "layers is NULL");

	for (uint32_t i = 0; i < desc->num_layers; i++) {
		const struct rkaccel_layer_desc *l = &desc->layers[i];
		bool concat = io && l->op == RKACCEL_OP_CONCAT;

		ret = check_layer(l, i, i == desc->num_layers - 1, msg, msg_len);
		if (!ret && !concat)
			ret = check_op(l, i, msg, msg_len);
		if (!ret && i && !io)
			ret = check_chain(&desc->layers[i - 1], l, i, msg, msg_len);
		if (ret)
			return ret;
		weight_bytes += weights_size(l);
	}
	if (weight_bytes > RKACCEL_MODEL_MAX_WEIGHT_BYTES)
		return model_bad(msg, msg_len, "total weights %llu bytes exceed the limit of %u",
			   (unsigned long long)weight_bytes, RKACCEL_MODEL_MAX_WEIGHT_BYTES);
	t = shapes ? shapes : malloc(((size_t)desc->num_layers + 1) * sizeof(*t));
	if (!t)
		return model_bad(msg, msg_len, "out of memory");
	ret = check_graph(desc, io, cat, num_cat, t, msg, msg_len);
	if (t != shapes)
		free(t);
	return ret;
}

int rkaccel_model_validate(const struct rkaccel_model_desc *desc, char *msg, size_t msg_len)
{
	return model_check(desc, NULL, NULL, 0, NULL, msg, msg_len);
}

/* --- the model object ---------------------------------------------------- */

/*
 * A model for the shapes in @layers (features already range-checked) with
 * its arrays allocated, zeroed and pointed to; the caller fills them in.
 */
int model_alloc(uint32_t rows, uint32_t num_layers,
		const struct rkaccel_layer_desc *layers, struct rkaccel_model **out)
{
	struct rkaccel_model *m;
	uint64_t size = 0;
	uint8_t *p;

	for (uint32_t i = 0; i < num_layers; i++)
		size = align_up(align_up(align_up(size + weights_size(&layers[i])) +
					 bias_size(&layers[i])) + wscales_size(&layers[i]));
	if (size > SIZE_MAX)
		return -ENOMEM;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->layers = malloc((size_t)num_layers * sizeof(*m->layers));
	m->data = aligned_alloc(DATA_ALIGN, (size_t)size);
	if (!m->data || !m->layers) {
		rkaccel_model_free(m);
		return -ENOMEM;
	}
	memset(m->data, 0, (size_t)size);
	memcpy(m->layers, layers, num_layers * sizeof(*layers));
	p = m->data;
	for (uint32_t i = 0; i < num_layers; i++) {
		m->layers[i].weights = (const int8_t *)p;
		p += align_up(weights_size(&layers[i]));
		m->layers[i].bias = (const int32_t *)(void *)p;
		p += align_up(bias_size(&layers[i]));
		if (!has_weights(&layers[i])) {
			m->layers[i].weights = NULL;
			m->layers[i].bias = NULL;
		}
		if (layers[i].weight_scales) {
			m->layers[i].weight_scales = (const float *)(void *)p;
			p += align_up(wscales_size(&layers[i]));
		}
	}
	m->desc.rows = rows;
	m->desc.num_layers = num_layers;
	m->desc.layers = m->layers;
	*out = m;
	return 0;
}

const struct rkaccel_model_desc *rkaccel_model_desc(const struct rkaccel_model *model)
{
	return &model->desc;
}

const struct model_io *model_links(const struct rkaccel_model *model, const uint32_t **cat)
{
	*cat = model->cat;
	return model->io;
}

int rkaccel_model_inputs(const struct rkaccel_model *model, uint32_t layer, uint32_t *tensors,
			 uint32_t max)
{
	const struct model_io *io;

	if (!model || layer >= model->desc.num_layers || (max && !tensors))
		return -EINVAL;
	io = model->io ? &model->io[layer] : NULL;
	if (io && model->layers[layer].op == RKACCEL_OP_CONCAT) {
		for (uint32_t k = 0; k < io->cat_count && k < max; k++)
			tensors[k] = model->cat[io->cat_first + k];
		return (int)io->cat_count;
	}
	if (max)
		tensors[0] = io ? io->src : layer;
	return 1;
}

int rkaccel_model_graph_tensor(const struct rkaccel_model *model, uint32_t t)
{
	if (!model || t > model->desc.num_layers)
		return -EINVAL;
	if (!model->graph_tensor || model->graph_tensor[t] == MODEL_NO_TENSOR)
		return -ENOENT;
	return (int)model->graph_tensor[t];
}

int rkaccel_model_shape(const struct rkaccel_model *model, uint32_t t,
			struct rkaccel_tensor_shape *shape)
{
	struct rkaccel_tensor_shape *all;
	int ret;

	if (!model || !shape || t > model->desc.num_layers)
		return -EINVAL;
	if (!model->io)
		return rkaccel_model_tensor(&model->desc, t, shape);
	all = malloc(((size_t)model->desc.num_layers + 1) * sizeof(*all));
	if (!all)
		return -ENOMEM;
	/* a model object is valid: this only fills the shapes */
	ret = model_check(&model->desc, model->io, model->cat, model->num_cat, all, NULL, 0);
	if (!ret)
		*shape = all[t];
	free(all);
	return ret;
}

void rkaccel_model_free(struct rkaccel_model *model)
{
	if (!model)
		return;
	free(model->data);
	free(model->layers);
	free(model->io);
	free(model->cat);
	free(model->graph_tensor);
	free(model);
}

/* --- parse --------------------------------------------------------------- */

/* A byte range of the file that one array occupies, for the overlap check. */
struct range {
	uint64_t start, end;
	unsigned int layer;
	const char *what;
};

/* Check one array's place in the file: aligned, after the records, inside. */
static int check_range(const struct range *r, uint64_t size, uint64_t want, uint64_t data_start,
		       uint64_t file_size, char *msg, size_t msg_len)
{
	if (!size && !want && !r->start)
		return 0;	/* a pool's absent arrays */
	if (size != want)
		return model_bad(msg, msg_len, "layer %u: %s size %llu bytes, the shape needs %llu",
			   r->layer, r->what, (unsigned long long)size, (unsigned long long)want);
	if (r->start % DATA_ALIGN)
		return model_bad(msg, msg_len, "layer %u: %s offset %llu is not a multiple of %u",
			   r->layer, r->what, (unsigned long long)r->start, DATA_ALIGN);
	if (r->start < data_start)
		return model_bad(msg, msg_len,
			   "layer %u: %s start at byte %llu, inside the header and layer records (%llu bytes)",
			   r->layer, r->what, (unsigned long long)r->start,
			   (unsigned long long)data_start);
	/* start <= file_size first, so that the subtraction cannot wrap */
	if (r->start > file_size || size > file_size - r->start)
		return model_bad(msg, msg_len, "layer %u: %s end at byte %llu, file has %llu",
			   r->layer, r->what,
			   r->start > UINT64_MAX - size ? (unsigned long long)UINT64_MAX :
			   (unsigned long long)(r->start + size),
			   (unsigned long long)file_size);
	return 0;
}

/* Read the fixed header; everything but the layer records and data. */
static int parse_header(const uint8_t *img, size_t len, uint32_t *header_size,
			uint32_t *record_size, uint16_t *major_out, char *msg, size_t msg_len)
{
	uint32_t rec_min;
	uint16_t major, minor;
	uint64_t file_size;
	uint32_t crc, want;

	if (len < HEADER_SIZE)
		return model_bad(msg, msg_len, "file is %zu bytes, shorter than the %u-byte header",
			   len, HEADER_SIZE);
	if (memcmp(img + H_MAGIC, MAGIC, 4))
		return model_bad(msg, msg_len, "bad magic: not an rkaccel model file");
	major = get16(img + H_MAJOR);
	minor = get16(img + H_MINOR);
	if (major > RKACCEL_MODEL_VERSION_MAJOR) {
		set_msg(msg, msg_len, "version %u.%u is newer than the supported %u.x",
			major, minor, RKACCEL_MODEL_VERSION_MAJOR);
		return -ENOTSUP;
	}
	if (major < 1)
		return model_bad(msg, msg_len, "bad version %u.%u", major, minor);
	*major_out = major;
	rec_min = major == 1 ? RECORD_SIZE : RECORD2_SIZE;
	*header_size = get32(img + H_HEADER_SIZE);
	*record_size = get32(img + H_RECORD_SIZE);
	if (minor == 0 ? *header_size != HEADER_SIZE :
	    *header_size < HEADER_SIZE || *header_size > MAX_EXT_SIZE)
		return model_bad(msg, msg_len, "header_size %u wrong for version %u.%u",
			   *header_size, major, minor);
	if (minor == 0 ? *record_size != rec_min :
	    *record_size < rec_min || *record_size > MAX_EXT_SIZE)
		return model_bad(msg, msg_len, "layer record_size %u wrong for version %u.%u",
			   *record_size, major, minor);
	file_size = get64(img + H_FILE_SIZE);
	if (file_size != len)
		return model_bad(msg, msg_len, "header says the file is %llu bytes, it is %zu (%s)",
			   (unsigned long long)file_size, len,
			   file_size > len ? "truncated" : "trailing bytes");
	want = get32(img + H_CHECKSUM);
	crc = model_file_crc(img, len);
	if (crc != want) {
		set_msg(msg, msg_len,
			"checksum mismatch: header says 0x%08x, contents give 0x%08x (corrupted file)",
			want, crc);
		return -EBADMSG;
	}
	if (get32(img + H_FLAGS))
		return model_bad(msg, msg_len, "unknown header flags 0x%x", get32(img + H_FLAGS));
	if (get32(img + H_RESERVED0))
		return model_bad(msg, msg_len, "reserved header bytes 28..31 are not zero");
	for (unsigned int i = major == 1 ? H_RESERVED1 : H2_RESERVED; i < HEADER_SIZE; i++)
		if (img[i])
			return model_bad(msg, msg_len, "reserved header byte %u is not zero", i);
	return 0;
}

/* The 2.0 half of a layer record; the weight scales' place goes to @sc. */
static int parse_record2(const uint8_t *r, struct rkaccel_layer_desc *l, struct range *sc,
			 uint64_t *ssize, unsigned int i, char *msg, size_t msg_len)
{
	static const float present = 1.0f;	/* non-NULL until the copy */

	l->op = get32(r + R_OP);
	l->kernel_w = get32(r + R_KERNEL_W);
	l->kernel_h = get32(r + R_KERNEL_H);
	l->stride = get32(r + R_STRIDE);
	l->pad_top = get32(r + R_PAD_TOP);
	l->pad_left = get32(r + R_PAD_LEFT);
	l->pad_bottom = get32(r + R_PAD_BOTTOM);
	l->pad_right = get32(r + R_PAD_RIGHT);
	l->add_input = get32(r + R_ADD_INPUT);
	if (get32(r + R_RESERVED2) || get64(r + R_RESERVED2 + 4))
		return model_bad(msg, msg_len, "layer %u: reserved record bytes 100..111 are not zero", i);
	/* the sizes below rely on the op and kernel's bounds */
	if (check_op(l, i, msg, msg_len))
		return -EINVAL;
	sc->start = get64(r + R_WSCALES_OFFSET);
	*ssize = get64(r + R_WSCALES_SIZE);
	if (*ssize)
		l->weight_scales = &present;
	else if (sc->start)
		return model_bad(msg, msg_len, "layer %u: weight_scales offset %llu with size 0", i,
			   (unsigned long long)sc->start);
	return 0;
}

/* Copy a layer's arrays out of the file image. */
static void copy_arrays(const uint8_t *img, const struct range *rg,
			struct rkaccel_layer_desc *l)
{
	int32_t *bias = (int32_t *)l->bias;
	float *sc = (float *)l->weight_scales;

	if (l->weights)
		memcpy((int8_t *)l->weights, img + rg[0].start, weights_size(l));
	for (uint32_t n = 0; bias && n < l->out_features; n++)
		bias[n] = (int32_t)get32(img + rg[1].start + 4 * (uint64_t)n);
	for (uint32_t n = 0; sc && n < l->out_features; n++)
		sc[n] = bits_float(get32(img + rg[2].start + 4 * (uint64_t)n));
}

int rkaccel_model_parse(const void *buf, size_t len, struct rkaccel_model **model,
			char *msg, size_t msg_len)
{
	struct rkaccel_layer_desc layers[RKACCEL_MODEL_MAX_LAYERS];
	struct range ranges[3 * RKACCEL_MODEL_MAX_LAYERS];
	const uint8_t *img = buf;
	uint32_t header_size = 0, record_size = 0, rows, num_layers;
	uint16_t major = 1;
	uint64_t data_start;
	struct rkaccel_model *m;
	int ret;

	if (msg && msg_len)
		msg[0] = '\0';
	if (!model || (!buf && len))
		return model_bad(msg, msg_len, "invalid arguments");
	ret = parse_header(img, len, &header_size, &record_size, &major, msg, msg_len);
	if (ret)
		return ret;

	rows = get32(img + H_ROWS);
	num_layers = get32(img + H_NUM_LAYERS);
	if (rows < 1 || rows > RKACCEL_MODEL_MAX_ROWS)
		return model_bad(msg, msg_len, "rows %u out of range 1..%u", rows,
			   RKACCEL_MODEL_MAX_ROWS);
	if (num_layers < 1 || num_layers > RKACCEL_MODEL_MAX_LAYERS)
		return model_bad(msg, msg_len, "num_layers %u out of range 1..%u", num_layers,
			   RKACCEL_MODEL_MAX_LAYERS);
	/* both factors are bounded (4096 x 16), the sum cannot wrap */
	data_start = header_size + (uint64_t)num_layers * record_size;
	if (data_start > len)
		return model_bad(msg, msg_len, "layer records end at byte %llu, file has %zu",
			   (unsigned long long)data_start, len);

	for (uint32_t i = 0; i < num_layers; i++) {
		const uint8_t *r = img + header_size + (size_t)i * record_size;
		struct rkaccel_layer_desc *l = &layers[i];
		struct range *w = &ranges[3 * i], *b = &ranges[3 * i + 1], *sc = &ranges[3 * i + 2];
		uint64_t wsize, bsize, ssize = 0;

		*l = (struct rkaccel_layer_desc) {
			.in_features = get32(r + R_IN_FEATURES),
			.out_features = get32(r + R_OUT_FEATURES),
			.flags = get32(r + R_FLAGS),
			.in_zero_point = (int32_t)get32(r + R_IN_ZP),
			.out_zero_point = (int32_t)get32(r + R_OUT_ZP),
			.in_scale = bits_float(get32(r + R_IN_SCALE)),
			.weight_scale = bits_float(get32(r + R_WEIGHT_SCALE)),
			.out_scale = bits_float(get32(r + R_OUT_SCALE)),
		};
		/* the shape first: the expected sizes below rely on its bounds */
		if (l->in_features < 1 || l->in_features > RKACCEL_MODEL_MAX_FEATURES ||
		    l->out_features < 1 || l->out_features > RKACCEL_MODEL_MAX_FEATURES)
			return model_bad(msg, msg_len,
				   "layer %u: shape in_features %u, out_features %u out of range 1..%u",
				   i, l->in_features, l->out_features,
				   RKACCEL_MODEL_MAX_FEATURES);
		if (major == 1 && l->flags & ~LAYER_FLAGS_V1)
			return model_bad(msg, msg_len, "layer %u: unknown flags 0x%x", i,
				   l->flags & ~LAYER_FLAGS_V1);
		*sc = (struct range) { .layer = i, .what = "weight_scales" };
		if (major >= 2) {
			ret = parse_record2(r, l, sc, &ssize, i, msg, msg_len);
			if (ret)
				return ret;
		}
		*w = (struct range) { .start = get64(r + R_WEIGHTS_OFFSET), .layer = i,
				      .what = "weights" };
		*b = (struct range) { .start = get64(r + R_BIAS_OFFSET), .layer = i,
				      .what = "bias" };
		wsize = get64(r + R_WEIGHTS_SIZE);
		bsize = get64(r + R_BIAS_SIZE);
		ret = check_range(w, wsize, weights_size(l), data_start, len, msg, msg_len);
		if (!ret)
			ret = check_range(b, bsize, bias_size(l), data_start, len, msg, msg_len);
		if (!ret && ssize)
			ret = check_range(sc, ssize, wscales_size(l), data_start, len, msg, msg_len);
		if (ret)
			return ret;
		w->end = w->start + wsize;
		b->end = b->start + bsize;
		sc->end = sc->start + ssize;
	}
	for (uint32_t i = 0; i < 3 * num_layers; i++) {
		for (uint32_t j = 0; j < i; j++) {
			const struct range *a = &ranges[j], *c = &ranges[i];

			if (a->start < c->end && c->start < a->end && a->end > a->start &&
			    c->end > c->start)
				return model_bad(msg, msg_len,
					   "layer %u: %s (bytes %llu..%llu) overlaps layer %u %s (bytes %llu..%llu)",
					   c->layer, c->what, (unsigned long long)c->start,
					   (unsigned long long)c->end - 1, a->layer, a->what,
					   (unsigned long long)a->start,
					   (unsigned long long)a->end - 1);
		}
	}

	ret = model_alloc(rows, num_layers, layers, &m);
	if (ret) {
		set_msg(msg, msg_len, "out of memory");
		return ret;
	}
	if (major >= 2) {
		m->desc.height = get32(img + H2_HEIGHT);
		m->desc.width = get32(img + H2_WIDTH);
	}
	for (uint32_t i = 0; i < num_layers; i++)
		copy_arrays(img, &ranges[3 * i], &m->layers[i]);
	ret = rkaccel_model_validate(&m->desc, msg, msg_len);
	if (ret) {
		rkaccel_model_free(m);
		return ret;
	}
	*model = m;
	return 0;
}

/* --- load ---------------------------------------------------------------- */

static const char *file_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFDIR:
		return "a directory";
	case S_IFIFO:
		return "a FIFO";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFSOCK:
		return "a socket";
	default:
		return "not a file";
	}
}

/*
 * Read the regular file at @path into a new buffer *@buf (free() it) of
 * *@len bytes, refusing anything but a regular file of at most
 * RKACCEL_MODEL_MAX_FILE_SIZE; messages start with "@path: ".
 */
int model_read_file(const char *path, uint8_t **out, size_t *out_len, char *msg,
		    size_t msg_len)
{
	struct stat st;
	uint8_t *buf;
	size_t size, done = 0;
	int fd, ret;

	/* O_NONBLOCK: a FIFO without a writer is refused below, not waited for. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		ret = -errno;
		set_msg(msg, msg_len, "%s: %s", path, strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		set_msg(msg, msg_len, "%s: %s", path, strerror(-ret));
		close(fd);
		return ret;
	}
	if (!S_ISREG(st.st_mode)) {
		set_msg(msg, msg_len, "%s: not a regular file (%s)", path, file_kind(st.st_mode));
		close(fd);
		return -EINVAL;
	}
	if ((uint64_t)st.st_size > RKACCEL_MODEL_MAX_FILE_SIZE) {
		set_msg(msg, msg_len, "%s: %lld bytes, more than the limit of %u", path,
			(long long)st.st_size, RKACCEL_MODEL_MAX_FILE_SIZE);
		close(fd);
		return -EFBIG;
	}
	size = (size_t)st.st_size;
	buf = malloc(size ? size : 1);
	if (!buf) {
		close(fd);
		set_msg(msg, msg_len, "out of memory");
		return -ENOMEM;
	}
	while (done < size) {
		ssize_t n = read(fd, buf + done, size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			set_msg(msg, msg_len, "%s: read: %s", path, strerror(-ret));
			free(buf);
			close(fd);
			return ret;
		}
		if (n == 0)
			break;	/* shrank under us: parse what is there */
		done += (size_t)n;
	}
	close(fd);
	*out = buf;
	*out_len = done;
	return 0;
}

/* Put "@path: " before the message of a failed parse. */
void model_msg_prefix(const char *path, char *msg, size_t msg_len)
{
	char *why;

	if (!msg || !msg_len)
		return;
	why = strdup(msg);
	if (why)
		set_msg(msg, msg_len, "%s: %s", path, why);
	free(why);
}

int rkaccel_model_load(const char *path, struct rkaccel_model **model,
		       char *msg, size_t msg_len)
{
	uint8_t *buf;
	size_t len;
	int ret;

	if (msg && msg_len)
		msg[0] = '\0';
	if (!path || !model)
		return model_bad(msg, msg_len, "invalid arguments");
	ret = model_read_file(path, &buf, &len, msg, msg_len);
	if (ret)
		return ret;
	ret = rkaccel_model_parse(buf, len, model, msg, msg_len);
	free(buf);
	if (ret)
		model_msg_prefix(path, msg, msg_len);
	return ret;
}

/* --- serialize and save -------------------------------------------------- */

/* The 2.0 half of layer @l's record; @soff: where its weight scales go. */
static void put_record2(uint8_t *r, const struct rkaccel_layer_desc *l, uint64_t soff)
{
	put32(r + R_OP, l->op);
	put32(r + R_KERNEL_W, l->kernel_w);
	put32(r + R_KERNEL_H, l->kernel_h);
	put32(r + R_STRIDE, l->stride);
	put32(r + R_PAD_TOP, l->pad_top);
	put32(r + R_PAD_LEFT, l->pad_left);
	put32(r + R_PAD_BOTTOM, l->pad_bottom);
	put32(r + R_PAD_RIGHT, l->pad_right);
	put32(r + R_ADD_INPUT, l->add_input);
	put64(r + R_WSCALES_OFFSET, wscales_size(l) ? soff : 0);
	put64(r + R_WSCALES_SIZE, wscales_size(l));
}

/* Record and arrays of layer @l from @off on; returns the end of its arrays. */
static uint64_t put_layer(uint8_t *img, uint8_t *r, const struct rkaccel_layer_desc *l,
			  uint64_t off, bool v2)
{
	uint64_t woff = weights_size(l) ? align_up(off) : 0;
	uint64_t boff = bias_size(l) ? align_up(woff ? woff + weights_size(l) : off) : 0;
	uint64_t end = boff ? boff + bias_size(l) : off;
	uint64_t soff = wscales_size(l) ? align_up(end) : 0;

	put32(r + R_IN_FEATURES, l->in_features);
	put32(r + R_OUT_FEATURES, l->out_features);
	put32(r + R_FLAGS, l->flags);
	put32(r + R_IN_ZP, (uint32_t)l->in_zero_point);
	put32(r + R_OUT_ZP, (uint32_t)l->out_zero_point);
	put32(r + R_IN_SCALE, float_bits(l->in_scale));
	put32(r + R_WEIGHT_SCALE, float_bits(l->weight_scale));
	put32(r + R_OUT_SCALE, float_bits(l->out_scale));
	put64(r + R_WEIGHTS_OFFSET, woff);
	put64(r + R_WEIGHTS_SIZE, weights_size(l));
	put64(r + R_BIAS_OFFSET, boff);
	put64(r + R_BIAS_SIZE, bias_size(l));
	if (v2)
		put_record2(r, l, soff);
	if (woff)
		memcpy(img + woff, l->weights, weights_size(l));
	for (uint32_t n = 0; boff && n < l->out_features; n++)
		put32(img + boff + 4 * (uint64_t)n, (uint32_t)l->bias[n]);
	for (uint32_t n = 0; soff && n < l->out_features; n++)
		put32(img + soff + 4 * (uint64_t)n, float_bits(l->weight_scales[n]));
	return soff ? soff + wscales_size(l) : end;
}

int rkaccel_model_serialize(const struct rkaccel_model_desc *desc, void **buf, size_t *len)
{
	uint64_t size, off;
	uint32_t rec;
	uint8_t *img;
	bool v2;
	int ret;

	if (!buf || !len)
		return -EINVAL;
	ret = rkaccel_model_validate(desc, NULL, 0);
	if (ret)
		return ret;
	if (desc->num_layers > RKACCEL_MODEL_MAX_LAYERS)
		return -EINVAL;	/* a file's limit (model-format.rst) */
	v2 = is_graph(desc);
	rec = v2 ? RECORD2_SIZE : RECORD_SIZE;

	size = HEADER_SIZE + (uint64_t)desc->num_layers * rec;
	for (uint32_t i = 0; i < desc->num_layers; i++) {
		const struct rkaccel_layer_desc *l = &desc->layers[i];

		if (weights_size(l))
			size = align_up(size) + weights_size(l);
		if (bias_size(l))
			size = align_up(size) + bias_size(l);
		if (wscales_size(l))
			size = align_up(size) + wscales_size(l);
	}
	if (size > SIZE_MAX)
		return -ENOMEM;
	img = calloc(1, (size_t)size);
	if (!img)
		return -ENOMEM;

	memcpy(img + H_MAGIC, MAGIC, 4);
	put16(img + H_MAJOR, v2 ? 2 : 1);
	put16(img + H_MINOR, 0);
	put32(img + H_HEADER_SIZE, HEADER_SIZE);
	put32(img + H_RECORD_SIZE, rec);
	put32(img + H_ROWS, desc->rows);
	put32(img + H_NUM_LAYERS, desc->num_layers);
	put64(img + H_FILE_SIZE, size);
	if (v2) {
		put32(img + H2_HEIGHT, desc->height);
		put32(img + H2_WIDTH, desc->width);
	}

	off = HEADER_SIZE + (uint64_t)desc->num_layers * rec;
	for (uint32_t i = 0; i < desc->num_layers; i++)
		off = put_layer(img, img + HEADER_SIZE + (size_t)i * rec, &desc->layers[i], off, v2);
	put32(img + H_CHECKSUM, model_file_crc(img, (size_t)size));
	*buf = img;
	*len = (size_t)size;
	return 0;
}

/* Write @len bytes of @buf to @path (created 0644 or truncated); no blocking open. */
int model_write_file(const char *path, const void *buf, size_t len)
{
	size_t done = 0;
	int fd, ret = 0;

	/* A FIFO without a reader fails at once with ENXIO instead of blocking. */
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0644);
	if (fd < 0 || fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)) {
		ret = -errno;
		if (fd >= 0)
			close(fd);
		return ret;
	}
	while (done < len) {
		ssize_t n = write(fd, (const uint8_t *)buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			break;
		}
		done += (size_t)n;
	}
	if (close(fd) && !ret)
		ret = -errno;
	return ret;
}

int rkaccel_model_save(const struct rkaccel_model_desc *desc, const char *path)
{
	size_t len;
	void *buf;
	int ret;

	if (!path)
		return -EINVAL;
	ret = rkaccel_model_serialize(desc, &buf, &len);
	if (ret)
		return ret;
	ret = model_write_file(path, buf, len);
	free(buf);
	return ret;
}

/* --- copies of descriptions ------------------------------------------------ */

int model_copy_links(const struct rkaccel_model_desc *d, const struct model_io *io,
		     const uint32_t *cat, uint32_t num_cat, struct rkaccel_model **out,
		     char *msg, size_t msg_len)
{
	struct rkaccel_model *m;
	int ret = model_check(d, io, cat, num_cat, NULL, msg, msg_len);

	if (ret)
		return ret;
	ret = model_alloc(d->rows, d->num_layers, d->layers, &m);
	if (ret)
		return ret;
	m->desc.height = d->height;
	m->desc.width = d->width;
	if (io) {
		m->io = malloc((size_t)d->num_layers * sizeof(*io));
		m->cat = malloc((num_cat ? num_cat : 1) * sizeof(*cat));
		if (!m->io || !m->cat) {
			rkaccel_model_free(m);
			return -ENOMEM;
		}
		memcpy(m->io, io, (size_t)d->num_layers * sizeof(*io));
		if (num_cat)
			memcpy(m->cat, cat, num_cat * sizeof(*cat));
		m->num_cat = num_cat;
	}
	for (uint32_t i = 0; i < d->num_layers; i++) {
		const struct rkaccel_layer_desc *l = &d->layers[i];
		struct rkaccel_layer_desc *c = &m->layers[i];

		if (c->weights) {
			memcpy((int8_t *)c->weights, l->weights, weights_size(l));
			memcpy((int32_t *)c->bias, l->bias, bias_size(l));
		}
		if (c->weight_scales)
			memcpy((float *)c->weight_scales, l->weight_scales, wscales_size(l));
	}
	*out = m;
	return 0;
}

int model_copy(const struct rkaccel_model_desc *d, struct rkaccel_model **out, char *msg,
	       size_t msg_len)
{
	return model_copy_links(d, NULL, NULL, 0, out, msg, msg_len);
}
