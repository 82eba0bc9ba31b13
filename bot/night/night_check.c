/* Building next, and when it breaks: find the culprit, flag it, act on it. */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "bot/core/botutil.h"
#include "bot/night/night.h"
#include "cc/cc.h"
#include "merge/search/search.h"
#include "merge/repo/repo.h"
#include "util/metrics.h"
#include "util/runcmd.h"
#include "util/slurm.h"
#include "util/error.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "util/banned.h"

int night_past_deadline(struct night *n)
{
	if (bot_stop_requested || (n->deadline && time(NULL) >= n->deadline)) {
		n->unfinished = 1;
		return 1;
	}
	return 0;
}

const char *night_stop_cause(void)
{
	return bot_stop_requested ? "a stop request (SIGTERM)" : "the deadline";
}

const char *night_stop_event(void)
{
	return bot_stop_requested ? "a stop request (SIGTERM) came" : "the deadline passed";
}

void night_failure_release(struct night_failure *f)
{
	size_t i;

	free(f->excerpt);
	free(f->first_error);
	free(f->infra);
	for (i = 0; i < f->cells_nr; i++) {
		free(f->cells[i].first_error);
		free(f->cells[i].infra);
	}
	free(f->cells);
	free(f->limit);
	memset(f, 0, sizeof(*f));
}

static int stop(void *data)
{
	return night_past_deadline(data);
}

/* 1 when the config has a matrix: flags then list cells and are one per culprit. */
static int has_matrix(const struct night *n)
{
	return n->cells_nr > 1 || *n->cells[0].cfg->name;
}

/* Command k of a cell: the entry `c` under its cell name, with its env and the cell's. */
static void cell_command(struct night_cell *nc, size_t k, struct culprit_command *out,
			 const struct config_command *c)
{
	struct strvec *env = &nc->envs[k];
	size_t i;

	strvec_push_nodup(&nc->names, config_cell_command_name(nc->cfg, c));
	for (i = 0; i < c->env.nr; i++)
		strvec_push(env, c->env.v[i]);
	for (i = 0; i < nc->cfg->env.nr; i++)
		strvec_push(env, nc->cfg->env.v[i]);
	out->name = nc->names.v[nc->names.nr - 1];
	out->command = c->command;
	out->env = (const char *const *)env->v;
	out->timeout = (double)c->timeout;
	out->incremental = c->incremental;
}

void night_cells_init(struct night *n)
{
	const struct config *cfg = n->cfg;
	size_t i, j, k;

	n->cells_nr = cfg->cells_nr;
	n->cells = xcalloc(n->cells_nr, sizeof(*n->cells));
	for (i = 0; i < n->cells_nr; i++) {
		struct night_cell *nc = &n->cells[i];

		nc->cfg = &cfg->cells[i];
		nc->workers_dir = *nc->cfg->name ? xstrfmt("%s/%s", n->workers_dir, nc->cfg->name)
						 : xstrdup(n->workers_dir);
		nc->names = (struct strvec)STRVEC_INIT;
		nc->builds = xcalloc(cfg->build_nr + 1, sizeof(*nc->builds));
		nc->tests = xcalloc(cfg->test_nr + 1, sizeof(*nc->tests));
		nc->build_src = xcalloc(cfg->build_nr + 1, sizeof(*nc->build_src));
		nc->test_src = xcalloc(cfg->test_nr + 1, sizeof(*nc->test_src));
		nc->envs = xcalloc(cfg->build_nr + cfg->test_nr + 1, sizeof(*nc->envs));
		for (k = 0; k < cfg->build_nr + cfg->test_nr + 1; k++)
			nc->envs[k] = (struct strvec)STRVEC_INIT;
		k = 0;
		for (j = 0; j < cfg->build_nr; j++)
			if (config_cell_has(nc->cfg, &cfg->build[j])) {
				nc->build_src[nc->builds_nr] = &cfg->build[j];
				cell_command(nc, k++, &nc->builds[nc->builds_nr++], &cfg->build[j]);
			}
		for (j = 0; j < cfg->test_nr; j++)
			if (config_cell_has(nc->cfg, &cfg->test[j])) {
				nc->test_src[nc->tests_nr] = &cfg->test[j];
				cell_command(nc, k++, &nc->tests[nc->tests_nr++], &cfg->test[j]);
			}
	}
}

void night_cells_release(struct night *n)
{
	size_t i, k;

	for (i = 0; i < n->cells_nr; i++) {
		struct night_cell *nc = &n->cells[i];

		for (k = 0; k < n->cfg->build_nr + n->cfg->test_nr + 1; k++)
			strvec_clear(&nc->envs[k]);
		free(nc->envs);
		strvec_clear(&nc->names);
		free(nc->builds);
		free(nc->tests);
		free(nc->build_src);
		free(nc->test_src);
		free(nc->workers_dir);
	}
	free(n->cells);
	n->cells = NULL;
	n->cells_nr = 0;
}

static size_t tree_index(const struct night *n, const char *name)
{
	size_t i;

	for (i = 1; name && i < n->trees_nr; i++)
		if (!strcmp(n->trees[i].cfg->name, name))
			return i;
	return (size_t)-1;
}

/* 1 when flag f's culprit is among the commits of its tree fetched tonight. */
static int culprit_fetched(struct night *n, const struct flag *f)
{
	size_t ti = tree_index(n, f->tree);
	struct nb_oid commit;

	return ti != (size_t)-1 && f->commit && nb_oid_parse(&commit, f->commit) == 0 &&
	       !nb_oid_is_null(&n->trees[ti].fetch.tip) &&
	       lookup_contains(n->repo, &n->trees[ti].fetch.tip, &commit) == 1;
}

