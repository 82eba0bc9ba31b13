/*
 * Carried merge fixes (`trees[].fixes` in the config):
 * patch files as `git format-patch` writes them, applied on top of next right after
 * their tree's merge, as `git am -3` applies them: the diff as it stands, else a
 * three-way merge against the blobs its "index" lines name (when the repository has
 * them).  A fix that no longer applies is skipped and reported; one whose change is
 * already in next is reported as no longer needed.  Call through
 * integ_night_apply_fixes() (merge/integrate.h); fixes_apply() is the git level.
 *
 * The directory: with a `series` file (quilt's convention: one file name a line,
 * blank lines and '#' comments ignored) its order; else every "*.patch" file in name
 * order.  A file may hold several mails (an mbox).
 */
#ifndef MERGE_FIXES_H
#define MERGE_FIXES_H

#include "util/oid.h"
#include <stddef.h>
#include "util/strbuf.h"

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

#endif
