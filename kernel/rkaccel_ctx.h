/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef _RKACCEL_CTX_H_
#define _RKACCEL_CTX_H_

#include <drm/gpu_scheduler.h>
#include <linux/kref.h>

#include "rkaccel_device.h"

struct drm_file;
struct rkaccel_file;

/**
 * struct rkaccel_ctx - an execution context: a scheduler entity over the
 * job queues of the cores in its mask, with its own error state.
 * @refcount: the handle and each job hold one.
 * @rfile: the owning file (a reference).
 * @entity: feeds the cores' schedulers; drm_sched picks the least busy.
 * @sched_list: the schedulers of @core_mask, referenced by @entity.
 * @core_mask: cores allowed, never 0 (0 from userspace means all).
 * @user_mask: the mask as given at creation.
 * @guilty: a job of this context hung a core.
 * @reset_count: core resets caused by this context.
 * @last_core: core of the latest job, ~0 before any.
 * @submitted: jobs accepted by SUBMIT.
 * @completed: jobs done without error.
 * @failed: jobs done with an error.
 * @closed: destroyed: SUBMIT queues nothing more (under the device's
 *	balance_lock, which also covers the push of a job).
 */
struct rkaccel_ctx {
	struct kref refcount;
	struct rkaccel_file *rfile;
	struct drm_sched_entity entity;
	struct drm_gpu_scheduler *sched_list[RKACCEL_MAX_CORES];
	u32 core_mask;
	u32 user_mask;
	atomic_t guilty;
	atomic_t reset_count;
	atomic_t last_core;
	atomic64_t submitted;
	atomic64_t completed;
	atomic64_t failed;
	bool closed;
};

struct rkaccel_ctx *rkaccel_ctx_lookup(struct rkaccel_file *rfile, u32 handle);
void rkaccel_ctx_put(struct rkaccel_ctx *ctx);
bool rkaccel_ctx_closed(struct rkaccel_ctx *ctx);
void rkaccel_ctx_destroy_all(struct rkaccel_file *rfile);

int rkaccel_ioctl_ctx_create(struct drm_device *ddev, void *data, struct drm_file *file);
int rkaccel_ioctl_ctx_destroy(struct drm_device *ddev, void *data, struct drm_file *file);
int rkaccel_ioctl_ctx_query(struct drm_device *ddev, void *data, struct drm_file *file);

#endif /* _RKACCEL_CTX_H_ */
