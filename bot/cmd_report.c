/* `nextbot report --html DIR`: one self-contained static page of past nights. */
#include <dirent.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bot/botutil.h"
#include "bot/cli.h"
#include "bot/state.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/strbuf.h"
#include "util/strvec.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define REPORT_NIGHTS 30

static void esc(struct strbuf *out, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': strbuf_addstr(out, "&lt;"); break;
		case '>': strbuf_addstr(out, "&gt;"); break;
		case '&': strbuf_addstr(out, "&amp;"); break;
		case '"': strbuf_addstr(out, "&quot;"); break;
		default: strbuf_addch(out, *s);
		}
	}
}

static const char *css =
	"body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}"
	"td,th{border:1px solid #bbb;padding:2px 6px;font-size:90%}"
	"td.merged{background:#b7e4b0}td.reverted{background:#f7d27a}"
	"td.previous-version{background:#f3e6a0}td.stale{background:#d8d8d8}"
	"td.left-out{background:#f4a6a6}td.fetch-failed{background:#e58080}"
	"td.clean{background:#b7e4b0}td.regression{background:#f7d27a}"
	"td.base-broken,td.failed{background:#e58080}td.unfinished{background:#d8d8d8}"
	"pre{background:#f4f4f4;padding:1em;overflow:auto}";

static const struct run_tree *tree_of(const struct run_record *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->trees_nr; i++)
		if (r->trees[i].name && !strcmp(r->trees[i].name, name))
			return &r->trees[i];
	return NULL;
}

static void grid(struct strbuf *out, const struct state *st, size_t from)
{
	struct strvec names = STRVEC_INIT;
	size_t i, j;

	for (i = from; i < st->runs_nr; i++)
		for (j = 0; j < st->runs[i].trees_nr; j++)
			if (st->runs[i].trees[j].name &&
			    !strvec_contains(&names, st->runs[i].trees[j].name))
				strvec_push(&names, st->runs[i].trees[j].name);
	strbuf_addstr(out, "<h2>Nights</h2><table><tr><th>tree</th>");
	for (i = from; i < st->runs_nr; i++) {
		const char *result = run_result_name(st->runs[i].result);

		strbuf_addf(out, "<th class=\"%s\">", result ? result : "");
		esc(out, st->runs[i].date);
		strbuf_addstr(out, "<br>");
		esc(out, result);
		strbuf_addstr(out, "</th>");
	}
	strbuf_addstr(out, "</tr>\n");
	for (j = 0; j < names.nr; j++) {
		strbuf_addstr(out, "<tr><th>");
		esc(out, names.v[j]);
		strbuf_addstr(out, "</th>");
		for (i = from; i < st->runs_nr; i++) {
			const struct run_tree *t = tree_of(&st->runs[i], names.v[j]);
			const char *state = t ? tree_state_name(t->state) : NULL;

			strbuf_addf(out, "<td class=\"%s\" title=\"",
				    state ? state : "");
			esc(out, t && t->reason ? t->reason : "");
			strbuf_addstr(out, "\">");
			esc(out, state ? state : "");
			strbuf_addstr(out, "</td>");
		}
		strbuf_addstr(out, "</tr>\n");
	}
	strbuf_addstr(out, "</table>\n");
	strvec_clear(&names);
}

/* Mails of the outbox that name the flag, as relative links (the outbox is beside). */
static void flag_mails(struct strbuf *out, const char *outbox, const char *link_base,
			 const char *flag_id)
{
	DIR *d = opendir(outbox);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		struct strbuf body = STRBUF_INIT;
		char *path;

		if (de->d_name[0] == '.')
			continue;
		path = xstrfmt("%s/%s", outbox, de->d_name);
		if (!strbuf_read_file(&body, path, 4 << 20) && strstr(body.buf, flag_id)) {
			strbuf_addstr(out, " <a href=\"");
			esc(out, link_base);
			strbuf_addch(out, '/');
			esc(out, de->d_name);
			strbuf_addstr(out, "\">");
			esc(out, de->d_name);
			strbuf_addstr(out, "</a>");
		}
		strbuf_release(&body);
		free(path);
	}
	closedir(d);
}

