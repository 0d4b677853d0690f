// SPDX-License-Identifier: GPL-2.0-only
/*
 * librkaccel pipes (pipelined batches): every slice of every run bit-exact
 * against the CPU reference and in push order, runs really in flight while
 * the host pushes, the queue's limits, a job's error, a timed-out pop, two
 * threads, bad arguments, and nothing left behind.
 */

#include <poll.h>
#include <pthread.h>

#include "kselftest_harness.h"
#include "conv_run.h"
#include "net_ref.h"

static const uint32_t features[] = { 64, 48, 10 };
#define ROWS		4
#define LAYERS		2
#define SEED		5151
#define IS		((size_t)ROWS * 64)	/* row-major input bytes of a slice */
#define OS		((size_t)ROWS * 10)	/* row-major output bytes of a slice */
#define MAX_JOB_MS_PATH	"/sys/module/rkaccel/parameters/max_job_ms"

FIXTURE(pipe) {
	struct rkaccel_device *dev;
	struct rkaccel_info info;
	struct rkaccel_model *model;
	struct rkaccel_ctx *ctx;
	struct rkaccel_pipe *pipe;
	uint64_t max_job_ms;
};

FIXTURE_SETUP(pipe)
{
	ASSERT_EQ(0, rkaccel_open(NULL, &self->dev));
	ASSERT_EQ(0, rkaccel_query(self->dev, &self->info));
	ASSERT_EQ(0, rkaccel_model_random(SEED, ROWS, LAYERS, features, 0, &self->model));
	ASSERT_EQ(0, rkaccel_ctx_create(self->dev, self->model, 0, &self->ctx));
	if (rkt_param_read_u64(MAX_JOB_MS_PATH, &self->max_job_ms))
		self->max_job_ms = 0;
}

FIXTURE_TEARDOWN(pipe)
{
	rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, RKT_SIM_TASK_NS_DEFAULT);
	if (self->max_job_ms)
		rkt_param_write_u64(MAX_JOB_MS_PATH, self->max_job_ms);
	rkaccel_pipe_destroy(self->pipe);
	rkaccel_ctx_destroy(self->ctx);
	rkaccel_model_free(self->model);
	rkaccel_close(self->dev);
}

/* Input of run @run: every slice different, every run different. */
static void fill_run(int8_t *in, uint32_t batch, uint32_t run)
{
	rkt_fill_i8(in, batch * IS, 7000 + run * 131 + batch);
}

/* Compare every slice of @out with the CPU's result for @in; the first bad slice or -1. */
static int check_run(const struct rkaccel_model *m, const int8_t *in, const int8_t *out,
		     uint32_t batch)
{
	int8_t ref[OS];
	uint32_t i;

	for (i = 0; i < batch; i++) {
		if (ref_model(rkaccel_model_desc(m), in + i * IS, ref))
			return (int)i;
		if (memcmp(ref, out + i * OS, OS))
			return (int)i;
	}
	return -1;
}

static int poll_fd(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms);
}

/*
 * Runs in steady state (push while pops are pending, the queue kept full)
 * for batches 1, cores and cores + 1 at depths 1, 2 and 3: each popped run
 * is the one pushed that long ago, bit-exact against the CPU.
 */
TEST_F(pipe, steady_state_bit_exact_in_order)
{
	uint32_t batches[] = { 1, self->info.num_cores, self->info.num_cores + 1 };
	uint32_t depths[] = { 1, 2, 3 }, runs = 7;
	uint32_t bi, di, r, popped;

	for (bi = 0; bi < 3; bi++) {
		uint32_t b = batches[bi];
		int8_t *in = malloc(runs * b * IS), *out = malloc(b * OS);

		ASSERT_NE(NULL, in);
		ASSERT_NE(NULL, out);
		for (r = 0; r < runs; r++)
			fill_run(in + r * b * IS, b, r);
		ASSERT_EQ(0, rkaccel_ctx_set_batch(self->ctx, b));
		for (di = 0; di < 3; di++) {
			uint32_t d = depths[di];

			ASSERT_EQ(0, rkaccel_pipe_create(self->ctx, d, &self->pipe));
			popped = 0;
			for (r = 0; r < runs; r++) {
				if (rkaccel_pipe_pending(self->pipe) == d) {
					memset(out, 0x5a, b * OS);
					ASSERT_EQ(0, rkaccel_pipe_pop(self->pipe, out, b * OS, -1));
					EXPECT_EQ(-1, check_run(self->model, in + popped * b * IS,
								out, b))
						TH_LOG("batch %u depth %u run %u slice %d", b, d,
						       popped, check_run(self->model,
									 in + popped * b * IS,
									 out, b));
					popped++;
				}
				ASSERT_EQ(0, rkaccel_pipe_push(self->pipe, in + r * b * IS, b * IS));
				EXPECT_EQ(r + 1 - popped, rkaccel_pipe_pending(self->pipe));
			}
			while (popped < runs) {
				memset(out, 0x5a, b * OS);
				ASSERT_EQ(0, rkaccel_pipe_pop(self->pipe, out, b * OS, -1));
				EXPECT_EQ(-1, check_run(self->model, in + popped * b * IS, out, b))
					TH_LOG("batch %u depth %u run %u", b, d, popped);
				popped++;
			}
			EXPECT_EQ(0, rkaccel_pipe_pending(self->pipe));
			EXPECT_EQ(-ENODATA, rkaccel_pipe_pop(self->pipe, out, b * OS, 0));
			rkaccel_pipe_destroy(self->pipe);
			self->pipe = NULL;
		}
		free(in);
		free(out);
	}
}

