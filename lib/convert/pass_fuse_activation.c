// SPDX-License-Identifier: MIT
/*
 * Pass: Relu, Clip(0, 6) and LeakyRelu after a Conv, FullyConnected,
 * ChannelAffine or Add that alone feeds them become a mark on that node (the
 * NPU applies them in its output stage) and the activation node goes. Other
 * Clip ranges, and activations after other ops, stay standalone.
 */
#include "internal.h"

static bool can_carry(const struct cv_node *p)
{
	return p->act == CV_ACT_NONE &&
	       (p->op == CV_OP_CONV || p->op == CV_OP_FC || p->op == CV_OP_CHANNEL_AFFINE ||
		p->op == CV_OP_ADD);
}

static enum cv_act act_of(const struct cv_graph *g, const struct cv_node *n)
{
	if (n->op == CV_OP_RELU)
		return CV_ACT_RELU;
	if (n->op == CV_OP_LEAKYRELU)
		return CV_ACT_LEAKY;
	if (n->op != CV_OP_CLIP)
		return CV_ACT_NONE;
	float lo = cv_node_float_arg(g, n, 1, g->opset < 11 ? "min" : NULL, -1.0f / 0.0f);
	float hi = cv_node_float_arg(g, n, 2, g->opset < 11 ? "max" : NULL, 1.0f / 0.0f);

	if (lo == 0.0f && hi == 6.0f)
		return CV_ACT_RELU6;
	if (lo == 0.0f && hi == 1.0f / 0.0f)
		return CV_ACT_RELU;
	return CV_ACT_NONE;
}

int cv_pass_fuse_activation(struct cv_graph *g, struct cv_diag *d)
{
	(void)d;
	for (int i = 0; i < g->n_nodes; i++) {
		struct cv_node *n = &g->nodes[i];
		enum cv_act act = n->dead ? CV_ACT_NONE : act_of(g, n);

		if (act == CV_ACT_NONE)
			continue;
		int x = n->in[0], p = g->tensors[x].producer;

		if (p < 0 || cv_only_consumer(g, x) != i || !can_carry(&g->nodes[p]))
			continue;
		struct cv_node *prod = &g->nodes[p];

		prod->act = act;
		prod->act_alpha = cv_attr_float(n, "alpha", 0.01f);
		prod->out[0] = n->out[0];
		n->dead = true;
	}
	cv_graph_compact(g);
	return 0;
}
