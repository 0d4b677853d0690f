// SPDX-License-Identifier: GPL-2.0-only
/*
 * The compiler and the simulated datapath as one contract: models compiled
 * by librkaccel, run on the simulated NPU, bit-exact against the CPU
 * reference; tiling over rows and kernels; ReLU and both output types;
 * MLPs; settings the simulator does not implement fail loudly; addresses
 * outside the address space or into read-only memory fault; timing model.
 */

#include <sys/klog.h>

#include "kselftest_harness.h"
#include "conv_run.h"
#include "rkaccel_npu_regs.h"

#define SIM_COMPUTE_PATH	"/sys/module/rkaccel_sim/parameters/sim_compute"
#define SIM_CLOCK_PATH		"/sys/module/rkaccel_sim/parameters/sim_clock_mhz"

/* What every test here holds: a device, a context, one bound model. */
struct conv_env {
	struct rkaccel_device *dev;
	int fd;
	struct rkaccel_info info;
	uint32_t ctx;
	struct conv_run run;
	struct rkaccel_model *model;
	int8_t *in;
	void *out, *ref;
};

static int env_setup(struct conv_env *self)
{
	int ret;

	memset(self, 0, sizeof(*self));
	ret = rkaccel_open(NULL, &self->dev);
	if (ret)
		return ret;
	self->fd = rkaccel_fd(self->dev);
	ret = rkaccel_query(self->dev, &self->info);
	if (ret)
		return ret;
	return rkt_ctx_create(self->fd, 0, DRM_RKACCEL_PRIORITY_NORMAL, &self->ctx);
}

static void env_teardown(struct conv_env *self)
{
	conv_run_free(self->fd, &self->run);
	rkaccel_model_free(self->model);
	free(self->in);
	free(self->out);
	free(self->ref);
	rkt_param_write_u64(SIM_COMPUTE_PATH, 1);
	rkt_param_write_u64(SIM_CLOCK_PATH, 1000);
	rkaccel_close(self->dev);
}

/* Shapes and flags, bit-exact: one variant per interesting layer. */
FIXTURE(conv) {
	struct conv_env e;
};

FIXTURE_SETUP(conv)
{
	ASSERT_EQ(0, env_setup(&self->e));
}

FIXTURE_TEARDOWN(conv)
{
	env_teardown(&self->e);
}

/* Failures and timing: no variants. */
FIXTURE(fail) {
	struct conv_env e;
};

FIXTURE_SETUP(fail)
{
	ASSERT_EQ(0, env_setup(&self->e));
}

FIXTURE_TEARDOWN(fail)
{
	env_teardown(&self->e);
}

/* Make a seeded model of @layers layers over @features, bind it, fill input. */
static int setup_model(struct conv_env *self, uint32_t seed, uint32_t rows,
		       uint32_t layers, const uint32_t *features, uint32_t flags_last)
{
	const struct rkaccel_model_desc *d;
	size_t out_len;
	int ret;

	ret = rkaccel_model_random(seed, rows, layers, features, flags_last, &self->model);
	if (ret)
		return ret;
	d = rkaccel_model_desc(self->model);
	ret = conv_run_prepare(self->fd, &self->info, d, &self->run);
	if (ret)
		return ret;
	out_len = (size_t)rows * features[layers] * 4;
	self->in = malloc((size_t)rows * features[0]);
	self->out = calloc(1, out_len);
	self->ref = calloc(1, out_len);
	if (!self->in || !self->out || !self->ref)
		return -ENOMEM;
	rkt_fill_i8(self->in, (size_t)rows * features[0], seed * 7919ull + 1);
	ret = conv_run_input(&self->run, self->in);
	if (ret)
		return ret;
	return ref_model(d, self->in, self->ref);
}

/* Index of the first element where device and reference differ, or -1. */
static long first_mismatch(struct conv_env *self)
{
	size_t i, n = (size_t)self->run.rows * self->run.out_features;

	for (i = 0; i < n; i++) {
		if (self->run.out_bytes == 1 ?
		    ((int8_t *)self->out)[i] != ((int8_t *)self->ref)[i] :
		    ((int32_t *)self->out)[i] != ((int32_t *)self->ref)[i])
			return (long)i;
	}
	return -1;
}

