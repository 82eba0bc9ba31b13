/* A tree's MAINTAINERS and .mailmap, read from the work repository at one commit. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bot/config/config.h"
#include "bot/people/people_int.h"
#include "merge/repo/repo.h"
#include "util/error.h"
#include "util/log.h"
#include "util/mailmap.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

const char *people_role_name(enum people_role role)
{
	static const char *const names[] = { "M", "R", "L" };

	return role < PEOPLE_ROLES ? names[role] : "?";
}

int people_role_parse(enum people_role *out, const char *s)
{
	int i;

	for (i = 0; i < PEOPLE_ROLES; i++)
		if (!strcmp(s, people_role_name((enum people_role)i))) {
			*out = (enum people_role)i;
			return 0;
		}
	return -1;
}

const char *people_status_name(enum people_status st)
{
	switch (st) {
	case PEOPLE_STATUS_SUPPORTED:
		return "supported";
	case PEOPLE_STATUS_MAINTAINED:
		return "maintained";
	case PEOPLE_STATUS_ODD_FIXES:
		return "odd-fixes";
	case PEOPLE_STATUS_ORPHAN:
		return "orphan";
	case PEOPLE_STATUS_OBSOLETE:
		return "obsolete";
	case PEOPLE_STATUS_OTHER:
		return "other";
	case PEOPLE_STATUS_NONE:
		break;
	}
	return "none";
}

/* ---- the tree's directories, for "F: dir" --------------------------------------- */

