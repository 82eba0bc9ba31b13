/*
 * The checkout child's entry (`nextbot worker-checkout`, run by nextbot itself as
 * the runner user, in the sandbox): the one part of merge/worker/worker.c that bot/
 * calls.  The rest, the workers nextbot keeps, is merge/worker/worker_int.h.
 */
#ifndef MERGE_WORKER_H
#define MERGE_WORKER_H

#include "util/strbuf.h"
#include "util/oid.h"
#include "util/strvec.h"

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

/*
 * Disposable workers, process-wide: after its commands, a worker whose disk has
 * less than `bytes` free (or fewer than 1000 inodes) is removed at once, so that
 * what its commands left cannot fill the disk for the commands after them (0, the
 * default: never).  Set it before any worker is used.
 */
void worker_min_free_set(unsigned long long bytes);
/*
 * What workers said since the last call, one line each ("`build` of 1a2b3c4d5e6f
 * left the disk of ... short (...); its worker was removed"), appended to `out`
 * and forgotten.
 */
void worker_disk_events_take(struct strvec *out);

#endif
