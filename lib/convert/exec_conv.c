// SPDX-License-Identifier: MIT
/*
 * Float executor: the multiply-accumulate ops (Conv, Gemm, MatMul and the
 * fully connected layer the passes make). Sums are kept in double so that the
 * executor's own rounding stays far below the 1e-4 bound against PyTorch.
 * Conv, where calibration spends its time, runs its kernels on a thread per
 * online CPU; every output is summed in one fixed order, so the results do
 * not depend on the threads.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"

/* Threads a Conv node runs on at most, and the work below which one does. */
#define CONV_MAX_THREADS	16
#define CONV_MACS_PER_THREAD	(1 << 20)
/* Maps of at most this many outputs run CONV_BLOCK kernels at once. */
#define CONV_SMALL_MAP		256
#define CONV_BLOCK		8

static const float *buf_in(const struct cv_node *n, float **bufs, int i)
{
	return i < n->n_in && n->in[i] >= 0 ? bufs[n->in[i]] : NULL;
}

/* One Conv node's operands, shared by the threads that run it. */
struct conv_job {
	const float *in, *w, *b;
	float *out;
	struct cv_window win;
	int64_t N, C, H, W, M, cg, mg;
	/*
	 * Per column tap kx: output columns [lo, hi) whose input column is
	 * inside the row; per row tap ky: output rows [ylo, yhi) likewise;
	 * [L, H3) the columns where all of a 3-wide kernel row is inside.
	 */
	int64_t *lo, *hi, *ylo, *yhi, L, H3;
	/*
	 * Small maps: kernels in blocks of CONV_BLOCK, their weights in @wb as
	 * [block][channel][tap][kernel] (zero past the last kernel).
	 */
	float *wb;
	int64_t units;		/* (image, kernel or block) pairs */
	int64_t next;		/* the next one to take */
	pthread_mutex_t lock;
};

/* [*lo, *hi) of outputs o with 0 <= o * s + off < n, within [0, count). */
static void inside(int64_t n, int64_t s, int64_t off, int64_t count, int64_t *lo, int64_t *hi)
{
	*lo = off >= 0 ? 0 : (-off + s - 1) / s;
	*hi = n - off <= 0 ? 0 : (n - off + s - 1) / s;
	*hi = *hi > count ? count : *hi;
	*lo = *lo > *hi ? *hi : *lo;
}

static int conv_bounds(struct conv_job *j)
{
	const struct cv_window *win = &j->win;

	j->lo = malloc((size_t)(2 * win->kw + 2 * win->kh) * sizeof(int64_t));
	if (!j->lo)
		return -1;
	j->hi = j->lo + win->kw;
	j->ylo = j->hi + win->kw;
	j->yhi = j->ylo + win->kh;
	j->L = 0;
	j->H3 = win->ow;
	for (int64_t kx = 0; kx < win->kw; kx++) {
		inside(j->W, win->sw, kx * win->dw - win->pl, win->ow, &j->lo[kx], &j->hi[kx]);
		j->L = j->lo[kx] > j->L ? j->lo[kx] : j->L;
		j->H3 = j->hi[kx] < j->H3 ? j->hi[kx] : j->H3;
	}
	for (int64_t ky = 0; ky < win->kh; ky++)
		inside(j->H, win->sh, ky * win->dh - win->pt, win->oh, &j->ylo[ky], &j->yhi[ky]);
	return 0;
}

/* a[i] += x[i * stride] * w for @n outputs; stride 1 apart so that it vectorises. */
static void row_madd(double *restrict a, const float *restrict x, int64_t n, int64_t stride,
		     double w)
{
	if (stride == 1) {
		for (int64_t i = 0; i < n; i++)
			a[i] += (double)x[i] * w;
		return;
	}
	for (int64_t i = 0; i < n; i++)
		a[i] += (double)x[i * stride] * w;
}

/*
 * A 1x1 kernel's four channels @x[0..3] at once: each output still adds
 * them one by one, in channel order, but reads and writes its sum once.
 */
