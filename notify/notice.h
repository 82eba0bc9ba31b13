/*
 * Notices: what the bot hands to notify/ to be mailed and posted,
 * the on-disk outbox, and its delivery.  Plain structs only: no libcurl, libcrypto or
 * json-c types leak out of notify/.
 */
#ifndef NOTIFY_NOTICE_H
#define NOTIFY_NOTICE_H

#include <stddef.h>
#include <time.h>
#include "util/strbuf.h"
#include "util/strvec.h"
#include "util/oid.h"

/*
 * Every pointer in the structs below is borrowed from the caller for the length of
 * the call; nothing is kept.  Text from commits (names, subjects, excerpts) may be
 * anything: notify/ repairs UTF-8 and strips control characters before any of it
 * reaches a header, and refuses bad addresses itself.  Optional fields are NULL.
 */

enum notice_tls {
	NOTICE_TLS_NONE = 0,
	NOTICE_TLS_STARTTLS, /* required: CURLUSESSL_ALL, no plain fallback */
	NOTICE_TLS_IMPLICIT, /* smtps:// */
};

/* What a webhook's body looks like. */
enum notice_hook_format {
	NOTICE_HOOK_JSON = 0, /* the event object (hook.h) */
	NOTICE_HOOK_SLACK,    /* incoming-webhook JSON {"text": …} that Slack, Mattermost
				 and Rocket.Chat accept: one short message with links */
};

struct notice_webhook {
	const char *url;
	const char *secret; /* the HMAC secret itself (read from env by the caller); NULL */
	enum notice_hook_format format;
};

struct notice_settings {
	const char *from;	/* "nextbot <nextbot@example.org>": From, envelope sender,
				   Reported-by, Message-ID domain */
	const char *list;	/* maintainer mails' Cc and the summary's To; NULL: none */
	const char *operator;	/* operator-only instructions (local paths, `nextbot resolve`);
				   NULL: they are only in `nextbot status` */
	const char *private_dir; /* the workdir: written as "$WORKDIR" in every mail and
				    webhook but the operator's (it says nothing to others,
				    and the host's layout is nobody else's business) */
	const char *report_url; /* Closes: url; "{id}" is replaced by the flag id */
	const char *outbox_dir; /* workdir/outbox; created on demand */
	struct {
		const char *url; /* smtp://host:port or smtps://; NULL: mails stay queued */
		enum notice_tls tls;
		const char *user; /* NULL: no AUTH */
		const char *password;
		const char *ca_file;  /* PEM CA certificates to trust; NULL: the system's */
		long connect_timeout; /* seconds; 0: 30 */
		long timeout;	      /* whole transaction, seconds; 0: 120 */
	} smtp;
	/* An inbox takes answers (config `inbox`): a flag's mails and the conflict mails
	   end with the `#nextbot` commands their readers may send; with mail_tests,
	   `#nextbot test:` among them */
	int mail_commands, mail_tests;
	const struct notice_webhook *webhooks;
	size_t webhooks_nr;
	long http_timeout;  /* seconds; 0: 30 */
	long give_up_after; /* seconds a notice may stay queued; 0: 4 days */
	long backoff_min;   /* first retry delay, seconds; 0: 300 (doubles to 6 h) */
	time_t now;	    /* 0: time(NULL); tests set it to play time forward */
	/*
	 * The night's start (0: each notice's own queue time): the notices a night
	 * queues are delivered in its story's order whenever each was queued: the
	 * journey's moves, then the review gate's, then everything else (breakage,
	 * conflicts, replies), the summary last; each group in queue order.
	 */
	time_t order_epoch;
	/* When set, each queue call appends the Message-ID ("<x@y>") of every mail it
	   queued or found already queued: bot/ keeps them to know what a reply answers */
	struct strvec *sent_ids;
	/*
	 * When set, the id of every notice a queue call made or found already queued
	 * is appended (once), so the bot can tell which notices a night sent.
	 */
	struct strvec *queued_ids;
};

struct notice_person {
	const char *name;
	const char *email;
};

enum notice_action {
	NOTICE_ACTION_NONE = 0,
	NOTICE_ACTION_REVERTED,		/* "I have reverted that commit for today." */
	NOTICE_ACTION_PREVIOUS_VERSION, /* "I have used the <tree> tree from next-… " */
	NOTICE_ACTION_DROPPED_TREE,	/* "I have dropped the <tree> tree for today." */
};

