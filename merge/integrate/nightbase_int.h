/*
 * Merge bases of next and a tree's tip, fast at linux-next's scale.  next grows by
 * one merge per tree from the base, so every merge-base walk from next would pass
 * all trees merged before (quadratic in trees).  Knowing U = the commits reachable
 * from next but not from the base (kept as next grows), the common ancestors of
 * next and a tip T are those of the base and T, plus T's commits since the base
 * that are in U; their maximal elements are the same set git_merge_bases() finds,
 * after a walk of T's own new commits only.  For merge/ code only.
 */
#ifndef MERGE_NIGHTBASE_INT_H
#define MERGE_NIGHTBASE_INT_H

#include <stddef.h>
#include <git2.h>

struct nightbase;

/* `repo` is borrowed and must outlive the object.  Free with nightbase_free(). */
int nightbase_new(struct nightbase **out, git_repository *repo, const git_oid *base);
void nightbase_free(struct nightbase *nb);

/*
 * The best common ancestors of `head` and `theirs` (the set git_merge_bases()
 * returns, in no particular order) into *out (nightbase-owned, valid until the next
 * call) and *out_nr (0: unrelated histories).  `head` may be anything: a head that
 * is not the last one asked about, nor that head plus commits on top of it (one
 * merge of the last `theirs` among them), costs one walk of base..head; a head not
 * descended from the base falls back to git_merge_bases().  0 or NB_ERROR.
 */
int nightbase_get(const git_oid **out, size_t *out_nr, struct nightbase *nb,
		  const git_oid *head, const git_oid *theirs);

struct nightbase_stats {
	size_t queries, rebuilds, fallbacks, shared;   /* shared: T had commits in U */
};
void nightbase_stats_get(const struct nightbase *nb, struct nightbase_stats *out);

#endif
