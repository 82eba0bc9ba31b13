/* Publishing next and the tag to a bare repository, forced; unreachable urls; credentials. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <cmocka.h>
#include <git2.h>
#include <git2/sys/credential.h>

#include "merge/transport/fetch_int.h"
#include "merge/transport/transport.h"
#include "merge/repo/repo.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "tests/gitfixture.h"
#include "util/banned.h"

static char top[] = "/tmp/nb-push.XXXXXX";

/* The work repository's refs/heads/next and tag next-20260501 at `rev` of w/. */
static void set_next(struct repo *repo, const char *rev)
{
	struct strbuf out = STRBUF_INIT;
	struct nb_oid id;

	assert_int_equal(fixture_sh_out(&out, 1,
					"git -C w push -q -f ../state/repo.git %s:refs/heads/x && "
					"git -C w rev-parse %s",
					rev, rev),
			 0);
	assert_int_equal(nb_oid_parse(&id, out.buf), 0);
	assert_int_equal(repo_ref_set(repo, "refs/heads/next", &id), 0);
	assert_int_equal(repo_ref_set(repo, "refs/tags/next-20260501", &id), 0);
	strbuf_release(&out);
}

static void test_publish(void **state)
{
	struct repo *repo = NULL;
	struct strbuf out = STRBUF_INIT, want = STRBUF_INIT;
	char *path = xstrfmt("%s/state/repo.git", top), *url = xstrfmt("file://%s/pub.git", top);
	struct nb_oid before = NB_OID_INIT;

	assert_int_equal(repo_open(&repo, path), 0);
	assert_int_equal(push_publish(repo, url, "master", "next-20260501", NULL), NB_ENOTFOUND);
	assert_int_equal(fixture_sh_out(&out, 1,
					"git init -q -b master w; cd w; echo 1 > f; c one; "
					"echo 2 > f; c two; git init -q --bare ../pub.git"),
			 0);
	set_next(repo, "HEAD");

	/* night 1: next goes to master, the tag to itself */
	assert_int_equal(push_publish(repo, url, "master", "next-20260501", NULL), 0);
	fixture_sh_out(&want, 1, "git -C w rev-parse HEAD");
	fixture_sh_out(&out, 1, "git --git-dir=pub.git rev-parse master next-20260501 | sort -u");
	assert_string_equal(out.buf, want.buf);

	/* the same night again, next rebuilt (not a fast-forward): forced over both */
	set_next(repo, "HEAD~1");
	assert_int_equal(push_publish(repo, url, "master", "next-20260501", NULL), 0);
	fixture_sh_out(&want, 1, "git -C w rev-parse HEAD~1");
	fixture_sh_out(&out, 1, "git --git-dir=pub.git rev-parse master next-20260501 | sort -u");
	assert_string_equal(out.buf, want.buf);
	assert_int_equal(fixture_sh_out(&out, 1, "git --git-dir=pub.git fsck --no-progress"), 0);

	/* another branch name, no tag */
	assert_int_equal(push_publish(repo, url, "for-next", NULL, NULL), 0);
	fixture_sh_out(&out, 1, "git --git-dir=pub.git rev-parse for-next");
	assert_string_equal(out.buf, want.buf);

	/* unreachable: reported, nothing in the work repository changes */
	assert_int_equal(repo_ref_get(repo, "refs/heads/next", &before), 0);
	free(url);
	url = xstrfmt("file://%s/nowhere/pub.git", top);
	assert_int_equal(push_publish(repo, url, "master", "next-20260501", NULL), NB_ERROR);
	assert_non_null(strstr(nb_error_last(), "nowhere/pub.git"));
	assert_int_equal(push_publish(repo, "http://127.0.0.1:9/next.git", "master", NULL, NULL),
			 NB_ERROR);
	assert_non_null(strstr(nb_error_last(), "push to http://127.0.0.1:9/next.git failed"));
	assert_int_equal(push_publish(repo, "no-such-scheme://x/y", "master", NULL, NULL),
			 NB_ERROR);
	assert_int_equal(repo_ref_get(repo, "refs/heads/next", &before), 0);
	fixture_sh_out(&out, 1,
		       "git --git-dir=state/repo.git rev-parse next next-20260501 | sort -u");
	assert_string_equal(out.buf, want.buf);

	repo_free(repo);
	free(path);
	free(url);
	strbuf_release(&out);
	strbuf_release(&want);
}

