// SPDX-License-Identifier: GPL-2.0-only
/*
 * Jobs: SUBMIT validates and queues them on a context's entity; the core's
 * scheduler runs them one at a time; the IRQ path or the timeout ends them.
 */

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>
#include <drm/drm_syncobj.h>
#include <linux/dma-fence-chain.h>
#include <linux/dma-resv.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "rkaccel_core.h"
#include "rkaccel_ctx.h"
#include "rkaccel_device.h"
#include "rkaccel_gem.h"
#include "rkaccel_job.h"
#include "rkaccel_trace.h"

static inline struct rkaccel_job *to_rkaccel_job(struct drm_sched_job *sched_job)
{
	return container_of(sched_job, struct rkaccel_job, base);
}

static inline struct rkaccel_core *sched_to_core(struct drm_gpu_scheduler *sched)
{
	return container_of(sched, struct rkaccel_core, sched);
}

static const char *rkaccel_fence_driver_name(struct dma_fence *fence)
{
	return "rkaccel";
}

static const char *rkaccel_fence_timeline_name(struct dma_fence *fence)
{
	return "rkaccel-core";
}

/* The fence's ops are module text: a fence kept past its job (a sync_file) pins it. */
static void rkaccel_fence_release(struct dma_fence *fence)
{
	dma_fence_free(fence);
	module_put(THIS_MODULE);
}

static const struct dma_fence_ops rkaccel_fence_ops = {
	.get_driver_name = rkaccel_fence_driver_name,
	.get_timeline_name = rkaccel_fence_timeline_name,
	.release = rkaccel_fence_release,
};

/* The job no longer loads its core: done, or freed without running. */
static void rkaccel_job_unqueue(struct rkaccel_job *job)
{
	struct rkaccel_core *core = xchg(&job->queued_on, NULL);

	if (core) {
		atomic_dec(&core->queued);
		rkaccel_core_vm_put(core);
	}
}

/* Account the job and signal its hardware fence; the job may go after. */
void rkaccel_job_finish(struct rkaccel_core *core, struct rkaccel_job *job, int error)
{
	struct rkaccel_ctx *ctx = job->ctx;
	ktime_t end = ktime_get();
	u64 ns = ktime_to_ns(ktime_sub(end, job->start));

	if (job->prepared) {
		rkaccel_core_job_end(job->prepared, job);
		job->prepared = NULL;
	}
	rkaccel_job_unqueue(job);
	trace_rkaccel_done(job->base.s_fence->finished.context,
			   job->base.s_fence->finished.seqno, core->index, error);
	atomic64_add(ns, &core->busy_ns);
	rkaccel_core_account(core, job->start, end);
	atomic64_add(ns, &ctx->rfile->busy_ns[core->index]);
	if (error) {
		atomic64_inc(&ctx->failed);
		dma_fence_set_error(job->done, error);
	} else {
		atomic64_inc(&ctx->completed);
	}
	dma_fence_signal(job->done);
}

/*
 * A fence-signalling section: everything here was allocated, pinned,
 * powered and attached at SUBMIT, so nothing waits on memory, locks that
 * allocation holds, or other fences.
 */
static struct dma_fence *rkaccel_job_run(struct drm_sched_job *sched_job)
{
	struct rkaccel_job *job = to_rkaccel_job(sched_job);
	struct rkaccel_core *core = sched_to_core(sched_job->sched);
	struct drm_rkaccel_task *t = &job->tasks[0];
	unsigned long flags;
	bool cookie;

	if (unlikely(sched_job->s_fence->finished.error))
		return NULL;
	/* the core's device unbound (rkaccel_core_detach()): never reach it */
	if (unlikely(READ_ONCE(core->gone)))
		return ERR_PTR(-ENODEV);
	/* Jobs queued behind a hang of their own context do not run. */
	if (atomic_read(&job->ctx->guilty))
		return ERR_PTR(-ECANCELED);

	/* the core's lease: only a reset that could not restore it differs */
	if (unlikely(READ_ONCE(core->vm_owner) != &job->ctx->rfile->vm))
		return ERR_PTR(-EIO);

	cookie = dma_fence_begin_signalling();
	dma_fence_init(job->done, &rkaccel_fence_ops, &core->fence_lock, core->fence_context,
		       ++core->fence_seqno);
	__module_get(THIS_MODULE);	/* dropped by rkaccel_fence_release() */
	job->core = core;
	job->next_task = 0;
	job->progress = 0;
	atomic_set(&job->ctx->last_core, core->index);
	atomic64_inc(&core->jobs);

