/* Fetching from a repository on this host: git fsck and git's object lists as the oracle. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include <git2.h>

#include "merge/transport/transport.h"
#include "merge/transport/localfetch_int.h"
#include "merge/repo/repo.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "tests/gitfixture.h"
#include "util/banned.h"

static char top[] = "/tmp/nb-localfetch.XXXXXX";

static void open_pair(git_repository **dst, git_repository **src)
{
	char *d = xstrfmt("%s/dst.git", top), *s = xstrfmt("%s/src", top);

	assert_int_equal(git_repository_open(dst, d), 0);
	assert_int_equal(git_repository_open(src, s), 0);
	free(d);
	free(s);
}

static void rev(git_oid *out, git_repository *repo, const char *spec)
{
	git_object *obj;

	assert_int_equal(git_revparse_single(&obj, repo, spec), 0);
	git_oid_cpy(out, git_object_id(obj));
	git_object_free(obj);
}

static void out_of(struct strbuf *out, const char *cmd)
{
	strbuf_reset(out);
	assert_int_equal(fixture_sh_out(out, 1, "%s", cmd), 0);
}

/* The object files of dst.git, one a line, sorted: what a failed copy must not change. */
#define DST_OBJECTS "find dst.git/objects -type f | sort"

/* dst.git holds the same object files as `before` listed. */
static void assert_dst_objects_are(const struct strbuf *before)
{
	struct strbuf after = STRBUF_INIT;

	out_of(&after, DST_OBJECTS);
	assert_string_equal(before->buf, after.buf);
	strbuf_release(&after);
}

/*
 * Copies src's `specs` (revisions, space separated) into dst.git; asserts the pack
 * holds exactly the objects they reach that dst lacked (git's own list as the
 * oracle), then points dst's refs at them and has git fsck the result.
 */
