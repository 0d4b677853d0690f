// SPDX-License-Identifier: GPL-2.0-only
/*
 * DRM_IOCTL_RKACCEL_SUBMIT: validation of every argument with otherwise
 * valid input, valid jobs and their counters, BO_WAIT on busy BOs, core
 * masks, parallel execution over the cores, closing with jobs in flight.
 */

#include <sys/wait.h>

#include "kselftest_harness.h"
#include "rkaccel_test.h"
#include "regcmd.h"

#define REGCMD_BO_SIZE	(1u << 20)
#define FILLER		6

FIXTURE(sub) {
	struct rkaccel_device *dev;
	int fd;
	struct drm_rkaccel_query q;
	uint32_t ctx;
	struct rkt_bo cmd;		/* regcmd BO */
	struct rkt_chain chain;		/* a short valid chain at offset 0 */
	struct drm_rkaccel_task task;	/* its PC start */
	struct drm_rkaccel_submit_bo bo;	/* the regcmd BO as a job BO */
	uint32_t out;			/* binary syncobj */
	uint64_t sim_ns;		/* sim_task_ns to restore, UINT64_MAX if untouched */
};

FIXTURE_SETUP(sub)
{
	ASSERT_EQ(0, rkaccel_open(NULL, &self->dev)) TH_LOG("no rkaccel device node");
	self->fd = rkaccel_fd(self->dev);
	ASSERT_EQ(0, rkt_query(self->fd, &self->q));
	ASSERT_EQ(0, rkt_ctx_create(self->fd, 0, DRM_RKACCEL_PRIORITY_NORMAL, &self->ctx));
	ASSERT_EQ(0, rkt_bo_new(self->fd, REGCMD_BO_SIZE, 0, &self->cmd));
	ASSERT_EQ(0, rkt_chain_build(self->cmd.map, self->cmd.npu_addr, REGCMD_BO_SIZE, 0, 3,
				     FILLER, 0, &self->chain));
	self->task = rkt_chain_task(&self->chain);
	self->bo.handle = self->cmd.handle;
	self->bo.flags = 0;
	ASSERT_EQ(0, rkt_syncobj_create(self->fd, &self->out));
	self->sim_ns = UINT64_MAX;
}

FIXTURE_TEARDOWN(sub)
{
	if (self->sim_ns != UINT64_MAX)
		rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, self->sim_ns);
	rkaccel_close(self->dev);
}

/* Change sim_task_ns for this test; the teardown restores it. */
static int set_sim_task_ns(FIXTURE_DATA(sub) *self, uint64_t ns)
{
	uint64_t old;
	int ret;

	if (self->sim_ns == UINT64_MAX) {
		ret = rkt_param_read_u64(RKT_SIM_TASK_NS_PATH, &old);
		if (ret)
			return ret;
		self->sim_ns = old;
	}
	return rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, ns);
}

/* The submit of the fixture's valid job, for tests to break one field. */
static void valid_args(FIXTURE_DATA(sub) *self, struct drm_rkaccel_submit *s)
{
	rkt_submit_init(s, self->ctx, &self->task, 1, &self->bo, 1, NULL, 0, self->out, 0);
}

/*
 * A rejected submit must have had no effect: nothing counted on the context
 * and no fence in the out syncobj.
 */
#define EXPECT_NO_JOB(self) do {						\
	struct drm_rkaccel_ctx_query __cq;					\
	EXPECT_EQ(0, rkt_ctx_query((self)->fd, (self)->ctx, &__cq));		\
	EXPECT_EQ(0, __cq.jobs_submitted) TH_LOG("rejected job counted");	\
	EXPECT_EQ(-EINVAL, rkt_syncobj_poll((self)->fd, (self)->out))		\
		TH_LOG("rejected job left a fence");				\
} while (0)

#define EXPECT_SUBMIT_ERR(self, s, err) do {					\
	EXPECT_EQ(-(err), rkt_submit_args((self)->fd, (s)));			\
	EXPECT_NO_JOB(self);							\
} while (0)

/* Wait for @syncobj and demand a clean signal. */
static int wait_ok(int fd, uint32_t syncobj, uint64_t ms)
{
	int ret = rkt_syncobj_wait(fd, syncobj, rkt_deadline_ms(ms)), status = 0;

	if (ret)
		return ret;
	ret = rkt_syncobj_status(fd, syncobj, &status);
	if (ret)
		return ret;
	return status == 1 ? 0 : (status < 0 ? status : -EBUSY);
}

/* --- the valid job ------------------------------------------------------- */

TEST_F(sub, valid_job)
{
	struct drm_rkaccel_ctx_query cq;
	struct drm_rkaccel_submit s;

	valid_args(self, &s);
	ASSERT_EQ(0, rkt_submit_args(self->fd, &s));
	ASSERT_EQ(0, wait_ok(self->fd, self->out, 5000));
	ASSERT_EQ(0, rkt_ctx_query(self->fd, self->ctx, &cq));
	EXPECT_EQ(DRM_RKACCEL_CTX_OK, cq.state);
	EXPECT_EQ(1, cq.jobs_submitted);
	EXPECT_EQ(1, cq.jobs_completed);
	EXPECT_EQ(0, cq.jobs_failed);
	EXPECT_LT(cq.last_core, self->q.num_cores);
	EXPECT_EQ(0, cq.reset_count);
}

TEST_F(sub, valid_job_without_out_sync)
{
	struct drm_rkaccel_ctx_query cq;
	uint64_t end = rkt_now_ns() + 5 * RKT_NSEC_PER_SEC;

	ASSERT_EQ(0, rkt_submit(self->fd, self->ctx, &self->task, 1, &self->bo, 1, NULL, 0,
				0, 0));
	do {
		ASSERT_EQ(0, rkt_ctx_query(self->fd, self->ctx, &cq));
		if (cq.jobs_completed + cq.jobs_failed == 1)
			break;
		usleep(1000);
	} while (rkt_now_ns() < end);
	EXPECT_EQ(1, cq.jobs_submitted);
	EXPECT_EQ(1, cq.jobs_completed);
}

TEST_F(sub, single_task_job)
{
	struct rkt_chain c;
	struct drm_rkaccel_task t;

	ASSERT_EQ(0, rkt_chain_build(self->cmd.map, self->cmd.npu_addr, REGCMD_BO_SIZE, 4096,
				     1, 0, 0, &c));
	t = rkt_chain_task(&c);
	ASSERT_EQ(0, rkt_submit(self->fd, self->ctx, &t, 1, &self->bo, 1, NULL, 0,
				self->out, 0));
	EXPECT_EQ(0, wait_ok(self->fd, self->out, 5000));
}

TEST_F(sub, multiple_pc_starts)
{
	/* one job, several PC starts, each its own chain, in two BOs */
	struct drm_rkaccel_task t[4];
	struct drm_rkaccel_submit_bo bos[2];
	struct drm_rkaccel_ctx_query cq;
	struct rkt_chain c;
	struct rkt_bo b2;

	ASSERT_EQ(0, rkt_bo_new(self->fd, 64 * 1024, 0, &b2));
	for (int i = 0; i < 3; i++) {
		ASSERT_EQ(0, rkt_chain_build(self->cmd.map, self->cmd.npu_addr, REGCMD_BO_SIZE,
					     8192 * (i + 1), 2 + i, FILLER, 0, &c));
		t[i] = rkt_chain_task(&c);
	}
	ASSERT_EQ(0, rkt_chain_build(b2.map, b2.npu_addr, 64 * 1024, 0, 5, 2, 0, &c));
	t[3] = rkt_chain_task(&c);
	bos[0] = self->bo;
	bos[1].handle = b2.handle;
	bos[1].flags = DRM_RKACCEL_SUBMIT_BO_WRITE;
	ASSERT_EQ(0, rkt_submit(self->fd, self->ctx, t, 4, bos, 2, NULL, 0, self->out, 0));
	EXPECT_EQ(0, wait_ok(self->fd, self->out, 5000));
	ASSERT_EQ(0, rkt_ctx_query(self->fd, self->ctx, &cq));
	EXPECT_EQ(1, cq.jobs_completed) TH_LOG("PC starts counted as jobs?");
	EXPECT_EQ(0, cq.jobs_failed);
	rkt_bo_free(self->fd, &b2);
}

