/* The tree merge of git's ort strategy: collect what differs, renames, merge path by path. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "merge/git/ort_int.h"
#include "merge/git/filemerge_int.h"
#include "merge/git/git_int.h"
#include "util/error.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define SIDE1 1
#define SIDE2 2
#define S_IFGITLINK 0160000
#define S_ISGITLINK(m) (((m) & S_IFMT) == S_IFGITLINK)

struct version {
	git_oid oid;
	unsigned int mode;      /* 0: absent */
};

/* merge-ort's merged_info and conflict_info in one (the latter valid while !clean). */
struct entry {
	struct version result;
	unsigned int is_null : 1, clean : 1;
	size_t basename_offset;
	const char *directory_name;     /* interned: the folder's key in `paths` */
	struct version stages[3];
	const char *pathnames[3];
	unsigned int df_conflict : 1, path_conflict : 1;
	unsigned int filemask : 3, dirmask : 3, match_mask : 3;
};

struct side_renames {
	struct ort_pairs pairs;
	struct gitmap dirs_removed;             /* dir -> ort_dir_relevance */
	struct gitmap dir_rename_count;         /* old dir -> (gitmap *) new dir -> count */
	struct gitmap dir_renames;              /* old dir -> new dir */
	struct gitmap relevant_sources;         /* path -> ort_file_relevance */
	struct gitmap possible_trivial_merges;  /* dir -> dir_rename_mask */
	struct gitmap target_dirs;
	int trivial_merges_okay;
};

struct ort {
	const char *toplevel_dir;       /* "" as interned for the top's entries */
	git_repository *repo;
	git_odb *odb;
	const struct ort_options *opts;
	struct arena arena;
	struct gitmap paths;            /* path -> struct entry * */
	struct gitmap conflicted;       /* path -> struct entry * */
	struct gitmap kinds;            /* path -> const char * (first conflict reported) */
	struct side_renames side[3];
	unsigned int dir_rename_mask;
	const char *current_dir_name;
	int failed;
	int unsure;
};

/* One name of a folder on the three sides (traverse_trees()' name_entry). */
struct name {
	const git_oid *oid;
	unsigned int mode;
	const char *name;
	size_t len;
};

/* One name of a folder with its sides: which have it (mask), which as a folder. */
struct level_entry {
	unsigned int mask, dirmask;
	struct name names[3];
};

static const git_oid null_oid;

static int is_dir(unsigned int mode)
{
	return S_ISDIR(mode);
}

static int same_version(const struct name *a, const struct name *b)
{
	return a->mode && b->mode && a->mode == b->mode && git_oid_equal(a->oid, b->oid);
}

/* A path_msg() at the outer merge: the first conflict reported for a path names it. */
static void conflict_msg(struct ort *o, const char *path, const char *kind)
{
	struct gitmap_entry *e;

	if (o->opts->call_depth)
		return;
	e = gitmap_put(&o->kinds, path, 0);
	if (!e->ptr) {
		e->key = arena_strdup(&o->arena, path);
		e->ptr = (void *)kind;
	}
}

static struct entry *get_entry(struct ort *o, const char *path)
{
	return gitmap_get_ptr(&o->paths, path);
}

/* The interned key of `path` in `paths` (pointer equality stands for string equality). */
static const char *interned(struct ort *o, const char *path)
{
	struct gitmap_entry *e = gitmap_get(&o->paths, path);

	return e ? e->key : NULL;
}

static void put_entry(struct ort *o, const char *path, struct entry *e)
{
	gitmap_put(&o->paths, path, 0)->ptr = e;
}

/* ---- collect_merge_info() ---- */

static void setup_path_info(struct ort *o, const char *fullpath, size_t dirlen,
			    const struct level_entry *le, const struct name *merged, int is_null,
			    int df_conflict)
{
	const struct name *names = le->names;
	unsigned int dirmask = le->dirmask, filemask = le->mask & ~dirmask;
	struct entry *e = arena_alloc(&o->arena, sizeof(*e));
	int i;

	e->directory_name = o->current_dir_name;
	e->basename_offset = dirlen;
	e->clean = merged != NULL;
	if (merged) {
		e->result.mode = merged->mode;
		git_oid_cpy(&e->result.oid, merged->oid);
		e->is_null = is_null;
	} else {
		for (i = 0; i < 3; i++) {
			e->pathnames[i] = fullpath;
			e->stages[i].mode = names[i].mode;
			git_oid_cpy(&e->stages[i].oid, names[i].mode ? names[i].oid : &null_oid);
		}
		e->filemask = filemask;
		e->dirmask = dirmask;
		e->df_conflict = !!df_conflict;
		if (dirmask)
			e->is_null = 1;
	}
	put_entry(o, fullpath, e);
}

static struct ort_spec *new_spec(struct ort *o, const char *path)
{
	struct ort_spec *s = arena_alloc(&o->arena, sizeof(*s));

	s->path = path;
	return s;
}

static void add_pair(struct ort *o, const struct name names[3], const char *path, int side,
		     int is_add, unsigned int match_mask, unsigned int dir_rename_mask)
{
	struct side_renames *r = &o->side[side];
	const struct name *n = &names[is_add ? side : 0];
	struct ort_pair *p = arena_alloc(&o->arena, sizeof(*p));

	if (!is_add) {
		int content = match_mask == 0, location = dir_rename_mask == 0x07;

		if (content || location)
			gitmap_put(&r->relevant_sources, path, 0)->num =
				content ? ORT_RELEVANT_CONTENT : ORT_RELEVANT_LOCATION;
	}
	p->one = new_spec(o, path);
	p->two = new_spec(o, path);
	git_oid_cpy(is_add ? &p->two->oid : &p->one->oid, n->oid);
	(is_add ? p->two : p->one)->mode = n->mode;
	ALLOC_GROW(r->pairs.v, r->pairs.nr + 1, r->pairs.alloc);
	r->pairs.v[r->pairs.nr++] = p;
}

static void collect_rename_info(struct ort *o, const struct name names[3], const char *dirname,
				const char *fullname, unsigned int filemask, unsigned int dirmask,
				unsigned int match_mask)
{
	int side;

	if (o->dir_rename_mask != 0x07 && (dirmask == 3 || dirmask == 5))
		o->dir_rename_mask = dirmask & ~1u;
	if (dirmask == 1 || dirmask == 3 || dirmask == 5) {
		unsigned int sides = (0x07 - dirmask) / 2;
		intptr_t relevance = o->dir_rename_mask == 0x07 ? ORT_RELEVANT_FOR_ANCESTOR
								 : ORT_NOT_RELEVANT;

		if (sides & 1)
			gitmap_put(&o->side[1].dirs_removed, fullname, 0)->num = relevance;
		if (sides & 2)
			gitmap_put(&o->side[2].dirs_removed, fullname, 0)->num = relevance;
	}
	if (o->dir_rename_mask == 0x07 && (filemask == 2 || filemask == 4))
		gitmap_put(&o->side[3 - (filemask >> 1)].dirs_removed, dirname, 0)->num =
			ORT_RELEVANT_FOR_SELF;
	if (filemask == 0 || filemask == 7)
		return;
	for (side = SIDE1; side <= SIDE2; side++) {
		unsigned int side_mask = 1u << side;

		if ((filemask & 1) && !(filemask & side_mask))
			add_pair(o, names, fullname, side, 0, match_mask & filemask,
				 o->dir_rename_mask);
		if (!(filemask & 1) && (filemask & side_mask))
			add_pair(o, names, fullname, side, 1, match_mask & filemask,
				 o->dir_rename_mask);
	}
}

struct level {
	struct level_entry *v;
	size_t nr, alloc;
};

static int traverse(struct ort *o, const git_oid *trees[3], const char *prefix);

/* git's name_compare(): bytes, then length. */
static int name_compare(const char *a, size_t al, const char *b, size_t bl)
{
	int c = memcmp(a, b, al < bl ? al : bl);

	if (c)
		return c;
	return al < bl ? -1 : al > bl;
}

