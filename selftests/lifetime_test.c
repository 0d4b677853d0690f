// SPDX-License-Identifier: GPL-2.0-only
/*
 * Object lifetimes against jobs in flight: a context destroyed while another
 * thread submits to it, context handle 0, a BO handle closed under a queued
 * job, a file closed with jobs queued on every core, and the module removed
 * while a closed file's job still runs.
 */

#include <linux/sync_file.h>
#include <poll.h>
#include <pthread.h>
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "rkaccel_test.h"
#include "regcmd.h"

FIXTURE(life) {
	struct rkaccel_device *dev;
	int fd;
	struct drm_rkaccel_query q;
	uint64_t sim_ns;
};

FIXTURE_SETUP(life)
{
	ASSERT_EQ(0, rkaccel_open(NULL, &self->dev)) TH_LOG("no rkaccel device node");
	self->fd = rkaccel_fd(self->dev);
	ASSERT_EQ(0, rkt_query(self->fd, &self->q));
	ASSERT_EQ(0, rkt_param_read_u64(RKT_SIM_TASK_NS_PATH, &self->sim_ns));
}

FIXTURE_TEARDOWN(life)
{
	rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, self->sim_ns);
	rkaccel_close(self->dev);
}

/* A chain of @n tasks at the start of a new BO of @fd. */
static int chain_bo(int fd, uint32_t n, struct rkt_bo *bo, struct drm_rkaccel_task *t)
{
	struct rkt_chain c;
	int ret = rkt_bo_new(fd, rkt_chain_bytes(n, 2), 0, bo);

	if (ret)
		return ret;
	ret = rkt_chain_build(bo->map, bo->npu_addr, bo->map_len, 0, n, 2, 0, &c);
	if (!ret)
		*t = rkt_chain_task(&c);
	return ret;
}

/* The sync_file of a syncobj's fence: it outlives the file it came from. */
static int export_fence(int fd, uint32_t syncobj)
{
	int sfd = -1;

	return drmSyncobjExportSyncFile(fd, syncobj, &sfd) ? -1 : sfd;
}

/* 1 signalled, 0 pending, < 0 the fence's error. */
static int sync_file_status(int sfd)
{
	struct sync_file_info info = { 0 };

	if (ioctl(sfd, SYNC_IOC_FILE_INFO, &info))
		return -errno;
	return info.status;
}

static int sync_file_wait(int sfd, int ms)
{
	struct pollfd p = { .fd = sfd, .events = POLLIN };

	return poll(&p, 1, ms) == 1 ? 0 : -ETIME;
}

TEST_F(life, ctx_handles_never_zero)
{
	uint32_t a, b, c;

	ASSERT_EQ(0, rkt_ctx_create(self->fd, 0, DRM_RKACCEL_PRIORITY_NORMAL, &a));
	ASSERT_EQ(0, rkt_ctx_create(self->fd, 0, DRM_RKACCEL_PRIORITY_NORMAL, &b));
	EXPECT_NE(0, a);
	EXPECT_NE(0, b);
	/* a failed destroy changes nothing: handle 0 must not be handed out */
	EXPECT_EQ(-ENOENT, rkt_ctx_destroy(self->fd, 0));
	ASSERT_EQ(0, rkt_ctx_create(self->fd, 0, DRM_RKACCEL_PRIORITY_NORMAL, &c));
	EXPECT_NE(0, c) TH_LOG("CTX_DESTROY(0) freed handle 0 for the next create");
	EXPECT_EQ(-ENOENT, rkt_ctx_destroy(self->fd, 0));
	EXPECT_EQ(0, rkt_ctx_destroy(self->fd, a));
	EXPECT_EQ(0, rkt_ctx_destroy(self->fd, b));
	EXPECT_EQ(0, rkt_ctx_destroy(self->fd, c));
}

struct race {
	int fd;
	uint32_t ctx;
	const struct drm_rkaccel_task *t;
	struct drm_rkaccel_submit_bo bo;
	uint32_t out[64];
	int ret[64];
	int n;
};

