/* The simulator's patch journeys: review trailers, new versions, and their ground truth. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "merge/git/git_int.h"
#include "feeds/sim.h"
#include "merge/git/patchid_int.h"
#include "util/error.h"
#include "util/xalloc.h"
#include "util/banned.h"

/*
 * Everything here draws from w->jrng, never from w->rng: the world's own stream
 * decides arrivals, moves, drops and defects, and a seed must keep those whatever
 * the journeys add.
 */
#define JRNG(w, n) sim_rng_below(&(w)->jrng, (n))
#define JCHANCE(w, p) sim_rng_chance(&(w)->jrng, (p))

/* The per-cent chance, per day, that a patch in mm-next or mm-unstable gets a new version. */
#define VERSION_CHANCE 6

uint64_t sim_journey_seed(uint64_t seed)
{
	uint64_t s = seed ^ 0x6a6f75726e657921ULL; /* "journey!" */

	sim_rng_next(&s);
	return s;
}

struct sim_journey *sim_journey_find(struct sim_world *w, int id)
{
	size_t lo = 0, hi = w->journeys_nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (w->journeys[mid].id == id)
			return &w->journeys[mid];
		if (w->journeys[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void sim_journey_release(struct sim_journey *j)
{
	size_t i;

	free(j->subject);
	for (i = 0; i < j->versions_nr; i++)
		free(j->versions[i].msgid);
	free(j->versions);
	free(j->events);
	free(j->reviews);
	memset(j, 0, sizeof(*j));
}

/* The journey of `p`, created (in id order) when `create` is set; else NULL if none. */
static struct sim_journey *journey_of(struct sim_world *w, const struct sim_patch *p, int create)
{
	struct sim_journey *j = sim_journey_find(w, p->id);
	size_t at;

	if (j || !create)
		return j;
	ALLOC_GROW(w->journeys, w->journeys_nr + 1, w->journeys_alloc);
	for (at = w->journeys_nr; at > 0 && w->journeys[at - 1].id > p->id; at--)
		;
	memmove(w->journeys + at + 1, w->journeys + at,
		(w->journeys_nr - at) * sizeof(*w->journeys));
	w->journeys_nr++;
	j = &w->journeys[at];
	memset(j, 0, sizeof(*j));
	j->id = p->id;
	j->author = p->author;
	j->subject = xstrdup(p->subject);
	return j;
}

static void add_event(struct sim_world *w, struct sim_journey *j, int event, int tree, int from)
{
	ALLOC_GROW(j->events, j->events_nr + 1, j->events_alloc);
	j->events[j->events_nr++] = (struct sim_event_rec){
		.day = w->day, .event = event, .tree = tree, .from = from
	};
}

static void add_version(struct sim_world *w, struct sim_journey *j, const struct sim_patch *p)
{
	ALLOC_GROW(j->versions, j->versions_nr + 1, j->versions_alloc);
	j->versions[j->versions_nr++] = (struct sim_version){
		.patch_id = NB_PATCHID_NONE, .day = w->day, .msgid = xstrdup(p->msgid)
	};
}

/* A submitter other than `not`. */
static int other_person(struct sim_world *w, int not)
{
	int who = JRNG(w, (int)sim_submitters_nr - 1);

	return who >= not ? who + 1 : who;
}

/* A review by `who` (one per person: a second one is not added). */
static void add_review(struct sim_world *w, struct sim_patch *p, int who, int day)
{
	int kind = JCHANCE(w, 70) ? SIM_REVIEWED_BY : SIM_ACKED_BY;
	size_t i;

	for (i = 0; i < p->reviews_nr; i++)
		if (p->reviews[i].who == who)
			return;
	ALLOC_GROW(p->reviews, p->reviews_nr + 1, p->reviews_alloc);
	p->reviews[p->reviews_nr++] = (struct sim_review){ .who = who, .kind = kind, .day = day };
}

/*
 * Reviews as on a real list: about a third of patches get none, some only one by
 * their own author (which counts for nothing), the rest one or two from others,
 * given on arrival or some days later (so that some enter mm-next unreviewed and
 * are reviewed there).
 */
static void draw_reviews(struct sim_world *w, struct sim_patch *p)
{
	int pick = JRNG(w, 100), n, i;

	if (pick < 30)
		return;
	if (pick < 40) {
		add_review(w, p, p->author, w->day);
		return;
	}
	n = 1 + JCHANCE(w, 30);
	for (i = 0; i < n; i++)
		add_review(w, p, other_person(w, p->author),
			   w->day + (JCHANCE(w, 45) ? 0 : 1 + JRNG(w, 7)));
}

static void draw_trailers(struct sim_world *w, struct sim_patch *p)
{
	draw_reviews(w, p);
	p->version = 1;
	p->tester = JCHANCE(w, 12) ? other_person(w, p->author) : -1;
	p->codev = JCHANCE(w, 6) ? other_person(w, p->author) : -1;
	p->extras = (JCHANCE(w, 20) ? SIM_TRAILER_CC : 0) | (JCHANCE(w, 6) ? SIM_TRAILER_ROBOT : 0);
}

void sim_journey_arrive(struct sim_world *w, struct sim_patch *p, int tree)
{
	struct sim_journey *j;

	if (tree == 0)
		return; /* mainline's own commits have no journey */
	j = journey_of(w, p, 0);
	if (!j) {
		draw_trailers(w, p);
		j = journey_of(w, p, 1);
		add_version(w, j, p);
		add_event(w, j, SIM_EV_ADDED, tree, -1);
	} else {
		add_event(w, j, SIM_EV_MOVED, tree, p->tree);
	}
	p->event_day = w->day;
}

void sim_journey_leave(struct sim_world *w, struct sim_patch *p, int event)
{
	struct sim_journey *j = journey_of(w, p, 0);

	if (!j)
		return;
	add_event(w, j, event, event == SIM_EV_MERGED ? 0 : p->tree, -1);
	p->event_day = w->day;
}

void sim_patch_version_msgid(struct sim_patch *p, int day)
{
	const struct sim_person *a = &sim_submitters[p->author];
	time_t t = (time_t)(SIM_EPOCH + (long long)day * 86400 + 7 * 3600 + (p->id % 1000) * 19);
	struct tm tm;
	char stamp[32];

	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d%H%M%S", &tm);
	free(p->msgid);
	p->msgid = xstrfmt("%s.%d-v%d-%s", stamp, p->id, p->version, a->email);
}

/*
 * A version that changes the code: one more statement at the end of the last
 * function the patch writes (its slot or its new file), so that the text it
 * replaces and the regions it holds stay what they were.  0, or -1 if its text
 * has no such place.
 */
static int change_code(struct sim_world *w, struct sim_patch *p)
{
	static const char tail[] = "\n\n\treturn r;\n}\n";
	struct sim_op *op;
	struct strbuf sb = STRBUF_INIT;
	const char *at, *next;

	if (p->ops_nr != 1)
		return -1;
	op = &p->ops[0];
	for (at = NULL, next = strstr(op->new_text, tail); next; next = strstr(next + 1, tail))
		at = next;
	if (!at || at[sizeof(tail) - 1])
		return -1;
	strbuf_add(&sb, op->new_text, at - op->new_text);
	strbuf_addf(&sb, "\n\tr ^= r >> %d;", 1 + JRNG(w, 7));
	strbuf_addstr(&sb, at);
	free(op->new_text);
	op->new_text = strbuf_detach(&sb, NULL);
	return 0;
}

/*
 * A new version of `p` replaces it in its branch: a new Message-ID always; half
 * change the code (and then half of those lose their reviews, the others carry
 * them over a changed diff), the others only reword the changelog.
 */
static void new_version(struct sim_world *w, struct sim_patch *p)
{
	struct sim_journey *j = journey_of(w, p, 0);
	char *body;

	if (JCHANCE(w, 50) && !change_code(w, p)) {
		if (JCHANCE(w, 50)) {
			p->reviews_nr = 0;
			if (JCHANCE(w, 60))
				add_review(w, p, other_person(w, p->author),
					   w->day + 1 + JRNG(w, 4));
		}
	} else {
		body = xstrfmt("%s\n\nReword the changelog after review; no functional change\n"
			       "since v%d.", p->body, p->version);
		free(p->body);
		p->body = body;
	}
	p->version++;
	sim_patch_version_msgid(p, w->day);
	add_version(w, j, p);
	add_event(w, j, SIM_EV_REPLACED, p->tree, -1);
	p->event_day = w->day;
	w->trees[p->tree].dirty_from = 0;
}

/* Does a review of `p` land today?  Then its tree is rewritten from `p` on. */
static void land_reviews(struct sim_world *w, struct sim_patch *p, size_t pos)
{
	struct sim_tree *t = &w->trees[p->tree];
	size_t i;

	if (t->kind == SIM_MM_STABLE)
		return; /* mm-stable is not rebased for a late tag */
	for (i = 0; i < p->reviews_nr; i++)
		if (p->reviews[i].day == w->day && (t->dirty_from < 0 || t->dirty_from > (int)pos))
			t->dirty_from = (int)pos;
}

void sim_journey_day(struct sim_world *w)
{
	size_t t, i;

	for (t = 1; t < w->trees_nr; t++) {
		struct sim_tree *tree = &w->trees[t];

		for (i = 0; i < tree->nr; i++) {
			struct sim_patch *p = tree->patches[i];

			if (!journey_of(w, p, 0))
				continue;
			if ((tree->kind == SIM_MM_NEXT || tree->kind == SIM_MM_UNSTABLE) &&
			    p->defect < 0 && p->event_day < w->day && JCHANCE(w, VERSION_CHANCE))
				new_version(w, p);
			land_reviews(w, p, i);
		}
	}
}

static const char *const review_names[] = { "Reviewed-by", "Acked-by" };

void sim_journey_trailers(struct strbuf *msg, struct sim_world *w, const struct sim_patch *p)
{
	const struct sim_person *who;
	size_t i;

	if (p->codev >= 0) {
		who = &sim_submitters[p->codev];
		strbuf_addf(msg, "Co-developed-by: %s <%s>\nSigned-off-by: %s <%s>\n", who->name,
			    who->email, who->name, who->email);
	}
	for (i = 0; i < p->reviews_nr; i++) {
		if (p->reviews[i].day > w->day)
			continue;
		who = &sim_submitters[p->reviews[i].who];
		strbuf_addf(msg, "%s: %s <%s>\n", review_names[p->reviews[i].kind], who->name,
			    who->email);
	}
	if (p->tester >= 0) {
		who = &sim_submitters[p->tester];
		strbuf_addf(msg, "Tested-by: %s <%s>\n", who->name, who->email);
	}
	if (p->extras & SIM_TRAILER_ROBOT)
		strbuf_addstr(msg, "Tested-by: kernel test robot <lkp@intel.example.com>\n");
	if (p->extras & SIM_TRAILER_CC)
		strbuf_addf(msg, "Cc: linux-%s@lists.example.org\n", w->subs[p->sub].ident);
}

/* The reviews in `p`'s commit as last written, into its journey. */
static void copy_reviews(struct sim_journey *j, const struct sim_patch *p)
{
	size_t i;

	j->reviews_nr = 0;
	for (i = 0; i < p->reviews_nr; i++)
		if (p->reviews[i].day <= p->commit_day) {
			ALLOC_GROW(j->reviews, j->reviews_nr + 1, j->reviews_alloc);
			j->reviews[j->reviews_nr++] = p->reviews[i];
		}
}

void sim_journey_patch_ids(struct sim_world *w)
{
	size_t i;

	for (i = 0; i < w->patches_nr; i++) {
		struct sim_patch *p = w->patches[i];
		struct sim_journey *j = p->state == SIM_LIVE ? journey_of(w, p, 0) : NULL;
		struct sim_version *v;
		git_oid oid;

		if (!j || !j->versions_nr)
			continue;
		copy_reviews(j, p);
		v = &j->versions[j->versions_nr - 1];
		if (nb_patchid_is_none(&v->patch_id) && !merge_oid_to_git(&oid, &p->commit))
			merge_patch_id_oid(&v->patch_id, w->store, &oid);
	}
	nb_error_clear();
}
