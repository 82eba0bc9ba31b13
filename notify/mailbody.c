/* Inbound mail: a stranger's text (MIME parts, encodings, charsets) and its command lines. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "notify/inbox.h"
#include "notify/mailparse.h"
#include "notify/mime.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define MIME_DEPTH_MAX 8
#define MIME_PARTS_MAX 200 /* parts looked at in the whole message */
#define COMMAND_MAX 1000   /* bytes kept of one command line */

/* What the walk over the parts found: the first text/plain, else the first text/html. */
struct pick {
	struct strbuf plain, html;
	int have_plain, have_html;
	int parts;
	int truncated;
};

/* Quoted-printable (RFC 2045): soft line breaks, "=XX"; anything else stays as it is. */
static void qp_decode(struct strbuf *out, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int hi, lo;

		if (s[i] != '=') {
			strbuf_addch(out, s[i]);
			continue;
		}
		if (i + 2 < n && (hi = str_hexval(s[i + 1])) >= 0 &&
		    (lo = str_hexval(s[i + 2])) >= 0) {
			strbuf_addch(out, hi << 4 | lo);
			i += 2;
			continue;
		}
		{ /* "=" then blanks to the end of the line: a soft break */
			size_t j = i + 1;

			while (j < n && (s[j] == ' ' || s[j] == '\t'))
				j++;
			if (j < n && s[j] == '\r')
				j++;
			if (j == n || s[j] == '\n') {
				i = j;
				continue;
			}
		}
		strbuf_addch(out, '=');
	}
}

static void decode_cte(struct strbuf *out, const char *cte, const char *s, size_t n)
{
	char *enc = NULL;

	if (cte) {
		size_t k;

		while (*cte == ' ' || *cte == '\t')
			cte++;
		k = strcspn(cte, " \t;(");
		enc = xstrndup(cte, k);
	}
	if (enc && !strcasecmp(enc, "base64"))
		mail_base64_decode(out, s, n);
	else if (enc && !strcasecmp(enc, "quoted-printable"))
		qp_decode(out, s, n);
	else
		strbuf_add(out, s, n);
	free(enc);
}

/* RFC 3676: a line ending in a space goes on in the next line (same quote depth). */
static void unflow(struct strbuf *out, const char *text, int delsp)
{
	const char *p = text;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		int soft = n && p[n - 1] == ' ' && !(n == 3 && !memcmp(p, "-- ", 3));
		size_t depth = strspn(p, ">");

		strbuf_add(out, p, soft && delsp ? n - 1 : n);
		p += n + (nl ? 1 : 0);
		if (!nl)
			break;
		if (!soft || strspn(p, ">") != depth || !*p)
			strbuf_addch(out, '\n');
		else
			p += depth + (depth && p[depth] == ' ' ? 1 : 0);
	}
}

static int tag_is(const char *tag, size_t n, const char *name)
{
	size_t k = strlen(name);

	return n >= k && !strncasecmp(tag, name, k) &&
	       (n == k || tag[k] == ' ' || tag[k] == '/' || tag[k] == '\t' || tag[k] == '\n' ||
		tag[k] == '\r');
}

static void html_entity(struct strbuf *out, const char **pp)
{
	static const struct {
		const char *name, *text;
	} named[] = { { "amp;", "&" },	{ "lt;", "<" },	   { "gt;", ">" },
		      { "quot;", "\"" }, { "apos;", "'" }, { "nbsp;", " " } };
	const char *p = *pp + 1;
	size_t i;

	for (i = 0; i < sizeof(named) / sizeof(*named); i++) {
		if (!strncasecmp(p, named[i].name, strlen(named[i].name))) {
			strbuf_addstr(out, named[i].text);
			*pp = p + strlen(named[i].name);
			return;
		}
	}
	if (*p == '#') {
		int hex = p[1] == 'x' || p[1] == 'X';
		const char *d = p + 1 + hex;
		unsigned long v = strtoul(d, (char **)&p, hex ? 16 : 10);

		if (p > d && *p == ';' && v >= 32 && v < 0x110000 && (v < 0xd800 || v > 0xdfff)) {
			if (v < 0x80) {
				strbuf_addch(out, (int)v);
			} else if (v < 0x800) {
				strbuf_addch(out, (int)(0xc0 | v >> 6));
				strbuf_addch(out, (int)(0x80 | (v & 0x3f)));
			} else if (v < 0x10000) {
				strbuf_addch(out, (int)(0xe0 | v >> 12));
				strbuf_addch(out, (int)(0x80 | (v >> 6 & 0x3f)));
				strbuf_addch(out, (int)(0x80 | (v & 0x3f)));
			} else {
				strbuf_addch(out, (int)(0xf0 | v >> 18));
				strbuf_addch(out, (int)(0x80 | (v >> 12 & 0x3f)));
				strbuf_addch(out, (int)(0x80 | (v >> 6 & 0x3f)));
				strbuf_addch(out, (int)(0x80 | (v & 0x3f)));
			}
			*pp = p + 1;
			return;
		}
	}
	strbuf_addch(out, '&');
	*pp += 1;
}

