/* Carried fix patches over real nights, with `git am -3` and a C compiler as oracles. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "merge/transport/transport.h"
#include "merge/integrate/integrate.h"
#include "merge/repo/repo.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "tests/gitfixture.h"
#include "tests/threetrees.h"
#include "util/banned.h"

static char top[] = "/tmp/nb-fixes.XXXXXX";
static char *dir;
static int dir_nr;

static void new_dir(void)
{
	free(dir);
	dir = xstrfmt("%s/w%d", top, dir_nr++);
	fixture_dir = dir;
	assert_int_equal(file_mkdir_p(dir, 0755), 0);
}

/* ---- parsing ---- */

static void test_parse(void **state)
{
	const char *mbox =
		"From 0123456789abcdef0123456789abcdef01234567 Mon Sep 17 00:00:00 2001\n"
		"From: =?UTF-8?q?J=C3=B6rg=20Fixer?= <fix@example.org>\n"
		"Date: Tue, 3 Mar 2026 10:00:00 +0100\n"
		"Subject: [PATCH 1/2] b: use\n new_name\n"
		"\n"
		"The rename in t1 broke b.c.\n\nSigned-off-by: J <fix@example.org>\n"
		"---\n b.c | 2 +-\n 1 file changed\n\n"
		"diff --git a/b.c b/b.c\nindex 1111111..2222222 100644\n--- a/b.c\n+++ b/b.c\n"
		"@@ -1 +1 @@\n-old\n+new\n-- \n2.39.2\n\n"
		"From 89abcdef0123456789abcdef0123456789abcdef Mon Sep 17 00:00:00 2001\n"
		"From: =?UTF-8?B?SsO2cmc=?= <j@example.org>\n"
		"Subject: [PATCH v2 2/2] =?UTF-8?q?caf=C3=A9?=\n =?UTF-8?q?_bar?=\n"
		"\n"
		"diff --git a/c b/c\nindex 1111111..2222222 100644\n--- a/c\n+++ b/c\n"
		"@@ -1 +1 @@\n-- x\n+y\n";
	struct fix_patch *p;
	size_t n;

	assert_int_equal(fix_patches_parse(&p, &n, mbox, strlen(mbox)), 0);
	assert_int_equal(n, 2);
	assert_string_equal(p[0].author_name, "J\xc3\xb6rg Fixer");
	assert_string_equal(p[0].author_email, "fix@example.org");
	assert_int_equal(p[0].author_time, 1772528400LL);
	assert_int_equal(p[0].author_offset, 60);
	assert_string_equal(p[0].subject, "b: use new_name");
	assert_string_equal(p[0].message, "b: use new_name\n\nThe rename in t1 broke b.c.\n\n"
					  "Signed-off-by: J <fix@example.org>\n");
	assert_non_null(strstr(p[0].diff, "+new\n"));
	assert_null(strstr(p[0].diff, "2.39.2"));
	assert_string_equal(p[1].author_name, "J\xc3\xb6rg");
	assert_string_equal(p[1].subject, "caf\xc3\xa9 bar");
	assert_int_equal(p[1].author_time, -1);
	/* a removed line "- x" is diff, not a signature */
	assert_non_null(strstr(p[1].diff, "-- x\n+y\n"));
	fix_patch_release(&p[0]);
	fix_patch_release(&p[1]);
	free(p);
	assert_int_equal(fix_patches_parse(&p, &n, "Subject: x\n\nno diff\n", 21), NB_EINVALID);
}

/* ---- nights ---- */

static struct fetch_tree ftrees[3];
static struct integ_tree itrees[3];

/*
 * t1 renames old_name() to new_name(); t2 adds b.c calling old_name(): each builds
 * alone, together they do not.  fixes/t2 holds 0001 (b.c calls new_name), made with
 * git format-patch on top of the merge of both, 0002 (a comment), and 0003 made in
 * another repository (its blobs are unknown here).
 */
