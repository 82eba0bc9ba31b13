/* Pairing two versions of a series as git range-diff does, and the diffs that show the change. */
#include <stdlib.h>
#include <string.h>

#include "merge/git/git_int.h"
#include "merge/repo/repo.h"
#include "merge/git/repohandle_int.h"
#include "util/assign.h"
#include "util/error.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define RANGEDIFF_MAX_DEFAULT 200

/* ---- each commit as range-diff's text ---- */

/* The message as `git log --pretty=medium` indents it, trailing white space cut. */
static void add_message(struct strbuf *sb, const char *msg)
{
	struct strbuf clean = STRBUF_INIT;
	const char *p;

	utf8_clean_text(&clean, msg, strlen(msg));
	strbuf_rtrim(&clean);
	for (p = clean.buf; *p;) {
		size_t n = strcspn(p, "\n"), len = n;

		while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		if (len)
			strbuf_addstr(sb, "    ");
		strbuf_add(sb, p, len);
		strbuf_addch(sb, '\n');
		p += n + (p[n] == '\n');
	}
	strbuf_release(&clean);
}

static void add_file_header(struct strbuf *sb, const git_diff_delta *d)
{
	strbuf_addstr(sb, "\n ## ");
	if (d->status == GIT_DELTA_ADDED)
		strbuf_addf(sb, "%s (new)", d->new_file.path);
	else if (d->status == GIT_DELTA_DELETED)
		strbuf_addf(sb, "%s (deleted)", d->old_file.path);
	else if (d->status == GIT_DELTA_RENAMED)
		strbuf_addf(sb, "%s => %s", d->old_file.path, d->new_file.path);
	else
		strbuf_addstr(sb, d->new_file.path);
	if (d->status != GIT_DELTA_ADDED && d->status != GIT_DELTA_DELETED &&
	    d->old_file.mode != d->new_file.mode)
		strbuf_addf(sb, " (mode change %06o => %06o)", d->old_file.mode, d->new_file.mode);
	strbuf_addstr(sb, " ##\n");
}

/* "@@ path: function" from a hunk header "@@ -a,b +c,d @@ function". */
static void add_hunk_header(struct strbuf *sb, const git_diff_hunk *h, const char *path)
{
	const char *rest = strstr(h->header + 2, "@@");
	size_t len;

	strbuf_addstr(sb, "@@");
	if (!rest) {
		strbuf_addch(sb, '\n');
		return;
	}
	rest += 2;
	len = strcspn(rest, "\n");
	if (len)
		strbuf_addf(sb, " %s:%.*s", path, (int)len, rest);
	strbuf_addch(sb, '\n');
}

/* One line of a file's diff; returns the lines it added to the diff part. */
static int add_line(struct strbuf *sb, const git_diff_line *l)
{
	char origin = l->origin == GIT_DIFF_LINE_ADDITION ? '+' :
		      l->origin == GIT_DIFF_LINE_DELETION ? '-' : ' ';
	size_t len = l->content_len;

	if (l->origin == GIT_DIFF_LINE_CONTEXT_EOFNL || l->origin == GIT_DIFF_LINE_ADD_EOFNL ||
	    l->origin == GIT_DIFF_LINE_DEL_EOFNL) {
		strbuf_addstr(sb, " \\ No newline at end of file\n");
		return 1;
	}
	if (len && l->content[len - 1] == '\n')
		len--;
	strbuf_addch(sb, origin);
	utf8_clean_text(sb, l->content, len);
	strbuf_addch(sb, '\n');
	return 1;
}

