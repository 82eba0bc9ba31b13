/* Commands by mail: trust, loops, which flag, who may do what, the actions and the replies. */
#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "bot/core/botutil.h"
#include "bot/mail/mail.h"
#include "bot/night/night.h"
#include "notify/inbox.h"
#include "util/error.h"
#include "util/log.h"
#include "util/oid.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define COMMANDS_MAX 10 /* command lines read from one mail */
#define CC_MAX 20       /* other recipients an acknowledgement goes to */
#define REFUSALS_MAX 5  /* refusals answered to one sender a day: a forged From: (without
			   inbox.authserv_id) cannot make nextbot mail someone over and over */

static const char help_text[] =
	"nextbot understands these commands in an answer to one of its mails,\n"
	"one per line, outside quoted text:\n"
	"\n"
	"  #nextbot drop [reason]     keep the patch out of next\n"
	"  #nextbot undrop            take a drop back\n"
	"  #nextbot invalid <reason>  a false positive: never blamed again\n"
	"  #nextbot reopen            take back an invalid, or a fix:\n"
	"  #nextbot fix: <subject>    resolved when a commit with this subject\n"
	"                             reaches the tree's branch\n"
	"  #nextbot test: <git url> <branch>\n"
	"                             run the failing command with that branch\n"
	"                             in place of the tree\n"
	"\n"
	"drop, undrop and invalid are for the tree's maintainers (its\n"
	"contacts); fix: for anyone the report went to; test: for the patch's\n"
	"author and the maintainers.  In an answer to nextbot's mail about a\n"
	"flag the command is about that flag, in an answer to one about a\n"
	"patch about that patch.  Elsewhere, or for another flag,\n"
	"name it right after the command word, by its flag id, or the patch's\n"
	"commit, patch-id (7 to 40 hex digits; a unique prefix will do) or\n"
	"<Message-ID>: #nextbot drop 0123456789ab <reason>\n";

/* One mail being handled. */
struct mailcmd_job {
	struct maint *m;
	const struct inbox_mail *mail;
	const struct sent_mail *thread; /* the mail of nextbot's it answers, or NULL */
	struct strbuf ack, refusal, summary;
	const char *ack_flag;            /* the flag the acknowledgement is about */
	const char *line;                /* the command line being carried out */
	int silent;                      /* an answer to an answer: act, never reply */
	int acted, refused;
	char when[32];
	char today[16];
};

const char *mailcmd_outcome_name(enum mailcmd_outcome o)
{
	static const char *const names[] = { "acted", "refused", "ignored", "duplicate",
					     "unparseable" };

	return (unsigned)o < sizeof(names) / sizeof(*names) ? names[o] : "?";
}

/* ---- text ---- */

/* A paragraph of the acknowledgement. */
__attribute__((format(printf, 2, 3))) static void para(struct strbuf *out, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	bot_wrap(out, sb.buf, "");
	strbuf_release(&sb);
}

/* ---- who is who ---- */

/* Does the configured "Name <addr>" or "addr" name `addr` (case-insensitive)? */
static int spec_is(const char *spec, const char *addr)
{
	const char *lt = spec ? strrchr(spec, '<') : NULL, *gt;
	size_t n;

	if (!spec || !addr)
		return 0;
	if (lt && (gt = strchr(lt, '>'))) {
		spec = lt + 1;
		n = (size_t)(gt - spec);
	} else {
		while (*spec == ' ')
			spec++;
		n = strcspn(spec, " ");
	}
	return n == strlen(addr) && !strncasecmp(spec, addr, n);
}

static const struct config_tree *tree_of(const struct config *cfg, const char *name)
{
	return notices_tree(cfg, name);
}

static int in_contacts(const struct config *cfg, const char *tree, const char *addr)
{
	const struct config_tree *t = tree_of(cfg, tree);
	size_t i;

	for (i = 0; t && i < t->contacts.nr; i++)
		if (spec_is(t->contacts.v[i], addr))
			return 1;
	return 0;
}

/* The tree's contacts and the operator: they decide drops. */
static int is_maintainer(const struct mailcmd_job *j, const struct flag *f)
{
	const char *from = j->mail->from_addr;

	return in_contacts(j->m->cfg, f->tree, from) || spec_is(j->m->cfg->notify.operator, from);
}

/* Anyone the flag's report was addressed to: the authors, both trees' contacts. */
static int is_addressee(const struct mailcmd_job *j, const struct flag *f)
{
	const char *from = j->mail->from_addr;

	return is_maintainer(j, f) ||
	       (f->author.email && !strcasecmp(f->author.email, from)) ||
	       (f->partner_author.email && !strcasecmp(f->partner_author.email, from)) ||
	       (f->partner_tree && in_contacts(j->m->cfg, f->partner_tree, from));
}

/* nextbot's own addresses: notify.from, and the inbox login when it is an address. */
static int is_own(const struct config *cfg, const char *addr)
{
	return spec_is(cfg->notify.from, addr) ||
	       (cfg->inbox.user && strchr(cfg->inbox.user, '@') && spec_is(cfg->inbox.user, addr));
}

