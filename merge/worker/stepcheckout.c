/* A worker's checkout by what changed: the target tree against the worker's index. */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "merge/git/git_int.h"
#include "merge/repo/repo.h"
#include "merge/git/sha1_int.h"
#include "merge/worker/stepcheckout_int.h"
#include "merge/worker/stepfilter_int.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/strvec.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define OPEN_SUBDIR (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
#define COMPARE_MAX (64u << 20)
#define MODE_LINK 0120000
#define MODE_GITLINK 0160000
#define MODE_EXEC 0100755
#define MODE_FILE 0100644
/* beside the index in the git dir: which index a checkout wrote, and its stamp */
#define STAMP_FILE "nextbot-checkout"
#define STAMP_HEAD "nextbot-checkout 1\n"

/* A file of the target tree. */
struct want {
	size_t path;            /* its offset in `paths` */
	git_oid id;
	uint32_t mode;          /* as the index records it: 100644, 100755, 120000, 160000 */
};

/* One entry of the new index, in path order. */
struct item {
	int kept;               /* the old entry `pos`, or the written file writes[pos] */
	size_t pos;
};

struct written {
	size_t want;
	struct stat st;
};

struct step {
	const struct stepcheckout_opts *o;
	struct strbuf *why;
	struct strbuf paths;    /* the target's paths, NUL-separated */
	struct want *wants;
	size_t nr_wants, alloc_wants;
	int refused;
	int empty_tree;         /* nothing can be in the way of a file */
	/* the target's .gitattributes files (paths and ids), for the stamp */
	struct sha1_ctx attrs;
	int has_attrs;
	int macros;             /* the top .gitattributes defines macros */
	git_oid *attr_ids;      /* the target's .gitattributes files */
	size_t nr_attr_ids, alloc_attr_ids;
	struct strvec attr_paths;
	struct stepfilter *filter;      /* NULL: no filter anywhere */
	int verify;             /* compare the content of every file kept */
	unsigned char stamp[SHA1_RAWSZ];
	/* the folder last opened, kept for the next file in it */
	int root, dir_fd;
	struct strbuf dir;
};

static const char *want_path(const struct step *s, const struct want *w)
{
	return s->paths.buf + w->path;
}

__attribute__((format(printf, 2, 3)))
static int refuse(struct step *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(s->why, fmt, ap);
	va_end(ap);
	s->refused = 1;
	return 1;
}

/* Whether the attributes file `id` defines a macro (a line "[attr]..."). */
static int defines_macros(git_repository *repo, const git_oid *id)
{
	git_blob *blob = NULL;
	const char *p, *end;
	int found = 1;  /* cannot tell: as if it did (the slower, sure way) */

	if (git_blob_lookup(&blob, repo, id) < 0) {
		git_error_clear();
		return found;
	}
	p = git_blob_rawcontent(blob);
	end = p + git_blob_rawsize(blob);
	found = 0;
	while (p < end && !found) {
		const char *eol = memchr(p, '\n', end - p);

		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		found = end - p >= 6 && !memcmp(p, "[attr]", 6);
		p = eol ? eol + 1 : end;
	}
	git_blob_free(blob);
	return found;
}

/* git_tree_walk()'s callback: every file of the target, in git's (the index's) order. */
static int collect(const char *root, const git_tree_entry *e, void *payload)
{
	struct step *s = payload;
	git_filemode_t mode = git_tree_entry_filemode(e);
	const char *name = git_tree_entry_name(e);
	struct want *w;

	if (mode == GIT_FILEMODE_TREE)
		return 0;
	if (s->nr_wants == s->alloc_wants) {
		s->alloc_wants = s->alloc_wants ? 2 * s->alloc_wants : 1024;
		s->wants = xrealloc(s->wants, s->alloc_wants * sizeof(*s->wants));
	}
	w = &s->wants[s->nr_wants];
	w->path = s->paths.len;
	strbuf_addstr(&s->paths, root);
	strbuf_addstr(&s->paths, name);
	strbuf_addch(&s->paths, '\0');
	git_oid_cpy(&w->id, git_tree_entry_id(e));
	w->mode = mode == GIT_FILEMODE_LINK		? MODE_LINK
		  : mode == GIT_FILEMODE_COMMIT		? MODE_GITLINK
		  : mode == GIT_FILEMODE_BLOB_EXECUTABLE ? MODE_EXEC
							 : MODE_FILE;
	if (!gitindex_path_ok(want_path(s, w)))
		return -refuse(s, "a path git would not check out: '%s'", want_path(s, w));
	if (s->nr_wants && strcmp(want_path(s, w - 1), want_path(s, w)) >= 0)
		return -refuse(s, "a tree out of git's order at '%s'", want_path(s, w));
	if (!strcmp(name, ".gitattributes") && w->mode != MODE_GITLINK) {
		/* the path with its NUL, and the id: what chooses the filters */
		sha1_update(&s->attrs, want_path(s, w), strlen(want_path(s, w)) + 1);
		sha1_update(&s->attrs, w->id.id, GIT_OID_RAWSZ);
		s->has_attrs = 1;
		if (s->nr_attr_ids == s->alloc_attr_ids) {
			s->alloc_attr_ids = s->alloc_attr_ids ? 2 * s->alloc_attr_ids : 8;
			s->attr_ids = xrealloc(s->attr_ids, s->alloc_attr_ids * sizeof(git_oid));
		}
		git_oid_cpy(&s->attr_ids[s->nr_attr_ids++], &w->id);
		strvec_push(&s->attr_paths, want_path(s, w));
		if (!*root)
			s->macros = defines_macros(s->o->repo, &w->id);
	}
	s->nr_wants++;
	return 0;
}

