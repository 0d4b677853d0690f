/* SPDX-License-Identifier: GPL-2.0-only */
/* Helpers shared by the rkaccel selftests. */
#ifndef RKACCEL_TEST_H
#define RKACCEL_TEST_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/sync_file.h>
#include <xf86drm.h>

#include "rkaccel.h"
#include "rkaccel_drm.h"

#define RKT_SIM_TASK_NS_PATH	"/sys/module/rkaccel_sim/parameters/sim_task_ns"
/* sim_task_ns as the module loads (rkaccel_sim_core.c): a test that changes it restores this */
#define RKT_SIM_TASK_NS_DEFAULT	0
#define RKT_NSEC_PER_SEC	1000000000ull
#define RKT_NSEC_PER_MSEC	1000000ull

/* @key's value on the guest's kernel command line ("key=value"): 0 or -1. */
static inline int rkt_cmdline_value(const char *key, char *buf, size_t len)
{
	char line[1024] = "", *p;
	FILE *f = fopen("/proc/cmdline", "r");

	if (!f)
		return -1;
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	for (p = strstr(line, key); p; p = strstr(p + 1, key))
		if ((p == line || p[-1] == ' ') && p[strlen(key)] == '=')
			break;
	if (!p)
		return -1;
	p += strlen(key) + 1;
	snprintf(buf, len, "%.*s", (int)strcspn(p, " \n"), p);
	return 0;
}

/* The SoC the guest simulates: rkaccel_soc= on its kernel command line. */
static inline int rkaccel_test_sim_soc(char *buf, size_t len)
{
	return rkt_cmdline_value("rkaccel_soc", buf, len);
}

#define RKT_SIM_MODULE		"/modules/rkaccel_sim.ko"
#define RKT_DRIVER_MODULE	"/modules/rkaccel.ko"

/*
 * rkaccel_sim.ko's parameters as the guest loaded it: "sim=<soc>" where it
 * created the cores (no device tree), "" where the device tree has them.
 */
static inline void rkt_sim_module_params(char *buf, size_t len)
{
	char sim[32] = "";
	FILE *f = fopen("/sys/module/rkaccel_sim/parameters/sim", "r");

	if (f) {
		if (!fgets(sim, sizeof(sim), f))
			sim[0] = '\0';
		fclose(f);
	}
	sim[strcspn(sim, "\n")] = '\0';
	if (!sim[0] || !strcmp(sim, "(null)"))
		buf[0] = '\0';
	else
		snprintf(buf, len, "sim=%s", sim);
}

/* The device is there: the NPU's platform device has its DRM minor. */
static inline int rkt_device_bound(void)
{
	return !access("/sys/bus/platform/devices/rkaccel-npu/accel", F_OK) ||
	       !access("/sys/bus/platform/devices/rkaccel-npu/drm", F_OK);
}

static inline int rkt_wait_device(int ms);

/* delete_module(@name) until it works or @ms pass: 0 or the last -errno. */
static inline int rkt_module_remove(const char *name, int ms)
{
	int ret;

	for (;;) {
		ret = syscall(SYS_delete_module, name, O_NONBLOCK) ? -errno : 0;
		if (!ret || ms <= 0)
			return ret;
		usleep(20000);
		ms -= 20;
	}
}

/* finit_module(2) of the guest's copy of @path with @params. */
static inline int rkt_module_load(const char *path, const char *params)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, params, 0) ? -errno : 0;
	close(fd);
	return ret;
}

/*
 * Both modules out (the simulator first: it depends on the driver), or
 * back in as the guest had them, waiting for the device.
 */
static inline int rkt_modules_remove(int ms)
{
	return rkt_module_remove("rkaccel_sim", ms) ?: rkt_module_remove("rkaccel", ms);
}

/*
 * The driver's parameters of this guest (rkaccel_params= on the command
 * line, as guest-init.sh loaded it), then @extra; "" when there are none.
 */
static inline void rkt_driver_params(char *buf, size_t len, const char *extra)
{
	char mine[256] = "";

	rkt_cmdline_value("rkaccel_params", mine, sizeof(mine));
	snprintf(buf, len, "%s%s%s", mine, mine[0] && extra[0] ? " " : "", extra);
}

static inline int rkt_modules_load(const char *sim_params)
{
	char params[256];
	int ret;

	rkt_driver_params(params, sizeof(params), "");
	ret = rkt_module_load(RKT_DRIVER_MODULE, params);

	if (!ret || ret == -EEXIST)
		ret = rkt_module_load(RKT_SIM_MODULE, sim_params);
	return ret ?: rkt_wait_device(10000);
}