/* Why a mail is not for nextbot at all, or NULL.  Such mails are never answered. */
static const char *not_for_us(const struct mailcmd_job *j)
{
	const struct inbox_mail *mail = j->mail;
	const char *from = mail->from_addr;

	if (mail->auto_submitted && strcmp(mail->auto_submitted, "no"))
		return "auto-submitted";
	if (mail->autoreply)
		return "an automatic reply";
	if ((mail->return_path && !*mail->return_path) || mail->is_report ||
	    (from && !strncasecmp(from, "mailer-daemon@", 14)))
		return "a bounce";
	if (!from)
		return "no usable From: address";
	if (is_own(j->m->cfg, from))
		return "nextbot's own mail";
	return NULL;
}

/* The mail of nextbot's this one answers: In-Reply-To, else the nearest References. */
static const struct sent_mail *answered(const struct state *st, const struct inbox_mail *mail)
{
	const struct sent_mail *s = state_sent_find(st, mail->in_reply_to);
	size_t i;

	for (i = mail->references.nr; !s && i > 0; i--)
		s = state_sent_find(st, mail->references.v[i - 1]);
	return s;
}

/* A direct answer to one of nextbot's replies: acted on, never answered (no loops). */
static int answers_a_reply(const struct state *st, const struct inbox_mail *mail)
{
	const char *parent = mail->in_reply_to;
	const struct sent_mail *s;

	if (!parent && mail->references.nr)
		parent = mail->references.v[mail->references.nr - 1];
	s = state_sent_find(st, parent);
	return s && s->kind && !strcmp(s->kind, "reply");
}

/* ---- commands ---- */

static const char *subj(const struct flag *f)
{
	return f->subject ? f->subject : "(no subject)";
}

/* A refusal line for the sender; `help` adds the list of commands to the reply. */
__attribute__((format(printf, 3, 4))) static void refuse(struct mailcmd_job *j, const char *cmd,
							  const char *fmt, ...)
{
	va_list ap;

	struct strbuf sb = STRBUF_INIT;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	strbuf_addf(&j->refusal, "> #nextbot %s\n\n", j->line ? j->line : cmd);
	bot_wrap(&j->refusal, sb.buf, "");
	strbuf_release(&sb);
	strbuf_addf(&j->summary, "%s%.*s: refused", j->summary.len ? "; " : "",
		    (int)strcspn(cmd, " \t:"), cmd);
	j->refused = 1;
}

/* Notes what was done to `id` (a flag id, or a patch's commit) for the record. */
static void acted(struct mailcmd_job *j, const char *id, const char *flag_id, const char *what)
{
	strbuf_addf(&j->summary, "%s%s %.12s", j->summary.len ? "; " : "", what, id ? id : "?");
	j->acted = 1;
	if (!j->ack_flag)
		j->ack_flag = flag_id;
}

#define MAINTAINERS "the tree's maintainers (its contacts) and the operator"

static void not_allowed(struct mailcmd_job *j, const char *cmd, const struct flag *f,
			const char *who)
{
	refuse(j, cmd,
	       "Refused: only %s may do that for flag %s (\"%s\" in the %s tree); %s is not "
	       "among them.",
	       who, f->id, subj(f), f->tree ? f->tree : "?", j->mail->from_addr);
}

/* What a command acts on: a flag; for drop a patch no flag names, for undrop a drop. */
struct target {
	struct flag *flag;
	const struct lookup_patch *patch; /* in `pool` */
	struct drop *drop;
	struct lookup_patches pool;
};

/* The drop of a patch (the flag's or t->patch), as `nextbot drop` does. */
static void drop_cmd(struct mailcmd_job *j, struct target *t, const char *args)
{
	const char *reason = *args ? args : NULL, *by = j->mail->from_addr;
	const char *tree = t->flag ? t->flag->tree : t->patch->tree;
	const char *subject = t->flag ? subj(t->flag) : t->patch->subject;
	const char *id = t->flag ? t->flag->id : t->patch->commit.hex;
	const char *why = reason ? reason : "of a mail from its maintainer";
	struct drop *d;
	int ret;

	if (t->flag && !is_maintainer(j, t->flag)) {
		not_allowed(j, "drop", t->flag, MAINTAINERS);
		return;
	}
	if (!t->flag && !in_contacts(j->m->cfg, tree, by) &&
	    !spec_is(j->m->cfg->notify.operator, by)) {
		refuse(j, "drop", "Refused: only %s may drop %.12s (\"%s\" in the %s tree); %s is "
				  "not among them.", MAINTAINERS, id, subject, tree, by);
		return;
	}
	if (t->flag && t->flag->kind == FLAG_FLAKY) {
		refuse(j, "drop", "Flag %s is a flaky failure: it names no patch to drop.", id);
		return;
	}
	ret = t->flag ? maint_drop_flag(j->m, t->flag, why, by, j->mail->key, &d)
		      : maint_drop_patch(j->m, t->patch, why, by, j->mail->key, &d);
	if (ret < 0) {
		log_warn("mail: drop of %s: %s", id, nb_error_last());
		refuse(j, "drop", "nextbot could not record the drop of \"%s\"; it will try "
				  "again with the next delivery of this mail.", subject);
		j->refused = -1;
		return;
	}
	if (ret == 1) {
		para(&j->ack,
		     "\"%s\" was already dropped from what nextbot merges of the %s tree (%s%s%s); "
		     "it stays out until `#nextbot undrop`.",
		     subject, tree, d->when ? d->when : "", d->by ? " by " : "",
		     d->by ? d->by : "");
		acted(j, id, t->flag ? t->flag->id : NULL, "drop (already dropped)");
		return;
	}
	if (t->flag)
		state_flag_mail_add(t->flag, "drop", by, j->mail->key, j->when, reason);
	para(&j->ack,
	     "Dropped \"%s\" from what nextbot merges of the %s tree; it stays out, also after a "
	     "rebase, until `#nextbot undrop`.",
	     subject, tree);
	if (j->m->cfg->drop_push) {
		if (maint_drop_push(j->m, d) == EXIT_DONE)
			para(&j->ack, "The %s tree's branch was pushed without it.", tree);
		else
			para(&j->ack, "Pushing the %s tree's branch without it failed: the drop "
				      "holds for next all the same.", tree);
	}
	acted(j, id, t->flag ? t->flag->id : NULL, "drop");
}

