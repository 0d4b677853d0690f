// SPDX-License-Identifier: MIT
/*
 * Seeded random models for tests and benchmarks: the same seed gives the
 * same model, byte for byte, on every host. Kept apart from the parser
 * (model.c), which takes untrusted input; this file only builds models
 * from its own numbers and hands them to rkaccel_model_validate().
 */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "model.h"

/* --- the seeded generator ------------------------------------------------ */

/* splitmix64: integer-only, so the same seed gives the same bytes everywhere. */
uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Uniform enough in lo..hi (the modulo bias is below 2^-40 here). */
int32_t rng_range(uint64_t *s, int32_t lo, int32_t hi)
{
	return lo + (int32_t)(rng_next(s) % (uint64_t)((int64_t)hi - lo + 1));
}

/* A scale as mant * 2^exp, mant > 0: exact, built without floating point. */
struct scale {
	uint64_t mant;
	int exp;
};

/* Keep the top 8 significant bits of @s (truncating): an 8-bit mantissa. */
static struct scale scale_round8(struct scale s)
{
	while (s.mant >= 256) {
		s.mant >>= 1;
		s.exp++;
	}
	while (s.mant < 128) {
		s.mant <<= 1;
		s.exp--;
	}
	return s;
}

/* The binary32 of @s (mant < 2^24), or 0 when it is not a normal number. */
static float scale_float(struct scale s)
{
	int biased;

	if (!s.mant || s.mant >= 1u << 24)
		return 0.0f;
	while (s.mant < 1u << 23) {
		s.mant <<= 1;
		s.exp--;
	}
	biased = s.exp + 23 + 127;
	if (biased < 1 || biased > 254)
		return 0.0f;
	return bits_float((uint32_t)biased << 23 | (uint32_t)(s.mant - (1u << 23)));
}

uint64_t isqrt(uint64_t v)
{
	uint64_t r = 0;

	for (uint64_t bit = 1ull << 62; bit; bit >>= 2) {
		if (v >= r + bit) {
			v -= r + bit;
			r = (r >> 1) + bit;
		} else {
			r >>= 1;
		}
	}
	return r;
}

static int random_layers(uint32_t seed, uint32_t rows, uint32_t num_layers,
			 const uint32_t *features, uint32_t flags_last,
			 struct rkaccel_layer_desc *layers, struct rkaccel_model **model);

int rkaccel_model_random(uint32_t seed, uint32_t rows, uint32_t num_layers,
			 const uint32_t *features, uint32_t flags_last,
			 struct rkaccel_model **model)
{
	struct rkaccel_layer_desc *layers;
	int ret;

	if (!features || !model || num_layers < 1 || num_layers > RKACCEL_MODEL_MAX_MEM_LAYERS ||
	    (flags_last & ~LAYER_FLAGS_V1))
		return -EINVAL;
	for (uint32_t i = 0; i <= num_layers; i++)
		if (features[i] < 1 || features[i] > RKACCEL_MODEL_MAX_FEATURES)
			return -EINVAL;
	layers = calloc(num_layers, sizeof(*layers));
	if (!layers)
		return -ENOMEM;
	ret = random_layers(seed, rows, num_layers, features, flags_last, layers, model);
	free(layers);
	return ret;
}

/* The layers' quantization, then the model with its arrays from the seed. */
static int random_layers(uint32_t seed, uint32_t rows, uint32_t num_layers,
			 const uint32_t *features, uint32_t flags_last,
			 struct rkaccel_layer_desc *layers, struct rkaccel_model **model)
{
	struct scale in;
	struct rkaccel_model *m;
	uint64_t s = seed;
	int ret;

	/* shapes, flags, zero points, scales: layer by layer, in this order */
	in = (struct scale) { (uint64_t)rng_range(&s, 128, 255), -13 };
	layers[0].in_zero_point = rng_range(&s, -16, 16);
	for (uint32_t i = 0; i < num_layers; i++) {
		struct rkaccel_layer_desc *l = &layers[i];
		/*
		 * c sqrt(K): uniform int8 inputs (rms 74) give outputs with a
		 * standard deviation of about 74 * 74 / c; c = 128 makes that 43.
		 * Behind a ReLU the input rms is that / sqrt(2): c = 52 keeps
		 * the spread the same from layer to layer.
		 */
		uint64_t c = i ? 52 : 128;
		uint64_t k_root = isqrt(c * c * features[i]);
		struct scale out, w;

		l->in_features = features[i];
		l->out_features = features[i + 1];
		l->flags = i == num_layers - 1 ? flags_last : RKACCEL_LAYER_RELU;
		if (i)
			l->in_zero_point = layers[i - 1].out_zero_point;
		l->in_scale = scale_float(in);

		/* out in [2^-7, 2^-4); weight = out / (in * c sqrt(K)) * 0.875..1.125 */
		out.mant = (uint64_t)rng_range(&s, 128, 255);
		out.exp = rng_range(&s, -14, -12);
		w.mant = (out.mant << 32) / (in.mant * k_root);
		w.mant = w.mant * (uint64_t)rng_range(&s, 112, 144) / 128;
		w.exp = out.exp - in.exp - 32;
		w = scale_round8(w);
		l->weight_scale = scale_float(w);

		if (l->flags & RKACCEL_LAYER_OUT_INT32) {
			/* the scale of the int32 result, exactly: 16-bit mantissa */
			out = (struct scale) { in.mant * w.mant, in.exp + w.exp };
			l->out_zero_point = 0;
		} else {
			l->out_zero_point = rng_range(&s, -16, 16);
		}
		l->out_scale = scale_float(out);
		in = out;
	}

	/* bound the allocation; rkaccel_model_validate() checks the rest */
	{
		uint64_t total = 0;

		for (uint32_t i = 0; i < num_layers; i++)
			total += weights_size(&layers[i]);
		if (total > RKACCEL_MODEL_MAX_WEIGHT_BYTES)
			return -EINVAL;
	}

	ret = model_alloc(rows, num_layers, layers, &m);
	if (ret)
		return ret;
	for (uint32_t i = 0; i < num_layers; i++) {
		struct rkaccel_layer_desc *l = &m->layers[i];
		int8_t *w = (int8_t *)l->weights;
		int32_t *b = (int32_t *)l->bias;
		uint64_t n = weights_size(l), r = 0;

		for (uint64_t j = 0; j < n; j++) {
			if (!(j & 7))
				r = rng_next(&s);
			w[j] = (int8_t)(uint8_t)r;
			r >>= 8;
		}
		for (uint32_t j = 0; j < l->out_features; j++)
			b[j] = rng_range(&s, -4096, 4096);
	}
	ret = rkaccel_model_validate(&m->desc, NULL, 0);
	if (ret) {
		rkaccel_model_free(m);
		return ret;
	}
	*model = m;
	return 0;
}
