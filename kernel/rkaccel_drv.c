// SPDX-License-Identifier: GPL-2.0-only
/*
 * rkaccel: DRM accel driver for the NPUs of the Rockchip RK3588 and RK3576.
 *
 * The device, its ioctl table and the module entry points. The device is
 * created once every NPU core has probed (rkaccel_hw*.c); a simulated NPU
 * enters through the same probe, with rkaccel_sim.ko providing the cores'
 * register blocks.
 */

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_prime.h>
#include <drm/drm_print.h>
#include <drm/drm_managed.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/sizes.h>

#include "rkaccel_compat.h"
#include "rkaccel_core.h"
#include "rkaccel_ctx.h"
#include "rkaccel_device.h"
#include "rkaccel_gem.h"
#include "rkaccel_hw.h"
#include "rkaccel_job.h"
#include "rkaccel_regs.h"

const struct rkaccel_soc_data rkaccel_rk3588_data = {
	.name = "rk3588",
	.soc = DRM_RKACCEL_SOC_RK3588,
	.num_cores = 3,
	.task_number_bits = 12,
	.task_status_reg = RKNPU_PC_TASK_STATUS_RK3588,
	.max_tasks = 4095,
	.cbuf_size = 384 * SZ_1K,
};

const struct rkaccel_soc_data rkaccel_rk3576_data = {
	.name = "rk3576",
	.soc = DRM_RKACCEL_SOC_RK3576,
	.num_cores = 2,
	.task_number_bits = 16,
	.task_status_reg = RKNPU_PC_TASK_STATUS_RK3576,
	.max_tasks = 65535,
	.cbuf_size = 384 * SZ_1K,
};

