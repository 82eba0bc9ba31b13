/* Culprit searches: the standalone bisection and the nightly two-level search. */
#include <stdlib.h>
#include <string.h>

#include "merge/bisect.h"
#include "merge/culprit.h"
#include "merge/merge_global.h"
#include "merge/probe.h"
#include "merge/worker.h"
#include "util/error.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define MAX_JOBS 64

static const char *const verdict_word[] = { "untested", "good", "bad", "skip" };

/* What the engine's callback needs: the workers and the probe description. */
struct session {
	struct worker *workers[MAX_JOBS];
	unsigned jobs;
	const struct probe_spec *spec;
	unsigned step;
};

static enum bisect_verdict __to_bisect(enum probe_verdict v)
{
	return v == PROBE_GOOD ? BISECT_GOOD : v == PROBE_SKIP ? BISECT_SKIP : BISECT_BAD;
}

static int __session_open(struct session *s, const char *gitdir, const char *scratch,
			  unsigned jobs, const struct probe_spec *spec)
{
	unsigned i;
	int err = 0;

	s->jobs = jobs > MAX_JOBS ? MAX_JOBS : jobs ? jobs : 1;
	s->spec = spec;
	for (i = 0; i < s->jobs && err >= 0; i++) {
		char *dir = xstrfmt("%s/w%u", scratch, i);

		err = worker_open(&s->workers[i], gitdir, dir);
		free(dir);
	}
	return err;
}

static void __session_close(struct session *s)
{
	unsigned i;

	for (i = 0; i < s->jobs; i++) {
		worker_free(s->workers[i]);
		s->workers[i] = NULL;
	}
}

/* The engine's callback for a plain bisection: probe the commits, INFRA stops it. */
static int __test_commits(void *data, const struct bisect_graph *g, const size_t *nodes,
			  size_t n, enum bisect_verdict *out)
{
	struct session *s = data;
	struct probe_result res[MAX_JOBS];
	git_oid ids[MAX_JOBS];
	size_t i;
	int err;

	memset(ids, 0, sizeof(ids));
	for (i = 0; i < n; i++) {
		git_oid_fromstr(&ids[i], g->nodes[nodes[i]].id);
		res[i] = (struct probe_result)PROBE_RESULT_INIT;
	}
	err = probe_run_many(res, s->workers, ids, n, s->step + 1, s->spec);
	for (i = 0; i < n && err >= 0; i++) {
		const struct probe_result *r = &res[i];

		if (r->verdict == PROBE_INFRA) {
			err = nb_error_set(NB_ERROR, "testing %.12s: %s", g->nodes[nodes[i]].id,
					   r->infra_reason);
			break;
		}
		out[i] = __to_bisect(r->verdict);
		log_info("step %u: [%s] %s: %s%s", s->step + 1 + (unsigned)i,
			 g->nodes[nodes[i]].id, g->nodes[nodes[i]].subject, verdict_word[out[i]],
			 r->timed_out ? " (timed out)" : "");
	}
	s->step += (unsigned)n;
	for (i = 0; i < n; i++)
		probe_result_release(&res[i]);
	return err;
}

void culprit_bisect_result_release(struct culprit_bisect_result *r)
{
	free(r->subject);
	r->subject = NULL;
	strvec_clear(&r->candidates);
	strvec_clear(&r->skipped);
	strvec_clear(&r->log);
}

static int __resolve(git_oid *out, git_repository *repo, const char *spec)
{
	git_object *obj = NULL, *peeled = NULL;
	int err = 0;

	if (git_revparse_single(&obj, repo, spec) < 0 ||
	    git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT) < 0)
		err = nb_error_set(NB_ENOTFOUND, "'%s' is not a commit: %s", spec,
				   merge_git_error());
	else
		git_oid_cpy(out, git_object_id(peeled));
	git_object_free(obj);
	git_object_free(peeled);
	return err;
}

static void __fill_result(struct culprit_bisect_result *out, const struct bisect_graph *g,
			  const struct bisect_result *r)
{
	size_t i;

	out->only_skipped = r->outcome == BISECT_ONLY_SKIPPED;
	if (!out->only_skipped) {
		memcpy(out->first_bad, g->nodes[r->first_bad].id, 41);
		out->subject = xstrdup(g->nodes[r->first_bad].subject);
	}
	for (i = 0; i < r->range_nr; i++)
		strvec_push(&out->candidates, g->nodes[r->range[i]].id);
	for (i = 0; i < r->skipped_nr; i++)
		strvec_push(&out->skipped, g->nodes[r->skipped[i]].id);
	for (i = 0; i < r->log.nr; i++)
		strvec_push(&out->log, r->log.v[i]);
	out->steps = r->steps;
	out->rounds = r->rounds;
}

int culprit_bisect_repo(struct culprit_bisect_result *out, const struct culprit_bisect_opts *o)
{
	struct probe_command cmd = { o->argv[0], NULL, o->argv, NULL, o->timeout, 0 };
	struct probe_spec spec = { .cmds = &cmd, .cmds_nr = 1, .inherit_env = 1 };
	struct bisect_graph g = BISECT_GRAPH_INIT;
	struct bisect_result r = BISECT_RESULT_INIT;
	struct session s = { { NULL }, 0, NULL, 0 };
	git_repository *repo = NULL;
	git_oid bad, *goods = xcalloc(o->goods_nr + 1, sizeof(*goods));
	size_t i;
	int err;

	if (git_repository_open_ext(&repo, o->repo, 0, NULL) < 0) {
		err = nb_error_set(NB_EINVALID, "%s: not a git repository: %s", o->repo,
				   merge_git_error());
		goto done;
	}
	if ((err = __resolve(&bad, repo, o->bad)) < 0)
		goto done;
	for (i = 0; i < o->goods_nr; i++)
		if ((err = __resolve(&goods[i], repo, o->goods[i])) < 0)
			goto done;
	if ((err = bisect_graph_load(&g, repo, &bad, goods, o->goods_nr, o->first_parent)) < 0)
		goto done;
	if ((err = __session_open(&s, git_repository_path(repo), o->scratch, o->jobs, &spec)) < 0)
		goto done;
	if ((err = bisect_run(&r, &g, s.jobs, __test_commits, &s)) < 0)
		goto done;
	__fill_result(out, &g, &r);
done:
	__session_close(&s);
	bisect_result_release(&r);
	bisect_graph_release(&g);
	git_repository_free(repo);
	free(goods);
	return err;
}
