/* Carried fix patches: format-patch mails parsed and applied like `git am -3`. */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <git2.h>

#include "merge/integrate/fixes_int.h"
#include "merge/integrate/integrate.h"
#include "merge/git/git_int.h"
#include "merge/repo/repo.h"
#include "merge/git/treemerge_int.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/strbuf.h"
#include "util/strvec.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define FIX_FILE_MAX (32u << 20)

const char *fix_state_name(enum fix_state s)
{
	switch (s) {
	case FIX_APPLIED: return "applied";
	case FIX_APPLIED_3WAY: return "applied-3way";
	case FIX_NOT_NEEDED: return "not-needed";
	case FIX_FAILED: return "failed";
	}
	return "?";
}

void fixes_report_release(struct fixes_report *r)
{
	size_t i;

	for (i = 0; i < r->nr; i++) {
		free(r->items[i].file);
		free(r->items[i].subject);
		free(r->items[i].reason);
	}
	free(r->items);
	r->items = NULL;
	r->nr = r->alloc = 0;
}

size_t fixes_report_count(const struct fixes_report *r, enum fix_state state)
{
	size_t i, n = 0;

	for (i = 0; i < r->nr; i++)
		n += r->items[i].state == state;
	return n;
}

void fix_patch_release(struct fix_patch *p)
{
	free(p->author_name);
	free(p->author_email);
	free(p->subject);
	free(p->message);
	free(p->diff);
	*p = (struct fix_patch)FIX_PATCH_INIT;
}

/* ---- parsing ---- */

static int b64val(int c)
{
	const char *tab = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const char *p = c ? strchr(tab, c) : NULL;

	return p ? (int)(p - tab) : -1;
}

/* Decodes the text of one encoded word ("Q" or "B") into `out`. */
static void decode_word(struct strbuf *out, char enc, const char *s, size_t n)
{
	unsigned int acc = 0;
	int bits = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (enc == 'Q' || enc == 'q') {
			if (s[i] == '_')
				strbuf_addch(out, ' ');
			else if (s[i] == '=' && i + 2 < n && str_hexval(s[i + 1]) >= 0 &&
				 str_hexval(s[i + 2]) >= 0) {
				strbuf_addch(out, str_hexval(s[i + 1]) * 16 + str_hexval(s[i + 2]));
				i += 2;
			} else {
				strbuf_addch(out, s[i]);
			}
			continue;
		}
		if (b64val(s[i]) < 0)
			continue;
		acc = (acc << 6) | (unsigned int)b64val(s[i]);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			strbuf_addch(out, (int)((acc >> bits) & 0xff));
		}
	}
}

/* Length of the encoded word at `s` ("=?cs?E?text?="), 0 if it is not one. */
static size_t encoded_word(const char *s, char *enc, const char **text, size_t *tlen)
{
	const char *q1, *end;

	if (s[0] != '=' || s[1] != '?' || !(q1 = strchr(s + 2, '?')) || !q1[1] || q1[2] != '?')
		return 0;
	*enc = q1[1];
	if (!strchr("QqBb", *enc) || !(end = strstr(q1 + 3, "?=")))
		return 0;
	*text = q1 + 3;
	*tlen = (size_t)(end - *text);
	return (size_t)(end + 2 - s);
}

/* RFC 2047: encoded words decoded, whitespace between two of them dropped. */
static char *mime_decode(const char *s)
{
	struct strbuf out = STRBUF_INIT;
	int last_word = 0;

	while (*s) {
		const char *text;
		size_t tlen, wl, ws = strspn(s, " \t");
		char enc;

		if (last_word && ws && (wl = encoded_word(s + ws, &enc, &text, &tlen))) {
			s += ws;
			continue;
		}
		if ((wl = encoded_word(s, &enc, &text, &tlen))) {
			decode_word(&out, enc, text, tlen);
			s += wl;
			last_word = 1;
			continue;
		}
		strbuf_addch(&out, *s++);
		last_word = 0;
	}
	return strbuf_detach(&out, NULL);
}

