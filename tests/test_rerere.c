/* Conflict memory: hunks and ids against git rerere, and nights resolved from memory. */
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

static char top[] = "/tmp/nb-rerere.XXXXXX";
static char *dir;
static int dir_nr;

static void new_dir(void)
{
	struct strbuf out = STRBUF_INIT;

	free(dir);
	dir = xstrfmt("%s/w%d", top, dir_nr++);
	fixture_dir = dir;
	assert_int_equal(file_mkdir_p(dir, 0755), 0);
	strbuf_release(&out);
}

/* ---- text level ---- */

static void test_parse_and_ids(void **state)
{
	const char *a = "x\n<<<<<<< next\none\n=======\ntwo\n>>>>>>> t/b\ny\n";
	const char *b = "x\n<<<<<<< HEAD\ntwo\n||||||| base\norig\n=======\none\n>>>>>>> o\ny\n";
	const char *bad = "<<<<<<< a\n<<<<<<< b\n=======\n>>>>>>> c\n";
	struct rerere_file fa = RERERE_FILE_INIT, fb = RERERE_FILE_INIT;

	assert_int_equal(rerere_parse(&fa, a, strlen(a)), 0);
	assert_int_equal(rerere_parse(&fb, b, strlen(b)), 0);
	assert_int_equal(fa.nr, 1);
	assert_int_equal(fb.nr, 1);
	assert_int_equal(fa.hunks[0].start, 2);
	assert_int_equal(fa.hunks[0].end, strlen(a) - 2);
	/* sides swapped, other labels, a diff3 base: the same preimage */
	assert_string_equal(fa.hunks[0].id, fb.hunks[0].id);
	rerere_file_release(&fa);
	assert_int_equal(rerere_parse(&fa, bad, strlen(bad)), NB_EINVALID);
	assert_int_equal(rerere_parse(&fa, "<<<<<<< a\nx\n", 12), NB_EINVALID);
	assert_int_equal(rerere_parse(&fa, "a\n=======\nb\n", 12), 0);
	assert_int_equal(fa.nr, 0);
	assert_true(rerere_has_markers(a, strlen(a)));
	assert_false(rerere_has_markers("a\n======= x\n<<<<<<<\n", 20));
	rerere_file_release(&fa);
	rerere_file_release(&fb);
}

/* Our hunk id of a one-hunk file is git rerere's id (its hash covers all hunks). */
static void test_id_matches_git_rerere(void **state)
{
	struct rerere_file f = RERERE_FILE_INIT;
	struct strbuf out = STRBUF_INIT, text = STRBUF_INIT;
	char *path;

	new_dir();
	assert_int_equal(
		fixture_sh("git init -q -b master r; cd r; git config rerere.enabled true; "
			   "seq 1 9 > f; c base; git checkout -q -b side; "
			   "sed -i 's/^5$/zz side/' f; c side; git checkout -q master; "
			   "sed -i 's/^5$/aa master/' f; c master; git merge side || true"),
		0);
	assert_int_equal(fixture_sh_out(&out, 0, "ls r/.git/rr-cache"), 0);
	strbuf_trim(&out);
	assert_int_equal(strlen(out.buf), 40);
	path = xstrfmt("%s/r/f", dir);
	assert_int_equal(strbuf_read_file(&text, path, 0), 0);
	assert_int_equal(rerere_parse(&f, text.buf, text.len), 0);
	assert_int_equal(f.nr, 1);
	assert_string_equal(f.hunks[0].id, out.buf);
	free(path);
	rerere_file_release(&f);
	strbuf_release(&out);
	strbuf_release(&text);
}

