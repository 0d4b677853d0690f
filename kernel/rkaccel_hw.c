// SPDX-License-Identifier: GPL-2.0-only
/*
 * Silicon backend, one NPU core: the platform driver of the per-core device
 * tree nodes (rockchip,rk3588-rknn-core / rockchip,rk3576-rknn-core), the
 * register seam over MMIO, the interrupt, the reset and the IOMMU domain.
 *
 * Each core probes on its own and hands itself to rkaccel_hw_npu_add(); the
 * rkaccel device appears once every core of the SoC is there (see
 * rkaccel_hw_npu.c). None of this has run on silicon yet.
 */

#include <drm/drm_device.h>
#include <linux/delay.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/iommu.h>
#include <linux/mod_devicetable.h>
#include <linux/nvmem-consumer.h>
#include <linux/of.h>
#include <linux/of_platform.h>
#include <linux/platform_device.h>
#include <linux/pm_runtime.h>
#include <linux/reset.h>
#include <linux/slab.h>

#include "rkaccel_core.h"
#include "rkaccel_device.h"
#include "rkaccel_gem.h"
#include "rkaccel_hw.h"
#include "rkaccel_hw_regs.h"
#include "rkaccel_job.h"
#include "rkaccel_regs.h"

#define RKACCEL_HW_CNA_BASE	0x1000
#define RKACCEL_HW_CORE_BASE	0x3000
#define RKACCEL_HW_BLOCK_SIZE	0x1000

static const char *const rkaccel_hw_clk_names[] = { "aclk", "hclk", "npu", "pclk" };

static const struct of_device_id rkaccel_hw_of_match[] = {
	{ .compatible = "rockchip,rk3588-rknn-core", .data = &rkaccel_rk3588_data },
	{ .compatible = "rockchip,rk3576-rknn-core", .data = &rkaccel_rk3576_data },
	{ }
};
MODULE_DEVICE_TABLE(of, rkaccel_hw_of_match);

/* Cores as platform devices without a device tree (rkaccel_sim's x86 shim). */
static const struct platform_device_id rkaccel_hw_ids[] = {
	{ .name = "rk3588-rknn-core", .driver_data = (kernel_ulong_t)&rkaccel_rk3588_data },
	{ .name = "rk3576-rknn-core", .driver_data = (kernel_ulong_t)&rkaccel_rk3576_data },
	{ }
};
MODULE_DEVICE_TABLE(platform, rkaccel_hw_ids);

static DEFINE_MUTEX(hw_regs_lock);
/* The provider of non-MMIO register blocks, if one is loaded; under the lock. */
static const struct rkaccel_hw_regs *hw_regs_provider;

/**
 * rkaccel_hw_regs_register - offer register blocks to cores that probe.
 * @regs: the provider; stays registered until rkaccel_hw_regs_unregister().
 *
 * Cores that already failed to probe are tried again. Returns -EBUSY when
 * another provider is registered.
 */
int rkaccel_hw_regs_register(const struct rkaccel_hw_regs *regs)
{
	scoped_guard(mutex, &hw_regs_lock) {
		if (hw_regs_provider)
			return -EBUSY;
		hw_regs_provider = regs;
	}
	return driver_attach(&rkaccel_hw_core_driver.driver);
}
EXPORT_SYMBOL_GPL(rkaccel_hw_regs_register);

/**
 * rkaccel_hw_regs_unregister - no more cores claim @regs.
 * @regs: the provider. The cores it claimed are its to unbind.
 */
void rkaccel_hw_regs_unregister(const struct rkaccel_hw_regs *regs)
{
	guard(mutex)(&hw_regs_lock);
	if (hw_regs_provider == regs)
		hw_regs_provider = NULL;
}
EXPORT_SYMBOL_GPL(rkaccel_hw_regs_unregister);

/* The MMIO block of core register @reg: PC, CNA and CORE are mapped. */
static void __iomem *hw_block(struct rkaccel_hw_core *hw, u32 reg)
{
	switch (reg - reg % RKACCEL_HW_BLOCK_SIZE) {
	case 0:
		return hw->pc;
	case RKACCEL_HW_CNA_BASE:
		return hw->cna;
	case RKACCEL_HW_CORE_BASE:
		return hw->corex;
	default:
		return NULL;
	}
}

