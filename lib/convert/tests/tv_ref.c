// SPDX-License-Identifier: GPL-2.0-only
/*
 * tv_ref: a torchvision network (scripts/tv-models.py's ONNX export, seeded
 * weights, batch norms on real photos) through the whole int8 flow on the
 * host, and its accuracy (issue 27, item 6). Converts NET-S.onnx with
 * dataset-S.txt (normal, per channel) and writes the model as 3.0 files at
 * batch 3 and 2; reloads them; checks that the runtime's lowering takes the
 * graph; runs every test image through the float executor (held to
 * PyTorch's logits, NET-S.ref.npy: max |diff| / max |torch| at most 1e-4)
 * and, quantized, through the host int8 executor: the 3.0 graph's CPU
 * reference (selftests/graph_ref.h), which the simulated NPU matches bit for
 * bit, at the file's batch. Prints TAP, the convert time, per image the
 * cosine similarity of the int8 logits (dequantized) against the float
 * executor's, and one line
 *   tv: NET SxS: float vs torch max rel diff X, int8 cosine min Y mean Z on N images
 * and fails if a cosine is below MIN_COSINE.
 *
 * Writes into OUT_DIR what the guest's selftests/zoo_test runs on the NPU:
 * tv_NET-SxS-b3.rkml and -b2.rkml, tv_NET-SxS.in (the first 3 test images'
 * int8 NHWC input bytes as quantized here) and tv_NET-SxS.expected (the
 * host int8 executor's logits for them: int32 from a last Conv or FC, int8
 * from a last pool, as SqueezeNet's), and appends a line to
 * OUT_DIR/tv.txt: "tv_NET SxS IN_BYTES OUT_BYTES". scripts/tv-data.sh runs it.
 *
 * usage: tv_ref DIR NET SIZE MIN_COSINE OUT_DIR [normal|mmse|kl_divergence]
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graph_ref.h"
#include "quant.h"
#include "tap.h"

#define EMIT_IMAGES 3		/* the largest batch: RK3588's three cores */
#define MAX_REL_DIFF 1e-4

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int write_file(const char *path, const void *buf, size_t len, const char *mode)
{
	FILE *f = fopen(path, mode);
	int ok = f && fwrite(buf, 1, len, f) == len;

	if (f && fclose(f))
		ok = 0;
	if (!ok)
		perror(path);
	return ok ? 0 : -1;
}

struct run {
	const char *dir, *net, *out_dir;
	enum cv_algo algo;
	int size;
	char tag[64];			/* NET-SxS */
	struct cv_graph *g;
	struct cv_lowered lw;
	struct rkaccel_graph *g3;	/* the batch-3 file, reloaded */
	struct cv_array test, ref;
	int64_t n, classes, in_elems;
	size_t esz;			/* output element: 4 (int32 logits) or 1 (int8) */
};

static int convert(struct run *r)
{
	struct cv_quant_opts o = { r->algo, false, NULL };
	char onnx[4096], ds[4096], path[4096], msg[512];
	struct cv_diag d = { 0 };
	struct rkaccel_model *m = NULL;
	double t0 = now_s();
	int rc;

	snprintf(onnx, sizeof(onnx), "%s/%s-%d.onnx", r->dir, r->net, r->size);
	snprintf(ds, sizeof(ds), "%s/dataset-%d.txt", r->dir, r->size);
	rc = cv_convert(onnx, ds, &o, &r->g, &r->lw, &d);
	if (rc)
		fprintf(stderr, "%s", d.text ? d.text : "conversion failed\n");
	cv_diag_free(&d);
	if (!tap(!rc && r->lw.is_graph, "%s converted to a 3.0 graph (%s, per channel)", r->tag,
		 cv_algo_name(r->algo)))
		return -1;
	printf("# convert time %s: %.1f s wall (read, prepare, calibrate, quantize, lower), %u nodes\n",
	       r->tag, now_s() - t0, r->lw.g3.desc.num_nodes);
	for (uint32_t b = 2; b <= 3 && !rc; b++) {
		snprintf(path, sizeof(path), "%s/tv_%s-b%u.rkml", r->out_dir, r->tag, b);
		rc = cv_save_graph(r->g, &r->lw, b, r->tag, path, msg, sizeof(msg));
		if (rc)
			fprintf(stderr, "%s: %s\n", path, msg);
	}
	if (!rc)
		rc = rkaccel_graph_load(path, &r->g3, msg, sizeof(msg));
	if (!tap(!rc && rkaccel_graph_desc(r->g3)->batch == 3,
		 "written at batch 3 and 2, %s reloaded", path))
		return -1;
	{
		const struct rkaccel_graph_desc *gd = rkaccel_graph_desc(r->g3);

		r->esz = gd->tensors[gd->outputs[0]].type == RKACCEL_DTYPE_INT32 ? 4 : 1;
	}
	rc = rkaccel_graph_to_model(rkaccel_graph_desc(r->g3), &m, msg, sizeof(msg));
	tap(!rc, "the runtime's lowering takes it%s%s", rc ? ": " : "", rc ? msg : "");
	rkaccel_model_free(m);
	return 0;
}

