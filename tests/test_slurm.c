/* util/slurm on a real private single-node Slurm cluster (tests/slurm-cluster.sh). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <git2.h>

#include "merge/search/bisect_int.h"
#include "merge/search/probe_int.h"
#include "merge/worker/worker_int.h"
#include "tests/gitfixture.h"
#include "util/slurm.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

static char *cluster_dir;  /* the cluster's state, logs and jobcomp.txt */
static char *tmpdir;       /* the commands' working directory (a worker's tree) */

static int setup(void **state)
{
	char tmpl[] = "/tmp/nb-slurm-work-XXXXXX";

	if (!mkdtemp(tmpl))
		return -1;
	tmpdir = xstrdup(tmpl);
	return 0;
}

static int teardown(void **state)
{
	slurm_stop_on(NULL);  /* a failed test_stop_flag_cancels_jobs leaves it set */
	file_remove_tree(tmpdir);
	free(tmpdir);
	tmpdir = NULL;
	return 0;
}

/* What a plain local shell run gives, for comparison. */
static void run_local(struct runcmd_result *r, const char *shell)
{
	struct runcmd_opts o = RUNCMD_OPTS_INIT;

	o.shell = shell;
	o.cwd = tmpdir;
	assert_int_equal(runcmd_run(r, &o), 0);
}

static void run_slurm(struct runcmd_result *r, const char *shell, double timeout,
		      const struct slurm_opts *s)
{
	struct runcmd_opts o = RUNCMD_OPTS_INIT;

	o.shell = shell;
	o.cwd = tmpdir;
	o.timeout = timeout;
	assert_int_equal(slurm_run(r, &o, s), 0);
}

/* The output of a shell command run here (squeue, ls), trimmed. */
static char *sh_output(const char *cmd)
{
	const char *const argv[] = { "/bin/sh", "-c", cmd, NULL };
	struct strbuf sb = STRBUF_INIT;

	assert_int_equal(runcmd_capture(&sb, NULL, argv), 0);
	strbuf_trim(&sb);
	return strbuf_detach(&sb, NULL);
}

/* squeue lists none of our jobs now (after slurm_run() cancelled one, at once). */
static void assert_queue_empty(void)
{
	char *q = sh_output("squeue -h -o '%i %j %T'");
	char msg[512];

	if (!*q) {
		free(q);
		return;
	}
	snprintf(msg, sizeof(msg), "%s", q);
	free(q);
	fail_msg("squeue still lists: %s", msg);
}

/* Jobs that ended by themselves leave the queue within seconds (COMPLETING first). */
static void assert_queue_drains(void)
{
	int i;

	for (i = 0; i < 50; i++) {
		char *q = sh_output("squeue -h -o %i");
		int empty = !*q;

		free(q);
		if (empty)
			return;
		usleep(200000);
	}
	assert_queue_empty();
}

static void assert_no_status_files(void)
{
	char *cmd = xstrfmt("ls -A '%s'", tmpdir), *ls = sh_output(cmd);

	assert_string_equal(ls, "");
	free(ls);
	free(cmd);
}

static void test_exit_codes_like_local(void **state)
{
	const char *cmds[] = { "echo hello; exit 0", "echo hello; exit 1", "echo hello; exit 125",
			       "kill -9 $$", "exit 200", "kill -SEGV $$", "exit 137",
			       "echo out; echo err >&2; echo out2; echo err2 >&2; exit 2" };
	struct slurm_opts s = SLURM_OPTS_INIT;
	size_t i;

	for (i = 0; i < sizeof(cmds) / sizeof(*cmds); i++) {
		struct runcmd_result l = RUNCMD_RESULT_INIT, r = RUNCMD_RESULT_INIT;

		run_local(&l, cmds[i]);
		run_slurm(&r, cmds[i], 30, &s);
		assert_int_equal(r.runner_failed, 0);
		assert_int_equal(r.exec_failed, 0);
		assert_int_equal(r.timed_out, 0);
		/* a signal, as locally: 128+N and N (an exit 137 is no signal) */
		assert_int_equal(r.exit_code, l.exit_code);
		assert_int_equal(r.signal, l.signal);
		/* a SIGKILL we did not send counts as a limit (OOM), on Slurm too */
		assert_int_equal(r.limit_hit, l.limit_hit);
		if (i < 3)
			assert_non_null(strstr(r.output.buf, "hello\n"));
		/* the same output, in the same order, without srun's "Exited with" line */
		assert_string_equal(r.output.buf, l.output.buf);
		runcmd_result_release(&l);
		runcmd_result_release(&r);
	}
	assert_no_status_files();
	assert_queue_drains();
}

