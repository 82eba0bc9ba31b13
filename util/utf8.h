/* Text from strangers: valid UTF-8, no control characters where they do harm. */
#ifndef UTIL_UTF8_H
#define UTIL_UTF8_H

#include <stddef.h>
#include "util/strbuf.h"

/* 1 if `s[0..len)` is valid UTF-8 (no overlongs, no surrogates, <= U+10FFFF). */
int utf8_is_valid(const char *s, size_t len);
/* Appends `in` to `out` as valid UTF-8: each invalid byte becomes U+FFFD. */
void utf8_repair(struct strbuf *out, const char *in, size_t len);
/*
 * Appends `in`, written in `charset` (a commit's `encoding` header; NULL or
 * "UTF-8" means UTF-8), to `out` as valid UTF-8, through iconv; bytes that do not
 * convert are repaired as utf8_repair() does.
 */
void utf8_from_charset(struct strbuf *out, const char *in, size_t len, const char *charset);
/*
 * Replaces every C0 control character (CR, LF and TAB included), DEL and C1
 * controls (U+0080..U+009F) in `sb` with a space, and shows every bidi control
 * (U+202A..U+202E, U+2066..U+2069, U+200E, U+200F, U+061C) as the six characters
 * "\u202e" (its code point): for one-line values such as names and subjects that
 * end up in mail headers.  ZWJ and ZWNJ stay.  `sb` is valid UTF-8.
 */
void utf8_strip_controls(struct strbuf *sb);

/*
 * Appends text from strangers (build output, commit subjects, file names in a
 * merge log) as it may be stored and printed: valid UTF-8 (utf8_repair()), and no
 * control character but LF and TAB, so no terminal escape (ESC, OSC, BEL, CR) is
 * left to act on whoever reads it; each other control becomes a space, and each
 * bidi control shows as "\u202e", so no text reads in an order it is not stored in
 * (terminal, JSON, HTML, mail and webhooks all get what these two functions give).
 */
void utf8_clean_text(struct strbuf *out, const char *in, size_t len);
/* The same as a new string (caller frees); NULL for NULL. */
char *utf8_clean_dup(const char *s);

#endif
