/* Pushing next and the night's tag to publish.url, forced; any one ref (drop --push). */
#include <stdlib.h>
#include <string.h>
#include <git2.h>

#include "merge/transport/fetch_int.h"
#include "merge/git/repohandle_int.h"
#include "merge/git/git_int.h"
#include "merge/transport/transport.h"
#include "merge/repo/repo.h"
#include "merge/transport/watch_int.h"
#include "util/error.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* The local ref push_ref() pushes from (libgit2 pushes refs, not bare ids). */
#define PUSH_SRC_REF "refs/nextbot/push-src"

struct push_state {
	struct fetch_cred_state cred;
	struct strbuf rejected;   /* "ref: why" of refs the remote refused */
};

static int credentials(git_credential **out, const char *url, const char *user_from_url,
			 unsigned int allowed, void *payload)
{
	struct push_state *ps = payload;

	return fetch_credentials(out, url, user_from_url, allowed, &ps->cred);
}

static int update_ref(const char *refname, const char *status, void *payload)
{
	struct push_state *ps = payload;

	if (status)
		strbuf_addf(&ps->rejected, "%s%s: %s", ps->rejected.len ? "; " : "", refname,
			    status);
	return 0;
}

/* An anonymous remote for `url` in the work repository, without insteadOf or refspecs. */
static int remote_new(git_remote **out, struct repo *repo, const char *url)
{
	git_remote_create_options ro;

	git_remote_create_options_init(&ro, GIT_REMOTE_CREATE_OPTIONS_VERSION);
	ro.repository = repo_git(repo);
	ro.flags = GIT_REMOTE_CREATE_SKIP_INSTEADOF | GIT_REMOTE_CREATE_SKIP_DEFAULT_FETCHSPEC;
	return git_remote_create_with_opts(out, url, &ro);
}

/* Data moved: the watcher (merge/transport/watch_int.h) is told the remote is alive. */
static int on_transfer(unsigned int current, unsigned int total, size_t bytes,
			 void *payload)
{
	(void)current;
	(void)total;
	(void)bytes;
	(void)payload;
	watch_beat();
	return 0;
}

static int on_sideband(const char *str, int len, void *payload)
{
	(void)str;
	(void)len;
	(void)payload;
	watch_beat();
	return 0;
}

static void callbacks(git_remote_callbacks *cb, struct push_state *ps)
{
	git_remote_init_callbacks(cb, GIT_REMOTE_CALLBACKS_VERSION);
	cb->credentials = credentials;
	cb->push_update_reference = update_ref;
	cb->push_transfer_progress = on_transfer;
	cb->sideband_progress = on_sideband;
	cb->payload = ps;
}

static void push_options(git_push_options *po, struct push_state *ps)
{
	git_push_options_init(po, GIT_PUSH_OPTIONS_VERSION);
	callbacks(&po->callbacks, ps);
}

static long idle(const struct fetch_creds *creds)
{
	return creds && creds->idle_timeout > 0 ? creds->idle_timeout : FETCH_IDLE_TIMEOUT;
}

/* Pushes `specs` over `remote` (connected or not); records why it failed. */
static int push(git_remote *remote, const char *url, char **specs, size_t n,
		  struct push_state *ps)
{
	git_strarray arr = { specs, n };
	git_push_options po;
	char *why = fetch_trust(ps->cred.creds, url);
	int error;

	push_options(&po, ps);
	if (!why && (error = git_remote_push(remote, &arr, &po)) < 0)
		why = fetch_why(url, error, ps->cred.creds);
	if (why) {
		error = nb_error_set(NB_ERROR, "push to %s failed: %s", url, why);
		free(why);
		return error;
	}
	if (ps->rejected.len)
		return nb_error_set(NB_ERROR, "push to %s: refused %s", url, ps->rejected.buf);
	return 0;
}

struct publish_args {
	struct repo *repo;
	const char *url, *branch, *tag;
	const struct fetch_creds *creds;
};

