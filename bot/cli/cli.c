/* Global options, help texts and the table of commands. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bot/cli/cli.h"
#include "bot/cli/cli_int.h"
#include "bot/journey/journey.h"
#include "bot/people/people.h"
#include "util/log.h"
#include "util/runcmd.h"
#include "util/strbuf.h"
#include "util/banned.h"

typedef int (*cli_fn)(const struct cli_ctx *ctx, int argc, char **argv);

struct cli_command {
	const char *name;
	cli_fn fn;
	const char *usage;   /* after "nextbot ", one or more lines */
	const char *summary; /* one line, for `nextbot --help` */
	const char *details; /* options and notes, for `nextbot COMMAND --help` */
};

static const struct cli_command commands[] = {
	{ "sim", cmd_sim,
	  "sim init DIR [--seed N] [--trees N] [--files N] [--matrix] [--history N]\n"
	  "         [--no-cache]\n"
	  "sim init DIR --kernel SRC [--no-cache]\n"
	  "sim advance DIR [--days N]",
	  "create or advance a simulated world of branch feeds",
	  "  init DIR      create bare repos in DIR/remotes/, a ready DIR/nextbot.yaml and\n"
	  "                the ground truth DIR/truth.json\n"
	  "  --seed N      random seed (same seed, same world)\n"
	  "  --trees N     trees besides the mm branches\n"
	  "  --files N     size of the simulated project: about N source files (default:\n"
	  "                small; 90000 is kernel-sized)\n"
	  "  --history N   N commits of mainline history under the initial import (a\n"
	  "                linear chain; 200000 take seconds); default 0: none\n"
	  "  --matrix      configurations: make ARCH=x86_64|arm64|riscv, a build matrix in\n"
	  "                the config, defects that break only some cells\n"
	  "  --no-cache    leave the compiler cache off (on where bwrap is installed:\n"
	  "                runner: {cache: {max: 5G}} in the config)\n"
	  "  --kernel SRC  a kernel world: mainline is the source SRC (a tarball or a\n"
	  "                tree) as one commit, the feeds a script of edits of real files\n"
	  "                with a build break, a boot failure, a semantic conflict and a\n"
	  "                flaky boot; the config builds a tinyconfig and boots it\n"
	  "  advance DIR   play the feeds forward\n"
	  "  --days N      how many days (default 1)\n" },
	{ "boot-test", cmd_boot_test, "boot-test [--kernel PATH] [--timeout SECONDS] [--qemu CMD]",
	  "boot a built kernel under QEMU with a busybox initramfs",
	  "  --kernel PATH      the kernel image (default arch/x86/boot/bzImage)\n"
	  "  --timeout SECONDS  give up on the boot after this long (default 300)\n"
	  "  --qemu CMD         the QEMU command (default qemu-system-x86_64); KVM when\n"
	  "                     /dev/kvm is usable (runner.devices), else TCG\n"
	  "  Exit 0 when the initramfs's init printed NEXTBOT-BOOT-OK; 1 on a panic, an\n"
	  "  oops or the timeout, with the console's last lines.\n" },
	{ "run", cmd_run, "run [--date YYYY-MM-DD] [--no-notify]",
	  "one nightly run: fetch, merge, build, test, bisect, notify",
	  "  --date YYYY-MM-DD  the night to run as (default: today, UTC); a second run\n"
	  "                     for the same date replaces that night\n"
	  "  --no-notify        record flags but queue no notice\n" },
	{ "daemon", cmd_daemon, "daemon", "run at the configured schedule until SIGTERM",
	  "  Runs `run` at each time of the config's `schedule` (cron, UTC), and `gc` weekly.\n" },
	{ "status", cmd_status, "status", "last runs and the state of every tree",
	  "  --json (global) prints {\"runs\": [...]}.\n" },
	{ "flagged", cmd_flagged, "flagged", "flags with their evidence",
	  "  --json (global) prints {\"flags\": [...]}.\n" },
	{ "patch", cmd_patch, "patch ID", "where a patch is and has been: its journey",
	  "  ID    flag id, commit, patch-id or Message-ID, or 4+ characters of its subject;\n"
	  "        several matches are listed (at most 50)\n"
	  "  --json (global) prints {\"patches\": [...]}.\n" },
	{ "drop", cmd_drop, "drop ID [--reason TEXT] [--push]",
	  "a maintainer drops a patch, flagged or not",
	  "  ID             flag id, commit, patch-id or Message-ID; a unique prefix will do\n"
	  "  --reason TEXT  why, kept with the drop\n"
	  "  --push         publish the result now\n" },
	{ "undrop", cmd_undrop, "undrop ID", "take a drop back", NULL },
	{ "dismiss", cmd_dismiss, "dismiss ID --reason TEXT",
	  "mark a flag as a false positive: its fingerprint is never blamed again", NULL },
	{ "resolve", cmd_resolve, "resolve TREE",
	  "record a maintainer's resolution of tonight's conflict of TREE",
	  "  Edit the conflicted files in the resolution directory the run named, then\n"
	  "  run this; later nights resolve the same conflict the same way.\n" },
	{ "bisect", cmd_bisect,
	  "bisect --good REV --bad REV [--repo DIR] [--first-parent] [--jobs K] -- CMD ...",
	  "standalone bisection with `git bisect run` exit codes",
	  "  CMD exits 0 good, 125 skip, 1-127 bad (but 125), >127 aborts.\n"
	  "  --repo DIR       the repository (default: the current directory)\n"
	  "  --first-parent   follow only first parents\n"
	  "  --jobs K         test K commits at once\n"
	  "  Exits 3 when only skipped commits remain, listing them.\n" },
	{ "outbox", cmd_outbox, "outbox list\noutbox flush",
	  "pending notices; deliver them now",
	  "  list    queued, sent and failed notices (--json: {\"notices\": [...]})\n"
	  "  flush   deliver every queued notice now (--due: only those whose retry\n"
	  "          time has come, as a run does)\n" },
	{ "inbox", cmd_inbox, "inbox", "poll the IMAP inbox once for mail answering nextbot",
	  "  Fetches the mails of inbox.url that nextbot has not handled yet, carries out\n"
	  "  their #nextbot commands, and marks each handled (\\Seen and $Nextbot).\n"
	  "  `daemon` does this every inbox.poll between nights.\n" },
	{ "mail-in", cmd_mail_in, "mail-in < MESSAGE",
	  "handle one mail answering nextbot (from an MTA pipe, .forward or procmail)",
	  "  Reads one RFC 5322 message on stdin and carries out its #nextbot commands\n"
	  "  (drop, undrop, invalid, reopen, fix:, test:) as `nextbot inbox` would.\n"
	  "  Exits 0 when the mail was handled or ignored, 65 when it is not a mail\n"
	  "  message, 75 when the MTA should try again later (lock held, disk full).\n" },
	{ "report", cmd_report, "report --html DIR", "static HTML dashboard of past runs", NULL },
	{ "gc", cmd_gc, "gc",
	  "prune old runs, worker directories and sent notices; repack the repository",
	  "  Keeps the runs of the config's keep_days most recent nights; flags and drops\n"
	  "  are kept.\n" },
	{ "maintainers", cmd_maintainers, "maintainers [--absent-days N]",
	  "the MAINTAINERS file held against history: absent people, orphaned sections",
	  "  For every M:/R: person of every section of the base's MAINTAINERS, the last\n"
	  "  day they authored, signed off, reviewed, acked or tested a commit touching the\n"
	  "  section's files (maintainers.window_days of history); absent: not seen in\n"
	  "  maintainers.absent_days (or N) days before the base's tip.  Findings:\n"
	  "  all-absent, no-maintainer, orphan, obsolete, no-files, case-duplicate,\n"
	  "  mailmap-duplicate.  --json (global) prints {\"sections\": [...]}.\n" },
	{ "reviews", cmd_reviews, "reviews [TREE]",
	  "the review queue: patches no one but their author reviewed, whom to ask",
	  "  Per tree (or TREE alone), its patches not in the base yet without a\n"
	  "  Reviewed-by or Acked-by by someone other than their author (through the\n"
	  "  tree's .mailmap), oldest first, with suggested reviewers: the M:/R: of their\n"
	  "  files' MAINTAINERS sections, then who reviewed the same files lately; never\n"
	  "  the author.  Then, per author, how many wait and for how long.\n"
	  "  --json (global) prints {\"trees\": [...], \"authors\": [...]}.\n" },
	{ "check-config", cmd_check_config, "check-config",
	  "validate the config and print the resolved plan",
	  "  Exits 0 when the config is valid, 2 with FILE:LINE:COLUMN: KEY: reason when not.\n"
	  "  --json (global) prints the plan as one JSON document.\n" },
};

