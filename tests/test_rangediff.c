/* merge/repo/rangediff.c against git range-diff itself: the same pairs on the same two ranges. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <git2.h>

#include "merge/repo/repo.h"
#include "tests/gitfixture.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

static char dir[256];
static char srcdir[4096]; /* the source tree: tests/rangediff_series.py is there */

/* The work repository handle over the test's repository (its .git). */
static struct repo *open_repo(void)
{
	struct repo *repo = NULL;
	char *gitdir = xstrfmt("%s/.git", dir);

	if (repo_open(&repo, gitdir) < 0)
		fail_msg("%s: %s", gitdir, nb_error_last());
	free(gitdir);
	return repo;
}

static int setup_repo(void **state)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/nb-rangediff.XXXXXX", tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
	fixture_dir = dir;
	git_libgit2_init();
	return 0;
}

static int teardown_repo(void **state)
{
	file_remove_tree(dir);
	git_libgit2_shutdown();
	return 0;
}

/* The index in `commits` of the one whose id starts with `abbrev`, or -1. */
static int index_of(const struct rangediff_commit *commits, size_t nr, const char *abbrev)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (!strncmp(commits[i].id.hex, abbrev, strlen(abbrev)))
			return (int)i;
	return -1;
}

/*
 * git range-diff's pairs, "old new" for each paired line of its output ("1:  abc ! 1:
 * def subject"), against ours: the same pairs, and each side's unpaired ones alike.
 */
static void compare_with_git(const char *ranges[4], int seed)
{
	struct rangediff rd = RANGEDIFF_INIT;
	struct strbuf out = STRBUF_INIT;
	struct nb_oid ids[4];
	struct repo *repo = NULL;
	const char *p;
	size_t i, pairs = 0, ours = 0;

	for (i = 0; i < 4; i++)
		assert_int_equal(nb_oid_parse(&ids[i], ranges[i]), 0);
	repo = open_repo();
	assert_int_equal(rangediff_compute(&rd, repo,
					   &(struct rangediff_ranges){ &ids[0], &ids[1], &ids[2],
								       &ids[3] },
					   RANGEDIFF_CREATION_FACTOR, 0),
			 0);
	assert_int_equal(fixture_sh_out(&out, 0, "cd %s && git -c core.abbrev=12 range-diff "
					"--no-color --creation-factor=60 %s..%s %s..%s | grep -E "
					"'^ *[0-9-]+: +[0-9a-f-]+ [=!<>] ' | awk '{print $2, $5}'",
					dir, ranges[0], ranges[1], ranges[2], ranges[3]),
			 0);
	for (p = out.buf; *p;) {
		char a[64] = "", b[64] = "";
		int ia, ib;

		if (sscanf(p, "%63s %63s", a, b) != 2)
			fail_msg("seed %d: odd line in git's output: %s", seed, p);
		ia = a[0] == '-' ? -1 : index_of(rd.old, rd.old_nr, a);
		ib = b[0] == '-' ? -1 : index_of(rd.new, rd.new_nr, b);
		if (ia >= 0 && ib >= 0) {
			pairs++;
			if (rd.old[ia].pair != ib)
				fail_msg("seed %d: git pairs %s with %s, nextbot with %d", seed,
					 a, b, rd.old[ia].pair);
		} else if (ia >= 0 && rd.old[ia].pair >= 0) {
			fail_msg("seed %d: git leaves %s unpaired, nextbot pairs it", seed, a);
		} else if (ib >= 0 && rd.new[ib].pair >= 0) {
			fail_msg("seed %d: git leaves %s unpaired, nextbot pairs it", seed, b);
		} else if (ia < 0 && ib < 0) {
			fail_msg("seed %d: a commit of git's output is not in ours: %s", seed, p);
		}
		p += strcspn(p, "\n");
		p += *p == '\n';
	}
	for (i = 0; i < rd.old_nr; i++)
		ours += rd.old[i].pair >= 0;
	assert_int_equal(ours, pairs);
	rangediff_release(&rd);
	repo_free(repo);
	strbuf_release(&out);
}

