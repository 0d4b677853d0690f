// SPDX-License-Identifier: GPL-2.0-only
/*
 * Stress and leaks: many files, many jobs, many threads submitting at once;
 * afterwards nothing is left behind (debugfs object counts, shmem pages,
 * fdinfo).
 */

#include <pthread.h>

#include "kselftest_harness.h"
#include "rkaccel_test.h"
#include "regcmd.h"
#include "client.h"

FIXTURE(stress) {
	struct rkaccel_device *dev;
	int fd;
	struct drm_rkaccel_query q;
};

FIXTURE_SETUP(stress)
{
	ASSERT_EQ(0, rkaccel_open(NULL, &self->dev)) TH_LOG("no rkaccel device node");
	self->fd = rkaccel_fd(self->dev);
	ASSERT_EQ(0, rkt_query(self->fd, &self->q));
}

FIXTURE_TEARDOWN(stress)
{
	rkaccel_close(self->dev);
}

/* Shmem of /proc/meminfo in KiB: what shmem-backed BOs use. */
static long shmem_kib(void)
{
	char line[128];
	long kib = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Shmem:", 6)) {
			kib = strtol(line + 6, NULL, 10);
			break;
		}
	fclose(f);
	return kib;
}

TEST_F_TIMEOUT(stress, many_files, 120)
{
	long bos0 = -1, ctxs0 = -1, files0 = -1, shm0, shm1;
	bool have_debugfs = !rkt_debugfs_count("bos", &bos0) &&
			    !rkt_debugfs_count("contexts", &ctxs0) &&
			    !rkt_debugfs_count("files", &files0);
	uint64_t total;

	shm0 = shmem_kib();
	for (int i = 0; i < 100; i++) {
		struct rkt_client c;

		ASSERT_EQ(0, rkt_client_init(&c, 0, 4)) TH_LOG("file %d", i);
		/* a 1 MiB BO more, so that a leak shows in shmem */
		{
			struct rkt_bo big;

			ASSERT_EQ(0, rkt_bo_create(c.fd, 1 << 20, i & 1 ? DRM_RKACCEL_BO_WEIGHT : 0,
						   &big));
		}
		if (i % 4 == 0) {
			ASSERT_EQ(0, rkt_submit(c.fd, c.ctx, &c.task, 1, &c.bo, 1, NULL, 0,
						c.out, 0));
			if (i % 8 == 0) {
				ASSERT_EQ(0, rkt_syncobj_wait(c.fd, c.out, rkt_deadline_ms(5000)));
			}
		}
		rkt_client_fini(&c);
	}

	if (have_debugfs) {
		EXPECT_EQ(bos0, rkt_debugfs_settle("bos", bos0)) TH_LOG("BOs leaked");
		EXPECT_EQ(ctxs0, rkt_debugfs_settle("contexts", ctxs0)) TH_LOG("contexts leaked");
		EXPECT_EQ(files0, rkt_debugfs_settle("files", files0)) TH_LOG("files leaked");
	}
	shm1 = shmem_kib();
	if (shm0 >= 0 && shm1 >= 0) {
		EXPECT_GT(shm0 + 32 * 1024, shm1)
			TH_LOG("shmem %ld -> %ld KiB after 100 x 1 MiB closed", shm0, shm1);
	}

	/* a fresh file starts empty and works */
	{
		struct rkt_client c;

		ASSERT_EQ(0, rkt_client_init(&c, 0, 4));
		ASSERT_EQ(0, rkt_gem_close(c.fd, c.cmd.handle));
		c.cmd.handle = 0;
		ASSERT_EQ(0, rkt_fdinfo_u64(c.fd, "drm-total-memory", &total));
		EXPECT_EQ(0, total);
		rkt_client_fini(&c);
	}
}

TEST_F_TIMEOUT(stress, many_jobs, 120)
{
	enum { JOBS = 500 };
	uint32_t ctx[3], tl[3];
	uint64_t points[3] = { 0 };
	struct rkt_client c;
	uint64_t done = 0;

	ASSERT_EQ(0, rkt_client_init(&c, 0, 3));
	for (uint32_t i = 0; i < self->q.num_cores; i++) {
		ASSERT_EQ(0, rkt_ctx_create(c.fd, 0, DRM_RKACCEL_PRIORITY_NORMAL, &ctx[i]));
		ASSERT_EQ(0, drmSyncobjCreate(c.fd, 0, &tl[i]));
	}
	for (int j = 0; j < JOBS; j++) {
		uint32_t k = j % self->q.num_cores;

		ASSERT_EQ(0, rkt_submit(c.fd, ctx[k], &c.task, 1, &c.bo, 1, NULL, 0, tl[k],
					++points[k])) TH_LOG("job %d", j);
	}
	ASSERT_EQ(0, drmSyncobjTimelineWait(c.fd, tl, points, self->q.num_cores,
					    rkt_deadline_ms(60000),
					    DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL, NULL));
	for (uint32_t i = 0; i < self->q.num_cores; i++) {
		struct drm_rkaccel_ctx_query cq;

		ASSERT_EQ(0, rkt_ctx_query(c.fd, ctx[i], &cq));
		EXPECT_EQ(points[i], cq.jobs_submitted);
		EXPECT_EQ(points[i], cq.jobs_completed);
		EXPECT_EQ(0, cq.jobs_failed);
		done += cq.jobs_completed;
	}
	EXPECT_EQ(JOBS, done);
	rkt_client_fini(&c);
}

