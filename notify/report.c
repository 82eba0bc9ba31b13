/*
 * The mails and webhook events about a flag: the submitter report (0-day's layout),
 * the maintainer mail (linux-next's), reminders, `resolved` and `dropped`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "notify/draft.h"
#include "notify/mime.h"
#include "notify/outbox.h"
#include "util/error.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* A breakage's kind, read from its text (notice.h: "build-failure" | "test-failure" | "flaky"). */
enum breakage_kind { BREAKAGE_OTHER, BREAKAGE_BUILD, BREAKAGE_TEST, BREAKAGE_FLAKY };

static enum breakage_kind breakage_kind_parse(const char *kind)
{
	if (!kind)
		return BREAKAGE_OTHER;
	if (!strcmp(kind, "build-failure"))
		return BREAKAGE_BUILD;
	if (!strcmp(kind, "test-failure"))
		return BREAKAGE_TEST;
	return !strcmp(kind, "flaky") ? BREAKAGE_FLAKY : BREAKAGE_OTHER;
}

static int is_flaky(const struct notice_breakage *b)
{
	return breakage_kind_parse(b->kind) == BREAKAGE_FLAKY;
}

static const char *what(const struct notice_breakage *b)
{
	return breakage_kind_parse(b->kind) == BREAKAGE_BUILD ? "build" : "test";
}

static const char *command(const struct notice_breakage *b)
{
	return b->command_name ? b->command_name : b->command_line ? b->command_line : "?";
}

static const char *person(struct draft *d, const struct notice_person *p)
{
	struct strbuf sb = STRBUF_INIT;

	if (p->name && *p->name && p->email && *p->email)
		strbuf_addf(&sb, "%s <%s>", draft_cl(d, p->name), draft_cl(d, p->email));
	else
		strbuf_addstr(&sb, draft_cl(d, p->name && *p->name ? p->name : p->email));
	strvec_push_nodup(&d->pool, strbuf_detach(&sb, NULL));
	return d->pool.v[d->pool.nr - 1];
}

/* ---- the bisect logs: one level per "# <title>" section ---- */

/*
 * A title line of a level ("# which patch in sched", "# semantic partner: which
 * earlier merge"); the search's other notes (fork points, confirmation) are not.
 */
static int is_level_title(const char *line)
{
	return !strncmp(line, "# which ", 8) || !strncmp(line, "# semantic partner: ", 20);
}

/* "which-patch-in-sched" from "# which patch in sched": a file name's part. */
static void slug(struct strbuf *out, const char *title)
{
	const char *p = title + 2;
	size_t start = out->len;
	int dash = 0;

	for (; *p && out->len - start < 48; p++) {
		int ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			 (*p >= '0' && *p <= '9') || *p == '.' || *p == '_';

		if (ok) {
			if (dash && out->len > start)
				strbuf_addch(out, '-');
			strbuf_addch(out, *p);
			dash = 0;
		} else {
			dash = 1;
		}
	}
	if (out->len == start)
		strbuf_addstr(out, "level");
}

/* Attaches one replay file per level; `titles` gets each level's title (no "# "). */
static void attach_levels(struct draft *d, const struct notice_breakage *b, struct strvec *titles)
{
	struct strbuf file = STRBUF_INIT, name = STRBUF_INIT;
	size_t i;

	for (i = 0; i <= b->bisect_log_nr; i++) {
		const char *line = i < b->bisect_log_nr ? b->bisect_log[i] : NULL;

		if (!line || is_level_title(line)) {
			if (file.len && name.len)
				draft_attach(d, name.buf, file.buf);
			strbuf_reset(&file);
			strbuf_reset(&name);
			if (!line)
				break;
			strvec_push(titles, line + 2);
			strbuf_addf(&name, "bisect-%zu-", titles->nr);
			slug(&name, line);
			strbuf_addstr(&name, ".log");
			strbuf_addf(
				&file,
				"%s\n# nextbot flag %s, %s: replay with `git bisect replay %s`\n"
				"# in a repository that has these commits (the tree's own, and\n"
				"# next's from its published tag or the Reproduce steps).\n",
				line, b->flag_id ? b->flag_id : "", b->next_tag ? b->next_tag : "",
				name.buf);
			continue;
		}
		if (!name.len) /* lines before the first title */
			continue;
		strbuf_addf(&file, "%s\n", line);
	}
	strbuf_release(&file);
	strbuf_release(&name);
}

