// SPDX-License-Identifier: GPL-2.0-only
/*
 * The simulated core's timing model: how long one hardware task takes,
 * from what the datapath decoded (struct rkaccel_sim_work). Every constant
 * has its public source in Documentation/datapath.rst, "Timing model";
 * none is fitted to whole-network figures.
 *
 *   fetch   the task's register commands, read at the DMA bandwidth
 *   fill    the CBUF's first load (first kernel group, first window lines),
 *           serial: the array has nothing to work on before it
 *   then    max(compute, rest of the DMA): the DMAs stream the remaining
 *           input, weights and output while the array and DPU run
 *   compute max(array cycles, DPU elements / 8): the DPU is fed by the
 *           array's accumulators and runs alongside it
 */

#include <linux/math64.h>
#include <linux/minmax.h>

#include "rkaccel_sim_conv.h"

/* DPU / PPU elements per cycle. */
#define SIM_DPU_ELEMS_PER_CYCLE	8

/* @bytes at @mbps MB/s, ns. */
static u64 sim_dma_ns(u64 bytes, u32 mbps)
{
	return div_u64(bytes * 1000, mbps);
}

/**
 * rkaccel_sim_task_ns - modelled time of one task.
 * @w: what the datapath decoded (all zero for a task enabling no block).
 * @regcmd_bytes: bytes of register commands the PC fetched for the task.
 * @clock_mhz: core clock, MHz (not 0).
 * @mem_mbps: DMA bandwidth of the core, MB/s (not 0).
 *
 * Return: nanoseconds, before any fixed overhead or scaling.
 */
u64 rkaccel_sim_task_ns(const struct rkaccel_sim_work *w, u32 regcmd_bytes, u32 clock_mhz,
			u32 mem_mbps)
{
	u64 cycles = max(w->array_cycles, DIV_ROUND_UP_ULL(w->dpu_elems,
							   SIM_DPU_ELEMS_PER_CYCLE));
	u64 fill = min(w->fill_bytes, w->bytes);
	u64 compute = div_u64(cycles * 1000, clock_mhz);

	return sim_dma_ns(regcmd_bytes, mem_mbps) + sim_dma_ns(fill, mem_mbps) +
	       max(compute, sim_dma_ns(w->bytes - fill, mem_mbps));
}
