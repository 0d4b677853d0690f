// SPDX-License-Identifier: GPL-2.0-only
/* One NPU core: what every backend shares. */

#include <drm/drm_managed.h>

#include "rkaccel_core.h"
#include "rkaccel_device.h"
#include "rkaccel_regs.h"

u32 rkaccel_core_hw_version(struct rkaccel_core *core)
{
	return rkaccel_core_read(core, RKNPU_PC_VERSION) +
	       (rkaccel_core_read(core, RKNPU_PC_VERSION_NUM) & 0xffff);
}

struct rkaccel_core *rkaccel_core_create(struct rkaccel_device *rdev, unsigned int index,
					 const struct rkaccel_reg_ops *ops, void *backend)
{
	struct rkaccel_core *core;

	core = drmm_kzalloc(&rdev->ddev, sizeof(*core), GFP_KERNEL);
	if (!core)
		return ERR_PTR(-ENOMEM);

	core->rdev = rdev;
	core->index = index;
	core->ops = ops;
	core->backend = backend;
	return core;
}
