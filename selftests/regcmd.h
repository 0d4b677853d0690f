/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Building regcmd chains for the rkaccel selftests.
 *
 * A regcmd entry is a 64-bit little-endian value
 * (target << 48) | (value << 16) | reg, reg being a 16-bit register offset
 * inside one NPU core. A hardware task is a run of entries ending with a tail
 * that loads the next task's PC_BASE_ADDRESS and PC_REGISTER_AMOUNTS (0 for
 * the last task) and then the op-enable entry that starts it.
 * Entries with target 0 are no-ops. A task without the enable entry never
 * completes: that is how the tests hang a core.
 */
#ifndef RKACCEL_REGCMD_H
#define RKACCEL_REGCMD_H

#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "rkaccel_drm.h"
#include "rkaccel_npu_regs.h"

/* Targets: the block id plus one (rkaccel_npu_regs.h has the rest). */
#define RKT_TGT_NOP		0x0000
#define RKT_TGT_CNA		RKNPU_TGT_CNA
#define RKT_TGT_CORE		RKNPU_TGT_CORE
#define RKT_TGT_DPU		RKNPU_TGT_DPU

/* Register offsets inside one core. */
#define RKT_REG_PC_BASE_ADDRESS		0x0010
#define RKT_REG_PC_REGISTER_AMOUNTS	0x0014
#define RKT_REG_CNA_BASE		0x1000
#define RKT_REG_CORE_BASE		0x3000
#define RKT_REG_DPU_BASE		0x4000

/*
 * The filler tasks write arbitrary block registers, so their enable entry
 * starts no block: the simulator completes such a task without computing.
 */
#define RKT_OP_EN_NONE		0u

/* Tasks of a chain start on this boundary. */
#define RKT_TASK_ALIGN		64
/* Entries of the tail: base address, amounts, enable. */
#define RKT_TAIL_ENTRIES	3

static inline uint64_t rkt_regcmd(uint16_t target, uint16_t reg, uint32_t value)
{
	return htole64(((uint64_t)target << 48) | ((uint64_t)value << 16) | reg);
}

/* PC_REGISTER_AMOUNTS for a task of @entries entries. */
static inline uint32_t rkt_amounts(uint32_t entries)
{
	return entries ? (entries + 1) / 2 - 1 : 0;
}

/* Chain flags. */
#define RKT_CHAIN_NO_ENABLE	(1u << 0)	/* no task starts: the core hangs */

/**
 * struct rkt_chain - where rkt_chain_build() put a chain.
 * @addr: NPU address of the first task.
 * @offset: byte offset of the first task in the BO.
 * @entries: entries of each task (even, filler + padding + tail).
 * @stride: bytes from one task to the next (multiple of RKT_TASK_ALIGN).
 * @tasks: number of hardware tasks.
 * @bytes: bytes of the BO the chain occupies from @offset.
 */
struct rkt_chain {
	uint64_t addr;
	size_t offset;
	uint32_t entries;
	uint32_t stride;
	uint32_t tasks;
	size_t bytes;
};

static inline uint32_t rkt_chain_entries(uint32_t filler)
{
	uint32_t n = filler + RKT_TAIL_ENTRIES;

	return (n + 1) & ~1u;	/* whole 128-bit fetches */
}

static inline uint32_t rkt_chain_stride(uint32_t filler)
{
	uint32_t bytes = rkt_chain_entries(filler) * 8;

	return (bytes + RKT_TASK_ALIGN - 1) / RKT_TASK_ALIGN * RKT_TASK_ALIGN;
}

/* Bytes a chain of @ntasks tasks with @filler register writes each needs. */
static inline size_t rkt_chain_bytes(uint32_t ntasks, uint32_t filler)
{
	return (size_t)ntasks * rkt_chain_stride(filler);
}