static void *race_submit(void *arg)
{
	struct race *r = arg;

	for (r->n = 0; r->n < 64; r->n++) {
		r->ret[r->n] = rkt_submit(r->fd, r->ctx, r->t, 1, &r->bo, 1, NULL, 0,
					  r->out[r->n], 0);
		if (r->ret[r->n])
			break;
	}
	return NULL;
}

TEST_F_TIMEOUT(life, submit_racing_ctx_destroy, 120)
{
	/*
	 * Each round one thread submits until it fails while the other
	 * destroys the context: every submit that returned 0 must signal.
	 */
	struct drm_rkaccel_task t;
	struct rkt_bo cmd;
	long ctxs = -1, bos = -1;
	int lost = 0, accepted = 0;

	ASSERT_EQ(0, chain_bo(self->fd, 2, &cmd, &t));
	ASSERT_EQ(0, rkt_debugfs_count("contexts", &ctxs));
	ASSERT_EQ(0, rkt_debugfs_count("bos", &bos));
	for (int round = 0; round < 100; round++) {
		struct race r = { .fd = self->fd, .t = &t, .bo = { .handle = cmd.handle } };
		pthread_t th;

		for (int i = 0; i < 64; i++) {
			ASSERT_EQ(0, rkt_syncobj_create(self->fd, &r.out[i]));
		}
		ASSERT_EQ(0, rkt_ctx_create(self->fd, 0, DRM_RKACCEL_PRIORITY_NORMAL, &r.ctx));
		ASSERT_EQ(0, pthread_create(&th, NULL, race_submit, &r));
		usleep(round % 7 * 100);
		ASSERT_EQ(0, rkt_ctx_destroy(self->fd, r.ctx));
		pthread_join(th, NULL);
		for (int i = 0; i < r.n && i < 64; i++) {
			int st = 0;

			accepted++;
			if (rkt_syncobj_wait(self->fd, r.out[i], rkt_deadline_ms(5000)) ||
			    rkt_syncobj_status(self->fd, r.out[i], &st) || st == 0)
				lost++;
		}
		if (r.n < 64) {
			EXPECT_EQ(-ENOENT, r.ret[r.n]) TH_LOG("submit to a destroyed context");
		}
		for (int i = 0; i < 64; i++)
			drmSyncobjDestroy(self->fd, r.out[i]);
	}
	TH_LOG("%d submits accepted across 100 destroys", accepted);
	EXPECT_EQ(0, lost) TH_LOG("accepted submits whose fence never signalled");
	EXPECT_EQ(ctxs, rkt_debugfs_settle("contexts", ctxs));
	rkt_bo_free(self->fd, &cmd);
	EXPECT_EQ(bos - 1, rkt_debugfs_settle("bos", bos - 1));
}

TEST_F(life, handle_closed_under_queued_job)
{
	/*
	 * The job behind a 300 ms one uses a BO whose only handle is closed
	 * before it runs: it still reaches the BO and completes.
	 */
	struct drm_rkaccel_task t1, t2;
	struct rkt_bo a, b;
	uint32_t ctx, out1, out2;
	struct drm_rkaccel_submit_bo ba = { .handle = 0 }, bb = { .handle = 0 };
	int st = 0;

	ASSERT_EQ(0, rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, 100000));
	ASSERT_EQ(0, chain_bo(self->fd, 3000, &a, &t1));
	ASSERT_EQ(0, chain_bo(self->fd, 5, &b, &t2));
	ba.handle = a.handle;
	bb.handle = b.handle;
	ASSERT_EQ(0, rkt_ctx_create(self->fd, 1, DRM_RKACCEL_PRIORITY_NORMAL, &ctx));
	ASSERT_EQ(0, rkt_syncobj_create(self->fd, &out1));
	ASSERT_EQ(0, rkt_syncobj_create(self->fd, &out2));
	ASSERT_EQ(0, rkt_submit(self->fd, ctx, &t1, 1, &ba, 1, NULL, 0, out1, 0));
	ASSERT_EQ(0, rkt_submit(self->fd, ctx, &t2, 1, &bb, 1, NULL, 0, out2, 0));
	EXPECT_EQ(-ETIME, rkt_syncobj_poll(self->fd, out2)) TH_LOG("second job ran too early");
	rkt_bo_free(self->fd, &b);
	ASSERT_EQ(0, rkt_syncobj_wait(self->fd, out2, rkt_deadline_ms(10000)));
	ASSERT_EQ(0, rkt_syncobj_status(self->fd, out2, &st));
	EXPECT_EQ(1, st) TH_LOG("the job lost its BO with the handle (fence error %d)", st);
	rkt_bo_free(self->fd, &a);
	rkt_ctx_destroy(self->fd, ctx);
}

