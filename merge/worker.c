/* Worker checkouts with their own index: incremental moves between commits. */
#include <stdlib.h>
#include <string.h>

#include <git2/sys/repository.h>

#include "merge/git_int.h"
#include "merge/worker_int.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

struct worker {
	char *dir;
	char *tree;
	char *index_path;
	git_repository *repo;
	git_index *index;
};

/* (Re)opens the worker's index file and makes it the handle's index. */
static int open_index(struct worker *w)
{
	git_index_free(w->index);
	w->index = NULL;
	if (git_index_open(&w->index, w->index_path) < 0)
		return merge_git_fail("worker %s: opening the index", w->dir);
	git_repository_set_index(w->repo, w->index);
	return 0;
}

int worker_open(struct worker **out, const char *repo_path, const char *dir)
{
	struct worker *w = xcalloc(1, sizeof(*w));
	int err;

	*out = NULL;
	w->dir = xstrdup(dir);
	w->tree = xstrfmt("%s/tree", dir);
	w->index_path = xstrfmt("%s/index", dir);
	if ((err = file_mkdir_p(w->tree, 0711)) < 0)
		goto done;
	if (git_repository_open(&w->repo, repo_path) < 0) {
		err = merge_git_fail("worker %s: opening the repository", dir);
		goto done;
	}
	err = 0;        /* the index is read by the first checkout: a cached verdict needs none */
done:
	if (err < 0)
		worker_free(w);
	else
		*out = w;
	return err;
}

void worker_free(struct worker *w)
{
	if (!w)
		return;
	git_index_free(w->index);
	git_repository_free(w->repo);
	free(w->dir);
	free(w->tree);
	free(w->index_path);
	free(w);
}

static int wipe(struct worker *w)
{
	int err;

	if ((err = file_remove_tree(w->tree)) < 0 || (err = file_remove_tree(w->index_path)) < 0)
		return err;
	if ((err = file_mkdir_p(w->tree, 0711)) < 0)
		return err;
	return open_index(w);
}

int worker_checkout(struct worker *w, const git_oid *commit, int pristine)
{
	git_checkout_options opts;
	git_commit *c = NULL;
	git_tree *tree = NULL;
	int err;

	if (pristine && (err = wipe(w)) < 0)
		return err;
	if (!w->index && (err = open_index(w)) < 0)
		return err;
	if (git_commit_lookup(&c, w->repo, commit) < 0 || git_commit_tree(&tree, c) < 0) {
		err = nb_error_set(NB_ENOTFOUND, "worker %s: no commit %s", w->dir,
				   git_oid_tostr_s(commit));
		goto done;
	}
	git_checkout_options_init(&opts, GIT_CHECKOUT_OPTIONS_VERSION);
	/*
	 * The baseline is what the worker's index says is on disk (not the
	 * repository's HEAD): files equal in both are left alone, their mtimes too.
	 */
	opts.checkout_strategy = GIT_CHECKOUT_FORCE;
	opts.target_directory = w->tree;
	opts.baseline_index = w->index;
	if (git_checkout_tree(w->repo, (git_object *)tree, &opts) < 0) {
		err = merge_git_fail("worker %s: checkout", w->dir);
		goto done;
	}
	if (git_index_write(w->index) < 0)
		err = merge_git_fail("worker %s: writing the index", w->dir);
	else
		err = 0;
done:
	git_tree_free(tree);
	git_commit_free(c);
	return err;
}

const char *worker_tree_path(const struct worker *w)
{
	return w->tree;
}

git_repository *worker_repo(struct worker *w)
{
	return w->repo;
}
