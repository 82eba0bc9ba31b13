/* Unit tests for util/runcmd: exit status, timeouts, process trees, output caps, env, users. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/runcmd.h"
#include "util/cgroup.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

static char *tmpdir;

static int setup(void **state)
{
	char tmpl[] = "/tmp/nb-runcmd-XXXXXX";

	if (!mkdtemp(tmpl))
		return -1;
	tmpdir = xstrdup(tmpl);
	return 0;
}

static int teardown(void **state)
{
	file_remove_tree(tmpdir);
	free(tmpdir);
	tmpdir = NULL;
	return 0;
}

static int run_shell(struct runcmd_result *res, const char *shell)
{
	struct runcmd_opts o = RUNCMD_OPTS_INIT;

	o.shell = shell;
	o.cwd = tmpdir;
	return runcmd_run(res, &o);
}

static void test_exit_codes(void **state)
{
	struct runcmd_result res = RUNCMD_RESULT_INIT;
	const char *const t[] = { "true", NULL };
	struct runcmd_opts o = RUNCMD_OPTS_INIT;

	o.argv = t;
	assert_int_equal(runcmd_run(&res, &o), 0);
	assert_int_equal(res.exit_code, 0);
	assert_int_equal(res.signal, 0);
	assert_false(res.exec_failed);

	assert_int_equal(run_shell(&res, "exit 3"), 0);
	assert_int_equal(res.exit_code, 3);
	assert_int_equal(run_shell(&res, "exit 125"), 0);
	assert_int_equal(res.exit_code, 125);
	assert_false(res.timed_out);
	assert_false(res.limit_hit);
	runcmd_result_release(&res);
}

static void test_signal(void **state)
{
	struct runcmd_result res = RUNCMD_RESULT_INIT;
	const char *const argv[] = { "sh", "-c", "kill -TERM $$", NULL };
	struct runcmd_opts o = RUNCMD_OPTS_INIT;

	o.argv = argv;
	assert_int_equal(runcmd_run(&res, &o), 0);
	assert_int_equal(res.signal, SIGTERM);
	assert_int_equal(res.exit_code, 128 + SIGTERM);
	assert_false(res.timed_out);
	assert_false(res.limit_hit);
	runcmd_result_release(&res);
}

static void test_output_merged(void **state)
{
	struct runcmd_result res = RUNCMD_RESULT_INIT;

	assert_int_equal(run_shell(&res, "echo out; echo err >&2; pwd"), 0);
	assert_int_equal(res.exit_code, 0);
	assert_non_null(strstr(res.output.buf, "out\n"));
	assert_non_null(strstr(res.output.buf, "err\n"));
	assert_non_null(strstr(res.output.buf, tmpdir));
	assert_int_equal(res.output_total, res.output.len);
	runcmd_result_release(&res);
}

/* RELIABILITY 14: a command that hangs is killed at its wall-clock timeout, tree and all. */
static void test_timeout(void **state)
{
	struct runcmd_result res = RUNCMD_RESULT_INIT;
	const char *const argv[] = { "sleep", "1000", NULL };
	struct runcmd_opts o = RUNCMD_OPTS_INIT;

	o.argv = argv;
	o.timeout = 0.5;
	assert_int_equal(runcmd_run(&res, &o), 0);
	assert_true(res.timed_out);
	assert_int_equal(res.signal, SIGKILL);
	assert_false(res.limit_hit);
	assert_true(res.seconds >= 0.5);
	runcmd_result_release(&res);
}

static pid_t read_pid(const char *name);

/*
 * Ended early (cancelled or stopped): not by its time limit or a resource limit, well
 * within 30 s, and its grandchild (pid in gc.pid) gone with it.
 */
static void assert_ended_early(const struct runcmd_result *res)
{
	pid_t gc;

	assert_false(res->timed_out);
	assert_false(res->limit_hit);
	assert_true(res->seconds < 30);
	gc = read_pid("gc.pid");
	assert_true(gc > 1);
	assert_int_equal(kill(gc, 0), -1);
}
static volatile int cancel_flag;

static void *cancel_soon(void *unused)
{
	struct timespec ts = { 0, 300000000L };

	nanosleep(&ts, NULL);
	cancel_flag = 1;
	return NULL;
}

/* A result no longer wanted: the command (and what it started) dies within 0.1 s. */
static void test_cancel(void **state)
{
	struct runcmd_result res = RUNCMD_RESULT_INIT;
	struct runcmd_opts o = RUNCMD_OPTS_INIT;
	char *ran = xstrfmt("%s/ran.txt", tmpdir);
	pthread_t tid;

	o.shell = "sh -c 'echo $$ > gc.pid; exec sleep 1000' & wait";
	o.cwd = tmpdir;
	o.timeout = 60;
	o.cancel = &cancel_flag;
	cancel_flag = 0;
	assert_int_equal(pthread_create(&tid, NULL, cancel_soon, NULL), 0);
	assert_int_equal(runcmd_run(&res, &o), 0);
	pthread_join(tid, NULL);
	assert_true(res.runner_failed);
	assert_ended_early(&res);
	runcmd_result_release(&res);
	/* cancelled before it starts: nothing runs */
	res = (struct runcmd_result)RUNCMD_RESULT_INIT;
	o.shell = "echo ran > ran.txt";
	assert_int_equal(runcmd_run(&res, &o), 0);
	assert_true(res.runner_failed);
	assert_false(file_exists(ran));
	runcmd_result_release(&res);
	free(ran);
}

