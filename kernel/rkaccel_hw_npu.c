// SPDX-License-Identifier: GPL-2.0-only
/*
 * Silicon backend, the whole NPU: the cores probe one by one, in any order;
 * each takes its slot (rkaccel_hw_core_slot()), and the one that completes
 * the set registers a "rkaccel-npu" platform device whose probe creates the
 * rkaccel device over all of them (or fails its own probe with it). A core
 * that does not answer (a fused core in a tree that still enables it, with
 * no "cores" nvmem cell to say so) counts as absent: the device comes up
 * with the cores that did, and the log says which one is missing. A core
 * that goes away takes the device with it. One NPU per system: the SoCs
 * have one.
 */

#include <drm/drm_drv.h>
#include <linux/bitmap.h>
#include <linux/dma-mapping.h>
#include <linux/mutex.h>
#include <linux/platform_device.h>

#include "rkaccel_core.h"
#include "rkaccel_device.h"
#include "rkaccel_hw.h"

/**
 * struct rkaccel_hw_npu - the cores of the NPU, by slot.
 * @soc: per-SoC data.
 * @num_cores: slots: the cores the device tree (or the SoC) has.
 * @cores: the cores that probed, by slot.
 * @absent: slots whose core does not answer, by bit.
 */
struct rkaccel_hw_npu {
	const struct rkaccel_soc_data *soc;
	unsigned int num_cores;
	struct rkaccel_hw_core *cores[RKACCEL_MAX_CORES];
	unsigned long absent;
};

static DEFINE_MUTEX(rkaccel_hw_npu_lock);
/* Cores that have probed, and the device once they all have; under the lock. */
static struct rkaccel_hw_npu rkaccel_hw_npu_cores;
static struct platform_device *rkaccel_hw_npu_pdev;

/* Every slot has its core or knows it is absent, and one core is there. */
static bool rkaccel_hw_npu_complete(void)
{
	const struct rkaccel_hw_npu *npu = &rkaccel_hw_npu_cores;
	unsigned int i, present = 0;

	for (i = 0; i < npu->num_cores; i++) {
		if (npu->cores[i])
			present++;
		else if (!test_bit(i, &npu->absent))
			return false;
	}
	return present;
}

/*
 * The set is complete: register the device over the cores present, in
 * slot order. Its probe is synchronous (the driver forces it, whatever
 * async_probe says): 0 once the device exists.
 */
static int rkaccel_hw_npu_create(struct device *by)
{
	const struct rkaccel_hw_npu *npu = &rkaccel_hw_npu_cores;
	struct rkaccel_hw_npu data = { .soc = npu->soc };
	struct platform_device *pdev;
	unsigned int i;

	for (i = 0; i < npu->num_cores; i++)
		if (npu->cores[i])
			data.cores[data.num_cores++] = npu->cores[i];
	if (npu->absent)
		dev_warn(by, "%s NPU with %u of its %u cores (absent: mask 0x%lx)\n",
			 npu->soc->name, data.num_cores, npu->num_cores, npu->absent);
	pdev = platform_device_register_data(NULL, RKACCEL_HW_NPU_DRIVER_NAME,
					     PLATFORM_DEVID_NONE, &data, sizeof(data));
	if (IS_ERR(pdev))
		return PTR_ERR(pdev);
	if (!device_is_bound(&pdev->dev)) {
		platform_device_unregister(pdev);
		dev_err(by, "the NPU device failed to probe (see above)\n");
		return -ENODEV;
	}
	rkaccel_hw_npu_pdev = pdev;
	return 0;
}

/* Under the lock: @hw's slot of a set of @count; -EBUSY when taken. */
static int rkaccel_hw_npu_slot(struct rkaccel_hw_core *hw, unsigned int count)
{
	struct rkaccel_hw_npu *npu = &rkaccel_hw_npu_cores;

	if ((npu->soc && (npu->soc != hw->soc || npu->num_cores != count)) ||
	    npu->cores[hw->index])
		return dev_err_probe(hw->dev, -EBUSY, "core %u already taken\n", hw->index);
	npu->soc = hw->soc;
	npu->num_cores = count;
	return 0;
}

int rkaccel_hw_npu_add(struct rkaccel_hw_core *hw)
{
	struct rkaccel_hw_npu *npu = &rkaccel_hw_npu_cores;
	unsigned int count;
	int ret;

	ret = rkaccel_hw_core_slot(hw, &count);
	if (ret)
		return ret;

	guard(mutex)(&rkaccel_hw_npu_lock);
	ret = rkaccel_hw_npu_slot(hw, count);
	if (ret)
		return ret;
	clear_bit(hw->index, &npu->absent);
	if (rkaccel_hw_npu_pdev) {
		/* the device went on without it: bound, but not used */
		dev_warn(hw->dev, "core %u came after the NPU device: unbind and bind a core to use it\n",
			 hw->index);
		return 0;
	}
	npu->cores[hw->index] = hw;
	dev_info(hw->dev, "%s NPU core %u of %u\n", hw->soc->name, hw->index, count);
	if (!rkaccel_hw_npu_complete())
		return 0;
	ret = rkaccel_hw_npu_create(hw->dev);
	if (ret)
		npu->cores[hw->index] = NULL;
	return ret;
}

