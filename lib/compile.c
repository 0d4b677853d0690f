// SPDX-License-Identifier: MIT
/*
 * The regcmd compiler: each layer of a quantized MLP becomes 1x1
 * convolutions (rows = pixels, in_features = input channels, out_features =
 * kernels), tiled so that every task's feature map and weights fit the
 * core's convolution buffer, chained through the tasks' tails. Addresses
 * are kept as relocations against the program's buffers and patched by
 * rkaccel_program_emit(), so one program serves any number of contexts.
 */

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Rows a task may hold: DATAIN_HEIGHT is 11 bits. */
#define TASK_MAX_ROWS		2047
/* CONV_CON2.FEATURE_GRAINS (rows + 1 buffered) is 10 bits wide. */
#define FEATURE_GRAINS_MAX	1023
/* Entries of a task's tail: next address, next amounts, prefix, enable. */
#define TAIL_ENTRIES		4
/* Tasks start on 64-byte boundaries: 8 entries. */
#define TASK_ALIGN_ENTRIES	8
/* What a task's enable starts: the convolution pipeline plus the bias DMA. */
#define CONV_BLOCKS		(RKNPU_BLK_CNA | RKNPU_BLK_CORE | RKNPU_BLK_DPU | RKNPU_BLK_DPU_RDMA)

struct reloc {
	uint32_t entry;		/* index into cmds */
	uint32_t buf;		/* enum rkaccel_buffer */
	uint32_t offset;	/* bytes into the buffer */
};

struct rkaccel_program {
	uint64_t *cmds;		/* every task, each padded to TASK_ALIGN_ENTRIES */
	uint32_t num_cmds, cap_cmds;
	uint32_t *task_start;	/* first entry of each task */
	uint32_t num_tasks, cap_tasks;
	struct reloc *relocs;
	uint32_t num_relocs, cap_relocs;
	uint8_t *weights;
	size_t size[RKACCEL_BUF_COUNT];
	uint64_t macs;
	int err;		/* first allocation failure while building */
};

/* What one layer needs from the compiler. */
struct layer_plan {
	const struct rkaccel_layer_desc *desc;
	uint32_t rows, k, n;
	uint32_t channels_padded, kernels;	/* K padded to 16, N to 2 */
	uint32_t tile_kernels, tile_rows;
	uint32_t weight_banks, data_banks;
	uint32_t cvt_scale, cvt_shift;
	int32_t cvt_offset;
	bool out_int32;
	uint32_t in_buf, in_off, out_buf, out_off, wt_off, bias_off;
};

/* One task: a tile of rows x kernels of a layer. */
struct task_tile {
	uint32_t row0, rows;
	uint32_t n0, kernels, out_channels;
	bool weight_reuse;
};

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
	if (reg >= 0x5000)
		return RKNPU_TGT_DPU_RDMA;
	if (reg >= 0x4000)
		return RKNPU_TGT_DPU;
	if (reg >= 0x3000)
		return RKNPU_TGT_CORE;
	if (reg >= 0x1000)
		return RKNPU_TGT_CNA;
	return RKNPU_TGT_PC;
}

static uint64_t regcmd(uint16_t target, uint16_t reg, uint32_t val)
{
	return ((uint64_t)target << 48) | ((uint64_t)val << 16) | reg;
}

static void put_raw(struct rkaccel_program *p, uint64_t entry)
{
	if (!grow((void **)&p->cmds, &p->cap_cmds, p->num_cmds + 1, sizeof(*p->cmds))) {
		p->err = -ENOMEM;
		return;
	}
	p->cmds[p->num_cmds++] = entry;
}

static void put(struct rkaccel_program *p, uint16_t reg, uint32_t val)
{
	put_raw(p, regcmd(reg_target(reg), reg, val));
}

/* A register holding the NPU address of @offset in buffer @buf. */
static void put_addr(struct rkaccel_program *p, uint16_t reg, uint32_t buf, uint32_t offset)
{
	if (!grow((void **)&p->relocs, &p->cap_relocs, p->num_relocs + 1, sizeof(*p->relocs))) {
		p->err = -ENOMEM;
		return;
	}
	p->relocs[p->num_relocs++] = (struct reloc){ p->num_cmds, buf, offset };
	put(p, reg, 0);
}

