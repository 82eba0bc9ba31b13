/* Conflicted files of a merge with markers, and merges resolved from recorded resolutions. */
#include <stdlib.h>
#include <string.h>
#include <git2.h>

#include "merge/repo/repo.h"
#include "merge/integrate/integrate.h"
#include "merge/integrate/rerere_git_int.h"
#include "merge/git/treemerge_int.h"
#include "util/error.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

void rerere_git_conflict_release(struct rerere_git_conflict *c)
{
	size_t i;

	for (i = 0; i < c->nr; i++) {
		free(c->files[i].path);
		free(c->files[i].kind);
		free(c->files[i].text);
	}
	free(c->files);
	memset(c, 0, sizeof(*c));
}

/* One conflicting path: its kind and, for a text conflict, the file with markers. */
static int add_file(struct rerere_git_conflict *c, git_repository *repo, const git_tree *tree,
		    const struct treemerge_conflict *tc)
{
	struct rerere_git_file *f;
	git_tree_entry *e = NULL;
	git_blob *blob = NULL;
	enum conflict_kind kind;
	int err = 0;

	ALLOC_GROW(c->files, c->nr + 1, c->alloc);
	f = &c->files[c->nr++];
	memset(f, 0, sizeof(*f));
	f->path = xstrdup(tc->path);
	f->kind = xstrdup(tc->kind);
	f->mode = tc->modes[1] ? tc->modes[1] : GIT_FILEMODE_BLOB;
	kind = conflict_kind_parse(tc->kind);
	if (kind != CONFLICT_CONTENT && kind != CONFLICT_ADD_ADD)
		return 0;
	if (git_tree_entry_bypath(&e, tree, tc->path) < 0 ||
	    git_tree_entry_type(e) != GIT_OBJECT_BLOB) {
		git_error_clear();
		goto done;      /* no file with markers there: nothing to edit */
	}
	f->mode = git_tree_entry_filemode(e);
	if (git_blob_lookup(&blob, repo, git_tree_entry_id(e)) < 0) {
		err = nb_error_set(NB_ERROR, "%s: %s", f->path, merge_git_error());
		goto done;
	}
	f->len = (size_t)git_blob_rawsize(blob);
	f->text = xmalloc(f->len + 1);
	memcpy(f->text, git_blob_rawcontent(blob), f->len);
	f->text[f->len] = '\0';
done:
	git_blob_free(blob);
	git_tree_entry_free(e);
	return err;
}

int rerere_git_conflict(struct rerere_git_conflict *out, git_repository *repo,
			const struct treemerge_conflicts *conflicts)
{
	git_tree *tree = NULL;
	size_t i;
	int err = 0;

	if (!conflicts->have_tree) {
		/* stopped before a tree (too many merge bases): kinds, no files */
		for (i = 0; i < conflicts->nr; i++) {
			ALLOC_GROW(out->files, out->nr + 1, out->alloc);
			memset(&out->files[out->nr], 0, sizeof(out->files[out->nr]));
			out->files[out->nr].path = xstrdup(conflicts->items[i].path);
			out->files[out->nr++].kind = xstrdup(conflicts->items[i].kind);
		}
		return 0;
	}
	if (git_tree_lookup(&tree, repo, &conflicts->tree) < 0)
		return nb_error_set(NB_ERROR, "conflict files: %s", merge_git_error());
	git_oid_cpy(&out->tree, &conflicts->tree);
	for (i = 0; !err && i < conflicts->nr; i++)
		if (!conflicts->items[i].pathless)
			err = add_file(out, repo, tree, &conflicts->items[i]);
	git_tree_free(tree);
	return err;
}

int rerere_git_resolve(git_oid *out_tree, size_t *matched, size_t *total,
		       git_repository *repo, struct rerere_git_conflict *c,
		       const char *rerere_dir)
{
	struct strbuf text = STRBUF_INIT;
	git_tree_update *updates = xcalloc(c->nr + 1, sizeof(*updates));
	git_tree *base = NULL;
	size_t i, m, n;
	int err = c->nr ? 0 : NB_ECONFLICT;

	for (i = 0; i < c->nr; i++) {
		const struct rerere_git_file *f = &c->files[i];
		int rc = NB_ECONFLICT;

		m = n = 0;
		if (f->text)
			rc = rerere_replay(&text, &m, &n, rerere_dir, f->text, f->len);
		if (matched)
			matched[i] = m;
		if (total)
			total[i] = n;
		if (rc < 0 && !err)
			err = NB_ECONFLICT;
		if (err)
			continue;
		updates[i].action = GIT_TREE_UPDATE_UPSERT;
		updates[i].filemode = f->mode;
		updates[i].path = f->path;
		if (git_blob_create_from_buffer(&updates[i].id, repo, text.buf, text.len) < 0) {
			err = nb_error_set(NB_ERROR, "%s: %s", f->path, merge_git_error());
			break;
		}
	}
	if (!err && (git_tree_lookup(&base, repo, &c->tree) < 0 ||
		     git_tree_create_updated(out_tree, repo, base, c->nr, updates) < 0))
		err = nb_error_set(NB_ERROR, "resolved tree: %s", merge_git_error());
	git_tree_free(base);
	free(updates);
	strbuf_release(&text);
	return err;
}
