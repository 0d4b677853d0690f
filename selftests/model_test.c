// SPDX-License-Identifier: GPL-2.0-only
/*
 * The model file format and validation (lib/model/model.c). Needs no device.
 * Offsets below are those of Documentation/model-format.rst, written out
 * again here so that the test checks the library against the spec.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "rkaccel.h"
#include "file_bytes.h"

#define HDR		64
#define REC		64
#define H_MAJOR		4
#define H_MINOR		6
#define H_HEADER_SIZE	8
#define H_RECORD_SIZE	12
#define H_FLAGS		16
#define H_ROWS		20
#define H_NUM_LAYERS	24
#define H_FILE_SIZE	32
#define H_CHECKSUM	FILE_CHECKSUM_OFF
#define R_IN		0
#define R_OUT		4
#define R_FLAGS		8
#define R_IN_ZP		12
#define R_OUT_ZP	16
#define R_IN_SCALE	20
#define R_W_SCALE	24
#define R_OUT_SCALE	28
#define R_W_OFF		32
#define R_W_SIZE	40
#define R_B_OFF		48
#define R_B_SIZE	56

/* --- helpers (the CRC-32, LE access and hash: file_bytes.h) ------------- */

static float f32(uint32_t bits)
{
	float f;

	memcpy(&f, &bits, sizeof(f));
	return f;
}

