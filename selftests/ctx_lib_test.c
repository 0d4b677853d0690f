// SPDX-License-Identifier: GPL-2.0-only
/*
 * librkaccel contexts: every batch slice bit-exact against the slice run
 * alone, slices on different cores at once, weights held once across
 * duplicates, pixels quantized on each slice's thread as the int8 run,
 * argument checks, and no BO or context left behind.
 */

#include <pthread.h>

#include "kselftest_harness.h"
#include "conv_run.h"

static const uint32_t features[] = { 64, 48, 10 };
#define ROWS		4
#define LAYERS		2
#define SEED		4242

FIXTURE(ctxl) {
	struct rkaccel_device *dev;
	int fd;
	struct rkaccel_info info;
	struct rkaccel_model *model;
	struct rkaccel_ctx *ctx, *one;
	int8_t *in, *out, *ref;
};

FIXTURE_SETUP(ctxl)
{
	ASSERT_EQ(0, rkaccel_open(NULL, &self->dev));
	self->fd = rkaccel_fd(self->dev);
	ASSERT_EQ(0, rkaccel_query(self->dev, &self->info));
	ASSERT_EQ(0, rkaccel_model_random(SEED, ROWS, LAYERS, features, 0, &self->model));
}

FIXTURE_TEARDOWN(ctxl)
{
	rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, RKT_SIM_TASK_NS_DEFAULT);
	rkaccel_ctx_destroy(self->ctx);
	rkaccel_ctx_destroy(self->one);
	rkaccel_model_free(self->model);
	free(self->in);
	free(self->out);
	free(self->ref);
	rkaccel_close(self->dev);
}

/* Size the buffers for @ctx's batch and fill the input, distinct per slice. */
static int alloc_io(FIXTURE_DATA(ctxl) *self, uint64_t seed)
{
	size_t in_len = rkaccel_ctx_input_size(self->ctx);
	size_t out_len = rkaccel_ctx_output_size(self->ctx);

	free(self->in);
	free(self->out);
	free(self->ref);
	self->in = malloc(in_len);
	self->out = malloc(out_len);
	self->ref = malloc(out_len);
	if (!self->in || !self->out || !self->ref)
		return -ENOMEM;
	rkt_fill_i8(self->in, in_len, seed);
	memset(self->out, 0x5a, out_len);
	return 0;
}

static int run_all(FIXTURE_DATA(ctxl) *self)
{
	return rkaccel_ctx_run(self->ctx, self->in, rkaccel_ctx_input_size(self->ctx),
			       self->out, rkaccel_ctx_output_size(self->ctx));
}

/* Sum of the BO sizes @ctx owns itself (everything but the weights). */
static uint64_t own_bo_bytes(FIXTURE_DATA(ctxl) *self, struct rkaccel_ctx *ctx)
{
	struct drm_rkaccel_bo_info bi;
	uint64_t sum = 0;
	int i;

	for (i = 0; i < RKACCEL_BUF_COUNT; i++) {
		uint32_t h = rkaccel_ctx_bo_handle(ctx, i);

		if (i == RKACCEL_BUF_WEIGHTS || !h)
			continue;
		if (rkt_bo_info(self->fd, h, &bi))
			return 0;
		sum += rkt_round_up(bi.size, DRM_RKACCEL_BO_ALIGN);
	}
	return sum;
}

TEST_F(ctxl, batch_slices_bit_exact)
{
	uint32_t max_b = self->info.num_cores * 2 + 1, b, i;
	size_t is = (size_t)ROWS * features[0], os = (size_t)ROWS * features[LAYERS];
	int8_t cpu[ROWS * 10];

	if (max_b < 7)
		max_b = 7;
	ASSERT_EQ(0, rkaccel_ctx_create(self->dev, self->model, 0, &self->one));
	for (b = 1; b <= max_b; b++) {
		uint32_t want = (b < self->info.num_cores ? b : self->info.num_cores) - 1;

		ASSERT_EQ(0, rkaccel_ctx_create(self->dev, self->model, 0, &self->ctx));
		ASSERT_EQ(0, rkaccel_ctx_set_batch(self->ctx, b));
		EXPECT_EQ(want, rkaccel_ctx_copies(self->ctx));
		ASSERT_EQ(b * is, rkaccel_ctx_input_size(self->ctx));
		ASSERT_EQ(b * os, rkaccel_ctx_output_size(self->ctx));
		ASSERT_EQ(0, alloc_io(self, 1000 + b));
		ASSERT_EQ(0, run_all(self));
		for (i = 0; i < b; i++) {
			ASSERT_EQ(0, rkaccel_ctx_run(self->one, self->in + i * is, is,
						     self->ref + i * os, os));
			EXPECT_EQ(0, memcmp(self->out + i * os, self->ref + i * os, os))
				TH_LOG("batch %u slice %u differs from the slice alone", b, i);
			ASSERT_EQ(0, ref_model(rkaccel_model_desc(self->model),
					       self->in + i * is, cpu));
			EXPECT_EQ(0, memcmp(cpu, self->ref + i * os, os))
				TH_LOG("batch %u slice %u differs from the CPU", b, i);
		}
		rkaccel_ctx_destroy(self->ctx);
		self->ctx = NULL;
	}
}