static void bisect_summary(struct draft *d, const struct notice_breakage *b, int attached)
{
	struct strvec titles = STRVEC_INIT;
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	if (!b->bisect_log_nr && !b->bisect_steps)
		return;
	if (attached) {
		attach_levels(d, b, &titles);
	} else {
		for (i = 0; i < b->bisect_log_nr; i++)
			if (is_level_title(b->bisect_log[i]))
				strvec_push(&titles, b->bisect_log[i] + 2);
	}
	strbuf_addf(&sb, "Bisection: %d step%s", b->bisect_steps, b->bisect_steps == 1 ? "" : "s");
	for (i = 0; i < titles.nr; i++) {
		const char *t = draft_cl(d, titles.v[i]);
		/* "which merge: next's first-parent chain": the part before the colon says it */
		size_t n = str_starts_with(t, "which merge:") ? 11 : strlen(t);

		strbuf_addf(&sb, "%s%.*s", i ? ", then " : " (", (int)n, t);
	}
	strbuf_addstr(&sb, titles.nr ? ")." : ".");
	if (b->culprit_fails && !is_flaky(b))
		strbuf_addf(&sb,
			    " Confirmed: the commit failed %d of %d runs, its parent passed %d "
			    "of %d, and next with the commit reverted %s.",
			    b->culprit_fails, b->culprit_fails, b->parent_passes, b->parent_passes,
			    b->revert_passes ? "passed" : "was not tried");
	if (attached && d->att_names.nr)
		strbuf_addf(&sb,
			    " The full log%s, one `git bisect replay` file per level, %s "
			    "attached.",
			    d->att_names.nr == 1 ? "" : "s", d->att_names.nr == 1 ? "is" : "are");
	draft_para(d, "%s", sb.buf);
	strbuf_release(&sb);
	strvec_clear(&titles);
}

/* The search's probes, one a line: "good 0123456789ab subject". */
static void draft_probe_steps(struct draft *d, const struct notice_breakage *b)
{
	static const char *const verdicts[] = {"# good: [", "# bad: [", "# skip: ["};
	size_t i, k, shown = 0;

	for (i = 0; i < b->bisect_log_nr; i++) {
		const char *line = b->bisect_log[i], *hex, *close;

		for (k = 0; k < 3 && !str_starts_with(line, verdicts[k]); k++)
			;
		if (k == 3)
			continue;
		hex = line + strlen(verdicts[k]);
		if (!(close = strchr(hex, ']')))
			continue;
		if (!shown++)
			strbuf_addstr(&d->body, "The search's steps:\n\n");
		strbuf_addf(&d->body, "  %-4s %.12s %s\n",
			    k == 0 ? "good" : k == 1 ? "bad" : "skip", draft_cl(d, hex),
			    draft_cl(d, close[1] == ' ' ? close + 2 : close + 1));
	}
	if (shown)
		strbuf_addch(&d->body, '\n');
}

/* ---- the parts of a report ---- */

static void exit_status(struct strbuf *sb, const struct notice_breakage *b)
{
	if (b->timed_out)
		strbuf_addstr(sb, "was killed at its timeout");
	else
		strbuf_addf(sb, "exited with status %d", b->exit_code);
}

static void action(struct draft *d, const struct notice_breakage *b)
{
	switch (b->action) {
	case NOTICE_ACTION_REVERTED:
		draft_para(d, "I have reverted that commit in today's next.");
		break;
	case NOTICE_ACTION_PREVIOUS_VERSION:
		if (b->previous_tag)
			draft_para(d, "I have used the %s tree from %s for today.",
				   draft_cl(d, b->tree), draft_cl(d, b->previous_tag));
		else
			draft_para(d,
				   "I have used the last good version of the %s tree for "
				   "today.",
				   draft_cl(d, b->tree));
		break;
	case NOTICE_ACTION_DROPPED_TREE:
		draft_para(d, "I have dropped the %s tree for today.", draft_cl(d, b->tree));
		break;
	case NOTICE_ACTION_NONE:
		break;
	}
}

static void field(struct draft *d, const char *key, const char *value)
{
	if (value && *value)
		strbuf_addf(&d->body, "%-10s%s\n", key, draft_cl(d, value));
}

/*
 * 0-day's block: tree, head, commit, date, the night, the command, the compiler.  A
 * flaky flag blames no patch: its block names no commit and no partner.
 */
