/* The night's metrics file (Prometheus text exposition format 0.0.4). */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bot/night/night.h"
#include "bot/night/promfile_int.h"
#include "bot/state/state.h"
#include "notify/outbox.h"
#include "util/fileutil.h"
#include "util/metrics.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

static void head(struct strbuf *sb, const char *name, const char *type, const char *help)
{
	strbuf_addf(sb, "# HELP nextbot_%s %s\n# TYPE nextbot_%s %s\n", name, help, name, type);
}

static void gauge(struct strbuf *sb, const char *name, const char *help, double v)
{
	head(sb, name, "gauge", help);
	strbuf_addf(sb, "nextbot_%s %.6g\n", name, v);
}

/* Bytes of every regular file under `dir`, not following links. */
static double dir_bytes(const char *dir, int depth)
{
	DIR *d = depth < 8 ? opendir(dir) : NULL;
	struct dirent *e;
	struct stat st;
	double total = 0;

	while (d && (e = readdir(d))) {
		char *p;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		p = xstrfmt("%s/%s", dir, e->d_name);
		if (!lstat(p, &st) && S_ISREG(st.st_mode))
			total += (double)st.st_size;
		else if (!lstat(p, &st) && S_ISDIR(st.st_mode))
			total += dir_bytes(p, depth + 1);
		free(p);
	}
	if (d)
		closedir(d);
	return total;
}

static void phases(struct strbuf *sb, const struct night *n)
{
	static const char *const names[] = { "fetch", "merge", "check", "bisect", "total" };
	double merge = n->phase.merge - n->phase.check - n->phase.bisect;
	const double v[] = { n->phase.fetch, merge > 0 ? merge : 0, n->phase.check,
			     n->phase.bisect, n->phase.total };
	size_t i;

	head(sb, "night_phase_seconds", "gauge",
	     "Wall time of the last night's phases (merge excludes its checks and searches).");
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		strbuf_addf(sb, "nextbot_night_phase_seconds{phase=\"%s\"} %.3f\n", names[i], v[i]);
}

static void counters(struct strbuf *sb)
{
	int m;

	for (m = 0; m < METRIC_NR; m++) {
		head(sb, metric_name(m), "gauge", metric_help(m));
		strbuf_addf(sb, "nextbot_%s %.6g\n", metric_name(m), metrics_get(m));
	}
}

static void state_gauges(struct strbuf *sb, const struct night *n)
{
	char **ids = NULL;
	size_t i, open = 0, nr = 0;
	char *outbox = xstrfmt("%s/outbox", n->cfg->workdir);

	for (i = 0; i < n->st->flags_nr; i++)
		open += n->st->flags[i].state == FLAG_OPEN;
	gauge(sb, "open_flags", "Flags open after the last night.", (double)open);
	if (outbox_ids(&ids, &nr, outbox) < 0)
		nr = 0;
	outbox_ids_free(ids, nr);
	gauge(sb, "outbox_notices", "Notices in the outbox spool (not yet delivered).",
	      (double)nr);
	gauge(sb, "repository_bytes", "Size of the work repository on disk.",
	      dir_bytes(n->repo_path, 0));
	free(outbox);
}

int promfile_write(const struct night *n)
{
	struct strbuf sb = STRBUF_INIT;
	char *path = xstrfmt("%s/metrics.prom", n->cfg->workdir);
	int err;

	head(&sb, "night_info", "gauge", "The last night: its date and result.");
	strbuf_addf(&sb, "nextbot_night_info{date=\"%s\",result=\"%s\"} 1\n", n->opts->date,
		    run_result_name(n->run->result));
	gauge(&sb, "night_build_rounds", "Checks of next (a round of speculative ones counts "
		  "once).", n->build_rounds);
	phases(&sb, n);
	counters(&sb);
	state_gauges(&sb, n);
	err = file_write_atomic(path, sb.buf, sb.len);
	free(path);
	strbuf_release(&sb);
	return err;
}