/*
 * With B = cores and TASK_NS per task, every slice runs on its own core, at
 * the same time: the batch takes less than three quarters of its slices'
 * summed times. The driver balances by queued jobs, so this holds on the
 * first run, as long as every slice is submitted before the first ends:
 * with 10 ms a task, a batch thread started late on a loaded 2-core host
 * (arm64 TCG guest, load 3) found core 0 idle again, twice in a row. The
 * host's own time per run (threads, submits, KASAN) is not in the slices'
 * times: with 50 ms a task the RK3576 debug guest took 180 ms for slices of
 * 239 ms together (0.751, two cores), so the slices are long against it.
 */
#define TASK_NS		100000000ull

TEST_F(ctxl, slices_on_distinct_cores)
{
	uint32_t n = self->info.num_cores, i, k, core[8];
	uint64_t ns, sum = 0, t0, wall;

	ASSERT_LE(n, 8);
	if (n < 2)
		SKIP(return, "one core");
	ASSERT_EQ(0, rkaccel_ctx_create(self->dev, self->model, 0, &self->ctx));
	ASSERT_EQ(0, rkaccel_ctx_set_batch(self->ctx, n));
	ASSERT_EQ(n - 1, rkaccel_ctx_copies(self->ctx));
	ASSERT_EQ(0, alloc_io(self, 77));
	ASSERT_EQ(-ENODATA, rkaccel_ctx_slice_info(self->ctx, 0, &core[0], &ns));
	ASSERT_EQ(0, rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, TASK_NS));
	t0 = rkt_now_ns();
	ASSERT_EQ(0, run_all(self));
	wall = rkt_now_ns() - t0;
	ASSERT_EQ(0, rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, RKT_SIM_TASK_NS_DEFAULT));
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, rkaccel_ctx_slice_info(self->ctx, i, &core[i], &ns));
		ASSERT_LT(core[i], n);
		EXPECT_GE(ns, TASK_NS) TH_LOG("slice %u took %llu ns", i,
						 (unsigned long long)ns);
		sum += ns;
		for (k = 0; k < i; k++) {
			EXPECT_NE(core[k], core[i]) TH_LOG("slices %u and %u on core %u", k, i,
							   core[i]);
		}
	}
	EXPECT_GT(sum * 3 / 4, wall) TH_LOG("batch %llu us, slices together %llu us",
					    (unsigned long long)wall / 1000,
					    (unsigned long long)sum / 1000);
	EXPECT_EQ(-EINVAL, rkaccel_ctx_slice_info(self->ctx, n, &core[0], &ns));
}

