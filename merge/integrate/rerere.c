/* Conflict memory: hunks normalised as git rerere does, their resolutions, resolve/ files. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "merge/integrate/integrate.h"
#include "merge/git/sha1_int.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define MARKER_SIZE 7
#define RERERE_FILE_MAX (64u << 20)

void rerere_file_release(struct rerere_file *f)
{
	free(f->hunks);
	f->hunks = NULL;
	f->nr = f->alloc = 0;
}

char *rerere_dir(const char *workdir)
{
	return xstrfmt("%s/rerere", workdir);
}

char *rerere_resolve_dir(const char *workdir)
{
	return xstrfmt("%s/resolve", workdir);
}

/*
 * 1 if the line [p, p+len) (newline excluded) is a marker of `ch`, as git's
 * is_cmarker(): '<' and '>' need a space (a label) after them, '=' and '|' need
 * whitespace or the end of the line.
 */
static int is_marker(const char *p, size_t len, char ch)
{
	size_t i;

	if (len < MARKER_SIZE)
		return 0;
	for (i = 0; i < MARKER_SIZE; i++)
		if (p[i] != ch)
			return 0;
	if (len == MARKER_SIZE)
		return ch == '=' || ch == '|';
	if (ch == '<' || ch == '>')
		return p[MARKER_SIZE] == ' ';
	return p[MARKER_SIZE] == ' ' || p[MARKER_SIZE] == '\t' || p[MARKER_SIZE] == '\r';
}

/* Length of the line at `p` without its newline; *next gets the start of the next one. */
static size_t line(const char *p, const char *end, const char **next)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));

	*next = nl ? nl + 1 : end;
	return (size_t)((nl ? nl : end) - p);
}

static int buf_cmp(const struct strbuf *a, const struct strbuf *b)
{
	size_t n = a->len < b->len ? a->len : b->len;
	int c = memcmp(a->buf, b->buf, n);

	if (c)
		return c;
	return a->len < b->len ? -1 : a->len > b->len;
}

/* The id of a hunk's two sides, sorted, and (if `pre`) the normalised preimage. */
static void hunk_id(char id[SHA1_HEXSZ + 1], struct strbuf *pre, struct strbuf *one,
		    struct strbuf *two)
{
	struct sha1_ctx ctx;
	unsigned char raw[SHA1_RAWSZ];
	struct strbuf *a = one, *b = two;
	int i;

	if (buf_cmp(a, b) > 0) {
		a = two;
		b = one;
	}
	sha1_init(&ctx);
	sha1_update(&ctx, a->buf, a->len + 1);
	sha1_update(&ctx, b->buf, b->len + 1);
	sha1_final(raw, &ctx);
	for (i = 0; i < SHA1_RAWSZ; i++) {
		id[2 * i] = "0123456789abcdef"[raw[i] >> 4];
		id[2 * i + 1] = "0123456789abcdef"[raw[i] & 15];
	}
	id[SHA1_HEXSZ] = '\0';
	if (pre) {
		strbuf_reset(pre);
		strbuf_addstr(pre, "<<<<<<<\n");
		strbuf_addbuf(pre, a);
		strbuf_addstr(pre, "=======\n");
		strbuf_addbuf(pre, b);
		strbuf_addstr(pre, ">>>>>>>\n");
	}
}

enum { OUTSIDE, ONE, BASE, TWO };

/* Feeds one line to the marker state machine; -1 on a marker out of place. */
static int marker_step(int *state, const char *p, size_t len)
{
	int lt = is_marker(p, len, '<'), gt = is_marker(p, len, '>');
	int eq = is_marker(p, len, '='), bar = is_marker(p, len, '|');

	switch (*state) {
	case OUTSIDE:
		if (lt)
			*state = ONE;
		return 0;
	case ONE:
		if (lt || gt)
			return -1;
		if (bar)
			*state = BASE;
		else if (eq)
			*state = TWO;
		return 0;
	case BASE:
		if (lt || gt || bar)
			return -1;
		if (eq)
			*state = TWO;
		return 0;
	default:
		if (lt || eq || bar)
			return -1;
		if (gt)
			*state = OUTSIDE;
		return 0;
	}
}

