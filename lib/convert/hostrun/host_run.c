// SPDX-License-Identifier: GPL-2.0-only
/*
 * libconvert-host.so: the toolkit's simulator for Python (init_runtime()
 * with no target, inference(), accuracy_analysis()). A model file (2.0, or
 * 3.0 lowered to its chain, a softmax after it run by hr_output()) runs on
 * the selftests' CPU reference
 * (selftests/net_ref.h), which the simulated NPU matches bit for bit; GPL
 * like that reference, so a library of its own beside libconvert.so.
 * Per-layer analysis runs the ONNX graph in float beside it: layer i is the
 * output of the i-th node of the prepared graph, as lower_chain.c made it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net_ref.h"
#include "quant.h"

#define EXPORT __attribute__((visibility("default")))

struct hr_model {
	struct rkaccel_model *m;
	struct net_shape t[RKACCEL_MODEL_MAX_LAYERS + 1];
	uint32_t batch, channel_order, n_ch;
	float mean[CV_NORM_MAX_CH], std[CV_NORM_MAX_CH];
};

/* What Python needs of a loaded model (python/rkaccel/toolkit.py mirrors it). */
struct hr_info {
	uint32_t batch, num_layers;
	uint32_t in_h, in_w, in_c;
	float in_scale;
	int32_t in_zp;
	uint32_t out_h, out_w, out_c, out_int32;
	float out_scale;
	int32_t out_zp;
	uint32_t channel_order, n_ch;	/* not folded: the runtime's normalisation */
	float mean[CV_NORM_MAX_CH], std[CV_NORM_MAX_CH];
	uint32_t out_float;	/* a CPU op after the NPU: hr_output() gives the floats */
};

/* A 3.0 graph as its chain; its mean/std and channel order kept aside. */
static int open_graph(const char *path, struct hr_model *h, char *msg, size_t len)
{
	struct rkaccel_graph *g;
	struct rkaccel_graph_desc d;
	struct rkaccel_graph_input in;
	int ret = rkaccel_graph_load(path, &g, msg, len);

	if (ret)
		return ret;
	d = *rkaccel_graph_desc(g);
	in = d.inputs[0];
	h->batch = d.batch;
	h->channel_order = in.channel_order;
	if (in.mean) {
		uint32_t c = d.tensors[in.tensor].dims[d.tensors[in.tensor].n_dims - 1];

		h->n_ch = c < CV_NORM_MAX_CH ? c : CV_NORM_MAX_CH;
		memcpy(h->mean, in.mean, h->n_ch * sizeof(float));
		memcpy(h->std, in.std, h->n_ch * sizeof(float));
	}
	/* The host applies them (toolkit.py); the chain is what follows. */
	in.mean = in.std = NULL;
	in.channel_order = RKACCEL_CHANNELS_AS_IS;
	d.inputs = &in;
	ret = rkaccel_graph_to_model(&d, &h->m, msg, len);
	rkaccel_graph_free(g);
	return ret;
}

EXPORT int hr_open(const char *path, void **hp, char *msg, size_t len)
{
	struct hr_model *h = calloc(1, sizeof(*h));
	int ret;

	if (!h)
		return -ENOMEM;
	h->batch = 1;
	ret = rkaccel_model_load(path, &h->m, msg, len);
	if (ret == -ENOTSUP)
		ret = open_graph(path, h, msg, len);
	if (ret) {
		free(h);
		return ret;
	}
	/* the executor's tensor table holds a chain of a 1.x/2.x file's length */
	if (rkaccel_model_desc(h->m)->num_layers > RKACCEL_MODEL_MAX_LAYERS) {
		snprintf(msg, len, "%s: %u layers: the host executor runs at most %u", path,
			 rkaccel_model_desc(h->m)->num_layers, RKACCEL_MODEL_MAX_LAYERS);
		ret = -E2BIG;
	} else {
		struct net_links k;

		ret = net_links_of(h->m, rkaccel_model_desc(h->m)->num_layers, &k);
		if (!ret) {
			net_shapes_links(rkaccel_model_desc(h->m), &k, h->t);
			net_links_free(&k);
		}
	}
	if (ret) {
		rkaccel_model_free(h->m);
		free(h);
		return ret;
	}
	*hp = h;
	return 0;
}

EXPORT void hr_close(void *hp)
{
	struct hr_model *h = hp;

	if (h)
		rkaccel_model_free(h->m);
	free(h);
}

