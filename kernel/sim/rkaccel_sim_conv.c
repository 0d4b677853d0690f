// SPDX-License-Identifier: GPL-2.0-only
/*
 * Simulated NPU datapath: one convolution task through CNA -> CORE -> DPU.
 *
 * The task's registers are decoded into a description of the work; every
 * setting the datapath does not implement is refused with a dmesg line that
 * names the register and the SIM_UNSUPPORTED interrupt bit, never computed
 * wrongly. What it implements: a direct or depthwise int8 convolution with
 * a KxK kernel, stride 1 to 4 and zero-point padding on each side over a
 * feature map in the NC1HWC2 layout (16-channel atoms), weights in the
 * CNA's kernel-group layout, int32 accumulation, then in the DPU an
 * optional per-channel int32 bias and multiplier (read by DPU_RDMA),
 * optional ReLU, an optional element-wise add of an int8 tensor or of int32
 * partial sums (ERDMA) and
 * the OUT_CVT requantization ((acc * scale + round) >> shift) + offset,
 * saturated to int8 or int32. Pooling tasks go to rkaccel_sim_ppu.c. Memory
 * is reached only through the address space's page table: a hole returns
 * DMA_READ_ERROR / DMA_WRITE_ERROR, which rkaccel_sim_core.c reports as the
 * IOMMU page fault silicon takes.
 */

#include <asm/byteorder.h>
#include <linux/bitfield.h>
#include <linux/device.h>
#include <linux/minmax.h>
#include <linux/slab.h>
#include <linux/sched.h>
#include <linux/unaligned.h>

#include "rkaccel_device.h"
#include "rkaccel_hw_regs.h"
#include "rkaccel_npu_regs.h"
#include "rkaccel_regs.h"
#include "rkaccel_sim_conv.h"
#include "rkaccel_sim_ppu.h"

/* One decoded convolution task. */
struct sim_conv {
	struct device *dev;
	const struct rkaccel_soc_data *soc;
	const u32 *regs;

	u32 width, height, pixels;	/* input */
	u32 out_width, out_height, out_pixels;
	u32 kw, kh, taps;		/* kernel size; taps = kw x kh */
	u32 stride_x, stride_y;
	u32 pad_left, pad_top;
	s32 pad_value;
	bool depthwise;
	u32 channels;		/* real input channels */
	u32 channels_padded;	/* input channels as laid out (DATAIN_CHANNEL) */
	u32 kernels;		/* weight kernels fetched */
	u32 out_channels;	/* real output channels (ORIG_CHANNEL + 1) */
	u32 cube_channels;	/* output channels written (CHANNEL + 1) */

	u32 in_addr, in_line;
	u64 in_plane;
	u32 wt_addr, wt_bytes;
	bool wt_reuse;
	bool bias;
	bool bs_mul;		/* per-channel multiplier after the bias */
	u32 bs_shift;
	u32 bias_addr;
	u32 out_addr, out_plane;
	u32 out_bytes;		/* bytes per output element: 1 (int8) or 4 (int32) */

	bool ew;		/* EW: add an int8 or int32 tensor read by DPU_RDMA's ERDMA */
	u32 ew_bytes;		/* bytes per EW operand element: 1 or 4 */
	bool ew_relu;
	u32 ew_addr, ew_plane, ew_scale, ew_shift;
	s32 ew_offset;

	s32 ow_op;
	u32 truncate;		/* CLIP_TRUNCATE: accumulator bits dropped, rounded */
	bool relu;
	u32 cvt_scale, cvt_shift;
	s32 cvt_offset;
};

static u32 conv_reg(const struct sim_conv *c, u32 reg)
{
	return c->regs[reg / sizeof(u32)];
}

#define CONV_FIELD(c, reg, field)	FIELD_GET(RKNPU_##field, conv_reg(c, RKNPU_##reg))

static u32 conv_refuse(const struct sim_conv *c, const char *name, u32 reg, const char *why)
{
	dev_err_ratelimited(c->dev, "sim: %s = 0x%08x: %s\n", name, conv_reg(c, reg), why);
	return RKNPU_INT_SIM_UNSUPPORTED;
}

/* Refuse the task, naming the register and why. */
#define REFUSE(c, reg, why)	conv_refuse(c, #reg, RKNPU_##reg, why)

/* Strides 3 and 4 are unverified on silicon (Documentation/datapath.rst). */
static bool conv_stride_ok(u32 stride)
{
	return stride >= 1 && stride <= 4;
}

/* Direct or depthwise: CNA, CORE and DPU must agree. */
static u32 conv_decode_kind(struct sim_conv *c)
{
	u32 con1 = conv_reg(c, RKNPU_CNA_CONV_CON1);
	u32 misc = conv_reg(c, RKNPU_CORE_MISC_CFG);
	u32 dpu_mode = CONV_FIELD(c, DPU_FEATURE_MODE_CFG, FEATURE_MODE_CONV_MODE);

	if (con1 && con1 != FIELD_PREP(RKNPU_CONV_CON1_CONV_MODE, RKNPU_CONV_MODE_DEPTHWISE))
		return REFUSE(c, CNA_CONV_CON1, "only direct or depthwise int8 convolution");
	c->depthwise = con1;
	if (misc & RKNPU_MISC_CFG_PROC_PRECISION ||
	    !!(misc & RKNPU_MISC_CFG_DW_EN) != c->depthwise)
		return REFUSE(c, CORE_MISC_CFG, "only int8; DW_EN must match CNA_CONV_CON1");
	if (dpu_mode != (c->depthwise ? RKNPU_CONV_MODE_DEPTHWISE : 0))
		return REFUSE(c, DPU_FEATURE_MODE_CFG, "CONV_MODE must match CNA_CONV_CON1");
	return 0;
}

