/*
 * `nextbot daemon`: runs the night at the configured schedule until SIGTERM, and
 * polls the inbox (inbox.url) every inbox.poll between nights.
 * SIGTERM during a night finishes the current step, records the night as
 * unfinished and exits 0; SIGHUP reloads the config between nights.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bot/core/botutil.h"
#include "bot/cli/cli_int.h"
#include "bot/journey/journey.h"
#include "bot/state/state.h"
#include "merge/repo/repo.h"
#include "util/cron.h"
#include "util/error.h"
#include "util/log.h"
#include "util/banned.h"

static volatile sig_atomic_t reload_requested;

static void on_hup(int sig)
{
	reload_requested = 1;
}

static void signals(void)
{
	struct sigaction sa;

	bot_catch_stop();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_hup;
	sigaction(SIGHUP, &sa, NULL);
}

/* When the last night started, from state.json; 0 when there is none. */
static time_t last_run(const struct config *cfg)
{
	struct state st = STATE_INIT;
	struct tm tm;
	time_t t = 0;

	if (state_load(&st, cfg->workdir) == 0 && st.runs_nr) {
		const struct run_record *r = &st.runs[st.runs_nr - 1];

		memset(&tm, 0, sizeof(tm));
		if (r->started && strptime(r->started, "%Y-%m-%dT%H:%M:%SZ", &tm))
			t = timegm(&tm);
	}
	state_release(&st);
	return t;
}

/*
 * Sleeps until `when`, a signal, or a reload; returns 1 when it is time.  Meanwhile
 * the inbox is polled every inbox.poll (the first poll at once).
 */
static int sleep_until(const struct config *cfg, time_t when, time_t *next_poll)
{
	while (!bot_stop_requested && !reload_requested) {
		time_t now = time(NULL), wake = when;

		if (now >= when)
			return 1;
		if (cfg->inbox.url) {
			if (now >= *next_poll) {
				bot_inbox_poll(cfg);
				*next_poll = time(NULL) + cfg->inbox.poll;
				continue;
			}
			if (*next_poll < wake)
				wake = *next_poll;
		}
		sleep((unsigned)(wake - now > 60 ? 60 : wake - now));
	}
	return 0;
}

/* Housekeeping once a week, after a night, under the lock. */
static void weekly_gc(const struct config *cfg, time_t *last_gc)
{
	struct bot_gc_report r = BOT_GC_REPORT_INIT;
	struct run_lock lock = RUN_LOCK_INIT;
	struct state st = STATE_INIT;
	time_t now = time(NULL);

	if (*last_gc && now - *last_gc < 7 * 86400)
		return;
	*last_gc = now;
	if (run_lock_take(&lock, cfg->workdir) < 0) {
		log_warn("daemon: gc skipped: %s", nb_error_last());
		return;
	}
	if (merge_global_init() == 0) {
		if (state_load(&st, cfg->workdir) == 0 &&
		    bot_gc(&r, cfg, &st, now, journey_gc) == 0 &&
		    state_save(&st, cfg->workdir) == 0)
			log_info("daemon: gc kept %zu nights, removed %zu", r.nights_kept,
				 r.runs_removed.nr);
		else
			log_warn("daemon: gc: %s", nb_error_last());
		merge_global_shutdown();
	}
	bot_gc_report_release(&r);
	state_release(&st);
	run_lock_release(&lock);
}

static int one_night(const struct config *cfg)
{
	char today[16];
	int code;

	bot_today(today, sizeof(today));
	log_info("daemon: starting the night of %s", today);
	code = bot_night(cfg, today, 0);
	if (code != EXIT_DONE)
		log_warn("daemon: the night of %s failed (exit %d); waiting for the next slot",
			 today, code);
	return code;
}

static int reload(struct config **cfg, const struct cli_ctx *ctx)
{
	struct config *fresh = NULL;

	reload_requested = 0;
	if (config_load(&fresh, ctx->config_path) < 0) {
		log_warn("daemon: keeping the old config: %s", nb_error_last());
		return 0;
	}
	config_free(*cfg);
	*cfg = fresh;
	log_info("daemon: config reloaded");
	return 0;
}

int cmd_daemon(const struct cli_ctx *ctx, int argc, char **argv)
{
	struct config *cfg = NULL;
	struct cron_expr cron;
	time_t next, last, last_gc = 0, next_poll = 0;
	int code;

	if (argc != 1) {
		fprintf(stderr, "usage: nextbot daemon\n");
		return EXIT_USAGE;
	}
	if ((code = bot_config_open(&cfg, ctx)))
		return code;
	signals();
	last = last_run(cfg);
	while (!bot_stop_requested) {
		if (cron_parse(&cron, cfg->schedule) < 0) {
			bot_error("schedule");
			config_free(cfg);
			return EXIT_USAGE;
		}
		/* a slot missed while we were down is caught up once, at once */
		if (last && cron_next(&next, &cron, last) == 0 && next <= time(NULL)) {
			log_info("daemon: catching up a missed night");
		} else if (cron_next(&next, &cron, time(NULL)) < 0) {
			bot_error("schedule");
			break;
		} else {
			char when[32];

			bot_rfc3339(when, sizeof(when), next);
			log_info("daemon: next night at %s", when);
			if (!sleep_until(cfg, next, &next_poll)) {
				if (reload_requested)
					reload(&cfg, ctx);
				continue;
			}
		}
		one_night(cfg);
		last = time(NULL);
		if (!bot_stop_requested)
			weekly_gc(cfg, &last_gc);
	}
	log_info("daemon: stopping");
	config_free(cfg);
	return EXIT_DONE;
}
