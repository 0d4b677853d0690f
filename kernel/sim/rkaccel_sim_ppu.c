// SPDX-License-Identifier: GPL-2.0-only
/*
 * Simulated NPU pooling: one PPU task reading an int8 feature map through
 * PPU_RDMA and writing the pooled map. Max or average over a window of up
 * to 16x16 with a stride of up to 16 and padding of up to 7 on each side;
 * the average multiplies the window's sum by the two reciprocals the task
 * gives. Anything else is refused with the register named, as in the
 * convolution datapath, and memory is reached only through the page table.
 */

#include <linux/bitfield.h>
#include <linux/device.h>
#include <linux/minmax.h>
#include <linux/sched.h>
#include <linux/string.h>

#include "rkaccel_device.h"
#include "rkaccel_hw_regs.h"
#include "rkaccel_npu_regs.h"
#include "rkaccel_regs.h"
#include "rkaccel_sim_ppu.h"

/* One decoded pooling task. */
struct sim_pool {
	struct device *dev;
	const struct rkaccel_soc_data *soc;
	const u32 *regs;

	u32 width, height, channels;
	u32 out_width, out_height;
	u32 kw, kh, sx, sy;
	u32 pad_left, pad_top;
	bool max;
	s32 pad_value;
	u32 recip_w, recip_h;

	u32 in_addr, in_line, in_plane;
	u32 out_addr, out_plane;
};

static u32 pool_reg(const struct sim_pool *p, u32 reg)
{
	return p->regs[reg / sizeof(u32)];
}

static u32 pool_refuse(const struct sim_pool *p, const char *name, u32 reg, const char *why)
{
	dev_err_ratelimited(p->dev, "sim: %s = 0x%08x: %s\n", name, pool_reg(p, reg), why);
	return RKNPU_INT_SIM_UNSUPPORTED;
}

#define REFUSE(p, reg, why)	pool_refuse(p, #reg, RKNPU_##reg, why)

/* Cube sizes are written minus one. */
static u32 pool_cube(const struct sim_pool *p, u32 reg)
{
	return (pool_reg(p, reg) & RKNPU_PPU_CUBE_MASK) + 1;
}

/* PPU_RDMA's input cube and strides; the PPU must describe the same cube. */
static u32 pool_decode_input(struct sim_pool *p)
{
	p->width = pool_cube(p, RKNPU_PPU_RDMA_CUBE_IN_WIDTH);
	p->height = pool_cube(p, RKNPU_PPU_RDMA_CUBE_IN_HEIGHT);
	p->channels = pool_cube(p, RKNPU_PPU_RDMA_CUBE_IN_CHANNEL);
	if (pool_cube(p, RKNPU_PPU_CUBE_IN_WIDTH) != p->width ||
	    pool_cube(p, RKNPU_PPU_CUBE_IN_HEIGHT) != p->height ||
	    pool_cube(p, RKNPU_PPU_CUBE_IN_CHANNEL) != p->channels)
		return REFUSE(p, PPU_CUBE_IN_WIDTH, "input cube differs from PPU_RDMA's");
	if (pool_reg(p, RKNPU_PPU_RDMA_DATA_FORMAT) || pool_reg(p, RKNPU_PPU_DATA_FORMAT))
		return REFUSE(p, PPU_RDMA_DATA_FORMAT, "only int8");
	p->in_addr = pool_reg(p, RKNPU_PPU_RDMA_SRC_BASE_ADDR);
	p->in_line = pool_reg(p, RKNPU_PPU_RDMA_SRC_LINE_STRIDE) & RKNPU_DST_SURF_STRIDE_MASK;
	p->in_plane = pool_reg(p, RKNPU_PPU_RDMA_SRC_SURF_STRIDE) & RKNPU_DST_SURF_STRIDE_MASK;
	if (p->in_line < p->width * RKNPU_ATOM_BYTES)
		return REFUSE(p, PPU_RDMA_SRC_LINE_STRIDE, "line stride shorter than a line");
	if (p->in_plane < (u64)p->height * p->in_line)
		return REFUSE(p, PPU_RDMA_SRC_SURF_STRIDE, "surface stride shorter than the lines");
	/* the simulator buffers one input plane: as much as the CBUF holds */
	if ((u64)p->height * p->in_line > p->soc->cbuf_size)
		return REFUSE(p, PPU_RDMA_CUBE_IN_HEIGHT, "input plane larger than the CBUF");
	return 0;
}

