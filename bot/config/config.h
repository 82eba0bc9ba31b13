/* The config file (man 5 nextbot.yaml): strict loading into plain structs. */
#ifndef BOT_CONFIG_H
#define BOT_CONFIG_H

#include <time.h>
#include "util/strvec.h"

/*
 * Every char * below is owned by the struct config and freed by config_free();
 * optional strings are NULL when the key is absent.  Lists are (array, nr).
 * Paths (workdir, fixes, ssh_key, ca_file) are absolute: relative ones are resolved against
 * the config file's directory, "~/" against $HOME.  `line` fields are the 1-based
 * line of the item in the file, for messages ("trees[2] at nextbot.yaml:14").
 */

enum config_on_breakage {
	CONFIG_BREAK_REVERT_CULPRIT = 0, /* default */
	CONFIG_BREAK_PREVIOUS_VERSION,
	CONFIG_BREAK_DROP_TREE,
};

enum config_runner_kind {
	CONFIG_RUNNER_LOCAL = 0, /* default */
	CONFIG_RUNNER_SLURM,
};

/* runner.sandbox: what a build or test command runs inside. */
enum config_sandbox {
	CONFIG_SANDBOX_BWRAP = 0, /* default when bwrap is installed */
	CONFIG_SANDBOX_NONE,      /* an explicit choice; check-config warns about it */
};

enum config_tls {
	CONFIG_TLS_NONE = 0,
	CONFIG_TLS_STARTTLS, /* required: no plain fallback */
	CONFIG_TLS_IMPLICIT, /* smtps:// */
};

enum config_hook_format {
	CONFIG_HOOK_JSON = 0, /* the event object of nextbot(1) (default) */
	CONFIG_HOOK_SLACK,    /* incoming-webhook {"text": …}: Slack, Mattermost, Rocket.Chat */
};

enum config_deadline_kind {
	CONFIG_DEADLINE_NONE = 0,
	CONFIG_DEADLINE_CLOCK,    /* "HH:MM[:SS]" UTC: seconds = seconds after midnight */
	CONFIG_DEADLINE_DURATION, /* "4h", "90s", "1h30m": seconds = from the run's start */
};

/* base and trees[]. */
struct config_tree {
	char *name;          /* a ref-safe name: [A-Za-z0-9._-], not starting with '.' or
				'-', not ending with '.' or ".lock", no ".." */
	char *url;
	char *branch;
	struct strvec contacts; /* "Name <email>" or "email", as written */
	char *fixes;         /* absolute directory of carried fix patches; NULL: none */
	int line;
};

/* review_gate[].policy: what a patch without a review in a gated tree gets. */
enum config_gate_policy {
	CONFIG_GATE_REPORT = 0, /* listed in the summary and a review-missing mail (default) */
	CONFIG_GATE_HOLD,       /* also left out of next, as a drop, until its review lands */
};

/* review_gate[]: the trees whose patches need a review by someone other than their author. */
/* review_gate.verify: which review trailers count (issue 38). */
enum config_gate_verify {
	CONFIG_GATE_VERIFY_TRAILERS = 0, /* every trailer by someone other than the author */
	CONFIG_GATE_VERIFY_MAIL,         /* a trailer whose reviewer's own (authenticated) mail
					    carrying it nextbot saw in the patch's thread */
};

struct config_gate {
	struct strvec trees;    /* names or fnmatch globs over trees[] and watch[] */
	struct strvec require;  /* trailer keys that count; default Reviewed-by, Acked-by */
	enum config_gate_policy policy;
	int follow;             /* a patch it holds stays held in any tree until its review
				   lands; default 1 */
	enum config_gate_verify verify; /* default mail when the file has an `inbox` key */
	int line;
};

/* One axis of a build or test entry's `matrix`: an env variable and its values. */
struct config_axis {
	char *key;             /* a valid env name, not NEXTBOT_*, not in the entry's env */
	struct strvec values;  /* in file order, unique, [A-Za-z0-9._+-], at least one */
	int line, col;
};

