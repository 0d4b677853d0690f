/* SPDX-License-Identifier: MIT */
/*
 * The compiler unit's internals: the program being built (compile.c),
 * convolution layers (compile_conv.c), pooling layers (compile_pool.c), the
 * timing model they are costed with (cost.c) and the native layouts they and layout.c share, in lib/compiler/. Nothing
 * outside that folder includes it.
 */
#ifndef RKACCEL_COMPILE_H
#define RKACCEL_COMPILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rkaccel.h"
#include "rkaccel_npu_regs.h"

#define ALIGN_UP(v, a)		(((v) + (a) - 1) / (a) * (a))
#define DIV_UP(v, d)		(((v) + (d) - 1) / (d))

/* Place @val in the register field @mask. */
static inline uint32_t field(uint32_t mask, uint32_t val)
{
	return (val << __builtin_ctz(mask)) & mask;
}

/* Rows of a plane are padded to 4 (the CNA's surface stride counts 4-row units). */
#define NATIVE_ROW_ALIGN	4
/* Channels are padded to 32: the DPU writes whole kernel groups. */
#define NATIVE_CHANNEL_ALIGN	32

static inline size_t native_plane_bytes(uint32_t rows)
{
	return (size_t)ALIGN_UP(rows, NATIVE_ROW_ALIGN) * RKNPU_ATOM_BYTES;
}

/*
 * The CNA's plane stride is 16 x (SURF_STRIDE + LINE_STRIDE) bytes, the line
 * stride in 4-byte words (Documentation/datapath.rst): a plane it reads
 * spans at least 4 lines, or SURF_STRIDE would be negative. Activations of
 * fewer rows (a 2x2 map: 4 rows, 8 lines' worth of words) get planes of 4
 * lines; the model's input keeps rkaccel_native_size()'s layout.
 */
static inline size_t cna_plane_bytes(uint32_t height, uint32_t width)
{
	size_t plane = native_plane_bytes(height * width);
	size_t lines4 = (size_t)4 * width * RKNPU_ATOM_BYTES;

	return plane > lines4 ? plane : lines4;
}

static inline uint32_t native_planes(uint32_t channels, uint32_t elem_bytes)
{
	return ALIGN_UP(channels, NATIVE_CHANNEL_ALIGN) * elem_bytes / RKNPU_ATOM_BYTES;
}

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
	uint32_t *task_unit;	/* per task: layer * SPLIT_MAX_PARTS + part (split.c) */
	uint32_t cap_units, cur_unit;	/* cur_unit: of the tasks being put */
	struct split_jobs *jobs;	/* NULL: one chain of every task */
	struct tensor_place *places;	/* program_compile_kept(): every tensor's */
	uint32_t num_places;
	uint64_t *layer_ns;		/* single-core: each layer's modelled time */
	uint32_t num_layers;
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
	uint32_t kw, kh, stride_x, stride_y, pad_t, pad_l, taps;
	bool dw, per_channel, out_int32;
	uint32_t channels_padded, kernels;	/* C padded to 16; N to 2 (dw: 1) */
	uint32_t tile_kernels, tile_rows;	/* tile_rows: output rows */
	uint32_t tile_channels;			/* input channels per task (C padded) */
	uint32_t channel_tiles;			/* > 1: int32 partial sums (datapath.rst) */
	uint32_t weight_banks, data_banks;
	uint32_t cvt_scale, cvt_shift;
	int32_t cvt_offset;
	uint32_t ew_scale, ew_shift;
	uint32_t wt_off, bias_off, bias_words;
	uint32_t parts;				/* cores its tasks are split over (split.c) */
	bool part_rows;				/* parts hold row tiles, else kernel tiles */
	/*
	 * seg > 0: a layer of stripe segment seg (split.c): part p computes
	 * output rows [row_lo[p], row_hi[p]), its own share and the rows the
	 * segment's later layers on the same core read (overlapping).
	 */
	uint32_t seg;
	uint32_t row_lo[4], row_hi[4];
};

void prog_put_raw(struct rkaccel_program *p, uint64_t entry);
void prog_put(struct rkaccel_program *p, uint16_t reg, uint32_t val);
void prog_put_addr(struct rkaccel_program *p, uint16_t reg, uint32_t buf, uint32_t offset);
void prog_task_begin(struct rkaccel_program *p);
void prog_task_end(struct rkaccel_program *p, uint32_t enable);
int requant_out_cvt(float multiplier, uint32_t *scale, uint32_t *shift);
int requant_ew_cvt(float multiplier, uint32_t *scale, uint32_t *shift);

/*
 * cost.c: the simulator's timing model (Documentation/datapath.rst,
 * "Timing model") at its default clock and bandwidth, for split.c to choose
 * with: what one task's blocks do, and the time it takes.
 */
#define COST_CLOCK_MHZ		1000	/* sim_clock_mhz */
#define COST_MEM_MBPS		15000	/* sim_mem_mbps */
#define COST_KERNELS		32	/* kernels the array takes a cycle */
#define COST_CHANNELS		32	/* input channels the array takes a cycle */
#define COST_DW_CHANNELS	64	/* depthwise channels the array takes a cycle */
#define COST_DPU_ELEMS		8	/* DPU / PPU elements a cycle */
/* register command entries a task fetches, its tail and padding included */
#define COST_CONV_ENTRIES	128
#define COST_POOL_ENTRIES	32

struct task_cost {
	uint64_t entries;	/* register commands fetched */
	uint64_t fill;		/* the CBUF's first load, bytes: serial */
	uint64_t bytes;		/* every byte the DMAs move, the fill's included */
	uint64_t array_cycles, dpu_elems;
};

uint64_t cost_task_ns(const struct task_cost *c);

/* compile_conv.c: FC, KxK and depthwise layers. */
int conv_plan(struct layer_plan *lp, uint32_t banks);
uint64_t conv_weight_bytes(const struct layer_plan *lp);
int conv_fill_weights(const struct layer_plan *lp, uint8_t *blob);
void conv_put_layer(struct rkaccel_program *p, const struct layer_plan *lp);
/* Adds each task's cost_task_ns() to @ns[its part] (@ns: one per part). */
void conv_cost(const struct layer_plan *lp, uint64_t *ns);

/*
 * Split @lp's tasks over @parts cores by rows (@rows) or kernels, re-tiling
 * when it has fewer tiles than parts; lp->parts gets what was possible.
 */
void conv_split(struct layer_plan *lp, uint32_t banks, uint32_t parts, bool rows);

/* split.c: one inference over several cores. */
struct split_in {
	const struct rkaccel_model_desc *d;
	const struct model_io *io;
	const uint32_t *cat;
	const struct tensor_place *t;	/* every tensor's place */
	struct layer_plan *lps;		/* single-core plans in, the split's out */
	uint32_t banks, ncores, max_tasks;
	uint64_t boundary_ns;
};
struct split_state;
struct split_jobs;
struct model_io;
int split_plan(const struct split_in *in, struct split_state **st);
int split_jobs_build(struct split_state *st, struct rkaccel_program *p);
/* One job a layer on one core (program_compile_layer_jobs()). */
int layer_jobs_build(struct rkaccel_program *p, uint32_t max_tasks);
void split_free(struct split_state *st);
void split_jobs_free(struct split_jobs *sj);

/* compile_pool.c: max and average pooling on the PPU. */
int pool_plan(struct layer_plan *lp, uint32_t cbuf_size);
void pool_put_layer(struct rkaccel_program *p, const struct layer_plan *lp);
void pool_cost(const struct layer_plan *lp, uint64_t *ns);

#endif /* RKACCEL_COMPILE_H */
