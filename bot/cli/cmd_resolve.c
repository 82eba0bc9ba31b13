/* `nextbot resolve TREE`: record a maintainer's resolution of tonight's conflict of TREE. */
#include <stdio.h>
#include <string.h>

#include "bot/core/botutil.h"
#include "bot/cli/cli_int.h"
#include "bot/state/state.h"
#include "merge/integrate/integrate.h"
#include "util/error.h"
#include "util/strbuf.h"
#include "util/banned.h"

static int known_tree(const struct config *cfg, const char *name)
{
	size_t i;

	for (i = 0; i < cfg->trees_nr; i++)
		if (!strcmp(cfg->trees[i].name, name))
			return 1;
	return 0;
}

int cmd_resolve(const struct cli_ctx *ctx, int argc, char **argv)
{
	struct run_lock lock = RUN_LOCK_INIT;
	struct config *cfg = NULL;
	struct strbuf report = STRBUF_INIT;
	char today[11];
	int code, err;

	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: nextbot resolve TREE\n");
		return EXIT_USAGE;
	}
	if ((code = bot_config_open(&cfg, ctx)))
		return code;
	if (!known_tree(cfg, argv[1])) {
		fprintf(stderr, "nextbot: resolve: no tree '%s' in %s\n", argv[1], cfg->path);
		config_free(cfg);
		return EXIT_USAGE;
	}
	if (run_lock_take(&lock, cfg->workdir) < 0) {
		bot_error("cannot take the lock");
		config_free(cfg);
		return EXIT_FAILED;
	}
	bot_today(today, sizeof(today));
	err = rerere_resolve_tree(&report, cfg->workdir, argv[1], today);
	if (ctx->verbosity > 0 || err < 0)
		fputs(report.buf, err < 0 ? stderr : stdout);
	if (err < 0)
		bot_error("resolve");
	else if (ctx->verbosity > 0)
		printf("The next night will merge %s with these resolutions where its conflict "
		       "is the same.\n", argv[1]);
	strbuf_release(&report);
	run_lock_release(&lock);
	config_free(cfg);
	return err < 0 ? EXIT_FAILED : EXIT_DONE;
}
