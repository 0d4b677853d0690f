// SPDX-License-Identifier: MIT
/*
 * Contexts: a compiled model bound to BOs and a kernel context; duplicates
 * that share the weight BO; multi-batch runs over a thread per context,
 * kept between runs.
 */

#include <errno.h>
#include <pthread.h>
#include <poll.h>
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

#include "runtime.h"
#include "rkaccel_drm.h"
#include "../compiler/split.h"
#include "../compiler/tensors.h"
#include "../model/model.h"

#define CTX_MAX_COPIES	7		/* hidden duplicates: num_cores - 1 at most */
/*
 * A backstop only: the driver ends every job within its max_job_ms. Long
 * enough for ResNet-50 at 224x224 on a simulated core in a loaded TCG guest
 * (60 s was not: -ETIME while the job was still running).
 */
#define CTX_WAIT_NS	(600ull * 1000000000ull)

/* What a context and its duplicates share: the program and the weight BO. */
struct ctx_shared {
	atomic_int refs;
	int fd;
	struct rkaccel_program *prog;
	struct ctx_bo weights;
	uint32_t num_cores;
	uint32_t avail_mask;		/* cores present: rkaccel_info.core_mask */
	uint32_t rows, out_rows, in_features, out_features, out_bytes;	/* out_rows: pixels */
	float in_scale, out_scale;
	int32_t in_zp, out_zp;
	/* one inference over n cores: programs compiled on first use (split.c) */
	pthread_mutex_t split_lock;
	struct rkaccel_model *model;		/* a copy, when there are cores to split over */
	uint64_t boundary_ns;			/* the split's charge per job start */
	struct rkaccel_info info;		/* what the programs were compiled for */
	struct rkaccel_program *split_prog[SPLIT_MAX_PARTS + 1];
	struct ctx_bo split_wt[SPLIT_MAX_PARTS + 1];
	bool keep_tensors;		/* RKACCEL_CTX_KEEP_TENSORS: prog keeps every tensor */
};

struct slice_info {
	uint32_t core;
	uint64_t ns;
};

struct run_job;
struct ctx_pool;

/* What a pool thread needs to find its work: thread k runs jobs[k + 1]. */
struct pool_arg {
	struct ctx_pool *pool;
	uint32_t k;
	uint64_t seen;			/* the run it last looked at */
};

/*
 * Threads kept between runs of a batch, one per hidden copy: starting and
 * joining threads on every run cost more than a slice's host work.
 */
struct ctx_pool {
	pthread_mutex_t lock;		/* protects everything below */
	pthread_cond_t go, done;
	pthread_t thread[CTX_MAX_COPIES];
	struct pool_arg arg[CTX_MAX_COPIES];
	uint32_t nthreads;
	uint64_t gen;			/* bumped by each run */
	uint32_t nwork;			/* threads taking part in this run */
	uint32_t busy;			/* of those, still running */
	struct run_job *jobs;
	bool quit;
};

struct rkaccel_ctx {
	struct ctx_shared *sh;
	int fd;
	atomic_bool busy;		/* a call that runs or changes it is under way */
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
	/* Bound I/O memory (the owner's, for the whole batch): [0] in, [1] out. */
	struct rkaccel_mem *io_mem[2];
	size_t io_off[2];
	/*
	 * With memory bound, register commands per slice this context runs
	 * (image j: slice owner-index + j * contexts), emitted once.
	 */
	struct ctx_bo xregcmd;
	struct drm_rkaccel_task *xtasks;	/* nimg x ntasks */
	uint32_t nimg;
	struct ctx_pool pool;		/* the owner's batch threads */
	struct split_run *split;	/* batch 1 over several cores, NULL: none yet */
	uint32_t split_mask;
	struct rkaccel_run_info info;	/* of the last run */
	uint64_t run_before[RKACCEL_MAX_CORES];
};

/* --- small ioctl wrappers --------------------------------------------------- */

int xioctl(int fd, unsigned long req, void *arg)
{
	return drmIoctl(fd, req, arg) ? -errno : 0;
}

/* The handle goes through handle.c: a PRIME self-import may share it. */
void bo_free(int fd, struct ctx_bo *bo)
{
	if (bo->map)
		munmap(bo->map, bo->map_len);
	gem_ref_put(fd, bo->handle);
	memset(bo, 0, sizeof(*bo));
}