static void row_madd4(double *restrict a, const float *const x[4], int64_t n, int64_t stride,
		      const double w[4])
{
	const float *restrict x0 = x[0], *restrict x1 = x[1], *restrict x2 = x[2];
	const float *restrict x3 = x[3];

	for (int64_t i = 0; i < n; i++) {
		int64_t k = i * stride;

		a[i] = a[i] + (double)x0[k] * w[0] + (double)x1[k] * w[1] + (double)x2[k] * w[2] +
		       (double)x3[k] * w[3];
	}
}

/* a[i] += x[i*s] * w[0] + x[i*s + d] * w[1] + x[i*s + 2d] * w[2], in that order. */
static void row_madd3(double *restrict a, const float *restrict x, int64_t n, int64_t stride,
		      int64_t d, const double w[3])
{
	for (int64_t i = 0; i < n; i++) {
		int64_t k = i * stride;

		a[i] = a[i] + (double)x[k] * w[0] + (double)x[k + d] * w[1] +
		       (double)x[k + 2 * d] * w[2];
	}
}

/* Channels [@c, @c + 4) of a 1x1 kernel @wm (one tap each) into @acc. */
static void conv_1x1_four(const struct conv_job *j, const float *ic, const float *wm, int64_t c,
			  double *acc)
{
	const struct cv_window *win = &j->win;
	double w[4] = { wm[c], wm[c + 1], wm[c + 2], wm[c + 3] };
	int64_t lo = j->lo[0], n = j->hi[0] - lo, plane = j->H * j->W;

	for (int64_t oy = j->ylo[0]; oy < j->yhi[0] && n > 0; oy++) {
		int64_t at = (oy * win->sh - win->pt) * j->W + lo * win->sw - win->pl;
		const float *x[4] = { ic + at, ic + plane + at, ic + 2 * plane + at,
				      ic + 3 * plane + at };

		row_madd4(acc + oy * win->ow + lo, x, n, win->sw, w);
	}
}

/*
 * One output row @a of a 3-wide kernel row (weights @w) over input row
 * @row: where all three taps read inside it, at once; at the edges tap by
 * tap, so that each output still adds its taps from left to right.
 */
static void row_of_3(const struct conv_job *j, double *a, const float *row, const double w[3])
{
	const struct cv_window *win = &j->win;
	int64_t L = j->L, H = j->H3;

	for (int64_t kx = 0; kx < 3; kx++) {
		int64_t lo = j->lo[kx], e = L < H ? L : j->hi[kx];

		e = e < j->hi[kx] ? e : j->hi[kx];
		if (lo < e)
			row_madd(a + lo, row + lo * win->sw + kx * win->dw - win->pl, e - lo,
				 win->sw, w[kx]);
	}
	if (L >= H)
		return;
	row_madd3(a + L, row + L * win->sw - win->pl, H - L, win->sw, win->dw, w);
	for (int64_t kx = 0; kx < 3; kx++) {
		int64_t b = H > j->lo[kx] ? H : j->lo[kx];

		if (b < j->hi[kx])
			row_madd(a + b, row + b * win->sw + kx * win->dw - win->pl, j->hi[kx] - b,
				 win->sw, w[kx]);
	}
}

/* Kernel row @ky of channel @ic (weights @wr) into @acc. */
static void conv_kernel_row(const struct conv_job *j, const float *ic, const float *wr,
			    int64_t ky, double *acc)
{
	const struct cv_window *win = &j->win;
	double w3[3] = { wr[0], wr[win->kw > 1], wr[win->kw > 2 ? 2 : 0] };

	for (int64_t oy = j->ylo[ky]; oy < j->yhi[ky]; oy++) {
		const float *row = ic + (oy * win->sh - win->pt + ky * win->dh) * j->W;
		double *a = acc + oy * win->ow;

		if (win->kw == 3) {
			row_of_3(j, a, row, w3);
			continue;
		}
		for (int64_t kx = 0; kx < win->kw; kx++)
			if (j->lo[kx] < j->hi[kx])
				row_madd(a + j->lo[kx],
					 row + j->lo[kx] * win->sw + kx * win->dw - win->pl,
					 j->hi[kx] - j->lo[kx], win->sw, wr[kx]);
	}
}

