// SPDX-License-Identifier: MIT
/*
 * rkaccel-bench: multi-core scaling, submit overhead and memory of the NPU,
 * each figure a ratio to a baseline measured in the same run. Every figure
 * is measured in interleaved rounds (baseline, then each batch, then the
 * baseline again, round after round) and reported as the median of the
 * rounds with its min and max; a ratio above its ideal is reported as a
 * measurement error.
 *
 * On the simulated NPU the device time comes from the simulator's timing
 * model in timing-only mode (sim_compute=0), stretched by sim_time_scale
 * so that it dominates the host's own work; the output says so. On silicon
 * the same program runs the real cores and touches no parameter.
 *
 * --nets: the full-size networks of the zoo (tools/zoo.h) instead, per
 * network: tasks, register command and weight bytes, device time per
 * image on one core at 1 GHz, MAC utilisation and the throughput of batch
 * 3 on three cores against batch 1 on one (RK3588).
 */

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/sync_file.h>
#include <xf86drm.h>

#include "rkaccel.h"
#include "rkaccel_drm.h"
#include "args.h"
#include "rkaccel_npu_regs.h"
#include "zoo.h"

#define PROG		"rkaccel-bench"
/* the simulated NPU's timing model (rkaccel_sim.ko) */
#define PARAM_DIR	"/sys/module/rkaccel_sim/parameters/"
#define MAX_FIGURES	160
#define MAX_ROUNDS	15
#define LAT_SAMPLES	400
#define PIPE_DEPTH	2

/* One figure: its value in each round; the median is the result. */
struct figure {
	char key[48];
	double v[MAX_ROUNDS];
	unsigned int n;
	double ideal;		/* > 0: a median above it is a measurement error */
	double med, min, max;	/* after summarize() */
};

struct bench {
	struct rkaccel_device *dev;
	struct rkaccel_info info;
	const char *soc;	/* "rk3588" / "rk3576": the JSON key prefix */
	bool sim, quick;
	bool submit_only;	/* --submit-only: the submit figures alone */
	bool nets;		/* --nets: the network figures alone */
	bool host_io;		/* --host-io: the host's conversions, no device */
	uint32_t time_scale;
	unsigned int rounds;
	struct figure fig[MAX_FIGURES];
	unsigned int nfig;
};

static struct figure *fig_find(struct bench *b, const char *key, bool create)
{
	for (unsigned int i = 0; i < b->nfig; i++)
		if (!strcmp(b->fig[i].key, key))
			return &b->fig[i];
	if (!create || b->nfig == MAX_FIGURES)
		return NULL;
	snprintf(b->fig[b->nfig].key, sizeof(b->fig[0].key), "%s", key);
	return &b->fig[b->nfig++];
}

/* The figure whose name @fmt formats, made when @create. */
static struct figure *fig_vfind(struct bench *b, bool create, const char *fmt, va_list ap)
{
	char key[48];

	vsnprintf(key, sizeof(key), fmt, ap);
	return fig_find(b, key, create);
}

/* Add this round's @value of the figure named by @fmt. */
static void figure(struct bench *b, double value, const char *fmt, ...)
{
	struct figure *f;
	va_list ap;

	va_start(ap, fmt);
	f = fig_vfind(b, true, fmt, ap);
	va_end(ap);
	if (f && f->n < MAX_ROUNDS)
		f->v[f->n++] = value;
}

/* The ideal of a ratio figure: a median above it is not a result. */
static void figure_ideal(struct bench *b, double ideal, const char *fmt, ...)
{
	struct figure *f;
	va_list ap;

	va_start(ap, fmt);
	f = fig_vfind(b, false, fmt, ap);
	va_end(ap);
	if (f)
		f->ideal = ideal;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void summarize(struct bench *b)
{
	for (unsigned int i = 0; i < b->nfig; i++) {
		struct figure *f = &b->fig[i];
		double v[MAX_ROUNDS];

		if (!f->n)
			continue;
		memcpy(v, f->v, f->n * sizeof(v[0]));
		qsort(v, f->n, sizeof(v[0]), cmp_double);
		f->min = v[0];
		f->max = v[f->n - 1];
		f->med = f->n % 2 ? v[f->n / 2] : (v[f->n / 2 - 1] + v[f->n / 2]) / 2;
	}
}

/* A ratio whose median is above its ideal (with a rounding slack of 1e-9). */
static bool over_ideal(const struct figure *f)
{
	return f->ideal > 0 && f->med > f->ideal * (1 + 1e-9);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* --- simulator parameters ------------------------------------------------ */

static int param_rw(const char *name, const char *set, char *old, size_t old_len)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), PARAM_DIR "%s", name);
	if (old) {
		f = fopen(path, "r");
		if (!f || !fgets(old, (int)old_len, f)) {
			if (f)
				fclose(f);
			return -ENOENT;
		}
		fclose(f);
		old[strcspn(old, "\n")] = '\0';
	}
	if (!set)
		return 0;
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fputs(set, f);
	return fclose(f) ? -errno : 0;
}

static const char *const sim_params[] = { "sim_compute", "sim_time_scale", "sim_task_ns",
					  "sim_clock_mhz" };
#define SIM_PARAMS	(sizeof(sim_params) / sizeof(sim_params[0]))
static char sim_saved[SIM_PARAMS][32];

static void sim_save(void)
{
	for (unsigned int i = 0; i < SIM_PARAMS; i++)
		param_rw(sim_params[i], NULL, sim_saved[i], sizeof(sim_saved[i]));
}

static void sim_restore(void)
{
	for (unsigned int i = 0; i < SIM_PARAMS; i++)
		if (sim_saved[i][0])
			param_rw(sim_params[i], sim_saved[i], NULL, 0);
}

static void sim_set(const struct bench *b, const char *name, unsigned long value)
{
	char v[32];

	if (!b->sim)
		return;
	snprintf(v, sizeof(v), "%lu", value);
	param_rw(name, v, NULL, 0);
}

/* --- fdinfo ---------------------------------------------------------------- */

/* A key of this process's fdinfo for @fd, in bytes. */
static int fdinfo_bytes(int fd, const char *key, uint64_t *val)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	int ret = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long n;
		char unit[8] = "";

		if (strncmp(line, key, klen) || line[klen] != ':')
			continue;
		if (sscanf(line + klen + 1, "%llu %7s", &n, unit) < 1)
			break;
		*val = n << (!strcmp(unit, "KiB") ? 10 : !strcmp(unit, "MiB") ? 20 :
			     !strcmp(unit, "GiB") ? 30 : 0);
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

/* Device time of @fd's jobs on all cores, ns (fdinfo drm-engine-coreN). */
static uint64_t busy_ns(int fd, unsigned int cores)
{
	uint64_t sum = 0, v;
	char key[32];

	for (unsigned int i = 0; i < cores; i++) {
		snprintf(key, sizeof(key), "drm-engine-core%u", i);
		if (!fdinfo_bytes(fd, key, &v))
			sum += v;
	}
	return sum;
}

/* --- scaling --------------------------------------------------------------- */

/*
 * Synchronous: inferences per second of @ctx over @iters rkaccel_ctx_run()
 * calls of its batch, after one warm-up call, and the device time its jobs
 * took on all cores (from fdinfo) over the same wall time: how busy the
 * cores were kept.
 */
