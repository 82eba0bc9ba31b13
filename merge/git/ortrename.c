/* Rename detection of one side of a merge, decision for decision as git's diffcore-rename. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "merge/git/ort_int.h"
#include "merge/git/filemerge_int.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define NUM_CANDIDATE_PER_DST 4
#define HASHBASE 107927
#define UNKNOWN_DIR "/"

/* One chunk class of a file's content and the bytes of it (diffcore-delta's spanhash). */
struct ort_span {
	unsigned int hashval, cnt;
};

struct rename_dst {
	struct ort_pair *p;
	int is_rename;
};

struct rename_src {
	struct ort_pair *p;
	int score;
};

struct detect {
	struct ort_rename_input *in;
	struct rename_dst *dst;
	size_t dst_nr;
	struct rename_src *src;
	size_t src_nr;
	int setup;                      /* dir rename info is set up */
	struct gitmap idx_map;          /* path of a dst not yet renamed -> index */
	struct gitmap guess;            /* old dir -> the new dir most renames went to */
};

struct score {
	int src, dst;
	int score, name_score;
};

static int is_reg(unsigned int mode)
{
	return S_ISREG(mode);
}

static int empty_blob(const git_oid *oid)
{
	static const unsigned char empty[GIT_OID_RAWSZ] = {
		0xe6, 0x9d, 0xe2, 0x9b, 0xb2, 0xd1, 0xd6, 0x43, 0x4b, 0x8b,
		0x29, 0xae, 0x77, 0x5a, 0xd8, 0xc2, 0xe4, 0x8c, 0x53, 0x91,
	};

	return !memcmp(oid->id, empty, GIT_OID_RAWSZ);
}

