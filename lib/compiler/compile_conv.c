// SPDX-License-Identifier: MIT
/*
 * Convolution layers: fully connected (a 1x1 convolution over the pixels,
 * read as one column), KxK with a stride of 1 to 4 and padding on each
 * side, depthwise; per-tensor or per-channel requantization, ReLU, and the
 * add of an earlier tensor (a residual) in the DPU's EW stage. A layer is
 * tiled over kernels (outer: the weights stay in the CBUF), output rows
 * (each row tile reading the K - stride rows it shares with the one before
 * again and padding only where it meets the input's edge) and, when one
 * group of kernels does not fit the CBUF (VGG's FC over 25,088 inputs),
 * input channels (inner): each channel tile adds its int32 partial sums to
 * the previous tile's in the EW stage, the last one requantizes.
 */

#include <endian.h>
#include <errno.h>
#include <string.h>

#include "compile.h"

/* DATAIN_HEIGHT and DATAIN_WIDTH are 11 bits. */
#define TASK_MAX_LINES		2047
/* DATAIN_CHANNEL_REAL is 14 bits (16384): channel tiles take at most half. */
#define TASK_MAX_CHANNELS	8192
/* The per-channel multiplier is a fraction of 2^14 (<= 1: weight_scales <= weight_scale). */
#define PER_CHANNEL_SHIFT	14
#define CONV_BLOCKS		(RKNPU_BLK_CNA | RKNPU_BLK_CORE | RKNPU_BLK_DPU | RKNPU_BLK_DPU_RDMA)

/* Where a task writes, or reads the previous channel tile's partial sums. */
struct tile_dst {
	uint32_t buf, off, plane, elem_bytes;
};

/* One task: a tile of output rows x kernels x input channels of a layer. */
struct task_tile {
	uint32_t oy0, out_rows;		/* output rows */
	uint32_t iy0, in_rows, pad_t;	/* input rows read, padding above them */
	uint32_t n0, kernels, out_channels;
	uint32_t c0, channels;		/* input channels [c0, c0 + channels), padded */
	uint32_t ct;			/* channel tile index */
	bool weight_reuse;
	struct tile_dst dst, partial;	/* partial: read when ct > 0 */
};

/* Input rows the output rows [oy0, oy0 + n) read, clipped to the input. */
static void tile_input(const struct layer_plan *lp, struct task_tile *t)
{
	int64_t top = (int64_t)t->oy0 * lp->stride_y - lp->pad_t;
	int64_t end = (int64_t)(t->oy0 + t->out_rows - 1) * lp->stride_y - lp->pad_t + lp->kh;

	t->pad_t = top < 0 ? (uint32_t)-top : 0;
	t->iy0 = top < 0 ? 0 : (uint32_t)top;
	t->in_rows = (uint32_t)((end > lp->in_h ? lp->in_h : end) - t->iy0);
}

/* Weight banks of @kernels kernels over @kc channels, Mesa's spare bank included. */
static uint64_t weight_banks(const struct layer_plan *lp, uint32_t kernels, uint32_t kc)
{
	return DIV_UP((uint64_t)kernels * lp->taps * kc, RKNPU_CBUF_BANK_SIZE) +
	       RKNPU_CBUF_WEIGHT_SPARE;
}

/* Output rows per task whose input lines of @kc channels fit @data_banks; 0: none. */
static uint32_t rows_fit(const struct layer_plan *lp, uint64_t data_banks, uint32_t kc)
{
	uint64_t lines = data_banks * RKNPU_CBUF_BANK_SIZE / ((uint64_t)lp->in_w * kc);
	uint64_t rows;

	if (lines > TASK_MAX_LINES)
		lines = TASK_MAX_LINES;
	if (lines < lp->kh)
		return 0;
	rows = (lines - lp->kh) / lp->stride_y + 1;
	return rows < lp->out_h ? (uint32_t)rows : lp->out_h;
}

/* The best split found so far: fewest tasks, then fewest channel and kernel tiles. */
struct split {
	uint64_t tasks;
	uint32_t kc, kernels, rows, weight_banks;
};

/* Kernels per task (groups of 32, or all) with @kc channels per task, into @best. */
static void try_kernels(const struct layer_plan *lp, uint32_t banks, uint32_t kc,
			struct split *best)
{
	uint32_t groups = lp->dw ? 1 : DIV_UP(lp->kernels, RKNPU_WEIGHT_GROUP);
	uint32_t tiles_c = DIV_UP(lp->channels_padded, kc);