static pid_t read_pid(const char *name)
{
	struct strbuf sb = STRBUF_INIT;
	char *path = xstrfmt("%s/%s", tmpdir, name);
	long pid = -1;

	if (!strbuf_read_file(&sb, path, 0)) {
		strbuf_trim(&sb);
		if (str_to_long(sb.buf, &pid) < 0)
			pid = -1;
	}
	strbuf_release(&sb);
	free(path);
	return (pid_t)pid;
}

/* The grandchild calls setsid, keeps the output pipe open and sleeps: it must not survive. */
#define SETSID_GRANDCHILD                                                                  \
	"setsid sh -c 'echo $$ > gc.pid; exec sleep 1000' & "                              \
	"while [ ! -s gc.pid ]; do sleep 0.01; done; echo started"

static void test_setsid_grandchild_killed_on_exit(void **state)
{
	struct runcmd_result res = RUNCMD_RESULT_INIT;
	pid_t gc;

	assert_int_equal(run_shell(&res, SETSID_GRANDCHILD), 0);
	assert_int_equal(res.exit_code, 0);
	assert_false(res.timed_out);
	assert_non_null(strstr(res.output.buf, "started"));
	gc = read_pid("gc.pid");
	assert_true(gc > 1);
	assert_int_equal(kill(gc, 0), -1);
	assert_int_equal(errno, ESRCH);
	runcmd_result_release(&res);
}

static void test_setsid_grandchild_killed_on_timeout(void **state)
{
	struct runcmd_result res = RUNCMD_RESULT_INIT;
	struct runcmd_opts o = RUNCMD_OPTS_INIT;
	pid_t gc;

	o.shell = SETSID_GRANDCHILD "; sleep 1000";
	o.cwd = tmpdir;
	o.timeout = 1;
	assert_int_equal(runcmd_run(&res, &o), 0);
	assert_true(res.timed_out);
	gc = read_pid("gc.pid");
	assert_true(gc > 1);
	assert_int_equal(kill(gc, 0), -1);
	assert_int_equal(errno, ESRCH);
	runcmd_result_release(&res);
}

/* RELIABILITY 14: 100 MB of output: memory bounded, head and tail kept. */
static void test_100mb_output(void **state)
{
	struct runcmd_result res = RUNCMD_RESULT_INIT;
	const char *const argv[] = { "head", "-c", "100000000", "/dev/zero", NULL };
	struct runcmd_opts o = RUNCMD_OPTS_INIT;
	char *marker = xstrfmt("[... %d bytes omitted ...]", 100000000 - 1024 * 1024);

	o.argv = argv;
	assert_int_equal(runcmd_run(&res, &o), 0);
	assert_int_equal(res.exit_code, 0);
	assert_int_equal(res.output_total, 100000000);
	assert_true(res.output.len < 1024 * 1024 + 100);
	assert_true(res.output.len > 1024 * 1024);
	assert_true(res.output.alloc < 4 * 1024 * 1024);
	assert_non_null(memmem(res.output.buf, res.output.len, marker, strlen(marker)));
	free(marker);
	runcmd_result_release(&res);
}

static void test_head_and_tail(void **state)
{
	struct runcmd_result res = RUNCMD_RESULT_INIT;
	struct runcmd_opts o = RUNCMD_OPTS_INIT;
	struct strbuf log = STRBUF_INIT;
	char *log_path = xstrfmt("%s/cmd.log", tmpdir);
	const char *want = "01234\n[... 10 bytes omitted ...]\nfghij";

	o.shell = "printf 0123456789; printf abcdefghij";
	o.output_cap = 10;
	o.log_path = log_path;
	assert_int_equal(runcmd_run(&res, &o), 0);
	assert_int_equal(res.output_total, 20);
	assert_string_equal(res.output.buf, want);
	assert_int_equal(strbuf_read_file(&log, log_path, 0), 0);
	assert_string_equal(log.buf, want);

	/* Exactly at the cap nothing is omitted. */
	o.shell = "printf 0123456789";
	assert_int_equal(runcmd_run(&res, &o), 0);
	assert_string_equal(res.output.buf, "0123456789");
	strbuf_release(&log);
	free(log_path);
	runcmd_result_release(&res);
}

