// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fences: out syncobjs (binary and timeline points), in-syncs ordering jobs
 * across contexts and files, sync_files, and the errors fences carry after
 * a fault or a hang, with the recovery that follows.
 */

#include <signal.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "rkaccel_test.h"
#include "regcmd.h"
#include "client.h"

#define CMD_BO_SIZE	(4u << 20)
#define SLOT_SIZE	(256u << 10)	/* 4096 tasks of 64 bytes */
#define UNMAPPED_ADDR	0xfff00000u

FIXTURE(fence) {
	struct rkaccel_device *dev;
	int fd;
	struct drm_rkaccel_query q;
	struct rkt_bo cmd;
	struct drm_rkaccel_submit_bo bo;
	uint64_t sim_ns;
};

FIXTURE_SETUP(fence)
{
	uint64_t old = 0;

	ASSERT_EQ(0, rkaccel_open(NULL, &self->dev)) TH_LOG("no rkaccel device node");
	self->fd = rkaccel_fd(self->dev);
	ASSERT_EQ(0, rkt_query(self->fd, &self->q));
	ASSERT_EQ(0, rkt_bo_new(self->fd, CMD_BO_SIZE, 0, &self->cmd));
	self->bo.handle = self->cmd.handle;
	self->bo.flags = 0;
	/* every job here is timed: 250 us per hardware task, so that a 2000-task
	 * job (500 ms) is still running when a slow host gets to look at it */
	ASSERT_EQ(0, rkt_param_read_u64(RKT_SIM_TASK_NS_PATH, &old));
	self->sim_ns = old;
	ASSERT_EQ(0, rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, 250000));
}

#define SIM_RESETS_PATH		"/sys/module/rkaccel_sim/parameters/resets"
#define SIM_HOST_DELAY_PATH	"/sys/module/rkaccel_sim/parameters/sim_host_delay_us"
#define SIM_FAIL_ATTACH_PATH	"/sys/module/rkaccel_sim/parameters/sim_fail_attach"
#define MAX_JOB_MS_PATH		"/sys/module/rkaccel/parameters/max_job_ms"
#define MAX_JOB_MS_DEFAULT	30000

FIXTURE_TEARDOWN(fence)
{
	rkt_param_write_u64(MAX_JOB_MS_PATH, MAX_JOB_MS_DEFAULT);
	rkt_param_write_u64(SIM_HOST_DELAY_PATH, 0);
	rkt_param_write_u64(SIM_FAIL_ATTACH_PATH, 0);
	rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, self->sim_ns);
	rkaccel_close(self->dev);
}

/* A chain of @ntasks tasks in slot @slot of the fixture BO (~ntasks * 100 us). */
static struct drm_rkaccel_task slot_job(FIXTURE_DATA(fence) *self, unsigned int slot,
					uint32_t ntasks, uint32_t flags, struct rkt_chain *c)
{
	struct rkt_chain local;

	if (!c)
		c = &local;
	if (rkt_chain_build(self->cmd.map, self->cmd.npu_addr, CMD_BO_SIZE,
			    (size_t)slot * SLOT_SIZE, ntasks, 2, flags, c)) {
		struct drm_rkaccel_task none = { 0 };

		return none;
	}
	return rkt_chain_task(c);
}

static int sub1(FIXTURE_DATA(fence) *self, uint32_t ctx, const struct drm_rkaccel_task *t,
		const struct drm_rkaccel_sync *in, uint32_t nin, uint32_t out, uint64_t point)
{
	return rkt_submit(self->fd, ctx, t, 1, &self->bo, 1, in, nin, out, point);
}

static uint32_t new_ctx(FIXTURE_DATA(fence) *self, uint32_t mask)
{
	uint32_t h = 0;

	if (rkt_ctx_create(self->fd, mask, DRM_RKACCEL_PRIORITY_NORMAL, &h))
		return 0;
	return h;
}

static uint32_t new_syncobj(int fd)
{
	uint32_t h = 0;

	if (rkt_syncobj_create(fd, &h))
		return 0;
	return h;
}

/* Mask of a core other than core 0 when there is one. */
static uint32_t other_core(FIXTURE_DATA(fence) *self)
{
	return self->q.num_cores > 1 ? 2 : 1;
}

static int status_of(int fd, uint32_t syncobj)
{
	int status = 0, ret = rkt_syncobj_status(fd, syncobj, &status);

	return ret ? 1000 + ret : status;
}

/* --- out syncobjs -------------------------------------------------------- */

TEST_F(fence, out_sync_signals)
{
	struct drm_rkaccel_task t = slot_job(self, 0, 10, 0, NULL);
	uint32_t ctx = new_ctx(self, 0), out = new_syncobj(self->fd);

	ASSERT_NE(0, ctx);
	ASSERT_NE(0, out);
	ASSERT_EQ(0, sub1(self, ctx, &t, NULL, 0, out, 0));
	EXPECT_EQ(0, rkt_syncobj_wait(self->fd, out, rkt_deadline_ms(5000)));
	EXPECT_EQ(1, status_of(self->fd, out));
}

TEST_F(fence, out_sync_pending_while_running)
{
	struct drm_rkaccel_task t = slot_job(self, 0, 2000, 0, NULL);	/* ~500 ms */
	uint32_t ctx = new_ctx(self, 0), out = new_syncobj(self->fd);
	uint64_t t0 = rkt_now_ns();

	ASSERT_EQ(0, sub1(self, ctx, &t, NULL, 0, out, 0));
	EXPECT_EQ(-ETIME, rkt_syncobj_poll(self->fd, out)) TH_LOG("signalled too early");
	EXPECT_EQ(0, status_of(self->fd, out));
	EXPECT_EQ(0, rkt_syncobj_wait(self->fd, out, rkt_deadline_ms(10000)));
	EXPECT_LE(200 * RKT_NSEC_PER_MSEC, rkt_now_ns() - t0);
	EXPECT_EQ(1, status_of(self->fd, out));
}

TEST_F(fence, slow_host_is_not_a_hang)
{
	/*
	 * The host takes 2 ms to execute each of 400 tasks (0.8 s, past the
	 * 500 ms timeout) of a chain modelled at 100 ms: the task counter
	 * moves while it executes, so the timeout sees progress, not a hang
	 * (found by the debug kernel, whose slowness did the same).
	 */
	struct drm_rkaccel_task t = slot_job(self, 0, 400, 0, NULL);
	uint32_t ctx = new_ctx(self, 0), out = new_syncobj(self->fd);
	struct drm_rkaccel_ctx_query cq;

	ASSERT_EQ(0, rkt_param_write_u64(SIM_HOST_DELAY_PATH, 2000));
	ASSERT_EQ(0, sub1(self, ctx, &t, NULL, 0, out, 0));
	EXPECT_EQ(0, rkt_syncobj_wait(self->fd, out, rkt_deadline_ms(10000)));
	EXPECT_EQ(1, status_of(self->fd, out)) TH_LOG("a slow host was taken for a hung core");
	ASSERT_EQ(0, rkt_ctx_query(self->fd, ctx, &cq));
	EXPECT_EQ(0, cq.reset_count);
}

