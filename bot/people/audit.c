/*
 * The MAINTAINERS file held against history: for every M:/R: person of every
 * section, the last day they authored, signed off, reviewed, acked or tested a
 * commit touching the section's files, over one walk of a window of mainline
 * history (no walk per section: each commit's paths are looked up once, through a
 * cache of path -> sections), and what is wrong with each section.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "bot/people/people_int.h"
#include "merge/repo/repo.h"
#include "util/error.h"
#include "util/mailmap.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define DAY 86400LL

const char *people_finding_name(enum people_finding f)
{
	static const char *const names[] = { "all-absent", "no-maintainer", "orphan",
					     "obsolete", "no-files", "case-duplicate",
					     "mailmap-duplicate" };

	return f < PEOPLE_FINDINGS ? names[f] : "?";
}

int people_finding_parse(enum people_finding *out, const char *s)
{
	int i;

	for (i = 0; i < PEOPLE_FINDINGS; i++)
		if (!strcmp(s, people_finding_name((enum people_finding)i))) {
			*out = (enum people_finding)i;
			return 0;
		}
	return -1;
}

/* ---- path -> sections, each path matched once ----------------------------------- */

struct audit_path {
	char *path;
	size_t *sections;
	size_t nr;
};

struct audit_cache {
	struct audit_path *slots;
	size_t cap, nr;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static struct audit_path *cache_slot(struct audit_cache *c, const char *path)
{
	size_t i = hash_str(path) & (c->cap - 1);

	while (c->slots[i].path && strcmp(c->slots[i].path, path))
		i = (i + 1) & (c->cap - 1);
	return &c->slots[i];
}

static void cache_grow(struct audit_cache *c)
{
	struct audit_path *old = c->slots;
	size_t i, old_cap = c->cap;

	c->cap = old_cap ? 2 * old_cap : 1024;
	c->slots = xcalloc(c->cap, sizeof(*c->slots));
	for (i = 0; i < old_cap; i++)
		if (old[i].path)
			*cache_slot(c, old[i].path) = old[i];
	free(old);
}

static const struct audit_path *sections_of(struct audit_cache *c, const struct maint_file *mf,
					    const char *path)
{
	struct maint_hit *hits = NULL;
	struct audit_path *e;
	size_t nr = 0, alloc = 0, i;

	if ((c->nr + 1) * 2 > c->cap)
		cache_grow(c);
	e = cache_slot(c, path);
	if (e->path)
		return e;
	maint_file_match(mf, path, &hits, &nr, &alloc);
	e->path = xstrdup(path);
	e->sections = xcalloc(nr + 1, sizeof(*e->sections));
	for (i = 0; i < nr; i++)
		e->sections[i] = hits[i].section;
	e->nr = nr;
	c->nr++;
	free(hits);
	return e;
}

static void cache_release(struct audit_cache *c)
{
	size_t i;

	for (i = 0; i < c->cap; i++) {
		free(c->slots[i].path);
		free(c->slots[i].sections);
	}
	free(c->slots);
}

/* ---- the walk ----------------------------------------------------------------------- */

struct audit_walk {
	struct people_audit *a;
	const struct people *p;
	struct audit_cache cache;
	unsigned char *touched; /* per section, for one commit */
	size_t *touched_list;
	struct strvec emails;	/* one commit's people, canonical */
};

static const char *canonical(const struct people *p, const char *name, const char *email)
{
	mailmap_map(p->mailmap, &name, &email);
	return email;
}

static int seen_on(const struct strvec *emails, const char *email)
{
	size_t i;

	for (i = 0; i < emails->nr; i++)
		if (!strcasecmp(emails->v[i], email))
			return 1;
	return 0;
}

static void credit(struct audit_walk *w, size_t sec, long long when)
{
	struct people_audit_section *s = &w->a->sections[sec];
	size_t k;

	for (k = 0; k < s->people_nr; k++) {
		struct people_audit_person *pe = &s->people[k];

		if (pe->last < when && seen_on(&w->emails, pe->canonical))
			pe->last = when;
	}
}

static int visit(void *ctx, const struct activity_commit *c)
{
	struct audit_walk *w = ctx;
	size_t i, j, nr = 0;

	w->a->commits++;
	strvec_clear(&w->emails);
	for (i = 0; i < c->people_nr; i++)
		strvec_push(&w->emails, canonical(w->p, c->people[i].name, c->people[i].email));
	for (i = 0; i < c->paths_nr; i++) {
		const struct audit_path *e = sections_of(&w->cache, &w->p->mf, c->paths[i]);

		for (j = 0; j < e->nr; j++)
			if (!w->touched[e->sections[j]]) {
				w->touched[e->sections[j]] = 1;
				w->touched_list[nr++] = e->sections[j];
			}
	}
	for (i = 0; i < nr; i++) {
		credit(w, w->touched_list[i], c->when);
		w->touched[w->touched_list[i]] = 0;
	}
	return 0;
}

/* ---- the sections as the audit shows them ----------------------------------------------- */

static void section_init(struct people_audit_section *as, const struct people *p,
			 const struct maint_section *s)
{
	size_t i;

	as->name = xstrdup(s->name);
	as->status = s->status;
	as->line = s->line;
	as->people = xcalloc(s->entries_nr + 1, sizeof(*as->people));
	for (i = 0; i < s->entries_nr; i++) {
		const struct maint_entry *e = &s->entries[i];
		struct people_audit_person *pe;

		if (e->role == PEOPLE_ROLE_L)
			continue;
		pe = &as->people[as->people_nr++];
		pe->role = e->role;
		pe->name = e->name ? xstrdup(e->name) : NULL;
		pe->email = xstrdup(e->email);
		pe->canonical = xstrdup(canonical(p, e->name, e->email));
	}
}

/* How many of the tree's files the section covers. */
static void count_files(struct people_audit *a, struct audit_walk *w)
{
	size_t i, j;

	for (i = 0; i < w->p->files.nr; i++) {
		const struct audit_path *e = sections_of(&w->cache, &w->p->mf, w->p->files.v[i]);

		for (j = 0; j < e->nr; j++)
			a->sections[e->sections[j]].files_matched++;
	}
}

/* Another listing of the same person: the same address in other case, or through .mailmap. */
static void duplicates(struct people_audit *a)
{
	size_t i, j, k, l;

	for (i = 0; i < a->sections_nr; i++)
		for (k = 0; k < a->sections[i].people_nr; k++) {
			struct people_audit_person *x = &a->sections[i].people[k];

			if (strcasecmp(x->email, x->canonical))
				a->sections[i].findings |= 1u << PEOPLE_FINDING_MAILMAP_DUPLICATE;
			for (j = 0; j < a->sections_nr; j++)
				for (l = 0; l < a->sections[j].people_nr; l++) {
					const char *y = a->sections[j].people[l].email;

					if (!strcasecmp(x->email, y) && strcmp(x->email, y))
						a->sections[i].findings |=
							1u << PEOPLE_FINDING_CASE_DUPLICATE;
				}
		}
}

static void judge(struct people_audit *a, struct people_audit_section *s,
		  const struct maint_section *ms)
{
	size_t k, m = 0, m_absent = 0;

	for (k = 0; k < s->people_nr; k++) {
		struct people_audit_person *pe = &s->people[k];

		pe->absent = !pe->last || a->now - pe->last > (long long)a->absent_days * DAY;
		if (pe->role == PEOPLE_ROLE_M) {
			m++;
			m_absent += (size_t)pe->absent;
		}
	}
	if (m && m == m_absent)
		s->findings |= 1u << PEOPLE_FINDING_ALL_ABSENT;
	if (s->status == PEOPLE_STATUS_ORPHAN)
		s->findings |= 1u << PEOPLE_FINDING_ORPHAN;
	else if (!m && s->status != PEOPLE_STATUS_OBSOLETE)
		s->findings |= 1u << PEOPLE_FINDING_NO_MAINTAINER;
	if (s->status == PEOPLE_STATUS_OBSOLETE)
		s->findings |= 1u << PEOPLE_FINDING_OBSOLETE;
	if (ms->pats_nr && !s->files_matched)
		s->findings |= 1u << PEOPLE_FINDING_NO_FILES;
}

int people_audit_run(struct people_audit *out, struct repo *repo, const char *rev,
		     const struct people *p, const struct people_audit_opts *o)
{
	struct audit_walk w = { .a = out, .p = p, .emails = STRVEC_INIT };
	size_t i;
	int error;

	memset(out, 0, sizeof(*out));
	out->absent_days = o->absent_days;
	if ((error = activity_commit_time(&out->now, repo, rev)) < 0)
		return error;
	out->since = out->now - (long long)o->window_days * DAY;
	out->sections = xcalloc(p->mf.sections_nr + 1, sizeof(*out->sections));
	out->sections_nr = p->mf.sections_nr;
	for (i = 0; i < p->mf.sections_nr; i++)
		section_init(&out->sections[i], p, &p->mf.sections[i]);
	w.touched = xcalloc(p->mf.sections_nr + 1, 1);
	w.touched_list = xcalloc(p->mf.sections_nr + 1, sizeof(*w.touched_list));
	count_files(out, &w);
	error = activity_walk(repo, rev, out->since, visit, &w);
	for (i = 0; !error && i < out->sections_nr; i++)
		judge(out, &out->sections[i], &p->mf.sections[i]);
	if (!error)
		duplicates(out);
	cache_release(&w.cache);
	free(w.touched);
	free(w.touched_list);
	strvec_clear(&w.emails);
	return error;
}

void people_audit_release(struct people_audit *a)
{
	size_t i, k;

	for (i = 0; i < a->sections_nr; i++) {
		for (k = 0; k < a->sections[i].people_nr; k++) {
			free(a->sections[i].people[k].name);
			free(a->sections[i].people[k].email);
			free(a->sections[i].people[k].canonical);
		}
		free(a->sections[i].people);
		free(a->sections[i].name);
	}
	free(a->sections);
	memset(a, 0, sizeof(*a));
}

void people_audit_absent(struct strvec *out, const struct people_audit *a)
{
	size_t i, k;

	for (i = 0; i < a->sections_nr; i++)
		for (k = 0; k < a->sections[i].people_nr; k++) {
			const struct people_audit_person *pe = &a->sections[i].people[k];
			size_t j;

			if (!pe->absent)
				continue;
			for (j = 0; j < out->nr && strcasecmp(out->v[j], pe->canonical); j++)
				;
			if (j == out->nr)
				strvec_push(out, pe->canonical);
		}
}