/* build[] and test[]. */
struct config_command {
	char *name;
	char *command;       /* run by /bin/sh -c exactly as written */
	long timeout;        /* seconds, > 0; default 3600 */
	/* search probes may reuse the worker's outputs (default 0: every probe of a
	   search and the night's final verdict run in a clean tree) */
	int incremental;
	struct strvec env;   /* "KEY=VALUE" in file order: ready for runcmd_opts.env */
	struct config_axis *matrix; /* the entry's matrix, NULL: none (runs in every cell) */
	size_t matrix_nr;
	int line;
};

/*
 * A cell of the night's matrix (a configuration): one value for each matrix key.
 * Every entry with a matrix has the same keys; a cell exists when at least one
 * entry lists its values, and an entry without a matrix runs in every cell.  Each
 * cell is built in its own worker checkout, concurrently up to runner.max_jobs.
 * Without any matrix there is exactly one cell, named "" with an empty env, and
 * everything runs as it always did.
 */
#define CONFIG_MAX_CELLS 64
struct config_cell {
	char *name;          /* "ARCH=arm64" ("K=v,K2=v2", keys in the first matrix's
				order); safe in file names; "" without a matrix */
	struct strvec env;   /* "ARCH=arm64", …: added to the env of every command of the cell */
};

struct config_webhook {
	char *url;
	char *secret_env;    /* NAME of the env var holding the HMAC secret; NULL: unsigned */
	enum config_hook_format format;
};

struct config {
	char *path;          /* the file as given (-c), for messages */
	char *dir;           /* absolute directory of the file */
	char *workdir;       /* absolute; default "state" beside the file */
	/* "FILE:LINE:COL: key: what": an old spelling still accepted, said on every load */
	struct strvec warnings;

	struct config_tree base;
	struct config_tree *trees; /* in merge order */
	size_t trees_nr;
	struct strvec never_merge; /* fnmatch globs on tree names and branches;
				      default ["mm-unstable"] when the key is absent */
	/* watch[]: branches fetched every night (refs/feeds/<name>) and never merged, such
	   as mm-unstable; names unique across trees[], watch[] and the base; no fixes */
	struct config_tree *watch;
	size_t watch_nr;
	struct {
		struct strvec trees; /* names or globs over trees[] and watch[]; empty: none */
		char *list;          /* Cc of every journey mail; NULL: none (or per tree:) */
		struct strvec list_trees, lists; /* `list` as a mapping: a tree name or
					glob, its list; the first match wins, `list` else */
		int digest;          /* one mail per recipient per night; default 0 */
	} journey;
	struct config_gate *gates; /* review_gate[] */
	size_t gates_nr;

	struct config_command *build, *test;
	size_t build_nr, test_nr;
	struct config_cell *cells;           /* at least one (see struct config_cell) */
	size_t cells_nr;
	int build_after_each_merge;          /* default 1 */
	enum config_on_breakage on_breakage; /* default revert-culprit */
	struct {
		int confirm; /* default 2 (0..100) */
		int jobs;    /* default 1 (1..256) */
	} bisect;

	struct {
		enum config_deadline_kind kind;
		long seconds;
		char *text;  /* as written; NULL when none */
	} deadline;

	char *merge_identity; /* "Name <email>"; default notify.from */

