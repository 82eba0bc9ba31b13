/* A maintainer's drop (`nextbot drop`, `#nextbot drop`): recorded, flags marked, notice, push. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bot/core/botutil.h"
#include "bot/actions/actions.h"
#include "bot/night/night.h"
#include "merge/integrate/integrate.h"
#include "merge/transport/transport.h"
#include "merge/repo/repo.h"
#include "util/error.h"
#include "util/xalloc.h"
#include "util/banned.h"

static char *dup_nonempty(const char *s)
{
	return s && *s ? xstrdup(s) : NULL;
}

int maint_patch_find(struct lookup_patches *pool, long *idx, struct maint *m, const char *id)
{
	struct repo *repo = NULL;
	char *path = xstrfmt("%s/repo.git", m->cfg->workdir), *path2;
	struct nb_oid base;
	struct nb_oid tip;
	size_t i;
	int error;

	*idx = -1;
	if ((error = repo_open(&repo, path)) < 0)
		goto done;
	path2 = xstrfmt("refs/feeds/%s", m->cfg->base.name);
	if (repo_ref_get(repo, path2, &base) < 0)
		base.hex[0] = 0;
	free(path2);
	for (i = 0; i < m->cfg->trees_nr; i++) {
		char *ref = xstrfmt("refs/feeds/%s", m->cfg->trees[i].name);

		if (repo_ref_get(repo, ref, &tip) == 0 &&
		    (error = lookup_new_patches(pool, repo, m->cfg->trees[i].name, tip.hex,
						nb_oid_is_null(&base) ? NULL : base.hex, 0)) < 0) {
			free(ref);
			goto done;
		}
		free(ref);
	}
	*idx = lookup_patch_find(pool, id);
	error = *idx < 0 ? NB_ENOTFOUND : 0;
done:
	repo_free(repo);
	free(path);
	return error;
}

static void drop_from_flag(struct drop *d, const struct flag *f)
{
	d->tree = dup_nonempty(f->tree);
	d->commit = dup_nonempty(f->commit);
	d->patch_id = f->patch_id;
	d->message_id = dup_nonempty(f->message_id);
	d->subject = dup_nonempty(f->subject);
	d->author.name = dup_nonempty(f->author.name);
	d->author.email = dup_nonempty(f->author.email);
	d->flag_id = dup_nonempty(f->id);
}

static void drop_from_patch(struct drop *d, const struct lookup_patch *p)
{
	d->tree = dup_nonempty(p->tree);
	d->commit = dup_nonempty(p->commit.hex);
	d->patch_id = p->patch_id;
	d->message_id = dup_nonempty(p->message_id);
	d->subject = dup_nonempty(p->subject);
	d->author.name = dup_nonempty(p->author_name);
	d->author.email = dup_nonempty(p->author_email);
}

struct drop *maint_drop_already(struct state *st, const struct nb_patchid *patch_id,
				const char *commit)
{
	size_t i;

	for (i = 0; i < st->drops_nr; i++) {
		struct drop *d = &st->drops[i];

		if (d->active && (nb_patchid_eq(&d->patch_id, patch_id) ||
				  (commit && d->commit && !strcmp(d->commit, commit))))
			return d;
	}
	return NULL;
}

/* Every open flag of the same patch becomes dropped; returns the first. */
static struct flag *mark_flags(struct state *st, const struct drop *d)
{
	struct flag *first = NULL;
	size_t i;

	for (i = 0; i < st->flags_nr; i++) {
		struct flag *f = &st->flags[i];
		/* by Message-ID only without a patch-id: another patch may claim it */
		int same = nb_patchid_eq(&d->patch_id, &f->patch_id) ||
			   (nb_patchid_is_none(&d->patch_id) && d->message_id &&
			    f->message_id && !strcmp(d->message_id, f->message_id)) ||
			   (d->commit && f->commit && !strcmp(d->commit, f->commit));

		if (!same || f->state == FLAG_DISMISSED)
			continue;
		f->state = FLAG_DROPPED;
		if (!first)
			first = f;
	}
	return first;
}

/* The dropped notice to the author, in the report's thread when there was one. */
static int notify(struct maint *m, const struct drop *d, struct flag *f, const char *reason)
{
	struct flag tmp = { 0 };
	struct notices n;
	char today[16];
	int error;

	bot_today(today, sizeof(today));
	if (!f) {
		tmp.id = d->commit;
		tmp.tree = d->tree;
		tmp.commit = d->commit;
		tmp.patch_id = d->patch_id;
		tmp.message_id = d->message_id;
		tmp.subject = d->subject;
		tmp.author = d->author;
		f = &tmp;
	}
	notices_init(&n, m->cfg);
	n.st = &m->st;
	error = notices_flag_dropped(&n, f, today, reason);
	notices_release(&n);
	return error;
}

