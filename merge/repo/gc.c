/* Repacking the work repository: git gc where git is installed, else libgit2's pack builder. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <git2.h>

#include "merge/git/commitgraph_int.h"
#include "merge/repo/repo.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/log.h"
#include "util/runcmd.h"
#include "util/strbuf.h"
#include "util/strvec.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define GC_TIMEOUT (4 * 3600.0)

int gc_have_git(void)
{
	const char *path = getenv("PATH");
	int found = 0;

	while (path && *path && !found) {
		size_t l = strcspn(path, ":");
		char *exe = xstrfmt("%.*s/git", (int)l, l ? path : ".");

		found = access(exe, X_OK) == 0;
		free(exe);
		path += l + (path[l] == ':');
	}
	return found;
}

static int is_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!s[i] || !strchr("0123456789abcdef", s[i]))
			return 0;
	return s[n] == '\0';
}

/* Calls fn(path) for every loose object file; returns how many there are. */
static size_t loose_each(const char *repo_path, int (*fn)(const char *path))
{
	char *objects = xstrfmt("%s/objects", repo_path);
	DIR *top = opendir(objects), *sub;
	struct dirent *de, *fe;
	size_t n = 0;

	while (top && (de = readdir(top))) {
		char *d;

		if (!is_hex(de->d_name, 2))
			continue;
		d = xstrfmt("%s/%s", objects, de->d_name);
		if ((sub = opendir(d))) {
			while ((fe = readdir(sub))) {
				char *f;

				if (!is_hex(fe->d_name, 38))
					continue;
				n++;
				f = xstrfmt("%s/%s", d, fe->d_name);
				if (fn)
					fn(f);
				free(f);
			}
			closedir(sub);
		}
		if (fn)
			rmdir(d);   /* only when emptied */
		free(d);
	}
	if (top)
		closedir(top);
	free(objects);
	return n;
}

size_t gc_count_loose(const char *repo_path)
{
	return loose_each(repo_path, NULL);
}

/* Pack files in objects/pack; with `keep` set, removes every pack but "<keep>.*". */
static size_t packs(const char *repo_path, const char *keep)
{
	char *dir = xstrfmt("%s/objects/pack", repo_path);
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	while (d && (de = readdir(d))) {
		char *base, *keepfile, *f;

		if (strncmp(de->d_name, "pack-", 5) || !strchr(de->d_name, '.'))
			continue;
		base = xstrndup(de->d_name, strcspn(de->d_name, "."));
		keepfile = xstrfmt("%s/%s.keep", dir, base);
		if (!keep || !strcmp(base, keep) || file_exists(keepfile)) {
			n += str_ends_with(de->d_name, ".pack");
		} else {
			f = xstrfmt("%s/%s", dir, de->d_name);
			unlink(f);
			free(f);
		}
		free(base);
		free(keepfile);
	}
	if (d)
		closedir(d);
	free(dir);
	return n;
}

static int git_gc(const char *repo_path)
{
	const char *argv[] = { "git", "--git-dir", repo_path, "gc", "--prune=now", "--quiet",
			       NULL };
	struct runcmd_opts opts = RUNCMD_OPTS_INIT;
	struct runcmd_result res = RUNCMD_RESULT_INIT;
	int err;

	opts.argv = argv;
	opts.inherit_env = 1;
	opts.timeout = GC_TIMEOUT;
	err = runcmd_run(&res, &opts);
	if (!err && res.exit_code != 0)
		err = nb_error_set(NB_ERROR, "git gc exited %d: %.300s", res.exit_code,
				   res.output.buf);
	runcmd_result_release(&res);
	return err;
}

/* Puts every object reachable from a ref into the pack builder. */
static int insert_refs(git_packbuilder *pb, git_repository *git)
{
	git_reference_iterator *it = NULL;
	git_reference *ref;
	git_revwalk *walk = NULL;
	int err = 0, rc;

	if (git_revwalk_new(&walk, git) < 0 || git_reference_iterator_new(&it, git) < 0)
		err = -1;
	while (!err && (rc = git_reference_next(&ref, it)) == 0) {
		git_reference *res = NULL;
		git_object *obj = NULL, *peeled = NULL;

		if (git_reference_resolve(&res, ref) < 0 ||
		    git_object_lookup(&obj, git, git_reference_target(res), GIT_OBJECT_ANY) < 0)
			err = -1;
		else if (git_object_type(obj) != GIT_OBJECT_COMMIT &&
			 git_packbuilder_insert_recur(pb, git_object_id(obj), NULL) < 0)
			err = -1;
		else if (git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT) == 0 &&
			 git_revwalk_push(walk, git_object_id(peeled)) < 0)
			err = -1;
		git_object_free(peeled);
		git_object_free(obj);
		git_reference_free(res);
		git_reference_free(ref);
	}
	if (!err && git_packbuilder_insert_walk(pb, walk) < 0)
		err = -1;
	git_reference_iterator_free(it);
	git_revwalk_free(walk);
	return err < 0 ? nb_error_set(NB_ERROR, "packing: %s", merge_git_error()) : 0;
}

