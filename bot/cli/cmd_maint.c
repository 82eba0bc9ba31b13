/* The maintainer's commands that change flags: dismiss and undrop (drop: cmd_drop.c). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bot/core/botutil.h"
#include "bot/cli/commands.h"
#include "bot/state/lock.h"
#include "bot/cli/maint.h"
#include "bot/state/state.h"
#include "util/error.h"
#include "util/xalloc.h"
#include "util/banned.h"

int maint_open(struct maint *m, const struct cli_ctx *ctx)
{
	int code;

	memset(m, 0, sizeof(*m));
	m->lock = (struct run_lock)RUN_LOCK_INIT;
	if ((code = bot_config_open(&m->cfg, ctx)))
		return code;
	if (run_lock_take(&m->lock, m->cfg->workdir) < 0) {
		bot_error("cannot take the lock");
		config_free(m->cfg);
		m->cfg = NULL;
		return EXIT_FAILED;
	}
	if (state_load(&m->st, m->cfg->workdir) < 0) {
		bot_error("cannot read state");
		maint_close(m);
		return EXIT_FAILED;
	}
	return 0;
}

int maint_save(struct maint *m)
{
	if (state_save(&m->st, m->cfg->workdir) < 0) {
		bot_error("cannot save state");
		return EXIT_FAILED;
	}
	return EXIT_DONE;
}

void maint_close(struct maint *m)
{
	state_release(&m->st);
	run_lock_release(&m->lock);
	config_free(m->cfg);
	m->cfg = NULL;
}

struct flag *maint_flag_find(struct maint *m, const char *id)
{
	int ambiguous;
	struct flag *f = state_flag_find(&m->st, id, &ambiguous);

	if (ambiguous)
		fprintf(stderr, "nextbot: '%s' matches more than one flag; give more digits\n", id);
	return f;
}

/* Parses "ID --reason TEXT"; reason may be required. */
int maint_args(const char **id, const char **reason, int *push, int argc, char **argv,
	       const char *usage, int need_reason)
{
	static const struct option opts[] = { { "reason", required_argument, NULL, 'r' },
					       { "push", no_argument, NULL, 'p' },
					       { NULL, 0, NULL, 0 } };
	int c;

	*id = *reason = NULL;
	if (push)
		*push = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "r:", opts, NULL)) != -1) {
		if (c == 'r')
			*reason = optarg;
		else if (c == 'p' && push)
			*push = 1;
		else
			goto usage;
	}
	if (optind != argc - 1 || (need_reason && (!*reason || !**reason)))
		goto usage;
	*id = argv[optind];
	return 0;
usage:
	fprintf(stderr, "usage: %s\n", usage);
	return EXIT_USAGE;
}

void maint_dismiss(struct flag *f, const char *reason)
{
	f->state = FLAG_DISMISSED;
	free(f->reason);
	f->reason = xstrdup(reason);
}

int cmd_dismiss(const struct cli_ctx *ctx, int argc, char **argv)
{
	const char *id, *reason;
	struct maint m;
	struct flag *f;
	int code;

	if ((code = maint_args(&id, &reason, NULL, argc, argv,
			       "nextbot dismiss ID --reason TEXT", 1)))
		return code;
	if ((code = maint_open(&m, ctx)))
		return code;
	f = maint_flag_find(&m, id);
	if (!f) {
		fprintf(stderr, "nextbot: no flag matches '%s'\n", id);
		code = EXIT_USAGE;
		goto done;
	}
	maint_dismiss(f, reason);
	if ((code = maint_save(&m)) == EXIT_DONE)
		printf("dismissed %s: its fingerprint will not be blamed again\n", f->id);
done:
	maint_close(&m);
	return code;
}

/* A drop matches ID by its flag id, commit, patch-id (prefixes) or Message-ID. */
static int drop_matches(const struct drop *d, const char *id)
{
	size_t len = strlen(id);

	return (d->flag_id && !strncmp(d->flag_id, id, len)) ||
	       (d->commit && len >= 4 && !strncmp(d->commit, id, len)) ||
	       (d->patch_id && len >= 4 && !strncmp(d->patch_id, id, len)) ||
	       (d->message_id && !strcmp(d->message_id, id));
}

void maint_undrop(struct maint *m, struct drop *d)
{
	size_t i;

	d->active = 0;
	for (i = 0; d->flag_id && i < m->st.flags_nr; i++) {
		struct flag *f = &m->st.flags[i];

		if (f->id && !strcmp(f->id, d->flag_id) && f->state == FLAG_DROPPED)
			f->state = FLAG_OPEN;
	}
}

struct drop *maint_drop_of_flag(struct maint *m, const struct flag *f)
{
	size_t i;

	for (i = 0; i < m->st.drops_nr; i++) {
		struct drop *d = &m->st.drops[i];

		if (d->active &&
		    ((d->flag_id && f->id && !strcmp(d->flag_id, f->id)) ||
		     (d->patch_id && f->patch_id && *f->patch_id &&
		      !strcmp(d->patch_id, f->patch_id)) ||
		     (d->commit && f->commit && !strcmp(d->commit, f->commit))))
			return d;
	}
	return NULL;
}

struct drop *maint_drop_find(struct maint *m, const char *id, int *ambiguous)
{
	struct drop *found = NULL;
	size_t i;

	*ambiguous = 0;
	for (i = 0; i < m->st.drops_nr; i++) {
		if (m->st.drops[i].active && drop_matches(&m->st.drops[i], id)) {
			*ambiguous |= found != NULL;
			found = &m->st.drops[i];
		}
	}
	return *ambiguous ? NULL : found;
}

int cmd_undrop(const struct cli_ctx *ctx, int argc, char **argv)
{
	struct drop *found = NULL;
	const char *id, *reason;
	struct maint m;
	int code, ambiguous;

	if ((code = maint_args(&id, &reason, NULL, argc, argv, "nextbot undrop ID", 0)))
		return code;
	if ((code = maint_open(&m, ctx)))
		return code;
	if (!(found = maint_drop_find(&m, id, &ambiguous))) {
		fprintf(stderr, "nextbot: %s drop matches '%s'\n",
			ambiguous ? "more than one" : "no", id);
		code = EXIT_USAGE;
		goto done;
	}
	maint_undrop(&m, found);
	if ((code = maint_save(&m)) == EXIT_DONE)
		printf("undropped %.12s (\"%s\"): it comes back into next on the next run\n",
		       found->commit ? found->commit : "-", found->subject ? found->subject : "");
done:
	maint_close(&m);
	return code;
}
