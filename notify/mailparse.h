/*
 * Internal to notify/: the pieces of the inbound mail parser that its files share
 * (notify/mailparse.c, notify/mailbody.c, notify/mailauth.c).  Others use
 * notify/inbox.h.
 */
#ifndef NOTIFY_MAILPARSE_H
#define NOTIFY_MAILPARSE_H

#include <stddef.h>
#include "notify/inbox.h"
#include "util/strbuf.h"

#define MAIL_FIELDS_MAX 1000     /* header fields kept per message or part */
#define MAIL_FIELD_MAX (64 << 10) /* bytes kept of one unfolded field */

struct mail_fields {
	struct inbox_header *v;
	size_t nr, alloc;
};
#define MAIL_FIELDS_INIT { NULL, 0, 0 }

/*
 * Reads header fields from p up to end: unfolds them, makes NUL and CR spaces, keeps
 * at most MAIL_FIELDS_MAX.  Stops at the empty line (the body starts after it), at
 * the end, or at a line that is not a field (the body starts there).  Returns the
 * start of the body; *first_bad is set when the very first line was not a field.
 */
const char *mail_fields_parse(struct mail_fields *out, const char *p, const char *end,
			      int *first_bad);
void mail_fields_release(struct mail_fields *f);
/* The first field called `name` (case-insensitive), or NULL; borrowed. */
const char *mail_fields_get(const struct inbox_header *v, size_t nr, const char *name);

/* The text of a structured field without its (nested) comments; quoted strings kept. */
void mail_strip_comments(struct strbuf *out, const char *in);
/* Calls fn on each piece of s between `sep` characters outside quoted strings. */
void mail_split_unquoted(const char *s, int sep,
			 void (*fn)(const char *p, size_t n, void *data), void *data);
/* p[0..n) trimmed and unquoted (quoted pairs resolved); caller frees. */
char *mail_param_value(const char *p, size_t n);

/* A Content-Type field, parsed. Strings owned; mail_ctype_release() frees. */
struct mail_ctype {
	char *type;     /* "text/plain", lower case */
	char *boundary; /* NULL when none */
	char *charset;  /* lower case; NULL when none */
	int flowed;     /* format=flowed (RFC 3676) */
	int delsp;      /* delsp=yes */
};
void mail_ctype_parse(struct mail_ctype *out, const char *value, const char *dflt);
void mail_ctype_release(struct mail_ctype *ct);

/* A charset name safe to hand to iconv (letters, digits, "-_.:+", <= 40), or NULL. */
const char *mail_charset_safe(const char *charset);

/* Appends the bytes of base64 text (also base64url); junk and padding are skipped. */
void mail_base64_decode(struct strbuf *out, const char *s, size_t n);

/* Decodes RFC 2047 encoded words and raw 8-bit text of a field into clean UTF-8. */
void mail_decode_words(struct strbuf *out, const char *value);

/*
 * inbox_mail_parse()'s first half (mailparse.c): out's header fields, sender,
 * subject and key from the raw message (at most INBOX_MAIL_MAX of it), and where
 * its body starts (*body, *body_len).  0, or NB_EINVALID when it is not a mail
 * message (out is filled as far as it goes, subject and key always).
 */
int mail_head_parse(struct inbox_mail *out, struct mail_fields *fields, const char *raw,
		    size_t len, const char **body, size_t *body_len);

/* Fills m->body (and m->is_report, m->truncated) from the message body (mailbody.c). */
void mail_body_text(struct inbox_mail *m, const struct mail_fields *top, const char *body,
		    size_t len);

#endif
