/*
 * Finding the patch that broke a build or test, for bot/: the nightly two-level
 * search after a failing check (which merge, then which patch, semantic partners,
 * bounds, confirmation).  The standalone `nextbot bisect` is merge/bisect_repo.h.
 * No libgit2 types here.
 */
#ifndef MERGE_CULPRIT_H
#define MERGE_CULPRIT_H

#include "util/oid.h"
#include <stddef.h>
#include "util/strbuf.h"
#include "util/strvec.h"

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
	 * check of next (merge/check.h) failing incrementally with one of them is
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

#endif