/*
 * An image model (rows are pixels, a residual add: not a chain) through a
 * pipe at batch = cores, depth 2: every slice of every run equals the
 * context's own synchronous run of the same batch and the CPU reference.
 */
TEST_F(pipe, image_model_bit_exact)
{
	uint32_t b = self->info.num_cores, runs = 4, r, i;
	struct rkaccel_model *m;
	struct rkaccel_ctx *ctx;
	size_t is, os;
	int8_t *in, *out, *want, *cpu;
	char msg[256];

	ASSERT_EQ(0, rkaccel_model_from_text(33, RKT_RESIDUAL_NET, &m, msg, sizeof(msg))) TH_LOG("%s", msg);
	ASSERT_EQ(0, rkaccel_ctx_create(self->dev, m, 0, &ctx));
	ASSERT_EQ(0, rkaccel_ctx_set_batch(ctx, b));
	is = rkaccel_ctx_input_size(ctx);
	os = rkaccel_ctx_output_size(ctx);
	in = malloc(runs * is);
	out = malloc(os);
	want = malloc(os);
	cpu = malloc(os / b);
	ASSERT_TRUE(in && out && want && cpu);
	rkt_fill_i8(in, runs * is, 6161);
	ASSERT_EQ(0, rkaccel_pipe_create(ctx, 2, &self->pipe));
	for (r = 0; r < runs; r++) {
		if (rkaccel_pipe_pending(self->pipe) == 2) {
			ASSERT_EQ(0, rkaccel_pipe_pop(self->pipe, out, os, -1));
		}
		ASSERT_EQ(0, rkaccel_pipe_push(self->pipe, in + r * is, is));
	}
	/* the last two runs: popped in order, checked against the context's run */
	for (r = runs - 2; r < runs; r++) {
		memset(out, 0x5a, os);
		ASSERT_EQ(0, rkaccel_pipe_pop(self->pipe, out, os, -1));
		ASSERT_EQ(0, rkaccel_ctx_run(ctx, in + r * is, is, want, os));
		for (i = 0; i < b; i++) {
			EXPECT_EQ(0, memcmp(out + i * os / b, want + i * os / b, os / b))
				TH_LOG("run %u slice %u differs from the context's run", r, i);
			ASSERT_EQ(0, ref_net(rkaccel_model_desc(m), in + r * is + i * is / b, cpu));
			EXPECT_EQ(0, memcmp(cpu, want + i * os / b, os / b))
				TH_LOG("run %u slice %u differs from the CPU", r, i);
		}
	}
	rkaccel_pipe_destroy(self->pipe);
	self->pipe = NULL;
	rkaccel_ctx_destroy(ctx);
	rkaccel_model_free(m);
	free(in);
	free(out);
	free(want);
	free(cpu);
}

/*
 * The point of a pipe: pushing does not wait for the NPU. With 100 ms a
 * task, two pushes of batch `cores` return while the first run is still
 * in flight (its fence unsignalled), a third gets -EAGAIN, and a pop with
 * no time to wait gets -ETIME and leaves the run queued.
 */
