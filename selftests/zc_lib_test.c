// SPDX-License-Identifier: GPL-2.0-only
/*
 * librkaccel zero-copy and asynchronous runs: bound I/O memory read and
 * written in place by the NPU (pointer identity, bit-exact for batch 1 and
 * 3), dma-buf export and import, fence-chained async runs, an in-fence that
 * holds a job back, tensor attributes, core masks, bad arguments, no fd or
 * BO left behind.
 */

#include <poll.h>
#include <time.h>

#include "kselftest_harness.h"
#include "conv_run.h"
#include "rkaccel_npu_regs.h"

#define ROWS		4
#define SEED		777
#define IN_OFF		128	/* a non-zero, RKACCEL_MEM_ALIGN-aligned offset */

static const uint32_t feat_a[] = { 64, 48, 32 };	/* model A: 64 -> 48 -> 32 */
static const uint32_t feat_b[] = { 32, 16 };		/* model B: 32 -> 16 */

FIXTURE(zc) {
	struct rkaccel_device *dev;
	struct rkaccel_info info;
	struct rkaccel_model *a, *b;
	struct rkaccel_ctx *ca, *cb;
	struct rkaccel_mem *m[4];
	int8_t *in, *exp, *tmp;
};

FIXTURE_SETUP(zc)
{
	ASSERT_EQ(0, rkaccel_open(NULL, &self->dev));
	ASSERT_EQ(0, rkaccel_query(self->dev, &self->info));
	ASSERT_EQ(0, rkaccel_model_random(SEED, ROWS, 2, feat_a, 0, &self->a));
	ASSERT_EQ(0, rkaccel_model_random(SEED + 1, ROWS, 1, feat_b, 0, &self->b));
	self->in = malloc(64 * ROWS * 64);
	self->exp = malloc(64 * ROWS * 64);
	self->tmp = malloc(64 * ROWS * 64 * 4);
	ASSERT_TRUE(self->in && self->exp && self->tmp);
}

FIXTURE_TEARDOWN(zc)
{
	int i;

	rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, RKT_SIM_TASK_NS_DEFAULT);
	rkaccel_ctx_destroy(self->ca);
	rkaccel_ctx_destroy(self->cb);
	for (i = 0; i < 4; i++)
		rkaccel_mem_free(self->m[i]);
	rkaccel_model_free(self->a);
	rkaccel_model_free(self->b);
	free(self->in);
	free(self->exp);
	free(self->tmp);
	rkaccel_close(self->dev);
}

static size_t nat(uint32_t features, uint32_t elem)
{
	return rkaccel_native_size(ROWS, features, elem);
}

/* Write @batch slices of seeded input for a @k-feature model into @ctx's native input. */
static int fill_native_input(struct rkaccel_ctx *ctx, uint32_t batch, uint32_t k,
			     int8_t *in, uint64_t seed)
{
	uint32_t i;
	int ret;

	rkt_fill_i8(in, (size_t)batch * ROWS * k, seed);
	for (i = 0; i < batch; i++) {
		ret = rkaccel_to_native(in + (size_t)i * ROWS * k, ROWS, k,
					rkaccel_ctx_io_ptr(ctx, RKACCEL_BUF_INPUT, i), nat(k, 1));
		if (ret)
			return ret;
	}
	return 0;
}

/* Compare @batch native output slices of @ctx (@n features, int8) with @exp. */
static int check_native_output(struct rkaccel_ctx *ctx, uint32_t batch, uint32_t n,
			       const int8_t *exp, int8_t *tmp)
{
	uint32_t i;
	int bad = 0;

	for (i = 0; i < batch; i++) {
		if (rkaccel_from_native(rkaccel_ctx_io_ptr(ctx, RKACCEL_BUF_OUTPUT, i), nat(n, 1),
					ROWS, n, 1, tmp))
			return -1;
		if (memcmp(tmp, exp + (size_t)i * ROWS * n, (size_t)ROWS * n)) {
			fprintf(stderr, "# slice %u differs from the CPU reference\n", i);
			bad++;
		}
	}
	return bad;
}

static int ref_batch(const struct rkaccel_model *m, uint32_t batch, const int8_t *in,
		     int8_t *out)
{
	const struct rkaccel_model_desc *d = rkaccel_model_desc(m);
	size_t is = (size_t)d->rows * d->layers[0].in_features;
	size_t os = (size_t)d->rows * d->layers[d->num_layers - 1].out_features;
	uint32_t i;

	for (i = 0; i < batch; i++)
		if (ref_model(d, in + i * is, out + i * os))
			return -ENOMEM;
	return 0;
}

static int fence_status(int fd)
{
	struct sync_file_info info;

	memset(&info, 0, sizeof(info));
	if (ioctl(fd, SYNC_IOC_FILE_INFO, &info))
		return -errno;
	return info.status;
}