static u32 pool_decode_method(struct sim_pool *p)
{
	u32 mode = pool_reg(p, RKNPU_PPU_OPERATION_MODE_CFG);
	u32 method = FIELD_GET(RKNPU_PPU_MODE_METHOD, mode);

	if ((mode & ~RKNPU_PPU_MODE_METHOD) != RKNPU_PPU_MODE_FLYING ||
	    (method != RKNPU_POOL_AVERAGE && method != RKNPU_POOL_MAX))
		return REFUSE(p, PPU_OPERATION_MODE_CFG, "only max or average from memory");
	p->max = method == RKNPU_POOL_MAX;
	p->recip_w = pool_reg(p, RKNPU_PPU_RECIP_KERNEL_WIDTH);
	p->recip_h = pool_reg(p, RKNPU_PPU_RECIP_KERNEL_HEIGHT);
	if ((p->recip_w | p->recip_h) & ~RKNPU_PPU_RECIP_MASK)
		return REFUSE(p, PPU_RECIP_KERNEL_WIDTH, "reciprocals are 17 bits");
	p->pad_value = (s32)pool_reg(p, RKNPU_PPU_PADDING_VALUE_1);
	if (pool_reg(p, RKNPU_PPU_PADDING_VALUE_2) || p->pad_value < S8_MIN ||
	    p->pad_value > S8_MAX)
		return REFUSE(p, PPU_PADDING_VALUE_1, "pad value must be an int8");
	return 0;
}

/* Window, stride, padding; the output size must follow from them exactly. */
static u32 pool_decode_window(struct sim_pool *p)
{
	u32 k = pool_reg(p, RKNPU_PPU_POOLING_KERNEL_CFG);
	u32 pad = pool_reg(p, RKNPU_PPU_POOLING_PADDING_CFG);
	u32 pr = FIELD_GET(RKNPU_PPU_PAD_RIGHT, pad), pb = FIELD_GET(RKNPU_PPU_PAD_BOTTOM, pad);

	p->kw = FIELD_GET(RKNPU_PPU_KERNEL_WIDTH, k) + 1;
	p->kh = FIELD_GET(RKNPU_PPU_KERNEL_HEIGHT, k) + 1;
	p->sx = FIELD_GET(RKNPU_PPU_KERNEL_STRIDE_WIDTH, k) + 1;
	p->sy = FIELD_GET(RKNPU_PPU_KERNEL_STRIDE_HEIGHT, k) + 1;
	if (k & ~(RKNPU_PPU_KERNEL_WIDTH | RKNPU_PPU_KERNEL_HEIGHT |
		  RKNPU_PPU_KERNEL_STRIDE_WIDTH | RKNPU_PPU_KERNEL_STRIDE_HEIGHT))
		return REFUSE(p, PPU_POOLING_KERNEL_CFG, "unknown bits");
	p->pad_left = FIELD_GET(RKNPU_PPU_PAD_LEFT, pad);
	p->pad_top = FIELD_GET(RKNPU_PPU_PAD_TOP, pad);
	if (pad & ~(RKNPU_PPU_PAD_LEFT | RKNPU_PPU_PAD_TOP | RKNPU_PPU_PAD_RIGHT |
		    RKNPU_PPU_PAD_BOTTOM) || p->pad_left >= p->kw || pr >= p->kw ||
	    p->pad_top >= p->kh || pb >= p->kh ||
	    p->width + p->pad_left + pr < p->kw || p->height + p->pad_top + pb < p->kh)
		return REFUSE(p, PPU_POOLING_PADDING_CFG, "padding wider than the window");
	p->out_width = pool_cube(p, RKNPU_PPU_CUBE_OUT_WIDTH);
	p->out_height = pool_cube(p, RKNPU_PPU_CUBE_OUT_HEIGHT);
	if (p->out_width != (p->width + p->pad_left + pr - p->kw) / p->sx + 1 ||
	    p->out_height != (p->height + p->pad_top + pb - p->kh) / p->sy + 1)
		return REFUSE(p, PPU_CUBE_OUT_WIDTH, "output size does not follow the window");
	if (pool_cube(p, RKNPU_PPU_CUBE_OUT_CHANNEL) != p->channels)
		return REFUSE(p, PPU_CUBE_OUT_CHANNEL, "channels differ from the input");
	p->out_addr = pool_reg(p, RKNPU_PPU_DST_BASE_ADDR);
	p->out_plane = pool_reg(p, RKNPU_PPU_DST_SURF_STRIDE) & RKNPU_DST_SURF_STRIDE_MASK;
	if (p->out_plane < p->out_width * p->out_height * RKNPU_ATOM_BYTES)
		return REFUSE(p, PPU_DST_SURF_STRIDE, "surface stride shorter than the cube");
	return 0;
}

