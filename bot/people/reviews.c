/*
 * The review queue: per tree, the patches no one but their author has reviewed
 * (merge/repo/repo.h's one definition, through the tree's .mailmap), oldest first,
 * with whom to ask: the M:/R: of their sections and whoever reviewed the same files
 * most recently in mainline's history; never the author.  Per author, how long
 * their patches wait.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "bot/config/config.h"
#include "bot/people/people_int.h"
#include "bot/state/state.h"
#include "merge/repo/repo.h"
#include "util/error.h"
#include "util/mailmap.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define DAY 86400LL
#define MESSAGE_MAX ((size_t)1 << 20)
/* Reviewers kept per path, and suggestions per patch: a mail line, not a census. */
#define RECENT_PER_PATH 3
#define SUGGESTED_MAX 5
/* How far back "reviewed the same files recently" looks. */
#define RECENT_DAYS 365

static const char *const review_keys[] = { "Reviewed-by", "Acked-by" };

/* ---- who reviewed each path lately ----------------------------------------------- */

struct recent_reviewer {
	char *name, *email;
	long long when;
};

struct recent_path {
	char *path;
	struct recent_reviewer r[RECENT_PER_PATH];
	int nr;
};

struct recent_index {
	struct recent_path *slots;
	size_t cap, nr;
	const struct people *p;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static struct recent_path *recent_slot(const struct recent_index *x, const char *path)
{
	size_t i = hash_str(path) & (x->cap - 1);

	while (x->slots[i].path && strcmp(x->slots[i].path, path))
		i = (i + 1) & (x->cap - 1);
	return &x->slots[i];
}

static void recent_grow(struct recent_index *x)
{
	struct recent_path *old = x->slots;
	size_t i, cap = x->cap;

	x->cap = cap ? 2 * cap : 1024;
	x->slots = xcalloc(x->cap, sizeof(*x->slots));
	for (i = 0; i < cap; i++)
		if (old[i].path)
			*recent_slot(x, old[i].path) = old[i];
	free(old);
}

/* The walk is newest first: the first reviewers met for a path are its latest. */
static void recent_add(struct recent_index *x, const char *path, const struct activity_person *pe,
		       long long when)
{
	struct recent_path *e;
	int i;

	if ((x->nr + 1) * 2 > x->cap)
		recent_grow(x);
	e = recent_slot(x, path);
	if (!e->path) {
		e->path = xstrdup(path);
		x->nr++;
	}
	if (e->nr == RECENT_PER_PATH)
		return;
	for (i = 0; i < e->nr; i++)
		if (!strcasecmp(e->r[i].email, pe->email))
			return;
	e->r[e->nr].name = pe->name ? xstrdup(pe->name) : NULL;
	e->r[e->nr].email = xstrdup(pe->email);
	e->r[e->nr++].when = when;
}

static int recent_visit(void *ctx, const struct activity_commit *c)
{
	struct recent_index *x = ctx;
	size_t i, j;

	for (i = 0; i < c->people_nr; i++) {
		if (c->people[i].how != ACTIVITY_REVIEWED && c->people[i].how != ACTIVITY_ACKED)
			continue;
		for (j = 0; j < c->paths_nr; j++)
			recent_add(x, c->paths[j], &c->people[i], c->when);
	}
	return 0;
}

static void recent_release(struct recent_index *x)
{
	size_t i;
	int k;

	for (i = 0; i < x->cap; i++) {
		for (k = 0; k < x->slots[i].nr; k++) {
			free(x->slots[i].r[k].name);
			free(x->slots[i].r[k].email);
		}
		free(x->slots[i].path);
	}
	free(x->slots);
}

/* ---- what the queue reads besides the trees: journeys and drops -------------------- */

struct queue {
	struct repo *repo;
	const struct people *p;
	const struct recent_index *recent;
	const struct people_journeys *journeys; /* NULL: no journeys kept */
	struct state st;
	int have_state;
};

/* "YYYY-MM-DD" as seconds since the epoch (its midnight, UTC); 0: not a date. */
static long long day_seconds(const char *day)
{
	struct tm tm;
	char *end;

	memset(&tm, 0, sizeof(tm));
	if (!day || !(end = strptime(day, "%Y-%m-%d", &tm)) || *end)
		return 0;
	return (long long)timegm(&tm);
}

/* A `nextbot drop` in force for the patch (by patch-id, else by Message-ID). */
static int dropped(const struct queue *q, const struct lookup_patch *lp)
{
	size_t i;

	for (i = 0; q->have_state && i < q->st.drops_nr; i++) {
		const struct drop *d = &q->st.drops[i];

		if (!d->active)
			continue;
		if (!nb_patchid_is_none(&lp->patch_id) ? nb_patchid_eq(&d->patch_id, &lp->patch_id)
						       : lp->message_id && d->message_id &&
							 !strcmp(d->message_id, lp->message_id))
			return 1;
	}
	return 0;
}

/* ---- one patch -------------------------------------------------------------------------- */

static const char *map_cb(void *ctx, const char *name, const char *email)
{
	const struct people *p = ctx;
	const char *e = email;

	return p && mailmap_map(p->mailmap, &name, &e) ? e : NULL;
}

static int same_person(const struct people *p, const char *a, const char *b)
{
	return mailmap_same_email(p ? p->mailmap : NULL, a, b);
}

/* "a+x@host" and "a@host" are one mailbox: the part after '+' is the owner's label. */
static int same_mailbox(const char *a, const char *b)
{
	const char *at_a = strchr(a, '@'), *at_b = strchr(b, '@');
	size_t la, lb;

	if (!at_a || !at_b || strcasecmp(at_a, at_b))
		return 0;
	la = strcspn(a, "+@");
	lb = strcspn(b, "+@");
	return la == lb && !strncasecmp(a, b, la);
}

/* The author (address, '+' alias, .mailmap, name) is never their own reviewer. */
static int is_author(const struct people *p, const struct people_review_patch *rp,
		     const char *name, const char *email)
{
	return same_person(p, email, rp->author_email) || same_mailbox(email, rp->author_email) ||
	       (name && rp->author_name && !strcasecmp(name, rp->author_name));
}

static void suggest(struct people_review_patch *rp, const struct people *p, const char *name,
		    const char *email, const char *why)
{
	size_t i;

	if (rp->suggested_nr == SUGGESTED_MAX || is_author(p, rp, name, email) ||
	    people_is_absent(p, name, email))
		return;
	for (i = 0; i < rp->suggested_nr; i++)
		if (same_person(p, email, rp->suggested[i].email))
			return;
	rp->suggested[rp->suggested_nr].name = name ? xstrdup(name) : NULL;
	rp->suggested[rp->suggested_nr].email = xstrdup(email);
	rp->suggested[rp->suggested_nr++].why = xstrdup(why);
}

static void suggestions(struct people_review_patch *rp, const struct people *p,
			const struct recent_index *recent, const struct strvec *paths)
{
	struct people_route_opts o = { .roles = { 1, 1, 0 }, .max = 0 };
	struct people_route r;
	size_t i;
	int k;

	rp->suggested = xcalloc(SUGGESTED_MAX, sizeof(*rp->suggested));
	people_route(&r, p, (const char *const *)paths->v, paths->nr, &o);
	for (i = 0; i < r.nr; i++)
		suggest(rp, p, r.v[i].name, r.v[i].email, r.v[i].why);
	people_route_release(&r);
	for (i = 0; recent->cap && i < paths->nr; i++) {
		const struct recent_path *e = recent_slot(recent, paths->v[i]);

		for (k = 0; e->path && k < e->nr; k++) {
			char *why = xstrfmt("reviewed %s lately", paths->v[i]);

			suggest(rp, p, e->r[k].name, e->r[k].email, why);
			free(why);
		}
	}
}

/* The patch's row key: its journey's, else its patch-id, else its Message-ID, else commit. */
static char *row_key(struct people_review_patch *rp, const struct queue *q,
		     const struct lookup_patch *lp, int *ended)
{
	const struct people_journeys *j = q->journeys;
	const char *key, *first_seen;
	char pid[NB_PATCHID_STRSZ];

	*ended = 0;
	if (j && j->find(j->ctx, &lp->patch_id, lp->message_id, &key, &first_seen, ended) == 0) {
		rp->posted = day_seconds(first_seen);
		return xstrfmt("j:%s", key);
	}
	*ended = 0;
	if (!nb_patchid_is_none(&lp->patch_id))
		return xstrfmt("p:%s", nb_patchid_tostr(pid, &lp->patch_id));
	if (lp->message_id)
		return xstrfmt("m:%s", lp->message_id);
	return xstrfmt("c:%s", lp->commit.hex);
}

/* 1 when the patch waits (no review but its author's); its suggestions then. */
static int examine(struct people_review_patch *rp, const struct queue *q,
		   const struct lookup_patch *lp)
{
	const struct people *p = q->p;
	struct trailer_mailmap mm = { map_cb, (void *)p };
	struct strbuf msg = STRBUF_INIT;
	struct strvec paths = STRVEC_INIT;
	int waits = 0, ended;

	memset(rp, 0, sizeof(*rp));
	rp->branches = (struct strvec)STRVEC_INIT;
	rp->key = row_key(rp, q, lp, &ended);
	if (ended || dropped(q, lp) ||
	    activity_commit_message(&msg, q->repo, &lp->commit, MESSAGE_MAX) < 0)
		goto done;
	if (trailer_reviewed(msg.buf, lp->author_name, lp->author_email, review_keys, 2,
			     p ? &mm : NULL, NULL))
		goto done;
	waits = 1;
	rp->commit = lp->commit;
	rp->patch_id = lp->patch_id;
	rp->subject = xstrdup(lp->subject ? lp->subject : "");
	rp->author_name = lp->author_name ? xstrdup(lp->author_name) : NULL;
	rp->author_email = xstrdup(lp->author_email ? lp->author_email : "");
	rp->author_time = lp->author_time;
	rp->message_id = lp->message_id ? xstrdup(lp->message_id) : NULL;
	if (activity_commit_paths(&paths, q->repo, &lp->commit) < 0)
		nb_error_clear();
	suggestions(rp, p, q->recent, &paths);
done:
	if (!waits) {
		free(rp->key);
		rp->key = NULL;
	}
	nb_error_clear();
	strbuf_release(&msg);
	strvec_clear(&paths);
	return waits;
}

/* ---- trees ---------------------------------------------------------------------------------- */

static int tree_queue(struct people_review_tree *out, const struct queue *q, const char *tree,
		      const char *base_ref)
{
	struct repo *repo = q->repo;
	struct lookup_patches pool = LOOKUP_PATCHES_INIT;
	struct nb_oid tip, base;
	char *ref = xstrfmt("refs/feeds/%s", tree);
	size_t i;
	int error;

	out->name = xstrdup(tree);
	if (repo_ref_get(repo, ref, &tip) < 0 || repo_ref_get(repo, base_ref, &base) < 0) {
		nb_error_clear(); /* a tree never fetched has nothing waiting */
		free(ref);
		return 0;
	}
	error = lookup_new_patches(&pool, repo, tree, tip.hex, base.hex, 0);
	out->patches = xcalloc(pool.nr + 1, sizeof(*out->patches));
	for (i = 0; !error && i < pool.nr; i++)
		if (examine(&out->patches[out->patches_nr], q, &pool.items[i]))
			strvec_push(&out->patches[out->patches_nr++].branches, tree);
	lookup_patches_release(&pool);
	free(ref);
	return error;
}

/* When it was first seen posted (its journey), else its author date. */
static long long posted_or_authored(const struct people_review_patch *rp)
{
	return rp->posted ? rp->posted : rp->author_time;
}

static int cmp_patch_age(const void *a, const void *b)
{
	long long x = posted_or_authored(a), y = posted_or_authored(b);

	return x < y ? -1 : x > y;
}

static void review_patch_release(struct people_review_patch *rp)
{
	size_t k;

	for (k = 0; k < rp->suggested_nr; k++) {
		free(rp->suggested[k].name);
		free(rp->suggested[k].email);
		free(rp->suggested[k].why);
	}
	free(rp->suggested);
	free(rp->subject);
	free(rp->author_name);
	free(rp->author_email);
	free(rp->message_id);
	free(rp->key);
	strvec_clear(&rp->branches);
}

/*
 * One row per patch: a patch that several trees carry (mm-unstable, then mm-stable)
 * stays under the first, which names the others in its branches.
 */
static void one_row_per_patch(struct people_reviews *out)
{
	size_t i, j, i2, j2;

	for (i = 0; i < out->trees_nr; i++) {
		struct people_review_tree *t = &out->trees[i];
		size_t n = 0;

		for (j = 0; j < t->patches_nr; j++) {
			struct people_review_patch *rp = &t->patches[j], *first = NULL;

			for (i2 = 0; i2 <= i && !first; i2++)
				for (j2 = 0; j2 < (i2 < i ? out->trees[i2].patches_nr : n); j2++)
					if (!strcmp(out->trees[i2].patches[j2].key, rp->key)) {
						first = &out->trees[i2].patches[j2];
						break;
					}
			if (first) {
				strvec_push(&first->branches, t->name);
				review_patch_release(rp);
				continue;
			}
			t->patches[n++] = *rp;
		}
		t->patches_nr = n;
	}
}

static void tally_waiting_authors(struct people_reviews *out, const struct people *p)
{
	size_t i, j, k;

	for (i = 0; i < out->trees_nr; i++)
		for (j = 0; j < out->trees[i].patches_nr; j++) {
			const struct people_review_patch *rp = &out->trees[i].patches[j];
			struct people_review_author *a;

			for (k = 0; k < out->authors_nr; k++)
				if (same_person(p, out->authors[k].email, rp->author_email))
					break;
			if (k == out->authors_nr) {
				out->authors = xrealloc(out->authors,
							(k + 1) * sizeof(*out->authors));
				memset(&out->authors[k], 0, sizeof(out->authors[k]));
				out->authors[k].name = rp->author_name ? xstrdup(rp->author_name)
								       : NULL;
				out->authors[k].email = xstrdup(rp->author_email);
				out->authors_nr++;
			}
			a = &out->authors[k];
			a->waiting++;
			if (rp->age_days > a->oldest_days)
				a->oldest_days = rp->age_days;
		}
}

/*
 * The trees a review queue covers: the merged trees, then the watched branches (such
 * as mm-unstable, where a patch waits for the review that lets it into mm-next).
 */
static size_t queue_trees_nr(const struct config *cfg)
{
	return cfg->trees_nr + cfg->watch_nr;
}

static const char *queue_tree_name(const struct config *cfg, size_t i)
{
	return i < cfg->trees_nr ? cfg->trees[i].name : cfg->watch[i - cfg->trees_nr].name;
}

/*
 * "Now" for ages: the journeys' last night; without journeys, the newest of the base's
 * and the trees' tips (the trees' own clock).
 */
static long long clock_of(struct repo *repo, const struct config *cfg, const char *base_ref,
			  const struct people_journeys *journeys)
{
	long long now = journeys ? day_seconds(journeys->date) : 0, t;
	size_t i;

	if (now)
		return now + DAY - 1;
	if (activity_commit_time(&t, repo, base_ref) == 0)
		now = t;
	for (i = 0; i < queue_trees_nr(cfg); i++) {
		char *ref = xstrfmt("refs/feeds/%s", queue_tree_name(cfg, i));

		if (activity_commit_time(&t, repo, ref) == 0 && t > now)
			now = t;
		free(ref);
	}
	nb_error_clear();
	return now;
}

int people_reviews_run(struct people_reviews *out, const struct config *cfg, struct repo *repo,
		       const char *only_tree, const struct people *p,
		       const struct people_journeys *journeys)
{
	char *base_ref = xstrfmt("refs/feeds/%s", cfg->base.name);
	struct recent_index recent = { .p = p };
	struct queue q = { .repo = repo, .p = p, .recent = &recent, .journeys = journeys };
	size_t i, j;
	int error = 0;

	memset(out, 0, sizeof(*out));
	if (state_load(&q.st, cfg->workdir) == 0)
		q.have_state = 1;
	else
		nb_error_clear(); /* no state yet: no drops */
	out->now = clock_of(repo, cfg, base_ref, journeys);
	if (activity_walk(repo, base_ref, out->now - RECENT_DAYS * DAY, recent_visit, &recent) < 0)
		nb_error_clear(); /* no history: no "reviewed lately" suggestions */
	out->trees = xcalloc(queue_trees_nr(cfg) + 1, sizeof(*out->trees));
	for (i = 0; !error && i < queue_trees_nr(cfg); i++) {
		if (only_tree && strcmp(only_tree, queue_tree_name(cfg, i)))
			continue;
		error = tree_queue(&out->trees[out->trees_nr++], &q, queue_tree_name(cfg, i),
				   base_ref);
	}
	one_row_per_patch(out);
	for (i = 0; i < out->trees_nr; i++) {
		struct people_review_tree *t = &out->trees[i];

		for (j = 0; j < t->patches_nr; j++) {
			long long age = (out->now - posted_or_authored(&t->patches[j])) / DAY;

			t->patches[j].age_days = age > 0 ? (int)age : 0;
		}
		qsort(t->patches, t->patches_nr, sizeof(*t->patches), cmp_patch_age);
	}
	tally_waiting_authors(out, p);
	recent_release(&recent);
	if (q.have_state)
		state_release(&q.st);
	free(base_ref);
	return error;
}

void people_reviews_release(struct people_reviews *r)
{
	size_t i, j;

	for (i = 0; i < r->trees_nr; i++) {
		for (j = 0; j < r->trees[i].patches_nr; j++)
			review_patch_release(&r->trees[i].patches[j]);
		free(r->trees[i].patches);
		free(r->trees[i].name);
	}
	for (i = 0; i < r->authors_nr; i++) {
		free(r->authors[i].name);
		free(r->authors[i].email);
	}
	free(r->authors);
	free(r->trees);
	memset(r, 0, sizeof(*r));
}
