/* The night's other mails: conflicts between trees (as linux-next writes them), a broken
 * base, and the daily summary. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "notify/draft.h"
#include "notify/mime.h"
#include "util/error.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* One item of prose: wrapped, the lines after its first indented by two more. */
static void wrapped_item(struct draft *d, const char *item)
{
	struct strbuf w = STRBUF_INIT;
	const char *p;
	int first = 1;

	mime_wrap(&w, draft_cl(d, item), DRAFT_WRAP - 4);
	for (p = w.buf; *p; first = 0) {
		size_t n = strcspn(p, "\n");

		strbuf_addf(&d->body, "%s%.*s\n", first ? "  " : "    ", (int)n, p);
		p += n + (p[n] == '\n');
	}
	strbuf_release(&w);
}

/*
 * Each item indented by two; an item's own "\n" starts a further line of it (its
 * leading spaces kept).  With `wrap`, single-line items are prose and wrapped.
 */
static void lines(struct draft *d, const char *const *v, size_t nr, int wrap)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		const char *p = v[i] ? v[i] : "";

		if (wrap && !strchr(p, '\n')) {
			wrapped_item(d, p);
			continue;
		}
		do {
			size_t n = strcspn(p, "\n");
			char *one = xstrndup(p, n);
			size_t sp = strspn(one, " ");

			strbuf_addf(&d->body, "  %*s%s\n", (int)sp, "", draft_cl(d, one + sp));
			free(one);
			p += n + (p[n] == '\n');
		} while (*p);
	}
	if (!nr)
		strbuf_addstr(&d->body, "  (none found)\n");
	strbuf_addstr(&d->body, "\n");
}

static void commits(struct draft *d, const struct notice_commit *v, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		draft_commit_line(d, v[i].commit, v[i].subject);
	if (!nr)
		strbuf_addstr(&d->body, "  (none found)\n");
	strbuf_addch(&d->body, '\n');
}

static void conflict_people(struct draft *d, const struct notice_conflict *c)
{
	size_t i;

	draft_add_specs(d, c->other_contacts, c->other_contacts_nr, 0);
	draft_add_specs(d, c->contacts, c->contacts_nr, 0);
	for (i = 0; i < c->ours_nr; i++)
		draft_add_person(d, &c->ours[i].author, 1);
	for (i = 0; i < c->theirs_nr; i++)
		draft_add_person(d, &c->theirs[i].author, 1);
}

/* The operator's instructions: local paths and commands, never to a list. */
static int queue_operator(const struct notice_settings *s, const struct notice_conflict *c)
{
	struct draft d = DRAFT_INIT;
	int ret;

	if (!s->operator|| !c->operator_note)
		return 0;
	d.kind = "merge-conflict";
	d.operator_only = 1;
	d.parts[0] = "operator";
	d.parts[1] = c->first_date;
	d.parts[2] = c->tree;
	d.parts[3] = c->other;
	d.parts[4] = c->gone ? "gone" : "new";
	draft_add_spec(&d, s->operator, 0);
	strbuf_addf(&d.subject, "[nextbot operator] %s: conflict of the %s tree with the %s tree",
		    draft_cl(&d, c->next_tag), draft_cl(&d, c->tree), draft_cl(&d, c->other));
	draft_para(&d, "%s", draft_cl(&d, c->operator_note));
	strbuf_addstr(&d.body, "-- \nnextbot\n");
	ret = draft_queue(s, &d);
	draft_release(&d);
	return ret;
}