/* Strips "[PATCH n/m]", other "[...]" groups and "Re:" from the front, as git mailinfo. */
static char *strip_subject(const char *s)
{
	for (;;) {
		s += strspn(s, " \t");
		if (*s == '[' && strchr(s, ']'))
			s = strchr(s, ']') + 1;
		else if (!strncasecmp(s, "re:", 3))
			s += 3;
		else
			break;
	}
	return xstrdup(s);
}

/* "Name <email>" or "email". */
static void parse_from(struct fix_patch *p, const char *value)
{
	char *v = mime_decode(value);
	char *lt = strchr(v, '<'), *gt = lt ? strchr(lt, '>') : NULL;
	size_t n;

	if (lt && gt) {
		p->author_email = xstrndup(lt + 1, (size_t)(gt - lt - 1));
		n = (size_t)(lt - v);
		while (n && (v[n - 1] == ' ' || v[n - 1] == '"'))
			n--;
		p->author_name = xstrndup(v + (v[0] == '"'), n - (n && v[0] == '"'));
	} else {
		p->author_email = xstrdup(v);
		p->author_name = xstrdup("");
	}
	free(v);
}

/* "Tue, 3 Mar 2026 10:00:00 +0100". */
static void parse_date(struct fix_patch *p, const char *value)
{
	static const char *months = "JanFebMarAprMayJunJulAugSepOctNovDec";
	struct tm tm = { 0 };
	char mon[4] = "", sign = '+';
	const char *s = strchr(value, ',') ? strchr(value, ',') + 1 : value, *m;
	int d, y, hh, mm, ss, tz = 0;

	if (sscanf(s, " %d %3s %d %d:%d:%d %c%4d", &d, mon, &y, &hh, &mm, &ss, &sign, &tz) < 6 ||
	    strlen(mon) != 3 || !(m = strstr(months, mon)) || (m - months) % 3)
		return;
	tm.tm_mday = d;
	tm.tm_mon = (int)((m - months) / 3);
	tm.tm_year = y - 1900;
	tm.tm_hour = hh;
	tm.tm_min = mm;
	tm.tm_sec = ss;
	p->author_offset = (tz / 100 * 60 + tz % 100) * (sign == '-' ? -1 : 1);
	p->author_time = (long long)timegm(&tm) - p->author_offset * 60LL;
}

/* The next line of [*pos, end) without its "\r\n" into `line`; 0 at the end. */
static int next_line(struct strbuf *line, const char **pos, const char *end)
{
	const char *p = *pos, *nl;

	if (p >= end)
		return 0;
	nl = memchr(p, '\n', (size_t)(end - p));
	strbuf_reset(line);
	strbuf_add(line, p, (size_t)((nl ? nl : end) - p));
	if (line->len && line->buf[line->len - 1] == '\r')
		strbuf_setlen(line, line->len - 1);
	*pos = nl ? nl + 1 : end;
	return 1;
}

/* Headers up to the blank line: From, Date, Subject (folded lines joined). */
static void parse_headers(struct fix_patch *p, const char **pos, const char *end)
{
	struct strbuf line = STRBUF_INIT, hdr = STRBUF_INIT;
	const char *save = *pos;

	for (;;) {
		int more = next_line(&line, pos, end);

		if (more && (line.buf[0] == ' ' || line.buf[0] == '\t') && hdr.len) {
			strbuf_addbuf(&hdr, &line);
			save = *pos;
			continue;
		}
		if (!strncasecmp(hdr.buf, "From:", 5) && !p->author_email)
			parse_from(p, hdr.buf + 5 + strspn(hdr.buf + 5, " "));
		else if (!strncasecmp(hdr.buf, "Date:", 5))
			parse_date(p, hdr.buf + 5);
		else if (!strncasecmp(hdr.buf, "Subject:", 8) && !p->subject) {
			char *d = mime_decode(hdr.buf + 8);

			p->subject = strip_subject(d);
			free(d);
		}
		if (!more || !line.len || str_starts_with(line.buf, "diff --git ")) {
			if (more && line.len)
				*pos = save;   /* a bare diff: no headers */
			break;
		}
		strbuf_reset(&hdr);
		strbuf_addbuf(&hdr, &line);
		save = *pos;
	}
	strbuf_release(&line);
	strbuf_release(&hdr);
}

