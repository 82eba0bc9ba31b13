/* Notices into the outbox: recipients, the mail texts, webhook events. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "notify/hook.h"
#include "notify/mime.h"
#include "notify/notice.h"
#include "notify/outbox.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/strvec.h"
#include "util/xalloc.h"
#include "util/banned.h"

struct draft_rcpt {
	char *name;  /* clean display name or NULL */
	char *addr;  /* checked address; NULL when refused */
	char *shown; /* refused: the address as given, made printable */
	char *error; /* refused: why */
	int cc;
};

/* One mail being composed.  All owned; draft_release() frees. */
struct draft {
	const char *kind;
	const char *parts[5]; /* what the notice id is made of */
	struct strbuf subject;
	struct draft_rcpt *rcpts;
	size_t rcpts_nr, rcpts_alloc;
	struct strbuf in_reply_to, references;
	struct strbuf body;
	struct strvec pool; /* cleaned one-line strings handed out by cl() */
};
#define DRAFT_INIT                                                                            \
	{                                                                                     \
		NULL, {NULL}, STRBUF_INIT, NULL, 0, 0, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, \
			STRVEC_INIT                                                           \
	}

static void draft_release(struct draft *d)
{
	size_t i;

	for (i = 0; i < d->rcpts_nr; i++) {
		free(d->rcpts[i].name);
		free(d->rcpts[i].addr);
		free(d->rcpts[i].shown);
		free(d->rcpts[i].error);
	}
	free(d->rcpts);
	strbuf_release(&d->subject);
	strbuf_release(&d->in_reply_to);
	strbuf_release(&d->references);
	strbuf_release(&d->body);
	strvec_clear(&d->pool);
}

/* A one-line, clean version of text from strangers, valid as long as the draft. */
static const char *cl(struct draft *d, const char *s)
{
	struct strbuf sb = STRBUF_INIT;

	mime_clean_line(&sb, s ? s : "");
	strvec_push_nodup(&d->pool, strbuf_detach(&sb, NULL));
	return d->pool.v[d->pool.nr - 1];
}

static int have(const struct draft *d, const char *addr)
{
	size_t i;

	for (i = 0; i < d->rcpts_nr; i++)
		if (d->rcpts[i].addr && !strcasecmp(d->rcpts[i].addr, addr))
			return 1;
	return 0;
}

static void refused(struct draft *d, const char *given, int cc)
{
	struct draft_rcpt *r;
	struct strbuf shown = STRBUF_INIT;

	ALLOC_GROW(d->rcpts, d->rcpts_nr + 1, d->rcpts_alloc);
	r = &d->rcpts[d->rcpts_nr++];
	memset(r, 0, sizeof(*r));
	mime_clean_line(&shown, given);
	r->shown = strbuf_detach(&shown, NULL);
	r->error = xstrdup(nb_error_last());
	r->cc = cc;
}

/* A person from a commit: name and email separately. */
static void add_person(struct draft *d, const struct notice_person *p, int cc)
{
	struct draft_rcpt *r;

	if (!p->email || !*p->email)
		return;
	if (mime_addr_check(p->email) < 0) {
		refused(d, p->email, cc);
		return;
	}
	if (have(d, p->email))
		return;
	ALLOC_GROW(d->rcpts, d->rcpts_nr + 1, d->rcpts_alloc);
	r = &d->rcpts[d->rcpts_nr++];
	memset(r, 0, sizeof(*r));
	r->addr = xstrdup(p->email);
	if (p->name && *p->name) {
		struct strbuf name = STRBUF_INIT;

		mime_clean_line(&name, p->name);
		r->name = name.len ? strbuf_detach(&name, NULL) : NULL;
		strbuf_release(&name);
	}
	r->cc = cc;
}

/* A configured address: "Name <email>" or "email". */
static void add_spec(struct draft *d, const char *spec, int cc)
{
	char *name = NULL, *addr = NULL;
	struct notice_person p;

	if (!spec || !*spec)
		return;
	if (mime_addr_parse(spec, &name, &addr) < 0) {
		refused(d, spec, cc);
		return;
	}
	p.name = name;
	p.email = addr;
	add_person(d, &p, cc);
	free(name);
	free(addr);
}

static void add_specs(struct draft *d, const char *const *v, size_t nr, int cc)
{
	size_t i;

	for (i = 0; i < nr; i++)
		add_spec(d, v[i], cc);
}

