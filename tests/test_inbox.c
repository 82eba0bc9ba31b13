/* notify/'s inbound mail parser: hostile messages, command lines, Authentication-Results. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "notify/inbox.h"
#include "util/error.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* Parses `text` with "\n" turned into CRLF when crlf is set. */
static int parse(struct inbox_mail *m, const char *text, int crlf)
{
	struct strbuf sb = STRBUF_INIT;
	int ret;

	for (; *text; text++) {
		if (*text == '\n' && crlf)
			strbuf_addch(&sb, '\r');
		strbuf_addch(&sb, *text);
	}
	ret = inbox_mail_parse(m, sb.buf, sb.len);
	strbuf_release(&sb);
	return ret;
}

static void test_plain_reply(void **state)
{
	static const char msg[] =
		"Return-Path: <viktor@vfs.example.org>\n"
		"From: Viktor Lindqvist <viktor@vfs.example.org>\n"
		"To: nextbot <nextbot@example.org>\n"
		"Cc: Zo\xc3\xab <zoe@example.org>, \"Lists, All\" <linux-fs@lists.example.org>,\n"
		" undisclosed: ;\n"
		"Subject: Re: [vfs] build failure:\n"
		"  fs: add fs_x\n"
		"Message-ID: <cmd-1@vfs.example.org>\n"
		"In-Reply-To: <nextbot.abc@example.org>\n"
		"References: <patch-1@example.org>\n"
		"\t<nextbot.abc@example.org>\n"
		"\n"
		"> #nextbot drop quoted\n"
		"#nextbot drop wrong locking\n"
		"  #NEXTBOT undrop  \n"
		"#nextbotdrop not a command\n"
		"#nextbot: reopen\n"
		"#Nextbot:fix: a: b\n"
		"#nextbot:\n"
		"-- \n"
		"#nextbot invalid in the signature\n";
	int crlf;

	for (crlf = 0; crlf < 2; crlf++) {
		struct inbox_mail m;
		struct strvec cmds = STRVEC_INIT;

		assert_int_equal(parse(&m, msg, crlf), 0);
		assert_string_equal(m.from_addr, "viktor@vfs.example.org");
		assert_string_equal(m.from_name, "Viktor Lindqvist");
		assert_string_equal(m.subject, "Re: [vfs] build failure:  fs: add fs_x");
		assert_string_equal(m.message_id, "<cmd-1@vfs.example.org>");
		assert_string_equal(m.key, "<cmd-1@vfs.example.org>");
		assert_string_equal(m.in_reply_to, "<nextbot.abc@example.org>");
		assert_int_equal(m.references.nr, 2);
		assert_string_equal(m.references.v[1], "<nextbot.abc@example.org>");
		assert_int_equal(m.recipients.nr, 3);
		assert_string_equal(m.recipients.v[2], "linux-fs@lists.example.org");
		assert_string_equal(m.return_path, "viktor@vfs.example.org");
		assert_null(m.auto_submitted);
		assert_int_equal(inbox_mail_commands(&cmds, m.body, 10), 5);
		assert_string_equal(cmds.v[0], "drop wrong locking");
		assert_string_equal(cmds.v[1], "undrop");
		assert_string_equal(cmds.v[2], "reopen");
		assert_string_equal(cmds.v[3], "fix: a: b");
		assert_string_equal(cmds.v[4], "");
		strvec_clear(&cmds);
		inbox_mail_release(&m);
	}
}

/*
 * A quote without '>': the indented lines after an attribution line are someone
 * else's text (issue 38); the answer's own lines, indented or not, after the quote act.
 */
static void test_indented_quote(void **state)
{
	static const char body[] =
		"I agree.\n"
		"\n"
		"On Mon, 7 Dec 2026 at 10:00, Andrea Morten <andrea@example.org> wrote:\n"
		"    Looks wrong to me.\n"
		"\n"
		"    #nextbot drop quoted by indentation\n"
		"\t#nextbot undrop quoted with a tab\n"
		"Back to my own text.\n"
		"  #nextbot reopen\n"
		"Ann <ann@example.org> writes:\n"
		"  #nextbot invalid quoted again\n"
		"\n"
		"Andrea Morten a \xc3\xa9" "crit :\n"
		"  #nextbot fix: quoted in French\n"
		"#nextbot fix: mine\n"
		"I wrote: nothing\n"
		"#nextbot fix: what Ann wrote:\n";
	struct strvec cmds = STRVEC_INIT;

	(void)state;
	assert_int_equal(inbox_mail_commands(&cmds, body, 10), 3);
	assert_string_equal(cmds.v[0], "reopen");
	assert_string_equal(cmds.v[1], "fix: mine");
	assert_string_equal(cmds.v[2], "fix: what Ann wrote:");
	strvec_clear(&cmds);
}