/*
 * Booted as make check's debug kernel (KASAN, lockdep, ... under TCG): its
 * checkers, not its speed, are what such a run judges.
 */
static inline int rkt_debug_kernel(void)
{
	char v[16];

	return !rkt_cmdline_value("rkaccel_kernel", v, sizeof(v)) && !strcmp(v, "debug");
}

/* CLOCK_MONOTONIC now, in ns: the clock every rkaccel/syncobj deadline uses. */
static inline uint64_t rkt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * RKT_NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* An absolute deadline @ms from now. */
static inline int64_t rkt_deadline_ms(uint64_t ms)
{
	return (int64_t)(rkt_now_ns() + ms * RKT_NSEC_PER_MSEC);
}

/* ioctl that restarts on EINTR; 0 or -errno. */
static inline int rkt_ioctl(int fd, unsigned long req, void *arg)
{
	return drmIoctl(fd, req, arg) ? -errno : 0;
}

/* Open a new file description (a new DRM client) of the device: fd or -errno. */
static inline int rkt_open_fd(void)
{
	struct rkaccel_device *dev;
	int fd, ret;

	ret = rkaccel_open(NULL, &dev);
	if (ret)
		return ret;
	fd = open(rkaccel_path(dev), O_RDWR | O_CLOEXEC);
	if (fd < 0)
		ret = -errno;
	rkaccel_close(dev);
	return fd < 0 ? ret : fd;
}

/*
 * A device-tree probe runs from the deferred list: wait @ms for it, until
 * the node opens (drm_dev_register() adds the minor's sysfs entry before
 * an open can find it).
 */
static inline int rkt_wait_device(int ms)
{
	for (;; ms -= 20) {
		int fd = rkt_device_bound() ? rkt_open_fd() : -ENODEV;

		if (fd >= 0) {
			close(fd);
			return 0;
		}
		if (ms <= 0)
			return -ENODEV;
		usleep(20000);
	}
}

static inline int rkt_query(int fd, struct drm_rkaccel_query *q)
{
	memset(q, 0, sizeof(*q));
	return rkt_ioctl(fd, DRM_IOCTL_RKACCEL_QUERY, q);
}

/* --- buffer objects ------------------------------------------------------ */

struct rkt_bo {
	uint32_t handle;
	uint32_t flags;
	uint64_t size;		/* as asked */
	uint64_t npu_addr;
	uint64_t mmap_offset;
	void *map;		/* read-write CPU mapping of the rounded size, or NULL */
	size_t map_len;
};

static inline int rkt_bo_create(int fd, uint64_t size, uint32_t flags, struct rkt_bo *bo)
{
	struct drm_rkaccel_bo_create c = { .size = size, .flags = flags };
	int ret;

	memset(bo, 0, sizeof(*bo));
	ret = rkt_ioctl(fd, DRM_IOCTL_RKACCEL_BO_CREATE, &c);
	if (ret)
		return ret;
	bo->handle = c.handle;
	bo->flags = flags;
	bo->size = size;
	bo->npu_addr = c.npu_addr;
	bo->mmap_offset = c.mmap_offset;
	return 0;
}

static inline size_t rkt_round_up(uint64_t v, uint64_t align)
{
	return (size_t)((v + align - 1) / align * align);
}

/* Create a BO and map it read-write. */
static inline int rkt_bo_new(int fd, uint64_t size, uint32_t flags, struct rkt_bo *bo)
{
	int ret = rkt_bo_create(fd, size, flags, bo);
	void *p;

	if (ret)
		return ret;
	bo->map_len = rkt_round_up(size, DRM_RKACCEL_BO_ALIGN);
	p = mmap(NULL, bo->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)bo->mmap_offset);
	if (p == MAP_FAILED) {
		ret = -errno;
		bo->map = NULL;
		return ret;
	}
	bo->map = p;
	memset(p, 0, bo->map_len);
	return 0;
}

static inline int rkt_gem_close(int fd, uint32_t handle)
{
	struct drm_gem_close c = { .handle = handle };

	return rkt_ioctl(fd, DRM_IOCTL_GEM_CLOSE, &c);
}

static inline void rkt_bo_free(int fd, struct rkt_bo *bo)
{
	if (bo->map)
		munmap(bo->map, bo->map_len);
	bo->map = NULL;
	if (bo->handle)
		rkt_gem_close(fd, bo->handle);
	bo->handle = 0;
}

