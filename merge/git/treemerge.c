/* Merges of commits as git's ort makes them, virtual merge bases included. */
#include <string.h>
#include <time.h>

#include "merge/git/git_int.h"
#include "merge/git/mergebase_int.h"
#include "merge/git/ort_int.h"
#include "merge/git/treemerge_int.h"
#include "util/error.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define INNER_BRANCH1 "Temporary merge branch 1"
#define INNER_BRANCH2 "Temporary merge branch 2"

void treemerge_conflicts_release(struct treemerge_conflicts *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->nr; i++) {
		free(c->items[i].path);
		free(c->items[i].kind);
	}
	free(c->items);
	c->items = NULL;
	c->nr = c->alloc = 0;
	c->have_tree = 0;
}

static _Thread_local struct treemerge_stats stats;

#define BOUNDS_DEFAULT { TREEMERGE_MAX_BASES, TREEMERGE_MAX_MERGES, TREEMERGE_MAX_SECONDS, \
			 TREEMERGE_MAX_WALK }
static _Thread_local struct treemerge_bounds bounds = BOUNDS_DEFAULT;

void treemerge_bounds_set(const struct treemerge_bounds *b)
{
	static const struct treemerge_bounds dflt = BOUNDS_DEFAULT;

	bounds = b ? *b : dflt;
}

void treemerge_stats_get(struct treemerge_stats *out)
{
	*out = stats;
}

static void conflict_add(struct treemerge_conflicts *c, const char *path, const char *kind,
			 const unsigned int modes[3], const git_oid oids[3], int pathless)
{
	struct treemerge_conflict *it;

	if (!c)
		return;
	ALLOC_GROW(c->items, c->nr + 1, c->alloc);
	it = &c->items[c->nr++];
	memset(it, 0, sizeof(*it));
	it->path = xstrdup(path);
	it->kind = xstrdup(kind);
	it->pathless = pathless;
	if (modes) {
		memcpy(it->modes, modes, sizeof(it->modes));
		memcpy(it->oids, oids, sizeof(it->oids));
	}
}

/* One merge's whole recursion: its commits, what it has spent, why it stopped. */
struct recursion {
	git_repository *repo;
	struct mbgraph *g;
	int merges;
	struct timespec start;
	const char *stopped;    /* a bound hit: the reason */
	int unsure;
};

static int over_time(const struct recursion *r)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec - r->start.tv_sec > bounds.seconds;
}

static int empty_tree(git_oid *out, git_repository *repo)
{
	git_odb *odb = NULL;
	int err = 0;

	if (git_repository_odb(&odb, repo) < 0 ||
	    git_odb_write(out, odb, "", 0, GIT_OBJECT_TREE) < 0)
		err = merge_git_fail("merge: writing the empty tree");
	git_odb_free(odb);
	return err;
}

/* One tree merge, counted against the bounds. */
static int merge_trees_counted(struct recursion *r, struct ort_result *out,
			       const git_oid *base, const git_oid *t1, const git_oid *t2,
			       const struct ort_options *opts)
{
	int err;

	if (++r->merges > bounds.merges || over_time(r)) {
		r->stopped = "too many merge bases";
		return 1;
	}
	stats.merges++;
	if (opts->call_depth)
		stats.virtual_merges++;
	if ((unsigned long)opts->call_depth > stats.max_depth)
		stats.max_depth = (unsigned long)opts->call_depth;
	err = ort_merge_trees(out, r->repo, base, t1, t2, opts);
	if (!err && out->unsure)
		r->unsure = 1;
	if (!err && opts->call_depth && !out->clean)
		stats.virtual_conflicts++;
	return err;
}

/*
 * merge-ort's merge_ort_internal(): the merge bases of h1 and h2 (oldest first) are
 * merged pairwise into a virtual base, inner merges labelled "Temporary merge
 * branch 1/2" with their conflicts left in; then h1 and h2 are merged over it.
 * 0 with *out filled, 1 when a bound stopped it, NB_ERROR.
 */
