/* Parsing kernel-style commit messages: subject, body, Signed-off-by, Message-ID. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "merge/trailer_int.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* Longest Message-ID we accept (RFC 5322 line limit). */
#define MSGID_MAX 998

/* Copies `msg` with CRLF and lone CR turned into LF. */
static char *normalise_newlines(const char *msg)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p;

	for (p = msg; *p; p++) {
		if (*p == '\r') {
			strbuf_addch(&sb, '\n');
			if (p[1] == '\n')
				p++;
		} else {
			strbuf_addch(&sb, *p);
		}
	}
	return strbuf_detach(&sb, NULL);
}

static int is_blank_line(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!isspace((unsigned char)s[i]))
			return 0;
	return 1;
}

/* Appends s[0..len) trimmed of ASCII white space. */
static void add_trimmed(struct strbuf *sb, const char *s, size_t len)
{
	while (len && isspace((unsigned char)*s)) {
		s++;
		len--;
	}
	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	strbuf_add(sb, s, len);
}

/*
 * If `line` (len bytes) is "Key: value" with Key equal to `key` ignoring case,
 * returns the value's start and sets *vlen; else NULL.
 */
static const char *trailer_value(const char *line, size_t len, const char *key,
				   size_t *vlen)
{
	size_t klen = strlen(key);

	if (len <= klen || strncasecmp(line, key, klen) || line[klen] != ':')
		return NULL;
	*vlen = len - klen - 1;
	return line + klen + 1;
}

/* A msgid: printable ASCII without spaces or angle brackets, with an '@'. */
static int msgid_valid(const char *s, size_t len)
{
	size_t i;
	int at = 0;

	if (!len || len > MSGID_MAX)
		return 0;
	for (i = 0; i < len; i++) {
		unsigned char c = s[i];

		if (c <= 0x20 || c >= 0x7f || c == '<' || c == '>')
			return 0;
		if (c == '@')
			at = 1;
	}
	return at;
}

/* Decodes %XX escapes of a URL path segment; NULL if the result is no msgid. */
static char *msgid_from_segment(const char *s, size_t len)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	for (i = 0; i < len; i++) {
		int hi, lo;

		if (s[i] == '%' && i + 2 < len && (hi = str_hexval(s[i + 1])) >= 0 &&
		    (lo = str_hexval(s[i + 2])) >= 0) {
			strbuf_addch(&sb, (char)(hi * 16 + lo));
			i += 2;
		} else {
			strbuf_addch(&sb, s[i]);
		}
	}
	if (!msgid_valid(sb.buf, sb.len) || strlen(sb.buf) != sb.len) {
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_detach(&sb, NULL);
}

/* The first path segment of a URL (after the host) that holds a msgid. */
static char *msgid_from_url(const char *url, size_t len)
{
	const char *end = url + len, *p, *seg;

	p = memchr(url, ':', len);
	if (!p || end - p < 3 || p[1] != '/' || p[2] != '/')
		return NULL;
	p += 3;
	while (p < end && *p != '/')
		p++; /* the host */
	while (p < end) {
		char *id;

		p++; /* the '/' */
		seg = p;
		while (p < end && *p != '/' && *p != '?' && *p != '#')
			p++;
		id = msgid_from_segment(seg, p - seg);
		if (id)
			return id;
		if (p < end && *p != '/')
			break;
	}
	return NULL;
}

static char *msgid_from_value(const char *v, size_t len)
{
	struct strbuf sb = STRBUF_INIT;
	char *id = NULL;

	add_trimmed(&sb, v, len);
	if (sb.len >= 2 && sb.buf[0] == '<' && sb.buf[sb.len - 1] == '>') {
		memmove(sb.buf, sb.buf + 1, sb.len - 2);
		strbuf_setlen(&sb, sb.len - 2);
	}
	if (strstr(sb.buf, "://"))
		id = msgid_from_url(sb.buf, sb.len);
	else if (msgid_valid(sb.buf, sb.len))
		id = xstrdup(sb.buf);
	strbuf_release(&sb);
	return id;
}

char *trailer_msgid_from_value(const char *value)
{
	if (!value)
		return NULL;
	return msgid_from_value(value, strlen(value));
}