static int poll_fd(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms);
}

TEST_F(zc, zero_copy_pointer_identity_bit_exact)
{
	static const uint32_t batches[] = { 1, 3 };
	size_t ni = nat(64, 1), no = nat(32, 1);
	uint32_t t, i, core;
	int8_t *rowmajor;

	for (t = 0; t < 2; t++) {
		uint32_t b = batches[t];

		ASSERT_EQ(0, rkaccel_ctx_create(self->dev, self->a, 0, &self->ca));
		ASSERT_EQ(0, rkaccel_ctx_set_batch(self->ca, b));
		ASSERT_EQ(0, rkaccel_mem_alloc(self->dev, IN_OFF + b * ni, &self->m[0]));
		ASSERT_EQ(0, rkaccel_mem_alloc(self->dev, b * no, &self->m[1]));
		ASSERT_EQ(0, rkaccel_ctx_set_io_mem(self->ca, RKACCEL_BUF_INPUT, self->m[0],
						    IN_OFF));
		ASSERT_EQ(0, rkaccel_ctx_set_io_mem(self->ca, RKACCEL_BUF_OUTPUT, self->m[1], 0));
		for (i = 0; i < b; i++) {
			EXPECT_EQ((uint8_t *)rkaccel_mem_ptr(self->m[0]) + IN_OFF + i * ni,
				  rkaccel_ctx_io_ptr(self->ca, RKACCEL_BUF_INPUT, i));
			EXPECT_EQ((uint8_t *)rkaccel_mem_ptr(self->m[1]) + i * no,
				  rkaccel_ctx_io_ptr(self->ca, RKACCEL_BUF_OUTPUT, i));
		}
		EXPECT_EQ(NULL, rkaccel_ctx_io_ptr(self->ca, RKACCEL_BUF_INPUT, b));
		/* The input is written into the user's memory only. */
		ASSERT_EQ(0, fill_native_input(self->ca, b, 64, self->in, 100 + b));
		memset(rkaccel_mem_ptr(self->m[1]), 0x5a, b * no);
		ASSERT_EQ(0, ref_batch(self->a, b, self->in, self->exp));
		ASSERT_EQ(0, rkaccel_ctx_run_native(self->ca));
		EXPECT_EQ(0, check_native_output(self->ca, b, 32, self->exp, self->tmp))
			TH_LOG("batch %u", b);
		for (i = 0; i < b; i++) {
			ASSERT_EQ(0, rkaccel_ctx_slice_info(self->ca, i, &core, NULL));
			EXPECT_LT(core, self->info.num_cores);
		}
		/* The converting run goes through the same memory. */
		rowmajor = malloc(b * ROWS * 32);
		ASSERT_NE(NULL, rowmajor);
		memset(rkaccel_mem_ptr(self->m[1]), 0, b * no);
		EXPECT_EQ(0, rkaccel_ctx_run(self->ca, self->in, b * ROWS * 64, rowmajor,
					     b * ROWS * 32));
		EXPECT_EQ(0, memcmp(rowmajor, self->exp, b * ROWS * 32));
		EXPECT_EQ(0, check_native_output(self->ca, b, 32, self->exp, self->tmp));
		free(rowmajor);
		rkaccel_ctx_destroy(self->ca);
		self->ca = NULL;
		rkaccel_mem_free(self->m[0]);
		rkaccel_mem_free(self->m[1]);
		self->m[0] = self->m[1] = NULL;
	}
}