/* The "<command>\t<error>" line of an open flag's failure in one of its cells. */
static void known_error(struct night *n, const char *command, const char *error)
{
	struct strbuf norm = STRBUF_INIT;

	excerpt_normalise(&norm, error ? error : "");
	if (norm.len && command)
		strvec_pushf(&n->known_errors, "%s\t%s", command, norm.buf);
	strbuf_release(&norm);
}

int night_carries(struct night *n, size_t ti, int *with_test)
{
	const char *name = n->trees[ti].cfg->name;
	size_t i;
	int found = 0;

	for (i = 0; n->st && i < n->st->flags_nr; i++) {
		const struct flag *f = &n->st->flags[i];

		if (f->state != FLAG_OPEN || f->kind == FLAG_FLAKY || !f->tree ||
		    strcmp(f->tree, name) || !culprit_fetched(n, f))
			continue;
		found = 1;
		*with_test |= f->kind == FLAG_TEST_FAILURE;
	}
	return found;
}

/*
 * Tonight's confirmed breakages still in the trees (open flags, not flaky, their
 * culprit fetched again): a check failing with one of them needs no pristine retry.
 */
static const char *const *known_errors(struct night *n)
{
	size_t i, k;

	/* a trial of someone's branch (no state) takes no failure on trust */
	if (!n->st || !n->repo)
		return NULL;
	if (n->known_errors_set)
		goto done;
	n->known_errors_set = 1;
	for (i = 0; i < n->st->flags_nr; i++) {
		const struct flag *f = &n->st->flags[i];

		if (f->state != FLAG_OPEN || f->kind == FLAG_FLAKY || !culprit_fetched(n, f))
			continue;
		if (!f->cells_nr)
			known_error(n, f->command, f->error);
		for (k = 0; k < f->cells_nr; k++)
			known_error(n, f->cells[k].name,
				    f->cells[k].first_error ? f->cells[k].first_error : f->error);
	}
done:
	return n->known_errors.nr ? (const char *const *)n->known_errors.v : NULL;
}

/* Options for merge/check and merge/culprit in cell `c`; `steps` filled by the caller. */
static void cell_culprit_opts(struct night *n, struct culprit_opts *o, const struct night_cell *c)
{
	memset(o, 0, sizeof(*o));
	o->repo_path = n->repo_path;
	o->workers_dir = c->workers_dir;
	o->cache_dir = n->cache_dir;
	o->runs_dir = n->runs_dir;
	o->date = n->opts->date;
	o->builds = c->builds;
	o->builds_nr = c->builds_nr;
	o->tests = c->tests;
	o->tests_nr = c->tests_nr;
	o->confirm = (unsigned)n->cfg->bisect.confirm;
	o->jobs = (unsigned)n->cfg->bisect.jobs;
	o->runner = config_runner_kind_name(n->cfg->runner.kind);
	o->stop = stop;
	o->stop_data = n;
	o->user = n->cfg->runner.user;
	o->exe = bot_runner_exe(n->workers_dir);
	o->known_errors = known_errors(n);
	n->limits = (struct runcmd_limits){ .memory = n->cfg->runner.limits.memory,
					    .processes = n->cfg->runner.limits.processes,
					    .fsize = n->cfg->runner.limits.file_size,
					    .cpu = n->cfg->runner.limits.cpu };
	o->limits = &n->limits;
	if (n->cfg->runner.sandbox == CONFIG_SANDBOX_BWRAP) {
		n->box = (struct runcmd_box){ .bwrap = n->cfg->runner.bwrap,
					      .network = n->cfg->runner.network,
					      .shown = (const char *const *)
						       n->cfg->runner.read_only.v,
					      .devices = (const char *const *)
							 n->cfg->runner.devices.v,
					      .hide = n->box_hide };
		n->box_hide[0] = n->cfg->workdir;
		n->box_hide[1] = n->config_abs;
		n->box_hide[2] = NULL;
		cc_service_box(n->cc, &n->box);
		o->box = &n->box;
	}
	if (n->cfg->runner.kind == CONFIG_RUNNER_SLURM) {
		n->slurm = (struct slurm_opts)SLURM_OPTS_INIT;
		n->slurm.partition = n->cfg->runner.partition;
		n->slurm.srun_args = (const char *const *)n->cfg->runner.srun_args.v;
		n->slurm.max_jobs = n->cfg->runner.max_jobs;
		o->slurm = &n->slurm;
	}
}

/*
 * Finds `command` among cell c's builds, then its tests: by its name in the cell
 * (by_entry 0) or its entry's name (by_entry 1).  1 with its index and whether it
 * is a test.
 */
static int trial_find(const struct night_cell *c, const char *command, int by_entry,
		      size_t *at, int *is_test)
{
	size_t i;

	for (i = 0; i < c->builds_nr; i++)
		if (!strcmp(by_entry ? c->build_src[i]->name : c->builds[i].name, command)) {
			*at = i;
			*is_test = 0;
			return 1;
		}
	for (i = 0; i < c->tests_nr; i++)
		if (!strcmp(by_entry ? c->test_src[i]->name : c->tests[i].name, command)) {
			*at = i;
			*is_test = 1;
			return 1;
		}
	return 0;
}