/*
 * A mail client's HTML as plain text, for messages without a text/plain part: tags
 * dropped, block ends made line breaks, quoted text (<blockquote>) and scripts and
 * styles left out, the common entities decoded.
 */
static void html_to_plain(struct strbuf *out, const char *s)
{
	int quote = 0, skip = 0;

	while (*s) {
		const char *gt;
		size_t n;
		int close;

		if (*s == '&') {
			if (!quote && !skip)
				html_entity(out, &s);
			else
				s++;
			continue;
		}
		if (*s != '<') {
			if (!quote && !skip)
				strbuf_addch(out, *s == '\n' || *s == '\r' ? ' ' : *s);
			s++;
			continue;
		}
		if (!strncmp(s, "<!--", 4)) {
			const char *e = strstr(s + 4, "-->");

			s = e ? e + 3 : s + strlen(s);
			continue;
		}
		gt = strchr(s, '>');
		if (!gt)
			break;
		close = s[1] == '/';
		s += 1 + close;
		n = (size_t)(gt - s);
		if (tag_is(s, n, "blockquote"))
			quote += close ? (quote > 0 ? -1 : 0) : 1;
		else if (tag_is(s, n, "script") || tag_is(s, n, "style") || tag_is(s, n, "head"))
			skip += close ? (skip > 0 ? -1 : 0) : 1;
		else if (!quote && !skip &&
			 (tag_is(s, n, "br") || tag_is(s, n, "p") || tag_is(s, n, "div") ||
			  tag_is(s, n, "li") || tag_is(s, n, "tr") || tag_is(s, n, "pre")))
			strbuf_addch(out, '\n');
		s = gt + 1;
	}
}

/* A leaf part: decoded, converted to UTF-8 and kept when it is the text we want. */
static void leaf(struct pick *pk, const struct mail_ctype *ct, const char *cte, const char *s,
		 size_t n)
{
	struct strbuf raw = STRBUF_INIT, text = STRBUF_INIT;
	int plain = !strcmp(ct->type, "text/plain");
	size_t i;

	if ((plain && pk->have_plain) || (!plain && (pk->have_html || pk->have_plain)) ||
	    (!plain && strcmp(ct->type, "text/html")))
		return;
	decode_cte(&raw, cte, s, n);
	if (raw.len > INBOX_BODY_MAX) {
		strbuf_setlen(&raw, INBOX_BODY_MAX);
		pk->truncated = 1;
	}
	for (i = 0; i < raw.len; i++)
		if (!raw.buf[i])
			raw.buf[i] = ' ';
	utf8_from_charset(&text, raw.buf, raw.len, mail_charset_safe(ct->charset));
	if (plain) {
		if (ct->flowed) {
			strbuf_reset(&raw);
			mime_clean_text(&raw, text.buf); /* LF line ends first */
			unflow(&pk->plain, raw.buf, ct->delsp);
		} else {
			strbuf_addbuf(&pk->plain, &text);
		}
		pk->have_plain = 1;
	} else {
		html_to_plain(&pk->html, text.buf);
		pk->have_html = 1;
	}
	strbuf_release(&raw);
	strbuf_release(&text);
}

static void pick_from_part(struct pick *pk, struct inbox_mail *m, const struct mail_fields *f,
			   const char *body, size_t len, int depth, const char *dflt);