/* check_entry_match(): 0 found, -1 cannot appear, 1 may hide behind. */
static int check_entry_match(const char *a, size_t al, const char *b, size_t bl)
{
	int cmp = name_compare(a, al, b, bl);

	if (!cmp)
		return 0;
	if (cmp > 0)
		return 1;
	if (al < bl && !memcmp(a, b, al) && b[al] < '/')
		return 1;
	return -1;
}

struct cursor {
	const git_tree *tree;
	size_t pos, nr;
	size_t *skip;           /* entries handed out early */
	size_t skip_nr, skip_alloc;
};

static int skipped(const struct cursor *c, size_t i)
{
	size_t k;

	for (k = 0; k < c->skip_nr; k++)
		if (c->skip[k] == i)
			return 1;
	return 0;
}

static void name_of(struct name *n, const git_tree *t, size_t i)
{
	const git_tree_entry *e = git_tree_entry_byindex(t, i);

	n->oid = git_tree_entry_id(e);
	n->mode = git_tree_entry_filemode(e);
	n->name = git_tree_entry_name(e);
	n->len = strlen(n->name);
}

/*
 * The names of a folder on the three sides in the order traverse_trees() yields
 * them: the smallest current name, also where a tree holds it later on (a folder
 * "t" after a file "t-2").
 */
static void read_level(struct level *out, struct cursor c[3])
{
	for (;;) {
		struct level_entry le;
		size_t idx[3];
		const char *first = NULL;
		size_t first_len = 0;
		int i;

		memset(&le, 0, sizeof(le));
		for (i = 0; i < 3; i++) {
			while (c[i].pos < c[i].nr && skipped(&c[i], c[i].pos))
				c[i].pos++;
			if (c[i].pos < c[i].nr) {
				struct name n;

				name_of(&n, c[i].tree, c[i].pos);
				if (!first || name_compare(n.name, n.len, first, first_len) < 0) {
					first = n.name;
					first_len = n.len;
				}
			}
		}
		if (!first)
			break;
		first = xstrndup(first, first_len);
		for (i = 0; i < 3; i++) {
			size_t p;

			idx[i] = (size_t)-1;
			for (p = c[i].pos; p < c[i].nr; p++) {
				struct name n;
				int m;

				name_of(&n, c[i].tree, p);
				m = check_entry_match(first, first_len, n.name, n.len);
				if (m < 0)
					break;
				if (m == 0) {
					idx[i] = p;
					le.names[i] = n;
					le.mask |= 1u << i;
					if (is_dir(n.mode))
						le.dirmask |= 1u << i;
					break;
				}
			}
		}
		free((char *)first);
		for (i = 0; i < 3; i++) {
			if (idx[i] == (size_t)-1)
				continue;
			if (idx[i] == c[i].pos) {
				c[i].pos++;
			} else {
				ALLOC_GROW(c[i].skip, c[i].skip_nr + 1, c[i].skip_alloc);
				c[i].skip[c[i].skip_nr++] = idx[i];
			}
		}
		ALLOC_GROW(out->v, out->nr + 1, out->alloc);
		out->v[out->nr++] = le;
	}
}

static int collect_callback(struct ort *o, const struct level_entry *le, const char *prefix);

/*
 * traverse_trees() over one folder of the three sides (NULL: none there), calling
 * collect_callback() on each name; inside a folder one side removed, all names are
 * read first to see whether the other side added a file to it (merge-ort's
 * traverse_trees_wrapper()).
 */
static int traverse(struct ort *o, const git_oid *trees[3], const char *prefix)
{
	git_tree *t[3] = { NULL, NULL, NULL };
	struct cursor c[3];
	struct level lv = { NULL, 0, 0 };
	size_t i;
	int k, err = 0;

	memset(c, 0, sizeof(c));
	for (k = 0; k < 3; k++) {
		if (trees[k] && git_tree_lookup(&t[k], o->repo, trees[k]) < 0) {
			err = merge_git_fail("merge: reading tree %s", git_oid_tostr_s(trees[k]));
			goto done;
		}
		c[k].tree = t[k];
		c[k].nr = t[k] ? git_tree_entrycount(t[k]) : 0;
	}
	read_level(&lv, c);
	if (o->dir_rename_mask == 2 || o->dir_rename_mask == 4) {
		for (i = 0; i < lv.nr; i++) {
			unsigned int filemask = lv.v[i].mask & ~lv.v[i].dirmask;

			if (filemask && filemask == o->dir_rename_mask)
				o->dir_rename_mask = 0x07;
		}
	}
	for (i = 0; !err && i < lv.nr; i++)
		err = collect_callback(o, &lv.v[i], prefix);
done:
	for (k = 0; k < 3; k++) {
		free(c[k].skip);
		git_tree_free(t[k]);
	}
	free(lv.v);
	return err;
}

/* Recurses into the folder `path` whose sides are `names` (or the stages of `e`). */
static int recurse(struct ort *o, const char *path, const git_oid *sub[3])
{
	char *prefix = xstrfmt("%s/", path);
	const char *saved = o->current_dir_name;
	int err;

	o->current_dir_name = path;
	err = traverse(o, sub, prefix);
	o->current_dir_name = saved;
	free(prefix);
	return err;
}

static int collect_callback(struct ort *o, const struct level_entry *le, const char *prefix)
{
	const struct name *names = le->names;
	unsigned int mask = le->mask, dirmask = le->dirmask, filemask = mask & ~dirmask;
	unsigned int prev_mask = o->dir_rename_mask, match_mask = 0;
	int mbase_null = !(mask & 1), side1_null = !(mask & 2), side2_null = !(mask & 4);
	int s1_base = !side1_null && !mbase_null && same_version(&names[0], &names[1]);
	int s2_base = !side2_null && !mbase_null && same_version(&names[0], &names[2]);
	int sides_match = !side1_null && !side2_null && same_version(&names[1], &names[2]);
	int df_conflict = filemask && dirmask;
	const struct name *p = names;
	size_t dirlen = strlen(prefix);
	struct entry *ci;
	char *fullpath;
	int side, i;

	if (s1_base)
		match_mask = s2_base ? 7 : 3;
	else if (s2_base)
		match_mask = 5;
	else if (sides_match)
		match_mask = 6;
	while (!p->mode)
		p++;
	fullpath = arena_alloc(&o->arena, dirlen + p->len + 1);
	memcpy(fullpath, prefix, dirlen);
	memcpy(fullpath + dirlen, p->name, p->len);
	if (s1_base && s2_base) {
		setup_path_info(o, fullpath, dirlen, le, &names[0], mbase_null, 0);
		return 0;
	}
	if (sides_match && filemask == 7) {
		setup_path_info(o, fullpath, dirlen, le, &names[1], side1_null, 0);
		return 0;
	}
	if (s1_base && filemask == 7) {
		setup_path_info(o, fullpath, dirlen, le, &names[2], side2_null, 0);
		return 0;
	}
	if (s2_base && filemask == 7) {
		setup_path_info(o, fullpath, dirlen, le, &names[1], side1_null, 0);
		return 0;
	}
	collect_rename_info(o, names, o->current_dir_name, fullpath, filemask, dirmask,
			    match_mask);
	setup_path_info(o, fullpath, dirlen, le, NULL, 0, df_conflict);
	ci = get_entry(o, fullpath);
	ci->match_mask = match_mask;
	if (dirmask) {
		const git_oid *sub[3];
		unsigned int dm = dirmask;
		int err;

		side = s1_base ? SIDE2 : s2_base ? SIDE1 : 0;
		if (filemask == 0 && (dirmask == 2 || dirmask == 4)) {
			ci->match_mask = 7 - dirmask;
			side = (int)dirmask / 2;
		}
		if (o->dir_rename_mask != 0x07 && side &&
		    o->side[side].trivial_merges_okay &&
		    !gitmap_get(&o->side[side].target_dirs, fullpath)) {
			gitmap_put(&o->side[side].possible_trivial_merges, fullpath, 0)->num =
				o->dir_rename_mask;
			o->dir_rename_mask = prev_mask;
			return 0;
		}
		ci->match_mask &= filemask;
		for (i = 0; i < 3; i++, dm >>= 1) {
			if (i == 1 && s1_base)
				sub[1] = sub[0];
			else if (i == 2 && s2_base)
				sub[2] = sub[0];
			else if (i == 2 && sides_match)
				sub[2] = sub[1];
			else
				sub[i] = (dm & 1) ? names[i].oid : NULL;
		}
		err = recurse(o, fullpath, sub);
		o->dir_rename_mask = prev_mask;
		if (err)
			return err;
	}
	return 0;
}

