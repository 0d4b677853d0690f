// SPDX-License-Identifier: MIT
/*
 * Contexts: a compiled model bound to BOs and a kernel context; duplicates
 * that share the weight BO; multi-batch runs over a thread per context.
 */

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
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

#define CTX_MAX_COPIES	7		/* hidden duplicates: num_cores - 1 at most */
#define CTX_WAIT_NS	(60ull * 1000000000ull)

struct ctx_bo {
	uint32_t handle;
	void *map;
	size_t map_len;
	uint64_t addr;
};

/* What a context and its duplicates share: the program and the weight BO. */
struct ctx_shared {
	atomic_int refs;
	int fd;
	struct rkaccel_program *prog;
	struct ctx_bo weights;
	uint32_t num_cores;
	uint32_t rows, in_features, out_features, out_bytes;
};

struct slice_info {
	uint32_t core;
	uint64_t ns;
};

struct rkaccel_ctx {
	struct ctx_shared *sh;
	int fd;
	uint32_t kctx;
	uint32_t core_mask;		/* as created */
	uint32_t cur_mask;		/* of kctx */
	uint32_t syncobj;
	struct ctx_bo bo[RKACCEL_BUF_COUNT];	/* RKACCEL_BUF_WEIGHTS unused: sh->weights */
	struct drm_rkaccel_task *tasks;
	uint32_t ntasks;
	uint32_t batch;
	uint32_t ncopies;
	struct rkaccel_ctx *copies[CTX_MAX_COPIES];
	struct slice_info *slices;
	bool have_info;
};

/* --- small ioctl wrappers --------------------------------------------------- */

static int xioctl(int fd, unsigned long req, void *arg)
{
	return drmIoctl(fd, req, arg) ? -errno : 0;
}

static void bo_free(int fd, struct ctx_bo *bo)
{
	struct drm_gem_close c = { .handle = bo->handle };

	if (bo->map)
		munmap(bo->map, bo->map_len);
	if (bo->handle)
		xioctl(fd, DRM_IOCTL_GEM_CLOSE, &c);
	memset(bo, 0, sizeof(*bo));
}

static int bo_new(int fd, size_t size, uint32_t flags, struct ctx_bo *bo)
{
	struct drm_rkaccel_bo_create c = { .size = size, .flags = flags };
	void *p;
	int ret;

	memset(bo, 0, sizeof(*bo));
	ret = xioctl(fd, DRM_IOCTL_RKACCEL_BO_CREATE, &c);
	if (ret)
		return ret;
	bo->handle = c.handle;
	bo->addr = c.npu_addr;
	bo->map_len = (size + DRM_RKACCEL_BO_ALIGN - 1) / DRM_RKACCEL_BO_ALIGN *
		      DRM_RKACCEL_BO_ALIGN;
	p = mmap(NULL, bo->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)c.mmap_offset);
	if (p == MAP_FAILED) {
		ret = -errno;
		bo_free(fd, bo);
		return ret;
	}
	bo->map = p;
	return 0;
}

static int kctx_create(int fd, uint32_t mask, uint32_t *handle)
{
	struct drm_rkaccel_ctx_create c = {
		.core_mask = mask, .priority = DRM_RKACCEL_PRIORITY_NORMAL,
	};
	int ret = xioctl(fd, DRM_IOCTL_RKACCEL_CTX_CREATE, &c);

	if (!ret)
		*handle = c.handle;
	return ret;
}