static void test_argv_env_log_and_name(void **state)
{
	const char *const argv[] = { "/bin/sh", "-c",
				     "echo \"$NEXTBOT_TREE $NEXTBOT_COMMIT $SLURM_JOB_NAME\"; pwd; "
				     "echo \"[$SECRET_TOKEN]\"; exit 3", NULL };
	const char *const env[] = { "NEXTBOT_TREE=mm", "NEXTBOT_COMMIT=0123456789abcdef0123",
				    NULL };
	struct slurm_opts s = SLURM_OPTS_INIT;
	struct runcmd_opts o = RUNCMD_OPTS_INIT;
	struct runcmd_result r = RUNCMD_RESULT_INIT;
	struct strbuf log = STRBUF_INIT;
	char *log_path = xstrfmt("%s.log", tmpdir), *want;

	setenv("SECRET_TOKEN", "leaked", 1);
	o.argv = argv;
	o.cwd = tmpdir;
	o.env = env;
	o.log_path = log_path;
	assert_int_equal(slurm_run(&r, &o, &s), 0);
	unsetenv("SECRET_TOKEN");
	assert_int_equal(r.exit_code, 3);
	assert_int_equal(r.runner_failed, 0);
	want = xstrfmt("mm 0123456789abcdef0123 mm:0123456789ab/%ld.", (long)getpid());
	assert_non_null(strstr(r.output.buf, want));
	free(want);
	assert_non_null(strstr(r.output.buf, tmpdir));
	/* the environment is runcmd's allow-list plus the command's, on Slurm too */
	assert_non_null(strstr(r.output.buf, "[]"));
	assert_int_equal(strbuf_read_file(&log, log_path, 0) >= 0, 1);
	assert_non_null(strstr(log.buf, "mm 0123456789abcdef0123"));
	unlink(log_path);
	free(log_path);
	strbuf_release(&log);
	runcmd_result_release(&r);
	assert_no_status_files();
}

/* As root, configured commands run as runner.user: on Slurm the job is that user's. */
static void test_runs_as_user(void **state)
{
	struct slurm_opts s = SLURM_OPTS_INIT;
	struct runcmd_opts o = RUNCMD_OPTS_INIT;
	struct runcmd_result r = RUNCMD_RESULT_INIT;

	char *dir = xstrfmt("%s/nobody", tmpdir);

	if (getuid() != 0) {
		free(dir);
		skip();
	}
	/* the working tree is the user's, as a worker's is, and reachable */
	assert_int_equal(file_mkdir_p(dir, 0700), 0);
	assert_int_equal(chown(dir, 65534, 65534), 0);
	assert_int_equal(chmod(tmpdir, 0711), 0);
	o.shell = "id -un; echo built >out; exit 1";
	o.cwd = dir;
	o.user = "nobody";
	assert_int_equal(slurm_run(&r, &o, &s), 0);
	assert_int_equal(r.runner_failed, 0);
	assert_int_equal(r.exit_code, 1);
	assert_non_null(strstr(r.output.buf, "nobody\n"));
	runcmd_result_release(&r);
	free(dir);
}

/*
 * RELIABILITY 33 on a cluster: the same sandbox wraps the step on the node.  The
 * command sees its tree writable and not the folder beside it (the status files);
 * it cannot reach a loopback TCP server of the host; a box that cannot be set up
 * is box_failed, not the command's exit 1.  Its status files live in runner_dir.
 */
