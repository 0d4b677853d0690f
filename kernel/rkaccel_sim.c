// SPDX-License-Identifier: GPL-2.0-only
/*
 * Simulated NPU: a software core behind the same register seam as silicon.
 * Each core holds a register file of the whole 64 KiB register span; the
 * PC block's interrupt registers behave as on silicon.
 */

#include <drm/drm_managed.h>
#include <linux/spinlock.h>

#include "rkaccel_core.h"
#include "rkaccel_device.h"
#include "rkaccel_regs.h"
#include "rkaccel_sim.h"

#define SIM_VERSION_NUM		0x0001

struct rkaccel_sim_core {
	spinlock_t lock;		/* protects regs */
	u32 hw_version;
	u32 regs[RKNPU_CORE_REG_SPAN / sizeof(u32)];
};

static u32 *sim_reg(struct rkaccel_sim_core *sim, u32 reg)
{
	return &sim->regs[reg / sizeof(u32)];
}

static u32 sim_read_locked(struct rkaccel_sim_core *sim, u32 reg)
{
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

static void sim_write_locked(struct rkaccel_sim_core *sim, u32 reg, u32 val)
{
	switch (reg) {
	case RKNPU_PC_VERSION:
	case RKNPU_PC_VERSION_NUM:
	case RKNPU_PC_INTERRUPT_STATUS:
	case RKNPU_PC_INTERRUPT_RAW_STATUS:
		break;	/* read-only */
	case RKNPU_PC_INTERRUPT_CLEAR:
		*sim_reg(sim, RKNPU_PC_INTERRUPT_RAW_STATUS) &= ~val;
		break;
	default:
		*sim_reg(sim, reg) = val;
	}
}

/* Explicit lock/unlock: sparse cannot follow guard() through a switch. */
static u32 sim_read(struct rkaccel_core *core, u32 reg)
{
	struct rkaccel_sim_core *sim = core->backend;
	unsigned long flags;
	u32 val;

	if (WARN_ON_ONCE(reg >= RKNPU_CORE_REG_SPAN || reg % 4))
		return 0;

	spin_lock_irqsave(&sim->lock, flags);
	val = sim_read_locked(sim, reg);
	spin_unlock_irqrestore(&sim->lock, flags);
	return val;
}

static void sim_write(struct rkaccel_core *core, u32 reg, u32 val)
{
	struct rkaccel_sim_core *sim = core->backend;
	unsigned long flags;

	if (WARN_ON_ONCE(reg >= RKNPU_CORE_REG_SPAN || reg % 4))
		return;

	spin_lock_irqsave(&sim->lock, flags);
	sim_write_locked(sim, reg, val);
	spin_unlock_irqrestore(&sim->lock, flags);
}

static const struct rkaccel_reg_ops rkaccel_sim_reg_ops = {
	.read = sim_read,
	.write = sim_write,
};

int rkaccel_sim_init(struct rkaccel_device *rdev)
{
	unsigned int i;

	for (i = 0; i < rdev->num_cores; i++) {
		struct rkaccel_sim_core *sim;
		struct rkaccel_core *core;

		sim = drmm_kzalloc(&rdev->ddev, sizeof(*sim), GFP_KERNEL);
		if (!sim)
			return -ENOMEM;
		spin_lock_init(&sim->lock);
		sim->hw_version = rdev->soc->sim_hw_version;

		core = rkaccel_core_create(rdev, i, &rkaccel_sim_reg_ops, sim);
		if (IS_ERR(core))
			return PTR_ERR(core);
		rdev->cores[i] = core;
	}
	return 0;
}
