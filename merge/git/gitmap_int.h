/*
 * A string-keyed map laid out as git's hashmap.c lays out its strmaps (FNV-1 hash,
 * 64 buckets to start, chains with the newest first, four times the buckets past
 * 80 % load), so that walking it visits the keys in the order git's merge walks its
 * own: merge-ort's result depends on that order in a few places (which deferred
 * folder is read first, which folder wins a tie as a rename target).  Plus an arena
 * for the merge's many small allocations.  Internal to merge/.
 */
#ifndef MERGE_GITMAP_INT_H
#define MERGE_GITMAP_INT_H

#include <stddef.h>
#include <stdint.h>

/* Allocations freed all at once. */
struct arena {
	struct arena_block *blocks;
	size_t used, cap;
};
#define ARENA_INIT { NULL, 0, 0 }
void *arena_alloc(struct arena *a, size_t n);         /* zeroed, 16-byte aligned */
char *arena_strdup(struct arena *a, const char *s);
char *arena_strndup(struct arena *a, const char *s, size_t n);
void arena_release(struct arena *a);

struct gitmap_entry {
	struct gitmap_entry *next;
	unsigned int hash;
	const char *key;        /* borrowed, or the arena's copy (gitmap_put_dup) */
	void *ptr;
	intptr_t num;
};

struct gitmap {
	struct gitmap_entry **table;
	unsigned int size, count, grow_at, shrink_at;
	struct gitmap_entry *free_list;
	struct arena *arena;    /* entries come from here; borrowed */
};

/* An empty map whose entries come from `arena` (which must outlive it). */
void gitmap_init(struct gitmap *m, struct arena *arena);
void gitmap_release(struct gitmap *m);
/* Empties the map, keeping its size (git's partial clear). */
void gitmap_clear(struct gitmap *m);

unsigned int gitmap_strhash(const char *s);
struct gitmap_entry *gitmap_get(const struct gitmap *m, const char *key);
/* The entry for `key`, created (ptr NULL, num `dflt`) if absent; `key` is borrowed. */
struct gitmap_entry *gitmap_put(struct gitmap *m, const char *key, intptr_t dflt);
/* Removes `key`; 1 if it was there. */
int gitmap_remove(struct gitmap *m, const char *key);

static inline void *gitmap_get_ptr(const struct gitmap *m, const char *key)
{
	struct gitmap_entry *e = gitmap_get(m, key);

	return e ? e->ptr : NULL;
}

static inline intptr_t gitmap_get_num(const struct gitmap *m, const char *key, intptr_t dflt)
{
	struct gitmap_entry *e = gitmap_get(m, key);

	return e ? e->num : dflt;
}

/* Walks the map in git's order: `for (e = gitmap_first(m, &i); e; e = gitmap_next(m, &i, e))`. */
struct gitmap_entry *gitmap_first(const struct gitmap *m, unsigned int *bucket);
struct gitmap_entry *gitmap_next(const struct gitmap *m, unsigned int *bucket,
				 struct gitmap_entry *e);

#endif
