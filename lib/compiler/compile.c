// SPDX-License-Identifier: MIT
/*
 * The regcmd compiler: each layer of a model becomes hardware tasks
 * (convolutions on CNA+CORE+DPU, compile_conv.c; pooling on the PPU,
 * compile_pool.c), tiled so that every task's feature map and weights
 * fit the core's convolution buffer, all chained through the tasks' tails
 * into one job. Addresses are kept as relocations against the program's
 * buffers and patched by rkaccel_program_emit(), so one program serves any
 * number of contexts.
 */

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "tensors.h"
#include "split.h"
#include "rkaccel_drm.h"

/* Entries of a task's tail: next address, next amounts, prefix, enable. */
#define TAIL_ENTRIES		4
/* Tasks start on 64-byte boundaries: 8 entries. */
#define TASK_ALIGN_ENTRIES	8

static bool grow(void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
	uint32_t n = *cap ? *cap : 64;
	void *p;

	if (need <= *cap)
		return true;
	while (n < need)
		n *= 2;
	p = realloc(*arr, (size_t)n * elem);
	if (!p)
		return false;
	*arr = p;
	*cap = n;
	return true;
}

static uint16_t reg_target(uint16_t reg)
{
	static const uint16_t tgt[] = { RKNPU_TGT_PC, RKNPU_TGT_CNA, RKNPU_TGT_CNA,
					RKNPU_TGT_CORE, RKNPU_TGT_DPU, RKNPU_TGT_DPU_RDMA,
					RKNPU_TGT_PPU, RKNPU_TGT_PPU_RDMA };

	return reg >> 12 < sizeof(tgt) / sizeof(tgt[0]) ? tgt[reg >> 12] : RKNPU_TGT_PC;
}

static uint64_t regcmd(uint16_t target, uint16_t reg, uint32_t val)
{
	return ((uint64_t)target << 48) | ((uint64_t)val << 16) | reg;
}

void prog_put_raw(struct rkaccel_program *p, uint64_t entry)
{
	if (!grow((void **)&p->cmds, &p->cap_cmds, p->num_cmds + 1, sizeof(*p->cmds))) {
		p->err = -ENOMEM;
		return;
	}
	p->cmds[p->num_cmds++] = entry;
}

void prog_put(struct rkaccel_program *p, uint16_t reg, uint32_t val)
{
	prog_put_raw(p, regcmd(reg_target(reg), reg, val));
}

/* A register holding the NPU address of @offset in buffer @buf. */
void prog_put_addr(struct rkaccel_program *p, uint16_t reg, uint32_t buf, uint32_t offset)
{
	if (!grow((void **)&p->relocs, &p->cap_relocs, p->num_relocs + 1, sizeof(*p->relocs))) {
		p->err = -ENOMEM;
		return;
	}
	p->relocs[p->num_relocs++] = (struct reloc){ p->num_cmds, buf, offset };
	prog_put(p, reg, 0);
}

void prog_task_begin(struct rkaccel_program *p)
{
	if (!grow((void **)&p->task_start, &p->cap_tasks, p->num_tasks + 1,
		  sizeof(*p->task_start)) ||
	    !grow((void **)&p->task_unit, &p->cap_units, p->num_tasks + 1,
		  sizeof(*p->task_unit))) {
		p->err = -ENOMEM;
		return;
	}
	p->task_unit[p->num_tasks] = p->cur_unit;
	p->task_start[p->num_tasks++] = p->num_cmds;
}

/* The tail the chaining pass fills in, and the blocks @enable starts. */
void prog_task_end(struct rkaccel_program *p, uint32_t enable)
{
	if (!p->num_tasks)
		return;
	if ((p->num_cmds - p->task_start[p->num_tasks - 1] + TAIL_ENTRIES) % 2)
		prog_put_raw(p, 0);	/* whole 128-bit fetches */
	prog_put(p, RKNPU_PC_BASE_ADDRESS, 0);
	prog_put(p, RKNPU_PC_REGISTER_AMOUNTS, 0);
	prog_put_raw(p, regcmd(RKNPU_TGT_OP_PREFIX, 0, 0));
	prog_put_raw(p, regcmd(RKNPU_TGT_OP_EN, RKNPU_REG_OP_EN, enable));
	while (p->num_cmds % TASK_ALIGN_ENTRIES)
		prog_put_raw(p, 0);
}