static void test_record_replay_text(void **state)
{
	const char *c = "a\n<<<<<<< x\n1\n=======\n2\n>>>>>>> y\nmid\n<<<<<<< x\n3\n=======\n4\n"
			">>>>>>> y\nz\n";
	const char *e = "a\none-two\nmid\nthree\nfour\nz\n";
	const char *swapped = "q\n<<<<<<< next\n4\n=======\n3\n>>>>>>> t\nr\n";
	struct strbuf out = STRBUF_INIT;
	struct rerere_entry *ents;
	struct rerere_record_opts o = { .path = "f", .tree = "t", .date = "2026-01-02" };
	char *rdir;
	size_t n, m, total;

	new_dir();
	rdir = xstrfmt("%s/rerere", dir);
	o.dir = rdir;
	assert_int_equal(rerere_record(&n, &o, c, strlen(c), "a\n", 2),
			 NB_EINVALID);
	assert_int_equal(rerere_record(&n, &o, c, strlen(c), c,
				       strlen(c)), NB_EINVALID);   /* markers left */
	assert_int_equal(rerere_record(&n, &o, c, strlen(c),
				       "a\nX\nMID\nY\nz\n", 12), NB_EINVALID);
	assert_false(file_exists(rdir));
	assert_int_equal(rerere_record(&n, &o, c, strlen(c), e,
				       strlen(e)), 0);
	assert_int_equal(n, 2);
	assert_int_equal(rerere_replay(&out, &m, &total, rdir, c, strlen(c)), 0);
	assert_string_equal(out.buf, e);
	/* one hunk known, in another file, sides swapped */
	assert_int_equal(rerere_replay(&out, &m, &total, rdir, swapped, strlen(swapped)), 0);
	assert_string_equal(out.buf, "q\nthree\nfour\nr\n");
	assert_int_equal(rerere_replay(&out, &m, &total, rdir, "<<<<<<< a\n5\n=======\n6\n"
				       ">>>>>>> b\n", 32), NB_ECONFLICT);
	assert_int_equal(m, 0);
	assert_int_equal(total, 1);
	assert_int_equal(rerere_list(&ents, &n, rdir), 0);
	assert_int_equal(n, 2);
	assert_string_equal(ents[0].path, "f");
	assert_string_equal(ents[1].tree, "t");
	assert_string_equal(ents[1].recorded, "2026-01-02");
	rerere_list_free(ents, n);
	free(rdir);
	strbuf_release(&out);
}

/* ---- nights over real remotes ---- */

static struct fetch_tree ftrees[3];
static struct integ_tree itrees[3];

/*
 * remotes/upstream.git (master), remotes/t1.git (for-next), remotes/t2.git (next);
 * t1 and t2 both change line 5 of f.
 */
static void world(void)
{
	new_dir();
	assert_int_equal(fixture_sh("mkdir remotes; git init -q -b master w; cd w; seq 1 30 > f; "
			    "echo a > other; c base; "
			    "for r in upstream t1 t2; do "
			    "git init -q --bare ../remotes/$r.git; done; "
			    "git push -q ../remotes/upstream.git master; "
			    "git checkout -q -b for-next; sed -i 's/^5$/five-t1/' f; c 't1: five'; "
			    "git push -q ../remotes/t1.git for-next; "
			    "git checkout -q -b next master; sed -i 's/^5$/five-t2/' f; "
			    "c 't2: five'; "
			    "git push -q ../remotes/t2.git next"), 0);
	three_trees_point(dir, ftrees, itrees);
}

/* One night: fetch, merge the trees in `order`, finish.  Outcomes into o[1..2]. */
static void night(struct repo *repo, const char *date, const int order[2],
		  struct integ_outcome o[3], struct strbuf *log)
{
	struct fetch_result res[3];
	struct integ_night *n = NULL;
	char *workdir = xstrfmt("%s/state", dir);
	int i;

	memset(res, 0, sizeof(res));
	assert_int_equal(fetch_trees(res, repo, ftrees, 3, NULL, NULL), 0);
	assert_int_equal(integ_night_new(&n, repo, date, &itrees[0], "nextbot <nb@example.org>",
					 NULL), 0);
	integ_night_set_rerere(n, workdir);
	for (i = 0; i < 2; i++) {
		int t = order[i];

		o[t] = (struct integ_outcome)INTEG_OUTCOME_INIT;
		assert_int_equal(res[t].state, FETCH_FETCHED);
		assert_int_equal(integ_night_merge_tree(n, &o[t], &itrees[t], &res[t].tip, NULL,
							NULL), 0);
	}
	strbuf_reset(log);
	strbuf_addstr(log, integ_night_log(n));
	assert_int_equal(integ_night_finish(n, NULL), 0);
	integ_night_free(n);
	for (i = 0; i < 3; i++)
		fetch_result_release(&res[i]);
	free(workdir);
}

