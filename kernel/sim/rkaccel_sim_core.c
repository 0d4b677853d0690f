// SPDX-License-Identifier: GPL-2.0-only
/*
 * Simulated NPU core: the register block of a core that the driver found
 * through its normal probe (device tree, or rkaccel_sim_soc.c's platform
 * devices), offered to rkaccel.ko as a provider of register blocks
 * (rkaccel_hw_regs.h). Everything above the registers is the board's code.
 *
 * Writing PC_OPERATION_ENABLE = 1 starts the program counter: a work item
 * fetches the regcmd chain through the attached address space's page table,
 * applies each task's register writes to the register file, counts tasks as
 * PC_TASK_CON asks and follows each task's tail to the next. The time the
 * chain takes comes from a timing model; an hrtimer then raises the DPU
 * completion bits and the core's interrupt line: a GIC interrupt made
 * pending (arm64 device tree) or the shim's software interrupt (x86). A
 * fetch or a datapath access outside the mapped space is an IOMMU page
 * fault instead: reported to the handler the driver registered on the
 * address space (none: nobody hears of it), after which the core stays
 * running and raises nothing, as rk_iommu leaves it after PAGE_FAULT_DONE.
 * A task without an enable entry never completes, as on silicon.
 *
 * A task whose enable names the convolution blocks runs the datapath
 * (rkaccel_sim_conv.c) on the registers it wrote; a task enabling no block
 * computes nothing and only takes its overhead.
 */

#include <linux/delay.h>
#include <linux/device.h>
#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/iommu.h>
#include <linux/irq.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "rkaccel_compat.h"
#include "rkaccel_device.h"
#include "rkaccel_hw_regs.h"
#include "rkaccel_npu_regs.h"
#include "rkaccel_regs.h"
#include "rkaccel_sim.h"
#include "rkaccel_sim_conv.h"

#define SIM_VERSION_NUM		0x0001

/*
 * No published figure gives a fixed cost per task beyond fetching its
 * register commands, which the timing model charges (datapath.rst).
 */
static unsigned long sim_task_ns;
module_param(sim_task_ns, ulong, 0644);
MODULE_PARM_DESC(sim_task_ns, "Simulator: extra fixed time per hardware task, ns (default 0)");

static unsigned int sim_clock_mhz = 1000;
module_param(sim_clock_mhz, uint, 0644);
MODULE_PARM_DESC(sim_clock_mhz, "Simulator: core clock for the MAC time, MHz (default 1000)");

/* one core's sustained DMA bandwidth (datapath.rst, "Timing model") */
static unsigned int sim_mem_mbps = 15000;
module_param(sim_mem_mbps, uint, 0644);
MODULE_PARM_DESC(sim_mem_mbps, "Simulator: DMA bandwidth per core, MB/s (default 15000)");

static unsigned int sim_time_scale = 1;
module_param(sim_time_scale, uint, 0644);
MODULE_PARM_DESC(sim_time_scale, "Simulator: multiply the modelled time (default 1)");

static bool sim_compute = true;
module_param(sim_compute, bool, 0644);
MODULE_PARM_DESC(sim_compute, "Simulator: compute results (1) or only model time (0)");

static unsigned int sim_host_delay_us;
module_param(sim_host_delay_us, uint, 0644);
MODULE_PARM_DESC(sim_host_delay_us, "Simulator: extra host time per executed task, us, a slow host for tests (default 0)");

/* a silent datapath error, for the layer dump's test (rkaccel-run --dump-layers) */
static unsigned int sim_corrupt_task;
module_param(sim_corrupt_task, uint, 0644);
MODULE_PARM_DESC(sim_corrupt_task, "Simulator: flip bits of the first output byte of this task of every chain, 1-based (default 0: none)");

/* silicon's iommu_attach_group() failing, for the driver's error path */
static atomic_t sim_fail_attach = ATOMIC_INIT(0);
static int sim_fail_attach_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n;
	int ret = kstrtouint(val, 0, &n);

	if (!ret)
		atomic_set(&sim_fail_attach, n);
	return ret;
}

static int sim_fail_attach_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&sim_fail_attach));
}

static const struct kernel_param_ops sim_fail_attach_ops = {
	.set = sim_fail_attach_set,
	.get = sim_fail_attach_get,
};
module_param_cb(sim_fail_attach, &sim_fail_attach_ops, NULL, 0644);
MODULE_PARM_DESC(sim_fail_attach,
		 "Simulator: fail this many next address-space attaches with -EIO (default 0)");

/*
 * Where silicon's behaviour is not known (Documentation/datapath.rst), a
 * parameter picks one of the plausible answers, and the driver's tests run
 * under each.
 */
static bool sim_error_line_masked;
module_param(sim_error_line_masked, bool, 0644);
MODULE_PARM_DESC(sim_error_line_masked,
		 "Simulator: DMA error bits assert the line only when INTERRUPT_MASK enables them (1, the TRM's text) or always (0, default)");

static bool sim_reset_keeps_status;
module_param(sim_reset_keeps_status, bool, 0644);
MODULE_PARM_DESC(sim_reset_keeps_status,
		 "Simulator: a core reset leaves INTERRUPT_RAW_STATUS as it was (1) or clears it (0, default)");

