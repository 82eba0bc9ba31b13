/* Internal to merge/: applying carried fixes in a libgit2 repository
 * (see merge/integrate/integrate.h). */
#ifndef MERGE_FIXES_INT_H
#define MERGE_FIXES_INT_H

#include <git2.h>
#include "merge/integrate/integrate.h"

/*
 * Applies the fixes of `dir` on top of commit *head (40-hex in, the new head out),
 * committing each as `git am` would (author, date and message from the mail,
 * `committer` from the caller) and appending the transcript to `log`: per file
 * "$ git am -3 <display>/<file>" and git am's lines.  Every patch gets an item in
 * `report`.  Returns 0 whatever became of the fixes (a missing directory is one
 * failed item); NB_ERROR only when the repository fails.
 */
int fixes_apply(struct fixes_report *report, struct strbuf *log, git_repository *repo,
		struct nb_oid *head, const git_signature *committer, const char *dir,
		const char *display);

#endif
