/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Running a compiled model on the device for the selftests; the CPU
 * reference the simulator must match bit for bit is quant_ref.h.
 */
#ifndef RKACCEL_CONV_RUN_H
#define RKACCEL_CONV_RUN_H

#include "quant_ref.h"
#include "rkaccel_test.h"

#define CONV_MAX_STARTS	16

/*
 * A small image network in rkaccel_model_from_text()'s form: a residual
 * add (a layer reading an earlier tensor) and an output of several pixels.
 */
#define RKT_RESIDUAL_NET	\
	"input 10x9x5\n"	\
	"conv 3x3 s2 c16 pc\n"	\
	"dw 3x3 s1 pad 1\n"	\
	"pw c16 linear\n"	\
	"add 1\n"		\
	"maxpool 2x2 s1\n"

/* One model bound to BOs of one file, ready to submit. */
struct conv_run {
	struct rkaccel_program *prog;
	struct rkt_bo bo[RKACCEL_BUF_COUNT];
	struct rkaccel_pc_start starts[CONV_MAX_STARTS];
	uint32_t nstarts;
	uint32_t rows, in_features, out_features, out_bytes;
	uint32_t out_rows;	/* output pixels: fewer than rows after a stride or pool */
};

static inline int conv_run_prepare(int fd, const struct rkaccel_info *info,
				   const struct rkaccel_model_desc *d, struct conv_run *r)
{
	uint64_t addr[RKACCEL_BUF_COUNT] = { 0 };
	struct rkaccel_tensor_shape out;
	int i, ret;

	memset(r, 0, sizeof(*r));
	ret = rkaccel_program_compile(d, info, &r->prog);
	if (ret)
		return ret;
	r->nstarts = rkaccel_program_starts(r->prog);
	if (r->nstarts > CONV_MAX_STARTS)
		return -E2BIG;
	for (i = 0; i < RKACCEL_BUF_COUNT; i++) {
		size_t size = rkaccel_program_size(r->prog, i);
		uint32_t flags = i == RKACCEL_BUF_WEIGHTS ? DRM_RKACCEL_BO_WEIGHT : 0;

		if (!size)
			continue;
		ret = rkt_bo_new(fd, size, flags, &r->bo[i]);
		if (ret)
			return ret;
		addr[i] = r->bo[i].npu_addr;
	}
	/* a model of pools alone has no weights */
	if (rkaccel_program_size(r->prog, RKACCEL_BUF_WEIGHTS)) {
		memcpy(r->bo[RKACCEL_BUF_WEIGHTS].map, rkaccel_program_weights(r->prog),
		       rkaccel_program_size(r->prog, RKACCEL_BUF_WEIGHTS));
		ret = rkt_bo_seal(fd, r->bo[RKACCEL_BUF_WEIGHTS].handle);
		if (ret)
			return ret;
	}
	r->rows = d->rows;
	ret = rkaccel_model_tensor(d, d->num_layers, &out);
	if (ret)
		return ret;
	r->out_rows = out.height * out.width;
	r->in_features = d->layers[0].in_features;
	r->out_features = d->layers[d->num_layers - 1].out_features;
	r->out_bytes = d->layers[d->num_layers - 1].flags & RKACCEL_LAYER_OUT_INT32 ? 4 : 1;
	return rkaccel_program_emit(r->prog, addr, r->bo[RKACCEL_BUF_REGCMD].map, r->starts);
}

static inline void conv_run_free(int fd, struct conv_run *r)
{
	int i;

	for (i = 0; i < RKACCEL_BUF_COUNT; i++)
		rkt_bo_free(fd, &r->bo[i]);
	rkaccel_program_free(r->prog);
	r->prog = NULL;
}

