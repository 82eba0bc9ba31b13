/* The nightly two-level culprit search (the standalone bisection: merge/search/bisect_repo.c). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merge/git/git_int.h"
#include "merge/search/bisect_int.h"
#include "merge/git/commitgraph_int.h"
#include "merge/search/search.h"
#include "merge/search/known_int.h"
#include "merge/repo/repo.h"
#include "merge/git/patchid_int.h"
#include "merge/git/treemerge_int.h"
#include "merge/search/probe_int.h"
#include "merge/search/session_int.h"
#include "merge/worker/worker.h"
#include "util/error.h"
#include "util/log.h"
#include "util/metrics.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* ---- the nightly search ---- */

/* confirm(): a search in kept trees was contradicted and is made again, clean */
#define SEARCH_AGAIN 2

/* A candidate of one bisection: a commit named in the log, and the probe tested for it. */
struct cand {
	char id[NB_OID_HEXSZ + 1];
	git_oid commit;
	git_oid first;          /* the probe before `extra` is merged in */
	git_oid probe;
	int ready;              /* 0 not built yet, 1 built, -1 does not merge: a skip */
};

/*
 * Probe for a candidate: merge(base, commit) when has_base, else the commit, with
 * `reverts` of commits reachable from it (and not from revert_hide) applied; then
 * merged with `extra` when has_extra (the culprit, in the partner search), with
 * `extra_reverts` of commits reachable from extra applied.
 */
struct cands {
	struct cand *v;
	size_t nr, alloc;
	int has_base, has_extra, has_revert_hide;
	git_oid base, extra, revert_hide;
	const struct culprit_step *reverts, *extra_reverts;  /* a unit's non-merge steps */
	size_t reverts_nr, extra_reverts_nr;
	const char *tree;       /* NEXTBOT_TREE while testing them */
	struct culprit_search *n;
};

struct culprit_search {
	const struct culprit_opts *o;
	struct culprit_result *out;
	git_repository *repo;
	git_signature *sig;
	struct session s;
	struct probe_command *cmds;
	size_t cmds_nr;
	struct probe_spec spec;     /* bisection: cache, incremental, pristine retry */
	struct probe_spec confirm;  /* confirmation: pristine, no cache */
	char tip[NB_OID_HEXSZ + 1], base[NB_OID_HEXSZ + 1];
	git_oid tip_id, base_id;
	struct step_ids *ids;       /* o->steps' ids as libgit2's, parsed once */
	struct worker_opts wo;      /* how the workers' checkouts are made */
	int infra;                  /* a probe could not be judged: out->infra_reason */
	int stopped;                /* opts.stop said stop */
	/* the search's probes keep earlier outputs (every command `incremental`);
	   cleared when confirmation contradicts them and the search starts again */
	int kept_trees;
	struct seen *seen;          /* what each clean tree probed said, in order */
	size_t seen_nr, seen_alloc;
	/* errors (normalised first lines) a clean tree both showed and did not: a
	   probe failing with one is run again (settle()) */
	struct strvec noise;
};

/*
 * A clean tree the search probed, and what the failing command said of it each
 * time: the same clean tree both passing and failing is the one proof of a flaky
 * command.  `failure` is the first failing run (its output for the report).
 */
struct seen {
	git_oid tree, probe;
	unsigned passes, fails;
	struct probe_result failure;
};

/* A step's ids, parsed (and checked) once when the search starts. */
struct step_ids {
	git_oid before, after, merged, reverted;
	int has_merged, has_reverted;
};

/* A probe commit with parents [ours, theirs]; 1 when they do not merge cleanly. */
static int merge_commit(git_oid *out, struct culprit_search *n, const git_oid *ours,
			  const git_oid *theirs)
{
	git_commit *parents[2] = { NULL, NULL };
	git_tree *tree = NULL;
	git_oid tree_id;
	int err, already = 0;

	err = treemerge_commits(&tree_id, &already, NULL, n->repo, ours, theirs);
	if (err == NB_ECONFLICT || err == NB_EUNRELATED)
		return 1;
	if (err < 0)
		return err;
	if (git_tree_lookup(&tree, n->repo, &tree_id) < 0 ||
	    git_commit_lookup(&parents[0], n->repo, ours) < 0 ||
	    git_commit_lookup(&parents[1], n->repo, theirs) < 0 ||
	    git_commit_create(out, n->repo, NULL, n->sig, n->sig, NULL, "nextbot probe\n", tree, 2,
			      (const git_commit **)parents) < 0)
		err = merge_git_fail("bisect: writing a probe commit");
	git_tree_free(tree);
	git_commit_free(parents[0]);
	git_commit_free(parents[1]);
	return err;
}

/* The commit a revert step reverted; 1 when the step names none. */
static int revert_tip(git_oid *out, struct culprit_search *n, const struct culprit_step *st)
{
	const struct step_ids *ids = &n->ids[st - n->o->steps];
	git_commit *c = NULL;
	const char *msg, *p;
	int err = 1;

	if (ids->has_reverted) {
		*out = ids->reverted;
		return 0;
	}
	if (git_commit_lookup(&c, n->repo, &ids->after) < 0)
		return merge_git_fail("bisect: reading a revert step");
	msg = git_commit_message(c);
	p = msg ? strstr(msg, "This reverts commit ") : NULL;
	if (p && strlen(p += 20) >= NB_OID_HEXSZ && git_oid_fromstrn(out, p, NB_OID_HEXSZ) == 0)
		err = 0;
	git_commit_free(c);
	return err;
}

/* 1 when `ancestor` is `commit` or reachable from it. */
static int contains(struct culprit_search *n, const git_oid *commit, const git_oid *ancestor)
{
	return git_oid_equal(commit, ancestor) ||
	       git_graph_descendant_of(n->repo, commit, ancestor) == 1;
}

/* Reverts `reverted` in the tree *tree (git revert's three-way merge); 1: conflict. */
static int revert_tree(git_oid *tree, struct culprit_search *n, const git_oid *reverted)
{
	git_commit *c = NULL, *parent = NULL;
	git_oid ours = *tree;
	int err;

	if (git_commit_lookup(&c, n->repo, reverted) < 0 || git_commit_parent(&parent, c, 0) < 0)
		err = merge_git_fail("bisect: reading a reverted commit");
	else
		err = treemerge_trees(tree, NULL, n->repo, git_commit_tree_id(c), &ours,
				      git_commit_tree_id(parent));
	git_commit_free(c);
	git_commit_free(parent);
	return err == NB_ECONFLICT ? 1 : err;
}

/*
 * The night's reverts (non-merge steps) of commits reachable from `commit` but not
 * from `hide` (may be NULL), applied on top of the probe *probe as one commit;
 * *probe is that commit then.  1 when a revert does not apply: a skip.
 */
static int apply_reverts(git_oid *probe, struct culprit_search *n, const git_oid *commit,
			   const struct culprit_step *reverts, size_t nr, const git_oid *hide)
{
	git_commit *top = NULL;
	git_tree *tree = NULL;
	git_oid tree_id, reverted;
	size_t i, applied = 0;
	int err = 0;

	if (git_commit_lookup(&top, n->repo, probe) < 0)
		return merge_git_fail("bisect: reading a probe");
	tree_id = *git_commit_tree_id(top);
	for (i = 0; i < nr && err == 0; i++) {
		if ((err = revert_tip(&reverted, n, &reverts[i])) != 0) {
			err = err < 0 ? err : 0;
			continue;
		}
		if (!contains(n, commit, &reverted) || (hide && contains(n, hide, &reverted)))
			continue;
		if ((err = revert_tree(&tree_id, n, &reverted)) == 0)
			applied++;
	}
	if (err == 0 && applied &&
	    (git_tree_lookup(&tree, n->repo, &tree_id) < 0 ||
	     git_commit_create(probe, n->repo, NULL, n->sig, n->sig, NULL,
			       "nextbot probe: tonight's reverts\n", tree, 1,
			       (const git_commit **)&top) < 0))
		err = merge_git_fail("bisect: writing a probe commit");
	git_tree_free(tree);
	git_commit_free(top);
	return err;
}

static int cand_ready(struct cands *cs, struct cand *c)
{
	git_oid first;
	int err = 0;

	if (c->ready)
		return 0;
	first = c->commit;
	if (cs->has_base)
		err = merge_commit(&first, cs->n, &cs->base, &c->commit);
	if (!err && cs->reverts_nr)
		err = apply_reverts(&first, cs->n, &c->commit, cs->reverts, cs->reverts_nr,
				      cs->has_revert_hide ? &cs->revert_hide : NULL);
	c->first = c->probe = first;
	if (!err && cs->has_extra)
		err = merge_commit(&c->probe, cs->n, &first, &cs->extra);
	if (!err && cs->has_extra && cs->extra_reverts_nr)
		err = apply_reverts(&c->probe, cs->n, &cs->extra, cs->extra_reverts,
				      cs->extra_reverts_nr, NULL);
	if (err < 0)
		return err;
	c->ready = err ? -1 : 1;
	return 0;
}

