/* The nightly run's flow: fetch, base check, merge in order, check, act, tag, record. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bot/core/botutil.h"
#include "bot/journey/journey.h"
#include "bot/night/night.h"
#include "bot/night/promfile_int.h"
#include "merge/integrate/integrate.h"
#include "merge/repo/repo.h"
#include "merge/transport/transport.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/log.h"
#include "util/metrics.h"
#include "util/xalloc.h"
#include "util/utf8.h"
#include "util/banned.h"

static void set_state(struct night_tree *t, enum tree_state state, const char *reason)
{
	t->state = state;
	free(t->reason);
	t->reason = reason ? xstrdup(reason) : NULL;
}

/*
 * A tree whose tip before tonight's fetch (`old`) is not in its new history was
 * rewritten (rebased or force-pushed): the night says so, as a linux-next
 * maintainer would want to know.
 */
static void note_rewritten(struct night *n, const struct nb_oid *old)
{
	size_t i;

	for (i = 0; i < n->trees_nr; i++) {
		const struct fetch_result *r = &n->trees[i].fetch;

		if (r->state != FETCH_FETCHED || nb_oid_is_null(&old[i]) ||
		    nb_oid_equal(&old[i], &r->tip) ||
		    lookup_contains(n->repo, &r->tip, &old[i]) != 0)
			continue;
		strvec_pushf(&n->run->notes, "%s was rewritten (rebased or force-pushed): its "
			     "last fetched tip %.12s is not in its history at %.12s",
			     n->trees[i].cfg->name, old[i].hex, r->tip.hex);
	}
}

static int fetch(struct night *n)
{
	struct fetch_tree *ft = xcalloc(n->trees_nr, sizeof(*ft));
	struct fetch_result *res = xcalloc(n->trees_nr, sizeof(*res));
	struct nb_oid *old = xcalloc(n->trees_nr, sizeof(*old));
	struct fetch_creds creds = { .token_env = n->cfg->git.token_env,
				     .ssh_key = n->cfg->git.ssh_key, .ca_file = n->cfg->git.ca_file,
				     .idle_timeout = n->cfg->git.fetch_timeout };
	size_t i;
	int error;
	char *ref;

	for (i = 0; i < n->trees_nr; i++) {
		ft[i].name = n->trees[i].cfg->name;
		ft[i].url = n->trees[i].cfg->url;
		ft[i].branch = n->trees[i].cfg->branch;
		ref = xstrfmt("refs/feeds/%s", ft[i].name);
		if (repo_ref_get(n->repo, ref, &old[i]) < 0)
			nb_oid_clear(&old[i]);
		free(ref);
	}
	log_progress("fetching %zu trees", n->trees_nr);
	error = fetch_trees(res, n->repo, ft, n->trees_nr, &creds,
			    (const char *const *)n->cfg->never_merge.v);
	if (error == 0) {
		repo_index_packs(n->repo);
		repo_write_commit_graph(n->repo);
	}
	for (i = 0; i < n->trees_nr; i++)
		n->trees[i].fetch = res[i];
	if (error == 0)
		note_rewritten(n, old);
	free(old);
	free(res);
	free(ft);
	if (error < 0)
		return error;
	if (n->trees[0].fetch.state != FETCH_FETCHED)
		return nb_error_set(NB_ERROR, "base %s (%s#%s) could not be fetched: %s",
				    n->cfg->base.name, n->cfg->base.url, n->cfg->base.branch,
				    n->trees[0].fetch.reason ? n->trees[0].fetch.reason
							       : "unknown");
	return 0;
}

/* Active drops as integ_drops; the arrays borrow from `pids` and the state. */
static void collect_drops(struct night *n, struct integ_drops *d, struct nb_patchid_list *pids,
		    struct strvec *mids)
{
	size_t i;

	for (i = 0; i < n->st->drops_nr; i++) {
		const struct drop *dr = &n->st->drops[i];

		if (!dr->active)
			continue;
		/*
		 * a drop without a patch-id (binary, merge) matches by Message-ID; one with
		 * a patch-id never does: another patch carrying that Message-ID (a claim)
		 * stays in (issue 38)
		 */
		if (!nb_patchid_is_none(&dr->patch_id))
			nb_patchid_list_push(pids, &dr->patch_id);
		else if (dr->message_id && *dr->message_id)
			strvec_push(mids, dr->message_id);
	}
	d->patch_ids = pids->v;
	d->patch_ids_nr = pids->nr;
	d->message_ids = (const char *const *)mids->v;
	d->message_ids_nr = mids->nr;
}

/*
 * The earlier tree whose merge tonight brought `commit` into next (before tree ti's
 * merge): its index, 0 for the base, (size_t)-1 when it cannot be told.
 */
static size_t brought_by(struct night *n, const char *hex)
{
	size_t steps = integ_night_steps_nr(n->integ), nr = 0, lo = 0, hi, i, k;
	struct nb_oid commit, *tips = xcalloc(steps + 1, sizeof(*tips));
	size_t *step = xcalloc(steps + 1, sizeof(*step)), found = (size_t)-1;

	if (nb_oid_parse(&commit, hex) < 0 ||
	    (!n->walker && repo_open_walker(&n->walker, n->repo_path) < 0))
		goto done;
	if (lookup_contains(n->walker, &n->trees[0].fetch.tip, &commit) == 1) {
		found = 0;
		goto done;
	}
	/* the tips merged so far, in order: next after merge i holds what they hold */
	for (i = 0; i < steps; i++) {
		const struct integ_step *s = integ_night_step(n->integ, i);

		if (s->kind == INTEG_STEP_MERGE && !nb_oid_is_null(&s->merged)) {
			step[nr] = i;
			tips[nr++] = s->merged;
		}
	}
	/*
	 * "one of the first m tips holds the commit" turns true once and stays true:
	 * the first such merge in log2(merges) walks over the trees' own histories
	 * (not next's chain of tonight's merge commits, 400 of them a night)
	 */
	for (hi = nr; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (lookup_contains_any(n->walker, tips, mid + 1, &commit) == 1)
			hi = mid;
		else
			lo = mid + 1;
	}
	for (k = 1; lo < nr && k < n->trees_nr && found == (size_t)-1; k++)
		if (!strcmp(n->trees[k].cfg->name, integ_night_step(n->integ, step[lo])->tree))
			found = k;
done:
	free(tips);
	free(step);
	return found;
}

/* The key of a conflict in run records: "tree/other: path path …". */
static char *conflict_key(const char *tree, const char *other, const struct strvec *paths)
{
	struct strbuf key = STRBUF_INIT;
	size_t i;

	strbuf_addf(&key, "%s/%s:", tree, other);
	for (i = 0; i < paths->nr; i++)
		strbuf_addf(&key, " %s", paths->v[i]);
	return strbuf_detach(&key, NULL);
}

