// SPDX-License-Identifier: MIT
/*
 * Arguments that moved between attributes and inputs across opsets 7..17,
 * conv/pool window geometry, and small node edits the passes share.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int cv_node_ints_arg(const struct cv_graph *g, const struct cv_node *n, int input,
		     const char *attr, int64_t *out, int max)
{
	if (input < n->n_in && n->in[input] >= 0) {
		const struct cv_tensor *t = &g->tensors[n->in[input]];
		int64_t e = cv_tensor_elems(t);

		if (!t->data || t->dtype != CV_I64 || t->rank > 1 || e > max)
			return -2;	/* not a constant list we can use */
		memcpy(out, t->data, e * sizeof(int64_t));
		return (int)e;
	}
	return attr ? cv_attr_ints(n, attr, out, max) : -1;
}

float cv_node_float_arg(const struct cv_graph *g, const struct cv_node *n, int input,
			const char *attr, float def)
{
	if (input < n->n_in && n->in[input] >= 0) {
		const struct cv_tensor *t = &g->tensors[n->in[input]];

		if (t->data && cv_tensor_elems(t) == 1)
			return t->dtype == CV_F32 ? *(float *)t->data : (float)*(int64_t *)t->data;
		return NAN;
	}
	return attr ? cv_attr_float(n, attr, def) : def;
}

static struct cv_attr *attr_slot(struct cv_node *n, const char *name)
{
	for (int i = 0; i < n->n_attrs; i++)
		if (!strcmp(n->attrs[i].name, name))
			return &n->attrs[i];
	struct cv_attr *a = realloc(n->attrs, (n->n_attrs + 1) * sizeof(*a));

	if (!a)
		return NULL;
	n->attrs = a;
	a = &n->attrs[n->n_attrs];
	memset(a, 0, sizeof(*a));
	a->name = strdup(name);
	if (!a->name)
		return NULL;
	n->n_attrs++;
	return a;
}

int cv_node_set_int(struct cv_node *n, const char *name, int64_t v)
{
	struct cv_attr *a = attr_slot(n, name);

	if (!a)
		return -1;
	a->type = CV_ATTR_INT;
	a->i = v;
	return 0;
}

int cv_node_set_ints(struct cv_node *n, const char *name, const int64_t *v, int count)
{
	struct cv_attr *a = attr_slot(n, name);

	if (!a || count > CV_MAX_ATTR_INTS)
		return -1;
	a->type = CV_ATTR_INTS;
	a->n_ints = count;
	memcpy(a->ints, v, count * sizeof(int64_t));
	return 0;
}

int cv_only_consumer(const struct cv_graph *g, int t)
{
	int first;

	if (t < 0 || g->tensors[t].is_output)
		return -1;
	return cv_graph_consumers(g, t, &first) == 1 ? first : -1;
}

int cv_axis(int64_t axis, int rank)
{
	if (axis < 0)
		axis += rank;
	return axis < 0 || axis >= rank ? -1 : (int)axis;
}

int cv_broadcast(const struct cv_tensor *a, const struct cv_tensor *b, int *rank,
		 int64_t *dims)
{
	int r = a->rank > b->rank ? a->rank : b->rank;

	for (int i = 0; i < r; i++) {
		int ia = i - (r - a->rank), ib = i - (r - b->rank);
		int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;

		if (da != db && da != 1 && db != 1)
			return -1;
		dims[i] = da == 1 ? db : da;
	}
	*rank = r;
	return 0;
}

int64_t cv_softmax_axis(const struct cv_graph *g, const struct cv_node *n)
{
	return cv_attr_int(n, "axis", g->opset >= 13 ? -1 : 1);
}

/* Output size as PyTorch and ONNX (opset 19 wording) define it. */
static int64_t out_size(int64_t in, int64_t pb, int64_t pe, int64_t k, int64_t d, int64_t s,
			bool ceil_mode)
{
	int64_t span = in + pb + pe - d * (k - 1) - 1;

	if (span < 0)
		return 0;
	int64_t o = (ceil_mode ? (span + s - 1) / s : span / s) + 1;

	/* The last window must start inside the input or its leading padding. */
	if (ceil_mode && (o - 1) * s >= in + pb)
		o--;
	return o;
}

