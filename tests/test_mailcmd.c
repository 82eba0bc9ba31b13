/*
 * bot/'s commands by mail: what looks like an id, suggestions, where `#nextbot test:`
 * may fetch from, branch names.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bot/config/config.h"
#include "bot/mail/mail.h"
#include "util/strbuf.h"
#include "util/banned.h"

/* A config with the given base url, one tree url and test_urls (NULL-terminated). */
static void cfg_init(struct config *cfg, struct config_tree *tree, char *base, char *tree_url,
		     const char *const *test_urls)
{
	memset(cfg, 0, sizeof(*cfg));
	memset(tree, 0, sizeof(*tree));
	cfg->base.url = base;
	tree->url = tree_url;
	cfg->trees = tree;
	cfg->trees_nr = 1;
	cfg->inbox.test_urls = (struct strvec)STRVEC_INIT;
	for (; test_urls && *test_urls; test_urls++)
		strvec_push(&cfg->inbox.test_urls, *test_urls);
}

/* Expects `url` allowed (want NULL) or refused with `want` in the reason. */
static void expect(const struct config *cfg, const char *url, const char *want)
{
	struct strbuf why = STRBUF_INIT;
	int ret = mailtest_url_check(cfg, url, &why);

	if (!want && ret != 0)
		fail_msg("%s refused: %s", url, why.buf);
	if (want && (ret == 0 || !strstr(why.buf, want)))
		fail_msg("%s: wanted a refusal saying '%s', got %d '%s'", url, want, ret, why.buf);
	strbuf_release(&why);
}

static void test_schemes_and_shapes(void **state)
{
	struct config cfg;
	struct config_tree t;

	cfg_init(&cfg, &t, "git://127.0.0.1/linux.git", "https://127.0.0.1:8443/net.git", NULL);
	expect(&cfg, "git://127.0.0.1/net.git", NULL);
	expect(&cfg, "https://127.0.0.1/other/tree.git", NULL);
	expect(&cfg, "https://127.0.0.1:8443/net.git", NULL);
	expect(&cfg, "file:///srv/git/net.git", "only https:// and git://");
	expect(&cfg, "ext::sh -c id", "not fetch"); /* blanks are refused first */
	expect(&cfg, "ext::sh", "only https:// and git://");
	expect(&cfg, "https://127.0.0.1/%2e%2e/x", "character");
	expect(&cfg, "/srv/git/net.git", "only https:// and git://");
	expect(&cfg, "../net.git", "only https:// and git://");
	expect(&cfg, "ssh://git@127.0.0.1/net.git", "only https:// and git://");
	expect(&cfg, "git@127.0.0.1:net.git", "only https:// and git://");
	expect(&cfg, "http://127.0.0.1/net.git", "only https:// and git://");
	expect(&cfg, "https://user:pw@127.0.0.1/net.git", "credentials");
	expect(&cfg, "https://127.0.0.1/net.git?x=1", "query");
	expect(&cfg, "https://127.0.0.1/a/../../etc", ". or .. segments");
	expect(&cfg, "https://127.0.0.1:99999/net.git", "host or port");
	expect(&cfg, "https://127.0.0.1\n/net.git", "character");
	expect(&cfg, "git://192.168.1.7/net.git", "not a host of the configured trees");
	strvec_clear(&cfg.inbox.test_urls);
}

