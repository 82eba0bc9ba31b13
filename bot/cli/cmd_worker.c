/* `nextbot worker-checkout`: the child that writes a worker's tree, as the runner user. */
#include <stdio.h>
#include <string.h>

#include "bot/cli/cli_int.h"
#include "merge/repo/repo.h"
#include "merge/worker/worker.h"
#include "util/error.h"
#include "util/oid.h"
#include "util/banned.h"

/*
 * Run by nextbot itself (merge/worker/worker.c), never by people: as the runner user, in
 * the sandbox, with only the worker writable.  Exit 0 done, 3 the tree must be
 * removed and checked out pristine (the reason on stdout), 2 no such commit, 1
 * the checkout failed (the reason on stdout).
 */
int cmd_worker_checkout(const struct cli_ctx *ctx, int argc, char **argv)
{
	const char *common = NULL, *dir = NULL, *commit = NULL;
	struct nb_oid id;
	int i, pristine = 0, code;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--pristine"))
			pristine = 1;
		else if (i + 1 < argc && !strcmp(argv[i], "--common"))
			common = argv[++i];
		else if (i + 1 < argc && !strcmp(argv[i], "--worker"))
			dir = argv[++i];
		else if (i + 1 < argc && !strcmp(argv[i], "--commit"))
			commit = argv[++i];
		else
			break;
	}
	if (i < argc || !common || !dir || !commit) {
		fprintf(stdout, "usage: nextbot worker-checkout --common DIR --worker DIR "
				"--commit ID [--pristine]\n");
		return EXIT_USAGE;
	}
	/* the command line is text: the id is read here, once */
	if (nb_oid_parse(&id, commit) < 0) {
		fprintf(stdout, "%s\n", nb_error_last());
		return 1; /* merge/worker/worker.c's "failed" */
	}
	if (merge_global_init() < 0) {
		fprintf(stdout, "%s\n", nb_error_last());
		return EXIT_FAILED;
	}
	/* the child's statuses are merge/worker/worker.c's protocol with its parent */
	code = worker_checkout_child(common, dir, &id, pristine);
	merge_global_shutdown();
	return code;
}
