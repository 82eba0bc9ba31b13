/* Merge bases in git's order over real and virtual commits, read from the commit-graph. */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "merge/git/mergebase_int.h"
#include "merge/git/git_int.h"
#include "merge/git/gitmap_int.h"
#include "util/error.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define PARENT1 (1u << 0)
#define PARENT2 (1u << 1)
#define STALE (1u << 2)
#define RESULT (1u << 3)
#define SEEN (1u << 4)
#define UNINTERESTING (1u << 5)
#define ALL_FLAGS (PARENT1 | PARENT2 | STALE | RESULT | SEEN | UNINTERESTING)

#define GRAPH_PARENT_NONE 0x70000000u
#define GRAPH_EXTRA_EDGES 0x80000000u
#define GRAPH_LAST_EDGE 0x80000000u

struct mb_commit {
	git_oid oid;
	git_oid tree;
	int64_t date;
	uint32_t gen;           /* topological level (1 for a root); 0: not known yet */
	struct mb_commit **parents;
	unsigned int nparents;
	unsigned int flags;
	unsigned int is_virtual : 1, parsed : 1;
	struct mb_commit *next_in_bucket;
};

/* The commit-graph file, mapped: the parts a walk needs. */
struct cgraph {
	const unsigned char *map;
	size_t size;
	const unsigned char *fanout, *oids, *cdat, *edges;
	size_t edges_nr;
	uint32_t nr;
};