static void addr_header(struct strbuf *out, const char *name, const struct draft *d, int cc)
{
	struct mime_addr *list = xcalloc(d->rcpts_nr + 1, sizeof(*list));
	size_t i, nr = 0;

	for (i = 0; i < d->rcpts_nr; i++) {
		if (d->rcpts[i].addr && d->rcpts[i].cc == cc) {
			list[nr].name = d->rcpts[i].name;
			list[nr++].addr = d->rcpts[i].addr;
		}
	}
	if (nr)
		mime_header_addrs(out, name, list, nr);
	free(list);
}

static void msgid(struct strbuf *out, const char *id, const char *from_addr)
{
	strbuf_addf(out, "<nextbot.%s@%s>", id, strchr(from_addr, '@') + 1);
}

static time_t now(const struct notice_settings *s)
{
	return s->now ? s->now : time(NULL);
}

static void headers(struct strbuf *mail, const struct notice_settings *s, struct draft *d,
		      const char *id, const char *from_name, const char *from_addr, const char *cte)
{
	struct mime_addr from = {from_name, from_addr};
	size_t i;
	int any_to = 0;

	for (i = 0; i < d->rcpts_nr; i++)
		any_to |= d->rcpts[i].addr && !d->rcpts[i].cc;
	if (!any_to) /* Cc only: they become the To */
		for (i = 0; i < d->rcpts_nr; i++)
			d->rcpts[i].cc = 0;
	mime_header_addrs(mail, "From", &from, 1);
	addr_header(mail, "To", d, 0);
	addr_header(mail, "Cc", d, 1);
	mime_header_text(mail, "Subject", d->subject.buf);
	strbuf_addstr(mail, "Date: ");
	mime_date(mail, now(s));
	strbuf_addstr(mail, "\r\nMessage-ID: ");
	msgid(mail, id, from_addr);
	strbuf_addstr(mail, "\r\n");
	if (d->in_reply_to.len)
		strbuf_addf(mail, "In-Reply-To: %s\r\n", d->in_reply_to.buf);
	if (d->references.len) { /* msg-ids, never encoded words: one per folded line */
		const char *p = d->references.buf, *sep = "";

		strbuf_addstr(mail, "References:");
		while (*(p += strspn(p, " "))) {
			size_t n = strcspn(p, " ");

			strbuf_addf(mail, "%s %.*s", sep, (int)n, p);
			sep = "\r\n";
			p += n;
		}
		strbuf_addstr(mail, "\r\n");
	}
	strbuf_addf(mail,
		    "MIME-Version: 1.0\r\n"
		    "Content-Type: text/plain; charset=UTF-8\r\n"
		    "Content-Transfer-Encoding: %s\r\n"
		    "Auto-Submitted: auto-generated\r\n"
		    "X-Nextbot-Event: %s\r\n\r\n",
		    cte, d->kind);
}

static void notice_init(struct outbox_notice *n, const struct notice_settings *s, const char *id,
			  const char *kind, const char *channel)
{
	memset(n, 0, sizeof(*n));
	n->id = xstrdup(id);
	n->kind = xstrdup(kind);
	n->channel = xstrdup(channel);
	n->created = n->next_try = now(s);
}

static void notice_recipients(struct outbox_notice *n, const struct draft *d)
{
	size_t i, ok = 0;

	for (i = 0; i < d->rcpts_nr; i++) {
		const struct draft_rcpt *r = &d->rcpts[i];

		if (r->addr)
			ok++;
		outbox_notice_add_rcpt(n, r->addr ? r->addr : r->shown,
				       r->addr ? OUTBOX_QUEUED : OUTBOX_FAILED, r->error);
	}
	if (!ok) {
		n->state = OUTBOX_FAILED;
		outbox_notice_set_error(n, "no valid recipient");
	} else if (ok < d->rcpts_nr) {
		outbox_notice_set_error(n, "some recipients refused");
	}
}

