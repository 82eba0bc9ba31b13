/* A tree diff that reads only the subtrees that differ, and libgit2's diff limited to them. */
#include <stdlib.h>
#include <string.h>
#include <git2.h>

#include "merge/git/treediff_int.h"
#include "util/strbuf.h"
#include "util/strvec.h"
#include "util/xalloc.h"
#include "util/banned.h"

struct treediff_walk {
	git_repository *repo;
	struct strvec *out;
	struct strbuf path;
};

static int compare(struct treediff_walk *w, const git_oid *a, const git_oid *b, unsigned depth);

/* Appends `name` to the path; returns the old length to cut back to. */
static size_t enter(struct treediff_walk *w, const char *name)
{
	size_t len = w->path.len;

	if (len)
		strbuf_addch(&w->path, '/');
	strbuf_addstr(&w->path, name);
	return len;
}

/* One entry present on one side or changed: its paths, recursing into a tree. */
static int changed(struct treediff_walk *w, const git_tree_entry *e, const git_tree_entry *other,
		   int e_is_new, unsigned depth)
{
	size_t len = enter(w, git_tree_entry_name(e));
	int error = 0;

	if (git_tree_entry_type(e) == GIT_OBJECT_TREE) {
		const git_oid *o = other && git_tree_entry_type(other) == GIT_OBJECT_TREE
					   ? git_tree_entry_id(other) : NULL;

		error = e_is_new ? compare(w, o, git_tree_entry_id(e), depth + 1)
				 : compare(w, git_tree_entry_id(e), o, depth + 1);
	} else {
		strvec_push(w->out, w->path.buf);
	}
	strbuf_setlen(&w->path, len);
	return error;
}

static int lookup(git_tree **out, git_repository *repo, const git_oid *id)
{
	*out = NULL;
	return id ? git_tree_lookup(out, repo, id) : 0;
}

/* The paths that differ between trees a and b (NULL: empty) under w->path. */
static int compare(struct treediff_walk *w, const git_oid *a, const git_oid *b, unsigned depth)
{
	git_tree *ta = NULL, *tb = NULL;
	size_t i, n;
	int error;

	if ((a && b && git_oid_equal(a, b)) || (!a && !b))
		return 0;
	if (depth > TREEDIFF_MAX_DEPTH) {
		git_error_set(GIT_ERROR_INVALID, "a tree at %s is nested deeper than %d levels",
			      w->path.buf, TREEDIFF_MAX_DEPTH);
		return -1;
	}
	if ((error = lookup(&ta, w->repo, a)) < 0 || (error = lookup(&tb, w->repo, b)) < 0)
		goto done;
	n = tb ? git_tree_entrycount(tb) : 0;
	for (i = 0; i < n && !error; i++) {
		const git_tree_entry *e = git_tree_entry_byindex(tb, i);
		const git_tree_entry *o = ta ? git_tree_entry_byname(ta, git_tree_entry_name(e))
					     : NULL;

		if (o && git_oid_equal(git_tree_entry_id(e), git_tree_entry_id(o)) &&
		    git_tree_entry_filemode(e) == git_tree_entry_filemode(o))
			continue;
		/* a file that became a directory (or back): both sides' paths */
		if (o && (git_tree_entry_type(o) == GIT_OBJECT_TREE) !=
			 (git_tree_entry_type(e) == GIT_OBJECT_TREE))
			error = changed(w, o, NULL, 0, depth);
		if (!error)
			error = changed(w, e, o, 1, depth);
	}
	n = ta ? git_tree_entrycount(ta) : 0;
	for (i = 0; i < n && !error; i++) {
		const git_tree_entry *o = git_tree_entry_byindex(ta, i);

		if (!tb || !git_tree_entry_byname(tb, git_tree_entry_name(o)))
			error = changed(w, o, NULL, 0, depth);
	}
done:
	git_tree_free(ta);
	git_tree_free(tb);
	return error;
}