TEST_F_TIMEOUT(stress, many_jobs_no_leak, 120)
{
	/* 500 jobs, then everything closed: BO and context counts back */
	long bos0, ctxs0;
	struct rkt_client c;

	if (rkt_debugfs_count("bos", &bos0) || rkt_debugfs_count("contexts", &ctxs0))
		SKIP(return, "no object counts in debugfs");
	ASSERT_EQ(0, rkt_client_init(&c, 0, 2));
	for (int j = 0; j < 500; j++) {
		ASSERT_EQ(0, rkt_submit(c.fd, c.ctx, &c.task, 1, &c.bo, 1, NULL, 0, c.out, 0));
	}
	ASSERT_EQ(0, rkt_syncobj_wait(c.fd, c.out, rkt_deadline_ms(60000)));
	rkt_client_fini(&c);
	EXPECT_EQ(bos0, rkt_debugfs_settle("bos", bos0));
	EXPECT_EQ(ctxs0, rkt_debugfs_settle("contexts", ctxs0));
}

TEST_F(stress, debugfs_counts_follow_objects)
{
	long bos0, bos1, ctxs0, ctxs1, files0, files1;
	struct rkt_bo b[10];
	uint32_t h[5];
	int fd;

	if (rkt_debugfs_count("bos", &bos0) || rkt_debugfs_count("contexts", &ctxs0) ||
	    rkt_debugfs_count("files", &files0))
		SKIP(return, "no object counts in debugfs");
	fd = rkt_open_fd();
	ASSERT_LE(0, fd);
	for (int i = 0; i < 10; i++) {
		ASSERT_EQ(0, rkt_bo_create(fd, 4096, 0, &b[i]));
	}
	for (int i = 0; i < 5; i++) {
		ASSERT_EQ(0, rkt_ctx_create(fd, 0, DRM_RKACCEL_PRIORITY_NORMAL, &h[i]));
	}
	ASSERT_EQ(0, rkt_debugfs_count("bos", &bos1));
	ASSERT_EQ(0, rkt_debugfs_count("contexts", &ctxs1));
	ASSERT_EQ(0, rkt_debugfs_count("files", &files1));
	EXPECT_EQ(bos0 + 10, bos1);
	EXPECT_EQ(ctxs0 + 5, ctxs1);
	EXPECT_EQ(files0 + 1, files1);
	close(fd);
	EXPECT_EQ(bos0, rkt_debugfs_settle("bos", bos0));
	EXPECT_EQ(ctxs0, rkt_debugfs_settle("contexts", ctxs0));
	EXPECT_EQ(files0, rkt_debugfs_settle("files", files0));
}

TEST_F(stress, prime_import_no_leak)
{
	/* export/import a sealed weight between files many times */
	long bos0;
	struct rkt_bo w;
	int fd1;

	if (rkt_debugfs_count("bos", &bos0))
		SKIP(return, "no BO count in debugfs");
	fd1 = rkt_open_fd();
	ASSERT_LE(0, fd1);
	ASSERT_EQ(0, rkt_bo_create(fd1, 64 * 1024, DRM_RKACCEL_BO_WEIGHT, &w));
	ASSERT_EQ(0, rkt_bo_seal(fd1, w.handle));
	for (int i = 0; i < 50; i++) {
		int fd2 = rkt_open_fd(), dfd;
		uint32_t h;

		ASSERT_LE(0, fd2);
		ASSERT_EQ(0, drmPrimeHandleToFD(fd1, w.handle, DRM_CLOEXEC, &dfd));
		ASSERT_EQ(0, drmPrimeFDToHandle(fd2, dfd, &h));
		close(dfd);
		close(fd2);
	}
	close(fd1);
	EXPECT_EQ(bos0, rkt_debugfs_settle("bos", bos0));
}

struct worker {
	pthread_t thread;
	int fd;
	uint32_t ctx;
	const struct drm_rkaccel_task *task;
	const struct drm_rkaccel_submit_bo *bo;
	int jobs;
	int err;	/* first error, 0 */
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint32_t so;