static void cands_add(struct cands *cs, const git_oid *commit)
{
	struct cand *c;

	ALLOC_GROW(cs->v, cs->nr + 1, cs->alloc);
	c = &cs->v[cs->nr++];
	memset(c, 0, sizeof(*c));
	c->commit = *commit;
	git_oid_tostr(c->id, sizeof(c->id), commit);
}

static void cands_release(struct cands *cs)
{
	free(cs->v);
	cs->v = NULL;
	cs->nr = cs->alloc = 0;
}

/* The first-parent chain of `tip` not reachable from `hide`, oldest first. */
static int first_parent_chain(struct cands *cs, struct culprit_search *n, const git_oid *tip,
				const git_oid *hide, size_t hide_nr)
{
	git_revwalk *walk = NULL;
	git_oid id;
	size_t i;
	int err;

	if (git_revwalk_new(&walk, n->repo) < 0)
		return merge_git_fail("bisect: revwalk");
	git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE);
	git_revwalk_simplify_first_parent(walk);
	err = git_revwalk_push(walk, tip);
	for (i = 0; i < hide_nr && err >= 0; i++)
		err = git_revwalk_hide(walk, &hide[i]);
	while (err >= 0 && (err = git_revwalk_next(&id, walk)) == 0)
		cands_add(cs, &id);
	git_revwalk_free(walk);
	return err == GIT_ITEROVER || err == 0 ? 0
					       : merge_git_fail("bisect: walking a tree's commits");
}

static void note_infra(struct culprit_search *n, const char *what, const struct probe_result *r)
{
	if (n->infra)
		return;
	n->infra = 1;
	free(n->out->infra_reason);
	n->out->infra_reason = xstrfmt("%s: %s", what, r->infra_reason ? r->infra_reason : "");
}

/* The caller's deadline or SIGTERM: stop before starting another probe. */
static int stopped(struct culprit_search *n)
{
	if (!n->o->stop || !n->o->stop(n->o->stop_data))
		return 0;
	n->stopped = 1;
	nb_error_set(NB_ETIMEOUT, "the search was stopped (deadline)");
	return 1;
}

/* A copy of a failing run's result, for a flaky report: its output and command. */
static void copy_failure(struct probe_result *to, const struct probe_result *from)
{
	*to = (struct probe_result)PROBE_RESULT_INIT;
	to->verdict = from->verdict;
	to->cmd_index = from->cmd_index;
	to->exit_code = from->exit_code;
	to->signal = from->signal;
	to->timed_out = from->timed_out;
	to->limit = from->limit ? xstrdup(from->limit) : NULL;
	strbuf_add(&to->output, from->output.buf, from->output.len);
}

/* Counts what a clean tree said (passes and failures of the failing command). */
static void observe(struct culprit_search *n, const git_oid *commit, const struct probe_result *r)
{
	struct seen *e = NULL;
	size_t i;

	if (!r->clean || (r->verdict != PROBE_GOOD && r->verdict != PROBE_BAD) ||
	    git_oid_is_zero(&r->tree))
		return;
	for (i = 0; i < n->seen_nr && !e; i++)
		if (git_oid_equal(&n->seen[i].tree, &r->tree))
			e = &n->seen[i];
	if (!e) {
		ALLOC_GROW(n->seen, n->seen_nr + 1, n->seen_alloc);
		e = &n->seen[n->seen_nr++];
		memset(e, 0, sizeof(*e));
		e->failure = (struct probe_result)PROBE_RESULT_INIT;
		e->tree = r->tree;
		e->probe = *commit;
	}
	if (r->verdict == PROBE_GOOD) {
		e->passes++;
	} else if (!e->fails++) {
		copy_failure(&e->failure, r);
	}
}

static void first_error(struct strbuf *out, struct culprit_search *n, const struct probe_result *r);

/* A probe failing with a flaky error tries again, at most this many times. */
#define NOISE_RETRIES 3

/* 1 when `r` failed with an error known to be flaky (or from the cache: unknown). */
static int is_noise(struct culprit_search *n, const struct probe_result *r)
{
	struct strbuf e = STRBUF_INIT;
	int hit;

	if (!n->noise.nr || r->verdict != PROBE_BAD)
		return 0;
	if (r->from_cache)
		return 1;
	first_error(&e, n, r);
	hit = strvec_contains(&n->noise, e.buf);
	strbuf_release(&e);
	return hit;
}

/*
 * A probe that failed with a flaky error says nothing about the patch under
 * test: it is run again (uncached) until it passes or fails otherwise, a few
 * times at most.  `r` holds the last run.
 */
static int settle(struct culprit_search *n, struct probe_result *r, const git_oid *commit,
		  const struct probe_spec *spec)
{
	struct probe_spec again = *spec;
	unsigned k;
	int err = 0;

	again.no_cache = 1;
	for (k = 0; k < NOISE_RETRIES && err >= 0 && is_noise(n, r); k++) {
		probe_result_release(r);
		*r = (struct probe_result)PROBE_RESULT_INIT;
		if (stopped(n))
			return NB_ETIMEOUT;
		n->s.step++;
		if ((err = probe_run(r, n->s.workers[0], commit, n->s.step, &again)) >= 0)
			observe(n, commit, r);
	}
	return err;
}

/* Probes one commit (worker 0); the result is the caller's to release. */
static int probe(struct probe_result *r, struct culprit_search *n, const git_oid *commit,
		   const struct probe_spec *spec, const char *tree)
{
	struct probe_spec s = *spec;
	unsigned step = n->s.step + 1;
	int err;

	s.tree_name = tree;
	if (stopped(n))
		return NB_ETIMEOUT;
	n->s.step++;
	*r = (struct probe_result)PROBE_RESULT_INIT;
	if ((err = probe_run(r, n->s.workers[0], commit, step, &s)) >= 0) {
		observe(n, commit, r);
		err = settle(n, r, commit, &s);
	}
	return err;
}

static int test_cands(void *data, const struct bisect_graph *g, const size_t *nodes, size_t nr,
			enum bisect_verdict *out)
{
	struct cands *cs = data;
	struct culprit_search *n = cs->n;
	struct probe_result res[SESSION_MAX_JOBS];
	struct probe_spec spec = n->spec;
	git_oid ids[SESSION_MAX_JOBS];
	size_t map[SESSION_MAX_JOBS], run = 0, i;
	int err = 0;

	memset(ids, 0, sizeof(ids));
	for (i = 0; i < nr && err >= 0; i++) {
		struct cand *c = &cs->v[nodes[i]];

		if ((err = cand_ready(cs, c)) < 0)
			return err;
		out[i] = BISECT_SKIP;
		if (c->ready > 0) {
			ids[run] = c->probe;
			res[run] = (struct probe_result)PROBE_RESULT_INIT;
			map[run++] = i;
		}
	}
	spec.tree_name = cs->tree;
	if (stopped(n))
		return NB_ETIMEOUT;
	log_progress("bisecting %s (%zu candidates): step %u", cs->tree ? cs->tree : "next",
		     cs->nr, n->s.step + 1);
	err = probe_run_many(res, n->s.workers, ids, run, n->s.step + 1, &spec);
	n->s.step += (unsigned)run;
	for (i = 0; i < run; i++) {
		observe(n, &ids[i], &res[i]);
		if (err >= 0)
			err = settle(n, &res[i], &ids[i], &spec);
		if (res[i].verdict == PROBE_INFRA)
			note_infra(n, "a probe could not be judged", &res[i]);
		n->out->incremental_unsafe |= res[i].incremental_only;
		out[map[i]] = session_verdict(res[i].verdict);
		log_verbose("bisect %s: %.12s: %s", cs->tree, g->nodes[nodes[map[i]]].id.hex,
			    session_verdict_word[out[map[i]]]);
		probe_result_release(&res[i]);
	}
	if (err >= 0 && n->infra)
		err = nb_error_set(NB_ERROR, "%s", n->out->infra_reason);
	return err;
}

/*
 * The good end a log names for tree commits: the first parent of the oldest
 * candidate (where the tree forked from what next held), assumed good because
 * next before the merge, which holds it, passed.  A log over these commits and
 * it replays with `git bisect replay` wherever the tree's commits are.
 */
