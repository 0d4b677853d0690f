/* SPDX-License-Identifier: MIT */
/* librkaccel internals: layout arithmetic and register-field helpers. */
#ifndef RKACCEL_INTERNAL_H
#define RKACCEL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rkaccel.h"
#include "rkaccel_npu_regs.h"

#define ALIGN_UP(v, a)		(((v) + (a) - 1) / (a) * (a))
#define DIV_UP(v, d)		(((v) + (d) - 1) / (d))

/* Place @val in the register field @mask. */
static inline uint32_t field(uint32_t mask, uint32_t val)
{
	return (val << __builtin_ctz(mask)) & mask;
}

/* Rows of a plane are padded to 4 (the CNA's surface stride counts 4-row units). */
#define NATIVE_ROW_ALIGN	4
/* Channels are padded to 32: the DPU writes whole kernel groups. */
#define NATIVE_CHANNEL_ALIGN	32

/*
 * GEM handles (lib/handle.c): every holder of a handle of file @fd takes
 * a reference; the handle is closed with the last. gem_ref_get() on a
 * handle nobody holds yet closes it on -ENOMEM.
 */
int gem_ref_get(int fd, uint32_t handle);
int gem_ref_import(int fd, int dmabuf_fd, uint32_t *handle);
void gem_ref_put(int fd, uint32_t handle);

/* A buffer the CPU and the NPU share (opaque in rkaccel.h). */
struct rkaccel_mem {
	void *virt;		/* CPU address of byte 0 */
	size_t size;		/* usable bytes at virt (what was asked for) */
	uint64_t npu_addr;	/* NPU address of byte 0 */
	uint32_t handle;	/* GEM handle on dev_fd, a reference of gem_ref_get() */
	int dev_fd;		/* rkaccel_fd() of its device */
	size_t map_len;		/* bytes mapped at virt (page-rounded BO size) */
};

/* rkaccel_mem_alloc() on the device file @fd (@size > 0, @mem non-NULL). */
int mem_alloc_fd(int fd, size_t size, struct rkaccel_mem **mem);

/* For lib/pipe.c: the device file of @ctx, and the core mask it was given. */
int ctx_dev_fd(const struct rkaccel_ctx *ctx);
uint32_t ctx_core_mask(const struct rkaccel_ctx *ctx);

static inline size_t native_plane_bytes(uint32_t rows)
{
	return (size_t)ALIGN_UP(rows, NATIVE_ROW_ALIGN) * RKNPU_ATOM_BYTES;
}

static inline uint32_t native_planes(uint32_t channels, uint32_t elem_bytes)
{
	return ALIGN_UP(channels, NATIVE_CHANNEL_ALIGN) * elem_bytes / RKNPU_ATOM_BYTES;
}

/* A validated copy of @d that owns its arrays (lib/model.c). */
int model_copy(const struct rkaccel_model_desc *d, struct rkaccel_model **out, char *msg,
	       size_t msg_len);

/* The seeded generator's integer-only helpers (lib/model.c). */
uint64_t rng_next(uint64_t *s);
int32_t rng_range(uint64_t *s, int32_t lo, int32_t hi);
uint64_t isqrt(uint64_t v);

#endif /* RKACCEL_INTERNAL_H */
