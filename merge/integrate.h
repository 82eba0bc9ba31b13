/*
 * The night's merge sequence and its output (next, its tag, Next/ files): from the base
 * tip, merge each tree in order into next, step by step so
 * the bot can build after each merge; conflicts fall back to the good tip or leave
 * the tree out; dropped patches are replayed away; reverts; the Next/ files, the
 * tag and refs/heads/next.  Everything in memory: no index, no work tree.
 * Commits are 40-hex strings; no libgit2 type appears here.
 */
#ifndef MERGE_INTEGRATE_H
#define MERGE_INTEGRATE_H

#include "util/oid.h"
#include <stddef.h>
#include "util/strvec.h"
#include "merge/integ_drops.h"

struct repo;
struct integ_night;

/* A tree as the config names it; strings borrowed for the duration of the call. */
struct integ_tree {
	const char *name;
	const char *url;
	const char *branch;
};


enum integ_state {
	INTEG_MERGED,           /* tonight's tip (or its replay without dropped patches) */
	INTEG_ALREADY,          /* wholly contained in next: no commit */
	INTEG_PREVIOUS,         /* tip conflicted; the good tip merged instead */
	INTEG_LEFT_OUT,         /* not merged tonight (conflict, refused, unrelated, …) */
};
const char *integ_state_name(enum integ_state s); /* "merged", "already", … */

/* One conflicting path and the commits on each side since the merge base. */
struct integ_conflict {
	char *path;
	char *kind;                  /* "content", "modify/delete", "add/add", "rename" */
	struct strvec next_commits;  /* 40-hex, newest first, at most 20 */
	struct strvec tree_commits;
};

struct integ_outcome {
	enum integ_state state;
	struct nb_oid merged;        /* commit actually merged ("" when left out); a replay
				   commit when dropped patches were left out */
	struct nb_oid head;          /* next after this step */
	char *reason;           /* NULL when merged cleanly */
	struct integ_conflict *conflicts;   /* of tonight's tip, also when a fallback merged */
	size_t conflicts_nr;
	struct strvec left_out_patches;     /* tree commits (40-hex) not merged: dropped ones
					       and later ones that no longer applied */
	/* Conflict memory (integ_night_set_rerere()); 0/NULL without it. */
	size_t rerere_resolved;             /* files resolved from recorded resolutions:
					       the merge went through (state merged) */
	char *resolve_dir;                  /* tonight's tip conflicted: its conflicted files
					       were left here for `nextbot resolve <tree>` */
};
#define INTEG_OUTCOME_INIT { .left_out_patches = STRVEC_INIT }
void integ_outcome_release(struct integ_outcome *o);

/* One step of the night, for bisection and status. */
enum integ_step_kind { INTEG_STEP_MERGE, INTEG_STEP_REVERT };
struct integ_step {
	enum integ_step_kind kind;
	char *tree;             /* tree name (for a revert: the tree whose commit it reverts,
				   or "" if unknown) */
	char *branch, *url;     /* merge steps only */
	enum integ_state state; /* merge steps only */
	struct nb_oid tip;           /* tonight's fetched tip (merge) / reverted commit (revert) */
	struct nb_oid merged;        /* commit merged; "" if left out */
	struct nb_oid before;        /* next before this step */
	struct nb_oid after;         /* next after it (== before when nothing was committed) */
	char *message;          /* revert steps: the revert commit's whole message (the
				   reproduce steps make the same commit); NULL otherwise */
};

/*
 * Starts a night at refs/feeds/<base->name> (already fetched).  `date` is
 * "YYYY-MM-DD" (commits are dated 00:00:00 UTC of it), `merge_identity` "Name
 * <email>", `never_merge` NULL-terminated fnmatch globs (may be NULL); all copied.
 * Returns 0 with *out (free with integ_night_free()), NB_ENOTFOUND if the base was
 * never fetched, NB_EINVALID for a bad date or identity.  `repo` is borrowed and
 * must outlive the night.
 */
int integ_night_new(struct integ_night **out, struct repo *repo, const char *date,
		    const struct integ_tree *base, const char *merge_identity,
		    const char *const *never_merge);
void integ_night_free(struct integ_night *night);

/*
 * Turns on conflict memory (as git rerere) for the night, under `workdir` (copied):
 * a conflict all of whose hunks match resolutions recorded in workdir/rerere is
 * resolved from them (merge.log: "Resolved '<file>' using previous resolution.")
 * and merged; otherwise tonight's tip's conflicted files are left, with markers, in
 * workdir/resolve/<tree>/ (outcome.resolve_dir) for `nextbot resolve <tree>`.
 * See merge/rerere.h.  Call before the first merge; NULL turns it off.
 */
void integ_night_set_rerere(struct integ_night *night, const char *workdir);

