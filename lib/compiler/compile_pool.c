// SPDX-License-Identifier: MIT
/*
 * Pooling layers: a PPU task reads a band of input rows plane by plane
 * from memory and writes the pooled output rows; a layer takes as many
 * bands as its planes need to fit the CBUF (VGG's 224x224 pools: two),
 * each padded only where it meets the input's edge. Average pooling multiplies the
 * window's sum by 2^16 / kernel width and 2^16 / kernel height (rounded)
 * and rounds the product at 2^32; padding counts as the input zero point,
 * so the average of the real values keeps the input's quantization.
 */

#include <errno.h>

#include "compile.h"

#define PPU_BLOCKS	(RKNPU_BLK_PPU | RKNPU_BLK_PPU_RDMA)
/* POOLING_PADDING_CFG holds 3 bits per side. */
#define PPU_MAX_PAD	7

/* The window: the layer's, or the whole input for a global average. */
static void pool_window(const struct layer_plan *lp, uint32_t *kw, uint32_t *kh, uint32_t *s)
{
	const struct rkaccel_layer_desc *d = lp->desc;
	bool global = !d->kernel_w && !d->kernel_h;

	*kw = global ? lp->in.w : d->kernel_w;
	*kh = global ? lp->in.h : d->kernel_h;
	*s = global ? 1 : d->stride;
}

/* Output rows per task: the most whose input rows of one plane fit the CBUF. */
int pool_plan(struct layer_plan *lp, uint32_t cbuf_size)
{
	const struct rkaccel_layer_desc *d = lp->desc;
	uint32_t kw, kh, s;
	uint64_t lines;

	pool_window(lp, &kw, &kh, &s);
	/* kernels and strides are 4-bit fields, padding 3 bits */
	if (kw > 16 || kh > 16)
		return -E2BIG;
	if (d->pad_top > PPU_MAX_PAD || d->pad_left > PPU_MAX_PAD ||
	    d->pad_bottom > PPU_MAX_PAD || d->pad_right > PPU_MAX_PAD)
		return -E2BIG;
	lines = cbuf_size / ((uint64_t)lp->in.w * RKNPU_ATOM_BYTES);
	if (lines < kh)
		return -E2BIG;	/* one window's rows do not fit: needs column bands */
	lp->kh = kh;
	lp->stride_y = s;
	lp->pad_t = d->pad_top;
	lp->in_h = lp->in.h;
	lp->out_h = lp->out.h;
	lp->tile_rows = (uint32_t)((lines - kh) / s + 1);
	if (lp->tile_rows > lp->out_h)
		lp->tile_rows = lp->out_h;
	return 0;
}

/* One band: output rows [oy0, oy0 + rows), the input rows they read. */
struct pool_band {
	uint32_t oy0, rows, iy0, in_rows, pad_t, pad_b;
};

static void pool_band_input(const struct layer_plan *lp, struct pool_band *b)
{
	int64_t top = (int64_t)b->oy0 * lp->stride_y - lp->pad_t;
	int64_t end = (int64_t)(b->oy0 + b->rows - 1) * lp->stride_y - lp->pad_t + lp->kh;

	b->pad_t = top < 0 ? (uint32_t)-top : 0;
	b->iy0 = top < 0 ? 0 : (uint32_t)top;
	b->pad_b = end > lp->in_h ? (uint32_t)(end - lp->in_h) : 0;
	b->in_rows = (uint32_t)((end > lp->in_h ? lp->in_h : end) - b->iy0);
}

static void pool_put_cubes(struct rkaccel_program *p, const struct layer_plan *lp,
			   const struct pool_band *b)
{
	uint32_t c = lp->desc->in_features;

	prog_put(p, RKNPU_PPU_RDMA_CUBE_IN_WIDTH, lp->in.w - 1);
	prog_put(p, RKNPU_PPU_RDMA_CUBE_IN_HEIGHT, b->in_rows - 1);
	prog_put(p, RKNPU_PPU_RDMA_CUBE_IN_CHANNEL, c - 1);
	prog_put_addr(p, RKNPU_PPU_RDMA_SRC_BASE_ADDR, lp->in.buf,
		      lp->in.off + b->iy0 * lp->in.w * RKNPU_ATOM_BYTES);
	prog_put(p, RKNPU_PPU_RDMA_SRC_LINE_STRIDE, lp->in.w * RKNPU_ATOM_BYTES);
	prog_put(p, RKNPU_PPU_RDMA_SRC_SURF_STRIDE, lp->in.plane);
	prog_put(p, RKNPU_PPU_RDMA_DATA_FORMAT, 0);
	prog_put(p, RKNPU_PPU_CUBE_IN_WIDTH, lp->in.w - 1);
	prog_put(p, RKNPU_PPU_CUBE_IN_HEIGHT, b->in_rows - 1);
	prog_put(p, RKNPU_PPU_CUBE_IN_CHANNEL, c - 1);
	prog_put(p, RKNPU_PPU_CUBE_OUT_WIDTH, lp->out.w - 1);
	prog_put(p, RKNPU_PPU_CUBE_OUT_HEIGHT, b->rows - 1);
	prog_put(p, RKNPU_PPU_CUBE_OUT_CHANNEL, c - 1);
}

