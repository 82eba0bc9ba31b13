/*
 * Finding patches in the work repository by what a maintainer knows of them:
 * commit id (prefix), patch-id (prefix) or Message-ID; and listing a tree's new
 * patches for the night's commit checks.  Hex strings only: no libgit2 types.
 */
#ifndef MERGE_LOOKUP_H
#define MERGE_LOOKUP_H

#include "util/oid.h"
#include <stddef.h>

struct repo;

/* One non-merge commit of a tree; every string owned, released by lookup_patch_release(). */
struct lookup_patch {
	char *tree;
	struct nb_oid commit;
	struct nb_oid patch_id;      /* "" when it has none (binary) */
	char *message_id;       /* NULL when none */
	char *subject;
	char *author_name, *author_email;
	int has_author_signoff;
	long long author_time;  /* seconds since the epoch */
	char *link;             /* URL of the Link: trailer naming message_id; NULL */
	char *body;             /* the message after its subject: valid UTF-8, LF line
				   ends, its trailers in it (merge/trailer.h reads them) */
};

struct lookup_patches {
	struct lookup_patch *items;
	size_t nr, alloc;
};
#define LOOKUP_PATCHES_INIT { NULL, 0, 0 }

/*
 * Appends the non-merge commits reachable from `tip` and not from `upto` (NULL:
 * all), oldest first, as patches of `tree`.  At most `max` (0: 100000).
 */
int lookup_new_patches(struct lookup_patches *out, struct repo *repo, const char *tree,
		       const char *tip, const char *upto, size_t max);

/*
 * The non-merge commits reachable from `tip` and not from `upto` (NULL or empty: all),
 * oldest first, at most `max` (0: 100000): the walk alone, no message or diff read.
 * *out (*nr entries) is malloc'd; the caller frees it.  0, or NB_ERROR (recorded,
 * naming `what`).
 */
int lookup_commit_ids(struct nb_oid **out, size_t *nr, struct repo *repo, const char *what,
		      const struct nb_oid *tip, const struct nb_oid *upto, size_t max);

/*
 * Finds the one patch in `pool` that `id` names: a commit or patch-id prefix of
 * at least 4 hex digits, or a Message-ID (with or without <>).  Returns its index,
 * or -1 (none) / -2 (ambiguous) with the error recorded.
 */
long lookup_patch_find(const struct lookup_patches *pool, const char *id);

/* Reads one commit (40-hex) as a patch of `tree` into `out` (release it after). */
int lookup_commit(struct lookup_patch *out, struct repo *repo, const char *tree,
		  const char *hex);
/*
 * The same without its patch-id (patch_id ""), which is most of the cost of reading
 * a commit: for those who can wait for it, and then ask lookup_patch_id().
 */
int lookup_commit_meta(struct lookup_patch *out, struct repo *repo, const char *tree,
		       const struct nb_oid *commit);
/* The patch-id of `commit` (empty for a merge, a root or a binary change); NB_ENOTFOUND. */
int lookup_patch_id(struct nb_oid *out, struct repo *repo, const struct nb_oid *commit);

/*
 * 1 when `ancestor` is `commit` or reachable from it, 0 when not, negative (recorded)
 * when either is no commit of the repository.
 */
int lookup_contains(struct repo *repo, const struct nb_oid *commit,
		    const struct nb_oid *ancestor);

/*
 * 1 when `ancestor` is one of commits[0..n) or reachable from one of them, 0 when
 * not (n == 0 too), negative (recorded) on a bad id.  One walk for all of them.
 */
int lookup_contains_any(struct repo *repo, const struct nb_oid *commits, size_t n,
			const struct nb_oid *ancestor);

void lookup_patch_release(struct lookup_patch *p);
void lookup_patches_release(struct lookup_patches *list);

#endif