/*
 * OUT_CVT for a real multiplier: m * 2^e with m in [1, 2) becomes
 * scale = round(m * 2^14) and shift = 14 - e, so acc * multiplier is
 * (acc * scale) >> shift. Integer-only on the float's bits: the same
 * on every CPU.
 */
static int requant_params(float multiplier, uint32_t *scale, uint32_t *shift)
{
	uint32_t bits, exp, mant;
	int32_t sh;

	memcpy(&bits, &multiplier, sizeof(bits));
	exp = (bits >> 23) & 0xff;
	mant = (bits & 0x7fffff) | 0x800000;
	if (bits >> 31 || !exp || exp == 0xff)
		return -ERANGE;
	*scale = (mant + (1u << 8)) >> 9;
	sh = 141 - (int32_t)exp;
	if (*scale == 1u << 15) {
		*scale >>= 1;
		sh--;
	}
	if (sh < 0 || sh > 62)
		return -ERANGE;
	*shift = (uint32_t)sh;
	return 0;
}

/* Choose the tile: as many kernel groups as fit with one bank for data. */
static int plan_tiles(struct layer_plan *lp, uint32_t banks)
{
	uint32_t group_bytes = RKNPU_WEIGHT_GROUP * lp->channels_padded;
	uint32_t groups = DIV_UP(lp->kernels, RKNPU_WEIGHT_GROUP);
	uint32_t fit = (banks - 1) * RKNPU_CBUF_BANK_SIZE / group_bytes;
	uint32_t rows;

	if (!fit)
		return -EINVAL;	/* one group of kernels does not fit: K too large */
	lp->tile_kernels = groups <= fit ? lp->kernels : fit * RKNPU_WEIGHT_GROUP;
	lp->weight_banks = DIV_UP(lp->tile_kernels * lp->channels_padded, RKNPU_CBUF_BANK_SIZE);
	lp->data_banks = banks - lp->weight_banks;
	rows = lp->data_banks * RKNPU_CBUF_BANK_SIZE / lp->channels_padded;
	lp->tile_rows = rows < lp->rows ? rows : lp->rows;
	if (lp->tile_rows > TASK_MAX_ROWS)
		lp->tile_rows = TASK_MAX_ROWS;
	return 0;
}

static int plan_layer(struct layer_plan *lp, const struct rkaccel_layer_desc *d, uint32_t rows,
		      uint32_t banks)
{
	lp->desc = d;
	lp->rows = rows;
	lp->k = d->in_features;
	lp->n = d->out_features;
	lp->channels_padded = ALIGN_UP(lp->k, RKNPU_CHANNEL_ALIGN);
	lp->kernels = ALIGN_UP(lp->n, 2);
	lp->out_int32 = d->flags & RKACCEL_LAYER_OUT_INT32;
	if (lp->out_int32) {
		lp->cvt_scale = 1;
		lp->cvt_shift = 0;
		lp->cvt_offset = 0;
	} else {
		int ret = requant_params(d->in_scale * d->weight_scale / d->out_scale,
					 &lp->cvt_scale, &lp->cvt_shift);

		if (ret)
			return ret;
		lp->cvt_offset = d->out_zero_point;
	}
	return plan_tiles(lp, banks);
}

/* Weights in the CNA's layout; biases with the input zero point folded in. */
static int fill_weights(const struct layer_plan *lp, uint8_t *blob)
{
	const struct rkaccel_layer_desc *d = lp->desc;
	uint8_t *w = blob + lp->wt_off;
	int32_t *bias = (int32_t *)(blob + lp->bias_off);
	uint32_t n, c;

	for (n = 0; n < lp->n; n++) {
		int64_t sum = 0, folded;

		for (c = 0; c < lp->k; c++) {
			int8_t v = d->weights[(size_t)n * lp->k + c];

			w[rknpu_weight_offset(n, c, lp->kernels, lp->channels_padded)] = (uint8_t)v;
			sum += v;
		}
		/* sum((x - zp) * w) + b == sum(x * w) + (b - zp * sum(w)) */
		folded = (int64_t)d->bias[n] - (int64_t)d->in_zero_point * sum;
		if (folded < INT32_MIN || folded > INT32_MAX)
			return -ERANGE;
		bias[n] = (int32_t)folded;
	}
	return 0;
}