int night_check_trial(struct check_result *out, const struct config *cfg, const char *date,
		      const char *runs_dir, const struct nb_oid *commit, const char *command,
		      const char *tree)
{
	struct night_opts no = { date, 1 };
	const struct night_cell *cell = NULL;
	struct culprit_opts o;
	struct check_job job;
	struct night n;
	size_t c, i = 0;
	int with_tests = 0, error, pass;

	/* a night of its own, so that the runner, its limits and its box are the night's */
	memset(&n, 0, sizeof(n));
	n.cfg = cfg;
	n.opts = &no;
	n.runs_dir = xstrdup(runs_dir);
	n.repo_path = xstrfmt("%s/repo.git", cfg->workdir);
	n.workers_dir = xstrfmt("%s/workers", cfg->workdir);
	night_cells_init(&n);
	/*
	 * `command` names a matrix cell's command ("build[ARCH=arm64]") or an entry
	 * ("build": its first cell); without a matrix the two are the same
	 */
	for (pass = 0; pass < 2 && !cell; pass++)
		for (c = 0; c < n.cells_nr && !cell; c++)
			if (trial_find(&n.cells[c], command, pass, &i, &with_tests))
				cell = &n.cells[c];
	if (!cell) {
		error = nb_error_set(NB_ENOTFOUND, "no build or test command '%s' in the config",
				     command);
		goto done;
	}
	night_cc_start(&n);
	cell_culprit_opts(&n, &o, cell);
	o.cache_dir = NULL; /* someone's branch: nothing read from or added to the cache */
	if (!with_tests) {
		o.builds_nr = i + 1; /* the builds up to the failing one */
	} else {
		o.tests = &cell->tests[i];
		o.tests_nr = 1;
	}
	job = (struct check_job){ .o = &o, .commit = *commit, .with_builds = 1,
				  .with_tests = with_tests, .clean = 1, .tree = tree };
	error = check_commit(out, &job);
	night_cc_stop(&n);
done:
	night_cells_release(&n);
	free(n.runs_dir);
	free(n.repo_path);
	free(n.workers_dir);
	return error;
}

/* A build step needs room: runner.min_free, after the workers were reclaimed. */
int night_disk_full(struct night *n, struct night_failure *out)
{
	char *why = NULL;

	if (!night_disk_reclaim(n, &why))
		return 0;
	out->infra = why;
	if (n->cells[0].builds_nr) {
		out->cmd = n->cells[0].build_src[0];
		out->name = n->cells[0].builds[0].name;
	} else if (n->cells[0].tests_nr) {
		out->cmd = n->cells[0].test_src[0];
		out->name = n->cells[0].tests[0].name;
	}
	return 1;
}

static const char *or_unknown(const char *s)
{
	return s ? s : "?";
}

__attribute__((format(printf, 2, 3))) static void note(struct night *n, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	strvec_push_nodup(&n->run->notes, strbuf_detach(&sb, NULL));
}

/*
 * `out` from the cells' results (r[i] of cell i): every failing cell, and the
 * first bad one (else the first failing) as the failure the night acts on.
 * Returns 0 when every cell passed, 1 when not.
 */
static int failure_fill(struct night *n, struct night_failure *out, const struct check_result *r)
{
	size_t i, first = (size_t)-1;
	const struct check_result *pr;
	struct night_cell_failure *cf;

	out->cells = xcalloc(n->cells_nr, sizeof(*out->cells));
	for (i = 0; i < n->cells_nr; i++) {
		const struct night_cell *c = &n->cells[i];
		size_t k = r[i].failing;

		if (r[i].verdict == CHECK_GOOD)
			continue;
		cf = &out->cells[out->cells_nr++];
		cf->cell = i;
		cf->is_test = r[i].failing_is_test;
		cf->cmd = cf->is_test ? c->test_src[k] : c->build_src[k];
		cf->name = cf->is_test ? c->tests[k].name : c->builds[k].name;
		cf->bad = r[i].verdict == CHECK_BAD;
		cf->first_error = r[i].first_error ? xstrdup(r[i].first_error) : NULL;
		if (first == (size_t)-1 || (cf->bad && r[first].verdict != CHECK_BAD))
			first = i;
	}
	if (first == (size_t)-1)
		return 0;
	for (i = 0; i < out->cells_nr; i++) {
		cf = &out->cells[i];
		if (!cf->bad)
			cf->infra = r[cf->cell].verdict == CHECK_SKIP
					    ? xstrdup("exited 125 (cannot be tested)")
					    : xstrdup(or_unknown(r[cf->cell].infra_reason));
		if (cf->cell == first) {
			out->cmd = cf->cmd;
			out->name = cf->name;
			out->is_test = cf->is_test;
		}
	}
	pr = &r[first];
	out->cell = first;
	out->exit_code = pr->exit_code;
	out->timed_out = pr->timed_out;
	out->excerpt = pr->excerpt ? xstrdup(pr->excerpt) : NULL;
	out->first_error = pr->first_error ? xstrdup(pr->first_error) : NULL;
	out->limit = pr->limit ? xstrdup(pr->limit) : NULL;
	if (pr->verdict == CHECK_INFRA)
		out->infra = xstrdup(pr->infra_reason ? pr->infra_reason
						       : "the command could not run");
	else if (pr->verdict == CHECK_SKIP)
		out->infra = xstrfmt("%s exited 125 (cannot be tested)", out->name);
	return 1;
}

