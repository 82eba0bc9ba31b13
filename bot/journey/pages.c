/* The dashboard's patch pages: one per patch, and per tree the list of its patches. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "bot/dash/html.h"
#include "bot/journey/journey_int.h"
#include "merge/repo/repo.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* Patch pages shown at most (the most recently seen first); the rest stay in `nextbot patch`. */
#define PAGES_MAX 5000

/* A file name for a journey's key: a patch-id or commit as it is, else a digest of it. */
static void page_name(struct strbuf *out, const char *key)
{
	unsigned long long h = 1469598103934665603ULL;
	const char *p;

	if (strlen(key) == NB_OID_HEXSZ && strspn(key, "0123456789abcdef") == NB_OID_HEXSZ) {
		strbuf_addstr(out, key);
		return;
	}
	for (p = key; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	strbuf_addf(out, "m%016llx", h);
}

static long days_between(const char *from, const char *to)
{
	struct tm a = { 0 }, b = { 0 };

	if (!from || !to || sscanf(from, "%4d-%2d-%2d", &a.tm_year, &a.tm_mon, &a.tm_mday) != 3 ||
	    sscanf(to, "%4d-%2d-%2d", &b.tm_year, &b.tm_mon, &b.tm_mday) != 3)
		return -1;
	a.tm_year -= 1900;
	b.tm_year -= 1900;
	a.tm_mon--;
	b.tm_mon--;
	return (long)((timegm(&b) - timegm(&a)) / 86400);
}

/* Was `name` the last tree the journey was in (before it reached mainline)? */
static int journey_last_tree_is(const struct journey *j, const char *name)
{
	size_t i = j->events_nr;

	while (i--) {
		const struct journey_event *e = &j->events[i];

		if (e->kind == JOURNEY_ADDED || e->kind == JOURNEY_MOVED)
			return e->tree && !strcmp(e->tree, name);
	}
	return 0;
}

static int is_review(const char *key)
{
	enum trailer_kind kind = trailer_kind_parse(key);

	return kind == TRAILER_REVIEWED || kind == TRAILER_ACKED;
}

/* "reviewed by …", "only by its author", "no review" for the latest version. */
static void review_status(struct strbuf *out, const struct journey *j)
{
	const struct journey_version *v = &j->versions[j->versions_nr - 1];
	size_t i, others = 0, own = 0;

	for (i = 0; i < v->people_nr; i++) {
		if (!is_review(v->people[i].key))
			continue;
		if (!strcasecmp(v->people[i].email, j->author_email)) {
			own++;
			continue;
		}
		strbuf_addstr(out, others++ ? ", " : "<span class=\"resolved\">");
		html_line(out, v->people[i].key);
		strbuf_addstr(out, ": ");
		html_line(out, v->people[i].name);
	}
	if (others)
		strbuf_addstr(out, "</span>");
	else if (own)
		strbuf_addstr(out, "<span class=\"open\">reviewed only by its author</span>");
	else
		strbuf_addstr(out, "<span class=\"open\">no review</span>");
}

static int write(const char *dir, const char *rel, const struct strbuf *page)
{
	char *path = xstrfmt("%s/%s", dir, rel);
	int err = file_write_public(path, page->buf, page->len);

	free(path);
	return err;
}

static void patch_link(struct strbuf *out, const struct journey *j, const char *root)
{
	strbuf_addf(out, "<a class=\"subject wrap\" href=\"%spatches/", root);
	page_name(out, j->key);
	strbuf_addstr(out, ".html\">");
	html_line(out, j->subject);
	strbuf_addstr(out, "</a>");
}

static void events_list(struct strbuf *page, const struct journey *j)
{
	size_t i;

	strbuf_addstr(page, "<h2>Journey</h2>\n<ul class=\"items\">\n");
	for (i = 0; i < j->events_nr; i++) {
		const struct journey_event *e = &j->events[i];

		strbuf_addstr(page, "<li>");
		html_line(page, e->date);
		strbuf_addf(page, " <b>%s</b> ", journey_event_name(e->kind));
		if (e->from) {
			html_line(page, e->from);
			strbuf_addstr(page, " &rarr; ");
		}
		html_line(page, e->tree);
		if (e->reason) {
			strbuf_addstr(page, "<span class=\"why wrap\">");
			html_line(page, e->reason);
			strbuf_addstr(page, "</span>");
		}
		strbuf_addstr(page, "</li>\n");
	}
	strbuf_addstr(page, "</ul>\n");
}

static void versions_list(struct strbuf *page, const struct journey *j)
{
	size_t i, k;

	strbuf_addstr(page, "<h2>Versions</h2>\n<ul class=\"items\">\n");
	for (i = 0; i < j->versions_nr; i++) {
		const struct journey_version *v = &j->versions[i];
		const struct nb_patchid *pid = &v->patch_id;

		strbuf_addf(page, "<li>v%zu, first seen ", i + 1);
		html_line(page, v->first_seen);
		strbuf_addstr(page, ": commit <code>");
		html_line_n(page, v->commit.hex, 12);
		strbuf_addstr(page, "</code>, patch-id <code>");
		html_line_n(page, nb_patchid_is_none(pid) ? "-" : NB_PATCHID_HEX(pid), 12);
		strbuf_addstr(page, "</code><span class=\"why wrap\">Message-ID &lt;");
		html_line(page, v->message_id ? v->message_id : "");
		strbuf_addstr(page, "&gt;</span>");
		for (k = 0; k < v->people_nr; k++) {
			strbuf_addstr(page, "<span class=\"why wrap\">");
			html_line(page, v->people[k].key);
			strbuf_addstr(page, ": ");
			html_line(page, v->people[k].name);
			strbuf_addstr(page, " &lt;");
			html_line(page, v->people[k].email);
			strbuf_addstr(page, "&gt;</span>");
		}
		strbuf_addstr(page, "</li>\n");
	}
	strbuf_addstr(page, "</ul>\n");
}

static void flags_list(struct strbuf *page, const struct journey *j, const struct state *st)
{
	size_t i, v, n = 0;

	for (i = 0; st && i < st->flags_nr; i++)
		for (v = 0; v < j->versions_nr; v++) {
			const struct flag *f = &st->flags[i];

			if (!nb_patchid_eq(&j->versions[v].patch_id, &f->patch_id) &&
			    !(f->commit && !strcmp(f->commit, j->versions[v].commit.hex)))
				continue;
			strbuf_addstr(page, n++ ? ", " : "<p>Flags: ");
			strbuf_addstr(page, "<a href=\"../flags/");
			html_attr(page, f->id);
			strbuf_addstr(page, ".html\"><code>");
			html_line(page, f->id);
			strbuf_addstr(page, "</code></a>");
			break;
		}
	if (n)
		strbuf_addstr(page, "</p>\n");
}

static int patch_page(const char *dir, const struct journey *j, const struct state *st,
		      const char *today)
{
	struct strbuf page = STRBUF_INIT, rel = STRBUF_INIT;
	int err;

	html_begin(&page, j->subject, "../");
	strbuf_addstr(&page, "<h1 class=\"wrap\">");
	html_line(&page, j->subject);
	strbuf_addstr(&page, "</h1>\n<p>By ");
	html_line(&page, j->author_name);
	strbuf_addstr(&page, " &lt;");
	html_line(&page, j->author_email);
	strbuf_addf(&page, "&gt;</p>\n<p><span class=\"%s\">%s</span>",
		    journey_state_name(j->state), journey_state_name(j->state));
	if (j->tree) {
		strbuf_addstr(&page, " in <a href=\"tree-");
		html_attr(&page, j->tree);
		strbuf_addstr(&page, ".html\">");
		html_line(&page, j->tree);
		strbuf_addf(&page, "</a> for %ld day(s)", days_between(j->since, today));
	}
	if (j->held) {
		strbuf_addstr(&page, "<span class=\"why wrap\">held: ");
		html_line(&page, j->held);
		strbuf_addstr(&page, "</span>");
	}
	strbuf_addstr(&page, "</p>\n<p>Reviews: ");
	review_status(&page, j);
	strbuf_addstr(&page, "</p>\n");
	flags_list(&page, j, st);
	events_list(&page, j);
	versions_list(&page, j);
	html_end(&page);
	strbuf_addstr(&rel, "patches/");
	page_name(&rel, j->key);
	strbuf_addstr(&rel, ".html");
	err = write(dir, rel.buf, &page);
	strbuf_release(&page);
	strbuf_release(&rel);
	return err;
}

/* Patches whose last event (merged, removed) was in tree `name` in the last 30 days. */
static void left_recently(struct strbuf *page, const struct journey_store *s, const char *name,
			  const char *today)
{
	size_t i, n = 0;

	for (i = 0; i < s->patches_nr; i++) {
		const struct journey *j = &s->patches[i];
		const struct journey_event *e = j->events_nr ? &j->events[j->events_nr - 1] : NULL;
		long ago = e ? days_between(e->date, today) : -1;

		if (j->tree || !e || ago < 0 || ago > 30 || (e->kind != JOURNEY_MERGED_EV &&
							     e->kind != JOURNEY_REMOVED))
			continue;
		if (e->kind == JOURNEY_REMOVED ? !e->tree || strcmp(e->tree, name) :
						 !j->events_nr || !journey_last_tree_is(j, name))
			continue;
		strbuf_addstr(page, n++ ? "" : "<h2>Left it in the last 30 days</h2>\n"
					       "<ul class=\"items\">\n");
		strbuf_addstr(page, "<li>");
		patch_link(page, j, "../");
		strbuf_addf(page, "<span class=\"why\"><span class=\"%s\">%s</span> on ",
			    journey_state_name(j->state), journey_state_name(j->state));
		html_line(page, e->date);
		strbuf_addstr(page, "</span></li>\n");
	}
	if (n)
		strbuf_addstr(page, "</ul>\n");
}

/* The patches in tree `name` now, oldest there first: state, age, reviews. */
static int tree_page(const char *dir, const struct journey_store *s, const char *name,
		     const char *today, size_t *nr, size_t *unreviewed)
{
	struct strbuf page = STRBUF_INIT, title = STRBUF_INIT, rel = STRBUF_INIT, st = STRBUF_INIT;
	size_t i;
	int err;

	strbuf_addf(&title, "nextbot: the patches of %s", name);
	html_begin(&page, title.buf, "../");
	strbuf_addstr(&page, "<h1>");
	html_line(&page, title.buf);
	strbuf_addstr(&page, "</h1>\n<ul class=\"items\">\n");
	*nr = *unreviewed = 0;
	for (i = 0; i < s->patches_nr; i++) {
		const struct journey *j = &s->patches[i];

		if (!j->tree || strcmp(j->tree, name))
			continue;
		(*nr)++;
		strbuf_reset(&st);
		review_status(&st, j);
		*unreviewed += !strstr(st.buf, "\"resolved\"");
		strbuf_addstr(&page, "<li>");
		patch_link(&page, j, "../");
		strbuf_addf(&page, "<span class=\"why\"><span class=\"%s\">%s</span>, %ld day(s) "
			    "here, ", journey_state_name(j->state), journey_state_name(j->state),
			    days_between(j->since, today));
		strbuf_addbuf(&page, &st);
		strbuf_addstr(&page, "</span></li>\n");
	}
	strbuf_addstr(&page, *nr ? "</ul>\n" : "</ul>\n<p>No patches.</p>\n");
	left_recently(&page, s, name, today);
	html_end(&page);
	strbuf_addf(&rel, "patches/tree-%s.html", name);
	err = write(dir, rel.buf, &page);
	strbuf_release(&page);
	strbuf_release(&title);
	strbuf_release(&rel);
	strbuf_release(&st);
	return err;
}

static int last_seen_cmp(const void *a, const void *b)
{
	const struct journey *x = *(const struct journey *const *)a;
	const struct journey *y = *(const struct journey *const *)b;

	return strcmp(y->last_seen ? y->last_seen : "", x->last_seen ? x->last_seen : "");
}

int journey_report_html(const char *dir, const struct config *cfg, struct state *st,
			const char *today, struct strbuf *index_links)
{
	struct journey_store s = JOURNEY_STORE_INIT;
	const struct journey **order = NULL;
	char *sub = xstrfmt("%s/patches", dir);
	size_t i, nr, unreviewed;
	int err;

	if ((err = journey_store_load(&s, cfg->workdir)) < 0 || !s.patches_nr)
		goto done;
	if (s.date)
		today = s.date; /* ages as of the last night followed */
	if ((err = file_mkdir_p(sub, 0755)) < 0)
		goto done;
	order = xcalloc(s.patches_nr, sizeof(*order));
	for (i = 0; i < s.patches_nr; i++)
		order[i] = &s.patches[i];
	qsort(order, s.patches_nr, sizeof(*order), last_seen_cmp);
	for (i = 0; i < s.patches_nr && i < PAGES_MAX && !err; i++)
		err = patch_page(dir, order[i], st, today);
	for (i = 0; i < cfg->trees_nr + cfg->watch_nr && !err; i++) {
		const char *name = i < cfg->trees_nr ? cfg->trees[i].name :
						       cfg->watch[i - cfg->trees_nr].name;

		if (!journey_tree_seen_find(&s, name))
			continue;
		if ((err = tree_page(dir, &s, name, today, &nr, &unreviewed)) < 0)
			break;
		strbuf_addstr(index_links, "<li><a href=\"patches/tree-");
		html_attr(index_links, name);
		strbuf_addstr(index_links, ".html\">");
		html_line(index_links, name);
		strbuf_addf(index_links, "</a>: %zu patch(es), %zu without a review by someone "
			    "else</li>\n", nr, unreviewed);
	}
done:
	free(order);
	free(sub);
	journey_store_release(&s);
	return err;
}
