/* Building next, and when it breaks: find the culprit, flag it, act on it. */
#include <signal.h>
#include <stdarg.h>
#include <sys/statvfs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bot/botutil.h"
#include "bot/night.h"
#include "merge/check.h"
#include "merge/culprit.h"
#include "merge/excerpt.h"
#include "merge/lookup.h"
#include "bot/repro.h"
#include "util/runcmd.h"
#include "util/slurm.h"
#include "util/error.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* A tree gets at most this many culprits reverted a night before its previous
 * version is used instead: past that, bisecting on costs more than the fallback. */
#define NIGHT_MAX_REVERTS 4

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
	free(f->excerpt);
	free(f->first_error);
	free(f->infra);
	memset(f, 0, sizeof(*f));
}

static int stop(void *data)
{
	return night_past_deadline(data);
}

static void commands(struct culprit_command **out, const struct config_command *c, size_t nr)
{
	size_t i;

	*out = xcalloc(nr + 1, sizeof(**out));
	for (i = 0; i < nr; i++) {
		(*out)[i].name = c[i].name;
		(*out)[i].command = c[i].command;
		(*out)[i].env = (const char *const *)c[i].env.v;
		(*out)[i].timeout = (double)c[i].timeout;
	}
}

/* Options for merge/check and merge/culprit; `steps` filled by the caller. */
static void opts(struct night *n, struct culprit_opts *o, struct culprit_command **builds,
		   struct culprit_command **tests)
{
	memset(o, 0, sizeof(*o));
	commands(builds, n->cfg->build, n->cfg->build_nr);
	commands(tests, n->cfg->test, n->cfg->test_nr);
	o->repo_path = n->repo_path;
	o->workers_dir = n->workers_dir;
	o->cache_dir = n->cache_dir;
	o->runs_dir = n->runs_dir;
	o->date = n->opts->date;
	o->builds = *builds;
	o->builds_nr = n->cfg->build_nr;
	o->tests = *tests;
	o->tests_nr = n->cfg->test_nr;
	o->confirm = (unsigned)n->cfg->bisect.confirm;
	o->jobs = (unsigned)n->cfg->bisect.jobs;
	o->runner = config_runner_kind_name(n->cfg->runner.kind);
	o->stop = stop;
	o->stop_data = n;
	o->user = n->cfg->runner.user;
	if (n->cfg->runner.kind == CONFIG_RUNNER_SLURM) {
		n->slurm = (struct slurm_opts)SLURM_OPTS_INIT;
		n->slurm.partition = n->cfg->runner.partition;
		n->slurm.srun_args = (const char *const *)n->cfg->runner.srun_args.v;
		n->slurm.max_jobs = n->cfg->runner.max_jobs;
		o->slurm = &n->slurm;
	}
}

int night_check_trial(struct check_result *out, const struct config *cfg, const char *date,
		      const char *runs_dir, const struct nb_oid *commit, const char *command,
		      const char *tree)
{
	struct night_opts no = { date, 1 };
	struct culprit_command *builds = NULL, *tests = NULL;
	struct culprit_opts o;
	struct night n;
	size_t i;
	int with_tests = 0, error;

	/* a night of its own, so that the runner, its limits and its box are the night's */
	memset(&n, 0, sizeof(n));
	n.cfg = cfg;
	n.opts = &no;
	n.runs_dir = xstrdup(runs_dir);
	n.repo_path = xstrfmt("%s/repo.git", cfg->workdir);
	n.workers_dir = xstrfmt("%s/workers", cfg->workdir);
	opts(&n, &o, &builds, &tests);
	o.cache_dir = NULL; /* someone's branch: nothing read from or added to the cache */
	for (i = 0; i < cfg->build_nr && strcmp(cfg->build[i].name, command); i++)
		;
	if (i < cfg->build_nr) {
		o.builds_nr = i + 1; /* the builds up to the failing one */
	} else {
		for (i = 0; i < cfg->test_nr && strcmp(cfg->test[i].name, command); i++)
			;
		if (i == cfg->test_nr) {
			error = nb_error_set(NB_ENOTFOUND, "no build or test command '%s' in the "
							   "config",
					     command);
			goto done;
		}
		o.tests = &tests[i];
		o.tests_nr = 1;
		with_tests = 1;
	}
	error = check_commit(out, &o, commit, 1, with_tests, tree);
done:
	free(builds);
	free(tests);
	free(n.runs_dir);
	free(n.repo_path);
	free(n.workers_dir);
	return error;
}