static void print_left_out(struct repo *repo, const struct droppush_result *r)
{
	size_t i;

	for (i = 0; i < r->left_out.nr; i++) {
		struct nb_oid id;
		char *subj = nb_oid_parse(&id, r->left_out.v[i]) == 0
				     ? repo_commit_subject(repo, &id) : xstrdup("");

		printf("  left out %.12s (\"%s\"): %s\n", r->left_out.v[i], subj, r->reasons.v[i]);
		free(subj);
	}
}

/* --push: the tree's branch on its remote without the patch (merge/integrate/integrate.h). */
int maint_drop_push(struct maint *m, const struct drop *d)
{
	const struct config *cfg = m->cfg;
	const struct config_tree *ct = NULL;
	struct droppush_result r = DROPPUSH_RESULT_INIT;
	struct fetch_creds cr = { .token_env = cfg->git.token_env, .ssh_key = cfg->git.ssh_key,
				  .ca_file = cfg->git.ca_file,
				  .idle_timeout = cfg->git.fetch_timeout };
	const char *mids[1] = { d->message_id };
	struct integ_drops drops = { &d->patch_id, !nb_patchid_is_none(&d->patch_id),
				     mids, d->message_id ? 1 : 0 };
	struct repo *repo = NULL;
	struct integ_tree t;
	char *path = xstrfmt("%s/repo.git", cfg->workdir);
	size_t i;
	int code = EXIT_FAILED, err;

	for (i = 0; d->tree && i < cfg->trees_nr && !ct; i++)
		if (!strcmp(cfg->trees[i].name, d->tree))
			ct = &cfg->trees[i];
	if (!ct) {
		fprintf(stderr, "nextbot: drop --push: tree '%s' is not in the config\n",
			d->tree ? d->tree : "?");
		goto done;
	}
	t.name = ct->name;
	t.url = ct->url;
	t.branch = ct->branch;
	if ((err = repo_open(&repo, path)) == 0)
		err = droppush_tree(&r, repo, cfg->base.name, &t, &drops, cfg->merge_identity, &cr);
	if (err < 0) {
		bot_error(err == NB_EREFUSED ?
			  "drop --push: refused, nothing pushed (fetch with `nextbot run` first)" :
			  "drop --push: nothing pushed");
		goto done;
	}
	code = EXIT_DONE;
	if (!r.changed) {
		printf("%s's %s has no commit of that patch (as last fetched): nothing to push\n",
		       t.name, t.branch);
		goto done;
	}
	printf("pushed %s's %s without the patch: %.12s -> %.12s (%s)\n", t.name, t.branch,
	       r.old_tip.hex, r.new_tip.hex, t.url);
	print_left_out(repo, &r);
done:
	if (code != EXIT_DONE)
		fprintf(stderr,
			"nextbot: the drop itself is recorded: the patch stays out of next\n");
	droppush_result_release(&r);
	repo_free(repo);
	free(path);
	return code;
}

/* The rest of a new drop: reason, time, who by mail, its flags dropped, the notice. */
static int record(struct maint *m, struct drop *d, const char *reason, const char *by,
		  const char *mail)
{
	struct flag *f;
	char stamp[32];

	d->reason = xstrdup(reason ? reason : "dropped by its maintainer");
	bot_rfc3339(stamp, sizeof(stamp), time(NULL));
	d->when = xstrdup(stamp);
	d->active = 1;
	d->by = dup_nonempty(by);
	d->mail = dup_nonempty(mail);
	f = mark_flags(&m->st, d);
	if (f && !d->flag_id)
		d->flag_id = dup_nonempty(f->id);
	return notify(m, d, f, d->reason);
}

int maint_drop_flag(struct maint *m, struct flag *f, const char *reason, const char *by,
		    const char *mail, struct drop **out)
{
	struct drop *d = maint_drop_already(&m->st, &f->patch_id, f->commit);

	*out = d;
	if (d)
		return 1;
	d = state_drop_add(&m->st);
	drop_from_flag(d, f);
	*out = d;
	return record(m, d, reason, by, mail) < 0 ? -1 : 0;
}

int maint_drop_patch(struct maint *m, const struct lookup_patch *p, const char *reason,
		     const char *by, const char *mail, struct drop **out)
{
	struct drop *d = maint_drop_already(&m->st, &p->patch_id, p->commit.hex);

	*out = d;
	if (d)
		return 1;
	d = state_drop_add(&m->st);
	drop_from_patch(d, p);
	*out = d;
	return record(m, d, reason, by, mail) < 0 ? -1 : 0;
}