static bool sim_status_bit16;
module_param(sim_status_bit16, bool, 0644);
MODULE_PARM_DESC(sim_status_bit16,
		 "Simulator: a chain's end also latches INTERRUPT_RAW_STATUS bit 16, a real but undocumented bit (1) or not (0, default)");

static unsigned int sim_task_status_high = 0x5a5a;
module_param(sim_task_status_high, uint, 0644);
MODULE_PARM_DESC(sim_task_status_high,
		 "Simulator: RK3576's PC_TASK_STATUS bits 31:16 (undocumented; the vendor masks 0xffff), default 0x5a5a");

static bool sim_fault_raises_error;
module_param(sim_fault_raises_error, bool, 0644);
MODULE_PARM_DESC(sim_fault_raises_error,
		 "Simulator: after an IOMMU page fault the core also latches DMA_READ/WRITE_ERROR, as if the MMU ended the access with a bus error (1), or stalls without a bit (0, default)");

static bool sim_irq_in_reset;
module_param(sim_irq_in_reset, bool, 0644);
MODULE_PARM_DESC(sim_irq_in_reset,
		 "Simulator: the core's line fires once when a reset line is asserted, as the IOMMU sharing it may (1), or not (0, default)");

static bool sim_error_in_reset;
module_param(sim_error_in_reset, bool, 0644);
MODULE_PARM_DESC(sim_error_in_reset,
		 "Simulator: a DMA error of the stopped chain lands as the core's reset ends and stays latched in INTERRUPT_RAW_STATUS (1), or not (0, default)");

static bool sim_pending_at_load;
module_param(sim_pending_at_load, bool, 0644);
MODULE_PARM_DESC(sim_pending_at_load,
		 "Simulator: each core comes up with DPU completion latched and enabled and its line asserted, as a kexec from the vendor kernel leaves it (1) or quiet (0, default)");

static unsigned int sim_reset_hold_ms;
module_param(sim_reset_hold_ms, uint, 0644);
MODULE_PARM_DESC(sim_reset_hold_ms,
		 "Simulator: the driver's core reset, once counted in resets, holds until the core's clock stops or this many ms pass: recovery caught mid-reset, for its race with system suspend (default 0)");

static unsigned int resets;
module_param(resets, uint, 0444);
MODULE_PARM_DESC(resets, "Simulator: core resets so far, all cores (read-only, for tests)");
static DEFINE_SPINLOCK(resets_lock);

static unsigned int power_losses;
module_param(power_losses, uint, 0444);
MODULE_PARM_DESC(power_losses, "Simulator: times a core lost its registers to a power domain going off (read-only, for tests)");

/* PC_REGISTER_AMOUNTS is 16 bits of 128-bit pairs */
#define SIM_MAX_CMDS		(0x10000 * 2)
/* A chained fetch may take one pair more (see sim_fetch()). */
#define SIM_FETCH_EXTRA		2

/**
 * struct rkaccel_sim_core - the state of one simulated core.
 * @node: in sim_cores.
 * @dev: the core's device (the driver's), for messages and unbinding.
 * @soc: the core's SoC.
 * @irq: the core's interrupt line.
 * @lock: protects @regs, @vm, @generation and the chain's timing.
 * @hw_version: PC_VERSION to report.
 * @vm: address space the core's DMA goes through.
 * @generation: bumped by reset; stale work and timers see a change and stop.
 * @armed_gen: @generation when @done was armed.
 * @pos: the core's position on the SoC, as the CRU numbers it.
 * @powered: its power domains are on (the CRU says); off, the registers
 *	lost their state and do not answer.
 * @clocked: its aclk is prepared; without it the registers do not answer.
 * @reset_lines: the core's reset lines (srst_a, srst_h) asserted, by bit;
 *	while any is, the registers do not answer.
 * @hold: woken when @clocked changes, for sim_reset_hold_ms.
 * @chain_start: when the running chain started.
 * @chain_ns: its modelled time.
 * @chain_tasks: its tasks once executed, 0 before: PC_TASK_STATUS then
 *	follows the modelled time from 0 to @chain_tasks.
 * @done_bits: what the chain's end raises: the completion bits of the
 *	block of its last task (PPU's for a pooling task, DPU's otherwise),
 *	or nothing on RK3576 after an int32-output task (its DPU raises no
 *	bit for those).
 * @exec_tasks: tasks executed so far, PC_TASK_STATUS while the chain's
 *	host compute runs (a slow host must not look like a hung core).
 * @cmds: the task's regcmd entries, read by @exec: allocated once, for
 *	the largest PC_REGISTER_AMOUNTS, since the hardware path may not
 *	allocate (it runs before the job's fence can signal).
 * @scratch: the datapath's buffers, for the same reason.
 * @exec: runs the program counter.
 * @done: fires when the modelled time of the chain has passed.
 * @regs: the register file of the whole register span.
 * @group_lock: what the IOMMU group's mutex is to rk_iommu's attach: a
 *	sleeping lock that the IOMMU core holds across GFP_KERNEL
 *	allocations, so that lockdep sees an attach where no fence-signalling
 *	section may take it.
 */
