// SPDX-License-Identifier: MIT
/*
 * rkaccel-run: run a model file on the NPU with a batch size, print which
 * core ran each batch slice and how long it took, optionally compare each
 * slice with an expected output; with --dump-layers, every layer's output
 * against the CPU reference (layer_dump.h). A 3.0 file whose graph ends in
 * a CPU op (softmax, dequantize) gives that op's float32 output, as the
 * library's rkaccel_output_op_run() computes it.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "rkaccel.h"
#include "rkaccel_drm.h"
#include "args.h"
#include "layer_dump.h"

#define PROG "rkaccel-run"

struct options {
	const char *model, *input, *output, *expect, *device, *dump;
	uint32_t batch, seed;
	bool batch_given;	/* --batch; else a 3.0 file's own batch */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " MODEL [--batch B] [--input FILE | --seed N] [--output FILE]\n"
		"                   [--expect FILE] [--device PATH] [--dump-layers DIR]\n"
		"\n"
		"Run MODEL (a file of rkaccel-mkmodel) on the NPU with batch size B (default 1;\n"
		"a format 3.0 file runs its own batch, and B, if given, must equal it).\n"
		"  --input FILE    row-major int8 input of the whole batch (B x rows x features)\n"
		"  --seed N        without --input: pseudo-random input from N (default 1)\n"
		"  --output FILE   write the row-major output of the whole batch (float32 when\n"
		"                  the graph ends in a softmax or dequantize on the CPU)\n"
		"  --expect FILE   compare each slice's output with FILE; exit 1 on a mismatch\n"
		"  --dump-layers DIR  run image by image with every tensor kept, write each\n"
		"                  layer's output to DIR/IMAGE/ and compare it with the CPU\n"
		"                  reference; exit 1 at a layer that differs\n"
		"Prints one line per batch slice: the core that ran it and its time.\n"
		"B (1..64) and N (0..4294967295) are decimal, without a sign, 0x or leading zero;\n"
		"files must be regular files. See rkaccel-run(1).\n");
}

/* A bad argument: said on stderr, -1 for parse_args() to return. */
#define bad_usage(...)	(arg_err(PROG, __VA_ARGS__), -1)

static int parse_args(int argc, char **argv, struct options *o)
{
	bool have_seed = false;
	const char *why;

	memset(o, 0, sizeof(*o));
	o->batch = 1;
	o->seed = 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		const char **slot = NULL;

		if (!strcmp(a, "--help")) {
			usage(stdout);
			exit(0);
		} else if (a[0] != '-') {
			if (o->model)
				return bad_usage("one MODEL only: '%s' and '%s'", o->model, a);
			o->model = a;
			continue;
		} else if (strcmp(a, "--batch") && strcmp(a, "--seed") && strcmp(a, "--input") &&
			   strcmp(a, "--output") && strcmp(a, "--expect") &&
			   strcmp(a, "--device") && strcmp(a, "--dump-layers")) {
			return bad_usage("unknown argument '%s'", a);
		} else if (!v) {
			return bad_usage("%s needs a value", a);
		} else if (!strcmp(a, "--batch")) {
			why = arg_u32(v, 1, RKACCEL_CTX_MAX_BATCH, &o->batch);
			o->batch_given = true;
			if (why)
				return bad_usage("--batch '%s' %s (a decimal number in 1..%u)", v,
						 why, RKACCEL_CTX_MAX_BATCH);
		} else if (!strcmp(a, "--seed")) {
			why = arg_u32(v, 0, UINT32_MAX, &o->seed);
			if (why)
				return bad_usage("--seed '%s' %s (a decimal number in 0..%u)", v,
						 why, UINT32_MAX);
			have_seed = true;
		} else if (!strcmp(a, "--input")) {
			slot = &o->input;
		} else if (!strcmp(a, "--output")) {
			slot = &o->output;
		} else if (!strcmp(a, "--expect")) {
			slot = &o->expect;
		} else if (!strcmp(a, "--dump-layers")) {
			slot = &o->dump;
		} else {
			slot = &o->device;
		}
		if (slot && !*v)
			return bad_usage("%s needs a path, not an empty string", a);
		if (slot)
			*slot = v;
		i++;
	}
	if (have_seed && o->input)
		return bad_usage("--input and --seed exclude each other");
	return o->model ? 0 : bad_usage("MODEL is needed");
}