#define RUN_AND_COMPARE(self) do {						\
	long __bad;								\
	ASSERT_EQ(0, conv_run_exec((self)->fd, (self)->ctx, &(self)->run));	\
	ASSERT_EQ(0, conv_run_output(&(self)->run, (self)->out));		\
	__bad = first_mismatch(self);						\
	EXPECT_EQ(-1, __bad) TH_LOG("row %ld col %ld differs",		\
				   __bad / (long)(self)->run.out_features,	\
				   __bad % (long)(self)->run.out_features);	\
} while (0)

/* One fully connected layer per variant: shape, flags, expected tiling. */
FIXTURE_VARIANT(conv) {
	uint32_t rows, k, n, flags;
	uint32_t min_tasks;
};

FIXTURE_VARIANT_ADD(conv, tiny_1x1x1) { .rows = 1, .k = 1, .n = 1, .min_tasks = 1 };
FIXTURE_VARIANT_ADD(conv, odd_k_n) { .rows = 5, .k = 17, .n = 33, .min_tasks = 1 };
FIXTURE_VARIANT_ADD(conv, relu) {
	.rows = 9, .k = 100, .n = 65, .flags = RKACCEL_LAYER_RELU, .min_tasks = 1 };
FIXTURE_VARIANT_ADD(conv, int32_out) {
	.rows = 6, .k = 47, .n = 31, .flags = RKACCEL_LAYER_OUT_INT32, .min_tasks = 1 };
FIXTURE_VARIANT_ADD(conv, int32_relu) {
	.rows = 3, .k = 64, .n = 40,
	.flags = RKACCEL_LAYER_OUT_INT32 | RKACCEL_LAYER_RELU, .min_tasks = 1 };
/* More rows than DATAIN_HEIGHT holds: tiled over rows. */
FIXTURE_VARIANT_ADD(conv, rows_tiled) { .rows = 2100, .k = 20, .n = 10, .min_tasks = 2 };
/* Weights larger than the CBUF: tiled over kernels, and rows with them. */
FIXTURE_VARIANT_ADD(conv, kernels_tiled) { .rows = 40, .k = 3000, .n = 130, .min_tasks = 4 };

TEST_F(conv, layer_bit_exact)
{
	struct conv_env *env = &self->e;
	uint32_t features[2] = { variant->k, variant->n };

	ASSERT_EQ(0, setup_model(env, variant->rows * 131 + variant->k, variant->rows, 1,
				 features, variant->flags));
	EXPECT_LE(variant->min_tasks, rkaccel_program_tasks(env->run.prog));
	RUN_AND_COMPARE(env);
}

/* A second run over new input: nothing of the first run leaks into it. */
TEST_F(conv, rerun_new_input)
{
	struct conv_env *env = &self->e;
	uint32_t features[2] = { variant->k, variant->n };
	const struct rkaccel_model_desc *d;

	ASSERT_EQ(0, setup_model(env, 99, variant->rows, 1, features, variant->flags));
	RUN_AND_COMPARE(env);
	d = rkaccel_model_desc(env->model);
	rkt_fill_i8(env->in, (size_t)variant->rows * variant->k, 4242);
	ASSERT_EQ(0, conv_run_input(&env->run, env->in));
	ASSERT_EQ(0, ref_model(d, env->in, env->ref));
	RUN_AND_COMPARE(env);
}

TEST_F(conv, mlp_two_layers)
{
	struct conv_env *env = &self->e;
	uint32_t features[3] = { variant->k, 48, variant->n };

	if (variant->rows > 64)
		SKIP(return, "one large MLP is enough");
	ASSERT_EQ(0, setup_model(env, 7 + variant->k, variant->rows, 2, features,
				 variant->flags));
	RUN_AND_COMPARE(env);
}

TEST_F(conv, mlp_three_layers)
{
	struct conv_env *env = &self->e;
	uint32_t features[4] = { variant->k, 96, 33, variant->n };

	if (variant->rows > 64)
		SKIP(return, "one large MLP is enough");
	ASSERT_EQ(0, setup_model(env, 11 + variant->n, variant->rows, 3, features,
				 variant->flags));
	EXPECT_LE(3, rkaccel_program_tasks(env->run.prog));
	RUN_AND_COMPARE(env);
}

/* --- failures: loud, contained, and the device stays healthy ------------------ */

/* Entry index in the regcmd BO of the first write to @reg, or -1. */
static long find_reg(const struct conv_run *r, uint16_t reg)
{
	const uint64_t *e = r->bo[RKACCEL_BUF_REGCMD].map;
	size_t i, n = rkaccel_program_size(r->prog, RKACCEL_BUF_REGCMD) / 8;

	for (i = 0; i < n; i++)
		if ((le64toh(e[i]) & 0xffff) == reg && le64toh(e[i]) >> 48)
			return (long)i;
	return -1;
}