static void test_boxed_step(void **state)
{
	struct slurm_opts s = SLURM_OPTS_INIT;
	struct runcmd_opts o = RUNCMD_OPTS_INIT;
	struct runcmd_result r = RUNCMD_RESULT_INIT;
	char *work = xstrfmt("%s/boxed/w0", tmpdir), *tree = xstrfmt("%s/tree", work);
	char *run = xstrfmt("%s/run", work), *secret = xstrfmt("%s/boxed/state.json", tmpdir);
	char *hidden = xstrfmt("%s/boxed", tmpdir), *bad = xstrfmt("%s/missing", tmpdir);
	const char *hide[] = { hidden, NULL }, *rw[] = { tree, NULL }, *rw_bad[] = { bad, NULL };
	struct runcmd_box box = { .bwrap = "/usr/bin/bwrap", .hide = hide, .writable = rw };
	struct strbuf sb = STRBUF_INIT;

	if (access(box.bwrap, X_OK)) {
		free(work), free(tree), free(run), free(secret), free(hidden), free(bad);
		skip();
	}
	assert_int_equal(file_mkdir_p(tree, 0711), 0);
	assert_int_equal(file_mkdir_p(run, 0700), 0);
	assert_int_equal(file_write_public(secret, "SECRET", 6), 0);
	assert_int_equal(chmod(tmpdir, 0711), 0);
	if (!getuid()) {
		assert_int_equal(chown(tree, 65534, 65534), 0);
		assert_int_equal(chown(run, 65534, 65534), 0);
		o.user = "nobody";
	}
	o.shell = "cat ../../state.json 2>/dev/null; ls .. ; echo built >out.o; "
		  "echo TMPDIR=$TMPDIR; exit 3";
	o.cwd = tree;
	o.runner_dir = run;
	o.box = &box;
	o.timeout = 120;
	assert_int_equal(slurm_run(&r, &o, &s), 0);
	assert_int_equal(r.runner_failed, 0);
	assert_false(r.box_failed);
	assert_int_equal(r.exit_code, 3);
	assert_null(strstr(r.output.buf, "SECRET"));
	assert_null(strstr(r.output.buf, "run\n"));   /* the status folder is not in the box */
	assert_non_null(strstr(r.output.buf, "TMPDIR=/tmp\n"));
	strbuf_addf(&sb, "%s/out.o", tree);
	assert_true(file_exists(sb.buf));

	/* a box that cannot come up on the node: not the command's exit 1 */
	box.writable = rw_bad;
	o.shell = "exit 0";
	assert_int_equal(slurm_run(&r, &o, &s), 0);
	assert_true(r.box_failed);
	assert_true(r.exec_failed);
	assert_int_equal(r.runner_failed, 0);
	strbuf_release(&sb);
	runcmd_result_release(&r);
	free(work), free(tree), free(run), free(secret), free(hidden), free(bad);
}

static void test_argv_not_found_like_local(void **state)
{
	const char *const argv[] = { "no-such-program-nextbot", "x", NULL };
	struct slurm_opts s = SLURM_OPTS_INIT;
	struct runcmd_opts o = RUNCMD_OPTS_INIT;
	struct runcmd_result l = RUNCMD_RESULT_INIT, r = RUNCMD_RESULT_INIT;

	o.argv = argv;
	o.cwd = tmpdir;
	assert_int_equal(runcmd_run(&l, &o), 0);
	assert_int_equal(slurm_run(&r, &o, &s), 0);
	assert_int_equal(r.exec_failed, l.exec_failed);
	assert_int_equal(r.exit_code, l.exit_code);
	assert_int_equal(r.runner_failed, 0);
	runcmd_result_release(&l);
	runcmd_result_release(&r);
}