/* Taps [*lo, *hi) of a window at @o * s - pad that land inside [0, n). */
static void taps_inside(int64_t o, int64_t s, int64_t pad, int64_t d, int64_t k, int64_t n,
			int64_t *lo, int64_t *hi)
{
	int64_t at = o * s - pad;

	*lo = at >= 0 ? 0 : (-at + d - 1) / d;
	*hi = n - at <= 0 ? 0 : (n - at + d - 1) / d;
	*hi = *hi > k ? k : *hi;
	*lo = *lo > *hi ? *hi : *lo;
}

/*
 * Output (@oy, @ox) of the CONV_BLOCK kernels from @m0 of image @nb, for
 * small maps where a row is too short to sweep: the block's sums side by
 * side, each in the same order as conv_kernel()'s.
 */
static void conv_block_pixel(const struct conv_job *j, int64_t nb, int64_t m0, int64_t oy,
			     int64_t ox, double acc[CONV_BLOCK])
{
	const struct cv_window *win = &j->win;
	int64_t taps = win->kh * win->kw, ky0, ky1, kx0, kx1;
	const float *wb = j->wb + (m0 / CONV_BLOCK) * j->cg * taps * CONV_BLOCK;

	taps_inside(oy, win->sh, win->pt, win->dh, win->kh, j->H, &ky0, &ky1);
	taps_inside(ox, win->sw, win->pl, win->dw, win->kw, j->W, &kx0, &kx1);
	for (int64_t c = 0; c < j->cg; c++) {
		const float *ic = j->in + (nb * j->C + c) * j->H * j->W;

		for (int64_t ky = ky0; ky < ky1; ky++) {
			const float *row = ic + (oy * win->sh - win->pt + ky * win->dh) * j->W +
					   ox * win->sw - win->pl;
			const float *wr = wb + (c * taps + ky * win->kw) * CONV_BLOCK;

			for (int64_t kx = kx0; kx < kx1; kx++) {
				double x = row[kx * win->dw];

				for (int k = 0; k < CONV_BLOCK; k++)
					acc[k] += x * wr[kx * CONV_BLOCK + k];
			}
		}
	}
}

static void conv_block(const struct conv_job *j, int64_t nb, int64_t m0)
{
	const struct cv_window *win = &j->win;
	int64_t kn = j->M - m0 < CONV_BLOCK ? j->M - m0 : CONV_BLOCK;

	for (int64_t oy = 0; oy < win->oh; oy++)
		for (int64_t ox = 0; ox < win->ow; ox++) {
			double acc[CONV_BLOCK];

			for (int k = 0; k < CONV_BLOCK; k++)
				acc[k] = j->b && k < kn ? j->b[m0 + k] : 0.0;
			conv_block_pixel(j, nb, m0, oy, ox, acc);
			for (int64_t k = 0; k < kn; k++)
				j->out[((nb * j->M + m0 + k) * win->oh + oy) * win->ow + ox] =
					(float)acc[k];
		}
}

/* The block layout of the weights; -1 when out of memory. */
static int conv_block_weights(struct conv_job *j)
{
	int64_t taps = j->win.kh * j->win.kw, blocks = (j->M + CONV_BLOCK - 1) / CONV_BLOCK;

	j->wb = calloc((size_t)(blocks * j->cg * taps * CONV_BLOCK), sizeof(float));
	if (!j->wb)
		return -1;
	for (int64_t m = 0; m < j->M; m++)
		for (int64_t c = 0; c < j->cg; c++)
			for (int64_t t = 0; t < taps; t++)
				j->wb[(((m / CONV_BLOCK) * j->cg + c) * taps + t) * CONV_BLOCK +
				      m % CONV_BLOCK] = j->w[(m * j->cg + c) * taps + t];
	return 0;
}

/*
 * Kernel @m of image @nb into @acc (oh x ow doubles). Each output adds the
 * bias, then every in-range tap in the order channel, row, column: the
 * order of a plain loop per output, so the sums are the same bits however
 * the work is divided; sweeping a tap over whole rows keeps the inner loop
 * free of bounds checks.
 */
