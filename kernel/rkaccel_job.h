/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef _RKACCEL_JOB_H_
#define _RKACCEL_JOB_H_

#include <drm/gpu_scheduler.h>
#include <linux/dma-fence.h>
#include <linux/ktime.h>

#include "rkaccel_drm.h"

struct drm_gem_object;
struct rkaccel_bo_mapping;
struct rkaccel_core;
struct rkaccel_ctx;

/**
 * struct rkaccel_job - one submitted job.
 * @base: the scheduler job.
 * @ctx: the context (a reference).
 * @tasks: PC starts, copied from userspace.
 * @task_count: entries in @tasks.
 * @next_task: index of the PC start in flight.
 * @bos: the BOs the job uses (references).
 * @bo_flags: DRM_RKACCEL_SUBMIT_BO_* per BO.
 * @bo_count: entries in @bos.
 * @maps: the BOs' mappings in the context's address space (references),
 *	so that closing a handle cannot unmap what a queued job uses.
 * @done: the hardware fence, allocated at SUBMIT (run_job may not
 *	allocate), initialized and signalled by the core.
 * @prepared: the core on which the backend's job_begin() ran, holding
 *	the job's power reference, for its job_end() when the job never ran
 *	to its end.
 * @core: core the job runs on, once run.
 * @start: when the job started on @core.
 * @progress: PC start and task count seen by the last watchdog check.
 * @queued_on: the core whose queued count holds this job, NULL once given back.
 * @writes: the job writes a BO; its end then syncs that BO for the CPU,
 *	in the IRQ thread rather than the hard IRQ.
 */
struct rkaccel_job {
	struct drm_sched_job base;
	struct rkaccel_ctx *ctx;
	struct drm_rkaccel_task *tasks;
	u32 task_count;
	u32 next_task;
	struct drm_gem_object **bos;
	u32 *bo_flags;
	u32 bo_count;
	struct rkaccel_bo_mapping **maps;
	struct dma_fence *done;
	struct rkaccel_core *prepared;
	struct rkaccel_core *core;
	ktime_t start;
	u64 progress;
	struct rkaccel_core *queued_on;
	bool writes;
};

extern const struct drm_sched_backend_ops rkaccel_sched_ops;

void rkaccel_job_finish(struct rkaccel_core *core, struct rkaccel_job *job, int error);
void rkaccel_job_hung(struct rkaccel_core *core, struct rkaccel_job *job);
int rkaccel_ioctl_submit(struct drm_device *ddev, void *data, struct drm_file *file);

#endif /* _RKACCEL_JOB_H_ */
