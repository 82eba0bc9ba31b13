/* Fetch of the base and trees into refs/feeds/<name>, one connection per url. */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <git2.h>

#include "merge/fetch.h"
#include "merge/repo.h"
#include "merge/merge_global.h"
#include "util/error.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

const char *fetch_state_name(enum fetch_state s)
{
	switch (s) {
	case FETCH_FETCHED: return "fetched";
	case FETCH_STALE: return "stale";
	case FETCH_FAILED: return "fetch-failed";
	case FETCH_REFUSED: return "refused";
	}
	return "?";
}

void fetch_result_release(struct fetch_result *r)
{
	if (!r)
		return;
	free(r->reason);
	r->reason = NULL;
}

const char *fetch_never_merge_match(const char *const *never_merge, const char *name,
				    const char *branch)
{
	size_t i;

	for (i = 0; never_merge && never_merge[i]; i++) {
		if ((name && fnmatch(never_merge[i], name, 0) == 0) ||
		    (branch && fnmatch(never_merge[i], branch, 0) == 0))
			return never_merge[i];
	}
	return NULL;
}

/* Credentials for libgit2; gives up after a few rounds so a bad token cannot loop. */
int fetch_credentials(git_credential **out, const char *url, const char *user_from_url,
		      unsigned int allowed, void *payload)
{
	struct fetch_cred_state *cs = payload;
	const char *token;

	if (++cs->tries > 3 || !cs->creds)
		return GIT_PASSTHROUGH;
	if (allowed & GIT_CREDENTIAL_SSH_KEY) {
		const char *user = user_from_url ? user_from_url : "git";

		if (cs->creds->ssh_key)
			return git_credential_ssh_key_new(out, user, NULL, cs->creds->ssh_key,
							  NULL);
		return git_credential_ssh_key_from_agent(out, user);
	}
	if ((allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT) && cs->creds->token_env &&
	    (token = getenv(cs->creds->token_env)) && *token)
		return git_credential_userpass_plaintext_new(
			out, user_from_url ? user_from_url : "x-access-token", token);
	return GIT_PASSTHROUGH;
}

/* Marks tree i failed: stale at its last fetched tip if it has one. */
static void __fail(struct fetch_result *r, struct integ_repo *repo, const struct fetch_tree *t,
		   const char *why)
{
	char *ref = xstrfmt("refs/feeds/%s", t->name);

	free(r->reason);
	if (integ_ref_get(repo, ref, r->tip) == 0) {
		r->state = FETCH_STALE;
		r->reason = xstrfmt("fetch of %s %s failed (%s); using the last fetched tip",
				    t->url, t->branch, why);
	} else {
		r->state = FETCH_FAILED;
		r->tip[0] = '\0';
		r->reason = xstrfmt("fetch of %s %s failed: %s", t->url, t->branch, why);
	}
	log_warn("%s: %s", t->name, r->reason);
	free(ref);
}

static int __remote_has(const git_remote_head **heads, size_t nheads, const char *branch)
{
	char *want = xstrfmt("refs/heads/%s", branch);
	size_t i;
	int found = 0;

	for (i = 0; i < nheads && !found; i++)
		found = !strcmp(heads[i]->name, want) || !strcmp(heads[i]->name, branch);
	free(want);
	return found;
}

/* Fetches every not yet done tree whose url is trees[first].url. */
static void __fetch_url(struct fetch_result *out, char *done, struct integ_repo *repo,
			const struct fetch_tree *trees, size_t n, size_t first,
			const struct fetch_creds *creds)
{
	git_repository *git = integ_repo_git(repo);
	git_remote *remote = NULL;
	git_remote_callbacks cb;
	git_fetch_options fo;
	git_remote_create_options ro;
	const git_remote_head **heads = NULL;
	struct fetch_cred_state cs = { creds, 0 };
	struct strvec_like { char **v; size_t nr; } specs = { NULL, 0 };
	git_strarray arr;
	size_t i, nheads = 0;
	const char *url = trees[first].url;
	char *why = NULL;

	specs.v = xcalloc(n, sizeof(char *));
	git_remote_create_options_init(&ro, GIT_REMOTE_CREATE_OPTIONS_VERSION);
	ro.repository = git;
	/* insteadOf rewriting leaks in libgit2 1.5 (pcre2 match data); urls are literal */
	ro.flags = GIT_REMOTE_CREATE_SKIP_INSTEADOF | GIT_REMOTE_CREATE_SKIP_DEFAULT_FETCHSPEC;
	git_remote_init_callbacks(&cb, GIT_REMOTE_CALLBACKS_VERSION);
	cb.credentials = fetch_credentials;
	cb.payload = &cs;
	if (git_remote_create_with_opts(&remote, url, &ro) < 0 ||
	    git_remote_connect(remote, GIT_DIRECTION_FETCH, &cb, NULL, NULL) < 0 ||
	    git_remote_ls(&heads, &nheads, remote) < 0) {
		why = xstrdup(merge_git_error());
		goto done;
	}
	for (i = first; i < n; i++) {
		if (done[i] || strcmp(trees[i].url, url))
			continue;
		if (!__remote_has(heads, nheads, trees[i].branch)) {
			char *msg = xstrfmt("branch %s not found", trees[i].branch);

			__fail(&out[i], repo, &trees[i], msg);
			free(msg);
			done[i] = 1;
			continue;
		}
		specs.v[specs.nr++] = xstrfmt("+refs/heads/%s:refs/feeds/%s", trees[i].branch,
					      trees[i].name);
	}
	if (!specs.nr)
		goto done;
	arr.strings = specs.v;
	arr.count = specs.nr;
	git_fetch_options_init(&fo, GIT_FETCH_OPTIONS_VERSION);
	fo.callbacks = cb;
	fo.prune = GIT_FETCH_NO_PRUNE;
	fo.update_fetchhead = 0;
	fo.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
	if (git_remote_fetch(remote, &arr, &fo, "nextbot: fetch") < 0)
		why = xstrdup(merge_git_error());
done:
	for (i = first; i < n; i++) {
		char *ref;

		if (done[i] || strcmp(trees[i].url, url))
			continue;
		done[i] = 1;
		if (why) {
			__fail(&out[i], repo, &trees[i], why);
			continue;
		}
		ref = xstrfmt("refs/feeds/%s", trees[i].name);
		if (integ_ref_get(repo, ref, out[i].tip) == 0)
			out[i].state = FETCH_FETCHED;
		else
			__fail(&out[i], repo, &trees[i], "no ref after fetch");
		free(ref);
	}
	for (i = 0; i < specs.nr; i++)
		free(specs.v[i]);
	free(specs.v);
	free(why);
	git_remote_free(remote);
}

int fetch_trees(struct fetch_result *out, struct integ_repo *repo,
		const struct fetch_tree *trees, size_t n, const struct fetch_creds *creds,
		const char *const *never_merge)
{
	char *done = xcalloc(n ? n : 1, 1);
	size_t i;

	for (i = 0; i < n; i++) {
		const char *pat = fetch_never_merge_match(never_merge, trees[i].name,
							  trees[i].branch);

		out[i].tip[0] = '\0';
		if (pat) {
			out[i].state = FETCH_REFUSED;
			out[i].reason = xstrfmt("never_merge '%s' matches %s (%s)", pat,
						trees[i].name, trees[i].branch);
			done[i] = 1;
		}
	}
	for (i = 0; i < n; i++) {
		if (done[i])
			continue;
		log_progress("fetching %s (%s)", trees[i].name, trees[i].url);
		__fetch_url(out, done, repo, trees, n, i, creds);
	}
	free(done);
	return 0;
}