TEST_F(zc, dmabuf_export_import)
{
	struct rkaccel_device *dev2;
	struct rkaccel_mem *same = NULL, *other = NULL;
	size_t ni = nat(64, 1), no = nat(32, 1);
	long bos0;
	int fd, have_count = !rkt_debugfs_count("bos", &bos0);

	ASSERT_EQ(0, rkaccel_open(NULL, &dev2));
	ASSERT_EQ(0, rkaccel_mem_alloc(self->dev, ni, &self->m[0]));
	ASSERT_EQ(0, rkaccel_mem_export(self->m[0], &fd));
	ASSERT_GE(fd, 0);
	EXPECT_EQ(-EINVAL, rkaccel_mem_from_fd(dev2, fd, 2 * 1024 * 1024, &other));
	ASSERT_EQ(0, rkaccel_mem_from_fd(dev2, fd, ni, &other));
	ASSERT_EQ(0, rkaccel_mem_from_fd(self->dev, fd, ni, &same));
	close(fd);
	EXPECT_EQ(rkaccel_mem_handle(self->m[0]), rkaccel_mem_handle(same));
	EXPECT_EQ(rkaccel_mem_npu_addr(self->m[0]), rkaccel_mem_npu_addr(same));
	EXPECT_EQ(ni, rkaccel_mem_size(other));
	/* One BO, three CPU views. */
	memset(rkaccel_mem_ptr(self->m[0]), 0x33, ni);
	EXPECT_EQ(0x33, ((uint8_t *)rkaccel_mem_ptr(other))[ni - 1]);
	EXPECT_EQ(0x33, ((uint8_t *)rkaccel_mem_ptr(same))[0]);

	/* dev2's import feeds a context on dev2; dev's mem is refused there. */
	ASSERT_EQ(0, rkaccel_ctx_create(dev2, self->a, 0, &self->cb));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_set_io_mem(self->cb, RKACCEL_BUF_INPUT, self->m[0], 0));
	ASSERT_EQ(0, rkaccel_ctx_set_io_mem(self->cb, RKACCEL_BUF_INPUT, other, 0));
	ASSERT_EQ(0, rkaccel_mem_alloc(dev2, no, &self->m[1]));
	ASSERT_EQ(0, rkaccel_ctx_set_io_mem(self->cb, RKACCEL_BUF_OUTPUT, self->m[1], 0));
	rkt_fill_i8(self->in, ROWS * 64, 31);
	ASSERT_EQ(0, rkaccel_to_native(self->in, ROWS, 64, rkaccel_mem_ptr(self->m[0]), ni));
	ASSERT_EQ(0, rkaccel_ctx_run_native(self->cb));
	ASSERT_EQ(0, ref_batch(self->a, 1, self->in, self->exp));
	EXPECT_EQ(0, check_native_output(self->cb, 1, 32, self->exp, self->tmp));

	/* The shared handle survives the first free and goes with the last. */
	rkaccel_mem_free(same);
	{
		struct drm_rkaccel_bo_info bi;

		EXPECT_EQ(0, rkt_bo_info(rkaccel_fd(self->dev), rkaccel_mem_handle(self->m[0]), &bi));
		EXPECT_EQ(self->in[0], ((int8_t *)rkaccel_mem_ptr(self->m[0]))[0]);
	}
	rkaccel_ctx_destroy(self->cb);
	self->cb = NULL;
	rkaccel_mem_free(other);
	rkaccel_mem_free(self->m[1]);
	self->m[1] = NULL;
	rkaccel_mem_free(self->m[0]);
	self->m[0] = NULL;
	rkaccel_close(dev2);
	if (have_count) {
		EXPECT_EQ(bos0, rkt_debugfs_settle("bos", bos0));
	}
}

/* Bind model A (in m0 -> m1) and model B (m1 -> m2), both with batch @b. */
static int bind_pipeline(FIXTURE_DATA(zc) *self, uint32_t b)
{
	int ret = rkaccel_ctx_create(self->dev, self->a, 0, &self->ca);

	ret = ret ?: rkaccel_ctx_create(self->dev, self->b, 0, &self->cb);
	ret = ret ?: rkaccel_ctx_set_batch(self->ca, b);
	ret = ret ?: rkaccel_ctx_set_batch(self->cb, b);
	ret = ret ?: rkaccel_mem_alloc(self->dev, b * nat(64, 1), &self->m[0]);
	ret = ret ?: rkaccel_mem_alloc(self->dev, b * nat(32, 1), &self->m[1]);
	ret = ret ?: rkaccel_mem_alloc(self->dev, b * nat(16, 1), &self->m[2]);
	ret = ret ?: rkaccel_ctx_set_io_mem(self->ca, RKACCEL_BUF_INPUT, self->m[0], 0);
	ret = ret ?: rkaccel_ctx_set_io_mem(self->ca, RKACCEL_BUF_OUTPUT, self->m[1], 0);
	ret = ret ?: rkaccel_ctx_set_io_mem(self->cb, RKACCEL_BUF_INPUT, self->m[1], 0);
	ret = ret ?: rkaccel_ctx_set_io_mem(self->cb, RKACCEL_BUF_OUTPUT, self->m[2], 0);
	return ret;
}

TEST_F(zc, async_chain_two_models)
{
	uint32_t b = 3;
	int fa, fb;
	int8_t *mid = malloc(b * ROWS * 32);

	ASSERT_NE(NULL, mid);
	ASSERT_EQ(0, bind_pipeline(self, b));
	/* B reads A's output memory in place. */
	EXPECT_EQ(rkaccel_ctx_io_ptr(self->ca, RKACCEL_BUF_OUTPUT, 2),
		  rkaccel_ctx_io_ptr(self->cb, RKACCEL_BUF_INPUT, 2));
	ASSERT_EQ(0, fill_native_input(self->ca, b, 64, self->in, 9));
	memset(rkaccel_mem_ptr(self->m[2]), 0x5a, b * nat(16, 1));
	ASSERT_EQ(0, ref_batch(self->a, b, self->in, mid));
	ASSERT_EQ(0, ref_batch(self->b, b, mid, self->exp));
	/* Slow tasks, so that B would overtake A without the fence. */
	ASSERT_EQ(0, rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, 2000000));
	ASSERT_EQ(0, rkaccel_ctx_run_async(self->ca, -1, &fa));
	ASSERT_EQ(0, rkaccel_ctx_run_async(self->cb, fa, &fb));
	EXPECT_EQ(1, poll_fd(fb, 20000));
	EXPECT_EQ(1, poll_fd(fa, 0)) TH_LOG("B done before A");
	EXPECT_EQ(1, fence_status(fb));
	EXPECT_EQ(1, fence_status(fa));
	EXPECT_EQ(-ENODATA, rkaccel_ctx_slice_info(self->ca, 0, NULL, NULL));
	EXPECT_EQ(0, check_native_output(self->cb, b, 16, self->exp, self->tmp));
	close(fa);
	close(fb);
	free(mid);
}

