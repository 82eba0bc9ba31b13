/* From the bot's flags and config to notify/'s notices: who is told what. */
#ifndef BOT_NOTICES_H
#define BOT_NOTICES_H

#include "bot/config/config.h"
#include "bot/people/people.h"
#include "bot/state/state.h"
#include "notify/notice.h"

struct repo;

/* Settings for notify/ from the config; secrets read from the environment now. */
struct notices {
	struct notice_settings settings;
	struct notice_webhook *hooks;
	char *outbox_dir;
	const struct config *cfg; /* borrowed */
	/* When set (borrowed), the Message-ID of every mail about a flag or a conflict
	   is recorded in it (state_sent_add), so replies can be told what they answer. */
	struct state *st;
	struct strvec sent;       /* Message-IDs the last queue call reported */
	/* the work repository, when the caller has it open: a culprit's tree is checked
	   for a rebase that took it away (borrowed; NULL: not checked) */
	struct repo *repo;
	/* scratch for one notice: its Reproduce: lines, the rebased culprit's commit */
	struct strvec repro;
	char *now_commit;
	/* MAINTAINERS at the base's tip, read at the first mail that needs it (NULL:
	   none, or no repository); the last routing and its notice form */
	struct people *people;
	int people_read;
	struct people_route route;
	struct notice_extra *extras;
};

void notices_init(struct notices *n, const struct config *cfg);
void notices_release(struct notices *n);
void notices_scratch_clear(struct notices *n);

/*
 * Queues the notices of a flag: the first report and maintainer mail
 * (reminder 0), the N-th reminder, `resolved` or `dropped`.  `date` is the night.
 * Reminders answer the first mail of their audience (f->notified says its night).
 * notices_flag_back: a resolved flag found again, said at once in the same threads.
 * Returns the number of new notices or a negative error.
 */
int notices_flag_report(struct notices *n, const struct flag *f, const char *date, int reminder);
int notices_flag_back(struct notices *n, const struct flag *f, const char *date);
int notices_flag_resolved(struct notices *n, const struct flag *f, const char *date,
			  const char *why);
int notices_flag_dropped(struct notices *n, const struct flag *f, const char *date,
			 const char *reason);

/* Queues tonight's conflict notice and records its Message-ID for `tree`/`other`. */
int notices_conflict(struct notices *n, const struct notice_conflict *c);
/* Queues a reply to a mail and records its Message-ID (kind "reply", about flag_id). */
int notices_reply(struct notices *n, const struct notice_reply *r, const char *flag_id);

/*
 * Outbox files that are not notices any more (truncated, garbled) are moved to
 * <outbox>/damaged/ (kept, listed, never sent).  One that the state says was a
 * flag's report or maintainer mail (by its Message-ID) is queued again, that one
 * notice only, from the flag; with `no_notify` nothing is queued.  Appends one
 * line per file to `notes` (the night's, which the daily summary says).  Returns
 * how many were damaged, or a negative error.
 */
int notices_outbox_mend(struct notices *n, struct state *st, int no_notify,
			struct strvec *notes);

/* The configured command line of command `name` (build or test), or NULL. */
const struct config_command *notices_command(const struct config *cfg, const char *name);
/* The configured tree `name`, or NULL. */
const struct config_tree *notices_tree(const struct config *cfg, const char *name);

#endif
