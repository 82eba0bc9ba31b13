/*
 * Finding the patch that broke a build or test, for bot/: the nightly two-level
 * search of SPEC.md step 5 (which merge, then which patch, semantic partners,
 * bounds, confirmation) and the standalone `nextbot bisect`.  No libgit2 types
 * here: commits are 40-hex strings.
 */
#ifndef MERGE_CULPRIT_H
#define MERGE_CULPRIT_H

#include <stddef.h>
#include "util/strbuf.h"
#include "util/strvec.h"

/* ---- standalone bisection (`nextbot bisect`) ---- */

struct culprit_bisect_opts {
	const char *repo;              /* a repository or a directory inside one */
	const char *bad;               /* revision */
	const char *const *goods;      /* revisions */
	size_t goods_nr;
	int first_parent;
	unsigned jobs;                 /* >= 1 */
	double timeout;                /* per command run, seconds; 0: none */
	const char *const *argv;       /* the command, NULL-terminated */
	const char *scratch;           /* directory for the worker checkouts (must exist) */
};

struct culprit_bisect_result {
	int only_skipped;              /* 1: first bad is one of candidates[] */
	char first_bad[41];            /* when !only_skipped */
	char *subject;                 /* its subject; owned */
	struct strvec candidates;      /* only_skipped: skipped candidates, then the bad end */
	struct strvec skipped;         /* every commit the command skipped (exit 125) */
	unsigned steps, rounds;
	struct strvec log;             /* for `git bisect replay` */
};
#define CULPRIT_BISECT_RESULT_INIT { 0, "", NULL, STRVEC_INIT, STRVEC_INIT, 0, 0, STRVEC_INIT }
void culprit_bisect_result_release(struct culprit_bisect_result *r);

/*
 * Bisects with `git bisect run` semantics (0 good, 125 skip, anything else bad,
 * a signal and a timeout included), running the command in scratch checkouts so
 * the repository's HEAD and work tree are untouched; `jobs` commits at a time.
 * Returns 0 with the outcome; NB_EINVALID or NB_ENOTFOUND (recorded) for bad
 * arguments (no repository, unknown revision, bad reachable from good);
 * NB_ERROR when the command could not be run at all.
 */
int culprit_bisect_repo(struct culprit_bisect_result *out, const struct culprit_bisect_opts *o);

#endif
