// SPDX-License-Identifier: MIT
/*
 * One inference over several cores. Each layer whose work is large enough
 * that a share of it on each core wins after the cost of the fences around
 * it has its tasks divided among the cores, by kernels or rows, whichever
 * moves fewer bytes twice (a kernel split reads the input on every core, a
 * row split the weights). The other layers stay whole and go, in program
 * order, to the core where they end first. Runs of layers on one core that
 * wait for nothing new are one job; a layer waits only for the layers it
 * reads and for those whose bytes it overwrites (the activation plan reuses
 * memory), never for unrelated branches. Every job's start is charged the
 * boundary cost, and the plan with the smallest estimated latency is kept,
 * a single job on one core when nothing beats it.
 *
 * Each task is estimated in the terms of the simulator's timing model
 * (cost.c), over the very tiles emission will put: it only guides the
 * choice; the latency reported (lib/runtime/split.c) is measured.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "split.h"

/* Thresholds tried: a layer is split when it gains more than f/4 boundaries. */
static const uint32_t try_quarters[] = { 1, 2, 4, 8, 16 };
/*
 * Stripe segments tried: none, or computing at most this percent of a
 * layer's rows; 1000 + the percent: only layers that stripe_wins() takes.
 */
static const uint32_t try_caps[] = { 0, 115, 130, 150, 200, 300, 1115, 1130, 1150, 1200,
					1300 };

struct sjob {
	uint32_t core;
	uint64_t end;
	uint32_t upto[SPLIT_MAX_PARTS];	/* per core: jobs below this index are done first */
	uint32_t waits[SPLIT_MAX_PARTS];	/* explicit waits, job index + 1, 0: none */
	uint32_t units;
};

struct split_state {
	const struct split_in *in;
	uint32_t n;
	uint32_t *dep_first, *dep_count, *deps, ndeps, cap_deps;
	struct layer_plan *best;	/* the chosen layer plans */
	uint32_t *unit_job;		/* per unit: its job */
	uint64_t *ns;			/* per unit: estimated device time */
	struct sjob *jobs;
	uint32_t njobs, cap_jobs;
	uint32_t open[SPLIT_MAX_PARTS];	/* per core: open job + 1, 0: none */
	uint32_t last[SPLIT_MAX_PARTS];	/* per core: its last job + 1 */
	uint64_t core_end[SPLIT_MAX_PARTS];
	uint64_t one_ns;
};

static bool is_pool(const struct layer_plan *lp)
{
	return lp->desc->op == RKACCEL_OP_MAXPOOL || lp->desc->op == RKACCEL_OP_AVGPOOL;
}

static bool is_cat(const struct split_in *in, uint32_t i)
{
	return in->d->layers[i].op == RKACCEL_OP_CONCAT;
}

/* --- dependencies ------------------------------------------------------------ */

struct range {
	uint32_t buf;
	uint64_t lo, hi;
};

static struct range tensor_range(const struct tensor_place *t)
{
	uint64_t bytes = (uint64_t)native_planes(t->c, t->elem_bytes) * t->plane;

	return (struct range){ t->buf, t->off, t->off + bytes };
}

static bool overlap(struct range a, struct range b)
{
	return a.buf == b.buf && a.lo < b.hi && b.lo < a.hi;
}

/* Layer st->n (the one being filled) waits for layer @k. */
static int dep_add(struct split_state *st, uint32_t k)
{
	for (uint32_t j = st->ndeps - st->dep_count[st->n]; j < st->ndeps; j++)
		if (st->deps[j] == k)
			return 0;
	if (st->ndeps == st->cap_deps) {
		uint32_t cap = st->cap_deps ? st->cap_deps * 2 : 256;
		uint32_t *d = realloc(st->deps, cap * sizeof(*d));

		if (!d)
			return -ENOMEM;
		st->deps = d;
		st->cap_deps = cap;
	}
	st->deps[st->ndeps++] = k;
	st->dep_count[st->n]++;
	return 0;
}