	w->err = rkt_syncobj_create(w->fd, &so);
	for (int j = 0; !w->err && j < w->jobs; j++) {
		w->err = rkt_submit(w->fd, w->ctx, w->task, 1, w->bo, 1, NULL, 0, so, 0);
		if (!w->err && j % 10 == 9)
			w->err = rkt_syncobj_wait(w->fd, so, rkt_deadline_ms(30000));
	}
	if (!w->err)
		w->err = rkt_syncobj_wait(w->fd, so, rkt_deadline_ms(30000));
	return NULL;
}

/* Start @n workers and wait for all; a failed start still joins the rest. */
static int run_workers(struct worker *w, int n)
{
	int started, ret = 0;

	for (started = 0; started < n; started++) {
		ret = pthread_create(&w[started].thread, NULL, worker_main, &w[started]);
		if (ret)
			break;
	}
	for (int i = 0; i < started; i++)
		pthread_join(w[i].thread, NULL);
	return ret;
}

TEST_F_TIMEOUT(stress, threads_share_a_file, 120)
{
	/* 6 threads, each its own context on one shared file and BO */
	enum { THREADS = 6, JOBS = 60 };
	struct worker w[THREADS];
	struct rkt_client c;

	ASSERT_EQ(0, rkt_client_init(&c, 0, 8));
	for (int i = 0; i < THREADS; i++) {
		w[i].fd = c.fd;
		ASSERT_EQ(0, rkt_ctx_create(c.fd, i % 2 ? 0 : 1u << (i / 2 % self->q.num_cores),
					    DRM_RKACCEL_PRIORITY_NORMAL, &w[i].ctx));
		w[i].task = &c.task;
		w[i].bo = &c.bo;
		w[i].jobs = JOBS;
		w[i].err = 0;
	}
	ASSERT_EQ(0, run_workers(w, THREADS));
	for (int i = 0; i < THREADS; i++) {
		struct drm_rkaccel_ctx_query cq;

		EXPECT_EQ(0, w[i].err) TH_LOG("thread %d", i);
		ASSERT_EQ(0, rkt_ctx_query(c.fd, w[i].ctx, &cq));
		EXPECT_EQ(JOBS, cq.jobs_completed) TH_LOG("thread %d", i);
		EXPECT_EQ(0, cq.jobs_failed);
	}
	rkt_client_fini(&c);
}

TEST_F_TIMEOUT(stress, threads_own_files, 120)
{
	/* 6 threads, each its own file: address spaces switch on the cores */
	enum { THREADS = 6, JOBS = 60 };
	struct worker w[THREADS];
	struct rkt_client c[THREADS];

	for (int i = 0; i < THREADS; i++) {
		ASSERT_EQ(0, rkt_client_init(&c[i], 0, 4 + i));
		w[i].fd = c[i].fd;
		w[i].ctx = c[i].ctx;
		w[i].task = &c[i].task;
		w[i].bo = &c[i].bo;
		w[i].jobs = JOBS;
		w[i].err = 0;
	}
	ASSERT_EQ(0, run_workers(w, THREADS));
	for (int i = 0; i < THREADS; i++) {
		struct drm_rkaccel_ctx_query cq;

		EXPECT_EQ(0, w[i].err) TH_LOG("thread %d", i);
		ASSERT_EQ(0, rkt_ctx_query(c[i].fd, c[i].ctx, &cq));
		EXPECT_EQ(JOBS, cq.jobs_completed);
		EXPECT_EQ(0, cq.jobs_failed);
		rkt_client_fini(&c[i]);
	}
}

TEST_F_TIMEOUT(stress, submit_and_close_loop, 120)
{
	/* submit without waiting and close, many times; then the device works */
	for (int i = 0; i < 50; i++) {
		struct rkt_client c;

		ASSERT_EQ(0, rkt_client_init(&c, i % (self->q.core_mask + 1), 50));
		for (int j = 0; j < 3; j++) {
			ASSERT_EQ(0, rkt_submit(c.fd, c.ctx, &c.task, 1, &c.bo, 1, NULL, 0, c.out,
						0));
		}
		rkt_client_fini(&c);
	}
	{
		struct rkt_client c;

		ASSERT_EQ(0, rkt_client_init(&c, 0, 4));
		ASSERT_EQ(0, rkt_submit(c.fd, c.ctx, &c.task, 1, &c.bo, 1, NULL, 0, c.out, 0));
		EXPECT_EQ(0, rkt_syncobj_wait(c.fd, c.out, rkt_deadline_ms(10000)));
		rkt_client_fini(&c);
	}
}

TEST_HARNESS_MAIN