static int throughput(const struct bench *b, struct rkaccel_ctx *ctx, unsigned int iters,
		      double *per_s, double *busy_per_wall)
{
	size_t in_len = rkaccel_ctx_input_size(ctx), out_len = rkaccel_ctx_output_size(ctx);
	void *in = calloc(1, in_len), *out = malloc(out_len);
	int fd = rkaccel_fd(b->dev);
	uint64_t t0, wall, busy0;
	int ret = -ENOMEM;

	if (!in || !out)
		goto out;
	ret = rkaccel_ctx_run(ctx, in, in_len, out, out_len);	/* warm-up */
	busy0 = busy_ns(fd, b->info.num_cores);
	t0 = now_ns();
	for (unsigned int i = 0; i < iters && !ret; i++)
		ret = rkaccel_ctx_run(ctx, in, in_len, out, out_len);
	wall = now_ns() - t0;
	*per_s = (double)rkaccel_ctx_batch(ctx) * iters * 1e9 / (double)wall;
	*busy_per_wall = (double)(busy_ns(fd, b->info.num_cores) - busy0) / (double)wall;
out:
	free(in);
	free(out);
	return ret;
}

/*
 * Pipelined: a pipe of depth PIPE_DEPTH over @ctx's batch, kept full: pop
 * the oldest run, push the next. The steady state is timed from the end
 * of the first run to the end of run 1 + @iters, @iters runs with the
 * queue full throughout (filling and draining the pipe are not in the
 * window), with the device time of the jobs over the same window.
 */
static int pipe_throughput(const struct bench *b, struct rkaccel_ctx *ctx, unsigned int iters,
			   double *per_s, double *busy_per_wall)
{
	size_t in_len = rkaccel_ctx_input_size(ctx), out_len = rkaccel_ctx_output_size(ctx);
	unsigned int total = 1 + iters + PIPE_DEPTH, pushed = 0, popped = 0;
	void *in = calloc(1, in_len), *out = malloc(out_len);
	uint64_t t0 = 0, t1 = 0, busy0 = 0, busy1 = 0;
	int fd = rkaccel_fd(b->dev), ret = -ENOMEM;
	struct rkaccel_pipe *pipe = NULL;

	if (!in || !out)
		goto out;
	ret = rkaccel_pipe_create(ctx, PIPE_DEPTH, &pipe);
	while (!ret && pushed < PIPE_DEPTH)
		ret = rkaccel_pipe_push(pipe, in, in_len), pushed++;
	while (!ret && popped < total) {
		ret = rkaccel_pipe_pop(pipe, out, out_len, -1);
		if (ret)
			break;
		popped++;
		if (popped == 1) {
			t0 = now_ns();
			busy0 = busy_ns(fd, b->info.num_cores);
		} else if (popped == 1 + iters) {
			t1 = now_ns();
			busy1 = busy_ns(fd, b->info.num_cores);
		}
		if (pushed < total)
			ret = rkaccel_pipe_push(pipe, in, in_len), pushed++;
	}
	if (!ret) {
		*per_s = (double)rkaccel_ctx_batch(ctx) * iters * 1e9 / (double)(t1 - t0);
		*busy_per_wall = (double)(busy1 - busy0) / (double)(t1 - t0);
	}
out:
	rkaccel_pipe_destroy(pipe);
	free(in);
	free(out);
	return ret;
}

typedef int (*tput_fn)(const struct bench *, struct rkaccel_ctx *, unsigned int, double *,
		       double *);

struct scaling {
	struct rkaccel_ctx *one, *ctx;	/* batch 1 on core 0; any batch, any core */
	unsigned int iters, piters;
	double base, base_sum, busy_sum;	/* the last baseline; sums of all of them */
	unsigned int nbase;
};

/* The baseline: one core's capacity, batch 1 on core 0 kept busy by a pipe. */
static int baseline(struct bench *b, struct scaling *sc)
{
	double busy;
	int ret = pipe_throughput(b, sc->one, sc->piters, &sc->base, &busy);

	if (!ret) {
		sc->base_sum += sc->base;
		sc->busy_sum += busy;
		sc->nbase++;
		/* device time per job: the simulator's is modelled, but ends late
		 * when the host does not run the guest in time */
		figure(b, busy / sc->base * 1000, "%s.job_ms.core1", b->soc);
	}
	return ret;
}

/*
 * Every batch B of one mode (@tag "" pipelined, "sync." synchronous), each
 * measured between two baselines (the one before it is the one after the
 * batch before): its ratio divides by their mean, so a change of the
 * machine's load between figures does not move a ratio.
 */
static int scaling_mode(struct bench *b, struct scaling *sc, const char *tag, tput_fn fn,
			unsigned int iters)
{
	unsigned int cores = b->info.num_cores;
	double tput, busy, before;
	int ret = 0;

	for (unsigned int batch = 1; batch <= 2 * cores && !ret; batch++) {
		unsigned int rounds = (batch + cores - 1) / cores;
		/*
		 * A pipe keeps PIPE_DEPTH batches in flight: only the cores
		 * and the jobs in flight limit it. A synchronous run of B
		 * slices takes ceil(B / cores) job times at best.
		 */
		double ideal = *tag ? (double)batch / rounds :
			       batch * PIPE_DEPTH < cores ? batch * PIPE_DEPTH : cores;

		before = sc->base;
		ret = rkaccel_ctx_set_batch(sc->ctx, batch);
		if (!ret)
			ret = fn(b, sc->ctx, iters, &tput, &busy);
		if (!ret)
			ret = baseline(b, sc);
		if (ret)
			break;
		figure(b, tput, "%s.%stput.b%u", b->soc, tag, batch);
		if (!*tag)
			figure(b, busy / tput * 1000, "%s.job_ms.b%u", b->soc, batch);
		figure(b, busy, "%s.%sbusy.b%u", b->soc, tag, batch);
		figure(b, tput / ((before + sc->base) / 2), "%s.%sscale.b%u", b->soc, tag, batch);
		figure(b, ideal, "%s.%sideal.b%u", b->soc, tag, batch);
		figure_ideal(b, ideal, "%s.%sscale.b%u", b->soc, tag, batch);
		figure_ideal(b, ideal, "%s.%sbusy.b%u", b->soc, tag, batch);
	}
	return ret;
}

static int bench_scaling_round(struct bench *b, const struct rkaccel_model *model)
{
	struct scaling sc = {
		.iters = b->quick ? 3 : 8, .piters = b->quick ? 4 : 16,
	};
	double tput, busy;
	int ret;

	ret = rkaccel_ctx_create(b->dev, model, 1, &sc.one);
	if (!ret)
		ret = rkaccel_ctx_create(b->dev, model, 0, &sc.ctx);
	/* batch 1 on one core, synchronously: what the host's share costs it */
	if (!ret)
		ret = throughput(b, sc.one, sc.iters, &tput, &busy);
	if (!ret) {
		figure(b, tput, "%s.sync.tput.core1", b->soc);
		figure(b, busy, "%s.sync.busy.core1", b->soc);
		ret = baseline(b, &sc);
	}
	if (!ret)
		ret = scaling_mode(b, &sc, "", pipe_throughput, sc.piters);
	if (!ret)
		ret = scaling_mode(b, &sc, "sync.", throughput, sc.iters);
	if (!ret) {
		figure(b, sc.base_sum / sc.nbase, "%s.tput.core1", b->soc);
		figure(b, sc.busy_sum / sc.nbase, "%s.busy.core1", b->soc);
		figure_ideal(b, 1, "%s.busy.core1", b->soc);
		figure(b, tput / (sc.base_sum / sc.nbase), "%s.sync.scale.core1", b->soc);
		figure_ideal(b, 1, "%s.sync.scale.core1", b->soc);
	}
	rkaccel_ctx_destroy(sc.one);
	rkaccel_ctx_destroy(sc.ctx);
	return ret;
}

/* --- submit overhead -------------------------------------------------------- */

/* A BO holding one hardware task that enables no block: a zero-work job. */
struct zero_job {
	uint32_t bo, ctx[3], sync;
	unsigned int nctx;
	struct drm_rkaccel_task task;
};

static uint64_t regcmd(uint16_t target, uint16_t reg, uint32_t val)
{
	return ((uint64_t)target << 48) | ((uint64_t)val << 16) | reg;
}