/* A review's trailers: the sender's own lines only, never quoted ones (issue 38). */
static void test_review_trailers(void **state)
{
	static const char body[] =
		"> Reviewed-by: Quoted <q@example.org>\n"
		"On Mon, Ann <ann@example.org> wrote:\n"
		"  Acked-by: Indented <i@example.org>\n"
		"Looks good.\n"
		"Reviewed-by: Rev Iewer <rev@example.org>\n"
		"  Tested-by: Not at the start <t@example.org>\n"
		"Acked-by: no address\n"
		"Signed-off-by: Ann <ann@example.org>\n"
		"-- \n"
		"Reviewed-by: In the signature <s@example.org>\n";
	struct strvec keys = STRVEC_INIT, addrs = STRVEC_INIT;

	(void)state;
	assert_int_equal(inbox_mail_trailers(&keys, &addrs, body), 2);
	assert_string_equal(keys.v[0], "Reviewed-by");
	assert_string_equal(addrs.v[0], "rev@example.org");
	assert_string_equal(keys.v[1], "Signed-off-by");
	assert_string_equal(addrs.v[1], "ann@example.org");
	strvec_clear(&keys);
	strvec_clear(&addrs);
}

static void test_mime_encodings(void **state)
{
	static const char msg[] =
		"From: =?ISO-8859-1?Q?Zo=EB_=C5ngstr=F6m?= <zoe@example.org>\n"
		"Subject: =?UTF-8?B?UmU6IFpvw6s=?= =?UTF-8?Q?_and_=C3=85?= x\n"
		"Message-ID: <m2@example.org>\n"
		"MIME-Version: 1.0\n"
		"Content-Type: multipart/mixed; boundary=\"outer\"\n"
		"\n"
		"preamble #nextbot drop not this\n"
		"--outer\n"
		"Content-Type: multipart/alternative; boundary=outer-inner\n"
		"\n"
		"--outer-inner\n"
		"Content-Type: text/html; charset=utf-8\n"
		"\n"
		"<p>#nextbot drop from html</p>\n"
		"--outer-inner\n"
		"Content-Type: text/plain; charset=iso-8859-1\n"
		"Content-Transfer-Encoding: quoted-printable\n"
		"\n"
		"Gr=FC=DFe,\n"
		"#nextbot fix: mm: a very long subject that was wrapped by quoted-printab=\n"
		"le soft breaks\n"
		"--outer-inner--\n"
		"--outer\n"
		"Content-Type: text/plain\n"
		"Content-Disposition: attachment; filename=x.txt\n"
		"\n"
		"#nextbot drop from the attachment\n"
		"--outer--\n"
		"epilogue\n";
	struct inbox_mail m;
	struct strvec cmds = STRVEC_INIT;

	assert_int_equal(parse(&m, msg, 1), 0);
	assert_string_equal(m.from_name, "Zo\xc3\xab \xc3\x85ngstr\xc3\xb6m");
	assert_string_equal(m.subject, "Re: Zo\xc3\xab and \xc3\x85 x");
	assert_non_null(strstr(m.body, "Gr\xc3\xbc\xc3\x9f" "e,"));
	assert_int_equal(inbox_mail_commands(&cmds, m.body, 10), 1);
	assert_string_equal(cmds.v[0],
			    "fix: mm: a very long subject that was wrapped by quoted-printable "
			    "soft "
			    "breaks");
	strvec_clear(&cmds);
	inbox_mail_release(&m);
}

