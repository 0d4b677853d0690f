// SPDX-License-Identifier: GPL-2.0-only
/*
 * digits_int8: the trained digits model (models/digits) through the whole
 * int8 flow, and its accuracy. Converts digits.onnx with dataset.txt (100
 * calibration digits), writes the model file, converts again to check the
 * bytes are the same, reloads the file, then runs every test digit through
 * the float executor and, quantized, through the host int8 executor: the
 * selftests' CPU reference (selftests/net_ref.h), which the simulated NPU
 * matches bit for bit. Prints TAP and the line
 *   digits: float top-1 X%, int8 top-1 Y% on N images
 * and fails if int8 loses more than 1 point.
 *
 * With --emit OUT_DIR it also writes what the guest's selftests/digits_test
 * needs to run the same digits on the NPU: the model file (digits.rkm), the
 * int8 input bytes of every test digit exactly as this program quantized
 * them (inputs.bin), the host int8 executor's output bytes for each, the
 * very ones its top-1 above counts (expected.bin), the labels (labels.bin)
 * and their sizes (digits.txt). scripts/digits-data.sh runs it.
 *
 * usage: digits_int8 DIR MODEL_OUT [normal|mmse|kl_divergence [per-layer]] [--emit OUT_DIR]
 * DIR holds digits.onnx, dataset.txt, test_images.npy (uint8 [N][8][8],
 * pixels 0..16; the model's input is pixel / 16) and test_labels.npy.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "net_ref.h"
#include "quant.h"
#include "tap.h"

#define CLASSES 10

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int argmax_f(const float *v, int n)
{
	int best = 0;

	for (int i = 1; i < n; i++)
		if (v[i] > v[best])
			best = i;
	return best;
}

static int argmax_i(const int32_t *v, int n)
{
	int best = 0;

	for (int i = 1; i < n; i++)
		if (v[i] > v[best])
			best = i;
	return best;
}

/* Converts and serializes; the image in *buf. */
static int convert(const char *dir, const struct cv_quant_opts *o, struct cv_graph **g,
		   struct cv_lowered *lw, void **buf, size_t *len)
{
	char onnx[4096], ds[4096];
	struct cv_diag d = { 0 };
	int rc;

	snprintf(onnx, sizeof(onnx), "%s/digits.onnx", dir);
	snprintf(ds, sizeof(ds), "%s/dataset.txt", dir);
	rc = cv_convert(onnx, ds, o, g, lw, &d);
	if (rc)
		fprintf(stderr, "%s", d.text ? d.text : "conversion failed\n");
	cv_diag_free(&d);
	if (!rc && rkaccel_model_serialize(&lw->desc, buf, len)) {
		fprintf(stderr, "serialize failed\n");
		cv_lowered_free(lw);
		cv_graph_free(*g);
		rc = -1;
	}
	return rc;
}

struct digits {
	struct cv_array images, labels;
};

static int load_digits(const char *dir, struct digits *t)
{
	char path[4096];
	struct cv_diag d = { 0 };
	int rc;

	snprintf(path, sizeof(path), "%s/test_images.npy", dir);
	rc = cv_npy_read(path, &t->images, &d);
	snprintf(path, sizeof(path), "%s/test_labels.npy", dir);
	if (!rc)
		rc = cv_npy_read(path, &t->labels, &d);
	if (!rc && (t->images.rank != 3 || t->images.dims[1] != 8 || t->images.dims[2] != 8 ||
		    t->labels.elems != t->images.dims[0])) {
		cv_diag_add(&d, "%s: test images are not [N][8][8] with N labels", dir);
		rc = -1;
	}
	if (rc)
		fprintf(stderr, "%s", d.text);
	cv_diag_free(&d);
	return rc;
}

/* The files of --emit: inputs, expected outputs and labels, one record per digit. */
struct emit {
	FILE *in, *out, *labels;
};

static FILE *emit_open(const char *dir, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f)
		perror(path);
	return f;
}