static int add_patch(struct strbuf *sb, int *size, git_patch *patch)
{
	const git_diff_delta *d = git_patch_get_delta(patch);
	const char *path = d->status == GIT_DELTA_DELETED ? d->old_file.path : d->new_file.path;
	size_t h, l, nh = git_patch_num_hunks(patch);

	add_file_header(sb, d);
	(*size)++;
	if (d->flags & GIT_DIFF_FLAG_BINARY) {
		strbuf_addf(sb, " Binary files differ\n");
		(*size)++;
	}
	for (h = 0; h < nh; h++) {
		const git_diff_hunk *hunk;
		size_t lines;

		if (git_patch_get_hunk(&hunk, &lines, patch, h) < 0)
			return merge_git_fail("range-diff: hunk");
		add_hunk_header(sb, hunk, path);
		(*size)++;
		for (l = 0; l < lines; l++) {
			const git_diff_line *line;

			if (git_patch_get_line_in_hunk(&line, patch, h, l) < 0)
				return merge_git_fail("range-diff: line");
			*size += add_line(sb, line);
		}
	}
	return 0;
}

/* The commit's diff against its parent (renames found, as git log -p finds them). */
static int add_diff(struct rangediff_commit *rc, struct strbuf *sb, git_repository *repo,
		    git_commit *c)
{
	git_diff_options opts;
	git_diff_find_options find;
	git_commit *parent = NULL;
	git_tree *a = NULL, *b = NULL;
	git_diff *diff = NULL;
	size_t i;
	int error = 0;

	git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	git_diff_find_options_init(&find, GIT_DIFF_FIND_OPTIONS_VERSION);
	opts.context_lines = 3;
	find.flags = GIT_DIFF_FIND_RENAMES;
	if ((git_commit_parentcount(c) && git_commit_parent(&parent, c, 0) < 0) ||
	    (parent && git_commit_tree(&a, parent) < 0) || git_commit_tree(&b, c) < 0 ||
	    git_diff_tree_to_tree(&diff, repo, a, b, &opts) < 0 ||
	    git_diff_find_similar(diff, &find) < 0) {
		error = merge_git_fail("range-diff: diff of %s", rc->id.hex);
		goto done;
	}
	rc->diff_at = sb->len + 1; /* after the blank line before the first " ## " */
	for (i = 0; i < git_diff_num_deltas(diff) && !error; i++) {
		git_patch *patch = NULL;

		if (git_patch_from_diff(&patch, diff, i) < 0)
			error = merge_git_fail("range-diff: patch of %s", rc->id.hex);
		else
			error = add_patch(sb, &rc->size, patch);
		git_patch_free(patch);
	}
done:
	git_diff_free(diff);
	git_tree_free(a);
	git_tree_free(b);
	git_commit_free(parent);
	return error;
}

static int read_commit(struct rangediff_commit *rc, git_repository *repo, const git_oid *id)
{
	struct strbuf sb = STRBUF_INIT, subject = STRBUF_INIT, who = STRBUF_INIT;
	git_commit *c = NULL;
	const git_signature *a;
	int error;

	memset(rc, 0, sizeof(*rc));
	rc->pair = -1;
	merge_oid_from_git(&rc->id, id);
	if (git_commit_lookup(&c, repo, id) < 0)
		return merge_git_fail("range-diff: commit %s", rc->id.hex);
	a = git_commit_author(c);
	strbuf_addf(&who, "%s <%s>", a->name, a->email);
	strbuf_addstr(&sb, " ## Metadata ##\nAuthor: ");
	utf8_clean_text(&sb, who.buf, who.len);
	strbuf_addstr(&sb, "\n\n ## Commit message ##\n");
	add_message(&sb, git_commit_message(c) ? git_commit_message(c) : "");
	error = add_diff(rc, &sb, repo, c);
	merge_commit_subject(&subject, c);
	rc->subject = utf8_clean_dup(subject.buf);
	rc->text = strbuf_detach(&sb, NULL);
	if (rc->diff_at > strlen(rc->text))
		rc->diff_at = strlen(rc->text);
	git_commit_free(c);
	strbuf_release(&subject);
	strbuf_release(&who);
	return error;
}