static void forget_dir(struct step *s)
{
	if (s->dir_fd >= 0)
		close(s->dir_fd);
	s->dir_fd = -1;
	strbuf_reset(&s->dir);
}

/*
 * Opens the folder `part` of the folder `cur`; with `create`, one that is missing
 * is made and anything else in its place (a file, a link: never followed) is
 * removed first.  -1 with errno.
 */
static int open_part(int cur, const char *part, int create)
{
	int fd = openat(cur, part, OPEN_SUBDIR);

	if (fd >= 0 || !create)
		return fd;
	if (errno == ENOTDIR || errno == ELOOP) {
		if (unlinkat(cur, part, 0) < 0)
			return -1;
	} else if (errno != ENOENT) {
		return -1;
	}
	if (mkdirat(cur, part, 0755) < 0 && errno != EEXIST)
		return -1;
	return openat(cur, part, OPEN_SUBDIR);
}

/*
 * The folder holding `path`, opened part by part without following a symlink (made
 * when missing, with `create`).  The descriptor stays the step's; -1 with errno.
 */
static int open_parent(struct step *s, const char *path, int create)
{
	const char *slash = strrchr(path, '/'), *p = path, *end;
	size_t len = slash ? (size_t)(slash - path) : 0;
	struct strbuf part = STRBUF_INIT;
	int cur = s->root, next = s->root, e;

	if (!len)
		return s->root;
	if (s->dir_fd >= 0 && s->dir.len == len && !memcmp(s->dir.buf, path, len))
		return s->dir_fd;
	forget_dir(s);
	while (p < path + len) {
		end = memchr(p, '/', path + len - p);
		if (!end)
			end = path + len;
		strbuf_reset(&part);
		strbuf_add(&part, p, end - p);
		next = open_part(cur, part.buf, create);
		e = errno;
		if (cur != s->root)
			close(cur);
		errno = e;
		if (next < 0)
			break;
		cur = next;
		p = end + 1;
	}
	strbuf_release(&part);
	if (next < 0)
		return -1;
	s->dir_fd = next;
	strbuf_add(&s->dir, path, len);
	return next;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Reads the file `name` of folder `dfd` (never through a link) into `buf`; -1 if it cannot. */
static int read_file_at(struct strbuf *buf, int dfd, const char *name)
{
	struct stat st;
	ssize_t n = 0;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > COMPARE_MAX) {
		close(fd);
		return -1;
	}
	strbuf_grow(buf, (size_t)st.st_size + 1);
	/* to the end, whatever the size said: one read more tells a file that grew */
	while (buf->len <= (size_t)st.st_size &&
	       (n = read(fd, buf->buf + buf->len, (size_t)st.st_size + 1 - buf->len)) > 0)
		strbuf_addlen(buf, (size_t)n);
	close(fd);
	return n < 0 || buf->len > (size_t)st.st_size ? -1 : 0;
}

/*
 * Whether the file of entry `e` holds what a checkout of the entry's blob writes
 * (the blob's bytes through the filters; a link's target as it is).
 */
