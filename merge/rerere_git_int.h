/*
 * Conflict memory over the repository, for merge/integrate.c: the
 * conflicted files of a merge with markers (as `git merge` leaves them), and the
 * merge's tree resolved from recorded resolutions (merge/rerere.h).  For merge/
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
	git_index *index;       /* the merge's index, with its conflicts */
	struct rerere_git_file *files;
	size_t nr, alloc;
};
#define RERERE_GIT_CONFLICT_INIT { NULL, NULL, 0, 0 }
void rerere_git_conflict_release(struct rerere_git_conflict *c);

/*
 * Merges commit `theirs` into `ours` with libgit2's whole merge (renames found as
 * git does) and fills `out` with every conflict; markers are labelled `ours_label`
 * and `theirs_label`.  `base` is their one merge base when the caller knows it
 * (merge/nightbase_int.h: no walk of next), else NULL (libgit2 finds the merge bases).
 * Returns 0 (out->nr may be 0 when libgit2 finds no conflict) or NB_ERROR.
 */
int rerere_git_conflict(struct rerere_git_conflict *out, git_repository *repo,
			const git_oid *base, const git_oid *ours, const git_oid *theirs,
			const char *ours_label, const char *theirs_label);

/*
 * Resolves every conflict of `c` from the records under `rerere_dir`: 0 with the
 * merged tree in `out_tree` when every conflicting file is a content conflict all
 * of whose hunks have a recorded resolution; NB_ECONFLICT otherwise (the index is
 * then unusable).  `matched[i]` / `total[i]` (arrays of c->nr, may be NULL) get the
 * hunks with a record / all hunks of file i.
 */
int rerere_git_resolve(git_oid *out_tree, size_t *matched, size_t *total,
		       git_repository *repo, struct rerere_git_conflict *c,
		       const char *rerere_dir);

#endif
