/* In-memory three-way merge of two commits into a tree, for integration and bisection. */
#include <string.h>

#include "util/strbuf.h"

#include "merge/git_int.h"
#include "merge/treemerge_int.h"
#include "merge/merge_global.h"
#include "util/error.h"
#include "util/xalloc.h"
#include "util/banned.h"

void treemerge_conflicts_release(struct treemerge_conflicts *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->nr; i++) {
		free(c->items[i].path);
		free(c->items[i].kind);
	}
	free(c->items);
	c->items = NULL;
	c->nr = c->alloc = 0;
}

static _Thread_local struct treemerge_stats stats;

void treemerge_stats_get(struct treemerge_stats *out)
{
	*out = stats;
}

static void conflict_add(struct treemerge_conflicts *c, const char *path, const char *kind)
{
	if (!c)
		return;
	ALLOC_GROW(c->items, c->nr + 1, c->alloc);
	c->items[c->nr].path = xstrdup(path);
	c->items[c->nr].kind = xstrdup(kind);
	c->nr++;
}

/*
 * The conflicts of a libgit2 merge index (into `c`, which may be NULL), each named
 * by the first path it has:
 * NB_ECONFLICT with at least one, or NB_ERROR when libgit2 cannot list them (a
 * conflict with no path to show would leave its callers nothing to report).
 */
static int index_conflicts(struct treemerge_conflicts *c, git_index *index)
{
	git_index_conflict_iterator *it = NULL;
	const git_index_entry *anc, *our, *their;
	size_t found = 0;
	int err;

	if (git_index_conflict_iterator_new(&it, index) < 0)
		return merge_git_fail("merge: listing the conflicts");
	while ((err = git_index_conflict_next(&anc, &our, &their, it)) == 0) {
		const char *path = our ? our->path : their ? their->path : anc->path;
		const char *kind;

		if (anc && our && their)
			kind = strcmp(our->path, their->path) || strcmp(anc->path, our->path) ?
				"rename" : "content";
		else if (!anc)
			kind = "add/add";
		else if (our && their)
			kind = "rename";
		else
			kind = "modify/delete";
		conflict_add(c, path, kind);
		found++;
	}
	git_index_conflict_iterator_free(it);
	if (err != GIT_ITEROVER)
		return merge_git_fail("merge: listing the conflicts");
	if (!found)
		return nb_error_set(NB_ERROR, "merge: libgit2 reported a conflict but listed none");
	return nb_error_set(NB_ECONFLICT, "merge conflict");
}

/* The whole-index merge of libgit2: slow on big trees, but handles renames. */
static int merge_full(git_oid *out_tree, struct treemerge_conflicts *conflicts,
			git_repository *repo, const git_oid *ours, const git_oid *theirs)
{
	git_merge_options opts;
	git_commit *oc = NULL, *tc = NULL;
	git_index *index = NULL;
	int err;

	git_merge_options_init(&opts, GIT_MERGE_OPTIONS_VERSION);
	opts.flags |= GIT_MERGE_FIND_RENAMES;
	opts.target_limit = 7000;
	stats.full++;
	if (git_commit_lookup(&oc, repo, ours) < 0 || git_commit_lookup(&tc, repo, theirs) < 0) {
		err = merge_git_fail("merge: commit lookup");
		goto done;
	}
	if (git_merge_commits(&index, repo, oc, tc, &opts) < 0) {
		err = merge_git_fail("merge");
		goto done;
	}
	if (git_index_has_conflicts(index)) {
		err = index_conflicts(conflicts, index);
		goto done;
	}
	err = git_index_write_tree_to(out_tree, index, repo) < 0 ? merge_git_fail("write tree") : 0;
done:
	git_index_free(index);
	git_commit_free(oc);
	git_commit_free(tc);
	return err;
}

/*
 * The tree-level walk.  `need_full` is set as soon as a path is met where rename
 * detection could change the result (a side deletes what the other changed or also
 * deleted, both sides add different things at one path, a type change): the walk
 * stops and the caller redoes the merge with libgit2's whole-index merge.
 */
struct walk {
	git_repository *repo;
	struct treemerge_conflicts *conflicts;
	struct strbuf path;     /* directory being merged, "" or "a/b/" */
	int need_full;
	int conflicted;
};

#define __NEED_FULL 1   /* internal: abandon the walk */

static int same(const git_tree_entry *a, const git_tree_entry *b)
{
	if (!a || !b)
		return !a && !b;
	return git_tree_entry_filemode(a) == git_tree_entry_filemode(b) &&
	       git_oid_equal(git_tree_entry_id(a), git_tree_entry_id(b));
}

static int is_tree(const git_tree_entry *e)
{
	return e && git_tree_entry_filemode(e) == GIT_FILEMODE_TREE;
}

