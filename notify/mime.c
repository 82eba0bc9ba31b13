/* Mail building blocks: strict addresses, encoded words, folding, quoted-printable. */
#include <string.h>
#include <openssl/evp.h>

#include "notify/mime.h"
#include "util/error.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define LINE_SOFT 78
#define ENCODED_RAW 42 /* bytes per encoded word: 10 + base64(42) = 56 + 2 = 68 chars */
#define NAME_RAW_MAX 60

static int is_atext(int c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return 1;
	return c && strchr("!#$%&'*+-/=?^_`{|}~", c) != NULL;
}

/* The address as it may appear in a message: printable, capped, controls shown as \xNN. */
static void addr_visible(struct strbuf *out, const char *addr)
{
	size_t i;

	for (i = 0; addr[i] && i < 120; i++) {
		unsigned char c = addr[i];

		if (c < 0x20 || c >= 0x7f || c == '\\')
			strbuf_addf(out, "\\x%02x", c);
		else
			strbuf_addch(out, c);
	}
	if (addr[i])
		strbuf_addstr(out, "...");
}

static int refuse(const char *addr, const char *why)
{
	struct strbuf vis = STRBUF_INIT;
	int ret;

	addr_visible(&vis, addr);
	ret = nb_error_set(NB_EREFUSED, "address '%s' refused: %s", vis.buf, why);
	strbuf_release(&vis);
	return ret;
}

static const char *local_check(const char *s, size_t len)
{
	size_t i;

	if (!len)
		return "empty local part";
	if (len > 64)
		return "local part longer than 64";
	if (s[0] == '.' || s[len - 1] == '.')
		return "local part starts or ends with '.'";
	for (i = 0; i < len; i++) {
		if (s[i] == '.') {
			if (s[i + 1] == '.')
				return "'..' in local part";
		} else if (!is_atext((unsigned char)s[i])) {
			return "character not allowed in local part";
		}
	}
	return NULL;
}

static const char *domain_check(const char *s, size_t len)
{
	size_t i, label = 0;

	if (!len)
		return "empty domain";
	if (len > 253)
		return "domain longer than 253";
	for (i = 0; i <= len; i++) {
		char c = i < len ? s[i] : '.';

		if (c == '.') {
			if (!label)
				return "empty domain label";
			if (s[i - 1] == '-' || s[i - label] == '-')
				return "domain label starts or ends with '-'";
			label = 0;
		} else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			   (c >= '0' && c <= '9') || c == '-') {
			if (++label > 63)
				return "domain label longer than 63";
		} else {
			return "character not allowed in domain";
		}
	}
	return NULL;
}

int mime_addr_check(const char *addr)
{
	const char *at, *why;
	size_t len;

	if (!addr)
		return nb_error_set(NB_EREFUSED, "no address");
	len = strlen(addr);
	if (len > 254)
		return refuse(addr, "longer than 254 characters");
	at = strchr(addr, '@');
	if (!at || strchr(at + 1, '@'))
		return refuse(addr, "not exactly one '@'");
	why = local_check(addr, at - addr);
	if (!why)
		why = domain_check(at + 1, len - (at + 1 - addr));
	return why ? refuse(addr, why) : 0;
}

void mime_clean_line(struct strbuf *out, const char *in)
{
	struct strbuf tmp = STRBUF_INIT;

	if (in)
		utf8_repair(&tmp, in, strlen(in));
	utf8_strip_controls(&tmp);
	strbuf_trim(&tmp);
	strbuf_addbuf(out, &tmp);
	strbuf_release(&tmp);
}

void mime_clean_text(struct strbuf *out, const char *in)
{
	struct strbuf tmp = STRBUF_INIT;
	size_t i;

	for (i = 0; in && in[i]; i++) /* CRLF line ends are LF; a lone CR is a control */
		if (in[i] != '\r' || in[i + 1] != '\n')
			strbuf_addch(&tmp, in[i]);
	utf8_clean_text(out, tmp.buf, tmp.len);
	strbuf_release(&tmp);
}

