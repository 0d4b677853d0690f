// SPDX-License-Identifier: MIT
/*
 * Writing a 3.0 graph file: the canonical layout of
 * Documentation/model-format.rst ("Version 3.0: graphs"): header, then the
 * sections in table order each at the next multiple of 8 (the data section
 * of 64), names in tensor order then the custom string, arrays in record
 * order each at the next multiple of 64, zero bytes between, none at the
 * end. Only validated descriptions are written.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "graph3.h"
#include "model.h"

static uint64_t align(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

/* One array of the data section: its place, relative to the section. */
struct arr {
	uint64_t off, size;
};

/* Place @size bytes after *@end; an absent array (size 0) is 0, 0. */
static struct arr place(uint64_t *end, uint64_t size)
{
	struct arr a = { 0, 0 };

	if (size) {
		a.off = align(*end, G3_DATA_ALIGN);
		a.size = size;
		*end = a.off + size;
	}
	return a;
}

static void put_arr(uint8_t *rec, struct arr a)
{
	g3_put32(rec, (uint32_t)a.off);
	g3_put32(rec + 4, (uint32_t)a.size);
}

static void put_floats(uint8_t *p, const float *f, uint64_t n)
{
	for (uint64_t k = 0; k < n; k++)
		g3_put32(p + 4 * k, g3_fbits(f[k]));
}

/*
 * Lay out (and with @img, write) the data section at @data and the array
 * fields of the node and input records; returns its size.
 */
static uint64_t put_data(const struct rkaccel_graph_desc *d, uint8_t *img, uint64_t data,
			 uint64_t nodes, uint64_t inputs)
{
	uint64_t end = 0;

	for (uint32_t i = 0; i < d->num_nodes; i++) {
		const struct rkaccel_graph_node *n = &d->nodes[i];
		uint8_t *rec = img ? img + nodes + (uint64_t)i * G3N_SIZE : NULL;
		struct arr w = place(&end, g3_weights_size(d, n));
		struct arr b = place(&end, g3_bias_size(d, n));
		struct arr s = place(&end, n->weight_scales ? g3_wscales_size(d, n) : 0);

		if (!img)
			continue;
		put_arr(rec + G3N_WEIGHTS, w);
		put_arr(rec + G3N_BIAS, b);
		put_arr(rec + G3N_WSCALES, s);
		if (w.size)
			memcpy(img + data + w.off, n->weights, w.size);
		for (uint64_t k = 0; k < b.size / 4; k++)
			g3_put32(img + data + b.off + 4 * k, (uint32_t)n->bias[k]);
		if (s.size)
			put_floats(img + data + s.off, n->weight_scales, s.size / 4);
	}
	for (uint32_t i = 0; i < d->num_inputs; i++) {
		const struct rkaccel_graph_input *in = &d->inputs[i];
		uint64_t size = in->mean ? 4 * (uint64_t)g3_channels(&d->tensors[in->tensor]) : 0;
		uint8_t *rec = img ? img + inputs + (uint64_t)i * G3I_SIZE : NULL;
		struct arr m = place(&end, size), s = place(&end, size);

		if (!img)
			continue;
		put_arr(rec + G3I_MEAN, m);
		put_arr(rec + G3I_STD, s);
		if (size) {
			put_floats(img + data + m.off, in->mean, size / 4);
			put_floats(img + data + s.off, in->std, size / 4);
		}
	}
	return end;
}

static void put_section(uint8_t *img, enum g3_section s, uint64_t off, uint32_t count,
			uint32_t rec)
{
	uint8_t *e = img + G3H_SECTIONS + s * G3S_ENTRY_SIZE;

	g3_put64(e + G3S_OFFSET, count ? off : 0);
	g3_put32(e + G3S_COUNT, count);
	g3_put32(e + G3S_RECORD_SIZE, rec);
}

