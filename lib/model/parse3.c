// SPDX-License-Identifier: MIT
/*
 * Reading a 3.0 graph file (Documentation/model-format.rst, "Version 3.0:
 * graphs", "Reading a file"). Nothing in the file is trusted: the header
 * and the section table first (every section inside the file, in table
 * order, none overlapping, each count under its cap), then the records
 * with every string and edge reference bounded, then the validator's
 * structure rules (indices, order, shapes), which bound the array sizes;
 * only then are the arrays' places checked and the arrays copied, and
 * their values checked last. Offsets are computed in 64 bits from factors
 * bounded first; no byte outside [buf, buf + len) is read.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph3.h"
#include "model.h"

static const char *const section_name[G3_NUM_SECTIONS] = {
	"tensors", "nodes", "edges", "inputs", "outputs", "strings", "data",
};

/* Record sizes of 3.0; a later minor may only grow them. */
static const uint32_t min_rec[G3_NUM_SECTIONS] = {
	G3T_SIZE, G3N_SIZE, G3E_SIZE, G3I_SIZE, G3O_SIZE, 1, 1,
};

/* Counts over these are refused before anything is allocated. */
static const uint32_t max_count[G3_NUM_SECTIONS] = {
	RKACCEL_GRAPH_MAX_TENSORS, RKACCEL_GRAPH_MAX_NODES, RKACCEL_GRAPH_MAX_EDGES,
	RKACCEL_GRAPH_MAX_IO, RKACCEL_GRAPH_MAX_IO, G3_MAX_STRINGS,
	RKACCEL_MODEL_MAX_FILE_SIZE,
};

struct section {
	uint64_t off;
	uint32_t count, rec;
};

/* What the parse reads before the graph object exists. */
struct parse {
	const uint8_t *img;
	size_t len;
	uint16_t minor;
	struct section sec[G3_NUM_SECTIONS];
	uint32_t *arrays;	/* per node 6, then per input 4: (offset, size) pairs */
	char *msg;
	size_t msg_len;
};

#define BAD(fmt, ...) model_bad(p->msg, p->msg_len, fmt, ##__VA_ARGS__)

/* A record of section @s. */
static const uint8_t *rec(const struct parse *p, enum g3_section s, uint32_t i)
{
	return p->img + p->sec[s].off + (uint64_t)i * p->sec[s].rec;
}

static bool zero(const uint8_t *b, size_t n)
{
	while (n--)
		if (*b++)
			return false;
	return true;
}

static int parse_version(struct parse *p, uint32_t *header_size)
{
	uint16_t major;

	if (p->len < 8)
		return BAD("file is %zu bytes, shorter than the %u-byte header", p->len,
			   G3_HEADER_SIZE);
	if (memcmp(p->img, G3_MAGIC, 4))
		return BAD("bad magic: not an rkaccel model file");
	major = (uint16_t)(p->img[G3H_MAJOR] | p->img[G3H_MAJOR + 1] << 8);
	p->minor = (uint16_t)(p->img[G3H_MINOR] | p->img[G3H_MINOR + 1] << 8);
	if (major != RKACCEL_GRAPH_VERSION_MAJOR) {
		model_bad(p->msg, p->msg_len, "version %u.%u is not a graph (3.x)%s", major, p->minor,
		       major == 1 || major == 2 ? ": read it with rkaccel_model_parse()" : "");
		return -ENOTSUP;
	}
	if (p->len < G3_HEADER_SIZE)
		return BAD("file is %zu bytes, shorter than the %u-byte header", p->len,
			   G3_HEADER_SIZE);
	*header_size = g3_get32(p->img + G3H_HEADER_SIZE);
	if (p->minor == 0 ? *header_size != G3_HEADER_SIZE :
	    *header_size < G3_HEADER_SIZE || *header_size > G3_MAX_EXT_SIZE)
		return BAD("header_size %u wrong for version 3.%u", *header_size, p->minor);
	return 0;
}