static void test_exec_failure(void **state)
{
	struct runcmd_result res = RUNCMD_RESULT_INIT;
	struct runcmd_opts o = RUNCMD_OPTS_INIT;
	const char *const missing[] = { "nextbot-no-such-program", "x", NULL };
	const char *const abs_missing[] = { "/nonexistent/prog", NULL };
	const char *noexec[] = { NULL, NULL };
	char *path = xstrfmt("%s/not-executable", tmpdir);

	o.argv = missing;
	assert_int_equal(runcmd_run(&res, &o), 0);
	assert_true(res.exec_failed);
	assert_int_equal(res.exit_code, 127);

	o.argv = abs_missing;
	assert_int_equal(runcmd_run(&res, &o), 0);
	assert_true(res.exec_failed);
	assert_int_equal(res.exit_code, 127);

	assert_int_equal(file_write_atomic(path, "echo hi\n", 8), 0);
	noexec[0] = path;
	o.argv = noexec;
	assert_int_equal(runcmd_run(&res, &o), 0);
	assert_true(res.exec_failed);
	assert_int_equal(res.exit_code, 126);

	/* The shell reports its own "not found": that is the command's status, not ours. */
	assert_int_equal(run_shell(&res, "nextbot-no-such-program"), 0);
	assert_false(res.exec_failed);
	assert_int_equal(res.exit_code, 127);
	free(path);
	runcmd_result_release(&res);
}

/* RELIABILITY 15: a build that reads the bot's secrets finds an allow-listed environment. */
static void test_env_allow_list(void **state)
{
	struct runcmd_result res = RUNCMD_RESULT_INIT;
	struct runcmd_opts o = RUNCMD_OPTS_INIT;
	const char *const env[] = { "NB_TREE=mm-next", "LANG=C.UTF-8", NULL };
	const char *const argv[] = { "env", NULL };

	setenv("NEXTBOT_TEST_SECRET", "hunter2", 1);
	setenv("LC_NB_TEST", "kept", 1);
	o.argv = argv;
	o.env = env;
	assert_int_equal(runcmd_run(&res, &o), 0);
	assert_null(strstr(res.output.buf, "hunter2"));
	assert_non_null(strstr(res.output.buf, "NB_TREE=mm-next\n"));
	assert_non_null(strstr(res.output.buf, "LC_NB_TEST=kept\n"));
	assert_non_null(strstr(res.output.buf, "\nPATH=") || !strncmp(res.output.buf, "PATH=", 5)
				? "ok" : NULL);
	assert_non_null(strstr(res.output.buf, "LANG=C.UTF-8\n"));

	o.env = NULL;
	o.inherit_env = 1;
	assert_int_equal(runcmd_run(&res, &o), 0);
	assert_non_null(strstr(res.output.buf, "NEXTBOT_TEST_SECRET=hunter2"));
	unsetenv("NEXTBOT_TEST_SECRET");
	unsetenv("LC_NB_TEST");
	runcmd_result_release(&res);
}

/* RELIABILITY 15: nor the bot's file descriptors. */
static void test_fds_not_inherited(void **state)
{
	struct runcmd_result res = RUNCMD_RESULT_INIT;
	struct runcmd_opts o = RUNCMD_OPTS_INIT;
	int fd = open("/dev/null", O_RDONLY); /* deliberately without O_CLOEXEC */
	char *cmd;

	assert_true(fd >= 3);
	cmd = xstrfmt("if [ -e /proc/$$/fd/%d ]; then echo leaked; else echo clean; fi", fd);
	o.shell = cmd;
	assert_int_equal(runcmd_run(&res, &o), 0);
	assert_string_equal(res.output.buf, "clean\n");
	close(fd);
	free(cmd);
	runcmd_result_release(&res);
}

static void test_stdin_and_cwd(void **state)
{
	struct runcmd_result res = RUNCMD_RESULT_INIT;
	struct runcmd_opts o = RUNCMD_OPTS_INIT;
	const char *const cat[] = { "cat", NULL };
	char *in = xstrfmt("%s/input", tmpdir);
	char *missing = xstrfmt("%s/no/such/dir", tmpdir);

	assert_int_equal(file_write_atomic(in, "from stdin\n", 11), 0);
	o.argv = cat;
	assert_int_equal(runcmd_run(&res, &o), 0);
	assert_string_equal(res.output.buf, ""); /* /dev/null by default */
	o.stdin_path = in;
	assert_int_equal(runcmd_run(&res, &o), 0);
	assert_string_equal(res.output.buf, "from stdin\n");

	o.cwd = missing;
	assert_true(runcmd_run(&res, &o) < 0);
	assert_non_null(strstr(nb_error_last(), missing));
	assert_int_equal(res.exit_code, -1);
	free(in);
	free(missing);
	runcmd_result_release(&res);
}

static void assert_limit_text(const struct runcmd_result *r, const char *want)
{
	struct strbuf sb = STRBUF_INIT;

	runcmd_limit_describe(&sb, r);
	if (strcmp(sb.buf, want))
		fail_msg("limit named '%s', wanted '%s'", sb.buf, want);
	strbuf_release(&sb);
}

