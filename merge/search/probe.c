/* Probing a commit: checkout into a worker, run the commands, classify, cache. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "merge/git/git_int.h"
#include "merge/search/search.h"
#include "merge/search/probe_int.h"
#include "util/oid.h"
#include "merge/search/verdict_int.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/log.h"
#include "util/metrics.h"
#include "util/runcmd.h"
#include "util/slurm.h"
#include "util/strvec.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define EXIT_SKIP 125

void probe_result_release(struct probe_result *r)
{
	free(r->log_path);
	free(r->infra_reason);
	free(r->limit);
	strbuf_release(&r->output);
	r->log_path = r->infra_reason = r->limit = NULL;
}

static void reset(struct probe_result *r)
{
	probe_result_release(r);
	strbuf_init(&r->output, 0);
	r->verdict = PROBE_GOOD;
	r->cmd_index = -1;
	r->exit_code = r->signal = r->timed_out = r->from_cache = 0;
}

__attribute__((format(printf, 2, 3)))
static void infra(struct probe_result *r, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	r->verdict = PROBE_INFRA;
	free(r->infra_reason);
	r->infra_reason = strbuf_detach(&sb, NULL);
}

/* The command as the cache knows it: the shell string, or the argv joined. */
static char *command_text(const struct probe_command *c)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	if (c->shell)
		return xstrdup(c->shell);
	strbuf_addstr(&sb, "argv:");
	for (i = 0; c->argv && c->argv[i]; i++)
		strbuf_addf(&sb, " %s", c->argv[i]);
	return strbuf_detach(&sb, NULL);
}

int probe_commands_incremental(const struct probe_command *cmds, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (!cmds[i].incremental)
			return 0;
	return nr > 0;
}

/*
 * Where a verdict is kept: a clean tree's verdicts apart from passes seen in a
 * kept tree, so that no clean probe ever takes an incremental pass for its own.
 * The domain is hashed into the key with the runner kind.
 */
enum cache_domain { DOMAIN_CLEAN, DOMAIN_INCREMENTAL };

static void command_key(char out[SHA1_HEXSZ + 1], const char *tree_hex,
			const struct probe_command *c, const struct probe_spec *spec,
			enum cache_domain domain)
{
	char *text = command_text(c);
	char *runner = xstrfmt("%s %s", spec->runner ? spec->runner : "local",
			       domain == DOMAIN_CLEAN ? "clean" : "incremental");

	verdict_key(out, tree_hex, text, c->env, runner);
	free(runner);
	free(text);
}

void probe_fact_key(char out[SHA1_HEXSZ + 1], const char *what, const struct probe_spec *spec)
{
	struct strbuf keys = STRBUF_INIT;
	char key[SHA1_HEXSZ + 1];
	size_t i;

	strbuf_addstr(&keys, "fact");
	for (i = 0; i < spec->cmds_nr; i++) {
		command_key(key, what, &spec->cmds[i], spec, DOMAIN_CLEAN);
		strbuf_addf(&keys, " %s", key);
	}
	sha1_hex(out, keys.buf, keys.len);
	strbuf_release(&keys);
}

/*
 * One command's cached verdict: a clean tree's, or (for a probe that may run
 * in a kept tree) one seen incrementally; *clean says which.
 */
static enum verdict_kind cached(int *code, int *clean, const char *tree_hex,
				 const struct probe_command *c, const struct probe_spec *spec)
{
	char key[SHA1_HEXSZ + 1];
	enum verdict_kind k;

	command_key(key, tree_hex, c, spec, DOMAIN_CLEAN);
	k = verdict_get(spec->cache_dir, key, code);
	if (k != VERDICT_NONE || spec->pristine)
		return k;
	*clean = 0;
	command_key(key, tree_hex, c, spec, DOMAIN_INCREMENTAL);
	return verdict_get(spec->cache_dir, key, code);
}

