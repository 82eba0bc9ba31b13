/* The night's merge sequence into next, its merge.log, and the Next/ files commit. */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <git2.h>

#include "merge/integrate/fixes_int.h"
#include "merge/git/repohandle_int.h"
#include "merge/git/git_int.h"
#include "merge/integrate/integrate.h"
#include "merge/git/treediff_int.h"
#include "merge/integrate/nightbase_int.h"
#include "merge/git/mergebase_int.h"
#include "merge/integrate/mergememo_int.h"
#include "merge/transport/transport.h"
#include "merge/repo/repo.h"
#include "merge/integrate/replay_int.h"
#include "merge/integrate/rerere_git_int.h"
#include "merge/git/treemerge_int.h"
#include "util/error.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/utf8.h"
#include "util/banned.h"

#define CONFLICT_COMMITS_MAX 20
#define CONFLICT_WALK_MAX 20000

struct integ_night {
	struct repo *repo;
	git_repository *git;
	char *date;
	git_signature *sig;
	char *base_name, *base_url, *base_branch;
	struct nb_oid base_tip;
	struct strvec never_merge;
	struct nb_oid head;
	struct integ_step *steps;
	size_t nr, alloc;
	struct strbuf log;
	char *workdir;          /* conflict memory on (integ_night_set_rerere()) */
	size_t rerere_resolved; /* files the last try_merge() resolved from memory */
	struct nightbase *bases; /* merge bases of next and a tip, without walking next */
	struct mergememo *memo; /* last night's clean merges (integ_night_set_memo()) */
	struct mbgraph *graph;  /* commits, for the conflicts' facts; made on first use */
	size_t memo_hits;
	git_odb *odb;
};

const char *integ_state_name(enum integ_state s)
{
	switch (s) {
	case INTEG_MERGED: return "merged";
	case INTEG_ALREADY: return "already";
	case INTEG_PREVIOUS: return "previous-version";
	case INTEG_LEFT_OUT: return "left-out";
	}
	return "?";
}

void integ_outcome_release(struct integ_outcome *o)
{
	size_t i;

	for (i = 0; i < o->conflicts_nr; i++) {
		free(o->conflicts[i].path);
		free(o->conflicts[i].kind);
		strvec_clear(&o->conflicts[i].next_commits);
		strvec_clear(&o->conflicts[i].tree_commits);
	}
	free(o->conflicts);
	free(o->reason);
	strvec_clear(&o->left_out_patches);
	free(o->resolve_dir);
	o->resolve_dir = NULL;
	o->rerere_resolved = 0;
	o->conflicts = NULL;
	o->conflicts_nr = 0;
	o->reason = NULL;
}

int integ_night_new(struct integ_night **out, struct repo *repo, const char *date,
		    const struct integ_tree *base, const char *merge_identity,
		    const char *const *never_merge)
{
	struct integ_night *n = xcalloc(1, sizeof(*n));
	char *ref = xstrfmt("refs/feeds/%s", base->name);
	git_oid tip;
	size_t i;
	int err;

	*out = NULL;
	n->repo = repo;
	n->git = repo_git(repo);
	n->date = xstrdup(date);
	n->base_name = xstrdup(base->name);
	n->base_url = xstrdup(base->url);
	n->base_branch = xstrdup(base->branch);
	n->never_merge = (struct strvec)STRVEC_INIT;
	strbuf_init(&n->log, 0);
	for (i = 0; never_merge && never_merge[i]; i++)
		strvec_push(&n->never_merge, never_merge[i]);
	if ((err = merge_signature(&n->sig, merge_identity, date)) < 0 ||
	    (err = repo_ref_get(repo, ref, &n->base_tip)) < 0) {
		if (err == NB_ENOTFOUND)
			nb_error_set(NB_ENOTFOUND, "base %s was never fetched", base->name);
		integ_night_free(n);
		free(ref);
		return err;
	}
	free(ref);
	n->head = n->base_tip;
	merge_oid_to_git(&tip, &n->base_tip);
	nightbase_new(&n->bases, n->git, &tip);
	strbuf_addstr(&n->log, "$ git checkout master\n");
	strbuf_addf(&n->log, "$ git reset --hard %s/%s\n", base->name, base->branch);
	*out = n;
	return 0;
}

static void step_release(struct integ_step *s)
{
	free(s->tree);
	free(s->branch);
	free(s->url);
	free(s->message);
}

void integ_night_free(struct integ_night *night)
{
	size_t i;

	if (!night)
		return;
	for (i = 0; i < night->nr; i++)
		step_release(&night->steps[i]);
	free(night->steps);
	git_signature_free(night->sig);
	free(night->date);
	free(night->base_name);
	free(night->base_url);
	free(night->base_branch);
	strvec_clear(&night->never_merge);
	strbuf_release(&night->log);
	free(night->workdir);
	if (night->bases) {
		struct nightbase_stats st;

		nightbase_stats_get(night->bases, &st);
		log_verbose("merge bases: %zu asked, %zu walks of next, %zu full walks, "
			    "%zu tips sharing commits with next", st.queries, st.rebuilds,
			    st.fallbacks, st.shared);
	}
	nightbase_free(night->bases);
	mbgraph_free(night->graph);
	mergememo_free(night->memo);
	git_odb_free(night->odb);
	free(night);
}

