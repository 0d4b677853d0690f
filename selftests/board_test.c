// SPDX-License-Identifier: GPL-2.0-only
/*
 * The board's code path: the cores probed through rkaccel_hw*.c (device tree
 * on arm64, rkaccel_sim's platform devices on x86), runtime PM, devfreq and
 * npu_mhz, system sleep with jobs queued, removal and a second probe, and
 * the probe's error paths (a missing clock, a missing interrupt, registers
 * that read back zero), each refused with its message and no device.
 */

#include <dirent.h>
#include <elf.h>
#include <glob.h>
#include <poll.h>
#include <sys/stat.h>

#include "kselftest_harness.h"
#include "rkaccel_test.h"
#include "regcmd.h"

#define CORE_DRIVER	"/sys/bus/platform/drivers/rkaccel-core"
#define RKACCEL_MAX_CORES_TEST	3

/* The cores bound to rkaccel-core: their sysfs device directories. */
static int core_dirs(char dirs[][320], int max)
{
	struct dirent *e;
	DIR *d = opendir(CORE_DRIVER);
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) && n < max) {
		char link[320];
		struct stat st;

		snprintf(link, sizeof(link), CORE_DRIVER "/%s/power", e->d_name);
		if (e->d_name[0] == '.' || stat(link, &st))
			continue;
		snprintf(dirs[n++], 320, CORE_DRIVER "/%s", e->d_name);
	}
	closedir(d);
	return n;
}

static int read_str(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	if (!f)
		return -errno;
	if (!fgets(buf, len, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int write_str(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -errno;
	ret = fputs(val, f) < 0 ? -EIO : 0;
	if (fclose(f) && !ret)
		ret = -errno;
	return ret;
}

static int core_attr(const char *core, const char *attr, char *buf, size_t len)
{
	char path[400];

	snprintf(path, sizeof(path), "%s/%s", core, attr);
	return read_str(path, buf, len);
}

static uint64_t core_attr_u64(const char *core, const char *attr)
{
	char buf[64] = "0";

	core_attr(core, attr, buf, sizeof(buf));
	return strtoull(buf, NULL, 0);
}

/*
 * The kernel log from /dev/kmsg, read without blocking. No test may clear
 * it (guest-init.sh judges every record since boot): a case that looks for
 * its own lines takes a mark, the sequence number of the next record, and
 * searches from there. Returns whether a record at or after @since holds
 * @what (NULL: none); @next gets the mark after the last record.
 */
static bool kmsg_scan(unsigned long long since, const char *what, unsigned long long *next)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	bool found = false;
	char rec[8192];

	if (fd < 0)
		return false;
	for (;;) {
		ssize_t len = read(fd, rec, sizeof(rec) - 1);
		unsigned long long seq;
		char *msg;

		if (len < 0 && errno == EPIPE)	/* overwritten under us: go on */
			continue;
		if (len < 0)
			break;
		rec[len] = '\0';
		msg = strchr(rec, ';');
		if (!msg || sscanf(rec, "%*u,%llu,", &seq) != 1)
			continue;
		if (next)
			*next = seq + 1;
		msg[strcspn(msg, "\n")] = '\0';
		if (what && seq >= since && strstr(msg + 1, what))
			found = true;
	}
	close(fd);
	return found;
}

/* A mark: the sequence number the next kernel log record will have. */
static unsigned long long klog_mark(void)
{
	unsigned long long next = 0;

	kmsg_scan(0, NULL, &next);
	return next;
}

/* The kernel log since boot contains @what. */
static bool klog_has(const char *what)
{
	return kmsg_scan(0, what, NULL);
}

/* Resets of all cores so far, from debugfs "cores"; -1 when unreadable. */
static long cores_resets(void)
{
	char dir[400], path[512], line[256];
	unsigned long long jobs, faults, resets;
	unsigned int core;
	long sum = -1;
	FILE *f;

	if (rkt_debugfs_dir(dir, sizeof(dir)))
		return -1;
	snprintf(path, sizeof(path), "%s/cores", dir);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%u %llu %llu %llu", &core, &jobs, &faults, &resets) == 4)
			sum = (sum < 0 ? 0 : sum) + (long)resets;
	fclose(f);
	return sum;
}

static bool device_tree(void)
{
	char sim[32];

	rkt_sim_module_params(sim, sizeof(sim));
	return !sim[0];
}

/*
 * @n zero-work jobs of @ntasks tasks each on every core, the last one's
 * fence in @out; 0 or -errno.
 */
static int submit_jobs(int fd, const struct drm_rkaccel_query *q, uint32_t n, uint32_t ntasks,
		       uint32_t out)
{
	struct drm_rkaccel_submit_bo b = { 0 };
	struct drm_rkaccel_task t;
	struct rkt_chain c;
	struct rkt_bo bo;
	uint32_t ctx, i, core;
	int ret;

	ret = rkt_bo_new(fd, rkt_chain_bytes(ntasks, 2), 0, &bo);
	if (ret)
		return ret;
	ret = rkt_chain_build(bo.map, bo.npu_addr, bo.map_len, 0, ntasks, 2, 0, &c);
	t = rkt_chain_task(&c);
	b.handle = bo.handle;
	for (core = 0; !ret && core < q->num_cores; core++) {
		ret = rkt_ctx_create(fd, 1u << core, DRM_RKACCEL_PRIORITY_NORMAL, &ctx);
		for (i = 0; !ret && i < n; i++)
			ret = rkt_submit(fd, ctx, &t, 1, &b, 1, NULL, 0,
					 core == q->num_cores - 1 && i == n - 1 ? out : 0, 0);
	}
	munmap(bo.map, bo.map_len);
	rkt_gem_close(fd, bo.handle);
	return ret;
}

FIXTURE(board) {
	int fd;
	struct drm_rkaccel_query q;
	char cores[RKACCEL_MAX_CORES_TEST][320];
	int ncores;
};

FIXTURE_SETUP(board)
{
	self->fd = rkt_open_fd();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, rkt_query(self->fd, &self->q));
	self->ncores = core_dirs(self->cores, RKACCEL_MAX_CORES_TEST);
}

FIXTURE_TEARDOWN(board)
{
	if (self->fd >= 0)
		close(self->fd);
}

/* Every core of the SoC probed through rkaccel-core, and the log says so. */
TEST_F(board, cores_probed_through_board_code)
{
	char of_node[400];
	int i;

	ASSERT_EQ((int)self->q.num_cores, self->ncores);
	for (i = 0; i < self->ncores; i++) {
		snprintf(of_node, sizeof(of_node), "%s/of_node", self->cores[i]);
		if (device_tree()) {
			EXPECT_EQ(0, access(of_node, F_OK)) TH_LOG("%s: no device-tree node",
								   self->cores[i]);
		}
	}
	EXPECT_TRUE(klog_has("provided by rkaccel_sim"));
	EXPECT_TRUE(klog_has(self->q.num_cores == 3 ? "NPU core 2 of 3" : "NPU core 1 of 2"));
	EXPECT_TRUE(klog_has("hardware version 0x"));
}

/*
 * The consumers that hold the regulator named @name enabled (its sysfs
 * num_users), or -1 when no regulator has that name.
 */
static int rail_users(const char *name)
{
	char path[300], buf[64];
	glob_t g;
	size_t i;
	int users = -1;

	if (glob("/sys/class/regulator/regulator.*", 0, NULL, &g))
		return -1;
	for (i = 0; i < g.gl_pathc && users < 0; i++) {
		snprintf(path, sizeof(path), "%s/name", g.gl_pathv[i]);
		if (read_str(path, buf, sizeof(buf)) || strcmp(buf, name))
			continue;
		snprintf(path, sizeof(path), "%s/num_users", g.gl_pathv[i]);
		if (!read_str(path, buf, sizeof(buf)))
			users = atoi(buf);
	}
	globfree(&g);
	return users;
}

/*
 * A core unbound under the device while jobs run on every core (issue 28,
 * finding 9): fw_devlink does this when the core's supply goes away, sysfs
 * does it here. The device goes; every job ends (done, or failed with
 * -ENODEV); the file's close, the schedulers and the IRQ no longer reach
 * the core's freed backend (KASAN in the debug guests, a crash or a WARN
 * otherwise); binding the core again brings the device back.
 */
TEST_F(board, unbind_a_core_with_jobs_in_flight)
{
	unsigned long long mark = klog_mark();
	struct sync_file_info info = { 0 };
	struct pollfd pfd = { .events = POLLIN };
	const char *name;
	uint32_t out;
	int status = 0;

	ASSERT_LT(1, self->ncores);
	name = strrchr(self->cores[1], '/') + 1;
	ASSERT_EQ(0, access(CORE_DRIVER "/unbind", W_OK)) TH_LOG("no sysfs unbind for the cores");
	ASSERT_EQ(0, rkt_syncobj_create(self->fd, &out));
	ASSERT_EQ(0, rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, 1000000));
	ASSERT_EQ(0, submit_jobs(self->fd, &self->q, 4, 50, out));
	/* the device's ioctls end with it: the last fence as a sync_file */
	ASSERT_EQ(0, drmSyncobjExportSyncFile(self->fd, out, &pfd.fd));
	usleep(20000);
	ASSERT_EQ(0, write_str(CORE_DRIVER "/unbind", name));
	EXPECT_FALSE(rkt_device_bound()) TH_LOG("the device outlived a core");
	EXPECT_EQ(1, poll(&pfd, 1, 10000)) TH_LOG("a job never ended");
	ASSERT_EQ(0, ioctl(pfd.fd, SYNC_IOC_FILE_INFO, &info));
	close(pfd.fd);
	EXPECT_TRUE(info.status == 1 || info.status == -ENODEV) TH_LOG("last fence %d",
									info.status);
	rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, RKT_SIM_TASK_NS_DEFAULT);
	close(self->fd);
	self->fd = -1;
	usleep(100000);

	if (write_str(CORE_DRIVER "/bind", name))
		system("dmesg | grep -i -e rkaccel -e npu | tail -n 20 | sed 's/^/# /'");
	ASSERT_EQ(0, rkt_wait_device(10000)) TH_LOG("no device after the core came back");
	self->fd = rkt_open_fd();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, rkt_syncobj_create(self->fd, &out));
	ASSERT_EQ(0, submit_jobs(self->fd, &self->q, 1, 1, out));
	EXPECT_EQ(0, rkt_syncobj_wait(self->fd, out, rkt_deadline_ms(10000)));
	EXPECT_EQ(0, rkt_syncobj_status(self->fd, out, &status));
	EXPECT_EQ(1, status) TH_LOG("a job on the device bound again");
	EXPECT_FALSE(kmsg_scan(mark, "WARNING:", NULL));
	EXPECT_FALSE(kmsg_scan(mark, "while the core is", NULL))
		TH_LOG("the simulator saw a register access to a core that cannot answer");
}

