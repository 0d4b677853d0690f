// SPDX-License-Identifier: GPL-2.0-only
/*
 * librkaccel-rknn (rknn_api.h): every call's bad arguments give the
 * documented RKNN_ERR_* code, a destroyed context is refused, the closed
 * .rknn format is refused, the SDK's multi-batch (sizes B times the
 * single-batch ones, slices at i * size / B) and rknn_dup_context /
 * SHARE_WEIGHT_MEM are bit-exact against the CPU reference with the
 * weights held once, zero-copy memory, core masks,
 * rknn_set_batch_core_num() (the batch's jobs on exactly that many cores,
 * counted in debugfs), and nothing is left behind: no BO, kernel context,
 * fd or heap memory.
 */

#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <sys/stat.h>

#include "kselftest_harness.h"
#include "conv_run.h"
#include "graph_ref.h"
#include "net_ref.h"
#include "rknn_api.h"

static const uint32_t features[] = { 64, 48, 10 };
#define ROWS		4
#define LAYERS		2
#define SEED		1414
#define IN_SIZE		(ROWS * 64)
#define OUT_SIZE	(ROWS * 10)

/* The DRM fd the rknn layer opened: a device node fd other than @own. */
static int rknn_fd(int own)
{
	char path[64], target[256];
	int fd;

	for (fd = 0; fd < 1024; fd++) {
		ssize_t n;

		if (fd == own)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (!strncmp(target, "/dev/accel/", 11) || !strncmp(target, "/dev/dri/", 9))
			return fd;
	}
	return -1;
}

FIXTURE(api) {
	struct rkaccel_device *dev;
	struct rkaccel_info info;
	struct rkaccel_model *model;
	void *image;
	size_t image_len;
	rknn_context ctx, ctx2;
	int8_t in[IN_SIZE * 8], ref[OUT_SIZE * 8];
};

FIXTURE_SETUP(api)
{
	uint32_t i;

	ASSERT_EQ(0, rkaccel_open(NULL, &self->dev));
	ASSERT_EQ(0, rkaccel_query(self->dev, &self->info));
	ASSERT_EQ(0, rkaccel_model_random(SEED, ROWS, LAYERS, features, 0, &self->model));
	ASSERT_EQ(0, rkaccel_model_serialize(rkaccel_model_desc(self->model), &self->image,
					     &self->image_len));
	rkt_fill_i8(self->in, sizeof(self->in), 77);
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(0, ref_model(rkaccel_model_desc(self->model), self->in + i * IN_SIZE,
				       self->ref + i * OUT_SIZE));
	}
}

FIXTURE_TEARDOWN(api)
{
	if (self->ctx)
		rknn_destroy(self->ctx);
	if (self->ctx2)
		rknn_destroy(self->ctx2);
	free(self->image);
	rkaccel_model_free(self->model);
	rkaccel_close(self->dev);
}

static int init_batch(FIXTURE_DATA(api) *self, rknn_context *ctx, uint32_t batch)
{
	rknn_init_extend ext;

	memset(&ext, 0, sizeof(ext));
	ext.rkaccel_batch_size = batch;
	return rknn_init(ctx, self->image, (uint32_t)self->image_len, 0, &ext);
}

/* inputs_set + run + outputs_get (prealloc) of @batch slices from self->in. */
static int run_batch(FIXTURE_DATA(api) *self, rknn_context ctx, uint32_t batch, int8_t *out)
{
	rknn_input in = { .index = 0, .buf = self->in, .size = batch * IN_SIZE,
			  .type = RKNN_TENSOR_INT8, .fmt = RKNN_TENSOR_NHWC };
	rknn_output o = { .want_float = 0, .is_prealloc = 1, .index = 0, .buf = out,
			  .size = batch * OUT_SIZE };
	int ret;

	ret = rknn_inputs_set(ctx, 1, &in);
	if (!ret)
		ret = rknn_run(ctx, NULL);
	if (!ret)
		ret = rknn_outputs_get(ctx, 1, &o, NULL);
	return ret;
}

TEST_F(api, init_bad_arguments)
{
	static const char rknn_magic[64] = "RKNN\0\0\0\0";
	long fds = rkt_count_fds();
	rknn_init_extend ext;
	unsigned char *bad;
	uint32_t len = (uint32_t)self->image_len;
	FILE *f;

	memset(&ext, 0, sizeof(ext));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_init(NULL, self->image, len, 0, NULL));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_init(&self->ctx, NULL, len, 0, NULL));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID,
		  rknn_init(&self->ctx, self->image, len, RKNN_FLAG_ASYNC_MASK, NULL));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID,
		  rknn_init(&self->ctx, self->image, len, RKNN_FLAG_MEM_ALLOC_OUTSIDE, NULL));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_init(&self->ctx, self->image, len, 0x100, NULL));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID,
		  rknn_init(&self->ctx, self->image, len, RKNN_FLAG_SHARE_WEIGHT_MEM, NULL));
	ext.rkaccel_batch_size = RKACCEL_CTX_MAX_BATCH + 1;
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_init(&self->ctx, self->image, len, 0, &ext));
	ext.rkaccel_batch_size = 0;
	ext.real_model_offset = 16;
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_init(&self->ctx, self->image, len, 0, &ext));
	ext.real_model_offset = 0;
	ext.ctx = 12345678;
	EXPECT_EQ(RKNN_ERR_CTX_INVALID, rknn_init(&self->ctx, self->image, len,
						  RKNN_FLAG_SHARE_WEIGHT_MEM, &ext));
	/* Broken model images: truncated, corrupted (CRC), the closed format. */
	EXPECT_EQ(RKNN_ERR_MODEL_INVALID, rknn_init(&self->ctx, self->image, 16, 0, NULL));
	bad = malloc(len);
	ASSERT_NE(NULL, bad);
	memcpy(bad, self->image, len);
	bad[len - 1] ^= 0x40;
	EXPECT_EQ(RKNN_ERR_MODEL_INVALID, rknn_init(&self->ctx, bad, len, 0, NULL));
	free(bad);
	EXPECT_EQ(RKNN_ERR_MODEL_INVALID,
		  rknn_init(&self->ctx, (void *)rknn_magic, sizeof(rknn_magic), 0, NULL));
	EXPECT_EQ(RKNN_ERR_MODEL_INVALID,
		  rknn_init(&self->ctx, "/tmp/rknn_test_missing.rkml", 0, 0, NULL));
	/* By path: an .rknn file is refused even with our content. */
	f = fopen("/tmp/rknn_test.rknn", "wb");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(1, fwrite(self->image, len, 1, f));
	ASSERT_EQ(0, fclose(f));
	EXPECT_EQ(RKNN_ERR_MODEL_INVALID, rknn_init(&self->ctx, "/tmp/rknn_test.rknn", 0, 0, NULL));
	/* By content: RKNN magic under another name; a FIFO is refused, not waited on. */
	f = fopen("/tmp/rknn_magic.rkml", "wb");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(1, fwrite(rknn_magic, sizeof(rknn_magic), 1, f));
	ASSERT_EQ(0, fclose(f));
	EXPECT_EQ(RKNN_ERR_MODEL_INVALID, rknn_init(&self->ctx, "/tmp/rknn_magic.rkml", 0, 0, NULL));
	unlink("/tmp/rknn_magic.rkml");
	unlink("/tmp/rknn_fifo.rkml");
	ASSERT_EQ(0, mkfifo("/tmp/rknn_fifo.rkml", 0600));
	EXPECT_EQ(RKNN_ERR_MODEL_INVALID, rknn_init(&self->ctx, "/tmp/rknn_fifo.rkml", 0, 0, NULL));
	unlink("/tmp/rknn_fifo.rkml");
	ASSERT_EQ(0, rename("/tmp/rknn_test.rknn", "/tmp/rknn_test.rkml"));
	EXPECT_EQ(0, rknn_init(&self->ctx, "/tmp/rknn_test.rkml", 0, 0, NULL));
	EXPECT_NE(0, self->ctx);
	unlink("/tmp/rknn_test.rkml");
	EXPECT_EQ(0, rknn_destroy(self->ctx));
	self->ctx = 0;
	EXPECT_EQ(fds, rkt_count_fds());
}

TEST_F(api, destroyed_and_unknown_contexts)
{
	rknn_context dead, dup;
	rknn_input_output_num num;
	rknn_input in = { .buf = self->in, .size = IN_SIZE, .type = RKNN_TENSOR_INT8 };
	rknn_output out = { 0 };
	rknn_tensor_attr attr = { 0 };
	rknn_tensor_mem *mem;

	ASSERT_EQ(0, rknn_init(&dead, self->image, (uint32_t)self->image_len, 0, NULL));
	ASSERT_EQ(0, rknn_init(&self->ctx, self->image, (uint32_t)self->image_len, 0, NULL));
	mem = rknn_create_mem(self->ctx, 4096);
	ASSERT_NE(NULL, mem);
	EXPECT_EQ(0, rknn_destroy(dead));
	EXPECT_NE(dead, self->ctx);
	for (int k = 0; k < 3; k++) {
		rknn_context c = k == 0 ? dead : k == 1 ? 0 : self->ctx + 1000;

		EXPECT_EQ(RKNN_ERR_CTX_INVALID, rknn_destroy(c));
		EXPECT_EQ(RKNN_ERR_CTX_INVALID, rknn_dup_context(&c, &dup));
		EXPECT_EQ(RKNN_ERR_CTX_INVALID,
			  rknn_query(c, RKNN_QUERY_IN_OUT_NUM, &num, sizeof(num)));
		EXPECT_EQ(RKNN_ERR_CTX_INVALID, rknn_inputs_set(c, 1, &in));
		EXPECT_EQ(RKNN_ERR_CTX_INVALID, rknn_set_core_mask(c, RKNN_NPU_CORE_AUTO));
		EXPECT_EQ(RKNN_ERR_CTX_INVALID, rknn_run(c, NULL));
		EXPECT_EQ(RKNN_ERR_CTX_INVALID, rknn_outputs_get(c, 1, &out, NULL));
		EXPECT_EQ(RKNN_ERR_CTX_INVALID, rknn_outputs_release(c, 1, &out));
		EXPECT_EQ(NULL, rknn_create_mem(c, 4096));
		EXPECT_EQ(RKNN_ERR_CTX_INVALID, rknn_destroy_mem(c, mem));
		EXPECT_EQ(RKNN_ERR_CTX_INVALID, rknn_set_io_mem(c, mem, &attr));
	}
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_dup_context(NULL, &dup));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_dup_context(&self->ctx, NULL));
	EXPECT_EQ(0, rknn_destroy_mem(self->ctx, mem));
}

