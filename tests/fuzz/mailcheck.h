/*
 * The oracle for generated mail (fuzz_mail.c, fuzz_addr.c): does the text parse as an
 * RFC 5322 message nextbot could have written?  CRLF only, header lines within 998
 * octets of printable ASCII, only the header names nextbot writes and each once,
 * well-formed encoded words, msg-id headers made of msg-ids, a 7bit or
 * quoted-printable body that respects its own limits (or, for the version sent to
 * servers that offer 8BITMIME, 8bit: valid UTF-8 in lines of at most 998 octets);
 * multipart/mixed with text/plain parts, each checked the same way.  Aborts on any
 * violation.
 */
#ifndef TESTS_FUZZ_MAILCHECK_H
#define TESTS_FUZZ_MAILCHECK_H

#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "tests/fuzz/fuzz.h"

static const char *const fuzz_mail_headers[] = {
	"From", "To", "Cc", "Subject", "Date", "Message-ID", "In-Reply-To", "References",
	"MIME-Version", "Content-Type", "Content-Transfer-Encoding", "Auto-Submitted",
	"X-Nextbot-Event", "X-Nextbot-Flag",
};
/* The headers a part of a multipart/mixed mail may have. */
static const char *const fuzz_part_headers[] = {
	"Content-Type", "Content-Transfer-Encoding", "Content-Disposition",
};
#define FUZZ_MAIL_NHEADERS (sizeof(fuzz_mail_headers) / sizeof(*fuzz_mail_headers))

struct fuzz_mail {
	char *value[FUZZ_MAIL_NHEADERS]; /* unfolded values, malloc'd; NULL: absent */
	const char *body;                /* into the checked text */
};

static inline void fuzz_mail_release(struct fuzz_mail *m)
{
	size_t i;

	for (i = 0; i < FUZZ_MAIL_NHEADERS; i++)
		free(m->value[i]);
	memset(m, 0, sizeof(*m));
}

/* Every line ends in CRLF; no bare CR or LF, no NUL. */
static inline void fuzz_mail_check_crlf(const char *s, size_t len)
{
	size_t i;

	FUZZ_CHECK(len >= 2 && s[len - 2] == '\r' && s[len - 1] == '\n',
		   "mail does not end in CRLF");
	for (i = 0; i < len; i++) {
		FUZZ_CHECK(s[i], "NUL at offset %zu", i);
		if (s[i] == '\r')
			FUZZ_CHECK(i + 1 < len && s[i + 1] == '\n', "bare CR at offset %zu", i);
		if (s[i] == '\n')
			FUZZ_CHECK(i > 0 && s[i - 1] == '\r', "bare LF at offset %zu", i);
	}
}

/*
 * Each "=?" starts an encoded word =?charset?B|Q?text?= of at most 75 characters,
 * except inside an addr-spec (a token with an '@'), where '=' and '?' are atext.
 */
static inline void fuzz_mail_check_words(const char *line, size_t len)
{
	const char *p = line, *end = line + len;

	while ((p = memmem(p, end - p, "=?", 2))) {
		const char *q = p + 2, *e, *tok = p, *tend = p;

		while (tok > line && !strchr(" ,<\t:", tok[-1]))
			tok--;
		while (tend < end && !strchr(" ,>\t", *tend))
			tend++;
		if (memchr(tok, '@', tend - tok)) {
			p = tend;
			continue;
		}
		while (q < end && *q != '?' && *q != ' ')
			q++;
		FUZZ_CHECK(q + 3 < end && q[0] == '?' && strchr("BbQq", q[1]) && q[2] == '?',
			   "'=?' that is no encoded word: '%.*s'", (int)len, line);
		e = memmem(q + 3, end - (q + 3), "?=", 2);
		FUZZ_CHECK(e, "unterminated encoded word: '%.*s'", (int)len, line);
		FUZZ_CHECK(e + 2 - p <= 75, "encoded word of %d characters", (int)(e + 2 - p));
		FUZZ_CHECK(!memchr(p, ' ', e - p), "space inside an encoded word");
		p = e + 2;
	}
}