TEST_F(sub, max_tasks_chain)
{
	/* one PC start running the SoC's whole task limit */
	uint32_t n = self->q.max_tasks > 4095 ? 4095 : self->q.max_tasks;
	size_t bytes = rkt_chain_bytes(n, 2);
	struct drm_rkaccel_task t;
	struct drm_rkaccel_submit_bo b;
	struct rkt_chain c;
	struct rkt_bo big;

	ASSERT_EQ(0, rkt_bo_new(self->fd, bytes, 0, &big));
	ASSERT_EQ(0, rkt_chain_build(big.map, big.npu_addr, big.map_len, 0, n, 2, 0, &c));
	t = rkt_chain_task(&c);
	b.handle = big.handle;
	b.flags = 0;
	ASSERT_EQ(0, rkt_submit(self->fd, self->ctx, &t, 1, &b, 1, NULL, 0, self->out, 0));
	EXPECT_EQ(0, wait_ok(self->fd, self->out, 10000));
	rkt_bo_free(self->fd, &big);
}

TEST_F(sub, sealed_weight_in_job)
{
	struct drm_rkaccel_submit_bo bos[2];
	struct rkt_bo w;

	ASSERT_EQ(0, rkt_bo_create(self->fd, 8192, DRM_RKACCEL_BO_WEIGHT, &w));
	ASSERT_EQ(0, rkt_bo_seal(self->fd, w.handle));
	bos[0] = self->bo;
	bos[1].handle = w.handle;
	bos[1].flags = 0;
	ASSERT_EQ(0, rkt_submit(self->fd, self->ctx, &self->task, 1, bos, 2, NULL, 0,
				self->out, 0));
	EXPECT_EQ(0, wait_ok(self->fd, self->out, 5000));
	rkt_bo_free(self->fd, &w);
}

TEST_F(sub, counters_after_jobs)
{
	struct drm_rkaccel_ctx_query cq;
	uint32_t tl;

	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &tl));
	for (uint64_t i = 1; i <= 10; i++) {
		ASSERT_EQ(0, rkt_submit(self->fd, self->ctx, &self->task, 1, &self->bo, 1,
					NULL, 0, tl, i));
	}
	{
		uint64_t point = 10;

		ASSERT_EQ(0, drmSyncobjTimelineWait(self->fd, &tl, &point, 1,
						    rkt_deadline_ms(5000), 0, NULL));
	}
	ASSERT_EQ(0, rkt_ctx_query(self->fd, self->ctx, &cq));
	EXPECT_EQ(10, cq.jobs_submitted);
	EXPECT_EQ(10, cq.jobs_completed);
	EXPECT_EQ(0, cq.jobs_failed);
	drmSyncobjDestroy(self->fd, tl);
}

TEST_F(sub, fdinfo_engine_time)
{
	struct drm_rkaccel_ctx_query cq;
	char key[32];
	uint64_t before = 0, after = 0;

	ASSERT_EQ(0, set_sim_task_ns(self, 100000));
	ASSERT_EQ(0, rkt_ctx_destroy(self->fd, self->ctx));
	ASSERT_EQ(0, rkt_ctx_create(self->fd, 1, DRM_RKACCEL_PRIORITY_NORMAL, &self->ctx));
	ASSERT_EQ(0, rkt_fdinfo_u64(self->fd, "drm-engine-core0", &before));
	ASSERT_EQ(0, rkt_chain_build(self->cmd.map, self->cmd.npu_addr, REGCMD_BO_SIZE, 0,
				     100, 2, 0, &self->chain));
	self->task = rkt_chain_task(&self->chain);
	ASSERT_EQ(0, rkt_submit(self->fd, self->ctx, &self->task, 1, &self->bo, 1, NULL, 0,
				self->out, 0));
	ASSERT_EQ(0, wait_ok(self->fd, self->out, 5000));
	ASSERT_EQ(0, rkt_ctx_query(self->fd, self->ctx, &cq));
	ASSERT_EQ(0, cq.last_core);
	snprintf(key, sizeof(key), "drm-engine-core%u", cq.last_core);
	ASSERT_EQ(0, rkt_fdinfo_u64(self->fd, key, &after));
	/* 100 tasks of 100 us: at least 10 ms of core time */
	EXPECT_LE(before + 10 * RKT_NSEC_PER_MSEC, after)
		TH_LOG("core0 busy %llu -> %llu ns", (unsigned long long)before,
		       (unsigned long long)after);
}

/* --- validation ---------------------------------------------------------- */

TEST_F(sub, bad_ctx)
{
	struct drm_rkaccel_submit s;

	valid_args(self, &s);
	s.ctx = self->ctx + 1000;
	EXPECT_EQ(-ENOENT, rkt_submit_args(self->fd, &s));
	s.ctx = 0;
	EXPECT_EQ(-ENOENT, rkt_submit_args(self->fd, &s));
	EXPECT_NO_JOB(self);
}

TEST_F(sub, destroyed_ctx)
{
	struct drm_rkaccel_submit s;
	uint32_t h;

	ASSERT_EQ(0, rkt_ctx_create(self->fd, 0, DRM_RKACCEL_PRIORITY_NORMAL, &h));
	ASSERT_EQ(0, rkt_ctx_destroy(self->fd, h));
	valid_args(self, &s);
	s.ctx = h;
	EXPECT_EQ(-ENOENT, rkt_submit_args(self->fd, &s));
}

TEST_F(sub, ctx_of_other_file)
{
	struct drm_rkaccel_submit s;
	uint32_t h;
	int fd2 = rkt_open_fd();

	ASSERT_LE(0, fd2);
	/* a context handle that does not exist in this file, only in fd2 */
	for (int i = 0; i < 4; i++) {
		ASSERT_EQ(0, rkt_ctx_create(fd2, 0, DRM_RKACCEL_PRIORITY_NORMAL, &h));
	}
	valid_args(self, &s);
	s.ctx = h;
	EXPECT_EQ(-ENOENT, rkt_submit_args(self->fd, &s));
	close(fd2);
}

TEST_F(sub, flags)
{
	for (unsigned int bit = 0; bit < 32; bit++) {
		struct drm_rkaccel_submit s;

		valid_args(self, &s);
		s.flags = 1u << bit;
		EXPECT_EQ(-EINVAL, rkt_submit_args(self->fd, &s)) TH_LOG("flag bit %u", bit);
	}
	EXPECT_NO_JOB(self);
}

TEST_F(sub, pad)
{
	struct drm_rkaccel_submit s;

	valid_args(self, &s);
	s.pad = 1;
	EXPECT_SUBMIT_ERR(self, &s, EINVAL);
}

TEST_F(sub, task_count_zero)
{
	struct drm_rkaccel_submit s;

	valid_args(self, &s);
	s.task_count = 0;
	EXPECT_SUBMIT_ERR(self, &s, EINVAL);
}

TEST_F(sub, task_count_too_big)
{
	struct drm_rkaccel_task t[DRM_RKACCEL_MAX_JOB_TASKS + 1];
	struct drm_rkaccel_submit s;

	for (int i = 0; i <= DRM_RKACCEL_MAX_JOB_TASKS; i++) {
		t[i] = self->task;
		t[i].task_count = 1;
	}
	valid_args(self, &s);
	s.tasks = (uintptr_t)t;
	s.task_count = DRM_RKACCEL_MAX_JOB_TASKS + 1;
	EXPECT_SUBMIT_ERR(self, &s, EINVAL);
	s.task_count = UINT32_MAX;
	EXPECT_SUBMIT_ERR(self, &s, EINVAL);
}

TEST_F(sub, task_count_max_ok)
{
	/* DRM_RKACCEL_MAX_JOB_TASKS PC starts of one task each are fine */
	struct drm_rkaccel_task t[DRM_RKACCEL_MAX_JOB_TASKS];
	struct rkt_chain c;

	ASSERT_EQ(0, rkt_chain_build(self->cmd.map, self->cmd.npu_addr, REGCMD_BO_SIZE, 8192,
				     1, 2, 0, &c));
	for (int i = 0; i < DRM_RKACCEL_MAX_JOB_TASKS; i++)
		t[i] = rkt_chain_task(&c);
	ASSERT_EQ(0, rkt_submit(self->fd, self->ctx, t, DRM_RKACCEL_MAX_JOB_TASKS, &self->bo,
				1, NULL, 0, self->out, 0));
	EXPECT_EQ(0, wait_ok(self->fd, self->out, 10000));
}

