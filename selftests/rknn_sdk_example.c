// SPDX-License-Identifier: MIT
/*
 * rknn_sdk_example: a program in the shape of the RKNN SDK's C examples,
 * written against rknn_api.h only: load the model file, rknn_init, query
 * the SDK version, the input/output count and attributes, then for every
 * batch slice rknn_inputs_set, rknn_run, rknn_outputs_get and
 * rknn_outputs_release, and rknn_destroy.
 *
 * The batch runs twice:
 *  1. by hand: one context per NPU core, made with rknn_dup_context and
 *     pinned with rknn_set_core_mask (RKNN_NPU_CORE_0, _1, _2: a mask the
 *     device refuses ends the list of cores), one thread per context, the
 *     slices cycling over the contexts;
 *  2. as the SDK's multi-batch: one context of batch B (rknn_init_extend's
 *     rkaccel_batch_size), one input and one output of B slices, slice i
 *     at i * size / B.
 * With --expect FILE (the row-major output of the whole batch, as cpu_ref
 * writes it) every slice of both runs is compared and printed as a TAP
 * line; the exit status is 1 when one differs.
 *
 * A file with its batch in it (format 3.0, rkaccel-convert --batch B: the
 * input's dims[0] is B > 1) runs as the SDK runs such a file: rknn_init
 * with no extension, one NHWC input and one output of B slices, one
 * rknn_run; --batch, if given, must be B. Then once more as the SDK's
 * create-mem demo does it: memory bound with rknn_set_io_mem, the input
 * NHWC, the output FLOAT32.
 *
 * usage: rknn_sdk_example MODEL [--batch B] [--input FILE] [--expect FILE]
 */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rknn_api.h"

#define MAX_CTX 3