/* From the first "diff --git" line to the end, without format-patch's "-- " signature. */
static char *diff_part(const char *start, const char *end)
{
	const char *d = start, *sig = NULL, *p;

	while (d < end && !(str_starts_with(d, "diff --git ") && (d == start || d[-1] == '\n'))) {
		const char *nl = memchr(d, '\n', (size_t)(end - d));

		d = nl ? nl + 1 : end;
	}
	if (d >= end)
		return NULL;
	for (p = d; (p = memmem(p, (size_t)(end - p), "\n-- \n", 5)); p += 5)
		sig = p;
	if (sig && end - sig < 200 && !memmem(sig, (size_t)(end - sig), "\n@@", 3))
		end = sig + 1;
	return xstrndup(d, (size_t)(end - d));
}

/* One mail [start, end) into `p`. */
static int parse_mail(struct fix_patch *p, const char *start, const char *end)
{
	struct strbuf line = STRBUF_INIT, body = STRBUF_INIT, msg = STRBUF_INIT;
	const char *pos = start;

	if (str_starts_with(pos, "From ")) {
		const char *nl = memchr(pos, '\n', (size_t)(end - pos));

		pos = nl ? nl + 1 : end;
	}
	parse_headers(p, &pos, end);
	while (next_line(&line, &pos, end)) {
		if (!strcmp(line.buf, "---") || str_starts_with(line.buf, "diff --git "))
			break;
		strbuf_addbuf(&body, &line);
		strbuf_addch(&body, '\n');
	}
	strbuf_trim(&body);
	p->diff = diff_part(start, end);
	if (!p->subject)
		p->subject = xstrdup("");
	if (!p->author_name)
		p->author_name = xstrdup("");
	if (!p->author_email)
		p->author_email = xstrdup("");
	strbuf_addf(&msg, "%s\n", p->subject);
	if (body.len)
		strbuf_addf(&msg, "\n%s\n", body.buf);
	p->message = strbuf_detach(&msg, NULL);
	strbuf_release(&line);
	strbuf_release(&body);
	if (!p->diff)
		return nb_error_set(NB_EINVALID, "'%s': no diff in the mail", p->subject);
	return 0;
}

/* 1 if the line at `s` opens a format-patch mail: "From <40 hex> ". */
static int is_mbox_from(const char *s, const char *end)
{
	int i;

	if (end - s < 46 || strncmp(s, "From ", 5))
		return 0;
	for (i = 5; i < 45; i++)
		if (str_hexval(s[i]) < 0)
			return 0;
	return s[45] == ' ';
}

int fix_patches_parse(struct fix_patch **out, size_t *nr, const char *text, size_t len)
{
	const char *end = text + len, *start = text, *p;
	size_t alloc = 0;
	int err = 0;

	*out = NULL;
	*nr = 0;
	while (start < end && !err) {
		const char *next = end;

		for (p = start; p < end; p++) {
			p = memchr(p, '\n', (size_t)(end - p));
			if (!p)
				break;
			if (is_mbox_from(p + 1, end)) {
				next = p + 1;
				break;
			}
		}
		ALLOC_GROW(*out, *nr + 1, alloc);
		(*out)[*nr] = (struct fix_patch)FIX_PATCH_INIT;
		err = parse_mail(&(*out)[(*nr)++], start, next);
		start = next;
	}
	if (err) {
		size_t i;

		for (i = 0; i < *nr; i++)
			fix_patch_release(&(*out)[i]);
		free(*out);
		*out = NULL;
		*nr = 0;
	}
	return err;
}

/* ---- applying ---- */

struct ctx {
	git_repository *git;
	const git_signature *committer;
	struct strbuf *log;
	git_oid head;
};

