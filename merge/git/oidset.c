/* A set of object ids: open addressing, linear probing, the id's own bytes as hash. */
#include <string.h>

#include "merge/git/oidset_int.h"
#include "util/xalloc.h"
#include "util/banned.h"

static const git_oid zero;

static size_t hash(const git_oid *id)
{
	size_t h;

	memcpy(&h, id->id, sizeof(h));      /* a SHA-1 is already uniformly spread */
	return h;
}

static int is_zero(const git_oid *id)
{
	return !memcmp(id->id, zero.id, GIT_OID_RAWSZ);
}

static git_oid *find_slot(const struct oidset *set, const git_oid *id)
{
	size_t i = hash(id) & (set->cap - 1);

	while (!is_zero(&set->slots[i]) && !git_oid_equal(&set->slots[i], id))
		i = (i + 1) & (set->cap - 1);
	return &set->slots[i];
}

static void grow(struct oidset *set)
{
	struct oidset bigger = OIDSET_INIT;
	size_t i;

	bigger.cap = set->cap ? set->cap * 2 : 64;
	bigger.slots = xcalloc(bigger.cap, sizeof(*bigger.slots));
	for (i = 0; i < set->cap; i++)
		if (!is_zero(&set->slots[i]))
			*find_slot(&bigger, &set->slots[i]) = set->slots[i];
	free(set->slots);
	set->slots = bigger.slots;
	set->cap = bigger.cap;
}

void oidset_release(struct oidset *set)
{
	free(set->slots);
	memset(set, 0, sizeof(*set));
}

void oidset_clear(struct oidset *set)
{
	if (set->slots)
		memset(set->slots, 0, set->cap * sizeof(*set->slots));
	set->nr = 0;
	set->has_zero = 0;
}

int oidset_add(struct oidset *set, const git_oid *id)
{
	git_oid *slot;

	if (is_zero(id)) {
		int added = !set->has_zero;

		set->has_zero = 1;
		return added;
	}
	if ((set->nr + 1) * 4 > set->cap * 3)      /* keep the load under 3/4 */
		grow(set);
	slot = find_slot(set, id);
	if (!is_zero(slot))
		return 0;
	*slot = *id;
	set->nr++;
	return 1;
}

int oidset_has(const struct oidset *set, const git_oid *id)
{
	if (is_zero(id))
		return set->has_zero;
	return set->cap && !is_zero(find_slot(set, id));
}