TEST_F(fence, progressing_job_capped_by_max_job_ms)
{
	/*
	 * The same slow host, for 2000 tasks (4 s): the job keeps moving, but
	 * max_job_ms = 1000 caps the time it may hold the core, so it ends
	 * cancelled after 1-1.5 s and marks its context, instead of running on.
	 */
	struct drm_rkaccel_task t = slot_job(self, 0, 2000, 0, NULL);
	uint32_t ctx = new_ctx(self, 0), out = new_syncobj(self->fd);
	struct drm_rkaccel_ctx_query cq;
	uint64_t t0, dt;

	ASSERT_EQ(0, rkt_param_write_u64(MAX_JOB_MS_PATH, 1000));
	ASSERT_EQ(0, rkt_param_write_u64(SIM_HOST_DELAY_PATH, 2000));
	t0 = rkt_now_ns();
	ASSERT_EQ(0, sub1(self, ctx, &t, NULL, 0, out, 0));
	ASSERT_EQ(0, rkt_syncobj_wait(self->fd, out, rkt_deadline_ms(20000)));
	dt = rkt_now_ns() - t0;
	EXPECT_EQ(-ECANCELED, status_of(self->fd, out)) TH_LOG("the cap did not end the job");
	EXPECT_LE(1000 * RKT_NSEC_PER_MSEC, dt);
	EXPECT_GT(3500 * RKT_NSEC_PER_MSEC, dt) TH_LOG("ended after %llu ms",
						       (unsigned long long)dt / 1000000);
	ASSERT_EQ(0, rkt_ctx_query(self->fd, ctx, &cq));
	EXPECT_EQ(1, cq.reset_count);
	EXPECT_EQ(DRM_RKACCEL_CTX_GUILTY, cq.state);
}

TEST_F(fence, out_sync_replaced_by_next_job)
{
	struct drm_rkaccel_task short_t = slot_job(self, 0, 5, 0, NULL);
	struct drm_rkaccel_task long_t = slot_job(self, 1, 2000, 0, NULL);
	uint32_t ctx = new_ctx(self, 0), out = new_syncobj(self->fd);

	ASSERT_EQ(0, sub1(self, ctx, &short_t, NULL, 0, out, 0));
	ASSERT_EQ(0, rkt_syncobj_wait(self->fd, out, rkt_deadline_ms(5000)));
	ASSERT_EQ(0, sub1(self, ctx, &long_t, NULL, 0, out, 0));
	EXPECT_EQ(-ETIME, rkt_syncobj_poll(self->fd, out))
		TH_LOG("the syncobj still holds the first job's fence");
	EXPECT_EQ(0, rkt_syncobj_wait(self->fd, out, rkt_deadline_ms(10000)));
}

TEST_F(fence, timeline_out_point)
{
	struct drm_rkaccel_task t = slot_job(self, 0, 10, 0, NULL);
	uint32_t ctx = new_ctx(self, 0), tl;
	uint64_t point = 5, value = 0;

	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &tl));
	ASSERT_EQ(0, sub1(self, ctx, &t, NULL, 0, tl, 5));
	EXPECT_EQ(0, drmSyncobjTimelineWait(self->fd, &tl, &point, 1, rkt_deadline_ms(5000), 0,
					    NULL));
	ASSERT_EQ(0, drmSyncobjQuery(self->fd, &tl, &value, 1));
	EXPECT_EQ(5, value);
	drmSyncobjDestroy(self->fd, tl);
}

TEST_F(fence, timeline_point_pending_while_running)
{
	struct drm_rkaccel_task t = slot_job(self, 0, 2000, 0, NULL);
	uint32_t ctx = new_ctx(self, 0), tl;
	uint64_t point = 1, value = 99;

	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &tl));
	ASSERT_EQ(0, sub1(self, ctx, &t, NULL, 0, tl, 1));
	EXPECT_EQ(-ETIME, drmSyncobjTimelineWait(self->fd, &tl, &point, 1, 0, 0, NULL));
	ASSERT_EQ(0, drmSyncobjQuery(self->fd, &tl, &value, 1));
	EXPECT_EQ(0, value);
	EXPECT_EQ(0, drmSyncobjTimelineWait(self->fd, &tl, &point, 1, rkt_deadline_ms(10000), 0,
					    NULL));
	drmSyncobjDestroy(self->fd, tl);
}

/* --- in-syncs ------------------------------------------------------------ */

TEST_F(fence, in_sync_orders_jobs)
{
	struct drm_rkaccel_task a_t = slot_job(self, 0, 2000, 0, NULL);	/* ~500 ms */
	struct drm_rkaccel_task b_t = slot_job(self, 1, 5, 0, NULL);
	uint32_t a = new_ctx(self, 1), b = new_ctx(self, other_core(self));
	uint32_t a_out = new_syncobj(self->fd), b_out = new_syncobj(self->fd);
	struct drm_rkaccel_sync in = { .handle = a_out };
	struct drm_rkaccel_ctx_query cq;

	ASSERT_NE(0, a);
	ASSERT_NE(0, b);
	ASSERT_EQ(0, sub1(self, a, &a_t, NULL, 0, a_out, 0));
	ASSERT_EQ(0, sub1(self, b, &b_t, &in, 1, b_out, 0));

	ASSERT_EQ(-ETIME, rkt_syncobj_poll(self->fd, a_out)) TH_LOG("A ended too soon to tell");
	/* B is short and its core idle: only the in-sync holds it back */
	usleep(50000);
	EXPECT_EQ(-ETIME, rkt_syncobj_poll(self->fd, b_out)) TH_LOG("B ran before A ended");
	ASSERT_EQ(0, rkt_ctx_query(self->fd, b, &cq));
	EXPECT_EQ(0, cq.jobs_completed);

	ASSERT_EQ(0, rkt_syncobj_wait(self->fd, b_out, rkt_deadline_ms(10000)));
	EXPECT_EQ(0, rkt_syncobj_poll(self->fd, a_out)) TH_LOG("B done, A not");
	EXPECT_EQ(1, status_of(self->fd, b_out));
}

