/* The bare work repository: creation, stale-lock cleanup, refs by name and hex. */
#include <dirent.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <git2.h>
#include <git2/sys/commit.h>
#include <git2/sys/midx.h>

#include "merge/git/repohandle_int.h"
#include "merge/git/commitgraph_int.h"
#include "merge/git/git_int.h"
#include "merge/repo/repo.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/strvec.h"
#include "util/strvec.h"
#include "util/xalloc.h"
#include "util/utf8.h"
#include "util/banned.h"

/* Removes *.lock files under `dir`, recursively (refs/ after a SIGKILL). */
static void clean_locks(struct strbuf *dir)
{
	DIR *d = opendir(dir->buf);
	struct dirent *de;
	size_t len = dir->len;

	if (!d)
		return;
	while ((de = readdir(d))) {
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		strbuf_addf(dir, "/%s", de->d_name);
		if (lstat(dir->buf, &st) == 0 && S_ISDIR(st.st_mode))
			clean_locks(dir);
		else if (str_ends_with(de->d_name, ".lock") && unlink(dir->buf) == 0)
			log_warn("removed stale lock %s", dir->buf);
		strbuf_setlen(dir, len);
	}
	closedir(d);
}

static void clean_stale(const char *path)
{
	static const char *const top[] = { "index.lock", "HEAD.lock", "packed-refs.lock",
					   "config.lock", "FETCH_HEAD.lock",
					   "objects/pack/multi-pack-index.lock",
					   "objects/info/commit-graph.lock" };
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	for (i = 0; i < sizeof(top) / sizeof(top[0]); i++) {
		strbuf_reset(&sb);
		strbuf_addf(&sb, "%s/%s", path, top[i]);
		if (unlink(sb.buf) == 0)
			log_warn("removed stale lock %s", sb.buf);
	}
	strbuf_reset(&sb);
	strbuf_addf(&sb, "%s/refs", path);
	clean_locks(&sb);
	strbuf_release(&sb);
}

/*
 * A pack whose index is bigger than this (about 280,000 objects: a clone's, or
 * gc's) stays out of the multi-pack-index: it is searched on its own, and the
 * index over the nightly small packs is rewritten cheaply (a kernel's 10 million
 * objects would cost 400 MB and seconds every night).
 */
#define SMALL_IDX_MAX ((off_t)8 << 20)

/*
 * The small .idx files of `pack_dir` into `names`; 1 when the multi-pack-index
 * is older than one of them (or missing), else 0.
 */
static int pack_indexes(struct strvec *names, const char *pack_dir)
{
	struct stat midx, st;
	struct strbuf path = STRBUF_INIT;
	DIR *d = opendir(pack_dir);
	struct dirent *de;
	int stale;

	strbuf_addf(&path, "%s/multi-pack-index", pack_dir);
	stale = stat(path.buf, &midx) < 0;
	while (d && (de = readdir(d))) {
		if (strncmp(de->d_name, "pack-", 5) || !str_ends_with(de->d_name, ".idx"))
			continue;
		strbuf_reset(&path);
		strbuf_addf(&path, "%s/%s", pack_dir, de->d_name);
		if (stat(path.buf, &st) < 0 || st.st_size > SMALL_IDX_MAX)
			continue;
		strvec_push(names, de->d_name);
		if (!stale &&
		    (st.st_mtim.tv_sec > midx.st_mtim.tv_sec ||
		     (st.st_mtim.tv_sec == midx.st_mtim.tv_sec &&
		      st.st_mtim.tv_nsec >= midx.st_mtim.tv_nsec)))
			stale = 1;
	}
	if (d)
		closedir(d);
	strbuf_release(&path);
	return stale;
}

int repo_index_packs(struct repo *repo)
{
	struct strvec names = STRVEC_INIT;
	char *pack_dir = xstrfmt("%s/objects/pack", repo_handle_path(repo));
	git_midx_writer *w = NULL;
	git_odb *odb = NULL;
	size_t i;

	if (!pack_indexes(&names, pack_dir) || names.nr < REPO_PACKS_FOR_MIDX)
		goto done;
	if (git_midx_writer_new(&w, pack_dir) < 0)
		goto fail;
	for (i = 0; i < names.nr; i++)
		if (git_midx_writer_add(w, names.v[i]) < 0)
			goto fail;
	if (git_midx_writer_commit(w) < 0 || git_repository_odb(&odb, repo_git(repo)) < 0 ||
	    git_odb_refresh(odb) < 0)
		goto fail;
	log_verbose("multi-pack-index written over %zu packs", names.nr);
	goto done;
fail:
	log_warn("%s: no multi-pack-index over its %zu packs (lookups stay slower): %s",
		 repo_handle_path(repo), names.nr, merge_git_error());
done:
	git_odb_free(odb);
	git_midx_writer_free(w);
	strvec_clear(&names);
	free(pack_dir);
	return 0;
}

