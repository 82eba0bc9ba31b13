/* Unit tests of the strict config loader (bot/config/config.c), configs in temp files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "bot/config/config.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define BASE "base: {name: origin, url: 'https://example.org/linux.git', branch: master}\n"

static char tmpdir[] = "/tmp/nextbot-test-config.XXXXXX";

static int setup(void **state)
{
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	return file_remove_tree(tmpdir);
}

/* Writes text to TMP/name and returns the path (caller frees). */
static char *write_cfg(const char *name, const char *text)
{
	char *path = xstrfmt("%s/%s", tmpdir, name);

	assert_int_equal(file_write_atomic(path, text, strlen(text)), 0);
	return path;
}

static struct config *load_ok(const char *text)
{
	char *path = write_cfg("ok.yaml", text);
	struct config *cfg = NULL;
	int ret = config_load(&cfg, path);

	if (ret)
		print_error("unexpected error: %s\n", nb_error_last());
	assert_int_equal(ret, 0);
	assert_non_null(cfg);
	free(path);
	return cfg;
}

/* The load must fail with a message holding "bad.yaml:LINE:" and every `needle`. */
static void load_bad(const char *text, int line, const char *needle1, const char *needle2)
{
	char *path = write_cfg("bad.yaml", text);
	char *where = xstrfmt("bad.yaml:%d:", line);
	struct config *cfg = (struct config *)1;
	const char *msg;

	assert_int_equal(config_load(&cfg, path), NB_EINVALID);
	assert_null(cfg);
	msg = nb_error_last();
	if (!strstr(msg, where) || !strstr(msg, needle1) || (needle2 && !strstr(msg, needle2)))
		fail_msg("message '%s' lacks '%s' / '%s' / '%s'", msg, where, needle1,
			 needle2 ? needle2 : "");
	free(where);
	free(path);
}

static void test_defaults(void **state)
{
	struct config *cfg = load_ok(BASE);
	char *workdir = xstrfmt("%s/state", tmpdir);

	assert_string_equal(cfg->base.name, "origin");
	assert_string_equal(cfg->base.branch, "master");
	assert_int_equal(cfg->trees_nr, 0);
	assert_int_equal(cfg->never_merge.nr, 1);
	assert_string_equal(cfg->never_merge.v[0], "mm-unstable");
	assert_int_equal(cfg->build_nr, 0);
	assert_int_equal(cfg->build_after_each_merge, 1);
	assert_int_equal(cfg->on_breakage, CONFIG_BREAK_REVERT_CULPRIT);
	assert_int_equal(cfg->bisect.confirm, 2);
	assert_int_equal(cfg->bisect.jobs, 1);
	assert_int_equal(cfg->deadline.kind, CONFIG_DEADLINE_NONE);
	assert_string_equal(cfg->notify.from, "nextbot <nextbot@localhost>");
	assert_string_equal(cfg->merge_identity, cfg->notify.from);
	assert_int_equal(cfg->runner.kind, CONFIG_RUNNER_LOCAL);
	assert_string_equal(cfg->runner.user, "nobody");
	assert_int_equal(cfg->runner.max_jobs, 1);
	assert_null(cfg->publish.url);
	assert_string_equal(cfg->publish.branch, "master");
	assert_null(cfg->notify.smtp.url);
	assert_int_equal(cfg->notify.remind_days, 0);
	assert_string_equal(cfg->schedule, "0 2 * * *");
	assert_int_equal(cfg->keep_days, 60);
	assert_int_equal(cfg->git.fetch_timeout, 600);
	/* realpath of /tmp may differ from /tmp only through symlinks; compare the tail */
	assert_true(str_ends_with(cfg->workdir, workdir + strlen("/tmp")));
	assert_true(cfg->workdir[0] == '/');
	free(workdir);
	config_free(cfg);
}

