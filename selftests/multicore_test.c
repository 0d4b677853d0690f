// SPDX-License-Identifier: GPL-2.0-only
/*
 * One inference over several cores (issue 30 item 3): networks of the zoo
 * (tools/zoo.h, seeded random weights, inputs small enough that no task of
 * the single-core run outlasts the driver's 500 ms hang timeout in TCG)
 * run at batch 1 on core 0 alone and then with every core of the SoC
 * (mask 0x7 on RK3588, 0x3 on RK3576) and, on RK3588, cores 0 and 1: the
 * outputs must be the same bytes. The planned variant uses the default
 * boundary charge; the forced ones charge 1 us, so that nearly every layer
 * is split (stripe segments with overlapping rows, kernel and row splits,
 * branches side by side) and every core has device time. The fence path
 * (rkaccel_ctx_run_async(), its fence's status checked), a change of mask
 * on the same context and rkaccel_ctx_latency() run too.
 *
 * The hang timeout is raised to MC_TIMEOUT_MS for the test: three
 * simulated cores compute on the guest's two emulated CPUs, and under a
 * loaded host a core's worker or the whole guest can stall past 500 ms
 * (two cores "hung" within 14 ms of each other in make check): a stall of
 * the emulator, not a hang of the cores. fault_test and fence_test keep
 * the hang paths covered at the default.
 */

#include <linux/sync_file.h>
#include <poll.h>
#include <sys/ioctl.h>

#include "kselftest_harness.h"
#include "rkaccel_test.h"
#include "zoo.h"

#define MC_TIMEOUT_MS		5000
#define TIMEOUT_PARAM		"/sys/module/rkaccel/parameters/timeout_ms"

FIXTURE(mc) {
	uint64_t timeout_ms;	/* the module's, restored at the end; 0: untouched */
	struct rkaccel_device *dev;
	struct rkaccel_info info;
	struct rkaccel_model *model;
	struct rkaccel_ctx *one, *all;
	int8_t *in;
	uint8_t *out1, *outn;
	size_t in_size, out_size;
};

FIXTURE_VARIANT(mc) {
	const char *net;
	uint32_t h, w;
	bool forced;
	bool debug;	/* also under the debug kernel (KASAN: 10-20x slower datapath) */
};

FIXTURE_VARIANT_ADD(mc, mobilenetv2_forced) { "mobilenetv2", 64, 64, true, false };
FIXTURE_VARIANT_ADD(mc, mobilenetv2_planned) { "mobilenetv2", 96, 96, false, false };
FIXTURE_VARIANT_ADD(mc, resnet18_forced) { "resnet18", 32, 32, true, true };
FIXTURE_VARIANT_ADD(mc, resnet50_forced) { "resnet50", 32, 32, true, false };
FIXTURE_VARIANT_ADD(mc, squeezenet_forced) { "squeezenet", 64, 64, true, false };
FIXTURE_VARIANT_ADD(mc, inception_forced) { "inception", 14, 14, true, true };

FIXTURE_SETUP(mc)
{
	struct zb b;
	char msg[256] = "";
	int ret;

	if (rkt_debug_kernel() && !variant->debug)
		SKIP(return, "debug kernel: resnet18 and inception split there, the stock guests run all (make check's time)");
	if (rkaccel_open(NULL, &self->dev))
		SKIP(return, "no rkaccel device (host)");
	ASSERT_EQ(0, rkaccel_query(self->dev, &self->info));
	if (__builtin_popcount(self->info.core_mask) < 2)
		SKIP(return, "one core: nothing to split over");
	ASSERT_EQ(0, rkt_param_read_u64(TIMEOUT_PARAM, &self->timeout_ms));
	ASSERT_EQ(0, rkt_param_write_u64(TIMEOUT_PARAM, MC_TIMEOUT_MS));
	ret = zoo_build(variant->net, 1, variant->h, variant->w, 1, &b);
	if (!ret)
		ret = rkaccel_graph_to_model(&b.desc, &self->model, msg, sizeof(msg));
	zb_free(&b);
	ASSERT_EQ(0, ret) TH_LOG("%s: %s", variant->net, msg);
}