struct mbgraph {
	git_repository *repo;
	struct cgraph cg;
	struct mb_commit **table;       /* by oid: chains */
	size_t table_size, nr;
	struct mb_commit **all;         /* every commit made, for freeing */
	size_t all_nr, all_alloc;
	struct mb_commit **touched;     /* commits with flags to clear */
	size_t touched_nr, touched_alloc;
	struct mb_commit **result;
	size_t result_nr, result_alloc;
	size_t from_graph, parsed;
};

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64(const unsigned char *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

/* Maps objects/info/commit-graph if there is a sound one; otherwise the graph is empty. */
static void cgraph_open(struct cgraph *cg, const char *gitdir)
{
	char *path = xstrfmt("%sobjects/info/commit-graph", gitdir);
	const unsigned char *m;
	struct stat st;
	unsigned int i, chunks;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	memset(cg, 0, sizeof(*cg));
	free(path);
	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0 || st.st_size < 8 + 12 ||
	    (m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED) {
		close(fd);
		return;
	}
	close(fd);
	cg->map = m;
	cg->size = (size_t)st.st_size;
	if (memcmp(m, "CGPH", 4) || m[4] != 1 || m[5] != 1 || m[7] != 0)
		goto bad;
	chunks = m[6];
	if (8 + ((size_t)chunks + 1) * 12 > cg->size)
		goto bad;
	for (i = 0; i < chunks; i++) {
		const unsigned char *c = m + 8 + (size_t)i * 12;
		uint64_t off = be64(c + 4), end = be64(c + 16);

		if (off > cg->size || end > cg->size || end < off)
			goto bad;
		if (!memcmp(c, "OIDF", 4) && end - off == 256 * 4)
			cg->fanout = m + off;
		else if (!memcmp(c, "OIDL", 4))
			cg->oids = m + off;
		else if (!memcmp(c, "CDAT", 4))
			cg->cdat = m + off;
		else if (!memcmp(c, "EDGE", 4)) {
			cg->edges = m + off;
			cg->edges_nr = (size_t)(end - off) / 4;
		}
	}
	if (!cg->fanout || !cg->oids || !cg->cdat)
		goto bad;
	cg->nr = be32(cg->fanout + 255 * 4);
	if (cg->oids + (size_t)cg->nr * GIT_OID_RAWSZ > m + cg->size ||
	    cg->cdat + (size_t)cg->nr * (GIT_OID_RAWSZ + 16) > m + cg->size)
		goto bad;
	return;
bad:
	munmap((void *)cg->map, cg->size);
	memset(cg, 0, sizeof(*cg));
}

static int cgraph_find(const struct cgraph *cg, const git_oid *oid, uint32_t *pos)
{
	uint32_t lo, hi;

	if (!cg->map)
		return 0;
	lo = oid->id[0] ? be32(cg->fanout + (oid->id[0] - 1) * 4) : 0;
	hi = be32(cg->fanout + oid->id[0] * 4);
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = memcmp(cg->oids + (size_t)mid * GIT_OID_RAWSZ, oid->id, GIT_OID_RAWSZ);

		if (!c) {
			*pos = mid;
			return 1;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

struct mbgraph *mbgraph_new(git_repository *repo)
{
	struct mbgraph *g = xcalloc(1, sizeof(*g));

	g->repo = repo;
	g->table_size = 1024;
	g->table = xcalloc(g->table_size, sizeof(*g->table));
	cgraph_open(&g->cg, git_repository_path(repo));
	return g;
}

void mbgraph_free(struct mbgraph *g)
{
	size_t i;

	if (!g)
		return;
	for (i = 0; i < g->all_nr; i++) {
		free(g->all[i]->parents);
		free(g->all[i]);
	}
	free(g->all);
	free(g->table);
	free(g->touched);
	free(g->result);
	if (g->cg.map)
		munmap((void *)g->cg.map, g->cg.size);
	free(g);
}

void mbgraph_stats(const struct mbgraph *g, size_t *from_graph, size_t *parsed)
{
	*from_graph = g->from_graph;
	*parsed = g->parsed;
}

static size_t bucket(const struct mbgraph *g, const git_oid *oid)
{
	size_t h;

	memcpy(&h, oid->id, sizeof(h));
	return h & (g->table_size - 1);
}

static struct mb_commit *new_commit(struct mbgraph *g)
{
	struct mb_commit *c = xcalloc(1, sizeof(*c));

	ALLOC_GROW(g->all, g->all_nr + 1, g->all_alloc);
	g->all[g->all_nr++] = c;
	return c;
}

static void grow_table(struct mbgraph *g)
{
	struct mb_commit **old = g->table;
	size_t i, oldsize = g->table_size;

	g->table_size *= 4;
	g->table = xcalloc(g->table_size, sizeof(*g->table));
	for (i = 0; i < oldsize; i++) {
		struct mb_commit *c = old[i];

		while (c) {
			struct mb_commit *next = c->next_in_bucket;
			size_t b = bucket(g, &c->oid);

			c->next_in_bucket = g->table[b];
			g->table[b] = c;
			c = next;
		}
	}
	free(old);
}

/* The node of `oid`, made unparsed if new. */
static struct mb_commit *node(struct mbgraph *g, const git_oid *oid)
{
	struct mb_commit *c;
	size_t b = bucket(g, oid);

	for (c = g->table[b]; c; c = c->next_in_bucket)
		if (git_oid_equal(&c->oid, oid))
			return c;
	if (g->nr * 2 > g->table_size) {
		grow_table(g);
		b = bucket(g, oid);
	}
	c = new_commit(g);
	git_oid_cpy(&c->oid, oid);
	c->next_in_bucket = g->table[b];
	g->table[b] = c;
	g->nr++;
	return c;
}

static void add_parent(struct mb_commit *c, struct mb_commit *p)
{
	c->parents = xrealloc(c->parents, (c->nparents + 1) * sizeof(*c->parents));
	c->parents[c->nparents++] = p;
}

static int graph_parent(struct mbgraph *g, struct mb_commit *c, uint32_t pos)
{
	git_oid oid;

	if (pos >= g->cg.nr)
		return -1;
	git_oid_fromraw(&oid, g->cg.oids + (size_t)pos * GIT_OID_RAWSZ);
	add_parent(c, node(g, &oid));
	return 0;
}

static int parse_from_graph(struct mbgraph *g, struct mb_commit *c, uint32_t pos)
{
	const unsigned char *d = g->cg.cdat + (size_t)pos * (GIT_OID_RAWSZ + 16);
	uint32_t p1 = be32(d + GIT_OID_RAWSZ), p2 = be32(d + GIT_OID_RAWSZ + 4);

	git_oid_fromraw(&c->tree, d);
	c->gen = be32(d + GIT_OID_RAWSZ + 8) >> 2;
	c->date = (int64_t)((uint64_t)(be32(d + GIT_OID_RAWSZ + 8) & 0x3) << 32 |
			    be32(d + GIT_OID_RAWSZ + 12));
	if (p1 != GRAPH_PARENT_NONE && graph_parent(g, c, p1) < 0)
		return -1;
	if (p2 != GRAPH_PARENT_NONE && !(p2 & GRAPH_EXTRA_EDGES)) {
		if (graph_parent(g, c, p2) < 0)
			return -1;
	} else if (p2 != GRAPH_PARENT_NONE) {
		size_t e = p2 & ~GRAPH_EXTRA_EDGES;

		for (; e < g->cg.edges_nr; e++) {
			uint32_t v = be32(g->cg.edges + e * 4);

			if (graph_parent(g, c, v & ~GRAPH_LAST_EDGE) < 0)
				return -1;
			if (v & GRAPH_LAST_EDGE)
				break;
		}
	}
	g->from_graph++;
	return 0;
}

static int mb_parse_commit(struct mbgraph *g, struct mb_commit *c)
{
	git_commit *gc = NULL;
	unsigned int i;
	uint32_t pos;

	if (c->parsed || c->is_virtual)
		return 0;
	c->parsed = 1;
	if (cgraph_find(&g->cg, &c->oid, &pos) && parse_from_graph(g, c, pos) == 0)
		return 0;
	free(c->parents);
	c->parents = NULL;
	c->nparents = 0;
	if (git_commit_lookup(&gc, g->repo, &c->oid) < 0) {
		c->parsed = 0;
		return merge_git_fail("merge bases: commit %s", git_oid_tostr_s(&c->oid));
	}
	git_oid_cpy(&c->tree, git_commit_tree_id(gc));
	c->date = git_commit_time(gc);
	for (i = 0; i < git_commit_parentcount(gc); i++)
		add_parent(c, node(g, git_commit_parent_id(gc, i)));
	git_commit_free(gc);
	g->parsed++;
	return 0;
}

int mbgraph_lookup(struct mb_commit **out, struct mbgraph *g, const git_oid *oid)
{
	struct mb_commit *c = node(g, oid);
	int err = mb_parse_commit(g, c);

	*out = err ? NULL : c;
	return err;
}

struct mb_commit *mbgraph_virtual(struct mbgraph *g, const git_oid *tree, struct mb_commit *p1,
				  struct mb_commit *p2)
{
	struct mb_commit *c = new_commit(g);

	c->is_virtual = 1;
	c->parsed = 1;
	git_oid_cpy(&c->tree, tree);
	if (p1)
		add_parent(c, p1);
	if (p2)
		add_parent(c, p2);
	return c;
}

int mbgraph_tree(git_oid *out, struct mbgraph *g, struct mb_commit *c)
{
	int err = mb_parse_commit(g, c);

	if (!err)
		git_oid_cpy(out, &c->tree);
	return err;
}

const git_oid *mbgraph_id(const struct mb_commit *c)
{
	return c->is_virtual ? NULL : &c->oid;
}

/* git's prio_queue ordered by compare_commits_by_commit_date, ties first in, first out. */
struct queue_item {
	struct mb_commit *c;
	size_t ctr;
};

struct queue {
	struct queue_item *v;
	size_t nr, alloc, ctr;
};

static int before(const struct queue_item *a, const struct queue_item *b)
{
	if (a->c->date != b->c->date)
		return a->c->date > b->c->date;
	return a->ctr < b->ctr;
}

static void queue_put(struct queue *q, struct mb_commit *c)
{
	size_t i;

	ALLOC_GROW(q->v, q->nr + 1, q->alloc);
	q->v[q->nr] = (struct queue_item){ c, q->ctr++ };
	for (i = q->nr++; i;) {
		size_t parent = (i - 1) / 2;
		struct queue_item t;

		if (!before(&q->v[i], &q->v[parent]))
			break;
		t = q->v[i];
		q->v[i] = q->v[parent];
		q->v[parent] = t;
		i = parent;
	}
}

static struct mb_commit *queue_get(struct queue *q)
{
	struct mb_commit *top;
	size_t i = 0;

	if (!q->nr)
		return NULL;
	top = q->v[0].c;
	if (!--q->nr)
		return top;
	q->v[0] = q->v[q->nr];
	for (;;) {
		size_t child = 2 * i + 1;
		struct queue_item t;

		if (child >= q->nr)
			break;
		if (child + 1 < q->nr && before(&q->v[child + 1], &q->v[child]))
			child++;
		if (!before(&q->v[child], &q->v[i]))
			break;
		t = q->v[i];
		q->v[i] = q->v[child];
		q->v[child] = t;
		i = child;
	}
	return top;
}

static int queue_has_nonstale(const struct queue *q)
{
	size_t i;

	for (i = 0; i < q->nr; i++)
		if (!(q->v[i].c->flags & STALE))
			return 1;
	return 0;
}

static void set_flags(struct mbgraph *g, struct mb_commit *c, unsigned int flags)
{
	if (!(c->flags & ALL_FLAGS)) {
		ALLOC_GROW(g->touched, g->touched_nr + 1, g->touched_alloc);
		g->touched[g->touched_nr++] = c;
	}
	c->flags |= flags;
}

static void clear_flags(struct mbgraph *g)
{
	size_t i;

	for (i = 0; i < g->touched_nr; i++)
		g->touched[i]->flags &= ~ALL_FLAGS;
	g->touched_nr = 0;
}

/* commit_list_insert_by_date(): before the first older one, after equal dates. */
static void insert_by_date(struct mb_commit ***list, size_t *nr, size_t *alloc,
			   struct mb_commit *c)
{
	size_t i;

	for (i = 0; i < *nr && (*list)[i]->date >= c->date; i++)
		;
	ALLOC_GROW(*list, *nr + 1, *alloc);
	memmove(*list + i + 1, *list + i, (*nr - i) * sizeof(**list));
	(*list)[i] = c;
	(*nr)++;
}

/*
 * paint_down_to_common(): the commits reached from both sides, newest first; the
 * ancestors of one found are marked STALE.  NB_ETIMEOUT past `max_walk` commits.
 */
static int paint_down(struct mb_commit ***out, size_t *out_nr, struct mbgraph *g,
		      struct mb_commit *one, struct mb_commit **twos, size_t n, size_t max_walk)
{
	struct queue q = { NULL, 0, 0, 0 };
	struct mb_commit **res = NULL;
	size_t res_nr = 0, res_alloc = 0, walked = 0, i;
	int err = 0;

	set_flags(g, one, PARENT1);
	queue_put(&q, one);
	for (i = 0; i < n; i++) {
		set_flags(g, twos[i], PARENT2);
		queue_put(&q, twos[i]);
	}
	while (queue_has_nonstale(&q)) {
		struct mb_commit *c = queue_get(&q);
		unsigned int flags = c->flags & (PARENT1 | PARENT2 | STALE);

		if (max_walk && ++walked > max_walk) {
			err = nb_error_set(NB_ETIMEOUT, "merge bases: more than %zu commits walked",
					   max_walk);
			break;
		}
		if (flags == (PARENT1 | PARENT2)) {
			if (!(c->flags & RESULT)) {
				set_flags(g, c, RESULT);
				insert_by_date(&res, &res_nr, &res_alloc, c);
			}
			flags |= STALE;
		}
		if ((err = mb_parse_commit(g, c)) < 0)
			break;
		for (i = 0; i < c->nparents; i++) {
			struct mb_commit *p = c->parents[i];

			if ((p->flags & flags) == flags)
				continue;
			if ((err = mb_parse_commit(g, p)) < 0)
				break;
			set_flags(g, p, flags);
			queue_put(&q, p);
		}
		if (err)
			break;
	}
	free(q.v);
	*out = res;
	*out_nr = res_nr;
	return err;
}

/* merge_bases_many(): the common commits that are not below another one. */
static int bases_many(struct mb_commit ***out, size_t *out_nr, struct mbgraph *g,
		      struct mb_commit *one, struct mb_commit *two, size_t max_walk)
{
	struct mb_commit **list = NULL, **res = NULL;
	size_t nr = 0, res_nr = 0, res_alloc = 0, i;
	int err;

	*out = NULL;
	*out_nr = 0;
	if (one == two) {
		res = xmalloc(sizeof(*res));
		res[0] = one;
		*out = res;
		*out_nr = 1;
		return 0;
	}
	if ((err = mb_parse_commit(g, one)) < 0 || (err = mb_parse_commit(g, two)) < 0)
		return err;
	err = paint_down(&list, &nr, g, one, &two, 1, max_walk);
	for (i = 0; !err && i < nr; i++)
		if (!(list[i]->flags & STALE))
			insert_by_date(&res, &res_nr, &res_alloc, list[i]);
	free(list);
	*out = res;
	*out_nr = res_nr;
	return err;
}

/* remove_redundant() (the walk without generation numbers): keeps the array's order. */
static int remove_redundant(struct mb_commit **array, size_t *cnt, struct mbgraph *g,
			    size_t max_walk)
{
	struct mb_commit **work = xmalloc(*cnt * sizeof(*work));
	size_t *filled_index = xmalloc(*cnt * sizeof(*filled_index));
	char *redundant = xcalloc(*cnt, 1);
	size_t i, j, filled, k = 0;
	int err = 0;

	for (i = 0; !err && i < *cnt; i++) {
		struct mb_commit **common = NULL;
		size_t common_nr = 0;

		if (redundant[i])
			continue;
		for (j = filled = 0; j < *cnt; j++) {
			if (i == j || redundant[j])
				continue;
			filled_index[filled] = j;
			work[filled++] = array[j];
		}
		err = paint_down(&common, &common_nr, g, array[i], work, filled, max_walk);
		if (array[i]->flags & PARENT2)
			redundant[i] = 1;
		for (j = 0; j < filled; j++)
			if (work[j]->flags & PARENT1)
				redundant[filled_index[j]] = 1;
		clear_flags(g);
		free(common);
	}
	for (i = 0; i < *cnt; i++)
		if (!redundant[i])
			array[k++] = array[i];
	*cnt = k;
	free(work);
	free(filled_index);
	free(redundant);
	return err;
}

int mbgraph_merge_bases(struct mb_commit ***out, size_t *out_nr, struct mbgraph *g,
			struct mb_commit *one, struct mb_commit *two, size_t max_walk)
{
	struct mb_commit **found = NULL;
	size_t nr = 0, i;
	int err;

	g->result_nr = 0;
	*out = g->result;
	*out_nr = 0;
	err = bases_many(&found, &nr, g, one, two, max_walk);
	clear_flags(g);
	if (!err && one != two && nr > 1)
		err = remove_redundant(found, &nr, g, max_walk);
	for (i = 0; !err && i < nr; i++)
		insert_by_date(&g->result, &g->result_nr, &g->result_alloc, found[i]);
	clear_flags(g);
	free(found);
	*out = g->result;
	*out_nr = err ? 0 : g->result_nr;
	return err;
}

static int queue_all_uninteresting(const struct queue *q)
{
	size_t i;

	for (i = 0; i < q->nr; i++)
		if (!(q->v[i].c->flags & UNINTERESTING))
			return 0;
	return 1;
}

int mbgraph_walk_range(struct mbgraph *g, struct mb_commit *tip, struct mb_commit **hide,
		       size_t hide_nr, size_t max, const struct mb_walk_visitor *v)
{
	mb_visit_fn *fn = v->fn;
	mb_follow_fn *follow = v->follow;
	void *data = v->data;
	struct queue q = { NULL, 0, 0, 0 };
	size_t i, visited = 0;
	int err = 0;

	for (i = 0; i < hide_nr; i++) {
		if ((err = mb_parse_commit(g, hide[i])) < 0)
			goto done;
		set_flags(g, hide[i], SEEN | UNINTERESTING);
		queue_put(&q, hide[i]);
	}
	if ((err = mb_parse_commit(g, tip)) < 0)
		goto done;
	if (!(tip->flags & SEEN)) {
		set_flags(g, tip, SEEN);
		queue_put(&q, tip);
	}
	while (q.nr && !queue_all_uninteresting(&q)) {
		struct mb_commit *c = queue_get(&q);
		unsigned int flags = c->flags & UNINTERESTING;
		int only = -1;

		for (i = 0; i < c->nparents; i++)
			if ((err = mb_parse_commit(g, c->parents[i])) < 0)
				goto done;
		if (!flags && follow && c->nparents > 1 && !c->is_virtual) {
			const git_oid **trees = xmalloc(c->nparents * sizeof(*trees));

			for (i = 0; i < c->nparents; i++)
				trees[i] = &c->parents[i]->tree;
			only = follow(&c->tree, trees, c->nparents, data);
			free(trees);
		}
		for (i = 0; i < c->nparents; i++) {
			struct mb_commit *p = c->parents[i];

			if (only >= 0 && i != (size_t)only)
				continue;
			if (flags && !(p->flags & UNINTERESTING))
				set_flags(g, p, UNINTERESTING);
			if (!(p->flags & SEEN)) {
				set_flags(g, p, SEEN);
				queue_put(&q, p);
			}
		}
		if (flags || c->is_virtual)
			continue;
		if (max && ++visited > max)
			break;
		if (fn(&c->oid, &c->tree, c->nparents == 1 ? &c->parents[0]->tree : NULL, data))
			break;
	}
done:
	clear_flags(g);
	free(q.v);
	return err;
}

/* The commit's topological level: the graph's, or 1 + its parents' highest. */
static int generation(struct mbgraph *g, struct mb_commit *c, uint32_t *out)
{
	struct mb_commit **stack = NULL;
	size_t nr = 0, alloc = 0, i;
	int err = 0;

	ALLOC_GROW(stack, nr + 1, alloc);
	stack[nr++] = c;
	while (nr) {
		struct mb_commit *top = stack[nr - 1];
		uint32_t max = 0;
		int pending = 0;

		if ((err = mb_parse_commit(g, top)) < 0)
			break;
		if (top->gen) {
			nr--;
			continue;
		}
		for (i = 0; i < top->nparents; i++) {
			struct mb_commit *p = top->parents[i];

			if ((err = mb_parse_commit(g, p)) < 0)
				break;
			if (!p->gen) {
				ALLOC_GROW(stack, nr + 1, alloc);
				stack[nr++] = p;
				pending = 1;
			} else if (p->gen > max) {
				max = p->gen;
			}
		}
		if (err)
			break;
		if (!pending) {
			top->gen = max + 1;
			nr--;
		}
	}
	free(stack);
	*out = c->gen;
	return err;
}

int mbgraph_reachable(struct mbgraph *g, const git_oid *ancestor, const git_oid *commits,
		      size_t n)
{
	struct mb_commit *a, **stack = NULL;
	size_t nr = 0, alloc = 0, i;
	uint32_t ga, gc;
	int found = 0, err;

	if ((err = mbgraph_lookup(&a, g, ancestor)) < 0 || (err = generation(g, a, &ga)) < 0)
		return err;
	for (i = 0; i < n; i++) {
		struct mb_commit *c;

		if ((err = mbgraph_lookup(&c, g, &commits[i])) < 0)
			goto done;
		ALLOC_GROW(stack, nr + 1, alloc);
		stack[nr++] = c;
	}
	while (nr && !found) {
		struct mb_commit *c = stack[--nr];

		if (c == a) {
			found = 1;
			break;
		}
		if (c->flags & SEEN)
			continue;
		set_flags(g, c, SEEN);
		/* a descendant of `ancestor` has a higher level */
		if ((err = generation(g, c, &gc)) < 0)
			goto done;
		if (gc <= ga)
			continue;
		for (i = 0; i < c->nparents; i++) {
			ALLOC_GROW(stack, nr + 1, alloc);
			stack[nr++] = c->parents[i];
		}
	}
done:
	clear_flags(g);
	free(stack);
	return err < 0 ? err : found;
}