TEST_F(fence, in_sync_several)
{
	/* C waits for both A and B */
	struct drm_rkaccel_task a_t = slot_job(self, 0, 1000, 0, NULL);
	struct drm_rkaccel_task b_t = slot_job(self, 1, 2000, 0, NULL);
	struct drm_rkaccel_task c_t = slot_job(self, 2, 5, 0, NULL);
	uint32_t a = new_ctx(self, 0), b = new_ctx(self, 0), c = new_ctx(self, 0);
	uint32_t so[3] = { new_syncobj(self->fd), new_syncobj(self->fd), new_syncobj(self->fd) };
	struct drm_rkaccel_sync in[2] = { { .handle = so[0] }, { .handle = so[1] } };

	ASSERT_EQ(0, sub1(self, a, &a_t, NULL, 0, so[0], 0));
	ASSERT_EQ(0, sub1(self, b, &b_t, NULL, 0, so[1], 0));
	ASSERT_EQ(0, sub1(self, c, &c_t, in, 2, so[2], 0));
	ASSERT_EQ(0, rkt_syncobj_wait(self->fd, so[2], rkt_deadline_ms(10000)));
	EXPECT_EQ(0, rkt_syncobj_poll(self->fd, so[0]));
	EXPECT_EQ(0, rkt_syncobj_poll(self->fd, so[1])) TH_LOG("C ran before the longer B ended");
}

TEST_F(fence, in_sync_timeline_point)
{
	struct drm_rkaccel_task a_t = slot_job(self, 0, 2000, 0, NULL);
	struct drm_rkaccel_task b_t = slot_job(self, 1, 5, 0, NULL);
	uint32_t a = new_ctx(self, 1), b = new_ctx(self, other_core(self));
	uint32_t tl, b_out = new_syncobj(self->fd);
	struct drm_rkaccel_sync in = { .point = 3 };
	uint64_t point = 3;

	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &tl));
	in.handle = tl;
	ASSERT_EQ(0, sub1(self, a, &a_t, NULL, 0, tl, 3));
	ASSERT_EQ(0, sub1(self, b, &b_t, &in, 1, b_out, 0));
	usleep(50000);
	ASSERT_EQ(-ETIME, drmSyncobjTimelineWait(self->fd, &tl, &point, 1, 0, 0, NULL))
		TH_LOG("A ended too soon to tell");
	EXPECT_EQ(-ETIME, rkt_syncobj_poll(self->fd, b_out)) TH_LOG("B ran before point 3");
	ASSERT_EQ(0, rkt_syncobj_wait(self->fd, b_out, rkt_deadline_ms(10000)));
	EXPECT_EQ(0, drmSyncobjTimelineWait(self->fd, &tl, &point, 1, 0, 0, NULL));
	drmSyncobjDestroy(self->fd, tl);
}

TEST_F(fence, in_sync_point_above_32_bits)
{
	/* in- and out-sync points are both 64 bits: B waits for A's 2^34 + 3 */
	struct drm_rkaccel_task a_t = slot_job(self, 0, 2000, 0, NULL);
	struct drm_rkaccel_task b_t = slot_job(self, 1, 5, 0, NULL);
	uint32_t a = new_ctx(self, 1), b = new_ctx(self, other_core(self));
	uint64_t point = (1ull << 34) + 3;
	struct drm_rkaccel_sync in = { .point = point };
	uint32_t tl, b_out = new_syncobj(self->fd);

	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &tl));
	in.handle = tl;
	ASSERT_EQ(0, sub1(self, a, &a_t, NULL, 0, tl, point));
	ASSERT_EQ(0, sub1(self, b, &b_t, &in, 1, b_out, 0))
		TH_LOG("an in-sync point past 2^32 was refused");
	usleep(50000);
	ASSERT_EQ(-ETIME, drmSyncobjTimelineWait(self->fd, &tl, &point, 1, 0, 0, NULL))
		TH_LOG("A ended too soon to tell");
	EXPECT_EQ(-ETIME, rkt_syncobj_poll(self->fd, b_out)) TH_LOG("B ran before its point");
	ASSERT_EQ(0, rkt_syncobj_wait(self->fd, b_out, rkt_deadline_ms(10000)));
	EXPECT_EQ(1, status_of(self->fd, b_out));
	drmSyncobjDestroy(self->fd, tl);
}

TEST_F(fence, timeline_chain_three_contexts)
{
	/* A -> B -> C through points 1, 2, 3 of one timeline, on three contexts */
	struct drm_rkaccel_task t[3] = {
		slot_job(self, 0, 1000, 0, NULL), slot_job(self, 1, 1000, 0, NULL),
		slot_job(self, 2, 1000, 0, NULL),
	};
	uint32_t ctx[3] = { new_ctx(self, 0), new_ctx(self, 0), new_ctx(self, 0) }, tl;
	uint64_t value = 0, p1 = 1, p3 = 3;

	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &tl));
	for (int i = 0; i < 3; i++) {
		struct drm_rkaccel_sync in = { .handle = tl, .point = (uint64_t)i };

		ASSERT_NE(0, ctx[i]);
		ASSERT_EQ(0, sub1(self, ctx[i], &t[i], &in, i ? 1 : 0, tl, i + 1));
	}
	ASSERT_EQ(0, drmSyncobjTimelineWait(self->fd, &tl, &p1, 1, rkt_deadline_ms(10000), 0,
					    NULL));
	/* B and C still have ~100 ms each to run after A */
	EXPECT_EQ(-ETIME, drmSyncobjTimelineWait(self->fd, &tl, &p3, 1, 0, 0, NULL))
		TH_LOG("C finished with A: the chain did not order the jobs");
	ASSERT_EQ(0, drmSyncobjTimelineWait(self->fd, &tl, &p3, 1, rkt_deadline_ms(10000), 0,
					    NULL));
	ASSERT_EQ(0, drmSyncobjQuery(self->fd, &tl, &value, 1));
	EXPECT_EQ(3, value);
	for (int i = 0; i < 3; i++) {
		struct drm_rkaccel_ctx_query cq;

		ASSERT_EQ(0, rkt_ctx_query(self->fd, ctx[i], &cq));
		EXPECT_EQ(1, cq.jobs_completed) TH_LOG("context %d", i);
	}
	drmSyncobjDestroy(self->fd, tl);
}

