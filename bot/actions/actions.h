/* What the maintainer commands share: config, lock, state, flag lookup. */
#ifndef BOT_ACTIONS_H
#define BOT_ACTIONS_H

#include "bot/core/botutil.h"
#include "bot/config/config.h"
#include "bot/state/state.h"
#include "merge/repo/repo.h"

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

/*
 * The actions the shell commands and mail commands share; the caller saves the state.
 * maint_drop_flag: drops the patch of flag f as `nextbot drop` does: records the drop
 * (`by` and `mail`: the sender and the command mail's key when it came by mail, else
 * NULL), marks the patch's flags dropped and queues the `dropped` notice.  *out is
 * the new drop; returns 0, 1 when the patch was already dropped (*out is that drop,
 * nothing changed), or -1 when the notice cannot be queued (error recorded).
 */
int maint_drop_flag(struct maint *m, struct flag *f, const char *reason, const char *by,
		    const char *mail, struct drop **out);
/*
 * maint_drop_patch: the same for a patch that no flag names (`p` from
 * maint_patch_find()): records its drop, marks the flags of the patch, if any,
 * dropped and queues the `dropped` notice.  Returns as maint_drop_flag() does.
 */
int maint_drop_patch(struct maint *m, const struct lookup_patch *p, const char *reason,
		     const char *by, const char *mail, struct drop **out);
/*
 * The patch `id` names among the new patches of every configured tree as last fetched
 * (a commit or patch-id prefix of 4+ hex digits, or a Message-ID): *idx is its index
 * in `pool` (the caller releases the pool).  Returns 0, or negative with the reason
 * recorded: NB_ENOTFOUND when no patch or more than one matches, another error when
 * the work repository cannot be read.  Needs merge_global_init().
 */
int maint_patch_find(struct lookup_patches *pool, long *idx, struct maint *m, const char *id);
/*
 * The active drop `id` names (flag id, commit, patch-id, Message-ID); NULL: none, or
 * more than one (*ambiguous set).
 */
struct drop *maint_drop_find(struct maint *m, const char *id, int *ambiguous);
/* `drop --push`: the tree's branch pushed without the patch; prints, returns an exit code. */
int maint_drop_push(struct maint *m, const struct drop *d);
/* The active drop of the same patch (by patch-id, else commit), or NULL. */
struct drop *maint_drop_already(struct state *st, const struct nb_patchid *patch_id,
				const char *commit);
/* The active drop of flag f (by its flag id, patch-id or commit), or NULL. */
struct drop *maint_drop_of_flag(struct maint *m, const struct flag *f);
/* Takes drop d back: inactive, its flag open again when it was dropped. */
void maint_undrop(struct maint *m, struct drop *d);
/* Marks flag f a false positive with `reason` (dismiss, `#nextbot invalid`). */
void maint_dismiss(struct flag *f, const char *reason);

#endif
