/*
 * The night's side of the reproduce steps (bot/night/repro.h): at flag time it records in
 * the flag the ingredients of the failing probe, one tab-separated record each
 * (the format is described in repro.c, which renders them).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bot/night/night.h"
#include "merge/search/search.h"
#include "merge/repo/repo.h"
#include "util/xalloc.h"
#include "util/banned.h"

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

/* A message in one record field: backslash, newline and tab escaped. */
static void escape_field(struct strbuf *out, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '\\')
			strbuf_addstr(out, "\\\\");
		else if (*s == '\n')
			strbuf_addstr(out, "\\n");
		else if (*s == '\t')
			strbuf_addstr(out, "\\t");
		else
			strbuf_addch(out, *s);
	}
}

static void record_step(struct strvec *out, const struct night *n, const struct integ_step *s)
{
	struct strbuf sb = STRBUF_INIT;

	if (s->kind == INTEG_STEP_MERGE) {
		record_merge(out, n, s);
		return;
	}
	if (nb_oid_is_null(&s->tip))
		return;
	strbuf_addf(&sb, "revert\t%s\t%s\t", s->tree ? s->tree : "", s->tip.hex);
	escape_field(&sb, s->message);
	strvec_push_nodup(out, strbuf_detach(&sb, NULL));
}

/* The night's merge identity as git's env takes it: "Name <email>" split. */
static void record_identity(struct strvec *out, const struct night *n)
{
	const char *id = n->cfg->merge_identity ? n->cfg->merge_identity : "";
	const char *lt = strchr(id, '<'), *gt = lt ? strchr(lt, '>') : NULL;
	size_t len;

	if (!lt || !gt)
		return;
	for (len = (size_t)(lt - id); len && id[len - 1] == ' '; len--)
		;
	if (len)
		strvec_pushf(out, "identity\t%.*s\t%.*s\t%s", (int)len, id, (int)(gt - lt - 1),
			     lt + 1, n->opts->date);
	else
		strvec_pushf(out, "identity\t%.*s\t%.*s\t%s", (int)(gt - lt - 1), lt + 1,
			     (int)(gt - lt - 1), lt + 1, n->opts->date);
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
	record_identity(&f->repro, n);
	strvec_pushf(&f->repro, "base\t%s\t%s\t%s\t%s", n->cfg->base.name, n->cfg->base.url,
		     n->cfg->base.branch, n->trees[0].fetch.tip.hex);
	for (i = 0; i < r->step; i++)
		record_step(&f->repro, n, integ_night_step(n->integ, i));
	strvec_pushf(&f->repro, "before\t%s", at->before.hex);
	/* the rest of next, up to the tip the search started from */
	for (i = r->step; i < steps; i++)
		record_step(&f->repro, n, integ_night_step(n->integ, i));
	strvec_pushf(&f->repro, "tip\t%s", integ_night_step(n->integ, steps - 1)->after.hex);
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