static int zero_job_init(int fd, unsigned int nctx, struct zero_job *z)
{
	struct drm_rkaccel_bo_create c = { .size = 4096 };
	uint64_t *e;
	int ret;

	memset(z, 0, sizeof(*z));
	if (drmIoctl(fd, DRM_IOCTL_RKACCEL_BO_CREATE, &c))
		return -errno;
	z->bo = c.handle;
	e = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)c.mmap_offset);
	if (e == MAP_FAILED)
		return -errno;
	e[0] = regcmd(RKNPU_TGT_PC, RKNPU_PC_BASE_ADDRESS, 0);
	e[1] = regcmd(RKNPU_TGT_PC, RKNPU_PC_REGISTER_AMOUNTS, 0);
	e[2] = regcmd(RKNPU_TGT_OP_PREFIX, 0, 0);
	e[3] = regcmd(RKNPU_TGT_OP_EN, RKNPU_REG_OP_EN, 0);
	munmap(e, 4096);
	z->task = (struct drm_rkaccel_task){ .regcmd_addr = c.npu_addr, .regcmd_count = 4,
					     .task_count = 1 };
	for (z->nctx = 0; z->nctx < nctx; z->nctx++) {
		struct drm_rkaccel_ctx_create cc = { .priority = DRM_RKACCEL_PRIORITY_NORMAL };

		if (drmIoctl(fd, DRM_IOCTL_RKACCEL_CTX_CREATE, &cc))
			return -errno;
		z->ctx[z->nctx] = cc.handle;
	}
	ret = drmSyncobjCreate(fd, 0, &z->sync);
	return ret ? -errno : 0;
}

static void zero_job_fini(int fd, struct zero_job *z)
{
	struct drm_gem_close gc = { .handle = z->bo };

	for (unsigned int i = 0; i < z->nctx; i++) {
		struct drm_rkaccel_ctx_destroy d = { .handle = z->ctx[i] };

		drmIoctl(fd, DRM_IOCTL_RKACCEL_CTX_DESTROY, &d);
	}
	if (z->sync)
		drmSyncobjDestroy(fd, z->sync);
	if (z->bo)
		drmIoctl(fd, DRM_IOCTL_GEM_CLOSE, &gc);
}

/* One zero-work job on context @ctx; @after: once the syncobj's last job is done. */
static int zero_job_submit_after(int fd, struct zero_job *z, unsigned int ctx, bool after)
{
	struct drm_rkaccel_submit_bo bo = { .handle = z->bo };
	struct drm_rkaccel_sync in = { .handle = z->sync };
	struct drm_rkaccel_submit s = {
		.ctx = z->ctx[ctx],
		.tasks = (uintptr_t)&z->task,
		.task_count = 1,
		.task_stride = sizeof(z->task),
		.bos = (uintptr_t)&bo,
		.bo_count = 1,
		.bo_stride = sizeof(bo),
		.in_syncs = after ? (uintptr_t)&in : 0,
		.in_sync_count = after,
		.sync_stride = after ? sizeof(in) : 0,
		.out_sync = z->sync,
	};

	return drmIoctl(fd, DRM_IOCTL_RKACCEL_SUBMIT, &s) ? -errno : 0;
}

static int zero_job_submit(int fd, struct zero_job *z, unsigned int ctx)
{
	return zero_job_submit_after(fd, z, ctx, false);
}

static int zero_job_wait(int fd, struct zero_job *z)
{
	return drmSyncobjWait(fd, &z->sync, 1, INT64_MAX, 0, NULL) ? -errno : 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double percentile(uint64_t *v, unsigned int n, unsigned int pct)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return (double)v[(size_t)(n - 1) * pct / 100];
}

/* Zero-work jobs per second, round-robin over @z's contexts. */
static int jobs_per_s(int fd, struct zero_job *z, unsigned int jobs, double *rate)
{
	uint64_t t0 = now_ns();
	int ret = 0;

	for (unsigned int i = 0; i < jobs && !ret; i++)
		ret = zero_job_submit(fd, z, i % z->nctx);
	if (!ret)
		ret = zero_job_wait(fd, z);
	*rate = jobs * 1e9 / (double)(now_ns() - t0);
	return ret;
}

/* One bare syncobj round trip (create, signal, wait, destroy), ns. */
static int syncobj_trip(int fd, uint64_t *ns)
{
	uint64_t t0 = now_ns();
	uint32_t h;
	int ret;

	if (drmSyncobjCreate(fd, 0, &h))
		return -errno;
	ret = drmSyncobjSignal(fd, &h, 1) || drmSyncobjWait(fd, &h, 1, INT64_MAX, 0, NULL) ?
	      -errno : 0;
	drmSyncobjDestroy(fd, h);
	*ns = now_ns() - t0;
	return ret;
}

/*
 * Submit-to-signal latency of one job, and of a bare syncobj round trip,
 * sample by sample in turn, so that both see the same load.
 */
static int latencies(int fd, struct zero_job *z, unsigned int n, double *job_p50,
		     double *job_p99, double *sync_p50, double *sync_p99)
{
	static uint64_t lat[LAT_SAMPLES], slat[LAT_SAMPLES];
	int ret = 0;

	for (unsigned int i = 0; i < n && !ret; i++) {
		uint64_t t0 = now_ns();

		ret = zero_job_submit(fd, z, 0);
		if (!ret)
			ret = zero_job_wait(fd, z);
		lat[i] = now_ns() - t0;
		if (!ret)
			ret = syncobj_trip(fd, &slat[i]);
	}
	if (ret)
		return ret;
	*job_p99 = percentile(lat, n, 99);
	*job_p50 = percentile(lat, n, 50);
	*sync_p99 = percentile(slat, n, 99);
	*sync_p50 = percentile(slat, n, 50);
	return 0;
}

static int boundary_ns(const struct bench *b, uint64_t *ns, uint64_t *chain_ns);

static int bench_submit_round(struct bench *b)
{
	int fd = rkaccel_fd(b->dev);
	unsigned int jobs = b->quick ? 200 : 2000, n = b->quick ? 100 : LAT_SAMPLES;
	double one, many, p50, p99, sync50, sync99;
	uint64_t hop = 0, chain = 0;
	struct zero_job z1, zn;
	int ret;

	sim_set(b, "sim_task_ns", 0);
	ret = zero_job_init(fd, 1, &z1);
	if (!ret)
		ret = zero_job_init(fd, b->info.num_cores, &zn);
	if (!ret)
		ret = jobs_per_s(fd, &z1, jobs, &one);
	if (!ret)
		ret = jobs_per_s(fd, &zn, jobs, &many);
	if (!ret)
		ret = latencies(fd, &z1, n, &p50, &p99, &sync50, &sync99);
	zero_job_fini(fd, &z1);
	zero_job_fini(fd, &zn);
	if (!ret)
		ret = boundary_ns(b, &hop, &chain);
	if (ret)
		return ret;
	if (hop)	/* else not measurable this round: submits slower than hops */
		figure(b, (double)hop / 1000, "submit.hop_us");
	figure(b, (double)chain / 1000, "submit.hop_chain_us");
	figure(b, one, "submit.jobs_per_s.ctx1");
	figure(b, many, "submit.jobs_per_s.ctx%u", b->info.num_cores);
	figure(b, p50 / 1000, "submit.latency_us.p50");
	figure(b, p99 / 1000, "submit.latency_us.p99");
	figure(b, sync50 / 1000, "submit.syncobj_us.p50");
	figure(b, sync99 / 1000, "submit.syncobj_us.p99");
	figure(b, p50 / sync50, "submit.ratio_to_syncobj");
	figure(b, p99 / sync50, "submit.ratio_to_syncobj.p99");
	return 0;
}

/* --- memory ------------------------------------------------------------------ */

