/* `nextbot outbox list|flush`: the notices waiting in workdir/outbox, delivered on demand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bot/botutil.h"
#include "bot/cli.h"
#include "bot/commands.h"
#include "bot/config.h"
#include "bot/lock.h"
#include "notify/notice.h"
#include "util/error.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

static const char *const usage = "usage: nextbot [--json] outbox list\n"
				 "       nextbot outbox flush [--all]\n";

/*
 * notify/'s settings from the config; secrets read from the environment now.
 * TODO(lead): bot/notices.h's notices_init() builds the same; switch to it once
 * bot/notices.c is in, so the two cannot drift.
 */
static void __settings(struct notice_settings *s, struct notice_webhook **hooks, char **outbox,
		       const struct config *cfg)
{
	size_t i;

	memset(s, 0, sizeof(*s));
	*outbox = xstrfmt("%s/outbox", cfg->workdir);
	*hooks = xcalloc(cfg->notify.webhooks_nr + 1, sizeof(**hooks));
	for (i = 0; i < cfg->notify.webhooks_nr; i++) {
		(*hooks)[i].url = cfg->notify.webhooks[i].url;
		(*hooks)[i].secret = config_secret(cfg->notify.webhooks[i].secret_env);
	}
	s->from = cfg->notify.from;
	s->list = cfg->notify.list;
	s->report_url = cfg->notify.report_url;
	s->outbox_dir = *outbox;
	s->smtp.url = cfg->notify.smtp.url;
	s->smtp.tls = cfg->notify.smtp.tls == CONFIG_TLS_NONE	    ? NOTICE_TLS_NONE
		      : cfg->notify.smtp.tls == CONFIG_TLS_IMPLICIT ? NOTICE_TLS_IMPLICIT
								    : NOTICE_TLS_STARTTLS;
	s->smtp.user = cfg->notify.smtp.user;
	s->smtp.password = config_secret(cfg->notify.smtp.password_env);
	s->webhooks = *hooks;
	s->webhooks_nr = cfg->notify.webhooks_nr;
}

static int __list(const struct cli_ctx *ctx, const struct config *cfg)
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

static int __flush(const struct cli_ctx *ctx, const struct config *cfg, int all)
{
	struct run_lock lock = RUN_LOCK_INIT;
	struct notice_settings s;
	struct notice_webhook *hooks = NULL;
	struct notice_flush_stats st = {0};
	char *outbox = NULL;
	int code = EXIT_DONE;

	/* Flushing writes the outbox: one writer of a work directory at a time. */
	if (run_lock_take(&lock, cfg->workdir) < 0) {
		bot_error("outbox flush");
		return EXIT_FAILED;
	}
	__settings(&s, &hooks, &outbox, cfg);
	if (notify_global_init() < 0 || notice_outbox_flush(&s, all, &st) < 0) {
		bot_error("outbox flush");
		code = EXIT_FAILED;
	} else if (ctx->verbosity > 0) {
		printf("outbox: %d sent, %d failed, %d still queued, %d not due%s\n", st.sent,
		       st.failed, st.deferred, st.skipped,
		       s.smtp.url ? "" : " (no smtp configured)");
	}
	notify_global_cleanup();
	run_lock_release(&lock);
	free(hooks);
	free(outbox);
	return code;
}

int cmd_outbox(const struct cli_ctx *ctx, int argc, char **argv)
{
	struct config *cfg = NULL;
	int code, all = 0, list;

	if (argc < 2 || (strcmp(argv[1], "list") && strcmp(argv[1], "flush"))) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	list = !strcmp(argv[1], "list");
	if (argc == 3 && !list && !strcmp(argv[2], "--all"))
		all = 1;
	else if (argc > 2) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	if ((code = bot_config_open(&cfg, ctx)))
		return code;
	code = list ? __list(ctx, cfg) : __flush(ctx, cfg, all);
	config_free(cfg);
	return code;
}
