// SPDX-License-Identifier: MIT
/*
 * The toolkit's mean_values/std_values and quant_img_RGB2BGR folded into the
 * first convolution, so that the converted model takes the camera's pixels:
 * the ONNX model computes conv(w, (x[perm c] - mean[c]) / std[c]) + b, which
 * is conv(w', x) + b' with
 *   w'[o][perm c][k] = w[o][c][k] / std[c]
 *   b'[o]            = b[o] - sum over c, k of w[o][c][k] * mean[c] / std[c]
 * (perm swaps channels 0 and 2 for a model that takes BGR, else none).
 *
 * This is exact only where every tap reads a pixel. The float model pads the
 * normalised input with 0, a raw pixel equal to the mean; the NPU pads with
 * the input's zero point, one scalar, which stands for the raw pixel 0. So a
 * padded first convolution (with a mean not all 0) is not folded: the
 * normalisation stays in front of the graph, recorded in the 3.0 file's
 * input record for the runtime to apply, and the message says so.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "quant.h"

/* The model channel that camera channel @c feeds. */
static int64_t perm(const struct cv_norm *nm, int64_t c)
{
	return nm->bgr && (c == 0 || c == 2) ? 2 - c : c;
}

static float mean_of(const struct cv_norm *nm, int64_t c)
{
	return nm->n_ch ? nm->mean[c] : 0.0f;
}

static float std_of(const struct cv_norm *nm, int64_t c)
{
	return nm->n_ch ? nm->std[c] : 1.0f;
}

/* NULL when conv @n can take the fold, else why not. */
static const char *why_not(const struct cv_graph *g, const struct cv_node *n,
			   const struct cv_tensor *x, const struct cv_norm *nm,
			   struct cv_diag *d)
{
	const struct cv_tensor *w;
	struct cv_window win;
	bool mean_zero = true;

	if (n->op != CV_OP_CONV)
		return "its reader is not a convolution";
	w = &g->tensors[n->in[1]];
	if (cv_attr_int(n, "group", 1) != 1 || !w->data || w->dtype != CV_F32 || w->rank != 4 ||
	    w->dims[1] != x->dims[1])
		return "its convolution is grouped or has no constant float weights";
	if (cv_window_get(n, x->dims[2], x->dims[3], w->dims[2], w->dims[3], &win, d))
		return "its convolution's window is not valid";
	for (int c = 0; c < nm->n_ch; c++)
		mean_zero &= nm->mean[c] == 0.0f;
	if ((win.pt || win.pl || win.pb || win.pr) && !mean_zero)
		return "its convolution pads, and the NPU pads with one scalar (the raw pixel 0), not the per-channel mean";
	return NULL;
}

static int fold_into(struct cv_graph *g, struct cv_node *n, const struct cv_norm *nm)
{
	const struct cv_tensor *wt = &g->tensors[n->in[1]];
	const float *w = wt->data;
	const float *b = n->n_in > 2 && n->in[2] >= 0 ? g->tensors[n->in[2]].data : NULL;
	int64_t o_n = wt->dims[0], c_n = wt->dims[1], k_n = wt->dims[2] * wt->dims[3];
	float *nw = malloc(o_n * c_n * k_n * sizeof(float) + 1);
	float *nb = malloc(o_n * sizeof(float) + 1);
	int rc = -1, tw, tb, *in;

	if (!nw || !nb)
		goto out;
	for (int64_t o = 0; o < o_n; o++) {
		double acc = b ? b[o] : 0.0;

		for (int64_t c = 0; c < c_n; c++)
			for (int64_t k = 0; k < k_n; k++) {
				double v = w[(o * c_n + c) * k_n + k];

				nw[(o * c_n + perm(nm, c)) * k_n + k] = (float)(v / std_of(nm, c));
				acc -= v * mean_of(nm, c) / std_of(nm, c);
			}
		nb[o] = (float)acc;
	}
	tw = cv_new_const_f32(g, wt->rank, wt->dims, nw);
	tb = cv_new_const_f32(g, 1, &o_n, nb);
	in = realloc(n->in, 3 * sizeof(int));
	if (tw < 0 || tb < 0 || !in)
		goto out;
	n->in = in;
	n->in[1] = tw;
	n->in[2] = tb;
	n->n_in = 3;
	rc = 0;
out:
	free(nw);
	free(nb);
	return rc;
}

int cv_fold_normalise(struct cv_graph *g, struct cv_norm *nm, struct cv_diag *d)
{
	const struct cv_tensor *x;
	const char *why;
	int first;

	nm->folded = false;
	nm->note[0] = '\0';
	if (!nm->set)
		return 0;
	if (g->n_inputs != 1) {
		cv_diag_add(d, "mean/std or channel order for a model of %d inputs: only one input is taken",
			    g->n_inputs);
		return -1;
	}
	x = &g->tensors[g->inputs[0]];
	if (!x->shape_known || x->rank != 4 || x->dims[0] != 1) {
		cv_diag_add(d, "input '%s': mean/std or channel order need an image input [1, C, H, W]",
			    x->name);
		return -1;
	}
	if ((nm->n_ch && nm->n_ch != x->dims[1]) || (nm->bgr && x->dims[1] != 3)) {
		cv_diag_add(d, "input '%s' has %lld channel(s): %d mean/std value(s)%s", x->name,
			    (long long)x->dims[1], nm->n_ch, nm->bgr ? " and RGB2BGR (3 channels)" : "");
		return -1;
	}
	for (int c = 0; c < nm->n_ch; c++)
		if (!(nm->std[c] > 1e-6f && nm->std[c] < 1e30f) || nm->mean[c] != nm->mean[c] ||
		    nm->mean[c] < -1e30f || nm->mean[c] > 1e30f) {
			cv_diag_add(d, "channel %d: mean %g must be finite, std %g positive", c,
				    (double)nm->mean[c], (double)nm->std[c]);
			return -1;
		}
	if (cv_graph_consumers(g, g->inputs[0], &first) != 1)
		why = "it has more than one reader";
	else
		why = why_not(g, &g->nodes[first], x, nm, d);
	if (why) {
		snprintf(nm->note, sizeof(nm->note),
			 "input '%s': mean/std/channel order not folded: %s; recorded in the 3.0 file's input for the runtime",
			 x->name, why);
		return 0;
	}
	if (fold_into(g, &g->nodes[first], nm)) {
		cv_diag_add(d, "out of memory");
		return -1;
	}
	nm->folded = true;
	snprintf(nm->note, sizeof(nm->note),
		 "input '%s': mean/std%s folded into '%s': it takes raw pixels", x->name,
		 nm->bgr ? " and RGB2BGR" : "", g->nodes[first].name);
	return 0;
}

void cv_norm_apply(const struct cv_norm *nm, bool image, const struct cv_tensor *t, float *x)
{
	int64_t c_n = t->dims[1], hw = t->dims[2] * t->dims[3];

	if (!nm || !nm->set || t->rank != 4)
		return;
	/*
	 * Images decode as RGB, a .npy holds the ONNX model's order: swap an
	 * image for an unfolded BGR model, a .npy for a folded one (which takes RGB).
	 */
	if (nm->bgr && image != nm->folded)
		for (int64_t i = 0; i < hw; i++) {
			float v = x[i];

			x[i] = x[2 * hw + i];
			x[2 * hw + i] = v;
		}
	if (nm->folded)
		return;
	for (int64_t c = 0; c < c_n && c < nm->n_ch; c++)
		for (int64_t i = 0; i < hw; i++)
			x[c * hw + i] = (x[c * hw + i] - nm->mean[c]) / nm->std[c];
}