/* Decides from the cache alone when it can: 1 decided, 0 not. */
static int from_cache(struct probe_result *out, const char *tree_hex,
			const struct probe_spec *spec)
{
	size_t i;
	int code = 1, clean = 1;

	if (!spec->cache_dir || spec->no_cache)
		return 0;
	for (i = 0; i < spec->cmds_nr; i++) {
		enum verdict_kind k = cached(&code, &clean, tree_hex, &spec->cmds[i], spec);

		if (k == VERDICT_NONE) {
			metrics_add(METRIC_CACHE_MISSES, 1);
			return 0;
		}
		if (k == VERDICT_BAD) {
			out->verdict = spec->cmds[i].skip_on_fail ? PROBE_SKIP : PROBE_BAD;
			out->cmd_index = (int)i;
			out->exit_code = code;
			break;
		}
	}
	out->from_cache = 1;
	out->clean = clean;
	metrics_add(METRIC_CACHE_HITS, 1);
	return 1;
}

static char *log_path(const struct probe_spec *spec, const struct probe_command *c,
			unsigned step, const char *commit_hex, int pristine)
{
	struct strbuf name = STRBUF_INIT;
	const char *p;

	if (!spec->runs_dir)
		return NULL;
	for (p = c->name ? c->name : "cmd"; *p; p++)
		strbuf_addch(&name, strchr("/\\ \t\n", *p) || *p == '.' ? '_' : *p);
	p = xstrfmt("%s/step-%03u-%s-%.12s%s.log", spec->runs_dir, step, name.buf, commit_hex,
		    pristine ? "-pristine" : "");
	strbuf_release(&name);
	return (char *)p;
}

static void build_env(struct strvec *env, const struct probe_spec *spec,
		  const struct probe_command *c, const char *commit_hex, unsigned step)
{
	size_t i;

	strvec_pushf(env, "NEXTBOT_TREE=%s", spec->tree_name ? spec->tree_name : "");
	strvec_pushf(env, "NEXTBOT_COMMIT=%s", commit_hex);
	strvec_pushf(env, "NEXTBOT_DATE=%s", spec->date ? spec->date : "");
	strvec_pushf(env, "NEXTBOT_STEP=%u", step);
	for (i = 0; c->env && c->env[i]; i++)
		strvec_push(env, c->env[i]);
}

/* Classifies one finished command; returns 1 if it decides the probe. */
static int classify(struct probe_result *out, struct runcmd_result *r, size_t i,
		      const struct probe_command *c)
{
	if (r->runner_failed) {
		infra(out, "the runner failed on its own, no verdict (%s)",
			c->name ? c->name : "");
	} else if (r->stopped) {
		infra(out, "stopped: nextbot is stopping (%s)", c->name ? c->name : "");
	} else if (r->box_failed) {
		const char *why = strstr(r->output.buf, "bwrap: ");
		int len = why ? (int)strcspn(why, "\n") : 0;

		infra(out, "the sandbox could not start (%s)%s%.*s", c->name ? c->name : "",
		      why ? ": " : "", len, why ? why : "");
	} else if (r->exec_failed) {
		infra(out, "the command could not be started (%s)", c->name ? c->name : "");
	} else if (r->exit_code == 0 && !r->timed_out && !r->limit_hit) {
		return 0;
	} else if (r->exit_code == EXIT_SKIP && !r->signal && !r->timed_out) {
		out->verdict = PROBE_SKIP;
	} else {
		out->verdict = c->skip_on_fail ? PROBE_SKIP : PROBE_BAD;
	}
	out->cmd_index = (int)i;
	out->exit_code = r->exit_code;
	out->signal = r->signal;
	out->timed_out = r->timed_out;
	free(out->limit);
	out->limit = NULL;
	if (r->limit != RUNCMD_LIMIT_NONE) {
		struct strbuf sb = STRBUF_INIT;

		/* the limit, with its value, is what failed: say so where people read */
		runcmd_limit_describe(&sb, r);
		if (r->output.len && r->output.buf[r->output.len - 1] != '\n')
			strbuf_addch(&r->output, '\n');
		strbuf_addf(&r->output, "nextbot: %s\n", sb.buf);
		out->limit = strbuf_detach(&sb, NULL);
	}
	strbuf_release(&out->output);
	out->output = r->output;
	strbuf_init(&r->output, 0);
	return 1;
}