int rerere_parse(struct rerere_file *out, const char *text, size_t len)
{
	struct strbuf one = STRBUF_INIT, two = STRBUF_INIT;
	const char *p = text, *end = text + len, *next;
	int state = OUTSIDE, prev;
	size_t start = 0;

	while (p < end) {
		size_t l = line(p, end, &next);

		prev = state;
		if (marker_step(&state, p, l) < 0) {
			strbuf_release(&one);
			strbuf_release(&two);
			rerere_file_release(out);
			return nb_error_set(NB_EINVALID, "nested or misplaced conflict marker "
					    "at byte %zu", (size_t)(p - text));
		}
		if (prev == OUTSIDE && state == ONE) {
			start = (size_t)(p - text);
			strbuf_reset(&one);
			strbuf_reset(&two);
		} else if (prev == ONE && state == ONE) {
			strbuf_add(&one, p, (size_t)(next - p));
		} else if (prev == TWO && state == TWO) {
			strbuf_add(&two, p, (size_t)(next - p));
		} else if (prev == TWO && state == OUTSIDE) {
			struct rerere_hunk *h;

			ALLOC_GROW(out->hunks, out->nr + 1, out->alloc);
			h = &out->hunks[out->nr++];
			h->start = start;
			h->end = (size_t)(next - text);
			hunk_id(h->id, NULL, &one, &two);
		}
		p = next;
	}
	strbuf_release(&one);
	strbuf_release(&two);
	if (state != OUTSIDE) {
		rerere_file_release(out);
		return nb_error_set(NB_EINVALID, "unterminated conflict hunk at byte %zu", start);
	}
	return 0;
}

/* The normalised preimage of hunk `h` of `text`. */
static void preimage(struct strbuf *pre, const char *text, const struct rerere_hunk *h)
{
	struct strbuf one = STRBUF_INIT, two = STRBUF_INIT;
	const char *p = text + h->start, *end = text + h->end, *next;
	int state = OUTSIDE, prev;
	char id[SHA1_HEXSZ + 1];

	while (p < end) {
		size_t l = line(p, end, &next);

		prev = state;
		marker_step(&state, p, l);
		if (prev == ONE && state == ONE)
			strbuf_add(&one, p, (size_t)(next - p));
		else if (prev == TWO && state == TWO)
			strbuf_add(&two, p, (size_t)(next - p));
		p = next;
	}
	hunk_id(id, pre, &one, &two);
	strbuf_release(&one);
	strbuf_release(&two);
}

int rerere_has_markers(const char *text, size_t len)
{
	const char *p = text, *end = text + len, *next;

	while (p < end) {
		size_t l = line(p, end, &next);

		if (is_marker(p, l, '<') || is_marker(p, l, '>') ||
		    (l == MARKER_SIZE && is_marker(p, l, '=')))
			return 1;
		p = next;
	}
	return 0;
}

static char *rec_path(const char *rerere_dir, const char *id, const char *what)
{
	return xstrfmt("%s/%s/%s", rerere_dir, id, what);
}

int rerere_replay(struct strbuf *out, size_t *matched, size_t *total, const char *rerere_dir,
		  const char *text, size_t len)
{
	struct rerere_file f = RERERE_FILE_INIT;
	struct strbuf post = STRBUF_INIT;
	size_t i, pos = 0, ok = 0;
	int err;

	strbuf_reset(out);
	if ((err = rerere_parse(&f, text, len)) < 0)
		f.nr = 0;
	for (i = 0; i < f.nr; i++) {
		char *path = rec_path(rerere_dir, f.hunks[i].id, "postimage");

		strbuf_reset(&post);
		if (file_exists(path) && strbuf_read_file(&post, path, RERERE_FILE_MAX) == 0) {
			ok++;
			strbuf_add(out, text + pos, f.hunks[i].start - pos);
			strbuf_addbuf(out, &post);
			pos = f.hunks[i].end;
		}
		free(path);
	}
	strbuf_add(out, text + pos, len - pos);
	if (matched)
		*matched = ok;
	if (total)
		*total = f.nr;
	err = f.nr && ok == f.nr ? 0 : NB_ECONFLICT;
	rerere_file_release(&f);
	strbuf_release(&post);
	return err;
}

/* 1 if `needle` occurs in hay[from, to) at a line start; *at gets where. */
static int find_at_line(size_t *at, const char *hay, size_t from, size_t to,
			  const char *needle, size_t nlen)
{
	size_t p;

	for (p = from; p + nlen <= to; p++) {
		if ((p == 0 || hay[p - 1] == '\n') && !memcmp(hay + p, needle, nlen)) {
			*at = p;
			return 1;
		}
	}
	return 0;
}

