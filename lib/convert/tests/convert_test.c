// SPDX-License-Identifier: MIT
/*
 * convert_test REFDIR DIGITS_ONNX: the converter's host test, TAP output.
 * CONVERT_FUZZ_ITERATIONS sets the number of mutants of each test model
 * (100; digits.onnx gets four times as many).
 * REFDIR is what make_refs.py wrote: models with PyTorch's outputs, the
 * digits test split, malformed models with the errors they must give. Also
 * truncates, replaces and mutates digits.onnx itself (seeded) to check that
 * bad bytes give an error, never a crash (run under ASan/UBSan too).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"

#define MAX_REL_ERR 1e-4

static int test_no;
static int failures;

static void tap(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tap(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", ok ? "" : "not ", ++test_no);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	failures += !ok;
}

static void diag_print(const struct cv_diag *d)
{
	const char *p = d->text ? d->text : "";

	while (*p) {
		const char *nl = strchr(p, '\n');
		int len = nl ? (int)(nl - p) : (int)strlen(p);

		printf("#   %.*s\n", len, p);
		p += len + (nl ? 1 : 0);
	}
}

static void *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	void *buf = NULL;
	long size;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (size = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET)) {
		buf = malloc(size + 1);
		if (buf && fread(buf, 1, size, f) != (size_t)size) {
			free(buf);
			buf = NULL;
		}
		*len = size;
	}
	fclose(f);
	return buf;
}

static int64_t io_elems(const struct cv_graph *g, const int *idx, int n, int64_t *each)
{
	int64_t total = 0;

	for (int i = 0; i < n; i++) {
		each[i] = cv_tensor_elems(&g->tensors[idx[i]]);
		total += each[i];
	}
	return total;
}

/* Max |a - b| over the reference's largest magnitude (one output). */
static double rel_err(const float *a, const float *ref, int64_t n)
{
	double peak = 0, err = 0;

	for (int64_t i = 0; i < n; i++) {
		peak = fmax(peak, fabs(ref[i]));
		err = fmax(err, fabs((double)a[i] - ref[i]));
	}
	return peak > 0 ? err / peak : err;
}

static struct cv_graph *load_prepared(const char *path, struct cv_diag *d)
{
	struct cv_graph *g = cv_onnx_read_file(path, d);

	if (g && cv_prepare(g, d)) {
		cv_graph_free(g);
		g = NULL;
	}
	return g;
}

/* Runs the graph on the concatenated inputs; outputs concatenated. */
static int run_concat(const struct cv_graph *g, const float *in, float *out, struct cv_diag *d)
{
	const float *ins[CV_MAX_NODE_IO];
	float *outs[CV_MAX_NODE_IO];
	int64_t off = 0;

	for (int i = 0; i < g->n_inputs; i++) {
		ins[i] = in + off;
		off += cv_tensor_elems(&g->tensors[g->inputs[i]]);
	}
	off = 0;
	for (int i = 0; i < g->n_outputs; i++) {
		outs[i] = out + off;
		off += cv_tensor_elems(&g->tensors[g->outputs[i]]);
	}
	return cv_exec(g, ins, outs, d);
}

/* The prepared graph as "Op:act,Op,..." in graph order, to check the passes. */
static void signature(const struct cv_graph *g, char *buf, size_t len)
{
	static const char *const acts[] = { "", ":relu", ":relu6", ":leaky" };
	int order[256], n;
	struct cv_diag d = { 0 };
	size_t used = 0;

	buf[0] = 0;
	n = g->n_nodes <= 256 ? cv_graph_topo_order(g, order, &d) : -1;
	for (int i = 0; i < n && used < len; i++) {
		const struct cv_node *nd = &g->nodes[order[i]];

		used += snprintf(buf + used, len - used, "%s%s%s%s", i ? "," : "",
				 cv_op_name(nd->op), acts[nd->act], nd->on_cpu ? "@cpu" : "");
	}
	cv_diag_free(&d);
}

