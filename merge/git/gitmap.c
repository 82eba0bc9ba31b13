/* String maps that iterate in git's hashmap order, and an arena allocator. */
#include <stdlib.h>
#include <string.h>

#include "merge/git/gitmap_int.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define ARENA_BLOCK ((size_t)64 << 10)

struct arena_block {
	struct arena_block *prev;
	size_t cap;
	_Alignas(16) unsigned char data[];
};

void *arena_alloc(struct arena *a, size_t n)
{
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (!a->blocks || a->used + n > a->cap) {
		size_t cap = n > ARENA_BLOCK / 4 ? n : ARENA_BLOCK;
		struct arena_block *b = xmalloc(sizeof(*b) + cap);

		b->cap = cap;
		if (cap == n && a->blocks) {
			/* a big one goes under the current block, which stays open */
			b->prev = a->blocks->prev;
			a->blocks->prev = b;
			memset(b->data, 0, n);
			return b->data;
		}
		b->prev = a->blocks;
		a->blocks = b;
		a->used = 0;
		a->cap = cap;
	}
	p = a->blocks->data + a->used;
	a->used += n;
	memset(p, 0, n);
	return p;
}

char *arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *p = arena_alloc(a, n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *arena_strdup(struct arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}

void arena_release(struct arena *a)
{
	while (a->blocks) {
		struct arena_block *prev = a->blocks->prev;

		free(a->blocks);
		a->blocks = prev;
	}
	a->used = a->cap = 0;
}

#define INITIAL_SIZE 64
#define RESIZE_BITS 2
#define LOAD_FACTOR 80

unsigned int gitmap_strhash(const char *s)
{
	unsigned int c, hash = 0x811c9dc5u;

	while ((c = (unsigned char)*s++))
		hash = (hash * 0x01000193u) ^ c;
	return hash;
}

static void alloc_table(struct gitmap *m, unsigned int size)
{
	m->size = size;
	m->table = xcalloc(size, sizeof(*m->table));
	m->grow_at = (unsigned int)((uint64_t)size * LOAD_FACTOR / 100);
	m->shrink_at = size <= INITIAL_SIZE ? 0 : m->grow_at / ((1 << RESIZE_BITS) + 1);
}

void gitmap_init(struct gitmap *m, struct arena *arena)
{
	memset(m, 0, sizeof(*m));
	m->arena = arena;
	alloc_table(m, INITIAL_SIZE);
}

void gitmap_release(struct gitmap *m)
{
	free(m->table);
	memset(m, 0, sizeof(*m));
}

void gitmap_clear(struct gitmap *m)
{
	unsigned int i;

	for (i = 0; i < m->size; i++) {
		struct gitmap_entry *e = m->table[i];

		while (e) {
			struct gitmap_entry *next = e->next;

			e->next = m->free_list;
			m->free_list = e;
			e = next;
		}
	}
	memset(m->table, 0, m->size * sizeof(*m->table));
	m->shrink_at = 0;
	m->count = 0;
}

/* Moves every chain to a table of `size`, in git's order (which reverses chains). */
static void rehash(struct gitmap *m, unsigned int size)
{
	struct gitmap_entry **old = m->table;
	unsigned int i, oldsize = m->size;

	alloc_table(m, size);
	for (i = 0; i < oldsize; i++) {
		struct gitmap_entry *e = old[i];

		while (e) {
			struct gitmap_entry *next = e->next;
			unsigned int b = e->hash & (m->size - 1);

			e->next = m->table[b];
			m->table[b] = e;
			e = next;
		}
	}
	free(old);
}

struct gitmap_entry *gitmap_get(const struct gitmap *m, const char *key)
{
	unsigned int h = gitmap_strhash(key);
	struct gitmap_entry *e;

	for (e = m->table[h & (m->size - 1)]; e; e = e->next)
		if (e->hash == h && !strcmp(e->key, key))
			return e;
	return NULL;
}

struct gitmap_entry *gitmap_put(struct gitmap *m, const char *key, intptr_t dflt)
{
	unsigned int h = gitmap_strhash(key), b = h & (m->size - 1);
	struct gitmap_entry *e;

	for (e = m->table[b]; e; e = e->next)
		if (e->hash == h && !strcmp(e->key, key))
			return e;
	if (m->free_list) {
		e = m->free_list;
		m->free_list = e->next;
	} else {
		e = m->arena ? arena_alloc(m->arena, sizeof(*e)) : xcalloc(1, sizeof(*e));
	}
	e->hash = h;
	e->key = key;
	e->ptr = NULL;
	e->num = dflt;
	e->next = m->table[b];
	m->table[b] = e;
	if (++m->count > m->grow_at)
		rehash(m, m->size << RESIZE_BITS);
	return e;
}

int gitmap_remove(struct gitmap *m, const char *key)
{
	unsigned int h = gitmap_strhash(key);
	struct gitmap_entry **p;

	for (p = &m->table[h & (m->size - 1)]; *p; p = &(*p)->next) {
		struct gitmap_entry *e = *p;

		if (e->hash != h || strcmp(e->key, key))
			continue;
		*p = e->next;
		e->next = m->free_list;
		m->free_list = e;
		if (--m->count < m->shrink_at)
			rehash(m, m->size >> RESIZE_BITS);
		return 1;
	}
	return 0;
}

struct gitmap_entry *gitmap_first(const struct gitmap *m, unsigned int *bucket)
{
	for (*bucket = 0; *bucket < m->size; (*bucket)++)
		if (m->table[*bucket])
			return m->table[*bucket];
	return NULL;
}

struct gitmap_entry *gitmap_next(const struct gitmap *m, unsigned int *bucket,
				 struct gitmap_entry *e)
{
	if (e->next)
		return e->next;
	for ((*bucket)++; *bucket < m->size; (*bucket)++)
		if (m->table[*bucket])
			return m->table[*bucket];
	return NULL;
}