static u32 conv_decode_mode(struct sim_conv *c, u32 op_enable)
{
	u32 con3 = conv_reg(c, RKNPU_CNA_CONV_CON3);

	if (op_enable & ~(RKNPU_BLK_CNA | RKNPU_BLK_CORE | RKNPU_BLK_DPU | RKNPU_BLK_DPU_RDMA) ||
	    (op_enable & (RKNPU_BLK_CNA | RKNPU_BLK_CORE | RKNPU_BLK_DPU)) !=
	    (RKNPU_BLK_CNA | RKNPU_BLK_CORE | RKNPU_BLK_DPU)) {
		dev_err_ratelimited(c->dev, "sim: op enable 0x%x: only CNA+CORE+DPU(+DPU_RDMA)\n",
				    op_enable);
		return RKNPU_INT_SIM_UNSUPPORTED;
	}
	c->stride_x = FIELD_GET(RKNPU_CONV_CON3_STRIDE_X, con3);
	c->stride_y = FIELD_GET(RKNPU_CONV_CON3_STRIDE_Y, con3);
	if (!conv_stride_ok(c->stride_x) || !conv_stride_ok(c->stride_y) ||
	    con3 & ~(RKNPU_CONV_CON3_STRIDE_X | RKNPU_CONV_CON3_STRIDE_Y))
		return REFUSE(c, CNA_CONV_CON3, "only stride 1..4, no dilation or deconvolution");
	if (!(conv_reg(c, RKNPU_CNA_CVT_CON0) & RKNPU_CVT_CON0_CVT_BYPASS))
		return REFUSE(c, CNA_CVT_CON0, "input conversion must be bypassed");
	if (conv_reg(c, RKNPU_CNA_DCOMP_CTRL))
		return REFUSE(c, CNA_DCOMP_CTRL, "compressed weights");
	if (conv_reg(c, RKNPU_CORE_CLIP_TRUNCATE) & ~RKNPU_CLIP_TRUNCATE_BITS)
		return REFUSE(c, CORE_CLIP_TRUNCATE, "only CLIP_TRUNCATE bits");
	c->truncate = CONV_FIELD(c, CORE_CLIP_TRUNCATE, CLIP_TRUNCATE_BITS);
	return conv_decode_kind(c);
}

static u32 conv_decode_input(struct sim_conv *c)
{
	u32 banks = c->soc->cbuf_size / RKNPU_CBUF_BANK_SIZE;
	u32 data_banks = CONV_FIELD(c, CNA_CBUF_CON0, CBUF_CON0_DATA_BANK);
	u32 line_words = CONV_FIELD(c, CNA_DMA_CON1, DMA_CON1_LINE_STRIDE);
	u32 surf = CONV_FIELD(c, CNA_DMA_CON2, DMA_CON2_SURF_STRIDE);

	c->width = CONV_FIELD(c, CNA_DATA_SIZE0, DATA_SIZE0_WIDTH);
	c->height = CONV_FIELD(c, CNA_DATA_SIZE0, DATA_SIZE0_HEIGHT);
	c->pixels = c->width * c->height;
	c->channels = CONV_FIELD(c, CNA_DATA_SIZE1, DATA_SIZE1_CHANNEL_REAL) + 1;
	c->channels_padded = CONV_FIELD(c, CNA_DATA_SIZE1, DATA_SIZE1_CHANNEL);

	if (!c->pixels)
		return REFUSE(c, CNA_DATA_SIZE0, "empty feature map");
	if (c->channels_padded % RKNPU_CHANNEL_ALIGN || c->channels_padded < c->channels)
		return REFUSE(c, CNA_DATA_SIZE1, "channels must be padded to 16");

	/* Line stride in 4-byte words; the surface stride counts 16 bytes past it. */
	c->in_addr = conv_reg(c, RKNPU_CNA_FEATURE_DATA_ADDR);
	c->in_line = line_words * 4;	/* 28-bit field: fits */
	c->in_plane = ((u64)surf + line_words) * 16;
	if (c->in_line < c->width * RKNPU_ATOM_BYTES)
		return REFUSE(c, CNA_DMA_CON1, "line stride shorter than a line");
	if (c->in_plane < (u64)c->height * c->in_line)
		return REFUSE(c, CNA_DMA_CON2, "surface stride shorter than the lines");

	if (!data_banks || data_banks > banks ||
	    (u64)c->pixels * c->channels_padded > (u64)data_banks * RKNPU_CBUF_BANK_SIZE)
		return REFUSE(c, CNA_CBUF_CON0, "feature map does not fit its CBUF banks");
	return 0;
}

/* True when some window reaches past an edge of the input. */
static bool conv_padded(const struct sim_conv *c)
{
	u64 right = (u64)(c->out_width - 1) * c->stride_x + c->kw;
	u64 bottom = (u64)(c->out_height - 1) * c->stride_y + c->kh;

	return c->pad_left || c->pad_top || right > (u64)c->width + c->pad_left ||
	       bottom > (u64)c->height + c->pad_top;
}