/*
 * Stores what this run established: in a clean tree, its pass or failure; in a
 * kept tree, only a pass, and only for other probes of kept trees.
 */
static void remember(const struct probe_spec *spec, const char *tree_hex, size_t i,
		       const struct runcmd_result *r, int pristine)
{
	const struct probe_command *c = &spec->cmds[i];
	char key[SHA1_HEXSZ + 1], *what;

	if (!spec->cache_dir || r->timed_out || r->exec_failed || r->limit_hit || r->stopped)
		return;
	if (r->exit_code != 0 && (!pristine || r->exit_code == EXIT_SKIP))
		return;
	command_key(key, tree_hex, c, spec, pristine ? DOMAIN_CLEAN : DOMAIN_INCREMENTAL);
	what = xstrfmt("%s: tree %s%s", c->name ? c->name : "", tree_hex,
		       pristine ? "" : " (seen in a kept tree)");
	if (verdict_put(spec->cache_dir, key, r->exit_code ? VERDICT_BAD : VERDICT_GOOD,
			r->exit_code, what) < 0)
		log_warn("verdict cache: %s", nb_error_last());
	free(what);
}

/* The limit's line at the end of the run's log too. */
static void log_append(const char *path, const char *limit)
{
	int fd = open(path, O_RDWR | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	char last = '\n', *line;

	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && st.st_size > 0 && pread(fd, &last, 1, st.st_size - 1) != 1)
		last = '\n';
	line = xstrfmt("%snextbot: %s\n", last == '\n' ? "" : "\n", limit);
	if (write(fd, line, strlen(line)) < 0)
		log_warn("cannot append to %s: %s", path, strerror(errno));
	close(fd);
	free(line);
}

/*
 * Command `i` failed: when the disk is short, its worker goes at once (it is
 * disposable, merge/worker/worker.h) and the failure is nobody's: an infrastructure
 * verdict naming the command, never cached.  1 when so.
 */
static int disk_failure(struct probe_result *out, struct worker *w, const struct nb_oid *commit,
			size_t i, const struct probe_spec *spec)
{
	struct strbuf why = STRBUF_INIT;
	int full = worker_disk_settle(w, commit, spec->cmds[i].name, &why);

	if (full) {
		infra(out, "%s: a failure on a full disk is nobody's", why.buf);
		out->cmd_index = (int)i;
	}
	strbuf_release(&why);
	return full;
}

static int run_all(struct probe_result *out, struct worker *w, const struct nb_oid *commit,
		     const char *tree_hex, unsigned step, const struct probe_spec *spec,
		     int pristine)
{
	size_t i;
	int err = 0;

	for (i = 0; i < spec->cmds_nr; i++) {
		const struct probe_command *c = &spec->cmds[i];
		struct runcmd_opts opts = RUNCMD_OPTS_INIT;
		struct runcmd_result r = RUNCMD_RESULT_INIT;
		struct strvec env = STRVEC_INIT;
		char *log = log_path(spec, c, step, commit->hex, pristine);
		const char *writable[2] = { worker_tree_path(w), NULL };
		struct runcmd_box box;
		int decided;

		build_env(&env, spec, c, commit->hex, step);
		opts.shell = c->shell;
		opts.argv = c->shell ? NULL : c->argv;
		opts.cwd = worker_tree_path(w);
		opts.env = (const char *const *)env.v;
		opts.timeout = c->timeout;
		opts.log_path = log;
		opts.user = spec->user;
		opts.inherit_env = spec->inherit_env;
		opts.cancel = spec->cancel;
		opts.stoppable = 1;
		opts.runner_dir = worker_run_path(w);
		if (spec->limits)
			opts.limits = *spec->limits;
		if (spec->box) {
			box = *spec->box;
			box.read_only = worker_read_only(w);
			box.writable = writable;
			opts.box = &box;
		}
		err = slurm_or_local_run(&r, &opts, spec->slurm);
		strvec_clear(&env);
		if (err < 0) {
			infra(out, "the runner failed: %s", nb_error_last());
			out->cmd_index = (int)i;
			free(log);
			err = 0;
			break;
		}
		out->runs++;
		metrics_add(METRIC_COMMANDS, 1);
		metrics_add(METRIC_COMMAND_SECONDS, r.seconds);
		metrics_add(METRIC_COMMAND_CPU, r.cpu_seconds);
		if ((r.exit_code || r.signal) && disk_failure(out, w, commit, i, spec)) {
			runcmd_result_release(&r);
			free(log);
			break;
		}
		remember(spec, tree_hex, i, &r, pristine);
		decided = classify(out, &r, i, c);
		runcmd_result_release(&r);
		if (decided && out->limit && log)
			log_append(log, out->limit);
		if (decided) {
			free(out->log_path);
			out->log_path = log;
			break;
		}
		free(log);
	}
	return err;
}