static void test_timeout_cancels_job(void **state)
{
	struct slurm_opts s = SLURM_OPTS_INIT;
	struct runcmd_result r = RUNCMD_RESULT_INIT;
	struct strbuf pid = STRBUF_INIT;
	char *pidfile = xstrfmt("%s/sleeper.pid", cluster_dir);
	/* "never" only once the shell outlives the cancel's SIGTERM/SIGKILL by 10 s: the
	 * cancel signals the step's processes one by one, and on a loaded machine the
	 * shell may wake from `wait` (its sleep killed) before its own signal lands */
	char *cmd = xstrfmt("echo started; sleep 300 & echo $! >'%s'; wait; sleep 10; echo never",
			    pidfile);
	char *proc;

	run_slurm(&r, cmd, 2, &s);
	assert_int_equal(r.timed_out, 1);
	assert_int_equal(r.signal, SIGKILL);
	assert_int_equal(r.exit_code, 128 + SIGKILL);
	assert_int_equal(r.runner_failed, 0);
	assert_non_null(strstr(r.output.buf, "started"));
	assert_null(strstr(r.output.buf, "never"));
	assert_true(r.seconds < 60);
	runcmd_result_release(&r);
	/* the job is gone from the queue, and so is the step's process tree */
	assert_queue_empty();
	assert_true(strbuf_read_file(&pid, pidfile, 0) >= 0);
	strbuf_trim(&pid);
	assert_true(pid.len > 0);
	proc = xstrfmt("/proc/%s/cmdline", pid.buf);
	if (!access(proc, F_OK)) {
		struct strbuf cl = STRBUF_INIT;

		/* a reused pid would not be our sleep */
		strbuf_read_file(&cl, proc, 0);
		if (!strcmp(cl.buf, "sleep"))
			fail_msg("the step's 'sleep 300' (pid %s) still runs", pid.buf);
		strbuf_release(&cl);
	}
	free(proc);
	strbuf_release(&pid);
	free(cmd);
	free(pidfile);
	assert_no_status_files();
}

/*
 * The pattern nextbot's SIGTERM path uses: SIGTERM blocked, a thread waits for it,
 * cancels every job (slurm_cancel_all) and ends the process.
 */
static void *sigterm_thread(void *arg)
{
	sigset_t *set = arg;
	int sig;

	sigwait(set, &sig);
	slurm_cancel_all();
	_exit(128 + sig);
}

/* nextbot told to stop (SIGTERM) in the middle of a job: the job does not stay. */
static void test_sigterm_cancels_job(void **state)
{
	struct slurm_opts s = SLURM_OPTS_INIT;
	pid_t pid;
	int i, status, seen = 0;

	s.job_name = "sigterm";
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		struct runcmd_result r = RUNCMD_RESULT_INIT;
		struct runcmd_opts o = RUNCMD_OPTS_INIT;
		static sigset_t set;
		pthread_t tid;

		sigemptyset(&set);
		sigaddset(&set, SIGTERM);
		pthread_sigmask(SIG_BLOCK, &set, NULL);
		if (pthread_create(&tid, NULL, sigterm_thread, &set))
			_exit(2);
		o.shell = "sleep 300";
		o.cwd = tmpdir;
		slurm_run(&r, &o, &s);
		_exit(0);
	}
	for (i = 0; i < 100 && !seen; i++) {
		char *q = sh_output("squeue -h -t RUNNING -o %j");

		seen = !!strstr(q, "sigterm/");
		free(q);
		if (!seen)
			usleep(100000);
	}
	kill(pid, SIGTERM);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(seen);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGTERM);
	assert_queue_drains();
}

static void test_allocation_refused_is_infra(void **state)
{
	const char *const too_big[] = { "--cpus-per-task=64", NULL };
	struct slurm_opts s = SLURM_OPTS_INIT;
	struct runcmd_result r = RUNCMD_RESULT_INIT;

	/* refused at once: no such partition; srun exits 1 like `exit 1` would */
	s.partition = "no-such-partition";
	run_slurm(&r, "exit 0", 30, &s);
	assert_int_equal(r.runner_failed, 1);
	assert_int_equal(r.exec_failed, 1);
	assert_int_equal(r.exit_code, 1);
	assert_int_equal(r.timed_out, 0);
	assert_non_null(strstr(r.output.buf, "partition"));
	runcmd_result_release(&r);

	/* never satisfiable: more CPUs than the node has waits in the queue, then is
	   cancelled at the queue timeout */
	s.partition = NULL;
	s.srun_args = too_big;
	s.queue_timeout = 2;
	run_slurm(&r, "exit 0", 30, &s);
	assert_int_equal(r.runner_failed, 1);
	assert_int_equal(r.timed_out, 0);
	runcmd_result_release(&r);
	assert_queue_empty();
	assert_no_status_files();
}

