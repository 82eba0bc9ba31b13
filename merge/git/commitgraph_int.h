/*
 * Internal to merge/: the work repository's commit-graph (objects/info/commit-graph),
 * shared by the night (merge/repo/repo.c's repo_write_commit_graph()) and gc (merge/repo/gc.c).
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
 * from a ref (as `git commit-graph write --reachable`), then records the tips.
 * Without `force` it does nothing
 * while every ref's commit is a recorded tip and the graph is there.  Returns 1
 * written, 0 already up to date, or NB_ERROR (recorded; the old graph, if any, stays:
 * a graph that lacks commits is still right about the ones it has).  It turns
 * libgit2's object cache off while it writes: no other thread may use libgit2 then.
 */
int commitgraph_refresh(git_repository *git, int force);

/*
 * Makes the open repository `git` read no commit-graph.  libgit2 1.5.1 maps the file
 * again after every refresh of the object database (each new object written) and
 * never unmaps the old mapping: one more mapping of the whole graph per merge (11 MB
 * at 200,000 commits; 700 MB of resident mappings after 50 merges, and a daemon that
 * runs night after night would run out of mappings).  A handle that writes objects
 * must not read the graph; git and short-lived readers still do.
 */
int commitgraph_detach(git_repository *git);

/* Removes the commit-graph and its tips file: for when it cannot be rewritten. */
void commitgraph_remove(const char *gitdir);

#endif