/*
 * Registers are only touched with the clocks on (a job holds the core up),
 * in the blocks the core maps, whoever provides them.
 */
static bool hw_reg_valid(struct rkaccel_hw_core *hw, u32 reg)
{
	u32 block = reg - reg % RKACCEL_HW_BLOCK_SIZE;
	bool mapped = block == 0 || block == RKACCEL_HW_CNA_BASE || block == RKACCEL_HW_CORE_BASE;

	return !WARN_ON_ONCE(!mapped || reg % 4 || !READ_ONCE(hw->powered));
}

/* A core register, from MMIO or from the provider of its block. */
u32 rkaccel_hw_read(struct rkaccel_hw_core *hw, u32 reg)
{
	if (!hw_reg_valid(hw, reg))
		return 0;
	if (hw->ext)
		return hw->ext->read(hw->ext_priv, reg);
	return readl(hw_block(hw, reg) + reg % RKACCEL_HW_BLOCK_SIZE);
}

void rkaccel_hw_write(struct rkaccel_hw_core *hw, u32 reg, u32 val)
{
	if (!hw_reg_valid(hw, reg))
		return;
	if (hw->ext)
		hw->ext->write(hw->ext_priv, reg, val);
	else
		writel(val, hw_block(hw, reg) + reg % RKACCEL_HW_BLOCK_SIZE);
}

static u32 hw_read(struct rkaccel_core *core, u32 reg)
{
	struct rkaccel_hw_core *hw = core->backend;

	/* Read at probe: QUERY must not need a powered core. */
	if (reg == RKNPU_PC_VERSION)
		return hw->hw_version;
	if (reg == RKNPU_PC_VERSION_NUM)
		return hw->hw_version_num;
	return rkaccel_hw_read(hw, reg);
}

static void hw_write(struct rkaccel_core *core, u32 reg, u32 val)
{
	rkaccel_hw_write(core->backend, reg, val);
}

/* Back to the default domain; the core's lease attaches one again. */
static void hw_detach_locked(struct rkaccel_hw_core *hw)
{
	lockdep_assert_held(&hw->domain_lock);
	if (!hw->domain)
		return;
	iommu_detach_group(hw->domain, hw->group);
	hw->domain = NULL;
}

/*
 * At SUBMIT (a switch of the core's lease) or after a reset, never in a
 * fence-signalling section: iommu_attach_group() takes the group's mutex.
 * On a failure the core is left detached and no job runs on it: never on
 * the default domain, which reaches other memory.
 */
static int hw_attach_vm(struct rkaccel_core *core, struct rkaccel_vm *vm)
{
	struct rkaccel_hw_core *hw = core->backend;
	int ret;

	if (hw->ext)
		return hw->ext->attach_vm(hw->ext_priv, vm);
	guard(mutex)(&hw->domain_lock);
	if (hw->domain == vm->domain)
		return 0;
	hw_detach_locked(hw);
	ret = iommu_attach_group(vm->domain, hw->group);
	if (ret) {
		dev_err_ratelimited(hw->dev, "attaching the job's IOMMU domain: %d\n", ret);
		return ret;
	}
	hw->domain = vm->domain;
	return 0;
}

/*
 * Mask the core's interrupt and wait for a handler in flight first, so
 * that no IRQ thread touches the core while it is held in reset.
 */
static void hw_reset(struct rkaccel_core *core)
{
	struct rkaccel_hw_core *hw = core->backend;

	rkaccel_hw_write(hw, RKNPU_PC_INTERRUPT_MASK, 0);
	/* the line is shared: the IOMMU's interrupt must not read a core in reset */
	WRITE_ONCE(hw->in_reset, true);
	synchronize_irq(hw->irq);
	/* what the old job raised is not for the next one */
	atomic_set(&hw->irq_bits, 0);
	reset_control_assert(hw->rst);
	usleep_range(10, 20);
	reset_control_deassert(hw->rst);
	if (hw->ext)
		hw->ext->reset(hw->ext_priv);
	/* whether srst clears the status is not known: bits of the old job go */
	rkaccel_hw_write(hw, RKNPU_PC_INTERRUPT_CLEAR, RKNPU_INT_ALL);
	WRITE_ONCE(hw->in_reset, false);
	/*
	 * srst takes the IOMMU's state too (the vendor detaches and attaches
	 * after each soft reset): off here, rkaccel_core_vm_restore() puts
	 * the core's leased domain back on.
	 */
	guard(mutex)(&hw->domain_lock);
	hw_detach_locked(hw);
}

