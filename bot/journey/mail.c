/* Tonight's journey events as notices: who hears of each, the replacement's delta, digests. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bot/journey/night_int.h"
#include "bot/people/people.h"
#include "merge/repo/repo.h"
#include "util/error.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* Ranges longer than this are not range-diffed whole: the two versions alone are. */
#define MAIL_RANGE_MAX 100

/* One event's notice and the strings and arrays it points to. */
struct jn_notice {
	struct notice_journey n;
	struct notice_person *to;
	size_t to_nr, to_alloc;
	struct strvec cc, reviews, lost, stale, pool;
	struct people_route route;      /* MAINTAINERS' people and lists for its files */
	struct notice_extra *extras;
};

/* A review, an ack or a test: the trailers the journey mail names as reviews. */
static int review_key(const char *key)
{
	enum trailer_kind kind = trailer_kind_parse(key);

	return kind == TRAILER_REVIEWED || kind == TRAILER_ACKED || kind == TRAILER_TESTED;
}

static void add_to(struct jn_notice *jn_n, const char *name, const char *email)
{
	size_t i;

	for (i = 0; i < jn_n->to_nr; i++)
		if (!strcasecmp(jn_n->to[i].email, email))
			return;
	ALLOC_GROW(jn_n->to, jn_n->to_nr + 1, jn_n->to_alloc);
	jn_n->to[jn_n->to_nr].name = name;
	jn_n->to[jn_n->to_nr++].email = email;
}

/* The author and the people of the version's trailers who get journey mail. */
static void add_people(struct jn_notice *x, const struct config *cfg,
		       const struct journey_version *v)
{
	size_t i;

	for (i = 0; i < v->people_nr; i++)
		if (journey_key_mailed(v->people[i].key) &&
		    !journey_is_bot(cfg, v->people[i].name, v->people[i].email))
			add_to(x, v->people[i].name, v->people[i].email);
}

static void people_lines(struct strvec *out, const struct journey_version *v)
{
	size_t i;

	for (i = 0; v && i < v->people_nr; i++)
		if (review_key(v->people[i].key))
			strvec_pushf(out, "%s: %s <%s>", v->people[i].key, v->people[i].name,
				     v->people[i].email);
}

/* Reviews of `a` that `b` lacks (present: 0), or that it keeps (present: 1). */
static void compare_reviews(struct strvec *out, const struct journey_version *a,
			    const struct journey_version *b, int present)
{
	size_t i, k;

	for (i = 0; i < a->people_nr; i++) {
		int found = 0;

		if (!review_key(a->people[i].key))
			continue;
		for (k = 0; k < b->people_nr && !found; k++)
			found = !strcasecmp(a->people[i].key, b->people[k].key) &&
				!strcasecmp(a->people[i].email, b->people[k].email);
		if (found == present)
			strvec_pushf(out, "%s: %s <%s>", a->people[i].key, a->people[i].name,
				     a->people[i].email);
	}
}

static int index_in(const struct rangediff_commit *v, size_t nr, const struct nb_oid *id)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (nb_oid_equal(&v[i].id, id))
			return (int)i;
	return -1;
}

/* The range-diff of last night's range of the old tree and tonight's of the new one. */
static void range_diff(struct jn_notice *x, struct journey_night *jn, size_t j,
		       const struct journey_version *old, const struct journey_version *neu)
{
	const struct jn_seen *s = &jn->seen[j];
	const char *old_tree = jn->trees[s->old_tree >= 0 ? s->old_tree : s->tree].cfg->name;
	const struct journey_tree_seen *last = journey_tree_seen_find(&jn->store, old_tree);
	const struct jn_tree *now = &jn->trees[s->tree];
	struct rangediff rd = RANGEDIFF_INIT;
	struct strbuf text = STRBUF_INIT;
	int oi = -1, nj = -1;

	if (last && rangediff_compute(&rd, jn->reader,
				      &(struct rangediff_ranges){
					      .old_base = &last->base, .old_tip = &last->tip,
					      .new_base = jn->o.base_tip, .new_tip = &now->tip },
				      RANGEDIFF_CREATION_FACTOR, MAIL_RANGE_MAX) == 0) {
		oi = index_in(rd.old, rd.old_nr, &old->commit);
		nj = index_in(rd.new, rd.new_nr, &neu->commit);
	}
	if (oi < 0 || nj < 0) {
		rangediff_release(&rd);
		nb_error_clear();
		if (rangediff_compute_pair(&rd, jn->reader, &old->commit, &neu->commit,
					   RANGEDIFF_CREATION_FACTOR) < 0) {
			log_warn("journeys: range-diff of %.12s: %s", neu->commit.hex,
				 nb_error_last());
			goto done;
		}
		oi = nj = 0;
	}
	if (rd.old[oi].pair == nj) {
		rangediff_pair_show(&text, &rd, oi, nj);
	} else {
		rangediff_pair_show(&text, &rd, oi, rd.old[oi].pair);
		rangediff_pair_show(&text, &rd, rd.new[nj].pair, nj);
	}
	strvec_push(&x->pool, text.buf);
	x->n.range_diff = x->pool.v[x->pool.nr - 1];
	strbuf_reset(&text);
	if (rangediff_interdiff(&text, jn->reader, &old->commit, &neu->commit) == 0) {
		strvec_push(&x->pool, text.len ? text.buf : "(no change in the code)\n");
		x->n.interdiff = x->pool.v[x->pool.nr - 1];
	}
done:
	nb_error_clear();
	rangediff_release(&rd);
	strbuf_release(&text);
}

