/* Internal to merge/: fetch's credentials callback, for other code talking to remotes. */
#ifndef MERGE_FETCH_INT_H
#define MERGE_FETCH_INT_H

#include <git2.h>
#include "merge/transport/transport.h"

/*
 * The same credentials for other merge/ code that talks to remotes (merge/transport/push.c):
 * libgit2's git_credential_acquire_cb over `payload`, a struct fetch_cred_state
 * ({creds, 0}).  https: the token of creds->token_env as the password; ssh:
 * creds->ssh_key, else the agent.  Gives up (GIT_PASSTHROUGH) after 3 rounds.
 */
struct fetch_cred_state {
	const struct fetch_creds *creds;
	int tries;
};
int fetch_credentials(git_credential **out, const char *url, const char *user_from_url,
		      unsigned int allowed, void *payload);

/*
 * Before a connection to `url` (in the fetch or push child: libgit2's setting is
 * global): an https remote is checked against creds->ca_file when it is set.  NULL
 * when done (or nothing to do), else why not (owned).
 */
char *fetch_trust(const struct fetch_creds *creds, const char *url);

/*
 * Why talking to `url` failed, from libgit2's last error and code `error`, with what
 * to do about an untrusted certificate or an unknown ssh host key; owned.
 */
char *fetch_why(const char *url, int error, const struct fetch_creds *creds);

#endif
