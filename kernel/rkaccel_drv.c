// SPDX-License-Identifier: GPL-2.0-only
/*
 * rkaccel: DRM accel driver for the NPUs of the Rockchip RK3588 and RK3576.
 *
 * The device, its ioctl table and the module entry points. With sim=<soc>
 * the module creates a simulated NPU of that SoC instead of probing silicon.
 */

#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <drm/drm_ioctl.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/sizes.h>

#include "rkaccel_compat.h"
#include "rkaccel_core.h"
#include "rkaccel_device.h"
#include "rkaccel_regs.h"
#include "rkaccel_sim.h"

#define RKACCEL_SIM_DRIVER_NAME	"rkaccel-sim"

static char *sim;
module_param(sim, charp, 0444);
MODULE_PARM_DESC(sim, "Create a simulated NPU: rk3588 (3 cores) or rk3576 (2 cores)");

const struct rkaccel_soc_data rkaccel_rk3588_data = {
	.name = "rk3588",
	.soc = DRM_RKACCEL_SOC_RK3588,
	.num_cores = 3,
	.task_number_bits = 12,
	.task_status_reg = RKNPU_PC_TASK_STATUS_RK3588,
	.max_tasks = 4095,
	.cbuf_size = 384 * SZ_1K,
	.sim_hw_version = 0x35880000,
};

const struct rkaccel_soc_data rkaccel_rk3576_data = {
	.name = "rk3576",
	.soc = DRM_RKACCEL_SOC_RK3576,
	.num_cores = 2,
	.task_number_bits = 16,
	.task_status_reg = RKNPU_PC_TASK_STATUS_RK3576,
	.max_tasks = 65535,
	.cbuf_size = 384 * SZ_1K,
	.sim_hw_version = 0x35760000,
};

static const struct rkaccel_soc_data *const rkaccel_socs[] = {
	&rkaccel_rk3588_data,
	&rkaccel_rk3576_data,
};

static const struct drm_ioctl_desc rkaccel_ioctls[] = {
	DRM_IOCTL_DEF_DRV(RKACCEL_QUERY, rkaccel_ioctl_query, DRM_RENDER_ALLOW),
};

RKACCEL_DEFINE_FOPS(rkaccel_fops);

static const struct drm_driver rkaccel_drm_driver = {
	.driver_features = RKACCEL_DRIVER_NODE | DRIVER_GEM,
	.ioctls = rkaccel_ioctls,
	.num_ioctls = ARRAY_SIZE(rkaccel_ioctls),
	.fops = &rkaccel_fops,
	.name = RKACCEL_DRIVER_NAME,
	.desc = "Rockchip RK3588/RK3576 NPU",
	RKACCEL_DRIVER_DATE
	.major = RKACCEL_VERSION_MAJOR,
	.minor = RKACCEL_VERSION_MINOR,
	.patchlevel = RKACCEL_VERSION_PATCH,
};

static int rkaccel_sim_probe(struct platform_device *pdev)
{
	const struct rkaccel_soc_data *soc = dev_get_platdata(&pdev->dev);
	struct rkaccel_device *rdev;
	int ret;

	rdev = devm_drm_dev_alloc(&pdev->dev, &rkaccel_drm_driver, struct rkaccel_device, ddev);
	if (IS_ERR(rdev))
		return PTR_ERR(rdev);

	rdev->soc = soc;
	rdev->backend = DRM_RKACCEL_BACKEND_SIM;
	rdev->num_cores = soc->num_cores;
	ret = rkaccel_sim_init(rdev);
	if (ret)
		return ret;

	platform_set_drvdata(pdev, rdev);
	ret = drm_dev_register(&rdev->ddev, 0);
	if (ret)
		return ret;

	drm_info(&rdev->ddev, "simulated %s NPU, %u cores\n", soc->name, rdev->num_cores);
	return 0;
}

static void rkaccel_sim_remove(struct platform_device *pdev)
{
	struct rkaccel_device *rdev = platform_get_drvdata(pdev);

	drm_dev_unplug(&rdev->ddev);
}

static struct platform_driver rkaccel_sim_driver = {
	.probe = rkaccel_sim_probe,
	.remove = rkaccel_sim_remove,
	.driver = {
		.name = RKACCEL_SIM_DRIVER_NAME,
	},
};

static struct platform_device *rkaccel_sim_pdev;

static const struct rkaccel_soc_data *rkaccel_sim_soc(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rkaccel_socs); i++)
		if (sysfs_streq(name, rkaccel_socs[i]->name))
			return rkaccel_socs[i];
	return NULL;
}

static int rkaccel_sim_create(void)
{
	const struct rkaccel_soc_data *soc = rkaccel_sim_soc(sim);
	struct platform_device *pdev;

	if (!soc) {
		pr_err("rkaccel: sim=%s: unknown SoC (rk3588 or rk3576)\n", sim);
		return -EINVAL;
	}

	pdev = platform_device_register_data(NULL, RKACCEL_SIM_DRIVER_NAME, PLATFORM_DEVID_NONE,
					     soc, sizeof(*soc));
	if (IS_ERR(pdev))
		return PTR_ERR(pdev);
	rkaccel_sim_pdev = pdev;
	return 0;
}

static int __init rkaccel_init(void)
{
	int ret;

	ret = platform_driver_register(&rkaccel_sim_driver);
	if (ret)
		return ret;

	if (sim && *sim) {
		ret = rkaccel_sim_create();
		if (ret)
			platform_driver_unregister(&rkaccel_sim_driver);
	}
	return ret;
}

static void __exit rkaccel_exit(void)
{
	platform_device_unregister(rkaccel_sim_pdev);
	platform_driver_unregister(&rkaccel_sim_driver);
}

module_init(rkaccel_init);
module_exit(rkaccel_exit);

MODULE_DESCRIPTION("DRM accel driver for the Rockchip RK3588/RK3576 NPU");
MODULE_LICENSE("GPL");
