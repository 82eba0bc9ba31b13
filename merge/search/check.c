/* One commit, every configured command: the verdict the nightly flow acts on. */
#include <git2.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "merge/search/search.h"
#include "merge/git/git_int.h"
#include "merge/search/probe_int.h"
#include "merge/worker/worker.h"
#include "util/error.h"
#include "util/xalloc.h"
#include "util/banned.h"

void check_result_release(struct check_result *r)
{
	free(r->excerpt);
	free(r->first_error);
	free(r->infra_reason);
	free(r->limit);
	memset(r, 0, sizeof(*r));
}

static size_t commands(struct probe_command *cmds, const struct culprit_opts *o,
			 int with_builds, int with_tests)
{
	size_t i, n = 0;

	for (i = 0; with_builds && i < o->builds_nr; i++, n++) {
		cmds[n].name = o->builds[i].name;
		cmds[n].shell = o->builds[i].command;
		cmds[n].env = o->builds[i].env;
		cmds[n].timeout = o->builds[i].timeout;
		cmds[n].incremental = o->builds[i].incremental;
	}
	for (i = 0; with_tests && i < o->tests_nr; i++, n++) {
		cmds[n].name = o->tests[i].name;
		cmds[n].shell = o->tests[i].command;
		cmds[n].env = o->tests[i].env;
		cmds[n].timeout = o->tests[i].timeout;
		cmds[n].incremental = o->tests[i].incremental;
	}
	return n;
}

static void fill(struct check_result *out, const struct probe_result *pr,
		   const struct culprit_opts *o, int with_builds, const char *strip)
{
	struct strbuf ex = STRBUF_INIT, first = STRBUF_INIT;
	size_t builds = with_builds ? o->builds_nr : 0;

	out->verdict = pr->verdict == PROBE_GOOD  ? CHECK_GOOD
		       : pr->verdict == PROBE_BAD ? CHECK_BAD
		       : pr->verdict == PROBE_SKIP ? CHECK_SKIP
						   : CHECK_INFRA;
	out->exit_code = pr->exit_code;
	out->timed_out = pr->timed_out;
	out->from_cache = pr->from_cache;
	out->runs = pr->runs;
	if (pr->cmd_index >= 0) {
		out->failing_is_test = (size_t)pr->cmd_index >= builds;
		out->failing = out->failing_is_test ? (size_t)pr->cmd_index - builds
						    : (size_t)pr->cmd_index;
	}
	if (pr->infra_reason)
		out->infra_reason = xstrdup(pr->infra_reason);
	if (out->verdict == CHECK_GOOD)
		return;
	excerpt_extract(&ex, &first, pr->output.buf, pr->output.len, strip);
	if (pr->limit) {
		/* the limit is the error: the output before it varies from run to run */
		out->limit = xstrdup(pr->limit);
		strbuf_reset(&first);
		strbuf_addf(&first, "nextbot: %s", pr->limit);
		if (!strstr(ex.buf, first.buf))
			strbuf_addf(&ex, "%s\n", first.buf);
	}
	out->excerpt = strbuf_detach(&ex, NULL);
	out->first_error = strbuf_detach(&first, NULL);
}