/* Job `job` of night_check_heads() failed: later heads' jobs no longer matter. */
static size_t cut_after_bad(void *data, size_t job, const struct check_result *r)
{
	size_t cells = *(const size_t *)data;

	return r->verdict == CHECK_BAD ? (job / cells + 1) * cells : (size_t)-1;
}

int night_check_heads(struct night *n, const struct nb_oid *heads, size_t nr, unsigned what,
		      struct night_failure *out, int *state)
{
	struct culprit_opts *o = xcalloc(n->cells_nr, sizeof(*o));
	struct check_job *jobs = xcalloc(nr * n->cells_nr, sizeof(*jobs));
	struct check_result *r = xcalloc(nr * n->cells_nr, sizeof(*r));
	size_t i, j, cells = n->cells_nr;
	double t;
	int error;

	memset(out, 0, nr * sizeof(*out));
	for (i = 0; i < cells; i++)
		cell_culprit_opts(n, &o[i], &n->cells[i]);
	for (j = 0; j < nr; j++)
		for (i = 0; i < cells; i++)
			jobs[j * cells + i] = (struct check_job){
				.o = &o[i],
				.commit = heads[j],
				.with_builds = !!(what & NIGHT_CHECK_BUILD),
				.with_tests = !!(what & NIGHT_CHECK_TEST),
				.clean = !!(what & NIGHT_CHECK_CLEAN),
				.worker = (unsigned)j,
			};
	if (nr > 1)
		log_progress("building next %.12s .. %.12s (%zu prefixes%s%s)", heads[0].hex,
			     heads[nr - 1].hex, nr, cells > 1 ? ", each in every cell" : "", "");
	else if (cells > 1)
		log_progress("building next %.12s in %zu cells", heads[0].hex, cells);
	else
		log_progress("building next %.12s", heads[0].hex);
	n->build_rounds++;
	t = metrics_clock();
	error = check_commits(r, jobs, nr * cells, (unsigned)n->cfg->runner.max_jobs,
			      nr > 1 ? cut_after_bad : NULL, &cells);
	n->phase.check += metrics_clock() - t;
	for (j = 0; j < nr && error >= 0; j++) {
		state[j] = 0;
		for (i = 0; i < cells; i++)
			if (r[j * cells + i].cancelled)
				state[j] = -1;
		if (!state[j])
			state[j] = failure_fill(n, &out[j], &r[j * cells]);
	}
	for (i = 0; i < nr * cells; i++)
		check_result_release(&r[i]);
	free(r);
	free(jobs);
	free(o);
	return error;
}

int night_check_head(struct night *n, unsigned what, struct night_failure *out)
{
	int state = 0, error;

	memset(out, 0, sizeof(*out));
	if (n->checks_off)
		return 0;
	if (night_disk_full(n, out))
		return 1;
	error = night_check_heads(n, integ_night_head(n->integ), 1, what, out, &state);
	return error < 0 ? error : state;
}

/* The night's steps for merge/culprit, borrowed from the integ night. */
static struct culprit_step *night_culprit_steps(struct night *n, size_t *nr)
{
	size_t i;
	struct culprit_step *steps;

	*nr = integ_night_steps_nr(n->integ);
	steps = xcalloc(*nr + 1, sizeof(*steps));
	for (i = 0; i < *nr; i++) {
		const struct integ_step *s = integ_night_step(n->integ, i);

		steps[i].tree = s->tree;
		steps[i].is_merge = s->kind == INTEG_STEP_MERGE;
		steps[i].before = s->before;
		steps[i].after = s->after;
		steps[i].merged = s->merged;
		if (s->kind == INTEG_STEP_REVERT)
			steps[i].reverted = s->tip;
	}
	return steps;
}

static char *dup_nonempty(const char *s)
{
	return s && *s ? xstrdup(s) : NULL;
}

static void set_field(char **field, const char *value)
{
	free(*field);
	*field = dup_nonempty(value);
}

/*
 * The flag, already mailed about, now blames another submission of its patch (the
 * same patch-id by another author, or under another Message-ID): its mails start
 * again, as first mails to that submission's author and its own threads.
 */
static void follow_submission(struct flag *f, const struct lookup_patch *p)
{
	const char *was_id = f->message_id, *was_by = f->author.email;
	const char *now_id = p->message_id && *p->message_id ? p->message_id : NULL;
	const char *now_by = p->author_email && *p->author_email ? p->author_email : NULL;

	if (!f->notified || !now_by || !was_by)
		return;
	if (!strcasecmp(was_by, now_by) && (!was_id || !now_id || !strcmp(was_id, now_id)))
		return;
	set_field(&f->report_thread, now_id ? now_id : now_by);
	set_field(&f->notified, NULL);
	set_field(&f->reminded, NULL);
}

/* Fills the flag's patch fields from the culprit commit (and partner). */
static void flag_patch(struct night *n, struct flag *f, const struct culprit_result *r)
{
	struct lookup_patch p;

	if (lookup_commit(&p, n->repo, r->tree, &r->commit) == 0) {
		char date[64];
		time_t t = (time_t)p.author_time;
		struct tm tm;

		follow_submission(f, &p);
		set_field(&f->commit, p.commit.hex);
		f->patch_id = p.patch_id;
		set_field(&f->message_id, p.message_id);
		set_field(&f->subject, p.subject);
		set_field(&f->author.name, p.author_name);
		set_field(&f->author.email, p.author_email);
		set_field(&f->patch_link, p.link);
		gmtime_r(&t, &tm);
		strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S +0000", &tm);
		set_field(&f->commit_date, date);
		lookup_patch_release(&p);
	} else {
		set_field(&f->commit, r->commit.hex);
		set_field(&f->subject, r->subject);
	}
	set_field(&f->tree, r->tree);
	if (r->partner_tree && r->partner_commit.hex[0] &&
	    lookup_commit(&p, n->repo, r->partner_tree, &r->partner_commit) == 0) {
		set_field(&f->partner_tree, r->partner_tree);
		set_field(&f->partner_commit, p.commit.hex);
		set_field(&f->partner_subject, p.subject);
		set_field(&f->partner_author.name, p.author_name);
		set_field(&f->partner_author.email, p.author_email);
		lookup_patch_release(&p);
	}
}