static int bench_memory_round(struct bench *b, const struct rkaccel_model *model)
{
	struct rkaccel_ctx *ctx[3] = { NULL };
	int fd = rkaccel_fd(b->dev), ret;
	uint64_t w, total, single = 0;

	ret = rkaccel_ctx_create(b->dev, model, 0, &ctx[0]);
	for (unsigned int n = 1; n <= 3 && !ret; n++) {
		if (n > 1)
			ret = rkaccel_ctx_dup(ctx[0], &ctx[n - 1]);
		if (!ret)
			ret = fdinfo_bytes(fd, "drm-total-weights", &w);
		if (!ret)
			ret = fdinfo_bytes(fd, "drm-total-memory", &total);
		if (ret)
			break;
		if (n == 1)
			single = total;
		figure(b, (double)w, "mem.weights_bytes.ctx%u", n);
		figure(b, (double)(total - w), "mem.internal_bytes.ctx%u", n);
		figure(b, (double)total, "mem.total_bytes.ctx%u", n);
		figure(b, (double)(single * n), "mem.nosharing_bytes.ctx%u", n);
	}
	for (unsigned int i = 0; i < 3; i++)
		rkaccel_ctx_destroy(ctx[i]);
	return ret;
}

/* --- networks ---------------------------------------------------------------- */

/* The zoo's full-size networks (tools/zoo.h), each at its 224x224 input. */
static const char *const bench_nets[] = {
	"mobilenetv1", "mobilenetv2", "resnet18", "resnet50", "squeezenet",
};

#define NETS		(sizeof(bench_nets) / sizeof(bench_nets[0]))
#define NET_SEED	26
#define NET_BATCH	3

struct net {
	const char *name;
	struct rkaccel_model *model;	/* for the split over the cores */
	/* two copies each (weights shared): batch 1 on core 0, batch 3 on any core */
	struct rkaccel_ctx *one[2], *many[2];
	uint64_t macs;			/* one image's, of the operations */
	double tasks, regcmd_bytes, weight_bytes;
};

/* Build network @n->name, compile it and bind it twice (weights shared). */
static int net_setup(struct bench *b, struct net *n)
{
	struct rkaccel_model *model = NULL;
	struct rkaccel_program *prog = NULL;
	char msg[256] = "";
	struct zb zb;
	int ret;

	ret = zoo_build(n->name, 1, 0, 0, NET_SEED, &zb);
	if (ret)
		snprintf(msg, sizeof(msg), "%s", zb.msg);
	if (!ret)
		ret = rkaccel_graph_to_model(&zb.desc, &model, msg, sizeof(msg));
	if (!ret)
		ret = rkaccel_program_compile_model(model, &b->info, &prog);
	if (!ret) {
		n->macs = zb.macs;
		n->tasks = rkaccel_program_tasks(prog);
		n->regcmd_bytes = (double)rkaccel_program_size(prog, RKACCEL_BUF_REGCMD);
		n->weight_bytes = (double)rkaccel_program_size(prog, RKACCEL_BUF_WEIGHTS);
		ret = rkaccel_ctx_create(b->dev, model, 1, &n->one[0]);
	}
	if (!ret)
		ret = rkaccel_ctx_dup(n->one[0], &n->one[1]);
	if (!ret)
		ret = rkaccel_ctx_set_core_mask(n->one[1], 1);
	for (unsigned int i = 0; i < 2 && !ret; i++) {
		ret = rkaccel_ctx_dup(n->one[0], &n->many[i]);
		if (!ret)
			ret = rkaccel_ctx_set_batch(n->many[i], NET_BATCH);
	}
	if (ret)
		fprintf(stderr, PROG ": %s: %s%s%s\n", n->name, msg, *msg ? ": " : "",
			rkaccel_strerror(ret));
	rkaccel_program_free(prog);
	n->model = model;
	zb_free(&zb);
	return ret;
}

/* @iters runs of @ctx: wall time and device time (all cores) per run, ns. */
static int net_runs(const struct bench *b, struct rkaccel_ctx *ctx, unsigned int iters,
		    double *wall, double *dev)
{
	size_t in_len = rkaccel_ctx_input_size(ctx), out_len = rkaccel_ctx_output_size(ctx);
	void *in = calloc(1, in_len), *out = malloc(out_len);
	int fd = rkaccel_fd(b->dev), ret = in && out ? 0 : -ENOMEM;
	uint64_t t0 = now_ns(), busy0 = busy_ns(fd, b->info.num_cores);

	for (unsigned int i = 0; i < iters && !ret; i++)
		ret = rkaccel_ctx_run(ctx, in, in_len, out, out_len);
	*wall = (double)(now_ns() - t0) / iters;
	*dev = (double)(busy_ns(fd, b->info.num_cores) - busy0) / iters;
	free(in);
	free(out);
	return ret;
}

/* Wait for and close @fence (a run's sync_file), -1 is none. */
static int fence_end(struct rkaccel_ctx *ctx, int *fence)
{
	int ret = 0;

	if (*fence < 0)
		return 0;
	ret = rkaccel_ctx_wait(ctx, -1);
	close(*fence);
	*fence = -1;
	return ret;
}

/*
 * Depth-2 pipeline of native runs over @slot[0] and @slot[1] (copies of one
 * context, no layout conversion: the inputs are not looked at in
 * timing-only mode): images per second and busy cores in the steady state,
 * from the end of the first run to the end of run 1 + @iters.
 */
static int native_pipe(const struct bench *b, struct rkaccel_ctx *const slot[2],
		       unsigned int iters, double *per_s, double *busy)
{
	int fence[2] = { -1, -1 }, fd = rkaccel_fd(b->dev), ret = 0;
	uint64_t t0 = 0, t1 = 0, busy0 = 0, busy1 = 0;
	unsigned int done = 0, k = 0;

	for (unsigned int i = 0; i < 2 && !ret; i++)
		ret = rkaccel_ctx_run_async(slot[i], -1, &fence[i]);
	while (!ret && done < 1 + iters) {
		ret = fence_end(slot[k], &fence[k]);
		if (ret)
			break;
		if (++done == 1) {
			t0 = now_ns();
			busy0 = busy_ns(fd, b->info.num_cores);
		} else if (done == 1 + iters) {
			t1 = now_ns();
			busy1 = busy_ns(fd, b->info.num_cores);
			break;
		}
		ret = rkaccel_ctx_run_async(slot[k], -1, &fence[k]);
		k ^= 1;
	}
	for (unsigned int i = 0; i < 2; i++) {
		int end = fence_end(slot[i], &fence[i]);

		ret = ret ? ret : end;
	}
	if (!ret) {
		*per_s = (double)rkaccel_ctx_batch(slot[0]) * iters * 1e9 / (double)(t1 - t0);
		*busy = (double)(busy1 - busy0) / (double)(t1 - t0);
	}
	return ret;
}

/*
 * One round of network @n, each figure between two measurements of batch 1
 * on core 0 (as the scaling figures): batch 1 and batch 3 pipelined
 * (rkaccel_pipe, the steady state: the host's work overlaps the device's),
 * then both synchronously (the host's work on the critical path), then at
 * 200 MHz. Device time per image is batch 1's fdinfo time over its images,
 * divided back by the time scale (sim_clock_mhz 1000: ns are cycles).
 */