/*
 * The device is not coherent: CPU writes reach memory before the job. The
 * BOs were mapped for the device when their handles were made, and sealed
 * weights synced once at seal; here, under the job's reservations, only
 * the other BOs are synced.
 */
static void hw_job_begin(struct rkaccel_core *core, struct rkaccel_job *job)
{
	struct device *dma_dev = core->rdev->ddev.dev;
	u32 i;

	for (i = 0; i < job->bo_count; i++) {
		struct rkaccel_bo *bo = to_rkaccel_bo(job->bos[i]);

		if (bo->base.sgt && !READ_ONCE(bo->sealed))
			dma_sync_sgtable_for_device(dma_dev, bo->base.sgt, DMA_BIDIRECTIONAL);
	}
}

/* What the device wrote is visible to the CPU once the fence signals. */
static void hw_job_end(struct rkaccel_core *core, struct rkaccel_job *job)
{
	struct device *dma_dev = core->rdev->ddev.dev;
	u32 i;

	for (i = 0; i < job->bo_count; i++) {
		struct sg_table *sgt = to_rkaccel_bo(job->bos[i])->base.sgt;

		if (sgt && (job->bo_flags[i] & DRM_RKACCEL_SUBMIT_BO_WRITE))
			dma_sync_sgtable_for_cpu(dma_dev, sgt, DMA_BIDIRECTIONAL);
	}
}

/* The core powered for a job, before the job is armed: this may fail. */
static int hw_power_get(struct rkaccel_core *core)
{
	struct rkaccel_hw_core *hw = core->backend;

	return pm_runtime_resume_and_get(hw->dev);
}

static void hw_power_put(struct rkaccel_core *core)
{
	struct rkaccel_hw_core *hw = core->backend;

	pm_runtime_mark_last_busy(hw->dev);
	pm_runtime_put_autosuspend(hw->dev);
}

const struct rkaccel_reg_ops rkaccel_hw_reg_ops = {
	.read = hw_read,
	.write = hw_write,
	.attach_vm = hw_attach_vm,
	.reset = hw_reset,
	.power_get = hw_power_get,
	.power_put = hw_power_put,
	.job_begin = hw_job_begin,
	.job_end = hw_job_end,
};

/*
 * Error bits: silicon's DMA errors, and a register provider's own. Bit 16
 * is not one: it is a real, undocumented status bit.
 */
static u32 hw_error_bits(const struct rkaccel_hw_core *hw)
{
	return RKNPU_INT_DMA_ERROR | (hw->ext ? hw->ext->error_bits : 0);
}

/*
 * The bits of ours that hold the line up: the enabled ones, and the error
 * bits, which may assert it whatever the mask (Documentation/datapath.rst).
 */
static u32 hw_irq_pending(struct rkaccel_hw_core *hw)
{
	return rkaccel_hw_read(hw, RKNPU_PC_INTERRUPT_STATUS) |
	       (rkaccel_hw_read(hw, RKNPU_PC_INTERRUPT_RAW_STATUS) & hw_error_bits(hw));
}

/*
 * Hard IRQ, on a level line shared with the core's IOMMU. Writing the mask
 * may not lower it (errors), clearing does: clear exactly the bits read, so
 * that one landing meanwhile still raises the line, and hand them on. The
 * completion of a job that goes on or wrote nothing ends here, the rest
 * (errors, jobs with written BOs) in the thread. IRQ_NONE only when none
 * of ours was pending: then the line is another device's.
 */