static int basename_same(const struct ort_spec *src, const struct ort_spec *dst)
{
	size_t sl = strlen(src->path), dl = strlen(dst->path);

	while (sl && dl) {
		char c1 = src->path[--sl], c2 = dst->path[--dl];

		if (c1 != c2)
			return 0;
		if (c1 == '/')
			return 1;
	}
	return (!sl || src->path[sl - 1] == '/') && (!dl || dst->path[dl - 1] == '/');
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* The folder of a path ("" at the top), in the arena. */
static char *dir_name(struct arena *a, const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? arena_strndup(a, path, (size_t)(slash - path)) : arena_strdup(a, "");
}

static int load_size(struct detect *d, struct ort_spec *s)
{
	git_object_t type;
	size_t len;

	if (s->have_size)
		return 0;
	if (git_odb_read_header(&len, &type, d->in->odb, &s->oid) < 0) {
		d->in->failed = 1;
		return -1;
	}
	s->size = len;
	s->have_size = 1;
	return 0;
}

static int span_cmp(const void *a, const void *b)
{
	unsigned int x = ((const struct ort_span *)a)->hashval;
	unsigned int y = ((const struct ort_span *)b)->hashval;

	return x < y ? -1 : x > y;
}

/* Adds `n` bytes of the chunk class `h` to an open-addressing table of spans. */
static void span_add(struct ort_span **tab, size_t *cap, size_t *nr, unsigned int h,
		     unsigned int n)
{
	size_t j;

	if ((*nr + 1) * 2 > *cap) {
		struct ort_span *old = *tab;
		size_t i, oldcap = *cap;

		*cap = *cap ? *cap * 2 : 512;
		*tab = xcalloc(*cap, sizeof(**tab));
		for (i = 0; i < oldcap; i++) {
			if (!old[i].cnt)
				continue;
			j = old[i].hashval & (*cap - 1);
			while ((*tab)[j].cnt)
				j = (j + 1) & (*cap - 1);
			(*tab)[j] = old[i];
		}
		free(old);
	}
	for (j = h & (*cap - 1); (*tab)[j].cnt; j = (j + 1) & (*cap - 1))
		if ((*tab)[j].hashval == h) {
			(*tab)[j].cnt += n;
			return;
		}
	(*tab)[j].hashval = h;
	(*tab)[j].cnt = n;
	(*nr)++;
}

/*
 * The content cut in chunks at each LF or every 64 bytes, each chunk hashed
 * (diffcore-delta's hash_chars(): a CR before an LF does not count in text).
 */
static int load_spans(struct detect *d, struct ort_spec *s)
{
	struct ort_span *tab = NULL;
	size_t cap = 0, nr = 0, i, k;
	unsigned int accum1 = 0, accum2 = 0, n = 0;
	git_blob *blob = NULL;
	const unsigned char *buf;
	size_t sz;
	int is_text;

	if (s->have_hash)
		return 0;
	if (git_blob_lookup(&blob, d->in->repo, &s->oid) < 0) {
		d->in->failed = 1;
		return -1;
	}
	buf = git_blob_rawcontent(blob);
	sz = (size_t)git_blob_rawsize(blob);
	is_text = !filemerge_is_binary((const char *)buf, sz);
	while (sz) {
		unsigned int c = *buf++, old1 = accum1;

		sz--;
		if (is_text && c == '\r' && sz && *buf == '\n')
			continue;
		accum1 = (accum1 << 7) ^ (accum2 >> 25);
		accum2 = (accum2 << 7) ^ (old1 >> 25);
		accum1 += c;
		if (++n < 64 && c != '\n')
			continue;
		span_add(&tab, &cap, &nr, (accum1 + accum2 * 0x61) % HASHBASE, n);
		n = 0;
		accum1 = accum2 = 0;
	}
	git_blob_free(blob);
	s->spans = nr ? xmalloc(nr * sizeof(*s->spans)) : NULL;
	for (i = k = 0; i < cap; i++)
		if (tab[i].cnt)
			s->spans[k++] = tab[i];
	free(tab);
	if (nr)  /* qsort's array may not be NULL, even of no elements */
		qsort(s->spans, nr, sizeof(*s->spans), span_cmp);
	s->spans_nr = nr;
	s->have_hash = 1;
	return 0;
}

/* How much of dst came from src, as diffcore_count_changes() counts it. */
static unsigned long src_copied(const struct ort_spec *src, const struct ort_spec *dst)
{
	size_t i = 0, j = 0;
	unsigned long sc = 0;

	for (i = 0; i < src->spans_nr; i++) {
		unsigned int s_cnt = src->spans[i].cnt, d_cnt = 0;

		while (j < dst->spans_nr && dst->spans[j].hashval < src->spans[i].hashval)
			j++;
		if (j < dst->spans_nr && dst->spans[j].hashval == src->spans[i].hashval)
			d_cnt = dst->spans[j++].cnt;
		sc += s_cnt < d_cnt ? s_cnt : d_cnt;
	}
	return sc;
}

/* estimate_similarity(): 0 .. ORT_MAX_SCORE. */
static int similarity(struct detect *d, struct ort_spec *src, struct ort_spec *dst,
		      int minimum_score)
{
	unsigned long max_size, base_size, delta_size;

	if (!is_reg(src->mode) || !is_reg(dst->mode))
		return 0;
	if (load_size(d, src) < 0 || load_size(d, dst) < 0)
		return 0;
	max_size = src->size > dst->size ? src->size : dst->size;
	base_size = src->size < dst->size ? src->size : dst->size;
	delta_size = max_size - base_size;
	if (max_size * (unsigned long)(ORT_MAX_SCORE - minimum_score) <
	    delta_size * ORT_MAX_SCORE)
		return 0;
	if (load_spans(d, src) < 0 || load_spans(d, dst) < 0)
		return 0;
	if (!dst->size)
		return 0;
	return (int)(src_copied(src, dst) * ORT_MAX_SCORE / max_size);
}

static void record_rename_pair(struct detect *d, size_t dst_index, size_t src_index, int score)
{
	struct ort_pair *src = d->src[src_index].p, *dst = d->dst[dst_index].p;

	src->one->rename_used++;
	d->dst[dst_index].is_rename = 1;
	dst->one = src->one;
	dst->renamed_pair = 1;
	dst->score = strcmp(dst->one->path, dst->two->path) ? score : d->src[src_index].score;
}

/* find_exact_renames(): each destination takes the best unused source of its blob. */
struct oid_index {
	git_oid oid;
	size_t index;
};

static int oid_index_cmp(const void *a, const void *b)
{
	const struct oid_index *x = a, *y = b;
	int c = git_oid_cmp(&x->oid, &y->oid);

	return c ? c : x->index < y->index ? -1 : x->index > y->index;
}

static int find_exact_renames(struct detect *d)
{
	struct oid_index *by_oid = xmalloc((d->src_nr + 1) * sizeof(*by_oid));
	size_t i, renames = 0;

	for (i = 0; i < d->src_nr; i++)
		by_oid[i] = (struct oid_index){ d->src[i].p->one->oid, i };
	qsort(by_oid, d->src_nr, sizeof(*by_oid), oid_index_cmp);
	for (i = 0; i < d->dst_nr; i++) {
		const struct ort_spec *target = d->dst[i].p->two;
		size_t lo = 0, hi = d->src_nr, k;
		long best = -1;
		int best_score = -1, budget = 100;

		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (git_oid_cmp(&by_oid[mid].oid, &target->oid) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (k = lo; k < d->src_nr && git_oid_equal(&by_oid[k].oid, &target->oid); k++) {
			const struct ort_spec *source = d->src[by_oid[k].index].p->one;
			int score;

			if ((!is_reg(source->mode) || !is_reg(target->mode)) &&
			    source->mode != target->mode)
				continue;
			if (source->rename_used)
				continue;
			score = 1 + basename_same(source, target);
			if (score > best_score) {
				best = (long)by_oid[k].index;
				best_score = score;
				if (score == 2)
					break;
			}
			if (!--budget)
				break;
		}
		if (best >= 0) {
			record_rename_pair(d, i, (size_t)best, ORT_MAX_SCORE);
			renames++;
		}
	}
	free(by_oid);
	return (int)renames;
}

static void remove_unneeded_sources(struct detect *d, const struct gitmap *interesting)
{
	size_t i, k = 0;

	for (i = 0; i < d->src_nr; i++) {
		const struct ort_spec *one = d->src[i].p->one;

		if (one->rename_used)
			continue;
		if (interesting && !gitmap_get(interesting, one->path))
			continue;
		d->src[k++] = d->src[i];
	}
	d->src_nr = k;
}

static void increment_count(struct detect *d, const char *old_dir, const char *new_dir)
{
	struct gitmap_entry *e = gitmap_put(d->in->dir_rename_count, old_dir, 0);
	struct gitmap *counts = e->ptr;

	if (!counts) {
		counts = arena_alloc(d->in->arena, sizeof(*counts));
		gitmap_init(counts, d->in->arena);
		e->key = arena_strdup(d->in->arena, old_dir);
		e->ptr = counts;
	}
	e = gitmap_put(counts, new_dir, 0);
	if (!e->num)
		e->key = arena_strdup(d->in->arena, new_dir);
	e->num++;
}

/*
 * update_dir_rename_counts(): a rename a/b/c/d/e/foo.c -> a/b/x/y/e/foo.c counts for
 * a/b/c/d/e -> a/b/x/y/e and, the trailing folders agreeing, for a/b/c/d -> a/b/x/y,
 * as long as the folders are ones the side removed.
 */
static void update_dir_rename_counts(struct detect *d, const char *oldname, const char *newname)
{
	struct arena *a = d->in->arena;
	char *od, *nd;
	int first = 1;

	if (!d->setup)
		return;
	od = dir_name(a, oldname);
	nd = dir_name(a, newname);
	for (;;) {
		intptr_t flag;

		if (!first) {
			const char *os = base_name(od), *ns = base_name(nd);

			if (!gitmap_get(d->in->dirs_removed, dir_name(a, od)))
				break;
			if (strcmp(os, ns))
				break;
			od = dir_name(a, od);
			nd = dir_name(a, nd);
		} else if (!gitmap_get(d->in->dirs_removed, od)) {
			break;
		}
		flag = gitmap_get_num(d->in->dirs_removed, od, ORT_NOT_RELEVANT);
		if (flag == ORT_RELEVANT_FOR_SELF || first)
			increment_count(d, od, nd);
		first = 0;
		if (flag == ORT_NOT_RELEVANT)
			break;
		if (!*od || !*nd)
			break;
	}
}

/* get_highest_rename_path(): the first of the highest counts, in the map's order. */
static const char *highest_rename_path(const struct gitmap *counts)
{
	struct gitmap_entry *e;
	const char *best = NULL;
	intptr_t high = 0;
	unsigned int b;

	for (e = gitmap_first(counts, &b); e; e = gitmap_next(counts, &b, e))
		if (e->num > high) {
			high = e->num;
			best = e->key;
		}
	return best;
}

static void initialize_dir_rename_info(struct detect *d)
{
	struct gitmap_entry *e;
	unsigned int b;
	size_t i;

	d->setup = 1;
	gitmap_init(&d->idx_map, d->in->arena);
	gitmap_init(&d->guess, d->in->arena);
	for (i = 0; i < d->dst_nr; i++) {
		if (!d->dst[i].is_rename) {
			gitmap_put(&d->idx_map, d->dst[i].p->two->path, 0)->num = (intptr_t)i;
			continue;
		}
		update_dir_rename_counts(d, d->dst[i].p->one->path, d->dst[i].p->two->path);
	}
	for (e = gitmap_first(d->in->dir_rename_count, &b); e;
	     e = gitmap_next(d->in->dir_rename_count, &b, e)) {
		const char *best = highest_rename_path(e->ptr);

		if (best)
			gitmap_put(&d->guess, e->key, 0)->ptr = (void *)best;
	}
}

/* idx_possible_rename(): where the guessed folder rename would put `filename`. */
static long idx_possible_rename(struct detect *d, const char *filename)
{
	struct strbuf path = STRBUF_INIT;
	const char *new_dir;
	long idx;

	if (!d->setup)
		return -1;
	new_dir = gitmap_get_ptr(&d->guess, dir_name(d->in->arena, filename));
	if (!new_dir)
		return -1;
	strbuf_addf(&path, "%s/%s", new_dir, base_name(filename));
	idx = (long)gitmap_get_num(&d->idx_map, path.buf, -1);
	strbuf_release(&path);
	return idx;
}

static int find_basename_matches(struct detect *d, int minimum_score)
{
	struct arena *a = d->in->arena;
	struct gitmap sources, dests;
	size_t i;
	int renames = 0;

	gitmap_init(&sources, a);
	gitmap_init(&dests, a);
	for (i = 0; i < d->src_nr; i++) {
		const char *base = base_name(d->src[i].p->one->path);
		struct gitmap_entry *e = gitmap_get(&sources, base);

		if (e)
			e->num = -1;
		else
			gitmap_put(&sources, base, 0)->num = (intptr_t)i;
	}
	for (i = 0; i < d->dst_nr; i++) {
		struct gitmap_entry *e;

		if (d->dst[i].is_rename)
			continue;
		e = gitmap_get(&dests, base_name(d->dst[i].p->two->path));
		if (e)
			e->num = -1;
		else
			gitmap_put(&dests, base_name(d->dst[i].p->two->path), 0)->num = (intptr_t)i;
	}
	for (i = 0; i < d->src_nr; i++) {
		const char *filename = d->src[i].p->one->path, *base = base_name(filename);
		long src_index, dst_index;
		struct ort_spec *one, *two;
		struct gitmap_entry *de;
		int score;

		if (!gitmap_get(d->in->relevant_sources, filename))
			continue;
		src_index = (long)gitmap_get_num(&sources, base, -1);
		if (!(de = gitmap_get(&dests, base)))
			continue;
		dst_index = (long)de->num;
		if (src_index == -1 || dst_index == -1) {
			src_index = (long)i;
			dst_index = idx_possible_rename(d, filename);
		}
		if (dst_index == -1 || d->dst[dst_index].is_rename)
			continue;
		one = d->src[src_index].p->one;
		two = d->dst[dst_index].p->two;
		score = similarity(d, one, two, minimum_score);
		if (score < minimum_score)
			continue;
		record_rename_pair(d, (size_t)dst_index, (size_t)src_index, score);
		renames++;
		update_dir_rename_counts(d, one->path, two->path);
	}
	gitmap_release(&sources);
	gitmap_release(&dests);
	return renames;
}

static int dir_rename_already_determinable(const struct gitmap *counts)
{
	struct gitmap_entry *e;
	intptr_t first = 0, second = 0, unknown = 0;
	unsigned int b;

	for (e = gitmap_first(counts, &b); e; e = gitmap_next(counts, &b, e)) {
		if (!strcmp(e->key, UNKNOWN_DIR)) {
			unknown = e->num;
		} else if (e->num >= first) {
			second = first;
			first = e->num;
		} else if (e->num >= second) {
			second = e->num;
		}
	}
	return first > second + unknown;
}

/*
 * handle_early_known_dir_renames(): a source wanted only to know where its folder
 * went is dropped once the renames found so far settle that.
 */
static void handle_early_known_dir_renames(struct detect *d)
{
	struct gitmap *removed = d->in->dirs_removed;
	struct arena *a = d->in->arena;
	struct gitmap_entry *e;
	unsigned int b;
	size_t i, k = 0;

	for (i = 0; i < d->src_nr; i++) {
		char *old_dir = dir_name(a, d->src[i].p->one->path);

		while (*old_dir &&
		       gitmap_get_num(removed, old_dir, ORT_NOT_RELEVANT) != ORT_NOT_RELEVANT) {
			increment_count(d, old_dir, UNKNOWN_DIR);
			old_dir = dir_name(a, old_dir);
		}
	}
	for (e = gitmap_first(d->in->dir_rename_count, &b); e;
	     e = gitmap_next(d->in->dir_rename_count, &b, e)) {
		struct gitmap_entry *r = gitmap_get(removed, e->key);

		if (r && r->num == ORT_RELEVANT_FOR_SELF && dir_rename_already_determinable(e->ptr))
			r->num = ORT_RELEVANT_FOR_ANCESTOR;
	}
	for (i = 0; i < d->src_nr; i++) {
		struct gitmap_entry *rel = gitmap_get(d->in->relevant_sources,
						      d->src[i].p->one->path);

		if (rel && rel->num == ORT_RELEVANT_LOCATION) {
			char *dir = dir_name(a, d->src[i].p->one->path);
			int removable = 1;

			for (;;) {
				intptr_t res = gitmap_get_num(removed, dir, ORT_NOT_RELEVANT);

				if (res == ORT_NOT_RELEVANT)
					break;
				if (res == ORT_RELEVANT_FOR_SELF) {
					removable = 0;
					break;
				}
				dir = dir_name(a, dir);
			}
			if (removable) {
				rel->num = ORT_RELEVANT_NO_MORE;
				continue;
			}
		}
		d->src[k++] = d->src[i];
	}
	d->src_nr = k;
}

/* score_compare(): higher scores first, unused slots last. */
static int score_compare(const struct score *a, const struct score *b)
{
	if (a->dst < 0)
		return 0 <= b->dst;
	if (b->dst < 0)
		return -1;
	if (a->score == b->score)
		return b->name_score - a->name_score;
	return b->score - a->score;
}

static void record_if_better(struct score m[], const struct score *o)
{
	int i, worst = 0;

	for (i = 1; i < NUM_CANDIDATE_PER_DST; i++)
		if (score_compare(&m[i], &m[worst]) > 0)
			worst = i;
	if (score_compare(&m[worst], o) > 0)
		m[worst] = *o;
}

/* STABLE_QSORT(..., score_compare): a merge sort. */
static void sort_scores(struct score *v, size_t n, struct score *tmp)
{
	size_t mid = n / 2, i = 0, j = mid, k = 0;

	if (n < 2)
		return;
	sort_scores(v, mid, tmp);
	sort_scores(v + mid, n - mid, tmp);
	while (i < mid && j < n)
		tmp[k++] = score_compare(&v[j], &v[i]) < 0 ? v[j++] : v[i++];
	while (i < mid)
		tmp[k++] = v[i++];
	while (j < n)
		tmp[k++] = v[j++];
	memcpy(v, tmp, n * sizeof(*v));
}

static int find_inexact_renames(struct detect *d, int minimum_score, size_t num_destinations)
{
	struct score *mx = xcalloc(num_destinations * NUM_CANDIDATE_PER_DST + 1, sizeof(*mx));
	struct score *tmp = xmalloc((num_destinations * NUM_CANDIDATE_PER_DST + 1) * sizeof(*tmp));
	size_t i, j, dst_cnt = 0;
	int count = 0;

	for (i = 0; i < d->dst_nr; i++) {
		struct ort_spec *two = d->dst[i].p->two;
		struct score *m;

		if (d->dst[i].is_rename)
			continue;
		m = &mx[dst_cnt * NUM_CANDIDATE_PER_DST];
		for (j = 0; j < NUM_CANDIDATE_PER_DST; j++)
			m[j].dst = -1;
		for (j = 0; j < d->src_nr; j++) {
			struct ort_spec *one = d->src[j].p->one;
			struct score s;

			s.score = similarity(d, one, two, minimum_score);
			s.name_score = basename_same(one, two);
			s.dst = (int)i;
			s.src = (int)j;
			record_if_better(m, &s);
		}
		dst_cnt++;
	}
	sort_scores(mx, dst_cnt * NUM_CANDIDATE_PER_DST, tmp);
	for (i = 0; i < dst_cnt * NUM_CANDIDATE_PER_DST; i++) {
		if (mx[i].dst < 0 || mx[i].score < minimum_score)
			break;
		if (d->dst[mx[i].dst].is_rename)
			continue;
		if (d->src[mx[i].src].p->one->rename_used)
			continue;
		record_rename_pair(d, (size_t)mx[i].dst, (size_t)mx[i].src, mx[i].score);
		count++;
		update_dir_rename_counts(d, d->src[mx[i].src].p->one->path,
					 d->dst[mx[i].dst].p->two->path);
	}
	free(mx);
	free(tmp);
	return count;
}

/* The queue as diffcore leaves it: renames in their adds' places, used deletes gone. */
static void write_back(struct ort_pairs *q)
{
	size_t i, k = 0;

	for (i = 0; i < q->nr; i++) {
		struct ort_pair *p = q->v[i];

		if (p->one->mode && !p->two->mode && p->one->rename_used)
			continue;
		q->v[k++] = p;
	}
	q->nr = k;
}

void ort_rename_detect(struct ort_pairs *q, struct ort_rename_input *in)
{
	struct detect d = { .in = in };
	size_t i, num_destinations, num_sources;
	int rename_count;

	d.dst = xmalloc((q->nr + 1) * sizeof(*d.dst));
	d.src = xmalloc((q->nr + 1) * sizeof(*d.src));
	for (i = 0; i < q->nr; i++) {
		struct ort_pair *p = q->v[i];

		if (!p->one->mode) {
			if (p->two->mode && !empty_blob(&p->two->oid))
				d.dst[d.dst_nr++] = (struct rename_dst){ p, 0 };
		} else if (!empty_blob(&p->one->oid) && !p->two->mode) {
			d.src[d.src_nr++] = (struct rename_src){ p, p->score };
		}
	}
	if (!d.dst_nr || !d.src_nr)
		goto done;
	rename_count = find_exact_renames(&d);
	remove_unneeded_sources(&d, NULL);
	initialize_dir_rename_info(&d);
	/* git's basename factor: half way from the rename score to an exact match */
	rename_count += find_basename_matches(&d, (ORT_DEFAULT_RENAME_SCORE + ORT_MAX_SCORE) / 2);
	remove_unneeded_sources(&d, in->relevant_sources);
	handle_early_known_dir_renames(&d);
	num_destinations = d.dst_nr - (size_t)rename_count;
	num_sources = d.src_nr;
	if (!num_destinations || !num_sources)
		goto done;
	if ((unsigned long long)num_destinations * num_sources >
	    (unsigned long long)ORT_RENAME_LIMIT * ORT_RENAME_LIMIT) {
		in->needed_limit = (int)(num_sources > num_destinations ? num_sources
									: num_destinations);
		goto done;
	}
	find_inexact_renames(&d, ORT_DEFAULT_RENAME_SCORE, num_destinations);
done:
	write_back(q);
	/* the dir rename counts keep only folders the side removed, without unknowns */
	if (d.setup) {
		struct gitmap_entry *e, *next;
		unsigned int b;

		for (e = gitmap_first(in->dir_rename_count, &b); e; e = next) {
			next = gitmap_next(in->dir_rename_count, &b, e);
			if (!e->ptr)
				continue;
			if (!gitmap_get_num(in->dirs_removed, e->key, ORT_NOT_RELEVANT)) {
				gitmap_release(e->ptr);
				e->ptr = NULL;
			} else {
				gitmap_remove(e->ptr, UNKNOWN_DIR);
			}
		}
		gitmap_release(&d.idx_map);
		gitmap_release(&d.guess);
	}
	free(d.dst);
	free(d.src);
}
