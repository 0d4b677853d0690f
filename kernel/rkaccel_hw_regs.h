/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The one interface rkaccel.ko offers another module, and everything
 * rkaccel_sim.ko (kernel/sim/) calls in it: a provider of core register
 * blocks that are not MMIO, and reads and writes of a file's NPU address
 * space for a block that has no IOMMU. A board never loads a provider, and
 * its cores map their registers as usual. What the provider is handed
 * (struct rkaccel_soc_data, struct rkaccel_vm) is described in
 * rkaccel_device.h and rkaccel_vm.h; it only reads the former and passes
 * the latter back here.
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
 * @error_bits: status bits of the provider's own that end a job with an
 *	error (the simulator's refusal); silicon's bits keep their meaning.
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
	u32 error_bits;
};

int rkaccel_hw_regs_register(const struct rkaccel_hw_regs *regs);
void rkaccel_hw_regs_unregister(const struct rkaccel_hw_regs *regs);

/**
 * rkaccel_vm_read() - copy NPU memory out, as the core's DMA would read it.
 * @vm: the address space given to &rkaccel_hw_regs.attach_vm.
 * @addr: NPU address of the first byte.
 * @buf: where the bytes go.
 * @len: bytes to copy.
 *
 * Goes through @vm's page table under its lock, page by page.
 *
 * Return: 0, or -EFAULT when a byte is outside the space or unmapped.
 */
int rkaccel_vm_read(struct rkaccel_vm *vm, u64 addr, void *buf, size_t len);

/**
 * rkaccel_vm_write() - copy into NPU memory, as the core's DMA would write it.
 * @vm: the address space given to &rkaccel_hw_regs.attach_vm.
 * @addr: NPU address of the first byte.
 * @buf: the bytes.
 * @len: bytes to copy.
 *
 * Return: 0, or -EFAULT when a byte is outside the space, unmapped or on a
 * read-only page.
 */
int rkaccel_vm_write(struct rkaccel_vm *vm, u64 addr, const void *buf, size_t len);

/**
 * rkaccel_vm_report_fault() - a DMA access of the core faulted in @vm.
 * @vm: the address space given to &rkaccel_hw_regs.attach_vm.
 * @dev: the core's device.
 * @iova: the NPU address that faulted.
 * @flags: IOMMU_FAULT_READ or IOMMU_FAULT_WRITE.
 *
 * What report_iommu_fault() is to an IOMMU driver: calls the handler the
 * driver registered on @vm, with interrupts off as rk_iommu's hard IRQ
 * does. The provider then goes on as rk_iommu's master does after
 * PAGE_FAULT_DONE, whatever the handler returned.
 *
 * Return: the handler's value, -EOPNOTSUPP when none is registered.
 */
int rkaccel_vm_report_fault(struct rkaccel_vm *vm, struct device *dev, u64 iova, int flags);

#endif /* _RKACCEL_HW_REGS_H_ */