static inline int rkt_bo_info(int fd, uint32_t handle, struct drm_rkaccel_bo_info *info)
{
	memset(info, 0, sizeof(*info));
	info->handle = handle;
	return rkt_ioctl(fd, DRM_IOCTL_RKACCEL_BO_INFO, info);
}

static inline int rkt_bo_seal(int fd, uint32_t handle)
{
	struct drm_rkaccel_bo_seal s = { .handle = handle };

	return rkt_ioctl(fd, DRM_IOCTL_RKACCEL_BO_SEAL, &s);
}

static inline int rkt_bo_wait(int fd, uint32_t handle, uint64_t abs_timeout_ns)
{
	struct drm_rkaccel_bo_wait w = { .handle = handle, .timeout_ns = abs_timeout_ns };

	return rkt_ioctl(fd, DRM_IOCTL_RKACCEL_BO_WAIT, &w);
}

/* --- contexts ------------------------------------------------------------ */

static inline int rkt_ctx_create(int fd, uint32_t mask, uint32_t prio, uint32_t *handle)
{
	struct drm_rkaccel_ctx_create c = { .core_mask = mask, .priority = prio };
	int ret = rkt_ioctl(fd, DRM_IOCTL_RKACCEL_CTX_CREATE, &c);

	if (!ret)
		*handle = c.handle;
	return ret;
}

static inline int rkt_ctx_destroy(int fd, uint32_t handle)
{
	struct drm_rkaccel_ctx_destroy d = { .handle = handle };

	return rkt_ioctl(fd, DRM_IOCTL_RKACCEL_CTX_DESTROY, &d);
}

static inline int rkt_ctx_query(int fd, uint32_t handle, struct drm_rkaccel_ctx_query *q)
{
	memset(q, 0, sizeof(*q));
	q->handle = handle;
	return rkt_ioctl(fd, DRM_IOCTL_RKACCEL_CTX_QUERY, q);
}

/* --- submit -------------------------------------------------------------- */

/* Fill @s for one job; arrays may be NULL with a zero count. */
static inline void rkt_submit_init(struct drm_rkaccel_submit *s, uint32_t ctx,
				   const struct drm_rkaccel_task *tasks, uint32_t ntasks,
				   const struct drm_rkaccel_submit_bo *bos, uint32_t nbos,
				   const struct drm_rkaccel_sync *in, uint32_t nin,
				   uint32_t out_sync, uint64_t out_point)
{
	memset(s, 0, sizeof(*s));
	s->ctx = ctx;
	s->tasks = (uint64_t)(uintptr_t)tasks;
	s->task_count = ntasks;
	s->task_stride = sizeof(struct drm_rkaccel_task);
	s->bos = (uint64_t)(uintptr_t)bos;
	s->bo_count = nbos;
	s->bo_stride = sizeof(struct drm_rkaccel_submit_bo);
	s->in_syncs = (uint64_t)(uintptr_t)in;
	s->in_sync_count = nin;
	s->sync_stride = nin ? sizeof(struct drm_rkaccel_sync) : 0;
	s->out_sync = out_sync;
	s->out_sync_point = out_point;
}

static inline int rkt_submit_args(int fd, struct drm_rkaccel_submit *s)
{
	return rkt_ioctl(fd, DRM_IOCTL_RKACCEL_SUBMIT, s);
}

static inline int rkt_submit(int fd, uint32_t ctx, const struct drm_rkaccel_task *tasks,
			     uint32_t ntasks, const struct drm_rkaccel_submit_bo *bos,
			     uint32_t nbos, const struct drm_rkaccel_sync *in, uint32_t nin,
			     uint32_t out_sync, uint64_t out_point)
{
	struct drm_rkaccel_submit s;

	rkt_submit_init(&s, ctx, tasks, ntasks, bos, nbos, in, nin, out_sync, out_point);
	return rkt_submit_args(fd, &s);
}

/* --- syncobjs ------------------------------------------------------------ */

static inline int rkt_syncobj_create(int fd, uint32_t *handle)
{
	return drmSyncobjCreate(fd, 0, handle) ? -errno : 0;
}

/* Wait for one binary syncobj until an absolute deadline: 0 or -errno. */
static inline int rkt_syncobj_wait(int fd, uint32_t handle, int64_t abs_ns)
{
	return drmSyncobjWait(fd, &handle, 1, abs_ns, 0, NULL);
}