struct rkaccel_sim_core {
	struct list_head node;
	struct device *dev;
	const struct rkaccel_soc_data *soc;
	int irq;
	spinlock_t lock;	/* protects regs, vm, generation, chain timing */
	u32 hw_version;
	struct rkaccel_vm *vm;
	u32 generation;
	u32 armed_gen;
	unsigned int pos;
	bool powered;
	bool clocked;
	u32 reset_lines;
	wait_queue_head_t hold;
	ktime_t chain_start;
	u64 chain_ns;
	u32 chain_tasks;
	u32 done_bits;
	u32 exec_tasks;
	u64 *cmds;
	struct rkaccel_sim_scratch scratch;
	struct work_struct exec;
	struct hrtimer done;
	u32 regs[RKNPU_CORE_REG_SPAN / sizeof(u32)];
	struct mutex group_lock;	/* the attach's, as an IOMMU group's */
};

static struct workqueue_struct *sim_wq;
static DEFINE_MUTEX(sim_cores_lock);
/* The cores this module provides registers for; under sim_cores_lock. */
static LIST_HEAD(sim_cores);
/* The same cores by position, for the CRU's clock, reset and power events. */
static DEFINE_SPINLOCK(sim_at_lock);
static struct rkaccel_sim_core *sim_at[RKACCEL_MAX_CORES];

static u32 *sim_reg(struct rkaccel_sim_core *sim, u32 reg)
{
	return &sim->regs[reg / sizeof(u32)];
}

/* Tasks done by modelled time, as silicon's counter would show them now. */
static u32 sim_task_status_locked(struct rkaccel_sim_core *sim)
{
	u64 elapsed;

	if (!sim->chain_tasks)
		return READ_ONCE(sim->exec_tasks);
	elapsed = ktime_to_ns(ktime_sub(ktime_get(), sim->chain_start));
	if (elapsed >= sim->chain_ns)
		return sim->chain_tasks;
	return (u32)div64_u64((u64)sim->chain_tasks * elapsed, sim->chain_ns);
}

static u32 sim_read_locked(struct rkaccel_sim_core *sim, u32 reg)
{
	/* RK3576 uses the upper half for something undocumented */
	if (reg == sim->soc->task_status_reg)
		return sim_task_status_locked(sim) |
		       (sim->soc->soc == DRM_RKACCEL_SOC_RK3576 ?
			READ_ONCE(sim_task_status_high) << 16 : 0);

	switch (reg) {
	case RKNPU_PC_VERSION:
		return sim->hw_version;
	case RKNPU_PC_VERSION_NUM:
		return SIM_VERSION_NUM;
	case RKNPU_PC_INTERRUPT_STATUS:
		return *sim_reg(sim, RKNPU_PC_INTERRUPT_RAW_STATUS) &
		       *sim_reg(sim, RKNPU_PC_INTERRUPT_MASK);
	default:
		return *sim_reg(sim, reg);
	}
}

/*
 * Under the lock: the level of the core's interrupt line. Completion bits
 * assert it when the mask enables them; error bits as sim_error_line_masked
 * says.
 */
static bool sim_line_locked(struct rkaccel_sim_core *sim)
{
	u32 enabled = *sim_reg(sim, RKNPU_PC_INTERRUPT_MASK);

	if (!READ_ONCE(sim_error_line_masked))
		enabled |= RKNPU_INT_DMA_ERROR;
	return *sim_reg(sim, RKNPU_PC_INTERRUPT_RAW_STATUS) & enabled;
}

/* Returns true when the write starts the program counter. */
static bool sim_write_locked(struct rkaccel_sim_core *sim, u32 reg, u32 val)
{
	switch (reg) {
	case RKNPU_PC_VERSION:
	case RKNPU_PC_VERSION_NUM:
	case RKNPU_PC_INTERRUPT_STATUS:
	case RKNPU_PC_INTERRUPT_RAW_STATUS:
		return false;	/* read-only */
	case RKNPU_PC_INTERRUPT_CLEAR:
		*sim_reg(sim, RKNPU_PC_INTERRUPT_RAW_STATUS) &= ~val;
		return false;
	case RKNPU_PC_OPERATION_ENABLE:
		*sim_reg(sim, reg) = val & 1;
		return val & 1;
	case RKNPU_PC_TASK_CON:
		/* TASK_COUNT_CLEAR (the bit above PP_EN): the counter restarts now */
		if (val & BIT(sim->soc->task_number_bits + 1)) {
			sim->chain_tasks = 0;
			WRITE_ONCE(sim->exec_tasks, 0);
		}
		*sim_reg(sim, reg) = val;
		return false;
	default:
		*sim_reg(sim, reg) = val;
		return false;
	}
}

/*
 * The interrupt line: a GIC latches it as pending, as the core's level would
 * (arm64); the x86 shim's software interrupt runs its handler directly.
 */
static void sim_fire(struct rkaccel_sim_core *sim)
{
	if (irq_set_irqchip_state(sim->irq, IRQCHIP_STATE_PENDING, true))
		generic_handle_irq_safe(sim->irq);
}

/*
 * Under the lock: why the core's registers do not answer now, or NULL. On
 * silicon such an access hangs the bus or reads garbage; here it reads 0,
 * a write is dropped, and the log says the driver did it.
 */
