/* The simulator's git writing: blobs, trees by update (no checkout), commits, refs. */
#include <stdlib.h>
#include <string.h>

#include "merge/git/git_int.h"
#include "feeds/sim.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/xalloc.h"
#include "util/banned.h"

static int read_blob(struct strbuf *out, git_repository *repo, git_tree *tree, const char *path)
{
	git_tree_entry *entry = NULL;
	git_blob *blob = NULL;
	int error = 0;

	if (git_tree_entry_bypath(&entry, tree, path) < 0) {
		error = nb_error_set(NB_ENOTFOUND, "sim: no file %s", path);
		goto done;
	}
	if (git_blob_lookup(&blob, repo, git_tree_entry_id(entry)) < 0) {
		error = merge_git_fail("%s", path);
		goto done;
	}
	strbuf_add(out, git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob));
done:
	git_blob_free(blob);
	git_tree_entry_free(entry);
	return error;
}

int sim_git_read(struct strbuf *out, git_repository *repo, const char *commit_hex, const char *path)
{
	git_oid oid;
	git_commit *commit = NULL;
	git_tree *tree = NULL;
	int error;

	if (git_oid_fromstr(&oid, commit_hex) < 0 || git_commit_lookup(&commit, repo, &oid) < 0 ||
	    git_commit_tree(&tree, commit) < 0) {
		error = merge_git_fail("%s", commit_hex);
		goto done;
	}
	error = read_blob(out, repo, tree, path);
done:
	git_tree_free(tree);
	git_commit_free(commit);
	return error;
}

struct pending {
	const char *path;
	struct strbuf text;
};

/* Replaces the one occurrence of `old` in `text` by `new_text`. */
static int replace(struct strbuf *text, const struct sim_op *op)
{
	struct strbuf out = STRBUF_INIT;
	const char *at = strstr(text->buf, op->old_text);
	size_t olen = strlen(op->old_text);

	if (!at || strstr(at + 1, op->old_text))
		return nb_error_set(NB_ECONFLICT, "sim: %s: the text to replace is %s", op->path,
				    at ? "not unique" : "missing");
	strbuf_add(&out, text->buf, at - text->buf);
	strbuf_addstr(&out, op->new_text);
	strbuf_addstr(&out, at + olen);
	strbuf_release(text);
	*text = out;
	return 0;
}

static int apply_ops(struct pending *files, size_t *files_nr, git_repository *repo,
		       git_tree *base, const struct sim_op *ops, size_t ops_nr)
{
	size_t i, j;
	int error = 0;

	for (i = 0; i < ops_nr && !error; i++) {
		for (j = 0; j < *files_nr; j++)
			if (!strcmp(files[j].path, ops[i].path))
				break;
		if (j == *files_nr) {
			files[j].path = ops[i].path;
			strbuf_init(&files[j].text, 0);
			(*files_nr)++;
			if (ops[i].old_text)
				error = read_blob(&files[j].text, repo, base, ops[i].path);
		}
		if (error)
			break;
		if (ops[i].old_text) {
			error = replace(&files[j].text, &ops[i]);
		} else {
			strbuf_reset(&files[j].text);
			strbuf_addstr(&files[j].text, ops[i].new_text);
		}
	}
	return error;
}

