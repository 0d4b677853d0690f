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
#define DRM_RKACCEL_BO_CREATE		0x01
#define DRM_RKACCEL_BO_INFO		0x02
#define DRM_RKACCEL_BO_WAIT		0x03
#define DRM_RKACCEL_BO_SEAL		0x04
#define DRM_RKACCEL_CTX_CREATE		0x05
#define DRM_RKACCEL_CTX_DESTROY		0x06
#define DRM_RKACCEL_CTX_QUERY		0x07
#define DRM_RKACCEL_SUBMIT		0x08

#define DRM_IOCTL_RKACCEL_QUERY \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RKACCEL_QUERY, struct drm_rkaccel_query)
#define DRM_IOCTL_RKACCEL_BO_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RKACCEL_BO_CREATE, struct drm_rkaccel_bo_create)
#define DRM_IOCTL_RKACCEL_BO_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RKACCEL_BO_INFO, struct drm_rkaccel_bo_info)
#define DRM_IOCTL_RKACCEL_BO_WAIT \
	DRM_IOW(DRM_COMMAND_BASE + DRM_RKACCEL_BO_WAIT, struct drm_rkaccel_bo_wait)
#define DRM_IOCTL_RKACCEL_BO_SEAL \
	DRM_IOW(DRM_COMMAND_BASE + DRM_RKACCEL_BO_SEAL, struct drm_rkaccel_bo_seal)
#define DRM_IOCTL_RKACCEL_CTX_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RKACCEL_CTX_CREATE, struct drm_rkaccel_ctx_create)
#define DRM_IOCTL_RKACCEL_CTX_DESTROY \
	DRM_IOW(DRM_COMMAND_BASE + DRM_RKACCEL_CTX_DESTROY, struct drm_rkaccel_ctx_destroy)
#define DRM_IOCTL_RKACCEL_CTX_QUERY \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RKACCEL_CTX_QUERY, struct drm_rkaccel_ctx_query)
#define DRM_IOCTL_RKACCEL_SUBMIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RKACCEL_SUBMIT, struct drm_rkaccel_submit)

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

/**
 * DRM_RKACCEL_BO_WEIGHT - the BO holds weights.
 *
 * The device maps it read-only from creation. The CPU fills it, then seals
 * it with DRM_IOCTL_RKACCEL_BO_SEAL: from then on CPU mappings are read-only
 * too, it may be exported as a dma-buf and jobs may use it. A job naming an
 * unsealed weight BO is rejected with -EINVAL.
 */
#define DRM_RKACCEL_BO_WEIGHT		0x00000001u
/** DRM_RKACCEL_BO_SEALED - reported by BO_INFO once a weight BO is sealed. */
#define DRM_RKACCEL_BO_SEALED		0x80000000u

/** DRM_RKACCEL_BO_ALIGN - NPU addresses and sizes are multiples of this. */
#define DRM_RKACCEL_BO_ALIGN		4096

/**
 * struct drm_rkaccel_bo_create - create a shmem-backed buffer object.
 *
 * The BO is mapped into the NPU address space of the calling file at once.
 */
struct drm_rkaccel_bo_create {
	/** @size: bytes; rounded up to DRM_RKACCEL_BO_ALIGN. Not zero. */
	__u64 size;
	/** @flags: DRM_RKACCEL_BO_WEIGHT or zero. */
	__u32 flags;
	/** @handle: out, the GEM handle. */
	__u32 handle;
	/** @npu_addr: out, the BO's address in this file's NPU address space. */
	__u64 npu_addr;
	/** @mmap_offset: out, offset to pass to mmap(2) on the device fd. */
	__u64 mmap_offset;
};

/**
 * struct drm_rkaccel_bo_info - describe a BO of this file, for example one
 * imported from a dma-buf, which gets its own NPU address here.
 */
struct drm_rkaccel_bo_info {
	/** @handle: the GEM handle. */
	__u32 handle;
	/** @flags: must be zero. */
	__u32 flags;
	/** @bo_flags: out, creation flags plus DRM_RKACCEL_BO_SEALED. */
	__u32 bo_flags;
	/** @pad: must be zero. */
	__u32 pad;
	/** @size: out, bytes. */
	__u64 size;
	/** @npu_addr: out, address in this file's NPU address space. */
	__u64 npu_addr;
	/** @mmap_offset: out, offset for mmap(2). */
	__u64 mmap_offset;
};

/**
 * struct drm_rkaccel_bo_wait - wait until every job using a BO is done.
 *
 * Returns -ETIME when @timeout_ns passes first (0 polls).
 */
struct drm_rkaccel_bo_wait {
	/** @handle: the GEM handle. */
	__u32 handle;
	/** @flags: must be zero. */
	__u32 flags;
	/** @timeout_ns: absolute CLOCK_MONOTONIC deadline in ns. */
	__u64 timeout_ns;
};

