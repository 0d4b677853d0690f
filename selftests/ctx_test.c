// SPDX-License-Identifier: GPL-2.0-only
/* Contexts: CTX_CREATE, CTX_DESTROY, CTX_QUERY. */

#include <linux/capability.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "rkaccel_test.h"

#define CANARY32	0xc0ffee11u

FIXTURE(ctx) {
	struct rkaccel_device *dev;
	int fd;
	struct drm_rkaccel_query q;
};

FIXTURE_SETUP(ctx)
{
	ASSERT_EQ(0, rkaccel_open(NULL, &self->dev)) TH_LOG("no rkaccel device node");
	self->fd = rkaccel_fd(self->dev);
	ASSERT_EQ(0, rkt_query(self->fd, &self->q));
	ASSERT_LT(0, self->q.num_cores);
	ASSERT_EQ((1u << self->q.num_cores) - 1, self->q.core_mask);
}

FIXTURE_TEARDOWN(ctx)
{
	rkaccel_close(self->dev);
}

/* --- CTX_CREATE ---------------------------------------------------------- */

TEST_F(ctx, create_default)
{
	struct drm_rkaccel_ctx_create c = { .core_mask = 0,
					    .priority = DRM_RKACCEL_PRIORITY_NORMAL };

	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_RKACCEL_CTX_CREATE, &c));
	EXPECT_NE(0, c.handle);
	EXPECT_EQ(0, rkt_ctx_destroy(self->fd, c.handle));
}

TEST_F(ctx, create_each_core)
{
	for (unsigned int k = 0; k < self->q.num_cores; k++) {
		struct drm_rkaccel_ctx_query cq;
		uint32_t h = 0;

		ASSERT_EQ(0, rkt_ctx_create(self->fd, 1u << k, DRM_RKACCEL_PRIORITY_NORMAL, &h))
			TH_LOG("mask 0x%x", 1u << k);
		EXPECT_NE(0, h);
		ASSERT_EQ(0, rkt_ctx_query(self->fd, h, &cq));
		EXPECT_EQ(1u << k, cq.core_mask);
		EXPECT_EQ(0, rkt_ctx_destroy(self->fd, h));
	}
}

TEST_F(ctx, create_every_valid_mask)
{
	for (uint32_t mask = 0; mask <= self->q.core_mask; mask++) {
		struct drm_rkaccel_ctx_query cq;
		uint32_t h = 0;

		ASSERT_EQ(0, rkt_ctx_create(self->fd, mask, DRM_RKACCEL_PRIORITY_NORMAL, &h))
			TH_LOG("mask 0x%x", mask);
		ASSERT_EQ(0, rkt_ctx_query(self->fd, h, &cq));
		EXPECT_EQ(mask, cq.core_mask);
		EXPECT_EQ(0, rkt_ctx_destroy(self->fd, h));
	}
}

TEST_F(ctx, create_absent_core)
{
	uint32_t masks[] = {
		1u << self->q.num_cores,	/* bit 3 on RK3588, bit 2 on RK3576 */
		self->q.core_mask | (1u << self->q.num_cores),
		1u << 31, 0xffffffffu, 0xffffu,	/* rknn's CORE_ALL is not a mask here */
	};

	for (unsigned int i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
		struct drm_rkaccel_ctx_create c = { .core_mask = masks[i], .handle = CANARY32,
						    .priority = DRM_RKACCEL_PRIORITY_NORMAL };

		EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_RKACCEL_CTX_CREATE, &c))
			TH_LOG("mask 0x%x accepted", masks[i]);
		EXPECT_EQ(EINVAL, errno);
		EXPECT_EQ(CANARY32, c.handle);
	}
}

TEST_F(ctx, create_flags)
{
	for (unsigned int bit = 0; bit < 32; bit++) {
		struct drm_rkaccel_ctx_create c = { .flags = 1u << bit, .handle = CANARY32,
						    .priority = DRM_RKACCEL_PRIORITY_NORMAL };

		EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_RKACCEL_CTX_CREATE, &c))
			TH_LOG("flag bit %u accepted", bit);
		EXPECT_EQ(EINVAL, errno);
		EXPECT_EQ(CANARY32, c.handle);
	}
}

TEST_F(ctx, create_priorities)
{
	for (uint32_t prio = DRM_RKACCEL_PRIORITY_LOW; prio <= DRM_RKACCEL_PRIORITY_HIGH; prio++) {
		uint32_t h = 0;

		/* HIGH needs CAP_SYS_NICE: the guest runs the tests as root */
		EXPECT_EQ(0, rkt_ctx_create(self->fd, 0, prio, &h)) TH_LOG("priority %u", prio);
		EXPECT_NE(0, h);
		if (h) {
			EXPECT_EQ(0, rkt_ctx_destroy(self->fd, h));
		}
	}
}