/* The parts of a multipart body between its "--boundary" lines. */
static void multipart(struct pick *pk, struct inbox_mail *m, const char *boundary,
		      const char *body, size_t len, int depth, const char *dflt)
{
	const char *p = body, *end = body + len, *part = NULL;
	size_t blen = strlen(boundary);

	while (p < end && pk->parts < MIME_PARTS_MAX) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end, *next = nl ? nl + 1 : end, *rest;
		int closing;

		if ((size_t)(eol - p) < 2 + blen || p[0] != '-' || p[1] != '-' ||
		    memcmp(p + 2, boundary, blen)) {
			p = next;
			continue;
		}
		rest = p + 2 + blen;
		closing = eol - rest >= 2 && rest[0] == '-' && rest[1] == '-';
		if (closing)
			rest += 2;
		while (rest < eol && (*rest == ' ' || *rest == '\t' || *rest == '\r'))
			rest++;
		if (rest != eol) { /* a longer boundary of a nested part */
			p = next;
			continue;
		}
		if (part) {
			const char *pe = p;

			if (pe > part && pe[-1] == '\n')
				pe--;
			if (pe > part && pe[-1] == '\r')
				pe--;
			pk->parts++;
			{
				struct mail_fields pf = MAIL_FIELDS_INIT;
				int bad;
				const char *pb = mail_fields_parse(&pf, part, pe, &bad);

				pick_from_part(pk, m, &pf, pb, (size_t)(pe - pb), depth + 1, dflt);
				mail_fields_release(&pf);
			}
		}
		if (closing)
			return;
		part = next;
		p = next;
	}
	if (part && part < end && pk->parts < MIME_PARTS_MAX) { /* cut off: no closing line */
		struct mail_fields pf = MAIL_FIELDS_INIT;
		int bad;
		const char *pb = mail_fields_parse(&pf, part, end, &bad);

		pk->parts++;
		pick_from_part(pk, m, &pf, pb, (size_t)(end - pb), depth + 1, dflt);
		mail_fields_release(&pf);
	}
}

static void pick_from_part(struct pick *pk, struct inbox_mail *m, const struct mail_fields *f,
			   const char *body, size_t len, int depth, const char *dflt)
{
	const char *disp = mail_fields_get(f->v, f->nr, "Content-Disposition");
	struct mail_ctype ct;

	mail_ctype_parse(&ct, mail_fields_get(f->v, f->nr, "Content-Type"), dflt);
	if (!strncmp(ct.type, "multipart/", 10)) {
		if (!depth && !strcmp(ct.type, "multipart/report"))
			m->is_report = 1;
		if (ct.boundary && depth < MIME_DEPTH_MAX)
			multipart(pk, m, ct.boundary, body, len, depth,
				  !strcmp(ct.type, "multipart/digest") ? "message/rfc822"
								       : "text/plain");
	} else if (!disp || strncasecmp(disp + strspn(disp, " \t"), "attachment", 10)) {
		/* a forwarded message/rfc822 is not the sender's own text: never descended */
		leaf(pk, &ct, mail_fields_get(f->v, f->nr, "Content-Transfer-Encoding"), body, len);
	}
	mail_ctype_release(&ct);
}

void mail_body_text(struct inbox_mail *m, const struct mail_fields *top, const char *body,
		    size_t len)
{
	struct pick pk = { STRBUF_INIT, STRBUF_INIT, 0, 0, 0, 0 };
	struct strbuf clean = STRBUF_INIT;
	const struct strbuf *text;

	pick_from_part(&pk, m, top, body, len, 0, "text/plain");
	text = pk.have_plain ? &pk.plain : &pk.html;
	mime_clean_text(&clean, text->buf);
	free(m->body);
	m->body = strbuf_detach(&clean, NULL);
	m->truncated |= pk.truncated;
	strbuf_release(&pk.plain);
	strbuf_release(&pk.html);
}

/* ---- command lines ---- */

/*
 * An attribution line ("On Mon, 7 Dec 2026, Ann wrote:", "Ann <a@x> writes:", and
 * the common translations): what follows it is someone else's text, quoted with '>'
 * or only indented.  t[0..n) is the line without its leading blanks.
 */
static int attribution(const char *t, size_t n)
{
	static const char *const ends[] = { "wrote:", "writes:", "schrieb:", "a écrit :",
					    "a écrit:", "escribió:", "scrisse:", "napisał:" };
	size_t i, k;

	while (n && (t[n - 1] == ' ' || t[n - 1] == '\t' || t[n - 1] == '\r'))
		n--;
	for (i = 0; i < sizeof(ends) / sizeof(*ends); i++) {
		k = strlen(ends[i]);
		if (n > k && !strncasecmp(t + n - k, ends[i], k) &&
		    (t[n - k - 1] == ' ' || t[n - k - 1] == '\t'))
			return 1;
	}
	return 0;
}

/*
 * Where the sender's own text ends: a signature, or the original below a top-posted
 * answer.  p[0..n) is the line, t..e the same without its leading blanks.
 */
