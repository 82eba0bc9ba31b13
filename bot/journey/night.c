/* A night of journeys: what is where tonight, the review gate's holds, the events, the store. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bot/journey/night_int.h"
#include "bot/people/people.h"
#include "merge/transport/transport.h"
#include "merge/repo/repo.h"
#include "util/error.h"
#include "util/log.h"
#include "util/metrics.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* ---- the trees followed tonight ---- */

static const struct config_gate *gate_of(const struct config *cfg, const char *name)
{
	size_t i;

	for (i = 0; i < cfg->gates_nr; i++)
		if (config_globs_match(&cfg->gates[i].trees, name))
			return &cfg->gates[i];
	return NULL;
}

/*
 * A merged tree of the family (same url) of a tree with a hold gate (mm-stable beside
 * mm-next): where a held patch moves on to, so followed too, whatever journey.trees
 * says: that it stays held there (review_gate.follow), or is told released.
 */
static int hold_family(const struct config *cfg, const struct config_tree *t)
{
	size_t i, k;

	for (i = 0; i < cfg->gates_nr; i++) {
		const struct config_gate *g = &cfg->gates[i];

		if (g->policy != CONFIG_GATE_HOLD)
			continue;
		for (k = 0; k < cfg->trees_nr; k++)
			if (config_globs_match(&g->trees, cfg->trees[k].name) &&
			    cfg->trees[k].url && t->url && !strcmp(cfg->trees[k].url, t->url))
				return 1;
	}
	return 0;
}

static void follow(struct journey_night *jn, const struct config_tree *t, int is_watch,
		   const struct nb_oid *tip)
{
	const struct config *cfg = jn->cfg;
	struct jn_tree *jt;
	int told = config_globs_match(&cfg->journey.trees, t->name);
	const struct config_gate *gate = gate_of(cfg, t->name);

	if (!told && !gate && (is_watch || !hold_family(cfg, t)))
		return;
	jn->trees = xrealloc(jn->trees, (jn->trees_nr + 1) * sizeof(*jn->trees));
	jt = &jn->trees[jn->trees_nr++];
	memset(jt, 0, sizeof(*jt));
	jt->cfg = t;
	jt->is_watch = is_watch;
	jt->told = told;
	jt->gate = gate;
	jt->baseline = !journey_tree_seen_find(&jn->store, t->name);
	if (tip)
		jt->tip = *tip;
}

/* The watched branches, fetched as trees are (refs/feeds/<name>), never merged. */
static void fetch_watch(struct journey_night *jn, struct nb_oid *tips)
{
	const struct config *cfg = jn->cfg;
	struct fetch_tree *ft = xcalloc(cfg->watch_nr, sizeof(*ft));
	struct fetch_result *res = xcalloc(cfg->watch_nr, sizeof(*res));
	struct fetch_creds creds = { .token_env = cfg->git.token_env,
				     .ssh_key = cfg->git.ssh_key, .ca_file = cfg->git.ca_file,
				     .idle_timeout = cfg->git.fetch_timeout };
	size_t i;

	for (i = 0; i < cfg->watch_nr; i++) {
		ft[i].name = cfg->watch[i].name;
		ft[i].url = cfg->watch[i].url;
		ft[i].branch = cfg->watch[i].branch;
	}
	log_progress("fetching %zu watched branches", cfg->watch_nr);
	/* never_merge is about merging: a watched branch is fetched whatever it says */
	if (fetch_trees(res, jn->o.repo, ft, cfg->watch_nr, &creds, NULL) < 0)
		log_warn("watch: %s", nb_error_last());
	for (i = 0; i < cfg->watch_nr; i++) {
		if (res[i].state == FETCH_FETCHED || res[i].state == FETCH_STALE)
			tips[i] = res[i].tip;
		if (res[i].state != FETCH_FETCHED)
			log_warn("watch: %s: %s", cfg->watch[i].name,
				 res[i].reason ? res[i].reason : fetch_state_name(res[i].state));
		fetch_result_release(&res[i]);
	}
	free(res);
	free(ft);
}

