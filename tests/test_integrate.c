/* The night's integration over real repositories, with the git CLI as the oracle. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "merge/transport/transport.h"
#include "merge/repo/repo.h"
#include "merge/integrate/integrate.h"
#include "merge/git/repohandle_int.h"
#include "util/error.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "tests/gitfixture.h"
#include "util/banned.h"

static char top[] = "/tmp/nb-integrate.XXXXXX";
static char *dir;       /* this test's directory */
static int dir_nr;

/*
 * A world: remotes/upstream.git (master), remotes/t1.git (branch for-next),
 * remotes/mm.git (mm-stable, mm-unstable), remotes/t2.git (branch next) which
 * conflicts with t1 on file f.  Work clone in w/.
 */
static void world(void)
{
	free(dir);
	dir = xstrfmt("%s/w%d", top, dir_nr++);
	fixture_dir = dir;
	assert_int_equal(fixture_sys_free(xstrfmt("mkdir -p '%s/remotes'", dir)), 0);
	assert_int_equal(fixture_sh(
		"git init -q -b master w; cd w; mkdir -p lib mm; seq 1 30 > f; seq 1 10 > lib/a; "
		"seq 1 10 > mm/m; c base; "
		"for r in upstream t1 mm t2; do git init -q --bare ../remotes/$r.git; done; "
		"git push -q ../remotes/upstream.git master; "
		"git checkout -q -b for-next; sed -i 's/^5$/five-t1/' f; c 't1: five'; "
		"echo t1 >> lib/a; c 't1: lib'; git push -q ../remotes/t1.git for-next; "
		"git checkout -q -b mm-stable master; echo st >> mm/m; c 'mm: stable'; "
		"git push -q ../remotes/mm.git mm-stable; "
		"git checkout -q -b mm-unstable; echo unstable > mm/u; c 'mm: unstable only'; "
		"git push -q ../remotes/mm.git mm-unstable; "
		"git checkout -q -b next master; echo n > t2file; c 't2: good'; git tag t2good; "
		"sed -i 's/^5$/five-t2/' f; c 't2: five'; git push -q ../remotes/t2.git next"), 0);
}

static struct fetch_tree ftrees[5];
static struct integ_tree itrees[5];

static void trees_init(void)
{
	static char *urls[4];
	int i;

	for (i = 0; i < 4; i++)
		free(urls[i]);
	urls[0] = xstrfmt("file://%s/remotes/upstream.git", dir);
	urls[1] = xstrfmt("file://%s/remotes/t1.git", dir);
	urls[2] = xstrfmt("file://%s/remotes/mm.git", dir);
	urls[3] = xstrfmt("file://%s/remotes/t2.git", dir);
	ftrees[0] = (struct fetch_tree){ "origin", urls[0], "master", NULL };
	ftrees[1] = (struct fetch_tree){ "t1", urls[1], "for-next", NULL };
	ftrees[2] = (struct fetch_tree){ "mm-stable", urls[2], "mm-stable", NULL };
	ftrees[3] = (struct fetch_tree){ "mm-unstable", urls[2], "mm-unstable", NULL };
	ftrees[4] = (struct fetch_tree){ "t2", urls[3], "next", NULL };
	for (i = 0; i < 5; i++)
		itrees[i] = (struct integ_tree){ ftrees[i].name, ftrees[i].url, ftrees[i].branch };
}

static const char *const never[] = { "mm-unstable", NULL };

static struct repo *open_repo(void)
{
	struct repo *repo = NULL;
	char *path = xstrfmt("%s/state/repo.git", dir);

	assert_int_equal(repo_open(&repo, path), 0);
	free(path);
	return repo;
}

static void fetch_all(struct repo *repo, struct fetch_result *res)
{
	size_t i;

	memset(res, 0, 5 * sizeof(*res));
	assert_int_equal(fetch_trees(res, repo, ftrees, 5, NULL, never), 0);
	for (i = 0; i < 5; i++)
		fetch_result_release(&res[i]);
}