/* next:f is seq 1 30 (plus `extra` lines) edited by the sed script. */
static void check_f(const char *sed, const char *extra)
{
	struct strbuf want = STRBUF_INIT, got = STRBUF_INIT;

	fixture_sh_out(&want, 0, "{ seq 1 30; printf '%s'; } | sed '%s'", extra, sed);
	assert_int_equal(fixture_sh_out(&got, 0, "git --git-dir=state/repo.git show next:f"), 0);
	assert_string_equal(got.buf, want.buf);
	strbuf_release(&want);
	strbuf_release(&got);
}

static void test_nights_remember(void **state)
{
	static const int t1_t2[2] = { 1, 2 }, t2_t1[2] = { 2, 1 };
	struct repo *repo = NULL;
	struct integ_outcome o[3];
	struct strbuf log = STRBUF_INIT, report = STRBUF_INIT, out = STRBUF_INIT;
	struct rerere_entry *ents;
	char *path, *workdir;
	size_t n;

	world();
	workdir = xstrfmt("%s/state", dir);
	path = xstrfmt("%s/repo.git", workdir);
	assert_int_equal(repo_open(&repo, path), 0);
	free(path);

	/* night 1: t2 conflicts with t1 and is left out; its files wait in resolve/ */
	assert_int_equal(rerere_resolve_tree(&report, workdir, "t2", "2026-03-01"), NB_ENOTFOUND);
	night(repo, "2026-03-01", t1_t2, o, &log);
	assert_int_equal(o[1].state, INTEG_MERGED);
	assert_int_equal(o[2].state, INTEG_LEFT_OUT);
	assert_int_equal(o[2].rerere_resolved, 0);
	assert_non_null(o[2].resolve_dir);
	path = xstrfmt("%s/resolve/t2", workdir);
	assert_string_equal(o[2].resolve_dir, path);
	free(path);
	assert_non_null(strstr(log.buf, "CONFLICT (content): Merge conflict in f\n"));
	assert_non_null(strstr(log.buf, "# t2: conflicted files kept for `nextbot resolve t2`"));
	assert_int_equal(fixture_sh("grep -q '^<<<<<<< next$' state/resolve/t2/f && "
			    "grep -q '^>>>>>>> t2/next$' state/resolve/t2/f && "
			    "grep -qx 'path f' state/resolve/t2.meta && "
			    "grep -qx \"tip $(git -C w rev-parse next)\" "
			    "state/resolve/t2.meta"), 0);
	integ_outcome_release(&o[1]);
	integ_outcome_release(&o[2]);

	/* resolve before editing: markers are still there, nothing is recorded */
	assert_int_equal(rerere_resolve_tree(&report, workdir, "t2", "2026-03-01"), NB_EINVALID);
	path = xstrfmt("%s/rerere", workdir);
	assert_false(file_exists(path));
	free(path);
	/* the maintainer resolves the hunk and runs `nextbot resolve t2` */
	assert_int_equal(
		fixture_sh("cd state/resolve/t2 && awk '/^<<<<<<< /{print \"five-both\"; s=1; "
			   "next} /^>>>>>>> /{s=0; next} !s' f > f.new && mv f.new f"),
		0);
	assert_int_equal(rerere_resolve_tree(&report, workdir, "t2", "2026-03-01"), 0);
	assert_string_equal(report.buf, "Recorded resolution for 'f' (1 hunk).\n");
	assert_int_equal(rerere_list(&ents, &n, path = xstrfmt("%s/rerere", workdir)), 0);
	free(path);
	assert_int_equal(n, 1);
	assert_string_equal(ents[0].path, "f");
	assert_string_equal(ents[0].tree, "t2");
	rerere_list_free(ents, n);

	/* nights 2-4: both trees move on elsewhere; the conflict is resolved from memory */
	assert_int_equal(
		fixture_sh("cd w; git checkout -q for-next; sed -i 's/^25$/t1-25/' f; c t1-25; "
			   "git push -q ../remotes/t1.git for-next; git checkout -q next; "
			   "echo t2 >> other; c t2-other; git push -q ../remotes/t2.git next"),
		0);
	night(repo, "2026-03-02", t1_t2, o, &log);
	assert_int_equal(o[1].state, INTEG_MERGED);
	assert_int_equal(o[2].state, INTEG_MERGED);
	assert_int_equal(o[2].rerere_resolved, 1);
	assert_int_equal(o[2].conflicts_nr, 0);
	assert_null(o[2].resolve_dir);
	assert_non_null(strstr(log.buf, "CONFLICT (content): Merge conflict in f\n"
					"Resolved 'f' using previous resolution.\n"
					"Automatic merge failed; fix conflicts and then commit the "
					"result.\n$ git commit --no-edit -v -a\n"));
	check_f("s/^5$/five-both/; s/^25$/t1-25/", "");
	assert_int_equal(fixture_sh_out(&out, 0, "git --git-dir=state/repo.git show "
			"next:other"), 0);
	assert_string_equal(out.buf, "a\nt2\n");
	integ_outcome_release(&o[1]);
	integ_outcome_release(&o[2]);

	/* the other order: t1 now meets t2's side as "next"; sides sorted, same record */
	night(repo, "2026-03-03", t2_t1, o, &log);
	assert_int_equal(o[2].state, INTEG_MERGED);
	assert_int_equal(o[1].state, INTEG_MERGED);
	assert_int_equal(o[1].rerere_resolved, 1);
	assert_non_null(strstr(log.buf, "Resolved 'f' using previous resolution.\n"));
	check_f("s/^5$/five-both/; s/^25$/t1-25/", "");
	integ_outcome_release(&o[1]);
	integ_outcome_release(&o[2]);

	/* mainline moves too */
	assert_int_equal(fixture_sh("cd w; git checkout -q master; echo 31 >> f; c up-31; "
			    "git push -q ../remotes/upstream.git master; git checkout -q for-next; "
			    "git merge -q --no-edit master; "
			    "git push -q ../remotes/t1.git for-next"), 0);
	night(repo, "2026-03-04", t1_t2, o, &log);
	assert_int_equal(o[2].state, INTEG_MERGED);
	assert_int_equal(o[2].rerere_resolved, 1);
	check_f("s/^5$/five-both/; s/^25$/t1-25/", "31\n");
	integ_outcome_release(&o[1]);
	integ_outcome_release(&o[2]);

	/* night 5: a new, different conflict in the same file is still a conflict */
	assert_int_equal(fixture_sh("cd w; git checkout -q for-next; sed -i "
			"'s/^15$/fifteen-t1/' f; "
			    "c t1-15; git push -q ../remotes/t1.git for-next; "
			    "git checkout -q next; "
			    "sed -i 's/^15$/fifteen-t2/' f; c t2-15; "
			    "git push -q ../remotes/t2.git next"), 0);
	night(repo, "2026-03-05", t1_t2, o, &log);
	assert_int_equal(o[2].state, INTEG_LEFT_OUT);
	assert_int_equal(o[2].rerere_resolved, 0);
	assert_int_equal(o[2].conflicts_nr, 1);
	assert_string_equal(o[2].conflicts[0].path, "f");
	assert_non_null(strstr(log.buf, "CONFLICT (content): Merge conflict in f\n"
					"# f: 1 of 2 conflict hunks have a recorded resolution\n"));
	assert_null(strstr(log.buf, "Resolved 'f'"));
	/* the git CLI agrees that it conflicts */
	assert_int_equal(fixture_sh("git --git-dir=state/repo.git merge-tree --write-tree "
			    "refs/feeds/t1 refs/feeds/t2 >/dev/null"), 256);
	assert_int_equal(fixture_sh("test $(grep -c '^<<<<<<< ' state/resolve/t2/f) = 2"), 0);
	integ_outcome_release(&o[1]);
	integ_outcome_release(&o[2]);

	repo_free(repo);
	free(workdir);
	strbuf_release(&log);
	strbuf_release(&report);
	strbuf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_and_ids),
		cmocka_unit_test(test_id_matches_git_rerere),
		cmocka_unit_test(test_record_replay_text),
		cmocka_unit_test(test_nights_remember),
	};

	three_trees_world(top, &dir);
	return cmocka_run_group_tests_name("rerere", tests, three_trees_setup,
					   three_trees_teardown);
}
