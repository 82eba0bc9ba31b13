/* The bisection engine: git's choice of midpoint and of skips, and multisection. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merge/search/bisect_int.h"
#include "merge/git/git_int.h"
#include "util/error.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define NONE ((size_t)-1)
#define PRN_MODULO 32768

void bisect_graph_release(struct bisect_graph *g)
{
	size_t i;

	for (i = 0; i < g->nr; i++) {
		free(g->nodes[i].subject);
		free(g->nodes[i].parents);
	}
	free(g->nodes);
	free(g->good_ids);
	memset(g, 0, sizeof(*g));
}

size_t bisect_graph_add(struct bisect_graph *g, const char *id, const char *subject,
			long long time)
{
	struct bisect_node *n;

	ALLOC_GROW(g->nodes, g->nr + 1, g->alloc);
	n = &g->nodes[g->nr];
	memset(n, 0, sizeof(*n));
	snprintf(n->id.hex, sizeof(n->id), "%s", id);
	n->subject = xstrdup(subject ? subject : "");
	n->time = time;
	return g->nr++;
}

void bisect_graph_add_parent(struct bisect_graph *g, size_t node, size_t parent)
{
	struct bisect_node *n = &g->nodes[node];

	n->parents = xrealloc(n->parents, (n->parents_nr + 1) * sizeof(*n->parents));
	n->parents[n->parents_nr++] = parent;
}

void bisect_result_release(struct bisect_result *r)
{
	free(r->range);
	free(r->skipped);
	strvec_clear(&r->log);
	memset(r, 0, sizeof(*r));
	strvec_clear(&r->log);
}

/* One round's working set: the candidates and their weights. */
struct bisect_round {
	const struct bisect_graph *g;
	char *cand;      /* node is a candidate */
	char *seen;      /* scratch for walks */
	int *weight;     /* git's weights: >= 0 known, -1 one parent, -2 merge */
	size_t *list;    /* candidates in graph order */
	size_t nr;
};

static void bisect_round_init(struct bisect_round *s, const struct bisect_graph *g)
{
	s->g = g;
	s->cand = xcalloc(g->nr + 1, 1);
	s->seen = xcalloc(g->nr + 1, 1);
	s->weight = xcalloc(g->nr + 1, sizeof(int));
	s->list = xcalloc(g->nr + 1, sizeof(size_t));
	s->nr = 0;
}

static void bisect_round_release(struct bisect_round *s)
{
	free(s->cand);
	free(s->seen);
	free(s->weight);
	free(s->list);
}

/* Sets mark[] on `from` and all its ancestors in the graph to `val`. */
static void mark_ancestors(const struct bisect_graph *g, char *mark, size_t from, char val,
			     size_t *stack)
{
	size_t sp = 0, i;

	if (mark[from] == val)
		return;
	mark[from] = val;
	stack[sp++] = from;
	while (sp) {
		const struct bisect_node *n = &g->nodes[stack[--sp]];

		for (i = 0; i < n->parents_nr; i++)
			if (mark[n->parents[i]] != val) {
				mark[n->parents[i]] = val;
				stack[sp++] = n->parents[i];
			}
	}
}

/* Candidates: ancestors of the bad end that no good commit reaches. */
static void candidates(struct bisect_round *s, const enum bisect_verdict *v, size_t bad)
{
	const struct bisect_graph *g = s->g;
	size_t *stack = xmalloc((g->nr + 1) * sizeof(*stack));
	size_t i;

	memset(s->cand, 0, g->nr);
	memset(s->seen, 0, g->nr);
	mark_ancestors(g, s->cand, bad, 1, stack);
	/* a good commit off the bad one's history still rules out its ancestors */
	for (i = 0; i < g->nr; i++)
		if (v[i] == BISECT_GOOD)
			mark_ancestors(g, s->seen, i, 1, stack);
	s->nr = 0;
	for (i = 0; i < g->nr; i++) {
		s->cand[i] &= !s->seen[i];
		s->seen[i] = 0;
		if (s->cand[i])
			s->list[s->nr++] = i;
	}
	free(stack);
}

