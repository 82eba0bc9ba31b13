/* Housekeeping: old runs, idle workers, sent notices, and a repack of the work repository. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bot/core/botutil.h"
#include "bot/state/state.h"
#include "merge/repo/repo.h"
#include "notify/prune.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "util/banned.h"

void bot_gc_report_release(struct bot_gc_report *r)
{
	strvec_clear(&r->runs_removed);
	strvec_clear(&r->workers_removed);
}

static int cmp_desc(const void *a, const void *b)
{
	return strcmp(*(char *const *)b, *(char *const *)a);
}

/* Every night's date (state records and runs/ folders), newest first, unique. */
static void old_nights(struct strvec *out, const struct state *st, const char *runs_dir)
{
	DIR *d = opendir(runs_dir);
	struct dirent *de;
	size_t i, k;

	for (i = 0; i < st->runs_nr; i++)
		if (st->runs[i].date && bot_date_valid(st->runs[i].date))
			strvec_push(out, st->runs[i].date);
	while (d && (de = readdir(d)))
		if (bot_date_valid(de->d_name))
			strvec_push(out, de->d_name);
	if (d)
		closedir(d);
	if (!out->nr)
		return;
	qsort(out->v, out->nr, sizeof(*out->v), cmp_desc);
	for (i = k = 1; i < out->nr; i++) {
		if (strcmp(out->v[i], out->v[k - 1]))
			out->v[k++] = out->v[i];
		else
			free(out->v[i]);
	}
	out->nr = k;
	out->v[k] = NULL;
}

/* Removes run records and runs/<date>/ folders older than `cutoff`. */
static int drop_runs(struct bot_gc_report *r, struct state *st, const char *runs_dir,
		       const struct strvec *nights, const char *cutoff)
{
	size_t i, k;
	int err = 0;

	for (i = nights->nr; i-- > 0;) {
		char *path;

		if (strcmp(nights->v[i], cutoff) >= 0)
			continue;
		path = xstrfmt("%s/%s", runs_dir, nights->v[i]);
		if (file_remove_tree(path) < 0)
			err = NB_ERROR;
		strvec_push(&r->runs_removed, nights->v[i]);
		free(path);
	}
	for (i = k = 0; i < st->runs_nr; i++) {
		if (st->runs[i].date && bot_date_valid(st->runs[i].date) &&
		    strcmp(st->runs[i].date, cutoff) < 0)
			run_record_release(&st->runs[i]);
		else
			st->runs[k++] = st->runs[i];
	}
	st->runs_nr = k;
	return err;
}

/*
 * The newest of the mtimes of `dir`, `dir`/git (HEAD and index are replaced at
 * each checkout) and `dir`/tree; never following a link the worker's commands made.
 */
static time_t last_use(const char *dir)
{
	const char *parts[] = { "", "/git", "/tree" };
	time_t last = 0;
	size_t i;

	for (i = 0; i < 3; i++) {
		char *p = xstrfmt("%s%s", dir, parts[i]);
		struct stat sb;

		if (lstat(p, &sb) == 0 && sb.st_mtime > last)
			last = sb.st_mtime;
		free(p);
	}
	return last;
}

/* A worker holds its index or its tree; anything else in workers/ is a cell's folder. */
static int is_worker(const char *dir)
{
	char *index = xstrfmt("%s/index", dir), *tree = xstrfmt("%s/tree", dir);
	int yes = file_exists(index) || file_is_dir(tree);

	free(index);
	free(tree);
	return yes;
}

/* Idle workers of `workers_dir` (`prefix` names it in the report), and of each cell's
 * folder (workers/<cell>/w<i>, a matrix's), which goes once it is empty. */
static int drop_workers(struct bot_gc_report *r, const char *workers_dir, const char *prefix,
			time_t before)
{
	DIR *d = opendir(workers_dir);
	struct dirent *de;
	int err = 0;

	while (d && (de = readdir(d))) {
		char *path, *name;

		if (de->d_name[0] == '.')
			continue;
		path = xstrfmt("%s/%s", workers_dir, de->d_name);
		name = xstrfmt("%s%s", prefix, de->d_name);
		if (!file_is_dir(path)) {
			/* not ours to judge */
		} else if (!*prefix && !is_worker(path)) {
			char *sub = xstrfmt("%s/", de->d_name);

			if (drop_workers(r, path, sub, before) < 0)
				err = NB_ERROR;
			free(sub);
			if (rmdir(path) == 0)
				strvec_push(&r->workers_removed, name);
		} else if (last_use(path) < before) {
			if (file_remove_tree(path) < 0)
				err = NB_ERROR;
			else
				strvec_push(&r->workers_removed, name);
		}
		free(name);
		free(path);
	}
	if (d)
		closedir(d);
	return err;
}

