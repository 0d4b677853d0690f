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

#include "model_links.h"

struct rkaccel_model {
	struct rkaccel_model_desc desc;
	struct rkaccel_layer_desc *layers;	/* desc.num_layers */
	struct model_io *io;	/* NULL: a chain, layer i reads tensor i */
	uint32_t *cat;		/* concat inputs, io[i].cat_first.. */
	uint32_t num_cat;
	void *data;		/* every weight and bias array, 64-byte aligned */
	uint32_t *graph_tensor;	/* lowered from a graph: tensor t holds graph tensor
				 * graph_tensor[t] (MODEL_NO_TENSOR: none); else NULL */
	struct rkaccel_output_op out_op;	/* the CPU's part of a lowered graph */
	bool has_out_op;
};

#define MODEL_NO_TENSOR		UINT32_MAX

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
/* The same with links (@io NULL: a chain): a lowered 3.0 graph. */
int model_copy_links(const struct rkaccel_model_desc *d, const struct model_io *io,
		     const uint32_t *cat, uint32_t num_cat, struct rkaccel_model **out,
		     char *msg, size_t msg_len);

/* CRC-32 (zlib's) running value, 0 to start; the file checksum of 1.x..3.x. */
/* A message in @msg (when given) and -EINVAL: one refusal of a validator. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
int model_bad(char *msg, size_t msg_len, const char *fmt, ...);

uint32_t crc32_update(uint32_t crc, const uint8_t *p, size_t len);
/* CRC-32 of @len bytes of @img with the checksum field (bytes 40..43) as zero. */
uint32_t model_file_crc(const uint8_t *img, size_t len);
/* A regular file of at most RKACCEL_MODEL_MAX_FILE_SIZE read whole. */
int model_read_file(const char *path, uint8_t **buf, size_t *len, char *msg, size_t msg_len);
/* "@path: " before @msg. */
void model_msg_prefix(const char *path, char *msg, size_t msg_len);
/* Write a whole file without blocking on a FIFO. */
int model_write_file(const char *path, const void *buf, size_t len);

/* The seeded generator's integer-only helpers (lib/model/model_random.c). */
uint64_t rng_next(uint64_t *s);
int32_t rng_range(uint64_t *s, int32_t lo, int32_t hi);
uint64_t isqrt(uint64_t v);

#endif /* RKACCEL_MODEL_H */
