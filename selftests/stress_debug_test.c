// SPDX-License-Identifier: GPL-2.0-only
/*
 * stress_debug_test: the load the debug kernel's checkers watch. Threads
 * with their own files and threads sharing one file submit on every core;
 * a hang is injected on core 0 again and again; files are closed with jobs
 * in flight; forked children are killed with jobs queued. Afterwards every
 * job ended (the right way), only core 0 was reset, the object counts are
 * back, a known-good job runs, and the kernel printed no report. The guest's
 * /init then unloads the module and checks kmemleak and dmesg.
 *
 * RKACCEL_STRESS_SECONDS sets the length (default 20). RKACCEL_STRESS_BREAK
 * breaks one judge on purpose, to show it can fail: "status" (a worker's
 * chain hangs), "core" (the hangs go to core 1), "leak" (a file stays open),
 * "usable" (the known-good job hangs), "report" (a fake report in the log).
 * Documentation/testing.rst, section "Fuzzer and fault injection".
 */

#include <pthread.h>

#include "kselftest_harness.h"
#include "fuzz.h"

#define MAX_WORKERS	12
#define MAX_CORES	3

static uint64_t deadline_ns;
static char dev_path[64];
static int shared_fd = -1;
static unsigned int num_cores;
static const char *break_what = "";

struct worker {
	pthread_t thread;
	int id;
	bool own_file;		/* closes and reopens it with jobs in flight */
	uint32_t mask;
	unsigned int seed;
	/* results */
	unsigned long jobs, closes, tracked;
	char err[160];
};

struct job_file {
	int fd;
	struct rkt_bo cmd;
	struct drm_rkaccel_task task;
	struct drm_rkaccel_submit_bo bo;
	uint32_t ctx, out;
	bool has_job;		/* out holds a fence */
};

static int jf_open(struct job_file *j, int fd, uint32_t mask, uint32_t ntasks)
{
	struct rkt_chain ch;
	int ret;

	bool hang = !strcmp(break_what, "status") && mask == 2;

	memset(j, 0, sizeof(*j));
	j->fd = fd >= 0 ? fd : open(dev_path, O_RDWR | O_CLOEXEC);
	if (j->fd < 0)
		return -errno;
	ret = rkt_bo_new(j->fd, rkt_chain_bytes(ntasks, 2), 0, &j->cmd);
	if (!ret)
		ret = rkt_chain_build(j->cmd.map, j->cmd.npu_addr, j->cmd.map_len, 0, ntasks, 2,
				      hang ? RKT_CHAIN_NO_ENABLE : 0, &ch);
	if (!ret)
		ret = rkt_ctx_create(j->fd, mask, DRM_RKACCEL_PRIORITY_NORMAL, &j->ctx);
	if (!ret)
		ret = rkt_syncobj_create(j->fd, &j->out);
	if (!ret) {
		j->task = rkt_chain_task(&ch);
		j->bo.handle = j->cmd.handle;
	}
	return ret;
}

/* Unmap; close the file only when it is the job_file's own. */
static void jf_close(struct job_file *j, bool close_fd)
{
	if (j->cmd.map)
		munmap(j->cmd.map, j->cmd.map_len);
	j->cmd.map = NULL;
	if (close_fd) {
		close(j->fd);
	} else {
		rkt_gem_close(j->fd, j->cmd.handle);
		rkt_ctx_destroy(j->fd, j->ctx);
		drmSyncobjDestroy(j->fd, j->out);
	}
	j->fd = -1;
}

static int jf_submit(struct job_file *j)
{
	int ret = rkt_submit(j->fd, j->ctx, &j->task, 1, &j->bo, 1, NULL, 0, j->out, 0);

	j->has_job |= !ret;
	return ret;
}