/* Kernel size and padding; the far side's padding follows from the output size. */
static u32 conv_decode_window(struct sim_conv *c)
{
	u32 pad = conv_reg(c, RKNPU_CNA_PAD_CON0);
	s32 pad_value = (s32)conv_reg(c, RKNPU_CNA_PAD_CON1);

	c->kw = CONV_FIELD(c, CNA_WEIGHT_SIZE2, WEIGHT_SIZE2_WIDTH);
	c->kh = CONV_FIELD(c, CNA_WEIGHT_SIZE2, WEIGHT_SIZE2_HEIGHT);
	c->taps = c->kw * c->kh;
	if (!c->taps)
		return REFUSE(c, CNA_WEIGHT_SIZE2, "empty kernel");
	/* inferred: the CNA buffers at least one window of lines before it starts */
	if (CONV_FIELD(c, CNA_CONV_CON2, CONV_CON2_FEATURE_GRAINS) < c->kh + c->stride_y)
		return REFUSE(c, CNA_CONV_CON2, "FEATURE_GRAINS below one window's lines");
	c->pad_left = FIELD_GET(RKNPU_PAD_CON0_LEFT, pad);
	c->pad_top = FIELD_GET(RKNPU_PAD_CON0_TOP, pad);
	if (pad & ~(RKNPU_PAD_CON0_LEFT | RKNPU_PAD_CON0_TOP) ||
	    c->pad_left >= c->kw || c->pad_top >= c->kh)
		return REFUSE(c, CNA_PAD_CON0, "padding must be smaller than the kernel");

	c->out_width = CONV_FIELD(c, CNA_DATA_SIZE2, DATA_SIZE2_DATAOUT_WIDTH);
	c->out_height = CONV_FIELD(c, CORE_DATAOUT_SIZE_0, DATAOUT_SIZE_0_HEIGHT) + 1;
	c->out_pixels = c->out_width * c->out_height;
	/* every window must hold at least one pixel of the input */
	if (!c->out_width ||
	    (u64)(c->out_width - 1) * c->stride_x > (u64)c->width - 1 + c->pad_left)
		return REFUSE(c, CNA_DATA_SIZE2, "output wider than the padded input");
	if ((u64)(c->out_height - 1) * c->stride_y > (u64)c->height - 1 + c->pad_top)
		return REFUSE(c, CORE_DATAOUT_SIZE_0, "output taller than the padded input");
	if (CONV_FIELD(c, CNA_DATA_SIZE3, DATA_SIZE3_DATAOUT_ATOMICS) != c->out_pixels)
		return REFUSE(c, CNA_DATA_SIZE3, "one atom per output pixel");
	/* the pad value only matters when a window reaches past an edge */
	if (conv_padded(c) && (pad_value < S8_MIN || pad_value > S8_MAX))
		return REFUSE(c, CNA_PAD_CON1, "pad value must be an int8");
	c->pad_value = pad_value;
	return 0;
}

static u32 conv_decode_weights(struct sim_conv *c)
{
	u32 banks = c->soc->cbuf_size / RKNPU_CBUF_BANK_SIZE;
	u32 data_banks = CONV_FIELD(c, CNA_CBUF_CON0, CBUF_CON0_DATA_BANK);
	u32 wt_banks = CONV_FIELD(c, CNA_CBUF_CON0, CBUF_CON0_WEIGHT_BANK);
	u64 per_kernel = (u64)c->taps * c->channels_padded;

	c->kernels = CONV_FIELD(c, CNA_WEIGHT_SIZE2, WEIGHT_SIZE2_KERNELS);
	c->wt_bytes = conv_reg(c, RKNPU_CNA_WEIGHT_SIZE0);
	c->wt_addr = conv_reg(c, RKNPU_CNA_DCOMP_ADDR0);
	c->wt_reuse = conv_reg(c, RKNPU_CNA_CBUF_CON0) & RKNPU_CBUF_CON0_WEIGHT_REUSE;

	if (!c->kernels || (c->depthwise && c->kernels != 1))
		return REFUSE(c, CNA_WEIGHT_SIZE2, "kernels: at least one, one when depthwise");
	if (CONV_FIELD(c, CNA_WEIGHT_SIZE1, WEIGHT_SIZE1_BYTES_PER_KERNEL) != per_kernel)
		return REFUSE(c, CNA_WEIGHT_SIZE1, "bytes per kernel differ from taps x channels");
	if (c->kernels * per_kernel != c->wt_bytes)
		return REFUSE(c, CNA_WEIGHT_SIZE0, "weight bytes must be kernels x per kernel");
	if (wt_banks <= RKNPU_CBUF_WEIGHT_SPARE || data_banks + wt_banks > banks ||
	    c->wt_bytes > (wt_banks - RKNPU_CBUF_WEIGHT_SPARE) * RKNPU_CBUF_BANK_SIZE)
		return REFUSE(c, CNA_CBUF_CON0, "weights do not fit their CBUF banks, spare one");
	return 0;
}

/* The CORE and DPU must describe the same cube the CNA feeds. */
static u32 conv_decode_cube(struct sim_conv *c)
{
	u32 max_out = c->depthwise ? c->channels : c->kernels;

	if (CONV_FIELD(c, CORE_DATAOUT_SIZE_0, DATAOUT_SIZE_0_WIDTH) + 1 != c->out_width)
		return REFUSE(c, CORE_DATAOUT_SIZE_0, "output width differs from the CNA");
	c->cube_channels = CONV_FIELD(c, DPU_DATA_CUBE_CHANNEL, CUBE_CHANNEL) + 1;
	c->out_channels = CONV_FIELD(c, DPU_DATA_CUBE_CHANNEL, CUBE_ORIG_CHANNEL) + 1;
	if (CONV_FIELD(c, CORE_DATAOUT_SIZE_1, DATAOUT_SIZE_1_CHANNEL) + 1 != c->cube_channels)
		return REFUSE(c, CORE_DATAOUT_SIZE_1, "channels differ from the DPU cube");
	if (c->out_channels > c->cube_channels || c->out_channels > max_out ||
	    c->cube_channels > ALIGN(max_out, RKNPU_WEIGHT_GROUP))
		return REFUSE(c, DPU_DATA_CUBE_CHANNEL, "channels do not match the kernels");
	if (CONV_FIELD(c, DPU_DATA_CUBE_WIDTH, CUBE_SIZE) + 1 != c->out_width)
		return REFUSE(c, DPU_DATA_CUBE_WIDTH, "width differs from the CORE");
	if (CONV_FIELD(c, DPU_DATA_CUBE_HEIGHT, CUBE_SIZE) + 1 != c->out_height)
		return REFUSE(c, DPU_DATA_CUBE_HEIGHT, "height differs from the CORE");
	return 0;
}

