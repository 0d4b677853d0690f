/* SPDX-License-Identifier: MIT */
/*
 * librkaccel: a thin userspace library over the rkaccel NPU driver.
 *
 * Every function that can fail returns 0 or a positive value on success and
 * a negative errno value on failure; rkaccel_strerror() names it.
 */
#ifndef RKACCEL_H
#define RKACCEL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** An open rkaccel device. */
struct rkaccel_device;

/** What the device is, as reported by the driver. */
struct rkaccel_info {
	uint32_t soc;		/* DRM_RKACCEL_SOC_* */
	const char *soc_name;	/* "RK3588", "RK3576" */
	uint32_t backend;	/* DRM_RKACCEL_BACKEND_* */
	uint32_t num_cores;
	uint32_t core_mask;	/* bit n: core n usable */
	uint32_t driver_major, driver_minor, driver_patch;
	uint32_t hw_version;
	uint64_t va_size;	/* NPU address space bytes per open device */
	uint32_t max_tasks;	/* tasks per job */
	uint32_t cbuf_size;	/* convolution buffer bytes per core */
};

/*
 * rkaccel_open - open the device at @path, or when @path is NULL the first
 * accel or render node whose driver is rkaccel. Stores the device in *@dev.
 * Returns 0, -ENODEV when no rkaccel device exists, or the open(2) error.
 */
int rkaccel_open(const char *path, struct rkaccel_device **dev);

/* rkaccel_close - close @dev and free it. NULL is a no-op. */
void rkaccel_close(struct rkaccel_device *dev);

/* rkaccel_fd - the DRM file descriptor of @dev, for raw ioctls. */
int rkaccel_fd(const struct rkaccel_device *dev);

/* rkaccel_path - the device node @dev was opened from. */
const char *rkaccel_path(const struct rkaccel_device *dev);

/* rkaccel_query - fill @info from DRM_IOCTL_RKACCEL_QUERY. */
int rkaccel_query(struct rkaccel_device *dev, struct rkaccel_info *info);

/* rkaccel_soc_name - "RK3588", "RK3576" or "unknown". */
const char *rkaccel_soc_name(uint32_t soc);

/* rkaccel_strerror - text for a negative errno value returned here. */
const char *rkaccel_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* RKACCEL_H */