/* Every merge step that committed: git merge-tree of before+merged gives after's tree. */
static void check_steps_against_git(struct integ_night *night)
{
	struct strbuf want = STRBUF_INIT, got = STRBUF_INIT;
	size_t i;

	for (i = 0; i < integ_night_steps_nr(night); i++) {
		const struct integ_step *s = integ_night_step(night, i);

		if (s->kind != INTEG_STEP_MERGE || !strcmp(s->before.hex, s->after.hex))
			continue;
		assert_int_equal(fixture_sh_out(&want, 0, "git -C state/repo.git merge-tree "
					"--write-tree %s %s", s->before.hex, s->merged.hex), 0);
		strbuf_setlen(&want, strcspn(want.buf, "\n"));
		fixture_sh_out(&got, 0, "git -C state/repo.git rev-parse %s^{tree}", s->after.hex);
		strbuf_trim(&got);
		assert_string_equal(want.buf, got.buf);
		fixture_sh_out(&got, 0,
			       "git -C state/repo.git log -1 --format='%%P|%%s|%%an <%%ae>|%%ad' "
			       "--date=iso-strict-local %s",
			       s->after.hex);
		strbuf_trim(&got);
		strbuf_reset(&want);
		strbuf_addf(&want,
			    "%s %s|Merge branch '%s' of %s|nextbot <nb@example.org>|"
			    "2026-12-05T00:00:00+00:00",
			    s->before.hex, s->merged.hex, s->branch, s->url);
		assert_string_equal(got.buf, want.buf);
	}
	strbuf_release(&want);
	strbuf_release(&got);
}

/* A whole night: t1, mm-stable, (mm-unstable refused), t2 conflicting with t1. */
static void run_night(struct repo *repo, struct nb_oid *head, const struct nb_oid *t2_good)
{
	struct fetch_result res[5];
	struct integ_night *night = NULL;
	struct integ_outcome o = INTEG_OUTCOME_INIT;
	struct nb_oid tip = NB_OID_INIT;
	int i;

	fetch_all(repo, res);
	assert_int_equal(integ_night_new(&night, repo, "2026-12-05", &itrees[0],
					 "nextbot <nb@example.org>", never), 0);
	for (i = 1; i < 5; i++) {
		/* mm-unstable was refused at fetch: hand the merge step a real commit */
		char *ref = xstrfmt("refs/feeds/%s", itrees[i == 3 ? 2 : i].name);
		int rc;

		if (repo_ref_get(repo, ref, &tip) < 0) {
			integ_night_left_out(night, itrees[i].name, "fetch-failed");
			free(ref);
			continue;
		}
		free(ref);
		o = (struct integ_outcome)INTEG_OUTCOME_INIT;
		rc = integ_night_merge_tree(night, &o, &itrees[i], &tip,
					    i == 4 ? t2_good : NULL, NULL);
		if (i == 3) {
			assert_int_equal(rc, NB_EREFUSED);
			assert_int_equal(o.state, INTEG_LEFT_OUT);
		} else {
			assert_int_equal(rc, 0);
		}
		if (i == 4) {
			assert_int_equal(o.state, t2_good ? INTEG_PREVIOUS : INTEG_LEFT_OUT);
			assert_int_equal(o.conflicts_nr, 1);
			assert_string_equal(o.conflicts[0].path, "f");
			assert_string_equal(o.conflicts[0].kind, "content");
			assert_int_equal(o.conflicts[0].next_commits.nr, 1);   /* t1: five */
			assert_int_equal(o.conflicts[0].tree_commits.nr, 1);   /* t2: five */
		} else if (i != 3) {
			assert_int_equal(o.state, INTEG_MERGED);
		}
		integ_outcome_release(&o);
	}
	check_steps_against_git(night);
	assert_int_equal(integ_night_finish(night, head), 0);
	integ_night_free(night);
}

