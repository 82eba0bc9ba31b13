/* Line diffs as git's xdiff makes them for merges: histogram, Myers, compaction. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "merge/git/linediff_int.h"
#include "util/xalloc.h"
#include "util/banned.h"

/*
 * The classifier: a hash table of distinct lines (open addressing).  It borrows the
 * bytes of the texts it cut, as xdiff's classifier does.
 */
struct line_class {
	const char *ptr;
	size_t len;
	uint32_t hash;
	unsigned cls;           /* 0 marks an empty slot; classes count from 1 */
};

struct linediff_classifier {
	struct line_class *slots;
	size_t cap, nr;
};

struct linediff_classifier *linediff_classifier_new(void)
{
	struct linediff_classifier *c = xcalloc(1, sizeof(*c));

	c->cap = 256;
	c->slots = xcalloc(c->cap, sizeof(*c->slots));
	return c;
}

void linediff_classifier_free(struct linediff_classifier *c)
{
	if (!c)
		return;
	free(c->slots);
	free(c);
}

static uint32_t line_hash(const char *p, size_t len)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)p[i]) * 16777619u;
	return h;
}

static void classes_grow(struct linediff_classifier *c)
{
	struct line_class *old = c->slots;
	size_t i, oldcap = c->cap;

	c->cap *= 2;
	c->slots = xcalloc(c->cap, sizeof(*c->slots));
	for (i = 0; i < oldcap; i++) {
		size_t j;

		if (!old[i].cls)
			continue;
		for (j = old[i].hash & (c->cap - 1); c->slots[j].cls; j = (j + 1) & (c->cap - 1))
			;
		c->slots[j] = old[i];
	}
	free(old);
}

static unsigned classify(struct linediff_classifier *c, const char *p, size_t len)
{
	uint32_t h = line_hash(p, len);
	size_t j;

	if ((c->nr + 1) * 2 > c->cap)
		classes_grow(c);
	for (j = h & (c->cap - 1); c->slots[j].cls; j = (j + 1) & (c->cap - 1)) {
		const struct line_class *s = &c->slots[j];

		if (s->hash == h && s->len == len && !memcmp(s->ptr, p, len))
			return s->cls;
	}
	c->slots[j] = (struct line_class){ p, len, h, (unsigned)++c->nr };
	return c->slots[j].cls;
}

void linediff_text_init(struct linediff_text *t, struct linediff_classifier *c,
			const char *buf, size_t size)
{
	size_t nr = 0, alloc = 0, pos = 0;

	t->buf = buf;
	t->size = size;
	t->start = NULL;
	while (pos < size) {
		const char *nl = memchr(buf + pos, '\n', size - pos);

		ALLOC_GROW(t->start, nr + 2, alloc);
		t->start[nr++] = pos;
		pos = nl ? (size_t)(nl - buf) + 1 : size;
	}
	ALLOC_GROW(t->start, nr + 1, alloc);
	t->start[nr] = size;
	t->nr = nr;
	t->cls = xmalloc((nr ? nr : 1) * sizeof(*t->cls));
	for (pos = 0; pos < nr; pos++)
		t->cls[pos] = classify(c, buf + t->start[pos], t->start[pos + 1] - t->start[pos]);
}

void linediff_text_release(struct linediff_text *t)
{
	free(t->start);
	free(t->cls);
	t->start = NULL;
	t->cls = NULL;
	t->nr = 0;
}

void linediff_script_release(struct linediff_script *s)
{
	free(s->v);
	s->v = NULL;
	s->nr = s->alloc = 0;
}

/*
 * A map from class to a small record, for one region of lines (open addressing on
 * the class id; a region's map never grows).
 */
struct class_rec {
	unsigned cls;           /* 0: empty */
	long first;             /* histogram: the region's first line of the class */
	unsigned long cnt;      /* histogram: occurrences; Myers: occurrences in side a */
	unsigned long cnt_b;    /* Myers: occurrences in side b */
};

struct class_map {
	struct class_rec *v;
	size_t mask;
};

