/*
 * Three-way merge of two commits at the tree level, in memory (no index, no work
 * tree), as git's ort strategy does: descend only into subtrees whose ids differ
 * between base, ours and theirs; file-level merges through git_merge_file; where a
 * rename may be involved, fall back to libgit2's git_merge_commits for correctness.
 * Used by the nightly integration and by every bisection probe.
 *
 * CONTRACT shared by the integration (merge/integrate*) and bisection
 * (merge/bisect*, merge/probe*) code: written by the integration side.
 */
#ifndef MERGE_TREEMERGE_INT_H
#define MERGE_TREEMERGE_INT_H

#include <git2.h>
#include <stddef.h>

/* One conflicting path. */
struct treemerge_conflict {
	char *path;     /* owned */
	char *kind;     /* owned: "content", "modify/delete", "add/add", "rename", … */
};

struct treemerge_conflicts {
	struct treemerge_conflict *items;
	size_t nr, alloc;
};
#define TREEMERGE_CONFLICTS_INIT { NULL, 0, 0 }
void treemerge_conflicts_release(struct treemerge_conflicts *c);

/*
 * Merges `theirs` into `ours` using their merge base.  On success (0) `out_tree`
 * holds the merged tree, written to the repository's object database.  Returns
 * NB_ECONFLICT with the conflicting paths in `conflicts` (may be NULL if the
 * caller does not care), NB_EUNRELATED when the commits share no history, or
 * NB_ERROR.  When `theirs` is already contained in `ours`, `out_tree` is ours' tree
 * and `*already_merged` (if not NULL) is set to 1.
 */
int treemerge_commits(git_oid *out_tree, int *already_merged,
		      struct treemerge_conflicts *conflicts, git_repository *repo,
		      const git_oid *ours, const git_oid *theirs);

/*
 * treemerge_commits() with the merge bases of ours and theirs already known (as
 * git_merge_bases() finds them; nr 0: unrelated), e.g. from merge/nightbase_int.h.
 */
int treemerge_commits_bases(git_oid *out_tree, int *already_merged,
			    struct treemerge_conflicts *conflicts, git_repository *repo,
			    const git_oid *ours, const git_oid *theirs,
			    const git_oid *bases, size_t bases_nr);

/*
 * Three-way merge of trees with an explicit base (cherry-pick: base = the commit's
 * parent's tree; revert: base = the commit's tree, theirs = its parent's tree).
 * Same results and errors as treemerge_commits(), NB_EUNRELATED excepted.
 */
int treemerge_trees(git_oid *out_tree, struct treemerge_conflicts *conflicts,
		    git_repository *repo, const git_oid *base_tree, const git_oid *ours_tree,
		    const git_oid *theirs_tree);

/*
 * Counters of the calling thread, for benchmarks and tests: merges decided by the
 * tree-level walk and merges handed to libgit2's whole-index merge.
 */
struct treemerge_stats {
	unsigned long fast, full;
};
void treemerge_stats_get(struct treemerge_stats *out);

#endif
