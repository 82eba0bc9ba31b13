/* After the night: which flags went away, and the notices each flag is owed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "bot/night/night.h"
#include "merge/repo/repo.h"
#include "util/error.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* Nights without a sighting after which a flaky failure counts as gone. */
#define FLAKY_QUIET_DAYS 3

static long days_between(const char *from, const char *to)
{
	struct tm a, b;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	if (!from || !to || !strptime(from, "%Y-%m-%d", &a) || !strptime(to, "%Y-%m-%d", &b))
		return 0;
	return (long)((timegm(&b) - timegm(&a)) / 86400);
}

static const struct night_tree *tree(const struct night *n, const char *name)
{
	size_t i;

	for (i = 1; name && i < n->trees_nr; i++)
		if (!strcmp(n->trees[i].cfg->name, name))
			return &n->trees[i];
	return NULL;
}

/*
 * What tonight's merged branches carry: every configured tree's new patches (its
 * tip, tonight's or the last fetched, minus the base), read once a night for all
 * the flags.  A flag's culprit in none of them and not in the base has left.
 */
struct carried {
	struct lookup_patches pool;
	int ok;              /* 1: read; -1: could not be read (nothing is judged) */
};

static void carried_read(struct carried *c, struct night *n)
{
	size_t i;

	if (c->ok)
		return;
	c->ok = 1;
	for (i = 1; i < n->trees_nr && c->ok > 0; i++) {
		const struct night_tree *t = &n->trees[i];

		if (nb_oid_is_null(&t->fetch.tip) || t->fetch.state == FETCH_REFUSED)
			continue;  /* no tip: it carries nothing */
		if (lookup_new_patches(&c->pool, n->repo, t->cfg->name, t->fetch.tip.hex,
				       n->trees[0].fetch.tip.hex, 0) < 0) {
			log_warn("flags: the patches of %s cannot be read: %s", t->cfg->name,
				 nb_error_last());
			c->ok = -1;
		}
	}
}

/*
 * Does a merged branch carry the patch tonight?  By patch-id when it has one (a
 * rebase keeps it); without one (binary, merge) by commit id and Message-ID.
 * 1 with *now its commit there (the first tree's, in merge order) or in the base;
 * 0: in none; -1: cannot be told.
 */
static int carried_find(struct carried *c, struct night *n, const struct nb_patchid *patch_id,
			const char *message_id, const char *commit, struct nb_oid *now)
{
	struct nb_oid oid;
	size_t i;

	nb_oid_clear(now);
	carried_read(c, n);
	if (c->ok < 0 || !commit || nb_oid_parse(&oid, commit) < 0)
		return -1;
	for (i = 0; i < c->pool.nr; i++) {
		const struct lookup_patch *p = &c->pool.items[i];
		int same = !nb_patchid_is_none(patch_id)
				   ? nb_patchid_eq(&p->patch_id, patch_id)
				   : nb_oid_equal(&p->commit, &oid) ||
					     (message_id && p->message_id &&
					      !strcmp(p->message_id, message_id));

		if (same) {
			*now = p->commit;
			return 1;
		}
	}
	/* mainline took it (a missing object is no error: it is in no branch) */
	if (lookup_contains(n->repo, &n->trees[0].fetch.tip, &oid) == 1) {
		*now = oid;
		return 1;
	}
	nb_error_clear();
	return 0;
}

/* 1 when tonight's next holds `commit` and the night did not revert it. */
static int in_next(struct night *n, const struct nb_oid *commit)
{
	struct nb_oid head;
	size_t i;

	if (!n->run->next || nb_oid_parse(&head, n->run->next) < 0 ||
	    lookup_contains(n->repo, &head, commit) != 1)
		return 0;
	for (i = 0; i < integ_night_steps_nr(n->integ); i++) {
		const struct integ_step *st = integ_night_step(n->integ, i);

		if (st->kind == INTEG_STEP_REVERT && nb_oid_equal(&st->tip, commit))
			return 0;
	}
	return 1;
}

/*
 * A semantic flag's partner is followed as its culprit is: by patch-id, else by
 * commit id and Message-ID.  Read once, the night the flag is found (the commit
 * is then in the repository for sure).
 */
static void partner_identity(struct night *n, struct flag *f)
{
	struct lookup_patch p;
	struct nb_oid partner;

	if (!f->partner_commit || !nb_patchid_is_none(&f->partner_patch_id) ||
	    f->partner_message_id ||
	    nb_oid_parse(&partner, f->partner_commit) < 0 ||
	    lookup_commit(&p, n->repo, f->partner_tree, &partner) < 0) {
		nb_error_clear();
		return;
	}
	f->partner_patch_id = p.patch_id;
	if (p.message_id)
		f->partner_message_id = xstrdup(p.message_id);
	lookup_patch_release(&p);
}

