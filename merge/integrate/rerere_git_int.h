/*
 * Conflict memory over the repository, for merge/integrate/integrate.c: the
 * conflicted files of a merge with markers (as `git merge` leaves them), and the
 * merge's tree resolved from recorded resolutions (merge/integrate/integrate.h).  For merge/
 * code only.
 */
#ifndef MERGE_RERERE_GIT_INT_H
#define MERGE_RERERE_GIT_INT_H

#include <git2.h>
#include <stddef.h>

/* One conflicting path of a merge. */
struct rerere_git_file {
	char *path;             /* owned */
	char *kind;             /* owned: "content", "add/add", "modify/delete", "rename" */
	char *text;             /* owned: the file with markers; NULL unless content/add-add */
	size_t len;
	unsigned int mode;      /* ours' file mode */
};

struct rerere_git_conflict {
	git_oid tree;           /* the merge's tree, conflicted files with markers */
	struct rerere_git_file *files;
	size_t nr, alloc;
};
#define RERERE_GIT_CONFLICT_INIT { { { 0 } }, NULL, 0, 0 }
void rerere_git_conflict_release(struct rerere_git_conflict *c);

/*
 * The conflicted paths of a merge merge/git/treemerge.c left conflicted (`conflicts`,
 * with the tree it wrote: each conflicted file there holds its markers, labelled as
 * the merge was) into `out`: each path's kind and, for a text conflict, the file.
 * Returns 0 or NB_ERROR.
 */
struct treemerge_conflicts;
int rerere_git_conflict(struct rerere_git_conflict *out, git_repository *repo,
			const struct treemerge_conflicts *conflicts);

/*
 * Resolves every conflict of `c` from the records under `rerere_dir`: 0 with the
 * merged tree in `out_tree` when every conflicting file is a content conflict all
 * of whose hunks have a recorded resolution (the merge's tree with those files
 * resolved, its other paths as the merge left them); NB_ECONFLICT otherwise (or
 * NB_ERROR when a blob or tree cannot be written).  `matched[i]` / `total[i]`
 * (arrays of c->nr, may be NULL) get the hunks with a record / all hunks of file i.
 */
int rerere_git_resolve(git_oid *out_tree, size_t *matched, size_t *total,
		       git_repository *repo, struct rerere_git_conflict *c,
		       const char *rerere_dir);

#endif