void integ_night_set_memo(struct integ_night *night, const char *path)
{
	mergememo_free(night->memo);
	night->memo = NULL;
	if (!path)
		return;
	if (!night->odb && git_repository_odb(&night->odb, night->git) < 0) {
		log_warn("merge memo off: %s", merge_git_error());
		return;
	}
	night->memo = mergememo_load(path);
}

int integ_night_memo_save(struct integ_night *night)
{
	if (!night->memo)
		return 0;
	log_verbose("merge memo: %zu of tonight's merges were known", night->memo_hits);
	return mergememo_save(night->memo);
}

void integ_night_set_rerere(struct integ_night *night, const char *workdir)
{
	free(night->workdir);
	night->workdir = workdir ? xstrdup(workdir) : NULL;
}

const struct nb_oid *integ_night_head(const struct integ_night *night)
{
	return &night->head;
}

size_t integ_night_steps_nr(const struct integ_night *night)
{
	return night->nr;
}

const struct integ_step *integ_night_step(const struct integ_night *night, size_t i)
{
	return i < night->nr ? &night->steps[i] : NULL;
}

const char *integ_night_log(const struct integ_night *night)
{
	return night->log.buf;
}

static struct integ_step *step_add(struct integ_night *n, enum integ_step_kind kind,
				     const char *tree)
{
	struct integ_step *s;

	ALLOC_GROW(n->steps, n->nr + 1, n->alloc);
	s = &n->steps[n->nr++];
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->tree = xstrdup(tree ? tree : "");
	s->branch = xstrdup("");
	s->url = xstrdup("");
	s->state = INTEG_LEFT_OUT;
	s->before = n->head;
	s->after = n->head;
	return s;
}

void integ_night_left_out(struct integ_night *night, const char *tree, const char *reason)
{
	strbuf_addf(&night->log, "# %s: left out: %s\n", tree, reason);
}

/* A diffstat of old..new into `out`, as `git merge` prints it. */
static void diffstat(struct strbuf *out, git_repository *git, const git_oid *old_tree,
		       const git_oid *new_tree)
{
	git_tree *a = NULL, *b = NULL;
	git_diff *diff = NULL;
	git_diff_stats *stats = NULL;
	git_buf buf = GIT_BUF_INIT;
	git_diff_stats_format_t fmt = GIT_DIFF_STATS_FULL | GIT_DIFF_STATS_INCLUDE_SUMMARY;

	if (git_tree_lookup(&a, git, old_tree) < 0 ||
	    git_tree_lookup(&b, git, new_tree) < 0 ||
	    treediff_new(&diff, git, a, b, NULL) < 0)
		goto done;
	if (git_diff_num_deltas(diff) > 1000)
		fmt = GIT_DIFF_STATS_SHORT;
	if (git_diff_get_stats(&stats, diff) == 0 &&
	    git_diff_stats_to_buf(&buf, stats, fmt, 80) == 0)
		strbuf_add(out, buf.ptr, buf.size);
done:
	git_buf_dispose(&buf);
	git_diff_stats_free(stats);
	git_diff_free(diff);
	git_tree_free(a);
	git_tree_free(b);
}

/* The conflicted paths' commits on one side: who touched which path. */
struct touch_walk {
	git_repository *git;
	const char *const *paths;
	size_t nr, full;
	struct strvec **out;
	char *touched;
};

static int touch_one(const git_oid *commit, const git_oid *tree, const git_oid *parent_tree,
		     void *data)
{
	struct touch_walk *w = data;
	char hex[NB_OID_HEXSZ + 1];
	size_t i;

	if (!parent_tree)
		return 0;       /* a merge: its changes are its parents' */
	if (treediff_paths_touched(w->touched, w->git, parent_tree, tree, w->paths, w->nr) < 0)
		return 1;
	for (i = 0; i < w->nr; i++) {
		if (!w->touched[i] || w->out[i]->nr >= CONFLICT_COMMITS_MAX)
			continue;
		strvec_push(w->out[i], git_oid_tostr(hex, sizeof(hex), commit));
		if (w->out[i]->nr == CONFLICT_COMMITS_MAX)
			w->full++;
	}
	return w->full == w->nr;
}

