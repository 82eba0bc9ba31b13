/*
 * Internal to merge/: the bytes a checkout writes for a blob, with the attribute
 * filters of the commit being checked out (eol conversion, `text`, `-text`,
 * `ident`), for merge/worker/stepcheckout.c.
 *
 * git's and libgit2's checkouts read attributes from the work tree first, and a
 * worker's tree is the last command's: a `.gitattributes` it edited, or one left
 * from the commit before, would choose the filters.  Here the attributes come
 * from the commit alone (its `.gitattributes` files, macros in the top one
 * included), beside the repository's info/attributes, the system's and the
 * user's attributes files and core.autocrlf / core.eol.  Filter drivers
 * (`filter=`) and `working-tree-encoding` are not run: libgit2 1.5 has neither.
 */
#ifndef MERGE_STEPFILTER_INT_H
#define MERGE_STEPFILTER_INT_H

#include <stddef.h>
#include <git2.h>

#include "util/strbuf.h"

struct stepfilter;

/*
 * Appends to `out` what outside the tree could ask a checkout for a filter: the
 * repository's info/attributes, the system's and the user's attributes files
 * (their contents), core.autocrlf and core.eol.  Nothing appended: nothing
 * outside the tree asks for one.  `repo` is the worker's repository, `common_dir`
 * the work repository's.
 */
void stepfilter_describe_config(struct strbuf *out, git_repository *repo,
				const char *common_dir);

/* What stepfilter_open() reads. */
struct stepfilter_source {
	const char *git;                /* the worker's git dir, open at `gfd` */
	int gfd;
	const git_oid *commit;          /* whose attributes count */
	/* the commit's .gitattributes files: their paths and ids */
	const char *const *attribute_paths;
	const git_oid *attributes;
	size_t attributes_nr;
	/*
	 * the top .gitattributes defines macros (`[attr]`), which libgit2 takes only
	 * with a work tree: an empty folder in the git dir, "attributes-root", stands
	 * for it then
	 */
	int macros;
	const char *config;             /* stepfilter_describe_config()'s words */
};

/*
 * Opens the filters of src->commit.  `*out` is NULL when nothing can convert a
 * file's bytes (text is written with LF here: no attribute mentions eol=crlf or
 * ident, and the configuration does not ask for CRLF).  Returns 0, or NB_ERROR
 * (recorded).  Free with stepfilter_free().
 */
int stepfilter_open(struct stepfilter **out, const struct stepfilter_source *src);
void stepfilter_free(struct stepfilter *f);

/*
 * The bytes a checkout writes for `blob` at `path` (a symlink's blob is never
 * filtered: the caller does not ask): `*data` and `*len` point into the blob or
 * into `buf` (the caller's, GIT_BUF_INIT; git_buf_dispose() it), valid while both
 * are.  Returns 0, or NB_ERROR (recorded, naming the path).
 */
int stepfilter_apply(const char **data, size_t *len, git_buf *buf, struct stepfilter *f,
		     git_blob *blob, const char *path);

#endif
