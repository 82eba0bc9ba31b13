/*
 * Worker directories: a kept checkout of the work repository with its own index,
 * so that moving it from one commit to another rewrites only the files that
 * differ and a build in it stays incremental.  One worker per thread.
 */
#ifndef MERGE_WORKER_INT_H
#define MERGE_WORKER_INT_H

#include <git2.h>

struct worker;

/*
 * Opens worker directory `dir` (created if missing) over the repository at
 * `repo_path` (bare or not; it is never modified but for objects).  The worker
 * holds its own repository handle and its own index file, `dir`/index; the
 * checkout is `dir`/tree.  Returns 0 or NB_ERROR (recorded).  Free with
 * worker_free().
 */
int worker_open(struct worker **out, const char *repo_path, const char *dir);
void worker_free(struct worker *w);

/*
 * Makes the worker's tree hold `commit`: files that differ from what the
 * worker's index says is there are rewritten, files gone are removed, untracked
 * files (build output) are kept.  With `pristine` the tree is wiped first, so
 * nothing of an earlier build remains.  Returns 0 or NB_ENOTFOUND/NB_ERROR.
 */
int worker_checkout(struct worker *w, const git_oid *commit, int pristine);

/* The checkout directory ("<dir>/tree"); valid while the worker is. */
const char *worker_tree_path(const struct worker *w);
/* The worker's own repository handle (use it from the worker's thread only). */
git_repository *worker_repo(struct worker *w);

#endif