/*
 * The simulated power domains' state from genpd's debugfs (device tree
 * only): the NPU's top domain and those of its @n cores. 1 when all are
 * on, 0 when all are off, -1 when mixed or not there.
 */
static int npu_domains_on(unsigned int n)
{
	char path[128], state[32];
	unsigned int i, on = 0, off = 0;

	for (i = 0; i <= n; i++) {
		if (i == n)
			snprintf(path, sizeof(path), "%s-top/current_state",
				 "/sys/kernel/debug/pm_genpd/npu-sim-cru");
		else
			snprintf(path, sizeof(path), "%s-core%u/current_state",
				 "/sys/kernel/debug/pm_genpd/npu-sim-cru", i);
		if (read_str(path, state, sizeof(state)))
			return -1;
		on += !strncmp(state, "on", 2);
		off += !strncmp(state, "off", 3);
	}
	return on == n + 1 ? 1 : off == n + 1 ? 0 : -1;
}

/*
 * Runtime PM: with a short autosuspend delay each core suspends when idle,
 * resumes for a job (its active time grows) and suspends again; with a
 * device tree, the NPU's power domains follow (off idle, on for jobs).
 */
TEST_F(board, runtime_pm_suspends_and_resumes)
{
	uint64_t active[RKACCEL_MAX_CORES_TEST], suspended[RKACCEL_MAX_CORES_TEST];
	char status[32], delay[RKACCEL_MAX_CORES_TEST][32], path[400];
	uint64_t losses = 0, losses_after = 0;
	uint32_t out;
	int i, ms;

	ASSERT_LT(0, self->ncores);
	for (i = 0; i < self->ncores; i++) {
		ASSERT_EQ(0, core_attr(self->cores[i], "power/autosuspend_delay_ms", delay[i],
				       sizeof(delay[i])));
		snprintf(path, sizeof(path), "%s/power/autosuspend_delay_ms", self->cores[i]);
		ASSERT_EQ(0, write_str(path, "50"));
	}
	for (i = 0; i < self->ncores; i++) {
		for (ms = 0; ms < 3000; ms += 20) {
			core_attr(self->cores[i], "power/runtime_status", status, sizeof(status));
			if (!strcmp(status, "suspended"))
				break;
			usleep(20000);
		}
		EXPECT_STREQ("suspended", status) TH_LOG("%s idle", self->cores[i]);
		active[i] = core_attr_u64(self->cores[i], "power/runtime_active_time");
		suspended[i] = core_attr_u64(self->cores[i], "power/runtime_suspended_time");
	}
	if (device_tree()) {
		EXPECT_EQ(0, npu_domains_on(self->q.num_cores)) TH_LOG("idle cores, yet not all NPU domains off");
	}
	rkt_param_read_u64("/sys/module/rkaccel_sim/parameters/power_losses", &losses);

	ASSERT_EQ(0, rkt_syncobj_create(self->fd, &out));
	ASSERT_EQ(0, rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, 1000000));
	/* 300 ms of work: the cores and domains stay up while a debug kernel reads them */
	ASSERT_EQ(0, submit_jobs(self->fd, &self->q, 6, 50, out));
	usleep(10000);
	for (i = 0; i < self->ncores; i++) {
		core_attr(self->cores[i], "power/runtime_status", status, sizeof(status));
		EXPECT_STREQ("active", status) TH_LOG("%s with jobs queued", self->cores[i]);
	}
	if (device_tree()) {
		EXPECT_EQ(1, npu_domains_on(self->q.num_cores)) TH_LOG("jobs queued, yet an NPU domain is off");
	}
	EXPECT_EQ(0, rkt_syncobj_wait(self->fd, out, rkt_deadline_ms(10000)));
	rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, RKT_SIM_TASK_NS_DEFAULT);
	usleep(300000);
	for (i = 0; i < self->ncores; i++) {
		core_attr(self->cores[i], "power/runtime_status", status, sizeof(status));
		EXPECT_STREQ("suspended", status) TH_LOG("%s after its jobs", self->cores[i]);
		EXPECT_LT(active[i], core_attr_u64(self->cores[i], "power/runtime_active_time"));
		EXPECT_LT(suspended[i],
			  core_attr_u64(self->cores[i], "power/runtime_suspended_time"));
		snprintf(path, sizeof(path), "%s/power/autosuspend_delay_ms", self->cores[i]);
		write_str(path, delay[i]);
	}
	/* the domains went off again: each core lost its registers, and ran */
	rkt_param_read_u64("/sys/module/rkaccel_sim/parameters/power_losses", &losses_after);
	if (device_tree()) {
		EXPECT_LE(losses + self->q.num_cores, losses_after)
			TH_LOG("the simulated cores kept their registers through power-off");
	}
}

