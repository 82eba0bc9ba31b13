/* `nextbot drop`: a maintainer keeps a patch out of next, flagged or not (bot/actions/ does it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bot/core/botutil.h"
#include "bot/cli/cli_int.h"
#include "bot/actions/actions.h"
#include "merge/repo/repo.h"
#include "util/error.h"
#include "util/xalloc.h"
#include "util/banned.h"

int cmd_drop(const struct cli_ctx *ctx, int argc, char **argv)
{
	struct lookup_patches pool = LOOKUP_PATCHES_INIT;
	const char *id, *reason;
	struct flag *f;
	struct drop *d;
	struct maint m;
	long idx = -1;
	int code, push;

	if ((code = maint_args(&id, &reason, &push, argc, argv,
			       "nextbot drop ID [--reason TEXT] [--push]", 0)))
		return code;
	if ((code = maint_open(&m, ctx)))
		return code;
	if (merge_global_init() < 0) {
		bot_error("cannot start libgit2");
		maint_close(&m);
		return EXIT_FAILED;
	}
	f = maint_flag_find(&m, id);
	if (!f && maint_patch_find(&pool, &idx, &m, id) < 0) {
		bot_error("drop");
		code = EXIT_USAGE;
		goto done;
	}
	/* dropping it again (a --push retried) records nothing twice: undrop stays possible */
	d = f ? maint_drop_already(&m.st, &f->patch_id, f->commit)
	      : maint_drop_already(&m.st, &pool.items[idx].patch_id, pool.items[idx].commit.hex);
	if (d) {
		printf("%.12s (\"%s\") was already dropped (%s)\n", d->commit ? d->commit : "-",
		       d->subject ? d->subject : "", d->when ? d->when : "?");
		code = push ? maint_drop_push(&m, d) : EXIT_DONE;
		goto done;
	}
	if (f) {
		if (maint_drop_flag(&m, f, reason, NULL, NULL, &d) < 0) {
			bot_error("cannot queue the dropped notice");
			code = EXIT_FAILED;
			goto done;
		}
	} else {
		if (maint_drop_patch(&m, &pool.items[idx], reason, NULL, NULL, &d) < 0) {
			bot_error("cannot queue the dropped notice");
			code = EXIT_FAILED;
			goto done;
		}
	}
	if ((code = maint_save(&m)) == EXIT_DONE)
		printf("dropped %.12s (\"%s\") from %s: it stays out of next, also after a "
		       "rebase\n", d->commit ? d->commit : "-", d->subject ? d->subject : "",
		       d->tree ? d->tree : "?");
	if (code == EXIT_DONE && push)
		code = maint_drop_push(&m, d);
done:
	lookup_patches_release(&pool);
	merge_global_shutdown();
	maint_close(&m);
	return code;
}