static irqreturn_t hw_irq(int irq, void *data)
{
	struct rkaccel_hw_core *hw = data;
	struct rkaccel_core *core;
	u32 bits;

	if (!READ_ONCE(hw->powered) || READ_ONCE(hw->in_reset))
		return IRQ_NONE;
	bits = hw_irq_pending(hw);
	if (!bits)
		return IRQ_NONE;
	rkaccel_hw_write(hw, RKNPU_PC_INTERRUPT_CLEAR, bits);

	core = READ_ONCE(hw->core);
	/* bits left for the thread are older: it handles these after them */
	if (core && !(bits & hw_error_bits(hw)) && !atomic_read(&hw->irq_bits) &&
	    rkaccel_core_irq_atomic(core, bits))
		return IRQ_HANDLED;
	atomic_or(bits, &hw->irq_bits);
	return IRQ_WAKE_THREAD;
}

static irqreturn_t hw_irq_thread(int irq, void *data)
{
	struct rkaccel_hw_core *hw = data;
	struct rkaccel_core *core = READ_ONCE(hw->core);
	u32 bits = atomic_xchg(&hw->irq_bits, 0);

	if (!bits)
		return IRQ_HANDLED;	/* a reset took them */
	if (core)
		rkaccel_core_irq(core, bits);
	else
		rkaccel_hw_write(hw, RKNPU_PC_OPERATION_ENABLE, 0);
	return IRQ_HANDLED;
}

static int rkaccel_hw_core_irq_init(struct rkaccel_hw_core *hw)
{
	return devm_request_threaded_irq(hw->dev, hw->irq, hw_irq, hw_irq_thread, IRQF_SHARED,
					 dev_name(hw->dev), hw);
}

static void hw_release_ext(void *data)
{
	struct rkaccel_hw_core *hw = data;

	hw->ext->release(hw->ext_priv);
}

/*
 * A provider of register blocks (rkaccel_sim.ko) may stand in for this
 * core's registers; returns 1 when it did, 0 to map MMIO.
 */
static int hw_claim_ext(struct rkaccel_hw_core *hw, const struct resource *pc)
{
	void *priv;

	scoped_guard(mutex, &hw_regs_lock) {
		if (!hw_regs_provider)
			return 0;
		priv = hw_regs_provider->claim(hw->dev, pc, hw->soc, hw->irq);
		if (IS_ERR_OR_NULL(priv))
			return PTR_ERR_OR_ZERO(priv);
		hw->ext = hw_regs_provider;
		hw->ext_priv = priv;
	}
	dev_info(hw->dev, "registers at %pR provided by %s\n", pc, module_name(hw->ext->owner));
	return devm_add_action_or_reset(hw->dev, hw_release_ext, hw) ?: 1;
}

/* The core's register ranges, in the order of struct rkaccel_hw_core's maps. */
static const char *const rkaccel_hw_reg_names[] = { "pc", "cna", "core" };

/*
 * Registers that a provider stands in for are requested in a tree of their
 * own: they are not the machine's MMIO (an x86 guest has RAM at RK3576's
 * addresses), but two cores must still not share one.
 */
static struct resource hw_ext_iomem = {
	.name = "rkaccel provided registers",
	.start = 0,
	.end = (resource_size_t)~0,
	.flags = IORESOURCE_MEM,
};

/*
 * Request range @name of the core, whoever provides its registers: a range
 * that another device holds (a device tree whose ranges overlap) fails this
 * core's probe here, by name, rather than letting two cores share registers.
 */
static int hw_request_range(struct rkaccel_hw_core *hw, const struct resource *res,
			    const char *name)
{
	struct resource *root = hw->ext ? &hw_ext_iomem : &iomem_resource;

	if (!__devm_request_region(hw->dev, root, res->start, resource_size(res),
				   dev_name(hw->dev)))
		return dev_err_probe(hw->dev, -EBUSY,
				     "\"%s\" registers %pR overlap another device's\n", name, res);
	return 0;
}

