/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef _RKACCEL_CORE_H_
#define _RKACCEL_CORE_H_

#include <drm/gpu_scheduler.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

/* The load window: 10 slots of 100 ms. */
#define RKACCEL_LOAD_SLOTS	10
#define RKACCEL_LOAD_SLOT_NS	(100 * NSEC_PER_MSEC)

struct drm_rkaccel_task;
struct rkaccel_core;
struct rkaccel_device;
struct rkaccel_job;
struct rkaccel_vm;

/**
 * struct rkaccel_reg_ops - the register-access seam of one core.
 * @read: read the 32-bit register at byte offset @reg.
 * @write: write @val to the 32-bit register at byte offset @reg.
 * @attach_vm: make @vm the address space the core's DMA goes through
 *	(silicon: attach its IOMMU domain; simulator: its page table). At
 *	SUBMIT before the job is armed, or after a reset in the reset's
 *	process context; never in run_job (an IOMMU attach takes a mutex
 *	held across allocations). An error fails the SUBMIT, or after a
 *	reset the jobs queued: none runs on another address space.
 * @reset: reset the core: stop whatever it runs, registers to defaults
 *	(silicon masks the interrupt and waits for its handler first).
 * @power_get: optional, at SUBMIT before the job is armed (process
 *	context, may sleep and fail; arming is the point of no return): a
 *	power reference on a core the job may run on. Silicon powers it up.
 * @power_put: optional, drops one @power_get reference (must not sleep).
 * @job_begin: optional, at SUBMIT once the job is armed on its core, which
 *	holds a @power_get reference for it (may sleep, cannot fail, never in
 *	the signalling path): silicon hands the job's BOs to the device.
 * @job_end: optional, once per @job_begin: when the job ends, before its
 *	fence signals (must not sleep), or when a job that never ran is
 *	freed: silicon hands written BOs back to the CPU. The job's power
 *	reference is dropped right after.
 *
 * Silicon maps these to MMIO; the simulator to its register file. The job,
 * IRQ and reset code above only ever goes through them.
 */
struct rkaccel_reg_ops {
	u32 (*read)(struct rkaccel_core *core, u32 reg);
	void (*write)(struct rkaccel_core *core, u32 reg, u32 val);
	int (*attach_vm)(struct rkaccel_core *core, struct rkaccel_vm *vm);
	void (*reset)(struct rkaccel_core *core);
	int (*power_get)(struct rkaccel_core *core);
	void (*power_put)(struct rkaccel_core *core);
	void (*job_begin)(struct rkaccel_core *core, struct rkaccel_job *job);
	void (*job_end)(struct rkaccel_core *core, struct rkaccel_job *job);
};

/**
 * struct rkaccel_core - one NPU core and its job queue.
 * @rdev: the device the core belongs to.
 * @index: core number, 0-based.
 * @slot: the core's number on the SoC (differs from @index after an
 *	absent core), for the registers that name it.
 * @ops: register access.
 * @backend: backend private state (MMIO base or simulated core).
 * @gone: the backend is going (its device unbinds): no job runs on the core
 *	and nothing reaches @backend any more (rkaccel_core_detach()).
 * @power_refs: @ops power_get references held; dropped at once when gone.
 * @hw_version: what QUERY reports, read once at creation.
 * @name: "rkaccel-coreN", the name of @sched and of its workqueue.
 * @sched: the core's job queue, one job in flight.
 * @sched_self: a scheduler list of just @sched, to pin an entity's next job.
 * @queued: jobs pushed to this core and not yet done, for balancing.
 * @vm_lock: serialises address-space switches and claims of @vm_next.
 * @vm_owner: the address space attached to the core, whose jobs alone are
 *	armed on it; NULL when none is known to be attached.
 * @vm_jobs: leases of @vm_owner: its jobs armed on the core (or about to
 *	be) and not yet ended.
 * @vm_next: the address space whose SUBMIT claimed the core's next turn
 *	(it waits for @vm_jobs to drain; the owner's new jobs wait for it).
 * @vm_idle: woken when @vm_jobs drops to zero or @vm_next is cleared.
 * @vm_switches: address-space switches, for debugfs.
 * @fence_context: dma_fence context of the core's hardware fences.
 * @fence_seqno: last seqno used on @fence_context.
 * @fence_lock: lock of the core's hardware fences.
 * @job_lock: protects @job and the job's progress.
 * @job: the job on the core, NULL when idle.
 * @watchdog: looks at @job every timeout: reset the core when it hung.
 * @poll: on SoCs whose completion interrupt cannot be relied on (RK3576),
 *	watches PC_TASK_STATUS reach @poll_tasks while a chain runs.
 * @poll_work: completes the chain @poll saw done, as the interrupt would.
 * @poll_tasks: tasks of the running chain.
 * @poll_ns: how long until @poll looks again: doubled at each look.
 * @done_bits: the completion bits of the running chain's last block,
 *	enabled in INTERRUPT_MASK; under @job_lock.
 * @fault_work: resets the core after an error interrupt or an IOMMU
 *	page fault, then ends
 *	@faulted with @fault_error.
 * @faulted: the job an error took off the core, until then.
 * @fault_error: its fence's error.
 * @jobs: jobs run, for debugfs.
 * @faults: jobs that ended with a DMA error or an IOMMU fault.
 * @resets: resets after a timeout.
 * @busy_ns: time spent running jobs.
 * @load_lock: protects @load.
 * @load: busy ns per 100 ms slot of the last second, for the load figure.
 */