static int unlink_path(const char *path)
{
	return unlink(path);
}

static int libgit2_repack(const char *repo_path)
{
	git_repository *git = NULL;
	git_packbuilder *pb = NULL;
	char *name = NULL;
	int err = 0;

	if (git_repository_open_bare(&git, repo_path) < 0 || git_packbuilder_new(&pb, git) < 0) {
		err = nb_error_set(NB_ERROR, "%s: %s", repo_path, merge_git_error());
		goto done;
	}
	if ((err = insert_refs(pb, git)) < 0 || !git_packbuilder_object_count(pb))
		goto done;
	if (git_packbuilder_write(pb, NULL, 0, NULL, NULL) < 0) {
		err = nb_error_set(NB_ERROR, "writing the pack: %s", merge_git_error());
		goto done;
	}
	name = xstrfmt("pack-%s", git_packbuilder_name(pb));
	packs(repo_path, name);
	loose_each(repo_path, unlink_path);
done:
	free(name);
	git_packbuilder_free(pb);
	git_repository_free(git);
	return err;
}

/*
 * A repack may prune commits an old commit-graph still names (git then reports it
 * corrupt): it is written again over what the refs reach, or removed.
 */
static void graph_rewrite(const char *repo_path)
{
	git_repository *git = NULL;

	if (git_repository_open_bare(&git, repo_path) < 0 ||
	    commitgraph_refresh(git, 1) < 0) {
		log_warn("%s: commit-graph removed, the next night writes it: %s", repo_path,
			 git ? nb_error_last() : merge_git_error());
		commitgraph_remove(repo_path);
	}
	git_repository_free(git);
}

int gc_repack(struct gc_result *out, const char *repo_path, int force_libgit2)
{
	int err = NB_ERROR;

	memset(out, 0, sizeof(*out));
	out->loose_before = gc_count_loose(repo_path);
	if (!force_libgit2 && gc_have_git()) {
		out->how = "git gc --prune=now";
		if ((err = git_gc(repo_path)) < 0)
			log_warn("%s; packing with libgit2 instead", nb_error_last());
	}
	if (err < 0) {
		out->how = "libgit2 pack builder";
		err = libgit2_repack(repo_path);
	}
	if (err == 0) {
		/* over the packs just removed: the next fetch writes a new one if needed */
		char *midx = xstrfmt("%s/objects/pack/multi-pack-index", repo_path);

		unlink(midx);
		free(midx);
		graph_rewrite(repo_path);
	}
	out->loose_after = gc_count_loose(repo_path);
	out->packs_after = packs(repo_path, NULL);
	return err;
}

/* "next-YYYYMMDD" -> "YYYY-MM-DD" into out; 0 if `name` is not a night tag. */
static int tag_date(char out[11], const char *name)
{
	size_t i;

	if (strncmp(name, "refs/tags/next-", 15) || strlen(name) != 23)
		return 0;
	for (i = 15; i < 23; i++)
		if (name[i] < '0' || name[i] > '9')
			return 0;
	memcpy(out, name + 15, 4);
	out[4] = '-';
	memcpy(out + 5, name + 19, 2);
	out[7] = '-';
	memcpy(out + 8, name + 21, 2);
	out[10] = '\0';
	return 1;
}

int gc_drop_night_tags(const char *repo_path, const char *before, size_t *removed)
{
	git_repository *git = NULL;
	git_reference_iterator *it = NULL;
	git_reference *ref;
	struct strvec names = STRVEC_INIT;
	char date[11];
	size_t i;
	int err = 0;

	*removed = 0;
	if (git_repository_open_bare(&git, repo_path) < 0 ||
	    git_reference_iterator_glob_new(&it, git, "refs/tags/next-*") < 0) {
		err = nb_error_set(NB_ERROR, "%s: %s", repo_path, merge_git_error());
		goto done;
	}
	while (git_reference_next(&ref, it) == 0) {
		if (tag_date(date, git_reference_name(ref)) && strcmp(date, before) < 0)
			strvec_push(&names, git_reference_name(ref));
		git_reference_free(ref);
	}
	for (i = 0; i < names.nr; i++) {
		if (git_reference_remove(git, names.v[i]) < 0)
			err = nb_error_set(NB_ERROR, "%s: %s", names.v[i], merge_git_error());
		else
			(*removed)++;
	}
done:
	strvec_clear(&names);
	git_reference_iterator_free(it);
	git_repository_free(git);
	return err;
}
