// SPDX-License-Identifier: MIT
/*
 * Pipes: pipelined batches. A ring of @depth slots, each a duplicate of the
 * context with native input and output memory of its own bound to every
 * slice; a run is queued asynchronously and its fence kept until popped, so
 * the host's layout conversion of one batch overlaps the NPU's time on
 * another.
 */

#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/sync_file.h>

#include "runtime.h"

struct pipe_slot {
	struct rkaccel_ctx *ctx;	/* a duplicate with the pipe's batch */
	struct rkaccel_mem *mem[2];	/* native input [0], output [1] of every slice */
	int fence;			/* the run in flight; -1 when free */
};

struct rkaccel_pipe {
	atomic_bool busy;		/* a call is under way */
	uint32_t depth, batch;
	uint32_t head;			/* the oldest run in flight */
	uint32_t count;			/* runs in flight */
	uint32_t rows, in_features, out_rows, out_features, out_bytes;
	size_t in_len, out_len;		/* row-major bytes of one batch */
	size_t nslice[2];		/* native bytes of one slice's input, output */
	struct pipe_slot slot[];
};

static int pipe_enter(struct rkaccel_pipe *p)
{
	return atomic_exchange(&p->busy, true) ? -EBUSY : 0;
}

static int pipe_leave(struct rkaccel_pipe *p, int ret)
{
	atomic_store(&p->busy, false);
	return ret;
}

static void slot_free(struct pipe_slot *s)
{
	if (s->fence >= 0)
		close(s->fence);
	/* Destroying the context unbinds the memory; jobs in flight hold the BOs. */
	rkaccel_ctx_destroy(s->ctx);
	rkaccel_mem_free(s->mem[0]);
	rkaccel_mem_free(s->mem[1]);
	memset(s, 0, sizeof(*s));
	s->fence = -1;
}

static int slot_init(struct rkaccel_pipe *p, struct rkaccel_ctx *src, struct pipe_slot *s)
{
	static const enum rkaccel_buffer which[2] = { RKACCEL_BUF_INPUT, RKACCEL_BUF_OUTPUT };
	int fd = ctx_dev_fd(src), ret, b;

	ret = rkaccel_ctx_dup(src, &s->ctx);
	if (!ret)
		ret = p->batch > 1 ? rkaccel_ctx_set_batch(s->ctx, p->batch) :
				     rkaccel_ctx_set_core_mask(s->ctx, ctx_core_mask(src));
	for (b = 0; b < 2 && !ret; b++) {
		ret = mem_alloc_fd(fd, p->batch * p->nslice[b], &s->mem[b]);
		if (!ret)
			ret = rkaccel_ctx_set_io_mem(s->ctx, which[b], s->mem[b], 0);
	}
	return ret;
}

/*
 * After a failed job the driver may have marked the slot's kernel contexts
 * guilty, refusing their later jobs: give the slot fresh ones, copied from
 * its own context (the weights stay shared). If that fails the old slot
 * stays, and its next push reports the error.
 */
static void slot_renew(struct rkaccel_pipe *p, struct pipe_slot *s)
{
	struct pipe_slot fresh = { .fence = -1 };

	if (slot_init(p, s->ctx, &fresh)) {
		slot_free(&fresh);
		return;
	}
	slot_free(s);
	*s = fresh;
}

int rkaccel_pipe_create(struct rkaccel_ctx *ctx, uint32_t depth, struct rkaccel_pipe **pipe)
{
	struct rkaccel_tensor_attr ia, oa;
	struct rkaccel_pipe *p;
	uint32_t i;
	int ret;

	if (!ctx || !pipe || depth < 1 || depth > RKACCEL_PIPE_MAX_DEPTH)
		return -EINVAL;
	ret = rkaccel_ctx_query_tensor(ctx, RKACCEL_BUF_INPUT, &ia);
	if (!ret)
		ret = rkaccel_ctx_query_tensor(ctx, RKACCEL_BUF_OUTPUT, &oa);
	if (ret)
		return ret;
	p = calloc(1, sizeof(*p) + depth * sizeof(p->slot[0]));
	if (!p)
		return -ENOMEM;
	atomic_init(&p->busy, false);
	p->depth = depth;
	p->batch = ia.dims[0];
	p->rows = ia.dims[1];
	p->in_features = ia.dims[2];
	p->out_rows = oa.dims[1];
	p->out_features = oa.dims[2];
	p->out_bytes = oa.type == RKACCEL_TENSOR_INT32 ? 4 : 1;
	p->in_len = ia.size;
	p->out_len = oa.size;
	p->nslice[0] = ia.native_size / p->batch;
	p->nslice[1] = oa.native_size / p->batch;
	for (i = 0; i < depth; i++)
		p->slot[i].fence = -1;
	for (i = 0; i < depth && !ret; i++)
		ret = slot_init(p, ctx, &p->slot[i]);
	if (ret) {
		rkaccel_pipe_destroy(p);
		return ret;
	}
	*pipe = p;
	return 0;
}