	trace_rkaccel_run(sched_job->s_fence->finished.context,
			  sched_job->s_fence->finished.seqno, core->index, 0);
	spin_lock_irqsave(&core->job_lock, flags);
	job->start = ktime_get();
	core->job = job;
	rkaccel_core_start_task(core, t);
	rkaccel_core_watch(core);
	spin_unlock_irqrestore(&core->job_lock, flags);
	dma_fence_end_signalling(cookie);
	return dma_fence_get(job->done);
}

/*
 * The watchdog found @job hung, or over its time cap, and took it off the
 * core: reset only that core, mark only the job's context. The job's fence
 * carries -ECANCELED; jobs of other contexts queued on the core run next.
 */
void rkaccel_job_hung(struct rkaccel_core *core, struct rkaccel_job *job)
{
	bool cookie;

	dev_warn(core->rdev->ddev.dev, "core %u: job timed out, resetting the core\n",
		 core->index);
	/*
	 * Outside the signalling section: the reset waits for the core's own
	 * completion path (IRQ thread, simulator work), which signals fences.
	 */
	rkaccel_core_reset(core);
	cookie = dma_fence_begin_signalling();
	atomic64_inc(&core->resets);
	atomic_set(&job->ctx->guilty, 1);
	atomic_inc(&job->ctx->reset_count);
	rkaccel_job_finish(core, job, -ECANCELED);
	dma_fence_end_signalling(cookie);
}

/* Mappings before objects: unmapping a BO needs the BO. */
static void rkaccel_job_put_bos(struct rkaccel_job *job)
{
	u32 i;

	for (i = 0; i < job->bo_count; i++) {
		if (job->maps && job->maps[i])
			rkaccel_bo_mapping_put(job->maps[i]);
		drm_gem_object_put(job->bos[i]);
	}
	kvfree(job->maps);
	kvfree(job->bos);
	kvfree(job->bo_flags);
}

static void rkaccel_job_free_mem(struct rkaccel_job *job)
{
	/* begun at SUBMIT but never ended on a core: cancelled or failed */
	if (job->prepared)
		rkaccel_core_job_end(job->prepared, job);
	rkaccel_job_put_bos(job);
	kvfree(job->tasks);
	if (job->done && job->done->ops)
		dma_fence_put(job->done);
	else
		kfree(job->done);
	rkaccel_ctx_put(job->ctx);
	kfree(job);
	module_put(THIS_MODULE);
}

static void rkaccel_job_free(struct drm_sched_job *sched_job)
{
	rkaccel_job_unqueue(to_rkaccel_job(sched_job));
	drm_sched_job_cleanup(sched_job);
	rkaccel_job_free_mem(to_rkaccel_job(sched_job));
}

const struct drm_sched_backend_ops rkaccel_sched_ops = {
	.run_job = rkaccel_job_run,
	.free_job = rkaccel_job_free,
};

/* A stride no element of any version will reach. */
#define RKACCEL_MAX_STRIDE	256

/* Each -EINVAL of SUBMIT says why in the DRM debug log (drm.debug=0x2). */
#define rkaccel_inval(ddev, fmt, ...) ({				\
	drm_dbg(ddev, "SUBMIT: " fmt "\n", ##__VA_ARGS__);		\
	-EINVAL;							\
})

/*
 * Copy @count elements @stride bytes apart into an array of @size-byte
 * elements. A longer element (newer userspace) must be zero past @size; a
 * shorter one (older userspace, at least @min bytes) is zero-extended.
 */
static void *rkaccel_copy_array(struct drm_device *ddev, const char *what, u64 uptr,
				u32 count, u32 stride, size_t size, size_t min)
{
	void __user *src = u64_to_user_ptr(uptr);
	void *buf;
	u32 i;
	int ret;

	if (stride < min || stride > RKACCEL_MAX_STRIDE)
		return ERR_PTR(rkaccel_inval(ddev, "%s stride %u outside %zu..%u", what,
					     stride, min, RKACCEL_MAX_STRIDE));
	buf = kvmalloc_array(count, size, GFP_KERNEL);
	if (!buf)
		return ERR_PTR(-ENOMEM);
	if (stride == size) {
		ret = copy_from_user(buf, src, (size_t)count * size) ? -EFAULT : 0;
	} else {
		for (i = 0, ret = 0; i < count && !ret; i++)
			ret = copy_struct_from_user(buf + (size_t)i * size, size,
						    src + (size_t)i * stride, stride);
		if (ret == -E2BIG)
			ret = rkaccel_inval(ddev, "%s %u: non-zero bytes past %zu", what,
					    i - 1, size);
	}
	if (ret) {
		kvfree(buf);
		return ERR_PTR(ret);
	}
	return buf;
}

