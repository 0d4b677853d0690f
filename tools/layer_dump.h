/* SPDX-License-Identifier: MIT */
/*
 * rkaccel-run --dump-layers: run each image of the batch once with every
 * tensor kept (RKACCEL_CTX_KEEP_TENSORS), write every layer's output to a
 * folder, and compare each with the CPU reference of the model's 3.0 graph
 * (selftests/graph_ref.h, the reference the simulated NPU is tested
 * against), node by node in the graph's order: the first layer that
 * differs is where to look. Documentation/man/rkaccel-run.1 has the files.
 */
#ifndef RKACCEL_LAYER_DUMP_H
#define RKACCEL_LAYER_DUMP_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rkaccel.h"
#include "graph_ref.h"

/* One model tensor of the dump. */
struct dump_tensor {
	struct rkaccel_tensor_shape shape;
	size_t bytes;
	bool i32;		/* an int32 output (RKACCEL_LAYER_OUT_INT32), else int8 */
	int graph_tensor;	/* or < 0: a copy into a concat */
	const char *name, *op;
	uint8_t *npu, *cpu;
	int cpu_done;		/* the reference wrote it for this image */
};

struct layer_dump {
	const struct rkaccel_graph_desc *g;
	const struct rkaccel_model *model;
	uint32_t n;			/* model tensors: layers + 1 */
	struct dump_tensor *t;
	int *of_graph;			/* graph tensor -> model tensor, or -1 */
	char ref_msg[256];		/* why the reference did not run */
	int ref_ok;
};

static void dump_free(struct layer_dump *d)
{
	for (uint32_t i = 0; d->t && i < d->n; i++) {
		free(d->t[i].npu);
		free(d->t[i].cpu);
	}
	free(d->t);
	free(d->of_graph);
}

/* The op of model layer @i: its graph node's, or "copy" for a copy into a concat. */
static const char *dump_op(const struct rkaccel_graph_desc *g, int graph_tensor)
{
	for (uint32_t k = 0; graph_tensor >= 0 && k < g->num_nodes; k++)
		if (g->nodes[k].output == (uint32_t)graph_tensor)
			return rkaccel_graph_op_name(g->nodes[k].op);
	return "copy";
}

static int dump_init(struct layer_dump *d, const struct rkaccel_graph_desc *g,
		     const struct rkaccel_model *model)
{
	d->g = g;
	d->model = model;
	d->n = rkaccel_model_desc(model)->num_layers + 1;
	d->t = calloc(d->n, sizeof(*d->t));
	d->of_graph = malloc(g->num_tensors * sizeof(*d->of_graph));
	if (!d->t || !d->of_graph)
		return -ENOMEM;
	for (uint32_t k = 0; k < g->num_tensors; k++)
		d->of_graph[k] = -1;
	for (uint32_t i = 0; i < d->n; i++) {
		struct dump_tensor *t = &d->t[i];
		int ret = rkaccel_model_shape(model, i, &t->shape);

		if (ret)
			return ret;
		t->graph_tensor = rkaccel_model_graph_tensor(model, i);
		if (t->graph_tensor >= 0)
			d->of_graph[t->graph_tensor] = (int)i;
		t->name = t->graph_tensor >= 0 ? g->tensors[t->graph_tensor].name : "";
		t->op = i ? dump_op(g, t->graph_tensor) : "input";
		t->i32 = i + 1 == d->n && rkaccel_model_desc(model)->layers[i - 1].flags &
			 RKACCEL_LAYER_OUT_INT32;
		t->bytes = (size_t)t->shape.height * t->shape.width * t->shape.channels *
			   (t->i32 ? 4 : 1);
		t->npu = malloc(t->bytes);
		t->cpu = malloc(t->bytes);
		if (!t->npu || !t->cpu)
			return -ENOMEM;
	}
	return 0;
}

/* graph_ref_run()'s hook: each node's output lands on its model tensor. */
static void dump_ref_hook(void *arg, uint32_t image, uint32_t node, const void *data,
			  size_t bytes)
{
	struct layer_dump *d = arg;
	int m = d->of_graph[d->g->nodes[node].output];

	(void)image;
	if (m >= 0 && d->t[m].bytes == bytes) {
		memcpy(d->t[m].cpu, data, bytes);
		d->t[m].cpu_done = 1;
	}
}

/* The CPU reference of one image: the graph at batch 1 on @in. */
static int dump_ref_image(struct layer_dump *d, const void *in, void *out)
{
	struct rkaccel_graph_desc one = *d->g;
	const void *ins[1] = { in };
	void *outs[1] = { out };

	one.batch = 1;
	for (uint32_t i = 0; i < d->n; i++)
		d->t[i].cpu_done = 0;
	return graph_ref_run(&one, ins, outs, dump_ref_hook, d, d->ref_msg,
			     sizeof(d->ref_msg));
}

/* A file name from a tensor name: letters, digits, '-', '.' and '_' kept. */
static void dump_path(char *path, size_t len, const char *dir, uint32_t image, uint32_t i,
		      const char *name, const char *ext)
{
	char clean[72];
	size_t k;

	for (k = 0; name[k] && k + 1 < sizeof(clean); k++) {
		char c = name[k];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			 (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';

		clean[k] = ok ? c : '_';
	}
	clean[k] = 0;
	snprintf(path, len, "%s/%u/%03u%s%s.%s", dir, image, i, *clean ? "-" : "", clean, ext);
}

static int dump_write(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");
	int ret = 0;

	if (!f)
		return -errno;
	if (fwrite(buf, 1, len, f) != len)
		ret = -EIO;
	if (fclose(f) && !ret)
		ret = -errno;
	return ret;
}

/* A folder made, or one that is there already. */
static int dump_mkdir(const char *path)
{
	struct stat st;

	if (!mkdir(path, 0755))
		return 0;
	if (errno != EEXIST)
		return -errno;
	if (stat(path, &st))
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

/* layers.txt: what each file holds. */
static int dump_index(const struct layer_dump *d, const char *dir)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/layers.txt", dir);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "# layer tensor op height width channels type scale zero_point\n");
	for (uint32_t i = 0; i < d->n; i++) {
		const struct dump_tensor *t = &d->t[i];

		fprintf(f, "%u %s %s %u %u %u %s %.9g %d\n", i, *t->name ? t->name : "-", t->op,
			t->shape.height, t->shape.width, t->shape.channels, t->i32 ? "int32" : "int8",
			(double)t->shape.scale, t->shape.zero_point);
	}
	return fclose(f) ? -errno : 0;
}

/* Bytes (int8) or elements (int32) of @t that differ, and the largest difference. */
static size_t dump_diff(const struct dump_tensor *t, long long *max)
{
	size_t n = t->i32 ? t->bytes / 4 : t->bytes, bad = 0;

	*max = 0;
	for (size_t k = 0; k < n; k++) {
		long long a, b;

		if (t->i32) {
			int32_t x, y;

			memcpy(&x, t->npu + 4 * k, 4);
			memcpy(&y, t->cpu + 4 * k, 4);
			a = x;
			b = y;
		} else {
			a = (int8_t)t->npu[k];
			b = (int8_t)t->cpu[k];
		}
		if (a != b) {
			bad++;
			*max = llabs(a - b) > *max ? llabs(a - b) : *max;
		}
	}
	return bad;
}

#endif /* RKACCEL_LAYER_DUMP_H */