/* Returns 1 when queued, 0 when already there or nobody to send to, < 0 on error. */
static int queue_mail(const struct notice_settings *s, struct draft *d)
{
	struct strbuf mail = STRBUF_INIT, text = STRBUF_INIT;
	struct outbox_notice n = OUTBOX_NOTICE_INIT;
	char id[33], *path = NULL, *from_name = NULL, *from_addr = NULL;
	const char *cte;
	int ret = 0;

	if (!d->rcpts_nr)
		return 0;
	outbox_id(id, d->parts, 5);
	if ((ret = mime_addr_parse(s->from, &from_name, &from_addr)) < 0) {
		nb_error_prefix("notify.from: ");
		goto done;
	}
	if (s->sent_ids) {
		msgid(&mail, id, from_addr);
		strvec_push(s->sent_ids, mail.buf);
		strbuf_reset(&mail);
	}
	path = outbox_notice_path(s->outbox_dir, id);
	if (file_exists(path))
		goto done;
	mime_clean_text(&text, d->body.buf);
	mime_body(&mail, text.buf, &cte);
	strbuf_reset(&text);
	headers(&text, s, d, id, from_name, from_addr, cte);
	strbuf_addbuf(&text, &mail);
	notice_init(&n, s, id, d->kind, "mail");
	n.subject = xstrdup(d->subject.buf);
	n.from = xstrdup(from_addr);
	n.body = strbuf_detach(&text, NULL);
	notice_recipients(&n, d);
	ret = outbox_notice_save(&n, s->outbox_dir);
	if (!ret)
		ret = 1;
done:
	outbox_notice_release(&n);
	strbuf_release(&mail);
	strbuf_release(&text);
	free(from_name);
	free(from_addr);
	free(path);
	return ret;
}

/* One POST per configured webhook; returns how many were new, or < 0. */
static int queue_hooks(const struct notice_settings *s, const struct hook_event *ev,
			 const char *const *parts, const char *title)
{
	struct strbuf body = STRBUF_INIT, subject = STRBUF_INIT;
	int ret = 0, queued = 0;
	size_t i;

	hook_body(&body, ev);
	mime_clean_line(&subject, title);
	for (i = 0; i < s->webhooks_nr && ret >= 0; i++) {
		const char *p[6] = {ev->event, parts[0],  parts[1],
				    parts[2],  "webhook", s->webhooks[i].url};
		struct outbox_notice n = OUTBOX_NOTICE_INIT;
		char id[33], *path;

		outbox_id(id, p, 6);
		path = outbox_notice_path(s->outbox_dir, id);
		if (!file_exists(path)) {
			notice_init(&n, s, id, ev->event, "webhook");
			n.subject = xstrdup(subject.buf);
			n.url = xstrdup(s->webhooks[i].url);
			n.body = xstrdup(body.buf);
			outbox_notice_add_rcpt(&n, n.url, OUTBOX_QUEUED, NULL);
			ret = outbox_notice_save(&n, s->outbox_dir);
			queued += ret == 0;
			outbox_notice_release(&n);
		}
		free(path);
	}
	strbuf_release(&body);
	strbuf_release(&subject);
	return ret < 0 ? ret : queued;
}

static int sum(int *total, int ret)
{
	if (ret < 0)
		return ret;
	*total += ret;
	return 0;
}

/*
 * The end of every notice but the first report: the drafted mail (released here),
 * then the event's webhooks.  The number queued, or the first error.
 */
static int queue_mail_and_hooks(const struct notice_settings *s, struct draft *d,
				  const struct hook_event *ev, const char *const parts[3],
				  const char *what)
{
	int total = 0, ret = sum(&total, queue_mail(s, d));

	draft_release(d);
	if (ret < 0 || (ret = sum(&total, queue_hooks(s, ev, parts, what))) < 0)
		return ret;
	return total;
}

/* ---- breakages ---- */

static int is_build(const struct notice_breakage *b)
{
	return b->kind && !strcmp(b->kind, "build-failure");
}

static const char *what(const struct notice_breakage *b)
{
	return is_build(b) ? "build" : "test";
}

static const char *command(const struct notice_breakage *b)
{
	return b->command_name ? b->command_name : b->command_line ? b->command_line : "?";
}

static void commit_line(struct draft *d, const char *commit, const char *subject)
{
	strbuf_addf(&d->body, "  %.12s (\"%s\")\n", cl(d, commit), cl(d, subject));
}

static void partner_lines(struct draft *d, const struct notice_breakage *b)
{
	if (!b->partner.tree)
		return;
	strbuf_addstr(&d->body, "interacting with commit\n\n");
	commit_line(d, b->partner.commit, b->partner.subject);
	strbuf_addf(&d->body, "\nfrom the %s tree", cl(d, b->partner.tree));
	if (b->partner.author.name || b->partner.author.email)
		strbuf_addf(&d->body, " (by %s <%s>)", cl(d, b->partner.author.name),
			    cl(d, b->partner.author.email));
	strbuf_addstr(&d->body, ".\n\n");
}

