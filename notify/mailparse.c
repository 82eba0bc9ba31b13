/* Inbound mail: header fields, addresses, Message-IDs and RFC 2047 words from strangers. */
#include <ctype.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "notify/inbox.h"
#include "notify/mailparse.h"
#include "notify/mime.h"
#include "util/error.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define REFERENCES_KEPT 50 /* of each end of a long References: field */
#define RECIPIENTS_MAX 100
#define WORD_TEXT_MAX 300  /* bytes of one encoded word's text (RFC 2047 allows 75) */

/* ---- header fields ---- */

static void field_append(struct strbuf *sb, const char *p, size_t n)
{
	size_t i;

	if (sb->len >= MAIL_FIELD_MAX)
		return;
	if (n > MAIL_FIELD_MAX - sb->len)
		n = MAIL_FIELD_MAX - sb->len;
	for (i = 0; i < n; i++)
		strbuf_addch(sb, p[i] == '\0' || p[i] == '\r' || p[i] == '\n' ? ' ' : p[i]);
}

static void field_flush(struct mail_fields *out, char **name, struct strbuf *val)
{
	struct inbox_header *h;

	if (!*name)
		return;
	if (out->nr >= MAIL_FIELDS_MAX) {
		free(*name);
		*name = NULL;
		return;
	}
	strbuf_trim(val);
	ALLOC_GROW(out->v, out->nr + 1, out->alloc);
	h = &out->v[out->nr++];
	h->name = *name;
	h->value = xstrdup(val->buf);
	*name = NULL;
}

static int name_ok(const char *p, size_t n)
{
	size_t i;

	if (!n)
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)p[i] <= ' ' || (unsigned char)p[i] >= 127 || p[i] == ':')
			return 0;
	return 1;
}

const char *mail_fields_parse(struct mail_fields *out, const char *p, const char *end,
			      int *first_bad)
{
	struct strbuf val = STRBUF_INIT;
	char *name = NULL;
	int any = 0;

	*first_bad = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end, *next = nl ? nl + 1 : end, *colon;
		size_t n = (size_t)(eol - p), name_len;

		if (n && p[n - 1] == '\r')
			n--;
		if (!n) { /* the empty line: the body follows it */
			p = next;
			break;
		}
		if (*p == ' ' || *p == '\t') {
			if (!any) {
				*first_bad = 1;
				break;
			}
			field_append(&val, p, n);
			p = next;
			continue;
		}
		colon = memchr(p, ':', n);
		name_len = colon ? (size_t)(colon - p) : 0;
		while (name_len && (p[name_len - 1] == ' ' || p[name_len - 1] == '\t'))
			name_len--; /* obsolete syntax: "Subject :" */
		if (!colon || !name_ok(p, name_len)) {
			*first_bad = !any; /* not a field: the body starts on this line */
			break;
		}
		field_flush(out, &name, &val);
		name = xstrndup(p, name_len);
		strbuf_reset(&val);
		field_append(&val, colon + 1, n - (size_t)(colon + 1 - p));
		any = 1;
		p = next;
	}
	field_flush(out, &name, &val);
	strbuf_release(&val);
	return p;
}

void mail_fields_release(struct mail_fields *f)
{
	size_t i;

	for (i = 0; i < f->nr; i++) {
		free(f->v[i].name);
		free(f->v[i].value);
	}
	free(f->v);
	memset(f, 0, sizeof(*f));
}

const char *mail_fields_get(const struct inbox_header *v, size_t nr, const char *name)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (!strcasecmp(v[i].name, name))
			return v[i].value;
	return NULL;
}

const char *inbox_mail_header(const struct inbox_mail *m, const char *name)
{
	return mail_fields_get(m->headers, m->headers_nr, name);
}

/* ---- structured field text: comments, quoted strings, parameters ---- */

/* Skips a comment starting at *p == '(' (nested, with quoted pairs); appends its text. */
static const char *skip_comment(const char *p, struct strbuf *text)
{
	int depth = 0;

	for (; *p; p++) {
		if (*p == '\\' && p[1]) {
			p++;
		} else if (*p == '(') {
			if (depth++ == 0)
				continue;
		} else if (*p == ')') {
			if (--depth == 0)
				return p + 1;
		}
		if (text && depth)
			strbuf_addch(text, *p);
	}
	return p;
}