	/* most kernels first: a tie keeps the fewer kernel tiles (less input re-read) */
	for (uint32_t g = groups; g >= 1; g--) {
		uint32_t tk = lp->dw ? 1 : g == groups ? lp->kernels : g * RKNPU_WEIGHT_GROUP;
		uint64_t wb = weight_banks(lp, tk, kc);
		uint32_t rows;
		uint64_t tasks;

		if (wb >= banks)
			continue;
		rows = rows_fit(lp, banks - wb, kc);
		if (!rows)
			continue;
		tasks = (uint64_t)tiles_c * DIV_UP(lp->kernels, tk) * DIV_UP(lp->out_h, rows);
		if (tasks < best->tasks)
			*best = (struct split){ tasks, kc, tk, rows, (uint32_t)wb };
	}
}

/*
 * Input channels per task: all of them when they fit, else the split into
 * channel tiles (multiples of 32, the weight layout's blocks) with the fewest
 * tasks. Partial sums go through the EW stage, which then cannot add a
 * residual, and per-channel multipliers act before it: those layers need
 * every channel in one task.
 */
static int plan_tiles(struct layer_plan *lp, uint32_t banks)
{
	const struct rkaccel_layer_desc *d = lp->desc;
	struct split best = { .tasks = UINT64_MAX };
	uint32_t cp = lp->channels_padded, max_tiles = DIV_UP(cp, RKNPU_WEIGHT_GROUP);

	if (cp <= TASK_MAX_CHANNELS)
		try_kernels(lp, banks, cp, &best);
	if (best.tasks == UINT64_MAX && !lp->dw && !lp->per_channel &&
	    !(d->flags & RKACCEL_LAYER_ADD)) {
		for (uint32_t n = 2; n <= max_tiles; n++) {
			uint32_t kc = ALIGN_UP(DIV_UP(cp, n), RKNPU_WEIGHT_GROUP);

			/* each count of tiles once: the one that its kc gives */
			if (kc <= TASK_MAX_CHANNELS && DIV_UP(cp, kc) == n)
				try_kernels(lp, banks, kc, &best);
		}
	}
	if (best.tasks == UINT64_MAX)
		return -E2BIG;
	lp->tile_channels = best.kc;
	lp->channel_tiles = DIV_UP(cp, best.kc);
	lp->tile_kernels = best.kernels;
	lp->tile_rows = best.rows;
	lp->weight_banks = best.weight_banks;
	lp->data_banks = banks - best.weight_banks;
	return 0;
}

