/*
 * The bisection engine against `git bisect run`: generated histories, linear and
 * with merges, random culprits and untestable commits; first bad commit and step
 * counts compared.  Also multisection and ports of t6030's `bisect run` cases.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "merge/search/bisect_int.h"
#include "util/fileutil.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* What `git bisect run` says: "first <id>" or "skipped <id> <id> ...", and its steps. */
struct git_answer {
	struct strbuf ids;
	int only_skipped;
	int steps;
};

/* A generated history: commit n has subject "c<n>" and files n (its number), BUG. */
struct history {
	char dir[256];
	int nr;
	char *bug;      /* bug[n]: commit n contains the culprit */
	char *skip;     /* skip[n]: the test cannot run on commit n (exit 125) */
	int culprit;
	int merges;
	git_repository *repo;
	/* git's answer, asked once per first_parent (it does not depend on jobs) */
	struct git_answer git[2];
	int asked[2];
};

static unsigned long rng_state;

/*
 * For the git commands the fixtures run: glibc hands the heap's top back to the kernel
 * each time fast-import frees a commit's tree, and grows it again (6,000 brk calls for
 * 500 commits, 1.2 s of CPU and 9 s on a loaded VM, where a brk costs ~90 us); with a
 * top pad and a high trim threshold the heap just stays (0.03 s).
 */
#define GIT_MALLOC_ENV "GLIBC_TUNABLES=glibc.malloc.top_pad=16777216:" \
	"glibc.malloc.trim_threshold=67108864 "

static unsigned rnd(unsigned n)
{
	rng_state = rng_state * 6364136223846793005ul + 1442695040888963407ul;
	return (unsigned)((rng_state >> 33) % n);
}

static void emit_commit(FILE *fi, int n, int parent, int merge_parent, int bug)
{
	fprintf(fi, "commit refs/heads/%s\nmark :%d\n", "master", n + 1);
	fprintf(fi, "author A <a@example.org> %d +0000\n", 1000000 + n * 10);
	fprintf(fi, "committer A <a@example.org> %d +0000\n", 1000000 + n * 10);
	fprintf(fi, "data %d\nc%d\n", (int)snprintf(NULL, 0, "c%d\n", n), n);
	if (parent >= 0)
		fprintf(fi, "from :%d\n", parent + 1);
	if (merge_parent >= 0)
		fprintf(fi, "merge :%d\n", merge_parent + 1);
	fprintf(fi, "deleteall\nM 644 inline n\ndata %d\n%d\n",
		(int)snprintf(NULL, 0, "%d\n", n), n);
	if (bug)
		fprintf(fi, "M 644 inline BUG\ndata 4\nbug\n");
	fprintf(fi, "\n");
}

/*
 * Generates `nr` commits: with merges, side branches fork from recent mainline
 * commits and merge back; the tip reaches every commit.  Commit 0 is the root.
 */
static int forced_culprit;

static void history_make(struct history *h, unsigned long seed, int nr, int with_merges,
			 int skip_pct)
{
	int *parent = xcalloc(nr, sizeof(int)), *mparent = xcalloc(nr, sizeof(int));
	int side = -1, main_tip = 0, n;
	struct strbuf cmd = STRBUF_INIT;
	FILE *fi;

	rng_state = seed;
	memset(h, 0, sizeof(*h));
	snprintf(h->dir, sizeof(h->dir), "/tmp/nb-bisect-%d-%lu", (int)getpid(), seed);
	file_remove_tree(h->dir);
	h->nr = nr;
	h->bug = xcalloc(nr, 1);
	h->skip = xcalloc(nr, 1);
	parent[0] = mparent[0] = -1;
	for (n = 1; n < nr; n++) {
		unsigned r = rnd(100);

		mparent[n] = -1;
		if (!with_merges) {
			parent[n] = n - 1;
			continue;
		}
		if (side >= 0 && (r < 12 || n == nr - 1)) {
			parent[n] = main_tip;
			mparent[n] = side;
			main_tip = n;
			side = -1;
			h->merges++;
		} else if (side < 0 && r < 25 && n < nr - 2) {
			parent[n] = main_tip > 3 ? main_tip - (int)rnd(3) : main_tip;
			side = n;
		} else if (side >= 0 && r < 55) {
			parent[n] = side;
			side = n;
		} else {
			parent[n] = main_tip;
			main_tip = n;
		}
	}
	/* the culprit must be reachable from the tip, which reaches all commits */
	h->culprit = 1 + (int)rnd((unsigned)nr - 1);
	if (forced_culprit)
		h->culprit = forced_culprit;
	for (n = 0; n < nr; n++) {
		h->bug[n] = n == h->culprit || (parent[n] >= 0 && h->bug[parent[n]]) ||
			    (mparent[n] >= 0 && h->bug[mparent[n]]);
		h->skip[n] = n > 0 && n < nr - 1 && (int)rnd(100) < skip_pct;
	}
	strbuf_addf(&cmd, "git init -q %s && cd %s && " GIT_MALLOC_ENV "git fast-import --quiet && "
			  "git reset -q --hard master", h->dir, h->dir);
	fi = popen(cmd.buf, "w");
	assert_non_null(fi);
	for (n = 0; n < nr; n++)
		emit_commit(fi, n, parent[n], mparent[n], h->bug[n]);
	assert_int_equal(pclose(fi), 0);
	assert_int_equal(git_repository_open(&h->repo, h->dir), 0);
	free(parent);
	free(mparent);
	strbuf_release(&cmd);
}

