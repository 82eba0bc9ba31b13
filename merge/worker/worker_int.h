/*
 * Internal to merge/worker/: libgit2's side of a worker (its door,
 * merge/worker/worker.h, says what a worker is and holds the rest of its API).
 */
#ifndef MERGE_WORKER_INT_H
#define MERGE_WORKER_INT_H

#include <git2.h>
#include "merge/worker/worker.h"

/* worker_checkout() by libgit2's id (the unit tests and the bench hold git_oids). */
int worker_checkout_git(struct worker *w, const git_oid *commit, int pristine);

/* The work repository's common dir (objects, refs); valid while the worker is. */
const char *worker_common_path(const struct worker *w);

#endif