TEST_F(ctx, create_bad_priority)
{
	static const uint32_t prios[] = { 3, 4, 16, 0x80000000u, 0xffffffffu };

	for (unsigned int i = 0; i < sizeof(prios) / sizeof(prios[0]); i++) {
		struct drm_rkaccel_ctx_create c = { .priority = prios[i], .handle = CANARY32 };

		EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_RKACCEL_CTX_CREATE, &c))
			TH_LOG("priority %u accepted", prios[i]);
		EXPECT_EQ(EINVAL, errno);
		EXPECT_EQ(CANARY32, c.handle);
	}
}

/* Drop CAP_SYS_NICE from the calling task's effective set. */
static int drop_sys_nice(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	data[CAP_TO_INDEX(CAP_SYS_NICE)].effective &= ~CAP_TO_MASK(CAP_SYS_NICE);
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	return 0;
}

TEST_F(ctx, create_high_without_cap_sys_nice)
{
	int status;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid) {
		uint32_t h = 0;
		int ret;

		if (drop_sys_nice())
			_exit(10);
		ret = rkt_ctx_create(self->fd, 0, DRM_RKACCEL_PRIORITY_HIGH, &h);
		if (ret != -EPERM && ret != -EACCES)
			_exit(11);
		if (rkt_ctx_create(self->fd, 0, DRM_RKACCEL_PRIORITY_NORMAL, &h))
			_exit(12);
		if (rkt_ctx_create(self->fd, 0, DRM_RKACCEL_PRIORITY_LOW, &h))
			_exit(13);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	if (WEXITSTATUS(status) == 10)
		SKIP(return, "cannot drop CAP_SYS_NICE");
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("step %d: 11 HIGH not refused, 12 NORMAL or 13 LOW refused",
		       WEXITSTATUS(status));
}

TEST_F(ctx, create_handles_unique)
{
	enum { N = 64 };
	uint32_t h[N];

	for (int i = 0; i < N; i++) {
		ASSERT_EQ(0, rkt_ctx_create(self->fd, i % (self->q.core_mask + 1),
					    DRM_RKACCEL_PRIORITY_NORMAL, &h[i]));
		EXPECT_NE(0, h[i]);
		for (int j = 0; j < i; j++) {
			EXPECT_NE(h[j], h[i]) TH_LOG("contexts %d and %d share handle %u",
						     j, i, h[i]);
		}
	}
	for (int i = 0; i < N; i++) {
		EXPECT_EQ(0, rkt_ctx_destroy(self->fd, h[i]));
	}
}

TEST_F(ctx, create_bad_pointer)
{
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_RKACCEL_CTX_CREATE, NULL));
	EXPECT_EQ(EFAULT, errno);
}

/* --- CTX_DESTROY --------------------------------------------------------- */

TEST_F(ctx, destroy_bad_handle)
{
	EXPECT_EQ(-ENOENT, rkt_ctx_destroy(self->fd, 0));
	EXPECT_EQ(-ENOENT, rkt_ctx_destroy(self->fd, 12345));
	EXPECT_EQ(-ENOENT, rkt_ctx_destroy(self->fd, UINT32_MAX));
}

TEST_F(ctx, destroy_pad)
{
	struct drm_rkaccel_ctx_query cq;
	uint32_t h;
	struct drm_rkaccel_ctx_destroy d = { .pad = 1 };

	ASSERT_EQ(0, rkt_ctx_create(self->fd, 0, DRM_RKACCEL_PRIORITY_NORMAL, &h));
	d.handle = h;
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_RKACCEL_CTX_DESTROY, &d));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, rkt_ctx_query(self->fd, h, &cq)) TH_LOG("rejected destroy destroyed");
	EXPECT_EQ(0, rkt_ctx_destroy(self->fd, h));
}

TEST_F(ctx, destroy_twice)
{
	uint32_t h;

	ASSERT_EQ(0, rkt_ctx_create(self->fd, 0, DRM_RKACCEL_PRIORITY_NORMAL, &h));
	EXPECT_EQ(0, rkt_ctx_destroy(self->fd, h));
	EXPECT_EQ(-ENOENT, rkt_ctx_destroy(self->fd, h));
}

TEST_F(ctx, destroy_only_that_one)
{
	struct drm_rkaccel_ctx_query cq;
	uint32_t a, b;

	ASSERT_EQ(0, rkt_ctx_create(self->fd, 0, DRM_RKACCEL_PRIORITY_NORMAL, &a));
	ASSERT_EQ(0, rkt_ctx_create(self->fd, 1, DRM_RKACCEL_PRIORITY_NORMAL, &b));
	EXPECT_EQ(0, rkt_ctx_destroy(self->fd, a));
	EXPECT_EQ(-ENOENT, rkt_ctx_query(self->fd, a, &cq));
	ASSERT_EQ(0, rkt_ctx_query(self->fd, b, &cq));
	EXPECT_EQ(1, cq.core_mask);
	EXPECT_EQ(0, rkt_ctx_destroy(self->fd, b));
}

