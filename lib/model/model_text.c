// SPDX-License-Identifier: MIT
/*
 * Seeded random networks from a text description, one operation a line
 * (grammar: Documentation/model-format.rst, "Network descriptions"). The
 * shapes come from the text; weights, biases, zero points and scales from
 * the seed, scales chosen so that every layer's int8 outputs spread over
 * the range instead of saturating or collapsing.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define LINE_MAX_LEN	256

/* What the parser builds: layers, their shapes, the arrays to fill. */
struct net_build {
	struct rkaccel_model_desc desc;
	/* on the heap (calloc'ed whole): a model in memory takes 4,096 layers */
	struct rkaccel_layer_desc layers[RKACCEL_MODEL_MAX_MEM_LAYERS];
	struct rkaccel_tensor_shape t[RKACCEL_MODEL_MAX_MEM_LAYERS + 1];
	bool per_channel[RKACCEL_MODEL_MAX_MEM_LAYERS];
	uint32_t n;
	uint64_t rng;
	unsigned int line;
	char *msg;
	size_t msg_len;
};

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int text_bad(struct net_build *b, const char *fmt, ...)
{
	char why[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (b->msg && b->msg_len)
		snprintf(b->msg, b->msg_len, "line %u: %s", b->line, why);
	return -EINVAL;
}

/* A float kept to its top 8 significant bits: exact in every later product. */
static float round8(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	u &= 0xffff0000u;
	memcpy(&f, &u, sizeof(u));
	return f;
}

/* A scale in [2^-7, 2^-4): 8-bit mantissa from the seed. */
static float random_out_scale(uint64_t *rng)
{
	float m = (float)rng_range(rng, 128, 255) / 256.0f;

	return round8(m / (float)(1u << rng_range(rng, 6, 8)));
}

/* "KxK" or "K": the window; 0 when it is not a number. */
static int parse_kernel(const char *tok, uint32_t *kw, uint32_t *kh)
{
	unsigned int a, b;
	char end;

	if (sscanf(tok, "%ux%u%c", &a, &b, &end) == 2) {
		*kw = a;
		*kh = b;
		return 0;
	}
	if (sscanf(tok, "%u%c", &a, &end) == 1) {
		*kw = a;
		*kh = a;
		return 0;
	}
	return -EINVAL;
}

/* Options after the operation: sS, cN, pad P or pad T,L,B,R, linear, relu, pc, int32. */
static int parse_options(struct net_build *b, struct rkaccel_layer_desc *l, char *save)
{
	char *tok, c;
	unsigned int v[4];

	while ((tok = strtok_r(NULL, " \t", &save))) {
		if (sscanf(tok, "s%u%c", &v[0], &c) == 1) {
			l->stride = v[0];
		} else if (sscanf(tok, "c%u%c", &v[0], &c) == 1) {
			l->out_features = v[0];
		} else if (!strcmp(tok, "pad")) {
			tok = strtok_r(NULL, " \t", &save);
			if (tok && sscanf(tok, "%u,%u,%u,%u", &v[0], &v[1], &v[2], &v[3]) == 4) {
				l->pad_top = v[0];
				l->pad_left = v[1];
				l->pad_bottom = v[2];
				l->pad_right = v[3];
			} else if (tok && sscanf(tok, "%u", &v[0]) == 1) {
				l->pad_top = l->pad_left = l->pad_bottom = l->pad_right = v[0];
			} else {
				return text_bad(b, "pad needs P or T,L,B,R");
			}
		} else if (!strcmp(tok, "linear")) {
			l->flags &= ~RKACCEL_LAYER_RELU;
		} else if (!strcmp(tok, "relu")) {
			l->flags |= RKACCEL_LAYER_RELU;
		} else if (!strcmp(tok, "int32")) {
			l->flags |= RKACCEL_LAYER_OUT_INT32;
		} else if (!strcmp(tok, "pc")) {
			b->per_channel[b->n] = true;
		} else {
			return text_bad(b, "unknown option '%s'", tok);
		}
	}
	return 0;
}

/* conv/dw/maxpool/avgpool: the window, "same" padding (K / 2) unless told. */
static int parse_window(struct net_build *b, struct rkaccel_layer_desc *l, const char *tok)
{
	if (!tok)
		return text_bad(b, "missing kernel size");
	if (l->op == RKACCEL_OP_AVGPOOL && !strcmp(tok, "global"))
		return 0;
	if (parse_kernel(tok, &l->kernel_w, &l->kernel_h))
		return text_bad(b, "bad kernel size '%s'", tok);
	l->stride = 1;
	if (l->op != RKACCEL_OP_MAXPOOL && l->op != RKACCEL_OP_AVGPOOL) {
		l->pad_top = l->pad_bottom = l->kernel_h / 2;
		l->pad_left = l->pad_right = l->kernel_w / 2;
	}
	return 0;
}

/* "add T": the previous layer adds tensor T. */
static int parse_add(struct net_build *b, char *save)
{
	char *tok = strtok_r(NULL, " \t", &save);
	struct rkaccel_layer_desc *p;
	unsigned int t;
	char c;

	if (!tok || sscanf(tok, "%u%c", &t, &c) != 1)
		return text_bad(b, "add needs a tensor number");
	if (!b->n || b->layers[b->n - 1].op > RKACCEL_OP_DWCONV)
		return text_bad(b, "add follows a convolution or fc layer");
	p = &b->layers[b->n - 1];
	p->flags |= RKACCEL_LAYER_ADD;
	p->add_input = t;
	return 0;
}

static int parse_input(struct net_build *b, char *save)
{
	char *tok = strtok_r(NULL, " \t", &save);
	unsigned int h, w, c;
	char end;

	if (b->desc.rows)
		return text_bad(b, "a second input line");
	if (!tok || sscanf(tok, "%ux%ux%u%c", &h, &w, &c, &end) != 3 || !h || !w || !c ||
	    (uint64_t)h * w > RKACCEL_MODEL_MAX_ROWS)
		return text_bad(b, "input needs HxWxC");
	b->desc.height = h;
	b->desc.width = w;
	b->desc.rows = h * w;
	b->t[0] = (struct rkaccel_tensor_shape){ h, w, c, 0, 0 };
	return 0;
}

static const struct {
	const char *name;
	uint32_t op;
	bool window, relu;
} ops[] = {
	{ "conv", RKACCEL_OP_CONV, true, true },
	{ "dw", RKACCEL_OP_DWCONV, true, true },
	{ "pw", RKACCEL_OP_FC, false, true },
	{ "fc", RKACCEL_OP_FC, false, false },
	{ "maxpool", RKACCEL_OP_MAXPOOL, true, false },
	{ "avgpool", RKACCEL_OP_AVGPOOL, true, false },
};

/* One layer line; the channels follow from the input where the op keeps them. */
static int parse_layer(struct net_build *b, const char *name, char *save)
{
	struct rkaccel_layer_desc *l;
	unsigned int i;
	int ret;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(name, ops[i].name))
			break;
	if (i == sizeof(ops) / sizeof(ops[0]))
		return text_bad(b, "unknown operation '%s'", name);
	if (!b->desc.rows)
		return text_bad(b, "the first line must be 'input HxWxC'");
	if (b->n == RKACCEL_MODEL_MAX_MEM_LAYERS)
		return text_bad(b, "more than %u layers", RKACCEL_MODEL_MAX_MEM_LAYERS);
	l = &b->layers[b->n];
	l->op = ops[i].op;
	l->flags = ops[i].relu ? RKACCEL_LAYER_RELU : 0;
	l->in_features = b->t[b->n].channels;
	l->out_features = l->in_features;
	if (ops[i].window) {
		ret = parse_window(b, l, strtok_r(NULL, " \t", &save));
		if (ret)
			return ret;
	} else if (!strcmp(name, "fc")) {
		char *tok = strtok_r(NULL, " \t", &save);
		unsigned int n;

		if (!tok || sscanf(tok, "%u", &n) != 1)
			return text_bad(b, "fc needs a number of outputs");
		l->out_features = n;
	}
	ret = parse_options(b, l, save);
	if (ret)
		return ret;
	b->n++;
	b->desc.num_layers = b->n;
	b->desc.layers = b->layers;
	return rkaccel_model_tensor(&b->desc, b->n, &b->t[b->n]) ? text_bad(b, "bad shape") : 0;
}