TEST_F(sub, task_stride)
{
	static const uint32_t strides[] = { 0, 8, DRM_RKACCEL_TASK_SIZE_V1 - 1,
					    sizeof(struct drm_rkaccel_task) + 8, 4096 };
	struct drm_rkaccel_task t[2] = { self->task, self->task };

	for (unsigned int i = 0; i < sizeof(strides) / sizeof(strides[0]); i++) {
		struct drm_rkaccel_submit s;

		valid_args(self, &s);
		s.tasks = (uintptr_t)t;
		s.task_stride = strides[i];
		EXPECT_EQ(-EINVAL, rkt_submit_args(self->fd, &s)) TH_LOG("stride %u", strides[i]);
	}
	EXPECT_NO_JOB(self);
}

/* Unknown task flags and non-zero padding are refused, each on its own. */
TEST_F(sub, task_flags_and_pad)
{
	struct drm_rkaccel_task t[2] = { self->task, self->task };
	struct drm_rkaccel_submit s;

	valid_args(self, &s);
	s.tasks = (uintptr_t)t;
	s.task_count = 2;
	/* every bit but the defined one (its job is run by pool tests) */
	for (unsigned int bit = 0; bit < 32; bit++) {
		if ((1u << bit) == DRM_RKACCEL_TASK_ENDS_PPU)
			continue;
		t[1].flags = 1u << bit;
		EXPECT_EQ(-EINVAL, rkt_submit_args(self->fd, &s)) TH_LOG("flag bit %u", bit);
	}
	t[1].flags = 0;
	t[1].pad = 1;
	EXPECT_EQ(-EINVAL, rkt_submit_args(self->fd, &s));
	t[1].pad = 0x80000000u;
	EXPECT_EQ(-EINVAL, rkt_submit_args(self->fd, &s));
	EXPECT_NO_JOB(self);
	t[1].pad = 0;
	ASSERT_EQ(0, rkt_submit_args(self->fd, &s));
	EXPECT_EQ(0, wait_ok(self->fd, self->out, 5000));
}

/* Older userspace: tasks of the first version, 16 bytes without flags, run. */
TEST_F(sub, first_version_task_stride)
{
	struct { uint64_t addr; uint32_t count, tasks; } v1[2] = {
		{ self->task.regcmd_addr, self->task.regcmd_count, self->task.task_count },
		{ self->task.regcmd_addr, self->task.regcmd_count, self->task.task_count },
	};
	struct drm_rkaccel_ctx_query cq;
	struct drm_rkaccel_submit s;

	ASSERT_EQ(DRM_RKACCEL_TASK_SIZE_V1, sizeof(v1[0]));
	valid_args(self, &s);
	s.tasks = (uintptr_t)v1;
	s.task_count = 2;
	s.task_stride = sizeof(v1[0]);
	ASSERT_EQ(0, rkt_submit_args(self->fd, &s));
	EXPECT_EQ(0, wait_ok(self->fd, self->out, 5000));
	ASSERT_EQ(0, rkt_ctx_query(self->fd, self->ctx, &cq));
	EXPECT_EQ(1, cq.jobs_completed);
	/* the second task is read 16 bytes on: a bad one there is seen */
	v1[1].count = 0;
	EXPECT_EQ(-EINVAL, rkt_submit_args(self->fd, &s));
}

/* Newer userspace: longer elements whose tail past today's struct is zero. */
TEST_F(sub, larger_strides_with_zero_tail)
{
	struct { struct drm_rkaccel_task t; uint8_t tail[16]; } tasks[2];
	struct { struct drm_rkaccel_submit_bo b; uint8_t tail[8]; } bos[1];
	struct { struct drm_rkaccel_sync y; uint8_t tail[24]; } in[1];
	struct drm_rkaccel_submit s;
	uint32_t so;

	ASSERT_EQ(0, drmSyncobjCreate(self->fd, DRM_SYNCOBJ_CREATE_SIGNALED, &so));
	memset(tasks, 0, sizeof(tasks));
	memset(bos, 0, sizeof(bos));
	memset(in, 0, sizeof(in));
	tasks[0].t = self->task;
	tasks[1].t = self->task;
	bos[0].b = self->bo;
	in[0].y.handle = so;
	rkt_submit_init(&s, self->ctx, &tasks[0].t, 2, &bos[0].b, 1, &in[0].y, 1, self->out, 0);
	s.task_stride = sizeof(tasks[0]);
	s.bo_stride = sizeof(bos[0]);
	s.sync_stride = sizeof(in[0]);
	ASSERT_EQ(0, rkt_submit_args(self->fd, &s));
	EXPECT_EQ(0, wait_ok(self->fd, self->out, 5000));

	/* one non-zero byte past the struct in the last element is refused */
	tasks[1].tail[15] = 1;
	EXPECT_EQ(-EINVAL, rkt_submit_args(self->fd, &s));
	tasks[1].tail[15] = 0;
	bos[0].tail[0] = 1;
	EXPECT_EQ(-EINVAL, rkt_submit_args(self->fd, &s));
	bos[0].tail[0] = 0;
	in[0].tail[23] = 1;
	EXPECT_EQ(-EINVAL, rkt_submit_args(self->fd, &s));
	drmSyncobjDestroy(self->fd, so);
}

TEST_F(sub, bo_count_zero)
{
	struct drm_rkaccel_submit s;

	valid_args(self, &s);
	s.bo_count = 0;
	EXPECT_SUBMIT_ERR(self, &s, EINVAL);
}

TEST_F(sub, bo_count_too_big)
{
	enum { N = DRM_RKACCEL_MAX_JOB_BOS + 1 };
	struct drm_rkaccel_submit_bo bos[N];
	struct rkt_bo extra[N];
	struct drm_rkaccel_submit s;

	/* N distinct valid BOs, so only the count is wrong */
	bos[0] = self->bo;
	for (int i = 1; i < N; i++) {
		ASSERT_EQ(0, rkt_bo_create(self->fd, 4096, 0, &extra[i]));
		bos[i].handle = extra[i].handle;
		bos[i].flags = 0;
	}
	valid_args(self, &s);
	s.bos = (uintptr_t)bos;
	s.bo_count = N;
	EXPECT_SUBMIT_ERR(self, &s, EINVAL);
	s.bo_count = UINT32_MAX;
	EXPECT_SUBMIT_ERR(self, &s, EINVAL);
	/* and the limit itself is accepted */
	s.bo_count = N - 1;
	EXPECT_EQ(0, rkt_submit_args(self->fd, &s));
	EXPECT_EQ(0, wait_ok(self->fd, self->out, 5000));
	for (int i = 1; i < N; i++)
		rkt_gem_close(self->fd, extra[i].handle);
}

TEST_F(sub, bo_stride)
{
	static const uint32_t strides[] = { 0, 4, sizeof(struct drm_rkaccel_submit_bo) + 8, 16 };
	struct drm_rkaccel_submit_bo bos[4] = { self->bo, self->bo, self->bo, self->bo };

	for (unsigned int i = 0; i < sizeof(strides) / sizeof(strides[0]); i++) {
		struct drm_rkaccel_submit s;

		valid_args(self, &s);
		s.bos = (uintptr_t)bos;
		s.bo_stride = strides[i];
		EXPECT_EQ(-EINVAL, rkt_submit_args(self->fd, &s)) TH_LOG("stride %u", strides[i]);
	}
	EXPECT_NO_JOB(self);
}

TEST_F(sub, bad_bo_handle)
{
	struct drm_rkaccel_submit_bo bos[2] = { self->bo, { .handle = 0xdead } };
	struct drm_rkaccel_submit s;

	valid_args(self, &s);
	s.bos = (uintptr_t)bos;
	s.bo_count = 2;
	EXPECT_SUBMIT_ERR(self, &s, ENOENT);
	bos[1].handle = 0;
	EXPECT_SUBMIT_ERR(self, &s, ENOENT);
}

