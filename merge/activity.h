/*
 * Who did what, from history: the files of a commit's tree, and the commits of a
 * window of history with their people (author and trailers) and the paths they
 * changed.  For the people room's audit of MAINTAINERS (bot/people/).  No libgit2
 * type; commits are typed ids.
 */
#ifndef MERGE_ACTIVITY_H
#define MERGE_ACTIVITY_H

#include <stddef.h>

#include "util/oid.h"
#include "util/strbuf.h"
#include "util/strvec.h"

struct repo;

/*
 * Appends every file (blobs, links, submodules: not directories) of the tree of
 * the commit `rev` names (a ref or hex id) to `out`, in git's order.  NB_ENOTFOUND
 * (recorded) when there is no such commit.
 */
int activity_tree_files(struct strvec *out, struct repo *repo, const char *rev);

/*
 * Appends the files `commit` changed against its first parent (all of its files
 * for a root commit) to `out`.  NB_ENOTFOUND (recorded) for an unknown commit.
 */
int activity_commit_paths(struct strvec *out, struct repo *repo, const struct nb_oid *commit);

/* The committer date of the commit `rev` names, seconds since the epoch, into *out. */
int activity_commit_time(long long *out, struct repo *repo, const char *rev);

/* Appends the raw message of `commit` to `out` (at most `max` bytes). */
int activity_commit_message(struct strbuf *out, struct repo *repo, const struct nb_oid *commit,
			    size_t max);

/* How a person appears on a commit. */
enum activity_how {
	ACTIVITY_AUTHOR = 0,
	ACTIVITY_SIGNED_OFF, /* Signed-off-by: */
	ACTIVITY_REVIEWED,   /* Reviewed-by: */
	ACTIVITY_ACKED,	     /* Acked-by: */
	ACTIVITY_TESTED,     /* Tested-by: */
};

struct activity_person {
	enum activity_how how;
	const char *name;  /* NULL when the trailer has none */
	const char *email; /* as written (the part in <>, or the bare value) */
};

/* One commit as the callback sees it; everything borrowed for the call. */
struct activity_commit {
	struct nb_oid id;
	long long when;	/* committer date, seconds since the epoch */
	const struct activity_person *people; /* the author first, then the trailers */
	size_t people_nr;
	const char *const *paths; /* the files it changed against its parent */
	size_t paths_nr;
};

/*
 * Calls fn(ctx, c) for every commit reachable from `rev` whose committer date is
 * `since` or later, newest first (the walk stops at the first older one, as
 * `git log --since` does); merges are passed over, as `git log --no-merges`.  The
 * walk reads the repository's commit-graph (a handle of its own, opened on
 * repo's path) and inflates only the commits inside the window.  A callback that
 * returns non-zero stops the walk and its value is returned; else 0, or NB_ERROR
 * (recorded).
 */
int activity_walk(struct repo *repo, const char *rev, long long since,
		  int (*fn)(void *ctx, const struct activity_commit *c), void *ctx);

#endif