/* ---- drops, flags, the gate ---- */

/* The active drop naming a version of journey j, or NULL. */
static const struct drop *drop_of(const struct journey_night *jn, const struct journey *jr)
{
	const struct state *st = jn->o.st;
	size_t i, v;

	for (i = 0; st && i < st->drops_nr; i++) {
		const struct drop *d = &st->drops[i];

		for (v = 0; d->active && v < jr->versions_nr; v++) {
			const struct journey_version *ver = &jr->versions[v];

			/* by Message-ID only without a patch-id: never a claim's */
			if (nb_patchid_eq(&ver->patch_id, &d->patch_id) ||
			    (nb_patchid_is_none(&d->patch_id) && d->message_id &&
			     ver->message_id && !strcmp(d->message_id, ver->message_id)))
				return d;
		}
	}
	return NULL;
}

/* "it has no Reviewed-by or Acked-by by someone other than its author" (caller frees). */
static char *no_review_reason(const struct config_gate *g)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	strbuf_addstr(&sb, "it has no ");
	for (i = 0; i < g->require.nr; i++)
		strbuf_addf(&sb, "%s%s", i ? " or " : "", g->require.v[i]);
	strbuf_addstr(&sb, " by someone other than its author");
	return strbuf_detach(&sb, NULL);
}

/* The tree of the last `held` event of jr: where the hold began; NULL: none. */
static const char *held_in(const struct journey *jr)
{
	size_t i;

	for (i = jr->events_nr; i-- > 0;)
		if (jr->events[i].kind == JOURNEY_HELD_EV)
			return jr->events[i].tree;
	return NULL;
}

/*
 * The gate whose rule a patch in tree t answers to tonight: t's own, else, while a
 * hold of a gate that follows its patches (review_gate.follow, the default) has not
 * ended, that gate's, whichever tree carries the patch now.
 */
static const struct config_gate *gate_for(const struct journey_night *jn,
					  const struct journey *jr, const struct jn_tree *t)
{
	const struct config_gate *g;
	const char *where;

	if (t->gate || !jr->held || t->is_watch || !(where = held_in(jr)))
		return t->gate;
	g = gate_of(jn->cfg, where);
	return g && g->follow && g->policy == CONFIG_GATE_HOLD ? g : NULL;
}

/* Its review trailers are unverified: no reviewer's own mail carried one (caller frees). */
static char *unverified_reason(const struct config_gate *g)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	strbuf_addstr(&sb, "its ");
	for (i = 0; i < g->require.nr; i++)
		strbuf_addf(&sb, "%s%s", i ? " or " : "", g->require.v[i]);
	strbuf_addstr(&sb, " is unverified: nextbot saw no mail of the reviewer's carrying it "
			   "in the patch's thread (review_gate.verify: mail)");
	return strbuf_detach(&sb, NULL);
}

/* Which patches in gated trees lack a review, and which a hold gate keeps out. */
static void gate(struct journey_night *jn)
{
	size_t j;
	int unverified;

	for (j = 0; j < jn->store.patches_nr; j++) {
		struct jn_seen *s = &jn->seen[j];
		const struct journey *jr = &jn->store.patches[j];
		const struct jn_tree *t = s->tree >= 0 ? &jn->trees[s->tree] : NULL;
		const struct config_gate *g;

		if (!t || !(g = gate_for(jn, jr, t)))
			continue;
		s->reviewed = journey_reviewed(s->commit->people, s->commit->people_nr,
					       jr->author_name, jr->author_email, &g->require);
		unverified = s->reviewed && g->verify == CONFIG_GATE_VERIFY_MAIL &&
			     !journey_reviewed_by_mail(s->commit->people, s->commit->people_nr,
						       jr->author_name, jr->author_email,
						       &g->require, jn->o.st,
						       s->commit->message_id);
		if (unverified)
			s->reviewed = 0;
		if (s->reviewed)
			continue;
		strvec_pushf(&jn->unreviewed, "%s: %.12s (\"%s\") by %s <%s>", t->cfg->name,
			     s->commit->id.hex, s->commit->subject, jr->author_name,
			     jr->author_email);
		if (g->policy == CONFIG_GATE_HOLD && !t->is_watch && !drop_of(jn, jr))
			s->held = unverified ? unverified_reason(g) : no_review_reason(g);
		if (s->held && journey_commit_pid(jn, s->commit) < 0) /* held by it, not */
			nb_error_clear();                             /* by a Message-ID */
		jn->held_nr += s->held != NULL;
	}
}