static uint32_t bits32(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

/* A random model serialized: *img (free()) of *len bytes. */
static int make_file(uint32_t seed, uint32_t rows, uint32_t n, const uint32_t *features,
		     uint32_t flags_last, uint8_t **img, size_t *len)
{
	struct rkaccel_model *m;
	void *buf;
	int ret;

	ret = rkaccel_model_random(seed, rows, n, features, flags_last, &m);
	if (ret)
		return ret;
	ret = rkaccel_model_serialize(rkaccel_model_desc(m), &buf, len);
	rkaccel_model_free(m);
	if (!ret)
		*img = buf;
	return ret;
}

static int descs_equal(const struct rkaccel_model_desc *a, const struct rkaccel_model_desc *b)
{
	if (a->rows != b->rows || a->num_layers != b->num_layers)
		return 0;
	for (uint32_t i = 0; i < a->num_layers; i++) {
		const struct rkaccel_layer_desc *x = &a->layers[i], *y = &b->layers[i];

		if (x->in_features != y->in_features || x->out_features != y->out_features ||
		    x->flags != y->flags || x->in_zero_point != y->in_zero_point ||
		    x->out_zero_point != y->out_zero_point ||
		    bits32(x->in_scale) != bits32(y->in_scale) ||
		    bits32(x->weight_scale) != bits32(y->weight_scale) ||
		    bits32(x->out_scale) != bits32(y->out_scale) ||
		    memcmp(x->weights, y->weights, (size_t)x->in_features * x->out_features) ||
		    memcmp(x->bias, y->bias, x->out_features * sizeof(int32_t)))
			return 0;
	}
	return 1;
}

/* --- CRC and determinism ------------------------------------------------- */

TEST(crc32_check_value)
{
	EXPECT_EQ(0xCBF43926u, crc32_bitwise((const uint8_t *)"123456789", 9));
}

/*
 * The generator must give the same bytes on every architecture: these hashes
 * were computed once (amd64) and are checked on amd64 and arm64 alike.
 */
TEST(random_deterministic)
{
	static const uint32_t f1[] = { 64, 32, 10 };
	static const uint32_t f2[] = { 300, 7, 129, 1 };
	static const struct {
		uint32_t seed, rows, n;
		const uint32_t *features;
		uint32_t flags;
		uint64_t hash;
		size_t len;
	} cases[] = {
		{ 1, 4, 2, f1, 0, 0xe05049a0a51cdcf2ull, 2728 },
		{ 1, 4, 2, f1, RKACCEL_LAYER_RELU, 0x6e14979227a2a700ull, 2728 },
		{ 0xdeadbeef, 65536, 3, f2, RKACCEL_LAYER_OUT_INT32, 0x01cbf1e3f6362ce8ull, 4164 },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		uint8_t *a, *b;
		size_t la, lb;

		ASSERT_EQ(0, make_file(cases[c].seed, cases[c].rows, cases[c].n,
				       cases[c].features, cases[c].flags, &a, &la));
		ASSERT_EQ(0, make_file(cases[c].seed, cases[c].rows, cases[c].n,
				       cases[c].features, cases[c].flags, &b, &lb));
		ASSERT_EQ(la, lb);
		EXPECT_EQ(0, memcmp(a, b, la)) TH_LOG("same seed, different bytes");
		printf("# case %zu: %zu bytes, fnv1a64 0x%016llx\n", c, la,
		       (unsigned long long)fnv1a64(a, la));
		EXPECT_EQ(cases[c].len, la);
		EXPECT_EQ(cases[c].hash, fnv1a64(a, la)) TH_LOG("case %zu", c);
		free(b);
		ASSERT_EQ(0, make_file(cases[c].seed + 1, cases[c].rows, cases[c].n,
				       cases[c].features, cases[c].flags, &b, &lb));
		EXPECT_NE(0, memcmp(a, b, la)) TH_LOG("seed ignored");
		free(a);
		free(b);
	}
}

TEST(random_params)
{
	static const uint32_t f[] = { 64, 32, 16, 10 };
	const struct rkaccel_model_desc *d;
	struct rkaccel_model *m;

	ASSERT_EQ(0, rkaccel_model_random(7, 3, 3, f, RKACCEL_LAYER_OUT_INT32, &m));
	d = rkaccel_model_desc(m);
	ASSERT_EQ(3, d->rows);
	ASSERT_EQ(3, d->num_layers);
	EXPECT_EQ(0, rkaccel_model_validate(d, NULL, 0));
	for (uint32_t i = 0; i < 3; i++) {
		const struct rkaccel_layer_desc *l = &d->layers[i];

		EXPECT_EQ(f[i], l->in_features);
		EXPECT_EQ(f[i + 1], l->out_features);
		EXPECT_EQ(i < 2 ? RKACCEL_LAYER_RELU : RKACCEL_LAYER_OUT_INT32, l->flags);
		EXPECT_EQ(0, (uintptr_t)l->weights % 64);
		EXPECT_EQ(0, (uintptr_t)l->bias % 64);
		for (uint32_t n = 0; n < l->out_features; n++) {
			EXPECT_TRUE(l->bias[n] >= -4096 && l->bias[n] <= 4096);
		}
		EXPECT_TRUE(l->in_zero_point >= -16 && l->in_zero_point <= 16);
	}
	/* OUT_INT32: out_scale is the accumulator scale, exactly */
	EXPECT_EQ(0, d->layers[2].out_zero_point);
	EXPECT_EQ(bits32(d->layers[2].in_scale * d->layers[2].weight_scale),
		  bits32(d->layers[2].out_scale));
	rkaccel_model_free(m);
}

static long round_half_away(double x)
{
	return (long)(x < 0 ? x - 0.5 : x + 0.5);
}

/* Generated scales keep a forward pass mostly inside the int8 range. */
TEST(random_not_saturated)
{
	static const uint32_t f[] = { 256, 128, 64, 64, 64, 32 };
	const struct rkaccel_model_desc *d;
	struct rkaccel_model *m;
	int32_t in[256], out[256];
	unsigned int total = 0, saturated = 0, distinct = 0;
	long lo = 127, hi = -128;
	uint32_t x = 12345;
	int seen[256] = { 0 };

	ASSERT_EQ(0, rkaccel_model_random(99, 1, 5, f, 0, &m));
	d = rkaccel_model_desc(m);
	for (int k = 0; k < 256; k++) {
		x = x * 1103515245u + 12345u;
		in[k] = (int32_t)((x >> 16) & 0xff) - 128;
	}
	for (uint32_t i = 0; i < d->num_layers; i++) {
		const struct rkaccel_layer_desc *l = &d->layers[i];
		double mult = (double)l->in_scale * l->weight_scale / l->out_scale;

		for (uint32_t n = 0; n < l->out_features; n++) {
			int64_t acc = l->bias[n];
			long q;

			for (uint32_t k = 0; k < l->in_features; k++)
				acc += (int64_t)(in[k] - l->in_zero_point) *
				       l->weights[(size_t)n * l->in_features + k];
			q = round_half_away((double)acc * mult) + l->out_zero_point;
			if (l->flags & RKACCEL_LAYER_RELU && q < l->out_zero_point)
				q = l->out_zero_point;
			if (q < -128 || q > 127)
				saturated++;
			q = q < -128 ? -128 : q > 127 ? 127 : q;
			out[n] = (int32_t)q;
			total++;
			if (i == d->num_layers - 1) {
				distinct += !seen[q + 128]++;
				lo = q < lo ? q : lo;
				hi = q > hi ? q : hi;
			}
		}
		memcpy(in, out, l->out_features * sizeof(int32_t));
	}
	TH_LOG("%u of %u outputs saturated, %u distinct final values in %ld..%ld",
	       saturated, total, distinct, lo, hi);
	EXPECT_LT(saturated * 10, total) TH_LOG("more than 10%% saturated");
	EXPECT_GE(distinct, 16) TH_LOG("outputs collapsed");
	rkaccel_model_free(m);
}

TEST(random_bad_args)
{
	static const uint32_t f[] = { 8, 8, 8 };
	static const uint32_t zero[] = { 8, 0, 8 };
	static const uint32_t big[] = { 8, 32769 };
	struct rkaccel_model *m = NULL;

	EXPECT_EQ(-EINVAL, rkaccel_model_random(1, 1, 2, NULL, 0, &m));
	EXPECT_EQ(-EINVAL, rkaccel_model_random(1, 1, 2, f, 0, NULL));
	EXPECT_EQ(-EINVAL, rkaccel_model_random(1, 1, 0, f, 0, &m));
	/* refused before @f is read past its 3 entries */
	EXPECT_EQ(-EINVAL, rkaccel_model_random(1, 1, RKACCEL_MODEL_MAX_MEM_LAYERS + 1, f, 0,
						&m));
	EXPECT_EQ(-EINVAL, rkaccel_model_random(1, 0, 2, f, 0, &m));
	EXPECT_EQ(-EINVAL, rkaccel_model_random(1, 65537, 2, f, 0, &m));
	EXPECT_EQ(-EINVAL, rkaccel_model_random(1, 1, 2, f, 0x4, &m));
	EXPECT_EQ(-EINVAL, rkaccel_model_random(1, 1, 2, zero, 0, &m));
	EXPECT_EQ(-EINVAL, rkaccel_model_random(1, 1, 1, big, 0, &m));
	EXPECT_EQ(NULL, m);
	ASSERT_EQ(0, rkaccel_model_random(1, 65536, 2, f,
					  RKACCEL_LAYER_RELU | RKACCEL_LAYER_OUT_INT32, &m));
	rkaccel_model_free(m);
	rkaccel_model_free(NULL);
}

/* --- round trip ---------------------------------------------------------- */

TEST(round_trip)
{
	static const uint32_t f[] = { 70, 33, 1, 65 };
	struct rkaccel_model *a, *b;
	void *buf, *buf2;
	size_t len, len2;
	char msg[256];

	ASSERT_EQ(0, rkaccel_model_random(5, 9, 3, f, RKACCEL_LAYER_RELU, &a));
	ASSERT_EQ(0, rkaccel_model_serialize(rkaccel_model_desc(a), &buf, &len));
	ASSERT_EQ(0, rkaccel_model_parse(buf, len, &b, msg, sizeof(msg))) TH_LOG("%s", msg);
	EXPECT_TRUE(descs_equal(rkaccel_model_desc(a), rkaccel_model_desc(b)));
	ASSERT_EQ(0, rkaccel_model_serialize(rkaccel_model_desc(b), &buf2, &len2));
	ASSERT_EQ(len, len2);
	EXPECT_EQ(0, memcmp(buf, buf2, len)) TH_LOG("serialization is not canonical");
	/* the parsed model owns its data */
	memset(buf, 0, len);
	EXPECT_TRUE(descs_equal(rkaccel_model_desc(a), rkaccel_model_desc(b)));
	free(buf);
	free(buf2);
	rkaccel_model_free(a);
	rkaccel_model_free(b);
}

/* A description written by hand, including the extreme values. */
TEST(round_trip_by_hand)
{
	static const int8_t w0[2 * 3] = { -128, 127, 0, 1, -1, 5 };
	static const int32_t b0[2] = { -(1 << 30), 1 << 30 };
	static const int8_t w1[1 * 2] = { 3, -4 };
	static const int32_t b1[1] = { 7 };
	const struct rkaccel_layer_desc layers[2] = {
		{ .in_features = 3, .out_features = 2, .flags = RKACCEL_LAYER_RELU,
		  .in_zero_point = -128, .out_zero_point = 127, .in_scale = 0.5f,
		  .weight_scale = 1e-30f, .out_scale = 3e38f, .weights = w0, .bias = b0 },
		{ .in_features = 2, .out_features = 1, .flags = RKACCEL_LAYER_OUT_INT32,
		  .in_zero_point = 127, .out_zero_point = 0, .in_scale = 3e38f,
		  .weight_scale = 0.25f, .out_scale = 1.0f, .weights = w1, .bias = b1 },
	};
	const struct rkaccel_model_desc desc = { .rows = 65536, .num_layers = 2,
						 .layers = layers };
	const struct rkaccel_model_desc *d;
	struct rkaccel_model *m;
	uint8_t *img;
	void *buf;
	size_t len;
	char msg[256];

	ASSERT_EQ(0, rkaccel_model_validate(&desc, msg, sizeof(msg))) TH_LOG("%s", msg);
	ASSERT_EQ(0, rkaccel_model_serialize(&desc, &buf, &len));
	img = buf;
	/* the documented layout: header, 2 records, w0 @192, b0 @256, w1 @320, b1 @384 */
	EXPECT_EQ(0, memcmp(img, "RKML", 4));
	EXPECT_EQ(1, img[H_MAJOR]);
	EXPECT_EQ(0, img[H_MINOR]);
	EXPECT_EQ(388, len);
	EXPECT_EQ(len, rd64(img + H_FILE_SIZE));
	EXPECT_EQ(192, rd64(img + HDR + R_W_OFF));
	EXPECT_EQ(256, rd64(img + HDR + R_B_OFF));
	EXPECT_EQ(320, rd64(img + HDR + REC + R_W_OFF));
	EXPECT_EQ(384, rd64(img + HDR + REC + R_B_OFF));
	EXPECT_EQ(0x3f000000u, rd32(img + HDR + R_IN_SCALE));
	EXPECT_EQ((uint32_t)-128, rd32(img + HDR + R_IN_ZP));
	EXPECT_EQ((uint32_t)-(1 << 30), rd32(img + 256));
	EXPECT_EQ(0x80, img[192]);
	EXPECT_EQ(0, memcmp(img + 192, w0, sizeof(w0)));

	ASSERT_EQ(0, rkaccel_model_parse(buf, len, &m, msg, sizeof(msg))) TH_LOG("%s", msg);
	d = rkaccel_model_desc(m);
	EXPECT_TRUE(descs_equal(&desc, d));
	rkaccel_model_free(m);
	free(buf);
}

TEST(save_load)
{
	static const uint32_t f[] = { 16, 4 };
	char path[] = "/tmp/model_test.XXXXXX";
	struct rkaccel_model *a, *b;
	char msg[256];
	int fd;

	fd = mkstemp(path);
	ASSERT_LE(0, fd);
	close(fd);
	ASSERT_EQ(0, rkaccel_model_random(3, 2, 1, f, 0, &a));
	ASSERT_EQ(0, rkaccel_model_save(rkaccel_model_desc(a), path));
	ASSERT_EQ(0, rkaccel_model_load(path, &b, msg, sizeof(msg))) TH_LOG("%s", msg);
	EXPECT_TRUE(descs_equal(rkaccel_model_desc(a), rkaccel_model_desc(b)));
	rkaccel_model_free(b);
	/* an empty file */
	ASSERT_EQ(0, truncate(path, 0));
	b = NULL;
	EXPECT_EQ(-EINVAL, rkaccel_model_load(path, &b, msg, sizeof(msg)));
	EXPECT_NE(NULL, strstr(msg, "shorter than")) TH_LOG("%s", msg);
	EXPECT_EQ(NULL, b);
	/* too large to be a model: refused before reading (a sparse file) */
	ASSERT_EQ(0, truncate(path, (off_t)RKACCEL_MODEL_MAX_FILE_SIZE + 1));
	EXPECT_EQ(-EFBIG, rkaccel_model_load(path, &b, msg, sizeof(msg)));
	EXPECT_NE(NULL, strstr(msg, "more than the limit")) TH_LOG("%s", msg);
	EXPECT_EQ(NULL, b);
	unlink(path);
	rkaccel_model_free(a);
}

TEST(load_missing)
{
	struct rkaccel_model *m = NULL;
	char msg[256] = "";

	EXPECT_EQ(-ENOENT, rkaccel_model_load("/nonexistent/model.rkml", &m, msg, sizeof(msg)));
	EXPECT_NE(NULL, strstr(msg, "/nonexistent/model.rkml")) TH_LOG("%s", msg);
	EXPECT_EQ(NULL, m);
	EXPECT_EQ(-EINVAL, rkaccel_model_load("/", &m, msg, sizeof(msg)));
	EXPECT_EQ(-EINVAL, rkaccel_model_load(NULL, &m, NULL, 0));
	EXPECT_EQ(-ENOENT, rkaccel_model_load("/nonexistent", &m, NULL, 0));
	EXPECT_EQ(-EINVAL, rkaccel_model_parse(NULL, 0, &m, msg, 1));
	EXPECT_EQ(0, msg[0]);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * A FIFO with no writer (or reader) is refused at once: open(2) without
 * O_NONBLOCK would wait for a peer forever. The alarm ends a test that
 * blocks (SIGALRM kills it and the harness reports the failure).
 */
TEST(fifo_refused_at_once)
{
	static const uint32_t f[] = { 4, 4 };
	char dir[] = "/tmp/model_test.XXXXXX", path[64], msg[256] = "";
	struct rkaccel_model *m = NULL, *g;
	double t0;

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fifo", dir);
	ASSERT_EQ(0, mkfifo(path, 0600));
	ASSERT_EQ(0, rkaccel_model_random(1, 1, 1, f, 0, &g));
	alarm(10);
	t0 = now_s();
	EXPECT_EQ(-EINVAL, rkaccel_model_load(path, &m, msg, sizeof(msg)));
	EXPECT_NE(NULL, strstr(msg, "not a regular file (a FIFO)")) TH_LOG("%s", msg);
	EXPECT_EQ(0, strncmp(msg, path, strlen(path))) TH_LOG("%s", msg);
	EXPECT_EQ(NULL, m);
	EXPECT_EQ(-ENXIO, rkaccel_model_save(rkaccel_model_desc(g), path));
	EXPECT_GT(2.0, now_s() - t0);
	alarm(0);
	unlink(path);
	rmdir(dir);
	rkaccel_model_free(g);
}

/* Every message of rkaccel_model_load() starts with the path, parse errors too. */
TEST(load_message_names_file)
{
	char path[] = "/tmp/model_test.XXXXXX", msg[256] = "";
	struct rkaccel_model *m = NULL;
	int fd;

	fd = mkstemp(path);
	ASSERT_LE(0, fd);
	ASSERT_EQ(8, write(fd, "garbage\n", 8));
	close(fd);
	EXPECT_EQ(-EINVAL, rkaccel_model_load(path, &m, msg, sizeof(msg)));
	EXPECT_EQ(0, strncmp(msg, path, strlen(path))) TH_LOG("%s", msg);
	EXPECT_NE(NULL, strstr(msg, "shorter than")) TH_LOG("%s", msg);
	unlink(path);
}

TEST(save_bad_path)
{
	static const uint32_t f[] = { 4, 4 };
	struct rkaccel_model *m;

	ASSERT_EQ(0, rkaccel_model_random(1, 1, 1, f, 0, &m));
	EXPECT_EQ(-ENOENT, rkaccel_model_save(rkaccel_model_desc(m), "/nonexistent/x"));
	EXPECT_EQ(-EINVAL, rkaccel_model_save(rkaccel_model_desc(m), NULL));
	EXPECT_EQ(-EINVAL, rkaccel_model_save(NULL, "/tmp/never"));
	rkaccel_model_free(m);
}

/* --- damaged files ------------------------------------------------------- */

/* Every prefix, in a buffer of exactly that size: rejected, no read past it. */
TEST(truncated)
{
	static const uint32_t f[] = { 40, 20, 3 };
	struct rkaccel_model *m = NULL;
	uint8_t *img, *cut;
	size_t len;
	char msg[256];

	ASSERT_EQ(0, make_file(11, 2, 2, f, 0, &img, &len));
	for (size_t n = 0; n < len; n++) {
		int ret;

		cut = malloc(n ? n : 1);
		ASSERT_NE(NULL, cut);
		memcpy(cut, img, n);
		msg[0] = '\0';
		ret = rkaccel_model_parse(cut, n, &m, msg, sizeof(msg));
		free(cut);
		ASSERT_EQ(-EINVAL, ret) TH_LOG("length %zu accepted", n);
		ASSERT_NE(0, msg[0]);
		ASSERT_TRUE(strstr(msg, "truncated") || strstr(msg, "shorter than"))
			TH_LOG("length %zu: %s", n, msg);
		ASSERT_EQ(NULL, m);
	}
	/* one byte too many */
	cut = calloc(1, len + 1);
	ASSERT_NE(NULL, cut);
	memcpy(cut, img, len);
	EXPECT_EQ(-EINVAL, rkaccel_model_parse(cut, len + 1, &m, msg, sizeof(msg)));
	EXPECT_NE(NULL, strstr(msg, "trailing")) TH_LOG("%s", msg);
	free(cut);
	free(img);
}

/* Every single-byte change of the header and the records is caught. */
TEST(corrupt_header_and_records)
{
	static const uint32_t f[] = { 40, 20, 3 };
	static const uint8_t xors[] = { 0x01, 0x02, 0x10, 0x80, 0xff };
	struct rkaccel_model *m = NULL;
	size_t len, end = HDR + 2 * REC;
	unsigned int caught_crc = 0;
	uint8_t *img;
	char msg[256];

	ASSERT_EQ(0, make_file(12, 2, 2, f, 0, &img, &len));
	for (size_t i = 0; i < end; i++) {
		for (size_t x = 0; x < sizeof(xors); x++) {
			int ret;

			img[i] ^= xors[x];
			msg[0] = '\0';
			ret = rkaccel_model_parse(img, len, &m, msg, sizeof(msg));
			img[i] ^= xors[x];
			ASSERT_NE(0, ret) TH_LOG("byte %zu ^ 0x%02x accepted", i, xors[x]);
			ASSERT_TRUE(ret == -EINVAL || ret == -EBADMSG || ret == -ENOTSUP);
			ASSERT_NE(0, msg[0]);
			ASSERT_EQ(NULL, m);
			caught_crc += ret == -EBADMSG;
		}
	}
	EXPECT_LT(end * 5 / 2, caught_crc) TH_LOG("most should fail the checksum");
	free(img);
}

TEST(corrupt_data)
{
	static const uint32_t f[] = { 40, 20, 3 };
	struct rkaccel_model *m = NULL;
	size_t len;
	uint8_t *img;
	char msg[256];

	ASSERT_EQ(0, make_file(13, 2, 2, f, 0, &img, &len));
	for (size_t i = HDR + 2 * REC; i < len; i++) {
		img[i] ^= 0x01;
		ASSERT_EQ(-EBADMSG, rkaccel_model_parse(img, len, &m, msg, sizeof(msg)))
			TH_LOG("byte %zu", i);
		img[i] ^= 0x01;
		ASSERT_NE(NULL, strstr(msg, "checksum"));
	}
	ASSERT_EQ(0, rkaccel_model_parse(img, len, &m, msg, sizeof(msg)));
	rkaccel_model_free(m);
	free(img);
}

/*
 * Fields edited with a correct checksum: the field checks alone must name the
 * problem. Each case sets one 32- or 64-bit field of the header or a layer
 * record of a 2-layer file (layer 0: 8 -> 4, layer 1: 4 -> 2).
 */
struct edit {
	const char *name;
	size_t off;		/* from the file start */
	int width;		/* 16, 32 or 64 */
	uint64_t val;
	int err;
	const char *words;	/* expected in the message */
};

#define L(n, field)	(HDR + (n) * REC + (field))

/* @img with @ed written into @copy (CRC fixed) is refused, the field named. */
static void expect_edit_refused(struct __test_metadata *_metadata, const uint8_t *img,
				uint8_t *copy, size_t len, const struct edit *ed)
{
	struct rkaccel_model *m = NULL;
	char msg[256] = "";
	int ret;

	memcpy(copy, img, len);
	if (ed->width == 16)
		wr16(copy + ed->off, (uint16_t)ed->val);
	else if (ed->width == 32)
		wr32(copy + ed->off, (uint32_t)ed->val);
	else
		wr64(copy + ed->off, ed->val);
	fix_crc(copy, len);
	ret = rkaccel_model_parse(copy, len, &m, msg, sizeof(msg));
	EXPECT_EQ(ed->err, ret) TH_LOG("%s: %s", ed->name, msg);
	EXPECT_NE(NULL, strstr(msg, ed->words))
		TH_LOG("%s: \"%s\" lacks \"%s\"", ed->name, msg, ed->words);
	EXPECT_EQ(NULL, m);
	rkaccel_model_free(m);
}

static const struct edit edits[] = {
	{ "magic", 0, 32, 0x4c4d4b53, -EINVAL, "magic" },
	{ "major 3", H_MAJOR, 16, 3, -ENOTSUP, "newer" },
	{ "major 0", H_MAJOR, 16, 0, -EINVAL, "version" },
	{ "header_size", H_HEADER_SIZE, 32, 128, -EINVAL, "header_size" },
	{ "record_size", H_RECORD_SIZE, 32, 32, -EINVAL, "record_size" },
	{ "file_size huge", H_FILE_SIZE, 64, UINT64_MAX, -EINVAL, "truncated" },
	{ "file_size small", H_FILE_SIZE, 64, 64, -EINVAL, "trailing" },
	{ "header flags", H_FLAGS, 32, 1, -EINVAL, "header flags" },
	{ "reserved", 28, 32, 1, -EINVAL, "reserved" },
	{ "reserved 63", 60, 32, 1u << 24, -EINVAL, "reserved header byte 63" },
	{ "rows 0", H_ROWS, 32, 0, -EINVAL, "rows 0 out of range" },
	{ "rows big", H_ROWS, 32, 65537, -EINVAL, "rows 65537 out of range" },
	{ "layers 0", H_NUM_LAYERS, 32, 0, -EINVAL, "num_layers 0" },
	{ "layers 17", H_NUM_LAYERS, 32, 17, -EINVAL, "num_layers 17" },
	{ "layers huge", H_NUM_LAYERS, 32, UINT32_MAX, -EINVAL, "num_layers" },
	{ "layers 3", H_NUM_LAYERS, 32, 3, -EINVAL,
	  "layer 0: weights start at byte 192, inside the header and layer records (256" },
	{ "K 0", L(0, R_IN), 32, 0, -EINVAL, "layer 0: shape" },
	{ "N huge", L(1, R_OUT), 32, UINT32_MAX, -EINVAL, "layer 1: shape" },
	{ "K changed", L(1, R_IN), 32, 5, -EINVAL, "layer 1: weights size" },
	{ "flags", L(0, R_FLAGS), 32, 4, -EINVAL, "layer 0: unknown flags 0x4" },
	{ "flags top", L(1, R_FLAGS), 32, 0x80000001u, -EINVAL, "unknown flags 0x80000000" },
	{ "int32 not last", L(0, R_FLAGS), 32, RKACCEL_LAYER_OUT_INT32, -EINVAL,
	  "layer 0: flag OUT_INT32 is allowed on the last layer only" },
	{ "int32 zp", L(1, R_FLAGS), 32, RKACCEL_LAYER_OUT_INT32, -EINVAL,
	  "must be 0 with OUT_INT32" },
	{ "in zp", L(0, R_IN_ZP), 32, 128, -EINVAL, "in_zero_point 128 out of range" },
	{ "out zp", L(1, R_OUT_ZP), 32, (uint32_t)-129, -EINVAL,
	  "out_zero_point -129 out of range" },
	{ "zp chain", L(1, R_IN_ZP), 32, 100, -EINVAL,
	  "layer 1: in_zero_point 100 does not chain" },
	{ "scale chain", L(1, R_IN_SCALE), 32, 0x3f800000, -EINVAL,
	  "layer 1: in_scale 1 does not chain" },
	{ "nan", L(0, R_IN_SCALE), 32, 0x7fc00000, -EINVAL,
	  "layer 0: in_scale nan (bits 0x7fc00000) is not a positive" },
	{ "inf", L(0, R_W_SCALE), 32, 0x7f800000, -EINVAL, "weight_scale inf" },
	{ "negative", L(1, R_OUT_SCALE), 32, 0xbf800000, -EINVAL, "out_scale -1 " },
	{ "zero", L(1, R_W_SCALE), 32, 0, -EINVAL, "weight_scale 0 " },
	{ "minus zero", L(1, R_W_SCALE), 32, 0x80000000, -EINVAL, "weight_scale -0 " },
	{ "subnormal", L(0, R_OUT_SCALE), 32, 1, -EINVAL, "out_scale 1.4" },
	{ "w size", L(0, R_W_SIZE), 32, 31, -EINVAL, "layer 0: weights size 31 bytes, the shape needs 32" },
	{ "b size huge", L(1, R_B_SIZE), 64, UINT64_MAX, -EINVAL, "layer 1: bias size" },
	{ "w unaligned", L(0, R_W_OFF), 64, 193, -EINVAL, "offset 193 is not a multiple of 64" },
	{ "w in header", L(0, R_W_OFF), 64, 64, -EINVAL, "inside the header" },
	{ "w at 0", L(0, R_W_OFF), 64, 0, -EINVAL, "inside the header" },
	{ "w offset huge", L(0, R_W_OFF), 64, 0xffffffffffffffc0ull, -EINVAL,
	  "layer 0: weights end at byte 18446744073709551584, file has" },
	{ "b offset past end", L(1, R_B_OFF), 64, 1 << 20, -EINVAL, "layer 1: bias end at byte" },
	{ "overlap", L(0, R_B_OFF), 64, 192, -EINVAL,
	  "layer 0: bias (bytes 192..207) overlaps layer 0 weights" },
	{ "overlap later", L(1, R_W_OFF), 64, 256, -EINVAL, "layer 1: weights" },
};

TEST(bad_fields)
{
	static const uint32_t f[] = { 8, 4, 2 };
	uint8_t *img, *copy;
	size_t len;

	ASSERT_EQ(0, make_file(14, 2, 2, f, 0, &img, &len));
	/* the layout the offsets above assume */
	ASSERT_EQ(192, rd64(img + L(0, R_W_OFF)));
	ASSERT_EQ(256, rd64(img + L(0, R_B_OFF)));
	ASSERT_EQ(320, rd64(img + L(1, R_W_OFF)));
	ASSERT_EQ(384, rd64(img + L(1, R_B_OFF)));
	copy = malloc(len);
	ASSERT_NE(NULL, copy);

	for (size_t e = 0; e < sizeof(edits) / sizeof(edits[0]); e++)
		expect_edit_refused(_metadata, img, copy, len, &edits[e]);
	free(copy);
	free(img);
}

TEST(bad_bias_in_file)
{
	static const uint32_t f[] = { 8, 4 };
	struct rkaccel_model *m = NULL;
	uint8_t *img;
	size_t len;
	char msg[256];

	ASSERT_EQ(0, make_file(15, 1, 1, f, 0, &img, &len));
	wr32(img + rd64(img + L(0, R_B_OFF)) + 8, (1u << 30) + 1);
	fix_crc(img, len);
	EXPECT_EQ(-EINVAL, rkaccel_model_parse(img, len, &m, msg, sizeof(msg)));
	EXPECT_NE(NULL, strstr(msg, "layer 0: bias[2] = 1073741825 out of range")) TH_LOG("%s", msg);
	wr32(img + rd64(img + L(0, R_B_OFF)) + 8, (uint32_t)-(1 << 30));
	fix_crc(img, len);
	EXPECT_EQ(0, rkaccel_model_parse(img, len, &m, msg, sizeof(msg))) TH_LOG("%s", msg);
	EXPECT_EQ(-(1 << 30), rkaccel_model_desc(m)->layers[0].bias[2]);
	rkaccel_model_free(m);
	free(img);
}

/*
 * A newer minor version appends fields to the header and the records: this
 * reader must skip them. Rebuild the file with a 128-byte header and 96-byte
 * records, as version 1.1 might write it.
 */
TEST(newer_minor_accepted)
{
	static const uint32_t f[] = { 8, 4, 2 };
	struct rkaccel_model *a, *b = NULL;
	size_t len, len2, data = HDR + 2 * REC, data2;
	uint8_t *img, *img2;
	char msg[256];

	ASSERT_EQ(0, rkaccel_model_random(16, 2, 2, f, 0, &a));
	ASSERT_EQ(0, make_file(16, 2, 2, f, 0, &img, &len));
	data2 = 128 + 2 * 96;		/* 320, a multiple of 64 */
	len2 = len - data + data2;
	img2 = calloc(1, len2);
	ASSERT_NE(NULL, img2);
	memcpy(img2, img, HDR);
	memset(img2 + HDR, 0xa5, 128 - HDR);	/* fields unknown to 1.0 */
	for (int i = 0; i < 2; i++) {
		uint8_t *r = img2 + 128 + i * 96;

		memcpy(r, img + HDR + i * REC, REC);
		memset(r + REC, 0x5a, 96 - REC);
		wr64(r + R_W_OFF, rd64(r + R_W_OFF) - data + data2);
		wr64(r + R_B_OFF, rd64(r + R_B_OFF) - data + data2);
	}
	memcpy(img2 + data2, img + data, len - data);
	wr16(img2 + H_MINOR, 1);
	wr32(img2 + H_HEADER_SIZE, 128);
	wr32(img2 + H_RECORD_SIZE, 96);
	wr64(img2 + H_FILE_SIZE, len2);
	fix_crc(img2, len2);
	ASSERT_EQ(0, rkaccel_model_parse(img2, len2, &b, msg, sizeof(msg))) TH_LOG("%s", msg);
	EXPECT_TRUE(descs_equal(rkaccel_model_desc(a), rkaccel_model_desc(b)));
	rkaccel_model_free(b);

	/* the same extended sizes are not allowed to claim version 1.0 */
	wr16(img2 + H_MINOR, 0);
	fix_crc(img2, len2);
	EXPECT_EQ(-EINVAL, rkaccel_model_parse(img2, len2, &b, msg, sizeof(msg)));
	EXPECT_NE(NULL, strstr(msg, "header_size 128 wrong for version 1.0")) TH_LOG("%s", msg);
	/* nor absurd sizes in a 1.1 file */
	wr16(img2 + H_MINOR, 1);
	wr32(img2 + H_RECORD_SIZE, UINT32_MAX);
	fix_crc(img2, len2);
	EXPECT_EQ(-EINVAL, rkaccel_model_parse(img2, len2, &b, msg, sizeof(msg)));
	EXPECT_NE(NULL, strstr(msg, "record_size 4294967295 wrong")) TH_LOG("%s", msg);
	free(img);
	free(img2);
	rkaccel_model_free(a);
}

/* Random multi-byte damage with a valid checksum: never a crash. */
TEST(fuzz_fields)
{
	static const uint32_t f[] = { 8, 4, 2 };
	unsigned int accepted = 0;
	uint8_t *img, *copy;
	uint64_t s = 42;
	size_t len;

	ASSERT_EQ(0, make_file(17, 2, 2, f, 0, &img, &len));
	copy = malloc(len);
	ASSERT_NE(NULL, copy);
	for (int it = 0; it < 20000; it++) {
		struct rkaccel_model *m = NULL;
		char msg[128];
		int n, ret;

		memcpy(copy, img, len);
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		n = 1 + (int)(s >> 60) % 4;
		for (int k = 0; k < n; k++) {
			s = s * 6364136223846793005ull + 1442695040888963407ull;
			/* mostly header and records, sometimes anywhere */
			copy[(s >> 33) % ((s >> 20) & 1 ? HDR + 2 * REC : len)] = (uint8_t)(s >> 8);
		}
		fix_crc(copy, len);
		ret = rkaccel_model_parse(copy, len, &m, msg, sizeof(msg));
		if (!ret) {
			void *buf;
			size_t l;

			accepted++;
			ASSERT_EQ(0, rkaccel_model_validate(rkaccel_model_desc(m), NULL, 0));
			ASSERT_EQ(0, rkaccel_model_serialize(rkaccel_model_desc(m), &buf, &l));
			free(buf);
			rkaccel_model_free(m);
		} else {
			ASSERT_NE(0, msg[0]);
			ASSERT_EQ(NULL, m);
		}
	}
	TH_LOG("%u of 20000 damaged files still valid", accepted);
	free(copy);
	free(img);
}

/* --- validation of descriptions ------------------------------------------ */

FIXTURE(desc) {
	int8_t w[3][64];
	int32_t b[3][8];
	struct rkaccel_layer_desc l[3];
	struct rkaccel_model_desc d;
	char msg[256];
};

/* 3 layers 8 -> 8 -> 8 -> 8, all valid. */
FIXTURE_SETUP(desc)
{
	for (int i = 0; i < 3; i++) {
		self->l[i] = (struct rkaccel_layer_desc) {
			.in_features = 8, .out_features = 8,
			.flags = i < 2 ? RKACCEL_LAYER_RELU : 0,
			.in_zero_point = i - 1, .out_zero_point = i,
			.in_scale = 0.5f / (float)(i + 1), .weight_scale = 0.01f,
			.out_scale = 0.5f / (float)(i + 2),
			.weights = self->w[i], .bias = self->b[i],
		};
	}
	self->d = (struct rkaccel_model_desc) { .rows = 4, .num_layers = 3, .layers = self->l };
	ASSERT_EQ(0, rkaccel_model_validate(&self->d, self->msg, sizeof(self->msg)))
		TH_LOG("%s", self->msg);
	EXPECT_EQ(0, self->msg[0]);
}

FIXTURE_TEARDOWN(desc)
{
}

/* Expect -EINVAL with @words in the message, from validate and serialize. */
#define EXPECT_INVALID(words) do {						\
		void *buf_ = NULL;						\
		size_t len_ = 0;						\
		self->msg[0] = '\0';						\
		EXPECT_EQ(-EINVAL, rkaccel_model_validate(&self->d, self->msg,	\
							  sizeof(self->msg)));	\
		EXPECT_NE(NULL, strstr(self->msg, words))			\
			TH_LOG("\"%s\" lacks \"%s\"", self->msg, words);	\
		EXPECT_EQ(-EINVAL, rkaccel_model_serialize(&self->d, &buf_, &len_)); \
		EXPECT_EQ(NULL, buf_);						\
	} while (0)

TEST_F(desc, chain_features)
{
	self->l[1].out_features = 7;
	EXPECT_INVALID("layer 2: in_features 8 does not chain: layer 1 has out_features 7");
}

TEST_F(desc, chain_zero_point)
{
	self->l[2].in_zero_point = 5;
	EXPECT_INVALID("layer 2: in_zero_point 5 does not chain: layer 1 has out_zero_point 1");
}

TEST_F(desc, chain_scale)
{
	self->l[1].in_scale = 0.25000003f;
	EXPECT_INVALID("layer 1: in_scale 0.25000003 does not chain: layer 0 has out_scale 0.25");
}

TEST_F(desc, flags)
{
	self->l[1].flags = 0x8;
	EXPECT_INVALID("layer 1: unknown flags 0x8");
	self->l[1].flags = RKACCEL_LAYER_OUT_INT32;
	EXPECT_INVALID("layer 1: flag OUT_INT32 is allowed on the last layer only");
	self->l[1].flags = 0;
	self->l[2].flags = RKACCEL_LAYER_OUT_INT32;
	EXPECT_INVALID("layer 2: out_zero_point 2 must be 0 with OUT_INT32");
	self->l[2].out_zero_point = 0;
	self->l[2].flags = RKACCEL_LAYER_OUT_INT32 | RKACCEL_LAYER_RELU;
	EXPECT_EQ(0, rkaccel_model_validate(&self->d, self->msg, sizeof(self->msg)));
}

TEST_F(desc, zero_sizes)
{
	self->l[0].in_features = 0;
	EXPECT_INVALID("layer 0: in_features 0 out of range 1..32768");
	self->l[0].in_features = 8;
	self->l[2].out_features = 0;
	EXPECT_INVALID("layer 2: out_features 0 out of range");
	self->l[2].out_features = 8;
	self->d.rows = 0;
	EXPECT_INVALID("rows 0 out of range 1..65536");
	self->d.rows = 1;
	self->d.num_layers = 0;
	EXPECT_INVALID("num_layers 0 out of range 1..4096");
}

TEST_F(desc, huge_sizes)
{
	static int32_t bias[8192];
	struct rkaccel_layer_desc big[5];

	self->l[0].in_features = 32769;
	EXPECT_INVALID("layer 0: in_features 32769 out of range");
	self->l[0].in_features = UINT32_MAX;
	EXPECT_INVALID("in_features 4294967295 out of range");
	self->l[0].in_features = 8;
	self->d.rows = 65537;
	EXPECT_INVALID("rows 65537");
	self->d.rows = UINT32_MAX;
	EXPECT_INVALID("rows 4294967295");
	self->d.rows = 1;
	self->d.num_layers = RKACCEL_MODEL_MAX_MEM_LAYERS + 1;
	EXPECT_INVALID("num_layers 4097");

	/* 5 x 64 MiB of weights: over the 256 MiB limit, never read */
	for (int i = 0; i < 5; i++) {
		big[i] = self->l[0];
		big[i].in_features = big[i].out_features = 8192;
		big[i].flags = 0;
		big[i].in_zero_point = big[i].out_zero_point = 0;
		big[i].in_scale = big[i].out_scale = 1.0f;
		big[i].bias = bias;
	}
	self->d.layers = big;
	self->d.num_layers = 4;
	EXPECT_EQ(0, rkaccel_model_validate(&self->d, NULL, 0));
	self->d.num_layers = 5;
	EXPECT_INVALID("total weights 335544320 bytes exceed the limit of 268435456");
}

TEST_F(desc, scales)
{
	static const struct { uint32_t bits; const char *words; } bad[] = {
		{ 0x7fc00000, "nan" }, { 0xffc00000, "nan" }, { 0x7f800000, "inf" },
		{ 0xff800000, "-inf" }, { 0xbf000000, "-0.5" }, { 0x00000000, "0 (bits" },
		{ 0x80000000, "-0 (bits" }, { 0x007fffff, "bits 0x007fffff" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		float save = self->l[1].weight_scale;

		self->l[1].weight_scale = f32(bad[i].bits);
		EXPECT_INVALID("layer 1: weight_scale ");
		EXPECT_NE(NULL, strstr(self->msg, "is not a positive normal finite number"));
		EXPECT_NE(NULL, strstr(self->msg, bad[i].words)) TH_LOG("%s", self->msg);
		self->l[1].weight_scale = save;
	}
	self->l[0].in_scale = f32(0x7fc00000);
	EXPECT_INVALID("layer 0: in_scale nan");
	self->l[0].in_scale = 1.0f;
	self->l[2].out_scale = -1.0f;
	EXPECT_INVALID("layer 2: out_scale -1");
	/* smallest and largest normal numbers are fine */
	self->l[2].out_scale = f32(0x00800000);
	self->l[0].in_scale = f32(0x7f7fffff);
	EXPECT_EQ(0, rkaccel_model_validate(&self->d, self->msg, sizeof(self->msg)));
}

TEST_F(desc, zero_points)
{
	self->l[0].in_zero_point = -129;
	EXPECT_INVALID("layer 0: in_zero_point -129 out of range -128..127");
	self->l[0].in_zero_point = INT32_MIN;
	EXPECT_INVALID("in_zero_point -2147483648");
	self->l[0].in_zero_point = 0;
	self->l[2].out_zero_point = 128;
	EXPECT_INVALID("layer 2: out_zero_point 128 out of range");
}

TEST_F(desc, pointers)
{
	self->l[1].weights = NULL;
	EXPECT_INVALID("layer 1: weights is NULL");
	self->l[1].weights = self->w[1];
	self->l[2].bias = NULL;
	EXPECT_INVALID("layer 2: bias is NULL");
	self->l[2].bias = self->b[2];
	self->d.layers = NULL;
	EXPECT_INVALID("layers is NULL");
	EXPECT_EQ(-EINVAL, rkaccel_model_validate(NULL, self->msg, sizeof(self->msg)));
	EXPECT_NE(NULL, strstr(self->msg, "NULL"));
	EXPECT_EQ(-EINVAL, rkaccel_model_serialize(NULL, NULL, NULL));
}

TEST_F(desc, bias_range)
{
	self->b[1][7] = INT32_MIN;
	EXPECT_INVALID("layer 1: bias[7] = -2147483648 out of range -1073741824..1073741824");
}

TEST_F(desc, short_message_buffer)
{
	char small[8];

	self->l[1].flags = 0x10;
	memset(small, 'x', sizeof(small));
	EXPECT_EQ(-EINVAL, rkaccel_model_validate(&self->d, small, sizeof(small)));
	EXPECT_STREQ("layer 1", small);
	EXPECT_EQ(-EINVAL, rkaccel_model_validate(&self->d, NULL, 100));
	EXPECT_EQ(-EINVAL, rkaccel_model_validate(&self->d, small, 0));
}

/* --- version 2.0: graphs ------------------------------------------------------ */

/* conv (per-channel), depthwise adding tensor 1, max pool, global average, fc. */
static const char small_net[] =
	"input 6x5x3\n"
	"conv 3x3 s2 c8 pc\n"
	"dw 3x3 s1\n"
	"add 1\n"
	"maxpool 2x2 s1\n"
	"avgpool global\n"
	"fc 4\n";

#define REC2		128
#define L2(n, field)	(HDR + (n) * REC2 + (field))

/* A graph is written as 2.0, parsed back to the same bytes; an MLP stays 1.0. */
TEST(v2_round_trip)
{
	static const uint32_t f[] = { 8, 4 };
	struct rkaccel_model *a, *b;
	size_t len, len2;
	void *img, *img2;
	char msg[256];

	ASSERT_EQ(0, rkaccel_model_from_text(3, small_net, &a, msg, sizeof(msg))) TH_LOG("%s", msg);
	ASSERT_EQ(0, rkaccel_model_serialize(rkaccel_model_desc(a), &img, &len));
	EXPECT_EQ(2, rd32((uint8_t *)img + H_MAJOR) & 0xffff);
	EXPECT_EQ(REC2, rd32((uint8_t *)img + H_RECORD_SIZE));
	ASSERT_EQ(0, rkaccel_model_parse(img, len, &b, msg, sizeof(msg))) TH_LOG("%s", msg);
	ASSERT_EQ(0, rkaccel_model_serialize(rkaccel_model_desc(b), &img2, &len2));
	ASSERT_EQ(len, len2);
	EXPECT_EQ(0, memcmp(img, img2, len));
	EXPECT_EQ(6, rkaccel_model_desc(b)->height);
	EXPECT_NE(NULL, rkaccel_model_desc(b)->layers[0].weight_scales);
	EXPECT_EQ(NULL, rkaccel_model_desc(b)->layers[2].weights);
	rkaccel_model_free(b);
	rkaccel_model_free(a);
	free(img);
	free(img2);

	ASSERT_EQ(0, rkaccel_model_random(1, 2, 1, f, 0, &a));
	ASSERT_EQ(0, rkaccel_model_serialize(rkaccel_model_desc(a), &img, &len));
	EXPECT_EQ(1, rd32((uint8_t *)img + H_MAJOR) & 0xffff);
	rkaccel_model_free(a);
	free(img);
}

/* Field by field: each broken 2.0 field is named in a one-line message. */
static const struct edit edits2[] = {
	{ "record_size", H_RECORD_SIZE, 32, 64, -EINVAL, "record_size 64 wrong for version 2.0" },
	{ "height", 44, 32, 7, -EINVAL, "height 7 x width 5 is not rows 30" },
	{ "reserved", 52, 32, 1, -EINVAL, "reserved header byte 52" },
	{ "op", L2(0, 64), 32, 9, -EINVAL, "layer 0: unknown op 9" },
	{ "kernel", L2(0, 68), 32, 12, -EINVAL, "layer 0: kernel 12x3 out of range 1..11" },
	{ "stride", L2(0, 76), 32, 5, -EINVAL, "layer 0: stride 5 out of range 1..4" },
	{ "pad", L2(0, 80), 32, 3, -EINVAL, "layer 0: padding 3,1,1,1" },
	{ "add later", L2(1, 96), 32, 5, -EINVAL, "layer 1: add_input 5 is not an earlier tensor" },
	{ "add shape", L2(1, 96), 32, 0, -EINVAL, "layer 1: add_input 0 is 6x5x3, the output 3x3x8" },
	{ "pool flags", L2(2, 8), 32, RKACCEL_LAYER_ADD, -EINVAL, "layer 2: flags 0x4 on a pool" },
	{ "global max", L2(2, 68), 64, 0, -EINVAL, "layer 2: max pooling needs a kernel" },
	{ "pool quant", L2(3, 16), 32, 99, -EINVAL, "layer 3: a pool keeps the quantization" },
	{ "fc kernel", L2(4, 68), 32, 1, -EINVAL, "layer 4: a fully connected layer has no kernel" },
	{ "reserved2", L2(0, 108), 32, 1, -EINVAL, "layer 0: reserved record bytes 100..111" },
	{ "reserved2 low", L2(1, 100), 32, 1, -EINVAL, "layer 1: reserved record bytes 100..111" },
	{ "scales size", L2(0, 120), 64, 4, -EINVAL,
	  "layer 0: weight_scales size 4 bytes, the shape needs 32" },
	{ "pool weights", L2(2, 40), 64, 8, -EINVAL, "layer 2: weights size 8 bytes, the shape needs 0" },
	{ "too small", L2(2, 68), 64, 0x700000007ull, -EINVAL,
	  "layer 2: the window does not fit the 3x3 input" },
};

TEST(v2_bad_fields)
{
	struct rkaccel_model *a;
	uint8_t *img, *copy;
	size_t len;
	char msg[256];

	ASSERT_EQ(0, rkaccel_model_from_text(3, small_net, &a, msg, sizeof(msg))) TH_LOG("%s", msg);
	ASSERT_EQ(0, rkaccel_model_serialize(rkaccel_model_desc(a), (void **)&img, &len));
	rkaccel_model_free(a);
	copy = malloc(len);
	ASSERT_NE(NULL, copy);
	for (size_t e = 0; e < sizeof(edits2) / sizeof(edits2[0]); e++)
		expect_edit_refused(_metadata, img, copy, len, &edits2[e]);
	/* a per-channel scale above the layer's weight_scale */
	memcpy(copy, img, len);
	wr32(copy + rd64(copy + L2(0, 112)), 0x4e6e6b28);	/* 1e9 */
	fix_crc(copy, len);
	EXPECT_EQ(-EINVAL, rkaccel_model_parse(copy, len, &a, msg, sizeof(msg)));
	EXPECT_NE(NULL, strstr(msg, "layer 0: weight_scales[0]")) TH_LOG("%s", msg);
	free(copy);
	free(img);
}

/* Descriptions: a bad line is named with its number. */
TEST(text_errors)
{
	static const struct {
		const char *text, *words;
	} cases[] = {
		{ "conv 3x3\n", "line 1: the first line must be 'input HxWxC'" },
		{ "input 8x8x3\nconv 3x3 s1 c4 wide\n", "line 2: unknown option 'wide'" },
		{ "input 8x8x3\nsoftmax\n", "line 2: unknown operation 'softmax'" },
		{ "input 8x8x3\nadd 0\n", "line 2: add follows a convolution" },
		{ "input 8x8x3\n# nothing\n", "no layers" },
		{ "input 16x16x3\nconv 12x12 c4\n", "layer 0: kernel 12x12 out of range" },
	};
	struct rkaccel_model *m = NULL;
	char msg[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		EXPECT_EQ(-EINVAL, rkaccel_model_from_text(1, cases[i].text, &m, msg, sizeof(msg)));
		EXPECT_NE(NULL, strstr(msg, cases[i].words)) TH_LOG("\"%s\" lacks \"%s\"", msg,
								     cases[i].words);
		EXPECT_EQ(NULL, m);
	}
}

TEST_HARNESS_MAIN