static int publish_here(void *arg)
{
	struct publish_args *a = arg;
	struct repo *repo = a->repo;
	const char *url = a->url, *branch = a->branch, *tag = a->tag;
	const struct fetch_creds *creds = a->creds;
	struct push_state ps = { { creds, 0 }, STRBUF_INIT };
	git_remote *remote = NULL;
	char *specs[2] = { NULL, NULL };
	struct nb_oid hex;
	int err = 0;

	if ((err = repo_ref_get(repo, "refs/heads/next", &hex)) < 0)
		return nb_error_set(NB_ENOTFOUND, "publish: there is no next to push yet");
	specs[0] = xstrfmt("+refs/heads/next:refs/heads/%s", branch ? branch : "master");
	if (tag)
		specs[1] = xstrfmt("+refs/tags/%s:refs/tags/%s", tag, tag);
	log_progress("publishing next (%.12s) to %s", hex.hex, url);
	if (remote_new(&remote, repo, url) < 0)
		err = nb_error_set(NB_ERROR, "push to %s failed: %s", url, merge_git_error());
	else
		err = push(remote, url, specs, tag ? 2 : 1, &ps);
	git_remote_free(remote);
	free(specs[0]);
	free(specs[1]);
	strbuf_release(&ps.rejected);
	return err;
}

int push_publish(struct repo *repo, const char *url, const char *branch, const char *tag,
		 const struct fetch_creds *creds)
{
	struct publish_args a = { repo, url, branch, tag, creds };
	char *what = xstrfmt("push to %s", url);
	int err = watch_run(publish_here, &a, idle(creds), what);

	free(what);
	return err;
}

/* NB_EREFUSED unless the connected remote advertises `ref` at `expect` (empty: absent). */
static int check_lease(git_remote *remote, const char *url, const char *ref,
			 const struct nb_oid *expect)
{
	const git_remote_head **heads;
	struct nb_oid have = NB_OID_INIT;
	size_t i, n;

	if (git_remote_ls(&heads, &n, remote) < 0)
		return nb_error_set(NB_ERROR, "%s: cannot list refs: %s", url, merge_git_error());
	for (i = 0; i < n && nb_oid_is_null(&have); i++)
		if (!strcmp(heads[i]->name, ref))
			merge_oid_from_git(&have, &heads[i]->oid);
	if (nb_oid_equal(&have, expect))
		return 0;
	return nb_error_set(NB_EREFUSED, "%s at %s moved: it is %s, not %s as last fetched",
			    ref, url, nb_oid_is_null(&have) ? "gone" : have.hex,
			    nb_oid_is_null(expect) ? "absent" : expect->hex);
}

struct ref_args {
	struct repo *repo;
	const char *url;
	const struct nb_oid *src;
	const char *dst_ref;
	int force;
	const struct nb_oid *expect;
	const struct fetch_creds *creds;
};

static int push_ref_here(void *arg)
{
	struct ref_args *a = arg;
	struct repo *repo = a->repo;
	const char *url = a->url, *dst_ref = a->dst_ref;
	const struct nb_oid *expect = a->expect;
	int force = a->force;
	struct push_state ps = { { a->creds, 0 }, STRBUF_INIT };
	git_remote_callbacks cb;
	git_remote *remote = NULL;
	char *spec = xstrfmt("%s" PUSH_SRC_REF ":%s", force ? "+" : "", dst_ref), *why;
	int err;

	if ((err = repo_ref_set(repo, PUSH_SRC_REF, a->src)) < 0)
		goto done;
	callbacks(&cb, &ps);
	if ((why = fetch_trust(a->creds, url)) || (err = remote_new(&remote, repo, url)) < 0 ||
	    (expect && (err = git_remote_connect(remote, GIT_DIRECTION_PUSH, &cb, NULL,
						 NULL)) < 0)) {
		if (!why)
			why = fetch_why(url, err, a->creds);
		err = nb_error_set(NB_ERROR, "push to %s failed: %s", url, why);
		free(why);
		goto done;
	}
	/* The push reuses this connection: smart servers check the advertised old id. */
	if (expect && (err = check_lease(remote, url, dst_ref, expect)) < 0)
		goto done;
	log_progress("pushing %.12s to %s of %s", a->src->hex, dst_ref, url);
	err = push(remote, url, &spec, 1, &ps);
done:
	git_remote_free(remote);
	repo_ref_set(repo, PUSH_SRC_REF, NULL);
	free(spec);
	strbuf_release(&ps.rejected);
	return err;
}

int push_ref(struct repo *repo, const char *url, const struct nb_oid *src, const char *dst_ref,
	     int force, const struct nb_oid *expect, const struct fetch_creds *creds)
{
	struct ref_args a = { repo, url, src, dst_ref, force, expect, creds };
	char *what = xstrfmt("push to %s", url);
	int err = watch_run(push_ref_here, &a, idle(creds), what);

	free(what);
	return err;
}
