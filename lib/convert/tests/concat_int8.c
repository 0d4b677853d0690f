// SPDX-License-Identifier: GPL-2.0-only
/*
 * concat_int8: Concat along channels through the whole int8 flow on the
 * host (make_refs.py's concat/concat.onnx: two concats sharing an input,
 * one reading the graph input, ceil-mode max pools, a concat of the pools).
 * Converts it (normal, per channel) to a 3.0 graph and checks:
 * - every concat input has the concat's scale and zero point (the format
 *   wants it; quantize.c unifies the ranges), and the concat's range holds
 *   each input's calibrated range (the union);
 * - the max pools carry the ceil flag;
 * - the runtime's lowering (rkaccel_graph_to_model(): producers write into
 *   the concat, copy layers for the graph input and a tensor already in a
 *   concat) run on the selftests' CPU reference of the model (net_ref.h,
 *   what the NPU runs) equals the 3.0 graph's reference (graph_ref.h) byte
 *   for byte, on every calibration sample;
 * - the int8 output, dequantized, against the float executor's: cosine at
 *   least MIN_COSINE.
 * TAP; fails if any check fails.
 *
 * usage: concat_int8 DIR (make_refs.py's OUTDIR/concat)
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_ref.h"
#include "net_ref.h"
#include "quant.h"
#include "tap.h"

#define MIN_COSINE 0.99

/* Every concat input quantized as the concat; returns the concats seen. */
static int check_concat_quant(const struct rkaccel_graph_desc *d)
{
	int cats = 0;

	for (uint32_t i = 0; i < d->num_nodes; i++) {
		const struct rkaccel_graph_node *n = &d->nodes[i];
		const struct rkaccel_graph_tensor *o = &d->tensors[n->output];
		bool same = true;

		if (n->op != RKACCEL_GOP_CONCAT)
			continue;
		cats++;
		for (uint32_t k = 0; k < n->num_inputs; k++) {
			const struct rkaccel_graph_tensor *t = &d->tensors[n->inputs[k]];

			same = same && t->scale == o->scale && t->zero_point == o->zero_point;
		}
		tap(same, "concat '%s': its %u inputs have its scale %g and zero point %d", o->name,
		    n->num_inputs, (double)o->scale, o->zero_point);
	}
	return cats;
}

/* The concat's int8 range holds each input's calibrated float range. */
static void check_union(const struct cv_graph *g, const struct cv_calib *c,
			const struct cv_qgraph *q)
{
	for (int i = 0; i < g->n_nodes; i++) {
		const struct cv_node *n = &g->nodes[i];
		const struct cv_qparam *p = &q->t[n->out[0]];
		double lo = (-128 - p->zp) * (double)p->scale, hi = (127 - p->zp) * (double)p->scale;
		bool ok = true;

		if (n->dead || n->op != CV_OP_CONCAT)
			continue;
		for (int k = 0; k < n->n_in; k++) {
			const struct cv_stats *s = &c->t[n->in[k]];

			ok = ok && s->min >= lo - p->scale && s->max <= hi + p->scale;
		}
		tap(ok, "concat '%s': its range [%g, %g] holds every input's", g->tensors[n->out[0]].name,
		    lo, hi);
	}
}

/* Calibrates and quantizes again (as cv_convert() did) to see the ranges. */
static void check_ranges(const char *onnx, const char *ds_path)
{
	struct cv_quant_opts o = { CV_ALGO_NORMAL, false, NULL };
	struct cv_graph *g = cv_onnx_read_file(onnx, &(struct cv_diag){ 0 });
	struct cv_dataset ds = { 0 };
	struct cv_calib c = { 0 };
	struct cv_qgraph q = { 0 };
	struct cv_diag d = { 0 };
	int rc = !g || cv_prepare(g, &d) || cv_dataset_load(ds_path, 1, &ds, &d) ||
		 cv_calibrate(g, &ds, false, &c, &d) || cv_quantize(g, &c, &o, &q, &d);

	if (tap(!rc, "calibrated and quantized again%s%s", rc ? ": " : "", d.text ? d.text : ""))
		check_union(g, &c, &q);
	cv_qgraph_free(&q);
	cv_calib_free(&c);
	cv_dataset_free(&ds);
	cv_graph_free(g);
	cv_diag_free(&d);
}

static void check_ceil(const struct rkaccel_graph_desc *d)
{
	int pools = 0, ceil = 0;

	for (uint32_t i = 0; i < d->num_nodes; i++)
		if (d->nodes[i].op == RKACCEL_GOP_MAXPOOL) {
			pools++;
			ceil += !!(d->nodes[i].flags & RKACCEL_NODE_CEIL_MODE);
		}
	tap(pools == 2 && ceil == 2, "%d of %d max pools in ceil mode (2 of 2 in the model)", ceil,
	    pools);
}