static int net_round(struct bench *b, const struct net *n)
{
	unsigned int iters = b->quick ? 1 : 2;
	double t1a, u1a, t3, u3, t1b, u1b, w1, d1, w3, d3, w200, d200 = 0, ns;
	int ret;

	const char *step = "batch 1, pipelined";

	ret = native_pipe(b, n->one, iters, &t1a, &u1a);
	if (!ret && (step = "batch 3, pipelined"))
		ret = native_pipe(b, n->many, iters, &t3, &u3);
	if (!ret && (step = "batch 1 again, pipelined"))
		ret = native_pipe(b, n->one, iters, &t1b, &u1b);
	if (!ret && (step = "batch 1, synchronous"))
		ret = net_runs(b, n->one[0], iters, &w1, &d1);
	if (!ret && (step = "batch 3, synchronous"))
		ret = net_runs(b, n->many[0], iters, &w3, &d3);
	/* at the 200 MHz the device tree boots with (Mesa's rocket measures there) */
	if (!ret && b->sim && (step = "batch 1 at 200 MHz")) {
		sim_set(b, "sim_clock_mhz", 200);
		ret = net_runs(b, n->one[0], 1, &w200, &d200);
		sim_set(b, "sim_clock_mhz", 1000);
	}
	if (ret) {
		fprintf(stderr, PROG ": %s, %s: %s\n", n->name, step, rkaccel_strerror(ret));
		return ret;
	}
	ns = (u1a / t1a + u1b / t1b) / 2 * 1e9 / b->time_scale;
	figure(b, n->tasks, "net.%s.tasks", n->name);
	figure(b, n->regcmd_bytes, "net.%s.regcmd_bytes", n->name);
	figure(b, n->weight_bytes, "net.%s.weight_bytes", n->name);
	figure(b, ns / 1e6, "net.%s.ms_1ghz", n->name);
	figure(b, (double)n->macs / (1024.0 * ns), "net.%s.util", n->name);
	figure(b, t3 / ((t1a + t1b) / 2), "net.%s.batch3_scale", n->name);
	figure_ideal(b, NET_BATCH, "net.%s.batch3_scale", n->name);
	/* why batch 3 may fall short: cores busy (device over wall time), the
	 * device time per image against batch 1's (1 unless the cores slow
	 * each other down), and the synchronous ratio (host work in the way) */
	figure(b, u3, "net.%s.batch3_busy", n->name);
	figure_ideal(b, NET_BATCH, "net.%s.batch3_busy", n->name);
	figure(b, (u3 / t3) / ((u1a / t1a + u1b / t1b) / 2), "net.%s.batch3_dev_ratio", n->name);
	figure(b, NET_BATCH * w1 / w3, "net.%s.batch3_sync_scale", n->name);
	figure_ideal(b, NET_BATCH, "net.%s.batch3_sync_scale", n->name);
	if (b->sim)
		figure(b, d200 / b->time_scale / 1e6, "net.%s.ms_200mhz", n->name);
	return 0;
}

/* The submit round trip of a zero-work job (median of @n), ns. */
static int round_trip_ns(const struct bench *b, uint64_t *ns)
{
	double p50, p99, s50, s99;
	struct zero_job z;
	int ret = zero_job_init(rkaccel_fd(b->dev), 1, &z);

	if (ret)
		return ret;
	ret = latencies(rkaccel_fd(b->dev), &z, b->quick ? 50 : 200, &p50, &p99, &s50, &s99);
	zero_job_fini(rkaccel_fd(b->dev), &z);
	*ns = (uint64_t)p50;
	return ret;
}

#define HOPS		40
#define HOP_ROUNDS	7

/* Replace @z's contexts by two pinned to the lowest two cores. */
static int zero_job_pin(int fd, const struct bench *b, struct zero_job *z)
{
	uint32_t mask = b->info.core_mask;

	for (unsigned int i = 0; i < 2; i++) {
		struct drm_rkaccel_ctx_create cc = { .core_mask = mask & -mask,
						     .priority = DRM_RKACCEL_PRIORITY_NORMAL };
		struct drm_rkaccel_ctx_destroy d = { .handle = z->ctx[i] };

		if (!cc.core_mask)
			return -ENODEV;
		mask &= mask - 1;
		drmIoctl(fd, DRM_IOCTL_RKACCEL_CTX_DESTROY, &d);
		z->ctx[i] = 0;
		if (drmIoctl(fd, DRM_IOCTL_RKACCEL_CTX_CREATE, &cc))
			return -errno;
		z->ctx[i] = cc.handle;
	}
	return 0;
}

/* When the one fence of sync_file @fd signalled (CLOCK_MONOTONIC ns); 0 if it has not. */
static uint64_t fence_signalled_ns(int fd)
{
	struct sync_fence_info fi;
	struct sync_file_info info = { .num_fences = 1, .sync_fence_info = (uintptr_t)&fi };

	memset(&fi, 0, sizeof(fi));
	if (ioctl(fd, SYNC_IOC_FILE_INFO, &info) || info.status != 1 || fi.status != 1)
		return 0;
	return fi.timestamp_ns;
}

/*
 * One chain of HOPS zero-work jobs, each on the other core after the one
 * before, submitted at once. Per hop, ns into @hop (up to HOPS - 1; the
 * count into *@n): from a job's fence signalling to the next job's, for
 * the jobs already queued when the one before signalled, so that the time
 * of a submit is not in it (a split's jobs are all queued before its first
 * ends). *@wall: the chain's wall time over its jobs, submissions included.
 */
static int hop_chain(int fd, struct zero_job *z, uint64_t *hop, unsigned int *n, uint64_t *wall)
{
	int fence[HOPS];
	uint64_t queued[HOPS], t0 = now_ns();
	unsigned int i, made = 0;
	int ret = 0;

	for (i = 0; i < HOPS && !ret; i++) {
		ret = zero_job_submit_after(fd, z, i % 2, i > 0);
		if (!ret && drmSyncobjExportSyncFile(fd, z->sync, &fence[i]))
			ret = -errno;
		if (!ret)
			queued[made++] = now_ns();
	}
	if (!ret)
		ret = zero_job_wait(fd, z);
	*wall = (now_ns() - t0) / HOPS;
	*n = 0;
	for (i = 1; !ret && i < made; i++) {
		uint64_t before = fence_signalled_ns(fence[i - 1]), done = fence_signalled_ns(fence[i]);

		if (!before || !done)
			ret = -EIO;
		else if (queued[i] < before)
			hop[(*n)++] = done - before;
	}
	for (i = 0; i < made; i++)
		close(fence[i]);
	return ret;
}

/*
 * What one layer boundary of an inference split over the cores costs, ns:
 * its jobs are queued at once, each after the fences of the jobs it waits
 * for (lib/runtime/split.c), so a boundary is a fence hop from one core to
 * another and the next job's start and end. Measured on chains of
 * zero-work jobs alternating between two cores, submitted at once: the
 * median hop of HOP_ROUNDS chains (hop_chain()), or 0 when no job was
 * queued before the one it waits for ended (submits slower than hops, as
 * under a debug kernel); and, into *@chain_ns, the median wall time per
 * job of those chains, submissions included (the upper bound this figure
 * was until 2026-12-07).
 */
static int boundary_ns(const struct bench *b, uint64_t *ns, uint64_t *chain_ns)
{
	static uint64_t hops[HOP_ROUNDS * HOPS];
	int fd = rkaccel_fd(b->dev);
	uint64_t wall[HOP_ROUNDS];
	unsigned int nh = 0;
	struct zero_job z;
	int ret = zero_job_init(fd, 2, &z);

	if (!ret)
		ret = zero_job_pin(fd, b, &z);
	for (unsigned int r = 0; r < HOP_ROUNDS && !ret; r++) {
		unsigned int n;

		ret = hop_chain(fd, &z, hops + nh, &n, &wall[r]);
		nh += n;
	}
	zero_job_fini(fd, &z);
	if (!ret) {
		*ns = nh ? (uint64_t)percentile(hops, nh, 50) : 0;
		*chain_ns = (uint64_t)percentile(wall, HOP_ROUNDS, 50);
	}
	return ret;
}

/*
 * One image split over every core against the lowest core alone, device
 * time only (rkaccel_model_multicore_scale()), each boundary charged the
 * measured submit round trip.
 */
