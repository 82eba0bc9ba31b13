/*
 * Internal to merge/ (and feeds/, which writes repositories): libgit2 at merge/'s
 * edge.  The one translation of a libgit2 failure into our error, and of a git_oid
 * into the typed id other modules see.  bot/ never includes this header.
 */
#ifndef MERGE_GIT_INT_H
#define MERGE_GIT_INT_H

#include <git2.h>
#include "util/oid.h"
#include "util/strbuf.h"

/*
 * Records "<what>: <libgit2's last error>" (what is printf-style) as NB_ERROR and
 * returns NB_ERROR: `return merge_git_fail("lookup %s", name);`.
 */
int merge_git_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Appends `c`'s subject (its first paragraph as one line), control characters as spaces. */
void merge_commit_subject(struct strbuf *sb, const git_commit *c);

/* The typed id of `id`. */
void merge_oid_from_git(struct nb_oid *out, const git_oid *id);
/* `id` as libgit2's; NB_EINVALID (recorded) when it is empty or not a full id. */
int merge_oid_to_git(git_oid *out, const struct nb_oid *id);
/* The same from hex text (a state file's, a command line's): checked, never assumed. */
int merge_oid_parse_git(git_oid *out, const char *hex);

/*
 * The author and committer of nextbot's commits: "Name <email>" dated 00:00:00 UTC
 * of "YYYY-MM-DD".  NB_EINVALID (recorded) for a bad identity or date.  Free *out
 * with git_signature_free().
 */
int merge_signature(git_signature **out, const char *ident, const char *date);

#endif