/*
 * Turns on the merge memo (merge/mergememo_int.h) kept in the file `path`: a clean
 * merge of the same three trees as a night before is not done again, its tree
 * and diffstat are taken from the memo.  Call before the first merge; NULL turns
 * it off.  integ_night_memo_save() writes the memo back (0 or NB_ERROR; a night
 * that cannot save it loses only speed).
 */
void integ_night_set_memo(struct integ_night *night, const char *path);
int integ_night_memo_save(struct integ_night *night);

/*
 * Merges `tip_hex` of `tree` into next (a --no-ff merge commit "Merge branch
 * '<branch>' of <url>", parents [next, merged]).  On conflict, merges
 * `good_hex` (may be NULL) instead if that merges cleanly, else leaves the tree
 * out; `drops` (may be NULL) are left out by replaying the tree's commits since its
 * merge base with the base.  *out (initialised with INTEG_OUTCOME_INIT) is filled
 * in every case and released by the caller.  Returns 0 whenever the night can go
 * on (left out included); NB_EREFUSED when never_merge matches (outcome left out);
 * NB_ERROR on a repository failure.  Appends to the night's merge.log.
 */
int integ_night_merge_tree(struct integ_night *night, struct integ_outcome *out,
			   const struct integ_tree *tree, const char *tip_hex,
			   const char *good_hex, const struct integ_drops *drops);

/*
 * Applies the carried fix patches of `dir` (trees[].fixes; see merge/fixes.h) on top
 * of next, right after `tree`'s merge: call it after integ_night_merge_tree() of
 * that tree (and again after re-merging it), before anything else is added.  Each
 * fix applied is a commit on next; the tree's merge step then ends after them
 * (its `after` is the new head, so bisection and truncation keep tree and fixes
 * together).  merge.log gets "$ git am -3 <last part of dir>/<file>" and git am's
 * lines.  `report` (FIXES_REPORT_INIT; may be NULL) gets one item per patch: those
 * FIX_FAILED (no longer apply: skipped) and FIX_NOT_NEEDED (already in next) are
 * for a notice to the tree's contacts.  Nothing is done (0) when the tree was left
 * out.  Returns 0, NB_EINVALID when the last step is not `tree`'s merge, NB_ERROR
 * when the repository fails.
 */
struct fixes_report;
int integ_night_apply_fixes(struct integ_night *night, const char *tree, const char *dir,
			    struct fixes_report *report);

/*
 * Records a tree that is not merged tonight at all (fetch failed, refused at
 * load): only a "# <name>: left out: <reason>" line in merge.log.
 */
void integ_night_left_out(struct integ_night *night, const char *tree, const char *reason);

/*
 * Appends to next the revert of `commit_hex` (like `git revert`: 'Revert
 * "<subject>"', 'This reverts commit <sha>.', then `reason` if not NULL).
 * NB_ECONFLICT (nothing changed) when the revert does not apply.
 */
int integ_night_revert(struct integ_night *night, const char *commit_hex, const char *tree,
		       const char *reason);

/* Current head of next (40-hex), borrowed until the next call on the night. */
const struct nb_oid *integ_night_head(const struct integ_night *night);

/* The steps so far, in order; borrowed until the next call that changes the night. */
size_t integ_night_steps_nr(const struct integ_night *night);
const struct integ_step *integ_night_step(const struct integ_night *night, size_t i);

/*
 * Rewinds next to before step `nsteps` (0: the base), dropping later steps; the
 * log keeps what happened and gains a "$ git reset --hard <12-hex>" line.
 */
int integ_night_truncate(struct integ_night *night, size_t nsteps);

/* A point of the night to come back to with integ_night_restore(). */
struct integ_mark {
	size_t steps;        /* steps done */
	size_t log_len;      /* bytes of merge.log written */
	struct nb_oid head;
};
void integ_night_mark(const struct integ_night *night, struct integ_mark *out);
/*
 * Back to `mark` as if nothing after it had happened: later steps are dropped and
 * so is what they wrote to the log (no "git reset" line), for merges made ahead of
 * their turn (speculative builds) that the night then did not take.
 */
void integ_night_restore(struct integ_night *night, const struct integ_mark *mark);

/* The merge.log transcript so far; borrowed until the next call on the night. */
const char *integ_night_log(const struct integ_night *night);

/*
 * Commits "Add linux-next specific files for YYYYMMDD" with Next/Trees,
 * Next/SHA1s, Next/merge.log and localversion-next on top of next, creates or
 * replaces the tag next-YYYYMMDD and moves refs/heads/next.  `out_head` (may be
 * NULL) receives the new tip.  Afterwards the night only answers queries.
 */
int integ_night_finish(struct integ_night *night, struct nb_oid *out_head);

#endif
