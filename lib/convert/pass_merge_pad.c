// SPDX-License-Identifier: MIT
/*
 * Pass: a Pad that adds nothing is removed; a zero constant Pad on the two
 * spatial axes of a 4-D tensor is merged into the padding of the Conv that
 * alone reads it (or of an AveragePool that then counts the padding: torch
 * exports count_include_pad=True as an explicit Pad before the pool). Any other Pad stays, and the support check
 * refuses it.
 */
#include <math.h>
#include <string.h>

#include "internal.h"

/* Spatial pads [t, l, b, r] of a mergeable Pad; -1 if it is not one. */
static int spatial_pads(const struct cv_graph *g, const struct cv_node *n, int64_t *sp)
{
	const struct cv_tensor *x = &g->tensors[n->in[0]];
	int64_t p[2 * CV_MAX_RANK];
	int k = cv_node_ints_arg(g, n, 1, g->opset < 11 ? "pads" : NULL, p, 2 * CV_MAX_RANK);
	float value = cv_node_float_arg(g, n, 2, g->opset < 11 ? "value" : NULL, 0.0f);

	if (strcmp(cv_attr_string(n, "mode", "constant"), "constant") || value != 0.0f ||
	    x->rank != 4 || k != 8 || (n->n_in > 3 && n->in[3] >= 0))
		return -1;
	for (int i = 0; i < 8; i++)
		if (p[i] < 0 || ((i % 4) < 2 && p[i]))
			return -1;	/* negative (a crop) or on N/C */
	sp[0] = p[2], sp[1] = p[3], sp[2] = p[6], sp[3] = p[7];
	return 0;
}

static bool pads_nothing(const struct cv_graph *g, const struct cv_node *n)
{
	int64_t p[2 * CV_MAX_RANK];
	int k = cv_node_ints_arg(g, n, 1, g->opset < 11 ? "pads" : NULL, p, 2 * CV_MAX_RANK);

	for (int i = 0; i < k; i++)
		if (p[i])
			return false;
	return k > 0;
}

/*
 * An AveragePool of a zero-padded tensor counts the padding: it takes the
 * pads if it already counts its own, or has none (then it is told to count).
 */
static bool takes_pads(struct cv_node *c)
{
	int64_t p[4] = { 0 };

	if (strcmp(cv_attr_string(c, "auto_pad", "NOTSET"), "NOTSET"))
		return false;
	if (c->op == CV_OP_CONV)
		return true;
	if (c->op != CV_OP_AVGPOOL)
		return false;
	cv_attr_ints(c, "pads", p, 4);
	if (cv_attr_int(c, "count_include_pad", 0))
		return true;
	return !p[0] && !p[1] && !p[2] && !p[3] && !cv_node_set_int(c, "count_include_pad", 1);
}

int cv_pass_merge_pad(struct cv_graph *g, struct cv_diag *d)
{
	(void)d;
	for (int i = 0; i < g->n_nodes; i++) {
		struct cv_node *n = &g->nodes[i];
		int64_t sp[4], cp[4] = { 0 };

		if (n->dead || n->op != CV_OP_PAD || !g->tensors[n->in[0]].shape_known)
			continue;
		if (pads_nothing(g, n) && !g->tensors[n->out[0]].is_output) {
			n->dead = true;
			cv_replace_uses(g, n->out[0], n->in[0]);
			continue;
		}
		int ci = cv_only_consumer(g, n->out[0]);

		if (ci < 0 || spatial_pads(g, n, sp) || !takes_pads(&g->nodes[ci]) ||
		    g->nodes[ci].in[0] != n->out[0])
			continue;
		struct cv_node *c = &g->nodes[ci];

		cv_attr_ints(c, "pads", cp, 4);
		/* ONNX pads order: [top, left, bottom, right]. */
		for (int k = 0; k < 4; k++)
			cp[k] += sp[k];
		if (cv_node_set_ints(c, "pads", cp, 4))
			return -1;
		c->in[0] = n->in[0];
		n->dead = true;
	}
	cv_graph_compact(g);
	return 0;
}
