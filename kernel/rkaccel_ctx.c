// SPDX-License-Identifier: GPL-2.0-only
/*
 * Contexts: each one a drm_sched entity over the job queues of the cores in
 * its mask. Jobs of different contexts of one file run on different cores at
 * the same time; a hang marks only the context whose job hung.
 */

#include <drm/drm_file.h>
#include <drm/drm_print.h>
#include <linux/bits.h>
#include <linux/capability.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "rkaccel_core.h"
#include "rkaccel_ctx.h"
#include "rkaccel_device.h"

static const enum drm_sched_priority rkaccel_sched_prio[] = {
	[DRM_RKACCEL_PRIORITY_LOW] = DRM_SCHED_PRIORITY_LOW,
	[DRM_RKACCEL_PRIORITY_NORMAL] = DRM_SCHED_PRIORITY_NORMAL,
	[DRM_RKACCEL_PRIORITY_HIGH] = DRM_SCHED_PRIORITY_HIGH,
};

static void rkaccel_ctx_release(struct kref *kref)
{
	struct rkaccel_ctx *ctx = container_of(kref, struct rkaccel_ctx, refcount);
	struct rkaccel_file *rfile = ctx->rfile;

	atomic_dec(&rfile->rdev->ctx_count);
	kfree(ctx);
	rkaccel_file_put(rfile);
}

void rkaccel_ctx_put(struct rkaccel_ctx *ctx)
{
	kref_put(&ctx->refcount, rkaccel_ctx_release);
}

/* Handles start at 1: 0 is never a context, whatever the xarray holds. */
#define RKACCEL_CTX_HANDLES	XA_LIMIT(1, U32_MAX)

struct rkaccel_ctx *rkaccel_ctx_lookup(struct rkaccel_file *rfile, u32 handle)
{
	struct rkaccel_ctx *ctx;

	if (!handle)
		return NULL;
	xa_lock(&rfile->ctxs);
	ctx = xa_load(&rfile->ctxs, handle);
	if (ctx)
		kref_get(&ctx->refcount);
	xa_unlock(&rfile->ctxs);
	return ctx;
}

/* Under balance_lock: a job pushed before this runs, none is pushed after. */
bool rkaccel_ctx_closed(struct rkaccel_ctx *ctx)
{
	lockdep_assert_held(&ctx->rfile->rdev->balance_lock);
	return ctx->closed;
}

/*
 * How long a closing exiting task waits for the queued jobs: a SIGKILLed
 * submitter gets drm_sched's grace and then cancels what has not started;
 * any other exiting task (a normal exit, or a killed fork child that held
 * the last inherited fd) lets them run, as a close does. The watchdog
 * bounds each job, so the wait ends.
 */
static long rkaccel_ctx_flush_timeout(struct rkaccel_ctx *ctx)
{
	if ((current->flags & PF_EXITING) && current->exit_code == SIGKILL &&
	    READ_ONCE(ctx->entity.last_user) == current->group_leader)
		return MAX_WAIT_SCHED_ENTITY_Q_EMPTY;
	return MAX_SCHEDULE_TIMEOUT;
}

/*
 * No SUBMIT pushes to the entity any more; the jobs queued on it are still
 * handed to the cores before it goes (a SIGKILLed submitter cancels them).
 */
static void rkaccel_ctx_destroy(struct rkaccel_ctx *ctx)
{
	scoped_guard(mutex, &ctx->rfile->rdev->balance_lock)
		ctx->closed = true;
	drm_sched_entity_flush(&ctx->entity, rkaccel_ctx_flush_timeout(ctx));
	drm_sched_entity_fini(&ctx->entity);
	rkaccel_ctx_put(ctx);
}

void rkaccel_ctx_destroy_all(struct rkaccel_file *rfile)
{
	struct rkaccel_ctx *ctx;
	unsigned long handle;

	xa_for_each(&rfile->ctxs, handle, ctx) {
		xa_erase(&rfile->ctxs, handle);
		rkaccel_ctx_destroy(ctx);
	}
}