/*
 * A real multiplier as m * 2^e, m in [1, 2): @mant14 = floor(m * 2^14)
 * (16384..32767) and @shift = 14 - e, so that acc * multiplier is about
 * (acc * mant14) >> shift. Integer-only on the float's bits: the same on
 * every CPU. Returns 0, or -ERANGE for what no shift of 0..62 represents.
 */
static int split_multiplier(float multiplier, uint32_t *mant14, uint32_t *shift)
{
	uint32_t bits, exp;
	int32_t sh;

	memcpy(&bits, &multiplier, sizeof(bits));
	exp = (bits >> 23) & 0xff;
	if (bits >> 31 || !exp || exp == 0xff)
		return -ERANGE;
	*mant14 = ((bits & 0x7fffff) | 0x800000) >> 9;
	sh = 141 - (int32_t)exp;
	if (sh < 0 || sh > 62)
		return -ERANGE;
	*shift = (uint32_t)sh;
	return 0;
}

/*
 * OUT_CVT: scale = floor(m * 2^14) + 1 (16385..32768), as Mesa's rocket
 * driver computes it from the float's bits (Documentation/datapath.rst).
 */
int requant_out_cvt(float multiplier, uint32_t *scale, uint32_t *shift)
{
	int ret = split_multiplier(multiplier, scale, shift);

	if (!ret)
		*scale += 1;
	return ret;
}

/* EW_CVT: scale = floor(m * 2^14), Mesa's conversion of the added operand. */
int requant_ew_cvt(float multiplier, uint32_t *scale, uint32_t *shift)
{
	return split_multiplier(multiplier, scale, shift);
}

static uint32_t task_entries(const struct rkaccel_program *p, uint32_t task);

/*
 * Whether @task's enable entry starts the PPU: a chain that ends with one
 * completes with the PPU's interrupt bits, which the kernel must enable.
 */
static bool task_runs_ppu(const struct rkaccel_program *p, uint32_t task)
{
	uint32_t i, end = p->task_start[task] + task_entries(p, task);

	for (i = p->task_start[task]; i < end; i++) {
		uint64_t e = p->cmds[i];

		if ((uint32_t)(e >> 48) == RKNPU_TGT_OP_EN && (uint16_t)e == RKNPU_REG_OP_EN)
			return (uint32_t)(e >> 16) & (RKNPU_BLK_PPU | RKNPU_BLK_PPU_RDMA);
	}
	return false;
}

static uint32_t task_entries(const struct rkaccel_program *p, uint32_t task)
{
	uint32_t end = task + 1 < p->num_tasks ? p->task_start[task + 1] : p->num_cmds;
	uint32_t n = end - p->task_start[task];

	/* trailing alignment entries are not fetched */
	while (n && !p->cmds[p->task_start[task] + n - 1])
		n--;
	return ALIGN_UP(n, 2);
}

static bool is_pool_op(uint32_t op)
{
	return op == RKACCEL_OP_MAXPOOL || op == RKACCEL_OP_AVGPOOL;
}

/* What a layer reads: tensor src (0 the input, j + 1 layer j's output). */
static uint32_t layer_src(const struct model_io *io, uint32_t i)
{
	return io ? io[i].src : i;
}

static bool is_concat(const struct rkaccel_layer_desc *l)
{
	return l->op == RKACCEL_OP_CONCAT;
}

/*
 * The activation plan. Each tensor lives in a region; a concat's inputs
 * live inside the concat's region at their channel offsets (the root is
 * the outermost concat), so the region is born with its first producer
 * and dies after the last reader of any of its tensors. Regions whose
 * lives overlap never share bytes; the others reuse the same bytes.
 */
struct plan {
	uint32_t n;		/* layers */
	uint32_t *root;		/* tensor -> the tensor whose region holds it */
	uint32_t *ch_off;	/* tensor -> channel offset in its root */
	uint32_t *birth, *death;	/* per root: first writer, last reader (layers) */
	uint64_t *size;		/* per root: bytes (internal ones) */
	uint64_t *off;		/* per root: offset in the internal buffer */
};