/* A merge that changed none of the paths from a parent: only that parent matters. */
static int touch_follow(const git_oid *tree, const git_oid *const *parent_trees, unsigned int n,
			void *data)
{
	struct touch_walk *w = data;
	unsigned int p;
	size_t i;

	for (p = 0; p < n; p++) {
		if (treediff_paths_touched(w->touched, w->git, parent_trees[p], tree, w->paths,
					   w->nr) < 0)
			return -1;
		for (i = 0; i < w->nr && !w->touched[i]; i++)
			;
		if (i == w->nr)
			return (int)p;
	}
	return -1;
}

/*
 * For every conflicted path, the non-merge commits from `from` (newest first, at most
 * CONFLICT_COMMITS_MAX) not in the merge bases' history that touch it: one walk of
 * the side, reading the commit-graph, each commit's trees only along the paths, and
 * past a merge that left the paths as one parent had them only that parent's side
 * (git log's history simplification: next's topics that did not touch them are
 * not walked).
 */
static void commits_touching(struct integ_night *n, struct strvec **out, const char *const *paths,
			     size_t nr, const git_oid *from, const git_oid *bases, size_t bases_nr)
{
	struct touch_walk w = { n->git, paths, nr, 0, out, xcalloc(nr + 1, 1) };
	struct mb_commit **hide = xcalloc(bases_nr + 1, sizeof(*hide)), *tip;
	size_t i;

	if (!n->graph)
		n->graph = mbgraph_new(n->git);
	for (i = 0; i < bases_nr; i++)
		if (mbgraph_lookup(&hide[i], n->graph, &bases[i]) < 0)
			goto done;
	if (mbgraph_lookup(&tip, n->graph, from) < 0 ||
	    mbgraph_walk_range(n->graph, tip, hide, bases_nr, CONFLICT_WALK_MAX,
			       &(const struct mb_walk_visitor){ touch_one, touch_follow, &w }) < 0)
		log_verbose("conflict facts incomplete: %s", nb_error_last());
done:
	free(w.touched);
	free(hide);
}

static void record_conflicts(struct integ_night *n, struct integ_outcome *out,
			       const struct treemerge_conflicts *c, const git_oid *next,
			       const git_oid *theirs)
{
	const git_oid *bases;
	git_oid *mb = NULL;
	size_t i, k = 0, bases_nr = 0;
	struct strvec **next_out = xcalloc(c->nr + 1, sizeof(*next_out));
	struct strvec **tree_out = xcalloc(c->nr + 1, sizeof(*tree_out));
	const char **paths = xcalloc(c->nr + 1, sizeof(*paths));

	if (nightbase_get(&bases, &bases_nr, n->bases, next, theirs) == 0 && bases_nr) {
		mb = xmalloc(bases_nr * sizeof(*mb));
		memcpy(mb, bases, bases_nr * sizeof(*mb));
	}
	out->conflicts = xcalloc(c->nr ? c->nr : 1, sizeof(*out->conflicts));
	out->conflicts_nr = c->nr;
	for (i = 0; i < c->nr; i++) {
		struct integ_conflict *ic = &out->conflicts[i];

		ic->path = xstrdup(c->items[i].path);
		ic->kind = xstrdup(c->items[i].kind);
		ic->next_commits = (struct strvec)STRVEC_INIT;
		ic->tree_commits = (struct strvec)STRVEC_INIT;
		if (c->items[i].pathless)
			continue;
		paths[k] = ic->path;
		next_out[k] = &ic->next_commits;
		tree_out[k++] = &ic->tree_commits;
	}
	if (mb && k) {
		commits_touching(n, next_out, paths, k, next, mb, bases_nr);
		commits_touching(n, tree_out, paths, k, theirs, mb, bases_nr);
	}
	free(mb);
	free(paths);
	free(next_out);
	free(tree_out);
}

/* Writes the --no-ff merge commit of `theirs` with `tree` and moves the head. */
static int commit_merge(struct integ_night *n, const struct integ_tree *t,
			  const git_oid *theirs, const git_oid *tree_id, int resolved,
			  const char *stat)
{
	git_commit *parents[2] = { NULL, NULL };
	git_tree *tree = NULL;
	git_oid head, id;
	char *msg = xstrfmt("Merge branch '%s' of %s\n", t->branch, t->url);
	int err = 0;

	merge_oid_to_git(&head, &n->head);
	if (git_commit_lookup(&parents[0], n->git, &head) < 0 ||
	    git_commit_lookup(&parents[1], n->git, theirs) < 0 ||
	    git_tree_lookup(&tree, n->git, tree_id) < 0 ||
	    git_commit_create(&id, n->git, NULL, n->sig, n->sig, NULL, msg, tree, 2,
			      (const git_commit **)parents) < 0) {
		err = merge_git_fail("merge commit");
		goto done;
	}
	if (resolved)
		strbuf_addf(&n->log, "$ git commit --no-edit -v -a\n[master %.7s] %s"
			    "$ git diff -M --stat --summary HEAD^..\n", git_oid_tostr_s(&id), msg);
	else
		strbuf_addstr(&n->log, "Merge made by the 'ort' strategy.\n");
	if (stat)
		strbuf_addstr(&n->log, stat);
	else
		diffstat(&n->log, n->git, git_commit_tree_id(parents[0]), tree_id);
	merge_oid_from_git(&n->head, &id);
done:
	git_tree_free(tree);
	git_commit_free(parents[0]);
	git_commit_free(parents[1]);
	free(msg);
	return err;
}

