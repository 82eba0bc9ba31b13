/*
 * Composing one mail, inside notify/ only (bot/ uses notice.h): recipients checked
 * as they are added, text from strangers cleaned, prose wrapped, attachments, and
 * the queueing of the result (and of the webhooks) into the outbox.  render.c holds
 * the machinery; report.c (flags) and nightmail.c (conflicts, the base, the summary)
 * write the texts.
 */
#ifndef NOTIFY_DRAFT_H
#define NOTIFY_DRAFT_H

#include <stddef.h>
#include "notify/hook.h"
#include "notify/notice.h"
#include "util/strbuf.h"
#include "util/strvec.h"

/* Prose is wrapped at this many columns; quoted output and commit lines are not. */
#define DRAFT_WRAP 72

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
	const char *flag_id;  /* X-Nextbot-Flag: when set */
	int operator_only;    /* to notify.operator: local paths stay as they are */
	struct strbuf subject;
	struct draft_rcpt *rcpts;
	size_t rcpts_nr, rcpts_alloc;
	struct strbuf in_reply_to, references;
	struct strbuf body;
	struct strvec att_names, att_texts; /* attachments, text/plain */
	struct strvec pool; /* cleaned one-line strings handed out by draft_cl() */
};
#define DRAFT_INIT                                                                        \
	{                                                                                 \
		NULL, {NULL}, NULL, 0, STRBUF_INIT, NULL, 0, 0, STRBUF_INIT, STRBUF_INIT, \
			STRBUF_INIT, STRVEC_INIT, STRVEC_INIT, STRVEC_INIT                \
	}

void draft_release(struct draft *d);

/* A one-line, clean version of text from strangers ("" for NULL), valid as long as d. */
const char *draft_cl(struct draft *d, const char *s);

/* Recipients: a person from a commit, a configured "Name <email>", a list of those. */
void draft_add_person(struct draft *d, const struct notice_person *p, int cc);
void draft_add_spec(struct draft *d, const char *spec, int cc);
void draft_add_specs(struct draft *d, const char *const *v, size_t nr, int cc);

/*
 * Cc's MAINTAINERS' people and lists and says why each got the mail, after "what"
 * ("the files of the commit"): a paragraph and one line each.  Nothing for none.
 */
void draft_maintainers(struct draft *d, const struct notice_extra *v, size_t nr,
		       const char *what);

/*
 * Appends one paragraph, formatted, wrapped at DRAFT_WRAP columns, then a blank
 * line.  Arguments from strangers must be cleaned with draft_cl() first.
 */
void draft_para(struct draft *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends a commit line as linux-next writes them: "  <12 hex> ("<subject>")". */
void draft_commit_line(struct draft *d, const char *commit, const char *subject);
/* Appends quoted command output: cleaned, each line indented by three, then a blank line. */
void draft_quote(struct draft *d, const char *text);
/* What the readers of a mail may answer it with (draft_commands()). */
enum draft_commands {
	DRAFT_COMMANDS_FLAG,    /* about a flag that names a patch: all of them */
	DRAFT_COMMANDS_FLAKY,   /* about a flag without a culprit: fix:, invalid, reopen */
	DRAFT_COMMANDS_PATCHES, /* naming patches, no flag (conflicts): drop and undrop */
};
/*
 * Appends the `#nextbot` commands the mail's readers may answer with, one line each,
 * and which id to give in another thread (`flag_id`, or for PATCHES a commit): the
 * last lines of the mail, after its signature line.  Nothing when s->mail_commands
 * is 0 (no inbox takes answers); `test:` only with s->mail_tests.
 */
void draft_commands(struct draft *d, const struct notice_settings *s, enum draft_commands what,
		    const char *flag_id);
/* Attaches a text/plain file (`name` is ours: [A-Za-z0-9._-]). */
void draft_attach(struct draft *d, const char *name, const char *text);

/* Msg-id "<nextbot.<id>@<domain of from>>" of notice `id`. */
void draft_msgid(struct strbuf *out, const char *id, const char *from_addr);
/* The Message-ID of the notice whose id is made of `parts` (5 of them). */
int draft_msgid_of(struct strbuf *out, const struct notice_settings *s, const char *const parts[5]);

/*
 * Queues the draft as a mail: 1 queued, 0 already there or nobody to send to,
 * negative on error.  The draft stays the caller's to release.
 */
int draft_queue(const struct notice_settings *s, struct draft *d);
/*
 * One POST per configured webhook, each in its format: the event object, or
 * for `format: slack` {"text": slack} (one short message; NULL: the title).
 * Returns how many were new, or < 0.
 */
int draft_queue_hooks(const struct notice_settings *s, const struct hook_event *ev,
		      const char *const *parts, const char *title, const char *slack);
/* draft_queue(), draft_release(), then draft_queue_hooks(): how many new, or < 0. */
int draft_queue_all(const struct notice_settings *s, struct draft *d, const struct hook_event *ev,
		    const char *const parts[3], const char *title, const char *slack);
int draft_check_settings(const struct notice_settings *s);

/* Replaces every occurrence of `path` (a directory) in sb by `with`. */
void draft_scrub(struct strbuf *sb, const char *path, const char *with);

/* The settings' report_url with "{id}" replaced by `id`, into `out`; 0 when there is one. */
int draft_report_url(struct strbuf *out, const struct notice_settings *s, const char *id);

#endif
