/* The maintainer's actions, the shell's and mail's: open, find, dismiss, undrop (drop.c: drop). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bot/core/botutil.h"
#include "bot/actions/actions.h"
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

void maint_dismiss(struct flag *f, const char *reason)
{
	f->state = FLAG_DISMISSED;
	free(f->reason);
	f->reason = xstrdup(reason);
}

/* A drop matches ID by its flag id, commit, patch-id (prefixes) or Message-ID. */
static int drop_matches(const struct drop *d, const char *id)
{
	size_t len = strlen(id);

	return (d->flag_id && !strncmp(d->flag_id, id, len)) ||
	       (d->commit && len >= 4 && !strncmp(d->commit, id, len)) ||
	       (!nb_patchid_is_none(&d->patch_id) && len >= 4 &&
		!strncmp(NB_PATCHID_HEX(&d->patch_id), id, len)) ||
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
		     nb_patchid_eq(&d->patch_id, &f->patch_id) ||
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