static const char *sim_unreachable_locked(struct rkaccel_sim_core *sim)
{
	if (!sim->powered)
		return "its power domain is off";
	if (sim->reset_lines)
		return "held in reset";
	if (!sim->clocked)
		return "unclocked";
	return NULL;
}

static bool sim_reachable_locked(struct rkaccel_sim_core *sim, u32 reg, bool write)
{
	const char *why = sim_unreachable_locked(sim);

	if (why)
		dev_err_ratelimited(sim->dev, "sim: register 0x%x %s while the core is %s\n",
				    reg, write ? "written" : "read", why);
	return !why;
}

/* Explicit lock/unlock: sparse cannot follow guard() through a switch. */
static u32 sim_read(void *priv, u32 reg)
{
	struct rkaccel_sim_core *sim = priv;
	unsigned long flags;
	u32 val = 0;

	if (WARN_ON_ONCE(reg >= RKNPU_CORE_REG_SPAN || reg % 4))
		return 0;

	spin_lock_irqsave(&sim->lock, flags);
	if (sim_reachable_locked(sim, reg, false))
		val = sim_read_locked(sim, reg);
	spin_unlock_irqrestore(&sim->lock, flags);
	return val;
}

static void sim_write(void *priv, u32 reg, u32 val)
{
	struct rkaccel_sim_core *sim = priv;
	unsigned long flags;
	bool start, line;

	if (WARN_ON_ONCE(reg >= RKNPU_CORE_REG_SPAN || reg % 4))
		return;

	spin_lock_irqsave(&sim->lock, flags);
	if (!sim_reachable_locked(sim, reg, true)) {
		spin_unlock_irqrestore(&sim->lock, flags);
		return;
	}
	start = sim_write_locked(sim, reg, val);
	line = sim_line_locked(sim);
	spin_unlock_irqrestore(&sim->lock, flags);
	if (start)
		queue_work(sim_wq, &sim->exec);
	/* a level line: still asserted after a clear or unmask that left bits */
	if (line && (reg == RKNPU_PC_INTERRUPT_CLEAR || reg == RKNPU_PC_INTERRUPT_MASK))
		sim_fire(sim);
}

static int sim_attach_vm(void *priv, struct rkaccel_vm *vm)
{
	struct rkaccel_sim_core *sim = priv;
	unsigned long flags;

	if (atomic_add_unless(&sim_fail_attach, -1, 0))
		return -EIO;

	guard(mutex)(&sim->group_lock);
	spin_lock_irqsave(&sim->lock, flags);
	sim->vm = vm;
	spin_unlock_irqrestore(&sim->lock, flags);
	return 0;
}

/*
 * Under the lock: the core stops (stale work and timers see the new
 * generation) and its registers go to their defaults. @keep_status: the
 * interrupt status survives, where sim_reset_keeps_status says a reset
 * leaves it.
 */
static void sim_defaults_locked(struct rkaccel_sim_core *sim, bool keep_status)
{
	/* the simulator's refusal is its own, not silicon's: a reset ends it */
	u32 raw = *sim_reg(sim, RKNPU_PC_INTERRUPT_RAW_STATUS) & ~RKNPU_INT_SIM_UNSUPPORTED;

	sim->generation++;
	memset(sim->regs, 0, sizeof(sim->regs));
	if (keep_status)
		*sim_reg(sim, RKNPU_PC_INTERRUPT_RAW_STATUS) = raw;
	sim->chain_tasks = 0;
	WRITE_ONCE(sim->exec_tasks, 0);
}

/*
 * A reset of the core takes its IOMMU's state too (the vendor driver
 * attaches its domain again after every soft reset). A power cycle does
 * not: rk_iommu programs its domain again when it resumes.
 */
static void sim_reset_locked(struct rkaccel_sim_core *sim)
{
	sim_defaults_locked(sim, READ_ONCE(sim_reset_keeps_status));
	sim->vm = NULL;
	/* after the handler's last clear: only the driver's own clear ends it */
	if (READ_ONCE(sim_error_in_reset))
		*sim_reg(sim, RKNPU_PC_INTERRUPT_RAW_STATUS) |= RKNPU_INT_DMA_READ_ERROR;
}

/*
 * sim_reset_hold_ms: hold the driver's reset until the core's clock stops
 * (or the time is up), so that whatever stops the clock meanwhile (system
 * suspend) meets recovery mid-reset, every time.
 */
static void sim_reset_hold(struct rkaccel_sim_core *sim)
{
	unsigned int ms = READ_ONCE(sim_reset_hold_ms);

	if (ms)
		wait_event_timeout(sim->hold, !READ_ONCE(sim->clocked), msecs_to_jiffies(ms));
}

/* The block's reset, pulsed by the driver after the core's reset lines. */
static void sim_reset_block(struct rkaccel_sim_core *sim, bool hold)
{
	unsigned long flags;

	spin_lock_irqsave(&sim->lock, flags);
	sim->generation++;
	spin_unlock_irqrestore(&sim->lock, flags);

	cancel_work_sync(&sim->exec);
	hrtimer_cancel(&sim->done);

	scoped_guard(spinlock_irqsave, &resets_lock)
		resets++;
	if (hold)
		sim_reset_hold(sim);

	spin_lock_irqsave(&sim->lock, flags);
	sim_reset_locked(sim);
	spin_unlock_irqrestore(&sim->lock, flags);
}

