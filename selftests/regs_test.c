// SPDX-License-Identifier: GPL-2.0-only
/*
 * The register table of Documentation/datapath.rst ("Silicon choices"),
 * enforced: the compiler emits the documented value of each listed
 * register, and a stream with a deliberately wrong value in one of them is
 * refused by the simulator (the kernel log naming the register) or computes
 * a result other than the CPU reference's.
 */


#include "kselftest_harness.h"
#include "conv_run.h"
#include "rkaccel_npu_regs.h"

/* A two-layer MLP: two chained tasks, 64 x 64 int8 outputs of the first. */
#define REGS_ROWS	64
#define REGS_SEED	1616

static const uint32_t regs_features[] = { 256, 64, 48 };

struct regs_env {
	struct rkaccel_device *dev;
	int fd;
	struct rkaccel_info info;
	uint32_t ctx;
	struct rkaccel_model *model;
	struct conv_run run;
	int8_t *in, *out, *ref;
};

static int regs_env_open(struct regs_env *e)
{
	const struct rkaccel_model_desc *d;
	size_t out_len = (size_t)REGS_ROWS * regs_features[2];
	int ret;

	memset(e, 0, sizeof(*e));
	ret = rkaccel_open(NULL, &e->dev);
	if (!ret) {
		e->fd = rkaccel_fd(e->dev);
		ret = rkaccel_query(e->dev, &e->info);
	}
	if (!ret)
		ret = rkt_ctx_create(e->fd, 0, DRM_RKACCEL_PRIORITY_NORMAL, &e->ctx);
	if (!ret)
		ret = rkaccel_model_random(REGS_SEED, REGS_ROWS, 2, regs_features, 0, &e->model);
	if (ret)
		return ret;
	d = rkaccel_model_desc(e->model);
	e->in = malloc((size_t)REGS_ROWS * regs_features[0]);
	e->out = calloc(1, out_len);
	e->ref = calloc(1, out_len);
	if (!e->in || !e->out || !e->ref)
		return -ENOMEM;
	rkt_fill_i8(e->in, (size_t)REGS_ROWS * regs_features[0], REGS_SEED);
	ret = ref_model(d, e->in, e->ref);
	if (!ret)
		ret = conv_run_prepare(e->fd, &e->info, d, &e->run);
	if (!ret)
		ret = conv_run_input(&e->run, e->in);
	return ret;
}

static void regs_env_close(struct regs_env *e)
{
	conv_run_free(e->fd, &e->run);
	rkaccel_model_free(e->model);
	free(e->in);
	free(e->out);
	free(e->ref);
	rkaccel_close(e->dev);
}

static uint32_t regs_get(struct regs_env *e, long idx)
{
	size_t n;

	return (uint32_t)(le64toh(conv_run_cmds(&e->run, &n)[idx]) >> 16);
}

/* Run and compare with the reference: 1 when they differ, 0 when equal, or -errno. */
static int regs_run_differs(struct regs_env *e)
{
	size_t n = (size_t)REGS_ROWS * regs_features[2];
	int ret = conv_run_exec(e->fd, e->ctx, &e->run);

	if (!ret)
		ret = conv_run_output(&e->run, e->out);
	return ret ? ret : memcmp(e->out, e->ref, n) != 0;
}

/* How a wrong value is made from the emitted one. */
enum regs_how { REGS_SET, REGS_ADD, REGS_FIELD_ADD };
/* What must happen then: refused, hung (no enable entry fetched), other output. */
enum regs_expect { REGS_REFUSED, REGS_HANGS, REGS_DIFFERS };

FIXTURE(regs) {
	struct regs_env e;
};

FIXTURE_VARIANT(regs) {
	uint16_t reg;
	enum regs_how how;
	int32_t value;		/* SET: the value; ADD: added; FIELD_ADD: added in @field */
	uint32_t field;
	enum regs_expect expect;
	const char *log;	/* what the kernel log names when refused */
};