/* Takes back the drop of the flag's patch, or t->drop. */
static void undrop_cmd(struct mailcmd_job *j, struct target *t, const char *args)
{
	struct flag *f = t->flag;
	const char *by = j->mail->from_addr;
	struct drop *d = t->drop;

	if (f && !is_maintainer(j, f)) {
		not_allowed(j, "undrop", f, MAINTAINERS);
		return;
	}
	if (!f && !in_contacts(j->m->cfg, d->tree, by) &&
	    !spec_is(j->m->cfg->notify.operator, by)) {
		refuse(j, "undrop", "Refused: only %s may take back the drop of %.12s (\"%s\" in "
				    "the %s tree); %s is not among them.", MAINTAINERS,
		       d->commit ? d->commit : "?", d->subject ? d->subject : "",
		       d->tree ? d->tree : "?", by);
		return;
	}
	if (f && !(d = maint_drop_of_flag(j->m, f))) {
		refuse(j, "undrop", "\"%s\" (flag %s) is not dropped.", subj(f), f->id);
		return;
	}
	maint_undrop(j->m, d);
	if (f)
		state_flag_mail_add(f, "undrop", by, j->mail->key, j->when, NULL);
	para(&j->ack,
	     "Took back the drop of \"%s\": it is merged again with the %s tree from the next "
	     "night on.",
	     f ? subj(f) : d->subject ? d->subject : "?", d->tree ? d->tree : "?");
	acted(j, f ? f->id : d->commit, f ? f->id : NULL, "undrop");
}

static void invalid_cmd(struct mailcmd_job *j, struct target *tg, const char *args)
{
	struct flag *f = tg->flag;

	if (!is_maintainer(j, f)) {
		not_allowed(j, "invalid", f, MAINTAINERS);
		return;
	}
	if (!*args) {
		refuse(j, "invalid", "Say why: `#nextbot invalid <reason>`.");
		return;
	}
	if (f->state == FLAG_DISMISSED) {
		refuse(j, "invalid", "Flag %s (\"%s\") is already marked invalid: %s", f->id,
		       subj(f), f->reason ? f->reason : "");
		return;
	}
	maint_dismiss(f, args);
	state_flag_mail_add(f, "invalid", j->mail->from_addr, j->mail->key, j->when, args);
	para(&j->ack,
		    "Marked flag %s (\"%s\") invalid: %s.  nextbot will not blame this failure "
		    "again; `#nextbot reopen` takes that back.",
		    f->id, subj(f), args);
	acted(j, f->id, f->id, "invalid");
}

static void reopen_cmd(struct mailcmd_job *j, struct target *tg, const char *args)
{
	struct flag *f = tg->flag;

	if (f->state == FLAG_DISMISSED) {
		if (!is_maintainer(j, f)) {
			not_allowed(j, "reopen", f, MAINTAINERS);
			return;
		}
		f->state = FLAG_OPEN;
		free(f->reason);
		f->reason = NULL;
		para(&j->ack, "Flag %s (\"%s\") is open again: nextbot blames this "
				     "failure again when it comes back.",
			    f->id, subj(f));
	} else if (f->fix_subject && !f->fix_commit) {
		if (!is_addressee(j, f)) {
			not_allowed(j, "reopen", f, "the people the report went to");
			return;
		}
		para(&j->ack, "nextbot no longer waits for \"%s\" to resolve flag %s.",
			    f->fix_subject, f->id);
		free(f->fix_subject);
		free(f->fix_by);
		free(f->fix_date);
		f->fix_subject = f->fix_by = f->fix_date = NULL;
	} else {
		refuse(j, "reopen", "Flag %s (\"%s\") is neither invalid nor waiting for a fix.",
		       f->id, subj(f));
		return;
	}
	state_flag_mail_add(f, "reopen", j->mail->from_addr, j->mail->key, j->when, NULL);
	acted(j, f->id, f->id, "reopen");
}

/* The subject of `fix:`, without quotes a mail client or a person put around it. */
static void fix_subject(struct strbuf *out, const char *args)
{
	size_t n = strlen(args);

	if (n >= 2 && ((args[0] == '"' && args[n - 1] == '"') ||
		       (args[0] == '`' && args[n - 1] == '`') ||
		       (args[0] == '\'' && args[n - 1] == '\''))) {
		args++;
		n -= 2;
	}
	strbuf_add(out, args, n);
	strbuf_trim(out);
}