static int rkaccel_submit_check_args(struct drm_device *ddev,
				     const struct drm_rkaccel_submit *args)
{
	if (args->flags || args->pad)
		return rkaccel_inval(ddev, "flags 0x%x pad 0x%x", args->flags, args->pad);
	if (!args->task_count || args->task_count > DRM_RKACCEL_MAX_JOB_TASKS)
		return rkaccel_inval(ddev, "task_count %u", args->task_count);
	if (!args->bo_count || args->bo_count > DRM_RKACCEL_MAX_JOB_BOS)
		return rkaccel_inval(ddev, "bo_count %u", args->bo_count);
	if (args->in_sync_count > DRM_RKACCEL_MAX_JOB_SYNCS)
		return rkaccel_inval(ddev, "in_sync_count %u", args->in_sync_count);
	if (!args->in_sync_count && args->sync_stride &&
	    args->sync_stride != sizeof(struct drm_rkaccel_sync))
		return rkaccel_inval(ddev, "sync_stride %u without syncs", args->sync_stride);
	if (!args->out_sync && args->out_sync_point)
		return rkaccel_inval(ddev, "out_sync_point without out_sync");
	return 0;
}

static int rkaccel_submit_get_bos(struct rkaccel_job *job, struct drm_file *file,
				  const struct drm_rkaccel_submit *args)
{
	struct drm_device *ddev = file->minor->dev;
	struct drm_rkaccel_submit_bo *ubos;
	u32 i, j;
	int ret = 0;

	ubos = rkaccel_copy_array(ddev, "bo", args->bos, args->bo_count,
				  args->bo_stride, sizeof(*ubos), sizeof(*ubos));
	if (IS_ERR(ubos))
		return PTR_ERR(ubos);

	job->bos = kvcalloc(args->bo_count, sizeof(*job->bos), GFP_KERNEL);
	job->bo_flags = kvcalloc(args->bo_count, sizeof(*job->bo_flags), GFP_KERNEL);
	job->maps = kvcalloc(args->bo_count, sizeof(*job->maps), GFP_KERNEL);
	if (!job->bos || !job->bo_flags || !job->maps) {
		ret = -ENOMEM;
		goto out;
	}

	for (i = 0; i < args->bo_count; i++) {
		struct rkaccel_bo *bo;

		if (ubos[i].flags & ~DRM_RKACCEL_SUBMIT_BO_WRITE) {
			ret = rkaccel_inval(ddev, "bo %u: flags 0x%x", i, ubos[i].flags);
			goto out;
		}
		for (j = 0; j < i; j++) {
			if (ubos[j].handle == ubos[i].handle) {
				ret = rkaccel_inval(ddev, "bo %u: handle %u listed twice", i,
						    ubos[i].handle);
				goto out;
			}
		}
		job->bos[i] = drm_gem_object_lookup(file, ubos[i].handle);
		if (!job->bos[i]) {
			ret = -ENOENT;
			goto out;
		}
		job->bo_count = i + 1;
		job->bo_flags[i] = ubos[i].flags;
		job->writes |= !!(ubos[i].flags & DRM_RKACCEL_SUBMIT_BO_WRITE);

		bo = to_rkaccel_bo(job->bos[i]);
		job->maps[i] = rkaccel_bo_mapping_get(bo, file->driver_priv);
		if (!job->maps[i]) {
			ret = -ENOENT;
			goto out;
		}
		/* Weights must be final before the device reads them. */
		if ((bo->flags & DRM_RKACCEL_BO_WEIGHT) && !READ_ONCE(bo->sealed)) {
			ret = rkaccel_inval(ddev, "bo %u: weight BO not sealed", i);
			goto out;
		}
	}
out:
	kvfree(ubos);
	return ret;
}