static void class_map_init(struct class_map *m, size_t expected)
{
	size_t cap = 16;

	while (cap < expected * 2)
		cap *= 2;
	m->v = xcalloc(cap, sizeof(*m->v));
	m->mask = cap - 1;
}

static struct class_rec *class_map_get(struct class_map *m, unsigned cls, int add)
{
	size_t j;

	for (j = (cls * 2654435761u) & m->mask; m->v[j].cls; j = (j + 1) & m->mask)
		if (m->v[j].cls == cls)
			return &m->v[j];
	if (!add)
		return NULL;
	m->v[j].cls = cls;
	return &m->v[j];
}

/* One diff in progress: class arrays of the two ranges and their change marks. */
struct diff_env {
	const unsigned *a, *b;  /* classes of the ranges */
	long na, nb;
	char *chg_a, *chg_b;    /* indexable from -1 to n (sentinels stay 0) */
};

/* ---- Myers, as xdiff's classic algorithm (xdl_do_diff without an algorithm flag) ---- */

#define MAX_COST_MIN 256
#define HEUR_MIN_COST 256
#define SNAKE_CNT 20
#define K_HEUR 4
#define MAX_EQLIMIT 1024
#define SIMSCAN_WINDOW 100
#define KPDIS_RUN 4
#define LINE_MAX_VAL ((long)(~0UL >> 1))

static long bogosqrt(long n)
{
	long i;

	for (i = 1; n > 0; n >>= 2)
		i <<= 1;
	return i;
}

struct split {
	long i1, i2;
	int min_lo, min_hi;
};

/* The lines that survived the discarding: their classes and where they came from. */
struct kept {
	unsigned *ha;
	long *rindex;
	long nr;
	char *chg;              /* the range's change marks (rindex points into them) */
};

/* What stays the same through one Myers search: the two sides and the work arrays. */
struct myers_env {
	struct kept *k1, *k2;
	long *kvdf, *kvdb;
	long mxcost;
};

/*
 * The furthest point both searches reach in the box, or an interesting cut when the
 * cost gets high (xdiff's heuristics, kept as they are: they decide the output).
 */