TEST_F(sub, closed_bo_handle)
{
	struct drm_rkaccel_submit_bo bos[2] = { self->bo };
	struct drm_rkaccel_submit s;
	struct rkt_bo b;

	ASSERT_EQ(0, rkt_bo_create(self->fd, 4096, 0, &b));
	bos[1].handle = b.handle;
	ASSERT_EQ(0, rkt_gem_close(self->fd, b.handle));
	valid_args(self, &s);
	s.bos = (uintptr_t)bos;
	s.bo_count = 2;
	EXPECT_SUBMIT_ERR(self, &s, ENOENT);
}

TEST_F(sub, bo_flags)
{
	for (unsigned int bit = 0; bit < 32; bit++) {
		struct drm_rkaccel_submit_bo b = { .handle = self->cmd.handle, .flags = 1u << bit };
		struct drm_rkaccel_submit s;

		if (b.flags == DRM_RKACCEL_SUBMIT_BO_WRITE)
			continue;
		valid_args(self, &s);
		s.bos = (uintptr_t)&b;
		EXPECT_EQ(-EINVAL, rkt_submit_args(self->fd, &s)) TH_LOG("bo flag bit %u", bit);
	}
	EXPECT_NO_JOB(self);
}

TEST_F(sub, bo_listed_twice)
{
	struct drm_rkaccel_submit_bo bos[2] = { self->bo, self->bo };
	struct drm_rkaccel_submit s;

	valid_args(self, &s);
	s.bos = (uintptr_t)bos;
	s.bo_count = 2;
	EXPECT_SUBMIT_ERR(self, &s, EINVAL);
}

TEST_F(sub, unsealed_weight)
{
	struct drm_rkaccel_submit_bo bos[2] = { self->bo };
	struct drm_rkaccel_submit s;
	struct rkt_bo w;

	ASSERT_EQ(0, rkt_bo_create(self->fd, 4096, DRM_RKACCEL_BO_WEIGHT, &w));
	bos[1].handle = w.handle;
	valid_args(self, &s);
	s.bos = (uintptr_t)bos;
	s.bo_count = 2;
	EXPECT_SUBMIT_ERR(self, &s, EINVAL);
	rkt_bo_free(self->fd, &w);
}

/* A page no one may read: for EFAULT tests. */
static void *noaccess_page(void)
{
	return mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

TEST_F(sub, tasks_bad_pointer)
{
	struct drm_rkaccel_submit s;
	void *page = noaccess_page();

	ASSERT_NE(MAP_FAILED, page);
	valid_args(self, &s);
	s.tasks = (uintptr_t)page;
	EXPECT_SUBMIT_ERR(self, &s, EFAULT);
	s.tasks = 0;
	EXPECT_SUBMIT_ERR(self, &s, EFAULT);
	s.tasks = 0xffffffffffff0000ull;
	EXPECT_SUBMIT_ERR(self, &s, EFAULT);
	munmap(page, 4096);
}

TEST_F(sub, tasks_partly_bad_pointer)
{
	/* the first task readable, the second on a PROT_NONE page */
	char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct drm_rkaccel_task *t;
	struct drm_rkaccel_submit s;

	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, mprotect(p + 4096, 4096, PROT_NONE));
	t = (struct drm_rkaccel_task *)(p + 4096) - 1;
	*t = self->task;
	valid_args(self, &s);
	s.tasks = (uintptr_t)t;
	s.task_count = 2;
	EXPECT_SUBMIT_ERR(self, &s, EFAULT);
	munmap(p, 8192);
}

TEST_F(sub, bos_bad_pointer)
{
	struct drm_rkaccel_submit s;
	void *page = noaccess_page();

	ASSERT_NE(MAP_FAILED, page);
	valid_args(self, &s);
	s.bos = (uintptr_t)page;
	EXPECT_SUBMIT_ERR(self, &s, EFAULT);
	s.bos = 0;
	EXPECT_SUBMIT_ERR(self, &s, EFAULT);
	munmap(page, 4096);
}

TEST_F(sub, in_syncs_bad_pointer)
{
	struct drm_rkaccel_submit s;
	void *page = noaccess_page();

	ASSERT_NE(MAP_FAILED, page);
	valid_args(self, &s);
	s.in_syncs = (uintptr_t)page;
	s.in_sync_count = 1;
	s.sync_stride = sizeof(struct drm_rkaccel_sync);
	EXPECT_SUBMIT_ERR(self, &s, EFAULT);
	s.in_syncs = 0;
	EXPECT_SUBMIT_ERR(self, &s, EFAULT);
	munmap(page, 4096);
}

TEST_F(sub, args_bad_pointer)
{
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_RKACCEL_SUBMIT, NULL));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_NO_JOB(self);
}

TEST_F(sub, regcmd_unaligned)
{
	static const uint64_t deltas[] = { 1, 4, 8, 12, 15 };

	for (unsigned int i = 0; i < sizeof(deltas) / sizeof(deltas[0]); i++) {
		struct drm_rkaccel_task t = self->task;
		struct drm_rkaccel_submit s;

		t.regcmd_addr += 64 + deltas[i];
		valid_args(self, &s);
		s.tasks = (uintptr_t)&t;
		EXPECT_EQ(-EINVAL, rkt_submit_args(self->fd, &s))
			TH_LOG("regcmd_addr +%llu", (unsigned long long)deltas[i]);
	}
	EXPECT_NO_JOB(self);
}

TEST_F(sub, regcmd_aligned_16_ok)
{
	/* 16-byte alignment is enough */
	struct rkt_chain c;
	struct drm_rkaccel_task t;
	uint64_t *src, *dst;

	ASSERT_EQ(0, rkt_chain_build(self->cmd.map, self->cmd.npu_addr, REGCMD_BO_SIZE, 8192,
				     1, 2, 0, &c));
	/* move the single task 16 bytes up */
	src = (uint64_t *)((char *)self->cmd.map + 8192);
	dst = (uint64_t *)((char *)self->cmd.map + 8192 + 16);
	memmove(dst, src, c.entries * 8);
	t = rkt_chain_task(&c);
	t.regcmd_addr += 16;
	ASSERT_EQ(0, rkt_submit(self->fd, self->ctx, &t, 1, &self->bo, 1, NULL, 0,
				self->out, 0));
	EXPECT_EQ(0, wait_ok(self->fd, self->out, 5000));
}

TEST_F(sub, regcmd_count_zero)
{
	struct drm_rkaccel_task t = self->task;
	struct drm_rkaccel_submit s;

	t.regcmd_count = 0;
	valid_args(self, &s);
	s.tasks = (uintptr_t)&t;
	EXPECT_SUBMIT_ERR(self, &s, EINVAL);
}

TEST_F(sub, hw_task_count_zero)
{
	struct drm_rkaccel_task t = self->task;
	struct drm_rkaccel_submit s;

	t.task_count = 0;
	valid_args(self, &s);
	s.tasks = (uintptr_t)&t;
	EXPECT_SUBMIT_ERR(self, &s, EINVAL);
}

TEST_F(sub, zero_task_among_valid)
{
	struct drm_rkaccel_task t[3] = { self->task, self->task, self->task };
	struct drm_rkaccel_submit s;

	t[2].task_count = 0;
	valid_args(self, &s);
	s.tasks = (uintptr_t)t;
	s.task_count = 3;
	EXPECT_SUBMIT_ERR(self, &s, EINVAL);
}

TEST_F(sub, regcmd_past_bo_end)
{
	struct drm_rkaccel_task t = self->task;
	struct drm_rkaccel_submit s;

	/* starts inside the BO, last entries beyond its end */
	t.regcmd_addr = self->cmd.npu_addr + REGCMD_BO_SIZE - 64;
	t.regcmd_count = 16;
	valid_args(self, &s);
	s.tasks = (uintptr_t)&t;
	EXPECT_SUBMIT_ERR(self, &s, EINVAL);
	/* starts at the end */
	t.regcmd_addr = self->cmd.npu_addr + REGCMD_BO_SIZE;
	t.regcmd_count = 2;
	EXPECT_SUBMIT_ERR(self, &s, EINVAL);
	/* huge count wrapping the range */
	t.regcmd_addr = self->cmd.npu_addr;
	t.regcmd_count = UINT32_MAX;
	EXPECT_SUBMIT_ERR(self, &s, EINVAL);
}