static int parse_header(struct parse *p, uint32_t *header_size)
{
	uint64_t file_size;
	uint32_t crc, want;
	int ret = parse_version(p, header_size);

	if (ret)
		return ret;
	file_size = g3_get64(p->img + G3H_FILE_SIZE);
	if (file_size != p->len)
		return BAD("header says the file is %llu bytes, it is %zu (%s)",
			   (unsigned long long)file_size, p->len,
			   file_size > p->len ? "truncated" : "trailing bytes");
	if (*header_size > p->len)
		return BAD("header_size %u beyond the %zu-byte file", *header_size, p->len);
	want = g3_get32(p->img + G3H_CHECKSUM);
	crc = model_file_crc(p->img, p->len);
	if (crc != want) {
		model_bad(p->msg, p->msg_len,
		       "checksum mismatch: header says 0x%08x, contents give 0x%08x (corrupted file)",
		       want, crc);
		return -EBADMSG;
	}
	if (g3_get32(p->img + G3H_FLAGS))
		return BAD("unknown header flags 0x%x", g3_get32(p->img + G3H_FLAGS));
	if (g3_get32(p->img + G3H_RESERVED0) || g3_get32(p->img + G3H_RESERVED1))
		return BAD("reserved header bytes 28..31 or 44..47 are not zero");
	return 0;
}

/* The section table: each inside the file, after the one before, capped. */
static int parse_sections(struct parse *p, uint32_t header_size)
{
	uint64_t end = header_size;

	for (int s = 0; s < G3_NUM_SECTIONS; s++) {
		const uint8_t *e = p->img + G3H_SECTIONS + s * G3S_ENTRY_SIZE;
		struct section *sc = &p->sec[s];
		uint64_t align = s == G3_DATA ? G3_DATA_ALIGN : G3_ALIGN, size;
		bool fixed = p->minor == 0 || s >= G3_STRINGS;

		sc->off = g3_get64(e + G3S_OFFSET);
		sc->count = g3_get32(e + G3S_COUNT);
		sc->rec = g3_get32(e + G3S_RECORD_SIZE);
		if (fixed ? sc->rec != min_rec[s] : sc->rec < min_rec[s] || sc->rec > G3_MAX_EXT_SIZE)
			return BAD("section %s: record size %u wrong for version 3.%u",
				   section_name[s], sc->rec, p->minor);
		if (sc->count > max_count[s])
			return BAD("section %s: count %u over the limit of %u", section_name[s],
				   sc->count, max_count[s]);
		if (!sc->count) {
			if (sc->off)
				return BAD("section %s: offset %llu with count 0", section_name[s],
					   (unsigned long long)sc->off);
			continue;
		}
		/* count < 2^32 and rec <= 4096: no wrap */
		size = (uint64_t)sc->count * sc->rec;
		if (sc->off % align)
			return BAD("section %s: offset %llu is not a multiple of %llu",
				   section_name[s], (unsigned long long)sc->off,
				   (unsigned long long)align);
		if (sc->off < end)
			return BAD("section %s: offset %llu before the end of the one before (%llu)",
				   section_name[s], (unsigned long long)sc->off,
				   (unsigned long long)end);
		if (sc->off > p->len || size > p->len - sc->off)
			return BAD("section %s: %llu bytes at %llu end beyond the %zu-byte file",
				   section_name[s], (unsigned long long)size,
				   (unsigned long long)sc->off, p->len);
		end = sc->off + size;
	}
	return 0;
}

/* A name or the custom string: inside the strings section, no NUL. */
static int string_ref(struct parse *p, uint32_t off, uint32_t len, uint32_t max,
		      const char *what, uint32_t i, const uint8_t **out)
{
	const struct section *s = &p->sec[G3_STRINGS];

	if (len > max || (uint64_t)off + len > s->count)
		return BAD("%s %u: string at %u, %u bytes, outside the %u-byte strings section or over %u",
			   what, i, off, len, s->count, max);
	*out = p->img + s->off + off;
	if (memchr(*out, 0, len))
		return BAD("%s %u: string holds a NUL byte", what, i);
	return 0;
}

static int parse_tensors(struct parse *p, struct rkaccel_graph *g, char **names)
{
	for (uint32_t i = 0; i < p->sec[G3_TENSORS].count; i++) {
		const uint8_t *r = rec(p, G3_TENSORS, i), *name;
		struct rkaccel_graph_tensor *t = &g->tensors[i];
		uint32_t len = g3_get32(r + G3T_NAME_LEN);
		int ret = string_ref(p, g3_get32(r + G3T_NAME_OFF), len, RKACCEL_GRAPH_MAX_NAME,
				     "tensor", i, &name);

		if (ret)
			return ret;
		if (!len)
			return BAD("tensor %u: empty name", i);
		if (!zero(r + G3T_RESERVED, G3T_SIZE - G3T_RESERVED))
			return BAD("tensor %u: reserved record bytes 40..47 are not zero", i);
		memcpy(*names, name, len);
		t->name = *names;
		*names += len + 1;
		t->type = g3_get32(r + G3T_TYPE);
		t->n_dims = g3_get32(r + G3T_N_DIMS);
		for (int k = 0; k < 4; k++)
			t->dims[k] = g3_get32(r + G3T_DIMS + 4 * k);
		t->scale = g3_bitsf(g3_get32(r + G3T_SCALE));
		t->zero_point = (int32_t)g3_get32(r + G3T_ZERO_POINT);
	}
	return 0;
}