static long myers_split(const struct myers_env *env, long off1, long lim1, long off2,
			long lim2, int need_min, struct split *spl)
{
	const unsigned *ha1 = env->k1->ha, *ha2 = env->k2->ha;
	long *kvdf = env->kvdf, *kvdb = env->kvdb;
	long dmin = off1 - lim2, dmax = lim1 - off2;
	long fmid = off1 - off2, bmid = lim1 - lim2;
	long odd = (fmid - bmid) & 1;
	long fmin = fmid, fmax = fmid, bmin = bmid, bmax = bmid;
	long ec, d, i1, i2, prev1, best, dd, v, k;

	kvdf[fmid] = off1;
	kvdb[bmid] = lim1;
	for (ec = 1;; ec++) {
		int got_snake = 0;

		if (fmin > dmin)
			kvdf[--fmin - 1] = -1;
		else
			++fmin;
		if (fmax < dmax)
			kvdf[++fmax + 1] = -1;
		else
			--fmax;
		for (d = fmax; d >= fmin; d -= 2) {
			i1 = kvdf[d - 1] >= kvdf[d + 1] ? kvdf[d - 1] + 1 : kvdf[d + 1];
			prev1 = i1;
			i2 = i1 - d;
			while (i1 < lim1 && i2 < lim2 && ha1[i1] == ha2[i2])
				i1++, i2++;
			if (i1 - prev1 > SNAKE_CNT)
				got_snake = 1;
			kvdf[d] = i1;
			if (odd && bmin <= d && d <= bmax && kvdb[d] <= i1) {
				*spl = (struct split){ i1, i2, 1, 1 };
				return ec;
			}
		}
		if (bmin > dmin)
			kvdb[--bmin - 1] = LINE_MAX_VAL;
		else
			++bmin;
		if (bmax < dmax)
			kvdb[++bmax + 1] = LINE_MAX_VAL;
		else
			--bmax;
		for (d = bmax; d >= bmin; d -= 2) {
			i1 = kvdb[d - 1] < kvdb[d + 1] ? kvdb[d - 1] : kvdb[d + 1] - 1;
			prev1 = i1;
			i2 = i1 - d;
			while (i1 > off1 && i2 > off2 && ha1[i1 - 1] == ha2[i2 - 1])
				i1--, i2--;
			if (prev1 - i1 > SNAKE_CNT)
				got_snake = 1;
			kvdb[d] = i1;
			if (!odd && fmin <= d && d <= fmax && i1 <= kvdf[d]) {
				*spl = (struct split){ i1, i2, 1, 1 };
				return ec;
			}
		}
		if (need_min)
			continue;
		if (got_snake && ec > HEUR_MIN_COST) {
			for (best = 0, d = fmax; d >= fmin; d -= 2) {
				dd = d > fmid ? d - fmid : fmid - d;
				i1 = kvdf[d];
				i2 = i1 - d;
				v = (i1 - off1) + (i2 - off2) - dd;
				if (v > K_HEUR * ec && v > best && off1 + SNAKE_CNT <= i1 &&
				    i1 < lim1 && off2 + SNAKE_CNT <= i2 && i2 < lim2) {
					for (k = 1; ha1[i1 - k] == ha2[i2 - k]; k++)
						if (k == SNAKE_CNT) {
							best = v;
							spl->i1 = i1;
							spl->i2 = i2;
							break;
						}
				}
			}
			if (best > 0) {
				spl->min_lo = 1;
				spl->min_hi = 0;
				return ec;
			}
			for (best = 0, d = bmax; d >= bmin; d -= 2) {
				dd = d > bmid ? d - bmid : bmid - d;
				i1 = kvdb[d];
				i2 = i1 - d;
				v = (lim1 - i1) + (lim2 - i2) - dd;
				if (v > K_HEUR * ec && v > best && off1 < i1 &&
				    i1 <= lim1 - SNAKE_CNT && off2 < i2 && i2 <= lim2 - SNAKE_CNT) {
					for (k = 0; ha1[i1 + k] == ha2[i2 + k]; k++)
						if (k == SNAKE_CNT - 1) {
							best = v;
							spl->i1 = i1;
							spl->i2 = i2;
							break;
						}
				}
			}
			if (best > 0) {
				spl->min_lo = 0;
				spl->min_hi = 1;
				return ec;
			}
		}
		if (ec >= env->mxcost) {
			long fbest = -1, fbest1 = -1, bbest = LINE_MAX_VAL, bbest1 = LINE_MAX_VAL;

			for (d = fmax; d >= fmin; d -= 2) {
				i1 = kvdf[d] < lim1 ? kvdf[d] : lim1;
				i2 = i1 - d;
				if (lim2 < i2)
					i1 = lim2 + d, i2 = lim2;
				if (fbest < i1 + i2) {
					fbest = i1 + i2;
					fbest1 = i1;
				}
			}
			for (d = bmax; d >= bmin; d -= 2) {
				i1 = kvdb[d] > off1 ? kvdb[d] : off1;
				i2 = i1 - d;
				if (i2 < off2)
					i1 = off2 + d, i2 = off2;
				if (i1 + i2 < bbest) {
					bbest = i1 + i2;
					bbest1 = i1;
				}
			}
			if ((lim1 + lim2) - bbest < fbest - (off1 + off2))
				*spl = (struct split){ fbest1, fbest - fbest1, 1, 0 };
			else
				*spl = (struct split){ bbest1, bbest - bbest1, 0, 1 };
			return ec;
		}
	}
}

