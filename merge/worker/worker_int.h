/*
 * Worker directories: a kept checkout of the work repository, so that moving it
 * from one commit to another rewrites only the files that differ and a build in it
 * stays incremental.  One worker per thread.
 *
 * A worker's tree is hostile: the commands that ran in it left whatever they
 * wanted.  So nextbot never writes it, never opens anything in it and never follows
 * a path through it with its own rights: the checkout is made by a child,
 * `nextbot worker-checkout`, that runs as the runner user (in the sandbox when
 * there is one, with only that worker writable and the work repository read-only),
 * and the only thing nextbot itself does in a worker is remove it for a pristine
 * checkout (util/fileutil's removal: no symlink followed, nothing but folders
 * opened).  Layout of <dir>, all of it nextbot's (0711) but for three folders
 * that are the runner user's (0700):
 *
 *   <dir>/tree   the checkout; <dir>/tree/.git says "gitdir: <dir>/git"
 *   <dir>/git    its git dir: HEAD (the commit checked out), index, and a
 *                `commondir` naming the work repository, whose objects and refs
 *                it shares (as `git worktree` does): in the tree, git log,
 *                git describe and git diff work as in a clone
 *   <dir>/run    the runner's own files, outside the sandbox (Slurm's status)
 *   <dir>/busy   nextbot's marker that commands are running in the tree
 */
#ifndef MERGE_WORKER_INT_H
#define MERGE_WORKER_INT_H

#include <git2.h>

struct runcmd_box;
struct strbuf;
struct worker;

struct worker_opts {
	const char *exe;          /* nextbot's binary, run as `<exe> worker-checkout` */
	const char *user;         /* as root: the runner user, who owns and writes the
				     tree (never root); NULL: ourselves */
	const struct runcmd_box *box; /* the sandbox (its hide list); NULL: none */
	double timeout;           /* seconds one checkout may take; 0: 30 minutes */
	int (*stop)(void *data);  /* asked while it runs: nonzero ends it (the deadline) */
	void *stop_data;
};

/*
 * Opens worker directory `dir` (created if missing) over the repository at
 * `repo_path` (bare or not; never written).  Returns 0 or NB_ERROR (recorded).
 * `opts` is copied (its strings and box are borrowed: they must outlive the
 * worker).  Free with worker_free().
 */
int worker_open(struct worker **out, const char *repo_path, const char *dir,
		const struct worker_opts *opts);
void worker_free(struct worker *w);

/*
 * Makes the worker's tree hold `commit`, by the child: files that differ from
 * what the worker's index says is there are rewritten, files gone are removed,
 * untracked files (build output) are kept.  A tree holding anything a checkout
 * could be tricked by (a FIFO, socket or device, a folder it cannot enter, a hard
 * link, a setuid file, a symlink where the commit has files) is rebuilt pristine,
 * with a warning naming it; so is one whose incremental checkout fails.  With
 * `pristine` the tree is removed first, so nothing of an earlier build remains.
 * Returns 0 or NB_ENOTFOUND/NB_ERROR (recorded; the child's words in it).
 */
int worker_checkout(struct worker *w, const git_oid *commit, int pristine);

/*
 * After the worker's commands on `commit_hex`, the last of them named `what`: when
 * its disk is short (merge/worker/worker.h: worker_min_free_set()), its tree and git dir
 * are removed (the next checkout is pristine), the event is kept for
 * worker_disk_events_take(), and 1 is returned with `why` (caller's) saying so;
 * else 0.
 */
int worker_disk_settle(struct worker *w, const char *commit_hex, const char *what,
		       struct strbuf *why);

/* The checkout directory ("<dir>/tree"); valid while the worker is. */
const char *worker_tree_path(const struct worker *w);
/* The worker's git dir ("<dir>/git"); valid while the worker is. */
const char *worker_git_path(const struct worker *w);
/* The runner's folder beside the tree ("<dir>/run"); valid while the worker is. */
const char *worker_run_path(const struct worker *w);
/* The work repository's common dir (objects, refs); valid while the worker is. */
const char *worker_common_path(const struct worker *w);
/*
 * What a command's box shows read-only so that the worker's tree is a git working
 * tree in it: the repository, the worker's git dir and the object stores the
 * repository borrows from (its alternates).  NULL-terminated; the worker's.
 */
const char *const *worker_read_only(const struct worker *w);
/* nextbot's handle on the work repository (use it from the worker's thread only). */
git_repository *worker_repo(struct worker *w);

/* The child's side, for bot/: merge/worker/worker.h. */

#endif