FIXTURE_TEARDOWN(mc)
{
	if (self->timeout_ms)
		rkt_param_write_u64(TIMEOUT_PARAM, self->timeout_ms);
	if (!self->dev)
		return;
	rkaccel_ctx_destroy(self->one);
	rkaccel_ctx_destroy(self->all);
	rkaccel_model_free(self->model);
	rkaccel_close(self->dev);
	free(self->in);
	free(self->out1);
	free(self->outn);
}

/* A context of @mask on the fixture's model, planned as the variant says. */
static int mc_ctx(struct __test_metadata *_metadata, FIXTURE_DATA(mc) *self,
		  const FIXTURE_VARIANT(mc) *variant, uint32_t mask, struct rkaccel_ctx **ctx)
{
	int ret;

	if (variant->forced)
		setenv("RKACCEL_SPLIT_BOUNDARY_NS", "1000", 1);
	ret = rkaccel_ctx_create(self->dev, self->model, mask, ctx);
	unsetenv("RKACCEL_SPLIT_BOUNDARY_NS");
	return ret;
}

/* The first differing byte of @a and @b, or @n. */
static size_t first_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
	size_t i = 0;

	while (i < n && a[i] == b[i])
		i++;
	return i;
}

/* Wait for the sync_file @fd: 0 when it signalled without an error, else the error. */
static int fence_wait(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct sync_file_info info = { 0 };

	if (poll(&p, 1, 600000) != 1)
		return -ETIME;
	if (ioctl(fd, SYNC_IOC_FILE_INFO, &info))
		return -errno;
	return info.status == 1 ? 0 : info.status < 0 ? info.status : -EBUSY;
}

