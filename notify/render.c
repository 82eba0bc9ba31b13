/* Drafts into the outbox: recipients, headers, wrapped prose, attachments, webhooks. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "notify/draft.h"
#include "notify/mime.h"
#include "notify/outbox.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/xalloc.h"
#include "util/banned.h"

void draft_release(struct draft *d)
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
	strvec_clear(&d->att_names);
	strvec_clear(&d->att_texts);
	strvec_clear(&d->pool);
	d->rcpts = NULL;
	d->rcpts_nr = d->rcpts_alloc = 0;
}

const char *draft_cl(struct draft *d, const char *s)
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

void draft_add_person(struct draft *d, const struct notice_person *p, int cc)
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

void draft_add_spec(struct draft *d, const char *spec, int cc)
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
	draft_add_person(d, &p, cc);
	free(name);
	free(addr);
}

void draft_add_specs(struct draft *d, const char *const *v, size_t nr, int cc)
{
	size_t i;

	for (i = 0; i < nr; i++)
		draft_add_spec(d, v[i], cc);
}

void draft_maintainers(struct draft *d, const struct notice_extra *v, size_t nr,
		       const char *what)
{
	size_t i;

	if (!nr)
		return;
	for (i = 0; i < nr; i++)
		draft_add_spec(d, v[i].spec, 1);
	draft_para(d, "The tree's MAINTAINERS file names these people and lists for %s, "
		      "so they get this mail too:", what);
	for (i = 0; i < nr; i++)
		strbuf_addf(&d->body, "  %s (%s)\n", draft_cl(d, v[i].spec), draft_cl(d, v[i].why));
	strbuf_addch(&d->body, '\n');
}

void draft_para(struct draft *d, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	mime_wrap(&d->body, sb.buf, DRAFT_WRAP);
	strbuf_addch(&d->body, '\n');
	strbuf_release(&sb);
}

void draft_commit_line(struct draft *d, const char *commit, const char *subject)
{
	strbuf_addf(&d->body, "  %.12s (\"%s\")\n", draft_cl(d, commit), draft_cl(d, subject));
}

void draft_quote(struct draft *d, const char *text)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p;

	mime_clean_text(&sb, text && *text ? text : "(no output)");
	strbuf_rtrim(&sb);
	while (sb.len && sb.buf[0] == '\n')
		memmove(sb.buf, sb.buf + 1, sb.len--);
	/* indented as 0-day quotes output: it is not prose and is never wrapped */
	for (p = sb.buf; *p;) {
		size_t n = strcspn(p, "\n");

		strbuf_addf(&d->body, "%s%.*s\n", n ? "   " : "", (int)n, p);
		p += n + (p[n] == '\n');
	}
	strbuf_addch(&d->body, '\n');
	strbuf_release(&sb);
}

void draft_commands(struct draft *d, const struct notice_settings *s, enum draft_commands what,
		    const char *flag_id)
{
	/* one line each, the command where a reader copies it from (as syzbot's footer) */
	static const struct {
		const char *cmd, *what;
		unsigned mask; /* 1 << enum draft_commands */
	} rows[] = {
		{ "fix: <subject>", "a commit with this subject fixes it", 3 },
		{ "test: <git url> <branch>", "try that branch in the tree's place", 1 },
		{ "drop [reason]", "keep the patch out of next", 1 },
		{ "drop <commit> [reason]", "keep that patch out of next", 4 },
		{ "undrop", "take the drop back", 1 },
		{ "undrop <commit>", "take the drop back", 4 },
		{ "invalid <reason>", "a false positive: never blamed again", 3 },
		{ "reopen", "take back an invalid or a fix:", 3 },
	};
	size_t i;

	if (!s->mail_commands)
		return;
	if (what == DRAFT_COMMANDS_PATCHES)
		strbuf_addstr(&d->body, "\nTo tell nextbot, answer this mail with a line of these, "
					"naming a\npatch above by its commit:\n");
	else /* the example is a command this mail's readers may use: no drop for flaky */
		strbuf_addf(&d->body, "\nTo tell nextbot, answer this mail with a line of these "
				      "(in another\nthread, name the flag: #nextbot %s %s%s):\n",
			    what == DRAFT_COMMANDS_FLAKY ? "invalid" : "drop", draft_cl(d, flag_id),
			    what == DRAFT_COMMANDS_FLAKY ? " <reason>" : "");
	for (i = 0; i < sizeof(rows) / sizeof(*rows); i++) {
		if (!(rows[i].mask & 1u << what) || (!s->mail_tests && rows[i].cmd[0] == 't'))
			continue;
		strbuf_addf(&d->body, "  #nextbot %-24s  %s\n", rows[i].cmd, rows[i].what);
	}
	if (what == DRAFT_COMMANDS_FLAG)
		strbuf_addf(&d->body, "drop, undrop and invalid are for the tree's maintainers%s\n",
			    s->mail_tests ? ";\ntest: for them and the patch's author." : ".");
	else
		strbuf_addf(&d->body, "%s for the tree's maintainers.\n",
			    what == DRAFT_COMMANDS_FLAKY ? "invalid is" : "drop and undrop are");
}

