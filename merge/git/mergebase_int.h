/*
 * Merge bases as git computes them (commit-reach.c's get_merge_bases(): paint down
 * from both sides, drop redundant ones, newest first), over real commits and the
 * virtual ones a recursive merge makes (a merged tree whose parents are two merge
 * bases).  The order matters: git merges the bases in it to build the virtual merge
 * base, and the first conflict markers there decide later merges.  Commits come from
 * the work repository's commit-graph where it has them (no object is inflated), else
 * from libgit2.  Internal to merge/.
 */
#ifndef MERGE_MERGEBASE_INT_H
#define MERGE_MERGEBASE_INT_H

#include <git2.h>
#include <stddef.h>

struct mbgraph;
struct mb_commit;

/* A graph over `repo` (borrowed; must outlive it). */
struct mbgraph *mbgraph_new(git_repository *repo);
void mbgraph_free(struct mbgraph *g);

/* The commit `oid` (owned by the graph): 0, or NB_ERROR when it cannot be read. */
int mbgraph_lookup(struct mb_commit **out, struct mbgraph *g, const git_oid *oid);

/* A virtual commit: `tree`, parents p1 then p2 (either may be NULL), date 0. */
struct mb_commit *mbgraph_virtual(struct mbgraph *g, const git_oid *tree, struct mb_commit *p1,
				  struct mb_commit *p2);

/* The commit's tree: 0, or NB_ERROR. */
int mbgraph_tree(git_oid *out, struct mbgraph *g, struct mb_commit *c);
/* The id of a real commit, NULL for a virtual one. */
const git_oid *mbgraph_id(const struct mb_commit *c);

/*
 * The merge bases of `one` and `two` in git's order (newest committer date first;
 * equal dates in the order git's walk finds them) into *out (owned by the graph,
 * valid until the next call).  `max_walk`: commits the walk may visit (0: no limit);
 * past it, NB_ETIMEOUT.  0, NB_ETIMEOUT or NB_ERROR.
 */
int mbgraph_merge_bases(struct mb_commit ***out, size_t *out_nr, struct mbgraph *g,
			struct mb_commit *one, struct mb_commit *two, size_t max_walk);

/* mbgraph_walk_range()'s calls: a commit, its tree and its first parent's tree ... */
typedef int mb_visit_fn(const git_oid *commit, const git_oid *tree, const git_oid *parent_tree,
			void *data);
/* ... and, at a merge, which parent to follow alone (or -1). */
typedef int mb_follow_fn(const git_oid *tree, const git_oid *const *parent_trees, unsigned int n,
			 void *data);

/*
 * Calls v->fn on each commit reachable from `tip` and from none of `hide`, newest
 * committer date first (git log's order), until `fn` returns non-zero or `max`
 * commits were visited.  `fn` gets the commit, its tree, its first parent's tree
 * (NULL for a root or a merge: merges are reported with parent_tree NULL too).
 * With `follow` (may be NULL), a merge's history is simplified as `git log --
 * paths` does: `follow` gets the merge's tree and its parents' and returns the
 * index of a parent to follow alone (one the caller sees no change from), or -1
 * for all of them.  0 or NB_ERROR.
 */
/* What mbgraph_walk_range() calls, and their `data`. */
struct mb_walk_visitor {
	mb_visit_fn *fn;
	mb_follow_fn *follow;
	void *data;
};
int mbgraph_walk_range(struct mbgraph *g, struct mb_commit *tip, struct mb_commit **hide,
		       size_t hide_nr, size_t max, const struct mb_walk_visitor *v);

/*
 * 1 if `ancestor` is one of `commits` (n of them) or an ancestor of one, 0 if not,
 * or NB_ERROR.  Walks only commits with a higher topological level than `ancestor`.
 */
int mbgraph_reachable(struct mbgraph *g, const git_oid *ancestor, const git_oid *commits,
		      size_t n);

/* Commits read so far (read from the commit-graph file / parsed by libgit2). */
void mbgraph_stats(const struct mbgraph *g, size_t *from_graph, size_t *parsed);

#endif
