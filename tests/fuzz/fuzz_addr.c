/*
 * Fuzz target: notify's strict address check and parser (mime_addr_check,
 * mime_addr_parse) and Message-ID normalisation.  Whatever is accepted must be
 * safe to put in an SMTP command and a header: no CR, LF, NUL, '<', '>', space or
 * non-ASCII in an addr-spec; the header built from it must pass the mail checks.
 */
#include <stdint.h>
#include <string.h>

#include "notify/mime.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/mailcheck.h"
#include "util/strbuf.h"
#include "util/banned.h"

/* The addr-spec promises of mime_addr_check(), checked byte by byte. */
static void addr_check_spec(const char *a)
{
	size_t len = strlen(a), i, ats = 0;
	const char *at = strchr(a, '@');

	FUZZ_CHECK(len && len <= 254, "accepted address of length %zu", len);
	for (i = 0; i < len; i++) {
		unsigned char c = a[i];

		FUZZ_CHECK(c > 0x20 && c < 0x7f && c != '<' && c != '>' && c != '"' &&
			   c != '\\' && c != ',' && c != ';' && c != ':',
			   "accepted address holds byte 0x%02x: '%s'", c, a);
		ats += c == '@';
	}
	FUZZ_CHECK(ats == 1 && at != a && at[1], "accepted address without one '@': '%s'", a);
	FUZZ_CHECK(at - a <= 64, "accepted local part of %d", (int)(at - a));
	FUZZ_CHECK(!strstr(a, ".."), "accepted '..' in '%s'", a);
	FUZZ_CHECK(a[0] != '.' && at[-1] != '.' && at[1] != '.' && a[len - 1] != '.',
		   "accepted a dot at an edge: '%s'", a);
}

static void addr_check_msgid(const struct strbuf *id)
{
	size_t i;

	for (i = 1; i + 1 < id->len; i++)
		FUZZ_CHECK(id->buf[i] > 0x20 && id->buf[i] < 0x7f && id->buf[i] != '<' &&
			   id->buf[i] != '>', "msg-id byte 0x%02x", (unsigned char)id->buf[i]);
}

/* A To: header built from what the parser accepted. */
static void addr_check_header(const char *name, const char *addr)
{
	struct mime_addr list[2] = { { name, addr }, { NULL, addr } };
	struct strbuf sb = STRBUF_INIT;
	struct fuzz_mail m;
	size_t hlen;

	mime_header_addrs(&sb, "To", list, 2);
	strbuf_addstr(&sb, "\r\n");
	fuzz_mail_check_crlf(sb.buf, sb.len);
	memset(&m, 0, sizeof(m));
	hlen = fuzz_mail_check_headers(&m, sb.buf, sb.len);
	FUZZ_CHECK(hlen == sb.len && m.value[1], "To header does not parse: '%s'", sb.buf);
	fuzz_mail_release(&m);
	strbuf_release(&sb);
}

int fuzz_addr_one(const uint8_t *data, size_t size)
{
	char *in = fuzz_strdup(data, size), *name = NULL, *addr = NULL;
	struct strbuf id = STRBUF_INIT;

	if (mime_addr_check(in) == 0)
		addr_check_spec(in);
	if (mime_addr_parse(in, &name, &addr) == 0) {
		FUZZ_CHECK(addr, "parse accepted without an address");
		addr_check_spec(addr);
		FUZZ_CHECK(mime_addr_check(addr) == 0, "parsed address fails the check: '%s'",
			   addr);
		if (name) {
			FUZZ_CHECK(*name && fuzz_utf8_valid(name, strlen(name)) &&
				   !fuzz_has_controls(name, strlen(name), ""),
				   "display name not one clean line: '%s'", name);
		}
		addr_check_header(name, addr);
	} else {
		FUZZ_CHECK(!name && !addr, "refused parse left results behind");
	}
	if (mime_msgid_normalize(&id, in) == 0) {
		FUZZ_CHECK(id.len >= 5 && id.buf[0] == '<' && id.buf[id.len - 1] == '>',
			   "msg-id '%s'", id.buf);
		FUZZ_CHECK(id.len <= 252 && strlen(id.buf) == id.len, "msg-id of %zu", id.len);
		addr_check_msgid(&id);
		FUZZ_CHECK(memchr(id.buf, '@', id.len), "msg-id without '@'");
	}
	strbuf_release(&id);
	free(name);
	free(addr);
	free(in);
	return 0;
}

#ifndef FUZZ_REPLAY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_addr_one(data, size);
}
#endif