/* Every regcmd buffer must lie inside one BO of the job, in this file's VM. */
static bool rkaccel_task_in_bos(struct rkaccel_job *job, struct rkaccel_file *rfile,
				const struct drm_rkaccel_task *t)
{
	/* the PC fetches whole 128-bit pairs of entries */
	u64 len = (u64)round_up(t->regcmd_count, 2) * sizeof(u64);
	u32 i;

	for (i = 0; i < job->bo_count; i++) {
		u64 start = job->maps[i]->node.start;
		u64 size = job->bos[i]->size;

		if (t->regcmd_addr >= start && t->regcmd_addr - start < size &&
		    len <= size - (t->regcmd_addr - start))
			return true;
	}
	return false;
}

static int rkaccel_submit_get_tasks(struct rkaccel_job *job, struct rkaccel_file *rfile,
				    const struct drm_rkaccel_submit *args)
{
	struct drm_device *ddev = &rfile->rdev->ddev;
	u64 hw_tasks = 0;
	u32 i;

	job->tasks = rkaccel_copy_array(ddev, "task", args->tasks, args->task_count,
					args->task_stride, sizeof(*job->tasks),
					DRM_RKACCEL_TASK_SIZE_V1);
	if (IS_ERR(job->tasks)) {
		int ret = PTR_ERR(job->tasks);

		job->tasks = NULL;
		return ret;
	}
	job->task_count = args->task_count;

	for (i = 0; i < job->task_count; i++) {
		const struct drm_rkaccel_task *t = &job->tasks[i];

		if (t->flags & ~DRM_RKACCEL_TASK_ENDS_PPU || t->pad)
			return rkaccel_inval(ddev, "task %u: flags 0x%x pad 0x%x", i, t->flags,
					     t->pad);
		/* PC_REGISTER_AMOUNTS holds (count + 1) / 2 - 1 in 16 bits */
		if (!t->regcmd_count || t->regcmd_count > 0x20000)
			return rkaccel_inval(ddev, "task %u: regcmd_count %u", i, t->regcmd_count);
		if (!t->task_count || t->task_count > rfile->rdev->soc->max_tasks)
			return rkaccel_inval(ddev, "task %u: task_count %u", i, t->task_count);
		if (!IS_ALIGNED(t->regcmd_addr, 16))
			return rkaccel_inval(ddev, "task %u: regcmd_addr 0x%llx unaligned", i,
					     t->regcmd_addr);
		hw_tasks += t->task_count;
		if (!rkaccel_task_in_bos(job, rfile, t))
			return rkaccel_inval(ddev, "task %u: regcmds at 0x%llx not in a listed BO",
					     i, t->regcmd_addr);
	}
	if (hw_tasks > rfile->rdev->soc->max_tasks)
		return rkaccel_inval(ddev, "%llu hardware tasks in the job", hw_tasks);
	return 0;
}

static int rkaccel_submit_add_in_syncs(struct rkaccel_job *job, struct drm_file *file,
				       const struct drm_rkaccel_submit *args)
{
	struct drm_rkaccel_sync *syncs;
	u32 i;
	int ret = 0;

	if (!args->in_sync_count)
		return 0;
	syncs = rkaccel_copy_array(file->minor->dev, "sync", args->in_syncs,
				   args->in_sync_count, args->sync_stride, sizeof(*syncs),
				   sizeof(*syncs));
	if (IS_ERR(syncs))
		return PTR_ERR(syncs);

	/*
	 * Not drm_sched_job_add_syncobj_dependency(): on 6.12 it takes a
	 * 32-bit point, and timeline points are 64 bits as for the out-sync.
	 */
	for (i = 0; i < args->in_sync_count && !ret; i++) {
		struct dma_fence *fence;

		if (syncs[i].flags) {
			ret = rkaccel_inval(file->minor->dev, "sync %u: flags 0x%x", i,
					    syncs[i].flags);
			break;
		}
		ret = drm_syncobj_find_fence(file, syncs[i].handle, syncs[i].point, 0, &fence);
		if (!ret)
			ret = drm_sched_job_add_dependency(&job->base, fence);
	}
	kvfree(syncs);
	return ret;
}

/* A core held by another address space counts as the busiest: waiting is the last resort. */
static int rkaccel_job_core_load(struct rkaccel_core *core, struct rkaccel_vm *vm)
{
	return atomic_read(&core->queued) + (rkaccel_core_vm_ready(core, vm) ? 0 : SZ_64K);
}