static void flags(struct strbuf *out, const struct state *st, const char *workdir)
{
	char *outbox = xstrfmt("%s/outbox", workdir);
	char *link = xstrfmt("file://%s", outbox);
	size_t i;

	strbuf_addstr(out, "<h2>Flags</h2><table><tr><th>id</th><th>state</th><th>kind</th>"
			   "<th>tree</th><th>commit</th><th>subject</th><th>author</th>"
			   "<th>first error</th><th>seen</th><th>mails</th></tr>\n");
	for (i = 0; i < st->flags_nr; i++) {
		const struct flag *f = &st->flags[i];

		strbuf_addstr(out, "<tr><td>");
		esc(out, f->id);
		strbuf_addstr(out, "</td><td>");
		esc(out, flag_state_name(f->state));
		strbuf_addstr(out, "</td><td>");
		esc(out, flag_kind_name(f->kind));
		strbuf_addstr(out, "</td><td>");
		esc(out, f->tree);
		strbuf_addstr(out, "</td><td><code>");
		if (f->commit)
			strbuf_add(out, f->commit, strnlen(f->commit, 12));
		strbuf_addstr(out, "</code></td><td>");
		esc(out, f->subject);
		strbuf_addstr(out, "</td><td>");
		esc(out, f->author.name);
		strbuf_addstr(out, "</td><td><code>");
		esc(out, f->error);
		strbuf_addstr(out, "</code></td><td>");
		esc(out, f->first_seen);
		strbuf_addstr(out, " .. ");
		esc(out, f->last_seen);
		strbuf_addstr(out, "</td><td>");
		if (f->id)
			flag_mails(out, outbox, link, f->id);
		strbuf_addstr(out, "</td></tr>\n");
	}
	strbuf_addstr(out, "</table>\n");
	free(outbox);
	free(link);
}

static void merge_log(struct strbuf *out, const struct state *st, const char *workdir)
{
	struct strbuf log = STRBUF_INIT;
	char *path;

	if (!st->runs_nr)
		return;
	path = xstrfmt("%s/runs/%s/merge.log", workdir, st->runs[st->runs_nr - 1].date);
	if (!strbuf_read_file(&log, path, 8 << 20)) {
		strbuf_addstr(out, "<h2>Latest merge.log (");
		esc(out, st->runs[st->runs_nr - 1].date);
		strbuf_addstr(out, ")</h2><pre>");
		esc(out, log.buf);
		strbuf_addstr(out, "</pre>\n");
	}
	strbuf_release(&log);
	free(path);
}

int cmd_report(const struct cli_ctx *ctx, int argc, char **argv)
{
	struct state st = STATE_INIT;
	struct strbuf page = STRBUF_INIT;
	struct config *cfg = NULL;
	char *path = NULL;
	int code;

	if (argc != 3 || strcmp(argv[1], "--html")) {
		fprintf(stderr, "usage: nextbot report --html DIR\n");
		return EXIT_USAGE;
	}
	if ((code = bot_config_open(&cfg, ctx)))
		return code;
	code = EXIT_FAILED;
	if (state_load(&st, cfg->workdir) < 0) {
		bot_error("cannot read state");
		goto done;
	}
	strbuf_addf(&page, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
			   "<title>nextbot</title><style>%s</style></head><body>\n"
			   "<h1>nextbot: the last nights</h1>\n", css);
	grid(&page, &st, st.runs_nr > REPORT_NIGHTS ? st.runs_nr - REPORT_NIGHTS : 0);
	flags(&page, &st, cfg->workdir);
	merge_log(&page, &st, cfg->workdir);
	strbuf_addstr(&page, "</body></html>\n");
	path = xstrfmt("%s/index.html", argv[2]);
	if (file_mkdir_p(argv[2], 0755) < 0 || file_write_atomic(path, page.buf, page.len) < 0) {
		bot_error("cannot write the report");
		goto done;
	}
	printf("%s\n", path);
	code = EXIT_DONE;
done:
	free(path);
	strbuf_release(&page);
	state_release(&st);
	config_free(cfg);
	return code;
}
