/* SPDX-License-Identifier: MIT */
/*
 * One inference over several cores: the jobs of a split program (built by
 * lib/compiler/split.c) and what the runtime (lib/runtime/split.c) asks of
 * the compiler. Shared by those two units, nothing else.
 */
#ifndef RKACCEL_SPLIT_H
#define RKACCEL_SPLIT_H

#include <stdint.h>

#include "rkaccel.h"
#include "../model/model_links.h"

/* Most cores one inference is split over (RK3588: 3). */
#define SPLIT_MAX_PARTS		4

/* A job: a chain of tasks on one core, started once the jobs it waits for are done. */
struct split_job {
	uint32_t core;				/* 0 .. ncores - 1: the n-th core of the mask */
	uint32_t task_first, task_count;	/* in split_jobs.tasks, chain order */
	uint32_t wait_first, wait_count;	/* in split_jobs.waits: earlier jobs */
	uint64_t est_ns;			/* the compiler's estimate of its device time */
};

struct split_jobs {
	uint32_t ncores;
	uint32_t num_jobs;
	struct split_job *job;		/* in submission order: waits point back */
	uint32_t *tasks;
	uint32_t *waits;
	uint32_t split_layers;		/* layers whose tasks are on several cores */
	uint64_t est_ns, est_one_ns;	/* estimated latency: split, on one core */
};

/*
 * Compile @d (with its links) to run over @ncores cores (2..SPLIT_MAX_PARTS),
 * charging @boundary_ns for each job's start after a fence. The program's
 * weights may differ from the single-core program's (layers re-tiled).
 */
int program_compile_split(const struct rkaccel_model_desc *d, const struct model_io *io,
			  const uint32_t *cat, const struct rkaccel_info *info,
			  uint32_t ncores, uint64_t boundary_ns, struct rkaccel_program **prog);

/*
 * Compile @d (with its links) as the single-core program, its tasks put
 * into one job a layer on one core, each waiting for the one before: the
 * same tasks and weights, for timing each layer on the device.
 */
int program_compile_layer_jobs(const struct rkaccel_model_desc *d, const struct model_io *io,
			       const uint32_t *cat, const struct rkaccel_info *info,
			       struct rkaccel_program **prog);

/* The layer whose tasks job @job of program_compile_layer_jobs() runs. */
uint32_t program_job_layer(const struct rkaccel_program *prog, uint32_t job);

/* The jobs of a split program, NULL for a single chain. */
const struct split_jobs *program_jobs(const struct rkaccel_program *prog);

/*
 * rkaccel_program_emit() for a split program: one PC start per job into
 * @starts (split_jobs.num_jobs entries), each job's tasks chained.
 */
int program_emit_jobs(const struct rkaccel_program *prog, const uint64_t addr[RKACCEL_BUF_COUNT],
		      void *dst, struct rkaccel_pc_start *starts);

/* A boundary's cost when nothing better is known: a fence and submit round trip, ns. */
#define SPLIT_BOUNDARY_NS	50000ull

#endif /* RKACCEL_SPLIT_H */