/* The requantization of the output, the per-channel stage, the added tensor's. */
static int plan_quant(struct layer_plan *lp)
{
	const struct rkaccel_layer_desc *d = lp->desc;
	float acc_scale = d->in_scale * d->weight_scale;
	int ret;

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

/*
 * The window as the CNA reads it. A fully connected layer is a 1x1
 * convolution: over the image (@column false) or over its pixels as one
 * column, whose tiles may hold more pixels than an image's rows.
 */
static int plan_window(struct layer_plan *lp, bool column)
{
	const struct rkaccel_layer_desc *d = lp->desc;
	bool fc = d->op == RKACCEL_OP_FC;

	lp->in_h = column ? lp->in.h * lp->in.w : lp->in.h;
	lp->in_w = column ? 1 : lp->in.w;
	lp->out_h = column ? lp->out.h * lp->out.w : lp->out.h;
	lp->out_w = column ? 1 : lp->out.w;
	lp->kw = fc ? 1 : d->kernel_w;
	lp->kh = fc ? 1 : d->kernel_h;
	lp->stride_x = fc ? 1 : d->stride;
	lp->stride_y = lp->stride_x;
	lp->pad_t = d->pad_top;
	lp->pad_l = d->pad_left;
	lp->taps = lp->kw * lp->kh;
	if (lp->in_w > TASK_MAX_LINES || lp->out_w > TASK_MAX_LINES)
		return -E2BIG;
	/* SURF_STRIDE = plane / 16 - LINE_STRIDE may not be negative (compile.h) */
	if (lp->in.plane / 16 < lp->in_w * RKNPU_ATOM_BYTES / 4)
		return -E2BIG;
	return 0;
}

static uint64_t plan_tasks(const struct layer_plan *lp)
{
	return (uint64_t)lp->channel_tiles * DIV_UP(lp->kernels, lp->tile_kernels) *
	       DIV_UP(lp->out_h, lp->tile_rows);
}

int conv_plan(struct layer_plan *lp, uint32_t banks)
{
	const struct rkaccel_layer_desc *d = lp->desc;
	bool fc = d->op == RKACCEL_OP_FC;
	struct layer_plan image;
	bool image_ok;

	lp->dw = d->op == RKACCEL_OP_DWCONV;
	lp->out_int32 = d->flags & RKACCEL_LAYER_OUT_INT32;
	lp->per_channel = d->weight_scales != NULL;
	lp->channels_padded = ALIGN_UP(d->in_features, RKNPU_CHANNEL_ALIGN);
	lp->kernels = lp->dw ? 1 : ALIGN_UP(d->out_features, 2);
	image = *lp;
	image_ok = !plan_window(&image, false) && !plan_tiles(&image, banks);
	/* a fully connected layer: the pixels as one column when that takes fewer tasks */
	if (fc && lp->in.w > 1 && !plan_window(lp, true) && !plan_tiles(lp, banks) &&
	    (!image_ok || plan_tasks(lp) < plan_tasks(&image)))
		return plan_quant(lp);
	if (!image_ok)
		return -E2BIG;
	*lp = image;
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

/*
 * Byte offset of weight (@n, @c, @tap) in the layer's blob: one block per
 * kernel tile and channel tile, in task order, each in the CNA's layout for
 * its own kernels and channels. With one channel tile this is the CNA's
 * layout of the whole layer (kernel tiles are whole groups of 32).
 */
static size_t weight_offset(const struct layer_plan *lp, uint32_t n, uint32_t c, uint32_t tap)
{
	uint32_t n0 = n / lp->tile_kernels * lp->tile_kernels;
	uint32_t c0 = c / lp->tile_channels * lp->tile_channels;
	uint32_t tk = lp->kernels - n0 < lp->tile_kernels ? lp->kernels - n0 : lp->tile_kernels;
	uint32_t kc = lp->channels_padded - c0 < lp->tile_channels ? lp->channels_padded - c0 :
								     lp->tile_channels;

	return (size_t)n0 * lp->taps * lp->channels_padded + (size_t)c0 * lp->taps * tk +
	       rknpu_weight_offset_kxk(n - n0, c - c0, tap, lp->taps, tk, kc);
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
				  weight_offset(lp, n, c, tap)] = (uint8_t)v;
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
	uint32_t wt_bytes = t->kernels * lp->taps * t->channels;
	uint32_t real = lp->desc->in_features - t->c0;
	uint32_t wt_block = lp->dw ? 0 : weight_offset(lp, t->n0, t->c0, 0);

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
					       RKNPU_FEATURE_GRAINS_BASE + lp->stride_y));
	prog_put(p, RKNPU_CNA_CONV_CON3, field(RKNPU_CONV_CON3_STRIDE_X, lp->stride_x) |
		 field(RKNPU_CONV_CON3_STRIDE_Y, lp->stride_y));
	prog_put(p, RKNPU_CNA_DATA_SIZE0, field(RKNPU_DATA_SIZE0_WIDTH, lp->in_w) |
		 field(RKNPU_DATA_SIZE0_HEIGHT, t->in_rows));
	prog_put(p, RKNPU_CNA_DATA_SIZE1,
		 field(RKNPU_DATA_SIZE1_CHANNEL_REAL, (real < t->channels ? real : t->channels) - 1) |
		 field(RKNPU_DATA_SIZE1_CHANNEL, t->channels));
	prog_put(p, RKNPU_CNA_DATA_SIZE2, lp->out_w);
	prog_put(p, RKNPU_CNA_DATA_SIZE3, lp->out_w * t->out_rows);
	prog_put(p, RKNPU_CNA_WEIGHT_SIZE0, wt_bytes);
	prog_put(p, RKNPU_CNA_WEIGHT_SIZE1, lp->taps * t->channels);
	prog_put(p, RKNPU_CNA_WEIGHT_SIZE2, field(RKNPU_WEIGHT_SIZE2_WIDTH, lp->kw) |
		 field(RKNPU_WEIGHT_SIZE2_HEIGHT, lp->kh) |
		 field(RKNPU_WEIGHT_SIZE2_KERNELS, t->kernels));
	prog_put(p, RKNPU_CNA_CBUF_CON1, DIV_UP(t->channels, 64));
	prog_put(p, RKNPU_CNA_CVT_CON0, RKNPU_CVT_CON0_DATA_SIGN | RKNPU_CVT_CON0_CVT_TYPE |
		 RKNPU_CVT_CON0_CVT_BYPASS);
	for (uint16_t r = RKNPU_CNA_CVT_CON1; r < RKNPU_CNA_CVT_CON1 + 16; r += 4)
		prog_put(p, r, 1u << 16);	/* scale 1, offset 0 */
	prog_put(p, RKNPU_CNA_FC_CON0, 0);
	prog_put(p, RKNPU_CNA_FC_CON1, 0);
	prog_put(p, RKNPU_CNA_PAD_CON0, field(RKNPU_PAD_CON0_LEFT, lp->pad_l) |
		 field(RKNPU_PAD_CON0_TOP, t->pad_t));
	/* channel tile: its first plane (16 channels per plane) */
	prog_put_addr(p, RKNPU_CNA_FEATURE_DATA_ADDR, lp->in.buf,
		      lp->in.off + t->c0 / RKNPU_CHANNEL_ALIGN * lp->in.plane +
		      t->iy0 * lp->in_w * RKNPU_ATOM_BYTES);
	prog_put(p, RKNPU_CNA_FC_CON2, 0);
	prog_put(p, RKNPU_CNA_DMA_CON0, 0x000f000f);	/* weight and data burst 16 */
	prog_put(p, RKNPU_CNA_DMA_CON1, line_words);
	prog_put(p, RKNPU_CNA_DMA_CON2, lp->in.plane / 16 - line_words);
	prog_put(p, RKNPU_CNA_FC_DATA_SIZE0, (lp->in_w << 16) | t->in_rows);
	prog_put(p, RKNPU_CNA_FC_DATA_SIZE1, t->channels);
	prog_put_addr(p, RKNPU_CNA_DCOMP_ADDR0, RKACCEL_BUF_WEIGHTS, lp->wt_off + wt_block);
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