static void fork_point(char out[NB_OID_HEXSZ + 1], struct cands *cs)
{
	git_commit *c = NULL;

	*out = '\0';
	if (cs->nr && git_commit_lookup(&c, cs->n->repo, &cs->v[0].commit) == 0 &&
	    git_commit_parentcount(c) > 0)
		git_oid_tostr(out, NB_OID_HEXSZ + 1, git_commit_parent_id(c, 0));
	git_commit_free(c);
}

/*
 * Bisects the candidates, the good end being `good` (known to pass) and the last
 * candidate the bad end (known to fail): a first-parent chain, as the log's start
 * line says.  Candidates that are a tree's commits (merged into a base for their
 * probes) name the fork point as the good end in the log.  Returns 0 with
 * *first_bad, 1 when only skipped candidates remain (out->candidates filled),
 * negative on failure.
 */
static int bisect_cands(struct cands *cs, const char *good, const char *title,
			  size_t *first_bad)
{
	struct culprit_search *n = cs->n;
	struct bisect_graph g = BISECT_GRAPH_INIT;
	struct bisect_result r = BISECT_RESULT_INIT;
	char fork[NB_OID_HEXSZ + 1];
	size_t i;
	int err;

	for (i = 0; i < cs->nr; i++) {
		git_commit *c = NULL;
		struct strbuf subj = STRBUF_INIT;

		if (git_commit_lookup(&c, n->repo, &cs->v[i].commit) == 0)
			merge_commit_subject(&subj, c);
		bisect_graph_add(&g, cs->v[i].id, subj.buf, (long long)i);
		if (i)
			bisect_graph_add_parent(&g, i, i - 1);
		git_commit_free(c);
		strbuf_release(&subj);
	}
	g.bad = cs->nr - 1;
	g.first_parent = 1;
	strvec_pushf(&n->out->log, "# %s", title);
	if (cs->has_base && (fork_point(fork, cs), *fork)) {
		strvec_pushf(&n->out->log, "# fork point %s: assumed good (next before the merge, "
					   "which holds it, passed)", fork);
		good = fork;
	}
	g.good_ids = xstrdup(good);
	if ((err = bisect_run(&r, &g, n->s.jobs, test_cands, cs)) < 0)
		goto done;
	for (i = 0; i < r.log.nr; i++)
		strvec_push(&n->out->log, r.log.v[i]);
	n->out->steps += r.steps;
	if (r.outcome == BISECT_FOUND) {
		*first_bad = r.first_bad;
	} else {
		for (i = 0; i < r.range_nr; i++)
			strvec_push(&n->out->candidates, g.nodes[r.range[i]].id.hex);
		err = 1;
	}
done:
	bisect_result_release(&r);
	bisect_graph_release(&g);
	return err;
}

/*
 * A unit found bad whose end is a revert after its tree's merge: git's
 * first-parent bisection also holds the merge itself, which holds what the
 * reverts took out and so fails as the unit's end does.  The log says so, so
 * that its replay ends on the merge, the commit the search names.
 */
static void unit_merge_bad(struct culprit_search *n, const struct cands *cs, size_t k, size_t step)
{
	const struct culprit_step *st = &n->o->steps[step];
	struct strvec *log = &n->out->log;
	git_commit *c = NULL;
	struct strbuf subj = STRBUF_INIT;

	if (nb_oid_equal(&st->after, &(struct nb_oid){ 0 }) ||
	    !strcmp(st->after.hex, cs->v[k].id))
		return;
	if (git_commit_lookup(&c, n->repo, &n->ids[step].after) == 0)
		merge_commit_subject(&subj, c);
	git_commit_free(c);
	if (log->nr && !strncmp(log->v[log->nr - 1], "# first bad commit:", 19))
		free(log->v[--log->nr]);
	strvec_pushf(log, "# bad: [%s] %s (the merge of its unit, whose end fails: the "
			  "reverts after it only take patches out)", st->after.hex, subj.buf);
	strvec_pushf(log, "git bisect bad %s", st->after.hex);
	strvec_pushf(log, "# first bad commit: [%s] %s", st->after.hex, subj.buf);
	strbuf_release(&subj);
}

const char *culprit_outcome_name(enum culprit_outcome o)
{
	static const char *const names[] = { "found", "unconfirmed", "flaky", "skipped",
					     "infrastructure", "stopped", "not-reproduced" };

	return (unsigned)o < sizeof(names) / sizeof(*names) ? names[o] : "unknown";
}

void culprit_result_release(struct culprit_result *r)
{
	free(r->tree);
	free(r->subject);
	free(r->partner_tree);
	free(r->command);
	free(r->excerpt);
	free(r->first_error);
	free(r->fingerprint);
	free(r->infra_reason);
	strvec_clear(&r->log);
	strvec_clear(&r->candidates);
	memset(r, 0, sizeof(*r));
	r->log = (struct strvec)STRVEC_INIT;
	r->candidates = (struct strvec)STRVEC_INIT;
}