/*
 * What each hunk of `conflicted` became in `edited`: res[i] = [start, end) offsets
 * into `edited`.  The text between hunks anchors them.
 */
static int extract(size_t (*res)[2], const struct rerere_file *f, const char *path,
		     const char *conflicted, size_t clen, const char *edited, size_t elen)
{
	size_t c0 = f->hunks[0].start, cn = clen - f->hunks[f->nr - 1].end;
	size_t pos = c0, limit, i;

	if (rerere_has_markers(edited, elen))
		return nb_error_set(NB_EINVALID, "%s: still has conflict markers", path);
	if (elen < c0 + cn || memcmp(edited, conflicted, c0) ||
	    memcmp(edited + elen - cn, conflicted + clen - cn, cn))
		return nb_error_set(NB_EINVALID, "%s: the text before the first or after the last "
				    "conflict was changed; edit only the conflicts", path);
	limit = elen - cn;
	for (i = 1; i < f->nr; i++) {
		size_t s = f->hunks[i - 1].end, l = f->hunks[i].start - s, at;

		if (!l || !find_at_line(&at, edited, pos, limit, conflicted + s, l))
			return nb_error_set(NB_EINVALID, "%s: cannot find the text between "
					    "conflicts %zu and %zu; edit only the conflicts",
					    path, i, i + 1);
		res[i - 1][0] = pos;
		res[i - 1][1] = at;
		pos = at + l;
	}
	res[f->nr - 1][0] = pos;
	res[f->nr - 1][1] = limit;
	return 0;
}

/* Writes rerere/<id>/{preimage,postimage,meta}. */
static int store_record(const struct rerere_record_opts *o, const char *id,
			const struct strbuf *pre, const char *post, size_t post_len)
{
	char *dir = xstrfmt("%s/%s", o->dir, id);
	char *pp = rec_path(o->dir, id, "preimage");
	char *po = rec_path(o->dir, id, "postimage");
	char *pm = rec_path(o->dir, id, "meta");
	char *meta = xstrfmt("path %s\ntree %s\nrecorded %s\n", o->path, o->tree ? o->tree : "",
			     o->date ? o->date : "");
	int err;

	if ((err = file_mkdir_p(dir, 0700)) == 0 &&
	    (err = file_write_atomic(pp, pre->buf, pre->len)) == 0 &&
	    (err = file_write_atomic(po, post, post_len)) == 0)
		err = file_write_atomic(pm, meta, strlen(meta));
	free(dir);
	free(pp);
	free(po);
	free(pm);
	free(meta);
	return err;
}

/* Parse + extract + (if `store`) record; *recorded gets the hunk count. */
static int record(size_t *recorded, int store, const struct rerere_record_opts *o,
		  const char *conflicted, size_t clen, const char *edited, size_t elen)
{
	const char *path = o->path;
	struct rerere_file f = RERERE_FILE_INIT;
	struct strbuf pre = STRBUF_INIT;
	size_t (*res)[2] = NULL, i;
	int err;

	*recorded = 0;
	if ((err = rerere_parse(&f, conflicted, clen)) < 0) {
		nb_error_prefix("%s: ", path);
		goto done;
	}
	if (!f.nr) {
		err = nb_error_set(NB_EINVALID, "%s: no conflict hunks to record", path);
		goto done;
	}
	res = xcalloc(f.nr, sizeof(*res));
	if ((err = extract(res, &f, path, conflicted, clen, edited, elen)) < 0 || !store)
		goto done;
	for (i = 0; i < f.nr && !err; i++) {
		preimage(&pre, conflicted, &f.hunks[i]);
		err = store_record(o, f.hunks[i].id, &pre, edited + res[i][0],
				   res[i][1] - res[i][0]);
	}
	if (!err)
		*recorded = f.nr;
done:
	free(res);
	rerere_file_release(&f);
	strbuf_release(&pre);
	return err;
}

int rerere_record(size_t *recorded, const struct rerere_record_opts *o, const char *conflicted,
		  size_t clen, const char *edited, size_t elen)
{
	return record(recorded, 1, o, conflicted, clen, edited, elen);
}

static int is_hex40(const char *s)
{
	size_t i;

	for (i = 0; i < SHA1_HEXSZ; i++)
		if (!strchr("0123456789abcdef", s[i]) || !s[i])
			return 0;
	return s[SHA1_HEXSZ] == '\0';
}