/* 1 if every file of the diff already holds its postimage in `tree`. */
static int already_there(git_diff *diff, git_tree *tree)
{
	size_t i, n = git_diff_num_deltas(diff);
	int all = n > 0;

	for (i = 0; i < n && all; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		git_tree_entry *e = NULL;

		if (d->new_file.id_abbrev < 4 && d->status != GIT_DELTA_DELETED) {
			all = 0;
			continue;
		}
		if (d->status == GIT_DELTA_DELETED) {
			all = git_tree_entry_bypath(&e, tree, d->old_file.path) == GIT_ENOTFOUND;
		} else {
			all = git_tree_entry_bypath(&e, tree, d->new_file.path) == 0 &&
			      !git_oid_ncmp(git_tree_entry_id(e), &d->new_file.id,
					    d->new_file.id_abbrev);
		}
		git_tree_entry_free(e);
	}
	return all;
}

/* Applies `diff` to `tree`: 0 with the result in `out`, else < 0 (libgit2's error). */
static int apply(git_oid *out, git_repository *git, git_tree *tree, git_diff *diff)
{
	git_index *index = NULL;
	int err = -1;

	if (git_apply_to_tree(&index, git, tree, diff, NULL) == 0 &&
	    git_index_write_tree_to(out, index, git) == 0)
		err = 0;
	git_index_free(index);
	return err;
}

/*
 * The base tree `git am -3` reconstructs: `tree` with each file of the patch at
 * the blob its index line names (added files absent).  NB_ENOTFOUND when the
 * repository lacks one of those blobs.
 */
static int fake_ancestor(git_oid *out, git_repository *git, git_tree *tree, git_diff *diff)
{
	size_t i, n = git_diff_num_deltas(diff), k = 0;
	git_tree_update *up = xcalloc(n + 1, sizeof(*up));
	int err = 0;

	for (i = 0; i < n && !err; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		git_object *blob = NULL;

		if (d->status == GIT_DELTA_ADDED) {
			git_tree_entry *e = NULL;

			if (git_tree_entry_bypath(&e, tree, d->new_file.path) == 0)
				up[k++] = (git_tree_update){ .action = GIT_TREE_UPDATE_REMOVE,
							     .path = d->new_file.path };
			git_tree_entry_free(e);
			continue;
		}
		if (d->old_file.id_abbrev < 4 ||
		    git_object_lookup_prefix(&blob, git, &d->old_file.id, d->old_file.id_abbrev,
					     GIT_OBJECT_BLOB) < 0) {
			err = NB_ENOTFOUND;
			break;
		}
		up[k++] = (git_tree_update){ .action = GIT_TREE_UPDATE_UPSERT,
					     .id = *git_object_id(blob),
					     .filemode = d->old_file.mode ? d->old_file.mode
									  : GIT_FILEMODE_BLOB,
					     .path = d->old_file.path };
		git_object_free(blob);
	}
	if (!err && git_tree_create_updated(out, git, tree, k, up) < 0)
		err = NB_ERROR;
	free(up);
	return err;
}

/* Commits `tree_id` on the head with the mail's author and message. */
static int commit(struct ctx *c, const struct fix_patch *p, const git_oid *tree_id,
		    char out[NB_OID_HEXSZ + 1])
{
	git_signature *author = NULL;
	git_commit *parent = NULL;
	git_tree *tree = NULL;
	git_oid id;
	int err = 0;

	if (!*p->author_email || p->author_time < 0 ||
	    git_signature_new(&author, *p->author_name ? p->author_name : p->author_email,
			      p->author_email, (git_time_t)p->author_time, p->author_offset) < 0)
		author = NULL;
	if (git_commit_lookup(&parent, c->git, &c->head) < 0 ||
	    git_tree_lookup(&tree, c->git, tree_id) < 0 ||
	    git_commit_create(&id, c->git, NULL, author ? author : c->committer, c->committer,
			      NULL, p->message, tree, 1, (const git_commit **)&parent) < 0) {
		err = nb_error_set(NB_ERROR, "fix commit: %s", merge_git_error());
		goto done;
	}
	git_oid_cpy(&c->head, &id);
	git_oid_tostr(out, NB_OID_HEXSZ + 1, &id);
done:
	git_signature_free(author);
	git_tree_free(tree);
	git_commit_free(parent);
	return err;
}

