/* A set of object ids: open addressing, linear probing, the id's own bytes as hash. */
#include <string.h>

#include "merge/oidset.h"
#include "util/xalloc.h"
#include "util/banned.h"

static const git_oid __zero;

static size_t __hash(const git_oid *id)
{
	size_t h;

	memcpy(&h, id->id, sizeof(h));      /* a SHA-1 is already uniformly spread */
	return h;
}

static int __is_zero(const git_oid *id)
{
	return !memcmp(id->id, __zero.id, GIT_OID_RAWSZ);
}

static git_oid *__slot(const struct oidset *set, const git_oid *id)
{
	size_t i = __hash(id) & (set->cap - 1);

	while (!__is_zero(&set->slots[i]) && !git_oid_equal(&set->slots[i], id))
		i = (i + 1) & (set->cap - 1);
	return &set->slots[i];
}

static void __grow(struct oidset *set)
{
	struct oidset bigger = OIDSET_INIT;
	size_t i;

	bigger.cap = set->cap ? set->cap * 2 : 64;
	bigger.slots = xcalloc(bigger.cap, sizeof(*bigger.slots));
	for (i = 0; i < set->cap; i++)
		if (!__is_zero(&set->slots[i]))
			*__slot(&bigger, &set->slots[i]) = set->slots[i];
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

	if (__is_zero(id)) {
		int added = !set->has_zero;

		set->has_zero = 1;
		return added;
	}
	if ((set->nr + 1) * 4 > set->cap * 3)      /* keep the load under 3/4 */
		__grow(set);
	slot = __slot(set, id);
	if (!__is_zero(slot))
		return 0;
	*slot = *id;
	set->nr++;
	return 1;
}

int oidset_has(const struct oidset *set, const git_oid *id)
{
	if (__is_zero(id))
		return set->has_zero;
	return set->cap && !__is_zero(__slot(set, id));
}