/* The layers that wrote tensor @t: its producer, or through a concat its inputs'. */
static int dep_tensor(struct split_state *st, uint32_t t)
{
	const struct split_in *in = st->in;
	int ret = 0;

	if (!t)
		return 0;
	if (!is_cat(in, t - 1))
		return dep_add(st, t - 1);
	for (uint32_t k = 0; !ret && k < in->io[t - 1].cat_count; k++)
		ret = dep_tensor(st, in->cat[in->io[t - 1].cat_first + k]);
	return ret;
}

static uint32_t src_of(const struct split_in *in, uint32_t i)
{
	return in->io ? in->io[i].src : i;
}

/* Layer @i's reads: its input and the added tensor. */
static uint32_t layer_reads(const struct split_in *in, uint32_t i, struct range r[2])
{
	const struct rkaccel_layer_desc *l = &in->d->layers[i];
	uint32_t n = 0;

	r[n++] = tensor_range(&in->t[src_of(in, i)]);
	if (l->flags & RKACCEL_LAYER_ADD)
		r[n++] = tensor_range(&in->t[l->add_input]);
	return n;
}

/* Layer @i (not a concat) after what it reads and what it overwrites. */
static int deps_of(struct split_state *st, uint32_t i)
{
	const struct split_in *in = st->in;
	const struct rkaccel_layer_desc *l = &in->d->layers[i];
	struct range w = tensor_range(&in->t[i + 1]), r[2];
	int ret = dep_tensor(st, src_of(in, i));

	if (!ret && l->flags & RKACCEL_LAYER_ADD)
		ret = dep_tensor(st, l->add_input);
	for (uint32_t k = 0; !ret && k < i; k++) {
		uint32_t nr;
		bool hit;

		if (is_cat(in, k))
			continue;
		nr = layer_reads(in, k, r);
		hit = overlap(w, tensor_range(&in->t[k + 1]));
		for (uint32_t j = 0; j < nr; j++)
			hit = hit || overlap(w, r[j]);
		if (hit)
			ret = dep_add(st, k);
	}
	return ret;
}

static int deps_build(struct split_state *st, uint32_t n)
{
	int ret = 0;

	for (st->n = 0; !ret && st->n < n; st->n++) {
		st->dep_first[st->n] = st->ndeps;
		if (!is_cat(st->in, st->n))
			ret = deps_of(st, st->n);
	}
	st->n = n;
	return ret;
}

/* --- estimates ----------------------------------------------------------------- */

/* Per part, the device time of @lp's tasks in the timing model (cost.c). */
static void est_parts(const struct layer_plan *lp, uint64_t ns[SPLIT_MAX_PARTS])
{
	memset(ns, 0, SPLIT_MAX_PARTS * sizeof(*ns));
	if (is_pool(lp))
		pool_cost(lp, ns);
	else
		conv_cost(lp, ns);
}

/* Device time of part @q of @lp. */
static uint64_t est_unit(const struct layer_plan *lp, uint32_t q)
{
	uint64_t ns[SPLIT_MAX_PARTS];

	est_parts(lp, ns);
	return ns[q];
}

/* The largest part's device time. */
static uint64_t est_part(const struct layer_plan *lp)
{
	uint64_t ns[SPLIT_MAX_PARTS], m = 0;

	est_parts(lp, ns);
	for (uint32_t q = 0; q < SPLIT_MAX_PARTS; q++)
		m = ns[q] > m ? ns[q] : m;
	return m;
}

/*
 * Device time of stripe rows [@lo, @hi) of @lp: every kernel tile over those
 * rows, so the whole of the weights (each core of a segment loads them).
 */
static uint64_t est_rows(const struct layer_plan *lp, uint32_t lo, uint32_t hi)
{
	struct layer_plan c = *lp;

	c.parts = 1;
	c.part_rows = true;
	c.seg = 1;
	c.row_lo[0] = lo;
	c.row_hi[0] = hi;
	return est_unit(&c, 0);
}

/* The split of @lp over 2..@ncores parts whose largest part is quickest, into @out. */
static void best_split(const struct layer_plan *lp, uint32_t banks, uint32_t ncores,
		       struct layer_plan *out)
{
	uint64_t best = est_part(lp);