static void test_model(const char *dir, const char *name, const char *want_sig)
{
	char sig[2048];
	char path[1024];
	struct cv_diag d = { 0 };
	size_t in_len = 0, ref_len = 0;
	int64_t each[CV_MAX_NODE_IO];

	snprintf(path, sizeof(path), "%s/%s.onnx", dir, name);
	struct cv_graph *g = load_prepared(path, &d);

	snprintf(path, sizeof(path), "%s/%s.in", dir, name);
	float *in = read_all(path, &in_len);

	snprintf(path, sizeof(path), "%s/%s.ref", dir, name);
	float *ref = read_all(path, &ref_len);
	float *out = NULL;
	int ok = 0;
	double worst = 0;

	if (g && in && ref && io_elems(g, g->inputs, g->n_inputs, each) * 4 == (int64_t)in_len &&
	    io_elems(g, g->outputs, g->n_outputs, each) * 4 == (int64_t)ref_len &&
	    (out = malloc(ref_len + 4)) && !run_concat(g, in, out, &d)) {
		int64_t off = 0;

		for (int i = 0; i < g->n_outputs; i++) {
			worst = fmax(worst, rel_err(out + off, ref + off, each[i]));
			off += each[i];
		}
		ok = worst <= MAX_REL_ERR;
	}
	tap(ok, "%s: float executor against PyTorch, max relative error %.2e", name, worst);
	if (!ok)
		diag_print(&d);
	if (g)
		signature(g, sig, sizeof(sig));
	tap(g && !strcmp(sig, want_sig), "%s: graph after the passes is %s", name,
	    g ? sig : "(none)");
	if (g && strcmp(sig, want_sig))
		printf("#   expected %s\n", want_sig);
	cv_diag_free(&d);
	cv_graph_free(g);
	free(in);
	free(ref);
	free(out);
}

static void test_digits(const char *dir, const char *onnx, int count, double torch_top1,
			const char *want_sig)
{
	char path[1024], sig[2048] = "";
	struct cv_diag d = { 0 };
	size_t in_len = 0, ref_len = 0, lab_len = 0;
	struct cv_graph *g = load_prepared(onnx, &d);
	float *in, *ref;
	int32_t *labels;
	int right = 0, ok = 0, ran = 0;
	double worst = 0;

	snprintf(path, sizeof(path), "%s/digits.in", dir);
	in = read_all(path, &in_len);
	snprintf(path, sizeof(path), "%s/digits.ref", dir);
	ref = read_all(path, &ref_len);
	snprintf(path, sizeof(path), "%s/digits.labels", dir);
	labels = read_all(path, &lab_len);
	if (g && in && ref && labels && in_len == (size_t)count * 64 * 4 &&
	    ref_len == (size_t)count * 10 * 4 && lab_len == (size_t)count * 4 &&
	    g->n_inputs == 1 && g->n_outputs == 1 &&
	    cv_tensor_elems(&g->tensors[g->inputs[0]]) == 64 &&
	    cv_tensor_elems(&g->tensors[g->outputs[0]]) == 10) {
		for (ran = 0; ran < count; ran++) {
			float out[10];
			int best = 0;

			if (run_concat(g, in + ran * 64, out, &d))
				break;
			worst = fmax(worst, rel_err(out, ref + ran * 10, 10));
			for (int k = 1; k < 10; k++)
				best = out[k] > out[best] ? k : best;
			right += best == labels[ran];
		}
		ok = ran == count && worst <= MAX_REL_ERR;
	}
	tap(ok, "digits: %d test images against PyTorch, max relative error %.2e", count, worst);
	if (g)
		signature(g, sig, sizeof(sig));
	tap(!strcmp(sig, want_sig), "digits: graph after the passes is %s", sig);
	if (!ok)
		diag_print(&d);
	double top1 = count ? 100.0 * right / count : 0;

	tap(ran == count && top1 >= 95.0 && fabs(top1 - torch_top1) < 0.01,
	    "digits: float top-1 %.2f%% on %d images (PyTorch %.2f%%)", top1, count, torch_top1);
	cv_diag_free(&d);
	cv_graph_free(g);
	free(in);
	free(ref);
	free(labels);
}

static void test_bad(const char *dir, char *spec)
{
	char path[1024];
	struct cv_diag d = { 0 };
	char *name = strtok(spec, "|"), *want;
	int ok;

	snprintf(path, sizeof(path), "%s/%s.onnx", dir, name);
	struct cv_graph *g = load_prepared(path, &d);

	ok = !g && d.count > 0;
	while ((want = strtok(NULL, "|")))
		if (!d.text || !strstr(d.text, want)) {
			printf("# missing in the error: %s\n", want);
			ok = 0;
		}
	tap(ok, "bad input %s: refused, %d error line(s)", name, d.count);
	diag_print(&d);
	cv_diag_free(&d);
	cv_graph_free(g);
}