TEST_F(fence, in_sync_from_sync_file)
{
	struct drm_rkaccel_task a_t = slot_job(self, 0, 2000, 0, NULL);
	struct drm_rkaccel_task b_t = slot_job(self, 1, 5, 0, NULL);
	uint32_t a = new_ctx(self, 1), b = new_ctx(self, other_core(self));
	uint32_t a_out = new_syncobj(self->fd), imp = new_syncobj(self->fd);
	uint32_t b_out = new_syncobj(self->fd);
	struct drm_rkaccel_sync in = { 0 };
	int sfd;

	ASSERT_EQ(0, sub1(self, a, &a_t, NULL, 0, a_out, 0));
	ASSERT_EQ(0, drmSyncobjExportSyncFile(self->fd, a_out, &sfd));
	ASSERT_EQ(0, drmSyncobjImportSyncFile(self->fd, imp, sfd));
	close(sfd);
	in.handle = imp;
	ASSERT_EQ(0, sub1(self, b, &b_t, &in, 1, b_out, 0));
	usleep(50000);
	ASSERT_EQ(-ETIME, rkt_syncobj_poll(self->fd, a_out));
	EXPECT_EQ(-ETIME, rkt_syncobj_poll(self->fd, b_out));
	ASSERT_EQ(0, rkt_syncobj_wait(self->fd, b_out, rkt_deadline_ms(10000)));
	EXPECT_EQ(0, rkt_syncobj_poll(self->fd, a_out));
}

/*
 * The out fence names its core: drm_sched's fence carries the scheduler's
 * name, one per core (issue 28 finding 13). Read while the job runs: newer
 * kernels name every signalled fence's timeline alike.
 */
TEST_F(fence, sync_file_names_the_core)
{
	struct drm_rkaccel_task t = slot_job(self, 0, 400, 0, NULL);

	for (unsigned int i = 0; i < self->q.num_cores; i++) {
		uint32_t ctx = new_ctx(self, 1u << i), out = new_syncobj(self->fd);
		struct sync_fence_info fi = { 0 };
		struct sync_file_info info = { 0 };
		char want[32];
		int sfd = -1;

		ASSERT_EQ(0, sub1(self, ctx, &t, NULL, 0, out, 0));
		ASSERT_EQ(0, drmSyncobjExportSyncFile(self->fd, out, &sfd));
		info.num_fences = 1;
		info.sync_fence_info = (uintptr_t)&fi;
		ASSERT_EQ(0, ioctl(sfd, SYNC_IOC_FILE_INFO, &info));
		close(sfd);
		snprintf(want, sizeof(want), "rkaccel-core%u", i);
		EXPECT_STREQ(want, fi.obj_name);
		EXPECT_STREQ("drm_sched", fi.driver_name);
		EXPECT_EQ(0, fi.status) TH_LOG("read after the job ended");
		ASSERT_EQ(0, rkt_syncobj_wait(self->fd, out, rkt_deadline_ms(10000)));
	}
}

TEST_F(fence, in_sync_across_files)
{
	/* a job of one file waits for a job of another, through a syncobj fd */
	struct drm_rkaccel_task a_t = slot_job(self, 0, 2000, 0, NULL);
	uint32_t a = new_ctx(self, 1), a_out = new_syncobj(self->fd);
	struct drm_rkaccel_submit_bo b_bo;
	struct drm_rkaccel_task b_t;
	struct drm_rkaccel_sync in = { 0 };
	struct rkt_chain c;
	struct rkt_bo cmd2;
	uint32_t b, b_out, imp;
	int fd2, sofd;

	fd2 = rkt_open_fd();
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, rkt_bo_new(fd2, 4096, 0, &cmd2));
	ASSERT_EQ(0, rkt_chain_build(cmd2.map, cmd2.npu_addr, 4096, 0, 5, 2, 0, &c));
	b_t = rkt_chain_task(&c);
	b_bo.handle = cmd2.handle;
	b_bo.flags = 0;
	ASSERT_EQ(0, rkt_ctx_create(fd2, other_core(self), DRM_RKACCEL_PRIORITY_NORMAL, &b));
	b_out = new_syncobj(fd2);

	ASSERT_EQ(0, sub1(self, a, &a_t, NULL, 0, a_out, 0));
	ASSERT_EQ(0, drmSyncobjHandleToFD(self->fd, a_out, &sofd));
	ASSERT_EQ(0, drmSyncobjFDToHandle(fd2, sofd, &imp));
	close(sofd);
	in.handle = imp;
	ASSERT_EQ(0, rkt_submit(fd2, b, &b_t, 1, &b_bo, 1, &in, 1, b_out, 0));
	usleep(50000);
	ASSERT_EQ(-ETIME, rkt_syncobj_poll(self->fd, a_out));
	EXPECT_EQ(-ETIME, rkt_syncobj_poll(fd2, b_out)) TH_LOG("B ran before A ended");
	ASSERT_EQ(0, rkt_syncobj_wait(fd2, b_out, rkt_deadline_ms(10000)));
	EXPECT_EQ(0, rkt_syncobj_poll(self->fd, a_out));
	rkt_bo_free(fd2, &cmd2);
	close(fd2);
}

TEST_F(fence, implicit_sync_write_then_read)
{
	/* B reads a BO A writes: B starts after A without any syncobj */
	struct drm_rkaccel_task a_t = slot_job(self, 0, 2000, 0, NULL);
	struct drm_rkaccel_task b_t = slot_job(self, 1, 5, 0, NULL);
	uint32_t a = new_ctx(self, 1), b = new_ctx(self, other_core(self));
	uint32_t a_out = new_syncobj(self->fd), b_out = new_syncobj(self->fd);
	struct drm_rkaccel_submit_bo bos[2];
	struct rkt_bo data;

	ASSERT_EQ(0, rkt_bo_create(self->fd, 4096, 0, &data));
	bos[0] = self->bo;
	bos[1].handle = data.handle;
	bos[1].flags = DRM_RKACCEL_SUBMIT_BO_WRITE;
	ASSERT_EQ(0, rkt_submit(self->fd, a, &a_t, 1, bos, 2, NULL, 0, a_out, 0));
	bos[1].flags = 0;
	ASSERT_EQ(0, rkt_submit(self->fd, b, &b_t, 1, bos, 2, NULL, 0, b_out, 0));
	usleep(50000);
	ASSERT_EQ(-ETIME, rkt_syncobj_poll(self->fd, a_out));
	EXPECT_EQ(-ETIME, rkt_syncobj_poll(self->fd, b_out)) TH_LOG("reader ran before writer");
	ASSERT_EQ(0, rkt_syncobj_wait(self->fd, b_out, rkt_deadline_ms(10000)));
	EXPECT_EQ(0, rkt_syncobj_poll(self->fd, a_out));
	rkt_bo_free(self->fd, &data);
}

