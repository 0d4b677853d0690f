// SPDX-License-Identifier: GPL-2.0-only
/*
 * One NPU core: its job queue, the job programming sequence and the
 * completion path. The same code drives silicon and the simulator; only the
 * register seam differs.
 */

#include <drm/drm_managed.h>
#include <linux/bits.h>
#include <linux/dma-fence.h>
#include <linux/module.h>

#include "rkaccel_compat.h"
#include "rkaccel_core.h"
#include "rkaccel_device.h"
#include "rkaccel_job.h"
#include "rkaccel_regs.h"

static unsigned int timeout_ms = 500;
module_param(timeout_ms, uint, 0644);
MODULE_PARM_DESC(timeout_ms, "A job that makes no progress for this long is hung, ms (default 500; writable, read at each look)");

static unsigned int max_job_ms = 30000;
module_param(max_job_ms, uint, 0644);
MODULE_PARM_DESC(max_job_ms,
		 "Most time one job may hold a core, progressing or not, ms (default 30000)");

static unsigned int poll_first_us = 10;
module_param(poll_first_us, uint, 0644);
MODULE_PARM_DESC(poll_first_us,
		 "RK3576: first look at a running chain's task counter, us, doubled at each look up to 200 (default 10; writable, read at each chain's start)");

u32 rkaccel_core_hw_version(struct rkaccel_core *core)
{
	return rkaccel_core_read(core, RKNPU_PC_VERSION) +
	       (rkaccel_core_read(core, RKNPU_PC_VERSION_NUM) & 0xffff);
}

struct rkaccel_core *rkaccel_core_create(struct rkaccel_device *rdev, unsigned int index,
					 const struct rkaccel_reg_ops *ops, void *backend)
{
	struct rkaccel_core *core;
	int ret;

	core = drmm_kzalloc(&rdev->ddev, sizeof(*core), GFP_KERNEL);
	if (!core)
		return ERR_PTR(-ENOMEM);

	core->rdev = rdev;
	core->index = index;
	core->slot = index;
	core->ops = ops;
	core->backend = backend;
	core->hw_version = rkaccel_core_hw_version(core);
	core->fence_context = dma_fence_context_alloc(1);
	core->sched_self = &core->sched;
	spin_lock_init(&core->job_lock);
	spin_lock_init(&core->load_lock);
	spin_lock_init(&core->fence_lock);
	ret = rkaccel_core_vm_init(core);
	return ret ? ERR_PTR(ret) : core;
}

/* The backend's reset, then the core's address space back on. */
void rkaccel_core_reset(struct rkaccel_core *core)
{
	core->ops->reset(core);
	rkaccel_core_vm_restore(core);
}

/*
 * PC_TASK_STATUS's task counter: the vendor masks it with the task number's
 * width; RK3576 uses the bits above for something undocumented.
 */
static u32 rkaccel_core_tasks_done(struct rkaccel_core *core)
{
	const struct rkaccel_soc_data *soc = core->rdev->soc;

	return rkaccel_core_read(core, soc->task_status_reg) &
	       GENMASK(soc->task_number_bits - 1, 0);
}

/* The hang timeout now: writable at run time, never 0 (a watchdog that spins). */
static u32 rkaccel_timeout_ms(void)
{
	return max(READ_ONCE(timeout_ms), 1u);
}

/* Under the job lock: look at the job on the core again in one timeout. */
void rkaccel_core_watch(struct rkaccel_core *core)
{
	lockdep_assert_held(&core->job_lock);
	mod_delayed_work(system_wq, &core->watchdog, msecs_to_jiffies(rkaccel_timeout_ms()));
}

/*
 * Under the job lock, so that the IRQ path cannot end the job halfway: a
 * job that went on to another PC start or task since the last look is
 * late, not hung, until it has held the core for max_job_ms. A job that
 * started less than a timeout ago (the look was for its predecessor) is
 * looked at again later. Returns true when @job is hung and now off the core.
 */
static bool rkaccel_core_job_hung(struct rkaccel_core *core, struct rkaccel_job *job)
{
	s64 held = ktime_ms_delta(ktime_get(), job->start);
	u32 timeout = rkaccel_timeout_ms();
	u64 mark;

	if (held < timeout) {
		mod_delayed_work(system_wq, &core->watchdog, msecs_to_jiffies(timeout - held));
		return false;
	}
	mark = ((u64)job->next_task << 32) | rkaccel_core_tasks_done(core);
	if (mark != job->progress && held < max(READ_ONCE(max_job_ms), timeout)) {
		job->progress = mark;
		rkaccel_core_watch(core);
		return false;
	}
	core->job = NULL;
	return true;
}