static void put_cna(struct rkaccel_program *p, const struct layer_plan *lp,
		    const struct task_tile *t)
{
	uint32_t line_words = RKNPU_ATOM_BYTES / 4;
	uint32_t surf = (uint32_t)(native_plane_bytes(lp->rows) / 16) - line_words;

	put(p, RKNPU_CNA_CBUF_CON0,
	    field(RKNPU_CBUF_CON0_WEIGHT_REUSE, t->weight_reuse) |
	    field(RKNPU_CBUF_CON0_WEIGHT_BANK, lp->weight_banks) |
	    field(RKNPU_CBUF_CON0_DATA_BANK, lp->data_banks));
	put(p, RKNPU_CNA_DCOMP_REGNUM, 0);
	put(p, RKNPU_CNA_DCOMP_CTRL, 0);
	put(p, RKNPU_CNA_CONV_CON1, 0);
	put(p, RKNPU_DPU_S_POINTER, 0xe);
	put(p, RKNPU_RDMA_S_POINTER, 0xe);
	put(p, RKNPU_CNA_CONV_CON2, field(RKNPU_CONV_CON2_FEATURE_GRAINS,
					  t->rows < FEATURE_GRAINS_MAX ? t->rows + 1 :
									 FEATURE_GRAINS_MAX));
	put(p, RKNPU_CNA_CONV_CON3, field(RKNPU_CONV_CON3_STRIDE_X, 1) |
	    field(RKNPU_CONV_CON3_STRIDE_Y, 1));
	put(p, RKNPU_CNA_DATA_SIZE0, field(RKNPU_DATA_SIZE0_WIDTH, 1) |
	    field(RKNPU_DATA_SIZE0_HEIGHT, t->rows));
	put(p, RKNPU_CNA_DATA_SIZE1, field(RKNPU_DATA_SIZE1_CHANNEL_REAL, lp->k - 1) |
	    field(RKNPU_DATA_SIZE1_CHANNEL, lp->channels_padded));
	put(p, RKNPU_CNA_DATA_SIZE2, 1);
	put(p, RKNPU_CNA_DATA_SIZE3, t->rows);
	put(p, RKNPU_CNA_WEIGHT_SIZE0, t->kernels * lp->channels_padded);
	put(p, RKNPU_CNA_WEIGHT_SIZE1, lp->channels_padded);
	put(p, RKNPU_CNA_WEIGHT_SIZE2, field(RKNPU_WEIGHT_SIZE2_WIDTH, 1) |
	    field(RKNPU_WEIGHT_SIZE2_HEIGHT, 1) | field(RKNPU_WEIGHT_SIZE2_KERNELS, t->kernels));
	put(p, RKNPU_CNA_CBUF_CON1, DIV_UP(lp->channels_padded, 64));
	put(p, RKNPU_CNA_CVT_CON0, RKNPU_CVT_CON0_DATA_SIGN | RKNPU_CVT_CON0_CVT_TYPE |
	    RKNPU_CVT_CON0_CVT_BYPASS);
	for (uint16_t r = RKNPU_CNA_CVT_CON1; r < RKNPU_CNA_CVT_CON1 + 16; r += 4)
		put(p, r, 1u << 16);	/* scale 1, offset 0 */
	put(p, RKNPU_CNA_FC_CON0, 0);
	put(p, RKNPU_CNA_FC_CON1, 0);
	put(p, RKNPU_CNA_PAD_CON0, 0);
	put_addr(p, RKNPU_CNA_FEATURE_DATA_ADDR, lp->in_buf,
		 lp->in_off + t->row0 * RKNPU_ATOM_BYTES);
	put(p, RKNPU_CNA_FC_CON2, 0);
	put(p, RKNPU_CNA_DMA_CON0, 0x000f000f);	/* weight and data burst 16 */
	put(p, RKNPU_CNA_DMA_CON1, line_words);
	put(p, RKNPU_CNA_DMA_CON2, surf);
	put(p, RKNPU_CNA_FC_DATA_SIZE0, (1u << 16) | t->rows);
	put(p, RKNPU_CNA_FC_DATA_SIZE1, lp->channels_padded);
	put_addr(p, RKNPU_CNA_DCOMP_ADDR0, RKACCEL_BUF_WEIGHTS,
		 lp->wt_off + t->n0 * lp->channels_padded);
	put(p, RKNPU_CNA_CVT_CON5, 0);
	put(p, RKNPU_CNA_PAD_CON1, (uint32_t)lp->desc->in_zero_point);
}

