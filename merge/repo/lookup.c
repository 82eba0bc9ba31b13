/* Walks a tree's new commits and matches patches by commit, patch-id or Message-ID. */
#include <git2.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "merge/git/repohandle_int.h"
#include "merge/repo/commitinfo_int.h"
#include "merge/git/git_int.h"
#include "merge/git/mergebase_int.h"
#include "merge/repo/repo.h"
#include "merge/git/patchid_int.h"
#include "merge/repo/trailer_int.h"
#include "util/error.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* The URL of the Link: trailer that names the patch's Message-ID, or NULL. */
static char *patch_link(const struct commit_info *ci)
{
	const char *p = ci->body;
	char *found = NULL;

	while (ci->message_id && p && *p) {
		size_t n = strcspn(p, "\n");

		if (n > 5 && !strncasecmp(p, "Link:", 5)) {
			char *value = xstrndup(p + 5, n - 5), *v = value, *id;
			size_t len;

			while (*v == ' ' || *v == '\t')
				v++;
			len = strlen(v);
			while (len && (v[len - 1] == ' ' || v[len - 1] == '\t'))
				v[--len] = '\0';
			id = trailer_msgid_from_value(v);
			if (id && !strcmp(id, ci->message_id) &&
			    (!strncmp(v, "https://", 8) || !strncmp(v, "http://", 7)) &&
			    !strpbrk(v, " \t<>\"")) {
				free(found);
				found = xstrdup(v);
			}
			free(id);
			free(value);
		}
		p += n + (p[n] == '\n');
	}
	return found;
}

static void fill(struct lookup_patch *p, const struct commit_info *ci, const char *tree)
{
	memset(p, 0, sizeof(*p));
	p->tree = xstrdup(tree ? tree : "");
	p->commit = ci->id;
	p->patch_id = ci->patch_id;
	p->message_id = ci->message_id ? xstrdup(ci->message_id) : NULL;
	p->subject = xstrdup(ci->subject ? ci->subject : "");
	p->author_name = xstrdup(ci->author_name ? ci->author_name : "");
	p->author_email = xstrdup(ci->author_email ? ci->author_email : "");
	p->has_author_signoff = ci->has_author_signoff;
	p->author_time = ci->author_time;
	p->link = patch_link(ci);
	p->body = xstrdup(ci->body ? ci->body : "");
}

static int push_patch(struct lookup_patches *out, git_repository *git, const char *tree,
			const git_oid *id)
{
	struct commit_info ci = COMMIT_INFO_INIT;
	int error;

	if ((error = commitinfo_read(&ci, git, id)) < 0)
		return error;
	if (ci.parents_nr == 1) {
		ALLOC_GROW(out->items, out->nr + 1, out->alloc);
		fill(&out->items[out->nr++], &ci, tree);
	}
	commitinfo_release(&ci);
	return 0;
}

int lookup_commit_meta(struct lookup_patch *out, struct repo *repo, const char *tree,
		       const struct nb_oid *commit)
{
	struct commit_info ci = COMMIT_INFO_INIT;
	git_oid id;
	int error;

	memset(out, 0, sizeof(*out));
	if ((error = merge_oid_to_git(&id, commit)) < 0 ||
	    (error = commitinfo_read_meta(&ci, repo_git(repo), &id)) < 0)
		return error;
	fill(out, &ci, tree);
	commitinfo_release(&ci);
	return 0;
}

int lookup_patch_id(struct nb_patchid *out, struct repo *repo, const struct nb_oid *commit)
{
	git_oid id;
	int error;

	*out = (struct nb_patchid)NB_PATCHID_NONE;
	if ((error = merge_oid_to_git(&id, commit)) < 0)
		return error;
	if ((error = merge_patch_id_oid(out, repo_git(repo), &id)) == NB_ENOTFOUND) {
		git_commit *c = NULL;

		/* a merge, a root or a binary change: no patch-id, and no error */
		if (git_commit_lookup(&c, repo_git(repo), &id) == 0) {
			git_commit_free(c);
			nb_error_clear();
			error = 0;
		}
	}
	return error;
}

int lookup_commit(struct lookup_patch *out, struct repo *repo, const char *tree,
		  const struct nb_oid *commit)
{
	struct commit_info ci = COMMIT_INFO_INIT;
	git_oid id;
	int error;

	memset(out, 0, sizeof(*out));
	if (git_oid_fromstr(&id, commit->hex) < 0)
		return nb_error_set(NB_EINVALID, "'%s' is not a commit id", commit->hex);
	if ((error = commitinfo_read(&ci, repo_git(repo), &id)) < 0)
		return error;
	fill(out, &ci, tree);
	commitinfo_release(&ci);
	return 0;
}

int lookup_new_patches(struct lookup_patches *out, struct repo *repo, const char *tree,
		       const char *tip, const char *upto, size_t max)
{
	git_repository *git = repo_git(repo);
	git_revwalk *walk = NULL;
	git_oid id;
	size_t seen = 0;
	int error;

	if (!max)
		max = 100000;
	if ((error = git_revwalk_new(&walk, git)) < 0 ||
	    (error = git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE)) < 0 ||
	    (error = git_oid_fromstr(&id, tip)) < 0 || (error = git_revwalk_push(walk, &id)) < 0)
		goto git_fail;
	if (upto && ((error = git_oid_fromstr(&id, upto)) < 0 ||
		     (error = git_revwalk_hide(walk, &id)) < 0))
		goto git_fail;
	while (seen < max && !(error = git_revwalk_next(&id, walk))) {
		if ((error = push_patch(out, git, tree, &id)) < 0)
			goto done;
		seen++;
	}
	if (error == GIT_ITEROVER || seen == max)
		error = 0;
	else
		goto git_fail;
	goto done;
