/*
 * Worker checkouts, merge/worker/'s door: the kept checkouts of the work repository
 * that the search room (merge/search/) probes commits in, and the checkout child's
 * entry (`nextbot worker-checkout`, run by nextbot itself as the runner user, in the
 * sandbox) that bot/ calls.  Commits cross as struct nb_oid; libgit2's side (a
 * checkout by git_oid, for the unit tests) is merge/worker/worker_int.h.
 *
 * A worker directory is a kept checkout, so that moving it from one commit to
 * another rewrites only the files that differ and a build in it stays incremental.
 * One worker per thread.
 *
 * A worker's tree is hostile: the commands that ran in it left whatever they
 * wanted.  So nextbot never writes it, never opens anything in it and never follows
 * a path through it with its own rights: the checkout is made by the child, that
 * runs as the runner user (in the sandbox when there is one, with only that worker
 * writable and the work repository read-only), and the only thing nextbot itself
 * does in a worker is remove it for a pristine checkout (util/fileutil's removal:
 * no symlink followed, nothing but folders opened).  Layout of <dir>, all of it
 * nextbot's (0711) but for three folders that are the runner user's (0700):
 *
 *   <dir>/tree   the checkout; <dir>/tree/.git says "gitdir: <dir>/git"
 *   <dir>/git    its git dir: HEAD (the commit checked out), index, and a
 *                `commondir` naming the work repository, whose objects and refs
 *                it shares (as `git worktree` does): in the tree, git log,
 *                git describe and git diff work as in a clone
 *   <dir>/run    the runner's own files, outside the sandbox (Slurm's status)
 *   <dir>/busy   nextbot's marker that commands are running in the tree
 */
#ifndef MERGE_WORKER_H
#define MERGE_WORKER_H

#include "util/strbuf.h"
#include "util/oid.h"
#include "util/strvec.h"

struct runcmd_box;
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
int worker_checkout(struct worker *w, const struct nb_oid *commit, int pristine);

/*
 * The tree `commit` has, read from the work repository through the worker's own
 * handle (from the worker's thread only): 0, or NB_ENOTFOUND/NB_EINVALID (recorded)
 * when there is no such commit.
 */
int worker_commit_tree(struct nb_oid *tree, struct worker *w, const struct nb_oid *commit);

/*
 * After the worker's commands on `commit`, the last of them named `what`: when
 * its disk is short (worker_min_free_set() below), its tree and git dir are removed
 * (the next checkout is pristine), the event is kept for worker_disk_events_take(),
 * and 1 is returned with `why` (caller's) saying so; else 0.
 */
int worker_disk_settle(struct worker *w, const struct nb_oid *commit, const char *what,
		       struct strbuf *why);

/* The checkout directory ("<dir>/tree"); valid while the worker is. */
const char *worker_tree_path(const struct worker *w);
/* The worker's git dir ("<dir>/git"); valid while the worker is. */
const char *worker_git_path(const struct worker *w);
/* The runner's folder beside the tree ("<dir>/run"); valid while the worker is. */
const char *worker_run_path(const struct worker *w);
/*
 * What a command's box shows read-only so that the worker's tree is a git working
 * tree in it: the repository, the worker's git dir and the object stores the
 * repository borrows from (its alternates).  NULL-terminated; the worker's.
 */
const char *const *worker_read_only(const struct worker *w);

/* ---- the checkout child ---- */

/*
 * Checks `commit` out into <dir>/tree with <dir>/git as its git dir over
 * `common_dir` (the work repository: objects and refs shared, as `git worktree`
 * does).  Without `pristine` it first looks for traps in the tree (never following
 * or opening anything but folders); returns 1 with a message in `why` (caller's
 * strbuf) when it finds one or the git dir is missing, so that the caller removes
 * the tree and asks again pristine.  Returns 0 when done, NB_ENOTFOUND or NB_ERROR
 * (recorded) when the checkout failed.
 */
int worker_checkout_here(struct strbuf *why, const char *common_dir, const char *dir,
			 const struct nb_oid *commit, int pristine);

/*
 * The whole child: worker_checkout_here(), its words (a trap, an error) written to
 * fd 1 with write(2), and the exit status the parent reads: 0 done, 1 failed, 2 no
 * such commit, 3 check out pristine.  libgit2 must be started.
 */
int worker_checkout_child(const char *common_dir, const char *dir, const struct nb_oid *commit,
			  int pristine);

/* ---- disposable workers ---- */

/*
 * Disposable workers, process-wide: after its commands, a worker whose disk has
 * less than `bytes` free (or fewer than 1000 inodes) is removed at once, so that
 * what its commands left cannot fill the disk for the commands after them (0, the
 * default: never).  Set it before any worker is used.
 */
void worker_min_free_set(unsigned long long bytes);
/*
 * What gives way before a worker is judged short (the compiler cache's store): fn
 * is called with the floor, then the disk is looked at again.  NULL: nothing.
 */
void worker_disk_relief_set(void (*fn)(unsigned long long floor));
/*
 * What workers said since the last call, one line each ("`build` of 1a2b3c4d5e6f
 * left the disk of ... short (...); its worker was removed"), appended to `out`
 * and forgotten.
 */
void worker_disk_events_take(struct strvec *out);

#endif
