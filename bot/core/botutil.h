/* What every bot command does the same way: open the config, print errors, dates. */
#ifndef BOT_BOTUTIL_H
#define BOT_BOTUTIL_H

#include <signal.h>
#include <time.h>
#include "bot/config/config.h"
#include "util/strbuf.h"

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
 * Loads ctx->config_path into *out.  Returns 0, or the exit code to return
 * (EXIT_USAGE) after printing the error.  Caller frees with config_free().
 */
int bot_config_open(struct config **out, const struct cli_ctx *ctx);
/* Prints "nextbot: <what>: <last recorded error>" to stderr. */
void bot_error(const char *what);
/* Formats `t` as RFC 3339 UTC ("2026-12-03T02:00:00Z") into buf (>= 21 bytes). */
void bot_rfc3339(char *buf, size_t n, time_t t);
/* Today's date, UTC, as YYYY-MM-DD into buf (>= 11 bytes). */
void bot_today(char *buf, size_t n);
/* 1 if `s` is a valid YYYY-MM-DD date. */
int bot_date_valid(const char *s);

/* Prose in mails nextbot writes itself is wrapped at this column. */
#define BOT_WRAP 72
/*
 * Appends `text` (one paragraph) wrapped at BOT_WRAP columns on blanks, each line
 * starting with `indent`, then a blank line.  A word longer than a line stays whole.
 */
void bot_wrap(struct strbuf *out, const char *text, const char *indent);

/*
 * nextbot's own binary, as an absolute path (it is run again as the worker
 * checkout's child); "/proc/self/exe" when the kernel does not say.  Static storage.
 */
const char *bot_self_exe(void);
/*
 * nextbot's binary as the runner user can start it (worker checkouts run it as
 * that user, in the box): as root, a copy in `dir`, a folder of the workdir the
 * runner user reaches, written again when the binary changed, since the binary may
 * sit where only root enters (a build in a 0700 temporary folder, /root).  Not as
 * root, or when the copy cannot be made (warned): bot_self_exe().  The path stays
 * valid until the next call with another `dir`.
 */
const char *bot_runner_exe(const char *dir);

/* Set by SIGTERM/SIGINT (daemon and run): finish the current step, then stop. */
extern volatile sig_atomic_t bot_stop_requested;
/* Installs the SIGTERM/SIGINT handler that sets bot_stop_requested. */
void bot_catch_stop(void);

#endif
