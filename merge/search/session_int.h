/*
 * Internal to merge/: a bisection's probing session, shared by the standalone
 * `nextbot bisect` (merge/search/bisect_repo.c) and the nightly search (merge/search/culprit.c):
 * up to SESSION_MAX_JOBS worker checkouts and the probe description.
 */
#ifndef MERGE_SESSION_INT_H
#define MERGE_SESSION_INT_H

#include "merge/search/bisect_int.h"
#include "merge/search/probe_int.h"
#include "merge/worker/worker.h"

#define SESSION_MAX_JOBS 64

/* What the engine's callback needs: the workers and the probe description. */
struct session {
	struct worker *workers[SESSION_MAX_JOBS];
	unsigned jobs;
	const struct probe_spec *spec;  /* borrowed */
	unsigned step;
};

/*
 * Opens min(jobs, SESSION_MAX_JOBS) (at least one) workers of `gitdir` under
 * `scratch`/wN, their checkouts made as `wo` says (merge/worker/worker.h).
 */
int session_open(struct session *s, const char *gitdir, const char *scratch,
		 unsigned jobs, const struct probe_spec *spec, const struct worker_opts *wo);
void session_close(struct session *s);
/* A probe's verdict as the bisection engine's (infrastructure counts as bad here). */
enum bisect_verdict session_verdict(enum probe_verdict v);
/* "untested", "good", "bad", "skip", by enum bisect_verdict. */
extern const char *const session_verdict_word[];

#endif
