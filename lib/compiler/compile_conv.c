// SPDX-License-Identifier: MIT
/*
 * Convolution layers: fully connected (a 1x1 convolution over the pixels,
 * read as one column), KxK with stride 1 or 2 and padding on each side,
 * depthwise; per-tensor or per-channel requantization, ReLU, and the add
 * of an earlier tensor (a residual) in the DPU's EW stage. A layer is
 * tiled over kernels (outer: the weights stay in the CBUF) and output rows
 * (inner), each row tile reading the K - stride rows it shares with the
 * one before again and padding only where it meets the input's edge.
 */

#include <endian.h>
#include <errno.h>
#include <string.h>

#include "compile.h"

/* DATAIN_HEIGHT and DATAIN_WIDTH are 11 bits. */
#define TASK_MAX_LINES		2047
/* The per-channel multiplier is a fraction of 2^14 (<= 1: weight_scales <= weight_scale). */
#define PER_CHANNEL_SHIFT	14
#define CONV_BLOCKS		(RKNPU_BLK_CNA | RKNPU_BLK_CORE | RKNPU_BLK_DPU | RKNPU_BLK_DPU_RDMA)

/* One task: a tile of output rows x kernels of a layer. */
struct task_tile {
	uint32_t oy0, out_rows;		/* output rows */
	uint32_t iy0, in_rows, pad_t;	/* input rows read, padding above them */
	uint32_t n0, kernels, out_channels;
	bool weight_reuse;
};

/* Input rows the output rows [oy0, oy0 + n) read, clipped to the input. */
static void tile_input(const struct layer_plan *lp, struct task_tile *t)
{
	int64_t top = (int64_t)t->oy0 * lp->stride - lp->pad_t;
	int64_t end = (int64_t)(t->oy0 + t->out_rows - 1) * lp->stride - lp->pad_t + lp->kh;

	t->pad_t = top < 0 ? (uint32_t)-top : 0;
	t->iy0 = top < 0 ? 0 : (uint32_t)top;
	t->in_rows = (uint32_t)((end > lp->in_h ? lp->in_h : end) - t->iy0);
}

/*
 * Kernels per tile: as many groups of 32 as fit with room for kh input
 * lines, the weights given one bank more than they fill (Mesa's spare bank).
 */
static int plan_kernels(struct layer_plan *lp, uint32_t banks)
{
	uint32_t group_bytes = RKNPU_WEIGHT_GROUP * lp->taps * lp->channels_padded;
	uint32_t groups = DIV_UP(lp->kernels, RKNPU_WEIGHT_GROUP);
	uint64_t min_data = (uint64_t)lp->kh * lp->in_w * lp->channels_padded;
	uint32_t min_data_banks = (uint32_t)DIV_UP(min_data, RKNPU_CBUF_BANK_SIZE);
	uint32_t fit;

	if (min_data_banks + RKNPU_CBUF_WEIGHT_SPARE >= banks)
		return -E2BIG;	/* one window's lines do not fit: needs channel tiles */
	if (lp->dw) {
		lp->tile_kernels = 1;
		lp->weight_banks = DIV_UP(lp->taps * lp->channels_padded, RKNPU_CBUF_BANK_SIZE) +
				   RKNPU_CBUF_WEIGHT_SPARE;
		return lp->weight_banks + min_data_banks > banks ? -E2BIG : 0;
	}
	fit = (banks - min_data_banks - RKNPU_CBUF_WEIGHT_SPARE) * RKNPU_CBUF_BANK_SIZE /
	      group_bytes;
	if (!fit)
		return -E2BIG;	/* one group of kernels does not fit */
	lp->tile_kernels = groups <= fit ? lp->kernels : fit * RKNPU_WEIGHT_GROUP;
	lp->weight_banks = DIV_UP(lp->tile_kernels * lp->taps * lp->channels_padded,
				  RKNPU_CBUF_BANK_SIZE) + RKNPU_CBUF_WEIGHT_SPARE;
	return 0;
}

