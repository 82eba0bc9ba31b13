/* The daily summary to notify.list: per-tree outcome, flags, commit checks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bot/journey/journey.h"
#include "bot/night/night.h"
#include "bot/people/people.h"
#include "merge/repo/repo.h"
#include "util/error.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* Patches listed per tree for the commit checks: this many at most. */
#define SUMMARY_MAX_PATCHES 2000

/* Why a flag was resolved, in a few words (the resolved mail has the whole reason). */
static const char *resolution_words(enum flag_resolution r)
{
	switch (r) {
	case FLAG_LEFT_TREE:
		return ", left the tree";
	case FLAG_FIXED:
		return ", fixed";
	case FLAG_GONE:
		return ", gone";
	case FLAG_RESOLUTION_UNSET:
		break;
	}
	return "";
}

static void flag_lines(struct night *n, struct strvec *out, const struct strvec *ids)
{
	size_t i;
	int ambiguous;

	for (i = 0; i < ids->nr; i++) {
		const struct flag *f = state_flag_find(n->st, ids->v[i], &ambiguous);
		const char *why;

		if (!f)
			continue;
		why = f->state == FLAG_RESOLVED ? resolution_words(f->resolution) : "";
		if (!f->commit || f->kind == FLAG_FLAKY) /* flaky: no patch is blamed */
			strvec_pushf(out, "%s %s in %s%s:\n  (no patch blamed)", f->id,
				     f->kind ? flag_kind_name(f->kind) : "", f->tree ? f->tree : "",
				     why);
		else if (f->partner_tree)
			strvec_pushf(out, "%s %s in %s, with %s%s:\n  %.12s (\"%s\")", f->id,
				     f->kind ? flag_kind_name(f->kind) : "", f->tree ? f->tree : "",
				     f->partner_tree, why, f->commit ? f->commit : "",
				     f->subject ? f->subject : "");
		else
			strvec_pushf(out, "%s %s in %s%s:\n  %.12s (\"%s\")", f->id,
				     f->kind ? flag_kind_name(f->kind) : "", f->tree ? f->tree : "",
				     why, f->commit ? f->commit : "", f->subject ? f->subject : "");
	}
}

/*
 * Duplicates as linux-next reports them: the same patch (patch-id) in two trees as
 * two different commits.  One commit that two trees both contain (mm-stable's
 * commits inside mm-next, a tree built on another) is one patch, not two.  Each
 * pair of trees is named once per patch: "<subject>" then the two commits.
 */
static void duplicates(struct strvec *dups, const struct lookup_patches *pool)
{
	struct strvec seen = STRVEC_INIT;
	size_t i, j;

	for (i = 0; i < pool->nr; i++) {
		for (j = i + 1; j < pool->nr; j++) {
			const struct lookup_patch *a = &pool->items[i], *b = &pool->items[j];
			char key[128];

			if (nb_patchid_is_none(&a->patch_id) ||
			    !nb_patchid_eq(&a->patch_id, &b->patch_id) ||
			    !strcmp(a->tree, b->tree) || nb_oid_equal(&a->commit, &b->commit))
				continue;
			snprintf(key, sizeof(key), "%s %s", a->commit.hex, b->commit.hex);
			if (strvec_contains(&seen, key))
				continue;
			strvec_push(&seen, key);
			strvec_pushf(dups, "%s\n  %s %.12s, %s %.12s", a->subject, a->tree,
				     a->commit.hex, b->tree, b->commit.hex);
		}
	}
	strvec_clear(&seen);
}

/* Duplicate patch-ids across trees and commits missing their author's sign-off. */
static void commit_checks(struct night *n, struct strvec *dups, struct strvec *nosob)
{
	struct lookup_patches pool = LOOKUP_PATCHES_INIT;
	size_t i, j, start;

	for (i = 1; i < n->trees_nr; i++) {
		struct night_tree *t = &n->trees[i];

		if (!t->merged.hex[0])
			continue;
		start = pool.nr;
		if (lookup_new_patches(&pool, n->repo, t->cfg->name, t->merged.hex,
				       n->trees[0].fetch.tip.hex, SUMMARY_MAX_PATCHES) < 0) {
			log_warn("commit checks of %s: %s", t->cfg->name, nb_error_last());
			continue;
		}
		for (j = start; j < pool.nr; j++)
			if (!pool.items[j].has_author_signoff)
				strvec_pushf(nosob, "%s: %.12s (\"%s\") by %s <%s>", t->cfg->name,
					     pool.items[j].commit.hex, pool.items[j].subject,
					     pool.items[j].author_name, pool.items[j].author_email);
	}
	duplicates(dups, &pool);
	lookup_patches_release(&pool);
}