static void log_merging(struct integ_night *n, const struct integ_tree *t,
			const struct nb_oid *commit, const char *what)
{
	char *subject = repo_commit_subject(n->repo, commit);

	strbuf_addf(&n->log, "Merging %s/%s (%.12s %s)\n", t->name, t->branch, commit->hex,
		    subject);
	strbuf_addf(&n->log, "$ git merge --no-ff -m Merge branch '%s' of %s %s\n", t->branch,
		    t->url, what);
	free(subject);
}

static char *theirs_label(const struct integ_tree *t)
{
	return xstrfmt("%s/%s", t->name, t->branch);
}


/*
 * Conflict memory: 0 with the merged tree when every conflicting file is resolved
 * from recorded resolutions (merge.log says so per file), else NB_ECONFLICT.
 */
static int rerere_try(struct integ_night *n, git_oid *tree,
			const struct treemerge_conflicts *c)
{
	struct rerere_git_conflict rc = RERERE_GIT_CONFLICT_INIT;
	char *rdir = rerere_dir(n->workdir);
	size_t *matched = NULL, *total = NULL, i;
	int err;

	n->rerere_resolved = 0;
	if ((err = rerere_git_conflict(&rc, n->git, c)) < 0)
		goto done;
	matched = xcalloc(rc.nr + 1, sizeof(*matched));
	total = xcalloc(rc.nr + 1, sizeof(*total));
	err = rerere_git_resolve(tree, matched, total, n->git, &rc, rdir);
	for (i = 0; i < rc.nr; i++) {
		if (!err)
			strbuf_addf(&n->log, "Resolved '%s' using previous resolution.\n",
				    rc.files[i].path);
		else if (matched[i])
			strbuf_addf(&n->log, "# %s: %zu of %zu conflict hunks have a recorded "
				    "resolution\n", rc.files[i].path, matched[i], total[i]);
	}
	if (!err)
		n->rerere_resolved = rc.nr;
done:
	rerere_git_conflict_release(&rc);
	free(matched);
	free(total);
	free(rdir);
	return err < 0 ? NB_ECONFLICT : 0;
}

/* Leaves tonight's conflict of `t` in workdir/resolve/<tree>/ for the maintainer. */
static void rerere_leave(struct integ_night *n, struct integ_outcome *out,
			   const struct integ_tree *t, const git_oid *head, const git_oid *theirs,
			   const struct treemerge_conflicts *c)
{
	struct rerere_git_conflict rc = RERERE_GIT_CONFLICT_INIT;
	struct rerere_leave_file *files = NULL;
	struct rerere_leave_other *others = NULL;
	struct rerere_leave lv = { .tree = t->name, .date = n->date };
	char next_hex[NB_OID_HEXSZ + 1], tip_hex[NB_OID_HEXSZ + 1];
	size_t i;

	lv.next = git_oid_tostr(next_hex, sizeof(next_hex), head);
	lv.tip = git_oid_tostr(tip_hex, sizeof(tip_hex), theirs);
	if (rerere_git_conflict(&rc, n->git, c) < 0) {
		log_warn("%s: cannot keep the conflicted files: %s", t->name, nb_error_last());
		goto done;
	}
	files = xcalloc(rc.nr + 1, sizeof(*files));
	others = xcalloc(rc.nr + 1, sizeof(*others));
	for (i = 0; i < rc.nr; i++) {
		if (rc.files[i].text)
			files[lv.files_nr++] = (struct rerere_leave_file){
				rc.files[i].path, rc.files[i].text, rc.files[i].len };
		else
			others[lv.others_nr++] = (struct rerere_leave_other){
				rc.files[i].path, rc.files[i].kind };
	}
	lv.files = files;
	lv.others = others;
	if (rerere_leave_write(&lv, n->workdir, &out->resolve_dir) < 0) {
		log_warn("%s: cannot keep the conflicted files: %s", t->name, nb_error_last());
		goto done;
	}
	strbuf_addf(&n->log, "# %s: conflicted files kept for `nextbot resolve %s`\n", t->name,
		    t->name);
	log_info("%s: conflicted files left in %s; edit them and run `nextbot resolve %s`",
		 t->name, out->resolve_dir, t->name);
done:
	rerere_git_conflict_release(&rc);
	free(files);
	free(others);
}