/* The run before tonight's, or NULL. */
static const struct run_record *previous_run(const struct night *n, const char *date)
{
	const struct run_record *prev = NULL;
	size_t i;

	for (i = 0; i < n->st->runs_nr; i++)
		if (&n->st->runs[i] != n->run && n->st->runs[i].date &&
		    strcmp(n->st->runs[i].date, date) < 0)
			prev = &n->st->runs[i];
	return prev;
}

/* The first night of the unbroken run of nights that had conflict `key`, up to `date`. */
static const char *conflict_first_night(const struct night *n, const char *key, const char *date)
{
	const struct run_record *r;
	const char *first = date;

	while ((r = previous_run(n, first)) && strvec_contains(&r->conflicts, key))
		first = r->date;
	return first;
}

/* The last night before tonight that merged `commit` as tree `name`; NULL: none. */
static const char *night_merged(const struct night *n, const char *name, const char *commit)
{
	const char *found = NULL;
	size_t i, j;

	for (i = 0; i < n->st->runs_nr; i++) {
		const struct run_record *r = &n->st->runs[i];

		if (r == n->run || !r->tag)
			continue;
		for (j = 0; j < r->trees_nr; j++)
			if (r->trees[j].name && r->trees[j].sha1 &&
			    !strcmp(r->trees[j].name, name) && !strcmp(r->trees[j].sha1, commit))
				found = r->tag;
	}
	return found;
}

/* One side's commits as notice_commits; the lookups stay in `keep` until released. */
static void side(struct night *n, struct notice_commit **out, size_t *nr,
		 struct lookup_patches *keep, const char *tree, const struct strvec *ids)
{
	size_t i, j;

	for (i = 0; i < ids->nr; i++) {
		struct nb_oid id;

		for (j = 0; j < *nr; j++)
			if (!strcmp((*out)[j].commit, ids->v[i]))
				break;
		if (j < *nr)
			continue;
		ALLOC_GROW(keep->items, keep->nr + 1, keep->alloc);
		if (nb_oid_parse(&id, ids->v[i]) < 0 ||
		    lookup_commit(&keep->items[keep->nr], n->repo, tree, &id) < 0)
			continue;
		keep->nr++;
		*out = xrealloc(*out, (*nr + 1) * sizeof(**out));
		(*out)[*nr].tree = tree;
		(*out)[*nr].commit = ids->v[i];
		(*out)[*nr].subject = keep->items[keep->nr - 1].subject;
		(*out)[*nr].author.name = keep->items[keep->nr - 1].author_name;
		(*out)[*nr].author.email = keep->items[keep->nr - 1].author_email;
		(*nr)++;
	}
}

/* What was done instead, for the mail: the version used and the night it is from. */
static char *conflict_outcome(struct night *n, size_t ti, const struct integ_outcome *o)
{
	const char *name = n->trees[ti].cfg->name, *tag;

	if (o->state != INTEG_PREVIOUS || nb_oid_is_null(&o->merged))
		return xstrfmt("I have left the %s tree out of today's next.", name);
	tag = night_merged(n, name, o->merged.hex);
	if (tag)
		return xstrfmt("I have used the %s tree from %s (its commit %.12s) for today.",
			       name, tag, o->merged.hex);
	return xstrfmt("I have used the %s tree at its last good commit %.12s for today.", name,
		       o->merged.hex);
}

/*
 * Tonight's conflict of tree ti, as linux-next reports it: one mail per earlier tree
 * whose commits conflict ("manual merge of the vfs tree with the net-next tree"),
 * to both trees' maintainers, Cc the authors on each side and the list.  A conflict
 * the night before had too was mailed then: it is only recorded.
 */
static void conflict_notice(struct night *n, size_t ti, const struct integ_outcome *o)
{
	const struct config_tree *t = n->trees[ti].cfg;
	struct strvec others = STRVEC_INIT;
	char *outcome = conflict_outcome(n, ti, o), *note = NULL;
	size_t *by = NULL, i, j, k, nby = 0;

	if (o->resolve_dir)
		note = xstrfmt("The conflicted files of the %s tree (with conflict markers) are in "
			       "%s. Resolve them there and run `nextbot resolve %s`: the same "
			       "conflict is then resolved that way on later nights.",
			       t->name, o->resolve_dir, t->name);
	/* which earlier tree brought each commit of next's side */
	for (i = 0; i < o->conflicts_nr; i++)
		nby += o->conflicts[i].next_commits.nr;
	by = xcalloc(nby + 1, sizeof(*by));
	for (i = 0, k = 0; i < o->conflicts_nr; i++) {
		const struct integ_conflict *ic = &o->conflicts[i];

		for (j = 0; j < ic->next_commits.nr; j++, k++) {
			size_t b = brought_by(n, ic->next_commits.v[j]);
			const char *name = b == (size_t)-1 ? n->trees[0].cfg->name
							   : n->trees[b].cfg->name;

			by[k] = b == (size_t)-1 ? 0 : b;
			if (!strvec_contains(&others, name))
				strvec_push(&others, name);
		}
		if (!ic->next_commits.nr && !strvec_contains(&others, n->trees[0].cfg->name))
			strvec_push(&others, n->trees[0].cfg->name);
	}
	for (i = 0; i < others.nr; i++) {
		struct notice_conflict c = { 0 };
		struct strvec paths = STRVEC_INIT, mine = STRVEC_INIT, theirs = STRVEC_INIT;
		struct lookup_patches keep = LOOKUP_PATCHES_INIT;
		struct notice_commit *ours_v = NULL, *theirs_v = NULL;
		size_t ours_nr = 0, theirs_nr = 0, oi = 0;
		const struct config_tree *ot = notices_tree(n->cfg, others.v[i]);
		char *key;

		if (!ot)
			ot = &n->cfg->base;
		for (j = 0, k = 0; j < o->conflicts_nr; j++) {
			const struct integ_conflict *ic = &o->conflicts[j];
			int hit = !ic->next_commits.nr && ot == &n->cfg->base;

			for (oi = 0; oi < ic->next_commits.nr; oi++, k++)
				if (!strcmp(n->trees[by[k]].cfg->name, ot->name)) {
					hit = 1;
					strvec_push(&mine, ic->next_commits.v[oi]);
				}
			if (!hit)
				continue;
			if (conflict_kind_parse(ic->kind) != CONFLICT_CONTENT)
				strvec_pushf(&paths, "%s (%s)", ic->path, ic->kind);
			else
				strvec_push(&paths, ic->path);
			for (oi = 0; oi < ic->tree_commits.nr; oi++)
				strvec_push(&theirs, ic->tree_commits.v[oi]);
		}
		side(n, &ours_v, &ours_nr, &keep, ot->name, &mine);
		side(n, &theirs_v, &theirs_nr, &keep, t->name, &theirs);
		key = conflict_key(t->name, ot->name, &paths);
		c.date = n->opts->date;
		c.next_tag = n->tag;
		c.first_date = conflict_first_night(n, key, n->opts->date);
		c.tree = t->name;
		c.other = ot->name;
		c.contacts = (const char *const *)t->contacts.v;
		c.contacts_nr = t->contacts.nr;
		c.other_contacts = (const char *const *)ot->contacts.v;
		c.other_contacts_nr = ot->contacts.nr;
		c.paths = (const char *const *)paths.v;
		c.paths_nr = paths.nr;
		c.ours = ours_v;
		c.ours_nr = ours_nr;
		c.theirs = theirs_v;
		c.theirs_nr = theirs_nr;
		c.outcome = outcome;
		c.operator_note = note;
		if (!strvec_contains(&n->run->conflicts, key))
			strvec_push(&n->run->conflicts, key);
		if (!n->opts->no_notify && notices_conflict(&n->notices, &c) < 0)
			log_warn("cannot queue the conflict notice of %s: %s", t->name,
				 nb_error_last());
		free(key);
		free(ours_v);
		free(theirs_v);
		lookup_patches_release(&keep);
		strvec_clear(&paths);
		strvec_clear(&mine);
		strvec_clear(&theirs);
	}
	free(by);
	free(outcome);
	free(note);
	strvec_clear(&others);
}

