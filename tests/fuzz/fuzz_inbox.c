/*
 * Fuzz target: the inbound mail parser (notify/inbox.h) on any bytes.  Properties:
 * it returns 0 or NB_EINVALID; the key is never missing; every one-line field is
 * valid UTF-8 without control characters; an address passed the strict check; the
 * text is valid UTF-8 with no control but TAB, LF and CR, within its cap; command
 * lines are clean; the Authentication-Results verdict is one of the three; a
 * second parse gives the same key, text and commands.
 */
#include <stdint.h>
#include <string.h>

#include "notify/inbox.h"
#include "notify/mime.h"
#include "tests/fuzz/fuzz.h"
#include "util/error.h"
#include "util/strbuf.h"
#include "util/strvec.h"
#include "util/banned.h"

static void inbox_clean(const char *what, const char *s)
{
	if (!s)
		return;
	FUZZ_CHECK(fuzz_utf8_valid(s, strlen(s)), "%s is not valid UTF-8", what);
	FUZZ_CHECK(!fuzz_has_controls(s, strlen(s), ""), "%s holds a control character", what);
}

static void inbox_vec(const char *what, const struct strvec *v)
{
	size_t i;

	for (i = 0; i < v->nr; i++)
		inbox_clean(what, v->v[i]);
}

int fuzz_inbox_one(const uint8_t *data, size_t size)
{
	struct inbox_mail m, again;
	struct strvec cmds = STRVEC_INIT, cmds2 = STRVEC_INIT;
	struct strbuf why = STRBUF_INIT;
	enum inbox_auth a;
	int ret = inbox_mail_parse(&m, (const char *)data, size), ret2;
	size_t n;

	FUZZ_CHECK(ret == 0 || ret == NB_EINVALID, "parse returned %d", ret);
	FUZZ_CHECK(m.key && *m.key, "no key");
	inbox_clean("key", m.key);
	inbox_clean("message_id", m.message_id);
	inbox_clean("from_name", m.from_name);
	inbox_clean("from_addr", m.from_addr);
	if (m.from_addr)
		FUZZ_CHECK(mime_addr_check(m.from_addr) == 0, "from_addr %s not checked",
			   m.from_addr);
	inbox_clean("subject", m.subject);
	inbox_clean("in_reply_to", m.in_reply_to);
	inbox_clean("return_path", m.return_path);
	inbox_clean("auto_submitted", m.auto_submitted);
	inbox_vec("references", &m.references);
	inbox_vec("recipients", &m.recipients);
	FUZZ_CHECK(m.references.nr <= 100, "%zu references", m.references.nr);
	FUZZ_CHECK(m.body && fuzz_utf8_valid(m.body, strlen(m.body)), "body not valid UTF-8");
	FUZZ_CHECK(!fuzz_has_controls(m.body, strlen(m.body), "\t\n\r"), "control in the body");
	FUZZ_CHECK(strlen(m.body) <= 4 * (size_t)INBOX_BODY_MAX, "body of %zu bytes",
		   strlen(m.body));
	n = inbox_mail_commands(&cmds, m.body, 8);
	FUZZ_CHECK(cmds.nr == (n < 8 ? n : 8), "%zu commands kept of %zu", cmds.nr, n);
	inbox_vec("command", &cmds);
	a = inbox_mail_auth(&m, "mx.example.org", &why);
	FUZZ_CHECK(a == INBOX_AUTH_PASS || a == INBOX_AUTH_MISSING || a == INBOX_AUTH_FAIL,
		   "auth %d", (int)a);
	inbox_clean("auth reason", why.buf);

	ret2 = inbox_mail_parse(&again, (const char *)data, size);
	FUZZ_CHECK(ret2 == ret && !strcmp(again.key, m.key) && !strcmp(again.body, m.body),
		   "a second parse differs");
	inbox_mail_commands(&cmds2, again.body, 8);
	FUZZ_CHECK(cmds2.nr == cmds.nr, "commands differ");
	inbox_mail_release(&again);
	inbox_mail_release(&m);
	strvec_clear(&cmds);
	strvec_clear(&cmds2);
	strbuf_release(&why);
	return 0;
}

#ifndef FUZZ_REPLAY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_inbox_one(data, size);
}
#endif