FIXTURE_SETUP(regs)
{
	ASSERT_EQ(0, regs_env_open(&self->e));
}

FIXTURE_TEARDOWN(regs)
{
	regs_env_close(&self->e);
}

/* One variant per register of the table (and per zeroed block). */
FIXTURE_VARIANT_ADD(regs, out_cvt_scale_round) {
	/* floor + 1 minus one: the floor, which the round gave for half the scales */
	.reg = RKNPU_DPU_OUT_CVT_SCALE, .how = REGS_ADD, .value = -1, .expect = REGS_DIFFERS };
FIXTURE_VARIANT_ADD(regs, out_cvt_shift) {
	.reg = RKNPU_DPU_OUT_CVT_SHIFT, .how = REGS_ADD, .value = 1, .expect = REGS_DIFFERS };
FIXTURE_VARIANT_ADD(regs, clip_truncate) {
	.reg = RKNPU_CORE_CLIP_TRUNCATE, .how = REGS_SET, .value = 1, .expect = REGS_DIFFERS };
FIXTURE_VARIANT_ADD(regs, feature_grains) {
	.reg = RKNPU_CNA_CONV_CON2, .how = REGS_SET, .value = 1 << 4, .expect = REGS_REFUSED,
	.log = "CNA_CONV_CON2" };
FIXTURE_VARIANT_ADD(regs, cbuf_no_spare_bank) {
	.reg = RKNPU_CNA_CBUF_CON0, .how = REGS_FIELD_ADD, .value = -1,
	.field = RKNPU_CBUF_CON0_WEIGHT_BANK, .expect = REGS_REFUSED, .log = "CNA_CBUF_CON0" };
FIXTURE_VARIANT_ADD(regs, core_3030) {
	.reg = RKNPU_CORE_3030, .how = REGS_SET, .value = 1, .expect = REGS_REFUSED,
	.log = "CORE_3030" };
FIXTURE_VARIANT_ADD(regs, dpu_40c4) {
	.reg = RKNPU_DPU_40C4, .how = REGS_SET, .value = 1, .expect = REGS_REFUSED,
	.log = "DPU_40C4" };
FIXTURE_VARIANT_ADD(regs, ew_cvt_offset) {
	.reg = RKNPU_DPU_EW_CVT_OFFSET, .how = REGS_SET, .value = 3, .expect = REGS_REFUSED,
	.log = "DPU_EW_CVT_OFFSET" };
FIXTURE_VARIANT_ADD(regs, ew_cvt_scale) {
	.reg = RKNPU_DPU_EW_CVT_SCALE, .how = REGS_SET, .value = 0, .expect = REGS_REFUSED,
	.log = "DPU_EW_CVT_SCALE" };
FIXTURE_VARIANT_ADD(regs, ew_relux_cmp) {
	.reg = RKNPU_DPU_EW_RELUX_CMP, .how = REGS_SET, .value = 1, .expect = REGS_REFUSED,
	.log = "DPU_EW_RELUX_CMP" };
FIXTURE_VARIANT_ADD(regs, ew_op_value_5) {
	.reg = RKNPU_DPU_EW_OP_VALUE_0 + 20, .how = REGS_SET, .value = 7, .expect = REGS_REFUSED,
	.log = "DPU_EW_OP_VALUE" };
FIXTURE_VARIANT_ADD(regs, lut_cfg) {
	.reg = RKNPU_DPU_LUT_FIRST + 8, .how = REGS_SET, .value = 1, .expect = REGS_REFUSED,
	.log = "DPU_LUT" };
FIXTURE_VARIANT_ADD(regs, lut_lo_slope_shift) {
	.reg = RKNPU_DPU_LUT_LAST, .how = REGS_SET, .value = 1, .expect = REGS_REFUSED,
	.log = "DPU_LUT" };
