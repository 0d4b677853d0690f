// SPDX-License-Identifier: GPL-2.0-only
/*
 * fault_test: systematic fault injection (debug kernel only). For each ioctl,
 * with otherwise valid arguments, and for loading the module, fail the Nth
 * slab allocation, page allocation or user copy of the calling task for
 * N = 1, 2, ... until the call succeeds without a fault. Every failure must
 * return a clean errno, leave nothing behind (debugfs object counts, file
 * descriptors, no job queued) and print no kernel report; the device must
 * run a known-good job after each sweep.
 *
 * SKIPs where the kernel has no fault injection (/proc/self/fail-nth,
 * /sys/kernel/debug/failslab): Debian's stock kernel.
 * Documentation/testing.rst, section "Fuzzer and fault injection".
 */

#include <getopt.h>
#include <glob.h>
#include <inttypes.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "kselftest.h"
#include "fuzz.h"

#define FI_DIR		"/sys/kernel/debug"
#define MODULE_PATH	RKT_SIM_MODULE
/* What the driver core logs when a core's probe fails (not -ENODEV/-EPROBE_DEFER). */
#define CORE_PROBE_FAILED	"probe with driver rkaccel-core failed"

static int nth_fd = -1;
static int kfd = -1;
static unsigned int max_n = 100000;
static bool verbose;
/* The device's live objects when no other program has any: each sweep's start. */
static struct fz_counts quiet;

/* Totals over every sweep. */
static unsigned long calls_total, injected_total, recovered_total, kept_total, stray_total;

static int write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * failslab, fail_page_alloc and fail_usercopy: only fail-nth triggers them
 * (task-filter with no task marked make-it-fail), for every allocation
 * (no GFP exemptions, order 0 too), silently (a forced failure's stack
 * dump would read as a report).
 */
static int fi_configure(bool on)
{
	static const char *const attrs[] = { "failslab", "fail_page_alloc", "fail_usercopy" };
	char path[128];
	int ret = 0;

	for (unsigned int i = 0; i < 3; i++) {
		/*
		 * Order matters: task-filter must be on before probability 100
		 * and probability 0 before task-filter goes off, or for a moment
		 * every allocation of every task fails.
		 */
		const struct {
			const char *file, *on, *off;
		} set[] = {
			{ "task-filter", "Y", "N" }, { "probability", "100", "0" },
			{ "times", "-1", "1" }, { "verbose", "0", "0" },
			{ "ignore-gfp-wait", "N", "Y" }, { "ignore-gfp-highmem", "N", "Y" },
			{ "min-order", "0", "1" },
		};
		const unsigned int n = sizeof(set) / sizeof(set[0]);

		for (unsigned int k = 0; k < n; k++) {
			unsigned int j = on ? k : (k + 1) % n;	/* off: probability first */

			snprintf(path, sizeof(path), FI_DIR "/%s/%s", attrs[i], set[j].file);
			if (access(path, F_OK))
				continue;	/* not every attribute has every knob */
			if (write_str(path, on ? set[j].on : set[j].off))
				ret = -errno;
		}
	}
	return ret;
}

/*
 * Only fault sites with a return address in [start, end) in their first 32
 * stack frames count (and fail); [0, ~0) is every site. 0 or -errno.
 */
static unsigned long reject_start, reject_end;	/* a known kernel bug's function */

static int fi_require(unsigned long start, unsigned long end)
{
	static const char *const attrs[] = { "failslab", "fail_page_alloc", "fail_usercopy" };
	char path[128], val[32];
	int ret = 0;

	for (unsigned int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), FI_DIR "/%s/require-start", attrs[i]);
		if (access(path, F_OK))
			return -ENOENT;
		snprintf(val, sizeof(val), "%#lx", start);
		ret = ret ?: write_str(path, val);
		snprintf(path, sizeof(path), FI_DIR "/%s/require-end", attrs[i]);
		snprintf(val, sizeof(val), "%#lx", end);
		ret = ret ?: write_str(path, val);
		snprintf(path, sizeof(path), FI_DIR "/%s/stacktrace-depth", attrs[i]);
		ret = ret ?: write_str(path, "32");
		snprintf(path, sizeof(path), FI_DIR "/%s/reject-start", attrs[i]);
		snprintf(val, sizeof(val), "%#lx", start || ~end ? reject_start : 0);
		ret = ret ?: write_str(path, val);
		snprintf(path, sizeof(path), FI_DIR "/%s/reject-end", attrs[i]);
		snprintf(val, sizeof(val), "%#lx", start || ~end ? reject_end : 0);
		ret = ret ?: write_str(path, val);
	}
	return ret;
}

static void fi_off(void)
{
	fi_configure(false);
	fi_require(0, ~0ul);
}

/* Arm fail-nth: the @n-th fault site of this task from now on fails. */
static void nth_arm(unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	if (pwrite(nth_fd, buf, len, 0) != len)
		ksft_exit_fail_msg("writing fail-nth: %s\n", strerror(errno));
}

/*
 * Disarm; true when the fault was injected. The read snapshots the count
 * before its own copy to the user, so a fault still pending may hit that
 * copy: then the read fails and the call itself had no fault.
 */
static bool nth_disarm(void)
{
	char buf[16] = "";
	ssize_t len = pread(nth_fd, buf, sizeof(buf) - 1, 0);
	bool injected = len > 0 && strtoul(buf, NULL, 10) == 0;

	/* likewise the copy of this write: then the count is spent anyway */
	if (pwrite(nth_fd, "0", 1, 0) != 1 && errno != EFAULT)
		ksft_exit_fail_msg("writing fail-nth: %s\n", strerror(errno));
	return injected;
}

/* --- the calls ----------------------------------------------------------- */

struct fctx {
	int fd, fd2;
	struct rkt_bo cmd, weight, fresh;
	struct drm_rkaccel_task task;
	uint32_t ctx, ctx_fresh, out, tl;
	uint64_t tl_point;
	int dmabuf, newfd;
	void *map;
	uint32_t handle;	/* what a successful call created */
	int ret_fd;
};