/* Read exactly @len bytes of @f (opened from @path) into @buf; closes @f. */
static int read_exact(FILE *f, const char *path, void *buf, size_t len)
{
	size_t n = fread(buf, 1, len, f);
	int extra = fgetc(f);

	fclose(f);
	if (n != len || extra != EOF) {
		fprintf(stderr, PROG ": %s: expected %zu bytes\n", path, len);
		return -EINVAL;
	}
	return 0;
}

/* Write @len bytes to @f, opened by arg_fopen_out() before the run; closes it. */
static int write_all(FILE *f, const void *buf, size_t len)
{
	int ret = 0;

	if (fwrite(buf, 1, len, f) != len)
		ret = -EIO;
	if (fclose(f) && !ret)
		ret = -errno;
	return ret;
}

/* splitmix64: the same input for the same seed on every machine. */
static void fill_random(int8_t *p, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t z = (seed += 0x9e3779b97f4a7c15ull);

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		p[i] = (int8_t)((z ^ (z >> 31)) >> 56);
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The per-slice table; returns the number of slices that differ from @expect. */
static int print_slices(const struct rkaccel_ctx *ctx, uint32_t batch, const uint8_t *out,
			const uint8_t *expect, size_t out_size)
{
	size_t slice_size = out_size / batch;
	int bad = 0;

	printf("slice  core  time_us  %s\n", expect ? "verified" : "");
	for (uint32_t i = 0; i < batch; i++) {
		uint32_t core = 0;
		uint64_t ns = 0;
		const char *verdict = "";

		rkaccel_ctx_slice_info(ctx, i, &core, &ns);
		if (expect) {
			bool same = !memcmp(out + i * slice_size, expect + i * slice_size,
					    slice_size);

			verdict = same ? "yes (bit-exact)" : "NO";
			bad += !same;
		}
		printf("%5u  %4u  %7llu  %s\n", i, core, (unsigned long long)(ns / 1000), verdict);
	}
	return bad;
}

struct run {
	struct rkaccel_device *dev;
	struct rkaccel_graph *graph;	/* --dump-layers: the reference's graph */
	struct rkaccel_model *model;
	struct rkaccel_ctx *ctx;
	int8_t *in;
	uint8_t *out, *expect;
	size_t in_size, out_size;
	/* the model's CPU op after the NPU: its floats are the output */
	struct rkaccel_output_op op;
	bool cpu_op;
	float *res;
	size_t res_size;	/* of the output: the floats, or the NPU's bytes */
	FILE *input, *expect_f, *output;
};

static void run_free(struct run *r)
{
	rkaccel_ctx_destroy(r->ctx);
	rkaccel_model_free(r->model);
	rkaccel_graph_free(r->graph);
	rkaccel_close(r->dev);
	free(r->in);
	free(r->out);
	free(r->res);
	free(r->expect);
	if (r->input)
		fclose(r->input);
	if (r->expect_f)
		fclose(r->expect_f);
	if (r->output)
		fclose(r->output);
}

static int fail(const char *what, int err)
{
	fprintf(stderr, PROG ": %s: %s\n", what, rkaccel_strerror(err));
	return 1;
}

/* Whether @path starts as a model file of major version 3 (a graph). */
static bool is_graph_file(const char *path)
{
	unsigned char h[6];
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	bool graph = false;
	struct stat st;

	if (fd < 0)
		return false;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && read(fd, h, 6) == 6)
		graph = !memcmp(h, "RKML", 4) && (h[4] | h[5] << 8) == 3;
	close(fd);
	return graph;
}