#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static const char global_usage[] = "usage: nextbot [-c FILE] [--json] [-v|-q] COMMAND ...\n";

static void help_all(FILE *out)
{
	size_t i;

	fputs(global_usage, out);
	fputs("\nglobal options:\n"
	      "  -c, --config FILE  the config (default: $NEXTBOT_CONFIG, else ./nextbot.yaml)\n"
	      "  --json             listing commands print one JSON document on stdout\n"
	      "                     (also after COMMAND: nextbot status --json)\n"
	      "  -v, --verbose      more detail\n"
	      "  -q, --quiet        errors and warnings only\n"
	      "  -h, --help         this help (nextbot COMMAND --help: that command's)\n"
	      "  --version          the version\n"
	      "\ncommands:\n",
	      out);
	for (i = 0; i < NR_COMMANDS; i++) {
		const char *u = commands[i].usage, *nl;

		for (; (nl = strchr(u, '\n')); u = nl + 1)
			fprintf(out, "  %.*s\n", (int)(nl - u), u);
		fprintf(out, "  %s\n        %s\n", u, commands[i].summary);
	}
	fputs("\nexit codes: 0 done, 1 the bot failed, 2 usage or config error,\n"
	      "            3 bisect: only skipped commits remain, 1 patch: none matches,\n"
	      "            65/75 mail-in: not a mail / try again later\n"
	      "See nextbot(1) and nextbot.yaml(5).\n",
	      out);
}

