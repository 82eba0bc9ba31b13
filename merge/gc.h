/*
 * Repacking the work repository (`nextbot gc`): in-memory merges and
 * probes write loose objects every night.  With git installed this runs
 * `git gc --prune=now --quiet` (through util/runcmd.h); without it, libgit2's pack
 * builder packs every object reachable from any ref into one new pack, then removes
 * the older packs and every loose object (as --prune=now would).  Either way the
 * commit-graph is then written again over what the refs reach (or removed when it
 * cannot be), so it never names a pruned commit.  The caller holds
 * the run lock: nothing else may write the repository meanwhile.
 */
#ifndef MERGE_GC_H
#define MERGE_GC_H

#include <stddef.h>

struct gc_result {
	const char *how;        /* "git gc --prune=now" or "libgit2 pack builder" (static) */
	size_t loose_before, loose_after;   /* loose objects */
	size_t packs_after;     /* pack files */
};

/* 1 if a `git` executable is on PATH. */
int gc_have_git(void);

/* Loose objects under `repo_path` (bare: repo_path/objects/xx/…). */
size_t gc_count_loose(const char *repo_path);

/*
 * Repacks the bare repository at `repo_path`: with git when gc_have_git() and not
 * `force_libgit2`, else (or when git gc fails) with libgit2.  Returns 0 with *out
 * filled, or NB_ERROR (recorded; nothing is removed when packing failed).
 */
int gc_repack(struct gc_result *out, const char *repo_path, int force_libgit2);

/*
 * Deletes the night tags refs/tags/next-YYYYMMDD of the bare repository at
 * `repo_path` whose date is before `before` ("YYYY-MM-DD"); *removed gets how
 * many.  Other tags are left alone.  Returns 0 or NB_ERROR.
 */
int gc_drop_night_tags(const char *repo_path, const char *before, size_t *removed);

#endif