static void history_make_culprit(struct history *h, unsigned long seed, int nr, int culprit)
{
	forced_culprit = culprit;
	history_make(h, seed, nr, 0, 0);
	forced_culprit = 0;
}

static void history_free(struct history *h)
{
	int fp;

	for (fp = 0; fp < 2; fp++)
		if (h->asked[fp])
			strbuf_release(&h->git[fp].ids);
	git_repository_free(h->repo);
	if (!getenv("KEEP"))
		file_remove_tree(h->dir);
	free(h->bug);
	free(h->skip);
}

static int commit_number(const struct bisect_graph *g, size_t node)
{
	return (int)strtol(g->nodes[node].subject + 1, NULL, 10);
}

static int predicate(void *data, const struct bisect_graph *g, const size_t *nodes, size_t n,
		     enum bisect_verdict *out)
{
	const struct history *h = data;
	size_t i;

	for (i = 0; i < n; i++) {
		int c = commit_number(g, nodes[i]);

		out[i] = h->skip[c] ? BISECT_SKIP : h->bug[c] ? BISECT_BAD : BISECT_GOOD;
	}
	return 0;
}

static void git_bisect(struct git_answer *a, const struct history *h, const char *good,
		       const char *bad, int first_parent)
{
	struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT, skips = STRBUF_INIT;
	char line[512];
	FILE *p;
	int n, in_list = 0;

	for (n = 0; n < h->nr; n++)
		if (h->skip[n])
			strbuf_addf(&skips, " %d", n);
	/* the test is a script git runs itself (no shell around it), the shell's
	   builtins only: one process a step */
	strbuf_addf(&cmd,
		    "export " GIT_MALLOC_ENV "&& "
		    "cd %s && rm -f ../cnt-%d && printf '%%s\\n' '#!/bin/sh' 'echo >>$CNT; "
		    "read n <n; case \"$SKIPS\" in *\" $n \"*) exit 125;; esac; "
		    "test ! -e BUG' >../probe-%d && chmod +x ../probe-%d && "
		    "git bisect start %s %s %s >/dev/null && "
		    "SKIPS='%s ' CNT=../cnt-%d git bisect run ../probe-%d 2>&1; "
		    "git bisect reset >/dev/null 2>&1; "
		    "echo; echo steps $(wc -l <../cnt-%d); rm -f ../cnt-%d ../probe-%d",
		    h->dir, (int)getpid(), (int)getpid(), (int)getpid(),
		    first_parent ? "--first-parent" : "", bad, good, skips.buf, (int)getpid(),
		    (int)getpid(), (int)getpid(), (int)getpid(), (int)getpid());
	p = popen(cmd.buf, "r");
	assert_non_null(p);
	strbuf_init(&a->ids, 0);
	a->only_skipped = 0;
	a->steps = -1;
	while (fgets(line, sizeof(line), p)) {
		char *sp = strchr(line, ' ');

		if (strstr(line, "is the first bad commit") && sp) {
			strbuf_add(&a->ids, line, sp - line);
		} else if (strstr(line, "could be any of")) {
			a->only_skipped = in_list = 1;
		} else if (in_list && strlen(line) == 41) {
			strbuf_add(&a->ids, line, 40);
			strbuf_addch(&a->ids, ' ');
		} else if (!strncmp(line, "steps ", 6)) {
			a->steps = (int)strtol(line + 6, NULL, 10);
		} else {
			in_list = 0;
		}
	}
	pclose(p);
	strbuf_release(&cmd);
	strbuf_release(&out);
	strbuf_release(&skips);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Space-separated ids, sorted, so two lists compare as sets. */
static char *sorted_ids(const char *ids)
{
	char *copy = xstrdup(ids), *save = NULL, *tok, *words[4096];
	struct strbuf sb = STRBUF_INIT;
	size_t n = 0, i;

	for (tok = strtok_r(copy, " ", &save); tok && n < 4096; tok = strtok_r(NULL, " ", &save))
		words[n++] = tok;
	qsort(words, n, sizeof(*words), cmp_str);
	for (i = 0; i < n; i++)
		strbuf_addf(&sb, "%s%s", i ? " " : "", words[i]);
	free(copy);
	return strbuf_detach(&sb, NULL);
}

static void resolve(git_oid *out, git_repository *repo, const char *spec)
{
	git_object *obj = NULL;

	assert_int_equal(git_revparse_single(&obj, repo, spec), 0);
	git_oid_cpy(out, git_object_id(obj));
	git_object_free(obj);
}

/* The root commit c0 (":/^c0$" would go through libgit2's regex, which leaks in pcre2). */
static void root_commit(git_oid *out, git_repository *repo)
{
	git_revwalk *walk;

	assert_int_equal(git_revwalk_new(&walk, repo), 0);
	git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE);
	assert_int_equal(git_revwalk_push_head(walk), 0);
	assert_int_equal(git_revwalk_next(out, walk), 0);
	git_revwalk_free(walk);
}

