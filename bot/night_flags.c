/* After the night: which flags went away, and the notices each flag is owed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "bot/night.h"
#include "merge/lookup.h"
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
 * Is the patch (by patch-id, Message-ID or commit) among the tree's new patches
 * tonight?  -1: cannot tell; 0: no; 1: yes, with *now its commit tonight.
 */
static int patch_present(struct night *n, const struct night_tree *t, const char *patch_id,
			 const char *message_id, const char *commit, struct nb_oid *now)
{
	struct lookup_patches pool = LOOKUP_PATCHES_INIT;
	int present = -1;
	size_t i;

	nb_oid_clear(now);
	if (!t->fetch.tip.hex[0] ||
	    lookup_new_patches(&pool, n->repo, t->cfg->name, t->fetch.tip.hex,
			       n->trees[0].fetch.tip.hex, 0) < 0)
		goto done;
	present = 0;
	for (i = 0; i < pool.nr && !present; i++) {
		const struct lookup_patch *p = &pool.items[i];

		present = (patch_id && *patch_id && !strcmp(p->patch_id.hex, patch_id)) ||
			  (message_id && p->message_id && !strcmp(p->message_id, message_id)) ||
			  (commit && !strcmp(p->commit.hex, commit));
		if (present)
			*now = p->commit;
	}
done:
	lookup_patches_release(&pool);
	return present;
}

/*
 * Why a flag is gone, as the resolved mail says it: fixed, dropped from its tree,
 * merged upstream, rebased to another commit, no longer failing.  NULL: it is not
 * gone, or it cannot be told tonight.
 */
static char *why_gone(struct night *n, const struct night_tree *t, const struct flag *f)
{
	struct nb_oid now, commit;
	int present = patch_present(n, t, f->patch_id, f->message_id, f->commit, &now);

	if (present < 0)
		return NULL;
	if (!present) {
		if (f->commit && nb_oid_parse(&commit, f->commit) == 0 &&
		    lookup_contains(n->repo, &n->trees[0].fetch.tip, &commit) == 1)
			return xstrfmt("the commit is in %s now, and %s builds and tests clean "
				       "with it.", n->cfg->base.name, n->tag);
		return xstrfmt("the patch is no longer in the %s tree (dropped or replaced "
			       "there); %s no longer has it.", t->cfg->name, n->tag);
	}
	if (f->commit && strcmp(now.hex, f->commit))
		return xstrfmt("the %s tree was rebased and the patch is now commit %.12s, "
			       "which no longer fails: %s builds and tests clean with it.",
			       t->cfg->name, now.hex, n->tag);
	return xstrfmt("no longer failing: %s builds and tests clean with the same commit "
		       "(fixed by a later change).", n->tag);
}

/*
 * An open flag not blamed tonight is resolved when its tree was merged tonight in
 * its own version and next checked out clean: the patch is gone, or no longer
 * breaks anything.  A tree left out or used in its previous version tells nothing.
 */
static void resolve(struct night *n, struct flag *f)
{
	const struct night_tree *t = tree(n, f->tree);
	char *why;

	if (!t || t->state != TREE_MERGED || n->unfinished)
		return;
	if (f->kind == FLAG_FLAKY) {
		/* a flaky failure that stayed away for a few nights has gone */
		if (days_between(f->last_seen, n->opts->date) < FLAKY_QUIET_DAYS)
			return;
		why = xstrfmt("not seen again for %d nights (last seen on %s).", FLAKY_QUIET_DAYS,
			      f->last_seen ? f->last_seen : "?");
	} else {
		if (n->broken || !(why = why_gone(n, t, f)))
			return;
	}
	f->state = FLAG_RESOLVED;
	free(f->reason);
	f->reason = why;
	strvec_push(&n->resolved, f->id);
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
	f->state = FLAG_RESOLVED;
	free(f->reason);
	f->reason = xstrfmt("fixed by %.12s (\"%s\")", commit.hex, f->fix_subject);
	strvec_push(&n->resolved, f->id);
}

void night_flags_after(struct night *n)
{
	size_t i;

	for (i = 0; i < n->st->flags_nr; i++) {
		struct flag *f = &n->st->flags[i];

		if (f->id && f->state == FLAG_OPEN && f->fix_subject && !f->fix_commit &&
		    !n->unfinished)
			fixes(n, f);
		if (!f->id || strvec_contains(&n->seen_flags, f->id))
			continue;
		if (f->state == FLAG_OPEN)
			resolve(n, f);
	}
	for (i = 0; i < n->seen_flags.nr; i++)
		strvec_push(&n->run->flags, n->seen_flags.v[i]);
}

static int notify_flag(struct night *n, struct flag *f)
{
	const char *date = n->opts->date;
	int remind = n->cfg->notify.remind_days;
	long days;

	if (f->state != FLAG_OPEN)
		return 0;
	if (!f->notified) {
		if (notices_flag_report(&n->notices, f, date, 0) < 0)
			return -1;
		f->notified = xstrdup(date);
		return 0;
	}
	if (remind <= 0)
		return 0;
	days = days_between(f->reminded ? f->reminded : f->notified, date);
	if (days < remind)
		return 0;
	if (notices_flag_report(&n->notices, f, date,
				(int)(days_between(f->notified, date) / remind)) < 0)
		return -1;
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
