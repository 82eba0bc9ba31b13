/*
 * Internal to merge/: git's index file (Documentation/gitformat-index.txt), read
 * and written by nextbot itself for a worker's incremental checkout.
 *
 * libgit2 1.5.1 takes 16 to 26 ms to load a 16,000-entry index (an allocation and
 * a hash-map insertion per entry) where the entries are needed only for their stat
 * data; at a kernel's size that is a large part of a bisection step.  This reads
 * the file in one piece and points into it.  Only what libgit2 and git write for a
 * plain checkout is read: versions 2 and 3, stage 0, no skip-worktree or
 * intent-to-add entries, no required extension (a split index).  Anything else is
 * reported as unsupported, never guessed at: the caller checks the tree out anew.
 */
#ifndef MERGE_GITINDEX_INT_H
#define MERGE_GITINDEX_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <git2.h>

#include "util/strbuf.h"

/* A larger index is refused (a kernel's is about 9 MB). */
#define GITINDEX_MAX_BYTES (512u << 20)

struct gitindex_entry {
	const char *path;               /* NUL-terminated, inside the index's buffer */
	size_t path_len;
	uint32_t ctime_s, ctime_ns, mtime_s, mtime_ns, ino, mode, size;
	git_oid id;
	const unsigned char *raw;       /* the entry as the file holds it (v2 layout) */
	size_t raw_len;
};

struct gitindex {
	struct gitindex_entry *entries; /* sorted by path, as the file */
	size_t nr;
	struct strbuf buf;              /* the file */
	/* the file's trailing checksum: which index this is (zeros: git's skipHash) */
	unsigned char checksum[20];
};

#define GITINDEX_INIT { NULL, 0, STRBUF_INIT, { 0 } }

/*
 * Reads the index file `name` in the folder open at `dirfd` (never through a
 * symlink) into `out` (a GITINDEX_INIT one; gitindex_release() it whatever the
 * result).  Returns 0; 1 when the file is one this reader does not take (why says
 * what: a version, a conflict, a required extension, a bad checksum, a path that
 * could leave the tree); NB_ENOTFOUND when there is no such file; NB_ERROR
 * (recorded) when it cannot be read.
 */
int gitindex_read(struct gitindex *out, struct strbuf *why, int dirfd, const char *name);
void gitindex_release(struct gitindex *idx);

/* Whether git would check `path` out: relative, no empty, "." or ".." part, no .git. */
int gitindex_path_ok(const char *path);

/* The entry for `path`, or NULL; valid while `idx` is. */
const struct gitindex_entry *gitindex_find(const struct gitindex *idx, const char *path);
/* Whether some entry's path starts with `prefix`. */
int gitindex_has_prefix(const struct gitindex *idx, const char *prefix);

/*
 * Writing one: gitindex_out_begin(), then the entries in path order (an entry kept
 * as read, or a new one for a file just written, with its lstat data), then
 * gitindex_out_finish() to append the checksum (version 2, no extensions).
 */
void gitindex_out_begin(struct strbuf *out);
void gitindex_out_raw(struct strbuf *out, const struct gitindex_entry *e);
void gitindex_out_new(struct strbuf *out, const char *path, const struct stat *st,
		      uint32_t mode, const git_oid *id);
void gitindex_out_finish(struct strbuf *out, size_t count);

/*
 * Replaces the file `name` in the folder open at `dirfd` with `data` by way of
 * "<name>.lock", as git does.  Returns 0 or NB_ERROR (recorded, naming `where`).
 */
int gitindex_write(int dirfd, const char *name, const struct strbuf *data, const char *where);

#endif
