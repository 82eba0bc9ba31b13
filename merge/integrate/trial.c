/* A trial merge of someone's branch in place of a tree, for `#nextbot test:`. */
#include <stdlib.h>
#include <git2.h>

#include "merge/git/git_int.h"
#include "merge/repo/repo.h"
#include "merge/git/repohandle_int.h"
#include "merge/git/treemerge_int.h"
#include "merge/integrate/integrate.h"
#include "util/error.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define PATHS_MAX 20

int trial_merge(struct nb_oid *out, struct strvec *paths, struct repo *repo,
		const struct trial_merge_opts *o)
{
	const struct nb_oid *onto = o->onto, *tip = o->tip;
	const char *branch = o->branch, *url = o->url, *identity = o->identity, *date = o->date;
	struct treemerge_conflicts conflicts = TREEMERGE_CONFLICTS_INIT;
	git_repository *git = repo_git(repo);
	git_commit *parents[2] = { NULL, NULL };
	git_signature *sig = NULL;
	git_tree *tree = NULL;
	git_oid ours, theirs, tree_id, id;
	char *msg = NULL;
	int already = 0, err;
	size_t i;

	nb_oid_clear(out);
	if ((err = merge_oid_to_git(&ours, onto)) < 0 || (err = merge_oid_to_git(&theirs, tip)) < 0)
		goto done;
	if (git_commit_lookup(&parents[0], git, &ours) < 0 ||
	    git_commit_lookup(&parents[1], git, &theirs) < 0) {
		err = nb_error_set(NB_ENOTFOUND, "trial merge: %s", merge_git_error());
		goto done;
	}
	err = treemerge_commits(&tree_id, &already, &conflicts, git, &ours, &theirs);
	if (err == NB_ECONFLICT) {
		for (i = 0; paths && i < conflicts.nr && i < PATHS_MAX; i++)
			strvec_push(paths, conflicts.items[i].path);
		err = nb_error_set(NB_ECONFLICT, "%s does not merge: %zu conflicting path%s",
				   branch, conflicts.nr, conflicts.nr == 1 ? "" : "s");
		goto done;
	}
	if (err < 0)
		goto done;
	if (already) {
		*out = *onto;
		goto done;
	}
	msg = xstrfmt("Merge branch '%s' of %s\n", branch, url);
	if ((err = merge_signature(&sig, identity, date)) < 0)
		goto done;
	if (git_tree_lookup(&tree, git, &tree_id) < 0 ||
	    git_commit_create(&id, git, NULL, sig, sig, NULL, msg, tree, 2,
			      (const git_commit **)parents) < 0) {
		err = merge_git_fail("trial merge commit");
		goto done;
	}
	merge_oid_from_git(out, &id);
done:
	treemerge_conflicts_release(&conflicts);
	git_commit_free(parents[0]);
	git_commit_free(parents[1]);
	git_tree_free(tree);
	git_signature_free(sig);
	free(msg);
	return err;
}