static void conv_kernel(const struct conv_job *j, int64_t nb, int64_t m, double *acc)
{
	const struct cv_window *win = &j->win;
	int64_t c0 = (m / j->mg) * j->cg, taps = win->kh * win->kw;
	const float *wm = j->w + m * j->cg * taps;
	float *out = j->out + (nb * j->M + m) * win->oh * win->ow;

	for (int64_t p = 0; p < win->oh * win->ow; p++)
		acc[p] = j->b ? j->b[m] : 0.0;
	for (int64_t c = 0; c < j->cg; c++) {
		const float *ic = j->in + (nb * j->C + c0 + c) * j->H * j->W;

		if (taps == 1 && c + 4 <= j->cg) {
			conv_1x1_four(j, ic, wm, c, acc);
			c += 3;
			continue;
		}
		for (int64_t ky = 0; ky < win->kh; ky++)
			conv_kernel_row(j, ic, wm + c * taps + ky * win->kw, ky, acc);
	}
	for (int64_t p = 0; p < win->oh * win->ow; p++)
		out[p] = (float)acc[p];
}

static void *conv_worker(void *arg)
{
	struct conv_job *j = arg;
	double *acc = malloc((size_t)(j->win.oh * j->win.ow) * sizeof(double) + 1);

	if (!acc)
		return arg;	/* failed: the caller sees it */
	for (;;) {
		int64_t k;

		pthread_mutex_lock(&j->lock);
		k = j->next++;
		pthread_mutex_unlock(&j->lock);
		if (k >= j->units)
			break;
		if (j->wb)
			conv_block(j, k / (j->units / j->N), k % (j->units / j->N) * CONV_BLOCK);
		else
			conv_kernel(j, k / j->M, k % j->M, acc);
	}
	free(acc);
	return NULL;
}

/* Threads for @macs multiply-adds: the online CPUs, fewer for small nodes. */
static int conv_threads(int64_t macs, int64_t kernels)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int64_t n = cpus < 1 ? 1 : cpus > CONV_MAX_THREADS ? CONV_MAX_THREADS : cpus;

	if (macs < CONV_MACS_PER_THREAD)
		return 1;
	return (int)(n < kernels ? n : kernels);
}

int cv_exec_conv(const struct cv_graph *g, const struct cv_node *n, float **bufs,
		 struct cv_diag *d)
{
	const struct cv_tensor *x = &g->tensors[n->in[0]], *wt = &g->tensors[n->in[1]];
	int64_t group = cv_attr_int(n, "group", 1);
	struct conv_job j = {
		.in = buf_in(n, bufs, 0), .w = buf_in(n, bufs, 1), .b = buf_in(n, bufs, 2),
		.out = bufs[n->out[0]],
		.N = x->dims[0], .C = x->dims[1], .H = x->dims[2], .W = x->dims[3],
		.M = wt->dims[0],
	};
	pthread_t tid[CONV_MAX_THREADS];
	int nt, started = 0, failed = 0;

	j.cg = j.C / group;
	j.mg = j.M / group;
	if (cv_window_get(n, j.H, j.W, wt->dims[2], wt->dims[3], &j.win, d))
		return -1;
	/* small maps of a plain convolution: kernels side by side */
	if (conv_bounds(&j) ||
	    (group == 1 && j.win.oh * j.win.ow <= CONV_SMALL_MAP && conv_block_weights(&j))) {
		free(j.lo);
		cv_diag_add(d, "out of memory");
		return -1;
	}
	j.units = j.N * (j.wb ? (j.M + CONV_BLOCK - 1) / CONV_BLOCK : j.M);
	nt = conv_threads(j.N * j.M * j.win.oh * j.win.ow * j.cg * j.win.kh * j.win.kw, j.units);
	pthread_mutex_init(&j.lock, NULL);
	for (int i = 1; i < nt; i++)
		if (!pthread_create(&tid[started], NULL, conv_worker, &j))
			started++;
	failed = conv_worker(&j) != NULL;
	for (int i = 0; i < started; i++) {
		void *r;

		pthread_join(tid[i], &r);
		failed |= r != NULL;
	}
	pthread_mutex_destroy(&j.lock);
	free(j.lo);
	free(j.wb);
	if (failed) {
		cv_diag_add(d, "out of memory");
		return -1;
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