static void resolve_trivial_directory_merge(struct ort *o, struct entry *ci, int side)
{
	if (ci->clean || !((side == 1 && ci->match_mask == 5) ||
			   (side == 2 && ci->match_mask == 3)))
		o->unsure = 1;
	ci->result = ci->stages[side];
	ci->is_null = git_oid_is_zero(&ci->stages[side].oid);
	ci->match_mask = 0;
	ci->clean = 1;
}

static int handle_deferred_entries(struct ort *o)
{
	int side, err = 0;

	for (side = SIDE1; side <= SIDE2 && !err; side++) {
		struct side_renames *r = &o->side[side];
		int okay = r->relevant_sources.count == 0;
		struct gitmap copy = r->possible_trivial_merges;
		struct gitmap_entry *e;
		unsigned int b;

		r->trivial_merges_okay = okay;
		gitmap_init(&r->possible_trivial_merges, &o->arena);
		for (e = gitmap_first(&copy, &b); e && !err; e = gitmap_next(&copy, &b, e)) {
			struct entry *ci = get_entry(o, e->key);
			const git_oid *sub[3];
			unsigned int dm;
			int i;

			if (!ci || ci->clean) {
				o->unsure = 1;
				continue;
			}
			if (okay && !gitmap_get(&r->target_dirs, e->key)) {
				resolve_trivial_directory_merge(o, ci, side);
				continue;
			}
			dm = ci->dirmask;
			for (i = 0; i < 3; i++, dm >>= 1) {
				if (i == 1 && ci->match_mask == 3)
					sub[1] = sub[0];
				else if (i == 2 && ci->match_mask == 5)
					sub[2] = sub[0];
				else if (i == 2 && ci->match_mask == 6)
					sub[2] = sub[1];
				else
					sub[i] = (dm & 1) ? &ci->stages[i].oid : NULL;
			}
			ci->match_mask &= ci->filemask;
			o->dir_rename_mask = (unsigned int)e->num;
			err = recurse(o, e->key, sub);
		}
		gitmap_release(&copy);
		for (e = gitmap_first(&r->possible_trivial_merges, &b); e && !err;
		     e = gitmap_next(&r->possible_trivial_merges, &b, e)) {
			struct entry *ci = get_entry(o, e->key);

			if (ci)
				resolve_trivial_directory_merge(o, ci, side);
		}
	}
	return err;
}

/* ---- content merges ---- */

static int read_blob(struct ort *o, git_blob **out, const git_oid *oid)
{
	*out = NULL;
	if (git_oid_is_zero(oid))
		return 0;
	if (git_blob_lookup(out, o->repo, oid) < 0) {
		o->failed = 1;
		return merge_git_fail("merge: reading blob %s", git_oid_tostr_s(oid));
	}
	return 0;
}

static int write_object(struct ort *o, git_oid *out, const void *data, size_t len,
			git_object_t type)
{
	if (git_odb_write(out, o->odb, data, len, type) < 0) {
		o->failed = 1;
		return merge_git_fail("merge: writing an object");
	}
	return 0;
}

/* What a content merge is asked about one path, besides its three versions. */
struct content_request {
	const char *path;
	const char **pathnames;         /* the path on each side (three) */
	int extra_marker_size;
};

/* merge_3way(): 0 clean, 1 conflict, -1 error; the merged blob's id in *out. */
static int merge_3way(struct ort *o, git_oid *out, const struct content_request *rq,
		      const git_oid *base, const git_oid *a, const git_oid *b)
{
	const char *path = rq->path, **pathnames = rq->pathnames;
	git_blob *bb = NULL, *ab = NULL, *tb = NULL;
	struct strbuf res = STRBUF_INIT;
	struct filemerge_options fo = FILEMERGE_OPTIONS_INIT;
	char *name1 = NULL, *name2 = NULL;
	const char *bp = "", *ap = "", *tp = "";
	size_t bl = 0, al = 0, tl = 0;
	int status = -1, n;

	if (read_blob(o, &bb, base) < 0 || read_blob(o, &ab, a) < 0 || read_blob(o, &tb, b) < 0)
		goto done;
	if (bb) {
		bp = git_blob_rawcontent(bb);
		bl = (size_t)git_blob_rawsize(bb);
	}
	if (ab) {
		ap = git_blob_rawcontent(ab);
		al = (size_t)git_blob_rawsize(ab);
	}
	if (tb) {
		tp = git_blob_rawcontent(tb);
		tl = (size_t)git_blob_rawsize(tb);
	}
	if (filemerge_is_binary(bp, bl) || filemerge_is_binary(ap, al) ||
	    filemerge_is_binary(tp, tl)) {
		if (o->opts->call_depth) {
			status = write_object(o, out, bp, bl, GIT_OBJECT_BLOB) < 0 ? -1 : 0;
		} else {
			conflict_msg(o, path, "binary");
			git_oid_cpy(out, a);
			status = 1;
		}
		goto done;
	}
	if (pathnames[0] == pathnames[1] && pathnames[1] == pathnames[2]) {
		name1 = xstrdup(o->opts->branch1);
		name2 = xstrdup(o->opts->branch2);
	} else {
		name1 = xstrfmt("%s:%s", o->opts->branch1, pathnames[1]);
		name2 = xstrfmt("%s:%s", o->opts->branch2, pathnames[2]);
	}
	fo.ours_label = name1;
	fo.theirs_label = name2;
	fo.marker_size = 7 + rq->extra_marker_size;
	n = filemerge_texts(&res, &(struct filemerge_buf){ bp, bl },
			    &(struct filemerge_buf){ ap, al }, &(struct filemerge_buf){ tp, tl },
			    &fo);
	if (n < 0) {
		o->unsure = 1;
		n = 1;
	}
	if (write_object(o, out, res.buf, res.len, GIT_OBJECT_BLOB) < 0)
		goto done;
	status = n > 0;
done:
	git_blob_free(bb);
	git_blob_free(ab);
	git_blob_free(tb);
	strbuf_release(&res);
	free(name1);
	free(name2);
	return status;
}

/* handle_content_merge(): 1 clean, 0 conflict, -1 error. */
static int content_merge(struct ort *o, const struct content_request *rq,
			 const struct version *ov, const struct version *a,
			 const struct version *b, struct version *result)
{
	int clean = 1;

	if ((S_IFMT & a->mode) != (S_IFMT & b->mode))
		o->unsure = 1;
	if (a->mode == b->mode || a->mode == ov->mode) {
		result->mode = b->mode;
	} else {
		result->mode = a->mode;
		clean = b->mode == ov->mode;
	}
	if (git_oid_equal(&a->oid, &b->oid) || git_oid_equal(&a->oid, &ov->oid)) {
		git_oid_cpy(&result->oid, &b->oid);
	} else if (git_oid_equal(&b->oid, &ov->oid)) {
		git_oid_cpy(&result->oid, &a->oid);
	} else if (S_ISREG(a->mode)) {
		int two_way = (S_IFMT & ov->mode) != (S_IFMT & a->mode);
		int st = merge_3way(o, &result->oid, rq, two_way ? &null_oid : &ov->oid,
				    &a->oid, &b->oid);

		if (st < 0)
			return -1;
		clean &= st == 0;
	} else if (S_ISGITLINK(a->mode)) {
		/* the submodule is never checked out here: git cannot merge it either */
		int two_way = (S_IFMT & ov->mode) != (S_IFMT & a->mode);

		git_oid_cpy(&result->oid, o->opts->call_depth ? (two_way ? &null_oid : &ov->oid)
							      : &a->oid);
		clean = 0;
		if (o->opts->call_depth && two_way) {
			result->mode = ov->mode;
			git_oid_cpy(&result->oid, &ov->oid);
		}
	} else if (S_ISLNK(a->mode)) {
		clean = 0;
		if (o->opts->call_depth) {
			result->mode = ov->mode;
			git_oid_cpy(&result->oid, &ov->oid);
		} else {
			git_oid_cpy(&result->oid, &a->oid);
		}
	} else {
		o->unsure = 1;
		clean = 0;
		*result = *a;
	}
	return clean;
}