TEST_F(sub, regcmd_at_bo_end_ok)
{
	/* the last 64 bytes of the BO hold a whole task */
	struct rkt_chain c;
	struct drm_rkaccel_task t;

	ASSERT_EQ(0, rkt_chain_build(self->cmd.map, self->cmd.npu_addr, REGCMD_BO_SIZE,
				     REGCMD_BO_SIZE - 64, 1, 4, 0, &c));
	ASSERT_EQ(8, c.entries);
	t = rkt_chain_task(&c);
	ASSERT_EQ(0, rkt_submit(self->fd, self->ctx, &t, 1, &self->bo, 1, NULL, 0,
				self->out, 0));
	EXPECT_EQ(0, wait_ok(self->fd, self->out, 5000));
}

TEST_F(sub, regcmd_before_bo)
{
	struct drm_rkaccel_task t = self->task;
	struct drm_rkaccel_submit s;

	t.regcmd_addr = self->cmd.npu_addr - 4096;
	valid_args(self, &s);
	s.tasks = (uintptr_t)&t;
	EXPECT_SUBMIT_ERR(self, &s, EINVAL);
}

TEST_F(sub, regcmd_in_unlisted_bo)
{
	/* a BO of this file holding the chain, but not listed in the job */
	struct drm_rkaccel_submit_bo other;
	struct drm_rkaccel_submit s;
	struct rkt_chain c;
	struct drm_rkaccel_task t;
	struct rkt_bo b;

	ASSERT_EQ(0, rkt_bo_new(self->fd, 8192, 0, &b));
	ASSERT_EQ(0, rkt_chain_build(b.map, b.npu_addr, 8192, 0, 1, 2, 0, &c));
	t = rkt_chain_task(&c);
	other = self->bo;	/* listed: the fixture's regcmd BO only */
	valid_args(self, &s);
	s.tasks = (uintptr_t)&t;
	s.bos = (uintptr_t)&other;
	EXPECT_SUBMIT_ERR(self, &s, EINVAL);
	rkt_bo_free(self->fd, &b);
}

TEST_F(sub, regcmd_unmapped_address)
{
	struct drm_rkaccel_task t = self->task;
	struct drm_rkaccel_submit s;

	valid_args(self, &s);
	s.tasks = (uintptr_t)&t;
	t.regcmd_addr = 0;
	EXPECT_SUBMIT_ERR(self, &s, EINVAL);
	t.regcmd_addr = 0xfff00000;
	EXPECT_SUBMIT_ERR(self, &s, EINVAL);
	t.regcmd_addr = 1ull << 32;
	EXPECT_SUBMIT_ERR(self, &s, EINVAL);
	t.regcmd_addr = (1ull << 32) + self->cmd.npu_addr;	/* aliases mod 2^32 */
	EXPECT_SUBMIT_ERR(self, &s, EINVAL);
}

TEST_F(sub, regcmd_spans_two_bos)
{
	/* two BOs adjacent in NPU space, both listed: still not inside one */
	struct drm_rkaccel_submit_bo bos[2];
	struct drm_rkaccel_task t;
	struct drm_rkaccel_submit s;
	struct rkt_bo a, b;
	int fd = rkt_open_fd();	/* a fresh address space */
	uint32_t ctx, out;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, rkt_ctx_create(fd, 0, DRM_RKACCEL_PRIORITY_NORMAL, &ctx));
	ASSERT_EQ(0, rkt_syncobj_create(fd, &out));
	ASSERT_EQ(0, rkt_bo_create(fd, 4096, 0, &a));
	ASSERT_EQ(0, rkt_bo_create(fd, 4096, 0, &b));
	if (a.npu_addr + 4096 != b.npu_addr && b.npu_addr + 4096 != a.npu_addr)
		SKIP(close(fd); return, "BOs not adjacent (0x%llx, 0x%llx)",
		     (unsigned long long)a.npu_addr, (unsigned long long)b.npu_addr);
	t.regcmd_addr = (a.npu_addr < b.npu_addr ? b.npu_addr : a.npu_addr) - 32;
	t.regcmd_count = 8;
	t.task_count = 1;
	bos[0].handle = a.handle;
	bos[0].flags = 0;
	bos[1].handle = b.handle;
	bos[1].flags = 0;
	rkt_submit_init(&s, ctx, &t, 1, bos, 2, NULL, 0, out, 0);
	EXPECT_EQ(-EINVAL, rkt_submit_args(fd, &s));
	close(fd);
}

TEST_F(sub, regcmd_in_other_file_space)
{
	/* an address valid in another file's space is not valid in this one */
	struct drm_rkaccel_submit_bo b;
	struct drm_rkaccel_task t;
	struct rkt_bo big, small;
	int fd = rkt_open_fd();
	uint32_t ctx;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, rkt_ctx_create(fd, 0, DRM_RKACCEL_PRIORITY_NORMAL, &ctx));
	ASSERT_EQ(0, rkt_bo_create(self->fd, 8 << 20, 0, &big));
	ASSERT_EQ(0, rkt_bo_create(fd, 4096, 0, &small));
	/* somewhere inside big (fixture file) that small (fd) cannot cover */
	t.regcmd_addr = big.npu_addr + (4 << 20);
	if (t.regcmd_addr >= small.npu_addr && t.regcmd_addr < small.npu_addr + 4096)
		t.regcmd_addr += 8192;
	t.regcmd_count = 8;
	t.task_count = 1;
	b.handle = small.handle;
	b.flags = 0;
	EXPECT_EQ(-EINVAL, rkt_submit(fd, ctx, &t, 1, &b, 1, NULL, 0, 0, 0));
	rkt_gem_close(self->fd, big.handle);
	close(fd);
}

TEST_F(sub, hw_tasks_above_soc_limit)
{
	struct drm_rkaccel_task t = self->task;
	struct drm_rkaccel_submit s;

	t.task_count = self->q.max_tasks + 1;
	valid_args(self, &s);
	s.tasks = (uintptr_t)&t;
	EXPECT_SUBMIT_ERR(self, &s, EINVAL);
	t.task_count = UINT32_MAX;
	EXPECT_SUBMIT_ERR(self, &s, EINVAL);
}

TEST_F(sub, hw_tasks_sum_above_soc_limit)
{
	/* each PC start within the limit, their sum above it */
	struct drm_rkaccel_task t[3] = { self->task, self->task, self->task };
	struct drm_rkaccel_submit s;

	t[0].task_count = self->q.max_tasks / 2 + 1;
	t[1].task_count = self->q.max_tasks / 2 + 1;
	t[2].task_count = 1;
	valid_args(self, &s);
	s.tasks = (uintptr_t)t;
	s.task_count = 2;
	EXPECT_SUBMIT_ERR(self, &s, EINVAL);
	/* many small ones adding up past the limit */
	t[0].task_count = self->q.max_tasks;
	s.task_count = 3;
	EXPECT_SUBMIT_ERR(self, &s, EINVAL);
}

TEST_F(sub, in_sync_bad_handle)
{
	struct drm_rkaccel_sync in = { .handle = 0xbeef };
	struct drm_rkaccel_submit s;

	rkt_submit_init(&s, self->ctx, &self->task, 1, &self->bo, 1, &in, 1, self->out, 0);
	EXPECT_SUBMIT_ERR(self, &s, ENOENT);
	in.handle = 0;
	EXPECT_SUBMIT_ERR(self, &s, ENOENT);
}

TEST_F(sub, in_sync_flags)
{
	uint32_t so;

	ASSERT_EQ(0, drmSyncobjCreate(self->fd, DRM_SYNCOBJ_CREATE_SIGNALED, &so));
	for (unsigned int bit = 0; bit < 32; bit++) {
		struct drm_rkaccel_sync in = { .handle = so, .flags = 1u << bit };
		struct drm_rkaccel_submit s;

		rkt_submit_init(&s, self->ctx, &self->task, 1, &self->bo, 1, &in, 1,
				self->out, 0);
		EXPECT_EQ(-EINVAL, rkt_submit_args(self->fd, &s)) TH_LOG("sync flag bit %u", bit);
	}
	EXPECT_NO_JOB(self);
}