/* The 3-way fallback: sets r->state/reason, *result the tree to commit. */
static int three_way(struct fix_result *r, git_oid *result, struct ctx *c, git_tree *head,
		       git_diff *diff)
{
	struct treemerge_conflicts conf = TREEMERGE_CONFLICTS_INIT;
	git_tree *base = NULL;
	git_oid base_id, theirs;
	int err;

	strbuf_addstr(c->log, "Using index info to reconstruct a base tree...\n");
	err = fake_ancestor(&base_id, c->git, head, diff);
	if (err == NB_ENOTFOUND) {
		r->reason = xstrdup("does not apply, and the repository lacks the blobs it was "
				    "made against (no 3-way merge possible)");
		return 0;
	}
	if (err < 0 || git_tree_lookup(&base, c->git, &base_id) < 0)
		return nb_error_set(NB_ERROR, "fix base tree: %s", merge_git_error());
	if (apply(&theirs, c->git, base, diff) < 0) {
		r->reason = xstrfmt("does not apply to the blobs it names either: %s",
				    merge_git_error());
		goto done;
	}
	strbuf_addstr(c->log, "Falling back to patching base and 3-way merge...\n");
	err = treemerge_trees(result, &conf, c->git, &base_id, git_tree_id(head), &theirs);
	if (err == NB_ECONFLICT) {
		r->reason = xstrfmt("conflicts with next in %s%s", conf.items[0].path,
				    conf.nr > 1 ? " and more" : "");
		strbuf_addf(c->log, "CONFLICT (content): Merge conflict in %s\n",
			    conf.items[0].path);
		err = 0;
	} else if (err == 0) {
		r->state = FIX_APPLIED_3WAY;
	}
done:
	treemerge_conflicts_release(&conf);
	git_tree_free(base);
	return err < 0 ? err : 0;
}

/* One mail: sets r's state, reason and commit; logs git am's lines. */
static int apply_one(struct fix_result *r, struct ctx *c, const struct fix_patch *p)
{
	git_diff *diff = NULL;
	git_commit *hc = NULL;
	git_tree *head = NULL;
	git_oid result;
	int err = 0;

	r->state = FIX_FAILED;
	strbuf_addf(c->log, "Applying: %s\n", p->subject);
	if (git_commit_lookup(&hc, c->git, &c->head) < 0 || git_commit_tree(&head, hc) < 0) {
		err = nb_error_set(NB_ERROR, "next: %s", merge_git_error());
		goto done;
	}
	if (git_diff_from_buffer(&diff, p->diff, strlen(p->diff)) < 0) {
		r->reason = xstrfmt("not a patch git can read: %s", merge_git_error());
		goto done;
	}
	if (already_there(diff, head)) {
		r->state = FIX_NOT_NEEDED;
	} else if (apply(&result, c->git, head, diff) == 0) {
		r->state = FIX_APPLIED;
	} else if ((err = three_way(r, &result, c, head, diff)) < 0) {
		goto done;
	}
	if ((r->state == FIX_APPLIED || r->state == FIX_APPLIED_3WAY) &&
	    git_oid_equal(&result, git_tree_id(head)))
		r->state = FIX_NOT_NEEDED;
	if (r->state == FIX_NOT_NEEDED) {
		r->reason = xstrdup("its change is already in next: no longer needed");
		strbuf_addstr(c->log, "No changes -- Patch already applied.\n");
	} else if (r->state != FIX_FAILED) {
		err = commit(c, p, &result, r->commit.hex);
	}
done:
	if (r->state == FIX_FAILED && !err)
		strbuf_addf(c->log, "error: %s\nPatch failed at %s %s\n$ git am --abort\n",
			    r->reason ? r->reason : "failed", r->file, p->subject);
	git_diff_free(diff);
	git_tree_free(head);
	git_commit_free(hc);
	return err;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The patch files of `dir`: its `series`, else *.patch sorted. */
static int patch_files_of(struct strvec *out, const char *dir)
{
	char *series = xstrfmt("%s/series", dir);
	struct strbuf sb = STRBUF_INIT;
	DIR *d;
	struct dirent *de;
	int err = 0;

	if (file_exists(series)) {
		const char *p;

		err = strbuf_read_file(&sb, series, 1u << 20);
		for (p = sb.buf; !err && *p;) {
			size_t l = strcspn(p, "\n"), s = strspn(p, " \t");

			if (l > s && p[s] != '#')
				strvec_push_nodup(out, xstrndup(p + s, strcspn(p + s, " \t\n")));
			p += l + (p[l] == '\n');
		}
		goto done;
	}
	if (!(d = opendir(dir))) {
		err = nb_error_errno(NB_ENOTFOUND, "fixes directory %s", dir);
		goto done;
	}
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && str_ends_with(de->d_name, ".patch"))
			strvec_push(out, de->d_name);
	closedir(d);
	if (out->nr)
		qsort(out->v, out->nr, sizeof(*out->v), cmp_str);
done:
	strbuf_release(&sb);
	free(series);
	return err;
}

