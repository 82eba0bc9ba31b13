/*
 * Three-way merge of two commits at the tree level, in memory (no index, no work
 * tree), giving what git 2.39's `git merge-tree --write-tree` gives: the same tree
 * when the merge is clean, a conflict (and the same conflicted paths) when it is
 * not.  merge/git/ort.c is git's ort strategy; with several merge bases they are merged
 * into a virtual one first, in git's order, conflict markers and all, as ort does.
 * Used by the nightly integration, trial merges, replays and every bisection probe.
 *
 * The floor's, shared by the rooms above it: the integration (merge/integrate/) and
 * the search (merge/search/: culprit.c redoes a merge in memory).
 */
#ifndef MERGE_TREEMERGE_INT_H
#define MERGE_TREEMERGE_INT_H

#include <git2.h>
#include <stddef.h>

/* Bounds: past them a merge is a conflict ("too many merge bases"), never a tree. */
#define TREEMERGE_MAX_BASES 1024        /* merge bases of one merge, any depth (git.git: 48) */
#define TREEMERGE_MAX_MERGES 8192       /* tree merges for one commit merge, inner ones too */
#define TREEMERGE_MAX_SECONDS 60
#define TREEMERGE_MAX_WALK 4000000      /* commits one merge-base walk may visit */

/*
 * The bounds in force, the TREEMERGE_MAX_* above unless a test lowered them (for
 * the calling thread only) to reach them cheaply; NULL restores the defaults.
 */
struct treemerge_bounds {
	size_t bases;           /* TREEMERGE_MAX_BASES */
	int merges;             /* TREEMERGE_MAX_MERGES */
	long seconds;           /* TREEMERGE_MAX_SECONDS (-1: every merge is over time) */
	size_t walk;            /* TREEMERGE_MAX_WALK */
};
void treemerge_bounds_set(const struct treemerge_bounds *b);

/* One conflicting path, with its stages as git's index would hold them. */
struct treemerge_conflict {
	char *path;             /* owned */
	char *kind;             /* owned: "content", "modify/delete", "add/add", … */
	unsigned int modes[3];  /* base, ours, theirs; 0: none */
	git_oid oids[3];
	int pathless;           /* git lists no file for it (a folder renamed several
				   ways, a bound hit): `path` only names where it is */
};

struct treemerge_conflicts {
	struct treemerge_conflict *items;
	size_t nr, alloc;
	git_oid tree;           /* the merged tree with conflict markers (when nr > 0) */
	int have_tree;
};
#define TREEMERGE_CONFLICTS_INIT { NULL, 0, 0, { { 0 } }, 0 }
void treemerge_conflicts_release(struct treemerge_conflicts *c);

/* Marker labels of the outer merge (NULL: "ours" / "theirs"), as git's branch names. */
struct treemerge_labels {
	const char *ours, *theirs;
};

/*
 * Merges `theirs` into `ours` using their merge bases.  On success (0) `out_tree`
 * holds the merged tree, written to the repository's object database.  Returns
 * NB_ECONFLICT with the conflicting paths in `conflicts` (may be NULL if the
 * caller does not care), NB_EUNRELATED when the commits share no history, or
 * NB_ERROR.  When `theirs` is already contained in `ours`, `out_tree` is ours' tree
 * and `*already_merged` (if not NULL) is set to 1.
 */
int treemerge_commits(git_oid *out_tree, int *already_merged,
		      struct treemerge_conflicts *conflicts, git_repository *repo,
		      const git_oid *ours, const git_oid *theirs);

/* What a merge of two commits merges: the sides, their merge bases, the labels. */
struct treemerge_sides {
	const git_oid *ours, *theirs;
	const git_oid *bases;                  /* nr 0: unrelated */
	size_t bases_nr;
	const struct treemerge_labels *labels; /* may be NULL */
};

/*
 * treemerge_commits() with the merge bases of ours and theirs already known, e.g.
 * from merge/integrate/nightbase_int.h; with several, git's order of them is found here.
 */
int treemerge_commits_bases(git_oid *out_tree, int *already_merged,
			    struct treemerge_conflicts *conflicts, git_repository *repo,
			    const struct treemerge_sides *s);

/*
 * Three-way merge of trees with an explicit base (cherry-pick: base = the commit's
 * parent's tree; revert: base = the commit's tree, theirs = its parent's tree).
 * Same results and errors as treemerge_commits(), NB_EUNRELATED excepted.
 */
int treemerge_trees(git_oid *out_tree, struct treemerge_conflicts *conflicts,
		    git_repository *repo, const git_oid *base_tree, const git_oid *ours_tree,
		    const git_oid *theirs_tree);

/*
 * Counters of the calling thread, for benchmarks and tests: tree merges done (outer
 * and inner), the inner ones (building virtual merge bases), inner ones that
 * conflicted (their markers stay in the virtual base), the deepest inner merge
 * (1: merging merge bases; 2: merging their merge bases, …), the most merge bases
 * one merge had, merges reported as a conflict because nextbot could not be sure of
 * git's answer, and merges stopped by a bound.
 */
struct treemerge_stats {
	unsigned long merges, virtual_merges, virtual_conflicts, max_depth, max_bases;
	unsigned long unsure, bounded;
};
void treemerge_stats_get(struct treemerge_stats *out);

#endif
