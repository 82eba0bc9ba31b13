/* Least-cost pairing by Jonker and Volgenant's shortest augmenting paths, in git's order. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "util/assign.h"
#include "util/xalloc.h"
#include "util/banned.h"

/*
 * The method keeps a price per left item; the reduced cost of a pair is its cost
 * minus the left item's price.  Right items are the ones being placed: a cheap
 * first guess (each left item takes its cheapest right item), then cheap repairs
 * (each unplaced right item takes the left item of least reduced cost, pushing out
 * its holder), then, for whatever is still unplaced, a shortest-path search over
 * reduced costs (Dijkstra with the list of "todo" left items kept in one array).
 * Each phase visits items in git's order (linear-assignment.c), because where two
 * pairings cost the same, the one chosen depends on that order alone.
 */
struct lap {
	size_t n;
	const int *cost;
	int *price;    /* per left item */
	int *l2r, *r2l;
	int *unplaced; /* right items */
	size_t unplaced_nr;
};

static int reduced(const struct lap *s, int l, int r)
{
	return s->cost[(size_t)l * s->n + (size_t)r] - s->price[l];
}

/* Each left item, last first, takes its cheapest right item if nobody has it yet. */
static void first_guess(struct lap *s)
{
	int n = (int)s->n, l, r;

	for (l = n - 1; l >= 0; l--) {
		int best = 0;

		for (r = 1; r < n; r++)
			if (s->cost[(size_t)l * s->n + best] > s->cost[(size_t)l * s->n + r])
				best = r;
		s->price[l] = s->cost[(size_t)l * s->n + best];
		if (s->r2l[best] == -1) {
			s->r2l[best] = l;
			s->l2r[l] = best;
		} else {
			if (s->r2l[best] >= 0) /* wanted twice: remembered as such */
				s->r2l[best] = -2 - s->r2l[best];
			s->l2r[l] = -1;
		}
	}
}

/* A right item wanted once lowers its left item's price by its second best choice. */
static void transfer(struct lap *s)
{
	int n = (int)s->n, r, l;

	for (r = 0; r < n; r++) {
		int l1 = s->r2l[r], least;

		if (l1 == -1) {
			s->unplaced[s->unplaced_nr++] = r;
			continue;
		}
		if (l1 < -1) {
			s->r2l[r] = -2 - l1;
			continue;
		}
		least = reduced(s, l1 == 0, r);
		for (l = 1; l < n; l++)
			if (l != l1 && least > reduced(s, l, r))
				least = reduced(s, l, r);
		s->price[l1] -= least;
	}
}

/* The left items of least and second least reduced cost for right item r. */
static void two_best(const struct lap *s, int r, int *l1, int *c1, int *l2, int *c2)
{
	int n = (int)s->n, l;

	*l1 = 0;
	*c1 = reduced(s, 0, r);
	*l2 = -1;
	*c2 = INT_MAX;
	for (l = 1; l < n; l++) {
		int c = reduced(s, l, r);

		if (*c2 > c) {
			if (*c1 < c) {
				*c2 = c;
				*l2 = l;
			} else {
				*c2 = *c1;
				*c1 = c;
				*l2 = *l1;
				*l1 = l;
			}
		}
	}
	if (*l2 < 0) {
		*l2 = *l1;
		*c2 = *c1;
	}
}

/* Two rounds: each unplaced right item takes its best left item, pushing out the holder. */
static void repair(struct lap *s)
{
	int round;

	for (round = 0; round < 2; round++) {
		size_t k = 0, todo = s->unplaced_nr;

		s->unplaced_nr = 0;
		while (k < todo) {
			int r = s->unplaced[k++], l1, c1, l2, c2, holder;

			two_best(s, r, &l1, &c1, &l2, &c2);
			holder = s->l2r[l1];
			if (c1 < c2) {
				s->price[l1] -= c2 - c1;
			} else if (holder >= 0) {
				l1 = l2;
				holder = s->l2r[l1];
			}
			if (holder >= 0) {
				if (c1 < c2)
					s->unplaced[--k] = holder; /* at once, in this round */
				else
					s->unplaced[s->unplaced_nr++] = holder;
			}
			s->r2l[r] = l1;
			s->l2r[l1] = r;
		}
	}
}

