/* The standalone `nextbot bisect`: git bisect run semantics in scratch checkouts. */
#include <stdlib.h>
#include <string.h>

#include "merge/search/search.h"
#include "merge/git/git_int.h"
#include "merge/repo/repo.h"
#include "merge/search/session_int.h"
#include "util/error.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* The engine's callback for a plain bisection: probe the commits, INFRA stops it. */
static int test_commits(void *data, const struct bisect_graph *g, const size_t *nodes,
			  size_t n, enum bisect_verdict *out)
{
	struct session *s = data;
	struct probe_result res[SESSION_MAX_JOBS];
	git_oid ids[SESSION_MAX_JOBS];
	size_t i;
	int err;

	memset(ids, 0, sizeof(ids));
	for (i = 0; i < n; i++)
		if ((err = merge_oid_to_git(&ids[i], &g->nodes[nodes[i]].id)) < 0)
			return err;
	for (i = 0; i < n; i++)
		res[i] = (struct probe_result)PROBE_RESULT_INIT;
	err = probe_run_many(res, s->workers, ids, n, s->step + 1, s->spec);
	for (i = 0; i < n && err >= 0; i++) {
		const struct probe_result *r = &res[i];

		if (r->verdict == PROBE_INFRA) {
			err = nb_error_set(NB_ERROR, "testing %.12s: %s", g->nodes[nodes[i]].id.hex,
					   r->infra_reason);
			break;
		}
		out[i] = session_verdict(r->verdict);
		log_info("step %u: [%s] %s: %s%s", s->step + 1 + (unsigned)i,
			 g->nodes[nodes[i]].id.hex, g->nodes[nodes[i]].subject,
			 session_verdict_word[out[i]], r->timed_out ? " (timed out)" : "");
	}
	s->step += (unsigned)n;
	for (i = 0; i < n; i++)
		probe_result_release(&res[i]);
	return err;
}

void bisect_repo_result_release(struct bisect_repo_result *r)
{
	free(r->subject);
	r->subject = NULL;
	strvec_clear(&r->candidates);
	strvec_clear(&r->skipped);
	strvec_clear(&r->log);
}

static int resolve(git_oid *out, git_repository *repo, const char *spec)
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

static void fill_result(struct bisect_repo_result *out, const struct bisect_graph *g,
			  const struct bisect_result *r)
{
	size_t i;

	out->only_skipped = r->outcome == BISECT_ONLY_SKIPPED;
	if (!out->only_skipped) {
		out->first_bad = g->nodes[r->first_bad].id;
		out->subject = xstrdup(g->nodes[r->first_bad].subject);
	}
	for (i = 0; i < r->range_nr; i++)
		strvec_push(&out->candidates, g->nodes[r->range[i]].id.hex);
	for (i = 0; i < r->skipped_nr; i++)
		strvec_push(&out->skipped, g->nodes[r->skipped[i]].id.hex);
	for (i = 0; i < r->log.nr; i++)
		strvec_push(&out->log, r->log.v[i]);
	out->steps = r->steps;
	out->rounds = r->rounds;
}

int bisect_repo_run(struct bisect_repo_result *out, const struct bisect_repo_opts *o)
{
	/* git's semantics: the tree is kept between steps, untracked files and all */
	struct probe_command cmd = { .name = o->argv[0], .argv = o->argv, .timeout = o->timeout,
				     .incremental = 1 };
	struct probe_spec spec = { .cmds = &cmd, .cmds_nr = 1, .inherit_env = 1 };
	struct bisect_graph g = BISECT_GRAPH_INIT;
	struct bisect_result r = BISECT_RESULT_INIT;
	struct session s = { { NULL }, 0, NULL, 0 };
	struct worker_opts wo = { 0 };
	git_repository *repo = NULL;
	git_oid bad, *goods = xcalloc(o->goods_nr + 1, sizeof(*goods));
	size_t i;
	int err;

	if (git_repository_open_ext(&repo, o->repo, 0, NULL) < 0) {
		err = nb_error_set(NB_EINVALID, "%s: not a git repository: %s", o->repo,
				   merge_git_error());
		goto done;
	}
	if ((err = resolve(&bad, repo, o->bad)) < 0)
		goto done;
	for (i = 0; i < o->goods_nr; i++)
		if ((err = resolve(&goods[i], repo, o->goods[i])) < 0)
			goto done;
	if ((err = bisect_graph_load(&g, repo, &bad, goods, o->goods_nr, o->first_parent)) < 0)
		goto done;
	wo.exe = o->exe;
	if ((err = session_open(&s, git_repository_path(repo), o->scratch, o->jobs, &spec, &wo)) <
	    0)
		goto done;
	if ((err = bisect_run(&r, &g, s.jobs, test_commits, &s)) < 0)
		goto done;
	fill_result(out, &g, &r);
done:
	session_close(&s);
	bisect_result_release(&r);
	bisect_graph_release(&g);
	git_repository_free(repo);
	free(goods);
	return err;
}
