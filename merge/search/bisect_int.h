/*
 * The bisection engine: which commit to test next, as `git bisect` chooses it, and
 * what the answers say.  The engine works on a graph of candidate commits; the
 * caller tests the commits (one, or k at once for multisection) through a callback.
 */
#ifndef MERGE_BISECT_INT_H
#define MERGE_BISECT_INT_H

#include "util/oid.h"
#include <git2.h>
#include <stddef.h>
#include "util/strvec.h"

/*
 * The candidates: the commits reachable from the bad end and not from any good
 * one, the bad end included.  Nodes are in the order git's bisection sees them
 * (oldest committer date first); parents are indices of parents that are
 * candidates too (first parents only in first-parent mode).
 */
struct bisect_node {
	struct nb_oid id;          /* commit id, hex */
	char *subject;        /* owned; one line, may be "" */
	long long time;       /* committer time */
	size_t *parents;      /* owned */
	size_t parents_nr;
};

struct bisect_graph {
	struct bisect_node *nodes;
	size_t nr, alloc;
	size_t bad;           /* index of the bad end */
	int first_parent;     /* written to the log's start line */
	char *good_ids;       /* owned: the good ends, hex, space-separated (for the log) */
};
#define BISECT_GRAPH_INIT { NULL, 0, 0, 0, 0, NULL }
void bisect_graph_release(struct bisect_graph *g);

/*
 * Appends a node (id hex, subject may be NULL, time) and returns its index; its
 * parents are added with bisect_graph_add_parent().  Nodes must be added oldest
 * first.
 */
size_t bisect_graph_add(struct bisect_graph *g, const char *id, const char *subject,
			long long time);
void bisect_graph_add_parent(struct bisect_graph *g, size_t node, size_t parent);

/*
 * Loads the candidates between `goods` and `bad` from `repo`: a revision walk by
 * committer date, as git's.  `first_parent` follows first parents only (git bisect
 * --first-parent).  Returns 0; NB_ENOTFOUND (recorded) when a commit is missing;
 * NB_EINVALID when `bad` is reachable from a good end (nothing to bisect).
 */
int bisect_graph_load(struct bisect_graph *out, git_repository *repo, const git_oid *bad,
		      const git_oid *goods, size_t goods_nr, int first_parent);

enum bisect_verdict {
	BISECT_UNTESTED = 0,
	BISECT_GOOD,
	BISECT_BAD,
	BISECT_SKIP,
};

/*
 * Tests nodes[0..n) of the graph (n <= jobs; the caller may run them at once)
 * and writes one verdict (GOOD, BAD or SKIP) per node to `out`.  Returns 0, or a
 * negative error (recorded) to stop the bisection: an infrastructure failure,
 * never a verdict.
 */
typedef int (*bisect_test_fn)(void *data, const struct bisect_graph *g, const size_t *nodes,
			      size_t n, enum bisect_verdict *out);

enum bisect_outcome {
	BISECT_FOUND = 0,        /* first_bad is the first bad commit */
	BISECT_ONLY_SKIPPED,     /* it is one of range[] (skipped ones, then the bad end) */
};

struct bisect_result {
	enum bisect_outcome outcome;
	size_t first_bad;        /* node index (FOUND) */
	size_t *range;           /* ONLY_SKIPPED: candidates left; owned */
	size_t range_nr;
	size_t *skipped;         /* every node that was skipped, in test order; owned */
	size_t skipped_nr;
	unsigned steps;          /* commits tested */
	unsigned rounds;         /* rounds of (up to jobs) parallel tests */
	/*
	 * A log `git bisect replay` accepts: "git bisect start ...", "# good: [id]
	 * subject" comments and "git bisect good|bad|skip <id>" lines, and "# first bad
	 * commit: [id] subject" or "# only skipped commits left to test" at the end.
	 */
	struct strvec log;
};
#define BISECT_RESULT_INIT { BISECT_FOUND, 0, NULL, 0, NULL, 0, 0, 0, STRVEC_INIT }
void bisect_result_release(struct bisect_result *r);

/*
 * Bisects graph `g`.  With jobs == 1 each step tests a commit at git bisect's
 * distance (git's weights and midpoint rule, its deterministic pseudo-random move
 * away from skipped commits), so the first bad commit is git's and the steps are
 * never more than git's.  Not always the very commit git tests: among commits of
 * equal committer time the walk orders parents before children, where
 * `git rev-list --bisect` breaks the tie by its own order, so a step may test
 * another commit of the same distance.  With
 * jobs = k > 1 each round tests up to k commits splitting the candidates into
 * k + 1 parts of about equal size (multisection).  Returns 0
 * with the outcome in `out` (release with bisect_result_release()), or the
 * callback's error.
 */
int bisect_run(struct bisect_result *out, const struct bisect_graph *g, unsigned jobs,
	       bisect_test_fn test, void *data);

/*
 * The commit to test next, at git bisect's distance, given the verdicts so far
 * (indexed by node; the bad end counts as BAD whatever it says).  Returns its
 * index, the bad end's index when the first bad commit is found, or (size_t)-1
 * when only skipped commits are left.  Exposed for tests.
 */
size_t bisect_next(const struct bisect_graph *g, const enum bisect_verdict *v, size_t bad);

#endif
