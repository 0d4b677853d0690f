/* SPDX-License-Identifier: MIT */
/*
 * The regcmd compiler's pieces: the program being built (lib/compile.c),
 * convolution layers (lib/compile_conv.c) and pooling layers
 * (lib/compile_pool.c).
 */
#ifndef RKACCEL_COMPILE_H
#define RKACCEL_COMPILE_H

#include "internal.h"

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

/* Where a tensor lives: buffer, offset, plane stride; its shape. */
struct tensor_place {
	uint32_t buf, off, plane;
	uint32_t h, w, c, elem_bytes;
	float scale;
	int32_t zp;
};

/* What one layer needs from the compiler. */
struct layer_plan {
	const struct rkaccel_layer_desc *desc;
	struct tensor_place in, out, add;
	uint32_t in_h, in_w;			/* as the CNA reads it (FC: pixels x 1) */
	uint32_t out_h, out_w;
	uint32_t kw, kh, stride, pad_t, pad_l, taps;
	bool dw, per_channel, out_int32;
	uint32_t channels_padded, kernels;	/* C padded to 16; N to 2 (dw: 1) */
	uint32_t tile_kernels, tile_rows;	/* tile_rows: output rows */
	uint32_t weight_banks, data_banks;
	uint32_t cvt_scale, cvt_shift;
	int32_t cvt_offset;
	uint32_t ew_scale, ew_shift;
	uint32_t wt_off, bias_off, bias_words;
};

void prog_put_raw(struct rkaccel_program *p, uint64_t entry);
void prog_put(struct rkaccel_program *p, uint16_t reg, uint32_t val);
void prog_put_addr(struct rkaccel_program *p, uint16_t reg, uint32_t buf, uint32_t offset);
void prog_task_begin(struct rkaccel_program *p);
void prog_task_end(struct rkaccel_program *p, uint32_t enable);
int requant_out_cvt(float multiplier, uint32_t *scale, uint32_t *shift);
int requant_ew_cvt(float multiplier, uint32_t *scale, uint32_t *shift);

/* lib/compile_conv.c: FC, KxK and depthwise layers. */
int conv_plan(struct layer_plan *lp, uint32_t banks);
uint64_t conv_weight_bytes(const struct layer_plan *lp);
int conv_fill_weights(const struct layer_plan *lp, uint8_t *blob);
void conv_put_layer(struct rkaccel_program *p, const struct layer_plan *lp);

/* lib/compile_pool.c: max and average pooling on the PPU. */
int pool_plan(const struct layer_plan *lp, uint32_t cbuf_size);
void pool_put_layer(struct rkaccel_program *p, const struct layer_plan *lp);

#endif /* RKACCEL_COMPILE_H */
