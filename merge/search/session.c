/* The worker checkouts a bisection probes its commits in, shared by its two users. */
#include <stdlib.h>

#include "merge/search/session_int.h"
#include "util/xalloc.h"
#include "util/banned.h"

const char *const session_verdict_word[] = { "untested", "good", "bad", "skip" };

enum bisect_verdict session_verdict(enum probe_verdict v)
{
	return v == PROBE_GOOD ? BISECT_GOOD : v == PROBE_SKIP ? BISECT_SKIP : BISECT_BAD;
}

int session_open(struct session *s, const char *gitdir, const char *scratch,
		 unsigned jobs, const struct probe_spec *spec, const struct worker_opts *wo)
{
	unsigned i;
	int err = 0;

	s->jobs = jobs > SESSION_MAX_JOBS ? SESSION_MAX_JOBS : jobs ? jobs : 1;
	s->spec = spec;
	for (i = 0; i < s->jobs && err >= 0; i++) {
		char *dir = xstrfmt("%s/w%u", scratch, i);

		err = worker_open(&s->workers[i], gitdir, dir, wo);
		free(dir);
	}
	return err;
}

void session_close(struct session *s)
{
	unsigned i;

	for (i = 0; i < s->jobs; i++) {
		worker_free(s->workers[i]);
		s->workers[i] = NULL;
	}
}