static void infra_outcome(struct culprit_search *n, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void infra_outcome(struct culprit_search *n, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	n->out->outcome = CULPRIT_INFRA;
	free(n->out->infra_reason);
	n->out->infra_reason = strbuf_detach(&sb, NULL);
}

/* The entry of what the clean tree of `commit` said; NULL: not probed clean. */
static struct seen *seen_of(struct culprit_search *n, const git_oid *commit)
{
	git_commit *c = NULL;
	struct seen *e = NULL;
	size_t i;

	if (git_commit_lookup(&c, n->repo, commit) < 0)
		return NULL;
	for (i = 0; i < n->seen_nr && !e; i++)
		if (git_oid_equal(&n->seen[i].tree, git_commit_tree_id(c)))
			e = &n->seen[i];
	git_commit_free(c);
	return e;
}

/* The first clean tree of the search that both passed and failed; NULL: none. */
static struct seen *flipped(struct culprit_search *n)
{
	size_t i;

	for (i = 0; i < n->seen_nr; i++)
		if (n->seen[i].passes && n->seen[i].fails)
			return &n->seen[i];
	return NULL;
}

static int flaky_outcome(struct culprit_search *n, struct seen *e);

/*
 * next's tip did not fail in the search's first probe of it: it is probed again
 * in a clean tree, `confirm` times.  Never failing there, the failure the night
 * saw is "not reproduced in a clean tree"; passing and failing, the tip is flaky;
 * failing every time (the first probe ran in a kept tree), the search goes on in
 * clean trees.  Returns 1 to go on, 0 when the outcome is settled, < 0 on failure.
 */
static int tip_again(struct culprit_search *n)
{
	unsigned times = n->o->confirm ? n->o->confirm : 1, i;
	struct probe_result r;
	struct seen *e;
	unsigned runs;
	int err;

	for (i = 0; i < times; i++) {
		if ((err = probe(&r, n, &n->tip_id, &n->confirm, "next")) < 0)
			return err;
		n->out->confirm_runs++;
		if (r.verdict == PROBE_INFRA) {
			infra_outcome(n, "the bad end (%.12s) could not be tested again: %s",
				      n->tip, r.infra_reason);
			probe_result_release(&r);
			return 0;
		}
		probe_result_release(&r);
	}
	e = seen_of(n, &n->tip_id);
	if (!e || !e->fails) {
		runs = e ? e->passes : 0;
		n->out->outcome = CULPRIT_NOT_REPRODUCED;
		strvec_pushf(&n->out->log, "# next (%.12s) did not fail in %u run(s) in a clean "
					   "tree: the failure was not reproduced", n->tip, runs);
		return 0;
	}
	if (e->passes)
		return flaky_outcome(n, e);
	/* a kept tree passed where clean ones fail: its outputs are not to be trusted */
	n->kept_trees = 0;
	n->spec.pristine = 1;
	return 1;
}

/*
 * Bounds before blame: the base must pass and next's tip fail.  Returns 1 when the
 * search may go on, 0 when the outcome is settled (infra, flaky, not reproduced),
 * < 0 on failure.
 */
static int bounds(struct culprit_search *n)
{
	struct probe_result r;
	int err, go_on = 1;

	if ((err = probe(&r, n, &n->base_id, &n->spec, "base")) < 0)
		return err;
	if (r.verdict == PROBE_INFRA) {
		infra_outcome(n, "the good end (%.12s) could not be tested: %s", n->base,
				r.infra_reason);
		go_on = 0;
	} else if (r.verdict != PROBE_GOOD) {
		int missing = r.exit_code == 126 || r.exit_code == 127;

		if (r.limit)
			/* a limit hit at the good end is the limit's, never a patch's */
			infra_outcome(n, "the good end (%.12s) fails too: %s %s", n->base,
					r.cmd_index >= 0 ? n->cmds[r.cmd_index].name : "?",
					r.limit);
		else
			infra_outcome(n, "the good end (%.12s) fails too: %s exit %d%s", n->base,
					r.cmd_index >= 0 ? n->cmds[r.cmd_index].name : "?",
					r.exit_code, missing ? " (a missing tool?)" : "");
		go_on = 0;
	}
	probe_result_release(&r);
	if (!go_on)
		return 0;
	if ((err = probe(&r, n, &n->tip_id, &n->spec, "next")) < 0)
		return err;
	if (r.verdict == PROBE_INFRA) {
		infra_outcome(n, "the bad end (%.12s) could not be tested: %s", n->tip,
				r.infra_reason);
		go_on = 0;
	} else if (r.verdict != PROBE_BAD) {
		go_on = -2;
	}
	probe_result_release(&r);
	return go_on == -2 ? tip_again(n) : go_on;
}

/* The end (exclusive) of the unit starting at step i: the non-merge steps after it. */
static size_t unit_end(const struct culprit_opts *o, size_t i)
{
	for (i++; i < o->steps_nr && !o->steps[i].is_merge; i++)
		;
	return i;
}

/*
 * The night's units before step `end` as candidates, each by its last step's `after`;
 * index[] gets each candidate's first step.
 */
static void units(struct cands *cs, const struct culprit_opts *o, size_t end, size_t *index)
{
	const git_oid *prev = &cs->n->ids[0].before, *after;
	size_t i, e;

	for (i = 0; i < end; i = e) {
		e = unit_end(o, i);
		after = &cs->n->ids[e - 1].after;
		if (git_oid_equal(after, prev))
			continue;       /* nothing committed by this unit */
		index[cs->nr] = i;
		cands_add(cs, after);
		prev = after;
	}
}

/* The reverts of the unit starting at merge step k go with the tree's probes. */
static void unit_reverts(const struct culprit_step **v, size_t *nr,
			   const struct culprit_opts *o, size_t k)
{
	*v = &o->steps[k + 1];
	*nr = unit_end(o, k) - k - 1;
}

/* Which unit of the night broke next; 1 with the outcome settled, 0 with *step. */
static int which_merge(struct culprit_search *n, size_t *step)
{
	const struct culprit_opts *o = n->o;
	struct cands cs = { .n = n, .tree = "next" };
	size_t *index = xcalloc(o->steps_nr + 1, sizeof(*index)), k = 0;
	int err;

	units(&cs, o, o->steps_nr, index);
	err = cs.nr ? bisect_cands(&cs, n->base, "which merge: next's first-parent chain", &k)
		    : nb_error_set(NB_EINVALID, "bisect: tonight's steps committed nothing");
	if (err == 0) {
		*step = index[k];
		unit_merge_bad(n, &cs, k, index[k]);
	}
	else if (err == 1)
		n->out->outcome = CULPRIT_SKIPPED;
	cands_release(&cs);
	free(index);
	return err;
}

/* The culprit as found: the tree's commit, its probe, and the probe before it. */
struct found {
	git_oid commit, probe, parent_probe;
};

static int take(struct found *f, struct cands *cs, size_t j, const git_oid *good_end)
{
	int err;

	if ((err = cand_ready(cs, &cs->v[j])) < 0 ||
	    (j && (err = cand_ready(cs, &cs->v[j - 1])) < 0))
		return err;
	if (cs->v[j].ready < 0)
		return nb_error_set(NB_ERROR, "bisect: the bad end %.12s does not merge",
				    cs->v[j].id);
	f->commit = cs->v[j].commit;
	f->probe = cs->v[j].probe;
	/* without the partner search's culprit: the base of a descent into a merge */
	f->parent_probe = j ? cs->v[j - 1].first : *good_end;
	return 0;
}

/* 1 when the candidates' last probe fails as a bad end must, 0 when it passes. */
static int bad_end_fails(struct culprit_search *n, struct cands *cs)
{
	struct cand *last = &cs->v[cs->nr - 1];
	struct probe_result r;
	int err;

	if ((err = cand_ready(cs, last)) < 0)
		return err;
	if (last->ready < 0)
		return 0;
	if ((err = probe(&r, n, &last->probe, &n->spec, cs->tree)) < 0)
		return err;
	if (r.verdict == PROBE_INFRA)
		note_infra(n, "a bad end could not be tested", &r);
	err = r.verdict == PROBE_BAD;
	probe_result_release(&r);
	return n->infra ? nb_error_set(NB_ERROR, "%s", n->out->infra_reason) : err;
}

/*
 * A merge commit found bad: bisect its second-parent side on top of its first
 * parent.  `with` (may be NULL) gives the probes' `extra`, as the partner search's.
 */
static int descend(struct culprit_search *n, size_t k, struct found *f, const struct cands *with)
{
	const struct culprit_step *st = &n->o->steps[k];
	git_commit *c = NULL;
	git_oid hide[2];
	size_t j = 0;
	int err = 0;

	while (err == 0) {
		struct cands cs = { .n = n, .tree = st->tree, .has_base = 1,
				    .has_revert_hide = 1 };
		char title[128];

		if (git_commit_lookup(&c, n->repo, &f->commit) < 0)
			return merge_git_fail("bisect: reading the culprit");
		if (git_commit_parentcount(c) < 2) {
			git_commit_free(c);
			return 0;
		}
		hide[0] = *git_commit_parent_id(c, 0);
		hide[1] = n->ids[k].before;
		cs.base = f->parent_probe;
		if (with) {
			cs.has_extra = with->has_extra;
			cs.extra = with->extra;
			cs.extra_reverts = with->extra_reverts;
			cs.extra_reverts_nr = with->extra_reverts_nr;
		}
		/* the parent probe carries the reverts of what its first parent holds */
		cs.revert_hide = hide[0];
		unit_reverts(&cs.reverts, &cs.reverts_nr, n->o, k);
		err = first_parent_chain(&cs, n, git_commit_parent_id(c, 1), hide, 2);
		git_commit_free(c);
		snprintf(title, sizeof(title), "which patch in the side branch of %.12s",
			 git_oid_tostr_s(&f->commit));
		/* a side that passes in full leaves the merge itself as the culprit */
		if (err >= 0 && cs.nr && (err = bad_end_fails(n, &cs)) == 1)
			err = bisect_cands(&cs, git_oid_tostr_s(&cs.base), title, &j);
		else if (err >= 0)
			err = 2;
		if (err == 0)
			err = take(f, &cs, j, &cs.base);
		cands_release(&cs);
	}
	return err == 2 ? 0 : err;
}

/* Which commit of step k's tree; 0 found, 1 only skips left, < 0 failure. */
static int which_patch(struct culprit_search *n, size_t k, struct found *f)
{
	const struct culprit_step *st = &n->o->steps[k];
	struct cands cs = { .n = n, .tree = st->tree, .has_base = 1 };
	git_oid merged;
	char title[256];
	size_t j;
	int err;

	unit_reverts(&cs.reverts, &cs.reverts_nr, n->o, k);
	cs.base = n->ids[k].before;
	merged = n->ids[k].merged;
	snprintf(title, sizeof(title), "which patch in %s", st->tree);
	if ((err = first_parent_chain(&cs, n, &merged, &cs.base, 1)) < 0)
		goto done;
	if (!cs.nr) {
		err = nb_error_set(NB_ERROR, "bisect: %s brought no new commits", st->tree);
		goto done;
	}
	if ((err = bisect_cands(&cs, st->before.hex, title, &j)) == 0 &&
	    (err = take(f, &cs, j, &cs.base)) == 0)
		err = descend(n, k, f, NULL);
done:
	cands_release(&cs);
	return err;
}

/*
 * Semantic conflict: when the culprit passes on the base alone, the earlier merge
 * it needs, then the patch in that tree, each probe carrying the culprit.
 */
static int partner(struct culprit_search *n, size_t k, const struct found *f)
{
	const struct culprit_opts *o = n->o;
	struct cands cs = { .n = n, .tree = "next", .has_extra = 1, .extra = f->commit };
	struct cands ts = { .n = n, .has_extra = 1, .extra = f->commit, .has_base = 1 };
	struct cands alone = { .n = n, .tree = "base", .has_base = 1 };
	size_t *index = xcalloc(k + 1, sizeof(*index)), s, l;
	struct found pf;
	struct probe_result r;
	git_oid merged;
	char title[256];
	int err = 0;

	/* the culprit on the base alone, with the night's reverts of what it holds */
	alone.base = n->base_id;
	unit_reverts(&alone.reverts, &alone.reverts_nr, o, k);
	cands_add(&alone, &f->commit);
	if (k == 0 || (err = cand_ready(&alone, &alone.v[0])) < 0 || alone.v[0].ready < 0)
		goto done;
	if ((err = probe(&r, n, &alone.v[0].probe, &n->spec, "base")) < 0)
		goto done;
	err = r.verdict == PROBE_GOOD ? 0 : 1;
	probe_result_release(&r);
	if (err)
		goto done;      /* it breaks on its own: no partner */
	cs.extra_reverts = ts.extra_reverts = alone.reverts;
	cs.extra_reverts_nr = ts.extra_reverts_nr = alone.reverts_nr;
	units(&cs, o, k, index);
	if (!cs.nr || (err = bisect_cands(&cs, n->base, "semantic partner: which earlier merge",
					    &s)) != 0)
		goto done;
	unit_merge_bad(n, &cs, s, index[s]);
	s = index[s];
	if (!o->steps[s].is_merge)
		goto done;
	ts.tree = o->steps[s].tree;
	unit_reverts(&ts.reverts, &ts.reverts_nr, o, s);
	ts.base = n->ids[s].before;
	merged = n->ids[s].merged;
	snprintf(title, sizeof(title), "semantic partner: which patch in %s", ts.tree);
	if ((err = first_parent_chain(&ts, n, &merged, &ts.base, 1)) < 0 || !ts.nr)
		goto done;
	if ((err = bisect_cands(&ts, o->steps[s].before.hex, title, &l)) != 0 ||
	    (err = take(&pf, &ts, l, &ts.base)) != 0 || (err = descend(n, s, &pf, &ts)) != 0)
		goto done;
	n->out->partner_tree = xstrdup(ts.tree);
	merge_oid_from_git(&n->out->partner_commit, &pf.commit);
done:
	cands_release(&cs);
	cands_release(&ts);
	cands_release(&alone);
	free(index);
	return err < 0 ? err : 0;
}

/* next's tip with the culprit reverted, as a commit; 1 when the revert conflicts. */
static int revert_commit(git_oid *out, struct culprit_search *n, const git_oid *culprit)
{
	git_commit *c = NULL, *parent = NULL, *tip = NULL;
	git_tree *tree = NULL;
	git_oid tree_id;
	int err;

	if (git_commit_lookup(&c, n->repo, culprit) < 0 || git_commit_parent(&parent, c, 0) < 0 ||
	    git_commit_lookup(&tip, n->repo, &n->tip_id) < 0) {
		err = merge_git_fail("bisect: reading the commits of the revert");
		goto done;
	}
	err = treemerge_trees(&tree_id, NULL, n->repo, git_commit_tree_id(c),
			      git_commit_tree_id(tip), git_commit_tree_id(parent));
	if (err == NB_ECONFLICT) {
		err = 1;
		goto done;
	}
	if (err < 0)
		goto done;
	if (git_tree_lookup(&tree, n->repo, &tree_id) < 0 ||
	    git_commit_create(out, n->repo, NULL, n->sig, n->sig, NULL, "nextbot revert probe\n",
			      tree, 1, (const git_commit **)&tip) < 0)
		err = merge_git_fail("bisect: writing the revert probe");
done:
	git_tree_free(tree);
	git_commit_free(c);
	git_commit_free(parent);
	git_commit_free(tip);
	return err;
}

/*
 * A run a limit ended failed by that limit: it is the first error (the output
 * before it varies from run to run), and the excerpt ends with it.
 */
static void name_limit(struct strbuf *ex, struct strbuf *first, const char *limit)
{
	if (!limit)
		return;
	strbuf_reset(first);
	strbuf_addf(first, "nextbot: %s", limit);
	if (!strstr(ex->buf, first->buf))
		strbuf_addf(ex, "%s\n", first->buf);
}

/* The first error line of a failed run, normalised. */
static void first_error(struct strbuf *out, struct culprit_search *n, const struct probe_result *r)
{
	struct strbuf ex = STRBUF_INIT, first = STRBUF_INIT;

	excerpt_extract(&ex, &first, r->output.buf, r->output.len,
			worker_tree_path(n->s.workers[0]));
	name_limit(&ex, &first, r->limit);
	excerpt_normalise(out, first.buf);
	strbuf_release(&ex);
	strbuf_release(&first);
}

/*
 * Next with the culprit reverted, once: it passes, or it fails with another first
 * error line than the culprit's `failure` (another breakage of the night, left for
 * the next search) — either counts in revert_passes.
 */
static int revert_passes(struct culprit_search *n, const git_oid *revert,
			   const struct probe_result *failure)
{
	struct strbuf mine = STRBUF_INIT, theirs = STRBUF_INIT;
	struct probe_result r;
	int err;

	if ((err = probe(&r, n, revert, &n->confirm, "next")) < 0)
		return err;
	n->out->confirm_runs++;
	if (r.verdict == PROBE_INFRA)
		note_infra(n, "a confirmation run could not be judged", &r);
	else if (r.verdict == PROBE_GOOD)
		n->out->verdict.revert_passes++;
	else if (r.verdict == PROBE_BAD && failure->verdict == PROBE_BAD &&
		 r.cmd_index == failure->cmd_index) {
		first_error(&mine, n, failure);
		first_error(&theirs, n, &r);
		if (strcmp(mine.buf, theirs.buf)) {
			n->out->verdict.revert_passes++;
			strvec_pushf(&n->out->log, "# revert: the remaining failure is a different "
						   "one: %s", theirs.buf);
		}
	}
	strbuf_release(&mine);
	strbuf_release(&theirs);
	probe_result_release(&r);
	return 0;
}

/* The tree of `commit` as hex; -1 when it cannot be read. */
static int tree_hex(char out[NB_OID_HEXSZ + 1], struct culprit_search *n, const git_oid *commit)
{
	git_commit *c = NULL;

	if (git_commit_lookup(&c, n->repo, commit) < 0)
		return merge_git_fail("bisect: reading the probe %s", git_oid_tostr_s(commit));
	git_oid_tostr(out, NB_OID_HEXSZ + 1, git_commit_tree_id(c));
	git_commit_free(c);
	return 0;
}

/* The facts' keys: the culprit's and its parent's trees, and next reverted's. */
static int fact_keys(struct culprit_search *n, const struct found *f, const git_oid *revert,
		     unsigned times, char pair[SHA1_HEXSZ + 1], char rev[SHA1_HEXSZ + 1])
{
	char culprit[NB_OID_HEXSZ + 1], parent[NB_OID_HEXSZ + 1], reverted[NB_OID_HEXSZ + 1];
	char *what;
	int err;

	if ((err = tree_hex(culprit, n, &f->probe)) < 0 ||
	    (err = tree_hex(parent, n, &f->parent_probe)) < 0)
		return err;
	what = xstrfmt("culprit %s parent %s confirmed %u", culprit, parent, times);
	probe_fact_key(pair, what, &n->spec);
	free(what);
	*rev = '\0';
	if (!revert)
		return 0;
	if ((err = tree_hex(reverted, n, revert)) < 0)
		return err;
	what = xstrfmt("revert %s of %s", reverted, pair);
	probe_fact_key(rev, what, &n->spec);
	free(what);
	return 0;
}

/*
 * The confirmation runs of one commit, each's result and its first error,
 * normalised ("" for a run that passed).
 */
struct confirm_runs {
	struct probe_result *v;
	struct strvec errors;
	size_t nr, alloc;
};

static void confirm_runs_release(struct confirm_runs *cr)
{
	while (cr->nr)
		probe_result_release(&cr->v[--cr->nr]);
	free(cr->v);
	strvec_clear(&cr->errors);
}

/* One more run of `commit`, pristine and uncached; 1 when it could not be judged. */
static int confirm_run(struct confirm_runs *cr, struct culprit_search *n, const git_oid *commit,
		       const char *tree)
{
	struct probe_result r;
	struct strbuf err = STRBUF_INIT;
	int ret;

	if ((ret = probe(&r, n, commit, &n->confirm, tree)) < 0)
		return ret;
	n->out->confirm_runs++;
	if (r.verdict == PROBE_INFRA) {
		note_infra(n, "a confirmation run could not be judged", &r);
		probe_result_release(&r);
		return 1;
	}
	if (r.verdict != PROBE_GOOD)
		first_error(&err, n, &r);
	ALLOC_GROW(cr->v, cr->nr + 1, cr->alloc);
	cr->v[cr->nr++] = r;
	strvec_push_nodup(&cr->errors, strbuf_detach(&err, NULL));
	return 0;
}

/* Runs that failed with `error`; NULL: runs that passed (a skip is neither). */
static unsigned confirm_count(const struct confirm_runs *cr, const char *error)
{
	unsigned count = 0;
	size_t i;

	for (i = 0; i < cr->nr; i++)
		count += error ? cr->v[i].verdict == PROBE_BAD && !strcmp(cr->errors.v[i], error)
			       : cr->v[i].verdict == PROBE_GOOD;
	return count;
}

/*
 * The culprit's own failure: the first error its runs fail with most often that
 * no run of its parent fails with.  Another breakage or a flaky test that next
 * already held fails both alike, or masks the culprit's in some runs; it is not
 * the culprit's.  NULL: none.
 */
static const char *culprit_error(const struct confirm_runs *culprit,
				 const struct confirm_runs *parent)
{
	const char *best = NULL;
	unsigned most = 0, k;
	size_t i;

	for (i = 0; i < culprit->nr; i++) {
		const char *e = culprit->errors.v[i];

		if (culprit->v[i].verdict != PROBE_BAD || confirm_count(parent, e))
			continue;
		if ((k = confirm_count(culprit, e)) > most) {
			most = k;
			best = e;
		}
	}
	return best;
}

/*
 * The culprit failing with its own error and its parent passing, `times` each.  A
 * run that fails otherwise (another breakage, a flaky test of an earlier tree that
 * masks it) neither confirms nor contradicts: it is run again, up to `times` more.
 * *contradicted: the culprit passed, or its parent failed with its error.
 */
static int confirm_runs_made(struct culprit_search *n, const struct found *f, const char *tree,
			     unsigned times, int *contradicted, struct probe_result *failure)
{
	struct confirm_runs c = { .errors = STRVEC_INIT }, p = { .errors = STRVEC_INIT };
	const char *own = NULL;
	unsigned i;
	int err = 0;

	for (i = 0; i < times && err == 0; i++)
		err = confirm_run(&c, n, &f->probe, tree);
	for (i = 0; i < times && err == 0; i++)
		err = confirm_run(&p, n, &f->parent_probe, tree);
	own = err ? NULL : culprit_error(&c, &p);
	while (err == 0 && own && confirm_count(&c, own) < times && !confirm_count(&c, NULL) &&
	       c.nr < 2 * times)
		err = confirm_run(&c, n, &f->probe, tree);
	while (err == 0 && own && confirm_count(&p, NULL) < times && !confirm_count(&p, own) &&
	       p.nr < 2 * times)
		err = confirm_run(&p, n, &f->parent_probe, tree);
	n->out->verdict.culprit_fails = own ? confirm_count(&c, own) : 0;
	n->out->verdict.parent_passes = confirm_count(&p, NULL);
	*contradicted = err == 0 && (!own || confirm_count(&c, NULL) || confirm_count(&p, own));
	for (i = 0; own && i < c.nr; i++)
		if (c.v[i].verdict == PROBE_BAD && !strcmp(c.errors.v[i], own)) {
			probe_result_release(failure);
			copy_failure(failure, &c.v[i]);
			break;
		}
	if (c.nr + p.nr > 2 * times)
		strvec_pushf(&n->out->log, "# confirmation: %zu culprit and %zu parent runs (a run "
					   "failing otherwise than the culprit is run again)",
			     c.nr, p.nr);
	confirm_runs_release(&c);
	confirm_runs_release(&p);
	return err < 0 ? err : 0;
}

/*
 * The culprit failing and its parent passing `times` each, pristine and uncached,
 * unless a night already confirmed that of these very trees and commands.
 */
static int confirm_pair(struct culprit_search *n, const struct found *f, const char *tree,
			unsigned times, const char *key, struct probe_result *failure,
			int *contradicted)
{
	struct culprit_result *out = n->out;
	char date[11];
	int err;

	*contradicted = 0;
	if (known_pair_get(n->o->cache_dir, key, failure, date)) {
		out->verdict.culprit_fails = out->verdict.parent_passes = times;
		out->known = 1;
		strvec_pushf(&out->log, "# confirmation: known since %s (culprit failed %u/%u, "
					"parent passed %u/%u), not run again",
			     date, times, times, times, times);
		return 0;
	}
	if ((err = confirm_runs_made(n, f, tree, times, contradicted, failure)) < 0)
		return err;
	if (!n->infra && out->verdict.culprit_fails == times &&
	    out->verdict.parent_passes == times &&
	    known_pair_put(n->o->cache_dir, key, failure, n->o->date ? n->o->date : "") < 0)
		log_warn("verdict cache: %s", nb_error_last());
	return 0;
}

/* Next with the culprit reverted: known, or run once and then known. */
static int confirm_revert(struct culprit_search *n, const git_oid *revert, const char *key,
			  const struct probe_result *failure)
{
	struct culprit_result *out = n->out;
	struct strbuf note = STRBUF_INIT;
	size_t log_nr = out->log.nr;
	int passes, err = 0;

	if (known_revert_get(n->o->cache_dir, key, &passes, &note)) {
		out->verdict.revert_passes += passes;
		if (note.len)
			strvec_push(&out->log, note.buf);
	} else if ((err = revert_passes(n, revert, failure)) >= 0 && !n->infra) {
		if (known_revert_put(n->o->cache_dir, key, out->verdict.revert_passes > 0,
				     out->log.nr > log_nr ? out->log.v[out->log.nr - 1] : NULL) < 0)
			log_warn("verdict cache: %s", nb_error_last());
	}
	strbuf_release(&note);
	return err;
}

static int confirm(struct culprit_search *n, const struct found *f, const char *tree,
		     struct probe_result *failure)
{
	unsigned times = n->o->confirm ? n->o->confirm : 1;
	struct culprit_result *out = n->out;
	char pair[SHA1_HEXSZ + 1], rev[SHA1_HEXSZ + 1];
	struct seen *e;
	git_oid revert;
	int err, conflicts, contradicted;

	if ((err = fact_keys(n, f, NULL, times, pair, rev)) < 0 ||
	    (err = confirm_pair(n, f, tree, times, pair, failure, &contradicted)) < 0)
		return err;
	if ((conflicts = revert_commit(&revert, n, &f->commit)) < 0)
		return conflicts;
	if (!conflicts && !n->infra &&
	    ((err = fact_keys(n, f, &revert, times, pair, rev)) < 0 ||
	     (err = confirm_revert(n, &revert, rev, failure)) < 0))
		return err;
	strvec_pushf(&out->log, "# confirmation: culprit failed %u/%u, parent passed %u/%u, "
				"revert passed %u/1",
		     out->verdict.culprit_fails, times, out->verdict.parent_passes, times,
		     out->verdict.revert_passes);
	if (n->infra) {
		out->outcome = CULPRIT_INFRA;
	} else if (contradicted) {
		/* the search and its confirmation disagree */
		if (n->kept_trees)
			return SEARCH_AGAIN;
		if ((e = seen_of(n, &f->probe)) && e->passes && e->fails)
			return flaky_outcome(n, e);
		if ((e = seen_of(n, &f->parent_probe)) && e->passes && e->fails)
			return flaky_outcome(n, e);
		if ((e = flipped(n)))
			return flaky_outcome(n, e);
		out->outcome = CULPRIT_UNCONFIRMED;
		strvec_push(&out->log, "# the search and its confirmation disagree, and no clean "
				       "tree both passed and failed: nobody is blamed");
	} else if (out->verdict.culprit_fails < times || out->verdict.parent_passes < times) {
		out->outcome = CULPRIT_UNCONFIRMED;
		strvec_push(&out->log, "# another failure masked the culprit's in too many runs: "
				       "nobody is blamed");
	} else if (!out->verdict.revert_passes) {
		out->outcome = CULPRIT_UNCONFIRMED;
	} else {
		out->outcome = CULPRIT_FOUND;
	}
	return 0;
}

/*
 * A search in kept trees moved blame past the merges before step k: next as it
 * stood before it passes in a clean tree too, or the search starts again in clean
 * trees (SEARCH_AGAIN).  The base was probed clean by the bounds.
 */
static int exonerated(struct culprit_search *n, size_t k)
{
	struct probe_result r;
	int err;

	if (!n->kept_trees || git_oid_equal(&n->ids[k].before, &n->base_id))
		return 0;
	if ((err = probe(&r, n, &n->ids[k].before, &n->confirm, "next")) < 0)
		return err;
	n->out->confirm_runs++;
	if (r.verdict == PROBE_INFRA)
		note_infra(n, "a confirmation run could not be judged", &r);
	else if (r.verdict != PROBE_GOOD)
		err = SEARCH_AGAIN;
	strvec_pushf(&n->out->log, "# next before the %s merge, clean: %s",
		     n->o->steps[k].tree ? n->o->steps[k].tree : "",
		     r.verdict == PROBE_GOOD ? "passed" : "did not pass");
	probe_result_release(&r);
	return n->infra ? nb_error_set(NB_ERROR, "%s", n->out->infra_reason) : err;
}

/* The culprit `commit` and its failure `fail`: what a flag and a report say. */
static void describe(struct culprit_search *n, const git_oid *commit,
		     const struct probe_result *fail)
{
	struct culprit_result *out = n->out;
	struct strbuf ex = STRBUF_INIT, first = STRBUF_INIT, fp = STRBUF_INIT, subj = STRBUF_INIT;
	const struct probe_command *cmd;
	git_commit *c = NULL;
	struct nb_patchid patch_id = NB_PATCHID_NONE;
	char pid_hex[NB_PATCHID_STRSZ];

	merge_oid_from_git(&out->commit, commit);
	if (git_commit_lookup(&c, n->repo, commit) == 0)
		merge_commit_subject(&subj, c);
	git_commit_free(c);
	free(out->subject);
	out->subject = strbuf_detach(&subj, NULL);
	cmd = fail->cmd_index >= 0 ? &n->cmds[fail->cmd_index] : &n->cmds[n->cmds_nr - 1];
	free(out->command);
	out->command = xstrdup(cmd->name ? cmd->name : "");
	out->exit_code = fail->exit_code;
	out->timed_out = fail->timed_out;
	excerpt_extract(&ex, &first, fail->output.buf, fail->output.len,
			worker_tree_path(n->s.workers[0]));
	name_limit(&ex, &first, fail->limit);
	if (merge_patch_id_oid(&patch_id, n->repo, commit) < 0 || nb_patchid_is_none(&patch_id))
		excerpt_fingerprint(&fp, out->commit.hex, out->command, first.buf);
	else
		excerpt_fingerprint(&fp, nb_patchid_tostr(pid_hex, &patch_id), out->command,
				    first.buf);
	excerpt_flag_id(out->flag_id, fp.buf);
	free(out->excerpt);
	free(out->first_error);
	free(out->fingerprint);
	out->excerpt = strbuf_detach(&ex, NULL);
	out->first_error = strbuf_detach(&first, NULL);
	out->fingerprint = strbuf_detach(&fp, NULL);
}

/* ---- a flaky command: which patch brought what fails ---- */

/* 1 when `path` names a blob or folder in the tree of `commit`. */
static int path_in(struct culprit_search *n, const git_oid *commit, const char *path)
{
	git_commit *c = NULL;
	git_tree *t = NULL;
	git_tree_entry *e = NULL;
	int found;

	found = git_commit_lookup(&c, n->repo, commit) == 0 && git_commit_tree(&t, c) == 0 &&
		git_tree_entry_bypath(&e, t, path) == 0;
	git_tree_entry_free(e);
	git_tree_free(t);
	git_commit_free(c);
	return found;
}

/*
 * The paths the first error line names that exist in the tree of `probe`
 * ("tests/test_mm.c:20: FAIL ..." names tests/test_mm.c), at most 8.
 */
static void error_paths(struct strvec *out, struct culprit_search *n, const git_oid *probe,
			const char *line)
{
	const char *p = line;

	while (*p && out->nr < 8) {
		size_t len = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				       "0123456789_./+-");
		char *word;

		if (!len) {
			p++;
			continue;
		}
		word = xstrndup(p, len);
		while (word[0] == '.' && word[1] == '/')
			memmove(word, word + 2, strlen(word + 2) + 1);
		if ((strchr(word, '/') || strchr(word, '.')) && *word && *word != '/' &&
		    !strvec_contains(out, word) && path_in(n, probe, word))
			strvec_push(out, word);
		free(word);
		p += len;
	}
}