static void header_block(struct draft *d, const struct notice_breakage *b)
{
	struct strbuf sb = STRBUF_INIT;
	int blames = !is_flaky(b);

	if (b->tree_url) {
		strbuf_addf(&sb, "%s %s", b->tree_url, b->tree_branch ? b->tree_branch : "");
		field(d, "tree:", sb.buf);
	} else {
		field(d, "tree:", b->tree);
	}
	field(d, "head:", b->tree_head);
	if (blames) {
		field(d, "commit:", b->commit);
		field(d, "date:", b->commit_date);
		field(d, "patch:", b->patch_link);
	}
	if (blames && b->partner.tree) {
		strbuf_reset(&sb);
		strbuf_addf(&sb, "%s (%s)", b->partner.commit ? b->partner.commit : "?",
			    b->partner.tree);
		field(d, "partner:", sb.buf);
	}
	field(d, "next:", b->next_tag);
	strbuf_reset(&sb);
	strbuf_addf(&sb, "%s", command(b));
	if (b->command_line && b->command_name)
		strbuf_addf(&sb, ": %s", b->command_line);
	field(d, "command:", sb.buf);
	field(d, "compiler:", b->compiler);
	field(d, "flag:", b->flag_id);
	strbuf_addch(&d->body, '\n');
	strbuf_release(&sb);
}

static void rebased(struct draft *d, const struct notice_breakage *b)
{
	if (!b->now.rebased)
		return;
	if (b->now.commit)
		draft_para(d,
			   "The %s tree has been rebased since: the same patch (patch-id "
			   "%.12s) is now commit %.12s there.",
			   draft_cl(d, b->tree), draft_cl(d, NB_PATCHID_HEX(&b->patch_id)),
			   draft_cl(d, b->now.commit));
	else
		draft_para(d,
			   "The %s tree has been rebased since, and the patch (patch-id "
			   "%.12s) is no longer in it.",
			   draft_cl(d, b->tree), draft_cl(d, NB_PATCHID_HEX(&b->patch_id)));
}

static void partner(struct draft *d, const struct notice_breakage *b, const char *lead)
{
	if (!b->partner.tree)
		return;
	draft_para(d, "%s this commit of the %s tree, by %s:", lead, draft_cl(d, b->partner.tree),
		   person(d, &b->partner.author));
	draft_commit_line(d, b->partner.commit, b->partner.subject);
	strbuf_addch(&d->body, '\n');
}

/* With a build matrix, every cell the culprit breaks, 0-day's way. */
static void cells(struct draft *d, const struct notice_breakage *b)
{
	size_t i, w = 0;

	if (!b->cells_nr)
		return;
	for (i = 0; i < b->cells_nr; i++)
		if (b->cells[i].name && strlen(b->cells[i].name) > w)
			w = strlen(b->cells[i].name);
	strbuf_addf(&d->body, "It fails in %zu cell%s of the build matrix:\n\n", b->cells_nr,
		    b->cells_nr == 1 ? "" : "s");
	for (i = 0; i < b->cells_nr; i++)
		strbuf_addf(&d->body, "  %-*s  %s\n", (int)w, draft_cl(d, b->cells[i].name),
			    draft_cl(d, b->cells[i].first_error ? b->cells[i].first_error : "?"));
	strbuf_addstr(&d->body, "\n");
}

static void reproduce(struct draft *d, const struct notice_breakage *b)
{
	size_t i;

	if (!b->reproduce_nr)
		return;
	strbuf_addstr(&d->body, "Reproduce: in an empty folder, with git and the build's tools\n");
	for (i = 0; i < b->reproduce_nr; i++)
		strbuf_addf(&d->body, "  %s\n", draft_cl(d, b->reproduce[i]));
	strbuf_addch(&d->body, '\n');
}

static void tags(struct draft *d, const struct notice_settings *s, const char *flag_id)
{
	struct strbuf url = STRBUF_INIT;

	draft_para(d, "If you fix the issue in a separate patch (not just a new version of "
		      "the same patch), kindly add these tags:");
	strbuf_addf(&d->body, "| Reported-by: %s\n", draft_cl(d, s->from));
	if (!draft_report_url(&url, s, flag_id))
		strbuf_addf(&d->body, "| Closes: %s\n", draft_cl(d, url.buf));
	strbuf_addch(&d->body, '\n');
	strbuf_release(&url);
}

static void signature(struct draft *d, const char *greeting, const char *flag_id)
{
	strbuf_addf(&d->body, "%s,\nnextbot\n\n-- \n", greeting);
	if (flag_id)
		strbuf_addf(&d->body, "nextbot, nightly integration and bisection (flag %s)\n",
			    flag_id);
	else
		strbuf_addstr(&d->body, "nextbot, nightly integration and bisection\n");
}

/* What tonight's build showed of a breakage it still carries, and what was done. */
static void still_shows(struct strbuf *sb, struct draft *d, const struct notice_breakage *b)
{
	switch (b->action) {
	case NOTICE_ACTION_REVERTED:
		strbuf_addstr(sb, ": it still carries the commit and fails this way, and I have "
				  "reverted the commit again for today.");
		break;
	case NOTICE_ACTION_PREVIOUS_VERSION:
		strbuf_addf(sb, ": the %s tree still fails this way, and I have used its previous "
				"version again for today.", draft_cl(d, b->tree));
		break;
	case NOTICE_ACTION_DROPPED_TREE:
		strbuf_addf(sb, ": the %s tree still fails this way, and I have left it out again "
				"for today.", draft_cl(d, b->tree));
		break;
	case NOTICE_ACTION_NONE:
		strbuf_addstr(sb, ": it still fails this way.");
		break;
	}
}

