/*
 * The simulated mainline's MAINTAINERS and .mailmap, and their ground truth by
 * construction: a subsystem's folder is its section; a few sections placed by hand
 * (nested, X:, orphaned, obsolete, a second address of one person); some people
 * listed who never appear in any commit (the absent ones).  Everyone else listed
 * acks the initial import, which touches every file, so that each is active in
 * every section they are listed in.  Nothing here draws from the world's random
 * state: worlds and their defects stay as they were.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "feeds/sim.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* Listed, never seen in any commit: truth.json's maintainers.absent. */
static const struct sim_person ghosts[] = {
	{ "Wilhelmina Gone", "w.gone@retired.example.org" },
	{ "Casimir Faded", "casimir@oldcorp.example.com" },
	{ "Odile Quiet", "odile.quiet@example.net" },
};

/* One person's second address, which the mainline's .mailmap maps to the first. */
#define OLD_JAKOB "jkiczek@oldmail.example.org"

/* A section of the file, as the simulator knows it. */
struct sim_msection {
	char name[64];
	struct sim_person m[2];
	int m_nr;
	struct sim_person r[2];
	int r_nr;
	char list[64];	  /* "" none */
	const char *status;
	char f[3][96];	  /* F: lines; "" none */
	char x[96];	  /* X: line; "" none */
	int sub;	  /* the subsystem whose folder it is, or -1 */
};

static void upper(char *out, size_t n, const char *s)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < n; i++)
		out[i] = (char)toupper((unsigned char)s[i]);
	out[i] = 0;
}

static int sub_named(const struct sim_world *w, const char *ident)
{
	size_t i;

	for (i = 0; i < w->subs_nr; i++)
		if (!strcmp(w->subs[i].ident, ident))
			return (int)i;
	return -1;
}

/* A reviewer for subsystem i: a submitter picked by a stream of its own. */
static struct sim_person reviewer(const struct sim_world *w, size_t i)
{
	uint64_t stream = w->seed ^ 0x4d41494e54ULL ^ (uint64_t)i * 0x9e3779b97f4a7c15ULL;

	return sim_submitters[sim_rng_below(&stream, (int)sim_submitters_nr)];
}

static void sub_section(struct sim_msection *s, const struct sim_world *w, size_t i)
{
	const struct sim_sub *sub = &w->subs[i];
	char id[48];

	memset(s, 0, sizeof(*s));
	upper(id, sizeof(id), sub->ident);
	snprintf(s->name, sizeof(s->name), "%s SUBSYSTEM", id);
	s->m[s->m_nr++] = sim_maintainer((int)i);
	s->r[s->r_nr++] = reviewer(w, i);
	if (i % 2 == 1)
		s->r[s->r_nr++] = ghosts[0];
	snprintf(s->list, sizeof(s->list), "%s@lists.example.org", sub->ident);
	s->status = i ? "Maintained" : "Supported";
	snprintf(s->f[0], sizeof(s->f[0]), "%s/", sub->dir);
	snprintf(s->f[1], sizeof(s->f[1]), "include/nb/%s.h", sub->ident);
	snprintf(s->f[2], sizeof(s->f[2]), "tests/test_%s.c", sub->ident);
	s->sub = (int)i;
}

/* The sections placed by hand, where their subsystems exist. */
static size_t hand_sections(struct sim_msection *v, const struct sim_world *w)
{
	size_t n = 0;
	int mm = sub_named(w, "mm"), net = sub_named(w, "net"), lib = sub_named(w, "lib");

	if (mm >= 0) { /* nested in MM SUBSYSTEM, more specific */
		memset(&v[n], 0, sizeof(v[n]));
		snprintf(v[n].name, sizeof(v[n].name), "MM SLAB ALLOCATOR");
		v[n].m[v[n].m_nr++] = sim_submitters[3];
		v[n].r[v[n].r_nr++] = ghosts[1];
		snprintf(v[n].list, sizeof(v[n].list), "mm@lists.example.org");
		v[n].status = "Maintained";
		snprintf(v[n].f[0], sizeof(v[n].f[0]), "mm/slab.c");
		v[n++].sub = -1;
	}
	if (net >= 0) { /* net/route.c is its own: NET SUBSYSTEM's X: leaves it out */
		memset(&v[n], 0, sizeof(v[n]));
		snprintf(v[n].name, sizeof(v[n].name), "NET ROUTING");
		v[n].m[v[n].m_nr++] = (struct sim_person){ "Jakob Kiczek", OLD_JAKOB };
		v[n].status = "Odd Fixes";
		snprintf(v[n].f[0], sizeof(v[n].f[0]), "net/route.c");
		v[n++].sub = -1;
	}
	if (lib >= 0) { /* every maintainer absent */
		memset(&v[n], 0, sizeof(v[n]));
		snprintf(v[n].name, sizeof(v[n].name), "LIB STRING HELPERS");
		v[n].m[v[n].m_nr++] = ghosts[2];
		v[n].status = "Maintained";
		snprintf(v[n].f[0], sizeof(v[n].f[0]), "lib/string.c");
		v[n++].sub = -1;
	}
	memset(&v[n], 0, sizeof(v[n]));
	snprintf(v[n].name, sizeof(v[n].name), "NB TUNABLES");
	snprintf(v[n].list, sizeof(v[n].list), "tunables@lists.example.org");
	v[n].status = "Orphan";
	snprintf(v[n].f[0], sizeof(v[n].f[0]), "include/nb/params.h");
	v[n++].sub = -1;
	memset(&v[n], 0, sizeof(v[n]));
	snprintf(v[n].name, sizeof(v[n].name), "OLD WIDGET DRIVER");
	v[n].m[v[n].m_nr++] = ghosts[2];
	v[n].status = "Obsolete";
	snprintf(v[n].f[0], sizeof(v[n].f[0]), "drivers/widget/");
	v[n++].sub = -1;
	return n;
}