struct fcase {
	const char *name;
	fz_errset errs;		/* beside ENOMEM, EFAULT */
	int (*prep)(struct fctx *c);	/* before each attempt, no fault armed */
	int (*call)(struct fctx *c);	/* armed: 0 or -errno */
	void (*undo)(struct fctx *c);	/* after a successful call */
};

static int c_query(struct fctx *c)
{
	struct drm_rkaccel_query q = { 0 };

	return ioctl(c->fd, DRM_IOCTL_RKACCEL_QUERY, &q) ? -errno : 0;
}

static int c_bo_create_plain(struct fctx *c)
{
	struct drm_rkaccel_bo_create b = { .size = 64 * 1024 };
	int ret = ioctl(c->fd, DRM_IOCTL_RKACCEL_BO_CREATE, &b) ? -errno : 0;

	c->handle = ret ? 0 : b.handle;
	return ret;
}

static int c_bo_create_weight(struct fctx *c)
{
	struct drm_rkaccel_bo_create b = { .size = 3 * 4096, .flags = DRM_RKACCEL_BO_WEIGHT };
	int ret = ioctl(c->fd, DRM_IOCTL_RKACCEL_BO_CREATE, &b) ? -errno : 0;

	c->handle = ret ? 0 : b.handle;
	return ret;
}

static void u_gem_close(struct fctx *c)
{
	if (c->handle)
		rkt_gem_close(c->fd, c->handle);
	c->handle = 0;
}

static int c_bo_info(struct fctx *c)
{
	struct drm_rkaccel_bo_info in = { .handle = c->cmd.handle };

	return ioctl(c->fd, DRM_IOCTL_RKACCEL_BO_INFO, &in) ? -errno : 0;
}

static int c_bo_wait(struct fctx *c)
{
	struct drm_rkaccel_bo_wait w = { .handle = c->cmd.handle,
					 .timeout_ns = rkt_now_ns() + RKT_NSEC_PER_SEC };

	return ioctl(c->fd, DRM_IOCTL_RKACCEL_BO_WAIT, &w) ? -errno : 0;
}

/* A new unsealed weight BO for each attempt. */
static int p_fresh_weight(struct fctx *c)
{
	if (c->fresh.handle)
		rkt_gem_close(c->fd, c->fresh.handle);
	return rkt_bo_create(c->fd, 4096, DRM_RKACCEL_BO_WEIGHT, &c->fresh);
}

static int p_fresh_bo(struct fctx *c)
{
	if (c->fresh.handle)
		rkt_gem_close(c->fd, c->fresh.handle);
	return rkt_bo_create(c->fd, 8192, 0, &c->fresh);
}

static int c_bo_seal(struct fctx *c)
{
	struct drm_rkaccel_bo_seal s = { .handle = c->fresh.handle };

	return ioctl(c->fd, DRM_IOCTL_RKACCEL_BO_SEAL, &s) ? -errno : 0;
}

static int c_ctx_create(struct fctx *c)
{
	struct drm_rkaccel_ctx_create cc = { .core_mask = 0, .priority = 1 };
	int ret = ioctl(c->fd, DRM_IOCTL_RKACCEL_CTX_CREATE, &cc) ? -errno : 0;

	c->ctx_fresh = ret ? 0 : cc.handle;
	return ret;
}

static void u_ctx_destroy(struct fctx *c)
{
	if (c->ctx_fresh)
		rkt_ctx_destroy(c->fd, c->ctx_fresh);
	c->ctx_fresh = 0;
}

static int p_fresh_ctx(struct fctx *c)
{
	u_ctx_destroy(c);
	return rkt_ctx_create(c->fd, 0, DRM_RKACCEL_PRIORITY_NORMAL, &c->ctx_fresh);
}

static int c_ctx_destroy(struct fctx *c)
{
	struct drm_rkaccel_ctx_destroy d = { .handle = c->ctx_fresh };
	int ret = ioctl(c->fd, DRM_IOCTL_RKACCEL_CTX_DESTROY, &d) ? -errno : 0;

	if (!ret)
		c->ctx_fresh = 0;
	return ret;
}

static int c_ctx_query(struct fctx *c)
{
	struct drm_rkaccel_ctx_query q = { .handle = c->ctx };

	return ioctl(c->fd, DRM_IOCTL_RKACCEL_CTX_QUERY, &q) ? -errno : 0;
}

/* One job, binary out-sync. */
static int c_submit(struct fctx *c)
{
	struct drm_rkaccel_submit_bo bo = { .handle = c->cmd.handle };
	struct drm_rkaccel_submit s;

	rkt_submit_init(&s, c->ctx, &c->task, 1, &bo, 1, NULL, 0, c->out, 0);
	return ioctl(c->fd, DRM_IOCTL_RKACCEL_SUBMIT, &s) ? -errno : 0;
}

/* A sealed weight too, an in-sync on the last timeline point, a new point out. */
static int c_submit_timeline(struct fctx *c)
{
	struct drm_rkaccel_submit_bo bos[2] = {
		{ .handle = c->cmd.handle, .flags = DRM_RKACCEL_SUBMIT_BO_WRITE },
		{ .handle = c->weight.handle },
	};
	struct drm_rkaccel_sync in = { .handle = c->tl, .point = c->tl_point };
	struct drm_rkaccel_submit s;
	int ret;

	rkt_submit_init(&s, c->ctx, &c->task, 1, bos, 2, &in, 1, c->tl, c->tl_point + 1);
	ret = ioctl(c->fd, DRM_IOCTL_RKACCEL_SUBMIT, &s) ? -errno : 0;
	if (!ret)
		c->tl_point++;
	return ret;
}

static void u_wait_jobs(struct fctx *c)
{
	rkt_syncobj_wait(c->fd, c->out, rkt_deadline_ms(30000));
	drmSyncobjTimelineWait(c->fd, &c->tl, &c->tl_point, 1, rkt_deadline_ms(30000), 0, NULL);
}

