// SPDX-License-Identifier: MIT
/*
 * The range each activation tensor keeps, by the toolkit's algorithms:
 *   normal         the calibrated min and max;
 *   mmse           the window [f min, f max] (f in 1/128 .. 1) whose int8
 *                  quantization has the least mean squared error over the
 *                  histogram (rounding inside, clipping outside);
 *   kl_divergence  the window (f in 16/128 .. 1) whose quantized histogram
 *                  is closest to the float one in KL divergence: outliers
 *                  folded into the edge bins, each int8 level's mass spread
 *                  evenly over its non-empty bins (as TensorRT's calibrator
 *                  does, with the asymmetric levels of this format).
 * Ties keep the wider window. Everything is deterministic.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "quant.h"

#define ALGO_STEPS 128

static const char *const algo_names[] = {
	[CV_ALGO_NORMAL] = "normal", [CV_ALGO_MMSE] = "mmse", [CV_ALGO_KL] = "kl_divergence",
};

int cv_algo_from_name(const char *name)
{
	for (int a = 0; a < (int)(sizeof(algo_names) / sizeof(algo_names[0])); a++)
		if (!strcmp(name, algo_names[a]))
			return a;
	return -1;
}

const char *cv_algo_name(enum cv_algo a)
{
	return algo_names[a];
}

void cv_range_to_qparams(float lo, float hi, float *scale, int32_t *zp)
{
	double l = lo < 0 ? lo : 0, h = hi > 0 ? hi : 0, s = (h - l) / 255.0, z;

	if (!(s >= FLT_MIN) || !isfinite(s))
		s = s > FLT_MAX ? FLT_MAX : 1.0 / 255.0;
	*scale = (float)s;
	z = round(-128.0 - l / *scale);
	*zp = z < -128 ? -128 : z > 127 ? 127 : (int32_t)z;
}

/* x quantized and back, as the int8 tensor holds it. */
static double fake_quant(double x, float scale, int32_t zp)
{
	double q = round(x / scale) + zp;

	q = q < -128 ? -128 : q > 127 ? 127 : q;
	return (q - zp) * scale;
}

static double bin_center(const struct cv_stats *s, int b)
{
	return s->min + ((double)s->max - s->min) * (b + 0.5) / CV_HIST_BINS;
}

static double mse_of(const struct cv_stats *s, float lo, float hi)
{
	float scale;
	int32_t zp;
	double err = 0;

	cv_range_to_qparams(lo, hi, &scale, &zp);
	for (int b = 0; b < CV_HIST_BINS; b++) {
		double c = bin_center(s, b), e = c - fake_quant(c, scale, zp);

		err += s->hist[b] * e * e;
	}
	return err;
}

/*
 * KL(P || Q) of the histogram against its int8 image in [lo, hi]: P has the
 * outliers folded into its edge bins, Q is made from the bins inside alone
 * (so clipping costs what it moves), each level's mass spread evenly over
 * its non-empty bins.
 */
static double kl_of(const struct cv_stats *s, float lo, float hi)
{
	double p[CV_HIST_BINS], mass[256] = { 0 }, p_total = 0, q_total = 0, kl = 0;
	int level[CV_HIST_BINS], nonzero[256] = { 0 }, first = -1, last = -1;
	float scale;
	int32_t zp;

	cv_range_to_qparams(lo, hi, &scale, &zp);
	for (int b = 0; b < CV_HIST_BINS; b++) {
		double c = bin_center(s, b);

		p[b] = 0;
		if (c >= lo && c <= hi) {
			if (first < 0)
				first = b;
			last = b;
		}
	}
	if (first < 0)
		return INFINITY;
	for (int b = 0; b < CV_HIST_BINS; b++) {
		int e = b < first ? first : b > last ? last : b;	/* outliers to the edges */

		p[e] += s->hist[b];
		p_total += s->hist[b];
	}
	for (int b = first; b <= last; b++) {
		double q = round(bin_center(s, b) / scale) + zp;

		level[b] = (int)(q < -128 ? -128 : q > 127 ? 127 : q) + 128;
		mass[level[b]] += s->hist[b];
		nonzero[level[b]] += s->hist[b] > 0;
		q_total += s->hist[b];
	}
	if (!(q_total > 0))
		return INFINITY;
	for (int b = first; b <= last; b++) {
		double pb = p[b] / p_total, qb;

		if (!(p[b] > 0))
			continue;
		/* a bin that only the outliers fill: Q has nothing there */
		qb = s->hist[b] > 0 ? mass[level[b]] / nonzero[level[b]] / q_total : 1e-12;
		kl += pb * log(pb / qb);
	}
	return kl;
}

void cv_algo_range(const struct cv_stats *s, enum cv_algo algo, float *lo, float *hi)
{
	double best = INFINITY;
	int first = algo == CV_ALGO_KL ? ALGO_STEPS / 8 : 1;

	*lo = s->min;
	*hi = s->max;
	if (algo == CV_ALGO_NORMAL || !s->hist || !(s->max > s->min))
		return;
	for (int i = ALGO_STEPS; i >= first; i--) {
		float l = (float)((double)s->min * i / ALGO_STEPS);
		float h = (float)((double)s->max * i / ALGO_STEPS);
		double e = algo == CV_ALGO_MMSE ? mse_of(s, l, h) : kl_of(s, l, h);

		if (e < best) {
			best = e;
			*lo = l;
			*hi = h;
		}
	}
}