static int tree_of(git_oid *out, git_repository *git, const git_oid *commit)
{
	git_commit *c = NULL;

	if (git_commit_lookup(&c, git, commit) < 0)
		return nb_error_set(NB_ERROR, "commit %s: %s", git_oid_tostr_s(commit),
				    merge_git_error());
	*out = *git_commit_tree_id(c);
	git_commit_free(c);
	return 0;
}

/*
 * A merge with one merge base, from the memo or merged and remembered: 0 with
 * *tree and `stat` filled, 1 when the memo cannot serve (no memo, no single base,
 * nothing to merge: the caller merges as usual), or treemerge_commits_bases()'s
 * errors (conflicts in `c`).
 */
static int memo_merge(struct integ_night *n, git_oid *tree, struct strbuf *stat,
		      struct treemerge_conflicts *c, const struct treemerge_sides *s)
{
	const git_oid *head = s->ours, *theirs = s->theirs, *bases = s->bases;
	size_t bases_nr = s->bases_nr;
	git_oid k[3];
	const char *memo_stat;
	int err;

	if (!n->memo || bases_nr != 1 || git_oid_equal(&bases[0], theirs) ||
	    git_oid_equal(&bases[0], head))
		return 1;
	if ((err = tree_of(&k[0], n->git, &bases[0])) < 0 ||
	    (err = tree_of(&k[1], n->git, head)) < 0 ||
	    (err = tree_of(&k[2], n->git, theirs)) < 0)
		return err;
	if (mergememo_find(tree, &memo_stat, n->memo, &k[0], &k[1], &k[2]) &&
	    git_odb_exists(n->odb, tree)) {
		strbuf_addstr(stat, memo_stat);
		n->memo_hits++;
		return 0;
	}
	err = treemerge_commits_bases(tree, NULL, c, n->git, s);
	if (err < 0)
		return err;
	diffstat(stat, n->git, &k[1], tree);
	mergememo_add(n->memo, &k[0], &k[1], &k[2], tree, stat->buf);
	return 0;
}

/*
 * One merge attempt of `theirs`: 0 merged or already (*already set), NB_ECONFLICT
 * (conflicts in `c`, log lines written), NB_EUNRELATED, or an error.
 */
static int try_merge(struct integ_night *n, int *already, struct treemerge_conflicts *c,
		       const struct integ_tree *t, const git_oid *theirs)
{
	struct strbuf stat = STRBUF_INIT;
	char *label = theirs_label(t);
	struct treemerge_labels labels = { "next", label };
	struct treemerge_sides sides = { .theirs = theirs, .labels = &labels };
	git_oid head, tree;
	size_t i;
	int err, resolved;

	merge_oid_to_git(&head, &n->head);
	n->rerere_resolved = 0;
	*already = 0;
	sides.ours = &head;
	if ((err = nightbase_get(&sides.bases, &sides.bases_nr, n->bases, &head, theirs)) < 0)
		goto done;
	err = memo_merge(n, &tree, &stat, c, &sides);
	if (err == 0)
		err = commit_merge(n, t, theirs, &tree, 0, stat.buf);
	if (err == 0)
		goto done;
	if (err == 1)
		err = treemerge_commits_bases(&tree, already, c, n->git, &sides);
	if (err == NB_EUNRELATED) {
		strbuf_addstr(&n->log, "fatal: refusing to merge unrelated histories\n");
		goto done;
	}
	if (err == NB_ECONFLICT) {
		for (i = 0; i < c->nr; i++)
			strbuf_addf(&n->log, "CONFLICT (%s): Merge conflict in %s\n",
				    c->items[i].kind, c->items[i].path);
		resolved = n->workdir && rerere_try(n, &tree, c) == 0;
		strbuf_addstr(&n->log, "Automatic merge failed; "
				       "fix conflicts and then commit the result.\n");
		if (resolved) {
			err = commit_merge(n, t, theirs, &tree, 1, NULL);
			goto done;
		}
		strbuf_addstr(&n->log, "$ git merge --abort\n");
		goto done;
	}
	if (err < 0)
		goto done;
	if (*already)
		strbuf_addstr(&n->log, "Already up to date.\n");
	else
		err = commit_merge(n, t, theirs, &tree, 0, NULL);
done:
	strbuf_release(&stat);
	free(label);
	return err;
}

static void left_out(struct integ_night *n, struct integ_outcome *out, const char *name,
		       char *reason)
{
	out->state = INTEG_LEFT_OUT;
	nb_oid_clear(&out->merged);
	free(out->reason);
	out->reason = reason;
	integ_night_left_out(n, name, reason);
}

