// SPDX-License-Identifier: MIT
/*
 * One inference over several cores: the jobs of a split program
 * (lib/compiler/split.c), each on the kernel context of its core, each
 * after the syncobjs of the jobs it waits for; jobs on one core run in
 * their submission order. Every BO is listed for reading only, so that
 * implicit sync does not order jobs that the program leaves unordered; the
 * caller waits for the run before it touches the output.
 *
 * Latency in device time (split_run_latency()): every job is run alone,
 * in order, and timed by the device (fdinfo's per-core time). The longest
 * path through the jobs, a job starting after the one before it on its core
 * and after the jobs it waits for, each job charged @boundary_ns for its
 * start (a fence and submit round trip, never zero), is the figure: the
 * host's wall clock, noise on emulated CPUs, is not in it.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/sync_file.h>
#include <xf86drm.h>

#include "runtime.h"
#include "rkaccel_drm.h"
#include "../compiler/split.h"

#define SPLIT_WAIT_NS	(60ull * 1000000000ull)

struct split_run {
	int fd;
	const struct rkaccel_program *prog;
	const struct split_jobs *sj;
	uint32_t core_id[SPLIT_MAX_PARTS];	/* the n-th core of the mask */
	uint32_t kctx[SPLIT_MAX_PARTS];
	uint32_t *sync;			/* per job */
	struct drm_rkaccel_task *tasks;	/* per job: its one PC start */
	struct ctx_bo regcmd, internal;
	uint64_t weights_addr;
	uint64_t core_ns[RKACCEL_MAX_CORES];	/* the last run's device time */
	uint64_t before[RKACCEL_MAX_CORES];
};

uint32_t fdinfo_core_ns(int fd, uint64_t *ns, uint32_t max)
{
	char path[64], line[128];
	uint32_t n = 0, core;
	unsigned long long v;
	FILE *f;

	memset(ns, 0, max * sizeof(*ns));
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "drm-engine-core%u: %llu ns", &core, &v) == 2 && core < max) {
			ns[core] = v;
			n = core + 1 > n ? core + 1 : n;
		}
	}
	fclose(f);
	return n;
}

void split_run_free(struct split_run *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; s->sync && i < s->sj->num_jobs; i++)
		if (s->sync[i])
			drmSyncobjDestroy(s->fd, s->sync[i]);
	for (uint32_t k = 0; k < SPLIT_MAX_PARTS; k++)
		kctx_destroy(s->fd, s->kctx[k]);
	bo_free(s->fd, &s->regcmd);
	bo_free(s->fd, &s->internal);
	free(s->sync);
	free(s->tasks);
	free(s);
}

static int split_run_init(struct split_run *s, uint32_t mask)
{
	const struct split_jobs *sj = s->sj;
	size_t size;
	int ret = 0;

	for (uint32_t k = 0, bit = 0; k < sj->ncores; k++, bit++) {
		while (bit < 32 && !(mask & (1u << bit)))
			bit++;
		if (bit == 32)
			return -EINVAL;
		s->core_id[k] = bit;
		ret = kctx_create(s->fd, 1u << bit, &s->kctx[k]);
		if (ret)
			return ret;
	}
	s->sync = calloc(sj->num_jobs, sizeof(*s->sync));
	s->tasks = calloc(sj->num_jobs, sizeof(*s->tasks));
	if (!s->sync || !s->tasks)
		return -ENOMEM;
	for (uint32_t i = 0; i < sj->num_jobs; i++)
		if (drmSyncobjCreate(s->fd, DRM_SYNCOBJ_CREATE_SIGNALED, &s->sync[i]))
			return -errno;
	ret = bo_new(s->fd, rkaccel_program_size(s->prog, RKACCEL_BUF_REGCMD), 0, &s->regcmd);
	size = rkaccel_program_size(s->prog, RKACCEL_BUF_INTERNAL);
	if (!ret && size)
		ret = bo_new(s->fd, size, 0, &s->internal);
	return ret;
}

int split_run_new(int fd, const struct rkaccel_program *prog, uint64_t weights_addr,
		  uint32_t mask, struct split_run **out)
{
	struct split_run *s = calloc(1, sizeof(*s));
	int ret;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->fd = fd;
	s->prog = prog;
	s->sj = program_jobs(prog);
	s->weights_addr = weights_addr;
	ret = s->sj ? split_run_init(s, mask) : -EINVAL;
	if (ret) {
		split_run_free(s);
		return ret;
	}
	*out = s;
	return 0;
}

