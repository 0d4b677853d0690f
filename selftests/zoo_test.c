// SPDX-License-Identifier: GPL-2.0-only
/*
 * The network zoo (tools/zoo.h: MobileNetV1/V2, ResNet-18/50, SqueezeNet
 * 1.1, an inception block, a DenseNet block, VGG-16's fc6) on the NPU, one
 * variant per network. On the host, scripts/zoo-data.sh wrote each
 * network's three seeded input images and the graph reference's output
 * bytes for them (selftests/graph_ref.h), and zoo.txt with the model
 * files' CRC-32 and size; qemu-run.sh put them in /data/zoo. Here the test
 * writes the model file at the batch of the cores (3 on the RK3588, 2 on
 * the RK3576) from the same seed, checks that it is the file the host's
 * references are for, loads it, and runs it through librkaccel at that
 * batch across the cores: every slice must equal the host's bytes.
 * amd64 runs the networks at their full input size (224x224 for the whole
 * networks), arm64 at the small one (96x96), as zoo.txt lists them.
 *
 * A network the library's lowering refuses as "not compiled yet" (the
 * chain compiler before the general graph compiler of issue 26) is a SKIP
 * naming the reason; any other refusal or failure is a failure.
 * The tv_* variants run torchvision's MobileNetV2, ResNet-18 and
 * SqueezeNet 1.1 (fire modules: concats, ceil-mode max pools) as
 * rkaccel-convert made them from ONNX (seeded weights, batch norms on real
 * photos, int8 calibrated on 20 of them: scripts/tv-models.py,
 * scripts/tv-data.sh): the model files themselves come from the host
 * (tv_NAME-HxW-bB.rkml, with tv.txt, the inputs and the host int8
 * executor's outputs, graph_ref.h), at 224x224 on amd64 and 96x96 on
 * arm64 like the zoo; every slice must equal the host's bytes.
 *
 * RKACCEL_ZOO_DIR overrides /data/zoo. Full-size networks take the
 * simulator minutes: the list (selftests/zoo.list) raises max_job_ms and
 * the harness timeout is raised here.
 */

#include <sys/stat.h>

#include "kselftest_harness.h"
#include "file_bytes.h"
#include "rkaccel_test.h"
#include "zoo.h"

#define ZOO_DIR		"/data/zoo"
#define ZOO_TIMEOUT_S	1800

/* One line of zoo.txt. */
struct zoo_line {
	char name[32];
	uint32_t h, w;
	size_t in_bytes, out_bytes, size[4];	/* size[b]: the model file at batch b */
	uint32_t crc[4];
};

/*
 * The line for @name in @dir/@file: zoo.txt's "NAME HxW IN OUT CRC3 SIZE3
 * CRC2 SIZE2" or tv.txt's "tv_NAME HxW IN OUT" (@fields 9 or 5). The first
 * (full size) on amd64, the last on arm64.
 */
static int table_line(const char *dir, const char *file, int fields, const char *name,
		      struct zoo_line *out)
{
	struct zoo_line l = { 0 };
	char path[512], line[512];
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%31s %ux%u %zu %zu %x %zu %x %zu", l.name, &l.h, &l.w,
			   &l.in_bytes, &l.out_bytes, &l.crc[3], &l.size[3], &l.crc[2],
			   &l.size[2]) < fields || strcmp(l.name, name))
			continue;
#if defined(__aarch64__)
		*out = l;
		found = 1;
#else
		if (!found)
			*out = l;
		found = 1;
#endif
	}
	fclose(f);
	return found ? 0 : -ENOENT;
}

static int zoo_line(const char *dir, const char *name, struct zoo_line *out)
{
	return table_line(dir, "zoo.txt", 9, name, out);
}

static int tv_line(const char *dir, const char *name, struct zoo_line *out)
{
	return table_line(dir, "tv.txt", 5, name, out);
}

/* The CRC-32 field of a 3.0 file (header offset 40) and its size. */
static int file_crc(const char *path, uint32_t *crc, size_t *size)
{
	uint8_t h[44];
	struct stat st;
	FILE *f = fopen(path, "rb");
	int ok;

	if (!f)
		return -errno;
	ok = fread(h, 1, sizeof(h), f) == sizeof(h) && !fstat(fileno(f), &st);
	fclose(f);
	if (!ok)
		return -EIO;
	*crc = (uint32_t)h[40] | (uint32_t)h[41] << 8 | (uint32_t)h[42] << 16 |
	       (uint32_t)h[43] << 24;
	*size = (size_t)st.st_size;
	return 0;
}