int notice_queue_conflict(const struct notice_settings *s, const struct notice_conflict *c)
{
	struct draft d = DRAFT_INIT;
	struct hook_event ev = {0};
	struct strbuf slack = STRBUF_INIT, title = STRBUF_INIT;
	const char *first = c->first_date ? c->first_date : c->date;
	const char *parts[3] = {first, c->tree, c->other};
	const char *thread[5] = {"merge-conflict", first, c->tree, c->other, "mail"};
	int ret, op;

	if ((ret = draft_check_settings(s)) < 0)
		return ret;
	if ((op = queue_operator(s, c)) < 0)
		return op;
	d.kind = "merge-conflict";
	d.parts[0] = d.kind;
	d.parts[1] = first;
	d.parts[2] = c->tree;
	d.parts[3] = c->other;
	d.parts[4] = c->gone ? "gone" : "mail";
	conflict_people(&d, c);
	if (s->list)
		draft_add_spec(&d, s->list, 1);
	strbuf_addf(&title, "manual merge of the %s tree with the %s tree", draft_cl(&d, c->tree),
		    draft_cl(&d, c->other));
	if (c->gone) {
		/* the subject and thread of the first mail */
		char tag[16];

		snprintf(tag, sizeof(tag), "next-%.4s%.2s%.2s", first, first + 5, first + 8);
		strbuf_addf(&d.subject, "Re: %s: %s", tag, title.buf);
		draft_msgid_of(&d.in_reply_to, s, thread);
		strbuf_addbuf(&d.references, &d.in_reply_to);
		strbuf_addstr(&d.body, "Hi all,\n\n");
		draft_para(&d,
			   "The conflict between the %s tree and the %s tree in these files "
			   "is gone as of %s:",
			   draft_cl(&d, c->tree), draft_cl(&d, c->other),
			   draft_cl(&d, c->next_tag));
		lines(&d, c->paths, c->paths_nr, 0);
		if (c->outcome)
			draft_para(&d, "%s", draft_cl(&d, c->outcome));
	} else {
		strbuf_addf(&d.subject, "%s: %s", draft_cl(&d, c->next_tag), title.buf);
		strbuf_addstr(&d.body, "Hi all,\n\n");
		draft_para(&d, "Today's next merge of the %s tree got a conflict in:",
			   draft_cl(&d, c->tree));
		lines(&d, c->paths, c->paths_nr, 0);
		strbuf_addf(&d.body, "between commit%s:\n\n", c->ours_nr == 1 ? "" : "s");
		commits(&d, c->ours, c->ours_nr);
		strbuf_addf(&d.body, "from the %s tree and commit%s:\n\n", draft_cl(&d, c->other),
			    c->theirs_nr == 1 ? "" : "s");
		commits(&d, c->theirs, c->theirs_nr);
		strbuf_addf(&d.body, "from the %s tree.\n\n", draft_cl(&d, c->tree));
		if (c->outcome)
			draft_para(&d, "%s", draft_cl(&d, c->outcome));
		draft_para(&d, "Please sort it out between the two trees (one of them can be "
			       "based on the other's change), or send a resolution to the operator "
			       "of this bot, who can record it for the nights to come.");
		draft_maintainers(&d, c->maintainers, c->maintainers_nr, "the conflicted files");
	}
	strbuf_addstr(&d.body, "-- \nCheers,\nnextbot\n");
	if (!c->gone)
		draft_commands(&d, s, DRAFT_COMMANDS_PATCHES, NULL);
	ev.event = "merge-conflict";
	ev.date = c->date;
	ev.next_tag = c->next_tag;
	ev.tree = c->tree;
	ev.other_tree = c->other;
	ev.paths = c->paths;
	ev.paths_nr = c->paths_nr;
	ev.reason = c->gone ? "gone" : NULL;
	strbuf_addf(&slack, "%s: ", c->next_tag ? c->next_tag : "");
	hook_slack_text(&slack, title.buf);
	if (c->gone)
		strbuf_addstr(&slack, ": gone");
	else if (c->paths_nr) {
		strbuf_addstr(&slack, " in ");
		hook_slack_text(&slack, c->paths[0]);
		if (c->paths_nr > 1)
			strbuf_addf(&slack, " and %zu more", c->paths_nr - 1);
	}
	if (c->gone) /* the follow-up's notice ids differ from the first mail's */
		parts[0] = c->date;
	ret = draft_queue_all(s, &d, &ev, parts, title.buf, slack.buf);
	strbuf_release(&slack);
	strbuf_release(&title);
	return ret < 0 ? ret : ret + op;
}