TEST_F(pipe, push_does_not_wait_for_the_npu)
{
	uint32_t b = self->info.num_cores;
	int8_t *in = malloc(2 * b * IS), *out = malloc(b * OS);
	uint64_t t0, dt;
	int fd;

	ASSERT_NE(NULL, in);
	ASSERT_NE(NULL, out);
	fill_run(in, b, 0);
	fill_run(in + b * IS, b, 1);
	ASSERT_EQ(0, rkaccel_ctx_set_batch(self->ctx, b));
	ASSERT_EQ(0, rkaccel_pipe_create(self->ctx, 2, &self->pipe));
	EXPECT_EQ(-ENODATA, rkaccel_pipe_poll_fd(self->pipe));
	ASSERT_EQ(0, rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, 100000000));
	t0 = rkt_now_ns();
	ASSERT_EQ(0, rkaccel_pipe_push(self->pipe, in, b * IS));
	ASSERT_EQ(0, rkaccel_pipe_push(self->pipe, in + b * IS, b * IS));
	dt = rkt_now_ns() - t0;
	fd = rkaccel_pipe_poll_fd(self->pipe);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, poll_fd(fd, 0)) TH_LOG("the first run ended within the pushes (%llu ms)",
					    (unsigned long long)dt / RKT_NSEC_PER_MSEC);
	EXPECT_EQ(-EAGAIN, rkaccel_pipe_push(self->pipe, in, b * IS));
	EXPECT_EQ(-ETIME, rkaccel_pipe_pop(self->pipe, out, b * OS, 0));
	EXPECT_EQ(2, rkaccel_pipe_pending(self->pipe));
	EXPECT_EQ(fd, rkaccel_pipe_poll_fd(self->pipe));
	EXPECT_EQ(1, poll_fd(fd, 20000));
	ASSERT_EQ(0, rkaccel_pipe_pop(self->pipe, out, b * OS, 0));
	EXPECT_EQ(-1, check_run(self->model, in, out, b));
	ASSERT_EQ(0, rkaccel_pipe_pop(self->pipe, out, b * OS, 20 * RKT_NSEC_PER_SEC));
	EXPECT_EQ(-1, check_run(self->model, in + b * IS, out, b));
	EXPECT_EQ(-ENODATA, rkaccel_pipe_poll_fd(self->pipe));
	free(in);
	free(out);
}

/* The pipe copies the context: destroying or changing it later changes nothing. */
TEST_F(pipe, outlives_its_context)
{
	int8_t in[2 * IS], out[2 * OS];

	ASSERT_EQ(0, rkaccel_ctx_set_batch(self->ctx, 2));
	ASSERT_EQ(0, rkaccel_pipe_create(self->ctx, 2, &self->pipe));
	ASSERT_EQ(0, rkaccel_ctx_set_batch(self->ctx, 5));
	rkaccel_ctx_destroy(self->ctx);
	self->ctx = NULL;
	fill_run(in, 2, 9);
	ASSERT_EQ(0, rkaccel_pipe_push(self->pipe, in, sizeof(in)));
	ASSERT_EQ(0, rkaccel_pipe_pop(self->pipe, out, sizeof(out), -1));
	EXPECT_EQ(-1, check_run(self->model, in, out, 2));
}

/* A batch-1 pipe keeps the context's core mask: every job on core 0. */
TEST_F(pipe, batch1_keeps_core_mask)
{
	struct rkaccel_core_stats st[8];
	uint64_t jobs0[8] = { 0 };
	int8_t in[IS], out[OS];
	int n, i, r;

	ASSERT_EQ(0, rkaccel_ctx_set_core_mask(self->ctx, 1));
	ASSERT_EQ(0, rkaccel_pipe_create(self->ctx, 3, &self->pipe));
	n = rkaccel_core_stats(self->dev, st, 8);
	if (n < 0)
		SKIP(return, "no debugfs core stats: %s", rkaccel_strerror(n));
	for (i = 0; i < n; i++)
		jobs0[i] = st[i].jobs;
	fill_run(in, 1, 3);
	for (r = 0; r < 9; r++) {
		if (rkaccel_pipe_pending(self->pipe) == 3) {
			ASSERT_EQ(0, rkaccel_pipe_pop(self->pipe, out, OS, -1));
		}
		ASSERT_EQ(0, rkaccel_pipe_push(self->pipe, in, IS));
	}
	while (rkaccel_pipe_pending(self->pipe)) {
		ASSERT_EQ(0, rkaccel_pipe_pop(self->pipe, out, OS, -1));
	}
	EXPECT_EQ(-1, check_run(self->model, in, out, 1));
	ASSERT_EQ(n, rkaccel_core_stats(self->dev, st, 8));
	EXPECT_LE(9, st[0].jobs - jobs0[0]);
	for (i = 1; i < n; i++) {
		EXPECT_EQ(jobs0[i], st[i].jobs) TH_LOG("core %d ran a job of a core-0 pipe", i);
	}
}

