// SPDX-License-Identifier: MIT
/*
 * Calibration: the float executor runs every sample of the dataset and each
 * tensor it makes is measured: min and max in a first pass, then (for the
 * mmse and kl_divergence algorithms) a histogram of CV_HIST_BINS bins over
 * [min, max] in a second. Samples run in file order, so the statistics, and
 * the model made from them, are the same on every run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quant.h"

struct calib_run {
	const struct cv_graph *g;
	struct cv_calib *c;
	bool hist;
};

static void see_minmax(struct cv_stats *s, const float *x, int64_t n)
{
	for (int64_t i = 0; i < n; i++) {
		if (x[i] != x[i])	/* NaN: no range */
			continue;
		if (!s->seen || x[i] < s->min)
			s->min = x[i];
		if (!s->seen || x[i] > s->max)
			s->max = x[i];
		s->seen = true;
	}
}

static void see_hist(struct cv_stats *s, const float *x, int64_t n)
{
	double span = (double)s->max - s->min;

	if (!s->hist)
		return;
	for (int64_t i = 0; i < n; i++) {
		if (x[i] != x[i])
			continue;
		int64_t b = span > 0 ? (int64_t)(((double)x[i] - s->min) / span * CV_HIST_BINS) : 0;

		s->hist[b < 0 ? 0 : b >= CV_HIST_BINS ? CV_HIST_BINS - 1 : b] += 1.0;
	}
}

static void visit(void *ctx, int t, const float *data)
{
	struct calib_run *r = ctx;
	struct cv_stats *s = &r->c->t[t];
	int64_t n = cv_tensor_elems(&r->g->tensors[t]);

	if (r->hist)
		see_hist(s, data, n);
	else
		see_minmax(s, data, n);
}

static void free_inputs(float **in, int n)
{
	for (int i = 0; i < n; i++)
		free(in[i]);
	free(in);
}

/* One pass of the float executor over every sample. */
static int calib_pass(const struct cv_graph *g, const struct cv_dataset *ds,
		      struct calib_run *r, struct cv_diag *d)
{
	float **in = calloc(g->n_inputs, sizeof(float *));
	float **out = calloc(g->n_outputs, sizeof(float *));
	int rc = -1;

	if (!in || !out)
		goto oom;
	for (int i = 0; i < g->n_inputs; i++)
		if (!(in[i] = malloc(cv_tensor_elems(&g->tensors[g->inputs[i]]) * sizeof(float) + 1)))
			goto oom;
	for (int i = 0; i < g->n_outputs; i++)
		if (!(out[i] = malloc(cv_tensor_elems(&g->tensors[g->outputs[i]]) * sizeof(float) + 1)))
			goto oom;
	for (int s = 0; s < ds->n_samples; s++) {
		for (int i = 0; i < g->n_inputs; i++)
			if (cv_dataset_sample(ds, s, i, &g->tensors[g->inputs[i]], in[i], d))
				goto out;
		if (cv_exec_visit(g, (const float *const *)in, out, visit, r, d))
			goto out;
	}
	rc = 0;
	goto out;
oom:
	cv_diag_add(d, "out of memory");
out:
	if (in)
		free_inputs(in, g->n_inputs);
	if (out)
		free_inputs(out, g->n_outputs);
	return rc;
}

int cv_calibrate(const struct cv_graph *g, const struct cv_dataset *ds, bool hist,
		 struct cv_calib *c, struct cv_diag *d)
{
	struct calib_run r = { .g = g, .c = c };

	c->n_tensors = g->n_tensors;
	c->t = calloc(g->n_tensors + 1, sizeof(*c->t));
	if (!c->t) {
		cv_diag_add(d, "out of memory");
		return -1;
	}
	if (ds->n_inputs != g->n_inputs) {
		cv_diag_add(d, "the dataset has %d path(s) per sample, the model %d input(s)",
			    ds->n_inputs, g->n_inputs);
		goto fail;
	}
	if (calib_pass(g, ds, &r, d))
		goto fail;
	if (!hist)
		return 0;
	for (int t = 0; t < g->n_tensors; t++)
		if (c->t[t].seen && !(c->t[t].hist = calloc(CV_HIST_BINS, sizeof(double)))) {
			cv_diag_add(d, "out of memory");
			goto fail;
		}
	r.hist = true;
	if (!calib_pass(g, ds, &r, d))
		return 0;
fail:
	cv_calib_free(c);
	return -1;
}

void cv_calib_free(struct cv_calib *c)
{
	for (int t = 0; c->t && t < c->n_tensors; t++)
		free(c->t[t].hist);
	free(c->t);
	c->t = NULL;
}