TEST_F_TIMEOUT(life, close_with_queued_jobs_runs_them, 120)
{
	/*
	 * 30 jobs queued on each core, then the file is closed: every job
	 * runs to completion (Documentation/design.rst, "Closing a file").
	 */
	const unsigned int per_core = 30;
	unsigned int cores = self->q.num_cores, n = cores * per_core, ok = 0, bad = 0;
	int fd = rkt_open_fd(), sfd[3 * 30];
	struct drm_rkaccel_task t[3];
	struct rkt_bo cmd[3];
	uint32_t ctx[3];
	long bos = -1;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, 100000));
	ASSERT_EQ(0, rkt_debugfs_count("bos", &bos));
	for (unsigned int c = 0; c < cores; c++) {
		ASSERT_EQ(0, chain_bo(fd, 20, &cmd[c], &t[c]));
		ASSERT_EQ(0, rkt_ctx_create(fd, 1u << c, DRM_RKACCEL_PRIORITY_NORMAL, &ctx[c]));
	}
	for (unsigned int i = 0; i < n; i++) {
		unsigned int c = i % cores;
		struct drm_rkaccel_submit_bo b = { .handle = cmd[c].handle };
		uint32_t out;

		ASSERT_EQ(0, rkt_syncobj_create(fd, &out));
		ASSERT_EQ(0, rkt_submit(fd, ctx[c], &t[c], 1, &b, 1, NULL, 0, out, 0));
		sfd[i] = export_fence(fd, out);
		ASSERT_LE(0, sfd[i]);
	}
	for (unsigned int c = 0; c < cores; c++)
		munmap(cmd[c].map, cmd[c].map_len);
	close(fd);	/* handles, contexts and the file go with the jobs queued */

	for (unsigned int i = 0; i < n; i++) {
		int st;

		EXPECT_EQ(0, sync_file_wait(sfd[i], 20000));
		st = sync_file_status(sfd[i]);
		if (st == 1)
			ok++;
		else
			bad++;
		close(sfd[i]);
	}
	TH_LOG("%u of %u jobs queued at close completed", ok, n);
	EXPECT_EQ(0, bad);
	EXPECT_EQ(bos, rkt_debugfs_settle("bos", bos));
}