/** struct drm_rkaccel_bo_seal - seal a weight BO (idempotent). */
struct drm_rkaccel_bo_seal {
	/** @handle: GEM handle of a BO created with DRM_RKACCEL_BO_WEIGHT. */
	__u32 handle;
	/** @flags: must be zero. */
	__u32 flags;
};

/**
 * enum drm_rkaccel_priority - context priority.
 * @DRM_RKACCEL_PRIORITY_LOW: background work.
 * @DRM_RKACCEL_PRIORITY_NORMAL: the default.
 * @DRM_RKACCEL_PRIORITY_HIGH: needs CAP_SYS_NICE.
 */
enum drm_rkaccel_priority {
	DRM_RKACCEL_PRIORITY_LOW = 0,
	DRM_RKACCEL_PRIORITY_NORMAL = 1,
	DRM_RKACCEL_PRIORITY_HIGH = 2,
};

/** struct drm_rkaccel_ctx_create - create an execution context. */
struct drm_rkaccel_ctx_create {
	/**
	 * @core_mask: cores the context's jobs may run on: bit n is core n.
	 * 0 means any core: each job goes to the least busy one. A bit naming
	 * an absent core is rejected with -EINVAL.
	 */
	__u32 core_mask;
	/** @priority: one of &enum drm_rkaccel_priority. */
	__u32 priority;
	/** @flags: must be zero. */
	__u32 flags;
	/** @handle: out, the context handle (never 0). */
	__u32 handle;
};

/**
 * struct drm_rkaccel_ctx_destroy - destroy a context; queued jobs still run.
 *
 * A SUBMIT to the context that races the destroy either queued its job
 * before (the job runs and signals) or fails with -ENOENT.
 */
struct drm_rkaccel_ctx_destroy {
	/** @handle: the context. */
	__u32 handle;
	/** @pad: must be zero. */
	__u32 pad;
};

/**
 * enum drm_rkaccel_ctx_state - health of a context.
 * @DRM_RKACCEL_CTX_OK: runs jobs.
 * @DRM_RKACCEL_CTX_GUILTY: one of its jobs hung the core; new submits fail
 *	with -ECANCELED. Destroy it and create another.
 */
enum drm_rkaccel_ctx_state {
	DRM_RKACCEL_CTX_OK = 0,
	DRM_RKACCEL_CTX_GUILTY = 1,
};

/** struct drm_rkaccel_ctx_query - state and counters of a context. */
struct drm_rkaccel_ctx_query {
	/** @handle: the context. */
	__u32 handle;
	/** @flags: must be zero. */
	__u32 flags;
	/** @state: out, &enum drm_rkaccel_ctx_state. */
	__u32 state;
	/** @reset_count: out, core resets its jobs caused. */
	__u32 reset_count;
	/** @core_mask: out, the mask the context was created with. */
	__u32 core_mask;
	/** @last_core: out, core its latest job ran on, ~0 before any. */
	__u32 last_core;
	/** @jobs_submitted: out. */
	__u64 jobs_submitted;
	/** @jobs_completed: out, without error. */
	__u64 jobs_completed;
	/** @jobs_failed: out, ended with an error (fault or timeout). */
	__u64 jobs_failed;
};

/* drm_rkaccel_task.flags: the chain ends with a pooling (PPU-only) task. */
#define DRM_RKACCEL_TASK_ENDS_PPU	0x1u

/**
 * struct drm_rkaccel_task - one program-counter start on a core.
 *
 * The core fetches @regcmd_count 64-bit register commands at @regcmd_addr
 * and runs @task_count hardware tasks, each one chained to the next by the
 * PC_BASE_ADDRESS / PC_REGISTER_AMOUNTS entries at its tail.
 */

struct drm_rkaccel_task {
	/** @regcmd_addr: NPU address, 16-byte aligned, inside a BO of the job. */
	__u64 regcmd_addr;
	/** @regcmd_count: entries of the first hardware task; 1..131072. */
	__u32 regcmd_count;
	/** @task_count: hardware tasks in the chain; at least 1. */
	__u32 task_count;
	/**
	 * @flags: DRM_RKACCEL_TASK_ENDS_PPU when the chain's last hardware
	 * task runs only the PPU (pooling): it completes with the PPU's
	 * interrupt bits, not the DPU's. Other bits must be zero.
	 */
	__u32 flags;
	/** @pad: must be zero. */
	__u32 pad;
};

/*
 * The first version of &struct drm_rkaccel_task had no @flags and @pad; a
 * task_stride of this size is still accepted, as tasks without flags.
 */
#define DRM_RKACCEL_TASK_SIZE_V1	16

/** DRM_RKACCEL_SUBMIT_BO_WRITE - the job writes the BO (implicit sync). */
#define DRM_RKACCEL_SUBMIT_BO_WRITE	0x00000001u