/* Divide and conquer over the box; the boundaries mark the changed lines. */
static void myers_compare(const struct myers_env *env, long off1, long lim1, long off2,
			  long lim2, int need_min)
{
	struct kept *k1 = env->k1, *k2 = env->k2;
	const unsigned *ha1 = k1->ha, *ha2 = k2->ha;
	struct split spl = { 0, 0, 0, 0 };

	while (off1 < lim1 && off2 < lim2 && ha1[off1] == ha2[off2])
		off1++, off2++;
	while (off1 < lim1 && off2 < lim2 && ha1[lim1 - 1] == ha2[lim2 - 1])
		lim1--, lim2--;
	if (off1 == lim1) {
		for (; off2 < lim2; off2++)
			k2->chg[k2->rindex[off2]] = 1;
		return;
	}
	if (off2 == lim2) {
		for (; off1 < lim1; off1++)
			k1->chg[k1->rindex[off1]] = 1;
		return;
	}
	myers_split(env, off1, lim1, off2, lim2, need_min, &spl);
	myers_compare(env, off1, spl.i1, off2, spl.i2, spl.min_lo);
	myers_compare(env, spl.i1, lim1, spl.i2, lim2, spl.min_hi);
}

/*
 * Whether a line matching many lines on the other side sits in a run of lines
 * without a match, and can be left out of the search (xdiff's xdl_clean_mmatch()).
 */
static int multimatch_discardable(const char *dis, long i, long s, long e)
{
	long r, rdis0, rpdis0, rdis1, rpdis1;

	if (i - s > SIMSCAN_WINDOW)
		s = i - SIMSCAN_WINDOW;
	if (e - i > SIMSCAN_WINDOW)
		e = i + SIMSCAN_WINDOW;
	for (r = 1, rdis0 = 0, rpdis0 = 1; (i - r) >= s; r++) {
		if (!dis[i - r])
			rdis0++;
		else if (dis[i - r] == 2)
			rpdis0++;
		else
			break;
	}
	if (rdis0 == 0)
		return 0;
	for (r = 1, rdis1 = 0, rpdis1 = 1; (i + r) <= e; r++) {
		if (!dis[i + r])
			rdis1++;
		else if (dis[i + r] == 2)
			rpdis1++;
		else
			break;
	}
	if (rdis1 == 0)
		return 0;
	rdis1 += rdis0;
	rpdis1 += rpdis0;
	return rpdis1 * KPDIS_RUN < (rpdis1 + rdis1);
}

/* One side of a Myers diff: its classes and change marks. */
struct myers_side {
	const unsigned *ha;
	long n;
	char *chg;
};

/*
 * Marks lines [dstart, dend] of a side without a match as changed and keeps the rest
 * for the search; `other_is_b` says which count of `counts` is the other side's.
 */
static void discard(struct kept *out, const struct myers_side *side, long dstart, long dend,
		    struct class_map *counts, int other_is_b)
{
	const unsigned *ha = side->ha;
	long n = side->n;
	char *chg = side->chg;
	char *dis = xcalloc((size_t)n + 1, 1);
	long i, mlim = bogosqrt(n);

	if (mlim > MAX_EQLIMIT)
		mlim = MAX_EQLIMIT;
	for (i = dstart; i <= dend; i++) {
		const struct class_rec *r = class_map_get(counts, ha[i], 0);
		unsigned long nm = r ? (other_is_b ? r->cnt_b : r->cnt) : 0;

		dis[i] = nm == 0 ? 0 : nm >= (unsigned long)mlim ? 2 : 1;
	}
	out->ha = xmalloc(((size_t)n + 1) * sizeof(*out->ha));
	out->rindex = xmalloc(((size_t)n + 1) * sizeof(*out->rindex));
	out->nr = 0;
	out->chg = chg;
	for (i = dstart; i <= dend; i++) {
		if (dis[i] == 1 || (dis[i] == 2 && !multimatch_discardable(dis, i, dstart, dend))) {
			out->rindex[out->nr] = i;
			out->ha[out->nr++] = ha[i];
		} else {
			chg[i] = 1;
		}
	}
	free(dis);
}