static int net_multicore(struct bench *b, const struct net *n, uint64_t bound_ns)
{
	uint64_t one, all;
	double scale;
	int ret = rkaccel_model_multicore_scale(b->dev, n->model, b->info.core_mask, bound_ns,
						b->time_scale, &scale, &one, &all);

	if (ret) {
		fprintf(stderr, PROG ": %s, split over the cores: %s\n", n->name,
			rkaccel_strerror(ret));
		return ret;
	}
	figure(b, scale, "net.%s.multicore.scale", n->name);
	figure_ideal(b, b->info.num_cores, "net.%s.multicore.scale", n->name);
	return 0;
}

static int bench_nets_all(struct bench *b)
{
	struct net nets[NETS] = { 0 };
	uint64_t bound = 0, chain = 0, trip = 0;
	int ret = 0;

	for (unsigned int i = 0; i < NETS && !ret; i++) {
		double w, d;

		nets[i].name = bench_nets[i];
		ret = net_setup(b, &nets[i]);
		/* warm-up: the first run of each context maps and faults */
		for (unsigned int k = 0; k < 2 && !ret; k++) {
			ret = net_runs(b, nets[i].one[k], 1, &w, &d);
			if (!ret)
				ret = net_runs(b, nets[i].many[k], 1, &w, &d);
		}
	}
	if (!ret)
		ret = round_trip_ns(b, &trip);
	if (!ret)
		ret = boundary_ns(b, &bound, &chain);
	if (!ret && !bound) {
		fprintf(stderr, PROG ": no job was queued before the one it waits for ended: "
			"each boundary is charged a chain's time per job, submits included\n");
		bound = chain;
	}
	if (!ret) {
		figure(b, (double)trip / 1000, "net.multicore.round_trip_us");
		figure(b, (double)bound / 1000, "net.multicore.boundary_us");
		figure(b, (double)chain / 1000, "net.multicore.chain_us");
	}
	for (unsigned int r = 0; r < b->rounds && !ret; r++) {
		for (unsigned int i = 0; i < NETS && !ret; i++) {
			ret = net_round(b, &nets[i]);
			if (!ret)
				ret = net_multicore(b, &nets[i], bound);
		}
		if (!ret)
			fprintf(stderr, PROG ": round %u of %u done\n", r + 1, b->rounds);
	}
	for (unsigned int i = 0; i < NETS; i++) {
		for (unsigned int k = 0; k < 2; k++) {
			rkaccel_ctx_destroy(nets[i].many[k]);
			rkaccel_ctx_destroy(nets[i].one[k]);
		}
		rkaccel_model_free(nets[i].model);
	}
	return ret;
}

/* --- output ------------------------------------------------------------------ */

/* Every figure as <key> (median), <key>.min, <key>.max, and the errors. */
static void print_json(const struct bench *b, FILE *f, const char *prefix)
{
	unsigned int errors = 0;

	fprintf(f, "%s{\"bench.rounds\": %u", prefix, b->rounds);
	for (unsigned int i = 0; i < b->nfig; i++) {
		const struct figure *g = &b->fig[i];

		fprintf(f, ", \"%s\": %.6g, \"%s.min\": %.6g, \"%s.max\": %.6g", g->key, g->med,
			g->key, g->min, g->key, g->max);
		if (over_ideal(g)) {
			fprintf(f, ", \"%s.over_ideal\": 1", g->key);
			errors++;
		}
	}
	fprintf(f, ", \"bench.measurement_errors\": %u}\n", errors);
}

static const struct figure *fig(const struct bench *b, const char *fmt, ...)
{
	static const struct figure none;
	char key[48];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(key, sizeof(key), fmt, ap);
	va_end(ap);
	for (unsigned int i = 0; i < b->nfig; i++)
		if (!strcmp(b->fig[i].key, key))
			return &b->fig[i];
	return &none;
}

/* "median [min..max]" of a figure in @w columns, marked when above its ideal. */
static void cell(const struct figure *f, const char *num)
{
	char a[24], lo[24], hi[24], buf[80];

	snprintf(a, sizeof(a), num, f->med);
	snprintf(lo, sizeof(lo), num, f->min);
	snprintf(hi, sizeof(hi), num, f->max);
	snprintf(buf, sizeof(buf), "%s [%s..%s]%s", a, lo, hi, over_ideal(f) ? "!" : "");
	printf("  %-24s", buf);
}

static void print_scaling(const struct bench *b, const char *tag, const char *title)
{
	printf("\n%s on %s (%u cores), median [min..max] of %u rounds:\n", title,
	       b->info.soc_name, b->info.num_cores, b->rounds);
	printf("  batch  %-24s  %-24s  ideal  %-24s\n", "inf/s", "ratio to 1core",
	       "busy cores");
	printf("  1core");
	cell(fig(b, "%s.%stput.core1", b->soc, tag), "%.1f");
	if (*tag)
		cell(fig(b, "%s.%sscale.core1", b->soc, tag), "%.3f");
	else
		printf("  %-24s", "1 (the baseline)");
	printf("  %5.3f", 1.0);
	cell(fig(b, "%s.%sbusy.core1", b->soc, tag), "%.2f");
	printf("\n");
	for (unsigned int batch = 1; batch <= 2 * b->info.num_cores; batch++) {
		printf("  %5u", batch);
		cell(fig(b, "%s.%stput.b%u", b->soc, tag, batch), "%.1f");
		cell(fig(b, "%s.%sscale.b%u", b->soc, tag, batch), "%.3f");
		printf("  %5.3f", fig(b, "%s.%sideal.b%u", b->soc, tag, batch)->med);
		cell(fig(b, "%s.%sbusy.b%u", b->soc, tag, batch), "%.2f");
		printf("\n");
	}
}

static void print_submit(const struct bench *b)
{
	printf("\nsubmit overhead (zero-work jobs), median [min..max] of %u rounds:\n",
	       b->rounds);
	printf("  jobs/s, 1 context:    ");
	cell(fig(b, "submit.jobs_per_s.ctx1"), "%.0f");
	printf("\n  jobs/s, %u contexts:   ", b->info.num_cores);
	cell(fig(b, "submit.jobs_per_s.ctx%u", b->info.num_cores), "%.0f");
	printf("\n  latency p50 (us):     ");
	cell(fig(b, "submit.latency_us.p50"), "%.1f");
	printf("\n  latency p99 (us):     ");
	cell(fig(b, "submit.latency_us.p99"), "%.1f");
	printf("\n  syncobj p50/p99 (us): ");
	cell(fig(b, "submit.syncobj_us.p50"), "%.1f");
	cell(fig(b, "submit.syncobj_us.p99"), "%.1f");
	printf("\n  ratio to syncobj p50: ");
	cell(fig(b, "submit.ratio_to_syncobj"), "%.2f");
	printf("  (job p50 / syncobj p50)\n  ratio to syncobj p99: ");
	cell(fig(b, "submit.ratio_to_syncobj.p99"), "%.2f");
	printf("  (job p99 / syncobj p50)\n  fence hop (us):       ");
	if (fig(b, "submit.hop_us")->key[0])
		cell(fig(b, "submit.hop_us"), "%.1f");
	else	/* no round had a job queued before the one it waits for ended */
		printf("  %-24s", "not measurable");
	printf("  (a queued job on another core, after its fence)\n  with submits (us):    ");
	cell(fig(b, "submit.hop_chain_us"), "%.1f");
	printf("  (a chain's wall time per job, submitted at once)\n");
}