static void test_fsize_limit(void **state)
{
	struct runcmd_result res = RUNCMD_RESULT_INIT;
	struct runcmd_opts o = RUNCMD_OPTS_INIT;
	const char *const dd[] = { "dd", "if=/dev/zero", "of=big", "bs=65536", "count=64", NULL };

	o.argv = dd;
	o.cwd = tmpdir;
	o.limits.fsize = 256 * 1024;
	assert_int_equal(runcmd_run(&res, &o), 0);
	assert_int_equal(res.signal, SIGXFSZ);
	assert_true(res.limit_hit);
	assert_false(res.timed_out);

	/* Through a shell the signal becomes an exit status; still a limit. */
	o.argv = NULL;
	o.shell = "dd if=/dev/zero of=big2 bs=65536 count=64 2>/dev/null; exit $?";
	assert_int_equal(runcmd_run(&res, &o), 0);
	assert_true(res.limit_hit);
	assert_int_equal(res.limit, RUNCMD_LIMIT_FILE_SIZE);
	assert_limit_text(&res, "killed: file size limit 256 KiB");
	runcmd_result_release(&res);
}

/*
 * RELIABILITY 16: a memory hog and a fork bomb are stopped by their limits and
 * named.  The memory one needs a cgroup (this host's, v2 or v1); without one it is
 * skipped, as the limit is then RLIMIT_AS and the allocation simply fails.  The fork
 * bomb runs under a process limit of 64 only, and a timeout: CI shares the machine.
 */
static void test_memory_limit_named(void **state)
{
	struct runcmd_result res = RUNCMD_RESULT_INIT;
	struct runcmd_opts o = RUNCMD_OPTS_INIT;
	struct strbuf why = STRBUF_INIT;

	if (cgroup_available(&why) == CGROUP_NONE) {
		print_message("# no cgroup here (%s)\n", why.buf);
		strbuf_release(&why);
		skip();
	}
	strbuf_release(&why);
	/* 20 GiB, touched page by page; the limit is 64 MiB */
	o.argv = (const char *const[]){ "/usr/bin/python3", "-c",
					"b = bytearray(20 << 30); print('ALLOCATED')", NULL };
	o.cwd = tmpdir;
	o.timeout = 120;
	o.limits.memory = 64LL << 20;
	o.limits.processes = 64;
	assert_int_equal(runcmd_run(&res, &o), 0);
	assert_null(strstr(res.output.buf, "ALLOCATED"));
	assert_true(res.limit_hit);
	assert_int_equal(res.limit, RUNCMD_LIMIT_MEMORY);
	assert_limit_text(&res, "killed: memory limit 64 MiB");
	runcmd_result_release(&res);
}

static void test_fork_bomb_named(void **state)
{
	struct runcmd_result res = RUNCMD_RESULT_INIT;
	struct runcmd_opts o = RUNCMD_OPTS_INIT;

	/* each process starts two more, forever, and fails when it cannot */
	o.shell = "b() { b | b & }; b; sleep 3; exit 1";
	o.cwd = tmpdir;
	o.timeout = 60;
	o.limits.processes = 64;
	o.limits.memory = 256LL << 20;
	if (!geteuid())
		o.user = "nobody";
	assert_int_equal(chmod(tmpdir, 0755), 0);
	assert_int_equal(runcmd_run(&res, &o), 0);
	assert_false(res.timed_out);
	if (cgroup_available(NULL) == CGROUP_NONE) {
		/* RLIMIT_NPROC stood in: the bomb stopped, but nothing tells why */
		runcmd_result_release(&res);
		return;
	}
	assert_true(res.limit_hit);
	assert_int_equal(res.limit, RUNCMD_LIMIT_PROCESSES);
	assert_limit_text(&res, "stopped: process limit 64 reached");
	runcmd_result_release(&res);
}

static void test_cpu_and_time_named(void **state)
{
	struct runcmd_result res = RUNCMD_RESULT_INIT;
	struct runcmd_opts o = RUNCMD_OPTS_INIT;

	o.shell = "while :; do :; done";
	o.cwd = tmpdir;
	o.timeout = 60;
	o.limits.cpu = 1;
	assert_int_equal(runcmd_run(&res, &o), 0);
	assert_true(res.limit_hit);
	assert_int_equal(res.limit, RUNCMD_LIMIT_CPU);
	assert_limit_text(&res, "killed: CPU time limit 1s");
	o.limits.cpu = 0;
	o.shell = "sleep 100";
	o.timeout = 1;
	assert_int_equal(runcmd_run(&res, &o), 0);
	assert_true(res.timed_out);
	assert_false(res.limit_hit);
	assert_limit_text(&res, "timed out after 1s");
	runcmd_result_release(&res);
}

