/*
 * Reproduce steps a submitter can run on their own machine.  The night's next exists
 * only in the bot's repository (unless published), so the steps rebuild it from the
 * trees' URLs at the commits the night merged, fetched by id (any git server that
 * speaks protocol v2 hands out a commit it has by id, also after a rebase).
 *
 * f->repro holds one tab-separated record per ingredient, in order:
 *   base	<name>	<url>	<branch>	<commit>
 *   merge	<tree>	<url>	<branch>	<commit>
 *   drop	<tree>	<commit>		a dropped patch the night replayed away
 *   local	<tree>	<what>		what only the bot's host has (fixes, rerere)
 *   revert	<tree>	<commit>
 *   before	<commit>		next as it stood before the culprit's tree
 *   culprit	<tree>	<url>	<branch>	<commit>
 *   unitrevert	<tree>	<commit>	a revert the probe carried (an earlier culprit)
 *   published	<tag>	<url>		next and the tag were pushed to publish.url
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bot/night.h"
#include "bot/repro.h"
#include "merge/culprit.h"
#include "merge/lookup.h"
#include "util/xalloc.h"
#include "util/banned.h"

char *repro_public_url(const char *url)
{
	const char *scheme = url ? strstr(url, "://") : NULL, *host, *at;

	if (!url)
		return xstrdup("");
	if (!scheme)
		return xstrdup(url);
	host = scheme + 3;
	at = strchr(host, '@');
	if (!at || at > host + strcspn(host, "/"))
		return xstrdup(url);
	return xstrfmt("%.*s%s", (int)(host - url), url, at + 1);
}

static const struct night_tree *tree_of(const struct night *n, const char *name)
{
	size_t i;

	for (i = 0; name && i < n->trees_nr; i++)
		if (!strcmp(n->trees[i].cfg->name, name))
			return &n->trees[i];
	return NULL;
}

static void record_merge(struct strvec *out, const struct night *n, const struct integ_step *s)
{
	const struct night_tree *t = tree_of(n, s->tree);
	const struct nb_oid *commit = &s->merged;
	size_t i;

	if (nb_oid_is_null(&s->merged) || s->state == INTEG_ALREADY)
		return;
	/* a replay without dropped patches is this host's commit: merge the tip, revert them */
	if (t && t->left_out.nr && !nb_oid_is_null(&s->tip))
		commit = &s->tip;
	strvec_pushf(out, "merge\t%s\t%s\t%s\t%s", s->tree, s->url ? s->url : "",
		     s->branch ? s->branch : "", commit->hex);
	for (i = 0; t && commit == &s->tip && i < t->left_out.nr; i++)
		strvec_pushf(out, "drop\t%s\t%s", s->tree, t->left_out.v[i]);
	if (t && t->rerere)
		strvec_pushf(out, "local\t%s\ta conflict resolution recorded on the bot's host",
			     s->tree);
	if (t && t->fixes_applied)
		strvec_pushf(out, "local\t%s\t%d carried fix(es) of the bot's host", s->tree,
			     t->fixes_applied);
}

void repro_record(struct night *n, struct flag *f, const struct culprit_result *r)
{
	size_t i, steps = integ_night_steps_nr(n->integ);
	const struct integ_step *at;
	const struct night_tree *t;

	strvec_clear(&f->repro);
	if (r->step >= steps || nb_oid_is_null(&r->commit))
		return;
	at = integ_night_step(n->integ, r->step);
	strvec_pushf(&f->repro, "base\t%s\t%s\t%s\t%s", n->cfg->base.name, n->cfg->base.url,
		     n->cfg->base.branch, n->trees[0].fetch.tip.hex);
	for (i = 0; i < r->step; i++) {
		const struct integ_step *s = integ_night_step(n->integ, i);

		if (s->kind == INTEG_STEP_MERGE)
			record_merge(&f->repro, n, s);
		else if (!nb_oid_is_null(&s->tip))
			strvec_pushf(&f->repro, "revert\t%s\t%s", s->tree ? s->tree : "",
				     s->tip.hex);
	}
	strvec_pushf(&f->repro, "before\t%s", at->before.hex);
	t = tree_of(n, r->tree);
	strvec_pushf(&f->repro, "culprit\t%s\t%s\t%s\t%s", r->tree,
		     t	       ? t->cfg->url
		     : at->url ? at->url
			       : "",
		     t		  ? t->cfg->branch
		     : at->branch ? at->branch
				  : "",
		     r->commit.hex);
	/* the reverts after the tree's merge that the probe carried */
	for (i = r->step + 1; i < steps; i++) {
		const struct integ_step *s = integ_night_step(n->integ, i);

		if (s->kind == INTEG_STEP_MERGE)
			break;
		if (!nb_oid_is_null(&s->tip) && !nb_oid_equal(&s->tip, &r->commit) &&
		    lookup_contains(n->repo, &r->commit, &s->tip) == 1)
			strvec_pushf(&f->repro, "unitrevert\t%s\t%s", s->tree ? s->tree : "",
				     s->tip.hex);
	}
}

