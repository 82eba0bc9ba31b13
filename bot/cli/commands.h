/* The commands of the command line (`nextbot help`), one function each, called by cli.c. */
#ifndef BOT_COMMANDS_H
#define BOT_COMMANDS_H

/* Exit codes: 0 done, 1 the bot failed, 2 usage or config error, 3 `bisect` found only skips. */
enum cli_exit {
	EXIT_DONE = 0,     /* the command did its job */
	EXIT_FAILED = 1,   /* the bot itself failed */
	EXIT_USAGE = 2,    /* usage or config error */
	EXIT_SKIPPED = 3,  /* bisect: only skipped commits remain */
	EXIT_DATAERR = 65, /* mail-in: not a mail message (sysexits EX_DATAERR) */
	EXIT_TEMPFAIL = 75, /* mail-in: try again later (EX_TEMPFAIL): lock held, disk */
};

/* What the global options resolved to; borrowed for the command's lifetime. */
struct cli_ctx {
	const char *config_path; /* -c FILE, else $NEXTBOT_CONFIG, else ./nextbot.yaml */
	int json;                /* --json: listing commands print one JSON document */
	int verbosity;           /* 0 quiet (-q), 1 normal, 2 verbose (-v) */
};

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
int cmd_patch(const struct cli_ctx *ctx, int argc, char **argv); /* bot/journey/ */
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
/* bot/people/cmd_people.c */
int cmd_maintainers(const struct cli_ctx *ctx, int argc, char **argv);
int cmd_reviews(const struct cli_ctx *ctx, int argc, char **argv);
/* Not in the help: run by nextbot itself, as the runner user (bot/cli/cmd_worker.c). */
int cmd_worker_checkout(const struct cli_ctx *ctx, int argc, char **argv);
/* Not in the help: the compile service a night starts (bot/cli/cmd_cc.c). */
int cmd_cc_serve(const struct cli_ctx *ctx, int argc, char **argv);

#endif
