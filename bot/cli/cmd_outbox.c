/* `nextbot outbox list|flush`: the notices waiting in workdir/outbox, delivered on demand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bot/core/botutil.h"
#include "bot/cli/cli_int.h"
#include "bot/config/config.h"
#include "bot/state/state.h"
#include "bot/night/night.h"
#include "notify/notice.h"
#include "util/error.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

static const char *const usage = "usage: nextbot [--json] outbox list\n"
				 "       nextbot outbox flush [--due]\n";

static int list_outbox(const struct cli_ctx *ctx, const struct config *cfg)
{
	struct strbuf out = STRBUF_INIT;
	char *dir = xstrfmt("%s/outbox", cfg->workdir);
	int code = EXIT_DONE;

	if (notice_outbox_list(&out, dir, ctx->json) < 0) {
		bot_error("outbox list");
		code = EXIT_FAILED;
	} else if (!ctx->json && !out.len) {
		printf("outbox empty\n");
	} else {
		fputs(out.buf, stdout);
	}
	strbuf_release(&out);
	free(dir);
	return code;
}

static int flush(const struct cli_ctx *ctx, const struct config *cfg, int all)
{
	struct run_lock lock = RUN_LOCK_INIT;
	struct notice_flush_stats st = {0};
	struct notices n;
	int code = EXIT_DONE;

	/* Flushing writes the outbox: one writer of a work directory at a time. */
	if (run_lock_take(&lock, cfg->workdir) < 0) {
		bot_error("outbox flush");
		return EXIT_FAILED;
	}
	bot_publish_retry(cfg);
	notices_init(&n, cfg);
	if (notify_global_init() < 0 || notice_outbox_flush(&n.settings, all, &st) < 0) {
		bot_error("outbox flush");
		code = EXIT_FAILED;
	} else if (ctx->verbosity > 0) {
		printf("outbox: %d sent, %d failed, %d still queued, %d not due%s\n", st.sent,
		       st.failed, st.deferred, st.skipped,
		       n.settings.smtp.url ? "" : " (no smtp configured)");
	}
	notify_global_cleanup();
	notices_release(&n);
	run_lock_release(&lock);
	return code;
}

int cmd_outbox(const struct cli_ctx *ctx, int argc, char **argv)
{
	struct config *cfg = NULL;
	int code, all = 1, list;

	if (argc < 2 || (strcmp(argv[1], "list") && strcmp(argv[1], "flush"))) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	list = !strcmp(argv[1], "list");
	/* a maintainer's flush delivers now; --due keeps to the backoff, as a run does */
	if (argc == 3 && !list && !strcmp(argv[2], "--due"))
		all = 0;
	else if (argc == 3 && !list && !strcmp(argv[2], "--all"))
		all = 1;
	else if (argc > 2) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	if ((code = bot_config_open(&cfg, ctx)))
		return code;
	code = list ? list_outbox(ctx, cfg) : flush(ctx, cfg, all);
	config_free(cfg);
	return code;
}