/*
 * Steer the context's next job to the core of its mask with the fewest jobs
 * queued, staying on its current core on a tie. drm_sched moves an entity
 * only when it is idle, so a context with jobs in flight keeps its core.
 */
static struct rkaccel_core *rkaccel_job_balance(struct rkaccel_job *job)
{
	struct rkaccel_vm *vm = &job->ctx->rfile->vm;
	struct rkaccel_ctx *ctx = job->ctx;
	struct rkaccel_device *rdev = ctx->rfile->rdev;
	struct drm_gpu_scheduler *cur = ctx->entity.rq ? ctx->entity.rq->sched : NULL;
	struct rkaccel_core *best = NULL;
	unsigned int i;

	if (hweight32(ctx->core_mask) < 2)
		return NULL;
	for (i = 0; i < rdev->num_cores; i++) {
		struct rkaccel_core *core = rdev->cores[i];
		int load, best_load;

		if (!(ctx->core_mask & BIT(i)))
			continue;
		if (!best) {
			best = core;
			continue;
		}
		load = rkaccel_job_core_load(core, vm);
		best_load = rkaccel_job_core_load(best, vm);
		if (load < best_load || (load == best_load && &core->sched == cur))
			best = core;
	}
	drm_sched_entity_modify_sched(&ctx->entity, &best->sched_self, 1);
	return best;
}

/*
 * An entity with no job queued and its last one done: arming moves it to
 * the core its list names. Under balance_lock nothing can queue on it, so
 * an idle entity stays idle until the arm.
 */
static bool rkaccel_entity_idle(struct drm_sched_entity *entity)
{
	struct dma_fence *last;

	if (spsc_queue_count(&entity->job_queue))
		return false;
	smp_rmb();	/* as drm_sched_entity_select_rq(): the queue before the last job */
	last = rcu_dereference_check(entity->last_scheduled, true);
	return !last || dma_fence_is_signaled(last);
}

/*
 * The cores the job may be armed on (arming cannot be undone): drm_sched
 * keeps a busy entity on its current core and moves an idle one to the
 * core rkaccel_job_balance() left in its list, @best. @cores gets the one
 * or two cores, NULL-padded.
 */
static int rkaccel_job_candidates(struct rkaccel_job *job, struct rkaccel_core *best,
				  struct rkaccel_core *cores[2])
{
	struct drm_sched_entity *entity = &job->ctx->entity;

	cores[0] = entity->rq ? sched_to_core(entity->rq->sched) : best;
	if (best && rkaccel_entity_idle(entity))
		cores[0] = best;
	cores[1] = best != cores[0] ? best : NULL;
	return cores[0] ? 0 : -ENODEV;
}

/* Power the candidate cores before the job is armed. */
static int rkaccel_job_power_up(struct rkaccel_core *cores[2])
{
	int ret;

	ret = rkaccel_core_power_get(cores[0]);
	if (ret || !cores[1])
		return ret;
	ret = rkaccel_core_power_get(cores[1]);
	if (ret)
		rkaccel_core_power_put(cores[0]);
	return ret;
}

static void rkaccel_job_power_drop(struct rkaccel_core *cores[2])
{
	rkaccel_core_power_put(cores[0]);
	if (cores[1])
		rkaccel_core_power_put(cores[1]);
}

/* Armed on @core: keep its power reference for the job, drop the other. */
static void rkaccel_job_power_keep(struct rkaccel_core *core, struct rkaccel_core *cores[2])
{
	unsigned int i;

	WARN_ON_ONCE(core != cores[0] && core != cores[1]);
	for (i = 0; i < 2; i++)
		if (cores[i] && cores[i] != core)
			rkaccel_core_power_put(cores[i]);
}

/*
 * Lease the candidate cores to the job's address space, attaching it where
 * needed: here, not in run_job. All or none: on -EAGAIN, *@busy is the
 * core to wait for.
 */
static int rkaccel_job_lease(struct rkaccel_job *job, struct rkaccel_core *cores[2],
			     struct rkaccel_core **busy)
{
	struct rkaccel_vm *vm = &job->ctx->rfile->vm;
	int ret;