static int parse_line(struct net_build *b, char *line)
{
	char *save = NULL, *hash = strchr(line, '#');
	char *tok;

	if (hash)
		*hash = '\0';
	tok = strtok_r(line, " \t\r", &save);
	if (!tok)
		return 0;
	if (!strcmp(tok, "input"))
		return parse_input(b, save);
	if (!strcmp(tok, "add"))
		return parse_add(b, save);
	return parse_layer(b, tok, save);
}

/* Fan-in of one output: the products summed into its accumulator. */
static uint64_t fan_in(const struct rkaccel_layer_desc *l)
{
	uint64_t taps = (uint64_t)(l->kernel_w ? l->kernel_w : 1) * (l->kernel_h ? l->kernel_h : 1);

	return l->op == RKACCEL_OP_DWCONV ? taps : taps * l->in_features;
}

/* Zero points and scales, layer by layer: as rkaccel_model_random() chooses them. */
static void choose_quant(struct net_build *b)
{
	float in = round8((float)rng_range(&b->rng, 128, 255) / 256.0f / 64.0f);
	int32_t zp = rng_range(&b->rng, -16, 16);

	for (uint32_t i = 0; i < b->n; i++) {
		struct rkaccel_layer_desc *l = &b->layers[i];
		/* outputs' spread about 43 for uniform input, 52 behind a ReLU */
		uint64_t c = i ? 52 : 128;
		float k_root = (float)isqrt(c * c * fan_in(l));
		float out;

		l->in_scale = in;
		l->in_zero_point = zp;
		if (l->op == RKACCEL_OP_MAXPOOL || l->op == RKACCEL_OP_AVGPOOL) {
			l->weight_scale = 1.0f;
			l->out_scale = in;
			l->out_zero_point = zp;
			continue;
		}
		out = random_out_scale(&b->rng);
		l->weight_scale = round8(out / (in * k_root) *
					 (float)rng_range(&b->rng, 112, 144) / 128.0f);
		if (l->flags & RKACCEL_LAYER_ADD)
			out = round8(out * 1.5f);	/* the sum spans more */
		if (l->flags & RKACCEL_LAYER_OUT_INT32) {
			out = in * l->weight_scale;
			l->out_zero_point = 0;
		} else {
			l->out_zero_point = rng_range(&b->rng, -16, 16);
		}
		l->out_scale = out;
		in = out;
		zp = l->out_zero_point;
	}
}