static int body_ends(const char *p, size_t n, const char *t, const char *e)
{
	return (n == 3 && !memcmp(p, "-- ", 3)) || (n == 2 && !memcmp(p, "--", 2)) ||
	       (e - t >= 26 && !strncasecmp(t, "-----Original Message-----", 26));
}

/*
 * Whether the line p..e (t: past its blanks) is someone else's: in the indented quote
 * after an attribution line, which lasts while its lines are blank or indented, or
 * that attribution line itself (never one the caller says is its own, `own`).
 */
static int quoted_line(int *quoted, const char *p, const char *t, const char *e, int own)
{
	if (*quoted && t < e && t == p)
		*quoted = 0;
	if (!*quoted && !own && t < e && *t != '>' && attribution(t, (size_t)(e - t)))
		*quoted = 1;
	return *quoted;
}

size_t inbox_mail_commands(struct strvec *out, const char *body, size_t max)
{
	const char *p = body ? body : "";
	size_t found = 0;
	int quoted = 0; /* in the indented lines after an attribution line */

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		const char *t = p, *e = p + n;

		while (t < e && (*t == ' ' || *t == '\t'))
			t++;
		if (body_ends(p, n, t, e))
			break;
		if (!quoted_line(&quoted, p, t, e, !strncasecmp(t, "#nextbot", 8)) && e - t >= 8 &&
		    !strncasecmp(t, "#nextbot", 8) &&
		    (e - t == 8 || t[8] == ' ' || t[8] == '\t' || t[8] == ':')) {
			struct strbuf raw = STRBUF_INIT, clean = STRBUF_INIT;
			/* "#nextbot:" too: a colon after the word is a common way to write it */
			size_t word = 8 + (e - t > 8 && t[8] == ':');
			size_t k = (size_t)(e - t) - word;

			if (k > COMMAND_MAX)
				k = COMMAND_MAX;
			strbuf_add(&raw, t + word, k);
			mime_clean_line(&clean, raw.buf);
			if (found++ < max)
				strvec_push(out, clean.buf);
			strbuf_release(&raw);
			strbuf_release(&clean);
		}
		p = nl ? nl + 1 : p + n;
	}
	return found;
}

/* "Reviewed-by: Name <addr>" (a key ending in "-by"): the key into *key, the address. */
static int by_trailer(struct strbuf *key, struct strbuf *addr, const char *t, size_t n)
{
	size_t k = 0;
	const char *lt, *gt, *v;

	while (k < n && (isalnum((unsigned char)t[k]) || t[k] == '-'))
		k++;
	if (k < 4 || k >= n || t[k] != ':' || strncasecmp(t + k - 3, "-by", 3))
		return 0;
	v = t + k + 1;
	lt = memchr(v, '<', n - k - 1);
	gt = lt ? memchr(lt, '>', (size_t)(t + n - lt)) : NULL;
	if (!lt || !gt || !memchr(lt, '@', (size_t)(gt - lt)))
		return 0;
	strbuf_reset(key);
	strbuf_reset(addr);
	strbuf_add(key, t, k);
	strbuf_add(addr, lt + 1, (size_t)(gt - lt - 1));
	strbuf_trim(addr);
	return addr->len > 0;
}

size_t inbox_mail_trailers(struct strvec *keys, struct strvec *addrs, const char *body)
{
	struct strbuf key = STRBUF_INIT, addr = STRBUF_INIT;
	const char *p = body ? body : "";
	size_t found = 0;
	int quoted = 0;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		const char *t = p, *e = p + n;

		while (t < e && (*t == ' ' || *t == '\t'))
			t++;
		if (body_ends(p, n, t, e))
			break;
		if (!quoted_line(&quoted, p, t, e, 0) && t == p &&
		    by_trailer(&key, &addr, t, (size_t)(e - t)) &&
		    found++ < 20) {
			strvec_push(keys, key.buf);
			strvec_push(addrs, addr.buf);
		}
		p = nl ? nl + 1 : p + n;
	}
	strbuf_release(&key);
	strbuf_release(&addr);
	return found;
}

/* The whole message: its header (mailparse.c), then its body's text. */
int inbox_mail_parse(struct inbox_mail *out, const char *raw, size_t len)
{
	struct mail_fields fields = MAIL_FIELDS_INIT;
	const char *body = NULL;
	size_t body_len = 0;
	int ret = mail_head_parse(out, &fields, raw, len, &body, &body_len);

	if (ret == 0)
		mail_body_text(out, &fields, body, body_len);
	if (!out->body)
		out->body = xstrdup("");
	return ret;
}
