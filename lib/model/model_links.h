/* SPDX-License-Identifier: MIT */
/*
 * What a model holds beyond its public description: which tensor each layer
 * reads and the inputs of its concats. Shared by the model unit and the
 * compiler (lib/compiler/compile.c), nothing else.
 */
#ifndef RKACCEL_MODEL_LINKS_H
#define RKACCEL_MODEL_LINKS_H

#include <stdint.h>

#include "rkaccel.h"

/* Layer i's inputs: tensor src, or a concat's cat[first .. first + count - 1]. */
struct model_io {
	uint32_t src;
	uint32_t cat_first, cat_count;
};

/*
 * @model's per-layer inputs, or NULL for a chain (layer i reads tensor i);
 * *@cat gets the concat inputs.
 */
const struct model_io *model_links(const struct rkaccel_model *model, const uint32_t **cat);

/*
 * Check @d with its links (@io NULL: a chain, as rkaccel_model_validate());
 * @t, when non-NULL, gets the num_layers + 1 tensor shapes.
 */
int model_check(const struct rkaccel_model_desc *d, const struct model_io *io,
		const uint32_t *cat, uint32_t num_cat, struct rkaccel_tensor_shape *t,
		char *msg, size_t msg_len);

/* The program of @d with its links (compile.c). */
int program_compile(const struct rkaccel_model_desc *d, const struct model_io *io,
		    const uint32_t *cat, const struct rkaccel_info *info,
		    struct rkaccel_program **prog);

#endif /* RKACCEL_MODEL_LINKS_H */