/* 1 when commit `c` (not a merge) changes one of `paths`. */
static int touches(struct culprit_search *n, git_commit *c, const struct strvec *paths)
{
	git_commit *parent = NULL;
	git_tree *t = NULL, *pt = NULL;
	size_t i;
	int hit = 0;

	if (git_commit_parentcount(c) != 1 || git_commit_parent(&parent, c, 0) < 0 ||
	    git_commit_tree(&t, c) < 0 || git_commit_tree(&pt, parent) < 0)
		goto done;
	for (i = 0; i < paths->nr && !hit; i++) {
		git_tree_entry *a = NULL, *b = NULL;
		int ha = git_tree_entry_bypath(&a, t, paths->v[i]) == 0;
		int hb = git_tree_entry_bypath(&b, pt, paths->v[i]) == 0;

		hit = ha != hb ||
		      (ha && !git_oid_equal(git_tree_entry_id(a), git_tree_entry_id(b)));
		git_tree_entry_free(a);
		git_tree_entry_free(b);
	}
done:
	git_tree_free(t);
	git_tree_free(pt);
	git_commit_free(parent);
	return hit;
}

/*
 * The newest of tonight's commits (a tree's, not the night's own) that changed
 * one of `paths` and that `probe` holds: the patch that brought the flaky part.
 * 0 with *step and *commit, 1 when there is none.
 */