static void test_night_slow(void **state)
{
	struct repo *repo;
	struct strbuf out = STRBUF_INIT, want = STRBUF_INIT;
	struct nb_oid head = NB_OID_INIT, good = NB_OID_INIT, tag = NB_OID_INIT;

	world();
	trees_init();
	repo = open_repo();
	assert_int_equal(fixture_sh("git -C w rev-parse t2good > t2good"), 0);
	fixture_sh_out(&out, 0, "cat t2good");
	strbuf_trim(&out);
	memcpy(good.hex, out.buf, 41);
	run_night(repo, &head, &good);
	assert_int_equal(repo_ref_get(repo, "refs/tags/next-20261205", &tag), 0);
	assert_string_equal(tag.hex, head.hex);
	assert_int_equal(repo_ref_get(repo, "refs/heads/next", &tag), 0);
	assert_string_equal(tag.hex, head.hex);

	/* nothing only in mm-unstable is in next */
	fixture_sh_out(&out, 0,
		       "git -C state/repo.git rev-list next ^refs/feeds/mm-stable "
		       "refs/feeds/mm-unstable ^refs/feeds/mm-stable | wc -l");
	assert_int_equal(
		fixture_sh("test -z \"$(git -C state/repo.git rev-list refs/feeds/mm-unstable "
			   "^refs/feeds/mm-stable --not)\" || ! git -C state/repo.git "
			   "merge-base --is-ancestor refs/feeds/mm-unstable next"),
		0);

	/* Next/ files, exactly */
	fixture_sh_out(&out, 0, "git -C state/repo.git show next:Next/Trees");
	strbuf_addf(&want, "Trees included into this release:\n\nName\tType\tURL\n----\t----\t---\n"
			   "origin\tgit\t%s#master\nt1\tgit\t%s#for-next\n"
			   "mm-stable\tgit\t%s#mm-stable\nt2\tgit\t%s#next\n",
		    ftrees[0].url, ftrees[1].url, ftrees[2].url, ftrees[4].url);
	assert_string_equal(out.buf, want.buf);
	fixture_sh_out(&out, 0, "git -C state/repo.git show next:Next/SHA1s | sed -n '1,2p;$p'");
	strbuf_reset(&want);
	strbuf_addf(&want, "Name\tSHA1\n----\t----\nt2\t%s\n", good.hex);
	assert_string_equal(out.buf, want.buf);
	fixture_sh_out(&out, 0, "git -C state/repo.git show next:localversion-next");
	assert_string_equal(out.buf, "-next-20261205\n");
	fixture_sh_out(&out, 0, "git -C state/repo.git log -1 --format=%%s next");
	assert_string_equal(out.buf, "Add linux-next specific files for 20261205\n");
	fixture_sh_out(&out, 0, "git -C state/repo.git show next:Next/merge.log");
	assert_true(str_starts_with(out.buf, "$ git checkout master\n"
				    "$ git reset --hard origin/master\nMerging t1/for-next ("));
	assert_non_null(strstr(out.buf, "$ git merge --no-ff -m Merge branch 'for-next' of "));
	assert_non_null(strstr(out.buf, "Merge made by the 'ort' strategy.\n"));
	assert_non_null(strstr(out.buf, "# mm-unstable: left out: refused: never_merge"));
	assert_non_null(strstr(out.buf, "CONFLICT (content): Merge conflict in f\n"));
	repo_free(repo);
	strbuf_release(&out);
	strbuf_release(&want);
}

/* The same date twice with unchanged feeds: the same next, the tag replaced. */
static void test_same_date_twice_slow(void **state)
{
	struct repo *repo;
	struct nb_oid h1 = NB_OID_INIT, h2 = NB_OID_INIT;
	struct nb_oid tag = NB_OID_INIT, base = NB_OID_INIT;
	struct strbuf out = STRBUF_INIT;

	world();
	trees_init();
	repo = open_repo();
	run_night(repo, &h1, NULL);
	/* the tag moved away in between: the second night must replace it, not keep it */
	assert_int_equal(repo_ref_get(repo, "refs/feeds/origin", &base), 0);
	assert_string_not_equal(base.hex, h1.hex);
	assert_int_equal(repo_ref_set(repo, "refs/tags/next-20261205", &base), 0);
	run_night(repo, &h2, NULL);
	assert_string_equal(h1.hex, h2.hex);
	assert_int_equal(repo_ref_get(repo, "refs/tags/next-20261205", &tag), 0);
	assert_string_equal(tag.hex, h2.hex);
	assert_int_equal(repo_ref_get(repo, "refs/heads/next", &tag), 0);
	assert_string_equal(tag.hex, h2.hex);
	/* one tag of that night, no second one beside it */
	assert_int_equal(fixture_sh_out(&out, 0, "git -C state/repo.git tag -l 'next-*' "
					"| wc -l"), 0);
	strbuf_trim(&out);
	assert_string_equal(out.buf, "1");
	strbuf_release(&out);
	repo_free(repo);
}

/* t1 and mm-stable merged with the memo in `memo`; the night's log into `log`. */
static void memo_night(struct repo *repo, const char *memo, struct strbuf *log,
		       struct nb_oid *head)
{
	struct fetch_result res[5];
	struct integ_night *night = NULL;
	char *path;
	struct nb_oid tip = NB_OID_INIT;
	int i;

	fetch_all(repo, res);
	assert_int_equal(integ_night_new(&night, repo, "2026-12-05", &itrees[0],
					 "nextbot <nb@example.org>", never), 0);
	path = xstrfmt("%s/%s", dir, memo);
	integ_night_set_memo(night, path);
	free(path);
	for (i = 1; i < 3; i++) {
		struct integ_outcome o = INTEG_OUTCOME_INIT;
		char *ref = xstrfmt("refs/feeds/%s", itrees[i].name);

		assert_int_equal(repo_ref_get(repo, ref, &tip), 0);
		assert_int_equal(integ_night_merge_tree(night, &o, &itrees[i], &tip, NULL, NULL),
				 0);
		assert_int_equal(o.state, INTEG_MERGED);
		integ_outcome_release(&o);
		free(ref);
	}
	assert_int_equal(integ_night_memo_save(night), 0);
	strbuf_reset(log);
	strbuf_addstr(log, integ_night_log(night));
	assert_int_equal(integ_night_finish(night, head), 0);
	integ_night_free(night);
}