/* Weights, biases and per-channel scales into one allocation. */
static void *fill_arrays(struct net_build *b)
{
	size_t size = 0, off = 0;
	uint8_t *mem;

	for (uint32_t i = 0; i < b->n; i++)
		size += (size_t)fan_in(&b->layers[i]) * b->layers[i].out_features +
			8 * (size_t)b->layers[i].out_features + 16;
	mem = calloc(1, size);
	if (!mem)
		return NULL;
	for (uint32_t i = 0; i < b->n; i++) {
		struct rkaccel_layer_desc *l = &b->layers[i];
		size_t nw = (size_t)fan_in(l) * l->out_features;
		int8_t *w = (int8_t *)(mem + off);
		int32_t *bias;
		float *sc;

		if (l->op > RKACCEL_OP_DWCONV)
			continue;
		for (size_t j = 0; j < nw; j++)
			w[j] = (int8_t)rng_range(&b->rng, -128, 127);
		off = (off + nw + 3) & ~(size_t)3;
		bias = (int32_t *)(void *)(mem + off);
		for (uint32_t j = 0; j < l->out_features; j++)
			bias[j] = rng_range(&b->rng, -4096, 4096);
		off += 4 * (size_t)l->out_features;
		sc = (float *)(void *)(mem + off);
		for (uint32_t j = 0; b->per_channel[i] && j < l->out_features; j++)
			sc[j] = round8(l->weight_scale * (float)rng_range(&b->rng, 128, 256) / 256.0f);
		off += 4 * (size_t)l->out_features;
		l->weights = w;
		l->bias = bias;
		l->weight_scales = b->per_channel[i] ? sc : NULL;
	}
	return mem;
}

int rkaccel_model_from_text(uint32_t seed, const char *text, struct rkaccel_model **model,
			    char *msg, size_t msg_len)
{
	struct net_build *b;
	const char *p = text;
	void *arrays;
	int ret = 0;

	if (msg && msg_len)
		msg[0] = '\0';
	if (!text || !model)
		return -EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->rng = seed;
	b->msg = msg;
	b->msg_len = msg_len;
	while (*p && !ret) {
		char line[LINE_MAX_LEN];
		size_t n = strcspn(p, "\n");

		b->line++;
		if (n >= sizeof(line)) {
			ret = text_bad(b, "longer than %d characters", LINE_MAX_LEN - 1);
			break;
		}
		memcpy(line, p, n);
		line[n] = '\0';
		p += n + (p[n] == '\n');
		ret = parse_line(b, line);
	}
	if (!ret && !b->n)
		ret = text_bad(b, "no layers");
	if (ret) {
		free(b);
		return ret;
	}
	choose_quant(b);
	arrays = fill_arrays(b);
	ret = arrays ? model_copy(&b->desc, model, msg, msg_len) : -ENOMEM;
	free(arrays);
	free(b);
	return ret;
}