int notice_queue_base_broken(const struct notice_settings *s, const struct notice_base_broken *bb)
{
	struct draft d = DRAFT_INIT;
	struct hook_event ev = {0};
	struct strbuf slack = STRBUF_INIT;
	const char *parts[3] = {bb->date, bb->base_name, NULL};
	int ret;

	if ((ret = draft_check_settings(s)) < 0)
		return ret;
	d.kind = "base-broken";
	d.parts[0] = d.kind;
	d.parts[1] = bb->date;
	d.parts[2] = "mail";
	if (s->list)
		draft_add_spec(&d, s->list, 0);
	strbuf_addf(&d.subject, "%s: the base (%s) is broken", draft_cl(&d, bb->next_tag),
		    draft_cl(&d, bb->base_name));
	strbuf_addstr(&d.body, "Hi all,\n\n");
	draft_para(&d, "Tonight's base %s alone, at", draft_cl(&d, bb->base_name));
	strbuf_addf(&d.body, "  %s\n\n", draft_cl(&d, bb->base_commit));
	if (bb->timed_out)
		draft_para(&d, "already fails %s (%s), killed at its timeout:",
			   draft_cl(&d, bb->command_name), draft_cl(&d, bb->command_line));
	else
		draft_para(&d,
			   "already fails %s (%s), exit status %d:", draft_cl(&d, bb->command_name),
			   draft_cl(&d, bb->command_line), bb->exit_code);
	draft_quote(&d, bb->excerpt);
	draft_para(&d, "No tree is blamed and nothing was merged tonight.");
	strbuf_addstr(&d.body, "-- \nnextbot\n");
	ev.event = "base-broken";
	ev.date = bb->date;
	ev.next_tag = bb->next_tag;
	ev.tree = bb->base_name;
	ev.commit = bb->base_commit;
	ev.command = bb->command_name;
	ev.has_exit = 1;
	ev.exit_code = bb->exit_code;
	ev.timed_out = bb->timed_out;
	ev.log_excerpt = bb->excerpt;
	strbuf_addf(&slack, "%s: the base ", bb->next_tag ? bb->next_tag : "");
	hook_slack_text(&slack, bb->base_name);
	strbuf_addstr(&slack, " is broken (");
	hook_slack_text(&slack, bb->command_name);
	strbuf_addstr(&slack, " fails); nothing was merged");
	ret = draft_queue_all(s, &d, &ev, parts, "base broken", slack.buf);
	strbuf_release(&slack);
	return ret;
}

static void section(struct draft *d, const char *title, const char *const *v, size_t nr, int wrap)
{
	if (!nr)
		return;
	strbuf_addf(&d->body, "%s:\n\n", title);
	lines(d, v, nr, wrap);
}

/*
 * BUILD SUCCESS only for a next that built and tested clean with no flag open
 * (0-day's words); any open flag, even one whose culprit is reverted, makes it a
 * BUILD REGRESSION.
 */
static const char *summary_verdict(const struct notice_summary *sum)
{
	return sum->regression || sum->open_flags_nr ? "REGRESSION" : "SUCCESS";
}

/* The chat version of the summary: the result, then trees not merged as they are, flags. */
static void slack_summary(struct strbuf *out, const struct notice_settings *s,
			  const struct notice_summary *sum)
{
	struct strbuf url = STRBUF_INIT;
	size_t i;

	strbuf_addf(out, "%s: BUILD %s", sum->next_tag ? sum->next_tag : "",
		    summary_verdict(sum));
	for (i = 0; i < sum->trees_nr; i++) {
		const struct notice_summary_tree *t = &sum->trees[i];

		strbuf_addstr(out, i ? ", " : "\n");
		hook_slack_text(out, t->name);
		strbuf_addstr(out, " ");
		hook_slack_text(out, t->state);
	}
	for (i = 0; i < sum->open_flags_nr; i++) {
		const struct notice_summary_flag *f = &sum->open_flags[i];
		struct strbuf line = STRBUF_INIT;

		strbuf_addstr(out, "\n");
		strbuf_reset(&url);
		if (!draft_report_url(&url, s, f->id))
			hook_slack_link(out, url.buf, f->id);
		else
			hook_slack_text(out, f->id);
		strbuf_addch(out, ' '); /* Slack wants a space after a link */
		strbuf_addf(&line, "%s in %s: %.12s (\"%s\")", f->kind ? f->kind : "",
			    f->tree ? f->tree : "", f->commit ? f->commit : "",
			    f->subject ? f->subject : "");
		if (f->partner_tree)
			strbuf_addf(&line, " with %s", f->partner_tree);
		hook_slack_text(out, line.buf);
		strbuf_release(&line);
	}
	strbuf_release(&url);
}

