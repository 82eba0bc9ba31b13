/* The commands of the command line (`nextbot help`), one function each, called by cli.c. */
#ifndef BOT_CLI_INT_H
#define BOT_CLI_INT_H

#include "bot/core/botutil.h"

/*
 * Each gets argv with argv[0] the command's name ("run", "outbox", …) and returns
 * the process exit code (enum cli_exit).  A command prints its own errors, through
 * nb_error_last() at the end; nothing below bot/ prints them.
 */
int cmd_sim(const struct cli_ctx *ctx, int argc, char **argv);
int cmd_run(const struct cli_ctx *ctx, int argc, char **argv);
int cmd_daemon(const struct cli_ctx *ctx, int argc, char **argv);
int cmd_status(const struct cli_ctx *ctx, int argc, char **argv);
int cmd_flagged(const struct cli_ctx *ctx, int argc, char **argv);
int cmd_reviews(const struct cli_ctx *ctx, int argc, char **argv); /* cmd_reviews.c */
int cmd_drop(const struct cli_ctx *ctx, int argc, char **argv);
int cmd_undrop(const struct cli_ctx *ctx, int argc, char **argv);
int cmd_dismiss(const struct cli_ctx *ctx, int argc, char **argv);
int cmd_resolve(const struct cli_ctx *ctx, int argc, char **argv);
int cmd_bisect(const struct cli_ctx *ctx, int argc, char **argv);
int cmd_outbox(const struct cli_ctx *ctx, int argc, char **argv);
int cmd_report(const struct cli_ctx *ctx, int argc, char **argv);
int cmd_gc(const struct cli_ctx *ctx, int argc, char **argv);
int cmd_inbox(const struct cli_ctx *ctx, int argc, char **argv);
int cmd_mail_in(const struct cli_ctx *ctx, int argc, char **argv);
int cmd_check_config(const struct cli_ctx *ctx, int argc, char **argv);
int cmd_boot_test(const struct cli_ctx *ctx, int argc, char **argv);
/* cmd_patch (`nextbot patch`) is journey.h's, cmd_maintainers and cmd_reviews people.h's. */
/* Not in the help: run by nextbot itself, as the runner user (bot/cli/cmd_worker.c). */
int cmd_worker_checkout(const struct cli_ctx *ctx, int argc, char **argv);
/* Not in the help: the compile service a night starts (bot/cli/cmd_cc.c). */
int cmd_cc_serve(const struct cli_ctx *ctx, int argc, char **argv);

/* bot/cli/cmd_run.c: a whole night under the lock, then delivery (exit code). */
int bot_night(const struct config *cfg, const char *date, int no_notify);
/*
 * Pushes the last night again when its publishing failed (a note says so);
 * clears the note on success.  The caller holds the lock.
 */
void bot_publish_retry(const struct config *cfg);
/*
 * bot/cli/cmd_inbox.c: polls inbox.url once under the lock (for `daemon` between nights):
 * handles the new mails, delivers the outbox, logs what it did.  0, or -1 when the
 * lock was held or the server could not be polled (the mails wait; logged).
 */
int bot_inbox_poll(const struct config *cfg);
/* Delivers the due notices of the outbox (all queued ones with `all`). */
int bot_outbox_deliver(const struct config *cfg, int all);

/* cmd_boot.c: a boot's verdict from its serial console alone (the unit tests'). */
enum boot_verdict { BOOT_PASS, BOOT_PANIC, BOOT_OOPS, BOOT_TIMEOUT, BOOT_NO_MARKER };
struct strbuf;
/* `why`: one line, e.g. "kernel panic: Kernel panic - not syncing: VFS: …". */
enum boot_verdict boot_verdict(const char *console, int timed_out, struct strbuf *why);
/* Writes the initramfs (newc cpio: /init, busybox, /dev/console) to `path`. */
int boot_initramfs(const char *path, const char *busybox);

/* cmd_maint.c: parses "ID [--reason TEXT] [--push]"; 0 or EXIT_USAGE (usage printed). */
int maint_args(const char **id, const char **reason, int *push, int argc, char **argv,
	       const char *usage, int need_reason);

#endif
