// SPDX-License-Identifier: MIT
/*
 * Float executor: pooling. MaxPool ignores padding; AveragePool divides by the
 * window clipped to the padded input when count_include_pad is set (so a
 * ceil_mode window hanging past the padding does not count the overhang, as
 * PyTorch does), else by the number of real input pixels it covers.
 */
#include <math.h>

#include "internal.h"

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static float pool_one(const float *plane, int64_t H, int64_t W, const struct cv_window *w,
		      int64_t oy, int64_t ox, bool is_max, bool include_pad)
{
	int64_t y0 = oy * w->sh - w->pt, x0 = ox * w->sw - w->pl;
	int64_t y1 = min64(y0 + (w->kh - 1) * w->dh + 1, H + w->pb);
	int64_t x1 = min64(x0 + (w->kw - 1) * w->dw + 1, W + w->pr);
	double acc = is_max ? -INFINITY : 0.0;
	int64_t count = 0;

	for (int64_t y = y0; y < y1; y += w->dh)
		for (int64_t x = x0; x < x1; x += w->dw) {
			if (y < 0 || y >= H || x < 0 || x >= W)
				continue;
			float v = plane[y * W + x];

			acc = is_max ? fmax(acc, v) : acc + v;
			count++;
		}
	if (is_max)
		return (float)acc;
	if (include_pad)
		count = ((y1 - y0 + w->dh - 1) / w->dh) * ((x1 - x0 + w->dw - 1) / w->dw);
	return count ? (float)(acc / (double)count) : 0.0f;
}

int cv_exec_pool(const struct cv_graph *g, const struct cv_node *n, float **bufs,
		 struct cv_diag *d)
{
	const struct cv_tensor *x = &g->tensors[n->in[0]];
	const float *in = bufs[n->in[0]];
	float *out = bufs[n->out[0]];
	int64_t planes = x->dims[0] * x->dims[1], H = x->dims[2], W = x->dims[3];
	bool is_max = n->op == CV_OP_MAXPOOL;
	bool include_pad = cv_attr_int(n, "count_include_pad", 0) != 0;
	struct cv_window w;

	if (n->op == CV_OP_GLOBALAVGPOOL) {
		for (int64_t p = 0; p < planes; p++) {
			double acc = 0;

			for (int64_t i = 0; i < H * W; i++)
				acc += in[p * H * W + i];
			out[p] = (float)(acc / (double)(H * W));
		}
		return 0;
	}
	if (cv_window_get(n, H, W, 0, 0, &w, d))
		return -1;
	for (int64_t p = 0; p < planes; p++)
		for (int64_t oy = 0; oy < w.oh; oy++)
			for (int64_t ox = 0; ox < w.ow; ox++)
				out[(p * w.oh + oy) * w.ow + ox] =
					pool_one(in + p * H * W, H, W, &w, oy, ox, is_max,
						 include_pad);
	return 0;
}