FIXTURE(zoo) {
	struct rkaccel_device *dev;
	struct rkaccel_info info;
	struct rkaccel_graph *graph;
	struct rkaccel_model *model;
	struct rkaccel_ctx *ctx;
	uint8_t *in, *expected, *out;
	char path[256];
	bool slowed;	/* sim_task_ns raised for this run */
};

FIXTURE_VARIANT(zoo) {
	const char *name;
};

FIXTURE_VARIANT_ADD(zoo, mobilenetv1) { .name = "mobilenetv1" };
FIXTURE_VARIANT_ADD(zoo, mobilenetv2) { .name = "mobilenetv2" };
FIXTURE_VARIANT_ADD(zoo, resnet18) { .name = "resnet18" };
FIXTURE_VARIANT_ADD(zoo, resnet50) { .name = "resnet50" };
FIXTURE_VARIANT_ADD(zoo, squeezenet) { .name = "squeezenet" };
FIXTURE_VARIANT_ADD(zoo, inception) { .name = "inception" };
FIXTURE_VARIANT_ADD(zoo, densenet) { .name = "densenet" };
FIXTURE_VARIANT_ADD(zoo, vgg16head) { .name = "vgg16head" };
FIXTURE_VARIANT_ADD(zoo, lenet5) { .name = "lenet5" };
FIXTURE_VARIANT_ADD(zoo, tv_mobilenet_v2) { .name = "tv_mobilenet_v2" };
FIXTURE_VARIANT_ADD(zoo, tv_resnet18) { .name = "tv_resnet18" };
FIXTURE_VARIANT_ADD(zoo, tv_squeezenet) { .name = "tv_squeezenet" };

FIXTURE_SETUP(zoo)
{
	ASSERT_EQ(0, rkaccel_open(NULL, &self->dev));
	ASSERT_EQ(0, rkaccel_query(self->dev, &self->info));
}

FIXTURE_TEARDOWN(zoo)
{
	rkaccel_ctx_destroy(self->ctx);
	rkaccel_model_free(self->model);
	rkaccel_graph_free(self->graph);
	rkaccel_close(self->dev);
	if (self->slowed)
		rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, RKT_SIM_TASK_NS_DEFAULT);
	if (self->path[0])
		unlink(self->path);
	free(self->in);
	free(self->expected);
	free(self->out);
}

/* The model file of @l at @batch, written from the zoo's seed into @path. */
static int write_model(const struct zoo_line *l, uint32_t batch, const char *path, char *msg,
		       size_t len)
{
	struct zb b;
	int ret = zoo_build(l->name, batch, l->h, l->w, 1, &b);

	if (!ret)
		ret = rkaccel_graph_save(&b.desc, path);
	snprintf(msg, len, "%s", b.err ? b.msg : rkaccel_strerror(ret));
	zb_free(&b);
	return ret;
}