/* The first night of its month: no earlier night of the state is in the same month. */
static int first_of_month(const struct night *n)
{
	size_t i;

	for (i = 0; i < n->st->runs_nr; i++)
		if (n->st->runs[i].date && strncmp(n->st->runs[i].date, n->opts->date, 7) == 0 &&
		    strcmp(n->st->runs[i].date, n->opts->date) < 0)
			return 0;
	return 1;
}

/*
 * bot/people/'s share: the review queue's oldest patches for the summary, and on the
 * first night of a month the audit of MAINTAINERS to maintainers.audit_list.
 */
static void people_share(struct night *n, struct strvec *reviews)
{
	struct strbuf text = STRBUF_INIT, summary = STRBUF_INIT;
	struct people_journeys j;
	int have_j = journey_people_open(&j, n->cfg) == 0; /* ages from first sight */
	char month[8];

	nb_error_clear();
	if (people_review_lines(reviews, n->cfg, n->repo, 10, have_j ? &j : NULL) < 0) {
		log_warn("review queue: %s", nb_error_last());
		nb_error_clear();
	}
	if (have_j)
		journey_people_close(&j);
	if (!n->cfg->maintainers.audit_list || !first_of_month(n))
		return;
	snprintf(month, sizeof(month), "%.7s", n->opts->date);
	if (people_audit_mail_text(&text, &summary, n->cfg, n->repo) == 0) {
		struct notice_audit a = { .to = n->cfg->maintainers.audit_list, .month = month,
					  .date = n->opts->date, .summary = summary.buf,
					  .text = text.buf };

		if (notice_queue_audit(&n->notices.settings, &a) < 0)
			log_warn("the monthly MAINTAINERS audit: %s", nb_error_last());
	}
	nb_error_clear();
	strbuf_release(&text);
	strbuf_release(&summary);
}

/* review_gate: the patches of gated trees without a review (bot/journey/). */
static void summary_unreviewed(struct night *n, struct notice_summary *sum,
			       struct strvec *lines)
{
	journey_night_unreviewed(n->journey, lines);
	sum->unreviewed = (const char *const *)lines->v;
	sum->unreviewed_nr = lines->nr;
}

static const struct night_tree *tree_of(const struct night *n, const char *name)
{
	size_t i;

	for (i = 1; name && i < n->trees_nr; i++)
		if (!strcmp(n->trees[i].cfg->name, name))
			return &n->trees[i];
	return NULL;
}

/* What tonight showed of an open flag, as the summary says it. */
static const char *flag_status(const struct night *n, const struct flag *f)
{
	const struct night_tree *t = tree_of(n, f->tree);
	int fresh = strvec_contains(&n->new_flags, f->id);

	if (strvec_contains(&n->seen_flags, f->id)) {
		switch (f->kind == FLAG_FLAKY ? FLAG_ACTION_NONE : f->action) {
		case FLAG_REVERTED:
			return fresh ? "new tonight, reverted" : "seen again tonight, reverted";
		case FLAG_PREVIOUS_VERSION:
			return fresh ? "new tonight, its tree at an older tip"
				     : "seen again tonight, its tree at an older tip";
		case FLAG_DROPPED_TREE:
			return fresh ? "new tonight, its tree left out"
				     : "seen again tonight, its tree left out";
		case FLAG_ACTION_UNSET:
		case FLAG_ACTION_NONE:
			break;
		}
		return fresh ? "new tonight" : "seen again tonight";
	}
	if (!t)
		return "its tree is no longer merged";
	switch (t->state) {
	case TREE_PREVIOUS_VERSION:
	case TREE_STALE:
		return "not in tonight's next: its tree is at an older tip";
	case TREE_LEFT_OUT:
	case TREE_FETCH_FAILED:
		return "not in tonight's next: its tree is left out";
	default:
		return "not seen tonight";
	}
}

