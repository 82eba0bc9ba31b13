/*
 * Replaying a tree without the patches a maintainer dropped, before its merge: its
 * commits since the merge base with the base are cherry-picked
 * in order onto that merge base, minus the dropped ones; a later commit that no
 * longer applies is left out too.  For merge/ code only.
 */
#ifndef MERGE_REPLAY_INT_H
#define MERGE_REPLAY_INT_H

#include <git2.h>
#include "merge/integrate/integ_drops.h"
#include "util/strvec.h"

struct replay_result {
	int changed;                  /* 0: nothing matched a drop; `head` is the tip */
	git_oid head;                 /* the replayed tip */
	struct strvec left_out;       /* 40-hex of commits left out, in order */
	struct strvec reasons;        /* one per left_out: "dropped" or "no longer applies" */
};
#define REPLAY_RESULT_INIT { 0, { { 0 } }, STRVEC_INIT, STRVEC_INIT }
void replay_result_release(struct replay_result *r);

/* 1 if `commit` matches a drop by patch-id or Message-ID. */
int replay_is_dropped(git_repository *repo, const git_commit *commit,
		      const struct integ_drops *drops);

/*
 * Replays `tip` onto merge-base(`base`, `tip`) without the dropped commits.
 * Replayed commits keep author and message; the committer is `committer`.
 * Merge commits of the tree are not replayed (their sides' commits are, in
 * topological order).  Returns 0, or NB_ERROR on a repository failure.
 */
int replay_without_drops(struct replay_result *out, git_repository *repo,
			 const git_oid *base, const git_oid *tip,
			 const struct integ_drops *drops, const git_signature *committer);

#endif