static void read_node_fields(const uint8_t *r, struct rkaccel_graph_node *n)
{
	n->op = g3_get32(r + G3N_OP);
	n->output = g3_get32(r + G3N_OUTPUT);
	n->kernel_h = g3_get32(r + G3N_KERNEL_H);
	n->kernel_w = g3_get32(r + G3N_KERNEL_W);
	n->stride_h = g3_get32(r + G3N_STRIDE_H);
	n->stride_w = g3_get32(r + G3N_STRIDE_W);
	n->pad_top = g3_get32(r + G3N_PAD_TOP);
	n->pad_left = g3_get32(r + G3N_PAD_LEFT);
	n->pad_bottom = g3_get32(r + G3N_PAD_BOTTOM);
	n->pad_right = g3_get32(r + G3N_PAD_RIGHT);
	n->dilation_h = g3_get32(r + G3N_DILATION_H);
	n->dilation_w = g3_get32(r + G3N_DILATION_W);
	n->groups = g3_get32(r + G3N_GROUPS);
	n->flags = g3_get32(r + G3N_FLAGS);
	n->axis = g3_get32(r + G3N_AXIS);
	n->act = g3_get32(r + G3N_ACT);
	n->clip_min = g3_bitsf(g3_get32(r + G3N_CLIP_MIN));
	n->clip_max = g3_bitsf(g3_get32(r + G3N_CLIP_MAX));
	n->leaky_slope = g3_bitsf(g3_get32(r + G3N_LEAKY_SLOPE));
	n->weight_scale = g3_bitsf(g3_get32(r + G3N_WEIGHT_SCALE));
}

/* Nodes: their inputs are consecutive runs of the edges, node after node. */
static int parse_nodes(struct parse *p, struct rkaccel_graph *g)
{
	uint32_t edges = p->sec[G3_EDGES].count, next = 0;

	for (uint32_t e = 0; e < edges; e++)
		g->edges[e] = g3_get32(rec(p, G3_EDGES, e));
	for (uint32_t i = 0; i < p->sec[G3_NODES].count; i++) {
		const uint8_t *r = rec(p, G3_NODES, i);
		struct rkaccel_graph_node *n = &g->nodes[i];
		uint32_t first = g3_get32(r + G3N_INPUT_FIRST);

		n->num_inputs = g3_get32(r + G3N_NUM_INPUTS);
		if (first != next)
			return BAD("node %u: input_first %u, the inputs of the nodes before end at %u",
				   i, first, next);
		if (n->num_inputs > RKACCEL_GRAPH_MAX_NODE_INPUTS ||
		    n->num_inputs > edges - first)
			return BAD("node %u: %u inputs from edge %u, the edges section has %u", i,
				   n->num_inputs, first, edges);
		if (!zero(r + G3N_RESERVED, G3N_SIZE - G3N_RESERVED))
			return BAD("node %u: reserved record bytes 112..127 are not zero", i);
		n->inputs = g->edges + first;
		next = first + n->num_inputs;
		read_node_fields(r, n);
		for (int k = 0; k < 6; k++)
			p->arrays[6 * i + k] = g3_get32(r + G3N_WEIGHTS + 4 * k);
	}
	if (next != edges)
		return BAD("the edges section has %u entries, the nodes use %u", edges, next);
	return 0;
}

static int parse_io(struct parse *p, struct rkaccel_graph *g)
{
	uint32_t *arr = p->arrays + 6 * (size_t)p->sec[G3_NODES].count;

	for (uint32_t i = 0; i < p->sec[G3_INPUTS].count; i++) {
		const uint8_t *r = rec(p, G3_INPUTS, i);

		if (!zero(r + G3I_RESERVED, G3I_SIZE - G3I_RESERVED))
			return BAD("input %u: reserved record bytes 24..31 are not zero", i);
		g->inputs[i].tensor = g3_get32(r + G3I_TENSOR);
		g->inputs[i].channel_order = g3_get32(r + G3I_CHANNEL_ORDER);
		for (int k = 0; k < 4; k++)
			arr[4 * i + k] = g3_get32(r + G3I_MEAN + 4 * k);
	}
	for (uint32_t i = 0; i < p->sec[G3_OUTPUTS].count; i++) {
		const uint8_t *r = rec(p, G3_OUTPUTS, i);

		if (!zero(r + G3O_RESERVED, G3O_SIZE - G3O_RESERVED))
			return BAD("output %u: reserved record bytes 4..7 are not zero", i);
		g->outputs[i] = g3_get32(r + G3O_TENSOR);
	}
	return 0;
}

