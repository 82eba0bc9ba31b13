/*
 * `nextbot report --html DIR`: a small static site of the past nights, to be served
 * over HTTP.  DIR/index.html (the nights at a glance, the open flags), a page per
 * night (nights/<date>.html: trees, culprits, conflicts, notes, the notices sent,
 * Next/ files, merge.log, bisect logs), a page per flag (flags/<id>.html: the
 * evidence and what a maintainer can do) and a page per notice still in the outbox
 * (notices/<id>.html).  Links are relative; pages of runs and notices that `gc`
 * removed are removed with them on the next generation.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bot/core/botutil.h"
#include "bot/cli/cli_int.h"
#include "bot/dash/html.h"
#include "bot/journey/journey.h"
#include "bot/night/night.h"
#include "bot/people/people.h"
#include "bot/state/state.h"
#include "merge/repo/repo.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/strvec.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define REPORT_NIGHTS 30
#define REPORT_FILE_MAX (8 << 20)

struct site {
	const struct config *cfg;
	const struct state *st;
	struct repo *repo;       /* NULL: no repository (no Next/ files) */
	char *outbox;
	char *dir;	      /* DIR */
	char *tmp;	      /* DIR/.nextbot-new: the subfolders are built here */
	struct strvec shown;  /* notice ids that have a page */
	struct strvec nights; /* dates that have a page */
	size_t from;	      /* first run shown */
	int people_pages;     /* 1: people/maintainers.html, 2: people/reviews.html */
	struct strbuf patches; /* the index's links to the trees' patch lists (bot/journey/) */
};

static const char *s_or(const char *s, const char *dflt)
{
	return s && *s ? s : dflt;
}

/* Replaces every `path` in sb by `with`: the host's layout is nobody else's business. */
static void scrub(struct strbuf *sb, const char *path, const char *with)
{
	struct strbuf out = STRBUF_INIT;
	const char *p = sb->buf, *hit;
	size_t plen = strlen(path);

	if (plen < 2)
		return;
	while ((hit = strstr(p, path))) {
		strbuf_add(&out, p, (size_t)(hit - p));
		strbuf_addstr(&out, with);
		p = hit + plen;
	}
	if (p != sb->buf) {
		strbuf_addstr(&out, p);
		strbuf_reset(sb);
		strbuf_addbuf(sb, &out);
	}
	strbuf_release(&out);
}

static int write_page(struct site *s, const char *rel, struct strbuf *page)
{
	char *path = xstrfmt("%s/%s", s->tmp, rel), *slash = strrchr(path, '/');
	int err;

	scrub(page, s->cfg->workdir, "$WORKDIR");
	*slash = '\0';
	err = file_mkdir_p(path, 0755);
	*slash = '/';
	if (!err)
		err = file_write_public(path, page->buf, page->len);
	free(path);
	return err;
}

static const struct flag *flag_of(const struct state *st, const char *id)
{
	size_t i;

	for (i = 0; id && i < st->flags_nr; i++)
		if (st->flags[i].id && !strcmp(st->flags[i].id, id))
			return &st->flags[i];
	return NULL;
}

/* <a href="{root}flags/<id>.html"><id></a> */
static void flag_link(struct strbuf *out, const char *root, const char *id)
{
	strbuf_addf(out, "<a href=\"%sflags/", root);
	html_attr(out, id);
	strbuf_addstr(out, ".html\"><code class=\"id\">");
	html_line(out, id);
	strbuf_addstr(out, "</code></a>");
}

static void night_link(struct strbuf *out, const struct site *s, const char *root,
		       const char *date, const char *text)
{
	if (!strvec_contains(&s->nights, date)) {
		html_line(out, text);
		return;
	}
	strbuf_addf(out, "<a href=\"%snights/", root);
	html_attr(out, date);
	strbuf_addstr(out, ".html\">");
	html_line(out, text);
	strbuf_addstr(out, "</a>");
}

/* A flag's kind, never broken across lines. */
static void kind(struct strbuf *out, const struct flag *f)
{
	strbuf_addstr(out, "<span class=\"kind\">");
	html_line(out, flag_kind_name(f->kind));
	strbuf_addstr(out, "</span>");
}

/*
 * "<12 hex> ("subject")" of the culprit, then its partner: visible, never a tooltip.
 * A flaky flag blames no patch and no one: its tree alone.
 */
static void culprit(struct strbuf *out, const struct flag *f)
{
	if (f->kind == FLAG_FLAKY) {
		strbuf_addstr(out, "no patch is blamed (it fails some runs of the same tree) in ");
		html_line(out, f->tree);
		return;
	}
	strbuf_addstr(out, "<code class=\"id\">");
	html_line_n(out, f->commit, 12);
	strbuf_addstr(out, "</code> <span class=\"subject\">");
	html_line(out, s_or(f->subject, "(no patch named)"));
	strbuf_addstr(out, "</span> in ");
	html_line(out, f->tree);
	if (f->author.name || f->author.email) {
		strbuf_addstr(out, " by ");
		html_line(out, s_or(f->author.name, f->author.email));
	}
	if (f->partner_tree) {
		strbuf_addstr(out, "; with <code class=\"id\">");
		html_line_n(out, f->partner_commit, 12);
		strbuf_addstr(out, "</code> <span class=\"subject\">");
		html_line(out, f->partner_subject);
		strbuf_addstr(out, "</span> in ");
		html_line(out, f->partner_tree);
		if (f->partner_author.name) {
			strbuf_addstr(out, " by ");
			html_line(out, f->partner_author.name);
		}
	}
}