/* 0 when the syncobj's fence has signalled, -ETIME when it has not yet. */
static inline int rkt_syncobj_poll(int fd, uint32_t handle)
{
	return drmSyncobjWait(fd, &handle, 1, 0, 0, NULL);
}

/*
 * The status of the fence in a binary syncobj, read through a sync_file:
 * 1 signalled without error, 0 pending, negative the fence's error.
 */
static inline int rkt_syncobj_status(int fd, uint32_t handle, int *status)
{
	struct sync_file_info info;
	int sfd, ret;

	*status = 0;
	ret = drmSyncobjExportSyncFile(fd, handle, &sfd);
	if (ret)
		return -errno;
	memset(&info, 0, sizeof(info));
	ret = ioctl(sfd, SYNC_IOC_FILE_INFO, &info) ? -errno : 0;
	close(sfd);
	if (!ret)
		*status = info.status;
	return ret;
}

/* --- fdinfo -------------------------------------------------------------- */

/* Read "/proc/self/fdinfo/<fd>" into @buf; 0 or -errno. */
static inline int rkt_fdinfo_read(int fd, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = open(path, O_RDONLY);
	if (f < 0)
		return -errno;
	n = read(f, buf, len - 1);
	close(f);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

/* The line of @key ("drm-total-memory" etc.): pointer to its value text. */
static inline const char *rkt_fdinfo_find(const char *text, const char *key)
{
	size_t klen = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, key, klen) && p[klen] == ':') {
			p += klen + 1;
			while (*p == ' ' || *p == '\t')
				p++;
			return p;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

/*
 * The numeric value of @key in fd's fdinfo with its unit applied
 * (KiB/MiB/GiB -> bytes, ns -> ns). 0, -ENOENT without the key, -EINVAL
 * when it is not a number.
 */
static inline int rkt_fdinfo_u64(int fd, const char *key, uint64_t *val)
{
	char buf[4096], *end;
	const char *v;
	uint64_t n;
	int ret;

	ret = rkt_fdinfo_read(fd, buf, sizeof(buf));
	if (ret)
		return ret;
	v = rkt_fdinfo_find(buf, key);
	if (!v)
		return -ENOENT;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (end == v || errno)
		return -EINVAL;
	while (*end == ' ')
		end++;
	if (!strncmp(end, "KiB", 3))
		n <<= 10;
	else if (!strncmp(end, "MiB", 3))
		n <<= 20;
	else if (!strncmp(end, "GiB", 3))
		n <<= 30;
	*val = n;
	return 0;
}

/* Open file descriptors of this process, for leak checks; -1 on error. */
static inline long rkt_count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	long n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* True when the kernel log holds @text (the simulator names what it refused). */
static inline bool rkt_klog_has(const char *text)
{
	static char buf[1 << 17];
	int n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, sizeof(buf) - 1);

	if (n < 0)
		return false;
	buf[n] = '\0';
	return strstr(buf, text) != NULL;
}

/* Lines of the kernel log holding @text, -1 when the log cannot be read. */
static inline int rkt_klog_count(const char *text)
{
	static char buf[1 << 17];
	int n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, sizeof(buf) - 1);
	const char *p = buf;
	int count = 0;

	if (n < 0)
		return -1;
	buf[n] = '\0';
	while ((p = strstr(p, text))) {
		count++;
		p = strchr(p, '\n');
		if (!p)
			break;
	}
	return count;
}

/* --- interrupts ---------------------------------------------------------- */

/* Read a small text file whole; its length, or -errno. */
static inline int rkt_read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return (int)n;
}

/* True when @name is a device bound to rkaccel-core (its IRQ's action name). */
static inline bool rkt_is_core_device(const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "/sys/bus/platform/drivers/rkaccel-core/%s/driver", name);
	return access(path, F_OK) == 0;
}

/* Sum of /sys/kernel/irq/@irq/per_cpu_count, or -1 when the line is not the cores'. */
static inline long long rkt_irq_line_count(const char *irq)
{
	char path[300], buf[4096], *tok, *save;
	long long n = 0;
	bool ours = false;

	snprintf(path, sizeof(path), "/sys/kernel/irq/%s/actions", irq);
	if (rkt_read_text(path, buf, sizeof(buf)) < 0)
		return -1;
	for (tok = strtok_r(buf, ",\n", &save); tok; tok = strtok_r(NULL, ",\n", &save))
		ours |= rkt_is_core_device(tok);
	if (!ours)
		return -1;
	snprintf(path, sizeof(path), "/sys/kernel/irq/%s/per_cpu_count", irq);
	if (rkt_read_text(path, buf, sizeof(buf)) < 0)
		return -1;
	for (tok = strtok_r(buf, ",\n", &save); tok; tok = strtok_r(NULL, ",\n", &save))
		n += strtoll(tok, NULL, 10);
	return n;
}

