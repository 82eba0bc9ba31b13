/* The tree diff that skips equal subtrees: libgit2's full diff and git diff-tree as oracles. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <git2.h>

#include "merge/repo/repo.h"
#include "merge/git/treediff_int.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/strvec.h"
#include "util/xalloc.h"
#include "tests/gitfixture.h"
#include "util/banned.h"

static char top[] = "/tmp/nb-treediff.XXXXXX";
static git_repository *repo;

#define NCOMMITS 8

/* Commits c0..c7 of every kind of change a tree can see. */
static void world(void)
{
	char *path;

	assert_int_equal(fixture_sh(
		"git init -q -b main r; cd r; "
		"mkdir -p a/b/c d 'sp ace' x; echo 1 > a/b/c/f; echo same > d/x; echo same > d/y; "
		"echo g > 'sp ace/*glob?'; echo 1 > a-b; echo 1 > a.b; echo 1 > x/a; c c0; "
		"echo 2 > a/b/c/f; git mv d e; chmod +x a-b; c c1; "
		"rm -rf a/b; echo file > a/b; ln -s a.b link; c c2; "
		"rm a/b; mkdir -p a/b/new/deep; echo n > a/b/new/deep/z; "
		"rm -rf x; echo x > x; c c3; "
		"git update-index --add --cacheinfo 160000,$(git rev-parse HEAD~1),sub; "
		"git commit -q -m c4; "
		"rm link; echo notlink > link; echo 3 >> 'sp ace/*glob?'; c c5; "
		"rm -rf e; c c6; "
		"git commit -q --allow-empty -m c7"), 0);
	path = xstrfmt("%s/r", top);
	assert_int_equal(git_repository_open(&repo, path), 0);
	free(path);
}

static git_tree *tree_of(int i)
{
	git_object *obj;
	git_tree *t;
	char *spec = xstrfmt("main~%d^{tree}", NCOMMITS - 1 - i);

	assert_int_equal(git_revparse_single(&obj, repo, spec), 0);
	t = (git_tree *)obj;
	free(spec);
	return t;
}

static void patch_text(struct strbuf *out, git_diff *diff)
{
	git_buf buf = GIT_BUF_INIT;

	strbuf_reset(out);
	assert_int_equal(git_diff_to_buf(&buf, diff, GIT_DIFF_FORMAT_PATCH), 0);
	strbuf_add(out, buf.ptr, buf.size);
	git_buf_dispose(&buf);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every pair, both ways and against the empty tree: the same patch as the full diff. */
static void test_same_diff_as_libgit2_and_git(void **state)
{
	struct strbuf want = STRBUF_INIT, got = STRBUF_INIT, names = STRBUF_INIT;
	int i, j, pairs = 0;
	git_oid empty;

	(void)state;
	git_oid_fromstr(&empty, "4b825dc642cb6eb9a060e54bf8d69288fbee4904");
	for (i = -1; i < NCOMMITS; i++) {
		for (j = -1; j < NCOMMITS; j++) {
			git_tree *a = i < 0 ? NULL : tree_of(i), *b = j < 0 ? NULL : tree_of(j);
			git_diff *full, *fast;
			struct strvec paths = STRVEC_INIT;
			char ha[GIT_OID_HEXSZ + 1], hb[GIT_OID_HEXSZ + 1];
			size_t k;

			assert_int_equal(git_diff_tree_to_tree(&full, repo, a, b, NULL), 0);
			assert_int_equal(treediff_new(&fast, repo, a, b, NULL), 0);
			assert_int_equal(git_diff_num_deltas(full), git_diff_num_deltas(fast));
			patch_text(&want, full);
			patch_text(&got, fast);
			assert_string_equal(got.buf, want.buf);
			/* the paths, by git diff-tree */
			assert_int_equal(treediff_paths(&paths, repo, a ? git_tree_id(a) : NULL,
							b ? git_tree_id(b) : NULL), 0);
			qsort(paths.v, paths.nr, sizeof(*paths.v), cmp_str);
			strbuf_reset(&got);
			for (k = 0; k < paths.nr; k++)
				strbuf_addf(&got, "%s\n", paths.v[k]);
			strbuf_reset(&names);
			git_oid_tostr(ha, sizeof(ha), a ? git_tree_id(a) : &empty);
			git_oid_tostr(hb, sizeof(hb), b ? git_tree_id(b) : &empty);
			assert_int_equal(fixture_sh_out(&names, 0,
					 "cd r && git diff-tree -r --no-renames --name-only "
					 "-z %s %s | "
					 "tr '\\0' '\\n' | LC_ALL=C sort", ha, hb), 0);
			assert_string_equal(got.buf, names.buf);
			pairs += paths.nr > 0;
			strvec_clear(&paths);
			git_diff_free(full);
			git_diff_free(fast);
			git_tree_free(a);
			git_tree_free(b);
		}
	}
	assert_true(pairs > 50);        /* the oracle compared real changes, not empties */
	strbuf_release(&want);
	strbuf_release(&got);
	strbuf_release(&names);
}

static void test_nesting_is_bounded(void **state)
{
	git_treebuilder *tb;
	git_oid blob, tree;
	struct strvec paths = STRVEC_INIT;
	int i;

	(void)state;
	assert_int_equal(git_blob_create_from_buffer(&blob, repo, "x\n", 2), 0);
	assert_int_equal(git_treebuilder_new(&tb, repo, NULL), 0);
	assert_int_equal(git_treebuilder_insert(NULL, tb, "f", &blob, GIT_FILEMODE_BLOB), 0);
	assert_int_equal(git_treebuilder_write(&tree, tb), 0);
	git_treebuilder_free(tb);
	for (i = 0; i <= TREEDIFF_MAX_DEPTH; i++) {
		assert_int_equal(git_treebuilder_new(&tb, repo, NULL), 0);
		assert_int_equal(git_treebuilder_insert(NULL, tb, "d", &tree, GIT_FILEMODE_TREE),
				 0);
		assert_int_equal(git_treebuilder_write(&tree, tb), 0);
		git_treebuilder_free(tb);
	}
	assert_true(treediff_paths(&paths, repo, NULL, &tree) < 0);
	assert_non_null(strstr(merge_git_error(), "nested deeper than 4096"));
	strvec_clear(&paths);
}

static int setup_all(void **state)
{
	(void)state;
	fixture_dir = top;
	if (fixture_world_open(top, FIXTURE_HOME) < 0)
		return -1;
	world();
	return 0;
}

static int teardown_all(void **state)
{
	(void)state;
	git_repository_free(repo);
	fixture_world_close(top);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_diff_as_libgit2_and_git),
		cmocka_unit_test(test_nesting_is_bounded),
	};

	return cmocka_run_group_tests_name("treediff", tests, setup_all, teardown_all);
}