static void set_reg(struct conv_run *r, long idx, uint32_t val)
{
	uint64_t *e = r->bo[RKACCEL_BUF_REGCMD].map;
	uint64_t v = le64toh(e[idx]);

	e[idx] = htole64((v & ~(0xffffffffull << 16)) | ((uint64_t)val << 16));
}

/* True when the kernel log holds @text (the simulator names what it refused). */
static bool klog_has(const char *text)
{
	static char buf[1 << 17];
	int n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, sizeof(buf) - 1);

	if (n < 0)
		return false;
	buf[n] = '\0';
	return strstr(buf, text) != NULL;
}

static void break_reg_and_check(struct __test_metadata *_metadata, struct conv_env *self,
				uint16_t reg, uint32_t val, int expect, const char *log)
{
	uint32_t features[2] = { 40, 24 };
	long idx;

	ASSERT_EQ(0, setup_model(self, 5, 8, 1, features, 0));
	idx = find_reg(&self->run, reg);
	ASSERT_LE(0, idx);
	set_reg(&self->run, idx, val);
	EXPECT_EQ(expect, conv_run_exec(self->fd, self->ctx, &self->run));
	if (log)
		EXPECT_TRUE(klog_has(log)) TH_LOG("kernel log does not name %s", log);

	/* the same context and core still compute correctly afterwards */
	conv_run_free(self->fd, &self->run);
	ASSERT_EQ(0, conv_run_prepare(self->fd, &self->info, rkaccel_model_desc(self->model),
				      &self->run));
	ASSERT_EQ(0, conv_run_input(&self->run, self->in));
	RUN_AND_COMPARE(self);
}

TEST_F(fail, unsupported_conv_mode)
{
	struct conv_env *env = &self->e;
	break_reg_and_check(_metadata, env, RKNPU_CNA_CONV_CON1, 3, -EOPNOTSUPP,
			    "CNA_CONV_CON1 = 0x00000003");
}

TEST_F(fail, unsupported_kernel_3x3)
{
	struct conv_env *env = &self->e;
	break_reg_and_check(_metadata, env, RKNPU_CNA_WEIGHT_SIZE2,
			    (3u << 24) | (3u << 16) | 24, -EOPNOTSUPP,
			    "CNA_WEIGHT_SIZE2");
}

TEST_F(fail, unsupported_fp16_output)
{
	struct conv_env *env = &self->e;
	break_reg_and_check(_metadata, env, RKNPU_DPU_DATA_FORMAT, 2u << 29, -EOPNOTSUPP,
			    "DPU_DATA_FORMAT");
}

/* The compiler's CBUF split is checked: a task claiming too few banks fails. */
TEST_F(fail, cbuf_overflow_refused)
{
	struct conv_env *env = &self->e;
	break_reg_and_check(_metadata, env, RKNPU_CNA_CBUF_CON0, (12u << 4) | 1, -EOPNOTSUPP,
			    "CNA_CBUF_CON0");
}

TEST_F(fail, unmapped_input_faults)
{
	struct conv_env *env = &self->e;
	break_reg_and_check(_metadata, env, RKNPU_CNA_FEATURE_DATA_ADDR, 0xfff00000, -EIO, NULL);
}

TEST_F(fail, unmapped_weights_fault)
{
	struct conv_env *env = &self->e;
	break_reg_and_check(_metadata, env, RKNPU_CNA_DCOMP_ADDR0, 0x100, -EIO, NULL);
}

/* The output pointed at the sealed weight BO: the device may not write it. */
TEST_F(fail, write_to_weights_faults)
{
	struct conv_env *env = &self->e;
	uint32_t features[2] = { 40, 24 };
	uint8_t before[64];
	long idx;

	ASSERT_EQ(0, setup_model(env, 5, 8, 1, features, 0));
	memcpy(before, env->run.bo[RKACCEL_BUF_WEIGHTS].map, sizeof(before));
	idx = find_reg(&env->run, RKNPU_DPU_DST_BASE_ADDR);
	ASSERT_LE(0, idx);
	set_reg(&env->run, idx, (uint32_t)env->run.bo[RKACCEL_BUF_WEIGHTS].npu_addr);
	EXPECT_EQ(-EIO, conv_run_exec(env->fd, env->ctx, &env->run));
	EXPECT_EQ(0, memcmp(before, env->run.bo[RKACCEL_BUF_WEIGHTS].map, sizeof(before)));
}