int journey_night_begin(struct journey_night **out, const struct journey_night_opts *o)
{
	struct journey_night *jn = xcalloc(1, sizeof(*jn));
	const struct config *cfg = o->cfg;
	struct nb_oid *watch_tips = xcalloc(cfg->watch_nr + 1, sizeof(*watch_tips));
	size_t i;
	int error = 0;
	double t0 = 0, t1 = 0, c0 = 0, c1 = 0;

	*out = jn;
	jn->o = *o;
	jn->cfg = cfg;
	jn->unreviewed = (struct strvec)STRVEC_INIT;
	if (cfg->watch_nr)
		fetch_watch(jn, watch_tips);
	if (!cfg->journey.trees.nr && !cfg->gates_nr)
		goto done;
	t0 = metrics_clock();
	c0 = metrics_cpu_clock();
	if ((error = journey_store_load(&jn->store, cfg->workdir)) < 0)
		goto done;
	t1 = metrics_clock();
	c1 = metrics_cpu_clock();
	for (i = 0; i < cfg->trees_nr; i++)
		follow(jn, &cfg->trees[i], 0, o->tips ? &o->tips[i] : NULL);
	for (i = 0; i < cfg->watch_nr; i++)
		follow(jn, &cfg->watch[i], 1, &watch_tips[i]);
	log_progress("journeys: reading %zu trees", jn->trees_nr);
	if ((error = repo_open_readonly(&jn->reader, repo_gitdir(o->repo))) < 0 ||
	    (error = journey_observe(jn)) < 0)
		goto done;
	/*
	 * the patch-ids that waited are filled in on a night that read new commits, at
	 * most one for each (and 200): a night on unchanged trees reads nothing new and
	 * spends nothing, so the journeys cost a night in proportion to what changed
	 */
	journey_patch_ids(jn, jn->read_nr < JOURNEY_PID_BUDGET ? jn->read_nr : JOURNEY_PID_BUDGET);
	gate(jn);
	jn->active = 1;
	log_verbose("journeys: store read in %.2f s (cpu %.3f s, %zu patches), trees read and "
		    "matched in %.2f s (cpu %.3f s, %zu commits, %zu read anew, %zu patch-ids)",
		    t1 - t0, c1 - c0, jn->store.patches_nr, metrics_clock() - t1,
		    metrics_cpu_clock() - c1, jn->tonight_nr, jn->read_nr, jn->pid_nr);
done:
	if (error < 0)
		nb_error_prefix("journeys: ");
	free(watch_tips);
	repo_free(jn->reader);
	jn->reader = NULL;
	return error;
}

/* Is tonight's commit c the held patch of seen s (same commit, Message-ID or patch-id)? */
static int same_patch(const struct journey_commit *c, const struct jn_seen *s)
{
	const struct journey_commit *h = s->commit;

	if (nb_oid_equal(&c->id, &h->id))
		return 1;
	if (c->pid_known && h->pid_known && !nb_patchid_is_none(&c->patch_id) &&
	    !nb_patchid_is_none(&h->patch_id))
		return nb_patchid_eq(&c->patch_id, &h->patch_id);
	/* a Message-ID alone is a claim: it names the held patch only by the same author */
	return c->message_id && h->message_id && !strcmp(c->message_id, h->message_id) &&
	       c->author_email && h->author_email && !strcasecmp(c->author_email, h->author_email);
}

/*
 * Left out of tree t's merge: the commits of t that carry a held patch, whichever
 * tree the journey saw it in first (a held patch stays held in every tree).
 */
