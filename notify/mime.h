/*
 * Mail building blocks: strict addresses, RFC 2047 header encoding and folding,
 * quoted-printable bodies, prose wrapping.  Everything written is CRLF-terminated; 7-bit
 * unless 8bit is asked for.
 */
#ifndef NOTIFY_MIME_H
#define NOTIFY_MIME_H

#include <stddef.h>
#include <time.h>
#include "util/strbuf.h"

/*
 * Checks a bare addr-spec, local@domain, strictly: dot-atom local part of RFC 5322
 * atext (no quoted strings), a domain of LDH labels, printable ASCII only, no CR, LF,
 * NUL, '<' or '>'; local part <= 64, whole <= 254.  Returns 0 or NB_EREFUSED with
 * the reason recorded (the address shown with its controls made visible).
 */
int mime_addr_check(const char *addr);

/*
 * Splits "Name <addr>" or "addr" into *name_out (NULL when there is none; control
 * characters and invalid UTF-8 repaired) and *addr_out, checked as above.  The
 * caller frees both with free().  On failure both are NULL and NB_EREFUSED is
 * returned with the reason.
 */
int mime_addr_parse(const char *in, char **name_out, char **addr_out);

/*
 * One-line text from strangers: valid UTF-8, controls replaced, bidi controls shown
 * as "\u202e" (utf8_strip_controls()), trimmed.
 */
void mime_clean_line(struct strbuf *out, const char *in);
/*
 * Multi-line text from strangers: valid UTF-8, LF line ends (CRLF becomes LF),
 * controls other than TAB and LF replaced (a lone CR too), bidi controls shown as
 * "\u202e" (utf8_clean_text()).
 */
void mime_clean_text(struct strbuf *out, const char *in);

/*
 * Appends the header "Name: value\r\n" for unstructured text (Subject): raw when it is
 * printable ASCII that folds well, else RFC 2047 UTF-8 encoded words of at most 75
 * characters; folded so that lines stay within 78 octets.  `value` must be clean
 * (mime_clean_line).
 */
void mime_header_text(struct strbuf *out, const char *name, const char *value);

/* An address with its (clean) display name, for mime_header_addrs(). */
struct mime_addr {
	const char *name; /* NULL: none */
	const char *addr; /* checked with mime_addr_check() */
};

/* Appends "Name: a, b, …\r\n", one address per folded line, names encoded. */
void mime_header_addrs(struct strbuf *out, const char *name, const struct mime_addr *list,
		       size_t nr);

/* Appends an RFC 5322 date ("Thu, 03 Dec 2026 02:00:01 +0000"), UTC. */
void mime_date(struct strbuf *out, time_t t);

/*
 * Normalises a Message-ID taken from a commit ("<x@y>" or "x@y") into *out as
 * "<x@y>".  Returns 0, or -1 (out untouched) when it is not a safe msg-id.
 */
int mime_msgid_normalize(struct strbuf *out, const char *in);

/*
 * Appends the body `text` (clean, LF line ends) with CRLF line ends, and sets
 * *cte to "7bit" or "quoted-printable" (used when a line holds non-ASCII, is longer
 * than 998 octets, or holds a bare CR).
 */
void mime_body(struct strbuf *out, const char *text, const char **cte);
/*
 * Likewise; with `eightbit` (the server offers 8BITMIME) text whose only reason for
 * quoted-printable is non-ASCII is written as it is, *cte "8bit".
 */
void mime_body_ext(struct strbuf *out, const char *text, int eightbit, const char **cte);

/*
 * Appends `text` (clean, LF line ends) word-wrapped at `width` display columns:
 * each input line is refilled on its own; a word longer than the width (a URL)
 * stands alone on its line.  Every line ends with LF.
 */
void mime_wrap(struct strbuf *out, const char *text, size_t width);
/* Display columns of clean UTF-8 text (code points). */
size_t mime_columns(const char *s);

#endif