/* Another file's BO is not in this file's address space. */
TEST_F(fail, other_files_memory_faults)
{
	struct conv_env *env = &self->e;
	uint32_t features[2] = { 40, 24 };
	struct rkt_bo foreign;
	int fd2;
	long idx;

	fd2 = rkt_open_fd();
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, rkt_bo_new(fd2, 1 << 20, 0, &foreign));
	ASSERT_EQ(0, setup_model(env, 5, 8, 1, features, 0));
	idx = find_reg(&env->run, RKNPU_DPU_DST_BASE_ADDR);
	ASSERT_LE(0, idx);
	/* an address only the other file maps, far from this file's BOs */
	set_reg(&env->run, idx, (uint32_t)foreign.npu_addr + (1u << 19));
	memset(foreign.map, 0x5a, foreign.map_len);
	EXPECT_NE(0, conv_run_exec(env->fd, env->ctx, &env->run));
	EXPECT_EQ(0x5a, ((uint8_t *)foreign.map)[1u << 19]);
	rkt_bo_free(fd2, &foreign);
	close(fd2);
}

/* --- timing model ------------------------------------------------------------- */

/* sim_compute=0 models the time but writes nothing. */
TEST_F(fail, timing_only_mode_writes_nothing)
{
	struct conv_env *env = &self->e;
	uint32_t features[2] = { 64, 32 };
	struct rkt_bo *out;

	ASSERT_EQ(0, setup_model(env, 3, 16, 1, features, 0));
	out = &env->run.bo[RKACCEL_BUF_OUTPUT];
	memset(out->map, 0x77, out->map_len);
	ASSERT_EQ(0, rkt_param_write_u64(SIM_COMPUTE_PATH, 0));
	EXPECT_EQ(0, conv_run_exec(env->fd, env->ctx, &env->run));
	EXPECT_EQ(0x77, ((uint8_t *)out->map)[0]);
	ASSERT_EQ(0, rkt_param_write_u64(SIM_COMPUTE_PATH, 1));
	RUN_AND_COMPARE(env);
}

/* The MAC term of the timing model: 1024 MACs per cycle at sim_clock_mhz. */
TEST_F(fail, mac_time_follows_clock)
{
	struct conv_env *env = &self->e;
	uint32_t features[2] = { 256, 256 };
	uint64_t t0, ns, macs;

	ASSERT_EQ(0, setup_model(env, 3, 64, 1, features, 0));
	macs = rkaccel_program_macs(env->run.prog);
	ASSERT_EQ(64ull * 256 * 256, macs);
	ASSERT_EQ(0, rkt_param_write_u64(SIM_COMPUTE_PATH, 0));
	ASSERT_EQ(0, rkt_param_write_u64(SIM_CLOCK_PATH, 1));
	t0 = rkt_now_ns();
	ASSERT_EQ(0, conv_run_exec(env->fd, env->ctx, &env->run));
	ns = rkt_now_ns() - t0;
	/* 4M MACs / 1024 per cycle at 1 MHz: 4 ms at least */
	EXPECT_LE(macs * 1000 / 1024, ns) TH_LOG("job took %llu ns", (unsigned long long)ns);
}

/* One job holds at most max_tasks hardware tasks: a bigger program is refused. */
TEST_F(fail, too_many_tasks_refused)
{
	uint32_t features[2] = { 3000, 130 };	/* 2 kernel tiles x 2 row tiles */
	struct rkaccel_info info = self->e.info;
	struct rkaccel_program *prog;

	ASSERT_EQ(0, rkaccel_model_random(9, 40, 1, features, 0, &self->e.model));
	info.max_tasks = 3;
	EXPECT_EQ(-E2BIG, rkaccel_program_compile(rkaccel_model_desc(self->e.model), &info,
						  &prog));
	info.max_tasks = 4;
	ASSERT_EQ(0, rkaccel_program_compile(rkaccel_model_desc(self->e.model), &info, &prog));
	EXPECT_EQ(4, rkaccel_program_tasks(prog));
	EXPECT_EQ(1, rkaccel_program_starts(prog));
	rkaccel_program_free(prog);
}

TEST_HARNESS_MAIN