void draft_attach(struct draft *d, const char *name, const char *text)
{
	struct strbuf sb = STRBUF_INIT;

	mime_clean_text(&sb, text ? text : "");
	strvec_push(&d->att_names, name);
	strvec_push_nodup(&d->att_texts, strbuf_detach(&sb, NULL));
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

void draft_msgid(struct strbuf *out, const char *id, const char *from_addr)
{
	strbuf_addf(out, "<nextbot.%s@%s>", id, strchr(from_addr, '@') + 1);
}

int draft_msgid_of(struct strbuf *out, const struct notice_settings *s, const char *const parts[5])
{
	char id[33], *name = NULL, *addr = NULL;

	if (mime_addr_parse(s->from, &name, &addr) < 0)
		return -1;
	outbox_id(id, parts, 5);
	draft_msgid(out, id, addr);
	free(name);
	free(addr);
	return 0;
}

static time_t now(const struct notice_settings *s)
{
	return s->now ? s->now : time(NULL);
}

/* Cc only: they become the To. */
static void settle_to(struct draft *d)
{
	size_t i;
	int any_to = 0;

	for (i = 0; i < d->rcpts_nr; i++)
		any_to |= d->rcpts[i].addr && !d->rcpts[i].cc;
	if (!any_to)
		for (i = 0; i < d->rcpts_nr; i++)
			d->rcpts[i].cc = 0;
}

/* The headers before MIME-Version; the same in the 7bit and the 8bit version. */
static void headers(struct strbuf *mail, const struct notice_settings *s, struct draft *d,
		    const char *id, const char *from_name, const char *from_addr)
{
	struct mime_addr from = {from_name, from_addr};

	mime_header_addrs(mail, "From", &from, 1);
	addr_header(mail, "To", d, 0);
	addr_header(mail, "Cc", d, 1);
	mime_header_text(mail, "Subject", d->subject.buf);
	strbuf_addstr(mail, "Date: ");
	mime_date(mail, now(s));
	strbuf_addstr(mail, "\r\nMessage-ID: ");
	draft_msgid(mail, id, from_addr);
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
}

static void trailer_headers(struct strbuf *mail, const struct draft *d)
{
	strbuf_addstr(mail, "Auto-Submitted: auto-generated\r\n");
	strbuf_addf(mail, "X-Nextbot-Event: %s\r\n", d->kind);
	if (d->flag_id)
		strbuf_addf(mail, "X-Nextbot-Flag: %s\r\n", d->flag_id);
}

/* Strongest of two transfer encodings, for a multipart's own header. */
static const char *outer_cte(const char *a, const char *b)
{
	return !strcmp(a, "8bit") || !strcmp(b, "8bit") ? "8bit" : "7bit";
}

/*
 * The whole mail after the common headers: a text/plain body, or multipart/mixed
 * with the attachments.  `eightbit`: the version for servers that offer 8BITMIME.
 */
static void mime_part_of(struct strbuf *mail, const struct draft *d, const char *text,
			 const char *boundary, int eightbit)
{
	struct strbuf part = STRBUF_INIT;
	const char *cte, *all = "7bit";
	size_t i;

	if (!d->att_names.nr) {
		mime_body_ext(&part, text, eightbit, &cte);
		strbuf_addf(mail,
			    "MIME-Version: 1.0\r\n"
			    "Content-Type: text/plain; charset=UTF-8\r\n"
			    "Content-Transfer-Encoding: %s\r\n",
			    cte);
		trailer_headers(mail, d);
		strbuf_addstr(mail, "\r\n");
		strbuf_addbuf(mail, &part);
		strbuf_release(&part);
		return;
	}
	/* the parts first, to know the outer transfer encoding */
	strbuf_addf(&part, "--%s\r\nContent-Type: text/plain; charset=UTF-8\r\n", boundary);
	{
		struct strbuf b = STRBUF_INIT;

		mime_body_ext(&b, text, eightbit, &cte);
		all = outer_cte(all, cte);
		strbuf_addf(&part, "Content-Transfer-Encoding: %s\r\n\r\n", cte);
		strbuf_addbuf(&part, &b);
		strbuf_addstr(&part, "\r\n"); /* the CRLF before a boundary is the boundary's */
		strbuf_release(&b);
	}
	for (i = 0; i < d->att_names.nr; i++) {
		struct strbuf b = STRBUF_INIT;

		mime_body_ext(&b, d->att_texts.v[i], eightbit, &cte);
		all = outer_cte(all, cte);
		strbuf_addf(&part,
			    "--%s\r\n"
			    "Content-Type: text/plain; charset=UTF-8;\r\n name=\"%s\"\r\n"
			    "Content-Disposition: attachment;\r\n filename=\"%s\"\r\n"
			    "Content-Transfer-Encoding: %s\r\n\r\n",
			    boundary, d->att_names.v[i], d->att_names.v[i], cte);
		strbuf_addbuf(&part, &b);
		strbuf_addstr(&part, "\r\n");
		strbuf_release(&b);
	}
	strbuf_addf(&part, "--%s--\r\n", boundary);
	strbuf_addf(mail,
		    "MIME-Version: 1.0\r\n"
		    "Content-Type: multipart/mixed;\r\n boundary=\"%s\"\r\n"
		    "Content-Transfer-Encoding: %s\r\n",
		    boundary, all);
	trailer_headers(mail, d);
	strbuf_addstr(mail, "\r\n");
	strbuf_addbuf(mail, &part);
	strbuf_release(&part);
}

/* A boundary that no text of the mail contains. */
static void boundary_for(struct strbuf *out, const struct draft *d, const char *id,
			 const char *text)
{
	size_t i;
	int clash;

	strbuf_addf(out, "nextbot-%s", id);
	do {
		clash = strstr(text, out->buf) != NULL;
		for (i = 0; i < d->att_texts.nr && !clash; i++)
			clash = strstr(d->att_texts.v[i], out->buf) != NULL;
		if (clash)
			strbuf_addstr(out, "=_");
	} while (clash);
}

static void reader_addrs(struct strbuf *out, const char *name, const struct draft *d, int cc)
{
	size_t i;
	int any = 0;

	for (i = 0; i < d->rcpts_nr; i++) {
		const struct draft_rcpt *r = &d->rcpts[i];

		if (!r->addr || r->cc != cc)
			continue;
		strbuf_addstr(out, any ? ", " : name);
		if (r->name)
			strbuf_addf(out, "%s <%s>", r->name, r->addr);
		else
			strbuf_addstr(out, r->addr);
		any = 1;
	}
	if (any)
		strbuf_addch(out, '\n');
}

/* The mail as a reader sees it, for `report --html` and people reading the spool. */
static char *reader_text(const struct notice_settings *s, const struct draft *d, const char *id,
			 const char *from_name, const char *from_addr, const char *text)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	if (from_name)
		strbuf_addf(&sb, "From: %s <%s>\n", from_name, from_addr);
	else
		strbuf_addf(&sb, "From: %s\n", from_addr);
	reader_addrs(&sb, "To: ", d, 0);
	reader_addrs(&sb, "Cc: ", d, 1);
	strbuf_addf(&sb, "Subject: %s\nDate: ", d->subject.buf);
	mime_date(&sb, now(s));
	strbuf_addstr(&sb, "\nMessage-ID: ");
	draft_msgid(&sb, id, from_addr);
	strbuf_addch(&sb, '\n');
	if (d->in_reply_to.len)
		strbuf_addf(&sb, "In-Reply-To: %s\n", d->in_reply_to.buf);
	if (d->flag_id)
		strbuf_addf(&sb, "X-Nextbot-Flag: %s\n", d->flag_id);
	strbuf_addf(&sb, "\n%s", text);
	for (i = 0; i < d->att_names.nr; i++)
		strbuf_addf(&sb, "\n--- %s ---\n%s", d->att_names.v[i], d->att_texts.v[i]);
	return strbuf_detach(&sb, NULL);
}