/* 40 series and their second versions: nextbot pairs them as git range-diff does. */
static void test_rangediff_pairs_like_git(void **state)
{
	struct strbuf out = STRBUF_INIT;
	const char *p;
	int seeds = 0;

	assert_int_equal(fixture_sh_out(&out, 1, "/usr/bin/python3 %s/tests/rangediff_series.py "
					"%s 1 40", srcdir, dir),
			 0);
	for (p = out.buf; *p; seeds++) {
		char *v[4];
		int seed;

		assert_int_equal(sscanf(p, "%d %ms %ms %ms %ms", &seed, &v[0], &v[1], &v[2], &v[3]),
				 5);
		compare_with_git((const char **)v, seed);
		free(v[0]);
		free(v[1]);
		free(v[2]);
		free(v[3]);
		p += strcspn(p, "\n");
		p += *p == '\n';
	}
	assert_int_equal(seeds, 40);
	strbuf_release(&out);
}

/* A changed pair is shown as git shows it: its header, then the diff of the diffs. */
static void test_rangediff_shows_pair(void **state)
{
	struct rangediff rd = RANGEDIFF_INIT;
	struct strbuf out = STRBUF_INIT, head = STRBUF_INIT;
	struct nb_oid ids[4];
	struct repo *repo = NULL;
	const char *hex[4];
	int i;

	assert_int_equal(fixture_sh("git init -q -b master . && seq 1 12 >f && c base && "
				    "git branch base && sed -i 's/^[3-7]$/&x/' f && "
				    "git commit -q -am 'f: change b' "
				    "-m 'Reviewed-by: R <r@x.org>' && "
				    "git branch v1 && sed -i 's/^5x$/5y/' f && "
				    "git commit -q -a --amend -m 'f: change b' && git branch v2 && "
				    "git checkout -q -b v3 base && echo z >g && c other && "
				    "git cherry-pick v2 >/dev/null"),
			 0);
	assert_int_equal(fixture_sh_out(&head, 1, "git rev-parse base v1 v3 v2"), 0);
	hex[0] = head.buf;
	for (i = 1; i < 4; i++) {
		char *nl = strchr(hex[i - 1], '\n');

		*nl = 0;
		hex[i] = nl + 1;
	}
	for (i = 0; i < 4; i++)
		assert_int_equal(nb_oid_parse(&ids[i], hex[i]), 0);
	repo = open_repo();
	assert_int_equal(rangediff_compute(&rd, repo,
					   &(struct rangediff_ranges){ &ids[0], &ids[1], &ids[0],
								       &ids[3] },
					   RANGEDIFF_CREATION_FACTOR, 0),
			 0);
	assert_int_equal(rd.old[0].pair, 0);
	rangediff_pair_show(&out, &rd, 0, 0);
	assert_non_null(strstr(out.buf, "1:  "));
	assert_non_null(strstr(out.buf, " ! 1:  "));
	assert_non_null(strstr(out.buf, "    @@ Metadata"));
	assert_non_null(strstr(out.buf, "    -    Reviewed-by: R <r@x.org>"));
	assert_non_null(strstr(out.buf, "    -+5x\n"));
	assert_non_null(strstr(out.buf, "    ++5y\n"));
	strbuf_reset(&out);
	assert_int_equal(rangediff_interdiff(&out, repo, &ids[1], &ids[3]), 0);
	assert_non_null(strstr(out.buf, "-5x\n+5y\n"));
	strbuf_reset(&out);
	assert_int_equal(rangediff_interdiff(&out, repo, &ids[1], &ids[2]), NB_ECONFLICT);
	assert_int_equal(out.len, 0);
	rangediff_release(&rd);
	repo_free(repo);
	strbuf_release(&out);
	strbuf_release(&head);
}

int main(void)
{
	if (!getcwd(srcdir, sizeof(srcdir)))
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rangediff_pairs_like_git, setup_repo,
						teardown_repo),
		cmocka_unit_test_setup_teardown(test_rangediff_shows_pair, setup_repo,
						teardown_repo),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
