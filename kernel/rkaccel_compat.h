/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Every difference between the kernels rkaccel supports lives here.
 */
#ifndef _RKACCEL_COMPAT_H_
#define _RKACCEL_COMPAT_H_

#include <linux/version.h>
#include <drm/drm_accel.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <linux/hrtimer.h>

/*
 * Kernels built without CONFIG_DRM_ACCEL (Debian arm64 6.12) get a render
 * node carrying the same ioctls instead of /dev/accel/accelN.
 */
#if IS_ENABLED(CONFIG_DRM_ACCEL)
#define RKACCEL_DRIVER_NODE	DRIVER_COMPUTE_ACCEL
#define RKACCEL_NODE_FOPS	DRM_ACCEL_FOPS
#else
#define RKACCEL_DRIVER_NODE	DRIVER_RENDER
#define RKACCEL_NODE_FOPS	DRM_GEM_FOPS
#endif

/* The node's file operations plus fdinfo, which neither macro sets here. */
#define RKACCEL_DEFINE_FOPS(name)				\
	static const struct file_operations name = {		\
		.owner = THIS_MODULE,				\
		RKACCEL_NODE_FOPS,				\
		.show_fdinfo = drm_show_fdinfo,			\
	}

/* struct drm_driver lost its .date member in 6.14. */
#if KERNEL_VERSION(6, 14, 0) > LINUX_VERSION_CODE
#define RKACCEL_DRIVER_DATE	.date = "20261202",
#else
#define RKACCEL_DRIVER_DATE
#endif

/* hrtimer_setup() replaced hrtimer_init() plus a function assignment in 6.13. */
#if KERNEL_VERSION(6, 13, 0) > LINUX_VERSION_CODE
static inline void hrtimer_setup(struct hrtimer *timer,
				 enum hrtimer_restart (*function)(struct hrtimer *),
				 clockid_t clock_id, enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock_id, mode);
	timer->function = function;
}
#endif

#endif /* _RKACCEL_COMPAT_H_ */