static int merge_internal(struct recursion *r, struct ort_result *out, struct mb_commit *h1,
			  struct mb_commit *h2, int depth, const char *b1, const char *b2)
{
	struct ort_options opts = { b1, b2, "merged common ancestors", depth };
	struct mb_commit **bases = NULL, **found, *merged;
	git_oid base_tree, tree1, tree2;
	size_t nr, i;
	int err;

	err = mbgraph_merge_bases(&found, &nr, r->g, h1, h2, bounds.walk);
	if (err == NB_ETIMEOUT) {
		r->stopped = "too many merge bases";
		return 1;
	}
	if (err < 0)
		return err;
	bases = xmalloc((nr + 1) * sizeof(*bases));
	for (i = 0; i < nr; i++)         /* git merges them oldest first */
		bases[i] = found[nr - 1 - i];
	if (nr > stats.max_bases)
		stats.max_bases = nr;
	if (nr > bounds.bases) {
		r->stopped = "too many merge bases";
		err = 1;
		goto done;
	}
	if (!nr) {
		git_oid empty;

		if ((err = empty_tree(&empty, r->repo)) < 0)
			goto done;
		merged = mbgraph_virtual(r->g, &empty, NULL, NULL);
	} else {
		merged = bases[0];
	}
	for (i = 1; i < nr; i++) {
		struct mb_commit *prev = merged;
		struct ort_result inner;

		err = merge_internal(r, &inner, prev, bases[i], depth + 1, INNER_BRANCH1,
				     INNER_BRANCH2);
		if (err)
			goto done;
		merged = mbgraph_virtual(r->g, &inner.tree, prev, bases[i]);
		ort_result_release(&inner);
	}
	if ((err = mbgraph_tree(&base_tree, r->g, merged)) < 0 ||
	    (err = mbgraph_tree(&tree1, r->g, h1)) < 0 ||
	    (err = mbgraph_tree(&tree2, r->g, h2)) < 0)
		goto done;
	err = merge_trees_counted(r, out, &base_tree, &tree1, &tree2, &opts);
done:
	free(bases);
	return err;
}

/* The outcome of the outer merge as the callers want it. */
static int report(git_oid *out_tree, struct treemerge_conflicts *conflicts,
		  const struct ort_result *res, const struct recursion *r)
{
	size_t i;

	if (r && r->stopped) {
		stats.bounded++;
		conflict_add(conflicts, "(merge)", r->stopped, NULL, NULL, 1);
		return nb_error_set(NB_ECONFLICT, "merge conflict: %s", r->stopped);
	}
	if (res->clean && !(r && r->unsure)) {
		git_oid_cpy(out_tree, &res->tree);
		return 0;
	}
	if (res->unsure || (r && r->unsure))
		stats.unsure++;
	for (i = 0; i < res->conflicts_nr; i++)
		conflict_add(conflicts, res->conflicts[i].path, res->conflicts[i].kind,
			     res->conflicts[i].modes, res->conflicts[i].oids,
			     res->conflicts[i].pathless);
	if (!res->conflicts_nr)
		conflict_add(conflicts, "(merge)", "a case nextbot does not model", NULL, NULL, 1);
	if (conflicts) {
		git_oid_cpy(&conflicts->tree, &res->tree);
		conflicts->have_tree = 1;
	}
	return nb_error_set(NB_ECONFLICT, "merge conflict");
}

int treemerge_trees(git_oid *out_tree, struct treemerge_conflicts *conflicts,
		    git_repository *repo, const git_oid *base_tree, const git_oid *ours_tree,
		    const git_oid *theirs_tree)
{
	struct ort_options opts = { "ours", "theirs", "base", 0 };
	struct ort_result res;
	int err;

	stats.merges++;
	if ((err = ort_merge_trees(&res, repo, base_tree, ours_tree, theirs_tree, &opts)) < 0)
		return err;
	err = report(out_tree, conflicts, &res, NULL);
	ort_result_release(&res);
	return err;
}