/* A job that prints when it starts and ends, a second apart, run under `s`. */
struct job {
	struct slurm_opts s;
	struct runcmd_result r;
	int err;
};

static void *run_job(void *arg)
{
	struct job *j = arg;
	struct runcmd_opts o = RUNCMD_OPTS_INIT;

	o.shell = "date +start=%s.%N; sleep 1; date +end=%s.%N";
	o.cwd = tmpdir;
	o.timeout = 60;
	j->err = slurm_run(&j->r, &o, &j->s);
	return NULL;
}

static void test_concurrent_jobs(void **state)
{
	struct job jobs[3];
	pthread_t tids[3];
	double max_start = 0, min_end = 1e30;
	char *recorded, *cmd;
	int i;

	for (i = 0; i < 3; i++) {
		jobs[i] = (struct job){ .s = SLURM_OPTS_INIT, .r = RUNCMD_RESULT_INIT };
		jobs[i].s.job_name = "concurrent";
		assert_int_equal(pthread_create(&tids[i], NULL, run_job, &jobs[i]), 0);
	}
	for (i = 0; i < 3; i++)
		pthread_join(tids[i], NULL);
	for (i = 0; i < 3; i++) {
		const char *p, *q;

		assert_int_equal(jobs[i].err, 0);
		assert_int_equal(jobs[i].r.exit_code, 0);
		p = strstr(jobs[i].r.output.buf, "start=");
		q = strstr(jobs[i].r.output.buf, "end=");
		assert_non_null(p);
		assert_non_null(q);
		if (strtod(p + 6, NULL) > max_start)
			max_start = strtod(p + 6, NULL);
		if (strtod(q + 4, NULL) < min_end)
			min_end = strtod(q + 4, NULL);
		runcmd_result_release(&jobs[i].r);
	}
	/* all three were running at one moment: each started before any ended */
	if (!(max_start < min_end))
		fail_msg("the 3 jobs did not overlap: last start %.3f, first end %.3f",
			 max_start, min_end);
	/* and Slurm's job completion records have the three */
	cmd = xstrfmt("grep -c 'Name=concurrent/' '%s/jobcomp.txt'", cluster_dir);
	recorded = sh_output(cmd);
	assert_string_equal(recorded, "3");
	free(recorded);
	free(cmd);
}

static void test_max_jobs(void **state)
{
	struct job jobs[2];
	pthread_t tids[2];
	double start[2], end[2];
	int i;

	for (i = 0; i < 2; i++) {
		jobs[i] = (struct job){ .s = SLURM_OPTS_INIT, .r = RUNCMD_RESULT_INIT };
		jobs[i].s.max_jobs = 1;
		assert_int_equal(pthread_create(&tids[i], NULL, run_job, &jobs[i]), 0);
	}
	for (i = 0; i < 2; i++) {
		pthread_join(tids[i], NULL);
		assert_int_equal(jobs[i].err, 0);
		assert_int_equal(jobs[i].r.exit_code, 0);
		start[i] = strtod(strstr(jobs[i].r.output.buf, "start=") + 6, NULL);
		end[i] = strtod(strstr(jobs[i].r.output.buf, "end=") + 4, NULL);
		runcmd_result_release(&jobs[i].r);
	}
	/* one slot: one ran after the other */
	assert_true(end[0] <= start[1] || end[1] <= start[0]);
}

static volatile sig_atomic_t stop_now;

static void *request_stop(void *arg)
{
	char *q;
	int i;

	/* once the job runs (squeue lists it), nextbot is told to stop */
	for (i = 0; i < 600; i++) {
		q = sh_output("squeue -h -t R -o %j");
		if (strstr(q, "stopping/")) {
			free(q);
			break;
		}
		free(q);
		usleep(200000);
	}
	stop_now = 1;
	return NULL;
}

/*
 * "never" only if the sleep ran its 40 s: the cancel signals the step's processes one
 * by one, and on a loaded machine the shell may wake from its killed sleep before its
 * own signal lands (`;` then printed "never" for a job that was cancelled).
 */