/* Number of candidates reachable from p, p included (git's count_distance). */
static int count_distance(struct bisect_round *s, size_t p)
{
	const struct bisect_graph *g = s->g;
	size_t *stack = xmalloc((g->nr + 1) * sizeof(*stack));
	size_t sp = 0, i, j;
	int nr = 0;

	stack[sp++] = p;
	s->seen[p] = 1;
	while (sp) {
		const struct bisect_node *n = &g->nodes[stack[--sp]];

		nr++;
		for (j = 0; j < n->parents_nr; j++) {
			size_t q = n->parents[j];

			if (s->cand[q] && !s->seen[q]) {
				s->seen[q] = 1;
				stack[sp++] = q;
			}
		}
	}
	for (i = 0; i < s->nr; i++)
		s->seen[s->list[i]] = 0;
	free(stack);
	return nr;
}

static int approx_halfway(int weight, int nr)
{
	int diff = 2 * weight - nr;

	if (diff >= -1 && diff <= 1)
		return 1;
	return abs(diff) < nr / 1024;
}

static int interesting_parents(const struct bisect_round *s, size_t p)
{
	const struct bisect_node *n = &s->g->nodes[p];
	size_t i;
	int count = 0;

	for (i = 0; i < n->parents_nr; i++)
		count += s->cand[n->parents[i]];
	return count;
}

/*
 * Fills the weights as git's do_find_bisection does.  Unless `all`, returns the
 * first candidate found at about half way (git's shortcut), else NONE.
 */
static size_t weigh(struct bisect_round *s, int all)
{
	int nr = (int)s->nr, counted = 0, progress = 1;
	size_t i, j;

	for (i = 0; i < s->nr; i++) {
		size_t p = s->list[i];
		int k = interesting_parents(s, p);

		s->weight[p] = k == 0 ? 1 : k == 1 ? -1 : -2;
		counted += k == 0;
	}
	for (i = 0; i < s->nr; i++) {
		size_t p = s->list[i];

		if (s->weight[p] != -2)
			continue;
		s->weight[p] = count_distance(s, p);
		if (!all && approx_halfway(s->weight[p], nr))
			return p;
		counted++;
	}
	while (counted < nr && progress) {
		progress = 0;
		for (i = 0; i < s->nr; i++) {
			size_t p = s->list[i];
			const struct bisect_node *n = &s->g->nodes[p];
			size_t q = NONE;

			if (s->weight[p] >= 0)
				continue;
			for (j = 0; j < n->parents_nr; j++)
				if (s->cand[n->parents[j]] && s->weight[n->parents[j]] >= 0) {
					q = n->parents[j];
					break;
				}
			if (q == NONE)
				continue;
			s->weight[p] = s->weight[q] + 1;
			counted++;
			progress = 1;
			if (!all && approx_halfway(s->weight[p], nr))
				return p;
		}
	}
	return NONE;
}

static int distance(const struct bisect_round *s, size_t p)
{
	int w = s->weight[p], nr = (int)s->nr;

	return nr - w < w ? nr - w : w;
}

static size_t best(const struct bisect_round *s)
{
	size_t i, best = s->list[0];
	int best_distance = -1;

	for (i = 0; i < s->nr; i++) {
		int d = distance(s, s->list[i]);

		if (d > best_distance) {
			best = s->list[i];
			best_distance = d;
		}
	}
	return best;
}

static const struct bisect_round *sort_state;

static int cmp_distance(const void *a_, const void *b_)
{
	size_t a = *(const size_t *)a_, b = *(const size_t *)b_;
	int da = distance(sort_state, a), db = distance(sort_state, b);

	if (da != db)
		return db - da;
	return strcmp(sort_state->g->nodes[a].id.hex, sort_state->g->nodes[b].id.hex);
}