static int commit_tree_id(git_oid *out, git_repository *repo, const git_oid *commit)
{
	git_commit *c = NULL;

	if (git_commit_lookup(&c, repo, commit) < 0)
		return merge_git_fail("commit lookup");
	git_oid_cpy(out, git_commit_tree_id(c));
	git_commit_free(c);
	return 0;
}

/* Several merge bases: found again in git's order, merged into a virtual one. */
static int merge_recursive(git_oid *out_tree, struct treemerge_conflicts *conflicts,
			   git_repository *repo, const git_oid *ours, const git_oid *theirs,
			   const struct treemerge_labels *labels)
{
	struct recursion r = { .repo = repo, .g = mbgraph_new(repo) };
	struct mb_commit *h1, *h2;
	struct ort_result res;
	int err;

	memset(&res, 0, sizeof(res));
	clock_gettime(CLOCK_MONOTONIC, &r.start);
	if ((err = mbgraph_lookup(&h1, r.g, ours)) < 0 ||
	    (err = mbgraph_lookup(&h2, r.g, theirs)) < 0)
		goto done;
	err = merge_internal(&r, &res, h1, h2, 0, labels->ours, labels->theirs);
	if (err < 0)
		goto done;
	err = report(out_tree, conflicts, &res, &r);
done:
	ort_result_release(&res);
	mbgraph_free(r.g);
	return err;
}

int treemerge_commits_bases(git_oid *out_tree, int *already_merged,
			    struct treemerge_conflicts *conflicts, git_repository *repo,
			    const struct treemerge_sides *s)
{
	struct treemerge_labels dflt = { "ours", "theirs" };
	const struct treemerge_labels *labels = s->labels;
	const git_oid *ours = s->ours, *theirs = s->theirs, *bases = s->bases;
	size_t bases_nr = s->bases_nr;
	struct ort_options opts;
	struct ort_result res;
	git_oid b, o, t;
	int err;

	if (!labels || !labels->ours || !labels->theirs)
		labels = &dflt;
	if (already_merged)
		*already_merged = 0;
	if (!bases_nr)
		return nb_error_set(NB_EUNRELATED, "refusing to merge unrelated histories");
	if (bases_nr == 1 && git_oid_equal(&bases[0], theirs)) {
		if (already_merged)
			*already_merged = 1;
		return commit_tree_id(out_tree, repo, ours);
	}
	if (bases_nr == 1 && git_oid_equal(&bases[0], ours))
		return commit_tree_id(out_tree, repo, theirs);
	if (bases_nr > 1)
		return merge_recursive(out_tree, conflicts, repo, ours, theirs, labels);
	if ((err = commit_tree_id(&b, repo, &bases[0])) < 0 ||
	    (err = commit_tree_id(&o, repo, ours)) < 0 ||
	    (err = commit_tree_id(&t, repo, theirs)) < 0)
		return err;
	opts = (struct ort_options){ labels->ours, labels->theirs, "base", 0 };
	stats.merges++;
	if ((err = ort_merge_trees(&res, repo, &b, &o, &t, &opts)) < 0)
		return err;
	err = report(out_tree, conflicts, &res, NULL);
	ort_result_release(&res);
	return err;
}

int treemerge_commits(git_oid *out_tree, int *already_merged,
		      struct treemerge_conflicts *conflicts, git_repository *repo,
		      const git_oid *ours, const git_oid *theirs)
{
	git_oidarray bases = { 0 };
	struct treemerge_sides sides = { .ours = ours, .theirs = theirs };
	int err = git_merge_bases(&bases, repo, ours, theirs);

	if (err < 0 && err != GIT_ENOTFOUND)
		return merge_git_fail("merge base");
	sides.bases = bases.ids;
	sides.bases_nr = err == GIT_ENOTFOUND ? 0 : bases.count;
	err = treemerge_commits_bases(out_tree, already_merged, conflicts, repo, &sides);
	git_oidarray_dispose(&bases);
	return err;
}