/*
 * The first line of the compiler's --version (CC from the command's environment,
 * else cc), when the command builds with one; NULL otherwise.  Once per command a
 * night: the answer is kept in n->compilers.
 */
static const char *compiler(struct night *n, const char *name)
{
	const struct config_command *c = notices_command(n->cfg, name);
	struct runcmd_opts o = RUNCMD_OPTS_INIT;
	struct runcmd_result res = RUNCMD_RESULT_INIT;
	const char *cc = "cc";
	size_t i, len;
	int builds;

	if (!c)
		return NULL;
	for (i = 0; i + 1 < n->compilers.nr; i += 2)
		if (!strcmp(n->compilers.v[i], name))
			return *n->compilers.v[i + 1] ? n->compilers.v[i + 1] : NULL;
	for (i = 0; i < c->env.nr; i++)
		if (!strncmp(c->env.v[i], "CC=", 3) && c->env.v[i][3])
			cc = c->env.v[i] + 3;
	builds = strstr(c->command, "make") || strstr(c->command, "cc") ||
		 strstr(c->command, "clang") || strstr(c->command, "ninja") || strcmp(cc, "cc");
	strvec_push(&n->compilers, name);
	if (builds) {
		const char *argv[] = { "/bin/sh", "-c", "exec $NB_CC --version", NULL };
		char *env[2] = { xstrfmt("NB_CC=%s", cc), NULL };

		o.argv = argv;
		o.env = (const char *const *)env;
		o.timeout = 10;
		o.output_cap = 4096;
		o.merge_stderr = 0;
		if (runcmd_run(&res, &o) == 0 && res.exit_code == 0) {
			len = strcspn(res.output.buf, "\n");
			strvec_push_nodup(&n->compilers, xstrndup(res.output.buf, len));
		}
		runcmd_result_release(&res);
		free(env[0]);
	}
	if (n->compilers.nr % 2)
		strvec_push(&n->compilers, "");
	return *n->compilers.v[n->compilers.nr - 1] ? n->compilers.v[n->compilers.nr - 1] : NULL;
}

static void flag_evidence(struct night *n, struct flag *f, const struct culprit_result *r,
			    const struct night_failure *fail)
{
	const struct integ_step *s;
	size_t i;

	f->kind = r->outcome == CULPRIT_FLAKY ? FLAG_FLAKY
		  : fail->is_test	       ? FLAG_TEST_FAILURE
					       : FLAG_BUILD_FAILURE;
	/* with a matrix the cells say where it failed; the flag names the entry */
	if (has_matrix(n) && fail->cmd)
		set_field(&f->command, fail->cmd->name);
	else
		set_field(&f->command, r->command ? r->command : fail->name);
	f->exit_code = r->exit_code;
	f->timed_out = r->timed_out;
	set_field(&f->error, r->first_error);
	set_field(&f->excerpt, r->excerpt ? r->excerpt : fail->excerpt);
	f->culprit_fails = (int)r->verdict.culprit_fails;
	f->parent_passes = (int)r->verdict.parent_passes;
	f->revert_passes = (int)r->verdict.revert_passes;
	f->steps = (int)r->steps;
	f->confirm_runs = (int)r->confirm_runs;
	f->failing = r->outcome == CULPRIT_FLAKY ? (int)r->flaky_fails : 0;
	f->total = r->outcome == CULPRIT_FLAKY ? (int)r->flaky_runs : 0;
	strvec_clear(&f->log);
	for (i = 0; i < r->log.nr; i++)
		strvec_push(&f->log, r->log.v[i]);
	set_field(&f->last_seen, n->opts->date);
	if (r->step < integ_night_steps_nr(n->integ)) {
		s = integ_night_step(n->integ, r->step);
		set_field(&f->repro_base, s->before.hex);
	}
	i = tree_index(n, r->tree);
	set_field(&f->tree_head, i != (size_t)-1 ? n->trees[i].fetch.tip.hex : NULL);
	set_field(&f->compiler, compiler(n, f->command));
	if (r->outcome != CULPRIT_FLAKY)
		repro_record(n, f, r);
}

/* "<patch-id>" of the culprit, "+<patch-id>" of its partner: who a matrix flag blames. */
static void culprits(struct strbuf *out, struct night *n, const struct culprit_result *r)
{
	struct lookup_patch p;
	const char *nl = r->fingerprint ? strchr(r->fingerprint, '\n') : NULL;

	if (nl)
		strbuf_add(out, r->fingerprint, (size_t)(nl - r->fingerprint));
	else
		strbuf_addstr(out, r->commit.hex);
	if (!r->partner_tree || nb_oid_is_null(&r->partner_commit))
		return;
	if (lookup_commit(&p, n->repo, r->partner_tree, &r->partner_commit) == 0) {
		strbuf_addf(out, "+%s", nb_patchid_is_none(&p.patch_id) ? p.commit.hex
								     : NB_PATCHID_HEX(&p.patch_id));
		lookup_patch_release(&p);
	} else {
		strbuf_addf(out, "+%s", r->partner_commit.hex);
	}
}

