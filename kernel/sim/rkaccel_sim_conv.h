/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef _RKACCEL_SIM_CONV_H_
#define _RKACCEL_SIM_CONV_H_

#include <linux/types.h>

struct device;
struct rkaccel_soc_data;
struct rkaccel_vm;

/**
 * struct rkaccel_sim_work - what one task cost, for the timing model.
 * @macs: multiply-accumulates of the MAC array.
 * @bytes: bytes moved by the DMAs (feature, weights unless reused, bias, output).
 * @out_int32: the DPU wrote int32 (RK3576 then raises no DPU interrupt bit).
 */
struct rkaccel_sim_work {
	u64 macs;
	u64 bytes;
	bool out_int32;
};

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