void journey_night_held(const struct journey_night *jn, const char *tree,
			struct nb_patchid_list *patch_ids, struct strvec *message_ids)
{
	int ti = jn && jn->active && jn->held_nr ? journey_tree_index(jn, tree) : -1;
	const struct jn_tree *t = ti >= 0 ? &jn->trees[ti] : NULL;
	size_t i, j, x, nr = 0, *held = t ? xcalloc(jn->held_nr, sizeof(*held)) : NULL;

	for (j = 0; t && j < jn->store.patches_nr && nr < jn->held_nr; j++)
		if (jn->seen[j].held)
			held[nr++] = j;
	for (i = 0; t && i < t->commits_nr; i++) {
		const struct journey_commit *c;

		if (!jmap_get(&jn->by_commit, t->commits[i].hex, &x))
			continue;
		c = &jn->tonight[x];
		for (j = 0; j < nr; j++) {
			if (!same_patch(c, &jn->seen[held[j]]))
				continue;
			if (c->pid_known && !nb_patchid_is_none(&c->patch_id))
				nb_patchid_list_push(patch_ids, &c->patch_id);
			else if (c->message_id)
				strvec_push(message_ids, c->message_id);
			break;
		}
	}
	free(held);
}

void journey_night_unreviewed(const struct journey_night *jn, struct strvec *out)
{
	size_t i;

	for (i = 0; jn && i < jn->unreviewed.nr; i++)
		strvec_push(out, jn->unreviewed.v[i]);
}

/* ---- tonight's events ---- */

static int left_out(const struct jn_tree *t, const struct nb_oid *commit)
{
	return t->left_out && strvec_contains(t->left_out, commit->hex);
}

/*
 * Held because a held patch is missing: a commit of a hold-gated tree that the merge
 * left out although nothing holds or drops it did not apply without the held ones.
 */
static void cascade(struct journey_night *jn)
{
	size_t j, k;

	for (j = 0; j < jn->store.patches_nr; j++) {
		struct jn_seen *s = &jn->seen[j];
		const struct jn_tree *t = s->tree >= 0 ? &jn->trees[s->tree] : NULL;
		const char *first = NULL;
		size_t held = 0;

		if (!t || s->held || !left_out(t, &s->commit->id) ||
		    drop_of(jn, &jn->store.patches[j]))
			continue;
		for (k = 0; k < jn->store.patches_nr; k++)
			if (jn->seen[k].tree == s->tree && jn->seen[k].held &&
			    !strstr(jn->seen[k].held, "does not apply")) {
				first = first ? first : jn->store.patches[k].subject;
				held++;
			}
		if (!held)
			continue; /* left out for another reason (a drop's replay): no hold */
		s->held = held == 1 ? xstrfmt("it does not apply without a held patch (\"%s\")",
					      first) :
				      xstrfmt("it does not apply without the %zu held patches of "
					      "the %s tree", held, t->cfg->name);
	}
}

static void tell(struct journey_night *jn, size_t j, enum notice_journey_kind kind, int tree,
		 int from, const char *reason)
{
	const struct jn_tree *t = tree >= 0 ? &jn->trees[tree] : NULL;
	const struct jn_tree *f = from >= 0 ? &jn->trees[from] : NULL;
	int gate_kind = kind == NOTICE_REVIEW_MISSING || kind == NOTICE_PATCH_HELD ||
			kind == NOTICE_PATCH_RELEASED;
	struct jn_told *e;

	if (jn->o.no_notify || (t && t->baseline))
		return;
	/* the gate's events come of a gate (a held patch's may be in the tree it moved to) */
	if (gate_kind ? !t : !((t && t->told) || (f && f->told)))
		return;
	ALLOC_GROW(jn->told, jn->told_nr + 1, jn->told_alloc);
	e = &jn->told[jn->told_nr++];
	*e = (struct jn_told){ .j = j, .kind = kind, .tree = tree, .from = from,
			       .reason = reason ? xstrdup(reason) : NULL };
}