/*
 * The merge memo: a second night takes its merges from it (shown by a memo
 * entry altered to another tree, which the night then uses) with the same log;
 * a damaged or foreign memo file is an empty memo.
 */
static void test_merge_memo_slow(void **state)
{
	struct repo *repo;
	struct strbuf log1 = STRBUF_INIT, log2 = STRBUF_INIT, out = STRBUF_INIT;
	struct nb_oid h1 = NB_OID_INIT, h2 = NB_OID_INIT;

	(void)state;
	world();
	trees_init();
	repo = open_repo();
	/* mm-stable's merge has a merge base apart from both sides: a real merge */
	memo_night(repo, "memo", &log1, &h1);
	assert_int_equal(fixture_sh("test \"$(head -1 memo)\" = 'nextbot merge memo 1'"), 0);
	assert_int_equal(fixture_sh("test $(grep -c '^[0-9a-f]\\{40\\} ' memo) -ge 1"), 0);
	memo_night(repo, "memo", &log2, &h2);
	assert_string_equal(h1.hex, h2.hex);
	assert_string_equal(log1.buf, log2.buf);

	/* the memo is really read: its last record now names the base's tree */
	assert_int_equal(
		fixture_sh("base=$(git -C state/repo.git rev-parse refs/feeds/origin^{tree}) && "
			   "n=$(grep -n '^[0-9a-f]\\{40\\} ' memo | tail -1 | cut -d: -f1) && "
			   "sed -i \"${n}s/^\\([0-9a-f]* [0-9a-f]* [0-9a-f]*\\) [0-9a-f]*/"
			   "\\1 $base/\" "
			   "memo"),
		0);
	memo_night(repo, "memo", &log2, &h2);
	fixture_sh_out(&out, 0,
		       "git -C state/repo.git rev-parse %s^^{tree} refs/feeds/origin^{tree} | "
		       "uniq | wc -l",
		       h2.hex);
	assert_string_equal(out.buf, "1\n");

	/* damaged: cut inside a record; foreign: another header.  Both merge afresh. */
	assert_int_equal(fixture_sh("head -c 100 memo > memo.cut && mv memo.cut memo"), 0);
	memo_night(repo, "memo", &log2, &h2);
	assert_string_equal(h1.hex, h2.hex);
	assert_int_equal(fixture_sh("sed -i 1s/1/999/ memo"), 0);
	memo_night(repo, "memo", &log2, &h2);
	assert_string_equal(h1.hex, h2.hex);
	assert_string_equal(log1.buf, log2.buf);
	assert_int_equal(fixture_sh("test \"$(head -1 memo)\" = 'nextbot merge memo 1'"), 0);
	repo_free(repo);
	strbuf_release(&log1);
	strbuf_release(&log2);
	strbuf_release(&out);
}

/*
 * Seventeen trees fetched make seventeen packs: a multi-pack-index is written over
 * them, git verifies it, every tree's commit is still found; it is not written
 * again while no pack is new; gc removes it with the packs it covered.
 */