TEST_F(ctx, handles_are_per_file)
{
	struct drm_rkaccel_ctx_query cq;
	uint32_t h;
	int fd2 = rkt_open_fd();

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, rkt_ctx_create(self->fd, 0, DRM_RKACCEL_PRIORITY_NORMAL, &h));
	EXPECT_EQ(-ENOENT, rkt_ctx_query(fd2, h, &cq)) TH_LOG("context visible in another file");
	EXPECT_EQ(-ENOENT, rkt_ctx_destroy(fd2, h));
	EXPECT_EQ(0, rkt_ctx_query(self->fd, h, &cq));
	EXPECT_EQ(0, rkt_ctx_destroy(self->fd, h));
	close(fd2);
}

TEST_F(ctx, close_file_with_contexts)
{
	/* contexts left behind go with their file; the device stays usable */
	for (int i = 0; i < 16; i++) {
		uint32_t h;
		int fd = rkt_open_fd();

		ASSERT_LE(0, fd);
		for (int j = 0; j < 8; j++) {
			ASSERT_EQ(0, rkt_ctx_create(fd, j % (self->q.core_mask + 1),
						    j % 3, &h));
		}
		close(fd);
	}
	{
		uint32_t h;

		EXPECT_EQ(0, rkt_ctx_create(self->fd, 0, DRM_RKACCEL_PRIORITY_NORMAL, &h));
	}
}

/* --- CTX_QUERY ----------------------------------------------------------- */

TEST_F(ctx, query_fresh)
{
	for (uint32_t mask = 0; mask <= self->q.core_mask; mask++) {
		struct drm_rkaccel_ctx_query cq;
		uint32_t h;

		ASSERT_EQ(0, rkt_ctx_create(self->fd, mask, DRM_RKACCEL_PRIORITY_NORMAL, &h));
		memset(&cq, 0xa5, sizeof(cq));
		cq.handle = h;
		cq.flags = 0;
		ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_RKACCEL_CTX_QUERY, &cq));
		EXPECT_EQ(h, cq.handle);
		EXPECT_EQ(DRM_RKACCEL_CTX_OK, cq.state);
		EXPECT_EQ(0, cq.reset_count);
		EXPECT_EQ(mask, cq.core_mask);
		EXPECT_EQ(0xffffffffu, cq.last_core);
		EXPECT_EQ(0, cq.jobs_submitted);
		EXPECT_EQ(0, cq.jobs_completed);
		EXPECT_EQ(0, cq.jobs_failed);
		EXPECT_EQ(0, rkt_ctx_destroy(self->fd, h));
	}
}

TEST_F(ctx, query_bad_handle)
{
	struct drm_rkaccel_ctx_query cq = { .handle = 4242, .state = CANARY32 };

	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_RKACCEL_CTX_QUERY, &cq));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(CANARY32, cq.state);
	cq.handle = 0;
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_RKACCEL_CTX_QUERY, &cq));
	EXPECT_EQ(ENOENT, errno);
}

TEST_F(ctx, query_flags)
{
	uint32_t h;

	ASSERT_EQ(0, rkt_ctx_create(self->fd, 0, DRM_RKACCEL_PRIORITY_NORMAL, &h));
	for (unsigned int bit = 0; bit < 32; bit++) {
		struct drm_rkaccel_ctx_query cq = { .handle = h, .flags = 1u << bit,
						    .state = CANARY32 };

		EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_RKACCEL_CTX_QUERY, &cq));
		EXPECT_EQ(EINVAL, errno) TH_LOG("flag bit %u", bit);
		EXPECT_EQ(CANARY32, cq.state);
	}
	EXPECT_EQ(0, rkt_ctx_destroy(self->fd, h));
}

TEST_F(ctx, query_destroyed)
{
	struct drm_rkaccel_ctx_query cq;
	uint32_t h;

	ASSERT_EQ(0, rkt_ctx_create(self->fd, 0, DRM_RKACCEL_PRIORITY_NORMAL, &h));
	ASSERT_EQ(0, rkt_ctx_destroy(self->fd, h));
	EXPECT_EQ(-ENOENT, rkt_ctx_query(self->fd, h, &cq));
}

TEST_F(ctx, query_bad_pointer)
{
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_RKACCEL_CTX_QUERY, NULL));
	EXPECT_EQ(EFAULT, errno);
}

TEST_F(ctx, debugfs_contexts_count)
{
	long before, during, after;
	uint32_t h[10];

	if (rkt_debugfs_count("contexts", &before))
		SKIP(return, "no context count in debugfs");
	for (int i = 0; i < 10; i++) {
		ASSERT_EQ(0, rkt_ctx_create(self->fd, 0, DRM_RKACCEL_PRIORITY_NORMAL, &h[i]));
	}
	ASSERT_EQ(0, rkt_debugfs_count("contexts", &during));
	EXPECT_EQ(before + 10, during);
	for (int i = 0; i < 10; i++) {
		EXPECT_EQ(0, rkt_ctx_destroy(self->fd, h[i]));
	}
	ASSERT_EQ(0, rkt_debugfs_count("contexts", &after));
	EXPECT_EQ(before, after);
}

TEST_HARNESS_MAIN