/** struct drm_rkaccel_submit_bo - a BO the job reads or writes. */
struct drm_rkaccel_submit_bo {
	/** @handle: GEM handle. */
	__u32 handle;
	/** @flags: DRM_RKACCEL_SUBMIT_BO_WRITE or zero. */
	__u32 flags;
};

/** struct drm_rkaccel_sync - a syncobj and, for timelines, a point. */
struct drm_rkaccel_sync {
	/** @handle: syncobj handle. */
	__u32 handle;
	/** @flags: must be zero. */
	__u32 flags;
	/**
	 * @point: timeline point (any 64-bit value, as for
	 * &drm_rkaccel_submit.out_sync_point), 0 for a binary syncobj. An
	 * in-sync point must already have a fence (no wait-for-submit).
	 */
	__u64 point;
};

/**
 * struct drm_rkaccel_submit - queue one job on a context.
 *
 * Arrays are passed as user pointers with a count and the size of one
 * element, the stride. A stride above the kernel's struct size (newer
 * userspace, at most 256) is accepted when the bytes past the struct are
 * zero; one below it (older userspace, at least the first version's size:
 * DRM_RKACCEL_TASK_SIZE_V1 for tasks, the current size for the others) is
 * zero-extended. Anything else is
 * -EINVAL; the reason of every -EINVAL is in the DRM debug log.
 * The job starts once every input syncobj has signalled and every listed BO
 * is idle for its use. List every BO the job reads or writes: the list
 * gives implicit sync and keeps the BOs for the job's lifetime. The kernel
 * checks that each task's first regcmd lies in a listed BO; the regcmds a
 * chain reaches from there are followed by the device and are not checked
 * (a job reaches only its own file's address space, so an unlisted BO is
 * the submitter's own mistake, not a way into another file's memory). Its
 * out fence signals when the job is done, with an
 * error when it faulted (-EIO) or hung the core and was cancelled by the
 * reset (-ECANCELED; the context is then GUILTY).
 *
 * A core runs one file's address space at a time, switched at SUBMIT: a
 * SUBMIT whose job may land on a core that holds another file's jobs
 * (queued ones too, such as a job waiting for its input fences) waits until
 * those have ended; a signal interrupts the wait (the call is restarted, or
 * fails with -EINTR). The first file to wait for a core takes its next
 * turn: new jobs of the file that holds it wait too. Balancing (mask with
 * several cores) prefers a core no other file holds. -EIO: the core could
 * not switch to the file's address space (its IOMMU refused the attach);
 * nothing was queued. A job whose core lost the file's address space in a
 * reset ends with -EIO without running.
 */
struct drm_rkaccel_submit {
	/** @ctx: context handle. */
	__u32 ctx;
	/** @flags: must be zero. */
	__u32 flags;

	/** @tasks: pointer to struct drm_rkaccel_task[@task_count]. */
	__u64 tasks;
	/** @task_count: 1..DRM_RKACCEL_MAX_JOB_TASKS. */
	__u32 task_count;
	/** @task_stride: sizeof(struct drm_rkaccel_task), see above. */
	__u32 task_stride;

	/** @bos: pointer to struct drm_rkaccel_submit_bo[@bo_count]. */
	__u64 bos;
	/** @bo_count: 1..DRM_RKACCEL_MAX_JOB_BOS. */
	__u32 bo_count;
	/** @bo_stride: sizeof(struct drm_rkaccel_submit_bo), see above. */
	__u32 bo_stride;

	/** @in_syncs: pointer to struct drm_rkaccel_sync[@in_sync_count]. */
	__u64 in_syncs;
	/** @in_sync_count: 0..DRM_RKACCEL_MAX_JOB_SYNCS. */
	__u32 in_sync_count;
	/** @sync_stride: sizeof(struct drm_rkaccel_sync), or 0 without syncs. */
	__u32 sync_stride;

	/** @out_sync: syncobj that gets the job's fence, 0 for none. */
	__u32 out_sync;
	/** @pad: must be zero. */
	__u32 pad;
	/** @out_sync_point: timeline point for @out_sync, 0 for binary. */
	__u64 out_sync_point;
};

/** DRM_RKACCEL_MAX_JOB_TASKS - most PC starts in one job. */
#define DRM_RKACCEL_MAX_JOB_TASKS	256
/** DRM_RKACCEL_MAX_JOB_BOS - most BOs in one job. */
#define DRM_RKACCEL_MAX_JOB_BOS		256
/** DRM_RKACCEL_MAX_JOB_SYNCS - most input syncobjs in one job. */
#define DRM_RKACCEL_MAX_JOB_SYNCS	64

#if defined(__cplusplus)
}
#endif

#endif /* _RKACCEL_DRM_H_ */