/* --- faults -------------------------------------------------------------- */

/* A two-task chain whose first tail points at an unmapped NPU address. */
static struct drm_rkaccel_task fault_job(FIXTURE_DATA(fence) *self, unsigned int slot)
{
	struct rkt_chain c;
	struct drm_rkaccel_task t = slot_job(self, slot, 2, 0, &c);

	rkt_chain_set_next(self->cmd.map, &c, 0, UNMAPPED_ADDR, c.entries);
	return t;
}

TEST_F(fence, fault_fence_error)
{
	uint32_t ctx = new_ctx(self, 0), out = new_syncobj(self->fd);
	struct drm_rkaccel_task t;
	struct drm_rkaccel_ctx_query cq;

	/* nothing of this file is mapped there */
	ASSERT_LE(self->cmd.npu_addr + CMD_BO_SIZE, UNMAPPED_ADDR);
	t = fault_job(self, 0);
	ASSERT_EQ(2, t.task_count);
	ASSERT_EQ(0, sub1(self, ctx, &t, NULL, 0, out, 0));
	ASSERT_EQ(0, rkt_syncobj_wait(self->fd, out, rkt_deadline_ms(10000)));
	EXPECT_GT(0, status_of(self->fd, out)) TH_LOG("fault signalled without an error");
	ASSERT_EQ(0, rkt_ctx_query(self->fd, ctx, &cq));
	EXPECT_EQ(1, cq.jobs_submitted);
	EXPECT_EQ(1, cq.jobs_failed);
	EXPECT_EQ(0, cq.jobs_completed);
}

TEST_F(fence, fault_fence_is_eio)
{
	uint32_t ctx = new_ctx(self, 0), out = new_syncobj(self->fd);
	struct drm_rkaccel_task t = fault_job(self, 0);

	ASSERT_EQ(0, sub1(self, ctx, &t, NULL, 0, out, 0));
	ASSERT_EQ(0, rkt_syncobj_wait(self->fd, out, rkt_deadline_ms(10000)));
	EXPECT_EQ(-EIO, status_of(self->fd, out));
}

/*
 * An error interrupt resets the core before the job ends (the simulator
 * counts its resets), and the core runs the next job of the same context's
 * file normally.
 */
TEST_F(fence, fault_resets_the_core)
{
	uint32_t ctx = new_ctx(self, 1), out = new_syncobj(self->fd), ok = new_syncobj(self->fd);
	struct drm_rkaccel_task t = fault_job(self, 0), good = slot_job(self, 1, 3, 0, NULL);
	uint64_t before, after;

	ASSERT_EQ(0, rkt_param_read_u64(SIM_RESETS_PATH, &before));
	ASSERT_EQ(0, sub1(self, ctx, &t, NULL, 0, out, 0));
	ASSERT_EQ(0, rkt_syncobj_wait(self->fd, out, rkt_deadline_ms(10000)));
	EXPECT_EQ(-EIO, status_of(self->fd, out));
	ASSERT_EQ(0, rkt_param_read_u64(SIM_RESETS_PATH, &after));
	EXPECT_EQ(before + 1, after) TH_LOG("the faulted core was not reset");
	ctx = new_ctx(self, 1);
	ASSERT_EQ(0, sub1(self, ctx, &good, NULL, 0, ok, 0));
	ASSERT_EQ(0, rkt_syncobj_wait(self->fd, ok, rkt_deadline_ms(10000)));
	EXPECT_EQ(1, status_of(self->fd, ok));
}

/*
 * The core cannot take the file's address space (silicon: iommu_attach_group
 * failing): SUBMIT fails before the job is armed, so it never runs on
 * another address space, and the context and the core go on.
 */
TEST_F(fence, attach_failure_fails_the_submit)
{
	uint32_t ctx = new_ctx(self, 1), ok = new_syncobj(self->fd);
	struct drm_rkaccel_task t = slot_job(self, 0, 3, 0, NULL), good = slot_job(self, 1, 3, 0, NULL);
	struct drm_rkaccel_ctx_query cq;
	uint64_t left = 1;

	ASSERT_EQ(0, rkt_param_write_u64(SIM_FAIL_ATTACH_PATH, 1));
	EXPECT_EQ(-EIO, sub1(self, ctx, &t, NULL, 0, 0, 0)) TH_LOG("queued without its address space");
	ASSERT_EQ(0, rkt_param_read_u64(SIM_FAIL_ATTACH_PATH, &left));
	EXPECT_EQ(0, left);
	ASSERT_EQ(0, rkt_ctx_query(self->fd, ctx, &cq));
	EXPECT_EQ(DRM_RKACCEL_CTX_OK, cq.state);
	EXPECT_EQ(0, cq.jobs_submitted);
	ASSERT_EQ(0, sub1(self, ctx, &good, NULL, 0, ok, 0));
	ASSERT_EQ(0, rkt_syncobj_wait(self->fd, ok, rkt_deadline_ms(10000)));
	EXPECT_EQ(1, status_of(self->fd, ok));
}

/* --- a core's address space: leased at SUBMIT, never switched in run_job -- */

/*
 * Core 0 runs a 100 ms job of this file: another file's SUBMIT to core 0
 * returns only once that job is done (the core's IOMMU is switched there,
 * not in run_job), and both jobs run.
 */
TEST_F(fence, another_file_waits_for_the_core)
{
	uint32_t ctx = new_ctx(self, 1), out = new_syncobj(self->fd);
	struct drm_rkaccel_task slow = slot_job(self, 0, 400, 0, NULL);
	struct rkt_client o;
	uint64_t t0, waited;

	ASSERT_EQ(0, rkt_client_init(&o, 1, 3));
	t0 = rkt_now_ns();
	ASSERT_EQ(0, sub1(self, ctx, &slow, NULL, 0, out, 0));
	ASSERT_EQ(0, rkt_client_submit(&o));
	waited = rkt_now_ns() - t0;
	EXPECT_LE(80 * RKT_NSEC_PER_MSEC, waited) TH_LOG("queued behind another address space");
	EXPECT_EQ(0, rkt_syncobj_wait(self->fd, out, rkt_deadline_ms(50)));
	EXPECT_EQ(1, status_of(self->fd, out));
	ASSERT_EQ(0, rkt_syncobj_wait(o.fd, o.out, rkt_deadline_ms(10000)));
	EXPECT_EQ(1, status_of(o.fd, o.out));
	rkt_client_fini(&o);
}

