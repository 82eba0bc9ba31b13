/* `nextbot run`: one nightly run, then the outbox is delivered. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bot/core/botutil.h"
#include "bot/cli/cli_int.h"
#include "bot/night/night.h"
#include "merge/repo/repo.h"
#include "merge/transport/transport.h"
#include "bot/state/state.h"
#include "util/xalloc.h"
#include "util/strbuf.h"
#include "util/error.h"
#include "util/log.h"
#include "util/cgroup.h"
#include "util/runcmd.h"
#include "util/slurm.h"
#include "util/banned.h"

/* Delivers what is due; failures stay in the outbox for the next flush. */
int bot_outbox_deliver(const struct config *cfg, int all)
{
	struct notice_flush_stats stats = { 0 };
	struct notices n;
	int error;

	notices_init(&n, cfg);
	error = notice_outbox_flush(&n.settings, all, &stats);
	notices_release(&n);
	if (error < 0)
		bot_error("cannot deliver the outbox");
	else if (stats.sent || stats.failed || stats.deferred || stats.damaged)
		log_info("outbox: %d sent, %d failed, %d deferred, %d waiting%s", stats.sent,
			 stats.failed, stats.deferred, stats.skipped,
			 stats.damaged ? ", damaged ones kept in outbox/damaged/" : "");
	return error;
}

int bot_night(const struct config *cfg, const char *date, int no_notify)
{
	struct night_opts opts = { date, no_notify };
	struct run_lock lock = RUN_LOCK_INIT;
	struct strbuf why = STRBUF_INIT;
	int code;

	if (run_lock_take(&lock, cfg->workdir) < 0) {
		bot_error("cannot run");
		return EXIT_FAILED;
	}
	if (workdir_make_private(cfg->workdir, cfg->runner.user) < 0 ||
	    workdir_check_reach(cfg->workdir, cfg->runner.user) < 0 ||
	    workdir_check_alternates(cfg->workdir, cfg->runner.user) < 0 ||
	    (cfg->runner.sandbox == CONFIG_SANDBOX_BWRAP &&
	     workdir_check_sandbox(cfg->runner.bwrap, cfg->runner.user, cfg->workdir) < 0)) {
		bot_error("cannot run");
		run_lock_release(&lock);
		return EXIT_FAILED;
	}
	if (merge_global_init() < 0 || notify_global_init() < 0) {
		bot_error("cannot start the libraries");
		run_lock_release(&lock);
		return EXIT_FAILED;
	}
	if (cgroup_available(&why) == CGROUP_NONE)
		log_warn("no cgroup for the commands' limits (%s): memory and processes are "
			 "limited per process (RLIMIT_AS, RLIMIT_NPROC), and a command killed by "
			 "them is not named",
			 why.buf);
	strbuf_release(&why);
	bot_catch_stop();
	/* SIGTERM ends a running command (or checkout) at once, whatever it does */
	runcmd_stop_on(&bot_stop_requested);
	/* SIGTERM cancels the running Slurm jobs at once, not after the commands end */
	if (cfg->runner.kind == CONFIG_RUNNER_SLURM)
		slurm_stop_on(&bot_stop_requested);
	code = night_run(cfg, &opts);
	/* earlier nights whose push failed go out now, with their tags */
	if (code == EXIT_DONE)
		bot_publish_retry(cfg);
	/* a SIGTERM leaves no job on the cluster */
	if (cfg->runner.kind == CONFIG_RUNNER_SLURM)
		slurm_cancel_all();
	if (bot_outbox_deliver(cfg, 0) < 0 && code == EXIT_DONE)
		code = EXIT_FAILED;
	notify_global_cleanup();
	merge_global_shutdown();
	run_lock_release(&lock);
	return code;
}

int cmd_run(const struct cli_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = { { "date", required_argument, NULL, 'd' },
					       { "no-notify", no_argument, NULL, 'n' },
					       { NULL, 0, NULL, 0 } };
	const char *date = NULL;
	struct config *cfg = NULL;
	char today[16];
	int c, code, no_notify = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'd')
			date = optarg;
		else if (c == 'n')
			no_notify = 1;
		else
			goto usage;
	}
	if (optind != argc)
		goto usage;
	if (!date) {
		bot_today(today, sizeof(today));
		date = today;
	}
	if (!bot_date_valid(date)) {
		fprintf(stderr, "nextbot: run: '%s' is not a date (YYYY-MM-DD)\n", date);
		return EXIT_USAGE;
	}
	if ((code = bot_config_open(&cfg, ctx)))
		return code;
	code = bot_night(cfg, date, no_notify);
	config_free(cfg);
	return code;
usage:
	fprintf(stderr, "usage: nextbot run [--date YYYY-MM-DD] [--no-notify]\n");
	return EXIT_USAGE;
}

/* 1 when run `r` still owes a push; *at gets the note's index. */
static int owes_push(const struct run_record *r, size_t *at)
{
	size_t i;

	for (i = 0; i < r->notes.nr; i++) {
		if (str_starts_with(r->notes.v[i], "publishing to ")) {
			*at = i;
			return r->tag != NULL;
		}
	}
	return 0;
}

/* Pushes next and each owed tag, oldest night first; 1 when state changed. */
static int push_owed(const struct config *cfg, struct state *st, struct repo *repo)
{
	struct fetch_creds cr = { .token_env = cfg->git.token_env, .ssh_key = cfg->git.ssh_key,
				  .ca_file = cfg->git.ca_file,
				  .idle_timeout = cfg->git.fetch_timeout };
	int changed = 0;
	size_t i, at;

	for (i = 0; i < st->runs_nr; i++) {
		struct run_record *r = &st->runs[i];

		if (!owes_push(r, &at))
			continue;
		if (push_publish(repo, cfg->publish.url, cfg->publish.branch, r->tag, &cr) < 0) {
			log_warn("publish %s: %s", r->tag, nb_error_last());
			break;
		}
		log_info("published %s to %s", r->tag, cfg->publish.url);
		free(r->notes.v[at]);
		memmove(&r->notes.v[at], &r->notes.v[at + 1], (r->notes.nr - at) * sizeof(char *));
		r->notes.nr--;
		changed = 1;
	}
	return changed;
}

void bot_publish_retry(const struct config *cfg)
{
	struct state st = STATE_INIT;
	struct repo *repo = NULL;
	char *path = NULL;
	size_t i, at;

	if (!cfg->publish.url || state_load(&st, cfg->workdir) < 0)
		goto done;
	for (i = 0; i < st.runs_nr && !owes_push(&st.runs[i], &at); i++)
		;
	if (i == st.runs_nr || merge_global_init() < 0)
		goto done;
	path = xstrfmt("%s/repo.git", cfg->workdir);
	if (repo_open(&repo, path) == 0 && push_owed(cfg, &st, repo) &&
	    state_save(&st, cfg->workdir) < 0)
		bot_error("cannot save state");
	repo_free(repo);
	merge_global_shutdown();
done:
	free(path);
	state_release(&st);
}