/* A header value made only of "<local@domain>" msg-ids separated by white space. */
static inline void fuzz_mail_check_msgids(const char *name, const char *v)
{
	int n = 0;

	while (*v) {
		const char *gt;

		if (*v == ' ' || *v == '\t') {
			v++;
			continue;
		}
		FUZZ_CHECK(*v == '<', "%s: '%s' is not a msg-id list", name, v);
		gt = strchr(v, '>');
		FUZZ_CHECK(gt && memchr(v, '@', gt - v), "%s: bad msg-id '%s'", name, v);
		FUZZ_CHECK(!memchr(v + 1, '<', gt - v - 1) && !memchr(v, ' ', gt - v),
			   "%s: bad msg-id '%s'", name, v);
		v = gt + 1;
		n++;
	}
	FUZZ_CHECK(n > 0, "%s: empty", name);
}

static inline size_t fuzz_mail_header_index(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < FUZZ_MAIL_NHEADERS; i++)
		if (strlen(fuzz_mail_headers[i]) == len &&
		    !strncmp(fuzz_mail_headers[i], name, len))
			return i;
	return FUZZ_MAIL_NHEADERS;
}

static inline void fuzz_mail_append(char **dst, const char *s, size_t len)
{
	size_t old = *dst ? strlen(*dst) : 0;

	*dst = realloc(*dst, old + len + 1);
	if (!*dst)
		abort();
	memcpy(*dst + old, s, len);
	(*dst)[old + len] = '\0';
}

/*
 * Checks the header block at `s` (as many lines as precede an empty line or the
 * end) and fills m->value[]; returns the length of the header block with its
 * empty line.
 */
static inline size_t fuzz_mail_check_headers(struct fuzz_mail *m, const char *s, size_t len)
{
	size_t pos = 0, cur = FUZZ_MAIL_NHEADERS, i;

	while (pos < len) {
		const char *line = s + pos, *eol = memmem(line, len - pos, "\r\n", 2);
		size_t n = (size_t)(eol - line), colon;

		if (!n)
			return pos + 2;
		FUZZ_CHECK(n <= 998, "header line of %zu octets", n);
		for (i = 0; i < n; i++)
			FUZZ_CHECK((line[i] >= 0x20 && line[i] <= 0x7e) || line[i] == '\t',
				   "header byte 0x%02x in '%.*s'", (unsigned char)line[i], (int)n,
				   line);
		fuzz_mail_check_words(line, n);
		if (line[0] == ' ' || line[0] == '\t') {
			FUZZ_CHECK(cur < FUZZ_MAIL_NHEADERS, "continuation without a header");
			FUZZ_CHECK(strspn(line, " \t") < n,
				   "header line of white space only in %s: '%s'",
				   fuzz_mail_headers[cur], m->value[cur]);
			fuzz_mail_append(&m->value[cur], line, n);
		} else {
			colon = strcspn(line, ":");
			FUZZ_CHECK(colon < n && colon > 0, "header line without a name: '%.*s'",
				   (int)n, line);
			cur = fuzz_mail_header_index(line, colon);
			FUZZ_CHECK(cur < FUZZ_MAIL_NHEADERS,
				   "header nextbot does not write: '%.*s'", (int)n, line);
			FUZZ_CHECK(!m->value[cur], "header %s twice", fuzz_mail_headers[cur]);
			FUZZ_CHECK(colon + 1 < n && line[colon + 1] == ' ', "no space after '%s:'",
				   fuzz_mail_headers[cur]);
			fuzz_mail_append(&m->value[cur], line + colon + 2, n - colon - 2);
		}
		pos += n + 2;
	}
	return pos;
}

