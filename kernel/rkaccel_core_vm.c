// SPDX-License-Identifier: GPL-2.0-only
/*
 * Which address space a core's DMA goes through. A core has one IOMMU and
 * it holds one domain at a time; attaching one takes the IOMMU group's
 * mutex, which the IOMMU core holds across GFP_KERNEL allocations, so it
 * must never happen where a fence is to be signalled (run_job). A core is
 * therefore leased to one address space at SUBMIT, before the job is
 * armed: jobs of that address space queue on it freely; another address
 * space waits at SUBMIT until the core's jobs are done, then switches it.
 */

#include <drm/drm_managed.h>
#include <linux/mutex.h>
#include <linux/wait.h>

#include "rkaccel_core.h"
#include "rkaccel_device.h"

int rkaccel_core_vm_init(struct rkaccel_core *core)
{
	init_waitqueue_head(&core->vm_idle);
	return drmm_mutex_init(&core->rdev->ddev, &core->vm_lock);
}

/*
 * @self: the caller is one of @core's @vm_wanted. The core's address space
 * yields to one that waits for it, so that a busy file cannot keep it.
 */
bool rkaccel_core_vm_ready(struct rkaccel_core *core, struct rkaccel_vm *vm, bool self)
{
	if (READ_ONCE(core->vm_owner) == vm)
		return atomic_read(&core->vm_wanted) == (int)self;
	return !atomic_read(&core->vm_jobs);
}

/**
 * rkaccel_core_vm_get - lease @core to @vm for one job.
 * @core: a core the job may be armed on.
 * @vm: the job's address space.
 * @self: the caller already counts in @core's waiters.
 *
 * At SUBMIT, in process context, before the job is armed. Switches the
 * core's IOMMU when @vm is not the one attached and the core has no job.
 *
 * Return: 0 with one lease taken (rkaccel_core_vm_put() gives it back),
 * -EAGAIN when another address space holds the core (wait for
 * rkaccel_core_vm_ready(), holding nothing), or the attach's error.
 */
int rkaccel_core_vm_get(struct rkaccel_core *core, struct rkaccel_vm *vm, bool self)
{
	int ret;

	guard(mutex)(&core->vm_lock);
	if (!rkaccel_core_vm_ready(core, vm, self))
		return -EAGAIN;
	if (core->vm_owner != vm) {
		/* what the core had attached is now unknown: no owner */
		WRITE_ONCE(core->vm_owner, NULL);
		ret = core->ops->attach_vm(core, vm);
		if (ret)
			return ret;
		WRITE_ONCE(core->vm_owner, vm);
		atomic64_inc(&core->vm_switches);
	}
	atomic_inc(&core->vm_jobs);
	return 0;
}

/* From any context: the job's DMA on @core is over, or never began. */
void rkaccel_core_vm_put(struct rkaccel_core *core)
{
	if (atomic_dec_and_test(&core->vm_jobs))
		wake_up_all(&core->vm_idle);
}

/*
 * A reset takes the core's IOMMU state with it (the vendor driver attaches
 * its domain again after each soft reset): the leased address space goes
 * back on. Outside any fence-signalling section, as the reset itself. If
 * that fails, the jobs queued for it fail in run_job.
 */
void rkaccel_core_vm_restore(struct rkaccel_core *core)
{
	struct rkaccel_vm *vm;

	if (READ_ONCE(core->gone))
		return;
	guard(mutex)(&core->vm_lock);
	vm = core->vm_owner;
	if (vm && core->ops->attach_vm(core, vm)) {
		dev_err_ratelimited(core->rdev->ddev.dev,
				    "core %u: address space lost in a reset\n", core->index);
		WRITE_ONCE(core->vm_owner, NULL);
	}
}

/* @vm's file is gone (so are its jobs): no core keeps it as its owner. */
void rkaccel_core_vm_forget(struct rkaccel_device *rdev, struct rkaccel_vm *vm)
{
	unsigned int i;

	for (i = 0; i < rdev->num_cores; i++) {
		struct rkaccel_core *core = rdev->cores[i];

		guard(mutex)(&core->vm_lock);
		if (core->vm_owner == vm)
			WRITE_ONCE(core->vm_owner, NULL);
	}
}