TEST_F(zc, async_twice_same_context)
{
	uint32_t b = 3;
	int f1, f2;

	ASSERT_EQ(0, bind_pipeline(self, b));
	ASSERT_EQ(0, fill_native_input(self->ca, b, 64, self->in, 11));
	ASSERT_EQ(0, ref_batch(self->a, b, self->in, self->exp));
	ASSERT_EQ(0, rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, 1000000));
	ASSERT_EQ(0, rkaccel_ctx_run_async(self->ca, -1, &f1));
	ASSERT_EQ(0, rkaccel_ctx_run_async(self->ca, f1, &f2));
	EXPECT_EQ(1, poll_fd(f2, 20000));
	EXPECT_EQ(1, poll_fd(f1, 0));
	EXPECT_EQ(1, fence_status(f2));
	EXPECT_EQ(0, check_native_output(self->ca, b, 32, self->exp, self->tmp));
	close(f1);
	close(f2);
}

TEST_F(zc, in_fence_holds_job)
{
	struct drm_rkaccel_ctx_query q;
	int fx, fa, fd = rkaccel_fd(self->dev);
	struct rkaccel_ctx *blocker = NULL;

	ASSERT_EQ(0, bind_pipeline(self, 1));
	ASSERT_EQ(0, fill_native_input(self->ca, 1, 64, self->in, 12));
	ASSERT_EQ(0, ref_batch(self->a, 1, self->in, self->exp));
	ASSERT_EQ(0, rkaccel_ctx_create(self->dev, self->b, 0, &blocker));
	/* The blocker's single job takes 300 ms a task; A waits for it. */
	ASSERT_EQ(0, rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, 300000000));
	ASSERT_EQ(0, rkaccel_ctx_run_async(blocker, -1, &fx));
	ASSERT_EQ(0, rkaccel_ctx_run_async(self->ca, fx, &fa));
	usleep(100000);
	EXPECT_EQ(0, poll_fd(fx, 0)) TH_LOG("blocker finished too early to tell");
	EXPECT_EQ(0, poll_fd(fa, 0)) TH_LOG("A ran before its in-fence signalled");
	ASSERT_EQ(0, rkt_ctx_query(fd, rkaccel_ctx_kernel_handle(self->ca), &q));
	EXPECT_EQ(0, q.jobs_completed);
	EXPECT_EQ(1, poll_fd(fa, 20000));
	EXPECT_EQ(1, poll_fd(fx, 0));
	EXPECT_EQ(1, fence_status(fa));
	EXPECT_EQ(0, check_native_output(self->ca, 1, 32, self->exp, self->tmp));
	close(fx);
	close(fa);
	rkaccel_ctx_destroy(blocker);
}

/* Point every DPU destination of @ctx's own register commands at an unmapped address. */
static int break_regcmd(struct rkaccel_ctx *ctx, int fd)
{
	struct drm_rkaccel_bo_info bi;
	uint64_t *e;
	size_t i, hits = 0;
	void *p;

	if (rkt_bo_info(fd, rkaccel_ctx_bo_handle(ctx, RKACCEL_BUF_REGCMD), &bi))
		return -1;
	p = mmap(NULL, bi.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)bi.mmap_offset);
	if (p == MAP_FAILED)
		return -1;
	for (e = p, i = 0; i < bi.size / 8; i++) {
		if ((le64toh(e[i]) & 0xffff) == RKNPU_DPU_DST_BASE_ADDR) {
			e[i] = htole64((le64toh(e[i]) & ~(0xffffffffull << 16)) |
				       (0xfff00000ull << 16));
			hits++;
		}
	}
	munmap(p, bi.size);
	return hits ? 0 : -1;
}