/*
 * BUILD SUCCESS only when tonight's next built and tested clean and no flag is
 * open (0-day's words); a new or still open breakage, reverted or not, the base
 * broken, an unfinished or failed night are a BUILD REGRESSION, and the subject
 * counts what is open.
 */
static int regression(const struct night *n)
{
	size_t i;

	if (n->run->result != RUN_CLEAN || n->broken || n->unfinished)
		return 1;
	for (i = 0; i < n->st->flags_nr; i++)
		if (n->st->flags[i].state == FLAG_OPEN && n->st->flags[i].id)
			return 1;
	return 0;
}

int night_summary_queue(struct night *n)
{
	struct notice_summary sum = { 0 };
	struct notice_summary_tree *trees;
	struct notice_summary_flag *open_flags;
	struct strvec news = STRVEC_INIT, gone = STRVEC_INIT, dups = STRVEC_INIT,
		      nosob = STRVEC_INIT, reviews = STRVEC_INIT,
		      unreviewed = STRVEC_INIT;
	size_t i;
	int error = 0;

	if (n->opts->no_notify)
		return 0;
	trees = xcalloc(n->run->trees_nr + 1, sizeof(*trees));
	for (i = 0; i < n->run->trees_nr; i++) {
		const struct run_tree *rt = &n->run->trees[i];

		trees[i].name = rt->name;
		trees[i].state = tree_state_name(rt->state);
		trees[i].reason = rt->reason;
		/* a tree not merged as it is tonight is always said why */
		if (!trees[i].reason && rt->state != TREE_MERGED)
			trees[i].reason = "no reason was recorded";
	}
	flag_lines(n, &news, &n->new_flags);
	flag_lines(n, &gone, &n->resolved);
	if (n->run->next)
		commit_checks(n, &dups, &nosob);
	sum.date = n->opts->date;
	sum.next_tag = n->tag;
	sum.next_commit = n->run->next ? n->run->next : n->trees[0].fetch.tip.hex;
	sum.regression = regression(n);
	sum.trees = trees;
	sum.trees_nr = n->run->trees_nr;
	sum.new_flags = (const char *const *)news.v;
	sum.new_flags_nr = news.nr;
	sum.resolved_flags = (const char *const *)gone.v;
	sum.resolved_flags_nr = gone.nr;
	sum.duplicates = (const char *const *)dups.v;
	sum.duplicates_nr = dups.nr;
	sum.missing_signoff = (const char *const *)nosob.v;
	sum.missing_signoff_nr = nosob.nr;
	summary_unreviewed(n, &sum, &unreviewed);
	sum.notes = (const char *const *)n->run->notes.v;
	sum.notes_nr = n->run->notes.nr;
	people_share(n, &reviews);
	sum.reviews = (const char *const *)reviews.v;
	sum.reviews_nr = reviews.nr;
	open_flags = xcalloc(n->st->flags_nr + 1, sizeof(*open_flags));
	for (i = 0; i < n->st->flags_nr; i++) {
		const struct flag *f = &n->st->flags[i];
		struct notice_summary_flag *o = &open_flags[sum.open_flags_nr];

		if (f->state != FLAG_OPEN || !f->id)
			continue;
		o->id = f->id;
		o->kind = flag_kind_name(f->kind);
		o->tree = f->tree;
		/* a flaky flag blames no patch: the search's guess is not named */
		o->commit = f->kind == FLAG_FLAKY ? NULL : f->commit;
		o->subject = f->kind == FLAG_FLAKY ? NULL : f->subject;
		o->partner_tree = f->kind == FLAG_FLAKY ? NULL : f->partner_tree;
		o->since = f->first_seen;
		o->status = flag_status(n, f);
		o->is_new = strvec_contains(&n->new_flags, f->id);
		sum.open_flags_nr++;
	}
	sum.open_flags = open_flags;
	if (notice_queue_summary(&n->notices.settings, &sum) < 0)
		error = -1;
	free(trees);
	free(open_flags);
	strvec_clear(&news);
	strvec_clear(&gone);
	strvec_clear(&dups);
	strvec_clear(&nosob);
	strvec_clear(&reviews);
	strvec_clear(&unreviewed);
	return error;
}