/*
 * Someone the tree's MAINTAINERS names for the files in question (bot/people/):
 * Cc'd, with the reason given in the mail.
 */
struct notice_extra {
	const char *spec; /* "Name <email>" or "list@host" */
	const char *why;  /* "R: in SLAB ALLOCATOR" */
};

/* A cell of a build matrix that a breakage fails in. */
struct notice_cell {
	const char *name;        /* "build[ARCH=arm64]" */
	const char *env;         /* "ARCH=arm64" ("K=v K2=v2"): a shell prefix as it is */
	const char *first_error;
};

/* A breakage (a flag): build-failure, test-failure or flaky. */
struct notice_breakage {
	const char *kind;     /* "build-failure" | "test-failure" | "flaky" */
	const char *flag_id;  /* 12 hex; with `reminder`, what makes the notice ids */
	int reminder;	      /* 0: first notices; N: the N-th reminder */
	int back;	      /* 1: it was resolved and is found again tonight (a reminder) */
	const char *first_tag; /* reminders: the next tag of the first notices; NULL */
	const char *date;     /* YYYY-MM-DD of the night */
	const char *next_tag; /* next-YYYYMMDD */
	const char *tree;
	const char *const *contacts; /* the tree's contacts, "Name <email>" or "email" */
	size_t contacts_nr;
	const char *tree_url, *tree_branch;
	const char *tree_head; /* the tree's tip that night (40 hex); NULL */
	const char *commit;    /* the tree's own id of the culprit (40 hex, or 12) */
	const char *commit_date; /* its author date, "YYYY-MM-DD HH:MM:SS +0000"; NULL */
	const char *subject;
	struct notice_person author;
	struct nb_patchid patch_id; /* none: a binary or merge change */
	const char *message_id; /* the patch's Message-ID (with or without <>): threading */
	/*
	 * The flag's mails started again for another submission of the same patch (its
	 * Message-ID, else its author's address): the threads and notice ids are that
	 * submission's own.  NULL: the flag's first submission.
	 */
	const char *thread;
	const char *patch_link; /* the patch on the list archive (its Link: trailer); NULL */
	/* A rebased-away culprit: the tree's current commit of the same patch. */
	struct {
		int rebased;	    /* 1: `commit` is no longer on the tree's branch */
		const char *commit; /* the same patch (patch-id) there now; NULL: gone */
	} now;
	struct {
		const char *tree; /* NULL: no partner */
		const char *commit, *subject;
		struct notice_person author;
		const char *const *contacts; /* the partner tree's contacts */
		size_t contacts_nr;
	} partner;
	const char *command_name; /* "x86_64" */
	const char *command_line; /* "make -j$(nproc)" as configured */
	const char *compiler;	  /* first line of the compiler's --version; NULL */
	int exit_code;
	int timed_out;
	const char *excerpt; /* the first error with its context, several lines */
	int bisect_steps;
	int culprit_fails, parent_passes, revert_passes; /* confirmation */
	/*
	 * The bisect logs with "# <level>" section comments ("# which merge: …", "# which
	 * patch in <tree>", …): summarised in the mail, each level attached to the
	 * report as a file that `git bisect replay` reads.
	 */
	const char *const *bisect_log;
	size_t bisect_log_nr;
	/*
	 * The Reproduce: block, one shell line each ("# …" comments), runnable in an
	 * empty folder where only the trees' URLs are reachable; NULL: none.
	 */
	const char *const *reproduce;
	size_t reproduce_nr;
	enum notice_action action;
	const char *previous_tag; /* previous-version: the next-YYYYMMDD its good tip is from */
	int failing, total;	  /* flaky: failing runs of total */
	/* `#nextbot fix:` announced and not arrived yet: a reminder says so */
	const char *fix_subject, *fix_by, *fix_date; /* NULL: none */
	const struct notice_cell *cells; /* with a build matrix, every cell it fails in */
	size_t cells_nr;
	/* MAINTAINERS' people and lists for the culprit's files (both patches' for a
	   semantic conflict): Cc on the report and the maintainer mail; none for flaky */
	const struct notice_extra *maintainers;
	size_t maintainers_nr;
};

/* One commit as a notice names it. */
struct notice_commit {
	const char *tree; /* the tree it came from (the base's name for mainline) */
	const char *commit, *subject;
	struct notice_person author;
};

/*
 * Tonight's conflict of `tree` with the earlier `other` tree (linux-next's "manual
 * merge of the X tree with the Y tree"), or, with `gone`, the follow-up that says
 * the conflict is no longer there, in the first mail's thread.
 */