static void test_multi_pack_index_slow(void **state)
{
	struct fetch_tree ft[REPO_PACKS_FOR_MIDX + 1];
	struct fetch_result res[REPO_PACKS_FOR_MIDX + 1];
	struct repo *repo;
	struct gc_result gr;
	struct strbuf out = STRBUF_INIT, before = STRBUF_INIT;
	char *names[REPO_PACKS_FOR_MIDX + 1], *urls[REPO_PACKS_FOR_MIDX + 1], *path;
	struct nb_oid hex = NB_OID_INIT;
	size_t i, n = REPO_PACKS_FOR_MIDX + 1;

	(void)state;
	world();
	/* one commit a branch b$i (all made by one fast-import), each in a remote of its own */
	assert_int_equal(fixture_sh("cd w; t=$(date +%%s); for i in $(seq 0 %zu); do "
			    "printf 'commit refs/heads/b%%s\\n"
			    "committer t <t@example.org> %%s +0000\\n"
			    "data <<E\\nb%%s\\nE\\nfrom refs/heads/master^0\\n"
			    "M 100644 inline f%%s\\ndata <<E\\n%%s\\nE\\n\\n' $i $t $i $i $i; "
			    "done | git fast-import --quiet; for i in $(seq 0 %zu); do "
			    "git init -q --bare ../remotes/r$i.git; "
			    "git push -q ../remotes/r$i.git b$i; "
			    "done", n - 1, n - 1), 0);
	for (i = 0; i < n; i++) {
		names[i] = xstrfmt("r%zu", i);
		urls[i] = xstrfmt("file://%s/remotes/r%zu.git", dir, i);
		ft[i] = (struct fetch_tree){ names[i], urls[i], xstrfmt("b%zu", i), NULL };
	}
	repo = open_repo();
	memset(res, 0, sizeof(res));
	assert_int_equal(fetch_trees(res, repo, ft, n, NULL, NULL), 0);
	assert_int_equal(fixture_sh("test $(ls state/repo.git/objects/pack/*.pack | wc -l) -ge %d",
			    REPO_PACKS_FOR_MIDX), 0);
	assert_int_equal(repo_index_packs(repo), 0);
	assert_int_equal(fixture_sh("test -s state/repo.git/objects/pack/multi-pack-index && "
			    "git --git-dir=state/repo.git multi-pack-index verify"), 0);
	for (i = 0; i < n; i++) {
		path = xstrfmt("refs/feeds/%s", names[i]);
		assert_int_equal(repo_ref_get(repo, path, &hex), 0);
		assert_string_equal(hex.hex, res[i].tip.hex);
		free(path);
		free(repo_commit_subject(repo, &hex));
	}
	fixture_sh_out(&before, 0, "stat -c %%Y.%%y state/repo.git/objects/pack/multi-pack-index");
	assert_int_equal(repo_index_packs(repo), 0);
	fixture_sh_out(&out, 0, "stat -c %%Y.%%y state/repo.git/objects/pack/multi-pack-index");
	assert_string_equal(out.buf, before.buf);
	repo_free(repo);
	path = xstrfmt("%s/state/repo.git", dir);
	assert_int_equal(gc_repack(&gr, path, 1), 0);
	assert_int_equal(fixture_sh("test ! -e state/repo.git/objects/pack/multi-pack-index && "
			    "git --git-dir=state/repo.git fsck --connectivity-only"), 0);
	free(path);
	for (i = 0; i < n; i++) {
		fetch_result_release(&res[i]);
		free(names[i]);
		free(urls[i]);
		free((char *)ft[i].branch);
	}
	strbuf_release(&out);
	strbuf_release(&before);
}

/*
 * Commits reachable from every ref, as libgit2 walks them through the commit-graph:
 * with a handle of its own (repo_open()'s do not read the graph).
 */
static size_t libgit2_count(struct repo *repo)
{
	git_repository *git = NULL;
	git_revwalk *walk = NULL;
	git_oid id;
	size_t n = 0;

	assert_int_equal(git_repository_open_bare(&git, repo_gitdir(repo)), 0);
	assert_int_equal(git_revwalk_new(&walk, git), 0);
	assert_int_equal(git_revwalk_push_glob(walk, "*"), 0);
	while (git_revwalk_next(&id, walk) == 0)
		n++;
	git_revwalk_free(walk);
	git_repository_free(git);
	return n;
}

/* Mappings of a commit-graph file in this process. */
static int graph_mappings(void)
{
	struct strbuf maps = STRBUF_INIT;
	const char *p;
	int n = 0;

	assert_int_equal(strbuf_read_file(&maps, "/proc/self/maps", 1 << 24), 0);
	for (p = maps.buf; (p = strstr(p, "/commit-graph\n")); p++)
		n++;
	strbuf_release(&maps);
	return n;
}

/* git, the oracle, finds the graph valid and walks as many commits as libgit2. */
static void check_graph_against_git(struct repo *repo)
{
	struct strbuf out = STRBUF_INIT;

	assert_int_equal(fixture_sh("test -s state/repo.git/objects/info/commit-graph && "
			    "git --git-dir=state/repo.git commit-graph verify"), 0);
	assert_int_equal(fixture_sh_out(&out, 1, "git --git-dir=state/repo.git rev-list --all "
			    "--count"), 0);
	assert_int_equal(strtoul(out.buf, NULL, 10), libgit2_count(repo));
	strbuf_release(&out);
}