TEST_F(zc, async_fence_carries_error)
{
	int f, attempt, ret;

	/* Batch 2 without bound memory: one slice per context, own buffers. */
	ASSERT_EQ(0, rkaccel_ctx_create(self->dev, self->a, 0, &self->ca));
	ASSERT_EQ(0, rkaccel_ctx_set_batch(self->ca, 2));
	ASSERT_EQ(1, rkaccel_ctx_copies(self->ca));
	ASSERT_EQ(0, rkaccel_ctx_run_native(self->ca));
	ASSERT_EQ(0, break_regcmd(self->ca, rkaccel_fd(self->dev)));
	/*
	 * Slice 0 faults, slice 1 does not; slow tasks or none, either way.
	 * A fault seen already at the call is its error (no fence), a later
	 * one the fence's.
	 */
	for (attempt = 0; attempt < 2; attempt++) {
		ASSERT_EQ(0, rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, attempt ? 2000000 : 10000));
		f = -1;
		ret = rkaccel_ctx_run_async(self->ca, -1, &f);
		if (ret) {
			EXPECT_GT(0, ret);
			EXPECT_EQ(-1, f);
		} else {
			EXPECT_EQ(1, poll_fd(f, 20000));
			EXPECT_GT(0, fence_status(f)) TH_LOG("attempt %d: status %d", attempt,
							     fence_status(f));
			close(f);
		}
		EXPECT_EQ(0, rkaccel_ctx_wait(self->ca, 20000000000ll));
	}
	EXPECT_GT(0, rkaccel_ctx_run_native(self->ca));
}

/*
 * A PRIME self-import of a context's own BO gives back the context's GEM
 * handle: the library must share it, not close it under the context when
 * the mem (or a refused import) lets go, and close it once, with the
 * context. The handle numbers of a file are reused lowest first, so a
 * handle closed twice would be a later BO's.
 */
TEST_F(zc, self_import_shares_context_handle)
{
	int fd = rkaccel_fd(self->dev), dmabuf;
	uint32_t h_out, h_w, h_victim;
	struct drm_rkaccel_bo_info bi;
	struct rkaccel_mem *imp = NULL, *victim = NULL;
	size_t ni = (size_t)ROWS * 64, no = (size_t)ROWS * 32;

	ASSERT_EQ(0, rkaccel_ctx_create(self->dev, self->a, 0, &self->ca));
	h_out = rkaccel_ctx_bo_handle(self->ca, RKACCEL_BUF_OUTPUT);
	h_w = rkaccel_ctx_bo_handle(self->ca, RKACCEL_BUF_WEIGHTS);
	ASSERT_NE(0, h_out);
	ASSERT_NE(0, h_w);

	ASSERT_EQ(0, drmPrimeHandleToFD(fd, h_out, DRM_CLOEXEC | DRM_RDWR, &dmabuf));
	ASSERT_EQ(0, rkaccel_mem_from_fd(self->dev, dmabuf, 64, &imp));
	close(dmabuf);
	EXPECT_EQ(h_out, rkaccel_mem_handle(imp));
	rkaccel_mem_free(imp);
	EXPECT_EQ(0, rkt_bo_info(fd, h_out, &bi)) TH_LOG("freeing the import closed the "
							 "context's output handle");
	/* A sealed weight BO is refused: the refusal must not close it either. */
	ASSERT_EQ(0, drmPrimeHandleToFD(fd, h_w, DRM_CLOEXEC, &dmabuf));
	imp = NULL;
	EXPECT_EQ(-EINVAL, rkaccel_mem_from_fd(self->dev, dmabuf, 64, &imp));
	close(dmabuf);
	EXPECT_EQ(NULL, imp);
	EXPECT_EQ(0, rkt_bo_info(fd, h_w, &bi)) TH_LOG("a refused import closed the weights");

	/* A new BO must not take a number the context still holds. */
	ASSERT_EQ(0, rkaccel_mem_alloc(self->dev, 4096, &victim));
	h_victim = rkaccel_mem_handle(victim);
	EXPECT_NE(h_out, h_victim);
	EXPECT_NE(h_w, h_victim);

	/* The context still runs bit-exact on its own handles. */
	rkt_fill_i8(self->in, ni, 41);
	ASSERT_EQ(0, ref_batch(self->a, 1, self->in, self->exp));
	EXPECT_EQ(0, rkaccel_ctx_run(self->ca, self->in, ni, self->tmp, no));
	EXPECT_EQ(0, memcmp(self->tmp, self->exp, no));

	/* Destroying it closes its handles once: the victim's stays open. */
	rkaccel_ctx_destroy(self->ca);
	self->ca = NULL;
	EXPECT_EQ(0, rkt_bo_info(fd, h_victim, &bi)) TH_LOG("a handle was closed twice");
	EXPECT_NE(0, rkt_bo_info(fd, h_out, &bi));
	rkaccel_mem_free(victim);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/*
 * Slice 0 faults at once, the other slices take 300 ms a task: an async run
 * must return at once all the same, never wait in the library for the slow
 * slices. The fault is seen either at the call (its error, no fence) or on
 * the fence; both count, but the attempts go on (up to 50) until one sees
 * it at the call, the case where a merge would have dropped the error: the
 * fault races the call's last submits (1 attempt in 5 on arm64 RK3576
 * before faults reset their core first; now rarer).
 */
TEST_F_TIMEOUT(zc, async_never_waits_on_failed_slice, 120)
{
	uint32_t b = self->info.num_cores, attempt, at_call = 0;
	int f, ret;

	ASSERT_EQ(0, rkaccel_ctx_create(self->dev, self->a, 0, &self->ca));
	ASSERT_EQ(0, rkaccel_ctx_set_batch(self->ca, b));
	ASSERT_EQ(b - 1, rkaccel_ctx_copies(self->ca));
	ASSERT_EQ(0, rkaccel_ctx_run_native(self->ca));
	ASSERT_EQ(0, break_regcmd(self->ca, rkaccel_fd(self->dev)));
	ASSERT_EQ(0, rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, 300000000));
	for (attempt = 0; attempt < 50 && !at_call; attempt++) {
		double t0 = now_ms(), dt;

		f = -1;
		ret = rkaccel_ctx_run_async(self->ca, -1, &f);
		dt = now_ms() - t0;
		EXPECT_GT(400.0, dt) TH_LOG("attempt %u: run_async took %.0f ms, ret %d",
					    attempt, dt, ret);
		if (ret) {
			EXPECT_EQ(-1, f);
			EXPECT_GT(0, ret);
			at_call++;
		} else {
			EXPECT_EQ(1, poll_fd(f, 20000));
			EXPECT_GT(0, fence_status(f));
			close(f);
		}
		/* what was left running ends; the wait is bounded */
		EXPECT_EQ(0, rkaccel_ctx_wait(self->ca, 20000000000ll));
	}
	/*
	 * Since a fault resets its core before the fence signals (a worker
	 * hop), the call rarely sees it on amd64 RK3576: not a failure, but
	 * said, as the merge path then went untested in this run.
	 */
	if (at_call)
		printf("# the fault was seen at the call after %u attempts\n", attempt);
	else
		printf("# the fault was never seen at the call in %u attempts: merge path not reached\n",
		       attempt);
	EXPECT_EQ(0, rkaccel_ctx_wait(self->ca, 0));
}