static inline void fuzz_mail_check_qp(const char *line, size_t n)
{
	size_t i;

	FUZZ_CHECK(n <= 76, "quoted-printable line of %zu characters", n);
	for (i = 0; i < n; i++) {
		unsigned char c = line[i];

		if (c == '=') {
			if (i + 1 == n)
				break; /* soft line break */
			FUZZ_CHECK(i + 2 < n && isxdigit((unsigned char)line[i + 1]) &&
				   isxdigit((unsigned char)line[i + 2]) && !islower(line[i + 1]) &&
				   !islower(line[i + 2]), "bad '=' escape in '%.*s'", (int)n, line);
			i += 2;
			continue;
		}
		FUZZ_CHECK((c >= 33 && c <= 126) || c == ' ' || c == '\t',
			   "raw byte 0x%02x in a quoted-printable line", c);
	}
	if (n && line[n - 1] != '=')
		FUZZ_CHECK(line[n - 1] != ' ' && line[n - 1] != '\t',
			   "quoted-printable line ends in white space");
}

/* cte: 0 7bit, 1 quoted-printable, 2 8bit. */
static inline void fuzz_mail_check_body(const char *body, size_t len, int cte)
{
	size_t pos = 0, i;

	if (cte == 2)
		FUZZ_CHECK(fuzz_utf8_valid(body, len), "8bit body that is not UTF-8");
	while (pos < len) {
		const char *line = body + pos, *eol = memmem(line, len - pos, "\r\n", 2);
		size_t n = (size_t)(eol - line);

		if (cte == 1) {
			fuzz_mail_check_qp(line, n);
		} else {
			FUZZ_CHECK(n <= 998, "body line of %zu octets", n);
			for (i = 0; cte == 0 && i < n; i++)
				FUZZ_CHECK((unsigned char)line[i] < 0x80,
					   "8-bit byte in a 7bit body");
		}
		pos += n + 2;
	}
}

static inline int fuzz_mail_cte(const char *cte, int eightbit_ok)
{
	if (!strcmp(cte, "7bit"))
		return 0;
	if (!strcmp(cte, "quoted-printable"))
		return 1;
	FUZZ_CHECK(eightbit_ok && !strcmp(cte, "8bit"), "CTE %s", cte);
	return 2;
}

/* The parts of a multipart/mixed body: each has only part headers and a text body. */
static inline void fuzz_mail_check_parts(const char *body, size_t len, const char *boundary,
					 int eightbit_ok, int outer)
{
	char delim[128], close[128];
	const char *p = body, *end = body + len;
	int parts = 0;

	FUZZ_CHECK(strlen(boundary) > 0 && strlen(boundary) <= 70, "boundary '%s'", boundary);
	snprintf(delim, sizeof(delim), "--%s\r\n", boundary);
	snprintf(close, sizeof(close), "\r\n--%s--\r\n", boundary);
	FUZZ_CHECK(len >= strlen(delim) && !memcmp(body, delim, strlen(delim)),
		   "multipart body does not start with its boundary");
	FUZZ_CHECK(len >= strlen(close) && !memcmp(end - strlen(close), close, strlen(close)),
		   "multipart body does not end with its closing boundary");
	end -= strlen(close) - 2;
	while (p < end) {
		const char *start = p + strlen(delim), *next, *q;
		char sep[132];
		int cte = 0, has_ct = 0, hdr_seen[3] = { 0 };
		size_t plen;

		snprintf(sep, sizeof(sep), "\r\n--%s\r\n", boundary);
		next = memmem(start, (size_t)(end - start), sep, strlen(sep));
		if (!next)
			next = end - 2;
		plen = (size_t)(next - start) + 2;
		/* the part's headers */
		for (q = start;;) {
			const char *eol = memmem(q, (size_t)(start + plen - q), "\r\n", 2);
			size_t n, colon, i, which = 3;

			FUZZ_CHECK(eol, "part header without CRLF");
			n = (size_t)(eol - q);
			if (!n) {
				q += 2;
				break;
			}
			FUZZ_CHECK(n <= 998, "part header line of %zu octets", n);
			for (i = 0; i < n; i++)
				FUZZ_CHECK(q[i] >= 0x20 && q[i] <= 0x7e, "part header byte 0x%02x",
					   (unsigned char)q[i]);
			if (q[0] != ' ') {
				colon = strcspn(q, ":");
				for (i = 0; i < 3; i++)
					if (strlen(fuzz_part_headers[i]) == colon &&
					    !strncmp(q, fuzz_part_headers[i], colon))
						which = i;
				FUZZ_CHECK(which < 3, "part header nextbot does not write: '%.*s'",
					   (int)n, q);
				FUZZ_CHECK(!hdr_seen[which]++, "part header %s twice",
					   fuzz_part_headers[which]);
				if (which == 0) {
					FUZZ_CHECK(!strncmp(q, "Content-Type: text/plain; "
							       "charset=UTF-8", 39),
						   "part type '%.*s'", (int)n, q);
					has_ct = 1;
				} else if (which == 1) {
					char v[32];

					snprintf(v, sizeof(v), "%.*s", (int)(n - colon - 2),
						 q + colon + 2);
					cte = fuzz_mail_cte(v, eightbit_ok);
					FUZZ_CHECK(cte <= outer || outer == 2 || cte != 2,
						   "8bit part in a 7bit multipart");
				}
			}
			q = eol + 2;
		}
		FUZZ_CHECK(has_ct, "part without Content-Type");
		FUZZ_CHECK(hdr_seen[1], "part without Content-Transfer-Encoding");
		if (start + plen > q)
			fuzz_mail_check_body(q, (size_t)(start + plen - q), cte);
		parts++;
		p = next + 2;
	}
	FUZZ_CHECK(parts >= 1, "multipart without parts");
}