struct notice_conflict {
	const char *date, *next_tag;
	const char *first_date; /* the night the conflict was first reported (== date
				   for a new one); the thread and notice ids use it */
	int gone;		/* 1: the follow-up */
	const char *tree, *other;
	const char *const *contacts; /* of `tree` */
	size_t contacts_nr;
	const char *const *other_contacts; /* of `other` */
	size_t other_contacts_nr;
	const char *const *paths;
	size_t paths_nr;
	const struct notice_commit *ours; /* commits of `other` touching the paths */
	size_t ours_nr;
	const struct notice_commit *theirs; /* commits of `tree` touching them */
	size_t theirs_nr;
	const char *outcome; /* what was done tonight, one or more sentences; NULL */
	/* MAINTAINERS' people and lists for the conflicted paths: Cc, with the why */
	const struct notice_extra *maintainers;
	size_t maintainers_nr;
	/*
	 * To notify.operator only (never a list): where the conflicted files are and
	 * the command that records a resolution.  NULL: no operator mail.
	 */
	const char *operator_note;
};

struct notice_base_broken {
	const char *date, *next_tag;
	const char *base_name, *base_commit;
	const char *command_name, *command_line;
	int exit_code, timed_out;
	const char *excerpt;
};

struct notice_summary_tree {
	const char *name;
	const char *state;  /* merged | reverted | previous-version | stale | left-out | … */
	const char *reason; /* NULL when none */
};

/* A flag as the summary lists it. */
struct notice_summary_flag {
	const char *id, *kind, *tree, *commit, *subject;
	const char *partner_tree; /* NULL: none */
	const char *since;	  /* YYYY-MM-DD it was first seen; NULL */
	const char *status;	  /* what tonight showed of it ("reverted tonight", …); NULL */
	int is_new;		  /* first found tonight */
};

struct notice_summary {
	const char *date, *next_tag;
	const char *next_commit; /* 12 or 40 hex */
	int regression;		 /* next is not clean tonight: BUILD REGRESSION (so is any
				    open flag); BUILD SUCCESS only for a clean next with no
				    flag open; either way the subject counts the open flags
				    and the trees not at tonight's tip */
	const struct notice_summary_tree *trees;
	size_t trees_nr;
	const struct notice_summary_flag *open_flags; /* every open flag (mail, webhook) */
	size_t open_flags_nr;
	const char *const *new_flags; /* one line each: "id tree commit subject" */
	size_t new_flags_nr;
	const char *const *resolved_flags;
	size_t resolved_flags_nr;
	const char *const *duplicates; /* one line each */
	size_t duplicates_nr;
	const char *const *missing_signoff; /* one line each */
	size_t missing_signoff_nr;
	const char *const *unreviewed; /* review_gate: patches without a review, a line each */
	size_t unreviewed_nr;
	const char *const *notes; /* anything else the night wants said */
	size_t notes_nr;
	/* the review queue's oldest patches, one line each (bot/people/) */
	const char *const *reviews;
	size_t reviews_nr;
};

/*
 * The monthly audit of MAINTAINERS (kind `maintainers-audit`) to `to`: `text` is
 * `nextbot maintainers`' output; one per `month` (YYYY-MM): queued again, it is
 * the same notice.
 */
struct notice_audit {
	const char *to;
	const char *month;
	const char *date;    /* the night's YYYY-MM-DD */
	const char *summary; /* one line: "3 people absent, 1 orphaned section" */
	const char *text;
};
int notice_queue_audit(const struct notice_settings *s, const struct notice_audit *a);

/*
 * A patch's journey (bot/journey/): the mm-commits notices (added to a branch, moved
 * on, replaced by a new version, removed without reaching mainline, merged into
 * mainline) and the review gate's (review-missing, held out of next, released).
 */
enum notice_journey_kind {
	NOTICE_PATCH_ADDED,
	NOTICE_PATCH_MOVED,
	NOTICE_PATCH_REPLACED,
	NOTICE_PATCH_REMOVED,
	NOTICE_PATCH_MERGED,
	NOTICE_REVIEW_MISSING,
	NOTICE_PATCH_HELD,
	NOTICE_PATCH_RELEASED,
};
/* "patch-added", "patch-moved", …, "review-missing", "held", "released". */
const char *notice_journey_kind_name(enum notice_journey_kind k);

