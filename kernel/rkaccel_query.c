// SPDX-License-Identifier: GPL-2.0-only
/* DRM_IOCTL_RKACCEL_QUERY: what the device is and what it allows. */

#include <drm/drm_file.h>
#include <linux/bits.h>
#include <linux/sizes.h>

#include "rkaccel_core.h"
#include "rkaccel_device.h"

int rkaccel_ioctl_query(struct drm_device *ddev, void *data, struct drm_file *file)
{
	struct rkaccel_device *rdev = to_rkaccel_device(ddev);
	struct drm_rkaccel_query *args = data;

	if (args->flags || args->pad)
		return -EINVAL;

	args->soc = rdev->soc->soc;
	args->backend = rdev->backend;
	args->num_cores = rdev->num_cores;
	args->core_mask = GENMASK(rdev->num_cores - 1, 0);
	args->driver_major = RKACCEL_VERSION_MAJOR;
	args->driver_minor = RKACCEL_VERSION_MINOR;
	args->driver_patch = RKACCEL_VERSION_PATCH;
	args->hw_version = rdev->cores[0]->hw_version;
	args->va_size = SZ_4G;
	args->max_tasks = rdev->soc->max_tasks;
	args->cbuf_size = rdev->soc->cbuf_size;
	return 0;
}