/*
 * This file keeps core 0 busy (four 10 ms jobs in flight, for 1.5 s):
 * another process's SUBMIT still gets the core within a few jobs, because
 * the owner's next SUBMIT yields to a waiter.
 */
TEST_F(fence, a_busy_file_yields_the_core)
{
	uint32_t ctx = new_ctx(self, 1), outs[4];
	struct drm_rkaccel_task t = slot_job(self, 0, 40, 0, NULL);
	uint64_t t0, took = UINT64_MAX;
	int go[2], res[2], status = 0;
	unsigned int i;
	pid_t pid;

	for (i = 0; i < 4; i++)
		outs[i] = new_syncobj(self->fd);
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(res));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct rkt_client o;
		uint64_t start;
		char c;

		if (rkt_client_init(&o, 1, 3) || read(go[0], &c, 1) != 1)
			_exit(2);
		start = rkt_now_ns();
		if (rkt_client_submit(&o) ||
		    rkt_syncobj_wait(o.fd, o.out, rkt_deadline_ms(10000)))
			_exit(3);
		start = rkt_now_ns() - start;
		_exit(write(res[1], &start, sizeof(start)) == sizeof(start) ? 0 : 4);
	}
	t0 = rkt_now_ns();
	for (i = 0; rkt_now_ns() - t0 < 1500 * RKT_NSEC_PER_MSEC; i++) {
		uint32_t out = outs[i % 4];

		if (i >= 4) {
			ASSERT_EQ(0, rkt_syncobj_wait(self->fd, out, rkt_deadline_ms(10000)));
		}
		ASSERT_EQ(0, sub1(self, ctx, &t, NULL, 0, out, 0));
		if (i == 8) {
			ASSERT_EQ(1, write(go[1], "g", 1));
		}
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(sizeof(took), read(res[0], &took, sizeof(took)));
	EXPECT_GT(500 * RKT_NSEC_PER_MSEC, took) TH_LOG("waited %llu ms for the core",
							 (unsigned long long)(took / RKT_NSEC_PER_MSEC));
}

/* Wait for @pid up to @ms: its exit status, or -1 (then it is killed). */
static int wait_child_ms(pid_t pid, int ms)
{
	int status = 0;

	for (; ms > 0; ms -= 10) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

/*
 * Another file waits for core 0 while this file holds it, and then three
 * processes sharing this file submit to core 0 as well: every one gets
 * through once the other file has had its turn (a yield that counted this
 * file's own waiters against it left them waiting for good).
 */
TEST_F(fence, owner_waiters_all_get_through)
{
	struct drm_rkaccel_task slow = slot_job(self, 0, 400, 0, NULL);
	struct drm_rkaccel_task t = slot_job(self, 1, 3, 0, NULL);
	uint32_t ctx = new_ctx(self, 1), out = new_syncobj(self->fd), outs[3];
	int ready[2], go[2];
	pid_t other, mine[3];
	unsigned int i;
	char c;

	for (i = 0; i < 3; i++)
		outs[i] = new_syncobj(self->fd);
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	other = fork();
	ASSERT_LE(0, other);
	if (!other) {
		struct rkt_client o;

		if (rkt_client_init(&o, 1, 3) || write(ready[1], "r", 1) != 1 ||
		    read(go[0], &c, 1) != 1)
			_exit(2);
		if (rkt_client_submit(&o) || rkt_syncobj_wait(o.fd, o.out, rkt_deadline_ms(10000)))
			_exit(3);
		_exit(0);
	}
	ASSERT_EQ(1, read(ready[0], &c, 1));
	ASSERT_EQ(0, sub1(self, ctx, &slow, NULL, 0, out, 0));
	ASSERT_EQ(1, write(go[1], "g", 1));
	usleep(30000);	/* the other file waits now, holding the next turn */
	for (i = 0; i < 3; i++) {
		mine[i] = fork();
		ASSERT_LE(0, mine[i]);
		if (!mine[i])
			_exit(sub1(self, ctx, &t, NULL, 0, outs[i], 0) ? 3 : 0);
	}
	EXPECT_EQ(0, wait_child_ms(other, 5000)) TH_LOG("the other file never got the core");
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(0, wait_child_ms(mine[i], 5000)) TH_LOG("this file's waiter %u stuck", i);
	}
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(0, rkt_syncobj_wait(self->fd, outs[i], rkt_deadline_ms(10000)));
	}
}

TEST_F(fence, fault_is_quick)
{
	/* a fault ends the job at once, not through the 500 ms timeout */
	uint32_t ctx = new_ctx(self, 0), out = new_syncobj(self->fd);
	struct drm_rkaccel_task t = fault_job(self, 0);
	uint64_t t0 = rkt_now_ns();

	ASSERT_EQ(0, sub1(self, ctx, &t, NULL, 0, out, 0));
	ASSERT_EQ(0, rkt_syncobj_wait(self->fd, out, rkt_deadline_ms(10000)));
	EXPECT_GT(400 * RKT_NSEC_PER_MSEC, rkt_now_ns() - t0);
}

TEST_F(fence, fault_keeps_ctx_ok)
{
	uint32_t ctx = new_ctx(self, 0), out = new_syncobj(self->fd);
	struct drm_rkaccel_task bad = fault_job(self, 0), good = slot_job(self, 1, 10, 0, NULL);
	struct drm_rkaccel_ctx_query cq;

	ASSERT_EQ(0, sub1(self, ctx, &bad, NULL, 0, out, 0));
	ASSERT_EQ(0, rkt_syncobj_wait(self->fd, out, rkt_deadline_ms(10000)));
	ASSERT_EQ(0, rkt_ctx_query(self->fd, ctx, &cq));
	EXPECT_EQ(DRM_RKACCEL_CTX_OK, cq.state) TH_LOG("a fault made the context guilty");
	EXPECT_EQ(0, cq.reset_count);

	ASSERT_EQ(0, sub1(self, ctx, &good, NULL, 0, out, 0));
	ASSERT_EQ(0, rkt_syncobj_wait(self->fd, out, rkt_deadline_ms(10000)));
	EXPECT_EQ(1, status_of(self->fd, out));
	ASSERT_EQ(0, rkt_ctx_query(self->fd, ctx, &cq));
	EXPECT_EQ(2, cq.jobs_submitted);
	EXPECT_EQ(1, cq.jobs_completed);
	EXPECT_EQ(1, cq.jobs_failed);
}