static void print_nets(const struct bench *b)
{
	printf("\nnetworks of the zoo at 224x224 on %s, device time modelled at 1 GHz,\n"
	       "median [min..max] of %u rounds:\n", b->info.soc_name, b->rounds);
	printf("  %-12s %5s %9s %10s  %-24s  %-24s  %-24s  %s\n", "network", "tasks", "regcmd",
	       "weights", "ms/image, 1 core", "MAC utilisation", "batch 3 / batch 1",
	       "ms at 200 MHz");
	for (unsigned int i = 0; i < NETS; i++) {
		const char *n = bench_nets[i];

		printf("  %-12s %5.0f %9.0f %10.0f", n, fig(b, "net.%s.tasks", n)->med,
		       fig(b, "net.%s.regcmd_bytes", n)->med, fig(b, "net.%s.weight_bytes", n)->med);
		cell(fig(b, "net.%s.ms_1ghz", n), "%.3f");
		cell(fig(b, "net.%s.util", n), "%.3f");
		cell(fig(b, "net.%s.batch3_scale", n), "%.2f");
		printf("  %.2f\n", fig(b, "net.%s.ms_200mhz", n)->med);
	}
	printf("  (batch 3 / batch 1: images per second of batch 3 on any core against batch 1\n"
	       "   on core 0, both pipelined (depth 2, native runs: no layout conversion),\n"
	       "   device time stretched %ux; ideal 3)\n"
	       "  batch 3: %-24s  %-24s  %-24s\n", b->time_scale, "busy cores",
	       "device time / batch 1's", "synchronous ratio");
	for (unsigned int i = 0; i < NETS; i++) {
		const char *n = bench_nets[i];

		printf("  %-12s", n);
		cell(fig(b, "net.%s.batch3_busy", n), "%.2f");
		cell(fig(b, "net.%s.batch3_dev_ratio", n), "%.3f");
		cell(fig(b, "net.%s.batch3_sync_scale", n), "%.2f");
		printf("\n");
	}
	printf("  one image over the %u cores against one core (device time, each boundary\n"
	       "  charged a measured fence hop of queued jobs, %.0f us (with their submits:\n"
	       "  %.0f us; a submit round trip: %.0f us); ideal %u):\n", b->info.num_cores,
	       fig(b, "net.multicore.boundary_us")->med, fig(b, "net.multicore.chain_us")->med,
	       fig(b, "net.multicore.round_trip_us")->med, b->info.num_cores);
	for (unsigned int i = 0; i < NETS; i++) {
		printf("  %-12s", bench_nets[i]);
		cell(fig(b, "net.%s.multicore.scale", bench_nets[i]), "%.2f");
		printf("\n");
	}
}

static void print_host_io(const struct bench *b)
{
	static const char *const rows[][2] = {
		{ "input (UINT8 NHWC quantized, native layout)", "b3_input_us" },
		{ "output (native read back, dequantized)", "b3_output_us" },
		{ "both", "b3_us" },
		{ "the slowest slice (a run's thread each)", "b3_slice_us" },
	};

	printf("the host's work around one batch-3 inference of MobileNetV2-224, one thread,\n"
	       "us, median [min..max] of %u rounds (make bench divides it by the device time):\n",
	       b->rounds);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		printf("  %-46s", rows[i][0]);
		cell(fig(b, "host.mobilenet_v2.%s", rows[i][1]), "%.1f");
		printf("\n");
	}
}

static void print_table(const struct bench *b)
{
	unsigned int errors = 0;

	if (b->submit_only) {
		print_submit(b);
		return;
	}
	if (b->host_io) {
		print_host_io(b);
		return;
	}
	if (b->nets) {
		print_nets(b);
		goto errors;
	}
	print_scaling(b, "", "pipelined (rkaccel_pipe, depth 2), steady state,");
	printf("  device ms per job (fdinfo time / jobs): 1core");
	cell(fig(b, "%s.job_ms.core1", b->soc), "%.1f");
	printf("\n    batch %u", b->info.num_cores);
	cell(fig(b, "%s.job_ms.b%u", b->soc, b->info.num_cores), "%.1f");
	printf("\n");
	print_scaling(b, "sync.", "synchronous (rkaccel_ctx_run),");
	printf("  (ratio: to one core's capacity, batch 1 pipelined on core 0, measured\n"
	       "   before and after each batch; ideal: pipelined min(B x %d in flight, cores),\n"
	       "   synchronous B / ceil(B / cores); busy: device time of the jobs on all\n"
	       "   cores per wall second; ! marks a median above its ideal: a measurement\n"
	       "   error, not a result)\n", PIPE_DEPTH);
	print_submit(b);
	printf("\nmemory from fdinfo (bytes, the same in every round):\n");
	printf("  contexts  weights    internal   total      no sharing\n");
	for (unsigned int n = 1; n <= 3; n++)
		printf("  %8u  %9.0f  %9.0f  %9.0f  %9.0f\n", n,
		       fig(b, "mem.weights_bytes.ctx%u", n)->med,
		       fig(b, "mem.internal_bytes.ctx%u", n)->med,
		       fig(b, "mem.total_bytes.ctx%u", n)->med,
		       fig(b, "mem.nosharing_bytes.ctx%u", n)->med);
errors:
	for (unsigned int i = 0; i < b->nfig; i++) {
		if (!over_ideal(&b->fig[i]))
			continue;
		if (!errors++)
			printf("\nmeasurement errors (a median above its ideal is not a result):\n");
		printf("  %s = %.4f > ideal %.3f\n", b->fig[i].key, b->fig[i].med,
		       b->fig[i].ideal);
	}
}

/* --- the host's share of an inference (--host-io) ----------------------------- */

/*
 * MobileNetV2 at 224x224 (the converter's, and the zoo's) at batch 3: per
 * image, the RKNN layer's UINT8 NHWC input quantized while it is laid out
 * natively (rkaccel_u8_to_native(), as rkaccel_ctx_run_u8() does for each
 * slice), its 1000 int8 logits read back and dequantized, with the
 * library's own calls. Natively on the host, no device, on one thread; a
 * run does each slice on its own thread, so its slowest slice is also
 * reported: the host's share of the critical path.
 */
#define IO_BATCH	3
#define IO_PIXELS	(224u * 224u)
#define IO_CH		3u
#define IO_OUT		1000u

struct host_io {
	uint8_t *img;
	int8_t *o;
	void *in, *out;
	float *f;
	size_t in_size, out_size;
};

/* Image @i's input laid out and its output read back: what a slice's thread does. */
static void host_io_slice(struct host_io *h, unsigned int i, uint64_t *in_ns, uint64_t *out_ns)
{
	uint64_t t0 = now_ns(), t1;

	rkaccel_u8_to_native(h->img + (size_t)i * IO_PIXELS * IO_CH, IO_PIXELS, IO_CH, 1.0f, -128,
			     (uint8_t *)h->in + i * h->in_size, h->in_size);
	t1 = now_ns();
	rkaccel_from_native((uint8_t *)h->out + i * h->out_size, h->out_size, 1, IO_OUT, 1,
			    h->o + i * IO_OUT);
	rkaccel_dequantize(h->o + i * IO_OUT, IO_OUT, 0.1f, 3, h->f + i * IO_OUT);
	*in_ns = t1 - t0;
	*out_ns = now_ns() - t1;
}

/* One round: the batch's input and output time, and its slowest slice's, us. */
static void host_io_round(struct host_io *h, double *in_us, double *out_us, double *slice_us)
{
	*in_us = *out_us = *slice_us = 0;
	for (unsigned int i = 0; i < IO_BATCH; i++) {
		uint64_t in, out;

		host_io_slice(h, i, &in, &out);
		*in_us += (double)in / 1000;
		*out_us += (double)out / 1000;
		if ((double)(in + out) / 1000 > *slice_us)
			*slice_us = (double)(in + out) / 1000;
	}
}

