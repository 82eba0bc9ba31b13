/* Merge bases of next and a tip from next's history since the base (see nightbase.h). */
#include <string.h>

#include "merge/git/git_int.h"
#include "merge/integrate/nightbase_int.h"
#include "merge/repo/repo.h"
#include "merge/git/oidset_int.h"
#include "merge/git/mergebase_int.h"
#include "util/error.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define ADVANCE_MAX 64          /* commits on top of the known head followed one by one */

struct oidlist {
	git_oid *v;
	size_t nr, alloc;
};

struct nightbase {
	git_repository *repo;
	git_oid base;
	git_oid head;           /* `since` is exactly base..head when `valid` */
	int valid;
	struct oidset since;
	struct oidlist tip_new; /* base..tip_new_of, children first: the last `theirs` */
	git_oid tip_new_of;
	int have_tip_new;
	struct oidlist result;
	git_oid result_head, result_theirs;     /* what `result` answers */
	int have_result;
	struct mbgraph *graph;  /* commits from the commit-graph, for walks that leave U */
	struct nightbase_stats stats;
};

static void push(struct oidlist *l, const git_oid *id)
{
	ALLOC_GROW(l->v, l->nr + 1, l->alloc);
	l->v[l->nr++] = *id;
}

int nightbase_new(struct nightbase **out, git_repository *repo, const git_oid *base)
{
	struct nightbase *nb = xcalloc(1, sizeof(*nb));

	nb->repo = repo;
	nb->base = *base;
	nb->head = *base;
	nb->valid = 1;          /* base..base is empty */
	nb->graph = mbgraph_new(repo);
	*out = nb;
	return 0;
}

void nightbase_free(struct nightbase *nb)
{
	if (!nb)
		return;
	oidset_release(&nb->since);
	mbgraph_free(nb->graph);
	free(nb->tip_new.v);
	free(nb->result.v);
	free(nb);
}

void nightbase_stats_get(const struct nightbase *nb, struct nightbase_stats *out)
{
	*out = nb->stats;
}

/* Commits reachable from `from` and not from the base, children before parents. */
static int walk_new(struct oidlist *out, struct nightbase *nb, const git_oid *from)
{
	git_revwalk *walk = NULL;
	git_oid id;
	int err = 0;

	out->nr = 0;
	if (git_revwalk_new(&walk, nb->repo) < 0 || git_revwalk_push(walk, from) < 0 ||
	    git_revwalk_hide(walk, &nb->base) < 0) {
		err = merge_git_fail("walking a tree's new commits");
		goto done;
	}
	git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL);
	while ((err = git_revwalk_next(&id, walk)) == 0)
		push(out, &id);
	if (err == GIT_ITEROVER)
		err = 0;
	else
		err = merge_git_fail("walking a tree's new commits");
done:
	git_revwalk_free(walk);
	return err;
}

/*
 * Follows `head` back to the known head through commits on top of it: each has
 * one parent, or is the merge of the last tip asked about.  0 when they were
 * added to `since`, 1 when `head` is not such a descendant.
 */
static int advance(struct nightbase *nb, const git_oid *head)
{
	struct oidlist chain = { NULL, 0, 0 };
	git_oid at = *head;
	int merged = 0, found = 0;
	size_t i;

	while (!found && chain.nr < ADVANCE_MAX) {
		git_commit *c = NULL;
		unsigned int parents;

		if (git_commit_lookup(&c, nb->repo, &at) < 0)
			break;
		parents = git_commit_parentcount(c);
		if (parents == 2 && !merged && nb->have_tip_new &&
		    git_oid_equal(git_commit_parent_id(c, 1), &nb->tip_new_of))
			merged = 1;
		else if (parents != 1) {
			git_commit_free(c);
			break;
		}
		push(&chain, &at);
		at = *git_commit_parent_id(c, 0);
		git_commit_free(c);
		found = git_oid_equal(&at, &nb->head);
	}
	if (found) {
		for (i = 0; i < chain.nr; i++)
			oidset_add(&nb->since, &chain.v[i]);
		for (i = 0; merged && i < nb->tip_new.nr; i++)
			oidset_add(&nb->since, &nb->tip_new.v[i]);
		nb->head = *head;
	}
	free(chain.v);
	return found ? 0 : 1;
}

/* `since` = base..head by a full walk; 1 when head does not descend from the base. */
static int rebuild(struct nightbase *nb, const git_oid *head)
{
	struct oidlist all = { NULL, 0, 0 };
	size_t i;
	int err;

	nb->valid = 0;
	oidset_clear(&nb->since);
	if (!git_oid_equal(head, &nb->base) && git_graph_descendant_of(nb->repo, head,
								       &nb->base) != 1)
		return 1;
	nb->stats.rebuilds++;
	if ((err = walk_new(&all, nb, head)) == 0) {
		for (i = 0; i < all.nr; i++)
			oidset_add(&nb->since, &all.v[i]);
		nb->head = *head;
		nb->valid = 1;
	}
	free(all.v);
	return err;
}