#define LONG_JOB "echo started; sleep 40 && echo never"

/* The bot's SIGTERM flag set: the running job is cancelled, nothing new is submitted. */
static void test_stop_flag_cancels_jobs(void **state)
{
	struct slurm_opts s = SLURM_OPTS_INIT;
	struct runcmd_result r = RUNCMD_RESULT_INIT;
	pthread_t tid;
	char *cmd, *count;

	s.job_name = "stopping";
	stop_now = 0;
	slurm_stop_on(&stop_now);
	assert_int_equal(pthread_create(&tid, NULL, request_stop, NULL), 0);
	run_slurm(&r, LONG_JOB, 600, &s);
	pthread_join(tid, NULL);
	assert_int_equal(r.runner_failed, 1);
	assert_int_equal(r.timed_out, 0);
	assert_non_null(strstr(r.output.buf, "started"));
	assert_null(strstr(r.output.buf, "never"));
	runcmd_result_release(&r);
	assert_queue_empty();
	/* stopping: the next command never reaches the cluster */
	s.job_name = "after-stop";
	run_slurm(&r, "echo ran", 600, &s);
	assert_int_equal(r.runner_failed, 1);
	assert_int_equal(r.exit_code, -1);
	assert_null(strstr(r.output.buf, "ran"));
	runcmd_result_release(&r);
	cmd = xstrfmt("grep -c 'Name=after-stop/' '%s/jobcomp.txt' || :", cluster_dir);
	count = sh_output(cmd);
	assert_string_equal(count, "0");
	free(count);
	free(cmd);
	slurm_stop_on(NULL);
	assert_no_status_files();
}

/* A thread's slurm_run() of a long command, for test_cancel_all. */
struct long_job {
	pthread_t tid;
	struct slurm_opts s;
	struct runcmd_result r;
};

static void *run_long_job(void *arg)
{
	struct long_job *j = arg;

	run_slurm(&j->r, LONG_JOB, 600, &j->s);
	return NULL;
}

/*
 * slurm_cancel_all() with two jobs running: both are cancelled at once, their
 * slurm_run() calls return as runner failures (no verdict), squeue lists neither,
 * and neither command ran to its end.  With nothing in flight it is a no-op.
 */
static void test_cancel_all(void **state)
{
	struct long_job jobs[2];
	char *q = NULL;
	int i, n;

	slurm_cancel_all();      /* nothing in flight: a no-op, never an error */
	assert_queue_drains();
	for (i = 0; i < 2; i++) {
		jobs[i].s = (struct slurm_opts)SLURM_OPTS_INIT;
		jobs[i].s.job_name = i ? "cancel-b" : "cancel-a";
		jobs[i].r = (struct runcmd_result)RUNCMD_RESULT_INIT;
		assert_int_equal(pthread_create(&jobs[i].tid, NULL, run_long_job, &jobs[i]), 0);
	}
	/* both running (squeue lists them as R) before the cancel */
	for (n = 0; n < 300; n++) {
		free(q);
		q = sh_output("squeue -h -t R -o %j");
		if (strstr(q, "cancel-a/") && strstr(q, "cancel-b/"))
			break;
		usleep(100000);
	}
	assert_non_null(strstr(q, "cancel-a/"));
	assert_non_null(strstr(q, "cancel-b/"));
	free(q);
	slurm_cancel_all();
	for (i = 0; i < 2; i++) {
		assert_int_equal(pthread_join(jobs[i].tid, NULL), 0);
		assert_int_equal(jobs[i].r.runner_failed, 1);
		assert_int_equal(jobs[i].r.timed_out, 0);
		assert_null(strstr(jobs[i].r.output.buf, "never"));
		runcmd_result_release(&jobs[i].r);
	}
	assert_queue_empty();
	assert_no_status_files();
}

/* ---- bisection over 1,000 commits, 3 probes at a time as 3 Slurm jobs ---- */

#define BISECT_JOBS 3

struct bisect_ctx {
	struct worker *workers[BISECT_JOBS];
	struct probe_spec spec;
	unsigned step;
};