static int load_data(struct run *r)
{
	char path[4096];
	struct cv_diag d = { 0 };
	const struct cv_tensor *in = &r->g->tensors[r->lw.input];
	int rc;

	snprintf(path, sizeof(path), "%s/test-%d.npy", r->dir, r->size);
	rc = cv_npy_read(path, &r->test, &d);
	snprintf(path, sizeof(path), "%s/%s-%d.ref.npy", r->dir, r->net, r->size);
	if (!rc)
		rc = cv_npy_read(path, &r->ref, &d);
	if (rc) {
		fprintf(stderr, "%s", d.text);
		cv_diag_free(&d);
		return -1;
	}
	r->n = r->test.dims[0];
	r->in_elems = cv_tensor_elems(in);
	r->classes = cv_tensor_elems(&r->g->tensors[r->lw.output]);
	if (r->test.elems != r->n * r->in_elems || r->ref.elems != r->n * r->classes ||
	    r->n < EMIT_IMAGES) {
		fprintf(stderr, "%s: test images or references do not fit the model\n", r->tag);
		return -1;
	}
	return 0;
}

static double cosine(const float *a, const double *b, int64_t n)
{
	double ab = 0, aa = 0, bb = 0;

	for (int64_t i = 0; i < n; i++) {
		ab += a[i] * b[i];
		aa += (double)a[i] * a[i];
		bb += b[i] * b[i];
	}
	return ab / (sqrt(aa) * sqrt(bb) + 1e-300);
}

/* Float executor against torch; the test images quantized for the NPU. */
static int run_float(struct run *r, float *logits, int8_t *xq, double *rel)
{
	const struct rkaccel_graph_tensor *t = &rkaccel_graph_desc(r->g3)->tensors[0];
	const struct cv_qparam qin = { true, t->scale, t->zero_point };
	const struct cv_tensor *in = &r->g->tensors[r->lw.input];
	struct cv_diag d = { 0 };

	*rel = 0;
	for (int64_t i = 0; i < r->n; i++) {
		const float *x = r->test.data + i * r->in_elems, *ref = r->ref.data + i * r->classes;
		const float *ins[1] = { x };
		float *outs[1] = { logits + i * r->classes }, diff = 0, big = 0;

		if (cv_exec(r->g, ins, outs, &d)) {
			fprintf(stderr, "%s", d.text);
			cv_diag_free(&d);
			return -1;
		}
		for (int64_t k = 0; k < r->classes; k++) {
			diff = fmaxf(diff, fabsf(outs[0][k] - ref[k]));
			big = fmaxf(big, fabsf(ref[k]));
		}
		*rel = fmax(*rel, diff / big);
		cv_quantize_input(x, in->dims[1], in->dims[2], in->dims[3], &qin,
				  xq + i * r->in_elems);
	}
	return 0;
}