int bo_new(int fd, size_t size, uint32_t flags, struct ctx_bo *bo)
{
	struct drm_rkaccel_bo_create c = { .size = size, .flags = flags };
	void *p;
	int ret;

	memset(bo, 0, sizeof(*bo));
	ret = xioctl(fd, DRM_IOCTL_RKACCEL_BO_CREATE, &c);
	if (!ret)
		ret = gem_ref_get(fd, c.handle);
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

int kctx_create(int fd, uint32_t mask, uint32_t *handle)
{
	struct drm_rkaccel_ctx_create c = {
		.core_mask = mask, .priority = DRM_RKACCEL_PRIORITY_NORMAL,
	};
	int ret = xioctl(fd, DRM_IOCTL_RKACCEL_CTX_CREATE, &c);

	if (!ret)
		*handle = c.handle;
	return ret;
}

void kctx_destroy(int fd, uint32_t handle)
{
	struct drm_rkaccel_ctx_destroy d = { .handle = handle };

	if (handle)
		xioctl(fd, DRM_IOCTL_RKACCEL_CTX_DESTROY, &d);
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * One call at a time runs or changes a context (and its hidden copies,
 * whose threads and register commands it drives): a second, from another
 * thread, gets -EBUSY instead of corrupting the first.
 */
static int ctx_enter(struct rkaccel_ctx *ctx)
{
	return atomic_exchange(&ctx->busy, true) ? -EBUSY : 0;
}

static int ctx_leave(struct rkaccel_ctx *ctx, int ret)
{
	atomic_store(&ctx->busy, false);
	return ret;
}

/* --- shared part ------------------------------------------------------------- */

static void shared_put(struct ctx_shared *sh)
{
	if (!sh || atomic_fetch_sub(&sh->refs, 1) != 1)
		return;
	for (uint32_t n = 0; n <= SPLIT_MAX_PARTS; n++) {
		bo_free(sh->fd, &sh->split_wt[n]);
		rkaccel_program_free(sh->split_prog[n]);
	}
	rkaccel_model_free(sh->model);
	pthread_mutex_destroy(&sh->split_lock);
	bo_free(sh->fd, &sh->weights);
	rkaccel_program_free(sh->prog);
	free(sh);
}

static int shared_shape(struct ctx_shared *sh, const struct rkaccel_model *model)
{
	const struct rkaccel_model_desc *d = rkaccel_model_desc(model);
	const struct rkaccel_layer_desc *last = &d->layers[d->num_layers - 1];
	struct rkaccel_tensor_shape out;
	int ret;

	/* the model's links, not a chain's walk: a layer may read any tensor */
	ret = rkaccel_model_shape(model, d->num_layers, &out);
	if (ret)
		return ret;
	sh->rows = d->rows;
	sh->out_rows = out.height * out.width;
	sh->in_features = d->layers[0].in_features;
	sh->out_features = last->out_features;
	sh->out_bytes = last->flags & RKACCEL_LAYER_OUT_INT32 ? 4 : 1;
	sh->in_scale = d->layers[0].in_scale;
	sh->in_zp = d->layers[0].in_zero_point;
	sh->out_scale = sh->out_bytes == 4 ? last->in_scale * last->weight_scale :
					     last->out_scale;
	sh->out_zp = last->out_zero_point;
	return 0;
}

/* A sealed weight BO @bo holding @prog's weights. */
static int shared_weights(struct ctx_shared *sh, const struct rkaccel_program *prog,
			  struct ctx_bo *bo)
{
	size_t size = rkaccel_program_size(prog, RKACCEL_BUF_WEIGHTS);
	struct drm_rkaccel_bo_seal s = { 0 };
	int ret;

	if (!size)
		return 0;
	ret = bo_new(sh->fd, size, DRM_RKACCEL_BO_WEIGHT, bo);
	if (ret)
		return ret;
	memcpy(bo->map, rkaccel_program_weights(prog), size);
	s.handle = bo->handle;
	return xioctl(sh->fd, DRM_IOCTL_RKACCEL_BO_SEAL, &s);
}

/* The model kept for split programs: only on devices with cores to split over. */
static int shared_keep_model(struct ctx_shared *sh, const struct rkaccel_model *model)
{
	const char *env = getenv("RKACCEL_SPLIT_BOUNDARY_NS");

	if (!sh->boundary_ns)
		sh->boundary_ns = env && *env ? strtoull(env, NULL, 0) : SPLIT_BOUNDARY_NS;
	if (__builtin_popcount(sh->avail_mask) < 2)
		return 0;
	return model_copy_links(&model->desc, model->io, model->cat, model->num_cat,
				&sh->model, NULL, 0);
}

/* The program of @model: with every tensor kept for a layer dump, or by lifetime. */
static int shared_compile(struct ctx_shared *sh, const struct rkaccel_model *model)
{
	const struct model_io *io;
	const uint32_t *cat;

	if (!sh->keep_tensors)
		return rkaccel_program_compile_model(model, &sh->info, &sh->prog);
	io = model_links(model, &cat);
	return program_compile_kept(rkaccel_model_desc(model), io, cat, &sh->info, &sh->prog);
}

static int shared_new(struct rkaccel_device *dev, const struct rkaccel_model *model,
		      uint64_t boundary_ns, bool keep_tensors, struct ctx_shared **out)
{
	struct rkaccel_info info;
	struct ctx_shared *sh;
	int ret = rkaccel_query(dev, &info);

	if (ret)
		return ret;
	sh = calloc(1, sizeof(*sh));
	if (!sh)
		return -ENOMEM;
	atomic_init(&sh->refs, 1);
	pthread_mutex_init(&sh->split_lock, NULL);
	sh->boundary_ns = boundary_ns;
	sh->keep_tensors = keep_tensors;
	sh->fd = rkaccel_fd(dev);
	sh->info = info;
	sh->num_cores = info.num_cores ? info.num_cores : 1;
	sh->avail_mask = info.core_mask;
	ret = shared_shape(sh, model);
	if (!ret)
		ret = shared_compile(sh, model);
	if (!ret && rkaccel_program_starts(sh->prog) > DRM_RKACCEL_MAX_JOB_TASKS)
		ret = -E2BIG;
	if (!ret)
		ret = shared_weights(sh, sh->prog, &sh->weights);
	/* a split program places tensors its own way: a dump runs on one core */
	if (!ret && !keep_tensors)
		ret = shared_keep_model(sh, model);
	if (ret) {
		shared_put(sh);
		return ret;
	}
	*out = sh;
	return 0;
}

/* --- one context --------------------------------------------------------------- */

static void pool_stop(struct ctx_pool *pool);

static void ctx_free(struct rkaccel_ctx *c)
{
	int i;

	pool_stop(&c->pool);
	split_run_free(c->split);
	if (c->syncobj)
		drmSyncobjDestroy(c->fd, c->syncobj);
	kctx_destroy(c->fd, c->kctx);
	for (i = 0; i < RKACCEL_BUF_COUNT; i++)
		bo_free(c->fd, &c->bo[i]);
	bo_free(c->fd, &c->xregcmd);
	free(c->xtasks);
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
		c->tasks[i].flags = starts[i].flags;
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
	atomic_init(&c->busy, false);
	pthread_mutex_init(&c->pool.lock, NULL);
	pthread_cond_init(&c->pool.go, NULL);
	pthread_cond_init(&c->pool.done, NULL);
	c->core_mask = c->cur_mask = mask;
	c->batch = 1;
	c->slices = calloc(1, sizeof(*c->slices));
	ret = c->slices ? kctx_create(c->fd, mask, &c->kctx) : -ENOMEM;
	if (!ret)
		/* signalled: rkaccel_ctx_wait() finds a fence before the first job */
		ret = drmSyncobjCreate(c->fd, DRM_SYNCOBJ_CREATE_SIGNALED, &c->syncobj) ?
		      -errno : 0;
	if (!ret)
		ret = ctx_bind(c);
	if (ret) {
		ctx_free(c);
		return ret;
	}
	*out = c;
	return 0;
}

/* rkaccel_ctx_create_flags() whose split programs charge @boundary_ns per job (0: the default). */
static int ctx_create(struct rkaccel_device *dev, const struct rkaccel_model *model,
		      uint32_t core_mask, uint32_t flags, uint64_t boundary_ns,
		      struct rkaccel_ctx **ctx)
{
	struct ctx_shared *sh;
	int ret;

	if (!dev || !model || !ctx || (flags & ~RKACCEL_CTX_KEEP_TENSORS))
		return -EINVAL;
	ret = shared_new(dev, model, boundary_ns, flags & RKACCEL_CTX_KEEP_TENSORS, &sh);
	if (ret)
		return ret;
	return ctx_new(sh, core_mask, ctx);
}

int rkaccel_ctx_create(struct rkaccel_device *dev, const struct rkaccel_model *model,
		       uint32_t core_mask, struct rkaccel_ctx **ctx)
{
	return ctx_create(dev, model, core_mask, 0, 0, ctx);
}

int rkaccel_ctx_create_flags(struct rkaccel_device *dev, const struct rkaccel_model *model,
			     uint32_t core_mask, uint32_t flags, struct rkaccel_ctx **ctx)
{
	return ctx_create(dev, model, core_mask, flags, 0, ctx);
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

/* Native bytes of one slice's input (@out false) or output (@out true). */
static size_t native_slice(const struct ctx_shared *sh, bool out)
{
	return out ? rkaccel_native_size(sh->out_rows, sh->out_features, sh->out_bytes) :
		     rkaccel_native_size(sh->rows, sh->in_features, 1);
}

/* The context (owner or duplicate) that runs @slice of @owner's batch. */
static struct rkaccel_ctx *ctx_of(const struct rkaccel_ctx *owner, uint32_t slice)
{
	uint32_t k = slice % (owner->ncopies + 1);

	return k ? owner->copies[k - 1] : (struct rkaccel_ctx *)owner;
}

/* NPU addresses of @c's own buffers and the shared weights. */
static void ctx_addrs(const struct rkaccel_ctx *c, uint64_t addr[RKACCEL_BUF_COUNT])
{
	uint32_t i;

	for (i = 0; i < RKACCEL_BUF_COUNT; i++)
		addr[i] = c->bo[i].addr;
	addr[RKACCEL_BUF_WEIGHTS] = c->sh->weights.addr;
}

static void ctx_drop_images(struct rkaccel_ctx *c)
{
	bo_free(c->fd, &c->xregcmd);
	free(c->xtasks);
	c->xtasks = NULL;
	c->nimg = 0;
}

static size_t regcmd_stride(const struct rkaccel_ctx *c)
{
	return (rkaccel_program_size(c->sh->prog, RKACCEL_BUF_REGCMD) + 63) / 64 * 64;
}

/*
 * Emit on context @c (index @k among @owner's contexts) one image of
 * register commands per slice it runs, with the bound memory's addresses.
 */
static int ctx_images(struct rkaccel_ctx *owner, struct rkaccel_ctx *c, uint32_t k)
{
	uint32_t n = owner->ncopies + 1, cnt = (owner->batch - k + n - 1) / n, j, t, b;
	struct rkaccel_program *prog = c->sh->prog;
	size_t stride = regcmd_stride(c);
	struct rkaccel_pc_start *starts;
	struct drm_rkaccel_task *tasks;
	uint64_t addr[RKACCEL_BUF_COUNT];
	int ret = 0;

	if (c->xregcmd.map_len < stride * cnt) {
		struct ctx_bo nb;

		ret = bo_new(c->fd, stride * cnt, 0, &nb);
		if (ret)
			return ret;
		bo_free(c->fd, &c->xregcmd);
		c->xregcmd = nb;
	}
	tasks = realloc(c->xtasks, (size_t)cnt * c->ntasks * sizeof(*tasks));
	starts = calloc(c->ntasks, sizeof(*starts));
	if (tasks)
		c->xtasks = tasks;
	if (!tasks || !starts) {
		free(starts);
		return -ENOMEM;
	}
	for (j = 0; !ret && j < cnt; j++) {
		uint32_t slice = k + j * n;

		ctx_addrs(c, addr);
		for (b = 0; b < 2; b++) {
			struct rkaccel_mem *m = owner->io_mem[b];
			enum rkaccel_buffer which = b ? RKACCEL_BUF_OUTPUT : RKACCEL_BUF_INPUT;

			if (m)
				addr[which] = m->npu_addr + owner->io_off[b] +
					      slice * native_slice(c->sh, b);
		}
		addr[RKACCEL_BUF_REGCMD] = c->xregcmd.addr + j * stride;
		ret = rkaccel_program_emit(prog, addr, (uint8_t *)c->xregcmd.map + j * stride,
					   starts);
		for (t = 0; !ret && t < c->ntasks; t++) {
			struct drm_rkaccel_task *dt = &c->xtasks[j * c->ntasks + t];

			*dt = (struct drm_rkaccel_task){
				.regcmd_addr = starts[t].regcmd_addr,
				.regcmd_count = starts[t].regcmd_count,
				.task_count = starts[t].task_count,
				.flags = starts[t].flags,
			};
		}
	}
	free(starts);
	if (!ret)
		c->nimg = cnt;
	return ret;
}

/* Bring every context's per-slice register commands in line with the binding. */
static int ctx_rebuild_io(struct rkaccel_ctx *owner)
{
	bool bound = owner->io_mem[0] || owner->io_mem[1];
	uint32_t k;
	int ret;

	/* the split's commands are emitted again, for the new addresses, at its next run */
	split_run_free(owner->split);
	owner->split = NULL;

	for (k = 0; k <= owner->ncopies; k++) {
		struct rkaccel_ctx *c = ctx_of(owner, k);

		if (!bound) {
			ctx_drop_images(c);
			continue;
		}
		ret = ctx_images(owner, c, k);
		if (ret)
			return ret;
	}
	return 0;
}

/* Does the memory bound to @ctx hold @batch slices? */
static bool io_fits(const struct rkaccel_ctx *ctx, uint32_t batch)
{
	uint32_t b;

	for (b = 0; b < 2; b++) {
		const struct rkaccel_mem *m = ctx->io_mem[b];

		if (m && (ctx->io_off[b] > m->size ||
			  (m->size - ctx->io_off[b]) / native_slice(ctx->sh, b) < batch))
			return false;
	}
	return true;
}

static uint32_t copies_for(const struct rkaccel_ctx *ctx, uint32_t batch)
{
	uint32_t cores = ctx->sh->num_cores;

	if (cores > CTX_MAX_COPIES + 1)
		cores = CTX_MAX_COPIES + 1;
	return (batch < cores ? batch : cores) - 1;
}

static int ctx_set_batch(struct rkaccel_ctx *ctx, uint32_t batch)
{
	uint32_t old_batch, old_copies;
	struct slice_info *slices;
	int ret;

	if (!ctx || batch < 1 || batch > RKACCEL_CTX_MAX_BATCH || !io_fits(ctx, batch))
		return -EINVAL;
	slices = calloc(batch, sizeof(*slices));
	if (!slices)
		return -ENOMEM;
	old_batch = ctx->batch;
	old_copies = ctx->ncopies;
	ret = ctx_set_mask(ctx, batch > 1 ? 0 : ctx->core_mask);
	if (!ret)
		ret = ctx_set_copies(ctx, copies_for(ctx, batch));
	if (!ret) {
		ctx->batch = batch;
		ret = ctx_rebuild_io(ctx);
	}
	if (ret) {
		/* Back to the previous batch; its images need no new memory. */
		free(slices);
		ctx->batch = old_batch;
		ctx_set_copies(ctx, old_copies);
		ctx_rebuild_io(ctx);
		ctx_set_mask(ctx, old_batch > 1 ? 0 : ctx->core_mask);
		return ret;
	}
	free(ctx->slices);
	ctx->slices = slices;
	ctx->have_info = false;
	return 0;
}

int rkaccel_ctx_set_batch(struct rkaccel_ctx *ctx, uint32_t batch)
{
	int ret = ctx ? ctx_enter(ctx) : -EINVAL;

	return ret ? ret : ctx_leave(ctx, ctx_set_batch(ctx, batch));
}

int rkaccel_ctx_set_core_mask(struct rkaccel_ctx *ctx, uint32_t mask)
{
	int ret;

	if (!ctx)
		return -EINVAL;
	ret = ctx_enter(ctx);
	if (ret)
		return ret;
	if (ctx->batch > 1 || (mask & ~ctx->sh->avail_mask))
		return ctx_leave(ctx, -EINVAL);
	ret = ctx_set_mask(ctx, mask);
	if (!ret)
		ctx->core_mask = mask;
	return ctx_leave(ctx, ret);
}

static int io_index(enum rkaccel_buffer which)
{
	return which == RKACCEL_BUF_INPUT ? 0 : which == RKACCEL_BUF_OUTPUT ? 1 : -1;
}

static int ctx_set_io_mem(struct rkaccel_ctx *ctx, enum rkaccel_buffer which,
			  struct rkaccel_mem *mem, size_t offset)
{
	struct rkaccel_mem *old_mem;
	size_t old_off;
	int b = io_index(which), ret;

	if (!ctx || b < 0)
		return -EINVAL;
	if (mem && (mem->dev_fd != ctx->fd || offset % RKACCEL_MEM_ALIGN ||
		    offset > mem->size ||
		    (mem->size - offset) / native_slice(ctx->sh, b) < ctx->batch ||
		    mem->npu_addr + mem->size > (1ull << 32)))
		return -EINVAL;
	old_mem = ctx->io_mem[b];
	old_off = ctx->io_off[b];
	ctx->io_mem[b] = mem;
	ctx->io_off[b] = mem ? offset : 0;
	ret = ctx_rebuild_io(ctx);
	if (ret) {
		ctx->io_mem[b] = old_mem;
		ctx->io_off[b] = old_off;
		ctx_rebuild_io(ctx);
	}
	return ret;
}

int rkaccel_ctx_set_io_mem(struct rkaccel_ctx *ctx, enum rkaccel_buffer which,
			   struct rkaccel_mem *mem, size_t offset)
{
	int ret = ctx ? ctx_enter(ctx) : -EINVAL;

	return ret ? ret : ctx_leave(ctx, ctx_set_io_mem(ctx, which, mem, offset));
}

void *rkaccel_ctx_io_ptr(const struct rkaccel_ctx *ctx, enum rkaccel_buffer which,
			 uint32_t slice)
{
	int b = io_index(which);

	if (!ctx || b < 0 || slice >= ctx->batch)
		return NULL;
	if (ctx->io_mem[b])
		return (uint8_t *)ctx->io_mem[b]->virt + ctx->io_off[b] +
		       slice * native_slice(ctx->sh, b);
	return ctx_of(ctx, slice)->bo[which].map;
}

int rkaccel_ctx_query_tensor(const struct rkaccel_ctx *ctx, enum rkaccel_buffer which,
			     struct rkaccel_tensor_attr *attr)
{
	const struct ctx_shared *sh;
	int b = io_index(which);

	if (!ctx || !attr || b < 0)
		return -EINVAL;
	sh = ctx->sh;
	memset(attr, 0, sizeof(*attr));
	attr->n_dims = 3;
	attr->dims[0] = ctx->batch;
	attr->dims[1] = b ? sh->out_rows : sh->rows;
	attr->dims[2] = b ? sh->out_features : sh->in_features;
	attr->type = b && sh->out_bytes == 4 ? RKACCEL_TENSOR_INT32 : RKACCEL_TENSOR_INT8;
	attr->scale = b ? sh->out_scale : sh->in_scale;
	attr->zero_point = b ? sh->out_zp : sh->in_zp;
	attr->size = (size_t)ctx->batch * attr->dims[1] * attr->dims[2] * (b ? sh->out_bytes : 1);
	attr->native_size = ctx->batch * native_slice(sh, b);
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
	return (size_t)sh->out_rows * sh->out_features * sh->out_bytes;
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

int ctx_dev_fd(const struct rkaccel_ctx *ctx)
{
	return ctx->fd;
}

uint32_t ctx_core_mask(const struct rkaccel_ctx *ctx)
{
	return ctx->core_mask;
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
int fence_status(int fd, uint32_t syncobj)
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

/* Add @handle to the job's BO list, merging flags with an entry already there. */
static void bos_add(struct drm_rkaccel_submit_bo *bos, uint32_t *n, uint32_t handle,
		    uint32_t flags)
{
	uint32_t i;

	if (!handle)
		return;
	for (i = 0; i < *n; i++) {
		if (bos[i].handle == handle) {
			bos[i].flags |= flags;
			return;
		}
	}
	bos[*n].handle = handle;
	bos[(*n)++].flags = flags;
}

/*
 * Queue slice @slice of @owner's batch on the context that runs it, after
 * syncobj @in_sync when not 0; its fence lands in that context's syncobj.
 * Bound memory is listed for reading only: slices write disjoint parts of
 * it at once, and its users order themselves with fences.
 */
static int ctx_submit(struct rkaccel_ctx *owner, uint32_t slice, uint32_t in_sync)
{
	struct rkaccel_ctx *c = ctx_of(owner, slice);
	struct drm_rkaccel_submit_bo bos[RKACCEL_BUF_COUNT + 3];
	struct drm_rkaccel_sync sync = { .handle = in_sync };
	struct drm_rkaccel_submit s = { 0 };
	struct drm_rkaccel_task *tasks = c->tasks;
	uint32_t i, n = 0;

	for (i = 0; i < RKACCEL_BUF_COUNT; i++)
		bos_add(bos, &n, rkaccel_ctx_bo_handle(c, i),
			i == RKACCEL_BUF_OUTPUT || i == RKACCEL_BUF_INTERNAL ?
			DRM_RKACCEL_SUBMIT_BO_WRITE : 0);
	if (c->nimg) {
		tasks = &c->xtasks[(slice / (owner->ncopies + 1)) * c->ntasks];
		bos_add(bos, &n, c->xregcmd.handle, 0);
		for (i = 0; i < 2; i++)
			if (owner->io_mem[i])
				bos_add(bos, &n, owner->io_mem[i]->handle, 0);
	}
	s.ctx = c->kctx;
	s.tasks = (uint64_t)(uintptr_t)tasks;
	s.task_count = c->ntasks;
	s.task_stride = sizeof(*tasks);
	s.bos = (uint64_t)(uintptr_t)bos;
	s.bo_count = n;
	s.bo_stride = sizeof(*bos);
	if (in_sync) {
		s.in_syncs = (uint64_t)(uintptr_t)&sync;
		s.in_sync_count = 1;
		s.sync_stride = sizeof(sync);
	}
	s.out_sync = c->syncobj;
	return xioctl(c->fd, DRM_IOCTL_RKACCEL_SUBMIT, &s);
}

/* --- one inference over several cores ------------------------------------------ */

/* Batch 1 with a mask of two cores or more: the split program runs it. */
static bool ctx_split(const struct rkaccel_ctx *c)
{
	return c->batch == 1 && c->sh->model &&
	       __builtin_popcount(c->core_mask & c->sh->avail_mask) >= 2;
}

/* The program over @n cores and its weight BO, compiled on first use. */
static int shared_split(struct ctx_shared *sh, uint32_t n, struct rkaccel_program **prog,
			uint64_t *wt_addr)
{
	const struct model_io *io;
	const uint32_t *cat;
	int ret = 0;

	if (n > SPLIT_MAX_PARTS)
		n = SPLIT_MAX_PARTS;
	pthread_mutex_lock(&sh->split_lock);
	if (!sh->split_prog[n]) {
		io = model_links(sh->model, &cat);
		ret = program_compile_split(rkaccel_model_desc(sh->model), io, cat, &sh->info, n,
					    sh->boundary_ns, &sh->split_prog[n]);
		if (!ret)
			ret = shared_weights(sh, sh->split_prog[n], &sh->split_wt[n]);
		if (ret) {
			bo_free(sh->fd, &sh->split_wt[n]);
			rkaccel_program_free(sh->split_prog[n]);
			sh->split_prog[n] = NULL;
		}
	}
	*prog = sh->split_prog[n];
	*wt_addr = sh->split_wt[n].addr;
	pthread_mutex_unlock(&sh->split_lock);
	return ret;
}

/* NPU address of the input (@b 0) or output (1): the bound memory's or the BO's. */
static uint64_t io_addr(const struct rkaccel_ctx *c, int b)
{
	enum rkaccel_buffer which = b ? RKACCEL_BUF_OUTPUT : RKACCEL_BUF_INPUT;

	return c->io_mem[b] ? c->io_mem[b]->npu_addr + c->io_off[b] : c->bo[which].addr;
}

static void split_io_of(const struct rkaccel_ctx *c, struct split_io *io)
{
	uint32_t n = c->core_mask & c->sh->avail_mask, k = __builtin_popcount(n);

	k = k > SPLIT_MAX_PARTS ? SPLIT_MAX_PARTS : k;
	io->count = 3;
	io->handle[0] = c->io_mem[0] ? c->io_mem[0]->handle : c->bo[RKACCEL_BUF_INPUT].handle;
	io->handle[1] = c->io_mem[1] ? c->io_mem[1]->handle : c->bo[RKACCEL_BUF_OUTPUT].handle;
	io->handle[2] = c->sh->split_wt[k].handle;
}

/* The split run of @c's mask, its commands emitted for @c's input and output. */
static int ctx_split_ready(struct rkaccel_ctx *c)
{
	uint32_t mask = c->core_mask & c->sh->avail_mask;
	struct rkaccel_program *prog;
	uint64_t wt;
	int ret;

	if (c->split && c->split_mask == mask)
		return 0;
	split_run_free(c->split);
	c->split = NULL;
	ret = shared_split(c->sh, __builtin_popcount(mask), &prog, &wt);
	if (!ret)
		ret = split_run_new(c->fd, prog, wt, mask, &c->split);
	if (!ret)
		ret = split_run_emit(c->split, io_addr(c, 0), io_addr(c, 1));
	if (ret) {
		split_run_free(c->split);
		c->split = NULL;
		return ret;
	}
	c->split_mask = mask;
	return 0;
}

static int split_exec(struct rkaccel_ctx *c)
{
	struct split_io io;
	int ret = ctx_split_ready(c);

	if (ret)
		return ret;
	split_io_of(c, &io);
	ret = split_run_submit(c->split, &io, 0, NULL);
	return ret ? ret : split_run_wait(c->split);
}

/* Run @slice of @owner's batch and wait for it. */
static int ctx_exec(struct rkaccel_ctx *owner, uint32_t slice)
{
	struct rkaccel_ctx *c = ctx_of(owner, slice);
	int ret;

	if (ctx_split(owner))
		return split_exec(owner);
	ret = ctx_submit(owner, slice, 0);

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

/* How rkaccel_ctx_run_u8()'s bytes become the model's int8. */
struct u8_quant {
	float scale;
	int32_t zero_point;
};

/* What one thread does: slices @first, @first + @step, ... on context @c. */
struct run_job {
	struct rkaccel_ctx *owner, *c;
	const uint8_t *in;		/* NULL: native, no conversion */
	const struct u8_quant *u8;	/* NULL: @in holds int8 */
	uint8_t *out;
	uint32_t first, step;
	int ret;
};

static int run_slice(struct run_job *j, uint32_t i)
{
	struct ctx_shared *sh = j->c->sh;
	void *nin = rkaccel_ctx_io_ptr(j->owner, RKACCEL_BUF_INPUT, i);
	void *nout = rkaccel_ctx_io_ptr(j->owner, RKACCEL_BUF_OUTPUT, i);
	struct slice_info *si = &j->owner->slices[i];
	uint64_t t0;
	int ret;

	if (j->u8)
		ret = rkaccel_u8_to_native(j->in + i * slice_in_size(sh), sh->rows,
					   sh->in_features, j->u8->scale, j->u8->zero_point, nin,
					   native_slice(sh, false));
	else if (j->in)
		ret = rkaccel_to_native((const int8_t *)(j->in + i * slice_in_size(sh)),
					sh->rows, sh->in_features, nin, native_slice(sh, false));
	else
		ret = 0;
	if (ret)
		return ret;
	t0 = now_ns();
	ret = ctx_exec(j->owner, i);
	si->ns = now_ns() - t0;
	if (!ret && ctx_split(j->owner))
		si->core = (uint32_t)__builtin_ctz(j->owner->core_mask & sh->avail_mask);
	else if (!ret)
		ret = ctx_last_core(j->c, &si->core);
	if (ret || !j->in)
		return ret;
	return rkaccel_from_native(nout, native_slice(sh, true), sh->out_rows, sh->out_features,
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

static void *pool_thread(void *p)
{
	struct pool_arg *a = p;
	struct ctx_pool *pool = a->pool;

	pthread_mutex_lock(&pool->lock);
	for (;;) {
		while (!pool->quit && pool->gen == a->seen)
			pthread_cond_wait(&pool->go, &pool->lock);
		if (pool->quit)
			break;
		a->seen = pool->gen;
		if (a->k >= pool->nwork)
			continue;
		pthread_mutex_unlock(&pool->lock);
		run_thread(&pool->jobs[a->k + 1]);
		pthread_mutex_lock(&pool->lock);
		if (--pool->busy == 0)
			pthread_cond_signal(&pool->done);
	}
	pthread_mutex_unlock(&pool->lock);
	return NULL;
}

/* Start threads up to @n; called with the pool's lock held. */
static int pool_grow(struct ctx_pool *pool, uint32_t n)
{
	while (pool->nthreads < n) {
		struct pool_arg *a = &pool->arg[pool->nthreads];

		*a = (struct pool_arg){ .pool = pool, .k = pool->nthreads, .seen = pool->gen };
		if (pthread_create(&pool->thread[pool->nthreads], NULL, pool_thread, a))
			return -EAGAIN;
		pool->nthreads++;
	}
	return 0;
}

static void pool_stop(struct ctx_pool *pool)
{
	uint32_t i;

	pthread_mutex_lock(&pool->lock);
	pool->quit = true;
	pthread_cond_broadcast(&pool->go);
	pthread_mutex_unlock(&pool->lock);
	for (i = 0; i < pool->nthreads; i++)
		pthread_join(pool->thread[i], NULL);
	pthread_cond_destroy(&pool->go);
	pthread_cond_destroy(&pool->done);
	pthread_mutex_destroy(&pool->lock);
}

/* Hand jobs 1..n-1 to the pool's threads, run job 0 here, wait for all. */
static int run_pool(struct ctx_pool *pool, struct run_job *jobs, uint32_t n)
{
	uint32_t i;
	int ret;

	pthread_mutex_lock(&pool->lock);
	ret = pool_grow(pool, n - 1);
	if (!ret) {
		pool->jobs = jobs;
		pool->nwork = n - 1;
		pool->busy = n - 1;
		pool->gen++;
		pthread_cond_broadcast(&pool->go);
	}
	pthread_mutex_unlock(&pool->lock);
	if (ret)
		return ret;
	run_thread(&jobs[0]);
	pthread_mutex_lock(&pool->lock);
	while (pool->busy)
		pthread_cond_wait(&pool->done, &pool->lock);
	pthread_mutex_unlock(&pool->lock);
	for (i = 0; !ret && i < n; i++)
		ret = jobs[i].ret;
	return ret;
}

/* What rkaccel_ctx_run_info() reports of the run that just ended. */
static void run_info_fill(struct rkaccel_ctx *ctx)
{
	struct rkaccel_run_info *ri = &ctx->info;
	uint64_t after[RKACCEL_MAX_CORES];

	memset(ri, 0, sizeof(*ri));
	ri->jobs = ctx->batch;
	if (ctx_split(ctx) && ctx->split)
		split_run_info(ctx->split, ri);
	ri->cores = fdinfo_core_ns(ctx->fd, after, RKACCEL_MAX_CORES);
	for (uint32_t k = 0; k < ri->cores; k++) {
		ri->core_ns[k] = after[k] - ctx->run_before[k];
		ri->device_ns += ri->core_ns[k];
	}
}

static int run_batch(struct rkaccel_ctx *ctx, const void *in, const struct u8_quant *u8,
		     void *out)
{
	struct run_job jobs[CTX_MAX_COPIES + 1];
	uint32_t i, n = ctx->ncopies + 1;
	int ret;

	memset(jobs, 0, sizeof(jobs));
	for (i = 0; i < n; i++) {
		jobs[i] = (struct run_job) {
			.owner = ctx, .c = ctx_of(ctx, i),
			.in = in, .u8 = u8, .out = out, .first = i, .step = n,
		};
	}
	ctx->have_info = false;
	fdinfo_core_ns(ctx->fd, ctx->run_before, RKACCEL_MAX_CORES);
	ret = run_pool(&ctx->pool, jobs, n);
	if (!ret)
		run_info_fill(ctx);
	ctx->have_info = !ret;
	return ret;
}

/* rkaccel_ctx_run() and rkaccel_ctx_run_u8(): row-major @in into row-major @out. */
static int run_rowmajor(struct rkaccel_ctx *ctx, const void *in, size_t in_len,
			const struct u8_quant *u8, void *out, size_t out_len)
{
	int ret;

	if (!ctx || !in || !out)
		return -EINVAL;
	ret = ctx_enter(ctx);
	if (ret)
		return ret;
	if (in_len != rkaccel_ctx_input_size(ctx) || out_len != rkaccel_ctx_output_size(ctx))
		return ctx_leave(ctx, -EINVAL);
	return ctx_leave(ctx, run_batch(ctx, in, u8, out));
}

int rkaccel_ctx_run(struct rkaccel_ctx *ctx, const void *in, size_t in_len, void *out,
		    size_t out_len)
{
	return run_rowmajor(ctx, in, in_len, NULL, out, out_len);
}

int rkaccel_ctx_run_u8(struct rkaccel_ctx *ctx, const uint8_t *in, size_t in_len, float scale,
		       int32_t zero_point, void *out, size_t out_len)
{
	struct u8_quant u8 = { scale, zero_point };

	if (!(scale > 0.0f))
		return -EINVAL;
	return run_rowmajor(ctx, in, in_len, &u8, out, out_len);
}

/* Native runs need a buffer per slice: bound memory or a context per slice. */
static bool native_ok(const struct rkaccel_ctx *ctx)
{
	return ctx->batch <= ctx->ncopies + 1 || (ctx->io_mem[0] && ctx->io_mem[1]);
}

int rkaccel_ctx_run_native(struct rkaccel_ctx *ctx)
{
	int ret;

	if (!ctx)
		return -EINVAL;
	ret = ctx_enter(ctx);
	if (ret)
		return ret;
	return ctx_leave(ctx, native_ok(ctx) ? run_batch(ctx, NULL, NULL, NULL) : -EINVAL);
}

/* A new sync_file fd merging @a and @b (both kept), or -errno. */
static int fence_merge(int a, int b)
{
	struct sync_merge_data md = { .fd2 = b };

	strcpy(md.name, "rkaccel-batch");
	return ioctl(a, SYNC_IOC_MERGE, &md) ? -errno : (int)md.fence;
}

/* SYNC_IOC_FILE_INFO status: 1 signalled, 0 active, < 0 signalled with an error. */
static int sync_file_status(int fd)
{
	struct sync_file_info info;

	memset(&info, 0, sizeof(info));
	return ioctl(fd, SYNC_IOC_FILE_INFO, &info) ? -errno : info.status;
}

/*
 * One fence for the slices' fences @sfd[@n] (closed here), without ever
 * waiting. A merge drops fences that have already signalled, and their
 * errors with them; so after merging every slice's own fence is looked at,
 * and when one has already failed its error is returned instead of a fence
 * (the other slices' jobs still run). A slice that fails later is a
 * pending member of the merged fence, whose error it then carries.
 */
static int fences_join(int *sfd, uint32_t n)
{
	int merged = dup(sfd[0]), next, st;
	uint32_t i;

	if (merged < 0)
		merged = -errno;
	for (i = 1; merged >= 0 && i < n; i++) {
		next = fence_merge(merged, sfd[i]);
		close(merged);
		merged = next;
	}
	for (i = 0; merged >= 0 && i < n; i++) {
		st = sync_file_status(sfd[i]);
		if (st < 0) {
			close(merged);
			merged = st;
		}
	}
	for (i = 0; i < n; i++)
		close(sfd[i]);
	return merged;
}

/*
 * The split's jobs after @in_fence_fd; the fence of the last job on each
 * core, merged, goes to the caller and into the context's syncobj.
 */
static int split_async(struct rkaccel_ctx *ctx, int in_fence_fd, int *out_fence_fd)
{
	uint32_t in_sync = 0;
	struct split_io io;
	int ret = ctx_split_ready(ctx), fence = -1;

	if (ret)
		return ret;
	if (in_fence_fd >= 0) {
		if (drmSyncobjCreate(ctx->fd, 0, &in_sync))
			return -errno;
		if (drmSyncobjImportSyncFile(ctx->fd, in_sync, in_fence_fd))
			ret = -errno;
	}
	ctx->have_info = false;
	split_io_of(ctx, &io);
	if (!ret)
		ret = split_run_submit(ctx->split, &io, in_sync, &fence);
	if (!ret && drmSyncobjImportSyncFile(ctx->fd, ctx->syncobj, fence))
		ret = -errno;
	if (in_sync)
		drmSyncobjDestroy(ctx->fd, in_sync);
	if (ret) {
		if (fence >= 0)
			close(fence);
		return ret;
	}
	*out_fence_fd = fence;
	return 0;
}

static int ctx_run_async(struct rkaccel_ctx *ctx, int in_fence_fd, int *out_fence_fd)
{
	int sfd[RKACCEL_CTX_MAX_BATCH], merged, ret = 0;
	uint32_t in_sync = 0, i, n = 0;

	if (!native_ok(ctx))
		return -EINVAL;
	if (ctx_split(ctx))
		return split_async(ctx, in_fence_fd, out_fence_fd);
	if (in_fence_fd >= 0) {
		if (drmSyncobjCreate(ctx->fd, 0, &in_sync))
			return -errno;
		if (drmSyncobjImportSyncFile(ctx->fd, in_sync, in_fence_fd)) {
			ret = -errno;
			drmSyncobjDestroy(ctx->fd, in_sync);
			return ret;
		}
	}
	ctx->have_info = false;
	for (i = 0; i < ctx->batch; i++) {
		struct rkaccel_ctx *c = ctx_of(ctx, i);

		ret = ctx_submit(ctx, i, in_sync);
		if (ret)
			break;
		if (drmSyncobjExportSyncFile(c->fd, c->syncobj, &sfd[n])) {
			ret = -errno;
			break;
		}
		n++;
	}
	if (in_sync)
		drmSyncobjDestroy(ctx->fd, in_sync);
	if (ret) {
		while (n)
			close(sfd[--n]);
		return ret;
	}
	merged = fences_join(sfd, n);
	if (merged < 0)
		return merged;
	*out_fence_fd = merged;
	return 0;
}

int rkaccel_ctx_run_async(struct rkaccel_ctx *ctx, int in_fence_fd, int *out_fence_fd)
{
	int ret;

	if (!ctx || !out_fence_fd || in_fence_fd < -1)
		return -EINVAL;
	ret = ctx_enter(ctx);
	if (ret)
		return ret;
	return ctx_leave(ctx, ctx_run_async(ctx, in_fence_fd, out_fence_fd));
}

int rkaccel_ctx_wait(struct rkaccel_ctx *ctx, int64_t timeout_ns)
{
	uint32_t handles[CTX_MAX_COPIES + 1], i;
	int64_t abs_ns;
	int ret;

	if (!ctx)
		return -EINVAL;
	ret = ctx_enter(ctx);
	if (ret)
		return ret;
	for (i = 0; i <= ctx->ncopies; i++)
		handles[i] = ctx_of(ctx, i)->syncobj;
	abs_ns = timeout_ns < 0 || (uint64_t)timeout_ns > INT64_MAX - now_ns() ? INT64_MAX :
		 (int64_t)(now_ns() + (uint64_t)timeout_ns);
	/* Each syncobj holds its context's last job, which ends after the others. */
	if (drmSyncobjWait(ctx->fd, handles, ctx->ncopies + 1, abs_ns,
			   DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL, NULL))
		ret = errno == ETIME || errno == ETIMEDOUT ? -ETIME : -errno;
	return ctx_leave(ctx, ret);
}

int rkaccel_ctx_run_info(const struct rkaccel_ctx *ctx, struct rkaccel_run_info *info)
{
	if (!ctx || !info)
		return -EINVAL;
	if (!ctx->have_info)
		return -ENODATA;
	*info = ctx->info;
	return 0;
}

/* One job on one core: its device time, from fdinfo, and one boundary. */
static int single_latency(struct rkaccel_ctx *ctx, uint64_t boundary_ns, uint32_t time_scale,
			  uint64_t *ns)
{
	uint64_t before[RKACCEL_MAX_CORES], after[RKACCEL_MAX_CORES];
	uint32_t core = 0;
	int ret;

	fdinfo_core_ns(ctx->fd, before, RKACCEL_MAX_CORES);
	ret = ctx_exec(ctx, 0);
	if (!ret)
		ret = ctx_last_core(ctx, &core);
	fdinfo_core_ns(ctx->fd, after, RKACCEL_MAX_CORES);
	if (!ret && core >= RKACCEL_MAX_CORES)
		ret = -EIO;
	if (!ret)
		*ns = boundary_ns + (after[core] - before[core]) / (time_scale ? time_scale : 1);
	return ret;
}

static int ctx_latency(struct rkaccel_ctx *ctx, uint64_t boundary_ns, uint32_t time_scale,
		       uint64_t *ns)
{
	struct split_io io;
	int ret;

	if (ctx->batch != 1)
		return -EINVAL;
	if (!ctx_split(ctx))
		return single_latency(ctx, boundary_ns, time_scale, ns);
	ret = ctx_split_ready(ctx);
	if (ret)
		return ret;
	split_io_of(ctx, &io);
	return split_run_latency(ctx->split, &io, boundary_ns, time_scale, ns);
}

int rkaccel_ctx_latency(struct rkaccel_ctx *ctx, uint64_t boundary_ns, uint32_t time_scale,
			uint64_t *ns)
{
	int ret;

	if (!ctx || !ns)
		return -EINVAL;
	ret = ctx_enter(ctx);
	if (ret)
		return ret;
	return ctx_leave(ctx, ctx_latency(ctx, boundary_ns, time_scale, ns));
}

/* Latency of @model on the cores of @mask, its split planned for @boundary_ns. */
static int mask_latency(struct rkaccel_device *dev, const struct rkaccel_model *model,
			uint32_t mask, uint64_t boundary_ns, uint32_t time_scale, uint64_t *ns)
{
	struct rkaccel_ctx *ctx;
	int ret = ctx_create(dev, model, mask, 0, boundary_ns ? boundary_ns : 1, &ctx);

	if (ret)
		return ret;
	ret = rkaccel_ctx_latency(ctx, boundary_ns, time_scale, ns);
	rkaccel_ctx_destroy(ctx);
	return ret;
}

int rkaccel_model_multicore_scale(struct rkaccel_device *dev, const struct rkaccel_model *model,
				  uint32_t core_mask, uint64_t boundary_ns, uint32_t time_scale,
				  double *scale, uint64_t *one_ns, uint64_t *all_ns)
{
	uint64_t one = 0, all = 0;
	int ret;

	if (!dev || !model || !scale || !core_mask)
		return -EINVAL;
	ret = mask_latency(dev, model, core_mask & -core_mask, boundary_ns, time_scale, &one);
	if (!ret)
		ret = mask_latency(dev, model, core_mask, boundary_ns, time_scale, &all);
	if (ret)
		return ret;
	*scale = all ? (double)one / (double)all : 0;
	if (one_ns)
		*one_ns = one;
	if (all_ns)
		*all_ns = all;
	return 0;
}

/* --- time per layer --------------------------------------------------------------- */

/* Each job of @prog (one a layer) alone on @c's core, on its input BO: ns per layer. */
static int ctx_layer_times(struct rkaccel_ctx *c, const struct rkaccel_program *prog,
			   uint32_t core, uint64_t *layer_ns, uint32_t layers)
{
	const struct split_jobs *sj = program_jobs(prog);
	struct split_io io = { .count = 3 };
	struct split_run *run = NULL;
	uint64_t *ns = calloc(sj->num_jobs ? sj->num_jobs : 1, sizeof(*ns));
	int ret = ns ? 0 : -ENOMEM;

	/* the same tiling as the context's program: its weight BO serves */
	if (!ret && (rkaccel_program_size(prog, RKACCEL_BUF_WEIGHTS) !=
		     rkaccel_program_size(c->sh->prog, RKACCEL_BUF_WEIGHTS) ||
		     memcmp(rkaccel_program_weights(prog), rkaccel_program_weights(c->sh->prog),
			    rkaccel_program_size(prog, RKACCEL_BUF_WEIGHTS))))
		ret = -EPROTO;
	if (!ret)
		ret = split_run_new(c->fd, prog, c->sh->weights.addr, 1u << core, &run);
	if (!ret)
		ret = split_run_emit(run, io_addr(c, 0), io_addr(c, 1));
	io.handle[0] = c->bo[RKACCEL_BUF_INPUT].handle;
	io.handle[1] = c->bo[RKACCEL_BUF_OUTPUT].handle;
	io.handle[2] = c->sh->weights.handle;
	if (!ret)
		ret = split_run_job_times(run, &io, ns);
	for (uint32_t j = 0; !ret && j < sj->num_jobs; j++) {
		uint32_t l = program_job_layer(prog, j);

		if (l < layers)
			layer_ns[l] = ns[j];
	}
	split_run_free(run);
	free(ns);
	return ret;
}

int rkaccel_model_layer_times(struct rkaccel_device *dev, const struct rkaccel_model *model,
			      uint32_t core, uint64_t *ns, uint32_t max)
{
	const struct rkaccel_model_desc *d;
	struct rkaccel_program *prog = NULL;
	struct rkaccel_ctx *ctx = NULL;
	const struct model_io *io;
	const uint32_t *cat;
	uint64_t *all;
	int ret;

	if (!dev || !model || (max && !ns) || core >= 32)
		return -EINVAL;
	d = rkaccel_model_desc(model);
	all = calloc(d->num_layers, sizeof(*all));
	if (!all)
		return -ENOMEM;
	ret = ctx_create(dev, model, 1u << core, 0, 0, &ctx);
	if (!ret && !(ctx->sh->avail_mask & (1u << core)))
		ret = -EINVAL;
	io = model_links(model, &cat);
	if (!ret)
		ret = program_compile_layer_jobs(d, io, cat, &ctx->sh->info, &prog);
	if (!ret)
		ret = ctx_layer_times(ctx, prog, core, all, d->num_layers);
	if (!ret) {
		memcpy(ns, all, (max < d->num_layers ? max : d->num_layers) * sizeof(*ns));
		ret = (int)d->num_layers;
	}
	rkaccel_program_free(prog);
	rkaccel_ctx_destroy(ctx);
	free(all);
	return ret;
}

/* --- a layer dump ---------------------------------------------------------------- */

int rkaccel_ctx_read_tensor(struct rkaccel_ctx *ctx, uint32_t slice, uint32_t t, void *dst,
			    size_t len)
{
	const void *maps[RKACCEL_BUF_COUNT] = { 0 };
	size_t sizes[RKACCEL_BUF_COUNT] = { 0 };
	const struct rkaccel_ctx *c;
	int ret;

	if (!ctx || !dst || slice >= ctx->batch)
		return -EINVAL;
	if (!ctx->sh->keep_tensors)
		return -ENOTSUP;
	/* a context runs its slices in turn: the activations are its last one's */
	if (slice + ctx->ncopies + 1 < ctx->batch)
		return -ESTALE;
	ret = ctx_enter(ctx);
	if (ret)
		return ret;
	c = ctx_of(ctx, slice);
	maps[RKACCEL_BUF_INPUT] = rkaccel_ctx_io_ptr(ctx, RKACCEL_BUF_INPUT, slice);
	sizes[RKACCEL_BUF_INPUT] = native_slice(ctx->sh, false);
	maps[RKACCEL_BUF_OUTPUT] = rkaccel_ctx_io_ptr(ctx, RKACCEL_BUF_OUTPUT, slice);
	sizes[RKACCEL_BUF_OUTPUT] = native_slice(ctx->sh, true);
	maps[RKACCEL_BUF_INTERNAL] = c->bo[RKACCEL_BUF_INTERNAL].map;
	sizes[RKACCEL_BUF_INTERNAL] = c->bo[RKACCEL_BUF_INTERNAL].map_len;
	return ctx_leave(ctx, program_read_tensor(ctx->sh->prog, t, maps, sizes, dst, len));
}