/* The devfreq device of the NPU clock (core 0's), "" without one. */
static void devfreq_dir(char *buf, size_t len)
{
	glob_t g;

	buf[0] = '\0';
	if (!glob(CORE_DRIVER "/*/devfreq/*/cur_freq", 0, NULL, &g) && g.gl_pathc &&
	    strlen(g.gl_pathv[0]) < len) {
		strcpy(buf, g.gl_pathv[0]);
		*strrchr(buf, '/') = '\0';
	}
	globfree(&g);
}

static uint64_t devfreq_u64(const char *dir, const char *attr)
{
	char path[400], buf[64] = "0";

	snprintf(path, sizeof(path), "%s/%s", dir, attr);
	read_str(path, buf, sizeof(buf));
	return strtoull(buf, NULL, 0);
}

/* Wait up to @ms for cur_freq to be @hz; the last value read. */
static uint64_t devfreq_wait(const char *dir, uint64_t hz, int ms)
{
	uint64_t cur = devfreq_u64(dir, "cur_freq");

	for (; cur != hz && ms > 0; ms -= 20) {
		usleep(20000);
		cur = devfreq_u64(dir, "cur_freq");
	}
	return cur;
}

/*
 * simple_ondemand: idle, the NPU clock falls to the lowest OPP; busy, it
 * rises to the highest; idle again, it falls back.
 */
TEST_F(board, devfreq_follows_load)
{
	char dir[300];
	uint64_t min, max, busy_peak = 0;
	uint32_t out;
	int ms;

	devfreq_dir(dir, sizeof(dir));
	if (!dir[0])
		SKIP(return, "no devfreq: the NPU's OPP table comes from the device tree");
	min = devfreq_u64(dir, "min_freq");
	max = devfreq_u64(dir, "max_freq");
	ASSERT_LT(min, max);
	EXPECT_EQ(min, devfreq_wait(dir, min, 3000)) TH_LOG("idle: not at the lowest OPP");

	ASSERT_EQ(0, rkt_syncobj_create(self->fd, &out));
	ASSERT_EQ(0, rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, 1000000));
	/* 4 s of work: the governor's windows see it busy on a loaded host too */
	ASSERT_EQ(0, submit_jobs(self->fd, &self->q, 40, 100, out));
	for (ms = 0; ms < 6000 && busy_peak != max; ms += 20) {
		usleep(20000);
		busy_peak = devfreq_u64(dir, "cur_freq");
	}
	EXPECT_EQ(max, busy_peak) TH_LOG("under load the clock stayed at %llu",
					 (unsigned long long)busy_peak);
	EXPECT_EQ(0, rkt_syncobj_wait(self->fd, out, rkt_deadline_ms(30000)));
	rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, RKT_SIM_TASK_NS_DEFAULT);
	EXPECT_EQ(min, devfreq_wait(dir, min, 3000)) TH_LOG("idle again: not back down");
}

/* The time devfreq has counted in all its states, ms (trans_stat's last column). */
static uint64_t devfreq_counted_ms(const char *dir)
{
	char path[400], line[512];
	uint64_t ms = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/trans_stat", dir);
	f = fopen(path, "r");
	if (!f)
		return UINT64_MAX;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':'), *last = strrchr(line, ' ');
		char *p = line;

		while (*p == ' ' || *p == '*')
			p++;
		/* a state's row: "[*] <freq>: <transitions>... <time>" */
		if (!colon || colon == p || strspn(p, "0123456789") != (size_t)(colon - p) ||
		    !last)
			continue;
		ms += strtoull(last + 1, NULL, 10);
	}
	fclose(f);
	return ms;
}

