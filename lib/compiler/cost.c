// SPDX-License-Identifier: MIT
/*
 * The simulator's timing model (kernel/sim/rkaccel_sim_timing.c) on the
 * compiler's side: the same terms, so that the split planner weighs what
 * the device will charge (compute and DMA overlap; only the CBUF's first
 * load and the register fetch are serial). An estimate: the latency a
 * split reports is measured.
 */

#include "compile.h"

static uint64_t dma_ns(uint64_t bytes)
{
	return bytes * 1000 / COST_MEM_MBPS;
}

uint64_t cost_task_ns(const struct task_cost *c)
{
	uint64_t dpu = DIV_UP(c->dpu_elems, COST_DPU_ELEMS);
	uint64_t cycles = c->array_cycles > dpu ? c->array_cycles : dpu;
	uint64_t fill = c->fill < c->bytes ? c->fill : c->bytes;
	uint64_t compute = cycles * 1000 / COST_CLOCK_MHZ, rest = dma_ns(c->bytes - fill);

	return dma_ns(c->entries * 8) + dma_ns(fill) + (compute > rest ? compute : rest);
}