int treediff_paths(struct strvec *out, git_repository *repo, const git_oid *a, const git_oid *b)
{
	struct treediff_walk w = { repo, out, STRBUF_INIT };
	int error = compare(&w, a, b, 0);

	strbuf_release(&w.path);
	return error;
}

/* The entry of `name` in tree `id` (NULL: none) into *id_out / *mode_out. */
static int child(const git_oid **id_out, unsigned int *mode_out, git_tree **hold,
		 git_repository *repo, const git_oid *id, const char *name, size_t len)
{
	const git_tree_entry *e;
	char *n;

	*id_out = NULL;
	*mode_out = 0;
	if (!id)
		return 0;
	if (git_tree_lookup(hold, repo, id) < 0)
		return -1;
	n = xstrndup(name, len);
	e = git_tree_entry_byname(*hold, n);
	free(n);
	if (e) {
		*id_out = git_tree_entry_id(e);
		*mode_out = git_tree_entry_filemode(e);
	}
	return 0;
}

static int path_touched(git_repository *repo, const git_oid *a, const git_oid *b,
			const char *path)
{
	git_tree *ta = NULL, *tb = NULL;
	const git_oid *ia = a, *ib = b;
	unsigned int ma = GIT_FILEMODE_TREE, mb = GIT_FILEMODE_TREE;
	int touched = -1;

	for (;;) {
		const char *slash = strchr(path, '/');
		size_t len = slash ? (size_t)(slash - path) : strlen(path);
		git_tree *na = NULL, *nb = NULL;

		if (ma == mb && (ia == ib || (ia && ib && git_oid_equal(ia, ib)))) {
			touched = 0;
			break;
		}
		/* a file on the way: the path is not there on that side */
		if (ia && ma != GIT_FILEMODE_TREE)
			ia = NULL;
		if (ib && mb != GIT_FILEMODE_TREE)
			ib = NULL;
		ma = mb = GIT_FILEMODE_TREE;
		if (!ia && !ib) {
			touched = 0;
			break;
		}
		if (child(&ia, &ma, &na, repo, ia, path, len) < 0 ||
		    child(&ib, &mb, &nb, repo, ib, path, len) < 0) {
			git_tree_free(na);
			git_tree_free(nb);
			break;
		}
		git_tree_free(ta);
		git_tree_free(tb);
		ta = na;
		tb = nb;
		if (!slash) {
			touched = ma != mb || !ia != !ib || (ia && !git_oid_equal(ia, ib));
			break;
		}
		path = slash + 1;
	}
	git_tree_free(ta);
	git_tree_free(tb);
	return touched;
}

int treediff_paths_touched(char *touched, git_repository *repo, const git_oid *a,
			   const git_oid *b, const char *const *paths, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		int t = path_touched(repo, a, b, paths[i]);

		if (t < 0)
			return -1;
		touched[i] = (char)t;
	}
	return 0;
}

int treediff_new(git_diff **out, git_repository *repo, git_tree *a, git_tree *b,
		 const git_diff_options *opts)
{
	struct strvec paths = STRVEC_INIT;
	git_diff_options o;
	int error;

	*out = NULL;
	if (opts)
		o = *opts;
	else
		git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	if ((error = treediff_paths(&paths, repo, a ? git_tree_id(a) : NULL,
				    b ? git_tree_id(b) : NULL)) < 0)
		goto done;
	if (!paths.nr) {
		/* nothing differs: an empty diff, without walking either tree */
		error = git_diff_tree_to_tree(out, repo, NULL, NULL, &o);
		goto done;
	}
	o.pathspec.strings = paths.v;
	o.pathspec.count = paths.nr;
	o.flags |= GIT_DIFF_DISABLE_PATHSPEC_MATCH;
	error = git_diff_tree_to_tree(out, repo, a, b, &o);
done:
	strvec_clear(&paths);
	return error;
}