/*
 * Conflicts of the night before that are gone tonight, their tree merged in
 * tonight's version: a short follow-up in each first mail's thread.
 */
static void conflicts_gone(struct night *n)
{
	const struct run_record *prev = previous_run(n, n->opts->date);
	size_t i, j;

	if (!prev || n->opts->no_notify)
		return;
	for (i = 0; i < prev->conflicts.nr; i++) {
		const char *key = prev->conflicts.v[i], *colon = strchr(key, ':');
		const char *slash = strchr(key, '/');
		struct notice_conflict c = { 0 };
		struct strvec paths = STRVEC_INIT;
		const struct night_tree *t = NULL;
		char *tree, *other, *pair;
		const char *p;
		int still = 0;

		if (!colon || !slash || slash > colon)
			continue; /* a record of an older version */
		pair = xstrndup(key, (size_t)(colon - key) + 1);
		for (j = 0; j < n->run->conflicts.nr && !still; j++)
			still = str_starts_with(n->run->conflicts.v[j], pair);
		tree = xstrndup(key, (size_t)(slash - key));
		other = xstrndup(slash + 1, (size_t)(colon - slash - 1));
		for (j = 1; j < n->trees_nr; j++)
			if (!strcmp(n->trees[j].cfg->name, tree))
				t = &n->trees[j];
		/* merged with a recorded resolution: still there, handled */
		if (!still && t && !t->rerere &&
		    (t->state == TREE_MERGED || t->state == TREE_REVERTED)) {
			for (p = colon + 1; *(p += strspn(p, " "));) {
				size_t len = strcspn(p, " ");

				strvec_push_nodup(&paths, xstrndup(p, len));
				p += len;
			}
			c.date = n->opts->date;
			c.next_tag = n->tag;
			c.first_date = conflict_first_night(n, key, prev->date);
			c.gone = 1;
			c.tree = t->cfg->name;
			c.other = other;
			c.contacts = (const char *const *)t->cfg->contacts.v;
			c.contacts_nr = t->cfg->contacts.nr;
			if (notices_tree(n->cfg, other)) {
				c.other_contacts = (const char *const *)notices_tree(n->cfg, other)
							   ->contacts.v;
				c.other_contacts_nr = notices_tree(n->cfg, other)->contacts.nr;
			}
			c.paths = (const char *const *)paths.v;
			c.paths_nr = paths.nr;
			c.outcome = xstrfmt("Tonight the %s tree merged in its current version.",
					    t->cfg->name);
			if (notices_conflict(&n->notices, &c) < 0)
				log_warn("cannot queue the follow-up of the conflict of %s: %s",
					 tree, nb_error_last());
			strvec_push(&n->gone_conflicts, pair);
			free((char *)c.outcome);
		}
		strvec_clear(&paths);
		free(pair);
		free(tree);
		free(other);
	}
}

/* Carried merge fixes right after the tree's merge; trouble goes to `notes` (the summary's). */
static void apply_fixes(struct night *n, struct night_tree *t, struct strvec *notes)
{
	struct fixes_report fr = FIXES_REPORT_INIT;
	size_t i;

	if (!t->cfg->fixes)
		return;
	if (integ_night_apply_fixes(n->integ, t->cfg->name, t->cfg->fixes, &fr) < 0) {
		strvec_pushf(notes, "%s: carried fixes not applied: %s", t->cfg->name,
			     nb_error_last());
		goto done;
	}
	for (i = 0; i < fr.nr; i++) {
		const struct fix_result *f = &fr.items[i];

		t->fixes_applied += f->state == FIX_APPLIED || f->state == FIX_APPLIED_3WAY;
		if (f->state == FIX_FAILED)
			strvec_pushf(notes, "%s: fix %s (\"%s\") no longer applies: %s",
				     t->cfg->name, f->file, f->subject, f->reason ? f->reason : "");
		else if (f->state == FIX_NOT_NEEDED)
			strvec_pushf(notes, "%s: fix %s (\"%s\") is no longer needed",
				     t->cfg->name, f->file, f->subject);
	}
done:
	fixes_report_release(&fr);
}

/* 1 when the commit `hex` is one of the first `held_*` patch-ids or Message-IDs (held). */
static int left_out_held(struct night *n, const char *hex, const struct nb_patchid_list *pids,
			 size_t held_pids, const struct strvec *mids, size_t held_mids)
{
	struct lookup_patch p = { 0 };
	struct nb_oid commit;
	size_t i;
	int held = 0;

	if (nb_oid_parse(&commit, hex) < 0 || lookup_commit(&p, n->repo, NULL, &commit) < 0) {
		nb_error_clear();
		return 0;
	}
	for (i = 0; i < held_pids && i < pids->nr && !held; i++)
		held = nb_patchid_eq(&pids->v[i], &p.patch_id);
	for (i = 0; i < held_mids && i < mids->nr && !held; i++)
		held = p.message_id && !strcmp(mids->v[i], p.message_id);
	lookup_patch_release(&p);
	return held;
}

/*
 * Why a tree's merge left patches out, each kind by its own word: "3 patches left
 * out: 2 held by the review gate, 1 dropped".  The first held_pids of `pids` and
 * held_mids of `mids` are the gate's holds, the rest the maintainers' drops.
 */
static char *left_out_why(struct night *n, const struct strvec *left_out,
			  const struct nb_patchid_list *pids, size_t held_pids,
			  const struct strvec *mids, size_t held_mids)
{
	size_t i, held = 0, dropped;

	for (i = 0; i < left_out->nr; i++)
		held += left_out_held(n, left_out->v[i], pids, held_pids, mids, held_mids);
	dropped = left_out->nr - held;
	if (!held)
		return xstrfmt("%zu dropped patch%s left out", dropped, dropped == 1 ? "" : "es");
	if (!dropped)
		return xstrfmt("%zu patch%s held by the review gate left out", held,
			       held == 1 ? "" : "es");
	return xstrfmt("%zu patches left out: %zu held by the review gate, %zu dropped",
		       left_out->nr, held, dropped);
}