static void reminder_para(struct draft *d, const struct notice_breakage *b)
{
	struct strbuf sb = STRBUF_INIT;

	if (b->back) {
		strbuf_addf(&sb, "The breakage below is back as of %s: it was reported gone, "
				 "and tonight's build fails this way again.",
			    draft_cl(d, b->next_tag));
	} else if (b->reminder) {
		strbuf_addf(&sb, "This is a reminder: the breakage below still shows in %s",
			    draft_cl(d, b->next_tag));
		still_shows(&sb, d, b);
	}
	if (sb.len)
		draft_para(d, "%s", sb.buf);
	strbuf_release(&sb);
	/* a fix announced by mail (`#nextbot fix:`) that has not arrived */
	if ((!b->reminder && !b->back) || !b->fix_subject)
		return;
	draft_para(d, "A fix was announced%s%s%s%s:", b->fix_by ? " by " : "",
		   b->fix_by ? draft_cl(d, b->fix_by) : "", b->fix_date ? " on " : "",
		   b->fix_date ? draft_cl(d, b->fix_date) : "");
	strbuf_addf(&d->body, "  \"%s\"\n\n", draft_cl(d, b->fix_subject));
	draft_para(d, "but no commit with that subject has reached the %s tree yet.",
		   draft_cl(d, b->tree));
}

static int is_reminder(const struct notice_breakage *b)
{
	return b->reminder || b->back;
}

/*
 * The part of a flag's notice ids that names the audience, `role` ("report" or
 * "maintainer"), and the submission its thread is about when it is not the first
 * (b->thread): "report", or "report <thread>" (in `sb`, which the result may be).
 */
static const char *role_key(struct strbuf *sb, const struct notice_breakage *b, const char *role)
{
	if (!b->thread)
		return role;
	strbuf_reset(sb);
	strbuf_addf(sb, "%s %s", role, b->thread);
	return sb->buf;
}

/*
 * A reminder answers the first mail of its audience, `role` ("report" or
 * "maintainer"): In-Reply-To it, References ending with it.
 */
static void thread_reminder(struct draft *d, const struct notice_settings *s,
			    const struct notice_breakage *b, const char *role)
{
	struct strbuf key = STRBUF_INIT;
	const char *p[5] = {b->kind, b->flag_id, role_key(&key, b, role), "0", NULL};
	struct strbuf first = STRBUF_INIT;

	if (is_reminder(b) && draft_msgid_of(&first, s, p) == 0) {
		strbuf_reset(&d->in_reply_to);
		strbuf_addbuf(&d->in_reply_to, &first);
		if (d->references.len)
			strbuf_addch(&d->references, ' ');
		strbuf_addbuf(&d->references, &first);
	}
	strbuf_release(&first);
	strbuf_release(&key);
}

/* The patch's Message-ID, "<x@y>", into `out`; 0 when it has a usable one. */
static int patch_msgid(struct strbuf *out, const struct notice_breakage *b)
{
	return b->message_id ? mime_msgid_normalize(out, b->message_id) : -1;
}

static void report_subject(struct draft *d, const struct notice_breakage *b)
{
	struct strbuf msgid = STRBUF_INIT;

	if (!patch_msgid(&msgid, b)) {
		strbuf_addf(&d->subject, "Re: %s", draft_cl(d, b->subject));
		strbuf_addbuf(&d->in_reply_to, &msgid);
		strbuf_addbuf(&d->references, &msgid);
	} else {
		strbuf_addf(&d->subject, "%s[%s] %s failure: %s", is_reminder(b) ? "Re: " : "",
			    draft_cl(d, b->tree), what(b), draft_cl(d, b->subject));
	}
	strbuf_release(&msgid);
}

/* What MAINTAINERS was asked about, as the mail says it. */
static const char *files_of(const struct notice_breakage *b)
{
	return b->partner.tree ? "the files of both commits" : "the files of the commit";
}

/* Both trees' maintainers and both authors, on every notice of a semantic conflict. */
static void people(struct draft *d, const struct notice_breakage *b, int authors_cc,
		   int contacts_cc)
{
	draft_add_person(d, &b->author, authors_cc);
	if (b->partner.tree)
		draft_add_person(d, &b->partner.author, authors_cc);
	draft_add_specs(d, b->contacts, b->contacts_nr, contacts_cc);
	if (b->partner.tree)
		draft_add_specs(d, b->partner.contacts, b->partner.contacts_nr, contacts_cc);
}