static void world(void)
{
	new_dir();
	assert_int_equal(fixture_sh(
		"mkdir remotes fixes; git init -q -b master w; cd w; "
		"echo 'int old_name(void);' > lib.h; "
		"printf '#include \"lib.h\"\\nint old_name(void) { return 1; }\\n' > lib.c; "
		"printf '#include \"lib.h\"\\nint main(void) { return old_name() - 1; }\\n' "
		"> main.c; "
		"c base; "
		"for r in upstream t1 t2; do git init -q --bare ../remotes/$r.git; done; "
		"git push -q ../remotes/upstream.git master; "
		"git checkout -q -b for-next; sed -i s/old_name/new_name/g lib.h lib.c main.c; "
		"c 't1: rename old_name to new_name'; git push -q ../remotes/t1.git for-next; "
		"git checkout -q -b next master; "
		"{ echo '#include \"lib.h\"'; echo 'int b(void)'; echo '{'; "
		"  echo '	return old_name();'; echo '}'; "
		"  for i in 1 2 3 4 5 6 7 8 9 10; do echo \"/* $i */\"; done; } > b.c; "
		"c 't2: b'; git push -q ../remotes/t2.git next; "
		"git checkout -q -b fix for-next; git merge -q --no-edit next; "
		"sed -i 's/old_name/new_name/' b.c; "
		"git -c user.name='J\xc3\xb6rg Fixer' -c user.email=fix@example.org commit -q -a "
		"--author='J\xc3\xb6rg Fixer <fix@example.org>' "
		"-m 'b: use new_name after the rename' -m 'Signed-off-by: J <fix@example.org>'; "
		"sed -i 's|^/\\* 9 \\*/$|/* nine */|' b.c; c 'b: spell nine'; "
		"git format-patch -q -2 -o ../fixes/t2; "
		"git init -q ../elsewhere; cd ../elsewhere; seq 1 5 > b.c; c one; "
		"sed -i s/3/three/ b.c; c 'b: three'; git format-patch -q -1 --start-number 3 "
		"-o ../fixes/t2"), 0);
	three_trees_point(dir, ftrees, itrees);
}

struct night_out {
	struct nb_oid before, after;
	struct fixes_report report;
	struct strbuf log;
};

/* Fetch, merge t1 and t2, apply t2's fixes, finish. */
static void night(struct repo *repo, const char *date, struct night_out *o)
{
	struct fetch_result res[3];
	struct integ_outcome out = INTEG_OUTCOME_INIT;
	struct integ_night *n = NULL;
	char *fixes = xstrfmt("%s/fixes/t2/", dir);
	int i;

	memset(res, 0, sizeof(res));
	fixes_report_release(&o->report);
	assert_int_equal(fetch_trees(res, repo, ftrees, 3, NULL, NULL), 0);
	assert_int_equal(integ_night_new(&n, repo, date, &itrees[0], "nextbot <nb@example.org>",
					 NULL), 0);
	for (i = 1; i < 3; i++) {
		out = (struct integ_outcome)INTEG_OUTCOME_INIT;
		assert_int_equal(integ_night_merge_tree(n, &out, &itrees[i], &res[i].tip, NULL,
							NULL), 0);
		assert_true(out.state == INTEG_MERGED || out.state == INTEG_ALREADY);
		integ_outcome_release(&out);
		if (i == 1) {
			/* not the last step's tree: refused */
			assert_int_equal(integ_night_apply_fixes(n, "t2", fixes, NULL),
					 NB_EINVALID);
		}
	}
	o->before = *integ_night_head(n);
	assert_int_equal(integ_night_apply_fixes(n, "t2", fixes, &o->report), 0);
	o->after = *integ_night_head(n);
	assert_string_equal(integ_night_step(n, 1)->after.hex, o->after.hex);
	strbuf_reset(&o->log);
	strbuf_addstr(&o->log, integ_night_log(n));
	assert_int_equal(integ_night_finish(n, NULL), 0);
	integ_night_free(n);
	for (i = 0; i < 3; i++)
		fetch_result_release(&res[i]);
	free(fixes);
}

