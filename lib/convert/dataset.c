// SPDX-License-Identifier: MIT
/*
 * The calibration set in rknn-toolkit2's dataset.txt format: one sample per
 * line, one path per graph input on it (separated by blanks), relative to
 * the folder of dataset.txt. Blank lines and lines starting with '#' are
 * skipped. A sample is a .npy array or a .png/.jpg image.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "quant.h"

#define DS_MAX_LINE 4096
#define DS_MAX_SAMPLES 1000000

static char *join_path(const char *dir, size_t dir_len, const char *name)
{
	size_t n = strlen(name);
	char *p;

	if (name[0] == '/' || !dir_len)
		return strdup(name);
	p = malloc(dir_len + 1 + n + 1);
	if (p) {
		memcpy(p, dir, dir_len);
		p[dir_len] = '/';
		memcpy(p + dir_len + 1, name, n + 1);
	}
	return p;
}

/* Splits @line in place into up to @max blank-separated words. */
static int split_words(char *line, char **w, int max)
{
	int n = 0;

	for (char *p = line; *p;) {
		while (*p && isspace((unsigned char)*p))
			*p++ = '\0';
		if (!*p)
			break;
		if (n == max)
			return max + 1;
		w[n++] = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
	}
	return n;
}

static int add_sample(struct cv_dataset *ds, const char *dir, size_t dir_len, char **w,
		      int lineno)
{
	char **p = realloc(ds->paths, (size_t)(ds->n_samples + 1) * ds->n_inputs * sizeof(*p));
	int *lines;

	if (!p)
		return -1;
	ds->paths = p;
	lines = realloc(ds->lines, (size_t)(ds->n_samples + 1) * sizeof(int));
	if (!lines)
		return -1;
	ds->lines = lines;
	lines[ds->n_samples] = lineno;
	for (int i = 0; i < ds->n_inputs; i++) {
		p[(size_t)ds->n_samples * ds->n_inputs + i] = join_path(dir, dir_len, w[i]);
		if (!p[(size_t)ds->n_samples * ds->n_inputs + i]) {
			while (i--)
				free(p[(size_t)ds->n_samples * ds->n_inputs + i]);
			return -1;
		}
	}
	ds->n_samples++;
	return 0;
}

int cv_dataset_load(const char *path, int n_inputs, struct cv_dataset *ds, struct cv_diag *d)
{
	const char *slash = strrchr(path, '/');
	size_t dir_len = slash ? (size_t)(slash - path) : 0;
	char line[DS_MAX_LINE + 2], *w[CV_MAX_NODE_IO];
	FILE *f = fopen(path, "r");
	int lineno = 0, rc = -1;

	memset(ds, 0, sizeof(*ds));
	ds->n_inputs = n_inputs;
	ds->file = strdup(path);
	if (!f || !ds->file) {
		if (f)
			fclose(f);
		free(ds->file);
		ds->file = NULL;
		cv_diag_add(d, "%s: cannot open the dataset file", path);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		int n;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			cv_diag_add(d, "%s:%d: line longer than %d bytes", path, lineno, DS_MAX_LINE);
			goto out;
		}
		n = split_words(line, w, n_inputs);
		if (!n || w[0][0] == '#')
			continue;
		if (n != n_inputs) {
			cv_diag_add(d, "%s:%d: %d paths for a model of %d input(s)", path, lineno,
				    n > n_inputs ? n_inputs + 1 : n, n_inputs);
			goto out;
		}
		if (ds->n_samples == DS_MAX_SAMPLES) {
			cv_diag_add(d, "%s: more than %d samples", path, DS_MAX_SAMPLES);
			goto out;
		}
		if (add_sample(ds, path, dir_len, w, lineno)) {
			cv_diag_add(d, "out of memory");
			goto out;
		}
	}
	if (!ds->n_samples) {
		cv_diag_add(d, "%s: no samples (%d line(s), none with a path)", path, lineno);
		goto out;
	}
	rc = 0;
out:
	fclose(f);
	if (rc)
		cv_dataset_free(ds);
	return rc;
}

void cv_dataset_free(struct cv_dataset *ds)
{
	for (size_t i = 0; ds->paths && i < (size_t)ds->n_samples * ds->n_inputs; i++)
		free(ds->paths[i]);
	free(ds->paths);
	free(ds->lines);
	free(ds->file);
	memset(ds, 0, sizeof(*ds));
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcasecmp(s + n - m, suffix);
}

/* An image [H][W][C] of bytes into the NCHW float tensor @t. */
static int image_to_tensor(const char *path, const uint8_t *px, int64_t h, int64_t w, int64_t c,
			   const struct cv_tensor *t, float *dst, struct cv_diag *d)
{
	if (t->rank != 4 || t->dims[0] != 1 || t->dims[1] != c || t->dims[2] != h ||
	    t->dims[3] != w) {
		cv_diag_add(d, "%s: image %lldx%lld with %lld channel(s) does not fit input '%s'",
			    path, (long long)w, (long long)h, (long long)c, t->name);
		return -1;
	}
	for (int64_t ch = 0; ch < c; ch++)
		for (int64_t i = 0; i < h * w; i++)
			dst[ch * h * w + i] = px[i * c + ch];
	return 0;
}

int cv_sample_read(const char *path, const struct cv_tensor *t, float *dst, struct cv_diag *d)
{
	int64_t h, w, c;
	uint8_t *px;
	int rc;

	if (has_suffix(path, ".npy")) {
		struct cv_array a;

		if (cv_npy_read(path, &a, d))
			return -1;
		rc = a.elems == cv_tensor_elems(t) ? 0 : -1;
		if (rc)
			cv_diag_add(d, "%s: %lld elements, input '%s' takes %lld", path,
				    (long long)a.elems, t->name, (long long)cv_tensor_elems(t));
		else
			memcpy(dst, a.data, a.elems * sizeof(float));
		cv_array_free(&a);
		return rc;
	}
	if (!has_suffix(path, ".png") && !has_suffix(path, ".jpg") && !has_suffix(path, ".jpeg")) {
		cv_diag_add(d, "%s: not a .npy, .png or .jpg file", path);
		return -1;
	}
	if (cv_image_read(path, &px, &h, &w, &c, d))
		return -1;
	rc = image_to_tensor(path, px, h, w, c, t, dst, d);
	free(px);
	return rc;
}

int cv_dataset_sample(const struct cv_dataset *ds, int s, int i, const struct cv_tensor *t,
		      float *dst, struct cv_diag *d)
{
	const char *path = ds->paths[(size_t)s * ds->n_inputs + i];
	struct cv_diag why = { 0 };
	size_t n;

	if (!cv_sample_read(path, t, dst, &why)) {
		cv_diag_free(&why);
		cv_norm_apply(ds->norm, !has_suffix(path, ".npy"), t, dst);
		return 0;
	}
	/* "dataset.txt:LINE: " before the reader's message (one line). */
	n = why.text ? strlen(why.text) : 0;
	while (n && why.text[n - 1] == '\n')
		why.text[--n] = '\0';
	cv_diag_add(d, "%s:%d: %s", ds->file, ds->lines[s], why.text ? why.text : path);
	cv_diag_free(&why);
	return -1;
}
