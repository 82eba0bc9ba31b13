/*
 * The bare work repository (workdir/repo.git): refs/feeds/<tree> fetched
 * tips, refs/heads/next, refs/tags/next-YYYYMMDD, refs/nextbot/good/<tree>.
 * Commits are typed ids (struct nb_oid); no libgit2 type leaks out of merge/: the
 * libgit2 handle is in merge/repo_int.h.
 */
#ifndef MERGE_REPO_H
#define MERGE_REPO_H

#include "util/oid.h"
#include <stddef.h>
#include "util/strbuf.h"

struct repo;
struct strvec;

/*
 * The object stores the repository at `gitdir` borrows from: its
 * objects/info/alternates (a repository made with `git clone --reference`, a
 * shared mirror), absolute, in order, at most `max`.  None when it has no such
 * file.  Their own alternates are not followed.
 */
void repo_alternates(struct strvec *out, const char *gitdir, size_t max);

/*
 * Opens the bare repository at `path`, creating it (and its parents) if missing.
 * Removes stale lock files left by a killed run (index.lock, HEAD.lock,
 * packed-refs.lock, config.lock, *.lock under refs/): the caller must hold the run lock.
 * Returns 0 with *out set (free with repo_free()), or NB_ERROR (recorded:
 * damaged repository, repository owned by another user, disk).
 */
int repo_open(struct repo **out, const char *path);
void repo_free(struct repo *repo);
/*
 * For readers that do not hold the run lock (`report`): opens an existing
 * repository, creating nothing and removing no lock.  NB_ENOTFOUND when it is not
 * there.
 */
int repo_open_readonly(struct repo **out, const char *path);
/*
 * A handle for walks over history that exist already (reachability of fetched
 * commits): it reads the commit-graph, so it must never write an object nor look
 * up one written since it was opened (libgit2 1.5.1 maps the graph again at each
 * refresh of its object database and never unmaps the old mapping).
 */
int repo_open_walker(struct repo **out, const char *path);

/*
 * Every fetch leaves a pack per tree: at linux-next's scale 400 a night, and every
 * object lookup searched them one by one.  When objects/pack holds at least
 * REPO_PACKS_FOR_MIDX small packs (index up to 8 MiB) not all covered by it, this
 * writes a multi-pack-index over them (as `git multi-pack-index write` does; big
 * packs stay searched on their own, so the nightly rewrite stays cheap) and makes
 * the open repository use it.  A failure costs only speed: logged, 0 returned.
 */
#define REPO_PACKS_FOR_MIDX 16
int repo_index_packs(struct repo *repo);

/*
 * git (gc, fsck, rev-list, a maintainer's look at the work repository) and libgit2
 * readers walk history: a kernel's is a million commits.  This writes
 * objects/info/commit-graph over every commit a ref reaches (as `git commit-graph
 * write --reachable`: parents, dates and generation numbers without inflating
 * commits) when a ref names a commit the graph was not written from.  The tips it was
 * written from are in <gitdir>/nextbot-commit-graph-tips.  The handles repo_open()
 * and repo_open_readonly() give do not read it (libgit2 1.5.1 leaks a mapping of it
 * per object written; merge/commitgraph_int.h): the night's merge bases do not walk
 * history (merge/nightbase.c).  A failure costs only speed: logged, 0 returned.
 */
int repo_write_commit_graph(struct repo *repo);

/* The repository's path as given; borrowed, valid until repo_free(). */
const char *repo_gitdir(const struct repo *repo);


/*
 * Resolves a ref name ("refs/feeds/mm-next") or any revision to a commit id in
 * `out` (40 hex + NUL).  NB_ENOTFOUND (recorded) if it does not exist.
 */
int repo_ref_get(struct repo *repo, const char *refname, struct nb_oid *out);
/* Points `refname` at commit `hex` (created or forced); `hex` NULL deletes it. */
int repo_ref_set(struct repo *repo, const char *refname, const struct nb_oid *hex);

/* refs/nextbot/good/<tree>: the tree's last good tip.  NB_ENOTFOUND when none. */
int repo_good_get(struct repo *repo, const char *tree, struct nb_oid *out);
int repo_good_set(struct repo *repo, const char *tree, const struct nb_oid *hex);

/* The subject (first line) of a commit, malloc'd (caller frees); "" if unknown. */
char *repo_commit_subject(struct repo *repo, const char *hex);

/*
 * Appends at most `max` bytes of the file `path` of the commit `refname` names (a
 * ref or a hex id; a tag is peeled) to `out`.  NB_ENOTFOUND (recorded) when there is
 * no such commit or file.
 */
int repo_read_path(struct strbuf *out, struct repo *repo, const char *refname,
		    const char *path, size_t max);

#endif