/*
 * "Hi <name>," with the name exactly as its owner writes it (the commit's author
 * name: many names put the family name first, so no first name is guessed), or no
 * greeting at all when there is no name.
 */
static void greeting(struct draft *d, const struct notice_person *p)
{
	const char *name = p->name ? draft_cl(d, p->name) : "";

	if (*name)
		strbuf_addf(&d->body, "Hi %s,\n\n", name);
}

static int queue_report(const struct notice_settings *s, const struct notice_breakage *b,
			const char *reminder)
{
	struct draft d = DRAFT_INIT;
	struct strbuf sb = STRBUF_INIT, key = STRBUF_INIT;
	int ret;

	d.kind = b->kind;
	d.flag_id = b->flag_id;
	d.parts[0] = b->kind;
	d.parts[1] = b->flag_id;
	d.parts[2] = role_key(&key, b, "report");
	d.parts[3] = reminder;
	people(&d, b, 0, 1);
	report_subject(&d, b);
	thread_reminder(&d, s, b, "report");
	greeting(&d, &b->author);
	reminder_para(&d, b);
	draft_para(&d,
		   "nextbot's %s of %s fails after the merge of the %s tree, and the "
		   "bisection points to your commit%s:",
		   what(b), draft_cl(&d, b->next_tag), draft_cl(&d, b->tree),
		   b->partner.tree ? " together with a commit of another tree" : "");
	draft_commit_line(&d, b->commit, b->subject);
	strbuf_addch(&d.body, '\n');
	partner(&d, b, "It breaks only together with");
	rebased(&d, b);
	header_block(&d, b);
	strbuf_addf(&sb, "The %s command ", what(b));
	exit_status(&sb, b);
	strbuf_addstr(&sb, ". The first error, with its context:");
	draft_para(&d, "%s", sb.buf);
	draft_quote(&d, b->excerpt);
	cells(&d, b);
	bisect_summary(&d, b, 1);
	reproduce(&d, b);
	action(&d, b);
	draft_maintainers(&d, b->maintainers, b->maintainers_nr, files_of(b));
	tags(&d, s, b->flag_id);
	signature(&d, "Thanks", b->flag_id);
	draft_commands(&d, s, DRAFT_COMMANDS_FLAG, b->flag_id);
	ret = draft_queue(s, &d);
	draft_release(&d);
	strbuf_release(&sb);
	strbuf_release(&key);
	return ret;
}

/*
 * What is known of a failure that does not repeat: how often it failed and passed
 * in the same tree, a failing run's output, and the search's steps (attached as
 * `git bisect replay` files too).  No patch is blamed, and no author is told.
 */
static void flaky_body(struct draft *d, const struct notice_breakage *b)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addf(&sb, "After merging the %s tree, %s failed in %s, but not every time",
		    draft_cl(d, b->tree), draft_cl(d, command(b)), draft_cl(d, b->next_tag));
	if (b->total > 0)
		strbuf_addf(&sb, ": of %d runs of the same tree, %d failed and %d passed", b->total,
			    b->failing, b->total - b->failing);
	strbuf_addstr(&sb, ". So no patch is blamed.");
	draft_para(d, "%s", sb.buf);
	strbuf_reset(&sb);
	if (b->excerpt && *b->excerpt) {
		strbuf_addstr(&sb, "A failing run's output (the command ");
		exit_status(&sb, b);
		strbuf_addstr(&sb, "):");
		draft_para(d, "%s", sb.buf);
		draft_quote(d, b->excerpt);
	} else if (b->cells_nr && b->cells[0].first_error) {
		draft_para(d, "The first error of a failing run:");
		draft_quote(d, b->cells[0].first_error);
	} else {
		draft_para(d, "No output of a failing run was kept (its verdict came from the "
			      "verdict cache).");
	}
	cells(d, b);
	if (b->commit) {
		draft_para(d, "The search pointed at commit");
		draft_commit_line(d, b->commit, b->subject);
		strbuf_addch(&d->body, '\n');
		draft_para(d, "but a failure that does not repeat is no evidence against a "
			      "patch: its author has not been told.");
	}
	header_block(d, b);
	bisect_summary(d, b, 1);
	draft_probe_steps(d, b);
	strbuf_release(&sb);
}