static void test_full(void **state)
{
	struct config *cfg;

	setenv("HOME", "/home/bot", 1);
	cfg = load_ok(BASE
			"workdir: work\n"
			"trees:\n"
			"  - name: mm-stable\n"
			"    url: https://example.org/mm.git\n"
			"    branch: mm-stable\n"
			"    contacts: [\"Andrew Morton <akpm@example.org>\",\n"
			"               linux-mm@example.org]\n"
			"    fixes: fixes/mm-stable\n"
			"  - {name: mm-next, url: https://example.org/mm.git, branch: mm-next}\n"
			"never_merge: [mm-unstable, 'mm-new*']\n"
			"build:\n"
			"  - {name: x86_64, command: 'make -j2', timeout: 90s,\n"
			"     env: {ARCH: x86_64, V: 1}}\n"
			"  - name: multi\n"
			"    command: |\n"
			"      make\n"
			"      make check\n"
			"test:\n"
			"  - {name: selftests, command: make test, timeout: 1800}\n"
			"build_after_each_merge: false\n"
			"on_breakage: drop-tree\n"
			"bisect: {confirm: 3, jobs: 4}\n"
			"deadline: '06:30'\n"
			"merge_identity: 'Merge Bot <merge@example.org>'\n"
			"runner: {kind: slurm, partition: build, srun_args: [--mem=1G],\n"
			"         max_jobs: 16}\n"
			"git: {token_env: NB_TOKEN, ssh_key: ~/.ssh/id_ed25519,\n"
			"      ca_file: certs/ca.pem, fetch_timeout: 5m}\n"
			"publish: {url: 'ssh://example.org/next.git'}\n"
			"notify:\n"
			"  from: 'nextbot <bot@example.org>'\n"
			"  list: list@example.org\n"
			"  operator: 'Op <op@example.org>'\n"
			"  report_url: 'https://example.org/{id}'\n"
			"  remind_days: 7\n"
			"  smtp: {url: 'smtps://mail.example.org', user: bot,\n"
			"         password_env: NB_PW}\n"
			"  webhooks:\n"
			"    - {url: 'http://127.0.0.1:8080/hook', secret_env: NB_HOOK}\n"
			"    - {url: 'https://example.org/hook2', format: slack}\n"
			"schedule: '30 1 * * mon-fri'\n"
			"keep_days: 7\n");
	assert_int_equal(cfg->trees_nr, 2);
	assert_string_equal(cfg->trees[0].name, "mm-stable");
	assert_int_equal(cfg->trees[0].line, 4);
	assert_int_equal(cfg->trees[0].contacts.nr, 2);
	assert_string_equal(cfg->trees[0].contacts.v[1], "linux-mm@example.org");
	assert_true(str_ends_with(cfg->trees[0].fixes, "/fixes/mm-stable"));
	assert_true(cfg->trees[0].fixes[0] == '/');
	assert_null(cfg->trees[1].fixes);
	assert_true(str_ends_with(cfg->workdir, "/work"));
	assert_int_equal(cfg->never_merge.nr, 2);
	assert_int_equal(cfg->build_nr, 2);
	assert_int_equal(cfg->build[0].timeout, 90);
	assert_int_equal(cfg->build[0].env.nr, 2);
	assert_string_equal(cfg->build[0].env.v[0], "ARCH=x86_64");
	assert_string_equal(cfg->build[0].env.v[1], "V=1");
	assert_null(cfg->build[0].env.v[2]);
	assert_string_equal(cfg->build[1].command, "make\nmake check\n");
	assert_int_equal(cfg->build[1].timeout, 3600);
	assert_non_null(cfg->build[1].env.v);
	assert_null(cfg->build[1].env.v[0]);
	assert_int_equal(cfg->test[0].timeout, 1800);
	assert_int_equal(cfg->build_after_each_merge, 0);
	assert_int_equal(cfg->on_breakage, CONFIG_BREAK_DROP_TREE);
	assert_int_equal(cfg->bisect.confirm, 3);
	assert_int_equal(cfg->bisect.jobs, 4);
	assert_int_equal(cfg->deadline.kind, CONFIG_DEADLINE_CLOCK);
	assert_int_equal(cfg->deadline.seconds, 6 * 3600 + 30 * 60);
	assert_string_equal(cfg->merge_identity, "Merge Bot <merge@example.org>");
	assert_int_equal(cfg->runner.kind, CONFIG_RUNNER_SLURM);
	assert_string_equal(cfg->runner.partition, "build");
	assert_string_equal(cfg->runner.srun_args.v[0], "--mem=1G");
	assert_int_equal(cfg->runner.max_jobs, 16);
	assert_string_equal(cfg->git.token_env, "NB_TOKEN");
	assert_string_equal(cfg->git.ssh_key, "/home/bot/.ssh/id_ed25519");
	assert_true(cfg->git.ca_file[0] == '/' && str_ends_with(cfg->git.ca_file, "/certs/ca.pem"));
	assert_int_equal(cfg->git.fetch_timeout, 300);
	assert_string_equal(cfg->publish.url, "ssh://example.org/next.git");
	assert_string_equal(cfg->publish.branch, "master");
	assert_string_equal(cfg->notify.smtp.url, "smtps://mail.example.org");
	assert_int_equal(cfg->notify.smtp.tls, CONFIG_TLS_IMPLICIT);
	assert_string_equal(cfg->notify.smtp.password_env, "NB_PW");
	assert_int_equal(cfg->notify.webhooks_nr, 2);
	assert_string_equal(cfg->notify.webhooks[0].secret_env, "NB_HOOK");
	assert_null(cfg->notify.webhooks[1].secret_env);
	assert_int_equal(cfg->notify.webhooks[0].format, CONFIG_HOOK_JSON);
	assert_int_equal(cfg->notify.webhooks[1].format, CONFIG_HOOK_SLACK);
	assert_string_equal(cfg->notify.operator, "Op <op@example.org>");
	assert_int_equal(cfg->notify.remind_days, 7);
	assert_string_equal(cfg->schedule, "30 1 * * mon-fri");
	assert_int_equal(cfg->keep_days, 7);
	config_free(cfg);
}

static void test_smtp_tls_default(void **state)
{
	struct config *cfg = load_ok(BASE "notify: {smtp: {url: 'smtp://127.0.0.1:25'}}\n");

	assert_int_equal(cfg->notify.smtp.tls, CONFIG_TLS_STARTTLS);
	config_free(cfg);
	cfg = load_ok(BASE "notify: {smtp: {url: 'smtp://127.0.0.1:25', tls: none}}\n");
	assert_int_equal(cfg->notify.smtp.tls, CONFIG_TLS_NONE);
	config_free(cfg);
}

static void test_bare_from(void **state)
{
	struct config *cfg = load_ok(BASE "notify: {from: bot@example.org}\n");

	assert_string_equal(cfg->notify.from, "bot@example.org");
	assert_string_equal(cfg->merge_identity, "nextbot <bot@example.org>");
	config_free(cfg);
}

static void test_empty_lists(void **state)
{
	struct config *cfg = load_ok(BASE "build:\ntest: []\ntrees:\nnever_merge: []\n");

	assert_int_equal(cfg->build_nr, 0);
	assert_int_equal(cfg->test_nr, 0);
	assert_int_equal(cfg->trees_nr, 0);
	assert_int_equal(cfg->never_merge.nr, 0);
	config_free(cfg);
}

static void test_inbox(void **state)
{
	struct config *cfg = load_ok(BASE);

	assert_false(cfg->inbox.configured);
	assert_null(cfg->inbox.url);
	assert_int_equal(cfg->inbox.poll, 300);
	assert_int_equal(cfg->inbox.max_tests, 10);
	assert_false(cfg->drop_push);
	config_free(cfg);
	cfg = load_ok(BASE "inbox: {url: 'imaps://imap.example.org/INBOX', user: bot,\n"
			   "  password_env: IMAP_PW, poll: 2m, authserv_id: mx.example.org,\n"
			   "  max_tests: 3, test_urls: ['https://git.kernel.org/pub/']}\n"
			   "drop_push: true\nnotify: {operator: 'Op <op@example.org>'}\n");
	assert_true(cfg->inbox.configured);
	assert_int_equal(cfg->inbox.tls, CONFIG_TLS_IMPLICIT);
	assert_int_equal(cfg->inbox.poll, 120);
	assert_string_equal(cfg->inbox.authserv_id, "mx.example.org");
	assert_int_equal(cfg->inbox.max_tests, 3);
	assert_string_equal(cfg->inbox.test_urls.v[0], "https://git.kernel.org/pub/");
	assert_true(cfg->drop_push);
	assert_string_equal(cfg->notify.operator, "Op <op@example.org>");
	config_free(cfg);
	cfg = load_ok(BASE "inbox: {url: 'imap://127.0.0.1:1143/INBOX', user: u, tls: none}\n");
	assert_int_equal(cfg->inbox.tls, CONFIG_TLS_NONE);
	config_free(cfg);
	cfg = load_ok(BASE "inbox: {url: 'imap://127.0.0.1/INBOX', user: u}\n");
	assert_int_equal(cfg->inbox.tls, CONFIG_TLS_STARTTLS);
	config_free(cfg);
	cfg = load_ok(BASE "inbox: {authserv_id: mx.example.org}\n"); /* mail-in only */
	assert_null(cfg->inbox.url);
	config_free(cfg);

	load_bad(BASE "inbox: {url: 'pop3://x/INBOX', user: u}\n", 2, "inbox.url", "imaps://");
	load_bad(BASE "inbox: {url: 'imaps://x/INBOX'}\n", 2, "inbox.user", "missing");
	load_bad(BASE "inbox: {url: 'imaps://x/INBOX', user: u, tls: none}\n", 2, "inbox.tls",
		 "imaps://");
	load_bad(BASE "inbox: {url: 'imap://x/INBOX', user: u, tls: implicit}\n", 2, "inbox.tls",
		 "imaps://");
	load_bad(BASE "inbox: {user: u}\n", 2, "inbox", "need a url");
	load_bad(BASE "inbox: {test_urls: ['file:///srv/git']}\n", 2, "inbox.test_urls[0]",
		 "https://");
	load_bad(BASE "inbox: {test_urls: ['ext::sh -c id']}\n", 2, "inbox.test_urls[0]", NULL);
	load_bad(BASE "inbox: {authserv_id: 'a b'}\n", 2, "inbox.authserv_id", NULL);
	load_bad(BASE "inbox: {max_tests: -1}\n", 2, "inbox.max_tests", NULL);
	load_bad(BASE "inbox: {poll: never}\n", 2, "inbox.poll", "duration");
	load_bad(BASE "inbox: {password: x}\n", 2, "inbox.password", "password_env");
	load_bad(BASE "drop_push: maybe\n", 2, "drop_push", "true or false");
	load_bad(BASE "notify: {operator: nobody}\n", 2, "notify.operator", "mail address");
}