static int emit_begin(const char *dir, struct emit *e)
{
	e->in = emit_open(dir, "inputs.bin");
	e->out = emit_open(dir, "expected.bin");
	e->labels = emit_open(dir, "labels.bin");
	return e->in && e->out && e->labels ? 0 : -1;
}

static int emit_close(FILE *f)
{
	return f && fclose(f) ? -1 : 0;
}

/* Closes the record files, then writes digits.txt with the counts and sizes. */
static int emit_end(const char *dir, struct emit *e, int64_t n, int q_ok)
{
	int rc = emit_close(e->in) | emit_close(e->out) | emit_close(e->labels);
	FILE *f = rc ? NULL : emit_open(dir, "digits.txt");

	if (!f)
		return -1;
	fprintf(f, "images %lld\ninput_bytes %d\noutput_bytes %zu\nclasses %d\n"
		"host_int8_correct %d\n", (long long)n, 64, CLASSES * sizeof(int32_t), CLASSES,
		q_ok);
	return fclose(f) ? -1 : 0;
}

static int emit_digit(struct emit *e, const int8_t *xq, const int32_t *acc, int label)
{
	uint8_t l = (uint8_t)label;

	if (fwrite(xq, 64, 1, e->in) != 1 || fwrite(acc, sizeof(int32_t), CLASSES, e->out) !=
	    CLASSES || fwrite(&l, 1, 1, e->labels) != 1) {
		perror("digits_int8: --emit");
		return -1;
	}
	return 0;
}

/* The records' sizes: 8x8x1 int8 in, CLASSES int32 accumulators out. */
static bool io_shape_ok(const struct rkaccel_model_desc *m)
{
	struct rkaccel_tensor_shape in, out;

	if (rkaccel_model_tensor(m, 0, &in) || rkaccel_model_tensor(m, m->num_layers, &out) ||
	    in.height * in.width * in.channels != 64 ||
	    out.height * out.width * out.channels != CLASSES ||
	    !(m->layers[m->num_layers - 1].flags & RKACCEL_LAYER_OUT_INT32)) {
		fprintf(stderr, "digits_int8: the model is not 8x8x1 int8 in, %d int32 out\n",
			CLASSES);
		return false;
	}
	return true;
}

/*
 * Top-1 counts of the float executor and of the int8 model over the test
 * digits; with @e, each digit's int8 input and host int8 output written too.
 */