static u32 conv_decode_output(struct sim_conv *c)
{
	u32 fmt = conv_reg(c, RKNPU_DPU_DATA_FORMAT);
	u32 mode = conv_reg(c, RKNPU_DPU_FEATURE_MODE_CFG);

	if (FIELD_GET(RKNPU_FEATURE_MODE_OUTPUT_MODE, mode) != RKNPU_OUTPUT_MODE_MEMORY ||
	    mode & RKNPU_FEATURE_MODE_FLYING_MODE)
		return REFUSE(c, DPU_FEATURE_MODE_CFG, "only output to memory");
	switch (FIELD_GET(RKNPU_DATA_FORMAT_OUT_PRECISION, fmt)) {
	case RKNPU_PRECISION_INT8:
		c->out_bytes = 1;
		break;
	case RKNPU_PRECISION_INT32:
		c->out_bytes = 4;
		break;
	default:
		return REFUSE(c, DPU_DATA_FORMAT, "output precision other than int8/int32");
	}
	if (fmt & ~RKNPU_DATA_FORMAT_OUT_PRECISION)
		return REFUSE(c, DPU_DATA_FORMAT, "only int8 input and processing");
	c->out_addr = conv_reg(c, RKNPU_DPU_DST_BASE_ADDR);
	c->out_plane = conv_reg(c, RKNPU_DPU_DST_SURF_STRIDE) & RKNPU_DST_SURF_STRIDE_MASK;
	if (c->out_plane < (u64)c->out_pixels * RKNPU_ATOM_BYTES)
		return REFUSE(c, DPU_DST_SURF_STRIDE, "surface stride shorter than the cube");
	return 0;
}

/* BS: optional bias add from memory and ReLU; BN and EW must be bypassed. */
/* BS MUL: a per-channel multiplier read with the bias, then a rounding shift. */
static u32 conv_decode_bs_mul(struct sim_conv *c, u32 bs)
{
	u32 mul = conv_reg(c, RKNPU_DPU_BS_MUL_CFG);

	if (bs & RKNPU_BS_CFG_MUL_BYPASS)
		return 0;
	if (!c->bias || mul & ~(RKNPU_BS_MUL_CFG_SHIFT | RKNPU_BS_MUL_CFG_SRC) ||
	    !(mul & RKNPU_BS_MUL_CFG_SRC) || FIELD_GET(RKNPU_BS_MUL_CFG_SHIFT, mul) > 31)
		return REFUSE(c, DPU_BS_MUL_CFG, "only a multiplier from memory, shift 0..31");
	c->bs_mul = true;
	c->bs_shift = FIELD_GET(RKNPU_BS_MUL_CFG_SHIFT, mul);
	return 0;
}

/* BS: bias add from memory, optionally a per-channel multiplier, and ReLU. */
static u32 conv_decode_bs(struct sim_conv *c, u32 op_enable)
{
	u32 bs = conv_reg(c, RKNPU_DPU_BS_CFG);
	u32 use = CONV_FIELD(c, RDMA_BRDMA_CFG, BRDMA_CFG_DATA_USE);
	bool mul = !(bs & RKNPU_BS_CFG_MUL_BYPASS);

	if (bs & RKNPU_BS_CFG_BYPASS)
		return 0;
	if (bs & (RKNPU_BS_CFG_RELUX_EN | RKNPU_BS_CFG_MUL_PRELU))
		return REFUSE(c, DPU_BS_CFG, "only bias add, multiplier and ReLU");
	if (!(bs & RKNPU_BS_CFG_ALU_BYPASS)) {
		if (!(bs & RKNPU_BS_CFG_ALU_SRC) ||
		    FIELD_GET(RKNPU_BS_CFG_ALU_ALGO, bs) != RKNPU_BS_ALU_ALGO_ADD)
			return REFUSE(c, DPU_BS_CFG, "ALU must add an operand from memory");
		if (!(op_enable & RKNPU_BLK_DPU_RDMA) ||
		    use != (mul ? RKNPU_BRDMA_USE_BOTH : RKNPU_BRDMA_USE_ALU))
			return REFUSE(c, RDMA_BRDMA_CFG, "DPU_RDMA must read the BS operands");
		c->bias = true;
		c->bias_addr = conv_reg(c, RKNPU_RDMA_BS_BASE_ADDR);
	}
	c->relu = !(bs & RKNPU_BS_CFG_RELU_BYPASS);
	return conv_decode_bs_mul(c, bs);
}

