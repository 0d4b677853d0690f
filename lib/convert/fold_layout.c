// SPDX-License-Identifier: MIT
/*
 * Slice and Transpose of constants, for constant folding only: torch's
 * export of F.pad builds the pads vector with a reversed Slice and a
 * Transpose of int64 constants. Any element type (copied byte-wise).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Copies out[idx] = in[src(idx)] over an odometer of the output shape. */
static int gather_copy(struct cv_tensor *o, const struct cv_tensor *x, int rank,
		       const int64_t *odims, const int64_t *start, const int64_t *step)
{
	int64_t xst[CV_MAX_RANK], idx[CV_MAX_RANK] = { 0 }, s = 1, total = 1;
	size_t es = cv_dtype_size(x->dtype);

	for (int i = rank - 1; i >= 0; i--) {
		xst[i] = s;
		s *= x->dims[i];
		total *= odims[i];
	}
	uint8_t *y = malloc(total * es + 1);

	if (!y)
		return -1;
	for (int64_t e = 0; e < total; e++) {
		int64_t src = 0;

		for (int i = 0; i < rank; i++)
			src += (start[i] + idx[i] * step[i]) * xst[i];
		memcpy(y + e * es, (uint8_t *)x->data + src * es, es);
		for (int i = rank - 1; i >= 0; i--) {
			if (++idx[i] < odims[i])
				break;
			idx[i] = 0;
		}
	}
	int rc = cv_tensor_set_const(o, x->dtype, rank, odims, y);

	free(y);
	return rc;
}

int cv_fold_slice(struct cv_graph *g, struct cv_node *n, struct cv_tensor *o, struct cv_diag *d)
{
	const struct cv_tensor *x = &g->tensors[n->in[0]];
	int64_t st[CV_MAX_RANK], en[CV_MAX_RANK], ax[CV_MAX_RANK], sp[CV_MAX_RANK];
	int64_t start[CV_MAX_RANK] = { 0 }, step[CV_MAX_RANK], odims[CV_MAX_RANK];
	bool old = g->opset < 10;
	int ns = cv_node_ints_arg(g, n, old ? 99 : 1, "starts", st, CV_MAX_RANK);
	int ne = cv_node_ints_arg(g, n, old ? 99 : 2, "ends", en, CV_MAX_RANK);
	int na = cv_node_ints_arg(g, n, old ? 99 : 3, "axes", ax, CV_MAX_RANK);
	int nst = old ? -1 : cv_node_ints_arg(g, n, 4, NULL, sp, CV_MAX_RANK);

	if (ns < 0 || ns != ne || (na >= 0 && na != ns) || (nst >= 0 && nst != ns)) {
		cv_diag_node(d, n, "starts, ends, axes and steps must be constant lists of one length");
		return -1;
	}
	for (int i = 0; i < x->rank; i++)
		step[i] = 1, odims[i] = x->dims[i];
	for (int k = 0; k < ns; k++) {
		int a = cv_axis(na >= 0 ? ax[k] : k, x->rank);
		int64_t dim = a >= 0 ? x->dims[a] : 0, s = st[k], e = en[k];
		int64_t p = nst >= 0 ? sp[k] : 1;

		if (a < 0 || p == 0) {
			cv_diag_node(d, n, "axis or step invalid");
			return -1;
		}
		s = s < 0 ? s + dim : s;
		e = e < 0 ? e + dim : e;
		if (p > 0) {
			s = s < 0 ? 0 : s > dim ? dim : s;
			e = e < 0 ? 0 : e > dim ? dim : e;
		} else {
			s = s < 0 ? 0 : s > dim - 1 ? dim - 1 : s;
			e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
		}
		int64_t len = p > 0 ? (e - s + p - 1) / p : (s - e + (-p) - 1) / (-p);

		start[a] = s;
		step[a] = p;
		odims[a] = len > 0 ? len : 0;
	}
	return gather_copy(o, x, x->rank, odims, start, step);
}

int cv_fold_transpose(struct cv_graph *g, struct cv_node *n, struct cv_tensor *o,
		      struct cv_diag *d)
{
	const struct cv_tensor *x = &g->tensors[n->in[0]];
	int64_t perm[CV_MAX_RANK], odims[CV_MAX_RANK];
	int np = cv_attr_ints(n, "perm", perm, CV_MAX_RANK);
	char seen[CV_MAX_RANK] = { 0 };

	if (np < 0)
		for (np = 0; np < x->rank; np++)
			perm[np] = x->rank - 1 - np;
	if (np != x->rank) {
		cv_diag_node(d, n, "perm does not match rank %d", x->rank);
		return -1;
	}
	for (int i = 0; i < np; i++) {
		if (perm[i] < 0 || perm[i] >= x->rank || seen[perm[i]]) {
			cv_diag_node(d, n, "perm is not a permutation");
			return -1;
		}
		seen[perm[i]] = 1;
		odims[i] = x->dims[perm[i]];
	}
	/* Output index i walks input axis perm[i]. */
	int64_t xst[CV_MAX_RANK], s = 1, total = cv_tensor_elems(x), idx[CV_MAX_RANK] = { 0 };
	size_t es = cv_dtype_size(x->dtype);

	for (int i = x->rank - 1; i >= 0; i--) {
		xst[i] = s;
		s *= x->dims[i];
	}
	uint8_t *y = malloc(total * es + 1);

	if (!y)
		return -1;
	for (int64_t e = 0; e < total; e++) {
		int64_t src = 0;

		for (int i = 0; i < np; i++)
			src += idx[i] * xst[perm[i]];
		memcpy(y + e * es, (uint8_t *)x->data + src * es, es);
		for (int i = np - 1; i >= 0; i--) {
			if (++idx[i] < odims[i])
				break;
			idx[i] = 0;
		}
	}
	int rc = cv_tensor_set_const(o, x->dtype, np, odims, y);

	free(y);
	return rc;
}
