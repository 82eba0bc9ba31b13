/* History as activity: each commit's people and changed paths, over a window of time. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <git2.h>

#include "merge/repo/repo.h"
#include "merge/git/git_int.h"
#include "merge/git/repohandle_int.h"
#include "merge/git/treediff_int.h"
#include "util/error.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

static int tree_of(git_tree **out, git_repository *git, const char *rev)
{
	git_object *obj = NULL;
	git_commit *c = NULL;
	int error = 0;

	if (git_revparse_single(&obj, git, rev) < 0 ||
	    git_object_peel((git_object **)&c, obj, GIT_OBJECT_COMMIT) < 0)
		error = nb_error_set(NB_ENOTFOUND, "%s: no such commit", rev);
	else if (git_commit_tree(out, c) < 0)
		error = merge_git_fail("%s: its tree", rev);
	git_commit_free(c);
	git_object_free(obj);
	return error;
}

static int add_file(const char *root, const git_tree_entry *e, void *payload)
{
	struct strvec *out = payload;

	if (git_tree_entry_type(e) != GIT_OBJECT_TREE)
		strvec_pushf(out, "%s%s", root, git_tree_entry_name(e));
	return 0;
}

int activity_tree_files(struct strvec *out, struct repo *repo, const char *rev)
{
	git_tree *tree = NULL;
	int error;

	if ((error = tree_of(&tree, repo_git(repo), rev)) < 0)
		return error;
	if (git_tree_walk(tree, GIT_TREEWALK_PRE, add_file, out) < 0)
		error = merge_git_fail("%s: listing its files", rev);
	git_tree_free(tree);
	return error;
}

int activity_commit_time(long long *out, struct repo *repo, const char *rev)
{
	git_object *obj = NULL;
	git_commit *c = NULL;
	int error = 0;

	if (git_revparse_single(&obj, repo_git(repo), rev) < 0 ||
	    git_object_peel((git_object **)&c, obj, GIT_OBJECT_COMMIT) < 0)
		error = nb_error_set(NB_ENOTFOUND, "%s: no such commit", rev);
	else
		*out = (long long)git_commit_time(c);
	git_commit_free(c);
	git_object_free(obj);
	return error;
}

int activity_commit_message(struct strbuf *out, struct repo *repo, const struct nb_oid *commit,
			    size_t max)
{
	git_commit *c = NULL;
	git_oid id;
	const char *msg;
	int error;

	if ((error = merge_oid_to_git(&id, commit)) < 0)
		return error;
	if (git_commit_lookup(&c, repo_git(repo), &id) < 0)
		return nb_error_set(NB_ENOTFOUND, "%s: no such commit", commit->hex);
	msg = git_commit_message_raw(c);
	strbuf_add(out, msg, strlen(msg) < max ? strlen(msg) : max);
	git_commit_free(c);
	return 0;
}

int activity_commit_paths(struct strvec *out, struct repo *repo, const struct nb_oid *commit)
{
	git_repository *git = repo_git(repo);
	git_commit *c = NULL, *parent = NULL;
	git_oid id;
	int error;

	if ((error = merge_oid_to_git(&id, commit)) < 0)
		return error;
	if (git_commit_lookup(&c, git, &id) < 0)
		return nb_error_set(NB_ENOTFOUND, "%s: no such commit", commit->hex);
	if (git_commit_parentcount(c) && git_commit_parent(&parent, c, 0) < 0)
		error = merge_git_fail("the parent of %s", commit->hex);
	else if (treediff_paths(out, git, parent ? git_commit_tree_id(parent) : NULL,
				git_commit_tree_id(c)) < 0)
		error = merge_git_fail("the files %s changed", commit->hex);
	git_commit_free(parent);
	git_commit_free(c);
	return error;
}

struct lines_read {
	struct strvec *out;
	size_t bytes, nr;
};

static int add_changed_line(const git_diff_delta *d, const git_diff_hunk *h,
			    const git_diff_line *l, void *payload)
{
	struct lines_read *lr = payload;
	size_t len = l->content_len;

	(void)d;
	(void)h;
	if (l->origin != GIT_DIFF_LINE_ADDITION && l->origin != GIT_DIFF_LINE_DELETION)
		return 0;
	if (lr->nr >= ACTIVITY_LINES_MAX || lr->bytes + len > ACTIVITY_LINES_MAX_BYTES)
		return 1; /* enough: the rest is not read */
	if (len && l->content[len - 1] == '\n')
		len--;
	strvec_push_nodup(lr->out, xstrfmt("%c%.*s", l->origin, (int)len, l->content));
	lr->bytes += len + 1;
	lr->nr++;
	return 0;
}

