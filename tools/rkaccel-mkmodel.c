// SPDX-License-Identifier: MIT
/*
 * rkaccel-mkmodel: write an rkaccel model file from a text description and
 * raw weight files, or from a seed; print a summary of one.
 * Documentation/model-format.rst describes the file and the description.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rkaccel.h"
#include "args.h"
#include "zoo.h"

#define PROG "rkaccel-mkmodel"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " --random SEED --rows M --layers K0,K1,...,Kn [--relu] [--out-int32] -o FILE\n"
		"       " PROG " --desc DESC.txt -o FILE\n"
		"       " PROG " --net NET.txt [--seed SEED] -o FILE\n"
		"       " PROG " --dump FILE\n"
		"       " PROG " --to-graph FILE -o FILE\n"
		"       " PROG " --zoo NAME [--batch B] [--size HxW] [--seed SEED] -o FILE\n"
		"\n"
		"Write an rkaccel quantized MLP model file, or check and summarize one.\n"
		"  --random SEED   generate layers K0->K1, ..., K(n-1)->Kn from SEED (0..2^32-1);\n"
		"                  hidden layers use ReLU, --relu and --out-int32 set the last\n"
		"  --desc FILE     build from a text description naming raw weight and bias files\n"
		"  --net FILE      a random network (format 2.0) from a description, one\n"
		"                  operation a line (conv 3x3 s2 c16, dw 3x3, pw c32, add 2,\n"
		"                  maxpool 2x2 s2, avgpool global, fc 10); --seed SEED (0)\n"
		"  --dump FILE     validate FILE and print its layers\n"
		"  --to-graph FILE write the 1.x/2.x model FILE as the equivalent format 3.0 graph\n"
		"  --zoo NAME      a full-size network as a format 3.0 graph with seeded random\n"
		"                  weights: mobilenetv1, mobilenetv2, resnet18, resnet50,\n"
		"                  squeezenet, inception, densenet, vgg16head, lenet5;\n"
		"                  --batch B (default 1), --size HxW (224x224 for the whole\n"
		"                  networks), --seed SEED (1): the same bytes on every machine\n"
		"Numbers are decimal (no sign, 0x or leading zero); --layers has no empty field.\n"
		"See rkaccel-mkmodel(1) and Documentation/model-format.rst.\n");
}

#define err(...)	arg_err(PROG, __VA_ARGS__)

/* The description's integers: as on the command line, decimal only. */
static int parse_u32(const char *s, uint32_t max, uint32_t *out)
{
	return arg_u32(s, 0, max, out) ? -1 : 0;
}

static int parse_i32(const char *s, int32_t min, int32_t max, int32_t *out)
{
	return arg_i32(s, min, max, out) ? -1 : 0;
}

/* A decimal or hexadecimal (0x1p-7) float; range checks are the library's. */
static int parse_float(const char *s, float *out)
{
	char *end;

	if (!*s)
		return -1;
	errno = 0;
	*out = strtof(s, &end);
	return errno || *end ? -1 : 0;
}

/* Read a whole file of exactly @want bytes into a new buffer. */
static void *read_exact(const char *path, uint64_t want, const char *ctx)
{
	const char *why;
	struct stat st;
	uint8_t *buf;
	size_t done = 0;
	int fd;

	fd = arg_open_in(path, &why);
	if (fd < 0) {
		err("%s: %s: %s", ctx, path, why);
		return NULL;
	}
	if (fstat(fd, &st) || (uint64_t)st.st_size != want) {
		err("%s: %s: %lld bytes, the layer needs %llu", ctx, path,
		    (long long)st.st_size, (unsigned long long)want);
		close(fd);
		return NULL;
	}
	buf = malloc(want ? want : 1);
	if (!buf) {
		err("out of memory");
		close(fd);
		return NULL;
	}
	while (done < want) {
		ssize_t n = read(fd, buf + done, want - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err("%s: %s: %s", ctx, path, n ? strerror(errno) : "file shrank");
			free(buf);
			close(fd);
			return NULL;
		}
		done += (size_t)n;
	}
	close(fd);
	return buf;
}

