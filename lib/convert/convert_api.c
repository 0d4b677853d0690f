// SPDX-License-Identifier: MIT
/*
 * The converter's one entry point for other programs: an ONNX file and a
 * dataset.txt to a model file, as rkaccel-convert does it. The tool and the
 * Python toolkit class (python/rkaccel/toolkit.py, through libconvert.so)
 * both call it, so both write the same bytes for the same options.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "quant.h"

/* The 2.0 file, or with a batch, a custom string or a graph the 3.0 one; 0 or -errno. */
static int save(const struct cv_graph *g, const struct cv_lowered *lw, unsigned int batch,
		const char *custom, const char *note, const char *out, char *msg, size_t msg_len)
{
	char why[256];
	int rc;

	if (!batch && !custom && !lw->norm.set && !lw->is_graph) {
		rc = rkaccel_model_save(&lw->desc, out);
		if (rc)
			snprintf(why, sizeof(why), "%s", strerror(-rc));
	} else {
		rc = cv_save_graph(g, lw, batch ? batch : 1, custom, out, why, sizeof(why));
	}
	if (rc) {
		snprintf(msg, msg_len, "%s: cannot write the model: %s\n", out, why);
		/* -EINVAL is kept for refused inputs (see quant.h). */
		return rc == -EINVAL ? -EIO : rc;
	}
	if (lw->is_graph) {
		const struct rkaccel_graph_tensor *o = &lw->g3.tensors[lw->g3.outputs[0]];

		snprintf(msg, msg_len, "%u nodes (a graph: format 3.0), %ux%ux%u int8 in, %u out%s%s%s",
			 lw->g3.desc.num_nodes, (unsigned int)lw->in_h, (unsigned int)lw->in_w,
			 (unsigned int)lw->in_c, o->dims[o->n_dims - 1],
			 o->type == RKACCEL_DTYPE_FLOAT32 ? " (float32: a softmax on the CPU)" : "",
			 note[0] ? "\n" : "", note);
		return 0;
	}
	snprintf(msg, msg_len, "%u layers, %ux%ux%u int8 in, %u out%s%s", lw->desc.num_layers,
		 (unsigned int)lw->in_h, (unsigned int)lw->in_w, (unsigned int)lw->in_c,
		 lw->desc.layers[lw->desc.num_layers - 1].out_features, note[0] ? "\n" : "", note);
	return 0;
}

/* Mean/std and RGB2BGR as cv_norm; -1 for values out of range. */
static int make_norm(const float *mean, const float *std, int n_ch, int bgr, struct cv_norm *nm)
{
	memset(nm, 0, sizeof(*nm));
	if (n_ch < 0 || n_ch > CV_NORM_MAX_CH || (n_ch && (!mean || !std)))
		return -1;
	nm->n_ch = n_ch;
	for (int c = 0; c < n_ch; c++) {
		nm->mean[c] = mean[c];
		nm->std[c] = std[c];
		if (mean[c] != 0.0f || std[c] != 1.0f)
			nm->set = true;
	}
	if (!nm->set)
		nm->n_ch = 0;	/* mean 0, std 1: nothing to fold */
	nm->bgr = bgr != 0;
	nm->set |= nm->bgr;
	return 0;
}

__attribute__((visibility("default")))
int cv_convert_file(const char *onnx, const char *dataset, int algo, int per_layer,
		    unsigned int batch, const char *custom, const char *out, char *msg,
		    size_t msg_len)
{
	return cv_convert_file_norm(onnx, dataset, algo, per_layer, batch, custom, NULL, NULL, 0,
				    0, out, msg, msg_len);
}

__attribute__((visibility("default")))
int cv_convert_file_norm(const char *onnx, const char *dataset, int algo, int per_layer,
			 unsigned int batch, const char *custom, const float *mean,
			 const float *std, int n_ch, int bgr, const char *out, char *msg,
			 size_t msg_len)
{
	struct cv_quant_opts o = { CV_ALGO_NORMAL, per_layer != 0, NULL };
	struct cv_norm nm;
	struct cv_diag d = { 0 };
	struct cv_graph *g = NULL;
	struct cv_lowered lw;
	int rc;

	if (!onnx || !dataset || !out || !msg || !msg_len)
		return -EINVAL;
	if (algo < CV_ALGO_NORMAL || algo > CV_ALGO_KL || batch > RKACCEL_GRAPH_MAX_BATCH ||
	    (custom && strlen(custom) > RKACCEL_GRAPH_MAX_CUSTOM)) {
		snprintf(msg, msg_len, "algorithm %d, batch %u or custom string out of range\n",
			 algo, batch);
		return -EINVAL;
	}
	if (make_norm(mean, std, n_ch, bgr, &nm)) {
		snprintf(msg, msg_len, "%d mean/std values: not 0..%d\n", n_ch, CV_NORM_MAX_CH);
		return -EINVAL;
	}
	o.norm = &nm;
	o.algo = (enum cv_algo)algo;
	if (cv_convert(onnx, dataset, &o, &g, &lw, &d)) {
		snprintf(msg, msg_len, "%s", d.text ? d.text : "conversion failed\n");
		cv_diag_free(&d);
		return -EINVAL;
	}
	cv_diag_free(&d);
	rc = save(g, &lw, batch, custom, nm.note, out, msg, msg_len);
	cv_lowered_free(&lw);
	cv_graph_free(g);
	return rc;
}