/* git's pseudo-random number from `count` ("man 3 rand", seeded by the count). */
static unsigned prn_next(unsigned count)
{
	count = count * 1103515245u + 12345u;
	return (count / 65536) % PRN_MODULO;
}

/* Integer square root by Newton's method in float, as git computes it. */
static int sqrti(int val)
{
	float d, x = (float)val;

	if (!val)
		return 0;
	do {
		float y = (x + (float)val / x) / 2;

		d = y > x ? y - x : x - y;
		x = y;
	} while (d >= 0.5f);
	return (int)x;
}

/*
 * With skipped commits anywhere, git sorts the candidates by distance and, if the
 * best is skipped, jumps a pseudo-random way down the untested ones, further for
 * larger sets.  `left` (may be NULL) gets the skipped candidates.
 */
static size_t skip_away(struct bisect_round *s, const enum bisect_verdict *v, size_t bad,
			  size_t *left, size_t *left_nr)
{
	size_t *sorted = xmalloc((s->nr + 1) * sizeof(*sorted));
	size_t *filtered = xmalloc((s->nr + 1) * sizeof(*filtered));
	size_t i, count = 0, skipped = 0, pick;
	int prn, index;

	memcpy(sorted, s->list, s->nr * sizeof(*sorted));
	sort_state = s;
	qsort(sorted, s->nr, sizeof(*sorted), cmp_distance);
	if (v[sorted[0]] != BISECT_SKIP) {
		pick = sorted[0];
		goto done;
	}
	for (i = 0; i < s->nr; i++) {
		if (v[sorted[i]] == BISECT_SKIP) {
			if (left)
				left[skipped] = sorted[i];
			skipped++;
		} else {
			filtered[count++] = sorted[i];
		}
	}
	prn = (int)prn_next((unsigned)count);
	index = ((int)count * prn / PRN_MODULO) * sqrti(prn) / sqrti(PRN_MODULO);
	pick = filtered[index];
	if (pick == bad)
		pick = index > 0 ? filtered[index - 1] : filtered[0];
	if (pick == bad && skipped)
		pick = NONE;
done:
	if (left_nr)
		*left_nr = pick == NONE ? skipped : 0;
	free(sorted);
	free(filtered);
	return pick;
}

static size_t pick_next_probe(const struct bisect_graph *g, const enum bisect_verdict *v,
			      size_t bad, size_t *left, size_t *left_nr)
{
	struct bisect_round s;
	size_t i, pick;
	int any_skip = 0;

	if (left_nr)
		*left_nr = 0;
	for (i = 0; i < g->nr; i++)
		any_skip |= v[i] == BISECT_SKIP;
	bisect_round_init(&s, g);
	candidates(&s, v, bad);
	pick = weigh(&s, any_skip);
	if (pick == NONE)
		pick = any_skip ? skip_away(&s, v, bad, left, left_nr) : best(&s);
	bisect_round_release(&s);
	return pick;
}

size_t bisect_next(const struct bisect_graph *g, const enum bisect_verdict *v, size_t bad)
{
	return pick_next_probe(g, v, bad, NULL, NULL);
}

/*
 * Multisection: up to k untested candidates whose weights are nearest to
 * j * nr / (k + 1), so that whatever the answers, about nr / (k + 1) remain.
 * Returns how many were picked; `left` gets the skipped candidates when none could be.
 */