/* Wait up to @ms for every core to be runtime-suspended. */
static bool cores_suspended(FIXTURE_DATA(board) *self, int ms)
{
	char status[32];
	int i;

	for (; ms > 0; ms -= 20) {
		for (i = 0; i < self->ncores; i++) {
			core_attr(self->cores[i], "power/runtime_status", status, sizeof(status));
			if (strcmp(status, "suspended"))
				break;
		}
		if (i == self->ncores)
			return true;
		usleep(20000);
	}
	return false;
}

/*
 * devfreq runs while any core is awake and stops when every core sleeps
 * (issue 28 finding 13, as panfrost suspends devfreq with its GPU): a
 * stopped devfreq's trans_stat counts no time. A job on the last core
 * alone, while core 0 (devfreq's own device) sleeps, starts it again: the
 * clock is the whole NPU's.
 */
TEST_F(board, devfreq_sleeps_with_the_cores)
{
	char dir[300], core0[300], status[32], delay[RKACCEL_MAX_CORES_TEST][32], path[400];
	struct drm_rkaccel_submit_bo b = { 0 };
	uint32_t last = self->q.num_cores - 1, ctx, out;
	struct drm_rkaccel_task t;
	struct rkt_chain c;
	struct rkt_bo bo;
	uint64_t t0, t1;
	int i;

	devfreq_dir(dir, sizeof(dir));
	if (!dir[0])
		SKIP(return, "no devfreq: the NPU's OPP table comes from the device tree");
	snprintf(core0, sizeof(core0), "%.*s", (int)(strstr(dir, "/devfreq/") - dir), dir);
	for (i = 0; i < self->ncores; i++) {
		ASSERT_EQ(0, core_attr(self->cores[i], "power/autosuspend_delay_ms", delay[i],
				       sizeof(delay[i])));
		snprintf(path, sizeof(path), "%s/power/autosuspend_delay_ms", self->cores[i]);
		ASSERT_EQ(0, write_str(path, "50"));
	}
	ASSERT_TRUE(cores_suspended(self, 3000));
	usleep(100000);	/* the driver stops devfreq from a work item */
	t0 = devfreq_counted_ms(dir);
	usleep(300000);
	t1 = devfreq_counted_ms(dir);
	ASSERT_NE(UINT64_MAX, t0);
	EXPECT_EQ(t0, t1) TH_LOG("devfreq counted %llu ms while every core slept",
				 (unsigned long long)(t1 - t0));

	ASSERT_EQ(0, rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, 1000000));
	ASSERT_EQ(0, rkt_bo_new(self->fd, rkt_chain_bytes(400, 2), 0, &bo));
	ASSERT_EQ(0, rkt_chain_build(bo.map, bo.npu_addr, bo.map_len, 0, 400, 2, 0, &c));
	t = rkt_chain_task(&c);
	b.handle = bo.handle;
	ASSERT_EQ(0, rkt_syncobj_create(self->fd, &out));
	ASSERT_EQ(0, rkt_ctx_create(self->fd, 1u << last, DRM_RKACCEL_PRIORITY_NORMAL, &ctx));
	ASSERT_EQ(0, rkt_submit(self->fd, ctx, &t, 1, &b, 1, NULL, 0, out, 0));
	usleep(50000);
	t0 = devfreq_counted_ms(dir);
	usleep(200000);
	t1 = devfreq_counted_ms(dir);
	core_attr(core0, "power/runtime_status", status, sizeof(status));
	EXPECT_LT(t0, t1) TH_LOG("devfreq stopped while core %u worked (core 0 %s)", last,
				 status);
	EXPECT_EQ(0, rkt_syncobj_wait(self->fd, out, rkt_deadline_ms(10000)));
	rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, RKT_SIM_TASK_NS_DEFAULT);
	munmap(bo.map, bo.map_len);
	rkt_gem_close(self->fd, bo.handle);
	for (i = 0; i < self->ncores; i++) {
		snprintf(path, sizeof(path), "%s/power/autosuspend_delay_ms", self->cores[i]);
		write_str(path, delay[i]);
	}
}

static unsigned long ksym_addr(const char *name);

/* The thermal cooling device named @type: its sysfs directory, or "". */
static void cooling_dir(const char *type, char *buf, size_t len)
{
	char path[300], name[128];
	glob_t g;
	size_t i;

	buf[0] = '\0';
	if (glob("/sys/class/thermal/cooling_device*", 0, NULL, &g))
		return;
	for (i = 0; i < g.gl_pathc && !buf[0]; i++) {
		snprintf(path, sizeof(path), "%s/type", g.gl_pathv[i]);
		if (!read_str(path, name, sizeof(name)) && !strcmp(name, type))
			snprintf(buf, len, "%s", g.gl_pathv[i]);
	}
	globfree(&g);
}

/*
 * The NPU's devfreq is a thermal cooling device ("devfreq-" and the core's
 * name, as the devfreq cooling code names it): its deepest state caps the
 * clock below the highest OPP, state 0 lifts the cap.
 */
TEST_F(board, cooling_device_caps_the_clock)
{
	char dir[300], cdev[300], type[160], path[400], buf[32];
	uint64_t max, capped;
	const char *core;

	devfreq_dir(dir, sizeof(dir));
	if (!dir[0])
		SKIP(return, "no devfreq: the NPU's OPP table comes from the device tree");
	if (!ksym_addr("devfreq_cooling_em_register"))
		SKIP(return, "kernel without CONFIG_DEVFREQ_THERMAL (the debug kernel)");
	/* dir is CORE_DRIVER/<core>/devfreq/<devfreq> */
	core = dir + strlen(CORE_DRIVER "/");
	snprintf(type, sizeof(type), "devfreq-%.*s", (int)strcspn(core, "/"), core);
	cooling_dir(type, cdev, sizeof(cdev));
	ASSERT_NE(0, cdev[0]) TH_LOG("no cooling device of type %s", type);
	max = devfreq_u64(dir, "max_freq");
	ASSERT_EQ(0, core_attr(cdev, "max_state", buf, sizeof(buf)));
	ASSERT_LT(0, atoi(buf));
	snprintf(path, sizeof(path), "%s/cur_state", cdev);
	ASSERT_EQ(0, write_str(path, buf));
	capped = devfreq_u64(dir, "max_freq");
	EXPECT_GT(max, capped) TH_LOG("state %s: max_freq %llu", buf,
				      (unsigned long long)capped);
	ASSERT_EQ(0, write_str(path, "0"));
	EXPECT_EQ(max, devfreq_u64(dir, "max_freq"));
}