TEST_F(api, query)
{
	const struct rkaccel_layer_desc *l0 = &rkaccel_model_desc(self->model)->layers[0];
	const struct rkaccel_layer_desc *l1 = &rkaccel_model_desc(self->model)->layers[1];
	static const int unsupported[] = { RKNN_QUERY_PERF_DETAIL,
					   RKNN_QUERY_NATIVE_NHWC_INPUT_ATTR,
					   RKNN_QUERY_NATIVE_NHWC_OUTPUT_ATTR, 12, 99, -1 };
	rknn_input_output_num num;
	rknn_tensor_attr a;
	rknn_sdk_version v;
	rknn_perf_run perf;
	rknn_mem_size ms;
	unsigned int i;

	ASSERT_EQ(0, init_batch(self, &self->ctx, 3));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_query(self->ctx, RKNN_QUERY_IN_OUT_NUM, NULL, 8));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID,
		  rknn_query(self->ctx, RKNN_QUERY_IN_OUT_NUM, &num, sizeof(num) - 1));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID,
		  rknn_query(self->ctx, RKNN_QUERY_INPUT_ATTR, &a, sizeof(a) - 1));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID,
		  rknn_query(self->ctx, RKNN_QUERY_SDK_VERSION, &v, sizeof(v) - 1));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID,
		  rknn_query(self->ctx, RKNN_QUERY_PERF_RUN, &perf, sizeof(perf) - 1));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID,
		  rknn_query(self->ctx, RKNN_QUERY_MEM_SIZE, &ms, sizeof(ms) - 1));
	for (i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++) {
		memset(&a, 0, sizeof(a));
		EXPECT_EQ(RKNN_ERR_PARAM_INVALID,
			  rknn_query(self->ctx, (rknn_query_cmd)unsupported[i], &a, sizeof(a)))
			TH_LOG("query %d", unsupported[i]);
	}
	memset(&a, 0, sizeof(a));
	a.index = 1;
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID,
		  rknn_query(self->ctx, RKNN_QUERY_OUTPUT_ATTR, &a, sizeof(a)));

	ASSERT_EQ(0, rknn_query(self->ctx, RKNN_QUERY_IN_OUT_NUM, &num, sizeof(num)));
	EXPECT_EQ(1, num.n_input);
	EXPECT_EQ(1, num.n_output);
	memset(&a, 0, sizeof(a));
	ASSERT_EQ(0, rknn_query(self->ctx, RKNN_QUERY_INPUT_ATTR, &a, sizeof(a)));
	EXPECT_EQ(3, a.n_dims);
	EXPECT_EQ(3, a.dims[0]);
	EXPECT_EQ(ROWS, a.dims[1]);
	EXPECT_EQ(64, a.dims[2]);
	EXPECT_EQ(3 * IN_SIZE, a.n_elems);
	EXPECT_EQ(3 * IN_SIZE, a.size);
	EXPECT_EQ(RKNN_TENSOR_INT8, a.type);
	EXPECT_EQ(RKNN_TENSOR_UNDEFINED, a.fmt);
	EXPECT_EQ(RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC, a.qnt_type);
	EXPECT_EQ(l0->in_zero_point, a.zp);
	EXPECT_EQ(l0->in_scale, a.scale);
	EXPECT_STREQ("input", a.name);
	memset(&a, 0, sizeof(a));
	ASSERT_EQ(0, rknn_query(self->ctx, RKNN_QUERY_OUTPUT_ATTR, &a, sizeof(a)));
	EXPECT_EQ(3 * OUT_SIZE, a.size);
	EXPECT_EQ(10, a.dims[2]);
	EXPECT_EQ(l1->out_zero_point, a.zp);
	EXPECT_EQ(l1->out_scale, a.scale);
	memset(&a, 0, sizeof(a));
	ASSERT_EQ(0, rknn_query(self->ctx, RKNN_QUERY_NATIVE_INPUT_ATTR, &a, sizeof(a)));
	EXPECT_EQ(RKNN_TENSOR_NC1HWC2, a.fmt);
	EXPECT_EQ(3 * rkaccel_native_size(ROWS, 64, 1), a.size_with_stride);
	EXPECT_EQ((size_t)a.size_with_stride,
		  (size_t)a.dims[0] * a.dims[1] * a.h_stride * a.dims[3] * a.dims[4]);
	memset(&a, 0, sizeof(a));
	ASSERT_EQ(0, rknn_query(self->ctx, RKNN_QUERY_NATIVE_OUTPUT_ATTR, &a, sizeof(a)));
	EXPECT_EQ(3 * rkaccel_native_size(ROWS, 10, 1), a.size_with_stride);
	EXPECT_STREQ("output", a.name);

	ASSERT_EQ(0, rknn_query(self->ctx, RKNN_QUERY_SDK_VERSION, &v, sizeof(v)));
	EXPECT_NE(NULL, strstr(v.api_version, "rkaccel-rknn " RKACCEL_RKNN_VERSION));
	EXPECT_NE(NULL, strstr(v.drv_version, self->info.soc_name));
	ASSERT_EQ(0, rknn_query(self->ctx, RKNN_QUERY_PERF_RUN, &perf, sizeof(perf)));
	EXPECT_EQ(0, perf.run_duration);
	ASSERT_EQ(0, rknn_query(self->ctx, RKNN_QUERY_MEM_SIZE, &ms, sizeof(ms)));
	EXPECT_LE(64 * 48 + 48 * 10, ms.total_weight_size);
	EXPECT_LT(ms.total_weight_size, ms.total_dma_allocated_size);
}

TEST_F(api, io_bad_arguments)
{
	rknn_input in = { .index = 0, .buf = self->in, .size = IN_SIZE,
			  .type = RKNN_TENSOR_INT8, .fmt = RKNN_TENSOR_NHWC };
	rknn_input bad;
	rknn_output o = { 0 }, copy;
	rknn_run_extend rx = { 0 };
	int8_t small[OUT_SIZE];
	int foreign;

	ASSERT_EQ(0, rknn_init(&self->ctx, self->image, (uint32_t)self->image_len, 0, NULL));
	/* Nothing to run or get yet. */
	EXPECT_EQ(RKNN_ERR_INPUT_INVALID, rknn_run(self->ctx, NULL));
	EXPECT_EQ(RKNN_ERR_OUTPUT_INVALID, rknn_outputs_get(self->ctx, 1, &o, NULL));

	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_inputs_set(self->ctx, 1, NULL));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_inputs_set(self->ctx, 0, &in));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_inputs_set(self->ctx, 2, &in));
	bad = in, bad.index = 1;
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_inputs_set(self->ctx, 1, &bad));
	bad = in, bad.buf = NULL;
	EXPECT_EQ(RKNN_ERR_INPUT_INVALID, rknn_inputs_set(self->ctx, 1, &bad));
	bad = in, bad.size = IN_SIZE - 1;
	EXPECT_EQ(RKNN_ERR_INPUT_INVALID, rknn_inputs_set(self->ctx, 1, &bad));
	bad = in, bad.size = IN_SIZE * 4 - 1, bad.type = RKNN_TENSOR_FLOAT32;
	EXPECT_EQ(RKNN_ERR_INPUT_INVALID, rknn_inputs_set(self->ctx, 1, &bad));
	bad = in, bad.type = RKNN_TENSOR_FLOAT16;
	EXPECT_EQ(RKNN_ERR_INPUT_INVALID, rknn_inputs_set(self->ctx, 1, &bad));
	bad = in, bad.fmt = RKNN_TENSOR_NC1HWC2;
	EXPECT_EQ(RKNN_ERR_INPUT_INVALID, rknn_inputs_set(self->ctx, 1, &bad));
	EXPECT_EQ(RKNN_ERR_INPUT_INVALID, rknn_run(self->ctx, NULL));

	ASSERT_EQ(0, rknn_inputs_set(self->ctx, 1, &in));
	rx.non_block = 1;
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_run(self->ctx, &rx));
	rx.non_block = 0;
	ASSERT_EQ(0, rknn_run(self->ctx, &rx));
	EXPECT_EQ(1, rx.frame_id);

	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_outputs_get(self->ctx, 1, NULL, NULL));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_outputs_get(self->ctx, 2, &o, NULL));
	o.index = 1;
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_outputs_get(self->ctx, 1, &o, NULL));
	o.index = 0;
	o.is_prealloc = 1;
	o.buf = small;
	o.size = OUT_SIZE - 1;
	EXPECT_EQ(RKNN_ERR_OUTPUT_INVALID, rknn_outputs_get(self->ctx, 1, &o, NULL));
	o.size = OUT_SIZE;
	o.want_float = 1;	/* OUT_SIZE floats do not fit OUT_SIZE bytes */
	EXPECT_EQ(RKNN_ERR_OUTPUT_INVALID, rknn_outputs_get(self->ctx, 1, &o, NULL));
	o.buf = NULL;
	o.want_float = 0;
	EXPECT_EQ(RKNN_ERR_OUTPUT_INVALID, rknn_outputs_get(self->ctx, 1, &o, NULL));

	/* Allocated outputs: released once; a foreign or repeated release is refused. */
	memset(&o, 0, sizeof(o));
	ASSERT_EQ(0, rknn_outputs_get(self->ctx, 1, &o, NULL));
	EXPECT_EQ(OUT_SIZE, o.size);
	EXPECT_EQ(0, memcmp(o.buf, self->ref, OUT_SIZE));
	copy = o;
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_outputs_release(self->ctx, 1, NULL));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_outputs_release(self->ctx, 0, &o));
	EXPECT_EQ(0, rknn_outputs_release(self->ctx, 1, &o));
	EXPECT_EQ(NULL, o.buf);
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_outputs_release(self->ctx, 1, &copy));
	copy.buf = &foreign;
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_outputs_release(self->ctx, 1, &copy));
	/* Not released: rknn_destroy frees it (the leak test counts). */
	memset(&o, 0, sizeof(o));
	ASSERT_EQ(0, rknn_outputs_get(self->ctx, 1, &o, NULL));
}

TEST_F(api, inputs_converted)
{
	float fin[IN_SIZE], fout[OUT_SIZE], want[OUT_SIZE];
	const struct rkaccel_layer_desc *l0 = &rkaccel_model_desc(self->model)->layers[0];
	const struct rkaccel_layer_desc *l1 = &rkaccel_model_desc(self->model)->layers[1];
	uint8_t uin[IN_SIZE];
	int8_t q[IN_SIZE], ref[OUT_SIZE];
	rknn_input in = { .index = 0, .buf = fin, .size = sizeof(fin),
			  .type = RKNN_TENSOR_FLOAT32, .fmt = RKNN_TENSOR_NCHW };
	rknn_output o = { .want_float = 1, .is_prealloc = 1, .buf = fout, .size = sizeof(fout) };
	unsigned int i;

	ASSERT_EQ(0, rknn_init(&self->ctx, self->image, (uint32_t)self->image_len, 0, NULL));
	/* float input: quantized with the input's scale and zero point. */
	rkaccel_dequantize(self->in, IN_SIZE, l0->in_scale, l0->in_zero_point, fin);
	rkaccel_quantize(fin, IN_SIZE, l0->in_scale, l0->in_zero_point, q);
	ASSERT_EQ(0, memcmp(q, self->in, IN_SIZE));
	ASSERT_EQ(0, rknn_inputs_set(self->ctx, 1, &in));
	ASSERT_EQ(0, rknn_run(self->ctx, NULL));
	ASSERT_EQ(0, rknn_outputs_get(self->ctx, 1, &o, NULL));
	rkaccel_dequantize(self->ref, OUT_SIZE, l1->out_scale, l1->out_zero_point, want);
	EXPECT_EQ(0, memcmp(fout, want, sizeof(want)));

	/* uint8 input: its values quantized as real numbers. */
	for (i = 0; i < IN_SIZE; i++) {
		float f;

		uin[i] = (uint8_t)(i * 7);
		f = uin[i];
		rkaccel_quantize(&f, 1, l0->in_scale, l0->in_zero_point, &q[i]);
	}
	ASSERT_EQ(0, ref_model(rkaccel_model_desc(self->model), q, ref));
	in.buf = uin;
	in.size = IN_SIZE;
	in.type = RKNN_TENSOR_UINT8;
	ASSERT_EQ(0, rknn_inputs_set(self->ctx, 1, &in));
	ASSERT_EQ(0, rknn_run(self->ctx, NULL));
	o.want_float = 0;
	o.buf = q;
	o.size = OUT_SIZE;
	ASSERT_EQ(0, rknn_outputs_get(self->ctx, 1, &o, NULL));
	EXPECT_EQ(0, memcmp(q, ref, OUT_SIZE));

	/* pass_through: the bytes as they are, whatever the type says. */
	in.buf = self->in;
	in.type = RKNN_TENSOR_FLOAT16;
	in.pass_through = 1;
	ASSERT_EQ(0, rknn_inputs_set(self->ctx, 1, &in));
	ASSERT_EQ(0, rknn_run(self->ctx, NULL));
	ASSERT_EQ(0, rknn_outputs_get(self->ctx, 1, &o, NULL));
	EXPECT_EQ(0, memcmp(q, self->ref, OUT_SIZE));
}

/* The SDK's multi-batch: sizes B x single, every slice bit-exact. */
TEST_F(api, multi_batch_bit_exact)
{
	uint32_t max_b = self->info.num_cores * 2 + 1, b, i;
	int8_t out[OUT_SIZE * 8];
	rknn_tensor_attr a;

	for (b = 1; b <= max_b; b++) {
		ASSERT_EQ(0, init_batch(self, &self->ctx, b));
		memset(&a, 0, sizeof(a));
		ASSERT_EQ(0, rknn_query(self->ctx, RKNN_QUERY_INPUT_ATTR, &a, sizeof(a)));
		EXPECT_EQ(b * IN_SIZE, a.size);
		EXPECT_EQ(b, a.dims[0]);
		ASSERT_EQ(0, rknn_query(self->ctx, RKNN_QUERY_OUTPUT_ATTR, &a, sizeof(a)));
		EXPECT_EQ(b * OUT_SIZE, a.size);
		/* Batch contexts run with AUTO, as the SDK sets them. */
		EXPECT_EQ(b > 1 ? RKNN_ERR_PARAM_INVALID : 0,
			  rknn_set_core_mask(self->ctx, RKNN_NPU_CORE_0));
		memset(out, 0x5a, sizeof(out));
		ASSERT_EQ(0, run_batch(self, self->ctx, b, out));
		for (i = 0; i < b; i++) {
			EXPECT_EQ(0, memcmp(out + i * OUT_SIZE, self->ref + i * OUT_SIZE, OUT_SIZE))
				TH_LOG("batch %u slice %u differs from the CPU", b, i);
		}
		for (i = b * OUT_SIZE; i < sizeof(out); i++) {
			ASSERT_EQ(0x5a, out[i]) TH_LOG("batch %u wrote past its output", b);
		}
		ASSERT_EQ(0, rknn_destroy(self->ctx));
		self->ctx = 0;
	}
}