/* 0: rejected by the reader, 1: by the passes or executor, 2: ran. */
static int try_bytes(const uint8_t *buf, size_t len, struct cv_diag *d)
{
	struct cv_graph *g = cv_onnx_read_mem(buf, len, d);
	int stage = 0;

	if (g && !cv_prepare(g, d)) {
		int64_t ni = 0, no = 0;

		for (int i = 0; i < g->n_inputs; i++)
			ni += cv_tensor_elems(&g->tensors[g->inputs[i]]);
		for (int i = 0; i < g->n_outputs; i++)
			no += cv_tensor_elems(&g->tensors[g->outputs[i]]);
		float *in = calloc(ni + 1, sizeof(float)), *out = calloc(no + 1, sizeof(float));

		stage = in && out && !run_concat(g, in, out, d) ? 2 : 1;
		free(in);
		free(out);
	} else if (g) {
		stage = 1;
	}
	cv_graph_free(g);
	return stage;
}

static uint64_t rng = 0x2026120509150000ull;

static uint32_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}

static void test_broken_bytes(const char *onnx)
{
	size_t len = 0;
	uint8_t *orig = read_all(onnx, &len);
	int refused = 0, tries = 0;

	if (!orig) {
		tap(0, "read %s", onnx);
		return;
	}
	for (int k = 1; k <= 12; k++, tries++) {
		struct cv_diag d = { 0 };

		refused += try_bytes(orig, len * k / 13, &d) < 2 && d.count > 0;
		cv_diag_free(&d);
	}
	tap(refused == tries, "truncated digits.onnx: %d of %d cut points refused with an error",
	    refused, tries);
	refused = tries = 0;
	for (int k = 0; k < 32; k++, tries++) {
		size_t n = 1 + next_rand() % 4096;
		uint8_t *buf = malloc(n);
		struct cv_diag d = { 0 };

		for (size_t i = 0; i < n; i++)
			buf[i] = (uint8_t)next_rand();
		refused += try_bytes(buf, n, &d) < 2 && d.count > 0;
		cv_diag_free(&d);
		free(buf);
	}
	tap(refused == tries, "random bytes: %d of %d buffers refused with an error", refused, tries);
	free(orig);
}

/* Seeded mutations of one file: any outcome but a crash (or a sanitizer
 * report) is fine; the counts say how far the mutants got. */
static void fuzz_file(const char *path, const char *label, int iterations)
{
	size_t len = 0;
	uint8_t *orig = read_all(path, &len), *buf = orig ? malloc(len) : NULL;
	int stages[3] = { 0 };

	for (int k = 0; k < iterations && buf && len; k++) {
		struct cv_diag d = { 0 };
		int flips = 1 + next_rand() % 8;

		memcpy(buf, orig, len);
		for (int i = 0; i < flips; i++)
			buf[next_rand() % len] = (uint8_t)next_rand();
		stages[try_bytes(buf, len, &d)]++;
		cv_diag_free(&d);
	}
	tap(buf != NULL, "mutated %s (seeded, %d files): %d refused by the reader, "
	    "%d by the passes, %d ran", label, iterations, stages[0], stages[1], stages[2]);
	free(buf);
	free(orig);
}

int main(int argc, char **argv)
{
	char path[1024], line[4096], *models[64];
	int n_models = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: %s REFDIR DIGITS_ONNX\n", argv[0]);
		return 2;
	}
	snprintf(path, sizeof(path), "%s/cases.txt", argv[1]);
	FILE *f = fopen(path, "r");

	if (!f) {
		printf("Bail out! %s missing\n", path);
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		char name[256], sig[2048];
		int count;
		double top1;

		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, "model %255s %2047s", name, sig) == 2) {
			test_model(argv[1], name, sig);
			if (n_models < 64)
				models[n_models++] = strdup(name);
		}
		else if (sscanf(line, "digits %d %lf %2047s", &count, &top1, sig) == 3)
			test_digits(argv[1], argv[2], count, top1, sig);
		else if (!strncmp(line, "bad ", 4))
			test_bad(argv[1], line + 4);
	}
	fclose(f);
	test_broken_bytes(argv[2]);
	const char *env = getenv("CONVERT_FUZZ_ITERATIONS");
	int iterations = env ? atoi(env) : 100;

	fuzz_file(argv[2], "digits.onnx", 4 * iterations);
	for (int i = 0; i < n_models; i++) {
		snprintf(path, sizeof(path), "%s/%s.onnx", argv[1], models[i]);
		fuzz_file(path, models[i], iterations);
	}
	for (int i = 0; i < n_models; i++)
		free(models[i]);
	printf("1..%d\n", test_no);
	return failures ? 1 : 0;
}