static void test_errors(void **state)
{
	load_bad(BASE "trees:\n  - name: a\n   url: b\n", 4, "malformed YAML", NULL);
	load_bad(BASE "trees:\n  - {name: a, url: b, branch: c, colour: red}\n", 3,
		 "trees[0].colour", "unknown key");
	load_bad(BASE "keep_dayz: 3\n", 2, "keep_dayz", "did you mean 'keep_days'");
	load_bad(BASE "trees: {name: a}\n", 2, "trees", "expected a list");
	load_bad(BASE "trees:\n  - [a, b]\n", 3, "trees[0]", "expected a mapping");
	load_bad(BASE "keep_days: 1\nworkdir: x\nkeep_days: 2\n", 4, "keep_days",
		 "duplicate key (first at line 2)");
	load_bad(BASE "trees:\n  - {name: a, url: x, branch: b}\n"
		      "  - {name: a, url: y, branch: c}\n",
		 4, "trees[1].name", "duplicate tree name 'a'");
	load_bad(BASE "trees:\n  - {name: a, branch: b}\n", 3, "trees[0].url", "missing");
	load_bad(BASE "trees:\n  - {name: a, url: b}\n", 3, "trees[0].branch", "missing");
	load_bad(BASE "trees:\n  - {url: a, branch: b}\n", 3, "trees[0].name", "missing");
	load_bad("workdir: x\nbase:\n", 2, "base", "must not be empty");
	load_bad("workdir: x\n", 1, "base", "missing");
	load_bad(BASE "build:\n  - {name: a, command: make, timeout: -5}\n", 3, "build[0].timeout",
		 "positive");
	load_bad(BASE "test:\n  - {name: a, command: make, timeout: soon}\n", 3, "test[0].timeout",
		 NULL);
	load_bad(BASE "build:\n  - {name: a, command: make, timeout: 0}\n", 3, "build[0].timeout",
		 NULL);
	load_bad(BASE "build:\n  - {name: a, command: make, env: {1X: y}}\n", 3, "build[0].env.1X",
		 "environment variable");
	load_bad(BASE "schedule: '0 25 * * *'\n", 2, "schedule", "cron");
	load_bad(BASE "schedule: '0 2 * *'\n", 2, "schedule", "cron");
	load_bad(BASE "notify:\n  smtp: {url: 'smtp://x', tls: yes-please}\n", 3, "notify.smtp.tls",
		 "starttls");
	load_bad(BASE "notify:\n  smtp: {url: 'smtp://x', tls: implicit}\n", 3, "notify.smtp.tls",
		 "smtps://");
	load_bad(BASE "on_breakage: shrug\n", 2, "on_breakage", "revert-culprit");
	load_bad(BASE "notify:\n  smtp:\n    url: 'smtp://x'\n    password: hunter2\n", 5,
		 "notify.smtp.password", "password_env");
	load_bad(BASE "git: {token: abc}\n", 2, "git.token", "token_env");
	load_bad(BASE "git: {fetch_timeout: soon}\n", 2, "git.fetch_timeout", "duration");
	load_bad(BASE "git: {fetch_timeout: 0}\n", 2, "git.fetch_timeout", "positive");
	load_bad(BASE "deadline: '6 in the morning'\n", 2, "deadline", "HH:MM");
	load_bad(BASE "deadline: '24:00'\n", 2, "deadline", NULL);
	load_bad(BASE "keep_days: many\n", 2, "keep_days", "integer");
	load_bad(BASE "keep_days: 0\n", 2, "keep_days", "out of range");
	load_bad(BASE "bisect: {jobs: 0}\n", 2, "bisect.jobs", "out of range");
	load_bad(BASE "build_after_each_merge: sometimes\n", 2, "build_after_each_merge", "true");
	load_bad(BASE "runner: {kind: kubernetes}\n", 2, "runner.kind", "slurm");
	load_bad(BASE "merge_identity: nextbot\n", 2, "merge_identity", "Name <user@host>");
	load_bad(BASE "notify: {from: bot}\n", 2, "notify.from", "user@host");
	load_bad(BASE "notify: {smtp: {url: 'smtp://x', password_env: 'not a name'}}\n", 2,
		 "notify.smtp.password_env", NULL);
	load_bad(BASE "notify: {webhooks: [{url: 'ftp://x'}]}\n", 2, "notify.webhooks[0].url",
		 NULL);
	load_bad(BASE "notify: {webhooks: [{url: 'http://x', format: teams}]}\n", 2,
		 "notify.webhooks[0].format", "json | slack");
	load_bad(BASE "trees:\n  - {name: 'a b', url: x, branch: b}\n", 3, "trees[0].name", NULL);
	load_bad(BASE "trees:\n  - {name: a, url: x, branch: 'b..c'}\n", 3, "trees[0].branch",
		 NULL);
	load_bad(BASE "trees:\n  - {name: a, url: x, branch: b, contacts: nobody}\n", 3,
		 "trees[0].contacts", "list");
	load_bad(BASE "trees:\n  - {name: origin, url: x, branch: b}\n", 3, "trees[0].name",
		 "base");
	load_bad(BASE "keep_days: !!int 5\n", 2, "keep_days", "tags");
	load_bad(BASE "---\nworkdir: x\n", 2, "single YAML document", NULL);
	load_bad("", 1, "empty", NULL);
	load_bad("- a\n", 1, "expected a mapping", NULL);
}

