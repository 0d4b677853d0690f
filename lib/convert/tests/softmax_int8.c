// SPDX-License-Identifier: GPL-2.0-only
/*
 * softmax_int8: a Softmax after the last NPU node, through the whole int8
 * flow on the host (graph_models.py's softmax, softmax11 and seg_softmax).
 * Converts each (normal, per channel) to a 3.0 graph and checks:
 * - its output is the float32 of a softmax, after a dequantize when the
 *   NPU's last node is a convolution (its int32 logits);
 * - the runtime's lowering takes the softmax as the model's CPU op
 *   (rkaccel_model_output_op()), and the model's CPU reference (net_ref.h,
 *   what the NPU runs) through rkaccel_output_op_run() equals the graph's
 *   reference (graph_ref.h) bit for bit on every calibration sample;
 * - against the float executor: every probability within MAX_ABS_ERR, the
 *   top class the same for at least MIN_TOP1 of the rows, each row's sum 1
 *   within 1e-5.
 * TAP; fails if any check fails.
 *
 * usage: softmax_int8 DIR NAME... (graph_models.py's OUTDIR, model names)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_ref.h"
#include "net_ref.h"
#include "quant.h"
#include "tap.h"

#define MAX_ABS_ERR	0.03
#define MIN_TOP1	0.9

struct cmp {
	double max_err, max_sum_err;
	int rows, same_top;
};

/* Row r of NHWC @q (classes @c) against NCHW @f ([c][hw]): error, sum, top class. */
static void compare_rows(const float *q, const float *f, int64_t c, int64_t hw, struct cmp *s)
{
	for (int64_t p = 0; p < hw; p++) {
		int64_t tq = 0, tf = 0;
		double sum = 0;

		for (int64_t k = 0; k < c; k++) {
			double a = q[p * c + k], b = f[k * hw + p];

			s->max_err = fmax(s->max_err, fabs(a - b));
			sum += a;
			tq = a > q[p * c + tq] ? k : tq;
			tf = b > f[tf * hw + p] ? k : tf;
		}
		s->max_sum_err = fmax(s->max_sum_err, fabs(sum - 1.0));
		s->same_top += tq == tf;
		s->rows++;
	}
}

/* Each sample: the lowered model plus its CPU op against graph_ref, and against float. */
static void run_samples(const char *name, const struct cv_graph *g, const struct cv_lowered *lw,
			const struct rkaccel_graph_desc *d, const struct rkaccel_model *m,
			const struct rkaccel_output_op *op, const char *ds_path)
{
	const struct cv_tensor *xt = &g->tensors[lw->input], *yt = &g->tensors[lw->output];
	const struct rkaccel_graph_tensor *gi = &d->tensors[d->inputs[0].tensor];
	int64_t nx = cv_tensor_elems(xt), ny = cv_tensor_elems(yt), oc = yt->dims[1];
	float *x = malloc(nx * sizeof(float)), *y = malloc(ny * sizeof(float));
	float *ref = malloc(ny * sizeof(float)), *out = malloc(ny * sizeof(float));
	int32_t *npu = malloc(ny * sizeof(int32_t));
	int8_t *xq = malloc(nx);
	struct cv_qparam qp = { true, gi->scale, gi->zero_point };
	struct cv_dataset ds = { 0 };
	struct cv_diag dg = { 0 };
	struct cmp s = { 0 };
	int same = 0, n = 0, rc;
	char msg[256] = "";

	rc = !x || !y || !ref || !out || !npu || !xq || cv_dataset_load(ds_path, 1, &ds, &dg);
	for (int i = 0; !rc && i < ds.n_samples; i++, n++) {
		const float *fin[1] = { x };
		float *fout[1] = { y };
		const void *ins[1] = { xq };
		void *outs[1] = { ref };

		rc = cv_dataset_sample(&ds, i, 0, xt, x, &dg) || cv_exec(g, fin, fout, &dg);
		if (rc)
			break;
		cv_quantize_input(x, xt->dims[1], xt->dims[2], xt->dims[3], &qp, xq);
		rc = graph_ref_run(d, ins, outs, NULL, NULL, msg, sizeof(msg)) ||
		     ref_model_net(m, xq, npu) || rkaccel_output_op_run(op, npu, 1, out);
		if (rc)
			break;
		same += !memcmp(out, ref, ny * sizeof(float));
		compare_rows(out, y, oc, ny / oc, &s);
	}
	if (rc)
		fprintf(stderr, "%s%s\n", dg.text ? dg.text : "", msg);
	tap(!rc && n && same == n,
	    "%s: the lowered model and its CPU op equal the graph reference on %d of %d samples",
	    name, same, n);
	tap(!rc && n && s.max_err <= MAX_ABS_ERR,
	    "%s: int8 against float: largest probability error %.4f (at most %.2f)", name,
	    s.max_err, MAX_ABS_ERR);
	tap(!rc && s.rows && s.same_top >= MIN_TOP1 * s.rows,
	    "%s: the same top class on %d of %d rows (at least %.0f%%)", name, s.same_top, s.rows,
	    100 * MIN_TOP1);
	tap(!rc && s.rows && s.max_sum_err <= 1e-5, "%s: every row sums to 1 within %.1e", name,
	    s.max_sum_err);
	cv_dataset_free(&ds);
	cv_diag_free(&dg);
	free(x);
	free(y);
	free(ref);
	free(out);
	free(npu);
	free(xq);
}