int mime_addr_parse(const char *in, char **name_out, char **addr_out)
{
	struct strbuf name = STRBUF_INIT, addr = STRBUF_INIT;
	const char *lt, *gt;
	int ret;

	*name_out = *addr_out = NULL;
	if (!in)
		return nb_error_set(NB_EREFUSED, "no address");
	lt = strchr(in, '<');
	gt = strchr(in, '>');
	if (lt || gt) {
		const char *end = gt ? gt + 1 : NULL;

		while (end && (*end == ' ' || *end == '\t'))
			end++;
		if (!lt || !gt || gt < lt || strchr(lt + 1, '<') || strchr(gt + 1, '>') || *end)
			return refuse(in, "not of the form 'Name <address>'");
		strbuf_add(&addr, lt + 1, gt - lt - 1);
		strbuf_add(&name, in, lt - in);
		strbuf_trim(&name);
		if (name.len >= 2 && name.buf[0] == '"' && name.buf[name.len - 1] == '"') {
			memmove(name.buf, name.buf + 1, name.len - 2);
			strbuf_setlen(&name, name.len - 2);
		}
	} else {
		strbuf_addstr(&addr, in);
		strbuf_trim(&addr);
	}
	if ((ret = mime_addr_check(addr.buf)) < 0)
		goto done;
	*addr_out = strbuf_detach(&addr, NULL);
	if (name.len) {
		struct strbuf clean = STRBUF_INIT;

		mime_clean_line(&clean, name.buf);
		if (clean.len)
			*name_out = strbuf_detach(&clean, NULL);
		strbuf_release(&clean);
	}
done:
	strbuf_release(&name);
	strbuf_release(&addr);
	return ret;
}

/* Appends one encoded word of s[0..len) (len <= ENCODED_RAW). */
static void encoded_word(struct strbuf *out, const char *s, size_t len)
{
	unsigned char b64[4 * ((ENCODED_RAW + 2) / 3) + 1];
	int n = EVP_EncodeBlock(b64, (const unsigned char *)s, (int)len);

	strbuf_addstr(out, "=?UTF-8?B?");
	strbuf_add(out, b64, n);
	strbuf_addstr(out, "?=");
}

/* Encoded words for all of `s`, split on character boundaries, separated by folds. */
static void encoded_words(struct strbuf *out, const char *s)
{
	size_t len = strlen(s), pos = 0;

	if (!len) {
		encoded_word(out, "", 0);
		return;
	}
	while (pos < len) {
		size_t n = len - pos < ENCODED_RAW ? len - pos : ENCODED_RAW;

		while (pos + n < len && n > 1 && ((unsigned char)s[pos + n] & 0xc0) == 0x80)
			n--;
		if (pos)
			strbuf_addstr(out, "\r\n ");
		encoded_word(out, s + pos, n);
		pos += n;
	}
}

/*
 * Printable ASCII with no segment (a word and the spaces before it) too long to
 * fold and nothing that looks encoded.
 */
static int folds_raw(const char *s)
{
	size_t seg = 0;
	char prev = 0;

	if (strstr(s, "=?"))
		return 0;
	for (; *s; prev = *s++) {
		if (*s < 0x20 || *s > 0x7e)
			return 0;
		seg = *s == ' ' && prev != ' ' ? 1 : seg + 1;
		if (seg > LINE_SOFT - 12)
			return 0;
	}
	return 1;
}

void mime_header_text(struct strbuf *out, const char *name, const char *value)
{
	size_t line, i = 0;

	strbuf_addf(out, "%s: ", name);
	if (!folds_raw(value)) {
		encoded_words(out, value);
		strbuf_addstr(out, "\r\n");
		return;
	}
	line = strlen(name) + 2;
	while (value[i]) {
		/* A segment is the spaces before a word and the word: fold before it. */
		size_t seg = 0, spaces;

		while (value[i + seg] == ' ')
			seg++;
		spaces = seg;
		while (value[i + seg] && value[i + seg] != ' ')
			seg++;
		/* never fold before trailing spaces: a line of white space only is invalid */
		if (i && value[i] == ' ' && line + seg > LINE_SOFT && seg > spaces) {
			strbuf_addstr(out, "\r\n");
			line = 0;
		}
		strbuf_add(out, value + i, seg);
		line += seg;
		i += seg;
	}
	strbuf_addstr(out, "\r\n");
}

static void display_name(struct strbuf *out, const char *name)
{
	size_t i, len = strlen(name);
	int plain = len <= NAME_RAW_MAX, quotable = len <= NAME_RAW_MAX;

	for (i = 0; i < len; i++) {
		unsigned char c = name[i];

		if (c < 0x20 || c > 0x7e)
			plain = quotable = 0;
		else if (c != ' ' && !is_atext(c))
			plain = 0;
	}
	if (strstr(name, "=?"))
		plain = quotable = 0;
	if (plain) {
		strbuf_addstr(out, name);
	} else if (quotable) {
		strbuf_addch(out, '"');
		for (i = 0; i < len; i++) {
			if (name[i] == '"' || name[i] == '\\')
				strbuf_addch(out, '\\');
			strbuf_addch(out, name[i]);
		}
		strbuf_addch(out, '"');
	} else {
		encoded_words(out, name);
	}
}

void mime_header_addrs(struct strbuf *out, const char *name, const struct mime_addr *list,
		       size_t nr)
{
	size_t i;

	strbuf_addf(out, "%s: ", name);
	for (i = 0; i < nr; i++) {
		if (i)
			strbuf_addstr(out, ",\r\n ");
		if (list[i].name && *list[i].name) {
			display_name(out, list[i].name);
			strbuf_addf(out, " <%s>", list[i].addr);
		} else {
			strbuf_addstr(out, list[i].addr);
		}
	}
	strbuf_addstr(out, "\r\n");
}