/* ---- renames ---- */

static void resolve_statuses(struct ort_pairs *q)
{
	size_t i;

	for (i = 0; i < q->nr; i++) {
		struct ort_pair *p = q->v[i];

		p->status = 0;
		if (!p->one->mode)
			p->status = 'A';
		else if (!p->two->mode)
			p->status = 'D';
		else if (p->renamed_pair)
			p->status = 'R';
	}
}

static int possible_side_renames(struct ort *o, int side)
{
	return o->side[side].pairs.nr > 0 && o->side[side].relevant_sources.count > 0;
}

/* Empties a map of folder -> (map of folder -> count). */
static void clear_dir_rename_count(struct gitmap *m)
{
	struct gitmap_entry *e;
	unsigned int b;

	for (e = gitmap_first(m, &b); e; e = gitmap_next(m, &b, e))
		if (e->ptr)
			gitmap_release(e->ptr);
	gitmap_clear(m);
}

static int detect_regular_renames(struct ort *o, int side)
{
	struct side_renames *r = &o->side[side];
	struct ort_rename_input in = {
		.repo = o->repo, .odb = o->odb, .arena = &o->arena,
		.relevant_sources = &r->relevant_sources, .dirs_removed = &r->dirs_removed,
		.dir_rename_count = &r->dir_rename_count,
	};

	if (!possible_side_renames(o, side)) {
		resolve_statuses(&r->pairs);
		return 0;
	}
	clear_dir_rename_count(&r->dir_rename_count);
	ort_rename_detect(&r->pairs, &in);
	resolve_statuses(&r->pairs);
	if (in.failed)
		o->failed = 1;
	return 1;
}

static void get_provisional_directory_renames(struct ort *o, int side, int *clean)
{
	struct side_renames *r = &o->side[side];
	struct gitmap_entry *e, *c;
	unsigned int b, cb;

	for (e = gitmap_first(&r->dir_rename_count, &b); e;
	     e = gitmap_next(&r->dir_rename_count, &b, e)) {
		const char *best = NULL;
		intptr_t max = 0, bad_max = 0;

		if (!e->ptr)
			continue;
		for (c = gitmap_first(e->ptr, &cb); c; c = gitmap_next(e->ptr, &cb, c)) {
			if (c->num == max)
				bad_max = max;
			else if (c->num > max) {
				max = c->num;
				best = c->key;
			}
		}
		if (max == 0)
			continue;
		if (bad_max == max) {
			conflict_msg(o, e->key, "directory rename split");
			*clean = 0;
		} else {
			gitmap_put(&r->dir_renames, e->key, 0)->ptr = (void *)best;
		}
	}
}

static void handle_directory_level_conflicts(struct ort *o)
{
	struct gitmap *s1 = &o->side[1].dir_renames, *s2 = &o->side[2].dir_renames;
	struct gitmap_entry *e;
	const char **dup = NULL;
	size_t nr = 0, alloc = 0, i;
	unsigned int b;

	for (e = gitmap_first(s1, &b); e; e = gitmap_next(s1, &b, e))
		if (gitmap_get(s2, e->key)) {
			ALLOC_GROW(dup, nr + 1, alloc);
			dup[nr++] = e->key;
		}
	for (i = 0; i < nr; i++) {
		gitmap_remove(s2, dup[i]);
		gitmap_remove(s1, dup[i]);
	}
	free(dup);
}

/* check_dir_renamed(): the renamed folder above `path`, nearest first. */
static struct gitmap_entry *check_dir_renamed(struct ort *o, const char *path,
					      struct gitmap *dir_renames)
{
	char *temp = arena_strdup(&o->arena, path), *end;
	struct gitmap_entry *e = NULL;

	while ((end = strrchr(temp, '/'))) {
		*end = '\0';
		if ((e = gitmap_get(dir_renames, temp)))
			break;
	}
	return e;
}

static char *apply_dir_rename(struct ort *o, const struct gitmap_entry *rename,
			      const char *old_path)
{
	size_t oldlen = strlen(rename->key), newlen, restlen;
	const char *new_dir = rename->ptr;
	char *p;

	if (!*new_dir)
		oldlen++;
	newlen = strlen(new_dir);
	restlen = strlen(old_path + oldlen);
	p = arena_alloc(&o->arena, newlen + restlen + 1);
	memcpy(p, new_dir, newlen);
	memcpy(p + newlen, old_path + oldlen, restlen);
	return p;
}

struct collision {
	const char **sources;   /* sorted, unique */
	size_t nr, alloc;
	int reported;
};

static void sorted_insert(struct collision *c, const char *s)
{
	size_t lo = 0, hi = c->nr;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int cmp = strcmp(c->sources[mid], s);

		if (!cmp)
			return;
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	ALLOC_GROW(c->sources, c->nr + 1, c->alloc);
	memmove(c->sources + lo + 1, c->sources + lo, (c->nr - lo) * sizeof(*c->sources));
	c->sources[lo] = s;
	c->nr++;
}

static void compute_collisions(struct ort *o, struct gitmap *collisions,
			       struct gitmap *dir_renames, const struct ort_pairs *pairs)
{
	size_t i;

	gitmap_init(collisions, &o->arena);
	if (!dir_renames->count)
		return;
	for (i = 0; i < pairs->nr; i++) {
		const struct ort_pair *p = pairs->v[i];
		struct gitmap_entry *ri, *ce;
		char *new_path;

		if (p->status != 'A' && p->status != 'R')
			continue;
		if (!(ri = check_dir_renamed(o, p->two->path, dir_renames)))
			continue;
		new_path = apply_dir_rename(o, ri, p->two->path);
		ce = gitmap_put(collisions, new_path, 0);
		if (!ce->ptr)
			ce->ptr = arena_alloc(&o->arena, sizeof(struct collision));
		sorted_insert(ce->ptr, p->two->path);
	}
}

static void free_collisions(struct gitmap *collisions)
{
	struct gitmap_entry *e;
	unsigned int b;

	for (e = gitmap_first(collisions, &b); e; e = gitmap_next(collisions, &b, e))
		free(((struct collision *)e->ptr)->sources);
	gitmap_release(collisions);
}

static int path_in_way(struct ort *o, const char *path, unsigned int side_mask)
{
	struct entry *mi = get_entry(o, path);

	if (!mi)
		return 0;
	return mi->clean || (side_mask & (mi->filemask | mi->dirmask));
}

static char *handle_path_level_conflicts(struct ort *o, const char *path, int side_index,
					 const struct gitmap_entry *rename,
					 struct gitmap *collisions)
{
	char *new_path = apply_dir_rename(o, rename, path);
	struct collision *c = gitmap_get_ptr(collisions, new_path);
	int clean = 1;

	if (!c) {
		o->unsure = 1;
		return NULL;
	}
	if (c->reported) {
		clean = 0;
	} else if (path_in_way(o, new_path, 1u << side_index)) {
		c->reported = 1;
		conflict_msg(o, new_path, "file in way of directory rename");
		clean = 0;
	} else if (c->nr > 1) {
		c->reported = 1;
		conflict_msg(o, new_path, "directory rename collision");
		clean = 0;
	}
	return clean ? new_path : NULL;
}