/*
 * System sleep with jobs queued: the cores drain and suspend, resume, and
 * every job completes without an error or a reset. pm_test=devices stops
 * after the devices' suspend, which every guest supports.
 */
TEST_F(board, system_suspend_with_jobs_queued)
{
	unsigned long long mark = klog_mark();
	long resets;
	uint32_t out;
	int status = 0;

	if (access("/sys/power/pm_test", W_OK) || access("/sys/power/state", W_OK))
		SKIP(return, "no /sys/power/pm_test (kernel without PM_SLEEP or PM_DEBUG)");
	resets = cores_resets();
	ASSERT_LE(0, resets);
	write_str("/sys/module/suspend/parameters/pm_test_delay", "1");
	ASSERT_EQ(0, write_str("/sys/power/pm_test", "devices"));

	ASSERT_EQ(0, rkt_syncobj_create(self->fd, &out));
	ASSERT_EQ(0, rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, 1000000));
	ASSERT_EQ(0, submit_jobs(self->fd, &self->q, 6, 50, out));
	EXPECT_EQ(0, write_str("/sys/power/state", "freeze"));
	write_str("/sys/power/pm_test", "none");

	EXPECT_EQ(0, rkt_syncobj_wait(self->fd, out, rkt_deadline_ms(30000)));
	rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, RKT_SIM_TASK_NS_DEFAULT);
	EXPECT_EQ(0, rkt_syncobj_status(self->fd, out, &status));
	EXPECT_EQ(1, status) TH_LOG("the last job's fence after resume");
	EXPECT_EQ(resets, cores_resets()) TH_LOG("a core was reset");
	EXPECT_TRUE(kmsg_scan(mark, "PM: suspend debug: Waiting for", NULL));
}

#define SIM_PARAM(name)	"/sys/module/rkaccel_sim/parameters/" name

/*
 * A job on core 0 whose second task is fetched from an address nothing
 * maps: the core's IOMMU faults, the job fails with -EIO and fault_work
 * resets the core. Its fence in @out.
 */
static int submit_faulting_job(int fd, uint32_t out)
{
	struct drm_rkaccel_submit_bo b = { 0 };
	struct drm_rkaccel_task t;
	struct rkt_chain c;
	struct rkt_bo bo;
	uint32_t ctx;
	int ret;

	ret = rkt_bo_new(fd, rkt_chain_bytes(2, 2), 0, &bo);
	if (ret)
		return ret;
	ret = rkt_chain_build(bo.map, bo.npu_addr, bo.map_len, 0, 2, 2, 0, &c);
	if (!ret) {
		rkt_chain_set_next(bo.map, &c, 0, 0xfff00000, c.entries);
		t = rkt_chain_task(&c);
		b.handle = bo.handle;
		ret = rkt_ctx_create(fd, 1, DRM_RKACCEL_PRIORITY_NORMAL, &ctx);
	}
	if (!ret)
		ret = rkt_submit(fd, ctx, &t, 1, &b, 1, NULL, 0, out, 0);
	munmap(bo.map, bo.map_len);
	rkt_gem_close(fd, bo.handle);
	return ret;
}

/* Up to @ms for the simulator's reset count to pass @than; the last count. */
static uint64_t sim_resets_above(uint64_t than, int ms)
{
	uint64_t n = 0;

	for (; ms > 0; ms -= 10) {
		if (!rkt_param_read_u64(SIM_PARAM("resets"), &n) && n > than)
			break;
		usleep(10000);
	}
	return n;
}

/*
 * System sleep while a fault's recovery resets a core (issue 28, finding
 * 6). The failed job is already off the core, so a drain that only waits
 * for core->job lets the core power off under the reset, whose register
 * writes then meet an unclocked core (a bus hang on silicon, a WARN here).
 * sim_reset_hold_ms holds the reset until the core's clock stops (1 s at
 * most): only a suspend that waits for the recovery first avoids that,
 * every time. The failed job ends with -EIO, the next one runs.
 */
TEST_F(board, system_suspend_during_fault_recovery)
{
	unsigned long long mark = klog_mark();
	uint64_t resets = 0;
	uint32_t bad, good;
	int status = 0;

	if (access("/sys/power/pm_test", W_OK) || access("/sys/power/state", W_OK))
		SKIP(return, "no /sys/power/pm_test (kernel without PM_SLEEP or PM_DEBUG)");
	ASSERT_EQ(0, rkt_param_read_u64(SIM_PARAM("resets"), &resets));
	write_str("/sys/module/suspend/parameters/pm_test_delay", "1");
	ASSERT_EQ(0, write_str("/sys/power/pm_test", "devices"));
	ASSERT_EQ(0, rkt_param_write_u64(SIM_PARAM("sim_reset_hold_ms"), 1000));

	ASSERT_EQ(0, rkt_syncobj_create(self->fd, &bad));
	ASSERT_EQ(0, submit_faulting_job(self->fd, bad));
	EXPECT_LT(resets, sim_resets_above(resets, 5000)) TH_LOG("the fault reset no core");
	EXPECT_EQ(0, write_str("/sys/power/state", "freeze"));
	write_str("/sys/power/pm_test", "none");
	rkt_param_write_u64(SIM_PARAM("sim_reset_hold_ms"), 0);

	EXPECT_EQ(0, rkt_syncobj_wait(self->fd, bad, rkt_deadline_ms(10000)));
	EXPECT_EQ(0, rkt_syncobj_status(self->fd, bad, &status));
	EXPECT_EQ(-EIO, status) TH_LOG("the faulting job's fence");
	EXPECT_FALSE(kmsg_scan(mark, "WARNING:", NULL)) TH_LOG("a core was touched while off");
	EXPECT_FALSE(kmsg_scan(mark, "while the core is", NULL))
		TH_LOG("the simulator saw a register access to a core that cannot answer");

	ASSERT_EQ(0, rkt_syncobj_create(self->fd, &good));
	ASSERT_EQ(0, submit_jobs(self->fd, &self->q, 1, 1, good));
	EXPECT_EQ(0, rkt_syncobj_wait(self->fd, good, rkt_deadline_ms(10000)));
	EXPECT_EQ(0, rkt_syncobj_status(self->fd, good, &status));
	EXPECT_EQ(1, status) TH_LOG("a job after the resume");
}