TEST_F(fence, fault_on_every_core_then_jobs)
{
	for (unsigned int k = 0; k < self->q.num_cores; k++) {
		uint32_t ctx = new_ctx(self, 1u << k), out = new_syncobj(self->fd);
		struct drm_rkaccel_task bad = fault_job(self, 2 * k);
		struct drm_rkaccel_task good = slot_job(self, 2 * k + 1, 10, 0, NULL);

		ASSERT_NE(0, ctx);
		ASSERT_EQ(0, sub1(self, ctx, &bad, NULL, 0, out, 0));
		ASSERT_EQ(0, rkt_syncobj_wait(self->fd, out, rkt_deadline_ms(10000)));
		EXPECT_GT(0, status_of(self->fd, out)) TH_LOG("core %u", k);
		ASSERT_EQ(0, sub1(self, ctx, &good, NULL, 0, out, 0));
		ASSERT_EQ(0, rkt_syncobj_wait(self->fd, out, rkt_deadline_ms(10000)));
		EXPECT_EQ(1, status_of(self->fd, out)) TH_LOG("core %u after a fault", k);
	}
}

/* --- hangs --------------------------------------------------------------- */

TEST_F(fence, hang_fence_error)
{
	uint32_t ctx = new_ctx(self, 0), out = new_syncobj(self->fd);
	struct drm_rkaccel_task t = slot_job(self, 0, 1, RKT_CHAIN_NO_ENABLE, NULL);
	uint64_t t0, dt;

	t0 = rkt_now_ns();
	ASSERT_EQ(0, sub1(self, ctx, &t, NULL, 0, out, 0));
	ASSERT_EQ(0, rkt_syncobj_wait(self->fd, out, rkt_deadline_ms(10000)))
		TH_LOG("the hung job never ended");
	dt = rkt_now_ns() - t0;
	EXPECT_GT(0, status_of(self->fd, out)) TH_LOG("hung job signalled without an error");
	/* the driver's timeout: 500 ms, 2 s in the debug guests */
	EXPECT_LE(450 * RKT_NSEC_PER_MSEC, dt) TH_LOG("ended after %llu ms",
						      (unsigned long long)dt / 1000000);
	EXPECT_GT(5000 * RKT_NSEC_PER_MSEC, dt);
}

TEST_F(fence, hang_fence_is_ecanceled)
{
	uint32_t ctx = new_ctx(self, 0), out = new_syncobj(self->fd);
	struct drm_rkaccel_task t = slot_job(self, 0, 1, RKT_CHAIN_NO_ENABLE, NULL);

	ASSERT_EQ(0, sub1(self, ctx, &t, NULL, 0, out, 0));
	ASSERT_EQ(0, rkt_syncobj_wait(self->fd, out, rkt_deadline_ms(10000)));
	EXPECT_EQ(-ECANCELED, status_of(self->fd, out));
}

TEST_F(fence, hang_later_task_of_chain)
{
	/* a chain whose 3rd task lacks the enable entry hangs the same way */
	struct rkt_chain c;
	struct drm_rkaccel_task t = slot_job(self, 0, 5, 0, &c);
	uint32_t ctx = new_ctx(self, 0), out = new_syncobj(self->fd);
	uint64_t *third = (uint64_t *)((char *)self->cmd.map + c.offset + 2 * c.stride);
	struct drm_rkaccel_ctx_query cq;

	third[c.entries - 1] = rkt_regcmd(RKT_TGT_NOP, 0, 0);
	ASSERT_EQ(0, sub1(self, ctx, &t, NULL, 0, out, 0));
	ASSERT_EQ(0, rkt_syncobj_wait(self->fd, out, rkt_deadline_ms(10000)));
	EXPECT_GT(0, status_of(self->fd, out));
	ASSERT_EQ(0, rkt_ctx_query(self->fd, ctx, &cq));
	EXPECT_EQ(DRM_RKACCEL_CTX_GUILTY, cq.state);
}

TEST_F(fence, hang_marks_guilty)
{
	uint32_t ctx = new_ctx(self, 0), out = new_syncobj(self->fd);
	struct drm_rkaccel_task t = slot_job(self, 0, 1, RKT_CHAIN_NO_ENABLE, NULL);
	struct drm_rkaccel_task good = slot_job(self, 1, 5, 0, NULL);
	struct drm_rkaccel_ctx_query cq;

	ASSERT_EQ(0, sub1(self, ctx, &t, NULL, 0, out, 0));
	ASSERT_EQ(0, rkt_syncobj_wait(self->fd, out, rkt_deadline_ms(10000)));
	ASSERT_EQ(0, rkt_ctx_query(self->fd, ctx, &cq));
	EXPECT_EQ(DRM_RKACCEL_CTX_GUILTY, cq.state);
	EXPECT_LE(1, cq.reset_count);
	EXPECT_EQ(1, cq.jobs_failed);
	EXPECT_EQ(0, cq.jobs_completed);
	EXPECT_EQ(-ECANCELED, sub1(self, ctx, &good, NULL, 0, out, 0));
}

TEST_F(fence, hang_cancels_queued_jobs_of_guilty)
{
	/* jobs queued behind the hang on the same context are cancelled */
	uint32_t ctx = new_ctx(self, 1), out = new_syncobj(self->fd), out2 = new_syncobj(self->fd);
	struct drm_rkaccel_task t = slot_job(self, 0, 1, RKT_CHAIN_NO_ENABLE, NULL);
	struct drm_rkaccel_task good = slot_job(self, 1, 5, 0, NULL);

	ASSERT_EQ(0, sub1(self, ctx, &t, NULL, 0, out, 0));
	ASSERT_EQ(0, sub1(self, ctx, &good, NULL, 0, out2, 0));
	ASSERT_EQ(0, rkt_syncobj_wait(self->fd, out2, rkt_deadline_ms(10000)));
	EXPECT_GT(0, status_of(self->fd, out2)) TH_LOG("a guilty context's queued job ran");
}