static int hw_map_regs(struct rkaccel_hw_core *hw, struct platform_device *pdev)
{
	void __iomem **maps[] = { &hw->pc, &hw->cna, &hw->corex };
	struct resource *res[ARRAY_SIZE(rkaccel_hw_reg_names)];
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(res); i++) {
		res[i] = platform_get_resource_byname(pdev, IORESOURCE_MEM,
						      rkaccel_hw_reg_names[i]);
		if (!res[i])
			return dev_err_probe(hw->dev, -EINVAL, "no \"%s\" register range\n",
					     rkaccel_hw_reg_names[i]);
	}
	ret = hw_claim_ext(hw, res[0]);
	if (ret < 0)
		return ret;
	for (i = 0; i < ARRAY_SIZE(res); i++) {
		ret = hw_request_range(hw, res[i], rkaccel_hw_reg_names[i]);
		if (ret)
			return ret;
	}
	if (hw->ext)
		return 0;

	for (i = 0; i < ARRAY_SIZE(res); i++) {
		*maps[i] = devm_ioremap(hw->dev, res[i]->start, resource_size(res[i]));
		if (!*maps[i])
			return -ENOMEM;
	}
	return 0;
}

static int hw_get_clocks_resets(struct rkaccel_hw_core *hw)
{
	unsigned int i;
	int ret;

	hw->num_clks = ARRAY_SIZE(rkaccel_hw_clk_names);
	hw->clks = devm_kcalloc(hw->dev, hw->num_clks, sizeof(*hw->clks), GFP_KERNEL);
	if (!hw->clks)
		return -ENOMEM;
	for (i = 0; i < hw->num_clks; i++)
		hw->clks[i].id = rkaccel_hw_clk_names[i];
	ret = devm_clk_bulk_get(hw->dev, hw->num_clks, hw->clks);
	if (ret)
		return dev_err_probe(hw->dev, ret, "clocks\n");

	/* Without a device tree (the x86 shim) there is no reset to look up. */
	if (!hw->dev->of_node)
		return 0;
	hw->rst = devm_reset_control_array_get_exclusive(hw->dev);
	if (IS_ERR(hw->rst))
		return dev_err_probe(hw->dev, PTR_ERR(hw->rst), "resets\n");
	return 0;
}

static void hw_put_group(void *data)
{
	iommu_group_put(data);
}

static int hw_get_iommu_group(struct rkaccel_hw_core *hw)
{
	struct iommu_fwspec *fwspec;

	/* A provided register block translates through the file's page table. */
	if (hw->ext)
		return 0;
	hw->group = iommu_group_get(hw->dev);
	if (!hw->group)
		return dev_err_probe(hw->dev, -ENODEV, "no IOMMU: the core needs its iommus\n");
	fwspec = dev_iommu_fwspec_get(hw->dev);
	hw->iommu_fwnode = fwspec ? fwspec->iommu_fwnode : NULL;
	return devm_add_action_or_reset(hw->dev, hw_put_group, hw->group);
}

/*
 * rocket (mainline) matches the same core nodes. rkaccel drives all cores of
 * an NPU or none: refuse when another driver already holds one of them.
 */
static int hw_check_other_driver(struct device *dev)
{
	struct device_node *np;
	int ret = 0;

	for_each_matching_node(np, rkaccel_hw_of_match) {
		struct platform_device *other = of_find_device_by_node(np);
		struct device_driver *drv;

		if (!other)
			continue;
		drv = READ_ONCE(other->dev.driver);
		if (drv && drv != &rkaccel_hw_core_driver.driver) {
			dev_err(dev, "core %pOF is bound to %s: unbind it or blacklist %s\n",
				np, drv->name, drv->name);
			ret = -EBUSY;
		}
		put_device(&other->dev);
		if (ret) {
			of_node_put(np);
			break;
		}
	}
	return ret;
}