/* Each sample: graph_ref against the runtime's lowering, and against float. */
static void run_samples(const struct cv_graph *g, const struct cv_lowered *lw,
			const struct rkaccel_graph_desc *d, const struct rkaccel_model *m,
			const char *ds_path)
{
	const struct cv_tensor *xt = &g->tensors[lw->input], *yt = &g->tensors[lw->output];
	const struct rkaccel_graph_tensor *gi = &d->tensors[d->inputs[0].tensor];
	const struct rkaccel_graph_tensor *go = &d->tensors[d->outputs[0]];
	int64_t nx = cv_tensor_elems(xt), ny = cv_tensor_elems(yt);
	int64_t C = xt->dims[1], H = xt->dims[2], W = xt->dims[3];
	int64_t oc = yt->dims[1], ohw = ny / oc;
	float *x = malloc(nx * sizeof(float)), *y = malloc(ny * sizeof(float));
	int8_t *xq = malloc(nx);
	int32_t *a = malloc(ny * sizeof(int32_t)), *b = malloc(ny * sizeof(int32_t));
	struct cv_dataset ds = { 0 };
	struct cv_diag dg = { 0 };
	struct cv_qparam qp = { true, gi->scale, gi->zero_point };
	int same = 0, n = 0, rc;
	double worst = 1;
	char msg[256] = "";

	rc = !x || !y || !xq || !a || !b || cv_dataset_load(ds_path, 1, &ds, &dg);
	tap(!rc && go->type == RKACCEL_DTYPE_INT32, "the samples loaded, the output int32");
	for (int s = 0; !rc && s < ds.n_samples; s++, n++) {
		const void *ins[1] = { xq };
		void *outs[1] = { a };
		const float *fin[1] = { x };
		float *fout[1] = { y };
		double ab = 0, aa = 0, bb = 0;

		rc = cv_dataset_sample(&ds, s, 0, xt, x, &dg) || cv_exec(g, fin, fout, &dg);
		if (rc)
			break;
		cv_quantize_input(x, C, H, W, &qp, xq);
		rc = graph_ref_run(d, ins, outs, NULL, NULL, msg, sizeof(msg)) ||
		     ref_model_net(m, xq, b);
		if (rc)
			break;
		same += !memcmp(a, b, ny * sizeof(int32_t));
		for (int64_t p = 0; p < ohw; p++)	/* NHWC int32 against NCHW float */
			for (int64_t c = 0; c < oc; c++) {
				double q = a[p * oc + c] * (double)go->scale, f = y[c * ohw + p];

				ab += q * f;
				aa += q * q;
				bb += f * f;
			}
		worst = fmin(worst, ab / sqrt(aa * bb + 1e-30));
	}
	if (rc)
		fprintf(stderr, "%s%s\n", dg.text ? dg.text : "", msg);
	tap(!rc && n && same == n,
	    "the runtime's lowering on the model reference equals the graph reference on %d of %d samples",
	    same, n);
	tap(!rc && n && worst >= MIN_COSINE, "int8 against float: cosine min %.5f (at least %.2f)",
	    worst, MIN_COSINE);
	cv_dataset_free(&ds);
	cv_diag_free(&dg);
	free(x);
	free(y);
	free(xq);
	free(a);
	free(b);
}

int main(int argc, char **argv)
{
	char onnx[4096], ds[4096], path[4096], msg[512];
	struct cv_quant_opts o = { CV_ALGO_NORMAL, false, NULL };
	struct cv_lowered lw = { 0 };
	struct cv_graph *g = NULL;
	struct rkaccel_graph *g3 = NULL;
	struct rkaccel_model *m = NULL;
	struct cv_diag d = { 0 };
	const struct rkaccel_graph_desc *gd;
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: concat_int8 DIR\n");
		return 2;
	}
	printf("TAP version 13\n");
	snprintf(onnx, sizeof(onnx), "%s/concat.onnx", argv[1]);
	snprintf(ds, sizeof(ds), "%s/dataset.txt", argv[1]);
	snprintf(path, sizeof(path), "%s/concat.rkml", argv[1]);
	rc = cv_convert(onnx, ds, &o, &g, &lw, &d);
	if (!tap(!rc && lw.is_graph, "concat.onnx converted to a 3.0 graph%s%s", rc ? ": " : "",
		 rc && d.text ? d.text : ""))
		goto out;
	rc = cv_save_graph(g, &lw, 1, NULL, path, msg, sizeof(msg)) ||
	     rkaccel_graph_load(path, &g3, msg, sizeof(msg));
	if (!tap(!rc, "written and reloaded%s%s", rc ? ": " : "", rc ? msg : ""))
		goto out;
	gd = rkaccel_graph_desc(g3);
	tap(check_concat_quant(gd) == 3, "3 concats in the graph");
	check_ranges(onnx, ds);
	check_ceil(gd);
	rc = rkaccel_graph_to_model(gd, &m, msg, sizeof(msg));
	if (tap(!rc, "the runtime's lowering takes it%s%s", rc ? ": " : "", rc ? msg : ""))
		run_samples(g, &lw, gd, m, ds);
out:
	printf("1..%d\n", tap_n);
	rkaccel_model_free(m);
	rkaccel_graph_free(g3);
	cv_lowered_free(&lw);
	cv_graph_free(g);
	cv_diag_free(&d);
	return tap_failed || !tap_n ? 1 : 0;
}