/* Output rows per tile: the most whose input lines fit the data banks. */
static int plan_rows(struct layer_plan *lp, uint32_t banks)
{
	uint64_t line = (uint64_t)lp->in_w * lp->channels_padded;
	uint64_t lines;
	uint32_t rows;

	lp->data_banks = banks - lp->weight_banks;
	lines = (uint64_t)lp->data_banks * RKNPU_CBUF_BANK_SIZE / line;
	if (lines > TASK_MAX_LINES)
		lines = TASK_MAX_LINES;
	if (lines < lp->kh)
		return -E2BIG;
	rows = (uint32_t)((lines - lp->kh) / lp->stride + 1);
	lp->tile_rows = rows < lp->out_h ? rows : lp->out_h;
	return 0;
}

/* The requantization of the output, the per-channel stage, the added tensor's. */
static int plan_quant(struct layer_plan *lp)
{
	const struct rkaccel_layer_desc *d = lp->desc;
	float acc_scale = d->in_scale * d->weight_scale;
	int ret;

	lp->per_channel = d->weight_scales != NULL;
	lp->bias_words = lp->per_channel ? 2 : 1;
	if (lp->out_int32) {
		lp->cvt_scale = 1;
		lp->cvt_shift = 0;
		lp->cvt_offset = 0;
	} else {
		ret = requant_out_cvt(acc_scale / d->out_scale, &lp->cvt_scale, &lp->cvt_shift);
		if (ret)
			return ret;
		lp->cvt_offset = d->out_zero_point;
	}
	if (!(d->flags & RKACCEL_LAYER_ADD))
		return 0;
	/* the added tensor in accumulator units: (x - zp) * its scale / acc_scale */
	ret = requant_ew_cvt(lp->add.scale / acc_scale, &lp->ew_scale, &lp->ew_shift);
	return ret || lp->ew_shift > 31 ? -ERANGE : 0;
}

int conv_plan(struct layer_plan *lp, uint32_t banks)
{
	const struct rkaccel_layer_desc *d = lp->desc;
	bool fc = d->op == RKACCEL_OP_FC;

	/* a 1x1 layer reads the pixels as one column: the longest tiles */
	lp->in_h = fc ? lp->in.h * lp->in.w : lp->in.h;
	lp->in_w = fc ? 1 : lp->in.w;
	lp->out_h = fc ? lp->out.h * lp->out.w : lp->out.h;
	lp->out_w = fc ? 1 : lp->out.w;
	lp->kw = fc ? 1 : d->kernel_w;
	lp->kh = fc ? 1 : d->kernel_h;
	lp->stride = fc ? 1 : d->stride;
	lp->pad_t = d->pad_top;
	lp->pad_l = d->pad_left;
	lp->taps = lp->kw * lp->kh;
	lp->dw = d->op == RKACCEL_OP_DWCONV;
	lp->out_int32 = d->flags & RKACCEL_LAYER_OUT_INT32;
	lp->channels_padded = ALIGN_UP(d->in_features, RKNPU_CHANNEL_ALIGN);
	lp->kernels = lp->dw ? 1 : ALIGN_UP(d->out_features, 2);
	if (lp->in_w > TASK_MAX_LINES || lp->out_w > TASK_MAX_LINES)
		return -E2BIG;
	/* SURF_STRIDE = plane / 16 - LINE_STRIDE may not be negative (compile.h) */
	if (lp->in.plane / 16 < lp->in_w * RKNPU_ATOM_BYTES / 4)
		return -E2BIG;
	if (plan_kernels(lp, banks) || plan_rows(lp, banks))
		return -E2BIG;
	return plan_quant(lp);
}

uint64_t conv_weight_bytes(const struct layer_plan *lp)
{
	return (uint64_t)lp->kernels * lp->taps * lp->channels_padded;
}

