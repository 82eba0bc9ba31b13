/* `nextbot gc`: prune old runs, idle workers and sent notices; repack the work repository. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bot/core/botutil.h"
#include "bot/cli/cli_int.h"
#include "bot/journey/journey.h"
#include "bot/state/state.h"
#include "bot/actions/actions.h"
#include "merge/repo/repo.h"
#include "util/xalloc.h"
#include "util/banned.h"

int cmd_gc(const struct cli_ctx *ctx, int argc, char **argv)
{
	struct bot_gc_report r = BOT_GC_REPORT_INIT;
	struct maint m;
	char *repo_path;
	int code, err;

	if (argc != 1) {
		fprintf(stderr, "usage: nextbot gc\n");
		return EXIT_USAGE;
	}
	if ((code = maint_open(&m, ctx)))
		return code;
	if (merge_global_init() < 0) {
		bot_error("gc");
		maint_close(&m);
		return EXIT_FAILED;
	}
	err = bot_gc(&r, m.cfg, &m.st, time(NULL), journey_gc);
	code = maint_save(&m);
	repo_path = xstrfmt("%s/repo.git", m.cfg->workdir);
	if (ctx->verbosity > 0)
		bot_gc_print(&r, repo_path);
	if (err < 0) {
		bot_error("gc");
		code = EXIT_FAILED;
	}
	free(repo_path);
	bot_gc_report_release(&r);
	merge_global_shutdown();
	maint_close(&m);
	return code;
}
