// SPDX-License-Identifier: GPL-2.0-only
/*
 * Silicon backend, the whole NPU: the cores probe one by one, in any order;
 * each takes its slot (rkaccel_hw_core_slot()), and the one that completes
 * the set registers a "rkaccel-npu" platform device whose probe creates the
 * rkaccel device over all of them (or fails its own probe with it). A core
 * that goes away takes the device with it. One NPU per system: the SoCs
 * have one.
 */

#include <drm/drm_drv.h>
#include <linux/dma-mapping.h>
#include <linux/mutex.h>
#include <linux/platform_device.h>

#include "rkaccel_core.h"
#include "rkaccel_device.h"
#include "rkaccel_hw.h"

/**
 * struct rkaccel_hw_npu - the platform data of the rkaccel-npu device.
 * @soc: per-SoC data.
 * @num_cores: cores present.
 * @cores: the cores, by index.
 */
struct rkaccel_hw_npu {
	const struct rkaccel_soc_data *soc;
	unsigned int num_cores;
	struct rkaccel_hw_core *cores[RKACCEL_MAX_CORES];
};

static DEFINE_MUTEX(rkaccel_hw_npu_lock);
/* Cores that have probed, and the device once they all have; under the lock. */
static struct rkaccel_hw_npu rkaccel_hw_npu_cores;
static struct platform_device *rkaccel_hw_npu_pdev;

static bool rkaccel_hw_npu_complete(void)
{
	unsigned int i;

	for (i = 0; i < rkaccel_hw_npu_cores.num_cores; i++)
		if (!rkaccel_hw_npu_cores.cores[i])
			return false;
	return true;
}

int rkaccel_hw_npu_add(struct rkaccel_hw_core *hw)
{
	struct rkaccel_hw_npu *npu = &rkaccel_hw_npu_cores;
	struct platform_device *pdev;
	unsigned int count;
	int ret;

	ret = rkaccel_hw_core_slot(hw, &count);
	if (ret)
		return ret;

	guard(mutex)(&rkaccel_hw_npu_lock);
	if ((npu->soc && (npu->soc != hw->soc || npu->num_cores != count)) ||
	    npu->cores[hw->index])
		return dev_err_probe(hw->dev, -EBUSY, "core %u already taken\n", hw->index);
	npu->soc = hw->soc;
	npu->num_cores = count;
	npu->cores[hw->index] = hw;
	dev_info(hw->dev, "%s NPU core %u of %u\n", hw->soc->name, hw->index, count);
	if (!rkaccel_hw_npu_complete())
		return 0;

	pdev = platform_device_register_data(NULL, RKACCEL_HW_NPU_DRIVER_NAME,
					     PLATFORM_DEVID_NONE, npu, sizeof(*npu));
	if (IS_ERR(pdev)) {
		npu->cores[hw->index] = NULL;
		return PTR_ERR(pdev);
	}
	/* it probed synchronously: without the device the last core fails too */
	if (!device_is_bound(&pdev->dev)) {
		platform_device_unregister(pdev);
		npu->cores[hw->index] = NULL;
		dev_err(hw->dev, "the NPU device failed to probe (see above)\n");
		return -ENODEV;
	}
	rkaccel_hw_npu_pdev = pdev;
	return 0;
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
	},
};
