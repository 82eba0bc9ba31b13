/* .mailmap as git reads it: one person's addresses made one. */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/mailmap.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* A form-4 line: for this commit name only. */
struct mailmap_by_name {
	char *old_name;
	char *name, *email; /* NULL: keep the commit's */
};

/* Everything the file says about one commit address. */
struct mailmap_entry {
	char *old_email;
	char *name, *email;
	struct mailmap_by_name *names;
	size_t names_nr, names_alloc;
};

struct mailmap {
	struct mailmap_entry **slots; /* open addressing over the lowered address */
	size_t cap, nr;
};

static uint64_t hash_lower(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)tolower((unsigned char)*s)) * 1099511628211ULL;
	return h;
}

static struct mailmap_entry **slot_of(const struct mailmap *mm, const char *email)
{
	size_t i = hash_lower(email) & (mm->cap - 1);

	while (mm->slots[i] && strcasecmp(mm->slots[i]->old_email, email))
		i = (i + 1) & (mm->cap - 1);
	return &mm->slots[i];
}

static void grow(struct mailmap *mm)
{
	struct mailmap_entry **old = mm->slots;
	size_t i, old_cap = mm->cap;

	mm->cap = old_cap ? old_cap * 2 : 64;
	mm->slots = xcalloc(mm->cap, sizeof(*mm->slots));
	for (i = 0; i < old_cap; i++)
		if (old[i])
			*slot_of(mm, old[i]->old_email) = old[i];
	free(old);
}

static void replace(char **dst, const char *src)
{
	if (!src)
		return;
	free(*dst);
	*dst = xstrdup(src);
}

/* git's add_mapping(): a form-1..3 line sets the entry, a form-4 line adds a name. */
static void add_mapping(struct mailmap *mm, const char *new_name, const char *new_email,
			const char *old_name, const char *old_email)
{
	struct mailmap_entry **slot, *e;
	size_t i;

	if (!old_email) {
		old_email = new_email;
		new_email = NULL;
	}
	if ((mm->nr + 1) * 2 > mm->cap)
		grow(mm);
	slot = slot_of(mm, old_email);
	if (!*slot) {
		*slot = xcalloc(1, sizeof(**slot));
		(*slot)->old_email = xstrdup(old_email);
		mm->nr++;
	}
	e = *slot;
	if (!old_name) {
		replace(&e->name, new_name);
		replace(&e->email, new_email);
		return;
	}
	for (i = 0; i < e->names_nr; i++)
		if (!strcasecmp(e->names[i].old_name, old_name))
			break;
	if (i == e->names_nr) {
		if (e->names_nr == e->names_alloc) {
			e->names_alloc = e->names_alloc ? 2 * e->names_alloc : 2;
			e->names = xrealloc(e->names, e->names_alloc * sizeof(*e->names));
		}
		memset(&e->names[i], 0, sizeof(e->names[i]));
		e->names[i].old_name = xstrdup(old_name);
		e->names_nr++;
	}
	/* a later line for the same name replaces the earlier one whole, as in git */
	free(e->names[i].name);
	free(e->names[i].email);
	e->names[i].name = new_name ? xstrdup(new_name) : NULL;
	e->names[i].email = new_email ? xstrdup(new_email) : NULL;
}

/*
 * git's parse_name_and_email(): "Name <email>" at `buf`, cut in place; returns what
 * follows the '>' when something does, else NULL.  *email NULL: no address here.
 */
static char *name_and_email(char *buf, char **name, char **email, int allow_empty)
{
	char *left, *right, *start = buf, *end;

	*name = *email = NULL;
	if (!(left = strchr(buf, '<')) || !(right = strchr(left + 1, '>')))
		return NULL;
	if (!allow_empty && left + 1 == right)
		return NULL;
	while (start < left && isspace((unsigned char)*start))
		start++;
	end = left;
	while (end > start && isspace((unsigned char)end[-1]))
		end--;
	*name = end > start ? start : NULL;
	*email = left + 1;
	*end = 0;
	*right++ = 0;
	return *right ? right : NULL;
}

static int parse_line(struct mailmap *mm, char *line)
{
	char *name1, *email1, *name2 = NULL, *email2 = NULL, *rest;

	if (line[0] == '#')
		return 0;
	if ((rest = name_and_email(line, &name1, &email1, 0)))
		name_and_email(rest, &name2, &email2, 1);
	if (!email1)
		return 0;
	add_mapping(mm, name1, email1, name2, email2);
	return 1;
}

struct mailmap *mailmap_parse(const char *text, size_t len, size_t *out_lines)
{
	struct mailmap *mm = xcalloc(1, sizeof(*mm));
	size_t n = 0, end = len, start = 0;
	const char *nul = memchr(text, 0, len);
	char *copy;

	if (nul)
		end = (size_t)(nul - text);
	copy = xstrndup(text, end);
	grow(mm);
	while (start < end) {
		char *line = copy + start, *nl = memchr(line, '\n', end - start);

		if (nl)
			*nl = 0;
		n += (size_t)parse_line(mm, line);
		start = nl ? (size_t)(nl - copy) + 1 : end;
	}
	free(copy);
	if (out_lines)
		*out_lines = n;
	return mm;
}

void mailmap_free(struct mailmap *mm)
{
	size_t i, j;

	if (!mm)
		return;
	for (i = 0; i < mm->cap; i++) {
		struct mailmap_entry *e = mm->slots[i];

		if (!e)
			continue;
		for (j = 0; j < e->names_nr; j++) {
			free(e->names[j].old_name);
			free(e->names[j].name);
			free(e->names[j].email);
		}
		free(e->names);
		free(e->old_email);
		free(e->name);
		free(e->email);
		free(e);
	}
	free(mm->slots);
	free(mm);
}

int mailmap_map(const struct mailmap *mm, const char **name, const char **email)
{
	const struct mailmap_entry *e;
	const char *new_name, *new_email;
	size_t i;

	if (!mm || !*email || !(e = *slot_of(mm, *email)))
		return 0;
	new_name = e->name;
	new_email = e->email;
	for (i = 0; *name && i < e->names_nr; i++)
		if (!strcasecmp(e->names[i].old_name, *name)) {
			new_name = e->names[i].name;
			new_email = e->names[i].email;
			break;
		}
	if (!new_name && !new_email)
		return 0;
	if (new_name)
		*name = new_name;
	if (new_email)
		*email = new_email;
	return 1;
}

int mailmap_same_email(const struct mailmap *mm, const char *a, const char *b)
{
	const char *na = NULL, *nb = NULL;

	if (!a || !b)
		return 0;
	if (!strcasecmp(a, b))
		return 1;
	mailmap_map(mm, &na, &a);
	mailmap_map(mm, &nb, &b);
	return !strcasecmp(a, b);
}