static struct journey_event *record(struct journey_night *jn, struct journey *jr,
				    enum journey_event_kind kind, const struct config_tree *t,
				    const char *reason)
{
	struct journey_event *e = journey_event_add(jr, jn->o.date, kind);

	e->tree = xstrdup(t ? t->name : jn->cfg->base.name);
	e->branch = xstrdup(t ? t->branch : jn->cfg->base.branch);
	e->reason = reason ? xstrdup(reason) : NULL;
	return e;
}

/* A mainline commit since last night that has one of jr's patch-ids or Message-IDs? */
static int in_mainline_commits(struct journey_night *jn, struct jmap *pids, struct jmap *mids,
			       int *loaded, const struct journey *jr)
{
	size_t v, x, nr = 0;
	struct nb_oid *ids = NULL;

	if (!*loaded) {
		*loaded = 1;
		if (!nb_oid_is_null(&jn->store.base_tip) &&
		    lookup_commit_ids(&ids, &nr, jn->reader, jn->cfg->base.name, jn->o.base_tip,
				      &jn->store.base_tip, 20000) < 0)
			log_warn("journeys: %s", nb_error_last());
		for (x = 0; x < nr; x++) {
			struct lookup_patch lp;

			if (lookup_commit(&lp, jn->reader, NULL, &ids[x]) < 0)
				continue;
			if (!nb_patchid_is_none(&lp.patch_id))
				jmap_put(pids, NB_PATCHID_HEX(&lp.patch_id), 1);
			jmap_put(mids, lp.message_id, 1);
			lookup_patch_release(&lp);
		}
		free(ids);
		nb_error_clear();
	}
	for (v = 0; v < jr->versions_nr; v++)
		if ((!nb_patchid_is_none(&jr->versions[v].patch_id) &&
		     jmap_get(pids, NB_PATCHID_HEX(&jr->versions[v].patch_id), &x)) ||
		    jmap_get(mids, jr->versions[v].message_id, &x))
			return 1;
	return 0;
}

/* Why a patch left its branch, when nextbot knows: a flag of it. */
static char *removal_reason(const struct journey_night *jn, const struct journey *jr)
{
	const struct state *st = jn->o.st;
	size_t i, v;

	for (i = 0; st && i < st->flags_nr; i++) {
		const struct flag *f = &st->flags[i];

		for (v = 0; v < jr->versions_nr; v++)
			if (nb_patchid_eq(&jr->versions[v].patch_id, &f->patch_id) ||
			    (f->commit && !strcmp(f->commit, jr->versions[v].commit.hex)))
				return xstrfmt("it was flagged for a %s (flag %s)",
					       f->kind == FLAG_TEST_FAILURE ? "test failure" :
					       f->kind == FLAG_FLAKY	     ? "flaky test" :
										"build failure",
					       f->id);
	}
	return NULL;
}

struct mainline_memo {
	struct jmap pids, mids;
	int loaded;
};

static void departed(struct journey_night *jn, size_t j, struct mainline_memo *mm)
{
	struct journey *jr = &jn->store.patches[j];
	const struct jn_seen *s = &jn->seen[j];
	const struct nb_oid *last = &jr->versions[jr->versions_nr - 1].commit;
	const struct drop *d = drop_of(jn, jr);
	char *why = NULL;

	if (lookup_contains(jn->reader, jn->o.base_tip, last) == 1 ||
	    in_mainline_commits(jn, &mm->pids, &mm->mids, &mm->loaded, jr)) {
		record(jn, jr, JOURNEY_MERGED_EV, NULL, NULL);
		jr->state = JOURNEY_MERGED;
		tell(jn, j, NOTICE_PATCH_MERGED, -1, s->old_tree, NULL);
	} else {
		why = d ? xstrfmt("it was dropped: %s", d->reason ? d->reason : "by a maintainer")
			: removal_reason(jn, jr);
		record(jn, jr, JOURNEY_REMOVED, jn->trees[s->old_tree].cfg, why);
		jr->state = d ? JOURNEY_DROPPED : JOURNEY_GONE;
		if (!d) /* a maintainer's drop got its `dropped` mail: nothing more */
			tell(jn, j, NOTICE_PATCH_REMOVED, s->old_tree, -1, why);
	}
	nb_error_clear();
	free(why);
	journey_str_free(jr, jr->tree);
	jr->tree = NULL;
	journey_str_free(jr, jr->held);
	jr->held = NULL;
}