static void test_base64_flowed_html(void **state)
{
	/* "#nextbot invalid not a bug\n" in base64, flowed text, then an HTML-only mail */
	static const char b64[] = "From: a@example.org\n"
				  "Content-Type: text/plain; charset=utf-8\n"
				  "Content-Transfer-Encoding: base64\n"
				  "\n"
				  "I25leHRib3QgaW52YWxp\n"
				  "ZCBub3QgYSBidWcK\n";
	static const char flowed[] = "From: a@example.org\n"
				     "Content-Type: text/plain; format=flowed; delsp=no\n"
				     "\n"
				     "#nextbot fix: net: a subject wrapped \n"
				     "by the client\n"
				     "> #nextbot drop \n"
				     "> quoted and flowed\n";
	static const char html[] = "From: a@example.org\n"
				   "Content-Type: text/html\n"
				   "\n"
				   "<html><head><style>p{}</style></head><body><div>Hi,</div>"
				   "<div>#nextbot invalid a &amp; b &#x263A;</div>"
				   "<blockquote>#nextbot drop quoted</blockquote></body></html>\n";
	struct inbox_mail m;
	struct strvec cmds = STRVEC_INIT;

	assert_int_equal(parse(&m, b64, 0), 0);
	assert_int_equal(inbox_mail_commands(&cmds, m.body, 10), 1);
	assert_string_equal(cmds.v[0], "invalid not a bug");
	inbox_mail_release(&m);
	strvec_clear(&cmds);

	assert_int_equal(parse(&m, flowed, 1), 0);
	assert_int_equal(inbox_mail_commands(&cmds, m.body, 10), 1);
	assert_string_equal(cmds.v[0], "fix: net: a subject wrapped by the client");
	inbox_mail_release(&m);
	strvec_clear(&cmds);

	assert_int_equal(parse(&m, html, 0), 0);
	assert_int_equal(inbox_mail_commands(&cmds, m.body, 10), 1);
	assert_string_equal(cmds.v[0], "invalid a & b \xe2\x98\xba");
	inbox_mail_release(&m);
	strvec_clear(&cmds);
}