static void plan_free(struct plan *pl)
{
	free(pl->root);
	free(pl->ch_off);
	free(pl->birth);
	free(pl->death);
	free(pl->size);
	free(pl->off);
}

static int plan_alloc(struct plan *pl, uint32_t n)
{
	size_t t = (size_t)n + 1;

	*pl = (struct plan){ .n = n };
	pl->root = calloc(t, sizeof(*pl->root));
	pl->ch_off = calloc(t, sizeof(*pl->ch_off));
	pl->birth = calloc(t, sizeof(*pl->birth));
	pl->death = calloc(t, sizeof(*pl->death));
	pl->size = calloc(t, sizeof(*pl->size));
	pl->off = calloc(t, sizeof(*pl->off));
	if (!pl->root || !pl->ch_off || !pl->birth || !pl->death || !pl->size || !pl->off) {
		plan_free(pl);
		return -ENOMEM;
	}
	return 0;
}

/*
 * Roots and channel offsets: a concat's inputs in its region, in order.
 * Refuses (-EINVAL) what cannot be written in place: the model input or an
 * int32 tensor in a concat, a tensor in two, an input but the last whose
 * channels are not whole groups of the DPU's writes.
 */
static int plan_roots(struct plan *pl, const struct rkaccel_model_desc *d,
		      const struct model_io *io, const uint32_t *cat)
{
	uint32_t *parent = pl->birth;	/* scratch until plan_lives() */

	for (uint32_t t = 0; t <= pl->n; t++)
		parent[t] = UINT32_MAX;
	for (uint32_t i = 0; io && i < pl->n; i++) {
		uint32_t off = 0;

		if (!is_concat(&d->layers[i]))
			continue;
		for (uint32_t k = 0; k < io[i].cat_count; k++) {
			uint32_t t = cat[io[i].cat_first + k];
			uint32_t c = t ? d->layers[t - 1].out_features : 0;

			if (!t || parent[t] != UINT32_MAX ||
			    (k + 1 < io[i].cat_count && c % NATIVE_CHANNEL_ALIGN))
				return -EINVAL;
			parent[t] = i + 1;
			pl->ch_off[t] = off;
			off += c;
		}
	}
	/* a parent comes later than its inputs: resolve from the last tensor down */
	for (uint32_t t = pl->n + 1; t-- > 0;) {
		uint32_t p = parent[t];

		pl->root[t] = p == UINT32_MAX ? t : pl->root[p];
		if (p != UINT32_MAX)
			pl->ch_off[t] += pl->ch_off[p];
	}
	return 0;
}

/* Each root's life: first layer writing into it, last layer reading from it. */
static void plan_lives(struct plan *pl, const struct rkaccel_model_desc *d,
		       const struct model_io *io)
{
	for (uint32_t t = 0; t <= pl->n; t++) {
		pl->birth[t] = UINT32_MAX;
		pl->death[t] = 0;
	}
	for (uint32_t t = 1; t <= pl->n; t++) {
		uint32_t r = pl->root[t];

		if (!is_concat(&d->layers[t - 1]) && t - 1 < pl->birth[r])
			pl->birth[r] = t - 1;
		if (t - 1 > pl->death[r])
			pl->death[r] = t - 1;
	}
	for (uint32_t i = 0; i < pl->n; i++) {
		const struct rkaccel_layer_desc *l = &d->layers[i];
		uint32_t r;

		if (is_concat(l))
			continue;
		r = pl->root[layer_src(io, i)];
		pl->death[r] = i > pl->death[r] ? i : pl->death[r];
		if (l->flags & RKACCEL_LAYER_ADD) {
			r = pl->root[l->add_input];
			pl->death[r] = i > pl->death[r] ? i : pl->death[r];
		}
	}
}

/*
 * First fit, roots in the order they are born (then by index): the lowest
 * offset whose bytes no root living at the same time holds. Deterministic;
 * returns the internal buffer's size, the peak.
 */