/*
 * Checks a whole mail as nextbot writes it.  Fills *m (release with
 * fuzz_mail_release()) so the caller can look at header values.
 */
static inline void fuzz_mail_check_ext(struct fuzz_mail *m, const char *mail, size_t len,
				       int eightbit_ok)
{
	static const size_t required[] = { 0, 3, 4, 5, 8, 9, 10, 11, 12 };
	const char *cte;
	size_t hlen, i;

	memset(m, 0, sizeof(*m));
	fuzz_mail_check_crlf(mail, len);
	hlen = fuzz_mail_check_headers(m, mail, len);
	FUZZ_CHECK(hlen <= len && hlen >= 4 && !memcmp(mail + hlen - 4, "\r\n\r\n", 4),
		   "no empty line after the headers");
	for (i = 0; i < sizeof(required) / sizeof(*required); i++)
		FUZZ_CHECK(m->value[required[i]], "no %s header", fuzz_mail_headers[required[i]]);
	FUZZ_CHECK(!strcmp(m->value[11], "auto-generated"), "Auto-Submitted: %s", m->value[11]);
	FUZZ_CHECK(!strcmp(m->value[8], "1.0"), "MIME-Version: %s", m->value[8]);
	fuzz_mail_check_msgids("Message-ID", m->value[5]);
	if (m->value[6])
		fuzz_mail_check_msgids("In-Reply-To", m->value[6]);
	if (m->value[7])
		fuzz_mail_check_msgids("References", m->value[7]);
	cte = m->value[10];
	m->body = mail + hlen;
	if (!strncmp(m->value[9], "multipart/mixed; boundary=\"", 27)) {
		const char *b = m->value[9] + 27;
		size_t blen = strcspn(b, "\"");
		char boundary[80];
		int outer = fuzz_mail_cte(cte, eightbit_ok);

		FUZZ_CHECK(outer != 1, "quoted-printable multipart");
		FUZZ_CHECK(blen < sizeof(boundary) && b[blen] == '"' && !b[blen + 1],
			   "Content-Type: %s", m->value[9]);
		memcpy(boundary, b, blen);
		boundary[blen] = '\0';
		fuzz_mail_check_parts(m->body, len - hlen, boundary, eightbit_ok, outer);
		return;
	}
	FUZZ_CHECK(!strcmp(m->value[9], "text/plain; charset=UTF-8"), "Content-Type: %s",
		   m->value[9]);
	fuzz_mail_check_body(m->body, len - hlen, fuzz_mail_cte(cte, eightbit_ok));
}

/* The mail as the outbox's "body" holds it: 7-bit clean. */
static inline void fuzz_mail_check(struct fuzz_mail *m, const char *mail, size_t len)
{
	fuzz_mail_check_ext(m, mail, len, 0);
}

#endif