static size_t next_k(const struct bisect_graph *g, const enum bisect_verdict *v, size_t bad,
		       unsigned k, size_t *picks, size_t *left, size_t *left_nr)
{
	struct bisect_round s;
	size_t i, n = 0, skipped = 0;
	unsigned j;

	bisect_round_init(&s, g);
	candidates(&s, v, bad);
	weigh(&s, 1);
	for (j = 1; j <= k; j++) {
		long target = ((long)j * (long)s.nr + (k + 1) / 2) / (k + 1);
		size_t best = NONE;
		long best_diff = 0;

		for (i = 0; i < s.nr; i++) {
			size_t p = s.list[i], m;
			long diff = labs(s.weight[p] - target);

			if (p == bad || v[p] != BISECT_UNTESTED)
				continue;
			for (m = 0; m < n && picks[m] != p; m++)
				;
			if (m < n)
				continue;
			if (best == NONE || diff < best_diff) {
				best = p;
				best_diff = diff;
			}
		}
		if (best != NONE)
			picks[n++] = best;
	}
	for (i = 0; i < s.nr && !n; i++)
		if (v[s.list[i]] == BISECT_SKIP)
			left[skipped++] = s.list[i];
	*left_nr = skipped;
	bisect_round_release(&s);
	return n;
}

static void log_line(struct bisect_result *r, const struct bisect_graph *g, size_t p,
		       enum bisect_verdict v)
{
	static const char *const word[] = { "", "good", "bad", "skip" };

	strvec_pushf(&r->log, "# %s: [%s] %s", word[v], g->nodes[p].id.hex, g->nodes[p].subject);
	strvec_pushf(&r->log, "git bisect %s %s", word[v], g->nodes[p].id.hex);
}

static void log_start(struct bisect_result *r, const struct bisect_graph *g)
{
	struct strbuf sb = STRBUF_INIT;
	const char *goods = g->good_ids ? g->good_ids : "";

	strvec_pushf(&r->log, "# bad: [%s] %s", g->nodes[g->bad].id.hex, g->nodes[g->bad].subject);
	strbuf_addstr(&sb, "git bisect start");
	if (g->first_parent)
		strbuf_addstr(&sb, " '--first-parent'");
	strbuf_addf(&sb, " '%s'", g->nodes[g->bad].id.hex);
	while (*goods) {
		size_t len = strcspn(goods, " ");

		if (len)
			strbuf_addf(&sb, " '%.*s'", (int)len, goods);
		goods += len + (goods[len] == ' ');
	}
	strvec_push(&r->log, sb.buf);
	strbuf_release(&sb);
}

static void finish(struct bisect_result *r, const struct bisect_graph *g, size_t bad,
		     const size_t *left, size_t left_nr)
{
	size_t i;

	if (!left_nr) {
		r->outcome = BISECT_FOUND;
		r->first_bad = bad;
		strvec_pushf(&r->log, "# first bad commit: [%s] %s", g->nodes[bad].id.hex,
			     g->nodes[bad].subject);
		return;
	}
	r->outcome = BISECT_ONLY_SKIPPED;
	r->range = xmalloc((left_nr + 1) * sizeof(*r->range));
	memcpy(r->range, left, left_nr * sizeof(*left));
	r->range[left_nr] = bad;
	r->range_nr = left_nr + 1;
	strvec_push(&r->log, "# only skipped commits left to test");
	for (i = 0; i < r->range_nr; i++)
		strvec_pushf(&r->log, "# possible first bad commit: [%s] %s",
			     g->nodes[r->range[i]].id.hex, g->nodes[r->range[i]].subject);
}