TEST_F(sub, in_sync_stride)
{
	static const uint32_t strides[] = { 0, 8, sizeof(struct drm_rkaccel_sync) + 8, 12 };
	struct drm_rkaccel_sync in[4];
	uint32_t so;

	ASSERT_EQ(0, drmSyncobjCreate(self->fd, DRM_SYNCOBJ_CREATE_SIGNALED, &so));
	memset(in, 0, sizeof(in));
	for (int i = 0; i < 4; i++)
		in[i].handle = so;
	for (unsigned int i = 0; i < sizeof(strides) / sizeof(strides[0]); i++) {
		struct drm_rkaccel_submit s;

		rkt_submit_init(&s, self->ctx, &self->task, 1, &self->bo, 1, in, 1, self->out, 0);
		s.sync_stride = strides[i];
		EXPECT_EQ(-EINVAL, rkt_submit_args(self->fd, &s)) TH_LOG("stride %u", strides[i]);
	}
	EXPECT_NO_JOB(self);
}

TEST_F(sub, in_sync_count_too_big)
{
	struct drm_rkaccel_sync in[DRM_RKACCEL_MAX_JOB_SYNCS + 1];
	struct drm_rkaccel_submit s;
	uint32_t so;

	ASSERT_EQ(0, drmSyncobjCreate(self->fd, DRM_SYNCOBJ_CREATE_SIGNALED, &so));
	memset(in, 0, sizeof(in));
	for (int i = 0; i <= DRM_RKACCEL_MAX_JOB_SYNCS; i++)
		in[i].handle = so;
	rkt_submit_init(&s, self->ctx, &self->task, 1, &self->bo, 1, in,
			DRM_RKACCEL_MAX_JOB_SYNCS + 1, self->out, 0);
	EXPECT_SUBMIT_ERR(self, &s, EINVAL);
	/* the limit itself is fine */
	s.in_sync_count = DRM_RKACCEL_MAX_JOB_SYNCS;
	EXPECT_EQ(0, rkt_submit_args(self->fd, &s));
	EXPECT_EQ(0, wait_ok(self->fd, self->out, 5000));
}

TEST_F(sub, in_sync_signalled_ok)
{
	struct drm_rkaccel_sync in = { 0 };

	ASSERT_EQ(0, drmSyncobjCreate(self->fd, DRM_SYNCOBJ_CREATE_SIGNALED, &in.handle));
	ASSERT_EQ(0, rkt_submit(self->fd, self->ctx, &self->task, 1, &self->bo, 1, &in, 1,
				self->out, 0));
	EXPECT_EQ(0, wait_ok(self->fd, self->out, 5000));
}

TEST_F(sub, out_sync_bad_handle)
{
	struct drm_rkaccel_ctx_query cq;
	struct drm_rkaccel_submit s;

	valid_args(self, &s);
	s.out_sync = 0xf00d;
	EXPECT_EQ(-ENOENT, rkt_submit_args(self->fd, &s));
	ASSERT_EQ(0, rkt_ctx_query(self->fd, self->ctx, &cq));
	EXPECT_EQ(0, cq.jobs_submitted);
}

TEST_F(sub, out_sync_destroyed)
{
	struct drm_rkaccel_submit s;
	uint32_t so;

	ASSERT_EQ(0, rkt_syncobj_create(self->fd, &so));
	ASSERT_EQ(0, drmSyncobjDestroy(self->fd, so));
	valid_args(self, &s);
	s.out_sync = so;
	EXPECT_EQ(-ENOENT, rkt_submit_args(self->fd, &s));
}

TEST_F(sub, guilty_ctx_cancelled)
{
	struct drm_rkaccel_ctx_query cq;
	struct drm_rkaccel_submit s;
	struct drm_rkaccel_task t;
	struct rkt_chain c;

	ASSERT_EQ(0, rkt_chain_build(self->cmd.map, self->cmd.npu_addr, REGCMD_BO_SIZE, 65536,
				     1, 2, RKT_CHAIN_NO_ENABLE, &c));
	t = rkt_chain_task(&c);
	ASSERT_EQ(0, rkt_submit(self->fd, self->ctx, &t, 1, &self->bo, 1, NULL, 0,
				self->out, 0));
	ASSERT_EQ(0, rkt_syncobj_wait(self->fd, self->out, rkt_deadline_ms(10000)));
	ASSERT_EQ(0, rkt_ctx_query(self->fd, self->ctx, &cq));
	ASSERT_EQ(DRM_RKACCEL_CTX_GUILTY, cq.state);

	valid_args(self, &s);
	EXPECT_EQ(-ECANCELED, rkt_submit_args(self->fd, &s));
	ASSERT_EQ(0, rkt_ctx_query(self->fd, self->ctx, &cq));
	EXPECT_EQ(1, cq.jobs_submitted) TH_LOG("cancelled submit counted");
}

/* --- BO_WAIT on busy BOs ------------------------------------------------- */

/* Submit a chain of @n tasks (with sim_task_ns at @ns) in the fixture BO. */
static int submit_long(FIXTURE_DATA(sub) *self, uint32_t n, uint32_t ctx,
		       const struct drm_rkaccel_submit_bo *bos, uint32_t nbos, uint32_t out)
{
	struct drm_rkaccel_task t;
	struct rkt_chain c;
	int ret;

	ret = rkt_chain_build(self->cmd.map, self->cmd.npu_addr, REGCMD_BO_SIZE, 0, n, 2, 0, &c);
	if (ret)
		return ret;
	t = rkt_chain_task(&c);
	return rkt_submit(self->fd, ctx, &t, 1, bos, nbos, NULL, 0, out, 0);
}

TEST_F(sub, bo_wait_busy_read)
{
	/* the regcmd BO is only read by the job: it is still in use */
	ASSERT_EQ(0, set_sim_task_ns(self, 100000));
	ASSERT_EQ(0, submit_long(self, 2000, self->ctx, &self->bo, 1, self->out));
	EXPECT_EQ(-ETIME, rkt_bo_wait(self->fd, self->cmd.handle, 0))
		TH_LOG("BO_WAIT ignored a job reading the BO");
	EXPECT_EQ(-ETIME, rkt_syncobj_poll(self->fd, self->out)) TH_LOG("job already done");
	EXPECT_EQ(0, rkt_bo_wait(self->fd, self->cmd.handle, rkt_now_ns() + 10 * RKT_NSEC_PER_SEC));
	EXPECT_EQ(0, rkt_syncobj_poll(self->fd, self->out))
		TH_LOG("BO_WAIT returned before the job was done");
	EXPECT_EQ(0, rkt_bo_wait(self->fd, self->cmd.handle, 0));
}

TEST_F(sub, bo_wait_busy_write)
{
	struct drm_rkaccel_submit_bo bos[2] = { self->bo };
	struct rkt_bo out;

	ASSERT_EQ(0, rkt_bo_create(self->fd, 4096, 0, &out));
	bos[1].handle = out.handle;
	bos[1].flags = DRM_RKACCEL_SUBMIT_BO_WRITE;
	ASSERT_EQ(0, set_sim_task_ns(self, 100000));
	ASSERT_EQ(0, submit_long(self, 2000, self->ctx, bos, 2, self->out));
	EXPECT_EQ(-ETIME, rkt_bo_wait(self->fd, out.handle, 0));
	/* a deadline already past is a poll too */
	EXPECT_EQ(-ETIME, rkt_bo_wait(self->fd, out.handle, rkt_now_ns() - 1000));
	EXPECT_EQ(0, rkt_bo_wait(self->fd, out.handle, rkt_now_ns() + 10 * RKT_NSEC_PER_SEC));
	EXPECT_EQ(0, wait_ok(self->fd, self->out, 0)) TH_LOG("BO idle before its job ended");
	rkt_bo_free(self->fd, &out);
}