	ret = rkaccel_core_vm_get(cores[0], vm);
	if (ret) {
		*busy = ret == -EAGAIN ? cores[0] : NULL;
		return ret;
	}
	if (!cores[1])
		return 0;
	ret = rkaccel_core_vm_get(cores[1], vm);
	if (ret) {
		*busy = ret == -EAGAIN ? cores[1] : NULL;
		rkaccel_core_vm_put(cores[0]);
	}
	return ret;
}

/* Armed on @core: its lease is the job's until the job ends. */
static void rkaccel_job_lease_keep(struct rkaccel_core *core, struct rkaccel_core *cores[2])
{
	unsigned int i;

	for (i = 0; i < 2; i++)
		if (cores[i] && cores[i] != core)
			rkaccel_core_vm_put(cores[i]);
}

/*
 * Implicit sync on the BOs, then queue; the finished fence lands in resv.
 * -EAGAIN: *@busy, a candidate core, runs another address space's jobs.
 */
static int rkaccel_submit_push(struct rkaccel_job *job, struct dma_fence **out,
			       struct rkaccel_core **busy)
{
	struct rkaccel_device *rdev = job->ctx->rfile->rdev;
	struct rkaccel_core *cores[2];
	struct ww_acquire_ctx ticket;
	u32 i;
	int ret;

	ret = drm_gem_lock_reservations(job->bos, job->bo_count, &ticket);
	if (ret)
		return ret;

	for (i = 0; i < job->bo_count; i++) {
		bool write = job->bo_flags[i] & DRM_RKACCEL_SUBMIT_BO_WRITE;

		ret = dma_resv_reserve_fences(job->bos[i]->resv, 1);
		if (!ret)
			ret = drm_sched_job_add_implicit_dependencies(&job->base, job->bos[i],
								      write);
		if (ret)
			goto unlock;
	}

	/* Choosing the core, arming and counting the job are one step. */
	mutex_lock(&rdev->balance_lock);
	if (rkaccel_ctx_closed(job->ctx)) {
		ret = -ENOENT;	/* CTX_DESTROY won the race */
		goto unlock_balance;
	}
	/* power and lease may fail: before the point of no return */
	ret = rkaccel_job_candidates(job, rkaccel_job_balance(job), cores);
	if (ret)
		goto unlock_balance;
	ret = rkaccel_job_power_up(cores);
	if (ret)
		goto unlock_balance;
	ret = rkaccel_job_lease(job, cores, busy);
	if (ret) {
		rkaccel_job_power_drop(cores);
		goto unlock_balance;
	}
	drm_sched_job_arm(&job->base);
	rkaccel_job_power_keep(sched_to_core(job->base.sched), cores);
	rkaccel_job_lease_keep(sched_to_core(job->base.sched), cores);
	/* DMA state of the core, outside the signalling path */
	rkaccel_core_job_begin(sched_to_core(job->base.sched), job);
	job->prepared = sched_to_core(job->base.sched);
	job->queued_on = job->prepared;
	atomic_inc(&job->queued_on->queued);
	*out = dma_fence_get(&job->base.s_fence->finished);
	for (i = 0; i < job->bo_count; i++)
		dma_resv_add_fence(job->bos[i]->resv, *out,
				   job->bo_flags[i] & DRM_RKACCEL_SUBMIT_BO_WRITE ?
				   DMA_RESV_USAGE_WRITE : DMA_RESV_USAGE_READ);
	atomic64_inc(&job->ctx->submitted);
	trace_rkaccel_submit((*out)->context, (*out)->seqno, -1, 0);
	drm_gem_unlock_reservations(job->bos, job->bo_count, &ticket);
	/* Last: once pushed the job may run and be freed at any time. */
	drm_sched_entity_push_job(&job->base);
	mutex_unlock(&rdev->balance_lock);
	return 0;

unlock_balance:
	mutex_unlock(&rdev->balance_lock);
unlock:
	drm_gem_unlock_reservations(job->bos, job->bo_count, &ticket);
	return ret;
}

/*
 * The push powers a core and arms the job on it: the device's unplug waits
 * for it, and after the unplug no push reaches a core (rkaccel_core_detach()).
 */
static int rkaccel_submit_push_present(struct rkaccel_job *job, struct dma_fence **out,
				       struct rkaccel_core **busy)
{
	int idx, ret;

	if (!drm_dev_enter(&job->ctx->rfile->rdev->ddev, &idx))
		return -ENODEV;
	ret = rkaccel_submit_push(job, out, busy);
	drm_dev_exit(idx);
	return ret;
}

