// SPDX-License-Identifier: MIT
/*
 * Pass: Identity and Dropout (inference: a copy) disappear; their consumers
 * read the input directly. Where the copy is a graph output, the producer of
 * its input is made to write the output instead; if that is not possible (the
 * input is a graph input or a constant, or also an output) the node stays and
 * runs as a copy on the CPU.
 */
#include "internal.h"

static bool removable(const struct cv_graph *g, const struct cv_node *n)
{
	if (n->op != CV_OP_IDENTITY && n->op != CV_OP_DROPOUT)
		return false;
	/* Dropout's mask output, if anything reads it, keeps the node. */
	for (int o = 1; o < n->n_out; o++) {
		int first;

		if (n->out[o] >= 0 && (g->tensors[n->out[o]].is_output ||
				       cv_graph_consumers(g, n->out[o], &first)))
			return false;
	}
	return n->n_in >= 1 && n->in[0] >= 0 && n->out[0] >= 0;
}

int cv_pass_remove_identity(struct cv_graph *g, struct cv_diag *d)
{
	(void)d;
	for (int i = 0; i < g->n_nodes; i++) {
		struct cv_node *n = &g->nodes[i];

		if (n->dead || !removable(g, n))
			continue;
		int in = n->in[0], out = n->out[0];
		struct cv_tensor *ti = &g->tensors[in];

		if (!g->tensors[out].is_output) {
			n->dead = true;
			cv_replace_uses(g, out, in);
			continue;
		}
		if (ti->producer < 0 || ti->is_output || ti->is_input || ti->data)
			continue;
		/* The producer writes the graph output; other readers follow. */
		struct cv_node *p = &g->nodes[ti->producer];

		for (int o = 0; o < p->n_out; o++)
			if (p->out[o] == in)
				p->out[o] = out;
		n->dead = true;
		cv_replace_uses(g, in, out);
		g->tensors[out].producer = ti->producer;
		ti->producer = -1;
	}
	cv_graph_compact(g);
	return 0;
}