/* Scratch of one shortest-path search from an unplaced right item. */
struct lap_search {
	int *dist, *from, *todo; /* per left item; todo: left items, done ones first */
	int low, up, last;       /* todo[0..low): scanned; [low..up): at distance min */
	int min;
	int end;                 /* the left item the path ends at (git's `j`) */
};

/* Moves the left items at the least distance to todo[low..up); 1 if a free one is among them. */
static int collect_nearest(struct lap *s, struct lap_search *q)
{
	int n = (int)s->n, k;

	q->last = q->low;
	q->min = q->dist[q->todo[q->up++]];
	for (k = q->up; k < n; k++) {
		int l = q->todo[k], d = q->dist[l];

		q->end = l;
		if (d <= q->min) {
			if (d < q->min) {
				q->up = q->low;
				q->min = d;
			}
			q->todo[k] = q->todo[q->up];
			q->todo[q->up++] = l;
		}
	}
	/* as git: the path then ends at the last item looked at above, free or not */
	for (k = q->low; k < q->up; k++)
		if (s->l2r[q->todo[k]] == -1)
			return 1;
	return 0;
}

/* Relaxes through the holders of todo[low..up); 1 when a free left item is reached. */
static int scan_holders(struct lap *s, struct lap_search *q)
{
	int n = (int)s->n, k;

	do {
		int l1 = q->todo[q->low++], r = s->l2r[l1];
		int base = reduced(s, l1, r) - q->min;

		for (k = q->up; k < n; k++) {
			int l = q->todo[k], d = reduced(s, l, r) - base;

			q->end = l;
			if (d >= q->dist[l])
				continue;
			q->dist[l] = d;
			q->from[l] = r;
			if (d != q->min)
				continue;
			if (s->l2r[l] == -1)
				return 1;
			q->todo[k] = q->todo[q->up];
			q->todo[q->up++] = l;
		}
	} while (q->low != q->up);
	return 0;
}

static void augment(struct lap *s, struct lap_search *q, int start)
{
	int n = (int)s->n, k, l, r;

	for (l = 0; l < n; l++) {
		q->dist[l] = reduced(s, l, start);
		q->from[l] = start;
		q->todo[l] = l;
	}
	q->low = q->up = 0;
	q->end = -1;
	do {
		if (collect_nearest(s, q) || scan_holders(s, q))
			break;
	} while (q->low == q->up);
	for (k = 0; k < q->last; k++)
		s->price[q->todo[k]] += q->dist[q->todo[k]] - q->min;
	l = q->end;
	do { /* flip the path from its end back to `start` */
		int next;

		r = q->from[l];
		s->l2r[l] = r;
		next = s->r2l[r];
		s->r2l[r] = l;
		l = next;
	} while (r != start && l >= 0);
}

void assign_min_cost(int *left_to_right, const int *cost, size_t n)
{
	struct lap s = { .n = n, .cost = cost };
	struct lap_search q = { 0 };
	size_t i;

	if (n < 2) {
		for (i = 0; i < n; i++)
			left_to_right[i] = 0;
		return;
	}
	s.price = xcalloc(n, sizeof(int));
	s.l2r = left_to_right;
	s.r2l = xcalloc(n, sizeof(int));
	s.unplaced = xcalloc(n, sizeof(int));
	memset(s.l2r, -1, n * sizeof(int));
	memset(s.r2l, -1, n * sizeof(int));
	first_guess(&s);
	transfer(&s);
	if (s.unplaced_nr) {
		repair(&s);
		q.dist = xcalloc(n, sizeof(int));
		q.from = xcalloc(n, sizeof(int));
		q.todo = xcalloc(n, sizeof(int));
		for (i = 0; i < s.unplaced_nr; i++)
			augment(&s, &q, s.unplaced[i]);
	}
	free(q.dist);
	free(q.from);
	free(q.todo);
	free(s.price);
	free(s.r2l);
	free(s.unplaced);
}
