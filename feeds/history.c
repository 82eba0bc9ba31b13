/* The mainline's history before day 0 (`sim init --history N`): a long linear chain. */
#include <stdio.h>
#include <string.h>

#include "merge/git/git_int.h"
#include "feeds/sim.h"
#include "util/error.h"
#include "util/strbuf.h"
#include "util/banned.h"

/* Ten minutes between two history commits: 200,000 of them span about four years. */
#define SIM_HISTORY_STEP 600LL

/*
 * Commit k of the history changes the one file HISTORY.  Nothing in it draws from the
 * world's random state, so a world with history plays its days exactly as one without.
 * Its three objects are written in git's object format straight into the memory store
 * (sim_git_put): the odb's existence checks would cost more than the whole chain.
 */
static int history_commit(git_oid *inout_tip, struct sim_world *w, struct strbuf *buf, int k,
			  int n)
{
	const struct sim_person *p = &sim_submitters[(size_t)k % sim_submitters_nr];
	const struct sim_sub *s = &w->subs[(size_t)k % w->subs_nr];
	long long when = SIM_EPOCH - (long long)(n - k) * SIM_HISTORY_STEP;
	char hex[GIT_OID_HEXSZ + 1];
	git_oid blob, tree;
	int error;

	strbuf_reset(buf);
	strbuf_addf(buf, "%s: history change %d\n", s->prefix, k + 1);
	if ((error = sim_git_put(&blob, w, buf->buf, buf->len, GIT_OBJECT_BLOB)) < 0)
		return error;
	strbuf_reset(buf);
	strbuf_add(buf, "100644 HISTORY", sizeof("100644 HISTORY")); /* with its NUL */
	strbuf_add(buf, blob.id, GIT_OID_RAWSZ);
	if ((error = sim_git_put(&tree, w, buf->buf, buf->len, GIT_OBJECT_TREE)) < 0)
		return error;
	strbuf_reset(buf);
	strbuf_addf(buf, "tree %s\n", git_oid_tostr(hex, sizeof(hex), &tree));
	if (k)
		strbuf_addf(buf, "parent %s\n", git_oid_tostr(hex, sizeof(hex), inout_tip));
	strbuf_addf(buf, "author %s <%s> %lld +0000\n", p->name, p->email, when);
	strbuf_addf(buf, "committer %s <%s> %lld +0000\n\n", p->name, p->email, when);
	strbuf_addf(buf, "%s: history change %d\n\n", s->prefix, k + 1);
	strbuf_addstr(buf, "An older commit of the mainline, before the initial import.\n");
	return sim_git_put(inout_tip, w, buf->buf, buf->len, GIT_OBJECT_COMMIT);
}

int sim_history_write(struct nb_oid *out, struct sim_world *w, int n)
{
	struct strbuf buf = STRBUF_INIT;
	git_oid tip;
	int k, error = 0;

	memset(&tip, 0, sizeof(tip));
	for (k = 0; k < n && !error; k++)
		error = history_commit(&tip, w, &buf, k, n);
	if (!error)
		merge_oid_from_git(out, &tip);
	strbuf_release(&buf);
	return error;
}