TEST_F(zc, tensor_attrs)
{
	static const uint32_t batches[] = { 1, 3 };
	const struct rkaccel_model_desc *d = rkaccel_model_desc(self->a);
	struct rkaccel_tensor_attr in, out;
	struct rkaccel_model *m32 = NULL;
	uint32_t t;

	ASSERT_EQ(0, rkaccel_ctx_create(self->dev, self->a, 0, &self->ca));
	for (t = 0; t < 2; t++) {
		uint32_t b = batches[t];

		ASSERT_EQ(0, rkaccel_ctx_set_batch(self->ca, b));
		ASSERT_EQ(0, rkaccel_ctx_query_tensor(self->ca, RKACCEL_BUF_INPUT, &in));
		ASSERT_EQ(0, rkaccel_ctx_query_tensor(self->ca, RKACCEL_BUF_OUTPUT, &out));
		EXPECT_EQ(3, in.n_dims);
		EXPECT_EQ(b, in.dims[0]);
		EXPECT_EQ(ROWS, in.dims[1]);
		EXPECT_EQ(64, in.dims[2]);
		EXPECT_EQ(b, out.dims[0]);
		EXPECT_EQ(32, out.dims[2]);
		EXPECT_EQ(RKACCEL_TENSOR_INT8, in.type);
		EXPECT_EQ(RKACCEL_TENSOR_INT8, out.type);
		EXPECT_EQ(b * ROWS * 64, in.size);
		EXPECT_EQ(rkaccel_ctx_input_size(self->ca), in.size);
		EXPECT_EQ(b * ROWS * 32, out.size);
		EXPECT_EQ(rkaccel_ctx_output_size(self->ca), out.size);
		EXPECT_EQ(b * nat(64, 1), in.native_size);
		EXPECT_EQ(b * nat(32, 1), out.native_size);
		EXPECT_EQ(d->layers[0].in_scale, in.scale);
		EXPECT_EQ(d->layers[0].in_zero_point, in.zero_point);
		EXPECT_EQ(d->layers[1].out_scale, out.scale);
		EXPECT_EQ(d->layers[1].out_zero_point, out.zero_point);
	}
	/* An int32 output. */
	ASSERT_EQ(0, rkaccel_model_random(5, ROWS, 1, feat_b, RKACCEL_LAYER_OUT_INT32, &m32));
	ASSERT_EQ(0, rkaccel_ctx_create(self->dev, m32, 0, &self->cb));
	ASSERT_EQ(0, rkaccel_ctx_set_batch(self->cb, 3));
	ASSERT_EQ(0, rkaccel_ctx_query_tensor(self->cb, RKACCEL_BUF_OUTPUT, &out));
	EXPECT_EQ(RKACCEL_TENSOR_INT32, out.type);
	EXPECT_EQ(0, out.zero_point);
	EXPECT_EQ(3 * ROWS * 16 * 4, out.size);
	EXPECT_EQ(3 * nat(16, 4), out.native_size);
	EXPECT_EQ(rkaccel_model_desc(m32)->layers[0].out_scale, out.scale);
	rkaccel_model_free(m32);
}