static void put_tensor(uint8_t *r, const struct rkaccel_graph_tensor *t, uint32_t name_off,
		       uint32_t name_len)
{
	g3_put32(r + G3T_NAME_OFF, name_off);
	g3_put32(r + G3T_NAME_LEN, name_len);
	g3_put32(r + G3T_TYPE, t->type);
	g3_put32(r + G3T_N_DIMS, t->n_dims);
	for (int k = 0; k < 4; k++)
		g3_put32(r + G3T_DIMS + 4 * k, t->dims[k]);
	g3_put32(r + G3T_SCALE, g3_fbits(t->scale));
	g3_put32(r + G3T_ZERO_POINT, (uint32_t)t->zero_point);
}

static void put_node(uint8_t *r, const struct rkaccel_graph_node *n, uint32_t first)
{
	static const size_t at[] = {
		G3N_KERNEL_H, G3N_KERNEL_W, G3N_STRIDE_H, G3N_STRIDE_W, G3N_PAD_TOP,
		G3N_PAD_LEFT, G3N_PAD_BOTTOM, G3N_PAD_RIGHT, G3N_DILATION_H, G3N_DILATION_W,
		G3N_GROUPS, G3N_FLAGS, G3N_AXIS, G3N_ACT,
	};
	const uint32_t v[] = {
		n->kernel_h, n->kernel_w, n->stride_h, n->stride_w, n->pad_top, n->pad_left,
		n->pad_bottom, n->pad_right, n->dilation_h, n->dilation_w, n->groups, n->flags,
		n->axis, n->act,
	};

	g3_put32(r + G3N_OP, n->op);
	g3_put32(r + G3N_OUTPUT, n->output);
	g3_put32(r + G3N_INPUT_FIRST, first);
	g3_put32(r + G3N_NUM_INPUTS, n->num_inputs);
	for (size_t k = 0; k < sizeof(at) / sizeof(at[0]); k++)
		g3_put32(r + at[k], v[k]);
	g3_put32(r + G3N_CLIP_MIN, g3_fbits(n->clip_min));
	g3_put32(r + G3N_CLIP_MAX, g3_fbits(n->clip_max));
	g3_put32(r + G3N_LEAKY_SLOPE, g3_fbits(n->leaky_slope));
	g3_put32(r + G3N_WEIGHT_SCALE, g3_fbits(n->weight_scale));
}

/* Section offsets of the canonical layout. */
struct layout {
	uint64_t off[G3_NUM_SECTIONS];
	uint32_t count[G3_NUM_SECTIONS];
	uint64_t size;
};

/* Record sizes of the sections, 3.0. */
static const uint32_t rec[G3_NUM_SECTIONS] = {
	G3T_SIZE, G3N_SIZE, G3E_SIZE, G3I_SIZE, G3O_SIZE, 1, 1,
};

static void lay_out(const struct rkaccel_graph_desc *d, struct layout *l)
{
	uint64_t end = G3_HEADER_SIZE, strings = 0, edges = 0;

	for (uint32_t t = 0; t < d->num_tensors; t++)
		strings += strlen(d->tensors[t].name);
	if (d->custom)
		strings += strlen(d->custom);
	for (uint32_t i = 0; i < d->num_nodes; i++)
		edges += d->nodes[i].num_inputs;
	/* all bounded by the validator's caps: no count exceeds 32 bits */
	l->count[G3_TENSORS] = d->num_tensors;
	l->count[G3_NODES] = d->num_nodes;
	l->count[G3_EDGES] = (uint32_t)edges;
	l->count[G3_INPUTS] = d->num_inputs;
	l->count[G3_OUTPUTS] = d->num_outputs;
	l->count[G3_STRINGS] = (uint32_t)strings;
	l->count[G3_DATA] = (uint32_t)put_data(d, NULL, 0, 0, 0);
	for (int s = 0; s < G3_NUM_SECTIONS; s++) {
		l->off[s] = 0;
		if (!l->count[s])
			continue;
		l->off[s] = align(end, s == G3_DATA ? G3_DATA_ALIGN : G3_ALIGN);
		end = l->off[s] + (uint64_t)l->count[s] * rec[s];
	}
	l->size = end;
}

