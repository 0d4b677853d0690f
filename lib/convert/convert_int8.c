// SPDX-License-Identifier: MIT
/*
 * The whole int8 flow: read the ONNX file, clean the graph up, calibrate
 * over dataset.txt, quantize, lower to the model format 2.0 (a chain) or,
 * when the graph is not a chain, to a 3.0 graph. With mean/std or RGB2BGR,
 * those are folded into the first layer first where exact.
 */
#include "quant.h"

/* A chain as 2.0 layers, anything else as a 3.0 graph (its messages then). */
static int lower(const struct cv_graph *g, const struct cv_qgraph *q, struct cv_lowered *lw,
		 struct cv_diag *d)
{
	struct cv_diag chain = { 0 };
	const struct cv_tensor *in;
	int rc = cv_lower_chain(g, q, lw, &chain);

	cv_diag_free(&chain);
	if (!rc)
		return 0;
	if (cv_lower_graph(g, q, &lw->g3, d))
		return -1;
	lw->is_graph = true;
	lw->input = g->inputs[0];
	lw->output = g->outputs[0];
	in = &g->tensors[lw->input];
	lw->in_c = in->dims[1];
	lw->in_h = in->rank == 4 ? in->dims[2] : 1;
	lw->in_w = in->rank == 4 ? in->dims[3] : 1;
	return 0;
}

int cv_convert(const char *onnx, const char *dataset, const struct cv_quant_opts *o,
	       struct cv_graph **gp, struct cv_lowered *lw, struct cv_diag *d)
{
	struct cv_graph *g = cv_onnx_read_file(onnx, d);
	struct cv_dataset ds = { 0 };
	struct cv_calib c = { 0 };
	struct cv_qgraph q = { 0 };
	int rc = -1;

	*gp = NULL;
	if (!g || cv_prepare(g, d) || (o->norm && cv_fold_normalise(g, o->norm, d)) ||
	    cv_check_concats(g, d) || cv_dataset_load(dataset, g->n_inputs, &ds, d))
		goto out;
	ds.norm = o->norm;
	if (cv_calibrate(g, &ds, o->algo != CV_ALGO_NORMAL, &c, d))
		goto out;
	if (cv_quantize(g, &c, o, &q, d) || lower(g, &q, lw, d))
		goto out;
	if (o->norm && o->norm->set && !o->norm->folded)
		lw->norm = *o->norm;	/* for the 3.0 input record */
	rc = 0;
	*gp = g;
	g = NULL;
out:
	cv_qgraph_free(&q);
	cv_calib_free(&c);
	cv_dataset_free(&ds);
	cv_graph_free(g);
	return rc;
}
