/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef _RKACCEL_DEVICE_H_
#define _RKACCEL_DEVICE_H_

#include <drm/drm_device.h>
#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/xarray.h>

#include "rkaccel_drm.h"
#include "rkaccel_vm.h"

#define RKACCEL_MAX_CORES	3

#define RKACCEL_VERSION_MAJOR	0
#define RKACCEL_VERSION_MINOR	1
#define RKACCEL_VERSION_PATCH	0

struct rkaccel_core;

/**
 * struct rkaccel_soc_data - what differs between the SoCs' NPUs.
 * @name: SoC name, as in the sim= module parameter.
 * @soc: uAPI SoC id.
 * @num_cores: cores of a full chip.
 * @task_number_bits: width of PC_TASK_CON.TASK_NUMBER.
 * @task_status_reg: offset of PC_TASK_STATUS.
 * @max_tasks: most tasks per job (vendor limit).
 * @cbuf_size: convolution buffer bytes per core.
 */
struct rkaccel_soc_data {
	const char *name;
	enum drm_rkaccel_soc soc;
	unsigned int num_cores;
	unsigned int task_number_bits;
	u32 task_status_reg;
	u32 max_tasks;
	u32 cbuf_size;
};

/**
 * struct rkaccel_device - one NPU: a DRM device over its cores.
 * @ddev: the DRM device.
 * @soc: per-SoC data.
 * @backend: silicon, or simulated (rkaccel_sim.ko provides the registers).
 * @num_cores: cores in @cores.
 * @cores: the cores, indexed by core number.
 * @ctx_count: live contexts of all files, for leak checks.
 * @file_count: live per-file states.
 * @balance_lock: makes choosing a job's core and queueing it one step, so
 *	that jobs submitted at the same time see each other's choice.
 */
struct rkaccel_device {
	struct drm_device ddev;
	const struct rkaccel_soc_data *soc;
	enum drm_rkaccel_backend backend;
	unsigned int num_cores;
	struct rkaccel_core *cores[RKACCEL_MAX_CORES];
	atomic_t ctx_count;
	atomic_t file_count;
	struct mutex balance_lock;	/* core choice + push of one job */
};

/**
 * struct rkaccel_file - per open file state; outlives the file while jobs
 * of it still run.
 * @refcount: the file and each of its jobs hold one.
 * @rdev: the device.
 * @vm: the file's NPU address space.
 * @ctxs: contexts by handle.
 * @busy_ns: device time used by the file's jobs, per core (fdinfo).
 */
struct rkaccel_file {
	struct kref refcount;
	struct rkaccel_device *rdev;
	struct rkaccel_vm vm;
	struct xarray ctxs;
	atomic64_t busy_ns[RKACCEL_MAX_CORES];
};

static inline struct rkaccel_device *to_rkaccel_device(struct drm_device *ddev)
{
	return container_of(ddev, struct rkaccel_device, ddev);
}

extern const struct rkaccel_soc_data rkaccel_rk3588_data;
extern const struct rkaccel_soc_data rkaccel_rk3576_data;

struct rkaccel_device *rkaccel_device_create(struct device *dev,
					     const struct rkaccel_soc_data *soc,
					     enum drm_rkaccel_backend backend,
					     unsigned int num_cores);
int rkaccel_device_register(struct rkaccel_device *rdev);
int rkaccel_ioctl_query(struct drm_device *ddev, void *data, struct drm_file *file);
void rkaccel_file_put(struct rkaccel_file *rfile);
int rkaccel_gem_live_count(void);
void rkaccel_debugfs_init(struct rkaccel_device *rdev);

#endif /* _RKACCEL_DEVICE_H_ */
