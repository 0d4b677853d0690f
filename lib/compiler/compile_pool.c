// SPDX-License-Identifier: MIT
/*
 * Pooling layers: one PPU task reads the whole input plane by plane from
 * memory and writes the pooled output. Average pooling multiplies the
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

int pool_plan(const struct layer_plan *lp, uint32_t cbuf_size)
{
	const struct rkaccel_layer_desc *d = lp->desc;
	uint32_t kw, kh, s;

	pool_window(lp, &kw, &kh, &s);
	/* the PPU buffers one input plane; kernels and strides are 4-bit fields */
	if ((uint64_t)lp->in.h * lp->in.w * RKNPU_ATOM_BYTES > cbuf_size || kw > 16 || kh > 16)
		return -E2BIG;
	if (d->pad_top > PPU_MAX_PAD || d->pad_left > PPU_MAX_PAD ||
	    d->pad_bottom > PPU_MAX_PAD || d->pad_right > PPU_MAX_PAD)
		return -E2BIG;
	return 0;
}

static void pool_put_cubes(struct rkaccel_program *p, const struct layer_plan *lp)
{
	uint32_t c = lp->desc->in_features;

	prog_put(p, RKNPU_PPU_RDMA_CUBE_IN_WIDTH, lp->in.w - 1);
	prog_put(p, RKNPU_PPU_RDMA_CUBE_IN_HEIGHT, lp->in.h - 1);
	prog_put(p, RKNPU_PPU_RDMA_CUBE_IN_CHANNEL, c - 1);
	prog_put_addr(p, RKNPU_PPU_RDMA_SRC_BASE_ADDR, lp->in.buf, lp->in.off);
	prog_put(p, RKNPU_PPU_RDMA_SRC_LINE_STRIDE, lp->in.w * RKNPU_ATOM_BYTES);
	prog_put(p, RKNPU_PPU_RDMA_SRC_SURF_STRIDE, lp->in.plane);
	prog_put(p, RKNPU_PPU_RDMA_DATA_FORMAT, 0);
	prog_put(p, RKNPU_PPU_CUBE_IN_WIDTH, lp->in.w - 1);
	prog_put(p, RKNPU_PPU_CUBE_IN_HEIGHT, lp->in.h - 1);
	prog_put(p, RKNPU_PPU_CUBE_IN_CHANNEL, c - 1);
	prog_put(p, RKNPU_PPU_CUBE_OUT_WIDTH, lp->out.w - 1);
	prog_put(p, RKNPU_PPU_CUBE_OUT_HEIGHT, lp->out.h - 1);
	prog_put(p, RKNPU_PPU_CUBE_OUT_CHANNEL, c - 1);
}

void pool_put_layer(struct rkaccel_program *p, const struct layer_plan *lp)
{
	const struct rkaccel_layer_desc *d = lp->desc;
	bool max = d->op == RKACCEL_OP_MAXPOOL;
	uint32_t kw, kh, s;

	pool_window(lp, &kw, &kh, &s);
	prog_task_begin(p);
	pool_put_cubes(p, lp);
	prog_put(p, RKNPU_PPU_OPERATION_MODE_CFG, RKNPU_PPU_MODE_FLYING |
		 field(RKNPU_PPU_MODE_METHOD, max ? RKNPU_POOL_MAX : RKNPU_POOL_AVERAGE));
	prog_put(p, RKNPU_PPU_POOLING_KERNEL_CFG, field(RKNPU_PPU_KERNEL_STRIDE_HEIGHT, s - 1) |
		 field(RKNPU_PPU_KERNEL_STRIDE_WIDTH, s - 1) |
		 field(RKNPU_PPU_KERNEL_HEIGHT, kh - 1) | field(RKNPU_PPU_KERNEL_WIDTH, kw - 1));
	prog_put(p, RKNPU_PPU_RECIP_KERNEL_WIDTH, (65536 + kw / 2) / kw);
	prog_put(p, RKNPU_PPU_RECIP_KERNEL_HEIGHT, (65536 + kh / 2) / kh);
	prog_put(p, RKNPU_PPU_POOLING_PADDING_CFG, field(RKNPU_PPU_PAD_BOTTOM, d->pad_bottom) |
		 field(RKNPU_PPU_PAD_RIGHT, d->pad_right) | field(RKNPU_PPU_PAD_TOP, d->pad_top) |
		 field(RKNPU_PPU_PAD_LEFT, d->pad_left));
	prog_put(p, RKNPU_PPU_PADDING_VALUE_1, (uint32_t)d->in_zero_point);
	prog_put(p, RKNPU_PPU_PADDING_VALUE_2, 0);
	prog_put_addr(p, RKNPU_PPU_DST_BASE_ADDR, lp->out.buf, lp->out.off);
	prog_put(p, RKNPU_PPU_DST_SURF_STRIDE, lp->out.plane);
	prog_put(p, RKNPU_PPU_DATA_FORMAT, 0);
	prog_task_end(p, PPU_BLOCKS);
}