/*
 * The fingerprint of a failure.  A flaky one names no patch (the bisection's guess
 * is not evidence): the tree's, the command's and the error's, one flag however often
 * it comes back.  With a matrix, one flag per culprit (and partner) and kind, whatever
 * cells it breaks and how: the cells are listed in the flag, not part of its identity.
 * Otherwise SPEC.md's: patch-id, command, first error line.
 */
static void fingerprint(struct strbuf *fp, struct night *n, const struct culprit_result *r,
			const struct night_failure *fail)
{
	struct strbuf who = STRBUF_INIT;

	if (r->outcome == CULPRIT_FLAKY) {
		strbuf_addf(&who, "flaky:%s", r->tree ? r->tree : "next");
		excerpt_flaky_fingerprint(fp, who.buf, fail->cmd ? fail->cmd->name : "",
					  r->first_error ? r->first_error : fail->first_error);
	} else if (has_matrix(n)) {
		culprits(&who, n, r);
		excerpt_fingerprint(fp, who.buf, fail->is_test ? "test-failure" : "build-failure",
				    NULL);
	} else {
		strbuf_addstr(fp, r->fingerprint);
	}
	strbuf_release(&who);
}

/*
 * 1 when cell failure `c` failed as the failure the night acts on did: the same
 * command and the same first error line, normalised.  A cell judged by the verdict
 * cache has no output, so no error line: it goes with the same command's failure
 * (`error` is the culprit's confirmed error line, for a primary judged from the cache).
 */
static int same_failure(const struct night_failure *fail, const char *error,
			const struct night_cell_failure *c)
{
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	int same;

	if (!c->bad || c->cmd != fail->cmd || c->is_test != fail->is_test)
		return 0;
	excerpt_normalise(&a, error ? error : "");
	excerpt_normalise(&b, c->first_error ? c->first_error : "");
	same = !a.len || !b.len || !strcmp(a.buf, b.buf);
	strbuf_release(&a);
	strbuf_release(&b);
	return same;
}

/*
 * The cells of this failure join the flag: the one bisected and every other that
 * failed the same way (same command, same first error), which share its bisection.
 * Cells failing otherwise are left for their own search, after this culprit is
 * acted on; if that finds the same culprit they join this flag then.
 */
static void flag_cells(struct night *n, struct flag *f, const struct night_failure *fail,
		       const struct culprit_result *r)
{
	const char *error = fail->first_error && *fail->first_error ? fail->first_error
								     : r->first_error;
	size_t i;

	for (i = 0; i < fail->cells_nr; i++) {
		const struct night_cell_failure *c = &fail->cells[i];
		const char *mine = c->first_error && *c->first_error ? c->first_error : NULL;

		if (c->cell != fail->cell && !same_failure(fail, error, c))
			continue;
		if (c->cell == fail->cell && !mine)
			mine = r->first_error;
		if (state_flag_cell_set(f, c->name, &n->cells[c->cell].cfg->env, mine,
					n->opts->date) &&
		    !strvec_contains(&n->new_flags, f->id))
			log_info("flag %s: cell %s joins it", f->id, c->name);
	}
}

/* The flag of this failure: found again, or new.  NULL: it was dismissed. */
static struct flag *flag_for_failure(struct night *n, const struct culprit_result *r,
				     const struct night_failure *fail)
{
	int flaky = r->outcome == CULPRIT_FLAKY;
	struct strbuf fp = STRBUF_INIT;
	char id[13];
	struct flag *f;

	fingerprint(&fp, n, r, fail);
	excerpt_flag_id(id, fp.buf);
	f = state_flag_by_fingerprint(n->st, fp.buf);
	if (f && f->state == FLAG_DISMISSED) {
		strbuf_release(&fp);
		return NULL;
	}
	if (!f) {
		f = state_flag_add(n->st);
		f->id = xstrdup(id);
		f->fingerprint = strbuf_detach(&fp, NULL);
		f->first_seen = xstrdup(n->opts->date);
		f->state = FLAG_OPEN;
		strvec_push(&n->new_flags, f->id);
	} else if (f->state == FLAG_RESOLVED) {
		/* back again: the same fingerprint was reported once already */
		f->state = FLAG_OPEN;
	}
	strbuf_release(&fp);
	/* a flaky flag names the patch that brought what fails (never as a culprit:
	   its author gets no report), when the search found one */
	if (flaky && nb_oid_is_null(&r->commit))
		set_field(&f->tree, r->tree);
	else
		flag_patch(n, f, r);
	flag_evidence(n, f, r, fail);
	if (flaky)
		f->exit_code = fail->exit_code;
	flag_cells(n, f, fail, r);
	if (!strvec_contains(&n->seen_flags, f->id))
		strvec_push(&n->seen_flags, f->id);
	return f;
}

void night_decision_release(struct night_decision *d)
{
	free(d->why);
	*d = (struct night_decision)NIGHT_DECISION_INIT;
}

/* Decides that f's culprit, `commit` tonight, in tree ti, is reverted (or its tree falls back). */
static int decide_culprit(struct night_decision *d, size_t ti, struct flag *f,
			  const struct nb_oid *commit)
{
	d->action = NIGHT_ACT_CULPRIT;
	d->tree = ti;
	d->flag = f;
	d->commit = *commit;
	return 0;
}