static int is_file(const git_tree_entry *e)
{
	git_filemode_t m = e ? git_tree_entry_filemode(e) : 0;

	return m == GIT_FILEMODE_BLOB || m == GIT_FILEMODE_BLOB_EXECUTABLE;
}

/* Records a change of the directory being built; creates the builder on first use. */
static int set(git_treebuilder **bld, struct walk *w, const git_tree *ours,
		 const char *name, const git_oid *id, git_filemode_t mode)
{
	if (!*bld && git_treebuilder_new(bld, w->repo, ours) < 0)
		return merge_git_fail("tree builder");
	if (!id) {
		if (git_treebuilder_get(*bld, name) && git_treebuilder_remove(*bld, name) < 0)
			return merge_git_fail("tree builder remove");
		return 0;
	}
	if (git_treebuilder_insert(NULL, *bld, name, id, mode) < 0)
		return merge_git_fail("tree builder insert");
	return 0;
}

static int merge_trees(git_oid *out, int *empty, struct walk *w, const git_tree *b,
			 const git_tree *o, const git_tree *t);

static int lookup_tree(git_tree **out, struct walk *w, const git_tree_entry *e)
{
	*out = NULL;
	if (!e)
		return 0;
	if (git_tree_lookup(out, w->repo, git_tree_entry_id(e)) < 0)
		return merge_git_fail("tree lookup");
	return 0;
}

/* Both sides changed directory `name` differently: merge it recursively. */
static int merge_subtree(git_treebuilder **bld, struct walk *w, const git_tree *ours,
			   const char *name, const git_tree_entry *be,
			   const git_tree_entry *oe, const git_tree_entry *te)
{
	git_tree *b = NULL, *o = NULL, *t = NULL;
	size_t len = w->path.len;
	git_oid id;
	int empty = 0, err;

	if ((err = lookup_tree(&b, w, be)) < 0 || (err = lookup_tree(&o, w, oe)) < 0 ||
	    (err = lookup_tree(&t, w, te)) < 0)
		goto done;
	strbuf_addstr(&w->path, name);
	strbuf_addch(&w->path, '/');
	err = merge_trees(&id, &empty, w, b, o, t);
	strbuf_setlen(&w->path, len);
	if (err)
		goto done;
	if (empty)
		err = set(bld, w, ours, name, NULL, 0);
	else if (!git_oid_equal(&id, git_tree_entry_id(oe)))
		err = set(bld, w, ours, name, &id, GIT_FILEMODE_TREE);
done:
	git_tree_free(b);
	git_tree_free(o);
	git_tree_free(t);
	return err;
}

static int blob_input(git_merge_file_input *in, git_blob **blob, struct walk *w,
			const git_tree_entry *e, const char *path)
{
	git_merge_file_input_init(in, GIT_MERGE_FILE_INPUT_VERSION);
	if (git_blob_lookup(blob, w->repo, git_tree_entry_id(e)) < 0)
		return merge_git_fail("blob lookup");
	in->ptr = git_blob_rawcontent(*blob);
	in->size = (size_t)git_blob_rawsize(*blob);
	in->path = path;
	in->mode = git_tree_entry_filemode(e);
	return 0;
}

/* Both sides changed a regular file: merge modes and contents as git does. */
static int merge_file(git_treebuilder **bld, struct walk *w, const git_tree *ours,
			const char *name, const git_tree_entry *be,
			const git_tree_entry *oe, const git_tree_entry *te)
{
	git_merge_file_input bi, oi, ti;
	git_merge_file_options opts;
	git_merge_file_result res = { 0 };
	git_blob *bb = NULL, *ob = NULL, *tb = NULL;
	git_filemode_t bm = git_tree_entry_filemode(be), om = git_tree_entry_filemode(oe);
	git_filemode_t tm = git_tree_entry_filemode(te), mode = bm == om ? tm : om;
	const git_oid *bid = git_tree_entry_id(be), *oid = git_tree_entry_id(oe);
	const git_oid *tid = git_tree_entry_id(te);
	git_oid merged;
	char *path = xstrfmt("%s%s", w->path.buf, name);
	int err;

	if (git_oid_equal(bid, oid) || git_oid_equal(oid, tid)) {
		err = set(bld, w, ours, name, tid, mode);
		goto done;
	}
	if (git_oid_equal(bid, tid)) {
		err = mode == om ? 0 : set(bld, w, ours, name, oid, mode);
		goto done;
	}
	if ((err = blob_input(&bi, &bb, w, be, path)) < 0 ||
	    (err = blob_input(&oi, &ob, w, oe, path)) < 0 ||
	    (err = blob_input(&ti, &tb, w, te, path)) < 0)
		goto done;
	git_merge_file_options_init(&opts, GIT_MERGE_FILE_OPTIONS_VERSION);
	if (git_merge_file(&res, &bi, &oi, &ti, &opts) < 0) {
		err = merge_git_fail("%s", path);
		goto done;
	}
	if (!res.automergeable) {
		conflict_add(w->conflicts, path, "content");
		w->conflicted = 1;
		err = 0;
		goto done;
	}
	if (git_blob_create_from_buffer(&merged, w->repo, res.ptr, res.len) < 0) {
		err = merge_git_fail("write blob");
		goto done;
	}
	err = set(bld, w, ours, name, &merged, mode);
done:
	git_merge_file_result_free(&res);
	git_blob_free(bb);
	git_blob_free(ob);
	git_blob_free(tb);
	free(path);
	return err;
}

