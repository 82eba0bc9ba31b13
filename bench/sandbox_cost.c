/*
 * `make bench` (bench/run, the sandbox bench): what a command costs nextbot, by
 * what it runs in: plain, as the runner user, with a cgroup, in the bwrap box, and
 * a worker checkout (the child) of an unchanged commit with and without the box.
 * Prints one line per case: "<case>: <median ms> <min ms> <runs>".
 *
 *   sandbox_cost DIR RUNS [REPO NEXTBOT]
 *
 * DIR: a scratch folder; as root for the runner-user cases.  With REPO (a
 * repository) and NEXTBOT (the binary), worker checkouts of REPO's HEAD too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <git2.h>

#include "merge/repo/repo.h"
#include "merge/worker/worker_int.h"
#include "util/runcmd.h"
#include "util/cgroup.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/xalloc.h"
#include "util/banned.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void run_case(const char *name, const struct runcmd_opts *o, int runs)
{
	double *t = xcalloc((size_t)runs, sizeof(*t));
	int i, bad = 0;

	for (i = 0; i < runs; i++) {
		struct runcmd_result r = RUNCMD_RESULT_INIT;
		double start = now_ms();

		if (runcmd_run(&r, o) < 0 || r.exit_code != 0) {
			bad = 1;
			fprintf(stderr, "%s: failed (exit %d): %s\n", name, r.exit_code,
				r.output.buf);
		}
		t[i] = now_ms() - start;
		runcmd_result_release(&r);
		if (bad)
			break;
	}
	if (!bad) {
		qsort(t, (size_t)runs, sizeof(*t), cmp_double);
		printf("%s: %.1f %.1f %d\n", name, t[runs / 2], t[0], runs);
	}
	free(t);
	fflush(stdout);
}

/* Checkouts of the same commit into one worker: the child's cost when nothing changed. */
static void checkout_case(const char *name, const char *repo, const char *dir,
			  const struct worker_opts *wo, int runs)
{
	double *t = xcalloc((size_t)runs, sizeof(*t));
	git_repository *r = NULL;
	struct worker *w = NULL;
	git_oid head;
	int i;

	if (git_repository_open(&r, repo) < 0 || git_reference_name_to_id(&head, r, "HEAD") < 0 ||
	    worker_open(&w, repo, dir, wo) < 0 || worker_checkout_git(w, &head, 1) < 0) {
		fprintf(stderr, "%s: cannot set up: %s\n", name, nb_error_last());
		goto done;
	}
	for (i = 0; i < runs; i++) {
		double start = now_ms();

		if (worker_checkout_git(w, &head, 0) < 0) {
			fprintf(stderr, "%s: %s\n", name, nb_error_last());
			goto done;
		}
		t[i] = now_ms() - start;
	}
	qsort(t, (size_t)runs, sizeof(*t), cmp_double);
	printf("%s: %.1f %.1f %d\n", name, t[runs / 2], t[0], runs);
	fflush(stdout);
done:
	worker_free(w);
	git_repository_free(r);
	free(t);
}

int main(int argc, char **argv)
{
	const char *const argv_true[] = { "/bin/true", NULL };
	struct runcmd_opts o = RUNCMD_OPTS_INIT;
	struct runcmd_box box = { .bwrap = "/usr/bin/bwrap" };
	const char *rw[2] = { NULL, NULL }, *hide[2] = { NULL, NULL };
	char *work, *state;
	int runs, root = geteuid() == 0;

	if ((argc != 3 && argc != 5) || (runs = (int)strtol(argv[2], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: sandbox_cost DIR RUNS [REPO NEXTBOT]\n");
		return 2;
	}
	work = xstrfmt("%s/workers/w0/tree", argv[1]);
	state = xstrfmt("%s/state", argv[1]);
	if (file_mkdir_p(work, 0711) < 0 || file_mkdir_p(state, 0700) < 0 ||
	    chmod(argv[1], 0711) < 0 || (root && chown(work, 65534, 65534) < 0)) {
		perror(argv[1]);
		return 1;
	}
	rw[0] = work;
	hide[0] = argv[1];
	box.hide = hide;
	box.writable = rw;
	o.argv = argv_true;
	o.cwd = work;
	run_case("plain", &o, runs);
	if (root) {
		o.user = "nobody";
		run_case("as the runner user", &o, runs);
	}
	o.limits.memory = 1LL << 30;
	o.limits.processes = 512;
	if (cgroup_available(NULL) != CGROUP_NONE)
		run_case("+ cgroup", &o, runs);
	if (!access(box.bwrap, X_OK)) {
		o.box = &box;
		run_case("+ bwrap (the full sandbox)", &o, runs);
		o.limits.memory = 0;
		o.limits.processes = 0;
		run_case("bwrap, no cgroup", &o, runs);
	}
	if (argc == 5 && merge_global_init() == 0) {
		struct worker_opts wo = { .exe = argv[4], .user = root ? "nobody" : NULL };
		char *w1 = xstrfmt("%s/workers/c1", argv[1]);
		char *w2 = xstrfmt("%s/workers/c2", argv[1]);

		checkout_case("checkout, unchanged, no box", argv[3], w1, &wo, runs);
		if (!access(box.bwrap, X_OK)) {
			wo.box = &box;
			checkout_case("checkout, unchanged, in the box", argv[3], w2, &wo, runs);
		}
		merge_global_shutdown();
		free(w1);
		free(w2);
	}
	free(work);
	free(state);
	return 0;
}