static int queue_maintainer(const struct notice_settings *s, const struct notice_breakage *b,
			    const char *reminder)
{
	struct draft d = DRAFT_INIT;
	struct strbuf key = STRBUF_INIT;
	int ret, flaky = is_flaky(b);

	d.kind = b->kind;
	d.flag_id = b->flag_id;
	d.parts[0] = b->kind;
	d.parts[1] = b->flag_id;
	d.parts[2] = role_key(&key, b, "maintainer");
	d.parts[3] = reminder;
	draft_add_specs(&d, b->contacts, b->contacts_nr, 0);
	if (!flaky && b->partner.tree)
		draft_add_specs(&d, b->partner.contacts, b->partner.contacts_nr, 0);
	if (s->list)
		draft_add_spec(&d, s->list, 1);
	if (!flaky) {
		draft_add_person(&d, &b->author, 1);
		if (b->partner.tree)
			draft_add_person(&d, &b->partner.author, 1);
	}
	/* a reminder keeps the first mail's subject, as a reply */
	strbuf_addf(&d.subject, "%s%s: %s failure after merge of the %s tree",
		    is_reminder(b) ? "Re: " : "",
		    draft_cl(&d, is_reminder(b) && b->first_tag ? b->first_tag : b->next_tag),
		    flaky ? "flaky" : what(b), draft_cl(&d, b->tree));
	thread_reminder(&d, s, b, "maintainer");
	strbuf_addstr(&d.body, "Hi all,\n\n");
	reminder_para(&d, b);
	if (flaky) {
		flaky_body(&d, b);
	} else {
		draft_para(&d,
			   "After merging the %s tree, today's %s of next (%s) failed like "
			   "this:",
			   draft_cl(&d, b->tree), what(b), draft_cl(&d, command(b)));
		draft_quote(&d, b->excerpt);
		cells(&d, b);
		strbuf_addstr(&d.body, "Caused by commit\n\n");
		draft_commit_line(&d, b->commit, b->subject);
		strbuf_addch(&d.body, '\n');
		if (b->partner.tree) {
			strbuf_addstr(&d.body, "interacting with commit\n\n");
			draft_commit_line(&d, b->partner.commit, b->partner.subject);
			strbuf_addch(&d.body, '\n');
			draft_para(&d, "from the %s tree.", draft_cl(&d, b->partner.tree));
		}
		rebased(&d, b);
		action(&d, b);
		header_block(&d, b);
		bisect_summary(&d, b, 0);
		reproduce(&d, b);
		draft_para(&d,
			   "The author%s been sent a report with the details and the "
			   "bisect logs.",
			   b->partner.tree ? "s have" : " has");
		draft_maintainers(&d, b->maintainers, b->maintainers_nr, files_of(b));
	}
	signature(&d, "Cheers", b->flag_id);
	draft_commands(&d, s, flaky ? DRAFT_COMMANDS_FLAKY : DRAFT_COMMANDS_FLAG, b->flag_id);
	ret = draft_queue(s, &d);
	draft_release(&d);
	strbuf_release(&key);
	return ret;
}

/*
 * A short chat line for the event, with links (the flag's page, the patch); a link
 * is always followed by a space or ends the message, as Slack wants it.
 */
static void slack_breakage(struct strbuf *out, const struct notice_settings *s,
			   const struct notice_breakage *b, const char *lead)
{
	struct strbuf url = STRBUF_INIT, ref = STRBUF_INIT;

	hook_slack_text(out, lead);
	strbuf_addstr(out, ": ");
	if (b->commit && !is_flaky(b)) { /* a flaky flag blames no patch, no one */
		strbuf_addf(&ref, "%.12s (\"%s\")", b->commit, b->subject ? b->subject : "");
		if (b->patch_link)
			hook_slack_link(out, b->patch_link, ref.buf);
		else
			hook_slack_text(out, ref.buf);
		strbuf_addch(out, ' ');
		if (b->author.name || b->author.email) {
			strbuf_addstr(out, "by ");
			hook_slack_text(out, b->author.name ? b->author.name : b->author.email);
			strbuf_addch(out, ' ');
		}
	}
	if (b->partner.tree && !is_flaky(b)) {
		strbuf_addstr(out, "with ");
		strbuf_reset(&ref);
		strbuf_addf(&ref, "%.12s (\"%s\") of %s",
			    b->partner.commit ? b->partner.commit : "",
			    b->partner.subject ? b->partner.subject : "", b->partner.tree);
		hook_slack_text(out, ref.buf);
		strbuf_addch(out, ' ');
	}
	if (b->flag_id) { /* none for a patch with no flag (a drop that answered none) */
		strbuf_addstr(out, "- flag ");
		if (!draft_report_url(&url, s, b->flag_id))
			hook_slack_link(out, url.buf, b->flag_id);
		else
			hook_slack_text(out, b->flag_id);
	}
	strbuf_release(&url);
	strbuf_release(&ref);
}