static void pool_put_band(struct rkaccel_program *p, const struct layer_plan *lp,
			  const struct pool_band *b)
{
	const struct rkaccel_layer_desc *d = lp->desc;
	bool max = d->op == RKACCEL_OP_MAXPOOL;
	uint32_t kw, kh, s;

	pool_window(lp, &kw, &kh, &s);
	prog_task_begin(p);
	pool_put_cubes(p, lp, b);
	prog_put(p, RKNPU_PPU_OPERATION_MODE_CFG, RKNPU_PPU_MODE_FLYING |
		 field(RKNPU_PPU_MODE_METHOD, max ? RKNPU_POOL_MAX : RKNPU_POOL_AVERAGE));
	prog_put(p, RKNPU_PPU_POOLING_KERNEL_CFG, field(RKNPU_PPU_KERNEL_STRIDE_HEIGHT, s - 1) |
		 field(RKNPU_PPU_KERNEL_STRIDE_WIDTH, s - 1) |
		 field(RKNPU_PPU_KERNEL_HEIGHT, kh - 1) | field(RKNPU_PPU_KERNEL_WIDTH, kw - 1));
	prog_put(p, RKNPU_PPU_RECIP_KERNEL_WIDTH, (65536 + kw / 2) / kw);
	prog_put(p, RKNPU_PPU_RECIP_KERNEL_HEIGHT, (65536 + kh / 2) / kh);
	prog_put(p, RKNPU_PPU_POOLING_PADDING_CFG, field(RKNPU_PPU_PAD_BOTTOM, b->pad_b) |
		 field(RKNPU_PPU_PAD_RIGHT, d->pad_right) | field(RKNPU_PPU_PAD_TOP, b->pad_t) |
		 field(RKNPU_PPU_PAD_LEFT, d->pad_left));
	prog_put(p, RKNPU_PPU_PADDING_VALUE_1, (uint32_t)d->in_zero_point);
	prog_put(p, RKNPU_PPU_PADDING_VALUE_2, 0);
	prog_put_addr(p, RKNPU_PPU_DST_BASE_ADDR, lp->out.buf,
		      lp->out.off + b->oy0 * lp->out.w * RKNPU_ATOM_BYTES);
	prog_put(p, RKNPU_PPU_DST_SURF_STRIDE, lp->out.plane);
	prog_put(p, RKNPU_PPU_DATA_FORMAT, 0);
	prog_task_end(p, PPU_BLOCKS);
}

typedef void (*band_fn)(void *arg, const struct layer_plan *lp, uint32_t pt,
			const struct pool_band *b);

/* Bands of output rows [@lo, @hi) of part @pt. */
static void pool_walk_rows(const struct layer_plan *lp, uint32_t pt, uint32_t lo, uint32_t hi,
			   band_fn fn, void *arg)
{
	for (uint32_t oy0 = lo; oy0 < hi; oy0 += lp->tile_rows) {
		struct pool_band b = {
			.oy0 = oy0,
			.rows = hi - oy0 < lp->tile_rows ? hi - oy0 : lp->tile_rows,
		};

		pool_band_input(lp, &b);
		fn(arg, lp, pt, &b);
	}
}

/* Every band of @lp; a stripe segment's layer (split.c): each part's rows on its core. */
static void pool_walk(const struct layer_plan *lp, band_fn fn, void *arg)
{
	if (!lp->seg) {
		pool_walk_rows(lp, 0, 0, lp->out_h, fn, arg);
		return;
	}
	for (uint32_t pt = 0; pt < lp->parts; pt++)
		pool_walk_rows(lp, pt, lp->row_lo[pt], lp->row_hi[pt], fn, arg);
}

struct pool_emit {
	struct rkaccel_program *p;
	uint32_t unit;
};

static void emit_band(void *arg, const struct layer_plan *lp, uint32_t pt,
		      const struct pool_band *b)
{
	struct pool_emit *e = arg;

	e->p->cur_unit = e->unit + pt;
	pool_put_band(e->p, lp, b);
}

void pool_put_layer(struct rkaccel_program *p, const struct layer_plan *lp)
{
	struct pool_emit e = { p, p->cur_unit };

	pool_walk(lp, emit_band, &e);
}

/* The PPU streams its input: every byte read is one element, no MACs, no fill. */
static void cost_band(void *arg, const struct layer_plan *lp, uint32_t pt,
		      const struct pool_band *b)
{
	uint64_t *ns = arg, planes = DIV_UP(lp->desc->in_features, RKNPU_ATOM_BYTES);
	uint64_t in = planes * b->in_rows * lp->in.w * RKNPU_ATOM_BYTES;
	struct task_cost c = {
		.entries = COST_POOL_ENTRIES,
		.dpu_elems = in,
		.bytes = in + planes * lp->out.w * b->rows * RKNPU_ATOM_BYTES,
	};

	ns[pt] += cost_task_ns(&c);
}

void pool_cost(const struct layer_plan *lp, uint64_t *ns)
{
	pool_walk(lp, cost_band, ns);
}