/* Replays the tree without dropped patches; *candidate becomes what to merge. */
static int apply_drops(struct integ_night *n, struct integ_outcome *out, git_oid *candidate,
			 const struct integ_tree *t, const struct integ_drops *drops)
{
	struct replay_result rr = REPLAY_RESULT_INIT;
	git_oid base;
	size_t i;
	int err;

	merge_oid_to_git(&base, &n->base_tip);
	err = replay_without_drops(&rr, n->git, &base, candidate, drops, n->sig);
	if (err < 0 || !rr.changed)
		goto done;
	for (i = 0; i < rr.left_out.nr; i++) {
		struct nb_oid id;
		char *subject = nb_oid_parse(&id, rr.left_out.v[i]) == 0
					? repo_commit_subject(n->repo, &id) : xstrdup("");

		strvec_push(&out->left_out_patches, rr.left_out.v[i]);
		strbuf_addf(&n->log, "# %s: left out patch %.12s (\"%s\"): %s\n", t->name,
			    rr.left_out.v[i], subject, rr.reasons.v[i]);
		free(subject);
	}
	git_oid_cpy(candidate, &rr.head);
done:
	replay_result_release(&rr);
	return err;
}

int integ_night_merge_tree(struct integ_night *n, struct integ_outcome *out,
			   const struct integ_tree *t, const struct nb_oid *tip_id,
			   const struct nb_oid *good_id, const struct integ_drops *drops)
{
	/* text only for merge.log and the reasons */
	const char *tip_hex = tip_id ? tip_id->hex : "";
	const char *good_hex = good_id ? good_id->hex : "";
	struct treemerge_conflicts c = TREEMERGE_CONFLICTS_INIT;
	struct integ_step *step = step_add(n, INTEG_STEP_MERGE, t->name);
	const char *pat = fetch_never_merge_match((const char *const *)n->never_merge.v,
						  t->name, t->branch);
	char *what = xstrfmt("%s/%s", t->name, t->branch);
	git_oid tip, candidate, good;
	int already = 0, err = 0;

	free(step->branch);
	free(step->url);
	step->branch = xstrdup(t->branch);
	step->url = xstrdup(t->url);
	if (tip_id)
		step->tip = *tip_id;
	if (pat) {
		left_out(n, out, t->name, xstrfmt("refused: never_merge '%s' matches", pat));
		err = nb_error_set(NB_EREFUSED, "%s: never_merge '%s' matches", t->name, pat);
		goto done;
	}
	if (!tip_id || nb_oid_is_null(tip_id) || merge_oid_to_git(&tip, tip_id) < 0) {
		left_out(n, out, t->name, xstrfmt("no commit to merge"));
		goto done;
	}
	log_progress("merging %s (%zu)", t->name, n->nr);
	git_oid_cpy(&candidate, &tip);
	/* no drop, nothing to replay: not even the merge base is needed */
	if (drops && (drops->patch_ids_nr || drops->message_ids_nr) &&
	    (err = apply_drops(n, out, &candidate, t, drops)) < 0)
		goto done;
	log_merging(n, t, tip_id, what);
	err = try_merge(n, &already, &c, t, &candidate);
	if (err == 0) {
		out->state = already ? INTEG_ALREADY : INTEG_MERGED;
		out->rerere_resolved = n->rerere_resolved;
		git_oid_tostr(out->merged.hex, sizeof(out->merged.hex), &candidate);
		goto done;
	}
	if (err == NB_EUNRELATED) {
		left_out(n, out, t->name, xstrfmt("unrelated history: %s shares no commit "
						    "with next", tip_hex));
		err = 0;
		goto done;
	}
	if (err != NB_ECONFLICT)
		goto done;
	merge_oid_to_git(&good, &n->head);
	record_conflicts(n, out, &c, &good, &candidate);
	if (n->workdir)
		rerere_leave(n, out, t, &good, &candidate, &c);
	err = 0;
	if (good_id && !nb_oid_is_null(good_id) && merge_oid_to_git(&good, good_id) == 0 &&
	    !git_oid_equal(&good, &candidate)) {
		struct treemerge_conflicts c2 = TREEMERGE_CONFLICTS_INIT;

		log_merging(n, t, good_id, good_hex);
		err = try_merge(n, &already, &c2, t, &good);
		treemerge_conflicts_release(&c2);
		if (err == 0) {
			out->state = INTEG_PREVIOUS;
			out->rerere_resolved = n->rerere_resolved;
			git_oid_tostr(out->merged.hex, sizeof(out->merged.hex), &good);
			out->reason = xstrfmt("conflict in %s; merged the last good tip %.12s",
					      c.items[0].path, good_hex);
			goto done;
		}
		if (err < 0 && err != NB_ECONFLICT && err != NB_EUNRELATED)
			goto done;
		err = 0;
	}
	left_out(n, out, t->name, xstrfmt("merge conflict in %s%s", c.items[0].path,
					    c.nr > 1 ? " and more" : ""));
done:
	out->head = n->head;
	step->state = out->state;
	step->merged = out->merged;
	step->after = n->head;
	treemerge_conflicts_release(&c);
	free(what);
	return err;
}

