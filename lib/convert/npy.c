// SPDX-License-Identifier: MIT
/*
 * NumPy's .npy format (versions 1 to 3): a magic, a header length, a Python
 * dict literal with 'descr', 'fortran_order' and 'shape', then the data.
 * Read into float; only C order and the plain numeric types.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quant.h"

#define NPY_MAX_HEADER 65536

struct npy_type {
	const char *descr;
	size_t size;
};

static const struct npy_type npy_types[] = {
	{ "<f4", 4 }, { "<f8", 8 }, { "|i1", 1 }, { "|u1", 1 }, { "<i2", 2 }, { "<u2", 2 },
	{ "<i4", 4 }, { "<i8", 8 },
};

static float npy_value(const uint8_t *p, const char *descr)
{
	union { uint64_t u; double f; int64_t i; } v = { 0 };
	size_t n = descr[2] - '0';

	for (size_t b = 0; b < n; b++)
		v.u |= (uint64_t)p[b] << (8 * b);
	switch (descr[1] == 'f' ? (int)n : descr[1] == 'u' ? -(int)n : 10 + (int)n) {
	case 4: {
		uint32_t u = (uint32_t)v.u;
		float f;

		memcpy(&f, &u, 4);
		return f;
	}
	case 8:
		return (float)v.f;
	case -1:
	case -2:
		return (float)v.u;
	default:	/* signed: sign-extend from n bytes */
		return (float)(n == 8 ? v.i : (int64_t)(v.u << (64 - 8 * n)) >> (64 - 8 * n));
	}
}

/* The value text after 'key': in the header dict, or NULL. */
static const char *npy_field(const char *hdr, const char *key)
{
	const char *p = strstr(hdr, key);

	if (!p)
		return NULL;
	p = strchr(p + strlen(key), ':');
	if (!p)
		return NULL;
	for (p++; *p == ' '; p++)
		;
	return p;
}

static int npy_shape(const char *p, struct cv_array *a)
{
	char *end;

	if (!p || *p != '(')
		return -1;
	a->rank = 0;
	a->elems = 1;
	for (p++; *p != ')';) {
		long long v;

		while (*p == ' ' || *p == ',')
			p++;
		if (*p == ')')
			break;
		v = strtoll(p, &end, 10);
		if (end == p || v < 0 || v > CV_MAX_DIM || a->rank == CV_MAX_RANK)
			return -1;
		a->dims[a->rank++] = v;
		a->elems *= v;
		if (a->elems > CV_MAX_ELEMS)
			return -1;
		p = end;
	}
	return 0;
}

/* Parses the header dict: the type and the shape. */
static const struct npy_type *npy_header(const char *hdr, struct cv_array *a)
{
	const char *descr = npy_field(hdr, "'descr'"), *fo = npy_field(hdr, "'fortran_order'");

	if (!descr || *descr != '\'' || !fo || strncmp(fo, "False", 5) ||
	    npy_shape(npy_field(hdr, "'shape'"), a))
		return NULL;
	for (size_t i = 0; i < sizeof(npy_types) / sizeof(npy_types[0]); i++)
		if (!strncmp(descr + 1, npy_types[i].descr, 3) && descr[4] == '\'')
			return &npy_types[i];
	return NULL;
}

static int npy_data(FILE *f, const struct npy_type *ty, struct cv_array *a)
{
	uint8_t buf[4096];
	int64_t done = 0;

	a->data = malloc(a->elems * sizeof(float) + 1);
	if (!a->data)
		return -1;
	while (done < a->elems) {
		size_t want = (size_t)(a->elems - done) * ty->size;

		if (want > sizeof(buf))
			want = sizeof(buf) / ty->size * ty->size;
		if (fread(buf, 1, want, f) != want)
			return -1;
		for (size_t i = 0; i < want / ty->size; i++)
			a->data[done++] = npy_value(buf + i * ty->size, ty->descr);
	}
	return 0;
}

int cv_npy_read(const char *path, struct cv_array *a, struct cv_diag *d)
{
	uint8_t pre[12];
	char *hdr = NULL;
	const struct npy_type *ty;
	FILE *f = fopen(path, "rb");
	size_t hlen, pre_len;
	int rc = -1;

	memset(a, 0, sizeof(*a));
	if (!f) {
		cv_diag_add(d, "%s: cannot open", path);
		return -1;
	}
	if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) || pre[6] < 1 || pre[6] > 3) {
		cv_diag_add(d, "%s: not a .npy file", path);
		goto out;
	}
	pre_len = pre[6] == 1 ? 2 : 4;
	if (pre_len == 4 && fread(pre + 10, 1, 2, f) != 2) {
		cv_diag_add(d, "%s: truncated .npy header", path);
		goto out;
	}
	hlen = pre[8] | (size_t)pre[9] << 8 |
	       (pre_len == 4 ? (size_t)pre[10] << 16 | (size_t)pre[11] << 24 : 0);
	hdr = hlen < NPY_MAX_HEADER ? calloc(1, hlen + 1) : NULL;
	if (!hdr || fread(hdr, 1, hlen, f) != hlen) {
		cv_diag_add(d, "%s: bad .npy header", path);
		goto out;
	}
	ty = npy_header(hdr, a);
	if (!ty) {
		cv_diag_add(d, "%s: .npy type or shape not supported (C-order numbers only)", path);
		goto out;
	}
	if (npy_data(f, ty, a)) {
		cv_diag_add(d, "%s: .npy data shorter than its shape", path);
		goto out;
	}
	rc = 0;
out:
	if (rc)
		cv_array_free(a);
	free(hdr);
	fclose(f);
	return rc;
}

void cv_array_free(struct cv_array *a)
{
	free(a->data);
	a->data = NULL;
}