static void test_commit_graph_slow(void **state)
{
	struct fetch_result res[5];
	struct repo *repo;
	struct gc_result gr;
	struct strbuf out = STRBUF_INIT, before = STRBUF_INIT;
	char *path;
	git_oid base, a, b, blob;
	int i;

	(void)state;
	world();
	trees_init();
	assert_int_equal(fixture_sh("cd w; git checkout -q master; cn 300 h history; "
			    "git push -q ../remotes/upstream.git master; "
			    "git checkout -q for-next; git merge -q -m m master; "
			    "git push -q ../remotes/t1.git for-next"), 0);
	repo = open_repo();
	fetch_all(repo, res);
	assert_int_equal(repo_write_commit_graph(repo), 0);
	check_graph_against_git(repo);
	/* merge bases through the graph are git's */
	assert_int_equal(git_reference_name_to_id(&a, repo_git(repo), "refs/feeds/t1"), 0);
	assert_int_equal(git_reference_name_to_id(&b, repo_git(repo), "refs/feeds/t2"), 0);
	assert_int_equal(git_merge_base(&base, repo_git(repo), &a, &b), 0);
	assert_int_equal(fixture_sh_out(&out, 1, "git --git-dir=state/repo.git merge-base "
			    "refs/feeds/t1 refs/feeds/t2"), 0);
	assert_string_equal(out.buf, git_oid_tostr_s(&base));
	/* the work repository's handle writes objects and walks without mapping the graph */
	for (i = 0; i < 3; i++) {
		char text[32];

		snprintf(text, sizeof(text), "object %d", i);
		assert_int_equal(git_blob_create_from_buffer(&blob, repo_git(repo), text,
							     strlen(text)), 0);
		assert_int_equal(git_merge_base(&base, repo_git(repo), &a, &b), 0);
	}
	assert_int_equal(graph_mappings(), 0);

	/* unchanged refs: not written again */
	fixture_sh_out(&before, 0, "stat -c %%y state/repo.git/objects/info/commit-graph");
	fetch_all(repo, res);
	assert_int_equal(repo_write_commit_graph(repo), 0);
	fixture_sh_out(&out, 0, "stat -c %%y state/repo.git/objects/info/commit-graph");
	assert_string_equal(out.buf, before.buf);

	/* a tree moved: written again, over the new commits too */
	assert_int_equal(fixture_sh("cd w; git checkout -q next; echo more > t2more; c 't2: more'; "
			    "git push -q ../remotes/t2.git next"), 0);
	fetch_all(repo, res);
	assert_int_equal(repo_write_commit_graph(repo), 0);
	fixture_sh_out(&out, 0, "stat -c %%y state/repo.git/objects/info/commit-graph");
	assert_string_not_equal(out.buf, before.buf);
	check_graph_against_git(repo);
	repo_free(repo);

	/* gc, with libgit2 and with git, leaves a valid graph */
	path = xstrfmt("%s/state/repo.git", dir);
	assert_int_equal(fixture_sh("git --git-dir=state/repo.git update-ref -d refs/feeds/t2"), 0);
	assert_int_equal(gc_repack(&gr, path, 1), 0);
	repo = open_repo();
	check_graph_against_git(repo);
	repo_free(repo);
	assert_int_equal(fixture_sh("git --git-dir=state/repo.git update-ref -d refs/feeds/t1"), 0);
	assert_int_equal(gc_repack(&gr, path, 0), 0);
	repo = open_repo();
	check_graph_against_git(repo);
	repo_free(repo);
	free(path);
	strbuf_release(&out);
	strbuf_release(&before);
}

static void test_fetch_force_push_and_failures_slow(void **state)
{
	struct repo *repo;
	struct fetch_result res[5];
	struct strbuf out = STRBUF_INIT;
	struct nb_oid old = NB_OID_INIT;
	size_t i;

	world();
	trees_init();
	repo = open_repo();
	memset(res, 0, sizeof(res));
	assert_int_equal(fetch_trees(res, repo, ftrees, 5, NULL, never), 0);
	assert_int_equal(res[1].state, FETCH_FETCHED);
	assert_int_equal(res[3].state, FETCH_REFUSED);
	assert_string_equal(res[3].tip.hex, "");
	memcpy(old.hex, res[1].tip.hex, 41);
	for (i = 0; i < 5; i++)
		fetch_result_release(&res[i]);
	/* t1 rebased and force-pushed; t2's repository gone; mm-stable's branch deleted */
	assert_int_equal(fixture_sh("cd w && git checkout -q for-next && git commit -q --amend "
			"-m rebased "
			    "&& git push -q -f ../remotes/t1.git for-next && "
			    "git push -q ../remotes/mm.git :mm-stable && "
			    "rm -rf ../remotes/t2.git"), 0);
	memset(res, 0, sizeof(res));
	assert_int_equal(fetch_trees(res, repo, ftrees, 5, NULL, never), 0);
	assert_int_equal(res[1].state, FETCH_FETCHED);
	assert_string_not_equal(res[1].tip.hex, old.hex);
	fixture_sh_out(&out, 0, "git -C w rev-parse for-next");
	strbuf_trim(&out);
	assert_string_equal(res[1].tip.hex, out.buf);
	assert_int_equal(res[2].state, FETCH_STALE);    /* branch vanished: last tip kept */
	assert_non_null(strstr(res[2].reason, "not found"));
	assert_int_equal(res[4].state, FETCH_STALE);    /* unreachable: last tip kept */
	for (i = 0; i < 5; i++)
		fetch_result_release(&res[i]);
	repo_free(repo);

	/* a fresh repository never fetched t2: fetch-failed */
	assert_int_equal(fixture_sh("rm -rf state"), 0);
	repo = open_repo();
	memset(res, 0, sizeof(res));
	assert_int_equal(fetch_trees(res, repo, ftrees, 5, NULL, never), 0);
	assert_int_equal(res[4].state, FETCH_FAILED);
	assert_string_equal(fetch_state_name(res[4].state), "fetch-failed");
	for (i = 0; i < 5; i++)
		fetch_result_release(&res[i]);
	repo_free(repo);
	strbuf_release(&out);
}