static void test_never_merge(void **state)
{
	struct config *cfg;

	load_bad(BASE "trees: [{name: mm, url: x, branch: mm-unstable}]\n", 2, "never_merge",
		 "trees[0].branch");
	load_bad(BASE "trees:\n  - {name: ok, url: x, branch: b}\n  - {name: mm-unstable, url: x, "
		      "branch: b}\n",
		 4, "never_merge", "trees[1].name");
	load_bad(BASE "never_merge: [mm-unstable, 'mm-new*']\n"
		      "trees:\n  - {name: n, url: x, branch: mm-new-2}\n",
		 4, "never_merge pattern 'mm-new*' (line 2)", NULL);
	load_bad("base: {name: mm-unstable, url: x, branch: master}\n", 1, "base", "never_merge");
	cfg = load_ok(BASE "never_merge: ['*-unstable']\n");
	assert_string_equal(config_never_merge_match(cfg, "x", "mm-unstable"), "*-unstable");
	assert_string_equal(config_never_merge_match(cfg, "net-unstable", NULL), "*-unstable");
	assert_null(config_never_merge_match(cfg, "mm-stable", "mm-stable"));
	config_free(cfg);
}

static void test_limits(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	int i;

	/* 40 levels of flow sequences: refused before libyaml's own stack grows */
	strbuf_addstr(&sb, BASE "x: ");
	for (i = 0; i < 40; i++)
		strbuf_addch(&sb, '[');
	for (i = 0; i < 40; i++)
		strbuf_addch(&sb, ']');
	strbuf_addch(&sb, '\n');
	load_bad(sb.buf, 2, "nesting deeper than 32", NULL);
	/* a billion laughs: refused at its first anchor */
	load_bad(BASE "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
		      "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
		      "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n",
		 2, "anchors and aliases", NULL);
	load_bad(BASE "trees:\n  - *t\n", 3, "trees[0]", "aliases");
	/* over 1 MiB */
	strbuf_reset(&sb);
	strbuf_addstr(&sb, BASE);
	while (sb.len <= 1024 * 1024)
		strbuf_addstr(&sb, "# padding padding padding padding padding padding padding\n");
	load_bad(sb.buf, 1, "larger than 1 MiB", NULL);
	strbuf_release(&sb);
}

static void test_durations(void **state)
{
	long s;

	assert_int_equal(config_parse_duration("90", &s), 0);
	assert_int_equal(s, 90);
	assert_int_equal(config_parse_duration("90s", &s), 0);
	assert_int_equal(s, 90);
	assert_int_equal(config_parse_duration("1h30m", &s), 0);
	assert_int_equal(s, 5400);
	assert_int_equal(config_parse_duration("2d", &s), 0);
	assert_int_equal(s, 172800);
	assert_int_equal(config_parse_duration("0", &s), -1);
	assert_int_equal(config_parse_duration("-5", &s), -1);
	assert_int_equal(config_parse_duration("5x", &s), -1);
	assert_int_equal(config_parse_duration("h", &s), -1);
	assert_int_equal(config_parse_duration("", &s), -1);
	assert_int_equal(config_parse_duration("99999999999999999999", &s), -1);
}

static void test_deadline_at(void **state)
{
	struct config *cfg = load_ok(BASE "deadline: '06:00'\n");
	time_t two_am = 1764727200; /* 2025-12-03T02:00:00Z */

	assert_int_equal(config_deadline_at(cfg, two_am), two_am + 4 * 3600);
	/* started after the deadline hour: tomorrow's 06:00 */
	assert_int_equal(config_deadline_at(cfg, two_am + 5 * 3600), two_am + 28 * 3600);
	config_free(cfg);
	cfg = load_ok(BASE "deadline: 5s\n");
	assert_int_equal(cfg->deadline.kind, CONFIG_DEADLINE_DURATION);
	assert_int_equal(config_deadline_at(cfg, two_am), two_am + 5);
	config_free(cfg);
	cfg = load_ok(BASE);
	assert_int_equal(config_deadline_at(cfg, two_am), 0);
	config_free(cfg);
}

static void test_secret(void **state)
{
	setenv("NB_TEST_SECRET", "s3cret", 1);
	assert_string_equal(config_secret("NB_TEST_SECRET"), "s3cret");
	unsetenv("NB_TEST_SECRET");
	assert_null(config_secret("NB_TEST_SECRET"));
	assert_null(config_secret(NULL));
}

/* The cells' names as one string: "ARCH=x86_64 ARCH=arm64". */
static void cell_names(struct strbuf *out, const struct config *cfg)
{
	size_t i;

	for (i = 0; i < cfg->cells_nr; i++)
		strbuf_addf(out, "%s%s", i ? " " : "", cfg->cells[i].name);
}