/* An int32 output (no requantization) and its float view. */
TEST_F(api, int32_output)
{
	static const uint32_t f1[] = { 32, 16 };
	struct rkaccel_model *m;
	void *img;
	size_t len;
	int32_t out[3 * ROWS * 16], ref[3 * ROWS * 16];
	float fl[3 * ROWS * 16];
	rknn_tensor_attr a = { 0 };
	rknn_init_extend ext = { .rkaccel_batch_size = 3 };
	rknn_input in = { .buf = self->in, .size = 3 * ROWS * 32, .type = RKNN_TENSOR_INT8 };
	rknn_output o = { .is_prealloc = 1, .buf = out, .size = sizeof(out) };
	unsigned int i;

	ASSERT_EQ(0, rkaccel_model_random(7, ROWS, 1, f1, RKACCEL_LAYER_OUT_INT32, &m));
	ASSERT_EQ(0, rkaccel_model_serialize(rkaccel_model_desc(m), &img, &len));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, ref_model(rkaccel_model_desc(m), self->in + i * ROWS * 32,
				       ref + i * ROWS * 16));
	}
	ASSERT_EQ(0, rknn_init(&self->ctx, img, (uint32_t)len, 0, &ext));
	ASSERT_EQ(0, rknn_query(self->ctx, RKNN_QUERY_OUTPUT_ATTR, &a, sizeof(a)));
	EXPECT_EQ(RKNN_TENSOR_INT32, a.type);
	EXPECT_EQ(sizeof(out), a.size);
	EXPECT_EQ(0, a.zp);
	ASSERT_EQ(0, rknn_inputs_set(self->ctx, 1, &in));
	ASSERT_EQ(0, rknn_run(self->ctx, NULL));
	ASSERT_EQ(0, rknn_outputs_get(self->ctx, 1, &o, NULL));
	EXPECT_EQ(0, memcmp(out, ref, sizeof(out)));
	o.want_float = 1;
	o.buf = fl;
	o.size = sizeof(fl);
	ASSERT_EQ(0, rknn_outputs_get(self->ctx, 1, &o, NULL));
	for (i = 0; i < 3 * ROWS * 16; i++) {
		ASSERT_EQ((float)ref[i] * a.scale, fl[i]);
	}
	free(img);
	rkaccel_model_free(m);
}

/* dup and SHARE_WEIGHT_MEM: the weights once, same batch, bit-exact. */
TEST_F(api, dup_and_shared_weights)
{
	uint64_t w0, w1, w2;
	int8_t out[OUT_SIZE * 8];
	rknn_init_extend ext;
	rknn_tensor_attr a = { 0 };
	rknn_context third;
	static const uint32_t other_f[] = { 64, 32, 10 };
	struct rkaccel_model *other;
	void *other_img;
	size_t other_len;
	int fd;
	uint32_t i;

	ASSERT_EQ(0, init_batch(self, &self->ctx, 2));
	fd = rknn_fd(rkaccel_fd(self->dev));
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, rkt_fdinfo_u64(fd, "drm-total-weights", &w0));
	ASSERT_EQ(0, rknn_dup_context(&self->ctx, &self->ctx2));
	ASSERT_EQ(0, rkt_fdinfo_u64(fd, "drm-total-weights", &w1));
	EXPECT_EQ(w0, w1) TH_LOG("rknn_dup_context copied the weights");
	ASSERT_EQ(0, rknn_query(self->ctx2, RKNN_QUERY_INPUT_ATTR, &a, sizeof(a)));
	EXPECT_EQ(2, a.dims[0]) TH_LOG("the copy has another batch");
	/* The copy outlives the original. */
	ASSERT_EQ(0, rknn_destroy(self->ctx));
	self->ctx = 0;
	memset(out, 0, sizeof(out));
	ASSERT_EQ(0, run_batch(self, self->ctx2, 2, out));
	EXPECT_EQ(0, memcmp(out, self->ref, 2 * OUT_SIZE));

	/* A second rknn_init reusing the copy's weights. */
	memset(&ext, 0, sizeof(ext));
	ext.ctx = self->ctx2;
	ext.rkaccel_batch_size = 3;
	ASSERT_EQ(0, rknn_init(&self->ctx, self->image, (uint32_t)self->image_len,
			       RKNN_FLAG_SHARE_WEIGHT_MEM, &ext));
	ASSERT_EQ(0, rkt_fdinfo_u64(fd, "drm-total-weights", &w2));
	EXPECT_EQ(w0, w2) TH_LOG("SHARE_WEIGHT_MEM copied the weights");
	ASSERT_EQ(0, run_batch(self, self->ctx, 3, out));
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(0, memcmp(out + i * OUT_SIZE, self->ref + i * OUT_SIZE, OUT_SIZE));
	}
	/* Another model cannot take these weights. */
	ASSERT_EQ(0, rkaccel_model_random(SEED, ROWS, LAYERS, other_f, 0, &other));
	ASSERT_EQ(0, rkaccel_model_serialize(rkaccel_model_desc(other), &other_img, &other_len));
	EXPECT_EQ(RKNN_ERR_MODEL_INVALID, rknn_init(&third, other_img, (uint32_t)other_len,
						    RKNN_FLAG_SHARE_WEIGHT_MEM, &ext));
	free(other_img);
	rkaccel_model_free(other);
}

TEST_F(api, core_masks)
{
	static const rknn_core_mask masks[] = {
		RKNN_NPU_CORE_AUTO, RKNN_NPU_CORE_0, RKNN_NPU_CORE_1, RKNN_NPU_CORE_2,
		RKNN_NPU_CORE_0_1, RKNN_NPU_CORE_0_1_2, RKNN_NPU_CORE_ALL,
	};
	int8_t out[OUT_SIZE];
	unsigned int i;

	ASSERT_EQ(0, rknn_init(&self->ctx, self->image, (uint32_t)self->image_len, 0, NULL));
	for (i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
		uint32_t m = masks[i] == RKNN_NPU_CORE_ALL ? self->info.core_mask : masks[i];
		int want = m & ~self->info.core_mask ? RKNN_ERR_PARAM_INVALID : 0;

		EXPECT_EQ(want, rknn_set_core_mask(self->ctx, masks[i])) TH_LOG("mask %#x", masks[i]);
		if (want)
			continue;
		memset(out, 0, sizeof(out));
		ASSERT_EQ(0, run_batch(self, self->ctx, 1, out));
		EXPECT_EQ(0, memcmp(out, self->ref, OUT_SIZE)) TH_LOG("mask %#x", masks[i]);
	}
	EXPECT_EQ(self->info.num_cores < 3 ? RKNN_ERR_PARAM_INVALID : 0,
		  rknn_set_core_mask(self->ctx, RKNN_NPU_CORE_2));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_set_core_mask(self->ctx, (rknn_core_mask)8));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_set_core_mask(self->ctx, (rknn_core_mask)0x10000));
}

/* Jobs run so far per core (debugfs) into @jobs[num_cores]; 0, or -1 without debugfs. */
static int core_jobs(FIXTURE_DATA(api) *self, uint64_t *jobs)
{
	struct rkaccel_core_stats st[8];
	int n = rkaccel_core_stats(self->dev, st, 8), i;

	if (n < (int)self->info.num_cores)
		return -1;
	for (i = 0; i < (int)self->info.num_cores; i++)
		jobs[i] = st[i].jobs;
	return 0;
}

/* The k-th core the device has, as a bit index. */
static uint32_t nth_core(FIXTURE_DATA(api) *self, uint32_t k)
{
	uint32_t bit;

	for (bit = 0; bit < 32; bit++)
		if ((self->info.core_mask & (1u << bit)) && !k--)
			return bit;
	return 32;
}

/*
 * With debugfs (*@have_stats), the jobs since @before: one per slice of
 * @batch, all on the first @cores cores of the device, each of them busy.
 */
static void check_jobs(struct __test_metadata *_metadata, FIXTURE_DATA(api) *self,
		       const uint64_t *before, uint32_t batch, uint32_t cores, int have_stats)
{
	uint64_t after[8], total = 0;
	uint32_t i, k;

	if (!have_stats || core_jobs(self, after))
		return;
	for (k = 0; k < self->info.num_cores; k++) {
		uint64_t d = after[k] - before[k];
		int used = 0;

		for (i = 0; i < cores; i++)
			used |= nth_core(self, i) == k;
		total += d;
		if (used) {
			EXPECT_LT(0, d) TH_LOG("batch %u on %u cores: core %u ran nothing",
					       batch, cores, k);
		} else {
			EXPECT_EQ(0, d) TH_LOG("batch %u on %u cores: core %u ran %llu jobs",
					       batch, cores, k, (unsigned long long)d);
		}
	}
	EXPECT_EQ(batch, total) TH_LOG("batch %u on %u cores: %llu jobs", batch, cores,
				       (unsigned long long)total);
}

/* Run @batch slices on @ctx: every slice bit-exact, the jobs as check_jobs(). */
static void check_cores(struct __test_metadata *_metadata, FIXTURE_DATA(api) *self,
			rknn_context ctx, uint32_t batch, uint32_t cores, int *have_stats)
{
	uint64_t before[8];
	int8_t out[OUT_SIZE * 8];
	uint32_t i;

	*have_stats = !core_jobs(self, before);
	memset(out, 0x5a, sizeof(out));
	ASSERT_EQ(0, run_batch(self, ctx, batch, out));
	for (i = 0; i < batch; i++) {
		EXPECT_EQ(0, memcmp(out + i * OUT_SIZE, self->ref + i * OUT_SIZE, OUT_SIZE))
			TH_LOG("batch %u on %u cores: slice %u differs from the CPU", batch, cores, i);
	}
	check_jobs(_metadata, self, before, batch, cores, *have_stats);
}

/* rknn_set_batch_core_num: contexts, ranges, zero-copy memory, batch 1. */
TEST_F(api, batch_core_num_bad_arguments)
{
	int n = (int)self->info.num_cores, i;
	const int bad[] = { 0, -1, -3, INT_MIN, n + 1, 4, 8, 9, INT_MAX };
	rknn_tensor_attr ia;
	rknn_tensor_mem *im;
	rknn_context dead;

	/* 0, unknown and destroyed contexts. */
	ASSERT_EQ(0, init_batch(self, &dead, 3));
	ASSERT_EQ(0, init_batch(self, &self->ctx, 3));
	ASSERT_EQ(0, rknn_destroy(dead));
	for (i = 1; i <= n; i++) {
		EXPECT_EQ(RKNN_ERR_CTX_INVALID, rknn_set_batch_core_num(dead, i));
		EXPECT_EQ(RKNN_ERR_CTX_INVALID, rknn_set_batch_core_num(0, i));
		EXPECT_EQ(RKNN_ERR_CTX_INVALID, rknn_set_batch_core_num(self->ctx + 1000, i));
	}
	/* Out of range for the device: 1 .. cores only. */
	for (i = 0; i < (int)(sizeof(bad) / sizeof(bad[0])); i++) {
		if (bad[i] >= 1 && bad[i] <= n)
			continue;
		EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_set_batch_core_num(self->ctx, bad[i]))
			TH_LOG("core_num %d on %d cores", bad[i], n);
	}
	for (i = n; i >= 1; i--) {
		EXPECT_EQ(0, rknn_set_batch_core_num(self->ctx, i)) TH_LOG("core_num %d", i);
	}
	/* Still a batch context: no core mask. */
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_set_core_mask(self->ctx, RKNN_NPU_CORE_0));
	/* With a core number set, bound memory must still hold the whole batch. */
	memset(&ia, 0, sizeof(ia));
	ASSERT_EQ(0, rknn_query(self->ctx, RKNN_QUERY_NATIVE_INPUT_ATTR, &ia, sizeof(ia)));
	im = rknn_create_mem(self->ctx, ia.size_with_stride / 3);
	ASSERT_NE(NULL, im);
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_set_io_mem(self->ctx, im, &ia));
	EXPECT_EQ(0, rknn_destroy_mem(self->ctx, im));
	ASSERT_EQ(0, rknn_destroy(self->ctx));
	/* A batch-1 context takes it and runs as before. */
	ASSERT_EQ(0, rknn_init(&self->ctx, self->image, (uint32_t)self->image_len, 0, NULL));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_set_batch_core_num(self->ctx, 0));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_set_batch_core_num(self->ctx, n + 1));
	for (i = 1; i <= n; i++) {
		EXPECT_EQ(0, rknn_set_batch_core_num(self->ctx, i));
	}
	EXPECT_EQ(0, rknn_set_core_mask(self->ctx, RKNN_NPU_CORE_0));
}

/*
 * rknn_set_batch_core_num(n): the batch runs on exactly min(n, batch) cores,
 * every slice bit-exact; changed up and down, refused values change
 * nothing, and a duplicate keeps it.
 */