/* Drops by Message-ID and patch-id; a later patch needing a dropped one goes too. */
static void test_drops_and_revert(void **state)
{
	struct repo *repo;
	struct integ_night *night = NULL;
	struct integ_outcome o = INTEG_OUTCOME_INIT;
	struct strbuf out = STRBUF_INIT, p2 = STRBUF_INIT;
	const char *msgids[] = {"p2@example.org"};
	struct integ_drops drops = { NULL, 0, msgids, 1 };
	struct nb_oid tip = NB_OID_INIT, reverted = NB_OID_INIT;

	world();
	assert_int_equal(fixture_sh("cd w && git checkout -q -b drops master && echo 1 > d1 && "
			"c 'p1' && "
			    "echo 2 > d2 && git add d2 && git commit -q -m p2 -m 'Link: "
			    "https://lore.kernel.org/r/p2@example.org' && echo more >> d2 && "
			    "c p3-needs-p2 && echo 4 > d4 && c p4 && "
			    "git push -q ../remotes/t1.git drops:for-next -f"), 0);
	trees_init();
	repo = open_repo();
	{
		struct fetch_result res[5];

		fetch_all(repo, res);
	}
	assert_int_equal(integ_night_new(&night, repo, "2026-12-05", &itrees[0],
					 "nextbot <nb@example.org>", never), 0);
	assert_int_equal(repo_ref_get(repo, "refs/feeds/t1", &tip), 0);
	assert_int_equal(integ_night_merge_tree(night, &o, &itrees[1], &tip, NULL, &drops), 0);
	assert_int_equal(o.state, INTEG_MERGED);
	assert_int_equal(o.left_out_patches.nr, 2);
	fixture_sh_out(&p2, 0, "git -C w rev-parse drops~2");
	strbuf_trim(&p2);
	assert_string_equal(o.left_out_patches.v[0], p2.buf);
	assert_string_not_equal(o.merged.hex, tip.hex);
	fixture_sh_out(&out, 0, "git -C state/repo.git ls-tree --name-only %s | tr '\\n' ' "
			"'", o.head.hex);
	assert_string_equal(out.buf, "d1 d4 f lib mm ");
	assert_non_null(strstr(integ_night_log(night), "left out patch"));
	integ_outcome_release(&o);

	/* the never_merge check at the merge step itself */
	o = (struct integ_outcome)INTEG_OUTCOME_INIT;
	assert_int_equal(integ_night_merge_tree(night, &o, &itrees[3], &tip, NULL, NULL),
			 NB_EREFUSED);
	integ_outcome_release(&o);

	/* revert p4 (by its replayed id on next): d4 disappears */
	fixture_sh_out(&out, 0, "git -C state/repo.git log --format=%%H -1 %s^2",
	       integ_night_head(night)->hex);
	strbuf_trim(&out);
	assert_int_equal(nb_oid_parse(&reverted, out.buf), 0);
	assert_int_equal(integ_night_revert(night, &reverted, "t1", "breaks the build"), 0);
	fixture_sh_out(&p2, 0, "git -C state/repo.git log -1 --format=%%B "
			"%s", integ_night_head(night)->hex);
	assert_true(str_starts_with(p2.buf, "Revert \"p4\"\n\nThis reverts commit "));
	fixture_sh_out(&out, 0, "git -C state/repo.git ls-tree --name-only %s | tr '\\n' ' '",
	       integ_night_head(night)->hex);
	assert_string_equal(out.buf, "d1 f lib mm ");
	assert_int_equal(integ_night_steps_nr(night), 3);
	assert_int_equal(integ_night_step(night, 2)->kind, INTEG_STEP_REVERT);

	/* truncate back to the base */
	assert_int_equal(integ_night_truncate(night, 0), 0);
	assert_int_equal(integ_night_steps_nr(night), 0);
	assert_int_equal(repo_ref_get(repo, "refs/feeds/origin", &tip), 0);
	assert_string_equal(integ_night_head(night), tip.hex);
	integ_night_free(night);
	repo_free(repo);
	strbuf_release(&out);
	strbuf_release(&p2);
}