/* round(weight_scales[n] / weight_scale * 2^14), in double: the same everywhere. */
static int32_t channel_multiplier(const struct rkaccel_layer_desc *d, uint32_t n)
{
	return (int32_t)((double)d->weight_scales[n] / (double)d->weight_scale *
			 (1 << PER_CHANNEL_SHIFT) + 0.5);
}

/* Weight @tap of input channel @c of output @n, from the model's layout. */
static int8_t model_weight(const struct layer_plan *lp, uint32_t n, uint32_t tap, uint32_t c)
{
	const struct rkaccel_layer_desc *d = lp->desc;

	if (lp->dw)
		return d->weights[(size_t)n * lp->taps + tap];
	return d->weights[((size_t)n * lp->taps + tap) * d->in_features + c];
}

/* Weights in the CNA's layout; biases with the input zero point folded in. */
int conv_fill_weights(const struct layer_plan *lp, uint8_t *blob)
{
	const struct rkaccel_layer_desc *d = lp->desc;
	uint8_t *w = blob + lp->wt_off;
	int32_t *bias = (int32_t *)(void *)(blob + lp->bias_off);
	uint32_t n, c, tap, channels = lp->dw ? 1 : d->in_features;

	for (n = 0; n < d->out_features; n++) {
		int64_t sum = 0, folded;

		for (tap = 0; tap < lp->taps; tap++) {
			for (c = 0; c < channels; c++) {
				int8_t v = model_weight(lp, n, tap, c);

				/* depthwise: one kernel, channel n */
				w[lp->dw ? rknpu_weight_offset_kxk(0, n, tap, lp->taps, 1,
								   lp->channels_padded) :
				  rknpu_weight_offset_kxk(n, c, tap, lp->taps, lp->kernels,
							  lp->channels_padded)] = (uint8_t)v;
				sum += v;
			}
		}
		/* sum((x - zp) * w) + b == sum(x * w) + (b - zp * sum(w)); padding reads zp */
		folded = (int64_t)d->bias[n] - (int64_t)d->in_zero_point * sum;
		if (folded < INT32_MIN || folded > INT32_MAX)
			return -ERANGE;
		bias[n * lp->bias_words] = (int32_t)htole32((uint32_t)folded);
		if (lp->per_channel)
			bias[n * lp->bias_words + 1] =
				(int32_t)htole32((uint32_t)channel_multiplier(d, n));
	}
	return 0;
}