TEST_F_TIMEOUT(api, batch_core_num_uses_cores, 120)
{
	uint32_t n = self->info.num_cores, b = 2 * n, i;
	int stats = 0;

	ASSERT_LE(2, n);
	ASSERT_EQ(0, init_batch(self, &self->ctx, b));
	for (i = 1; i <= n; i++) {
		ASSERT_EQ(0, rknn_set_batch_core_num(self->ctx, (int)i));
		check_cores(_metadata, self, self->ctx, b, i, &stats);
	}
	for (i = n; i >= 1; i--) {
		ASSERT_EQ(0, rknn_set_batch_core_num(self->ctx, (int)i));
		check_cores(_metadata, self, self->ctx, b, i, &stats);
	}
	/* A refused value leaves it at 1 core. */
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_set_batch_core_num(self->ctx, (int)n + 1));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_set_batch_core_num(self->ctx, 0));
	check_cores(_metadata, self, self->ctx, b, 1, &stats);
	/* The duplicate runs on as many cores, and may be changed alone. */
	ASSERT_EQ(0, rknn_dup_context(&self->ctx, &self->ctx2));
	check_cores(_metadata, self, self->ctx2, b, 1, &stats);
	ASSERT_EQ(0, rknn_set_batch_core_num(self->ctx2, 2));
	check_cores(_metadata, self, self->ctx2, b, 2, &stats);
	check_cores(_metadata, self, self->ctx, b, 1, &stats);
	ASSERT_EQ(0, rknn_destroy(self->ctx2));
	self->ctx2 = 0;
	ASSERT_EQ(0, rknn_destroy(self->ctx));
	/* More cores than slices: one core per slice. */
	ASSERT_EQ(0, init_batch(self, &self->ctx, 2));
	ASSERT_EQ(0, rknn_set_batch_core_num(self->ctx, (int)n));
	check_cores(_metadata, self, self->ctx, 2, 2, &stats);
	/* Odd batches: the last slices on the first cores. */
	ASSERT_EQ(0, rknn_destroy(self->ctx));
	ASSERT_EQ(0, init_batch(self, &self->ctx, 2 * n + 1));
	ASSERT_EQ(0, rknn_set_batch_core_num(self->ctx, 2));
	check_cores(_metadata, self, self->ctx, 2 * n + 1, 2, &stats);
	if (!stats)
		SKIP(return, "no debugfs cores file: the cores used are not checked");
}

/*
 * rknn_set_batch_core_num with zero-copy memory (at an offset): every
 * slice in place and bit-exact on that many cores, bound before or after
 * the call, input alone bound, the memory rebound and the old one freed.
 */
TEST_F_TIMEOUT(api, batch_core_num_zero_copy, 120)
{
	uint32_t n = self->info.num_cores, b = 2 * n + 1, i, k;
	rknn_tensor_attr ia, oa;
	rknn_tensor_mem *im, *om, *om2;
	int8_t out[OUT_SIZE * 8];
	uint64_t before[8];
	int stats;
	size_t is, os;

	ASSERT_EQ(0, init_batch(self, &self->ctx, b));
	memset(&ia, 0, sizeof(ia));
	memset(&oa, 0, sizeof(oa));
	ASSERT_EQ(0, rknn_query(self->ctx, RKNN_QUERY_NATIVE_INPUT_ATTR, &ia, sizeof(ia)));
	ASSERT_EQ(0, rknn_query(self->ctx, RKNN_QUERY_NATIVE_OUTPUT_ATTR, &oa, sizeof(oa)));
	is = ia.size / b;
	os = oa.size / b;
	im = rknn_create_mem(self->ctx, ia.size_with_stride + 128);
	om = rknn_create_mem(self->ctx, oa.size_with_stride + 64);
	om2 = rknn_create_mem(self->ctx, oa.size_with_stride);
	ASSERT_NE(NULL, im);
	ASSERT_NE(NULL, om);
	ASSERT_NE(NULL, om2);
	im->offset = 128;
	om->offset = 64;
	/* Bound before the first call, then the number changed down. */
	ASSERT_EQ(0, rknn_set_io_mem(self->ctx, im, &ia));
	ASSERT_EQ(0, rknn_set_io_mem(self->ctx, om, &oa));
	for (i = 0; i < b; i++) {
		ASSERT_EQ(0, rkaccel_to_native(self->in + i * IN_SIZE, ROWS, 64,
					       (uint8_t *)im->virt_addr + 128 + i * is, is));
	}
	for (k = n; k >= 1; k--) {
		ASSERT_EQ(0, rknn_set_batch_core_num(self->ctx, (int)k));
		stats = !core_jobs(self, before);
		memset(om->virt_addr, 0x5a, oa.size_with_stride + 64);
		ASSERT_EQ(0, rknn_run(self->ctx, NULL));
		check_jobs(_metadata, self, before, b, k, stats);
		for (i = 0; i < 64; i++) {
			ASSERT_EQ(0x5a, ((uint8_t *)om->virt_addr)[i]) TH_LOG("wrote before the offset");
		}
		for (i = 0; i < b; i++) {
			ASSERT_EQ(0, rkaccel_from_native((uint8_t *)om->virt_addr + 64 + i * os, os,
							 ROWS, 10, 1, out + i * OUT_SIZE));
			EXPECT_EQ(0, memcmp(out + i * OUT_SIZE, self->ref + i * OUT_SIZE, OUT_SIZE))
				TH_LOG("%u cores: slice %u", k, i);
		}
	}
	/* Rebound to other memory; the old one may go at once. */
	ASSERT_EQ(0, rknn_set_batch_core_num(self->ctx, (int)n));
	ASSERT_EQ(0, rknn_set_io_mem(self->ctx, om2, &oa));
	ASSERT_EQ(0, rknn_destroy_mem(self->ctx, om));
	memset(om2->virt_addr, 0, oa.size_with_stride);
	ASSERT_EQ(0, rknn_run(self->ctx, NULL));
	for (i = 0; i < b; i++) {
		ASSERT_EQ(0, rkaccel_from_native((uint8_t *)om2->virt_addr + i * os, os, ROWS, 10,
						 1, out + i * OUT_SIZE));
		EXPECT_EQ(0, memcmp(out + i * OUT_SIZE, self->ref + i * OUT_SIZE, OUT_SIZE))
			TH_LOG("rebound: slice %u", i);
	}
	/* The input alone bound: the output comes back through outputs_get. */
	ASSERT_EQ(0, rknn_set_io_mem(self->ctx, NULL, &oa));
	ASSERT_EQ(0, rknn_set_batch_core_num(self->ctx, 2));
	{
		rknn_output o = { .is_prealloc = 1, .buf = out, .size = sizeof(out) };

		memset(out, 0x5a, sizeof(out));
		stats = !core_jobs(self, before);
		ASSERT_EQ(0, rknn_run(self->ctx, NULL));
		check_jobs(_metadata, self, before, b, 2, stats);
		ASSERT_EQ(0, rknn_outputs_get(self->ctx, 1, &o, NULL));
		for (i = 0; i < b; i++) {
			EXPECT_EQ(0, memcmp(out + i * OUT_SIZE, self->ref + i * OUT_SIZE, OUT_SIZE))
				TH_LOG("input bound: slice %u", i);
		}
	}
	ASSERT_EQ(0, rknn_set_io_mem(self->ctx, NULL, &ia));
	EXPECT_EQ(0, rknn_destroy_mem(self->ctx, im));
	EXPECT_EQ(0, rknn_destroy_mem(self->ctx, om2));
	/* Unbound again: from rknn_inputs_set. */
	check_cores(_metadata, self, self->ctx, b, 2, &stats);
}

/* rknn_create_mem + rknn_set_io_mem: native input and output, batch 1 and 3. */
TEST_F(api, zero_copy)
{
	rknn_tensor_attr ia, oa, ra;
	rknn_tensor_mem *im, *om, *tiny;
	int8_t out[OUT_SIZE * 3];
	uint32_t b, i;

	for (b = 1; b <= 3; b += 2) {
		ASSERT_EQ(0, init_batch(self, &self->ctx, b));
		memset(&ia, 0, sizeof(ia));
		memset(&oa, 0, sizeof(oa));
		memset(&ra, 0, sizeof(ra));
		ASSERT_EQ(0, rknn_query(self->ctx, RKNN_QUERY_NATIVE_INPUT_ATTR, &ia, sizeof(ia)));
		ASSERT_EQ(0, rknn_query(self->ctx, RKNN_QUERY_NATIVE_OUTPUT_ATTR, &oa, sizeof(oa)));
		ASSERT_EQ(0, rknn_query(self->ctx, RKNN_QUERY_INPUT_ATTR, &ra, sizeof(ra)));
		im = rknn_create_mem(self->ctx, ia.size_with_stride);
		om = rknn_create_mem(self->ctx, oa.size_with_stride);
		tiny = rknn_create_mem(self->ctx, 64);
		ASSERT_NE(NULL, im);
		ASSERT_NE(NULL, om);
		ASSERT_NE(NULL, tiny);
		EXPECT_EQ(NULL, rknn_create_mem(self->ctx, 0));
		EXPECT_LE(0, im->fd);
		EXPECT_EQ(RKNN_TENSOR_MEMORY_FLAGS_ALLOC_INSIDE, im->flags);
		/* Bad bindings. */
		EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_set_io_mem(self->ctx, im, NULL));
		EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_set_io_mem(self->ctx, tiny, &ra));
		EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_set_io_mem(self->ctx, tiny, &ia));
		im->offset = 64;
		EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_set_io_mem(self->ctx, im, &ia));
		im->offset = 0;
		ASSERT_EQ(0, rknn_set_io_mem(self->ctx, im, &ia));
		ASSERT_EQ(0, rknn_set_io_mem(self->ctx, om, &oa));
		EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_destroy_mem(self->ctx, im))
			TH_LOG("bound memory destroyed");
		for (i = 0; i < b; i++) {
			ASSERT_EQ(0, rkaccel_to_native(self->in + i * IN_SIZE, ROWS, 64,
						       (uint8_t *)im->virt_addr + i * ia.size / b,
						       ia.size / b));
		}
		memset(om->virt_addr, 0x5a, oa.size);
		ASSERT_EQ(0, rknn_run(self->ctx, NULL));
		for (i = 0; i < b; i++) {
			ASSERT_EQ(0, rkaccel_from_native((uint8_t *)om->virt_addr + i * oa.size / b,
							 oa.size / b, ROWS, 10, 1,
							 out + i * OUT_SIZE));
		}
		for (i = 0; i < b; i++) {
			EXPECT_EQ(0, memcmp(out + i * OUT_SIZE, self->ref + i * OUT_SIZE, OUT_SIZE))
				TH_LOG("batch %u slice %u", b, i);
		}
		/* All in bound memory: nothing for rknn_outputs_get. */
		{
			rknn_output o = { 0 };

			EXPECT_EQ(RKNN_ERR_OUTPUT_INVALID,
				  rknn_outputs_get(self->ctx, 1, &o, NULL));
		}
		/* Unbind the output: results come back through rknn_outputs_get. */
		ASSERT_EQ(0, rknn_set_io_mem(self->ctx, NULL, &oa));
		if (b == 1) {
			rknn_output o = { .is_prealloc = 1, .buf = out, .size = OUT_SIZE };

			memset(out, 0, sizeof(out));
			ASSERT_EQ(0, rknn_run(self->ctx, NULL));
			ASSERT_EQ(0, rknn_outputs_get(self->ctx, 1, &o, NULL));
			EXPECT_EQ(0, memcmp(out, self->ref, OUT_SIZE));
		}
		ASSERT_EQ(0, rknn_set_io_mem(self->ctx, NULL, &ia));
		EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_destroy_mem(self->ctx, NULL));
		EXPECT_EQ(0, rknn_destroy_mem(self->ctx, im));
		EXPECT_EQ(0, rknn_destroy_mem(self->ctx, om));
		EXPECT_EQ(0, rknn_destroy_mem(self->ctx, tiny));
		ASSERT_EQ(0, rknn_destroy(self->ctx));
		self->ctx = 0;
	}
}

/*
 * rknn_set_io_mem with the ordinary attributes, as the SDK's create-mem demo
 * binds them: the native input attribute made FLOAT32 (or INT8) UNDEFINED,
 * the output FLOAT32 in n_elems * 4 bytes; every run converts both. Batch 1
 * and 3, every slice against the CPU reference; a native binding replaces a
 * converted one; bound memory cannot be destroyed; what cannot be converted
 * is refused.
 */