static int outcome(struct night *n, struct culprit_result *r, struct night_failure *fail,
		   struct night_decision *d)
{
	size_t ti = tree_index(n, r->tree);
	struct flag *f;

	switch (r->outcome) {
	case CULPRIT_FOUND:
		if (ti == (size_t)-1)
			break;
		if (!(f = flag_for_failure(n, r, fail))) {
			note(n, "%s: a dismissed failure (%s) is back; nobody blamed",
			       or_unknown(r->tree), or_unknown(r->fingerprint));
			return 1;
		}
		return decide_culprit(d, ti, f, &r->commit);
	case CULPRIT_FLAKY:
		if (ti != (size_t)-1 && !nb_oid_is_null(&r->commit)) {
			flag_for_failure(n, r, fail);
			note(n,
			     "%s: %s is flaky (failed %u of %u runs of one clean tree); "
			     "%.12s last changed what fails",
			     or_unknown(r->tree), or_unknown(fail->name), r->flaky_fails,
			     r->flaky_runs, r->commit.hex);
		} else {
			note(n,
			     "%s is flaky (failed %u of %u runs of one clean tree); no patch of "
			     "tonight's changed what fails: nobody is flagged",
			     or_unknown(fail->name), r->flaky_fails, r->flaky_runs);
		}
		return 1;
	case CULPRIT_NOT_REPRODUCED:
		note(n, "not reproduced in a clean tree: %s failed%s but never in a clean tree; "
			"nobody is blamed", or_unknown(fail->name),
		     fail->first_error && *fail->first_error ? " (an earlier build's leftovers?)"
							      : "");
		return 1;
	case CULPRIT_UNCONFIRMED:
	case CULPRIT_SKIPPED:
		if (ti == (size_t)-1)
			break;
		note(n, "%s: the breakage could not be pinned on one patch (%s)",
		     or_unknown(r->tree), culprit_outcome_name(r->outcome));
		d->action = NIGHT_ACT_FALLBACK;
		d->tree = ti;
		d->why = xstrdup("tonight's version broke next; no single culprit");
		return 0;
	case CULPRIT_STOPPED:
		n->unfinished = 1;
		note(n, "%s stopped the search for the %s failure after the %s merge",
		       night_stop_cause(), or_unknown(fail->name), or_unknown(r->tree));
		return 1;
	case CULPRIT_INFRA:
		note(n, "infrastructure problem, nobody blamed: %s (%s)",
		     or_unknown(r->infra_reason), or_unknown(fail->name));
		return 1;
	}
	note(n, "next fails (%s) but no tree is to blame (%s)",
	       or_unknown(fail->name), culprit_outcome_name(r->outcome));
	return 1;
}

/* 1 when two first error lines are the same once normalised (an empty one: unknown). */
static int same_error(const char *a, const char *b)
{
	struct strbuf x = STRBUF_INIT, y = STRBUF_INIT;
	int same;

	excerpt_normalise(&x, a ? a : "");
	excerpt_normalise(&y, b ? b : "");
	same = x.len && y.len && !strcmp(x.buf, y.buf);
	strbuf_release(&x);
	strbuf_release(&y);
	return same;
}

/* 1 when next holds `hex` tonight: brought by a merge, and not reverted since. */
static int in_next(struct night *n, const char *hex)
{
	size_t i, steps = integ_night_steps_nr(n->integ);
	struct nb_oid commit;

	if (!hex || nb_oid_parse(&commit, hex) < 0 ||
	    lookup_contains(n->repo, integ_night_head(n->integ), &commit) != 1)
		return 0;
	for (i = 0; i < steps; i++) {
		const struct integ_step *st = integ_night_step(n->integ, i);

		if (st->kind == INTEG_STEP_REVERT && nb_oid_equal(&st->tip, &commit))
			return 0;
	}
	return 1;
}

static int has_cell(const struct flag *f, const char *name)
{
	size_t i;

	for (i = 0; i < f->cells_nr; i++)
		if (!strcmp(f->cells[i].name, or_unknown(name)))
			return 1;
	return 0;
}

/* 1 when open flag `f` blames this failure's command (and cell) for the same error. */
static int flag_explains(struct night *n, const struct flag *f, const struct night_failure *fail)
{
	const char *name = has_matrix(n) && fail->cmd ? fail->cmd->name : fail->name;
	size_t i;

	if (f->state != FLAG_OPEN || !f->command || strcmp(f->command, or_unknown(name)) ||
	    f->kind != (fail->is_test ? FLAG_TEST_FAILURE : FLAG_BUILD_FAILURE))
		return 0;
	/* a failure judged by the cache has no error line: the command says enough */
	if (!fail->first_error || !*fail->first_error)
		return !has_matrix(n) || has_cell(f, fail->name);
	if (!has_matrix(n))
		return same_error(f->error, fail->first_error);
	for (i = 0; i < f->cells_nr; i++)
		if (!strcmp(f->cells[i].name, or_unknown(fail->name)))
			return same_error(f->cells[i].first_error, fail->first_error);
	return 0;
}

/*
 * The commit of flag f's culprit in next tonight, not reverted: its own, or, its
 * tree rebased since, the commit of tree ti tonight that carries its patch-id.
 * 0 with *out, 1 when next holds neither.
 */