static void test_matrix(void **state)
{
	struct config *cfg = load_ok(
		BASE "build:\n"
		     "  - {name: build, command: 'make ARCH=$ARCH', env: {V: '1'},\n"
		     "     matrix: {ARCH: [x86_64, arm64, riscv], CC: [gcc, clang]}}\n"
		     "test:\n"
		     "  - {name: kunit, command: 'make test',\n"
		     "     matrix: {CC: [gcc], ARCH: [arm64, s390]}}\n"
		     "  - {name: smoke, command: 'true'}\n"
		     "runner: {kind: slurm}\n");
	struct strbuf names = STRBUF_INIT;
	char *name;

	assert_int_equal(cfg->build[0].matrix_nr, 2);
	assert_string_equal(cfg->build[0].matrix[0].key, "ARCH");
	assert_int_equal(cfg->build[0].matrix[0].values.nr, 3);
	/* the first matrix orders keys; values in first-seen order; unused cells dropped */
	cell_names(&names, cfg);
	assert_string_equal(names.buf, "ARCH=x86_64,CC=gcc ARCH=x86_64,CC=clang ARCH=arm64,CC=gcc "
				       "ARCH=arm64,CC=clang ARCH=riscv,CC=gcc ARCH=riscv,CC=clang "
				       "ARCH=s390,CC=gcc");
	assert_int_equal(cfg->cells[6].env.nr, 2);
	assert_string_equal(cfg->cells[6].env.v[0], "ARCH=s390");
	assert_string_equal(cfg->cells[6].env.v[1], "CC=gcc");
	/* build has no s390; kunit runs with gcc only; smoke everywhere */
	assert_false(config_cell_has(&cfg->cells[6], &cfg->build[0]));
	assert_true(config_cell_has(&cfg->cells[6], &cfg->test[0]));
	assert_false(config_cell_has(&cfg->cells[3], &cfg->test[0]));
	assert_true(config_cell_has(&cfg->cells[2], &cfg->test[0]));
	assert_true(config_cell_has(&cfg->cells[3], &cfg->test[1]));
	name = config_cell_command_name(&cfg->cells[1], &cfg->build[0]);
	assert_string_equal(name, "build[ARCH=x86_64,CC=clang]");
	free(name);
	name = config_cell_command_name(&cfg->cells[6], &cfg->test[1]);
	assert_string_equal(name, "smoke[ARCH=s390,CC=gcc]");
	free(name);
	/* the entry's own env is unchanged: cells add theirs when they run */
	assert_int_equal(cfg->build[0].env.nr, 1);
	assert_int_equal(cfg->runner.max_jobs, 4);
	strbuf_release(&names);
	config_free(cfg);

	/* no matrix: one unnamed cell, every entry in it, names as they are */
	cfg = load_ok(BASE "build:\n  - {name: b, command: make}\n");
	assert_int_equal(cfg->cells_nr, 1);
	assert_string_equal(cfg->cells[0].name, "");
	assert_int_equal(cfg->cells[0].env.nr, 0);
	assert_true(config_cell_has(&cfg->cells[0], &cfg->build[0]));
	name = config_cell_command_name(&cfg->cells[0], &cfg->build[0]);
	assert_string_equal(name, "b");
	free(name);
	assert_int_equal(cfg->runner.max_jobs, 1);  /* the local default */
	config_free(cfg);
	cfg = load_ok(BASE "runner: {max_jobs: 8}\n");
	assert_int_equal(cfg->runner.max_jobs, 8);
	config_free(cfg);
}

static void test_matrix_errors(void **state)
{
#define B BASE "build:\n  - name: b\n    command: make\n"
	load_bad(B "    matrix: {ARCH: []}\n", 5, "build[0].matrix.ARCH", "empty axis");
	load_bad(B "    matrix: {ARCH: [a, b, a]}\n", 5, "build[0].matrix.ARCH[2]",
		 "duplicate value 'a'");
	load_bad(B "    matrix: {1ARCH: [a]}\n", 5, "build[0].matrix.1ARCH",
		 "environment variable");
	load_bad(B "    matrix: {NEXTBOT_TREE: [a]}\n", 5, "build[0].matrix.NEXTBOT_TREE",
		 "nextbot");
	load_bad(B "    matrix: {}\n", 5, "build[0].matrix", "empty matrix");
	load_bad(B "    matrix: [a]\n", 5, "build[0].matrix", "mapping");
	load_bad(B "    matrix: {ARCH: arm64}\n", 5, "build[0].matrix.ARCH", "list of values");
	load_bad(B "    matrix: {ARCH: ['a/b']}\n", 5, "build[0].matrix.ARCH[0]", "matrix value");
	load_bad(B "    matrix: {ARCH: [[a]]}\n", 5, "build[0].matrix.ARCH[0]", "string");
	load_bad(B "    matrix: {ARCH: [a], ARCH: [b]}\n", 5, "ARCH", "duplicate key");
	load_bad(B "    env: {ARCH: x}\n    matrix: {ARCH: [a]}\n", 6, "build[0].matrix.ARCH",
		 "env");
	load_bad(B "    matrix: {A: [a, b, c, d, e, f, g, h, i], B: [a, b, c, d, e, f, g, h]}\n",
		 5, "build[0].matrix.B", "more than 64 cells");
	/* 8 x 9 values over two matrices: 72 cells, though each matrix alone is small */
	load_bad(B "    matrix: {A: [a, b, c, d, e, f, g, h], B: [x]}\n"
		   "test:\n  - {name: t, command: x,\n"
		   "     matrix: {A: [a], B: [i, j, k, l, m, n, o, p]}}\n",
		 5, "72 cells, more than 64", NULL);
	load_bad(B "    matrix: {A: [a]}\ntest:\n  - {name: t, command: x, matrix: {B: [a]}}\n",
		 7, "test[0].matrix", "same keys");
	load_bad(B "    matrix: {A: [a], B: [c]}\n"
		   "test:\n  - {name: t, command: x, matrix: {A: [a]}}\n",
		 7, "test[0].matrix", "same keys");
	load_bad(B "    matrix: {A: [a]}\n  - {name: c, command: x, matrix: {A: [a], C: [d]}}\n",
		 6, "build[1].matrix", "same keys");
	load_bad(BASE "runner: {max_jobs: 0}\n", 2, "runner.max_jobs", "out of range");
#undef B
}

/* Refused at load with file:line:column what would fail every night later. */
static void test_refusals(void **state)
{
	load_bad(BASE "trees:\n  - {name: 'a..b', url: x, branch: b}\n", 3, "trees[0].name", "ref");
	load_bad(BASE "trees:\n  - {name: a.lock, url: x, branch: b}\n", 3, "trees[0].name",
		 ".lock");
	load_bad(BASE "trees:\n  - {name: 'x.', url: x, branch: b}\n", 3, "trees[0].name", NULL);
	load_bad("base: {name: 'o..x', url: x, branch: master}\n", 1, "base.name", "ref");
	load_bad(BASE "runner: {user: root}\n", 2, "runner.user", "is root");
	load_bad(BASE "runner:\n  user: no-such-user-here\n", 3, "runner.user", "no user");
	load_bad(BASE "build:\n  - {name: a, command: make, env: {A: \"x\\0y\"}}\n", 3, "NUL",
		 "build[0].env");
	load_bad(BASE "trees:\n  - {name: a, url: 'https://me:hunter2@example.org/a.git', "
		      "branch: b}\n", 3, "trees[0].url", "token_env");
	load_bad("base: {name: o, url: 'https://u:p@h/x', branch: master}\n", 1, "base.url",
		 "password");
	load_bad(BASE "publish: {url: 'https://u:p@h/x'}\n", 2, "publish.url", "password");
	load_bad(BASE "notify: {webhooks: [{url: 'https://u:p@h/hook'}]}\n", 2,
		 "notify.webhooks[0].url", "password");
	load_bad(BASE "notify: {smtp: {url: 'smtp://u:p@h:25'}}\n", 2, "notify.smtp.url",
		 "password_env");
	load_bad(BASE "runner: {sandbox: docker}\n", 2, "runner.sandbox", "bwrap | none");
	load_bad(BASE "runner: {limits: {memory: lots}}\n", 2, "runner.limits.memory", "size");
	load_bad(BASE "runner: {limits: {memory: 1M}}\n", 2, "runner.limits.memory", "16M");
	load_bad(BASE "runner: {limits: {processes: 2}}\n", 2, "runner.limits.processes",
		 "range");
	load_bad(BASE "runner: {network: maybe}\n", 2, "runner.network", "true");
	load_bad(BASE "runner: {min_free: plenty}\n", 2, "runner.min_free", "size");
	load_bad(BASE "runner: {min_free: 0}\n", 2, "runner.min_free", "size");
}