/* 0: `since` is base..head; 1: no shortcut for this head; or NB_ERROR. */
static int sync(struct nightbase *nb, const git_oid *head)
{
	if (nb->valid && git_oid_equal(head, &nb->head))
		return 0;
	if (nb->valid && advance(nb, head) == 0)
		return 0;
	return rebuild(nb, head);
}

/* git's merge bases of a and b (the commit-graph's walk) appended to `out`. */
static int merge_bases(struct oidlist *out, struct nightbase *nb, const git_oid *a,
		       const git_oid *b)
{
	struct mb_commit *ca, *cb, **found;
	size_t nr, i;
	int err;

	if ((err = mbgraph_lookup(&ca, nb->graph, a)) < 0 ||
	    (err = mbgraph_lookup(&cb, nb->graph, b)) < 0 ||
	    (err = mbgraph_merge_bases(&found, &nr, nb->graph, ca, cb, 0)) < 0)
		return err;
	for (i = 0; i < nr; i++)
		push(out, mbgraph_id(found[i]));
	return 0;
}

static int fallback(struct nightbase *nb, const git_oid *head, const git_oid *theirs)
{
	nb->stats.fallbacks++;
	return merge_bases(&nb->result, nb, head, theirs);
}

/*
 * The maximal commits of tip_new that are in `since` go to the result; the first
 * commits outside tip_new below them (in the base's history) to *boundary.
 */
static void shared_maximal(struct nightbase *nb, struct oidlist *boundary)
{
	struct oidset in_new = OIDSET_INIT, below = OIDSET_INIT;
	size_t i;
	unsigned int p;

	for (i = 0; i < nb->tip_new.nr; i++)
		oidset_add(&in_new, &nb->tip_new.v[i]);
	for (i = 0; i < nb->tip_new.nr; i++) {      /* children before parents */
		const git_oid *id = &nb->tip_new.v[i];
		int shared = oidset_has(&nb->since, id);
		git_commit *c = NULL;

		if (shared && !oidset_has(&below, id))
			push(&nb->result, id);
		if (!shared && !oidset_has(&below, id))
			continue;
		if (git_commit_lookup(&c, nb->repo, id) < 0)
			continue;
		for (p = 0; p < git_commit_parentcount(c); p++) {
			const git_oid *pid = git_commit_parent_id(c, p);

			if (oidset_has(&in_new, pid))
				oidset_add(&below, pid);
			else
				push(boundary, pid);
		}
		git_commit_free(c);
	}
	oidset_release(&in_new);
	oidset_release(&below);
}

/* 1 if `m` is one of `boundary` or an ancestor of one. */
static int below_boundary(struct nightbase *nb, const struct oidlist *boundary,
			    const git_oid *m)
{
	return boundary->nr && mbgraph_reachable(nb->graph, m, boundary->v, boundary->nr) == 1;
}

/* Adds the merge bases of the base and `theirs` not below a shared commit. */
static int add_base_side(struct nightbase *nb, const git_oid *theirs,
			   const struct oidlist *boundary)
{
	struct oidlist bases = { NULL, 0, 0 };
	size_t i;
	int err = merge_bases(&bases, nb, &nb->base, theirs);

	for (i = 0; !err && i < bases.nr; i++)
		if (!boundary->nr || !below_boundary(nb, boundary, &bases.v[i]))
			push(&nb->result, &bases.v[i]);
	free(bases.v);
	return err;
}

int nightbase_get(const git_oid **out, size_t *out_nr, struct nightbase *nb,
		  const git_oid *head, const git_oid *theirs)
{
	struct oidlist boundary = { NULL, 0, 0 };
	int err;

	nb->stats.queries++;
	if (nb->have_result && git_oid_equal(&nb->result_head, head) &&
	    git_oid_equal(&nb->result_theirs, theirs)) {
		*out = nb->result.v;    /* asked again (a conflict's facts): the same answer */
		*out_nr = nb->result.nr;
		return 0;
	}
	nb->have_result = 0;
	nb->result.nr = 0;
	err = sync(nb, head);
	nb->have_tip_new = 0;           /* sync() used it: it is for this query now */
	if (err < 0)
		goto done;
	if (err == 1) {
		err = fallback(nb, head, theirs);
		goto done;
	}
	if ((err = walk_new(&nb->tip_new, nb, theirs)) < 0)
		goto done;
	nb->tip_new_of = *theirs;
	nb->have_tip_new = 1;
	if (!nb->tip_new.nr) {                  /* theirs is in the base already */
		push(&nb->result, theirs);
		goto done;
	}
	shared_maximal(nb, &boundary);
	if (nb->result.nr)
		nb->stats.shared++;
	err = add_base_side(nb, theirs, &boundary);
done:
	free(boundary.v);
	*out = nb->result.v;
	*out_nr = nb->result.nr;
	if (!err) {
		nb->result_head = *head;
		nb->result_theirs = *theirs;
		nb->have_result = 1;
	}
	return err;
}