/*
 * A job that fails: 2 s a task and a cap of 300 ms per job. The error is
 * the push's (a job failed before the call returned) or the pop's; either
 * way the run is out of the queue, no slot is lost, and the pipe goes on
 * working (the driver refuses further jobs of a guilty context).
 */
TEST_F(pipe, job_error_reported)
{
	uint32_t b = self->info.num_cores;
	int8_t *in = malloc(b * IS), *out = malloc(b * OS);
	int ret;

	ASSERT_NE(NULL, in);
	ASSERT_NE(NULL, out);
	if (!self->max_job_ms)
		SKIP(return, "no max_job_ms parameter");
	fill_run(in, b, 4);
	ASSERT_EQ(0, rkaccel_ctx_set_batch(self->ctx, b));
	ASSERT_EQ(0, rkaccel_pipe_create(self->ctx, 2, &self->pipe));
	ASSERT_EQ(0, rkt_param_write_u64(MAX_JOB_MS_PATH, 300));
	ASSERT_EQ(0, rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, 2000000000ull));
	ret = rkaccel_pipe_push(self->pipe, in, b * IS);
	if (!ret) {
		EXPECT_EQ(1, rkaccel_pipe_pending(self->pipe));
		ret = rkaccel_pipe_pop(self->pipe, out, b * OS, 30 * RKT_NSEC_PER_SEC);
	}
	EXPECT_GT(0, ret);
	EXPECT_NE(-ETIME, ret);
	TH_LOG("the failed run gave %s", rkaccel_strerror(ret));
	EXPECT_EQ(0, rkaccel_pipe_pending(self->pipe));
	EXPECT_EQ(-ENODATA, rkaccel_pipe_pop(self->pipe, out, b * OS, 0));
	/* The pipe goes on: both slots, the failed one with fresh kernel contexts. */
	ASSERT_EQ(0, rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, RKT_SIM_TASK_NS_DEFAULT));
	ASSERT_EQ(0, rkt_param_write_u64(MAX_JOB_MS_PATH, self->max_job_ms));
	for (int r = 0; r < 3; r++) {
		fill_run(in, b, 20 + r);
		ASSERT_EQ(0, rkaccel_pipe_push(self->pipe, in, b * IS)) TH_LOG("run %d", r);
		memset(out, 0x5a, b * OS);
		ASSERT_EQ(0, rkaccel_pipe_pop(self->pipe, out, b * OS, -1)) TH_LOG("run %d", r);
		EXPECT_EQ(-1, check_run(self->model, in, out, b)) TH_LOG("run %d", r);
	}
	free(in);
	free(out);
}

struct pop_arg {
	struct rkaccel_pipe *pipe;
	int8_t out[OS];
	int ret;
};

static void *pop_thread(void *p)
{
	struct pop_arg *a = p;

	a->ret = rkaccel_pipe_pop(a->pipe, a->out, OS, 20 * RKT_NSEC_PER_SEC);
	return NULL;
}

/* While one thread waits in a pop, another's call gets -EBUSY, changing nothing. */
TEST_F(pipe, one_call_at_a_time)
{
	struct pop_arg a = { 0 };
	int8_t in[IS];
	pthread_t t;

	ASSERT_EQ(0, rkaccel_pipe_create(self->ctx, 2, &self->pipe));
	fill_run(in, 1, 5);
	ASSERT_EQ(0, rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, 200000000));
	ASSERT_EQ(0, rkaccel_pipe_push(self->pipe, in, IS));
	a.pipe = self->pipe;
	ASSERT_EQ(0, pthread_create(&t, NULL, pop_thread, &a));
	usleep(100000);
	EXPECT_EQ(-EBUSY, rkaccel_pipe_push(self->pipe, in, IS));
	EXPECT_EQ(-EBUSY, rkaccel_pipe_pop(self->pipe, a.out, OS, 0));
	pthread_join(t, NULL);
	EXPECT_EQ(0, a.ret);
	EXPECT_EQ(-1, check_run(self->model, in, a.out, 1));
	EXPECT_EQ(0, rkaccel_pipe_pending(self->pipe));
}

