/*
 * Internal to merge/: the work repository's libgit2 handle, the floor's, which the
 * rooms above work through (merge/repo/repo.h opens and frees the repository; the
 * transport fetches and pushes with its handle, the integration merges in it).
 */
#ifndef MERGE_REPOHANDLE_INT_H
#define MERGE_REPOHANDLE_INT_H

#include <git2.h>

struct repo;    /* merge/repo/repo.h's work repository */
struct mbgraph;

/* A repository over the open handle `git` (taken) of the one at `path` (copied). */
struct repo *repo_handle_wrap(git_repository *git, const char *path);
/* Frees the handle, its commit graph and the repository; NULL is fine. */
void repo_handle_free(struct repo *repo);
/* The path the repository was opened at; valid while it is. */
const char *repo_handle_path(const struct repo *repo);

/* For merge/ code only: the libgit2 handle, borrowed.  Not thread-safe to share. */
git_repository *repo_git(struct repo *repo);

/*
 * The repository's commits as merge/git/mergebase_int.h walks them (its commit-graph
 * file, mapped on first use), owned by `repo`.
 */
struct mbgraph *repo_graph(struct repo *repo);

#endif