/* A build step needs room: below this much free space it is not started. */
#define NIGHT_MIN_FREE_BYTES (256ULL << 20)

/* 1 with a reason when the work directory's file system is (nearly) full. */
static int disk_full(struct night *n, struct night_failure *out)
{
	struct statvfs sv;
	unsigned long long avail;

	if (statvfs(n->cfg->workdir, &sv) < 0)
		return 0;
	avail = (unsigned long long)sv.f_bavail * sv.f_frsize;
	if (avail >= NIGHT_MIN_FREE_BYTES && (!sv.f_files || sv.f_favail > 1000))
		return 0;
	out->infra = xstrfmt("the disk of %s is full (%llu MiB, %lu inodes free)",
			     n->cfg->workdir, avail >> 20, (unsigned long)sv.f_favail);
	out->cmd = n->cfg->build_nr ? &n->cfg->build[0] : &n->cfg->test[0];
	return 1;
}

int night_check_head(struct night *n, int with_build, int with_test, struct night_failure *out)
{
	struct culprit_command *builds, *tests;
	struct check_result r = CHECK_RESULT_INIT;
	struct culprit_opts o;
	int error;

	memset(out, 0, sizeof(*out));
	if (n->checks_off)
		return 0;
	if (disk_full(n, out))
		return 1;
	opts(n, &o, &builds, &tests);
	log_progress("building next %.12s", integ_night_head(n->integ)->hex);
	error = check_commit(&r, &o, integ_night_head(n->integ), with_build, with_test, NULL);
	if (error < 0 || r.verdict == CHECK_GOOD)
		goto done;
	out->is_test = r.failing_is_test;
	out->cmd = r.failing_is_test ? &n->cfg->test[r.failing] : &n->cfg->build[r.failing];
	out->exit_code = r.exit_code;
	out->timed_out = r.timed_out;
	out->excerpt = r.excerpt ? xstrdup(r.excerpt) : NULL;
	out->first_error = r.first_error ? xstrdup(r.first_error) : NULL;
	if (r.verdict == CHECK_INFRA)
		out->infra = xstrdup(r.infra_reason ? r.infra_reason : "the command could not run");
	else if (r.verdict == CHECK_SKIP)
		out->infra = xstrfmt("%s exited 125 (cannot be tested)", out->cmd->name);
	error = 1;
done:
	check_result_release(&r);
	free(builds);
	free(tests);
	return error;
}

static size_t tree_index(const struct night *n, const char *name)
{
	size_t i;

	for (i = 1; name && i < n->trees_nr; i++)
		if (!strcmp(n->trees[i].cfg->name, name))
			return i;
	return (size_t)-1;
}

/* The night's steps for merge/culprit, borrowed from the integ night. */
static struct culprit_step *steps(struct night *n, size_t *nr)
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

static void set(char **field, const char *value)
{
	free(*field);
	*field = dup_nonempty(value);
}

