/*
 * Patch identity: the stable patch-id of a commit, as git computes it.
 *
 * Shared by the integration (drops match by patch-id), the commit checks
 * (duplicate patches), notices and the feed simulator (truth.json).
 */
#ifndef MERGE_PATCHID_INT_H
#define MERGE_PATCHID_INT_H

#include "util/oid.h"
#include <git2.h>

/*
 * Sets `out` to the patch-id of `commit` exactly as
 * `git diff-tree -p --no-renames <c>^ <c> | git patch-id --stable` prints it: a
 * tree-to-tree diff against the first parent, no rename detection, then libgit2's
 * git_diff_patchid().
 *
 * Returns 0; NB_ENOTFOUND with `out` none for commits that have no patch-id of
 * their own: merges, root commits, commits whose diff is empty and commits that
 * touch a binary file (git and libgit2 disagree on those, so such commits are
 * identified by commit id and Message-ID only); NB_ERROR (recorded) on a
 * repository failure.  Thread-safe as libgit2 is: one repository per thread.
 */
int merge_patch_id(struct nb_patchid *out, git_repository *repo, const git_commit *commit);

/* The same for a commit given by id. */
int merge_patch_id_oid(struct nb_patchid *out, git_repository *repo, const git_oid *id);

#endif