	*out = *lp;
	if (is_pool(lp))
		return;
	for (uint32_t p = 2; p <= ncores; p++) {
		for (int rows = 0; rows < 2; rows++) {
			struct layer_plan c = *lp;
			uint64_t ns;

			conv_split(&c, banks, p, rows);
			if (c.parts < 2)
				continue;
			ns = est_part(&c);
			if (ns < best) {
				best = ns;
				*out = c;
			}
		}
	}
}

/* --- the schedule ----------------------------------------------------------------- */

static int job_new(struct split_state *st, uint32_t core)
{
	struct sjob *j;

	if (st->njobs == st->cap_jobs) {
		uint32_t cap = st->cap_jobs ? st->cap_jobs * 2 : 64;

		j = realloc(st->jobs, cap * sizeof(*j));
		if (!j)
			return -ENOMEM;
		st->jobs = j;
		st->cap_jobs = cap;
	}
	j = &st->jobs[st->njobs];
	memset(j, 0, sizeof(*j));
	j->core = core;
	/* after the core's previous job: what it waited for is done too */
	if (st->last[core])
		memcpy(j->upto, st->jobs[st->last[core] - 1].upto, sizeof(j->upto));
	j->upto[core] = st->njobs;
	st->last[core] = st->open[core] = ++st->njobs;
	return 0;
}

static bool covered(const struct split_state *st, const uint32_t *upto, uint32_t w)
{
	return w < upto[st->jobs[w].core];
}

/*
 * What unit @u of layer @i on core @c waits for that the core's open job
 * does not: per other core the latest job, in @need (job + 1, 0: none).
 * Returns whether there is any.
 */
static bool unit_needs(const struct split_state *st, uint32_t i, uint32_t c,
		       uint32_t need[SPLIT_MAX_PARTS])
{
	const struct sjob *open = st->open[c] ? &st->jobs[st->open[c] - 1] : NULL;
	bool any = false;

	memset(need, 0, SPLIT_MAX_PARTS * sizeof(*need));
	for (uint32_t k = st->dep_first[i]; k < st->dep_first[i] + st->dep_count[i]; k++) {
		uint32_t d = st->deps[k];
		/* in the same stripe segment: only the same stripe, on this core */
		bool same = st->best[i].seg && st->best[d].seg == st->best[i].seg;

		for (uint32_t q = same ? c : 0; q < (same ? c + 1 : st->best[d].parts); q++) {
			uint32_t w = st->unit_job[d * SPLIT_MAX_PARTS + q];
			uint32_t wc = st->jobs[w].core;

			if (wc == c || (open && covered(st, open->upto, w)))
				continue;
			if (w + 1 > need[wc])
				need[wc] = w + 1;
			any = true;
		}
	}
	return any;
}

/* When unit @u would end on core @c; a new job is charged the boundary. */
static uint64_t unit_end(const struct split_state *st, uint32_t i, uint32_t c, uint64_t ns)
{
	uint32_t need[SPLIT_MAX_PARTS];
	uint64_t start = st->core_end[c];

	if (st->open[c] && !unit_needs(st, i, c, need))
		return start + ns;
	unit_needs(st, i, c, need);
	for (uint32_t k = 0; k < st->in->ncores; k++)
		if (need[k] && st->jobs[need[k] - 1].end > start)
			start = st->jobs[need[k] - 1].end;
	return start + st->in->boundary_ns + ns;
}

/* Put unit @u of layer @i on core @c: in its open job, or a new one after @need. */
static int unit_place(struct split_state *st, uint32_t i, uint32_t u, uint32_t c)
{
	uint32_t need[SPLIT_MAX_PARTS];
	uint64_t start = st->core_end[c];
	struct sjob *j;
	int ret;

	if (!st->open[c] || unit_needs(st, i, c, need)) {
		if (!st->open[c])
			unit_needs(st, i, c, need);
		st->open[c] = 0;
		ret = job_new(st, c);
		if (ret)
			return ret;
		j = &st->jobs[st->njobs - 1];
		for (uint32_t k = 0; k < st->in->ncores; k++) {
			struct sjob *w;

			if (!need[k] || covered(st, j->upto, need[k] - 1))
				continue;
			w = &st->jobs[need[k] - 1];
			st->open[k] = st->open[k] == need[k] ? 0 : st->open[k];	/* it ends here */
			j->waits[k] = need[k];
			for (uint32_t q = 0; q < SPLIT_MAX_PARTS; q++)
				j->upto[q] = w->upto[q] > j->upto[q] ? w->upto[q] : j->upto[q];
			if (need[k] > j->upto[k])
				j->upto[k] = need[k];
			start = w->end > start ? w->end : start;
		}
		j->end = start + st->in->boundary_ns;
	}
	j = &st->jobs[st->open[c] - 1];
	j->end += st->ns[u];
	j->units++;
	st->core_end[c] = j->end;
	st->unit_job[u] = st->open[c] - 1;
	return 0;
}

