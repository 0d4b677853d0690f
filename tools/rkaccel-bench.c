// SPDX-License-Identifier: MIT
/*
 * rkaccel-bench: multi-core scaling, submit overhead and memory of the NPU,
 * each figure a ratio to a baseline measured in the same run.
 *
 * On the simulated NPU the device time comes from the simulator's timing
 * model in timing-only mode (sim_compute=0), stretched by sim_time_scale
 * so that it dominates the host's own work; the output says so. On silicon
 * the same program runs the real cores and touches no parameter.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <xf86drm.h>

#include "rkaccel.h"
#include "rkaccel_drm.h"
#include "args.h"
#include "rkaccel_npu_regs.h"

#define PROG		"rkaccel-bench"
/* the simulated NPU's timing model (rkaccel_sim.ko) */
#define PARAM_DIR	"/sys/module/rkaccel_sim/parameters/"
#define MAX_FIGURES	96
#define LAT_SAMPLES	400

struct figure {
	char key[48];
	double value;
};

struct bench {
	struct rkaccel_device *dev;
	struct rkaccel_info info;
	const char *soc;	/* "rk3588" / "rk3576": the JSON key prefix */
	bool sim, quick;
	uint32_t time_scale;
	struct figure fig[MAX_FIGURES];
	unsigned int nfig;
};

