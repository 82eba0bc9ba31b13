/*
 * Housekeeping (`nextbot gc`; the daemon runs it weekly): keeps the runs
 * of the keep_days most recent nights by run date, drops older runs (their
 * runs/<date>/ folders, state.json records and next-YYYYMMDD tags), idle worker
 * directories and sent notices, and repacks the work repository.  Flags and drops
 * are never touched.
 */
#ifndef BOT_GC_H
#define BOT_GC_H

#include <stddef.h>
#include <time.h>
#include "bot/config/config.h"
#include "bot/state/state.h"
#include "merge/repo/repo.h"
#include "util/strvec.h"

struct bot_gc_report {
	struct strvec runs_removed;   /* dates, oldest first (records or folders) */
	size_t nights_kept;
	char oldest_kept[11], newest_kept[11];   /* "" when there is no run */
	size_t tags_removed;
	struct strvec workers_removed; /* directory names */
	size_t notices_removed;
	size_t journeys_removed;      /* ended patch journeys forgotten (bot/journey/) */
	int repacked;                 /* 0: no repository yet */
	struct gc_result repack;
};
#define BOT_GC_REPORT_INIT { .runs_removed = STRVEC_INIT, .workers_removed = STRVEC_INIT }
void bot_gc_report_release(struct bot_gc_report *r);

/*
 * Does it all under workdir; the caller holds the run lock, has loaded `st` and
 * saves it afterwards (its older run records are removed).  Worker directories
 * unused (their index and checkout untouched) for keep_days days of `now` are
 * removed; every sent notice is removed; `journeys` (journey_gc() of bot/journey/,
 * which stands above state/; NULL: none) forgets the ended patch journeys.  Returns 0,
 * or a negative error after doing what it could (the report says what was done).
 */
typedef int bot_gc_journeys_fn(const struct config *cfg, const char *today, size_t *pruned);
int bot_gc(struct bot_gc_report *out, const struct config *cfg, struct state *st, time_t now,
	   bot_gc_journeys_fn *journeys);

/* Prints the report for people: what was kept and what was removed. */
void bot_gc_print(const struct bot_gc_report *r, const char *repo_path);

#endif
