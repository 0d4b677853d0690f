// SPDX-License-Identifier: GPL-2.0-only
/*
 * The trained digits model (models/digits) on the NPU. On the host,
 * scripts/digits-data.sh converted digits.onnx to int8 and wrote, with the
 * program that measures its int8 top-1 (lib/convert/tests/digits_int8.c),
 * the model file, each test digit's int8 input bytes, the host int8
 * executor's output bytes for each and the labels; qemu-run.sh put them in
 * /data/digits. Here every digit runs through librkaccel's multi-batch path,
 * batch 3 on the RK3588's three cores and 2 on the RK3576's two (the last
 * digits of a count the batch does not divide run at a batch of their own),
 * and every slice must equal the host executor's bytes. Prints the line
 *   digits: NPU top-1 Y% on N images (batch B on C cores), every slice
 *   bit-exact with the host executor
 * RKACCEL_DIGITS_DIR overrides /data/digits.
 */

#include "kselftest_harness.h"
#include "file_bytes.h"
#include "rkaccel_test.h"

#define DIGITS_DIR	"/data/digits"
#define MAX_CLASSES	64

/* digits.txt, and the three record files it describes. */
struct digits_data {
	uint32_t images, in_bytes, out_bytes, classes, host_correct;
	int8_t *in;
	uint8_t *expected, *labels;
};

static int read_counts(const char *dir, struct digits_data *d)
{
	char path[512];
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "%s/digits.txt", dir);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	n = fscanf(f, "images %u input_bytes %u output_bytes %u classes %u host_int8_correct %u",
		   &d->images, &d->in_bytes, &d->out_bytes, &d->classes, &d->host_correct);
	fclose(f);
	if (n != 5 || !d->images || !d->in_bytes || !d->classes || d->classes > MAX_CLASSES ||
	    d->out_bytes != d->classes * sizeof(int32_t))
		return -EINVAL;
	return 0;
}

static int digits_load(const char *dir, struct digits_data *d)
{
	int ret = read_counts(dir, d);

	if (ret)
		return ret;
	d->in = read_file_exact(dir, "inputs.bin", (size_t)d->images * d->in_bytes);
	d->expected = read_file_exact(dir, "expected.bin", (size_t)d->images * d->out_bytes);
	d->labels = read_file_exact(dir, "labels.bin", d->images);
	return d->in && d->expected && d->labels ? 0 : -EINVAL;
}

/* Index of the first byte where @a and @b differ, @n when none does. */
static size_t first_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
	size_t i = 0;

	while (i < n && a[i] == b[i])
		i++;
	return i;
}

/* The class with the largest int32 accumulator (the first of equal ones). */
static uint32_t argmax_i32(const uint8_t *bytes, uint32_t classes)
{
	int32_t v[MAX_CLASSES];
	uint32_t best = 0, i;

	memcpy(v, bytes, classes * sizeof(int32_t));
	for (i = 1; i < classes; i++)
		if (v[i] > v[best])
			best = i;
	return best;
}

FIXTURE(digits) {
	struct rkaccel_device *dev;
	struct rkaccel_info info;
	struct rkaccel_model *model;
	struct rkaccel_ctx *ctx;
	struct digits_data d;
	uint8_t *out;
	const char *dir;
};

FIXTURE_SETUP(digits)
{
	char path[512], msg[256] = "";

	self->dir = getenv("RKACCEL_DIGITS_DIR") ? getenv("RKACCEL_DIGITS_DIR") : DIGITS_DIR;
	ASSERT_EQ(0, digits_load(self->dir, &self->d))
		TH_LOG("%s: no digits data (scripts/digits-data.sh writes it)", self->dir);
	snprintf(path, sizeof(path), "%s/digits.rkm", self->dir);
	ASSERT_EQ(0, rkaccel_model_load(path, &self->model, msg, sizeof(msg))) TH_LOG("%s", msg);
	self->out = malloc((size_t)self->d.images * self->d.out_bytes);
	ASSERT_NE(NULL, self->out);
	ASSERT_EQ(0, rkaccel_open(NULL, &self->dev));
	ASSERT_EQ(0, rkaccel_query(self->dev, &self->info));
}

