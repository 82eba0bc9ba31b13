/*
 * merge/integrate/nightbase.c against `git merge-base --all`: random histories with shared
 * topic branches, back-merges, criss-crosses, clock skew, tips already merged or
 * in the base, unrelated roots, and a night whose head is reset or grows by
 * commits on top, as a night's fixes and fallbacks move it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <git2.h>

#include "merge/repo/repo.h"
#include "merge/integrate/nightbase_int.h"
#include "merge/git/oidset_int.h"
#include "util/oid.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define MAINLINE 40
#define TREES 30
#define MAX_COMMITS 1024

struct world {
	char dir[64];
	git_repository *repo;
	git_tree *empty;
	git_oid commits[MAX_COMMITS];   /* every commit made, mainline first */
	size_t nr;
	git_oid tips[TREES + 3];
	size_t tips_nr;
	git_oid base;
	uint64_t rnd;
	git_time_t clock;
};

static unsigned int rand_below(struct world *w, unsigned int below)
{
	w->rnd = w->rnd * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned int)(w->rnd >> 33) % below;
}

/* A commit of the empty tree; dates wander back and forth (clock skew). */
static git_oid commit(struct world *w, const git_oid *parents, size_t nparents)
{
	const git_commit *pc[2] = { NULL, NULL };
	git_commit *owned[2] = { NULL, NULL };
	git_signature *sig = NULL;
	char msg[32];
	git_oid id;
	size_t i;

	w->clock += (git_time_t)rand_below(w, 7200) - 1800;
	assert_int_equal(git_signature_new(&sig, "T", "t@example.org", w->clock, 0), 0);
	for (i = 0; i < nparents; i++) {
		assert_int_equal(git_commit_lookup(&owned[i], w->repo, &parents[i]), 0);
		pc[i] = owned[i];
	}
	snprintf(msg, sizeof(msg), "c%zu\n", w->nr);
	assert_int_equal(git_commit_create(&id, w->repo, NULL, sig, sig, NULL, msg, w->empty,
					   nparents, pc), 0);
	for (i = 0; i < nparents; i++)
		git_commit_free(owned[i]);
	git_signature_free(sig);
	assert_true(w->nr < MAX_COMMITS);
	w->commits[w->nr++] = id;
	return id;
}

/* Mainline, then trees forked from mainline or from other trees' commits. */
static void world_make(struct world *w, unsigned int seed)
{
	git_treebuilder *tb = NULL;
	git_oid tree_id, at, other;
	size_t t, k, n;

	memset(w, 0, sizeof(*w));
	w->rnd = seed;
	w->clock = 1700000000;
	snprintf(w->dir, sizeof(w->dir), "/tmp/nb-nightbase.XXXXXX");
	assert_non_null(mkdtemp(w->dir));
	assert_int_equal(git_repository_init(&w->repo, w->dir, 1), 0);
	assert_int_equal(git_treebuilder_new(&tb, w->repo, NULL), 0);
	assert_int_equal(git_treebuilder_write(&tree_id, tb), 0);
	git_treebuilder_free(tb);
	assert_int_equal(git_tree_lookup(&w->empty, w->repo, &tree_id), 0);
	at = commit(w, NULL, 0);
	for (k = 1; k < MAINLINE; k++)
		at = commit(w, &at, 1);
	w->base = w->commits[MAINLINE - 5 + rand_below(w, 5)];
	for (t = 0; t < TREES; t++) {
		/* forks from mainline up to the base, or from any commit made so far */
		if (rand_below(w, 3))
			at = w->commits[rand_below(w, MAINLINE - 4)];
		else
			at = w->commits[rand_below(w, (unsigned int)w->nr)];
		for (n = 1 + rand_below(w, 6), k = 0; k < n; k++) {
			git_oid parents[2];

			parents[0] = at;
			if (rand_below(w, 5)) {
				at = commit(w, parents, 1);
				continue;
			}
			other = w->commits[rand_below(w, (unsigned int)w->nr)];
			if (git_oid_equal(&other, &at)) {
				at = commit(w, parents, 1);
				continue;
			}
			parents[1] = other;           /* a back-merge or a topic merged in */
			at = commit(w, parents, 2);
		}
		w->tips[w->tips_nr++] = at;
	}
	w->tips[w->tips_nr++] = w->commits[rand_below(w, MAINLINE - 4)];       /* in the base */
	w->tips[w->tips_nr++] = w->commits[MAINLINE + rand_below(w, 10)];      /* an early tree's */
	at = commit(w, NULL, 0);                                           /* unrelated */
	w->tips[w->tips_nr++] = commit(w, &at, 1);
}

static void world_free(struct world *w)
{
	char *cmd = xstrfmt("rm -rf '%s'", w->dir);

	git_tree_free(w->empty);
	git_repository_free(w->repo);
	assert_int_equal(system(cmd), 0);
	free(cmd);
}

/* `git merge-base --all a b` as a set (empty when unrelated). */
static void git_bases(struct oidset *out, const struct world *w, const git_oid *a,
			const git_oid *b)
{
	char line[128];
	struct nb_oid ha = NB_OID_INIT, hb = NB_OID_INIT;
	char *cmd;
	FILE *p;
	git_oid id;

	git_oid_tostr(ha.hex, sizeof(ha.hex), a);
	git_oid_tostr(hb.hex, sizeof(hb.hex), b);
	cmd = xstrfmt("git --git-dir='%s' merge-base --all %s %s", w->dir, ha.hex, hb.hex);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		assert_int_equal(git_oid_fromstrn(&id, line, 40), 0);
		oidset_add(out, &id);
	}
	pclose(p);
	free(cmd);
}