static uint64_t hash_str(const char *s, size_t n)
{
	uint64_t h = 14695981039346656037ULL;

	while (n--)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static size_t dir_slot(const struct people *p, const char *s, size_t n)
{
	size_t i = hash_str(s, n) & (p->dirs_cap - 1);

	while (p->dirs[i] && (strlen(p->dirs[i]) != n || memcmp(p->dirs[i], s, n)))
		i = (i + 1) & (p->dirs_cap - 1);
	return i;
}

static void dirs_build(struct people *p, const struct strvec *files)
{
	size_t i, n = 0;

	for (i = 0; files && i < files->nr; i++) {
		const char *c;

		for (c = files->v[i]; (c = strchr(c, '/')); c++)
			n++;
	}
	p->dirs_cap = 64;
	while (p->dirs_cap < 2 * n + 2)
		p->dirs_cap *= 2;
	p->dirs = xcalloc(p->dirs_cap, sizeof(*p->dirs));
	for (i = 0; files && i < files->nr; i++) {
		const char *c;

		for (c = files->v[i]; (c = strchr(c, '/')); c++) {
			size_t len = (size_t)(c - files->v[i]), k = dir_slot(p, files->v[i], len);

			if (!p->dirs[k])
				p->dirs[k] = xstrndup(files->v[i], len);
		}
	}
}

int people_is_dir(void *ctx, const char *path)
{
	const struct people *p = ctx;

	return p->dirs_cap && p->dirs[dir_slot(p, path, strlen(path))] != NULL;
}

/* ---- reading ---------------------------------------------------------------------- */

struct people *people_new(const struct people_source *src)
{
	struct people *p = xcalloc(1, sizeof(*p));
	size_t i;

	dirs_build(p, src->files);
	maint_file_parse(&p->mf, src->path ? src->path : "MAINTAINERS", src->text ? src->text : "",
			 src->text ? src->len : 0, src->limits, people_is_dir, p);
	p->absent = (struct strvec)STRVEC_INIT;
	if (src->mailmap)
		p->mailmap = mailmap_parse(src->mailmap, src->mailmap_len, NULL);
	p->files = (struct strvec)STRVEC_INIT;
	for (i = 0; src->files && i < src->files->nr; i++)
		strvec_push(&p->files, src->files->v[i]);
	if (p->mf.problems_more)
		strvec_pushf(&p->mf.problems, "%s: and %zu problems more", p->mf.path,
			     p->mf.problems_more);
	return p;
}

void people_free(struct people *p)
{
	size_t i;

	if (!p)
		return;
	maint_file_release(&p->mf);
	mailmap_free(p->mailmap);
	for (i = 0; i < p->dirs_cap; i++)
		free(p->dirs[i]);
	free(p->dirs);
	strvec_clear(&p->files);
	strvec_clear(&p->absent);
	free(p);
}

const struct strvec *people_problems(const struct people *p)
{
	return &p->mf.problems;
}

const struct mailmap *people_mailmap(const struct people *p)
{
	return p ? p->mailmap : NULL;
}

const struct strvec *people_absent(const struct people *p)
{
	static const struct strvec none = STRVEC_INIT;

	return p ? &p->absent : &none;
}

void people_set_absent(struct people *p, const struct strvec *absent)
{
	size_t i;

	strvec_clear(&p->absent);
	for (i = 0; i < absent->nr; i++)
		strvec_push(&p->absent, absent->v[i]);
}

int people_is_absent(const struct people *p, const char *name, const char *email)
{
	size_t i;

	if (!p || !p->absent.nr || !email)
		return 0;
	mailmap_map(p->mailmap, &name, &email);
	for (i = 0; i < p->absent.nr; i++)
		if (!strcasecmp(p->absent.v[i], email))
			return 1;
	return 0;
}

int people_load(struct people **out, struct repo *repo, const char *rev, const char *maintainers)
{
	return people_load_limits(out, repo, rev, maintainers, NULL);
}

void people_limits_from_config(struct people_regex_limits *out, const struct config *cfg)
{
	out->match = (long)cfg->maintainers.regex_limits.match;
	out->heap = (long)cfg->maintainers.regex_limits.heap;
	out->size = (long)cfg->maintainers.regex_limits.size;
}

int people_load_limits(struct people **out, struct repo *repo, const char *rev,
		       const char *maintainers, const struct people_regex_limits *limits)
{
	struct strbuf text = STRBUF_INIT, mailmap = STRBUF_INIT;
	struct strvec files = STRVEC_INIT;
	struct people_source src = { .path = maintainers, .limits = limits };
	int error;

	*out = NULL;
	if ((error = repo_read_path(&text, repo, rev, maintainers, MAINT_MAX_BYTES + 1)) < 0) {
		if (error == NB_ENOTFOUND) {
			nb_error_clear();
			error = 0; /* no MAINTAINERS: routing is off */
		}
		goto done;
	}
	if (repo_read_path(&mailmap, repo, rev, ".mailmap", MAILMAP_MAX_BYTES) < 0) {
		nb_error_clear();
	} else {
		src.mailmap = mailmap.buf;
		src.mailmap_len = mailmap.len;
	}
	if ((error = activity_tree_files(&files, repo, rev)) < 0)
		goto done;
	src.text = text.buf;
	src.len = text.len;
	src.files = &files;
	*out = people_new(&src);
done:
	strbuf_release(&text);
	strbuf_release(&mailmap);
	strvec_clear(&files);
	return error;
}

void people_route_opts_from_config(struct people_route_opts *out, const struct config *cfg)
{
	int i;

	for (i = 0; i < PEOPLE_ROLES; i++)
		out->roles[i] = cfg->maintainers.roles[i];
	out->max = (size_t)cfg->maintainers.max;
	out->lines = NULL;
	out->lines_nr = 0;
	out->message = NULL;
	out->message_nr = 0;
	out->bindings = NULL;
	out->bindings_nr = 0;
}

void people_route_opts_patch(struct people_route_opts *o, const struct people_patch *pp)
{
	o->lines = (const char *const *)pp->lines.v;
	o->lines_nr = pp->lines.nr;
	o->message = (const char *const *)pp->message.v;
	o->message_nr = pp->message.nr;
	o->bindings = pp->bindings;
	o->bindings_nr = pp->bindings_nr;
}