static int flaky_origin(size_t *step, git_oid *commit, struct culprit_search *n,
			const git_oid *probe, const struct strvec *paths)
{
	size_t i;
	int found = 1;

	for (i = n->o->steps_nr; i-- > 0 && found == 1;) {
		git_revwalk *walk = NULL;
		git_oid id;

		if (!n->o->steps[i].is_merge || !n->ids[i].has_merged ||
		    git_revwalk_new(&walk, n->repo) < 0)
			continue;
		git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL);
		if (git_revwalk_push(walk, &n->ids[i].merged) == 0 &&
		    git_revwalk_hide(walk, &n->ids[i].before) == 0)
			while (found == 1 && git_revwalk_next(&id, walk) == 0) {
				git_commit *c = NULL;

				if (git_commit_lookup(&c, n->repo, &id) == 0 &&
				    touches(n, c, paths) && contains(n, probe, &id)) {
					*step = i;
					*commit = id;
					found = 0;
				}
				git_commit_free(c);
			}
		git_revwalk_free(walk);
	}
	return found;
}

/*
 * The same clean tree passed and failed: flaky.  The flag goes to the tree whose
 * patch last changed a file the failure names (the test that fails), with what
 * is known; when no patch of tonight's did, nobody is named (an operator note).
 */
static int flaky_outcome(struct culprit_search *n, struct seen *e)
{
	struct culprit_result *out = n->out;
	struct strbuf ex = STRBUF_INIT, first = STRBUF_INIT;
	struct strvec paths = STRVEC_INIT;
	char tree[NB_OID_HEXSZ + 1], probe[NB_OID_HEXSZ + 1];
	git_oid origin;
	size_t step;

	out->outcome = CULPRIT_FLAKY;
	out->flaky_fails = e->fails;
	out->flaky_runs = e->passes + e->fails;
	git_oid_tostr(tree, sizeof(tree), &e->tree);
	git_oid_tostr(probe, sizeof(probe), &e->probe);
	strvec_pushf(&out->log, "# flaky: the clean tree %s (of %s) passed %u and failed %u "
				"time(s)", tree, probe, e->passes, e->fails);
	excerpt_extract(&ex, &first, e->failure.output.buf, e->failure.output.len,
			worker_tree_path(n->s.workers[0]));
	error_paths(&paths, n, &e->probe, first.buf);
	if (paths.nr && flaky_origin(&step, &origin, n, &e->probe, &paths) == 0) {
		free(out->tree);
		out->tree = xstrdup(n->o->steps[step].tree ? n->o->steps[step].tree : "");
		out->step = step;
		describe(n, &origin, &e->failure);
		strvec_pushf(&out->log, "# %s (%s) last changed %s", git_oid_tostr_s(&origin),
			     out->tree, paths.v[0]);
	} else {
		free(out->tree);
		out->tree = NULL;
		describe(n, &e->probe, &e->failure);
		memset(&out->commit, 0, sizeof(out->commit));
		strvec_pushf(&out->log, "# no patch of tonight's changed what the failure "
					"names%s%s",
			     paths.nr ? ": " : "", paths.nr ? paths.v[0] : "");
	}
	strbuf_release(&ex);
	strbuf_release(&first);
	strvec_clear(&paths);
	return 0;
}