static void copy_and_check(const char *specs)
{
	git_repository *dst, *src;
	git_oid tips[8];
	struct strbuf want = STRBUF_INIT, got = STRBUF_INIT, packs = STRBUF_INIT;
	char *list = xstrdup(specs), *tok, *save = NULL;
	size_t n = 0;

	open_pair(&dst, &src);
	for (tok = strtok_r(list, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		rev(&tips[n++], src, tok);
	/* what dst lacks of what the specs reach, by git */
	assert_int_equal(fixture_sh("git --git-dir=dst.git cat-file --batch-all-objects "
				    "--batch-check='%%(objectname)' | sort > had; "
				    "git -C src rev-list --objects %s | cut -c1-40 | sort -u "
				    "> all; "
				    "comm -23 all had > want; ls dst.git/objects/pack/*.pack "
				    "2>/dev/null | sort > packs.before || true", specs), 0);
	assert_int_equal(localfetch_copy(dst, src, tips, n, NULL, NULL), 0);
	out_of(&want, "cat want");
	if (want.len) {
		/* one new pack, with exactly those objects */
		out_of(&packs, "ls dst.git/objects/pack/*.pack | sort | comm -13 packs.before - "
			       "| wc -l");
		assert_string_equal(packs.buf, "1");
		out_of(&got, "p=$(ls dst.git/objects/pack/*.pack | sort | "
			     "comm -13 packs.before -); "
			     "git show-index < ${p%.pack}.idx | cut -d' ' -f2 | sort");
		assert_string_equal(got.buf, want.buf);
	} else {
		out_of(&packs, "ls dst.git/objects/pack/*.pack 2>/dev/null | sort | comm -13 "
			       "packs.before - | wc -l");
		assert_string_equal(packs.buf, "0");
	}
	assert_int_equal(fixture_sh("for s in %s; do id=$(git -C src rev-parse $s); "
				    "git --git-dir=dst.git update-ref refs/t/$s $id; done; "
				    "git --git-dir=dst.git fsck --strict --no-dangling 2>&1 | "
				    "grep -v ^notice: | tee fsck.out; test ! -s fsck.out", specs),
			 0);
	git_repository_free(dst);
	git_repository_free(src);
	free(list);
	strbuf_release(&want);
	strbuf_release(&got);
	strbuf_release(&packs);
}

static void test_first_copy_and_increments(void **state)
{
	(void)state;
	assert_int_equal(fixture_sh(
		"git init -q --bare dst.git; git init -q -b main src; cd src; "
		"mkdir -p a/b/c d; echo 1 > a/b/c/f; echo same > d/x; echo same > d/y; c one; "
		"git checkout -q -b side; echo s > a/s; seq 1 50 > a/long; c side1; "
		"git checkout -q main; echo 2 > a/b/c/f; git mv d e; c two; "
		"rm -rf a/b; echo file > a/b; c typechange; "
		"git merge -q --no-edit side; git tag -a v1 -m v1; "
		"git update-index --add --cacheinfo 160000,$(git rev-parse HEAD~1),sub; "
		"git commit -q -m gitlink"), 0);
	copy_and_check("main v1");
	/* the same again: nothing is new, no pack */
	copy_and_check("main v1");
	/* a branch forked from the first commit brings back old contents, merged */
	assert_int_equal(fixture_sh(
		"cd src; git checkout -q -b old main~4; echo 1 > e; mkdir -p n; echo new > n/z; "
		"seq 1 50 > a/long; c 'old fork'; git checkout -q main; "
		"git merge -q --no-edit -X theirs old || { git add -A; git commit -q -m m; }; "
		"echo 3 > a/b; c three"), 0);
	copy_and_check("main");
	copy_and_check("side old main");
}

/*
 * A long history to copy (the threshold lowered): a source that keeps everything in
 * its own packs has them indexed into dst whole, objects no tip reaches included;
 * one with a loose object goes object by object, exactly what the tips lack.
 */
static void test_whole_packs(void **state)
{
	git_repository *dst, *src;
	git_oid tip;
	struct strbuf out = STRBUF_INIT;

	(void)state;
	assert_int_equal(fixture_sh("rm -rf dst.git src; git init -q --bare dst.git; "
				    "git init -q -b main src; cd src; "
				    "for i in 1 2 3 4 5; do mkdir -p d$i; echo $i > d$i/f; "
				    "c c$i; done; "
				    "git checkout -q -b other main~2; echo o > o; c other; "
				    "git checkout -q main; git gc -q --prune=now"), 0);
	open_pair(&dst, &src);
	rev(&tip, src, "main");
	localfetch_whole_packs = 3;
	assert_int_equal(localfetch_copy(dst, src, &tip, 1, NULL, NULL), 0);
	/* every object of src, "other" too: the pack came whole, indexed by dst */
	out_of(&out, "git -C src cat-file --batch-all-objects --batch-check='%(objectname)' "
		     "| sort > srcall; git --git-dir=dst.git cat-file --batch-all-objects "
		     "--batch-check='%(objectname)' | sort | comm -13 - srcall | wc -l");
	assert_string_equal(out.buf, "0");
	assert_int_equal(fixture_sh("git --git-dir=dst.git update-ref refs/t/main "
				    "$(git -C src rev-parse main); "
				    "git --git-dir=dst.git fsck --strict --no-dangling"), 0);
	git_repository_free(dst);
	git_repository_free(src);

	/* a loose object in src: object by object, "other" not copied */
	assert_int_equal(fixture_sh("rm -rf dst.git; git init -q --bare dst.git; cd src; "
				    "echo 6 > d6; c c6"), 0);
	copy_and_check("main");
	out_of(&out, "git --git-dir=dst.git cat-file -e $(git -C src rev-parse other) "
		     "2>/dev/null && echo has || echo lacks");
	assert_string_equal(out.buf, "lacks");
	localfetch_whole_packs = LOCALFETCH_WHOLE_PACKS;
	strbuf_release(&out);
}

/*
 * The simulator's remotes, a grokmirror tree: a source whose objects are all borrowed
 * (objects/info/alternates, relative, then absolute, two levels: libgit2 reads a
 * relative path on the first level only) from a packed store.
 * A long copy indexes the store's packs: dst has every object of the store, its own
 * copy (no alternates of its own), and fsck is clean.  With a loose object in the
 * middle repository, object by object again.
 */
static void test_whole_packs_through_alternates(void **state)
{
	git_repository *dst, *rem;
	git_oid tip;
	char *path = xstrfmt("%s/rem.git", top), *dpath = xstrfmt("%s/dst.git", top);
	struct strbuf out = STRBUF_INIT;

	(void)state;
	assert_int_equal(fixture_sh("rm -rf dst.git store.git mid.git rem.git; "
				    "git init -q --bare dst.git; "
				    "git clone -q --bare src store.git; "
				    "git -C store.git gc -q --prune=now; "
				    "git init -q --bare mid.git; "
				    "echo \"$PWD/store.git/objects\" "
				    "> mid.git/objects/info/alternates; "
				    "git init -q --bare rem.git; "
				    "printf '# borrowed\\n../../mid.git/objects\\n' "
				    "> rem.git/objects/info/alternates; "
				    "git --git-dir=rem.git update-ref refs/heads/main "
				    "$(git -C src rev-parse main); "
				    "test -z \"$(find rem.git/objects mid.git/objects -type f "
				    "! -path '*/info/*')\""), 0);
	assert_int_equal(git_repository_open(&rem, path), 0);
	assert_int_equal(git_repository_open(&dst, dpath), 0);
	rev(&tip, rem, "main");
	localfetch_whole_packs = 3;
	assert_int_equal(localfetch_copy(dst, rem, &tip, 1, NULL, NULL), 0);
	out_of(&out, "git --git-dir=store.git cat-file --batch-all-objects "
		     "--batch-check='%(objectname)' | sort > storeall; "
		     "git --git-dir=dst.git cat-file --batch-all-objects "
		     "--batch-check='%(objectname)' | sort | comm -13 - storeall | wc -l; "
		     "ls dst.git/objects/info/alternates 2>/dev/null | wc -l");
	assert_string_equal(out.buf, "0\n0");
	assert_int_equal(fixture_sh("git --git-dir=dst.git update-ref refs/t/main "
				    "$(git -C src rev-parse main); "
				    "git --git-dir=dst.git fsck --strict --no-dangling"), 0);
	git_repository_free(dst);

	/* a loose object two levels up: "other" is not copied */
	assert_int_equal(fixture_sh("rm -rf dst.git; git init -q --bare dst.git; "
				    "echo loose | "
				    "git --git-dir=mid.git hash-object -w --stdin"), 0);
	assert_int_equal(git_repository_open(&dst, dpath), 0);
	assert_int_equal(localfetch_copy(dst, rem, &tip, 1, NULL, NULL), 0);
	out_of(&out, "git --git-dir=dst.git cat-file -e $(git -C src rev-parse other) "
		     "2>/dev/null && echo has || echo lacks; "
		     "git --git-dir=dst.git cat-file -e $(git -C src rev-parse main) && echo ok");
	assert_string_equal(out.buf, "lacks\nok");
	localfetch_whole_packs = LOCALFETCH_WHOLE_PACKS;
	git_repository_free(dst);
	git_repository_free(rem);
	free(path);
	free(dpath);
	strbuf_release(&out);
}

/*
 * One hostile objects/info/alternates in ha/rem.git, whose objects are all in
 * hstore.git ($S, every object packed; "other" reached by no tip of rem): `setup`
 * runs in ha/ and writes it.  A long copy of main ends in seconds with main's closure
 * in dst (git fsck the oracle): the store's packs whole (`whole`, "other" copied) or,
 * where the reader gave up on a line, object by object ("other" not copied).
 */
static void hostile_alternates(const char *setup, int whole)
{
	git_repository *dst, *rem;
	git_oid tip;
	char *path = xstrfmt("%s/ha/rem.git", top), *dpath = xstrfmt("%s/dst.git", top);
	struct strbuf out = STRBUF_INIT;
	time_t start;

	assert_int_equal(fixture_sh("rm -rf dst.git ha; git init -q --bare dst.git; mkdir ha; "
				    "git init -q --bare ha/rem.git; git init -q --bare ha/mid.git; "
				    "git -C hsrc rev-parse main > ha/rem.git/refs/heads/main; "
				    "rm -f hstore.git/objects/info/alternates; cd ha; "
				    "S=$(cd ../hstore.git/objects && pwd); %s", setup), 0);
	start = time(NULL);
	assert_int_equal(git_repository_open(&rem, path), 0);
	assert_int_equal(git_repository_open(&dst, dpath), 0);
	rev(&tip, rem, "main");
	assert_int_equal(localfetch_copy(dst, rem, &tip, 1, NULL, NULL), 0);
	assert_true(time(NULL) - start < 60);
	git_repository_free(dst);
	git_repository_free(rem);
	out_of(&out, "git --git-dir=dst.git cat-file -e $(git -C hsrc rev-parse other) "
		     "2>/dev/null && echo has || echo lacks; "
		     "git --git-dir=dst.git update-ref refs/t/main $(git -C hsrc rev-parse main) "
		     "&& git --git-dir=dst.git fsck --strict --no-dangling 2>&1 | "
		     "grep -v ^notice: | tee fsck.out; test ! -s fsck.out && echo clean");
	assert_string_equal(out.buf, whole ? "has\nclean" : "lacks\nclean");
	free(path);
	free(dpath);
	strbuf_release(&out);
}

/*
 * The alternates reader (whole packs through objects/info/alternates) against what a
 * remote's owner may write there: a cycle, "/", a path that is not there, 50 MB of
 * lines, CR line ends, a NUL, a path longer than PATH_MAX, a corrupt pack.
 */
static void test_hostile_alternates(void **state)
{
	(void)state;
	assert_int_equal(fixture_sh("rm -rf hsrc hstore.git; git init -q -b main hsrc; cd hsrc; "
				    "for i in 1 2 3 4 5; do echo $i > f$i; c c$i; done; "
				    "git checkout -q -b other main~2; echo o > o; c other; "
				    "git checkout -q main; cd ..; "
				    "git clone -q --bare hsrc hstore.git; "
				    "git -C hstore.git gc -q --prune=now"), 0);
	localfetch_whole_packs = 3;
	/* a cycle: rem -> store and mid, mid -> rem, store -> rem (relative, absolute) */
	hostile_alternates("printf '%s\\n../../mid.git/objects\\n' $S "
			   "> rem.git/objects/info/alternates; "
			   "echo $PWD/rem.git/objects > mid.git/objects/info/alternates; "
			   "echo ../../ha/rem.git/objects > $S/info/alternates", 1);
	/* the root: an object directory with no loose object and no pack */
	hostile_alternates("printf '%s\\n/\\n' $S > rem.git/objects/info/alternates", 1);
	/* a path that is not there: libgit2 skips it, the reader gives up */
	hostile_alternates("printf '%s\\n/nonexistent/objects\\n' $S "
			   "> rem.git/objects/info/alternates", 0);
	/* 50 MB of lines, every one the store: past what the reader reads */
	hostile_alternates("yes $S | head -c 50000000 > rem.git/objects/info/alternates; "
			   "test $(wc -c < rem.git/objects/info/alternates) = 50000000", 0);
	/* CR line ends: libgit2 reads the store, the reader finds no such path */
	hostile_alternates("printf '%s\\r\\n' $S > rem.git/objects/info/alternates", 0);
	/* a NUL ends the text for git, libgit2 and the reader alike */
	hostile_alternates("printf '%s\\n\\000/nonexistent/objects\\n' $S "
			   "> rem.git/objects/info/alternates", 1);
	/* a path of 100,000 bytes */
	hostile_alternates("{ echo $S; printf '/%0100000d\\n' 0; } "
			   "> rem.git/objects/info/alternates", 0);
	/* a truncated pack (its index whole) in a repository borrowed from first */
	assert_int_equal(fixture_sh("rm -rf junk; git init -q junk; cd junk; echo j > j; c j; "
				    "git gc -q --prune=now; p=$(ls .git/objects/pack/*.pack); "
				    "chmod u+w $p; truncate -s 100 $p"), 0);
	hostile_alternates("printf '%s/../junk/.git/objects\n%s\n' $PWD $S "
			   "> rem.git/objects/info/alternates", 0);
	localfetch_whole_packs = LOCALFETCH_WHOLE_PACKS;
}

/* A tree nested one level deeper than allowed, written by libgit2 into src. */
static void nested_commit(git_oid *out, git_repository *src, int depth)
{
	git_treebuilder *tb;
	git_oid blob, tree;
	git_signature *sig;
	git_tree *t;
	int i;

	assert_int_equal(git_blob_create_from_buffer(&blob, src, "x\n", 2), 0);
	assert_int_equal(git_treebuilder_new(&tb, src, NULL), 0);
	assert_int_equal(git_treebuilder_insert(NULL, tb, "f", &blob, GIT_FILEMODE_BLOB), 0);
	assert_int_equal(git_treebuilder_write(&tree, tb), 0);
	git_treebuilder_free(tb);
	for (i = 0; i < depth; i++) {
		assert_int_equal(git_treebuilder_new(&tb, src, NULL), 0);
		assert_int_equal(git_treebuilder_insert(NULL, tb, "d", &tree, GIT_FILEMODE_TREE),
				 0);
		assert_int_equal(git_treebuilder_write(&tree, tb), 0);
		git_treebuilder_free(tb);
	}
	assert_int_equal(git_tree_lookup(&t, src, &tree), 0);
	assert_int_equal(git_signature_now(&sig, "t", "t@example.org"), 0);
	assert_int_equal(git_commit_create(out, src, NULL, sig, sig, NULL, "deep", t, 0, NULL), 0);
	git_signature_free(sig);
	git_tree_free(t);
}

/* A fresh empty dst.git and a src whose main is made by `commits`; the pair opened. */
static void fresh_pair(git_repository **dst, git_repository **src, const char *commits)
{
	assert_int_equal(fixture_sh("rm -rf dst.git src; git init -q --bare dst.git; "
				    "git init -q -b main src; cd src; %s", commits), 0);
	open_pair(dst, src);
}

static void test_hostile_sources(void **state)
{
	git_repository *dst, *src;
	git_oid tip;
	struct strbuf before = STRBUF_INIT;

	(void)state;
	fresh_pair(&dst, &src, "echo a > a; c one");
	out_of(&before, DST_OBJECTS);

	nested_commit(&tip, src, LOCALFETCH_MAX_DEPTH + 1);
	assert_true(localfetch_copy(dst, src, &tip, 1, NULL, NULL) < 0);
	assert_non_null(strstr(merge_git_error(), "nested deeper than 4096"));

	/* an object the source names but lacks */
	assert_int_equal(fixture_sh("cd src; echo gone > g; c two; rm .git/objects/"
				    "$(git rev-parse HEAD:g | sed 's,^..,&/,')"), 0);
	rev(&tip, src, "main");
	assert_true(localfetch_copy(dst, src, &tip, 1, NULL, NULL) < 0);
	/* a lost commit in the middle of the history */
	assert_int_equal(fixture_sh("cd src; echo back > g; c three; rm .git/objects/"
				    "$(git rev-parse HEAD~1 | sed 's,^..,&/,')"), 0);
	git_repository_free(src);
	git_repository_free(dst);
	open_pair(&dst, &src);
	rev(&tip, src, "main");
	assert_true(localfetch_copy(dst, src, &tip, 1, NULL, NULL) < 0);
	assert_non_null(strstr(merge_git_error(), "cannot be read in the remote repository"));
	/* libgit2's own reason is kept whole (it was once overwritten while being quoted) */
	assert_non_null(strstr(merge_git_error(), "(object not found - no match for id ("));
	/* a shallow clone says so */
	assert_int_equal(fixture_sh("rm -rf shallow; git clone -q --depth 1 file://$PWD/src/.git "
				    "shallow"), 0);
	git_repository_free(src);
	assert_int_equal(fixture_sh("test -f shallow/.git/shallow"), 0);
	{
		char *sp = xstrfmt("%s/shallow", top);

		assert_int_equal(git_repository_open(&src, sp), 0);
		free(sp);
	}
	assert_int_equal(fixture_sh("cd shallow; echo s > s; c four"), 0);
	rev(&tip, src, "HEAD");
	assert_true(localfetch_copy(dst, src, &tip, 1, NULL, NULL) < 0);
	assert_non_null(strstr(merge_git_error(), "it is a shallow clone"));
	/* nothing of it reached the work repository */
	assert_dst_objects_are(&before);
	git_repository_free(dst);
	git_repository_free(src);
	strbuf_release(&before);
}

static int stop_at_once(unsigned long long bytes, void *payload)
{
	(void)payload;
	if (!bytes)
		return 0;
	git_error_set_str(GIT_ERROR_NET, "too much");
	return -7;
}

/* Calls before any byte of pack is written, and the copy stopped at the first one. */
static int count_unwritten(unsigned long long bytes, void *payload)
{
	int *n = payload;

	if (bytes)
		return 0;
	if (n[1] && ++n[0] == n[1]) {
		git_error_set_str(GIT_ERROR_NET, "stopped while packing");
		return -9;
	}
	if (!n[1])
		n[0]++;
	return 0;
}

/*
 * A small copy (a few objects: no beat from the queueing's own count) still beats
 * before its pack is written: the packbuilder's reports while it queues, when its
 * delta search starts and ends (the first night's copy went 600 s without a beat
 * there and was given up); a stop there leaves dst as it was.
 */
static void test_progress_beats_during_delta_search(void **state)
{
	git_repository *dst, *src;
	git_oid tip;
	int n[2] = { 0, 0 };
	struct strbuf before = STRBUF_INIT;

	(void)state;
	fresh_pair(&dst, &src, "seq 1 1000 > a; seq 1 1001 > b; mkdir d; seq 2 1000 > d/a; c one");
	rev(&tip, src, "main");
	assert_int_equal(localfetch_copy(dst, src, &tip, 1, count_unwritten, n), 0);
	assert_true(n[0] >= 3);
	git_repository_free(dst);
	git_repository_free(src);

	fresh_pair(&dst, &src, "seq 1 1000 > a; seq 1 1001 > b; mkdir d; seq 2 1000 > d/a; c one");
	out_of(&before, DST_OBJECTS);
	rev(&tip, src, "main");
	n[0] = 0;
	n[1] = 1;
	assert_int_equal(localfetch_copy(dst, src, &tip, 1, count_unwritten, n), -9);
	assert_dst_objects_are(&before);
	git_repository_free(dst);
	git_repository_free(src);
	strbuf_release(&before);
}

static void test_progress_stops_the_copy(void **state)
{
	git_repository *dst, *src;
	git_oid tip;
	struct strbuf before = STRBUF_INIT;

	(void)state;
	fresh_pair(&dst, &src, "seq 1 1000 > a; c one");
	out_of(&before, DST_OBJECTS);
	rev(&tip, src, "main");
	assert_int_equal(localfetch_copy(dst, src, &tip, 1, stop_at_once, NULL), -7);
	assert_dst_objects_are(&before);
	git_repository_free(dst);
	git_repository_free(src);
	strbuf_release(&before);
}

/* Through fetch_trees(): the byte cap and a missing branch, named in the reason. */
static void test_fetch_trees_local(void **state)
{
	struct repo *repo = NULL;
	struct fetch_result r[2];
	struct fetch_creds cap = { .max_bytes = 64 };
	char *url = xstrfmt("file://%s/src", top), *path = xstrfmt("%s/work.git", top);
	struct fetch_tree ft[2] = { { "t", url, "main", NULL }, { "u", url, "nope", NULL } };

	(void)state;
	assert_int_equal(repo_open(&repo, path), 0);
	memset(r, 0, sizeof(r));
	assert_int_equal(fetch_trees(r, repo, ft, 2, &cap, NULL), 0);
	assert_int_equal(r[0].state, FETCH_FAILED);
	assert_non_null(strstr(r[0].reason, "more than the cap"));
	assert_int_equal(r[1].state, FETCH_FAILED);
	assert_non_null(strstr(r[1].reason, "branch nope not found"));
	fetch_result_release(&r[0]);
	fetch_result_release(&r[1]);
	memset(r, 0, sizeof(r));
	assert_int_equal(fetch_trees(r, repo, ft, 1, NULL, NULL), 0);
	assert_int_equal(r[0].state, FETCH_FETCHED);
	fetch_result_release(&r[0]);
	repo_free(repo);
	free(url);
	free(path);
}

static void test_which_urls_are_local(void **state)
{
	char *p;

	(void)state;
	p = localfetch_path("file:///srv/git/a%20b.git");
	assert_string_equal(p, "/srv/git/a b.git");
	free(p);
	p = localfetch_path("file://localhost/srv/x.git");
	assert_string_equal(p, "/srv/x.git");
	free(p);
	p = localfetch_path(top);
	assert_string_equal(p, top);
	free(p);
	assert_null(localfetch_path("file://host.example.org/srv/x.git"));
	assert_null(localfetch_path("file:///srv/%00x"));
	assert_null(localfetch_path("file:///srv/%zz"));
	assert_null(localfetch_path("https://git.kernel.org/pub/scm/linux.git"));
	assert_null(localfetch_path("git@example.org:linux.git"));
	assert_null(localfetch_path("/nonexistent/path.git"));
}

static int setup_all(void **state)
{
	(void)state;
	fixture_dir = top;
	return fixture_world_open(top, FIXTURE_HOME);
}

static int teardown_all(void **state)
{
	(void)state;
	fixture_world_close(top);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_which_urls_are_local),
		cmocka_unit_test(test_first_copy_and_increments),
		cmocka_unit_test(test_whole_packs),
		cmocka_unit_test(test_whole_packs_through_alternates),
		cmocka_unit_test(test_hostile_alternates),
		cmocka_unit_test(test_hostile_sources),
		cmocka_unit_test(test_progress_stops_the_copy),
		cmocka_unit_test(test_progress_beats_during_delta_search),
		cmocka_unit_test(test_fetch_trees_local),
	};

	return cmocka_run_group_tests_name("localfetch", tests, setup_all, teardown_all);
}