FIXTURE_VARIANT_ADD(regs, rdma_src_base_addr) {
	.reg = RKNPU_RDMA_SRC_BASE_ADDR, .how = REGS_SET, .value = 0x1000,
	.expect = REGS_REFUSED, .log = "RDMA_SRC_BASE_ADDR" };
FIXTURE_VARIANT_ADD(regs, rdma_nrdma_cfg) {
	.reg = RKNPU_RDMA_NRDMA_CFG, .how = REGS_SET, .value = 2, .expect = REGS_REFUSED,
	.log = "RDMA_NRDMA_CFG" };
FIXTURE_VARIANT_ADD(regs, rdma_bn_base_addr) {
	.reg = RKNPU_RDMA_BN_BASE_ADDR, .how = REGS_SET, .value = 0x1000,
	.expect = REGS_REFUSED, .log = "BN_BASE_ADDR" };
FIXTURE_VARIANT_ADD(regs, rdma_src_dma_cfg) {
	.reg = RKNPU_RDMA_SRC_DMA_CFG, .how = REGS_SET, .value = 9, .expect = REGS_REFUSED,
	.log = "RDMA_SRC_DMA_CFG" };
FIXTURE_VARIANT_ADD(regs, rdma_surf_notch) {
	.reg = RKNPU_RDMA_SURF_NOTCH, .how = REGS_SET, .value = 0x10, .expect = REGS_REFUSED,
	.log = "SURF_NOTCH" };
FIXTURE_VARIANT_ADD(regs, rdma_pad_cfg) {
	.reg = RKNPU_RDMA_PAD_CFG, .how = REGS_SET, .value = 0x11, .expect = REGS_REFUSED,
	.log = "RDMA_PAD_CFG" };
FIXTURE_VARIANT_ADD(regs, rdma_ew_surf_notch) {
	.reg = RKNPU_RDMA_EW_SURF_NOTCH, .how = REGS_SET, .value = 0x10,
	.expect = REGS_REFUSED, .log = "RDMA_EW_SURF_NOTCH" };
/*
 * The first task's tail: the chained amounts of the second, two pairs
 * short, so its enable entry is never fetched and the core hangs.
 */
FIXTURE_VARIANT_ADD(regs, chained_amounts) {
	.reg = RKNPU_PC_REGISTER_AMOUNTS, .how = REGS_ADD, .value = -2,
	.expect = REGS_HANGS, .log = "PC_REGISTER_AMOUNTS" };

static uint32_t regs_wrong(const FIXTURE_VARIANT(regs) *v, uint32_t val)
{
	uint32_t lsb;

	switch (v->how) {
	case REGS_ADD:
		return val + (uint32_t)v->value;
	case REGS_FIELD_ADD:
		lsb = v->field & -v->field;
		return (val & ~v->field) | (((val & v->field) + (uint32_t)v->value * lsb) & v->field);
	default:
		return (uint32_t)v->value;
	}
}

TEST_F(regs, wrong_value_caught)
{
	struct regs_env *e = &self->e;
	long idx = conv_run_find_reg(&e->run, variant->reg);
	uint32_t good, bad;
	int ret;

	ASSERT_LE(0, idx) TH_LOG("the compiler writes no 0x%04x", variant->reg);
	good = regs_get(e, idx);
	bad = regs_wrong(variant, good);
	ASSERT_NE(good, bad);
	conv_run_set_reg(&e->run, idx, bad);
	/* the simulator's messages are rate limited (10 in 5 s): leave room */
	if (variant->expect == REGS_REFUSED)
		usleep(600 * 1000);
	ret = regs_run_differs(e);
	if (variant->expect == REGS_DIFFERS) {
		EXPECT_EQ(1, ret) TH_LOG("0x%04x = 0x%x instead of 0x%x went unnoticed",
					 variant->reg, bad, good);
		return;
	}
	if (variant->expect == REGS_HANGS) {
		EXPECT_GT(0, ret) TH_LOG("a chain that cannot start its task completed: %d", ret);
	} else {
		EXPECT_EQ(-EOPNOTSUPP, ret);
	}
	EXPECT_TRUE(rkt_klog_has(variant->log)) TH_LOG("kernel log does not name %s",
							variant->log);
}

