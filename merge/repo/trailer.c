/* Parsing kernel-style commit messages: subject, body, trailers and their people, reviews. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "merge/repo/repo.h"
#include "merge/repo/trailer_int.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* Longest Message-ID we accept (RFC 5322 line limit). */
#define MSGID_MAX 998

/* Copies `msg` with CRLF and lone CR turned into LF. */
static char *normalise_newlines(const char *msg)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p = msg;

	/* runs without a CR in one piece: a night's journeys parse 8,000 messages */
	strbuf_grow(&sb, strlen(msg));
	for (;;) {
		size_t n = strcspn(p, "\r");

		strbuf_add(&sb, p, n);
		p += n;
		if (!*p)
			break;
		strbuf_addch(&sb, '\n');
		p += p[1] == '\n' ? 2 : 1;
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
	free(info->subject);
	free(info->body);
	free(info->message_id);
	free_strings(info->signoffs, info->signoffs_nr);
	memset(info, 0, sizeof(*info));
}

char *trailer_message_id(const char *message)
{
	struct trailer_info ti = TRAILER_INFO_INIT;
	char *id;

	trailer_parse(&ti, message);
	id = ti.message_id;
	ti.message_id = NULL;
	trailer_info_release(&ti);
	return id;
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

/* ---- the trailer block and its people (merge/repo/repo.h) ---- */

/* The length of the key of a "Key: value" line (letters, digits, '-'), or 0. */
static size_t trailer_key_len(const char *line, size_t len)
{
	size_t i;

	for (i = 0; i < len && (isalnum((unsigned char)line[i]) || line[i] == '-'); i++)
		;
	return i && i < len && line[i] == ':' ? i : 0;
}

/*
 * Where the trailer block of `text` (LF line ends) starts, or NULL: the last
 * paragraph after the subject's, when its lines are all trailers, or when one of
 * them is git's own ("Signed-off-by:") and trailers are at least a quarter of them,
 * as git's trailer.c decides.
 */
static const char *trailer_block(const char *text)
{
	const char *p = skip_blank_lines(text), *block = NULL, *eol;
	int in_subject = 1, trailers = 0, others = 0, git_own = 0;

	for (; *p; p = *eol ? eol + 1 : eol) {
		eol = strchrnul(p, '\n');
		if (is_blank_line(p, eol - p)) {
			in_subject = 0;
			block = NULL;
			continue;
		}
		if (in_subject)
			continue;
		if (!block) {
			block = p;
			trailers = others = git_own = 0;
		}
		if (trailer_key_len(p, eol - p)) {
			trailers++;
			git_own |= !strncasecmp(p, "Signed-off-by:", 14);
		} else if (!isspace((unsigned char)*p)) {
			others++;
		}
	}
	if (!block || !trailers || (others && !(git_own && trailers * 3 >= others)))
		return NULL;
	return block;
}

static int key_wanted(const char *key, size_t len, const char *const *keys, size_t keys_nr)
{
	size_t i;

	if (!keys_nr)
		return 1;
	for (i = 0; i < keys_nr; i++)
		if (strlen(keys[i]) == len && !strncasecmp(keys[i], key, len))
			return 1;
	return 0;
}

/* A one-line, valid UTF-8 copy of s[0..len), trimmed. */
static char *one_line(const char *s, size_t len)
{
	struct strbuf sb = STRBUF_INIT, clean = STRBUF_INIT;

	utf8_repair(&sb, s, len);
	utf8_strip_controls(&sb);
	add_trimmed(&clean, sb.buf, sb.len);
	strbuf_release(&sb);
	return strbuf_detach(&clean, NULL);
}

static void add_person(struct trailer_people *out, const char *key, size_t klen,
		       const char *value)
{
	struct trailer_person *t;
	struct strbuf email = STRBUF_INIT;
	const char *lt = strrchr(value, '<');
	size_t nlen = lt && strchr(lt, '>') ? (size_t)(lt - value) : 0;

	ALLOC_GROW(out->v, out->nr + 1, out->alloc);
	t = &out->v[out->nr++];
	t->key = one_line(key, klen);
	ident_address(&email, value);
	t->email = one_line(email.buf, email.len);
	if (nlen >= 2 && value[0] == '"' && value[nlen - 1] == '"')
		t->name = one_line(value + 1, nlen - 2);
	else
		t->name = one_line(value, nlen);
	if (!nlen && !strchr(t->email, '@')) { /* "Acked-by: someone" names no address */
		free(t->name);
		t->name = t->email;
		t->email = xstrdup("");
	}
	strbuf_release(&email);
}

void trailer_people_parse(struct trailer_people *out, const char *message,
			  const char *const *keys, size_t keys_nr)
{
	char *text = normalise_newlines(message ? message : "");
	const char *p = trailer_block(text), *eol, *key = NULL;
	struct strbuf value = STRBUF_INIT;
	size_t klen = 0;

	for (; p && *p; p = *eol ? eol + 1 : eol) {
		size_t kl;

		eol = strchrnul(p, '\n');
		if (isspace((unsigned char)*p) && key) {
			strbuf_addch(&value, ' ');
			add_trimmed(&value, p, eol - p);
			continue;
		}
		if (key)
			add_person(out, key, klen, value.buf);
		key = NULL;
		kl = trailer_key_len(p, eol - p);
		if (!kl || !key_wanted(p, kl, keys, keys_nr))
			continue;
		key = p;
		klen = kl;
		strbuf_reset(&value);
		add_trimmed(&value, p + kl + 1, eol - p - kl - 1);
	}
	if (key)
		add_person(out, key, klen, value.buf);
	strbuf_release(&value);
	free(text);
}

void trailer_people_release(struct trailer_people *people)
{
	size_t i;

	for (i = 0; i < people->nr; i++) {
		free(people->v[i].key);
		free(people->v[i].name);
		free(people->v[i].email);
	}
	free(people->v);
	memset(people, 0, sizeof(*people));
}

static const char *mapped(const struct trailer_mailmap *mm, const char *name, const char *email)
{
	const char *c = mm && mm->canonical ? mm->canonical(mm->ctx, name ? name : "", email) :
					      NULL;

	return c ? c : email;
}

/* `email` without a "+tag" in its local part (user+tag@host is user@host's), lower case. */
static void address_key(struct strbuf *out, const char *email)
{
	const char *at = strrchr(email, '@'), *plus = strchr(email, '+');
	const char *p;

	strbuf_reset(out);
	for (p = email; *p; p++) {
		if (plus && at && p == plus && plus < at)
			p = at;
		strbuf_addch(out, (char)tolower((unsigned char)*p));
	}
}

/* The same display name (ASCII case and runs of blanks ignored), neither empty? */
static int names_match(const char *a, const char *b)
{
	if (!a || !b)
		return 0;
	a += strspn(a, " \t");
	b += strspn(b, " \t");
	if (!*a || !*b)
		return 0;
	while (*a && *b) {
		if (isspace((unsigned char)*a) && isspace((unsigned char)*b)) {
			a += strspn(a, " \t");
			b += strspn(b, " \t");
			continue;
		}
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return 0;
		a++;
		b++;
	}
	a += strspn(a, " \t");
	b += strspn(b, " \t");
	return !*a && !*b;
}

int trailer_person_is_other(const struct trailer_person *t, const char *author_name,
			    const char *author_email, const struct trailer_mailmap *mailmap)
{
	char *author = one_line(author_email ? author_email : "", author_email ?
			       strlen(author_email) : 0);
	struct strbuf ak = STRBUF_INIT, rk = STRBUF_INIT;
	const char *a, *r;
	int other;

	a = mapped(mailmap, author_name, author);
	r = t->email[0] ? mapped(mailmap, t->name, t->email) : "";
	address_key(&ak, a);
	address_key(&rk, r);
	/* the author's own address, a "+" alias of it, one .mailmap joins, or their name */
	other = rk.len && strcmp(ak.buf, rk.buf) && !names_match(author_name, t->name);
	strbuf_release(&ak);
	strbuf_release(&rk);
	free(author);
	return other;
}

int trailer_reviewed(const char *message, const char *author_name, const char *author_email,
		     const char *const *require, size_t require_nr,
		     const struct trailer_mailmap *mailmap, size_t *out_index)
{
	struct trailer_people people = TRAILER_PEOPLE_INIT;
	size_t i;
	int found = 0;

	if (!require_nr)
		return 0;
	trailer_people_parse(&people, message, require, require_nr);
	for (i = 0; i < people.nr && !found; i++)
		found = trailer_person_is_other(&people.v[i], author_name, author_email, mailmap);
	if (found && out_index)
		*out_index = i - 1;
	trailer_people_release(&people);
	return found;
}

static const char *const trailer_kind_names[] = {
	[TRAILER_SIGNED_OFF] = "Signed-off-by", [TRAILER_REVIEWED] = "Reviewed-by",
	[TRAILER_ACKED] = "Acked-by",		  [TRAILER_TESTED] = "Tested-by",
	[TRAILER_CO_DEVELOPED] = "Co-developed-by",
};

const char *trailer_kind_name(enum trailer_kind kind)
{
	if ((size_t)kind >= sizeof(trailer_kind_names) / sizeof(*trailer_kind_names))
		return NULL;
	return trailer_kind_names[kind];
}

enum trailer_kind trailer_kind_parse(const char *key)
{
	size_t i;

	for (i = 1; key && i < sizeof(trailer_kind_names) / sizeof(*trailer_kind_names); i++)
		if (!strcasecmp(key, trailer_kind_names[i]))
			return (enum trailer_kind)i;
	return TRAILER_OTHER;
}
