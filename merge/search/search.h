/*
 * merge/'s door for the search (what bot/ includes of it; no libgit2 type): the
 * night's two-level culprit search with its semantic partner and confirmation
 * (culprit_*), checking commits in the kept workers, several at once (check_*), error
 * excerpts and fingerprints (excerpt_*), the standalone `nextbot bisect` over a
 * repository (bisect_repo_*).
 */
#ifndef MERGE_SEARCH_H
#define MERGE_SEARCH_H

#include <stddef.h>
#include "util/oid.h"
#include "util/strbuf.h"
#include "util/strvec.h"

/*
 * Finding the patch that broke a build or test, for bot/: the nightly two-level
 * search after a failing check (which merge, then which patch, semantic partners,
 * bounds, confirmation).  The standalone `nextbot bisect` is bisect_repo_*() below.
 * No libgit2 types here.
 */
struct slurm_opts;
struct runcmd_box;
struct runcmd_limits;

/* ---- the nightly search ---- */

/*
 * One step of the night, in order: next's first-parent chain from the base.  A merge
 * step and the non-merge steps right after it (the reverts the night put after that
 * tree's merge) form one unit of the search: "which merge" probes the unit's end,
 * and the tree's probes carry the unit's reverts of the commits they contain.
 */
struct culprit_step {
	const char *tree;     /* the tree merged (a revert step: the tree of the reverted commit) */
	int is_merge;         /* 0: a revert or a fix applied on next */
	struct nb_oid before; /* next before the step */
	struct nb_oid after;  /* next after it (== before when nothing was committed) */
	struct nb_oid merged; /* merge steps: the tree's commit merged; empty otherwise */
	/* revert steps: the commit reverted; empty: read from the "This reverts
	   commit <id>." line of `after`'s message */
	struct nb_oid reverted;
};

struct culprit_command {
	const char *name;
	const char *command;          /* /bin/sh -c, as configured */
	const char *const *env;       /* "KEY=VALUE", NULL-terminated; may be NULL */
	double timeout;
	/* config `incremental: true`: the search's probes may keep earlier outputs
	   (every verdict that moves blame is then confirmed in a clean tree) */
	int incremental;
};

struct culprit_opts {
	const char *repo_path;        /* the bare work repository */
	const char *workers_dir;      /* kept worker checkouts: <workers_dir>/w<i> */
	const char *cache_dir;        /* the verdict cache; NULL: none */
	const char *runs_dir;         /* a log per command run goes here */
	const char *date;             /* YYYY-MM-DD, for NEXTBOT_DATE */
	const struct culprit_step *steps;
	size_t steps_nr;
	/*
	 * The failing command: a build (builds[failing]) or, when failing_is_test, a
	 * test (tests[failing]).  Bisecting a test runs every build first; a build
	 * failing then makes the probe a skip.
	 */
	const struct culprit_command *builds;
	size_t builds_nr;
	const struct culprit_command *tests;
	size_t tests_nr;
	size_t failing;
	int failing_is_test;
	unsigned confirm;             /* bisect.confirm (0 is taken as 1) */
	unsigned jobs;                /* bisect.jobs */
	const char *runner;           /* "local", "slurm": part of the cache key */
	const char *user;             /* as root, run commands as this user */
	const struct slurm_opts *slurm; /* util/slurm.h: run as Slurm job steps; NULL: locally */
	const struct runcmd_box *box; /* util/runcmd.h: the sandbox of every command (the
					 worker's tree is bound writable in it); NULL: none */
	const struct runcmd_limits *limits; /* util/runcmd.h; NULL: its defaults */
	const char *exe;              /* nextbot's binary: it makes the worker checkouts */
	/*
	 * Confirmed breakages whose culprit is in tonight's trees, as "<command
	 * name>\t<first error line, normalised>" (NULL-terminated; may be NULL): a
	 * check of next (check_commit() below) failing incrementally with one of them is
	 * taken without the pristine retry.  The search's own probes never use it.
	 */
	const char *const *known_errors;
	/* asked before every probe: non-zero stops the search (CULPRIT_STOPPED) */
	int (*stop)(void *data);
	void *stop_data;
};

enum culprit_outcome {
	CULPRIT_FOUND = 0,      /* confirmed: blame commit (and partner) */
	CULPRIT_UNCONFIRMED,    /* culprit and parent confirmed, but next with the culprit
				   reverted still fails: do not blame */
	CULPRIT_FLAKY,          /* the same clean tree passed and failed: flaky_fails of
				   flaky_runs; `tree` and `commit` name the patch that
				   last changed what the failure names, NULL/empty when
				   none of tonight's did (then nobody is flagged) */
	CULPRIT_SKIPPED,        /* only untestable commits left: candidates[] */
	CULPRIT_INFRA,          /* bounds failed or the runner broke: infra_reason, no blame */
	CULPRIT_STOPPED,        /* opts.stop said stop (deadline, SIGTERM): no blame */
	CULPRIT_NOT_REPRODUCED, /* next's tip never failed in a clean tree: an operator
				   note, no flag */
};
const char *culprit_outcome_name(enum culprit_outcome o); /* "found", "flaky", … */