static int c_gem_close(struct fctx *c)
{
	struct drm_gem_close g = { .handle = c->fresh.handle };
	int ret = ioctl(c->fd, DRM_IOCTL_GEM_CLOSE, &g) ? -errno : 0;

	if (!ret)
		c->fresh.handle = 0;
	return ret;
}

static int c_export(struct fctx *c)
{
	struct drm_prime_handle p = { .handle = c->weight.handle, .flags = DRM_CLOEXEC };
	int ret = ioctl(c->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p) ? -errno : 0;

	c->ret_fd = ret ? -1 : p.fd;
	return ret;
}

static void u_close_fd(struct fctx *c)
{
	if (c->ret_fd >= 0)
		close(c->ret_fd);
	c->ret_fd = -1;
}

/* Import into a second file: the driver maps the BO there (gem open). */
static int c_import(struct fctx *c)
{
	struct drm_prime_handle p = { .fd = c->dmabuf };
	int ret = ioctl(c->fd2, DRM_IOCTL_PRIME_FD_TO_HANDLE, &p) ? -errno : 0;

	c->handle = ret ? 0 : p.handle;
	return ret;
}

static void u_import(struct fctx *c)
{
	if (c->handle)
		rkt_gem_close(c->fd2, c->handle);
	c->handle = 0;
}

static char dev_path[64];

static int c_open(struct fctx *c)
{
	c->ret_fd = open(dev_path, O_RDWR | O_CLOEXEC);
	return c->ret_fd < 0 ? -errno : 0;
}

/* A file with a BO, a context and a finished job, to close under faults. */
static int p_loaded_file(struct fctx *c)
{
	struct rkt_bo b;
	uint32_t ctx;
	int ret;

	c->newfd = open(dev_path, O_RDWR | O_CLOEXEC);
	if (c->newfd < 0)
		return -errno;
	ret = rkt_bo_create(c->newfd, 4096, 0, &b);
	if (!ret)
		ret = rkt_ctx_create(c->newfd, 0, DRM_RKACCEL_PRIORITY_NORMAL, &ctx);
	return ret;
}

static int c_close(struct fctx *c)
{
	int ret = close(c->newfd) ? -errno : 0;

	c->newfd = -1;
	return ret;
}

static int c_mmap(struct fctx *c)
{
	c->map = mmap(NULL, c->cmd.map_len, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd,
		      (off_t)c->cmd.mmap_offset);
	return c->map == MAP_FAILED ? -errno : 0;
}

static void u_munmap(struct fctx *c)
{
	if (c->map && c->map != MAP_FAILED)
		munmap(c->map, c->cmd.map_len);
	c->map = NULL;
}

static const struct fcase cases[] = {
	{ "QUERY", 0, NULL, c_query, NULL },
	{ "BO_CREATE", FZ_E(ENOSPC), NULL, c_bo_create_plain, u_gem_close },
	{ "BO_CREATE_weight", FZ_E(ENOSPC), NULL, c_bo_create_weight, u_gem_close },
	{ "BO_INFO", 0, NULL, c_bo_info, NULL },
	{ "BO_WAIT", 0, NULL, c_bo_wait, NULL },
	{ "BO_SEAL", 0, p_fresh_weight, c_bo_seal, NULL },
	{ "CTX_CREATE", 0, NULL, c_ctx_create, u_ctx_destroy },
	{ "CTX_DESTROY", 0, p_fresh_ctx, c_ctx_destroy, NULL },
	{ "CTX_QUERY", 0, NULL, c_ctx_query, NULL },
	{ "SUBMIT", 0, NULL, c_submit, u_wait_jobs },
	{ "SUBMIT_timeline", 0, NULL, c_submit_timeline, u_wait_jobs },
	{ "GEM_CLOSE", 0, p_fresh_bo, c_gem_close, NULL },
	{ "PRIME_EXPORT", FZ_E(EMFILE), NULL, c_export, u_close_fd },
	{ "PRIME_IMPORT", 0, NULL, c_import, u_import },
	{ "open", FZ_E(ENFILE) | FZ_E(EMFILE), NULL, c_open, u_close_fd },
	{ "close", 0, p_loaded_file, c_close, NULL },
	{ "mmap", 0, NULL, c_mmap, u_munmap },
};

static int ctx_init(struct fctx *c)
{
	struct rkt_chain ch = { 0 };
	int ret;

	memset(c, 0, sizeof(*c));
	c->dmabuf = c->newfd = c->ret_fd = -1;
	c->fd = open(dev_path, O_RDWR | O_CLOEXEC);
	c->fd2 = open(dev_path, O_RDWR | O_CLOEXEC);
	if (c->fd < 0 || c->fd2 < 0)
		return -errno;
	ret = rkt_bo_new(c->fd, 4096, 0, &c->cmd);
	if (!ret)
		ret = rkt_chain_build(c->cmd.map, c->cmd.npu_addr, c->cmd.map_len, 0, 2, 2, 0, &ch);
	if (!ret)
		ret = rkt_bo_create(c->fd, 4096, DRM_RKACCEL_BO_WEIGHT, &c->weight);
	if (!ret)
		ret = rkt_bo_seal(c->fd, c->weight.handle);
	if (!ret)
		ret = drmPrimeHandleToFD(c->fd, c->weight.handle, DRM_CLOEXEC, &c->dmabuf) ?
		      -errno : 0;
	if (!ret)
		ret = rkt_ctx_create(c->fd, 0, DRM_RKACCEL_PRIORITY_NORMAL, &c->ctx);
	if (!ret)
		ret = rkt_syncobj_create(c->fd, &c->out);
	if (!ret)
		ret = rkt_syncobj_create(c->fd, &c->tl);
	c->task = rkt_chain_task(&ch);
	/* the timeline's first point, for the in-sync of SUBMIT_timeline */
	if (!ret) {
		struct drm_rkaccel_submit_bo bo = { .handle = c->cmd.handle };

		ret = rkt_submit(c->fd, c->ctx, &c->task, 1, &bo, 1, NULL, 0, c->tl, 1);
	}
	if (!ret) {
		c->tl_point = 1;
		ret = drmSyncobjTimelineWait(c->fd, &c->tl, &c->tl_point, 1,
					     rkt_deadline_ms(30000), 0, NULL) ? -errno : 0;
	}
	return ret;
}

