// SPDX-License-Identifier: GPL-2.0-only
/* The device node, DRM_IOCTL_VERSION and DRM_IOCTL_RKACCEL_QUERY. */

#include <errno.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xf86drm.h>

#include "kselftest_harness.h"
#include "rkaccel_test.h"

FIXTURE(dev) {
	struct rkaccel_device *dev;
	int fd;
};

FIXTURE_SETUP(dev)
{
	ASSERT_EQ(0, rkaccel_open(NULL, &self->dev)) TH_LOG("no rkaccel device node");
	self->fd = rkaccel_fd(self->dev);
}

FIXTURE_TEARDOWN(dev)
{
	rkaccel_close(self->dev);
}

TEST_F(dev, version)
{
	drmVersionPtr v = drmGetVersion(self->fd);

	ASSERT_NE(NULL, v);
	EXPECT_STREQ(RKACCEL_DRIVER_NAME, v->name);
	EXPECT_EQ(0, v->version_major);
	EXPECT_EQ(1, v->version_minor);
	drmFreeVersion(v);
}

TEST_F(dev, node_kind)
{
	const char *path = rkaccel_path(self->dev);

	/* accel when the kernel has CONFIG_DRM_ACCEL, else a render node */
	EXPECT_TRUE(!strncmp(path, "/dev/accel/accel", 16) ||
		    !strncmp(path, "/dev/dri/renderD", 16)) TH_LOG("node %s", path);
}

TEST_F(dev, query_matches_soc)
{
	struct drm_rkaccel_query q = { 0 };
	char soc[16];

	ASSERT_EQ(0, rkaccel_test_sim_soc(soc, sizeof(soc)));
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_RKACCEL_QUERY, &q));

	EXPECT_EQ(DRM_RKACCEL_BACKEND_SIM, q.backend);
	if (!strcmp(soc, "rk3588")) {
		EXPECT_EQ(DRM_RKACCEL_SOC_RK3588, q.soc);
		EXPECT_EQ(3, q.num_cores);
		EXPECT_EQ(0x7, q.core_mask);
		EXPECT_EQ(4095, q.max_tasks);
	} else if (!strcmp(soc, "rk3576")) {
		EXPECT_EQ(DRM_RKACCEL_SOC_RK3576, q.soc);
		EXPECT_EQ(2, q.num_cores);
		EXPECT_EQ(0x3, q.core_mask);
		EXPECT_EQ(65535, q.max_tasks);
	} else {
		ASSERT_TRUE(0) TH_LOG("unexpected sim=%s", soc);
	}
	EXPECT_EQ(0, q.driver_major);
	EXPECT_EQ(1, q.driver_minor);
	EXPECT_EQ(1ull << 32, q.va_size);
	EXPECT_EQ(384 * 1024, q.cbuf_size);
	EXPECT_NE(0, q.hw_version);
}

TEST_F(dev, query_library)
{
	struct rkaccel_info info;
	struct drm_rkaccel_query q = { 0 };

	ASSERT_EQ(0, rkaccel_query(self->dev, &info));
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_RKACCEL_QUERY, &q));
	EXPECT_EQ(q.soc, info.soc);
	EXPECT_EQ(q.num_cores, info.num_cores);
	EXPECT_STREQ(rkaccel_soc_name(q.soc), info.soc_name);
	EXPECT_EQ(-EINVAL, rkaccel_query(self->dev, NULL));
}

TEST_F(dev, query_rejects_flags)
{
	for (unsigned int bit = 0; bit < 32; bit++) {
		struct drm_rkaccel_query q = { .flags = 1u << bit, .soc = 0xdead };

		EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_RKACCEL_QUERY, &q));
		EXPECT_EQ(EINVAL, errno);
		EXPECT_EQ(0xdead, q.soc) TH_LOG("output written on error");
	}
}

TEST_F(dev, query_rejects_pad)
{
	struct drm_rkaccel_query q = { .pad = 1, .num_cores = 0xbeef };

	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_RKACCEL_QUERY, &q));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0xbeef, q.num_cores);
}

TEST_F(dev, query_bad_pointer)
{
	void *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, page);
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_RKACCEL_QUERY, page));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_RKACCEL_QUERY, NULL));
	EXPECT_EQ(EFAULT, errno);
	munmap(page, 4096);
}

TEST_F(dev, query_read_only_pointer)
{
	/* the ioctl writes its answer: a read-only buffer must give EFAULT */
	struct drm_rkaccel_query *q = mmap(NULL, 4096, PROT_READ,
					   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, q);
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_RKACCEL_QUERY, q));
	EXPECT_EQ(EFAULT, errno);
	munmap(q, 4096);
}

/* An older userspace that knew only the first members gets that prefix. */
struct query_v0 {
	__u32 flags, pad, soc, backend, num_cores, core_mask;
};

#define DRM_IOCTL_RKACCEL_QUERY_V0 \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RKACCEL_QUERY, struct query_v0)

TEST_F(dev, query_short_struct)
{
	struct { struct query_v0 q; __u32 canary; } s = { .canary = 0xc0ffee };

	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_RKACCEL_QUERY_V0, &s.q));
	EXPECT_NE(0, s.q.soc);
	EXPECT_NE(0, s.q.num_cores);
	EXPECT_EQ(0xc0ffee, s.canary) TH_LOG("kernel wrote past a short struct");
}

TEST_F(dev, unknown_ioctl)
{
	__u64 buf[8] = { 0 };

	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOWR(DRM_COMMAND_BASE + 0x3f, buf), buf));
	EXPECT_TRUE(errno == EINVAL || errno == ENOTTY) TH_LOG("errno %d", errno);
}

TEST(open_missing_path)
{
	struct rkaccel_device *dev = NULL;

	EXPECT_EQ(-ENOENT, rkaccel_open("/dev/accel/nonexistent", &dev));
	EXPECT_EQ(NULL, dev);
	EXPECT_EQ(-ENODEV, rkaccel_open("/dev/null", &dev));
	EXPECT_EQ(-EINVAL, rkaccel_open(NULL, NULL));
}

TEST(many_opens)
{
	struct rkaccel_device *devs[64];

	for (int i = 0; i < 64; i++) {
		ASSERT_EQ(0, rkaccel_open(NULL, &devs[i]));
	}
	for (int i = 0; i < 64; i++)
		rkaccel_close(devs[i]);
}

TEST_HARNESS_MAIN
