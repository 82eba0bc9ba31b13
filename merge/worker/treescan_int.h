/*
 * Internal to merge/: the trap scan of a worker's tree before an incremental
 * checkout (merge/worker/worker.c).
 *
 * The tree is the last command's: the scan looks at every entry (never following
 * a link, opening nothing but folders) for what could trick a checkout, and on the
 * way tells for each entry of the worker's index whether its file is as recorded.
 * It is an lstat of every file, as git's index refresh is, and like git's
 * preload-index it spreads the folders over a few threads (one per 2,000 index
 * entries, up to the CPUs).
 */
#ifndef MERGE_TREESCAN_INT_H
#define MERGE_TREESCAN_INT_H

#include <stddef.h>
#include <time.h>
#include <git2.h>

#include "merge/worker/gitindex_int.h"
#include "merge/worker/stepcheckout_int.h"
#include "util/strbuf.h"

/* Folders nested deeper than this are a trap. */
#define TREESCAN_MAX_DEPTH 128

struct treescan {
	const struct gitindex *idx;     /* the worker's index */
	git_tree *target;               /* the commit to check out */
	struct timespec index_time;     /* the index file's mtime: entries as new are racy */
	/* out: each index entry's file (an enum step_file; idx->nr of them, the
	   caller's, zeroed), and how many entries the scan met */
	unsigned char *files;
	size_t tracked;
};

/*
 * Scans the tree open at `tfd` (the descriptor stays the caller's).  Returns 0
 * when it is sound; 1 with `why` at a trap (a FIFO, socket or device, a folder it
 * cannot enter, a hard link, a setuid file, an entry not this user's, a symlink
 * where the commit or the index has files, a .git that is not a file); NB_ERROR
 * (recorded) when it cannot look.
 */
int treescan_run(struct treescan *s, struct strbuf *why, int tfd);

#endif
