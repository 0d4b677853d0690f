// SPDX-License-Identifier: MIT
/*
 * The lowered model as a format 3.0 file with the batch baked in
 * (rkaccel-convert --batch, the toolkit's rknn_batch_size): a chain as
 * rkaccel_graph_from_model() gives it, any other graph as lower_graph.c
 * made it, with every dims[0] set to the batch, the ONNX
 * model's input and output names on its input and output, and a custom
 * string. The runtime lowers it back and runs the batch across the cores.
 * Mean/std and channel order that could not be folded into the first layer
 * go into the input record: the runtime applies them before quantizing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quant.h"

/* @name when the 3.0 rules take it (0x21..0x7e, not too long), else NULL. */
static const char *usable_name(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (!n || n > RKACCEL_GRAPH_MAX_NAME)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (name[i] < 0x21 || name[i] > 0x7e)
			return NULL;
	return name;
}

/* Renames tensor @t to @name unless another tensor already has that name. */
static void rename_tensor(struct rkaccel_graph_tensor *ts, uint32_t n, uint32_t t,
			  const char *name)
{
	if (!name)
		return;
	for (uint32_t i = 0; i < n; i++)
		if (i != t && !strcmp(ts[i].name, name))
			return;
	ts[t].name = name;
}

int cv_save_graph(const struct cv_graph *g, const struct cv_lowered *l, uint32_t batch,
		  const char *custom, const char *path, char *msg, size_t msg_len)
{
	struct rkaccel_graph_tensor *ts;
	struct rkaccel_graph_input in;
	struct rkaccel_graph_desc d;
	struct rkaccel_graph *g3 = NULL;
	int ret;

	if (batch < 1 || batch > RKACCEL_GRAPH_MAX_BATCH) {
		snprintf(msg, msg_len, "batch %u: not 1..%u", batch, RKACCEL_GRAPH_MAX_BATCH);
		return -EINVAL;
	}
	if (l->is_graph) {
		d = l->g3.desc;	/* lower_graph.c's, names and all */
	} else {
		ret = rkaccel_graph_from_model(&l->desc, &g3, msg, msg_len);
		if (ret)
			return ret;
		d = *rkaccel_graph_desc(g3);
	}
	ts = malloc(d.num_tensors * sizeof(*ts));
	if (!ts) {
		rkaccel_graph_free(g3);
		snprintf(msg, msg_len, "out of memory");
		return -ENOMEM;
	}
	memcpy(ts, d.tensors, d.num_tensors * sizeof(*ts));
	for (uint32_t i = 0; i < d.num_tensors; i++)
		ts[i].dims[0] = batch;
	rename_tensor(ts, d.num_tensors, d.inputs[0].tensor, usable_name(g->tensors[l->input].name));
	rename_tensor(ts, d.num_tensors, d.outputs[0], usable_name(g->tensors[l->output].name));
	d.tensors = ts;
	in = d.inputs[0];
	if (l->norm.set && !l->norm.folded) {
		/* Not folded (a padded first conv): the runtime normalises. */
		in.channel_order = l->norm.bgr ? RKACCEL_CHANNELS_BGR : RKACCEL_CHANNELS_AS_IS;
		if (l->norm.n_ch) {
			in.mean = l->norm.mean;
			in.std = l->norm.std;
		}
	}
	d.inputs = &in;
	d.batch = batch;
	d.custom = custom;
	ret = rkaccel_graph_validate(&d, msg, msg_len);
	if (!ret) {
		ret = rkaccel_graph_save(&d, path);
		if (ret)
			snprintf(msg, msg_len, "%s", strerror(-ret));
	}
	free(ts);
	rkaccel_graph_free(g3);
	return ret;
}