/* xdiff's classic diff of two ranges taken as whole files (the histogram's fallback). */
static void myers_diff(const unsigned *a, long na, char *chg_a, const unsigned *b, long nb,
		       char *chg_b)
{
	struct class_map counts;
	struct kept k1, k2;
	struct myers_env env;
	long i, lim, dstart, dend1, dend2, ndiags;
	long *kvd;

	class_map_init(&counts, (size_t)(na + nb));
	for (i = 0; i < na; i++)
		class_map_get(&counts, a[i], 1)->cnt++;
	for (i = 0; i < nb; i++)
		class_map_get(&counts, b[i], 1)->cnt_b++;
	lim = na < nb ? na : nb;
	for (i = 0; i < lim && a[i] == b[i]; i++)
		;
	dstart = i;
	for (lim -= i, i = 0; i < lim && a[na - 1 - i] == b[nb - 1 - i]; i++)
		;
	dend1 = na - i - 1;
	dend2 = nb - i - 1;
	discard(&k1, &(struct myers_side){ .ha = a, .n = na, .chg = chg_a }, dstart, dend1,
		&counts, 1);
	discard(&k2, &(struct myers_side){ .ha = b, .n = nb, .chg = chg_b }, dstart, dend2,
		&counts, 0);
	ndiags = k1.nr + k2.nr + 3;
	kvd = xmalloc((size_t)(2 * ndiags + 2) * sizeof(*kvd));
	env.k1 = &k1;
	env.k2 = &k2;
	env.kvdf = kvd + k2.nr + 1;
	env.kvdb = kvd + ndiags + k2.nr + 1;
	env.mxcost = bogosqrt(ndiags);
	if (env.mxcost < MAX_COST_MIN)
		env.mxcost = MAX_COST_MIN;
	myers_compare(&env, 0, k1.nr, 0, k2.nr, 0);
	free(kvd);
	free(k1.ha);
	free(k1.rindex);
	free(k2.ha);
	free(k2.rindex);
	free(counts.v);
}

/* ---- Histogram, as xdiff's xhistogram.c ---- */

#define MAX_CHAIN_LENGTH 64

struct hist_index {
	struct class_map recs;          /* class -> first line of the region, count */
	long *next;                     /* per line of the region: next equal line, or -1 */
	struct class_rec **line_rec;    /* per line of the region: its class's record */
	long lo;                        /* the region's first line */
	unsigned long cnt;
	int has_common;
};

struct lcs {
	long begin1, end1, begin2, end2;
	int found;
};

/* The region find_lcs() searches: lines [lo1, end1] of a, [lo2, end2] of b. */
struct hist_region {
	long lo1, end1, lo2, end2;
};

#define REC_CNT(ix, line) ((ix)->line_rec[(line) - (ix)->lo]->cnt)

/* One line of b: the longest match through it of the rarest lines (xdiff's try_lcs()). */
static long try_lcs(struct hist_index *ix, struct lcs *lcs, const struct diff_env *e,
		    const struct hist_region *rg, long b_ptr)
{
	long lo1 = rg->lo1, end1 = rg->end1, lo2 = rg->lo2, end2 = rg->end2;
	long b_next = b_ptr + 1, as, ae, bs, be, np;
	struct class_rec *rec = class_map_get(&ix->recs, e->b[b_ptr], 0);
	unsigned long rc;

	if (!rec)
		return b_next;
	if (rec->cnt > ix->cnt) {
		ix->has_common = 1;
		return b_next;
	}
	as = rec->first;
	ix->has_common = 1;
	for (;;) {
		np = ix->next[as - ix->lo];
		bs = b_ptr;
		ae = as;
		be = bs;
		rc = rec->cnt;
		while (lo1 < as && lo2 < bs && e->a[as - 1] == e->b[bs - 1]) {
			as--;
			bs--;
			if (1 < rc && REC_CNT(ix, as) < rc)
				rc = REC_CNT(ix, as);
		}
		while (ae < end1 && be < end2 && e->a[ae + 1] == e->b[be + 1]) {
			ae++;
			be++;
			if (1 < rc && REC_CNT(ix, ae) < rc)
				rc = REC_CNT(ix, ae);
		}
		if (b_next <= be)
			b_next = be + 1;
		if ((!lcs->found && (ae > as || rc < ix->cnt)) ||
		    (lcs->found && (lcs->end1 - lcs->begin1 < ae - as || rc < ix->cnt))) {
			*lcs = (struct lcs){ as, ae, bs, be, 1 };
			ix->cnt = rc;
		}
		if (np < 0)
			break;
		while (np <= ae) {
			np = ix->next[np - ix->lo];
			if (np < 0)
				return b_next;
		}
		as = np;
	}
	return b_next;
}