/*
 * Merges tree ti at `tip` (tonight's or its good tip); records its state.  With
 * `defer` (a merge ahead of its turn), what it has to say (a conflict notice, its
 * fixes' notes) waits in the tree for accept(): a speculative merge the night does
 * not take says nothing.
 */
static int merge_one(struct night *n, size_t ti, const struct nb_oid *tip, int previous,
		     int defer)
{
	struct night_tree *t = &n->trees[ti];
	struct integ_tree it = { t->cfg->name, t->cfg->url, t->cfg->branch };
	struct integ_outcome o = INTEG_OUTCOME_INIT;
	struct nb_patchid_list pids = NB_PATCHID_LIST_INIT;
	struct strvec mids = STRVEC_INIT;
	struct integ_drops drops;
	struct nb_oid good;
	int error, have_good;
	size_t i, held_pids, held_mids;

	have_good = !previous && repo_good_get(n->repo, t->cfg->name, &good) == 0 &&
		    !nb_oid_equal(&good, tip);
	/* a review gate's held patches are left out as dropped ones are */
	journey_night_held(n->journey, t->cfg->name, &pids, &mids);
	held_pids = pids.nr;
	held_mids = mids.nr;
	collect_drops(n, &drops, &pids, &mids);
	log_progress("merging %s (%zu/%zu)", t->cfg->name, ti, n->trees_nr - 1);
	error = integ_night_merge_tree(n->integ, &o, &it, tip, have_good ? &good : NULL,
				       &drops);
	t->step = (size_t)-1;
	t->merged.hex[0] = 0;
	if (error < 0 && error != NB_EREFUSED)
		goto done;
	error = 0;
	if (o.conflicts_nr && !defer)
		conflict_notice(n, ti, &o);
	switch (o.state) {
	case INTEG_MERGED:
	case INTEG_ALREADY:
		set_state(t, previous ? TREE_PREVIOUS_VERSION
				: t->fetch.state == FETCH_STALE ? TREE_STALE : TREE_MERGED,
			    previous ? "tonight's version broke next" : t->fetch.reason);
		break;
	case INTEG_PREVIOUS:
		set_state(t, TREE_PREVIOUS_VERSION, o.reason);
		break;
	case INTEG_LEFT_OUT:
		set_state(t, TREE_LEFT_OUT, o.reason);
		break;
	}
	if (o.left_out_patches.nr && o.state != INTEG_LEFT_OUT) {
		char *why = left_out_why(n, &o.left_out_patches, &pids, held_pids, &mids,
					 held_mids);

		if (!t->reason)
			t->reason = why;
		else
			free(why);
	}
	strvec_clear(&t->left_out);
	for (i = 0; !nb_oid_is_null(&o.merged) && i < o.left_out_patches.nr; i++)
		strvec_push(&t->left_out, o.left_out_patches.v[i]);
	t->rerere = o.rerere_resolved > 0;
	if (o.rerere_resolved && !t->reason)
		t->reason = xstrfmt("conflict resolved as recorded (%zu file(s))",
				      (size_t)o.rerere_resolved);
	t->fixes_applied = 0;
	if (o.merged.hex[0]) {
		t->merged = o.merged;
		apply_fixes(n, t, defer ? &t->pending_notes : &n->run->notes);
		t->step = integ_night_steps_nr(n->integ) - 1;
	}
	if (o.conflicts_nr && defer) {
		integ_outcome_release(&t->pending);
		t->pending = o;
		t->has_pending = 1;
		o = (struct integ_outcome)INTEG_OUTCOME_INIT;
	}
done:
	integ_outcome_release(&o);
	nb_patchid_list_clear(&pids);
	strvec_clear(&mids);
	return error;
}

/*
 * Rewinds next to just before tree ti's merge (after = 0), or to just after it,
 * with what followed it before the next tree's merge (after = 1: its reverts and
 * fixes); the later trees must be merged again.
 */
static int rewind_tree(struct night *n, size_t ti, int after)
{
	size_t i, steps = integ_night_steps_nr(n->integ);
	int seen = 0;

	for (i = 0; i < steps; i++) {
		const struct integ_step *s = integ_night_step(n->integ, i);

		if (s->kind != INTEG_STEP_MERGE)
			continue;
		if (seen || (!after && !strcmp(s->tree, n->trees[ti].cfg->name)))
			return integ_night_truncate(n->integ, i);
		seen = !strcmp(s->tree, n->trees[ti].cfg->name);
	}
	return integ_night_truncate(n->integ, steps);
}

/*
 * Uses tree ti's previous version (or drops it, as on_breakage says or when it
 * has none) in place of tonight's.  next is rewound to before its merge.
 */
static int fall_back(struct night *n, size_t ti, const char *why)
{
	struct night_tree *t = &n->trees[ti];
	struct nb_oid good;
	int error;

	if ((error = rewind_tree(n, ti, 0)) < 0)
		return error;
	if (n->cfg->on_breakage != CONFIG_BREAK_DROP_TREE &&
	    repo_good_get(n->repo, t->cfg->name, &good) == 0 &&
	    !nb_oid_equal(&good, &t->fetch.tip)) {
		if ((error = merge_one(n, ti, &good, 1, 0)) < 0)
			return error;
		if (t->state == TREE_PREVIOUS_VERSION) {
			set_state(t, TREE_PREVIOUS_VERSION, why);
			return 0;
		}
		if ((error = rewind_tree(n, ti, 0)) < 0)
			return error;
	}
	integ_night_left_out(n->integ, t->cfg->name, why);
	set_state(t, TREE_LEFT_OUT, why);
	t->merged.hex[0] = 0;
	t->step = (size_t)-1;
	return 0;
}

/* Reverts f's culprit (`commit`) right after its tree's merge; falls back when it cannot. */
static int revert_culprit(struct night *n, size_t ti, struct flag *f, const struct nb_oid *commit)
{
	struct night_tree *t = &n->trees[ti];
	char *why;
	int error;

	if (n->cfg->on_breakage == CONFIG_BREAK_REVERT_CULPRIT && t->reverts < NIGHT_MAX_REVERTS) {
		why = xstrfmt("nextbot: %s broke %s (flag %s)", commit->hex, f->command, f->id);
		error = integ_night_revert(n->integ, commit, t->cfg->name, why);
		free(why);
		if (error == 0) {
			t->reverts++;
			t->state = TREE_REVERTED;
			free(t->reason);
			t->reason = xstrfmt("reverted %.12s (\"%s\")", commit->hex,
					    f->subject ? f->subject : "");
			f->action = FLAG_REVERTED;
			return 0;
		}
		if (error != NB_ECONFLICT)
			return error;
	}
	why = xstrfmt("%s broke %s (flag %s)", f->subject ? f->subject : commit->hex,
		      f->command ? f->command : "next", f->id);
	error = fall_back(n, ti, why);
	free(why);
	f->action = t->state == TREE_PREVIOUS_VERSION ? FLAG_PREVIOUS_VERSION : FLAG_DROPPED_TREE;
	return error;
}