/* One name of a directory: base, ours, theirs entries (each may be NULL). */
static int merge_entry(git_treebuilder **bld, struct walk *w, const git_tree *ours,
			 const char *name, const git_tree_entry *be,
			 const git_tree_entry *oe, const git_tree_entry *te)
{
	if (same(oe, te)) {
		if (!oe && be)
			return __NEED_FULL;     /* deleted by both: rename/rename, rename/delete */
		return 0;
	}
	if (same(be, oe))
		return set(bld, w, ours, name, te ? git_tree_entry_id(te) : NULL,
			     te ? git_tree_entry_filemode(te) : 0);
	if (same(be, te))
		return 0;
	if (!oe || !te)
		return __NEED_FULL;             /* modify/delete: maybe a rename */
	if (is_tree(oe) && is_tree(te) && (!be || is_tree(be)))
		return merge_subtree(bld, w, ours, name, be, oe, te);
	if (is_file(be) && is_file(oe) && is_file(te))
		return merge_file(bld, w, ours, name, be, oe, te);
	return __NEED_FULL;                     /* add/add, type changes, links, submodules */
}

static int merge_trees(git_oid *out, int *empty, struct walk *w, const git_tree *b,
			 const git_tree *o, const git_tree *t)
{
	git_treebuilder *bld = NULL;
	size_t i, n;
	int err = 0;

	*empty = 0;
	n = o ? git_tree_entrycount(o) : 0;
	for (i = 0; !err && i < n; i++) {
		const git_tree_entry *oe = git_tree_entry_byindex(o, i);
		const char *name = git_tree_entry_name(oe);
		const git_tree_entry *te = t ? git_tree_entry_byname(t, name) : NULL;

		if (same(oe, te))
			continue;
		err = merge_entry(&bld, w, o, name, b ? git_tree_entry_byname(b, name) : NULL,
				    oe, te);
	}
	n = t ? git_tree_entrycount(t) : 0;
	for (i = 0; !err && i < n; i++) {
		const git_tree_entry *te = git_tree_entry_byindex(t, i);
		const char *name = git_tree_entry_name(te);

		if (o && git_tree_entry_byname(o, name))
			continue;
		err = merge_entry(&bld, w, o, name, b ? git_tree_entry_byname(b, name) : NULL,
				    NULL, te);
	}
	n = b ? git_tree_entrycount(b) : 0;
	for (i = 0; !err && i < n; i++) {
		const char *name = git_tree_entry_name(git_tree_entry_byindex(b, i));

		if ((!o || !git_tree_entry_byname(o, name)) &&
		    (!t || !git_tree_entry_byname(t, name)))
			err = __NEED_FULL;
	}
	if (err)
		goto done;
	if (!bld) {
		if (o)
			git_oid_cpy(out, git_tree_id(o));
		*empty = !o || git_tree_entrycount(o) == 0;
		if (o)
			goto done;
		if (git_treebuilder_new(&bld, w->repo, NULL) < 0) {
			err = merge_git_fail("tree builder");
			goto done;
		}
	}
	*empty = git_treebuilder_entrycount(bld) == 0;
	if (git_treebuilder_write(out, bld) < 0)
		err = merge_git_fail("write tree");
done:
	git_treebuilder_free(bld);
	return err;
}

/* Fast path over three trees; returns __NEED_FULL when libgit2's whole merge must decide. */
static int merge_fast(git_oid *out_tree, struct treemerge_conflicts *conflicts,
			git_repository *repo, const git_oid *base, const git_oid *ours,
			const git_oid *theirs)
{
	git_tree *b = NULL, *o = NULL, *t = NULL;
	struct walk w = { repo, conflicts, STRBUF_INIT, 0, 0 };
	int empty, err;

	if (git_tree_lookup(&b, repo, base) < 0 || git_tree_lookup(&o, repo, ours) < 0 ||
	    git_tree_lookup(&t, repo, theirs) < 0) {
		err = merge_git_fail("merge: tree lookup");
		goto done;
	}
	err = merge_trees(out_tree, &empty, &w, b, o, t);
	if (err != __NEED_FULL)
		stats.fast++;
	if (!err && w.conflicted)
		err = nb_error_set(NB_ECONFLICT, "merge conflict");
done:
	if (err == __NEED_FULL && conflicts)
		treemerge_conflicts_release(conflicts);
	strbuf_release(&w.path);
	git_tree_free(b);
	git_tree_free(o);
	git_tree_free(t);
	return err;
}