static void sim_reset(void *priv)
{
	sim_reset_block(priv, true);
}

/* The core at @pos, with its lock taken; NULL when none is claimed there. */
static struct rkaccel_sim_core *sim_at_lock_core(unsigned int pos)
	__acquires(&sim_at_lock)
{
	spin_lock(&sim_at_lock);
	return pos < RKACCEL_MAX_CORES ? sim_at[pos] : NULL;
}

/**
 * rkaccel_sim_core_clock - the CRU prepared or unprepared a core's aclk.
 * @pos: the core's position.
 * @on: prepared.
 */
void rkaccel_sim_core_clock(unsigned int pos, bool on)
{
	struct rkaccel_sim_core *sim;
	unsigned long flags;

	local_irq_save(flags);
	sim = sim_at_lock_core(pos);
	if (sim) {
		spin_lock(&sim->lock);
		WRITE_ONCE(sim->clocked, on);
		spin_unlock(&sim->lock);
		wake_up(&sim->hold);
	}
	spin_unlock(&sim_at_lock);
	local_irq_restore(flags);
}

/**
 * rkaccel_sim_core_reset_line - the CRU asserted or released a reset line.
 * @pos: the core's position.
 * @line: 0 (srst_a) or 1 (srst_h).
 * @asserted: asserted.
 *
 * While any line is asserted the core's registers do not answer; the last
 * line released leaves them at their defaults.
 */
void rkaccel_sim_core_reset_line(unsigned int pos, unsigned int line, bool asserted)
{
	struct rkaccel_sim_core *sim;
	unsigned long flags;

	local_irq_save(flags);
	sim = sim_at_lock_core(pos);
	if (sim) {
		spin_lock(&sim->lock);
		if (asserted) {
			sim->reset_lines |= BIT(line);
			sim->generation++;	/* the core stops now */
		} else if (sim->reset_lines & BIT(line)) {
			sim->reset_lines &= ~BIT(line);
			if (!sim->reset_lines)
				sim_reset_locked(sim);
		}
		spin_unlock(&sim->lock);
		/* the shared line's other user (finding 7): nothing of the core answers */
		if (asserted && READ_ONCE(sim_irq_in_reset))
			sim_fire(sim);
	}
	spin_unlock(&sim_at_lock);
	local_irq_restore(flags);
}

/**
 * rkaccel_sim_core_power - the core's power domains went on or off.
 * @pos: the core's position.
 * @on: all of its domains (and the NPU's top domain) are on.
 *
 * Off, the core loses every register and stops whatever it ran; its page
 * table stays, as rk_iommu restores its domain when it resumes.
 */
void rkaccel_sim_core_power(unsigned int pos, bool on)
{
	struct rkaccel_sim_core *sim;
	unsigned long flags;

	local_irq_save(flags);
	sim = sim_at_lock_core(pos);
	if (sim) {
		spin_lock(&sim->lock);
		if (!on && sim->powered) {
			sim_defaults_locked(sim, false);
			power_losses++;	/* under sim_at_lock */
		}
		sim->powered = on;
		spin_unlock(&sim->lock);
	}
	spin_unlock(&sim_at_lock);
	local_irq_restore(flags);
}

/* What the program counter needs from one task's regcmd. */
struct sim_task {
	u32 next_addr;
	u32 next_amounts;
	u32 op_enable;
	bool enabled;
};

/* Latch interrupt bits; the line rises as sim_line_locked() says. */
static void sim_raise(struct rkaccel_sim_core *sim, u32 gen, u32 bits)
{
	unsigned long flags;
	bool line;

	spin_lock_irqsave(&sim->lock, flags);
	if (gen != sim->generation) {
		spin_unlock_irqrestore(&sim->lock, flags);
		return;
	}
	*sim_reg(sim, RKNPU_PC_INTERRUPT_RAW_STATUS) |= bits;
	/* the simulator's own refusal is not a line of silicon's: always */
	line = sim_line_locked(sim) || (bits & RKNPU_INT_SIM_UNSUPPORTED);
	spin_unlock_irqrestore(&sim->lock, flags);
	if (line)
		sim_fire(sim);
}

/*
 * A DMA access hit a hole or a read-only page: on silicon the core's IOMMU
 * faults, rk_iommu reports it and lets the core go on. The simulated core
 * stalls there (PC_TASK_STATUS stops): without a handler that ends the job,
 * only the watchdog does. Whether the core then also sees a bus error is
 * not known: sim_fault_raises_error latches the DMA error bit after the
 * report, so that the error interrupt and the fault handler meet. The
 * address reported is the faulting task's regcmd address: the datapath
 * does not say which access.
 */
static void sim_iommu_fault(struct rkaccel_sim_core *sim, u32 gen, struct rkaccel_vm *vm,
			    u32 addr, u32 err)
{
	int flags = err & RKNPU_INT_DMA_WRITE_ERROR ? IOMMU_FAULT_WRITE : IOMMU_FAULT_READ;

	dev_dbg(sim->dev, "sim: IOMMU page fault, %s, task at 0x%08x\n",
		flags == IOMMU_FAULT_WRITE ? "write" : "read", addr);
	rkaccel_vm_report_fault(vm, sim->dev, addr, flags);
	if (READ_ONCE(sim_fault_raises_error))
		sim_raise(sim, gen, err & RKNPU_INT_DMA_ERROR);
}