static uint64_t plan_offsets(struct plan *pl, const uint32_t *order, uint32_t count)
{
	uint64_t total = 0;

	for (uint32_t a = 0; a < count; a++) {
		uint32_t r = order[a];
		uint64_t at = 0;
		bool moved = true;

		/* move past every overlapping placed root until none is in the way */
		while (moved) {
			moved = false;
			for (uint32_t b = 0; b < a; b++) {
				uint32_t q = order[b];

				if (pl->death[q] < pl->birth[r] || pl->death[r] < pl->birth[q])
					continue;
				if (at < pl->off[q] + pl->size[q] && pl->off[q] < at + pl->size[r]) {
					at = pl->off[q] + pl->size[q];
					moved = true;
				}
			}
		}
		pl->off[r] = at;
		total = at + pl->size[r] > total ? at + pl->size[r] : total;
	}
	return total;
}

/* Internal roots ordered by birth, then index (insertion sort: stable, no context). */
static void sort_roots(const struct plan *pl, uint32_t *order, uint32_t count)
{
	for (uint32_t a = 1; a < count; a++) {
		uint32_t r = order[a], b = a;

		while (b && (pl->birth[order[b - 1]] > pl->birth[r]))
			order[b] = order[b - 1], b--;
		order[b] = r;
	}
}

/* A tensor's own shape as the compiler places it (no buffer yet). */
static void shape_place(struct tensor_place *tp, const struct rkaccel_tensor_shape *s)
{
	*tp = (struct tensor_place){ .h = s->height, .w = s->width, .c = s->channels,
				     .elem_bytes = 1, .scale = s->scale, .zp = s->zero_point };
}

/*
 * Where every tensor lives: the input and output in their buffers, the
 * others in the internal buffer by lifetime; a concat's inputs inside it.
 */
static int place_tensors(struct rkaccel_program *p, const struct rkaccel_model_desc *d,
			 const struct model_io *io, const uint32_t *cat,
			 const struct rkaccel_tensor_shape *s, struct tensor_place *t, bool own_bytes)
{
	uint32_t last = d->num_layers, count = 0, *order;
	struct plan pl;
	int ret = plan_alloc(&pl, last);

	if (ret)
		return ret;
	ret = plan_roots(&pl, d, io, cat);
	if (ret || pl.root[0] != 0) {
		plan_free(&pl);
		return ret ? ret : -EINVAL;
	}
	plan_lives(&pl, d, io);
	if (own_bytes) {
		/*
		 * A split program's cores run ahead of each other inside a stripe
		 * segment (split.c): every tensor keeps its bytes for the whole run.
		 */
		for (uint32_t r = 0; r <= last; r++) {
			pl.birth[r] = 0;
			pl.death[r] = last;
		}
	}
	order = calloc((size_t)last + 1, sizeof(*order));
	if (!order) {
		plan_free(&pl);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i <= last; i++) {
		shape_place(&t[i], &s[i]);
		if (i == last && d->layers[last - 1].flags & RKACCEL_LAYER_OUT_INT32)
			t[i].elem_bytes = 4;
		if (pl.root[i] != i)
			continue;
		if (i == 0 || i == last) {
			t[i].buf = i ? RKACCEL_BUF_OUTPUT : RKACCEL_BUF_INPUT;
			t[i].plane = (uint32_t)native_plane_bytes(s[i].height * s[i].width);
			p->size[t[i].buf] = rkaccel_native_size(s[i].height * s[i].width,
								s[i].channels, t[i].elem_bytes);
			continue;
		}
		/* between layers: planes a convolution can read (compile.h) */
		t[i].buf = RKACCEL_BUF_INTERNAL;
		t[i].plane = (uint32_t)cna_plane_bytes(s[i].height, s[i].width);
		pl.size[i] = ALIGN_UP((uint64_t)native_planes(s[i].channels, 1) * t[i].plane, 64);
		order[count++] = i;
	}
	sort_roots(&pl, order, count);
	p->size[RKACCEL_BUF_INTERNAL] = (size_t)plan_offsets(&pl, order, count);
	for (uint32_t i = 0; i <= last; i++) {
		const struct tensor_place *r = &t[pl.root[i]];

		if (r->buf == RKACCEL_BUF_INTERNAL && pl.root[i] == i)
			t[i].off = (uint32_t)pl.off[i];
	}
	/* a concat's inputs: its buffer and planes, their channels' planes in */
	for (uint32_t i = 1; i <= last; i++) {
		const struct tensor_place *r = &t[pl.root[i]];

		if (pl.root[i] == i)
			continue;
		t[i].buf = r->buf;
		t[i].plane = r->plane;
		t[i].off = r->off + pl.ch_off[i] / (RKNPU_ATOM_BYTES / r->elem_bytes) * r->plane;
	}
	free(order);
	plan_free(&pl);
	return p->size[RKACCEL_BUF_INTERNAL] > UINT32_MAX ? -E2BIG : 0;
}