TEST_F_TIMEOUT(zoo, every_slice_bit_exact, ZOO_TIMEOUT_S)
{
	const char *dir = getenv("RKACCEL_ZOO_DIR") ? getenv("RKACCEL_ZOO_DIR") : ZOO_DIR;
	uint32_t batch = self->info.num_cores < 3 ? self->info.num_cores : 3, crc = 0, cores = 0;
	uint32_t bad = 0, core;
	struct rkaccel_program *prog = NULL;
	char name[96], model[512], msg[512] = "";
	struct zoo_line l;
	size_t size = 0;

	if (!strncmp(variant->name, "tv_", 3)) {
		ASSERT_EQ(0, tv_line(dir, variant->name, &l))
			TH_LOG("%s/tv.txt: no line for %s (scripts/tv-data.sh writes it)", dir,
			       variant->name);
	} else {
		ASSERT_EQ(0, zoo_line(dir, variant->name, &l))
			TH_LOG("%s/zoo.txt: no line for %s (scripts/zoo-data.sh writes it)", dir,
			       variant->name);
	}
	ASSERT_LE(2, batch);
	snprintf(name, sizeof(name), "%s-%ux%u.in", l.name, l.h, l.w);
	self->in = read_file_exact(dir, name, 3 * l.in_bytes);
	snprintf(name, sizeof(name), "%s-%ux%u.expected", l.name, l.h, l.w);
	self->expected = read_file_exact(dir, name, 3 * l.out_bytes);
	ASSERT_TRUE(self->in && self->expected);

	if (!strncmp(variant->name, "tv_", 3)) {
		/* converted on the host: the file itself, at this batch */
		snprintf(model, sizeof(model), "%s/%s-%ux%u-b%u.rkml", dir, l.name, l.h, l.w, batch);
		ASSERT_EQ(0, rkaccel_graph_load(model, &self->graph, msg, sizeof(msg)))
			TH_LOG("%s", msg);
	} else {
		/* the file the host's references are for, byte for byte (its CRC-32 and size) */
		snprintf(self->path, sizeof(self->path), "/tmp/zoo-%s-b%u.rkml", l.name, batch);
		ASSERT_EQ(0, write_model(&l, batch, self->path, msg, sizeof(msg))) TH_LOG("%s", msg);
		ASSERT_EQ(0, file_crc(self->path, &crc, &size));
		ASSERT_EQ(l.size[batch], size);
		ASSERT_EQ(l.crc[batch], crc)
			TH_LOG("%s is not the model of the host's references", self->path);
		ASSERT_EQ(0, rkaccel_graph_load(self->path, &self->graph, msg, sizeof(msg)))
			TH_LOG("%s", msg);
		unlink(self->path);
		self->path[0] = '\0';
	}
	ASSERT_EQ(batch, rkaccel_graph_desc(self->graph)->batch);

	if (rkaccel_graph_to_model(rkaccel_graph_desc(self->graph), &self->model, msg,
				   sizeof(msg)) == -EINVAL && strstr(msg, "not compiled yet"))
		SKIP(return, "%s %ux%u: %s", l.name, l.h, l.w, msg);
	ASSERT_NE(NULL, self->model) TH_LOG("%s", msg);
	rkaccel_graph_free(self->graph);	/* the weights once, not twice */
	self->graph = NULL;

	ASSERT_EQ(0, rkaccel_ctx_create(self->dev, self->model, 0, &self->ctx));
	ASSERT_EQ(0, rkaccel_ctx_set_batch(self->ctx, batch));
	/*
	 * A network of a few tasks can end before a late thread of the batch
	 * submits its slice (a loaded TCG host: make check runs two guests at
	 * once), and the driver then rightly reuses the idle core. Each task
	 * gets 20 ms more, so that the slices' jobs overlap and spread.
	 */
	if (rkaccel_program_compile_model(self->model, &self->info, &prog) == 0 &&
	    rkaccel_program_tasks(prog) <= 16) {
		ASSERT_EQ(0, rkt_param_write_u64(RKT_SIM_TASK_NS_PATH, 20 * RKT_NSEC_PER_MSEC));
		self->slowed = true;
	}
	rkaccel_program_free(prog);
	ASSERT_EQ(batch * l.in_bytes, rkaccel_ctx_input_size(self->ctx));
	ASSERT_EQ(batch * l.out_bytes, rkaccel_ctx_output_size(self->ctx));
	self->out = malloc(batch * l.out_bytes);
	ASSERT_NE(NULL, self->out);
	ASSERT_EQ(0, rkaccel_ctx_run(self->ctx, self->in, batch * l.in_bytes, self->out,
				     batch * l.out_bytes));
	for (uint32_t s = 0; s < batch; s++) {
		const uint8_t *npu = self->out + s * l.out_bytes;
		const uint8_t *host = self->expected + s * l.out_bytes;
		size_t at = 0;

		while (at < l.out_bytes && npu[at] == host[at])
			at++;
		if (at < l.out_bytes && bad++ < 4)
			TH_LOG("slice %u: byte %zu is 0x%02x, the host reference's 0x%02x", s, at,
			       npu[at], host[at]);
		if (!rkaccel_ctx_slice_info(self->ctx, s, &core, NULL))
			cores |= 1u << core;
	}
	EXPECT_EQ(0, bad) TH_LOG("%u of %u slices differ from the host reference", bad, batch);
	EXPECT_EQ(self->info.core_mask, cores);
	printf("zoo: %s %ux%u batch %u on %d cores: %s\n", l.name, l.h, l.w, batch,
	       __builtin_popcount(cores),
	       bad ? "NOT bit-exact with the host reference" :
		     "every slice bit-exact with the host reference");
	fflush(stdout);
}

TEST_HARNESS_MAIN