/* Wait for the last job: it must signal in time and without error. */
static int jf_check(struct job_file *j, char *err, size_t len)
{
	int ret, status = 0;

	if (!j->has_job)
		return 0;
	ret = rkt_syncobj_wait(j->fd, j->out, rkt_deadline_ms(30000));
	if (ret) {
		snprintf(err, len, "a job did not end within 30 s (%d)", ret);
		return -1;
	}
	ret = rkt_syncobj_status(j->fd, j->out, &status);
	if (ret || status != 1) {
		snprintf(err, len, "a job ended with status %d (%d)", status, ret);
		return -1;
	}
	return 0;
}

/* The last jobs of closed files, as sync_files: each must end in 30 s. */
static void check_closed(struct worker *w, int *sfd, int n)
{
	for (int k = 0; k < n; k++) {
		struct pollfd p = { .fd = sfd[k], .events = POLLIN };
		struct sync_file_info info = { 0 };

		if (w->err[0])
			;
		else if (poll(&p, 1, 30000) != 1)
			snprintf(w->err, sizeof(w->err), "a job of a closed file did not end in 30 s");
		else if (ioctl(sfd[k], SYNC_IOC_FILE_INFO, &info) ||
			 (info.status != 1 && info.status != -EIO && info.status != -ECANCELED))
			snprintf(w->err, sizeof(w->err), "a job of a closed file ended with %d",
				 info.status);
		else
			w->tracked++;
		close(sfd[k]);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	int sfd[4], nsfd = 0;
	struct job_file j;

	if (jf_open(&j, w->own_file ? -1 : shared_fd, w->mask, 1 + rand_r(&w->seed) % 100)) {
		snprintf(w->err, sizeof(w->err), "setup: %s", strerror(errno));
		return NULL;
	}
	while (rkt_now_ns() < deadline_ns && !w->err[0]) {
		if (jf_submit(&j)) {
			snprintf(w->err, sizeof(w->err), "submit: %s", strerror(errno));
			break;
		}
		w->jobs++;
		if (w->jobs % 8 == 0 && jf_check(&j, w->err, sizeof(w->err)))
			break;
		if (!w->own_file || rand_r(&w->seed) % 24)
			continue;
		/* close with jobs queued: their fences still end, as sync_files show */
		for (int k = 0; k < 3 && !jf_submit(&j); k++)
			w->jobs++;
		if (!drmSyncobjExportSyncFile(j.fd, j.out, &sfd[nsfd]))
			nsfd++;
		jf_close(&j, true);
		w->closes++;
		if (nsfd == 4) {
			check_closed(w, sfd, nsfd);
			nsfd = 0;
		}
		if (jf_open(&j, -1, w->mask, 1 + rand_r(&w->seed) % 100)) {
			snprintf(w->err, sizeof(w->err), "reopen: %s", strerror(errno));
			return NULL;
		}
	}
	if (!w->err[0])
		jf_check(&j, w->err, sizeof(w->err));
	check_closed(w, sfd, nsfd);
	jf_close(&j, w->own_file);
	return NULL;
}

/* Hangs on core 0: a fresh context each time, since a hang makes it guilty. */
struct hanger {
	pthread_t thread;
	unsigned long hangs;
	char err[160];
};

static void *hanger_main(void *arg)
{
	struct hanger *h = arg;
	struct rkt_chain ch;
	struct rkt_bo cmd;
	int fd = open(dev_path, O_RDWR | O_CLOEXEC), status = 0;
	uint32_t out;

	if (fd < 0 || rkt_bo_new(fd, 4096, 0, &cmd) || rkt_syncobj_create(fd, &out) ||
	    rkt_chain_build(cmd.map, cmd.npu_addr, cmd.map_len, 0, 1, 2, RKT_CHAIN_NO_ENABLE,
			    &ch)) {
		snprintf(h->err, sizeof(h->err), "setup: %s", strerror(errno));
		return NULL;
	}
	while (rkt_now_ns() + 3 * RKT_NSEC_PER_SEC < deadline_ns && !h->err[0]) {
		struct drm_rkaccel_submit_bo bo = { .handle = cmd.handle };
		struct drm_rkaccel_task t = rkt_chain_task(&ch);
		uint32_t ctx;

		if (rkt_ctx_create(fd, strcmp(break_what, "core") ? 1 : 2, DRM_RKACCEL_PRIORITY_NORMAL,
				   &ctx) ||
		    rkt_submit(fd, ctx, &t, 1, &bo, 1, NULL, 0, out, 0)) {
			snprintf(h->err, sizeof(h->err), "hang submit: %s", strerror(errno));
			break;
		}
		if (rkt_syncobj_wait(fd, out, rkt_deadline_ms(30000)) ||
		    rkt_syncobj_status(fd, out, &status) || status != -ECANCELED)
			snprintf(h->err, sizeof(h->err), "the hang ended with %d, not -ECANCELED",
				 status);
		rkt_ctx_destroy(fd, ctx);
		h->hangs++;
		usleep(500000);
	}
	munmap(cmd.map, cmd.map_len);
	close(fd);
	return NULL;
}

/* Children that queue long jobs on every core and are killed mid-way. */
struct killer {
	pthread_t thread;
	unsigned long kills;
	unsigned int seed;
	char err[160];
};

static void child_main(void)
{
	struct drm_rkaccel_submit_bo bo = { 0 };
	struct drm_rkaccel_task t;
	struct rkt_chain ch;
	struct rkt_bo cmd;
	uint32_t ctx[MAX_CORES];
	int fd = open(dev_path, O_RDWR | O_CLOEXEC);

	if (fd < 0 || rkt_bo_new(fd, rkt_chain_bytes(400, 2), 0, &cmd) ||
	    rkt_chain_build(cmd.map, cmd.npu_addr, cmd.map_len, 0, 400, 2, 0, &ch))
		_exit(1);
	t = rkt_chain_task(&ch);
	bo.handle = cmd.handle;
	for (unsigned int c = 0; c < num_cores; c++)
		if (rkt_ctx_create(fd, 1u << c, DRM_RKACCEL_PRIORITY_NORMAL, &ctx[c]))
			_exit(1);
	for (int k = 0; k < 3; k++)
		for (unsigned int c = 0; c < num_cores; c++)
			rkt_submit(fd, ctx[c], &t, 1, &bo, 1, NULL, 0, 0, 0);
	for (;;)
		pause();
}

static void *killer_main(void *arg)
{
	struct killer *k = arg;

	while (rkt_now_ns() < deadline_ns && !k->err[0]) {
		int status;
		pid_t pid = fork();

		if (pid < 0) {
			snprintf(k->err, sizeof(k->err), "fork: %s", strerror(errno));
			break;
		}
		if (!pid)
			child_main();
		usleep(rand_r(&k->seed) % 200000);
		kill(pid, SIGKILL);
		if (waitpid(pid, &status, 0) != pid || (WIFEXITED(status) && WEXITSTATUS(status)))
			snprintf(k->err, sizeof(k->err), "the child failed (status %#x)", status);
		k->kills++;
	}
	return NULL;
}

static int core_stats(struct rkaccel_core_stats *s)
{
	struct rkaccel_device *dev;
	int n;

	if (rkaccel_open(NULL, &dev))
		return -1;
	n = rkaccel_core_stats(dev, s, MAX_CORES);
	rkaccel_close(dev);
	return n;
}

TEST(all_cores_hangs_closes_kills)
{
	struct rkaccel_core_stats s0[MAX_CORES], s1[MAX_CORES];
	struct worker w[MAX_WORKERS];
	struct hanger h = { 0 };
	struct killer k = { .seed = 1 };
	struct drm_rkaccel_query q;
	struct fz_counts base, now;
	const char *env = getenv("RKACCEL_STRESS_SECONDS");
	unsigned int seconds = env ? strtoul(env, NULL, 0) : 20, nw;
	unsigned long jobs = 0, closes = 0, tracked = 0;
	int kfd = fz_kmsg_open(), ncores, ret, kept = -1;

	break_what = getenv("RKACCEL_STRESS_BREAK") ?: "";

	ASSERT_EQ(0, fz_dev_path(dev_path, sizeof(dev_path)));
	ASSERT_EQ(0, fz_counts_read(&base)) TH_LOG("no object counts in debugfs");
	shared_fd = open(dev_path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, shared_fd);
	ASSERT_EQ(0, rkt_query(shared_fd, &q));
	num_cores = q.num_cores;
	ncores = core_stats(s0);
	ASSERT_EQ((int)num_cores, ncores);

	/* per core: one thread with its own file on that core, one on the shared file */
	nw = 2 * num_cores + 2;
	deadline_ns = rkt_now_ns() + seconds * RKT_NSEC_PER_SEC;
	for (unsigned int i = 0; i < nw; i++) {
		w[i] = (struct worker){ .id = i, .own_file = i % 2 == 0, .seed = 100 + i,
					.mask = i < 2 * num_cores ? 1u << (i / 2) : 0 };
		ASSERT_EQ(0, pthread_create(&w[i].thread, NULL, worker_main, &w[i]));
	}
	ASSERT_EQ(0, pthread_create(&h.thread, NULL, hanger_main, &h));
	ASSERT_EQ(0, pthread_create(&k.thread, NULL, killer_main, &k));
	for (unsigned int i = 0; i < nw; i++) {
		pthread_join(w[i].thread, NULL);
		EXPECT_STREQ("", w[i].err) TH_LOG("worker %u", i);
		jobs += w[i].jobs;
		closes += w[i].closes;
		tracked += w[i].tracked;
	}
	pthread_join(h.thread, NULL);
	pthread_join(k.thread, NULL);
	EXPECT_STREQ("", h.err);
	EXPECT_STREQ("", k.err);
	if (!strcmp(break_what, "leak"))
		kept = dup(shared_fd);
	close(shared_fd);
	printf("# %u s, %u threads: %lu jobs, %lu files closed with jobs queued (%lu of their"
	       " fences checked), %lu hangs on core 0, %lu children killed\n", seconds, nw,
	       jobs, closes, tracked, h.hangs, k.kills);

	/* every core worked; only core 0 was reset, once per hang */
	ASSERT_EQ(ncores, core_stats(s1));
	for (int c = 0; c < ncores; c++) {
		printf("# core %d: %llu jobs, %llu resets\n", c,
		       (unsigned long long)(s1[c].jobs - s0[c].jobs),
		       (unsigned long long)(s1[c].resets - s0[c].resets));
		EXPECT_LT(s0[c].jobs, s1[c].jobs) TH_LOG("core %d ran nothing", c);
		if (c) {
			EXPECT_EQ(s0[c].resets, s1[c].resets) TH_LOG("core %d was reset", c);
		}
	}
	EXPECT_LE(1, h.hangs);
	EXPECT_EQ(s0[0].resets + h.hangs, s1[0].resets);

	EXPECT_TRUE(fz_counts_settle(&base, &now, 10000))
		TH_LOG("left: bos %ld->%ld contexts %ld->%ld files %ld->%ld", base.bos, now.bos,
		       base.ctxs, now.ctxs, base.files, now.files);
	if (kept >= 0)
		close(kept);
	ret = fz_known_good(30000, !strcmp(break_what, "usable"));
	EXPECT_EQ(0, ret) TH_LOG("the known-good job: %s", strerror(-ret));
	if (!strcmp(break_what, "report")) {
		int r = fz_kmsg_write("stress_debug_test: WARNING: deliberate (RKACCEL_STRESS_BREAK)\n");

		if (r)
			printf("# writing /dev/kmsg: %s\n", strerror(-r));
	}
	EXPECT_EQ(0, fz_kmsg_reports(kfd, false)) TH_LOG("kernel reports, above");
	close(kfd);
}

TEST_HARNESS_MAIN