/* A conflict key "tree/other: path path" as text. */
static void conflict_text(struct strbuf *out, const char *key)
{
	const char *slash = strchr(key, '/'), *colon = strchr(key, ':');

	if (!slash || !colon || slash > colon) {
		html_line(out, key);
		return;
	}
	strbuf_addstr(out, "the ");
	html_line_n(out, key, (size_t)(slash - key));
	strbuf_addstr(out, " tree with the ");
	html_line_n(out, slash + 1, (size_t)(colon - slash - 1));
	strbuf_addstr(out, " tree in <code>");
	html_line(out, colon + 1 + strspn(colon + 1, " "));
	strbuf_addstr(out, "</code>");
}

/* ---- index.html ---- */

static const struct run_tree *tree_of(const struct run_record *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->trees_nr; i++)
		if (r->trees[i].name && !strcmp(r->trees[i].name, name))
			return &r->trees[i];
	return NULL;
}

static void grid(struct strbuf *out, const struct site *s)
{
	const struct state *st = s->st;
	struct strvec names = STRVEC_INIT;
	size_t i, j;

	for (i = s->from; i < st->runs_nr; i++)
		for (j = 0; j < st->runs[i].trees_nr; j++)
			if (st->runs[i].trees[j].name &&
			    !strvec_contains(&names, st->runs[i].trees[j].name))
				strvec_push(&names, st->runs[i].trees[j].name);
	strbuf_addstr(out, "<h2>Trees, night by night</h2>\n<div class=\"scroll\"><table "
			   "class=\"grid\"><tr><th>tree</th>");
	for (i = st->runs_nr; i-- > s->from;) {
		const struct run_record *r = &st->runs[i];

		strbuf_addstr(out, "<th class=\"");
		html_attr(out, run_result_name(r->result));
		strbuf_addstr(out, " night-");
		html_attr(out, run_result_name(r->result));
		strbuf_addstr(out, "\">");
		night_link(out, s, "", r->date, r->date);
		strbuf_addstr(out, "<br>");
		html_line(out, run_result_name(r->result));
		strbuf_addstr(out, "</th>");
	}
	strbuf_addstr(out, "</tr>\n");
	for (j = 0; j < names.nr; j++) {
		strbuf_addstr(out, "<tr><th>");
		html_line(out, names.v[j]);
		strbuf_addstr(out, "</th>");
		for (i = st->runs_nr; i-- > s->from;) {
			const struct run_tree *t = tree_of(&st->runs[i], names.v[j]);

			/* the tree's state, in the colour of the night's result */
			strbuf_addstr(out, "<td class=\"");
			html_attr(out, t ? tree_state_name(t->state) : "");
			strbuf_addstr(out, " night-");
			html_attr(out, run_result_name(st->runs[i].result));
			strbuf_addstr(out, "\">");
			html_line(out, t ? tree_state_name(t->state) : "");
			strbuf_addstr(out, "</td>");
		}
		strbuf_addstr(out, "</tr>\n");
	}
	strbuf_addstr(out, "</table></div>\n");
	strvec_clear(&names);
}

static void night_items(struct strbuf *out, const struct site *s, const struct run_record *r,
			const char *root)
{
	size_t i, start;

	strbuf_addstr(out, "<ul class=\"items\">");
	start = out->len;
	for (i = 0; i < r->flags.nr; i++) {
		const struct flag *f = flag_of(s->st, r->flags.v[i]);

		if (!f)
			continue;
		strbuf_addstr(out, "<li>");
		kind(out, f);
		strbuf_addch(out, ' ');
		flag_link(out, root, f->id);
		strbuf_addstr(out, ": ");
		culprit(out, f);
		strbuf_addstr(out, "</li>");
	}
	for (i = 0; i < r->conflicts.nr; i++) {
		strbuf_addstr(out, "<li>conflict of ");
		conflict_text(out, r->conflicts.v[i]);
		strbuf_addstr(out, "</li>");
	}
	for (i = 0; i < r->trees_nr; i++) {
		const struct run_tree *t = &r->trees[i];

		if (!t->reason || !t->state || t->state == TREE_MERGED)
			continue;
		strbuf_addstr(out, "<li><span class=\"");
		html_attr(out, tree_state_name(t->state));
		strbuf_addstr(out, "\">");
		html_line(out, t->name);
		strbuf_addstr(out, ": ");
		html_line(out, tree_state_name(t->state));
		strbuf_addstr(out, "</span> ");
		html_line(out, t->reason);
		strbuf_addstr(out, "</li>");
	}
	for (i = 0; i < r->notes.nr; i++) {
		strbuf_addstr(out, "<li>note: ");
		html_line(out, r->notes.v[i]);
		strbuf_addstr(out, "</li>");
	}
	if (out->len == start)
		strbuf_addstr(out, "<li>Every tree merged as it is; no breakage.</li>");
	strbuf_addstr(out, "</ul>\n");
}