static struct fix_result *fix_result_add(struct fixes_report *report, const char *file,
					  const char *subject)
{
	struct fix_result *r;

	ALLOC_GROW(report->items, report->nr + 1, report->alloc);
	r = &report->items[report->nr++];
	memset(r, 0, sizeof(*r));
	r->file = xstrdup(file);
	r->subject = xstrdup(subject);
	r->state = FIX_FAILED;
	return r;
}

/* One file: each of its mails in turn. */
static int apply_file(struct fixes_report *report, struct ctx *c, const char *dir,
			const char *file, const char *display)
{
	char *path = xstrfmt("%s/%s", dir, file);
	struct strbuf text = STRBUF_INIT;
	struct fix_patch *p = NULL;
	size_t i, n = 0;
	int err = 0;

	strbuf_addf(c->log, "$ git am -3 %s/%s\n", display, file);
	if (strchr(file, '/') || strbuf_read_file(&text, path, FIX_FILE_MAX) < 0 ||
	    fix_patches_parse(&p, &n, text.buf, text.len) < 0) {
		struct fix_result *r = fix_result_add(report, file, "");

		r->reason = xstrfmt("cannot read the patch: %s", nb_error_last());
		strbuf_addf(c->log, "error: %s\n", r->reason);
		goto done;
	}
	for (i = 0; i < n && !err; i++)
		err = apply_one(fix_result_add(report, file, p[i].subject), c, &p[i]);
done:
	for (i = 0; i < n; i++)
		fix_patch_release(&p[i]);
	free(p);
	strbuf_release(&text);
	free(path);
	return err;
}

int fixes_apply(struct fixes_report *report, struct strbuf *log, struct git_repository *repo,
		struct nb_oid *head, const struct git_signature *committer, const char *dir,
		const char *display)
{
	struct ctx c = { repo, committer, log, { { 0 } } };
	struct strvec files = STRVEC_INIT;
	size_t i;
	int err = 0;

	if (merge_oid_to_git(&c.head, head) < 0)
		return nb_error_set(NB_EINVALID, "fixes: bad head '%s'", head->hex);
	if (patch_files_of(&files, dir) < 0) {
		struct fix_result *r = fix_result_add(report, "", "");

		r->reason = xstrfmt("cannot read the fixes: %s", nb_error_last());
		strbuf_addf(log, "# fixes: %s\n", r->reason);
		goto done;
	}
	for (i = 0; i < files.nr && !err; i++)
		err = apply_file(report, &c, dir, files.v[i], display);
	merge_oid_from_git(head, &c.head);
done:
	strvec_clear(&files);
	return err;
}