static void delta(struct jn_notice *x, struct journey_night *jn, size_t j)
{
	struct journey *jr = &jn->store.patches[j];
	struct journey_version *old = &jr->versions[jr->versions_nr - 2];
	struct journey_version *neu = &jr->versions[jr->versions_nr - 1];

	journey_version_pid(jn, old);
	journey_version_pid(jn, neu);
	x->n.old_commit = old->commit.hex;
	x->n.old_message_id = old->message_id;
	compare_reviews(&x->lost, old, neu, 0);
	/* the code changed: the patch-ids differ (two nones: no diff to compare, unchanged) */
	if (old->pid_known && neu->pid_known && !nb_patchid_eq(&old->patch_id, &neu->patch_id) &&
	    !(nb_patchid_is_none(&old->patch_id) && nb_patchid_is_none(&neu->patch_id)))
		compare_reviews(&x->stale, neu, old, 1);
	x->n.lost_reviews = (const char *const *)x->lost.v;
	x->n.lost_reviews_nr = x->lost.nr;
	x->n.stale_reviews = (const char *const *)x->stale.v;
	x->n.stale_reviews_nr = x->stale.nr;
	range_diff(x, jn, j, old, neu);
	add_people(x, jn->cfg, old); /* who lost a review hears of it */
}

/* Addresses compare without case ("Andrea@" in one MAINTAINERS section, "andrea@" in another). */
static int has_address(const struct strvec *v, const char *a)
{
	size_t i;

	for (i = 0; i < v->nr; i++)
		if (!strcasecmp(v->v[i], a))
			return 1;
	return 0;
}

static int gate_kind(enum notice_journey_kind k)
{
	return k == NOTICE_REVIEW_MISSING || k == NOTICE_PATCH_HELD || k == NOTICE_PATCH_RELEASED;
}

static void add_list(struct jn_notice *x, const struct config *cfg, const struct jn_tree *t)
{
	const char *list = t ? config_journey_list(cfg, t->cfg->name) : cfg->journey.list;

	if (list && !has_address(&x->cc, list))
		strvec_push(&x->cc, list);
}

/*
 * Who hears of an event: its author always; of the gate's events, the tree's
 * contacts (who decide on its review); of the others, the people of its trailers
 * and the journey list of the trees it concerns (the one it left too, for a move).
 */
static void recipients(struct jn_notice *x, struct journey_night *jn, const struct jn_told *e,
		       const struct journey_version *v)
{
	const struct jn_tree *t = e->tree >= 0 ? &jn->trees[e->tree] : NULL;
	const struct jn_tree *f = e->from >= 0 ? &jn->trees[e->from] : NULL;
	size_t i;

	add_to(x, x->n.author.name, x->n.author.email);
	if (gate_kind(e->kind)) {
		for (i = 0; t && i < t->cfg->contacts.nr; i++)
			strvec_push(&x->cc, t->cfg->contacts.v[i]);
		return;
	}
	add_people(x, jn->cfg, v);
	if (t || !f)
		add_list(x, jn->cfg, t);
	if (f)
		add_list(x, jn->cfg, f);
}

/* The base's MAINTAINERS, read once a night (for its first notice); NULL: none. */
static const struct people *people_of(struct journey_night *jn)
{
	char *ref;

	if (jn->people_read || !jn->cfg->maintainers.max)
		return jn->people;
	jn->people_read = 1;
	ref = xstrfmt("refs/feeds/%s", jn->cfg->base.name);
	if (people_load_config(&jn->people, jn->cfg, jn->reader, ref) < 0) {
		log_warn("journeys: %s: MAINTAINERS routing is off tonight: %s", ref,
			 nb_error_last());
		nb_error_clear();
	}
	free(ref);
	return jn->people;
}