/* The value of the first "key value" line of `text`, malloc'd; "" if none. */
static char *meta_get(const char *text, const char *key)
{
	size_t kl = strlen(key);
	const char *p = text;

	while (p && *p) {
		const char *nl = strchr(p, '\n');

		if (!strncmp(p, key, kl) && p[kl] == ' ')
			return xstrndup(p + kl + 1,
					nl ? (size_t)(nl - p - kl - 1) : strlen(p + kl + 1));
		p = nl ? nl + 1 : NULL;
	}
	return xstrdup("");
}

static int entry_cmp(const void *a, const void *b)
{
	const struct rerere_entry *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	return c ? c : strcmp(x->id, y->id);
}

int rerere_list(struct rerere_entry **out, size_t *nr, const char *rerere_dir)
{
	DIR *d = opendir(rerere_dir);
	struct dirent *de;
	struct strbuf meta = STRBUF_INIT;
	size_t alloc = 0;

	*out = NULL;
	*nr = 0;
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		struct rerere_entry *e;
		char *path;

		if (!is_hex40(de->d_name))
			continue;
		path = rec_path(rerere_dir, de->d_name, "postimage");
		if (!file_exists(path)) {
			free(path);
			continue;
		}
		free(path);
		path = rec_path(rerere_dir, de->d_name, "meta");
		strbuf_reset(&meta);
		strbuf_read_file(&meta, path, 1u << 20);
		free(path);
		ALLOC_GROW(*out, *nr + 1, alloc);
		e = &(*out)[(*nr)++];
		memcpy(e->id, de->d_name, SHA1_HEXSZ + 1);
		e->path = meta_get(meta.buf, "path");
		e->tree = meta_get(meta.buf, "tree");
		e->recorded = meta_get(meta.buf, "recorded");
	}
	closedir(d);
	strbuf_release(&meta);
	if (*nr)
		qsort(*out, *nr, sizeof(**out), entry_cmp);
	return 0;
}

void rerere_list_free(struct rerere_entry *e, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		free(e[i].path);
		free(e[i].tree);
		free(e[i].recorded);
	}
	free(e);
}