static void put_cna(struct rkaccel_program *p, const struct layer_plan *lp,
		    const struct task_tile *t)
{
	uint32_t line_words = lp->in_w * RKNPU_ATOM_BYTES / 4;
	uint32_t wt_bytes = t->kernels * lp->taps * lp->channels_padded;

	prog_put(p, RKNPU_CNA_CBUF_CON0,
		 field(RKNPU_CBUF_CON0_WEIGHT_REUSE, t->weight_reuse) |
		 field(RKNPU_CBUF_CON0_WEIGHT_BANK, lp->weight_banks) |
		 field(RKNPU_CBUF_CON0_DATA_BANK, lp->data_banks));
	prog_put(p, RKNPU_CNA_DCOMP_REGNUM, 0);
	prog_put(p, RKNPU_CNA_DCOMP_CTRL, 0);
	prog_put(p, RKNPU_CNA_CONV_CON1,
		 field(RKNPU_CONV_CON1_CONV_MODE, lp->dw ? RKNPU_CONV_MODE_DEPTHWISE : 0));
	prog_put(p, RKNPU_DPU_S_POINTER, 0xe);
	prog_put(p, RKNPU_RDMA_S_POINTER, 0xe);
	prog_put(p, RKNPU_CNA_CONV_CON2, field(RKNPU_CONV_CON2_FEATURE_GRAINS,
					       RKNPU_FEATURE_GRAINS_BASE + lp->stride));
	prog_put(p, RKNPU_CNA_CONV_CON3, field(RKNPU_CONV_CON3_STRIDE_X, lp->stride) |
		 field(RKNPU_CONV_CON3_STRIDE_Y, lp->stride));
	prog_put(p, RKNPU_CNA_DATA_SIZE0, field(RKNPU_DATA_SIZE0_WIDTH, lp->in_w) |
		 field(RKNPU_DATA_SIZE0_HEIGHT, t->in_rows));
	prog_put(p, RKNPU_CNA_DATA_SIZE1,
		 field(RKNPU_DATA_SIZE1_CHANNEL_REAL, lp->desc->in_features - 1) |
		 field(RKNPU_DATA_SIZE1_CHANNEL, lp->channels_padded));
	prog_put(p, RKNPU_CNA_DATA_SIZE2, lp->out_w);
	prog_put(p, RKNPU_CNA_DATA_SIZE3, lp->out_w * t->out_rows);
	prog_put(p, RKNPU_CNA_WEIGHT_SIZE0, wt_bytes);
	prog_put(p, RKNPU_CNA_WEIGHT_SIZE1, lp->taps * lp->channels_padded);
	prog_put(p, RKNPU_CNA_WEIGHT_SIZE2, field(RKNPU_WEIGHT_SIZE2_WIDTH, lp->kw) |
		 field(RKNPU_WEIGHT_SIZE2_HEIGHT, lp->kh) |
		 field(RKNPU_WEIGHT_SIZE2_KERNELS, t->kernels));
	prog_put(p, RKNPU_CNA_CBUF_CON1, DIV_UP(lp->channels_padded, 64));
	prog_put(p, RKNPU_CNA_CVT_CON0, RKNPU_CVT_CON0_DATA_SIGN | RKNPU_CVT_CON0_CVT_TYPE |
		 RKNPU_CVT_CON0_CVT_BYPASS);
	for (uint16_t r = RKNPU_CNA_CVT_CON1; r < RKNPU_CNA_CVT_CON1 + 16; r += 4)
		prog_put(p, r, 1u << 16);	/* scale 1, offset 0 */
	prog_put(p, RKNPU_CNA_FC_CON0, 0);
	prog_put(p, RKNPU_CNA_FC_CON1, 0);
	prog_put(p, RKNPU_CNA_PAD_CON0, field(RKNPU_PAD_CON0_LEFT, lp->pad_l) |
		 field(RKNPU_PAD_CON0_TOP, t->pad_t));
	prog_put_addr(p, RKNPU_CNA_FEATURE_DATA_ADDR, lp->in.buf,
		      lp->in.off + t->iy0 * lp->in_w * RKNPU_ATOM_BYTES);
	prog_put(p, RKNPU_CNA_FC_CON2, 0);
	prog_put(p, RKNPU_CNA_DMA_CON0, 0x000f000f);	/* weight and data burst 16 */
	prog_put(p, RKNPU_CNA_DMA_CON1, line_words);
	prog_put(p, RKNPU_CNA_DMA_CON2, lp->in.plane / 16 - line_words);
	prog_put(p, RKNPU_CNA_FC_DATA_SIZE0, (lp->in_w << 16) | t->in_rows);
	prog_put(p, RKNPU_CNA_FC_DATA_SIZE1, lp->channels_padded);
	prog_put_addr(p, RKNPU_CNA_DCOMP_ADDR0, RKACCEL_BUF_WEIGHTS,
		      lp->wt_off + t->n0 * lp->taps * lp->channels_padded);
	prog_put(p, RKNPU_CNA_CVT_CON5, 0);
	prog_put(p, RKNPU_CNA_PAD_CON1, (uint32_t)lp->desc->in_zero_point);
}