/* A matrix flag's cells: where it fails, since when, and how. */
/* How many of the flag's cells are configurations of a build matrix. */
static size_t matrix_cells(const struct flag *f)
{
	size_t i, n = 0;

	for (i = 0; i < f->cells_nr; i++)
		n += f->cells[i].env.nr > 0;
	return n;
}

static void cells(struct strbuf *out, const struct flag *f)
{
	size_t i, shown = 0;

	for (i = 0; i < f->cells_nr; i++) {
		const struct flag_cell *c = &f->cells[i];

		if (!c->env.nr)
			continue;
		strbuf_addstr(out, shown++ ? "<li>" : "<ul class=\"cells\"><li>");
		strbuf_addstr(out, "<code>");
		html_line(out, c->name);
		strbuf_addstr(out, "</code> since ");
		html_line(out, c->first_seen);
		strbuf_addstr(out, ": <code>");
		html_line(out, c->first_error);
		strbuf_addstr(out, "</code></li>");
	}
	if (shown)
		strbuf_addstr(out, "</ul>");
}

static void open_flags(struct strbuf *out, const struct site *s)
{
	size_t i, n = 0;

	strbuf_addstr(out, "<h2>Open flags</h2>\n");
	for (i = 0; i < s->st->flags_nr; i++) {
		const struct flag *f = &s->st->flags[i];

		if (f->state != FLAG_OPEN)
			continue;
		if (!n++)
			strbuf_addstr(out, "<div class=\"scroll\"><table><tr><th>flag</th>"
					   "<th>kind</th><th>culprit</th><th>first error</th>"
					   "<th>seen</th></tr>\n");
		strbuf_addstr(out, "<tr><td class=\"open\">");
		flag_link(out, "", f->id);
		strbuf_addstr(out, "</td><td>");
		kind(out, f);
		strbuf_addstr(out, "</td><td>");
		culprit(out, f);
		strbuf_addstr(out, "</td><td><code>");
		html_line(out, f->error);
		strbuf_addstr(out, "</code>");
		cells(out, f);
		strbuf_addstr(out, "</td><td>");
		html_line(out, f->first_seen);
		strbuf_addstr(out, " to ");
		html_line(out, f->last_seen);
		strbuf_addstr(out, "</td></tr>\n");
	}
	strbuf_addstr(out, n ? "</table></div>\n" : "<p>None.</p>\n");
}

static void other_flags(struct strbuf *out, const struct site *s)
{
	size_t i, n = 0;

	for (i = 0; i < s->st->flags_nr; i++) {
		const struct flag *f = &s->st->flags[i];

		if (f->state == FLAG_OPEN)
			continue;
		if (!n++)
			strbuf_addstr(out, "<h2>Earlier flags</h2>\n<ul class=\"items\">");
		strbuf_addstr(out, "<li><span class=\"");
		html_attr(out, flag_state_name(f->state));
		strbuf_addstr(out, "\">");
		html_line(out, flag_state_name(f->state));
		strbuf_addstr(out, "</span> ");
		flag_link(out, "", f->id);
		strbuf_addstr(out, ": ");
		culprit(out, f);
		strbuf_addstr(out, "</li>");
	}
	if (n)
		strbuf_addstr(out, "</ul>\n");
}

/* The patches the review gate holds out of next, and why (bot/journey/). */
static void held_patches(struct strbuf *out, const struct site *s)
{
	struct journey_held *v;
	size_t i, nr;

	if (journey_held_list(s->cfg, &v, &nr) < 0) {
		nb_error_clear(); /* no journeys kept: nothing is held */
		return;
	}
	if (nr) {
		strbuf_addf(out, "<h2>Held by the review gate (%zu)</h2>\n<div class=\"scroll\">"
				 "<table><tr><th>patch</th><th>author</th><th>tree</th>"
				 "<th>since</th><th>why</th></tr>\n", nr);
		for (i = 0; i < nr; i++) {
			strbuf_addstr(out, "<tr><td class=\"held\"><span class=\"subject\">");
			html_line(out, v[i].subject);
			strbuf_addstr(out, "</span></td><td>");
			html_line(out, v[i].author);
			strbuf_addstr(out, "</td><td>");
			html_line(out, s_or(v[i].tree, "-"));
			strbuf_addstr(out, "</td><td class=\"kind\">");
			html_line(out, s_or(v[i].since, "-"));
			strbuf_addstr(out, "</td><td>");
			html_line(out, v[i].why);
			strbuf_addstr(out, "</td></tr>\n");
		}
		strbuf_addstr(out, "</table></div>\n");
	}
	journey_held_free(v, nr);
}