/* Arrived, replaced, moved: the events of a journey present tonight. */
static void present(struct journey_night *jn, size_t j)
{
	struct journey *jr = &jn->store.patches[j];
	struct jn_seen *s = &jn->seen[j];
	const struct jn_tree *t = &jn->trees[s->tree];

	if (s->is_new || !jr->tree) {
		record(jn, jr, JOURNEY_ADDED, t->cfg, s->note);
		tell(jn, j, NOTICE_PATCH_ADDED, s->tree, -1, NULL);
	} else {
		if (s->replaced) {
			record(jn, jr, JOURNEY_REPLACED, t->cfg, NULL);
			tell(jn, j, NOTICE_PATCH_REPLACED, s->tree, -1, NULL);
		}
		if (strcmp(jr->tree, t->cfg->name)) {
			record(jn, jr, JOURNEY_MOVED, t->cfg, NULL)->from = xstrdup(jr->tree);
			tell(jn, j, NOTICE_PATCH_MOVED, s->tree, s->old_tree, NULL);
		}
	}
	if (!jr->tree || strcmp(jr->tree, t->cfg->name)) {
		journey_str_free(jr, jr->tree);
		jr->tree = xstrdup(t->cfg->name);
		journey_str_free(jr, jr->since);
		jr->since = xstrdup(jn->o.date);
	}
	journey_str_free(jr, jr->last_seen);
	jr->last_seen = xstrdup(jn->o.date);
	if (s->commit->subject != jr->subject) { /* a borrowed one is jr's own */
		char *subject = xstrdup(s->commit->subject);

		journey_str_free(jr, jr->subject);
		jr->subject = subject;
	}
}

/* Next merged commit c of tree t tonight and reverted it. */
static int reverted(const struct jn_tree *t, const struct nb_oid *commit)
{
	return t->reverted && strvec_contains(t->reverted, commit->hex);
}

static void state_of(struct journey_night *jn, size_t j)
{
	struct journey *jr = &jn->store.patches[j];
	const struct jn_seen *s = &jn->seen[j];
	const struct jn_tree *t = &jn->trees[s->tree];
	const struct drop *d = drop_of(jn, jr);

	if (d) {
		if (jr->state != JOURNEY_DROPPED)
			record(jn, jr, JOURNEY_DROPPED_EV, t->cfg, d->reason);
		jr->state = JOURNEY_DROPPED;
	} else if (s->held) {
		jr->state = JOURNEY_HELD;
	} else if (t->is_watch) {
		jr->state = JOURNEY_WATCHED;
	} else if (t->in_next && !left_out(t, &s->commit->id)) {
		jr->state = reverted(t, &s->commit->id) ? JOURNEY_REVERTED : JOURNEY_IN_NEXT;
	} else {
		jr->state = JOURNEY_IN_TREE;
	}
}

/* Why a hold ended, told with `released` (the patch is in next tonight); caller frees. */
static char *release_reason(const struct journey_night *jn, const struct journey *jr,
			    const struct jn_seen *s)
{
	const struct jn_tree *t = &jn->trees[s->tree];
	const char *where = held_in(jr);
	const struct config_gate *g = where ? gate_of(jn->cfg, where) : NULL;

	if (s->reviewed || (g && journey_reviewed(s->commit->people, s->commit->people_nr,
						  jr->author_name, jr->author_email, &g->require)))
		return xstrdup("its review has landed");
	if (jr->held && strstr(jr->held, "does not apply"))
		return xstrdup("the held patches it needed are in next");
	if (!g)
		return xstrfmt("the review gate of the %s tree that held it is no longer "
			       "configured", where ? where : "?");
	if (!g->follow && !t->gate)
		return xstrfmt("it moved on to the %s tree, which has no review gate, and "
			       "review_gate.follow is off for the %s tree", t->cfg->name, where);
	return xstrdup("its hold ended");
}