/* --- the documented values, computed here from the model ------------------------ */

FIXTURE(emit) {
	struct regs_env e;
};

FIXTURE_SETUP(emit)
{
	ASSERT_EQ(0, regs_env_open(&self->e));
}

FIXTURE_TEARDOWN(emit)
{
	regs_env_close(&self->e);
}

/* The unmodified stream is bit-exact: the variants' differences are theirs. */
TEST_F(emit, stream_exact)
{
	EXPECT_EQ(0, regs_run_differs(&self->e));
}

/* floor(m * 2^14) + 1 and 14 - e, for multiplier = m * 2^e, m in [1, 2). */
TEST_F(emit, out_cvt_is_floor_plus_one)
{
	const struct rkaccel_layer_desc *l = &rkaccel_model_desc(self->e.model)->layers[0];
	float mult = l->in_scale * l->weight_scale / l->out_scale;
	int e2;
	double m = frexp((double)mult, &e2) * 2.0;

	EXPECT_EQ((uint32_t)floor(m * 16384.0) + 1,
		  regs_get(&self->e, conv_run_find_reg(&self->e.run, RKNPU_DPU_OUT_CVT_SCALE)));
	EXPECT_EQ((uint32_t)(14 - (e2 - 1)),
		  regs_get(&self->e, conv_run_find_reg(&self->e.run, RKNPU_DPU_OUT_CVT_SHIFT)));
}

TEST_F(emit, feature_grains_and_spare_bank)
{
	uint32_t con2 = regs_get(&self->e, conv_run_find_reg(&self->e.run, RKNPU_CNA_CONV_CON2));
	uint32_t con0 = regs_get(&self->e, conv_run_find_reg(&self->e.run, RKNPU_CNA_CBUF_CON0));
	uint32_t wt = regs_features[1] * regs_features[0];	/* kernels x channels */

	EXPECT_EQ(50 + 1 + 1, (con2 >> 4) & 0x3ff);		/* stride 1 */
	EXPECT_EQ((wt + 32767) / 32768 + 1, (con0 >> 4) & 0xf);
}

/* ALIGN((N - 4) / 2, 2) for a next task of N entries, its tail included. */
TEST_F(emit, chained_amounts_as_mesa)
{
	struct regs_env *e = &self->e;
	long amounts = conv_run_find_reg(&e->run, RKNPU_PC_REGISTER_AMOUNTS);
	uint64_t next, base = e->run.bo[RKACCEL_BUF_REGCMD].npu_addr;
	size_t n, i;
	const uint64_t *c = conv_run_cmds(&e->run, &n);

	ASSERT_LE(1, amounts);
	next = regs_get(e, amounts - 1);	/* PC_BASE_ADDRESS, just before */
	ASSERT_LT(base, next);
	for (i = (next - base) / 8; i < n; i++)
		if (le64toh(c[i]) >> 48 == RKNPU_TGT_OP_EN)
			break;
	ASSERT_LT(i, n);
	n = i + 1 - (next - base) / 8;		/* N, through the enable entry */
	EXPECT_EQ((n - 4) / 2 + ((n - 4) / 2) % 2, regs_get(e, amounts));
}

/* --- CLIP_TRUNCATE against its documented arithmetic ---------------------------- */

#define TRUNC_ROWS	24
#define TRUNC_K		200
#define TRUNC_N		40

/*
 * datapath.rst: the raw sum of products loses t bits (rounding half up,
 * int32 saturation) before the folded bias; then OUT_CVT as documented.
 */