static void put_core(struct rkaccel_program *p, const struct layer_plan *lp,
		     const struct task_tile *t, uint32_t cube)
{
	prog_put(p, RKNPU_CORE_MISC_CFG, RKNPU_MISC_CFG_QD_EN | (lp->dw ? RKNPU_MISC_CFG_DW_EN : 0));
	prog_put(p, RKNPU_CORE_DATAOUT_SIZE_0, field(RKNPU_DATAOUT_SIZE_0_HEIGHT, t->out_rows - 1) |
		 field(RKNPU_DATAOUT_SIZE_0_WIDTH, lp->out_w - 1));
	prog_put(p, RKNPU_CORE_DATAOUT_SIZE_1, cube - 1);
	prog_put(p, RKNPU_CORE_CLIP_TRUNCATE, 0);
	prog_put(p, RKNPU_CORE_3030, 0);
}

/* Byte offset of output row @oy0, channel @n0 of tensor @tp. */
static uint32_t tile_offset(const struct tensor_place *tp, const struct layer_plan *lp,
			    uint32_t oy0, uint32_t n0)
{
	uint32_t per_atom = RKNPU_ATOM_BYTES / tp->elem_bytes;

	return tp->off + n0 / per_atom * tp->plane + oy0 * lp->out_w * RKNPU_ATOM_BYTES;
}

/* BS: bias, per-channel multiplier, ReLU unless it follows an add. */
static void put_dpu_bs(struct rkaccel_program *p, const struct layer_plan *lp)
{
	uint32_t flags = lp->desc->flags;
	bool add = flags & RKACCEL_LAYER_ADD;
	bool relu = (flags & RKACCEL_LAYER_RELU) && !add;

	prog_put(p, RKNPU_DPU_BS_CFG, field(RKNPU_BS_CFG_ALU_ALGO, RKNPU_BS_ALU_ALGO_ADD) |
		 RKNPU_BS_CFG_ALU_SRC | (lp->per_channel ? 0 : RKNPU_BS_CFG_MUL_BYPASS) |
		 (relu ? 0 : RKNPU_BS_CFG_RELU_BYPASS));
	prog_put(p, RKNPU_DPU_BS_ALU_CFG, 0);
	prog_put(p, RKNPU_DPU_BS_MUL_CFG, lp->per_channel ?
		 field(RKNPU_BS_MUL_CFG_SHIFT, PER_CHANNEL_SHIFT) | RKNPU_BS_MUL_CFG_SRC : 0);
	prog_put(p, RKNPU_DPU_BS_RELUX_CMP, 0);
	prog_put(p, RKNPU_DPU_BS_OW_CFG, lp->out_int32 ? 0x7fc : 0x124);
	prog_put(p, RKNPU_DPU_BS_OW_OP, 0);	/* symmetric weights */
}

/* EW: bypassed, or the residual tensor converted and added, then ReLU. */
static void put_dpu_ew(struct rkaccel_program *p, const struct layer_plan *lp)
{
	uint32_t flags = lp->desc->flags;

	if (!(flags & RKACCEL_LAYER_ADD)) {
		/* every EW part bypassed, its operands zeroed as Mesa does */
		prog_put(p, RKNPU_DPU_EW_CFG, 0x383);
		prog_put(p, RKNPU_DPU_EW_CVT_OFFSET, 0);
		prog_put(p, RKNPU_DPU_EW_CVT_SCALE, 1);
		prog_put(p, RKNPU_DPU_EW_RELUX_CMP, 0);
		return;
	}
	prog_put(p, RKNPU_DPU_EW_CFG, RKNPU_EW_CFG_ADD_INT8 |
		 (flags & RKACCEL_LAYER_RELU ? 0 : RKNPU_EW_CFG_RELU_BYPASS));
	prog_put(p, RKNPU_DPU_EW_CVT_OFFSET, (uint32_t)-lp->add.zp);
	prog_put(p, RKNPU_DPU_EW_CVT_SCALE, field(RKNPU_EW_CVT_SHIFT, lp->ew_shift) |
		 field(RKNPU_EW_CVT_SCALE_MASK, lp->ew_scale));
	prog_put(p, RKNPU_DPU_EW_RELUX_CMP, 0);
}

