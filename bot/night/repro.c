/*
 * Reproduce steps a submitter can run on their own machine.  The night's next exists
 * only in the bot's repository (unless published), so the steps rebuild it from the
 * trees' URLs at the commits the night merged, fetched by id (any git server that
 * speaks protocol v2 hands out a commit it has by id, also after a rebase).
 *
 * With the night's identity and date the steps make next commit for commit, the
 * same ids as the night's (git's merge gives nextbot's tree, and the merge and
 * revert messages are the night's): so the bisect logs, written over next's and
 * the trees' own commits, replay with `git bisect replay` in the checkout.  What
 * only the bot's host has (a dropped patch replayed away, fixes, a recorded
 * resolution) makes other ids; the steps then say so.
 *
 * f->repro holds one tab-separated record per ingredient, in order:
 *   identity	<name>	<email>	<date>	the merges' author and date
 *   base	<name>	<url>	<branch>	<commit>
 *   merge	<tree>	<url>	<branch>	<commit>
 *   drop	<tree>	<commit>		a dropped patch the night replayed away
 *   local	<tree>	<what>		what only the bot's host has (fixes, rerere)
 *   revert	<tree>	<commit>	<message>	(\n and \\ escaped)
 *   before	<commit>		next as it stood before the culprit's tree
 *   (merge, revert, … again: next after it, up to the tip the search started from)
 *   tip	<commit>		that tip
 *   culprit	<tree>	<url>	<branch>	<commit>
 *   unitrevert	<tree>	<commit>	a revert the probe carried (an earlier culprit)
 *   published	<tag>	<url>		next and the tag were pushed to publish.url
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bot/night/night.h"
#include "merge/search/search.h"
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

/* How a fetched commit joins the checkout. */
enum repro_join {
	JOIN_CHECKOUT,   /* the base: checked out */
	JOIN_MERGE,      /* merged with git's default message */
	JOIN_NIGHTS,     /* merged as the night merged it: --no-ff, the night's message */
};

/*
 * The shell function the steps fetch with: a tree rebased since the night, on a server
 * that has dropped the old commits (git gc), no longer hands out the night's commit by
 * id.  Then the steps say so and take the tree's branch as it is today: the commit of
 * the same patch (the flag's patch-id) for the culprit, the branch's tip for the rest.
 */
static const char *const fetch_function[] = {
	"# fetch_commit URL BRANCH COMMIT [PATCH-ID]: fetches COMMIT and prints it; when its",
	"# tree was rebased since and the server no longer has COMMIT, says so and prints",
	"# the commit of the same patch (PATCH-ID) on BRANCH today, or BRANCH's tip",
	"fetch_commit() {",
	"  git fetch -q --no-tags \"$1\" \"$3\" 2>/dev/null && { echo \"$3\"; return; }",
	"  echo \"note: $3 is gone from $1 (rebased since): taking $2 as it is today\" >&2",
	"  git fetch -q --no-tags \"$1\" \"$2\" || return",
	"  [ -n \"${4-}\" ] || { git rev-parse FETCH_HEAD; return; }",
	"  git log --no-merges -p --no-renames --format='commit %H' FETCH_HEAD --not HEAD |",
	"    git patch-id --stable | awk -v p=\"$4\" '$1 == p { print $2; f = 1; exit }",
	"      END { exit !f }' && echo \"note: the same patch (patch-id $4) is used\" >&2 ||",
	"    { echo \"note: no commit of patch-id $4 on $2 today: it left the tree\" >&2;",
	"      return 1; }",
	"}",
};

static void fetch_merge(struct strvec *out, const char *url, const char *commit,
			enum repro_join join, const char *branch,
			const struct nb_patchid *patch_id)
{
	struct strbuf sb = STRBUF_INIT;
	char *pub = repro_public_url(url), *msg;

	strbuf_addstr(&sb, "c=$(fetch_commit ");
	shword(&sb, pub);
	strbuf_addch(&sb, ' ');
	shword(&sb, branch && *branch ? branch : "HEAD");
	strbuf_addf(&sb, " %s", commit);
	if (patch_id && !nb_patchid_is_none(patch_id))
		strbuf_addf(&sb, " %s", NB_PATCHID_HEX(patch_id));
	strbuf_addch(&sb, ')');
	strvec_push(out, sb.buf);
	strbuf_reset(&sb);
	switch (join) {
	case JOIN_CHECKOUT:
		strvec_push(out, "git checkout -q --detach \"$c\"");
		break;
	case JOIN_MERGE:
		strvec_push(out, "git merge -q --no-edit \"$c\"");
		break;
	case JOIN_NIGHTS:
		msg = xstrfmt("Merge branch '%s' of %s", branch, url);
		strbuf_addstr(&sb, "git merge -q --no-ff -m ");
		shq(&sb, msg);
		strbuf_addstr(&sb, " \"$c\"");
		strvec_push(out, sb.buf);
		free(msg);
		break;
	}
	strbuf_release(&sb);
	free(pub);
}