static void commands(struct culprit_search *n)
{
	const struct culprit_opts *o = n->o;
	const struct culprit_command *list = o->failing_is_test ? o->tests : o->builds;
	size_t i, nr = 0;

	n->cmds = xcalloc(o->builds_nr + 2, sizeof(*n->cmds));
	/* a test needs the build: a build failing then is a skip, not a verdict */
	for (i = 0; o->failing_is_test && i < o->builds_nr; i++)
		n->cmds[nr++] = (struct probe_command){ .name = o->builds[i].name,
							.shell = o->builds[i].command,
							.env = o->builds[i].env,
							.timeout = o->builds[i].timeout,
							.skip_on_fail = 1,
							.incremental = o->builds[i].incremental };
	n->cmds[nr++] = (struct probe_command){ .name = list[o->failing].name,
						.shell = list[o->failing].command,
						.env = list[o->failing].env,
						.timeout = list[o->failing].timeout,
						.incremental = list[o->failing].incremental };
	n->cmds_nr = nr;
	/* every probe in a clean tree, unless every command it runs opted out */
	n->kept_trees = probe_commands_incremental(n->cmds, nr);
	n->spec = (struct probe_spec){ .cmds = n->cmds, .cmds_nr = nr, .date = o->date,
				       .runs_dir = o->runs_dir, .cache_dir = o->cache_dir,
				       .runner = o->runner, .user = o->user, .pristine_retry = 1,
				       .pristine = !n->kept_trees, .slurm = o->slurm,
				       .box = o->box, .limits = o->limits };
	n->confirm = n->spec;
	n->confirm.no_cache = n->confirm.pristine = 1;
}