TEST_F(zc, core_mask_honoured)
{
	struct drm_rkaccel_ctx_query q;
	int fd = rkaccel_fd(self->dev);
	uint32_t c, core, absent;
	size_t is = ROWS * 64, os = ROWS * 32;

	ASSERT_EQ(0, rkaccel_ctx_create(self->dev, self->a, 0, &self->ca));
	rkt_fill_i8(self->in, is, 3);
	ASSERT_EQ(0, ref_batch(self->a, 1, self->in, self->exp));
	for (c = 0; c < 32; c++) {
		if (!(self->info.core_mask & (1u << c)))
			continue;
		ASSERT_EQ(0, rkaccel_ctx_set_core_mask(self->ca, 1u << c));
		ASSERT_EQ(0, rkaccel_ctx_run(self->ca, self->in, is, self->tmp, os));
		EXPECT_EQ(0, memcmp(self->tmp, self->exp, os));
		ASSERT_EQ(0, rkt_ctx_query(fd, rkaccel_ctx_kernel_handle(self->ca), &q));
		EXPECT_EQ(1u << c, q.core_mask);
		EXPECT_EQ(c, q.last_core);
		ASSERT_EQ(0, rkaccel_ctx_slice_info(self->ca, 0, &core, NULL));
		EXPECT_EQ(c, core);
	}
	/* Two cores at once, then back through a batch: the mask is kept. */
	if (self->info.num_cores >= 2) {
		ASSERT_EQ(0, rkaccel_ctx_set_core_mask(self->ca, 2));
		ASSERT_EQ(0, rkaccel_ctx_set_batch(self->ca, 3));
		EXPECT_EQ(-EINVAL, rkaccel_ctx_set_core_mask(self->ca, 1));
		ASSERT_EQ(0, rkt_ctx_query(fd, rkaccel_ctx_kernel_handle(self->ca), &q));
		EXPECT_EQ(0, q.core_mask);
		ASSERT_EQ(0, rkaccel_ctx_set_batch(self->ca, 1));
		ASSERT_EQ(0, rkaccel_ctx_run(self->ca, self->in, is, self->tmp, os));
		ASSERT_EQ(0, rkt_ctx_query(fd, rkaccel_ctx_kernel_handle(self->ca), &q));
		EXPECT_EQ(2, q.core_mask);
		EXPECT_EQ(1, q.last_core);
	}
	absent = ~self->info.core_mask & -(~self->info.core_mask);	/* lowest absent bit */
	EXPECT_EQ(-EINVAL, rkaccel_ctx_set_core_mask(self->ca, absent));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_set_core_mask(NULL, 1));
	ASSERT_EQ(0, rkaccel_ctx_set_core_mask(self->ca, 0));
	ASSERT_EQ(0, rkaccel_ctx_run(self->ca, self->in, is, self->tmp, os));
	ASSERT_EQ(0, rkt_ctx_query(fd, rkaccel_ctx_kernel_handle(self->ca), &q));
	EXPECT_EQ(0, q.core_mask);
	EXPECT_LT(q.last_core, self->info.num_cores);
}