static void test_user_drop(void **state)
{
	struct runcmd_result res = RUNCMD_RESULT_INIT;
	struct runcmd_opts o = RUNCMD_OPTS_INIT;
	char *priv = xstrfmt("%s/private", tmpdir);
	char *work = xstrfmt("%s/private/work", tmpdir);
	char *file = xstrfmt("%s/private/work/old", tmpdir);
	char *made = xstrfmt("%s/private/work/new", tmpdir);
	struct stat st;

	if (geteuid() != 0) {
		free(priv), free(work), free(file), free(made);
		skip();
	}
	assert_int_equal(file_mkdir_p(work, 0700), 0);
	assert_int_equal(chmod(priv, 0700), 0);
	assert_int_equal(file_write_atomic(file, "x", 1), 0);
	/* the working tree is the user's already: runcmd hands nothing over */
	assert_int_equal(chown(work, 65534, 65534), 0);
	assert_int_equal(chown(file, 65534, 65534), 0);
	o.shell = "id -u; echo more >> old && touch new && echo ok";
	o.cwd = work;
	o.user = "nobody";
	/* the working directory is entered as the user: a 0700 folder above stops it */
	assert_true(runcmd_run(&res, &o) < 0);
	assert_non_null(strstr(nb_error_last(), "working directory"));
	assert_int_equal(chmod(priv, 0711), 0);
	assert_int_equal(chmod(tmpdir, 0711), 0);
	assert_int_equal(runcmd_run(&res, &o), 0);
	assert_int_equal(res.exit_code, 0);
	assert_string_equal(res.output.buf, "65534\nok\n");
	assert_int_equal(stat(made, &st), 0);
	assert_int_equal(st.st_uid, 65534);
	assert_int_equal(stat(priv, &st), 0);
	assert_int_equal(st.st_uid, 0);

	o.user = "nextbot-no-such-user";
	assert_true(runcmd_run(&res, &o) < 0);
	assert_non_null(strstr(nb_error_last(), "nextbot-no-such-user"));
	free(priv), free(work), free(file), free(made);
	runcmd_result_release(&res);
}

static void test_capture(void **state)
{
	struct strbuf out = STRBUF_INIT;
	const char *const ok[] = { "sh", "-c", "echo visible; echo hidden >&2", NULL };
	const char *const bad[] = { "sh", "-c", "echo partial; echo 'fatal: oops' >&2; exit 2",
				    NULL };
	const char *const missing[] = { "nextbot-no-such-program", NULL };

	assert_int_equal(runcmd_capture(&out, tmpdir, ok), 0);
	assert_string_equal(out.buf, "visible\n");
	strbuf_reset(&out);
	assert_true(runcmd_capture(&out, tmpdir, bad) < 0);
	assert_string_equal(out.buf, "");
	assert_non_null(strstr(nb_error_last(), "fatal: oops"));
	assert_non_null(strstr(nb_error_last(), "exit 2"));
	assert_true(runcmd_capture(&out, NULL, missing) < 0);
	assert_non_null(strstr(nb_error_last(), "nextbot-no-such-program"));
	strbuf_release(&out);
}

struct thread_arg {
	int n;
	int ok;
};

static void *run_thread(void *p)
{
	struct thread_arg *a = p;
	struct runcmd_result res = RUNCMD_RESULT_INIT;
	struct runcmd_opts o = RUNCMD_OPTS_INIT;
	char *cmd = xstrfmt("for i in 1 2 3; do echo %d; done", a->n);
	char *want = xstrfmt("%d\n%d\n%d\n", a->n, a->n, a->n);
	int i;

	o.shell = cmd;
	a->ok = 1;
	for (i = 0; i < 5; i++)
		if (runcmd_run(&res, &o) || res.exit_code || strcmp(res.output.buf, want))
			a->ok = 0;
	runcmd_result_release(&res);
	free(cmd);
	free(want);
	return NULL;
}

static void test_threads(void **state)
{
	pthread_t t[4];
	struct thread_arg a[4];
	int i;

	for (i = 0; i < 4; i++) {
		a[i].n = i;
		assert_int_equal(pthread_create(&t[i], NULL, run_thread, &a[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		assert_true(a[i].ok);
	}
}

/* nextbot killed with -9 mid-command: the supervisor takes the whole tree down with it. */
static void test_parent_death(void **state)
{
	pid_t child, gc = -1;
	int i, status;

	/* So that the orphaned supervisor is ours to reap, not init's. */
	assert_int_equal(runcmd_become_subreaper(), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		struct runcmd_result res = RUNCMD_RESULT_INIT;
		struct runcmd_opts o = RUNCMD_OPTS_INIT;

		o.shell = SETSID_GRANDCHILD "; sleep 1000";
		o.cwd = tmpdir;
		runcmd_run(&res, &o);
		_exit(0);
	}
	for (i = 0; i < 1000 && gc <= 0; i++) {
		usleep(10000);
		gc = read_pid("gc.pid");
	}
	assert_true(gc > 1);
	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, &status, 0), child);
	/* Generous bound: only a broken implementation waits this long. */
	for (i = 0; i < 1000 && kill(gc, 0) == 0; i++)
		usleep(10000);
	assert_int_equal(kill(gc, 0), -1);
	for (i = 0; i < 1000 && waitpid(-1, &status, WNOHANG) >= 0; i++)
		usleep(10000);
	assert_int_equal(waitpid(-1, &status, WNOHANG), -1);
	prctl(PR_SET_CHILD_SUBREAPER, 0);
}

static void test_bad_opts(void **state)
{
	struct runcmd_result res = RUNCMD_RESULT_INIT;
	struct runcmd_opts o = RUNCMD_OPTS_INIT;

	assert_int_equal(runcmd_run(&res, &o), NB_EINVALID);
	runcmd_result_release(&res);
}

/* ---- the sandbox (RELIABILITY 33) ---- */

static const char *bwrap_path(void)
{
	return access("/usr/bin/bwrap", X_OK) == 0 ? "/usr/bin/bwrap" : NULL;
}

/* A loopback TCP server outside the box: a listening socket; its port in *port. */
static int listen_loopback(int *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 4), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	*port = ntohs(sa.sin_port);
	return fd;
}