TEST_F(api, zero_copy_converted)
{
	rknn_tensor_attr ia, oa, na;
	rknn_tensor_mem *im, *om, *i8, *o8;
	float want[OUT_SIZE * 3];
	int8_t out[OUT_SIZE * 3];
	uint32_t b, i;

	for (b = 1; b <= 3; b += 2) {
		ASSERT_EQ(0, init_batch(self, &self->ctx, b));
		memset(&ia, 0, sizeof(ia));
		memset(&oa, 0, sizeof(oa));
		memset(&na, 0, sizeof(na));
		ASSERT_EQ(0, rknn_query(self->ctx, RKNN_QUERY_NATIVE_INPUT_ATTR, &ia, sizeof(ia)));
		ASSERT_EQ(0, rknn_query(self->ctx, RKNN_QUERY_OUTPUT_ATTR, &oa, sizeof(oa)));
		ASSERT_EQ(0, rknn_query(self->ctx, RKNN_QUERY_NATIVE_OUTPUT_ATTR, &na, sizeof(na)));
		ASSERT_EQ(b * OUT_SIZE, oa.n_elems);
		ia.type = RKNN_TENSOR_FLOAT32;
		ia.fmt = RKNN_TENSOR_UNDEFINED;
		ia.pass_through = 0;
		oa.type = RKNN_TENSOR_FLOAT32;
		im = rknn_create_mem(self->ctx, b * IN_SIZE * sizeof(float) + 4);
		om = rknn_create_mem(self->ctx, oa.n_elems * sizeof(float));
		i8 = rknn_create_mem(self->ctx, b * IN_SIZE);
		o8 = rknn_create_mem(self->ctx, oa.n_elems);
		ASSERT_NE(NULL, im);
		ASSERT_NE(NULL, om);
		ASSERT_NE(NULL, i8);
		ASSERT_NE(NULL, o8);
		/* Too small, types and formats that are not converted. */
		EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_set_io_mem(self->ctx, i8, &ia));
		ia.type = RKNN_TENSOR_FLOAT16;
		EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_set_io_mem(self->ctx, im, &ia));
		ia.type = RKNN_TENSOR_FLOAT32;
		ia.fmt = RKNN_TENSOR_NC1HWC2;
		EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_set_io_mem(self->ctx, im, &ia));
		ia.fmt = RKNN_TENSOR_UNDEFINED;
		oa.type = RKNN_TENSOR_UINT8;
		EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_set_io_mem(self->ctx, o8, &oa));
		oa.type = RKNN_TENSOR_FLOAT32;
		EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_set_io_mem(self->ctx, o8, &oa));
		/* FLOAT32 both ways, the input 4 bytes into its memory. */
		im->offset = 4;
		ASSERT_EQ(0, rknn_set_io_mem(self->ctx, im, &ia));
		ASSERT_EQ(0, rknn_set_io_mem(self->ctx, om, &oa));
		EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_destroy_mem(self->ctx, im));
		EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_destroy_mem(self->ctx, om));
		rkaccel_dequantize(self->in, b * IN_SIZE, ia.scale, ia.zp,
				   (float *)((uint8_t *)im->virt_addr + 4));
		rkaccel_dequantize(self->ref, b * OUT_SIZE, oa.scale, oa.zp, want);
		memset(om->virt_addr, 0, oa.n_elems * sizeof(float));
		ASSERT_EQ(0, rknn_run(self->ctx, NULL));
		EXPECT_EQ(0, memcmp(om->virt_addr, want, oa.n_elems * sizeof(float)))
			TH_LOG("batch %u: FLOAT32 output", b);
		/* INT8 row-major both ways: the reference's bytes. */
		ia.type = RKNN_TENSOR_INT8;
		oa.type = RKNN_TENSOR_INT8;
		ASSERT_EQ(0, rknn_set_io_mem(self->ctx, i8, &ia));
		ASSERT_EQ(0, rknn_set_io_mem(self->ctx, o8, &oa));
		EXPECT_EQ(0, rknn_destroy_mem(self->ctx, im)) TH_LOG("rebound memory still held");
		EXPECT_EQ(0, rknn_destroy_mem(self->ctx, om));
		memcpy(i8->virt_addr, self->in, b * IN_SIZE);
		memset(o8->virt_addr, 0, oa.n_elems);
		ASSERT_EQ(0, rknn_run(self->ctx, NULL));
		for (i = 0; i < b; i++) {
			EXPECT_EQ(0, memcmp((int8_t *)o8->virt_addr + i * OUT_SIZE,
					    self->ref + i * OUT_SIZE, OUT_SIZE))
				TH_LOG("batch %u slice %u: INT8 output", b, i);
		}
		/* The native output attribute replaces the converted binding. */
		om = rknn_create_mem(self->ctx, na.size_with_stride);
		ASSERT_NE(NULL, om);
		ASSERT_EQ(0, rknn_set_io_mem(self->ctx, om, &na));
		EXPECT_EQ(0, rknn_destroy_mem(self->ctx, o8));
		memset(om->virt_addr, 0x5a, na.size_with_stride);
		ASSERT_EQ(0, rknn_run(self->ctx, NULL));
		for (i = 0; i < b; i++) {
			ASSERT_EQ(0, rkaccel_from_native((uint8_t *)om->virt_addr + i * na.size / b,
							 na.size / b, ROWS, 10, 1,
							 out + i * OUT_SIZE));
			EXPECT_EQ(0, memcmp(out + i * OUT_SIZE, self->ref + i * OUT_SIZE, OUT_SIZE))
				TH_LOG("batch %u slice %u: native output", b, i);
		}
		ASSERT_EQ(0, rknn_set_io_mem(self->ctx, NULL, &na));
		ASSERT_EQ(0, rknn_set_io_mem(self->ctx, NULL, &ia));
		EXPECT_EQ(0, rknn_destroy_mem(self->ctx, om));
		EXPECT_EQ(0, rknn_destroy_mem(self->ctx, i8));
		/* Unbound: nothing to run on. */
		EXPECT_EQ(RKNN_ERR_INPUT_INVALID, rknn_run(self->ctx, NULL));
		ASSERT_EQ(0, rknn_destroy(self->ctx));
		self->ctx = 0;
	}
}

/* Many cycles of every call leave no BO, context, fd or heap memory. */
/* A static model: no custom string, no shape ranges; the current attributes are the attributes. */
TEST_F(api, custom_string_and_static_shapes)
{
	static const rknn_query_cmd plain[4] = { RKNN_QUERY_INPUT_ATTR, RKNN_QUERY_OUTPUT_ATTR,
						 RKNN_QUERY_NATIVE_INPUT_ATTR,
						 RKNN_QUERY_NATIVE_OUTPUT_ATTR };
	static const rknn_query_cmd cur[4] = { RKNN_QUERY_CURRENT_INPUT_ATTR,
					       RKNN_QUERY_CURRENT_OUTPUT_ATTR,
					       RKNN_QUERY_CURRENT_NATIVE_INPUT_ATTR,
					       RKNN_QUERY_CURRENT_NATIVE_OUTPUT_ATTR };
	static rknn_input_range range;
	rknn_custom_string cs;
	rknn_tensor_attr a, b;
	unsigned int i;

	ASSERT_EQ(0, rknn_init(&self->ctx, self->image, (uint32_t)self->image_len, 0, NULL));
	memset(&cs, 0x55, sizeof(cs));
	ASSERT_EQ(0, rknn_query(self->ctx, RKNN_QUERY_CUSTOM_STRING, &cs, sizeof(cs)));
	EXPECT_STREQ("", cs.string);
	EXPECT_EQ(0, cs.string[sizeof(cs.string) - 1]);
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID,
		  rknn_query(self->ctx, RKNN_QUERY_CUSTOM_STRING, &cs, sizeof(cs) - 1));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID,
		  rknn_query(self->ctx, RKNN_QUERY_CUSTOM_STRING, NULL, sizeof(cs)));
	EXPECT_EQ(RKNN_ERR_CTX_INVALID,
		  rknn_query(self->ctx + 1000, RKNN_QUERY_CUSTOM_STRING, &cs, sizeof(cs)));
	for (i = 0; i < 4; i++) {
		memset(&a, 0, sizeof(a));
		memset(&b, 0x77, sizeof(b));
		b.index = 0;
		ASSERT_EQ(0, rknn_query(self->ctx, plain[i], &a, sizeof(a)));
		ASSERT_EQ(0, rknn_query(self->ctx, cur[i], &b, sizeof(b)));
		EXPECT_EQ(0, memcmp(&a, &b, sizeof(a))) TH_LOG("query %d", cur[i]);
		b.index = 1;
		EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_query(self->ctx, cur[i], &b, sizeof(b)));
		EXPECT_EQ(RKNN_ERR_PARAM_INVALID,
			  rknn_query(self->ctx, cur[i], &b, sizeof(b) - 1));
	}
	EXPECT_EQ(RKNN_ERR_MODEL_INVALID,
		  rknn_query(self->ctx, RKNN_QUERY_INPUT_DYNAMIC_RANGE, &range, sizeof(range)));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_query(self->ctx, RKNN_QUERY_INPUT_DYNAMIC_RANGE,
						     &range, sizeof(range) - 1));
	memset(&a, 0, sizeof(a));
	ASSERT_EQ(0, rknn_query(self->ctx, RKNN_QUERY_INPUT_ATTR, &a, sizeof(a)));
	EXPECT_EQ(RKNN_ERR_MODEL_INVALID, rknn_set_input_shapes(self->ctx, 1, &a));
	EXPECT_EQ(RKNN_ERR_MODEL_INVALID, rknn_set_input_shape(self->ctx, &a));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_set_input_shapes(self->ctx, 1, NULL));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_set_input_shapes(self->ctx, 2, &a));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_set_input_shape(self->ctx, NULL));
	EXPECT_EQ(RKNN_ERR_CTX_INVALID, rknn_set_input_shapes(0, 1, &a));
	EXPECT_EQ(RKNN_ERR_CTX_INVALID, rknn_set_input_shape(self->ctx + 1000, &a));
	/* The model still runs after the refusals. */
	{
		int8_t out[OUT_SIZE];

		ASSERT_EQ(0, run_batch(self, self->ctx, 1, out));
		EXPECT_EQ(0, memcmp(out, self->ref, OUT_SIZE));
	}
}

TEST_F(api, create_mem2_flags)
{
	static const uint64_t good[] = { RKNN_FLAG_MEMORY_FLAGS_DEFAULT, RKNN_FLAG_MEMORY_CACHEABLE,
					 RKNN_FLAG_MEMORY_NON_CACHEABLE,
					 RKNN_FLAG_MEMORY_TRY_ALLOC_SRAM,
					 RKNN_FLAG_MEMORY_NON_CACHEABLE |
					 RKNN_FLAG_MEMORY_TRY_ALLOC_SRAM };
	long fds = rkt_count_fds();
	rknn_tensor_mem *m, *nc;
	unsigned int i;

	ASSERT_EQ(0, rknn_init(&self->ctx, self->image, (uint32_t)self->image_len, 0, NULL));
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		m = rknn_create_mem2(self->ctx, 5000, good[i]);
		ASSERT_NE(NULL, m) TH_LOG("flags 0x%llx", (unsigned long long)good[i]);
		EXPECT_EQ(5000, m->size);
		EXPECT_EQ(0, m->offset);
		EXPECT_LE(0, m->fd);
		EXPECT_NE(0, m->phys_addr);
		EXPECT_EQ(RKNN_TENSOR_MEMORY_FLAGS_ALLOC_INSIDE, m->flags);
		memset(m->virt_addr, 0xa5, 5000);	/* all of it mapped, writable */
		EXPECT_EQ(RKNN_ERR_CTX_INVALID, rknn_destroy_mem(0, m));
		EXPECT_EQ(0, rknn_destroy_mem(self->ctx, m));
	}
	/* Bad flags, sizes and contexts. */
	EXPECT_EQ(NULL, rknn_create_mem2(self->ctx, 4096, RKNN_FLAG_MEMORY_CACHEABLE |
						 RKNN_FLAG_MEMORY_NON_CACHEABLE));
	EXPECT_EQ(NULL, rknn_create_mem2(self->ctx, 4096, 0x8));
	EXPECT_EQ(NULL, rknn_create_mem2(self->ctx, 4096, 1ull << 40));
	EXPECT_EQ(NULL, rknn_create_mem2(self->ctx, 0, 0));
	EXPECT_EQ(NULL, rknn_create_mem2(self->ctx, 1ull << 32, 0));
	EXPECT_EQ(NULL, rknn_create_mem2(0, 4096, 0));
	EXPECT_EQ(NULL, rknn_create_mem2(self->ctx + 1000, 4096, 0));
	EXPECT_EQ(NULL, rknn_create_mem2(self->ctx + 1000, 4096, RKNN_MEM_FLAG_ALLOC_NO_CONTEXT));
	/* Without a context: made with 0, it outlives every context, destroyed with 0. */
	nc = rknn_create_mem2(0, 4096, RKNN_MEM_FLAG_ALLOC_NO_CONTEXT);
	ASSERT_NE(NULL, nc);
	EXPECT_EQ(0, rknn_destroy(self->ctx));
	self->ctx = 0;
	memset(nc->virt_addr, 1, 4096);
	EXPECT_EQ(0, rknn_mem_sync(0, nc, RKNN_MEMORY_SYNC_BIDIRECTIONAL));
	m = rknn_create_mem2(0, 4096, RKNN_MEM_FLAG_ALLOC_NO_CONTEXT | RKNN_FLAG_MEMORY_CACHEABLE);
	ASSERT_NE(NULL, m);
	EXPECT_EQ(0, rknn_destroy_mem(0, nc));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_destroy_mem(0, nc)) TH_LOG("destroyed twice");
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_destroy_mem(0, NULL));
	ASSERT_EQ(0, rknn_init(&self->ctx, self->image, (uint32_t)self->image_len, 0, NULL));
	EXPECT_EQ(0, rknn_destroy_mem(self->ctx, m)) TH_LOG("any context destroys it");
	EXPECT_EQ(0, rknn_destroy(self->ctx));
	self->ctx = 0;
	EXPECT_EQ(fds, rkt_count_fds());
}

