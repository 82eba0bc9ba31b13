/*
 * `nextbot patch ID [--json]`: a patch's journey on the command line; exits 1 when no
 * patch matches, 2 for an ID too short to look for.
 */
#include <stdio.h>

#include "bot/core/botutil.h"
#include "bot/journey/journey.h"
#include "util/error.h"
#include "util/banned.h"

int cmd_patch(const struct cli_ctx *ctx, int argc, char **argv)
{
	struct state st = STATE_INIT;
	struct config *cfg = NULL;
	struct strbuf out = STRBUF_INIT;
	int code, error;

	if (argc != 2 || !argv[1][0]) {
		fprintf(stderr, "usage: nextbot [--json] patch ID\n");
		return EXIT_USAGE;
	}
	if ((code = bot_config_open(&cfg, ctx)))
		return code;
	if (state_load(&st, cfg->workdir) < 0) {
		bot_error("cannot read state");
		config_free(cfg);
		return EXIT_FAILED;
	}
	error = journey_patch_show(&out, cfg, &st, argv[1], ctx->json);
	if (error == NB_ENOTFOUND) { /* a question answered "none", as grep's 1 */
		bot_error("patch");
		code = EXIT_FAILED;
	} else if (error == NB_EINVALID) {
		bot_error("patch");
		code = EXIT_USAGE;
	} else if (error < 0) {
		bot_error("patch");
		code = EXIT_FAILED;
	} else {
		fputs(out.buf, stdout);
	}
	strbuf_release(&out);
	state_release(&st);
	config_free(cfg);
	return code;
}
