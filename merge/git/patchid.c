/* Patch identity: git's stable patch-id of a commit, through libgit2. */
#include <string.h>

#include "merge/git/git_int.h"
#include "merge/git/patchid_int.h"
#include "merge/git/treediff_int.h"
#include "util/error.h"
#include "util/banned.h"

static int binary_cb(const git_diff_delta *delta, const git_diff_binary *binary, void *payload)
{
	*(int *)payload = 1;
	return 1; /* stop: one binary file is enough to know */
}

static int file_cb(const git_diff_delta *delta, float progress, void *payload)
{
	int empty_add = delta->status == GIT_DELTA_ADDED && !delta->new_file.size;
	int empty_del = delta->status == GIT_DELTA_DELETED && !delta->old_file.size;

	if ((delta->flags & GIT_DIFF_FLAG_BINARY) || empty_add || empty_del) {
		*(int *)payload = 1;
		return 1;
	}
	return 0;
}

/*
 * 1 if the diff touches a binary file or adds or deletes an empty one.  git
 * patch-id hashes the blob ids of a binary change and the header lines of a
 * change without hunks; libgit2 1.5 hashes neither: they disagree, so such
 * commits get no patch-id.  (A mode change alone hashes alike in both.)
 */
static int diff_has_binary(int *out, git_diff *diff)
{
	int error;

	*out = 0;
	error = git_diff_foreach(diff, file_cb, binary_cb, NULL, NULL, out);
	if (error < 0 && error != GIT_EUSER)
		return merge_git_fail("diff");
	return 0;
}

int merge_patch_id(struct nb_patchid *out, git_repository *repo, const git_commit *commit)
{
	git_commit *parent = NULL;
	git_tree *old_tree = NULL, *new_tree = NULL;
	git_diff *diff = NULL;
	git_diff_options opts;
	git_oid id;
	int error = 0, binary;

	*out = (struct nb_patchid)NB_PATCHID_NONE;
	git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	if (git_commit_parentcount(commit) != 1) {
		error = nb_error_set(NB_ENOTFOUND, "commit %.12s is a %s commit: no patch-id",
				     git_oid_tostr_s(git_commit_id(commit)),
				     git_commit_parentcount(commit) ? "merge" : "root");
		goto done;
	}
	if (git_commit_parent(&parent, commit, 0) < 0 ||
	    git_commit_tree(&old_tree, parent) < 0 || git_commit_tree(&new_tree, commit) < 0 ||
	    treediff_new(&diff, repo, old_tree, new_tree, &opts) < 0) {
		error = merge_git_fail("patch-id");
		goto done;
	}
	if (!git_diff_num_deltas(diff)) {
		error = nb_error_set(NB_ENOTFOUND, "commit %.12s changes nothing: no patch-id",
				     git_oid_tostr_s(git_commit_id(commit)));
		goto done;
	}
	if ((error = diff_has_binary(&binary, diff)) < 0)
		goto done;
	if (binary) {
		error = nb_error_set(NB_ENOTFOUND,
				     "commit %.12s changes a binary or empty file: no patch-id",
				     git_oid_tostr_s(git_commit_id(commit)));
		goto done;
	}
	if (git_diff_patchid(&id, diff, NULL) < 0) {
		error = merge_git_fail("patch-id");
		goto done;
	}
	nb_patchid_set_raw(out, id.id);
done:
	git_diff_free(diff);
	git_tree_free(old_tree);
	git_tree_free(new_tree);
	git_commit_free(parent);
	return error;
}

int merge_patch_id_oid(struct nb_patchid *out, git_repository *repo, const git_oid *id)
{
	git_commit *commit = NULL;
	int error;

	*out = (struct nb_patchid)NB_PATCHID_NONE;
	if (git_commit_lookup(&commit, repo, id) < 0)
		return nb_error_set(NB_ENOTFOUND, "no commit %s", git_oid_tostr_s(id));
	error = merge_patch_id(out, repo, commit);
	git_commit_free(commit);
	return error;
}