/* The range base..tip, oldest first, as `git log --reverse --no-merges` lists it. */
static int read_range(struct rangediff_commit **out, size_t *nr, git_repository *repo,
		      const struct nb_oid *base, const struct nb_oid *tip, size_t max)
{
	git_revwalk *walk = NULL;
	const unsigned int order = GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME | GIT_SORT_REVERSE;
	git_oid id, *ids = NULL;
	size_t n = 0, alloc = 0, i;
	int error = 0;

	if (git_revwalk_new(&walk, repo) < 0 || git_revwalk_sorting(walk, order) < 0 ||
	    merge_oid_to_git(&id, tip) < 0 || git_revwalk_push(walk, &id) < 0 ||
	    (base && !nb_oid_is_null(base) &&
	     (merge_oid_to_git(&id, base) < 0 || git_revwalk_hide(walk, &id) < 0))) {
		error = merge_git_fail("range-diff: walk of %s", tip->hex);
		goto done;
	}
	while (!(error = git_revwalk_next(&id, walk))) {
		git_commit *c = NULL;
		int merge;

		if (git_commit_lookup(&c, repo, &id) < 0) {
			error = merge_git_fail("range-diff: commit");
			goto done;
		}
		merge = git_commit_parentcount(c) > 1;
		git_commit_free(c);
		if (merge)
			continue;
		if (n == max) {
			error = nb_error_set(NB_EINVALID, "range-diff: more than %zu commits in "
					     "the range up to %s", max, tip->hex);
			goto done;
		}
		ALLOC_GROW(ids, n + 1, alloc);
		ids[n++] = id;
	}
	if (error != GIT_ITEROVER) {
		error = merge_git_fail("range-diff: walk of %s", tip->hex);
		goto done;
	}
	error = 0;
	*out = xcalloc(n ? n : 1, sizeof(**out));
	for (i = 0; i < n && !error; i++) {
		error = read_commit(&(*out)[i], repo, &ids[i]);
		*nr = i + 1;
	}
done:
	free(ids);
	git_revwalk_free(walk);
	return error;
}

/* ---- the pairing ---- */

struct diffsize_count {
	int n;
};

static int count_hunk(const git_diff_delta *d, const git_diff_hunk *h, void *payload)
{
	((struct diffsize_count *)payload)->n++;
	return 0;
}

static int count_line(const git_diff_delta *d, const git_diff_hunk *h, const git_diff_line *l,
		      void *payload)
{
	((struct diffsize_count *)payload)->n++;
	return 0;
}

/* Hunks plus lines (context included) of the diff of a and b: range-diff's cost. */
static int diffsize(const char *a, const char *b)
{
	git_diff_options opts;
	struct diffsize_count c = { 0 };

	git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	opts.context_lines = 3;
	opts.flags = GIT_DIFF_FORCE_TEXT;
	if (git_diff_buffers(a, strlen(a), "a", b, strlen(b), "b", &opts, NULL, NULL, count_hunk,
			     count_line, &c) < 0)
		return ASSIGN_COST_MAX;
	return c.n < ASSIGN_COST_MAX ? c.n : ASSIGN_COST_MAX;
}

/* Equal diff parts pair at no cost first, as git's find_exact_matches(). */
static void exact_matches(struct rangediff *rd)
{
	size_t i, j;

	for (j = 0; j < rd->new_nr; j++)
		for (i = 0; i < rd->old_nr; i++) {
			struct rangediff_commit *a = &rd->old[i], *b = &rd->new[j];

			if (a->pair < 0 && !strcmp(a->text + a->diff_at, b->text + b->diff_at)) {
				a->pair = (int)j;
				b->pair = (int)i;
				break;
			}
		}
}

static int cost_of(const struct rangediff *rd, size_t i, size_t j, int factor)
{
	const struct rangediff_commit *a = i < rd->old_nr ? &rd->old[i] : NULL;
	const struct rangediff_commit *b = j < rd->new_nr ? &rd->new[j] : NULL;

	if (a && b) {
		if (a->pair == (int)j)
			return 0;
		if (a->pair >= 0 || b->pair >= 0)
			return ASSIGN_COST_MAX;
		return diffsize(a->text + a->diff_at, b->text + b->diff_at);
	}
	if (a) /* left without a partner: its own size, scaled */
		return a->pair < 0 ? a->size * factor / 100 : ASSIGN_COST_MAX;
	if (b)
		return b->pair < 0 ? b->size * factor / 100 : ASSIGN_COST_MAX;
	return 0;
}

