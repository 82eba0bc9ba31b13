/*
 * Publishing next (SPEC.md `publish`, "The nightly run" step 6): refs/heads/next and
 * the night's tag are pushed, forced (next is rebuilt every night, as linux-next
 * is), to publish.url with the credentials fetch uses (`git:` token or ssh key).
 */
#ifndef MERGE_PUSH_H
#define MERGE_PUSH_H

struct integ_repo;
struct fetch_creds;

/*
 * Pushes refs/heads/next to refs/heads/<branch> and, when `tag` ("next-YYYYMMDD")
 * is not NULL, refs/tags/<tag> to itself, both forced, to `url`.  `creds` may be
 * NULL.  Returns 0 when the remote took every ref; NB_ERROR (recorded: unreachable
 * url, authentication, a ref the remote refused and why) otherwise.  The work
 * repository is only read: a failed push loses nothing and the same call can be
 * made again later (the next flush).  Secrets are never logged or recorded.
 */
int push_publish(struct integ_repo *repo, const char *url, const char *branch, const char *tag,
		 const struct fetch_creds *creds);

#endif