/*
 * The scheduler's own timeout cannot leave a slow but moving job running
 * on every kernel rkaccel supports, so each core times its job itself.
 */
static void rkaccel_core_watchdog(struct work_struct *work)
{
	struct rkaccel_core *core = container_of(to_delayed_work(work), struct rkaccel_core,
						 watchdog);
	struct rkaccel_job *job;
	unsigned long flags;
	bool hung = false;

	spin_lock_irqsave(&core->job_lock, flags);
	job = core->job;
	if (job)
		hung = rkaccel_core_job_hung(core, job);
	spin_unlock_irqrestore(&core->job_lock, flags);
	if (hung)
		rkaccel_job_hung(core, job);
}

/*
 * A job ended with an error interrupt: reset the core (which waits for the
 * IRQ thread, so not from it), then end the job. Its fence holds the queue
 * until then: the next job never starts on a core mid-transfer.
 */
static void rkaccel_core_fault_work(struct work_struct *work)
{
	struct rkaccel_core *core = container_of(work, struct rkaccel_core, fault_work);
	struct rkaccel_job *job = core->faulted;
	bool cookie;

	rkaccel_core_reset(core);
	core->faulted = NULL;
	cookie = dma_fence_begin_signalling();
	rkaccel_job_finish(core, job, core->fault_error);
	dma_fence_end_signalling(cookie);
}

/*
 * RK3576's completion interrupt cannot be relied on: PC_DONE is not
 * maskable and int32 or fp16 output tasks raise no DPU bit. Its chains are
 * seen done by polling PC_TASK_STATUS instead (as the out-of-tree RK3576
 * rocket series does); the interrupt then only reports errors.
 */
static bool rkaccel_core_polls(const struct rkaccel_core *core)
{
	return core->rdev->soc->soc == DRM_RKACCEL_SOC_RK3576;
}

/*
 * When a polled chain's task counter is read: first soon after the start
 * (poll_first_us), then twice as late each time up to a ceiling, so that a
 * short chain ends within tens of microseconds and a long one costs a few
 * reads more; from there every 200 us, the fixed period it was before.
 */
#define RKACCEL_POLL_MAX_NS	(200 * NSEC_PER_USEC)

static u32 rkaccel_core_poll_first_ns(void)
{
	return clamp_t(u32, READ_ONCE(poll_first_us), 1, RKACCEL_POLL_MAX_NS / NSEC_PER_USEC) *
	       NSEC_PER_USEC;
}

/* The next look's delay, and the one after it doubled up to the ceiling. */
static ktime_t rkaccel_core_poll_next(struct rkaccel_core *core)
{
	u32 ns = READ_ONCE(core->poll_ns);

	WRITE_ONCE(core->poll_ns, min_t(u32, ns * 2, RKACCEL_POLL_MAX_NS));
	return ns_to_ktime(ns);
}

/* Under the job lock: start the job's next chain; returns the job when it is done. */
static struct rkaccel_job *rkaccel_core_advance(struct rkaccel_core *core,
						struct rkaccel_job *job)
{
	lockdep_assert_held(&core->job_lock);
	if (++job->next_task < job->task_count) {
		rkaccel_core_start_task(core, &job->tasks[job->next_task]);
		return NULL;
	}
	core->job = NULL;
	return job;
}

static enum hrtimer_restart rkaccel_core_poll_timer(struct hrtimer *timer)
{
	struct rkaccel_core *core = container_of(timer, struct rkaccel_core, poll);

	/* a hint only: the work checks again under the job lock */
	if (!READ_ONCE(core->job))
		return HRTIMER_NORESTART;
	if (rkaccel_core_tasks_done(core) >= READ_ONCE(core->poll_tasks)) {
		queue_work(system_highpri_wq, &core->poll_work);
		return HRTIMER_NORESTART;
	}
	hrtimer_forward_now(timer, rkaccel_core_poll_next(core));
	return HRTIMER_RESTART;
}

/* The polled chain is done: what the completion interrupt does elsewhere. */
static void rkaccel_core_poll_work(struct work_struct *work)
{
	struct rkaccel_core *core = container_of(work, struct rkaccel_core, poll_work);
	struct rkaccel_job *job, *done = NULL;
	bool cookie = dma_fence_begin_signalling();
	unsigned long flags;

	spin_lock_irqsave(&core->job_lock, flags);
	job = core->job;
	if (job && rkaccel_core_tasks_done(core) < job->tasks[job->next_task].task_count) {
		/* another chain since the timer looked (or a reset): keep watching */
		hrtimer_start(&core->poll, rkaccel_core_poll_next(core), HRTIMER_MODE_REL);
	} else if (job) {
		rkaccel_core_write(core, RKNPU_PC_OPERATION_ENABLE, 0);
		rkaccel_core_write(core, RKNPU_PC_INTERRUPT_CLEAR, RKNPU_INT_ALL);
		done = rkaccel_core_advance(core, job);
	}
	spin_unlock_irqrestore(&core->job_lock, flags);
	if (done)
		rkaccel_job_finish(core, done, 0);
	dma_fence_end_signalling(cookie);
}