static void correspondences(struct rangediff *rd, int factor)
{
	size_t n = rd->old_nr + rd->new_nr, i, j;
	int *cost = xcalloc(n * n + 1, sizeof(*cost)), *pairs = xcalloc(n + 1, sizeof(*pairs));

	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++)
			cost[i * n + j] = cost_of(rd, i, j, factor);
	assign_min_cost(pairs, cost, n);
	for (i = 0; i < rd->old_nr; i++)
		if (pairs[i] >= 0 && (size_t)pairs[i] < rd->new_nr) {
			rd->old[i].pair = pairs[i];
			rd->new[pairs[i]].pair = (int)i;
		}
	free(cost);
	free(pairs);
}

int rangediff_compute(struct rangediff *out, struct repo *repo,
		      const struct rangediff_ranges *ranges, int creation_factor, size_t max)
{
	git_repository *git = repo_git(repo);
	int error;

	if (!max)
		max = RANGEDIFF_MAX_DEFAULT;
	if ((error = read_range(&out->old, &out->old_nr, git, ranges->old_base, ranges->old_tip,
				max)) < 0 ||
	    (error = read_range(&out->new, &out->new_nr, git, ranges->new_base, ranges->new_tip,
				max)) < 0)
		return error;
	exact_matches(out);
	correspondences(out, creation_factor);
	return 0;
}

int rangediff_compute_pair(struct rangediff *out, struct repo *repo,
			   const struct nb_oid *old_commit, const struct nb_oid *new_commit,
			   int creation_factor)
{
	git_repository *git = repo_git(repo);
	git_oid a, b;
	int error;

	if (merge_oid_to_git(&a, old_commit) < 0 || merge_oid_to_git(&b, new_commit) < 0)
		return NB_EINVALID;
	out->old = xcalloc(1, sizeof(*out->old));
	out->new = xcalloc(1, sizeof(*out->new));
	out->old_nr = out->new_nr = 1;
	if ((error = read_commit(&out->old[0], git, &a)) < 0 ||
	    (error = read_commit(&out->new[0], git, &b)) < 0)
		return error;
	exact_matches(out);
	correspondences(out, creation_factor);
	return 0;
}

void rangediff_release(struct rangediff *rd)
{
	size_t i;

	for (i = 0; i < rd->old_nr; i++) {
		free(rd->old[i].subject);
		free(rd->old[i].text);
	}
	for (i = 0; i < rd->new_nr; i++) {
		free(rd->new[i].subject);
		free(rd->new[i].text);
	}
	free(rd->old);
	free(rd->new);
	memset(rd, 0, sizeof(*rd));
}

/* ---- showing a pair ---- */

struct pair_show {
	struct strbuf *out;
	const char *old_text;
};

/* The section a hunk is in: the last " ## X ##" or "@@ X" line before it. */
static void section_of(struct strbuf *out, const char *text, int old_start)
{
	const char *p = text, *best = NULL;
	size_t best_len = 0;
	int line = 1;

	for (; *p && line < old_start; line++) {
		size_t n = strcspn(p, "\n");

		if (n > 6 && !strncmp(p, " ## ", 4) && !strncmp(p + n - 3, " ##", 3)) {
			best = p + 4;
			best_len = n - 7;
		} else if (n > 3 && !strncmp(p + (p[0] != '@'), "@@ ", 3)) {
			best = p + (p[0] != '@') + 3;
			best_len = n - (size_t)(best - p);
		}
		p += n + (p[n] == '\n');
	}
	strbuf_addstr(out, "    @@");
	if (best)
		strbuf_addf(out, " %.*s", (int)best_len, best);
	strbuf_addch(out, '\n');
}

static int show_hunk(const git_diff_delta *d, const git_diff_hunk *h, void *payload)
{
	struct pair_show *ps = payload;

	section_of(ps->out, ps->old_text, h->old_start);
	return 0;
}