static int test_nodes(void *data, const struct bisect_graph *g, const size_t *nodes, size_t n,
		      enum bisect_verdict *out)
{
	struct bisect_ctx *b = data;
	struct probe_result res[BISECT_JOBS];
	git_oid ids[BISECT_JOBS] = { 0 };
	size_t i;

	for (i = 0; i < n; i++) {
		git_oid_fromstr(&ids[i], g->nodes[nodes[i]].id.hex);
		res[i] = (struct probe_result)PROBE_RESULT_INIT;
	}
	assert_int_equal(probe_run_many(res, b->workers, ids, n, b->step + 1, &b->spec), 0);
	for (i = 0; i < n; i++) {
		if (res[i].verdict == PROBE_INFRA)
			fail_msg("probe INFRA: %s", res[i].infra_reason);
		out[i] = res[i].verdict == PROBE_GOOD ? BISECT_GOOD : BISECT_BAD;
		probe_result_release(&res[i]);
	}
	b->step += (unsigned)n;
	return 0;
}

/* The most intervals ("start end" lines) that all contain one moment. */
static int max_overlap(const char *path)
{
	double st[64], en[64];
	int n = 0, best = 0, i, j;
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	while (n < 64 && fscanf(f, "%lf %lf", &st[n], &en[n]) == 2)
		n++;
	fclose(f);
	for (i = 0; i < n; i++) {
		int c = 0;

		for (j = 0; j < n; j++)
			c += st[j] <= st[i] && st[i] < en[j];
		if (c > best)
			best = c;
	}
	return best;
}

static void make_line(const char *repo)
{
	/* a good commit and 1,000 after it; the file `state` says bad from commit 614 on.
	   fast-import with a heap that stays: without the top pad glibc gives the heap's
	   top back after every commit and grows it again (a brk call costs ~90 us here) */
	char *cmd = xstrfmt(
		"git init -q --bare '%s' && i=1; while [ $i -le 1001 ]; do "
		"s=good; [ $i -ge 614 ] && s=bad; "
		"printf 'commit refs/heads/master\ncommitter t <t@example.org> %%d +0000\n"
		"data 6\nc%%04d\nM 644 inline state\ndata %%d\n%%s\n\n' "
		"$((1700000000 + i)) $i $((${#s} + 1)) $s; i=$((i + 1)); done | "
		"GLIBC_TUNABLES=glibc.malloc.top_pad=16777216:glibc.malloc.trim_threshold=67108864 "
		"git --git-dir='%s' fast-import --quiet", repo, repo);

	if (system(cmd) != 0)
		fail_msg("cannot create the 1,000-commit repository");
	free(cmd);
}