EXPORT void hr_info(void *hp, struct hr_info *i)
{
	struct hr_model *h = hp;
	const struct rkaccel_model_desc *d = rkaccel_model_desc(h->m);
	const struct rkaccel_layer_desc *last = &d->layers[d->num_layers - 1];
	const struct net_shape *o = &h->t[d->num_layers];

	*i = (struct hr_info){
		.batch = h->batch, .num_layers = d->num_layers,
		.in_h = h->t[0].h, .in_w = h->t[0].w, .in_c = h->t[0].c,
		.in_scale = d->layers[0].in_scale, .in_zp = d->layers[0].in_zero_point,
		.out_h = o->h, .out_w = o->w, .out_c = o->c,
		.out_int32 = !!(last->flags & RKACCEL_LAYER_OUT_INT32),
		.out_scale = last->out_scale, .out_zp = last->out_zero_point,
		.channel_order = h->channel_order, .n_ch = h->n_ch,
		.out_float = !rkaccel_model_output_op(h->m, &(struct rkaccel_output_op){ 0 }),
	};
	memcpy(i->mean, h->mean, sizeof(h->mean));
	memcpy(i->std, h->std, sizeof(h->std));
}

/* Layer @i's op (enum rkaccel_op, RKACCEL_OP_CONCAT) and output shape, for eval_perf(). */
EXPORT int hr_layer(void *hp, uint32_t i, uint32_t *op, uint32_t *hwc)
{
	struct hr_model *h = hp;
	const struct rkaccel_model_desc *d = rkaccel_model_desc(h->m);

	if (i >= d->num_layers)
		return -EINVAL;
	*op = d->layers[i].op;
	hwc[0] = h->t[i + 1].h;
	hwc[1] = h->t[i + 1].w;
	hwc[2] = h->t[i + 1].c;
	return 0;
}

/* As rkaccel_quantize() (lib/compiler/layout.c): the runtime's float to int8. */
EXPORT void hr_quantize(const float *src, size_t n, float scale, int32_t zp, int8_t *dst)
{
	for (size_t i = 0; i < n; i++) {
		float q = roundf(src[i] / scale) + (float)zp;

		if (isnan(q))
			q = (float)zp;
		dst[i] = (int8_t)(q < -128.0f ? -128 : q > 127.0f ? 127 : (int)q);
	}
}

/*
 * Layers @first .. @first + @count - 1 on @in (tensor @first, [h][w][c]
 * int8) into @out: int8, or int32 when the last of them is the model's last.
 */
EXPORT int hr_run_layers(void *hp, uint32_t first, uint32_t count, const int8_t *in, void *out)
{
	struct hr_model *h = hp;
	struct rkaccel_model_desc d = *rkaccel_model_desc(h->m);

	if (!count || first + count > d.num_layers)
		return -EINVAL;
	for (uint32_t i = first; i < first + count; i++)
		if (d.layers[i].flags & RKACCEL_LAYER_ADD)
			return -EINVAL;	/* reads an earlier tensor: run from layer 0 */
	d.layers += first;
	d.num_layers = count;
	d.height = h->t[first].h;
	d.width = h->t[first].w;
	d.rows = d.height * d.width;
	return ref_net(&d, in, out);
}

/* One slice of the whole model: @in [h][w][c] int8, @out the last tensor. */
EXPORT int hr_run(void *hp, const int8_t *in, void *out)
{
	return hr_run_layers(hp, 0, rkaccel_model_desc(((struct hr_model *)hp)->m)->num_layers,
			     in, out);
}

/*
 * The model's CPU op after the NPU (a softmax, a dequantize) on @count
 * slices of hr_run()'s output @raw into @dst: what the runtime gives.
 * -ENOENT when the model has none.
 */
EXPORT int hr_output(void *hp, const void *raw, uint32_t count, float *dst)
{
	struct rkaccel_output_op op;
	int ret = rkaccel_model_output_op(((struct hr_model *)hp)->m, &op);

	return ret ? ret : rkaccel_output_op_run(&op, raw, count, dst);
}

/* --- float against int8, per layer -------------------------------------------- */

struct float_run {
	const struct cv_graph *g;
	float **keep;		/* per tensor: a copy of the layer tensors */
};

static void keep_tensor(void *ctx, int t, const float *x)
{
	struct float_run *r = ctx;
	int64_t n = cv_tensor_elems(&r->g->tensors[t]);

	if (r->keep[t] || !(r->keep[t] = malloc(n * sizeof(float) + 1)))
		return;
	memcpy(r->keep[t], x, n * sizeof(float));
}