	struct {
		enum config_runner_kind kind;
		char *user;             /* default "nobody"; never root, must exist */
		char *partition;        /* NULL: Slurm's default */
		struct strvec srun_args;
		int max_jobs;           /* jobs at once (cells, speculative builds, Slurm
					   jobs); default 1 locally, 4 on Slurm */
		enum config_sandbox sandbox; /* default bwrap when installed, else none */
		int sandbox_defaulted;  /* the key is absent (none because bwrap is missing) */
		char *bwrap;            /* absolute path of bwrap; NULL with sandbox none */
		int network;            /* commands may reach the network; default 0 */
		struct strvec read_only; /* absolute paths shown read-only in the sandbox */
		struct strvec devices;  /* device files the sandbox shows (/dev/kvm); the
					   box's /dev has only null, zero, random, tty… */
		/* free space below which nextbot reclaims its workers before it calls a
		   full disk an infrastructure problem; default 256 MiB */
		long long min_free;
		/* runner.cache: the compiler cache, nextbot's own (cc/cc.h); off unless given */
		struct {
			int on;
			char *dir;          /* absolute; default <workdir>/ccache */
			long long max;      /* bytes; default 5 GiB */
			/* HOST:PORT the nodes of a cluster reach the service at (TCP,
			   with a token of the night's); NULL: this host's socket only */
			char *listen;
		} cache;
		struct {
			long long memory;   /* bytes for all of a command's processes;
					       default 3/4 of the host's RAM */
			long processes;     /* tasks at once; default 2048 */
			long cpu;           /* CPU seconds per process; 0 (default): none */
			long long file_size; /* largest file written; default 8 GiB */
		} limits;
	} runner;

	struct {
		char *token_env;        /* NAME of the env var with an https token */
		char *ssh_key;          /* absolute path; NULL: agent/none */
		char *ca_file;          /* absolute path of the CA certificates (PEM) https
					   remotes are checked against; NULL: the system's */
		long fetch_timeout;     /* seconds a remote may send nothing; default 600 */
	} git;

	struct {
		char *url;              /* NULL: do not publish */
		char *branch;           /* default "master" */
	} publish;

	struct {
		char *from;             /* default "nextbot <nextbot@localhost>" */
		char *list;             /* NULL: no list */
		char *operator;         /* the operator's address ("Name <a@b>" or "a@b"): may
					   act on any flag by mail, and alone gets the
					   host's instructions (local paths, commands); NULL */
		char *report_url;       /* may hold "{id}" */
		int remind_days;        /* default 0: never */
		struct {
			char *url;      /* NULL: no SMTP, mails stay in the outbox */
			enum config_tls tls; /* default implicit for smtps://, else starttls */
			char *user;
			char *password_env; /* NAME of the env var with the password */
			char *ca_file;  /* absolute path of CA certificates (PEM) to trust
					   for the server; NULL: the system's */
		} smtp;
		struct config_webhook *webhooks;
		size_t webhooks_nr;
	} notify;

	/* Where answers to nextbot's mails arrive: polled over IMAP (`url`) or piped to
	   `nextbot mail-in` by the MTA (no `url`). */
	struct {
		char *url;              /* imaps://host[:port]/MAILBOX or imap://; NULL: none */
		enum config_tls tls;    /* implicit for imaps://; starttls for imap:// unless
					   `tls: none` */
		char *user;             /* required with url */
		char *password_env;     /* NAME of the env var with the password */
		char *ca_file;          /* absolute path of CA certificates (PEM); NULL: system */
		long poll;              /* seconds between polls of `daemon`; default 300 */
		char *authserv_id;      /* the receiving server's authserv-id (RFC 8601); NULL:
					   From: is believed as written */
		int max_tests;          /* `#nextbot test:` runs a day; default 10; 0: none */
		struct strvec test_urls; /* URL prefixes `test:` may fetch; empty: the hosts of
					    the configured trees */
		int configured;         /* the file has an `inbox` key */
	} inbox;
	int drop_push;        /* a drop by mail also pushes (as `drop --push`); default 0 */

	/* MAINTAINERS routing and its audit (bot/people/): off when the tree has no file */
	struct {
		char *file;           /* the file at the base's tip; default "MAINTAINERS" */
		int roles[3];         /* M, R, L wanted (1); default all three */
		int max;              /* people and lists added to a mail; default 20; 0: none */
		int absent_days;      /* not seen this long: absent; default 730 */
		int window_days;      /* history the audit reads; default 1825 (5 years) */
		char *audit_list;     /* the monthly audit's address; NULL: no mail */
		struct {              /* regex_limits: what one K: pattern may cost */
			long long match; /* steps of one match; default 100000 */
			long long heap;  /* bytes of heap of one match; default 1M */
			long long size;  /* bytes of one compiled pattern; default 16K */
		} regex_limits;
		int line;             /* of the `maintainers` key; 0: absent */
	} maintainers;