static int rkaccel_hw_core_probe(struct platform_device *pdev)
{
	struct rkaccel_hw_core *hw;
	int ret;

	hw = devm_kzalloc(&pdev->dev, sizeof(*hw), GFP_KERNEL);
	if (!hw)
		return -ENOMEM;
	hw->dev = &pdev->dev;
	hw->soc = device_get_match_data(&pdev->dev);
	if (!hw->soc)
		hw->soc = (const void *)platform_get_device_id(pdev)->driver_data;
	ret = hw_check_other_driver(hw->dev);
	if (ret)
		return ret;
	ret = devm_mutex_init(hw->dev, &hw->domain_lock);
	if (ret)
		return ret;

	/* Clocks first: a provided register block comes with its clocks. */
	ret = hw_get_clocks_resets(hw);
	if (!ret) {
		hw->irq = platform_get_irq(pdev, 0);
		ret = hw->irq < 0 ? hw->irq : 0;
	}
	if (!ret)
		ret = hw_map_regs(hw, pdev);
	if (!ret)
		ret = hw_get_iommu_group(hw);
	if (!ret)
		ret = rkaccel_hw_pm_init(hw);
	if (ret && hw->silent) {
		/* a fused core the tree enables: the others go on without it */
		guard(mutex)(&rkaccel_hw_link_lock);
		rkaccel_hw_npu_absent(hw);
		return ret;
	}
	if (!ret)
		ret = rkaccel_hw_core_irq_init(hw);
	if (ret)
		return ret;

	platform_set_drvdata(pdev, hw);
	/* devfreq reads the cores' busy time through the links made here. */
	guard(mutex)(&rkaccel_hw_link_lock);
	return rkaccel_hw_npu_add(hw);
}

static void rkaccel_hw_core_remove(struct platform_device *pdev)
{
	guard(mutex)(&rkaccel_hw_link_lock);
	rkaccel_hw_npu_remove(platform_get_drvdata(pdev));
}

/*
 * Optional fuse: an nvmem cell "cores" on a core node holds the mask of the
 * SoC's cores that are present (bit n: the n-th core node of the SoC). An
 * RK3583 is an RK3588 whose third core is fused off. Returns 1 when the
 * core at @pos is usable, 0 when not, or a negative error.
 */
static int hw_core_usable(struct device_node *np, unsigned int pos)
{
	struct nvmem_cell *cell;
	size_t len;
	u8 *mask;
	int ret;

	if (!of_device_is_available(np))
		return 0;
	cell = of_nvmem_cell_get(np, "cores");
	if (IS_ERR(cell))
		return PTR_ERR(cell) == -EPROBE_DEFER ? -EPROBE_DEFER : 1;
	mask = nvmem_cell_read(cell, &len);
	nvmem_cell_put(cell);
	if (IS_ERR(mask))
		return PTR_ERR(mask);
	ret = len && (mask[0] & BIT(pos)) ? 1 : 0;
	kfree(mask);
	return ret;
}

/*
 * Count the usable core nodes of @hw's SoC, in device-tree order, and find
 * @hw's index among them. Each core computes the same answer on its own,
 * whatever order the cores probe in.
 */
int rkaccel_hw_core_slot(struct rkaccel_hw_core *hw, unsigned int *count)
{
	const struct of_device_id *match;
	unsigned int pos = 0, n = 0;
	struct device_node *np;
	int usable;

	/* A platform device without a device tree: its id is its slot. */
	if (!hw->dev->of_node) {
		hw->index = to_platform_device(hw->dev)->id;
		*count = hw->soc->num_cores;
		if (hw->index >= *count)
			return dev_err_probe(hw->dev, -EINVAL, "core %u of %u\n",
					     hw->index, *count);
		return 0;
	}

	hw->index = UINT_MAX;
	for_each_matching_node_and_match(np, rkaccel_hw_of_match, &match) {
		if (match->data != hw->soc)
			continue;
		usable = hw_core_usable(np, pos++);
		if (usable < 0) {
			of_node_put(np);
			return usable;
		}
		if (!usable)
			continue;
		if (np == hw->dev->of_node)
			hw->index = n;
		n++;
	}
	if (hw->index == UINT_MAX)
		return dev_err_probe(hw->dev, -ENODEV, "core disabled or fused off\n");
	if (n > hw->soc->num_cores)
		return dev_err_probe(hw->dev, -EINVAL, "%u cores in the device tree, %s has %u\n",
				     n, hw->soc->name, hw->soc->num_cores);
	*count = n;
	return 0;
}

/*
 * Which core faulted: rk_iommu reports with its own device (one MMU per
 * core, the core's "iommus"), a register provider with the core's.
 */
static struct rkaccel_hw_core *hw_fault_core(struct rkaccel_device *rdev, struct device *dev)
{
	unsigned int i;

	for (i = 0; i < rdev->num_cores; i++) {
		struct rkaccel_hw_core *hw = rdev->cores[i]->backend;

		/* a gone core's backend may be freed (its detach waits for us) */
		if (READ_ONCE(rdev->cores[i]->gone))
			continue;
		if (hw->dev == dev || (hw->iommu_fwnode && hw->iommu_fwnode == dev_fwnode(dev)))
			return hw;
	}
	return NULL;
}