static int show_line(const git_diff_delta *d, const git_diff_hunk *h, const git_diff_line *l,
		     void *payload)
{
	struct pair_show *ps = payload;
	size_t len = l->content_len;

	if (l->origin != GIT_DIFF_LINE_CONTEXT && l->origin != GIT_DIFF_LINE_ADDITION &&
	    l->origin != GIT_DIFF_LINE_DELETION)
		return 0;
	if (len && l->content[len - 1] == '\n')
		len--;
	strbuf_addf(ps->out, "    %c%.*s\n", l->origin, (int)len, l->content);
	return 0;
}

void rangediff_pair_show(struct strbuf *out, const struct rangediff *rd, int old_i, int new_j)
{
	const struct rangediff_commit *a = old_i >= 0 ? &rd->old[old_i] : NULL;
	const struct rangediff_commit *b = new_j >= 0 ? &rd->new[new_j] : NULL;
	size_t width = 1, most = rd->old_nr > rd->new_nr ? rd->old_nr : rd->new_nr;
	char status = !b ? '<' : !a ? '>' : strcmp(a->text, b->text) ? '!' : '=';
	git_diff_options opts;
	struct pair_show ps = { out, a ? a->text : "" };

	for (; most >= 10; most /= 10)
		width++;
	if (a)
		strbuf_addf(out, "%*d:  %.7s %c ", (int)width, old_i + 1, a->id.hex, status);
	else
		strbuf_addf(out, "%*s:  ------- %c ", (int)width, "-", status);
	if (b)
		strbuf_addf(out, "%*d:  %.7s %s\n", (int)width, new_j + 1, b->id.hex, b->subject);
	else
		strbuf_addf(out, "%*s:  ------- %s\n", (int)width, "-", a->subject);
	if (status != '!')
		return;
	git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	opts.context_lines = 3;
	opts.flags = GIT_DIFF_FORCE_TEXT;
	if (git_diff_buffers(a->text, strlen(a->text), "a", b->text, strlen(b->text), "b", &opts,
			     NULL, NULL, show_hunk, show_line, &ps) < 0)
		strbuf_addstr(out, "    (the diff of the two versions could not be made)\n");
}

/* ---- interdiff ---- */

int rangediff_interdiff(struct strbuf *out, struct repo *repo, const struct nb_oid *old_commit,
			const struct nb_oid *new_commit)
{
	git_repository *git = repo_git(repo);
	git_commit *a = NULL, *b = NULL, *pa = NULL, *pb = NULL;
	git_tree *ta = NULL, *tb = NULL;
	git_diff *diff = NULL;
	git_buf buf = { 0 };
	git_oid ia, ib;
	int error = 0;

	if (merge_oid_to_git(&ia, old_commit) < 0 || merge_oid_to_git(&ib, new_commit) < 0 ||
	    git_commit_lookup(&a, git, &ia) < 0 || git_commit_lookup(&b, git, &ib) < 0 ||
	    git_commit_parent(&pa, a, 0) < 0 || git_commit_parent(&pb, b, 0) < 0) {
		error = merge_git_fail("interdiff of %s and %s", old_commit->hex, new_commit->hex);
		goto done;
	}
	if (!git_oid_equal(git_commit_tree_id(pa), git_commit_tree_id(pb))) {
		error = NB_ECONFLICT;
		goto done;
	}
	if (git_commit_tree(&ta, a) < 0 || git_commit_tree(&tb, b) < 0 ||
	    git_diff_tree_to_tree(&diff, git, ta, tb, NULL) < 0 ||
	    git_diff_to_buf(&buf, diff, GIT_DIFF_FORMAT_PATCH) < 0) {
		error = merge_git_fail("interdiff of %s and %s", old_commit->hex, new_commit->hex);
		goto done;
	}
	utf8_clean_text(out, buf.ptr ? buf.ptr : "", buf.size);
done:
	git_buf_dispose(&buf);
	git_diff_free(diff);
	git_tree_free(ta);
	git_tree_free(tb);
	git_commit_free(a);
	git_commit_free(b);
	git_commit_free(pa);
	git_commit_free(pb);
	return error;
}