static int index_page(struct site *s)
{
	struct strbuf page = STRBUF_INIT;
	const struct state *st = s->st;
	size_t i;
	int err;

	html_begin(&page, "nextbot: the last nights", "");
	strbuf_addstr(&page, "<h1>nextbot: the last nights</h1>\n");
	if (st->runs_nr) {
		const struct run_record *r = &st->runs[st->runs_nr - 1];

		strbuf_addstr(&page, "<p>Latest: ");
		night_link(&page, s, "", r->date, s_or(r->tag, r->date));
		strbuf_addstr(&page, " <span class=\"");
		html_attr(&page, run_result_name(r->result));
		strbuf_addstr(&page, "\">");
		html_line(&page, run_result_name(r->result));
		strbuf_addstr(&page, "</span>, next <code>");
		html_line_n(&page, r->next, 12);
		strbuf_addstr(&page, "</code></p>\n");
	} else {
		strbuf_addstr(&page, "<p>No nights yet.</p>\n");
	}
	open_flags(&page, s);
	if (s->people_pages)
		strbuf_addf(&page, "<p>%s%s%s</p>\n",
			    s->people_pages & 2 ? "<a href=\"people/reviews.html\">Waiting for "
						  "review</a>" : "",
			    s->people_pages == 3 ? " &middot; " : "",
			    s->people_pages & 1 ? "<a href=\"people/maintainers.html\">MAINTAINERS "
						  "held against history</a>" : "");
	held_patches(&page, s);
	if (s->patches.len)
		strbuf_addf(&page, "<h2>Patches, tree by tree</h2>\n<ul class=\"items\">\n%s"
			    "</ul>\n", s->patches.buf);
	grid(&page, s);
	strbuf_addstr(&page, "<h2>What each night found</h2>\n");
	for (i = st->runs_nr; i-- > s->from;) {
		const struct run_record *r = &st->runs[i];

		strbuf_addstr(&page, "<h3>");
		night_link(&page, s, "", r->date, r->date);
		strbuf_addstr(&page, " <span class=\"");
		html_attr(&page, run_result_name(r->result));
		strbuf_addstr(&page, "\">");
		html_line(&page, run_result_name(r->result));
		strbuf_addstr(&page, "</span></h3>\n");
		night_items(&page, s, r, "");
	}
	other_flags(&page, s);
	html_end(&page);
	err = write_page(s, "index.html", &page);
	strbuf_release(&page);
	return err;
}

/* ---- notices ---- */

/* 1 when the notice went to notify.operator alone: local paths, not for this site. */
static int for_operator(const struct site *s, const struct notice_shown *shown)
{
	const char *op = s->cfg->notify.operator, *lt;
	size_t len;

	if (!op)
		return 0;
	lt = strchr(op, '<');
	if (lt) {
		op = lt + 1;
		len = strcspn(op, ">");
	} else {
		len = strlen(op);
	}
	return strlen(shown->to) == len + 1 && !strncmp(shown->to, op, len);
}

/*
 * A page for the notice, once; 1 when it has one, 0 when it is gone from the outbox
 * (or was the operator's).
 */
static int notice_page(struct site *s, const char *id, struct notice_shown *shown)
{
	struct strbuf page = STRBUF_INIT;
	char *rel;
	int err;

	if (notice_outbox_show(shown, s->outbox, id) < 0)
		return 0;
	if (for_operator(s, shown)) {
		notice_shown_release(shown);
		return 0;
	}
	if (strvec_contains(&s->shown, id))
		return 1;
	html_begin(&page, shown->subject, "../");
	strbuf_addstr(&page, "<h1>");
	html_line(&page, shown->subject);
	strbuf_addstr(&page, "</h1>\n<p>");
	html_line(&page, shown->kind);
	strbuf_addstr(&page, " ");
	html_line(&page, shown->channel);
	strbuf_addstr(&page, ", <span class=\"");
	html_attr(&page, shown->state);
	strbuf_addstr(&page, "\">");
	html_line(&page, shown->state);
	strbuf_addstr(&page, "</span></p>\n<pre>");
	html_text(&page, shown->text);
	strbuf_addstr(&page, "</pre>\n");
	html_end(&page);
	rel = xstrfmt("notices/%s.html", id);
	err = write_page(s, rel, &page);
	free(rel);
	strbuf_release(&page);
	if (!err)
		strvec_push(&s->shown, id);
	return !err;
}

static void notices_list(struct strbuf *out, struct site *s, const struct strvec *ids,
			 const char *flag_id)
{
	size_t i, n = 0;

	for (i = 0; i < ids->nr; i++) {
		struct notice_shown shown;
		struct strbuf want = STRBUF_INIT;

		if (!notice_page(s, ids->v[i], &shown))
			continue;
		strbuf_addf(&want, "X-Nextbot-Flag: %s", flag_id ? flag_id : "");
		if (!flag_id || strstr(shown.text, want.buf)) {
			strbuf_addstr(out, n++ ? "" : "<ul class=\"items\">");
			strbuf_addstr(out, "<li><a href=\"../notices/");
			html_attr(out, ids->v[i]);
			strbuf_addstr(out, ".html\">");
			html_line(out, shown.subject);
			strbuf_addstr(out, "</a> (<span class=\"kind\">");
			html_line(out, shown.kind);
			strbuf_addstr(out, "</span>, ");
			html_line(out, shown.channel);
			strbuf_addstr(out, ")</li>");
		}
		strbuf_release(&want);
		notice_shown_release(&shown);
	}
	strbuf_addstr(out, n ? "</ul>\n" : "<p>None kept (sent notices go at `gc`).</p>\n");
}