/* Byte offset of output row @oy0, channel @n0 of a tensor at @off, @plane bytes a plane. */
static uint32_t tile_offset(uint32_t off, uint32_t plane, uint32_t elem_bytes,
			    const struct layer_plan *lp, uint32_t oy0, uint32_t n0)
{
	uint32_t per_atom = RKNPU_ATOM_BYTES / elem_bytes;

	return off + n0 / per_atom * plane + oy0 * lp->out_w * RKNPU_ATOM_BYTES;
}

static bool tile_last(const struct layer_plan *lp, const struct task_tile *t)
{
	return t->ct + 1 == lp->channel_tiles;
}

/* Whether the task writes int32: the layer's output, or a channel tile's partial sums. */
static bool tile_int32(const struct layer_plan *lp, const struct task_tile *t)
{
	return tile_last(lp, t) ? lp->out_int32 : true;
}

/*
 * BS: bias, per-channel multiplier, ReLU unless it follows an add. Channel
 * tiles: the first adds the bias, the others bypass BS; ReLU then acts in
 * EW after the last tile's add, on the whole sum.
 */
static void put_dpu_bs(struct rkaccel_program *p, const struct layer_plan *lp,
		       const struct task_tile *t)
{
	uint32_t flags = lp->desc->flags;
	bool add = flags & RKACCEL_LAYER_ADD || lp->channel_tiles > 1;
	bool relu = (flags & RKACCEL_LAYER_RELU) && !add;
	bool mul = lp->per_channel && !t->ct;
	uint32_t bs = field(RKNPU_BS_CFG_ALU_ALGO, RKNPU_BS_ALU_ALGO_ADD) | RKNPU_BS_CFG_ALU_SRC |
		      (lp->per_channel ? 0 : RKNPU_BS_CFG_MUL_BYPASS) |
		      (relu ? 0 : RKNPU_BS_CFG_RELU_BYPASS);

	if (t->ct)
		bs = RKNPU_BS_CFG_RELU_BYPASS | RKNPU_BS_CFG_MUL_BYPASS | RKNPU_BS_CFG_ALU_BYPASS |
		     RKNPU_BS_CFG_BYPASS;
	prog_put(p, RKNPU_DPU_BS_CFG, bs);
	prog_put(p, RKNPU_DPU_BS_ALU_CFG, 0);
	prog_put(p, RKNPU_DPU_BS_MUL_CFG, mul ?
		 field(RKNPU_BS_MUL_CFG_SHIFT, PER_CHANNEL_SHIFT) | RKNPU_BS_MUL_CFG_SRC : 0);
	prog_put(p, RKNPU_DPU_BS_RELUX_CMP, 0);
	prog_put(p, RKNPU_DPU_BS_OW_CFG, tile_int32(lp, t) ? 0x7fc : 0x124);
	prog_put(p, RKNPU_DPU_BS_OW_OP, 0);	/* symmetric weights */
}