/*
 * Inside the box: the worker writable, the rest of the system read-only, the hidden
 * folder empty and the hidden file empty, /tmp private, no process of the host in
 * /proc, no way to a TCP server on the host's loopback; as root, the runner user.
 */
static void test_box_sees_only_its_worker(void **state)
{
	struct runcmd_result res = RUNCMD_RESULT_INIT;
	struct runcmd_opts o = RUNCMD_OPTS_INIT;
	struct runcmd_box box = { .bwrap = bwrap_path() };
	char *work = xstrfmt("%s/state/workers/w0", tmpdir);
	char *statedir = xstrfmt("%s/state", tmpdir);
	char *secret = xstrfmt("%s/state/state.json", tmpdir);
	char *cfg = xstrfmt("%s/nextbot.yaml", tmpdir);
	/* a folder anyone may write, outside the hidden places: the box must not */
	char *outdir = xstrfmt("nb-box-outside-%ld", (long)getpid());
	char *outside = NULL;
	char *env[5] = { NULL }, *hosttmp = NULL;
	const char *bash[] = { "/bin/bash", "-c", NULL, NULL };
	const char *hide[3], *rw[2];
	struct strbuf sb = STRBUF_INIT;
	int port, srv;

	if (!box.bwrap) {
		free(work), free(statedir), free(secret), free(cfg), free(outside);
		skip();
	}
	assert_int_equal(file_mkdir_p(work, 0711), 0);
	assert_int_equal(chmod(tmpdir, 0711), 0);
	assert_int_equal(file_mkdir_p(outdir, 0777), 0);
	outside = realpath(outdir, NULL);
	assert_non_null(outside);
	free(outdir);
	outdir = outside;
	outside = xstrfmt("%s/written", outdir);
	assert_int_equal(file_write_public(secret, "SECRET", 6), 0);
	assert_int_equal(file_write_public(cfg, "CONFIG", 6), 0);
	if (!geteuid())
		assert_int_equal(chown(work, 65534, 65534), 0);
	srv = listen_loopback(&port);
	hide[0] = statedir, hide[1] = cfg, hide[2] = NULL;
	rw[0] = work, rw[1] = NULL;
	box.hide = hide;
	box.writable = rw;
	env[0] = xstrfmt("OUTSIDE=%s", outside);
	env[1] = xstrfmt("PORT=%d", port);
	env[2] = xstrfmt("CFG=%s", cfg);
	hosttmp = xstrfmt("/tmp/nb-box-tmp-%ld", (long)getpid());
	assert_int_equal(file_write_public(hosttmp, "x", 1), 0);
	env[3] = xstrfmt("HOSTTMP=%s", hosttmp);
	o.env = (const char *const *)env;
	o.box = &box;
	o.cwd = work;
	o.user = "nobody";
	o.timeout = 30;
	o.shell = "echo built > out.o && echo W=ok;"
		  "echo x > \"$OUTSIDE\" 2>/dev/null && echo OUTSIDE-WRITTEN;"
		  "cat " "../../state.json 2>/dev/null; echo S=$(ls ../.. | wc -l);"
		  "cat \"$CFG\" 2>/dev/null;"
		  "test -e \"$HOSTTMP\" && echo HOST-TMP-SEEN; ls /tmp;"
		  "echo P=$(ls /proc | grep -c '^[0-9]');"
		  "echo N=$(cat /proc/net/dev | grep -vc 'lo:');"
		  "(exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null && echo TCP-REACHED;"
		  "echo U=$(id -u); echo TMPDIR=$TMPDIR";
	o.argv = NULL;
	/* /dev/tcp is bash's; run the script by bash when there is one */
	bash[2] = o.shell;
	if (!access("/bin/bash", X_OK)) {
		o.argv = bash;
		o.shell = NULL;
	}
	assert_int_equal(runcmd_run(&res, &o), 0);
	if (res.exit_code != 0 || res.box_failed)
		fail_msg("boxed command failed (%d): %s", res.exit_code, res.output.buf);
	assert_non_null(strstr(res.output.buf, "W=ok"));
	assert_null(strstr(res.output.buf, "OUTSIDE-WRITTEN"));
	assert_false(file_exists(outside));
	assert_null(strstr(res.output.buf, "SECRET"));
	assert_non_null(strstr(res.output.buf, "S=1\n"));   /* only workers/ */
	assert_null(strstr(res.output.buf, "CONFIG"));     /* the config is hidden */
	assert_null(strstr(res.output.buf, "HOST-TMP-SEEN")); /* a /tmp of its own … */
	assert_null(strstr(res.output.buf, "nb-box-tmp-"));
	assert_non_null(strstr(res.output.buf, "N=2\n"));   /* two header lines, then lo only */
	assert_null(strstr(res.output.buf, "TCP-REACHED"));
	assert_non_null(strstr(res.output.buf, "TMPDIR=/tmp\n"));
	/* its own pid namespace: a handful of processes, none of the host's */
	assert_null(strstr(res.output.buf, "P=0\n"));
	strbuf_addf(&sb, "%s/out.o", work);
	assert_true(file_exists(sb.buf));
	if (!geteuid())
		assert_non_null(strstr(res.output.buf, "U=65534\n"));

	/* runner.network: true shares the host's network */
	box.network = 1;
	assert_int_equal(runcmd_run(&res, &o), 0);
	if (!access("/bin/bash", X_OK))
		assert_non_null(strstr(res.output.buf, "TCP-REACHED"));
	close(srv);
	strbuf_release(&sb);
	free(env[0]), free(env[1]), free(env[2]), free(env[3]);
	unlink(hosttmp), free(hosttmp);
	file_remove_tree(outdir);
	free(work), free(statedir), free(secret), free(cfg), free(outside), free(outdir);
	runcmd_result_release(&res);
}

