// SPDX-License-Identifier: GPL-2.0-only
/*
 * Which address space a core's DMA goes through. A core has one IOMMU and
 * it holds one domain at a time; attaching one takes the IOMMU group's
 * mutex, which the IOMMU core holds across GFP_KERNEL allocations, so it
 * must never happen in run_job. A core is therefore leased to one address
 * space at SUBMIT, before the job is armed: jobs of that address space
 * queue on it freely; another address space claims the core's next turn,
 * waits at SUBMIT until the core's jobs are done, then switches it.
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

/**
 * rkaccel_core_vm_ready - whether @core would lease itself to @vm now.
 * @core: the core.
 * @vm: an address space.
 *
 * The address space that claimed the core's next turn goes first: the
 * owner's new jobs wait for it, and so does everyone else. Otherwise the
 * owner leases freely, and another address space once the core's jobs
 * are done. Without the core's lock: a hint, or a wait's condition.
 *
 * Return: true when rkaccel_core_vm_get() would not return -EAGAIN.
 */
bool rkaccel_core_vm_ready(struct rkaccel_core *core, struct rkaccel_vm *vm)
{
	struct rkaccel_vm *next = READ_ONCE(core->vm_next);

	if (next && next != vm)
		return false;
	return READ_ONCE(core->vm_owner) == vm || !atomic_read(&core->vm_jobs);
}

/* Under vm_lock: the core's next turn is nobody's again. */
static void rkaccel_core_vm_next_clear(struct rkaccel_core *core)
{
	WRITE_ONCE(core->vm_next, NULL);
	wake_up_all(&core->vm_idle);
}

/**
 * rkaccel_core_vm_get - lease @core to @vm for one job.
 * @core: a core the job may be armed on.
 * @vm: the job's address space.
 *
 * Context: SUBMIT, process context, before the job is armed. Switches the
 * core's IOMMU when @vm is not the one attached and the core has no job.
 *
 * Return: 0 with one lease taken (rkaccel_core_vm_put() gives it back);
 * -EAGAIN when the core is not ready for @vm (wait for
 * rkaccel_core_vm_ready(), holding nothing; the next turn is @vm's when
 * nobody had claimed it); -EIO when the core could not attach @vm.
 */
int rkaccel_core_vm_get(struct rkaccel_core *core, struct rkaccel_vm *vm)
{
	int ret;

	guard(mutex)(&core->vm_lock);
	if (!rkaccel_core_vm_ready(core, vm)) {
		if (!core->vm_next && core->vm_owner != vm)
			WRITE_ONCE(core->vm_next, vm);
		return -EAGAIN;
	}
	if (core->vm_owner != vm) {
		/* what the core had attached is now unknown: no owner */
		WRITE_ONCE(core->vm_owner, NULL);
		ret = core->ops->attach_vm(core, vm);
		if (ret)
			return -EIO;	/* the backend logged its own error */
		WRITE_ONCE(core->vm_owner, vm);
		atomic64_inc(&core->vm_switches);
	}
	if (core->vm_next == vm)
		rkaccel_core_vm_next_clear(core);
	atomic_inc(&core->vm_jobs);
	return 0;
}

/**
 * rkaccel_core_vm_unclaim - @vm no longer waits for @core.
 * @core: the core a SUBMIT waited for.
 * @vm: its address space.
 *
 * Context: process context, after the SUBMIT's last try (queued, failed or
 * interrupted). Another waiter of @vm claims the turn again when it retries.
 */
void rkaccel_core_vm_unclaim(struct rkaccel_core *core, struct rkaccel_vm *vm)
{
	guard(mutex)(&core->vm_lock);
	if (core->vm_next == vm)
		rkaccel_core_vm_next_clear(core);
}

/**
 * rkaccel_core_vm_put - give back one lease.
 * @core: the core the job was armed on.
 *
 * Context: any: the job's DMA on @core is over, or never began.
 */
void rkaccel_core_vm_put(struct rkaccel_core *core)
{
	if (atomic_dec_and_test(&core->vm_jobs))
		wake_up_all(&core->vm_idle);
}

/**
 * rkaccel_core_vm_restore - attach the leased address space again.
 * @core: a core just reset.
 *
 * A reset takes the IOMMU's state with it (the vendor driver attaches its
 * domain again after each soft reset). Context: the reset's process
 * context, outside the annotated signalling sections but on the way to the
 * reset job's fence, as the vendor's and rocket's resets are (board.rst).
 * If the attach fails the core has no owner, and the jobs queued for it
 * fail with -EIO in run_job.
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

/**
 * rkaccel_core_vm_forget - no core keeps @vm as its owner.
 * @rdev: the device.
 * @vm: the address space of a file being released (no job of it is left).
 *
 * Context: any process context, free_job's included: no lock is taken (the
 * core's lock is held across IOMMU attaches, which allocate).
 */
void rkaccel_core_vm_forget(struct rkaccel_device *rdev, struct rkaccel_vm *vm)
{
	unsigned int i;

	for (i = 0; i < rdev->num_cores; i++)
		cmpxchg(&rdev->cores[i]->vm_owner, vm, NULL);
}