static const struct drm_ioctl_desc rkaccel_ioctls[] = {
	DRM_IOCTL_DEF_DRV(RKACCEL_QUERY, rkaccel_ioctl_query, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(RKACCEL_BO_CREATE, rkaccel_ioctl_bo_create, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(RKACCEL_BO_INFO, rkaccel_ioctl_bo_info, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(RKACCEL_BO_WAIT, rkaccel_ioctl_bo_wait, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(RKACCEL_BO_SEAL, rkaccel_ioctl_bo_seal, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(RKACCEL_CTX_CREATE, rkaccel_ioctl_ctx_create, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(RKACCEL_CTX_DESTROY, rkaccel_ioctl_ctx_destroy, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(RKACCEL_CTX_QUERY, rkaccel_ioctl_ctx_query, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(RKACCEL_SUBMIT, rkaccel_ioctl_submit, DRM_RENDER_ALLOW),
};

static void rkaccel_file_release(struct kref *kref)
{
	struct rkaccel_file *rfile = container_of(kref, struct rkaccel_file, refcount);

	atomic_dec(&rfile->rdev->file_count);
	xa_destroy(&rfile->ctxs);
	rkaccel_core_vm_forget(rfile->rdev, &rfile->vm);
	rkaccel_hw_vm_fini(rfile->rdev, &rfile->vm);
	rkaccel_vm_fini(&rfile->vm);
	kfree(rfile);
}

void rkaccel_file_put(struct rkaccel_file *rfile)
{
	kref_put(&rfile->refcount, rkaccel_file_release);
}

static int rkaccel_open(struct drm_device *ddev, struct drm_file *file)
{
	struct rkaccel_device *rdev = to_rkaccel_device(ddev);
	struct rkaccel_file *rfile;
	int ret;

	rfile = kzalloc(sizeof(*rfile), GFP_KERNEL);
	if (!rfile)
		return -ENOMEM;
	kref_init(&rfile->refcount);
	rfile->rdev = rdev;
	rkaccel_vm_init(&rfile->vm);
	ret = rkaccel_hw_vm_init(rdev, &rfile->vm);
	if (ret) {
		rkaccel_vm_fini(&rfile->vm);
		kfree(rfile);
		return ret;
	}
	xa_init_flags(&rfile->ctxs, XA_FLAGS_ALLOC1);
	atomic_inc(&rdev->file_count);
	file->driver_priv = rfile;
	return 0;
}

/* Handles (and so mappings) are gone already; running jobs hold @rfile. */
static void rkaccel_postclose(struct drm_device *ddev, struct drm_file *file)
{
	struct rkaccel_file *rfile = file->driver_priv;

	rkaccel_ctx_destroy_all(rfile);
	rkaccel_file_put(rfile);
}

static void rkaccel_show_fdinfo(struct drm_printer *p, struct drm_file *file)
{
	struct rkaccel_device *rdev = to_rkaccel_device(file->minor->dev);
	struct rkaccel_file *rfile = file->driver_priv;
	unsigned int i;

	for (i = 0; i < rdev->num_cores; i++)
		drm_printf(p, "drm-engine-core%u:\t%llu ns\n", i,
			   (u64)atomic64_read(&rfile->busy_ns[i]));
	drm_show_memory_stats(p, file);
	rkaccel_gem_show_weight_stats(p, file);
}

RKACCEL_DEFINE_FOPS(rkaccel_fops);

static const struct drm_driver rkaccel_drm_driver = {
	.driver_features = RKACCEL_DRIVER_NODE | DRIVER_GEM | DRIVER_SYNCOBJ |
			   DRIVER_SYNCOBJ_TIMELINE,
	.open = rkaccel_open,
	.postclose = rkaccel_postclose,
	.show_fdinfo = rkaccel_show_fdinfo,
	.gem_create_object = rkaccel_gem_create_object,
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

static void rkaccel_cores_sched_fini(struct drm_device *ddev, void *data)
{
	struct rkaccel_device *rdev = data;
	unsigned int i;

	for (i = 0; i < rdev->num_cores; i++)
		rkaccel_core_sched_fini(rdev->cores[i]);
}

static int rkaccel_cores_sched_init(struct rkaccel_device *rdev)
{
	unsigned int i;
	int ret;

	for (i = 0; i < rdev->num_cores; i++) {
		ret = rkaccel_core_sched_init(rdev->cores[i]);
		if (ret) {
			while (i--)
				rkaccel_core_sched_fini(rdev->cores[i]);
			return ret;
		}
	}
	return drmm_add_action_or_reset(&rdev->ddev, rkaccel_cores_sched_fini, rdev);
}

/* A device of @num_cores cores; the backend creates them next. */
struct rkaccel_device *rkaccel_device_create(struct device *dev,
					     const struct rkaccel_soc_data *soc,
					     enum drm_rkaccel_backend backend,
					     unsigned int num_cores)
{
	struct rkaccel_device *rdev;
	int ret;

	rdev = devm_drm_dev_alloc(dev, &rkaccel_drm_driver, struct rkaccel_device, ddev);
	if (IS_ERR(rdev))
		return rdev;
	rdev->soc = soc;
	rdev->backend = backend;
	rdev->num_cores = num_cores;
	ret = drmm_mutex_init(&rdev->ddev, &rdev->balance_lock);
	return ret ? ERR_PTR(ret) : rdev;
}

/* The cores exist: start their queues and open the device to userspace. */
int rkaccel_device_register(struct rkaccel_device *rdev)
{
	struct device *dev = rdev->ddev.dev;
	int ret;

	ret = rkaccel_cores_sched_init(rdev);
	if (ret)
		return ret;
	dev_set_drvdata(dev, rdev);
	ret = drm_dev_register(&rdev->ddev, 0);
	if (ret)
		return ret;
	rkaccel_debugfs_init(rdev);
	drm_info(&rdev->ddev, "%s %s NPU, %u cores\n",
		 rdev->backend == DRM_RKACCEL_BACKEND_SIM ? "simulated" : "silicon",
		 rdev->soc->name, rdev->num_cores);
	return 0;
}

static struct platform_driver *const rkaccel_drivers[] = {
	&rkaccel_hw_npu_driver,
	&rkaccel_hw_core_driver,
};

/* The cores bind from the device tree as soon as their driver is registered. */
static int __init rkaccel_init(void)
{
	return platform_register_drivers(rkaccel_drivers, ARRAY_SIZE(rkaccel_drivers));
}

static void __exit rkaccel_exit(void)
{
	platform_unregister_drivers(rkaccel_drivers, ARRAY_SIZE(rkaccel_drivers));
	rkaccel_hw_pm_exit();
}

module_init(rkaccel_init);
module_exit(rkaccel_exit);

MODULE_DESCRIPTION("DRM accel driver for the Rockchip RK3588/RK3576 NPU");
MODULE_LICENSE("GPL");
