/*
 * Internal to merge/: which files an attribute that could change a checkout's
 * bytes may reach, read from the attributes files' text (merge/worker/stepfilter.c).
 *
 * Text is written with LF here, so unless the configuration asks for CRLF only
 * `eol=crlf` and `ident` convert a file.  A rule whose line (or a macro it uses)
 * mentions "crlf" or "ident" is kept with its pattern; a file no kept pattern
 * can match is converted by nothing, and libgit2's attribute lookup (a handful
 * of system calls a file) is skipped for it.  The test errs towards "may": a
 * pattern with a slash, in quotes, or anything not read is taken to match every
 * file below its attributes file, names are compared without regard to case.
 */
#ifndef MERGE_ATTRRULES_INT_H
#define MERGE_ATTRRULES_INT_H

#include <stddef.h>

struct attrrules;

struct attrrules *attrrules_new(void);
void attrrules_free(struct attrrules *r);

/*
 * An attributes file's text (copied), in folder `dir` ("" at the top, else "a/b/"
 * with its slash).  Macros may come from any file added; attrrules_finish()
 * after the last one.
 */
void attrrules_add(struct attrrules *r, const char *dir, const char *text, size_t len);
void attrrules_finish(struct attrrules *r);

/* Whether any rule could convert a file at all. */
int attrrules_any(const struct attrrules *r);
/* Whether a rule could convert the file at `path` (relative to the top). */
int attrrules_may_match(const struct attrrules *r, const char *path);

#endif