TEST_F(ctxl, weights_held_once)
{
	struct rkaccel_ctx *dup = NULL;
	uint64_t before, after, own, wsize, w1, w3;
	struct drm_rkaccel_bo_info bi;
	uint32_t w, copies;

	ASSERT_EQ(0, rkaccel_ctx_create(self->dev, self->model, 0, &self->ctx));
	w = rkaccel_ctx_bo_handle(self->ctx, RKACCEL_BUF_WEIGHTS);
	ASSERT_NE(0, w);
	ASSERT_EQ(0, rkt_bo_info(self->fd, w, &bi));
	ASSERT_NE(0, bi.bo_flags & DRM_RKACCEL_BO_SEALED);
	wsize = rkt_round_up(bi.size, DRM_RKACCEL_BO_ALIGN);
	own = own_bo_bytes(self, self->ctx);
	ASSERT_NE(0, own);

	ASSERT_EQ(0, rkt_fdinfo_u64(self->fd, "drm-total-memory", &before));
	ASSERT_EQ(0, rkaccel_ctx_dup(self->ctx, &dup));
	ASSERT_EQ(0, rkt_fdinfo_u64(self->fd, "drm-total-memory", &after));
	EXPECT_EQ(w, rkaccel_ctx_bo_handle(dup, RKACCEL_BUF_WEIGHTS));
	EXPECT_NE(rkaccel_ctx_bo_handle(self->ctx, RKACCEL_BUF_INPUT),
		  rkaccel_ctx_bo_handle(dup, RKACCEL_BUF_INPUT));
	EXPECT_EQ(own, after - before) TH_LOG("dup grew by %llu, own %llu, weights %llu",
					       (unsigned long long)(after - before),
					       (unsigned long long)own,
					       (unsigned long long)wsize);
	/* The copy outlives the original and still runs with the shared weights. */
	rkaccel_ctx_destroy(self->ctx);
	self->ctx = dup;
	ASSERT_EQ(0, alloc_io(self, 5));
	ASSERT_EQ(0, run_all(self));
	ASSERT_EQ(0, ref_model(rkaccel_model_desc(self->model), self->in, self->ref));
	EXPECT_EQ(0, memcmp(self->out, self->ref, rkaccel_ctx_output_size(self->ctx)));

	ASSERT_EQ(0, rkt_fdinfo_u64(self->fd, "drm-total-weights", &w1));
	ASSERT_EQ(0, rkt_fdinfo_u64(self->fd, "drm-total-memory", &before));
	ASSERT_EQ(0, rkaccel_ctx_set_batch(self->ctx, 3));
	ASSERT_EQ(0, rkt_fdinfo_u64(self->fd, "drm-total-memory", &after));
	ASSERT_EQ(0, rkt_fdinfo_u64(self->fd, "drm-total-weights", &w3));
	EXPECT_EQ(wsize, w1) TH_LOG("fdinfo weights for one context");
	EXPECT_EQ(w1, w3) TH_LOG("fdinfo weights grew with the copies");
	copies = rkaccel_ctx_copies(self->ctx);
	EXPECT_EQ(self->info.num_cores >= 3 ? 2 : self->info.num_cores - 1, copies);
	EXPECT_EQ(copies * own, after - before)
		TH_LOG("batch 3 grew by %llu with %u copies of %llu own bytes",
		       (unsigned long long)(after - before), copies,
		       (unsigned long long)own);
	ASSERT_EQ(0, rkaccel_ctx_set_batch(self->ctx, 1));
	ASSERT_EQ(0, rkt_fdinfo_u64(self->fd, "drm-total-memory", &after));
	EXPECT_EQ(before, after);
}

TEST_F(ctxl, bad_arguments)
{
	size_t is, os;

	ASSERT_EQ(0, rkaccel_ctx_create(self->dev, self->model, 0, &self->ctx));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_set_batch(self->ctx, 0));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_set_batch(self->ctx, RKACCEL_CTX_MAX_BATCH + 1));
	EXPECT_EQ(1, rkaccel_ctx_batch(self->ctx));
	ASSERT_EQ(0, rkaccel_ctx_set_batch(self->ctx, RKACCEL_CTX_MAX_BATCH));
	ASSERT_EQ(0, rkaccel_ctx_set_batch(self->ctx, 2));
	ASSERT_EQ(0, alloc_io(self, 9));
	is = rkaccel_ctx_input_size(self->ctx);
	os = rkaccel_ctx_output_size(self->ctx);
	EXPECT_EQ(-EINVAL, rkaccel_ctx_run(self->ctx, self->in, is - 1, self->out, os));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_run(self->ctx, self->in, is / 2, self->out, os));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_run(self->ctx, self->in, is, self->out, os + 1));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_run(self->ctx, NULL, is, self->out, os));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_run(self->ctx, self->in, is, NULL, os));
	EXPECT_EQ(0, rkaccel_ctx_run(self->ctx, self->in, is, self->out, os));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_create(self->dev, NULL, 0, &self->one));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_create(self->dev, self->model, 1u << 31, &self->one));
	EXPECT_EQ(NULL, self->one);
	EXPECT_EQ(-EINVAL, rkaccel_ctx_dup(NULL, &self->one));
}