static int plan_layers(struct layer_plan *lps, const struct rkaccel_model_desc *d,
		       const struct model_io *io, const struct tensor_place *t, uint32_t banks)
{
	for (uint32_t i = 0; i < d->num_layers; i++) {
		const struct rkaccel_layer_desc *l = &d->layers[i];
		struct layer_plan *lp = &lps[i];
		int ret;

		if (is_concat(l))
			continue;
		*lp = (struct layer_plan){ .desc = l, .in = t[layer_src(io, i)], .out = t[i + 1],
					   .parts = 1 };
		if (l->flags & RKACCEL_LAYER_ADD)
			lp->add = t[l->add_input];
		ret = is_pool_op(l->op) ? pool_plan(lp, banks * RKNPU_CBUF_BANK_SIZE) :
					  conv_plan(lp, banks);
		if (ret)
			return ret;
	}
	return 0;
}

static int compile_plans(struct rkaccel_program *p, const struct rkaccel_model_desc *desc,
			 struct layer_plan *lps)
{
	uint64_t wt = 0;
	uint32_t i;
	int ret;

	for (i = 0; i < desc->num_layers; i++) {
		if (is_pool_op(desc->layers[i].op) || is_concat(&desc->layers[i]))
			continue;
		lps[i].wt_off = (uint32_t)wt;
		wt += ALIGN_UP(conv_weight_bytes(&lps[i]), 64);
		lps[i].bias_off = (uint32_t)wt;
		wt += ALIGN_UP((uint64_t)lps[i].desc->out_features * 4 * lps[i].bias_words, 64);
	}
	if (wt > UINT32_MAX)
		return -E2BIG;
	p->size[RKACCEL_BUF_WEIGHTS] = (size_t)wt;
	p->weights = calloc(1, wt ? (size_t)wt : 1);
	if (!p->weights)
		return -ENOMEM;
	for (i = 0; i < desc->num_layers; i++) {
		if (is_concat(&desc->layers[i]))
			continue;	/* its producers wrote it */
		p->cur_unit = i * SPLIT_MAX_PARTS;
		if (is_pool_op(desc->layers[i].op)) {
			pool_put_layer(p, &lps[i]);
			continue;
		}
		ret = conv_fill_weights(&lps[i], p->weights);
		if (ret)
			return ret;
		conv_put_layer(p, &lps[i]);
	}
	p->size[RKACCEL_BUF_REGCMD] = (size_t)p->num_cmds * sizeof(uint64_t);
	return p->err;
}

/* Each layer's modelled time on one core (cost.c), for rkaccel_program_layer(). */
static int cost_layers(struct rkaccel_program *p, const struct rkaccel_model_desc *desc,
		       const struct layer_plan *lps)
{
	p->layer_ns = calloc(desc->num_layers, sizeof(*p->layer_ns));
	if (!p->layer_ns)
		return -ENOMEM;
	p->num_layers = desc->num_layers;
	for (uint32_t i = 0; i < desc->num_layers; i++) {
		uint64_t ns[SPLIT_MAX_PARTS] = { 0 };

		if (is_concat(&desc->layers[i]))
			continue;	/* its producers wrote it */
		if (is_pool_op(desc->layers[i].op))
			pool_cost(&lps[i], ns);
		else
			conv_cost(&lps[i], ns);
		for (uint32_t k = 0; k < SPLIT_MAX_PARTS; k++)
			p->layer_ns[i] += ns[k];
	}
	return 0;
}