/*
 * The reuse demo's shape with I/O memory: one buffer, its dma-buf imported
 * into two contexts (rknn_create_mem_from_fd), each binding its part as the
 * native input; run one after the other, both bit-exact.
 */
TEST_F(api, create_mem_from_fd_shared)
{
	long fds = rkt_count_fds();
	rknn_tensor_mem *big, *imp[2], *m;
	rknn_tensor_attr ia;
	int8_t out[OUT_SIZE];
	rknn_context c[2];
	uint32_t part;
	int p[2], k;

	ASSERT_EQ(0, rknn_init(&self->ctx, self->image, (uint32_t)self->image_len, 0, NULL));
	ASSERT_EQ(0, rknn_init(&self->ctx2, self->image, (uint32_t)self->image_len, 0, NULL));
	c[0] = self->ctx;
	c[1] = self->ctx2;
	memset(&ia, 0, sizeof(ia));
	ASSERT_EQ(0, rknn_query(self->ctx, RKNN_QUERY_NATIVE_INPUT_ATTR, &ia, sizeof(ia)));
	part = (ia.size_with_stride + 63) & ~63u;
	big = rknn_create_mem(self->ctx, 2 * part);
	ASSERT_NE(NULL, big);
	for (k = 0; k < 2; k++) {
		imp[k] = rknn_create_mem_from_fd(c[k], big->fd, k ? NULL : big->virt_addr,
						 ia.size_with_stride, (int32_t)(k * part));
		ASSERT_NE(NULL, imp[k]);
		EXPECT_EQ(RKNN_TENSOR_MEMORY_FLAGS_FROM_FD, imp[k]->flags);
		EXPECT_EQ(big->fd, imp[k]->fd);
		EXPECT_EQ(k * part, (uint32_t)imp[k]->offset);
		EXPECT_EQ(ia.size_with_stride, imp[k]->size);
		ASSERT_EQ(0, rknn_set_io_mem(c[k], imp[k], &ia));
	}
	EXPECT_EQ(big->virt_addr, imp[0]->virt_addr);
	/*
	 * virt_addr maps the buffer's start, the data at offset (the SDK's
	 * rule): written through the second import's own mapping, read
	 * through the creator's.
	 */
	ASSERT_NE(big->virt_addr, imp[1]->virt_addr);
	ASSERT_EQ(0, rkaccel_to_native(self->in + IN_SIZE, ROWS, 64,
				       (uint8_t *)imp[1]->virt_addr + imp[1]->offset,
				       ia.size_with_stride));
	ASSERT_EQ(0, rkaccel_to_native(self->in, ROWS, 64, big->virt_addr, ia.size_with_stride));
	EXPECT_EQ(0, memcmp((uint8_t *)big->virt_addr + part,
			    (uint8_t *)imp[1]->virt_addr + part, ia.size_with_stride));
	EXPECT_EQ(0, rknn_mem_sync(self->ctx, big, RKNN_MEMORY_SYNC_TO_DEVICE));
	for (k = 0; k < 2; k++) {
		rknn_output o = { .is_prealloc = 1, .buf = out, .size = OUT_SIZE };

		memset(out, 0, sizeof(out));
		ASSERT_EQ(0, rknn_run(c[k], NULL));
		ASSERT_EQ(0, rknn_outputs_get(c[k], 1, &o, NULL));
		EXPECT_EQ(0, memcmp(out, self->ref + k * OUT_SIZE, OUT_SIZE)) TH_LOG("context %d", k);
	}
	/* Bad imports. */
	EXPECT_EQ(NULL, rknn_create_mem_from_fd(self->ctx, -1, NULL, 4096, 0));
	EXPECT_EQ(NULL, rknn_create_mem_from_fd(self->ctx, big->fd, NULL, 0, 0));
	EXPECT_EQ(NULL, rknn_create_mem_from_fd(self->ctx, big->fd, NULL, 64, -64));
	EXPECT_EQ(NULL, rknn_create_mem_from_fd(self->ctx, big->fd, NULL, 2 * part + 4096, 0))
		TH_LOG("larger than the buffer");
	EXPECT_EQ(NULL, rknn_create_mem_from_fd(self->ctx, big->fd, NULL, part, (int32_t)part + 4096));
	EXPECT_EQ(NULL, rknn_create_mem_from_fd(0, big->fd, NULL, 64, 0));
	EXPECT_EQ(NULL, rknn_create_mem_from_fd(self->ctx + 1000, big->fd, NULL, 64, 0));
	ASSERT_EQ(0, pipe(p));
	EXPECT_EQ(NULL, rknn_create_mem_from_fd(self->ctx, p[0], NULL, 64, 0)) TH_LOG("a pipe");
	close(p[0]);
	close(p[1]);
	EXPECT_EQ(NULL, rknn_create_mem_from_phys(self->ctx, 0x1000, big->virt_addr, 64));
	EXPECT_EQ(NULL, rknn_create_mem_from_mb_blk(self->ctx, big, 0));
	/* Unbind, drop the imports (the fd stays the creator's), then the buffer. */
	for (k = 0; k < 2; k++) {
		EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_destroy_mem(c[k], imp[k])) TH_LOG("bound");
		ASSERT_EQ(0, rknn_set_io_mem(c[k], NULL, &ia));
		EXPECT_EQ(0, rknn_destroy_mem(c[k], imp[k]));
	}
	EXPECT_LE(0, fcntl(big->fd, F_GETFD)) TH_LOG("an import closed the creator's fd");
	m = rknn_create_mem_from_fd(self->ctx, big->fd, NULL, 64, 0);
	ASSERT_NE(NULL, m);
	EXPECT_EQ(0, rknn_destroy_mem(self->ctx, big));
	EXPECT_EQ(0, rknn_destroy_mem(self->ctx, m)) TH_LOG("the import outlives the fd");
	EXPECT_EQ(0, rknn_destroy(self->ctx));
	EXPECT_EQ(0, rknn_destroy(self->ctx2));
	self->ctx = self->ctx2 = 0;
	EXPECT_EQ(fds, rkt_count_fds());
}

/* Weights and activations stay librkaccel's: checked, then refused with RKNN_ERR_FAIL. */
TEST_F(api, weight_and_internal_mem_refused)
{
	rknn_tensor_mem *big, *tiny;
	rknn_mem_size ms;

	ASSERT_EQ(0, rknn_init(&self->ctx, self->image, (uint32_t)self->image_len, 0, NULL));
	ASSERT_EQ(0, rknn_query(self->ctx, RKNN_QUERY_MEM_SIZE, &ms, sizeof(ms)));
	ASSERT_LT(64, ms.total_weight_size);
	ASSERT_LT(64, ms.total_internal_size);
	big = rknn_create_mem(self->ctx, ms.total_weight_size + ms.total_internal_size);
	tiny = rknn_create_mem(self->ctx, 64);
	ASSERT_NE(NULL, big);
	ASSERT_NE(NULL, tiny);
	EXPECT_EQ(RKNN_ERR_FAIL, rknn_set_weight_mem(self->ctx, big));
	EXPECT_EQ(RKNN_ERR_FAIL, rknn_set_internal_mem(self->ctx, big));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_set_weight_mem(self->ctx, tiny));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_set_internal_mem(self->ctx, tiny));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_set_weight_mem(self->ctx, NULL));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_set_internal_mem(self->ctx, NULL));
	EXPECT_EQ(RKNN_ERR_CTX_INVALID, rknn_set_weight_mem(0, big));
	EXPECT_EQ(RKNN_ERR_CTX_INVALID, rknn_set_internal_mem(self->ctx + 1000, big));
	/* Neither flag that hands the memory to the caller is taken. */
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID,
		  rknn_init(&self->ctx2, self->image, (uint32_t)self->image_len,
			    RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE, NULL));
	EXPECT_EQ(0, rknn_destroy_mem(self->ctx, big));
	EXPECT_EQ(0, rknn_destroy_mem(self->ctx, tiny));
}

TEST_F(api, mem_sync_and_wait)
{
	static const int modes[] = { RKNN_MEMORY_SYNC_TO_DEVICE, RKNN_MEMORY_SYNC_FROM_DEVICE,
				     RKNN_MEMORY_SYNC_BIDIRECTIONAL };
	rknn_run_extend ext = { 0 };
	int8_t out[OUT_SIZE];
	rknn_tensor_mem *m, fake;
	unsigned int i;

	ASSERT_EQ(0, rknn_init(&self->ctx, self->image, (uint32_t)self->image_len,
			       RKNN_FLAG_DISABLE_FLUSH_INPUT_MEM_CACHE |
			       RKNN_FLAG_DISABLE_FLUSH_OUTPUT_MEM_CACHE, NULL));
	m = rknn_create_mem(self->ctx, 4096);
	ASSERT_NE(NULL, m);
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(0, rknn_mem_sync(self->ctx, m, (rknn_mem_sync_mode)modes[i]));
		EXPECT_EQ(0, rknn_mem_sync(0, m, (rknn_mem_sync_mode)modes[i]));
	}
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_mem_sync(self->ctx, m, (rknn_mem_sync_mode)0));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_mem_sync(self->ctx, m, (rknn_mem_sync_mode)4));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_mem_sync(self->ctx, NULL,
							RKNN_MEMORY_SYNC_TO_DEVICE));
	memcpy(&fake, m, sizeof(fake));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_mem_sync(self->ctx, &fake,
							RKNN_MEMORY_SYNC_TO_DEVICE)) TH_LOG("a copy");
	EXPECT_EQ(RKNN_ERR_CTX_INVALID, rknn_mem_sync(self->ctx + 1000, m,
						      RKNN_MEMORY_SYNC_TO_DEVICE));
	EXPECT_EQ(0, rknn_destroy_mem(self->ctx, m));
	/* rknn_run blocks: rknn_wait has nothing left and reports the last frame. */
	EXPECT_EQ(0, rknn_wait(self->ctx, &ext));
	EXPECT_EQ(0, ext.frame_id);
	for (i = 1; i <= 2; i++) {
		ASSERT_EQ(0, run_batch(self, self->ctx, 1, out));
		EXPECT_EQ(0, memcmp(out, self->ref, OUT_SIZE));
		ext.frame_id = 99;
		EXPECT_EQ(0, rknn_wait(self->ctx, &ext));
		EXPECT_EQ(i, ext.frame_id);
	}
	EXPECT_EQ(0, rknn_wait(self->ctx, NULL));
	EXPECT_EQ(RKNN_ERR_CTX_INVALID, rknn_wait(0, &ext));
	EXPECT_EQ(RKNN_ERR_CTX_INVALID, rknn_wait(self->ctx + 1000, NULL));
	ext.non_block = 1;
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_run(self->ctx, &ext));
}

TEST_F_TIMEOUT(api, cycles_leave_nothing, 180)
{
	long bos0, ctx0, fds0 = 0;
	struct mallinfo2 m0 = { 0 }, m1;
	int8_t out[OUT_SIZE * 2];
	int i;

	if (rkt_debugfs_count("bos", &bos0) || rkt_debugfs_count("contexts", &ctx0))
		SKIP(return, "no debugfs counts");
	/*
	 * libdrm, librkaccel and glibc grow tables to a high-water mark in the
	 * first cycles (and a few bytes later on): measure from cycle 30 on,
	 * and call it a leak when the heap in use grew by a smallest malloc
	 * chunk (32 bytes) per cycle, which one object lost per cycle would do.
	 */
	for (i = 0; i < 130; i++) {
		rknn_context a, b;
		rknn_tensor_mem *mem;
		rknn_output o = { 0 };

		if (i == 30) {
			fds0 = rkt_count_fds();
			m0 = mallinfo2();
		}
		ASSERT_EQ(0, init_batch(self, &a, 2));
		/* Pinned contexts too, every other cycle, copied by the dup. */
		if (i & 4) {
			ASSERT_EQ(0, rknn_set_batch_core_num(a, 1 + (i & 1)));
		}
		ASSERT_EQ(0, rknn_dup_context(&a, &b));
		ASSERT_EQ(0, run_batch(self, b, 2, out));
		ASSERT_EQ(0, memcmp(out, self->ref, 2 * OUT_SIZE));
		ASSERT_EQ(0, rknn_outputs_get(b, 1, &o, NULL));
		if (i & 1) {
			ASSERT_EQ(0, rknn_outputs_release(b, 1, &o));
		}
		mem = rknn_create_mem(a, 8192);
		ASSERT_NE(NULL, mem);
		if (i & 2) {
			ASSERT_EQ(0, rknn_destroy_mem(a, mem));
		}
		ASSERT_EQ(0, rknn_destroy(a));
		ASSERT_EQ(0, rknn_destroy(b));
		if (!(i & 2)) {
			/* Memory outlives its context; any live context frees it. */
			ASSERT_EQ(0, init_batch(self, &a, 1));
			ASSERT_EQ(0, rknn_destroy_mem(a, mem));
			ASSERT_EQ(0, rknn_destroy(a));
		}
	}
	m1 = mallinfo2();
	TH_LOG("heap in use: %zu bytes at cycle 30, %zu after 130", m0.uordblks, m1.uordblks);
	EXPECT_LT((ssize_t)(m1.uordblks - m0.uordblks), 100 * 32)
		TH_LOG("heap in use grew by %zd bytes in 100 cycles",
		       (ssize_t)(m1.uordblks - m0.uordblks));
	EXPECT_EQ(bos0, rkt_debugfs_settle("bos", bos0));
	EXPECT_EQ(ctx0, rkt_debugfs_settle("contexts", ctx0));
	EXPECT_EQ(fds0, rkt_count_fds());
}

