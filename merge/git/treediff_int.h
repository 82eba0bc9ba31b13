/*
 * Internal to merge/: a diff of two trees whose cost follows the change.
 *
 * libgit2 1.5.1's git_diff_tree_to_tree() walks every entry of both trees, equal
 * subtrees included: on a 90,000-file tree a third of a night's merging went there
 * (the merge's diffstat, the patch-ids of a conflict's commits; bench/README.md).
 * treediff_paths() compares the trees skipping equal subtrees, and treediff_new()
 * hands libgit2 exactly those paths, so it reads only the trees along them.
 */
#ifndef MERGE_TREEDIFF_INT_H
#define MERGE_TREEDIFF_INT_H

#include <git2.h>
#include "util/strvec.h"

/*
 * Appends to `out` every path (files, symlinks, submodules; never a directory) whose
 * entry differs between trees `a` and `b` (either may be NULL: the empty tree), in
 * no particular order.  Returns 0, or a libgit2 error with its message set (a
 * missing tree, one nested deeper than TREEDIFF_MAX_DEPTH).
 */
#define TREEDIFF_MAX_DEPTH 4096
int treediff_paths(struct strvec *out, git_repository *repo, const git_oid *a, const git_oid *b);

/*
 * For each of the `nr` paths: touched[i] = 1 when its entry (id or mode; absent
 * counts) differs between trees `a` and `b`, else 0.  Only the trees along a path are
 * read, and not past a subtree both have the same.  0 or a libgit2 error.
 */
int treediff_paths_touched(char *touched, git_repository *repo, const git_oid *a,
			   const git_oid *b, const char *const *paths, size_t nr);

/*
 * git_diff_tree_to_tree(out, repo, a, b, opts) (opts may be NULL; it must have no
 * pathspec of its own) with the same deltas, limited to treediff_paths().
 */
int treediff_new(git_diff **out, git_repository *repo, git_tree *a, git_tree *b,
		 const git_diff_options *opts);

#endif