struct notice_journey {
	enum notice_journey_kind kind;
	const char *key;        /* the patch's lasting key (its journey's): notice ids */
	const char *date, *next_tag;
	const char *tree, *branch; /* where the event happened (removed: the branch it left) */
	const char *from;       /* moved: the branch it left; NULL */
	const char *subject;
	struct notice_person author;
	const char *commit;     /* its commit there (40 hex) */
	struct nb_patchid patch_id; /* none: a binary or merge change */
	const char *message_id; /* its Message-ID, which the mail answers; NULL: none */
	const char *patch_link; /* the patch on the list archive; NULL */
	const char *reason;     /* removed, held, released: why; NULL */
	const char *const *reviews; /* its review trailers, "Reviewed-by: Name <addr>" */
	size_t reviews_nr;
	const char *require;    /* review-missing, held: "Reviewed-by or Acked-by" */
	/* held: its hold ends with its review whichever tree carries it (review_gate.follow);
	   0: also when it moves on to a tree without a review gate */
	int hold_follows;
	/* who hears of it, chosen by bot/: To (people) and Cc (addresses as configured) */
	const struct notice_person *to;
	size_t to_nr;
	const char *const *cc;
	size_t cc_nr;
	/* MAINTAINERS' people and lists for the patch's files: Cc, with the why */
	const struct notice_extra *maintainers;
	size_t maintainers_nr;
	int hook_only;          /* the mail goes out in a digest: only the webhooks here */
	/* replaced: the old version and the delta */
	const char *old_commit, *old_message_id;
	const char *const *lost_reviews;  /* reviews the old version had and the new lacks */
	size_t lost_reviews_nr;
	const char *const *stale_reviews; /* kept over a changed diff: may no longer apply */
	size_t stale_reviews_nr;
	const char *range_diff; /* the pair line and the diff of the diffs; NULL: none */
	const char *interdiff;  /* NULL unless the two versions have the same base */
};

/* journey.digest: one recipient's events of a night in one mail. */
struct notice_journey_digest {
	const char *date, *next_tag;
	struct notice_person to;
	int to_list;            /* `to` is a mailing list (journey.list): a list's digest */
	const char *const *cc;
	size_t cc_nr;
	const struct notice_journey *events;
	size_t events_nr;
};

/*
 * Queueing.  Each call writes one outbox file per notice (mail to the people, one
 * POST per configured webhook), atomically, and returns how many were new (>= 0) or
 * a negative error (nothing half-written).  A notice's id is derived from what it is
 * about (kind, flag id or date/tree, role, reminder, webhook url), so queueing the
 * same notice again is a no-op: the bot may retry a whole night safely.
 *
 * Every mail about a flag carries its id in the body and in `X-Nextbot-Flag:`, and a
 * Message-ID that follows from the notice id alone (answers thread under it).
 *
 * notice_queue_breakage: for build/test failures a submitter report (To: the author
 * and, for a semantic conflict, the partner's author; Cc: the contacts of both
 * trees), with the bisect logs attached, and a maintainer mail (To: the contacts of
 * both trees; Cc: the list and the authors); for flaky only a mail to the contacts
 * (Cc: list).  Plus webhooks.
 * notice_queue_dropped: `dropped` to the author, in the report's thread.
 * notice_queue_resolved: `resolved` to the report's recipients, in its thread;
 * `why` says what happened and how the night (b->next_tag) showed it.
 * notice_queue_conflict: To the maintainers of both trees, Cc the authors of the
 * commits on each side and the list; `operator_note` goes to notify.operator alone.
 */
int notice_queue_breakage(const struct notice_settings *s, const struct notice_breakage *b);
int notice_queue_dropped(const struct notice_settings *s, const struct notice_breakage *b,
			 const char *reason);
int notice_queue_resolved(const struct notice_settings *s, const struct notice_breakage *b,
			  const char *why);
int notice_queue_conflict(const struct notice_settings *s, const struct notice_conflict *c);
int notice_queue_base_broken(const struct notice_settings *s, const struct notice_base_broken *bb);
int notice_queue_summary(const struct notice_settings *s, const struct notice_summary *sum);
/*
 * notice_queue_journey: one event of a patch's journey to j->to (Cc j->cc), in the
 * patch's thread (In-Reply-To its Message-ID), plus webhooks; one notice per patch
 * per event per night (ids from kind, key, date and branch).
 * notice_queue_journey_digest: the events of a night for one recipient, one mail.
 */
int notice_queue_journey(const struct notice_settings *s, const struct notice_journey *j);
int notice_queue_journey_digest(const struct notice_settings *s,
				const struct notice_journey_digest *d);