static void excerpt(struct draft *d, const char *excerpt)
{
	struct strbuf sb = STRBUF_INIT;

	mime_clean_text(&sb, excerpt ? excerpt : "(no output)");
	strbuf_rtrim(&sb);
	strbuf_addbuf(&d->body, &sb);
	strbuf_addstr(&d->body, "\n\n");
	strbuf_release(&sb);
}

static void action(struct draft *d, const struct notice_breakage *b)
{
	switch (b->action) {
	case NOTICE_ACTION_REVERTED:
		strbuf_addstr(&d->body, "I have reverted that commit for today.\n\n");
		break;
	case NOTICE_ACTION_PREVIOUS_VERSION:
		if (b->previous_tag)
			strbuf_addf(&d->body, "I have used the %s tree from %s for today.\n\n",
				    cl(d, b->tree), cl(d, b->previous_tag));
		else
			strbuf_addf(&d->body,
				    "I have used the last good version of the %s tree "
				    "for today.\n\n",
				    cl(d, b->tree));
		break;
	case NOTICE_ACTION_DROPPED_TREE:
		strbuf_addf(&d->body, "I have dropped the %s tree for today.\n\n",
			    cl(d, b->tree));
		break;
	case NOTICE_ACTION_NONE:
		break;
	}
}

/* A reminder of a flag whose fix was announced by mail and has not arrived. */
static void pending_fix(struct draft *d, const struct notice_breakage *b)
{
	if (!b->reminder || !b->fix_subject)
		return;
	strbuf_addf(&d->body,
		    "A fix was announced%s%s%s%s:\n\n  \"%s\"\n\nbut no commit with that "
		    "subject has reached the %s tree yet.\n\n",
		    b->fix_by ? " by " : "", b->fix_by ? cl(d, b->fix_by) : "",
		    b->fix_date ? " on " : "", b->fix_date ? cl(d, b->fix_date) : "",
		    cl(d, b->fix_subject), cl(d, b->tree));
}

static void reproduce(struct draft *d, const struct notice_breakage *b)
{
	strbuf_addstr(&d->body, "To reproduce with plain git:\n\n");
	if (b->repro_url && b->repro_base)
		strbuf_addf(&d->body, "  git fetch %s %s\n", cl(d, b->repro_url),
			    cl(d, b->repro_base));
	strbuf_addf(&d->body, "  git checkout --detach %s\n",
		    cl(d, b->repro_base ? b->repro_base : b->next_tag));
	if (b->tree_url)
		strbuf_addf(&d->body, "  git fetch %s %s\n", cl(d, b->tree_url),
			    cl(d, b->tree_branch ? b->tree_branch : ""));
	strbuf_addf(&d->body, "  git merge --no-edit %s\n", cl(d, b->commit));
	strbuf_addf(&d->body, "  %s\n\n", cl(d, b->command_line ? b->command_line : ""));
	if (b->repro_base)
		strbuf_addf(&d->body,
			    "(%.12s is %s as it stood before the merge of the %s tree.)\n\n",
			    cl(d, b->repro_base), cl(d, b->next_tag), cl(d, b->tree));
}

static void bisect_log(struct draft *d, const struct notice_breakage *b)
{
	size_t i;

	if (!b->bisect_log_nr && !b->bisect_steps)
		return;
	strbuf_addf(&d->body, "Bisection (%d steps):\n\n", b->bisect_steps);
	for (i = 0; i < b->bisect_log_nr; i++)
		strbuf_addf(&d->body, "  %s\n", cl(d, b->bisect_log[i]));
	strbuf_addstr(&d->body, "\n");
}

static void exit_status(struct draft *d, const struct notice_breakage *b)
{
	if (b->timed_out)
		strbuf_addstr(&d->body, "was killed at its timeout");
	else
		strbuf_addf(&d->body, "failed with exit status %d", b->exit_code);
}

static void reminder(const char *out[1], char buf[16], int n)
{
	snprintf(buf, 16, "%d", n);
	out[0] = buf;
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
		strbuf_addf(&d->subject, "Re: %s", cl(d, b->subject));
		strbuf_addbuf(&d->in_reply_to, &msgid);
		strbuf_addbuf(&d->references, &msgid);
	} else {
		strbuf_addf(&d->subject, "[%s] %s failure: %s", cl(d, b->tree), what(b),
			    cl(d, b->subject));
	}
	strbuf_release(&msgid);
}

