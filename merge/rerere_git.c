/* Conflicted files of a merge with markers, and merges resolved from recorded resolutions. */
#include <stdlib.h>
#include <string.h>
#include <git2.h>

#include "merge/merge_global.h"
#include "merge/rerere.h"
#include "merge/rerere_git_int.h"
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
	git_index_free(c->index);
	memset(c, 0, sizeof(*c));
}

static const char *conflict_kind(const git_index_entry *anc, const git_index_entry *ours,
			  const git_index_entry *theirs)
{
	if (!ours || !theirs)
		return "modify/delete";
	if (strcmp(ours->path, theirs->path) || (anc && strcmp(anc->path, ours->path)))
		return "rename";
	return anc ? "content" : "add/add";
}

/* One conflict entry: its kind and, for a text conflict, the file with markers. */
static int add_file(struct rerere_git_conflict *c, git_repository *repo,
		      const git_index_entry *anc, const git_index_entry *ours,
		      const git_index_entry *theirs, const git_merge_file_options *fo)
{
	struct rerere_git_file *f;
	git_merge_file_result res = { 0 };
	const char *kind = conflict_kind(anc, ours, theirs);
	const git_index_entry *any = ours ? ours : theirs ? theirs : anc;

	ALLOC_GROW(c->files, c->nr + 1, c->alloc);
	f = &c->files[c->nr++];
	memset(f, 0, sizeof(*f));
	f->path = xstrdup(any->path);
	f->kind = xstrdup(kind);
	f->mode = ours ? ours->mode : GIT_FILEMODE_BLOB;
	if (strcmp(kind, "content") && strcmp(kind, "add/add"))
		return 0;
	if (git_merge_file_from_index(&res, repo, anc, ours, theirs, fo) < 0)
		return nb_error_set(NB_ERROR, "%s: %s", f->path, merge_git_error());
	if (!res.automergeable && res.ptr) {
		f->text = xmalloc(res.len + 1);
		memcpy(f->text, res.ptr, res.len);
		f->text[res.len] = '\0';
		f->len = res.len;
	}
	git_merge_file_result_free(&res);
	return 0;
}

/* The whole merge of ours and theirs into an index: on their trees when `base` is known. */
static int merge_index(git_index **out, git_repository *repo, const git_oid *base,
			 git_commit *o, git_commit *t, const git_merge_options *mo)
{
	git_commit *b = NULL;
	git_tree *bt = NULL, *ot = NULL, *tt = NULL;
	int err;

	if (!base)
		return git_merge_commits(out, repo, o, t, mo);
	if ((err = git_commit_lookup(&b, repo, base)) == 0 &&
	    (err = git_commit_tree(&bt, b)) == 0 && (err = git_commit_tree(&ot, o)) == 0 &&
	    (err = git_commit_tree(&tt, t)) == 0)
		err = git_merge_trees(out, repo, bt, ot, tt, mo);
	git_tree_free(bt);
	git_tree_free(ot);
	git_tree_free(tt);
	git_commit_free(b);
	return err;
}

int rerere_git_conflict(struct rerere_git_conflict *out, git_repository *repo,
			const git_oid *base, const git_oid *ours, const git_oid *theirs,
			const char *ours_label, const char *theirs_label)
{
	git_commit *o = NULL, *t = NULL;
	git_index_conflict_iterator *it = NULL;
	const git_index_entry *anc, *our, *their;
	git_merge_options mo;
	git_merge_file_options fo;
	int err = 0, rc;

	git_merge_options_init(&mo, GIT_MERGE_OPTIONS_VERSION);
	git_merge_file_options_init(&fo, GIT_MERGE_FILE_OPTIONS_VERSION);
	fo.our_label = ours_label;
	fo.their_label = theirs_label;
	if (git_commit_lookup(&o, repo, ours) < 0 || git_commit_lookup(&t, repo, theirs) < 0 ||
	    merge_index(&out->index, repo, base, o, t, &mo) < 0 ||
	    git_index_conflict_iterator_new(&it, out->index) < 0) {
		err = nb_error_set(NB_ERROR, "conflict files: %s", merge_git_error());
		goto done;
	}
	while (!err && (rc = git_index_conflict_next(&anc, &our, &their, it)) == 0)
		err = add_file(out, repo, anc, our, their, &fo);
done:
	git_index_conflict_iterator_free(it);
	git_commit_free(o);
	git_commit_free(t);
	return err;
}

/* Puts `text` at stage 0 of `path` in place of its conflict. */
static int stage(git_index *index, git_repository *repo, const struct rerere_git_file *f,
		   const struct strbuf *text)
{
	git_index_entry e;

	memset(&e, 0, sizeof(e));
	e.path = f->path;
	e.mode = f->mode;
	if (git_blob_create_from_buffer(&e.id, repo, text->buf, text->len) < 0 ||
	    git_index_conflict_remove(index, f->path) < 0 || git_index_add(index, &e) < 0)
		return nb_error_set(NB_ERROR, "%s: %s", f->path, merge_git_error());
	return 0;
}

int rerere_git_resolve(git_oid *out_tree, size_t *matched, size_t *total,
		       git_repository *repo, struct rerere_git_conflict *c,
		       const char *rerere_dir)
{
	struct strbuf text = STRBUF_INIT;
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
		if (!err && (err = stage(c->index, repo, f, &text)) < 0)
			break;
	}
	if (!err && (git_index_has_conflicts(c->index) ||
		     git_index_write_tree_to(out_tree, c->index, repo) < 0))
		err = NB_ECONFLICT;
	strbuf_release(&text);
	return err;
}