/* Skips a quoted string starting at *p == '"'; appends its content (pairs resolved). */
static const char *skip_quoted(const char *p, struct strbuf *text)
{
	for (p++; *p && *p != '"'; p++) {
		if (*p == '\\' && p[1])
			p++;
		if (text)
			strbuf_addch(text, *p);
	}
	return *p ? p + 1 : p;
}

/* The field without its comments; quoted strings kept as they are. */
void mail_strip_comments(struct strbuf *out, const char *in)
{
	while (*in) {
		if (*in == '(') {
			in = skip_comment(in, NULL);
			strbuf_addch(out, ' ');
		} else if (*in == '"') {
			const char *q = skip_quoted(in, NULL);

			strbuf_add(out, in, (size_t)(q - in));
			in = q;
		} else {
			strbuf_addch(out, *in++);
		}
	}
}

static void lower(char *s)
{
	for (; *s; s++)
		*s = (char)tolower((unsigned char)*s);
}

/* A parameter value: trimmed, unquoted. */
char *mail_param_value(const char *p, size_t n)
{
	struct strbuf sb = STRBUF_INIT;

	while (n && (*p == ' ' || *p == '\t'))
		p++, n--;
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	if (n >= 1 && *p == '"') {
		struct strbuf raw = STRBUF_INIT;

		strbuf_add(&raw, p, n);
		skip_quoted(raw.buf, &sb);
		strbuf_release(&raw);
	} else {
		strbuf_add(&sb, p, n);
	}
	return strbuf_detach(&sb, NULL);
}

/* Splits s at `sep` outside quoted strings, calling fn on each piece. */
void mail_split_unquoted(const char *s, int sep,
			 void (*fn)(const char *p, size_t n, void *data), void *data)
{
	const char *start = s;

	for (;;) {
		if (*s == '"') {
			s = skip_quoted(s, NULL);
			continue;
		}
		if (*s == sep || !*s) {
			fn(start, (size_t)(s - start), data);
			if (!*s)
				return;
			start = ++s;
			continue;
		}
		s++;
	}
}

struct ctype_parse {
	struct mail_ctype *ct;
	int first;
};

static void ctype_piece(const char *p, size_t n, void *data)
{
	struct ctype_parse *cp = data;
	const char *eq;
	char *name, *val;

	if (cp->first) {
		cp->first = 0;
		cp->ct->type = mail_param_value(p, n);
		lower(cp->ct->type);
		return;
	}
	eq = memchr(p, '=', n);
	if (!eq)
		return;
	name = mail_param_value(p, (size_t)(eq - p));
	val = mail_param_value(eq + 1, n - (size_t)(eq + 1 - p));
	lower(name);
	if (!strcmp(name, "boundary") && !cp->ct->boundary && *val && strlen(val) <= 200) {
		cp->ct->boundary = val;
		val = NULL;
	} else if (!strcmp(name, "charset") && !cp->ct->charset) {
		lower(val);
		cp->ct->charset = val;
		val = NULL;
	} else if (!strcmp(name, "format")) {
		cp->ct->flowed = !strcasecmp(val, "flowed");
	} else if (!strcmp(name, "delsp")) {
		cp->ct->delsp = !strcasecmp(val, "yes");
	}
	free(name);
	free(val);
}

void mail_ctype_parse(struct mail_ctype *out, const char *value, const char *dflt)
{
	struct strbuf sb = STRBUF_INIT;
	struct ctype_parse cp = { out, 1 };

	memset(out, 0, sizeof(*out));
	if (value) {
		mail_strip_comments(&sb, value);
		mail_split_unquoted(sb.buf, ';', ctype_piece, &cp);
	}
	/* RFC 2045: a syntactically wrong type is taken as the default */
	if (!out->type || !strchr(out->type, '/') || strchr(out->type, ' ')) {
		free(out->type);
		out->type = xstrdup(dflt);
	}
	strbuf_release(&sb);
}

void mail_ctype_release(struct mail_ctype *ct)
{
	free(ct->type);
	free(ct->boundary);
	free(ct->charset);
	memset(ct, 0, sizeof(*ct));
}

