/* Files and directories: atomic replace, mkdir -p, rm -r. */
#ifndef UTIL_FILEUTIL_H
#define UTIL_FILEUTIL_H

#include <stddef.h>

/*
 * Replaces `path` atomically: writes a temp file beside it, fsyncs it, renames it
 * over `path`, fsyncs the directory.  A reader sees the old or the new content,
 * never half.  Fails (error recorded, `path` untouched) if any step fails,
 * fsync included: it never retries and pretends.  The file is 0600 (nextbot's own
 * files are private); file_write_public() makes it 0644 (a dashboard page), and
 * file_write_atomic_mode() takes the mode.  An existing symlink at the temp
 * name is never followed.
 */
int file_write_atomic(const char *path, const void *data, size_t len);
int file_write_public(const char *path, const void *data, size_t len);
int file_write_atomic_mode(const char *path, const void *data, size_t len, int mode);
/* mkdir -p; the folders it creates get `mode` exactly (not narrowed by the umask). */
int file_mkdir_p(const char *path, int mode);
/*
 * Removes a file or a whole directory tree; a missing path is not an error.  Safe
 * on a tree that hostile code filled: below `path` no symlink is followed and
 * nothing but a directory is opened (FIFOs, sockets and devices are unlinked),
 * chmod 000 directories are opened again after a chmod, a directory left without
 * write permission is given it back, any depth works.  Only the components of
 * `path` itself are trusted.
 */
int file_remove_tree(const char *path);
/*
 * The same for the entry `name` (one component) of the folder open at `dirfd`
 * (which stays the caller's): nothing above it is looked up by path.  `path`
 * names it in errors.
 */
int file_remove_at(int dirfd, const char *name, const char *path);
int file_exists(const char *path);
int file_is_dir(const char *path);
/* fsyncs a directory (after a rename or create inside it). */
int file_fsync_dir(const char *dir);

/*
 * Fault injection for tests: when NEXTBOT_FAULT="op:N" is set (op one
 * of open, write, fsync, rename) the N-th such call made through this module
 * fails with EIO, or with "op:N:kill" the process SIGKILLs itself there.
 */
int file_fault_check(const char *op);

#endif