struct culprit_result {
	enum culprit_outcome outcome;
	char *tree;                   /* the tree whose merge broke next (NULL if none) */
	size_t step;                  /* index of that step in opts.steps */
	struct nb_oid commit;              /* culprit: the tree's own commit id */
	char *subject;
	char *partner_tree;           /* semantic conflict: the earlier tree's patch … */
	struct nb_oid partner_commit;      /* … ("" when none) */
	struct {
		unsigned culprit_fails, parent_passes, revert_passes;
	} verdict;
	unsigned steps;               /* bisection probes (bounds and confirmation excluded) */
	unsigned confirm_runs;
	int known;                    /* the culprit's confirmation was known from an
					 earlier night (the same trees and commands) */
	struct strvec log;            /* the bisect logs, with "# …" section comments */
	char *command;                /* name of the deciding command */
	int exit_code;
	int timed_out;
	char *excerpt;                /* the lines that matter of the culprit's failure */
	char *first_error;            /* the first error line, as printed */
	char *fingerprint;            /* patch-id, command, normalised first error line */
	char flag_id[13];
	unsigned flaky_fails, flaky_runs;
	int incremental_unsafe;       /* some probe failed incrementally but passed pristine */
	char *infra_reason;
	struct strvec candidates;     /* CULPRIT_SKIPPED: commits the breakage may be in */
};
#define CULPRIT_RESULT_INIT { .log = STRVEC_INIT, .candidates = STRVEC_INIT }
void culprit_result_release(struct culprit_result *r);

/*
 * The search: bounds (the base passes, next's tip fails — else CULPRIT_FLAKY or
 * CULPRIT_INFRA), which merge (over the night's units: a merge step with the reverts
 * after it), which patch (probe i = next before the merge with the tree's i-th
 * first-parent commit merged in, then the unit's reverts of commits reachable from
 * it applied; a probe that does not merge or revert cleanly is a skip; a bad merge
 * commit is descended into), the semantic partner (when the culprit passes on the
 * base alone: the earlier tree's patch it needs, found the same way with the
 * culprit present), and confirmation (pristine, no cache: the culprit fails
 * `confirm` times, its parent passes as often, next with the culprit reverted passes
 * — or fails with another first error line, normalised: another breakage, left for
 * the next search).  Returns 0 with the outcome in
 * `out` (release with culprit_result_release()), negative only when nextbot itself
 * fails (repository, disk).
 */
int culprit_find(struct culprit_result *out, const struct culprit_opts *o);

/*
 * Checking one commit with the configured build and test commands, for bot/: the
 * plain "does next build and test clean" question asked after each merge and at
 * the end of the night.  Built on merge/search/probe.c (worker 0, verdict cache, pristine
 * retry); commits are 40-hex strings.
 */
enum check_verdict {
	CHECK_GOOD = 0,  /* every command passed */
	CHECK_BAD,       /* a command failed (in a pristine checkout) */
	CHECK_SKIP,      /* a command said 125: cannot be tested */
	CHECK_INFRA,     /* could not be judged: infra_reason */
};

struct check_result {
	enum check_verdict verdict;
	int failing_is_test;   /* the deciding command is tests[failing], else builds[] */
	size_t failing;
	int exit_code, timed_out, from_cache;
	char *excerpt;         /* owned; NULL when good */
	char *first_error;     /* owned */
	char *infra_reason;    /* owned; CHECK_INFRA */
	char *limit;           /* owned; the limit that ended the failing command
				  ("killed: memory limit 8 GiB"), NULL: none */
	unsigned runs;         /* commands run (0: all from the cache) */
	int cancelled;         /* check_commits() cut it off: no verdict (CHECK_INFRA) */
};
#define CHECK_RESULT_INIT { 0 }
void check_result_release(struct check_result *r);

/* One check: a commit, what of the commands to run, where. */
struct check_job {
	const struct culprit_opts *o;  /* its commands, workers_dir, cache, runner */
	struct nb_oid commit;
	int with_builds, with_tests;
	/*
	 * A verdict of record (the night's final verdict on next's tip, the base, a
	 * trial): run in a clean tree, the commit's files and nothing else, unless
	 * every command is `incremental`.  0: detection after a merge, in the kept
	 * tree, a failure retried clean (a pass then means "no failure seen yet").
	 */
	int clean;
	const char *tree;              /* NEXTBOT_TREE; may be NULL */
	unsigned worker;               /* runs in worker w<worker> of o->workers_dir */
};

/*
 * Runs job->o's builds (with `with_builds`) then its tests (with `with_tests`) on
 * job->commit in the job's worker of o->workers_dir, with the verdict cache of
 * o->cache_dir and logs in o->runs_dir.  Returns 0 with the verdict in `out`,
 * negative when nextbot itself fails.
 */
int check_commit(struct check_result *out, const struct check_job *job);

/*
 * Which jobs still matter: called (serialised) as each job ends, with its result;
 * returns the index from which on no job's result is wanted any more (n: all are).
 */
typedef size_t (*check_cutoff_fn)(void *data, size_t job, const struct check_result *r);