const char *mail_charset_safe(const char *charset)
{
	const char *p;

	/* glibc's iconv_open looks names up itself: never hand it a stranger's path */
	if (!charset || !*charset || strlen(charset) > 40)
		return NULL;
	for (p = charset; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("-_.:+", *p))
			return NULL;
	return charset;
}

/* ---- RFC 2047 ---- */

void mail_base64_decode(struct strbuf *out, const char *s, size_t n)
{
	unsigned acc = 0;
	int bits = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		int c = (unsigned char)s[i], v;

		if (c >= 'A' && c <= 'Z')
			v = c - 'A';
		else if (c >= 'a' && c <= 'z')
			v = c - 'a' + 26;
		else if (c >= '0' && c <= '9')
			v = c - '0' + 52;
		else if (c == '+' || c == '-')
			v = 62;
		else if (c == '/' || c == '_')
			v = 63;
		else
			continue; /* padding, line breaks and junk */
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			strbuf_addch(out, (int)((acc >> bits) & 0xff));
		}
	}
}

/* "=XX" and '_' of an encoded word's Q text. */
static void q_decode(struct strbuf *out, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int hi, lo;

		if (s[i] == '_') {
			strbuf_addch(out, ' ');
		} else if (s[i] == '=' && i + 2 < n && (hi = str_hexval(s[i + 1])) >= 0 &&
			   (lo = str_hexval(s[i + 2])) >= 0) {
			strbuf_addch(out, hi << 4 | lo);
			i += 2;
		} else {
			strbuf_addch(out, s[i]);
		}
	}
}

/*
 * An encoded word "=?charset[*lang]?B|Q?text?=" at p: appends it decoded to UTF-8
 * and returns what follows it, or NULL when p does not start one.
 */
static const char *encoded_word(struct strbuf *out, const char *p)
{
	const char *cs = p + 2, *q1, *q2, *text, *stop;
	struct strbuf bytes = STRBUF_INIT;
	char *charset, *star;
	int enc;
	size_t i;

	q1 = strchr(cs, '?');
	if (!q1 || q1 == cs || q1 - cs > 64 || memchr(cs, ' ', (size_t)(q1 - cs)))
		return NULL;
	enc = toupper((unsigned char)q1[1]);
	if ((enc != 'B' && enc != 'Q') || q1[2] != '?')
		return NULL;
	text = q1 + 3;
	for (q2 = text; *q2 && q2 - text <= WORD_TEXT_MAX; q2++) {
		if (*q2 == ' ' || *q2 == '\t')
			return NULL;
		if (q2[0] == '?' && q2[1] == '=')
			break;
	}
	if (q2[0] != '?' || q2[1] != '=')
		return NULL;
	stop = q2 + 2;
	if (enc == 'B')
		mail_base64_decode(&bytes, text, (size_t)(q2 - text));
	else
		q_decode(&bytes, text, (size_t)(q2 - text));
	for (i = 0; i < bytes.len; i++)
		if (!bytes.buf[i])
			bytes.buf[i] = ' ';
	charset = xstrndup(cs, (size_t)(q1 - cs));
	if ((star = strchr(charset, '*')))
		*star = '\0';
	utf8_from_charset(out, bytes.buf, bytes.len, mail_charset_safe(charset));
	free(charset);
	strbuf_release(&bytes);
	return stop;
}

void mail_decode_words(struct strbuf *out, const char *value)
{
	struct strbuf acc = STRBUF_INIT, raw = STRBUF_INIT;
	const char *p = value ? value : "", *next;
	int after_word = 0; /* `raw` holds only blanks since an encoded word */

	while (*p) {
		if (p[0] == '=' && p[1] == '?') {
			struct strbuf word = STRBUF_INIT;

			if ((next = encoded_word(&word, p))) {
				/* blanks between two encoded words are not part of the text */
				if (!after_word)
					utf8_repair(&acc, raw.buf, raw.len);
				strbuf_reset(&raw);
				strbuf_addbuf(&acc, &word);
				strbuf_release(&word);
				after_word = 1;
				p = next;
				continue;
			}
			strbuf_release(&word);
		}
		if (*p != ' ' && *p != '\t')
			after_word = 0;
		strbuf_addch(&raw, *p++);
	}
	utf8_repair(&acc, raw.buf, raw.len);
	mime_clean_line(out, acc.buf);
	strbuf_release(&acc);
	strbuf_release(&raw);
}