static void tags(struct draft *d, const struct notice_settings *s,
		   const struct notice_breakage *b)
{
	strbuf_addf(&d->body,
		    "If you fix it, please add these tags to the fix:\n\n"
		    "Reported-by: %s\n",
		    cl(d, s->from));
	if (s->report_url) {
		struct strbuf url = STRBUF_INIT;
		const char *p = s->report_url, *hole;

		while ((hole = strstr(p, "{id}"))) {
			strbuf_add(&url, p, hole - p);
			strbuf_addstr(&url, b->flag_id ? b->flag_id : "");
			p = hole + 4;
		}
		strbuf_addstr(&url, p);
		strbuf_addf(&d->body, "Closes: %s\n", cl(d, url.buf));
		strbuf_release(&url);
	}
	strbuf_addstr(&d->body, "\n");
}

static int queue_report(const struct notice_settings *s, const struct notice_breakage *b,
			  const char *reminder)
{
	struct draft d = DRAFT_INIT;
	int ret;

	d.kind = b->kind;
	d.parts[0] = b->kind;
	d.parts[1] = b->flag_id;
	d.parts[2] = "report";
	d.parts[3] = reminder;
	add_person(&d, &b->author, 0);
	if (b->partner.tree)
		add_person(&d, &b->partner.author, 0);
	add_specs(&d, b->contacts, b->contacts_nr, 1);
	report_subject(&d, b);
	strbuf_addf(&d.body, "Hi %s,\n\n", b->author.name ? cl(&d, b->author.name) : "");
	if (b->reminder)
		strbuf_addf(&d.body,
			    "This is a reminder: the breakage below is still present in "
			    "%s.\n\n",
			    cl(&d, b->next_tag));
	pending_fix(&d, b);
	strbuf_addf(&d.body,
		    "While integrating %s, nextbot found that this commit in the %s "
		    "tree breaks the %s:\n\n",
		    cl(&d, b->next_tag), cl(&d, b->tree), what(b));
	commit_line(&d, b->commit, b->subject);
	strbuf_addstr(&d.body, "\n");
	partner_lines(&d, b);
	strbuf_addf(&d.body, "The %s command %s (%s) ", what(b), cl(&d, command(b)),
		    cl(&d, b->command_line));
	exit_status(&d, b);
	strbuf_addstr(&d.body, ":\n\n");
	excerpt(&d, b->excerpt);
	bisect_log(&d, b);
	reproduce(&d, b);
	action(&d, b);
	tags(&d, s, b);
	strbuf_addstr(&d.body, "-- \nnextbot\n");
	ret = queue_mail(s, &d);
	draft_release(&d);
	return ret;
}

static int queue_maintainer(const struct notice_settings *s, const struct notice_breakage *b,
			      const char *reminder)
{
	struct draft d = DRAFT_INIT;
	int ret, flaky = b->kind && !strcmp(b->kind, "flaky");

	d.kind = b->kind;
	d.parts[0] = b->kind;
	d.parts[1] = b->flag_id;
	d.parts[2] = "maintainer";
	d.parts[3] = reminder;
	add_specs(&d, b->contacts, b->contacts_nr, 0);
	if (s->list)
		add_spec(&d, s->list, 1);
	if (flaky)
		strbuf_addf(&d.subject, "%s: flaky failure after merge of the %s tree",
			    cl(&d, b->next_tag), cl(&d, b->tree));
	else
		strbuf_addf(&d.subject, "%s: %s failure after merge of the %s tree",
			    cl(&d, b->next_tag), what(b), cl(&d, b->tree));
	strbuf_addstr(&d.body, "Hi all,\n\n");
	if (b->reminder)
		strbuf_addf(&d.body,
			    "This is a reminder: the breakage below is still present in "
			    "%s.\n\n",
			    cl(&d, b->next_tag));
	pending_fix(&d, b);
	if (flaky) {
		strbuf_addf(&d.body,
			    "After merging the %s tree, today's run of %s failed %d of "
			    "%d times, so no patch is blamed:\n\n",
			    cl(&d, b->tree), cl(&d, command(b)), b->failing, b->total);
		excerpt(&d, b->excerpt);
		if (b->commit) {
			strbuf_addstr(&d.body, "The failure does not reproduce reliably. "
					       "Bisection pointed at commit\n\n");
			commit_line(&d, b->commit, b->subject);
			strbuf_addstr(&d.body, "\nwhose author has not been told.\n\n");
		}
	} else {
		strbuf_addf(&d.body,
			    "After merging the %s tree, today's %s (%s) failed like "
			    "this:\n\n",
			    cl(&d, b->tree), what(b), cl(&d, command(b)));
		excerpt(&d, b->excerpt);
		strbuf_addstr(&d.body, "Caused by commit\n\n");
		commit_line(&d, b->commit, b->subject);
		strbuf_addstr(&d.body, "\n");
		partner_lines(&d, b);
		action(&d, b);
		reproduce(&d, b);
	}
	strbuf_addstr(&d.body, "-- \nCheers,\nnextbot\n");
	ret = queue_mail(s, &d);
	draft_release(&d);
	return ret;
}