static int bench_host_io(struct bench *b)
{
	struct host_io h = {
		.in_size = rkaccel_native_size(IO_PIXELS, IO_CH, 1),
		.out_size = rkaccel_native_size(1, IO_OUT, 1),
	};
	int ret = 0;

	h.img = malloc((size_t)IO_BATCH * IO_PIXELS * IO_CH);
	h.in = malloc(IO_BATCH * h.in_size);
	h.out = calloc(IO_BATCH, h.out_size);
	h.o = malloc(IO_BATCH * IO_OUT);
	h.f = malloc(IO_BATCH * IO_OUT * sizeof(float));
	if (!h.img || !h.in || !h.out || !h.o || !h.f) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < (size_t)IO_BATCH * IO_PIXELS * IO_CH; i++)
		h.img[i] = (uint8_t)(i * 2654435761u >> 24);
	for (unsigned int r = 0; r <= b->rounds; r++) {	/* round 0 touches the pages */
		double in, out, slice;

		host_io_round(&h, &in, &out, &slice);
		if (!r)
			continue;
		figure(b, in, "host.mobilenet_v2.b3_input_us");
		figure(b, out, "host.mobilenet_v2.b3_output_us");
		figure(b, in + out, "host.mobilenet_v2.b3_us");
		figure(b, slice, "host.mobilenet_v2.b3_slice_us");
	}
out:
	free(h.img);
	free(h.in);
	free(h.out);
	free(h.o);
	free(h.f);
	return ret;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: " PROG " [--quick] [--submit-only | --nets | --host-io] [--rounds N]"
		   " [--json FILE] [--device PATH]\n"
		   "Measure multi-core scaling (pipelined and synchronous), submit overhead and\n"
		   "memory in N interleaved rounds (5 to %d; 5 with --quick, else 7); print a\n"
		   "table of medians [min..max] and, on stdout, one line 'BENCH-JSON {...}'\n"
		   "(also written to FILE with --json). --submit-only: the submit overhead alone.\n"
		   "--nets: the zoo's full-size networks alone (RK3588): tasks, regcmd and weight\n"
		   "bytes, modelled ms per image at 1 GHz, MAC utilisation, batch 3 against 1.\n"
		   "--host-io: no device: the host's work around one batch-3 inference of\n"
		   "MobileNetV2-224 (input quantized and laid out, output read and dequantized).\n",
		MAX_ROUNDS);
}

static int setup(struct bench *b, const char *device)
{
	int ret = rkaccel_open(device, &b->dev);

	if (!ret)
		ret = rkaccel_query(b->dev, &b->info);
	if (ret)
		return ret;
	b->soc = b->info.soc == DRM_RKACCEL_SOC_RK3588 ? "rk3588" : "rk3576";
	b->sim = b->info.backend == DRM_RKACCEL_BACKEND_SIM;
	/* TCG runs the host side ~10-50x slower than a board: stretch the device
	 * time by as much, so that a slice is device-bound as it is on silicon */
	b->time_scale = b->quick ? 50 : 1000;
	/* the networks take milliseconds per image already */
	if (b->nets)
		b->time_scale = 100;
	if (!b->rounds)
		b->rounds = b->quick ? 5 : 7;
	return 0;
}

static int run_all(struct bench *b)
{
	static const uint32_t features[] = { 512, 512, 10 };
	struct rkaccel_model *model;
	int ret;

	ret = rkaccel_model_random(5, 16, 2, features, 0, &model);
	if (ret)
		return ret;
	if (b->sim) {
		sim_save();
		sim_set(b, "sim_compute", 0);
		sim_set(b, "sim_time_scale", b->time_scale);
		if (b->nets) {
			/* the model's own defaults: no extra per-task time, 1 GHz */
			sim_set(b, "sim_task_ns", 0);
			sim_set(b, "sim_clock_mhz", 1000);
		}
		printf("mode: simulated %s, timing-only (sim_compute=0), sim_time_scale=%u\n",
		       b->info.soc_name, b->time_scale);
	} else {
		printf("mode: silicon %s\n", b->info.soc_name);
	}
	/*
	 * Interleaved rounds: each round measures every figure once, each
	 * ratio against a baseline taken in the same round; the medians of
	 * the rounds are the results and their min and max the spread.
	 */
	if (b->nets) {
		ret = bench_nets_all(b);
		goto out;
	}
	for (unsigned int r = 0; r < b->rounds && !ret; r++) {
		if (b->sim && sim_saved[2][0])
			param_rw("sim_task_ns", sim_saved[2], NULL, 0);
		if (!b->submit_only)
			ret = bench_scaling_round(b, model);
		if (!ret)
			ret = bench_submit_round(b);
		if (!ret && !b->submit_only)
			ret = bench_memory_round(b, model);
		fprintf(stderr, PROG ": round %u of %u done\n", r + 1, b->rounds);
	}
out:
	if (b->sim)
		sim_restore();
	rkaccel_model_free(model);
	summarize(b);
	return ret;
}

int main(int argc, char **argv)
{
	struct bench b = { 0 };
	const char *json = NULL, *device = NULL, *why;
	FILE *jf = NULL;
	int ret;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--quick")) {
			b.quick = true;
		} else if (!strcmp(a, "--submit-only")) {
			b.submit_only = true;
		} else if (!strcmp(a, "--nets")) {
			b.nets = true;
		} else if (!strcmp(a, "--host-io")) {
			b.host_io = true;
		} else if (!strcmp(a, "--rounds") && i + 1 < argc) {
			char *end;
			long n = strtol(argv[++i], &end, 10);

			if (*end || end == argv[i] || n < 5 || n > MAX_ROUNDS) {
				fprintf(stderr, PROG ": --rounds takes 5 to %d, not '%s'\n",
					MAX_ROUNDS, argv[i]);
				return 2;
			}
			b.rounds = (unsigned int)n;
		} else if ((!strcmp(a, "--json") || !strcmp(a, "--device")) && i + 1 < argc) {
			if (!*argv[i + 1]) {
				fprintf(stderr, PROG ": %s needs a path, not an empty string\n", a);
				return 2;
			}
			*(a[2] == 'j' ? &json : &device) = argv[++i];
		} else if (!strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else {
			if (!strcmp(a, "--json") || !strcmp(a, "--device") || !strcmp(a, "--rounds"))
				fprintf(stderr, PROG ": %s needs a value\n", a);
			else
				fprintf(stderr, PROG ": unknown argument '%s'\n", a);
			usage(stderr);
			return 2;
		}
	}
	/* Before the run: a path that cannot be written fails at once. */
	if (json) {
		jf = arg_fopen_out(json, &why);
		if (!jf) {
			fprintf(stderr, PROG ": --json %s: %s\n", json, why);
			return 1;
		}
	}
	if (b.nets + b.submit_only + b.host_io > 1) {
		fprintf(stderr, PROG ": --nets, --submit-only and --host-io exclude each other\n");
		if (jf)
			fclose(jf);
		return 2;
	}
	if (b.host_io) {
		b.rounds = b.rounds ? b.rounds : 15;
		ret = bench_host_io(&b);
		if (!ret)
			summarize(&b);
	} else {
		ret = setup(&b, device);
	}
	/* the network figures are RK3588's (its published references) */
	if (!ret && b.nets && b.info.soc != DRM_RKACCEL_SOC_RK3588) {
		printf(PROG ": --nets: RK3588 only, nothing measured on %s\n", b.info.soc_name);
		rkaccel_close(b.dev);
		if (jf)
			fclose(jf);
		return 0;
	}
	if (!ret && !b.host_io)
		ret = run_all(&b);
	if (ret) {
		fprintf(stderr, PROG ": %s\n", rkaccel_strerror(ret));
		rkaccel_close(b.dev);
		if (jf)
			fclose(jf);
		return 1;
	}
	print_table(&b);
	print_json(&b, stdout, "BENCH-JSON ");
	if (jf) {
		print_json(&b, jf, "");
		if (fclose(jf)) {
			perror(json);
			ret = 1;
		}
	}
	rkaccel_close(b.dev);
	return ret;
}