/* Every section, in the file's order (by name, as the kernel's). */
static struct sim_msection *sections(const struct sim_world *w, size_t *nr)
{
	struct sim_msection *v = xcalloc(w->subs_nr + 8, sizeof(*v)), tmp;
	size_t i, j, n;

	for (i = 0; i < w->subs_nr; i++)
		sub_section(&v[i], w, i);
	n = w->subs_nr + hand_sections(v + w->subs_nr, w);
	for (i = 0; i < n; i++) {
		if (v[i].sub >= 0 && !strcmp(w->subs[v[i].sub].ident, "net"))
			snprintf(v[i].x, sizeof(v[i].x), "net/route.c");
		if (v[i].sub >= 0 && !strcmp(w->subs[v[i].sub].ident, "sched"))
			v[i].r[v[i].r_nr++] = (struct sim_person){ "Andrea Morten",
								   "Andrea@linux-mm.example.org" };
	}
	for (i = 1; i < n; i++) /* insertion sort: a few dozen */
		for (j = i; j > 0 && strcmp(v[j - 1].name, v[j].name) > 0; j--) {
			tmp = v[j];
			v[j] = v[j - 1];
			v[j - 1] = tmp;
		}
	*nr = n;
	return v;
}

static void person_line(struct strbuf *out, char role, const struct sim_person *p)
{
	strbuf_addf(out, "%c:\t%s <%s>\n", role, p->name, p->email);
}

void sim_maintainers_text(struct strbuf *out, const struct sim_world *w)
{
	size_t n, i;
	struct sim_msection *v = sections(w, &n);
	int k;

	strbuf_addstr(out, "List of maintainers of the nb kernel\n"
			   "====================================\n\n"
			   "Descriptions of section entries:\n\n"
			   "\tM: Maintainer, R: Reviewer, L: mailing list, S: Status,\n"
			   "\tF: Files and folders, X: files left out of F:.\n\n"
			   "Maintainers List\n----------------\n\n");
	for (i = 0; i < n; i++) {
		strbuf_addf(out, "%s\n", v[i].name);
		for (k = 0; k < v[i].m_nr; k++)
			person_line(out, 'M', &v[i].m[k]);
		for (k = 0; k < v[i].r_nr; k++)
			person_line(out, 'R', &v[i].r[k]);
		if (v[i].list[0])
			strbuf_addf(out, "L:\t%s\n", v[i].list);
		strbuf_addf(out, "S:\t%s\n", v[i].status);
		for (k = 0; k < 3; k++)
			if (v[i].f[k][0])
				strbuf_addf(out, "F:\t%s\n", v[i].f[k]);
		if (v[i].x[0])
			strbuf_addf(out, "X:\t%s\n", v[i].x);
		strbuf_addch(out, '\n');
	}
	free(v);
}

void sim_mailmap_text(struct strbuf *out)
{
	strbuf_addstr(out, "# one person, one address\n"
			   "Jakob Kiczek <jakob@netdev.example.org> <" OLD_JAKOB ">\n");
}

static int is_ghost(const struct sim_person *p)
{
	size_t i;

	for (i = 0; i < sizeof(ghosts) / sizeof(*ghosts); i++)
		if (!strcmp(p->email, ghosts[i].email))
			return 1;
	return 0;
}

static void ack_once(struct strbuf *msg, struct strvec *seen, const struct sim_person *p)
{
	size_t i;

	if (is_ghost(p))
		return;
	for (i = 0; i < seen->nr; i++)
		if (!strcasecmp(seen->v[i], p->email))
			return;
	strvec_push(seen, p->email);
	strbuf_addf(msg, "Acked-by: %s <%s>\n", p->name, p->email);
}