static void event_from_breakage(struct hook_event *ev, const struct notice_breakage *b)
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
	if (b->kind && !strcmp(b->kind, "flaky")) {
		ev->has_counts = 1;
		ev->failing = b->failing;
		ev->total = b->total;
	}
}

static int check_settings(const struct notice_settings *s)
{
	if (!s->outbox_dir || !s->from)
		return nb_error_set(NB_EINVALID, "notify: outbox directory and from are required");
	return 0;
}

int notice_queue_breakage(const struct notice_settings *s, const struct notice_breakage *b)
{
	const char *rem[1], *parts[3];
	struct hook_event ev;
	char buf[16];
	int ret, total = 0;

	if ((ret = check_settings(s)) < 0)
		return ret;
	if (!b->kind || !b->flag_id || !b->tree)
		return nb_error_set(NB_EINVALID, "notify: breakage without kind, flag id or tree");
	reminder(rem, buf, b->reminder);
	if (strcmp(b->kind, "flaky") && (ret = sum(&total, queue_report(s, b, rem[0]))) < 0)
		return ret;
	if ((ret = sum(&total, queue_maintainer(s, b, rem[0]))) < 0)
		return ret;
	event_from_breakage(&ev, b);
	parts[0] = b->flag_id;
	parts[1] = rem[0];
	parts[2] = NULL;
	if ((ret = sum(&total, queue_hooks(s, &ev, parts, b->subject))) < 0)
		return ret;
	return total;
}

/* In-Reply-To the first report (or, for flaky, the maintainer mail) of the flag. */
static void thread_under_report(struct draft *d, const struct notice_settings *s,
				  const struct notice_breakage *b)
{
	int flaky = !strcmp(b->kind, "flaky");
	const char *p[5] = {b->kind, b->flag_id, flaky ? "maintainer" : "report", "0", NULL};
	char id[33], *name = NULL, *addr = NULL;

	if (patch_msgid(&d->references, b) == 0)
		strbuf_addch(&d->references, ' ');
	if (!b->flag_id || mime_addr_parse(s->from, &name, &addr) < 0) {
		strbuf_rtrim(&d->references);
		patch_msgid(&d->in_reply_to, b);
		goto done;
	}
	outbox_id(id, p, 5);
	msgid(&d->in_reply_to, id, addr);
	strbuf_addbuf(&d->references, &d->in_reply_to);
done:
	free(name);
	free(addr);
}

static int queue_followup(const struct notice_settings *s, const struct notice_breakage *b,
			    const char *kind, const char *why)
{
	struct draft d = DRAFT_INIT;
	struct hook_event ev;
	const char *key = b->flag_id ? b->flag_id : b->patch_id ? b->patch_id : b->commit;
	const char *parts[3] = {key, "0", NULL};
	int ret, flaky = b->kind && !strcmp(b->kind, "flaky");

	if ((ret = check_settings(s)) < 0)
		return ret;
	d.kind = kind;
	d.parts[0] = kind;
	d.parts[1] = key;
	d.parts[2] = "mail";
	if (!flaky)
		add_person(&d, &b->author, 0);
	if (strcmp(kind, "dropped"))
		add_specs(&d, b->contacts, b->contacts_nr, !flaky);
	if (b->kind)
		thread_under_report(&d, s, b);
	strbuf_addf(&d.subject, "[%s] %s", kind, cl(&d, b->subject));
	if (!strcmp(kind, "dropped")) {
		strbuf_addf(&d.body, "This patch was dropped from the %s tree because %s\n\n",
			    cl(&d, b->tree), cl(&d, why ? why : "of a maintainer's decision."));
	} else {
		strbuf_addf(&d.body,
			    "The %s failure caused by this commit in the %s tree is gone "
			    "as of %s: %s\n\n",
			    b->kind && is_build(b) ? "build" : "test", cl(&d, b->tree),
			    cl(&d, b->next_tag), cl(&d, why ? why : ""));
	}
	commit_line(&d, b->commit, b->subject);
	strbuf_addstr(&d.body, "\n-- \nnextbot\n");
	event_from_breakage(&ev, b);
	ev.event = kind;
	ev.reason = why;
	return queue_mail_and_hooks(s, &d, &ev, parts, b->subject);
}