int split_run_emit(struct split_run *s, uint64_t in_addr, uint64_t out_addr)
{
	uint64_t addr[RKACCEL_BUF_COUNT] = { 0 };
	struct rkaccel_pc_start *starts = calloc(s->sj->num_jobs, sizeof(*starts));
	int ret;

	if (!starts)
		return -ENOMEM;
	addr[RKACCEL_BUF_INPUT] = in_addr;
	addr[RKACCEL_BUF_OUTPUT] = out_addr;
	addr[RKACCEL_BUF_WEIGHTS] = s->weights_addr;
	addr[RKACCEL_BUF_INTERNAL] = s->internal.addr;
	addr[RKACCEL_BUF_REGCMD] = s->regcmd.addr;
	ret = program_emit_jobs(s->prog, addr, s->regcmd.map, starts);
	for (uint32_t j = 0; !ret && j < s->sj->num_jobs; j++)
		s->tasks[j] = (struct drm_rkaccel_task){
			.regcmd_addr = starts[j].regcmd_addr,
			.regcmd_count = starts[j].regcmd_count,
			.task_count = starts[j].task_count,
			.flags = starts[j].flags,
		};
	free(starts);
	return ret;
}

/* Queue job @j after its waits (and @in_sync, for a job that waits for nothing). */
static int job_submit(struct split_run *s, const struct split_io *io, uint32_t j,
		      uint32_t in_sync)
{
	const struct split_job *job = &s->sj->job[j];
	struct drm_rkaccel_submit_bo bos[6];
	struct drm_rkaccel_sync syncs[SPLIT_MAX_PARTS + 1];
	struct drm_rkaccel_submit sub = { 0 };
	uint32_t n = 0, ns = 0;

	for (uint32_t i = 0; i < io->count; i++)
		if (io->handle[i])
			bos[n++] = (struct drm_rkaccel_submit_bo){ .handle = io->handle[i] };
	bos[n++] = (struct drm_rkaccel_submit_bo){ .handle = s->regcmd.handle };
	if (s->internal.handle)
		bos[n++] = (struct drm_rkaccel_submit_bo){ .handle = s->internal.handle };
	for (uint32_t w = 0; w < job->wait_count; w++)
		syncs[ns++] = (struct drm_rkaccel_sync){
			.handle = s->sync[s->sj->waits[job->wait_first + w]] };
	if (in_sync && !job->wait_count)
		syncs[ns++] = (struct drm_rkaccel_sync){ .handle = in_sync };
	sub.ctx = s->kctx[job->core];
	sub.tasks = (uint64_t)(uintptr_t)&s->tasks[j];
	sub.task_count = 1;
	sub.task_stride = sizeof(s->tasks[0]);
	sub.bos = (uint64_t)(uintptr_t)bos;
	sub.bo_count = n;
	sub.bo_stride = sizeof(bos[0]);
	if (ns) {
		sub.in_syncs = (uint64_t)(uintptr_t)syncs;
		sub.in_sync_count = ns;
		sub.sync_stride = sizeof(syncs[0]);
	}
	sub.out_sync = s->sync[j];
	return xioctl(s->fd, DRM_IOCTL_RKACCEL_SUBMIT, &sub);
}

/* The last job of each core: when they are done, every job is. */
static uint32_t last_jobs(const struct split_run *s, uint32_t *h)
{
	uint32_t n = 0;

	for (uint32_t k = 0; k < s->sj->ncores; k++) {
		for (uint32_t j = s->sj->num_jobs; j-- > 0;) {
			if (s->sj->job[j].core == k) {
				h[n++] = s->sync[j];
				break;
			}
		}
	}
	return n;
}

/* One sync_file of the syncobjs @h[@n], or -errno. */
static int fence_of(int fd, const uint32_t *h, uint32_t n)
{
	int merged = -1;

	for (uint32_t i = 0; i < n; i++) {
		struct sync_merge_data md = { 0 };
		int f;

		if (drmSyncobjExportSyncFile(fd, h[i], &f)) {
			if (merged >= 0)
				close(merged);
			return -errno;
		}
		if (merged < 0) {
			merged = f;
			continue;
		}
		md.fd2 = f;
		strcpy(md.name, "rkaccel-split");
		if (ioctl(merged, SYNC_IOC_MERGE, &md)) {
			int ret = -errno;

			close(f);
			close(merged);
			return ret;
		}
		close(f);
		close(merged);
		merged = md.fence;
	}
	return merged;
}