/* Where a tree's state (its text in the summary) leaves it tonight. */
enum summary_tree_place { TREE_IN_NEXT, TREE_AT_OLDER_TIP, TREE_NOT_IN_NEXT };

static enum summary_tree_place summary_tree_place_parse(const char *state)
{
	if (state && (!strcmp(state, "previous-version") || !strcmp(state, "stale")))
		return TREE_AT_OLDER_TIP;
	if (state && (!strcmp(state, "left-out") || !strcmp(state, "fetch-failed")))
		return TREE_NOT_IN_NEXT;
	return TREE_IN_NEXT;
}

/* Trees kept at an older tip (previous-version, stale) and trees left out tonight. */
static void trees_behind(const struct notice_summary *sum, size_t *older, size_t *out)
{
	size_t i;

	*older = *out = 0;
	for (i = 0; i < sum->trees_nr; i++) {
		enum summary_tree_place place = summary_tree_place_parse(sum->trees[i].state);

		*older += place == TREE_AT_OLDER_TIP;
		*out += place == TREE_NOT_IN_NEXT;
	}
}

/*
 * The summary's subject: "[next-YYYYMMDD] BUILD SUCCESS <12 hex>" (or REGRESSION)
 * and, when there is more to know, what: "(2 flags open, 1 new; 1 tree at an older
 * tip, 1 left out)".
 */
static void summary_subject(struct draft *d, const struct notice_summary *sum)
{
	struct strbuf more = STRBUF_INIT;
	size_t older, out, fresh = 0, i;

	strbuf_addf(&d->subject, "[%s] BUILD %s %.12s", draft_cl(d, sum->next_tag),
		    summary_verdict(sum), draft_cl(d, sum->next_commit));
	for (i = 0; i < sum->open_flags_nr; i++)
		fresh += sum->open_flags[i].is_new;
	trees_behind(sum, &older, &out);
	if (sum->open_flags_nr)
		strbuf_addf(&more, "%zu flag%s open", sum->open_flags_nr,
			    sum->open_flags_nr == 1 ? "" : "s");
	if (fresh)
		strbuf_addf(&more, ", %zu new", fresh);
	if ((older || out) && more.len)
		strbuf_addstr(&more, "; ");
	if (older)
		strbuf_addf(&more, "%zu tree%s at an older tip", older, older == 1 ? "" : "s");
	if (older && out)
		strbuf_addf(&more, ", %zu left out", out);
	else if (out)
		strbuf_addf(&more, "%zu tree%s left out", out, out == 1 ? "" : "s");
	if (more.len)
		strbuf_addf(&d->subject, " (%s)", more.buf);
	strbuf_release(&more);
}

/* Every open flag: id, kind, tree (and partner), since when, what tonight showed. */
static void open_flags(struct draft *d, const struct notice_summary *sum)
{
	size_t i;

	if (!sum->open_flags_nr)
		return;
	strbuf_addf(&d->body, "Open flags (%zu):\n\n", sum->open_flags_nr);
	for (i = 0; i < sum->open_flags_nr; i++) {
		const struct notice_summary_flag *f = &sum->open_flags[i];
		struct strbuf line = STRBUF_INIT;

		strbuf_addf(&line, "%s %s in %s", draft_cl(d, f->id), draft_cl(d, f->kind),
			    draft_cl(d, f->tree));
		if (f->partner_tree)
			strbuf_addf(&line, " with %s", draft_cl(d, f->partner_tree));
		if (f->since)
			strbuf_addf(&line, ", since %s", draft_cl(d, f->since));
		if (f->status)
			strbuf_addf(&line, ", %s", draft_cl(d, f->status));
		strbuf_addf(&d->body, "  %s:\n", line.buf);
		if (f->commit)
			strbuf_addf(&d->body, "    %.12s (\"%s\")\n", draft_cl(d, f->commit),
				    draft_cl(d, f->subject));
		else
			strbuf_addf(&d->body, "    (no patch blamed)\n");
		strbuf_release(&line);
	}
	strbuf_addch(&d->body, '\n');
}