static void event_from_breakage(struct hook_event *ev, const struct notice_settings *s,
				const struct notice_breakage *b, struct strbuf *url)
{
	memset(ev, 0, sizeof(*ev));
	ev->event = b->kind;
	ev->id = b->flag_id;
	ev->date = b->date;
	ev->next_tag = b->next_tag;
	ev->tree = b->tree;
	ev->commit = b->commit;
	ev->subject = b->subject;
	ev->author = b->author;
	ev->patch_id = b->patch_id;
	ev->message_id = b->message_id;
	ev->partner_tree = b->partner.tree;
	ev->partner_commit = b->partner.commit;
	ev->partner_subject = b->partner.subject;
	ev->partner_author = b->partner.author;
	ev->command = b->command_name;
	ev->has_exit = 1;
	ev->exit_code = b->exit_code;
	ev->timed_out = b->timed_out;
	ev->log_excerpt = b->excerpt;
	ev->has_bisect = 1;
	ev->steps = b->bisect_steps;
	ev->log = b->bisect_log;
	ev->log_nr = b->bisect_log_nr;
	ev->cells = b->cells;
	ev->cells_nr = b->cells_nr;
	if (is_flaky(b)) { /* counts, and no culprit, no partner: no one is blamed */
		ev->has_counts = 1;
		ev->failing = b->failing;
		ev->total = b->total;
		ev->commit = ev->subject = ev->message_id = NULL;
		ev->author = (struct notice_person){ 0 };
		ev->partner_tree = ev->partner_commit = ev->partner_subject = NULL;
		ev->partner_author = (struct notice_person){ 0 };
		ev->patch_id = (struct nb_patchid)NB_PATCHID_NONE;
	}
	if (b->flag_id && !draft_report_url(url, s, b->flag_id))
		ev->flag_url = url->buf;
}

int notice_queue_breakage(const struct notice_settings *s, const struct notice_breakage *b)
{
	const char *parts[3];
	struct strbuf slack = STRBUF_INIT, lead = STRBUF_INIT, url = STRBUF_INIT;
	struct hook_event ev;
	char rem[24];
	int ret, total = 0;

	if ((ret = draft_check_settings(s)) < 0)
		return ret;
	if (!b->kind || !b->flag_id || !b->tree)
		return nb_error_set(NB_EINVALID, "notify: breakage without kind, flag id or tree");
	if (b->back)
		snprintf(rem, sizeof(rem), "back-%.10s", b->date ? b->date : "");
	else
		snprintf(rem, sizeof(rem), "%d", b->reminder);
	if (!is_flaky(b) && (ret = queue_report(s, b, rem)) < 0)
		goto done;
	total += is_flaky(b) ? 0 : ret;
	if ((ret = queue_maintainer(s, b, rem)) < 0)
		goto done;
	total += ret;
	event_from_breakage(&ev, s, b, &url);
	parts[0] = b->flag_id;
	parts[1] = rem;
	parts[2] = NULL;
	strbuf_addf(&lead, "%s%s: %s failure after the merge of the %s tree",
		    b->back ? "back in " : b->reminder ? "still shows in " : "",
		    b->next_tag ? b->next_tag : "",
		    is_flaky(b) ? "flaky" : what(b), b->tree);
	slack_breakage(&slack, s, b, lead.buf);
	if ((ret = draft_queue_hooks(s, &ev, parts, b->subject, slack.buf)) < 0)
		goto done;
	ret = total + ret;
done:
	strbuf_release(&slack);
	strbuf_release(&lead);
	strbuf_release(&url);
	return ret;
}

/* In-Reply-To the first report (or, for flaky, the maintainer mail) of the flag. */
static void thread_under_report(struct draft *d, const struct notice_settings *s,
				const struct notice_breakage *b)
{
	struct strbuf key = STRBUF_INIT;
	const char *p[5] = {b->kind, b->flag_id,
			    role_key(&key, b, is_flaky(b) ? "maintainer" : "report"), "0", NULL};

	if (patch_msgid(&d->references, b) == 0)
		strbuf_addch(&d->references, ' ');
	if (!b->flag_id || draft_msgid_of(&d->in_reply_to, s, p) < 0) {
		strbuf_reset(&d->in_reply_to);
		strbuf_rtrim(&d->references);
		patch_msgid(&d->in_reply_to, b);
	} else {
		strbuf_addbuf(&d->references, &d->in_reply_to);
	}
	strbuf_release(&key);
}

/*
 * Everyone the flag's report and maintainer mail reached: for a flaky flag the
 * contacts and the list (it had no report); else both authors and both trees'
 * contacts, the list, and the people and lists MAINTAINERS named.
 */