/* Keeps the keep_days newest nights; returns the first error seen, after all steps. */
static int runs(struct bot_gc_report *r, const struct config *cfg, struct state *st,
		  const char *repo_path)
{
	struct strvec nights = STRVEC_INIT;
	char *runs_dir = xstrfmt("%s/runs", cfg->workdir);
	size_t keep = cfg->keep_days > 0 ? (size_t)cfg->keep_days : 1;
	int err = 0;

	old_nights(&nights, st, runs_dir);
	r->nights_kept = nights.nr < keep ? nights.nr : keep;
	if (nights.nr) {
		snprintf(r->newest_kept, sizeof(r->newest_kept), "%s", nights.v[0]);
		snprintf(r->oldest_kept, sizeof(r->oldest_kept), "%s",
			 nights.v[r->nights_kept - 1]);
	}
	if (nights.nr > keep) {
		err = drop_runs(r, st, runs_dir, &nights, r->oldest_kept);
		if (file_is_dir(repo_path) &&
		    gc_drop_night_tags(repo_path, r->oldest_kept, &r->tags_removed) < 0 && !err)
			err = NB_ERROR;
	}
	strvec_clear(&nights);
	free(runs_dir);
	return err;
}

/* Patch journeys that ended keep_days nights ago. */
static int gc_journeys(struct bot_gc_report *r, const struct config *cfg, time_t now,
		       bot_gc_journeys_fn *journeys)
{
	char today[16];
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(today, sizeof(today), "%Y-%m-%d", &tm);
	return journeys ? journeys(cfg, today, &r->journeys_removed) : 0;
}

int bot_gc(struct bot_gc_report *r, const struct config *cfg, struct state *st, time_t now,
	   bot_gc_journeys_fn *journeys)
{
	char *repo_path = xstrfmt("%s/repo.git", cfg->workdir);
	char *workers = xstrfmt("%s/workers", cfg->workdir);
	char *outbox = xstrfmt("%s/outbox", cfg->workdir);
	int err, e;

	err = runs(r, cfg, st, repo_path);
	e = drop_workers(r, workers, "", now - (time_t)cfg->keep_days * 86400);
	err = err ? err : e;
	e = notice_outbox_prune(outbox, now, &r->notices_removed);
	err = err ? err : e;
	e = gc_journeys(r, cfg, now, journeys);
	err = err ? err : e;
	if (file_is_dir(repo_path)) {
		r->repacked = 1;
		e = gc_repack(&r->repack, repo_path, 0);
		err = err ? err : e;
	}
	free(repo_path);
	free(workers);
	free(outbox);
	return err;
}

void bot_gc_print(const struct bot_gc_report *r, const char *repo_path)
{
	size_t i, n = r->runs_removed.nr;

	if (r->nights_kept)
		printf("kept the runs of %zu night%s: %s .. %s\n", r->nights_kept,
		       r->nights_kept == 1 ? "" : "s", r->oldest_kept, r->newest_kept);
	if (n)
		printf("removed the runs of %zu night%s: %s .. %s (and %zu tag%s)\n", n,
		       n == 1 ? "" : "s", r->runs_removed.v[0], r->runs_removed.v[n - 1],
		       r->tags_removed, r->tags_removed == 1 ? "" : "s");
	else
		printf("removed no runs\n");
	for (i = 0; i < r->workers_removed.nr; i++)
		printf("removed idle worker directory %s\n", r->workers_removed.v[i]);
	printf("removed %zu sent notice%s\n", r->notices_removed,
	       r->notices_removed == 1 ? "" : "s");
	if (r->journeys_removed)
		printf("forgot %zu ended patch journey%s\n", r->journeys_removed,
		       r->journeys_removed == 1 ? "" : "s");
	if (r->repacked)
		printf("repacked %s with %s: %zu loose objects before, %zu after, %zu pack%s\n",
		       repo_path, r->repack.how ? r->repack.how : "?", r->repack.loose_before,
		       r->repack.loose_after, r->repack.packs_after,
		       r->repack.packs_after == 1 ? "" : "s");
}
