/*
 * `#nextbot test: <url> <branch>`: does a fix work?  Someone's branch is fetched
 * (only from where the policy below allows), merged in place of the flag's tree into
 * next as it stood before that tree's merge, and the failing command is run on it
 * exactly as a night runs it (the runner, its limits, its sandbox); the answer, pass
 * or fail with the first error, goes back in the mail's thread.
 */
#ifndef BOT_MAILTEST_H
#define BOT_MAILTEST_H

#include "bot/config/config.h"
#include "bot/actions/actions.h"
#include "util/strbuf.h"

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

#endif
