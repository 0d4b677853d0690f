/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Silicon backend: one platform device per NPU core (device tree), joined
 * into one rkaccel device once every core of the SoC has probed.
 */
#ifndef _RKACCEL_HW_H_
#define _RKACCEL_HW_H_

#include <linux/atomic.h>
#include <linux/clk.h>
#include <linux/mutex.h>
#include <linux/types.h>

struct device;
struct fwnode_handle;
struct iommu_domain;
struct iommu_group;
struct platform_device;
struct reset_control;
struct rkaccel_core;
struct rkaccel_device;
struct rkaccel_hw_devfreq;
struct rkaccel_hw_regs;
struct rkaccel_soc_data;
struct rkaccel_vm;

#define RKACCEL_HW_CORE_DRIVER_NAME	"rkaccel-core"
#define RKACCEL_HW_NPU_DRIVER_NAME	"rkaccel-npu"

/**
 * struct rkaccel_hw_core - the silicon resources of one NPU core.
 * @dev: the core's platform device.
 * @soc: per-SoC data from the core's compatible.
 * @index: core number among the cores present (0-based).
 * @ext: the provider of the register block when it is not MMIO
 *	(rkaccel_sim.ko), else NULL.
 * @ext_priv: the provider's data for this core.
 * @pc: MMIO of the PC block (core base + 0x0000).
 * @cna: MMIO of the CNA block (core base + 0x1000).
 * @corex: MMIO of the CORE block (core base + 0x3000).
 * @clks: aclk, hclk, npu, pclk.
 * @num_clks: entries in @clks.
 * @rst: the core's resets (srst_a, srst_h), asserted together.
 * @irq: the core's interrupt line, shared with its IOMMU.
 * @group: the core's IOMMU group; NULL with @ext (no IOMMU).
 * @iommu_fwnode: the core's IOMMU, to tell which core a fault is from.
 * @domain_lock: protects @domain.
 * @domain: IOMMU domain attached to the core, NULL for the default one.
 * @powered: clocks are on and the registers may be touched.
 * @silent: PC_VERSION read 0 or all ones at probe: no core answers there.
 * @in_reset: the core's reset is asserted: its registers do not answer.
 * @irq_bits: interrupt bits the hard IRQ cleared and left to its thread.
 * @hw_version: PC_VERSION read at probe.
 * @hw_version_num: PC_VERSION_NUM read at probe.
 * @core: the driver's core once the device exists, else NULL; set and
 *	cleared under rkaccel_hw_link_lock.
 * @devfreq: devfreq of the NPU clock, on core 0 only; NULL without it.
 */
struct rkaccel_hw_core {
	struct device *dev;
	const struct rkaccel_soc_data *soc;
	unsigned int index;
	const struct rkaccel_hw_regs *ext;
	void *ext_priv;
	void __iomem *pc;
	void __iomem *cna;
	void __iomem *corex;
	struct clk_bulk_data *clks;
	int num_clks;
	struct reset_control *rst;
	int irq;
	struct iommu_group *group;
	struct fwnode_handle *iommu_fwnode;
	struct mutex domain_lock;	/* protects domain */
	struct iommu_domain *domain;
	bool powered;
	bool silent;
	bool in_reset;
	atomic_t irq_bits;
	u32 hw_version;
	u32 hw_version_num;
	struct rkaccel_core *core;
	struct rkaccel_hw_devfreq *devfreq;
};

extern const struct rkaccel_reg_ops rkaccel_hw_reg_ops;
extern const struct dev_pm_ops rkaccel_hw_pm_ops;
extern struct platform_driver rkaccel_hw_core_driver;
extern struct platform_driver rkaccel_hw_npu_driver;
extern struct mutex rkaccel_hw_link_lock;

u32 rkaccel_hw_read(struct rkaccel_hw_core *hw, u32 reg);
void rkaccel_hw_write(struct rkaccel_hw_core *hw, u32 reg, u32 val);
int rkaccel_hw_pm_init(struct rkaccel_hw_core *hw);
void rkaccel_hw_pm_exit(void);
int rkaccel_hw_opp_init(struct rkaccel_hw_core *hw);
int rkaccel_hw_core_slot(struct rkaccel_hw_core *hw, unsigned int *count);

void rkaccel_hw_core_release(struct rkaccel_hw_core *hw);
int rkaccel_hw_npu_add(struct rkaccel_hw_core *hw);
void rkaccel_hw_npu_absent(struct rkaccel_hw_core *hw);
void rkaccel_hw_npu_remove(struct rkaccel_hw_core *hw);

int rkaccel_hw_vm_init(struct rkaccel_device *rdev, struct rkaccel_vm *vm);
void rkaccel_hw_vm_fini(struct rkaccel_device *rdev, struct rkaccel_vm *vm);

#endif /* _RKACCEL_HW_H_ */