static void test_bisect_1000_commits_3_jobs(void **state)
{
	char *repo = xstrfmt("%s/line.git", tmpdir);
	char *times = xstrfmt("%s/intervals", cluster_dir);
	char *shell = xstrfmt("s=$(date +%%s.%%N); sleep 1; echo \"$s $(date +%%s.%%N)\" >>'%s'; "
			      "grep -q good state", times);
	struct probe_command cmd = { .name = "check", .shell = shell, .timeout = 60 };
	struct slurm_opts so = SLURM_OPTS_INIT;
	struct worker_opts wo = { .exe = fixture_nextbot() };
	struct bisect_ctx b = { .spec = { .cmds = &cmd, .cmds_nr = 1, .runner = "slurm",
					  .slurm = &so, .tree_name = "line" } };
	struct bisect_graph g = BISECT_GRAPH_INIT;
	struct bisect_result r = BISECT_RESULT_INIT;
	git_repository *rp;
	git_object *bad, *good;
	git_oid good_id;
	int i;

	make_line(repo);
	so.max_jobs = BISECT_JOBS;
	assert_int_equal(git_repository_open(&rp, repo), 0);
	assert_int_equal(git_revparse_single(&bad, rp, "master"), 0);
	assert_int_equal(git_revparse_single(&good, rp, "master~1000"), 0);
	git_oid_cpy(&good_id, git_object_id(good));
	assert_int_equal(bisect_graph_load(&g, rp, git_object_id(bad), &good_id, 1, 0), 0);
	assert_int_equal((int)g.nr, 1000);
	for (i = 0; i < BISECT_JOBS; i++) {
		char *dir = xstrfmt("%s/w%d", tmpdir, i);

		assert_int_equal(worker_open(&b.workers[i], repo, dir, &wo), 0);
		free(dir);
	}
	assert_int_equal(bisect_run(&r, &g, BISECT_JOBS, test_nodes, &b), 0);
	print_message("# %u rounds, %u steps\n", r.rounds, r.steps);
	assert_int_equal(r.outcome, BISECT_FOUND);
	assert_string_equal(g.nodes[r.first_bad].subject, "c0614");
	if (r.rounds > 5)
		fail_msg("%u rounds for 1,000 commits with 3 jobs", r.rounds);
	/* the probes of a round ran as concurrent jobs */
	if (max_overlap(times) < BISECT_JOBS)
		fail_msg("no moment with %d jobs running at once", BISECT_JOBS);
	assert_queue_drains();
	for (i = 0; i < BISECT_JOBS; i++)
		worker_free(b.workers[i]);
	bisect_result_release(&r);
	bisect_graph_release(&g);
	git_object_free(bad);
	git_object_free(good);
	git_repository_free(rp);
	free(shell);
	free(times);
	free(repo);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

static int start_cluster(void)
{
	char tmpl[] = "/tmp/nb-slurm-cluster-XXXXXX";
	char *cmd;
	int rc;

	if (!mkdtemp(tmpl)) {
		perror("mkdtemp");
		return -1;
	}
	cluster_dir = xstrdup(tmpl);
	cmd = xstrfmt("sh tests/slurm-cluster.sh start '%s' >/dev/null", cluster_dir);
	rc = system(cmd);
	free(cmd);
	if (rc != 0) {
		fprintf(stderr, "test_slurm: FAIL: the private Slurm cluster did not start "
			"(tests/slurm-cluster.sh, see its message above); "
			"Slurm tests cannot run\n");
		return -1;
	}
	cmd = xstrfmt("%s/slurm.conf", cluster_dir);
	setenv("SLURM_CONF", cmd, 1);
	free(cmd);
	return 0;
}

static void stop_cluster(void)
{
	char *cmd = xstrfmt("sh tests/slurm-cluster.sh stop '%s'", cluster_dir);

	if (system(cmd) != 0)
		fprintf(stderr, "test_slurm: stopping the cluster failed\n");
	free(cmd);
	if (!getenv("KEEP"))
		file_remove_tree(cluster_dir);
	free(cluster_dir);
}

static pid_t main_pid;

/* The test binary dying (an interrupt, a crash) still stops the cluster it started. */
static void on_fatal(int sig)
{
	if (getpid() == main_pid && cluster_dir) {
		pid_t pid = fork();

		if (pid == 0) {
			execl("/bin/sh", "sh", "tests/slurm-cluster.sh", "stop", cluster_dir,
			      (char *)NULL);
			_exit(127);
		}
		if (pid > 0)
			waitpid(pid, NULL, 0);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_exit_codes_like_local),
		T(test_argv_env_log_and_name),
		T(test_argv_not_found_like_local),
		T(test_runs_as_user),
		T(test_boxed_step),
		T(test_timeout_cancels_job),
		T(test_sigterm_cancels_job),
		T(test_allocation_refused_is_infra),
		T(test_concurrent_jobs),
		T(test_max_jobs),
		T(test_cancel_all),
		T(test_stop_flag_cancels_jobs),
		T(test_bisect_1000_commits_3_jobs),
	};
	int failed;

	main_pid = getpid();
	signal(SIGINT, on_fatal);
	signal(SIGTERM, on_fatal);
	signal(SIGSEGV, on_fatal);
	signal(SIGABRT, on_fatal);
	if (start_cluster() < 0)
		return 1;
	git_libgit2_init();
	failed = cmocka_run_group_tests_name("slurm", tests, NULL, NULL);
	git_libgit2_shutdown();
	stop_cluster();
	return failed;
}