/*
 * The night's revert commit again: git revert's tree with the night's message
 * (`escaped`, as repro_record() wrote it), so that the commit id is the night's.
 */
static void revert_exact(struct strvec *out, const char *commit, const char *escaped)
{
	struct strbuf sb = STRBUF_INIT, line = STRBUF_INIT;
	const char *p;

	strbuf_addf(&sb, "git revert --no-commit %s && printf '%%s\\n'", commit);
	for (p = escaped; *p; p++) {
		if (*p == '\\' && (p[1] == 'n' || p[1] == 't' || p[1] == '\\')) {
			p++;
			if (*p == 'n') {
				strbuf_addch(&sb, ' ');
				shq(&sb, line.buf);
				strbuf_reset(&line);
				continue;
			}
			strbuf_addch(&line, *p == 't' ? '\t' : '\\');
			continue;
		}
		strbuf_addch(&line, *p);
	}
	if (line.len) {
		strbuf_addch(&sb, ' ');
		shq(&sb, line.buf);
	}
	strbuf_addstr(&sb, " | git commit -q --cleanup=verbatim -F -");
	strvec_push(out, sb.buf);
	strbuf_release(&sb);
	strbuf_release(&line);
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

/* What the records allow: next commit for commit, and the night's identity. */
struct repro_plan {
	char *identity;          /* the identity record (a copy), NULL: none */
	const char *before;      /* next before the culprit's tree; NULL: unknown */
	const char *published;   /* "<tag>\t<url>" of the published record, or NULL */
	int exact;               /* every step is made again as the night made it */
	int after;               /* the records hold next after `before`, up to the tip */
};

static void plan_of(struct repro_plan *p, const struct flag *f)
{
	size_t i;

	memset(p, 0, sizeof(*p));
	p->exact = 1;
	for (i = 0; i < f->repro.nr; i++) {
		const char *r = f->repro.v[i];
		char *fld[6], *buf;

		if (!strncmp(r, "published\t", 10)) {
			p->published = r + 10;
		} else if (!strncmp(r, "before\t", 7)) {
			p->before = r + 7;
		} else if (!strncmp(r, "identity\t", 9)) {
			free(p->identity);
			p->identity = xstrdup(r);
		} else if (!strncmp(r, "drop\t", 5) || !strncmp(r, "local\t", 6)) {
			p->exact = 0;
		} else if (p->before && (!strncmp(r, "merge\t", 6) || !strncmp(r, "revert\t", 7))) {
			p->after = 1;
		}
		if (strncmp(r, "merge\t", 6) && strncmp(r, "base\t", 5))
			continue;
		/* a url with credentials in it is not written out: the message differs */
		buf = xstrdup(r);
		if (fields(buf, fld) >= 3) {
			char *pub = repro_public_url(fld[2]);

			p->exact &= !strcmp(pub, fld[2]);
			free(pub);
		}
		free(buf);
	}
	p->exact &= p->identity != NULL;
}

static const char *const identity_vars[] = { "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL",
					     "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME",
					     "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE" };

/* export lines of the night's identity: its merges' author, committer and date. */
static void export_identity(struct strvec *out, const struct repro_plan *p)
{
	char *buf = xstrdup(p->identity), *fld[6], *date;
	struct strbuf sb = STRBUF_INIT;
	int who;

	if (fields(buf, fld) < 4) {
		free(buf);
		return;
	}
	date = xstrfmt("%sT00:00:00+0000", fld[3]);
	strvec_push(out, "# next as the night made it, commit for commit: its merges and reverts "
			 "by the night's identity, at 00:00 UTC");
	for (who = 0; who < 2; who++) {
		strbuf_reset(&sb);
		strbuf_addf(&sb, "export %s=", identity_vars[3 * who]);
		shq(&sb, fld[1]);
		strbuf_addf(&sb, " %s=", identity_vars[3 * who + 1]);
		shq(&sb, fld[2]);
		strbuf_addf(&sb, " %s=%s", identity_vars[3 * who + 2], date);
		strvec_push(out, sb.buf);
	}
	strbuf_release(&sb);
	free(date);
	free(buf);
}

/* A record's kind, its first field (the list at the top of this file). */
enum repro_rec {
	REPRO_REC_OTHER,  REPRO_REC_IDENTITY, REPRO_REC_BASE,    REPRO_REC_MERGE,
	REPRO_REC_DROP,   REPRO_REC_LOCAL,    REPRO_REC_REVERT,  REPRO_REC_BEFORE,
	REPRO_REC_TIP,    REPRO_REC_CULPRIT,  REPRO_REC_UNITREVERT, REPRO_REC_PUBLISHED,
};

static enum repro_rec repro_rec_parse(const char *word)
{
	static const char *const words[] = {
		[REPRO_REC_IDENTITY] = "identity", [REPRO_REC_BASE] = "base",
		[REPRO_REC_MERGE] = "merge",	   [REPRO_REC_DROP] = "drop",
		[REPRO_REC_LOCAL] = "local",	   [REPRO_REC_REVERT] = "revert",
		[REPRO_REC_BEFORE] = "before",	   [REPRO_REC_TIP] = "tip",
		[REPRO_REC_CULPRIT] = "culprit",   [REPRO_REC_UNITREVERT] = "unitrevert",
		[REPRO_REC_PUBLISHED] = "published",
	};
	size_t i;

	for (i = 1; word && i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(word, words[i]))
			return (enum repro_rec)i;
	return REPRO_REC_OTHER;
}

/* One record of next's making: base, merge, drop, revert or local. */
static void render_step(struct strvec *out, enum repro_rec kind, char **rec, size_t nr,
			int exact)
{
	if (kind == REPRO_REC_BASE && nr >= 5) {
		strvec_pushf(out, "# %s (%s)", rec[1], rec[3]);
		fetch_merge(out, rec[2], rec[4], JOIN_CHECKOUT, rec[3], NULL);
	} else if (kind == REPRO_REC_MERGE && nr >= 5) {
		strvec_pushf(out, "# %s (%s)", rec[1], rec[3]);
		fetch_merge(out, rec[2], rec[4], exact ? JOIN_NIGHTS : JOIN_MERGE, rec[3], NULL);
	} else if (kind == REPRO_REC_DROP && nr >= 3) {
		strvec_pushf(out, "# dropped from %s by its maintainer", rec[1]);
		strvec_pushf(out, "git revert --no-edit %s", rec[2]);
	} else if (kind == REPRO_REC_REVERT && nr >= 3) {
		strvec_pushf(out, "# reverted in next that night (%s)", rec[1]);
		if (exact && nr >= 4)
			revert_exact(out, rec[2], rec[3]);
		else
			strvec_pushf(out, "git revert --no-edit %s", rec[2]);
	} else if (kind == REPRO_REC_LOCAL && nr >= 3) {
		strvec_pushf(out, "# not reproducible here: %s had %s", rec[1], rec[2]);
	}
}

/* The published tag, next before the culprit's tree checked out from it. */
static void render_published(struct strvec *out, const struct flag *f,
			     const struct repro_plan *p)
{
	const char *tab = strchr(p->published, '\t');
	char *t = xstrndup(p->published, (size_t)(tab - p->published));
	char *url = repro_public_url(tab + 1);
	struct strbuf sb = STRBUF_INIT;

	strvec_pushf(out, "# %s as it stood before the merge of the %s tree", t,
		     f->tree ? f->tree : "");
	strbuf_addstr(&sb, "git fetch -q --no-tags ");
	shword(&sb, url);
	strbuf_addf(&sb, " tag %s", t);
	strvec_push_nodup(out, strbuf_detach(&sb, NULL));
	strvec_pushf(out, "git checkout -q --detach %s", p->before);
	free(t);
	free(url);
}

/* Where repro_render() is in the records, and what it has written. */
struct repro_walk {
	struct repro_plan plan;
	int part;       /* 0: next before the culprit's tree; 1: the rest of next; 2: after */
	int started;    /* next before the culprit's tree came from the published tag */
	int exported;   /* the night's identity is in the environment */
	const struct nb_patchid *patch_id; /* the culprit's, to follow it when its commit is gone */
};

static void unset_identity(struct strvec *out, struct repro_walk *w)
{
	if (!w->exported)
		return;
	w->exported = 0;
	strvec_pushf(out, "unset %s %s %s %s %s %s", identity_vars[0], identity_vars[1],
		     identity_vars[2], identity_vars[3], identity_vars[4], identity_vars[5]);
}

/* The "before" and "tip" records: where the rest of next starts and ends. */
static void render_mark(struct strvec *out, struct repro_walk *w)
{
	const struct repro_plan *p = &w->plan;

	w->part++;
	if (!p->exact || !p->after)
		return;
	if (w->part == 1) {
		if (!w->exported) {
			export_identity(out, p);
			w->exported = 1;
		}
		strvec_push(out, "# the rest of that night's next, to the commit its bisection "
				 "started from (the bisect logs' commits)");
		strvec_push(out, "before=$(git rev-parse HEAD)");
	} else if (w->part == 2) {
		/* not the id: a tree taken as it is today makes another */
		strvec_push(out, "git checkout -q --detach \"$before\"");
	}
}

static void render_record(struct strvec *out, struct repro_walk *w, char **rec, size_t nr)
{
	enum repro_rec kind = repro_rec_parse(rec[0]);

	if (kind == REPRO_REC_BEFORE || kind == REPRO_REC_TIP) {
		render_mark(out, w);
	} else if (kind == REPRO_REC_CULPRIT && nr >= 5) {
		unset_identity(out, w);
		strvec_pushf(out, "# the commit, from the %s tree (%s)", rec[1], rec[3]);
		fetch_merge(out, rec[2], rec[4], JOIN_MERGE, rec[3], w->patch_id);
	} else if (kind == REPRO_REC_UNITREVERT && nr >= 3) {
		strvec_pushf(out, "# reverted in next that night (%s)", rec[1]);
		strvec_pushf(out, "git revert --no-edit %s", rec[2]);
	} else if ((w->part == 0 && !w->started) ||
		   (w->part == 1 && w->plan.exact && w->plan.after)) {
		render_step(out, kind, rec, nr, w->plan.exact);
	}
}

void repro_render(struct strvec *out, const struct config *cfg, const struct flag *f)
{
	struct repro_walk w = { .part = 0 };
	char *rec[6], tag[16];
	size_t i, nr;

	if (!f->repro.nr || !f->last_seen)
		return;
	plan_of(&w.plan, f);
	w.patch_id = &f->patch_id;
	snprintf(tag, sizeof(tag), "next-%.4s%.2s%.2s", f->last_seen, f->last_seen + 5,
		 f->last_seen + 8);
	strvec_pushf(out, "git init -q %s && cd %s", tag, tag);
	strvec_push(out, "git config user.name nextbot && git config user.email nextbot@localhost");
	for (i = 0; i < sizeof(fetch_function) / sizeof(*fetch_function); i++)
		strvec_push(out, fetch_function[i]);
	w.started = w.plan.published && strchr(w.plan.published, '\t') && w.plan.before;
	if (w.started) {
		render_published(out, f, &w.plan);
	} else {
		if (w.plan.exact) {
			export_identity(out, &w.plan);
			w.exported = 1;
		}
		strvec_pushf(out, "# %s as it stood before the merge of the %s tree: the base,",
			     tag, f->tree ? f->tree : "");
		strvec_push(out, "# then each tree at the commit the night merged");
		if (!w.plan.exact) {
			strvec_push(out, "# (not next's own commits, which the bisect logs name:");
			strvec_push(out, "# these steps cannot make them again)");
		}
	}
	for (i = 0; i < f->repro.nr; i++) {
		char *buf = xstrdup(f->repro.v[i]);

		nr = fields(buf, rec);
		render_record(out, &w, rec, nr);
		free(buf);
	}
	unset_identity(out, &w);
	strvec_pushf(out, "export NEXTBOT_TREE=%s NEXTBOT_DATE=%s", f->tree ? f->tree : "",
		     f->last_seen);
	strvec_push(out, "export NEXTBOT_COMMIT=$(git rev-parse HEAD)");
	commands(out, cfg, f);
	free(w.plan.identity);
}