/* Already merged trees, unrelated history, good-tip refs. */
static void test_already_unrelated_good_slow(void **state)
{
	struct repo *repo;
	struct integ_night *night = NULL;
	struct integ_outcome o = INTEG_OUTCOME_INIT;
	struct integ_tree lonely;
	struct nb_oid tip = NB_OID_INIT, got = NB_OID_INIT;
	char *url;

	world();
	assert_int_equal(fixture_sh("cd w && git checkout -q --orphan lonely && git rm -rqf . && "
			    "echo l > l && c lonely && git push -q ../remotes/t2.git lonely"), 0);
	trees_init();
	repo = open_repo();
	{
		struct fetch_result res[5];

		fetch_all(repo, res);
	}
	assert_int_equal(integ_night_new(&night, repo, "2026-12-05", &itrees[0],
					 "nextbot <nb@example.org>", NULL), 0);
	assert_int_equal(repo_ref_get(repo, "refs/feeds/origin", &tip), 0);
	assert_int_equal(integ_night_merge_tree(night, &o, &itrees[0], &tip, NULL, NULL), 0);
	assert_int_equal(o.state, INTEG_ALREADY);
	assert_string_equal(o.head.hex, tip.hex);
	assert_non_null(strstr(integ_night_log(night), "Already up to date.\n"));
	integ_outcome_release(&o);

	url = xstrfmt("file://%s/remotes/t2.git", dir);
	lonely = (struct integ_tree){ "lonely", url, "lonely" };
	{
		struct fetch_tree ft = { .name = "lonely", .url = url, .branch = "lonely" };
		struct fetch_result r;

		memset(&r, 0, sizeof(r));
		assert_int_equal(fetch_trees(&r, repo, &ft, 1, NULL, NULL), 0);
		assert_int_equal(r.state, FETCH_FETCHED);
		memcpy(tip.hex, r.tip.hex, 41);
		fetch_result_release(&r);
	}
	o = (struct integ_outcome)INTEG_OUTCOME_INIT;
	assert_int_equal(integ_night_merge_tree(night, &o, &lonely, &tip, NULL, NULL), 0);
	assert_int_equal(o.state, INTEG_LEFT_OUT);
	assert_non_null(strstr(o.reason, "unrelated history"));
	integ_outcome_release(&o);
	integ_night_free(night);

	assert_int_equal(repo_good_get(repo, "t1", &got), NB_ENOTFOUND);
	assert_int_equal(repo_good_set(repo, "t1", &tip), 0);
	assert_int_equal(repo_good_get(repo, "t1", &got), 0);
	assert_string_equal(got.hex, tip.hex);
	repo_free(repo);
	free(url);
}

static void test_stale_locks(void **state)
{
	struct repo *repo;

	world();
	repo = open_repo();
	repo_free(repo);
	assert_int_equal(fixture_sh("mkdir -p state/repo.git/refs/heads && touch "
			"state/repo.git/index.lock "
			    "state/repo.git/refs/heads/next.lock"), 0);
	repo = open_repo();
	assert_int_equal(fixture_sh("test ! -e state/repo.git/index.lock && "
			    "test ! -e state/repo.git/refs/heads/next.lock"), 0);
	repo_free(repo);
}

/*
 * A run killed while it made the work repository (t830 saw it after 0.1 s) leaves a
 * folder without HEAD and libgit2's config.lock: the next open makes it again.
 */
static void test_unfinished_init(void **state)
{
	struct repo *repo;

	world();
	assert_int_equal(fixture_sh("rm -rf state/repo.git && mkdir -p state/repo.git/objects && "
				    "printf '[core]\\n' >state/repo.git/config.lock"), 0);
	repo = open_repo();
	assert_int_equal(fixture_sh("test -f state/repo.git/HEAD && "
				    "test ! -e state/repo.git/config.lock && "
				    "git --git-dir=state/repo.git rev-parse --git-dir"), 0);
	repo_free(repo);
}

static int setup_all(void **state)
{
	setenv("TZ", "UTC", 1);
	return fixture_world_open(top, FIXTURE_IDENTITY | FIXTURE_HOME);
}

static int teardown_all(void **state)
{
	free(dir);
	fixture_world_close(top);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_night_slow),
		cmocka_unit_test(test_same_date_twice_slow),
		cmocka_unit_test(test_merge_memo_slow),
		cmocka_unit_test(test_multi_pack_index_slow),
		cmocka_unit_test(test_commit_graph_slow),
		cmocka_unit_test(test_fetch_force_push_and_failures_slow),
		cmocka_unit_test(test_drops_and_revert),
		cmocka_unit_test(test_already_unrelated_good_slow),
		cmocka_unit_test(test_stale_locks),
		cmocka_unit_test(test_unfinished_init),
	};

	return cmocka_run_group_tests_name("integrate", tests, setup_all, teardown_all);
}