static void test_test_urls(void **state)
{
	static const char *const urls[] = { "git://127.0.0.1:9418/pub/", "git://localhost:9000/",
					     "https://[::1]/x", NULL };
	struct config cfg;
	struct config_tree t;

	cfg_init(&cfg, &t, "https://git.example.org/linux.git", "/srv/git/net.git", urls);
	expect(&cfg, "git://127.0.0.1/pub/net.git", NULL); /* 9418 is git's own port */
	expect(&cfg, "git://127.0.0.1:9418/pub/net.git", NULL);
	expect(&cfg, "git://127.0.0.1:9419/pub/net.git", "not below any of inbox.test_urls");
	expect(&cfg, "git://127.0.0.1/public/net.git", "not below any of inbox.test_urls");
	expect(&cfg, "https://127.0.0.1/pub/net.git", "not below any of inbox.test_urls");
	expect(&cfg, "https://[::1]/x/net.git", NULL);
	expect(&cfg, "https://[::1]/xy", "not below any of inbox.test_urls");
	/* named in test_urls, but it is loopback and no tree lives there */
	expect(&cfg, "git://localhost:9000/net.git", "local or private network");
	/* the trees' hosts are not allowed by default once test_urls is set */
	expect(&cfg, "https://git.example.org/linux.git", "not below any of inbox.test_urls");
	strvec_clear(&cfg.inbox.test_urls);

	/* a host the trees live on may be private */
	cfg_init(&cfg, &t, "git://localhost/linux.git", "/srv/git/net.git", NULL);
	expect(&cfg, "git://localhost/net.git", NULL);
	expect(&cfg, "https://LOCALHOST/net.git", NULL);
	strvec_clear(&cfg.inbox.test_urls);
}

static void test_branch_names(void **state)
{
	assert_true(mailtest_branch_ok("fix-locking"));
	assert_true(mailtest_branch_ok("zoe/net-next-fix_v2"));
	assert_false(mailtest_branch_ok(""));
	assert_false(mailtest_branch_ok("-upload-pack=touch /x"));
	assert_false(mailtest_branch_ok("a..b"));
	assert_false(mailtest_branch_ok("x.lock"));
	assert_false(mailtest_branch_ok("a b"));
	assert_false(mailtest_branch_ok("refs/*"));
	assert_false(mailtest_branch_ok("a@{1}"));
	assert_false(mailtest_branch_ok("/abs"));
	assert_false(mailtest_branch_ok("$(id)"));
}

static int id_like(const char *s)
{
	return mailcmd_id_like(s, strlen(s));
}

static void test_id_like(void **state)
{
	assert_true(id_like("deadbee"));
	assert_true(id_like("deadbeef0000"));
	assert_true(id_like("DEADBEEF0000"));
	assert_true(id_like("0123456789012345678901234567890123456789"));
	assert_true(id_like("<20261130-route-limit-v1@example.org>"));
	assert_true(id_like("<a@b>"));
	assert_false(id_like("deadbe"));     /* 6: too short */
	assert_false(id_like("01234567890123456789012345678901234567890")); /* 41 */
	assert_false(id_like("deadbeefg"));
	assert_false(id_like("wrong"));
	assert_false(id_like("because"));    /* not all hex */
	assert_true(id_like("defaced"));     /* a word, and 7 hex digits: an id */
	assert_false(id_like("<no-at-sign>"));
	assert_false(id_like("zoe@example.org"));
	assert_false(id_like("<zoe@example.org"));
	assert_false(id_like(""));
}

static void test_suggest(void **state)
{
	static const struct {
		const char *word, *want;
	} cases[] = {
		{ "dorp", "drop" },      { "DROP", "drop" },	 { "drpo", "drop" },
		{ "dop", "drop" },       { "unrdop", "undrop" }, { "undrp", "undrop" },
		{ "invlaid", "invalid" }, { "inavlid", "invalid" }, { "reopn", "reopen" },
		{ "rebopen", "reopen" }, { "fxi", "fix" },	 { "tset", "test" },
		{ "dismiss", "invalid" }, { "Fixed", "fix" },
		/* too far from every command: no guess */
		{ "frobnicate", NULL },  { "stop", NULL },	 { "dr", NULL },
		{ "x", NULL },           { "", NULL },		 { "please", NULL },
		{ "dropdropdropdropdropdropdrop", NULL },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		const char *got = mailcmd_suggest(cases[i].word);

		if (!got != !cases[i].want || (got && strcmp(got, cases[i].want)))
			fail_msg("'%s': wanted %s, got %s", cases[i].word,
				 cases[i].want ? cases[i].want : "none", got ? got : "none");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_id_like),
		cmocka_unit_test(test_suggest),
		cmocka_unit_test(test_schemes_and_shapes),
		cmocka_unit_test(test_test_urls),
		cmocka_unit_test(test_branch_names),
	};

	return cmocka_run_group_tests_name("mailcmd", tests, NULL, NULL);
}