/* What program_compile() was asked for beyond the model. */
struct compile_opts {
	uint32_t ncores;	/* > 1: split over that many cores */
	uint64_t boundary_ns;
	uint32_t max_tasks;
	bool keep_tensors;	/* every tensor in its own bytes, places kept */
	bool layer_jobs;	/* one job a layer, for timing each */
};

static int compile_split(struct rkaccel_program *p, const struct rkaccel_model_desc *desc,
			 const struct model_io *io, const uint32_t *cat,
			 const struct tensor_place *t, struct layer_plan *lps, uint32_t banks,
			 const struct compile_opts *o)
{
	struct split_in in = { desc, io, cat, t, lps, banks, o->ncores, o->max_tasks,
			       o->boundary_ns };
	struct split_state *st;
	int ret = split_plan(&in, &st);

	if (!ret)
		ret = compile_plans(p, desc, lps);
	if (!ret)
		ret = split_jobs_build(st, p);
	split_free(st);
	return ret;
}

static int compile_layers(struct rkaccel_program *p, const struct rkaccel_model_desc *desc,
			  const struct model_io *io, const uint32_t *cat, uint32_t banks,
			  const struct compile_opts *o)
{
	size_t n = (size_t)desc->num_layers + 1;
	struct rkaccel_tensor_shape *s = calloc(n, sizeof(*s));
	struct tensor_place *t = calloc(n, sizeof(*t));
	struct layer_plan *lps = calloc(n, sizeof(*lps));
	int ret = -ENOMEM;

	if (s && t && lps) {
		/* the model was checked: this fills the shapes */
		ret = model_check(desc, io, cat, UINT32_MAX, s, NULL, 0);
		if (!ret)
			ret = place_tensors(p, desc, io, cat, s, t,
					    o->ncores > 1 || o->keep_tensors);
		if (!ret)
			ret = plan_layers(lps, desc, io, t, banks);
		if (!ret && o->ncores > 1)
			ret = compile_split(p, desc, io, cat, t, lps, banks, o);
		else if (!ret)
			ret = compile_plans(p, desc, lps);
		if (!ret && o->layer_jobs)
			ret = layer_jobs_build(p, o->max_tasks);
		if (!ret && o->ncores <= 1)
			ret = cost_layers(p, desc, lps);
	}
	if (!ret && o->keep_tensors) {
		p->places = t;
		p->num_places = (uint32_t)n;
		t = NULL;
	}
	free(s);
	free(t);
	free(lps);
	return ret;
}

static int compile_opts(const struct rkaccel_model_desc *desc, const struct model_io *io,
			const uint32_t *cat, const struct rkaccel_info *info,
			const struct compile_opts *o, struct rkaccel_program **prog)
{
	struct rkaccel_program *p;
	uint32_t banks;
	int ret;

	*prog = NULL;
	banks = info->cbuf_size / RKNPU_CBUF_BANK_SIZE;
	if (banks < 2 || banks > 15 || !info->max_tasks)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	ret = compile_layers(p, desc, io, cat, banks, o);
	/* the driver takes at most max_tasks hardware tasks in one job */
	if (!ret && !p->jobs && p->num_tasks > info->max_tasks)
		ret = -E2BIG;
	if (ret) {
		rkaccel_program_free(p);
		return ret;
	}
	*prog = p;
	return 0;
}

int program_compile(const struct rkaccel_model_desc *desc, const struct model_io *io,
		    const uint32_t *cat, const struct rkaccel_info *info,
		    struct rkaccel_program **prog)
{
	struct compile_opts o = { .ncores = 1 };

	return compile_opts(desc, io, cat, info, &o, prog);
}

int program_compile_kept(const struct rkaccel_model_desc *desc, const struct model_io *io,
			 const uint32_t *cat, const struct rkaccel_info *info,
			 struct rkaccel_program **prog)
{
	struct compile_opts o = { .ncores = 1, .keep_tensors = true };

	return compile_opts(desc, io, cat, info, &o, prog);
}

