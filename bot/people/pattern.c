/*
 * MAINTAINERS patterns as scripts/get_maintainer.pl matches them: F:/X: globs, N:
 * extended regular expressions, and an index that files each glob under the one
 * directory it can match below, so a path is tried against a few patterns, not all.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bot/people/maint_int.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* ---- F: and X: ------------------------------------------------------------ */

static int is_wild(char c)
{
	return c == '*' || c == '?' || c == '[';
}

/* The end of the class that starts at p ('['), or NULL when it is not closed. */
static const char *class_end(const char *p)
{
	const char *q = p + 1;

	if (*q == '^' || *q == '!')
		q++;
	if (*q == ']')
		q++;
	while (*q && *q != ']')
		q++;
	return *q ? q : NULL;
}

/* Refuses what is not a path inside the tree: "/x", "../x", "a/./b", "a//b". */
static const char *path_problem(const char *v)
{
	const char *c = v;

	if (*v == '/')
		return "an absolute path (patterns are relative to the tree's top)";
	while (*c) {
		size_t n = strcspn(c, "/");

		if ((n == 2 && !strncmp(c, "..", 2)) || (n == 1 && *c == '.'))
			return "a '.' or '..' component (patterns name paths inside the tree)";
		if (n == 0 && c[1])
			return "an empty component ('//')";
		c += n + (c[n] == '/');
	}
	return NULL;
}

/* The value with runs of '*' made one (".*.*" is ".*" to the script). */
static char *collapse_stars(const char *v, size_t *wild)
{
	struct strbuf sb = STRBUF_INIT;

	*wild = 0;
	for (; *v; v++) {
		if (*v == '*' && sb.len && sb.buf[sb.len - 1] == '*')
			continue;
		*wild += is_wild(*v);
		strbuf_addch(&sb, *v);
	}
	return strbuf_detach(&sb, NULL);
}

static int count_char(const char *s, char c)
{
	int n = 0;

	for (; *s; s++)
		n += *s == c;
	return n;
}

int maint_glob_prepare(struct maint_pattern *p, const char *value, const char **why,
		       int (*is_dir)(void *ctx, const char *path), void *ctx)
{
	const char *c;
	size_t wild;

	*why = !*value ? "an empty pattern" : path_problem(value);
	for (c = value; !*why && (c = strchr(c, '[')); c++)
		if (!class_end(c))
			*why = "a '[' without its ']'";
	if (*why)
		return -1;
	p->text = collapse_stars(value, &wild);
	if (strlen(p->text) > MAINT_MAX_PATTERN || wild > MAINT_MAX_WILDCARDS) {
		*why = wild > MAINT_MAX_WILDCARDS ? "more than 32 wildcards"
						  : "longer than 1024 characters";
		free(p->text);
		p->text = NULL;
		return -1;
	}
	/*
	 * The script adds the '/' when `-d` finds a directory of that name, and it asks
	 * after turning '.' into "\." and '*' into ".*": a pattern with either is never
	 * taken for a directory.
	 */
	if (!strpbrk(p->text, ".*?[") && p->text[strlen(p->text) - 1] != '/' && is_dir &&
	    is_dir(ctx, p->text))
		p->glob = xstrfmt("%s/", p->text);
	else
		p->glob = xstrdup(p->text);
	p->dir = p->glob[strlen(p->glob) - 1] == '/';
	p->slashes = count_char(p->glob, '/');
	p->depth = p->slashes + !p->dir;
	if (p->glob[0] == '*')
		p->depth = -1;
	return 0;
}

/* One character against one element of the glob at *pp ('?', a class, a literal). */
static int one_char(const char **pp, unsigned char c)
{
	const char *p = *pp, *end;
	int neg, hit = 0;

	if (*p == '?') {
		*pp = p + 1;
		return 1;
	}
	if (*p != '[') {
		*pp = p + 1;
		return (unsigned char)*p == c;
	}
	end = class_end(p);
	p++;
	neg = *p == '^' || *p == '!';
	p += neg;
	for (; p < end; p++) {
		if (p + 2 < end && p[1] == '-') {
			hit |= c >= (unsigned char)p[0] && c <= (unsigned char)p[2];
			p += 2;
		} else {
			hit |= (unsigned char)*p == c;
		}
	}
	*pp = end + 1;
	return hit != neg;
}

/*
 * Does the glob match a prefix of s?  '*' is any run and '?' any character, '/'
 * included, as ".*" and "." are in the script's regex; anchored at the start only.
 * One backtracking point suffices ('*' only grows): linear in practice, O(n*m) at worst.
 */
