/* SPDX-License-Identifier: ((GPL-2.0-only WITH Linux-syscall-note) OR MIT) */
/*
 * rkaccel: uAPI of the Rockchip RK3588 / RK3576 NPU driver.
 *
 * Rules every struct here follows: only __u32 and __u64 members, explicit
 * padding to a multiple of 64 bits, pointers passed as __u64, unknown flags
 * and non-zero padding rejected with -EINVAL, new members only appended at
 * the end (the DRM core zero-fills what an older userspace did not pass).
 */
#ifndef _RKACCEL_DRM_H_
#define _RKACCEL_DRM_H_

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

/** RKACCEL_DRIVER_NAME - name reported by DRM_IOCTL_VERSION. */
#define RKACCEL_DRIVER_NAME		"rkaccel"

#define DRM_RKACCEL_QUERY		0x00

#define DRM_IOCTL_RKACCEL_QUERY \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RKACCEL_QUERY, struct drm_rkaccel_query)

/**
 * enum drm_rkaccel_soc - the SoC whose NPU the device drives.
 * @DRM_RKACCEL_SOC_RK3588: RK3588 / RK3588S, three cores.
 * @DRM_RKACCEL_SOC_RK3576: RK3576, two cores.
 */
enum drm_rkaccel_soc {
	DRM_RKACCEL_SOC_RK3588 = 1,
	DRM_RKACCEL_SOC_RK3576 = 2,
};

/**
 * enum drm_rkaccel_backend - what executes the register writes.
 * @DRM_RKACCEL_BACKEND_SILICON: the NPU cores of the SoC, probed from DT.
 * @DRM_RKACCEL_BACKEND_SIM: the simulated NPU built into the driver.
 */
enum drm_rkaccel_backend {
	DRM_RKACCEL_BACKEND_SILICON = 1,
	DRM_RKACCEL_BACKEND_SIM = 2,
};

/**
 * struct drm_rkaccel_query - describe the device, its cores and limits.
 *
 * All members but @flags and @pad are outputs. On error nothing is written.
 */
struct drm_rkaccel_query {
	/** @flags: must be zero. */
	__u32 flags;
	/** @pad: must be zero. */
	__u32 pad;

	/** @soc: one of &enum drm_rkaccel_soc. */
	__u32 soc;
	/** @backend: one of &enum drm_rkaccel_backend. */
	__u32 backend;

	/** @num_cores: number of NPU cores the device drives. */
	__u32 num_cores;
	/** @core_mask: bit n set when core n is present and usable. */
	__u32 core_mask;

	/** @driver_major: driver major version (uAPI breaks never happen). */
	__u32 driver_major;
	/** @driver_minor: driver minor version, bumped when uAPI grows. */
	__u32 driver_minor;
	/** @driver_patch: driver patch level. */
	__u32 driver_patch;
	/** @hw_version: PC_VERSION + (PC_VERSION_NUM & 0xffff) of core 0. */
	__u32 hw_version;

	/** @va_size: bytes of NPU virtual address space per open file. */
	__u64 va_size;

	/** @max_tasks: most tasks one job may hold on this SoC. */
	__u32 max_tasks;
	/** @cbuf_size: bytes of convolution buffer per core. */
	__u32 cbuf_size;
};

#if defined(__cplusplus)
}
#endif

#endif /* _RKACCEL_DRM_H_ */