static int same_content(struct step *s, const struct gitindex_entry *e)
{
	struct strbuf buf = STRBUF_INIT;
	git_buf filtered = GIT_BUF_INIT;
	git_blob *blob = NULL;
	const char *want;
	size_t want_len;
	git_oid id;
	int dfd = open_parent(s, e->path, 0), same = 0;

	if (dfd < 0)
		return 0;
	if ((e->mode & 0170000) == MODE_LINK) {
		ssize_t n;

		strbuf_grow(&buf, 4097);
		n = readlinkat(dfd, base_name(e->path), buf.buf, 4097);
		same = n >= 0 && n <= 4096 &&
		       git_odb_hash(&id, buf.buf, (size_t)n, GIT_OBJECT_BLOB) == 0 &&
		       git_oid_equal(&id, &e->id);
	} else if (read_file_at(&buf, dfd, base_name(e->path)) < 0) {
		same = 0;
	} else if (!s->filter) {
		same = git_odb_hash(&id, buf.buf, buf.len, GIT_OBJECT_BLOB) == 0 &&
		       git_oid_equal(&id, &e->id);
	} else if (git_blob_lookup(&blob, s->o->repo, &e->id) == 0 &&
		   stepfilter_apply(&want, &want_len, &filtered, s->filter, blob, e->path) == 0) {
		same = want_len == buf.len && !memcmp(want, buf.buf, buf.len);
	}
	git_error_clear();
	git_buf_dispose(&filtered);
	git_blob_free(blob);
	strbuf_release(&buf);
	return same;
}

/* Whether entry `i`'s file can stay as it is (its blob and mode are the target's). */
static int unchanged(struct step *s, size_t i)
{
	const struct gitindex_entry *e = &s->o->idx->entries[i];
	unsigned char f = s->o->files[i];

	/* a submodule: a folder there is all a checkout makes */
	if (e->mode == MODE_GITLINK)
		return f == STEP_FILE_CLEAN;
	if (f == STEP_FILE_CLEAN && !s->verify)
		return 1;
	return (f == STEP_FILE_CLEAN || f == STEP_FILE_RACY) && same_content(s, e);
}

/* Compares the target with the index: what to remove, what to write, the new order. */
static void plan(struct step *s, struct strvec *gone, struct written *writes,
		 size_t *nr_writes, struct item *items, size_t *nr_items)
{
	const struct gitindex *idx = s->o->idx;
	size_t i = 0, j = 0, n = 0, w = 0;

	while (i < idx->nr || j < s->nr_wants) {
		const struct gitindex_entry *e = i < idx->nr ? &idx->entries[i] : NULL;
		const struct want *t = j < s->nr_wants ? &s->wants[j] : NULL;
		int cmp = !e ? 1 : !t ? -1 : strcmp(e->path, want_path(s, t));

		if (cmp < 0) {
			strvec_push(gone, e->path);
			i++;
			continue;
		}
		if (cmp == 0 && git_oid_equal(&e->id, &t->id) && e->mode == t->mode &&
		    unchanged(s, i)) {
			items[n].kept = 1;
			items[n++].pos = i;
		} else {
			writes[w].want = j;
			items[n].kept = 0;
			items[n++].pos = w++;
		}
		i += cmp == 0;
		j++;
	}
	*nr_writes = w;
	*nr_items = n;
}

static int cmp_desc(const void *a, const void *b)
{
	return strcmp(*(char *const *)b, *(char *const *)a);
}

/*
 * Removes the files of entries the target does not have, then folders left empty.
 * A folder where such a file was (a command's, or a submodule's) is untracked
 * now: it goes only when empty.
 */
static int remove_gone(struct step *s, struct strvec *gone)
{
	struct strvec dirs = STRVEC_INIT;
	size_t i;
	int err = 0;

	for (i = 0; i < gone->nr && !err; i++) {
		const char *path = gone->v[i], *slash;
		int dfd = open_parent(s, path, 0);

		if (dfd < 0 || unlinkat(dfd, base_name(path), 0) == 0 || errno == ENOENT)
			;       /* gone already, with its folder */
		else if (errno == EISDIR)
			unlinkat(dfd, base_name(path), AT_REMOVEDIR);
		else
			err = nb_error_errno(NB_ERROR, "cannot remove '%s'", path);
		for (slash = strrchr(path, '/'); slash; slash = memrchr(path, '/', slash - path))
			strvec_push_nodup(&dirs, xstrndup(path, slash - path));
	}
	/* deepest first: in reverse order, "a/b" comes before "a" */
	qsort(dirs.v, dirs.nr, sizeof(*dirs.v), cmp_desc);
	for (i = 0; i < dirs.nr && !err; i++) {
		int dfd;

		if (i && !strcmp(dirs.v[i], dirs.v[i - 1]))
			continue;
		/* a folder that is not empty (build output) is kept */
		dfd = open_parent(s, dirs.v[i], 0);
		if (dfd >= 0)
			unlinkat(dfd, base_name(dirs.v[i]), AT_REMOVEDIR);
		if (s->dir.len == strlen(dirs.v[i]) && !strcmp(s->dir.buf, dirs.v[i]))
			forget_dir(s);
	}
	forget_dir(s);
	strvec_clear(&dirs);
	return err;
}