/* 1: fall back to Myers; 0: *lcs is the region's match (or none was found). */
static int find_lcs(struct lcs *lcs, const struct diff_env *e, long lo1, long n1, long lo2,
		    long n2)
{
	struct hist_index ix;
	long p, end1 = lo1 + n1 - 1, end2 = lo2 + n2 - 1;
	const struct hist_region rg = { .lo1 = lo1, .end1 = end1, .lo2 = lo2, .end2 = end2 };
	int fallback;

	class_map_init(&ix.recs, (size_t)n1);
	ix.next = xmalloc((size_t)n1 * sizeof(*ix.next));
	ix.line_rec = xmalloc((size_t)n1 * sizeof(*ix.line_rec));
	ix.lo = lo1;
	ix.has_common = 0;
	for (p = end1; p >= lo1; p--) {
		struct class_rec *r = class_map_get(&ix.recs, e->a[p], 0);

		if (r) {
			ix.next[p - lo1] = r->first;
			r->first = p;
			r->cnt++;
		} else {
			r = class_map_get(&ix.recs, e->a[p], 1);
			r->first = p;
			r->cnt = 1;
			ix.next[p - lo1] = -1;
		}
		ix.line_rec[p - lo1] = r;
	}
	ix.cnt = MAX_CHAIN_LENGTH + 1;
	lcs->found = 0;
	for (p = lo2; p <= end2;)
		p = try_lcs(&ix, lcs, e, &rg, p);
	fallback = ix.has_common && MAX_CHAIN_LENGTH < ix.cnt;
	free(ix.recs.v);
	free(ix.next);
	free(ix.line_rec);
	return fallback;
}

static void histogram(const struct diff_env *e, long lo1, long n1, long lo2, long n2)
{
	for (;;) {
		struct lcs lcs;

		if (n1 <= 0 && n2 <= 0)
			return;
		if (!n1) {
			memset(e->chg_b + lo2, 1, (size_t)n2);
			return;
		}
		if (!n2) {
			memset(e->chg_a + lo1, 1, (size_t)n1);
			return;
		}
		if (find_lcs(&lcs, e, lo1, n1, lo2, n2)) {
			myers_diff(e->a + lo1, n1, e->chg_a + lo1, e->b + lo2, n2, e->chg_b + lo2);
			return;
		}
		if (!lcs.found) {
			memset(e->chg_a + lo1, 1, (size_t)n1);
			memset(e->chg_b + lo2, 1, (size_t)n2);
			return;
		}
		histogram(e, lo1, lcs.begin1 - lo1, lo2, lcs.begin2 - lo2);
		n1 = lo1 + n1 - 1 - lcs.end1;
		lo1 = lcs.end1 + 1;
		n2 = lo2 + n2 - 1 - lcs.end2;
		lo2 = lcs.end2 + 1;
	}
}

/* ---- Compaction, as xdl_change_compact() without the indent heuristic ---- */

struct group {
	long start, end;
};

static void group_init(const char *chg, struct group *g)
{
	g->start = g->end = 0;
	while (chg[g->end])
		g->end++;
}

static int group_next(const char *chg, long n, struct group *g)
{
	if (g->end == n)
		return -1;
	g->start = g->end + 1;
	for (g->end = g->start; chg[g->end]; g->end++)
		;
	return 0;
}

static int group_previous(const char *chg, struct group *g)
{
	if (g->start == 0)
		return -1;
	g->end = g->start - 1;
	for (g->start = g->end; chg[g->start - 1]; g->start--)
		;
	return 0;
}

