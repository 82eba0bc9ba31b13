/*
 * Internal to merge/: moving a worker's tree from one commit to the next by what
 * changed, the way git's own checkout does, without libgit2's checkout.
 *
 * A bisection step changes a few files of a 16,000-file tree; libgit2 1.5.1 pays
 * for loading its index (16-26 ms) and for its checkout machinery (14 ms) every
 * step.  This compares the target tree with the worker's index (read by
 * merge/worker/gitindex.c), rewrites only the files that differ or that the last command
 * touched, and writes the index back.  It is the runner user's child that runs
 * it, in the sandbox, after the trap scan (merge/worker/worker.c) found the tree sound.
 *
 * It is the only way a worker's tree is written, pristine or not, so that the
 * tracked files are the commit's byte for byte whatever the last command did:
 * attribute filters are applied from the commit's attributes (merge/worker/stepfilter.c),
 * a submodule is an empty folder (as git leaves one that is not initialised), and
 * whatever is in a file's way (a folder, a file where a folder goes) is removed.
 * Untracked files elsewhere are kept.
 */
#ifndef MERGE_STEPCHECKOUT_INT_H
#define MERGE_STEPCHECKOUT_INT_H

#include <git2.h>

#include "merge/worker/gitindex_int.h"
#include "util/strbuf.h"

/* What the trap scan found of an index entry's file. */
enum step_file {
	STEP_FILE_MISSING = 0,  /* not met: gone, or something else in its place */
	STEP_FILE_CLEAN,        /* stat data as the index recorded */
	STEP_FILE_DIRTY,        /* stat data changed: the command touched it */
	STEP_FILE_RACY,         /* as recorded, but as new as the index: compare content */
};

struct stepcheckout_opts {
	git_repository *repo;           /* the worker's, for objects */
	git_tree *target;               /* the commit's tree */
	const git_oid *commit;          /* the commit: its attributes choose the filters */
	const struct gitindex *idx;     /* the worker's index (empty: a pristine checkout) */
	/*
	 * the scan's verdict on each entry of `idx` (an enum step_file each); NULL:
	 * the tree is empty, nothing can be in a file's way
	 */
	const unsigned char *files;
	/* stepfilter_describe_config()'s words: what outside the tree asks for filters */
	const char *filter_config;
	int tfd, gfd;                   /* the tree and the git dir, open */
	const char *git;                /* the git dir's path (for errors and attributes) */
};

#define STEPCHECKOUT_OPTS_INIT { .tfd = -1, .gfd = -1 }

/*
 * Makes the tree open at o->tfd hold o->target and writes the new index to the
 * git dir.  Files whose index entry the scan found clean are trusted, unless the
 * index is not one a checkout of nextbot's wrote (git rewrote it: every file's
 * content is compared then) or the attributes that choose the filters changed
 * since (every file's content is compared with what the filters give now).
 * Returns 0 done; 1 with `why` when git would not check the tree out either (a
 * path with a .git part, a link target with a NUL byte); NB_ERROR (recorded,
 * naming the git dir) on a system error, a file that cannot be written.
 */
int stepcheckout_run(struct strbuf *why, const struct stepcheckout_opts *o);

#endif
