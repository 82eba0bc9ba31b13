/* The people room's dashboard pages (`report --html`): the audit and the review queue. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bot/config/config.h"
#include "bot/dash/html.h"
#include "bot/people/people.h"
#include "util/error.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define DAY 86400LL

static void add_ymd(struct strbuf *out, long long t)
{
	char d[16];
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(d, sizeof(d), "%Y-%m-%d", &tm);
	strbuf_addstr(out, d);
}

static void who(struct strbuf *out, const char *name, const char *email)
{
	if (name && *name) {
		html_line(out, name);
		strbuf_addstr(out, " ");
	}
	strbuf_addstr(out, "&lt;");
	html_line(out, email);
	strbuf_addstr(out, "&gt;");
}

static void audit_section(struct strbuf *out, const struct people_audit *a,
			  const struct people_audit_section *s)
{
	size_t k;
	int f, first = 1;

	strbuf_addstr(out, "<h3>");
	html_line(out, s->name);
	strbuf_addf(out, "</h3>\n<p>%s, %zu file%s", people_status_name(s->status),
		    s->files_matched, s->files_matched == 1 ? "" : "s");
	for (f = 0; f < PEOPLE_FINDINGS; f++)
		if (s->findings & (1u << f)) {
			strbuf_addf(out, "%s<span class=\"finding\">%s</span>", first ? ": " : ", ",
				    people_finding_name((enum people_finding)f));
			first = 0;
		}
	strbuf_addstr(out, "</p>\n");
	if (!s->people_nr)
		return;
	strbuf_addstr(out, "<ul class=\"items\">\n");
	for (k = 0; k < s->people_nr; k++) {
		const struct people_audit_person *pe = &s->people[k];

		strbuf_addf(out, "<li%s>%s: ", pe->absent ? " class=\"absent\"" : "",
			    people_role_name(pe->role));
		who(out, pe->name, pe->email);
		if (pe->last) {
			strbuf_addstr(out, " &ndash; last active ");
			add_ymd(out, pe->last);
			strbuf_addf(out, " (%lld days)", (a->now - pe->last) / DAY);
		} else {
			strbuf_addstr(out, " &ndash; not since ");
			add_ymd(out, a->since);
		}
		strbuf_addstr(out, pe->absent ? " <b>absent</b></li>\n" : "</li>\n");
	}
	strbuf_addstr(out, "</ul>\n");
}

static void audit_page(struct strbuf *out, const struct people_audit *a,
		       const struct strvec *problems)
{
	struct strvec absent = STRVEC_INIT;
	size_t i;

	html_begin(out, "nextbot: MAINTAINERS held against history", "../");
	strbuf_addstr(out, "<h1>MAINTAINERS held against history</h1>\n<p>As of ");
	add_ymd(out, a->now);
	strbuf_addstr(out, ", from the history since ");
	add_ymd(out, a->since);
	people_audit_absent(&absent, a);
	strbuf_addf(out, " (%zu commits): %zu absent (not seen in %d days).</p>\n", a->commits,
		    absent.nr, a->absent_days);
	if (problems && problems->nr) {
		strbuf_addstr(out, "<h2>What the file gets wrong</h2>\n<ul class=\"items\">\n");
		for (i = 0; i < problems->nr; i++) {
			strbuf_addstr(out, "<li><code>");
			html_line(out, problems->v[i]);
			strbuf_addstr(out, "</code></li>\n");
		}
		strbuf_addstr(out, "</ul>\n");
	}
	strbuf_addstr(out, "<h2>Sections</h2>\n");
	for (i = 0; i < a->sections_nr; i++)
		audit_section(out, a, &a->sections[i]);
	html_end(out);
	strvec_clear(&absent);
}

static void review_patch(struct strbuf *out, const struct people_review_patch *rp)
{
	size_t k;

	strbuf_addf(out, "<li><span class=\"subject\">");
	html_line(out, rp->subject);
	strbuf_addf(out, "</span> <code>%.12s</code>, %d day%s, by ", rp->commit.hex,
		    rp->age_days, rp->age_days == 1 ? "" : "s");
	who(out, rp->author_name, rp->author_email);
	for (k = 0; k < rp->suggested_nr; k++) {
		strbuf_addstr(out, k ? "; " : "<br>ask ");
		who(out, rp->suggested[k].name, rp->suggested[k].email);
		strbuf_addstr(out, " <span class=\"why\">");
		html_line(out, rp->suggested[k].why);
		strbuf_addstr(out, "</span>");
	}
	strbuf_addstr(out, "</li>\n");
}

static void reviews_page(struct strbuf *out, const struct people_reviews *r)
{
	size_t i, j;

	html_begin(out, "nextbot: waiting for review", "../");
	strbuf_addstr(out, "<h1>Waiting for review</h1>\n<p>Patches nobody but their author "
			   "has reviewed (Reviewed-by, Acked-by), the oldest first, and whom "
			   "to ask.</p>\n");
	for (i = 0; i < r->trees_nr; i++) {
		strbuf_addstr(out, "<h2>");
		html_line(out, r->trees[i].name);
		strbuf_addf(out, ": %zu</h2>\n<ul class=\"items\">\n", r->trees[i].patches_nr);
		for (j = 0; j < r->trees[i].patches_nr; j++)
			review_patch(out, &r->trees[i].patches[j]);
		strbuf_addstr(out, "</ul>\n");
	}
	if (r->authors_nr)
		strbuf_addstr(out, "<h2>Waiting, by author</h2>\n<ul class=\"items\">\n");
	for (i = 0; i < r->authors_nr; i++) {
		strbuf_addstr(out, "<li>");
		who(out, r->authors[i].name, r->authors[i].email);
		strbuf_addf(out, ": %d waiting, the oldest %d days</li>\n", r->authors[i].waiting,
			    r->authors[i].oldest_days);
	}
	if (r->authors_nr)
		strbuf_addstr(out, "</ul>\n");
	html_end(out);
}

int people_pages(struct strbuf *maintainers, struct strbuf *reviews, const struct config *cfg,
		 struct repo *repo, const struct people_journeys *journeys)
{
	char *ref = xstrfmt("refs/feeds/%s", cfg->base.name);
	struct people *p = NULL;
	struct people_audit a;
	struct people_reviews r;
	int error = people_audit_of_config(&a, &p, cfg, repo, ref, 0);

	if (error == 0) {
		struct strvec absent = STRVEC_INIT;

		audit_page(maintainers, &a, people_problems(p));
		people_audit_absent(&absent, &a);
		people_set_absent(p, &absent); /* no absent suggestions in the queue */
		strvec_clear(&absent);
		people_audit_release(&a);
	}
	nb_error_clear(); /* no MAINTAINERS: no audit page */
	if ((error = people_reviews_run(&r, cfg, repo, NULL, p, journeys)) == 0) {
		reviews_page(reviews, &r);
		people_reviews_release(&r);
	}
	people_free(p);
	free(ref);
	return error;
}
