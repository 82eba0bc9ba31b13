/* `nextbot sim init|advance`: the branch-feed simulator's command line. */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bot/commands.h"
#include "feeds/world.h"
#include "merge/merge_global.h"
#include "util/error.h"
#include "util/strbuf.h"
#include "util/banned.h"

static const char usage[] = "usage: nextbot sim init DIR [--seed N] [--trees N] [--files N] "
			    "[--matrix]\n"
			    "                      [--history N]\n"
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

static int parse_sim_args(int argc, char **argv, const char **dir, long *seed, long *trees,
			  long *files, long *history, long *days, int *matrix, int init)
{
	int i, r;

	for (i = 2; i < argc; i++) {
		if (init && !strcmp(argv[i], "--matrix")) {
			*matrix = 1;
		} else if (init && ((r = opt_long("--seed", seed, argc, argv, &i)) ||
			     (r = opt_long("--trees", trees, argc, argv, &i)) ||
			     (r = opt_long("--files", files, argc, argv, &i)) ||
			     (r = opt_long("--history", history, argc, argv, &i)))) {
			if (r < 0)
				return -1;
		} else if (!init && (r = opt_long("--days", days, argc, argv, &i))) {
			if (r < 0)
				return -1;
		} else if (argv[i][0] == '-' || *dir) {
			return -1;
		} else {
			*dir = argv[i];
		}
	}
	return *dir ? 0 : -1;
}

int cmd_sim(const struct cli_ctx *ctx, int argc, char **argv)
{
	const char *dir = NULL;
	long seed = 1, trees = 3, files = 0, history = 0, days = 1;
	int init, error, matrix = 0;

	if (argc < 2 || (strcmp(argv[1], "init") && strcmp(argv[1], "advance"))) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	init = !strcmp(argv[1], "init");
	if (parse_sim_args(argc, argv, &dir, &seed, &trees, &files, &history, &days, &matrix,
			   init) < 0 ||
	    trees > 1000 || days < 1 || days > 100000) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	if (merge_global_init() < 0) {
		fprintf(stderr, "nextbot: %s\n", nb_error_last());
		return EXIT_FAILED;
	}
	if (init) {
		struct feeds_world_opts opts = FEEDS_WORLD_OPTS_INIT;

		opts.seed = (uint64_t)seed;
		opts.trees = (int)trees;
		opts.files = (int)files;
		opts.matrix = matrix;
		opts.history = history > INT_MAX ? -1 : (int)history; /* refused there */
		error = feeds_world_init(dir, &opts);
	} else {
		error = feeds_world_advance(dir, (int)days);
	}
	merge_global_shutdown();
	if (error < 0) {
		fprintf(stderr, "nextbot: %s\n", nb_error_last());
		return error == NB_EINVALID || error == NB_EEXISTS ? EXIT_USAGE : EXIT_FAILED;
	}
	if (ctx->verbosity > 0)
		printf("%s: world %s in %s\n", init ? "created" : "advanced",
		       init ? "ready" : "played", dir);
	return EXIT_DONE;
}
