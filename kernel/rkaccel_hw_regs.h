/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A core's register block that is not MMIO: the one interface rkaccel.ko
 * offers another module. rkaccel_sim.ko implements it; a board never loads
 * a provider, and its cores map their registers as usual.
 */
#ifndef _RKACCEL_HW_REGS_H_
#define _RKACCEL_HW_REGS_H_

#include <linux/types.h>

struct device;
struct module;
struct resource;
struct rkaccel_soc_data;
struct rkaccel_vm;

/**
 * struct rkaccel_hw_regs - provider of register blocks for cores that the
 * normal probe found (device tree, or platform devices where there is none).
 * @owner: the provider's module, held while a file of the device is open.
 * @claim: called from the core's probe with its "pc" register resource;
 *	returns the block's private data, NULL when the address is not the
 *	provider's (the core then maps MMIO), or an ERR_PTR.
 * @release: the core is gone; nothing may call into @priv afterwards.
 * @read: read the 32-bit register at byte offset @reg of the core.
 * @write: write it.
 * @attach_vm: the block has no IOMMU: it reads and writes memory through
 *	@vm's page table, which stands in for the IOMMU domain.
 * @reset: the block's reset line, pulsed after the core's own resets.
 */
struct rkaccel_hw_regs {
	struct module *owner;
	void *(*claim)(struct device *dev, const struct resource *pc,
		       const struct rkaccel_soc_data *soc, int irq);
	void (*release)(void *priv);
	u32 (*read)(void *priv, u32 reg);
	void (*write)(void *priv, u32 reg, u32 val);
	int (*attach_vm)(void *priv, struct rkaccel_vm *vm);
	void (*reset)(void *priv);
};

int rkaccel_hw_regs_register(const struct rkaccel_hw_regs *regs);
void rkaccel_hw_regs_unregister(const struct rkaccel_hw_regs *regs);

#endif /* _RKACCEL_HW_REGS_H_ */