/*
 * The review gate's events: held (with what review-missing would have said), and,
 * once the patch is in next, released.  A hold that ends any other way (a drop, a
 * removal, mainline) is told by that event's own notice; one whose patch is not in
 * next tonight (its tree's merge failed) is released the night it enters next.
 * review-missing goes alone only where nothing holds the patch (policy report).
 */
static void gate_events(struct journey_night *jn, size_t j)
{
	struct journey *jr = &jn->store.patches[j];
	const struct jn_seen *s = &jn->seen[j];
	const struct jn_tree *t = &jn->trees[s->tree];
	char *why;

	if (t->gate && !s->reviewed && !strvec_contains(&jr->told, t->cfg->name)) {
		strvec_push(&jr->told, t->cfg->name);
		if (!s->held)
			tell(jn, j, NOTICE_REVIEW_MISSING, s->tree, -1, NULL);
	}
	if (s->held && !jr->held) {
		record(jn, jr, JOURNEY_HELD_EV, t->cfg, s->held);
		tell(jn, j, NOTICE_PATCH_HELD, s->tree, -1, s->held);
	} else if (!s->held && jr->held && jr->state == JOURNEY_IN_NEXT) {
		why = release_reason(jn, jr, s);
		record(jn, jr, JOURNEY_RELEASED, t->cfg, why);
		tell(jn, j, NOTICE_PATCH_RELEASED, s->tree, -1, why);
		free(why);
	} else if (!s->held && jr->held && jr->state != JOURNEY_DROPPED) {
		return; /* still waiting to enter next: its release is told then */
	}
	journey_str_free(jr, jr->held);
	jr->held = s->held ? xstrdup(s->held) : NULL;
}

static void events(struct journey_night *jn)
{
	struct mainline_memo mm = { { 0 }, { 0 }, 0 };
	size_t j, n = jn->store.patches_nr;

	for (j = 0; j < n; j++) {
		const struct jn_seen *s = &jn->seen[j];

		if (s->tree >= 0) {
			present(jn, j);
			state_of(jn, j);
			gate_events(jn, j);
		} else if (jn->store.patches[j].tree && s->old_tree >= 0 &&
			   !nb_oid_is_null(&jn->trees[s->old_tree].tip)) {
			departed(jn, j, &mm);
		}
	}
	jmap_clear(&mm.pids);
	jmap_clear(&mm.mids);
}

/*
 * The trees' tips kept from gc for tomorrow's range-diffs: one commit whose parents
 * they are, under JOURNEY_KEEP_REF, written when one changed.  The refs one tree each
 * (refs/nextbot/journey/<tree>) that nights before kept are removed the first time.
 */
#define JOURNEY_KEEP_REF "refs/nextbot/journeys"
#define JOURNEY_OLD_REFS "refs/nextbot/journey/"

static void keep_tips(struct journey_night *jn)
{
	const struct journey_store *st = &jn->store;
	struct nb_oid *tips = xcalloc(st->trees_nr + 1, sizeof(*tips)), old;
	size_t t;

	for (t = 0; t < st->trees_nr; t++)
		tips[t] = st->trees[t].tip;
	if (repo_keep_commits(jn->o.repo, JOURNEY_KEEP_REF, tips, st->trees_nr) < 0) {
		log_warn("journeys: %s", nb_error_last());
		goto done;
	}
	for (t = 0; t < st->trees_nr; t++) {
		char *ref = xstrfmt(JOURNEY_OLD_REFS "%s", st->trees[t].name);

		nb_oid_clear(&old);
		if (repo_ref_get(jn->o.repo, ref, &old) == 0 &&
		    repo_ref_set(jn->o.repo, ref, NULL) < 0)
			log_warn("journeys: %s", nb_error_last());
		nb_error_clear();
		free(ref);
		if (t == 0 && nb_oid_is_null(&old))
			break; /* the first tree has none: nor have the others */
	}
done:
	free(tips);
}