/* ---- a night ---- */

static void pre_file(struct strbuf *out, const char *title, const char *text)
{
	strbuf_addstr(out, "<h3>");
	html_line(out, title);
	strbuf_addstr(out, "</h3>\n<pre>");
	html_text(out, text);
	strbuf_addstr(out, "</pre>\n");
}

static void next_files(struct strbuf *out, struct site *s, const struct run_record *r)
{
	static const char *const files[] = { "Next/Trees", "Next/SHA1s" };
	size_t i;

	if (!s->repo || !r->tag)
		return;
	for (i = 0; i < sizeof(files) / sizeof(*files); i++) {
		struct strbuf sb = STRBUF_INIT;
		char *ref = xstrfmt("refs/tags/%s", r->tag);

		if (repo_read_path(&sb, s->repo, ref, files[i], REPORT_FILE_MAX) == 0)
			pre_file(out, files[i], sb.buf);
		strbuf_release(&sb);
		free(ref);
	}
}

static int night_page(struct site *s, const struct run_record *r)
{
	struct strbuf page = STRBUF_INIT, log = STRBUF_INIT, title = STRBUF_INIT;
	char *path, *rel;
	size_t i;
	int err, have_log;

	strbuf_addf(&title, "nextbot: %s", s_or(r->tag, r->date));
	html_begin(&page, title.buf, "../");
	strbuf_addstr(&page, "<h1>");
	html_line(&page, s_or(r->tag, r->date));
	strbuf_addstr(&page, " <span class=\"");
	html_attr(&page, run_result_name(r->result));
	strbuf_addstr(&page, "\">");
	html_line(&page, run_result_name(r->result));
	strbuf_addstr(&page, "</span></h1>\n<p>next <code>");
	html_line(&page, s_or(r->next, "-"));
	strbuf_addstr(&page, "</code>, ran from ");
	html_line(&page, s_or(r->started, "?"));
	strbuf_addstr(&page, " to ");
	html_line(&page, s_or(r->finished, "?"));
	strbuf_addstr(&page, "</p>\n<h2>Trees</h2>\n<div class=\"scroll\"><table><tr><th>tree</th>"
			     "<th>state</th><th>commit</th><th>why</th></tr>\n");
	for (i = 0; i < r->trees_nr; i++) {
		const struct run_tree *t = &r->trees[i];

		strbuf_addstr(&page, "<tr><th>");
		html_line(&page, t->name);
		strbuf_addstr(&page, "</th><td class=\"");
		html_attr(&page, tree_state_name(t->state));
		strbuf_addstr(&page, "\">");
		html_line(&page, tree_state_name(t->state));
		strbuf_addstr(&page, "</td><td><code class=\"id\">");
		html_line_n(&page, t->sha1, 12);
		strbuf_addstr(&page, "</code></td><td>");
		html_line(&page, t->reason);
		strbuf_addstr(&page, "</td></tr>\n");
	}
	strbuf_addstr(&page, "</table></div>\n<h2>Culprits, conflicts, notes</h2>\n");
	night_items(&page, s, r, "../");
	strbuf_addstr(&page, "<h2>Notices sent</h2>\n");
	notices_list(&page, s, &r->notices, NULL);
	strbuf_addstr(&page, "<h2>Bisect logs</h2>\n");
	for (i = 0; i < r->flags.nr; i++) {
		const struct flag *f = flag_of(s->st, r->flags.v[i]);
		struct strbuf sb = STRBUF_INIT, t = STRBUF_INIT;
		size_t j;

		if (!f)
			continue;
		if (!f->last_seen || strcmp(f->last_seen, r->date)) {
			strbuf_addstr(&page, "<p>");
			flag_link(&page, "../", f->id);
			strbuf_addstr(&page, ": the log kept is of a later night (");
			html_line(&page, f->last_seen);
			strbuf_addstr(&page, ")</p>\n");
			continue;
		}
		for (j = 0; j < f->log.nr; j++)
			strbuf_addf(&sb, "%s\n", f->log.v[j]);
		strbuf_addf(&t, "flag %s", f->id);
		pre_file(&page, t.buf, sb.buf);
		strbuf_release(&sb);
		strbuf_release(&t);
	}
	strbuf_addstr(&page, "<h2>Next/ files and merge.log</h2>\n");
	next_files(&page, s, r);
	path = xstrfmt("%s/runs/%s/merge.log", s->cfg->workdir, r->date);
	have_log = strbuf_read_file(&log, path, REPORT_FILE_MAX) == 0;
	free(path);
	if (have_log) {
		rel = xstrfmt("nights/%s/merge.log.txt", r->date);
		err = write_page(s, rel, &log);
		free(rel);
		if (!err) {
			strbuf_addstr(&page, "<h3>Next/merge.log (<a href=\"");
			html_attr(&page, r->date);
			strbuf_addstr(&page, "/merge.log.txt\">as text</a>)</h3>\n<pre>");
			html_text(&page, log.buf);
			strbuf_addstr(&page, "</pre>\n");
		}
	}
	html_end(&page);
	rel = xstrfmt("nights/%s.html", r->date);
	err = write_page(s, rel, &page);
	free(rel);
	strbuf_release(&page);
	strbuf_release(&log);
	strbuf_release(&title);
	return err;
}

