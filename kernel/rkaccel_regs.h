/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel's additions to the register description (include/
 * rkaccel_npu_regs.h): interrupt bits as BIT()s, including the simulator's
 * own, regcmd entry decoding in u32 and one core's register span. Shared by
 * rkaccel.ko and rkaccel_sim.ko; userspace needs none of it.
 */
#ifndef _RKACCEL_REGS_H_
#define _RKACCEL_REGS_H_

#include <linux/bits.h>

#include "rkaccel_npu_regs.h"

/* INTERRUPT_* bits */
#define RKNPU_INT_DPU_0			BIT(8)
#define RKNPU_INT_DPU_1			BIT(9)
#define RKNPU_INT_DPU_DONE		(RKNPU_INT_DPU_0 | RKNPU_INT_DPU_1)
#define RKNPU_INT_PPU_0			BIT(10)
#define RKNPU_INT_PPU_1			BIT(11)
#define RKNPU_INT_PPU_DONE		(RKNPU_INT_PPU_0 | RKNPU_INT_PPU_1)
#define RKNPU_INT_DMA_READ_ERROR	BIT(12)
#define RKNPU_INT_DMA_WRITE_ERROR	BIT(13)
#define RKNPU_INT_DMA_ERROR		(RKNPU_INT_DMA_READ_ERROR | RKNPU_INT_DMA_WRITE_ERROR)
/* Real, undocumented: both drivers clear it, no source names it. */
#define RKNPU_INT_STATUS_16		BIT(16)
/*
 * Simulator only, outside silicon's 17 events: the task asked for a setting
 * the simulator does not implement. The board module counts it as an error
 * only from a provider that declares it (&rkaccel_hw_regs.error_bits).
 */
#define RKNPU_INT_SIM_UNSUPPORTED	BIT(31)
/* Bits that end a job with an error, once the backend passed them on. */
#define RKNPU_INT_ERRORS		(RKNPU_INT_DMA_ERROR | RKNPU_INT_SIM_UNSUPPORTED)
#define RKNPU_INT_ALL			0x1ffff

/* regcmd entry: target [63:48], value [47:16], register [15:0] */
#define RKNPU_REGCMD_TARGET(e)		((u32)((e) >> 48))
#define RKNPU_REGCMD_VALUE(e)		((u32)((e) >> 16))
#define RKNPU_REGCMD_REG(e)		((u32)((e) & 0xffff))

/* Register space of one core. */
#define RKNPU_CORE_REG_SPAN		0x10000

#endif /* _RKACCEL_REGS_H_ */