/* --- model format 3.0: the batch, names and shapes in the file ----------------- */

/* A network with a residual add and an NHWC output of several pixels. */
static const char graph_net[] = RKT_RESIDUAL_NET;

/*
 * @m as a 3.0 file at @path with batch @batch, the input named "image",
 * the output "features" and a custom string.
 */
static int save_graph(const struct rkaccel_model *m, uint32_t batch, const char *path)
{
	struct rkaccel_graph_tensor *t;
	struct rkaccel_graph_desc d;
	struct rkaccel_graph *g;
	char msg[256];
	int ret = rkaccel_graph_from_model(rkaccel_model_desc(m), &g, msg, sizeof(msg));

	if (ret)
		return ret;
	d = *rkaccel_graph_desc(g);
	t = malloc(d.num_tensors * sizeof(*t));
	if (!t) {
		rkaccel_graph_free(g);
		return -ENOMEM;
	}
	memcpy(t, d.tensors, d.num_tensors * sizeof(*t));
	for (uint32_t i = 0; i < d.num_tensors; i++)
		t[i].dims[0] = batch;
	t[d.inputs[0].tensor].name = "image";
	t[d.outputs[0]].name = "features";
	d.tensors = t;
	d.batch = batch;
	d.custom = "rknn_test graph";
	ret = rkaccel_graph_save(&d, path);
	free(t);
	rkaccel_graph_free(g);
	return ret;
}

/* fire2: a squeeze 1x1, then a concat of the input and the squeeze. */
static int save_concat_graph(const char *path)
{
	static const int8_t w[4 * 8] = { 1, 2, 3 };
	static const int32_t b[4] = { 0 };
	static const uint32_t e[3] = { 0, 0, 1 };
	struct rkaccel_graph_tensor t[3] = {
		{ "data", RKACCEL_DTYPE_INT8, 4, { 1, 4, 4, 8 }, 0.1f, 0 },
		{ "fire2/squeeze", RKACCEL_DTYPE_INT8, 4, { 1, 4, 4, 4 }, 0.1f, 0 },
		{ "fire2/concat", RKACCEL_DTYPE_INT8, 4, { 1, 4, 4, 12 }, 0.1f, 0 },
	};
	struct rkaccel_graph_node n[2] = {
		{ .op = RKACCEL_GOP_CONV, .num_inputs = 1, .inputs = &e[0], .output = 1,
		  .kernel_h = 1, .kernel_w = 1, .stride_h = 1, .stride_w = 1,
		  .dilation_h = 1, .dilation_w = 1, .groups = 1, .weight_scale = 0.01f,
		  .weights = w, .bias = b },
		{ .op = RKACCEL_GOP_CONCAT, .num_inputs = 2, .inputs = &e[1], .output = 2,
		  .axis = 3 },
	};
	struct rkaccel_graph_input in = { 0 };
	uint32_t out = 2;
	struct rkaccel_graph_desc d = { .batch = 1, .num_tensors = 3, .tensors = t,
		.num_nodes = 2, .nodes = n, .num_inputs = 1, .inputs = &in,
		.num_outputs = 1, .outputs = &out };

	return rkaccel_graph_save(&d, path);
}

/* A file's whole contents, for rknn_init() from memory. */
static void *read_whole(const char *path, uint32_t *len)
{
	struct stat st;
	void *buf = NULL;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return NULL;
	if (!fstat(fd, &st) && (buf = malloc(st.st_size)) &&
	    read(fd, buf, st.st_size) != st.st_size) {
		free(buf);
		buf = NULL;
	}
	close(fd);
	*len = (uint32_t)st.st_size;
	return buf;
}

/* One inference of @img (a 1.x/2.x image, batch 1) on @in into @out. */
static int run_one(void *img, uint32_t len, int8_t *in, size_t in_len, int8_t *out,
		   size_t out_len)
{
	rknn_input i = { .index = 0, .buf = in, .size = (uint32_t)in_len,
			 .type = RKNN_TENSOR_INT8, .fmt = RKNN_TENSOR_NHWC };
	rknn_output o = { .is_prealloc = 1, .index = 0, .buf = out, .size = (uint32_t)out_len };
	rknn_context ctx;
	int ret = rknn_init(&ctx, img, len, 0, NULL);

	if (ret)
		return ret;
	ret = rknn_inputs_set(ctx, 1, &i);
	if (!ret)
		ret = rknn_run(ctx, NULL);
	if (!ret)
		ret = rknn_outputs_get(ctx, 1, &o, NULL);
	rknn_destroy(ctx);
	return ret;
}

/* An NHWC attribute of a 3.0 file: @name, [@b, H, W, C] of @sh, B slices. */
static void expect_nhwc_attr(struct __test_metadata *_metadata, const rknn_tensor_attr *a,
			     const char *name, uint32_t b, const struct rkaccel_tensor_shape *sh)
{
	uint32_t slice = sh->height * sh->width * sh->channels;

	EXPECT_STREQ(name, a->name);
	EXPECT_EQ(4, a->n_dims);
	EXPECT_EQ(b, a->dims[0]);
	EXPECT_EQ(sh->height, a->dims[1]);
	EXPECT_EQ(sh->width, a->dims[2]);
	EXPECT_EQ(sh->channels, a->dims[3]);
	EXPECT_EQ(RKNN_TENSOR_NHWC, a->fmt);
	EXPECT_EQ(b * slice, a->n_elems);
	EXPECT_EQ(b * slice, a->size);
	EXPECT_EQ(sh->zero_point, a->zp);
	EXPECT_EQ(sh->scale, a->scale);
}

/*
 * The batch of @ctx (@b slices of @si) given as UINT8 pixels, in NHWC and in
 * NCHW: every slice equals the CPU reference of the pixels quantized with
 * the input attribute's scale and zero point (@os output elements a slice);
 * an INT8 input refused after them leaves them set, still read as pixels.
 */
static void expect_u8_batch(struct __test_metadata *_metadata, rknn_context ctx,
			    const struct rkaccel_model_desc *d, uint32_t b,
			    const struct rkaccel_tensor_shape *si, size_t os)
{
	size_t hw = (size_t)si->height * si->width, is = hw * si->channels;
	uint8_t *px = malloc(b * is), *chw = malloc(b * is);
	int8_t *q = malloc(b * is), *out = malloc(b * os), *ref = malloc(b * os);
	rknn_input ri = { .index = 0, .size = (uint32_t)(b * is), .type = RKNN_TENSOR_UINT8 };
	rknn_output o = { .is_prealloc = 1, .index = 0, .buf = out, .size = (uint32_t)(b * os) };
	rknn_tensor_attr a = { .index = 0 };
	uint32_t i;

	ASSERT_TRUE(px && chw && q && out && ref);
	ASSERT_EQ(0, rknn_query(ctx, RKNN_QUERY_INPUT_ATTR, &a, sizeof(a)));
	for (size_t k = 0; k < b * is; k++)
		px[k] = (uint8_t)(k * 2654435761u >> 24);
	rkaccel_quantize_u8(px, b * is, a.scale, a.zp, q);
	for (i = 0; i < b; i++) {
		ASSERT_EQ(0, ref_net(d, q + i * is, ref + i * os));
		for (size_t p = 0; p < hw; p++)
			for (uint32_t c = 0; c < si->channels; c++)
				chw[i * is + c * hw + p] = px[i * is + p * si->channels + c];
	}
	for (int nchw = 0; nchw < 2; nchw++) {
		ri.buf = nchw ? chw : px;
		ri.fmt = nchw ? RKNN_TENSOR_NCHW : RKNN_TENSOR_NHWC;
		memset(out, 0x5a, b * os);
		ASSERT_EQ(0, rknn_inputs_set(ctx, 1, &ri));
		ASSERT_EQ(0, rknn_run(ctx, NULL));
		ASSERT_EQ(0, rknn_outputs_get(ctx, 1, &o, NULL));
		for (i = 0; i < b; i++) {	/* braced: EXPECT_EQ() is two statements */
			EXPECT_EQ(0, memcmp(out + i * os, ref + i * os, os))
				TH_LOG("UINT8 %s slice %u differs from the CPU",
				       nchw ? "NCHW" : "NHWC", i);
		}
	}
	/* a refused input leaves the pixels set before it, read as pixels */
	ri.buf = px;
	ri.fmt = RKNN_TENSOR_NHWC;
	ASSERT_EQ(0, rknn_inputs_set(ctx, 1, &ri));
	ri.type = RKNN_TENSOR_INT8;
	ri.size--;
	EXPECT_EQ(RKNN_ERR_INPUT_INVALID, rknn_inputs_set(ctx, 1, &ri));
	memset(out, 0x5a, b * os);
	ASSERT_EQ(0, rknn_run(ctx, NULL));
	ASSERT_EQ(0, rknn_outputs_get(ctx, 1, &o, NULL));
	EXPECT_EQ(0, memcmp(out, ref, b * os)) TH_LOG("the refused input changed the set one");
	free(px);
	free(chw);
	free(q);
	free(out);
	free(ref);
}

/*
 * A 3.0 file with batch = the cores (3 on RK3588, 2 on RK3576) through
 * rknn_init() without an extension: NHWC attributes with the file's names,
 * sizes B times a slice, every slice bit-exact against the CPU reference
 * and against the same model run at batch 1; NCHW input reordered; a
 * different extension batch and a graph the lowering refuses get clear
 * errors.
 */
