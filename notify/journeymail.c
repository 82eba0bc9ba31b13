/* A patch's journey in mails, as mm-commits tells it: added, moved, replaced, removed, merged. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "notify/draft.h"
#include "notify/mime.h"
#include "util/error.h"
#include "util/xalloc.h"
#include "util/banned.h"

static const char *const kind_names[] = {
	[NOTICE_PATCH_ADDED] = "patch-added",
	[NOTICE_PATCH_MOVED] = "patch-moved",
	[NOTICE_PATCH_REPLACED] = "patch-replaced",
	[NOTICE_PATCH_REMOVED] = "patch-removed",
	[NOTICE_PATCH_MERGED] = "patch-merged",
	[NOTICE_REVIEW_MISSING] = "review-missing",
	[NOTICE_PATCH_HELD] = "held",
	[NOTICE_PATCH_RELEASED] = "released",
};

const char *notice_journey_kind_name(enum notice_journey_kind k)
{
	return (size_t)k < sizeof(kind_names) / sizeof(kind_names[0]) ? kind_names[k] : "?";
}

/* What happened, after "The patch titled ... ", as one sentence. */
static void event_sentence(struct draft *d, const struct notice_journey *j)
{
	const char *branch = draft_cl(d, j->branch), *tree = draft_cl(d, j->tree);

	switch (j->kind) {
	case NOTICE_PATCH_ADDED:
		draft_para(d, "has been added to the %s branch (the %s tree).", branch, tree);
		break;
	case NOTICE_PATCH_MOVED:
		draft_para(d, "has moved on from the %s branch to the %s branch (the %s tree).",
			   draft_cl(d, j->from), branch, tree);
		break;
	case NOTICE_PATCH_REPLACED:
		draft_para(d, "has been replaced by a new version in the %s branch (the %s "
			      "tree).", branch, tree);
		break;
	case NOTICE_PATCH_REMOVED:
		draft_para(d, "has been removed from the %s branch (the %s tree) without "
			      "reaching mainline: %s.", branch, tree,
			   draft_cl(d, j->reason ? j->reason : "it left the branch"));
		break;
	case NOTICE_PATCH_MERGED:
		draft_para(d, "has been merged into mainline (%s).", branch);
		break;
	case NOTICE_REVIEW_MISSING:
		draft_para(d, "has entered the %s tree, whose patches need a %s by someone "
			      "other than their author, without one.", tree,
			   draft_cl(d, j->require));
		break;
	case NOTICE_PATCH_HELD:
		draft_para(d, "is held out of next, as a dropped patch is, though it stays in "
			      "the %s tree: %s.  %s", tree,
			   draft_cl(d, j->reason ? j->reason : "it has no review"),
			   j->hold_follows ? "It goes into next on the night its review lands, "
					     "whichever tree carries it then; until then it "
					     "stays held in every tree it moves to." :
					     "It goes into next on the night its review lands, "
					     "or when it moves on to a tree without a review "
					     "gate (this gate's review_gate.follow is off).");
		break;
	case NOTICE_PATCH_RELEASED:
		draft_para(d, "is no longer held out of next: %s.  It is in next tonight (%s), "
			      "merged with the %s tree.",
			   draft_cl(d, j->reason ? j->reason : "its review has landed"),
			   draft_cl(d, j->next_tag), tree);
		break;
	}
}

static void lines(struct draft *d, const char *title, const char *const *v, size_t nr)
{
	size_t i;

	if (!nr)
		return;
	strbuf_addf(&d->body, "%s\n", title);
	for (i = 0; i < nr; i++)
		strbuf_addf(&d->body, "  %s\n", draft_cl(d, v[i]));
	strbuf_addch(&d->body, '\n');
}

