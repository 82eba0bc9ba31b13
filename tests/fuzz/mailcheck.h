/*
 * The oracle for generated mail (fuzz_mail.c, fuzz_addr.c): does the text parse as an
 * RFC 5322 message nextbot could have written?  CRLF only, header lines within 998
 * octets of printable ASCII, only the header names nextbot writes and each once,
 * well-formed encoded words, msg-id headers made of msg-ids, a 7bit or
 * quoted-printable body that respects its own limits.  Aborts on any violation.
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
	"X-Nextbot-Event",
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

static inline void fuzz_mail_check_body(const char *body, size_t len, int qp)
{
	size_t pos = 0, i;

	while (pos < len) {
		const char *line = body + pos, *eol = memmem(line, len - pos, "\r\n", 2);
		size_t n = (size_t)(eol - line);

		if (qp) {
			fuzz_mail_check_qp(line, n);
		} else {
			FUZZ_CHECK(n <= 998, "7bit body line of %zu octets", n);
			for (i = 0; i < n; i++)
				FUZZ_CHECK((unsigned char)line[i] < 0x80,
					   "8-bit byte in a 7bit body");
		}
		pos += n + 2;
	}
}

/*
 * Checks a whole mail as nextbot writes it.  Fills *m (release with
 * fuzz_mail_release()) so the caller can look at header values.
 */
static inline void fuzz_mail_check(struct fuzz_mail *m, const char *mail, size_t len)
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
	FUZZ_CHECK(!strcmp(cte, "7bit") || !strcmp(cte, "quoted-printable"), "CTE %s", cte);
	m->body = mail + hlen;
	fuzz_mail_check_body(m->body, len - hlen, !strcmp(cte, "quoted-printable"));
}

#endif