static char *check_for_directory_rename(struct ort *o, const char *path, int side_index,
					struct gitmap *dir_renames,
					struct gitmap *exclusions, struct gitmap collisions[3],
					int *clean)
{
	struct gitmap_entry *rename;
	char *new_path;

	if (!dir_renames->count)
		return NULL;
	if (gitmap_get(&collisions[3 - side_index], path))
		return NULL;
	if (!(rename = check_dir_renamed(o, path, dir_renames)))
		return NULL;
	if (gitmap_get(exclusions, rename->ptr))
		return NULL;
	new_path = handle_path_level_conflicts(o, path, side_index, rename,
					       &collisions[side_index]);
	*clean &= new_path != NULL;
	return new_path;
}

static void apply_directory_rename_modifications(struct ort *o, struct ort_pair *pair,
						 char *new_path)
{
	struct gitmap_entry *oe = gitmap_get(&o->paths, pair->two->path);
	const char *old_path, *parent_name, *cur_path = new_path;
	const char **dirs = NULL;
	size_t dirs_nr = 0, dirs_alloc = 0, i, len;
	struct entry *ci, *new_ci;

	if (!oe || !(ci = oe->ptr) || ci->clean) {
		o->unsure = 1;
		return;
	}
	old_path = oe->key;
	for (;;) {
		char *last = strrchr(cur_path, '/');
		const char *known;

		if (!last) {
			parent_name = o->toplevel_dir;
			break;
		}
		parent_name = arena_strndup(&o->arena, cur_path, (size_t)(last - cur_path));
		if ((known = interned(o, parent_name))) {
			parent_name = known;
			break;
		}
		ALLOC_GROW(dirs, dirs_nr + 1, dirs_alloc);
		dirs[dirs_nr++] = parent_name;
		cur_path = parent_name;
	}
	for (i = dirs_nr; i-- > 0;) {
		struct entry *dir_ci = arena_alloc(&o->arena, sizeof(*dir_ci));

		dir_ci->directory_name = parent_name;
		len = strlen(parent_name);
		dir_ci->basename_offset = len ? len + 1 : 0;
		dir_ci->dirmask = ci->filemask;
		put_entry(o, dirs[i], dir_ci);
		parent_name = interned(o, dirs[i]);
	}
	free(dirs);
	if (!(ci->filemask == 2 || ci->filemask == 4) || ci->dirmask > 1) {
		o->unsure = 1;
		return;
	}
	if (!ci->dirmask) {
		gitmap_remove(&o->paths, old_path);
	} else {
		new_ci = arena_alloc(&o->arena, sizeof(*new_ci));
		*new_ci = *ci;
		new_ci->dirmask = 0;
		new_ci->stages[1].mode = 0;
		git_oid_cpy(&new_ci->stages[1].oid, &null_oid);
		ci->filemask = 0;
		ci->clean = 1;
		for (i = 0; i < 3; i++) {
			if (ci->dirmask & (1u << i))
				continue;
			ci->stages[i].mode = 0;
			git_oid_cpy(&ci->stages[i].oid, &null_oid);
		}
		ci = new_ci;
	}
	ci->directory_name = parent_name;
	len = strlen(parent_name);
	ci->basename_offset = len ? len + 1 : 0;
	new_ci = get_entry(o, new_path);
	if (!new_ci) {
		put_entry(o, new_path, ci);
	} else {
		int index;

		if (new_ci->clean || (new_ci->filemask & ci->filemask)) {
			o->unsure = 1;
			return;
		}
		new_ci->filemask |= ci->filemask;
		if (new_ci->dirmask)
			new_ci->df_conflict = 1;
		index = (int)(ci->filemask >> 1);
		new_ci->pathnames[index] = ci->pathnames[index];
		new_ci->stages[index] = ci->stages[index];
		ci = new_ci;
	}
	ci->path_conflict = 1;
	conflict_msg(o, new_path, "file location");
	pair->two->path = interned(o, new_path) ? interned(o, new_path) : new_path;
}

static int collect_renames(struct ort *o, struct ort_pairs *result, int side_index,
			   struct gitmap collisions[3], struct gitmap *dir_renames_for_side,
			   struct gitmap *exclusions)
{
	struct ort_pairs *side_pairs = &o->side[side_index].pairs;
	size_t i;
	int clean = 1;

	for (i = 0; i < side_pairs->nr; i++) {
		struct ort_pair *p = side_pairs->v[i];
		char *new_path;

		if (p->status != 'A' && p->status != 'R')
			continue;
		new_path = check_for_directory_rename(o, p->two->path, side_index,
						      dir_renames_for_side, exclusions, collisions,
						      &clean);
		if (p->status != 'R' && !new_path)
			continue;
		if (new_path)
			apply_directory_rename_modifications(o, p, new_path);
		p->score = side_index;
		ALLOC_GROW(result->v, result->nr + 1, result->alloc);
		result->v[result->nr++] = p;
	}
	return clean;
}

/* STABLE_QSORT of the renames by source path. */
static void sort_pairs(struct ort_pair **v, size_t n, struct ort_pair **tmp)
{
	size_t mid = n / 2, i = 0, j = mid, k = 0;

	if (n < 2)
		return;
	sort_pairs(v, mid, tmp);
	sort_pairs(v + mid, n - mid, tmp);
	while (i < mid && j < n)
		tmp[k++] = strcmp(v[j]->one->path, v[i]->one->path) < 0 ? v[j++] : v[i++];
	while (i < mid)
		tmp[k++] = v[i++];
	while (j < n)
		tmp[k++] = v[j++];
	memcpy(v, tmp, n * sizeof(*v));
}

/* rename/rename(1to2) and (1to1): both sides renamed one file. */
static int rename_rename(struct ort *o, const struct ort_pairs *renames, size_t i,
			 const char *oldpath, const char *newpath)
{
	const char *pathnames[3];
	struct entry *base, *side1, *side2;
	struct version merged;
	struct content_request rq;
	int clean_merge, was_binary_blob = 0;

	pathnames[0] = oldpath;
	pathnames[1] = newpath;
	pathnames[2] = interned(o, renames->v[i + 1]->two->path);
	base = get_entry(o, pathnames[0]);
	side1 = get_entry(o, pathnames[1]);
	side2 = pathnames[2] ? get_entry(o, pathnames[2]) : NULL;
	if (!base || !side1 || !side2 || base->clean || side1->clean || side2->clean) {
		o->unsure = 1;
		return 0;
	}
	if (!strcmp(pathnames[1], pathnames[2])) {
		side1->stages[0] = base->stages[0];
		side1->filemask |= 1;
		base->is_null = 1;
		base->clean = 1;
		return 1;
	}
	rq.path = oldpath;
	rq.pathnames = pathnames;
	rq.extra_marker_size = 1 + 2 * o->opts->call_depth;
	clean_merge = content_merge(o, &rq, &base->stages[0], &side1->stages[1], &side2->stages[2],
				    &merged);
	if (clean_merge < 0)
		return -1;
	if (!clean_merge && merged.mode == side1->stages[1].mode &&
	    git_oid_equal(&merged.oid, &side1->stages[1].oid))
		was_binary_blob = 1;
	side1->stages[1] = merged;
	if (was_binary_blob)
		merged = side2->stages[2];
	side2->stages[2] = merged;
	side1->path_conflict = 1;
	side2->path_conflict = 1;
	base->path_conflict = 1;
	conflict_msg(o, pathnames[0], "rename/rename");
	return clean_merge;
}