void rkaccel_pipe_destroy(struct rkaccel_pipe *pipe)
{
	uint32_t i;

	if (!pipe)
		return;
	for (i = 0; i < pipe->depth; i++)
		slot_free(&pipe->slot[i]);
	free(pipe);
}

uint32_t rkaccel_pipe_pending(const struct rkaccel_pipe *pipe)
{
	return pipe ? pipe->count : 0;
}

int rkaccel_pipe_poll_fd(const struct rkaccel_pipe *pipe)
{
	if (!pipe)
		return -EINVAL;
	return pipe->count ? pipe->slot[pipe->head].fence : -ENODATA;
}

static int pipe_push(struct rkaccel_pipe *p, const uint8_t *in)
{
	struct pipe_slot *s = &p->slot[(p->head + p->count) % p->depth];
	size_t slice = p->in_len / p->batch;
	uint32_t i;
	int ret = 0;

	for (i = 0; i < p->batch && !ret; i++)
		ret = rkaccel_to_native((const int8_t *)(in + i * slice), p->rows,
					p->in_features,
					rkaccel_ctx_io_ptr(s->ctx, RKACCEL_BUF_INPUT, i),
					p->nslice[0]);
	if (!ret)
		ret = rkaccel_ctx_run_async(s->ctx, -1, &s->fence);
	if (ret) {
		/* Whatever was queued must end before the slot's memory is reused. */
		s->fence = -1;
		rkaccel_ctx_wait(s->ctx, -1);
		if (ret != -ENOMEM && ret != -EBUSY)
			slot_renew(p, s);
		return ret;
	}
	p->count++;
	return 0;
}

int rkaccel_pipe_push(struct rkaccel_pipe *pipe, const void *in, size_t in_len)
{
	int ret;

	if (!pipe || !in)
		return -EINVAL;
	ret = pipe_enter(pipe);
	if (ret)
		return ret;
	if (in_len != pipe->in_len)
		return pipe_leave(pipe, -EINVAL);
	if (pipe->count == pipe->depth)
		return pipe_leave(pipe, -EAGAIN);
	return pipe_leave(pipe, pipe_push(pipe, in));
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Wait for @fd to signal: 0, -ETIME, or a poll error. */
static int fence_poll(int fd, int64_t timeout_ns)
{
	uint64_t end = timeout_ns < 0 ? 0 : mono_ns() + (uint64_t)timeout_ns;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	for (;;) {
		struct timespec ts, *tsp = NULL;
		int n;

		if (timeout_ns >= 0) {
			uint64_t now = mono_ns(), left = now < end ? end - now : 0;

			ts.tv_sec = (time_t)(left / 1000000000ull);
			ts.tv_nsec = (long)(left % 1000000000ull);
			tsp = &ts;
		}
		n = ppoll(&pfd, 1, tsp, NULL);
		if (n > 0)
			return 0;
		if (n == 0)
			return -ETIME;
		if (errno != EINTR)
			return -errno;
	}
}

static int pipe_pop(struct rkaccel_pipe *p, uint8_t *out, int64_t timeout_ns)
{
	struct pipe_slot *s = &p->slot[p->head];
	size_t slice = p->out_len / p->batch;
	struct sync_file_info info;
	uint32_t i;
	int ret;

	ret = fence_poll(s->fence, timeout_ns);
	if (ret)
		return ret;
	memset(&info, 0, sizeof(info));
	ret = ioctl(s->fence, SYNC_IOC_FILE_INFO, &info) ? -errno : 0;
	if (ret)
		return ret;
	close(s->fence);
	s->fence = -1;
	p->head = (p->head + 1) % p->depth;
	p->count--;
	if (info.status < 0) {
		slot_renew(p, s);
		return info.status;
	}
	for (i = 0; i < p->batch && !ret; i++)
		ret = rkaccel_from_native(rkaccel_ctx_io_ptr(s->ctx, RKACCEL_BUF_OUTPUT, i),
					  p->nslice[1], p->out_rows, p->out_features, p->out_bytes,
					  out + i * slice);
	return ret;
}

int rkaccel_pipe_pop(struct rkaccel_pipe *pipe, void *out, size_t out_len, int64_t timeout_ns)
{
	int ret;

	if (!pipe || !out)
		return -EINVAL;
	ret = pipe_enter(pipe);
	if (ret)
		return ret;
	if (out_len != pipe->out_len)
		return pipe_leave(pipe, -EINVAL);
	if (!pipe->count)
		return pipe_leave(pipe, -ENODATA);
	return pipe_leave(pipe, pipe_pop(pipe, out, timeout_ns));
}