/* The credentials callback push shares with fetch. */
static void test_credentials(void **state)
{
	struct fetch_creds creds = { .token_env = "NB_TEST_TOKEN" };
	struct fetch_cred_state cs = { &creds, 0 };
	git_credential *cred = NULL;

	unsetenv("NB_TEST_TOKEN");
	assert_int_equal(fetch_credentials(&cred, "https://h/x", NULL,
					   GIT_CREDENTIAL_USERPASS_PLAINTEXT, &cs),
			 GIT_PASSTHROUGH);
	setenv("NB_TEST_TOKEN", "s3cret", 1);
	assert_int_equal(fetch_credentials(&cred, "https://h/x", NULL,
					   GIT_CREDENTIAL_USERPASS_PLAINTEXT, &cs), 0);
	assert_int_equal(cred->credtype, GIT_CREDENTIAL_USERPASS_PLAINTEXT);
	git_credential_free(cred);
	cred = NULL;
	creds.ssh_key = "/nonexistent/id_ed25519";
	assert_int_equal(fetch_credentials(&cred, "ssh://h/x", "git", GIT_CREDENTIAL_SSH_KEY, &cs),
			 0);
	assert_int_equal(cred->credtype, GIT_CREDENTIAL_SSH_KEY);
	git_credential_free(cred);
	cred = NULL;
	/* a bad token cannot loop: the fourth round gives up */
	assert_int_equal(fetch_credentials(&cred, "https://h/x", NULL,
					   GIT_CREDENTIAL_USERPASS_PLAINTEXT, &cs),
			 GIT_PASSTHROUGH);
	unsetenv("NB_TEST_TOKEN");
}

/* fetch_why(): what to do about an unknown ssh host key, an untrusted certificate. */
static void test_why(void **state)
{
	static const struct {
		const char *url, *want;
	} ssh[] = {
		{ "ssh://git@example.org/pub/x.git", "ssh-keyscan -p 22 example.org)" },
		{ "ssh://example.org:2222/x.git", "ssh-keyscan -p 2222 example.org)" },
		{ "git+ssh://u@h.example.org:29418/x", "of h.example.org port 29418 is not" },
		{ "git@example.org:pub/x.git", "ssh-keyscan -p 22 example.org)" },
	};
	struct fetch_creds creds = { .ca_file = "/etc/nextbot/ca.pem" };
	char *why;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ssh) / sizeof(ssh[0]); i++) {
		git_error_set_str(GIT_ERROR_SSH, "invalid or unknown remote ssh hostkey");
		why = fetch_why(ssh[i].url, GIT_ECERTIFICATE, NULL);
		assert_non_null(strstr(why, "invalid or unknown remote ssh hostkey ("));
		assert_non_null(strstr(why, ssh[i].want));
		free(why);
	}
	git_error_set_str(GIT_ERROR_SSL, "the SSL certificate is invalid");
	why = fetch_why("https://example.org/x.git", GIT_ECERTIFICATE, &creds);
	assert_string_equal(why, "the SSL certificate is invalid (checked against git.ca_file "
			    "/etc/nextbot/ca.pem)");
	free(why);
	why = fetch_why("https://example.org/x.git", GIT_ECERTIFICATE, NULL);
	assert_non_null(strstr(why, "the system's CA certificates; git.ca_file names others"));
	free(why);
	/* the CA file is for https alone: a missing one fails no git:// or ssh fetch */
	creds.ca_file = "/nonexistent/ca.pem";
	assert_null(fetch_trust(&creds, "git://example.org/x.git"));
	assert_null(fetch_trust(&creds, "ssh://example.org/x.git"));
	why = fetch_trust(&creds, "https://example.org/x.git");
	assert_non_null(why);
	assert_true(str_starts_with(why, "git.ca_file /nonexistent/ca.pem: "));
	free(why);
	git_error_set_str(GIT_ERROR_NET, "early EOF");
	why = fetch_why("https://example.org/x.git", GIT_ERROR, NULL);
	assert_string_equal(why, "early EOF: the server closed the connection before the pack "
			    "was whole");
	free(why);
	git_error_set_str(GIT_ERROR_NET, "unexpected http status code: 404");
	why = fetch_why("https://example.org/x.git", GIT_ERROR, &creds);
	assert_string_equal(why, "unexpected http status code: 404");
	free(why);
}

static int setup_all(void **state)
{
	assert_non_null(mkdtemp(top));
	fixture_dir = top;
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	log_set_level(LOG_QUIET);
	return merge_global_init();
}

static int teardown_all(void **state)
{
	char *cmd = xstrfmt("rm -rf '%s'", top);

	if (!getenv("KEEP") && system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", top);
	free(cmd);
	merge_global_shutdown();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_publish),
		cmocka_unit_test(test_credentials),
		cmocka_unit_test(test_why),
	};

	return cmocka_run_group_tests_name("push", tests, setup_all, teardown_all);
}