TEST_F_TIMEOUT(life, killed_fork_child_with_the_last_fd_lets_jobs_run, 120)
{
	/*
	 * A child forked with the file open holds the last reference when
	 * the parent has closed it; SIGKILLed, the child's exit releases the
	 * file. It submitted nothing: the queued jobs still run. Before,
	 * drm_sched_entity_destroy() gave an exiting task 1 s and then
	 * cancelled the rest with -ESRCH.
	 */
	const unsigned int n = 60;	/* 40 ms each on one core: 2.4 s queued */
	unsigned int ok = 0, bad = 0;
	int fd = rkt_open_fd(), sfd[60], status;
	struct drm_rkaccel_task t;
	struct rkt_bo cmd;
	uint32_t ctx;
	pid_t pid;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, 2000000));
	ASSERT_EQ(0, chain_bo(fd, 20, &cmd, &t));
	ASSERT_EQ(0, rkt_ctx_create(fd, 1, DRM_RKACCEL_PRIORITY_NORMAL, &ctx));
	for (unsigned int i = 0; i < n; i++) {
		struct drm_rkaccel_submit_bo b = { .handle = cmd.handle };
		uint32_t out;

		ASSERT_EQ(0, rkt_syncobj_create(fd, &out));
		ASSERT_EQ(0, rkt_submit(fd, ctx, &t, 1, &b, 1, NULL, 0, out, 0));
		sfd[i] = export_fence(fd, out);
		ASSERT_LE(0, sfd[i]);
	}
	munmap(cmd.map, cmd.map_len);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		for (;;)
			pause();
	}
	close(fd);	/* the child's copy is the last */
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	for (unsigned int i = 0; i < n; i++) {
		EXPECT_EQ(0, sync_file_wait(sfd[i], 30000));
		if (sync_file_status(sfd[i]) == 1)
			ok++;
		else
			bad++;
		close(sfd[i]);
	}
	TH_LOG("%u of %u jobs queued when the child died completed", ok, n);
	EXPECT_EQ(0, bad);
}

TEST_F_TIMEOUT(life, rmmod_with_closed_files_job_running, 120)
{
	/*
	 * A file closed with a long job running: the job keeps the module
	 * (and so the device) until it ended, and a sync_file of its fence
	 * keeps it until closed. Before, removal went ahead under the job:
	 * "Memory manager not clean during takedown", leaked BOs, and a
	 * fence whose ops were unloaded (the guest's checks see each).
	 */
	struct drm_rkaccel_task t;
	struct drm_rkaccel_submit_bo b;
	struct rkt_bo cmd;
	char sim[32];
	uint32_t ctx, out;
	int fd, sfd;

	if (access(RKT_DRIVER_MODULE, R_OK) || access(RKT_SIM_MODULE, R_OK))
		SKIP(return, "needs the guest's /modules/rkaccel.ko and rkaccel_sim.ko");
	rkt_sim_module_params(sim, sizeof(sim));
	ASSERT_EQ(0, rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, 250000));
	fd = rkt_open_fd();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, chain_bo(fd, 4000 < self->q.max_tasks ? 4000 : self->q.max_tasks,
			      &cmd, &t));
	b.handle = cmd.handle;
	b.flags = 0;
	ASSERT_EQ(0, rkt_ctx_create(fd, 0, DRM_RKACCEL_PRIORITY_NORMAL, &ctx));
	ASSERT_EQ(0, rkt_syncobj_create(fd, &out));
	ASSERT_EQ(0, rkt_submit(fd, ctx, &t, 1, &b, 1, NULL, 0, out, 0));
	sfd = export_fence(fd, out);
	ASSERT_LE(0, sfd);
	munmap(cmd.map, cmd.map_len);
	close(fd);
	rkaccel_close(self->dev);
	self->dev = NULL;

	/* the file's jobs pin both: the driver and the simulator under it */
	EXPECT_EQ(-EWOULDBLOCK, rkt_module_remove("rkaccel_sim", 0))
		TH_LOG("the simulator went under a running job");
	EXPECT_EQ(-EWOULDBLOCK, rkt_module_remove("rkaccel", 0))
		TH_LOG("the module went under a running job");
	ASSERT_EQ(0, sync_file_wait(sfd, 20000));
	EXPECT_EQ(1, sync_file_status(sfd));
	/* the job is freed a little after its fence; the sync_file still pins */
	usleep(200000);
	EXPECT_EQ(-EWOULDBLOCK, rkt_module_remove("rkaccel", 0))
		TH_LOG("the module went under a live fence");
	close(sfd);
	ASSERT_EQ(0, rkt_modules_remove(5000)) TH_LOG("nothing holds the modules, yet they stay");
	ASSERT_EQ(0, rkt_modules_load(sim));
	ASSERT_EQ(0, rkaccel_open(NULL, &self->dev));
}

TEST_HARNESS_MAIN