static int process_renames(struct ort *o, struct ort_pairs *renames)
{
	int clean_merge = 1;
	size_t i;

	for (i = 0; i < renames->nr; i++) {
		struct ort_pair *pair = renames->v[i];
		struct gitmap_entry *old_ent = gitmap_get(&o->paths, pair->one->path);
		struct gitmap_entry *new_ent = gitmap_get(&o->paths, pair->two->path);
		struct entry *oldinfo = old_ent ? old_ent->ptr : NULL, *newinfo;
		const char *oldpath = old_ent ? old_ent->key : NULL, *newpath;
		int target_index, other, source_deleted, collision, type_changed;
		unsigned int old_sidemask;

		newpath = new_ent ? new_ent->key : pair->two->path;
		newinfo = new_ent ? new_ent->ptr : NULL;
		if (!oldinfo || oldinfo->clean)
			continue;
		if (i + 1 < renames->nr && !strcmp(oldpath, renames->v[i + 1]->one->path)) {
			int c = rename_rename(o, renames, i, oldpath, newpath);

			if (c < 0)
				return -1;
			if (!c)
				clean_merge = 0;
			i++;
			continue;
		}
		if (!newinfo || newinfo->clean) {
			o->unsure = 1;
			continue;
		}
		target_index = pair->score;
		if (target_index != 1 && target_index != 2) {
			o->unsure = 1;
			continue;
		}
		other = 3 - target_index;
		old_sidemask = 1u << other;
		source_deleted = oldinfo->filemask == 1;
		collision = (newinfo->filemask & old_sidemask) != 0;
		type_changed = !source_deleted &&
			       S_ISREG(oldinfo->stages[other].mode) !=
			       S_ISREG(newinfo->stages[target_index].mode);
		if (type_changed && collision)
			collision = 0;
		if (!source_deleted && !(oldinfo->filemask & old_sidemask))
			o->unsure = 1;
		if (collision && !source_deleted) {
			const char *pathnames[3];
			const struct content_request rq = {
				.path = pair->one->path, .pathnames = pathnames,
				.extra_marker_size = 1 + 2 * o->opts->call_depth,
			};
			struct entry *base, *side1, *side2;
			struct version merged;
			int clean;

			pathnames[0] = oldpath;
			pathnames[other] = oldpath;
			pathnames[target_index] = newpath;
			base = get_entry(o, pathnames[0]);
			side1 = get_entry(o, pathnames[1]);
			side2 = get_entry(o, pathnames[2]);
			if (!base || !side1 || !side2) {
				o->unsure = 1;
				continue;
			}
			clean = content_merge(o, &rq, &base->stages[0], &side1->stages[1],
					      &side2->stages[2], &merged);
			if (clean < 0)
				return -1;
			newinfo->stages[target_index] = merged;
			if (!clean)
				conflict_msg(o, newpath, "rename involved in collision");
		} else if (collision && source_deleted) {
			newinfo->path_conflict = 1;
			conflict_msg(o, newpath, "rename/delete");
		} else {
			newinfo->stages[0] = oldinfo->stages[0];
			newinfo->filemask |= 1;
			newinfo->pathnames[0] = oldpath;
			if (type_changed) {
				git_oid_cpy(&oldinfo->stages[0].oid, &null_oid);
				oldinfo->stages[0].mode = 0;
				oldinfo->filemask &= 0x06;
			} else if (source_deleted) {
				newinfo->path_conflict = 1;
				conflict_msg(o, newpath, "rename/delete");
			} else {
				newinfo->stages[other] = oldinfo->stages[other];
				newinfo->filemask |= 1u << other;
				newinfo->pathnames[other] = oldpath;
			}
		}
		if (!type_changed) {
			oldinfo->is_null = 1;
			oldinfo->clean = 1;
		}
	}
	return clean_merge;
}

static int detect_and_process_renames(struct ort *o)
{
	struct ort_pairs combined = { NULL, 0, 0 };
	struct gitmap collisions[3];
	struct ort_pair **tmp;
	int clean = 1, c, i;

	if (!possible_side_renames(o, 1) && !possible_side_renames(o, 2))
		return 1;
	detect_regular_renames(o, SIDE1);
	detect_regular_renames(o, SIDE2);
	if (!o->opts->call_depth) {
		get_provisional_directory_renames(o, SIDE1, &clean);
		get_provisional_directory_renames(o, SIDE2, &clean);
		handle_directory_level_conflicts(o);
	}
	for (i = SIDE1; i <= SIDE2; i++)
		compute_collisions(o, &collisions[i], &o->side[3 - i].dir_renames,
				   &o->side[i].pairs);
	clean &= collect_renames(o, &combined, SIDE1, collisions, &o->side[2].dir_renames,
				 &o->side[1].dir_renames);
	clean &= collect_renames(o, &combined, SIDE2, collisions, &o->side[1].dir_renames,
				 &o->side[2].dir_renames);
	for (i = SIDE1; i <= SIDE2; i++)
		free_collisions(&collisions[i]);
	tmp = xmalloc((combined.nr + 1) * sizeof(*tmp));
	sort_pairs(combined.v, combined.nr, tmp);
	free(tmp);
	c = process_renames(o, &combined);
	free(combined.v);
	if (c < 0)
		return -1;
	return clean & c;
}

/* ---- process_entries() ---- */

/* The order of sort_dirs_next_to_their_children(): a path sorts as if it ended in '/'. */
static int dirs_next_to_children(const char *one, const char *two)
{
	unsigned char c1, c2;

	while (*one && *one == *two) {
		one++;
		two++;
	}
	c1 = *one ? (unsigned char)*one : '/';
	c2 = *two ? (unsigned char)*two : '/';
	if (c1 == c2)
		return *one ? 1 : -1;
	return c1 - c2;
}

struct plist_item {
	const char *path;
	struct entry *e;
};

static int plist_cmp(const void *a, const void *b)
{
	return dirs_next_to_children(((const struct plist_item *)a)->path,
				     ((const struct plist_item *)b)->path);
}

struct tree_version {
	const char *name;
	const struct version *v;
};

struct dir_offset {
	const char *dir;
	size_t offset;
};

struct dir_metadata {
	struct tree_version *versions;
	size_t versions_nr, versions_alloc;
	struct dir_offset *offsets;
	size_t offsets_nr, offsets_alloc;
	const char *last_directory;
	size_t last_directory_len;
};

static void record_entry_for_tree(struct dir_metadata *dm, const char *path, struct entry *mi)
{
	if (mi->is_null)
		return;
	ALLOC_GROW(dm->versions, dm->versions_nr + 1, dm->versions_alloc);
	dm->versions[dm->versions_nr++] = (struct tree_version){ path + mi->basename_offset,
								 &mi->result };
}

/* base_name_compare(): tree order, a folder as if its name ended in '/'. */
static int tree_entry_order(const void *a_, const void *b_)
{
	const struct tree_version *a = a_, *b = b_;
	size_t al = strlen(a->name), bl = strlen(b->name), len = al < bl ? al : bl;
	int cmp = memcmp(a->name, b->name, len);
	unsigned char c1, c2;

	if (cmp)
		return cmp;
	c1 = (unsigned char)a->name[len];
	c2 = (unsigned char)b->name[len];
	if (!c1 && S_ISDIR(a->v->mode))
		c1 = '/';
	if (!c2 && S_ISDIR(b->v->mode))
		c2 = '/';
	return c1 < c2 ? -1 : c1 > c2;
}

static int write_tree(struct ort *o, git_oid *out, struct tree_version *v, size_t nr)
{
	struct strbuf buf = STRBUF_INIT;
	size_t i;
	int err;

	qsort(v, nr, sizeof(*v), tree_entry_order);
	for (i = 0; i < nr; i++) {
		strbuf_addf(&buf, "%o %s", v[i].v->mode, v[i].name);
		strbuf_addch(&buf, '\0');
		strbuf_add(&buf, v[i].v->oid.id, GIT_OID_RAWSZ);
	}
	err = write_object(o, out, buf.buf, buf.len, GIT_OBJECT_TREE);
	strbuf_release(&buf);
	return err;
}