int integ_night_apply_fixes(struct integ_night *n, const char *tree, const char *dir,
			    struct fixes_report *report)
{
	struct fixes_report local = FIXES_REPORT_INIT;
	struct integ_step *s = n->nr ? &n->steps[n->nr - 1] : NULL;
	char *display = xstrdup(dir), *slash;
	size_t l = strlen(display);
	int err;

	if (!s || s->kind != INTEG_STEP_MERGE || strcmp(s->tree, tree)) {
		free(display);
		return nb_error_set(NB_EINVALID, "fixes of %s: the last step is not its merge",
				    tree);
	}
	if (s->state == INTEG_LEFT_OUT) {
		free(display);
		return 0;
	}
	while (l > 1 && display[l - 1] == '/')
		display[--l] = '\0';
	if ((slash = strrchr(display, '/')) && slash[1])
		memmove(display, slash + 1, strlen(slash + 1) + 1);
	err = fixes_apply(report ? report : &local, &n->log, n->git, &n->head, n->sig, dir,
			  display);
	s->after = n->head;
	fixes_report_release(&local);
	free(display);
	return err;
}

int integ_night_revert(struct integ_night *n, const struct nb_oid *commit, const char *tree,
		       const char *reason)
{
	const char *commit_hex = commit->hex; /* text only for merge.log and errors */
	git_commit *c = NULL, *parent = NULL, *head = NULL;
	git_tree *tree_obj = NULL;
	struct strbuf msg = STRBUF_INIT;
	git_oid id, head_id, merged, new_id;
	struct integ_step *step;
	int err;

	if (merge_oid_to_git(&id, commit) < 0)
		return NB_EINVALID;
	merge_oid_to_git(&head_id, &n->head);
	if (git_commit_lookup(&c, n->git, &id) < 0 || git_commit_parent(&parent, c, 0) < 0 ||
	    git_commit_lookup(&head, n->git, &head_id) < 0) {
		err = nb_error_set(NB_ENOTFOUND, "revert %s: %s", commit_hex, merge_git_error());
		goto done;
	}
	strbuf_addf(&n->log, "$ git revert --no-edit %s\n", commit_hex);
	err = treemerge_trees(&merged, NULL, n->git, git_commit_tree_id(c),
			      git_commit_tree_id(head), git_commit_tree_id(parent));
	if (err == NB_ECONFLICT) {
		strbuf_addstr(&n->log, "error: could not revert; conflicts\n"
				       "$ git revert --abort\n");
		err = nb_error_set(NB_ECONFLICT, "the revert of %.12s does not apply", commit_hex);
		goto done;
	}
	if (err < 0)
		goto done;
	strbuf_addf(&msg, "Revert \"%s\"\n\nThis reverts commit %s.\n", git_commit_summary(c),
		    commit_hex);
	if (reason)
		strbuf_addf(&msg, "\n%s\n", reason);
	if (git_tree_lookup(&tree_obj, n->git, &merged) < 0 ||
	    git_commit_create(&new_id, n->git, NULL, n->sig, n->sig, NULL, msg.buf, tree_obj, 1,
			      (const git_commit **)&head) < 0) {
		err = merge_git_fail("revert commit");
		goto done;
	}
	if (reason)
		strbuf_addf(&n->log, "# %s\n", reason);
	step = step_add(n, INTEG_STEP_REVERT, tree);
	step->tip = *commit;
	step->message = xstrdup(msg.buf);
	merge_oid_from_git(&n->head, &new_id);
	step->after = n->head;
	step->merged = n->head;
	step->state = INTEG_MERGED;
done:
	strbuf_release(&msg);
	git_tree_free(tree_obj);
	git_commit_free(c);
	git_commit_free(parent);
	git_commit_free(head);
	return err;
}

int integ_night_truncate(struct integ_night *n, size_t nsteps)
{
	if (nsteps >= n->nr)
		return 0;
	n->head = n->steps[nsteps].before;
	while (n->nr > nsteps)
		step_release(&n->steps[--n->nr]);
	strbuf_addf(&n->log, "$ git reset --hard %.12s\n", n->head.hex);
	return 0;
}

void integ_night_mark(const struct integ_night *n, struct integ_mark *out)
{
	out->steps = n->nr;
	out->log_len = n->log.len;
	out->head = n->head;
}

void integ_night_restore(struct integ_night *n, const struct integ_mark *mark)
{
	while (n->nr > mark->steps)
		step_release(&n->steps[--n->nr]);
	if (mark->log_len <= n->log.len)
		strbuf_setlen(&n->log, mark->log_len);
	n->head = mark->head;
}