TEST_F(api, graph_file_batch)
{
	char path[] = "/tmp/rknn_graph.XXXXXX", bad[] = "/tmp/rknn_concat.XXXXXX";
	struct rkaccel_tensor_shape si, so;
	const struct rkaccel_model_desc *d;
	struct rkaccel_model *m;
	uint32_t b = self->info.num_cores, len, len2, i;
	size_t is, os;
	int8_t *in, *nchw, *out, *ref, *one;
	void *img, *img2;
	rknn_input_output_num io;
	rknn_custom_string cs;
	rknn_init_extend ext;
	rknn_tensor_attr a;
	char msg[256];
	int fd;

	ASSERT_EQ(0, rkaccel_model_from_text(21, graph_net, &m, msg, sizeof(msg))) TH_LOG("%s", msg);
	d = rkaccel_model_desc(m);
	ASSERT_EQ(0, rkaccel_model_tensor(d, 0, &si));
	ASSERT_EQ(0, rkaccel_model_tensor(d, d->num_layers, &so));
	is = (size_t)si.height * si.width * si.channels;
	os = (size_t)so.height * so.width * so.channels;
	ASSERT_LT(1, so.height * so.width);
	fd = mkstemp(path);
	ASSERT_LE(0, fd);
	close(fd);
	ASSERT_EQ(0, save_graph(m, b, path));
	in = malloc(b * is);
	nchw = malloc(b * is);
	out = malloc(b * os);
	ref = malloc(b * os);
	one = malloc(os);
	ASSERT_TRUE(in && nchw && out && ref && one);
	rkt_fill_i8(in, b * is, 91);
	for (i = 0; i < b; i++) {
		ASSERT_EQ(0, ref_net(d, in + i * is, ref + i * os));
		for (size_t p = 0; p < (size_t)si.height * si.width; p++)
			for (uint32_t c = 0; c < si.channels; c++)
				nchw[i * is + c * si.height * si.width + p] =
					in[i * is + p * si.channels + c];
	}

	/* no extension: the file's batch */
	ASSERT_EQ(RKNN_SUCC, rknn_init(&self->ctx, path, 0, 0, NULL));
	ASSERT_EQ(0, rknn_query(self->ctx, RKNN_QUERY_IN_OUT_NUM, &io, sizeof(io)));
	EXPECT_EQ(1, io.n_input);
	EXPECT_EQ(1, io.n_output);
	memset(&a, 0, sizeof(a));
	ASSERT_EQ(0, rknn_query(self->ctx, RKNN_QUERY_INPUT_ATTR, &a, sizeof(a)));
	expect_nhwc_attr(_metadata, &a, "image", b, &si);
	EXPECT_EQ(RKNN_TENSOR_INT8, a.type);
	memset(&a, 0, sizeof(a));
	ASSERT_EQ(0, rknn_query(self->ctx, RKNN_QUERY_OUTPUT_ATTR, &a, sizeof(a)));
	expect_nhwc_attr(_metadata, &a, "features", b, &so);
	memset(&a, 0, sizeof(a));
	ASSERT_EQ(0, rknn_query(self->ctx, RKNN_QUERY_NATIVE_OUTPUT_ATTR, &a, sizeof(a)));
	EXPECT_STREQ("features", a.name);
	EXPECT_EQ(b, a.dims[0]);
	ASSERT_EQ(0, rknn_query(self->ctx, RKNN_QUERY_CUSTOM_STRING, &cs, sizeof(cs)));
	EXPECT_STREQ("rknn_test graph", cs.string);
	{
		rknn_input ri = { .index = 0, .buf = in, .size = (uint32_t)(b * is),
				  .type = RKNN_TENSOR_INT8, .fmt = RKNN_TENSOR_NHWC };
		rknn_output o = { .is_prealloc = 1, .index = 0, .buf = out,
				  .size = (uint32_t)(b * os) };

		memset(out, 0x5a, b * os);
		ASSERT_EQ(0, rknn_inputs_set(self->ctx, 1, &ri));
		ASSERT_EQ(0, rknn_run(self->ctx, NULL));
		ASSERT_EQ(0, rknn_outputs_get(self->ctx, 1, &o, NULL));
		for (i = 0; i < b; i++) {
			EXPECT_EQ(0, memcmp(out + i * os, ref + i * os, os))
				TH_LOG("slice %u differs from the CPU", i);
		}
		/* the same batch given as NCHW */
		ri.buf = nchw;
		ri.fmt = RKNN_TENSOR_NCHW;
		memset(out, 0x5a, b * os);
		ASSERT_EQ(0, rknn_inputs_set(self->ctx, 1, &ri));
		ASSERT_EQ(0, rknn_run(self->ctx, NULL));
		ASSERT_EQ(0, rknn_outputs_get(self->ctx, 1, &o, NULL));
		for (i = 0; i < b; i++) {
			EXPECT_EQ(0, memcmp(out + i * os, ref + i * os, os))
				TH_LOG("NCHW slice %u differs from the CPU", i);
		}
		/* UINT8 pixels, NHWC (quantized on each slice's thread) and NCHW */
		expect_u8_batch(_metadata, self->ctx, d, b, &si, so.height * so.width * so.channels);
	}
	/* each slice alone, the 2.x file at batch 1 */
	{
		void *v2;
		size_t v2_len;

		ASSERT_EQ(0, rkaccel_model_serialize(d, &v2, &v2_len));
		for (i = 0; i < b; i++) {
			memset(one, 0x5a, os);
			ASSERT_EQ(0, run_one(v2, (uint32_t)v2_len, in + i * is, is, one, os));
			EXPECT_EQ(0, memcmp(out + i * os, one, os))
				TH_LOG("slice %u differs from its batch-1 run", i);
		}
		free(v2);
	}
	ASSERT_EQ(0, rknn_destroy(self->ctx));
	self->ctx = 0;

	/* from memory; the extension's batch equal to the file's, or refused */
	img = read_whole(path, &len);
	ASSERT_NE(NULL, img);
	memset(&ext, 0, sizeof(ext));
	ext.rkaccel_batch_size = b;
	ASSERT_EQ(RKNN_SUCC, rknn_init(&self->ctx, img, len, 0, &ext));
	memset(&a, 0, sizeof(a));
	ASSERT_EQ(0, rknn_query(self->ctx, RKNN_QUERY_INPUT_ATTR, &a, sizeof(a)));
	EXPECT_EQ(b, a.dims[0]);
	ASSERT_EQ(0, rknn_destroy(self->ctx));
	self->ctx = 0;
	ext.rkaccel_batch_size = b + 1;
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_init(&self->ctx, img, len, 0, &ext));
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_init(&self->ctx, path, 0, 0, &ext));
	ext.rkaccel_batch_size = 1;
	EXPECT_EQ(b == 1 ? RKNN_SUCC : RKNN_ERR_PARAM_INVALID,
		  rknn_init(&self->ctx, path, 0, 0, &ext));
	free(img);

	/* a graph the lowering refuses */
	fd = mkstemp(bad);
	ASSERT_LE(0, fd);
	close(fd);
	ASSERT_EQ(0, save_concat_graph(bad));
	EXPECT_EQ(RKNN_ERR_MODEL_INVALID, rknn_init(&self->ctx, bad, 0, 0, NULL));
	img2 = read_whole(bad, &len2);
	ASSERT_NE(NULL, img2);
	EXPECT_EQ(RKNN_ERR_MODEL_INVALID, rknn_init(&self->ctx, img2, len2, 0, NULL));
	free(img2);
	unlink(bad);
	unlink(path);
	free(in);
	free(nchw);
	free(out);
	free(ref);
	free(one);
	rkaccel_model_free(m);
}

/*
 * A classifier graph of batch @b: 4x4x8 pixels, global average pool, an
 * FC of 10 classes, softmax on the CPU: the output "prob" is float32.
 */
struct softmax_graph {
	int8_t w[10 * 8];
	int32_t bias[10];
	uint32_t e[3], out;
	struct rkaccel_graph_tensor t[4];
	struct rkaccel_graph_node n[3];
	struct rkaccel_graph_input in;
	struct rkaccel_graph_desc d;
};

static void softmax_graph(struct softmax_graph *g, uint32_t b)
{
	memset(g, 0, sizeof(*g));
	rkt_fill_i8(g->w, sizeof(g->w), 313);
	for (uint32_t k = 0; k < 10; k++)
		g->bias[k] = (int32_t)(k * 37 % 11) * 50 - 250;
	g->t[0] = (struct rkaccel_graph_tensor){ "pixels", RKACCEL_DTYPE_INT8, 4, { b, 4, 4, 8 },
						  1.0f / 32, 2 };
	g->t[1] = (struct rkaccel_graph_tensor){ "pool", RKACCEL_DTYPE_INT8, 4, { b, 1, 1, 8 },
						  1.0f / 32, 2 };
	g->t[2] = (struct rkaccel_graph_tensor){ "logits", RKACCEL_DTYPE_INT8, 4,
						  { b, 1, 1, 10 }, 1.0f / 16, -3 };
	g->t[3] = (struct rkaccel_graph_tensor){ "prob", RKACCEL_DTYPE_FLOAT32, 4,
						  { b, 1, 1, 10 }, 0.0f, 0 };
	g->e[0] = 0;
	g->e[1] = 1;
	g->e[2] = 2;
	g->n[0] = (struct rkaccel_graph_node){ .op = RKACCEL_GOP_GLOBAL_AVGPOOL, .num_inputs = 1,
					       .inputs = &g->e[0], .output = 1 };
	g->n[1] = (struct rkaccel_graph_node){ .op = RKACCEL_GOP_CONV, .num_inputs = 1,
		.inputs = &g->e[1], .output = 2, .kernel_h = 1, .kernel_w = 1, .stride_h = 1,
		.stride_w = 1, .dilation_h = 1, .dilation_w = 1, .groups = 1,
		.weight_scale = 1.0f / 64, .weights = g->w, .bias = g->bias };
	g->n[2] = (struct rkaccel_graph_node){ .op = RKACCEL_GOP_SOFTMAX, .num_inputs = 1,
					       .inputs = &g->e[2], .output = 3, .axis = 3 };
	g->out = 3;
	g->d = (struct rkaccel_graph_desc){ .batch = b, .num_tensors = 4, .tensors = g->t,
		.num_nodes = 3, .nodes = g->n, .num_inputs = 1, .inputs = &g->in,
		.num_outputs = 1, .outputs = &g->out };
}

/*
 * A graph with a softmax after the NPU, at batch = the cores: the output
 * attribute is FLOAT32 and unquantized (the native one stays the NPU's
 * INT8), rknn_outputs_get() gives the probabilities with or without
 * want_float, and a FLOAT32 output bound with rknn_set_io_mem() does too;
 * every float bit-exact with the graph reference, the model's own int8
 * not offered.
 */
TEST_F(api, graph_softmax_output)
{
	char path[] = "/tmp/rknn_softmax.XXXXXX";
	uint32_t b = self->info.num_cores, is = 4 * 4 * 8, n = 10 * b, i;
	struct softmax_graph *g = malloc(sizeof(*g));
	float *ref = malloc(n * sizeof(float)), *out = malloc(n * sizeof(float));
	int8_t *in = malloc(b * is);
	rknn_tensor_attr a, na;
	rknn_tensor_mem *om;
	char msg[256];
	int fd;

	ASSERT_TRUE(g && ref && out && in);
	softmax_graph(g, b);
	rkt_fill_i8(in, b * is, 17);
	ASSERT_EQ(0, graph_ref_run(&g->d, (const void *const *)&in, (void *const *)&ref, NULL,
				   NULL, msg, sizeof(msg))) TH_LOG("%s", msg);
	for (i = 1; i < 10 && ref[i] == ref[0]; i++)
		;
	EXPECT_GT(10, i) TH_LOG("constant probabilities: a weak check");
	EXPECT_GT(0.9f, ref[0]) TH_LOG("a one-hot softmax: a weak check");
	fd = mkstemp(path);
	ASSERT_LE(0, fd);
	close(fd);
	ASSERT_EQ(0, rkaccel_graph_save(&g->d, path));
	ASSERT_EQ(RKNN_SUCC, rknn_init(&self->ctx, path, 0, 0, NULL));
	memset(&a, 0, sizeof(a));
	ASSERT_EQ(0, rknn_query(self->ctx, RKNN_QUERY_OUTPUT_ATTR, &a, sizeof(a)));
	EXPECT_STREQ("prob", a.name);
	EXPECT_EQ(RKNN_TENSOR_FLOAT32, a.type);
	EXPECT_EQ(RKNN_TENSOR_QNT_NONE, a.qnt_type);
	EXPECT_EQ(b, a.dims[0]);
	EXPECT_EQ(10, a.dims[3]);
	EXPECT_EQ(n, a.n_elems);
	EXPECT_EQ(n * sizeof(float), a.size);
	memset(&na, 0, sizeof(na));
	ASSERT_EQ(0, rknn_query(self->ctx, RKNN_QUERY_NATIVE_OUTPUT_ATTR, &na, sizeof(na)));
	EXPECT_EQ(RKNN_TENSOR_INT8, na.type);
	for (int want_float = 0; want_float < 2; want_float++) {
		rknn_input ri = { .index = 0, .buf = in, .size = b * is, .type = RKNN_TENSOR_INT8,
				  .fmt = RKNN_TENSOR_NHWC };
		rknn_output o = { .want_float = want_float, .index = 0 };

		ASSERT_EQ(0, rknn_inputs_set(self->ctx, 1, &ri));
		ASSERT_EQ(0, rknn_run(self->ctx, NULL));
		ASSERT_EQ(0, rknn_outputs_get(self->ctx, 1, &o, NULL));
		EXPECT_EQ(n * sizeof(float), o.size);
		EXPECT_EQ(0, memcmp(o.buf, ref, n * sizeof(float)))
			TH_LOG("want_float %d: the probabilities differ from the graph's", want_float);
		ASSERT_EQ(0, rknn_outputs_release(self->ctx, 1, &o));
		/* a buffer for the NPU's int8 is too small */
		o = (rknn_output){ .is_prealloc = 1, .index = 0, .buf = out, .size = n };
		EXPECT_EQ(RKNN_ERR_OUTPUT_INVALID, rknn_outputs_get(self->ctx, 1, &o, NULL));
	}
	/* zero copy with the ordinary attribute: FLOAT32 only */
	om = rknn_create_mem(self->ctx, n * sizeof(float));
	ASSERT_NE(NULL, om);
	a.type = RKNN_TENSOR_INT8;
	EXPECT_EQ(RKNN_ERR_PARAM_INVALID, rknn_set_io_mem(self->ctx, om, &a));
	a.type = RKNN_TENSOR_FLOAT32;
	ASSERT_EQ(0, rknn_set_io_mem(self->ctx, om, &a));
	memset(om->virt_addr, 0, n * sizeof(float));
	ASSERT_EQ(0, rknn_run(self->ctx, NULL));
	EXPECT_EQ(0, memcmp(om->virt_addr, ref, n * sizeof(float)))
		TH_LOG("the bound FLOAT32 output differs from the graph's");
	ksft_print_msg("softmax on the CPU: %u x 10 probabilities bit-exact (batch %u)\n", b, b);
	ASSERT_EQ(0, rknn_set_io_mem(self->ctx, NULL, &a));
	EXPECT_EQ(0, rknn_destroy_mem(self->ctx, om));
	ASSERT_EQ(0, rknn_destroy(self->ctx));
	self->ctx = 0;
	unlink(path);
	free(g);
	free(ref);
	free(out);
	free(in);
}

TEST_HARNESS_MAIN