/* ---- a flag ---- */

static void flag_actions(struct strbuf *out, const struct site *s, const struct flag *f)
{
	struct strvec repro = STRVEC_INIT;
	size_t i;

	strbuf_addstr(out, "<h2>What you can do</h2>\n<ul class=\"items\">");
	if (f->kind == FLAG_FLAKY) {
		strbuf_addstr(out, "<li>Look at the test: it failed some runs and passed others "
				   "with the same tree, so no patch is blamed.</li>");
	} else {
		strbuf_addstr(out, "<li><b>Fix it</b> in the ");
		html_line(out, f->tree);
		strbuf_addstr(out, " tree (a new version of the patch, or a fix on top). A "
				   "separate fix carries <code>Reported-by: ");
		html_line(out, s->cfg->notify.from);
		strbuf_addstr(out, "</code>");
		if (s->cfg->notify.report_url) {
			const char *p = s->cfg->notify.report_url, *hole;

			strbuf_addstr(out, " and <code>Closes: ");
			while ((hole = strstr(p, "{id}"))) {
				html_line_n(out, p, (size_t)(hole - p));
				html_line(out, f->id);
				p = hole + 4;
			}
			html_line(out, p);
			strbuf_addstr(out, "</code>");
		}
		strbuf_addstr(out, ". The flag is resolved on the first night next builds and "
				   "tests clean without the breakage.</li>");
		strbuf_addstr(out, "<li><b>Drop the patch</b> from your branch, or have the "
				   "operator drop it from next until it is fixed: <code>nextbot "
				   "drop ");
		html_line(out, f->id);
		strbuf_addstr(out, " --reason &quot;…&quot;</code>. It stays out by patch-id and "
				   "Message-ID, also after a rebase.</li>");
	}
	strbuf_addstr(out, f->kind == FLAG_FLAKY ? "<li><b>Not a real failure?</b> "
			   : "<li><b>Not this patch's fault?</b> ");
	strbuf_addstr(out, "The operator marks a false positive with <code>nextbot dismiss ");
	html_line(out, f->id);
	strbuf_addstr(out, " --reason &quot;…&quot;</code>: this fingerprint is never blamed "
			   "again.</li>");
	if (s->cfg->inbox.configured && f->kind == FLAG_FLAKY)
		strbuf_addstr(out, "<li><b>By mail</b>: answer the maintainer mail with a "
				   "line <code>#nextbot invalid reason</code>, <code>#nextbot "
				   "fix: subject</code> or <code>#nextbot reopen</code>; the "
				   "answer comes in the thread.</li>");
	else if (s->cfg->inbox.configured)
		strbuf_addstr(out, "<li><b>By mail</b>: answer the report with a line "
				   "<code>#nextbot drop [reason]</code>, <code>#nextbot invalid "
				   "reason</code>, <code>#nextbot fix: subject</code> or "
				   "<code>#nextbot test: url branch</code>; the answer comes in "
				   "the thread.</li>");
	strbuf_addstr(out, "</ul>\n");
	repro_render(&repro, s->cfg, f);
	if (repro.nr) {
		strbuf_addstr(out, "<h2>Reproduce</h2>\n<p>In an empty folder, with git and the "
				   "build's tools; only the trees' URLs are needed.</p>\n<pre>");
		for (i = 0; i < repro.nr; i++) {
			html_text(out, repro.v[i]);
			strbuf_addch(out, '\n');
		}
		strbuf_addstr(out, "</pre>\n");
	}
	strvec_clear(&repro);
}

/* What people did to the flag by mail (#nextbot commands), and the fix awaited. */
static void mail_actions(struct strbuf *out, const struct flag *f)
{
	size_t i;

	if (!f->mail_nr && !f->fix_subject)
		return;
	strbuf_addstr(out, "<h2>By mail</h2>\n<ul class=\"items\">");
	for (i = 0; i < f->mail_nr; i++) {
		const struct flag_mail *m = &f->mail[i];

		strbuf_addstr(out, "<li>");
		html_line(out, s_or(m->when, ""));
		strbuf_addstr(out, " <b>");
		html_line(out, s_or(m->command, ""));
		strbuf_addstr(out, "</b> by ");
		html_line(out, s_or(m->by, "?"));
		if (m->text) {
			strbuf_addstr(out, ": ");
			html_line(out, m->text);
		}
		strbuf_addstr(out, " <small>");
		html_line(out, s_or(m->message_id, ""));
		strbuf_addstr(out, "</small></li>");
	}
	if (f->fix_subject) {
		strbuf_addstr(out, "<li>fix: &ldquo;");
		html_line(out, f->fix_subject);
		strbuf_addstr(out, f->fix_commit ? "&rdquo; arrived as <code>"
						 : "&rdquo; has not arrived yet");
		if (f->fix_commit)
			html_line_n(out, f->fix_commit, strnlen(f->fix_commit, 12));
		strbuf_addstr(out, f->fix_commit ? "</code></li>" : "</li>");
	}
	strbuf_addstr(out, "</ul>\n");
}