/* A user name, an ssh URL and a token-less https URL are fine; so are the sandbox keys. */
static void test_runner_sandbox(void **state)
{
	struct config *cfg;

	cfg = load_ok(BASE "trees:\n"
		      "  - {name: a-1.b_c, url: 'git@example.org:a.git', branch: b}\n"
		      "  - {name: b, url: 'https://me@example.org/b.git', branch: b}\n"
		      "runner:\n  sandbox: none\n  network: true\n  min_free: 1G\n"
		      "  limits: {memory: 512M, processes: 64, cpu: 2h, file_size: 1GiB}\n");

	assert_int_equal(cfg->runner.sandbox, CONFIG_SANDBOX_NONE);
	assert_int_equal(cfg->runner.sandbox_defaulted, 0);
	assert_null(cfg->runner.bwrap);
	assert_int_equal(cfg->runner.network, 1);
	assert_true(cfg->runner.limits.memory == 512LL << 20);
	assert_int_equal(cfg->runner.limits.processes, 64);
	assert_int_equal(cfg->runner.limits.cpu, 7200);
	assert_true(cfg->runner.limits.file_size == 1LL << 30);
	assert_true(cfg->runner.min_free == 1LL << 30);
	config_free(cfg);

	cfg = load_ok(BASE);
	assert_true(cfg->runner.min_free == 256LL << 20);
	assert_int_equal(cfg->runner.sandbox_defaulted, 1);
	assert_int_equal(cfg->runner.network, 0);
	assert_int_equal(cfg->runner.limits.processes, 2048);
	assert_true(cfg->runner.limits.memory >= 16LL << 20);
	if (access("/usr/bin/bwrap", X_OK) == 0) {
		assert_int_equal(cfg->runner.sandbox, CONFIG_SANDBOX_BWRAP);
		assert_non_null(cfg->runner.bwrap);
	}
	config_free(cfg);
}

/* runner.cache: the compiler cache's key, its defaults, and what it refuses at load. */
static void test_runner_cache(void **state)
{
	struct config *cfg;
	char *dir;

	cfg = load_ok(BASE);
	assert_int_equal(cfg->runner.cache.on, 0);
	config_free(cfg);
	if (access("/usr/bin/bwrap", X_OK))
		skip();
	cfg = load_ok(BASE "runner: {cache: {}}\n");
	dir = xstrfmt("%s/state/ccache", tmpdir);
	assert_int_equal(cfg->runner.cache.on, 1);
	assert_string_equal(cfg->runner.cache.dir, dir);
	assert_true(cfg->runner.cache.max == 5LL << 30);
	assert_int_equal(cfg->warnings.nr, 0);
	config_free(cfg);
	free(dir);
	cfg = load_ok(BASE "runner:\n  cache: {dir: cc-store, max: 2G}\n");
	dir = xstrfmt("%s/cc-store", tmpdir);
	assert_string_equal(cfg->runner.cache.dir, dir);
	assert_true(cfg->runner.cache.max == 2LL << 30);
	assert_int_equal(cfg->warnings.nr, 0);
	config_free(cfg);
	free(dir);
	/* the old spelling: the same cache, and a warning that says what it is */
	cfg = load_ok(BASE "runner:\n  cache: {kind: ccache, max: 2G}\n");
	assert_int_equal(cfg->runner.cache.on, 1);
	assert_true(cfg->runner.cache.max == 2LL << 30);
	assert_int_equal(cfg->warnings.nr, 1);
	assert_non_null(strstr(cfg->warnings.v[0], ":3:17: runner.cache.kind: the cache is "
						    "nextbot's own"));
	config_free(cfg);
	cfg = load_ok(BASE "runner: {cache: null}\n");
	assert_int_equal(cfg->runner.cache.on, 0);
	config_free(cfg);

	load_bad(BASE "runner: {cache: {kind: sccache}}\n", 2, "runner.cache.kind", "ccache");
	load_bad(BASE "runner: {cache: {kind: ccache, size: 1G}}\n", 2, "runner.cache.size",
		 "unknown key");
	load_bad(BASE "runner: {cache: {kind: ccache, max: 1K}}\n", 2, "runner.cache.max",
		 "at least 1M");
	load_bad(BASE "runner: {cache: {kind: ccache, max: lots}}\n", 2, "runner.cache.max",
		 "size");
	load_bad(BASE "runner:\n  sandbox: none\n  cache: {kind: ccache}\n", 4, "runner.cache",
		 "runner.sandbox: bwrap");
	load_bad(BASE "runner:\n  kind: slurm\n  cache: {kind: ccache}\n", 4, "runner.cache",
		 "needs listen: HOST:PORT");
	load_bad(BASE "runner:\n  cache: {kind: ccache, listen: 'head:7420'}\n", 3,
		 "runner.cache.listen", "is for runner.kind: slurm");
	load_bad(BASE "runner: {kind: slurm, cache: {kind: ccache, listen: '0.0.0.0:1'}}\n", 2,
		 "runner.cache.listen", "not the wildcard");
	cfg = load_ok(BASE "runner: {kind: slurm, cache: {kind: ccache, listen: '[fd00::1]:0'}}\n");
	assert_string_equal(cfg->runner.cache.listen, "[fd00::1]:0");
	config_free(cfg);
}

