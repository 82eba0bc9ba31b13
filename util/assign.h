/* The linear assignment problem: a pairing of least total cost (git range-diff's question). */
#ifndef UTIL_ASSIGN_H
#define UTIL_ASSIGN_H

#include <stddef.h>

/* Costs at or above this are "never" (git's COST_MAX); any cost must be below INT_MAX / 4. */
#define ASSIGN_COST_MAX (1 << 16)

/*
 * Pairs the n "left" items with the n "right" ones so that the sum of the pairs'
 * costs is least (cost[l * n + r]: left l with right r, each >= 0), by the shortest
 * augmenting path method of Jonker and Volgenant (1987), in the order git's
 * range-diff runs it, so that where two pairings cost the same the same one is
 * chosen as git's.  left_to_right[l] (n entries, caller-owned) gets l's partner, or
 * -1 (git's procedure may leave a few unpaired when it meets such a tie).
 */
void assign_min_cost(int *left_to_right, const int *cost, size_t n);

#endif