static int check_one(struct check_result *out, const struct culprit_opts *o,
		     const struct check_job *job, const volatile int *cancel)
{
	int with_builds = job->with_builds, with_tests = job->with_tests;
	struct probe_command *cmds = xcalloc(o->builds_nr + o->tests_nr + 1, sizeof(*cmds));
	struct probe_spec spec = { 0 };
	struct probe_result pr = PROBE_RESULT_INIT;
	struct worker *w = NULL;
	struct worker_opts wo = { 0 };
	char *dir = xstrfmt("%s/w%u", o->workers_dir, job->worker);
	git_oid id;
	int error;

	memset(out, 0, sizeof(*out));
	spec.cmds = cmds;
	spec.cmds_nr = commands(cmds, o, with_builds, with_tests);
	spec.tree_name = job->tree;
	spec.date = o->date;
	spec.runs_dir = o->runs_dir;
	spec.cache_dir = o->cache_dir;
	spec.runner = o->runner;
	spec.user = o->user;
	spec.slurm = o->slurm;
	spec.box = o->box;
	spec.limits = o->limits;
	spec.pristine_retry = 1;
	/* a verdict of record is a clean tree's, unless every command opted out */
	spec.pristine = job->clean && !probe_commands_incremental(cmds, spec.cmds_nr);
	spec.known_errors = spec.pristine ? NULL : o->known_errors;
	spec.cancel = cancel;
	if ((error = merge_oid_to_git(&id, &job->commit)) < 0)
		goto done;
	wo.exe = o->exe;
	wo.user = o->user;
	wo.box = o->box;
	wo.stop = o->stop;
	wo.stop_data = o->stop_data;
	if ((error = worker_open(&w, o->repo_path, dir, &wo)) < 0)
		goto done;
	if ((error = probe_run(&pr, w, &id, 0, &spec)) < 0)
		goto done;
	fill(out, &pr, o, with_builds, worker_tree_path(w));
done:
	probe_result_release(&pr);
	worker_free(w);
	free(dir);
	free(cmds);
	return error;
}

int check_commit(struct check_result *out, const struct check_job *job)
{
	return check_one(out, job->o, job, NULL);
}

/* The jobs of one check_commits() call, taken in order by its threads. */
struct pool {
	pthread_mutex_t mu;
	const struct check_job *jobs;
	struct check_result *out;
	volatile int *cancel;   /* one flag per job: its result is no longer wanted */
	size_t n, next, cut;
	check_cutoff_fn cutoff;
	void *data;
	int err;
	char *errmsg;
};

static void cancelled(struct check_result *r)
{
	check_result_release(r);
	r->verdict = CHECK_INFRA;
	r->cancelled = 1;
	r->infra_reason = xstrdup("cancelled: its result was no longer wanted");
}

static void *pool_work(void *arg)
{
	struct pool *p = arg;

	for (;;) {
		const struct check_job *j;
		size_t i, cut, k;
		int err;

		pthread_mutex_lock(&p->mu);
		/* jobs past the cut-off are never started */
		while (p->next < p->n && p->next >= p->cut)
			cancelled(&p->out[p->next++]);
		i = p->next < p->n ? p->next++ : p->n;
		pthread_mutex_unlock(&p->mu);
		if (i == p->n)
			return NULL;
		j = &p->jobs[i];
		err = check_one(&p->out[i], j->o, j, &p->cancel[i]);
		pthread_mutex_lock(&p->mu);
		if (err < 0 && !p->err) {
			p->err = err;
			p->errmsg = xstrdup(nb_error_last());
		}
		if (p->cancel[i])
			cancelled(&p->out[i]);
		else if (err >= 0 && p->cutoff) {
			cut = p->cutoff(p->data, i, &p->out[i]);
			for (k = cut; k < p->cut && k < p->n; k++)
				p->cancel[k] = 1;  /* running ones: killed */
			if (cut < p->cut)
				p->cut = cut;
		}
		pthread_mutex_unlock(&p->mu);
	}
}

int check_commits(struct check_result *out, const struct check_job *jobs, size_t n,
		  unsigned max_jobs, check_cutoff_fn cutoff, void *data)
{
	struct pool p = { .jobs = jobs, .out = out, .n = n, .cut = n, .cutoff = cutoff,
			  .data = data };
	size_t threads = max_jobs > 1 ? (max_jobs < n ? max_jobs : n) : 1, i, started = 0;
	pthread_t *tids = xcalloc(threads, sizeof(*tids));
	int err = 0;

	p.cancel = xcalloc(n + 1, sizeof(*p.cancel));
	pthread_mutex_init(&p.mu, NULL);
	/* threads - 1 helpers; the calling thread works too (and alone when none start) */
	for (i = 0; i + 1 < threads; i++)
		if (!pthread_create(&tids[started], NULL, pool_work, &p))
			started++;
	pool_work(&p);
	for (i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	if (p.err)
		err = nb_error_set(p.err, "%s", p.errmsg);
	free(p.errmsg);
	free((void *)p.cancel);
	free(tids);
	pthread_mutex_destroy(&p.mu);
	return err;
}