static int prefix_match(const char *glob, const char *s)
{
	const char *p = glob, *star_p = NULL, *star_s = NULL;

	for (;;) {
		const char *next = p;

		if (!*p)
			return 1;
		if (*p == '*') {
			star_p = ++p;
			star_s = s;
			continue;
		}
		if (*s && one_char(&next, (unsigned char)*s)) {
			p = next;
			s++;
			continue;
		}
		if (!star_p || !*star_s)
			return 0;
		s = ++star_s;
		p = star_p;
	}
}

int maint_pattern_match(const struct maint_pattern *p, const char *path)
{
	if (p->kind == MAINT_N)
		return p->has_re && regexec(&p->re, path, 0, NULL, 0) == 0;
	if (!prefix_match(p->glob, path))
		return 0;
	return p->dir || count_char(path, '/') == p->slashes;
}

/* ---- N: ---------------------------------------------------------------------- */

/*
 * What POSIX extended regular expressions lack and Perl has, and what would make
 * the compiled automaton explode: refused with a reason, before regcomp() sees it.
 */
const char *maint_regex_problem(const char *v)
{
	int counted[MAINT_MAX_REGEX + 2] = { 0 }, depth = 0, last_group_counted = 0;
	const char *c;

	for (c = v; *c; c++) {
		if (*c == '\\') {
			if (c[1] >= '1' && c[1] <= '9')
				return "a backreference (\\1 to \\9)";
			if (c[1] == 'd' || c[1] == 'D')
				return "Perl's \\d (write [0-9])";
			if (!c[1])
				return "a trailing backslash";
			c++;
			last_group_counted = 0;
		} else if (*c == '[') {
			if (!(c = class_end(c)))
				return "a '[' without its ']'";
			last_group_counted = 0;
		} else if (*c == '(') {
			if (c[1] == '?')
				return "Perl's (?...): lookaround, non-capturing groups and flags "
				       "are not in extended regular expressions";
			if (depth > MAINT_MAX_REGEX)
				return "groups nested over 256 deep";
			counted[++depth] = 0;
		} else if (*c == ')') {
			if (depth == 0)
				return "a ')' without its '('";
			last_group_counted = counted[depth--];
			counted[depth] |= last_group_counted;
		} else if (*c == '{') {
			char *end;
			long hi = strtol(c + 1, &end, 10);

			if (*end == ',')
				hi = end[1] == '}' ? 0 : strtol(end + 1, &end, 10);
			if (hi > 1000)
				return "a repetition count over 1000";
			if (last_group_counted)
				return "a counted repetition of a group that has one inside";
			counted[depth] = 1;
			last_group_counted = 1; /* "a{2}{3}" nests too */
			c = end;
			while (*c && *c != '}')
				c++;
			if (!*c)
				return "a '{' without its '}'";
		} else {
			last_group_counted = 0;
		}
	}
	return depth ? "a '(' without its ')'" : NULL;
}

int maint_regex_prepare(struct maint_pattern *p, const char *value, struct strbuf *why)
{
	const char *problem = !*value			     ? "an empty regular expression"
			      : strlen(value) > MAINT_MAX_REGEX ? "over 256 characters"
								: maint_regex_problem(value);
	char msg[256];
	int rc;

	if (problem) {
		strbuf_addstr(why, problem);
		return -1;
	}
	if ((rc = regcomp(&p->re, value, REG_EXTENDED | REG_NOSUB)) != 0) {
		regerror(rc, &p->re, msg, sizeof(msg));
		strbuf_addf(why, "not an extended regular expression: %s", msg);
		return -1;
	}
	p->has_re = 1;
	p->text = xstrdup(value);
	return 0;
}

/* ---- the index ---------------------------------------------------------------- */

static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 14695981039346656037ULL;

	while (n--)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static struct maint_index_slot *slot_find(const struct maint_file *mf, const char *dir,
					  size_t n)
{
	size_t i;

	if (!mf->slots_cap)
		return NULL;
	i = hash_bytes(dir, n) & (mf->slots_cap - 1);
	for (; mf->slots[i].dir; i = (i + 1) & (mf->slots_cap - 1))
		if (strlen(mf->slots[i].dir) == n && !memcmp(mf->slots[i].dir, dir, n))
			return &mf->slots[i];
	return &mf->slots[i];
}