/* `git am -3` of each fix file (skipping those that fail) from `before` gives after's tree. */
static void check_git_am(const struct night_out *o)
{
	struct strbuf want = STRBUF_INIT, got = STRBUF_INIT;

	assert_int_equal(
		fixture_sh_out(&want, 1,
			       "rm -rf oracle; git clone -q state/repo.git oracle; "
			       "cd oracle; git checkout -q %s; for p in ../fixes/t2/*.patch; do "
			       "git am -q -3 $p >/dev/null 2>&1 || git am --abort; done; "
			       "git rev-parse HEAD^{tree}",
			       o->before.hex),
		0);
	assert_int_equal(fixture_sh_out(&got, 1, "git --git-dir=state/repo.git rev-parse %s^{tree}",
				o->after.hex), 0);
	assert_string_equal(got.buf, want.buf);
	strbuf_release(&want);
	strbuf_release(&got);
}

/* 0 if `commit` compiles and links. */
static int builds(const char *commit)
{
	return fixture_sh(
		"rm -rf b; mkdir b; git --git-dir=state/repo.git archive %s | tar -x -C b; "
		"cd b; cc -o prog *.c",
		commit);
}

static void test_nights(void **state)
{
	struct repo *repo = NULL;
	struct night_out o = { .report = FIXES_REPORT_INIT, .log = STRBUF_INIT };
	struct strbuf out = STRBUF_INIT;
	char *path;

	world();
	path = xstrfmt("%s/state/repo.git", dir);
	assert_int_equal(repo_open(&repo, path), 0);
	free(path);

	/* night 1: both fixes apply as they stand; 0003 cannot (blobs unknown) */
	night(repo, "2026-04-01", &o);
	assert_int_not_equal(builds(o.before.hex), 0);       /* the semantic conflict is real */
	assert_int_equal(builds(o.after.hex), 0);
	assert_int_equal(o.report.nr, 3);
	assert_string_equal(o.report.items[0].file, "0001-b-use-new_name-after-the-rename.patch");
	assert_string_equal(o.report.items[0].subject, "b: use new_name after the rename");
	assert_int_equal(o.report.items[0].state, FIX_APPLIED);
	assert_int_equal(o.report.items[1].state, FIX_APPLIED);
	assert_int_equal(o.report.items[2].state, FIX_FAILED);
	assert_non_null(strstr(o.report.items[2].reason, "lacks the blobs"));
	assert_string_equal(o.report.items[1].commit.hex, o.after.hex);
	assert_non_null(strstr(o.log.buf, "$ git am -3 t2/0001-b-use-new_name-after-the-rename."
					  "patch\nApplying: b: use new_name after the rename\n"));
	assert_non_null(strstr(o.log.buf, "Patch failed at 0003-b-three.patch b: three\n"
					  "$ git am --abort\n"));
	check_git_am(&o);
	fixture_sh_out(&out, 1,
		       "git --git-dir=state/repo.git log -1 --format='%%an|%%ae|%%cn|%%s' %s^",
		       o.after.hex);
	assert_string_equal(out.buf, "J\xc3\xb6rg Fixer|fix@example.org|nextbot|"
				     "b: use new_name after the rename");

	/* night 2: t2 changed the context: 0001 applies by a 3-way merge */
	assert_int_equal(fixture_sh("cd w; git checkout -q next; sed -i 's|^/\\* 2 \\*/$|/* two "
			"*/|' b.c; "
			    "c 't2: two'; git push -q ../remotes/t2.git next"), 0);
	night(repo, "2026-04-02", &o);
	assert_int_equal(o.report.items[0].state, FIX_APPLIED_3WAY);
	assert_int_equal(o.report.items[1].state, FIX_APPLIED);
	assert_non_null(strstr(o.log.buf, "Using index info to reconstruct a base tree...\n"
					  "Falling back to patching base and 3-way merge...\n"));
	assert_int_equal(builds(o.after.hex), 0);
	check_git_am(&o);

	/* night 3: t2 rewrote the line 0002 changes: 0002 no longer applies, skipped */
	assert_int_equal(fixture_sh("cd w; sed -i 's|^/\\* 9 \\*/$|/* NINE by t2 */|' b.c; c "
			"'t2: nine'; "
			    "git push -q ../remotes/t2.git next"), 0);
	night(repo, "2026-04-03", &o);
	assert_int_equal(o.report.items[0].state, FIX_APPLIED_3WAY);
	assert_int_equal(o.report.items[1].state, FIX_FAILED);
	assert_string_equal(o.report.items[1].reason, "conflicts with next in b.c");
	assert_int_equal(fixes_report_count(&o.report, FIX_FAILED), 2);
	assert_int_equal(builds(o.after.hex), 0);
	check_git_am(&o);

	/* night 4: mainline took t1 and t2 was rebased onto it with the fix: not needed */
	assert_int_equal(fixture_sh("cd w; git checkout -q master; git merge -q --no-edit "
			"for-next; "
			    "git push -q ../remotes/upstream.git master; git checkout -q next; "
			    "git rebase -q master; sed -i s/old_name/new_name/ b.c; "
			    "c 't2: new_name'; "
			    "git push -q -f ../remotes/t2.git next"), 0);
	night(repo, "2026-04-04", &o);
	assert_int_equal(o.report.items[0].state, FIX_NOT_NEEDED);
	assert_non_null(strstr(o.report.items[0].reason, "no longer needed"));
	assert_int_equal(o.report.items[1].state, FIX_FAILED);
	assert_non_null(strstr(o.log.buf, "No changes -- Patch already applied.\n"));
	assert_string_equal(o.before.hex, o.after.hex);
	assert_int_equal(builds(o.after.hex), 0);
	check_git_am(&o);

	fixes_report_release(&o.report);
	strbuf_release(&o.log);
	strbuf_release(&out);
	repo_free(repo);
}