static void test_hostile_input(void **state)
{
	struct inbox_mail m;
	struct strbuf big = STRBUF_INIT;
	char bin[256];
	size_t i;

	/* not a message */
	assert_int_equal(parse(&m, "", 0), NB_EINVALID);
	inbox_mail_release(&m);
	assert_int_equal(parse(&m, "hello world\n\nbody\n", 0), NB_EINVALID);
	inbox_mail_release(&m);
	assert_int_equal(parse(&m, "Subject: no sender\n\nbody\n", 0), NB_EINVALID);
	assert_non_null(strstr(nb_error_last(), "no From"));
	inbox_mail_release(&m);
	assert_int_equal(parse(&m, " folded first\nFrom: a@b.org\n", 0), NB_EINVALID);
	inbox_mail_release(&m);

	/* binary bytes everywhere: NULs, invalid UTF-8, controls */
	for (i = 0; i < sizeof(bin); i++)
		bin[i] = (char)i;
	strbuf_addstr(&big, "From: \"a\x01\xff\" <a@example.org>\r\nSubject: x\xc3\x28\x1b[31m\r\n"
			    "Message-ID: <bad id@x>\r\n\r\n#nextbot drop \xfe\xff ok\r\n");
	strbuf_add(&big, bin, sizeof(bin));
	assert_int_equal(inbox_mail_parse(&m, big.buf, big.len), 0);
	assert_string_equal(m.from_addr, "a@example.org");
	assert_true(utf8_is_valid(m.from_name, strlen(m.from_name)));
	assert_true(utf8_is_valid(m.subject, strlen(m.subject)));
	assert_null(strchr(m.subject, '\x1b'));
	assert_true(utf8_is_valid(m.body, strlen(m.body)));
	assert_null(m.message_id); /* not a safe msg-id: the key is the digest */
	assert_true(!strncmp(m.key, "sha256:", 7) && strlen(m.key) == 7 + 64);
	inbox_mail_release(&m);

	/* huge: capped, still parsed */
	strbuf_reset(&big);
	strbuf_addstr(&big, "From: a@example.org\nSubject: big\n\n#nextbot undrop\n");
	while (big.len <= INBOX_MAIL_MAX + 100)
		strbuf_addstr(&big, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n");
	assert_int_equal(inbox_mail_parse(&m, big.buf, big.len), 0);
	assert_true(m.truncated);
	assert_true(strlen(m.body) <= INBOX_BODY_MAX);
	assert_true(!strncmp(m.body, "#nextbot undrop", 15));
	inbox_mail_release(&m);

	/* a multipart without its closing line, a missing boundary, nesting too deep */
	strbuf_reset(&big);
	strbuf_addstr(&big, "From: a@example.org\nContent-Type: multipart/mixed; boundary=b0\n\n");
	for (i = 0; i < 20; i++)
		strbuf_addf(&big, "--b%zu\nContent-Type: multipart/mixed; boundary=b%zu\n\n", i,
			    i + 1);
	strbuf_addstr(&big, "--b20\n\n#nextbot drop too deep\n");
	assert_int_equal(inbox_mail_parse(&m, big.buf, big.len), 0);
	assert_string_equal(m.body, "");
	inbox_mail_release(&m);
	assert_int_equal(parse(&m, "From: a@example.org\nContent-Type: multipart/mixed\n\n"
				   "#nextbot drop\n", 0), 0);
	assert_string_equal(m.body, "");
	inbox_mail_release(&m);
	strbuf_release(&big);
}

static void test_loops_and_bounces(void **state)
{
	struct inbox_mail m;

	assert_int_equal(parse(&m, "From: MAILER-DAEMON@mx.example.org\nReturn-Path: <>\n"
				   "Auto-Submitted: Auto-Replied (vacation)\n"
				   "Content-Type: multipart/report; report-type=delivery-status;"
				   " boundary=x\n\n--x\n\n#nextbot drop\n--x--\n", 0),
			 0);
	assert_string_equal(m.return_path, "");
	assert_string_equal(m.auto_submitted, "auto-replied");
	assert_true(m.is_report);
	inbox_mail_release(&m);
	assert_int_equal(parse(&m, "From: a@example.org\nPrecedence: bulk\n\nx\n", 0), 0);
	assert_true(m.autoreply);
	inbox_mail_release(&m);
	assert_int_equal(parse(&m, "From: a@example.org\nX-Autoreply: yes\n\nx\n", 0), 0);
	assert_true(m.autoreply);
	inbox_mail_release(&m);
	assert_int_equal(parse(&m, "From: a@example.org\nPrecedence: list\n\nx\n", 0), 0);
	assert_false(m.autoreply);
	inbox_mail_release(&m);
}

static enum inbox_auth auth(const char *headers, const char *id)
{
	struct strbuf sb = STRBUF_INIT, why = STRBUF_INIT;
	struct inbox_mail m;
	enum inbox_auth a;

	strbuf_addf(&sb, "%sFrom: Viktor <viktor@VFS.example.org>\n\nbody\n", headers);
	assert_int_equal(inbox_mail_parse(&m, sb.buf, sb.len), 0);
	a = inbox_mail_auth(&m, id, &why);
	print_message("# %s\n", why.buf);
	inbox_mail_release(&m);
	strbuf_release(&sb);
	strbuf_release(&why);
	return a;
}

/* The receiving server's own Received: field, as it stands below its own results. */
#define RCVD "Received: from mail.vfs.example.org by mx.example.org with ESMTPS\n"

static void test_authentication_results(void **state)
{
	assert_int_equal(auth("", "mx.example.org"), INBOX_AUTH_MISSING);
	assert_int_equal(auth(RCVD, "mx.example.org"), INBOX_AUTH_MISSING);
	assert_int_equal(auth("Authentication-Results: mx.example.org;\n"
			      " dkim=pass (2048-bit key) header.d=vfs.example.org header.s=k1;\n"
			      " dmarc=pass (p=none) header.from=vfs.example.org\n" RCVD,
			      "MX.example.org"),
			 INBOX_AUTH_PASS);
	/* split over two fields, one per method, as opendkim and opendmarc write them:
	   both count (the dmarc=fail of the upper one refuses the dkim=pass below it) */
	assert_int_equal(auth("Authentication-Results: mx.example.org; spf=pass\n"
			      "Authentication-Results: mx.example.org 1; dkim=pass "
			      "header.i=@vfs.example.org\n" RCVD,
			      "mx.example.org"),
			 INBOX_AUTH_PASS);
	assert_int_equal(auth("Authentication-Results: mx.example.org; dmarc=fail "
			      "header.from=vfs.example.org\n"
			      "Authentication-Results: mx.example.org; dkim=pass "
			      "header.d=vfs.example.org\n" RCVD,
			      "mx.example.org"),
			 INBOX_AUTH_FAIL);
	assert_int_equal(auth("Authentication-Results: mx.example.org; spf=pass\n"
			      "Authentication-Results: mx.example.org; dmarc=pass\n" RCVD,
			      "mx.example.org"),
			 INBOX_AUTH_PASS);
	/* another domain's signature does not vouch for this From: */
	assert_int_equal(auth("Authentication-Results: mx.example.org; dkim=pass "
			      "header.d=evil.example.com\n" RCVD,
			      "mx.example.org"),
			 INBOX_AUTH_FAIL);
	/* another server's results do not count */
	assert_int_equal(auth("Authentication-Results: other.example.net; dmarc=pass\n" RCVD,
			      "mx.example.org"),
			 INBOX_AUTH_MISSING);
	/* a forged pass below the server's Received: */
	assert_int_equal(auth("Authentication-Results: mx.example.org; dmarc=fail "
			      "header.from=vfs.example.org\n" RCVD
			      "Authentication-Results: mx.example.org; dmarc=pass\n",
			      "mx.example.org"),
			 INBOX_AUTH_FAIL);
	assert_int_equal(auth("Authentication-Results: mx.example.org; spf=none\n" RCVD
			      "Authentication-Results: mx.example.org; dkim=pass "
			      "header.d=vfs.example.org\n",
			      "mx.example.org"),
			 INBOX_AUTH_FAIL);
	assert_int_equal(auth(RCVD "Authentication-Results: mx.example.org; dmarc=pass\n"
			      "Received: from evil.example.com by mail.vfs.example.org\n",
			      "mx.example.org"),
			 INBOX_AUTH_MISSING);
	/* ... and directly below the server's own, with no Received: anywhere: the fields
	   of the server and the sender cannot be told apart, so none is believed */
	assert_int_equal(auth("Authentication-Results: mx.example.org; dkim=none\n"
			      "Authentication-Results: mx.example.org; dmarc=pass "
			      "header.from=vfs.example.org\n",
			      "mx.example.org"),
			 INBOX_AUTH_MISSING);
	/* dkim passes but dmarc says fail: refused */
	assert_int_equal(auth("Authentication-Results: mx.example.org; dmarc=fail; dkim=pass "
			      "header.d=vfs.example.org\n" RCVD,
			      "mx.example.org"),
			 INBOX_AUTH_FAIL);
	/* comments and quoted values */
	assert_int_equal(auth("Authentication-Results: mx.example.org (v=1);\n"
			      "\tdkim=pass (good sig) header.d=\"vfs.example.org\"\n" RCVD,
			      "mx.example.org"),
			 INBOX_AUTH_PASS);
	assert_int_equal(auth("Authentication-Results: mx.example.org; none\n" RCVD,
			      "mx.example.org"),
			 INBOX_AUTH_FAIL);
}

/* header.i must lie within header.d (RFC 6376 section 3.5, "i="). */
static void test_dkim_identity(void **state)
{
	static const struct {
		const char *props;
		enum inbox_auth want;
	} cases[] = {
		{ "header.d=vfs.example.org header.i=@vfs.example.org", INBOX_AUTH_PASS },
		{ "header.d=vfs.example.org header.i=viktor@VFS.Example.org", INBOX_AUTH_PASS },
		{ "header.d=VFS.example.org header.i=@lists.vfs.example.org", INBOX_AUTH_PASS },
		{ "header.d=vfs.example.org header.i=vfs.example.org", INBOX_AUTH_PASS },
		/* the signer's d= is another domain: i= naming the From: domain is no help */
		{ "header.d=evil.example.com header.i=@vfs.example.org", INBOX_AUTH_FAIL },
		/* i= outside d= vouches for nothing, even with d= the From: domain */
		{ "header.d=vfs.example.org header.i=@evil.example.com", INBOX_AUTH_FAIL },
		{ "header.d=vfs.example.org header.i=@xvfs.example.org", INBOX_AUTH_FAIL },
		{ "header.d=vfs.example.org header.i=@example.org", INBOX_AUTH_FAIL },
		{ "header.d=vfs.example.org header.i=viktor@", INBOX_AUTH_FAIL },
		{ "header.d=vfs.example.org header.i=viktor", INBOX_AUTH_FAIL },
		{ "header.d= header.i=@vfs.example.org", INBOX_AUTH_FAIL },
		/* without d=, the domain of i= is the claim */
		{ "header.i=@vfs.example.org", INBOX_AUTH_PASS },
		{ "header.i=@sub.vfs.example.org", INBOX_AUTH_FAIL },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct strbuf h = STRBUF_INIT;

		strbuf_addf(&h, "Authentication-Results: mx.example.org; dkim=pass %s\n" RCVD,
			    cases[i].props);
		if (auth(h.buf, "mx.example.org") != cases[i].want)
			fail_msg("dkim=pass %s: wanted %d", cases[i].props, cases[i].want);
		strbuf_release(&h);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_reply),
		cmocka_unit_test(test_indented_quote),
		cmocka_unit_test(test_review_trailers),
		cmocka_unit_test(test_mime_encodings),
		cmocka_unit_test(test_base64_flowed_html),
		cmocka_unit_test(test_hostile_input),
		cmocka_unit_test(test_loops_and_bounces),
		cmocka_unit_test(test_authentication_results),
		cmocka_unit_test(test_dkim_identity),
	};

	return cmocka_run_group_tests_name("inbox", tests, NULL, NULL);
}