int activity_commit_lines(struct strvec *out, struct repo *repo, const struct nb_oid *commit)
{
	git_repository *git = repo_git(repo);
	git_commit *c = NULL, *parent = NULL;
	git_tree *a = NULL, *b = NULL;
	git_diff *diff = NULL;
	git_diff_options opts;
	struct lines_read lr = { .out = out };
	git_oid id;
	int error, rc;

	if ((error = merge_oid_to_git(&id, commit)) < 0)
		return error;
	if (git_commit_lookup(&c, git, &id) < 0)
		return nb_error_set(NB_ENOTFOUND, "%s: no such commit", commit->hex);
	git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	opts.context_lines = 0;
	opts.max_size = (git_off_t)ACTIVITY_LINES_MAX_BLOB; /* larger: taken as binary */
	if ((git_commit_parentcount(c) && git_commit_parent(&parent, c, 0) < 0) ||
	    (parent && git_commit_tree(&a, parent) < 0) || git_commit_tree(&b, c) < 0 ||
	    treediff_new(&diff, git, a, b, &opts) < 0) {
		error = merge_git_fail("the patch of %s", commit->hex);
		goto done;
	}
	rc = git_diff_foreach(diff, NULL, NULL, NULL, add_changed_line, &lr);
	if (rc < 0)
		error = merge_git_fail("the lines %s changed", commit->hex);
done:
	git_diff_free(diff);
	git_tree_free(a);
	git_tree_free(b);
	git_commit_free(parent);
	git_commit_free(c);
	return error;
}

/* ---- the walk ------------------------------------------------------------------ */

struct activity_scratch {
	struct activity_person *people;
	size_t nr, alloc;
	struct strvec names, emails, paths;
};

static void person_add(struct activity_scratch *s, enum activity_how how, const char *name,
		       size_t name_len, const char *email, size_t email_len)
{
	if (s->nr == s->alloc) {
		s->alloc = s->alloc ? 2 * s->alloc : 8;
		s->people = xrealloc(s->people, s->alloc * sizeof(*s->people));
	}
	s->people[s->nr].how = how;
	s->people[s->nr].name = NULL;
	if (name_len) {
		strvec_push_nodup(&s->names, xstrndup(name, name_len));
		s->people[s->nr].name = s->names.v[s->names.nr - 1];
	}
	strvec_push_nodup(&s->emails, xstrndup(email, email_len));
	s->people[s->nr].email = s->emails.v[s->emails.nr - 1];
	s->nr++;
}

/* "Name <a@b>" or "a@b" of one trailer value (up to `end`). */
static void trailer_person(struct activity_scratch *s, enum activity_how how, const char *v,
			   const char *end)
{
	const char *lt = memchr(v, '<', (size_t)(end - v)), *gt, *ne;

	while (v < end && isspace((unsigned char)*v))
		v++;
	while (end > v && isspace((unsigned char)end[-1]))
		end--;
	if (!lt) {
		if (memchr(v, '@', (size_t)(end - v)))
			person_add(s, how, NULL, 0, v, (size_t)(end - v));
		return;
	}
	gt = memchr(lt, '>', (size_t)(end - lt));
	if (!gt || gt == lt + 1)
		return;
	ne = lt;
	while (ne > v && isspace((unsigned char)ne[-1]))
		ne--;
	person_add(s, how, v, (size_t)(ne - v), lt + 1, (size_t)(gt - lt - 1));
}