/* The core where an unsplit layer ends first; ties: its input's core, then the lowest. */
static uint32_t pick_core(const struct split_state *st, uint32_t i, uint64_t ns)
{
	uint32_t pref = 0, best = 0;
	uint64_t best_end = UINT64_MAX;

	if (st->dep_count[i]) {
		uint32_t d = st->deps[st->dep_first[i]];

		pref = st->jobs[st->unit_job[d * SPLIT_MAX_PARTS]].core;
	}
	for (uint32_t k = 0; k < st->in->ncores; k++) {
		uint32_t c = (pref + k) % st->in->ncores;
		uint64_t end = unit_end(st, i, c, ns);

		if (end < best_end) {
			best_end = end;
			best = c;
		}
	}
	return best;
}

/* Schedule every layer of st->best; returns the estimated latency, 0 on -ENOMEM. */
static uint64_t schedule(struct split_state *st)
{
	uint64_t end = 0;

	st->njobs = 0;
	memset(st->open, 0, sizeof(st->open));
	memset(st->last, 0, sizeof(st->last));
	memset(st->core_end, 0, sizeof(st->core_end));
	for (uint32_t i = 0; i < st->n; i++) {
		const struct layer_plan *lp = &st->best[i];
		uint32_t u = i * SPLIT_MAX_PARTS;

		if (is_cat(st->in, i))
			continue;
		est_parts(lp, &st->ns[u]);
		if (lp->parts > 1) {
			for (uint32_t q = 0; q < lp->parts; q++)
				if (unit_place(st, i, u + q, q))
					return 0;
		} else if (unit_place(st, i, u, pick_core(st, i, st->ns[u]))) {
			return 0;
		}
	}
	for (uint32_t j = 0; j < st->njobs; j++)
		end = st->jobs[j].end > end ? st->jobs[j].end : end;
	return end;
}

/* --- stripe segments --------------------------------------------------------------- */

/* Whether layer @i can be a stripe segment's: rows of an image, one channel tile. */
static bool stripe_ok(const struct split_state *st, uint32_t i)
{
	const struct layer_plan *lp = &st->in->lps[i];

	if (is_cat(st->in, i) || lp->out_h < st->in->ncores)
		return false;
	if (is_pool(lp))
		return true;
	/* a fully connected layer over its pixels as one column has no rows */
	return lp->channel_tiles == 1 && lp->in_w == lp->in.w && lp->out_h == lp->out.h;
}

/* Input rows layer @lp reads for its output rows [@lo, @hi). */
static void rows_read(const struct layer_plan *lp, uint32_t lo, uint32_t hi, uint32_t *ilo,
		      uint32_t *ihi)
{
	int64_t top = (int64_t)lo * lp->stride_y - lp->pad_t;
	int64_t end = (int64_t)(hi - 1) * lp->stride_y - lp->pad_t + lp->kh;

	*ilo = top < 0 ? 0 : (uint32_t)top;
	*ihi = end > lp->in_h ? lp->in_h : (uint32_t)end;
}

static void widen(struct layer_plan *lp, uint32_t q, uint32_t lo, uint32_t hi)
{
	lp->row_lo[q] = lo < lp->row_lo[q] ? lo : lp->row_lo[q];
	lp->row_hi[q] = hi > lp->row_hi[q] ? hi : lp->row_hi[q];
}

/*
 * The rows of layers [@a, @b) as one segment in st->best (seg id @id): each
 * part its own share of every layer, widened backwards by what the later
 * layers of the same part read. Returns the most rows computed over any
 * layer's own, in percent (100: no overlap).
 */