/* The DPU registers no task here uses: zero, as Mesa writes them. */
static void put_dpu_unused(struct rkaccel_program *p)
{
	uint16_t r;

	for (r = 0; r < RKNPU_DPU_EW_OP_VALUES; r++)
		prog_put(p, RKNPU_DPU_EW_OP_VALUE_0 + 4 * r, 0);
	prog_put(p, RKNPU_DPU_40C4, 0);
	for (r = RKNPU_DPU_LUT_FIRST; r <= RKNPU_DPU_LUT_LAST; r += 4)
		prog_put(p, r, 0);
}

static void put_dpu(struct rkaccel_program *p, const struct layer_plan *lp,
		    const struct task_tile *t, uint32_t cube)
{
	prog_put(p, RKNPU_DPU_FEATURE_MODE_CFG, (15u << 5) |
		 field(RKNPU_FEATURE_MODE_OUTPUT_MODE, RKNPU_OUTPUT_MODE_MEMORY) |
		 field(RKNPU_FEATURE_MODE_CONV_MODE, lp->dw ? RKNPU_CONV_MODE_DEPTHWISE : 0));
	prog_put(p, RKNPU_DPU_DATA_FORMAT, field(RKNPU_DATA_FORMAT_OUT_PRECISION, lp->out_int32 ?
		 RKNPU_PRECISION_INT32 : RKNPU_PRECISION_INT8));
	prog_put_addr(p, RKNPU_DPU_DST_BASE_ADDR, lp->out.buf,
		      tile_offset(&lp->out, lp, t->oy0, t->n0));
	prog_put(p, RKNPU_DPU_DST_SURF_STRIDE, lp->out.plane);
	prog_put(p, RKNPU_DPU_DATA_CUBE_WIDTH, lp->out_w - 1);
	prog_put(p, RKNPU_DPU_DATA_CUBE_HEIGHT, t->out_rows - 1);
	prog_put(p, RKNPU_DPU_DATA_CUBE_NOTCH, 0);
	prog_put(p, RKNPU_DPU_DATA_CUBE_CHANNEL, field(RKNPU_CUBE_ORIG_CHANNEL, t->out_channels - 1) |
		 field(RKNPU_CUBE_CHANNEL, cube - 1));
	put_dpu_bs(p, lp);
	prog_put(p, RKNPU_DPU_WDMA_SIZE_0, cube - 1);
	prog_put(p, RKNPU_DPU_WDMA_SIZE_1, ((t->out_rows - 1) << 16) | (lp->out_w - 1));
	prog_put(p, RKNPU_DPU_BN_CFG, 0x53);	/* ReLU, MUL, ALU and the stage bypassed */
	put_dpu_ew(p, lp);
	prog_put(p, RKNPU_DPU_OUT_CVT_OFFSET, (uint32_t)lp->cvt_offset);
	prog_put(p, RKNPU_DPU_OUT_CVT_SCALE, lp->cvt_scale);
	prog_put(p, RKNPU_DPU_OUT_CVT_SHIFT, lp->cvt_shift);
	prog_put(p, RKNPU_DPU_SURFACE_ADD, lp->out.plane * (lp->out_int32 ? 8 : 2));
	put_dpu_unused(p);
}