/*
 * A notice that asks for a review (added, replaced) also goes to the people the
 * base's MAINTAINERS names for the patch's files and K: keywords (a replacement's:
 * both versions'), each with its why: M: and R: as maintainers.roles asks, never its
 * L: lists (the patch was posted there; the tree's journey list carries the
 * notices).  A move, a removal, a merge and the gate's notices are for the patch's
 * own people.
 */
static void route(struct jn_notice *x, struct journey_night *jn, const struct jn_told *e,
		  const struct journey *jr)
{
	const struct people *p;
	struct people_route_opts o;
	struct people_patch pp = PEOPLE_PATCH_INIT;
	size_t i, first;

	if ((e->kind != NOTICE_PATCH_ADDED && e->kind != NOTICE_PATCH_REPLACED) ||
	    !(p = people_of(jn)))
		return;
	first = e->kind == NOTICE_PATCH_REPLACED && jr->versions_nr >= 2 ? jr->versions_nr - 2 :
									   jr->versions_nr - 1;
	for (i = first; i < jr->versions_nr; i++)
		if (people_patch_read(&pp, jn->reader, &jr->versions[i].commit) < 0)
			nb_error_clear(); /* a commit gone since: its files are unknown */
	people_route_opts_from_config(&o, jn->cfg);
	o.roles[PEOPLE_ROLE_L] = 0;
	people_route_opts_patch(&o, &pp); /* K: keywords of the patch; its bindings */
	people_route(&x->route, p, (const char *const *)pp.paths.v, pp.paths.nr, &o);
	x->extras = xcalloc(x->route.nr + 1, sizeof(*x->extras));
	for (i = 0; i < x->route.nr; i++) {
		x->extras[i].spec = x->route.v[i].spec;
		x->extras[i].why = x->route.v[i].why;
	}
	x->n.maintainers = x->extras;
	x->n.maintainers_nr = x->route.nr;
	people_patch_release(&pp);
}

static void build(struct jn_notice *x, struct journey_night *jn, const struct jn_told *e)
{
	const struct journey *jr = &jn->store.patches[e->j];
	const struct journey_version *v = &jr->versions[jr->versions_nr - 1];
	const struct jn_tree *t = e->tree >= 0 ? &jn->trees[e->tree] : NULL;
	const struct config_gate *g = t ? t->gate : NULL;
	size_t i;

	memset(x, 0, sizeof(*x));
	x->cc = x->reviews = x->lost = x->stale = x->pool = (struct strvec)STRVEC_INIT;
	x->route = (struct people_route)PEOPLE_ROUTE_INIT;
	x->n.kind = e->kind;
	x->n.key = jr->key;
	x->n.date = jn->o.date;
	x->n.next_tag = jn->o.next_tag;
	x->n.tree = t ? t->cfg->name : jn->cfg->base.name;
	x->n.branch = t ? t->cfg->branch : jn->cfg->base.branch;
	x->n.from = e->from >= 0 ? jn->trees[e->from].cfg->branch : NULL;
	x->n.subject = jr->subject;
	x->n.author.name = jr->author_name;
	x->n.author.email = jr->author_email;
	x->n.commit = v->commit.hex;
	x->n.patch_id = v->patch_id;
	x->n.message_id = v->message_id;
	x->n.patch_link = jr->link;
	x->n.reason = e->reason;
	x->n.hold_follows = g ? g->follow : 1;
	people_lines(&x->reviews, v);
	x->n.reviews = (const char *const *)x->reviews.v;
	x->n.reviews_nr = x->reviews.nr;
	if (g) {
		struct strbuf req = STRBUF_INIT;

		for (i = 0; i < g->require.nr; i++)
			strbuf_addf(&req, "%s%s", i ? " or " : "", g->require.v[i]);
		strvec_push(&x->pool, req.buf);
		x->n.require = x->pool.v[x->pool.nr - 1];
		strbuf_release(&req);
	}
	recipients(x, jn, e, v);
	route(x, jn, e, jr);
	if (e->kind == NOTICE_PATCH_REPLACED && jr->versions_nr >= 2)
		delta(x, jn, e->j);
	x->n.to = x->to;
	x->n.to_nr = x->to_nr;
	x->n.cc = (const char *const *)x->cc.v;
	x->n.cc_nr = x->cc.nr;
}

static void release(struct jn_notice *x)
{
	free(x->to);
	strvec_clear(&x->cc);
	strvec_clear(&x->reviews);
	strvec_clear(&x->lost);
	strvec_clear(&x->stale);
	strvec_clear(&x->pool);
	people_route_release(&x->route);
	free(x->extras);
}

