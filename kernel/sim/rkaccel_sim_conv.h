/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef _RKACCEL_SIM_CONV_H_
#define _RKACCEL_SIM_CONV_H_

#include <linux/types.h>

struct device;
struct rkaccel_soc_data;
struct rkaccel_vm;

/**
 * struct rkaccel_sim_work - what one task cost, for the timing model
 * (rkaccel_sim_timing.c; Documentation/datapath.rst, "Timing model").
 * @macs: multiply-accumulates of the operation (padding taps included).
 * @array_cycles: cycles the MAC array spends: channels and kernels padded
 *	to its atomic sizes, depthwise at its own rate.
 * @dpu_elems: elements the DPU (or the PPU) processes.
 * @fill_bytes: bytes loaded into the CBUF before the array can start.
 * @bytes: bytes moved by the DMAs (feature, weights unless reused, bias,
 *	EW operand, output), @fill_bytes included.
 * @out_int32: the DPU wrote int32 (RK3576 then raises no DPU interrupt bit).
 * @out_addr: NPU address of the first output byte the task writes.
 */
struct rkaccel_sim_work {
	u64 macs;
	u64 array_cycles;
	u64 dpu_elems;
	u64 fill_bytes;
	u64 bytes;
	bool out_int32;
	u32 out_addr;
};

/* The int8 MAC array: input channels x kernels per cycle (32 x 32 = 1024). */
#define RKACCEL_SIM_ARRAY_CHANNELS	32
#define RKACCEL_SIM_ARRAY_KERNELS	32
/* Depthwise: channel-taps per cycle. */
#define RKACCEL_SIM_DW_CHANNELS		64

u64 rkaccel_sim_task_ns(const struct rkaccel_sim_work *w, u32 regcmd_bytes, u32 clock_mhz,
			u32 mem_mbps);

/* Output pixels a task computes and writes at a time (16 bytes each). */
#define RKACCEL_SIM_CHUNK_PIXELS	4096

/**
 * struct rkaccel_sim_scratch - one core's datapath buffers, allocated with
 * the core: its exec work runs before the job's fence can signal, so it
 * may not allocate. The CBUF checks bound a task's inputs; its output and
 * EW operand go through in chunks.
 * @x: the feature map unpacked (a convolution), CBUF-sized.
 * @w: the weights unpacked, CBUF-sized.
 * @raw: one DMA's bytes before unpacking; a pooling task's input plane.
 * @ew: EW's operand for one chunk of output pixels (an int32 operand of an
 *	int8 output: four planes' worth).
 * @out: one chunk of output pixels.
 */
struct rkaccel_sim_scratch {
	s8 *x;
	s8 *w;
	u8 *raw;
	u8 *ew;
	u8 *out;
};

int rkaccel_sim_scratch_alloc(struct rkaccel_sim_scratch *s, u32 cbuf_size);
void rkaccel_sim_scratch_free(struct rkaccel_sim_scratch *s);

u32 rkaccel_sim_conv(struct device *dev, const struct rkaccel_soc_data *soc, const u32 *regs,
		     u32 op_enable, struct rkaccel_vm *vm,
		     const struct rkaccel_sim_scratch *scratch, struct rkaccel_sim_work *work);

#endif /* _RKACCEL_SIM_CONV_H_ */