/* A 3.0 file lowered to the chain the contexts run; its batch unless --batch. */
static int load_graph(struct options *o, struct run *r, char *msg, size_t msg_len)
{
	struct rkaccel_graph *g;
	uint32_t batch;
	int ret = rkaccel_graph_load(o->model, &g, msg, msg_len);

	if (ret)
		return ret;
	batch = rkaccel_graph_desc(g)->batch;
	ret = rkaccel_graph_to_model(rkaccel_graph_desc(g), &r->model, msg, msg_len);
	if (o->dump)
		r->graph = g;
	else
		rkaccel_graph_free(g);
	if (ret) {
		char why[256];

		snprintf(why, sizeof(why), "%s", msg);
		snprintf(msg, msg_len, "%s: %s", o->model, why);
		return ret;
	}
	if (o->batch_given && o->batch != batch) {
		snprintf(msg, msg_len, "%s: --batch %u, but the file's batch is %u", o->model,
			 o->batch, batch);
		return -EINVAL;
	}
	o->batch = batch;
	return 0;
}

/*
 * A 1.x/2.x model for --dump-layers: its graph for the reference, and the
 * model lowered back from it, which knows the graph tensor of each layer.
 */
static int model_as_graph(const struct options *o, struct run *r, char *msg, size_t msg_len)
{
	struct rkaccel_model *m;
	int ret = rkaccel_graph_from_model(rkaccel_model_desc(r->model), &r->graph, msg, msg_len);

	if (!ret)
		ret = rkaccel_graph_to_model(rkaccel_graph_desc(r->graph), &m, msg, msg_len);
	if (ret) {
		char why[256];

		snprintf(why, sizeof(why), "%s", msg);
		snprintf(msg, msg_len, "%s: %s", o->model, why);
		return ret;
	}
	rkaccel_model_free(r->model);
	r->model = m;
	return 0;
}

static int prepare(struct options *o, struct run *r)
{
	char msg[512] = "";
	const char *why;
	int ret;

	if (is_graph_file(o->model))
		ret = load_graph(o, r, msg, sizeof(msg));
	else
		ret = rkaccel_model_load(o->model, &r->model, msg, sizeof(msg));
	if (!ret && o->dump && !r->graph)
		ret = model_as_graph(o, r, msg, sizeof(msg));
	if (ret) {
		/* the message starts with the path */
		fprintf(stderr, PROG ": %s\n", *msg ? msg : rkaccel_strerror(ret));
		return 1;
	}
	/* Files first: a path that cannot be read or written fails before the device. */
	if (o->input && !(r->input = arg_fopen_in(o->input, &why))) {
		fprintf(stderr, PROG ": --input %s: %s\n", o->input, why);
		return 1;
	}
	if (o->expect && !(r->expect_f = arg_fopen_in(o->expect, &why))) {
		fprintf(stderr, PROG ": --expect %s: %s\n", o->expect, why);
		return 1;
	}
	if (o->output && !(r->output = arg_fopen_out(o->output, &why))) {
		fprintf(stderr, PROG ": --output %s: %s\n", o->output, why);
		return 1;
	}
	ret = o->dump ? dump_mkdir(o->dump) : 0;
	if (ret) {
		fprintf(stderr, PROG ": --dump-layers %s: %s\n", o->dump, strerror(-ret));
		return 1;
	}
	ret = rkaccel_open(o->device, &r->dev);
	if (ret)
		return fail(o->device ? o->device : "no rkaccel device", ret);
	/* a dump runs the batch image by image on one context */
	ret = rkaccel_ctx_create_flags(r->dev, r->model, 0,
				       o->dump ? RKACCEL_CTX_KEEP_TENSORS : 0, &r->ctx);
	if (ret)
		return fail("context", ret);
	ret = rkaccel_ctx_set_batch(r->ctx, o->dump ? 1 : o->batch);
	if (ret)
		return fail("batch", ret);
	r->in_size = rkaccel_ctx_input_size(r->ctx) * (o->dump ? o->batch : 1);
	r->out_size = rkaccel_ctx_output_size(r->ctx) * (o->dump ? o->batch : 1);
	r->cpu_op = !rkaccel_model_output_op(r->model, &r->op);
	r->res_size = r->cpu_op ? r->out_size / r->op.in_bytes * sizeof(float) : r->out_size;
	r->in = malloc(r->in_size);
	r->out = malloc(r->out_size);
	r->res = r->cpu_op ? malloc(r->res_size) : NULL;
	r->expect = o->expect ? malloc(r->res_size) : NULL;
	if (!r->in || !r->out || (r->cpu_op && !r->res) || (o->expect && !r->expect))
		return fail("memory", -ENOMEM);
	if (o->input)
		ret = read_exact(r->input, o->input, r->in, r->in_size);
	else
		fill_random(r->in, r->in_size, o->seed);
	r->input = NULL;
	if (!ret && o->expect) {
		ret = read_exact(r->expect_f, o->expect, r->expect, r->res_size);
		r->expect_f = NULL;
	}
	return ret ? 1 : 0;
}