void sim_maintainers_acks(struct strbuf *msg, const struct sim_world *w)
{
	struct strvec seen = STRVEC_INIT;
	size_t n, i;
	struct sim_msection *v = sections(w, &n);
	int k;

	strbuf_addch(msg, '\n');
	for (i = 0; i < n; i++) {
		for (k = 0; k < v[i].m_nr; k++)
			ack_once(msg, &seen, &v[i].m[k]);
		for (k = 0; k < v[i].r_nr; k++)
			ack_once(msg, &seen, &v[i].r[k]);
	}
	strvec_clear(&seen);
	free(v);
}

void sim_maintainers_absent(struct strvec *out, const struct sim_world *w)
{
	size_t n, i, g;
	struct sim_msection *v = sections(w, &n);
	int k;

	for (g = 0; g < sizeof(ghosts) / sizeof(*ghosts); g++)
		for (i = 0; i < n; i++) {
			for (k = 0; k < v[i].m_nr + v[i].r_nr; k++) {
				const struct sim_person *p =
					k < v[i].m_nr ? &v[i].m[k] : &v[i].r[k - v[i].m_nr];

				if (!strcmp(p->email, ghosts[g].email) &&
				    !strvec_contains(out, p->email))
					strvec_push(out, p->email);
			}
		}
	free(v);
}

void sim_maintainers_orphans(struct strvec *out, const struct sim_world *w)
{
	size_t n, i;
	struct sim_msection *v = sections(w, &n);

	for (i = 0; i < n; i++)
		if (!v[i].m_nr)
			strvec_push(out, v[i].name);
	free(v);
}

/* Is `path` in section s?  By construction: the folders and files the section was made of. */
static int in_section(const struct sim_msection *s, const char *path)
{
	int k;

	if (s->x[0] && (s->x[strlen(s->x) - 1] == '/' ? str_starts_with(path, s->x)
							: !strcmp(path, s->x)))
		return 0;
	for (k = 0; k < 3; k++) {
		size_t n = strlen(s->f[k]);

		if (n && (s->f[k][n - 1] == '/' ? !strncmp(path, s->f[k], n)
						 : !strcmp(path, s->f[k])))
			return 1;
	}
	return 0;
}

static void push_address(struct strvec *out, const char *email)
{
	size_t i;

	if (!strcasecmp(email, OLD_JAKOB))
		email = "jakob@netdev.example.org"; /* the .mailmap */
	for (i = 0; i < out->nr; i++)
		if (!strcasecmp(out->v[i], email))
			return;
	strvec_push(out, email);
}

void sim_maintainers_for(struct strvec *out, const struct sim_world *w,
			 const char *const *paths, size_t paths_nr)
{
	size_t n, i, j;
	struct sim_msection *v = sections(w, &n);
	int k;

	for (i = 0; i < n; i++) {
		for (j = 0; j < paths_nr && !in_section(&v[i], paths[j]); j++)
			;
		if (j == paths_nr)
			continue;
		for (k = 0; k < v[i].m_nr; k++)
			push_address(out, v[i].m[k].email);
		for (k = 0; k < v[i].r_nr; k++)
			push_address(out, v[i].r[k].email);
		if (v[i].list[0])
			push_address(out, v[i].list);
	}
	free(v);
}

void sim_defect_recipients(struct sim_world *w, struct sim_defect *d)
{
	struct sim_patch *c = sim_patch_by_id(w, d->culprit);
	struct sim_patch *p = d->partner >= 0 ? sim_patch_by_id(w, d->partner) : NULL;
	struct strvec paths = STRVEC_INIT, out = STRVEC_INIT;
	struct strbuf sb = STRBUF_INIT;
	size_t i, j;

	if (d->maintainers || !c || !c->ops_nr || (d->partner >= 0 && (!p || !p->ops_nr)))
		return;
	for (i = 0; d->kind != SIM_FLAKY && i < c->ops_nr; i++) {
		int both = 0;

		for (j = 0; p && j < p->ops_nr; j++)
			both |= !strcmp(p->ops[j].path, c->ops[i].path);
		if ((d->kind != SIM_CONFLICT || both) && !strvec_contains(&paths, c->ops[i].path))
			strvec_push(&paths, c->ops[i].path);
	}
	for (j = 0; d->kind == SIM_SEMANTIC && p && j < p->ops_nr; j++)
		if (!strvec_contains(&paths, p->ops[j].path))
			strvec_push(&paths, p->ops[j].path);
	sim_maintainers_for(&out, w, (const char *const *)paths.v, paths.nr);
	for (i = 0; i < out.nr; i++)
		strbuf_addf(&sb, "%s%s", i ? "," : "", out.v[i]);
	d->maintainers = strbuf_detach(&sb, NULL);
	strvec_clear(&paths);
	strvec_clear(&out);
}
