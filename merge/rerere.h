/*
 * Conflict memory, as git rerere keeps it (`nextbot resolve TREE` records).  Text
 * and files only: no libgit2 type here (merge/rerere_git_int.h does the repository side).
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
#ifndef MERGE_RERERE_H
#define MERGE_RERERE_H

#include <stddef.h>
#include "merge/sha1_int.h"
#include "util/strbuf.h"

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

#endif