static uint32_t segment_rows(struct split_state *st, uint32_t a, uint32_t b, uint32_t id)
{
	const struct split_in *in = st->in;
	uint32_t P = in->ncores, worst = 100;

	for (uint32_t i = a; i < b; i++) {
		struct layer_plan *lp = &st->best[i];

		*lp = in->lps[i];
		lp->parts = P;
		lp->part_rows = true;
		lp->seg = id;
		for (uint32_t q = 0; q < P; q++) {
			lp->row_lo[q] = lp->out_h * q / P;
			lp->row_hi[q] = lp->out_h * (q + 1) / P;
		}
	}
	for (uint32_t j = b; j-- > a;) {
		const struct layer_plan *lj = &st->best[j];
		const struct rkaccel_layer_desc *l = lj->desc;
		uint32_t src = src_of(in, j);

		for (uint32_t q = 0; q < P; q++) {
			uint32_t ilo, ihi;

			rows_read(lj, lj->row_lo[q], lj->row_hi[q], &ilo, &ihi);
			if (src > a && src - 1 < j)
				widen(&st->best[src - 1], q, ilo, ihi);
			if (l->flags & RKACCEL_LAYER_ADD && l->add_input > a && l->add_input - 1 < j)
				widen(&st->best[l->add_input - 1], q, lj->row_lo[q], lj->row_hi[q]);
		}
	}
	for (uint32_t i = a; i < b; i++) {
		const struct layer_plan *lp = &st->best[i];
		uint32_t rows = 0;

		for (uint32_t q = 0; q < P; q++)
			rows += lp->row_hi[q] - lp->row_lo[q];
		worst = rows * 100 / lp->out_h > worst ? rows * 100 / lp->out_h : worst;
	}
	return worst;
}

/*
 * Whether layer @i is better in a stripe (its own share of rows, all its
 * weights) than split on its own by kernels or rows after a boundary: the
 * weight-heavy layers of a network's end are not.
 */
static bool stripe_wins(const struct split_state *st, uint32_t i)
{
	const struct split_in *in = st->in;
	const struct layer_plan *lp = &in->lps[i];
	struct layer_plan c;
	uint64_t own = 0;

	for (uint32_t q = 0; q < in->ncores; q++) {
		uint64_t e = est_rows(lp, lp->out_h * q / in->ncores,
				      lp->out_h * (q + 1) / in->ncores);

		own = e > own ? e : own;
	}
	best_split(lp, in->banks, in->ncores, &c);
	return c.parts < 2 || own < est_part(&c) + in->boundary_ns;
}

/*
 * Stripe segments: runs of at least two layers whose parts compute
 * overlapping rows so that no part waits for another inside the run,
 * while no layer computes more than @cap percent of its rows; a run is
 * kept when its estimate beats its layers on one core, or split one by
 * one, by a boundary. @strict: a layer that stripe_wins() refuses ends it.
 */
static void plan_segments(struct split_state *st, uint32_t cap, bool strict)
{
	uint32_t id = 0;

	for (uint32_t a = 0; a < st->n;) {
		uint32_t b = a + 1;
		uint64_t one = 0, alt = 0, part[SPLIT_MAX_PARTS] = { 0 }, worst = 0;

		if (!stripe_ok(st, a)) {
			a++;
			continue;
		}
		while (b < st->n && stripe_ok(st, b) && (!strict || stripe_wins(st, b)) &&
		       segment_rows(st, a, b + 1, id + 1) <= cap)
			b++;
		if (b < st->n)
			st->best[b] = st->in->lps[b];	/* the probe that failed */
		segment_rows(st, a, b, id + 1);
		for (uint32_t i = a; i < b; i++) {
			struct layer_plan c;
			uint64_t o = est_part(&st->in->lps[i]), ns[SPLIT_MAX_PARTS];

			best_split(&st->in->lps[i], st->in->banks, st->in->ncores, &c);
			one += o;
			/* the layers split one by one instead: a boundary each */
			alt += c.parts > 1 ? est_part(&c) + st->in->boundary_ns : o;
			est_parts(&st->best[i], ns);
			for (uint32_t q = 0; q < st->in->ncores; q++)
				part[q] += ns[q];
		}
		for (uint32_t q = 0; q < st->in->ncores; q++)
			worst = part[q] > worst ? part[q] : worst;
		if (b - a < 2 || worst + st->in->boundary_ns >= (alt < one ? alt : one)) {
			for (uint32_t i = a; i < b; i++)
				st->best[i] = st->in->lps[i];
			a = a + 1;
			continue;
		}
		id++;
		a = b;
	}
}