/* Looks at one line of the body for the trailers we know. */
static void parse_trailer_line(struct trailer_info *out, const char *line, size_t len,
				 size_t *signoffs_alloc)
{
	const char *v;
	size_t vlen;
	char *id = NULL;

	if ((v = trailer_value(line, len, "Signed-off-by", &vlen))) {
		struct strbuf sb = STRBUF_INIT;

		add_trimmed(&sb, v, vlen);
		ALLOC_GROW(out->signoffs, out->signoffs_nr + 1, *signoffs_alloc);
		out->signoffs[out->signoffs_nr++] = strbuf_detach(&sb, NULL);
		return;
	}
	if ((v = trailer_value(line, len, "Link", &vlen)))
		id = msgid_from_value(v, vlen);
	else if ((v = trailer_value(line, len, "Message-ID", &vlen)))
		id = msgid_from_value(v, vlen);
	if (id) {
		free(out->message_id);
		out->message_id = id;
	}
}

static const char *skip_blank_lines(const char *p)
{
	while (*p) {
		const char *eol = strchrnul(p, '\n');

		if (!is_blank_line(p, eol - p))
			break;
		p = *eol ? eol + 1 : eol;
	}
	return p;
}

/* Subject: the first paragraph (after leading blank lines), lines joined. */
static const char *parse_subject(struct strbuf *subject, const char *p)
{
	p = skip_blank_lines(p);
	while (*p) {
		const char *eol = strchrnul(p, '\n');

		if (is_blank_line(p, eol - p))
			break;
		if (subject->len)
			strbuf_addch(subject, ' ');
		add_trimmed(subject, p, eol - p);
		p = *eol ? eol + 1 : eol;
	}
	return p;
}

void trailer_parse(struct trailer_info *out, const char *msg)
{
	struct strbuf subject = STRBUF_INIT, body = STRBUF_INIT;
	size_t signoffs_alloc = 0;
	char *text = normalise_newlines(msg ? msg : "");
	const char *p;

	trailer_info_release(out);
	p = parse_subject(&subject, text);
	p = skip_blank_lines(p);
	strbuf_addstr(&body, p);
	strbuf_rtrim(&body);
	if (body.len)
		strbuf_addch(&body, '\n');
	for (p = body.buf; *p;) {
		const char *eol = strchrnul(p, '\n');

		parse_trailer_line(out, p, eol - p, &signoffs_alloc);
		p = *eol ? eol + 1 : eol;
	}
	out->subject = strbuf_detach(&subject, NULL);
	out->body = strbuf_detach(&body, NULL);
	free(text);
}

void trailer_info_release(struct trailer_info *info)
{
	size_t i;

	free(info->subject);
	free(info->body);
	free(info->message_id);
	for (i = 0; i < info->signoffs_nr; i++)
		free(info->signoffs[i]);
	free(info->signoffs);
	memset(info, 0, sizeof(*info));
}

/* The address of a "Name <addr>" value, or the whole value. */
static void ident_address(struct strbuf *out, const char *v)
{
	const char *lt = strrchr(v, '<'), *gt;

	if (lt && (gt = strchr(lt, '>')))
		add_trimmed(out, lt + 1, gt - lt - 1);
	else
		add_trimmed(out, v, strlen(v));
}

int trailer_has_signoff(const char *msg, const char *author_email)
{
	struct trailer_info info = TRAILER_INFO_INIT;
	struct strbuf want = STRBUF_INIT, addr = STRBUF_INIT;
	size_t i;
	int found = 0;

	if (!author_email)
		return 0;
	add_trimmed(&want, author_email, strlen(author_email));
	if (!want.len)
		goto done;
	trailer_parse(&info, msg);
	for (i = 0; i < info.signoffs_nr && !found; i++) {
		strbuf_reset(&addr);
		ident_address(&addr, info.signoffs[i]);
		found = addr.len == want.len && !strcasecmp(addr.buf, want.buf);
	}
done:
	trailer_info_release(&info);
	strbuf_release(&want);
	strbuf_release(&addr);
	return found;
}
