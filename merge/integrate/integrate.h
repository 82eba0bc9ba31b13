/*
 * merge/'s door for integration (what bot/ includes of it; no libgit2 type): the
 * night's merge sequence, conflicts, drops and reverts (integ_*), carried fixes
 * (fixes_*), conflict memory (rerere_*), the Next/ files and tag (nextfiles_*), a trial
 * merge of someone's branch (trial_merge), a tree's branch replayed without dropped
 * patches and pushed (droppush_*).
 */
#ifndef MERGE_INTEGRATE_H
#define MERGE_INTEGRATE_H

#include <stddef.h>
#include "util/oid.h"
#include "util/strvec.h"
#include "merge/integrate/integ_drops.h"
#include "util/strbuf.h"
#include "merge/git/sha1_int.h"

/*
 * The night's merge sequence and its output (next, its tag, Next/ files): from the base
 * tip, merge each tree in order into next, step by step so
 * the bot can build after each merge; conflicts fall back to the good tip or leave
 * the tree out; dropped patches are replayed away; reverts; the Next/ files, the
 * tag and refs/heads/next.  Everything in memory: no index, no work tree.
 * Commits are 40-hex strings; no libgit2 type appears here.
 */
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
 * See rerere_*() below.  Call before the first merge; NULL turns it off.
 */
void integ_night_set_rerere(struct integ_night *night, const char *workdir);

/*
 * Turns on the merge memo (merge/integrate/mergememo_int.h) kept in the file `path`: a clean
 * merge of the same three trees as a night before is not done again, its tree
 * and diffstat are taken from the memo.  Call before the first merge; NULL turns
 * it off.  integ_night_memo_save() writes the memo back (0 or NB_ERROR; a night
 * that cannot save it loses only speed).
 */
void integ_night_set_memo(struct integ_night *night, const char *path);
int integ_night_memo_save(struct integ_night *night);

/*
 * Merges `tip` of `tree` into next (a --no-ff merge commit "Merge branch
 * '<branch>' of <url>", parents [next, merged]; NULL or empty: left out, no commit
 * to merge).  On conflict, merges `good` (NULL or empty: none) instead if that
 * merges cleanly, else leaves the tree
 * out; `drops` (may be NULL) are left out by replaying the tree's commits since its
 * merge base with the base.  *out (initialised with INTEG_OUTCOME_INIT) is filled
 * in every case and released by the caller.  Returns 0 whenever the night can go
 * on (left out included); NB_EREFUSED when never_merge matches (outcome left out);
 * NB_ERROR on a repository failure.  Appends to the night's merge.log.
 */
int integ_night_merge_tree(struct integ_night *night, struct integ_outcome *out,
			   const struct integ_tree *tree, const struct nb_oid *tip,
			   const struct nb_oid *good, const struct integ_drops *drops);

/*
 * Applies the carried fix patches of `dir` (trees[].fixes; see fixes_*() below) on top
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
 * Appends to next the revert of `commit` (like `git revert`: 'Revert
 * "<subject>"', 'This reverts commit <sha>.', then `reason` if not NULL).
 * NB_ECONFLICT (nothing changed) when the revert does not apply.
 */