static void help_command(FILE *out, const struct cli_command *c)
{
	const char *u = c->usage, *nl;

	for (; (nl = strchr(u, '\n')); u = nl + 1)
		fprintf(out, "%s nextbot %.*s\n", u == c->usage ? "usage:" : "   or:",
			(int)(nl - u), u);
	fprintf(out, "%s nextbot %s\n\n%s\n", u == c->usage ? "usage:" : "   or:", u, c->summary);
	if (c->details)
		fprintf(out, "\n%s", c->details);
}

static const struct cli_command *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < NR_COMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

__attribute__((format(printf, 1, 2)))
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("nextbot: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n", stderr);
	fputs(global_usage, stderr);
	fputs("Try 'nextbot --help'.\n", stderr);
	return EXIT_USAGE;
}

/* Does the command's own argv ask for help (before any "--")? */
static int wants_help(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			return 0;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return 1;
	}
	return 0;
}

/*
 * `--json` after the command's name means what it means before it: taken out of the
 * command's arguments (up to a "--") into ctx->json, for every command at once.
 * Returns the new argc.
 */
static int take_json(struct cli_ctx *ctx, int argc, char **argv)
{
	int i, out = 1;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			while (i < argc)
				argv[out++] = argv[i++];
			break;
		}
		if (!strcmp(argv[i], "--json"))
			ctx->json = 1;
		else
			argv[out++] = argv[i];
	}
	argv[out] = NULL;
	return out;
}

int cli_main(int argc, char **argv)
{
	struct cli_ctx ctx = { .verbosity = 1 };
	const struct cli_command *cmd;
	const char *env;
	int i;

	/*
	 * nextbot's files are its own: what needs to be shared says so with its mode.
	 * The group keeps read: the work repository's is the runner user's (new files
	 * there inherit it), and every other file is written 0600 or 0700 explicitly.
	 */
	umask(027);
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-c") || !strcmp(a, "--config")) {
			if (++i == argc)
				return usage_error("%s needs a FILE", a);
			ctx.config_path = argv[i];
		} else if (str_starts_with(a, "--config=")) {
			ctx.config_path = a + strlen("--config=");
		} else if (!strcmp(a, "--json")) {
			ctx.json = 1;
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			ctx.verbosity = 2;
		} else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			ctx.verbosity = 0;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			help_all(stdout);
			return EXIT_DONE;
		} else if (!strcmp(a, "--version")) {
			printf("nextbot %s\n", NEXTBOT_VERSION);
			return EXIT_DONE;
		} else {
			return usage_error("unknown option '%s'", a);
		}
	}
	if (i == argc) {
		fputs(global_usage, stderr);
		fputs("Try 'nextbot --help'.\n", stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[i], "help")) {
		if (i + 1 == argc) {
			help_all(stdout);
			return EXIT_DONE;
		}
		if (!(cmd = find_command(argv[i + 1])))
			return usage_error("'%s' is not a nextbot command", argv[i + 1]);
		help_command(stdout, cmd);
		return EXIT_DONE;
	}
	if (!strcmp(argv[i], "worker-checkout"))
		return cmd_worker_checkout(&ctx, argc - i, argv + i);
	if (!strcmp(argv[i], "cc-serve"))
		return cmd_cc_serve(&ctx, argc - i, argv + i);
	if (!(cmd = find_command(argv[i])))
		return usage_error("'%s' is not a nextbot command", argv[i]);
	argc = i + take_json(&ctx, argc - i, argv + i);
	if (wants_help(argc - i, argv + i)) {
		help_command(stdout, cmd);
		return EXIT_DONE;
	}
	if (!ctx.config_path)
		ctx.config_path = (env = getenv("NEXTBOT_CONFIG")) && *env ? env : "nextbot.yaml";
	log_set_level(ctx.verbosity == 0 ? LOG_QUIET : ctx.verbosity == 2 ? LOG_VERBOSE
									    : LOG_NORMAL);
	/* Whatever a command leaves behind (setsid'd daemons) is ours to reap and kill. */
	runcmd_become_subreaper();
	return cmd->fn(&ctx, argc - i, argv + i);
}