int repo_write_commit_graph(struct repo *repo)
{
	int r = commitgraph_refresh(repo_git(repo), 0);

	if (r < 0)
		log_warn("%s: commit-graph not refreshed (walks stay slower): %s",
			 repo_handle_path(repo), nb_error_last());
	else
		log_verbose("commit-graph %s", r ? "written" : "up to date");
	return 0;
}

/* The bare repository at path, its commit-graph detached, into *out: 0 or NB_ERROR. */
static int open_bare_detached(struct repo **out, const char *path)
{
	git_repository *git = NULL;

	if (git_repository_open_bare(&git, path) < 0)
		return nb_error_set(NB_ERROR, "cannot open repository %s: %s", path,
				    merge_git_error());
	if (commitgraph_detach(git) < 0) {
		git_repository_free(git);
		return NB_ERROR;
	}
	*out = repo_handle_wrap(git, path);
	return 0;
}

int repo_open(struct repo **out, const char *path)
{
	git_repository *git = NULL;
	char *head;
	int fresh;

	*out = NULL;
	head = xstrfmt("%s/HEAD", path);
	fresh = !file_exists(head);
	free(head);
	/*
	 * A folder made ready for it (bot/state/workdir.c gives it the runner's group) is
	 * fine, and so is one a killed run left unfinished (no HEAD): its locks go before
	 * the init that finishes it, else libgit2's config.lock would stop every run after.
	 */
	clean_stale(path);
	if (fresh) {
		if (file_mkdir_p(path, 0700) < 0)
			return NB_ERROR;
		if (git_repository_init(&git, path, 1) < 0)
			return nb_error_set(NB_ERROR, "cannot create repository %s: %s", path,
					    merge_git_error());
		git_repository_free(git);
		git = NULL;
	}
	return open_bare_detached(out, path);
}

int repo_open_walker(struct repo **out, const char *path)
{
	git_repository *git = NULL;

	*out = NULL;
	if (git_repository_open_bare(&git, path) < 0)
		return nb_error_set(NB_ERROR, "cannot open repository %s: %s", path,
				    merge_git_error());
	*out = repo_handle_wrap(git, path);
	return 0;
}

int repo_open_readonly(struct repo **out, const char *path)
{
	*out = NULL;
	if (!file_is_dir(path))
		return nb_error_set(NB_ENOTFOUND, "no repository %s", path);
	return open_bare_detached(out, path);
}

void repo_free(struct repo *repo)
{
	repo_handle_free(repo);
}

const char *repo_gitdir(const struct repo *repo)
{
	return repo_handle_path(repo);
}

int repo_ref_get(struct repo *repo, const char *refname, struct nb_oid *out)
{
	git_object *obj = NULL;
	git_object *commit = NULL;
	int err;

	nb_oid_clear(out);
	err = git_revparse_single(&obj, repo_git(repo), refname);
	if (err == GIT_ENOTFOUND || err == GIT_EAMBIGUOUS || err == GIT_EINVALIDSPEC)
		return nb_error_set(NB_ENOTFOUND, "%s: not found", refname);
	if (err < 0)
		return nb_error_set(NB_ERROR, "%s: %s", refname, merge_git_error());
	err = git_object_peel(&commit, obj, GIT_OBJECT_COMMIT);
	git_object_free(obj);
	if (err < 0)
		return nb_error_set(NB_ENOTFOUND, "%s: not a commit", refname);
	merge_oid_from_git(out, git_object_id(commit));
	git_object_free(commit);
	return 0;
}

int repo_ref_set(struct repo *repo, const char *refname, const struct nb_oid *hex)
{
	git_reference *ref = NULL;
	git_oid id;
	int err;

	if (!hex) {
		err = git_reference_remove(repo_git(repo), refname);
		if (err < 0 && err != GIT_ENOTFOUND)
			return nb_error_set(NB_ERROR, "delete %s: %s", refname, merge_git_error());
		return 0;
	}
	if (merge_oid_to_git(&id, hex) < 0)
		return nb_error_set(NB_EINVALID, "%s: bad commit id '%s'", refname, hex->hex);
	if (git_reference_create(&ref, repo_git(repo), refname, &id, 1, "nextbot") < 0)
		return nb_error_set(NB_ERROR, "update %s: %s", refname, merge_git_error());
	git_reference_free(ref);
	return 0;
}

