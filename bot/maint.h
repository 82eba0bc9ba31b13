/* What the maintainer commands share: config, lock, state, flag lookup. */
#ifndef BOT_MAINT_H
#define BOT_MAINT_H

#include "bot/commands.h"
#include "bot/config.h"
#include "bot/lock.h"
#include "bot/state.h"

struct maint {
	struct config *cfg;
	struct run_lock lock;
	struct state st;
};

/* Loads the config, takes the lock, loads state; returns 0 or an exit code (printed). */
int maint_open(struct maint *m, const struct cli_ctx *ctx);
/* Saves state; returns EXIT_DONE or EXIT_FAILED (printed). */
int maint_save(struct maint *m);
void maint_close(struct maint *m);
/* The flag ID names (prints when ambiguous); NULL if none. */
struct flag *maint_flag_find(struct maint *m, const char *id);
/* Parses "ID [--reason TEXT] [--push]"; returns 0 or EXIT_USAGE (usage printed). */
int maint_args(const char **id, const char **reason, int *push, int argc, char **argv,
	       const char *usage, int need_reason);

#endif
