/* feeds/: the simulator's pieces (randomness, text, locks) and worlds made in-process. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <git2.h>

#include "feeds/sim.h"
#include "feeds/world.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

static char tmp_dir[256];

static int setup_tmp(void **state)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(tmp_dir, sizeof(tmp_dir), "%s/nb-feeds.XXXXXX", tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(tmp_dir));
	git_libgit2_init();
	return 0;
}

static int teardown_tmp(void **state)
{
	file_remove_tree(tmp_dir);
	git_libgit2_shutdown();
	return 0;
}

static void test_rng_is_deterministic(void **state)
{
	uint64_t a = 1, b = 1, c = 2;
	int i, seen[7] = { 0 };

	for (i = 0; i < 1000; i++) {
		int x = sim_rng_below(&a, 7);

		assert_int_equal(x, sim_rng_below(&b, 7));
		assert_true(x >= 0 && x < 7);
		seen[x]++;
	}
	for (i = 0; i < 7; i++)
		assert_true(seen[i] > 80); /* roughly uniform */
	assert_true(sim_rng_next(&a) != sim_rng_next(&c));
	assert_int_equal(sim_rng_below(&a, 1), 0);
}

static void test_find_fn_skips_calls_and_declarations(void **state)
{
	const char *text = "unsigned long f(unsigned long v);\n"
			   "int g(void)\n{\n\treturn f(1);\n}\n"
			   "unsigned long f(unsigned long v)\n{\n\treturn v;\n}\n"
			   "int h(void)\n{\n\treturn 0;\n}\n";
	size_t start, end;

	assert_int_equal(sim_text_find_fn(text, "f", &start, &end), 0);
	assert_true(strncmp(text + start, "unsigned long f(unsigned long v)\n{", 34) == 0);
	assert_true(strncmp(text + end, "int h", 5) == 0);
	assert_int_equal(sim_text_find_fn(text, "nothere", &start, &end), -1);
}

static void test_lockset(void **state)
{
	struct sim_lockset ls = { NULL, 0, 0 };
	char key[32];
	int i;

	assert_false(sim_lock_has(&ls, "s:1:2"));
	for (i = 0; i < 1000; i++) {
		snprintf(key, sizeof(key), "s:%d:%d", i % 7, i);
		sim_lock_add(&ls, key);
		sim_lock_add(&ls, key);
	}
	assert_int_equal(ls.nr, 1000);
	assert_true(sim_lock_has(&ls, "s:3:500"));
	assert_false(sim_lock_has(&ls, "s:3:1000"));
	sim_lock_clear(&ls);
	assert_false(sim_lock_has(&ls, "s:3:500"));
	free(ls.keys);
}

static void test_world_errors(void **state)
{
	struct feeds_world_opts opts = FEEDS_WORLD_OPTS_INIT;
	char *dir = xstrfmt("%s/w", tmp_dir);

	opts.trees = -1;
	assert_int_equal(feeds_world_init(dir, &opts), NB_EINVALID);
	assert_int_equal(feeds_world_advance(dir, 1), NB_ENOTFOUND);
	assert_int_equal(feeds_world_advance(dir, 0), NB_EINVALID);
	opts.trees = 0;
	assert_int_equal(feeds_world_init(dir, &opts), 0);
	assert_int_equal(feeds_world_init(dir, &opts), NB_EEXISTS);
	assert_int_equal(feeds_world_advance(dir, 3), 0);
	free(dir);
}

static int count_blobs(const char *root, const git_tree_entry *entry, void *payload)
{
	if (git_tree_entry_type(entry) == GIT_OBJECT_BLOB)
		(*(int *)payload)++;
	return 0;
}

/* More trees and --files: named drivers, optional modules; it still builds and tests. */
static void test_world_scaled_slow(void **state)
{
	struct feeds_world_opts opts = FEEDS_WORLD_OPTS_INIT;
	char *dir = xstrfmt("%s/big", tmp_dir), *cmd;
	git_repository *repo = NULL;
	git_object *obj = NULL;
	git_tree *tree = NULL;
	int files = 0;

	opts.seed = 7;
	opts.trees = 5;
	opts.files = 400;
	assert_int_equal(feeds_world_init(dir, &opts), 0);
	assert_int_equal(feeds_world_advance(dir, 2), 0);
	cmd = xstrfmt("%s/remotes/crypto.git", dir);
	assert_int_equal(git_repository_open_bare(&repo, cmd), 0);
	assert_int_equal(git_revparse_single(&obj, repo, "refs/heads/crypto^{tree}"), 0);
	tree = (git_tree *)obj;
	git_tree_walk(tree, GIT_TREEWALK_PRE, count_blobs, &files);
	if (files < 400 || files > 480)
		fail_msg("%d files", files);
	git_object_free(obj);
	git_repository_free(repo);
	free(cmd);
	cmd = xstrfmt("cd '%s' && git clone -q '%s/remotes/crypto.git' c && cd c && "
		      "test -f drivers/crypto/core.c && ls drivers/block/opt/*.c >/dev/null && "
		      "make -s >/dev/null 2>&1 && make -s test >/dev/null 2>&1",
		      tmp_dir, dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rng_is_deterministic),
		cmocka_unit_test(test_find_fn_skips_calls_and_declarations),
		cmocka_unit_test(test_lockset),
		cmocka_unit_test_setup_teardown(test_world_errors, setup_tmp, teardown_tmp),
		cmocka_unit_test_setup_teardown(test_world_scaled_slow, setup_tmp, teardown_tmp),
	};

	return cmocka_run_group_tests_name("feeds", tests, NULL, NULL);
}
