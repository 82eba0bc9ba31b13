/* A worker's incremental checkout by what changed: the target tree against the worker's index. */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "merge/git_int.h"
#include "merge/merge_global.h"
#include "merge/stepcheckout_int.h"
#include "util/error.h"
#include "util/strvec.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define OPEN_SUBDIR (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
#define RACY_COMPARE_MAX (64u << 20)

/* A file of the target tree. */
struct want {
	size_t path;            /* its offset in `paths` */
	git_oid id;
	uint32_t mode;          /* as the index records it: 100644, 100755 or 120000 */
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
	git_repository *repo;
	const struct gitindex *idx;
	struct strbuf *why;
	struct strbuf paths;    /* the target's paths, NUL-separated */
	struct want *wants;
	size_t nr_wants, alloc_wants;
	int refused;
	int empty_tree;         /* nothing can be in the way of a file */
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

/* git_tree_walk()'s callback: every file of the target, in git's (the index's) order. */
static int collect(const char *root, const git_tree_entry *e, void *payload)
{
	struct step *s = payload;
	git_filemode_t mode = git_tree_entry_filemode(e);
	const char *name = git_tree_entry_name(e);
	struct want *w;

	if (mode == GIT_FILEMODE_TREE)
		return 0;
	if (mode == GIT_FILEMODE_COMMIT)
		return -refuse(s, "a submodule at '%s%s'", root, name);
	if (!strcmp(name, ".gitattributes"))
		return -refuse(s, "attributes at '%s%s'", root, name);
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
	w->mode = mode == GIT_FILEMODE_LINK ? 0120000
		  : mode == GIT_FILEMODE_BLOB_EXECUTABLE ? 0100755 : 0100644;
	if (!gitindex_path_ok(want_path(s, w)))
		return -refuse(s, "a path git would not check out: '%s'", want_path(s, w));
	if (s->nr_wants && strcmp(want_path(s, w - 1), want_path(s, w)) >= 0)
		return -refuse(s, "a tree out of git's order at '%s'", want_path(s, w));
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
		next = openat(cur, part.buf, OPEN_SUBDIR);
		if (next < 0 && errno == ENOENT && create &&
		    (mkdirat(cur, part.buf, 0755) == 0 || errno == EEXIST))
			next = openat(cur, part.buf, OPEN_SUBDIR);
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

/* Whether the file of a racily clean entry still holds the entry's blob. */
static int same_content(struct step *s, const struct gitindex_entry *e)
{
	struct strbuf buf = STRBUF_INIT;
	git_oid id;
	ssize_t n = -1;
	int dfd, fd = -1, same = 0;

	/* a file that large is rewritten rather than read twice */
	if (e->size > RACY_COMPARE_MAX)
		return 0;
	dfd = open_parent(s, e->path, 0);
	strbuf_grow(&buf, (size_t)e->size + 1);
	if (dfd >= 0 && (e->mode & 0170000) == 0120000) {
		n = readlinkat(dfd, base_name(e->path), buf.buf, (size_t)e->size + 1);
	} else if (dfd >= 0 &&
		   (fd = openat(dfd, base_name(e->path),
				O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) >= 0) {
		size_t got = 0;

		/* one byte more than the entry's size tells a longer file */
		while (got <= e->size && (n = read(fd, buf.buf + got, e->size + 1 - got)) > 0)
			got += n;
		n = n < 0 ? -1 : (ssize_t)got;
		close(fd);
	}
	if (n == (ssize_t)e->size &&
	    git_odb_hash(&id, buf.buf, (size_t)n, GIT_OBJECT_BLOB) == 0)
		same = git_oid_equal(&id, &e->id);
	strbuf_release(&buf);
	return same;
}

/* Compares the target with the index: what to remove, what to write, the new order. */
static void plan(struct step *s, const unsigned char *files, struct strvec *gone,
		 struct written *writes, size_t *nr_writes, struct item *items, size_t *nr_items)
{
	const struct gitindex *idx = s->idx;
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
		    (files[i] == STEP_FILE_CLEAN ||
		     (files[i] == STEP_FILE_RACY && same_content(s, e)))) {
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

/* Removes the files of entries the target does not have, then folders left empty. */
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
			err = refuse(s, "a folder where the index has a file at '%s'", path);
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

static int write_content(int dfd, const char *name, const struct want *t, const void *data,
			 size_t len, struct stat *st)
{
	struct strbuf target = STRBUF_INIT;
	size_t done = 0;
	int fd, err = 0;

	if (t->mode == 0120000) {
		strbuf_add(&target, data, len);
		if (strlen(target.buf) != len || symlinkat(target.buf, dfd, name) < 0 ||
		    fstatat(dfd, name, st, AT_SYMLINK_NOFOLLOW) < 0)
			err = -1;
		strbuf_release(&target);
		return err;
	}
	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    t->mode == 0100755 ? 0755 : 0644);
	if (fd < 0)
		return -1;
	while (done < len) {
		ssize_t n = write(fd, (const char *)data + done, len - done);

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

/* Writes the target's file `t` in place of whatever is there; its lstat data in `st`. */
static int write_one(struct step *s, const struct want *t, struct stat *st)
{
	const char *path = want_path(s, t), *name = base_name(path);
	git_blob *blob = NULL;
	int dfd = open_parent(s, path, 1), err = 0;

	if (dfd < 0)
		return errno == ENOTDIR || errno == ELOOP || errno == EEXIST
		       ? refuse(s, "a file or link in the way of the folder of '%s'", path)
		       : nb_error_errno(NB_ERROR, "cannot make the folder of '%s'", path);
	if (!s->empty_tree && unlinkat(dfd, name, 0) < 0 && errno != ENOENT)
		return errno == EISDIR ? refuse(s, "a folder in the way of '%s'", path)
				       : nb_error_errno(NB_ERROR, "cannot replace '%s'", path);
	if (git_blob_lookup(&blob, s->repo, &t->id) < 0)
		return nb_error_set(NB_ERROR, "no blob for '%s': %s", path, merge_git_error());
	if (write_content(dfd, name, t, git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob),
			  st) < 0)
		err = errno == EINVAL ? refuse(s, "a link target with a NUL byte at '%s'", path)
		      : errno == EEXIST ? refuse(s, "something in the way of '%s'", path)
					: nb_error_errno(NB_ERROR, "cannot write '%s'", path);
	git_blob_free(blob);
	return err;
}

static int write_index(struct step *s, const struct item *items, size_t nr_items,
		       const struct written *writes, int gfd, const char *where)
{
	struct strbuf out = STRBUF_INIT;
	size_t i;
	int err;

	strbuf_grow(&out, s->idx->buf.len + 4096);
	gitindex_out_begin(&out);
	for (i = 0; i < nr_items; i++) {
		const struct written *w = &writes[items[i].pos];

		if (items[i].kept)
			gitindex_out_raw(&out, &s->idx->entries[items[i].pos]);
		else
			gitindex_out_new(&out, want_path(s, &s->wants[w->want]), &w->st,
					 s->wants[w->want].mode, &s->wants[w->want].id);
	}
	gitindex_out_finish(&out, nr_items);
	err = gitindex_write(gfd, "index", &out, where);
	strbuf_release(&out);
	return err;
}

static int apply(struct step *s, struct strvec *written, const unsigned char *files, int gfd,
		 const char *where)
{
	struct strvec gone = STRVEC_INIT;
	struct written *writes = xcalloc(s->nr_wants + 1, sizeof(*writes));
	struct item *items = xcalloc(s->idx->nr + s->nr_wants + 1, sizeof(*items));
	size_t nr_writes, nr_items, i;
	int err;

	plan(s, files, &gone, writes, &nr_writes, items, &nr_items);
	err = remove_gone(s, &gone);
	for (i = 0; i < nr_writes && !err; i++) {
		err = write_one(s, &s->wants[writes[i].want], &writes[i].st);
		if (!err)
			strvec_push(written, want_path(s, &s->wants[writes[i].want]));
	}
	if (!err)
		err = write_index(s, items, nr_items, writes, gfd, where);
	strvec_clear(&gone);
	free(writes);
	free(items);
	return err;
}

int stepcheckout_run(struct strbuf *why, struct strvec *written, git_repository *repo,
		     git_tree *target, const struct gitindex *idx, const unsigned char *files,
		     int filters, int tfd, int gfd, const char *where)
{
	struct step s = { repo, idx, why, STRBUF_INIT, NULL, 0, 0, 0, !files, tfd, -1,
			  STRBUF_INIT };
	int err;

	if (filters) {
		strbuf_addstr(why, "the configuration asks for attribute filters");
		return 1;
	}
	err = git_tree_walk(target, GIT_TREEWALK_PRE, collect, &s);
	if (s.refused)
		err = 1;
	else if (err < 0)
		err = nb_error_set(NB_ERROR, "cannot read the tree: %s", merge_git_error());
	else
		err = apply(&s, written, files, gfd, where);
	forget_dir(&s);
	strbuf_release(&s.dir);
	strbuf_release(&s.paths);
	free(s.wants);
	return err;
}