static void print_header(const struct options *o, const struct run *r)
{
	const struct rkaccel_model_desc *d = rkaccel_model_desc(r->model);
	struct rkaccel_info info;

	struct rkaccel_tensor_shape out;

	rkaccel_query(r->dev, &info);
	rkaccel_model_shape(r->model, d->num_layers, &out);
	if (d->height)	/* a 2.0 network: image in, image out */
		printf("model:    %s: %u layers, %ux%ux%u -> %ux%ux%u\n", o->model, d->num_layers,
		       d->height, d->width, d->layers[0].in_features, out.height, out.width,
		       out.channels);
	else
		printf("model:    %s: %u layers, %u rows x %u -> %u\n", o->model, d->num_layers,
		       d->rows, d->layers[0].in_features, out.channels);
	printf("device:   %s (%s), %u cores\n", info.soc_name,
	       info.backend == DRM_RKACCEL_BACKEND_SIM ? "simulated" : "silicon", info.num_cores);
	printf("batch:    %u on %u contexts (weights held once)\n", o->batch,
	       rkaccel_ctx_copies(r->ctx) + 1);
	if (r->cpu_op)
		printf("output:   float32 of a %s on the CPU after the NPU\n",
		       r->op.flags & RKACCEL_OUTPUT_SOFTMAX ? "softmax" : "dequantize");
}

/* The batch's output as the model gives it: the NPU's bytes, or its CPU op's floats. */
static const uint8_t *model_output(const struct options *o, struct run *r)
{
	if (!r->cpu_op)
		return r->out;
	rkaccel_output_op_run(&r->op, r->out, o->batch, r->res);
	return (const uint8_t *)r->res;
}

/* One layer of one image: NPU bytes written, compared; returns 1 when they differ. */
static int dump_layer(const struct options *o, struct layer_dump *d, uint32_t img, uint32_t i,
		      bool show)
{
	struct dump_tensor *t = &d->t[i];
	char path[4096], verdict[128] = "not compared", shape[40];
	long long max = 0;
	size_t bad = 0;
	int ret;

	dump_path(path, sizeof(path), o->dump, img, i, t->name, "npu");
	ret = dump_write(path, t->npu, t->bytes);
	if (ret)
		return -fail(path, ret);
	if (d->ref_ok && t->cpu_done) {
		bad = dump_diff(t, &max);
		if (bad)
			snprintf(verdict, sizeof(verdict), "DIFFERS: %zu of %zu, max |npu - cpu| %lld",
				 bad, t->bytes, max);
		else
			snprintf(verdict, sizeof(verdict), "equal");
	}
	if (bad) {
		dump_path(path, sizeof(path), o->dump, img, i, t->name, "cpu");
		ret = dump_write(path, t->cpu, t->bytes);
		if (ret)
			return -fail(path, ret);
	}
	snprintf(shape, sizeof(shape), "%ux%ux%u", t->shape.height, t->shape.width,
		 t->shape.channels);
	if (show || bad)
		printf("%5u  %5u  %-24.24s  %-14s  %-14s  %s\n", img, i, *t->name ? t->name : "-",
		       t->op, shape, verdict);
	return bad ? 1 : 0;
}

