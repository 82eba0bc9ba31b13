/* The maintainer's commands dismiss and undrop (drop: cmd_drop.c; actions: bot/actions/). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bot/core/botutil.h"
#include "bot/cli/cli_int.h"
#include "bot/actions/actions.h"
#include "bot/state/state.h"
#include "util/error.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* Parses "ID --reason TEXT"; reason may be required. */
int maint_args(const char **id, const char **reason, int *push, int argc, char **argv,
	       const char *usage, int need_reason)
{
	static const struct option opts[] = { { "reason", required_argument, NULL, 'r' },
					       { "push", no_argument, NULL, 'p' },
					       { NULL, 0, NULL, 0 } };
	int c;

	*id = *reason = NULL;
	if (push)
		*push = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "r:", opts, NULL)) != -1) {
		if (c == 'r')
			*reason = optarg;
		else if (c == 'p' && push)
			*push = 1;
		else
			goto usage;
	}
	if (optind != argc - 1 || (need_reason && (!*reason || !**reason)))
		goto usage;
	*id = argv[optind];
	return 0;
usage:
	fprintf(stderr, "usage: %s\n", usage);
	return EXIT_USAGE;
}

int cmd_dismiss(const struct cli_ctx *ctx, int argc, char **argv)
{
	const char *id, *reason;
	struct maint m;
	struct flag *f;
	int code;

	if ((code = maint_args(&id, &reason, NULL, argc, argv,
			       "nextbot dismiss ID --reason TEXT", 1)))
		return code;
	if ((code = maint_open(&m, ctx)))
		return code;
	f = maint_flag_find(&m, id);
	if (!f) {
		fprintf(stderr, "nextbot: no flag matches '%s'\n", id);
		code = EXIT_USAGE;
		goto done;
	}
	maint_dismiss(f, reason);
	if ((code = maint_save(&m)) == EXIT_DONE)
		printf("dismissed %s: its fingerprint will not be blamed again\n", f->id);
done:
	maint_close(&m);
	return code;
}

int cmd_undrop(const struct cli_ctx *ctx, int argc, char **argv)
{
	struct drop *found = NULL;
	const char *id, *reason;
	struct maint m;
	int code, ambiguous;

	if ((code = maint_args(&id, &reason, NULL, argc, argv, "nextbot undrop ID", 0)))
		return code;
	if ((code = maint_open(&m, ctx)))
		return code;
	if (!(found = maint_drop_find(&m, id, &ambiguous))) {
		fprintf(stderr, "nextbot: %s drop matches '%s'\n",
			ambiguous ? "more than one" : "no", id);
		code = EXIT_USAGE;
		goto done;
	}
	maint_undrop(&m, found);
	if ((code = maint_save(&m)) == EXIT_DONE)
		printf("undropped %.12s (\"%s\"): it comes back into next on the next run\n",
		       found->commit ? found->commit : "-", found->subject ? found->subject : "");
done:
	maint_close(&m);
	return code;
}