/* The int8 graph on the host, batch by batch; the last batch padded with image 0. */
static int run_int8(struct run *r, const int8_t *xq, uint8_t *acc)
{
	const struct rkaccel_graph_desc *d = rkaccel_graph_desc(r->g3);
	int8_t *in = malloc(d->batch * r->in_elems);
	uint8_t *out = malloc(d->batch * r->classes * r->esz);
	char msg[256] = "";
	int rc = in && out ? 0 : -1;

	for (int64_t i = 0; i < r->n && !rc; i += d->batch) {
		const void *ins[1] = { in };
		void *outs[1] = { out };

		for (uint32_t s = 0; s < d->batch; s++)
			memcpy(in + s * r->in_elems,
			       xq + (i + s < r->n ? i + s : 0) * r->in_elems, r->in_elems);
		rc = graph_ref_run(d, ins, outs, NULL, NULL, msg, sizeof(msg));
		if (rc)
			fprintf(stderr, "%s: graph_ref: %s\n", r->tag,
				rc == -ENOTSUP ? msg : strerror(-rc));
		for (uint32_t s = 0; !rc && s < d->batch && i + s < r->n; s++)
			memcpy(acc + (i + s) * r->classes * r->esz, out + s * r->classes * r->esz,
			       r->classes * r->esz);
	}
	free(in);
	free(out);
	return rc;
}

/* --- TV_REF_LAYERS=1: per node, image 0, the int8 tensor against the float one --- */

struct layers {
	struct run *r;
	float **f;		/* per cv tensor, the float executor's (NCHW) */
};

static void keep_float(void *ctx, int t, const float *data)
{
	struct layers *ls = ctx;
	int64_t n = cv_tensor_elems(&ls->r->g->tensors[t]);

	ls->f[t] = malloc(n * sizeof(float));
	if (ls->f[t])
		memcpy(ls->f[t], data, n * sizeof(float));
}

static void compare_node(void *arg, uint32_t image, uint32_t node, const void *data, size_t bytes)
{
	struct layers *ls = arg;
	const struct rkaccel_graph_desc *d = rkaccel_graph_desc(ls->r->g3);
	const struct rkaccel_graph_tensor *o = &d->tensors[d->nodes[node].output];
	int t = cv_graph_find(ls->r->g, o->name);
	uint32_t h = 1, w = 1, c = 1;
	double ab = 0, aa = 0, bb = 0;

	(void)bytes;
	if (image || t < 0 || !ls->f[t])
		return;
	gref_hwc(o, &h, &w, &c);
	for (uint32_t p = 0; p < h * w; p++)
		for (uint32_t ch = 0; ch < c; ch++) {
			double q = o->type == RKACCEL_DTYPE_INT32 ?
				   ((const int32_t *)data)[p * c + ch] * (double)o->scale :
				   (((const int8_t *)data)[p * c + ch] - o->zero_point) * (double)o->scale;
			double f = ls->f[t][ch * h * w + p];

			ab += q * f;
			aa += q * q;
			bb += f * f;
		}
	printf("# node %3u %-15s %-60s cosine %.5f\n", node, rkaccel_graph_op_name(d->nodes[node].op),
	       o->name, ab / (sqrt(aa * bb) + 1e-300));
}

static void per_layer(struct run *r, const int8_t *xq)
{
	const struct rkaccel_graph_desc *d = rkaccel_graph_desc(r->g3);
	struct layers ls = { r, calloc(r->g->n_tensors, sizeof(float *)) };
	const float *ins[1] = { r->test.data };
	float *logits = malloc(r->classes * sizeof(float));
	int8_t *in = malloc(d->batch * r->in_elems);
	int32_t *out = malloc(d->batch * r->classes * sizeof(int32_t));
	float *outs[1] = { logits };
	struct cv_diag dg = { 0 };
	char msg[256];

	if (ls.f && logits && in && out && !cv_exec_visit(r->g, ins, outs, keep_float, &ls, &dg)) {
		const void *gi[1] = { in };
		void *go[1] = { out };

		for (uint32_t s = 0; s < d->batch; s++)
			memcpy(in + s * r->in_elems, xq, r->in_elems);
		graph_ref_run(d, gi, go, compare_node, &ls, msg, sizeof(msg));
	}
	cv_diag_free(&dg);
	for (int t = 0; ls.f && t < r->g->n_tensors; t++)
		free(ls.f[t]);
	free(ls.f);
	free(logits);
	free(in);
	free(out);
}

