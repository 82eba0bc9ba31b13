/*
 * Checking one commit with the configured build and test commands, for bot/: the
 * plain "does next build and test clean" question asked after each merge and at
 * the end of the night.  Built on merge/probe.c (worker 0, verdict cache, pristine
 * retry); commits are 40-hex strings.
 */
#ifndef MERGE_CHECK_H
#define MERGE_CHECK_H

#include <stddef.h>
#include "merge/culprit.h"

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

#endif
