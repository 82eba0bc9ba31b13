/*
 * Internal to merge/: the work repository's commit-graph (objects/info/commit-graph),
 * shared by the night (merge/repo.c's repo_write_commit_graph()) and gc (merge/gc.c).
 */
#ifndef MERGE_COMMITGRAPH_INT_H
#define MERGE_COMMITGRAPH_INT_H

#include <git2.h>

/*
 * The file beside the repository's objects naming, one hex id a line and sorted, the
 * commits a commit-graph was written from; a tip in it has all its history in the graph.
 */
#define COMMITGRAPH_TIPS "nextbot-commit-graph-tips"

/*
 * Writes the commit-graph of the bare repository `git` over every commit reachable
 * from a ref (as `git commit-graph write --reachable`), then records the tips and
 * makes `git`'s object database read the new file.  Without `force` it does nothing
 * while every ref's commit is a recorded tip and the graph is there.  Returns 1
 * written, 0 already up to date, or NB_ERROR (recorded; the old graph, if any, stays:
 * a graph that lacks commits is still right about the ones it has).  It turns
 * libgit2's object cache off while it writes: no other thread may use libgit2 then.
 */
int commitgraph_refresh(git_repository *git, int force);

/* Removes the commit-graph and its tips file: for when it cannot be rewritten. */
void commitgraph_remove(const char *gitdir);

#endif