static void resolve_as(struct night *n, struct flag *f, enum flag_resolution how, char *why)
{
	f->state = FLAG_RESOLVED;
	f->resolution = how;
	free(f->reason);
	f->reason = why;
	strvec_push(&n->resolved, f->id);
	log_info("flag %s resolved (%s): %s", f->id, flag_resolution_name(how), why);
}

/*
 * A culprit still carried and not seen tonight no longer fails when next holds it
 * (and its partner), unreverted, and tonight's next was checked clean to the end.
 * NULL: that cannot be told tonight.
 */
static char *why_fixed(struct night *n, const struct flag *f, const struct nb_oid *now,
		       const struct nb_oid *partner)
{
	if (n->broken || n->unfinished || n->checks_off || !in_next(n, now) ||
	    (partner && !in_next(n, partner)))
		return NULL;
	if (lookup_contains(n->repo, &n->trees[0].fetch.tip, now) == 1)
		return xstrfmt("the commit is in %s now, and %s builds and tests clean "
			       "with it.", n->cfg->base.name, n->tag);
	if (f->commit && strcmp(now->hex, f->commit))
		return xstrfmt("the %s tree was rebased and the patch is now commit %.12s, "
			       "which no longer fails: %s builds and tests clean with it.",
			       f->tree, now->hex, n->tag);
	return xstrfmt("no longer failing: %s builds and tests clean with the same commit "
		       "(fixed by a later change).", n->tag);
}

/*
 * An open flag not seen tonight is judged again on what tonight's branches carry:
 * its culprit (or a semantic partner) gone from every merged branch resolves it,
 * whatever else the night did; a culprit still carried resolves it only when next
 * holds it and checked clean.  A flaky failure goes once it stays away a few nights.
 */
static void judge(struct night *n, struct carried *c, struct flag *f)
{
	const struct night_tree *t = tree(n, f->tree);
	struct nb_oid now, pnow;
	int here, partner = 1;
	char *why;

	if (f->kind == FLAG_FLAKY) {
		if (!t || t->state != TREE_MERGED || n->unfinished ||
		    days_between(f->last_seen, n->opts->date) < FLAKY_QUIET_DAYS)
			return;
		resolve_as(n, f, FLAG_GONE,
			   xstrfmt("not seen again for %d nights (last seen on %s).",
				   FLAKY_QUIET_DAYS, f->last_seen ? f->last_seen : "?"));
		return;
	}
	if (t && nb_oid_is_null(&t->fetch.tip))
		return;  /* its tree was never fetched: nothing is known of it */
	here = carried_find(c, n, &f->patch_id, f->message_id, f->commit, &now);
	if (f->partner_commit)
		partner = carried_find(c, n, &f->partner_patch_id, f->partner_message_id,
				       f->partner_commit, &pnow);
	if (here == 0) {
		resolve_as(n, f, FLAG_LEFT_TREE,
			   xstrfmt("the patch left the %s tree (dropped or replaced there): no "
				   "merged branch carries it tonight, and %s does not have it.",
				   f->tree ? f->tree : "?", n->tag));
		return;
	}
	if (partner == 0) {
		resolve_as(n, f, FLAG_LEFT_TREE,
			   xstrfmt("its partner %.12s (\"%s\") left the %s tree: no merged "
				   "branch carries it tonight, so the two no longer meet in %s.",
				   f->partner_commit, f->partner_subject ? f->partner_subject : "",
				   f->partner_tree ? f->partner_tree : "?", n->tag));
		return;
	}
	if (here < 0 || partner < 0 ||
	    !(why = why_fixed(n, f, &now, f->partner_commit ? &pnow : NULL)))
		return;
	resolve_as(n, f, FLAG_FIXED, why);
}

/* Two subjects are the same fix when they differ only in case and surrounding blanks. */
static int same_subject(const char *a, const char *b)
{
	size_t la, lb;

	while (*a == ' ' || *a == '\t')
		a++;
	while (*b == ' ' || *b == '\t')
		b++;
	la = strlen(a);
	lb = strlen(b);
	while (la && (a[la - 1] == ' ' || a[la - 1] == '\t'))
		la--;
	while (lb && (b[lb - 1] == ' ' || b[lb - 1] == '\t'))
		lb--;
	return la == lb && !strncasecmp(a, b, la);
}

/*
 * `#nextbot fix: <subject>`: has a commit so titled reached the tree's branch (among
 * its commits on top of the base)?  Fills `commit` when it has.
 */
static int fix_arrived(struct night *n, const struct night_tree *t, const struct flag *f,
		       struct nb_oid *commit)
{
	struct lookup_patches pool = LOOKUP_PATCHES_INIT;
	size_t i;
	int found = 0;

	if (nb_oid_is_null(&t->fetch.tip) ||
	    lookup_new_patches(&pool, n->repo, t->cfg->name, t->fetch.tip.hex,
			       n->trees[0].fetch.tip.hex, 0) < 0)
		goto done;
	for (i = pool.nr; i > 0 && !found; i--) {
		if (pool.items[i - 1].subject && same_subject(pool.items[i - 1].subject,
							      f->fix_subject)) {
			*commit = pool.items[i - 1].commit;
			found = 1;
		}
	}
done:
	lookup_patches_release(&pool);
	return found;
}