int program_compile_layer_jobs(const struct rkaccel_model_desc *desc, const struct model_io *io,
			       const uint32_t *cat, const struct rkaccel_info *info,
			       struct rkaccel_program **prog)
{
	struct compile_opts o = { .ncores = 1, .max_tasks = info->max_tasks, .layer_jobs = true };

	return compile_opts(desc, io, cat, info, &o, prog);
}

int program_compile_split(const struct rkaccel_model_desc *desc, const struct model_io *io,
			  const uint32_t *cat, const struct rkaccel_info *info,
			  uint32_t ncores, uint64_t boundary_ns, struct rkaccel_program **prog)
{
	struct compile_opts o = { ncores, boundary_ns, info->max_tasks, false, false };

	*prog = NULL;
	if (ncores < 2 || ncores > SPLIT_MAX_PARTS)
		return -EINVAL;
	return compile_opts(desc, io, cat, info, &o, prog);
}

const struct split_jobs *program_jobs(const struct rkaccel_program *prog)
{
	return prog->jobs;
}

int rkaccel_program_compile(const struct rkaccel_model_desc *desc,
			    const struct rkaccel_info *info, struct rkaccel_program **prog)
{
	if (!prog)
		return -EINVAL;
	*prog = NULL;
	if (!desc || !info || rkaccel_model_validate(desc, NULL, 0))
		return -EINVAL;
	return program_compile(desc, NULL, NULL, info, prog);
}

int rkaccel_program_compile_model(const struct rkaccel_model *model,
				  const struct rkaccel_info *info, struct rkaccel_program **prog)
{
	const struct model_io *io;
	const uint32_t *cat;

	if (!prog)
		return -EINVAL;
	*prog = NULL;
	if (!model || !info)
		return -EINVAL;
	io = model_links(model, &cat);
	return program_compile(rkaccel_model_desc(model), io, cat, info, prog);
}

void rkaccel_program_free(struct rkaccel_program *prog)
{
	if (!prog)
		return;
	free(prog->cmds);
	free(prog->task_start);
	free(prog->task_unit);
	split_jobs_free(prog->jobs);
	free(prog->relocs);
	free(prog->weights);
	free(prog->places);
	free(prog->layer_ns);
	free(prog);
}

size_t rkaccel_program_size(const struct rkaccel_program *prog, enum rkaccel_buffer buf)
{
	return buf < RKACCEL_BUF_COUNT ? prog->size[buf] : 0;
}

const void *rkaccel_program_weights(const struct rkaccel_program *prog)
{
	return prog->weights;
}

uint32_t rkaccel_program_tasks(const struct rkaccel_program *prog)
{
	return prog->num_tasks;
}

uint32_t rkaccel_program_starts(const struct rkaccel_program *prog)
{
	return prog->num_tasks ? 1 : 0;
}

int rkaccel_program_layer(const struct rkaccel_program *prog, uint32_t layer, uint32_t *tasks,
			  uint64_t *ns)
{
	uint32_t n = 0;

	if (!prog || !prog->layer_ns || layer >= prog->num_layers)
		return -EINVAL;
	for (uint32_t t = 0; t < prog->num_tasks; t++)
		n += prog->task_unit[t] / SPLIT_MAX_PARTS == layer;
	if (tasks)
		*tasks = n;
	if (ns)
		*ns = prog->layer_ns[layer];
	return 0;
}

uint64_t rkaccel_program_macs(const struct rkaccel_program *prog)
{
	return prog->macs;
}

/* Link task @t to task @next (UINT32_MAX: none) through its tail; none ends the chain. */
static void link_task(const struct rkaccel_program *p, uint32_t t, uint32_t next,
		      uint64_t regcmd_addr, uint64_t *out)
{
	uint32_t tail = p->task_start[t] + task_entries(p, t) - TAIL_ENTRIES;
	uint32_t addr = 0, amounts = 0;

	if (next < p->num_tasks) {
		addr = (uint32_t)(regcmd_addr + (uint64_t)p->task_start[next] * sizeof(uint64_t));
		/* Mesa's chained value: the entries before the tail, in even pairs */
		amounts = ALIGN_UP((task_entries(p, next) - TAIL_ENTRIES) / 2, 2);
	}
	out[tail] = regcmd(RKNPU_TGT_PC, RKNPU_PC_BASE_ADDRESS, addr);
	out[tail + 1] = regcmd(RKNPU_TGT_PC, RKNPU_PC_REGISTER_AMOUNTS, amounts);
}

