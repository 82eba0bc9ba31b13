/*
 * Reading a MAINTAINERS file as scripts/get_maintainer.pl reads it: a line that is
 * not "X:" (and not blank, not '#') names a section, the "X:" lines after it are
 * its entries.  Whatever is wrong is recorded with its line and left out; the rest
 * of the file still counts.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bot/people/maint_int.h"
#include "notify/mime.h"
#include "util/error.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* One line being read: the file, its number, and where its problems go. */
struct maint_reader {
	struct maint_file *mf;
	int line;
	int (*is_dir)(void *ctx, const char *path);
	void *ctx;
};

/* A value from the file as a message shows it: one clean line of at most 80 columns. */
static char *value_shown(const char *value)
{
	struct strbuf v = STRBUF_INIT;

	utf8_clean_text(&v, value, strlen(value));
	utf8_strip_controls(&v);
	if (v.len > 80) {
		strbuf_setlen(&v, 77);
		strbuf_addstr(&v, "...");
	}
	return strbuf_detach(&v, NULL);
}

/* Records "PATH:LINE: message"; past MAINT_MAX_PROBLEMS only counts them. */
static void problem(struct maint_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void problem(struct maint_reader *r, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	if (r->mf->problems.nr >= MAINT_MAX_PROBLEMS) {
		r->mf->problems_more++;
		return;
	}
	strbuf_addf(&sb, "%s:%d: ", r->mf->path, r->line);
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	strvec_push_nodup(&r->mf->problems, strbuf_detach(&sb, NULL));
}

static struct maint_section *current(struct maint_file *mf)
{
	return mf->sections_nr ? &mf->sections[mf->sections_nr - 1] : NULL;
}

static void section_start(struct maint_reader *r, const char *name)
{
	struct maint_file *mf = r->mf;
	struct maint_section *s;
	struct strbuf clean = STRBUF_INIT;

	utf8_clean_text(&clean, name, strlen(name));
	utf8_strip_controls(&clean);
	strbuf_trim(&clean);
	ALLOC_GROW_MIN(mf->sections, mf->sections_nr + 1, mf->sections_alloc, 64);
	s = &mf->sections[mf->sections_nr++];
	memset(s, 0, sizeof(*s));
	s->name = strbuf_detach(&clean, NULL);
	s->line = r->line;
	s->duplicate_of = -1;
	if (!utf8_is_valid(name, strlen(name)))
		problem(r, "section name '%s' is not valid UTF-8 (shown repaired)", s->name);
}

static enum people_status status_parse(const char *v)
{
	static const struct {
		const char *text;
		enum people_status st;
	} words[] = {
		{ "supported", PEOPLE_STATUS_SUPPORTED },
		{ "maintained", PEOPLE_STATUS_MAINTAINED },
		{ "odd fixes", PEOPLE_STATUS_ODD_FIXES },
		{ "orphan", PEOPLE_STATUS_ORPHAN },
		{ "obsolete", PEOPLE_STATUS_OBSOLETE },
	};
	size_t i;

	for (i = 0; i < sizeof(words) / sizeof(*words); i++)
		if (!strncasecmp(v, words[i].text, strlen(words[i].text)))
			return words[i].st;
	return PEOPLE_STATUS_OTHER;
}

static void entry_add(struct maint_section *s, struct maint_entry e)
{
	ALLOC_GROW_MIN(s->entries, s->entries_nr + 1, s->entries_alloc, 8);
	s->entries[s->entries_nr++] = e;
}

/*
 * M: and R:: "Name <address>", "<address>" or "address"; as the script does,
 * what follows the '>' is a comment ("Juri Lelli <juri@x> (SCHED_DEADLINE)").
 */
static void add_person(struct maint_reader *r, struct maint_section *s, enum people_role role,
		       const char *v)
{
	struct maint_entry e = { .role = role, .line = r->line };
	const char *gt = strchr(v, '>');
	char *cut = gt ? xstrndup(v, (size_t)(gt - v) + 1) : xstrdup(v);
	int rc = mime_addr_parse(cut, &e.name, &e.email);

	free(cut);
	if (!utf8_is_valid(v, strlen(v))) {
		char *sv = value_shown(v);

		problem(r, "%c: '%s': the name is not valid UTF-8 (shown repaired)",
			role == PEOPLE_ROLE_M ? 'M' : 'R', sv);
		free(sv);
	}
	if (rc < 0) {
		char *sv = value_shown(v);

		problem(r, "%c: '%s' is not a mail address (%s)", role == PEOPLE_ROLE_M ? 'M' : 'R',
			sv, nb_error_last());
		nb_error_clear();
		free(sv);
		return;
	}
	entry_add(s, e);
}

/*
 * L:: "list@host", maybe followed by "(moderated for non-subscribers)" and such;
 * a few are written "Some Name <list@host>".
 */
static void add_list(struct maint_reader *r, struct maint_section *s, const char *v)
{
	struct maint_entry e = { .role = PEOPLE_ROLE_L, .line = r->line };
	const char *lt = strchr(v, '<'), *gt = lt ? strchr(lt, '>') : NULL;
	const char *at = lt && gt ? lt + 1 : v, *rest;
	size_t n = lt && gt ? (size_t)(gt - lt - 1) : strcspn(v, " \t");
	char *addr = xstrndup(at, n);

	rest = at + n;
	/* the script leaves out subscribers-only lists and keeps moderated ones */
	if (strstr(rest, "subscribers-only")) {
		free(addr);
		return;
	}
	if (mime_addr_check(addr) < 0) {
		char *sv = value_shown(v);

		problem(r, "L: '%s' is not a mail address (%s)", sv, nb_error_last());
		nb_error_clear();
		free(sv);
		free(addr);
		return;
	}
	e.email = addr;
	e.moderated = strstr(rest, "moderated") != NULL;
	entry_add(s, e);
}

static void pattern(struct maint_reader *r, struct maint_section *s, char type,
		    const char *v)
{
	struct maint_pattern p = { .line = r->line, .order = s->pats_nr };
	struct strbuf why = STRBUF_INIT;
	const char *reason = NULL;
	int rc;

	p.kind = type == 'F' ? MAINT_F : type == 'X' ? MAINT_X : MAINT_N;
	if (s->pats_nr >= 0xffff) {
		problem(r, "%c: more than 65535 patterns in one section", type);
		return;
	}
	if (p.kind == MAINT_N)
		rc = maint_regex_prepare(&p, v, &why);
	else
		rc = maint_glob_prepare(&p, v, &reason, r->is_dir, r->ctx);
	if (rc < 0) {
		char *sv = value_shown(v);

		problem(r, "%c: '%s' refused: %s", type, sv, reason ? reason : why.buf);
		free(sv);
		strbuf_release(&why);
		return;
	}
	strbuf_release(&why);
	ALLOC_GROW_MIN(s->pats, s->pats_nr + 1, s->pats_alloc, 8);
	s->pats[s->pats_nr++] = p;
}

/* K:: a keyword of the patch; what is not Perl, or is over its limits, is refused. */
static void keyword(struct maint_reader *r, struct maint_section *s, const char *v)
{
	struct maint_pattern p = { .kind = MAINT_K, .line = r->line, .order = s->keys_nr };
	struct strbuf why = STRBUF_INIT;

	if (s->keys_nr >= 0xffff) {
		problem(r, "K: more than 65535 keywords in one section");
		return;
	}
	if (maint_keyword_prepare(r->mf->kw, &p, v, &why) < 0) {
		char *sv = value_shown(v);

		problem(r, "K: '%s' refused: %s", sv, why.buf);
		free(sv);
		strbuf_release(&why);
		return;
	}
	strbuf_release(&why);
	ALLOC_GROW_MIN(s->keys, s->keys_nr + 1, s->keys_alloc, 4);
	s->keys[s->keys_nr++] = p;
}

static void entry_line(struct maint_reader *r, char type, const char *v)
{
	struct maint_section *s = current(r->mf);

	if (!s) {
		problem(r, "%c: comes before any section name", type);
		return;
	}
	switch (type) {
	case 'M':
		add_person(r, s, PEOPLE_ROLE_M, v);
		break;
	case 'R':
		add_person(r, s, PEOPLE_ROLE_R, v);
		break;
	case 'L':
		add_list(r, s, v);
		break;
	case 'S':
		free(s->status_text);
		s->status_text = utf8_clean_dup(v);
		s->status = status_parse(v);
		break;
	case 'F':
	case 'X':
	case 'N':
		pattern(r, s, type, v);
		break;
	case 'K':
		keyword(r, s, v);
		break;
	default:
		break; /* T:, W:, Q:, B:, C:, P: and the others route nothing */
	}
}

/* One line, without its end of line (CR LF or LF). */
static void read_line(struct maint_reader *r, char *line)
{
	size_t n = strlen(line);

	while (n && (line[n - 1] == '\r' || line[n - 1] == ' ' || line[n - 1] == '\t'))
		line[--n] = 0;
	if (n > MAINT_MAX_LINE) {
		problem(r, "a line of over 64 KiB is left out");
		return;
	}
	if (isupper((unsigned char)line[0]) && line[1] == ':') {
		const char *v = line + 2;

		while (*v == ' ' || *v == '\t')
			v++;
		entry_line(r, line[0], v);
		return;
	}
	if (!n || line[strspn(line, " \t")] == '#' || !line[strspn(line, " \t")])
		return;
	section_start(r, line);
}

static int cmp_section_name(const void *a, const void *b, void *ctx)
{
	const struct maint_file *mf = ctx;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = strcmp(mf->sections[x].name, mf->sections[y].name);

	return c ? c : (x > y) - (x < y);
}

/* Sections named twice: the script reads both; the file is wrong all the same. */
static void duplicates(struct maint_reader *r)
{
	struct maint_file *mf = r->mf;
	size_t *order = xmalloc((mf->sections_nr + 1) * sizeof(*order)), i, first = 0;

	for (i = 0; i < mf->sections_nr; i++)
		order[i] = i;
	qsort_r(order, mf->sections_nr, sizeof(*order), cmp_section_name, mf);
	for (i = 1; i < mf->sections_nr; i++) {
		struct maint_section *s = &mf->sections[order[i]];

		if (strcmp(s->name, mf->sections[order[first]].name)) {
			first = i;
			continue;
		}
		s->duplicate_of = (int)order[first];
		strvec_pushf(&mf->problems, "%s:%d: section '%s' is named twice (first at line %d)",
			     mf->path, s->line, s->name, mf->sections[order[first]].line);
	}
	free(order);
}

/* Drops the sections with neither entries nor patterns: the file's preamble lines. */
static void drop_empty(struct maint_file *mf)
{
	size_t i, n = 0;

	for (i = 0; i < mf->sections_nr; i++) {
		struct maint_section *s = &mf->sections[i];

		if (s->entries_nr || s->pats_nr || s->keys_nr || s->status_text) {
			mf->sections[n++] = *s;
			continue;
		}
		free(s->name);
		free(s->entries);
		free(s->pats);
		free(s->keys);
	}
	mf->sections_nr = n;
}

void maint_file_parse(struct maint_file *mf, const char *path, const char *text, size_t len,
		      const struct people_regex_limits *limits,
		      int (*is_dir)(void *ctx, const char *path), void *ctx)
{
	struct maint_reader r = { .mf = mf, .is_dir = is_dir, .ctx = ctx };
	const char *nul = memchr(text, 0, len);
	char *copy, *line, *nl;

	memset(mf, 0, sizeof(*mf));
	mf->path = xstrdup(path);
	mf->problems = (struct strvec)STRVEC_INIT;
	mf->kw = xmalloc(sizeof(*mf->kw));
	maint_keywords_init(mf->kw, limits);
	mf->kw->path = mf->path;
	mf->kw->problems = &mf->problems;
	if (nul) {
		strvec_pushf(&mf->problems, "%s: a NUL byte at offset %zu: the file is read up "
			     "to it", path, (size_t)(nul - text));
		len = (size_t)(nul - text);
	}
	if (len > MAINT_MAX_BYTES) {
		strvec_pushf(&mf->problems, "%s: larger than 32 MiB: not read", path);
		len = 0;
	}
	copy = xstrndup(text, len);
	for (line = copy; line && *line; line = nl) {
		r.line++;
		if ((nl = strchr(line, '\n')))
			*nl++ = 0;
		read_line(&r, line);
	}
	free(copy);
	drop_empty(mf);
	duplicates(&r);
	maint_index_build(mf);
}

void maint_file_release(struct maint_file *mf)
{
	size_t i, j;

	for (i = 0; i < mf->sections_nr; i++) {
		struct maint_section *s = &mf->sections[i];

		for (j = 0; j < s->entries_nr; j++) {
			free(s->entries[j].name);
			free(s->entries[j].email);
		}
		for (j = 0; j < s->pats_nr; j++) {
			free(s->pats[j].text);
			free(s->pats[j].glob);
			if (s->pats[j].has_re)
				regfree(&s->pats[j].re);
		}
		for (j = 0; j < s->keys_nr; j++)
			maint_keyword_free(&s->keys[j]);
		free(s->entries);
		free(s->pats);
		free(s->keys);
		free(s->name);
		free(s->status_text);
	}
	for (i = 0; i < mf->slots_cap; i++) {
		free(mf->slots[i].dir);
		free(mf->slots[i].refs);
	}
	free(mf->slots);
	free(mf->regexes);
	free(mf->sections);
	if (mf->kw)
		maint_keywords_release(mf->kw);
	free(mf->kw);
	free(mf->path);
	strvec_clear(&mf->problems);
	memset(mf, 0, sizeof(*mf));
}