/* watch, journey and review_gate (a patch's journey): loaded, defaulted and checked. */
static void test_journey(void **state)
{
	struct config *cfg;

	cfg = load_ok(BASE "trees:\n"
			   "  - {name: mm-next, url: 'https://e.org/mm.git', branch: mm-next}\n"
			   "  - {name: net-next, url: 'https://e.org/n.git', branch: main}\n"
			   "watch:\n"
			   "  - {name: mm-unstable, url: 'https://e.org/mm.git',\n"
			   "     branch: mm-unstable, contacts: [akpm@e.org]}\n"
			   "journey: {trees: ['mm-*'], list: mm-commits@e.org, digest: true}\n"
			   "review_gate:\n"
			   "  - {trees: [mm-next], policy: hold}\n"
			   "  - {trees: ['*'], require: [Acked-by]}\n");
	assert_int_equal(cfg->watch_nr, 1);
	assert_string_equal(cfg->watch[0].name, "mm-unstable");
	assert_int_equal(cfg->never_merge.nr, 1); /* the default, over trees only */
	assert_int_equal(cfg->journey.trees.nr, 1);
	assert_string_equal(cfg->journey.list, "mm-commits@e.org");
	assert_true(cfg->journey.digest);
	assert_int_equal(cfg->gates_nr, 2);
	assert_int_equal(cfg->gates[0].policy, CONFIG_GATE_HOLD);
	assert_int_equal(cfg->gates[0].require.nr, 2);
	assert_string_equal(cfg->gates[0].require.v[0], "Reviewed-by");
	assert_string_equal(cfg->gates[0].require.v[1], "Acked-by");
	assert_int_equal(cfg->gates[1].policy, CONFIG_GATE_REPORT);
	assert_int_equal(cfg->gates[1].require.nr, 1);
	assert_int_equal(cfg->gates[0].verify, CONFIG_GATE_VERIFY_TRAILERS); /* no inbox */
	assert_true(config_globs_match(&cfg->journey.trees, "mm-unstable"));
	assert_false(config_globs_match(&cfg->journey.trees, "net-next"));
	assert_non_null(config_tree_find(cfg, "mm-unstable", NULL));
	assert_null(config_tree_find(cfg, "origin", NULL));
	assert_true(cfg->gates[0].follow); /* a held patch stays held in any tree */
	assert_string_equal(config_journey_list(cfg, "net-next"), "mm-commits@e.org");
	config_free(cfg);

	/* journey.list per tree (the first key that names it), follow turned off */
	cfg = load_ok(BASE "trees:\n"
			   "  - {name: mm-next, url: 'https://e.org/mm.git', branch: mm-next}\n"
			   "  - {name: mm-stable, url: 'https://e.org/mm.git', branch: mm-stable}\n"
			   "  - {name: net-next, url: 'https://e.org/n.git', branch: main}\n"
			   "journey:\n"
			   "  trees: ['*']\n"
			   "  list: {mm-next: next-commits@e.org, 'mm-*': mm-commits@e.org}\n"
			   "review_gate:\n"
			   "  - {trees: [mm-next], policy: hold, follow: false}\n");
	assert_null(cfg->journey.list);
	assert_string_equal(config_journey_list(cfg, "mm-next"), "next-commits@e.org");
	assert_string_equal(config_journey_list(cfg, "mm-stable"), "mm-commits@e.org");
	assert_null(config_journey_list(cfg, "net-next"));
	assert_false(cfg->gates[0].follow);
	config_free(cfg);
	load_bad(BASE "watch: [{name: w, url: 'https://e.org/b', branch: b}]\n"
		      "journey: {trees: [w], list: {w: nobody}}\n",
		 3, "journey.list.w", "expected a mail address");
	load_bad(BASE "watch: [{name: w, url: 'https://e.org/b', branch: b}]\n"
		      "review_gate: [{trees: [w], follow: maybe}]\n",
		 3, "review_gate[0].follow", "expected true or false");

	/* review_gate.verify: mail by default once an inbox takes answers (issue 38) */
	cfg = load_ok(BASE "trees: [{name: a, url: 'https://e.org/a', branch: a}]\n"
			   "inbox: {max_tests: 0}\n"
			   "review_gate: [{trees: [a]}, {trees: [a], verify: trailers}]\n");
	assert_int_equal(cfg->gates[0].verify, CONFIG_GATE_VERIFY_MAIL);
	assert_int_equal(cfg->gates[1].verify, CONFIG_GATE_VERIFY_TRAILERS);
	config_free(cfg);
	load_bad(BASE "trees: [{name: a, url: 'https://e.org/a', branch: a}]\n"
		      "review_gate: [{trees: [a], verify: dkim}]\n",
		 3, "review_gate[0].verify", "mail");
	load_bad(BASE "trees: [{name: a, url: 'https://e.org/a', branch: a}]\n"
		      "watch: [{name: a, url: 'https://e.org/b', branch: b}]\n",
		 3, "watch[0].name", "duplicate name 'a' (a tree at line 2)");
	load_bad(BASE "watch: [{name: origin, url: 'https://e.org/b', branch: b}]\n", 2,
		 "watch[0].name", "the base");
	load_bad(BASE "watch: [{name: w, url: 'https://e.org/b', branch: b, fixes: f}]\n", 2,
		 "watch[0].fixes", "never merged");
	load_bad(BASE "watch: [{name: w, url: 'https://e.org/b', branch: b}]\n"
		      "journey: {trees: [nothing*]}\n",
		 3, "journey.trees", "'nothing*' names no tree");
	load_bad(BASE "watch: [{name: w, url: 'https://e.org/b', branch: b}]\n"
		      "journey: {trees: [w], list: nobody}\n",
		 3, "journey.list", "not a mail address");
	load_bad(BASE "watch: [{name: w, url: 'https://e.org/b', branch: b}]\n"
		      "review_gate: [{trees: [w], policy: hold}]\n",
		 3, "review_gate[0].policy", "never merged");
	load_bad(BASE "watch: [{name: w, url: 'https://e.org/b', branch: b}]\n"
		      "review_gate: [{trees: [w], require: ['Reviewed by']}]\n",
		 3, "review_gate[0].require", "not a trailer key");
	load_bad(BASE "watch: [{name: w, url: 'https://e.org/b', branch: b}]\n"
		      "review_gate: [{trees: [w], require: []}]\n",
		 3, "review_gate[0].require", "no review could count");
	load_bad(BASE "watch: [{name: w, url: 'https://e.org/b', branch: b}]\n"
		      "review_gate: [{require: [Acked-by]}]\n",
		 3, "review_gate[0].trees", "required");
	load_bad(BASE "watch: [{name: w, url: 'https://e.org/b', branch: b}]\n"
		      "review_gate: [{trees: [w], policy: block}]\n",
		 3, "review_gate[0].policy", "block");
}

static void test_missing_file(void **state)
{
	struct config *cfg;

	assert_int_equal(config_load(&cfg, "/nonexistent/nextbot.yaml"), NB_EINVALID);
	assert_null(cfg);
	assert_non_null(strstr(nb_error_last(), "/nonexistent/nextbot.yaml"));
}