/* Submit one job on @ctx and wait: 0, or the fence's error / -errno. */
static inline int conv_submit_wait(int fd, uint32_t ctx, const struct drm_rkaccel_task *tasks,
				   uint32_t ntasks, const struct drm_rkaccel_submit_bo *bos,
				   uint32_t nbos)
{
	uint32_t sync;
	int ret, status;

	ret = rkt_syncobj_create(fd, &sync);
	if (ret)
		return ret;
	ret = rkt_submit(fd, ctx, tasks, ntasks, bos, nbos, NULL, 0, sync, 0);
	if (!ret)
		ret = rkt_syncobj_wait(fd, sync, rkt_deadline_ms(20000));
	if (!ret) {
		ret = rkt_syncobj_status(fd, sync, &status);
		if (!ret && status < 0)
			ret = status;
	}
	drmSyncobjDestroy(fd, sync);
	return ret;
}

/* Submit one inference on @ctx and wait: 0, or the fence's error / -errno. */
static inline int conv_run_exec(int fd, uint32_t ctx, struct conv_run *r)
{
	struct drm_rkaccel_task tasks[CONV_MAX_STARTS];
	struct drm_rkaccel_submit_bo bos[RKACCEL_BUF_COUNT];
	uint32_t i, nbos = 0;

	for (i = 0; i < r->nstarts; i++)
		tasks[i] = (struct drm_rkaccel_task){ .regcmd_addr = r->starts[i].regcmd_addr,
						      .regcmd_count = r->starts[i].regcmd_count,
						      .task_count = r->starts[i].task_count,
						      .flags = r->starts[i].flags };
	for (i = 0; i < RKACCEL_BUF_COUNT; i++) {
		if (!r->bo[i].handle)
			continue;
		bos[nbos].handle = r->bo[i].handle;
		bos[nbos++].flags = i == RKACCEL_BUF_OUTPUT || i == RKACCEL_BUF_INTERNAL ?
				    DRM_RKACCEL_SUBMIT_BO_WRITE : 0;
	}
	return conv_submit_wait(fd, ctx, tasks, r->nstarts, bos, nbos);
}

/* Write row-major @in into the input BO. */
static inline int conv_run_input(struct conv_run *r, const int8_t *in)
{
	struct rkt_bo *bo = &r->bo[RKACCEL_BUF_INPUT];

	return rkaccel_to_native(in, r->rows, r->in_features, bo->map, bo->map_len);
}

/* Read the output BO into row-major @out (int8 or int32 elements). */
static inline int conv_run_output(struct conv_run *r, void *out)
{
	struct rkt_bo *bo = &r->bo[RKACCEL_BUF_OUTPUT];

	return rkaccel_from_native(bo->map, bo->map_len, r->out_rows, r->out_features,
				   r->out_bytes, out);
}

/* The regcmd entries of @r's program, and how many (@n). */
static inline uint64_t *conv_run_cmds(const struct conv_run *r, size_t *n)
{
	*n = rkaccel_program_size(r->prog, RKACCEL_BUF_REGCMD) / 8;
	return r->bo[RKACCEL_BUF_REGCMD].map;
}

/* Index of the first entry writing @reg, or -1. */
static inline long conv_run_find_reg(const struct conv_run *r, uint16_t reg)
{
	size_t i, n;
	const uint64_t *e = conv_run_cmds(r, &n);

	for (i = 0; i < n; i++)
		if ((le64toh(e[i]) & 0xffff) == reg && le64toh(e[i]) >> 48)
			return (long)i;
	return -1;
}

/* Entry @idx writes @val instead, to the same target and register. */
static inline void conv_run_set_reg(struct conv_run *r, long idx, uint32_t val)
{
	size_t n;
	uint64_t *e = conv_run_cmds(r, &n);
	uint64_t v = le64toh(e[idx]);

	e[idx] = htole64((v & ~(0xffffffffull << 16)) | ((uint64_t)val << 16));
}

/* Deterministic test data. */
static inline uint32_t rkt_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (uint32_t)((z ^ (z >> 31)) >> 32);
}

static inline void rkt_fill_i8(int8_t *p, size_t n, uint64_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (int8_t)(rkt_rand(&seed) & 0xff);
}

#endif /* RKACCEL_CONV_RUN_H */