static int culprit_in_next(struct nb_oid *out, struct night *n, const struct flag *f, size_t ti)
{
	struct lookup_patches pool = LOOKUP_PATCHES_INIT;
	const struct night_tree *t = &n->trees[ti];
	size_t i;
	int found = 1;

	if (in_next(n, f->commit))
		return nb_oid_parse(out, f->commit) < 0;
	if (nb_patchid_is_none(&f->patch_id) || t->step == (size_t)-1 ||
	    nb_oid_is_null(&t->merged) ||
	    lookup_new_patches(&pool, n->repo, f->tree, t->merged.hex,
			       integ_night_step(n->integ, t->step)->before.hex, 0) < 0) {
		lookup_patches_release(&pool);
		return 1;
	}
	for (i = 0; i < pool.nr && found; i++)
		if (nb_patchid_eq(&pool.items[i].patch_id, &f->patch_id) &&
		    in_next(n, pool.items[i].commit.hex)) {
			*out = pool.items[i].commit;
			found = 0;
		}
	lookup_patches_release(&pool);
	return found;
}

/*
 * The open flag that already explains this failure: its culprit (followed by its
 * patch-id when its tree was rebased) and partner in next tonight, not reverted,
 * and the same command failing with the same first error.  A confirmed culprit is
 * a fact: the night acts on it again without a new search or confirmation.  NULL:
 * none; *ti and *commit are then undefined.
 */
static struct flag *known_culprit(struct night *n, const struct night_failure *fail,
				  size_t *ti, struct nb_oid *commit)
{
	size_t i;

	for (i = 0; i < n->st->flags_nr; i++) {
		struct flag *f = &n->st->flags[i];

		if (f->kind == FLAG_FLAKY || !flag_explains(n, f, fail) ||
		    (*ti = tree_index(n, f->tree)) == (size_t)-1 ||
		    n->trees[*ti].reverts >= NIGHT_MAX_REVERTS ||
		    culprit_in_next(commit, n, f, *ti) ||
		    (f->partner_commit && !in_next(n, f->partner_commit)))
			continue;
		return f;
	}
	return NULL;
}

/*
 * Acts on a known culprit again, `commit` being its commit tonight: reverted (or
 * its tree falls back) as when found.
 */
static int carried(struct night *n, struct flag *f, size_t ti, const struct nb_oid *commit,
		   const struct night_failure *fail, struct night_decision *d)
{
	struct culprit_result r = CULPRIT_RESULT_INIT;

	r.outcome = CULPRIT_FOUND;
	r.commit = *commit;
	if (strcmp(f->commit ? f->commit : "", commit->hex)) {
		note(n, "%s: flag %s's patch is now %.12s (its tree was rebased)", f->tree, f->id,
		     commit->hex);
		set_field(&f->commit, commit->hex);
	}
	r.first_error = f->error;
	if (!strvec_contains(&n->seen_flags, f->id)) {
		note(n,
		     "%s: %s fails as flag %s says; its culprit %.12s is still in, acted on "
		     "again without a new search",
		     f->tree, or_unknown(fail->name), f->id, f->commit);
		strvec_push(&n->seen_flags, f->id);
		metrics_add(METRIC_CARRIED, 1);
	}
	set_field(&f->last_seen, n->opts->date);
	flag_cells(n, f, fail, &r);
	return decide_culprit(d, ti, f, commit);
}

/* The failing command's index in its cell's list. */
static size_t failing_index(const struct night *n, const struct night_failure *fail)
{
	const struct night_cell *c = &n->cells[fail->cell];
	const struct culprit_command *list = fail->is_test ? c->tests : c->builds;
	size_t i, nr = fail->is_test ? c->tests_nr : c->builds_nr;

	for (i = 0; i < nr && list[i].name != fail->name; i++)
		;
	return i;
}

int night_handle_breakage(struct night *n, struct night_failure *fail,
			  struct night_decision *out)
{
	struct culprit_result r = CULPRIT_RESULT_INIT;
	struct nb_oid commit = NB_OID_INIT;
	struct culprit_opts o;
	struct flag *f;
	size_t i, ti;
	double t;
	int error;

	*out = (struct night_decision)NIGHT_DECISION_INIT;
	for (i = 0; i < fail->cells_nr; i++)
		if (fail->cells[i].infra && fail->cells[i].cell != fail->cell)
			note(n, "infrastructure problem, nobody blamed: %s (%s)",
			     fail->cells[i].infra, fail->cells[i].name);
	if (fail->infra) {
		note(n, "infrastructure problem, nobody blamed: %s (%s)", fail->infra,
		       or_unknown(fail->name));
		return 1;
	}
	if (night_past_deadline(n)) {
		size_t nr = integ_night_steps_nr(n->integ);
		const struct integ_step *last = nr ? integ_night_step(n->integ, nr - 1) : NULL;

		note(n, "left for later: %s fails after the %s merge; %s before its "
			  "culprit was searched", or_unknown(fail->name),
		       last ? last->tree : n->cfg->base.name, night_stop_event());
		return 1;
	}
	if ((f = known_culprit(n, fail, &ti, &commit)))
		return carried(n, f, ti, &commit, fail, out);
	cell_culprit_opts(n, &o, &n->cells[fail->cell]);
	o.steps = night_culprit_steps(n, &o.steps_nr);
	o.failing_is_test = fail->is_test;
	o.failing = failing_index(n, fail);
	log_progress("bisecting %s failure of next", fail->name);
	t = metrics_clock();
	error = culprit_find(&r, &o);
	n->phase.bisect += metrics_clock() - t;
	if (error == 0)
		error = outcome(n, &r, fail, out);
	culprit_result_release(&r);
	free((void *)o.steps);
	return error;
}