/* Tonight becomes last night: the trees' tips (kept from gc for range-diffs) and commits. */
static int keep(struct journey_night *jn)
{
	struct journey_store *st = &jn->store;
	size_t t;
	int moved = 0;

	for (t = 0; t < jn->trees_nr; t++) {
		struct jn_tree *jt = &jn->trees[t];
		struct journey_tree_seen *seen = journey_tree_seen_find(st, jt->cfg->name);

		if (nb_oid_is_null(&jt->tip))
			continue;
		if (!seen) {
			ALLOC_GROW(st->trees, st->trees_nr + 1, st->trees_alloc);
			seen = &st->trees[st->trees_nr++];
			memset(seen, 0, sizeof(*seen));
			seen->name = xstrdup(jt->cfg->name);
		}
		moved |= !nb_oid_equal(&seen->tip, &jt->tip) || jt->baseline;
		seen->tip = jt->tip;
		seen->base = *jn->o.base_tip;
		free(seen->commits);
		seen->commits = jt->commits;
		seen->commits_nr = jt->commits_nr;
		jt->commits = NULL;
		jt->commits_nr = 0;
	}
	if (moved)
		keep_tips(jn);
	free(st->date);
	st->date = xstrdup(jn->o.date);
	st->base_tip = *jn->o.base_tip;
	return journey_store_save(st, jn->cfg->workdir);
}

int journey_night_end(struct journey_night *jn, const struct journey_tree_outcome *trees,
		      size_t nr)
{
	size_t i;
	int ti, error;
	double t0, t1, t2, c0, c1, c2;

	if (!jn || !jn->active)
		return 0;
	if ((error = repo_open_readonly(&jn->reader, repo_gitdir(jn->o.repo))) < 0) {
		nb_error_prefix("journeys: ");
		return error;
	}
	for (i = 0; i < nr; i++)
		if ((ti = journey_tree_index(jn, trees[i].name)) >= 0) {
			jn->trees[ti].in_next = trees[i].in_next;
			jn->trees[ti].left_out = trees[i].left_out;
			jn->trees[ti].reverted = trees[i].reverted;
		}
	t0 = metrics_clock();
	c0 = metrics_cpu_clock();
	cascade(jn);
	events(jn);
	t1 = metrics_clock();
	c1 = metrics_cpu_clock();
	if ((error = journey_mail(jn)) < 0)
		log_warn("journeys: notices: %s", nb_error_last());
	t2 = metrics_clock();
	c2 = metrics_cpu_clock();
	if ((error = keep(jn)) < 0)
		nb_error_prefix("journeys: ");
	log_verbose("journeys: events in %.2f s (cpu %.3f s), %zu notices in %.2f s (cpu %.3f s), "
		    "kept in %.2f s (cpu %.3f s)", t1 - t0, c1 - c0, jn->told_nr, t2 - t1, c2 - c1,
		    metrics_clock() - t2, metrics_cpu_clock() - c2);
	return error;
}

void journey_night_free(struct journey_night *jn)
{
	size_t i;

	if (!jn)
		return;
	for (i = 0; i < jn->trees_nr; i++)
		free(jn->trees[i].commits);
	free(jn->trees);
	for (i = 0; i < jn->tonight_nr; i++)
		journey_commit_release(&jn->tonight[i]);
	free(jn->tonight);
	for (i = 0; i < jn->seen_alloc; i++) {
		free(jn->seen[i].held);
		free(jn->seen[i].note);
	}
	free(jn->seen);
	for (i = 0; i < jn->told_nr; i++)
		free(jn->told[i].reason);
	free(jn->told);
	jmap_clear(&jn->by_pid);
	jmap_clear(&jn->by_msgid);
	jmap_clear(&jn->by_commit);
	jmap_clear(&jn->by_cache);
	jmap_clear(&jn->by_tree);
	repo_free(jn->reader);
	people_free(jn->people);
	strvec_clear(&jn->unreviewed);
	journey_store_release(&jn->store);
	free(jn);
}
