/*
 * Publishing next (`publish` in the config), after the night's tag: refs/heads/next and
 * the night's tag are pushed, forced (next is rebuilt every night, as linux-next
 * is), to publish.url with the credentials fetch uses (`git:` token or ssh key);
 * and any one ref, with a check that the remote did not move (`drop --push`).
 * Both push from a child process that is given up when the remote sends nothing
 * for creds->idle_timeout seconds (merge/watch_int.h): NB_ETIMEOUT, nothing lost.
 */
#ifndef MERGE_PUSH_H
#define MERGE_PUSH_H

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
 * Pushes commit `src_hex` to `dst_ref` ("refs/heads/master") of `url`, forced
 * with `force`.  With `expect_hex` (may be NULL: no check) it first connects and
 * checks that the remote advertises `dst_ref` at `expect_hex` ("" : the ref must
 * not exist) — a lease, which libgit2 1.5 lacks — and pushes over that same
 * connection (a smart server also refuses the update if the ref moved in
 * between; a file:// remote leaves a window of that one call).  Returns 0 when
 * the remote took the ref; NB_EREFUSED (recorded: what the remote has) when it
 * moved, nothing pushed; NB_ERROR (recorded) otherwise.  The work repository
 * gains no ref (a temporary refs/nextbot/push-src is removed again).
 */
int push_ref(struct repo *repo, const char *url, const char *src_hex, const char *dst_ref,
	     int force, const char *expect_hex, const struct fetch_creds *creds);

#endif
