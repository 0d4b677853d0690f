// SPDX-License-Identifier: GPL-2.0-only
/*
 * Whole int8 networks end to end: a MobileNet-v1-like network and a
 * residual-block network, written by the text description, saved and
 * reloaded as model format 2.0, compiled once and run through the
 * library's multi-batch path (batch 3 on RK3588, 2 on RK3576: duplicated
 * contexts sharing one weight BO and one program); every slice bit-exact
 * against the CPU reference of selftests/net_ref.h. Also the modelled
 * time per inference of the MobileNet-like network at 1 GHz.
 */

#include "kselftest_harness.h"
#include "conv_run.h"
#include "net_ref.h"

#define SIM_COMPUTE_PATH	"/sys/module/rkaccel_sim/parameters/sim_compute"
#define SIM_CLOCK_PATH		"/sys/module/rkaccel_sim/parameters/sim_clock_mhz"
#define SIM_SCALE_PATH		"/sys/module/rkaccel_sim/parameters/sim_time_scale"

/* 32x32x3 -> stem 3x3 s2 -> three depthwise-separable blocks -> pool -> 10 classes. */
static const char mobilenet[] =
	"# MobileNet-v1-like, width reduced\n"
	"input 32x32x3\n"
	"conv 3x3 s2 c16\n"
	"dw 3x3 s1 pc\n"
	"pw c32\n"
	"dw 3x3 s2\n"
	"pw c48 pc\n"
	"dw 3x3 s1 pc\n"
	"pw c64\n"
	"avgpool global\n"
	"fc 10\n";

/*
 * Residual blocks between pools. The 128x96x32 input (384 KB) does not fit
 * the CBUF: the strided stem is tiled over rows, overlapping; the 7x7
 * convolution's 368 KB of weights are tiled over kernels. Small enough
 * that no task takes the simulator in a TCG guest near the hang timeout.
 */
static const char resnet[] =
	"input 128x96x32\n"
	"conv 3x3 s2 c4\n"
	"maxpool 2x2 s2\n"
	"conv 3x3 s1 c16\n"
	"conv 3x3 s1 c16 pc\n"
	"add 3\n"
	"maxpool 3x3 s2 pad 1\n"
	"conv 5x5 s1 c16 pad 2,1,2,3\n"
	"conv 3x3 s1 c16 linear\n"
	"add 5\n"
	"dw 5x5 s2 pad 1,2,2,1 pc\n"
	"avgpool 3x3 s1 pad 1\n"
	"maxpool 3x3 s3\n"
	"conv 7x7 s1 c480\n"
	"avgpool global\n"
	"fc 17 relu\n"
	"fc 5 int32\n";

/* Odd sizes: 13x11 input, 3, 17 and 33 channels, padding different on each side. */
static const char odd[] =
	"input 13x11x3\n"
	"conv 3x3 s2 c17 pad 1,0,2,1\n"
	"dw 5x5 s1 pc\n"
	"add 1\n"
	"maxpool 3x3 s2 pad 1\n"
	"conv 7x7 s1 c33\n"
	"avgpool 2x2 s1\n"
	"pw c3 linear\n"
	"fc 7 relu int32\n";

FIXTURE(net) {
	struct rkaccel_device *dev;
	struct rkaccel_info info;
	struct rkaccel_model *model;
	struct rkaccel_ctx *ctx;
	int8_t *in;
	uint8_t *out, *ref;
};

FIXTURE_VARIANT(net) {
	const char *name, *text;
	uint32_t seed;
};

FIXTURE_VARIANT_ADD(net, mobilenet) { .name = "mobilenet", .text = mobilenet, .seed = 15 };
FIXTURE_VARIANT_ADD(net, resnet) { .name = "resnet", .text = resnet, .seed = 16 };
FIXTURE_VARIANT_ADD(net, odd) { .name = "odd", .text = odd, .seed = 17 };

FIXTURE_SETUP(net)
{
	ASSERT_EQ(0, rkaccel_open(NULL, &self->dev));
	ASSERT_EQ(0, rkaccel_query(self->dev, &self->info));
}

FIXTURE_TEARDOWN(net)
{
	rkt_param_write_u64(SIM_COMPUTE_PATH, 1);
	rkt_param_write_u64(SIM_CLOCK_PATH, 1000);
	rkt_param_write_u64(SIM_SCALE_PATH, 1);
	rkaccel_ctx_destroy(self->ctx);
	rkaccel_model_free(self->model);
	free(self->in);
	free(self->out);
	free(self->ref);
	rkaccel_close(self->dev);
}

/* The description's network through a 2.0 file image and back. */
static int load_net(FIXTURE_DATA(net) *self, const FIXTURE_VARIANT(net) *v, char *msg,
		    size_t msg_len)
{
	struct rkaccel_model *m;
	size_t len;
	void *img;
	int ret;

	ret = rkaccel_model_from_text(v->seed, v->text, &m, msg, msg_len);
	if (ret)
		return ret;
	ret = rkaccel_model_serialize(rkaccel_model_desc(m), &img, &len);
	rkaccel_model_free(m);
	if (ret)
		return ret;
	if (((uint8_t *)img)[4] != 2)
		ret = -EPROTO;	/* a graph is written as version 2.0 */
	if (!ret)
		ret = rkaccel_model_parse(img, len, &self->model, msg, msg_len);
	free(img);
	return ret;
}