static void put_rdma(struct rkaccel_program *p, const struct layer_plan *lp,
		     const struct task_tile *t, uint32_t cube)
{
	bool add = lp->desc->flags & RKACCEL_LAYER_ADD;

	prog_put(p, RKNPU_RDMA_DATA_CUBE_WIDTH, lp->out_w - 1);
	prog_put(p, RKNPU_RDMA_DATA_CUBE_HEIGHT, t->out_rows - 1);
	prog_put(p, RKNPU_RDMA_DATA_CUBE_CHANNEL, cube - 1);
	prog_put(p, RKNPU_RDMA_SRC_BASE_ADDR, 0);	/* MRDMA unused */
	prog_put(p, RKNPU_RDMA_BRDMA_CFG, field(RKNPU_BRDMA_CFG_DATA_USE, lp->per_channel ?
		 RKNPU_BRDMA_USE_BOTH : RKNPU_BRDMA_USE_ALU));
	prog_put_addr(p, RKNPU_RDMA_BS_BASE_ADDR, RKACCEL_BUF_WEIGHTS,
		      lp->bias_off + t->n0 * 4 * lp->bias_words);
	prog_put(p, RKNPU_RDMA_NRDMA_CFG, 0);		/* BN operands unused */
	prog_put(p, RKNPU_RDMA_BN_BASE_ADDR, 0);
	prog_put(p, RKNPU_RDMA_ERDMA_CFG, add ? RKNPU_ERDMA_CFG_INT8 : RKNPU_ERDMA_CFG_DISABLE);
	if (add) {
		prog_put_addr(p, RKNPU_RDMA_EW_BASE_ADDR, lp->add.buf,
			      tile_offset(&lp->add, lp, t->oy0, t->n0));
		prog_put(p, RKNPU_RDMA_EW_SURF_STRIDE, lp->add.plane);
	} else {
		prog_put(p, RKNPU_RDMA_EW_BASE_ADDR, 0);
		prog_put(p, RKNPU_RDMA_EW_SURF_STRIDE, 0);
	}
	prog_put(p, RKNPU_RDMA_FEATURE_MODE_CFG, (15u << 11) | RKNPU_RDMA_FEATURE_MRDMA_DISABLE);
	prog_put(p, RKNPU_RDMA_SRC_DMA_CFG, 0);
	prog_put(p, RKNPU_RDMA_SURF_NOTCH, 0);
	prog_put(p, RKNPU_RDMA_PAD_CFG, 0);
	prog_put(p, RKNPU_RDMA_WEIGHT, 0x01010101);
	prog_put(p, RKNPU_RDMA_EW_SURF_NOTCH, 0);
}

static void put_task(struct rkaccel_program *p, const struct layer_plan *lp,
		     const struct task_tile *t)
{
	uint32_t cube = ALIGN_UP(t->out_channels, RKNPU_WEIGHT_GROUP);

	prog_task_begin(p);
	put_cna(p, lp, t);
	put_core(p, lp, t, cube);
	put_dpu(p, lp, t, cube);
	put_rdma(p, lp, t, cube);
	prog_task_end(p, CONV_BLOCKS);
	p->macs += (uint64_t)t->out_rows * lp->out_w * t->out_channels * lp->taps *
		   (lp->dw ? 1 : lp->desc->in_features);
}

/* Tiles over kernels (outer, weights stay in CBUF) and output rows (inner). */
void conv_put_layer(struct rkaccel_program *p, const struct layer_plan *lp)
{
	uint32_t n = lp->desc->out_features;

	for (uint32_t n0 = 0; n0 < lp->kernels; n0 += lp->tile_kernels) {
		for (uint32_t oy0 = 0; oy0 < lp->out_h; oy0 += lp->tile_rows) {
			struct task_tile t = {
				.oy0 = oy0,
				.out_rows = lp->out_h - oy0 < lp->tile_rows ? lp->out_h - oy0 :
									      lp->tile_rows,
				.n0 = n0,
				.kernels = lp->kernels - n0 < lp->tile_kernels ?
					   lp->kernels - n0 : lp->tile_kernels,
				.weight_reuse = oy0 > 0,
			};

			t.out_channels = lp->dw ? n : n - n0 < t.kernels ? n - n0 : t.kernels;
			tile_input(lp, &t);
			put_task(p, lp, &t);
		}
	}
}