/* Exit codes and signals come through bwrap as through a shell; a broken box is no exit. */
static void test_box_status(void **state)
{
	struct runcmd_result res = RUNCMD_RESULT_INIT;
	struct runcmd_opts o = RUNCMD_OPTS_INIT;
	struct runcmd_box box = { .bwrap = bwrap_path() };
	char *missing = xstrfmt("%s/no-such-folder", tmpdir);
	const char *rw[2] = { tmpdir, NULL }, *bad[2] = { missing, NULL };
	const char *argv[] = { "no-such-program-here", NULL };

	if (!box.bwrap) {
		free(missing);
		skip();
	}
	box.writable = rw;
	o.box = &box;
	o.cwd = tmpdir;
	o.shell = "exit 3";
	assert_int_equal(runcmd_run(&res, &o), 0);
	assert_int_equal(res.exit_code, 3);
	assert_false(res.box_failed);
	o.shell = "kill -9 $$";
	assert_int_equal(runcmd_run(&res, &o), 0);
	assert_int_equal(res.exit_code, 128 + SIGKILL);
	assert_false(res.box_failed);
	o.shell = "kill -XFSZ $$";
	assert_int_equal(runcmd_run(&res, &o), 0);
	assert_true(res.limit_hit);

	/* a sandbox that cannot be set up: infrastructure, not the command's exit 1 */
	box.writable = bad;
	o.shell = "exit 0";
	assert_int_equal(runcmd_run(&res, &o), 0);
	assert_true(res.box_failed);
	assert_true(res.exec_failed);
	assert_non_null(strstr(res.output.buf, "bwrap"));
	box.writable = rw;
	o.shell = NULL;
	o.argv = argv;
	assert_int_equal(runcmd_run(&res, &o), 0);
	assert_true(res.exec_failed);

	/* the timeout ends the box and everything in it, at once */
	o.argv = NULL;
	o.shell = "setsid sleep 1000 & sleep 1000";
	o.timeout = 0.5;
	assert_int_equal(runcmd_run(&res, &o), 0);
	assert_true(res.timed_out);
	assert_false(res.box_failed);
	assert_true(res.seconds < 10);
	free(missing);
	runcmd_result_release(&res);
}

/*
 * What the compiler cache adds to a box: a folder bound read-only at a place of
 * its own and first on PATH (a command finds its programs before the system's),
 * and a scratch folder bound writable at a working directory that only exists
 * inside (in a hidden folder, as a compile's in the service's box).
 */