/* ---- addresses ---- */

struct addr_item {
	struct strbuf phrase, bare, angle, comment;
	int have_angle;
};

/* One address of a list: its decoded display name and checked addr-spec, or nothing. */
static void addr_finish(struct addr_item *it, struct strvec *names, struct strvec *addrs,
			size_t max)
{
	struct strbuf addr = STRBUF_INIT, name = STRBUF_INIT;
	const char *a;
	size_t i;

	if (it->have_angle) {
		a = it->angle.buf;
		if (*a == '@' && strchr(a, ':')) /* an obsolete route: "<@hop:user@host>" */
			a = strchr(a, ':') + 1;
		strbuf_addstr(&addr, a);
		mail_decode_words(&name, it->phrase.len ? it->phrase.buf : it->comment.buf);
	} else {
		for (i = 0; i < it->bare.len; i++)
			if (!isspace((unsigned char)it->bare.buf[i]))
				strbuf_addch(&addr, it->bare.buf[i]);
		mail_decode_words(&name, it->comment.buf);
	}
	strbuf_trim(&addr);
	if (addr.len && addrs->nr < max && mime_addr_check(addr.buf) == 0) {
		strvec_push(addrs, addr.buf);
		strvec_push(names, name.buf);
	}
	strbuf_reset(&it->phrase);
	strbuf_reset(&it->bare);
	strbuf_reset(&it->angle);
	strbuf_reset(&it->comment);
	it->have_angle = 0;
	strbuf_release(&addr);
	strbuf_release(&name);
}

/*
 * An address-list (RFC 5322, leniently): "Name <a@b>", "\"Last, First\" <a@b>",
 * "a@b (Name)", groups "team: a@b, c@d;".  Appends names ("" when none) and
 * addresses in parallel; addresses that fail the strict check are left out.
 */
static void address_list(struct strvec *names, struct strvec *addrs, const char *value,
			 size_t max)
{
	struct addr_item it = { STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, 0 };
	const char *p = value ? value : "";

	while (*p) {
		if (*p == '"') {
			const char *q = skip_quoted(p, &it.phrase);

			strbuf_add(&it.bare, p, (size_t)(q - p));
			p = q;
		} else if (*p == '(') {
			if (it.comment.len)
				p = skip_comment(p, NULL);
			else
				p = skip_comment(p, &it.comment);
		} else if (*p == '<') {
			const char *gt = strchr(p, '>');
			size_t n = gt ? (size_t)(gt - p - 1) : strlen(p + 1);

			strbuf_reset(&it.angle);
			strbuf_add(&it.angle, p + 1, n);
			strbuf_trim(&it.angle);
			it.have_angle = 1;
			p += n + 1 + (gt ? 1 : 0);
		} else if (*p == ':' && !it.have_angle) { /* a group's name */
			strbuf_reset(&it.phrase);
			strbuf_reset(&it.bare);
			strbuf_reset(&it.comment);
			p++;
		} else if (*p == ',' || *p == ';') {
			addr_finish(&it, names, addrs, max);
			p++;
		} else {
			strbuf_addch(&it.phrase, *p);
			strbuf_addch(&it.bare, *p);
			p++;
		}
	}
	addr_finish(&it, names, addrs, max);
	strbuf_release(&it.phrase);
	strbuf_release(&it.bare);
	strbuf_release(&it.angle);
	strbuf_release(&it.comment);
}

/* ---- Message-IDs ---- */

/* Every "<x@y>" of a field (outside comments and quoted strings) that is a safe msg-id. */
static void msgid_list(struct strvec *out, const char *value)
{
	struct strbuf sb = STRBUF_INIT, id = STRBUF_INIT;
	const char *p;
	int found = 0;

	mail_strip_comments(&sb, value ? value : "");
	for (p = sb.buf; *p;) {
		const char *gt;

		if (*p == '"') {
			p = skip_quoted(p, NULL);
			continue;
		}
		if (*p != '<' || !(gt = strchr(p, '>'))) {
			p++;
			continue;
		}
		found = 1;
		strbuf_reset(&id);
		strbuf_add(&id, p, (size_t)(gt - p + 1));
		p = gt + 1;
		{
			struct strbuf norm = STRBUF_INIT;

			if (mime_msgid_normalize(&norm, id.buf) == 0)
				strvec_push(out, norm.buf);
			strbuf_release(&norm);
		}
	}
	if (!found) { /* some clients write a bare "x@y" */
		struct strbuf norm = STRBUF_INIT;

		strbuf_trim(&sb);
		if (sb.len && !strpbrk(sb.buf, " \t") && mime_msgid_normalize(&norm, sb.buf) == 0)
			strvec_push(out, norm.buf);
		strbuf_release(&norm);
	}
	strbuf_release(&sb);
	strbuf_release(&id);
}