int sim_git_apply(git_oid *out_tree, git_repository *repo, const git_oid *tree,
		  const struct sim_op *ops, size_t ops_nr)
{
	struct pending *files = xcalloc(ops_nr ? ops_nr : 1, sizeof(*files));
	git_tree_update *updates = xcalloc(ops_nr ? ops_nr : 1, sizeof(*updates));
	git_tree *base = NULL;
	size_t files_nr = 0, i;
	int error;

	if (git_tree_lookup(&base, repo, tree) < 0) {
		error = merge_git_fail("sim: tree");
		goto done;
	}
	if ((error = apply_ops(files, &files_nr, repo, base, ops, ops_nr)) < 0)
		goto done;
	for (i = 0; i < files_nr; i++) {
		if (git_blob_create_from_buffer(&updates[i].id, repo, files[i].text.buf,
						files[i].text.len) < 0) {
			error = merge_git_fail("%s", files[i].path);
			goto done;
		}
		updates[i].action = GIT_TREE_UPDATE_UPSERT;
		updates[i].filemode = GIT_FILEMODE_BLOB;
		updates[i].path = files[i].path;
	}
	if (git_tree_create_updated(out_tree, repo, base, files_nr, updates) < 0)
		error = merge_git_fail("sim: tree update");
done:
	for (i = 0; i < files_nr; i++)
		strbuf_release(&files[i].text);
	free(files);
	free(updates);
	git_tree_free(base);
	return error;
}

int sim_git_commit(struct nb_oid *out, git_repository *repo,
		   const struct sim_commit_spec *spec)
{
	const char *const *parents = spec->parents;
	size_t parents_nr = spec->parents_nr;
	const struct sim_person *author = spec->author, *committer = spec->committer;
	git_signature *a = NULL, *c = NULL;
	git_tree *t = NULL;
	const git_commit *pc[2] = { NULL, NULL };
	git_commit *pv[2] = { NULL, NULL };
	git_oid oid;
	size_t i;
	int error = 0;

	if (parents_nr > 2)
		return nb_error_set(NB_EINVALID, "sim: too many parents");
	for (i = 0; i < parents_nr; i++) {
		if (merge_oid_parse_git(&oid, parents[i]) < 0 ||
		    git_commit_lookup(&pv[i], repo, &oid) < 0) {
			error = merge_git_fail("sim: parent");
			goto done;
		}
		pc[i] = pv[i];
	}
	if (git_signature_new(&a, author->name, author->email, spec->author_time, 0) < 0 ||
	    git_signature_new(&c, committer->name, committer->email, spec->commit_time, 0) < 0 ||
	    git_tree_lookup(&t, repo, spec->tree) < 0 ||
	    git_commit_create(&oid, repo, NULL, a, c, NULL, spec->message, t, parents_nr,
			      pc) < 0) {
		error = merge_git_fail("sim: commit");
		goto done;
	}
	merge_oid_from_git(out, &oid);
done:
	for (i = 0; i < 2; i++)
		git_commit_free(pv[i]);
	git_signature_free(a);
	git_signature_free(c);
	git_tree_free(t);
	return error;
}

int sim_git_set_ref(const char *repo_path, const char *ref, const char *hex)
{
	git_repository *repo = NULL;
	git_reference *r = NULL;
	git_oid oid;
	int error = 0;

	if (git_oid_fromstr(&oid, hex) < 0 || git_repository_open_bare(&repo, repo_path) < 0 ||
	    git_reference_create(&r, repo, ref, &oid, 1, "sim") < 0)
		error = merge_git_fail("%s", repo_path);
	git_reference_free(r);
	git_repository_free(repo);
	return error;
}

int sim_git_init_remote(const char *path, const char *store_objects, const char *head_branch)
{
	git_repository *repo = NULL;
	git_reference *head = NULL;
	char *alt = NULL, *ref = NULL, *line = NULL;
	int error = 0;

	if (git_repository_init(&repo, path, 1) < 0) {
		error = merge_git_fail("%s", path);
		goto done;
	}
	alt = xstrfmt("%s/objects/info/alternates", path);
	line = xstrfmt("%s\n", store_objects);
	if ((error = file_write_atomic(alt, line, strlen(line))) < 0)
		goto done;
	ref = xstrfmt("refs/heads/%s", head_branch);
	if (git_reference_symbolic_create(&head, repo, "HEAD", ref, 1, NULL) < 0)
		error = merge_git_fail("%s", path);
done:
	git_reference_free(head);
	git_repository_free(repo);
	free(alt);
	free(ref);
	free(line);
	return error;
}