static void fix_cmd(struct mailcmd_job *j, struct target *tg, const char *args)
{
	struct flag *f = tg->flag;
	struct strbuf s = STRBUF_INIT;
	const struct config_tree *t = tree_of(j->m->cfg, f->tree);

	if (!is_addressee(j, f)) {
		not_allowed(j, "fix:", f, "the people the report went to");
		goto done;
	}
	fix_subject(&s, args);
	if (!s.len) {
		refuse(j, "fix:", "Name the fix by its subject: `#nextbot fix: <commit subject>`.");
		goto done;
	}
	if (f->state != FLAG_OPEN) {
		refuse(j, "fix:", "Flag %s (\"%s\") is %s: there is nothing to fix.", f->id,
		       subj(f), flag_state_name(f->state) ? flag_state_name(f->state) : "closed");
		goto done;
	}
	free(f->fix_subject);
	free(f->fix_by);
	free(f->fix_date);
	free(f->fix_commit);
	f->fix_subject = xstrdup(s.buf);
	f->fix_by = xstrdup(j->mail->from_addr);
	f->fix_date = xstrdup(j->today);
	f->fix_commit = NULL;
	state_flag_mail_add(f, "fix", j->mail->from_addr, j->mail->key, j->when, s.buf);
	para(&j->ack,
		    "Noted: flag %s (\"%s\") is resolved once a commit titled \"%s\" reaches "
		    "the %s tree's %s branch.",
		    f->id, subj(f), s.buf, f->tree, t ? t->branch : "own");
	acted(j, f->id, f->id, "fix");
done:
	strbuf_release(&s);
}

/* The other recipients of the mail (not nextbot, not the sender), at most CC_MAX. */
static void others(struct strvec *out, const struct mailcmd_job *j)
{
	const struct inbox_mail *mail = j->mail;
	size_t i;

	for (i = 0; i < mail->recipients.nr && out->nr < CC_MAX; i++) {
		const char *a = mail->recipients.v[i];

		if (!is_own(j->m->cfg, a) && strcasecmp(a, mail->from_addr))
			strvec_push(out, a);
	}
}

static void test_cmd(struct mailcmd_job *j, struct target *tg, const char *args)
{
	struct flag *f = tg->flag;
	const struct config *cfg = j->m->cfg;
	const char *from = j->mail->from_addr;
	struct strbuf why = STRBUF_INIT;
	struct test_request *t;
	char *url = NULL, *branch = NULL;
	size_t n = strcspn(args, " \t"), i, today = 0;

	if (cfg->inbox.max_tests <= 0) {
		refuse(j, "test:", "Testing a branch by mail is not enabled here "
				   "(inbox.max_tests is 0).");
		goto done;
	}
	url = xstrndup(args, n);
	args += n;
	args += strspn(args, " \t");
	branch = xstrndup(args, strcspn(args, " \t"));
	if (!*url || !*branch || args[strlen(branch)]) {
		refuse(j, "test:", "Name the branch to test: `#nextbot test: <git url> <branch>`.");
		goto done;
	}
	if (!is_maintainer(j, f) && !(f->author.email && !strcasecmp(f->author.email, from)) &&
	    !(f->partner_author.email && !strcasecmp(f->partner_author.email, from))) {
		not_allowed(j, "test:", f, "the patch's author, the tree's maintainers and the "
					   "operator");
		goto done;
	}
	if (f->kind == FLAG_FLAKY || !f->repro_base || !f->command) {
		refuse(j, "test:", "Flag %s names no culprit and no night to test a fix against.",
		       f->id);
		goto done;
	}
	if (!mailtest_branch_ok(branch)) {
		refuse(j, "test:", "\"%s\" is not a branch name.", branch);
		goto done;
	}
	if (mailtest_url_check(cfg, url, &why) < 0) {
		refuse(j, "test:", "Refused: %s.", why.buf);
		goto done;
	}
	for (i = 0; i < j->m->st.tests_nr; i++) {
		const struct test_request *q = &j->m->st.tests[i];

		if (q->state == TEST_QUEUED && q->flag_id && !strcmp(q->flag_id, f->id) &&
		    q->by && !strcasecmp(q->by, from)) {
			refuse(j, "test:", "Your test of %s %s for flag %s is still queued: one at "
					   "a time.",
			       q->url, q->branch, f->id);
			goto done;
		}
		today += q->when && !strncmp(q->when, j->today, 10);
	}
	if (today >= (size_t)cfg->inbox.max_tests) {
		refuse(j, "test:", "nextbot has taken its %d tests for today (inbox.max_tests); "
				   "ask again tomorrow.",
		       cfg->inbox.max_tests);
		goto done;
	}
	t = state_test_add(&j->m->st);
	t->key = xstrdup(j->mail->key);
	t->flag_id = xstrdup(f->id);
	t->by = xstrdup(from);
	t->url = xstrdup(url);
	t->branch = xstrdup(branch);
	t->when = xstrdup(j->when);
	t->state = TEST_QUEUED;
	if (!j->silent) { /* the answer goes where the mail came from, like any reply */
		t->reply_name = j->mail->from_name ? xstrdup(j->mail->from_name) : NULL;
		t->reply_subject = xstrdup(j->mail->subject);
		t->reply_message_id = j->mail->message_id ? xstrdup(j->mail->message_id) : NULL;
		others(&t->reply_cc, j);
		for (i = 0; i < j->mail->references.nr; i++)
			strvec_push(&t->reply_references, j->mail->references.v[i]);
	}
	state_flag_mail_add(f, "test", from, j->mail->key, j->when, NULL);
	free(f->mail[f->mail_nr - 1].text);
	f->mail[f->mail_nr - 1].text = xstrfmt("%s %s", url, branch);
	para(&j->ack,
	     "Queued a test of %s from %s for flag %s (\"%s\"): nextbot merges it in place of "
	     "the %s tree into next as it stood before that tree's merge, runs %s, and answers "
	     "in this thread.",
	     branch, url, f->id, subj(f), f->tree, f->command);
	acted(j, f->id, f->id, "test");
done:
	free(url);
	free(branch);
	strbuf_release(&why);
}

