/* SPDX-License-Identifier: MIT */
/*
 * The runtime unit's internals: GEM handle ownership (handle.c), the
 * memory object (mem.c) and what the batch runner (pipe.c) asks of a
 * context (context.c). Nothing outside lib/runtime/ includes it.
 */
#ifndef RKACCEL_RUNTIME_H
#define RKACCEL_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rkaccel.h"

/*
 * GEM handles (lib/runtime/handle.c): every holder of a handle of file @fd
 * takes a reference; the handle is closed with the last. gem_ref_get() on a
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

/* For lib/runtime/pipe.c: the device file of @ctx, and the core mask it was given. */
int ctx_dev_fd(const struct rkaccel_ctx *ctx);
uint32_t ctx_core_mask(const struct rkaccel_ctx *ctx);

#endif /* RKACCEL_RUNTIME_H */
