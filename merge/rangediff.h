/*
 * Two versions of a series compared as `git range-diff` compares them: each commit
 * as a text (its author, message and diff, in range-diff's layout), exact matches
 * first, then the pairing of least cost, where pairing two commits costs the size
 * of the diff between their diffs and leaving one unpaired costs its own size times
 * the creation factor (60 %).  And the interdiff of two versions of one patch.
 * Typed ids only: no libgit2 type.
 */
#ifndef MERGE_RANGEDIFF_H
#define MERGE_RANGEDIFF_H

#include "util/oid.h"
#include <stddef.h>
#include "util/strbuf.h"

struct repo;

#define RANGEDIFF_CREATION_FACTOR 60 /* git's default (--creation-factor) */

struct rangediff_commit {
	struct nb_oid id;
	char *subject;   /* one line, valid UTF-8 */
	char *text;      /* range-diff's text of it: " ## Metadata ##", message, diff */
	size_t diff_at;  /* where the diff part of `text` starts */
	int size;        /* lines of the diff part */
	int pair;        /* index in the other range, or -1 */
};

struct rangediff {
	struct rangediff_commit *old, *new; /* each range oldest first */
	size_t old_nr, new_nr;
};
#define RANGEDIFF_INIT { NULL, NULL, 0, 0 }

/*
 * Compares old_base..old_tip with new_base..new_tip (the non-merge commits each tip
 * reaches and its base does not; a NULL base: all of them), at most `max` commits a
 * range (0: 200; a longer range is NB_EINVALID, recorded: its cost grows with the
 * square).  `creation_factor` in per cent (RANGEDIFF_CREATION_FACTOR).  Fills `out`
 * (RANGEDIFF_INIT; release with rangediff_release()).  Returns 0 or NB_ERROR.
 */
int rangediff_compute(struct rangediff *out, struct repo *repo, const struct nb_oid *old_base,
		      const struct nb_oid *old_tip, const struct nb_oid *new_base,
		      const struct nb_oid *new_tip, int creation_factor, size_t max);
void rangediff_release(struct rangediff *rd);

/* The same over two ranges of one commit each: old_commit^..old_commit, new_commit^..new_commit. */
int rangediff_compute_pair(struct rangediff *out, struct repo *repo,
			   const struct nb_oid *old_commit, const struct nb_oid *new_commit,
			   int creation_factor);

/*
 * Appends the pair header as git range-diff prints it, "1:  1234567 ! 1:  89abcde
 * subject" ('=' same text, '!' changed, '<' only old, '>' only new; old_i or new_j
 * -1 for none), then for a changed pair the diff of the two texts, each line
 * indented by four, its hunks headed "@@ <section>" as range-diff does.
 */
void rangediff_pair_show(struct strbuf *out, const struct rangediff *rd, int old_i, int new_j);

/*
 * The interdiff of two versions of one patch: `git diff old new` as a patch, when
 * the two commits' parents have the same tree (the same base), appended to `out`.
 * NB_ECONFLICT (nothing appended, nothing recorded) when the bases differ;
 * NB_ERROR (recorded) when a commit cannot be read.
 */
int rangediff_interdiff(struct strbuf *out, struct repo *repo, const struct nb_oid *old_commit,
			const struct nb_oid *new_commit);

#endif