/* The task-control value must be the one this SoC's layout gives. */
static bool sim_task_con_valid(struct rkaccel_sim_core *sim, u32 task_con)
{
	unsigned int bits = sim->soc->task_number_bits;

	return (task_con >> bits) == 0x7;
}

/* Apply one task's register writes; remember its tail. */
static void sim_apply(struct rkaccel_sim_core *sim, const u64 *cmds, u32 count,
		      struct sim_task *task)
{
	unsigned long flags;
	u32 i;

	memset(task, 0, sizeof(*task));
	spin_lock_irqsave(&sim->lock, flags);
	for (i = 0; i < count; i++) {
		u32 target = RKNPU_REGCMD_TARGET(cmds[i]);
		u32 reg = RKNPU_REGCMD_REG(cmds[i]);
		u32 val = RKNPU_REGCMD_VALUE(cmds[i]);

		if (!target || reg % 4)
			continue;	/* padding */
		if (target == RKNPU_TGT_OP_EN && reg == RKNPU_REG_OP_EN) {
			/* the enable entry: these blocks start the task */
			task->enabled = true;
			task->op_enable = val;
			continue;
		}
		switch (reg) {
		case RKNPU_PC_BASE_ADDRESS:
			task->next_addr = val & ~0xfu;
			break;
		case RKNPU_PC_REGISTER_AMOUNTS:
			task->next_amounts = val & 0xffff;
			break;
		default:
			/* PC registers only change through the seam */
			if (reg >= 0x1000)
				*sim_reg(sim, reg) = val;
		}
	}
	spin_unlock_irqrestore(&sim->lock, flags);
}

/* Modelled time of one task (rkaccel_sim_timing.c), overhead and scale. */
static u64 sim_task_time(const struct rkaccel_sim_work *w, u32 count)
{
	u32 mhz = max(READ_ONCE(sim_clock_mhz), 1u);
	u32 mbps = max(READ_ONCE(sim_mem_mbps), 1u);
	u64 ns = READ_ONCE(sim_task_ns);

	ns += rkaccel_sim_task_ns(w, count * sizeof(u64), mhz, mbps);
	return ns * max(READ_ONCE(sim_time_scale), 1u);
}

/*
 * Run what the task's enable entry started (@count commands fetched). Only
 * the exec work writes the block registers, so the datapath reads them
 * without the lock. Returns the error interrupt bits, 0 when it completed.
 */
static u32 sim_run_task(struct rkaccel_sim_core *sim, struct rkaccel_vm *vm,
			const struct sim_task *task, u32 count, u64 *ns, bool *out_int32,
			u32 *out_addr)
{
	struct rkaccel_sim_work w = {};
	u32 err = 0;

	if (task->op_enable)
		err = rkaccel_sim_conv(sim->dev, sim->soc, sim->regs, task->op_enable, vm,
				       READ_ONCE(sim_compute) ? &sim->scratch : NULL, &w);
	*ns += sim_task_time(&w, count);
	*out_int32 = w.out_int32;
	*out_addr = w.out_addr;
	return err;
}

/* sim_corrupt_task: what a flaky datapath would leave, no error raised. */
static void sim_corrupt(struct rkaccel_vm *vm, u32 done, u32 out_addr)
{
	u8 b;

	if (READ_ONCE(sim_corrupt_task) != done + 1 || !READ_ONCE(sim_compute))
		return;
	if (!rkaccel_vm_read(vm, out_addr, &b, 1)) {
		b ^= 0x5a;
		rkaccel_vm_write(vm, out_addr, &b, 1);
	}
}

static bool sim_has_enable(const u64 *cmds, u32 count)
{
	u32 i;

	for (i = 0; i < count; i++)
		if (RKNPU_REGCMD_TARGET(cmds[i]) == RKNPU_TGT_OP_EN &&
		    RKNPU_REGCMD_REG(cmds[i]) == RKNPU_REG_OP_EN)
			return true;
	return false;
}

/*
 * Fetch one task's entries. A chained task's PC_REGISTER_AMOUNTS is the one
 * its predecessor's tail loaded; silicon runs Mesa's ALIGN((N - 4) / 2, 2)
 * as well as the (N + 1) / 2 - 1 the kernel writes for the first task, so
 * when the enable entry is not in the (amounts + 1) pairs, one more pair is
 * read (inferred). Still none: the task starts nothing and the core hangs,
 * as silicon's would; the log says why. Returns 0, or the error bits.
 */
static u32 sim_fetch(struct rkaccel_sim_core *sim, struct rkaccel_vm *vm, u32 addr,
		     u32 *count, bool chained)
{
	u64 *cmds = sim->cmds;

	if (rkaccel_vm_read(vm, addr, cmds, *count * sizeof(*cmds)))
		return RKNPU_INT_DMA_READ_ERROR;
	if (!chained || sim_has_enable(cmds, *count))
		return 0;
	if (rkaccel_vm_read(vm, addr + *count * sizeof(*cmds), cmds + *count,
			    SIM_FETCH_EXTRA * sizeof(*cmds)))
		return RKNPU_INT_DMA_READ_ERROR;
	*count += SIM_FETCH_EXTRA;
	if (!sim_has_enable(cmds, *count))
		dev_info_ratelimited(sim->dev,
				     "sim: PC_REGISTER_AMOUNTS = 0x%04x: no enable entry in the chained task at 0x%08x: the core hangs\n",
				     *count / 2 - 2, addr);
	return 0;
}