TEST_F(pipe, bad_arguments)
{
	struct rkaccel_pipe *p = (struct rkaccel_pipe *)0x1;
	int8_t in[2 * IS], out[2 * OS];

	EXPECT_EQ(-EINVAL, rkaccel_pipe_create(NULL, 2, &p));
	EXPECT_EQ(-EINVAL, rkaccel_pipe_create(self->ctx, 2, NULL));
	EXPECT_EQ(-EINVAL, rkaccel_pipe_create(self->ctx, 0, &p));
	EXPECT_EQ(-EINVAL, rkaccel_pipe_create(self->ctx, RKACCEL_PIPE_MAX_DEPTH + 1, &p));
	EXPECT_EQ((struct rkaccel_pipe *)0x1, p) TH_LOG("a failed create stored a pipe");
	EXPECT_EQ(-EINVAL, rkaccel_pipe_push(NULL, in, IS));
	EXPECT_EQ(-EINVAL, rkaccel_pipe_pop(NULL, out, OS, 0));
	EXPECT_EQ(0, rkaccel_pipe_pending(NULL));
	EXPECT_EQ(-EINVAL, rkaccel_pipe_poll_fd(NULL));
	rkaccel_pipe_destroy(NULL);

	ASSERT_EQ(0, rkaccel_pipe_create(self->ctx, RKACCEL_PIPE_MAX_DEPTH, &self->pipe));
	fill_run(in, 2, 6);
	EXPECT_EQ(-EINVAL, rkaccel_pipe_push(self->pipe, NULL, IS));
	EXPECT_EQ(-EINVAL, rkaccel_pipe_push(self->pipe, in, IS - 1));
	EXPECT_EQ(-EINVAL, rkaccel_pipe_push(self->pipe, in, 2 * IS));
	EXPECT_EQ(0, rkaccel_pipe_pending(self->pipe));
	EXPECT_EQ(-ENODATA, rkaccel_pipe_pop(self->pipe, out, OS, -1));
	ASSERT_EQ(0, rkaccel_pipe_push(self->pipe, in, IS));
	EXPECT_EQ(-EINVAL, rkaccel_pipe_pop(self->pipe, NULL, OS, -1));
	EXPECT_EQ(-EINVAL, rkaccel_pipe_pop(self->pipe, out, OS + 1, -1));
	EXPECT_EQ(1, rkaccel_pipe_pending(self->pipe));
	ASSERT_EQ(0, rkaccel_pipe_pop(self->pipe, out, OS, -1));
	EXPECT_EQ(-1, check_run(self->model, in, out, 1));
}

/*
 * 120 pipes created, used and destroyed, every tenth with runs still in
 * flight: no BO, kernel context or fd is left once the jobs are done.
 */
TEST_F_TIMEOUT(pipe, cycles_leave_nothing, 180)
{
	long bos0, ctx0, fds0 = rkt_count_fds();
	uint32_t b = self->info.num_cores;
	uint64_t t0 = rkt_now_ns();
	int8_t *in = malloc(b * IS), *out = malloc(b * OS);
	int i;

	ASSERT_NE(NULL, in);
	ASSERT_NE(NULL, out);
	/* The context's own hidden copies first: they stay. */
	ASSERT_EQ(0, rkaccel_ctx_set_batch(self->ctx, b));
	if (rkt_debugfs_count("bos", &bos0) || rkt_debugfs_count("contexts", &ctx0))
		SKIP(return, "no debugfs counts");
	fill_run(in, b, 8);
	for (i = 0; i < 120; i++) {
		ASSERT_EQ(0, rkaccel_pipe_create(self->ctx, 1 + i % 3, &self->pipe))
			TH_LOG("cycle %d", i);
		ASSERT_EQ(0, rkaccel_pipe_push(self->pipe, in, b * IS)) TH_LOG("cycle %d", i);
		if (i % 10) {
			ASSERT_EQ(0, rkaccel_pipe_pop(self->pipe, out, b * OS, -1));
			ASSERT_EQ(-1, check_run(self->model, in, out, b)) TH_LOG("cycle %d", i);
		}
		rkaccel_pipe_destroy(self->pipe);
		self->pipe = NULL;
	}
	TH_LOG("120 cycles in %llu ms",
	       (unsigned long long)((rkt_now_ns() - t0) / RKT_NSEC_PER_MSEC));
	EXPECT_EQ(bos0, rkt_debugfs_settle("bos", bos0));
	EXPECT_EQ(ctx0, rkt_debugfs_settle("contexts", ctx0));
	EXPECT_EQ(fds0, rkt_count_fds());
	free(in);
	free(out);
}

TEST_HARNESS_MAIN