/*
 * Runs check_commit() for every job, at most `max_jobs` at once (0 and 1: one
 * after another in the calling thread), starting them in array order; out[i] is
 * jobs[i]'s result.  Jobs that run at once must not share a worker directory.
 * With `cutoff` (may be NULL), jobs past the cut-off it returns are not started,
 * and running ones are killed at once (on Slurm: scancel): their results say
 * `cancelled`.  Returns 0, or the first negative result after every job has ended.
 */
int check_commits(struct check_result *out, const struct check_job *jobs, size_t n,
		  unsigned max_jobs, check_cutoff_fn cutoff, void *data);

/*
 * The lines of a failing command's log that matter, and the breakage's signature.
 * Pure text work: no repository, no files; safe on any bytes (it is fuzzed).
 */
#define EXCERPT_MAX_LINES 40
#define EXCERPT_LINE_MAX 400	/* longer lines are cut, with "..." */

/*
 * From `log` (`len` bytes, need not be NUL-terminated, may hold any byte) appends
 * to `out` at most EXCERPT_MAX_LINES lines, each ending in '\n', in log order:
 * compiler `error:` lines with their "In function" line before and the source and
 * caret lines after, linker errors, failing tests (FAIL, "not ok", assertions,
 * crashes) with their diagnostics, make's "***" lines; the log's last lines when
 * none of these appear.  Colour escapes and control characters are removed.
 * `strip_prefix` (may be NULL), typically the checkout directory, is removed where
 * it starts a path, so the excerpt reads as relative paths whichever worker ran it.
 * `first_error` (may be NULL) gets the first error line (a compiler or test error
 * before a make "***" line; the last non-empty line when nothing matched), cleaned
 * but not normalised.
 */
void excerpt_extract(struct strbuf *out, struct strbuf *first_error, const char *log,
		     size_t len, const char *strip_prefix);

/*
 * Appends to `out` `line` normalised for the fingerprint: paths kept;
 * ":LINE:COL" numbers, "line N", 0x addresses, hex ids (7+ hex digits with a
 * digit among them), dates and times, and "[ 12.345678]" stamps removed;
 * whitespace runs folded to one space and trimmed.
 */
void excerpt_normalise(struct strbuf *out, const char *line);

/*
 * Appends the fingerprint of a breakage: "<patch_id>\n<command_name>\n<normalised
 * first error line>".  `patch_id`: the culprit's patch-id, or its commit id when
 * it has none (merges, binary changes).  Any argument may be NULL (taken as "").
 */
void excerpt_fingerprint(struct strbuf *out, const char *patch_id, const char *command_name,
			 const char *first_error_line);

/*
 * Appends the fingerprint of a flaky failure: as excerpt_fingerprint(), and the
 * error line's standalone decimal numbers dropped too ("(got 4, want 5)" becomes
 * "(got , want )"; "chunks57", "x86_64" and "v2" stay): a flaky test reports other
 * values each time it fails, and it is one failure, one flag.
 */
void excerpt_flaky_fingerprint(struct strbuf *out, const char *who, const char *command_name,
			       const char *first_error_line);

/* The flag id: the first 12 hex digits of SHA-1(fingerprint), NUL-terminated. */
void excerpt_flag_id(char out[13], const char *fingerprint);

/* The standalone `nextbot bisect` over a repository (for bot/; no libgit2 types). */
struct bisect_repo_opts {
	const char *repo;              /* a repository or a directory inside one */
	const char *bad;               /* revision */
	const char *const *goods;      /* revisions */
	size_t goods_nr;
	int first_parent;
	unsigned jobs;                 /* >= 1 */
	double timeout;                /* per command run, seconds; 0: none */
	const char *const *argv;       /* the command, NULL-terminated */
	const char *scratch;           /* directory for the worker checkouts (must exist) */
	const char *exe;               /* nextbot's binary: it makes the checkouts */
};

struct bisect_repo_result {
	int only_skipped;              /* 1: first bad is one of candidates[] */
	struct nb_oid first_bad;            /* when !only_skipped */
	char *subject;                 /* its subject; owned */
	struct strvec candidates;      /* only_skipped: skipped candidates, then the bad end */
	struct strvec skipped;         /* every commit the command skipped (exit 125) */
	unsigned steps, rounds;
	struct strvec log;             /* for `git bisect replay` */
};
#define BISECT_REPO_RESULT_INIT                                                \
	{                                                                         \
		0, NB_OID_INIT, NULL, STRVEC_INIT, STRVEC_INIT, 0, 0, STRVEC_INIT \
	}
void bisect_repo_result_release(struct bisect_repo_result *r);

/*
 * Bisects with `git bisect run` semantics (0 good, 125 skip, anything else bad,
 * a signal and a timeout included), running the command in scratch checkouts so
 * the repository's HEAD and work tree are untouched; `jobs` commits at a time.
 * Returns 0 with the outcome; NB_EINVALID or NB_ENOTFOUND (recorded) for bad
 * arguments (no repository, unknown revision, bad reachable from good);
 * NB_ERROR when the command could not be run at all.
 */
int bisect_repo_run(struct bisect_repo_result *out, const struct bisect_repo_opts *o);

#endif