static void put_core(struct rkaccel_program *p, const struct task_tile *t, uint32_t cube)
{
	put(p, RKNPU_CORE_MISC_CFG, RKNPU_MISC_CFG_QD_EN);
	put(p, RKNPU_CORE_DATAOUT_SIZE_0, field(RKNPU_DATAOUT_SIZE_0_HEIGHT, t->rows - 1));
	put(p, RKNPU_CORE_DATAOUT_SIZE_1, cube - 1);
	put(p, RKNPU_CORE_CLIP_TRUNCATE, 0);
}

static void put_dpu(struct rkaccel_program *p, const struct layer_plan *lp,
		    const struct task_tile *t, uint32_t cube)
{
	uint32_t plane = (uint32_t)native_plane_bytes(lp->rows);
	uint32_t per_atom = lp->out_int32 ? 4 : 16;
	bool relu = lp->desc->flags & RKACCEL_LAYER_RELU;

	put(p, RKNPU_DPU_FEATURE_MODE_CFG, (15u << 5) |
	    field(RKNPU_FEATURE_MODE_OUTPUT_MODE, RKNPU_OUTPUT_MODE_MEMORY));
	put(p, RKNPU_DPU_DATA_FORMAT, field(RKNPU_DATA_FORMAT_OUT_PRECISION, lp->out_int32 ?
					    RKNPU_PRECISION_INT32 : RKNPU_PRECISION_INT8));
	put_addr(p, RKNPU_DPU_DST_BASE_ADDR, lp->out_buf,
		 lp->out_off + t->n0 / per_atom * plane + t->row0 * RKNPU_ATOM_BYTES);
	put(p, RKNPU_DPU_DST_SURF_STRIDE, plane);
	put(p, RKNPU_DPU_DATA_CUBE_WIDTH, 0);
	put(p, RKNPU_DPU_DATA_CUBE_HEIGHT, t->rows - 1);
	put(p, RKNPU_DPU_DATA_CUBE_NOTCH, 0);
	put(p, RKNPU_DPU_DATA_CUBE_CHANNEL, field(RKNPU_CUBE_ORIG_CHANNEL, t->out_channels - 1) |
	    field(RKNPU_CUBE_CHANNEL, cube - 1));
	put(p, RKNPU_DPU_BS_CFG, field(RKNPU_BS_CFG_ALU_ALGO, RKNPU_BS_ALU_ALGO_ADD) |
	    RKNPU_BS_CFG_ALU_SRC | RKNPU_BS_CFG_MUL_BYPASS | (relu ? 0 : RKNPU_BS_CFG_RELU_BYPASS));
	put(p, RKNPU_DPU_BS_ALU_CFG, 0);
	put(p, RKNPU_DPU_BS_MUL_CFG, 0);
	put(p, RKNPU_DPU_BS_RELUX_CMP, 0);
	put(p, RKNPU_DPU_BS_OW_CFG, lp->out_int32 ? 0x7fc : 0x124);
	put(p, RKNPU_DPU_BS_OW_OP, 0);	/* symmetric weights */
	put(p, RKNPU_DPU_WDMA_SIZE_0, cube - 1);
	put(p, RKNPU_DPU_WDMA_SIZE_1, (t->rows - 1) << 16);
	put(p, RKNPU_DPU_BN_CFG, 0x53);	/* ReLU, MUL, ALU and the stage bypassed */
	put(p, RKNPU_DPU_EW_CFG, 0x383);	/* every EW part bypassed */
	put(p, RKNPU_DPU_OUT_CVT_OFFSET, (uint32_t)lp->cvt_offset);
	put(p, RKNPU_DPU_OUT_CVT_SCALE, lp->cvt_scale);
	put(p, RKNPU_DPU_OUT_CVT_SHIFT, lp->cvt_shift);
	put(p, RKNPU_DPU_SURFACE_ADD, plane * (lp->out_int32 ? 8 : 2));
}