/* The graph's last nodes: [dequantize,] softmax, its output float32. */
static bool softmax_tail(const struct rkaccel_graph_desc *d, bool *dequant)
{
	const struct rkaccel_graph_node *last = &d->nodes[d->num_nodes - 1];

	*dequant = d->num_nodes > 1 && d->nodes[d->num_nodes - 2].op == RKACCEL_GOP_DEQUANTIZE;
	return last->op == RKACCEL_GOP_SOFTMAX && last->output == d->outputs[0] &&
	       d->tensors[last->output].type == RKACCEL_DTYPE_FLOAT32;
}

static void check_model(const char *dir, const char *name)
{
	char onnx[4096], ds[4096], path[4096], msg[512];
	struct cv_quant_opts o = { CV_ALGO_NORMAL, false, NULL };
	struct cv_lowered lw = { 0 };
	struct cv_graph *g = NULL;
	struct rkaccel_graph *g3 = NULL;
	struct rkaccel_model *m = NULL;
	struct rkaccel_output_op op;
	struct cv_diag d = { 0 };
	const struct rkaccel_graph_desc *gd;
	bool dequant, tail;
	int rc;

	snprintf(onnx, sizeof(onnx), "%s/%s.onnx", dir, name);
	snprintf(ds, sizeof(ds), "%s/dataset.txt", dir);
	snprintf(path, sizeof(path), "%s/%s.rkml", dir, name);
	rc = cv_convert(onnx, ds, &o, &g, &lw, &d);
	if (!tap(!rc && lw.is_graph, "%s.onnx converted to a 3.0 graph%s%s", name, rc ? ": " : "",
		 rc && d.text ? d.text : ""))
		goto out;
	rc = cv_save_graph(g, &lw, 1, NULL, path, msg, sizeof(msg)) ||
	     rkaccel_graph_load(path, &g3, msg, sizeof(msg));
	if (!tap(!rc, "%s: written and reloaded%s%s", name, rc ? ": " : "", rc ? msg : ""))
		goto out;
	gd = rkaccel_graph_desc(g3);
	tail = softmax_tail(gd, &dequant);
	tap(tail, "%s: ends in a float32 softmax%s", name,
	    dequant ? " of the dequantized int32 logits" : "");
	rc = rkaccel_graph_to_model(gd, &m, msg, sizeof(msg));
	if (!tap(!rc, "%s: the runtime's lowering takes it%s%s", name, rc ? ": " : "", rc ? msg : ""))
		goto out;
	rc = rkaccel_model_output_op(m, &op);
	if (tap(!rc && (op.flags & RKACCEL_OUTPUT_SOFTMAX) && op.in_bytes == (dequant ? 4u : 1u),
		"%s: the model's CPU op is the softmax, of %u-byte elements", name, op.in_bytes))
		run_samples(name, g, &lw, gd, m, &op, ds);
out:
	rkaccel_model_free(m);
	rkaccel_graph_free(g3);
	cv_lowered_free(&lw);
	cv_graph_free(g);
	cv_diag_free(&d);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: softmax_int8 DIR NAME...\n");
		return 2;
	}
	printf("TAP version 13\n");
	for (int i = 2; i < argc; i++)
		check_model(argv[1], argv[i]);
	printf("1..%d\n", tap_n);
	return tap_failed || !tap_n ? 1 : 0;
}