static void ctx_fini(struct fctx *c)
{
	u_munmap(c);
	if (c->cmd.map)
		munmap(c->cmd.map, c->cmd.map_len);
	if (c->dmabuf >= 0)
		close(c->dmabuf);
	if (c->newfd >= 0)
		close(c->newfd);
	close(c->fd);
	close(c->fd2);
}

/* Open fds of this process as a bitmap, to find fds a failed call installed. */
#define MAX_FDS 1024
static void fd_map(uint8_t *map)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	memset(map, 0, MAX_FDS / 8);
	if (!d)
		return;
	while ((e = readdir(d))) {
		int fd = atoi(e->d_name);

		if (e->d_name[0] != '.' && fd >= 0 && fd < MAX_FDS && fd != dirfd(d))
			map[fd / 8] |= 1u << (fd % 8);
	}
	closedir(d);
}

/* Close the fds open now that were not in @before; how many. */
static int close_stray_fds(const uint8_t *before)
{
	uint8_t now[MAX_FDS / 8];
	int n = 0;

	fd_map(now);
	for (int fd = 0; fd < MAX_FDS; fd++)
		if ((now[fd / 8] & ~before[fd / 8]) & (1u << (fd % 8))) {
			close(fd);
			n++;
		}
	return n;
}

/* Jobs the context has been charged with: a failed SUBMIT must add none. */
static uint64_t jobs_of(struct fctx *c)
{
	struct drm_rkaccel_ctx_query q;

	return rkt_ctx_query(c->fd, c->ctx, &q) ? ~0ull : q.jobs_submitted;
}

/* Sweep one case: N = 1.. until a call succeeds with no fault injected. */
static void sweep(const struct fcase *fc)
{
	unsigned long injected = 0, recovered = 0, kept = 0, n;
	struct fz_counts base, before, after;
	uint8_t fdmap[MAX_FDS / 8];
	long fds0 = rkt_count_fds(), fds1;
	char why[256] = "";
	struct fctx c;
	int ret;

	/*
	 * The last sweep's known-good job frees its objects in the
	 * scheduler's free_job, after its fence signalled: wait for them, or
	 * one freed during this sweep moves its baseline.
	 */
	fz_counts_settle(&quiet, &base, 5000);
	if (fz_counts_read(&base) || ctx_init(&c)) {
		ksft_test_result_fail("fault.%s # setup: %s\n", fc->name, strerror(errno));
		return;
	}
	for (n = 1; n <= max_n && !why[0]; n++) {
		uint64_t jobs0;
		bool inj;
		long fdsb;

		if (fc->prep && (ret = fc->prep(&c))) {
			snprintf(why, sizeof(why), "N=%lu: preparing: %s", n, strerror(-ret));
			break;
		}
		if (fz_counts_read(&before)) {
			snprintf(why, sizeof(why), "no debugfs counts");
			break;
		}
		jobs0 = jobs_of(&c);
		fdsb = rkt_count_fds();
		fd_map(fdmap);
		nth_arm((unsigned int)n);
		ret = fc->call(&c);
		inj = nth_disarm();
		calls_total++;
		if (verbose)
			printf("# %s N=%lu: %d%s\n", fc->name, n, ret, inj ? " (fault injected)" : "");
		if (fz_kmsg_reports(kfd, verbose)) {
			snprintf(why, sizeof(why), "N=%lu: kernel report (above)", n);
			break;
		}
		if (inj)
			injected++;
		if (!ret) {
			if (fc->undo)
				fc->undo(&c);
			if (!inj)
				break;		/* past every fault site: done */
			recovered++;		/* the fault was absorbed */
			continue;
		}
		if (!inj) {
			snprintf(why, sizeof(why), "N=%lu: failed with %d without a fault", n, ret);
			break;
		}
		if (ret != -ENOMEM && ret != -EFAULT && !fz_errno_in(fc->errs, -ret)) {
			snprintf(why, sizeof(why), "N=%lu: unclean errno %d (%s)", n, ret,
				 strerror(-ret));
			break;
		}
		if (ret == -EFAULT) {
			/*
			 * The DRM core copies the result out after the handler
			 * succeeded: a fault there returns EFAULT but keeps the
			 * effect (an object of the file, a job, an installed
			 * fd). Counted; the file's objects must still go when
			 * it closes (checked after the sweep), stray fds are
			 * closed here.
			 */
			struct fz_counts a;
			int stray = close_stray_fds(fdmap);

			if (stray || jobs_of(&c) != jobs0 ||
			    (!fz_counts_read(&a) && !fz_counts_settle(&before, &a, 200)))
				kept++;
			stray_total += stray;
			continue;
		}
		/* a failed call leaves nothing: objects, fds, jobs */
		if (!fz_counts_settle(&before, &after, 2000)) {
			snprintf(why, sizeof(why),
				 "N=%lu: %d left bos %ld->%ld ctxs %ld->%ld files %ld->%ld", n, ret,
				 before.bos, after.bos, before.ctxs, after.ctxs, before.files,
				 after.files);
			break;
		}
		if (rkt_count_fds() != fdsb) {
			snprintf(why, sizeof(why), "N=%lu: %d left an fd", n, ret);
			break;
		}
		if (jobs_of(&c) != jobs0 && fc->call != c_close) {
			snprintf(why, sizeof(why), "N=%lu: a failed submit counted a job", n);
			break;
		}
	}
	if (!why[0] && n > max_n)
		snprintf(why, sizeof(why), "still failing at N=%u", max_n);
	u_wait_jobs(&c);
	ctx_fini(&c);
	if (!why[0] && !fz_counts_settle(&base, &after, 5000))
		snprintf(why, sizeof(why), "after the sweep: bos %ld->%ld ctxs %ld->%ld files %ld->%ld",
			 base.bos, after.bos, base.ctxs, after.ctxs, base.files, after.files);
	fds1 = rkt_count_fds();
	if (!why[0] && fds1 != fds0)
		snprintf(why, sizeof(why), "fds %ld -> %ld after the sweep", fds0, fds1);
	if (!why[0] && (ret = fz_known_good(30000, false)))
		snprintf(why, sizeof(why), "the known-good job after the sweep: %d", ret);
	injected_total += injected;
	recovered_total += recovered;
	kept_total += kept;
	printf("# %s: %lu calls, %lu faults injected (%lu absorbed, %lu EFAULT after the"
	       " effect)\n", fc->name, n, injected, recovered, kept);
	if (why[0])
		ksft_test_result_fail("fault.%s # %s\n", fc->name, why);
	else
		ksft_test_result_pass("fault.%s\n", fc->name);
}

