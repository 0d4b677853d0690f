/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers shared by the fuzzer, the fault-injection sweeps and the debug
 * stress run: a known-good job on a fresh file, the live-object counts of
 * debugfs as one snapshot, and a reader of new kernel log records.
 */
#ifndef RKACCEL_FUZZ_H
#define RKACCEL_FUZZ_H

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

#include "rkaccel_test.h"
#include "regcmd.h"

/* A set of errno values: one bit each (ECANCELED is 125); 128 and up map to bit 0. */
typedef unsigned __int128 fz_errset;
#define FZ_E(e)		((fz_errset)1 << ((e) < 128 ? (e) : 0))

static inline bool fz_errno_in(fz_errset set, int err)
{
	return err > 0 && err < 128 && (set & FZ_E(err));
}

/*
 * Run one small job on a new file of the device and wait for it: 0 when its
 * fence signalled without error within @ms, else a negative errno (the
 * fence's error, -ETIME, or what failed on the way). @hang makes the job one
 * that hangs its core, to show that the check can fail.
 */
static inline int fz_known_good(unsigned int ms, bool hang)
{
	struct drm_rkaccel_submit_bo sbo = { 0 };
	struct drm_rkaccel_task task;
	struct rkt_chain ch;
	struct rkt_bo cmd;
	uint32_t ctx, out;
	int fd, ret, status = 0;

	fd = rkt_open_fd();
	if (fd < 0)
		return fd;
	ret = rkt_bo_new(fd, 4096, 0, &cmd);
	if (!ret)
		ret = rkt_chain_build(cmd.map, cmd.npu_addr, cmd.map_len, 0, 4, 2,
				      hang ? RKT_CHAIN_NO_ENABLE : 0, &ch);
	if (!ret)
		ret = rkt_ctx_create(fd, 0, DRM_RKACCEL_PRIORITY_NORMAL, &ctx);
	if (!ret)
		ret = rkt_syncobj_create(fd, &out);
	if (!ret) {
		task = rkt_chain_task(&ch);
		sbo.handle = cmd.handle;
		ret = rkt_submit(fd, ctx, &task, 1, &sbo, 1, NULL, 0, out, 0);
	}
	if (!ret)
		ret = rkt_syncobj_wait(fd, out, rkt_deadline_ms(ms));
	if (!ret)
		ret = rkt_syncobj_status(fd, out, &status);
	if (!ret && status != 1)
		ret = status < 0 ? status : -EINPROGRESS;
	if (cmd.map)
		munmap(cmd.map, cmd.map_len);
	close(fd);
	return ret;
}

/* Live objects of the device, from debugfs. */
struct fz_counts {
	long bos, ctxs, files;
};

/* 0, or -ENOENT when debugfs does not expose the counts. */
static inline int fz_counts_read(struct fz_counts *c)
{
	if (rkt_debugfs_count("bos", &c->bos) || rkt_debugfs_count("contexts", &c->ctxs) ||
	    rkt_debugfs_count("files", &c->files))
		return -ENOENT;
	return 0;
}

/*
 * Wait up to @ms for the counts to come back to @base (jobs drop their
 * references when the scheduler frees them, after the fence). True when
 * they did; @now holds the last reading.
 */
static inline bool fz_counts_settle(const struct fz_counts *base, struct fz_counts *now,
				    unsigned int ms)
{
	for (unsigned int t = 0;; t += 20) {
		if (fz_counts_read(now))
			return false;
		if (now->bos == base->bos && now->ctxs == base->ctxs && now->files == base->files)
			return true;
		if (t >= ms)
			return false;
		usleep(20000);
	}
}

/*
 * Kernel log records written after fz_kmsg_open(): /dev/kmsg read without
 * blocking. fz_kmsg_reports() returns how many of the new records are
 * checker reports (the same patterns guest-init.sh fails a run on) and
 * prints every such record as a TAP diagnostic.
 */
static inline int fz_kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

/* The same reports as guest-init.sh's verdict (x86 "Call Trace", arm64 "Call trace"). */
static inline bool fz_kmsg_is_report(const char *msg)
{
	static const char *const pat[] = {
		"BUG:", "WARNING:", "Oops", "KASAN", "UBSAN", "ODEBUG", "DMA-API: ",
		"suspected memory leak", "circular locking", "possible recursive locking",
		"inconsistent lock state", "suspicious RCU", "general protection",
		"Call Trace", "Call trace", "blocked for more than", "detected stall",
		"Unable to handle",
	};

	for (unsigned int i = 0; i < sizeof(pat) / sizeof(pat[0]); i++)
		if (strstr(msg, pat[i]))
			return true;
	return false;
}

/*
 * New records; @print_all also echoes records that are not reports, and
 * @seen is set when a record holds @watch (if not NULL).
 */
static inline int fz_kmsg_reports_seen(int kfd, bool print_all, const char *watch, bool *seen)
{
	char rec[2048];
	int n = 0;

	if (kfd < 0)
		return 0;
	for (;;) {
		ssize_t len = read(kfd, rec, sizeof(rec) - 1);
		char *msg;
		bool bad;

		if (len < 0) {
			if (errno == EPIPE)	/* overwritten records: go on */
				continue;
			break;
		}
		rec[len] = '\0';
		msg = strchr(rec, ';');
		msg = msg ? msg + 1 : rec;
		msg[strcspn(msg, "\n")] = '\0';
		bad = fz_kmsg_is_report(msg);
		n += bad;
		if (watch && strstr(msg, watch))
			*seen = true;
		if (bad || print_all)
			printf("# kmsg: %s\n", msg);
	}
	return n;
}

static inline int fz_kmsg_reports(int kfd, bool print_all)
{
	return fz_kmsg_reports_seen(kfd, print_all, NULL, NULL);
}

/* Write one record to the kernel log (to show a report check can fail). */
static inline int fz_kmsg_write(const char *msg)
{
	int fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, msg, strlen(msg)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* Path of the device node, for children that must not call the library. */
static inline int fz_dev_path(char *out, size_t len)
{
	struct rkaccel_device *dev;
	int ret = rkaccel_open(NULL, &dev);

	if (ret)
		return ret;
	snprintf(out, len, "%s", rkaccel_path(dev));
	rkaccel_close(dev);
	return 0;
}

#endif /* RKACCEL_FUZZ_H */