/* The commands with every address patched, in CPU order (links still to do). */
static int emit_patched(const struct rkaccel_program *prog,
			const uint64_t addr[RKACCEL_BUF_COUNT], uint64_t *out)
{
	uint32_t i;

	for (i = 0; i < RKACCEL_BUF_COUNT; i++)
		if (prog->size[i] && (!addr[i] || addr[i] + prog->size[i] > 1ull << 32))
			return -EINVAL;
	memcpy(out, prog->cmds, prog->size[RKACCEL_BUF_REGCMD]);
	for (i = 0; i < prog->num_relocs; i++) {
		const struct reloc *r = &prog->relocs[i];
		uint64_t e = out[r->entry];
		uint32_t val = (uint32_t)(addr[r->buf] + r->offset);

		out[r->entry] = (e & ~(0xffffffffull << 16)) | ((uint64_t)val << 16);
	}
	return 0;
}

/* The PC start of the chain @tasks[@count], linked in that order. */
static struct rkaccel_pc_start emit_chain(const struct rkaccel_program *prog,
					  const uint32_t *tasks, uint32_t count,
					  uint64_t regcmd_addr, uint64_t *out)
{
	for (uint32_t i = 0; i < count; i++)
		link_task(prog, tasks[i], i + 1 < count ? tasks[i + 1] : UINT32_MAX,
			  regcmd_addr, out);
	return (struct rkaccel_pc_start){
		.regcmd_addr = regcmd_addr + (uint64_t)prog->task_start[tasks[0]] * sizeof(uint64_t),
		.regcmd_count = task_entries(prog, tasks[0]),
		.task_count = count,
		.flags = task_runs_ppu(prog, tasks[count - 1]) ? DRM_RKACCEL_TASK_ENDS_PPU : 0,
	};
}

static void emit_le(const struct rkaccel_program *prog, uint64_t *out)
{
	for (uint32_t i = 0; i < prog->num_cmds; i++)
		out[i] = htole64(out[i]);
}

int rkaccel_program_emit(const struct rkaccel_program *prog,
			 const uint64_t addr[RKACCEL_BUF_COUNT], void *dst,
			 struct rkaccel_pc_start *starts)
{
	uint64_t *out = dst;
	uint32_t i;
	int ret;

	if (prog->jobs)
		return -EINVAL;	/* program_emit_jobs() */
	ret = emit_patched(prog, addr, out);
	if (ret)
		return ret;
	/* one chain: compile refused programs longer than one job */
	for (i = 0; i < prog->num_tasks; i++)
		link_task(prog, i, i + 1, addr[RKACCEL_BUF_REGCMD], out);
	starts[0] = (struct rkaccel_pc_start){
		.regcmd_addr = addr[RKACCEL_BUF_REGCMD],
		.regcmd_count = task_entries(prog, 0),
		.task_count = prog->num_tasks,
		.flags = task_runs_ppu(prog, prog->num_tasks - 1) ? DRM_RKACCEL_TASK_ENDS_PPU : 0,
	};
	emit_le(prog, out);
	return 0;
}

int program_emit_jobs(const struct rkaccel_program *prog, const uint64_t addr[RKACCEL_BUF_COUNT],
		      void *dst, struct rkaccel_pc_start *starts)
{
	const struct split_jobs *sj = prog->jobs;
	uint64_t *out = dst;
	int ret;

	if (!sj)
		return -EINVAL;
	ret = emit_patched(prog, addr, out);
	if (ret)
		return ret;
	for (uint32_t j = 0; j < sj->num_jobs; j++)
		starts[j] = emit_chain(prog, &sj->tasks[sj->job[j].task_first],
				       sj->job[j].task_count, addr[RKACCEL_BUF_REGCMD], out);
	emit_le(prog, out);
	return 0;
}