FIXTURE_TEARDOWN(digits)
{
	rkaccel_ctx_destroy(self->ctx);
	rkaccel_model_free(self->model);
	rkaccel_close(self->dev);
	free(self->d.in);
	free(self->d.expected);
	free(self->d.labels);
	free(self->out);
}

/* One slice per core: 3 on RK3588, 2 on RK3576. */
static uint32_t digits_batch(const struct rkaccel_info *info)
{
	return info->num_cores < 3 ? info->num_cores : 3;
}

/*
 * Every digit through the NPU, @batch at a time; the last ones, fewer than
 * a batch, at a batch of their own size. *@cores collects the cores that
 * ran a slice.
 */
static int run_all(struct rkaccel_ctx *ctx, const struct digits_data *d, uint32_t batch,
		   uint8_t *out, uint32_t *cores)
{
	uint32_t first, b, s, core;
	int ret = 0;

	for (first = 0; first < d->images && !ret; first += b) {
		b = d->images - first < batch ? d->images - first : batch;
		if (b != rkaccel_ctx_batch(ctx))
			ret = rkaccel_ctx_set_batch(ctx, b);
		if (!ret)
			ret = rkaccel_ctx_run(ctx, d->in + (size_t)first * d->in_bytes,
					      (size_t)b * d->in_bytes,
					      out + (size_t)first * d->out_bytes,
					      (size_t)b * d->out_bytes);
		for (s = 0; s < b && !ret; s++)
			if (!rkaccel_ctx_slice_info(ctx, s, &core, NULL))
				*cores |= 1u << core;
	}
	return ret;
}

TEST_F(digits, every_slice_bit_exact)
{
	uint32_t batch = digits_batch(&self->info), cores = 0, bad = 0, correct = 0, i;
	const struct digits_data *d = &self->d;
	uint32_t tail = d->images % batch;
	size_t at;

	ASSERT_EQ(0, rkaccel_ctx_create(self->dev, self->model, 0, &self->ctx));
	ASSERT_EQ(0, rkaccel_ctx_set_batch(self->ctx, batch));
	EXPECT_EQ(batch - 1, rkaccel_ctx_copies(self->ctx));
	ASSERT_EQ((size_t)batch * d->in_bytes, rkaccel_ctx_input_size(self->ctx));
	ASSERT_EQ((size_t)batch * d->out_bytes, rkaccel_ctx_output_size(self->ctx));
	ASSERT_EQ(0, run_all(self->ctx, d, batch, self->out, &cores));
	for (i = 0; i < d->images; i++) {
		const uint8_t *npu = self->out + (size_t)i * d->out_bytes;
		const uint8_t *host = d->expected + (size_t)i * d->out_bytes;

		at = first_diff(npu, host, d->out_bytes);
		if (at < d->out_bytes && bad++ < 8)
			TH_LOG("image %u (run %u, slice %u): byte %zu is 0x%02x, the host executor's 0x%02x",
			       i, i / batch, i % batch, at, npu[at], host[at]);
		correct += argmax_i32(npu, d->classes) == d->labels[i];
	}
	EXPECT_EQ(0, bad) TH_LOG("%u of %u slices differ from the host executor", bad, d->images);
	/* bit-exact outputs rank the classes as the host's did */
	EXPECT_EQ(d->host_correct, correct);
	/* the batches were spread: every core ran slices */
	EXPECT_EQ(self->info.core_mask, cores);
	if (tail)
		ksft_print_msg("the last %u digit(s) ran at batch %u (%u is not a multiple of %u)\n",
			       tail, tail, d->images, batch);
	printf("digits: NPU top-1 %.2f%% on %u images (batch %u on %d cores), %s\n",
	       100.0 * correct / d->images, d->images, batch, __builtin_popcount(cores),
	       bad ? "NOT bit-exact with the host executor" :
		     "every slice bit-exact with the host executor");
	fflush(stdout);
}

TEST_HARNESS_MAIN