/*
 * rkaccel_ctx_run_u8() at batch 3 gives, slice by slice, what
 * rkaccel_ctx_run() gives for the bytes rkaccel_quantize_u8() makes, on
 * both of its paths (scale 1 / zero point -128 flips a bit, others go
 * through a table); and it refuses what rkaccel_ctx_run() refuses, and a
 * scale not above 0.
 */
TEST_F(ctxl, run_u8_is_quantize_then_run)
{
	static const float scales[] = { 1.0f, 0.75f };
	static const int32_t zps[] = { -128, 5 };
	size_t is, os;
	uint8_t *px;

	ASSERT_EQ(0, rkaccel_ctx_create(self->dev, self->model, 0, &self->ctx));
	ASSERT_EQ(0, rkaccel_ctx_set_batch(self->ctx, 3));
	ASSERT_EQ(0, alloc_io(self, 77));
	is = rkaccel_ctx_input_size(self->ctx);
	os = rkaccel_ctx_output_size(self->ctx);
	px = malloc(is);
	ASSERT_NE(NULL, px);
	for (size_t i = 0; i < is; i++)
		px[i] = (uint8_t)(i * 2654435761u >> 24);
	for (int k = 0; k < 2; k++) {
		rkaccel_quantize_u8(px, is, scales[k], zps[k], self->in);
		ASSERT_EQ(0, run_all(self));
		memset(self->ref, 0x5a, os);
		ASSERT_EQ(0, rkaccel_ctx_run_u8(self->ctx, px, is, scales[k], zps[k], self->ref,
						os));
		EXPECT_EQ(0, memcmp(self->out, self->ref, os)) TH_LOG("scale %g zp %d", scales[k],
								      zps[k]);
	}
	EXPECT_EQ(-EINVAL, rkaccel_ctx_run_u8(self->ctx, px, is - 1, 1.0f, -128, self->out, os));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_run_u8(self->ctx, px, is, 1.0f, -128, self->out, os + 1));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_run_u8(self->ctx, NULL, is, 1.0f, -128, self->out, os));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_run_u8(self->ctx, px, is, 1.0f, -128, NULL, os));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_run_u8(self->ctx, px, is, 0.0f, -128, self->out, os));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_run_u8(NULL, px, is, 1.0f, -128, self->out, os));
	free(px);
}

/* TCG guests are slow: a job takes a few ms to come back from the simulator. */
struct racer {
	FIXTURE_DATA(ctxl) *self;
	int ret;
};

static void *racer_run(void *p)
{
	struct racer *r = p;

	r->ret = run_all(r->self);
	return NULL;
}

/*
 * Two threads on one context: while one runs (300 ms a task), every call
 * of the other that runs or changes the context gets -EBUSY and changes
 * nothing; the first run ends bit-exact, and the context runs again after.
 */
TEST_F_TIMEOUT(ctxl, concurrent_calls_busy, 120)
{
	size_t is = (size_t)ROWS * features[0], os = (size_t)ROWS * features[LAYERS];
	struct racer r = { .self = self, .ret = 1 };
	struct drm_rkaccel_ctx_query q;
	int8_t cpu[ROWS * 10];
	pthread_t t;
	int i, f = -1;

	ASSERT_EQ(0, rkaccel_ctx_create(self->dev, self->model, 0, &self->ctx));
	ASSERT_EQ(0, alloc_io(self, 99));
	ASSERT_EQ(0, ref_model(rkaccel_model_desc(self->model), self->in, cpu));
	ASSERT_EQ(0, rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, 300000000));
	ASSERT_EQ(0, pthread_create(&t, NULL, racer_run, &r));
	/* Its job is queued: the run is under way. */
	for (i = 0; i < 2000; i++) {
		ASSERT_EQ(0, rkt_ctx_query(self->fd, rkaccel_ctx_kernel_handle(self->ctx), &q));
		if (q.jobs_submitted)
			break;
		usleep(1000);
	}
	ASSERT_EQ(1, q.jobs_submitted);
	EXPECT_EQ(-EBUSY, rkaccel_ctx_run(self->ctx, self->in, is, self->ref, os));
	EXPECT_EQ(-EBUSY, rkaccel_ctx_run_native(self->ctx));
	EXPECT_EQ(-EBUSY, rkaccel_ctx_run_async(self->ctx, -1, &f));
	EXPECT_EQ(-1, f);
	EXPECT_EQ(-EBUSY, rkaccel_ctx_wait(self->ctx, 0));
	EXPECT_EQ(-EBUSY, rkaccel_ctx_set_batch(self->ctx, 2));
	EXPECT_EQ(-EBUSY, rkaccel_ctx_set_core_mask(self->ctx, 1));
	EXPECT_EQ(-EBUSY, rkaccel_ctx_set_io_mem(self->ctx, RKACCEL_BUF_INPUT, NULL, 0));
	EXPECT_EQ(1, rkaccel_ctx_batch(self->ctx));
	ASSERT_EQ(0, rkt_ctx_query(self->fd, rkaccel_ctx_kernel_handle(self->ctx), &q));
	EXPECT_EQ(1, q.jobs_submitted) TH_LOG("a refused call queued a job");
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_EQ(0, r.ret);
	EXPECT_EQ(0, memcmp(self->out, cpu, os));
	ASSERT_EQ(0, rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, RKT_SIM_TASK_NS_DEFAULT));
	memset(self->out, 0, os);
	EXPECT_EQ(0, run_all(self));
	EXPECT_EQ(0, memcmp(self->out, cpu, os));
	EXPECT_EQ(0, rkaccel_ctx_wait(self->ctx, -1));
}

