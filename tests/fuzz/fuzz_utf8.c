/*
 * Fuzz target: UTF-8 repair (util/utf8.h) against an independent validator.
 * Properties: utf8_is_valid agrees with the oracle; repair always gives valid
 * UTF-8 and leaves valid input unchanged; strip_controls leaves no C0, DEL or C1
 * control, keeps the text valid and its length; utf8_from_charset always gives
 * valid UTF-8.
 *
 * Input: byte 0 picks the charset for utf8_from_charset, the rest is the text.
 */
#include <stdint.h>
#include <string.h>

#include "tests/fuzz/fuzz.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/banned.h"

int fuzz_utf8_one(const uint8_t *data, size_t size)
{
	static const char *const charsets[] = { NULL, "UTF-8", "ISO-8859-1", "latin1", "KOI8-R",
						"SHIFT_JIS", "UTF-16", "no-such-charset", "" };
	const char *in, *cs;
	struct strbuf out = STRBUF_INIT, stripped = STRBUF_INIT, conv = STRBUF_INIT;
	size_t len;
	int valid;

	if (!size)
		return 0;
	cs = charsets[data[0] % (sizeof(charsets) / sizeof(*charsets))];
	in = (const char *)data + 1;
	len = size - 1;
	valid = fuzz_utf8_valid(in, len);
	FUZZ_CHECK(!utf8_is_valid(in, len) == !valid, "utf8_is_valid says %d, oracle %d",
		   utf8_is_valid(in, len), valid);

	utf8_repair(&out, in, len);
	FUZZ_CHECK(fuzz_utf8_valid(out.buf, out.len), "repair gave invalid UTF-8");
	if (valid)
		FUZZ_CHECK(out.len == len && !memcmp(out.buf, in, len),
			   "repair changed valid text");

	strbuf_addbuf(&stripped, &out);
	utf8_strip_controls(&stripped);
	FUZZ_CHECK(fuzz_utf8_valid(stripped.buf, stripped.len), "strip gave invalid UTF-8");
	FUZZ_CHECK(!fuzz_has_controls(stripped.buf, stripped.len, ""),
		   "strip left a control character");
	FUZZ_CHECK(stripped.len <= out.len, "strip made the text longer");

	utf8_from_charset(&conv, in, len, cs);
	FUZZ_CHECK(fuzz_utf8_valid(conv.buf, conv.len), "from_charset(%s) gave invalid UTF-8",
		   cs ? cs : "NULL");
	if (valid && (!cs || !strcmp(cs, "UTF-8")))
		FUZZ_CHECK(conv.len == len && !memcmp(conv.buf, in, len),
			   "from_charset(UTF-8) changed valid text");
	strbuf_release(&out);
	strbuf_release(&stripped);
	strbuf_release(&conv);
	return 0;
}

#ifndef FUZZ_REPLAY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_utf8_one(data, size);
}
#endif