/*
 * EW: bypassed; the residual tensor converted and added, then ReLU; or, for
 * a channel tile after the first, the previous tile's int32 partial sums
 * added as they are (scale 1, shift 0), ReLU after the last one's add.
 */
static void put_dpu_ew(struct rkaccel_program *p, const struct layer_plan *lp,
		       const struct task_tile *t)
{
	uint32_t flags = lp->desc->flags;
	uint32_t relu = flags & RKACCEL_LAYER_RELU ? 0 : RKNPU_EW_CFG_RELU_BYPASS;

	if (t->ct) {
		prog_put(p, RKNPU_DPU_EW_CFG, RKNPU_EW_CFG_ADD_INT32 |
			 (tile_last(lp, t) ? relu : RKNPU_EW_CFG_RELU_BYPASS));
		prog_put(p, RKNPU_DPU_EW_CVT_OFFSET, 0);
		prog_put(p, RKNPU_DPU_EW_CVT_SCALE, field(RKNPU_EW_CVT_SCALE_MASK, 1));
		prog_put(p, RKNPU_DPU_EW_RELUX_CMP, 0);
		return;
	}
	if (!(flags & RKACCEL_LAYER_ADD)) {
		/* every EW part bypassed, its operands zeroed as Mesa does */
		prog_put(p, RKNPU_DPU_EW_CFG, 0x383);
		prog_put(p, RKNPU_DPU_EW_CVT_OFFSET, 0);
		prog_put(p, RKNPU_DPU_EW_CVT_SCALE, 1);
		prog_put(p, RKNPU_DPU_EW_RELUX_CMP, 0);
		return;
	}
	prog_put(p, RKNPU_DPU_EW_CFG, RKNPU_EW_CFG_ADD_INT8 | relu);
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

/* OUT_CVT: the layer's requantization, or int32 sums kept as they are. */
static void put_dpu_cvt(struct rkaccel_program *p, const struct layer_plan *lp,
			const struct task_tile *t)
{
	bool last = tile_last(lp, t);

	prog_put(p, RKNPU_DPU_OUT_CVT_OFFSET, last ? (uint32_t)lp->cvt_offset : 0);
	prog_put(p, RKNPU_DPU_OUT_CVT_SCALE, last ? lp->cvt_scale : 1);
	prog_put(p, RKNPU_DPU_OUT_CVT_SHIFT, last ? lp->cvt_shift : 0);
}

static void put_dpu(struct rkaccel_program *p, const struct layer_plan *lp,
		    const struct task_tile *t, uint32_t cube)
{
	const struct tile_dst *dst = &t->dst;
	bool int32 = tile_int32(lp, t);

	prog_put(p, RKNPU_DPU_FEATURE_MODE_CFG, (15u << 5) |
		 field(RKNPU_FEATURE_MODE_OUTPUT_MODE, RKNPU_OUTPUT_MODE_MEMORY) |
		 field(RKNPU_FEATURE_MODE_CONV_MODE, lp->dw ? RKNPU_CONV_MODE_DEPTHWISE : 0));
	prog_put(p, RKNPU_DPU_DATA_FORMAT, field(RKNPU_DATA_FORMAT_OUT_PRECISION, int32 ?
		 RKNPU_PRECISION_INT32 : RKNPU_PRECISION_INT8));
	prog_put_addr(p, RKNPU_DPU_DST_BASE_ADDR, dst->buf,
		      tile_offset(dst->off, dst->plane, dst->elem_bytes, lp, t->oy0, t->n0));
	prog_put(p, RKNPU_DPU_DST_SURF_STRIDE, dst->plane);
	prog_put(p, RKNPU_DPU_DATA_CUBE_WIDTH, lp->out_w - 1);
	prog_put(p, RKNPU_DPU_DATA_CUBE_HEIGHT, t->out_rows - 1);
	prog_put(p, RKNPU_DPU_DATA_CUBE_NOTCH, 0);
	prog_put(p, RKNPU_DPU_DATA_CUBE_CHANNEL, field(RKNPU_CUBE_ORIG_CHANNEL, t->out_channels - 1) |
		 field(RKNPU_CUBE_CHANNEL, cube - 1));
	put_dpu_bs(p, lp, t);
	prog_put(p, RKNPU_DPU_WDMA_SIZE_0, cube - 1);
	prog_put(p, RKNPU_DPU_WDMA_SIZE_1, ((t->out_rows - 1) << 16) | (lp->out_w - 1));
	prog_put(p, RKNPU_DPU_BN_CFG, 0x53);	/* ReLU, MUL, ALU and the stage bypassed */
	put_dpu_ew(p, lp, t);
	put_dpu_cvt(p, lp, t);
	prog_put(p, RKNPU_DPU_SURFACE_ADD, dst->plane * (int32 ? 8 : 2));
	put_dpu_unused(p);
}

/* ERDMA: off, the residual (int8) or the previous channel tile's partial sums (int32). */
static void put_rdma_ew(struct rkaccel_program *p, const struct layer_plan *lp,
			const struct task_tile *t)
{
	const struct tile_dst *e = &t->partial;

	if (t->ct) {
		prog_put(p, RKNPU_RDMA_ERDMA_CFG, RKNPU_ERDMA_CFG_INT32);
		prog_put_addr(p, RKNPU_RDMA_EW_BASE_ADDR, e->buf,
			      tile_offset(e->off, e->plane, e->elem_bytes, lp, t->oy0, t->n0));
		prog_put(p, RKNPU_RDMA_EW_SURF_STRIDE, e->plane);
	} else if (lp->desc->flags & RKACCEL_LAYER_ADD) {
		prog_put(p, RKNPU_RDMA_ERDMA_CFG, RKNPU_ERDMA_CFG_INT8);
		prog_put_addr(p, RKNPU_RDMA_EW_BASE_ADDR, lp->add.buf,
			      tile_offset(lp->add.off, lp->add.plane, lp->add.elem_bytes, lp,
					  t->oy0, t->n0));
		prog_put(p, RKNPU_RDMA_EW_SURF_STRIDE, lp->add.plane);
	} else {
		prog_put(p, RKNPU_RDMA_ERDMA_CFG, RKNPU_ERDMA_CFG_DISABLE);
		prog_put(p, RKNPU_RDMA_EW_BASE_ADDR, 0);
		prog_put(p, RKNPU_RDMA_EW_SURF_STRIDE, 0);
	}
}

static void put_rdma(struct rkaccel_program *p, const struct layer_plan *lp,
		     const struct task_tile *t, uint32_t cube)
{
	prog_put(p, RKNPU_RDMA_DATA_CUBE_WIDTH, lp->out_w - 1);
	prog_put(p, RKNPU_RDMA_DATA_CUBE_HEIGHT, t->out_rows - 1);
	prog_put(p, RKNPU_RDMA_DATA_CUBE_CHANNEL, cube - 1);
	prog_put(p, RKNPU_RDMA_SRC_BASE_ADDR, 0);	/* MRDMA unused */
	if (t->ct) {
		/* BS bypassed: no operands */
		prog_put(p, RKNPU_RDMA_BRDMA_CFG, 0);
		prog_put(p, RKNPU_RDMA_BS_BASE_ADDR, 0);
	} else {
		prog_put(p, RKNPU_RDMA_BRDMA_CFG, field(RKNPU_BRDMA_CFG_DATA_USE, lp->per_channel ?
			 RKNPU_BRDMA_USE_BOTH : RKNPU_BRDMA_USE_ALU));
		prog_put_addr(p, RKNPU_RDMA_BS_BASE_ADDR, RKACCEL_BUF_WEIGHTS,
			      lp->bias_off + t->n0 * 4 * lp->bias_words);
	}
	prog_put(p, RKNPU_RDMA_NRDMA_CFG, 0);		/* BN operands unused */
	prog_put(p, RKNPU_RDMA_BN_BASE_ADDR, 0);
	put_rdma_ew(p, lp, t);
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
	uint32_t real = lp->desc->in_features - t->c0;

	prog_task_begin(p);
	put_cna(p, lp, t);
	put_core(p, lp, t, cube);
	put_dpu(p, lp, t, cube);
	put_rdma(p, lp, t, cube);
	prog_task_end(p, CONV_BLOCKS);
	p->macs += (uint64_t)t->out_rows * lp->out_w * t->out_channels * lp->taps *
		   (lp->dw ? 1 : real < t->channels ? real : t->channels);
}

/*
 * Two int32 buffers for the partial sums of a layer split into channel
 * tiles, ping-pong, after everything else in the internal buffer.
 */
static void partial_buffers(struct rkaccel_program *p, const struct layer_plan *lp,
			    struct tile_dst part[2])
{
	uint32_t plane = (uint32_t)native_plane_bytes(lp->out_h * lp->out_w);
	size_t bytes = (size_t)native_planes(lp->kernels, 4) * plane;
	size_t off = ALIGN_UP(p->size[RKACCEL_BUF_INTERNAL], 64);

	for (uint32_t i = 0; i < 2; i++)
		part[i] = (struct tile_dst){ RKACCEL_BUF_INTERNAL,
					     (uint32_t)(off + i * ALIGN_UP(bytes, 64)), plane, 4 };
	p->size[RKACCEL_BUF_INTERNAL] = off + 2 * ALIGN_UP(bytes, 64);
}

void conv_split(struct layer_plan *lp, uint32_t banks, uint32_t parts, bool rows)
{
	uint32_t n;

	lp->parts = 1;
	lp->part_rows = rows;
	/* channel tiles share their partial-sum buffers: one core */
	if (parts < 2 || lp->channel_tiles > 1 || (!rows && lp->dw))
		return;
	/* smaller tiles, a multiple of @parts of them, so that the parts are even */
	if (rows) {
		n = DIV_UP(lp->out_h, lp->tile_rows);
		if (n % parts)
			lp->tile_rows = DIV_UP(lp->out_h, DIV_UP(n, parts) * parts);
		n = DIV_UP(lp->out_h, lp->tile_rows);
	} else {
		n = DIV_UP(lp->kernels, lp->tile_kernels);
		if (n % parts && lp->kernels > RKNPU_WEIGHT_GROUP) {
			/* fewer kernels per task: fewer weight banks, the rows still fit */
			lp->tile_kernels = ALIGN_UP(DIV_UP(lp->kernels, DIV_UP(n, parts) * parts),
						    RKNPU_WEIGHT_GROUP);
			lp->weight_banks = (uint32_t)weight_banks(lp, lp->tile_kernels,
								  lp->tile_channels);
			lp->data_banks = banks - lp->weight_banks;
		}
		n = DIV_UP(lp->kernels, lp->tile_kernels);
	}
	lp->parts = n < parts ? n : parts;
}

/* The part (core) of the tile at kernel tile @kt, row tile @rt: contiguous ranges. */
static uint32_t tile_part(const struct layer_plan *lp, uint32_t kt, uint32_t rt)
{
	uint32_t n = lp->part_rows ? DIV_UP(lp->out_h, lp->tile_rows) :
				     DIV_UP(lp->kernels, lp->tile_kernels);

	return (lp->part_rows ? rt : kt) * lp->parts / n;
}

/* Called for each task of a layer, in program order, with the part it is on. */
typedef void (*tile_fn)(void *arg, const struct layer_plan *lp, uint32_t pt,
			struct task_tile *t);

/* The channel tiles of one kernel x row tile, each adding to the one before. */
static void walk_channel_tiles(const struct layer_plan *lp, uint32_t pt, struct task_tile *t,
			       tile_fn fn, void *arg)
{
	uint32_t cp = lp->channels_padded;

	t->out_channels = lp->dw ? lp->desc->out_features :
			  lp->desc->out_features - t->n0 < t->kernels ?
			  lp->desc->out_features - t->n0 : t->kernels;
	tile_input(lp, t);
	for (t->ct = 0; t->ct < lp->channel_tiles; t->ct++) {
		t->c0 = t->ct * lp->tile_channels;
		t->channels = cp - t->c0 < lp->tile_channels ? cp - t->c0 : lp->tile_channels;
		fn(arg, lp, pt, t);
	}
}

/* The tiles of stripe @pt: output rows [row_lo, row_hi) by kernels, on one core. */
static void walk_stripe(const struct layer_plan *lp, uint32_t pt, tile_fn fn, void *arg)
{
	uint32_t lo = lp->row_lo[pt], hi = lp->row_hi[pt];

	for (uint32_t n0 = 0; n0 < lp->kernels; n0 += lp->tile_kernels) {
		for (uint32_t oy0 = lo; oy0 < hi; oy0 += lp->tile_rows) {
			struct task_tile t = {
				.oy0 = oy0,
				.out_rows = hi - oy0 < lp->tile_rows ? hi - oy0 : lp->tile_rows,
				.n0 = n0,
				.kernels = lp->kernels - n0 < lp->tile_kernels ?
					   lp->kernels - n0 : lp->tile_kernels,
				.weight_reuse = oy0 > lo,
			};

			walk_channel_tiles(lp, pt, &t, fn, arg);
		}
	}
}

/* Every task of @lp: tiles over kernels (outer, weights stay in CBUF), rows, channels. */
static void conv_walk(const struct layer_plan *lp, tile_fn fn, void *arg)
{
	if (lp->seg) {
		/* one channel tile: split.c keeps channel-tiled layers out of segments */
		for (uint32_t pt = 0; pt < lp->parts; pt++)
			walk_stripe(lp, pt, fn, arg);
		return;
	}
	for (uint32_t n0 = 0; n0 < lp->kernels; n0 += lp->tile_kernels) {
		for (uint32_t oy0 = 0; oy0 < lp->out_h; oy0 += lp->tile_rows) {
			uint32_t kt = n0 / lp->tile_kernels, rt = oy0 / lp->tile_rows;
			uint32_t pt = lp->parts > 1 ? tile_part(lp, kt, rt) : 0;
			struct task_tile t = {
				.oy0 = oy0,
				.out_rows = lp->out_h - oy0 < lp->tile_rows ? lp->out_h - oy0 :
									      lp->tile_rows,
				.n0 = n0,
				.kernels = lp->kernels - n0 < lp->tile_kernels ?
					   lp->kernels - n0 : lp->tile_kernels,
				/*
				 * other channel tiles' weights were loaded since; a part's
				 * first row tile runs on a core that has not seen them
				 */
				.weight_reuse = oy0 > 0 && lp->channel_tiles == 1 &&
						(lp->parts < 2 || tile_part(lp, kt, rt - 1) == pt),
			};

			walk_channel_tiles(lp, pt, &t, fn, arg);
		}
	}
}

struct emit {
	struct rkaccel_program *p;
	uint32_t unit;
	struct tile_dst out, part[2];
};

static void emit_task(void *arg, const struct layer_plan *lp, uint32_t pt, struct task_tile *t)
{
	struct emit *e = arg;

	e->p->cur_unit = e->unit + pt;
	t->dst = tile_last(lp, t) ? e->out : e->part[t->ct % 2];
	t->partial = e->part[(t->ct + 1) % 2];
	put_task(e->p, lp, t);
}

void conv_put_layer(struct rkaccel_program *p, const struct layer_plan *lp)
{
	struct emit e = {
		.p = p,
		.unit = p->cur_unit,
		.out = { lp->out.buf, lp->out.off, lp->out.plane, lp->out.elem_bytes },
	};

	if (lp->channel_tiles > 1)
		partial_buffers(p, lp, e.part);
	conv_walk(lp, emit_task, &e);
}

/* What one task costs in the timing model's terms (datapath.rst, "Timing model"). */
static void cost_task(void *arg, const struct layer_plan *lp, uint32_t pt, struct task_tile *t)
{
	uint64_t *ns = arg;
	uint32_t real = lp->desc->in_features - t->c0, out_bytes = tile_int32(lp, t) ? 4 : 1;
	uint32_t cube = ALIGN_UP(t->out_channels, RKNPU_WEIGHT_GROUP);
	uint64_t px = (uint64_t)t->in_rows * lp->in_w, out_px = (uint64_t)t->out_rows * lp->out_w;
	uint64_t wt = (uint64_t)t->kernels * lp->taps * t->channels, groups;
	struct task_cost c = { .entries = COST_CONV_ENTRIES };

	real = real < t->channels ? real : t->channels;
	groups = lp->dw ? DIV_UP(real, COST_DW_CHANNELS) : DIV_UP(t->out_channels, COST_KERNELS);
	c.array_cycles = out_px * lp->taps * groups * (lp->dw ? 1 : DIV_UP(real, COST_CHANNELS));
	c.dpu_elems = out_px * ALIGN_UP(t->out_channels, RKNPU_ATOM_BYTES / out_bytes);
	c.fill = (px < (uint64_t)lp->kh * lp->in_w ? px : (uint64_t)lp->kh * lp->in_w) *
		 t->channels + (t->weight_reuse ? 0 : wt / groups);
	c.bytes = px * t->channels + (t->weight_reuse ? 0 : wt) +
		  DIV_UP((uint64_t)cube * out_bytes, RKNPU_ATOM_BYTES) * out_px * RKNPU_ATOM_BYTES;
	if (!t->ct)
		c.bytes += (uint64_t)t->out_channels * 4 * lp->bias_words;
	if (t->ct || lp->desc->flags & RKACCEL_LAYER_ADD)
		c.bytes += DIV_UP((uint64_t)t->out_channels * (t->ct ? 4 : 1), RKNPU_ATOM_BYTES) *
			   out_px * RKNPU_ATOM_BYTES;
	ns[pt] += cost_task_ns(&c);
}

void conv_cost(const struct layer_plan *lp, uint64_t *ns)
{
	conv_walk(lp, cost_task, ns);
}