static int parse_custom(struct parse *p, struct rkaccel_graph *g, char *names)
{
	uint32_t off = g3_get32(p->img + G3H_CUSTOM_OFF), len = g3_get32(p->img + G3H_CUSTOM_LEN);
	const uint8_t *s;
	int ret;

	if (!len) {
		if (off)
			return BAD("custom string offset %u with length 0", off);
		return 0;
	}
	ret = string_ref(p, off, len, RKACCEL_GRAPH_MAX_CUSTOM, "custom string", 0, &s);
	if (ret)
		return ret;
	memcpy(names, s, len);
	g->desc.custom = names;
	return 0;
}

/*
 * One array's place: @want bytes (0: absent, offset 0) at a multiple of 64,
 * at or after *@cursor, inside the data section. Returns its offset.
 */
static int check_array(struct parse *p, const uint32_t *pair, uint64_t want, uint64_t *cursor,
		       const char *what, uint32_t i, const char *name)
{
	uint64_t off = pair[0], size = pair[1];

	if (size != want)
		return BAD("%s %u: %s size %llu bytes, the shapes need %llu", what, i, name,
			   (unsigned long long)size, (unsigned long long)want);
	if (!size) {
		if (off)
			return BAD("%s %u: %s offset %llu with size 0", what, i, name,
				   (unsigned long long)off);
		return 0;
	}
	if (off % G3_DATA_ALIGN)
		return BAD("%s %u: %s offset %llu is not a multiple of %u", what, i, name,
			   (unsigned long long)off, G3_DATA_ALIGN);
	if (off < *cursor)
		return BAD("%s %u: %s at %llu, before the end of the array before it (%llu)", what,
			   i, name, (unsigned long long)off, (unsigned long long)*cursor);
	if (off + size > p->sec[G3_DATA].count)
		return BAD("%s %u: %s ends at %llu, the data section has %u bytes", what, i, name,
			   (unsigned long long)(off + size), p->sec[G3_DATA].count);
	*cursor = off + size;
	return 0;
}

/* 32-bit little-endian values from the file into place (int32 or binary32). */
static void copy32(struct parse *p, void *dst, uint32_t off, uint64_t bytes)
{
	const uint8_t *src = p->img + p->sec[G3_DATA].off + off;

	for (uint64_t k = 0; k < bytes / 4; k++) {
		uint32_t v = g3_get32(src + 4 * k);

		memcpy((uint8_t *)dst + 4 * k, &v, 4);
	}
}

/* Places of all arrays against the validated shapes, then the copies. */
static int parse_arrays(struct parse *p, struct rkaccel_graph *g)
{
	const struct rkaccel_graph_desc *d = &g->desc;
	uint8_t *data = g->data;
	uint64_t cursor = 0;
	int ret = 0;

	for (uint32_t i = 0; !ret && i < d->num_nodes; i++) {
		struct rkaccel_graph_node *n = &g->nodes[i];
		const uint32_t *a = p->arrays + 6 * (size_t)i;
		uint64_t ws = a[5] ? g3_wscales_size(d, n) : 0;

		ret = check_array(p, a, g3_weights_size(d, n), &cursor, "node", i, "weights");
		if (!ret)
			ret = check_array(p, a + 2, g3_bias_size(d, n), &cursor, "node", i, "bias");
		if (!ret)
			ret = check_array(p, a + 4, ws, &cursor, "node", i, "weight_scales");
		if (ret || !g3_has_weights(n->op))
			continue;
		memcpy(data + a[0], p->img + p->sec[G3_DATA].off + a[0], a[1]);
		n->weights = (const int8_t *)(data + a[0]);
		copy32(p, data + a[2], a[2], a[3]);
		n->bias = (const int32_t *)(void *)(data + a[2]);
		if (ws) {
			copy32(p, data + a[4], a[4], a[5]);
			n->weight_scales = (const float *)(void *)(data + a[4]);
		}
	}
	for (uint32_t i = 0; !ret && i < d->num_inputs; i++) {
		struct rkaccel_graph_input *in = &g->inputs[i];
		const uint32_t *a = p->arrays + 6 * (size_t)d->num_nodes + 4 * (size_t)i;
		uint64_t size = a[1] || a[3] ? 4 * (uint64_t)g3_channels(&d->tensors[in->tensor]) : 0;

		ret = check_array(p, a, size, &cursor, "input", i, "mean");
		if (!ret)
			ret = check_array(p, a + 2, size, &cursor, "input", i, "std");
		if (ret || !size)
			continue;
		copy32(p, data + a[0], a[0], size);
		copy32(p, data + a[2], a[2], size);
		in->mean = (const float *)(void *)(data + a[0]);
		in->std = (const float *)(void *)(data + a[2]);
	}
	return ret;
}

