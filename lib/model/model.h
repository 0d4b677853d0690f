/* SPDX-License-Identifier: MIT */
/*
 * The model unit's internals: the model object and what the file code
 * (model.c), the seeded generator (model_random.c) and the text network
 * reader (model_text.c) share. Nothing outside lib/model/ includes it.
 */
#ifndef RKACCEL_MODEL_H
#define RKACCEL_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rkaccel.h"

#define LAYER_FLAGS_V1		(RKACCEL_LAYER_RELU | RKACCEL_LAYER_OUT_INT32)
#define LAYER_FLAGS		(LAYER_FLAGS_V1 | RKACCEL_LAYER_ADD)

struct rkaccel_model {
	struct rkaccel_model_desc desc;
	struct rkaccel_layer_desc layers[RKACCEL_MODEL_MAX_LAYERS];
	void *data;		/* every weight and bias array, 64-byte aligned */
};

/* lib/model/model.c */
float bits_float(uint32_t u);
/* Bytes of a layer's weights; the kernel fields are range-checked or zero. */
uint64_t weights_size(const struct rkaccel_layer_desc *l);
/* A model of these shapes with its arrays allocated, zeroed and pointed to. */
int model_alloc(uint32_t rows, uint32_t num_layers,
		const struct rkaccel_layer_desc *layers, struct rkaccel_model **out);
/* A validated copy of @d that owns its arrays. */
int model_copy(const struct rkaccel_model_desc *d, struct rkaccel_model **out, char *msg,
	       size_t msg_len);

/* The seeded generator's integer-only helpers (lib/model/model_random.c). */
uint64_t rng_next(uint64_t *s);
int32_t rng_range(uint64_t *s, int32_t lo, int32_t hi);
uint64_t isqrt(uint64_t v);

#endif /* RKACCEL_MODEL_H */