static void put_rdma(struct rkaccel_program *p, const struct layer_plan *lp,
		     const struct task_tile *t, uint32_t cube)
{
	put(p, RKNPU_RDMA_DATA_CUBE_WIDTH, 0);
	put(p, RKNPU_RDMA_DATA_CUBE_HEIGHT, t->rows - 1);
	put(p, RKNPU_RDMA_DATA_CUBE_CHANNEL, cube - 1);
	put(p, RKNPU_RDMA_BRDMA_CFG, field(RKNPU_BRDMA_CFG_DATA_USE, 1));
	put_addr(p, RKNPU_RDMA_BS_BASE_ADDR, RKACCEL_BUF_WEIGHTS, lp->bias_off + t->n0 * 4);
	put(p, RKNPU_RDMA_ERDMA_CFG, RKNPU_ERDMA_CFG_DISABLE);
	put(p, RKNPU_RDMA_FEATURE_MODE_CFG, (15u << 11) | RKNPU_RDMA_FEATURE_MRDMA_DISABLE);
	put(p, RKNPU_RDMA_WEIGHT, 0x01010101);
}

/* Registers of one task, then a tail the chaining pass fills in. */
static void put_task(struct rkaccel_program *p, const struct layer_plan *lp,
		     const struct task_tile *t)
{
	uint32_t cube = ALIGN_UP(t->out_channels, RKNPU_WEIGHT_GROUP);

	if (!grow((void **)&p->task_start, &p->cap_tasks, p->num_tasks + 1,
		  sizeof(*p->task_start))) {
		p->err = -ENOMEM;
		return;
	}
	p->task_start[p->num_tasks++] = p->num_cmds;
	put_cna(p, lp, t);
	put_core(p, t, cube);
	put_dpu(p, lp, t, cube);
	put_rdma(p, lp, t, cube);
	if ((p->num_cmds - p->task_start[p->num_tasks - 1] + TAIL_ENTRIES) % 2)
		put_raw(p, 0);	/* whole 128-bit fetches */
	put(p, RKNPU_PC_BASE_ADDRESS, 0);
	put(p, RKNPU_PC_REGISTER_AMOUNTS, 0);
	put_raw(p, regcmd(RKNPU_TGT_OP_PREFIX, 0, 0));
	put_raw(p, regcmd(RKNPU_TGT_OP_EN, RKNPU_REG_OP_EN, CONV_BLOCKS));
	while (p->num_cmds % TASK_ALIGN_ENTRIES)
		put_raw(p, 0);
	p->macs += (uint64_t)t->rows * lp->k * t->out_channels;
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

/* Tiles over kernels (outer, weights stay in CBUF) and rows (inner). */
static void put_layer(struct rkaccel_program *p, const struct layer_plan *lp)
{
	uint32_t n0, row0;

	for (n0 = 0; n0 < lp->kernels; n0 += lp->tile_kernels) {
		for (row0 = 0; row0 < lp->rows; row0 += lp->tile_rows) {
			struct task_tile t = {
				.row0 = row0,
				.rows = lp->rows - row0 < lp->tile_rows ? lp->rows - row0 :
									    lp->tile_rows,
				.n0 = n0,
				.kernels = lp->kernels - n0 < lp->tile_kernels ?
					   lp->kernels - n0 : lp->tile_kernels,
				.weight_reuse = row0 > 0,
			};

			t.out_channels = lp->n - n0 < t.kernels ? lp->n - n0 : t.kernels;
			put_task(p, lp, &t);
		}
	}
}

/* Where each layer reads and writes: input, ping-pong internal halves, output. */
static void place_buffers(struct rkaccel_program *p, struct layer_plan *lps, uint32_t count)
{
	size_t half = 0, wt = 0;
	uint32_t i;

	for (i = 0; i + 1 < count; i++) {
		size_t s = rkaccel_native_size(lps[i].rows, lps[i].n, 1);

		half = s > half ? s : half;
	}
	for (i = 0; i < count; i++) {
		struct layer_plan *lp = &lps[i];

		lp->in_buf = i ? RKACCEL_BUF_INTERNAL : RKACCEL_BUF_INPUT;
		lp->in_off = i ? (uint32_t)(((i - 1) % 2) * half) : 0;
		lp->out_buf = i + 1 < count ? RKACCEL_BUF_INTERNAL : RKACCEL_BUF_OUTPUT;
		lp->out_off = i + 1 < count ? (uint32_t)((i % 2) * half) : 0;
		lp->wt_off = (uint32_t)wt;
		wt += ALIGN_UP((size_t)lp->kernels * lp->channels_padded, 64);
		lp->bias_off = (uint32_t)wt;
		wt += ALIGN_UP((size_t)lp->n * 4, 64);
	}
	p->size[RKACCEL_BUF_WEIGHTS] = wt;
	p->size[RKACCEL_BUF_INPUT] = rkaccel_native_size(lps[0].rows, lps[0].k, 1);
	p->size[RKACCEL_BUF_OUTPUT] = rkaccel_native_size(lps[count - 1].rows, lps[count - 1].n,
							   lps[count - 1].out_int32 ? 4 : 1);
	p->size[RKACCEL_BUF_INTERNAL] = count > 2 ? 2 * half : half;
}

static int compile_layers(struct rkaccel_program *p, const struct rkaccel_model_desc *desc,
			  uint32_t banks)
{
	struct layer_plan lps[RKACCEL_MODEL_MAX_LAYERS] = {};
	uint32_t i;
	int ret;

	for (i = 0; i < desc->num_layers; i++) {
		ret = plan_layer(&lps[i], &desc->layers[i], desc->rows, banks);
		if (ret)
			return ret;
	}
	place_buffers(p, lps, desc->num_layers);
	p->weights = calloc(1, p->size[RKACCEL_BUF_WEIGHTS]);
	if (!p->weights)
		return -ENOMEM;
	for (i = 0; i < desc->num_layers; i++) {
		ret = fill_weights(&lps[i], p->weights);
		if (ret)
			return ret;
		put_layer(p, &lps[i]);
	}
	p->size[RKACCEL_BUF_REGCMD] = (size_t)p->num_cmds * sizeof(uint64_t);
	return p->err;
}

int rkaccel_program_compile(const struct rkaccel_model_desc *desc,
			    const struct rkaccel_info *info, struct rkaccel_program **prog)
{
	struct rkaccel_program *p;
	uint32_t banks;
	int ret;

	*prog = NULL;
	if (!desc || !info || rkaccel_model_validate(desc, NULL, 0))
		return -EINVAL;
	banks = info->cbuf_size / RKNPU_CBUF_BANK_SIZE;
	if (banks < 2 || banks > 15 || !info->max_tasks)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	ret = compile_layers(p, desc, banks);
	/* the driver takes at most max_tasks hardware tasks in one job */
	if (!ret && p->num_tasks > info->max_tasks)
		ret = -E2BIG;
	if (ret) {
		rkaccel_program_free(p);
		return ret;
	}
	*prog = p;
	return 0;
}

void rkaccel_program_free(struct rkaccel_program *prog)
{
	if (!prog)
		return;
	free(prog->cmds);
	free(prog->task_start);
	free(prog->relocs);
	free(prog->weights);
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

uint64_t rkaccel_program_macs(const struct rkaccel_program *prog)
{
	return prog->macs;
}

/* Link task @t to @t + 1 through its tail; the last one ends the chain. */
static void link_task(const struct rkaccel_program *p, uint32_t t, uint64_t regcmd_addr,
		      uint64_t *out)
{
	uint32_t tail = p->task_start[t] + task_entries(p, t) - TAIL_ENTRIES;
	uint32_t next = t + 1;
	uint32_t addr = 0, amounts = 0;

	if (next < p->num_tasks) {
		addr = (uint32_t)(regcmd_addr + (uint64_t)p->task_start[next] * sizeof(uint64_t));
		amounts = (task_entries(p, next) + 1) / 2 - 1;
	}
	out[tail] = regcmd(RKNPU_TGT_PC, RKNPU_PC_BASE_ADDRESS, addr);
	out[tail + 1] = regcmd(RKNPU_TGT_PC, RKNPU_PC_REGISTER_AMOUNTS, amounts);
}

int rkaccel_program_emit(const struct rkaccel_program *prog,
			 const uint64_t addr[RKACCEL_BUF_COUNT], void *dst,
			 struct rkaccel_pc_start *starts)
{
	uint64_t *out = dst;
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
	/* one chain: compile refused programs longer than one job */
	for (i = 0; i < prog->num_tasks; i++)
		link_task(prog, i, addr[RKACCEL_BUF_REGCMD], out);
	starts[0] = (struct rkaccel_pc_start){
		.regcmd_addr = addr[RKACCEL_BUF_REGCMD],
		.regcmd_count = task_entries(prog, 0),
		.task_count = prog->num_tasks,
	};
	for (i = 0; i < prog->num_cmds; i++)
		out[i] = htole64(out[i]);
	return 0;
}