static int write_completed_directory(struct ort *o, const char *new_dir, struct dir_metadata *dm)
{
	struct entry *dir_info;
	size_t offset;
	const char *prev_dir;

	if (new_dir == dm->last_directory)
		return 0;
	if (!dm->last_directory ||
	    !strncmp(new_dir, dm->last_directory, dm->last_directory_len)) {
		dm->last_directory = new_dir;
		dm->last_directory_len = strlen(new_dir);
		ALLOC_GROW(dm->offsets, dm->offsets_nr + 1, dm->offsets_alloc);
		dm->offsets[dm->offsets_nr++] = (struct dir_offset){ new_dir, dm->versions_nr };
		return 0;
	}
	dir_info = get_entry(o, dm->last_directory);
	if (!dir_info || !dm->offsets_nr) {
		o->unsure = 1;
		return -1;
	}
	offset = dm->offsets[dm->offsets_nr - 1].offset;
	if (offset == dm->versions_nr) {
		dir_info->is_null = 1;
	} else {
		dir_info->is_null = 0;
		dir_info->result.mode = S_IFDIR;
		if (write_tree(o, &dir_info->result.oid, dm->versions + offset,
			       dm->versions_nr - offset) < 0)
			return -1;
	}
	dm->offsets_nr--;
	dm->versions_nr = offset;
	prev_dir = dm->offsets_nr ? dm->offsets[dm->offsets_nr - 1].dir : NULL;
	if (new_dir != prev_dir) {
		ALLOC_GROW(dm->offsets, dm->offsets_nr + 1, dm->offsets_alloc);
		dm->offsets[dm->offsets_nr++] = (struct dir_offset){ new_dir, dm->versions_nr };
	}
	dm->last_directory = new_dir;
	dm->last_directory_len = strlen(new_dir);
	return 0;
}

static const char *unique_path(struct ort *o, const char *path, const char *branch)
{
	struct strbuf p = STRBUF_INIT;
	size_t base_len, i;
	int suffix = 0;
	char *ret;

	strbuf_addf(&p, "%s~", path);
	i = p.len;
	strbuf_addstr(&p, branch);
	for (; i < p.len; i++)
		if (p.buf[i] == '/')
			p.buf[i] = '_';
	base_len = p.len;
	while (gitmap_get(&o->paths, p.buf)) {
		strbuf_setlen(&p, base_len);
		strbuf_addf(&p, "_%d", suffix++);
	}
	ret = arena_strdup(&o->arena, p.buf);
	strbuf_release(&p);
	return ret;
}

static void mark_conflicted(struct ort *o, const char *path, struct entry *ci)
{
	gitmap_put(&o->conflicted, path, 0)->ptr = ci;
}

/* Two different kinds of thing (file, link, submodule) on the two sides. */
static void distinct_types(struct ort *o, const char **path, struct entry *ci,
			   struct dir_metadata *dm)
{
	unsigned int o_mode = ci->stages[0].mode, a_mode = ci->stages[1].mode;
	unsigned int b_mode = ci->stages[2].mode;
	const char *a_path = NULL, *b_path = NULL;
	int rename_a = 0, rename_b = 0;
	struct entry *new_ci;

	if (o->opts->call_depth) {
		ci->clean = 0;
		ci->result = ci->stages[0];
		ci->is_null = ci->result.mode == 0;
		return;
	}
	new_ci = arena_alloc(&o->arena, sizeof(*new_ci));
	if (S_ISREG(a_mode))
		rename_a = 1;
	else if (S_ISREG(b_mode))
		rename_b = 1;
	else
		rename_a = rename_b = 1;
	if (rename_a)
		a_path = unique_path(o, *path, o->opts->branch1);
	if (rename_b)
		b_path = unique_path(o, *path, o->opts->branch2);
	conflict_msg(o, *path, "distinct types");
	ci->clean = 0;
	*new_ci = *ci;
	new_ci->result = ci->stages[2];
	new_ci->stages[1].mode = 0;
	git_oid_cpy(&new_ci->stages[1].oid, &null_oid);
	new_ci->filemask = 5;
	if ((S_IFMT & b_mode) != (S_IFMT & o_mode)) {
		new_ci->stages[0].mode = 0;
		git_oid_cpy(&new_ci->stages[0].oid, &null_oid);
		new_ci->filemask = 4;
	}
	ci->result = ci->stages[1];
	ci->stages[2].mode = 0;
	git_oid_cpy(&ci->stages[2].oid, &null_oid);
	ci->filemask = 3;
	if ((S_IFMT & a_mode) != (S_IFMT & o_mode)) {
		ci->stages[0].mode = 0;
		git_oid_cpy(&ci->stages[0].oid, &null_oid);
		ci->filemask = 2;
	}
	if (rename_a)
		put_entry(o, a_path, ci);
	if (!rename_b)
		b_path = *path;
	put_entry(o, b_path, new_ci);
	if (rename_a && rename_b)
		gitmap_remove(&o->paths, *path);
	mark_conflicted(o, b_path, new_ci);
	record_entry_for_tree(dm, b_path, new_ci);
	if (a_path)
		*path = a_path;
}

/* A file where the merged folder stays: moved aside to path~branch. */
static struct entry *file_beside_dir(struct ort *o, const char **path, struct entry *ci,
				     int *df_file_index)
{
	struct entry *new_ci = arena_alloc(&o->arena, sizeof(*new_ci));
	const char *branch;
	int i;

	*new_ci = *ci;
	new_ci->match_mask &= ~new_ci->dirmask;
	new_ci->dirmask = 0;
	for (i = 0; i < 3; i++) {
		if (new_ci->filemask & (1u << i))
			continue;
		new_ci->stages[i].mode = 0;
		git_oid_cpy(&new_ci->stages[i].oid, &null_oid);
	}
	*df_file_index = (ci->dirmask & (1u << 1)) ? 2 : 1;
	branch = *df_file_index == 1 ? o->opts->branch1 : o->opts->branch2;
	*path = unique_path(o, *path, branch);
	put_entry(o, *path, new_ci);
	conflict_msg(o, *path, "file/directory");
	ci->filemask = 0;
	return new_ci;
}

static int process_entry(struct ort *o, const char *path, struct entry *ci,
			 struct dir_metadata *dm)
{
	int df_file_index = 0, i;

	if (ci->dirmask) {
		record_entry_for_tree(dm, path, ci);
		if (ci->filemask == 0)
			return 0;
	}
	if (ci->df_conflict && ci->result.mode == 0) {
		ci->df_conflict = 0;
		ci->clean = 0;
		ci->is_null = 0;
		ci->match_mask &= ~ci->dirmask;
		ci->dirmask = 0;
		for (i = 0; i < 3; i++) {
			if (ci->filemask & (1u << i))
				continue;
			ci->stages[i].mode = 0;
			git_oid_cpy(&ci->stages[i].oid, &null_oid);
		}
	} else if (ci->df_conflict && ci->result.mode != 0) {
		if (ci->filemask == 1) {
			ci->filemask = 0;
			return 0;
		}
		ci = file_beside_dir(o, &path, ci, &df_file_index);
	}
	if (ci->match_mask) {
		ci->clean = !ci->df_conflict && !ci->path_conflict;
		if (ci->match_mask == 6) {
			ci->result = ci->stages[1];
		} else {
			unsigned int othermask = 7 & ~ci->match_mask;
			int side = othermask == 4 ? 2 : 1;

			ci->result = ci->stages[side];
			ci->is_null = !ci->result.mode;
			if (ci->is_null)
				ci->clean = 1;
		}
	} else if (ci->filemask >= 6 &&
		   (S_IFMT & ci->stages[1].mode) != (S_IFMT & ci->stages[2].mode)) {
		distinct_types(o, &path, ci, dm);
	} else if (ci->filemask >= 6) {
		struct version merged;
		const struct content_request rq = {
			.path = path, .pathnames = ci->pathnames,
			.extra_marker_size = o->opts->call_depth * 2,
		};
		int clean_merge = content_merge(o, &rq, &ci->stages[0], &ci->stages[1],
						&ci->stages[2], &merged);

		if (clean_merge < 0)
			return -1;
		ci->clean = clean_merge && !ci->df_conflict && !ci->path_conflict;
		ci->result = merged;
		ci->is_null = merged.mode == 0;
		if (clean_merge && ci->df_conflict) {
			if (df_file_index != 1 && df_file_index != 2)
				o->unsure = 1;
			else {
				ci->filemask = 1u << df_file_index;
				ci->stages[df_file_index] = merged;
			}
		}
		if (!clean_merge)
			conflict_msg(o, path, S_ISGITLINK(merged.mode) ? "submodule" :
					      ci->filemask == 6 ? "add/add" : "content");
	} else if (ci->filemask == 3 || ci->filemask == 5) {
		int side = ci->filemask == 5 ? 2 : 1, index = o->opts->call_depth ? 0 : side;

		ci->result = ci->stages[index];
		ci->clean = 0;
		if (!(ci->path_conflict &&
		      git_oid_equal(&ci->stages[0].oid, &ci->stages[side].oid)))
			conflict_msg(o, path, "modify/delete");
	} else if (ci->filemask == 2 || ci->filemask == 4) {
		int side = ci->filemask == 4 ? 2 : 1;

		ci->result = ci->stages[side];
		ci->clean = !ci->df_conflict && !ci->path_conflict;
	} else if (ci->filemask == 1) {
		ci->is_null = 1;
		ci->result.mode = 0;
		git_oid_cpy(&ci->result.oid, &null_oid);
		if (ci->df_conflict)
			o->unsure = 1;
		ci->clean = !ci->path_conflict;
	}
	if (!ci->clean)
		mark_conflicted(o, path, ci);
	record_entry_for_tree(dm, path, ci);
	return 0;
}

