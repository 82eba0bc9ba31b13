/* Which files an attribute that could change a checkout's bytes may reach, from the files' text. */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "merge/worker/attrrules_int.h"
#include "util/strvec.h"
#include "util/xalloc.h"
#include "util/banned.h"

struct text {
	char *dir, *buf;
	size_t len;
};

struct rule {
	char *dir;
	char *pattern;          /* NULL: every file below `dir` */
};

struct attrrules {
	struct text *texts;
	size_t nr_texts, alloc_texts;
	struct strvec macros;   /* the macros that convert */
	struct rule *rules;
	size_t nr_rules, alloc_rules;
};

/* One line of an attributes file, split: a macro's name or a pattern, then the rest. */
struct line {
	int macro;
	const char *head;       /* the macro's name or the pattern; NULL: quoted */
	size_t head_len;
	const char *attrs;
	size_t attrs_len;
};

struct attrrules *attrrules_new(void)
{
	struct attrrules *r = xcalloc(1, sizeof(*r));

	r->macros = (struct strvec)STRVEC_INIT;
	return r;
}

void attrrules_free(struct attrrules *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->nr_texts; i++) {
		free(r->texts[i].dir);
		free(r->texts[i].buf);
	}
	for (i = 0; i < r->nr_rules; i++)
		free(r->rules[i].pattern);
	free(r->texts);
	free(r->rules);
	strvec_clear(&r->macros);
	free(r);
}

void attrrules_add(struct attrrules *r, const char *dir, const char *text, size_t len)
{
	struct text *t;

	if (r->nr_texts == r->alloc_texts) {
		r->alloc_texts = r->alloc_texts ? 2 * r->alloc_texts : 8;
		r->texts = xrealloc(r->texts, r->alloc_texts * sizeof(*r->texts));
	}
	t = &r->texts[r->nr_texts++];
	t->dir = xstrdup(dir);
	t->buf = xmalloc(len + 1);
	memcpy(t->buf, text, len);
	t->buf[len] = '\0';
	t->len = len;
}

static int blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Splits the line [p, end); 0 when it says nothing (empty, a comment). */
static int parse_line(struct line *out, const char *p, const char *end)
{
	const char *q;

	memset(out, 0, sizeof(*out));
	while (p < end && blank(*p))
		p++;
	if (p == end || *p == '#')
		return 0;
	if (end - p > 6 && !memcmp(p, "[attr]", 6)) {
		out->macro = 1;
		p += 6;
	}
	if (*p == '"' && !out->macro) {
		/* a quoted pattern: read as "every file" */
		q = memchr(p + 1, '"', end - p - 1);
		q = q ? q + 1 : end;
	} else {
		for (q = p; q < end && !blank(*q); q++)
			;
		out->head = p;
		out->head_len = q - p;
	}
	out->attrs = q;
	out->attrs_len = end - q;
	return 1;
}

/* Whether the attributes of a line could convert: they mention crlf or ident, or such a macro. */
static int converts(const struct attrrules *r, const char *attrs, size_t len)
{
	const char *p = attrs, *end = attrs + len;

	if (memmem(attrs, len, "crlf", 4) || memmem(attrs, len, "ident", 5))
		return 1;
	while (p < end) {
		const char *q;
		size_t i;

		while (p < end && blank(*p))
			p++;
		if (p < end && (*p == '-' || *p == '!'))
			p++;
		for (q = p; q < end && !blank(*q) && *q != '='; q++)
			;
		for (i = 0; i < r->macros.nr; i++)
			if (strlen(r->macros.v[i]) == (size_t)(q - p) &&
			    !memcmp(r->macros.v[i], p, q - p))
				return 1;
		while (q < end && !blank(*q))
			q++;
		p = q;
	}
	return 0;
}

/* Calls `fn` for each line of every text that says something. */
static int each_line(struct attrrules *r, int (*fn)(struct attrrules *, const struct text *,
						     const struct line *))
{
	size_t i;
	int n = 0;

	for (i = 0; i < r->nr_texts; i++) {
		const struct text *t = &r->texts[i];
		const char *p = t->buf, *end = t->buf + t->len;

		while (p < end) {
			const char *eol = memchr(p, '\n', end - p);
			struct line l;

			if (!eol)
				eol = end;
			if (parse_line(&l, p, eol))
				n += fn(r, t, &l);
			p = eol + (eol < end);
		}
	}
	return n;
}

static int add_macro(struct attrrules *r, const struct text *t, const struct line *l)
{
	char *name;
	int added = 0;

	(void)t;
	if (!l->macro || !l->head || !converts(r, l->attrs, l->attrs_len))
		return 0;
	name = xstrndup(l->head, l->head_len);
	if (!strvec_contains(&r->macros, name)) {
		strvec_push(&r->macros, name);
		added = 1;
	}
	free(name);
	return added;
}

static int add_rule(struct attrrules *r, const struct text *t, const struct line *l)
{
	struct rule *rule;

	if (l->macro || !converts(r, l->attrs, l->attrs_len))
		return 0;
	if (r->nr_rules == r->alloc_rules) {
		r->alloc_rules = r->alloc_rules ? 2 * r->alloc_rules : 8;
		r->rules = xrealloc(r->rules, r->alloc_rules * sizeof(*r->rules));
	}
	rule = &r->rules[r->nr_rules++];
	rule->dir = t->dir;
	/* a pattern with a slash is matched against the path: taken to match all */
	rule->pattern = l->head && !memchr(l->head, '/', l->head_len)
			? xstrndup(l->head, l->head_len) : NULL;
	return 1;
}

void attrrules_finish(struct attrrules *r)
{
	/* a macro may use a macro defined after it: until nothing is added */
	while (each_line(r, add_macro))
		;
	each_line(r, add_rule);
}

int attrrules_any(const struct attrrules *r)
{
	return r->nr_rules > 0;
}

int attrrules_may_match(const struct attrrules *r, const char *path)
{
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	size_t i;

	for (i = 0; i < r->nr_rules; i++) {
		const struct rule *rule = &r->rules[i];

		if (strncmp(path, rule->dir, strlen(rule->dir)))
			continue;
		if (!rule->pattern || !fnmatch(rule->pattern, base, FNM_CASEFOLD))
			return 1;
	}
	return 0;
}