/*
 * The completion bits of the chain's last task, by the block that ends it
 * (the vendor's int_mask: 0x300 for DPU tasks, 0xc00 for pooling).
 */
static u32 sim_block_done_bits(struct rkaccel_sim_core *sim, u32 blocks, bool out_int32)
{
	if (blocks & (RKNPU_BLK_PPU | RKNPU_BLK_PPU_RDMA))
		return RKNPU_INT_PPU_DONE;
	if (sim->soc->soc == DRM_RKACCEL_SOC_RK3576 && out_int32)
		return 0;
	return RKNPU_INT_DPU_DONE;
}

/* What the chain's end latches: its block's bits, and bit 16 if asked. */
static u32 sim_done_bits(struct rkaccel_sim_core *sim, u32 blocks, bool out_int32)
{
	u32 bits = sim_block_done_bits(sim, blocks, out_int32);

	return bits && READ_ONCE(sim_status_bit16) ? bits | RKNPU_INT_STATUS_16 : bits;
}

static void sim_exec(struct work_struct *work)
{
	struct rkaccel_sim_core *sim = container_of(work, struct rkaccel_sim_core, exec);
	u32 gen, addr, count, tasks, task_con, err, bits = 0, done = 0, blocks = 0, out_addr;
	ktime_t start = ktime_get();
	bool out_int32 = false, late = false;
	struct rkaccel_vm *vm;
	struct sim_task task;
	unsigned long flags;
	u64 *cmds = sim->cmds;
	u64 ns = 0;

	spin_lock_irqsave(&sim->lock, flags);
	gen = sim->generation;
	vm = sim->vm;
	addr = *sim_reg(sim, RKNPU_PC_BASE_ADDRESS) & ~0xfu;
	count = ((*sim_reg(sim, RKNPU_PC_REGISTER_AMOUNTS) & 0xffff) + 1) * 2;
	task_con = *sim_reg(sim, RKNPU_PC_TASK_CON);
	sim->chain_tasks = 0;
	WRITE_ONCE(sim->exec_tasks, 0);
	spin_unlock_irqrestore(&sim->lock, flags);

	tasks = task_con & GENMASK(sim->soc->task_number_bits - 1, 0);
	if (!sim_task_con_valid(sim, task_con) || !tasks || !vm) {
		dev_err_ratelimited(sim->dev, "sim: PC_TASK_CON 0x%x invalid for %s\n",
				    task_con, sim->soc->name);
		sim_raise(sim, gen, RKNPU_INT_DMA_READ_ERROR);
		return;
	}

	while (done < tasks) {
		/* a reset stops the core between tasks, as it does on silicon */
		if (READ_ONCE(sim->generation) != gen)
			return;
		err = sim_fetch(sim, vm, addr, &count, done > 0);
		if (err) {
			sim_iommu_fault(sim, gen, vm, addr, err);
			return;
		}
		sim_apply(sim, cmds, count, &task);
		if (!task.enabled)
			return;	/* nothing started: the core hangs */

		blocks = task.op_enable;
		err = sim_run_task(sim, vm, &task, count, &ns, &out_int32, &out_addr);
		if (err & RKNPU_INT_DMA_ERROR) {
			sim_iommu_fault(sim, gen, vm, addr, err);
			return;
		}
		if (err) {
			sim_raise(sim, gen, err);
			return;
		}
		sim_corrupt(vm, done, out_addr);
		/* the last task counts when its modelled time has passed */
		if (++done < tasks)
			WRITE_ONCE(sim->exec_tasks, done);
		addr = task.next_addr;
		count = (task.next_amounts + 1) * 2;
		if (READ_ONCE(sim_host_delay_us))
			fsleep(READ_ONCE(sim_host_delay_us));
		cond_resched();
	}

	/*
	 * Modelled time runs from the start: host compute time overlaps it.
	 * When the host took longer than the modelled time, the chain ends
	 * now, without a timer's wake-up.
	 */
	spin_lock_irqsave(&sim->lock, flags);
	if (gen == sim->generation) {
		sim->chain_start = start;
		sim->chain_ns = ns;
		sim->chain_tasks = done;
		sim->armed_gen = gen;
		sim->done_bits = sim_done_bits(sim, blocks, out_int32);
		late = !ktime_before(ktime_get(), ktime_add_ns(start, ns));
		bits = sim->done_bits;
		if (!late)
			hrtimer_start(&sim->done, ktime_add_ns(start, ns), HRTIMER_MODE_ABS);
	}
	spin_unlock_irqrestore(&sim->lock, flags);
	if (late && bits)
		sim_raise(sim, gen, bits);
}

static enum hrtimer_restart sim_done(struct hrtimer *timer)
{
	struct rkaccel_sim_core *sim = container_of(timer, struct rkaccel_sim_core, done);