static char *first_msgid(const char *value)
{
	struct strvec v = STRVEC_INIT;
	char *id = NULL;

	if (value) {
		msgid_list(&v, value);
		if (v.nr)
			id = xstrdup(v.v[0]);
	}
	strvec_clear(&v);
	return id;
}

/* References: the first and the last REFERENCES_KEPT ids (root and nearest parents). */
static void references(struct strvec *out, const struct inbox_mail *m)
{
	struct strvec all = STRVEC_INIT;
	size_t i;

	for (i = 0; i < m->headers_nr; i++)
		if (!strcasecmp(m->headers[i].name, "References"))
			msgid_list(&all, m->headers[i].value);
	for (i = 0; i < all.nr; i++)
		if (all.nr <= 2 * REFERENCES_KEPT || i < REFERENCES_KEPT ||
		    i >= all.nr - REFERENCES_KEPT)
			strvec_push(out, all.v[i]);
	strvec_clear(&all);
}

/* ---- the message ---- */

static char *first_word_lower(const char *value)
{
	struct strbuf sb = STRBUF_INIT;
	size_t n;

	mail_strip_comments(&sb, value);
	strbuf_trim(&sb);
	n = strcspn(sb.buf, " \t;");
	strbuf_setlen(&sb, n);
	lower(sb.buf);
	return strbuf_detach(&sb, NULL);
}

/* "sha256:<hex>" of data[0..len), appended. */
static void digest_hex(struct strbuf *out, const void *data, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0, i;

	EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL);
	strbuf_addstr(out, "sha256:");
	for (i = 0; i < mdlen; i++) {
		strbuf_addch(out, hex[md[i] >> 4]);
		strbuf_addch(out, hex[md[i] & 15]);
	}
}

static void key_of(struct inbox_mail *m, const char *raw, size_t len)
{
	struct strbuf sb = STRBUF_INIT;

	if (m->message_id) {
		m->key = xstrdup(m->message_id);
		return;
	}
	digest_hex(&sb, raw, len);
	m->key = strbuf_detach(&sb, NULL);
}

void inbox_mail_content_key(struct strbuf *out, const struct inbox_mail *m)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p;

	for (p = m->from_addr ? m->from_addr : ""; *p; p++)
		strbuf_addch(&sb, (char)tolower((unsigned char)*p));
	strbuf_addch(&sb, '\n');
	strbuf_addstr(&sb, m->body ? m->body : "");
	strbuf_rtrim(&sb);
	digest_hex(out, sb.buf, sb.len);
	strbuf_release(&sb);
}

static void return_path(struct inbox_mail *m)
{
	const char *rp = inbox_mail_header(m, "Return-Path");
	struct strbuf sb = STRBUF_INIT, clean = STRBUF_INIT;
	const char *lt, *gt;

	if (!rp)
		return;
	mail_strip_comments(&sb, rp);
	lt = strchr(sb.buf, '<');
	gt = lt ? strchr(lt, '>') : NULL;
	if (lt && gt) {
		strbuf_add(&clean, lt + 1, (size_t)(gt - lt - 1));
		strbuf_trim(&clean);
	} else {
		strbuf_addbuf(&clean, &sb);
		strbuf_trim(&clean);
	}
	strbuf_reset(&sb);
	mime_clean_line(&sb, clean.buf);
	m->return_path = strbuf_detach(&sb, NULL);
	strbuf_release(&clean);
}