static void figure(struct bench *b, double value, const char *fmt, ...)
{
	struct figure *f = &b->fig[b->nfig];
	va_list ap;

	if (b->nfig == MAX_FIGURES)
		return;
	va_start(ap, fmt);
	vsnprintf(f->key, sizeof(f->key), fmt, ap);
	va_end(ap);
	f->value = value;
	b->nfig++;
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

static const char *const sim_params[] = { "sim_compute", "sim_time_scale", "sim_task_ns" };
static char sim_saved[3][32];

static void sim_save(void)
{
	for (unsigned int i = 0; i < 3; i++)
		param_rw(sim_params[i], NULL, sim_saved[i], sizeof(sim_saved[i]));
}

static void sim_restore(void)
{
	for (unsigned int i = 0; i < 3; i++)
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
 * Inferences per second of @ctx over @iters runs of its batch, and the
 * device time its jobs took on all cores (from fdinfo) over the same wall
 * time: how busy the cores were kept.
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

static int bench_scaling(struct bench *b, const struct rkaccel_model *model)
{
	unsigned int max_batch = 2 * b->info.num_cores, iters = b->quick ? 3 : 8;
	struct rkaccel_ctx *one = NULL, *ctx = NULL;
	double base, tput, busy;
	int ret;

	/* batch 1 on one core: the baseline every ratio divides by */
	ret = rkaccel_ctx_create(b->dev, model, 1, &one);
	if (!ret)
		ret = throughput(b, one, iters, &base, &busy);
	rkaccel_ctx_destroy(one);
	if (!ret)
		ret = rkaccel_ctx_create(b->dev, model, 0, &ctx);
	if (ret)
		return ret;
	figure(b, base, "%s.tput.core1", b->soc);
	figure(b, busy, "%s.busy.core1", b->soc);
	for (unsigned int batch = 1; batch <= max_batch && !ret; batch++) {
		unsigned int rounds = (batch + b->info.num_cores - 1) / b->info.num_cores;

		ret = rkaccel_ctx_set_batch(ctx, batch);
		if (!ret)
			ret = throughput(b, ctx, iters, &tput, &busy);
		if (ret)
			break;
		figure(b, tput, "%s.tput.b%u", b->soc, batch);
		figure(b, busy, "%s.busy.b%u", b->soc, batch);
		figure(b, tput / base, "%s.scale.b%u", b->soc, batch);
		figure(b, (double)batch / rounds, "%s.ideal.b%u", b->soc, batch);
	}
	rkaccel_ctx_destroy(ctx);
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

static int zero_job_submit(int fd, struct zero_job *z, unsigned int ctx)
{
	struct drm_rkaccel_submit_bo bo = { .handle = z->bo };
	struct drm_rkaccel_submit s = {
		.ctx = z->ctx[ctx],
		.tasks = (uintptr_t)&z->task,
		.task_count = 1,
		.task_stride = sizeof(z->task),
		.bos = (uintptr_t)&bo,
		.bo_count = 1,
		.bo_stride = sizeof(bo),
		.out_sync = z->sync,
	};

	return drmIoctl(fd, DRM_IOCTL_RKACCEL_SUBMIT, &s) ? -errno : 0;
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

/* Submit-to-signal latency of one job, and of a bare syncobj round trip. */
static int latencies(int fd, struct zero_job *z, unsigned int n, double *job_p50,
		     double *job_p99, double *sync_p50)
{
	static uint64_t lat[LAT_SAMPLES];
	int ret = 0;

	for (unsigned int i = 0; i < n && !ret; i++) {
		uint64_t t0 = now_ns();

		ret = zero_job_submit(fd, z, 0);
		if (!ret)
			ret = zero_job_wait(fd, z);
		lat[i] = now_ns() - t0;
	}
	if (ret)
		return ret;
	*job_p99 = percentile(lat, n, 99);
	*job_p50 = percentile(lat, n, 50);
	for (unsigned int i = 0; i < n && !ret; i++) {
		uint64_t t0 = now_ns();
		uint32_t h;

		ret = drmSyncobjCreate(fd, 0, &h) ? -errno : 0;
		if (ret)
			break;
		if (drmSyncobjSignal(fd, &h, 1) ||
		    drmSyncobjWait(fd, &h, 1, INT64_MAX, 0, NULL))
			ret = -errno;
		drmSyncobjDestroy(fd, h);
		lat[i] = now_ns() - t0;
	}
	*sync_p50 = percentile(lat, n, 50);
	return ret;
}

static int bench_submit(struct bench *b)
{
	int fd = rkaccel_fd(b->dev);
	unsigned int jobs = b->quick ? 200 : 2000, n = b->quick ? 100 : LAT_SAMPLES;
	double one, many, p50, p99, sync50;
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
		ret = latencies(fd, &z1, n, &p50, &p99, &sync50);
	zero_job_fini(fd, &z1);
	zero_job_fini(fd, &zn);
	if (ret)
		return ret;
	figure(b, one, "submit.jobs_per_s.ctx1");
	figure(b, many, "submit.jobs_per_s.ctx%u", b->info.num_cores);
	figure(b, p50 / 1000, "submit.latency_us.p50");
	figure(b, p99 / 1000, "submit.latency_us.p99");
	figure(b, sync50 / 1000, "submit.syncobj_us.p50");
	figure(b, p50 / sync50, "submit.ratio_to_syncobj");
	figure(b, p99 / sync50, "submit.ratio_to_syncobj.p99");
	return 0;
}

/* --- memory ------------------------------------------------------------------ */

static int bench_memory(struct bench *b, const struct rkaccel_model *model)
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

/* --- output ------------------------------------------------------------------ */

static void print_json(const struct bench *b, FILE *f, const char *prefix)
{
	fprintf(f, "%s{", prefix);
	for (unsigned int i = 0; i < b->nfig; i++)
		fprintf(f, "%s\"%s\": %.6g", i ? ", " : "", b->fig[i].key, b->fig[i].value);
	fprintf(f, "}\n");
}

static double fig(const struct bench *b, const char *fmt, ...)
{
	char key[48];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(key, sizeof(key), fmt, ap);
	va_end(ap);
	for (unsigned int i = 0; i < b->nfig; i++)
		if (!strcmp(b->fig[i].key, key))
			return b->fig[i].value;
	return 0;
}

static void print_table(const struct bench *b)
{
	printf("\nscaling on %s (%u cores), inferences/s and ratio to batch 1 on one core:\n",
	       b->info.soc_name, b->info.num_cores);
	printf("  (busy: device time of the jobs on all cores per wall second)\n");
	printf("  batch  inf/s     ratio  ideal  busy\n");
	printf("  1core  %8.1f  1.000  1.000  %4.2f\n", fig(b, "%s.tput.core1", b->soc),
	       fig(b, "%s.busy.core1", b->soc));
	for (unsigned int batch = 1; batch <= 2 * b->info.num_cores; batch++)
		printf("  %5u  %8.1f  %5.3f  %5.3f  %4.2f\n", batch,
		       fig(b, "%s.tput.b%u", b->soc, batch), fig(b, "%s.scale.b%u", b->soc, batch),
		       fig(b, "%s.ideal.b%u", b->soc, batch), fig(b, "%s.busy.b%u", b->soc, batch));
	printf("\nsubmit overhead (zero-work jobs):\n");
	printf("  jobs/s, 1 context:   %10.0f\n", fig(b, "submit.jobs_per_s.ctx1"));
	printf("  jobs/s, %u contexts:  %10.0f\n", b->info.num_cores,
	       fig(b, "submit.jobs_per_s.ctx%u", b->info.num_cores));
	printf("  latency p50 / p99:   %8.1f / %.1f us\n", fig(b, "submit.latency_us.p50"),
	       fig(b, "submit.latency_us.p99"));
	printf("  syncobj round trip:  %8.1f us (p50)\n", fig(b, "submit.syncobj_us.p50"));
	printf("  ratio to syncobj:    %8.2f (p50), %.2f (p99)\n",
	       fig(b, "submit.ratio_to_syncobj"), fig(b, "submit.ratio_to_syncobj.p99"));
	printf("\nmemory from fdinfo (bytes):\n");
	printf("  contexts  weights    internal   total      no sharing\n");
	for (unsigned int n = 1; n <= 3; n++)
		printf("  %8u  %9.0f  %9.0f  %9.0f  %9.0f\n", n,
		       fig(b, "mem.weights_bytes.ctx%u", n), fig(b, "mem.internal_bytes.ctx%u", n),
		       fig(b, "mem.total_bytes.ctx%u", n), fig(b, "mem.nosharing_bytes.ctx%u", n));
}

static void usage(FILE *f)
{
	fprintf(f, "usage: " PROG " [--quick] [--json FILE] [--device PATH]\n"
		   "Measure multi-core scaling, submit overhead and memory; print a table and,\n"
		   "on stdout, one line 'BENCH-JSON {...}' (also written to FILE with --json).\n");
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
		printf("mode: simulated %s, timing-only (sim_compute=0), sim_time_scale=%u\n",
		       b->info.soc_name, b->time_scale);
	} else {
		printf("mode: silicon %s\n", b->info.soc_name);
	}
	ret = bench_scaling(b, model);
	if (!ret)
		ret = bench_submit(b);
	if (b->sim)
		sim_restore();
	if (!ret)
		ret = bench_memory(b, model);
	rkaccel_model_free(model);
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
			if (!strcmp(a, "--json") || !strcmp(a, "--device"))
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
	ret = setup(&b, device);
	if (!ret)
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