TEST_F(fence, hang_spares_other_contexts)
{
	/*
	 * B shares the hung core: a job of B before the hang, one queued
	 * behind it and one after it all complete; C on another core too.
	 */
	struct drm_rkaccel_task hang = slot_job(self, 0, 1, RKT_CHAIN_NO_ENABLE, NULL);
	struct drm_rkaccel_task bt[3] = {
		slot_job(self, 1, 200, 0, NULL), slot_job(self, 2, 10, 0, NULL),
		slot_job(self, 3, 10, 0, NULL),
	};
	struct drm_rkaccel_task ct = slot_job(self, 4, 3000, 0, NULL);
	uint32_t a = new_ctx(self, 1), b = new_ctx(self, 1), c = new_ctx(self, other_core(self));
	uint32_t a_out = new_syncobj(self->fd), c_out = new_syncobj(self->fd);
	uint32_t b_out[3] = { new_syncobj(self->fd), new_syncobj(self->fd),
			      new_syncobj(self->fd) };
	struct drm_rkaccel_ctx_query cq;

	ASSERT_EQ(0, sub1(self, b, &bt[0], NULL, 0, b_out[0], 0));	/* before */
	ASSERT_EQ(0, sub1(self, c, &ct, NULL, 0, c_out, 0));
	ASSERT_EQ(0, sub1(self, a, &hang, NULL, 0, a_out, 0));
	ASSERT_EQ(0, sub1(self, b, &bt[1], NULL, 0, b_out[1], 0));	/* behind it */
	ASSERT_EQ(0, rkt_syncobj_wait(self->fd, a_out, rkt_deadline_ms(10000)));
	ASSERT_EQ(0, sub1(self, b, &bt[2], NULL, 0, b_out[2], 0));	/* after */

	for (int i = 0; i < 3; i++) {
		ASSERT_EQ(0, rkt_syncobj_wait(self->fd, b_out[i], rkt_deadline_ms(10000)))
			TH_LOG("B job %d never ended", i);
		EXPECT_EQ(1, status_of(self->fd, b_out[i])) TH_LOG("B job %d", i);
	}
	ASSERT_EQ(0, rkt_syncobj_wait(self->fd, c_out, rkt_deadline_ms(10000)));
	EXPECT_EQ(1, status_of(self->fd, c_out));

	ASSERT_EQ(0, rkt_ctx_query(self->fd, b, &cq));
	EXPECT_EQ(DRM_RKACCEL_CTX_OK, cq.state);
	EXPECT_EQ(0, cq.reset_count);
	EXPECT_EQ(3, cq.jobs_completed);
	EXPECT_EQ(0, cq.jobs_failed);
	ASSERT_EQ(0, rkt_ctx_query(self->fd, c, &cq));
	EXPECT_EQ(DRM_RKACCEL_CTX_OK, cq.state);
	EXPECT_EQ(1, cq.jobs_completed);
	ASSERT_EQ(0, rkt_ctx_query(self->fd, a, &cq));
	EXPECT_EQ(DRM_RKACCEL_CTX_GUILTY, cq.state);
}

TEST_F(fence, hang_other_file_unaffected)
{
	/* a file whose context hung; another file's context on that core runs on */
	struct drm_rkaccel_task hang = slot_job(self, 0, 1, RKT_CHAIN_NO_ENABLE, NULL);
	uint32_t a = new_ctx(self, 1), a_out = new_syncobj(self->fd);
	struct drm_rkaccel_submit_bo bo2;
	struct drm_rkaccel_task t2;
	struct drm_rkaccel_ctx_query cq;
	struct rkt_chain c;
	struct rkt_bo cmd2;
	uint32_t b, b_out;
	int fd2 = rkt_open_fd(), status = 0;

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, rkt_bo_new(fd2, 4096, 0, &cmd2));
	ASSERT_EQ(0, rkt_chain_build(cmd2.map, cmd2.npu_addr, 4096, 0, 10, 2, 0, &c));
	t2 = rkt_chain_task(&c);
	bo2.handle = cmd2.handle;
	bo2.flags = 0;
	ASSERT_EQ(0, rkt_ctx_create(fd2, 1, DRM_RKACCEL_PRIORITY_NORMAL, &b));
	b_out = new_syncobj(fd2);

	ASSERT_EQ(0, sub1(self, a, &hang, NULL, 0, a_out, 0));
	ASSERT_EQ(0, rkt_submit(fd2, b, &t2, 1, &bo2, 1, NULL, 0, b_out, 0));
	ASSERT_EQ(0, rkt_syncobj_wait(fd2, b_out, rkt_deadline_ms(10000)));
	ASSERT_EQ(0, rkt_syncobj_status(fd2, b_out, &status));
	EXPECT_EQ(1, status);
	ASSERT_EQ(0, rkt_ctx_query(fd2, b, &cq));
	EXPECT_EQ(DRM_RKACCEL_CTX_OK, cq.state);
	EXPECT_EQ(0, cq.reset_count);
	rkt_bo_free(fd2, &cmd2);
	close(fd2);
}

TEST_F(fence, hang_then_new_context_works)
{
	/* a bad run before a normal run leaves the core healthy */
	for (unsigned int k = 0; k < self->q.num_cores; k++) {
		struct drm_rkaccel_task hang = slot_job(self, 2 * k, 1, RKT_CHAIN_NO_ENABLE, NULL);
		struct drm_rkaccel_task good = slot_job(self, 2 * k + 1, 50, 0, NULL);
		uint32_t bad = new_ctx(self, 1u << k), ok = new_ctx(self, 1u << k);
		uint32_t out = new_syncobj(self->fd);
		struct drm_rkaccel_ctx_query cq;

		ASSERT_EQ(0, sub1(self, bad, &hang, NULL, 0, out, 0));
		ASSERT_EQ(0, rkt_syncobj_wait(self->fd, out, rkt_deadline_ms(10000)));
		ASSERT_EQ(0, sub1(self, ok, &good, NULL, 0, out, 0));
		ASSERT_EQ(0, rkt_syncobj_wait(self->fd, out, rkt_deadline_ms(10000)));
		EXPECT_EQ(1, status_of(self->fd, out)) TH_LOG("core %u after a reset", k);
		ASSERT_EQ(0, rkt_ctx_query(self->fd, ok, &cq));
		EXPECT_EQ(k, cq.last_core);
	}
}

TEST_F(fence, hang_in_sync_dependent_job)
{
	/* a job waiting for a hung job's fence still ends (with or without error) */
	struct drm_rkaccel_task hang = slot_job(self, 0, 1, RKT_CHAIN_NO_ENABLE, NULL);
	struct drm_rkaccel_task good = slot_job(self, 1, 5, 0, NULL);
	uint32_t a = new_ctx(self, 1), b = new_ctx(self, other_core(self));
	uint32_t a_out = new_syncobj(self->fd), b_out = new_syncobj(self->fd);
	struct drm_rkaccel_sync in = { .handle = a_out };

	ASSERT_EQ(0, sub1(self, a, &hang, NULL, 0, a_out, 0));
	ASSERT_EQ(0, sub1(self, b, &good, &in, 1, b_out, 0));
	EXPECT_EQ(0, rkt_syncobj_wait(self->fd, b_out, rkt_deadline_ms(10000)))
		TH_LOG("a dependent of a hung job never ended");
	EXPECT_EQ(0, rkt_syncobj_poll(self->fd, a_out));
}

TEST_HARNESS_MAIN