/* A kind's place in a night's story (notice_settings.order_epoch). */
static int story_place(const char *kind)
{
	static const char *const moves[] = { "patch-added", "patch-moved", "patch-replaced",
					     "patch-removed", "patch-merged", "journey-digest",
					     NULL };
	static const char *const gate[] = { "held", "released", "review-missing", NULL };
	size_t i;

	for (i = 0; moves[i]; i++)
		if (!strcmp(kind, moves[i]))
			return 1;
	for (i = 0; gate[i]; i++)
		if (!strcmp(kind, gate[i]))
			return 2;
	return !strcmp(kind, "summary") ? 4 : 3;
}

/* "<epoch>.<place>.<seq>": the outbox's delivery order (outbox_ids_ordered()). */
static char *notice_order(const struct notice_settings *s, const char *kind)
{
	static unsigned long seq;
	time_t epoch = s->order_epoch ? s->order_epoch : now(s);

	return xstrfmt("%010lld.%d.%08lu", (long long)epoch, story_place(kind), ++seq);
}

static void notice_init(struct outbox_notice *n, const struct notice_settings *s, const char *id,
			const char *kind, const char *channel)
{
	memset(n, 0, sizeof(*n));
	n->id = xstrdup(id);
	n->kind = xstrdup(kind);
	n->channel = xstrdup(channel);
	n->created = n->next_try = now(s);
	n->order = notice_order(s, kind);
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

static void note_queued(const struct notice_settings *s, const char *id)
{
	if (s->queued_ids && !strvec_contains(s->queued_ids, id))
		strvec_push(s->queued_ids, id);
}

int draft_queue(const struct notice_settings *s, struct draft *d)
{
	struct strbuf mail = STRBUF_INIT, mail8 = STRBUF_INIT, text = STRBUF_INIT,
		      bnd = STRBUF_INIT;
	struct outbox_notice n = OUTBOX_NOTICE_INIT;
	char id[33], *path = NULL, *from_name = NULL, *from_addr = NULL;
	int ret = 0;

	if (!d->rcpts_nr)
		return 0;
	outbox_id(id, d->parts, 5);
	if ((ret = mime_addr_parse(s->from, &from_name, &from_addr)) < 0) {
		nb_error_prefix("notify.from: ");
		goto done;
	}
	if (s->sent_ids) {
		draft_msgid(&mail, id, from_addr);
		strvec_push(s->sent_ids, mail.buf);
		strbuf_reset(&mail);
	}
	path = outbox_notice_path(s->outbox_dir, id);
	if (file_exists(path)) {
		note_queued(s, id);
		goto done;
	}
	settle_to(d);
	if (!d->operator_only && s->private_dir && *s->private_dir) {
		size_t i;

		draft_scrub(&d->body, s->private_dir, "$WORKDIR");
		draft_scrub(&d->subject, s->private_dir, "$WORKDIR");
		for (i = 0; i < d->att_texts.nr; i++) {
			struct strbuf a = STRBUF_INIT;

			strbuf_addstr(&a, d->att_texts.v[i]);
			draft_scrub(&a, s->private_dir, "$WORKDIR");
			free(d->att_texts.v[i]);
			d->att_texts.v[i] = strbuf_detach(&a, NULL);
		}
	}
	mime_clean_text(&text, d->body.buf);
	boundary_for(&bnd, d, id, text.buf);
	headers(&mail, s, d, id, from_name, from_addr);
	strbuf_addbuf(&mail8, &mail);
	mime_part_of(&mail, d, text.buf, bnd.buf, 0);
	mime_part_of(&mail8, d, text.buf, bnd.buf, 1);
	notice_init(&n, s, id, d->kind, "mail");
	n.text = reader_text(s, d, id, from_name, from_addr, text.buf);
	n.subject = xstrdup(d->subject.buf);
	n.from = xstrdup(from_addr);
	n.body = strbuf_detach(&mail, NULL);
	if (strcmp(n.body, mail8.buf))
		n.body8 = strbuf_detach(&mail8, NULL);
	notice_recipients(&n, d);
	ret = outbox_notice_save(&n, s->outbox_dir);
	if (!ret) {
		note_queued(s, id);
		ret = 1;
	}
done:
	outbox_notice_release(&n);
	strbuf_release(&mail);
	strbuf_release(&mail8);
	strbuf_release(&text);
	strbuf_release(&bnd);
	free(from_name);
	free(from_addr);
	free(path);
	return ret;
}

void draft_scrub(struct strbuf *sb, const char *path, const char *with)
{
	struct strbuf out = STRBUF_INIT;
	size_t plen = strlen(path);
	const char *p = sb->buf, *hit;

	while (plen > 1 && path[plen - 1] == '/')
		plen--;
	if (plen < 2 || !sb->len)
		return;
	while ((hit = strstr(p, path)) && strlen(hit) >= plen) {
		strbuf_add(&out, p, hit - p);
		strbuf_addstr(&out, with);
		p = hit + plen;
	}
	if (p == sb->buf)
		goto done;
	strbuf_addstr(&out, p);
	strbuf_reset(sb);
	strbuf_addbuf(sb, &out);
done:
	strbuf_release(&out);
}

int draft_queue_hooks(const struct notice_settings *s, const struct hook_event *ev,
		      const char *const *parts, const char *title, const char *slack)
{
	struct strbuf body = STRBUF_INIT, chat = STRBUF_INIT, subject = STRBUF_INIT;
	int ret = 0, queued = 0;
	size_t i;

	hook_body(&body, ev);
	mime_clean_line(&subject, title);
	hook_slack_body(&chat, slack ? slack : subject.buf);
	if (s->private_dir && *s->private_dir) {
		draft_scrub(&body, s->private_dir, "$WORKDIR");
		draft_scrub(&chat, s->private_dir, "$WORKDIR");
		draft_scrub(&subject, s->private_dir, "$WORKDIR");
	}
	for (i = 0; i < s->webhooks_nr && ret >= 0; i++) {
		const char *p[6] = {ev->event, parts[0],  parts[1],
				    parts[2],  "webhook", s->webhooks[i].url};
		struct outbox_notice n = OUTBOX_NOTICE_INIT;
		int is_slack = s->webhooks[i].format == NOTICE_HOOK_SLACK;
		char id[33], *path;

		outbox_id(id, p, 6);
		path = outbox_notice_path(s->outbox_dir, id);
		if (!file_exists(path)) {
			notice_init(&n, s, id, ev->event, "webhook");
			n.subject = xstrdup(subject.buf);
			n.url = xstrdup(s->webhooks[i].url);
			n.body = xstrdup(is_slack ? chat.buf : body.buf);
			outbox_notice_add_rcpt(&n, n.url, OUTBOX_QUEUED, NULL);
			ret = outbox_notice_save(&n, s->outbox_dir);
			queued += ret == 0;
			outbox_notice_release(&n);
		}
		if (ret >= 0)
			note_queued(s, id);
		free(path);
	}
	strbuf_release(&body);
	strbuf_release(&chat);
	strbuf_release(&subject);
	return ret < 0 ? ret : queued;
}

int draft_queue_all(const struct notice_settings *s, struct draft *d, const struct hook_event *ev,
		    const char *const parts[3], const char *title, const char *slack)
{
	int total = 0, ret = draft_queue(s, d);

	draft_release(d);
	if (ret < 0)
		return ret;
	total += ret;
	if ((ret = draft_queue_hooks(s, ev, parts, title, slack)) < 0)
		return ret;
	return total + ret;
}

int draft_check_settings(const struct notice_settings *s)
{
	if (!s->outbox_dir || !s->from)
		return nb_error_set(NB_EINVALID, "notify: outbox directory and from are required");
	return 0;
}

int draft_report_url(struct strbuf *out, const struct notice_settings *s, const char *id)
{
	const char *p = s->report_url, *hole;

	if (!p || !*p)
		return -1;
	while ((hole = strstr(p, "{id}"))) {
		strbuf_add(out, p, hole - p);
		strbuf_addstr(out, id ? id : "");
		p = hole + 4;
	}
	strbuf_addstr(out, p);
	return 0;
}

/* ---- replies to mail ---- */

int notice_queue_reply(const struct notice_settings *s, const struct notice_reply *r)
{
	struct draft d = DRAFT_INIT;
	const char *subj = r->subject ? r->subject : "";
	size_t i;
	int ret;

	if ((ret = draft_check_settings(s)) < 0)
		return ret;
	if (!r->key || !r->role)
		return nb_error_set(NB_EINVALID, "notify: a reply without key or role");
	d.kind = "reply";
	d.flag_id = r->flag_id;
	d.parts[0] = d.kind;
	d.parts[1] = r->key;
	d.parts[2] = r->role;
	draft_add_person(&d, &r->to, 0);
	for (i = 0; i < r->cc_nr; i++) {
		struct notice_person p = { NULL, r->cc[i] };

		draft_add_person(&d, &p, 1);
	}
	while (*subj == ' ')
		subj++;
	if (strncasecmp(subj, "Re:", 3))
		strbuf_addstr(&d.subject, "Re: ");
	strbuf_addstr(&d.subject, draft_cl(&d, subj));
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
	ret = draft_queue(s, &d);
	draft_release(&d);
	return ret;
}