/* Window (@ox, @oy) of channel @ch of one plane: max, or rounded average. */
static s8 pool_window(const struct sim_pool *p, const u8 *in, u32 ox, u32 oy, u32 ch)
{
	s64 sum = 0;
	s32 best = S8_MIN;
	u32 kx, ky;

	for (ky = 0; ky < p->kh; ky++) {
		s64 iy = (s64)oy * p->sy - p->pad_top + ky;

		for (kx = 0; kx < p->kw; kx++) {
			s64 ix = (s64)ox * p->sx - p->pad_left + kx;
			s32 v = p->pad_value;

			if (iy >= 0 && iy < p->height && ix >= 0 && ix < p->width)
				v = (s8)in[iy * p->in_line + ix * RKNPU_ATOM_BYTES + ch];
			else if (p->max)
				continue;	/* padding never wins a max */
			best = max(best, v);
			sum += v;
		}
	}
	if (p->max)
		return (s8)best;
	sum = (sum * p->recip_w * p->recip_h + (1LL << 31)) >> 32;
	return (s8)clamp_t(s64, sum, S8_MIN, S8_MAX);
}

/* Output pixels [@first, @first + @count) of plane @plane into @out. */
static void pool_chunk(const struct sim_pool *p, u32 plane, const u8 *in, u32 first, u32 count,
		       u8 *out)
{
	u32 real = min_t(u32, p->channels - plane * RKNPU_ATOM_BYTES, RKNPU_ATOM_BYTES);
	u32 i, ch;

	memset(out, 0, (size_t)count * RKNPU_ATOM_BYTES);
	for (i = 0; i < count; i++) {
		u32 ox = (first + i) % p->out_width, oy = (first + i) / p->out_width;

		for (ch = 0; ch < real; ch++)
			out[i * RKNPU_ATOM_BYTES + ch] = (u8)pool_window(p, in, ox, oy, ch);
	}
}

/* One input plane whole (decode bounds it by the CBUF), the output in chunks. */
static u32 pool_execute(const struct sim_pool *p, struct rkaccel_vm *vm,
			const struct rkaccel_sim_scratch *s)
{
	size_t in_bytes = (size_t)p->height * p->in_line;
	u32 planes = DIV_ROUND_UP(p->channels, RKNPU_ATOM_BYTES);
	u32 out_pixels = p->out_width * p->out_height, i, first, count;

	for (i = 0; i < planes; i++) {
		if (rkaccel_vm_read(vm, (u64)p->in_addr + (u64)i * p->in_plane, s->raw, in_bytes))
			return RKNPU_INT_DMA_READ_ERROR;
		for (first = 0; first < out_pixels; first += count) {
			u64 addr = (u64)p->out_addr + (u64)i * p->out_plane +
				   (u64)first * RKNPU_ATOM_BYTES;

			count = min_t(u32, out_pixels - first, RKACCEL_SIM_CHUNK_PIXELS);
			pool_chunk(p, i, s->raw, first, count, s->out);
			cond_resched();
			if (rkaccel_vm_write(vm, addr, s->out, (size_t)count * RKNPU_ATOM_BYTES))
				return RKNPU_INT_DMA_WRITE_ERROR;
		}
	}
	return 0;
}

/**
 * rkaccel_sim_ppu - run the pooling task held in a core's registers.
 * @dev: the core's device, for messages.
 * @soc: the core's SoC.
 * @regs: its register file.
 * @op_enable: the blocks the task's enable entry started.
 * @vm: the address space the DMAs go through.
 * @scratch: the core's buffers, or NULL: only model time.
 * @work: out, bytes for the timing model (pooling uses no MACs).
 *
 * Return: 0, or the error interrupt bits to raise.
 */
u32 rkaccel_sim_ppu(struct device *dev, const struct rkaccel_soc_data *soc, const u32 *regs,
		    u32 op_enable, struct rkaccel_vm *vm,
		    const struct rkaccel_sim_scratch *scratch, struct rkaccel_sim_work *work)
{
	struct sim_pool p = { .dev = dev, .soc = soc, .regs = regs };
	u32 planes, err;

	if (op_enable != (RKNPU_BLK_PPU | RKNPU_BLK_PPU_RDMA)) {
		dev_err_ratelimited(dev, "sim: op enable 0x%x: pooling is PPU+PPU_RDMA alone\n",
				    op_enable);
		return RKNPU_INT_SIM_UNSUPPORTED;
	}
	err = pool_decode_input(&p);
	if (!err)
		err = pool_decode_method(&p);
	if (!err)
		err = pool_decode_window(&p);
	if (err)
		return err;
	planes = DIV_ROUND_UP(p.channels, RKNPU_ATOM_BYTES);
	work->macs = 0;
	work->bytes = (u64)planes * (p.height * p.in_line +
				     p.out_width * p.out_height * RKNPU_ATOM_BYTES);
	/* the PPU streams its input: every byte read is one element */
	work->dpu_elems = (u64)planes * p.height * p.in_line;
	work->out_addr = p.out_addr;
	return scratch ? pool_execute(&p, vm, scratch) : 0;
}