int split_run_submit(struct split_run *s, const struct split_io *io, uint32_t in_sync,
		     int *fence)
{
	uint32_t h[SPLIT_MAX_PARTS], n;
	int ret = 0;

	fdinfo_core_ns(s->fd, s->before, RKACCEL_MAX_CORES);
	for (uint32_t j = 0; !ret && j < s->sj->num_jobs; j++)
		ret = job_submit(s, io, j, in_sync);
	if (ret || !fence)
		return ret;
	n = last_jobs(s, h);
	*fence = fence_of(s->fd, h, n);
	return *fence < 0 ? *fence : 0;
}

int split_run_wait(struct split_run *s)
{
	uint64_t after[RKACCEL_MAX_CORES];
	uint32_t h[SPLIT_MAX_PARTS], n = last_jobs(s, h);
	int ret = 0;

	if (drmSyncobjWait(s->fd, h, n, (int64_t)(now_ns() + SPLIT_WAIT_NS),
			   DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL | DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
			   NULL))
		return -errno;
	/* a failed job's dependants may have run on its garbage: report the first error */
	for (uint32_t j = 0; !ret && j < s->sj->num_jobs; j++)
		ret = fence_status(s->fd, s->sync[j]);
	fdinfo_core_ns(s->fd, after, RKACCEL_MAX_CORES);
	for (uint32_t k = 0; k < RKACCEL_MAX_CORES; k++)
		s->core_ns[k] = after[k] - s->before[k];
	return ret;
}

void split_run_info(const struct split_run *s, struct rkaccel_run_info *info)
{
	info->jobs = s->sj->num_jobs;
	info->waits = 0;
	for (uint32_t j = 0; j < s->sj->num_jobs; j++)
		info->waits += s->sj->job[j].wait_count;
	info->split_layers = s->sj->split_layers;
	memcpy(info->core_ns, s->core_ns, sizeof(info->core_ns));
}

/* Job @j alone, timed on its core by the device. */
static int job_time(struct split_run *s, const struct split_io *io, uint32_t j, uint64_t *ns)
{
	uint64_t before[RKACCEL_MAX_CORES], after[RKACCEL_MAX_CORES];
	uint32_t core = s->core_id[s->sj->job[j].core];
	int ret;

	if (core >= RKACCEL_MAX_CORES)
		return -EINVAL;
	fdinfo_core_ns(s->fd, before, RKACCEL_MAX_CORES);
	ret = job_submit(s, io, j, 0);
	if (!ret && drmSyncobjWait(s->fd, &s->sync[j], 1, (int64_t)(now_ns() + SPLIT_WAIT_NS),
				   DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL))
		ret = -errno;
	if (!ret)
		ret = fence_status(s->fd, s->sync[j]);
	fdinfo_core_ns(s->fd, after, RKACCEL_MAX_CORES);
	*ns = after[core] - before[core];
	return ret;
}

int split_run_job_times(struct split_run *s, const struct split_io *io, uint64_t *ns)
{
	int ret = 0;

	for (uint32_t j = 0; !ret && j < s->sj->num_jobs; j++)
		ret = job_time(s, io, j, &ns[j]);
	return ret;
}

int split_run_latency(struct split_run *s, const struct split_io *io, uint64_t boundary_ns,
		      uint32_t time_scale, uint64_t *ns)
{
	const struct split_jobs *sj = s->sj;
	uint64_t core_end[SPLIT_MAX_PARTS] = { 0 }, *end = calloc(sj->num_jobs, sizeof(*end));
	uint64_t latency = 0;
	int ret = end ? 0 : -ENOMEM;

	for (uint32_t j = 0; !ret && j < sj->num_jobs; j++) {
		const struct split_job *job = &sj->job[j];
		uint64_t t = 0, start = core_end[job->core];

		ret = job_time(s, io, j, &t);
		for (uint32_t w = 0; w < job->wait_count; w++) {
			uint64_t e = end[sj->waits[job->wait_first + w]];

			start = e > start ? e : start;
		}
		end[j] = start + boundary_ns + t / (time_scale ? time_scale : 1);
		core_end[job->core] = end[j];
		latency = end[j] > latency ? end[j] : latency;
	}
	free(end);
	*ns = latency;
	return ret;
}