static int total_steps_git, total_steps_ours;

/* Bisects root..master with the engine and with git; they must agree. */
static void compare_with_git(struct history *h, int first_parent, unsigned jobs)
{
	struct bisect_graph g = BISECT_GRAPH_INIT;
	struct bisect_result r = BISECT_RESULT_INIT;
	struct git_answer a;
	git_oid bad, good;
	char goodhex[NB_OID_HEXSZ + 1], badhex[NB_OID_HEXSZ + 1];
	char *want, *got;
	struct strbuf ours = STRBUF_INIT;
	size_t i;

	resolve(&bad, h->repo, "master");
	root_commit(&good, h->repo);
	git_oid_tostr(goodhex, sizeof(goodhex), &good);
	git_oid_tostr(badhex, sizeof(badhex), &bad);
	assert_int_equal(bisect_graph_load(&g, h->repo, &bad, &good, 1, first_parent), 0);
	assert_int_equal(bisect_run(&r, &g, jobs, predicate, h), 0);
	if (r.outcome == BISECT_FOUND) {
		strbuf_addstr(&ours, g.nodes[r.first_bad].id.hex);
	} else {
		for (i = 0; i < r.range_nr; i++)
			strbuf_addf(&ours, "%s ", g.nodes[r.range[i]].id.hex);
	}
	/* the skips are set before the first question and stay */
	if (!h->asked[!!first_parent])
		git_bisect(&h->git[!!first_parent], h, goodhex, badhex, first_parent);
	h->asked[!!first_parent] = 1;
	a = h->git[!!first_parent];   /* history_free releases it */
	want = sorted_ids(a.ids.buf);
	got = sorted_ids(ours.buf);
	if (jobs == 1 || !a.only_skipped) {
		if (strcmp(want, got))
			fail_msg("culprit c%d merges %d fp %d: git says %s%s, nextbot %s%s",
				 h->culprit, h->merges, first_parent,
				 a.only_skipped ? "skipped " : "", want,
				 r.outcome ? "skipped " : "", got);
	}
	if (jobs == 1) {
		assert_int_equal(r.outcome == BISECT_ONLY_SKIPPED, a.only_skipped);
		if ((int)r.steps > a.steps) {
			for (i = 0; i < r.log.nr; i++)
				print_message("%s\n", r.log.v[i]);
			fail_msg("nextbot took %u steps, git %d (kept %s)", r.steps, a.steps,
				 h->dir);
		}
		total_steps_git += a.steps;
		total_steps_ours += r.steps;
	}
	free(want);
	free(got);
	strbuf_release(&ours);
	bisect_result_release(&r);
	bisect_graph_release(&g);
}

static void oracle_linear_slow(void **state)
{
	static const int sizes[] = { 100, 400, 1000, 2000 };
	struct history h;
	size_t i;

	for (i = 0; i < 8; i++) {
		history_make(&h, 100 + i, sizes[i % 4], 0, i < 4 ? 0 : 8);
		compare_with_git(&h, 0, 1);
		history_free(&h);
	}
}

static void oracle_merges_slow(void **state)
{
	static const int sizes[] = { 100, 300, 700, 1500 };
	struct history h;
	size_t i;

	for (i = 0; i < 8; i++) {
		history_make(&h, 200 + i, sizes[i % 4], 1, i < 4 ? 0 : 8);
		compare_with_git(&h, 0, 1);
		if (i % 2 == 0)
			compare_with_git(&h, 1, 1);
		history_free(&h);
	}
}

