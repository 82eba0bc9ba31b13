/*
 * Three-way merge of file contents as git's ort strategy makes it (ll-merge's text
 * driver over xdiff's xdl_merge(): histogram diffs, "zealous" conflicts refined to
 * the lines that really differ, conflicts fewer than four lines apart joined, the
 * default "merge" marker style, CRLF markers in CRLF files).  Internal to merge/.
 */
#ifndef MERGE_FILEMERGE_INT_H
#define MERGE_FILEMERGE_INT_H

#include <stddef.h>

#include "util/strbuf.h"

struct filemerge_options {
	const char *ours_label;         /* after "<<<<<<< "; NULL: the bare marker */
	const char *theirs_label;       /* after ">>>>>>> " */
	int marker_size;                /* 0: 7, as git's default */
};
#define FILEMERGE_OPTIONS_INIT { NULL, NULL, 0 }

/* A borrowed buffer: one side of a merge. */
struct filemerge_buf {
	const char *buf;
	size_t len;
};

/*
 * Merges the changes from `base` to `ours` and from `base` to `theirs` (buffers,
 * borrowed) into `out` (appended to): the number of conflicting hunks (0: clean),
 * or -1 when the diff met a state git treats as a bug (nothing useful in `out`;
 * callers report a conflict).  Binary contents are the caller's business
 * (filemerge_is_binary()).
 */
int filemerge_texts(struct strbuf *out, const struct filemerge_buf *base,
		    const struct filemerge_buf *ours, const struct filemerge_buf *theirs,
		    const struct filemerge_options *opts);

/* git's buffer_is_binary(): a NUL in the first 8000 bytes. */
int filemerge_is_binary(const char *buf, size_t len);

#endif