/*
 * Carries out what the breakage handling decided (night_check.c decides; only
 * here is next changed for a breakage).  Returns 0 when next was changed (merge
 * the trees after d->tree again and recheck), 1 when nothing was to be done,
 * negative on a failure.
 */
static int carry_out(struct night *n, const struct night_decision *d)
{
	int error;

	switch (d->action) {
	case NIGHT_ACT_CULPRIT:
		if ((error = rewind_tree(n, d->tree, 1)) < 0)
			return error;
		return revert_culprit(n, d->tree, d->flag, &d->commit);
	case NIGHT_ACT_FALLBACK:
		return fall_back(n, d->tree, d->why);
	case NIGHT_ACT_NONE:
		break;
	}
	return 1;
}

/* Every failure handled in one night at most: a bound against endless loops. */
static int budget_spent(struct night *n)
{
	return ++n->rounds > (int)(n->trees_nr * 4 + 8);
}

/*
 * A breakage: night_check.c finds the culprit and decides, carry_out() acts.
 * Returns 0 when next was changed (*acted: the tree acted on), 1 when nothing was
 * done (also when the bisect budget is spent), negative on a failure.
 */
static int handle_breakage(struct night *n, struct night_failure *f, size_t *acted)
{
	struct night_decision d = NIGHT_DECISION_INIT;
	int error = budget_spent(n) ? 1 : night_handle_breakage(n, f, &d);

	if (error == 0) {
		*acted = d.tree;
		error = carry_out(n, &d);
	}
	night_decision_release(&d);
	return error;
}

/*
 * One failure of the build after tree ti's merge (`f`, released here): find the
 * culprit and act.  *next: the tree from which merging must go on; *recheck: the
 * culprit was acted on in tree ti itself, so next changed and is built again
 * (then *next is ti + 1).  Returns 0, or negative on a failure.
 */
static int after_failure(size_t *next, int *recheck, struct night *n, size_t ti,
			 struct night_failure *f)
{
	size_t acted = ti;
	int error;

	error = handle_breakage(n, f, &acted);
	night_failure_release(f);
	*next = ti + 1;
	*recheck = 0;
	if (error < 0)
		return error;
	if (error == 0 && acted != ti)
		*next = acted + 1;
	*recheck = error == 0 && acted == ti;
	return 0;
}

/*
 * Builds next after tree ti's merge; on a failure finds the culprit and acts.
 * Returns the tree from which merging must go on (ti + 1 normally; earlier when
 * a culprit in an earlier tree was acted on) in *next; 0, or negative on a failure.
 */
static int check_after(size_t *next, struct night *n, size_t ti, int with_test)
{
	*next = ti + 1;
	while (!night_past_deadline(n)) {
		struct night_failure f = { 0 };
		int error, recheck;

		unsigned what = NIGHT_CHECK_BUILD | (with_test ? NIGHT_CHECK_TEST : 0);

		if ((error = night_check_head(n, what, &f)) <= 0) {
			night_failure_release(&f);
			if (error == 0)
				n->trees[ti].checked_clean = 1;
			return error < 0 ? error : 0;
		}
		if ((error = after_failure(next, &recheck, n, ti, &f)) < 0 || !recheck)
			return error;
		with_test = 0;  /* after a revert the build is checked; the tests come last */
	}
	return 0;
}

/* A fetch that failed or was refused: the tree is left out tonight. */
static int left_out(struct night *n, size_t ti)
{
	struct night_tree *t = &n->trees[ti];
	enum tree_state ts;

	if (t->fetch.state != FETCH_FAILED && t->fetch.state != FETCH_REFUSED)
		return 0;
	ts = t->fetch.state == FETCH_FAILED ? TREE_FETCH_FAILED : TREE_LEFT_OUT;
	integ_night_left_out(n->integ, t->cfg->name, t->fetch.reason);
	set_state(t, ts, t->fetch.reason);
	return 1;
}

/* Merges tree ti and builds next after it as configured; *next: the tree to go on from. */
static int merge_step(size_t *next, struct night *n, size_t ti)
{
	struct night_tree *t = &n->trees[ti];
	int error, with_test = 0;

	t->reverts = 0;
	*next = ti + 1;
	if (left_out(n, ti))
		return 0;
	if ((error = merge_one(n, ti, &t->fetch.tip, 0, 0)) < 0)
		return error;
	if (nb_oid_is_null(&t->merged) || !n->cfg->build_nr)
		return 0;
	if (n->cfg->build_after_each_merge)
		return check_after(next, n, ti, 0);
	/*
	 * A breakage an open flag blames on this tree is checked right here, once:
	 * found at the end instead, it would be acted on there and every later merge
	 * made again
	 */
	if (night_carries(n, ti, &with_test))
		return check_after(next, n, ti, with_test);
	return 0;
}

/* ---- speculative builds ---- */

/*
 * How many prefixes of the merge order are built at once: every cell of each is
 * a job, and runner.max_jobs jobs run at once.  1: one after another, as always.
 */
static size_t window(const struct night *n)
{
	size_t w = (size_t)n->cfg->runner.max_jobs / n->cells_nr;

	if (!n->cfg->build_after_each_merge || !n->cfg->build_nr || n->checks_off)
		return 1;
	return w ? w : 1;
}

/* A merge made ahead of its turn now has it: what it had to say is said. */
static void accept(struct night *n, size_t ti)
{
	struct night_tree *t = &n->trees[ti];
	size_t i;

	if (t->has_pending)
		conflict_notice(n, ti, &t->pending);
	integ_outcome_release(&t->pending);
	t->has_pending = 0;
	for (i = 0; i < t->pending_notes.nr; i++)
		strvec_push(&n->run->notes, t->pending_notes.v[i]);
	strvec_clear(&t->pending_notes);
}

/* A merge made ahead of its turn that the night did not take: as if never made. */
static void discard(struct night *n, size_t ti)
{
	struct night_tree *t = &n->trees[ti];

	integ_outcome_release(&t->pending);
	t->has_pending = 0;
	strvec_clear(&t->pending_notes);
	set_state(t, TREE_STATE_UNSET, NULL);
	nb_oid_clear(&t->merged);
	t->step = (size_t)-1;
	t->checked_clean = 0;
}

/* One tree of a window: merged ahead, built or not, and where next stood after it. */
struct ahead {
	size_t ti;
	int check;               /* next after it is built (as a prefix) */
	struct integ_mark after;
};

