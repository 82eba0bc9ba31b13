/*
 * The text of linux-next's own files: Next/Trees,
 * Next/SHA1s and localversion-next.  Pure text, no git.  Next/merge.log is the
 * transcript kept by merge/integrate.c.
 */
#ifndef MERGE_NEXTFILES_H
#define MERGE_NEXTFILES_H

#include <stddef.h>
#include "util/strbuf.h"

/* A tree merged tonight (the base first); strings borrowed. */
struct nextfiles_tree {
	const char *name;
	const char *url;
	const char *branch;
	const char *sha1;       /* 40-hex of the commit actually merged */
};

/* Appends Next/Trees: header, then "name\tgit\turl#branch" per tree. */
void nextfiles_trees(struct strbuf *out, const struct nextfiles_tree *trees, size_t n);
/* Appends Next/SHA1s: header, then "name\t<sha1>" per tree. */
void nextfiles_sha1s(struct strbuf *out, const struct nextfiles_tree *trees, size_t n);
/* Appends localversion-next for "YYYY-MM-DD": "-next-YYYYMMDD\n". */
void nextfiles_localversion(struct strbuf *out, const char *date);
/* "YYYYMMDD" of "YYYY-MM-DD" into out (9 bytes). */
void nextfiles_compact_date(char out[9], const char *date);

#endif