/* NCHW float [c][h*w] to the NPU's [h*w][c] (a [1, K] tensor is one pixel). */
static void to_hwc(const float *x, uint32_t hw, uint32_t c, float *y)
{
	for (uint32_t ch = 0; ch < c; ch++)
		for (uint32_t p = 0; p < hw; p++)
			y[p * c + ch] = x[ch * hw + p];
}

static void compare(const float *ref, const float *q, size_t n, double *cos, double *euc)
{
	double dot = 0, na = 0, nb = 0, e = 0;

	for (size_t i = 0; i < n; i++) {
		dot += (double)ref[i] * q[i];
		na += (double)ref[i] * ref[i];
		nb += (double)q[i] * q[i];
		e += ((double)ref[i] - q[i]) * ((double)ref[i] - q[i]);
	}
	*cos = na > 0 && nb > 0 ? dot / sqrt(na * nb) : (na == nb ? 1.0 : 0.0);
	*euc = sqrt(e);
}

/* Layer @l's int8 (or int32) output @raw as real values. */
static void dequant(const struct rkaccel_layer_desc *l, const void *raw, size_t n, float *y)
{
	for (size_t i = 0; i < n; i++)
		y[i] = l->flags & RKACCEL_LAYER_OUT_INT32 ?
		       (float)((const int32_t *)raw)[i] * l->out_scale :
		       (float)(((const int8_t *)raw)[i] - l->out_zero_point) * l->out_scale;
}

struct analysis {
	struct hr_model *h;
	const struct rkaccel_model_desc *d;
	float **ft;		/* float layer outputs, [h*w][c] */
	int8_t **qf;		/* the float ones quantized as the layer's input ("single") */
	void *entire, *single;	/* scratch: one layer's raw output */
	float *deq;
};

static int analyse_layer(struct analysis *a, uint32_t i, const int8_t *entire_in,
			 double *res)
{
	const struct net_shape *o = &a->h->t[i + 1];
	size_t n = (size_t)o->h * o->w * o->c;
	int ret;

	/* "entire": the int8 model up to layer i, from the quantized input */
	ret = hr_run_layers(a->h, 0, i + 1, entire_in, a->entire);
	if (ret)
		return ret;
	dequant(&a->d->layers[i], a->entire, n, a->deq);
	compare(a->ft[i], a->deq, n, &res[0], &res[1]);
	/* "single": layer i alone, fed the float output before it, quantized */
	ret = hr_run_layers(a->h, i, 1, a->qf[i], a->single);
	if (ret)
		return ret;
	dequant(&a->d->layers[i], a->single, n, a->deq);
	compare(a->ft[i], a->deq, n, &res[2], &res[3]);
	return 0;
}

/* The float graph of @onnx as it was converted (same passes, same fold). */
static struct cv_graph *float_graph(const char *onnx, struct cv_norm *nm, struct cv_diag *d)
{
	struct cv_graph *g = cv_onnx_read_file(onnx, d);

	if (g && !cv_prepare(g, d) && !cv_fold_normalise(g, nm, d))
		return g;
	cv_graph_free(g);
	return NULL;
}

/*
 * Per layer i (res[4 i .. 4 i + 3]): cosine and Euclidean distance of the
 * int8 model against the float one, "entire" then "single". @x is one
 * sample as the camera gives it, NCHW float [C][H][W] of raw pixels;
 * @mean..@bgr as given to the conversion. names: 64 bytes a layer.
 */