TEST_F_TIMEOUT(mc, bit_exact_against_one_core, 1800)
{
	uint32_t masks[2] = { self->info.core_mask, 0x3 }, nmask = 1;
	struct rkaccel_run_info ri;
	void *nout1, *noutn;
	size_t native;
	uint64_t ns;
	int fence;

	if (__builtin_popcount(self->info.core_mask) > 2)
		nmask = 2;	/* RK3588: 0_1_2 and 0_1 */
	ASSERT_EQ(0, rkaccel_ctx_create(self->dev, self->model, 0x1, &self->one));
	self->in_size = rkaccel_ctx_input_size(self->one);
	self->out_size = rkaccel_ctx_output_size(self->one);
	self->in = malloc(self->in_size);
	self->out1 = malloc(self->out_size);
	self->outn = malloc(self->out_size);
	ASSERT_TRUE(self->in && self->out1 && self->outn);
	zoo_input(1, 0, self->in, self->in_size);
	ASSERT_EQ(0, rkaccel_ctx_run(self->one, self->in, self->in_size, self->out1,
				     self->out_size));
	ASSERT_EQ(0, rkaccel_ctx_run_info(self->one, &ri));
	EXPECT_EQ(1, ri.jobs);
	EXPECT_EQ(0, ri.waits);

	for (uint32_t m = 0; m < nmask; m++) {
		size_t at;

		rkaccel_ctx_destroy(self->all);
		self->all = NULL;
		ASSERT_EQ(0, mc_ctx(_metadata, self, variant, masks[m], &self->all));
		memset(self->outn, 0x5a, self->out_size);
		ASSERT_EQ(0, rkaccel_ctx_run(self->all, self->in, self->in_size, self->outn,
					     self->out_size));
		at = first_diff(self->out1, self->outn, self->out_size);
		EXPECT_EQ(self->out_size, at)
			TH_LOG("%s mask %#x: byte %zu differs (%u vs %u on one core)",
			       variant->net, masks[m], at, at < self->out_size ? self->outn[at] : 0,
			       at < self->out_size ? self->out1[at] : 0);
		ASSERT_EQ(0, rkaccel_ctx_run_info(self->all, &ri));
		TH_LOG("%s %ux%u mask %#x: %u jobs, %u waits, %u layers split", variant->net,
		       variant->h, variant->w, masks[m], ri.jobs, ri.waits, ri.split_layers);
		if (variant->forced) {
			uint32_t busy = 0;

			/* layers split, or branches side by side (inception) */
			EXPECT_LT(1, ri.jobs);
			for (uint32_t k = 0; k < ri.cores; k++)
				busy += ri.core_ns[k] > 0;
			EXPECT_EQ(__builtin_popcount(masks[m]), busy);
		}
	}

	/* the fence path: the native output again, after zeroing it */
	{
		struct rkaccel_tensor_attr a;

		ASSERT_EQ(0, rkaccel_ctx_query_tensor(self->one, RKACCEL_BUF_OUTPUT, &a));
		native = a.native_size;
	}
	nout1 = rkaccel_ctx_io_ptr(self->one, RKACCEL_BUF_OUTPUT, 0);
	noutn = rkaccel_ctx_io_ptr(self->all, RKACCEL_BUF_OUTPUT, 0);
	ASSERT_TRUE(nout1 && noutn);
	memset(noutn, 0, native);
	ASSERT_EQ(0, rkaccel_ctx_run_async(self->all, -1, &fence));
	ASSERT_EQ(0, fence_wait(fence));
	close(fence);
	ASSERT_EQ(0, rkaccel_ctx_wait(self->all, 0));
	{
		size_t at = first_diff(nout1, noutn, native), n = 0;

		for (size_t i = at; i < native; i++)
			n += ((uint8_t *)nout1)[i] != ((uint8_t *)noutn)[i];
		EXPECT_EQ(native, at)
			TH_LOG("fence path: native byte %zu of %zu differs (%u vs %u on one core), %zu bytes in all",
			       at, native, at < native ? ((uint8_t *)noutn)[at] : 0,
			       at < native ? ((uint8_t *)nout1)[at] : 0, n);
	}

	/* one core and back on the same context */
	ASSERT_EQ(0, rkaccel_ctx_set_core_mask(self->all, 0x2));
	memset(self->outn, 0x5a, self->out_size);
	ASSERT_EQ(0, rkaccel_ctx_run(self->all, self->in, self->in_size, self->outn,
				     self->out_size));
	EXPECT_EQ(0, memcmp(self->out1, self->outn, self->out_size));
	ASSERT_EQ(0, rkaccel_ctx_set_core_mask(self->all, self->info.core_mask));
	memset(self->outn, 0x5a, self->out_size);
	ASSERT_EQ(0, rkaccel_ctx_run(self->all, self->in, self->in_size, self->outn,
				     self->out_size));
	EXPECT_EQ(0, memcmp(self->out1, self->outn, self->out_size));

	/* RK3576: 0_1_2 names a core the SoC lacks (the SDK refuses it there too) */
	if (!(self->info.core_mask & 0x4)) {
		struct rkaccel_ctx *bad = NULL;

		EXPECT_EQ(-EINVAL, rkaccel_ctx_set_core_mask(self->all, 0x7));
		EXPECT_EQ(-EINVAL, rkaccel_ctx_create(self->dev, self->model, 0x7, &bad));
		rkaccel_ctx_destroy(bad);
	}

	/* the latency in device time: some, on every mask */
	ASSERT_EQ(0, rkaccel_ctx_latency(self->all, 50000, 1, &ns));
	EXPECT_LT(50000, ns);
	ASSERT_EQ(0, rkaccel_ctx_latency(self->one, 50000, 1, &ns));
	EXPECT_LT(50000, ns);
}

TEST_HARNESS_MAIN