/* The base and every tree merged tonight, in order, for Next/Trees and Next/SHA1s. */
static size_t merged_trees(struct nextfiles_tree **out, const struct integ_night *n)
{
	struct nextfiles_tree *t = xcalloc(n->nr + 1, sizeof(*t));
	size_t i, k = 0;

	t[k++] = (struct nextfiles_tree){ n->base_name, n->base_url, n->base_branch,
					  n->base_tip.hex };
	for (i = 0; i < n->nr; i++) {
		const struct integ_step *s = &n->steps[i];

		if (s->kind == INTEG_STEP_MERGE && s->state != INTEG_LEFT_OUT)
			t[k++] = (struct nextfiles_tree){s->tree, s->url, s->branch, s->merged.hex};
	}
	*out = t;
	return k;
}

static int insert_blob(git_treebuilder *bld, git_repository *git, const char *name,
			 const struct strbuf *content)
{
	git_oid id;

	if (git_blob_create_from_buffer(&id, git, content->buf, content->len) < 0 ||
	    git_treebuilder_insert(NULL, bld, name, &id, GIT_FILEMODE_BLOB) < 0)
		return merge_git_fail("%s", name);
	return 0;
}

/* next's tree with Next/Trees, Next/SHA1s, Next/merge.log and localversion-next. */
static int next_files_tree(git_oid *out, struct integ_night *n, const git_tree *top)
{
	struct nextfiles_tree *trees = NULL;
	struct strbuf tr = STRBUF_INIT, sha = STRBUF_INIT, lv = STRBUF_INIT, log = STRBUF_INIT;
	git_treebuilder *topb = NULL, *nextb = NULL;
	const git_tree_entry *old = git_tree_entry_byname(top, "Next");
	git_tree *old_next = NULL;
	git_oid next_id;
	size_t k = merged_trees(&trees, n);
	int err = 0;

	nextfiles_trees(&tr, trees, k);
	nextfiles_sha1s(&sha, trees, k);
	/* file names and subjects from the trees: valid UTF-8, no terminal escape */
	utf8_clean_text(&log, n->log.buf, n->log.len);
	nextfiles_localversion(&lv, n->date);
	if (old && git_tree_entry_filemode(old) == GIT_FILEMODE_TREE)
		git_tree_lookup(&old_next, n->git, git_tree_entry_id(old));
	if (git_treebuilder_new(&nextb, n->git, old_next) < 0 ||
	    git_treebuilder_new(&topb, n->git, top) < 0) {
		err = merge_git_fail("tree builder");
		goto done;
	}
	if ((err = insert_blob(nextb, n->git, "Trees", &tr)) < 0 ||
	    (err = insert_blob(nextb, n->git, "SHA1s", &sha)) < 0 ||
	    (err = insert_blob(nextb, n->git, "merge.log", &log)) < 0 ||
	    (err = insert_blob(topb, n->git, "localversion-next", &lv)) < 0)
		goto done;
	if (git_treebuilder_write(&next_id, nextb) < 0 ||
	    git_treebuilder_insert(NULL, topb, "Next", &next_id, GIT_FILEMODE_TREE) < 0 ||
	    git_treebuilder_write(out, topb) < 0)
		err = merge_git_fail("Next/ tree");
done:
	git_treebuilder_free(nextb);
	git_treebuilder_free(topb);
	git_tree_free(old_next);
	strbuf_release(&tr);
	strbuf_release(&sha);
	strbuf_release(&log);
	strbuf_release(&lv);
	free(trees);
	return err;
}

int integ_night_finish(struct integ_night *n, struct nb_oid *out_head)
{
	git_commit *head = NULL;
	git_tree *top = NULL, *tree = NULL;
	git_oid head_id, tree_id, id;
	char compact[9], *msg = NULL, *tag = NULL;
	struct nb_oid hex;
	int err;

	nextfiles_compact_date(compact, n->date);
	merge_oid_to_git(&head_id, &n->head);
	if (git_commit_lookup(&head, n->git, &head_id) < 0 || git_commit_tree(&top, head) < 0) {
		err = merge_git_fail("next head");
		goto done;
	}
	if ((err = next_files_tree(&tree_id, n, top)) < 0)
		goto done;
	msg = xstrfmt("Add linux-next specific files for %s\n", compact);
	if (git_tree_lookup(&tree, n->git, &tree_id) < 0 ||
	    git_commit_create(&id, n->git, NULL, n->sig, n->sig, NULL, msg, tree, 1,
			      (const git_commit **)&head) < 0) {
		err = merge_git_fail("Next/ files commit");
		goto done;
	}
	merge_oid_from_git(&hex, &id);
	tag = xstrfmt("refs/tags/next-%s", compact);
	if ((err = repo_ref_set(n->repo, tag, &hex)) < 0 ||
	    (err = repo_ref_set(n->repo, "refs/heads/next", &hex)) < 0)
		goto done;
	git_repository_set_head(n->git, "refs/heads/next");
	n->head = hex;
	if (out_head)
		*out_head = hex;
done:
	free(msg);
	free(tag);
	git_tree_free(tree);
	git_tree_free(top);
	git_commit_free(head);
	return err;
}