int rkaccel_core_sched_init(struct rkaccel_core *core)
{
	const struct drm_sched_init_args args = {
		.ops = &rkaccel_sched_ops,
		.num_rqs = DRM_SCHED_PRIORITY_COUNT,
		.credit_limit = 1,
		/* the core's watchdog times jobs, not the scheduler */
		.timeout = MAX_SCHEDULE_TIMEOUT,
		.name = core->name,
		.dev = core->rdev->ddev.dev,
	};

	/* drm_sched's own queue, named per core (WQ_HIGHPRI hops slower: bench.rst) */
	snprintf(core->name, sizeof(core->name), "rkaccel-core%u", core->index);
	INIT_DELAYED_WORK(&core->watchdog, rkaccel_core_watchdog);
	INIT_WORK(&core->fault_work, rkaccel_core_fault_work);
	hrtimer_setup(&core->poll, rkaccel_core_poll_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	INIT_WORK(&core->poll_work, rkaccel_core_poll_work);
	return drm_sched_init(&core->sched, &args);
}

/**
 * rkaccel_core_quiesce - wait for the core's recovery and completion work.
 * @core: the core, its queue stopped and no job on it.
 *
 * A job that failed or hung is off the core (core->job is NULL) before
 * fault_work or the watchdog resets the core; a polled chain ends in
 * poll_work. Before the core is powered off or freed, all of it must have
 * run: none is queued again while no job runs.
 */
void rkaccel_core_quiesce(struct rkaccel_core *core)
{
	/* a pending watchdog runs now and finds no job */
	flush_delayed_work(&core->watchdog);
	flush_work(&core->fault_work);
	/* the work may arm the timer again: timer, work, timer */
	hrtimer_cancel(&core->poll);
	cancel_work_sync(&core->poll_work);
	hrtimer_cancel(&core->poll);
}

/*
 * Drops one power reference. After rkaccel_core_detach() the backend may
 * be freed: that dropped the references left, and waited (RCU) for the
 * puts already past the check.
 */
void rkaccel_core_power_put(struct rkaccel_core *core)
{
	rcu_read_lock();
	if (!READ_ONCE(core->gone) && atomic_dec_if_positive(&core->power_refs) >= 0 &&
	    core->ops->power_put)
		core->ops->power_put(core);
	rcu_read_unlock();
}

/**
 * rkaccel_core_detach - the core's backend goes: end all that reaches it.
 * @core: the core; its device is unplugged, so no SUBMIT runs or starts.
 *
 * Called while the backend still exists (a core's remove; fw_devlink
 * unbinds a core when its supply goes). The running job is taken off, the
 * core reset and the job ended with -ENODEV; recovery work has finished;
 * jobs still queued fail with -ENODEV in run_job without touching the
 * core; the power references of all jobs are dropped here, once. What
 * remains (the scheduler, freed with the DRM device) never calls @ops.
 */
void rkaccel_core_detach(struct rkaccel_core *core)
{
	struct rkaccel_job *job;
	unsigned long flags;
	bool cookie;
	int refs;

	WRITE_ONCE(core->gone, true);
	/* a run_job in flight ends first; the next ones see @gone */
	drm_sched_wqueue_stop(&core->sched);
	spin_lock_irqsave(&core->job_lock, flags);
	job = core->job;
	core->job = NULL;
	spin_unlock_irqrestore(&core->job_lock, flags);
	rkaccel_core_quiesce(core);
	if (job) {
		core->ops->reset(core);
		cookie = dma_fence_begin_signalling();
		rkaccel_job_finish(core, job, -ENODEV);
		dma_fence_end_signalling(cookie);
	}
	drm_sched_wqueue_start(&core->sched);

	synchronize_rcu();
	for (refs = atomic_xchg(&core->power_refs, 0); refs > 0; refs--)
		if (core->ops->power_put)
			core->ops->power_put(core);
}

void rkaccel_core_sched_fini(struct rkaccel_core *core)
{
	cancel_delayed_work_sync(&core->watchdog);
	rkaccel_core_quiesce(core);
	drm_sched_fini(&core->sched);
}

/* PC_TASK_CON: task number plus pp_en / count_clear / last-layer bits. */
u32 rkaccel_core_task_con(const struct rkaccel_core *core, u32 task_count)
{
	unsigned int bits = core->rdev->soc->task_number_bits;

	return (0x7u << bits) | (task_count & GENMASK(bits - 1, 0));
}

/*
 * The PC-mode programming sequence for one chain of tasks. The interrupt
 * mask enables the completion bits of the block that ends the chain (the
 * vendor writes the last task's mask): a pooling chain ends with PPU's.
 * Every status bit is cleared first, so that a bit left by the previous
 * chain, context or reset is not read as this chain's.
 */
void rkaccel_core_start_task(struct rkaccel_core *core, const struct drm_rkaccel_task *t)
{
	u64 regcmd_addr = t->regcmd_addr;
	u32 regcmd_count = t->regcmd_count, task_count = t->task_count;

	core->done_bits = t->flags & DRM_RKACCEL_TASK_ENDS_PPU ? RKNPU_INT_PPU_DONE :
								   RKNPU_INT_DPU_DONE;
	rkaccel_core_write(core, RKNPU_PC_BASE_ADDRESS, 1);
	if (core->rdev->num_cores > 1) {
		u32 ptr = 0xe | (0x10000000u * core->slot);

		rkaccel_core_write(core, RKNPU_CNA_S_POINTER, ptr);
		rkaccel_core_write(core, RKNPU_CORE_S_POINTER, ptr);
	}
	rkaccel_core_write(core, RKNPU_PC_BASE_ADDRESS, lower_32_bits(regcmd_addr));
	rkaccel_core_write(core, RKNPU_PC_REGISTER_AMOUNTS, (regcmd_count + 1) / 2 - 1);
	rkaccel_core_write(core, RKNPU_PC_INTERRUPT_CLEAR, RKNPU_INT_ALL);
	/* DMA errors enabled on purpose: silicon may not raise them unmasked */
	rkaccel_core_write(core, RKNPU_PC_INTERRUPT_MASK, RKNPU_INT_DMA_ERROR |
			   (rkaccel_core_polls(core) ? 0 : core->done_bits));
	rkaccel_core_write(core, RKNPU_PC_TASK_CON, rkaccel_core_task_con(core, task_count));
	rkaccel_core_write(core, RKNPU_PC_TASK_DMA_BASE_ADDR, 0);
	rkaccel_core_write(core, RKNPU_PC_OPERATION_ENABLE, 1);
	if (rkaccel_core_polls(core)) {
		WRITE_ONCE(core->poll_tasks, task_count);
		WRITE_ONCE(core->poll_ns, rkaccel_core_poll_first_ns());
		hrtimer_start(&core->poll, rkaccel_core_poll_next(core), HRTIMER_MODE_REL);
	}
}

/*
 * Under the job lock: take @job off the core, which may be mid-transfer;
 * fault_work resets the core, then ends the job with @error.
 */
static void rkaccel_core_fail_locked(struct rkaccel_core *core, struct rkaccel_job *job,
				     int error)
{
	lockdep_assert_held(&core->job_lock);
	core->job = NULL;
	core->faulted = job;
	core->fault_error = error;
	atomic64_inc(&core->faults);
	queue_work(system_wq, &core->fault_work);
}

/**
 * rkaccel_core_iommu_fault - the core's IOMMU took a page fault.
 * @core: the core.
 *
 * From the IOMMU's fault handler, in its hard IRQ. rk_iommu lets the core
 * run on after the fault, so the job it runs fails with -EIO as on a DMA
 * error interrupt, and the core is reset before the next job.
 *
 * Return: true when a job was running and now fails.
 */
bool rkaccel_core_iommu_fault(struct rkaccel_core *core)
{
	struct rkaccel_job *job;
	unsigned long flags;

	spin_lock_irqsave(&core->job_lock, flags);
	job = core->job;
	if (job)
		rkaccel_core_fail_locked(core, job, -EIO);
	spin_unlock_irqrestore(&core->job_lock, flags);
	return job;
}

/*
 * Interrupt @bits, which the hard IRQ read and cleared: a DMA error ends the
 * job with -EIO, a setting the simulator does not implement with
 * -EOPNOTSUPP; a completion starts the job's next PC start or ends the job.
 */
static void rkaccel_core_complete(struct rkaccel_core *core, u32 bits)
{
	struct rkaccel_job *job;
	unsigned long flags;

	rkaccel_core_write(core, RKNPU_PC_OPERATION_ENABLE, 0);

	spin_lock_irqsave(&core->job_lock, flags);
	job = core->job;
	if (!job) {
		spin_unlock_irqrestore(&core->job_lock, flags);
		return;
	}

	if (bits & RKNPU_INT_ERRORS) {
		rkaccel_core_fail_locked(core, job,
					 bits & RKNPU_INT_DMA_ERROR ? -EIO : -EOPNOTSUPP);
		spin_unlock_irqrestore(&core->job_lock, flags);
		dev_dbg(core->rdev->ddev.dev, "core %u: error interrupt 0x%x\n", core->index, bits);
		return;
	}
	/* a polled SoC's chains end through rkaccel_core_poll_work() alone */
	if (!(bits & core->done_bits) || rkaccel_core_polls(core)) {
		spin_unlock_irqrestore(&core->job_lock, flags);
		return;
	}

	job = rkaccel_core_advance(core, job);
	spin_unlock_irqrestore(&core->job_lock, flags);
	if (job)
		rkaccel_job_finish(core, job, 0);
}

/*
 * From the hard IRQ: the completion when the job goes on to its next PC
 * start or wrote no BO (nothing to sync for the CPU). Saves the IRQ
 * thread's wake-up; false: leave @bits to the thread.
 */
bool rkaccel_core_irq_atomic(struct rkaccel_core *core, u32 bits)
{
	struct rkaccel_job *job;
	unsigned long flags;
	bool fast;

	if (rkaccel_core_polls(core))
		return false;
	spin_lock_irqsave(&core->job_lock, flags);
	job = core->job;
	fast = job && (job->next_task + 1 < job->task_count || !job->writes);
	spin_unlock_irqrestore(&core->job_lock, flags);
	if (fast)
		rkaccel_core_irq(core, bits);
	return fast;
}

/* The completion path: a fence-signalling section, checked by lockdep. */
void rkaccel_core_irq(struct rkaccel_core *core, u32 bits)
{
	bool cookie = dma_fence_begin_signalling();

	rkaccel_core_complete(core, bits);
	dma_fence_end_signalling(cookie);
}

/* Add the busy time [@start, @end) to the load slots it covers. */
void rkaccel_core_account(struct rkaccel_core *core, ktime_t start, ktime_t end)
{
	u64 from = ktime_to_ns(start), to = ktime_to_ns(end);
	unsigned long flags;

	/* only the last second is ever read */
	from = max(from, to > RKACCEL_LOAD_SLOTS * RKACCEL_LOAD_SLOT_NS ?
			 to - RKACCEL_LOAD_SLOTS * RKACCEL_LOAD_SLOT_NS : 0);
	spin_lock_irqsave(&core->load_lock, flags);
	while (from < to) {
		u64 epoch = div64_u64(from, RKACCEL_LOAD_SLOT_NS);
		u64 slot_end = (epoch + 1) * RKACCEL_LOAD_SLOT_NS;
		struct rkaccel_load_slot *slot = &core->load[epoch % RKACCEL_LOAD_SLOTS];
		u64 part = min(to, slot_end) - from;

		if (slot->epoch != epoch) {
			slot->epoch = epoch;
			slot->busy_ns = 0;
		}
		slot->busy_ns += part;
		from += part;
	}
	spin_unlock_irqrestore(&core->load_lock, flags);
}

/* Busy share of the last second (the running job included), per mille. */
u32 rkaccel_core_load_permille(struct rkaccel_core *core)
{
	u64 now = ktime_get_ns(), epoch = div64_u64(now, RKACCEL_LOAD_SLOT_NS);
	u64 first = epoch >= RKACCEL_LOAD_SLOTS - 1 ? epoch - (RKACCEL_LOAD_SLOTS - 1) : 0;
	u64 window = now - first * RKACCEL_LOAD_SLOT_NS, busy = 0, start = 0;
	unsigned long flags;
	unsigned int i;

	spin_lock_irqsave(&core->job_lock, flags);
	if (core->job)
		start = ktime_to_ns(core->job->start);
	spin_unlock_irqrestore(&core->job_lock, flags);
	if (start)
		busy += now - max(start, first * RKACCEL_LOAD_SLOT_NS);

	spin_lock_irqsave(&core->load_lock, flags);
	for (i = 0; i < RKACCEL_LOAD_SLOTS; i++)
		if (core->load[i].epoch >= first && core->load[i].epoch <= epoch)
			busy += core->load[i].busy_ns;
	spin_unlock_irqrestore(&core->load_lock, flags);
	return window ? (u32)min_t(u64, div64_u64(busy * 1000, window), 1000) : 0;
}
