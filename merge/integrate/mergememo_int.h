/*
 * What last night's clean merges gave, so an unchanged night does not merge
 * again.  A three-way merge is a pure function of its three trees (and of
 * nextbot's merge code, whose version the file names): the memo maps
 * (base tree, ours tree, theirs tree) to the merged tree and the diffstat the
 * merge log showed.  Kept in one text file, replaced whole; a night keeps the
 * entries it used or made, so the file holds about one night of merges.  A
 * missing, foreign or damaged file is an empty memo (a damaged tail is dropped).
 * For merge/ code only.
 */
#ifndef MERGE_MERGEMEMO_INT_H
#define MERGE_MERGEMEMO_INT_H

#include <stddef.h>
#include <git2.h>

struct mergememo;

/* Never fails; free with mergememo_free().  `path` is copied. */
struct mergememo *mergememo_load(const char *path);
void mergememo_free(struct mergememo *memo);

/*
 * The merged tree of (base, ours, theirs) and its diffstat (memo-owned, valid
 * until the memo is freed), marking the entry used.  1 found, 0 not.
 */
int mergememo_find(git_oid *out_tree, const char **out_stat, struct mergememo *memo,
		   const git_oid *base, const git_oid *ours, const git_oid *theirs);
/* Records a clean merge; `stat` is copied (a merge whose stat is over 64 KiB is not kept). */
void mergememo_add(struct mergememo *memo, const git_oid *base, const git_oid *ours,
		   const git_oid *theirs, const git_oid *result, const char *stat);

/* Replaces the file with the entries used or added since the load.  0 or NB_ERROR. */
int mergememo_save(struct mergememo *memo);

#endif