int repo_keep_commits(struct repo *repo, const char *refname, const struct nb_oid *ids,
		      size_t nr)
{
	git_oid *oids = xcalloc(nr ? nr : 1, sizeof(*oids)), tree, id, old;
	const git_oid **parents = xcalloc(nr ? nr : 1, sizeof(*parents));
	git_treebuilder *tb = NULL;
	git_signature *sig = NULL;
	git_reference *ref = NULL;
	size_t i, k, n = 0;
	int error = 0;

	for (i = 0; i < nr; i++) {
		if (nb_oid_is_null(&ids[i]) || merge_oid_to_git(&oids[n], &ids[i]) < 0)
			continue;
		for (k = 0; k < n && !git_oid_equal(&oids[k], &oids[n]); k++)
			;
		if (k == n)
			parents[n] = &oids[n], n++;
	}
	if (git_treebuilder_new(&tb, repo_git(repo), NULL) < 0 ||
	    git_treebuilder_write(&tree, tb) < 0 ||
	    git_signature_new(&sig, "nextbot", "nextbot@localhost", 0, 0) < 0 ||
	    git_commit_create_from_ids(&id, repo_git(repo), NULL, sig, sig, NULL,
				       "nextbot: commits kept from gc\n", &tree, n,
				       parents) < 0) {
		error = nb_error_set(NB_ERROR, "%s: %s", refname, merge_git_error());
		goto done;
	}
	if (git_reference_name_to_id(&old, repo_git(repo), refname) == 0 &&
	    git_oid_equal(&old, &id))
		goto done;
	if (git_reference_create(&ref, repo_git(repo), refname, &id, 1, "nextbot") < 0)
		error = nb_error_set(NB_ERROR, "update %s: %s", refname, merge_git_error());
done:
	git_reference_free(ref);
	git_signature_free(sig);
	git_treebuilder_free(tb);
	free(parents);
	free(oids);
	return error;
}

int repo_good_get(struct repo *repo, const char *tree, struct nb_oid *out)
{
	char *name = xstrfmt("refs/nextbot/good/%s", tree);
	int err = repo_ref_get(repo, name, out);

	free(name);
	return err;
}

int repo_good_set(struct repo *repo, const char *tree, const struct nb_oid *hex)
{
	char *name = xstrfmt("refs/nextbot/good/%s", tree);
	int err = repo_ref_set(repo, name, hex);

	free(name);
	return err;
}

char *repo_commit_subject(struct repo *repo, const struct nb_oid *commit)
{
	git_commit *c = NULL;
	const char *msg;
	git_oid id;
	char *s;

	struct strbuf sb = STRBUF_INIT;

	if (git_oid_fromstr(&id, commit->hex) < 0 || git_commit_lookup(&c, repo_git(repo), &id) < 0)
		return xstrdup("");
	/* the first line, as merge.log shows it: valid UTF-8, no escape sequence */
	msg = git_commit_message(c);
	utf8_from_charset(&sb, msg, strcspn(msg, "\n"), git_commit_message_encoding(c));
	utf8_strip_controls(&sb);
	git_commit_free(c);
	s = strbuf_detach(&sb, NULL);
	return s;
}

int repo_read_path(struct strbuf *out, struct repo *repo, const char *refname,
		    const char *path, size_t max)
{
	git_object *obj = NULL;
	git_commit *c = NULL;
	git_tree *tree = NULL;
	git_tree_entry *e = NULL;
	git_blob *blob = NULL;
	int err = 0;
	size_t len;

	if (git_revparse_single(&obj, repo_git(repo), refname) < 0 ||
	    git_object_peel((git_object **)&c, obj, GIT_OBJECT_COMMIT) < 0) {
		err = nb_error_set(NB_ENOTFOUND, "%s: no such commit", refname);
		goto done;
	}
	if (git_commit_tree(&tree, c) < 0 || git_tree_entry_bypath(&e, tree, path) < 0 ||
	    git_tree_entry_type(e) != GIT_OBJECT_BLOB ||
	    git_blob_lookup(&blob, repo_git(repo), git_tree_entry_id(e)) < 0) {
		err = nb_error_set(NB_ENOTFOUND, "%s:%s: no such file", refname, path);
		goto done;
	}
	len = (size_t)git_blob_rawsize(blob);
	strbuf_add(out, git_blob_rawcontent(blob), len < max ? len : max);
done:
	git_blob_free(blob);
	git_tree_entry_free(e);
	git_tree_free(tree);
	git_commit_free(c);
	git_object_free(obj);
	return err;
}

void repo_alternates(struct strvec *out, const char *gitdir, size_t max)
{
	struct strbuf sb = STRBUF_INIT;
	char *path = xstrfmt("%s/objects/info/alternates", gitdir), *line, *next;

	if (strbuf_read_file(&sb, path, 64 * 1024) == 0) {
		for (line = sb.buf; line && *line && out->nr < max; line = next) {
			next = strchr(line, '\n');
			if (next)
				*next++ = '\0';
			if (!*line || *line == '#')
				continue;
			if (*line == '/')
				strvec_push(out, line);
			else
				strvec_pushf(out, "%s/objects/%s", gitdir, line);
		}
	}
	free(path);
	strbuf_release(&sb);
}
