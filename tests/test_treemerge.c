/* treemerge_commits against the oracle `git merge-tree --write-tree` (git 2.39). */
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
#include "merge/git/treemerge_int.h"
#include "util/error.h"
#include "util/strbuf.h"
#include "util/strvec.h"
#include "util/xalloc.h"
#include "tests/gitfixture.h"
#include "util/banned.h"

static char top[] = "/tmp/nb-treemerge.XXXXXX";
static char generator[4096];
static char *repo_dir;
static int repo_nr;

/* Shell prelude for every script: `c MSG` commits everything. */
/* First line of a command's stdout into out (trimmed); returns its exit status. */
static int sh_line(struct strbuf *out, const char *cmd)
{
	struct strbuf full = STRBUF_INIT;
	char line[256];
	FILE *f;
	int rc;

	strbuf_reset(out);
	strbuf_addf(&full, "cd '%s' && %s 2>/dev/null", repo_dir, cmd);
	f = popen(full.buf, "r");
	assert_non_null(f);
	if (fgets(line, sizeof(line), f))
		strbuf_addstr(out, line);
	while (fgets(line, sizeof(line), f))
		;
	rc = pclose(f);
	strbuf_trim(out);
	strbuf_release(&full);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* A fresh repository with `base` committed on master, then branches ours and theirs. */
static void scenario(const char *base, const char *ours, const char *theirs)
{
	free(repo_dir);
	repo_dir = xstrfmt("%s/r%d", top, repo_nr++);
	fixture_dir = repo_dir;
	assert_int_equal(fixture_sys_free(xstrfmt("git -c init.defaultBranch=master init -q '%s'",
					repo_dir)), 0);
	assert_int_equal(fixture_sh("%s; c base; git branch ours; git branch theirs", base), 0);
	assert_int_equal(fixture_sh("git checkout -q ours; %s", ours), 0);
	assert_int_equal(fixture_sh("git checkout -q theirs; %s", theirs), 0);
}

enum expect { CLEAN, CONFLICT, ANY };

/* git's verdict: 0 clean (tree in out), 1 conflict. */
static int oracle(struct strbuf *out, const char *ours, const char *theirs)
{
	struct strbuf cmd = STRBUF_INIT;
	int rc;

	strbuf_addf(&cmd, "git merge-tree --write-tree '%s' '%s'", ours, theirs);
	rc = sh_line(out, cmd.buf);
	strbuf_release(&cmd);
	assert_true(rc == 0 || rc == 1);
	return rc;
}

static void resolve(git_oid *out, git_repository *repo, const char *rev)
{
	git_object *obj = NULL;

	assert_int_equal(git_revparse_single(&obj, repo, rev), 0);
	git_oid_cpy(out, git_object_id(obj));
	git_object_free(obj);
}

/*
 * Merges theirs into ours with nextbot and with git; a clean nextbot merge must give
 * git's tree, a conflict must be a conflict for git.  Returns nextbot's result code.
 */
static int check_merge(const char *ours, const char *theirs, enum expect want, int strict)
{
	struct treemerge_conflicts c = TREEMERGE_CONFLICTS_INIT;
	struct strbuf git_tree = STRBUF_INIT;
	git_repository *repo = NULL;
	git_oid o, t, tree;
	char hex[GIT_OID_HEXSZ + 1];
	int rc, git_rc, already = 0;

	assert_int_equal(git_repository_open(&repo, repo_dir), 0);
	resolve(&o, repo, ours);
	resolve(&t, repo, theirs);
	rc = treemerge_commits(&tree, &already, &c, repo, &o, &t);
	git_rc = oracle(&git_tree, ours, theirs);
	if (rc == 0) {
		git_oid_tostr(hex, sizeof(hex), &tree);
		if (strict || git_rc == 0) {
			assert_int_equal(git_rc, 0);
			assert_string_equal(hex, git_tree.buf);
		}
	} else {
		if (rc != NB_ECONFLICT)
			print_error("unexpected %d: %s\n", rc, nb_error_last());
		assert_int_equal(rc, NB_ECONFLICT);
		assert_true(c.nr > 0);
		assert_int_equal(git_rc, 1);
	}
	if (want == CLEAN)
		assert_int_equal(rc, 0);
	if (want == CONFLICT)
		assert_int_equal(rc, NB_ECONFLICT);
	treemerge_conflicts_release(&c);
	strbuf_release(&git_tree);
	git_repository_free(repo);
	return rc;
}

#define BASE "mkdir -p d/e x; seq 1 40 > a; seq 100 140 > d/b; echo x > d/e/f; " \
	     "seq 1 5 > x/1; seq 1 6 > x/2; printf 'bin\\0ary' > bin"

static void test_disjoint(void **state)
{
	struct treemerge_stats before, after;

	scenario(BASE, "echo o >> a; c o", "echo t >> d/b; c t");
	treemerge_stats_get(&before);
	check_merge("ours", "theirs", CLEAN, 1);
	treemerge_stats_get(&after);
	assert_int_equal(after.merges, before.merges + 1);      /* one, no virtual base */
	assert_int_equal(after.virtual_merges, before.virtual_merges);
	assert_int_equal(after.unsure, before.unsure);
}

/* treemerge_trees with an explicit base: a cherry-pick, checked against git's. */
static void test_trees_cherry_pick(void **state)
{
	struct strbuf want = STRBUF_INIT;
	git_repository *repo = NULL;
	git_oid b, o, t, tree;
	char hex[GIT_OID_HEXSZ + 1];

	scenario(BASE, "echo o >> a; c o", "echo t1 >> d/b; c t1; sed -i 's/^3$/three/' a; c t2");
	assert_int_equal(git_repository_open(&repo, repo_dir), 0);
	resolve(&b, repo, "theirs~1^{tree}");
	resolve(&o, repo, "ours^{tree}");
	resolve(&t, repo, "theirs^{tree}");
	assert_int_equal(treemerge_trees(&tree, NULL, repo, &b, &o, &t), 0);
	git_oid_tostr(hex, sizeof(hex), &tree);
	assert_int_equal(fixture_sh("git checkout -q ours && git cherry-pick theirs"), 0);
	sh_line(&want, "git rev-parse HEAD^{tree}");
	assert_string_equal(hex, want.buf);
	strbuf_release(&want);
	git_repository_free(repo);
}

static void test_same_file_clean(void **state)
{
	scenario(BASE, "sed -i 's/^2$/two/' a; c o", "sed -i 's/^39$/thirtynine/' a; c t");
	check_merge("ours", "theirs", CLEAN, 1);
}

static void test_content_conflict(void **state)
{
	scenario(BASE, "sed -i 's/^20$/ours/' a; c o", "sed -i 's/^20$/theirs/' a; c t");
	check_merge("ours", "theirs", CONFLICT, 1);
}

static void test_rename_one_side(void **state)
{
	scenario(BASE, "git mv a a2; c o", "sed -i 's/^20$/theirs/' a; c t");
	check_merge("ours", "theirs", CLEAN, 1);
	check_merge("theirs", "ours", CLEAN, 1);
}

static void test_modify_delete(void **state)
{
	scenario(BASE, "git rm -q a; c o", "sed -i 's/^20$/theirs/' a; c t");
	check_merge("ours", "theirs", CONFLICT, 1);
}

static void test_add_add(void **state)
{
	scenario(BASE, "echo one > new; c o", "echo two > new; c t");
	check_merge("ours", "theirs", CONFLICT, 1);
	scenario(BASE, "echo same > new; echo o >> a; c o", "echo same > new; c t");
	check_merge("ours", "theirs", CLEAN, 1);
}

static void test_binary(void **state)
{
	scenario(BASE, "printf 'bin\\0o' > bin; c o", "printf 'bin\\0t' > bin; c t");
	check_merge("ours", "theirs", CONFLICT, 1);
	scenario(BASE, "printf 'bin\\0o' > bin; c o", "echo t >> a; c t");
	check_merge("ours", "theirs", CLEAN, 1);
}

static void test_already_merged(void **state)
{
	struct treemerge_conflicts c = TREEMERGE_CONFLICTS_INIT;
	git_repository *repo = NULL;
	git_oid o, t, tree;
	int already = 0;

	scenario(BASE, "git checkout -q theirs; echo t >> d/b; c t; git checkout -q ours; "
		 "git merge -q --no-ff -m m theirs; echo o >> a; c o", "true");
	assert_int_equal(git_repository_open(&repo, repo_dir), 0);
	resolve(&o, repo, "ours");
	resolve(&t, repo, "theirs");
	assert_int_equal(treemerge_commits(&tree, &already, &c, repo, &o, &t), 0);
	assert_int_equal(already, 1);
	resolve(&o, repo, "ours^{tree}");
	assert_true(git_oid_equal(&o, &tree));
	git_repository_free(repo);
	check_merge("ours", "theirs", CLEAN, 1);
	check_merge("theirs", "ours", CLEAN, 1);        /* fast-forward side */
}

static void test_modes(void **state)
{
	scenario(BASE, "chmod +x a; c o", "sed -i 's/^20$/theirs/' a; c t");
	check_merge("ours", "theirs", CLEAN, 1);
	check_merge("theirs", "ours", CLEAN, 1);
	scenario(BASE, "chmod +x a; echo o >> a; c o", "sed -i 's/^2$/theirs/' a; c t");
	check_merge("ours", "theirs", CLEAN, 1);
}

static void test_subdirs(void **state)
{
	scenario(BASE, "mkdir -p d/e/g; echo n > d/e/g/new; c o", "git rm -rq x; c t");
	check_merge("ours", "theirs", CLEAN, 1);
	scenario(BASE, "git rm -q x/1; echo o >> a; c o", "git rm -q x/2; c t");
	check_merge("ours", "theirs", CLEAN, 1);
	scenario(BASE, "echo o >> d/e/f; c o", "echo t > d/e/h; mkdir -p d/z; echo z > d/z/z; c t");
	check_merge("ours", "theirs", CLEAN, 1);
}

static void test_both_delete_and_renames(void **state)
{
	scenario(BASE, "git rm -q a; echo o >> d/b; c o", "git rm -q a; c t");
	check_merge("ours", "theirs", CLEAN, 1);
	scenario(BASE, "git mv a b1; c o", "git mv a b2; c t");
	check_merge("ours", "theirs", CONFLICT, 1);     /* rename/rename */
	scenario(BASE, "git mv a b1; c o", "git rm -q a; c t");
	check_merge("ours", "theirs", CONFLICT, 1);     /* rename/delete */
}

static void test_symlink_and_type(void **state)
{
	scenario(BASE "; ln -s a link", "ln -sf d/b link; c o", "echo t >> a; c t");
	check_merge("ours", "theirs", CLEAN, 1);
	scenario(BASE, "git rm -q a; mkdir a; echo in > a/f; c o", "echo t >> d/b; c t");
	check_merge("ours", "theirs", CLEAN, 1);
}

static void test_history_with_merges(void **state)
{
	scenario(BASE, "echo o >> a; c o",
		 "git checkout -q -b side; echo s >> x/1; c s; git checkout -q theirs; "
		 "echo t >> d/b; c t; git merge -q --no-ff -m m side; echo t2 >> x/2; c t2");
	check_merge("ours", "theirs", CLEAN, 1);
}

static void test_criss_cross(void **state)
{
	scenario(BASE, "echo o >> a; c o",
		 "echo t >> d/b; c t; git branch t0; git merge -q -m m1 ours; "
		 "git checkout -q ours; git merge -q -m m2 t0; echo o2 >> x/1; c o2; "
		 "git checkout -q theirs; echo t3 >> x/2; c t3");
	check_merge("ours", "theirs", CLEAN, 1);
}

static void test_unrelated(void **state)
{
	git_repository *repo = NULL;
	git_oid o, t, tree;

	scenario(BASE, "echo o >> a; c o",
		 "git checkout -q --orphan lonely; git rm -rqf .; echo l > l; c l");
	assert_int_equal(git_repository_open(&repo, repo_dir), 0);
	resolve(&o, repo, "ours");
	resolve(&t, repo, "lonely");
	assert_int_equal(treemerge_commits(&tree, NULL, NULL, repo, &o, &t), NB_EUNRELATED);
	git_repository_free(repo);
}

/*
 * By design: git 2.39's ort detects directory renames (theirs' new d/e/new follows
 * ours' move of d/e to y/); libgit2 does not.  nextbot's result must still be a
 * correct merge: both sides' changes present (or a reported conflict).
 */
static void test_directory_rename_differs(void **state)
{
	struct strbuf out = STRBUF_INIT;
	int rc;

	scenario(BASE, "git mv d/e y; c o", "echo n > d/e/new; c t");
	rc = check_merge("ours", "theirs", ANY, 0);
	if (rc == 0) {
		/* check_merge compared nothing when git differs: verify by hand */
		git_repository *repo = NULL;
		git_oid o, t, tree;
		git_tree *tr = NULL;
		git_tree_entry *e = NULL;

		assert_int_equal(git_repository_open(&repo, repo_dir), 0);
		resolve(&o, repo, "ours");
		resolve(&t, repo, "theirs");
		assert_int_equal(treemerge_commits(&tree, NULL, NULL, repo, &o, &t), 0);
		assert_int_equal(git_tree_lookup(&tr, repo, &tree), 0);
		assert_int_equal(git_tree_entry_bypath(&e, tr, "y/f"), 0);
		git_tree_entry_free(e);
		if (git_tree_entry_bypath(&e, tr, "d/e/new") != 0)
			assert_int_equal(git_tree_entry_bypath(&e, tr, "y/new"), 0);
		git_tree_entry_free(e);
		assert_int_not_equal(git_tree_entry_bypath(&e, tr, "d/e/f"), 0);
		git_tree_free(tr);
		git_repository_free(repo);
	}
	strbuf_release(&out);
}

static void random_op(struct strbuf *sb, int op, int v, int s)
{
	switch (op) {
	case 0: strbuf_addf(sb, "sed -i 's/^%d$/o%d/' a", v, s); break;
	case 1: strbuf_addf(sb, "echo %d%d >> d/b", v, s); break;
	case 2: strbuf_addf(sb, "seq %d %d > x/n%d", v, v + s, v % 4); break;
	case 3: strbuf_addstr(sb, "git rm -qf --ignore-unmatch x/1"); break;
	case 4: strbuf_addf(sb, "git mv -k d/e/f d/e/g%d", v % 3); break;
	case 5: strbuf_addstr(sb, "chmod +x x/2"); break;
	case 6: strbuf_addf(sb, "sed -i '%dd' d/b", v); break;
	default: strbuf_addf(sb, "git mv -k a a%d", v % 3); break;
	}
}

/*
 * Random small histories: every clean merge equals git's, every conflict is git's.
 * All of them in one repository, branches oN and tN from the one BASE commit.
 */
static void test_random_slow(void **state)
{
	unsigned seed = 12345;
	int i, n = getenv("TREEMERGE_RANDOM") ? 200 : 40;
	char ours[32], theirs[32];

	scenario(BASE, "true", "true");
	for (i = 0; i < n; i++) {
		struct strbuf side[2] = { STRBUF_INIT, STRBUF_INIT };
		int s, k;

		for (s = 0; s < 2; s++) {
			int nops = 1 + rand_r(&seed) % 3;

			strbuf_addf(&side[s], "git checkout -q -B %c%d master; ", "ot"[s], i);
			for (k = 0; k < nops; k++) {
				int op = rand_r(&seed) % 8, v = 1 + rand_r(&seed) % 38;

				strbuf_addstr(&side[s], "{ ");
				random_op(&side[s], op, v, s);
				strbuf_addstr(&side[s], "; } || true");
				strbuf_addf(&side[s], "; c r%d%d; ", s, k);
			}
			strbuf_addstr(&side[s], "true");
		}
		assert_int_equal(fixture_sh("%s; %s", side[0].buf, side[1].buf), 0);
		snprintf(ours, sizeof(ours), "o%d", i);
		snprintf(theirs, sizeof(theirs), "t%d", i);
		check_merge(ours, theirs, ANY, 1);
		strbuf_release(&side[0]);
		strbuf_release(&side[1]);
	}
}

/* git's outcome of one merge: clean with `tree`, or the conflicted paths (sorted). */
struct outcome {
	int known;              /* 0: git itself failed on it (an assertion in merge-ort) */
	int clean;
	char tree[GIT_OID_HEXSZ + 1];
	struct strvec paths;
};

struct pair {
	char ours[GIT_OID_HEXSZ + 1], theirs[GIT_OID_HEXSZ + 1];
};

/*
 * Parses `git merge-tree --write-tree --stdin --name-only --no-messages` output:
 * per merge "<clean>\0<tree>\0<path>\0...\0\0".  Returns the merges read.
 */
static size_t parse_stdin_output(struct outcome *o, size_t nr, const struct strbuf *out)
{
	const char *p = out->buf, *end = out->buf + out->len;
	size_t i;

	for (i = 0; i < nr && p < end; i++) {
		o[i].known = 1;
		o[i].clean = *p == '1';
		p += strlen(p) + 1;
		if (p >= end)
			break;
		snprintf(o[i].tree, sizeof(o[i].tree), "%s", p);
		p += strlen(p) + 1;
		while (p < end && *p) {
			if (!o[i].paths.nr || strcmp(o[i].paths.v[o[i].paths.nr - 1], p))
				strvec_push(&o[i].paths, p);
			p += strlen(p) + 1;
		}
		p++;
	}
	return i;
}

/* A command's stdout in `dir`, untouched: its exit status. */
static int sh_out_in(struct strbuf *out, const char *dir, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = fixture_vsh_out(out, dir, NULL, fmt, ap);
	va_end(ap);
	return rc;
}

/* git's outcomes; merges git dies on (a BUG in 2.39's merge-ort) are left unknown. */
static void git_outcomes(struct outcome *o, const struct pair *pairs, size_t nr,
			 const char *dir)
{
	static const char cmd[] = "git -C repo.git merge-tree --write-tree --stdin --name-only "
				  "--no-messages";
	struct strbuf out = STRBUF_INIT;
	size_t i;

	if (sh_out_in(&out, dir, "%s <pairs", cmd) == 0 && parse_stdin_output(o, nr, &out) == nr)
		goto done;
	for (i = 0; i < nr; i++) {
		strvec_clear(&o[i].paths);
		memset(&o[i], 0, sizeof(o[i]));
		o[i].paths = (struct strvec)STRVEC_INIT;
		if (sh_out_in(&out, dir, "echo '%s %s' | %s", pairs[i].ours, pairs[i].theirs,
			      cmd) == 0)
			parse_stdin_output(&o[i], 1, &out);
	}
done:
	strbuf_release(&out);
}

/*
 * nextbot's merge of one pair against git's outcome `o`: the same clean tree, or a
 * conflict with the same conflicted paths.  Counts git's conflicts and failures.
 */
static void compare_merge(git_repository *repo, const struct pair *p, const struct outcome *o,
			  unsigned seed, size_t *conflicts, size_t *git_failed)
{
	struct treemerge_conflicts c = TREEMERGE_CONFLICTS_INIT;
	struct treemerge_labels labels = { p->ours, p->theirs };
	struct strvec mine = STRVEC_INIT;
	git_oidarray bases = { 0 };
	git_oid a, b, tree;
	struct treemerge_sides sides = { .ours = &a, .theirs = &b, .labels = &labels };
	char hex[GIT_OID_HEXSZ + 1];
	size_t k;
	int rc, found;

	assert_int_equal(git_oid_fromstr(&a, p->ours), 0);
	assert_int_equal(git_oid_fromstr(&b, p->theirs), 0);
	found = git_merge_bases(&bases, repo, &a, &b);
	sides.bases = bases.ids;
	sides.bases_nr = found == GIT_ENOTFOUND ? 0 : bases.count;
	rc = treemerge_commits_bases(&tree, NULL, &c, repo, &sides);
	git_oidarray_dispose(&bases);
	if (rc != 0 && rc != NB_ECONFLICT)
		print_error("seed %u, merge %s %s: %d %s\n", seed, p->ours, p->theirs, rc,
			    nb_error_last());
	assert_true(rc == 0 || rc == NB_ECONFLICT);
	if (!o->known) {
		/* git has no answer: nextbot must not claim a clean one */
		assert_int_equal(rc, NB_ECONFLICT);
		(*git_failed)++;
		treemerge_conflicts_release(&c);
		return;
	}
	if (!o->clean)
		(*conflicts)++;
	for (k = 0; k < c.nr; k++)
		if (!c.items[k].pathless &&
		    (!mine.nr || strcmp(mine.v[mine.nr - 1], c.items[k].path)))
			strvec_push(&mine, c.items[k].path);
	if ((rc == 0) != o->clean) {
		print_error("seed %u, merge %s %s: git %s, nextbot %s\n", seed, p->ours, p->theirs,
			    o->clean ? "clean" : "conflict", rc ? "conflict" : "clean");
		assert_int_equal(rc == 0, o->clean);
	}
	if (rc == 0) {
		git_oid_tostr(hex, sizeof(hex), &tree);
		if (strcmp(hex, o->tree))
			print_error("seed %u, merge %s %s: trees differ\n", seed, p->ours,
				    p->theirs);
		assert_string_equal(hex, o->tree);
	} else {
		if (mine.nr != o->paths.nr)
			print_error("seed %u, merge %s %s: %zu conflicted paths, git %zu\n", seed,
				    p->ours, p->theirs, mine.nr, o->paths.nr);
		assert_int_equal(mine.nr, o->paths.nr);
		for (k = 0; k < mine.nr; k++)
			assert_string_equal(mine.v[k], o->paths.v[k]);
	}
	strvec_clear(&mine);
	treemerge_conflicts_release(&c);
}

/*
 * One generated history (tests/crisscross.py): every merge of it by nextbot and by
 * git; returns the merges checked.  Prints the first disagreement.
 */
static size_t check_history(unsigned seed, size_t *conflicts, size_t *git_failed)
{
	char *dir = xstrfmt("%s/cc%u", top, seed), *pairs_path = xstrfmt("%s/pairs", dir);
	char *repo_path = xstrfmt("%s/repo.git", dir);
	struct pair *pairs = NULL;
	struct outcome *o;
	git_repository *repo = NULL;
	size_t nr = 0, alloc = 0, i;
	char line[256];
	FILE *f;

	assert_int_equal(fixture_sys_free(xstrfmt("mkdir -p '%s' && python3 '%s' --seed %u "
						  "--out '%s'", dir, generator, seed, dir)), 0);
	f = fopen(pairs_path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		ALLOC_GROW(pairs, nr + 1, alloc);
		assert_int_equal(sscanf(line, "%40s %40s", pairs[nr].ours, pairs[nr].theirs), 2);
		nr++;
	}
	fclose(f);
	o = xcalloc(nr + 1, sizeof(*o));
	for (i = 0; i < nr; i++)
		o[i].paths = (struct strvec)STRVEC_INIT;
	git_outcomes(o, pairs, nr, dir);
	assert_int_equal(git_repository_open(&repo, repo_path), 0);
	for (i = 0; i < nr; i++)
		compare_merge(repo, &pairs[i], &o[i], seed, conflicts, git_failed);
	for (i = 0; i < nr; i++)
		strvec_clear(&o[i].paths);
	git_repository_free(repo);
	free(o);
	free(pairs);
	free(dir);
	free(pairs_path);
	free(repo_path);
	return nr;
}

/*
 * Generated maintainer histories with criss-cross merges (tests/crisscross.py):
 * merges with 14 merge bases whose pairs have merge bases of their own (virtual
 * bases two levels deep, with conflict markers in them), renames, modify/delete,
 * file<->folder, binary, CRLF, no final newline, symlink<->file, mode-only and
 * case-only changes.  Every merge's outcome is git merge-tree's.  More seeds:
 * CRISSCROSS_SEEDS="1 2 3 ...".
 */
static void test_crisscross_histories_slow(void **state)
{
	const char *env = getenv("CRISSCROSS_SEEDS");
	char *seeds = xstrdup(env ? env : "1 6 37"), *tok, *save = NULL;
	struct treemerge_stats before, after;
	size_t merges = 0, conflicts = 0, git_failed = 0;

	treemerge_stats_get(&before);
	for (tok = strtok_r(seeds, " ,", &save); tok; tok = strtok_r(NULL, " ,", &save))
		merges += check_history((unsigned)strtoul(tok, NULL, 10), &conflicts, &git_failed);
	treemerge_stats_get(&after);
	print_message("%zu merges (%zu conflicts, %zu that git 2.39 cannot do); %lu tree merges, "
		      "%lu of them inner (%lu conflicted), %lu levels deep, up to %lu merge "
		      "bases; %lu unsure\n", merges, conflicts, git_failed,
		      after.merges - before.merges, after.virtual_merges - before.virtual_merges,
		      after.virtual_conflicts - before.virtual_conflicts, after.max_depth,
		      after.max_bases, after.unsure - before.unsure);
	assert_true(after.max_bases >= 14);
	assert_true(after.max_depth >= 2);
	assert_true(after.virtual_conflicts > before.virtual_conflicts);
	assert_true(conflicts > 0 && conflicts < merges);
	free(seeds);
}

/* Octopus histories: every one of n parents P1..Pn is a merge base of A and B. */
enum { OCTO_BASES_CONFLICT = 1, OCTO_SIDES_DIFFER = 2 };
#define OCTO_SHARED 48  /* bases that change the shared file, each its own line */

static void add_blob(git_treebuilder *tb, git_repository *repo, const char *name,
		     const char *text)
{
	git_oid id;

	assert_int_equal(git_blob_create_from_buffer(&id, repo, text, strlen(text)), 0);
	assert_int_equal(git_treebuilder_insert(NULL, tb, name, &id, GIT_FILEMODE_BLOB), 0);
}

/* File "shared": its lines with base `only`'s change (0: every base's, -1: none). */
static void shared_text(struct strbuf *sb, size_t n, long only)
{
	size_t line, lines = 4 * OCTO_SHARED + 4;

	strbuf_reset(sb);
	for (line = 1; line <= lines; line++) {
		size_t i = line / 4;

		if (line % 4 == 0 && i <= n && i % 2 && (only == 0 || (long)i == only))
			strbuf_addf(sb, "p%zu\n", i);
		else
			strbuf_addf(sb, "%zu\n", line);
	}
}

/*
 * Commit number `i` (0: the root; 1..n: Pi; n + 1, n + 2: A and B) with its tree:
 * "shared", "c" (P1 and P2 change it two ways with OCTO_BASES_CONFLICT), Pi's own
 * file "f<i>" (A and B have all of them) and A's and B's own file.
 */
static void octo_commit(git_oid *out, git_repository *repo, size_t n, size_t i, int flags,
			const git_commit **parents, size_t parents_nr)
{
	struct strbuf sb = STRBUF_INIT;
	git_treebuilder *tb = NULL;
	git_signature *sig = NULL;
	git_tree *tree = NULL;
	const char *c = "zero\n";
	git_oid tree_id;
	size_t k;

	assert_int_equal(git_treebuilder_new(&tb, repo, NULL), 0);
	shared_text(&sb, n, i == 0 ? -1 : i > n ? 0 : (long)i);
	add_blob(tb, repo, "shared", sb.buf);
	if (flags & OCTO_BASES_CONFLICT) {
		if (i == 1 || i == n + 1 || (i == n + 2 && !(flags & OCTO_SIDES_DIFFER)))
			c = "one\n";
		else if (i == 2 || i == n + 2)
			c = "two\n";
	} else if (i == n + 2 && (flags & OCTO_SIDES_DIFFER)) {
		c = "theirs\n";
	} else if (i == n + 1 && (flags & OCTO_SIDES_DIFFER)) {
		c = "ours\n";
	}
	add_blob(tb, repo, "c", c);
	for (k = 1; k <= n; k++) {
		if (k != i && i <= n)
			continue;
		char name[32];

		snprintf(name, sizeof(name), "f%zu", k);
		strbuf_reset(&sb);
		strbuf_addf(&sb, "%zu\n", k);
		add_blob(tb, repo, name, sb.buf);
	}
	if (i > n)
		add_blob(tb, repo, i == n + 1 ? "side-a" : "side-b", "side\n");
	assert_int_equal(git_treebuilder_write(&tree_id, tb), 0);
	assert_int_equal(git_tree_lookup(&tree, repo, &tree_id), 0);
	assert_int_equal(git_signature_new(&sig, "T", "t@example.org",
					   1700000000 + (git_time_t)i, 0), 0);
	strbuf_reset(&sb);
	strbuf_addf(&sb, "commit %zu\n", i);
	assert_int_equal(git_commit_create(out, repo, NULL, sig, sig, NULL, sb.buf, tree,
					   parents_nr, parents), 0);
	git_signature_free(sig);
	git_tree_free(tree);
	git_treebuilder_free(tb);
	strbuf_release(&sb);
}

/* A fresh bare repository `dir`/repo.git with A and B over n merge bases. */
static git_repository *octopus(struct pair *ab, const char *dir, size_t n, int flags)
{
	const git_commit **parents = xcalloc(n, sizeof(*parents));
	git_repository *repo = NULL;
	git_commit *root = NULL;
	git_oid id;
	size_t i;

	char *path = xstrfmt("%s/repo.git", dir);

	assert_int_equal(fixture_sys_free(xstrfmt("git init -q --bare '%s'", path)), 0);
	assert_int_equal(git_repository_open(&repo, path), 0);
	free(path);
	octo_commit(&id, repo, n, 0, flags, NULL, 0);
	assert_int_equal(git_commit_lookup(&root, repo, &id), 0);
	for (i = 1; i <= n; i++) {
		git_commit *pi = NULL;

		octo_commit(&id, repo, n, i, flags, (const git_commit **)&root, 1);
		assert_int_equal(git_commit_lookup(&pi, repo, &id), 0);
		parents[i - 1] = pi;
	}
	octo_commit(&id, repo, n, n + 1, flags, parents, n);
	git_oid_tostr(ab->ours, sizeof(ab->ours), &id);
	octo_commit(&id, repo, n, n + 2, flags, parents, n);
	git_oid_tostr(ab->theirs, sizeof(ab->theirs), &id);
	for (i = 0; i < n; i++)
		git_commit_free((git_commit *)parents[i]);
	free(parents);
	git_commit_free(root);
	return repo;
}

/* `git merge-base --all` of the pair: how many it lists. */
static size_t git_merge_base_count(const char *dir, const struct pair *ab)
{
	struct strbuf out = STRBUF_INIT;
	size_t i, lines = 0;

	assert_int_equal(sh_out_in(&out, dir, "git -C repo.git merge-base --all %s %s",
				   ab->ours, ab->theirs), 0);
	for (i = 0; i < out.len; i++)
		lines += out.buf[i] == '\n';
	strbuf_release(&out);
	return lines;
}

/* nextbot's merge of the pair is git's: its clean tree or its conflicted paths. */
static void octo_compare(git_repository *repo, const struct pair *ab, const char *dir,
			 int want_clean)
{
	struct outcome o;
	size_t conflicts = 0, failed = 0;
	char *path = xstrfmt("%s/pairs", dir);
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fprintf(f, "%s %s\n", ab->ours, ab->theirs);
	assert_int_equal(fclose(f), 0);
	memset(&o, 0, sizeof(o));
	o.paths = (struct strvec)STRVEC_INIT;
	git_outcomes(&o, ab, 1, dir);
	assert_true(o.known);
	assert_int_equal(o.clean, want_clean);
	compare_merge(repo, ab, &o, 0, &conflicts, &failed);
	assert_int_equal(failed, 0);
	if (!want_clean)
		assert_true(o.paths.nr > 0);
	strvec_clear(&o.paths);
	free(path);
}

/*
 * 48 merge bases (git.git has merges with as many), within the bound: merged into a
 * virtual base pairwise, as git does, with and without conflicts among the bases
 * (conflict markers in the virtual base) and between the sides.
 */
static void test_many_merge_bases(void **state)
{
	static const struct { int flags, clean; } v[] = {
		{ 0, 1 }, { OCTO_SIDES_DIFFER, 0 },
		{ OCTO_BASES_CONFLICT, 1 }, { OCTO_BASES_CONFLICT | OCTO_SIDES_DIFFER, 0 },
	};
	size_t k, n = 48;

	for (k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
		char *dir = xstrfmt("%s/octo%zu", top, k);
		struct treemerge_stats before, after;
		git_repository *repo;
		struct pair ab;

		repo = octopus(&ab, dir, n, v[k].flags);
		assert_int_equal(git_merge_base_count(dir, &ab), n);
		treemerge_stats_get(&before);
		octo_compare(repo, &ab, dir, v[k].clean);
		treemerge_stats_get(&after);
		assert_int_equal(after.max_bases, n > before.max_bases ? n : before.max_bases);
		assert_int_equal(after.virtual_merges - before.virtual_merges, n - 1);
		assert_int_equal(after.merges - before.merges, n);
		assert_int_equal(after.bounded, before.bounded);
		if (v[k].flags & OCTO_BASES_CONFLICT)
			assert_true(after.virtual_conflicts > before.virtual_conflicts);
		else
			assert_int_equal(after.virtual_conflicts, before.virtual_conflicts);
		git_repository_free(repo);
		free(dir);
	}
}

/* The merge of the pair stops at a bound: a conflict saying so, never a tree. */
static void assert_bounded(git_repository *repo, const struct pair *ab)
{
	struct treemerge_conflicts c = TREEMERGE_CONFLICTS_INIT;
	struct treemerge_stats before, after;
	git_oid a, b, tree;

	assert_int_equal(git_oid_fromstr(&a, ab->ours), 0);
	assert_int_equal(git_oid_fromstr(&b, ab->theirs), 0);
	memset(&tree, 0, sizeof(tree));
	treemerge_stats_get(&before);
	assert_int_equal(treemerge_commits(&tree, NULL, &c, repo, &a, &b), NB_ECONFLICT);
	treemerge_stats_get(&after);
	assert_int_equal(after.bounded, before.bounded + 1);
	assert_true(git_oid_is_zero(&tree));
	assert_int_equal(c.nr, 1);
	assert_string_equal(c.items[0].kind, "too many merge bases");
	assert_true(c.items[0].pathless);
	assert_false(c.have_tree);
	assert_non_null(strstr(nb_error_last(), "too many merge bases"));
	treemerge_conflicts_release(&c);
}

/*
 * Each bound, lowered for the test, hit and just not hit on 48 merge bases (48 tree
 * merges: 47 inner and the outer one).
 */
static void test_bounds_lowered(void **state)
{
	const struct treemerge_bounds dflt = { TREEMERGE_MAX_BASES, TREEMERGE_MAX_MERGES,
					       TREEMERGE_MAX_SECONDS, TREEMERGE_MAX_WALK };
	char *dir = xstrfmt("%s/octo-bounds", top);
	struct treemerge_bounds b;
	git_repository *repo;
	struct pair ab;

	repo = octopus(&ab, dir, 48, OCTO_BASES_CONFLICT);
	b = dflt;
	b.bases = 47;
	treemerge_bounds_set(&b);
	assert_bounded(repo, &ab);
	b.bases = 48;
	treemerge_bounds_set(&b);
	octo_compare(repo, &ab, dir, 1);
	b = dflt;
	b.merges = 47;
	treemerge_bounds_set(&b);
	assert_bounded(repo, &ab);
	b.merges = 48;
	treemerge_bounds_set(&b);
	octo_compare(repo, &ab, dir, 1);
	b = dflt;
	b.walk = 10;            /* A, B, 48 bases and the root: 51 commits */
	treemerge_bounds_set(&b);
	assert_bounded(repo, &ab);
	b = dflt;
	b.seconds = -1;
	treemerge_bounds_set(&b);
	assert_bounded(repo, &ab);
	treemerge_bounds_set(NULL);
	octo_compare(repo, &ab, dir, 1);
	git_repository_free(repo);
	free(dir);
}

/* TREEMERGE_MAX_BASES + 1 real merge bases, the production bound: a conflict. */
static void test_too_many_merge_bases(void **state)
{
	char *dir = xstrfmt("%s/octo-over", top);
	struct treemerge_stats after;
	size_t n = TREEMERGE_MAX_BASES + 1;
	git_repository *repo;
	struct pair ab;

	treemerge_bounds_set(NULL);
	repo = octopus(&ab, dir, n, 0);
	assert_int_equal(git_merge_base_count(dir, &ab), n);
	assert_bounded(repo, &ab);
	treemerge_stats_get(&after);
	assert_true(after.max_bases >= n);
	git_repository_free(repo);
	free(dir);
}

static int setup_all(void **state)
{
	if (!realpath("tests/crisscross.py", generator))
		return -1;
	return fixture_world_open(top, FIXTURE_IDENTITY | FIXTURE_HOME);
}

static int teardown_all(void **state)
{
	free(repo_dir);
	fixture_world_close(top);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_disjoint),
		cmocka_unit_test(test_trees_cherry_pick),
		cmocka_unit_test(test_same_file_clean),
		cmocka_unit_test(test_content_conflict),
		cmocka_unit_test(test_rename_one_side),
		cmocka_unit_test(test_modify_delete),
		cmocka_unit_test(test_add_add),
		cmocka_unit_test(test_binary),
		cmocka_unit_test(test_already_merged),
		cmocka_unit_test(test_modes),
		cmocka_unit_test(test_subdirs),
		cmocka_unit_test(test_both_delete_and_renames),
		cmocka_unit_test(test_symlink_and_type),
		cmocka_unit_test(test_history_with_merges),
		cmocka_unit_test(test_criss_cross),
		cmocka_unit_test(test_unrelated),
		cmocka_unit_test(test_directory_rename_differs),
		cmocka_unit_test(test_random_slow),
		cmocka_unit_test(test_crisscross_histories_slow),
		/* last: the crisscross test's max_bases must be its own merges' */
		cmocka_unit_test(test_many_merge_bases),
		cmocka_unit_test(test_bounds_lowered),
		cmocka_unit_test(test_too_many_merge_bases),
	};

	return cmocka_run_group_tests_name("treemerge", tests, setup_all, teardown_all);
}