int notice_queue_dropped(const struct notice_settings *s, const struct notice_breakage *b,
			 const char *reason)
{
	return queue_followup(s, b, "dropped", reason);
}

int notice_queue_resolved(const struct notice_settings *s, const struct notice_breakage *b,
			  const char *why)
{
	return queue_followup(s, b, "resolved", why);
}

/* ---- merge conflicts, base broken, summary ---- */

static void lines(struct draft *d, const char *const *v, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		strbuf_addf(&d->body, "  %s\n", cl(d, v[i]));
	if (!nr)
		strbuf_addstr(&d->body, "  (none found)\n");
	strbuf_addstr(&d->body, "\n");
}

int notice_queue_conflict(const struct notice_settings *s, const struct notice_conflict *c)
{
	struct draft d = DRAFT_INIT;
	struct hook_event ev = {0};
	const char *parts[3] = {c->date, c->tree, c->other};
	int ret;

	if ((ret = check_settings(s)) < 0)
		return ret;
	d.kind = "merge-conflict";
	d.parts[0] = d.kind;
	d.parts[1] = c->date;
	d.parts[2] = c->tree;
	d.parts[3] = c->other;
	d.parts[4] = "mail";
	add_specs(&d, c->contacts, c->contacts_nr, 0);
	if (s->list)
		add_spec(&d, s->list, 1);
	strbuf_addf(&d.subject, "%s: manual merge of the %s tree with the %s tree",
		    cl(&d, c->next_tag), cl(&d, c->tree), cl(&d, c->other));
	strbuf_addf(&d.body, "Hi all,\n\nToday's merge of the %s tree got a conflict in:\n\n",
		    cl(&d, c->tree));
	lines(&d, c->paths, c->paths_nr);
	strbuf_addstr(&d.body, "between these commits:\n\n");
	lines(&d, c->ours, c->ours_nr);
	strbuf_addf(&d.body, "from the %s tree and these commits:\n\n", cl(&d, c->other));
	lines(&d, c->theirs, c->theirs_nr);
	strbuf_addf(&d.body, "from the %s tree.\n\n", cl(&d, c->tree));
	if (c->outcome)
		strbuf_addf(&d.body, "%s\n\n", cl(&d, c->outcome));
	strbuf_addstr(&d.body, "-- \nCheers,\nnextbot\n");
	ev.event = "merge-conflict";
	ev.date = c->date;
	ev.next_tag = c->next_tag;
	ev.tree = c->tree;
	ev.other_tree = c->other;
	ev.paths = c->paths;
	ev.paths_nr = c->paths_nr;
	return queue_mail_and_hooks(s, &d, &ev, parts, c->tree);
}

int notice_queue_base_broken(const struct notice_settings *s, const struct notice_base_broken *bb)
{
	struct draft d = DRAFT_INIT;
	struct hook_event ev = {0};
	const char *parts[3] = {bb->date, bb->base_name, NULL};
	int ret;

	if ((ret = check_settings(s)) < 0)
		return ret;
	d.kind = "base-broken";
	d.parts[0] = d.kind;
	d.parts[1] = bb->date;
	d.parts[2] = "mail";
	if (s->list)
		add_spec(&d, s->list, 0);
	strbuf_addf(&d.subject, "%s: the base (%s) is broken", cl(&d, bb->next_tag),
		    cl(&d, bb->base_name));
	strbuf_addf(&d.body, "Hi all,\n\nTonight's base %s alone, at\n\n  %.12s\n\n",
		    cl(&d, bb->base_name), cl(&d, bb->base_commit));
	strbuf_addf(&d.body, "already fails %s (%s), ", cl(&d, bb->command_name),
		    cl(&d, bb->command_line));
	if (bb->timed_out)
		strbuf_addstr(&d.body, "killed at its timeout:\n\n");
	else
		strbuf_addf(&d.body, "exit status %d:\n\n", bb->exit_code);
	excerpt(&d, bb->excerpt);
	strbuf_addstr(&d.body, "No tree is blamed and nothing was merged tonight.\n\n"
			       "-- \nnextbot\n");
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
	return queue_mail_and_hooks(s, &d, &ev, parts, "base broken");
}