/*
 * Speculative builds (build_after_each_merge with runner.max_jobs > the cells):
 * merges are cheap and builds are not, so the trees from `ti` on are merged ahead
 * of their turn until window(n) of them need a build, and next after each of them
 * is built at once (on Slurm each cell of each prefix is its own job).  The
 * results are then taken in merge order, exactly as a sequential night takes
 * them: a clean prefix goes on to the next; at the first failing one, next goes
 * back to just after that tree (the later merges leave no trace), the culprit is
 * searched and acted on as always, and the later trees are merged and built again
 * from there (mostly from the verdict cache).  The jobs of prefixes after a
 * failing one are cancelled at once.  So the night's flags, next and notices are
 * the sequential night's; only its wall time changes.  `*recheck`: tree ti - 1 was
 * acted on and next after it is built first (it is merged already).  *next: the
 * next tree to merge (with *recheck set again as needed).  Returns 0, or negative.
 */
static int merge_window(size_t *next, int *recheck, struct night *n, size_t ti)
{
	size_t w = window(n), nr = 0, checks = 0, i, j, k = ti;
	struct ahead *ah = xcalloc(n->trees_nr + 1, sizeof(*ah));
	struct nb_oid *heads = xcalloc(w + 1, sizeof(*heads));
	struct night_failure *fail = xcalloc(w + 1, sizeof(*fail));
	int *state = xcalloc(w + 1, sizeof(*state));
	int error = 0;

	*next = ti;

	if (*recheck) {
		ah[nr].ti = ti - 1;
		ah[nr].check = 1;
		integ_night_mark(n->integ, &ah[nr++].after);
		heads[checks++] = *integ_night_head(n->integ);
	}
	for (; k < n->trees_nr && checks < w; k++) {
		struct night_tree *t = &n->trees[k];

		t->reverts = 0;
		ah[nr].ti = k;
		if (!left_out(n, k)) {
			if ((error = merge_one(n, k, &t->fetch.tip, 0, 1)) < 0)
				goto done;
			ah[nr].check = !nb_oid_is_null(&t->merged);
		}
		integ_night_mark(n->integ, &ah[nr].after);
		if (ah[nr++].check)
			heads[checks++] = *integ_night_head(n->integ);
	}
	*recheck = 0;
	*next = k;
	if (checks &&
	    (error = night_check_heads(n, heads, checks, NIGHT_CHECK_BUILD, fail, state)) < 0)
		goto done;
	for (i = j = 0; i < nr; i++) {
		size_t at = ah[i].ti;

		if (i || at >= ti)
			accept(n, at);
		if (!ah[i].check)
			continue;
		j++;
		if (night_past_deadline(n) || state[j - 1] == 0) {
			/* past the deadline a sequential night builds nothing more */
			n->trees[at].checked_clean |= !night_past_deadline(n) && !state[j - 1];
			continue;
		}
		/* the first failing prefix: the night stands where a sequential one would */
		integ_night_restore(n->integ, &ah[i].after);
		for (k = i + 1; k < nr; k++)
			discard(n, ah[k].ti);
		if (state[j - 1] < 0)
			/* never known (cut off): build it again, alone */
			error = check_after(next, n, at, 0);
		else
			error = after_failure(next, recheck, n, at, &fail[j - 1]);
		goto done;
	}
done:
	for (i = 0; i < checks; i++)
		night_failure_release(&fail[i]);
	free(state);
	free(fail);
	free(heads);
	free(ah);
	return error;
}

/*
 * Merges trees from..end, checking after each merge when so configured: one
 * after another, or with speculative builds (merge_window()) when several jobs
 * may run at once.
 */
static int merge_from(struct night *n, size_t from)
{
	size_t ti = from;
	int recheck = 0;

	while (ti < n->trees_nr || recheck) {
		struct night_failure f = { 0 };
		size_t next;
		int error;

		if (window(n) > 1 && !night_past_deadline(n) && !night_disk_full(n, &f)) {
			error = merge_window(&next, &recheck, n, ti);
		} else if (recheck) {
			/* tree ti - 1 was acted on: build it again before going on */
			recheck = 0;
			error = check_after(&next, n, ti - 1, 0);
		} else {
			error = merge_step(&next, n, ti);
		}
		night_failure_release(&f);
		if (error < 0)
			return error;
		ti = next;
	}
	return 0;
}

/*
 * The final check of next with every command; on a failure find the culprit,
 * act in its tree, merge the later trees again and check again.
 */
static int final_check(struct night *n)
{
	int error;

	if (!n->cfg->build_nr && !n->cfg->test_nr)
		return 0;
	while (!night_past_deadline(n)) {
		struct night_failure f = { 0 };
		size_t acted = 0;

		if ((error = night_check_head(n, NIGHT_CHECK_ALL, &f)) <= 0) {
			night_failure_release(&f);
			n->broken = n->checks_off;
			return error;
		}
		n->broken = 1;
		error = handle_breakage(n, &f, &acted);
		night_failure_release(&f);
		if (error)
			return error < 0 ? error : 0;
		if ((error = merge_from(n, acted + 1)) < 0)
			return error;
	}
	return 0;
}

static void record_trees(struct night *n)
{
	size_t i;

	for (i = 0; i < n->trees_nr; i++) {
		struct night_tree *t = &n->trees[i];
		struct run_tree *rt = state_run_tree_add(n->run);

		rt->name = xstrdup(t->cfg->name);
		rt->branch = xstrdup(t->cfg->branch);
		if (t->merged.hex[0])
			rt->sha1 = xstrdup(t->merged.hex);
		else if (i == 0)
			rt->sha1 = xstrdup(t->fetch.tip.hex);
		rt->state = i == 0 ? TREE_MERGED : t->state ? t->state : TREE_LEFT_OUT;
		rt->reason = t->reason ? xstrdup(t->reason) : NULL;
	}
}

/* A clean night makes each tree's merged tip (tonight's own) its good tip. */
static void move_good_tips(struct night *n)
{
	size_t i;

	if (n->broken || n->unfinished)
		return;
	for (i = 1; i < n->trees_nr; i++) {
		struct night_tree *t = &n->trees[i];

		if ((t->state == TREE_MERGED || t->state == TREE_STALE) &&
		    !t->reverts && !strcmp(t->merged.hex, t->fetch.tip.hex) &&
		    repo_good_set(n->repo, t->cfg->name, &t->merged) < 0)
			log_warn("cannot record the good tip of %s: %s", t->cfg->name,
				 nb_error_last());
	}
}

static int write_run_files(struct night *n)
{
	struct strbuf sb = STRBUF_INIT;
	char *path;
	int error;

	if ((error = file_mkdir_p(n->runs_dir, 0700)) < 0)
		return error;
	path = xstrfmt("%s/merge.log", n->runs_dir);
	/* file names and subjects from the trees: valid UTF-8, no terminal escape */
	utf8_clean_text(&sb, integ_night_log(n->integ), strlen(integ_night_log(n->integ)));
	error = file_write_atomic(path, sb.buf, sb.len);
	free(path);
	strbuf_reset(&sb);
	if (!error) {
		state_run_json(&sb, n->run);
		path = xstrfmt("%s/run.json", n->runs_dir);
		error = file_write_atomic(path, sb.buf, sb.len);
		free(path);
	}
	strbuf_release(&sb);
	return error;
}

