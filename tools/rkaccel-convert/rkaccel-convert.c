// SPDX-License-Identifier: MIT
/*
 * rkaccel-convert: an ONNX model to an int8 rkaccel model file on the host,
 * with post-training quantization over a toolkit-style dataset.txt. The
 * whole flow is lib/convert's cv_convert_file() (cv_convert(), the call
 * digits_int8 makes too, then the save), which Python's toolkit class calls
 * through libconvert.so too. Host only: lib/convert needs protobuf-c, which
 * the arm64 static build lacks (lib/convert/convert.mk builds it).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quant.h"

#define PROG "rkaccel-convert"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " MODEL.onnx -o OUT.rkm --dataset DATASET.txt\n"
		"                       [--algorithm normal|mmse|kl_divergence] [--per-layer]\n"
		"                       [--batch B] [--custom-string TEXT]\n"
		"                       [--mean M0,M1,M2 --std S0,S1,S2] [--rgb2bgr]\n"
		"\n"
		"Convert an ONNX model to an int8 rkaccel model file: format 2.0, or 3.0\n"
		"with --batch or --custom-string.\n"
		"  -o FILE            the model file to write\n"
		"  --dataset FILE     calibration samples, one line each (.npy/.png/.jpg paths,\n"
		"                     relative to the file's folder)\n"
		"  --algorithm NAME   how activation ranges are chosen (default normal)\n"
		"  --per-layer        one weight scale per layer instead of per channel\n"
		"  --batch B          bake batch B (1..64) into a 3.0 file, as the toolkit's\n"
		"                     rknn_batch_size: it then runs B slices across the cores\n"
		"  --custom-string S  a 3.0 file's custom string (RKNN_QUERY_CUSTOM_STRING)\n"
		"  --mean, --std      per input channel (the toolkit's mean_values/std_values):\n"
		"                     the model then takes raw pixels, (x - mean) / std folded\n"
		"                     into its first layer where exact, else recorded (3.0)\n"
		"  --rgb2bgr          the ONNX model takes BGR (quant_img_RGB2BGR): images are\n"
		"                     swapped for it; a folded model takes RGB pixels\n"
		"See rkaccel-convert(1) and Documentation/convert.rst.\n");
}

struct args {
	const char *model, *out, *dataset, *batch_arg, *custom, *mean_arg, *std_arg;
	float mean[CV_NORM_MAX_CH], std[CV_NORM_MAX_CH];
	int n_mean, n_std;
	bool bgr;
	uint32_t batch;		/* 0: a 2.0 file */
	struct cv_quant_opts opts;
};

/* The value of option argv[*i]; NULL (with a message) when it has none. */
static const char *value(int argc, char **argv, int *i)
{
	if (*i + 1 >= argc || !argv[*i + 1][0]) {
		fprintf(stderr, PROG ": %s needs a value\n", argv[*i]);
		return NULL;
	}
	return argv[++*i];
}

/* A message about bad usage; returns false. */
static bool refuse(const char *what, const char *arg)
{
	fprintf(stderr, PROG ": %s%s%s%s\n", what, arg[0] ? " '" : "", arg, arg[0] ? "'" : "");
	return false;
}

/* Stores option @name's value once; a second one is an error. */
static bool set_once(const char **slot, const char *name, const char *v)
{
	if (!v)
		return false;
	if (*slot) {
		fprintf(stderr, PROG ": %s given twice\n", name);
		return false;
	}
	*slot = v;
	return true;
}

static bool parse_algorithm(const char *v, struct cv_quant_opts *o)
{
	int a = v ? cv_algo_from_name(v) : -1;

	if (v && a < 0)
		fprintf(stderr, PROG ": --algorithm '%s': not normal, mmse or kl_divergence\n", v);
	if (a >= 0)
		o->algo = a;
	return a >= 0;
}

/* --batch: a decimal 1..64. */
static bool parse_batch(const char *v, uint32_t *batch)
{
	char *end;
	unsigned long b;

	if (!v)
		return false;
	b = strtoul(v, &end, 10);
	if (v[0] < '0' || v[0] > '9' || *end || b < 1 || b > RKACCEL_GRAPH_MAX_BATCH) {
		fprintf(stderr, PROG ": --batch '%s': not a number 1..%u\n", v,
			RKACCEL_GRAPH_MAX_BATCH);
		return false;
	}
	*batch = (uint32_t)b;
	return true;
}

/* --custom-string: printable, at most RKACCEL_GRAPH_MAX_CUSTOM bytes. */
static bool check_custom(const char *v)
{
	if (!v)
		return false;
	if (strlen(v) > RKACCEL_GRAPH_MAX_CUSTOM) {
		fprintf(stderr, PROG ": --custom-string: longer than %u bytes\n",
			RKACCEL_GRAPH_MAX_CUSTOM);
		return false;
	}
	return true;
}