static int write_content(int dfd, const char *name, uint32_t mode, const char *data,
			 size_t len, struct stat *st)
{
	struct strbuf target = STRBUF_INIT;
	size_t done = 0;
	int fd, err = 0;

	if (mode == MODE_LINK) {
		strbuf_add(&target, data, len);
		if (strlen(target.buf) != len) {
			errno = EINVAL;
			err = -1;
		} else if (symlinkat(target.buf, dfd, name) < 0 ||
			   fstatat(dfd, name, st, AT_SYMLINK_NOFOLLOW) < 0) {
			err = -1;
		}
		strbuf_release(&target);
		return err;
	}
	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    mode == MODE_EXEC ? 0755 : 0644);
	if (fd < 0)
		return -1;
	while (done < len) {
		ssize_t n = write(fd, data + done, len - done);

		if (n <= 0)
			break;
		done += n;
	}
	if (done < len || fstat(fd, st) < 0)
		err = -1;
	if (close(fd) < 0)
		err = -1;
	return err;
}

/* A submodule's folder (empty when new, as git leaves one not initialised). */
static int make_gitlink(struct step *s, int dfd, const char *path, struct stat *st)
{
	const char *name = base_name(path);

	if (mkdirat(dfd, name, 0755) < 0 && errno != EEXIST)
		return nb_error_errno(NB_ERROR, "cannot make the folder of submodule '%s'", path);
	if (fstatat(dfd, name, st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st->st_mode))
		return 0;
	if (unlinkat(dfd, name, 0) < 0 || mkdirat(dfd, name, 0755) < 0 ||
	    fstatat(dfd, name, st, AT_SYMLINK_NOFOLLOW) < 0)
		return nb_error_errno(NB_ERROR, "cannot make the folder of submodule '%s'", path);
	return 0;
}

/*
 * Writes the target's file `t` in place of whatever is there (a folder a command
 * made included); its lstat data in `st`.
 */
static int write_one(struct step *s, const struct want *t, struct stat *st)
{
	const char *path = want_path(s, t), *name = base_name(path);
	git_buf filtered = GIT_BUF_INIT;
	git_blob *blob = NULL;
	const char *data;
	size_t len;
	int dfd = open_parent(s, path, 1), err = 0;

	if (dfd < 0)
		return nb_error_errno(NB_ERROR, "cannot make the folder of '%s'", path);
	if (t->mode == MODE_GITLINK)
		return make_gitlink(s, dfd, path, st);
	if (!s->empty_tree && unlinkat(dfd, name, 0) < 0 && errno != ENOENT &&
	    (errno != EISDIR || (err = file_remove_at(dfd, name, path)) < 0))
		return err < 0 ? err : nb_error_errno(NB_ERROR, "cannot replace '%s'", path);
	if (git_blob_lookup(&blob, s->o->repo, &t->id) < 0)
		return nb_error_set(NB_ERROR, "no blob for '%s': %s", path, merge_git_error());
	if (t->mode == MODE_LINK)
		err = (data = git_blob_rawcontent(blob), len = (size_t)git_blob_rawsize(blob), 0);
	else
		err = stepfilter_apply(&data, &len, &filtered, s->filter, blob, path);
	if (!err && write_content(dfd, name, t->mode, data, len, st) < 0)
		err = errno == EINVAL ? refuse(s, "a link target with a NUL byte at '%s'", path)
				      : nb_error_errno(NB_ERROR, "cannot write '%s'", path);
	git_buf_dispose(&filtered);
	git_blob_free(blob);
	return err;
}

static void add_hex(struct strbuf *sb, const unsigned char *raw)
{
	size_t i;

	for (i = 0; i < SHA1_RAWSZ; i++)
		strbuf_addf(sb, "%02x", raw[i]);
}

/*
 * Whether the stamp file says that the index read is the one a checkout of
 * nextbot's wrote, with the stamp `stamp`.
 */