static void trailers(struct activity_scratch *s, const char *msg)
{
	static const struct {
		const char *key;
		enum activity_how how;
	} keys[] = {
		{ "Signed-off-by:", ACTIVITY_SIGNED_OFF }, { "Reviewed-by:", ACTIVITY_REVIEWED },
		{ "Acked-by:", ACTIVITY_ACKED },	   { "Tested-by:", ACTIVITY_TESTED },
	};
	const char *line = msg;
	size_t i;

	while (line && *line) {
		const char *end = strchr(line, '\n');

		if (!end)
			end = line + strlen(line);
		for (i = 0; i < sizeof(keys) / sizeof(*keys); i++)
			if (!strncasecmp(line, keys[i].key, strlen(keys[i].key))) {
				trailer_person(s, keys[i].how, line + strlen(keys[i].key), end);
				break;
			}
		line = *end ? end + 1 : NULL;
	}
}

static void scratch_reset(struct activity_scratch *s)
{
	s->nr = 0;
	strvec_clear(&s->names);
	strvec_clear(&s->emails);
	strvec_clear(&s->paths);
}

/* One commit inside the window: its paths against its parent, its people. */
static int visit(git_repository *git, git_commit *c, struct activity_scratch *s,
		 int (*fn)(void *ctx, const struct activity_commit *c), void *ctx)
{
	const git_signature *a = git_commit_author(c);
	struct activity_commit ac = { .when = git_commit_time(c) };
	git_commit *parent = NULL;
	int error;

	scratch_reset(s);
	if (git_commit_parentcount(c) == 1 && git_commit_parent(&parent, c, 0) < 0)
		return merge_git_fail("history: the parent of a commit");
	error = treediff_paths(&s->paths, git, parent ? git_commit_tree_id(parent) : NULL,
			       git_commit_tree_id(c));
	git_commit_free(parent);
	if (error < 0)
		return merge_git_fail("history: the paths a commit changed");
	person_add(s, ACTIVITY_AUTHOR, a->name, strlen(a->name), a->email, strlen(a->email));
	trailers(s, git_commit_message(c));
	merge_oid_from_git(&ac.id, git_commit_id(c));
	ac.people = s->people;
	ac.people_nr = s->nr;
	ac.paths = (const char *const *)s->paths.v;
	ac.paths_nr = s->paths.nr;
	return fn(ctx, &ac);
}

static int walk_from(git_repository *git, const char *rev, long long since,
		     int (*fn)(void *ctx, const struct activity_commit *c), void *ctx)
{
	struct activity_scratch s = { NULL, 0, 0, STRVEC_INIT, STRVEC_INIT, STRVEC_INIT };
	git_revwalk *walk = NULL;
	git_object *obj = NULL;
	git_oid id;
	int error = 0;

	if (git_revparse_single(&obj, git, rev) < 0) {
		error = nb_error_set(NB_ENOTFOUND, "%s: no such commit", rev);
		goto done;
	}
	if (git_revwalk_new(&walk, git) < 0 || git_revwalk_sorting(walk, GIT_SORT_TIME) < 0 ||
	    git_revwalk_push(walk, git_object_id(obj)) < 0) {
		error = merge_git_fail("history of %s", rev);
		goto done;
	}
	while (!error && git_revwalk_next(&id, walk) == 0) {
		git_commit *c = NULL;

		if (git_commit_lookup(&c, git, &id) < 0) {
			error = merge_git_fail("history of %s: a commit", rev);
			break;
		}
		if (git_commit_time(c) < since) {
			git_commit_free(c);
			break; /* the walk is by date: every later one is older still */
		}
		if (git_commit_parentcount(c) <= 1)
			error = visit(git, c, &s, fn, ctx);
		git_commit_free(c);
	}
done:
	scratch_reset(&s);
	free(s.people);
	git_revwalk_free(walk);
	git_object_free(obj);
	return error;
}

int activity_walk(struct repo *repo, const char *rev, long long since,
		  int (*fn)(void *ctx, const struct activity_commit *c), void *ctx)
{
	struct repo *walker = NULL;
	int error;

	/* repo's own handle does not read the commit-graph (merge/git/commitgraph_int.h) */
	if ((error = repo_open_walker(&walker, repo_gitdir(repo))) < 0)
		return error;
	error = walk_from(repo_git(walker), rev, since, fn, ctx);
	repo_free(walker);
	return error;
}
