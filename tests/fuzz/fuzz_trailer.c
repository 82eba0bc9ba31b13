/*
 * Fuzz target: the commit-message parser (merge/repo/trailer.c).  Properties: subject is
 * one trimmed line, body has LF line ends and no trailing blank lines, a Message-ID
 * is a bare printable msgid with an '@', sign-offs are trimmed and each one's
 * address is found again by trailer_has_signoff(), and parsing "subject\n\nbody"
 * again gives the same result.
 */
#include <ctype.h>
#include <stdint.h>
#include <string.h>

#include "merge/repo/trailer_int.h"
#include "tests/fuzz/fuzz.h"
#include "util/strbuf.h"
#include "util/banned.h"

static int tr_trimmed(const char *s)
{
	size_t len = strlen(s);

	return !len || (!isspace((unsigned char)s[0]) && !isspace((unsigned char)s[len - 1]));
}

static void tr_check_msgid(const char *id)
{
	size_t i, len = strlen(id);

	FUZZ_CHECK(len && len <= 998 && strchr(id, '@'), "msgid '%s'", id);
	for (i = 0; i < len; i++)
		FUZZ_CHECK((unsigned char)id[i] > 0x20 && (unsigned char)id[i] < 0x7f &&
			   id[i] != '<' && id[i] != '>', "msgid byte 0x%02x", (unsigned char)id[i]);
}

/* The address part of a sign-off as the header describes it: <...> or the whole. */
static void tr_address(struct strbuf *out, const char *v)
{
	const char *lt = strrchr(v, '<'), *gt = lt ? strchr(lt, '>') : NULL;

	if (lt && gt)
		strbuf_add(out, lt + 1, gt - lt - 1);
	else
		strbuf_addstr(out, v);
	strbuf_trim(out);
}

static void tr_check(const struct trailer_info *info, const char *msg)
{
	size_t i, blen;

	FUZZ_CHECK(info->subject && info->body, "NULL subject or body");
	FUZZ_CHECK(!strchr(info->subject, '\n') && !strchr(info->subject, '\r'),
		   "subject of several lines");
	FUZZ_CHECK(tr_trimmed(info->subject), "subject not trimmed: '%s'", info->subject);
	FUZZ_CHECK(!strchr(info->body, '\r'), "CR left in body");
	blen = strlen(info->body);
	FUZZ_CHECK(!blen || (info->body[blen - 1] == '\n' &&
			     (blen < 2 || !isspace((unsigned char)info->body[blen - 2]))),
		   "body with trailing blank lines");
	if (info->message_id) {
		char *again;

		tr_check_msgid(info->message_id);
		if (!strstr(info->message_id, "://")) {
			struct strbuf v = STRBUF_INIT;

			strbuf_addf(&v, "<%s>", info->message_id);
			again = trailer_msgid_from_value(v.buf);
			FUZZ_CHECK(again && !strcmp(again, info->message_id),
				   "msgid '%s' does not come back from <…>", info->message_id);
			free(again);
			strbuf_release(&v);
		}
	}
	for (i = 0; i < info->signoffs_nr; i++) {
		struct strbuf addr = STRBUF_INIT;

		FUZZ_CHECK(tr_trimmed(info->signoffs[i]), "sign-off not trimmed");
		FUZZ_CHECK(!strchr(info->signoffs[i], '\n'), "sign-off of several lines");
		tr_address(&addr, info->signoffs[i]);
		if (addr.len)
			FUZZ_CHECK(trailer_has_signoff(msg, addr.buf), "sign-off '%s' (address "
				   "'%s') not found by trailer_has_signoff", info->signoffs[i],
				   addr.buf);
		strbuf_release(&addr);
	}
}

static void tr_check_reparse(const struct trailer_info *info)
{
	struct trailer_info again = TRAILER_INFO_INIT;
	struct strbuf msg = STRBUF_INIT;
	size_t i;

	strbuf_addf(&msg, "%s\n\n%s", info->subject, info->body);
	trailer_parse(&again, msg.buf);
	FUZZ_CHECK(!strcmp(again.subject, info->subject), "subject changed on reparse: '%s' "
		   "-> '%s'", info->subject, again.subject);
	FUZZ_CHECK(!strcmp(again.body, info->body), "body changed on reparse");
	FUZZ_CHECK(!again.message_id == !info->message_id &&
		   (!info->message_id || !strcmp(again.message_id, info->message_id)),
		   "message id changed on reparse");
	FUZZ_CHECK(again.signoffs_nr == info->signoffs_nr, "sign-offs changed on reparse");
	for (i = 0; i < info->signoffs_nr; i++)
		FUZZ_CHECK(!strcmp(again.signoffs[i], info->signoffs[i]), "sign-off changed");
	trailer_info_release(&again);
	strbuf_release(&msg);
}

int fuzz_trailer_one(const uint8_t *data, size_t size)
{
	struct trailer_info info = TRAILER_INFO_INIT;
	char *msg = fuzz_strdup(data, size), *id;

	trailer_parse(&info, msg);
	tr_check(&info, msg);
	tr_check_reparse(&info);
	trailer_info_release(&info);
	id = trailer_msgid_from_value(msg);
	if (id)
		tr_check_msgid(id);
	free(id);
	trailer_parse(&info, msg);
	trailer_parse(&info, msg); /* a second parse into a used struct must not leak */
	trailer_info_release(&info);
	free(msg);
	return 0;
}

#ifndef FUZZ_REPLAY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_trailer_one(data, size);
}
#endif