struct verb {
	const char *name;
	void (*fn)(struct mailcmd_job *j, struct target *t, const char *args);
	int by_patch; /* may name a patch (drop) or a drop (undrop) that no flag names */
	int colon;    /* written with a colon before its text: "fix: <url>", "test: …" */
};

static const struct verb verbs[] = {
	{ "drop", drop_cmd, 1, 0 },     { "undrop", undrop_cmd, 1, 0 },
	{ "invalid", invalid_cmd, 0, 0 }, { "reopen", reopen_cmd, 0, 0 },
	{ "fix", fix_cmd, 0, 1 },	  { "test", test_cmd, 0, 1 },
};
#define VERBS_NR (sizeof(verbs) / sizeof(*verbs))

/* The verb spelt `name` exactly (a name mailcmd_suggest() returned); NULL if none. */
static const struct verb *verb_named(const char *name)
{
	size_t i;

	for (i = 0; name && i < VERBS_NR; i++)
		if (!strcmp(name, verbs[i].name))
			return &verbs[i];
	return NULL;
}

/* ---- what a command names ---- */

int mailcmd_id_like(const char *s, size_t n)
{
	size_t i;

	if (n >= 3 && s[0] == '<' && s[n - 1] == '>')
		return memchr(s + 1, '@', n - 2) != NULL;
	if (n < 7 || n > NB_OID_HEXSZ)
		return 0;
	for (i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return 0;
	return 1;
}

/* Does `id` name flag f: a prefix of its id, commit or patch-id, or its patch's <Message-ID>? */
static int names_flag(const struct flag *f, const char *id)
{
	size_t n = strlen(id);

	if (*id == '<') /* stored with or without the brackets */
		return f->message_id && (!strcmp(f->message_id, id) ||
					 (strlen(f->message_id) == n - 2 &&
					  !strncmp(f->message_id, id + 1, n - 2)));
	return (f->id && !strncasecmp(f->id, id, n)) ||
	       (f->commit && !strncasecmp(f->commit, id, n)) ||
	       (!nb_patchid_is_none(&f->patch_id) &&
		!strncasecmp(NB_PATCHID_HEX(&f->patch_id), id, n));
}

static int same_patch(const struct flag *a, const struct flag *b)
{
	return nb_patchid_eq(&a->patch_id, &b->patch_id) ||
	       (a->commit && b->commit && !strcmp(a->commit, b->commit));
}

/*
 * The flags `id` names into t->flag: one, or for drop and undrop several of the same
 * patch (the first open one stands for them).  `listed` gets their ids when they are
 * several flags that a command about one flag cannot choose between.  Nextbot's own
 * mails name their flag by Message-ID too.
 */
static void find_flags(struct target *t, struct strbuf *listed, struct state *st,
		       const char *id, int by_patch)
{
	const struct sent_mail *sent = *id == '<' ? state_sent_find(st, id) : NULL;
	struct flag *first = NULL, *chosen = NULL;
	size_t i, nr = 0;
	int several = 0;

	for (i = 0; i < st->flags_nr; i++) {
		struct flag *f = &st->flags[i];

		if (!names_flag(f, id) && !(sent && sent->flag_id && f->id &&
					    !strcmp(sent->flag_id, f->id)))
			continue;
		if (nr++ < 5)
			strbuf_addf(listed, "%s%s", listed->len ? ", " : "", f->id);
		if (!first)
			first = chosen = f;
		else if (!by_patch || !same_patch(first, f))
			several = 1;
		else if (chosen->state != FLAG_OPEN && f->state == FLAG_OPEN)
			chosen = f;
	}
	if (several) {
		strbuf_addstr(listed, nr > 5 ? ", ..." : "");
		return;
	}
	t->flag = chosen;
	strbuf_reset(listed);
}

/*
 * What the id-like word `id` names for verb v, into t.  Returns 0, or -1 when it names
 * nothing (or too much) that v could act on: then the sender is told and nothing is done.
 */
static int resolve(struct mailcmd_job *j, const struct verb *v, const char *id, struct target *t)
{
	struct strbuf listed = STRBUF_INIT;
	long idx;
	int ambiguous, ret = 0;

	find_flags(t, &listed, &j->m->st, id, v->by_patch);
	if (t->flag)
		goto done;
	if (listed.len) {
		refuse(j, v->name, "Nothing was done: %s names more than one flag (%s); give the "
				   "flag id.", id, listed.buf);
		ret = -1;
		goto done;
	}
	if (!strcmp(v->name, "undrop")) {
		t->drop = maint_drop_find(j->m, id, &ambiguous);
		if (!t->drop && *id == '<') {
			char *bare = xstrndup(id + 1, strlen(id) - 2);

			t->drop = maint_drop_find(j->m, bare, &ambiguous);
			free(bare);
		}
		if (t->drop)
			goto done;
	} else if (v->by_patch) {
		if (maint_patch_find(&t->pool, &idx, j->m, id) == 0) {
			t->patch = &t->pool.items[idx];
			goto done;
		}
		log_info("mail: %s %s: %s", v->name, id, nb_error_last());
	}
	refuse(j, v->name, "Nothing was done: %s names no flag%s, commit, patch-id or "
			   "Message-ID that nextbot knows of.%s", id,
	       !strcmp(v->name, "undrop") ? ", drop" : "",
	       !strcmp(v->name, "fix") ? "  (A fix's subject that starts with such a word goes "
					 "in quotes: `#nextbot fix: \"<subject>\"`.)" : "");
	ret = -1;
done:
	strbuf_release(&listed);
	return ret;
}

/* Is `id` a Message-ID of nextbot's own ("<nextbot.…@" notify.from's domain ">")? */
static int own_msgid(const struct config *cfg, const char *id)
{
	const char *from = cfg->notify.from, *at = from ? strrchr(from, '@') : NULL;
	size_t n = at ? strcspn(at + 1, "> ") : 0, len = id ? strlen(id) : 0;

	return n && len > 10 + n && !strncmp(id, "<nextbot.", 9) && id[len - n - 2] == '@' &&
	       !strncasecmp(id + len - n - 1, at + 1, n) && id[len - 1] == '>';
}

/*
 * The posting of the patch a mail of nextbot's answered ([held], [dropped], a journey
 * notice: each threads under the patch's own mail), the nearest reference before
 * nextbot's in the mail's thread; NULL when the mail answers no such mail of nextbot's.
 */
static const char *thread_patch(const struct mailcmd_job *j)
{
	const struct strvec *refs = &j->mail->references;
	size_t i;

	for (i = refs->nr; i > 0; i--) {
		if (!own_msgid(j->m->cfg, refs->v[i - 1]))
			continue;
		while (i > 1 && own_msgid(j->m->cfg, refs->v[i - 2]))
			i--;
		return i > 1 ? refs->v[i - 2] : NULL;
	}
	return NULL;
}

/* ---- which command ---- */

#define WORD_MAX 24 /* command words compared for a suggestion, at most */

/* Levenshtein distance with adjacent swaps ("dorp" is one from "drop") of short words. */
static size_t distance(const char *a, const char *b)
{
	size_t d[WORD_MAX + 1][WORD_MAX + 1], la = strlen(a), lb = strlen(b), i, k;

	for (i = 0; i <= la; i++)
		d[i][0] = i;
	for (k = 0; k <= lb; k++)
		d[0][k] = k;
	for (i = 1; i <= la; i++) {
		for (k = 1; k <= lb; k++) {
			size_t best = d[i - 1][k - 1] + (a[i - 1] != b[k - 1]);

			if (d[i - 1][k] + 1 < best)
				best = d[i - 1][k] + 1;
			if (d[i][k - 1] + 1 < best)
				best = d[i][k - 1] + 1;
			if (i > 1 && k > 1 && a[i - 1] == b[k - 2] && a[i - 2] == b[k - 1] &&
			    d[i - 2][k - 2] + 1 < best)
				best = d[i - 2][k - 2] + 1;
			d[i][k] = best;
		}
	}
	return d[la][lb];
}

const char *mailcmd_suggest(const char *word)
{
	static const char *const aliases[][2] = { { "dismiss", "invalid" },
						   { "fixed", "fix" } };
	char low[WORD_MAX + 1];
	const char *best = NULL;
	size_t n = strlen(word), i, least, d;

	if (!n || n > WORD_MAX)
		return NULL;
	for (i = 0; i <= n; i++)
		low[i] = (char)tolower((unsigned char)word[i]);
	for (i = 0; i < sizeof(aliases) / sizeof(*aliases); i++)
		if (!strcmp(low, aliases[i][0]))
			return aliases[i][1];
	least = n <= 4 ? 1 : 2; /* farther than that is another word, not a slip */
	for (i = 0; i < VERBS_NR; i++) {
		d = distance(low, verbs[i].name);
		if (d <= least && d < strlen(verbs[i].name) && (!best || d < least)) {
			best = verbs[i].name;
			least = d;
		}
	}
	return best;
}

/* The reply to a command word nextbot does not know: a suggestion when it is a slip. */
static void unknown(struct mailcmd_job *j, const char *word)
{
	const char *hint = mailcmd_suggest(word);
	const struct verb *v = verb_named(hint);

	if (!*word)
		refuse(j, "?", "Nothing was done: a `#nextbot` line needs a command after it.");
	else if (hint)
		refuse(j, word, "Nothing was done: nextbot does not know the command \"%.*s\"; did "
				"you mean `#nextbot %s%s`?", WORD_MAX, word, hint,
		       v && v->colon ? ":" : "");
	else
		refuse(j, word, "Nothing was done: nextbot does not know the command \"%.*s\".",
		       WORD_MAX, word);
}

static void run_command_line(struct mailcmd_job *j, const char *line)
{
	const char *cmd = line + strspn(line, ": \t"); /* "#nextbot : drop" */
	size_t n = strcspn(cmd, " \t:"), i;
	const char *args = cmd + n;
	char *word = xstrndup(cmd, n), *id = NULL;
	struct target t = { .pool = LOOKUP_PATCHES_INIT };

	j->line = line;
	if (*args == ':')
		args++;
	args += strspn(args, " \t");
	for (i = 0; i < VERBS_NR; i++)
		if (!strcasecmp(word, verbs[i].name))
			break;
	if (i == VERBS_NR) {
		unknown(j, word);
		goto done;
	}
	/* an id-like first word names what the command is about; else the thread does */
	n = strcspn(args, " \t");
	if (mailcmd_id_like(args, n)) {
		id = xstrndup(args, n);
		if (resolve(j, &verbs[i], id, &t) < 0)
			goto done;
		args += n;
		args += strspn(args, " \t");
	} else if (j->thread && j->thread->flag_id) {
		int ambiguous;

		t.flag = state_flag_find(&j->m->st, j->thread->flag_id, &ambiguous);
	} else if (thread_patch(j)) { /* about one patch: the one the thread is about */
		if (resolve(j, &verbs[i], thread_patch(j), &t) < 0)
			goto done;
	}
	if (!t.flag && !t.patch && !t.drop) {
		refuse(j, line,
		       j->thread && j->thread->conflict
			       ? "This mail answers a merge conflict mail; commands are about "
				 "flags.  Name one after the command word."
			       : "This mail does not answer one of nextbot's mails about a flag, "
				 "and no flag id follows the command word.");
		goto done;
	}
	verbs[i].fn(j, &t, args);
done:
	lookup_patches_release(&t.pool);
	free(word);
	free(id);
}

/* ---- answers and the record ---- */

static int reply(struct mailcmd_job *j, const char *role, const struct strbuf *text, int to_all)
{
	const struct inbox_mail *mail = j->mail;
	struct notice_reply r = { 0 };
	struct notices n;
	struct strvec cc = STRVEC_INIT;
	int ret;

	if (to_all)
		others(&cc, j);
	r.key = mail->key;
	r.role = role;
	r.to.name = mail->from_name;
	r.to.email = mail->from_addr;
	r.cc = (const char *const *)cc.v;
	r.cc_nr = cc.nr;
	r.subject = mail->subject;
	r.message_id = mail->message_id;
	r.references = (const char *const *)mail->references.v;
	r.references_nr = mail->references.nr;
	r.text = text->buf;
	r.flag_id = j->ack_flag;
	notices_init(&n, j->m->cfg);
	n.st = &j->m->st;
	ret = notices_reply(&n, &r, j->ack_flag);
	notices_release(&n);
	strvec_clear(&cc);
	return ret;
}

/* Has `from` been sent REFUSALS_MAX refusals in the last day? */
static int refused_enough(const struct state *st, const char *from)
{
	char cutoff[32];
	size_t i;
	int n = 0;

	bot_rfc3339(cutoff, sizeof(cutoff), time(NULL) - 86400);
	for (i = st->inbox_nr; i > 0 && n < REFUSALS_MAX; i--) {
		const struct inbox_record *r = &st->inbox[i - 1];

		if (r->when && strcmp(r->when, cutoff) < 0)
			break;
		n += r->outcome == MAIL_REFUSED && r->from && !strcasecmp(r->from, from) &&
		     !(r->summary && strstr(r->summary, "not vouched for"));
	}
	return n >= REFUSALS_MAX;
}

static void record(struct mailcmd_job *j, enum mailcmd_outcome o, const char *why)
{
	struct inbox_record *r;
	struct strbuf content = STRBUF_INIT;

	if (why) {
		strbuf_reset(&j->summary);
		strbuf_addstr(&j->summary, why);
	}
	r = state_inbox_add(&j->m->st, j->mail->key, j->mail->from_addr, j->when,
			    o == MAILCMD_ACTED ? MAIL_ACTED : o == MAILCMD_REFUSED ? MAIL_REFUSED
										 : MAIL_IGNORED,
			    j->summary.buf);
	if (o == MAILCMD_ACTED) { /* what it said: a resent copy never acts again */
		inbox_mail_content_key(&content, j->mail);
		r->content = strbuf_detach(&content, NULL);
	}
}

/* The record of the same sender's same text, acted on before under another Message-ID. */
static const struct inbox_record *acted_before(const struct mailcmd_job *j)
{
	struct strbuf content = STRBUF_INIT;
	const struct inbox_record *r;

	inbox_mail_content_key(&content, j->mail);
	r = state_inbox_acted(&j->m->st, content.buf);
	strbuf_release(&content);
	return r;
}

/*
 * The review trailers of the sender's own text in their own name (review_gate.verify:
 * mail), kept with the thread the mail answers; the summary says so.  Only from a
 * mail the inbox's rules vouch for, as commands.  Returns how many were kept.
 */
static size_t keep_reviews(struct mailcmd_job *j)
{
	const struct inbox_mail *mail = j->mail;
	struct strvec keys = STRVEC_INIT, addrs = STRVEC_INIT, thread = STRVEC_INIT;
	const char *authserv = j->m->cfg->inbox.authserv_id;
	size_t i, kept = 0;

	inbox_mail_trailers(&keys, &addrs, mail->body);
	if (mail->in_reply_to)
		strvec_push(&thread, mail->in_reply_to);
	for (i = 0; i < mail->references.nr; i++)
		strvec_push(&thread, mail->references.v[i]);
	if (!keys.nr || !thread.nr ||
	    (authserv && inbox_mail_auth(mail, authserv, NULL) != INBOX_AUTH_PASS))
		goto done;
	for (i = 0; i < keys.nr; i++) {
		if (strcasecmp(addrs.v[i], mail->from_addr))
			continue; /* another's trailer, quoted or forwarded: not the sender's */
		state_review_add(&j->m->st, mail->from_addr, keys.v[i], mail->key, j->when,
				 &thread);
		strbuf_addf(&j->summary, "%s%s: %s seen in the thread of %s",
			    j->summary.len ? "; " : "", keys.v[i], mail->from_addr, thread.v[0]);
		kept++;
	}
done:
	strvec_clear(&keys);
	strvec_clear(&addrs);
	strvec_clear(&thread);
	return kept;
}

int mailcmd_handle(enum mailcmd_outcome *out, struct maint *m, const char *raw, size_t len,
		   struct strbuf *summary)
{
	struct inbox_mail mail = INBOX_MAIL_INIT;
	struct strvec cmds = STRVEC_INIT;
	struct strbuf why = STRBUF_INIT;
	struct mailcmd_job j = {m,    &mail, NULL, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, NULL,
				NULL, 0,     0,	   0,		"",	     ""};
	const struct inbox_record *before;
	const char *reason;
	size_t n, i;
	int ret = 0, silent;

	bot_rfc3339(j.when, sizeof(j.when), time(NULL));
	bot_today(j.today, sizeof(j.today));
	if (inbox_mail_parse(&mail, raw, len) < 0) {
		*out = MAILCMD_UNPARSEABLE;
		strbuf_addstr(&j.summary, nb_error_last());
		goto done;
	}
	if (state_inbox_find(&m->st, mail.key)) {
		*out = MAILCMD_DUPLICATE;
		strbuf_addstr(&j.summary, "handled before");
		goto done;
	}
	if ((reason = not_for_us(&j))) {
		*out = MAILCMD_IGNORED;
		record(&j, *out, reason);
		goto done;
	}
	n = inbox_mail_commands(&cmds, mail.body, COMMANDS_MAX);
	if (keep_reviews(&j) && !n) {
		*out = MAILCMD_IGNORED;
		record(&j, *out, NULL);
		goto done;
	}
	if (!n) {
		*out = MAILCMD_IGNORED;
		record(&j, *out, "no #nextbot command");
		goto done;
	}
	if (m->cfg->inbox.authserv_id &&
	    inbox_mail_auth(&mail, m->cfg->inbox.authserv_id, &why) != INBOX_AUTH_PASS) {
		/* never answered: the answer would go to whoever was impersonated */
		*out = MAILCMD_REFUSED;
		strbuf_addf(&j.summary, "From: not vouched for by %s: %s",
			    m->cfg->inbox.authserv_id, why.buf);
		record(&j, *out, NULL);
		goto done;
	}
	if ((before = acted_before(&j))) {
		/* a replay: the signature still holds, the Message-ID is new (issue 38) */
		*out = MAILCMD_IGNORED; /* recorded: its own Message-ID is handled */
		strbuf_addf(&j.summary, "the same text from the same sender was acted on "
					"before (%s): not again", before->key);
		record(&j, *out, NULL);
		goto done;
	}
	j.thread = answered(&m->st, &mail);
	silent = j.silent = answers_a_reply(&m->st, &mail);
	for (i = 0; i < cmds.nr; i++)
		run_command_line(&j, cmds.v[i]);
	j.line = NULL;
	if (n > cmds.nr)
		refuse(&j, "...", "Only the first %d commands of a mail are read.", COMMANDS_MAX);
	if (j.refused < 0) { /* nothing may be recorded: the mail is handled again later */
		ret = nb_error_set(NB_ERROR, "cannot record a command: try again later");
		goto done;
	}
	if (!silent && j.ack.len && (ret = reply(&j, "ack", &j.ack, 1)) < 0)
		goto done;
	if (!silent && j.refusal.len && refused_enough(&m->st, mail.from_addr)) {
		strbuf_addf(&j.summary, " (not answered: %d refusals to this sender today)",
			    REFUSALS_MAX);
	} else if (!silent && j.refusal.len) {
		strbuf_addstr(&j.refusal, help_text);
		if ((ret = reply(&j, "refusal", &j.refusal, 0)) < 0)
			goto done;
	}
	*out = j.acted ? MAILCMD_ACTED : MAILCMD_REFUSED;
	if (silent)
		strbuf_addstr(&j.summary, " (an answer to a reply: not answered)");
	record(&j, *out, NULL);
done:
	if (summary)
		strbuf_addbuf(summary, &j.summary);
	if (ret >= 0)
		ret = 0;
	inbox_mail_release(&mail);
	strvec_clear(&cmds);
	strbuf_release(&why);
	strbuf_release(&j.ack);
	strbuf_release(&j.refusal);
	strbuf_release(&j.summary);
	return ret;
}