static int emit(struct run *r, const int8_t *xq, const uint8_t *acc)
{
	char path[4096], line[256];

	snprintf(path, sizeof(path), "%s/tv_%s.in", r->out_dir, r->tag);
	if (write_file(path, xq, EMIT_IMAGES * r->in_elems, "wb"))
		return -1;
	snprintf(path, sizeof(path), "%s/tv_%s.expected", r->out_dir, r->tag);
	if (write_file(path, acc, EMIT_IMAGES * r->classes * r->esz, "wb"))
		return -1;
	snprintf(path, sizeof(path), "%s/tv.txt", r->out_dir);
	snprintf(line, sizeof(line), "tv_%s %dx%d %lld %lld\n", r->net, r->size, r->size,
		 (long long)r->in_elems, (long long)(r->classes * r->esz));
	return write_file(path, line, strlen(line), "ab");
}

int main(int argc, char **argv)
{
	struct run r = { 0 };
	double rel, cmin = 2, csum = 0, bound, t0;
	float *logits = NULL;
	uint8_t *acc = NULL;
	int8_t *xq = NULL;

	if (argc < 6 || argc > 7 || (r.size = atoi(argv[3])) < 32 || (bound = atof(argv[4])) <= 0 ||
	    (argc == 7 && cv_algo_from_name(argv[6]) < 0)) {
		fprintf(stderr, "usage: tv_ref DIR NET SIZE MIN_COSINE OUT_DIR [normal|mmse|kl_divergence]\n");
		return 2;
	}
	r.dir = argv[1];
	r.net = argv[2];
	r.out_dir = argv[5];
	r.algo = argc == 7 ? (enum cv_algo)cv_algo_from_name(argv[6]) : CV_ALGO_NORMAL;
	snprintf(r.tag, sizeof(r.tag), "%s-%dx%d", r.net, r.size, r.size);
	printf("TAP version 13\n1..6\n");
	if (convert(&r) || load_data(&r))
		return 1;
	logits = malloc(r.n * r.classes * sizeof(float));
	acc = malloc(r.n * r.classes * r.esz);
	xq = malloc(r.n * r.in_elems);
	if (!logits || !acc || !xq || run_float(&r, logits, xq, &rel))
		return 1;
	tap(rel <= MAX_REL_DIFF, "float executor against PyTorch on %lld images: max |diff| / max |torch| %.3g (bound %g)",
	    (long long)r.n, rel, MAX_REL_DIFF);
	if (getenv("TV_REF_LAYERS"))
		per_layer(&r, xq);
	t0 = now_s();
	if (run_int8(&r, xq, acc))
		return 1;
	printf("# host int8 executor (graph_ref.h): %.1f s for %lld images\n", now_s() - t0,
	       (long long)r.n);
	for (int64_t i = 0; i < r.n; i++) {
		const struct rkaccel_graph_tensor *o =
			&rkaccel_graph_desc(r.g3)->tensors[rkaccel_graph_desc(r.g3)->outputs[0]];
		double *deq = malloc(r.classes * sizeof(double)), c;

		if (!deq)
			return 1;
		for (int64_t k = 0; k < r.classes; k++)	/* int32 logits, or int8 (a pool's) */
			deq[k] = r.esz == 4 ? ((const int32_t *)acc)[i * r.classes + k] * (double)o->scale :
				 (((const int8_t *)acc)[i * r.classes + k] - o->zero_point) *
				 (double)o->scale;
		c = cosine(logits + i * r.classes, deq, r.classes);
		printf("# image %lld: cosine %.6f\n", (long long)i, c);
		cmin = fmin(cmin, c);
		csum += c;
		free(deq);
	}
	tap(cmin >= bound, "int8 logits against float: cosine min %.4f (bound %.4f)", cmin,
		 bound);
	printf("tv: %s: float vs torch max rel diff %.2g, int8 cosine min %.4f mean %.4f on %lld images\n",
	       r.tag, rel, cmin, csum / r.n, (long long)r.n);
	tap(!emit(&r, xq, acc), "the first %d images' inputs and host outputs written to %s",
		  EMIT_IMAGES, r.out_dir);
	free(logits);
	free(acc);
	free(xq);
	rkaccel_graph_free(r.g3);
	cv_lowered_free(&r.lw);
	cv_graph_free(r.g);
	cv_array_free(&r.test);
	cv_array_free(&r.ref);
	return tap_failed || tap_n != 6 ? 1 : 0;
}
