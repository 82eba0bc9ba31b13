/* Cherry-picking a tree's commits again without the ones a maintainer dropped. */
#include <stdlib.h>
#include <string.h>

#include "merge/git/git_int.h"
#include "merge/integrate/replay_int.h"
#include "merge/repo/repo.h"
#include "merge/git/patchid_int.h"
#include "merge/git/treemerge_int.h"
#include "util/error.h"
#include "util/xalloc.h"
#include "util/banned.h"

void replay_result_release(struct replay_result *r)
{
	strvec_clear(&r->left_out);
	strvec_clear(&r->reasons);
}

int replay_is_dropped(git_repository *repo, const git_commit *commit,
		      const struct integ_drops *drops)
{
	struct nb_patchid pid;
	char *msgid;
	size_t i;
	int hit = 0;

	if (!drops || (!drops->patch_ids_nr && !drops->message_ids_nr))
		return 0;
	if (drops->patch_ids_nr && merge_patch_id(&pid, repo, commit) == 0) {
		for (i = 0; i < drops->patch_ids_nr && !hit; i++)
			hit = nb_patchid_eq(&pid, &drops->patch_ids[i]);
	}
	if (!hit && drops->message_ids_nr) {
		msgid = trailer_message_id(git_commit_message(commit));
		for (i = 0; msgid && i < drops->message_ids_nr && !hit; i++)
			hit = !strcmp(msgid, drops->message_ids[i]);
		free(msgid);
	}
	return hit;
}

/* Cherry-picks `c` onto *head; NB_ECONFLICT when it does not apply. */
static int pick(git_oid *head, git_repository *repo, git_commit *c,
		  const git_signature *committer)
{
	git_commit *parent = NULL, *onto = NULL;
	git_tree *tree = NULL;
	git_oid merged;
	int err;

	if (git_commit_parent(&parent, c, 0) < 0 || git_commit_lookup(&onto, repo, head) < 0) {
		err = merge_git_fail("replay: parent lookup");
		goto done;
	}
	err = treemerge_trees(&merged, NULL, repo, git_commit_tree_id(parent),
			      git_commit_tree_id(onto), git_commit_tree_id(c));
	if (err < 0)
		goto done;
	if (git_tree_lookup(&tree, repo, &merged) < 0 ||
	    git_commit_create(head, repo, NULL, git_commit_author(c), committer,
			      git_commit_message_encoding(c), git_commit_message(c), tree, 1,
			      (const git_commit **)&onto) < 0)
		err = merge_git_fail("replay: commit");
done:
	git_tree_free(tree);
	git_commit_free(parent);
	git_commit_free(onto);
	return err;
}

/* The tree's commits since `mb`, oldest first, with the dropped ones marked. */
static int collect(git_oid **ids, char **dropped, size_t *nr, git_repository *repo,
		     const git_oid *mb, const git_oid *tip, const struct integ_drops *drops)
{
	git_revwalk *walk = NULL;
	size_t alloc = 0, dalloc = 0;
	git_oid id;
	int err;

	if (git_revwalk_new(&walk, repo) < 0 || git_revwalk_push(walk, tip) < 0 ||
	    git_revwalk_hide(walk, mb) < 0 ||
	    git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE) < 0) {
		err = merge_git_fail("replay: walk");
		goto done;
	}
	while ((err = git_revwalk_next(&id, walk)) == 0) {
		git_commit *c = NULL;

		if (git_commit_lookup(&c, repo, &id) < 0) {
			err = merge_git_fail("replay: commit lookup");
			goto done;
		}
		ALLOC_GROW(*ids, *nr + 1, alloc);
		ALLOC_GROW(*dropped, *nr + 1, dalloc);
		git_oid_cpy(&(*ids)[*nr], &id);
		(*dropped)[(*nr)++] = (char)replay_is_dropped(repo, c, drops);
		git_commit_free(c);
	}
	err = err == GIT_ITEROVER ? 0 : merge_git_fail("replay: walk");
done:
	git_revwalk_free(walk);
	return err;
}

int replay_without_drops(struct replay_result *out, git_repository *repo,
			 const git_oid *base, const git_oid *tip,
			 const struct integ_drops *drops, const git_signature *committer)
{
	git_oid *ids = NULL, mb;
	char *dropped = NULL, hex[NB_OID_HEXSZ + 1];
	size_t i, nr = 0;
	int err;

	out->changed = 0;
	git_oid_cpy(&out->head, tip);
	if (git_merge_base(&mb, repo, base, tip) < 0)
		return 0;               /* unrelated: the merge itself refuses it */
	if ((err = collect(&ids, &dropped, &nr, repo, &mb, tip, drops)) < 0)
		goto done;
	for (i = 0; i < nr && !dropped[i]; i++)
		;
	if (i == nr)
		goto done;              /* nothing dropped: merge the tip itself */
	out->changed = 1;
	git_oid_cpy(&out->head, &mb);
	for (i = 0; i < nr && !err; i++) {
		git_commit *c = NULL;

		git_oid_tostr(hex, sizeof(hex), &ids[i]);
		if (dropped[i]) {
			strvec_push(&out->left_out, hex);
			strvec_push(&out->reasons, "dropped");
			continue;
		}
		if (git_commit_lookup(&c, repo, &ids[i]) < 0) {
			err = merge_git_fail("replay: commit lookup");
			break;
		}
		if (git_commit_parentcount(c) == 1 &&
		    (err = pick(&out->head, repo, c, committer)) == NB_ECONFLICT) {
			strvec_push(&out->left_out, hex);
			strvec_push(&out->reasons, "no longer applies without the dropped patches");
			err = 0;
		}
		git_commit_free(c);
	}
done:
	free(ids);
	free(dropped);
	return err;
}
