/*
 * Weak placeholders for commands not written yet: each real cmd_*.c overrides its
 * entry by defining the same function.  Delete a line here once its command exists.
 */
#include <stdio.h>

#include "bot/cli.h"
#include "bot/commands.h"
#include "util/banned.h"

#define STUB(fn, name)                                                             \
	__attribute__((weak)) int fn(const struct cli_ctx *ctx, int argc, char **argv) \
	{                                                                          \
		fprintf(stderr, "nextbot: %s: not yet implemented\n", name);       \
		return EXIT_FAILED;                                                \
	}

STUB(cmd_sim, "sim")
STUB(cmd_run, "run")
STUB(cmd_daemon, "daemon")
STUB(cmd_status, "status")
STUB(cmd_flagged, "flagged")
STUB(cmd_drop, "drop")
STUB(cmd_undrop, "undrop")
STUB(cmd_dismiss, "dismiss")
STUB(cmd_resolve, "resolve")
STUB(cmd_bisect, "bisect")
STUB(cmd_outbox, "outbox")
STUB(cmd_report, "report")
STUB(cmd_gc, "gc")
STUB(cmd_check_config, "check-config")
