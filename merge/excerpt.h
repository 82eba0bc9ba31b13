/*
 * The lines of a failing command's log that matter, and the breakage's signature.
 * Pure text work: no repository, no files; safe on any bytes (it is fuzzed).
 */
#ifndef MERGE_EXCERPT_H
#define MERGE_EXCERPT_H

#include <stddef.h>
#include "util/strbuf.h"

#define EXCERPT_MAX_LINES 40
#define EXCERPT_LINE_MAX 400	/* longer lines are cut, with "..." */

/*
 * From `log` (`len` bytes, need not be NUL-terminated, may hold any byte) appends
 * to `out` at most EXCERPT_MAX_LINES lines, each ending in '\n', in log order:
 * compiler `error:` lines with their "In function" line before and the source and
 * caret lines after, linker errors, failing tests (FAIL, "not ok", assertions,
 * crashes) with their diagnostics, make's "***" lines; the log's last lines when
 * none of these appear.  Colour escapes and control characters are removed.
 * `strip_prefix` (may be NULL), typically the checkout directory, is removed where
 * it starts a path, so the excerpt reads as relative paths whichever worker ran it.
 * `first_error` (may be NULL) gets the first error line (a compiler or test error
 * before a make "***" line; the last non-empty line when nothing matched), cleaned
 * but not normalised.
 */
void excerpt_extract(struct strbuf *out, struct strbuf *first_error, const char *log,
		     size_t len, const char *strip_prefix);

/*
 * Appends to `out` `line` normalised for the fingerprint: paths kept;
 * ":LINE:COL" numbers, "line N", 0x addresses, hex ids (7+ hex digits with a
 * digit among them), dates and times, and "[ 12.345678]" stamps removed;
 * whitespace runs folded to one space and trimmed.
 */
void excerpt_normalise(struct strbuf *out, const char *line);

/*
 * Appends the fingerprint of a breakage: "<patch_id>\n<command_name>\n<normalised
 * first error line>".  `patch_id`: the culprit's patch-id, or its commit id when
 * it has none (merges, binary changes).  Any argument may be NULL (taken as "").
 */
void excerpt_fingerprint(struct strbuf *out, const char *patch_id, const char *command_name,
			 const char *first_error_line);

/*
 * Appends the fingerprint of a flaky failure: as excerpt_fingerprint(), and the
 * error line's standalone decimal numbers dropped too ("(got 4, want 5)" becomes
 * "(got , want )"; "chunks57", "x86_64" and "v2" stay): a flaky test reports other
 * values each time it fails, and it is one failure, one flag.
 */
void excerpt_flaky_fingerprint(struct strbuf *out, const char *who, const char *command_name,
			       const char *first_error_line);

/* The flag id: the first 12 hex digits of SHA-1(fingerprint), NUL-terminated. */
void excerpt_flag_id(char out[13], const char *fingerprint);

#endif