static int flag_page(struct site *s, const struct flag *f)
{
	struct strbuf page = STRBUF_INIT, title = STRBUF_INIT, log = STRBUF_INIT;
	struct strvec ids = STRVEC_INIT;
	char *rel;
	size_t i, j;
	int err;

	strbuf_addf(&title, "nextbot flag %s", f->id);
	html_begin(&page, title.buf, "../");
	strbuf_addstr(&page, "<h1>Flag <code class=\"id\">");
	html_line(&page, f->id);
	strbuf_addstr(&page, "</code>: ");
	kind(&page, f);
	strbuf_addstr(&page, " <span class=\"");
	html_attr(&page, flag_state_name(f->state));
	strbuf_addstr(&page, "\">");
	html_line(&page, flag_state_name(f->state));
	strbuf_addstr(&page, "</span></h1>\n<p>");
	culprit(&page, f);
	strbuf_addstr(&page, "</p>\n<div class=\"scroll\"><table>");
	/* a row without a value is left out, heading and all */
#define ROW(key, value)                                              \
	do {                                                         \
		if ((value) && *(value)) {                           \
			strbuf_addstr(&page, "<tr><th>" key "</th><td>"); \
			html_line(&page, value);                     \
			strbuf_addstr(&page, "</td></tr>\n");        \
		}                                                    \
	} while (0)
#define ROW_ID(key, value)                                                        \
	do {                                                                      \
		if ((value) && *(value)) {                                        \
			strbuf_addstr(&page, "<tr><th>" key "</th><td><code class=\"id\">"); \
			html_line(&page, value);                                  \
			strbuf_addstr(&page, "</code></td></tr>\n");              \
		}                                                                 \
	} while (0)
	ROW("tree", f->tree);
	if (f->kind == FLAG_FLAKY) /* no patch blamed: the search's guess, said so */
		ROW_ID("the search pointed at", f->commit);
	else
		ROW_ID("commit", f->commit);
	ROW("date", f->commit_date);
	ROW_ID("patch-id", NB_PATCHID_HEX(&f->patch_id));
	ROW("Message-ID", f->message_id);
	ROW("command", f->command);
	ROW("compiler", f->compiler);
	ROW("first error", f->error);
	ROW("first seen", f->first_seen);
	ROW("last seen", f->last_seen);
	ROW("why", f->reason);
#undef ROW
#undef ROW_ID
	if (f->patch_link) {
		strbuf_addstr(&page, "<tr><th>patch</th><td><a href=\"");
		html_attr(&page, f->patch_link);
		strbuf_addstr(&page, "\">");
		html_line(&page, f->patch_link);
		strbuf_addstr(&page, "</a></td></tr>\n");
	}
	strbuf_addstr(&page, "</table></div>\n");
	if (matrix_cells(f)) { /* without a build matrix there are no configurations */
		strbuf_addstr(&page, "<h2>Configurations it breaks</h2>\n");
		cells(&page, f);
	}
	mail_actions(&page, f);
	if (f->state == FLAG_OPEN)
		flag_actions(&page, s, f);
	if (f->excerpt)
		pre_file(&page, "The failure", f->excerpt);
	for (i = 0; i < f->log.nr; i++)
		strbuf_addf(&log, "%s\n", f->log.v[i]);
	if (log.len)
		pre_file(&page, "Bisect log (git bisect replay)", log.buf);
	strbuf_addstr(&page, "<h2>Nights</h2>\n<ul class=\"items\">");
	for (i = 0; i < s->st->runs_nr; i++) {
		const struct run_record *r = &s->st->runs[i];

		if (!strvec_contains(&r->flags, f->id))
			continue;
		strbuf_addstr(&page, "<li>");
		night_link(&page, s, "../", r->date, s_or(r->tag, r->date));
		strbuf_addstr(&page, "</li>");
		for (j = 0; j < r->notices.nr; j++)
			if (!strvec_contains(&ids, r->notices.v[j]))
				strvec_push(&ids, r->notices.v[j]);
	}
	/* a resolved flag's mails are in the night that resolved it */
	for (i = 0; i < s->st->runs_nr; i++)
		for (j = 0; j < s->st->runs[i].notices.nr; j++)
			if (!strvec_contains(&ids, s->st->runs[i].notices.v[j]))
				strvec_push(&ids, s->st->runs[i].notices.v[j]);
	strbuf_addstr(&page, "</ul>\n<h2>Notices about this flag</h2>\n");
	notices_list(&page, s, &ids, f->id);
	html_end(&page);
	rel = xstrfmt("flags/%s.html", f->id);
	err = write_page(s, rel, &page);
	free(rel);
	strbuf_release(&page);
	strbuf_release(&title);
	strbuf_release(&log);
	strvec_clear(&ids);
	return err;
}

/* ---- the site ---- */