static void resolved_people(struct draft *d, const struct notice_settings *s,
			    const struct notice_breakage *b)
{
	size_t i;

	if (is_flaky(b)) {
		draft_add_specs(d, b->contacts, b->contacts_nr, 0);
	} else {
		people(d, b, 0, 1);
		for (i = 0; i < b->maintainers_nr; i++)
			draft_add_spec(d, b->maintainers[i].spec, 1);
	}
	if (s->list)
		draft_add_spec(d, s->list, 1);
}

/* The follow-ups of a flag; their names are the notice's kind and its subject's tag. */
enum followup_kind { FOLLOWUP_DROPPED, FOLLOWUP_RESOLVED };

static const char *followup_kind_name(enum followup_kind k)
{
	return k == FOLLOWUP_DROPPED ? "dropped" : "resolved";
}

static int queue_followup(const struct notice_settings *s, const struct notice_breakage *b,
			  enum followup_kind followup, const char *why)
{
	const char *kind = followup_kind_name(followup);
	struct draft d = DRAFT_INIT;
	struct hook_event ev;
	struct strbuf slack = STRBUF_INIT, lead = STRBUF_INIT, url = STRBUF_INIT;
	const char *key = b->flag_id			    ? b->flag_id
			  : !nb_patchid_is_none(&b->patch_id) ? NB_PATCHID_HEX(&b->patch_id)
							      : b->commit;
	const char *parts[3] = {key, "0", NULL};
	int ret, dropped = followup == FOLLOWUP_DROPPED;

	if ((ret = draft_check_settings(s)) < 0)
		return ret;
	d.kind = kind;
	d.flag_id = b->flag_id;
	d.parts[0] = kind;
	d.parts[1] = key;
	d.parts[2] = "mail";
	/* a flag resolved, found again and resolved again is told each time */
	if (!dropped)
		parts[1] = d.parts[3] = b->date;
	if (dropped)
		draft_add_person(&d, &b->author, 0);
	else
		resolved_people(&d, s, b);
	if (b->kind)
		thread_under_report(&d, s, b);
	strbuf_addf(&d.subject, "[%s] %s", kind, draft_cl(&d, b->subject));
	if (dropped) {
		draft_para(&d, "This patch was left out of next at the request of the %s tree's "
			       "maintainer%s%s",
			   draft_cl(&d, b->tree), why ? ": " : ".", why ? draft_cl(&d, why) : "");
		draft_commit_line(&d, b->commit, b->subject);
		strbuf_addch(&d.body, '\n');
		draft_para(&d, "It stays in the %s tree until its maintainer removes it; next "
			       "leaves it out from now on.", draft_cl(&d, b->tree));
	} else if (is_flaky(b)) {
		/* no patch was blamed: none is named now */
		draft_para(&d, "The flaky failure of %s after the merge of the %s tree is gone "
			       "as of %s.",
			   draft_cl(&d, command(b)), draft_cl(&d, b->tree),
			   draft_cl(&d, b->next_tag));
		if (why)
			draft_para(&d, "Why: %s", draft_cl(&d, why));
	} else {
		draft_para(&d,
			   "The %s failure caused by this commit in the %s tree is gone as "
			   "of %s:",
			   what(b), draft_cl(&d, b->tree), draft_cl(&d, b->next_tag));
		draft_commit_line(&d, b->commit, b->subject);
		strbuf_addch(&d.body, '\n');
		if (b->partner.tree) {
			draft_para(&d, "(together with this commit of the %s tree:)",
				   draft_cl(&d, b->partner.tree));
			draft_commit_line(&d, b->partner.commit, b->partner.subject);
			strbuf_addch(&d.body, '\n');
		}
		if (why)
			draft_para(&d, "Why: %s", draft_cl(&d, why));
	}
	if (b->flag_id)
		draft_para(&d, "Flag: %s", draft_cl(&d, b->flag_id));
	signature(&d, "Thanks", b->flag_id);
	event_from_breakage(&ev, s, b, &url);
	ev.event = kind;
	ev.reason = why;
	strbuf_addf(&lead, "%s: %s", b->next_tag ? b->next_tag : "", kind);
	slack_breakage(&slack, s, b, lead.buf);
	if (why) {
		strbuf_addstr(&slack, " - ");
		hook_slack_text(&slack, why);
	}
	ret = draft_queue_all(s, &d, &ev, parts, b->subject, slack.buf);
	strbuf_release(&slack);
	strbuf_release(&lead);
	strbuf_release(&url);
	return ret;
}

int notice_queue_dropped(const struct notice_settings *s, const struct notice_breakage *b,
			 const char *reason)
{
	return queue_followup(s, b, FOLLOWUP_DROPPED, reason);
}

int notice_queue_resolved(const struct notice_settings *s, const struct notice_breakage *b,
			  const char *why)
{
	return queue_followup(s, b, FOLLOWUP_RESOLVED, why);
}
