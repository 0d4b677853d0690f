// SPDX-License-Identifier: MIT
/*
 * The whole int8 flow: read the ONNX file, clean the graph up, calibrate
 * over dataset.txt, quantize, lower to the model format 2.0. With mean/std
 * or RGB2BGR, those are folded into the first layer first where exact.
 */
#include "quant.h"

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
	    cv_dataset_load(dataset, g->n_inputs, &ds, d))
		goto out;
	ds.norm = o->norm;
	if (cv_calibrate(g, &ds, o->algo != CV_ALGO_NORMAL, &c, d))
		goto out;
	if (cv_quantize(g, &c, o, &q, d) || cv_lower_chain(g, &q, lw, d))
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