static int rkaccel_ctx_check_args(struct rkaccel_device *rdev,
				  const struct drm_rkaccel_ctx_create *args)
{
	struct drm_device *ddev = &rdev->ddev;

	if (args->flags) {
		drm_dbg(ddev, "CTX_CREATE: flags 0x%x\n", args->flags);
		return -EINVAL;
	}
	if (args->core_mask & ~GENMASK(rdev->num_cores - 1, 0)) {
		drm_dbg(ddev, "CTX_CREATE: core_mask 0x%x, %u cores\n", args->core_mask,
			rdev->num_cores);
		return -EINVAL;
	}
	if (args->priority >= ARRAY_SIZE(rkaccel_sched_prio)) {
		drm_dbg(ddev, "CTX_CREATE: priority %u\n", args->priority);
		return -EINVAL;
	}
	if (args->priority == DRM_RKACCEL_PRIORITY_HIGH && !capable(CAP_SYS_NICE))
		return -EPERM;
	return 0;
}

int rkaccel_ioctl_ctx_create(struct drm_device *ddev, void *data, struct drm_file *file)
{
	struct rkaccel_device *rdev = to_rkaccel_device(ddev);
	struct rkaccel_file *rfile = file->driver_priv;
	struct drm_rkaccel_ctx_create *args = data;
	unsigned int i, n = 0;
	struct rkaccel_ctx *ctx;
	u32 handle;
	int ret;

	ret = rkaccel_ctx_check_args(rdev, args);
	if (ret)
		return ret;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	kref_init(&ctx->refcount);
	ctx->user_mask = args->core_mask;
	ctx->core_mask = args->core_mask ?: GENMASK(rdev->num_cores - 1, 0);
	atomic_set(&ctx->last_core, -1);
	for (i = 0; i < rdev->num_cores; i++)
		if (ctx->core_mask & BIT(i))
			ctx->sched_list[n++] = &rdev->cores[i]->sched;

	ret = drm_sched_entity_init(&ctx->entity, rkaccel_sched_prio[args->priority],
				    ctx->sched_list, n, NULL);
	if (ret) {
		kfree(ctx);
		return ret;
	}

	kref_get(&rfile->refcount);
	ctx->rfile = rfile;
	atomic_inc(&rdev->ctx_count);

	ret = xa_alloc(&rfile->ctxs, &handle, ctx, RKACCEL_CTX_HANDLES, GFP_KERNEL);
	if (ret) {
		rkaccel_ctx_destroy(ctx);
		return ret;
	}
	args->handle = handle;
	return 0;
}

int rkaccel_ioctl_ctx_destroy(struct drm_device *ddev, void *data, struct drm_file *file)
{
	struct rkaccel_file *rfile = file->driver_priv;
	struct drm_rkaccel_ctx_destroy *args = data;
	struct rkaccel_ctx *ctx;

	if (args->pad) {
		drm_dbg(ddev, "CTX_DESTROY: pad 0x%x\n", args->pad);
		return -EINVAL;
	}
	/* erasing index 0 would free it for the next allocation */
	if (!args->handle)
		return -ENOENT;
	ctx = xa_erase(&rfile->ctxs, args->handle);
	if (!ctx)
		return -ENOENT;
	rkaccel_ctx_destroy(ctx);
	return 0;
}

int rkaccel_ioctl_ctx_query(struct drm_device *ddev, void *data, struct drm_file *file)
{
	struct drm_rkaccel_ctx_query *args = data;
	struct rkaccel_ctx *ctx;

	if (args->flags) {
		drm_dbg(ddev, "CTX_QUERY: flags 0x%x\n", args->flags);
		return -EINVAL;
	}
	ctx = rkaccel_ctx_lookup(file->driver_priv, args->handle);
	if (!ctx)
		return -ENOENT;

	args->state = atomic_read(&ctx->guilty) ? DRM_RKACCEL_CTX_GUILTY : DRM_RKACCEL_CTX_OK;
	args->reset_count = atomic_read(&ctx->reset_count);
	args->core_mask = ctx->user_mask;
	args->last_core = atomic_read(&ctx->last_core);
	args->jobs_submitted = atomic64_read(&ctx->submitted);
	args->jobs_completed = atomic64_read(&ctx->completed);
	args->jobs_failed = atomic64_read(&ctx->failed);
	rkaccel_ctx_put(ctx);
	return 0;
}
