/* `nextbot sim init|advance`: the branch-feed simulator's command line. */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bot/cli/cli_int.h"
#include "bot/config/config.h"
#include "feeds/world.h"
#include "merge/repo/repo.h"
#include "util/error.h"
#include "util/strbuf.h"
#include "util/banned.h"

static const char usage[] = "usage: nextbot sim init DIR [--seed N] [--trees N] [--files N] "
			    "[--matrix]\n"
			    "                      [--history N] [--no-cache]\n"
			    "       nextbot sim init DIR --kernel SRC [--no-cache]\n"
			    "       nextbot sim advance DIR [--days N]\n";

/* "--name N" or "--name=N" at argv[*i]; 1 if it matched (and *i moved), -1 if bad. */
static int opt_long(const char *name, long *out, int argc, char **argv, int *i)
{
	size_t n = strlen(name);
	const char *v;

	if (strncmp(argv[*i], name, n))
		return 0;
	if (argv[*i][n] == '=')
		v = argv[*i] + n + 1;
	else if (!argv[*i][n] && *i + 1 < argc)
		v = argv[++*i];
	else
		return argv[*i][n] ? 0 : -1;
	return str_to_long(v, out) < 0 || *out < 0 ? -1 : 1;
}

/* `nextbot sim init|advance`'s arguments, with their defaults. */
struct sim_args {
	const char *dir;
	const char *kernel; /* --kernel SRC: a kernel world */
	long seed, trees, files, history, days;
	int matrix, no_cache;
};

static int parse_sim_args(struct sim_args *a, int argc, char **argv, int init)
{
	int i, r;

	for (i = 2; i < argc; i++) {
		if (init && !strcmp(argv[i], "--matrix")) {
			a->matrix = 1;
		} else if (init && !strcmp(argv[i], "--no-cache")) {
			a->no_cache = 1;
		} else if (init && !strncmp(argv[i], "--kernel=", 9)) {
			a->kernel = argv[i] + 9;
		} else if (init && !strcmp(argv[i], "--kernel")) {
			if (i + 1 >= argc)
				return -1;
			a->kernel = argv[++i];
		} else if (init && ((r = opt_long("--seed", &a->seed, argc, argv, &i)) ||
			     (r = opt_long("--trees", &a->trees, argc, argv, &i)) ||
			     (r = opt_long("--files", &a->files, argc, argv, &i)) ||
			     (r = opt_long("--history", &a->history, argc, argv, &i)))) {
			if (r < 0)
				return -1;
		} else if (!init && (r = opt_long("--days", &a->days, argc, argv, &i))) {
			if (r < 0)
				return -1;
		} else if (argv[i][0] == '-' || a->dir) {
			return -1;
		} else {
			a->dir = argv[i];
		}
	}
	return a->dir ? 0 : -1;
}

/*
 * Whether check-config accepts runner.cache in a world's config here: the world names
 * no runner (kind local, sandbox bwrap where installed), so it takes bwrap.
 */
static int sim_cache_runs_here(void)
{
	char *bwrap = config_find_bwrap();
	int found = bwrap != NULL;

	free(bwrap);
	return found;
}

int cmd_sim(const struct cli_ctx *ctx, int argc, char **argv)
{
	struct sim_args a = { .seed = 1, .trees = 3, .days = 1 };
	int init, error;

	if (argc < 2 || (strcmp(argv[1], "init") && strcmp(argv[1], "advance"))) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	init = !strcmp(argv[1], "init");
	if (parse_sim_args(&a, argc, argv, init) < 0 || a.trees > 1000 || a.days < 1 ||
	    a.days > 100000) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	if (merge_global_init() < 0) {
		fprintf(stderr, "nextbot: %s\n", nb_error_last());
		return EXIT_FAILED;
	}
	if (init) {
		struct feeds_world_opts opts = FEEDS_WORLD_OPTS_INIT;

		opts.seed = (uint64_t)a.seed;
		opts.trees = (int)a.trees;
		opts.files = (int)a.files;
		opts.matrix = a.matrix;
		opts.history = a.history > INT_MAX ? -1 : (int)a.history; /* refused there */
		opts.cache = !a.no_cache && sim_cache_runs_here();
		error = a.kernel ? feeds_kernel_init(a.dir, a.kernel, &opts)
				 : feeds_world_init(a.dir, &opts);
	} else {
		error = feeds_world_advance(a.dir, (int)a.days);
	}
	merge_global_shutdown();
	if (error < 0) {
		fprintf(stderr, "nextbot: %s\n", nb_error_last());
		return error == NB_EINVALID || error == NB_EEXISTS ? EXIT_USAGE : EXIT_FAILED;
	}
	if (ctx->verbosity > 0)
		printf("%s: world %s in %s\n", init ? "created" : "advanced",
		       init ? "ready" : "played", a.dir);
	return EXIT_DONE;
}