void repro_mark_published(struct night *n)
{
	size_t i;
	int ambiguous;

	for (i = 0; i < n->seen_flags.nr; i++) {
		struct flag *f = state_flag_find(n->st, n->seen_flags.v[i], &ambiguous);
		struct nb_oid before, next;
		int have = 0;
		size_t j;

		if (!f || !n->run->next || nb_oid_parse(&next, n->run->next) < 0)
			continue;
		for (j = 0; j < f->repro.nr; j++)
			if (!strncmp(f->repro.v[j], "before\t", 7))
				have = nb_oid_parse(&before, f->repro.v[j] + 7) == 0;
		if (have && lookup_contains(n->repo, &next, &before) == 1)
			strvec_pushf(&f->repro, "published\t%s\t%s", n->tag, n->cfg->publish.url);
	}
}

/* ---- rendering ---- */

/* Splits a record into at most 6 tab-separated fields (pointers into `buf`). */
static size_t fields(char *buf, char *out[6])
{
	size_t nr = 0;
	char *p = buf;

	while (nr < 6) {
		out[nr++] = p;
		p = strchr(p, '\t');
		if (!p)
			break;
		*p++ = '\0';
	}
	return nr;
}

/* 'value' for the shell: single quotes, a quote inside as '\''. */
static void shq(struct strbuf *out, const char *s)
{
	strbuf_addch(out, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			strbuf_addstr(out, "'\\''");
		else
			strbuf_addch(out, *s);
	}
	strbuf_addch(out, '\'');
}

/* A value for the shell line: as it is when it is plainly safe, else quoted. */
static void shword(struct strbuf *out, const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			    "_-.,:/@+=%~",
			    s[i]))
			break;
	if (*s && !s[i])
		strbuf_addstr(out, s);
	else
		shq(out, s);
}

static void fetch_merge(struct strvec *out, const char *url, const char *commit, int checkout)
{
	struct strbuf sb = STRBUF_INIT;
	char *pub = repro_public_url(url);

	strbuf_addstr(&sb, "git fetch -q --no-tags ");
	shword(&sb, pub);
	strbuf_addf(&sb, " %s", commit);
	strvec_push(out, sb.buf);
	if (checkout)
		strvec_pushf(out, "git checkout -q --detach %s", commit);
	else
		strvec_pushf(out, "git merge -q --no-edit %s", commit);
	strbuf_release(&sb);
	free(pub);
}

static const struct config_command *command_named(const struct config_command *v, size_t nr,
						  const char *name)
{
	size_t i;

	for (i = 0; name && i < nr; i++)
		if (!strcmp(v[i].name, name))
			return &v[i];
	return NULL;
}

/*
 * export/unset lines so that exactly `c`'s environment is set (its own, then the
 * matrix cell's, as the night ran it), then its command.
 */
static void run_command(struct strvec *out, struct strvec *exported, const struct config_command *c,
			const struct strvec *cell_env)
{
	struct strvec env = STRVEC_INIT, now = STRVEC_INIT;
	size_t i;

	for (i = 0; i < c->env.nr; i++)
		strvec_push(&env, c->env.v[i]);
	for (i = 0; cell_env && i < cell_env->nr; i++)
		strvec_push(&env, cell_env->v[i]);
	for (i = 0; i < env.nr; i++) {
		const char *eq = strchr(env.v[i], '=');
		char *key = eq ? xstrndup(env.v[i], (size_t)(eq - env.v[i])) : NULL;

		if (key)
			strvec_push(&now, key);
		free(key);
	}
	for (i = 0; i < exported->nr; i++)
		if (!strvec_contains(&now, exported->v[i]))
			strvec_pushf(out, "unset %s", exported->v[i]);
	strvec_clear(exported);
	for (i = 0; i < env.nr; i++) {
		const char *eq = strchr(env.v[i], '=');
		struct strbuf sb = STRBUF_INIT;

		if (!eq)
			continue;
		strbuf_addf(&sb, "export %.*s=", (int)(eq - env.v[i]), env.v[i]);
		shq(&sb, eq + 1);
		strvec_push_nodup(out, strbuf_detach(&sb, NULL));
		strvec_push_nodup(exported, xstrndup(env.v[i], (size_t)(eq - env.v[i])));
	}
	strvec_push(out, c->command);
	strvec_clear(&env);
	strvec_clear(&now);
}

/* The config's matrix cell of the flag's first failing cell; NULL without a matrix. */
static const struct config_cell *flag_cell(const struct config *cfg, const struct flag *f)
{
	const struct strvec *env;
	size_t i, j;

	if (!f->cells_nr || !f->cells[0].env.nr)
		return NULL;
	env = &f->cells[0].env;
	for (i = 0; i < cfg->cells_nr; i++) {
		const struct config_cell *c = &cfg->cells[i];

		if (c->env.nr != env->nr)
			continue;
		for (j = 0; j < env->nr && !strcmp(c->env.v[j], env->v[j]); j++)
			;
		if (j == env->nr)
			return c;
	}
	return NULL;
}