static void trunc_ref(const struct rkaccel_layer_desc *l, const int8_t *in, int t,
		      int8_t *out)
{
	int64_t scale;
	int shift;
	uint32_t r, n, k;

	ref_requant(l->in_scale * l->weight_scale / l->out_scale, &scale, &shift);
	for (r = 0; r < TRUNC_ROWS; r++) {
		for (n = 0; n < TRUNC_N; n++) {
			const int8_t *w = l->weights + (size_t)n * TRUNC_K;
			int64_t raw = 0, wsum = 0, acc;

			for (k = 0; k < TRUNC_K; k++) {
				raw += (int64_t)in[(size_t)r * TRUNC_K + k] * w[k];
				wsum += w[k];
			}
			acc = ref_round_shift(raw, t);
			acc = acc < INT32_MIN ? INT32_MIN : acc > INT32_MAX ? INT32_MAX : acc;
			acc += (int64_t)l->bias[n] - (int64_t)l->in_zero_point * wsum;
			acc = ref_round_shift(acc * scale, shift) + l->out_zero_point;
			out[(size_t)r * TRUNC_N + n] = (int8_t)(acc < -128 ? -128 :
								 acc > 127 ? 127 : acc);
		}
	}
}

FIXTURE(trunc) {
	struct regs_env e;
};

FIXTURE_VARIANT(trunc) {
	int bits;
};

FIXTURE_VARIANT_ADD(trunc, one_bit) { .bits = 1 };
FIXTURE_VARIANT_ADD(trunc, five_bits) { .bits = 5 };

FIXTURE_SETUP(trunc)
{
	struct regs_env *e = &self->e;
	const uint32_t features[] = { TRUNC_K, TRUNC_N };

	memset(e, 0, sizeof(*e));
	ASSERT_EQ(0, rkaccel_open(NULL, &e->dev));
	e->fd = rkaccel_fd(e->dev);
	ASSERT_EQ(0, rkaccel_query(e->dev, &e->info));
	ASSERT_EQ(0, rkt_ctx_create(e->fd, 0, DRM_RKACCEL_PRIORITY_NORMAL, &e->ctx));
	ASSERT_EQ(0, rkaccel_model_random(REGS_SEED + 1, TRUNC_ROWS, 1, features, 0, &e->model));
	e->in = malloc((size_t)TRUNC_ROWS * TRUNC_K);
	e->out = calloc(1, (size_t)TRUNC_ROWS * TRUNC_N);
	e->ref = calloc(1, (size_t)TRUNC_ROWS * TRUNC_N);
	ASSERT_TRUE(e->in && e->out && e->ref);
	rkt_fill_i8(e->in, (size_t)TRUNC_ROWS * TRUNC_K, REGS_SEED + 1);
	ASSERT_EQ(0, conv_run_prepare(e->fd, &e->info, rkaccel_model_desc(e->model), &e->run));
	ASSERT_EQ(0, conv_run_input(&e->run, e->in));
}

FIXTURE_TEARDOWN(trunc)
{
	regs_env_close(&self->e);
}

/* The simulator computes a truncating task bit-exact with the reference. */
TEST_F(trunc, bit_exact)
{
	struct regs_env *e = &self->e;
	long idx = conv_run_find_reg(&e->run, RKNPU_CORE_CLIP_TRUNCATE);
	size_t i, n = (size_t)TRUNC_ROWS * TRUNC_N;

	ASSERT_EQ(1, rkaccel_program_tasks(e->run.prog));
	ASSERT_LE(0, idx);
	conv_run_set_reg(&e->run, idx, (uint32_t)variant->bits);
	trunc_ref(&rkaccel_model_desc(e->model)->layers[0], e->in, variant->bits, e->ref);
	ASSERT_EQ(0, conv_run_exec(e->fd, e->ctx, &e->run));
	ASSERT_EQ(0, conv_run_output(&e->run, e->out));
	for (i = 0; i < n && e->out[i] == e->ref[i]; i++)
		;
	EXPECT_EQ(n, i) TH_LOG("row %zu col %zu: %d, reference %d", i / TRUNC_N, i % TRUNC_N,
			       e->out[i], e->ref[i]);
}

TEST_HARNESS_MAIN