/* Records the round's verdicts; returns the new bad end. */
static size_t apply(struct bisect_result *r, const struct bisect_graph *g,
		      enum bisect_verdict *v, const size_t *picks, const enum bisect_verdict *got,
		      size_t n, size_t bad)
{
	size_t i, best = NONE, best_reach = 0;
	char *seen = NULL;
	size_t *stack = NULL;

	for (i = 0; i < n; i++) {
		v[picks[i]] = got[i];
		log_line(r, g, picks[i], got[i]);
		if (got[i] == BISECT_SKIP) {
			r->skipped = xrealloc(r->skipped, (r->skipped_nr + 1) * sizeof(size_t));
			r->skipped[r->skipped_nr++] = picks[i];
		}
	}
	for (i = 0; i < n; i++) {
		size_t reach = 0, j;

		if (got[i] != BISECT_BAD)
			continue;
		if (n == 1)
			return picks[i];
		/* of several bad ones, keep the one that reaches the fewest commits */
		seen = seen ? memset(seen, 0, g->nr) : xcalloc(g->nr + 1, 1);
		stack = stack ? stack : xmalloc((g->nr + 1) * sizeof(*stack));
		mark_ancestors(g, seen, picks[i], 1, stack);
		for (j = 0; j < g->nr; j++)
			reach += seen[j];
		if (best == NONE || reach < best_reach) {
			best = picks[i];
			best_reach = reach;
		}
	}
	free(seen);
	free(stack);
	return best == NONE ? bad : best;
}

int bisect_run(struct bisect_result *out, const struct bisect_graph *g, unsigned jobs,
	       bisect_test_fn test, void *data)
{
	enum bisect_verdict *v = xcalloc(g->nr + 1, sizeof(*v));
	enum bisect_verdict *got = xcalloc(jobs + 1, sizeof(*got));
	size_t *picks = xcalloc(jobs + 1, sizeof(*picks));
	size_t *left = xcalloc(g->nr + 1, sizeof(*left));
	size_t bad = g->bad, n, left_nr;
	int err = 0;

	if (!g->nr || bad >= g->nr) {
		err = nb_error_set(NB_EINVALID, "bisect: no candidate commits");
		goto done;
	}
	if (jobs < 1)
		jobs = 1;
	v[bad] = BISECT_BAD;
	log_start(out, g);
	for (;;) {
		if (jobs == 1) {
			picks[0] = pick_next_probe(g, v, bad, left, &left_nr);
			n = picks[0] == NONE || picks[0] == bad ? 0 : 1;
		} else {
			n = next_k(g, v, bad, jobs, picks, left, &left_nr);
		}
		if (!n)
			break;
		if ((err = test(data, g, picks, n, got)) < 0)
			goto done;
		out->steps += n;
		out->rounds++;
		bad = apply(out, g, v, picks, got, n, bad);
	}
	finish(out, g, bad, left, left_nr);
done:
	free(v);
	free(got);
	free(picks);
	free(left);
	return err;
}

/* An open-addressing map from commit id to node index, for the loader. */
struct oidmap {
	git_oid *keys;
	size_t *vals;
	char *used;
	size_t cap;
};

static size_t oid_slot(const struct oidmap *m, const git_oid *id)
{
	size_t h, i;

	memcpy(&h, id->id, sizeof(h));
	for (i = h & (m->cap - 1); m->used[i] && git_oid_cmp(&m->keys[i], id);
	     i = (i + 1) & (m->cap - 1))
		;
	return i;
}

static void oidmap_init(struct oidmap *m, size_t n)
{
	for (m->cap = 16; m->cap < 2 * n + 2; m->cap *= 2)
		;
	m->keys = xcalloc(m->cap, sizeof(*m->keys));
	m->vals = xcalloc(m->cap, sizeof(*m->vals));
	m->used = xcalloc(m->cap, 1);
}

static void oidmap_release(struct oidmap *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
}

