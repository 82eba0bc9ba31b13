/* Rewriting a tree's branch on its remote without a dropped patch, checked, then pushed. */
#include <string.h>
#include <git2.h>

#include "merge/git/repohandle_int.h"
#include "merge/git/git_int.h"
#include "merge/integrate/integrate.h"
#include "merge/repo/repo.h"
#include "merge/transport/transport.h"
#include "merge/integrate/replay_int.h"
#include "util/error.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "util/banned.h"

void droppush_result_release(struct droppush_result *r)
{
	strvec_clear(&r->left_out);
	strvec_clear(&r->reasons);
}

/* "Name <email>", now. */
static int signature(git_signature **out, const char *ident)
{
	const char *lt = ident ? strchr(ident, '<') : NULL, *gt = lt ? strchr(lt, '>') : NULL;
	char *name, *email;
	size_t n;
	int err;

	if (!lt || !gt || gt == lt + 1)
		return nb_error_set(NB_EINVALID, "bad identity '%s' (want Name <email>)",
				    ident ? ident : "");
	for (n = (size_t)(lt - ident); n && ident[n - 1] == ' '; n--)
		;
	name = xstrndup(ident, n);
	email = xstrndup(lt + 1, (size_t)(gt - lt - 1));
	err = git_signature_now(out, *name ? name : email, email);
	free(name);
	free(email);
	return err < 0 ? nb_error_set(NB_EINVALID, "bad identity '%s': %s", ident,
				      merge_git_error()) : 0;
}

/* refs/feeds/<name> as an id; NB_ENOTFOUND (recorded) when never fetched. */
static int feed(git_oid *id, struct nb_oid *hex, struct repo *repo, const char *name)
{
	char *ref = xstrfmt("refs/feeds/%s", name);
	int err = repo_ref_get(repo, ref, hex);

	free(ref);
	if (err < 0)
		return nb_error_set(NB_ENOTFOUND, "%s was never fetched (run `nextbot run` first)",
				    name);
	return merge_oid_to_git(id, hex);
}

/* The replay of the tree without the drops into *out. */
static int replay(struct droppush_result *out, struct repo *repo, const char *base_name,
		    const struct integ_tree *tree, const struct integ_drops *drops,
		    const char *committer)
{
	struct replay_result rr = REPLAY_RESULT_INIT;
	git_signature *sig = NULL;
	git_oid base, tip;
	struct nb_oid base_hex;
	size_t i;
	int err;

	if ((err = feed(&base, &base_hex, repo, base_name)) < 0 ||
	    (err = feed(&tip, &out->old_tip, repo, tree->name)) < 0 ||
	    (err = signature(&sig, committer)) < 0)
		goto done;
	if ((err = replay_without_drops(&rr, repo_git(repo), &base, &tip, drops, sig)) < 0)
		goto done;
	out->changed = rr.changed;
	if (rr.changed)
		git_oid_tostr(out->new_tip.hex, sizeof(out->new_tip), &rr.head);
	for (i = 0; i < rr.left_out.nr; i++) {
		strvec_push(&out->left_out, rr.left_out.v[i]);
		strvec_push(&out->reasons, rr.reasons.v[i]);
	}
done:
	replay_result_release(&rr);
	git_signature_free(sig);
	return err;
}

int droppush_tree(struct droppush_result *out, struct repo *repo, const char *base_name,
		  const struct integ_tree *tree, const struct integ_drops *drops,
		  const char *committer, const struct fetch_creds *creds)
{
	char *dst = xstrfmt("refs/heads/%s", tree->branch), *feed;
	int err;

	if ((err = replay(out, repo, base_name, tree, drops, committer)) < 0 || !out->changed)
		goto done;
	log_info("%s: %.12s rewritten as %.12s without %zu commit(s)", tree->name, out->old_tip.hex,
		 out->new_tip.hex, out->left_out.nr);
	if ((err = push_ref(repo, tree->url, &out->new_tip, dst, 1, &out->old_tip, creds)) < 0)
		goto done;
	feed = xstrfmt("refs/feeds/%s", tree->name);
	if (repo_ref_set(repo, feed, &out->new_tip) < 0)   /* the next fetch sets it */
		log_warn("pushed, but %s still names the old tip: %s", feed, nb_error_last());
	free(feed);
done:
	free(dst);
	return err;
}