/*
 * A page fault in a file's address space, from rk_iommu's hard IRQ (or
 * the register provider's stand-in). rk_iommu lets the core run on after
 * it, re-faulting on each access: fail the job and reset the core now
 * rather than at the watchdog. 0 tells the IOMMU core the fault is
 * handled; rk_iommu ignores the value either way.
 */
static int hw_iommu_fault(struct iommu_domain *domain, struct device *dev, unsigned long iova,
			  int flags, void *token)
{
	struct rkaccel_hw_core *hw = hw_fault_core(token, dev);
	struct rkaccel_core *core = hw ? READ_ONCE(hw->core) : NULL;

	/* the running job's address space only: not a domain detached since */
	if (!core || (domain && READ_ONCE(hw->domain) != domain))
		return -ENODEV;
	if (!rkaccel_core_iommu_fault(core))
		return -ENODEV;	/* no job: a fault the next reset already covers */
	dev_err_ratelimited(hw->dev, "IOMMU %s fault at 0x%08lx: job failed, resetting the core\n",
			    flags & IOMMU_FAULT_WRITE ? "write" : "read", iova);
	return 0;
}

/*
 * An open file: its IOMMU domain, in the IOMMU type of the cores, with
 * rkaccel's fault handler. A provider of the register blocks is pinned
 * instead while the file is open, and the handler set on the address
 * space it walks.
 */
int rkaccel_hw_vm_init(struct rkaccel_device *rdev, struct rkaccel_vm *vm)
{
	struct rkaccel_hw_core *hw = rdev->cores[0]->backend;
	struct iommu_domain *domain;

	if (hw->ext) {
		if (!try_module_get(hw->ext->owner))
			return -ENODEV;
		vm->provider = hw->ext->owner;
		rkaccel_vm_set_fault_handler(vm, hw_iommu_fault, rdev);
		return 0;
	}
	domain = iommu_paging_domain_alloc(hw->dev);
	if (IS_ERR(domain))
		return PTR_ERR(domain);
	if (domain->geometry.aperture_end < RKACCEL_VM_END - 1)
		dev_warn_once(hw->dev, "IOMMU aperture ends at %pad\n",
			      &domain->geometry.aperture_end);
	iommu_set_fault_handler(domain, hw_iommu_fault, rdev);
	vm->domain = domain;
	return 0;
}

/*
 * The file is gone: no core may keep its domain attached. A gone core's
 * backend may be freed: its detach took every domain off already.
 */
void rkaccel_hw_vm_fini(struct rkaccel_device *rdev, struct rkaccel_vm *vm)
{
	unsigned int i;

	if (vm->provider) {
		module_put(vm->provider);
		return;
	}
	for (i = 0; i < rdev->num_cores; i++) {
		struct rkaccel_hw_core *hw = rdev->cores[i]->backend;

		if (READ_ONCE(rdev->cores[i]->gone))
			continue;
		guard(mutex)(&hw->domain_lock);
		if (hw->domain == vm->domain)
			hw_detach_locked(hw);
	}
}

/**
 * rkaccel_hw_core_release - the device over the core is gone.
 * @hw: the core, still bound, its rkaccel_core detached.
 *
 * A handler of the shared line that still saw the core has returned, and
 * no domain of a file stays attached (the file may outlive the core).
 */
void rkaccel_hw_core_release(struct rkaccel_hw_core *hw)
{
	if (hw->irq > 0)
		synchronize_irq(hw->irq);
	guard(mutex)(&hw->domain_lock);
	hw_detach_locked(hw);
}

struct platform_driver rkaccel_hw_core_driver = {
	.probe = rkaccel_hw_core_probe,
	.remove = rkaccel_hw_core_remove,
	.id_table = rkaccel_hw_ids,
	.driver = {
		.name = RKACCEL_HW_CORE_DRIVER_NAME,
		.of_match_table = rkaccel_hw_of_match,
		.pm = pm_ptr(&rkaccel_hw_pm_ops),
	},
};