static int commit_tree(git_oid *out, struct worker *w, const git_oid *commit)
{
	struct nb_oid id, tree;

	merge_oid_from_git(&id, commit);
	if (worker_commit_tree(&tree, w, &id) < 0)
		return nb_error_set(NB_ENOTFOUND, "probe: no commit %s", id.hex);
	return merge_oid_to_git(out, &tree);
}

static int attempt(struct probe_result *out, struct worker *w, const git_oid *commit,
		     const char *tree_hex, unsigned step, const struct probe_spec *spec,
		     int pristine)
{
	/*
	 * A worker whose commands were cut short (nextbot killed mid-build) may hold
	 * half-written output newer than its sources, which make takes as up to
	 * date: the marker says so, and the next use starts pristine.
	 */
	char *busy = xstrfmt("%s.busy", worker_tree_path(w));
	struct nb_oid id;
	struct strbuf settled = STRBUF_INIT;
	int fd, err = 0;

	reset(out);
	merge_oid_from_git(&id, commit);
	if (!pristine && file_exists(busy)) {
		log_warn("worker %s was interrupted: checking out pristine", worker_tree_path(w));
		pristine = 1;
	}
	if (worker_checkout(w, &id, pristine) < 0) {
		infra(out, "checkout failed: %s", nb_error_last());
		goto done;
	}
	fd = open(busy, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	err = run_all(out, w, &id, tree_hex, step, spec, pristine);
	unlink(busy);
	/* what passing commands left on a short disk goes too */
	if (out->verdict != PROBE_INFRA && spec->cmds_nr)
		worker_disk_settle(w, &id, spec->cmds[out->cmd_index >= 0 ? (size_t)out->cmd_index
								 : spec->cmds_nr - 1].name,
				   &settled);
done:
	strbuf_release(&settled);
	free(busy);
	return err;
}

/* 1 when the failure in `out` is one of spec->known_errors: no retry needed. */
static int known_failure(const struct probe_result *out, struct worker *w,
			 const struct probe_spec *spec)
{
	struct strbuf ex = STRBUF_INIT, first = STRBUF_INIT, norm = STRBUF_INIT;
	const struct probe_command *c;
	size_t i, len;
	int known = 0;

	if (!spec->known_errors || out->verdict != PROBE_BAD || out->limit)
		return 0;
	c = &spec->cmds[out->cmd_index];
	excerpt_extract(&ex, &first, out->output.buf, out->output.len, worker_tree_path(w));
	excerpt_normalise(&norm, first.buf);
	len = strlen(c->name ? c->name : "");
	for (i = 0; norm.len && spec->known_errors[i] && !known; i++) {
		const char *k = spec->known_errors[i];

		known = !strncmp(k, c->name ? c->name : "", len) && k[len] == '\t' &&
			!strcmp(k + len + 1, norm.buf);
	}
	strbuf_release(&ex);
	strbuf_release(&first);
	strbuf_release(&norm);
	return known;
}

/*
 * A known breakage seen again stands for a failure, but only where kept trees
 * are judged: no clean probe takes it for its own.
 */
static void remember_known(const struct probe_spec *spec, const char *tree_hex,
			   const struct probe_result *out)
{
	const struct probe_command *c = &spec->cmds[out->cmd_index];
	char key[SHA1_HEXSZ + 1], *what;

	if (!spec->cache_dir || out->exit_code <= 0 || out->exit_code > 255)
		return;
	command_key(key, tree_hex, c, spec, DOMAIN_INCREMENTAL);
	what = xstrfmt("%s: tree %s (a known breakage)", c->name ? c->name : "", tree_hex);
	if (verdict_put(spec->cache_dir, key, VERDICT_BAD, out->exit_code, what) < 0)
		log_warn("verdict cache: %s", nb_error_last());
	free(what);
}

int probe_run(struct probe_result *out, struct worker *w, const git_oid *commit, unsigned step,
	      const struct probe_spec *spec)
{
	char tree_hex[NB_OID_HEXSZ + 1];
	int err;

	reset(out);
	out->runs = 0;
	out->pristine_retried = out->incremental_only = out->clean = 0;
	memset(&out->tree, 0, sizeof(out->tree));
	if (commit_tree(&out->tree, w, commit) < 0) {
		infra(out, "%s", nb_error_last());
		return 0;
	}
	git_oid_tostr(tree_hex, sizeof(tree_hex), &out->tree);
	if (from_cache(out, tree_hex, spec))
		return 0;
	if (spec->runs_dir && (err = file_mkdir_p(spec->runs_dir, 0700)) < 0)
		return err;
	if ((err = attempt(out, w, commit, tree_hex, step, spec, spec->pristine)) < 0)
		return err;
	out->clean = spec->pristine;
	if (spec->pristine || !spec->pristine_retry || out->timed_out || out->cmd_index < 0 ||
	    out->verdict == PROBE_INFRA || out->exit_code == EXIT_SKIP)
		return 0;
	if (known_failure(out, w, spec)) {
		remember_known(spec, tree_hex, out);
		return 0;
	}
	/* an incremental tree can fail on its own: only a pristine failure counts */
	if ((err = attempt(out, w, commit, tree_hex, step, spec, 1)) < 0)
		return err;
	out->pristine_retried = 1;
	out->clean = 1;
	if (out->verdict == PROBE_GOOD) {
		out->incremental_only = 1;
		log_warn("probe %.12s: failed in an incremental tree, passed pristine",
			 git_oid_tostr_s(commit));
	}
	return 0;
}

struct probe_job {
	struct probe_result *out;
	struct worker *w;
	const git_oid *commit;
	unsigned step;
	const struct probe_spec *spec;
	int err;
	char *errmsg;
};

static void *job(void *arg)
{
	struct probe_job *j = arg;

	j->err = probe_run(j->out, j->w, j->commit, j->step, j->spec);
	if (j->err < 0)
		j->errmsg = xstrdup(nb_error_last());
	return NULL;
}

int probe_run_many(struct probe_result *out, struct worker **workers, const git_oid *commits,
		   size_t n, unsigned first_step, const struct probe_spec *spec)
{
	struct probe_job *jobs = xcalloc(n + 1, sizeof(*jobs));
	pthread_t *tids = xcalloc(n + 1, sizeof(*tids));
	char *started = xcalloc(n + 1, 1);
	size_t i;
	int err = 0;

	for (i = 0; i < n; i++) {
		jobs[i] = (struct probe_job){ &out[i], workers[i], &commits[i],
					      first_step + (unsigned)i, spec, 0, NULL };
		/* the last one runs here; so does any the system will not start */
		if (i + 1 < n && !pthread_create(&tids[i], NULL, job, &jobs[i]))
			started[i] = 1;
		else
			job(&jobs[i]);
	}
	for (i = 0; i < n; i++) {
		if (started[i])
			pthread_join(tids[i], NULL);
		if (jobs[i].err < 0 && !err)
			err = nb_error_set(jobs[i].err, "%s", jobs[i].errmsg);
		free(jobs[i].errmsg);
	}
	free(jobs);
	free(tids);
	free(started);
	return err;
}