static int process_entries(struct ort *o, git_oid *out)
{
	struct plist_item *plist;
	struct dir_metadata dm;
	struct gitmap_entry *e;
	size_t nr = 0, k;
	unsigned int b;
	int err = 0;

	memset(&dm, 0, sizeof(dm));
	if (!o->paths.count) {
		err = write_tree(o, out, NULL, 0);
		return err;
	}
	plist = xmalloc(o->paths.count * sizeof(*plist));
	for (e = gitmap_first(&o->paths, &b); e; e = gitmap_next(&o->paths, &b, e))
		plist[nr++] = (struct plist_item){ e->key, e->ptr };
	qsort(plist, nr, sizeof(*plist), plist_cmp);
	for (k = nr; !err && k-- > 0;) {
		struct entry *mi = plist[k].e;

		if ((err = write_completed_directory(o, mi->directory_name, &dm)) < 0)
			break;
		if (mi->clean)
			record_entry_for_tree(&dm, plist[k].path, mi);
		else
			err = process_entry(o, plist[k].path, mi, &dm);
	}
	if (!err && (dm.offsets_nr != 1 || dm.offsets[0].offset != 0)) {
		o->unsure = 1;
		err = -1;
	}
	if (!err)
		err = write_tree(o, out, dm.versions, dm.versions_nr);
	free(plist);
	free(dm.versions);
	free(dm.offsets);
	return err;
}

/* ---- the merge ---- */

static const char *kind_of(struct ort *o, const char *path)
{
	const char *k = gitmap_get_ptr(&o->kinds, path);

	return k ? k : "content";
}

static int conflict_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ort_conflict *)a)->path,
		      ((const struct ort_conflict *)b)->path);
}

static void fill_result(struct ort *o, struct ort_result *out)
{
	struct gitmap_entry *e;
	unsigned int b;
	size_t n = 0;

	out->conflicts = xcalloc(o->conflicted.count + 1, sizeof(*out->conflicts));
	for (e = gitmap_first(&o->conflicted, &b); e; e = gitmap_next(&o->conflicted, &b, e)) {
		const struct entry *ci = e->ptr;
		struct ort_conflict *c = &out->conflicts[n++];
		int i;

		c->path = xstrdup(e->key);
		c->kind = kind_of(o, e->key);
		for (i = 0; i < 3; i++) {
			if (!(ci->filemask & (1u << i)))
				continue;
			c->modes[i] = ci->stages[i].mode;
			git_oid_cpy(&c->oids[i], &ci->stages[i].oid);
		}
	}
	out->conflicts_nr = n;
	qsort(out->conflicts, n, sizeof(*out->conflicts), conflict_cmp);
	if (!n && !out->clean) {
		/* a conflict with no file (a folder renamed several ways): name it anyway */
		for (e = gitmap_first(&o->kinds, &b); e; e = gitmap_next(&o->kinds, &b, e)) {
			out->conflicts = xrealloc(out->conflicts, sizeof(*out->conflicts));
			memset(out->conflicts, 0, sizeof(*out->conflicts));
			out->conflicts[0].path = xstrdup(e->key);
			out->conflicts[0].kind = e->ptr;
			out->conflicts[0].pathless = 1;
			out->conflicts_nr = 1;
			break;
		}
	}
}

void ort_result_release(struct ort_result *r)
{
	size_t i;

	for (i = 0; i < r->conflicts_nr; i++)
		free(r->conflicts[i].path);
	free(r->conflicts);
	r->conflicts = NULL;
	r->conflicts_nr = 0;
}

static void ort_init(struct ort *o, git_repository *repo, git_odb *odb,
		     const struct ort_options *opts)
{
	int i;

	memset(o, 0, sizeof(*o));
	o->repo = repo;
	o->odb = odb;
	o->opts = opts;
	gitmap_init(&o->paths, &o->arena);
	gitmap_init(&o->conflicted, &o->arena);
	gitmap_init(&o->kinds, &o->arena);
	for (i = SIDE1; i <= SIDE2; i++) {
		struct side_renames *r = &o->side[i];

		gitmap_init(&r->dirs_removed, &o->arena);
		gitmap_init(&r->dir_rename_count, &o->arena);
		gitmap_init(&r->dir_renames, &o->arena);
		gitmap_init(&r->relevant_sources, &o->arena);
		gitmap_init(&r->possible_trivial_merges, &o->arena);
		gitmap_init(&r->target_dirs, &o->arena);
		r->trivial_merges_okay = 1;
	}
	o->current_dir_name = "";
}

static void ort_release(struct ort *o)
{
	int i;

	for (i = SIDE1; i <= SIDE2; i++) {
		struct side_renames *r = &o->side[i];
		size_t k;

		for (k = 0; k < r->pairs.nr; k++) {
			free(r->pairs.v[k]->one->spans);
			if (r->pairs.v[k]->two != r->pairs.v[k]->one)
				free(r->pairs.v[k]->two->spans);
		}
		free(r->pairs.v);
		gitmap_release(&r->dirs_removed);
		gitmap_release(&r->dir_renames);
		gitmap_release(&r->relevant_sources);
		gitmap_release(&r->possible_trivial_merges);
		gitmap_release(&r->target_dirs);
		clear_dir_rename_count(&r->dir_rename_count);
		gitmap_release(&r->dir_rename_count);
	}
	gitmap_release(&o->paths);
	gitmap_release(&o->conflicted);
	gitmap_release(&o->kinds);
	arena_release(&o->arena);
}

int ort_merge_trees(struct ort_result *out, git_repository *repo, const git_oid *base,
		    const git_oid *side1, const git_oid *side2, const struct ort_options *opts)
{
	const git_oid *trees[3] = { base, side1, side2 };
	git_odb *odb = NULL;
	struct ort o;
	int err, clean;

	memset(out, 0, sizeof(*out));
	if (git_repository_odb(&odb, repo) < 0)
		return merge_git_fail("merge: object database");
	ort_init(&o, repo, odb, opts);
	o.toplevel_dir = arena_strdup(&o.arena, "");
	o.current_dir_name = o.toplevel_dir;
	if ((err = traverse(&o, trees, "")) < 0 || (err = handle_deferred_entries(&o)) < 0)
		goto done;
	clean = detect_and_process_renames(&o);
	if (clean < 0 || o.failed) {
		err = nb_error_set(NB_ERROR, "merge: %s", nb_error_last());
		goto done;
	}
	if ((err = process_entries(&o, &out->tree)) < 0 && !o.unsure)
		goto done;
	err = 0;
	out->clean = clean && !o.conflicted.count && !o.unsure;
	out->unsure = o.unsure;
	fill_result(&o, out);
done:
	ort_release(&o);
	git_odb_free(odb);
	return err;
}