static void slot_add(struct maint_file *mf, const char *dir, size_t n, size_t ref)
{
	struct maint_index_slot *s = slot_find(mf, dir, n);

	if (!s->dir) {
		s->dir = xstrndup(dir, n);
		mf->slots_nr++;
	}
	if (s->nr == s->alloc) {
		s->alloc = s->alloc ? 2 * s->alloc : 4;
		s->refs = xrealloc(s->refs, s->alloc * sizeof(*s->refs));
	}
	s->refs[s->nr++] = ref;
}

/* "drivers/net/" of "drivers/net/foo*.c": the directory every match lies below. */
static size_t anchor_len(const char *glob)
{
	size_t i, last = 0;

	for (i = 0; glob[i] && !is_wild(glob[i]); i++)
		if (glob[i] == '/')
			last = i + 1;
	return last;
}

void maint_index_build(struct maint_file *mf)
{
	size_t i, j, n = 0;

	for (i = 0; i < mf->sections_nr; i++)
		n += mf->sections[i].pats_nr;
	mf->slots_cap = 16;
	while (mf->slots_cap < 2 * n + 2)
		mf->slots_cap *= 2;
	mf->slots = xcalloc(mf->slots_cap, sizeof(*mf->slots));
	for (i = 0; i < mf->sections_nr; i++) {
		const struct maint_section *s = &mf->sections[i];

		for (j = 0; j < s->pats_nr; j++) {
			size_t ref = i << 16 | j;

			if (s->pats[j].kind != MAINT_N) {
				slot_add(mf, s->pats[j].glob, anchor_len(s->pats[j].glob), ref);
				continue;
			}
			ALLOC_GROW_MIN(mf->regexes, mf->regexes_nr + 1, mf->regexes_alloc, 8);
			mf->regexes[mf->regexes_nr++] = ref;
		}
	}
}

/* ---- matching a path ------------------------------------------------------------ */

struct maint_try {
	size_t *refs;
	size_t nr, alloc;
};

static void try_add(struct maint_try *t, const size_t *refs, size_t n)
{
	if (!n)
		return; /* refs may be NULL then (a file without N: lines) */
	if (t->nr + n > t->alloc) {
		t->alloc = 2 * (t->nr + n) + 8;
		t->refs = xrealloc(t->refs, t->alloc * sizeof(*t->refs));
	}
	memcpy(t->refs + t->nr, refs, n * sizeof(*refs));
	t->nr += n;
}

static int cmp_ref(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/* Every pattern that could match `path`, in file order (section, then line). */
static void candidates(struct maint_try *t, const struct maint_file *mf, const char *path)
{
	const struct maint_index_slot *s;
	const char *c = path;

	for (;;) {
		if ((s = slot_find(mf, path, (size_t)(c - path))) && s->dir)
			try_add(t, s->refs, s->nr);
		if (!(c = strchr(c, '/')))
			break;
		c++;
	}
	try_add(t, mf->regexes, mf->regexes_nr);
	if (t->nr)
		qsort(t->refs, t->nr, sizeof(*t->refs), cmp_ref);
}

static void hit_add(struct maint_hit **hits, size_t *nr, size_t *alloc, struct maint_hit h)
{
	if (*nr == *alloc) {
		*alloc = *alloc ? 2 * *alloc : 8;
		*hits = xrealloc(*hits, *alloc * sizeof(**hits));
	}
	(*hits)[(*nr)++] = h;
}

void maint_file_match(const struct maint_file *mf, const char *path, struct maint_hit **hits,
		      size_t *nr, size_t *alloc)
{
	struct maint_try t = { NULL, 0, 0 };
	size_t i = 0;

	if (strlen(path) > MAINT_MAX_PATH)
		return;
	candidates(&t, mf, path);
	while (i < t.nr) {
		size_t sec = t.refs[i] >> 16, j;
		const struct maint_section *s = &mf->sections[sec];
		struct maint_hit h = { sec, 0, (size_t)-1 };
		int excluded = 0;

		for (j = i; j < t.nr && t.refs[j] >> 16 == sec; j++) {
			const struct maint_pattern *p = &s->pats[t.refs[j] & 0xffff];

			if (!maint_pattern_match(p, path))
				continue;
			if (p->kind == MAINT_X)
				excluded = 1;
			else if (h.order == (size_t)-1 || p->order > h.order)
				h = (struct maint_hit){ sec, p->depth, p->order };
		}
		if (!excluded && h.order != (size_t)-1)
			hit_add(hits, nr, alloc, h);
		i = j;
	}
	free(t.refs);
}