/* The steps' ids as libgit2's, once: a bad id is an error here, not a zero id later. */
static int parse_steps(struct culprit_search *n)
{
	size_t i;
	int err;

	n->ids = xcalloc(n->o->steps_nr, sizeof(*n->ids));
	for (i = 0; i < n->o->steps_nr; i++) {
		const struct culprit_step *st = &n->o->steps[i];
		struct step_ids *ids = &n->ids[i];

		if ((err = merge_oid_to_git(&ids->before, &st->before)) < 0 ||
		    (err = merge_oid_to_git(&ids->after, &st->after)) < 0)
			return err;
		if ((ids->has_merged = !nb_oid_is_null(&st->merged)) &&
		    (err = merge_oid_to_git(&ids->merged, &st->merged)) < 0)
			return err;
		if ((ids->has_reverted = !nb_oid_is_null(&st->reverted)) &&
		    (err = merge_oid_to_git(&ids->reverted, &st->reverted)) < 0)
			return err;
	}
	return 0;
}

static int night_open(struct culprit_search *n, const struct culprit_opts *o,
			struct culprit_result *out)
{
	size_t list_nr = o->failing_is_test ? o->tests_nr : o->builds_nr;
	int err;

	n->o = o;
	n->out = out;
	if (!o->steps_nr || o->failing >= list_nr)
		return nb_error_set(NB_EINVALID, "bisect: no steps or no failing command");
	if ((err = parse_steps(n)) < 0)
		return err;
	snprintf(n->base, sizeof(n->base), "%s", o->steps[0].before.hex);
	snprintf(n->tip, sizeof(n->tip), "%s", o->steps[o->steps_nr - 1].after.hex);
	n->base_id = n->ids[0].before;
	n->tip_id = n->ids[o->steps_nr - 1].after;
	if (git_repository_open(&n->repo, o->repo_path) < 0)
		return merge_git_fail("bisect: %s", o->repo_path);
	/* the probes' merges write objects: libgit2 1.5.1 would map the graph again
	   for each of them (merge/git/commitgraph_int.h) */
	if ((err = commitgraph_detach(n->repo)) < 0)
		return err;
	if (git_signature_new(&n->sig, "nextbot", "nextbot@localhost", 0, 0) < 0)
		return merge_git_fail("bisect: signature");
	commands(n);
	n->wo = (struct worker_opts){ .exe = o->exe, .user = o->user, .box = o->box,
				      .stop = o->stop, .stop_data = o->stop_data };
	return session_open(&n->s, o->repo_path, o->workers_dir, o->jobs, &n->spec, &n->wo);
}

static void night_close(struct culprit_search *n)
{
	session_close(&n->s);
	git_signature_free(n->sig);
	git_repository_free(n->repo);
	free(n->cmds);
	free(n->ids);
	while (n->seen_nr)
		probe_result_release(&n->seen[--n->seen_nr].failure);
	free(n->seen);
	strvec_clear(&n->noise);
}

/* One search after the bounds passed: 0, SEARCH_AGAIN, or < 0 on failure. */
static int search_once(struct culprit_search *n)
{
	const struct culprit_opts *o = n->o;
	struct probe_result failure = PROBE_RESULT_INIT;
	struct found f;
	size_t k;
	int err;

	if ((err = which_merge(n, &k)) != 0)
		return err < 0 ? err : 0;
	n->out->step = k;
	n->out->tree = xstrdup(o->steps[k].tree ? o->steps[k].tree : "");
	if (!o->steps[k].is_merge) {
		infra_outcome(n, "step %zu (not a merge) broke next", k);
		return 0;
	}
	if ((err = which_patch(n, k, &f)) != 0) {
		if (err == 1)
			n->out->outcome = CULPRIT_SKIPPED;
		return err < 0 ? err : 0;
	}
	if ((err = partner(n, k, &f)) < 0 || (err = exonerated(n, k)) != 0)
		return err;
	err = confirm(n, &f, o->steps[k].tree, &failure);
	if (err == 0 && n->out->outcome != CULPRIT_FLAKY)
		describe(n, &f.commit, &failure);
	probe_result_release(&failure);
	return err;
}

/* What a search found is forgotten before it starts again. */
static void search_reset(struct culprit_search *n)
{
	struct culprit_result *out = n->out;

	free(out->tree);
	free(out->partner_tree);
	out->tree = out->partner_tree = NULL;
	memset(&out->partner_commit, 0, sizeof(out->partner_commit));
	memset(&out->verdict, 0, sizeof(out->verdict));
	strvec_clear(&out->candidates);
	out->known = 0;
	out->outcome = CULPRIT_INFRA;
}

/*
 * The search ended on a flaky command.  When the flaky error is another than one
 * next's tip still fails with (a flaky test of an earlier tree that masked the
 * failure the night saw), the error becomes noise (failures with it are run
 * again) and the search is made again for that failure.  1: search again; 0: the
 * flaky outcome stands; < 0 on failure.
 */
static int past_noise(struct culprit_search *n)
{
	unsigned times = n->o->confirm ? n->o->confirm : 1, i;
	struct strbuf e = STRBUF_INIT;
	struct probe_result r;
	int err = 0, other = 0;

	excerpt_normalise(&e, n->out->first_error ? n->out->first_error : "");
	if (!e.len || strvec_contains(&n->noise, e.buf)) {
		strbuf_release(&e);
		return 0;
	}
	strvec_push(&n->noise, e.buf);
	for (i = 0; i <= times && !other && err >= 0; i++) {
		if ((err = probe(&r, n, &n->tip_id, &n->confirm, "next")) < 0)
			break;
		n->out->confirm_runs++;
		other = r.verdict == PROBE_BAD && !is_noise(n, &r);
		probe_result_release(&r);
	}
	if (err >= 0 && other)
		strvec_pushf(&n->out->log, "# %s is flaky, and next fails otherwise too: its "
					   "failures are run again, and the search is made again",
			     e.buf);
	strbuf_release(&e);
	return err < 0 ? err : other;
}

/*
 * Runs the search after the bounds passed; returns < 0 on failure (infra when
 * n->infra).  A search in kept trees that its clean confirmation contradicts is
 * made again in clean trees, before anything is called flaky; a search misled by
 * a flaky command is made again past it, when next fails otherwise too.
 */
static int search(struct culprit_search *n)
{
	unsigned flaky_rounds = 0;
	int err;

	for (;;) {
		err = search_once(n);
		if (err == SEARCH_AGAIN) {
			strvec_push(&n->out->log, "# confirmation in clean trees contradicts the "
					"search in kept trees: searching again in clean trees");
			log_info("a search in kept trees was contradicted: searching again clean");
			n->kept_trees = 0;
			n->spec.pristine = 1;
		} else if (err == 0 && n->out->outcome == CULPRIT_FLAKY && flaky_rounds++ < 2) {
			if ((err = past_noise(n)) <= 0)
				return err;
		} else {
			return err;
		}
		search_reset(n);
	}
}

int culprit_find(struct culprit_result *out, const struct culprit_opts *o)
{
	struct culprit_search n;
	int err;

	memset(&n, 0, sizeof(n));
	out->outcome = CULPRIT_INFRA;
	if ((err = night_open(&n, o, out)) >= 0 && (err = bounds(&n)) == 1)
		err = search(&n);
	if (err < 0 && n.stopped) {
		out->outcome = CULPRIT_STOPPED;
		err = 0;
	} else if (err < 0 && n.infra) {
		/* a probe nobody can judge ends the search without blame */
		out->outcome = CULPRIT_INFRA;
		err = 0;
	}
	night_close(&n);
	metrics_add(METRIC_BISECTIONS, 1);
	metrics_add(METRIC_BISECT_PROBES, out->steps);
	metrics_add(METRIC_CONFIRM_RUNS, out->confirm_runs);
	metrics_add(METRIC_KNOWN_CONFIRMS, out->known);
	return err < 0 ? err : 0;
}