TEST_F(sub, bo_wait_times_out)
{
	/* a short deadline ends the wait with ETIME while the job still runs */
	struct drm_rkaccel_submit_bo bos[2] = { self->bo };
	uint64_t t0, dt;
	struct rkt_bo out;

	ASSERT_EQ(0, rkt_bo_create(self->fd, 4096, 0, &out));
	bos[1].handle = out.handle;
	bos[1].flags = DRM_RKACCEL_SUBMIT_BO_WRITE;
	/* ~300 ms: well inside the driver's 500 ms job timeout */
	ASSERT_EQ(0, set_sim_task_ns(self, 200000));
	ASSERT_EQ(0, submit_long(self, 1500, self->ctx, bos, 2, self->out));
	t0 = rkt_now_ns();
	EXPECT_EQ(-ETIME, rkt_bo_wait(self->fd, out.handle, t0 + 50 * RKT_NSEC_PER_MSEC));
	dt = rkt_now_ns() - t0;
	EXPECT_LE(40 * RKT_NSEC_PER_MSEC, dt) TH_LOG("returned after %llu ns",
						     (unsigned long long)dt);
	EXPECT_EQ(0, rkt_bo_wait(self->fd, out.handle, rkt_now_ns() + 10 * RKT_NSEC_PER_SEC));
	EXPECT_EQ(0, wait_ok(self->fd, self->out, 0));
	rkt_bo_free(self->fd, &out);
}

TEST_F(sub, bo_wait_unrelated_bo_idle)
{
	struct rkt_bo idle;

	ASSERT_EQ(0, rkt_bo_create(self->fd, 4096, 0, &idle));
	ASSERT_EQ(0, set_sim_task_ns(self, 100000));
	ASSERT_EQ(0, submit_long(self, 1000, self->ctx, &self->bo, 1, self->out));
	EXPECT_EQ(0, rkt_bo_wait(self->fd, idle.handle, 0));
	EXPECT_EQ(0, wait_ok(self->fd, self->out, 10000));
	rkt_bo_free(self->fd, &idle);
}

/* --- core masks and parallelism ------------------------------------------ */

TEST_F(sub, explicit_mask_runs_on_that_core)
{
	for (unsigned int k = 0; k < self->q.num_cores; k++) {
		struct drm_rkaccel_ctx_query cq;
		uint32_t ctx;

		ASSERT_EQ(0, rkt_ctx_create(self->fd, 1u << k, DRM_RKACCEL_PRIORITY_NORMAL, &ctx));
		for (int j = 0; j < 4; j++) {
			ASSERT_EQ(0, rkt_submit(self->fd, ctx, &self->task, 1, &self->bo, 1, NULL,
						0, self->out, 0));
			ASSERT_EQ(0, wait_ok(self->fd, self->out, 5000));
			ASSERT_EQ(0, rkt_ctx_query(self->fd, ctx, &cq));
			EXPECT_EQ(k, cq.last_core) TH_LOG("mask 0x%x job %d", 1u << k, j);
		}
		EXPECT_EQ(4, cq.jobs_completed);
		EXPECT_EQ(0, rkt_ctx_destroy(self->fd, ctx));
	}
}

TEST_F(sub, two_core_mask_stays_inside)
{
	/* mask of two cores: every job on one of the two */
	if (self->q.num_cores < 3)
		SKIP(return, "needs three cores for a proper subset of two");
	for (unsigned int skip = 0; skip < self->q.num_cores; skip++) {
		uint32_t mask = self->q.core_mask & ~(1u << skip), ctx;
		struct drm_rkaccel_ctx_query cq;

		ASSERT_EQ(0, rkt_ctx_create(self->fd, mask, DRM_RKACCEL_PRIORITY_NORMAL, &ctx));
		for (int j = 0; j < 6; j++) {
			ASSERT_EQ(0, rkt_submit(self->fd, ctx, &self->task, 1, &self->bo, 1, NULL,
						0, self->out, 0));
			ASSERT_EQ(0, wait_ok(self->fd, self->out, 5000));
			ASSERT_EQ(0, rkt_ctx_query(self->fd, ctx, &cq));
			EXPECT_NE(skip, cq.last_core) TH_LOG("mask 0x%x ran on core %u", mask,
							     cq.last_core);
			EXPECT_LT(cq.last_core, self->q.num_cores);
		}
		EXPECT_EQ(0, rkt_ctx_destroy(self->fd, ctx));
	}
}

TEST_F_TIMEOUT(sub, parallel_contexts, 60)
{
	const uint32_t n = self->q.num_cores, tasks = 1000;
	struct drm_rkaccel_submit_bo bos[3];
	uint32_t ctx[3], out[3], one_ctx;
	struct rkt_bo cmd[3];
	uint64_t t0, single, all;

	ASSERT_LE(2, n);
	ASSERT_GE(3, n);
	ASSERT_EQ(0, set_sim_task_ns(self, 100000));	/* 1000 tasks: ~100 ms */

	for (uint32_t i = 0; i < n; i++) {
		struct rkt_chain c;

		ASSERT_EQ(0, rkt_bo_new(self->fd, rkt_chain_bytes(tasks, 2), 0, &cmd[i]));
		ASSERT_EQ(0, rkt_chain_build(cmd[i].map, cmd[i].npu_addr, cmd[i].map_len, 0,
					     tasks, 2, 0, &c));
		bos[i].handle = cmd[i].handle;
		bos[i].flags = 0;
		ASSERT_EQ(0, rkt_ctx_create(self->fd, 0, DRM_RKACCEL_PRIORITY_NORMAL, &ctx[i]));
		ASSERT_EQ(0, rkt_syncobj_create(self->fd, &out[i]));
	}

	/* one job alone, same size, for the reference time */
	ASSERT_EQ(0, rkt_ctx_create(self->fd, 0, DRM_RKACCEL_PRIORITY_NORMAL, &one_ctx));
	{
		struct drm_rkaccel_task t = { .regcmd_addr = cmd[0].npu_addr,
					      .regcmd_count = rkt_chain_entries(2),
					      .task_count = tasks };

		t0 = rkt_now_ns();
		ASSERT_EQ(0, rkt_submit(self->fd, one_ctx, &t, 1, &bos[0], 1, NULL, 0,
					self->out, 0));
		ASSERT_EQ(0, wait_ok(self->fd, self->out, 20000));
		single = rkt_now_ns() - t0;
	}
	EXPECT_LE(tasks * 100000ull, single) TH_LOG("job faster than sim_task_ns allows");

	t0 = rkt_now_ns();
	for (uint32_t i = 0; i < n; i++) {
		struct drm_rkaccel_task t = { .regcmd_addr = cmd[i].npu_addr,
					      .regcmd_count = rkt_chain_entries(2),
					      .task_count = tasks };

		ASSERT_EQ(0, rkt_submit(self->fd, ctx[i], &t, 1, &bos[i], 1, NULL, 0, out[i], 0));
	}
	ASSERT_EQ(0, drmSyncobjWait(self->fd, out, n, rkt_deadline_ms(20000),
				    DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL, NULL));
	all = rkt_now_ns() - t0;

	TH_LOG("one job %llu us, %u jobs on %u contexts %llu us",
	       (unsigned long long)single / 1000, n, n, (unsigned long long)all / 1000);
	/* the speed-up is not judged under the debug kernel: host work dominates */
	if (!rkt_debug_kernel()) {
		EXPECT_GT(3 * n * single / 4, all) TH_LOG("contexts did not run in parallel");
	}

	for (uint32_t i = 0; i < n; i++) {
		struct drm_rkaccel_ctx_query cq;
		int status;

		ASSERT_EQ(0, rkt_syncobj_status(self->fd, out[i], &status));
		EXPECT_EQ(1, status);
		ASSERT_EQ(0, rkt_ctx_query(self->fd, ctx[i], &cq));
		ASSERT_LT(cq.last_core, n);
		for (uint32_t j = 0; j < i; j++) {
			struct drm_rkaccel_ctx_query cj;

			ASSERT_EQ(0, rkt_ctx_query(self->fd, ctx[j], &cj));
			EXPECT_NE(cj.last_core, cq.last_core)
				TH_LOG("contexts %u and %u both on core %u", j, i, cq.last_core);
		}
	}
}