static enum run_result result(const struct night *n)
{
	if (n->unfinished)
		return RUN_UNFINISHED;
	if (n->broken || n->new_flags.nr || n->seen_flags.nr)
		return RUN_REGRESSION;
	return RUN_CLEAN;
}

/* Checks the base alone; *broken when it is broken (reported: the night stops). */
static int base_check(int *broken, struct night *n)
{
	struct night_failure f = { 0 };
	struct notice_base_broken bb = { 0 };
	int error;

	*broken = 0;
	if (!n->cfg->build_nr && !n->cfg->test_nr)
		return 0;
	log_progress("checking the base %s", n->cfg->base.name);
	if ((error = night_check_head(n, NIGHT_CHECK_ALL, &f)) <= 0) {
		night_failure_release(&f);
		return error;
	}
	if (f.infra || (f.limit && !f.timed_out)) {
		/*
		 * Nothing can be judged tonight: merge, but build and blame nothing.  A
		 * limit the base alone runs into is the limit's (the host's), never the
		 * base's: no base-broken mail.
		 */
		if (f.infra)
			strvec_pushf(&n->run->notes,
				     "infrastructure problem, nothing built or blamed: %s",
				     f.infra);
		else
			strvec_pushf(&n->run->notes,
				     "infrastructure problem, nothing built or blamed: the base "
				     "alone runs into a limit: %s %s", f.cmd ? f.cmd->name : "?",
				     f.limit);
		n->checks_off = 1;
		n->broken = 1;
		night_failure_release(&f);
		return 0;
	}
	bb.date = n->opts->date;
	bb.next_tag = n->tag;
	bb.base_name = n->cfg->base.name;
	bb.base_commit = n->trees[0].fetch.tip.hex;
	bb.command_name = f.name ? f.name : "?";
	bb.command_line = f.cmd ? f.cmd->command : "?";
	bb.exit_code = f.exit_code;
	bb.timed_out = f.timed_out;
	bb.excerpt = f.infra ? f.infra : f.excerpt;
	strvec_pushf(&n->run->notes, "base broken: %s failed (exit %d)", bb.command_name,
		     f.exit_code);
	if (!n->opts->no_notify && notice_queue_base_broken(&n->notices.settings, &bb) < 0)
		log_warn("cannot queue the base-broken notice: %s", nb_error_last());
	night_failure_release(&f);
	*broken = 1;
	return 0;
}

static void paths(struct night *n)
{
	const char *slash;

	n->runs_dir = xstrfmt("%s/runs/%s", n->cfg->workdir, n->opts->date);
	n->repo_path = xstrfmt("%s/repo.git", n->cfg->workdir);
	n->cache_dir = xstrfmt("%s/verdicts", n->cfg->workdir);
	n->workers_dir = xstrfmt("%s/workers", n->cfg->workdir);
	slash = strrchr(n->cfg->path, '/');
	n->config_abs = xstrfmt("%s/%s", n->cfg->dir, slash ? slash + 1 : n->cfg->path);
}

/* Journeys: the watched branches fetched, tonight's patches followed, holds decided. */
static void journeys_begin(struct night *n)
{
	struct nb_oid *tips = xcalloc(n->trees_nr, sizeof(*tips));
	struct journey_night_opts o = {
		.cfg = n->cfg, .repo = n->repo, .st = n->st, .date = n->opts->date,
		.next_tag = n->tag, .no_notify = n->opts->no_notify,
		.settings = &n->notices.settings, .base_tip = &n->trees[0].fetch.tip,
		.tips = tips + 1,
	};
	size_t i;

	for (i = 1; i < n->trees_nr; i++)
		if (n->trees[i].fetch.state == FETCH_FETCHED ||
		    n->trees[i].fetch.state == FETCH_STALE)
			tips[i] = n->trees[i].fetch.tip;
	if (journey_night_begin(&n->journey, &o) < 0) {
		log_warn("%s", nb_error_last());
		strvec_pushf(&n->run->notes, "%s", nb_error_last());
	}
	free(tips);
}

/* Journeys: tonight's events told and kept, once next is what it will be. */
static void journeys_end(struct night *n)
{
	struct journey_tree_outcome *out = xcalloc(n->trees_nr, sizeof(*out));
	struct strvec *reverted = xcalloc(n->trees_nr, sizeof(*reverted));
	size_t i, k, steps = n->integ ? integ_night_steps_nr(n->integ) : 0;

	for (i = 1; i < n->trees_nr; i++) {
		enum tree_state st = n->trees[i].state;

		reverted[i] = (struct strvec)STRVEC_INIT;
		for (k = 0; k < steps; k++) {
			const struct integ_step *s = integ_night_step(n->integ, k);

			if (s->kind == INTEG_STEP_REVERT && s->tree &&
			    !strcmp(s->tree, n->trees[i].cfg->name))
				strvec_push(&reverted[i], s->tip.hex);
		}
		out[i - 1].name = n->trees[i].cfg->name;
		out[i - 1].in_next = st == TREE_MERGED || st == TREE_REVERTED || st == TREE_STALE;
		out[i - 1].left_out = &n->trees[i].left_out;
		out[i - 1].reverted = &reverted[i];
	}
	if (journey_night_end(n->journey, out, n->trees_nr - 1) < 0) {
		log_warn("%s", nb_error_last());
		strvec_pushf(&n->run->notes, "%s", nb_error_last());
	}
	for (i = 1; i < n->trees_nr; i++)
		strvec_clear(&reverted[i]);
	free(reverted);
	free(out);
}

static void release(struct night *n)
{
	size_t i;

	for (i = 0; i < n->trees_nr; i++) {
		fetch_result_release(&n->trees[i].fetch);
		free(n->trees[i].reason);
		strvec_clear(&n->trees[i].left_out);
		integ_outcome_release(&n->trees[i].pending);
		strvec_clear(&n->trees[i].pending_notes);
	}
	strvec_clear(&n->gone_conflicts);
	strvec_clear(&n->compilers);
	journey_night_free(n->journey);
	free(n->trees);
	night_cells_release(n);
	integ_night_free(n->integ);
	repo_free(n->repo);
	repo_free(n->walker);
	notices_release(&n->notices);
	strvec_clear(&n->new_flags);
	strvec_clear(&n->seen_flags);
	strvec_clear(&n->known_errors);
	strvec_clear(&n->resolved);
	free(n->runs_dir);
	free(n->repo_path);
	free(n->cache_dir);
	free(n->workers_dir);
	free(n->config_abs);
}

static void begin(struct night *n, const struct config *cfg, const struct night_opts *opts,
		    struct state *st)
{
	char stamp[32], compact[9];
	size_t i;