struct rkaccel_core {
	struct rkaccel_device *rdev;
	unsigned int index;
	unsigned int slot;
	const struct rkaccel_reg_ops *ops;
	void *backend;
	bool gone;
	atomic_t power_refs;
	u32 hw_version;

	char name[16];
	struct drm_gpu_scheduler sched;
	struct drm_gpu_scheduler *sched_self;
	atomic_t queued;
	struct mutex vm_lock;	/* address-space switches */
	struct rkaccel_vm *vm_owner;
	atomic_t vm_jobs;
	struct rkaccel_vm *vm_next;
	wait_queue_head_t vm_idle;
	atomic64_t vm_switches;
	u64 fence_context;
	u64 fence_seqno;
	spinlock_t fence_lock;	/* of the hardware fences */

	spinlock_t job_lock;	/* protects job */
	struct rkaccel_job *job;
	struct delayed_work watchdog;
	struct hrtimer poll;
	struct work_struct poll_work;
	u32 poll_tasks;
	u32 poll_ns;
	u32 done_bits;
	struct work_struct fault_work;
	struct rkaccel_job *faulted;
	int fault_error;

	atomic64_t jobs;
	atomic64_t faults;
	atomic64_t resets;
	atomic64_t busy_ns;

	spinlock_t load_lock;	/* protects load */
	struct rkaccel_load_slot {
		u64 epoch;
		u64 busy_ns;
	} load[RKACCEL_LOAD_SLOTS];
};

static inline u32 rkaccel_core_read(struct rkaccel_core *core, u32 reg)
{
	return core->ops->read(core, reg);
}

static inline void rkaccel_core_write(struct rkaccel_core *core, u32 reg, u32 val)
{
	core->ops->write(core, reg, val);
}

/* At SUBMIT, under drm_dev_enter(): never once the core is gone. */
static inline int rkaccel_core_power_get(struct rkaccel_core *core)
{
	int ret = core->ops->power_get ? core->ops->power_get(core) : 0;

	if (!ret)
		atomic_inc(&core->power_refs);
	return ret;
}

void rkaccel_core_power_put(struct rkaccel_core *core);

static inline void rkaccel_core_job_begin(struct rkaccel_core *core, struct rkaccel_job *job)
{
	if (core->ops->job_begin)
		core->ops->job_begin(core, job);
}

static inline void rkaccel_core_job_end(struct rkaccel_core *core, struct rkaccel_job *job)
{
	if (core->ops->job_end)
		core->ops->job_end(core, job);
	rkaccel_core_power_put(core);
}

int rkaccel_core_vm_init(struct rkaccel_core *core);
bool rkaccel_core_vm_ready(struct rkaccel_core *core, struct rkaccel_vm *vm);
int rkaccel_core_vm_get(struct rkaccel_core *core, struct rkaccel_vm *vm);
void rkaccel_core_vm_unclaim(struct rkaccel_core *core, struct rkaccel_vm *vm);
void rkaccel_core_vm_put(struct rkaccel_core *core);
void rkaccel_core_vm_restore(struct rkaccel_core *core);
void rkaccel_core_vm_forget(struct rkaccel_device *rdev, struct rkaccel_vm *vm);
void rkaccel_core_reset(struct rkaccel_core *core);

u32 rkaccel_core_hw_version(struct rkaccel_core *core);
struct rkaccel_core *rkaccel_core_create(struct rkaccel_device *rdev, unsigned int index,
					 const struct rkaccel_reg_ops *ops, void *backend);
int rkaccel_core_sched_init(struct rkaccel_core *core);
void rkaccel_core_sched_fini(struct rkaccel_core *core);
void rkaccel_core_quiesce(struct rkaccel_core *core);
void rkaccel_core_detach(struct rkaccel_core *core);
u32 rkaccel_core_task_con(const struct rkaccel_core *core, u32 task_count);
void rkaccel_core_start_task(struct rkaccel_core *core, const struct drm_rkaccel_task *t);
void rkaccel_core_irq(struct rkaccel_core *core, u32 bits);
bool rkaccel_core_irq_atomic(struct rkaccel_core *core, u32 bits);
bool rkaccel_core_iommu_fault(struct rkaccel_core *core);
void rkaccel_core_watch(struct rkaccel_core *core);
void rkaccel_core_account(struct rkaccel_core *core, ktime_t start, ktime_t end);
u32 rkaccel_core_load_permille(struct rkaccel_core *core);

#endif /* _RKACCEL_CORE_H_ */