/*
 * Queue the job, waiting (holding nothing) while a core it may run on
 * runs another address space's jobs; the first such waiter claims the
 * core's next turn, so that the owner cannot keep it. The claim goes with
 * the last try, whatever its end.
 */
static int rkaccel_submit_queue(struct rkaccel_job *job, struct dma_fence **out)
{
	struct rkaccel_vm *vm = &job->ctx->rfile->vm;
	struct rkaccel_core *waited = NULL, *busy;
	int ret;

	for (;;) {
		busy = NULL;
		ret = rkaccel_submit_push_present(job, out, &busy);
		if (ret != -EAGAIN || !busy)
			break;
		if (waited && waited != busy)
			rkaccel_core_vm_unclaim(waited, vm);
		waited = busy;
		ret = wait_event_interruptible(busy->vm_idle, rkaccel_core_vm_ready(busy, vm));
		if (ret)
			break;
	}
	if (waited)
		rkaccel_core_vm_unclaim(waited, vm);
	return ret;
}

static int rkaccel_submit_prepare_out(struct drm_file *file,
				      const struct drm_rkaccel_submit *args,
				      struct drm_syncobj **syncobj,
				      struct dma_fence_chain **chain)
{
	if (!args->out_sync)
		return 0;
	*syncobj = drm_syncobj_find(file, args->out_sync);
	if (!*syncobj)
		return -ENOENT;
	if (args->out_sync_point) {
		*chain = dma_fence_chain_alloc();
		if (!*chain) {
			drm_syncobj_put(*syncobj);
			*syncobj = NULL;
			return -ENOMEM;
		}
	}
	return 0;
}

static void rkaccel_submit_signal_out(const struct drm_rkaccel_submit *args,
				      struct drm_syncobj *syncobj,
				      struct dma_fence_chain *chain, struct dma_fence *fence)
{
	if (!syncobj)
		return;
	if (chain)
		drm_syncobj_add_point(syncobj, chain, fence, args->out_sync_point);
	else
		drm_syncobj_replace_fence(syncobj, fence);
	drm_syncobj_put(syncobj);
}

int rkaccel_ioctl_submit(struct drm_device *ddev, void *data, struct drm_file *file)
{
	struct rkaccel_file *rfile = file->driver_priv;
	struct drm_rkaccel_submit *args = data;
	struct dma_fence_chain *chain = NULL;
	struct drm_syncobj *syncobj = NULL;
	struct dma_fence *fence = NULL;
	struct rkaccel_job *job;
	struct rkaccel_ctx *ctx;
	int ret;

	ret = rkaccel_submit_check_args(ddev, args);
	if (ret)
		return ret;
	ctx = rkaccel_ctx_lookup(rfile, args->ctx);
	if (!ctx)
		return -ENOENT;
	if (atomic_read(&ctx->guilty)) {
		rkaccel_ctx_put(ctx);
		return -ECANCELED;
	}

	job = kzalloc(sizeof(*job), GFP_KERNEL);
	if (!job) {
		rkaccel_ctx_put(ctx);
		return -ENOMEM;
	}
	job->ctx = ctx;
	/* A job, queued or running, keeps the module and so the device. */
	__module_get(THIS_MODULE);
	job->done = kzalloc(sizeof(*job->done), GFP_KERNEL);
	if (!job->done) {
		ret = -ENOMEM;
		goto err_free;
	}

	ret = rkaccel_submit_get_bos(job, file, args);
	if (!ret)
		ret = rkaccel_submit_get_tasks(job, rfile, args);
	if (!ret)
		ret = rkaccel_submit_prepare_out(file, args, &syncobj, &chain);
	if (ret)
		goto err_free;

	ret = drm_sched_job_init(&job->base, &ctx->entity, 1, ctx, file->client_id);
	if (ret)
		goto err_out;
	ret = rkaccel_submit_add_in_syncs(job, file, args);
	if (!ret)
		ret = rkaccel_submit_queue(job, &fence);
	if (ret) {
		drm_sched_job_cleanup(&job->base);
		goto err_out;
	}

	rkaccel_submit_signal_out(args, syncobj, chain, fence);
	dma_fence_put(fence);
	return 0;

err_out:
	dma_fence_chain_free(chain);
	if (syncobj)
		drm_syncobj_put(syncobj);
err_free:
	rkaccel_job_free_mem(job);
	return ret;
}