/* EW: bypassed, or an int8 tensor shaped like the output, converted and added. */
static u32 conv_decode_ew(struct sim_conv *c, u32 op_enable)
{
	u32 ew = conv_reg(c, RKNPU_DPU_EW_CFG);
	u32 erdma = conv_reg(c, RKNPU_RDMA_ERDMA_CFG);
	u32 cvt = conv_reg(c, RKNPU_DPU_EW_CVT_SCALE);

	if (conv_reg(c, RKNPU_DPU_EW_RELUX_CMP))
		return REFUSE(c, DPU_EW_RELUX_CMP, "no ReLUX: must be 0");
	if (ew & RKNPU_STAGE_BYPASS) {
		if (op_enable & RKNPU_BLK_DPU_RDMA && !(erdma & RKNPU_ERDMA_CFG_DISABLE))
			return REFUSE(c, RDMA_ERDMA_CFG, "ERDMA must be disabled when EW is");
		if (conv_reg(c, RKNPU_DPU_EW_CVT_OFFSET))
			return REFUSE(c, DPU_EW_CVT_OFFSET, "must be 0 when EW is bypassed");
		if (cvt != 1)
			return REFUSE(c, DPU_EW_CVT_SCALE, "must be 1 when EW is bypassed");
		return 0;
	}
	/* int32: a channel tile adding the partial sums of the one before (unverified) */
	switch (ew & ~RKNPU_EW_CFG_RELU_BYPASS) {
	case RKNPU_EW_CFG_ADD_INT8:
		c->ew_bytes = 1;
		break;
	case RKNPU_EW_CFG_ADD_INT32:
		c->ew_bytes = 4;
		break;
	default:
		return REFUSE(c, DPU_EW_CFG, "only the add of an int8 or int32 tensor");
	}
	if (c->ew_bytes < c->out_bytes)
		return REFUSE(c, DPU_EW_CFG, "an int8 tensor is added to int8 output only");
	if (!(op_enable & RKNPU_BLK_DPU_RDMA) ||
	    erdma != (c->ew_bytes == 1 ? RKNPU_ERDMA_CFG_INT8 : RKNPU_ERDMA_CFG_INT32))
		return REFUSE(c, RDMA_ERDMA_CFG, "ERDMA must read the tensor EW_CFG adds");
	if (cvt & RKNPU_EW_CVT_TRUNCATE || FIELD_GET(RKNPU_EW_CVT_SHIFT, cvt) > 31)
		return REFUSE(c, DPU_EW_CVT_SCALE, "only a scale and a shift of 0..31");
	c->ew = true;
	c->ew_relu = !(ew & RKNPU_EW_CFG_RELU_BYPASS);
	c->ew_scale = cvt & RKNPU_EW_CVT_SCALE_MASK;
	c->ew_shift = FIELD_GET(RKNPU_EW_CVT_SHIFT, cvt);
	c->ew_offset = (s32)conv_reg(c, RKNPU_DPU_EW_CVT_OFFSET);
	c->ew_addr = conv_reg(c, RKNPU_RDMA_EW_BASE_ADDR);
	c->ew_plane = conv_reg(c, RKNPU_RDMA_EW_SURF_STRIDE) & RKNPU_DST_SURF_STRIDE_MASK;
	if (c->ew_plane < (u64)c->out_pixels * RKNPU_ATOM_BYTES)
		return REFUSE(c, RDMA_EW_SURF_STRIDE, "surface stride shorter than the cube");
	return 0;
}

static u32 conv_decode_post(struct sim_conv *c, u32 op_enable)
{
	u32 scale = conv_reg(c, RKNPU_DPU_OUT_CVT_SCALE);
	u32 shift = conv_reg(c, RKNPU_DPU_OUT_CVT_SHIFT);
	u32 err;

	err = conv_decode_bs(c, op_enable);
	if (err)
		return err;
	if (!(conv_reg(c, RKNPU_DPU_BN_CFG) & RKNPU_STAGE_BYPASS))
		return REFUSE(c, DPU_BN_CFG, "BN stage must be bypassed");
	err = conv_decode_ew(c, op_enable);
	if (err)
		return err;
	if (op_enable & RKNPU_BLK_DPU_RDMA &&
	    !(conv_reg(c, RKNPU_RDMA_FEATURE_MODE_CFG) & RKNPU_RDMA_FEATURE_MRDMA_DISABLE))
		return REFUSE(c, RDMA_FEATURE_MODE_CFG, "MRDMA must be disabled");

	if (scale & ~RKNPU_OUT_CVT_SCALE_MASK)
		return REFUSE(c, DPU_OUT_CVT_SCALE, "fp16 conversion");
	if (shift & ~RKNPU_OUT_CVT_SHIFT_MASK || (shift & RKNPU_OUT_CVT_SHIFT_MASK) > 62)
		return REFUSE(c, DPU_OUT_CVT_SHIFT, "only an integer shift of 0..62");
	c->cvt_scale = scale;
	c->cvt_shift = shift;
	c->cvt_offset = (s32)conv_reg(c, RKNPU_DPU_OUT_CVT_OFFSET);
	c->ow_op = (s16)(conv_reg(c, RKNPU_DPU_BS_OW_OP) & RKNPU_BS_OW_OP_MASK);
	return 0;
}

/* Registers no modelled task uses: written 0 (as Mesa does), checked so. */
static const struct {
	u16 first, last;
	const char *name;
} conv_zero_regs[] = {
	{ RKNPU_CORE_3030, RKNPU_CORE_3030, "CORE_3030" },
	{ RKNPU_DPU_EW_OP_VALUE_0, RKNPU_DPU_EW_OP_VALUE_0 + 4 * (RKNPU_DPU_EW_OP_VALUES - 1),
	  "DPU_EW_OP_VALUE" },
	{ RKNPU_DPU_40C4, RKNPU_DPU_40C4, "DPU_40C4" },
	{ RKNPU_DPU_LUT_FIRST, RKNPU_DPU_LUT_LAST, "DPU_LUT" },
	{ RKNPU_RDMA_SRC_BASE_ADDR, RKNPU_RDMA_SRC_BASE_ADDR, "RDMA_SRC_BASE_ADDR" },
	{ RKNPU_RDMA_NRDMA_CFG, RKNPU_RDMA_BN_BASE_ADDR, "RDMA_NRDMA_CFG/BN_BASE_ADDR" },
	{ RKNPU_RDMA_SRC_DMA_CFG, RKNPU_RDMA_SURF_NOTCH, "RDMA_SRC_DMA_CFG/SURF_NOTCH" },
	{ RKNPU_RDMA_PAD_CFG, RKNPU_RDMA_PAD_CFG, "RDMA_PAD_CFG" },
	{ RKNPU_RDMA_EW_SURF_NOTCH, RKNPU_RDMA_EW_SURF_NOTCH, "RDMA_EW_SURF_NOTCH" },
};

static u32 conv_decode_zero(const struct sim_conv *c)
{
	u32 i, reg;

	for (i = 0; i < ARRAY_SIZE(conv_zero_regs); i++) {
		for (reg = conv_zero_regs[i].first; reg <= conv_zero_regs[i].last; reg += 4) {
			if (!conv_reg(c, reg))
				continue;
			dev_err_ratelimited(c->dev, "sim: %s (0x%04x) = 0x%08x: unused, must be 0\n",
					    conv_zero_regs[i].name, reg, conv_reg(c, reg));
			return RKNPU_INT_SIM_UNSUPPORTED;
		}
	}
	return 0;
}