	memset(n, 0, sizeof(*n));
	n->cfg = cfg;
	n->opts = opts;
	n->st = st;
	n->new_flags = n->seen_flags = n->resolved = n->gone_conflicts =
		n->compilers = n->known_errors = (struct strvec)STRVEC_INIT;
	nextfiles_compact_date(compact, opts->date);
	snprintf(n->tag, sizeof(n->tag), "next-%s", compact);
	paths(n);
	night_cells_init(n);
	notices_init(&n->notices, cfg);
	n->notices.st = st;
	/* tonight's notices go out in the story's order, whenever each is queued */
	n->notices.settings.order_epoch = time(NULL);
	n->trees_nr = cfg->trees_nr + 1;
	n->trees = xcalloc(n->trees_nr, sizeof(*n->trees));
	n->trees[0].cfg = &cfg->base;
	for (i = 0; i < cfg->trees_nr; i++)
		n->trees[i + 1].cfg = &cfg->trees[i];
	for (i = 0; i < n->trees_nr; i++) {
		n->trees[i].step = (size_t)-1;
		n->trees[i].pending = (struct integ_outcome)INTEG_OUTCOME_INIT;
		n->trees[i].pending_notes = (struct strvec)STRVEC_INIT;
	}
	n->run = state_run_begin(st, opts->date);
	n->notices.settings.queued_ids = &n->run->notices;
	bot_rfc3339(stamp, sizeof(stamp), time(NULL));
	n->run->started = xstrdup(stamp);
	n->run->result = RUN_FAILED;
	n->deadline = config_deadline_at(cfg, time(NULL));
}

/* Merges and checks next; a broken base ends it early with RUN_BASE_BROKEN recorded. */
static int merge_night(struct night *n)
{
	struct integ_tree base = { n->cfg->base.name, n->cfg->base.url, n->cfg->base.branch };
	char *memo;
	int error, broken;

	if ((error = integ_night_new(&n->integ, n->repo, n->opts->date, &base,
				     n->cfg->merge_identity,
				     (const char *const *)n->cfg->never_merge.v)) < 0)
		return error;
	integ_night_set_rerere(n->integ, n->cfg->workdir);
	if ((error = base_check(&broken, n)) < 0)
		return error;
	if (broken) {
		n->run->result = RUN_BASE_BROKEN;
		return 0;
	}
	memo = xstrfmt("%s/merge-memo", n->cfg->workdir);
	integ_night_set_memo(n->integ, memo);
	free(memo);
	error = merge_from(n, 1);
	if (error >= 0)
		error = final_check(n);
	if (integ_night_memo_save(n->integ) < 0)
		log_warn("merge memo not saved (the next night merges everything again): %s",
			 nb_error_last());
	return error;
}

/* Pushes next and the tag; a failed push is reported and loses nothing. */
static void publish(struct night *n)
{
	struct fetch_creds cr = { .token_env = n->cfg->git.token_env,
				  .ssh_key = n->cfg->git.ssh_key, .ca_file = n->cfg->git.ca_file,
				  .idle_timeout = n->cfg->git.fetch_timeout };

	if (!n->cfg->publish.url)
		return;
	log_progress("publishing next to %s", n->cfg->publish.url);
	if (push_publish(n->repo, n->cfg->publish.url, n->cfg->publish.branch, n->tag, &cr) < 0) {
		log_warn("publish: %s", nb_error_last());
		strvec_pushf(&n->run->notes, "publishing to %s failed: %s", n->cfg->publish.url,
			     nb_error_last());
		return;
	}
	repro_mark_published(n);
}

static void stamp_finished(struct night *n)
{
	char stamp[32];

	bot_rfc3339(stamp, sizeof(stamp), time(NULL));
	free(n->run->finished);
	n->run->finished = xstrdup(stamp);
}

static int finish(struct night *n)
{
	struct nb_oid head;
	int error;

	if ((error = integ_night_finish(n->integ, &head)) < 0)
		return error;
	n->run->tag = xstrdup(n->tag);
	n->run->next = xstrdup(head.hex);
	publish(n);
	if (night_past_deadline(n) && (n->broken || n->unfinished)) {
		n->unfinished = 1;
		strvec_pushf(&n->run->notes, "%s before next was clean", night_stop_event());
	}
	move_good_tips(n);
	n->run->result = result(n);
	stamp_finished(n);
	return 0;
}

static int night(struct night *n)
{
	double t = metrics_clock();
	int error;

	if ((error = repo_open(&n->repo, n->repo_path)) < 0)
		return error;
	night_disk_begin(n);
	if ((error = fetch(n)) < 0)
		return error;
	n->phase.fetch = metrics_clock() - t;
	n->notices.repo = n->repo;
	journeys_begin(n);
	t = metrics_clock();
	error = merge_night(n);
	n->phase.merge = metrics_clock() - t;
	if (error < 0)
		return error;
	if (n->run->result == RUN_BASE_BROKEN)
		stamp_finished(n);    /* nothing merged, but the run ended */
	else if ((error = finish(n)) < 0)
		return error;
	record_trees(n);
	if (n->run->result != RUN_BASE_BROKEN)
		conflicts_gone(n);
	night_flags_after(n);
	journeys_end(n);
	/* a damaged outbox file is named in tonight's summary (and queued again when the
	   state says what it was) before the notices of tonight are queued */
	if (notices_outbox_mend(&n->notices, n->st, n->opts->no_notify, &n->run->notes) < 0)
		log_warn("outbox: %s", nb_error_last());
	night_disk_finish(n);
	if ((error = night_flags_notify(n)) < 0 || (error = night_summary_queue(n)) < 0)
		return error;
	return write_run_files(n);
}

int night_run(const struct config *cfg, const struct night_opts *opts)
{
	struct state st = STATE_INIT;
	struct night n;
	int error, code = EXIT_DONE;

	if (state_load(&st, cfg->workdir) < 0) {
		bot_error("cannot read state");
		return EXIT_FAILED;
	}
	begin(&n, cfg, opts, &st);
	night_cc_start(&n);
	log_info("night %s: %zu trees", opts->date, cfg->trees_nr);
	metrics_reset();
	n.phase.total = metrics_clock();
	error = night(&n);
	n.phase.total = metrics_clock() - n.phase.total;
	log_progress_done();
	night_cc_stop(&n);
	if (error < 0) {
		bot_error(opts->date);
		code = EXIT_FAILED;
		n.run->result = RUN_FAILED;
		strvec_pushf(&n.run->notes, "the run failed: %s", nb_error_last());
	}
	/* the state is saved after the notices are queued: a kill in between
	 * re-queues the same notices, which is a no-op by their ids */
	if (state_save(&st, cfg->workdir) < 0) {
		bot_error("cannot save state");
		code = EXIT_FAILED;
	}
	if (promfile_write(&n) < 0)
		log_warn("metrics.prom: %s", nb_error_last());
	if (code == EXIT_DONE)
		log_info("night %s: %s, next %s, %zu new flag(s), %d build round(s)", opts->date,
			 run_result_name(n.run->result), n.run->next ? n.run->next : "-",
			 n.new_flags.nr, n.build_rounds);
	release(&n);
	state_release(&st);
	return code;
}
