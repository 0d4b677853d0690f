// SPDX-License-Identifier: MIT
/*
 * Float executor: the multiply-accumulate ops (Conv, Gemm, MatMul and the
 * fully connected layer the passes make). Sums are kept in double so that the
 * executor's own rounding stays far below the 1e-4 bound against PyTorch.
 */
#include "internal.h"

static const float *buf_in(const struct cv_node *n, float **bufs, int i)
{
	return i < n->n_in && n->in[i] >= 0 ? bufs[n->in[i]] : NULL;
}

int cv_exec_conv(const struct cv_graph *g, const struct cv_node *n, float **bufs,
		 struct cv_diag *d)
{
	const struct cv_tensor *x = &g->tensors[n->in[0]], *wt = &g->tensors[n->in[1]];
	const float *in = buf_in(n, bufs, 0), *w = buf_in(n, bufs, 1), *b = buf_in(n, bufs, 2);
	float *out = bufs[n->out[0]];
	int64_t group = cv_attr_int(n, "group", 1);
	int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
	int64_t M = wt->dims[0], cg = C / group, mg = M / group;
	struct cv_window win;

	if (cv_window_get(n, H, W, wt->dims[2], wt->dims[3], &win, d))
		return -1;
	for (int64_t nb = 0; nb < N; nb++)
		for (int64_t m = 0; m < M; m++) {
			int64_t c0 = (m / mg) * cg;
			const float *wm = w + m * cg * win.kh * win.kw;

			for (int64_t oy = 0; oy < win.oh; oy++)
				for (int64_t ox = 0; ox < win.ow; ox++) {
					double acc = b ? b[m] : 0.0;

					for (int64_t c = 0; c < cg; c++) {
						const float *ic = in + ((nb * C) + c0 + c) * H * W;
						const float *wc = wm + c * win.kh * win.kw;

						for (int64_t ky = 0; ky < win.kh; ky++) {
							int64_t iy = oy * win.sh - win.pt + ky * win.dh;

							if (iy < 0 || iy >= H)
								continue;
							for (int64_t kx = 0; kx < win.kw; kx++) {
								int64_t ix = ox * win.sw - win.pl + kx * win.dw;

								if (ix >= 0 && ix < W)
									acc += (double)ic[iy * W + ix] *
									       wc[ky * win.kw + kx];
							}
						}
					}
					out[((nb * M + m) * win.oh + oy) * win.ow + ox] = (float)acc;
				}
		}
	return 0;
}

int cv_exec_gemm(const struct cv_graph *g, const struct cv_node *n, float **bufs,
		 struct cv_diag *d)
{
	const struct cv_tensor *a = &g->tensors[n->in[0]], *bt = &g->tensors[n->in[1]];
	const struct cv_tensor *ct = n->n_in > 2 && n->in[2] >= 0 ? &g->tensors[n->in[2]] : NULL;
	const float *A = buf_in(n, bufs, 0), *B = buf_in(n, bufs, 1), *Cb = buf_in(n, bufs, 2);
	float *Y = bufs[n->out[0]];
	bool ta = cv_attr_int(n, "transA", 0), tb = cv_attr_int(n, "transB", 0);
	double alpha = cv_attr_float(n, "alpha", 1.0f), beta = cv_attr_float(n, "beta", 1.0f);
	int64_t M = a->dims[ta], K = a->dims[!ta], N = bt->dims[!tb];
	int64_t cr = 1, cc = 1;

	if (ct) {
		/* C broadcasts to [M, N] (unidirectional). */
		cr = ct->rank == 2 ? ct->dims[0] : 1;
		cc = ct->rank >= 1 ? ct->dims[ct->rank - 1] : 1;
		if ((cr != 1 && cr != M) || (cc != 1 && cc != N) || ct->rank > 2) {
			cv_diag_node(d, n, "C does not broadcast to [%lld, %lld]", (long long)M,
				     (long long)N);
			return -1;
		}
	}
	for (int64_t i = 0; i < M; i++)
		for (int64_t j = 0; j < N; j++) {
			double acc = 0;

			for (int64_t k = 0; k < K; k++)
				acc += (double)A[ta ? k * M + i : i * K + k] *
				       B[tb ? j * K + k : k * N + j];
			acc *= alpha;
			if (Cb)
				acc += beta * Cb[(cr == 1 ? 0 : i) * cc + (cc == 1 ? 0 : j)];
			Y[i * N + j] = (float)acc;
		}
	return 0;
}

int cv_exec_matmul(const struct cv_graph *g, const struct cv_node *n, float **bufs,
		   struct cv_diag *d)
{
	const struct cv_tensor *a = &g->tensors[n->in[0]], *bt = &g->tensors[n->in[1]];
	const float *A = buf_in(n, bufs, 0), *B = buf_in(n, bufs, 1);
	float *Y = bufs[n->out[0]];
	int64_t M = a->dims[a->rank - 2], K = a->dims[a->rank - 1], N = bt->dims[bt->rank - 1];
	int64_t batches = M * K > 0 ? cv_tensor_elems(a) / (M * K) : 0;
	bool shared_b = bt->rank == 2;

	(void)d;
	for (int64_t bi = 0; bi < batches; bi++) {
		const float *Ab = A + bi * M * K, *Bb = B + (shared_b ? 0 : bi * K * N);

		for (int64_t i = 0; i < M; i++)
			for (int64_t j = 0; j < N; j++) {
				double acc = 0;

				for (int64_t k = 0; k < K; k++)
					acc += (double)Ab[i * K + k] * Bb[k * N + j];
				Y[(bi * M + i) * N + j] = (float)acc;
			}
	}
	return 0;
}

/* FullyConnected: in viewed as [rows, K], w [N, K], optional b [N]. */
int cv_exec_fc(const struct cv_graph *g, const struct cv_node *n, float **bufs,
	       struct cv_diag *d)
{
	const struct cv_tensor *wt = &g->tensors[n->in[1]];
	const float *X = buf_in(n, bufs, 0), *Wt = buf_in(n, bufs, 1), *b = buf_in(n, bufs, 2);
	float *Y = bufs[n->out[0]];
	int64_t N = wt->dims[0], K = wt->dims[1];
	int64_t rows = cv_tensor_elems(&g->tensors[n->in[0]]) / (K ? K : 1);

	(void)d;
	for (int64_t r = 0; r < rows; r++)
		for (int64_t j = 0; j < N; j++) {
			double acc = b ? b[j] : 0.0;

			for (int64_t k = 0; k < K; k++)
				acc += (double)X[r * K + k] * Wt[j * K + k];
			Y[r * N + j] = (float)acc;
		}
	return 0;
}