/* 1 if `path` is a relative path without ".", ".." or empty components or newlines. */
static int path_safe(const char *path)
{
	const char *p = path;

	if (!*path || *path == '/' || strchr(path, '\n'))
		return 0;
	while (*p) {
		const char *slash = strchr(p, '/');
		size_t l = slash ? (size_t)(slash - p) : strlen(p);

		if (!l || (l == 1 && p[0] == '.') || (l == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		p += l + (slash ? 1 : 0);
		if (slash && !*p)
			return 0;
	}
	return 1;
}

/* Writes dir/path, creating its parent directories. */
static int write_under(const char *dir, const char *path, const char *text, size_t len)
{
	char *full = xstrfmt("%s/%s", dir, path), *slash = strrchr(full, '/');
	int err;

	*slash = '\0';
	err = file_mkdir_p(full, 0700);
	*slash = '/';
	if (!err)
		err = file_write_atomic(full, text, len);
	free(full);
	return err;
}

int rerere_leave_write(const struct rerere_leave *c, const char *workdir, char **where)
{
	char *rdir = rerere_resolve_dir(workdir);
	char *tdir = xstrfmt("%s/%s", rdir, c->tree), *odir = xstrfmt("%s.orig", tdir);
	char *mpath = xstrfmt("%s.meta", tdir);
	struct strbuf meta = STRBUF_INIT;
	size_t i;
	int err = 0;

	strbuf_addf(&meta, "tree %s\ndate %s\nnext %s\ntip %s\n", c->tree, c->date, c->next,
		    c->tip);
	if (file_remove_tree(tdir) < 0 || file_remove_tree(odir) < 0 ||
	    file_remove_tree(mpath) < 0 || file_mkdir_p(tdir, 0700) < 0) {
		err = NB_ERROR;
		goto done;
	}
	for (i = 0; i < c->files_nr && !err; i++) {
		const struct rerere_leave_file *f = &c->files[i];

		if (!path_safe(f->path)) {
			strbuf_addstr(&meta, "other unsafe -\n");
			continue;
		}
		if ((err = write_under(tdir, f->path, f->text, f->len)) == 0 &&
		    (err = write_under(odir, f->path, f->text, f->len)) == 0)
			strbuf_addf(&meta, "path %s\n", f->path);
	}
	for (i = 0; i < c->others_nr; i++)
		if (path_safe(c->others[i].path))
			strbuf_addf(&meta, "other %s %s\n", c->others[i].kind, c->others[i].path);
	if (!err)
		err = file_write_atomic(mpath, meta.buf, meta.len);
	if (!err && where)
		*where = xstrdup(tdir);
done:
	strbuf_release(&meta);
	free(rdir);
	free(tdir);
	free(odir);
	free(mpath);
	return err;
}

/* Reads resolve/<tree>.orig/<path> and resolve/<tree>/<path>. */
static int read_pair(struct strbuf *orig, struct strbuf *edited, const char *tdir,
		       const char *path)
{
	char *po = xstrfmt("%s.orig/%s", tdir, path), *pe = xstrfmt("%s/%s", tdir, path);
	int err = 0;

	strbuf_reset(orig);
	strbuf_reset(edited);
	if (strbuf_read_file(orig, po, RERERE_FILE_MAX) < 0 ||
	    strbuf_read_file(edited, pe, RERERE_FILE_MAX) < 0)
		err = nb_error_set(NB_ENOTFOUND, "%s: cannot read %s or its original", path, pe);
	free(po);
	free(pe);
	return err;
}

/* One pass over the meta's files: check only (store 0) or record (store 1). */
static int resolve_pass(struct strbuf *report, int store, const char *meta, const char *tdir,
			  const char *rdir, const char *tree, const char *date)
{
	struct strbuf orig = STRBUF_INIT, edited = STRBUF_INIT;
	const char *p = meta;
	int err = 0;

	while (p && *p && !err) {
		const char *nl = strchr(p, '\n');
		char *path;
		size_t n = 0;

		if (strncmp(p, "path ", 5)) {
			p = nl ? nl + 1 : NULL;
			continue;
		}
		path = xstrndup(p + 5, nl ? (size_t)(nl - p - 5) : strlen(p + 5));
		if ((err = read_pair(&orig, &edited, tdir, path)) == 0) {
			const struct rerere_record_opts o = {
				.dir = rdir, .path = path, .tree = tree, .date = date,
			};

			err = record(&n, store, &o, orig.buf, orig.len, edited.buf, edited.len);
		}
		if (!err && store)
			strbuf_addf(report, "Recorded resolution for '%s' (%zu hunk%s).\n", path, n,
				    n == 1 ? "" : "s");
		free(path);
		p = nl ? nl + 1 : NULL;
	}
	strbuf_release(&orig);
	strbuf_release(&edited);
	return err;
}

/* Report lines for the conflicts that have no file to edit. */
static void report_others(struct strbuf *report, const char *meta)
{
	const char *p = meta;

	while (p && *p) {
		const char *nl = strchr(p, '\n');

		if (!strncmp(p, "other ", 6))
			strbuf_addf(report, "Not recorded: %.*s (no file to edit; only the text of "
				    "content conflicts is remembered).\n",
				    (int)(nl ? (size_t)(nl - p - 6) : strlen(p + 6)), p + 6);
		p = nl ? nl + 1 : NULL;
	}
}

int rerere_resolve_tree(struct strbuf *report, const char *workdir, const char *tree,
			const char *date)
{
	char *rsdir = rerere_resolve_dir(workdir), *rdir = rerere_dir(workdir);
	char *tdir = xstrfmt("%s/%s", rsdir, tree), *mpath = xstrfmt("%s.meta", tdir);
	struct strbuf meta = STRBUF_INIT;
	int err;

	if (!file_exists(mpath) || strbuf_read_file(&meta, mpath, 1u << 20) < 0) {
		err = nb_error_set(NB_ENOTFOUND, "no conflict of %s to resolve (%s is missing)",
				   tree, mpath);
		goto done;
	}
	if (!strstr(meta.buf, "\npath ")) {
		err = nb_error_set(NB_ENOTFOUND, "the conflict of %s has no file nextbot can "
				   "remember", tree);
		report_others(report, meta.buf);
		goto done;
	}
	if ((err = resolve_pass(report, 0, meta.buf, tdir, rdir, tree, date)) < 0 ||
	    (err = resolve_pass(report, 1, meta.buf, tdir, rdir, tree, date)) < 0)
		goto done;
	report_others(report, meta.buf);
done:
	strbuf_release(&meta);
	free(rsdir);
	free(rdir);
	free(tdir);
	free(mpath);
	return err;
}
