// SPDX-License-Identifier: GPL-2.0-only
/*
 * The zoo's data for the guests, made natively on the host by
 * scripts/zoo-data.sh: for every network of tools/zoo.h at its full input
 * size and at a small one, the model file (batch 3), three seeded input
 * images and graph_ref.h's output bytes for them, and a line of zoo.txt:
 *
 *   NAME HxW IN_BYTES OUT_BYTES CRC_B3 SIZE_B3 CRC_B2 SIZE_B2
 *
 * (the CRC-32 and size of the model file at batch 3 and at batch 2, so
 * that the guest, which writes the same file from the same seed, knows it
 * runs the model the references are for). Prints per network its nodes,
 * MACs per image, weight bytes, how the outputs spread, and what the
 * library makes of it for the RK3588: tasks and regcmd bytes, or the
 * lowering's refusal (not a failure: the general compiler is issue 26's).
 *
 *   zoo_ref OUTDIR [NAME...]
 *
 * Not a *_test.c: user.mk does not build it; zoo-data.sh builds it for the
 * host against the host's librkaccel.a.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graph_ref.h"
#include "graph_cost.h"
#include "zoo.h"

#define ZOO_IMAGES	3	/* the largest batch: RK3588's three cores */
#define ZOO_SEED	1

/* The small input of each network: the whole networks at 96x96. */
static void small_size(const struct zoo_entry *z, uint32_t *h, uint32_t *w)
{
	*h = z->h == 224 ? 96 : z->h == 7 || z->h == 32 ? z->h : z->h / 2;
	*w = z->w == 224 ? 96 : z->w == 7 || z->w == 32 ? z->w : z->w / 2;
}

static int write_file(const char *dir, const char *name, const void *buf, size_t len)
{
	char path[512];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f) {
		perror(path);
		return -1;
	}
	ok = fwrite(buf, 1, len, f) == len;
	ok &= !fclose(f);
	if (!ok)
		fprintf(stderr, "%s: write failed\n", path);
	return ok ? 0 : -1;
}

/* The file image of @name at @batch: its CRC-32 (header offset 40) and size. */
static int model_image(const char *name, uint32_t batch, uint32_t h, uint32_t w, void **buf,
		       size_t *len, uint32_t *crc)
{
	struct zb b;
	int ret = zoo_build(name, batch, h, w, ZOO_SEED, &b);

	if (!ret)
		ret = rkaccel_graph_serialize(&b.desc, buf, len);
	if (ret)
		fprintf(stderr, "%s: %s\n", name, b.err ? b.msg : rkaccel_strerror(ret));
	else
		*crc = (uint32_t)((uint8_t *)*buf)[40] | (uint32_t)((uint8_t *)*buf)[41] << 8 |
		       (uint32_t)((uint8_t *)*buf)[42] << 16 | (uint32_t)((uint8_t *)*buf)[43] << 24;
	zb_free(&b);
	return ret;
}