/*
 * The night's infrastructure notes (a disk that filled, and which step filled it)
 * to notify.operator alone: they name local paths, never go to a list.  Nothing
 * when no operator is configured or `notes` is empty.  Returns 1 queued, 0 not,
 * or < 0.
 */
struct notice_operator_notes {
	const char *date, *next_tag;
	const char *const *notes;
	size_t notes_nr;
};
int notice_queue_operator_notes(const struct notice_settings *s,
				const struct notice_operator_notes *o);

/*
 * A reply to a mail someone sent nextbot (an acknowledgement or a refusal of its
 * commands); bot/ writes the text.  The notice id comes from `key` and `role`, so
 * the same mail answered again queues nothing new.  It answers in that mail's
 * thread: In-Reply-To its Message-ID, References its References and it.  No webhook.
 */
struct notice_reply {
	const char *key;	   /* the answered mail's key (its Message-ID or digest) */
	const char *role;	   /* "ack" | "refusal" */
	struct notice_person to;   /* the sender */
	const char *const *cc;	   /* bare addresses: the answered mail's other recipients */
	size_t cc_nr;
	const char *subject;	   /* the answered mail's subject, decoded */
	const char *message_id;	   /* the answered mail's Message-ID "<x@y>"; NULL: none */
	const char *const *references; /* its References, "<x@y>" each */
	size_t references_nr;
	const char *text;	   /* the body, LF line ends; the signature is added */
	const char *flag_id;	   /* the flag it is about (X-Nextbot-Flag); NULL: none */
};
int notice_queue_reply(const struct notice_settings *s, const struct notice_reply *r);

/* Delivery. */
struct notice_flush_stats {
	int sent;     /* notices now fully delivered */
	int failed;   /* notices now marked failed */
	int deferred; /* still queued (server down, 4xx, 429/5xx) */
	int skipped;  /* queued but not due yet, or no SMTP configured */
	int damaged;  /* unreadable files, moved to <outbox>/damaged/ */
};

/*
 * Delivers the queued notices of s->outbox_dir whose next_try has come (all queued
 * ones with `all`).  Mail goes one SMTP transaction per recipient; each recipient
 * accepted is recorded at once (atomic replace), so only a crash in that instant
 * can resend, with the same Message-ID.  Returns 0 (individual delivery failures
 * are recorded in the notices, not returned) or a negative error when the outbox
 * cannot be read or written.  The caller holds the run lock.
 */
int notice_outbox_flush(const struct notice_settings *s, int all, struct notice_flush_stats *out);

/*
 * Appends the outbox listing to `out`: with `json` the document
 * {"notices":[{id, kind, to, subject, state, attempts, last_error, next_try}]},
 * else one line per notice.  A file that is not a notice (truncated, garbled),
 * in the outbox or kept aside in <outbox>/damaged/, is listed as
 * {id, "state": "damaged", file, error}.  A missing outbox lists nothing.  Never
 * blocks, never changes a file.
 */
int notice_outbox_list(struct strbuf *out, const char *outbox_dir, int json);

/*
 * One notice of the outbox as a reader sees it (`report --html`): a mail's headers
 * decoded, its text and attachments; a webhook's POST line and body.  Every string
 * owned; release with notice_shown_release().  NB_ENOTFOUND when the notice is no
 * longer there (delivered and pruned by `gc`).
 */
struct notice_shown {
	char *kind, *channel, *subject, *state;
	char *to; /* the recipients' addresses (a webhook's url), one a line */
	char *text;
};
int notice_outbox_show(struct notice_shown *out, const char *outbox_dir, const char *id);
void notice_shown_release(struct notice_shown *s);

/*
 * Moves every file of the outbox that is not a notice (truncated, garbled) to
 * <outbox>/damaged/, where it stays (listed, never sent), and appends its id and
 * why to `ids` and `whys`.  Returns how many, or a negative error.
 */
int notice_outbox_set_aside(const char *outbox_dir, struct strvec *ids, struct strvec *whys);

/* The ids of the notices in the outbox, sorted (appended to `out`). */
int notice_outbox_ids(struct strvec *out, const char *outbox_dir);
/* Removes the notice `id` from the outbox (a missing one is no error). */
int notice_outbox_remove(const char *outbox_dir, const char *id);

/* Start/stop libcurl; bot/ calls these once per process around any delivery. */
int notify_global_init(void);
void notify_global_cleanup(void);

#endif