/* Every case below unloads rkaccel_sim: the fixture's file goes first. */
static void drop_file(struct __test_metadata *_metadata, int *fd)
{
	close(*fd);
	*fd = -1;
	ASSERT_EQ(0, rkt_module_remove("rkaccel_sim", 5000));
	EXPECT_FALSE(rkt_device_bound()) TH_LOG("the device outlived its cores");
}

/*
 * Every core holds the NPU's rails from probe, before any job or rate
 * change: the OPP core enables npu-supply for core 0 only, and nothing else
 * enables sram-supply, which late cleanup would switch off. What the cores
 * hold is the users a rail loses when they leave (others, the framework's
 * own among them, stay). The rails as the RK3588 QEMU tree
 * (dts/qemu/rk3588-npu-sim-rails.dtsi) and boards name them.
 */
TEST_F(board, rails_held_from_probe)
{
	static const char *const rails[] = { "vdd_npu_s0", "vdd_npu_mem_s0" };
	int i, bound[2], found = 0;
	char sim[64];

	ASSERT_LT(0, self->ncores);
	for (i = 0; i < 2; i++) {
		bound[i] = rail_users(rails[i]);
		found += bound[i] >= 0;
	}
	if (!found)
		SKIP(return, "no regulator named vdd_npu_s0 or vdd_npu_mem_s0");
	rkt_sim_module_params(sim, sizeof(sim));
	drop_file(_metadata, &self->fd);
	ASSERT_EQ(0, core_dirs(self->cores, RKACCEL_MAX_CORES_TEST)) TH_LOG("cores still bound");
	for (i = 0; i < 2; i++) {
		int left = rail_users(rails[i]);

		if (bound[i] < 0)
			continue;
		EXPECT_LE(self->ncores, bound[i] - left)
			TH_LOG("%s: %d users with the %d cores bound, %d without",
			       rails[i], bound[i], self->ncores, left);
	}
	ASSERT_EQ(0, rkt_modules_load(sim));
}

/* Removal unbinds every core; a second load probes them all again. */
TEST_F(board, remove_and_probe_again)
{
	char sim[64], params[96];

	rkt_sim_module_params(sim, sizeof(sim));
	drop_file(_metadata, &self->fd);
	/* without a device tree the cores are created last to first */
	snprintf(params, sizeof(params), "%s%s", sim, sim[0] ? " reverse=1" : "");
	ASSERT_EQ(0, rkt_module_load(RKT_SIM_MODULE, params));
	ASSERT_EQ(0, rkt_wait_device(10000));
	self->fd = rkt_open_fd();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, rkt_query(self->fd, &self->q));
	EXPECT_EQ((int)self->q.num_cores, core_dirs(self->cores, RKACCEL_MAX_CORES_TEST));
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, rkt_module_remove("rkaccel_sim", 5000));
	ASSERT_EQ(0, rkt_modules_load(sim));
}

/*
 * A core left with its interrupt enabled and a completion latched, its
 * line up before rkaccel has a handler (a kexec from the vendor kernel):
 * the probe quiets each core before requesting its IRQ (issue 28, finding
 * 13). No line is disabled, and the device runs jobs.
 */
TEST_F(board, pending_interrupt_at_probe)
{
	char sim[64], params[128];
	int cleared = rkt_klog_count("left at probe: cleared");
	uint32_t out;
	int status;

	rkt_sim_module_params(sim, sizeof(sim));
	drop_file(_metadata, &self->fd);
	snprintf(params, sizeof(params), "%s sim_pending_at_load=1", sim);
	ASSERT_EQ(0, rkt_module_load(RKT_SIM_MODULE, params));
	ASSERT_EQ(0, rkt_wait_device(10000));
	usleep(100000);	/* a resent interrupt runs from a tasklet */
	self->fd = rkt_open_fd();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, rkt_query(self->fd, &self->q));
	EXPECT_EQ(cleared + (int)self->q.num_cores, rkt_klog_count("left at probe: cleared"))
		TH_LOG("a core's latched interrupt was not cleared at probe");
	EXPECT_FALSE(rkt_klog_has("nobody cared")) TH_LOG("an interrupt line was disabled");
	ASSERT_EQ(0, rkt_syncobj_create(self->fd, &out));
	ASSERT_EQ(0, submit_jobs(self->fd, &self->q, 2, 1, out));
	EXPECT_EQ(0, rkt_syncobj_wait(self->fd, out, rkt_deadline_ms(10000)));
	EXPECT_EQ(0, rkt_syncobj_status(self->fd, out, &status));
	EXPECT_EQ(1, status);
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, rkt_module_remove("rkaccel_sim", 5000));
	ASSERT_EQ(0, rkt_modules_load(sim));
}

/*
 * @message or, when given, @alt (the same line without symbolic errno
 * names), logged since @mark.
 */
static bool logged(unsigned long long mark, const char *message, const char *alt)
{
	return kmsg_scan(mark, message, NULL) || (alt && kmsg_scan(mark, alt, NULL));
}

/*
 * Up to 10 s for @message (or @alt): a device tree's cores probe from the
 * deferred list, after the load returned. The driver's lines when it never
 * comes.
 */
static bool wait_logged(unsigned long long mark, const char *message, const char *alt)
{
	for (int i = 0; i < 100 && !logged(mark, message, alt); i++)
		usleep(100000);
	if (logged(mark, message, alt))
		return true;
	system("dmesg | grep -i -e rkaccel -e npu | tail -n 20 | sed 's/^/# /'");
	return false;
}

/*
 * A broken board: the probe fails with the message that names what is
 * missing, the device never appears, and a good load works afterwards.
 */