/*
 * The plans with stripe segments below @cap percent (0: none) and every
 * other layer gaining more than @quarters / 4 boundaries split.
 */
static void plans_for_ex(struct split_state *st, uint32_t quarters, uint32_t cap, bool strict)
{
	const struct split_in *in = st->in;

	for (uint32_t i = 0; i < st->n; i++)
		st->best[i] = in->lps[i];
	if (cap)
		plan_segments(st, cap, strict);
	for (uint32_t i = 0; i < st->n; i++) {
		struct layer_plan c;
		uint64_t one, part;

		if (is_cat(in, i) || st->best[i].seg || !quarters)
			continue;
		best_split(&in->lps[i], in->banks, in->ncores, &c);
		one = est_part(&st->best[i]);
		part = est_part(&c);
		if (c.parts > 1 && one > part && (one - part) * 4 > in->boundary_ns * quarters)
			st->best[i] = c;
	}
}

static void plans_for(struct split_state *st, uint32_t quarters, uint32_t cap)
{
	plans_for_ex(st, quarters, cap % 1000, cap >= 1000);
}

void split_free(struct split_state *st)
{
	if (!st)
		return;
	free(st->dep_first);
	free(st->dep_count);
	free(st->deps);
	free(st->best);
	free(st->unit_job);
	free(st->ns);
	free(st->jobs);
	free(st);
}

/*
 * Choose the layer plans of the split with the smallest estimated latency
 * (none split when nothing beats one core) and write them into in->lps.
 */
int split_plan(const struct split_in *in, struct split_state **out)
{
	uint32_t n = in->d->num_layers, best_q = 0, best_cap = 0;
	struct split_state *st = calloc(1, sizeof(*st));
	uint64_t best = UINT64_MAX;
	int ret = -ENOMEM;

	*out = NULL;
	if (!st)
		return ret;
	st->in = in;
	st->dep_first = calloc(n, sizeof(uint32_t));
	st->dep_count = calloc(n, sizeof(uint32_t));
	st->best = calloc(n, sizeof(*st->best));
	st->unit_job = calloc((size_t)n * SPLIT_MAX_PARTS, sizeof(uint32_t));
	st->ns = calloc((size_t)n * SPLIT_MAX_PARTS, sizeof(uint64_t));
	if (st->dep_first && st->dep_count && st->best && st->unit_job && st->ns)
		ret = deps_build(st, n);
	for (uint32_t c = 0; !ret && c < sizeof(try_caps) / sizeof(try_caps[0]); c++) {
		for (uint32_t k = 0; !ret && k <= sizeof(try_quarters) / sizeof(try_quarters[0]); k++) {
			uint32_t q = k ? try_quarters[k - 1] : 0;
			uint64_t est;

			plans_for(st, q, try_caps[c]);
			est = schedule(st);
			if (!est) {
				ret = -ENOMEM;
			} else if (!k && !c) {
				st->one_ns = in->boundary_ns;
				for (uint32_t u = 0; u < n * SPLIT_MAX_PARTS; u++)
					st->one_ns += st->ns[u];
			}
			if (!ret && est < best) {
				best = est;
				best_q = q;
				best_cap = try_caps[c];
			}
		}
	}
	if (!ret) {
		plans_for(st, best_q, best_cap);
		for (uint32_t i = 0; i < n; i++)
			in->lps[i] = st->best[i];
		*out = st;
		return 0;
	}
	split_free(st);
	return ret;
}