/* The delta of a replacement: lost and stale reviews, range-diff, interdiff. */
static void delta(struct draft *d, const struct notice_journey *j)
{
	if (j->old_commit) {
		strbuf_addstr(&d->body, "The version it replaces:\n");
		draft_commit_line(d, j->old_commit, j->subject);
		if (j->old_message_id)
			strbuf_addf(&d->body, "  Message-ID: <%s>\n",
				    draft_cl(d, j->old_message_id));
		strbuf_addch(&d->body, '\n');
	}
	lines(d, "Reviews the old version had and this one does not:", j->lost_reviews,
	      j->lost_reviews_nr);
	lines(d, "Reviews kept over a changed diff (they may no longer apply):", j->stale_reviews,
	      j->stale_reviews_nr);
	if (j->range_diff) {
		strbuf_addstr(&d->body, "What changed, as git range-diff shows it:\n\n");
		draft_quote(d, j->range_diff);
	}
	if (j->interdiff) {
		strbuf_addstr(&d->body, "The interdiff (both versions have the same base):\n\n");
		draft_quote(d, j->interdiff);
	}
}

/* One event's text: the mm-commits paragraph, the commit, the reviews, the delta. */
static void event_text(struct draft *d, const struct notice_journey *j)
{
	strbuf_addf(&d->body, "The patch titled\n     Subject: %s\n", draft_cl(d, j->subject));
	event_sentence(d, j);
	if (j->commit) {
		strbuf_addstr(&d->body, "Its commit:\n");
		draft_commit_line(d, j->commit, j->subject);
		strbuf_addch(&d->body, '\n');
	}
	if (j->patch_link)
		draft_para(d, "The patch: %s", draft_cl(d, j->patch_link));
	if (j->kind != NOTICE_PATCH_REPLACED && j->kind != NOTICE_PATCH_REMOVED &&
	    j->kind != NOTICE_PATCH_MERGED) {
		if (j->reviews_nr)
			lines(d, "Its reviews:", j->reviews, j->reviews_nr);
		else
			draft_para(d, "It has no review yet.");
	}
	if (j->kind == NOTICE_PATCH_REPLACED)
		delta(d, j);
	if (!nb_patchid_is_none(&j->patch_id))
		draft_para(d, "Where it is, any day: nextbot patch %.12s",
			   draft_cl(d, NB_PATCHID_HEX(&j->patch_id)));
}

static void subject_of(struct strbuf *out, struct draft *d, const struct notice_journey *j)
{
	const char *subj = draft_cl(d, j->subject), *branch = draft_cl(d, j->branch);

	switch (j->kind) {
	case NOTICE_PATCH_ADDED:
		strbuf_addf(out, "+ %s added to %s", subj, branch);
		break;
	case NOTICE_PATCH_MOVED:
		strbuf_addf(out, "%s moved from %s to %s", subj, draft_cl(d, j->from), branch);
		break;
	case NOTICE_PATCH_REPLACED:
		strbuf_addf(out, "%s replaced in %s", subj, branch);
		break;
	case NOTICE_PATCH_REMOVED:
		strbuf_addf(out, "- %s removed from %s", subj, branch);
		break;
	case NOTICE_PATCH_MERGED:
		strbuf_addf(out, "%s merged into mainline", subj);
		break;
	case NOTICE_REVIEW_MISSING:
		strbuf_addf(out, "[review-missing] %s (%s)", subj, draft_cl(d, j->tree));
		break;
	case NOTICE_PATCH_HELD:
		strbuf_addf(out, "[held] %s (%s)", subj, draft_cl(d, j->tree));
		break;
	case NOTICE_PATCH_RELEASED:
		strbuf_addf(out, "[released] %s (%s)", subj, draft_cl(d, j->tree));
		break;
	}
}

static void add_people(struct draft *d, const struct notice_person *to, size_t to_nr,
		       const char *const *cc, size_t cc_nr)
{
	size_t i;

	for (i = 0; i < to_nr; i++)
		draft_add_person(d, &to[i], 0);
	draft_add_specs(d, cc, cc_nr, 1);
}

/* Why MAINTAINERS gives `email` event j ("R: in MM SUBSYSTEM"), or NULL. */
static const char *maintainers_why(const struct notice_journey *j, const char *email)
{
	size_t i, n = strlen(email);

	for (i = 0; i < j->maintainers_nr; i++) {
		const char *spec = j->maintainers[i].spec, *lt = strrchr(spec, '<');
		const char *at = lt ? lt + 1 : spec;

		if (!strncasecmp(at, email, n) && (lt ? at[n] == '>' : !at[n]))
			return j->maintainers[i].why;
	}
	return NULL;
}

