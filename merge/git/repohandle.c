/* The work repository's libgit2 handle and its commit graph (merge/git/repohandle_int.h). */
#include <stdlib.h>
#include <git2.h>

#include "merge/git/repohandle_int.h"
#include "merge/git/mergebase_int.h"
#include "util/xalloc.h"
#include "util/banned.h"

struct repo {
	git_repository *git;
	char *path;
	struct mbgraph *graph;  /* made on first use (repo_graph()) */
};

struct repo *repo_handle_wrap(git_repository *git, const char *path)
{
	struct repo *r = xcalloc(1, sizeof(*r));

	r->git = git;
	r->path = xstrdup(path);
	return r;
}

void repo_handle_free(struct repo *repo)
{
	if (!repo)
		return;
	mbgraph_free(repo->graph);
	git_repository_free(repo->git);
	free(repo->path);
	free(repo);
}

const char *repo_handle_path(const struct repo *repo)
{
	return repo->path;
}

git_repository *repo_git(struct repo *repo)
{
	return repo->git;
}

struct mbgraph *repo_graph(struct repo *repo)
{
	if (!repo->graph)
		repo->graph = mbgraph_new(repo->git);
	return repo->graph;
}