git_fail:
	error = nb_error_set(NB_ERROR, "tree %s: cannot list its commits: %s", tree,
			     merge_git_error());
done:
	git_revwalk_free(walk);
	return error;
}

int lookup_commit_ids(struct nb_oid **out, size_t *nr, struct repo *repo, const char *what,
		      const struct nb_oid *tip, const struct nb_oid *upto, size_t max)
{
	git_repository *git = repo_git(repo);
	git_revwalk *walk = NULL;
	git_oid id;
	size_t alloc = 0;
	int error = 0;

	*out = NULL;
	*nr = 0;
	if (!max)
		max = 100000;
	if (git_revwalk_new(&walk, git) < 0 ||
	    git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE) < 0 ||
	    merge_oid_to_git(&id, tip) < 0 || git_revwalk_push(walk, &id) < 0 ||
	    (upto && !nb_oid_is_null(upto) &&
	     (merge_oid_to_git(&id, upto) < 0 || git_revwalk_hide(walk, &id) < 0)))
		goto fail;
	while (*nr < max && !(error = git_revwalk_next(&id, walk))) {
		git_commit *c = NULL;
		int merge;

		if (git_commit_lookup(&c, git, &id) < 0)
			goto fail;
		merge = git_commit_parentcount(c) > 1;
		git_commit_free(c);
		if (merge)
			continue;
		ALLOC_GROW(*out, *nr + 1, alloc);
		merge_oid_from_git(&(*out)[(*nr)++], &id);
	}
	if (*nr < max && error != GIT_ITEROVER)
		goto fail;
	git_revwalk_free(walk);
	return 0;
fail:
	git_revwalk_free(walk);
	free(*out);
	*out = NULL;
	*nr = 0;
	return nb_error_set(NB_ERROR, "%s: cannot list its commits: %s", what, merge_git_error());
}

static int hex_prefix(const char *full, const char *id, size_t len)
{
	return len >= 4 && full[0] && !strncasecmp(full, id, len);
}

static int msgid_equal(const char *msgid, const char *id)
{
	size_t len = strlen(id);

	if (!msgid)
		return 0;
	if (len > 2 && id[0] == '<' && id[len - 1] == '>')
		return strlen(msgid) == len - 2 && !strncmp(msgid, id + 1, len - 2);
	return !strcmp(msgid, id);
}

long lookup_patch_find(const struct lookup_patches *pool, const char *id)
{
	size_t i, len = strlen(id);
	long found = -1;

	for (i = 0; i < pool->nr; i++) {
		const struct lookup_patch *p = &pool->items[i];

		if (!hex_prefix(p->commit.hex, id, len) &&
		    !(len >= 4 && nb_patchid_has_prefix(&p->patch_id, id, len)) &&
		    !msgid_equal(p->message_id, id))
			continue;
		/* the same patch in two trees, or twice in one listing, is still one patch */
		if (found >= 0 && strcmp(pool->items[found].commit.hex, p->commit.hex) &&
		    !nb_patchid_eq(&pool->items[found].patch_id, &p->patch_id)) {
			nb_error_set(NB_EINVALID, "'%s' names more than one patch; give more", id);
			return -2;
		}
		if (found < 0)
			found = (long)i;
	}
	if (found < 0)
		nb_error_set(NB_ENOTFOUND, "no patch in the trees matches '%s'", id);
	return found;
}

void lookup_patch_release(struct lookup_patch *p)
{
	free(p->tree);
	free(p->message_id);
	free(p->subject);
	free(p->author_name);
	free(p->author_email);
	free(p->link);
	free(p->body);
}

void lookup_patches_release(struct lookup_patches *list)
{
	size_t i;

	for (i = 0; i < list->nr; i++)
		lookup_patch_release(&list->items[i]);
	free(list->items);
	list->items = NULL;
	list->nr = list->alloc = 0;
}

int lookup_contains_any(struct repo *repo, const struct nb_oid *commits, size_t n,
			const struct nb_oid *ancestor)
{
	git_oid *c = n ? xcalloc(n, sizeof(*c)) : NULL, a;
	size_t i;
	int r = 0;

	if (merge_oid_to_git(&a, ancestor) < 0)
		r = NB_EINVALID;
	for (i = 0; i < n && r == 0; i++) {
		if (merge_oid_to_git(&c[i], &commits[i]) < 0)
			r = NB_EINVALID;
		else if (git_oid_equal(&c[i], &a))
			r = 1;
	}
	if (r == 0 && n) {
		/* the commit-graph's levels bound the walk to what is newer than `a` */
		r = mbgraph_reachable(repo_graph(repo), &a, c, n);
		if (r < 0)
			nb_error_prefix("is %.12s in any of %zu commits: ", ancestor->hex, n);
	}
	free(c);
	return r;
}

int lookup_contains(struct repo *repo, const struct nb_oid *commit,
		    const struct nb_oid *ancestor)
{
	return lookup_contains_any(repo, commit, 1, ancestor);
}
