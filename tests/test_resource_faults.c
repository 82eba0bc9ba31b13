/*
 * Resource faults (a build may exhaust processes, memory or disk): a fork bomb, a memory
 * hog and a disk
 * filler run through util/runcmd as an unprivileged user under small limits
 * (RLIMIT_NPROC, RLIMIT_AS, RLIMIT_FSIZE) are stopped and reported as a limit hit
 * or a failure, and runcmd returns.  Only as root (the limits bind after the drop
 * to runner.user) and only under these limits: CI shares the machine.
 */
#include <dirent.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/fileutil.h"
#include "util/runcmd.h"
#include "util/xalloc.h"
#include "util/banned.h"

static char tmpdir[] = "/tmp/nextbot-test-rlimit.XXXXXX";

static int setup(void **state)
{
	if (!mkdtemp(tmpdir) || chmod(tmpdir, 0755) < 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	return file_remove_tree(tmpdir);
}

/* Runs `shell` as nobody in tmpdir/sub under tight limits (0: the given default). */
static void run_limited(struct runcmd_result *res, const char *sub, const char *shell,
			long nproc, long long as, long long fsize, double timeout)
{
	struct runcmd_opts o = RUNCMD_OPTS_INIT;
	char *cwd = xstrfmt("%s/%s", tmpdir, sub);

	if (geteuid() != 0) {
		free(cwd);
		print_message("skipped: resource-fault tests need root (commands run as "
			      "nobody under limits only then)\n");
		skip();
	}
	assert_int_equal(file_mkdir_p(cwd, 0755), 0);
	/* the working tree is the user's, as a worker's is */
	assert_int_equal(chown(cwd, 65534, 65534), 0);
	o.shell = shell;
	o.cwd = cwd;
	o.user = "nobody";
	o.limits.nproc = nproc ? nproc : 64;
	o.limits.as_bytes = as ? as : 512LL << 20;
	o.limits.fsize = fsize ? fsize : 1LL << 20;
	o.timeout = timeout;
	o.output_cap = 4096;
	assert_int_equal(runcmd_run(res, &o), 0);
	print_message("%s: exit %d signal %d limit_hit %d timed_out %d (%.1f s)\n", sub,
		      res->exit_code, res->signal, res->limit_hit, res->timed_out, res->seconds);
	free(cwd);
}

/* How many processes still run in `dir` (their cwd): the bomb's survivors. */
static int processes_in(const char *dir)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	char link[4096];
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d))) {
		char *path;
		ssize_t len;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		path = xstrfmt("/proc/%s/cwd", de->d_name);
		len = readlink(path, link, sizeof(link) - 1);
		free(path);
		if (len > 0) {
			link[len] = '\0';
			n += !strcmp(link, dir);
		}
	}
	closedir(d);
	return n;
}

/*
 * Stopped by the limit as expected: with `exit_code` < 0 a classified limit hit,
 * else exactly that exit status of the program's own (what it does when the
 * kernel refuses it).  Never a success, an exec failure or a timeout.
 */
static void assert_stopped(const struct runcmd_result *res, int exit_code)
{
	assert_false(res->exec_failed);
	assert_false(res->timed_out);
	if (exit_code < 0)
		assert_true(res->limit_hit);
	else
		assert_int_equal(res->exit_code, exit_code);
}

/*
 * A bounded fork bomb: far more background processes than RLIMIT_NPROC allows.
 * The shell's fork fails and it exits; the supervisor kills the sleepers left.
 */
static void test_fork_bomb_bounded(void **state)
{
	struct runcmd_result res = RUNCMD_RESULT_INIT;

	char *dir = xstrfmt("%s/forks", tmpdir);

	run_limited(&res, "forks",
		    "i=0; while [ $i -lt 400 ]; do sleep 60 & i=$((i+1)); done; wait",
		    16, 0, 0, 60);
	assert_stopped(&res, 2);                             /* dash, when fork fails */
	assert_non_null(strcasestr(res.output.buf, "fork")); /* dash: "Cannot fork" */
	assert_int_equal(processes_in(dir), 0);
	free(dir);
	runcmd_result_release(&res);
}

/*
 * The classic recursive fork bomb, contained by RLIMIT_NPROC: its forks fail, it
 * collapses (or meets the wall-clock timeout), and no process of it is left.  The
 * timeout leaves room: at a load of 19 a 3 s one could end before a fork was refused.  Its
 * exit status is the shell's business: a failed fork carries no signal to classify.
 */
static void test_fork_bomb_recursive(void **state)
{
	struct runcmd_result res = RUNCMD_RESULT_INIT;
	char *dir = xstrfmt("%s/bomb", tmpdir);

	run_limited(&res, "bomb", "echo started; b() { b & b & wait; }; b; sleep 30 & wait", 24,
		    0, 0, 8);  /* its forks are refused within a second when quiet */
	assert_false(res.exec_failed);
	assert_non_null(strstr(res.output.buf, "started"));  /* it did run */
	assert_true(res.timed_out || res.exit_code != 0);    /* and did not end well */
	assert_non_null(strcasestr(res.output.buf, "fork")); /* its forks were refused */
	assert_int_equal(processes_in(dir), 0);
	free(dir);
	runcmd_result_release(&res);
}

/* Allocates until RLIMIT_AS refuses: the program dies or reports out of memory. */
static void test_memory_hog(void **state)
{
	struct runcmd_result res = RUNCMD_RESULT_INIT;

	run_limited(&res, "mem", "exec perl -e '$x = \"x\" x (1 << 20); $y .= $x while 1'", 0,
		    96LL << 20, 0, 60);
	assert_stopped(&res, 1); /* perl: "Out of memory!" and exit 1 */
	/*
	 * RLIMIT_AS makes malloc fail, so the program reports it (perl: exit 1) and
	 * runcmd cannot tell it from any failure; only a cgroup's OOM kill is a
	 * classified limit hit.
	 */
	assert_non_null(strstr(res.output.buf, "Out of memory"));
	runcmd_result_release(&res);
}

/* Writes until RLIMIT_FSIZE: SIGXFSZ, a limit hit, the file capped at the limit. */
static void test_disk_filler(void **state)
{
	struct runcmd_result res = RUNCMD_RESULT_INIT;
	char *fill = xstrfmt("%s/disk/fill", tmpdir);
	struct stat st;

	run_limited(&res, "disk", "exec dd if=/dev/zero of=fill bs=65536 count=100000", 0, 0,
		    1LL << 20, 60);
	assert_true(res.limit_hit);
	assert_int_equal(res.signal, SIGXFSZ);
	assert_int_equal(stat(fill, &st), 0);
	assert_true(st.st_size <= 1LL << 20);

	/* A shell loop appending forever: the shell's child dies of SIGXFSZ too. */
	run_limited(&res, "disk", "yes 0123456789abcdef >> fill2; exit $?", 0, 0, 1LL << 20, 60);
	assert_true(res.limit_hit);
	assert_false(res.timed_out);
	free(fill);
	runcmd_result_release(&res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fork_bomb_bounded),
		cmocka_unit_test(test_fork_bomb_recursive),
		cmocka_unit_test(test_memory_hog),
		cmocka_unit_test(test_disk_filler),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
