/*
 * Fuzz target: the error-excerpt extractor and fingerprint normalisation
 * (merge/search/excerpt.c) on arbitrary build logs.  Properties: at most EXCERPT_MAX_LINES
 * lines, each '\n'-terminated, within EXCERPT_LINE_MAX (+ "..."), free of control
 * characters and of the checkout prefix; a non-blank log gives a non-empty
 * excerpt; the first error is one line; normalisation is deterministic (it is not
 * idempotent, see below), and a flag id is 12 hex digits.
 */
#include <stdint.h>
#include <string.h>

#include "merge/search/search.h"
#include "tests/fuzz/fuzz.h"
#include "util/strbuf.h"
#include "util/banned.h"

#define EXCERPT_PREFIX "/srv/nextbot/work/w3"

/*
 * 1 unless the log visibly holds text: a printable byte that is not part of the
 * stripped prefix, and no CR or ESC (which may hide what precedes or follows them).
 */
static int exc_blank(const uint8_t *data, size_t size)
{
	size_t i;
	int text = 0;

	for (i = 0; i < size; i++) {
		if (data[i] == '\r' || data[i] == 0x1b)
			return 1;
		/* bytes of the prefix may all be stripped */
		text |= data[i] > 0x20 && data[i] != 0x7f && !strchr(EXCERPT_PREFIX, data[i]);
	}
	return !text;
}

/* Raw C0 controls and DEL, which need no UTF-8 decoding to spot. */
static int exc_c0(const char *s, size_t n, int allow_tab)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (((unsigned char)s[i] < 0x20 && !(allow_tab && s[i] == '\t')) || s[i] == 0x7f)
			return 1;
	return 0;
}

static void exc_check_lines(const struct strbuf *out)
{
	size_t pos = 0, lines = 0;

	FUZZ_CHECK(!out->len || out->buf[out->len - 1] == '\n', "excerpt does not end in LF");
	FUZZ_CHECK(strlen(out->buf) == out->len, "excerpt holds a NUL");
	while (pos < out->len) {
		const char *line = out->buf + pos, *nl = memchr(line, '\n', out->len - pos);
		size_t n = (size_t)(nl - line);

		lines++;
		FUZZ_CHECK(n <= EXCERPT_LINE_MAX + 3, "excerpt line of %zu bytes", n);
		FUZZ_CHECK(!exc_c0(line, n, 1), "control character in excerpt line '%.*s'",
			   (int)n, line);
		FUZZ_CHECK(!memmem(line, n, EXCERPT_PREFIX, strlen(EXCERPT_PREFIX)),
			   "checkout prefix left in '%.*s'", (int)n, line);
		pos += n + 1;
	}
	FUZZ_CHECK(lines <= EXCERPT_MAX_LINES, "excerpt of %zu lines", lines);
}

static void exc_check_normalise(const char *line)
{
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT, c = STRBUF_INIT, fp = STRBUF_INIT;
	char id[13];
	size_t i;

	excerpt_normalise(&a, line);
	excerpt_normalise(&b, line);
	FUZZ_CHECK(!strcmp(a.buf, b.buf), "normalisation is not deterministic");
	FUZZ_CHECK(!a.len || (a.buf[0] != ' ' && a.buf[a.len - 1] != ' '), "not trimmed: '%s'",
		   a.buf);
	FUZZ_CHECK(!strstr(a.buf, "  "), "space run left: '%s'", a.buf);
	/*
	 * Not idempotent: removing ":3" from "42:3&:5b3c4d5e6f7" exposes a hex id that a
	 * second pass removes.  Fingerprints normalise once, so stability is enough;
	 * a second pass must still be stable and never grow the line.
	 */
	excerpt_normalise(&c, a.buf);
	FUZZ_CHECK(c.len <= a.len, "a second normalisation grew the line");
	excerpt_fingerprint(&fp, "p", "c", line);
	excerpt_flag_id(id, fp.buf);
	FUZZ_CHECK(strlen(id) == 12 && strspn(id, "0123456789abcdef") == 12, "flag id '%s'", id);
	for (i = 0; i < a.len; i++)
		FUZZ_CHECK(a.buf[i] != '\n', "newline in a normalised line");
	strbuf_release(&a);
	strbuf_release(&b);
	strbuf_release(&c);
	strbuf_release(&fp);
}

int fuzz_excerpt_one(const uint8_t *data, size_t size)
{
	struct strbuf out = STRBUF_INIT, first = STRBUF_INIT, again = STRBUF_INIT;
	char *line;

	excerpt_extract(&out, &first, (const char *)data, size, EXCERPT_PREFIX "/");
	exc_check_lines(&out);
	FUZZ_CHECK(!exc_c0(first.buf, first.len, 1), "control character in first error '%s'",
		   first.buf);
	if (!exc_blank(data, size))
		FUZZ_CHECK(strspn(out.buf, " \t\n") < out.len, "blank excerpt of a non-blank log");
	excerpt_extract(&again, NULL, (const char *)data, size, EXCERPT_PREFIX "/");
	FUZZ_CHECK(!strcmp(out.buf, again.buf), "extraction is not deterministic");
	exc_check_normalise(first.buf);
	line = fuzz_strdup(data, size < 512 ? size : 512);
	exc_check_normalise(line);
	free(line);
	strbuf_release(&out);
	strbuf_release(&first);
	strbuf_release(&again);
	return 0;
}

#ifndef FUZZ_REPLAY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_excerpt_one(data, size);
}
#endif