/* --- --random ------------------------------------------------------------ */

static int cmd_random(uint32_t seed, uint32_t rows, const char *list, uint32_t flags,
		      const char *out)
{
	uint32_t features[RKACCEL_MODEL_MAX_LAYERS + 1];
	unsigned int n;
	uint64_t total = 0;
	struct rkaccel_model *m;
	char why[96];
	int ret;

	if (arg_u32_list(list, 1, RKACCEL_MODEL_MAX_FEATURES, features,
			 RKACCEL_MODEL_MAX_LAYERS + 1, &n, why, sizeof(why))) {
		err("--layers '%s': %s (feature counts are decimal numbers in 1..%u, "
		    "at most %u layers)", list, why, RKACCEL_MODEL_MAX_FEATURES,
		    RKACCEL_MODEL_MAX_LAYERS);
		return 2;
	}
	if (n < 2) {
		err("--layers '%s': need at least two feature counts (input,output)", list);
		return 2;
	}
	for (uint32_t i = 0; i + 1 < n; i++)
		total += (uint64_t)features[i] * features[i + 1];
	if (total > RKACCEL_MODEL_MAX_WEIGHT_BYTES) {
		err("--layers: total weights %llu bytes exceed the limit of %u",
		    (unsigned long long)total, RKACCEL_MODEL_MAX_WEIGHT_BYTES);
		return 1;
	}
	ret = rkaccel_model_random(seed, rows, n - 1, features, flags, &m);
	if (ret) {
		err("cannot generate the model: %s", rkaccel_strerror(ret));
		return 1;
	}
	ret = rkaccel_model_save(rkaccel_model_desc(m), out);
	rkaccel_model_free(m);
	if (ret) {
		err("%s: %s", out, ret == -ENXIO ? "a FIFO with no reader" :
		    rkaccel_strerror(ret));
		return 1;
	}
	return 0;
}

/* --- --desc -------------------------------------------------------------- */

enum {
	K_IN, K_OUT, K_FLAGS, K_IN_ZP, K_OUT_ZP, K_IN_SCALE, K_WEIGHT_SCALE,
	K_OUT_SCALE, K_WEIGHTS, K_BIAS, K_COUNT
};

static const char *const keys[K_COUNT] = {
	"in", "out", "flags", "in_zp", "out_zp", "in_scale", "weight_scale",
	"out_scale", "weights", "bias",
};

/* Required keys: all but flags and the zero points. */
#define REQUIRED	(1u << K_IN | 1u << K_OUT | 1u << K_IN_SCALE | 1u << K_WEIGHT_SCALE | \
			 1u << K_OUT_SCALE | 1u << K_WEIGHTS | 1u << K_BIAS)

