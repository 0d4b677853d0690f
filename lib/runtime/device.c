// SPDX-License-Identifier: MIT
/* Finding, opening and querying the rkaccel device. */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <xf86drm.h>

#include "rkaccel.h"
#include "rkaccel_drm.h"

struct rkaccel_device {
	int fd;
	char path[64];
};

static int is_rkaccel(int fd)
{
	drmVersionPtr v = drmGetVersion(fd);
	int match;

	if (!v)
		return 0;
	match = v->name && strcmp(v->name, RKACCEL_DRIVER_NAME) == 0;
	drmFreeVersion(v);
	return match;
}

/*
 * Only a character device can be a DRM node: anything else is refused at
 * once (O_NONBLOCK: a FIFO never waits for a peer), before any ioctl.
 */
static int open_path(const char *path, struct rkaccel_device **dev)
{
	struct rkaccel_device *d;
	struct stat st;
	int fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISCHR(st.st_mode) ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) || !is_rkaccel(fd)) {
		close(fd);
		return -ENODEV;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	d->fd = fd;
	snprintf(d->path, sizeof(d->path), "%s", path);
	*dev = d;
	return 0;
}

/* Accel nodes first; render nodes serve kernels built without DRM_ACCEL. */
static int open_first(struct rkaccel_device **dev)
{
	static const struct { const char *fmt; int first, count; } nodes[] = {
		{ "/dev/accel/accel%d", 0, 64 },
		{ "/dev/dri/renderD%d", 128, 64 },
	};
	char path[64];

	for (size_t n = 0; n < sizeof(nodes) / sizeof(nodes[0]); n++) {
		for (int i = 0; i < nodes[n].count; i++) {
			snprintf(path, sizeof(path), nodes[n].fmt, nodes[n].first + i);
			if (access(path, F_OK))
				continue;
			if (open_path(path, dev) == 0)
				return 0;
		}
	}
	return -ENODEV;
}

int rkaccel_open(const char *path, struct rkaccel_device **dev)
{
	if (!dev)
		return -EINVAL;
	return path ? open_path(path, dev) : open_first(dev);
}

void rkaccel_close(struct rkaccel_device *dev)
{
	if (!dev)
		return;
	close(dev->fd);
	free(dev);
}

int rkaccel_fd(const struct rkaccel_device *dev)
{
	return dev->fd;
}

const char *rkaccel_path(const struct rkaccel_device *dev)
{
	return dev->path;
}

uint32_t rkaccel_lib_version(void)
{
	return RKACCEL_LIB_VERSION;
}

const char *rkaccel_soc_name(uint32_t soc)
{
	switch (soc) {
	case DRM_RKACCEL_SOC_RK3588:
		return "RK3588";
	case DRM_RKACCEL_SOC_RK3576:
		return "RK3576";
	default:
		return "unknown";
	}
}

int rkaccel_query(struct rkaccel_device *dev, struct rkaccel_info *info)
{
	struct drm_rkaccel_query q = { 0 };

	if (!dev || !info)
		return -EINVAL;
	if (drmIoctl(dev->fd, DRM_IOCTL_RKACCEL_QUERY, &q))
		return -errno;

	*info = (struct rkaccel_info) {
		.soc = q.soc,
		.soc_name = rkaccel_soc_name(q.soc),
		.backend = q.backend,
		.num_cores = q.num_cores,
		.core_mask = q.core_mask,
		.driver_major = q.driver_major,
		.driver_minor = q.driver_minor,
		.driver_patch = q.driver_patch,
		.hw_version = q.hw_version,
		.va_size = q.va_size,
		.max_tasks = q.max_tasks,
		.cbuf_size = q.cbuf_size,
	};
	return 0;
}

const char *rkaccel_strerror(int err)
{
	return strerror(err < 0 ? -err : err);
}

/*
 * The device's debugfs directory: accel/ or dri/, named after the device
 * (the parent of the char device in sysfs) or, on older kernels, the minor.
 */
static FILE *open_debugfs_cores(const struct rkaccel_device *dev)
{
	const char *root = strstr(dev->path, "/accel/") ? "accel" : "dri";
	char link[128], target[256], path[384];
	const char *name;
	struct stat st;
	ssize_t n;
	FILE *f;

	if (fstat(dev->fd, &st))
		return NULL;
	snprintf(link, sizeof(link), "/sys/dev/char/%u:%u/device", major(st.st_rdev),
		 minor(st.st_rdev));
	n = readlink(link, target, sizeof(target) - 1);
	if (n > 0) {
		target[n] = '\0';
		name = strrchr(target, '/');
		snprintf(path, sizeof(path), "/sys/kernel/debug/%s/%s/cores", root,
			 name ? name + 1 : target);
		f = fopen(path, "r");
		if (f || errno == EACCES)
			return f;
	}
	snprintf(path, sizeof(path), "/sys/kernel/debug/%s/%u/cores", root, minor(st.st_rdev));
	return fopen(path, "r");
}

int rkaccel_core_stats(struct rkaccel_device *dev, struct rkaccel_core_stats *stats,
		       unsigned int max)
{
	unsigned long long jobs, faults, resets, busy;
	unsigned int core, load, n = 0;
	char line[160];
	FILE *f;

	if (!dev || (!stats && max))
		return -EINVAL;
	f = open_debugfs_cores(dev);
	if (!f)
		return errno == EACCES ? -EACCES : -ENOENT;
	while (n < max && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%u %llu %llu %llu %llu %u", &core, &jobs, &faults, &resets,
			   &busy, &load) != 6)
			continue;	/* the header */
		stats[n++] = (struct rkaccel_core_stats) {
			.core = core, .jobs = jobs, .faults = faults, .resets = resets,
			.busy_ns = busy, .load_permille = load,
		};
	}
	fclose(f);
	return (int)n;
}