static void probe_fails(struct __test_metadata *_metadata, int *fd, const char *fault,
			const char *message, const char *alt)
{
	char sim[64], params[128];
	unsigned long long mark;
	int ret;

	rkt_sim_module_params(sim, sizeof(sim));
	drop_file(_metadata, fd);
	snprintf(params, sizeof(params), "%s fault=%s", sim, fault);
	mark = klog_mark();
	ret = rkt_module_load(RKT_SIM_MODULE, params);
	if (sim[0]) {
		/* sim= asked for the device: no device, no module */
		EXPECT_EQ(-ENODEV, ret);
	} else {
		/* a device tree's cores probe later, from the deferred list */
		EXPECT_EQ(0, ret);
	}
	EXPECT_TRUE(wait_logged(mark, message, alt)) TH_LOG("no \"%s\" in the log", message);
	EXPECT_FALSE(rkt_device_bound());
	if (!ret) {
		EXPECT_EQ(0, rkt_module_remove("rkaccel_sim", 5000));
	}
	ASSERT_EQ(0, rkt_modules_load(sim));
}

TEST_F(board, probe_fails_without_a_clock)
{
	/* dev_err_probe() prints the errno's name only with CONFIG_SYMBOLIC_ERRNAME */
	probe_fails(_metadata, &self->fd, "clock:1", "error -ENOENT: clocks", "error -2: clocks");
}

TEST_F(board, probe_fails_without_an_interrupt)
{
	if (device_tree())
		SKIP(return, "the device tree has the interrupt; x86's platform devices test it");
	probe_fails(_metadata, &self->fd, "irq:1", "IRQ index 0 not found", NULL);
}

/*
 * A core whose registers read zero (a fused core, RK3583/RK3582, in a tree
 * that still enables it and has no "cores" nvmem cell to say so): the NPU
 * comes up with the other cores, the log names the absent one, and jobs
 * run on every core left (issue 28, finding 8).
 */
TEST_F(board, a_silent_core_leaves_the_others)
{
	unsigned int full = self->q.num_cores;
	char sim[64], params[128];
	unsigned long long mark;
	uint32_t out;
	int status = 0;

	rkt_sim_module_params(sim, sizeof(sim));
	drop_file(_metadata, &self->fd);
	snprintf(params, sizeof(params), "%s fault=version:1", sim);
	mark = klog_mark();
	ASSERT_EQ(0, rkt_module_load(RKT_SIM_MODULE, params));
	EXPECT_EQ(0, rkt_wait_device(10000)) TH_LOG("no NPU without its core 1");
	EXPECT_TRUE(wait_logged(mark, "PC_VERSION reads 0x00000000: the core does not answer",
				NULL));
	EXPECT_TRUE(kmsg_scan(mark, "core 1 of", NULL) &&
		    kmsg_scan(mark, "is absent: the NPU goes on without it", NULL));
	self->fd = rkt_open_fd();
	if (self->fd >= 0) {
		ASSERT_EQ(0, rkt_query(self->fd, &self->q));
		EXPECT_EQ(full - 1, self->q.num_cores);
		ASSERT_EQ(0, rkt_syncobj_create(self->fd, &out));
		ASSERT_EQ(0, submit_jobs(self->fd, &self->q, 2, 3, out));
		EXPECT_EQ(0, rkt_syncobj_wait(self->fd, out, rkt_deadline_ms(10000)));
		EXPECT_EQ(0, rkt_syncobj_status(self->fd, out, &status));
		EXPECT_EQ(1, status) TH_LOG("a job on the NPU without core 1");
		close(self->fd);
		self->fd = -1;
	}
	ASSERT_EQ(0, rkt_module_remove("rkaccel_sim", 5000));
	ASSERT_EQ(0, rkt_modules_load(sim));
}

/*
 * rkaccel loaded with async_probe (a kernel command line's
 * rkaccel.async_probe, or driver_async_probe=): the cores probe
 * concurrently, and the one that completes the set still makes the device
 * (issue 28, finding 8).
 */
TEST_F(board, probes_with_async_probe)
{
	char sim[64], params[256];

	rkt_sim_module_params(sim, sizeof(sim));
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, rkt_modules_remove(5000));
	rkt_driver_params(params, sizeof(params), "async_probe=1");
	ASSERT_EQ(0, rkt_module_load(RKT_DRIVER_MODULE, params));
	ASSERT_EQ(0, rkt_module_load(RKT_SIM_MODULE, sim));
	EXPECT_EQ(0, rkt_wait_device(10000)) TH_LOG("no device with async_probe");
	self->fd = rkt_open_fd();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, rkt_query(self->fd, &self->q));
	EXPECT_EQ((int)self->q.num_cores, core_dirs(self->cores, RKACCEL_MAX_CORES_TEST));
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, rkt_modules_remove(5000));
	ASSERT_EQ(0, rkt_modules_load(sim));
	self->fd = rkt_open_fd();
	ASSERT_LE(0, self->fd);
}

/*
 * Mainline's rocket matches the same core nodes. With another driver
 * holding one core (rkaccel_test_other.ko, loaded first), rkaccel refuses
 * the others by name and makes no device; without it, all bind again.
 */
TEST_F(board, refuses_a_core_another_driver_holds)
{
	const char *other = "/modules/rkaccel_test_other.ko";
	unsigned long long mark;
	char params[256];

	if (!device_tree())
		SKIP(return, "rkaccel and rocket share device-tree nodes; x86 has none");
	if (access(other, R_OK))
		SKIP(return, "no %s in this guest", other);
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, rkt_modules_remove(5000));
	mark = klog_mark();
	/* registered first, it is offered each core before rkaccel is */
	ASSERT_EQ(0, rkt_module_load(other, ""));
	rkt_driver_params(params, sizeof(params), "");
	ASSERT_EQ(0, rkt_module_load(RKT_DRIVER_MODULE, params));
	ASSERT_EQ(0, rkt_module_load(RKT_SIM_MODULE, ""));
	EXPECT_TRUE(wait_logged(mark, "is bound to rkaccel-test-other: unbind it or blacklist",
				NULL));
	EXPECT_TRUE(kmsg_scan(mark, "held by rkaccel_test_other", NULL));
	EXPECT_FALSE(rkt_device_bound()) TH_LOG("rkaccel made a device without all cores");
	/* the simulator first: its CRU's consumers, both drivers' cores, unbind */
	ASSERT_EQ(0, rkt_module_remove("rkaccel_sim", 5000));
	ASSERT_EQ(0, rkt_module_remove("rkaccel_test_other", 5000));
	ASSERT_EQ(0, rkt_module_remove("rkaccel", 5000));
	ASSERT_EQ(0, rkt_modules_load(""));
	self->fd = rkt_open_fd();
	ASSERT_LE(0, self->fd);
}