	char *schedule;       /* 5-field cron; default "0 2 * * *" */
	int keep_days;        /* default 60, >= 1 */
};

/*
 * Loads and validates `path` into *out (caller frees with config_free()).  On any
 * failure — unreadable or over 1 MiB, malformed YAML, an anchor or alias, nesting
 * deeper than 32, an unknown or duplicate key, a wrong type or value, a missing
 * name/url/branch, a duplicate tree name, a tree or branch that never_merge
 * matches, a tree name that is not valid in a ref, a runner.user that is root or
 * does not exist, a NUL byte in any string, a URL with a password in it, sandbox
 * bwrap without bwrap installed — returns NB_EINVALID with *out NULL and the error recorded as
 * "FILE:LINE:COLUMN: KEY.PATH: what is wrong" (the CLI exits 2 on it).
 */
int config_load(struct config **out, const char *path);
/*
 * bwrap on PATH (or /usr/bin): its absolute path (caller frees), or NULL.  Where it is
 * NULL the sandbox defaults to none, and runner.cache is refused.
 */
char *config_find_bwrap(void);
/*
 * The same, and on failure every error of the file appended to `errors` (may be
 * NULL), in the order found: every section and every list item is read whatever
 * went wrong before it (a YAML syntax error stops the reading: it is the only one).
 */
int config_load_all(struct config **out, const char *path, struct strvec *errors);
void config_free(struct config *cfg);

/*
 * The never_merge pattern matching a tree's name or branch, or NULL.  Borrowed
 * from cfg.  The merge step calls it again before merging anything.
 */
const char *config_never_merge_match(const struct config *cfg, const char *name,
				     const char *branch);

/* 1 when entry `c` runs in `cell` (an entry without a matrix runs in every cell). */
int config_cell_has(const struct config_cell *cell, const struct config_command *c);
/*
 * The name of entry `c` in `cell`: "build[ARCH=arm64]", or "build" when the config
 * has no matrix.  Stable from night to night and safe in file names.  Caller frees.
 */
char *config_cell_command_name(const struct config_cell *cell, const struct config_command *c);

/* A secret by its env var NAME, read at use time; NULL if unset or name is NULL. */
const char *config_secret(const char *env_name);

/*
 * When the run that started at `start` must stop starting new work: the next
 * HH:MM:SS UTC after start, or start + duration; 0 when there is no deadline.
 */
time_t config_deadline_at(const struct config *cfg, time_t start);

/* The keyword as written in the file ("revert-culprit", "slurm", "starttls"). */
const char *config_on_breakage_name(enum config_on_breakage v);
const char *config_runner_kind_name(enum config_runner_kind v);
const char *config_sandbox_name(enum config_sandbox v);
const char *config_tls_name(enum config_tls v);
const char *config_hook_format_name(enum config_hook_format v);
const char *config_gate_policy_name(enum config_gate_policy v);
const char *config_gate_verify_name(enum config_gate_verify v);

/*
 * The tree (of trees[], then watch[]) named `name`, or NULL; *is_watch (may be NULL)
 * says which list.  Borrowed from cfg.
 */
const struct config_tree *config_tree_find(const struct config *cfg, const char *name,
					   int *is_watch);
/* journey.list for tree `name`: its own (list as a mapping), else the one for all; NULL. */
const char *config_journey_list(const struct config *cfg, const char *name);
/* 1 when `name` matches one of the names or fnmatch globs in `globs`. */
int config_globs_match(const struct strvec *globs, const char *name);

/*
 * Parses a timeout or duration: a plain number of seconds or "90s", "15m", "2h",
 * "1d", "1h30m".  Returns 0 and *out > 0, or -1.
 */
int config_parse_duration(const char *s, long *out);

#endif