/* One network at one size: files, a zoo.txt line, a summary line. */
static int one(const char *dir, FILE *manifest, const struct zoo_entry *z, uint32_t h,
	       uint32_t w)
{
	struct rkaccel_info info = gc_rk3588();
	size_t in_bytes, out_bytes, len3, len2;
	uint32_t crc3 = 0, crc2 = 0, distinct = 0, sat = 0;
	void *img3 = NULL, *img2 = NULL;
	struct gc_compiled c;
	char fname[128], msg[256] = "";
	bool seen[256] = { false };
	uint8_t *in = NULL, *out = NULL;
	struct timespec t0, t1;
	struct zb b;
	int ret;

	ret = zoo_build(z->name, ZOO_IMAGES, h, w, ZOO_SEED, &b);
	if (ret) {
		fprintf(stderr, "%s %ux%u: %s\n", z->name, h, w, b.msg);
		zb_free(&b);
		return -1;
	}
	in_bytes = gref_bytes(&b.t[b.in.tensor]);
	out_bytes = gref_bytes(&b.t[b.out]);
	in = malloc(in_bytes * ZOO_IMAGES);
	out = malloc(out_bytes * ZOO_IMAGES);
	ret = !in || !out ? -ENOMEM : 0;
	for (uint32_t i = 0; i < ZOO_IMAGES && !ret; i++)
		zoo_input(ZOO_SEED, i, (int8_t *)in + i * in_bytes, in_bytes);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!ret) {
		const void *ins[1] = { in };
		void *outs[1] = { out };

		ret = graph_ref_run(&b.desc, ins, outs, NULL, NULL, msg, sizeof(msg));
		if (ret)
			fprintf(stderr, "%s %ux%u: graph_ref: %s\n", z->name, h, w,
				ret == -ENOTSUP ? msg : rkaccel_strerror(ret));
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (!ret)
		ret = model_image(z->name, 3, h, w, &img3, &len3, &crc3) ||
		      model_image(z->name, 2, h, w, &img2, &len2, &crc2) ? -1 : 0;
	if (!ret) {
		snprintf(fname, sizeof(fname), "%s-%ux%u-b3.rkml", z->name, h, w);
		ret = write_file(dir, fname, img3, len3);
	}
	if (!ret) {
		snprintf(fname, sizeof(fname), "%s-%ux%u.in", z->name, h, w);
		ret = write_file(dir, fname, in, in_bytes * ZOO_IMAGES);
	}
	if (!ret) {
		snprintf(fname, sizeof(fname), "%s-%ux%u.expected", z->name, h, w);
		ret = write_file(dir, fname, out, out_bytes * ZOO_IMAGES);
	}
	if (!ret) {
		int32_t zp = b.t[b.out].zero_point;

		for (size_t k = 0; k < out_bytes * ZOO_IMAGES; k++) {
			int8_t v = (int8_t)out[k];

			sat += v == 127 || (v == -128 && zp != -128);
			distinct += !seen[out[k]];
			seen[out[k]] = true;
		}
		fprintf(manifest, "%s %ux%u %zu %zu %08x %zu %08x %zu\n", z->name, h, w, in_bytes,
			out_bytes, crc3, len3, crc2, len2);
		/* batch 1 for the figures per image */
		b.desc.batch = 1;
		for (uint32_t t = 0; t < b.nt; t++)
			b.t[t].dims[0] = 1;
		gc_compile(&b.desc, &info, false, &c);
		printf("zoo: %-12s %4ux%-4u %4u nodes %11llu MACs/image %10llu weight bytes  "
		       "out %u values %.1f%% sat  host %.1f s  ", z->name, h, w, b.nn,
		       (unsigned long long)b.macs, (unsigned long long)b.weight_bytes, distinct,
		       100.0 * sat / (out_bytes * ZOO_IMAGES),
		       (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
		if (c.ret)
			printf("RK3588: not compiled: %s\n", c.msg);
		else
			printf("RK3588: %u tasks, %zu regcmd bytes, %zu activation bytes\n", c.tasks,
			       c.regcmd_bytes, c.internal_bytes);
		gc_free(&c);
	}
	free(img3);
	free(img2);
	free(in);
	free(out);
	zb_free(&b);
	return ret ? -1 : 0;
}

int main(int argc, char **argv)
{
	char path[512];
	FILE *manifest;
	int bad = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: zoo_ref OUTDIR [NAME...]\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/zoo.txt", argv[1]);
	manifest = fopen(path, "w");
	if (!manifest) {
		perror(path);
		return 1;
	}
	for (size_t k = 0; k < ZOO_COUNT; k++) {
		const struct zoo_entry *z = &zoo_nets[k];
		uint32_t h, w;
		bool wanted = argc == 2;

		for (int i = 2; i < argc; i++)
			wanted |= !strcmp(argv[i], z->name);
		if (!wanted)
			continue;
		small_size(z, &h, &w);
		bad |= one(argv[1], manifest, z, z->h, z->w);
		if (h != z->h || w != z->w)
			bad |= one(argv[1], manifest, z, h, w);
		fflush(manifest);
		fflush(stdout);
	}
	if (fclose(manifest))
		bad = 1;
	return bad ? 1 : 0;
}