static void hook_of(struct hook_event *ev, const struct notice_journey *j)
{
	memset(ev, 0, sizeof(*ev));
	ev->event = notice_journey_kind_name(j->kind);
	ev->date = j->date;
	ev->next_tag = j->next_tag;
	ev->tree = j->tree;
	ev->commit = j->commit;
	ev->subject = j->subject;
	ev->author = j->author;
	ev->patch_id = j->patch_id;
	ev->message_id = j->message_id;
	ev->reason = j->reason ? j->reason : j->from;
}

int notice_queue_journey(const struct notice_settings *s, const struct notice_journey *j)
{
	const char *kind = notice_journey_kind_name(j->kind);
	const char *parts[3] = { j->key, j->date, j->branch };
	struct draft d = DRAFT_INIT;
	struct hook_event ev;
	struct strbuf title = STRBUF_INIT, msgid = STRBUF_INIT;
	int ret;

	if ((ret = draft_check_settings(s)) < 0)
		return ret;
	d.kind = kind;
	d.parts[0] = kind;
	d.parts[1] = j->key;
	d.parts[2] = j->date;
	d.parts[3] = j->branch;
	d.parts[4] = "mail";
	if (!j->hook_only)
		add_people(&d, j->to, j->to_nr, j->cc, j->cc_nr);
	subject_of(&d.subject, &d, j);
	if (j->message_id && !mime_msgid_normalize(&msgid, j->message_id)) {
		strbuf_addbuf(&d.in_reply_to, &msgid);
		strbuf_addbuf(&d.references, &msgid);
	}
	strbuf_addstr(&d.body, "Hello,\n\n");
	event_text(&d, j);
	if (!j->hook_only)
		draft_maintainers(&d, j->maintainers, j->maintainers_nr, "the patch's files");
	strbuf_addstr(&d.body, "-- \nnextbot, the journey of your patch\n");
	hook_of(&ev, j);
	strbuf_addbuf(&title, &d.subject);
	ret = draft_queue_all(s, &d, &ev, parts, title.buf, title.buf);
	strbuf_release(&title);
	strbuf_release(&msgid);
	return ret;
}

int notice_queue_journey_digest(const struct notice_settings *s,
				const struct notice_journey_digest *dg)
{
	struct draft d = DRAFT_INIT;
	size_t i;
	int ret;

	if ((ret = draft_check_settings(s)) < 0)
		return ret;
	d.kind = "journey-digest";
	d.parts[0] = d.kind;
	d.parts[1] = dg->date;
	d.parts[2] = dg->to.email;
	d.parts[3] = "";
	d.parts[4] = "mail";
	add_people(&d, &dg->to, 1, dg->cc, dg->cc_nr);
	strbuf_addf(&d.subject, "[%s] %s: %zu event%s", draft_cl(&d, dg->next_tag),
		    dg->to_list ? "patch journeys" : "your patches", dg->events_nr,
		    dg->events_nr == 1 ? "" : "s");
	strbuf_addstr(&d.body, "Hello,\n\n");
	if (dg->to_list)
		draft_para(&d, "This is what happened tonight (%s) to the patches of the "
			       "trees this list follows, one event after another.",
			   draft_cl(&d, dg->date));
	else
		draft_para(&d, "This is what happened tonight (%s) to the patches you wrote, "
			       "signed off, reviewed, acked, tested or co-developed, or whose "
			       "files the tree's MAINTAINERS file names you for.",
			   draft_cl(&d, dg->date));
	for (i = 0; i < dg->events_nr; i++) {
		struct strbuf subject = STRBUF_INIT;
		const char *why = maintainers_why(&dg->events[i], dg->to.email);

		subject_of(&subject, &d, &dg->events[i]);
		strbuf_addf(&d.body, "%zu. [%s] %s\n\n", i + 1,
			    notice_journey_kind_name(dg->events[i].kind), subject.buf);
		strbuf_release(&subject);
		event_text(&d, &dg->events[i]);
		if (why)
			draft_para(&d, "(MAINTAINERS names you for its files: %s.)",
				   draft_cl(&d, why));
	}
	strbuf_addstr(&d.body, "-- \nnextbot, the journey of your patches\n");
	ret = draft_queue(s, &d);
	draft_release(&d);
	return ret;
}