/* One query: nightbase's answer must be git's set exactly. */
static void check(struct world *w, struct nightbase *nb, const git_oid *head,
		    const git_oid *tip)
{
	struct oidset want = OIDSET_INIT, got = OIDSET_INIT;
	const git_oid *bases;
	size_t i, nr;

	git_bases(&want, w, head, tip);
	assert_int_equal(nightbase_get(&bases, &nr, nb, head, tip), 0);
	for (i = 0; i < nr; i++)
		assert_true(oidset_add(&got, &bases[i]));       /* no duplicates */
	assert_int_equal(oidset_size(&got), oidset_size(&want));
	for (i = 0; i < nr; i++)
		assert_true(oidset_has(&want, &bases[i]));
	oidset_release(&want);
	oidset_release(&got);
}

/* A night: merge the tips in turn, sometimes with fixes on top or a reset. */
static void night(struct world *w, struct nightbase_stats *total)
{
	struct nightbase *nb = NULL;
	struct nightbase_stats st;
	git_oid head = w->base, heads[TREES + 3], parents[2];
	size_t t, nheads = 0;

	assert_int_equal(nightbase_new(&nb, w->repo, &w->base), 0);
	for (t = 0; t < w->tips_nr; t++) {
		unsigned int action = rand_below(w, 10);

		check(w, nb, &head, &w->tips[t]);
		heads[nheads++] = head;
		if (action < 7) {
			parents[0] = head;
			parents[1] = w->tips[t];
			head = commit(w, parents, 2);
		} else if (action == 7) {
			head = commit(w, &head, 1);            /* a fix on top */
		} else if (action == 8) {
			head = heads[rand_below(w, (unsigned int)nheads)];  /* a fallback */
		}
	}
	check(w, nb, &w->tips[0], &w->tips[1]);         /* a head not above the base */
	check(w, nb, &head, &w->tips[2]);
	nightbase_stats_get(nb, &st);
	total->queries += st.queries;
	total->rebuilds += st.rebuilds;
	total->fallbacks += st.fallbacks;
	total->shared += st.shared;
	nightbase_free(nb);
}

static void test_random_nights_match_git_slow(void **state)
{
	struct nightbase_stats total = { 0, 0, 0, 0 };
	unsigned int seed;

	(void)state;
	for (seed = 1; seed <= 12; seed++) {
		struct world *w = xcalloc(1, sizeof(*w));

		world_make(w, seed);
		night(w, &total);
		world_free(w);
		free(w);
	}
	/* every path was taken: the shortcut, shared commits, rebuilds, the fallback */
	assert_true(total.shared > 0);
	assert_true(total.rebuilds > 0);
	assert_true(total.fallbacks > 0);
	assert_true(total.queries > total.rebuilds + total.fallbacks);
}

/* A linux-next-like night stays on the shortcut: no walk of next ever. */
static void test_linear_night_never_rebuilds(void **state)
{
	struct world *w = xcalloc(1, sizeof(*w));
	struct nightbase *nb = NULL;
	struct nightbase_stats st;
	git_oid head, parents[2];
	size_t t;

	(void)state;
	world_make(w, 99);
	head = w->base;
	assert_int_equal(nightbase_new(&nb, w->repo, &w->base), 0);
	for (t = 0; t < TREES; t++) {
		check(w, nb, &head, &w->tips[t]);
		parents[0] = head;
		parents[1] = w->tips[t];
		head = commit(w, parents, 2);
	}
	nightbase_stats_get(nb, &st);
	assert_int_equal(st.queries, TREES);
	assert_int_equal(st.rebuilds, 0);
	assert_int_equal(st.fallbacks, 0);
	nightbase_free(nb);
	world_free(w);
	free(w);
}

static void test_oidset(void **state)
{
	struct oidset set = OIDSET_INIT;
	git_oid id;
	unsigned int i;

	(void)state;
	memset(&id, 0, sizeof(id));
	assert_false(oidset_has(&set, &id));
	assert_true(oidset_add(&set, &id));             /* the zero id is a member too */
	assert_false(oidset_add(&set, &id));
	for (i = 1; i <= 5000; i++) {
		memset(&id, 0, sizeof(id));
		memcpy(id.id + 8, &i, sizeof(i));       /* same hash bytes: long probes */
		assert_true(oidset_add(&set, &id));
	}
	assert_int_equal(oidset_size(&set), 5001);
	for (i = 1; i <= 5000; i++) {
		memset(&id, 0, sizeof(id));
		memcpy(id.id + 8, &i, sizeof(i));
		assert_true(oidset_has(&set, &id));
	}
	id.id[19] = 0xff;
	assert_false(oidset_has(&set, &id));
	oidset_clear(&set);
	assert_int_equal(oidset_size(&set), 0);
	oidset_release(&set);
}

static int setup(void **state)
{
	(void)state;
	return merge_global_init();
}

static int teardown(void **state)
{
	(void)state;
	merge_global_shutdown();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_oidset),
		cmocka_unit_test(test_linear_night_never_rebuilds),
		cmocka_unit_test(test_random_nights_match_git_slow),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