TEST_F_TIMEOUT(ctxl, cycles_leave_nothing, 180)
{
	static const uint32_t tiny_f[] = { 16, 16 };
	long bos0, ctx0, fds0 = rkt_count_fds();
	int8_t in[16], out[16], ref[16];
	uint64_t t0 = rkt_now_ns();
	struct rkaccel_mem *mem = NULL;
	int i, f;

	if (rkt_debugfs_count("bos", &bos0) || rkt_debugfs_count("contexts", &ctx0))
		SKIP(return, "no debugfs counts");
	/*
	 * A one-layer 1 x 16 model keeps 1000 cycles fast under TCG; a debug
	 * kernel on a loaded host stops after 100 s (at least 100 cycles: every
	 * kind of cycle ran ten times), well inside the harness's 180.
	 */
	rkaccel_model_free(self->model);
	ASSERT_EQ(0, rkaccel_model_random(SEED, 1, 1, tiny_f, 0, &self->model));
	rkt_fill_i8(in, sizeof(in), 99);
	ASSERT_EQ(0, ref_model(rkaccel_model_desc(self->model), in, ref));
	for (i = 0; i < 1000; i++) {
		if (i >= 100 && rkt_now_ns() - t0 > 100 * RKT_NSEC_PER_SEC)
			break;
		ASSERT_EQ(0, rkaccel_ctx_create(self->dev, self->model, 0, &self->ctx));
		ASSERT_EQ(0, rkaccel_ctx_dup(self->ctx, &self->one));
		memset(out, 0x5a, sizeof(out));
		ASSERT_EQ(0, rkaccel_ctx_run(self->one, in, sizeof(in), out, sizeof(out)))
			TH_LOG("cycle %d", i);
		ASSERT_EQ(0, memcmp(out, ref, sizeof(out))) TH_LOG("cycle %d", i);
		if (i % 10 == 0) {
			/* Now and then a batch with hidden copies, bound memory, async. */
			ASSERT_EQ(0, rkaccel_ctx_set_batch(self->ctx, 3));
			ASSERT_EQ(0, alloc_io(self, i));
			ASSERT_EQ(0, run_all(self)) TH_LOG("cycle %d", i);
			ASSERT_EQ(0, rkaccel_mem_alloc(self->dev, 4096, &mem));
			ASSERT_EQ(0, rkaccel_ctx_set_io_mem(self->one, RKACCEL_BUF_INPUT, mem, 0));
			ASSERT_EQ(0, rkaccel_ctx_run_async(self->one, -1, &f));
			close(f);
		}
		rkaccel_ctx_destroy(self->ctx);
		rkaccel_ctx_destroy(self->one);
		self->ctx = self->one = NULL;
		rkaccel_mem_free(mem);
		mem = NULL;
	}
	TH_LOG("%d cycles in %llu ms", i,
	       (unsigned long long)((rkt_now_ns() - t0) / RKT_NSEC_PER_MSEC));
	EXPECT_EQ(bos0, rkt_debugfs_settle("bos", bos0));
	EXPECT_EQ(ctx0, rkt_debugfs_settle("contexts", ctx0));
	EXPECT_EQ(fds0, rkt_count_fds());
}

TEST_HARNESS_MAIN