struct desc_state {
	const char *file;
	unsigned int line;
	char dir[4096];		/* of the description, with a trailing '/' or empty */
	struct rkaccel_layer_desc layers[RKACCEL_MODEL_MAX_LAYERS];
	char *wpath[RKACCEL_MODEL_MAX_LAYERS], *bpath[RKACCEL_MODEL_MAX_LAYERS];
	uint32_t num_layers;
	uint32_t rows;
	int have_rows;
};

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int desc_err(const struct desc_state *st, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": %s:%u: ", st->file, st->line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

/* "none" or names separated by single commas: no empty name. */
static int parse_flags(const char *v, uint32_t *flags)
{
	const char *p = v;

	*flags = 0;
	if (!strcmp(v, "none"))
		return 0;
	for (;;) {
		size_t len = strcspn(p, ",");

		if (len == 4 && !strncmp(p, "relu", len))
			*flags |= RKACCEL_LAYER_RELU;
		else if (len == 9 && !strncmp(p, "out_int32", len))
			*flags |= RKACCEL_LAYER_OUT_INT32;
		else
			return -1;	/* also an empty name */
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

static char *resolve(const struct desc_state *st, const char *path)
{
	size_t n = strlen(st->dir) + strlen(path) + 1;
	char *p = malloc(n);

	if (p)
		snprintf(p, n, "%s%s", path[0] == '/' ? "" : st->dir, path);
	return p;
}

/* One "layer key=value ..." statement; @save is the strtok_r position. */
static int parse_layer(struct desc_state *st, char **save)
{
	struct rkaccel_layer_desc *l;
	uint32_t seen = 0;
	unsigned int i = st->num_layers;
	char *tok;

	if (i == RKACCEL_MODEL_MAX_LAYERS)
		return desc_err(st, "more than %u layers", RKACCEL_MODEL_MAX_LAYERS);
	l = &st->layers[i];
	while ((tok = strtok_r(NULL, " \t\r", save))) {
		char *eq = strchr(tok, '=');
		const char *v;
		int k, bad = 0;

		if (!eq)
			return desc_err(st, "layer %u: '%s' is not key=value", i, tok);
		*eq = '\0';
		v = eq + 1;
		for (k = 0; k < K_COUNT && strcmp(tok, keys[k]); k++)
			;
		if (k == K_COUNT)
			return desc_err(st, "layer %u: unknown key '%s'", i, tok);
		if (seen & 1u << k)
			return desc_err(st, "layer %u: key '%s' given twice", i, tok);
		seen |= 1u << k;
		switch (k) {
		case K_IN:
			bad = parse_u32(v, UINT32_MAX, &l->in_features);
			break;
		case K_OUT:
			bad = parse_u32(v, UINT32_MAX, &l->out_features);
			break;
		case K_FLAGS:
			bad = parse_flags(v, &l->flags);
			break;
		case K_IN_ZP:
			bad = parse_i32(v, INT32_MIN, INT32_MAX, &l->in_zero_point);
			break;
		case K_OUT_ZP:
			bad = parse_i32(v, INT32_MIN, INT32_MAX, &l->out_zero_point);
			break;
		case K_IN_SCALE:
			bad = parse_float(v, &l->in_scale);
			break;
		case K_WEIGHT_SCALE:
			bad = parse_float(v, &l->weight_scale);
			break;
		case K_OUT_SCALE:
			bad = parse_float(v, &l->out_scale);
			break;
		case K_WEIGHTS:
		case K_BIAS:
			if (!*v) {
				bad = 1;
				break;
			}
			if (k == K_WEIGHTS)
				st->wpath[i] = resolve(st, v);
			else
				st->bpath[i] = resolve(st, v);
			if (!(k == K_WEIGHTS ? st->wpath[i] : st->bpath[i]))
				return desc_err(st, "out of memory");
			break;
		}
		if (bad)
			return desc_err(st, "layer %u: bad value '%s' for %s", i, v, tok);
	}
	if ((seen & REQUIRED) != REQUIRED) {
		for (int k = 0; k < K_COUNT; k++)
			if ((REQUIRED & 1u << k) && !(seen & 1u << k))
				return desc_err(st, "layer %u: missing %s=", i, keys[k]);
	}
	st->num_layers++;
	return 0;
}

/*
 * The next logical line into @line: comments cut, a backslash at the end of
 * a physical line joins the next one. 1, 0 at the end, -1 on error.
 */
static int read_line(struct desc_state *st, FILE *f, char *line, size_t size)
{
	size_t len = 0;

	for (;;) {
		char *hash;
		size_t n;

		if (!fgets(line + len, (int)(size - len), f))
			return len ? desc_err(st, "file ends after a '\\'") : 0;
		st->line++;
		n = strlen(line + len);
		if (!n || (line[len + n - 1] != '\n' && !feof(f)))
			return desc_err(st, "line longer than %zu bytes or with a NUL byte", size - 2);
		line[len + strcspn(line + len, "\n")] = '\0';
		hash = strchr(line + len, '#');
		if (hash)
			*hash = '\0';
		len += strlen(line + len);
		while (len && (line[len - 1] == ' ' || line[len - 1] == '\t' ||
			       line[len - 1] == '\r'))
			len--;
		line[len] = '\0';
		if (!len || line[len - 1] != '\\')
			return 1;
		line[len - 1] = ' ';
	}
}

static int parse_desc_file(struct desc_state *st, FILE *f)
{
	char line[16384];
	int ret;

	while ((ret = read_line(st, f, line, sizeof(line))) > 0) {
		char *save, *tok;

		tok = strtok_r(line, " \t\r", &save);
		if (!tok)
			continue;
		if (!strcmp(tok, "rows")) {
			char *v = strtok_r(NULL, " \t\r", &save);

			if (st->have_rows)
				return desc_err(st, "rows given twice");
			if (!v || parse_u32(v, UINT32_MAX, &st->rows))
				return desc_err(st, "rows needs a number");
			if (strtok_r(NULL, " \t\r", &save))
				return desc_err(st, "rows takes one number");
			st->have_rows = 1;
		} else if (!strcmp(tok, "layer")) {
			if (parse_layer(st, &save))
				return -1;
		} else {
			return desc_err(st, "unknown statement '%s' (expected rows or layer)", tok);
		}
	}
	if (ret < 0)
		return -1;
	if (ferror(f))
		return desc_err(st, "read error");
	if (!st->have_rows)
		return desc_err(st, "no rows statement");
	if (!st->num_layers)
		return desc_err(st, "no layer statement");
	return 0;
}

static int cmd_desc(const char *path, const char *out)
{
	struct desc_state *st;
	struct rkaccel_model_desc desc;
	const char *slash, *why;
	char msg[256];
	FILE *f;
	int rc = 1, ret;

	st = calloc(1, sizeof(*st));
	if (!st) {
		err("out of memory");
		return 1;
	}
	st->file = path;
	slash = strrchr(path, '/');
	if (slash && (size_t)(slash - path + 1) < sizeof(st->dir))
		memcpy(st->dir, path, (size_t)(slash - path + 1));
	f = arg_fopen_in(path, &why);
	if (!f) {
		err("%s: %s", path, why);
		free(st);
		return 1;
	}
	ret = parse_desc_file(st, f);
	fclose(f);
	if (ret)
		goto out;

	/* shapes before reading: the file sizes depend on them */
	desc = (struct rkaccel_model_desc) { .rows = st->rows, .num_layers = st->num_layers,
					     .layers = st->layers };
	for (uint32_t i = 0; i < st->num_layers; i++) {
		struct rkaccel_layer_desc *l = &st->layers[i];
		char ctx[32];
		uint8_t *raw;
		int32_t *bias;

		if (l->in_features < 1 || l->in_features > RKACCEL_MODEL_MAX_FEATURES ||
		    l->out_features < 1 || l->out_features > RKACCEL_MODEL_MAX_FEATURES) {
			err("%s: layer %u: shape %u -> %u out of range 1..%u", path, i,
			    l->in_features, l->out_features, RKACCEL_MODEL_MAX_FEATURES);
			goto out;
		}
		snprintf(ctx, sizeof(ctx), "layer %u weights", i);
		l->weights = read_exact(st->wpath[i],
					(uint64_t)l->in_features * l->out_features, ctx);
		if (!l->weights)
			goto out;
		snprintf(ctx, sizeof(ctx), "layer %u bias", i);
		raw = read_exact(st->bpath[i], 4ull * l->out_features, ctx);
		if (!raw)
			goto out;
		/* little-endian on disk, host order in memory */
		bias = (int32_t *)(void *)raw;
		for (uint32_t n = 0; n < l->out_features; n++) {
			const uint8_t *p = raw + 4 * n;

			bias[n] = (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 |
					    (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
		}
		l->bias = bias;
	}
	if (rkaccel_model_validate(&desc, msg, sizeof(msg))) {
		err("%s: invalid model: %s", path, msg);
		goto out;
	}
	ret = rkaccel_model_save(&desc, out);
	if (ret) {
		err("%s: %s", out, ret == -ENXIO ? "a FIFO with no reader" :
		    rkaccel_strerror(ret));
		goto out;
	}
	rc = 0;
out:
	for (uint32_t i = 0; i < RKACCEL_MODEL_MAX_LAYERS; i++) {
		free((void *)st->layers[i].weights);
		free((void *)st->layers[i].bias);
		free(st->wpath[i]);
		free(st->bpath[i]);
	}
	free(st);
	return rc;
}

/* --- --dump -------------------------------------------------------------- */

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return le32(p) | (uint64_t)le32(p + 4) << 32;
}

static const char *flag_names(uint32_t flags)
{
	switch (flags) {
	case 0:
		return "none";
	case RKACCEL_LAYER_RELU:
		return "relu";
	case RKACCEL_LAYER_OUT_INT32:
		return "out_int32";
	default:
		return "relu,out_int32";
	}
}

/* The 2.0 part of a layer: operation, window, residual, output shape. */
static void dump_op(const struct rkaccel_layer_desc *l, const struct rkaccel_model_desc *d,
		    uint32_t i)
{
	static const char *const names[] = { "fc", "conv", "dw", "maxpool", "avgpool" };
	struct rkaccel_tensor_shape t;

	rkaccel_model_tensor(d, i + 1, &t);
	printf("  op:      %s", names[l->op]);
	if (l->kernel_w)
		printf(" %ux%u stride %u pad %u,%u,%u,%u", l->kernel_w, l->kernel_h, l->stride,
		       l->pad_top, l->pad_left, l->pad_bottom, l->pad_right);
	else if (l->op == RKACCEL_OP_AVGPOOL)
		printf(" global");
	if (l->flags & RKACCEL_LAYER_ADD)
		printf(", adds tensor %u", l->add_input);
	printf("%s -> %ux%ux%u\n", l->weight_scales ? ", per-channel scales" : "", t.height,
	       t.width, t.channels);
}

static int cmd_dump(const char *path)
{
	struct rkaccel_tensor_shape out;
	const struct rkaccel_model_desc *d;
	struct rkaccel_model *m;
	uint8_t *img = NULL;
	size_t len = 0, cap = 0;
	const char *why;
	char msg[256];
	FILE *f;
	int ret;

	f = arg_fopen_in(path, &why);
	if (!f) {
		err("%s: %s", path, why);
		return 1;
	}
	for (;;) {
		size_t n;

		if (len == cap) {
			uint8_t *p;

			if (cap >= RKACCEL_MODEL_MAX_FILE_SIZE) {
				err("%s: more than %u bytes, not a model file", path,
				    RKACCEL_MODEL_MAX_FILE_SIZE);
				goto fail;
			}
			cap = cap ? 2 * cap : 65536;
			p = realloc(img, cap);
			if (!p) {
				err("out of memory");
				goto fail;
			}
			img = p;
		}
		n = fread(img + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		err("%s: read error", path);
		goto fail;
	}
	fclose(f);
	f = NULL;

	ret = rkaccel_model_parse(img, len, &m, msg, sizeof(msg));
	if (ret) {
		err("%s: %s", path, msg);
		goto fail;
	}
	d = rkaccel_model_desc(m);
	/* parse accepted it: the header fields read here are in bounds */
	printf("%s: rkaccel model %u.%u, %u rows, %u layers, %zu bytes, checksum 0x%08x OK\n",
	       path, img[4] | img[5] << 8, img[6] | img[7] << 8, d->rows, d->num_layers, len,
	       le32(img + 40));
	for (uint32_t i = 0; i < d->num_layers; i++) {
		const struct rkaccel_layer_desc *l = &d->layers[i];
		const uint8_t *r = img + le32(img + 8) + (size_t)i * le32(img + 12);
		size_t nw = l->weights ? (size_t)le64(r + 40) : 0;
		int wmin = 127, wmax = -128;
		int32_t bmin = INT32_MAX, bmax = INT32_MIN;

		for (size_t k = 0; k < nw; k++) {
			wmin = l->weights[k] < wmin ? l->weights[k] : wmin;
			wmax = l->weights[k] > wmax ? l->weights[k] : wmax;
		}
		for (uint32_t n = 0; l->bias && n < l->out_features; n++) {
			bmin = l->bias[n] < bmin ? l->bias[n] : bmin;
			bmax = l->bias[n] > bmax ? l->bias[n] : bmax;
		}
		printf("layer %u: %u -> %u, flags %s\n", i, l->in_features, l->out_features,
		       flag_names(l->flags & ~RKACCEL_LAYER_ADD));
		if (d->height)
			dump_op(l, d, i);
		if (!l->weights)
			continue;
		printf("  in:      zero point %d, scale %.9g\n", l->in_zero_point,
		       (double)l->in_scale);
		printf("  weights: scale %.9g, %zu bytes at offset %llu, values %d..%d\n",
		       (double)l->weight_scale, nw, (unsigned long long)le64(r + 32), wmin, wmax);
		printf("  bias:    %u x int32 at offset %llu, values %d..%d\n", l->out_features,
		       (unsigned long long)le64(r + 48), bmin, bmax);
		printf("  out:     zero point %d, scale %.9g%s\n", l->out_zero_point,
		       (double)l->out_scale,
		       l->flags & RKACCEL_LAYER_OUT_INT32 ? " (int32 output)" : "");
	}
	rkaccel_model_tensor(d, d->num_layers, &out);
	printf("input:  int8 [%u][%u]\n", d->rows, d->layers[0].in_features);
	printf("output: %s [%u][%u]\n",
	       d->layers[d->num_layers - 1].flags & RKACCEL_LAYER_OUT_INT32 ? "int32" : "int8",
	       out.height * out.width, out.channels);
	rkaccel_model_free(m);
	free(img);
	return 0;
fail:
	if (f)
		fclose(f);
	free(img);
	return 1;
}

/* --- --net -------------------------------------------------------------- */

static int cmd_net(const char *path, const char *seed_arg, const char *out)
{
	static char text[1 << 16];
	struct rkaccel_model *m;
	const char *why;
	char msg[256];
	uint32_t seed = 0;
	size_t n;
	FILE *f;
	int ret;

	why = seed_arg ? arg_u32(seed_arg, 0, UINT32_MAX, &seed) : NULL;
	if (why) {
		err("--seed '%s' %s (a decimal number in 0..4294967295)", seed_arg, why);
		return 2;
	}
	f = arg_fopen_in(path, &why);
	if (!f) {
		err("%s: %s", path, why);
		return 1;
	}
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	if (n == sizeof(text) - 1) {
		err("%s: longer than %zu bytes", path, sizeof(text) - 2);
		return 1;
	}
	text[n] = '\0';
	ret = rkaccel_model_from_text(seed, text, &m, msg, sizeof(msg));
	if (ret) {
		err("%s: %s", path, *msg ? msg : rkaccel_strerror(ret));
		return 1;
	}
	ret = rkaccel_model_save(rkaccel_model_desc(m), out);
	if (ret)
		err("%s: %s", out, rkaccel_strerror(ret));
	else
		printf("%s: %u layers, %ux%ux%u input\n", out, rkaccel_model_desc(m)->num_layers,
		       rkaccel_model_desc(m)->height, rkaccel_model_desc(m)->width,
		       rkaccel_model_desc(m)->layers[0].in_features);
	rkaccel_model_free(m);
	return ret ? 1 : 0;
}

/* --- --to-graph --------------------------------------------------------- */

static int cmd_to_graph(const char *path, const char *out)
{
	struct rkaccel_model *m;
	struct rkaccel_graph *g;
	char msg[512];
	int ret = rkaccel_model_load(path, &m, msg, sizeof(msg));

	if (ret) {
		err("%s", msg);
		return 1;
	}
	ret = rkaccel_graph_from_model(rkaccel_model_desc(m), &g, msg, sizeof(msg));
	rkaccel_model_free(m);
	if (ret) {
		err("%s: %s", path, msg);
		return 1;
	}
	ret = rkaccel_graph_save(rkaccel_graph_desc(g), out);
	if (ret)
		err("%s: %s", out, rkaccel_strerror(ret));
	else
		printf("%s: format 3.0, %u nodes, %u tensors\n", out,
		       rkaccel_graph_desc(g)->num_nodes, rkaccel_graph_desc(g)->num_tensors);
	rkaccel_graph_free(g);
	return ret ? 1 : 0;
}

/* --- --zoo ---------------------------------------------------------------- */

/* "HxW", both decimal in 1..65536. */
static int parse_size(const char *s, uint32_t *h, uint32_t *w)
{
	char buf[32];
	char *x;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	x = strchr(buf, 'x');
	if (!x)
		return -1;
	*x = 0;
	return arg_u32(buf, 1, RKACCEL_GRAPH_MAX_DIM, h) ||
	       arg_u32(x + 1, 1, RKACCEL_GRAPH_MAX_DIM, w) ? -1 : 0;
}

static int cmd_zoo(const char *name, const char *batch_arg, const char *size,
		   const char *seed_arg, const char *out)
{
	uint32_t batch = 1, h = 0, w = 0, seed = 1;
	const char *why;
	struct zb b;
	int ret;

	if (batch_arg && (why = arg_u32(batch_arg, 1, RKACCEL_GRAPH_MAX_BATCH, &batch))) {
		err("--batch '%s' %s (a decimal number in 1..%u)", batch_arg, why,
		    RKACCEL_GRAPH_MAX_BATCH);
		return 2;
	}
	if (size && parse_size(size, &h, &w)) {
		err("--size '%s' is not HxW (two decimal numbers in 1..%u)", size,
		    RKACCEL_GRAPH_MAX_DIM);
		return 2;
	}
	if (seed_arg && (why = arg_u32(seed_arg, 0, UINT32_MAX, &seed))) {
		err("--seed '%s' %s (a decimal number in 0..4294967295)", seed_arg, why);
		return 2;
	}
	ret = zoo_build(name, batch, h, w, seed, &b);
	if (ret) {
		err("--zoo %s: %s", name, b.msg);
		if (ret == -ENOENT)
			for (size_t i = 0; i < ZOO_COUNT; i++)
				fprintf(stderr, "  %-12s %s\n", zoo_nets[i].name, zoo_nets[i].what);
		zb_free(&b);
		return ret == -ENOENT ? 2 : 1;
	}
	ret = rkaccel_graph_save(&b.desc, out);
	if (ret)
		err("%s: %s", out, rkaccel_strerror(ret));
	else
		printf("%s: %s, batch %u, input %ux%ux%u, %u nodes, %llu MACs per image, "
		       "%llu weight bytes\n", out, name, batch, b.t[b.in.tensor].dims[1],
		       b.t[b.in.tensor].dims[2], b.t[b.in.tensor].dims[3], b.nn,
		       (unsigned long long)b.macs, (unsigned long long)b.weight_bytes);
	zb_free(&b);
	return ret ? 1 : 0;
}

/* --- main ---------------------------------------------------------------- */

int main(int argc, char **argv)
{
	const char *random = NULL, *rows = NULL, *layers = NULL, *desc = NULL, *dump = NULL;
	const char *net = NULL, *seed_arg = NULL, *to_graph = NULL;
	const char *zoo = NULL, *batch = NULL, *size = NULL;
	const char *out = NULL, *why;
	uint32_t flags = 0, seed, nrows;
	int modes;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char **slot = NULL;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--relu")) {
			flags |= RKACCEL_LAYER_RELU;
		} else if (!strcmp(a, "--out-int32")) {
			flags |= RKACCEL_LAYER_OUT_INT32;
		} else if (!strcmp(a, "--random")) {
			slot = &random;
		} else if (!strcmp(a, "--rows")) {
			slot = &rows;
		} else if (!strcmp(a, "--layers")) {
			slot = &layers;
		} else if (!strcmp(a, "--desc")) {
			slot = &desc;
		} else if (!strcmp(a, "--dump")) {
			slot = &dump;
		} else if (!strcmp(a, "--net")) {
			slot = &net;
		} else if (!strcmp(a, "--to-graph")) {
			slot = &to_graph;
		} else if (!strcmp(a, "--zoo")) {
			slot = &zoo;
		} else if (!strcmp(a, "--batch")) {
			slot = &batch;
		} else if (!strcmp(a, "--size")) {
			slot = &size;
		} else if (!strcmp(a, "--seed")) {
			slot = &seed_arg;
		} else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			slot = &out;
		} else {
			err("unknown argument '%s'", a);
			usage(stderr);
			return 2;
		}
		if (slot) {
			if (i + 1 >= argc) {
				err("%s needs a value", a);
				return 2;
			}
			if (*slot) {
				err("%s given twice", a);
				return 2;
			}
			*slot = argv[++i];
		}
	}

	modes = !!random + !!desc + !!dump + !!net + !!to_graph + !!zoo;
	if ((batch || size) && !zoo) {
		err("--batch and --size go with --zoo");
		return 2;
	}
	if (modes != 1) {
		err(modes ? "--random, --desc, --net, --dump, --to-graph and --zoo exclude each other" :
		    "one of --random, --desc, --net, --dump, --to-graph or --zoo is needed");
		usage(stderr);
		return 2;
	}
	if (dump) {
		if (out || rows || layers || flags || seed_arg) {
			err("--dump takes no other option");
			return 2;
		}
		return cmd_dump(dump);
	}
	if (!out) {
		err("-o FILE is needed");
		return 2;
	}
	if (to_graph) {
		if (rows || layers || flags || seed_arg) {
			err("--to-graph takes -o FILE only");
			return 2;
		}
		return cmd_to_graph(to_graph, out);
	}
	if (zoo) {
		if (rows || layers || flags) {
			err("--zoo takes --batch, --size, --seed and -o FILE only");
			return 2;
		}
		return cmd_zoo(zoo, batch, size, seed_arg, out);
	}
	if (net || seed_arg) {
		if (!net || rows || layers || flags) {
			err("--seed goes with --net, which takes no --rows, --layers, --relu or --out-int32");
			return 2;
		}
		return cmd_net(net, seed_arg, out);
	}
	if (desc) {
		if (rows || layers || flags) {
			err("--rows, --layers, --relu and --out-int32 go with --random only; "
			    "the description gives them");
			return 2;
		}
		return cmd_desc(desc, out);
	}
	why = arg_u32(random, 0, UINT32_MAX, &seed);
	if (why) {
		err("--random '%s' %s (a seed is a decimal number in 0..4294967295)", random,
		    why);
		return 2;
	}
	if (!rows) {
		err("--random needs --rows M");
		return 2;
	}
	why = arg_u32(rows, 1, RKACCEL_MODEL_MAX_ROWS, &nrows);
	if (why) {
		err("--rows '%s' %s (a decimal number in 1..%u)", rows, why,
		    RKACCEL_MODEL_MAX_ROWS);
		return 2;
	}
	if (!layers) {
		err("--random needs --layers K0,K1,...");
		return 2;
	}
	return cmd_random(seed, nrows, layers, flags, out);
}