static int slide_down(char *chg, const unsigned *cls, long n, struct group *g)
{
	if (g->end < n && cls[g->start] == cls[g->end]) {
		chg[g->start++] = 0;
		chg[g->end++] = 1;
		while (chg[g->end])
			g->end++;
		return 0;
	}
	return -1;
}

static int slide_up(char *chg, const unsigned *cls, struct group *g)
{
	if (g->start > 0 && cls[g->start - 1] == cls[g->end - 1]) {
		chg[--g->start] = 1;
		chg[--g->end] = 0;
		while (chg[g->start - 1])
			g->start--;
		return 0;
	}
	return -1;
}

/* Slides each group of changes of x as far as it goes, aligned with o's where it can. */
static int compact(char *x, const unsigned *xcls, long xn, const char *o, long on)
{
	struct group g, go;
	long earliest_end, end_matching_other, groupsize;

	group_init(x, &g);
	group_init(o, &go);
	for (;;) {
		if (g.end != g.start) {
			do {
				groupsize = g.end - g.start;
				end_matching_other = -1;
				while (!slide_up(x, xcls, &g))
					if (group_previous(o, &go))
						return -1;
				earliest_end = g.end;
				if (go.end > go.start)
					end_matching_other = g.end;
				while (!slide_down(x, xcls, xn, &g)) {
					if (group_next(o, on, &go))
						return -1;
					if (go.end > go.start)
						end_matching_other = g.end;
				}
			} while (groupsize != g.end - g.start);
			if (g.end != earliest_end && end_matching_other != -1) {
				while (go.end == go.start) {
					if (slide_up(x, xcls, &g) || group_previous(o, &go))
						return -1;
				}
			}
		}
		if (group_next(x, xn, &g))
			break;
		if (group_next(o, on, &go))
			return -1;
	}
	return group_next(o, on, &go) ? 0 : -1;
}

/*
 * The groups of changed lines, in order (xdl_build_script(), read forwards): -1 if
 * the marks do not pair the unchanged lines of both sides.
 */
static int build_script(struct linediff_script *out, const char *ca, long na, const char *cb,
			long nb)
{
	long i1 = 0, i2 = 0;

	out->nr = 0;
	while (i1 < na || i2 < nb) {
		long s1 = i1, s2 = i2;

		if (i1 < na && i2 < nb && !ca[i1] && !cb[i2]) {
			i1++;
			i2++;
			continue;
		}
		while (i1 < na && ca[i1])
			i1++;
		while (i2 < nb && cb[i2])
			i2++;
		if (s1 == i1 && s2 == i2)
			return -1;
		ALLOC_GROW(out->v, out->nr + 1, out->alloc);
		out->v[out->nr++] = (struct linediff_change){ s1, s2, i1 - s1, i2 - s2 };
	}
	return 0;
}

int linediff_diff(struct linediff_script *out, const struct linediff_range *a,
		  const struct linediff_range *b, enum linediff_algorithm alg)
{
	char *ca = xcalloc(a->nr + 2, 1), *cb = xcalloc(b->nr + 2, 1);
	struct diff_env e = {
		.a = a->text->cls + a->off, .b = b->text->cls + b->off,
		.na = (long)a->nr, .nb = (long)b->nr, .chg_a = ca + 1, .chg_b = cb + 1,
	};
	int err = 0;

	if (alg == LINEDIFF_HISTOGRAM)
		histogram(&e, 0, e.na, 0, e.nb);
	else
		myers_diff(e.a, e.na, e.chg_a, e.b, e.nb, e.chg_b);
	if (compact(e.chg_a, e.a, e.na, e.chg_b, e.nb) < 0 ||
	    compact(e.chg_b, e.b, e.nb, e.chg_a, e.na) < 0)
		err = -1;
	out->nr = 0;
	if (!err && build_script(out, e.chg_a, e.na, e.chg_b, e.nb) < 0) {
		out->nr = 0;
		err = -1;
	}
	free(ca);
	free(cb);
	return err;
}