/* Some register writes a task does before its tail: DPU/CNA/CORE registers. */
static inline uint64_t rkt_filler(uint32_t task, uint32_t i)
{
	uint32_t val = 0x5a000000u ^ (task << 8) ^ i;

	switch (i % 3) {
	case 0:
		return rkt_regcmd(RKT_TGT_DPU, RKT_REG_DPU_BASE + 0x10 + 4 * (i % 32), val);
	case 1:
		return rkt_regcmd(RKT_TGT_CNA, RKT_REG_CNA_BASE + 0x40 + 4 * (i % 32), val);
	default:
		return rkt_regcmd(RKT_TGT_CORE, RKT_REG_CORE_BASE + 0x10 + 4 * (i % 8), val);
	}
}

/* Rewrite the tail of task @task of @c to chain to @next_addr / @next_entries. */
static inline void rkt_chain_set_next(void *bo_map, const struct rkt_chain *c, uint32_t task,
				      uint64_t next_addr, uint32_t next_entries)
{
	uint64_t *e = (uint64_t *)((char *)bo_map + c->offset + (size_t)task * c->stride);
	uint32_t tail = c->entries - RKT_TAIL_ENTRIES;

	e[tail] = rkt_regcmd(RKNPU_TGT_PC, RKT_REG_PC_BASE_ADDRESS, (uint32_t)next_addr);
	e[tail + 1] = rkt_regcmd(RKNPU_TGT_PC, RKT_REG_PC_REGISTER_AMOUNTS,
				 next_addr ? rkt_amounts(next_entries) : 0);
}

/*
 * Write a chain of @ntasks tasks at @offset (64-byte aligned) of a BO mapped
 * at @bo_map, whose NPU address is @bo_addr and size @bo_size. Each task has
 * @filler register writes then the tail. Returns 0 or -ENOSPC / -EINVAL.
 */
static inline int rkt_chain_build(void *bo_map, uint64_t bo_addr, size_t bo_size,
				  size_t offset, uint32_t ntasks, uint32_t filler,
				  uint32_t flags, struct rkt_chain *c)
{
	uint32_t t, i;

	if (!ntasks || offset % RKT_TASK_ALIGN)
		return -EINVAL;
	memset(c, 0, sizeof(*c));
	c->entries = rkt_chain_entries(filler);
	c->stride = rkt_chain_stride(filler);
	c->tasks = ntasks;
	c->offset = offset;
	c->addr = bo_addr + offset;
	c->bytes = rkt_chain_bytes(ntasks, filler);
	if (offset > bo_size || c->bytes > bo_size - offset)
		return -ENOSPC;

	memset((char *)bo_map + offset, 0, c->bytes);
	for (t = 0; t < ntasks; t++) {
		uint64_t *e = (uint64_t *)((char *)bo_map + offset + (size_t)t * c->stride);
		uint64_t next = t + 1 < ntasks ? c->addr + (uint64_t)(t + 1) * c->stride : 0;

		for (i = 0; i < filler; i++)
			e[i] = rkt_filler(t, i);
		for (; i < c->entries - RKT_TAIL_ENTRIES; i++)
			e[i] = rkt_regcmd(RKT_TGT_NOP, 0, 0);
		rkt_chain_set_next(bo_map, c, t, next, c->entries);
		e[c->entries - 1] = (flags & RKT_CHAIN_NO_ENABLE) ?
			rkt_regcmd(RKT_TGT_NOP, 0, 0) :
			rkt_regcmd(RKNPU_TGT_OP_EN, RKNPU_REG_OP_EN, RKT_OP_EN_NONE);
	}
	return 0;
}

/* The PC start that runs the whole chain. */
static inline struct drm_rkaccel_task rkt_chain_task(const struct rkt_chain *c)
{
	struct drm_rkaccel_task t = {
		.regcmd_addr = c->addr,
		.regcmd_count = c->entries,
		.task_count = c->tasks,
	};

	return t;
}

#endif /* RKACCEL_REGCMD_H */