/* --dump-layers: image by image, every layer against the CPU reference. */
static int run_dump(const struct options *o, struct run *r)
{
	const struct rkaccel_graph_desc *g = rkaccel_graph_desc(r->graph);
	size_t in1 = r->in_size / o->batch, out1 = r->out_size / o->batch;
	struct layer_dump d = { 0 };
	uint32_t first_img = 0, first = 0, differ = 0;
	char path[4096];
	uint8_t *ref_out = malloc(gref_bytes(&g->tensors[g->outputs[0]]));
	int ret = ref_out ? dump_init(&d, g, r->model) : -ENOMEM;

	/* prepare() made the folder */
	if (!ret)
		ret = dump_index(&d, o->dump);
	if (ret) {
		free(ref_out);
		dump_free(&d);
		return fail(o->dump, ret);
	}
	printf("image  layer  tensor                    op              shape           npu vs cpu\n");
	for (uint32_t img = 0; img < o->batch && ret >= 0; img++) {
		snprintf(path, sizeof(path), "%s/%u", o->dump, img);
		ret = dump_mkdir(path);
		if (ret) {
			ret = -fail(path, ret);
			break;
		}
		ret = rkaccel_ctx_run(r->ctx, r->in + img * in1, in1, r->out + img * out1, out1);
		if (ret) {
			ret = -fail("run", ret);
			break;
		}
		d.ref_ok = !dump_ref_image(&d, r->in + img * in1, ref_out);
		for (uint32_t i = 1; i < d.n && ret >= 0; i++) {
			ret = rkaccel_ctx_read_tensor(r->ctx, 0, i, d.t[i].npu, d.t[i].bytes);
			if (ret) {
				ret = -fail("reading a tensor", ret);
				break;
			}
			ret = dump_layer(o, &d, img, i, !img);
			if (ret == 1 && !differ++)
				first_img = img, first = i;
		}
	}
	if (ret >= 0 && !d.ref_ok)
		printf("result:   layers written to %s, not compared: the CPU reference: %s\n",
		       o->dump, d.ref_msg);
	else if (ret >= 0 && differ)
		printf("result:   %u layer outputs differ; the first: image %u, layer %u '%s' (%s)\n",
		       differ, first_img, first, d.t[first].name, d.t[first].op);
	else if (ret >= 0)
		printf("result:   every layer of every image equals the CPU reference\n");
	free(ref_out);
	dump_free(&d);
	return ret < 0 ? -1 : differ ? 1 : 0;
}

/* After a dump: --expect against the outputs of the images, --output written. */
static int dump_outputs(const struct options *o, struct run *r)
{
	size_t out1 = r->res_size / o->batch;
	const uint8_t *out = model_output(o, r);
	uint32_t differ = 0;
	int bad = 0, ret;

	for (uint32_t img = 0; r->expect && img < o->batch; img++)
		differ += !!memcmp(out + img * out1, r->expect + img * out1, out1);
	if (r->expect)
		printf("expect:   %s\n", differ ? "MISMATCH" : "every image's output bit-exact");
	if (r->output) {
		ret = write_all(r->output, out, r->res_size);
		r->output = NULL;
		if (ret)
			bad = fail(o->output, ret);
	}
	return differ || bad;
}

int main(int argc, char **argv)
{
	struct run r = { 0 };
	const uint8_t *out;
	struct options o;
	uint64_t t0, t1;
	int ret, bad;

	if (parse_args(argc, argv, &o)) {
		fprintf(stderr, "Try '" PROG " --help'.\n");
		return 2;
	}
	ret = prepare(&o, &r);
	if (ret) {
		run_free(&r);
		return ret;
	}
	print_header(&o, &r);
	if (o.dump) {
		ret = run_dump(&o, &r);
		if (ret >= 0)
			ret |= dump_outputs(&o, &r);
		run_free(&r);
		return ret ? 1 : 0;
	}
	t0 = now_ns();
	ret = rkaccel_ctx_run(r.ctx, r.in, r.in_size, r.out, r.out_size);
	t1 = now_ns();
	if (ret) {
		run_free(&r);
		return fail("run", ret);
	}
	out = model_output(&o, &r);
	bad = print_slices(r.ctx, o.batch, out, r.expect, r.res_size);
	printf("total:    %u slices in %llu us\n", o.batch, (unsigned long long)((t1 - t0) / 1000));
	if (r.output) {
		ret = write_all(r.output, out, r.res_size);
		r.output = NULL;
		if (ret)
			bad = fail(o.output, ret);
	}
	if (o.expect)
		printf("result:   %s\n", bad ? "MISMATCH" : "every slice bit-exact");
	run_free(&r);
	return bad ? 1 : 0;
}
