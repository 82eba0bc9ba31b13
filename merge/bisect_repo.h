/* The standalone `nextbot bisect` over a repository (for bot/; no libgit2 types). */
#ifndef MERGE_BISECT_REPO_H
#define MERGE_BISECT_REPO_H

#include <stddef.h>
#include "util/oid.h"
#include "util/strvec.h"

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
