/* UTF-8 validation and repair, charset conversion through iconv, controls made harmless. */
#include <errno.h>
#include <iconv.h>
#include <string.h>
#include <strings.h>

#include "util/utf8.h"
#include "util/banned.h"

static const char replacement[] = "\xEF\xBF\xBD"; /* U+FFFD */

/*
 * Length of the valid UTF-8 sequence at s[0..len), or 0 if the first byte does not
 * start one: overlongs, surrogates, values past U+10FFFF and truncated sequences all
 * count as invalid.  The second-byte ranges are those of RFC 3629's table.
 */
static size_t seq_len(const unsigned char *s, size_t len)
{
	unsigned char lo = 0x80, hi = 0xBF;
	size_t n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xC2 && s[0] <= 0xDF)
		n = 2;
	else if (s[0] >= 0xE0 && s[0] <= 0xEF)
		n = 3;
	else if (s[0] >= 0xF0 && s[0] <= 0xF4)
		n = 4;
	else
		return 0;
	if (s[0] == 0xE0)
		lo = 0xA0; /* overlong */
	else if (s[0] == 0xED)
		hi = 0x9F; /* surrogates */
	else if (s[0] == 0xF0)
		lo = 0x90; /* overlong */
	else if (s[0] == 0xF4)
		hi = 0x8F; /* past U+10FFFF */
	if (len < 2 || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (i >= len || s[i] < 0x80 || s[i] > 0xBF)
			return 0;
	return n;
}

int utf8_is_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < len) {
		size_t n = seq_len(p + i, len - i);

		if (!n)
			return 0;
		i += n;
	}
	return 1;
}

void utf8_repair(struct strbuf *out, const char *in, size_t len)
{
	const unsigned char *p = (const unsigned char *)in;
	size_t i = 0, run = 0;

	strbuf_grow(out, len);
	while (i < len) {
		size_t n = seq_len(p + i, len - i);

		if (n) {
			i += n;
			continue;
		}
		strbuf_add(out, in + run, i - run);
		strbuf_add(out, replacement, 3);
		run = ++i;
	}
	strbuf_add(out, in + run, len - run);
}

static int is_utf8_name(const char *charset)
{
	return !charset || !*charset || !strcasecmp(charset, "UTF-8") ||
	       !strcasecmp(charset, "UTF8");
}

/* Converts with iconv; returns -1 (nothing appended) if the charset is unknown. */
static int iconv_append(struct strbuf *out, const char *in, size_t len, const char *charset)
{
	iconv_t cd = iconv_open("UTF-8", charset);
	struct strbuf conv = STRBUF_INIT;
	char *src = (char *)in;
	size_t left = len;

	if (cd == (iconv_t)-1)
		return -1;
	while (left) {
		char *dst;
		size_t room, r;

		strbuf_grow(&conv, left * 4 + 16);
		dst = conv.buf + conv.len;
		room = conv.alloc - conv.len - 1;
		r = iconv(cd, &src, &left, &dst, &room);
		conv.len = (size_t)(dst - conv.buf);
		conv.buf[conv.len] = 0;
		if (r != (size_t)-1 || errno == E2BIG)
			continue;
		/* An invalid or truncated sequence: one replacement character, skip a byte. */
		strbuf_add(&conv, replacement, 3);
		src++;
		left--;
		iconv(cd, NULL, NULL, NULL, NULL);
	}
	/* Flush any shift state. */
	{
		char *dst;
		size_t room;

		strbuf_grow(&conv, 16);
		dst = conv.buf + conv.len;
		room = conv.alloc - conv.len - 1;
		iconv(cd, NULL, NULL, &dst, &room);
		conv.len = (size_t)(dst - conv.buf);
		conv.buf[conv.len] = 0;
	}
	iconv_close(cd);
	/* Belt and braces: whatever iconv produced is checked again. */
	utf8_repair(out, conv.buf, conv.len);
	strbuf_release(&conv);
	return 0;
}

void utf8_from_charset(struct strbuf *out, const char *in, size_t len, const char *charset)
{
	if (is_utf8_name(charset) || iconv_append(out, in, len, charset) < 0)
		utf8_repair(out, in, len);
}

/* The code point of the valid n-byte sequence at s. */
static unsigned decode(const unsigned char *s, size_t n)
{
	static const unsigned char lead_bits[5] = { 0, 0x7F, 0x1F, 0x0F, 0x07 };
	unsigned cp = s[0] & lead_bits[n];
	size_t i;

	for (i = 1; i < n; i++)
		cp = cp << 6 | (s[i] & 0x3F);
	return cp;
}

/*
 * The invisible characters that change the order in which text is shown (bidi
 * embeddings, overrides, isolates and marks, the Arabic letter mark): a subject can
 * use them to read as something it is not ("Trojan Source", CVE-2021-42574).  ZWJ
 * and ZWNJ (U+200D, U+200C) only join or part letters, and Persian and Indic names
 * need them: they stay.
 */
static int is_bidi(unsigned cp)
{
	return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) ||
	       cp == 0x200E || cp == 0x200F || cp == 0x061C;
}

/*
 * The one place that decides what of a text from strangers may be shown: C0 controls
 * (but LF and TAB with keep_lines), DEL and C1 controls become a space, a bidi
 * control becomes the six characters "\u202e", everything else stays.  `in` is valid
 * UTF-8 (an invalid byte is copied as it is: the callers repair first).
 */
static void add_showable(struct strbuf *out, const char *in, size_t len, int keep_lines)
{
	const unsigned char *p = (const unsigned char *)in;
	size_t i = 0;

	strbuf_grow(out, len);
	while (i < len) {
		size_t n = seq_len(p + i, len - i);
		unsigned cp = n > 1 ? decode(p + i, n) : p[i];

		if (!n) /* not UTF-8: copied as it is */
			n = 1;
		if (keep_lines && (cp == '\n' || cp == '\t'))
			strbuf_addch(out, (char)cp);
		else if (cp < 0x20 || cp == 0x7F || (n == 2 && cp <= 0x9F)) /* C0, DEL, C1 */
			strbuf_addch(out, ' ');
		else if (is_bidi(cp))
			strbuf_addf(out, "\\u%04x", cp);
		else
			strbuf_add(out, in + i, n);
		i += n;
	}
}

void utf8_strip_controls(struct strbuf *sb)
{
	struct strbuf shown = STRBUF_INIT;

	add_showable(&shown, sb->buf, sb->len, 0);
	strbuf_reset(sb);
	strbuf_addbuf(sb, &shown);
	strbuf_release(&shown);
}

void utf8_clean_text(struct strbuf *out, const char *in, size_t len)
{
	struct strbuf sb = STRBUF_INIT;

	utf8_repair(&sb, in, len);
	add_showable(out, sb.buf, sb.len, 1);
	strbuf_release(&sb);
}

char *utf8_clean_dup(const char *s)
{
	struct strbuf sb = STRBUF_INIT;

	if (!s)
		return NULL;
	utf8_clean_text(&sb, s, strlen(s));
	return strbuf_detach(&sb, NULL);
}