int notice_queue_summary(const struct notice_settings *s, const struct notice_summary *sum)
{
	struct draft d = DRAFT_INIT;
	struct hook_event ev = {0};
	struct strbuf slack = STRBUF_INIT;
	const char *parts[3] = {sum->date, NULL, NULL};
	int ret;
	size_t i;

	if ((ret = draft_check_settings(s)) < 0)
		return ret;
	d.kind = "summary";
	d.parts[0] = d.kind;
	d.parts[1] = sum->date;
	d.parts[2] = "mail";
	if (s->list)
		draft_add_spec(&d, s->list, 0);
	summary_subject(&d, sum);
	strbuf_addf(&d.body, "%s (%.12s)\n\nTrees:\n\n", draft_cl(&d, sum->next_tag),
		    draft_cl(&d, sum->next_commit));
	for (i = 0; i < sum->trees_nr; i++) {
		const struct notice_summary_tree *t = &sum->trees[i];
		struct strbuf line = STRBUF_INIT;

		strbuf_addf(&line, "  %-16s %s", draft_cl(&d, t->name), draft_cl(&d, t->state));
		if (t->reason) {
			struct strbuf wrapped = STRBUF_INIT;

			/* the reason on lines of its own, wrapped and indented */
			mime_wrap(&wrapped, draft_cl(&d, t->reason), DRAFT_WRAP - 6);
			strbuf_addstr(&line, ":\n");
			{
				const char *p = wrapped.buf;

				while (*p) {
					size_t n = strcspn(p, "\n");

					strbuf_addf(&line, "      %.*s\n", (int)n, p);
					p += n + (p[n] == '\n');
				}
			}
			strbuf_release(&wrapped);
		} else {
			strbuf_addch(&line, '\n');
		}
		strbuf_addbuf(&d.body, &line);
		strbuf_release(&line);
	}
	strbuf_addstr(&d.body, "\n");
	open_flags(&d, sum);
	section(&d, "New flags", sum->new_flags, sum->new_flags_nr, 0);
	section(&d, "Resolved flags", sum->resolved_flags, sum->resolved_flags_nr, 0);
	section(&d, "Duplicate patches (the same patch as different commits in two trees)",
		sum->duplicates, sum->duplicates_nr, 0);
	section(&d, "Commits without their author's Signed-off-by", sum->missing_signoff,
		sum->missing_signoff_nr, 0);
	section(&d, "Patches without a review by someone other than their author",
		sum->unreviewed, sum->unreviewed_nr, 0);
	section(&d, "Notes", sum->notes, sum->notes_nr, 1);
	section(&d, "Waiting for review, the oldest first (nextbot reviews lists them all)",
		sum->reviews, sum->reviews_nr, 1);
	strbuf_addstr(&d.body, "-- \nnextbot\n");
	ev.event = "summary";
	ev.date = sum->date;
	ev.next_tag = sum->next_tag;
	ev.commit = sum->next_commit;
	ev.result = sum->regression ? "regression" : "success";
	ev.trees = sum->trees;
	ev.trees_nr = sum->trees_nr;
	ev.flags = sum->open_flags;
	ev.flags_nr = sum->open_flags_nr;
	slack_summary(&slack, s, sum);
	ret = draft_queue_all(s, &d, &ev, parts, "daily summary", slack.buf);
	strbuf_release(&slack);
	return ret;
}

int notice_queue_audit(const struct notice_settings *s, const struct notice_audit *a)
{
	struct draft d = DRAFT_INIT;
	int ret;

	if ((ret = draft_check_settings(s)) < 0)
		return ret;
	d.kind = "maintainers-audit";
	d.parts[0] = d.kind;
	d.parts[1] = a->month;
	d.parts[2] = "mail";
	draft_add_spec(&d, a->to, 0);
	strbuf_addf(&d.subject, "MAINTAINERS held against history, %s: %s", draft_cl(&d, a->month),
		    draft_cl(&d, a->summary));
	strbuf_addstr(&d.body, "Hi all,\n\n");
	draft_para(&d, "This is the monthly look at the MAINTAINERS file against who has "
		       "authored, signed off, reviewed, acked or tested its sections' files "
		       "(`nextbot maintainers`, as of %s):", draft_cl(&d, a->date));
	draft_quote(&d, a->text);
	draft_para(&d, "People listed but long absent may want to move to CREDITS; sections "
		       "without an active maintainer may want one.");
	strbuf_addstr(&d.body, "-- \nnextbot\n");
	ret = draft_queue(s, &d);
	draft_release(&d);
	return ret;
}