/*
 * Interrupts the NPU cores' lines have taken so far, all CPUs together: a
 * storm on a level line shows as thousands. -1 when no line is found.
 */
static inline long long rkt_core_irq_count(void)
{
	DIR *d = opendir("/sys/kernel/irq");
	long long total = -1, n;
	struct dirent *de;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		n = rkt_irq_line_count(de->d_name);
		if (n >= 0)
			total = (total < 0 ? 0 : total) + n;
	}
	closedir(d);
	return total;
}

/* --- module parameters --------------------------------------------------- */

static inline int rkt_param_read_u64(const char *path, uint64_t *val)
{
	char buf[32];
	FILE *f = fopen(path, "r");
	int ret = -EIO;

	*val = 0;
	if (!f)
		return -errno;
	if (fgets(buf, sizeof(buf), f)) {
		*val = strtoull(buf, NULL, 10);
		ret = 0;
	}
	fclose(f);
	return ret;
}

static inline int rkt_param_write_u64(const char *path, uint64_t val)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -errno;
	ret = fprintf(f, "%llu\n", (unsigned long long)val) < 0 ? -EIO : 0;
	if (fclose(f) && !ret)
		ret = -errno;
	return ret;
}

/* --- debugfs ------------------------------------------------------------- */

/* The debugfs directory of the rkaccel device: 0 or -ENOENT. */
static inline int rkt_debugfs_dir(char *out, size_t len)
{
	static const char *const roots[] = { "/sys/kernel/debug/accel", "/sys/kernel/debug/dri" };
	unsigned int i;

	for (i = 0; i < 2; i++) {
		DIR *d = opendir(roots[i]);
		struct dirent *e;

		if (!d)
			continue;
		while ((e = readdir(d))) {
			char path[512], name[128] = "";
			FILE *f;

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s/name", roots[i], e->d_name);
			f = fopen(path, "r");
			if (!f)
				continue;
			if (!fgets(name, sizeof(name), f))
				name[0] = '\0';
			fclose(f);
			if (!strncmp(name, "rkaccel", 7)) {
				snprintf(out, len, "%s/%s", roots[i], e->d_name);
				closedir(d);
				return 0;
			}
		}
		closedir(d);
	}
	return -ENOENT;
}

/*
 * A live-object count from debugfs: @what is "bos", "contexts" or "files".
 * Reads <dir>/bo_count, ctx_count, file_count when present, else the line
 * "<what> N" of <dir>/objects. 0, or -ENOENT when the count is not exposed.
 */
static inline int rkt_debugfs_count(const char *what, long *val)
{
	char dir[400], path[512], line[128];
	const char *single = !strcmp(what, "bos") ? "bo_count" :
			     !strcmp(what, "contexts") ? "ctx_count" : "file_count";
	size_t wlen = strlen(what);
	FILE *f;

	if (rkt_debugfs_dir(dir, sizeof(dir)))
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/%s", dir, single);
	f = fopen(path, "r");
	if (f) {
		int ok = fgets(line, sizeof(line), f) != NULL;

		fclose(f);
		if (!ok)
			return -EIO;
		*val = strtol(line, NULL, 10);
		return 0;
	}
	snprintf(path, sizeof(path), "%s/objects", dir);
	f = fopen(path, "r");
	if (!f)
		return -ENOENT;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, what, wlen) && (line[wlen] == ' ' || line[wlen] == ':' ||
						   line[wlen] == '\t')) {
			*val = strtol(line + wlen + 1, NULL, 10);
			fclose(f);
			return 0;
		}
	}
	fclose(f);
	return -ENOENT;
}

/*
 * Wait up to 2 s for a debugfs count to come to @want: a job's BOs and
 * context are released when the scheduler frees it, a little after its
 * fence. Returns the last count, -1 when it is not exposed.
 */
static inline long rkt_debugfs_settle(const char *what, long want)
{
	long v = -1;

	for (int i = 0; i < 200; i++) {
		if (rkt_debugfs_count(what, &v))
			return -1;
		if (v == want)
			break;
		usleep(10000);
	}
	return v;
}

#endif /* RKACCEL_TEST_H */