/*
 * An announced fix that reached the tree resolves its flag, saying so; when the
 * failure was seen again tonight all the same, the fix did not fix it: a note.
 */
static void fixes(struct night *n, struct flag *f)
{
	const struct night_tree *t = tree(n, f->tree);
	struct nb_oid commit = NB_OID_INIT;

	if (!t || !fix_arrived(n, t, f, &commit))
		return;
	f->fix_commit = xstrdup(commit.hex);
	if (strvec_contains(&n->seen_flags, f->id)) {
		strvec_pushf(&n->run->notes,
			     "flag %s: the fix \"%s\" announced by %s is in the %s tree (%.12s), "
			     "but the failure is still there",
			     f->id, f->fix_subject, f->fix_by ? f->fix_by : "mail", f->tree,
			     commit.hex);
		return;
	}
	resolve_as(n, f, FLAG_FIXED,
		   xstrfmt("fixed by %.12s (\"%s\")", commit.hex, f->fix_subject));
}

void night_flags_after(struct night *n)
{
	struct carried c = { LOOKUP_PATCHES_INIT, 0 };
	size_t i;

	for (i = 0; i < n->st->flags_nr; i++) {
		struct flag *f = &n->st->flags[i];

		if (!f->id || f->state != FLAG_OPEN)
			continue;
		if (f->partner_commit)
			partner_identity(n, f);
		if (f->fix_subject && !f->fix_commit && !n->unfinished)
			fixes(n, f);
		if (f->state != FLAG_OPEN)
			continue;
		if (!strvec_contains(&n->seen_flags, f->id)) {
			judge(n, &c, f);
		} else if (f->resolution && f->reason) {
			/* found again: why it was resolved no longer holds (the resolution
			   stays until the flag is said to be back) */
			free(f->reason);
			f->reason = NULL;
		}
	}
	lookup_patches_release(&c.pool);
	for (i = 0; i < n->seen_flags.nr; i++)
		strvec_push(&n->run->flags, n->seen_flags.v[i]);
}

/*
 * Does tonight's build still show the breakage?  The flag was seen tonight (next
 * failed that way and the culprit was acted on again), and tonight's next carries
 * the culprit, reverted or not; a flaky failure was seen again.  A tree that fell
 * back to an older tip tonight carries nothing to remind of.
 */
static int shows_tonight(struct night *n, const struct flag *f)
{
	struct nb_oid head, commit;

	if (!strvec_contains(&n->seen_flags, f->id))
		return 0;
	if (f->kind == FLAG_FLAKY)
		return 1;
	return n->run->next && f->commit && nb_oid_parse(&head, n->run->next) == 0 &&
	       nb_oid_parse(&commit, f->commit) == 0 &&
	       lookup_contains(n->repo, &head, &commit) == 1;
}

/*
 * A flag's first notices; then, every remind_days, a reminder while tonight's
 * build still shows the breakage.  A flag that was resolved and is found again is
 * said to be back, at once (on the first night that shows it).
 */
static int notify_flag(struct night *n, struct flag *f)
{
	const char *date = n->opts->date;
	int remind = n->cfg->notify.remind_days, back;
	long days;

	if (f->state != FLAG_OPEN)
		return 0;
	if (!f->notified) {
		if (notices_flag_report(&n->notices, f, date, 0) < 0)
			return -1;
		f->notified = xstrdup(date);
		f->resolution = FLAG_RESOLUTION_UNSET;
		return 0;
	}
	if (!shows_tonight(n, f))
		return 0;
	back = f->resolution != FLAG_RESOLUTION_UNSET;
	days = days_between(f->reminded ? f->reminded : f->notified, date);
	if (!back && (remind <= 0 || days < remind))
		return 0;
	if (back) {
		if (notices_flag_back(&n->notices, f, date) < 0)
			return -1;
		f->resolution = FLAG_RESOLUTION_UNSET;
	} else if (notices_flag_report(&n->notices, f, date,
				       (int)(days_between(f->notified, date) / remind)) < 0) {
		return -1;
	}
	free(f->reminded);
	f->reminded = xstrdup(date);
	return 0;
}

int night_flags_notify(struct night *n)
{
	size_t i;
	int ambiguous;

	if (n->opts->no_notify)
		return 0;
	for (i = 0; i < n->st->flags_nr; i++) {
		if (notify_flag(n, &n->st->flags[i]) < 0)
			return -1;
	}
	for (i = 0; i < n->resolved.nr; i++) {
		struct flag *f = state_flag_find(n->st, n->resolved.v[i], &ambiguous);

		if (f && f->notified && notices_flag_resolved(&n->notices, f, n->opts->date,
							      f->reason) < 0)
			return -1;
	}
	return 0;
}