/* The jobs of the chosen plan, with the program's tasks in them (after emission). */
int split_jobs_build(struct split_state *st, struct rkaccel_program *p)
{
	struct split_jobs *sj = calloc(1, sizeof(*sj));
	uint64_t est = schedule(st);
	uint32_t nw = 0, *fill;

	if (!sj || !est) {
		free(sj);
		return -ENOMEM;
	}
	sj->ncores = st->in->ncores;
	sj->num_jobs = st->njobs;
	sj->est_ns = est;
	sj->est_one_ns = st->one_ns;
	for (uint32_t i = 0; i < st->n; i++)
		sj->split_layers += st->best[i].parts > 1;
	sj->job = calloc(st->njobs, sizeof(*sj->job));
	sj->tasks = calloc(p->num_tasks ? p->num_tasks : 1, sizeof(*sj->tasks));
	sj->waits = calloc((size_t)st->njobs * SPLIT_MAX_PARTS, sizeof(*sj->waits));
	fill = calloc(st->njobs, sizeof(*fill));
	p->jobs = sj;
	if (!sj->job || !sj->tasks || !sj->waits || !fill) {
		free(fill);
		return -ENOMEM;
	}
	for (uint32_t t = 0; t < p->num_tasks; t++)
		sj->job[st->unit_job[p->task_unit[t]]].task_count++;
	for (uint32_t j = 0, first = 0; j < st->njobs; j++) {
		struct split_job *job = &sj->job[j];

		job->core = st->jobs[j].core;
		job->task_first = first;
		first += job->task_count;
		job->wait_first = nw;
		for (uint32_t k = 0; k < SPLIT_MAX_PARTS; k++)
			if (st->jobs[j].waits[k])
				sj->waits[nw++] = st->jobs[j].waits[k] - 1;
		job->wait_count = nw - job->wait_first;
		job->est_ns = st->jobs[j].end;
		if (!job->task_count || job->task_count > st->in->max_tasks) {
			free(fill);
			return -E2BIG;
		}
	}
	for (uint32_t t = 0; t < p->num_tasks; t++) {
		uint32_t j = st->unit_job[p->task_unit[t]];

		sj->tasks[sj->job[j].task_first + fill[j]++] = t;
	}
	free(fill);
	return 0;
}

/*
 * One job a layer on one core, each after the one before: a single-core
 * program's tasks (program_compile_layer_jobs()) timed layer by layer.
 */
int layer_jobs_build(struct rkaccel_program *p, uint32_t max_tasks)
{
	struct split_jobs *sj = calloc(1, sizeof(*sj));
	uint32_t j = 0;

	if (!sj)
		return -ENOMEM;
	p->jobs = sj;
	sj->ncores = 1;
	sj->job = calloc(p->num_tasks ? p->num_tasks : 1, sizeof(*sj->job));
	sj->tasks = calloc(p->num_tasks ? p->num_tasks : 1, sizeof(*sj->tasks));
	sj->waits = calloc(p->num_tasks ? p->num_tasks : 1, sizeof(*sj->waits));
	if (!sj->job || !sj->tasks || !sj->waits)
		return -ENOMEM;
	/* emission put each layer's tasks together, in layer order */
	for (uint32_t t = 0; t < p->num_tasks; t++) {
		bool next = t && p->task_unit[t] / SPLIT_MAX_PARTS !=
				 p->task_unit[t - 1] / SPLIT_MAX_PARTS;
		struct split_job *job;

		if (next)
			j++;
		job = &sj->job[j];
		if (!job->task_count) {
			job->task_first = t;
			job->wait_first = j ? j - 1 : 0;
			job->wait_count = j ? 1 : 0;
			if (j)
				sj->waits[j - 1] = j - 1;
		}
		sj->tasks[t] = t;
		if (++job->task_count > max_tasks)
			return -E2BIG;
	}
	sj->num_jobs = p->num_tasks ? j + 1 : 0;
	return 0;
}

uint32_t program_job_layer(const struct rkaccel_program *prog, uint32_t job)
{
	const struct split_jobs *sj = prog->jobs;

	return prog->task_unit[sj->tasks[sj->job[job].task_first]] / SPLIT_MAX_PARTS;
}

void split_jobs_free(struct split_jobs *sj)
{
	if (!sj)
		return;
	free(sj->job);
	free(sj->tasks);
	free(sj->waits);
	free(sj);
}