/* --- module load --------------------------------------------------------- */

static bool module_loaded(void)
{
	return !access("/sys/module/rkaccel_sim", F_OK);
}

/*
 * The simulated device is bound and its accel (or render) minor is in
 * sysfs, yet there is no node under /dev: devtmpfs failed, not the driver.
 */
static bool device_bound_without_node(void)
{
	const char *minors[] = { "/sys/class/accel/accel0", "/sys/class/drm/renderD128" };

	if (!rkt_device_bound())
		return false;
	for (unsigned int i = 0; i < 2; i++)
		if (!access(minors[i], F_OK))
			return access(i ? "/dev/dri/renderD128" : "/dev/accel/accel0", F_OK) != 0;
	return false;
}

/* Platform devices matching @pattern, and how many of them have a driver. */
static unsigned int platform_bound(const char *pattern, unsigned int *total)
{
	unsigned int bound = 0;
	char path[PATH_MAX];
	glob_t g;

	*total = 0;
	if (glob(pattern, 0, NULL, &g))
		return 0;
	*total = g.gl_pathc;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		snprintf(path, sizeof(path), "%s/driver", g.gl_pathv[i]);
		bound += !access(path, F_OK);
	}
	globfree(&g);
	return bound;
}

/*
 * With a device tree, a fault in a probe leaves the module loaded and a
 * device unbound, as a board's failed clock controller or core would: a
 * probe failure does not fail module init, and the driver core logs it
 * ("probe with driver rkaccel-sim-cru failed with error -12", or
 * rkaccel-core). Acceptable when the simulated CRU is unbound (the cores
 * then wait for it; devices_deferred says so once they have been tried) or
 * a core is: the simulator's init reprobes the cores (driver_attach()) in
 * the loading task. Returns "CRU", "core" or NULL.
 */
static const char *dt_probe_failed(void)
{
	unsigned int total, bound = platform_bound("/sys/bus/platform/devices/*sim-cru*", &total);

	if (bound < total || !total) {
		if (verbose)
			system("cat /sys/kernel/debug/devices_deferred | sed 's/^/# deferred: /'");
		return "CRU";
	}
	bound = platform_bound("/sys/bus/platform/devices/*.npu", &total);
	return total && bound < total ? "core" : NULL;
}

/* Nodes, drivers, the deferred list and the log: why a load has no device. */
static void print_device_state(void)
{
	system("{ ls -l /dev/accel /sys/class/accel /sys/bus/platform/devices/*npu*/driver"
	       " /sys/kernel/debug/devices_deferred; rkaccel-info;"
	       " dmesg | grep -i -e npu -e cru | tail -n 20; } 2>&1 | sed 's/^/# /'");
}

static int module_unload(void)
{
	for (int i = 0; i < 100; i++) {
		if (!syscall(SYS_delete_module, "rkaccel_sim", O_NONBLOCK))
			return 0;
		if (errno != EAGAIN && errno != EBUSY)
			return -errno;
		usleep(50000);
	}
	return -EBUSY;
}

/*
 * A symbol's address from /proc/kallsyms (root sees real addresses), 0 if
 * none; @end: where the next symbol starts.
 */
static unsigned long ksym_range(const char *name, unsigned long *end)
{
	char line[256], sym[128], type;
	unsigned long addr, found = 0, next = ~0ul;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx %c %127s", &addr, &type, sym) == 3 && !strcmp(sym, name))
			found = addr;
	rewind(f);
	while (end && found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx", &addr) == 1 && addr > found && addr < next)
			next = addr;
	fclose(f);
	if (end)
		*end = next;
	return found;
}

static unsigned long ksym(const char *name)
{
	return ksym_range(name, NULL);
}

/*
 * Module code lies on one side of the kernel image (above it on x86_64,
 * below on arm64): the fault sites whose stack passes through module code,
 * that is rkaccel's init and probe and what they call, are those with a
 * return address beyond the image on the side rkaccel's .text lies on. The
 * module loader's own allocations (the image copy, KASAN's module shadow,
 * whose vmalloc failures print warn_alloc backtraces) are not swept.
 */
static int module_side(unsigned long *start, unsigned long *end)
{
	unsigned long stext = ksym("_stext"), etext = ksym("_etext"), text = 0;
	FILE *f = fopen("/sys/module/rkaccel/sections/.text", "r");

	if (f) {
		if (fscanf(f, "%lx", &text) != 1)
			text = 0;
		fclose(f);
	}
	if (!stext || !etext || !text)
		return -ENOENT;
	*start = text >= etext ? etext : 0;
	*end = text >= etext ? ~0ul : stext;
	return 0;
}

/* finit_module(2) as the guest's insmod; -I: init_module(2) from a copy. */
/*
 * A device tree whose NPU cores' register ranges overlap (make check boots
 * one, dts/qemu/rk3588-npu-sim-cna-overlap.dtsi): of two cores that claim
 * the same registers, the one probing second must fail, logging which of
 * its ranges is taken, and the NPU must not appear. "fault_test -c
 * dt_overlap"; runs on any kernel, SKIPs on a tree without overlaps.
 */
#define DT_ROOT		"/proc/device-tree"
#define DT_MAX_RANGES	16

struct dt_range {
	char dev[64];		/* the core's platform device, "fdab0000.npu" */
	char name[16];		/* its reg-names entry */
	uint64_t start, end;	/* inclusive */
};

/* A device-tree property's bytes; its length or -errno. */
static ssize_t dt_prop(const char *node, const char *prop, void *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", node, prop);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len);
	close(fd);
	return n < 0 ? -errno : n;
}

/* A big-endian number of @cells 32-bit cells. */
static uint64_t dt_cells(const uint8_t *p, unsigned int cells)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < cells * 4; i++)
		v = v << 8 | p[i];
	return v;
}

