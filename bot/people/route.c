/* Routing: the people and lists of the MAINTAINERS sections that some paths are in. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bot/people/people_int.h"
#include "util/mailmap.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* Why-lists past this many sections end in ", …": a mail line, not an inventory. */
#define ROUTE_MAX_WHY 3

struct route_rank {
	size_t section;
	int depth; /* the most specific match over all the paths */
	const struct maint_pattern *key; /* the K: that matched (no path did), or NULL */
};

static int cmp_rank(const void *a, const void *b)
{
	const struct route_rank *x = a, *y = b;

	if (x->depth != y->depth)
		return x->depth > y->depth ? -1 : 1;
	return x->section < y->section ? -1 : x->section > y->section;
}

/* The sections the paths are in, most specific first (then in file order). */
static struct route_rank *ranks(const struct maint_file *mf, const char *const *paths,
				size_t paths_nr, size_t *out_nr)
{
	int *best = xmalloc((mf->sections_nr + 1) * sizeof(*best));
	struct maint_hit *hits = NULL;
	struct route_rank *v;
	size_t i, nr = 0, alloc = 0, n = 0;

	for (i = 0; i < mf->sections_nr; i++)
		best[i] = INT_MIN;
	for (i = 0; i < paths_nr; i++) {
		size_t j;

		nr = 0;
		maint_file_match(mf, paths[i], &hits, &nr, &alloc);
		for (j = 0; j < nr; j++)
			if (hits[j].depth > best[hits[j].section])
				best[hits[j].section] = hits[j].depth;
	}
	v = xcalloc(mf->sections_nr + 1, sizeof(*v));
	for (i = 0; i < mf->sections_nr; i++)
		if (best[i] != INT_MIN)
			v[n++] = (struct route_rank){ i, best[i], NULL };
	qsort(v, n, sizeof(*v), cmp_rank);
	free(best);
	free(hits);
	*out_nr = n;
	return v;
}

/* The first K: of section s that matches a changed line or a line of the message. */
static const struct maint_pattern *key_match(const struct maint_file *mf,
					     const struct maint_section *s,
					     const struct people_route_opts *o)
{
	size_t k, l;

	for (k = 0; k < s->keys_nr; k++) {
		for (l = 0; l < o->message_nr; l++)
			if (maint_keyword_match_message(mf->kw, &s->keys[k], o->message[l]))
				return &s->keys[k];
		for (l = 0; l < o->lines_nr; l++)
			if (maint_keyword_match(mf->kw, &s->keys[k], o->lines[l]))
				return &s->keys[k];
	}
	return NULL;
}

/*
 * Appends the sections that no path matched and a K: of which matches the patch's
 * lines, in file order: the script adds them after those of the files, and what
 * it added once it does not add again.
 */
static void keyword_ranks(struct route_rank *v, size_t *n, const struct maint_file *mf,
			  const struct people_route_opts *o)
{
	char *seen;
	size_t i, paths_n = *n;

	if (!o->lines_nr && !o->message_nr)
		return;
	seen = xcalloc(mf->sections_nr + 1, 1);
	for (i = 0; i < paths_n; i++)
		seen[v[i].section] = 1;
	for (i = 0; i < mf->sections_nr; i++) {
		const struct maint_pattern *key;

		if (!seen[i] && (key = key_match(mf, &mf->sections[i], o)))
			v[(*n)++] = (struct route_rank){ i, INT_MIN, key };
	}
	free(seen);
}

static const char *status_note(const struct maint_section *s)
{
	return s->status == PEOPLE_STATUS_ORPHAN     ? " (orphan)"
	       : s->status == PEOPLE_STATUS_OBSOLETE ? " (obsolete)"
						     : "";
}

/* "M: in SECTION", "R: in SECTION (orphan) (K: clang matches the patch)". */
static char *why_item(const struct maint_section *s, const struct maint_entry *e,
		      const struct maint_pattern *key)
{
	if (key)
		return xstrfmt("%s: in %s%s (K: %s matches the patch)", people_role_name(e->role),
			       s->name, status_note(s), key->text);
	return xstrfmt("%s: in %s%s", people_role_name(e->role), s->name, status_note(s));
}

/* One more reason for someone already there ("M: in A, R: in B"), unless known. */
static void more_why(struct people_recipient *r, int *whys, const char *item)
{
	const char *at = strstr(r->why, item);
	char *old = r->why;

	if (*whys <= ROUTE_MAX_WHY && !(at && (at == r->why || at[-1] == ' ') &&
					 (!at[strlen(item)] || at[strlen(item)] == ','))) {
		r->why = *whys == ROUTE_MAX_WHY ? xstrfmt("%s, …", old)
						: xstrfmt("%s, %s", old, item);
		(*whys)++;
		free(old);
	}
}

/*
 * get_maintainer.pl leaves its "chief penguin" out of what it prints unless asked
 * (--git-chief-penguins): Linus Torvalds, THE REST's M:.  So does nextbot, by the
 * same address, so that a kernel tree's reports go where the script sends them.
 */
static int chief_penguin(const char *email)
{
	return !strcasecmp(email, "torvalds@linux-foundation.org");
}

