/*
 * Internal to merge/: moving a worker's tree from one commit to the next by what
 * changed, the way git's own checkout does, without libgit2's checkout.
 *
 * A bisection step changes a few files of a 16,000-file tree; libgit2 1.5.1 pays
 * for loading its index (16-26 ms) and for its checkout machinery (14 ms) every
 * step.  This compares the target tree with the worker's index (read by
 * merge/gitindex.c), rewrites only the files that differ or that the last command
 * touched, and writes the index back.  It is the runner user's child that runs
 * it, in the sandbox, after the trap scan (merge/worker.c) found the tree sound.
 * What it does not handle (submodules, attribute filters, a folder where a file
 * goes) it reports, and the caller falls back to libgit2's checkout.
 */
#ifndef MERGE_STEPCHECKOUT_INT_H
#define MERGE_STEPCHECKOUT_INT_H

#include <git2.h>

#include "merge/gitindex_int.h"
#include "util/strbuf.h"
#include "util/strvec.h"

/* What the trap scan found of an index entry's file. */
enum step_file {
	STEP_FILE_MISSING = 0,  /* not met: gone, or something else in its place */
	STEP_FILE_CLEAN,        /* stat data as the index recorded */
	STEP_FILE_DIRTY,        /* stat data changed: the command touched it */
	STEP_FILE_RACY,         /* as recorded, but as new as the index: compare content */
};

/*
 * Makes the tree open at `tfd` hold `target`, given the index `idx` read from the
 * git dir open at `gfd` and the scan's verdict on each of its entries (`files`,
 * one per entry, an enum step_file), and writes the new index there.  `filters`:
 * whether the configuration asks for attribute filters (then it does nothing).
 * An empty `idx` and NULL `files`: the tree is empty (a pristine checkout), so
 * nothing is looked for in the way of a file.
 * Returns 0 done; 1 with `why` when it cannot, and the files it wrote by then in
 * `written` (the caller checks out with libgit2, which must write those again: its
 * index has their old stat data); NB_ERROR (recorded, naming `where`, the git
 * dir) on a system error.
 */
int stepcheckout_run(struct strbuf *why, struct strvec *written, git_repository *repo,
		     git_tree *target, const struct gitindex *idx, const unsigned char *files,
		     int filters, int tfd, int gfd, const char *where);

#endif