static void put_header(uint8_t *img, const struct rkaccel_graph_desc *d, const struct layout *l,
		       uint32_t custom_off)
{
	memcpy(img, G3_MAGIC, 4);
	/* u16 each; the high bytes stay zero */
	img[G3H_MAJOR] = RKACCEL_GRAPH_VERSION_MAJOR;
	img[G3H_MINOR] = RKACCEL_GRAPH_VERSION_MINOR;
	g3_put32(img + G3H_HEADER_SIZE, G3_HEADER_SIZE);
	g3_put32(img + G3H_BATCH, d->batch);
	if (d->custom && *d->custom) {
		g3_put32(img + G3H_CUSTOM_OFF, custom_off);
		g3_put32(img + G3H_CUSTOM_LEN, (uint32_t)strlen(d->custom));
	}
	g3_put64(img + G3H_FILE_SIZE, l->size);
	for (int s = 0; s < G3_NUM_SECTIONS; s++)
		put_section(img, (enum g3_section)s, l->off[s], l->count[s], rec[s]);
}

int rkaccel_graph_serialize(const struct rkaccel_graph_desc *desc, void **buf, size_t *len)
{
	struct layout l;
	uint64_t str_at = 0;
	uint32_t first = 0;
	uint8_t *img;
	int ret;

	if (!buf || !len)
		return -EINVAL;
	ret = rkaccel_graph_validate(desc, NULL, 0);
	if (ret)
		return ret;
	lay_out(desc, &l);
	if (l.size > SIZE_MAX)
		return -ENOMEM;
	img = calloc(1, (size_t)l.size);
	if (!img)
		return -ENOMEM;
	for (uint32_t t = 0; t < desc->num_tensors; t++) {
		uint32_t n = (uint32_t)strlen(desc->tensors[t].name);

		memcpy(img + l.off[G3_STRINGS] + str_at, desc->tensors[t].name, n);
		put_tensor(img + l.off[G3_TENSORS] + (uint64_t)t * G3T_SIZE, &desc->tensors[t],
			   (uint32_t)str_at, n);
		str_at += n;
	}
	if (desc->custom)
		memcpy(img + l.off[G3_STRINGS] + str_at, desc->custom, strlen(desc->custom));
	for (uint32_t i = 0; i < desc->num_nodes; i++) {
		const struct rkaccel_graph_node *n = &desc->nodes[i];

		put_node(img + l.off[G3_NODES] + (uint64_t)i * G3N_SIZE, n, first);
		for (uint32_t k = 0; k < n->num_inputs; k++)
			g3_put32(img + l.off[G3_EDGES] + 4 * (uint64_t)(first + k), n->inputs[k]);
		first += n->num_inputs;
	}
	for (uint32_t i = 0; i < desc->num_inputs; i++) {
		uint8_t *r = img + l.off[G3_INPUTS] + (uint64_t)i * G3I_SIZE;

		g3_put32(r + G3I_TENSOR, desc->inputs[i].tensor);
		g3_put32(r + G3I_CHANNEL_ORDER, desc->inputs[i].channel_order);
	}
	for (uint32_t i = 0; i < desc->num_outputs; i++)
		g3_put32(img + l.off[G3_OUTPUTS] + (uint64_t)i * G3O_SIZE + G3O_TENSOR,
			 desc->outputs[i]);
	put_data(desc, img, l.off[G3_DATA], l.off[G3_NODES], l.off[G3_INPUTS]);
	put_header(img, desc, &l, (uint32_t)str_at);
	g3_put32(img + G3H_CHECKSUM, model_file_crc(img, (size_t)l.size));
	*buf = img;
	*len = (size_t)l.size;
	return 0;
}

int rkaccel_graph_save(const struct rkaccel_graph_desc *desc, const char *path)
{
	size_t len;
	void *buf;
	int ret;

	if (!path)
		return -EINVAL;
	ret = rkaccel_graph_serialize(desc, &buf, &len);
	if (ret)
		return ret;
	ret = model_write_file(path, buf, len);
	free(buf);
	return ret;
}
