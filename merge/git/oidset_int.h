/*
 * A set of object ids (open addressing), for walks that must remember tens of
 * thousands of commits cheaply.  For merge/ code only.
 */
#ifndef MERGE_OIDSET_INT_H
#define MERGE_OIDSET_INT_H

#include <stddef.h>
#include <git2.h>

struct oidset {
	git_oid *slots;         /* a zero oid marks a free slot */
	size_t nr, cap;         /* cap is 0 or a power of two */
	int has_zero;           /* the zero oid itself is a member */
};
#define OIDSET_INIT { NULL, 0, 0, 0 }

void oidset_release(struct oidset *set);   /* frees the slots; the set is empty after */
void oidset_clear(struct oidset *set);     /* empties it, keeping the memory */

/* 1 if `id` was added, 0 if it was already there. */
int oidset_add(struct oidset *set, const git_oid *id);
int oidset_has(const struct oidset *set, const git_oid *id);
static inline size_t oidset_size(const struct oidset *set)
{
	return set->nr + (size_t)set->has_zero;
}

#endif