static u32 conv_decode(struct sim_conv *c, u32 op_enable)
{
	u32 err;

	err = conv_decode_mode(c, op_enable);
	if (!err)
		err = conv_decode_input(c);
	if (!err)
		err = conv_decode_window(c);
	if (!err)
		err = conv_decode_weights(c);
	if (!err)
		err = conv_decode_cube(c);
	if (!err)
		err = conv_decode_output(c);
	if (!err)
		err = conv_decode_post(c, op_enable);
	if (!err)
		err = conv_decode_zero(c);
	return err;
}

/* Bytes the DMAs move for the task. */
static u64 conv_traffic(const struct sim_conv *c)
{
	u32 out_planes = DIV_ROUND_UP(c->cube_channels * c->out_bytes, RKNPU_ATOM_BYTES);
	u64 bytes = (u64)c->pixels * c->channels_padded;

	if (!c->wt_reuse)
		bytes += c->wt_bytes;
	if (c->bias)
		bytes += c->out_channels * sizeof(u32) * (c->bs_mul ? 2 : 1);
	if (c->ew)
		bytes += (u64)DIV_ROUND_UP(c->out_channels * c->ew_bytes, RKNPU_ATOM_BYTES) *
			 c->out_pixels * RKNPU_ATOM_BYTES;
	return bytes + (u64)out_planes * c->out_pixels * RKNPU_ATOM_BYTES;
}

/*
 * What the task costs the array and the DPU (datapath.rst, "Timing model"):
 * a direct convolution takes one cycle per output pixel, tap, group of 32
 * input channels and group of 32 kernels; a depthwise one a cycle per
 * output pixel, tap and group of 64 channels. Before the array starts, the
 * CBUF holds the first kernel group's weights and the window's first lines.
 */
static void conv_cost(const struct sim_conv *c, struct rkaccel_sim_work *w)
{
	u32 per_atom = RKNPU_ATOM_BYTES / c->out_bytes, groups;
	u64 lines;

	if (c->depthwise) {
		groups = DIV_ROUND_UP(c->channels, RKACCEL_SIM_DW_CHANNELS);
		w->array_cycles = (u64)c->out_pixels * c->taps * groups;
	} else {
		groups = DIV_ROUND_UP(c->out_channels, RKACCEL_SIM_ARRAY_KERNELS);
		w->array_cycles = (u64)c->out_pixels * c->taps * groups *
				  DIV_ROUND_UP(c->channels, RKACCEL_SIM_ARRAY_CHANNELS);
	}
	w->dpu_elems = (u64)c->out_pixels * roundup(c->out_channels, per_atom);
	lines = min_t(u64, (u64)c->kh * c->width, c->pixels);
	w->fill_bytes = lines * c->channels_padded;
	if (!c->wt_reuse)
		w->fill_bytes += c->wt_bytes / groups;
}

/* Feature map -> x[pixel][channel]; returns 0 or -EFAULT. */
static int conv_fetch_input(const struct sim_conv *c, struct rkaccel_vm *vm, s8 *x, u8 *line)
{
	u32 planes = c->channels_padded / RKNPU_CHANNEL_ALIGN;
	u32 line_bytes = c->width * RKNPU_ATOM_BYTES;
	u32 p, row, i;

	for (p = 0; p < planes; p++) {
		for (row = 0; row < c->height; row++) {
			u64 addr = c->in_addr + p * c->in_plane + (u64)row * c->in_line;

			if (rkaccel_vm_read(vm, addr, line, line_bytes))
				return -EFAULT;
			for (i = 0; i < line_bytes; i++) {
				u32 ch = p * RKNPU_CHANNEL_ALIGN + i % RKNPU_ATOM_BYTES;
				u32 pix = row * c->width + i / RKNPU_ATOM_BYTES;

				if (ch < c->channels)
					x[(size_t)pix * c->channels + ch] = (s8)line[i];
			}
		}
	}
	return 0;
}

/* Channels one kernel reads: all of them, or its own one when depthwise. */
static u32 conv_kernel_channels(const struct sim_conv *c)
{
	return c->depthwise ? 1 : c->channels;
}

/* Weight layout -> w[kernel][tap][channel] for the kernels that produce output. */
static int conv_fetch_weights(const struct sim_conv *c, struct rkaccel_vm *vm, s8 *w, u8 *raw)
{
	u32 kc = conv_kernel_channels(c);
	u32 n, t, ch;

	if (rkaccel_vm_read(vm, c->wt_addr, raw, c->wt_bytes))
		return -EFAULT;
	for (n = 0; n < c->out_channels; n++) {
		for (t = 0; t < c->taps; t++) {
			for (ch = 0; ch < kc; ch++) {
				u32 off = c->depthwise ?
					rknpu_weight_offset_kxk(0, n, t, c->taps, 1,
								c->channels_padded) :
					rknpu_weight_offset_kxk(n, ch, t, c->taps, c->kernels,
								c->channels_padded);

				w[((size_t)n * c->taps + t) * kc + ch] = (s8)raw[off];
			}
		}
	}
	return 0;
}

/* The BS operands of one output plane's channels. */
struct conv_bs {
	s32 bias[RKNPU_ATOM_BYTES];
	s32 mul[RKNPU_ATOM_BYTES];
};

/* Output channels in plane @plane: none past the real ones. */
static u32 conv_plane_channels(const struct sim_conv *c, u32 plane)
{
	u32 per_atom = RKNPU_ATOM_BYTES / c->out_bytes, first = plane * per_atom;

	return first < c->out_channels ? min(per_atom, c->out_channels - first) : 0;
}

/* Plane @plane's bias, or (bias, multiplier) pairs -> @bs; 0 or -EFAULT. */
static int conv_fetch_bias(const struct sim_conv *c, struct rkaccel_vm *vm, u32 plane,
			   struct conv_bs *bs)
{
	u32 words = c->bs_mul ? 2 : 1, n = conv_plane_channels(c, plane), j;
	u64 first = (u64)plane * (RKNPU_ATOM_BYTES / c->out_bytes);
	__le32 raw[2 * RKNPU_ATOM_BYTES];