/* npu_mhz fixes the NPU clock at that OPP: no devfreq, the CRU's rate set. */
TEST_F(board, npu_mhz_fixes_the_clock)
{
	char dir[300], rate[64] = "", params[256];
	unsigned long long mark;
	glob_t g;

	devfreq_dir(dir, sizeof(dir));
	if (!dir[0])
		SKIP(return, "no OPP table: the NPU's OPP table comes from the device tree");
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, rkt_modules_remove(5000));
	rkt_driver_params(params, sizeof(params), "npu_mhz=600");
	mark = klog_mark();
	ASSERT_EQ(0, rkt_module_load(RKT_DRIVER_MODULE, params));
	ASSERT_EQ(0, rkt_modules_load(""));
	devfreq_dir(dir, sizeof(dir));
	EXPECT_STREQ("", dir) TH_LOG("devfreq with npu_mhz set");
	if (!glob("/sys/kernel/debug/clk/*-npu/clk_rate", 0, NULL, &g) && g.gl_pathc)
		read_str(g.gl_pathv[0], rate, sizeof(rate));
	globfree(&g);
	EXPECT_STREQ("600000000", rate);
	EXPECT_TRUE(kmsg_scan(mark, "NPU clock 600 MHz (npu_mhz, fixed)", NULL));
	ASSERT_EQ(0, rkt_modules_remove(5000));
	ASSERT_EQ(0, rkt_modules_load(""));
}

/* A kernel symbol's address from /proc/kallsyms (root sees them), 0 if none. */
static unsigned long ksym_addr(const char *name)
{
	unsigned long addr, found = 0;
	char line[256], sym[128], type;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx %c %127s", &addr, &type, sym) == 3 && !strcmp(sym, name))
			found = addr;
	fclose(f);
	return found;
}

/* @len bytes of the running kernel at @addr, through /proc/kcore's segments. */
static int kcore_read(unsigned long addr, void *buf, size_t len)
{
	int fd = open("/proc/kcore", O_RDONLY | O_CLOEXEC), ret = -ENOENT;
	Elf64_Ehdr eh;
	Elf64_Phdr ph;

	if (fd < 0)
		return -errno;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG))
		ret = -EINVAL;
	for (unsigned int i = 0; ret == -ENOENT && i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + i * eh.e_phentsize) != sizeof(ph))
			ret = -EIO;
		else if (ph.p_type == PT_LOAD && addr >= ph.p_vaddr &&
			 addr + len <= ph.p_vaddr + ph.p_memsz)
			ret = pread(fd, buf, len, ph.p_offset + (addr - ph.p_vaddr)) ==
			      (ssize_t)len ? 0 : -EIO;
	}
	close(fd);
	return ret;
}

/*
 * The driver core's deferred-probe timeout as it is now, read from the
 * kernel (not the command line, whose last setting wins): seconds still to
 * run, 0 once it ran out, -1 when off. -ENOENT etc. when unreadable.
 */
static int deferred_probe_timeout(int *val)
{
	unsigned long addr = ksym_addr("driver_deferred_probe_timeout");

	return addr ? kcore_read(addr, val, sizeof(*val)) : -ENOENT;
}

/* Device-tree cores with no driver: probe them again (their provider came late). */
static void reprobe_cores(void)
{
	glob_t g;

	if (glob("/sys/bus/platform/devices/*.npu", 0, NULL, &g))
		return;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		char drv[400];

		snprintf(drv, sizeof(drv), "%s/driver", g.gl_pathv[i]);
		if (access(drv, F_OK))
			write_str("/sys/bus/platform/drivers_probe", strrchr(g.gl_pathv[i], '/') + 1);
	}
	globfree(&g);
}

/*
 * The cores' clock and power-domain provider, rkaccel_sim, can only load
 * after rkaccel.ko. Past the driver core's deferred-probe timeout a core
 * that finds no provider fails for good (-ETIMEDOUT) instead of waiting.
 * make check boots one guest with deferred_probe_timeout=1, in which
 * guest-init.sh waits for the timeout to run out before loading the
 * driver: every core must still have probed at boot, and again after a
 * reload. The other guests run with the timeout off: a SKIP there.
 */
TEST_F(board, probes_after_the_deferred_probe_timeout)
{
	char sim[64], params[256];
	int timeout = -2, i;

	if (!device_tree())
		SKIP(return, "no device tree: the cores wait for no clock or power-domain provider");
	if (access("/proc/kcore", R_OK))
		SKIP(return, "no /proc/kcore (the debug kernel): the timeout in effect is unreadable");
	ASSERT_EQ(0, deferred_probe_timeout(&timeout))
		TH_LOG("driver_deferred_probe_timeout through /proc/kallsyms and /proc/kcore");
	if (timeout < 0)
		SKIP(return, "the deferred-probe timeout is off in this guest (%d)", timeout);
	for (i = 0; i < 30 && timeout > 0; i++) {
		sleep(1);
		if (access("/proc/kcore", R_OK))
		SKIP(return, "no /proc/kcore (the debug kernel): the timeout in effect is unreadable");
	ASSERT_EQ(0, deferred_probe_timeout(&timeout));
	}
	ASSERT_EQ(0, timeout) TH_LOG("the deferred-probe timeout did not run out");
	EXPECT_EQ((int)self->q.num_cores, self->ncores) TH_LOG("cores probed at boot");
	if (!klog_has("deferred probe timeout, ignoring dependency"))
		TH_LOG("no core met the timeout at boot: the provider was not late");

	rkt_sim_module_params(sim, sizeof(sim));
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, rkt_modules_remove(5000));
	rkt_driver_params(params, sizeof(params), "");
	ASSERT_EQ(0, rkt_module_load(RKT_DRIVER_MODULE, params));
	ASSERT_EQ(0, rkt_module_load(RKT_SIM_MODULE, sim));
	reprobe_cores();
	ASSERT_EQ(0, rkt_wait_device(10000)) TH_LOG("no device after a reload");
	EXPECT_EQ((int)self->q.num_cores, core_dirs(self->cores, RKACCEL_MAX_CORES_TEST));
	self->fd = rkt_open_fd();
	ASSERT_LE(0, self->fd);
}

TEST_HARNESS_MAIN