/* libgit2's whole merge of three trees, for what the fast path cannot decide. */
static int merge_full_trees(git_oid *out_tree, struct treemerge_conflicts *conflicts,
			      git_repository *repo, const git_oid *base, const git_oid *ours,
			      const git_oid *theirs)
{
	git_merge_options opts;
	git_tree *b = NULL, *o = NULL, *t = NULL;
	git_index *index = NULL;
	int err;

	git_merge_options_init(&opts, GIT_MERGE_OPTIONS_VERSION);
	opts.flags |= GIT_MERGE_FIND_RENAMES;
	opts.target_limit = 7000;
	stats.full++;
	if (git_tree_lookup(&b, repo, base) < 0 || git_tree_lookup(&o, repo, ours) < 0 ||
	    git_tree_lookup(&t, repo, theirs) < 0) {
		err = merge_git_fail("merge: tree lookup");
		goto done;
	}
	if (git_merge_trees(&index, repo, b, o, t, &opts) < 0) {
		err = merge_git_fail("merge");
		goto done;
	}
	if (git_index_has_conflicts(index)) {
		err = index_conflicts(conflicts, index);
		goto done;
	}
	err = git_index_write_tree_to(out_tree, index, repo) < 0 ? merge_git_fail("write tree") : 0;
done:
	git_index_free(index);
	git_tree_free(b);
	git_tree_free(o);
	git_tree_free(t);
	return err;
}

int treemerge_trees(git_oid *out_tree, struct treemerge_conflicts *conflicts,
		    git_repository *repo, const git_oid *base_tree, const git_oid *ours_tree,
		    const git_oid *theirs_tree)
{
	int err = merge_fast(out_tree, conflicts, repo, base_tree, ours_tree, theirs_tree);

	if (err != __NEED_FULL)
		return err;
	return merge_full_trees(out_tree, conflicts, repo, base_tree, ours_tree, theirs_tree);
}

static int commit_tree_id(git_oid *out, git_repository *repo, const git_oid *commit)
{
	git_commit *c = NULL;

	if (git_commit_lookup(&c, repo, commit) < 0)
		return merge_git_fail("commit lookup");
	git_oid_cpy(out, git_commit_tree_id(c));
	git_commit_free(c);
	return 0;
}

/* The three-way merge of commits with one merge base, done on their trees. */
static int merge_commits_one_base(git_oid *out_tree, struct treemerge_conflicts *conflicts,
				    git_repository *repo, const git_oid *base,
				    const git_oid *ours, const git_oid *theirs)
{
	git_oid b, o, t;
	int err;

	if ((err = commit_tree_id(&b, repo, base)) < 0 ||
	    (err = commit_tree_id(&o, repo, ours)) < 0 ||
	    (err = commit_tree_id(&t, repo, theirs)) < 0)
		return err;
	return treemerge_trees(out_tree, conflicts, repo, &b, &o, &t);
}

int treemerge_commits_bases(git_oid *out_tree, int *already_merged,
			    struct treemerge_conflicts *conflicts, git_repository *repo,
			    const git_oid *ours, const git_oid *theirs,
			    const git_oid *bases, size_t bases_nr)
{
	if (already_merged)
		*already_merged = 0;
	if (!bases_nr)
		return nb_error_set(NB_EUNRELATED, "refusing to merge unrelated histories");
	if (bases_nr == 1 && git_oid_equal(&bases[0], theirs)) {
		if (already_merged)
			*already_merged = 1;
		return commit_tree_id(out_tree, repo, ours);
	}
	if (bases_nr == 1 && git_oid_equal(&bases[0], ours))
		return commit_tree_id(out_tree, repo, theirs);
	if (bases_nr == 1)
		return merge_commits_one_base(out_tree, conflicts, repo, &bases[0], ours,
						theirs);
	/* criss-cross: libgit2 merges the merge bases into a virtual one first */
	return merge_full(out_tree, conflicts, repo, ours, theirs);
}

int treemerge_commits(git_oid *out_tree, int *already_merged,
		      struct treemerge_conflicts *conflicts, git_repository *repo,
		      const git_oid *ours, const git_oid *theirs)
{
	git_oidarray bases = { 0 };
	int err = git_merge_bases(&bases, repo, ours, theirs);

	if (err < 0 && err != GIT_ENOTFOUND)
		return merge_git_fail("merge base");
	err = treemerge_commits_bases(out_tree, already_merged, conflicts, repo, ours, theirs,
				      bases.ids, err == GIT_ENOTFOUND ? 0 : bases.count);
	git_oidarray_dispose(&bases);
	return err;
}