/* check-config names every error of a file; a YAML syntax error alone. */
static void test_every_error(void **state)
{
	static const char text[] =
		"workdir: state\n"
		"base: {name: origin, url: \"https://example.org/linux.git\", branch: master}\n"
		"trees:\n"
		"  - {name: good, url: \"https://example.org/a.git\", branch: main}\n"
		"  - {name: bad/name, url: \"https://example.org/b.git\", branch: main}\n"
		"  - {name: other, url: \"https://example.org/c.git\", branch: \"bad..branch\"}\n"
		"build:\n"
		"  - {name: x86, command: make, timeout: forever}\n"
		"bisect: {confirm: 500}\n"
		"notify: {colour: blue}\n"
		"maintainers: {roles: [M, Q]}\n"
		"unknown_key: 1\n";
	static const char *const want[] = { "bad.yaml:12:1: unknown_key", "bad.yaml:5:",
					    "bad.yaml:6:", "bad.yaml:8:", "bad.yaml:9:",
					    "bad.yaml:10:", "bad.yaml:11:" };
	struct strvec errors = STRVEC_INIT;
	struct config *cfg = NULL;
	char *path = write_cfg("bad.yaml", text);
	size_t i, j;

	assert_int_equal(config_load_all(&cfg, path, &errors), NB_EINVALID);
	assert_null(cfg);
	for (i = 0; i < errors.nr; i++)
		print_message("%s\n", errors.v[i]);
	assert_int_equal(errors.nr, sizeof(want) / sizeof(*want));
	for (i = 0; i < sizeof(want) / sizeof(*want); i++) {
		for (j = 0; j < errors.nr && !strstr(errors.v[j], want[i]); j++)
			;
		if (j == errors.nr)
			fail_msg("no error at '%s'", want[i]);
	}
	/* config_load() still records the first one found */
	assert_int_equal(config_load(&cfg, path), NB_EINVALID);
	assert_non_null(strstr(nb_error_last(), "unknown_key"));
	strvec_clear(&errors);
	free(path);
	path = write_cfg("bad.yaml", "trees: [\nunknown_key: 1\n");
	assert_int_equal(config_load_all(&cfg, path, &errors), NB_EINVALID);
	assert_int_equal(errors.nr, 1);
	assert_non_null(strstr(errors.v[0], "malformed YAML"));
	strvec_clear(&errors);
	free(path);
}

/* Several errors inside one item (a tree, a command, a watched branch, a gate): each named. */
static void test_every_error_in_an_item(void **state)
{
	static const char text[] =
		"workdir: state\n"
		"base: {name: origin, url: \"https://example.org/linux.git\", branch: master}\n"
		"trees:\n"
		"  - name: \"bad name\"\n"                         /* 4 */
		"    url: \"https://example.org/a.git\"\n"
		"    branch: \"a..b\"\n"                           /* 6 */
		"    contacts: [nobody, also-nobody]\n"            /* 7 */
		"    colour: red\n"                                /* 8 */
		"  - {name: good, url: \"https://example.org/g.git\", branch: main}\n"
		"  - name: good\n"                                 /* 10 */
		"    branch: main\n"
		"build:\n"
		"  - name: \"b d\"\n"                              /* 13 */
		"    command: make\n"
		"    timeout: soon\n"                              /* 15 */
		"    env: {\"1X\": y}\n"                           /* 16 */
		"watch:\n"
		"  - name: w\n"
		"    url: \"https://example.org/w.git\"\n"
		"    branch: \"x..y\"\n"                           /* 20 */
		"    fixes: f\n"                                   /* 21 */
		"journey:\n"
		"  trees: [nope, nada]\n"                          /* 23 */
		"  list: nolist\n"                                 /* 24 */
		"  digest: maybe\n"                                /* 25 */
		"review_gate:\n"
		"  - trees: [none]\n"                              /* 27 */
		"    require: [\"Bad Key\"]\n";                    /* 28 */
	static const char *const want[] = {
		"8:5: trees[0].colour: unknown key",
		"4:11: trees[0].name: 'bad name' is not a valid tree name",
		"6:13: trees[0].branch: 'a..b'",
		"7:16: trees[0].contacts: 'nobody' is not a mail address",
		"7:24: trees[0].contacts: 'also-nobody' is not a mail address",
		"10:5: trees[2].url: missing",
		"10:11: trees[2].name: duplicate tree name 'good'",
		"13:11: build[0].name: 'b d'",
		"15:14: build[0].timeout:",
		"16:11: build[0].env.1X: not a valid environment variable name",
		"20:13: watch[0].branch: 'x..y'",
		"21:12: watch[0].fixes: a watched branch is never merged",
		"23:11: journey.trees: 'nope' names no tree",
		"23:17: journey.trees: 'nada' names no tree",
		"24:9: journey.list: 'nolist' is not a mail address",
		"25:11: journey.digest:",
		"27:13: review_gate[0].trees: 'none' names no tree",
		"28:15: review_gate[0].require: 'Bad Key' is not a trailer key",
	};
	struct strvec errors = STRVEC_INIT;
	struct config *cfg = NULL;
	char *path = write_cfg("items.yaml", text);
	size_t i, j;

	assert_int_equal(config_load_all(&cfg, path, &errors), NB_EINVALID);
	assert_null(cfg);
	for (i = 0; i < errors.nr; i++)
		print_message("%s\n", errors.v[i]);
	for (i = 0; i < sizeof(want) / sizeof(*want); i++) {
		for (j = 0; j < errors.nr && !strstr(errors.v[j], want[i]); j++)
			;
		if (j == errors.nr)
			fail_msg("no error '%s'", want[i]);
	}
	assert_int_equal(errors.nr, sizeof(want) / sizeof(*want));
	strvec_clear(&errors);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_every_error),
		cmocka_unit_test(test_every_error_in_an_item),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_smtp_tls_default),
		cmocka_unit_test(test_bare_from),
		cmocka_unit_test(test_empty_lists),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_inbox),
		cmocka_unit_test(test_never_merge),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_deadline_at),
		cmocka_unit_test(test_secret),
		cmocka_unit_test(test_matrix),
		cmocka_unit_test(test_matrix_errors),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_runner_sandbox),
		cmocka_unit_test(test_runner_cache),
		cmocka_unit_test(test_journey),
		cmocka_unit_test(test_missing_file),
	};

	return cmocka_run_group_tests_name("config", tests, setup, teardown);
}