/* Every named range of every rknn-core node; how many. */
static unsigned int dt_core_ranges(struct dt_range *r, unsigned int max)
{
	uint8_t ac[4] = { 0, 0, 0, 2 }, sc[4] = { 0, 0, 0, 2 }, reg[256];
	unsigned int n = 0, acells, scells;
	glob_t g;

	dt_prop(DT_ROOT, "#address-cells", ac, sizeof(ac));
	dt_prop(DT_ROOT, "#size-cells", sc, sizeof(sc));
	acells = dt_cells(ac, 1);
	scells = dt_cells(sc, 1);
	if (glob(DT_ROOT "/npu@*", 0, NULL, &g))
		return 0;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		char compat[128] = "", names[128] = "", *name = names;
		ssize_t len = dt_prop(g.gl_pathv[i], "reg", reg, sizeof(reg));
		ssize_t nlen = dt_prop(g.gl_pathv[i], "reg-names", names, sizeof(names) - 1);
		size_t entry = (acells + scells) * 4;

		dt_prop(g.gl_pathv[i], "compatible", compat, sizeof(compat) - 1);
		if (!strstr(compat, "rknn-core") || len <= 0 || nlen <= 0)
			continue;
		for (size_t off = 0; off + entry <= (size_t)len && n < max; off += entry) {
			uint64_t start = dt_cells(reg + off, acells);

			r[n].start = start;
			r[n].end = start + dt_cells(reg + off + acells * 4, scells) - 1;
			snprintf(r[n].name, sizeof(r[n].name), "%s", name);
			snprintf(r[n].dev, sizeof(r[n].dev), "%" PRIx64 ".npu", dt_cells(reg, acells));
			n++;
			name += strlen(name) + 1;
			if (name >= names + nlen)
				name = names + nlen - 1;	/* fewer names than ranges: "" */
		}
	}
	globfree(&g);
	return n;
}

/* The kernel log since boot holds a record with @a and @b. */
static bool klog_has_both(const char *a, const char *b)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	bool found = false;
	char rec[2048];
	ssize_t len;

	while (fd >= 0 && !found && ((len = read(fd, rec, sizeof(rec) - 1)) >= 0 || errno == EPIPE)) {
		if (len < 0)
			continue;
		rec[len] = '\0';
		found = strstr(rec, a) && strstr(rec, b);
	}
	if (fd >= 0)
		close(fd);
	return found;
}

/* One device's driver link is there. */
static bool dev_bound(const char *dev)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "/sys/bus/platform/devices/%s/driver", dev);
	return !access(path, F_OK);
}

static int dt_overlap_main(void)
{
	struct dt_range r[DT_MAX_RANGES];
	unsigned int n = dt_core_ranges(r, DT_MAX_RANGES), pairs = 0, bad = 0;

	ksft_print_header();
	ksft_set_plan(1);
	for (unsigned int i = 0; i < n; i++)
		for (unsigned int j = i + 1; j < n; j++) {
			const struct dt_range *a = &r[i], *b = &r[j], *lost;
			char what[64];

			if (!strcmp(a->dev, b->dev) || a->end < b->start || b->end < a->start)
				continue;
			pairs++;
			ksft_print_msg("%s \"%s\" [%#" PRIx64 "-%#" PRIx64 "] overlaps %s \"%s\"\n",
				       a->dev, a->name, a->start, a->end, b->dev, b->name);
			/* exactly one of the two probed; the other says which range */
			if (dev_bound(a->dev) == dev_bound(b->dev)) {
				ksft_print_msg("%s and %s: both %s\n", a->dev, b->dev,
					       dev_bound(a->dev) ? "bound" : "unbound");
				bad++;
				continue;
			}
			lost = dev_bound(a->dev) ? b : a;
			snprintf(what, sizeof(what), "\"%s\" registers [mem ", lost->name);
			if (!klog_has_both(lost->dev, what) ||
			    !klog_has_both(lost->dev, "overlap another device's")) {
				ksft_print_msg("%s: no \"%s... overlap another device's\" in the log\n",
					       lost->dev, what);
				bad++;
			}
		}
	if (!pairs) {
		ksft_test_result_skip("dt_overlap: no core ranges overlap in this device tree\n");
		ksft_finished();
	}
	if (rkt_device_bound()) {
		ksft_print_msg("the NPU device is there with a core missing\n");
		bad++;
	}
	if (bad)
		print_device_state();
	ksft_test_result(!bad, "dt_overlap: %u overlapping ranges, each refused by one core's probe\n",
			 pairs);
	ksft_finished();
}

static bool use_finit = true;
static bool known_core;	/* -K: also sweep into a known DRM core bug */
static unsigned long first_n = 1;	/* -s: the module sweep's first N */