/* Fills the flag's patch fields from the culprit commit (and partner). */
static void flag_patch(struct night *n, struct flag *f, const struct culprit_result *r)
{
	struct lookup_patch p;

	if (lookup_commit(&p, n->repo, r->tree, r->commit.hex) == 0) {
		char date[40];
		time_t t = (time_t)p.author_time;
		struct tm tm;

		set(&f->commit, p.commit.hex);
		set(&f->patch_id, p.patch_id.hex);
		set(&f->message_id, p.message_id);
		set(&f->subject, p.subject);
		set(&f->author.name, p.author_name);
		set(&f->author.email, p.author_email);
		set(&f->patch_link, p.link);
		gmtime_r(&t, &tm);
		strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S +0000", &tm);
		set(&f->commit_date, date);
		lookup_patch_release(&p);
	} else {
		set(&f->commit, r->commit.hex);
		set(&f->subject, r->subject);
	}
	set(&f->tree, r->tree);
	if (r->partner_tree && r->partner_commit.hex[0] &&
	    lookup_commit(&p, n->repo, r->partner_tree, r->partner_commit.hex) == 0) {
		set(&f->partner_tree, r->partner_tree);
		set(&f->partner_commit, p.commit.hex);
		set(&f->partner_subject, p.subject);
		set(&f->partner_author.name, p.author_name);
		set(&f->partner_author.email, p.author_email);
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
	set(&f->command, r->command ? r->command : fail->cmd ? fail->cmd->name : NULL);
	f->exit_code = r->exit_code;
	f->timed_out = r->timed_out;
	set(&f->error, r->first_error);
	set(&f->excerpt, r->excerpt ? r->excerpt : fail->excerpt);
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
	set(&f->last_seen, n->opts->date);
	if (r->step < integ_night_steps_nr(n->integ)) {
		s = integ_night_step(n->integ, r->step);
		set(&f->repro_base, s->before.hex);
	}
	i = tree_index(n, r->tree);
	set(&f->tree_head, i != (size_t)-1 ? n->trees[i].fetch.tip.hex : NULL);
	set(&f->compiler, compiler(n, f->command));
	if (r->outcome != CULPRIT_FLAKY)
		repro_record(n, f, r);
}

/*
 * The flag of this fingerprint: found again, or new.  NULL: it was dismissed.
 * A flaky failure names no patch (the bisection's guess is not evidence), so its
 * fingerprint is the tree's, the command's and the error's: one flag however
 * often it comes back.
 */
static struct flag *flag(struct night *n, const struct culprit_result *r,
			   const struct night_failure *fail)
{
	int flaky = r->outcome == CULPRIT_FLAKY;
	struct strbuf fp = STRBUF_INIT;
	char id[13];
	struct flag *f;

	if (flaky) {
		char *who = xstrfmt("flaky:%s", r->tree ? r->tree : "next");

		excerpt_fingerprint(&fp, who, fail->cmd ? fail->cmd->name : "",
				    r->first_error ? r->first_error : fail->first_error);
		free(who);
	} else {
		strbuf_addstr(&fp, r->fingerprint);
	}
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
	if (flaky)
		set(&f->tree, r->tree);
	else
		flag_patch(n, f, r);
	flag_evidence(n, f, r, fail);
	if (flaky)
		f->exit_code = fail->exit_code;
	if (!strvec_contains(&n->seen_flags, f->id))
		strvec_push(&n->seen_flags, f->id);
	return f;
}

/* Reverts the culprit right after its tree's merge; falls back when it cannot. */
static int act(struct night *n, size_t ti, struct flag *f, const struct culprit_result *r)
{
	struct night_tree *t = &n->trees[ti];
	char *why;
	int error;

	if (n->cfg->on_breakage == CONFIG_BREAK_REVERT_CULPRIT && t->reverts < NIGHT_MAX_REVERTS) {
		why = xstrfmt("nextbot: %s broke %s (flag %s)", r->commit.hex, f->command, f->id);
		error = integ_night_revert(n->integ, r->commit.hex, t->cfg->name, why);
		free(why);
		if (error == 0) {
			t->reverts++;
			t->state = TREE_REVERTED;
			free(t->reason);
			t->reason = xstrfmt("reverted %.12s (\"%s\")", r->commit.hex,
					    f->subject ? f->subject : "");
			f->action = FLAG_REVERTED;
			return 0;
		}
		if (error != NB_ECONFLICT)
			return error;
	}
	why = xstrfmt("%s broke %s (flag %s)", f->subject ? f->subject : r->commit.hex,
		      f->command ? f->command : "next", f->id);
	error = night_fallback(n, ti, why);
	free(why);
	f->action = t->state == TREE_PREVIOUS_VERSION ? FLAG_PREVIOUS_VERSION : FLAG_DROPPED_TREE;
	return error;
}

static int rewind_to_tree(struct night *n, size_t ti)
{
	size_t i, steps = integ_night_steps_nr(n->integ), end = steps;
	int seen = 0;

	for (i = 0; i < steps; i++) {
		const struct integ_step *s = integ_night_step(n->integ, i);

		if (s->kind == INTEG_STEP_MERGE && !strcmp(s->tree, n->trees[ti].cfg->name))
			seen = 1;
		else if (seen && s->kind == INTEG_STEP_MERGE) {
			end = i;
			break;
		}
	}
	return integ_night_truncate(n->integ, end);
}

static const char *s(const char *s)
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

static int outcome(struct night *n, struct culprit_result *r, struct night_failure *fail,
		     size_t *acted)
{
	size_t ti = tree_index(n, r->tree);
	struct flag *f;
	int error;

	*acted = ti;
	switch (r->outcome) {
	case CULPRIT_FOUND:
		if (ti == (size_t)-1)
			break;
		if (!(f = flag(n, r, fail))) {
			note(n, "%s: a dismissed failure (%s) is back; nobody blamed",
			       s(r->tree), s(r->fingerprint));
			return 1;
		}
		if ((error = rewind_to_tree(n, ti)) < 0)
			return error;
		return act(n, ti, f, r);
	case CULPRIT_FLAKY:
		if (ti != (size_t)-1)
			flag(n, r, fail);
		note(n, "%s: a failure that did not reproduce (%s): flaky", s(r->tree),
		       fail->cmd ? fail->cmd->name : "?");
		return 1;
	case CULPRIT_UNCONFIRMED:
	case CULPRIT_SKIPPED:
		if (ti == (size_t)-1)
			break;
		note(n, "%s: the breakage could not be pinned on one patch (%s)", s(r->tree),
		       culprit_outcome_name(r->outcome));
		return night_fallback(n, ti, "tonight's version broke next; no single culprit");
	case CULPRIT_STOPPED:
		n->unfinished = 1;
		note(n, "%s stopped the search for the %s failure after the %s merge",
		       night_stop_cause(), fail->cmd ? fail->cmd->name : "?", s(r->tree));
		return 1;
	case CULPRIT_INFRA:
		note(n, "infrastructure problem, nobody blamed: %s (%s)", s(r->infra_reason),
		       fail->cmd ? fail->cmd->name : "?");
		return 1;
	}
	note(n, "next fails (%s) but no tree is to blame (%s)",
	       fail->cmd ? fail->cmd->name : "?", culprit_outcome_name(r->outcome));
	return 1;
}

int night_handle_breakage(struct night *n, struct night_failure *fail, size_t *acted)
{
	struct culprit_command *builds, *tests;
	struct culprit_result r = CULPRIT_RESULT_INIT;
	struct culprit_opts o;
	int error;

	*acted = (size_t)-1;
	if (fail->infra) {
		note(n, "infrastructure problem, nobody blamed: %s (%s)", fail->infra,
		       fail->cmd ? fail->cmd->name : "?");
		return 1;
	}
	if (night_past_deadline(n)) {
		size_t i = integ_night_steps_nr(n->integ);
		const struct integ_step *last = i ? integ_night_step(n->integ, i - 1) : NULL;

		note(n, "left for later: %s fails after the %s merge; %s before its "
			  "culprit was searched", fail->cmd ? fail->cmd->name : "?",
		       last ? last->tree : n->cfg->base.name, night_stop_event());
		return 1;
	}
	opts(n, &o, &builds, &tests);
	o.steps = steps(n, &o.steps_nr);
	o.failing_is_test = fail->is_test;
	o.failing = (size_t)(fail->cmd - (fail->is_test ? n->cfg->test : n->cfg->build));
	log_progress("bisecting %s failure of next", fail->cmd->name);
	error = culprit_find(&r, &o);
	if (error == 0)
		error = outcome(n, &r, fail, acted);
	culprit_result_release(&r);
	free((void *)o.steps);
	free(builds);
	free(tests);
	return error;
}