static int stamp_matches(const struct step *s)
{
	struct strbuf want = STRBUF_INIT;
	char got[256];
	ssize_t n = -1;
	int fd = openat(s->o->gfd, STAMP_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	int same;

	if (fd >= 0) {
		n = read(fd, got, sizeof(got));
		close(fd);
	}
	strbuf_addstr(&want, STAMP_HEAD);
	add_hex(&want, s->o->idx->checksum);
	strbuf_addch(&want, ' ');
	add_hex(&want, s->stamp);
	strbuf_addch(&want, '\n');
	same = n == (ssize_t)want.len && !memcmp(got, want.buf, want.len);
	strbuf_release(&want);
	return same;
}

static int write_index(struct step *s, const struct item *items, size_t nr_items,
		       const struct written *writes)
{
	struct strbuf out = STRBUF_INIT, line = STRBUF_INIT;
	size_t i;
	int err;

	strbuf_grow(&out, s->o->idx->buf.len + 4096);
	gitindex_out_begin(&out);
	for (i = 0; i < nr_items; i++) {
		const struct written *w = &writes[items[i].pos];

		if (items[i].kept)
			gitindex_out_raw(&out, &s->o->idx->entries[items[i].pos]);
		else
			gitindex_out_new(&out, want_path(s, &s->wants[w->want]), &w->st,
					 s->wants[w->want].mode, &s->wants[w->want].id);
	}
	gitindex_out_finish(&out, nr_items);
	err = gitindex_write(s->o->gfd, "index", &out, s->o->git);
	/* after the index: a stamp that names another index is no stamp */
	if (!err) {
		strbuf_reset(&line);
		strbuf_addstr(&line, STAMP_HEAD);
		add_hex(&line, (const unsigned char *)out.buf + out.len - SHA1_RAWSZ);
		strbuf_addch(&line, ' ');
		add_hex(&line, s->stamp);
		strbuf_addch(&line, '\n');
		err = gitindex_write(s->o->gfd, STAMP_FILE, &line, s->o->git);
	}
	strbuf_release(&line);
	strbuf_release(&out);
	return err;
}

static int apply(struct step *s)
{
	struct strvec gone = STRVEC_INIT;
	struct written *writes = xcalloc(s->nr_wants + 1, sizeof(*writes));
	struct item *items = xcalloc(s->o->idx->nr + s->nr_wants + 1, sizeof(*items));
	size_t nr_writes, nr_items, i;
	int err;

	plan(s, &gone, writes, &nr_writes, items, &nr_items);
	err = remove_gone(s, &gone);
	for (i = 0; i < nr_writes && !err; i++)
		err = write_one(s, &s->wants[writes[i].want], &writes[i].st);
	if (!err)
		err = write_index(s, items, nr_items, writes);
	strvec_clear(&gone);
	free(writes);
	free(items);
	return err;
}

/*
 * The stamp of this checkout: what, beside each blob, the bytes written depend
 * on (the attributes of the commit and from outside the tree).  Every file is
 * compared when the stamp file holds another stamp, or names another index (git
 * rewrote it: `git status` does, and a command could have changed anything).
 */
static int decide_filters(struct step *s)
{
	const struct stepcheckout_opts *o = s->o;
	const char *config = o->filter_config ? o->filter_config : "";
	struct sha1_ctx c;
	unsigned char attrs[SHA1_RAWSZ];

	sha1_final(attrs, &s->attrs);
	sha1_init(&c);
	sha1_update(&c, "nextbot checkout 1\n", 19);
	sha1_update(&c, config, strlen(config) + 1);
	if (s->has_attrs)
		sha1_update(&c, attrs, sizeof(attrs));
	sha1_final(s->stamp, &c);
	s->verify = o->idx->nr && !stamp_matches(s);
	if (!s->has_attrs && !*config)
		return 0;
	return stepfilter_open(&s->filter, &(struct stepfilter_source){
					   .git = o->git, .gfd = o->gfd, .commit = o->commit,
					   .attribute_paths = (const char *const *)s->attr_paths.v,
					   .attributes = s->attr_ids,
					   .attributes_nr = s->nr_attr_ids, .macros = s->macros,
					   .config = config });
}

int stepcheckout_run(struct strbuf *why, const struct stepcheckout_opts *o)
{
	struct step s = { .o = o, .why = why, .paths = STRBUF_INIT, .empty_tree = !o->files,
			  .root = o->tfd, .dir_fd = -1, .dir = STRBUF_INIT,
			  .attr_paths = STRVEC_INIT };
	int err;

	sha1_init(&s.attrs);
	err = git_tree_walk(o->target, GIT_TREEWALK_PRE, collect, &s);
	if (s.refused)
		err = 1;
	else if (err < 0)
		err = nb_error_set(NB_ERROR, "cannot read the tree: %s", merge_git_error());
	else if ((err = decide_filters(&s)) == 0)
		err = apply(&s);
	forget_dir(&s);
	stepfilter_free(s.filter);
	free(s.attr_ids);
	strvec_clear(&s.attr_paths);
	strbuf_release(&s.dir);
	strbuf_release(&s.paths);
	free(s.wants);
	return err;
}