/* The records into @g; strings and references checked, not yet the rules. */
static int parse_records(struct parse *p, struct rkaccel_graph *g)
{
	char *names = g->names;
	int ret = parse_tensors(p, g, &names);

	if (!ret)
		ret = parse_nodes(p, g);
	if (!ret)
		ret = parse_io(p, g);
	if (!ret)
		ret = parse_custom(p, g, names);
	g->desc.batch = g3_get32(p->img + G3H_BATCH);
	return ret;
}

/*
 * Bytes for every name and the custom string, each with a NUL. Names may
 * share bytes of the strings section, so its size is no bound; the lengths
 * are clamped here to their caps (longer ones are refused later).
 */
static size_t names_size(const struct parse *p)
{
	uint32_t custom = g3_get32(p->img + G3H_CUSTOM_LEN);
	size_t n = 1 + (custom < RKACCEL_GRAPH_MAX_CUSTOM ? custom : RKACCEL_GRAPH_MAX_CUSTOM);

	for (uint32_t i = 0; i < p->sec[G3_TENSORS].count; i++) {
		uint32_t len = g3_get32(rec(p, G3_TENSORS, i) + G3T_NAME_LEN);

		n += 1 + (len < RKACCEL_GRAPH_MAX_NAME ? len : RKACCEL_GRAPH_MAX_NAME);
	}
	return n;
}

static int parse_graph(struct parse *p, struct rkaccel_graph **out)
{
	const struct section *s = p->sec;
	struct rkaccel_graph *g;
	int ret;

	ret = g3_alloc(s[G3_TENSORS].count, s[G3_NODES].count, s[G3_EDGES].count,
		       s[G3_INPUTS].count, s[G3_OUTPUTS].count, names_size(p),
		       s[G3_DATA].count, &g);
	p->arrays = calloc(6 * (size_t)s[G3_NODES].count + 4 * (size_t)s[G3_INPUTS].count + 1,
			   sizeof(*p->arrays));
	if (ret || !p->arrays) {
		rkaccel_graph_free(ret ? NULL : g);
		model_bad(p->msg, p->msg_len, "out of memory");
		return -ENOMEM;
	}
	ret = parse_records(p, g);
	if (!ret)
		ret = g3_check_structure(&g->desc, p->msg, p->msg_len);
	if (!ret)
		ret = parse_arrays(p, g);
	if (!ret)
		ret = g3_check_arrays(&g->desc, p->msg, p->msg_len);
	if (ret) {
		rkaccel_graph_free(g);
		return ret;
	}
	*out = g;
	return 0;
}

int rkaccel_graph_parse(const void *buf, size_t len, struct rkaccel_graph **graph,
			char *msg, size_t msg_len)
{
	struct parse p = { .img = buf, .len = len, .msg = msg, .msg_len = msg_len };
	uint32_t header_size = 0;
	int ret;

	if (msg && msg_len)
		msg[0] = '\0';
	if (!graph || (!buf && len))
		return model_bad(msg, msg_len, "invalid arguments");
	ret = parse_header(&p, &header_size);
	if (!ret)
		ret = parse_sections(&p, header_size);
	if (!ret)
		ret = parse_graph(&p, graph);
	free(p.arrays);
	return ret;
}

int rkaccel_graph_load(const char *path, struct rkaccel_graph **graph, char *msg,
		       size_t msg_len)
{
	uint8_t *buf;
	size_t len;
	int ret;

	if (msg && msg_len)
		msg[0] = '\0';
	if (!path || !graph)
		return model_bad(msg, msg_len, "invalid arguments");
	ret = model_read_file(path, &buf, &len, msg, msg_len);
	if (ret)
		return ret;
	ret = rkaccel_graph_parse(buf, len, graph, msg, msg_len);
	free(buf);
	if (ret)
		model_msg_prefix(path, msg, msg_len);
	return ret;
}