static void sweep_module(unsigned int step)
{
	unsigned long n, injected = 0, recovered = 0, calls = 0, nodev = 0, nodev_first = 0;
	unsigned long nodenode = 0, deferred = 0, core_failed = 0, nodev_shown = 0;
	bool core_logged;
	char soc[32], params[64], why[256] = "";
	unsigned long req_start, req_end;
	void *image = MAP_FAILED;
	size_t image_len;
	struct stat st;
	int mfd, ret;

	if (rkaccel_test_sim_soc(soc, sizeof(soc)) || !soc[0] || access(MODULE_PATH, R_OK)) {
		ksft_test_result_skip("fault.module_load # no %s or not a simulated device\n",
				      MODULE_PATH);
		return;
	}
	/*
	 * rkaccel_sim.ko creates the device: with sim= its init probes the
	 * cores through rkaccel.ko's board code, under the injected faults.
	 * With a device tree the task sweeps the simulator's init, its CRU's
	 * probe and the cores' probe when the simulator's driver_attach()
	 * gets to a core before the deferred-probe worker (whose faults
	 * fail-nth does not reach) does.
	 */
	rkt_sim_module_params(params, sizeof(params));
	mfd = open(MODULE_PATH, O_RDONLY | O_CLOEXEC);
	if (mfd < 0 || fstat(mfd, &st) ||
	    (image = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, mfd, 0)) == MAP_FAILED) {
		ksft_test_result_fail("fault.module_load # reading %s: %s\n", MODULE_PATH,
				      strerror(errno));
		return;
	}
	image_len = st.st_size;
	close(mfd);
	/*
	 * Bugs of 6.12's core, not the driver's: left out unless -K. The
	 * filter rejects one function; each mode's loading task reaches one.
	 * sim=: the task registers the DRM device. When
	 * drm_sysfs_minor_alloc() fails in drm_minor_alloc(), the managed
	 * release puts the ERR_PTR it left in minor->kdev (kobject_put oops).
	 * Device tree: the task probes the CRU, whose power domains go
	 * through pm_genpd_init(). It ignores a failed dev_set_name(), then
	 * genpd_debug_add() makes a debugfs directory of the NULL name
	 * (strlen oops in the CRU's probe).
	 */
	if (!known_core) {
		reject_start = ksym_range(params[0] ? "drm_sysfs_minor_alloc" : "pm_genpd_init",
					  &reject_end);
		if (!reject_start)
			reject_end = 0;
	}
	if (module_side(&req_start, &req_end) || fi_require(req_start, req_end)) {
		ksft_test_result_fail("fault.module_load # no module address or stack filter\n");
		munmap(image, image_len);
		return;
	}
	ret = module_unload();
	if (ret) {
		ksft_test_result_fail("fault.module_load # rmmod: %s\n", strerror(-ret));
		return;
	}
	fz_kmsg_reports(kfd, false);
	for (n = first_n; n <= max_n; n += step) {
		bool inj;

		mfd = open(MODULE_PATH, O_RDONLY | O_CLOEXEC);
		if (mfd < 0) {
			snprintf(why, sizeof(why), "open %s: %s", MODULE_PATH, strerror(errno));
			break;
		}
		core_logged = false;
		nth_arm((unsigned int)n);
		if (use_finit)
			ret = syscall(SYS_finit_module, mfd, params, 0) ? -errno : 0;
		else
			ret = syscall(SYS_init_module, image, image_len, params) ? -errno : 0;
		inj = nth_disarm();
		close(mfd);
		calls++;
		if (verbose)
			printf("# module N=%lu: %d%s\n", n, ret, inj ? " (fault injected)" : "");
		if (fz_kmsg_reports_seen(kfd, verbose, CORE_PROBE_FAILED, &core_logged)) {
			snprintf(why, sizeof(why), "N=%lu: kernel report (above)", n);
			break;
		}
		injected += inj;
		if (!ret && !inj)
			break;
		if (!ret) {
			/* loaded in spite of the fault: it must work, then go */
			struct fz_counts zero = { 0 }, now;

			recovered++;
			rkt_wait_device(params[0] ? 0 : 5000);
			ret = fz_known_good(30000, false);
			if (ret == -ENODEV && device_bound_without_node()) {
				/*
				 * Registered, but devtmpfs never made the node:
				 * device_add() ignores its failed allocation.
				 * The kernel's, not the driver's; counted.
				 */
				nodenode++;
				ret = module_unload();
				if (ret) {
					snprintf(why, sizeof(why), "N=%lu: rmmod: %s", n,
						 strerror(-ret));
					break;
				}
				continue;
			}
			if (ret == -ENODEV) {
				/* the probe failed but init returned 0: no device */
				const char *failed = params[0] ? NULL : dt_probe_failed();

				if (fz_kmsg_reports_seen(kfd, verbose, CORE_PROBE_FAILED,
							 &core_logged)) {
					snprintf(why, sizeof(why), "N=%lu: kernel report (above)", n);
					break;
				}
				/* an unbound core counts only with its failure logged */
				if (failed && !strcmp(failed, "core") && !core_logged)
					failed = NULL;

				if (!failed) {
					nodev++;
					if (!nodev_first)
						nodev_first = n;
					if (!nodev_shown++)
						print_device_state();
				} else if (!strcmp(failed, "CRU")) {
					deferred++;
				} else {
					core_failed++;
				}
				ret = module_unload();
				if (ret) {
					snprintf(why, sizeof(why), "N=%lu: rmmod: %s", n,
						 strerror(-ret));
					break;
				}
				continue;
			}
			/*
			 * Unload only once the job and its file are gone: an
			 * rmmod racing the release of a finished job is issue
			 * 18.1, not what this sweep looks for.
			 */
			if (!ret && fz_counts_read(&now))
				usleep(1000000);	/* debugfs not made: a fault it absorbed */
			else if (!ret && !fz_counts_settle(&zero, &now, 10000))
				ret = -EBUSY;
			if (!ret)
				ret = module_unload();
			if (!ret && fz_kmsg_reports(kfd, verbose))
				ret = -EIO;
			if (ret) {
				snprintf(why, sizeof(why), "N=%lu: loaded despite a fault, then %d%s",
					 n, ret, ret == -EIO ? " (kernel report above)" :
					 ret == -EBUSY ? " (objects left)" : "");
				break;
			}
			continue;
		}
		if (!inj) {
			snprintf(why, sizeof(why), "N=%lu: failed with %d without a fault", n, ret);
			break;
		}
		if (ret != -ENOMEM && ret != -EFAULT && ret != -ENODEV && ret != -EINVAL &&
		    ret != -ENOENT) {
			snprintf(why, sizeof(why), "N=%lu: unclean errno %d (%s)", n, ret,
				 strerror(-ret));
			break;
		}
		if (module_loaded()) {
			snprintf(why, sizeof(why), "N=%lu: failed with %d but the module is there",
				 n, ret);
			break;
		}
	}
	fi_require(0, ~0ul);
	if (!why[0] && nodev)
		snprintf(why, sizeof(why), "%lu loads (first N=%lu) returned 0 with no device: the"
			 " probe failed and init did not", nodev, nodev_first);
	if (!module_loaded()) {
		/* whatever happened, leave the module loaded as the guest had it */
		mfd = open(MODULE_PATH, O_RDONLY | O_CLOEXEC);
		if (mfd < 0 || syscall(SYS_finit_module, mfd, params, 0))
			snprintf(why, sizeof(why), "reloading the module: %s", strerror(errno));
		if (mfd >= 0)
			close(mfd);
	}
	rkt_wait_device(5000);
	if (!why[0] && n > max_n)
		snprintf(why, sizeof(why), "still failing at N=%u", max_n);
	if (!why[0] && (ret = fz_known_good(30000, false)))
		snprintf(why, sizeof(why), "the known-good job after the sweep: %d", ret);
	munmap(image, image_len);
	calls_total += calls;
	injected_total += injected;
	recovered_total += recovered;
	printf("# module_load (%s %s, every %u, sites under %#lx..%#lx, not under %#lx..%#lx):"
	       " %lu loads, %lu faults injected (%lu absorbed)\n",
	       use_finit ? "finit_module" : "init_module", params, step, req_start, req_end,
	       reject_start, reject_end, calls, injected, recovered);
	if (deferred)
		printf("# %lu loads failed the CRU's probe: the cores wait, deferred (device tree)\n",
		       deferred);
	if (core_failed)
		printf("# %lu loads failed a core's probe: logged, the core unbound (device tree)\n",
		       core_failed);
	if (nodenode)
		printf("# %lu loads had the device but no /dev node (devtmpfs's allocation)\n",
		       nodenode);
	if (why[0])
		ksft_test_result_fail("fault.module_load # %s\n", why);
	else
		ksft_test_result_pass("fault.module_load\n");
}

