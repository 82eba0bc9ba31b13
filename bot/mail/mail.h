/*
 * Commands by mail: `#nextbot drop|undrop|invalid|reopen|fix:|test:` in answers to
 * nextbot's mails.  Who may do what to which flag, the actions, the replies and the
 * record of every mail handled.  One function for both intakes (`nextbot inbox` over
 * IMAP and `nextbot mail-in` on stdin), so they cannot disagree.  The room's door:
 * mailcmd.c's commands and mailtest.c's `#nextbot test:` (below).
 */
#ifndef BOT_MAIL_H
#define BOT_MAIL_H

#include <stddef.h>
#include "bot/actions/actions.h"
#include "util/strbuf.h"
#include "bot/config/config.h"

/*
 * `#nextbot test: <url> <branch>`: does a fix work?  Someone's branch is fetched
 * (only from where the policy below allows), merged in place of the flag's tree into
 * next as it stood before that tree's merge, and the failing command is run on it
 * exactly as a night runs it (the runner, its limits, its sandbox); the answer, pass
 * or fail with the first error, goes back in the mail's thread.
 */
/*
 * May `#nextbot test:` fetch `url`?  Only https:// and git:// URLs with a host and
 * no credentials (never file://, ext::, ssh, local paths); matching an
 * inbox.test_urls entry (same scheme, host and port, and a path below its path), or
 * by default any https:// or git:// URL on a host of the configured trees (base and
 * trees).  The host is resolved: an address on loopback, a private, shared,
 * link-local, unspecified, multicast or reserved network is refused unless the
 * configured trees live on that host or an inbox.test_urls entry names that address
 * itself.  Returns 0, or -1 with the reason in `why`.
 */
int mailtest_url_check(const struct config *cfg, const char *url, struct strbuf *why);

/* 1 if `s` is a branch name git would take (and no option, path or glob). */
int mailtest_branch_ok(const char *s);

/*
 * Runs every queued test request of m->st, oldest first: fetch (no credentials of
 * nextbot's, at most 1 GiB, git.fetch_timeout of silence), the trial merge, the
 * failing command (night_check_trial()), the answer queued, the state saved after
 * each.  The caller holds the lock and started libgit2 and libcurl.  Returns how many
 * ran, or a negative error when the state cannot be saved.
 */
int mailtest_run_queued(struct maint *m);

enum mailcmd_outcome {
	MAILCMD_ACTED = 0,   /* at least one command was carried out */
	MAILCMD_REFUSED,     /* it held commands and none was carried out */
	MAILCMD_IGNORED,     /* not for nextbot: no command, an auto-reply, a bounce, its own */
	MAILCMD_DUPLICATE,   /* the same mail (same key) was handled before: nothing done */
	MAILCMD_UNPARSEABLE, /* not a mail message at all */
};

/* "acted", "refused", "ignored", "duplicate", "unparseable". */
const char *mailcmd_outcome_name(enum mailcmd_outcome o);

/*
 * Handles one message, raw[0..len), with m's lock held and state loaded: decides
 * whether it is for nextbot and whom it comes from, carries out its commands on
 * m->st, queues the replies (an acknowledgement to the sender and the mail's other
 * recipients, a refusal with the list of commands to the sender alone; none for a
 * reply to a reply of nextbot's, or for a From: the server did not vouch for) and
 * records the mail by its key in m->st.  The caller saves the state: only then has
 * the mail been handled, and a mail seen again after that does nothing.  Queueing
 * is idempotent, so a crash before the save redoes the same work.
 * `summary` (may be NULL) gets one line saying what was done or why not.
 * Returns 0 with *out set, or a negative error (a notice could not be written: the
 * state must not be saved; try again later).
 */
int mailcmd_handle(enum mailcmd_outcome *out, struct maint *m, const char *raw, size_t len,
		   struct strbuf *summary);

/*
 * Does s[0..n) look like an id: 7 to 40 hex digits (any case), or "<...@...>"?  Such
 * a word right after a command word names what the command is about (a flag, a
 * commit, a patch-id or a Message-ID); when it names nothing, nothing is done.
 * Any other first word starts the command's text, and the mail's thread names
 * the flag.
 */
int mailcmd_id_like(const char *s, size_t n);

/*
 * The command `word` (any case) is probably a slip for: a command within a small
 * edit distance ("dorp": "drop"), or the mail name of a shell command ("dismiss":
 * "invalid"); NULL when none is close.  Words longer than 24 bytes get none.
 */
const char *mailcmd_suggest(const char *word);

#endif
