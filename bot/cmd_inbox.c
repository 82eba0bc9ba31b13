/* `nextbot mail-in` (one mail on stdin, from an MTA) and `nextbot inbox` (poll IMAP). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bot/botutil.h"
#include "bot/cli.h"
#include "bot/commands.h"
#include "bot/mailcmd.h"
#include "bot/maint.h"
#include "merge/merge_global.h"
#include "notify/inbox.h"
#include "notify/notice.h"
#include "util/error.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/banned.h"

/* The message on stdin, at most INBOX_MAIL_MAX bytes kept; the rest is read and dropped. */
static int read_stdin(struct strbuf *out)
{
	char buf[65536];

	for (;;) {
		ssize_t n = read(0, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return nb_error_errno(NB_ERROR, "cannot read the mail on stdin");
		if (!n)
			return 0;
		if (out->len < INBOX_MAIL_MAX)
			strbuf_add(out, buf, (size_t)n);
	}
}

/* Handles one raw mail with the lock held and saves the state; 0 or an exit code. */
static int handle_one(struct maint *m, const char *raw, size_t len,
		      enum mailcmd_outcome *outcome)
{
	struct strbuf summary = STRBUF_INIT;
	int ret;

	ret = mailcmd_handle(outcome, m, raw, len, &summary);
	if (ret < 0) {
		bot_error("mail");
		strbuf_release(&summary);
		return EXIT_TEMPFAIL;
	}
	log_info("mail %s: %s", mailcmd_outcome_name(*outcome), summary.buf);
	strbuf_release(&summary);
	if (*outcome != MAILCMD_DUPLICATE && *outcome != MAILCMD_UNPARSEABLE &&
	    maint_save(m) != EXIT_DONE)
		return EXIT_TEMPFAIL;
	return 0;
}

/* Starts the libraries a mail command may need (a drop's push, delivery). */
static int libs_start(void)
{
	if (merge_global_init() < 0)
		return -1;
	if (notify_global_init() < 0) {
		merge_global_shutdown();
		return -1;
	}
	return 0;
}

static void libs_stop(void)
{
	notify_global_cleanup();
	merge_global_shutdown();
}

int cmd_mail_in(const struct cli_ctx *ctx, int argc, char **argv)
{
	struct strbuf raw = STRBUF_INIT;
	struct inbox_mail mail;
	enum mailcmd_outcome outcome;
	struct maint m;
	int code, bad;

	if (argc != 1) {
		fputs("usage: nextbot mail-in < MESSAGE\n", stderr);
		return EXIT_USAGE;
	}
	if (read_stdin(&raw) < 0) {
		bot_error("mail-in");
		code = EXIT_TEMPFAIL;
		goto done;
	}
	/* refused at once, before the lock: the MTA bounces it, it will never parse */
	bad = inbox_mail_parse(&mail, raw.buf, raw.len) < 0;
	inbox_mail_release(&mail);
	if (bad) {
		bot_error("mail-in");
		code = EXIT_DATAERR;
		goto done;
	}
	/* anything that is not the mail's fault (config, lock, disk): the MTA tries again */
	if (maint_open(&m, ctx)) {
		code = EXIT_TEMPFAIL;
		goto done;
	}
	if (libs_start() < 0) {
		bot_error("mail-in");
		maint_close(&m);
		code = EXIT_TEMPFAIL;
		goto done;
	}
	code = handle_one(&m, raw.buf, raw.len, &outcome);
	if (!code && outcome != MAILCMD_DUPLICATE)
		bot_outbox_deliver(m.cfg, 0); /* what is not delivered now stays queued */
	libs_stop();
	maint_close(&m);
done:
	strbuf_release(&raw);
	return code;
}