static void test_box_binds_and_path(void **state)
{
	struct runcmd_result res = RUNCMD_RESULT_INIT;
	struct runcmd_opts o = RUNCMD_OPTS_INIT;
	struct runcmd_box box = { .bwrap = bwrap_path() };
	char *shims = xstrfmt("%s/shims", tmpdir), *scratch = xstrfmt("%s/scratch", tmpdir);
	char *hidden = xstrfmt("%s/hidden", tmpdir), *cwd = xstrfmt("%s/hidden/w/tree", tmpdir);
	char *prog = xstrfmt("%s/cc", shims), *written = xstrfmt("%s/w", scratch);
	struct runcmd_bind binds[3] = { { shims, "/run/nb-shims", 0 }, { scratch, cwd, 1 },
					{ NULL, NULL, 0 } };
	const char *hide[] = { hidden, NULL };
	const char *env[] = { "PATH=/usr/bin:/bin", NULL };

	if (!box.bwrap) {
		free(shims), free(scratch), free(hidden), free(cwd), free(prog), free(written);
		skip();
	}
	assert_int_equal(chmod(tmpdir, 0711), 0);
	assert_int_equal(file_mkdir_p(shims, 0755), 0);
	assert_int_equal(file_mkdir_p(scratch, 0777), 0);
	assert_int_equal(file_mkdir_p(hidden, 0700), 0);
	assert_int_equal(file_write_atomic_mode(prog, "#!/bin/sh\necho shim $0\n", 23, 0755), 0);
	box.binds = binds;
	box.hide = hide;
	box.path_first = "/run/nb-shims";
	box.cwd_in_box = 1;
	o.box = &box;
	o.cwd = cwd;
	o.env = env;
	o.user = "nobody";
	o.shell = "cc; echo PATH=$PATH; pwd; echo x > w && echo W=ok;"
		  "touch /run/nb-shims/x 2>/dev/null && echo SHIMS-WRITTEN; true";
	assert_int_equal(runcmd_run(&res, &o), 0);
	if (res.exit_code != 0 || res.box_failed)
		fail_msg("boxed command failed (%d): %s", res.exit_code, res.output.buf);
	assert_non_null(strstr(res.output.buf, "shim /run/nb-shims/cc\n"));
	assert_non_null(strstr(res.output.buf, "PATH=/run/nb-shims:/usr/bin:/bin\n"));
	assert_non_null(strstr(res.output.buf, cwd));
	assert_non_null(strstr(res.output.buf, "W=ok"));
	assert_null(strstr(res.output.buf, "SHIMS-WRITTEN"));
	assert_true(file_exists(written));
	assert_false(file_is_dir(cwd));  /* the place was the box's only */
	/* without cwd_in_box a working directory the host lacks is an error, as before */
	box.cwd_in_box = 0;
	assert_int_equal(runcmd_run(&res, &o), NB_ENOTFOUND);
	free(shims), free(scratch), free(hidden), free(cwd), free(prog), free(written);
	runcmd_result_release(&res);
}

/*
 * A stop after a few polls, once the grandchild is there to be stopped (a loaded
 * machine may take longer than the polls to start it).
 */
static int stop_after(void *data)
{
	return --*(int *)data <= 0 && read_pid("gc.pid") > 1;
}

/* A stop (the night's SIGTERM, a checkout's deadline) ends a command at once, tree and all. */
static void test_stop(void **state)
{
	struct runcmd_result res = RUNCMD_RESULT_INIT;
	struct runcmd_opts o = RUNCMD_OPTS_INIT;
	static volatile sig_atomic_t flag;
	int polls = 3;

	o.shell = SETSID_GRANDCHILD "; sleep 1000";
	o.cwd = tmpdir;
	o.stop = stop_after;
	o.stop_data = &polls;
	assert_int_equal(runcmd_run(&res, &o), 0);
	assert_true(res.stopped);
	assert_ended_early(&res);

	o.stop = NULL;
	o.shell = "sleep 1000";
	o.stoppable = 1;
	flag = 1;
	runcmd_stop_on(&flag);
	assert_int_equal(runcmd_run(&res, &o), 0);
	assert_true(res.stopped);
	/* nextbot's own cleanup (scancel) is not stoppable: it runs to its end */
	o.stoppable = 0;
	o.shell = "sleep 0.3; exit 4";
	assert_int_equal(runcmd_run(&res, &o), 0);
	assert_false(res.stopped);
	assert_int_equal(res.exit_code, 4);
	runcmd_stop_on(NULL);
	o.shell = "exit 0";
	assert_int_equal(runcmd_run(&res, &o), 0);
	assert_false(res.stopped);
	assert_int_equal(res.exit_code, 0);
	runcmd_result_release(&res);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_exit_codes),
		T(test_signal),
		T(test_output_merged),
		T(test_timeout),
		T(test_cancel),
		T(test_setsid_grandchild_killed_on_exit),
		T(test_setsid_grandchild_killed_on_timeout),
		T(test_100mb_output),
		T(test_head_and_tail),
		T(test_exec_failure),
		T(test_env_allow_list),
		T(test_fds_not_inherited),
		T(test_stdin_and_cwd),
		T(test_fsize_limit),
		T(test_user_drop),
		T(test_capture),
		T(test_threads),
		T(test_parent_death),
		T(test_bad_opts),
		T(test_box_sees_only_its_worker),
		T(test_box_status),
		T(test_box_binds_and_path),
		T(test_stop),
		T(test_memory_limit_named),
		T(test_fork_bomb_named),
		T(test_cpu_and_time_named),
	};

	return cmocka_run_group_tests_name("runcmd", tests, NULL, NULL);
}