static int is_autoreply(const struct inbox_mail *m)
{
	static const char *const marks[] = { "X-Autoreply", "X-Autorespond", "X-Autogenerated",
					     "X-AutoReply-From", "X-Mail-Autoreply", NULL };
	const char *prec = inbox_mail_header(m, "Precedence");
	size_t i;

	for (i = 0; marks[i]; i++)
		if (inbox_mail_header(m, marks[i]))
			return 1;
	if (prec) {
		char *w = first_word_lower(prec);
		int bulk = !strcmp(w, "bulk") || !strcmp(w, "junk") || !strcmp(w, "auto_reply");

		free(w);
		return bulk;
	}
	return 0;
}

static void recipients(struct inbox_mail *m)
{
	struct strvec names = STRVEC_INIT, addrs = STRVEC_INIT;
	size_t i, j;

	for (i = 0; i < m->headers_nr; i++)
		if (!strcasecmp(m->headers[i].name, "To") || !strcasecmp(m->headers[i].name, "Cc"))
			address_list(&names, &addrs, m->headers[i].value, RECIPIENTS_MAX);
	for (i = 0; i < addrs.nr; i++) {
		int dup = 0;

		for (j = 0; j < m->recipients.nr && !dup; j++)
			dup = !strcasecmp(m->recipients.v[j], addrs.v[i]);
		if (!dup)
			strvec_push(&m->recipients, addrs.v[i]);
	}
	strvec_clear(&names);
	strvec_clear(&addrs);
}

static void from(struct inbox_mail *m, const char *value)
{
	struct strvec names = STRVEC_INIT, addrs = STRVEC_INIT;

	address_list(&names, &addrs, value, 1);
	if (addrs.nr) {
		m->from_addr = xstrdup(addrs.v[0]);
		if (*names.v[0])
			m->from_name = xstrdup(names.v[0]);
	}
	strvec_clear(&names);
	strvec_clear(&addrs);
}

int mail_head_parse(struct inbox_mail *out, struct mail_fields *fields, const char *raw,
		    size_t len, const char **body, size_t *body_len)
{
	const char *p = raw, *end, *v;
	struct strbuf sb = STRBUF_INIT;
	int first_bad, ret = 0;

	memset(out, 0, sizeof(*out));
	out->references = (struct strvec)STRVEC_INIT;
	out->recipients = (struct strvec)STRVEC_INIT;
	if (len > INBOX_MAIL_MAX) {
		len = INBOX_MAIL_MAX;
		out->truncated = 1;
	}
	end = raw + len;
	if (len > 5 && !memcmp(raw, "From ", 5)) { /* an mbox separator line */
		const char *nl = memchr(raw, '\n', len);

		p = nl ? nl + 1 : end;
	}
	*body = mail_fields_parse(fields, p, end, &first_bad);
	*body_len = (size_t)(end - *body);
	out->headers = fields->v;
	out->headers_nr = fields->nr;
	if (!len || first_bad || !fields->nr) {
		ret = nb_error_set(NB_EINVALID, "not a mail message: %s",
				   !len ? "no input" : "it does not start with header fields");
		goto done;
	}
	if (!(v = inbox_mail_header(out, "From"))) {
		ret = nb_error_set(NB_EINVALID, "not a mail message: it has no From: field");
		goto done;
	}
	from(out, v);
	out->message_id = first_msgid(inbox_mail_header(out, "Message-ID"));
	mail_decode_words(&sb, inbox_mail_header(out, "Subject"));
	out->subject = strbuf_detach(&sb, NULL);
	out->in_reply_to = first_msgid(inbox_mail_header(out, "In-Reply-To"));
	references(&out->references, out);
	recipients(out);
	return_path(out);
	if ((v = inbox_mail_header(out, "Auto-Submitted")))
		out->auto_submitted = first_word_lower(v);
	out->autoreply = is_autoreply(out);
done:
	key_of(out, raw, len);
	if (!out->subject)
		out->subject = xstrdup("");
	return ret;
}

void inbox_mail_release(struct inbox_mail *m)
{
	struct mail_fields f = { m->headers, m->headers_nr, m->headers_nr };

	free(m->key);
	free(m->message_id);
	free(m->from_name);
	free(m->from_addr);
	free(m->subject);
	free(m->in_reply_to);
	strvec_clear(&m->references);
	strvec_clear(&m->recipients);
	free(m->return_path);
	free(m->auto_submitted);
	mail_fields_release(&f);
	free(m->body);
	memset(m, 0, sizeof(*m));
}
