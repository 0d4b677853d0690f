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

/* A BO of a context, mapped (context.c). */
struct ctx_bo {
	uint32_t handle;
	void *map;
	size_t map_len;
	uint64_t addr;
};

int xioctl(int fd, unsigned long req, void *arg);
int bo_new(int fd, size_t size, uint32_t flags, struct ctx_bo *bo);
void bo_free(int fd, struct ctx_bo *bo);
int kctx_create(int fd, uint32_t mask, uint32_t *handle);
void kctx_destroy(int fd, uint32_t handle);
/* The error a syncobj's fence was signalled with, 0 when it succeeded. */
int fence_status(int fd, uint32_t syncobj);
uint64_t now_ns(void);

/*
 * One inference over several cores (lib/runtime/split.c): a split program's
 * jobs on a kernel context per core, ordered by syncobjs.
 */
struct split_run;

/* What a split run's jobs list besides its own buffers: input, output, weights. */
struct split_io {
	uint32_t handle[4];
	uint32_t count;
};

/*
 * A run of @prog (program_compile_split(), its weights at @weights_addr)
 * on the cores of @mask, with its own register commands and activations.
 */
int split_run_new(int fd, const struct rkaccel_program *prog, uint64_t weights_addr,
		  uint32_t mask, struct split_run **out);
void split_run_free(struct split_run *s);
/* Emit the register commands for input and output at these NPU addresses. */
int split_run_emit(struct split_run *s, uint64_t in_addr, uint64_t out_addr);
/*
 * Queue every job, the first ones after syncobj @in_sync (0: none); the
 * returned sync_file in *@fence (when non-NULL) signals when all are done.
 */
int split_run_submit(struct split_run *s, const struct split_io *io, uint32_t in_sync,
		     int *fence);
/* Wait for the queued jobs; the first job error. Fills the device times. */
int split_run_wait(struct split_run *s);
/* Jobs, waits and per-core device time of the last run (fdinfo). */
void split_run_info(const struct split_run *s, struct rkaccel_run_info *info);
/*
 * Run every job alone, in order, and time it by the device; the latency is
 * the longest path through the jobs (split.c says how it is charged).
 */
int split_run_latency(struct split_run *s, const struct split_io *io, uint64_t boundary_ns,
		      uint32_t time_scale, uint64_t *ns);
/* Each job run alone, in order, timed by the device: @ns gets one time per job. */
int split_run_job_times(struct split_run *s, const struct split_io *io, uint64_t *ns);
/* Device time of file @fd's jobs on each core so far, from fdinfo; cores filled. */
uint32_t fdinfo_core_ns(int fd, uint64_t *ns, uint32_t max);

/* For lib/runtime/pipe.c: the device file of @ctx, and the core mask it was given. */
int ctx_dev_fd(const struct rkaccel_ctx *ctx);
uint32_t ctx_core_mask(const struct rkaccel_ctx *ctx);

#endif /* RKACCEL_RUNTIME_H */
