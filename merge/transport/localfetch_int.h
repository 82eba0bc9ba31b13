/*
 * Internal to merge/: fetching from a repository on this host (a file:// url or a
 * path: a grokmirror copy of kernel.org, a maintainer's tree on the build host).
 *
 * libgit2 1.5.1's local transport marks the whole tree of every ref the work
 * repository holds as uninteresting before it packs what is new: a cost of the
 * project's size times the number of refs, per fetch, so a 400-tree night on a
 * kernel-sized tree grew quadratically (bench/README.md, "Deep history").  This
 * copies instead what is new the way the change is shaped: the commits the work
 * repository lacks, and of each one's tree only what differs from its first
 * parent's.
 */
#ifndef MERGE_LOCALFETCH_INT_H
#define MERGE_LOCALFETCH_INT_H

#include <stddef.h>
#include <git2.h>

/*
 * The path of the repository `url` names when it is on this host, malloc'd (caller
 * frees): "file:///srv/git/linux.git" (percent escapes decoded; host empty or
 * "localhost") or a path to an existing directory.  NULL for anything else
 * (https://, ssh://, git://, host:path), which libgit2's transports fetch.
 */
char *localfetch_path(const char *url);

/*
 * Told the bytes of pack written so far (0 while the objects are being found), at
 * least every few thousand objects, every half second of libgit2's delta search (from
 * its threads, one call at a time) and every thousand objects the indexer resolves:
 * the fetch watcher's beat.  A negative return stops the copy, which then returns
 * that value (the callback sets libgit2's error message).
 */
typedef int (*localfetch_progress_fn)(unsigned long long bytes, void *payload);

/*
 * Writes into `dst`, as one pack, every object reachable from tips[0..n) (ids in
 * `src`: commits or annotated tags of commits) that `dst` does not have; nothing
 * when it has them all.  An object `dst` has is taken to have its whole closure
 * there too (its packs are written whole, its merges bottom-up).  Trees nested
 * deeper than LOCALFETCH_MAX_DEPTH are refused, as git's core.maxTreeDepth does.
 * Returns 0, or a libgit2 error with its message set (a missing or damaged object
 * in `src`, a full disk), or the progress callback's value.  Moves no ref.
 */
#define LOCALFETCH_MAX_DEPTH 4096
/*
 * From this many commits to copy, and when the source keeps all its objects in packs
 * (its own, and those of the repositories it borrows from through
 * objects/info/alternates, up to LOCALFETCH_MAX_ALTERNATES levels), those packs are
 * indexed into `dst` whole (localfetch.c, copy_packs()): `dst` gets its own copy, and
 * objects of the source no tip reaches come along, as with `git clone` of a path.
 * A pack the indexer refuses (a corrupt one) is logged, and the copy goes object by
 * object instead.
 */
#define LOCALFETCH_WHOLE_PACKS 20000
#define LOCALFETCH_MAX_ALTERNATES 5
extern size_t localfetch_whole_packs;   /* LOCALFETCH_WHOLE_PACKS; tests lower it */
/* libgit2's object cache during a copy (bytes of raw objects; restored after) */
#define LOCALFETCH_CACHE_MAX (16 * 1024 * 1024)
int localfetch_copy(git_repository *dst, git_repository *src, const git_oid *tips, size_t n,
		    localfetch_progress_fn progress, void *payload);

#endif