	if (!c->bias || !n)
		return 0;
	if (rkaccel_vm_read(vm, c->bias_addr + first * words * 4, raw, n * words * 4))
		return -EFAULT;
	for (j = 0; j < n; j++) {
		bs->bias[j] = (s32)le32_to_cpu(raw[j * words]);
		bs->mul[j] = c->bs_mul ? (s16)le32_to_cpu(raw[j * words + 1]) : 1;
	}
	return 0;
}

static s64 conv_round_shift(s64 v, u32 shift)
{
	return shift ? (v + (1LL << (shift - 1))) >> shift : v;
}

/* EW: the converted operand added, int32 saturation, then EW's ReLU. */
static s64 conv_ew(const struct sim_conv *c, s64 acc, s32 e)
{
	acc += conv_round_shift(((s64)e + c->ew_offset) * c->ew_scale, c->ew_shift);
	acc = clamp_t(s64, acc, S32_MIN, S32_MAX);
	return c->ew_relu && acc < 0 ? 0 : acc;
}

/* Accumulator -> output value: BS (@j of @bs), EW (@e, when on), OUT_CVT, saturation. */
static s64 conv_post(const struct sim_conv *c, s64 acc, const struct conv_bs *bs, u32 j, s32 e)
{
	/* CACC -> DPU: drop CLIP_TRUNCATE bits, rounding half up, int32 saturation */
	if (c->truncate)
		acc = clamp_t(s64, conv_round_shift(acc, c->truncate), S32_MIN, S32_MAX);
	if (c->bias)
		acc += bs->bias[j];
	if (c->bs_mul) {
		acc = conv_round_shift(acc * bs->mul[j], c->bs_shift);
		acc = clamp_t(s64, acc, S32_MIN, S32_MAX);	/* the stage's output is 32-bit */
	}
	if (c->relu && acc < 0)
		acc = 0;
	if (c->ew)
		acc = conv_ew(c, acc, e);
	acc = conv_round_shift(acc * c->cvt_scale, c->cvt_shift) + c->cvt_offset;
	if (c->out_bytes == 1)
		return clamp_t(s64, acc, S8_MIN, S8_MAX);
	return clamp_t(s64, acc, S32_MIN, S32_MAX);
}

/* One tap: @kc input values (or the pad value when @x is NULL) times @kc weights. */
static void conv_tap(const struct sim_conv *c, const s8 *x, const s8 *w, u32 kc,
		     s64 *dot, s64 *sum)
{
	s32 d = 0, s = 0;	/* kc <= 2^14: int8 x int8 sums fit */
	u32 i;

	if (!x) {
		for (i = 0; i < kc; i++)
			d += w[i];
		*dot += (s64)d * c->pad_value;
		*sum += (s64)kc * c->pad_value;
		return;
	}
	for (i = 0; i < kc; i++) {
		d += x[i] * w[i];
		s += x[i];
	}
	*dot += d;
	*sum += s;
}

/* Accumulator of kernel @n at output pixel (@ox, @oy), before the DPU. */
static s64 conv_window(const struct sim_conv *c, const s8 *x, const s8 *w, u32 n,
		       u32 ox, u32 oy)
{
	u32 kc = conv_kernel_channels(c);
	u32 first = c->depthwise ? n : 0;
	s64 dot = 0, sum = 0;
	u32 ky, kx;

	w += (size_t)n * c->taps * kc;
	for (ky = 0; ky < c->kh; ky++) {
		s64 iy = (s64)oy * c->stride_y - c->pad_top + ky;

		for (kx = 0; kx < c->kw; kx++, w += kc) {
			s64 ix = (s64)ox * c->stride_x - c->pad_left + kx;
			const s8 *px = NULL;

			if (iy >= 0 && iy < c->height && ix >= 0 && ix < c->width)
				px = x + ((size_t)iy * c->width + ix) * c->channels + first;
			conv_tap(c, px, w, kc, &dot, &sum);
		}
	}
	return dot + c->ow_op * sum;
}

/*
 * EW's operand for channel @j of output pixel @i of a chunk of @count: the
 * chunk's EW planes one after another (conv_fetch_ew()).
 */
static s32 conv_ew_value(const struct sim_conv *c, const u8 *ew, u32 count, u32 i, u32 j)
{
	u32 byte = j * c->ew_bytes;
	const u8 *e = ew + ((size_t)byte / RKNPU_ATOM_BYTES * count + i) * RKNPU_ATOM_BYTES +
		      byte % RKNPU_ATOM_BYTES;

	return c->ew_bytes == 1 ? (s8)*e : (s32)get_unaligned_le32(e);
}

/*
 * Output pixels [@first, @first + @count) of plane @plane, 16 bytes each,
 * into @out; @ew: EW's operand for the same pixels.
 */
static void conv_chunk(const struct sim_conv *c, u32 plane, u32 first, u32 count,
		       const struct rkaccel_sim_scratch *s, const struct conv_bs *bs)
{
	u32 per_atom = RKNPU_ATOM_BYTES / c->out_bytes, real = conv_plane_channels(c, plane);
	u32 i, j;

	memset(s->out, 0, (size_t)count * RKNPU_ATOM_BYTES);
	for (i = 0; i < count; i++) {
		u32 ox = (first + i) % c->out_width, oy = (first + i) / c->out_width;

		for (j = 0; j < real; j++) {
			u8 *dst = s->out + (size_t)i * RKNPU_ATOM_BYTES + j * c->out_bytes;
			s64 v = conv_window(c, s->x, s->w, plane * per_atom + j, ox, oy);
			s32 e = c->ew ? conv_ew_value(c, s->ew, count, i, j) : 0;

			v = conv_post(c, v, bs, j, e);
			if (c->out_bytes == 1)
				*dst = (u8)(s8)v;
			else
				put_unaligned_le32((u32)(s32)v, dst);
		}
	}
}