EXPORT int hr_analyse(void *hp, const char *onnx, const float *mean, const float *std, int n_ch,
		      int bgr, const float *x, double *res, char *names, char *msg, size_t len)
{
	struct hr_model *h = hp;
	const struct rkaccel_model_desc *d = rkaccel_model_desc(h->m);
	struct cv_norm nm = { .n_ch = n_ch, .bgr = bgr != 0 };
	struct analysis a = { .h = h, .d = d };
	struct float_run r = { 0 };
	struct cv_diag diag = { 0 };
	struct cv_graph *g;
	int *order = NULL, count, ret = -EINVAL, in_t;
	float *xin = NULL, *outs[1] = { NULL }, *tmp;
	int8_t *qin = NULL;
	size_t max;

	bool ident = true;

	for (int c = 0; c < n_ch && c < CV_NORM_MAX_CH; c++) {
		nm.mean[c] = mean[c];
		nm.std[c] = std[c];
		ident &= mean[c] == 0.0f && std[c] == 1.0f;
	}
	if (ident)
		nm.n_ch = 0;	/* as cv_convert_file_norm() takes them */
	nm.set = nm.bgr || nm.n_ch;
	g = float_graph(onnx, &nm, &diag);
	if (!g)
		goto out;
	in_t = g->inputs[0];
	order = malloc((g->n_nodes + 1) * sizeof(int));
	r.g = g;
	r.keep = calloc(g->n_tensors + 1, sizeof(float *));
	xin = malloc(cv_tensor_elems(&g->tensors[in_t]) * sizeof(float) + 1);
	outs[0] = malloc(cv_tensor_elems(&g->tensors[g->outputs[0]]) * sizeof(float) + 1);
	a.ft = calloc(d->num_layers, sizeof(float *));
	a.qf = calloc(d->num_layers, sizeof(int8_t *));
	if (!order || !r.keep || !xin || !outs[0] || !a.ft || !a.qf)
		goto oom;
	count = cv_graph_topo_order(g, order, &diag);
	while (count > 0 && g->nodes[order[count - 1]].on_cpu)
		count--;	/* a softmax after the NPU: the layers are the nodes before */
	if (count != (int)d->num_layers || g->n_outputs != 1) {
		cv_diag_add(&diag, "%s has %d nodes after the passes, the model %u layers: not the model's ONNX file?",
			    onnx, count, d->num_layers);
		goto out;
	}
	memcpy(xin, x, cv_tensor_elems(&g->tensors[in_t]) * sizeof(float));
	cv_norm_apply(&nm, true, &g->tensors[in_t], xin);
	if (cv_exec_visit(g, (const float *const *)&xin, outs, keep_tensor, &r, &diag))
		goto out;
	max = (size_t)h->t[0].h * h->t[0].w * h->t[0].c;

	for (uint32_t i = 0; i <= d->num_layers; i++) {
		size_t n = (size_t)h->t[i].h * h->t[i].w * h->t[i].c;
		int t = i ? g->nodes[order[i - 1]].out[0] : in_t;

		max = n > max ? n : max;
		if (!r.keep[t] || cv_tensor_elems(&g->tensors[t]) != (int64_t)n) {
			cv_diag_add(&diag, "layer %u: the float tensor '%s' does not match the model's",
				    i, g->tensors[t].name);
			goto out;
		}
		if (i < d->num_layers) {
			/* the float tensor i as layer i's int8 input */
			if (!(tmp = malloc(n * sizeof(float) + 1)) || !(a.qf[i] = malloc(n + 1))) {
				free(tmp);
				goto oom;
			}
			to_hwc(r.keep[t], h->t[i].h * h->t[i].w, h->t[i].c, tmp);
			hr_quantize(tmp, n, d->layers[i].in_scale, d->layers[i].in_zero_point, a.qf[i]);
			free(tmp);
		}
		if (i) {
			if (!(a.ft[i - 1] = malloc(n * sizeof(float) + 1)))
				goto oom;
			to_hwc(r.keep[t], h->t[i].h * h->t[i].w, h->t[i].c, a.ft[i - 1]);
			snprintf(names + 64 * (i - 1), 64, "%s", g->nodes[order[i - 1]].name);
		}
	}
	a.entire = malloc(max * 4 + 1);
	a.single = malloc(max * 4 + 1);
	a.deq = malloc(max * sizeof(float) + 1);
	qin = a.qf[0];
	if (!a.entire || !a.single || !a.deq)
		goto oom;
	for (uint32_t i = 0; i < d->num_layers; i++) {
		ret = analyse_layer(&a, i, qin, res + 4 * i);
		if (ret)
			goto out;
	}
	ret = 0;
	goto out;
oom:
	cv_diag_add(&diag, "out of memory");
	ret = -ENOMEM;
out:
	if (ret && msg && len)
		snprintf(msg, len, "%s", diag.text ? diag.text : strerror(-ret));
	for (uint32_t i = 0; a.ft && a.qf && i < d->num_layers; i++) {
		free(a.ft[i]);
		free(a.qf[i]);
	}
	for (int t = 0; r.keep && g && t < g->n_tensors; t++)
		free(r.keep[t]);
	free(r.keep);
	free(a.ft);
	free(a.qf);
	free(a.entire);
	free(a.single);
	free(a.deq);
	free(xin);
	free(outs[0]);
	free(order);
	cv_graph_free(g);
	cv_diag_free(&diag);
	return ret;
}

/* The chain as a 2.0 file image (free() it): what a device context takes. */
EXPORT int hr_serialize(void *hp, void **buf, size_t *len)
{
	return rkaccel_model_serialize(rkaccel_model_desc(((struct hr_model *)hp)->m), buf, len);
}

EXPORT void hr_free(void *p)
{
	free(p);
}