/**
 * rkaccel_hw_npu_absent - a core whose probe found it silent.
 * @hw: the core, failing its probe.
 *
 * Its slot no longer holds the device back: the other cores make it.
 */
void rkaccel_hw_npu_absent(struct rkaccel_hw_core *hw)
{
	struct rkaccel_hw_npu *npu = &rkaccel_hw_npu_cores;
	unsigned int count;

	if (rkaccel_hw_core_slot(hw, &count))
		return;
	guard(mutex)(&rkaccel_hw_npu_lock);
	if (rkaccel_hw_npu_slot(hw, count))
		return;
	set_bit(hw->index, &npu->absent);
	dev_warn(hw->dev, "%s NPU core %u of %u is absent: the NPU goes on without it\n",
		 hw->soc->name, hw->index, count);
	if (!rkaccel_hw_npu_pdev && rkaccel_hw_npu_complete())
		rkaccel_hw_npu_create(hw->dev);
}

void rkaccel_hw_npu_remove(struct rkaccel_hw_core *hw)
{
	struct rkaccel_hw_npu *npu = &rkaccel_hw_npu_cores;
	unsigned int i;

	guard(mutex)(&rkaccel_hw_npu_lock);
	if (npu->cores[hw->index] != hw)
		return;
	platform_device_unregister(rkaccel_hw_npu_pdev);
	rkaccel_hw_npu_pdev = NULL;
	npu->cores[hw->index] = NULL;
	for (i = 0; i < npu->num_cores; i++)
		if (npu->cores[i])
			return;
	npu->soc = NULL;
	npu->num_cores = 0;
	npu->absent = 0;
}

static void rkaccel_hw_npu_unlink(const struct rkaccel_hw_npu *npu)
{
	unsigned int i;

	for (i = 0; i < npu->num_cores; i++)
		WRITE_ONCE(npu->cores[i]->core, NULL);
}

static int rkaccel_hw_npu_create_cores(struct rkaccel_device *rdev,
				       const struct rkaccel_hw_npu *npu)
{
	unsigned int i;

	for (i = 0; i < npu->num_cores; i++) {
		struct rkaccel_core *core;

		core = rkaccel_core_create(rdev, i, &rkaccel_hw_reg_ops, npu->cores[i]);
		if (IS_ERR(core))
			return PTR_ERR(core);
		/* the SoC's numbering, where a core before it is absent */
		core->slot = npu->cores[i]->index;
		rdev->cores[i] = core;
		WRITE_ONCE(npu->cores[i]->core, core);
	}
	return 0;
}

static int rkaccel_hw_npu_probe(struct platform_device *pdev)
{
	const struct rkaccel_hw_npu *npu = dev_get_platdata(&pdev->dev);
	struct rkaccel_device *rdev;
	int ret;

	/* Cache maintenance only: the cores' IOMMUs do the translation. */
	ret = dma_coerce_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;
	/* a BO's pages merge into segments far above the 64 KiB default */
	dma_set_max_seg_size(&pdev->dev, UINT_MAX);

	rdev = rkaccel_device_create(&pdev->dev, npu->soc,
				     npu->cores[0]->ext ? DRM_RKACCEL_BACKEND_SIM :
							  DRM_RKACCEL_BACKEND_SILICON,
				     npu->num_cores);
	if (IS_ERR(rdev))
		return PTR_ERR(rdev);

	ret = rkaccel_hw_npu_create_cores(rdev, npu);
	if (!ret)
		ret = rkaccel_device_register(rdev);
	if (ret)
		rkaccel_hw_npu_unlink(npu);
	return ret;
}

/*
 * A core is unbinding (its module, or fw_devlink when a supplier goes),
 * with every core's backend still there. Open files keep the DRM device,
 * its schedulers and their jobs, past the cores' devres: stop all that
 * reaches the cores now (issue 28, finding 9).
 */
static void rkaccel_hw_npu_remove_dev(struct platform_device *pdev)
{
	const struct rkaccel_hw_npu *npu = dev_get_platdata(&pdev->dev);
	struct rkaccel_device *rdev = platform_get_drvdata(pdev);
	unsigned int i;

	drm_dev_unplug(&rdev->ddev);
	for (i = 0; i < rdev->num_cores; i++)
		rkaccel_core_detach(rdev->cores[i]);
	rkaccel_hw_npu_unlink(npu);
	for (i = 0; i < npu->num_cores; i++)
		rkaccel_hw_core_release(npu->cores[i]);
}

struct platform_driver rkaccel_hw_npu_driver = {
	.probe = rkaccel_hw_npu_probe,
	.remove = rkaccel_hw_npu_remove_dev,
	.driver = {
		.name = RKACCEL_HW_NPU_DRIVER_NAME,
		.suppress_bind_attrs = true,
		/* the core that completes the set checks the device it made */
		.probe_type = PROBE_FORCE_SYNCHRONOUS,
	},
};