TEST_F_TIMEOUT(sub, parallel_files, 60)
{
	/* the same across files: each file its own context, all at once */
	const uint32_t n = self->q.num_cores, tasks = 1000;
	int fds[3];
	uint32_t ctx[3], out[3];
	struct rkt_bo cmd[3];
	uint64_t t0, all, single;

	ASSERT_EQ(0, set_sim_task_ns(self, 100000));
	for (uint32_t i = 0; i < n; i++) {
		struct rkt_chain c;

		fds[i] = rkt_open_fd();
		ASSERT_LE(0, fds[i]);
		ASSERT_EQ(0, rkt_bo_new(fds[i], rkt_chain_bytes(tasks, 2), 0, &cmd[i]));
		ASSERT_EQ(0, rkt_chain_build(cmd[i].map, cmd[i].npu_addr, cmd[i].map_len, 0,
					     tasks, 2, 0, &c));
		ASSERT_EQ(0, rkt_ctx_create(fds[i], 0, DRM_RKACCEL_PRIORITY_NORMAL, &ctx[i]));
		ASSERT_EQ(0, rkt_syncobj_create(fds[i], &out[i]));
	}
	/*
	 * One job alone first: the reference, since a slow host (a debug
	 * kernel under TCG) can take longer to execute the tasks than their
	 * modelled 100 ms.
	 */
	{
		struct drm_rkaccel_task t = { .regcmd_addr = cmd[0].npu_addr,
					      .regcmd_count = rkt_chain_entries(2),
					      .task_count = tasks };
		struct drm_rkaccel_submit_bo b = { .handle = cmd[0].handle };

		t0 = rkt_now_ns();
		ASSERT_EQ(0, rkt_submit(fds[0], ctx[0], &t, 1, &b, 1, NULL, 0, out[0], 0));
		ASSERT_EQ(0, wait_ok(fds[0], out[0], 20000));
		single = rkt_now_ns() - t0;
	}
	EXPECT_LE(tasks * 100000ull, single) TH_LOG("job faster than sim_task_ns allows");

	t0 = rkt_now_ns();
	for (uint32_t i = 0; i < n; i++) {
		struct drm_rkaccel_task t = { .regcmd_addr = cmd[i].npu_addr,
					      .regcmd_count = rkt_chain_entries(2),
					      .task_count = tasks };
		struct drm_rkaccel_submit_bo b = { .handle = cmd[i].handle };

		ASSERT_EQ(0, rkt_submit(fds[i], ctx[i], &t, 1, &b, 1, NULL, 0, out[i], 0));
	}
	for (uint32_t i = 0; i < n; i++) {
		ASSERT_EQ(0, wait_ok(fds[i], out[i], 20000));
	}
	all = rkt_now_ns() - t0;
	TH_LOG("one job %llu us, %u jobs of %u tasks in %u files: %llu us",
	       (unsigned long long)single / 1000, n, tasks, n, (unsigned long long)all / 1000);
	/* serial would be n times the one job */
	if (!rkt_debug_kernel()) {
		EXPECT_GT(3 * n * single / 4, all) TH_LOG("files did not run in parallel");
	}
	for (uint32_t i = 0; i < n; i++) {
		struct drm_rkaccel_ctx_query cq, cj;

		ASSERT_EQ(0, rkt_ctx_query(fds[i], ctx[i], &cq));
		for (uint32_t j = 0; j < i; j++) {
			ASSERT_EQ(0, rkt_ctx_query(fds[j], ctx[j], &cj));
			EXPECT_NE(cj.last_core, cq.last_core);
		}
	}
	for (uint32_t i = 0; i < n; i++)
		close(fds[i]);
}

/* --- closing with jobs in flight ----------------------------------------- */

TEST_F_TIMEOUT(sub, close_with_jobs_in_flight, 60)
{
	uint32_t ctx[3];

	ASSERT_EQ(0, set_sim_task_ns(self, 100000));
	for (int round = 0; round < 3; round++) {
		struct drm_rkaccel_task t;
		struct drm_rkaccel_submit_bo b;
		struct rkt_chain c;
		struct rkt_bo cmd;
		uint32_t so;
		int fd = rkt_open_fd();

		ASSERT_LE(0, fd);
		ASSERT_EQ(0, rkt_bo_new(fd, rkt_chain_bytes(500, 2), 0, &cmd));
		ASSERT_EQ(0, rkt_chain_build(cmd.map, cmd.npu_addr, cmd.map_len, 0, 500, 2, 0, &c));
		t = rkt_chain_task(&c);
		b.handle = cmd.handle;
		b.flags = 0;
		ASSERT_EQ(0, rkt_syncobj_create(fd, &so));
		for (uint32_t i = 0; i < self->q.num_cores; i++) {
			ASSERT_EQ(0, rkt_ctx_create(fd, 0, DRM_RKACCEL_PRIORITY_NORMAL, &ctx[i]));
		}
		for (int j = 0; j < 6; j++) {
			ASSERT_EQ(0, rkt_submit(fd, ctx[j % self->q.num_cores], &t, 1, &b, 1,
						NULL, 0, so, 0));
		}
		/* close everything, mapping and fd, without waiting */
		munmap(cmd.map, cmd.map_len);
		close(fd);
	}

	/* the device still works */
	ASSERT_EQ(0, set_sim_task_ns(self, 10000));
	ASSERT_EQ(0, rkt_submit(self->fd, self->ctx, &self->task, 1, &self->bo, 1, NULL, 0,
				self->out, 0));
	EXPECT_EQ(0, wait_ok(self->fd, self->out, 10000));
	{
		int fd = rkt_open_fd();
		struct rkt_bo b;

		ASSERT_LE(0, fd);
		EXPECT_EQ(0, rkt_bo_create(fd, 4096, 0, &b));
		close(fd);
	}
}

TEST_F(sub, destroy_ctx_with_jobs_queued)
{
	/* CTX_DESTROY lets queued jobs run: their fences signal without error */
	uint32_t ctx, so[4];

	ASSERT_EQ(0, set_sim_task_ns(self, 100000));
	ASSERT_EQ(0, rkt_ctx_create(self->fd, 0, DRM_RKACCEL_PRIORITY_NORMAL, &ctx));
	ASSERT_EQ(0, rkt_chain_build(self->cmd.map, self->cmd.npu_addr, REGCMD_BO_SIZE, 0, 300,
				     2, 0, &self->chain));
	self->task = rkt_chain_task(&self->chain);
	for (int i = 0; i < 4; i++) {
		ASSERT_EQ(0, rkt_syncobj_create(self->fd, &so[i]));
		ASSERT_EQ(0, rkt_submit(self->fd, ctx, &self->task, 1, &self->bo, 1, NULL, 0,
					so[i], 0));
	}
	ASSERT_EQ(0, rkt_ctx_destroy(self->fd, ctx));
	for (int i = 0; i < 4; i++) {
		EXPECT_EQ(0, wait_ok(self->fd, so[i], 10000)) TH_LOG("job %d", i);
	}
}

/* Load of core 0 over the last second, per mille, or -1 without debugfs. */
static int core0_load(struct rkaccel_device *dev)
{
	struct rkaccel_core_stats st[4];	/* RK3588 has 3 */

	return rkaccel_core_stats(dev, st, 4) > 0 ?
	       (int)st[0].load_permille : -1;
}

/* The load figure is a moving window: busy while a job runs, 0 a second after. */
TEST_F_TIMEOUT(sub, debugfs_load_window, 30)
{
	struct drm_rkaccel_task t;
	struct rkt_chain c;
	uint32_t ctx;
	int during, after, idle;

	if (core0_load(self->dev) < 0)
		SKIP(return, "no debugfs cores file");
	ASSERT_EQ(0, set_sim_task_ns(self, 200000));
	ASSERT_EQ(0, rkt_chain_build(self->cmd.map, self->cmd.npu_addr, REGCMD_BO_SIZE, 0,
				     2000, 2, 0, &c));	/* 2000 x 200 us: 400 ms */
	t = rkt_chain_task(&c);
	ASSERT_EQ(0, rkt_ctx_create(self->fd, 1, DRM_RKACCEL_PRIORITY_NORMAL, &ctx));
	usleep(1100000);	/* whatever ran before leaves the window */
	ASSERT_EQ(0, rkt_submit(self->fd, ctx, &t, 1, &self->bo, 1, NULL, 0, self->out, 0));
	usleep(200000);
	during = core0_load(self->dev);
	ASSERT_EQ(0, wait_ok(self->fd, self->out, 10000));
	after = core0_load(self->dev);
	usleep(1300000);
	idle = core0_load(self->dev);
	EXPECT_LT(100, during) TH_LOG("load while a job runs: %d per mille", during);
	EXPECT_LT(250, after) TH_LOG("load after a 400 ms job: %d per mille", after);
	EXPECT_EQ(0, idle) TH_LOG("load a second after the job: %d per mille", idle);
}

TEST_HARNESS_MAIN
