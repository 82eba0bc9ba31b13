/*
 * merge/'s door for transport (what bot/ includes of it; no libgit2 type): fetching
 * the trees (fetch_*: forced refspecs, credentials, a repository on this host copied by
 * what is new, a child given up when the remote is silent) and publishing next and its
 * tag (push_*).
 */
#ifndef MERGE_TRANSPORT_H
#define MERGE_TRANSPORT_H

#include <stddef.h>
#include "util/oid.h"

/*
 * Fetching the base and the trees into the work repository, the night's first
 * step: refs/feeds/<name> with forced refspecs, so rebased trees are
 * followed (libgit2 1.5.1 silently keeps the old tip without the '+').
 */
struct repo;

/* One ref to fetch; strings borrowed from the caller (the config). */
struct fetch_tree {
	const char *name;
	const char *url;
	const char *branch;
	const char *ref;        /* where its tip goes; NULL: refs/feeds/<name> */
};

/* Credentials as the config's `git:` key gives them; NULL fields: none. */
struct fetch_creds {
	const char *token_env;  /* NAME of the env var with an https token (never logged) */
	const char *ssh_key;    /* private key path; NULL: ssh-agent */
	const char *ca_file;    /* the CA certificates (PEM) https remotes are checked
				   against, in place of the system's; NULL: the system's */
	long idle_timeout;      /* fetch_trees(): seconds a remote may send nothing before it
				   is given up (0: FETCH_IDLE_TIMEOUT) */
	unsigned long long max_bytes; /* a remote that sends more is given up; 0: no cap */
};
#define FETCH_IDLE_TIMEOUT 600

enum fetch_state {
	FETCH_FETCHED,          /* refs/feeds/<name> is tonight's tip */
	FETCH_STALE,            /* fetch failed; the last fetched tip is kept */
	FETCH_FAILED,           /* fetch failed and there is no earlier tip */
	FETCH_REFUSED,          /* never_merge matches its name or branch */
};

struct fetch_result {
	enum fetch_state state;
	struct nb_oid tip;           /* refs/feeds/<name>; "" for FAILED and REFUSED */
	char *reason;           /* owned; NULL when fetched */
};

/* "fetched", "stale", "fetch-failed", "refused". */
const char *fetch_state_name(enum fetch_state s);

/*
 * Fetches trees[0..n) into `repo`; out[0..n) must be zeroed by the caller and is
 * filled for every tree, released with fetch_result_release().  Trees sharing a
 * url share one connection.  `never_merge` (NULL-terminated fnmatch globs, may be
 * NULL) is checked against name and branch: a match is refused, never fetched.
 * Returns 0 when every tree has a result (whatever its state); NB_ERROR only when
 * the repository itself fails.  Secrets are never logged.
 *
 * The fetching is done by a child process, which the caller's process watches: a
 * remote that sends nothing for creds->idle_timeout seconds (a hung server, a
 * black-holed connection: libgit2 1.5 has no timeout of its own, and libssh2 does
 * not give up on a signal) gets its child killed and its trees failed ("stale" at
 * their last tip), and a new child goes on with the next url.
 */
int fetch_trees(struct fetch_result *out, struct repo *repo,
		const struct fetch_tree *trees, size_t n, const struct fetch_creds *creds,
		const char *const *never_merge);
void fetch_result_release(struct fetch_result *r);

/* The never_merge pattern matching `name` or `branch`, or NULL; borrowed. */
const char *fetch_never_merge_match(const char *const *never_merge, const char *name,
				    const char *branch);

/*
 * Publishing next (`publish` in the config), after the night's tag: refs/heads/next and
 * the night's tag are pushed, forced (next is rebuilt every night, as linux-next
 * is), to publish.url with the credentials fetch uses (`git:` token or ssh key);
 * and any one ref, with a check that the remote did not move (`drop --push`).
 * Both push from a child process that is given up when the remote sends nothing
 * for creds->idle_timeout seconds (merge/transport/watch_int.h): NB_ETIMEOUT, nothing lost.
 */
struct repo;
struct fetch_creds;

/*
 * Pushes refs/heads/next to refs/heads/<branch> and, when `tag` ("next-YYYYMMDD")
 * is not NULL, refs/tags/<tag> to itself, both forced, to `url`.  `creds` may be
 * NULL.  Returns 0 when the remote took every ref; NB_ERROR (recorded: unreachable
 * url, authentication, a ref the remote refused and why) otherwise.  The work
 * repository is only read: a failed push loses nothing and the same call can be
 * made again later (the next flush).  Secrets are never logged or recorded.
 */
int push_publish(struct repo *repo, const char *url, const char *branch, const char *tag,
		 const struct fetch_creds *creds);

/*
 * Pushes commit `src` to `dst_ref` ("refs/heads/master") of `url`, forced
 * with `force`.  With `expect` (may be NULL: no check) it first connects and
 * checks that the remote advertises `dst_ref` at `expect` (empty: the ref must
 * not exist) — a lease, which libgit2 1.5 lacks — and pushes over that same
 * connection (a smart server also refuses the update if the ref moved in
 * between; a file:// remote leaves a window of that one call).  Returns 0 when
 * the remote took the ref; NB_EREFUSED (recorded: what the remote has) when it
 * moved, nothing pushed; NB_ERROR (recorded) otherwise.  The work repository
 * gains no ref (a temporary refs/nextbot/push-src is removed again).
 */
int push_ref(struct repo *repo, const char *url, const struct nb_oid *src, const char *dst_ref,
	     int force, const struct nb_oid *expect, const struct fetch_creds *creds);

#endif