/* Dense skips around a culprit: git's pseudo-random moves must be reproduced. */
static void oracle_many_skips_slow(void **state)
{
	struct history h;
	int i;

	for (i = 0; i < 6; i++) {
		history_make(&h, 300 + i, 150, i % 2, 35);
		compare_with_git(&h, 0, 1);
		history_free(&h);
	}
}

static void multisection_finds_git_answer_slow(void **state)
{
	struct history h;
	int i;

	for (i = 0; i < 6; i++) {
		history_make(&h, 400 + i, 500, i % 2, i < 4 ? 0 : 5);
		compare_with_git(&h, 0, 3);
		compare_with_git(&h, 0, 2);
		history_free(&h);
	}
}

/* t6030's `bisect run` cases with skips, on a 20-commit line; git decides. */
static void t6030_skip_cases_slow(void **state)
{
	static const int cases[][6] = {
		/* culprit, skipped commits (0-terminated) */
		{ 7, 6, 7, 0 },          /* cannot tell between culprit and parent */
		{ 7, 7, 0 },             /* culprit skipped: its child is not the answer */
		{ 7, 8, 9, 10, 0 },      /* skips after the culprit: first bad still found */
		{ 19, 18, 17, 0 },       /* at the bad end */
		{ 1, 2, 3, 4, 5, 0 },    /* right after the good end */
		{ 10, 9, 10, 11, 12, 0 },
	};
	struct history h;
	size_t i;
	int j;

	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		history_make_culprit(&h, 500 + i, 21, cases[i][0]);
		for (j = 1; cases[i][j]; j++)
			h.skip[cases[i][j]] = 1;
		compare_with_git(&h, 0, 1);
		compare_with_git(&h, 0, 2);
		history_free(&h);
	}
}

/* Synthetic line of n commits for counting steps and rounds without a repository. */
static void line_graph(struct bisect_graph *g, int n)
{
	char id[NB_OID_HEXSZ + 1], subj[32];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "%040x", i + 1);
		snprintf(subj, sizeof(subj), "c%d", i + 1);
		bisect_graph_add(g, id, subj, i);
		if (i)
			bisect_graph_add_parent(g, i, i - 1);
	}
	g->bad = n - 1;
}

static int line_culprit;

static int line_predicate(void *data, const struct bisect_graph *g, const size_t *nodes,
			  size_t n, enum bisect_verdict *out)
{
	size_t i;

	assert_true(n <= *(unsigned *)data);
	for (i = 0; i < n; i++)
		out[i] = commit_number(g, nodes[i]) >= line_culprit ? BISECT_BAD : BISECT_GOOD;
	return 0;
}

/* 999 candidates (a 1,000-commit line from its root): 10 steps, 5 rounds of 3. */
static void steps_and_rounds(void **state)
{
	struct bisect_graph g = BISECT_GRAPH_INIT;
	unsigned jobs, max_steps[4] = { 0 }, max_rounds[4] = { 0 };

	line_graph(&g, 999);
	for (line_culprit = 1; line_culprit <= 999; line_culprit += 7) {
		for (jobs = 1; jobs <= 3; jobs++) {
			struct bisect_result r = BISECT_RESULT_INIT;

			assert_int_equal(bisect_run(&r, &g, jobs, line_predicate, &jobs), 0);
			assert_int_equal(r.outcome, BISECT_FOUND);
			assert_int_equal(commit_number(&g, r.first_bad), line_culprit);
			if (r.steps > max_steps[jobs])
				max_steps[jobs] = r.steps;
			if (r.rounds > max_rounds[jobs])
				max_rounds[jobs] = r.rounds;
			bisect_result_release(&r);
		}
	}
	print_message("# 999 candidates: jobs 1: %u steps; jobs 2: %u rounds; jobs 3: %u rounds\n",
		      max_steps[1], max_rounds[2], max_rounds[3]);
	assert_true(max_steps[1] <= 10);
	assert_true(max_rounds[3] <= 5);
	assert_true(max_rounds[2] <= 7);
	bisect_graph_release(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(oracle_linear_slow),
		cmocka_unit_test(oracle_merges_slow),
		cmocka_unit_test(oracle_many_skips_slow),
		cmocka_unit_test(multisection_finds_git_answer_slow),
		cmocka_unit_test(t6030_skip_cases_slow),
		cmocka_unit_test(steps_and_rounds),
	};
	int rc;

	git_libgit2_init();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	printf("# steps: nextbot %d, git %d\n", total_steps_ours, total_steps_git);
	git_libgit2_shutdown();
	return rc;
}