void mime_date(struct strbuf *out, time_t t)
{
	static const char *const days[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
	static const char *const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
					     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
	struct tm tm;

	gmtime_r(&t, &tm);
	strbuf_addf(out, "%s, %02d %s %04d %02d:%02d:%02d +0000", days[tm.tm_wday], tm.tm_mday,
		    months[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

int mime_msgid_normalize(struct strbuf *out, const char *in)
{
	size_t len, i, at = 0, ats = 0;

	if (!in)
		return -1;
	while (*in == ' ' || *in == '\t')
		in++;
	len = strlen(in);
	while (len && (in[len - 1] == ' ' || in[len - 1] == '\t'))
		len--;
	if (len >= 2 && in[0] == '<' && in[len - 1] == '>') {
		in++;
		len -= 2;
	}
	if (!len || len > 250)
		return -1;
	for (i = 0; i < len; i++) {
		if (in[i] == '@') {
			ats++;
			at = i;
		} else if (in[i] != '.' && !is_atext((unsigned char)in[i])) {
			return -1;
		}
	}
	if (ats != 1 || !at || at == len - 1)
		return -1;
	strbuf_addch(out, '<');
	strbuf_add(out, in, len);
	strbuf_addch(out, '>');
	return 0;
}

static int needs_qp(const char *text)
{
	size_t line = 0;
	const char *p;

	for (p = text; *p; p++) {
		unsigned char c = *p;

		if (c >= 0x80 || c == '\r')
			return 1;
		line = c == '\n' ? 0 : line + 1;
		if (line > 998)
			return 1;
	}
	return 0;
}

static void qp_line(struct strbuf *out, const char *s, size_t len)
{
	size_t i, col = 0;

	for (i = 0; i < len; i++) {
		unsigned char c = s[i];
		int literal = (c >= 33 && c <= 126 && c != '=') ||
			      ((c == ' ' || c == '\t') && i + 1 < len);
		size_t w = literal ? 1 : 3;

		if (col + w > 75) {
			strbuf_addstr(out, "=\r\n");
			col = 0;
		}
		if (literal)
			strbuf_addch(out, c);
		else
			strbuf_addf(out, "=%02X", c);
		col += w;
	}
	strbuf_addstr(out, "\r\n");
}

/* 1 when the text needs more than 8bit: a bare CR or a line over 998 octets. */
static int needs_qp_even_8bit(const char *text)
{
	size_t line = 0;
	const char *p;

	for (p = text; *p; p++) {
		if (*p == '\r')
			return 1;
		line = *p == '\n' ? 0 : line + 1;
		if (line > 998)
			return 1;
	}
	return 0;
}

void mime_body(struct strbuf *out, const char *text, const char **cte)
{
	mime_body_ext(out, text, 0, cte);
}

void mime_body_ext(struct strbuf *out, const char *text, int eightbit, const char **cte)
{
	int qp = needs_qp(text);
	const char *p = text;

	if (qp && eightbit && !needs_qp_even_8bit(text)) {
		*cte = "8bit";
		qp = 0;
	} else {
		*cte = qp ? "quoted-printable" : "7bit";
	}
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		if (qp) {
			qp_line(out, p, len);
		} else {
			strbuf_add(out, p, len);
			strbuf_addstr(out, "\r\n");
		}
		p += len + (nl ? 1 : 0);
	}
}

/* Display columns of a UTF-8 string: code points, continuation bytes not counted. */
static size_t columns(const char *s, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++)
		n += ((unsigned char)s[i] & 0xc0) != 0x80;
	return n;
}

size_t mime_columns(const char *s)
{
	return columns(s, strlen(s));
}

void mime_wrap(struct strbuf *out, const char *text, size_t width)
{
	const char *p = text;

	while (*p) {
		const char *nl = strchr(p, '\n');
		const char *end = nl ? nl : p + strlen(p);
		size_t col = 0;

		/* one input line: words separated by single spaces */
		while (p < end) {
			const char *w = p;
			size_t n, wcols;

			while (w < end && *w == ' ')
				w++;
			n = strcspn(w, " \n");
			if (w + n > end)
				n = (size_t)(end - w);
			if (!n)
				break;
			wcols = columns(w, n);
			if (col && col + 1 + wcols > width) {
				strbuf_addch(out, '\n');
				col = 0;
			} else if (col) {
				strbuf_addch(out, ' ');
				col++;
			}
			strbuf_add(out, w, n);
			col += wcols;
			p = w + n;
		}
		strbuf_addch(out, '\n');
		p = nl ? nl + 1 : end;
	}
}
