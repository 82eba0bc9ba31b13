/* `nextbot mail-in` (one mail on stdin, from an MTA) and `nextbot inbox` (poll IMAP). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bot/core/botutil.h"
#include "bot/cli/cli_int.h"
#include "bot/state/state.h"
#include "bot/mail/mail.h"
#include "bot/actions/actions.h"
#include "merge/repo/repo.h"
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

/* What one poll came to. */
struct poll_ctx {
	struct maint *m;
	int count[MAILCMD_UNPARSEABLE + 1];
};

/* Each new mail of the mailbox: handled and saved before it is marked on the server. */
static int on_mail(void *data, const char *raw, size_t len)
{
	struct poll_ctx *pc = data;
	enum mailcmd_outcome o;

	if (handle_one(pc->m, raw, len, &o))
		return -1; /* state not written: leave it (and the rest) for the next poll */
	pc->count[o]++;
	return 0;
}

static enum notice_tls imap_tls(enum config_tls t)
{
	return t == CONFIG_TLS_NONE ? NOTICE_TLS_NONE
	       : t == CONFIG_TLS_STARTTLS ? NOTICE_TLS_STARTTLS
					  : NOTICE_TLS_IMPLICIT;
}

/* One poll of inbox.url with m's lock held; the summary line into `line`. */
static int poll_once(struct maint *m, struct strbuf *line)
{
	const struct config *cfg = m->cfg;
	struct inbox_imap imap = { cfg->inbox.url,
				   imap_tls(cfg->inbox.tls),
				   cfg->inbox.user,
				   config_secret(cfg->inbox.password_env),
				   cfg->inbox.ca_file,
				   0,
				   0 };
	struct poll_ctx pc = { m, { 0 } };
	struct inbox_imap_stats st;
	int ret = inbox_imap_poll(&st, &imap, on_mail, &pc);

	strbuf_addf(line, "inbox: %d new: %d acted, %d refused, %d ignored, %d handled before, "
			  "%d not mail",
		    st.found, pc.count[MAILCMD_ACTED], pc.count[MAILCMD_REFUSED],
		    pc.count[MAILCMD_IGNORED], pc.count[MAILCMD_DUPLICATE],
		    pc.count[MAILCMD_UNPARSEABLE]);
	if (st.left)
		strbuf_addf(line, "; %d left for the next poll", st.left);
	return ret;
}

int bot_inbox_poll(const struct config *cfg)
{
	struct run_lock lock = RUN_LOCK_INIT;
	struct strbuf line = STRBUF_INIT;
	struct maint m;
	int ret = -1;

	memset(&m, 0, sizeof(m));
	m.cfg = (struct config *)cfg;
	m.lock = lock;
	if (run_lock_take(&m.lock, cfg->workdir) < 0) {
		log_warn("inbox: not polled: %s", nb_error_last());
		return -1;
	}
	if (state_load(&m.st, cfg->workdir) < 0) {
		log_warn("inbox: not polled: %s", nb_error_last());
		goto done;
	}
	if (libs_start() < 0) {
		log_warn("inbox: not polled: %s", nb_error_last());
		goto done;
	}
	ret = poll_once(&m, &line);
	if (ret < 0)
		log_warn("inbox: %s (the mails wait for the next poll)", nb_error_last());
	else if (line.len)
		log_info("%s", line.buf);
	if (mailtest_run_queued(&m) < 0)
		log_warn("inbox: tests: %s", nb_error_last());
	bot_outbox_deliver(cfg, 0);
	libs_stop();
done:
	state_release(&m.st);
	run_lock_release(&m.lock);
	strbuf_release(&line);
	return ret;
}

int cmd_inbox(const struct cli_ctx *ctx, int argc, char **argv)
{
	struct strbuf line = STRBUF_INIT;
	struct maint m;
	int code, tests;

	if (argc != 1) {
		fputs("usage: nextbot inbox\n", stderr);
		return EXIT_USAGE;
	}
	if ((code = maint_open(&m, ctx)))
		return code;
	if (libs_start() < 0) {
		bot_error("inbox");
		maint_close(&m);
		return EXIT_FAILED;
	}
	code = EXIT_DONE;
	if (!m.cfg->inbox.url)
		strbuf_addstr(&line, "inbox: no inbox.url to poll (mail comes through mail-in)");
	else if (poll_once(&m, &line) < 0) {
		bot_error("inbox: the mails wait for the next poll");
		strbuf_reset(&line);
		code = EXIT_FAILED;
	}
	/* the tests queued by mail (this poll's, or mail-in's) */
	if ((tests = mailtest_run_queued(&m)) < 0) {
		bot_error("inbox: tests");
		code = EXIT_FAILED;
	} else if (tests) {
		strbuf_addf(&line, "%stests run: %d", line.len ? "; " : "", tests);
	}
	if (ctx->verbosity > 0 && line.len)
		printf("%s\n", line.buf);
	if (bot_outbox_deliver(m.cfg, 0) < 0)
		code = EXIT_FAILED;
	libs_stop();
	maint_close(&m);
	strbuf_release(&line);
	return code;
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