/* The address in "Name <addr>" or a bare address. */
static void spec_address(struct strbuf *out, const char *spec)
{
	const char *lt = strrchr(spec, '<'), *gt = lt ? strchr(lt, '>') : NULL;

	if (lt && gt)
		strbuf_add(out, lt + 1, gt - lt - 1);
	else
		strbuf_addstr(out, spec);
	strbuf_trim(out);
}

/* Recipient k of a notice: its To people, its Cc addresses, then MAINTAINERS'. */
static const char *rcpt_of(const struct jn_notice *x, size_t k)
{
	return k < x->to_nr		? x->to[k].email :
	       k < x->to_nr + x->cc.nr ? x->cc.v[k - x->to_nr] :
					  x->extras[k - x->to_nr - x->cc.nr].spec;
}

static size_t rcpt_nr(const struct jn_notice *x)
{
	return x->to_nr + x->cc.nr + x->route.nr;
}

/* Is `addr` a journey list (journey.list, for every tree or for some)? */
static int is_journey_list(const struct config *cfg, const char *addr)
{
	return (cfg->journey.list && !strcasecmp(cfg->journey.list, addr)) ||
	       has_address(&cfg->journey.lists, addr);
}

/* journey.digest: each recipient (To or Cc of some event) gets one mail with theirs. */
static int digests(struct journey_night *jn, struct jn_notice *x, size_t nr)
{
	struct strvec addrs = STRVEC_INIT, names = STRVEC_INIT;
	struct notice_journey *mine = xcalloc(nr + 1, sizeof(*mine));
	struct strbuf a = STRBUF_INIT;
	size_t i, k, r;
	int error = 0, ret;

	for (i = 0; i < nr; i++) {
		for (k = 0; k < rcpt_nr(&x[i]); k++) {
			strbuf_reset(&a);
			spec_address(&a, rcpt_of(&x[i], k));
			if (!a.len || has_address(&addrs, a.buf))
				continue;
			strvec_push(&addrs, a.buf);
			strvec_push(&names,
				    k < x[i].to_nr && x[i].to[k].name ? x[i].to[k].name : "");
		}
	}
	for (r = 0; r < addrs.nr && !error; r++) {
		struct notice_journey_digest d = {
			.date = jn->o.date, .next_tag = jn->o.next_tag,
			.to = { names.v[r], addrs.v[r] }, .events = mine,
			.to_list = is_journey_list(jn->cfg, addrs.v[r]),
		};

		d.events_nr = 0;
		for (i = 0; i < nr; i++)
			for (k = 0; k < rcpt_nr(&x[i]); k++) {
				strbuf_reset(&a);
				spec_address(&a, rcpt_of(&x[i], k));
				if (!strcasecmp(a.buf, addrs.v[r])) {
					mine[d.events_nr++] = x[i].n;
					break;
				}
			}
		if ((ret = notice_queue_journey_digest(jn->o.settings, &d)) < 0)
			error = ret;
	}
	free(mine);
	strvec_clear(&addrs);
	strvec_clear(&names);
	strbuf_release(&a);
	return error;
}

/*
 * The story's order within a night: the moves (added, moved, replaced, removed,
 * merged), then the gate's events; each patch's in the order they happened.
 */
static void story_order(struct journey_night *jn)
{
	struct jn_told *v = xcalloc(jn->told_nr + 1, sizeof(*v));
	size_t i, nr = 0;
	int pass;

	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < jn->told_nr; i++)
			if (gate_kind(jn->told[i].kind) == pass)
				v[nr++] = jn->told[i];
	memcpy(jn->told, v, nr * sizeof(*v));
	free(v);
}

int journey_mail(struct journey_night *jn)
{
	struct jn_notice *x = xcalloc(jn->told_nr + 1, sizeof(*x));
	size_t i;
	int error = 0, ret;

	if (!jn->told_nr || !jn->o.settings) {
		free(x);
		return 0;
	}
	log_progress("journeys: %zu events to tell", jn->told_nr);
	story_order(jn);
	for (i = 0; i < jn->told_nr; i++) {
		build(&x[i], jn, &jn->told[i]);
		x[i].n.hook_only = jn->cfg->journey.digest;
		if ((ret = notice_queue_journey(jn->o.settings, &x[i].n)) < 0)
			error = ret;
	}
	if (jn->cfg->journey.digest && (ret = digests(jn, x, jn->told_nr)) < 0)
		error = ret;
	for (i = 0; i < jn->told_nr; i++)
		release(&x[i]);
	free(x);
	return error;
}