static void auto_pad(const char *mode, int64_t in, int64_t k, int64_t d, int64_t s,
		     int64_t *pb, int64_t *pe)
{
	int64_t o = (in + s - 1) / s;
	int64_t total = (o - 1) * s + d * (k - 1) + 1 - in;

	if (total < 0)
		total = 0;
	*pb = !strcmp(mode, "SAME_LOWER") ? (total + 1) / 2 : total / 2;
	*pe = total - *pb;
}

int cv_window_get(const struct cv_node *n, int64_t h, int64_t w, int64_t kh, int64_t kw,
		  struct cv_window *win, struct cv_diag *d)
{
	int64_t v[CV_MAX_ATTR_INTS];
	const char *ap = cv_attr_string(n, "auto_pad", "NOTSET");

	memset(win, 0, sizeof(*win));
	win->kh = kh, win->kw = kw;
	if (cv_attr_ints(n, "kernel_shape", v, 2) == 2)
		win->kh = v[0], win->kw = v[1];
	win->sh = win->sw = win->dh = win->dw = 1;
	if (cv_attr_ints(n, "strides", v, 2) == 2)
		win->sh = v[0], win->sw = v[1];
	if (cv_attr_ints(n, "dilations", v, 2) == 2)
		win->dh = v[0], win->dw = v[1];
	if (cv_attr_ints(n, "pads", v, 4) == 4)
		win->pt = v[0], win->pl = v[1], win->pb = v[2], win->pr = v[3];
	win->ceil_mode = cv_attr_int(n, "ceil_mode", 0) != 0;
	if (win->kh < 1 || win->kw < 1 || win->kh > 1024 || win->kw > 1024 ||
	    win->sh < 1 || win->sw < 1 || win->sh > 1024 || win->sw > 1024 ||
	    win->dh < 1 || win->dw < 1 || win->dh > 64 || win->dw > 64 ||
	    win->pt < 0 || win->pl < 0 || win->pb < 0 || win->pr < 0 ||
	    win->pt > 1024 || win->pl > 1024 || win->pb > 1024 || win->pr > 1024) {
		cv_diag_node(d, n, "kernel, stride, dilation or padding out of range");
		return -1;
	}
	if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
		auto_pad(ap, h, win->kh, win->dh, win->sh, &win->pt, &win->pb);
		auto_pad(ap, w, win->kw, win->dw, win->sw, &win->pl, &win->pr);
	} else if (!strcmp(ap, "VALID")) {
		win->pt = win->pl = win->pb = win->pr = 0;
	} else if (strcmp(ap, "NOTSET")) {
		cv_diag_node(d, n, "auto_pad '%s' unknown", ap);
		return -1;
	}
	win->oh = out_size(h, win->pt, win->pb, win->kh, win->dh, win->sh, win->ceil_mode);
	win->ow = out_size(w, win->pl, win->pr, win->kw, win->dw, win->sw, win->ceil_mode);
	if (win->oh < 1 || win->ow < 1) {
		cv_diag_node(d, n, "window larger than its padded input");
		return -1;
	}
	return 0;
}

void cv_replace_uses(struct cv_graph *g, int from, int to)
{
	for (int i = 0; i < g->n_nodes; i++) {
		struct cv_node *n = &g->nodes[i];

		for (int k = 0; k < n->n_in && !n->dead; k++)
			if (n->in[k] == from)
				n->in[k] = to;
	}
}

int cv_new_const_f32(struct cv_graph *g, int rank, const int64_t *dims, const float *data)
{
	int t = cv_graph_anon_tensor(g);

	if (t < 0 || cv_tensor_set_const(&g->tensors[t], CV_F32, rank, dims, data))
		return -1;
	return t;
}
