/* SPDX-License-Identifier: MIT */
/*
 * A layer dump: a program whose every tensor keeps its bytes to the end of
 * the run, and the reading of one tensor out of the buffers after it.
 * What the runtime (rkaccel_ctx_read_tensor() in lib/runtime/context.c)
 * asks of the compiler.
 */
#ifndef RKACCEL_TENSORS_H
#define RKACCEL_TENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "rkaccel.h"
#include "../model/model_links.h"

/*
 * program_compile() with no activation memory reused (the internal buffer
 * is the sum of the tensors, not their peak) and every tensor's place kept.
 */
int program_compile_kept(const struct rkaccel_model_desc *d, const struct model_io *io,
			 const uint32_t *cat, const struct rkaccel_info *info,
			 struct rkaccel_program **prog);

/*
 * Copy tensor @t (0 the input, i + 1 layer i's output) of a program of
 * program_compile_kept() out of the buffers at @maps (@sizes bytes each)
 * into @dst as row-major [pixels][channels] elements; @len must be that
 * size. -EINVAL for another program, @t or @len out of range, or a buffer
 * smaller than the program places the tensor in.
 */
int program_read_tensor(const struct rkaccel_program *prog, uint32_t t,
			const void *const maps[RKACCEL_BUF_COUNT],
			const size_t sizes[RKACCEL_BUF_COUNT], void *dst, size_t len);

#endif /* RKACCEL_TENSORS_H */