static void section(struct draft *d, const char *title, const char *const *v, size_t nr)
{
	if (!nr)
		return;
	strbuf_addf(&d->body, "%s:\n\n", title);
	lines(d, v, nr);
}

int notice_queue_summary(const struct notice_settings *s, const struct notice_summary *sum)
{
	struct draft d = DRAFT_INIT;
	struct hook_event ev = {0};
	const char *parts[3] = {sum->date, NULL, NULL};
	int ret;
	size_t i;

	if ((ret = check_settings(s)) < 0)
		return ret;
	d.kind = "summary";
	d.parts[0] = d.kind;
	d.parts[1] = sum->date;
	d.parts[2] = "mail";
	if (s->list)
		add_spec(&d, s->list, 0);
	strbuf_addf(&d.subject, "[%s] BUILD %s %.12s", cl(&d, sum->next_tag),
		    sum->regression ? "REGRESSION" : "SUCCESS", cl(&d, sum->next_commit));
	strbuf_addf(&d.body, "%s (%.12s)\n\nTrees:\n\n", cl(&d, sum->next_tag),
		    cl(&d, sum->next_commit));
	for (i = 0; i < sum->trees_nr; i++) {
		const struct notice_summary_tree *t = &sum->trees[i];

		strbuf_addf(&d.body, "  %-20s %s", cl(&d, t->name), cl(&d, t->state));
		if (t->reason)
			strbuf_addf(&d.body, " (%s)", cl(&d, t->reason));
		strbuf_addstr(&d.body, "\n");
	}
	strbuf_addstr(&d.body, "\n");
	section(&d, "New flags", sum->new_flags, sum->new_flags_nr);
	section(&d, "Resolved flags", sum->resolved_flags, sum->resolved_flags_nr);
	section(&d, "Duplicate patches (same patch-id in two trees)", sum->duplicates,
		  sum->duplicates_nr);
	section(&d, "Commits without their author's Signed-off-by", sum->missing_signoff,
		  sum->missing_signoff_nr);
	section(&d, "Notes", sum->notes, sum->notes_nr);
	strbuf_addstr(&d.body, "-- \nnextbot\n");
	ev.event = "summary";
	ev.date = sum->date;
	ev.next_tag = sum->next_tag;
	ev.commit = sum->next_commit;
	ev.result = sum->regression ? "regression" : "success";
	return queue_mail_and_hooks(s, &d, &ev, parts, "daily summary");
}

/* ---- replies to mail ---- */

int notice_queue_reply(const struct notice_settings *s, const struct notice_reply *r)
{
	struct draft d = DRAFT_INIT;
	const char *subj = r->subject ? r->subject : "";
	size_t i;
	int ret;

	if ((ret = check_settings(s)) < 0)
		return ret;
	if (!r->key || !r->role)
		return nb_error_set(NB_EINVALID, "notify: a reply without key or role");
	d.kind = "reply";
	d.parts[0] = d.kind;
	d.parts[1] = r->key;
	d.parts[2] = r->role;
	add_person(&d, &r->to, 0);
	for (i = 0; i < r->cc_nr; i++) {
		struct notice_person p = { NULL, r->cc[i] };

		add_person(&d, &p, 1);
	}
	while (*subj == ' ')
		subj++;
	if (strncasecmp(subj, "Re:", 3))
		strbuf_addstr(&d.subject, "Re: ");
	strbuf_addstr(&d.subject, cl(&d, subj));
	if (r->message_id && !mime_msgid_normalize(&d.in_reply_to, r->message_id)) {
		/* the root and the nearest parents, as mail clients shorten long threads */
		for (i = 0; i < r->references_nr; i++) {
			if (r->references_nr > 20 && i > 0 && i < r->references_nr - 19)
				continue;
			if (!mime_msgid_normalize(&d.references, r->references[i]))
				strbuf_addch(&d.references, ' ');
		}
		strbuf_addbuf(&d.references, &d.in_reply_to);
	}
	strbuf_addstr(&d.body, r->text ? r->text : "");
	strbuf_rtrim(&d.body);
	strbuf_addstr(&d.body, "\n\n-- \nnextbot\n");
	ret = queue_mail(s, &d);
	draft_release(&d);
	return ret;
}
