/*
 * A trial merge for `#nextbot test:`: someone's branch merged, in memory, in place
 * of a tree into next as it stood before that tree's merge, as a commit nobody's
 * ref points at but the caller's.  Hex ids in, typed ids out; no libgit2 types.
 */
#ifndef MERGE_TRIAL_H
#define MERGE_TRIAL_H

#include "util/oid.h"
#include "util/strvec.h"

struct repo;

/* A trial merge: which commits, and how the night would name the merge. */
struct trial_merge_opts {
	const struct nb_oid *onto, *tip;
	const char *branch, *url;   /* "Merge branch '<branch>' of <url>" */
	const char *identity;       /* the merge's author and committer */
	const char *date;           /* its day, YYYY-MM-DD */
};

/*
 * Merges `tip` into `onto` as the night would (a --no-ff merge commit "Merge branch
 * '<branch>' of <url>", by `identity` at 00:00 UTC of `date`, parents onto and tip).
 * Returns 0 with *out; NB_ECONFLICT with the conflicting paths in `paths` (when not
 * NULL, at most 20); NB_EUNRELATED when they share no history; NB_ENOTFOUND when a
 * commit is missing; NB_ERROR.  When `tip` is already in `onto`, *out is `onto`.
 */
int trial_merge(struct nb_oid *out, struct strvec *paths, struct repo *repo,
		const struct trial_merge_opts *o);

#endif
