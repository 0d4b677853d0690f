/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef _RKACCEL_CORE_H_
#define _RKACCEL_CORE_H_

#include <linux/types.h>

struct rkaccel_core;
struct rkaccel_device;

/**
 * struct rkaccel_reg_ops - the register-access seam of one core.
 * @read: read the 32-bit register at byte offset @reg.
 * @write: write @val to the 32-bit register at byte offset @reg.
 *
 * Silicon maps these to MMIO; the simulator to its register file. The job,
 * IRQ and reset code above only ever goes through them.
 */
struct rkaccel_reg_ops {
	u32 (*read)(struct rkaccel_core *core, u32 reg);
	void (*write)(struct rkaccel_core *core, u32 reg, u32 val);
};

/**
 * struct rkaccel_core - one NPU core.
 * @rdev: the device the core belongs to.
 * @index: core number, 0-based.
 * @ops: register access.
 * @backend: backend private state (MMIO base or simulated core).
 */
struct rkaccel_core {
	struct rkaccel_device *rdev;
	unsigned int index;
	const struct rkaccel_reg_ops *ops;
	void *backend;
};

static inline u32 rkaccel_core_read(struct rkaccel_core *core, u32 reg)
{
	return core->ops->read(core, reg);
}

static inline void rkaccel_core_write(struct rkaccel_core *core, u32 reg, u32 val)
{
	core->ops->write(core, reg, val);
}

u32 rkaccel_core_hw_version(struct rkaccel_core *core);
struct rkaccel_core *rkaccel_core_create(struct rkaccel_device *rdev, unsigned int index,
					 const struct rkaccel_reg_ops *ops, void *backend);

#endif /* _RKACCEL_CORE_H_ */
