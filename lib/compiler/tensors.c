// SPDX-License-Identifier: MIT
/* Reading a tensor of a program compiled for a layer dump (tensors.h). */

#include <errno.h>
#include <string.h>

#include "compile.h"
#include "tensors.h"

/* Bytes of @tp's planes as the program addresses them: the last one up to its last pixel. */
static uint64_t place_end(const struct tensor_place *tp, uint32_t groups)
{
	return tp->off + (uint64_t)(groups - 1) * tp->plane +
	       (uint64_t)tp->h * tp->w * RKNPU_ATOM_BYTES;
}

int program_read_tensor(const struct rkaccel_program *prog, uint32_t t,
			const void *const maps[RKACCEL_BUF_COUNT],
			const size_t sizes[RKACCEL_BUF_COUNT], void *dst, size_t len)
{
	const struct tensor_place *tp;
	uint32_t per_atom, groups, pixels;
	const uint8_t *src;

	if (!prog || !prog->places || t >= prog->num_places || !maps || !sizes || !dst)
		return -EINVAL;
	tp = &prog->places[t];
	pixels = tp->h * tp->w;
	per_atom = RKNPU_ATOM_BYTES / tp->elem_bytes;
	groups = DIV_UP(tp->c, per_atom);
	if (len != (size_t)pixels * tp->c * tp->elem_bytes || tp->buf >= RKACCEL_BUF_COUNT ||
	    !maps[tp->buf] || place_end(tp, groups) > sizes[tp->buf])
		return -EINVAL;
	src = (const uint8_t *)maps[tp->buf] + tp->off;
	/* one plane per atom's worth of channels, a pixel per atom */
	for (uint32_t g = 0; g < groups; g++) {
		uint32_t n = tp->c - g * per_atom < per_atom ? tp->c - g * per_atom : per_atom;
		const uint8_t *plane = src + (size_t)g * tp->plane;

		for (uint32_t px = 0; px < pixels; px++)
			memcpy((uint8_t *)dst + ((size_t)px * tp->c + (size_t)g * per_atom) *
			       tp->elem_bytes, plane + (size_t)px * RKNPU_ATOM_BYTES,
			       (size_t)n * tp->elem_bytes);
	}
	return 0;
}