	/* the chain this timer was armed for: a reset since makes it stale */
	if (READ_ONCE(sim->done_bits))
		sim_raise(sim, READ_ONCE(sim->armed_gen), READ_ONCE(sim->done_bits));
	return HRTIMER_NORESTART;
}

static void sim_core_free(struct rkaccel_sim_core *sim)
{
	rkaccel_sim_scratch_free(&sim->scratch);
	kvfree(sim->cmds);
	mutex_destroy(&sim->group_lock);
	kfree(sim);
}

/* A core at @pc of a SoC this module simulates gets a simulated block. */
static void *sim_claim(struct device *dev, const struct resource *pc,
		       const struct rkaccel_soc_data *soc, int irq)
{
	struct rkaccel_sim_core *sim;
	unsigned int pos;
	u32 version;

	if (!rkaccel_sim_soc_claims(soc, pc->start, &pos, &version))
		return NULL;
	sim = kzalloc(sizeof(*sim), GFP_KERNEL);
	if (!sim)
		return ERR_PTR(-ENOMEM);
	/* the hardware path may not allocate: room for the largest task */
	sim->cmds = kvmalloc_array(SIM_MAX_CMDS + SIM_FETCH_EXTRA, sizeof(*sim->cmds),
				   GFP_KERNEL);
	if (!sim->cmds || rkaccel_sim_scratch_alloc(&sim->scratch, soc->cbuf_size)) {
		sim_core_free(sim);
		return ERR_PTR(-ENOMEM);
	}
	sim->dev = dev;
	sim->soc = soc;
	sim->irq = irq;
	sim->hw_version = version;
	sim->pos = pos;
	sim->powered = rkaccel_sim_soc_core_powered(pos);
	sim->clocked = rkaccel_sim_soc_core_clocked(pos);
	init_waitqueue_head(&sim->hold);
	spin_lock_init(&sim->lock);
	mutex_init(&sim->group_lock);
	/* as iommu_group_add_device() does at the core's probe: allocate under it */
	scoped_guard(mutex, &sim->group_lock)
		might_alloc(GFP_KERNEL);
	INIT_WORK(&sim->exec, sim_exec);
	hrtimer_setup(&sim->done, sim_done, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	scoped_guard(mutex, &sim_cores_lock)
		list_add_tail(&sim->node, &sim_cores);
	scoped_guard(spinlock_irqsave, &sim_at_lock)
		sim_at[pos] = sim;
	if (READ_ONCE(sim_pending_at_load)) {
		/* before the driver has a handler: the line is up when it asks */
		*sim_reg(sim, RKNPU_PC_INTERRUPT_RAW_STATUS) = RKNPU_INT_DPU_DONE;
		*sim_reg(sim, RKNPU_PC_INTERRUPT_MASK) = RKNPU_INT_DPU_DONE;
		sim_fire(sim);
	}
	return sim;
}

static void sim_release(void *priv)
{
	struct rkaccel_sim_core *sim = priv;

	scoped_guard(spinlock_irqsave, &sim_at_lock)
		sim_at[sim->pos] = NULL;
	sim_reset_block(sim, false);
	scoped_guard(mutex, &sim_cores_lock)
		list_del(&sim->node);
	sim_core_free(sim);
}

static const struct rkaccel_hw_regs sim_regs = {
	.owner = THIS_MODULE,
	.claim = sim_claim,
	.release = sim_release,
	.read = sim_read,
	.write = sim_write,
	.attach_vm = sim_attach_vm,
	.reset = sim_reset,
	.error_bits = RKNPU_INT_SIM_UNSUPPORTED,
};

/*
 * The module is going (no file of the device is open: files hold it):
 * unbind the cores it provides registers for, which removes the device.
 */
static void sim_unbind_cores(void)
{
	for (;;) {
		struct rkaccel_sim_core *sim;
		struct device *dev;

		scoped_guard(mutex, &sim_cores_lock) {
			sim = list_first_entry_or_null(&sim_cores, struct rkaccel_sim_core, node);
			dev = sim ? get_device(sim->dev) : NULL;
		}
		if (!dev)
			return;
		device_release_driver(dev);
		put_device(dev);
	}
}

static int __init rkaccel_sim_init(void)
{
	int ret;

	/* Unbound: the simulated cores run in parallel on different CPUs. */
	sim_wq = alloc_workqueue("rkaccel-sim", WQ_UNBOUND, 0);
	if (!sim_wq)
		return -ENOMEM;
	ret = rkaccel_hw_regs_register(&sim_regs);
	if (!ret)
		ret = rkaccel_sim_soc_init();
	if (ret) {
		rkaccel_hw_regs_unregister(&sim_regs);
		sim_unbind_cores();
		destroy_workqueue(sim_wq);
	}
	return ret;
}

static void __exit rkaccel_sim_exit(void)
{
	rkaccel_hw_regs_unregister(&sim_regs);
	sim_unbind_cores();
	rkaccel_sim_soc_exit();
	destroy_workqueue(sim_wq);
}

module_init(rkaccel_sim_init);
module_exit(rkaccel_sim_exit);

MODULE_DESCRIPTION("Simulated NPU register blocks for rkaccel (tests, QEMU)");
MODULE_LICENSE("GPL");