/* RK3588: 3 (one slice per core); RK3576: 2. */
static uint32_t test_batch(const struct rkaccel_info *info)
{
	return info->num_cores >= 3 ? 3 : 2;
}

TEST_F(net, batch_bit_exact)
{
	uint32_t batch = test_batch(&self->info), b;
	size_t in_one, out_one, i;
	char msg[256] = "";

	ASSERT_EQ(0, load_net(self, variant, msg, sizeof(msg))) TH_LOG("%s", msg);
	ASSERT_EQ(0, rkaccel_ctx_create(self->dev, self->model, 0, &self->ctx));
	ASSERT_EQ(0, rkaccel_ctx_set_batch(self->ctx, batch));
	EXPECT_EQ(batch - 1, rkaccel_ctx_copies(self->ctx));
	in_one = rkaccel_ctx_input_size(self->ctx) / batch;
	out_one = rkaccel_ctx_output_size(self->ctx) / batch;
	self->in = malloc(in_one * batch);
	self->out = malloc(out_one * batch);
	self->ref = malloc(out_one * batch);
	ASSERT_TRUE(self->in && self->out && self->ref);
	rkt_fill_i8(self->in, in_one * batch, variant->seed * 977ull);
	for (b = 0; b < batch; b++) {
		ASSERT_EQ(0, ref_net(rkaccel_model_desc(self->model), self->in + b * in_one,
				     self->ref + b * out_one));
	}
	ASSERT_EQ(0, rkaccel_ctx_run(self->ctx, self->in, in_one * batch, self->out,
				     out_one * batch));
	for (b = 0; b < batch; b++) {
		for (i = 0; i < out_one; i++)
			if (self->out[b * out_one + i] != self->ref[b * out_one + i])
				break;
		EXPECT_EQ(out_one, i) TH_LOG("slice %u differs from byte %zu on", b, i);
	}
}

/* The same network compiled once: as many tasks and MACs as its layers need. */
TEST_F(net, program_shape)
{
	struct rkaccel_program *prog;
	char msg[256] = "";

	ASSERT_EQ(0, load_net(self, variant, msg, sizeof(msg))) TH_LOG("%s", msg);
	ASSERT_EQ(0, rkaccel_program_compile(rkaccel_model_desc(self->model), &self->info,
					     &prog));
	EXPECT_LE(rkaccel_model_desc(self->model)->num_layers, rkaccel_program_tasks(prog));
	EXPECT_EQ(1, rkaccel_program_starts(prog));
	ksft_print_msg("%s: %u layers, %u tasks, %llu MACs, %zu weight bytes\n",
		       variant->name,
		       rkaccel_model_desc(self->model)->num_layers, rkaccel_program_tasks(prog),
		       (unsigned long long)rkaccel_program_macs(prog),
		       rkaccel_program_size(prog, RKACCEL_BUF_WEIGHTS));
	rkaccel_program_free(prog);
}

/*
 * Modelled time of one inference at 1 GHz: timing-only mode, the modelled
 * time stretched 1000 times so that the host's share is negligible, the
 * best of a few runs divided back. Printed with the MACs and the share of
 * 1024 MACs per cycle it reaches.
 */
TEST_F(net, modelled_time)
{
	uint64_t best = UINT64_MAX, macs, t0, ns;
	struct rkaccel_program *prog;
	char msg[256] = "";
	size_t in_len, out_len;
	int k;

	ASSERT_EQ(0, load_net(self, variant, msg, sizeof(msg))) TH_LOG("%s", msg);
	ASSERT_EQ(0, rkaccel_program_compile(rkaccel_model_desc(self->model), &self->info,
					     &prog));
	macs = rkaccel_program_macs(prog);
	rkaccel_program_free(prog);
	ASSERT_EQ(0, rkaccel_ctx_create(self->dev, self->model, 0, &self->ctx));
	in_len = rkaccel_ctx_input_size(self->ctx);
	out_len = rkaccel_ctx_output_size(self->ctx);
	self->in = calloc(1, in_len);
	self->out = malloc(out_len);
	ASSERT_TRUE(self->in && self->out);
	ASSERT_EQ(0, rkt_param_write_u64(SIM_COMPUTE_PATH, 0));
	ASSERT_EQ(0, rkt_param_write_u64(SIM_CLOCK_PATH, 1000));
	ASSERT_EQ(0, rkt_param_write_u64(SIM_SCALE_PATH, 1000));
	for (k = 0; k < 3; k++) {
		t0 = rkt_now_ns();
		ASSERT_EQ(0, rkaccel_ctx_run(self->ctx, self->in, in_len, self->out, out_len));
		ns = rkt_now_ns() - t0;
		best = ns < best ? ns : best;
	}
	ksft_print_msg("%s: modelled %.1f us per inference at 1 GHz, %llu MACs, %.1f%% of 1024 MAC/cycle\n",
		       variant->name, best / 1000.0 / 1000.0,
		       (unsigned long long)macs, 100.0 * (double)macs / (best / 1000.0) / 1024.0);
	EXPECT_LE(macs / 1024, best / 1000);
}

TEST_HARNESS_MAIN