int integ_night_revert(struct integ_night *night, const struct nb_oid *commit, const char *tree,
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

/*
 * Carried merge fixes (`trees[].fixes` in the config):
 * patch files as `git format-patch` writes them, applied on top of next right after
 * their tree's merge, as `git am -3` applies them: the diff as it stands, else a
 * three-way merge against the blobs its "index" lines name (when the repository has
 * them).  A fix that no longer applies is skipped and reported; one whose change is
 * already in next is reported as no longer needed.  Call through
 * integ_night_apply_fixes() (merge/integrate/integrate.h); fixes_apply() is the git level.
 *
 * The directory: with a `series` file (quilt's convention: one file name a line,
 * blank lines and '#' comments ignored) its order; else every "*.patch" file in name
 * order.  A file may hold several mails (an mbox).
 */
enum fix_state {
	FIX_APPLIED,        /* the diff applied as it stands */
	FIX_APPLIED_3WAY,   /* applied by a three-way merge against its index blobs */
	FIX_NOT_NEEDED,     /* its change is already in next: skipped, no longer needed */
	FIX_FAILED,         /* does not apply or cannot be read: skipped */
};
/* "applied", "applied-3way", "not-needed", "failed". */
const char *fix_state_name(enum fix_state s);

/* One mail of a fixes directory and what became of it; strings owned. */
struct fix_result {
	char *file;         /* the patch file's name, without the directory */
	char *subject;      /* "[PATCH n/m]" stripped; "" when unreadable */
	enum fix_state state;
	char *reason;       /* NULL when applied; else why (one line, for the contacts) */
	struct nb_oid commit;    /* the commit made on next; "" when none */
};

struct fixes_report {
	struct fix_result *items;
	size_t nr, alloc;
};
#define FIXES_REPORT_INIT { NULL, 0, 0 }
void fixes_report_release(struct fixes_report *r);
/* Number of items in `state`. */
size_t fixes_report_count(const struct fixes_report *r, enum fix_state state);

/* One mail of a format-patch file; strings owned ("" when absent). */
struct fix_patch {
	char *author_name, *author_email;
	long long author_time;   /* seconds since the epoch; -1 when the Date is missing */
	int author_offset;       /* minutes east of UTC */
	char *subject;           /* RFC 2047 decoded, "[...]" prefixes stripped */
	char *message;           /* subject, a blank line and the body: the commit message */
	char *diff;              /* from the first "diff --git" line, signature cut */
};
#define FIX_PATCH_INIT { NULL, NULL, -1, 0, NULL, NULL, NULL }
void fix_patch_release(struct fix_patch *p);

/*
 * Splits `text` (one mail or an mbox of several) into patches: *out gets an array of
 * *nr (free each with fix_patch_release(), then the array).  NB_EINVALID (recorded)
 * when a mail has no diff.
 */
int fix_patches_parse(struct fix_patch **out, size_t *nr, const char *text, size_t len);

/*
 * Conflict memory, as git rerere keeps it (`nextbot resolve TREE` records).  Text
 * and files only: no libgit2 type here (merge/integrate/rerere_git_int.h does the repository side).
 *
 * Under the work directory:
 *   resolve/<tree>/<path>       tonight's conflicted files of <tree>, with markers, for
 *                               the maintainer to edit
 *   resolve/<tree>.orig/<path>  the same files as nextbot left them (never edit)
 *   resolve/<tree>.meta         "tree", "date", "next", "tip" lines, then one "path"
 *                               line per file left and one "other <kind> <path>" line
 *                               per conflict that has no file to edit (modify/delete…)
 *   rerere/<id>/preimage        one conflict hunk, normalised as git rerere does: the
 *                               two sides sorted bytewise (so which side was "ours"
 *                               does not matter), markers without labels, a diff3
 *                               base section dropped
 *   rerere/<id>/postimage       what the maintainer resolved it to
 *   rerere/<id>/meta            "path", "tree", "recorded" (YYYY-MM-DD) lines
 * <id> is the SHA-1 of side one, a NUL, side two, a NUL (git rerere's per-hunk hash).
 * A file is resolved from memory only when EVERY hunk of it has a record.
 */
/* One conflict block of a file with markers: byte offsets into the text. */
struct rerere_hunk {
	size_t start;   /* the "<<<<<<<" line */
	size_t end;     /* just after the ">>>>>>>" line */
	char id[SHA1_HEXSZ + 1];
};

struct rerere_file {
	struct rerere_hunk *hunks;
	size_t nr, alloc;
};
#define RERERE_FILE_INIT { NULL, 0, 0 }
void rerere_file_release(struct rerere_file *f);

/*
 * Finds the conflict hunks of `text` (7-character markers at line starts, as git
 * writes them).  NB_EINVALID (recorded) for unbalanced or nested markers.
 */
int rerere_parse(struct rerere_file *out, const char *text, size_t len);

/* 1 if `text` still holds a conflict marker line ("<<<<<<< ", "=======", ">>>>>>> "). */
int rerere_has_markers(const char *text, size_t len);

/*
 * Replaces every hunk of `text` with its recorded resolution into `out`.  Returns 0
 * when all hunks (at least one) had one; NB_ECONFLICT otherwise (`out` then
 * undefined); *matched (may be NULL) gets how many hunks had one, *total how many.
 */
int rerere_replay(struct strbuf *out, size_t *matched, size_t *total, const char *rerere_dir,
		  const char *text, size_t len);

/*
 * Records the maintainer's resolution: `edited` is what became of `conflicted`
 * (the text between hunks must still be there unchanged, the markers gone).  Each
 * hunk's resolution is what replaced it.  *recorded gets the number of hunks
 * recorded.  NB_EINVALID (recorded, naming `path`) when markers remain or a hunk's
 * surroundings cannot be found; nothing is recorded then.  Where and what for:
 */
struct rerere_record_opts {
	const char *dir;   /* the rerere folder */
	const char *path;  /* the conflicted file's path, for meta and errors */
	const char *tree;  /* the tree whose merge conflicted (meta), may be NULL */
	const char *date;  /* when it is recorded (meta), may be NULL */
};
int rerere_record(size_t *recorded, const struct rerere_record_opts *o, const char *conflicted,
		  size_t clen, const char *edited, size_t elen);

/* A recorded resolution, for `status`. */
struct rerere_entry {
	char id[SHA1_HEXSZ + 1];
	char *path, *tree, *recorded;   /* owned; "" when unknown */
};

/* Every record under `rerere_dir`, sorted by path then id.  Free with rerere_list_free(). */
int rerere_list(struct rerere_entry **out, size_t *nr, const char *rerere_dir);
void rerere_list_free(struct rerere_entry *e, size_t nr);

/* Tonight's conflict of a tree, to leave in resolve/ (strings borrowed). */
struct rerere_leave_file {
	const char *path;
	const char *text;       /* the file with markers */
	size_t len;
};
struct rerere_leave_other {
	const char *path, *kind;
};
struct rerere_leave {
	const char *tree, *date, *next, *tip;
	const struct rerere_leave_file *files;
	size_t files_nr;
	const struct rerere_leave_other *others;
	size_t others_nr;
};

/*
 * Replaces resolve/<tree>/, resolve/<tree>.orig/ and resolve/<tree>.meta under
 * `workdir` with tonight's conflict.  Paths that are absolute, hold "..", "." or
 * empty components or a newline are not written (listed as "other unsafe").
 * *where (may be NULL) gets the directory (caller frees).
 */
int rerere_leave_write(const struct rerere_leave *c, const char *workdir, char **where);

/*
 * `nextbot resolve TREE`: records, for every file of resolve/<tree>.meta, the
 * maintainer's edits of resolve/<tree>/<path> under workdir/rerere, and appends a
 * line per file to `report` ("Recorded resolution for 'f' (2 hunks).").  `date`
 * (YYYY-MM-DD) is stored in the records.  NB_ENOTFOUND when there is no conflict of
 * the tree to resolve; NB_EINVALID when a file still has markers or was edited
 * outside its hunks (nothing is recorded then).
 */
int rerere_resolve_tree(struct strbuf *report, const char *workdir, const char *tree,
			const char *date);

/* workdir/rerere and workdir/resolve; caller frees. */
char *rerere_dir(const char *workdir);
char *rerere_resolve_dir(const char *workdir);

/*
 * The text of linux-next's own files: Next/Trees,
 * Next/SHA1s and localversion-next.  Pure text, no git.  Next/merge.log is the
 * transcript kept by merge/integrate/integrate.c.
 */
/* A tree merged tonight (the base first); strings borrowed. */
struct nextfiles_tree {
	const char *name;
	const char *url;
	const char *branch;
	const char *sha1;       /* 40-hex of the commit actually merged */
};

/* Appends Next/Trees: header, then "name\tgit\turl#branch" per tree. */
void nextfiles_trees(struct strbuf *out, const struct nextfiles_tree *trees, size_t n);
/* Appends Next/SHA1s: header, then "name\t<sha1>" per tree. */
void nextfiles_sha1s(struct strbuf *out, const struct nextfiles_tree *trees, size_t n);
/* Appends localversion-next for "YYYY-MM-DD": "-next-YYYYMMDD\n". */
void nextfiles_localversion(struct strbuf *out, const char *date);
/* "YYYYMMDD" of "YYYY-MM-DD" into out (9 bytes). */
void nextfiles_compact_date(char out[9], const char *date);

/*
 * A trial merge for `#nextbot test:`: someone's branch merged, in memory, in place
 * of a tree into next as it stood before that tree's merge, as a commit nobody's
 * ref points at but the caller's.  Hex ids in, typed ids out; no libgit2 types.
 */
struct repo;

/* A trial merge: which commits, and how the night would name the merge. */
struct trial_merge_opts {
	const struct nb_oid *onto, *tip;
	const char *branch, *url;   /* "Merge branch '<branch>' of <url>" */
	const char *identity;       /* the merge's author and committer */
	const char *date;           /* its day, YYYY-MM-DD */
};

/*
 * Merges `tip` into `onto` as the night would (a --no-ff merge commit "Merge branch
 * '<branch>' of <url>", by `identity` at 00:00 UTC of `date`, parents onto and tip).
 * Returns 0 with *out; NB_ECONFLICT with the conflicting paths in `paths` (when not
 * NULL, at most 20); NB_EUNRELATED when they share no history; NB_ENOTFOUND when a
 * commit is missing; NB_ERROR.  When `tip` is already in `onto`, *out is `onto`.
 */
int trial_merge(struct nb_oid *out, struct strvec *paths, struct repo *repo,
		const struct trial_merge_opts *o);

/*
 * `nextbot drop ID --push`: the tree's branch on its
 * remote is rewritten without the dropped patch.  Its commits since the merge base
 * with the base are replayed (merge/integrate/replay_int.h) minus the dropped ones, and minus
 * any later one that no longer applies; the result is pushed, forced, after a
 * check that the remote still has the tip that was rewritten (libgit2 1.5 has no
 * push lease).  Commits are 40-hex strings; no libgit2 type appears here.
 */
struct repo;
struct fetch_creds;

struct droppush_result {
	int changed;            /* 0: no commit of the branch matched a drop; nothing pushed */
	struct nb_oid old_tip;       /* refs/feeds/<tree> as last fetched: what was rewritten */
	struct nb_oid new_tip;       /* the replayed tip ("" when unchanged) */
	struct strvec left_out; /* 40-hex of the commits left out, oldest first */
	struct strvec reasons;  /* one per left_out: "dropped" or why it no longer applies */
};
#define DROPPUSH_RESULT_INIT { 0, NB_OID_INIT, NB_OID_INIT, STRVEC_INIT, STRVEC_INIT }
void droppush_result_release(struct droppush_result *r);

/*
 * Rewrites refs/heads/<tree->branch> at tree->url without the patches `drops`
 * names: replays refs/feeds/<tree->name> onto its merge base with
 * refs/feeds/<base_name> (merge commits of the tree are flattened, as replay
 * does), committer `committer` ("Name <email>", now), then pushes the result
 * forced once the remote has been seen to still advertise the old tip, and moves
 * refs/feeds/<tree->name> to it (what the remote now has).  *out (initialised
 * with DROPPUSH_RESULT_INIT) is filled as far as it got and released by the caller.
 * Returns 0 (pushed, or out->changed == 0: nothing to push); NB_ENOTFOUND
 * (recorded) when the base or the tree was never fetched; NB_EREFUSED (recorded:
 * both ids) when the remote's branch moved since the last fetch, nothing pushed;
 * NB_EINVALID for a bad identity; NB_ERROR (recorded) when the repository or the
 * push failed.
 */
int droppush_tree(struct droppush_result *out, struct repo *repo, const char *base_name,
		  const struct integ_tree *tree, const struct integ_drops *drops,
		  const char *committer, const struct fetch_creds *creds);

/*
 * A merge conflict's kind.  The merge (ort.c, treemerge.c) decides it and carries
 * it as its text, as merge.log and the notices write it ("content", "add/add",
 * "modify/delete", "rename/delete", "rename/rename"); conflict_kind_parse() is
 * where that text is read back, so that nothing else compares it.
 */
enum conflict_kind {
	CONFLICT_OTHER,          /* a kind this reader does not know */
	CONFLICT_CONTENT,        /* both sides changed the same lines */
	CONFLICT_ADD_ADD,        /* both sides added the path */
	CONFLICT_MODIFY_DELETE,
	CONFLICT_RENAME_DELETE,
	CONFLICT_RENAME_RENAME,
};

enum conflict_kind conflict_kind_parse(const char *kind);

#endif