static void kctx_destroy(int fd, uint32_t handle)
{
	struct drm_rkaccel_ctx_destroy d = { .handle = handle };

	if (handle)
		xioctl(fd, DRM_IOCTL_RKACCEL_CTX_DESTROY, &d);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* --- shared part ------------------------------------------------------------- */

static void shared_put(struct ctx_shared *sh)
{
	if (!sh || atomic_fetch_sub(&sh->refs, 1) != 1)
		return;
	bo_free(sh->fd, &sh->weights);
	rkaccel_program_free(sh->prog);
	free(sh);
}

static void shared_shape(struct ctx_shared *sh, const struct rkaccel_model_desc *d)
{
	const struct rkaccel_layer_desc *last = &d->layers[d->num_layers - 1];

	sh->rows = d->rows;
	sh->in_features = d->layers[0].in_features;
	sh->out_features = last->out_features;
	sh->out_bytes = last->flags & RKACCEL_LAYER_OUT_INT32 ? 4 : 1;
}

static int shared_weights(struct ctx_shared *sh)
{
	size_t size = rkaccel_program_size(sh->prog, RKACCEL_BUF_WEIGHTS);
	struct drm_rkaccel_bo_seal s = { 0 };
	int ret;

	if (!size)
		return 0;
	ret = bo_new(sh->fd, size, DRM_RKACCEL_BO_WEIGHT, &sh->weights);
	if (ret)
		return ret;
	memcpy(sh->weights.map, rkaccel_program_weights(sh->prog), size);
	s.handle = sh->weights.handle;
	return xioctl(sh->fd, DRM_IOCTL_RKACCEL_BO_SEAL, &s);
}

static int shared_new(struct rkaccel_device *dev, const struct rkaccel_model *model,
		      struct ctx_shared **out)
{
	const struct rkaccel_model_desc *d = rkaccel_model_desc(model);
	struct rkaccel_info info;
	struct ctx_shared *sh;
	int ret = rkaccel_query(dev, &info);

	if (ret)
		return ret;
	sh = calloc(1, sizeof(*sh));
	if (!sh)
		return -ENOMEM;
	atomic_init(&sh->refs, 1);
	sh->fd = rkaccel_fd(dev);
	sh->num_cores = info.num_cores ? info.num_cores : 1;
	shared_shape(sh, d);
	ret = rkaccel_program_compile(d, &info, &sh->prog);
	if (!ret && rkaccel_program_starts(sh->prog) > DRM_RKACCEL_MAX_JOB_TASKS)
		ret = -E2BIG;
	if (!ret)
		ret = shared_weights(sh);
	if (ret) {
		shared_put(sh);
		return ret;
	}
	*out = sh;
	return 0;
}

/* --- one context --------------------------------------------------------------- */

static void ctx_free(struct rkaccel_ctx *c)
{
	int i;

	if (c->syncobj)
		drmSyncobjDestroy(c->fd, c->syncobj);
	kctx_destroy(c->fd, c->kctx);
	for (i = 0; i < RKACCEL_BUF_COUNT; i++)
		bo_free(c->fd, &c->bo[i]);
	shared_put(c->sh);
	free(c->tasks);
	free(c->slices);
	free(c);
}

/* Allocate the per-context BOs and emit the register commands for them. */
static int ctx_bind(struct rkaccel_ctx *c)
{
	struct rkaccel_program *prog = c->sh->prog;
	uint64_t addr[RKACCEL_BUF_COUNT] = { 0 };
	struct rkaccel_pc_start *starts;
	uint32_t i;
	int ret;

	for (i = 0; i < RKACCEL_BUF_COUNT; i++) {
		size_t size = rkaccel_program_size(prog, i);

		if (i == RKACCEL_BUF_WEIGHTS || !size)
			continue;
		ret = bo_new(c->fd, size, 0, &c->bo[i]);
		if (ret)
			return ret;
		addr[i] = c->bo[i].addr;
	}
	addr[RKACCEL_BUF_WEIGHTS] = c->sh->weights.addr;
	c->ntasks = rkaccel_program_starts(prog);
	starts = calloc(c->ntasks, sizeof(*starts));
	c->tasks = calloc(c->ntasks, sizeof(*c->tasks));
	if (!starts || !c->tasks) {
		free(starts);
		return -ENOMEM;
	}
	ret = rkaccel_program_emit(prog, addr, c->bo[RKACCEL_BUF_REGCMD].map, starts);
	for (i = 0; !ret && i < c->ntasks; i++) {
		c->tasks[i].regcmd_addr = starts[i].regcmd_addr;
		c->tasks[i].regcmd_count = starts[i].regcmd_count;
		c->tasks[i].task_count = starts[i].task_count;
	}
	free(starts);
	return ret;
}

/* A context over @sh (whose reference it takes over) with kernel core mask @mask. */
static int ctx_new(struct ctx_shared *sh, uint32_t mask, struct rkaccel_ctx **out)
{
	struct rkaccel_ctx *c = calloc(1, sizeof(*c));
	int ret;

	if (!c) {
		shared_put(sh);
		return -ENOMEM;
	}
	c->sh = sh;
	c->fd = sh->fd;
	c->core_mask = c->cur_mask = mask;
	c->batch = 1;
	c->slices = calloc(1, sizeof(*c->slices));
	ret = c->slices ? kctx_create(c->fd, mask, &c->kctx) : -ENOMEM;
	if (!ret)
		ret = drmSyncobjCreate(c->fd, 0, &c->syncobj) ? -errno : 0;
	if (!ret)
		ret = ctx_bind(c);
	if (ret) {
		ctx_free(c);
		return ret;
	}
	*out = c;
	return 0;
}

int rkaccel_ctx_create(struct rkaccel_device *dev, const struct rkaccel_model *model,
		       uint32_t core_mask, struct rkaccel_ctx **ctx)
{
	struct ctx_shared *sh;
	int ret;

	if (!dev || !model || !ctx)
		return -EINVAL;
	ret = shared_new(dev, model, &sh);
	if (ret)
		return ret;
	return ctx_new(sh, core_mask, ctx);
}

int rkaccel_ctx_dup(struct rkaccel_ctx *src, struct rkaccel_ctx **dup)
{
	if (!src || !dup)
		return -EINVAL;
	atomic_fetch_add(&src->sh->refs, 1);
	return ctx_new(src->sh, 0, dup);
}

void rkaccel_ctx_destroy(struct rkaccel_ctx *ctx)
{
	uint32_t i;

	if (!ctx)
		return;
	for (i = 0; i < ctx->ncopies; i++)
		ctx_free(ctx->copies[i]);
	ctx_free(ctx);
}

/* --- batch ------------------------------------------------------------------------ */

/* Replace the kernel context by one with core mask @mask. */
static int ctx_set_mask(struct rkaccel_ctx *c, uint32_t mask)
{
	uint32_t handle;
	int ret;

	if (c->cur_mask == mask)
		return 0;
	ret = kctx_create(c->fd, mask, &handle);
	if (ret)
		return ret;
	kctx_destroy(c->fd, c->kctx);
	c->kctx = handle;
	c->cur_mask = mask;
	return 0;
}

static int ctx_set_copies(struct rkaccel_ctx *c, uint32_t want)
{
	int ret;

	while (c->ncopies > want)
		ctx_free(c->copies[--c->ncopies]);
	while (c->ncopies < want) {
		ret = rkaccel_ctx_dup(c, &c->copies[c->ncopies]);
		if (ret)
			return ret;
		c->ncopies++;
	}
	return 0;
}

int rkaccel_ctx_set_batch(struct rkaccel_ctx *ctx, uint32_t batch)
{
	uint32_t want, cores;
	struct slice_info *slices;
	int ret;

	if (!ctx || batch < 1 || batch > RKACCEL_CTX_MAX_BATCH)
		return -EINVAL;
	cores = ctx->sh->num_cores;
	if (cores > CTX_MAX_COPIES + 1)
		cores = CTX_MAX_COPIES + 1;
	want = (batch < cores ? batch : cores) - 1;
	slices = calloc(batch, sizeof(*slices));
	if (!slices)
		return -ENOMEM;
	ret = ctx_set_mask(ctx, batch > 1 ? 0 : ctx->core_mask);
	if (!ret)
		ret = ctx_set_copies(ctx, want);
	if (ret) {
		free(slices);
		return ret;
	}
	free(ctx->slices);
	ctx->slices = slices;
	ctx->batch = batch;
	ctx->have_info = false;
	return 0;
}

uint32_t rkaccel_ctx_batch(const struct rkaccel_ctx *ctx)
{
	return ctx->batch;
}

uint32_t rkaccel_ctx_copies(const struct rkaccel_ctx *ctx)
{
	return ctx->ncopies;
}

static size_t slice_in_size(const struct ctx_shared *sh)
{
	return (size_t)sh->rows * sh->in_features;
}

static size_t slice_out_size(const struct ctx_shared *sh)
{
	return (size_t)sh->rows * sh->out_features * sh->out_bytes;
}

size_t rkaccel_ctx_input_size(const struct rkaccel_ctx *ctx)
{
	return ctx->batch * slice_in_size(ctx->sh);
}

size_t rkaccel_ctx_output_size(const struct rkaccel_ctx *ctx)
{
	return ctx->batch * slice_out_size(ctx->sh);
}

uint32_t rkaccel_ctx_bo_handle(const struct rkaccel_ctx *ctx, enum rkaccel_buffer buf)
{
	if (!ctx || (unsigned int)buf >= RKACCEL_BUF_COUNT)
		return 0;
	return buf == RKACCEL_BUF_WEIGHTS ? ctx->sh->weights.handle : ctx->bo[buf].handle;
}

uint32_t rkaccel_ctx_kernel_handle(const struct rkaccel_ctx *ctx)
{
	return ctx->kctx;
}

int rkaccel_ctx_slice_info(const struct rkaccel_ctx *ctx, uint32_t slice, uint32_t *core,
			   uint64_t *ns)
{
	if (!ctx || slice >= ctx->batch)
		return -EINVAL;
	if (!ctx->have_info)
		return -ENODATA;
	if (core)
		*core = ctx->slices[slice].core;
	if (ns)
		*ns = ctx->slices[slice].ns;
	return 0;
}

/* --- running -------------------------------------------------------------------- */

/* The error the syncobj's fence was signalled with, 0 when it succeeded. */
static int fence_status(int fd, uint32_t syncobj)
{
	struct sync_file_info info;
	int sfd, ret;

	if (drmSyncobjExportSyncFile(fd, syncobj, &sfd))
		return -errno;
	memset(&info, 0, sizeof(info));
	ret = ioctl(sfd, SYNC_IOC_FILE_INFO, &info) ? -errno : 0;
	close(sfd);
	if (!ret && info.status < 0)
		ret = info.status;
	return ret;
}

/* Submit one inference on @c and wait for it. */
static int ctx_exec(struct rkaccel_ctx *c)
{
	struct drm_rkaccel_submit_bo bos[RKACCEL_BUF_COUNT];
	struct drm_rkaccel_submit s = { 0 };
	uint32_t i, n = 0;
	int ret;

	for (i = 0; i < RKACCEL_BUF_COUNT; i++) {
		uint32_t h = rkaccel_ctx_bo_handle(c, i);

		if (!h)
			continue;
		bos[n].handle = h;
		bos[n++].flags = i == RKACCEL_BUF_OUTPUT || i == RKACCEL_BUF_INTERNAL ?
				 DRM_RKACCEL_SUBMIT_BO_WRITE : 0;
	}
	s.ctx = c->kctx;
	s.tasks = (uint64_t)(uintptr_t)c->tasks;
	s.task_count = c->ntasks;
	s.task_stride = sizeof(*c->tasks);
	s.bos = (uint64_t)(uintptr_t)bos;
	s.bo_count = n;
	s.bo_stride = sizeof(*bos);
	s.out_sync = c->syncobj;
	ret = xioctl(c->fd, DRM_IOCTL_RKACCEL_SUBMIT, &s);
	if (ret)
		return ret;
	if (drmSyncobjWait(c->fd, &c->syncobj, 1, (int64_t)(now_ns() + CTX_WAIT_NS),
			   DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL))
		return -errno;
	return fence_status(c->fd, c->syncobj);
}

static int ctx_last_core(struct rkaccel_ctx *c, uint32_t *core)
{
	struct drm_rkaccel_ctx_query q = { .handle = c->kctx };
	int ret = xioctl(c->fd, DRM_IOCTL_RKACCEL_CTX_QUERY, &q);

	if (!ret)
		*core = q.last_core;
	return ret;
}

/* What one thread does: slices @first, @first + @step, ... on context @c. */
struct run_job {
	struct rkaccel_ctx *owner, *c;
	const uint8_t *in;
	uint8_t *out;
	uint32_t first, step;
	int ret;
	pthread_t thread;
};

static int run_slice(struct run_job *j, uint32_t i)
{
	struct ctx_shared *sh = j->c->sh;
	struct ctx_bo *ibo = &j->c->bo[RKACCEL_BUF_INPUT], *obo = &j->c->bo[RKACCEL_BUF_OUTPUT];
	struct slice_info *si = &j->owner->slices[i];
	uint64_t t0;
	int ret;

	ret = rkaccel_to_native((const int8_t *)(j->in + i * slice_in_size(sh)), sh->rows,
				sh->in_features, ibo->map, ibo->map_len);
	if (ret)
		return ret;
	t0 = now_ns();
	ret = ctx_exec(j->c);
	si->ns = now_ns() - t0;
	if (!ret)
		ret = ctx_last_core(j->c, &si->core);
	if (ret)
		return ret;
	return rkaccel_from_native(obo->map, obo->map_len, sh->rows, sh->out_features,
				   sh->out_bytes, j->out + i * slice_out_size(sh));
}

static void *run_thread(void *arg)
{
	struct run_job *j = arg;
	uint32_t i;

	j->ret = 0;
	for (i = j->first; i < j->owner->batch && !j->ret; i += j->step)
		j->ret = run_slice(j, i);
	return NULL;
}

/* Start a thread per context but the first, run the first here, join. */
static int run_pool(struct run_job *jobs, uint32_t n)
{
	uint32_t i, started = 0;
	int ret = 0;

	for (i = 1; i < n; i++) {
		if (pthread_create(&jobs[i].thread, NULL, run_thread, &jobs[i]))
			break;
		started = i;
	}
	if (started + 1 < n)
		ret = -EAGAIN;
	if (!ret)
		run_thread(&jobs[0]);
	for (i = 1; i <= started; i++)
		pthread_join(jobs[i].thread, NULL);
	for (i = 0; !ret && i < n; i++)
		ret = jobs[i].ret;
	return ret;
}

int rkaccel_ctx_run(struct rkaccel_ctx *ctx, const void *in, size_t in_len, void *out,
		    size_t out_len)
{
	struct run_job jobs[CTX_MAX_COPIES + 1];
	uint32_t i, n;
	int ret;

	if (!ctx || !in || !out || in_len != rkaccel_ctx_input_size(ctx) ||
	    out_len != rkaccel_ctx_output_size(ctx))
		return -EINVAL;
	n = ctx->ncopies + 1;
	for (i = 0; i < n; i++) {
		jobs[i] = (struct run_job) {
			.owner = ctx, .c = i ? ctx->copies[i - 1] : ctx,
			.in = in, .out = out, .first = i, .step = n,
		};
	}
	ctx->have_info = false;
	ret = run_pool(jobs, n);
	ctx->have_info = !ret;
	return ret;
}