static unsigned char *load_file(const char *path, size_t *len)
{
	unsigned char *buf = NULL;
	FILE *f = fopen(path, "rb");
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET)) {
		buf = malloc(n);
		if (buf && fread(buf, 1, n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = n;
	}
	fclose(f);
	return buf;
}

static void dump_tensor_attr(const rknn_tensor_attr *a)
{
	printf("  index=%u name=%s n_dims=%u dims=[%u, %u, %u, %u] n_elems=%u size=%u fmt=%d "
	       "type=%d qnt_type=%d zp=%d scale=%f\n", a->index, a->name, a->n_dims,
	       a->dims[0], a->dims[1], a->dims[2], a->dims[3], a->n_elems, a->size, a->fmt, a->type,
	       a->qnt_type, a->zp, a->scale);
}

struct worker {
	rknn_context ctx;
	uint32_t first, step, batch;
	const unsigned char *in;
	unsigned char *out;
	uint32_t in_size, out_size;	/* one slice */
	int ret;
};

/* One context's slices: first, first + step, ... */
static void *run_slices(void *arg)
{
	struct worker *w = arg;
	uint32_t i;

	for (i = w->first; i < w->batch && !w->ret; i += w->step) {
		rknn_input in = { 0 };
		rknn_output out = { 0 };

		in.index = 0;
		in.type = RKNN_TENSOR_INT8;
		in.fmt = RKNN_TENSOR_UNDEFINED;
		in.size = w->in_size;
		in.buf = (void *)(w->in + (size_t)i * w->in_size);
		w->ret = rknn_inputs_set(w->ctx, 1, &in);
		if (!w->ret)
			w->ret = rknn_run(w->ctx, NULL);
		if (w->ret)
			break;
		out.want_float = 0;
		w->ret = rknn_outputs_get(w->ctx, 1, &out, NULL);
		if (w->ret)
			break;
		if (out.size == w->out_size)
			memcpy(w->out + (size_t)i * w->out_size, out.buf, out.size);
		else
			w->ret = RKNN_ERR_OUTPUT_INVALID;
		rknn_outputs_release(w->ctx, 1, &out);
	}
	return NULL;
}

static int check(const char *what, const unsigned char *out, const unsigned char *expect,
		 uint32_t batch, uint32_t size, unsigned int *tap)
{
	int bad = 0;
	uint32_t i;

	for (i = 0; i < batch; i++) {
		int same = !memcmp(out + (size_t)i * size, expect + (size_t)i * size, size);

		printf("%sok %u rknn_sdk_example.%s_slice_%u_bit_exact\n", same ? "" : "not ",
		       ++*tap, what, i);
		bad |= !same;
	}
	return bad;
}

/*
 * The same batch as the SDK's create-mem demo binds it: the native input
 * attribute made NHWC of the model's type in memory of its
 * size_with_stride, the output attribute made FLOAT32 in memory of n_elems
 * floats, one rknn_run. Every float must be the expected byte dequantized
 * with the output's scale and zero point (a FLOAT32 output, a softmax on
 * the CPU after the NPU: the expected float itself).
 */
static float expected_float(const rknn_tensor_attr *a, rknn_tensor_type type,
			    const unsigned char *expect, size_t i)
{
	int32_t q;
	float f;

	if (type == RKNN_TENSOR_INT8)
		return (float)((signed char)expect[i] - a->zp) * a->scale;
	if (type == RKNN_TENSOR_FLOAT32) {	/* a softmax after the NPU: floats already */
		memcpy(&f, expect + i * sizeof(f), sizeof(f));
		return f;
	}
	memcpy(&q, expect + i * sizeof(q), sizeof(q));
	return (float)q * a->scale;	/* int32 accumulators: zero point 0 */
}

static int run_create_mem(rknn_context ctx, const rknn_tensor_attr *in_attr,
			  const unsigned char *in, const unsigned char *expect, unsigned int *tap)
{
	rknn_tensor_attr ia, oa;
	rknn_tensor_mem *im = NULL, *om = NULL;
	rknn_tensor_type out_type;
	uint32_t batch, slice, i, k;
	int ret, bad = 0;

	memset(&ia, 0, sizeof(ia));
	memset(&oa, 0, sizeof(oa));
	ret = rknn_query(ctx, RKNN_QUERY_NATIVE_INPUT_ATTR, &ia, sizeof(ia));
	if (!ret)
		ret = rknn_query(ctx, RKNN_QUERY_OUTPUT_ATTR, &oa, sizeof(oa));
	if (ret < 0)
		goto out;
	out_type = oa.type;
	ia.fmt = RKNN_TENSOR_NHWC;
	ia.pass_through = 0;
	oa.type = RKNN_TENSOR_FLOAT32;
	im = rknn_create_mem(ctx, ia.size_with_stride);
	om = rknn_create_mem(ctx, oa.n_elems * sizeof(float));
	if (!im || !om) {
		ret = RKNN_ERR_MALLOC_FAIL;
		goto out;
	}
	memcpy(im->virt_addr, in, in_attr->size);
	ret = rknn_set_io_mem(ctx, im, &ia);
	if (!ret)
		ret = rknn_set_io_mem(ctx, om, &oa);
	if (!ret)
		ret = rknn_run(ctx, NULL);
	if (ret < 0) {
		printf("create-mem run error ret=%d\n", ret);
		goto out;
	}
	batch = oa.dims[0];
	slice = oa.n_elems / batch;
	for (i = 0; expect && i < batch; i++) {
		const float *f = (const float *)om->virt_addr + (size_t)i * slice;
		int same = 1;

		for (k = 0; k < slice; k++)
			same &= f[k] == expected_float(&oa, out_type, expect, (size_t)i * slice + k);
		printf("%sok %u rknn_sdk_example.create_mem_slice_%u_float_exact\n",
		       same ? "" : "not ", ++*tap, i);
		bad |= !same;
	}
	rknn_set_io_mem(ctx, NULL, &ia);
	rknn_set_io_mem(ctx, NULL, &oa);
out:
	if (im)
		rknn_destroy_mem(ctx, im);
	if (om)
		rknn_destroy_mem(ctx, om);
	return ret < 0 ? 1 : bad;
}

/* The batch of a file that carries one (dims[0] of an NHWC input), else 0. */
static uint32_t file_batch(const rknn_tensor_attr *a)
{
	return a->n_dims == 4 && a->fmt == RKNN_TENSOR_NHWC && a->dims[0] > 1 ? a->dims[0] : 0;
}

/*
 * A file with its batch: the whole batch in one rknn_inputs_set/rknn_run/
 * rknn_outputs_get on the context rknn_init made with no extension.
 */
static int run_file_batch(rknn_context ctx, const rknn_tensor_attr *in_attr,
			  const rknn_tensor_attr *out_attr, const unsigned char *in,
			  const unsigned char *expect, unsigned int *tap)
{
	uint32_t batch = in_attr->dims[0];
	rknn_input bin = { .index = 0, .buf = (void *)in, .size = in_attr->size,
			   .type = in_attr->type, .fmt = RKNN_TENSOR_NHWC };
	rknn_output bout = { .want_float = 0 };
	int ret, bad = 0;

	printf("batch %u from the file in one context (no extension)\n", batch);
	ret = rknn_inputs_set(ctx, 1, &bin);
	if (!ret)
		ret = rknn_run(ctx, NULL);
	if (!ret)
		ret = rknn_outputs_get(ctx, 1, &bout, NULL);
	if (ret < 0) {
		printf("batch run error ret=%d\n", ret);
		return 1;
	}
	if (bout.size != out_attr->size) {
		printf("output of %u bytes, not %u\n", bout.size, out_attr->size);
		bad = 1;
	} else if (expect) {
		bad = check("file_batch", bout.buf, expect, batch, out_attr->size / batch, tap);
	}
	rknn_outputs_release(ctx, 1, &bout);
	if (out_attr->type == RKNN_TENSOR_INT8 || out_attr->type == RKNN_TENSOR_INT32 ||
	    out_attr->type == RKNN_TENSOR_FLOAT32)
		bad |= run_create_mem(ctx, in_attr, in, expect, tap);
	if (expect)
		printf("1..%u\n", *tap);
	return bad;
}

int main(int argc, char **argv)
{
	const char *model_path = NULL, *in_path = NULL, *expect_path = NULL;
	static const rknn_core_mask masks[MAX_CTX] = {
		RKNN_NPU_CORE_0, RKNN_NPU_CORE_1, RKNN_NPU_CORE_2
	};
	rknn_context ctx = 0, dup[MAX_CTX] = { 0 }, bctx = 0;
	unsigned char *model = NULL, *in = NULL, *out = NULL, *expect = NULL;
	size_t model_len = 0, len;
	rknn_input_output_num io_num;
	rknn_tensor_attr in_attr, out_attr, b_in, b_out;
	rknn_sdk_version ver;
	rknn_init_extend ext;
	struct worker w[MAX_CTX];
	pthread_t th[MAX_CTX];
	int started[MAX_CTX] = { 0 };
	uint32_t batch = 0, nctx, i;
	unsigned int tap = 0;
	int ret, bad = 0;

	for (i = 1; i < (uint32_t)argc; i++) {
		if (!strcmp(argv[i], "--batch") && i + 1 < (uint32_t)argc)
			batch = (uint32_t)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--input") && i + 1 < (uint32_t)argc)
			in_path = argv[++i];
		else if (!strcmp(argv[i], "--expect") && i + 1 < (uint32_t)argc)
			expect_path = argv[++i];
		else if (argv[i][0] != '-' && !model_path)
			model_path = argv[i];
		else
			model_path = NULL, i = argc;
	}
	if (!model_path || batch > 64) {
		fprintf(stderr, "usage: rknn_sdk_example MODEL [--batch B (1..64)] "
			"[--input FILE] [--expect FILE]\n");
		return 2;
	}

	/* Load the model and create the context. */
	model = load_file(model_path, &model_len);
	if (!model) {
		fprintf(stderr, "cannot read %s\n", model_path);
		return 1;
	}
	ret = rknn_init(&ctx, model, (uint32_t)model_len, 0, NULL);
	if (ret < 0) {
		printf("rknn_init error ret=%d\n", ret);
		goto out;
	}
	ret = rknn_query(ctx, RKNN_QUERY_SDK_VERSION, &ver, sizeof(ver));
	if (ret < 0)
		goto out;
	printf("sdk version: %s driver version: %s\n", ver.api_version, ver.drv_version);

	/* Inputs and outputs. */
	ret = rknn_query(ctx, RKNN_QUERY_IN_OUT_NUM, &io_num, sizeof(io_num));
	if (ret < 0)
		goto out;
	printf("model input num: %u, output num: %u\n", io_num.n_input, io_num.n_output);
	memset(&in_attr, 0, sizeof(in_attr));
	in_attr.index = 0;
	ret = rknn_query(ctx, RKNN_QUERY_INPUT_ATTR, &in_attr, sizeof(in_attr));
	if (ret < 0)
		goto out;
	dump_tensor_attr(&in_attr);
	memset(&out_attr, 0, sizeof(out_attr));
	out_attr.index = 0;
	ret = rknn_query(ctx, RKNN_QUERY_OUTPUT_ATTR, &out_attr, sizeof(out_attr));
	if (ret < 0)
		goto out;
	dump_tensor_attr(&out_attr);

	/* A file with its batch: its slices are inside the attributes' sizes. */
	if (file_batch(&in_attr)) {
		if (batch && batch != file_batch(&in_attr)) {
			printf("--batch %u, but the file's batch is %u\n", batch,
			       file_batch(&in_attr));
			ret = RKNN_ERR_PARAM_INVALID;
			goto out;
		}
		batch = 1;	/* one run of the file's whole batch */
	} else if (!batch) {
		batch = 1;
	}

	/* The batch's input: a file, or a fixed pattern. */
	len = (size_t)batch * in_attr.size;
	if (in_path) {
		size_t got = 0;

		in = load_file(in_path, &got);
		if (!in || got != len) {
			fprintf(stderr, "%s: not %zu bytes\n", in_path, len);
			ret = RKNN_ERR_INPUT_INVALID;
			goto out;
		}
	} else {
		in = malloc(len);
		for (i = 0; in && i < len; i++)
			in[i] = (unsigned char)(i * 37 + 11);
	}
	out = calloc(batch, out_attr.size);
	if (!in || !out) {
		ret = RKNN_ERR_MALLOC_FAIL;
		goto out;
	}
	if (expect_path) {
		size_t got = 0;

		expect = load_file(expect_path, &got);
		if (!expect || got != (size_t)batch * out_attr.size) {
			fprintf(stderr, "%s: not %zu bytes\n", expect_path,
				(size_t)batch * out_attr.size);
			ret = RKNN_ERR_OUTPUT_INVALID;
			goto out;
		}
	}

	if (file_batch(&in_attr)) {
		bad = run_file_batch(ctx, &in_attr, &out_attr, in, expect, &tap);
		goto out;
	}

	/* 1. By hand: a context per core, the weights shared. */
	dup[0] = ctx;
	for (nctx = 1; nctx < MAX_CTX && nctx < batch; nctx++) {
		ret = rknn_dup_context(&ctx, &dup[nctx]);
		if (ret < 0)
			goto out;
	}
	for (i = 0; i < nctx; i++) {
		if (rknn_set_core_mask(dup[i], masks[i]) < 0)
			break;	/* the device has no such core */
	}
	while (nctx > i && nctx > 1)
		rknn_destroy(dup[--nctx]), dup[nctx] = 0;
	printf("batch %u by hand on %u context(s), core masks", batch, nctx);
	for (i = 0; i < nctx; i++)
		printf(" %d", masks[i]);
	printf("\n");
	for (i = 0; i < nctx; i++) {
		w[i] = (struct worker){ .ctx = dup[i], .first = i, .step = nctx, .batch = batch,
					.in = in, .out = out, .in_size = in_attr.size,
					.out_size = out_attr.size };
		started[i] = !pthread_create(&th[i], NULL, run_slices, &w[i]);
		if (!started[i])
			w[i].ret = RKNN_ERR_FAIL;
	}
	for (i = 0; i < nctx; i++) {
		if (started[i])
			pthread_join(th[i], NULL);
		if (w[i].ret < 0 && !bad) {
			printf("context %u: error %d\n", i, w[i].ret);
			bad = 1;
		}
	}
	if (!bad && expect)
		bad |= check("dup", out, expect, batch, out_attr.size, &tap);

	/* 2. The SDK's multi-batch: one context of batch B, sliced inside. */
	memset(&ext, 0, sizeof(ext));
	ext.rkaccel_batch_size = batch;
	ret = rknn_init(&bctx, model, (uint32_t)model_len, 0, &ext);
	if (ret < 0) {
		printf("rknn_init (batch %u) error ret=%d\n", batch, ret);
		goto out;
	}
	memset(&b_in, 0, sizeof(b_in));
	memset(&b_out, 0, sizeof(b_out));
	ret = rknn_query(bctx, RKNN_QUERY_INPUT_ATTR, &b_in, sizeof(b_in));
	if (!ret)
		ret = rknn_query(bctx, RKNN_QUERY_OUTPUT_ATTR, &b_out, sizeof(b_out));
	if (ret < 0)
		goto out;
	printf("batch %u in one context:\n", batch);
	dump_tensor_attr(&b_in);
	dump_tensor_attr(&b_out);
	if (b_in.size != len || b_out.size != (size_t)batch * out_attr.size) {
		printf("batch sizes are not %u x the single sizes\n", batch);
		ret = RKNN_ERR_FAIL;
		goto out;
	}
	{
		rknn_input bin = { .index = 0, .buf = in, .size = b_in.size,
				   .type = RKNN_TENSOR_INT8, .fmt = RKNN_TENSOR_UNDEFINED };
		rknn_output bout = { .want_float = 0 };
		rknn_perf_run perf;

		memset(out, 0, b_out.size);
		ret = rknn_inputs_set(bctx, 1, &bin);
		if (!ret)
			ret = rknn_run(bctx, NULL);
		if (!ret)
			ret = rknn_query(bctx, RKNN_QUERY_PERF_RUN, &perf, sizeof(perf));
		if (!ret)
			ret = rknn_outputs_get(bctx, 1, &bout, NULL);
		if (ret < 0) {
			printf("batch run error ret=%d\n", ret);
			goto out;
		}
		printf("batch run: %lld us\n", (long long)perf.run_duration);
		memcpy(out, bout.buf, bout.size);
		rknn_outputs_release(bctx, 1, &bout);
	}
	if (expect)
		bad |= check("batch", out, expect, batch, out_attr.size, &tap);
	if (expect)
		printf("1..%u\n", tap);
out:
	if (bctx)
		rknn_destroy(bctx);
	for (i = 1; i < MAX_CTX; i++)
		if (dup[i])
			rknn_destroy(dup[i]);
	if (ctx)
		rknn_destroy(ctx);
	free(model);
	free(in);
	free(out);
	free(expect);
	return ret < 0 || bad ? 1 : 0;
}
