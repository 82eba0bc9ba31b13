/* Internal to merge/: the work repository's libgit2 handle (see merge/repo/repo.h). */
#ifndef MERGE_REPO_INT_H
#define MERGE_REPO_INT_H

#include <git2.h>
#include "merge/repo/repo.h"

/* For merge/ code only: the libgit2 handle, borrowed.  Not thread-safe to share. */
git_repository *repo_git(struct repo *repo);

/*
 * The repository's commits as merge/git/mergebase_int.h walks them (its commit-graph
 * file, mapped on first use), owned by `repo`.
 */
struct mbgraph;
struct mbgraph *repo_graph(struct repo *repo);

#endif