/* Replaces DIR/<sub> with the freshly built one. */
static int swap_in(struct site *s, const char *sub)
{
	char *fresh = xstrfmt("%s/%s", s->tmp, sub), *live = xstrfmt("%s/%s", s->dir, sub);
	int err = 0;

	if (file_exists(live) && file_remove_tree(live) < 0)
		err = -1;
	else if (file_exists(fresh) && rename(fresh, live) < 0)
		err = nb_error_set(NB_ERROR, "cannot move %s to %s", fresh, live);
	free(fresh);
	free(live);
	return err;
}

/* bot/people/'s pages: the audit of MAINTAINERS and the review queue, linked from the index. */
static int people_site(struct site *s)
{
	struct strbuf maint = STRBUF_INIT, reviews = STRBUF_INIT;
	int err = 0;

	if (!s->repo)
		return 0;
	struct people_journeys j;
	int have_j = journey_people_open(&j, s->cfg) == 0; /* ages from first sight */

	nb_error_clear();
	if (people_pages(&maint, &reviews, s->cfg, s->repo, have_j ? &j : NULL) < 0) {
		log_warn("report: the review queue: %s", nb_error_last());
		nb_error_clear();
	}
	if (have_j)
		journey_people_close(&j);
	if (maint.len && !(err = write_page(s, "people/maintainers.html", &maint)))
		s->people_pages |= 1;
	if (!err && reviews.len && !(err = write_page(s, "people/reviews.html", &reviews)))
		s->people_pages |= 2;
	strbuf_release(&maint);
	strbuf_release(&reviews);
	return err;
}

/* The patches' pages and the trees' lists of them (bot/journey/). */
static int report_journeys(struct site *s)
{
	char today[16];

	bot_today(today, sizeof(today));
	return journey_report_html(s->tmp, s->cfg, (struct state *)s->st, today, &s->patches);
}

static int build(struct site *s)
{
	const struct state *st = s->st;
	size_t i;
	char *from, *to;
	int err = 0;

	if (file_exists(s->tmp) && file_remove_tree(s->tmp) < 0)
		return -1;
	if (file_mkdir_p(s->tmp, 0755) < 0)
		return -1;
	s->from = st->runs_nr > REPORT_NIGHTS ? st->runs_nr - REPORT_NIGHTS : 0;
	for (i = 0; i < st->runs_nr; i++)
		if (st->runs[i].date && bot_date_valid(st->runs[i].date))
			strvec_push(&s->nights, st->runs[i].date);
	for (i = 0; i < st->runs_nr && !err; i++)
		if (strvec_contains(&s->nights, st->runs[i].date))
			err = night_page(s, &st->runs[i]);
	for (i = 0; i < st->flags_nr && !err; i++)
		if (st->flags[i].id && strspn(st->flags[i].id, "0123456789abcdef") ==
					       strlen(st->flags[i].id))
			err = flag_page(s, &st->flags[i]);
	if (!err)
		err = people_site(s);
	if (!err)
		err = report_journeys(s);
	if (!err)
		err = index_page(s);
	if (err)
		return err;
	if (swap_in(s, "nights") < 0 || swap_in(s, "flags") < 0 || swap_in(s, "notices") < 0 ||
	    swap_in(s, "people") < 0 || swap_in(s, "patches") < 0)
		return -1;
	from = xstrfmt("%s/index.html", s->tmp);
	to = xstrfmt("%s/index.html", s->dir);
	if (rename(from, to) < 0)
		err = nb_error_set(NB_ERROR, "cannot write %s", to);
	free(from);
	free(to);
	file_remove_tree(s->tmp);
	return err;
}

int cmd_report(const struct cli_ctx *ctx, int argc, char **argv)
{
	struct state st = STATE_INIT;
	struct config *cfg = NULL;
	struct site s = { 0 };
	char *repo_path = NULL;
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
	s.cfg = cfg;
	s.st = &st;
	s.outbox = xstrfmt("%s/outbox", cfg->workdir);
	s.dir = xstrdup(argv[2]);
	s.tmp = xstrfmt("%s/.nextbot-new", argv[2]);
	s.shown = (struct strvec)STRVEC_INIT;
	s.nights = (struct strvec)STRVEC_INIT;
	s.patches = (struct strbuf)STRBUF_INIT;
	repo_path = xstrfmt("%s/repo.git", cfg->workdir);
	if (merge_global_init() < 0 || repo_open_readonly(&s.repo, repo_path) < 0) {
		s.repo = NULL; /* no Next/ files and no people pages then */
		nb_error_clear();
	}
	if (file_mkdir_p(argv[2], 0755) < 0 || build(&s) < 0) {
		bot_error("cannot write the report");
		goto done;
	}
	printf("%s/index.html\n", argv[2]);
	code = EXIT_DONE;
done:
	repo_free(s.repo);
	merge_global_shutdown();
	strvec_clear(&s.shown);
	strvec_clear(&s.nights);
	strbuf_release(&s.patches);
	free(s.outbox);
	free(s.dir);
	free(s.tmp);
	free(repo_path);
	state_release(&st);
	config_free(cfg);
	return code;
}