int main(int argc, char **argv)
{
	unsigned int step = 0, ncases = sizeof(cases) / sizeof(cases[0]);
	struct fz_counts idle = { 0 };
	const char *only = NULL;
	bool module = true;
	int c;

	while ((c = getopt(argc, argv, "c:m:n:s:MIKv")) != -1) {
		switch (c) {
		case 'I': use_finit = false; break;
		case 'K': known_core = true; break;
		case 'c': only = optarg; break;			/* one case by name */
		case 'm': step = strtoul(optarg, NULL, 0); break; /* module: every m-th N */
		case 'n': max_n = strtoul(optarg, NULL, 0); break;
		case 's': first_n = strtoul(optarg, NULL, 0) ?: 1; break; /* module: first N */
		case 'M': module = false; break;
		case 'v': verbose = true; break;
		default:
			printf("usage: fault_test [-c CASE|module_load|dt_overlap] [-m STEP] [-s FIRST_N] [-n MAX_N]"
			       " [-M] [-I] [-K] [-v]\n");
			return KSFT_FAIL;
		}
	}
	if (only && !strcmp(only, "dt_overlap"))
		return dt_overlap_main();
	/*
	 * A device tree's cores probe on every step even when the fault hit
	 * the simulator's init: some 640 steps of ~3 s under the debug
	 * kernel, past the guest's time. Every 16th there, unless -m says.
	 */
	if (!step)
		step = access("/proc/device-tree", F_OK) ? 1 : 16;
	ksft_print_header();
	if (access("/proc/self/fail-nth", F_OK) || access(FI_DIR "/failslab", F_OK)) {
		/* a counted skip line, then the kselftest skip code */
		ksft_set_plan(1);
		ksft_test_result_skip("fault_test: no fault injection in this kernel"
				      " (fail-nth, failslab)\n");
		ksft_print_cnts();
		return KSFT_SKIP;
	}
	if (fz_dev_path(dev_path, sizeof(dev_path)))
		ksft_exit_fail_msg("no rkaccel device\n");
	atexit(fi_off);
	if (fi_configure(true))
		ksft_exit_fail_msg("configuring fault injection: %s\n", strerror(errno));
	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	if (nth_fd < 0)
		ksft_exit_fail_msg("/proc/thread-self/fail-nth: %s\n", strerror(errno));
	kfd = fz_kmsg_open();
	/*
	 * Objects of the programs before (a killed fuzzer child's hung job
	 * holds its BOs until the watchdog ends it) go first: one freed in the
	 * middle of a sweep would move that sweep's baseline under it.
	 */
	if (!fz_counts_settle(&idle, &quiet, 60000))
		ksft_print_msg("objects of earlier programs still there: bos %ld ctxs %ld files %ld\n",
			       quiet.bos, quiet.ctxs, quiet.files);

	if (only && !strcmp(only, "module_load"))
		ncases = 0;
	else if (only)
		module = false;
	ksft_set_plan(only ? 1 : ncases + module);
	for (unsigned int i = 0; i < ncases; i++)
		if (!only || !strcmp(only, cases[i].name))
			sweep(&cases[i]);
	if (module)
		sweep_module(step);
	printf("# %lu calls swept, %lu faults injected, %lu absorbed by the call, %lu EFAULT"
	       " after the effect (%lu fds installed)\n", calls_total, injected_total,
	       recovered_total, kept_total, stray_total);
	ksft_finished();
}