/* Someone the audit calls absent: named once in out->absent, with the first why. */
static void note_absent(struct people_route *out, const char *name, const char *email,
			const char *item)
{
	char *bracketed = xstrfmt("<%s>", email), *bare = xstrfmt("%s (", email);
	size_t i;

	for (i = 0; i < out->absent.nr; i++)
		if (strcasestr(out->absent.v[i], bracketed) ||
		    !strncasecmp(out->absent.v[i], bare, strlen(bare)))
			break;
	free(bracketed);
	free(bare);
	if (i < out->absent.nr)
		return;
	if (name)
		strvec_pushf(&out->absent, "%s <%s> (%s): absent", name, email, item);
	else
		strvec_pushf(&out->absent, "%s (%s): absent", email, item);
}

/* Adds one person or list with its why `item` (taken), or one more reason. */
static void add_one(struct people_route *out, size_t *alloc, const struct people *p,
		    const struct maint_entry *e, char *item, int *whys)
{
	const char *name = e->name, *email = e->email;
	enum people_role role = e->role;
	struct people_recipient *r;
	size_t i;

	if (role != PEOPLE_ROLE_L)
		mailmap_map(p->mailmap, &name, &email);
	if (chief_penguin(email))
		goto done;
	if (role != PEOPLE_ROLE_L && people_is_absent(p, name, email)) {
		note_absent(out, name, email, item);
		goto done;
	}
	/* one person, one mail: as the script, the same name counts as the same person */
	for (i = 0; i < out->nr; i++)
		if (!strcasecmp(out->v[i].email, email) ||
		    (name && out->v[i].name && !strcasecmp(out->v[i].name, name)))
			break;
	if (i < out->nr) {
		more_why(&out->v[i], &whys[i], item);
		goto done;
	}
	if (out->nr == *alloc) {
		*alloc = *alloc ? 2 * *alloc : 16;
		out->v = xrealloc(out->v, *alloc * sizeof(*out->v));
	}
	r = &out->v[out->nr];
	whys[out->nr++] = 1;
	r->name = name ? xstrdup(name) : NULL;
	r->email = xstrdup(email);
	r->role = role;
	r->why = item;
	r->spec = name ? xstrfmt("%s <%s>", name, email) : xstrdup(email);
	return;
done:
	free(item);
}

/* Adds one entry of a section, or one more reason for someone already there. */
static void route_add(struct people_route *out, size_t *alloc, const struct people *p,
		      const struct route_rank *rank, const struct maint_entry *e, int *whys)
{
	const struct maint_section *s = &p->mf.sections[rank->section];

	add_one(out, alloc, p, e, why_item(s, e, rank->key), whys);
}

/* The maintainers: of the bindings the patch touches, after the sections' R: people. */
static void route_bindings(struct people_route *out, size_t *alloc, const struct people *p,
			   const struct people_route_opts *o, int *whys)
{
	size_t i;

	if (!o->roles[PEOPLE_ROLE_M])
		return;
	for (i = 0; i < o->bindings_nr; i++) {
		struct maint_entry e = { .role = PEOPLE_ROLE_M, .name = o->bindings[i].name,
					 .email = o->bindings[i].email };

		add_one(out, alloc, p, &e, xstrfmt("maintainers: in %s", o->bindings[i].path),
			whys);
	}
}

static void cap(struct people_route *out, size_t max)
{
	size_t i;

	if (!max || out->nr <= max)
		return;
	out->left_out = out->nr - max;
	for (i = max; i < out->nr; i++) {
		free(out->v[i].name);
		free(out->v[i].email);
		free(out->v[i].why);
		free(out->v[i].spec);
	}
	out->nr = max;
}

void people_route(struct people_route *out, const struct people *p, const char *const *paths,
		  size_t paths_nr, const struct people_route_opts *o)
{
	struct route_rank *v;
	size_t n, i, j, alloc = 0, entries = 0;
	int role, *whys;

	*out = (struct people_route)PEOPLE_ROUTE_INIT;
	if (!p)
		return;
	v = ranks(&p->mf, paths, paths_nr, &n);
	keyword_ranks(v, &n, &p->mf, o);
	for (i = 0; i < n; i++)
		entries += p->mf.sections[v[i].section].entries_nr;
	whys = xcalloc(entries + o->bindings_nr + 1, sizeof(*whys));
	for (role = 0; role < PEOPLE_ROLES; role++) {
		if (role == PEOPLE_ROLE_L)
			route_bindings(out, &alloc, p, o, whys);
		if (!o->roles[role])
			continue;
		for (i = 0; i < n; i++) {
			const struct maint_section *s = &p->mf.sections[v[i].section];

			for (j = 0; j < s->entries_nr; j++)
				if ((int)s->entries[j].role == role)
					route_add(out, &alloc, p, &v[i], &s->entries[j], whys);
		}
	}
	for (i = 0; i < n; i++)
		strvec_pushf(&out->sections, "%s%s", p->mf.sections[v[i].section].name,
			     status_note(&p->mf.sections[v[i].section]));
	cap(out, o->max);
	free(whys);
	free(v);
}

void people_route_release(struct people_route *r)
{
	size_t i;

	for (i = 0; i < r->nr; i++) {
		free(r->v[i].name);
		free(r->v[i].email);
		free(r->v[i].why);
		free(r->v[i].spec);
	}
	free(r->v);
	strvec_clear(&r->sections);
	strvec_clear(&r->absent);
	*r = (struct people_route)PEOPLE_ROUTE_INIT;
}