/* The commands the failing one needs: the builds before it (all, for a test), then it. */
static void commands(struct strvec *out, const struct config *cfg, const struct flag *f)
{
	int test = f->kind == FLAG_TEST_FAILURE;
	const struct config_command *c =
		test ? command_named(cfg->test, cfg->test_nr, f->command)
		     : command_named(cfg->build, cfg->build_nr, f->command);
	/* with a matrix, the first cell it fails in: its env and the builds it runs */
	const struct config_cell *cell = flag_cell(cfg, f);
	const struct strvec *cell_env = f->cells_nr && f->cells[0].env.nr ? &f->cells[0].env
									   : NULL;
	struct strvec exported = STRVEC_INIT;
	size_t i;

	if (!c)
		return;
	for (i = 0; i < cfg->build_nr; i++) {
		if (!test && &cfg->build[i] == c)
			break;
		if (cell && !config_cell_has(cell, &cfg->build[i]))
			continue;
		run_command(out, &exported, &cfg->build[i], cell_env);
	}
	run_command(out, &exported, c, cell_env);
	strvec_clear(&exported);
}

void repro_render(struct strvec *out, const struct config *cfg, const struct flag *f)
{
	char *rec[6], tag[16];
	const char *published = NULL, *pub_url = NULL, *before = NULL;
	size_t i, nr;
	int started = 0;

	if (!f->repro.nr || !f->last_seen)
		return;
	snprintf(tag, sizeof(tag), "next-%.4s%.2s%.2s", f->last_seen, f->last_seen + 5,
		 f->last_seen + 8);
	for (i = 0; i < f->repro.nr; i++) {
		if (!strncmp(f->repro.v[i], "published\t", 10)) {
			const char *p = f->repro.v[i] + 10;

			published = p;
			pub_url = strchr(p, '\t');
		} else if (!strncmp(f->repro.v[i], "before\t", 7)) {
			before = f->repro.v[i] + 7;
		}
	}
	strvec_pushf(out, "git init -q %s && cd %s", tag, tag);
	strvec_push(out, "git config user.name nextbot && git config user.email nextbot@localhost");
	if (published && pub_url && before) {
		char *t = xstrndup(published, (size_t)(pub_url - published));
		char *url = repro_public_url(pub_url + 1);
		struct strbuf sb = STRBUF_INIT;

		strvec_pushf(out, "# %s as it stood before the merge of the %s tree", t,
			     f->tree ? f->tree : "");
		strbuf_addstr(&sb, "git fetch -q --no-tags ");
		shword(&sb, url);
		strbuf_addf(&sb, " tag %s", t);
		strvec_push_nodup(out, strbuf_detach(&sb, NULL));
		strvec_pushf(out, "git checkout -q --detach %s", before);
		started = 1;
		free(t);
		free(url);
	} else {
		strvec_pushf(out, "# %s as it stood before the merge of the %s tree: the base,",
			     tag, f->tree ? f->tree : "");
		strvec_push(out, "# then each tree at the commit the night merged");
	}
	for (i = 0; i < f->repro.nr; i++) {
		char *buf = xstrdup(f->repro.v[i]);

		nr = fields(buf, rec);
		if (!strcmp(rec[0], "culprit") && nr >= 5) {
			strvec_pushf(out, "# the commit, from the %s tree (%s)", rec[1], rec[3]);
			fetch_merge(out, rec[2], rec[4], 0);
		} else if (!strcmp(rec[0], "unitrevert") && nr >= 3) {
			strvec_pushf(out, "# reverted in next that night (%s)", rec[1]);
			strvec_pushf(out, "git revert --no-edit %s", rec[2]);
		} else if (started) {
			/* next came whole from the tag */
		} else if (!strcmp(rec[0], "base") && nr >= 5) {
			strvec_pushf(out, "# %s (%s)", rec[1], rec[3]);
			fetch_merge(out, rec[2], rec[4], 1);
		} else if (!strcmp(rec[0], "merge") && nr >= 5) {
			strvec_pushf(out, "# %s (%s)", rec[1], rec[3]);
			fetch_merge(out, rec[2], rec[4], 0);
		} else if (!strcmp(rec[0], "drop") && nr >= 3) {
			strvec_pushf(out, "# dropped from %s by its maintainer", rec[1]);
			strvec_pushf(out, "git revert --no-edit %s", rec[2]);
		} else if (!strcmp(rec[0], "revert") && nr >= 3) {
			strvec_pushf(out, "# reverted in next that night (%s)", rec[1]);
			strvec_pushf(out, "git revert --no-edit %s", rec[2]);
		} else if (!strcmp(rec[0], "local") && nr >= 3) {
			strvec_pushf(out, "# not reproducible here: %s had %s", rec[1], rec[2]);
		}
		free(buf);
	}
	strvec_pushf(out, "export NEXTBOT_TREE=%s NEXTBOT_DATE=%s", f->tree ? f->tree : "",
		     f->last_seen);
	strvec_push(out, "export NEXTBOT_COMMIT=$(git rev-parse HEAD)");
	commands(out, cfg, f);
}