/* --mean/--std: 1..CV_NORM_MAX_CH comma-separated finite numbers. */
static bool parse_floats(const char *name, const char *v, float *out, int *n)
{
	const char *p = v;
	char *end;

	if (!v)
		return false;
	for (*n = 0; *n < CV_NORM_MAX_CH; p = end + 1) {
		double x = strtod(p, &end);

		if (end == p || x != x || x > 1e30 || x < -1e30)
			break;
		out[(*n)++] = (float)x;
		if (!*end)
			return true;
		if (*end != ',')
			break;
	}
	fprintf(stderr, PROG ": %s '%s': not 1..%d numbers separated by commas\n", name, v,
		CV_NORM_MAX_CH);
	return false;
}

/* 0, or 2 after a message for bad usage. */
static int parse_args(int argc, char **argv, struct args *a)
{
	const char *algo = NULL;
	int i;

	for (i = 1; i < argc; i++) {
		const char *s = argv[i];
		bool ok;

		if (!strcmp(s, "-o"))
			ok = set_once(&a->out, s, value(argc, argv, &i));
		else if (!strcmp(s, "--dataset"))
			ok = set_once(&a->dataset, s, value(argc, argv, &i));
		else if (!strcmp(s, "--algorithm"))
			ok = set_once(&algo, s, value(argc, argv, &i)) &&
			     parse_algorithm(algo, &a->opts);
		else if (!strcmp(s, "--batch"))
			ok = set_once(&a->batch_arg, s, value(argc, argv, &i)) &&
			     parse_batch(a->batch_arg, &a->batch);
		else if (!strcmp(s, "--custom-string"))
			ok = set_once(&a->custom, s, value(argc, argv, &i)) &&
			     check_custom(a->custom);
		else if (!strcmp(s, "--mean"))
			ok = set_once(&a->mean_arg, s, value(argc, argv, &i)) &&
			     parse_floats(s, a->mean_arg, a->mean, &a->n_mean);
		else if (!strcmp(s, "--std"))
			ok = set_once(&a->std_arg, s, value(argc, argv, &i)) &&
			     parse_floats(s, a->std_arg, a->std, &a->n_std);
		else if (!strcmp(s, "--rgb2bgr"))
			ok = !a->bgr ? (a->bgr = true) : refuse("--rgb2bgr given twice", "");
		else if (!strcmp(s, "--per-layer"))
			ok = !a->opts.per_layer ? (a->opts.per_layer = true) :
						  refuse("--per-layer given twice", "");
		else if (s[0] == '-' && s[1])
			ok = refuse("unknown option", s);
		else if (a->model)
			ok = refuse("a second ONNX model", s);
		else
			a->model = s;
		if (!ok)
			return 2;
	}
	if (a->n_mean != a->n_std) {
		fprintf(stderr, PROG ": --mean has %d value(s), --std %d: give both, one per channel\n",
			a->n_mean, a->n_std);
		return 2;
	}
	if (!a->model || !a->out || !a->dataset) {
		fprintf(stderr, PROG ": %s is missing\n", !a->model ? "the ONNX model" :
			!a->out ? "-o OUT.rkm" : "--dataset DATASET.txt");
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct args a = { .opts = { CV_ALGO_NORMAL, false, NULL } };
	char msg[4096], *note;
	bool v3;
	int rc;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	rc = parse_args(argc, argv, &a);
	if (rc) {
		fprintf(stderr, "Try '" PROG " --help'.\n");
		return rc;
	}
	/* The one path libconvert.so gives Python too (lib/convert/convert_api.c). */
	rc = cv_convert_file_norm(a.model, a.dataset, a.opts.algo, a.opts.per_layer, a.batch,
				  a.custom, a.mean, a.std, a.n_mean, a.bgr, a.out, msg, sizeof(msg));
	if (rc) {
		/* -EINVAL: the model or dataset refused, its diagnostics as they are. */
		fprintf(stderr, "%s%s", rc == -EINVAL ? "" : PROG ": ", msg);
		return 1;
	}
	/* A second line: what became of mean/std; unfolded ones need the 3.0 record. */
	note = strchr(msg, '\n');
	if (note)
		*note++ = '\0';
	v3 = a.batch || a.custom || (note && strstr(note, "not folded")) ||
	     strstr(msg, "format 3.0");	/* a graph that is not a chain */
	printf("%s -> %s: %s (%s, %s, %s %u)\n", a.model, a.out, msg, cv_algo_name(a.opts.algo),
	       a.opts.per_layer ? "per layer" : "per channel",
	       v3 ? "format 3.0, batch" : "format 2.0, batch", a.batch ? a.batch : 1);
	if (note)
		printf("%s\n", note);
	return 0;
}