TEST_F(zc, bad_arguments)
{
	struct rkaccel_device *dev2;
	struct rkaccel_mem *mem = NULL, *small = NULL, *foreign = NULL;
	struct rkaccel_tensor_attr attr;
	size_t ni = nat(64, 1);
	int fd, devnull;

	EXPECT_EQ(-EINVAL, rkaccel_mem_alloc(NULL, 4096, &mem));
	EXPECT_EQ(-EINVAL, rkaccel_mem_alloc(self->dev, 0, &mem));
	EXPECT_EQ(-EINVAL, rkaccel_mem_alloc(self->dev, 4096, NULL));
	EXPECT_EQ(-EINVAL, rkaccel_mem_from_fd(self->dev, -1, 4096, &mem));
	EXPECT_EQ(-EINVAL, rkaccel_mem_from_fd(NULL, 0, 4096, &mem));
	devnull = open("/dev/null", O_RDWR);
	ASSERT_GE(devnull, 0);
	EXPECT_GT(0, rkaccel_mem_from_fd(self->dev, devnull, 4096, &mem));
	close(devnull);
	EXPECT_EQ(NULL, mem);
	EXPECT_EQ(-EINVAL, rkaccel_mem_export(NULL, &fd));
	rkaccel_mem_free(NULL);

	ASSERT_EQ(0, rkaccel_ctx_create(self->dev, self->a, 0, &self->ca));
	ASSERT_EQ(0, rkaccel_mem_alloc(self->dev, 3 * ni, &self->m[0]));
	ASSERT_EQ(0, rkaccel_mem_alloc(self->dev, ni - 1, &small));
	EXPECT_EQ(-EINVAL, rkaccel_mem_export(self->m[0], NULL));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_set_io_mem(NULL, RKACCEL_BUF_INPUT, self->m[0], 0));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_set_io_mem(self->ca, RKACCEL_BUF_WEIGHTS, self->m[0], 0));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_set_io_mem(self->ca, RKACCEL_BUF_COUNT, self->m[0], 0));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_set_io_mem(self->ca, RKACCEL_BUF_INPUT, self->m[0], 1));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_set_io_mem(self->ca, RKACCEL_BUF_INPUT, self->m[0],
						  3 * ni));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_set_io_mem(self->ca, RKACCEL_BUF_INPUT, self->m[0],
						  1u << 30));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_set_io_mem(self->ca, RKACCEL_BUF_INPUT, small, 0));
	ASSERT_EQ(0, rkaccel_open(NULL, &dev2));
	ASSERT_EQ(0, rkaccel_mem_alloc(dev2, 3 * ni, &foreign));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_set_io_mem(self->ca, RKACCEL_BUF_INPUT, foreign, 0));
	rkaccel_mem_free(foreign);
	rkaccel_close(dev2);

	/* Bound memory for 3 slices: batch 4 does not fit and changes nothing. */
	ASSERT_EQ(0, rkaccel_ctx_set_batch(self->ca, 3));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_set_io_mem(self->ca, RKACCEL_BUF_INPUT, self->m[0],
						  RKACCEL_MEM_ALIGN));
	ASSERT_EQ(0, rkaccel_ctx_set_io_mem(self->ca, RKACCEL_BUF_INPUT, self->m[0], 0));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_set_batch(self->ca, 4));
	EXPECT_EQ(3, rkaccel_ctx_batch(self->ca));
	EXPECT_EQ(NULL, rkaccel_ctx_io_ptr(self->ca, RKACCEL_BUF_INPUT, 3));
	EXPECT_EQ(NULL, rkaccel_ctx_io_ptr(self->ca, RKACCEL_BUF_WEIGHTS, 0));
	EXPECT_EQ(NULL, rkaccel_ctx_io_ptr(NULL, RKACCEL_BUF_INPUT, 0));
	/* Output unbound and batch 5 over at most 3 contexts: slices would share it. */
	ASSERT_EQ(0, rkaccel_ctx_set_io_mem(self->ca, RKACCEL_BUF_INPUT, NULL, 0));
	ASSERT_EQ(0, rkaccel_ctx_set_batch(self->ca, 5));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_run_native(self->ca));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_run_async(self->ca, -1, &fd));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_run_native(NULL));
	ASSERT_EQ(0, rkaccel_ctx_set_batch(self->ca, 1));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_run_async(self->ca, -1, NULL));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_run_async(NULL, -1, &fd));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_run_async(self->ca, -2, &fd));
	EXPECT_GT(0, rkaccel_ctx_run_async(self->ca, 0 /* stdin: not a sync_file */, &fd));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_query_tensor(self->ca, RKACCEL_BUF_INTERNAL, &attr));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_query_tensor(self->ca, RKACCEL_BUF_INPUT, NULL));
	EXPECT_EQ(-EINVAL, rkaccel_ctx_query_tensor(NULL, RKACCEL_BUF_INPUT, &attr));
	rkaccel_mem_free(small);
}

TEST_F(zc, async_and_close_leave_nothing)
{
	long bos0, ctx0, fds0;
	int i, f;

	if (rkt_debugfs_count("bos", &bos0) || rkt_debugfs_count("contexts", &ctx0))
		SKIP(return, "no debugfs counts");
	fds0 = rkt_count_fds();
	for (i = 0; i < 20; i++) {
		ASSERT_EQ(0, bind_pipeline(self, 3));
		ASSERT_EQ(0, fill_native_input(self->ca, 3, 64, self->in, i));
		ASSERT_EQ(0, rkaccel_ctx_run_async(self->ca, -1, &f));
		/* Close without waiting: the queued jobs hold what they use. */
		close(f);
		rkaccel_ctx_destroy(self->ca);
		rkaccel_ctx_destroy(self->cb);
		self->ca = self->cb = NULL;
		for (f = 0; f < 3; f++) {
			rkaccel_mem_free(self->m[f]);
			self->m[f] = NULL;
		}
	}
	EXPECT_EQ(fds0, rkt_count_fds());
	EXPECT_EQ(bos0, rkt_debugfs_settle("bos", bos0));
	EXPECT_EQ(ctx0, rkt_debugfs_settle("contexts", ctx0));
}

TEST_HARNESS_MAIN
