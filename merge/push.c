/* Pushing next and the night's tag to publish.url, forced, with fetch's credentials. */
#include <string.h>
#include <git2.h>

#include "merge/fetch.h"
#include "merge/merge_global.h"
#include "merge/push.h"
#include "merge/repo.h"
#include "util/error.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

struct __push_state {
	struct fetch_cred_state cred;
	struct strbuf rejected;   /* "ref: why" of refs the remote refused */
};

static int __credentials(git_credential **out, const char *url, const char *user_from_url,
			 unsigned int allowed, void *payload)
{
	struct __push_state *ps = payload;

	return fetch_credentials(out, url, user_from_url, allowed, &ps->cred);
}

static int __update_ref(const char *refname, const char *status, void *payload)
{
	struct __push_state *ps = payload;

	if (status)
		strbuf_addf(&ps->rejected, "%s%s: %s", ps->rejected.len ? "; " : "", refname,
			    status);
	return 0;
}

int push_publish(struct integ_repo *repo, const char *url, const char *branch, const char *tag,
		 const struct fetch_creds *creds)
{
	struct __push_state ps = { { creds, 0 }, STRBUF_INIT };
	git_remote *remote = NULL;
	git_remote_create_options ro;
	git_push_options po;
	char *specs[2] = { NULL, NULL };
	git_strarray arr = { specs, 1 };
	char hex[41];
	int err = 0;

	if ((err = integ_ref_get(repo, "refs/heads/next", hex)) < 0)
		return nb_error_set(NB_ENOTFOUND, "publish: there is no next to push yet");
	specs[0] = xstrfmt("+refs/heads/next:refs/heads/%s", branch ? branch : "master");
	if (tag) {
		specs[1] = xstrfmt("+refs/tags/%s:refs/tags/%s", tag, tag);
		arr.count = 2;
	}
	git_remote_create_options_init(&ro, GIT_REMOTE_CREATE_OPTIONS_VERSION);
	ro.repository = integ_repo_git(repo);
	ro.flags = GIT_REMOTE_CREATE_SKIP_INSTEADOF | GIT_REMOTE_CREATE_SKIP_DEFAULT_FETCHSPEC;
	git_push_options_init(&po, GIT_PUSH_OPTIONS_VERSION);
	po.callbacks.credentials = __credentials;
	po.callbacks.push_update_reference = __update_ref;
	po.callbacks.payload = &ps;
	log_progress("publishing next (%.12s) to %s", hex, url);
	if (git_remote_create_with_opts(&remote, url, &ro) < 0 ||
	    git_remote_push(remote, &arr, &po) < 0)
		err = nb_error_set(NB_ERROR, "push to %s failed: %s", url, merge_git_error());
	else if (ps.rejected.len)
		err = nb_error_set(NB_ERROR, "push to %s: refused %s", url, ps.rejected.buf);
	git_remote_free(remote);
	free(specs[0]);
	free(specs[1]);
	strbuf_release(&ps.rejected);
	return err;
}
