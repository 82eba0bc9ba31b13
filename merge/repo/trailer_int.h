/*
 * Commit messages as kernel patches write them: subject, body, trailers.
 *
 * Pure text (no libgit2), so it can be fuzzed: every input, however odd (CRLF
 * line ends, a 1000-character subject, no trailers, no body, garbage bytes), gives
 * a well-formed result.  The input is a NUL-terminated string; embedded NULs end it.
 */
#ifndef MERGE_TRAILER_INT_H
#define MERGE_TRAILER_INT_H

#include <stddef.h>

struct trailer_info {
	char *subject;    /* first paragraph, its lines joined by one space, trimmed */
	char *body;       /* the rest, CRLF turned to LF, trailing blank lines removed;
			     the trailer block included (it is part of the message) */
	char *message_id; /* from the last trailer that names one, no angle brackets;
			     NULL if none */
	char **signoffs;  /* the values of "Signed-off-by:" lines, in order, trimmed */
	size_t signoffs_nr;
};
#define TRAILER_INFO_INIT { NULL, NULL, NULL, NULL, 0 }

/*
 * Parses `msg` into `out` (which must be initialised, then released with
 * trailer_info_release()).  Every string in `out` is owned by it; subject and
 * body are never NULL after a call.  Never fails.
 *
 * Message-ID sources, in the last paragraph of trailers or anywhere as a trailer
 * line, the last one found winning:
 *   Link: https://lore.kernel.org/r/<msgid>
 *   Link: https://lore.kernel.org/<list>/<msgid>/   (also patch.msgid.link/<msgid>)
 *   Message-ID: <msgid>   (also Message-Id:, any case)
 * A msgid is only taken when it contains an '@' (so an ordinary Link: to a bug
 * tracker is not mistaken for one); URL %-escapes "%40" etc. are decoded.
 */
void trailer_parse(struct trailer_info *out, const char *msg);
void trailer_info_release(struct trailer_info *info);

/*
 * 1 if `msg` has a "Signed-off-by:" trailer whose address (the part in <...>, or
 * the whole value when there are no brackets) equals `author_email`, ignoring
 * ASCII case; 0 otherwise.
 */
int trailer_has_signoff(const char *msg, const char *author_email);

/*
 * Extracts the Message-ID from one "Link:" value or a bare msgid/<msgid> into a
 * malloc'd string (caller frees), or NULL if it names none.
 */
char *trailer_msgid_from_value(const char *value);

#endif