/*
 * EW's operand for a chunk of output plane @p: the EW planes holding its
 * channels (four int32 planes for one int8 plane), those with real channels.
 */
static int conv_fetch_ew(const struct sim_conv *c, struct rkaccel_vm *vm, u32 p, u32 first,
			 u32 count, u8 *buf)
{
	u32 per_atom = RKNPU_ATOM_BYTES / c->out_bytes;
	u32 subs = per_atom * c->ew_bytes / RKNPU_ATOM_BYTES, k;

	/* without EW, conv_post() never reads the operand */
	if (!c->ew || !conv_plane_channels(c, p))
		return 0;
	for (k = 0; k < subs; k++) {
		u32 q = p * subs + k;

		if ((u64)q * RKNPU_ATOM_BYTES / c->ew_bytes >= c->out_channels)
			break;
		if (rkaccel_vm_read(vm, (u64)c->ew_addr + (u64)q * c->ew_plane +
				    (u64)first * RKNPU_ATOM_BYTES,
				    buf + (size_t)k * count * RKNPU_ATOM_BYTES,
				    (size_t)count * RKNPU_ATOM_BYTES))
			return -EFAULT;
	}
	return 0;
}

/* Inputs whole (the CBUF checks bound them), then the output chunk by chunk. */
static u32 conv_execute(const struct sim_conv *c, struct rkaccel_vm *vm,
			const struct rkaccel_sim_scratch *s)
{
	u32 planes = DIV_ROUND_UP(c->cube_channels * c->out_bytes, RKNPU_ATOM_BYTES);
	u32 p, first, count;

	if (conv_fetch_input(c, vm, s->x, s->raw) || conv_fetch_weights(c, vm, s->w, s->raw))
		return RKNPU_INT_DMA_READ_ERROR;
	for (p = 0; p < planes; p++) {
		struct conv_bs bs;

		if (conv_fetch_bias(c, vm, p, &bs))
			return RKNPU_INT_DMA_READ_ERROR;
		for (first = 0; first < c->out_pixels; first += count) {
			u64 addr = (u64)c->out_addr + (u64)p * c->out_plane +
				   (u64)first * RKNPU_ATOM_BYTES;

			count = min_t(u32, c->out_pixels - first, RKACCEL_SIM_CHUNK_PIXELS);
			if (conv_fetch_ew(c, vm, p, first, count, s->ew))
				return RKNPU_INT_DMA_READ_ERROR;
			conv_chunk(c, p, first, count, s, &bs);
			cond_resched();
			if (rkaccel_vm_write(vm, addr, s->out, (size_t)count * RKNPU_ATOM_BYTES))
				return RKNPU_INT_DMA_WRITE_ERROR;
		}
	}
	return 0;
}

/**
 * rkaccel_sim_scratch_alloc - a core's datapath buffers.
 * @s: the buffers to fill.
 * @cbuf_size: the core's CBUF size, which bounds every input of a task.
 *
 * Return: 0 or -ENOMEM (then nothing is held).
 */
int rkaccel_sim_scratch_alloc(struct rkaccel_sim_scratch *s, u32 cbuf_size)
{
	s->x = kvmalloc(cbuf_size, GFP_KERNEL);
	s->w = kvmalloc(cbuf_size, GFP_KERNEL);
	s->raw = kvmalloc(cbuf_size, GFP_KERNEL);
	/* an int8 output plane's int32 EW operand spans four planes */
	s->ew = kvcalloc(RKACCEL_SIM_CHUNK_PIXELS * 4, RKNPU_ATOM_BYTES, GFP_KERNEL);
	s->out = kvmalloc_array(RKACCEL_SIM_CHUNK_PIXELS, RKNPU_ATOM_BYTES, GFP_KERNEL);
	if (s->x && s->w && s->raw && s->ew && s->out)
		return 0;
	rkaccel_sim_scratch_free(s);
	return -ENOMEM;
}

void rkaccel_sim_scratch_free(struct rkaccel_sim_scratch *s)
{
	kvfree(s->x);
	kvfree(s->w);
	kvfree(s->raw);
	kvfree(s->ew);
	kvfree(s->out);
	memset(s, 0, sizeof(*s));
}

/**
 * rkaccel_sim_conv - run the convolution task held in a core's registers.
 * @dev: the core's device, for messages.
 * @soc: the core's SoC.
 * @regs: its register file (the exec work is the only writer of the blocks).
 * @op_enable: the blocks the task's enable entry started.
 * @vm: the address space the DMAs go through.
 * @scratch: the core's buffers, or NULL: only model time.
 * @work: out, MACs and bytes for the timing model.
 *
 * Return: 0, or the error interrupt bits to raise.
 */
u32 rkaccel_sim_conv(struct device *dev, const struct rkaccel_soc_data *soc, const u32 *regs,
		     u32 op_enable, struct rkaccel_vm *vm,
		     const struct rkaccel_sim_scratch *scratch, struct rkaccel_sim_work *work)
{
	struct sim_conv c = { .dev = dev, .soc = soc, .regs = regs };
	u32 err;

	/* a pooling task runs the PPU alone */
	if (op_enable & (RKNPU_BLK_PPU | RKNPU_BLK_PPU_RDMA))
		return rkaccel_sim_ppu(dev, soc, regs, op_enable, vm, scratch, work);
	err = conv_decode(&c, op_enable);
	if (err)
		return err;
	/* the MACs of the real operation, padding taps included */
	work->macs = (u64)c.out_pixels * c.out_channels * c.taps * conv_kernel_channels(&c);
	work->bytes = conv_traffic(&c);
	conv_cost(&c, work);
	work->out_int32 = c.out_bytes == 4;
	work->out_addr = c.out_addr;
	return scratch ? conv_execute(&c, vm, scratch) : 0;
}