static int evaluate(const struct cv_graph *g, const struct cv_lowered *lw,
		    const struct rkaccel_model_desc *m, const struct digits *t, struct emit *e,
		    int *f_ok, int *q_ok)
{
	const struct cv_qparam qin = { true, m->layers[0].in_scale, m->layers[0].in_zero_point };
	float x[64], logits[CLASSES];
	int32_t acc[CLASSES];
	int8_t xq[64];
	struct cv_diag d = { 0 };
	const float *in[1] = { x };
	float *out[1] = { logits };

	*f_ok = *q_ok = 0;
	for (int64_t i = 0; i < t->images.dims[0]; i++) {
		int label = (int)t->labels.data[i];

		for (int p = 0; p < 64; p++)
			x[p] = t->images.data[i * 64 + p] / 16.0f;
		if (cv_exec(g, in, out, &d)) {
			fprintf(stderr, "%s", d.text);
			cv_diag_free(&d);
			return -1;
		}
		cv_quantize_input(x, lw->in_c, lw->in_h, lw->in_w, &qin, xq);
		if (ref_net(m, xq, acc))
			return -1;
		if (e && emit_digit(e, xq, acc, label))
			return -1;
		*f_ok += argmax_f(logits, CLASSES) == label;
		*q_ok += argmax_i(acc, CLASSES) == label;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct cv_quant_opts o = { CV_ALGO_NORMAL, false, NULL };
	struct cv_graph *g = NULL, *g2 = NULL;
	struct cv_lowered lw, lw2;
	struct rkaccel_model *model = NULL;
	struct digits t = { 0 };
	void *img = NULL, *img2 = NULL;
	size_t len = 0, len2 = 0;
	char msg[256] = "", name[64];
	int f_ok, q_ok, algo;
	double t0, ms, f_top1, q_top1;
	const char *emit_dir = NULL;
	struct emit e = { 0 };
	bool ok = true;

	if (argc > 2 && !strcmp(argv[argc - 2], "--emit")) {
		emit_dir = argv[argc - 1];
		argc -= 2;
	}
	if (argc < 3 || argc > 5 || (argc > 3 && (algo = cv_algo_from_name(argv[3])) < 0) ||
	    (argc > 4 && strcmp(argv[4], "per-layer"))) {
		fprintf(stderr, "usage: digits_int8 DIR MODEL_OUT [normal|mmse|kl_divergence [per-layer]] [--emit OUT_DIR]\n");
		return 2;
	}
	if (argc > 3)
		o.algo = algo;
	o.per_layer = argc > 4;
	snprintf(name, sizeof(name), "%s%s", cv_algo_name(o.algo), o.per_layer ? ", per layer" : "");
	printf("TAP version 13\n1..5\n");
	t0 = now_ms();
	ok &= !convert(argv[1], &o, &g, &lw, &img, &len);
	ms = now_ms() - t0;
	tap(ok, "digits.onnx converted (%s) to %zu model bytes", name, len);
	if (!ok)
		return 1;
	printf("# convert time (%s): %.0f ms (read, prepare, calibrate on 100 digits, quantize, lower)\n",
	       name, ms);
	ok &= !convert(argv[1], &o, &g2, &lw2, &img2, &len2);
	ok &= tap(ok && len == len2 && !memcmp(img, img2, len),
		  "a second conversion (%s) gives the same %zu bytes",
		  name, len);
	ok &= tap(!rkaccel_model_save(&lw.desc, argv[2]) &&
		  !rkaccel_model_load(argv[2], &model, msg, sizeof(msg)),
		  "model file %s written and reloaded", argv[2]);
	if (!model || load_digits(argv[1], &t) ||
	    (emit_dir && (!io_shape_ok(rkaccel_model_desc(model)) || emit_begin(emit_dir, &e))) ||
	    evaluate(g, &lw, rkaccel_model_desc(model), &t, emit_dir ? &e : NULL, &f_ok, &q_ok) ||
	    (emit_dir && emit_end(emit_dir, &e, t.images.dims[0], q_ok))) {
		fprintf(stderr, "%s\n", msg);
		return 1;
	}
	if (emit_dir)
		printf("# %lld digits' NPU inputs and host int8 outputs written to %s\n",
		       (long long)t.images.dims[0], emit_dir);
	f_top1 = 100.0 * f_ok / t.images.dims[0];
	q_top1 = 100.0 * q_ok / t.images.dims[0];
	if (o.algo == CV_ALGO_NORMAL && !o.per_layer)
		printf("digits: float top-1 %.2f%%, int8 top-1 %.2f%% on %lld images\n", f_top1,
		       q_top1, (long long)t.images.dims[0]);
	else
		printf("# digits (%s): float top-1 %.2f%%, int8 top-1 %.2f%% on %lld images\n",
		       name, f_top1, q_top1, (long long)t.images.dims[0]);
	ok &= tap(f_top1 >= 95.0, "float top-1 %.2f%% (float executor) is at least 95%%", f_top1);
	ok &= tap(q_top1 >= f_top1 - 1.0, "int8 (%s) loses at most 1 point: %.2f points", name,
		  f_top1 - q_top1);
	rkaccel_model_free(model);
	cv_lowered_free(&lw);
	cv_lowered_free(&lw2);
	cv_graph_free(g);
	cv_graph_free(g2);
	cv_array_free(&t.images);
	cv_array_free(&t.labels);
	free(img);
	free(img2);
	return ok ? 0 : 1;
}