static int revs_between(git_oid **out, size_t *out_nr, git_repository *repo, const git_oid *bad,
			const git_oid *goods, size_t goods_nr, int first_parent)
{
	git_revwalk *walk = NULL;
	git_oid id, *ids = NULL;
	size_t nr = 0, alloc = 0, i;
	int err;

	if ((err = git_revwalk_new(&walk, repo)) < 0)
		goto done;
	git_revwalk_sorting(walk, GIT_SORT_TIME);
	if (first_parent)
		git_revwalk_simplify_first_parent(walk);
	if ((err = git_revwalk_push(walk, bad)) < 0)
		goto done;
	for (i = 0; i < goods_nr; i++)
		if ((err = git_revwalk_hide(walk, &goods[i])) < 0)
			goto done;
	while ((err = git_revwalk_next(&id, walk)) == 0) {
		ALLOC_GROW(ids, nr + 1, alloc);
		ids[nr++] = id;
	}
	if (err == GIT_ITEROVER)
		err = 0;
done:
	if (err < 0) {
		const git_error *e = git_error_last();

		err = nb_error_set(err == GIT_ENOTFOUND ? NB_ENOTFOUND : NB_ERROR,
				   "bisect: walking the history: %s", e ? e->message : "failed");
		free(ids);
		ids = NULL;
		nr = 0;
	}
	git_revwalk_free(walk);
	*out = ids;
	*out_nr = nr;
	return err;
}

static int add_nodes(struct bisect_graph *g, git_repository *repo, const git_oid *ids,
		       size_t nr, int first_parent)
{
	struct strbuf subj = STRBUF_INIT;
	struct oidmap map;
	git_commit **commits = xcalloc(nr + 1, sizeof(*commits));
	size_t i, k;
	int err = 0;

	oidmap_init(&map, nr);
	/* the walk is newest first; git bisects over the reversed list */
	for (k = 0; k < nr; k++) {
		const git_oid *id = &ids[nr - 1 - k];
		char hex[GIT_OID_HEXSZ + 1];
		size_t slot = oid_slot(&map, id);

		if ((err = git_commit_lookup(&commits[k], repo, id)) < 0) {
			err = nb_error_set(NB_ENOTFOUND, "bisect: commit %s: %s",
					   git_oid_tostr_s(id), git_error_last()->message);
			goto done;
		}
		git_oid_tostr(hex, sizeof(hex), id);
		strbuf_reset(&subj);
		merge_commit_subject(&subj, commits[k]);
		bisect_graph_add(g, hex, subj.buf, git_commit_time(commits[k]));
		map.keys[slot] = *id;
		map.vals[slot] = k;
		map.used[slot] = 1;
	}
	for (k = 0; k < nr; k++) {
		unsigned np = git_commit_parentcount(commits[k]);

		for (i = 0; i < np && (!first_parent || i == 0); i++) {
			size_t slot = oid_slot(&map, git_commit_parent_id(commits[k], i));

			if (map.used[slot])
				bisect_graph_add_parent(g, k, map.vals[slot]);
		}
	}
done:
	for (k = 0; k < nr; k++)
		git_commit_free(commits[k]);
	free(commits);
	oidmap_release(&map);
	strbuf_release(&subj);
	return err;
}

int bisect_graph_load(struct bisect_graph *out, git_repository *repo, const git_oid *bad,
		      const git_oid *goods, size_t goods_nr, int first_parent)
{
	struct strbuf good_ids = STRBUF_INIT;
	char hex[GIT_OID_HEXSZ + 1];
	git_oid *ids = NULL;
	size_t nr, i;
	int err;

	if ((err = revs_between(&ids, &nr, repo, bad, goods, goods_nr, first_parent)) < 0)
		goto done;
	if ((err = add_nodes(out, repo, ids, nr, first_parent)) < 0)
		goto done;
	git_oid_tostr(hex, sizeof(hex), bad);
	for (i = 0; i < out->nr && strcmp(out->nodes[i].id.hex, hex); i++)
		;
	if (i == out->nr) {
		err = nb_error_set(NB_EINVALID, "bisect: %s is reachable from a good commit",
				   hex);
		goto done;
	}
	out->bad = i;
	out->first_parent = first_parent;
	for (i = 0; i < goods_nr; i++) {
		git_oid_tostr(hex, sizeof(hex), &goods[i]);
		strbuf_addf(&good_ids, "%s%s", i ? " " : "", hex);
	}
	out->good_ids = strbuf_detach(&good_ids, NULL);
done:
	strbuf_release(&good_ids);
	free(ids);
	return err;
}