/* A series file orders the fixes; a missing directory is one failed item. */
static void test_series_and_missing(void **state)
{
	struct repo *repo = NULL;
	struct night_out o = { .report = FIXES_REPORT_INIT, .log = STRBUF_INIT };
	struct strbuf out = STRBUF_INIT;
	char *path;

	world();
	/* b.patch needs a.patch first; names sort the other way round */
	assert_int_equal(fixture_sh("rm fixes/t2/*; cd w; git checkout -q fix; git reset -q "
			"--hard HEAD~2; "
			    "echo one > s; c 'add s'; echo two >> s; c 'more s'; "
			    "git format-patch -q -2 -o ../p; mv ../p/0001-* ../fixes/t2/z.patch; "
			    "mv ../p/0002-* ../fixes/t2/a.patch; "
			    "printf '# order\\nz.patch\\n\\na.patch\\n' > ../fixes/t2/series"), 0);
	path = xstrfmt("%s/state/repo.git", dir);
	assert_int_equal(repo_open(&repo, path), 0);
	free(path);
	night(repo, "2026-04-01", &o);
	assert_int_equal(o.report.nr, 2);
	assert_string_equal(o.report.items[0].file, "z.patch");
	assert_int_equal(o.report.items[0].state, FIX_APPLIED);
	assert_int_equal(o.report.items[1].state, FIX_APPLIED);
	fixture_sh_out(&out, 1, "git --git-dir=state/repo.git show %s:s", o.after.hex);
	assert_string_equal(out.buf, "one\ntwo");

	assert_int_equal(fixture_sh("rm -r fixes/t2"), 0);
	night(repo, "2026-04-02", &o);
	assert_int_equal(o.report.nr, 1);
	assert_int_equal(o.report.items[0].state, FIX_FAILED);
	assert_non_null(strstr(o.report.items[0].reason, "fixes/t2"));
	assert_string_equal(o.before.hex, o.after.hex);
	fixes_report_release(&o.report);
	strbuf_release(&o.log);
	strbuf_release(&out);
	repo_free(repo);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_nights),
		cmocka_unit_test(test_series_and_missing),
	};

	three_trees_world(top, &dir);
	return cmocka_run_group_tests_name("fixes", tests, three_trees_setup,
					   three_trees_teardown);
}
