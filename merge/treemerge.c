/* In-memory three-way merge of two commits into a tree, for integration and bisection. */
#include <string.h>

#include "merge/treemerge.h"
#include "merge/merge_global.h"
#include "util/error.h"
#include "util/xalloc.h"
#include "util/banned.h"

void treemerge_conflicts_release(struct treemerge_conflicts *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->nr; i++) {
		free(c->items[i].path);
		free(c->items[i].kind);
	}
	free(c->items);
	c->items = NULL;
	c->nr = c->alloc = 0;
}

static void __conflict_add(struct treemerge_conflicts *c, const char *path, const char *kind)
{
	if (!c)
		return;
	ALLOC_GROW(c->items, c->nr + 1, c->alloc);
	c->items[c->nr].path = xstrdup(path);
	c->items[c->nr].kind = xstrdup(kind);
	c->nr++;
}

static int __git_fail(const char *what)
{
	return nb_error_set(NB_ERROR, "%s: %s", what, merge_git_error());
}

/* The conflicts of a libgit2 merge index, each named by the first path it has. */
static void __index_conflicts(struct treemerge_conflicts *c, git_index *index)
{
	git_index_conflict_iterator *it = NULL;
	const git_index_entry *anc, *our, *their;

	if (git_index_conflict_iterator_new(&it, index) < 0)
		return;
	while (git_index_conflict_next(&anc, &our, &their, it) == 0) {
		const char *path = our ? our->path : their ? their->path : anc->path;
		const char *kind;

		if (anc && our && their)
			kind = strcmp(our->path, their->path) || strcmp(anc->path, our->path) ?
				"rename" : "content";
		else if (!anc)
			kind = "add/add";
		else if (our && their)
			kind = "rename";
		else
			kind = "modify/delete";
		__conflict_add(c, path, kind);
	}
	git_index_conflict_iterator_free(it);
}

/* The whole-index merge of libgit2: slow on big trees, but handles renames. */
static int __merge_full(git_oid *out_tree, struct treemerge_conflicts *conflicts,
			git_repository *repo, const git_oid *ours, const git_oid *theirs)
{
	git_merge_options opts;
	git_commit *oc = NULL, *tc = NULL;
	git_index *index = NULL;
	int err;

	git_merge_options_init(&opts, GIT_MERGE_OPTIONS_VERSION);
	opts.flags |= GIT_MERGE_FIND_RENAMES;
	opts.target_limit = 7000;
	if (git_commit_lookup(&oc, repo, ours) < 0 || git_commit_lookup(&tc, repo, theirs) < 0) {
		err = __git_fail("merge: commit lookup");
		goto done;
	}
	if (git_merge_commits(&index, repo, oc, tc, &opts) < 0) {
		err = __git_fail("merge");
		goto done;
	}
	if (git_index_has_conflicts(index)) {
		__index_conflicts(conflicts, index);
		err = nb_error_set(NB_ECONFLICT, "merge conflict");
		goto done;
	}
	err = git_index_write_tree_to(out_tree, index, repo) < 0 ? __git_fail("write tree") : 0;
done:
	git_index_free(index);
	git_commit_free(oc);
	git_commit_free(tc);
	return err;
}

static int __commit_tree_id(git_oid *out, git_repository *repo, const git_oid *commit)
{
	git_commit *c = NULL;

	if (git_commit_lookup(&c, repo, commit) < 0)
		return __git_fail("commit lookup");
	git_oid_cpy(out, git_commit_tree_id(c));
	git_commit_free(c);
	return 0;
}

int treemerge_commits(git_oid *out_tree, int *already_merged,
		      struct treemerge_conflicts *conflicts, git_repository *repo,
		      const git_oid *ours, const git_oid *theirs)
{
	git_oid base;
	int err;

	if (already_merged)
		*already_merged = 0;
	err = git_merge_base(&base, repo, ours, theirs);
	if (err == GIT_ENOTFOUND)
		return nb_error_set(NB_EUNRELATED, "refusing to merge unrelated histories");
	if (err < 0)
		return __git_fail("merge base");
	if (git_oid_equal(&base, theirs)) {
		if (already_merged)
			*already_merged = 1;
		return __commit_tree_id(out_tree, repo, ours);
	}
	if (git_oid_equal(&base, ours))
		return __commit_tree_id(out_tree, repo, theirs);
	return __merge_full(out_tree, conflicts, repo, ours, theirs);
}
