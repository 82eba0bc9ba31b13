/* Fetching from a repository on this host by copying what is new, shaped by the change. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <git2.h>

#include "merge/transport/localfetch_int.h"
#include "merge/git/oidset_int.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* "%2F" and friends decoded; NULL when an escape is broken or decodes to NUL. */
static char *unescape(const char *s)
{
	char *out = xmalloc(strlen(s) + 1), *o = out;

	for (; *s; s++) {
		int hi, lo;

		if (*s != '%') {
			*o++ = *s;
			continue;
		}
		hi = str_hexval((unsigned char)s[1]);
		lo = hi < 0 ? -1 : str_hexval((unsigned char)s[2]);
		if (lo < 0 || (hi == 0 && lo == 0)) {
			free(out);
			return NULL;
		}
		*o++ = (char)(hi * 16 + lo);
		s += 2;
	}
	*o = '\0';
	return out;
}

char *localfetch_path(const char *url)
{
	struct stat st;

	if (!strncmp(url, "file://", 7)) {
		const char *p = url + 7;

		if (!strncmp(p, "localhost/", 10))
			p += 9;
		return *p == '/' ? unescape(p) : NULL;
	}
	if (strstr(url, "://") || stat(url, &st) < 0 || !S_ISDIR(st.st_mode))
		return NULL;
	return xstrdup(url);
}

size_t localfetch_whole_packs = LOCALFETCH_WHOLE_PACKS;

struct frame {
	git_oid id;
	int expanded;
};

struct copy {
	git_repository *src;
	git_odb *dst_odb;
	git_packbuilder *pb;
	struct oidset seen;             /* objects decided on: queued for the pack, or had */
	struct oidset expanded;         /* commits whose parents were looked at */
	git_oid *commits;               /* new commits, parents before children */
	size_t nr_commits, alloc_commits;
	struct strbuf path;
	size_t steps;
	localfetch_progress_fn progress;
	void *payload;
	unsigned long long bytes;
	int stopped;                    /* the progress callback's value, when it stopped us */
};

static int tick(struct copy *c)
{
	int rc;

	if (!c->progress || ++c->steps % 4096)
		return 0;
	if ((rc = c->progress(c->bytes, c->payload)) < 0)
		c->stopped = rc;
	return rc < 0 ? rc : 0;
}

/*
 * Without a refresh: a miss would rescan objects/pack each time, and a night adds a pack
 * per url.  An object written since the handle last looked is copied again, harmlessly.
 */
static int has(struct copy *c, const git_oid *id)
{
	return git_odb_exists_ext(c->dst_odb, id, GIT_ODB_LOOKUP_NO_REFRESH);
}

/* An object of the source that cannot be read: which, why, and a shallow source named. */
static int missing(struct copy *c, const git_oid *id, const char *what, int error)
{
	const git_error *last = git_error_last();
	char hex[GIT_OID_HEXSZ + 1];
	/* the message is libgit2's buffer, which git_error_set() overwrites: copy it */
	char *why = xstrdup(last && last->message ? last->message : "missing");

	git_oid_tostr(hex, sizeof(hex), id);
	git_error_set(GIT_ERROR_ODB, "%s %s cannot be read in the remote repository (%s)%s",
		      what, hex, why,
		      git_repository_is_shallow(c->src) == 1
			      ? "; it is a shallow clone, which cannot be fetched from" : "");
	free(why);
	return error < 0 ? error : -1;
}

/*
 * Appends to c->commits every commit reachable from `tip` that the work repository
 * lacks, each after its parents (an iterative depth-first walk: a history of a
 * million commits must not recurse).
 */
static int order_commits(struct copy *c, const git_oid *tip)
{
	struct frame *stack = NULL;
	size_t nr = 0, alloc = 0;
	int error = 0;

	if (oidset_has(&c->expanded, tip) || has(c, tip))
		return 0;
	ALLOC_GROW(stack, nr + 1, alloc);
	stack[nr].id = *tip;
	stack[nr++].expanded = 0;
	while (nr && !error) {
		struct frame *f = &stack[nr - 1];
		git_commit *commit;
		unsigned int i, np;

		if (f->expanded || oidset_has(&c->expanded, &f->id)) {
			if (f->expanded) {
				ALLOC_GROW(c->commits, c->nr_commits + 1, c->alloc_commits);
				c->commits[c->nr_commits++] = f->id;
			}
			nr--;
			continue;
		}
		f->expanded = 1;
		oidset_add(&c->expanded, &f->id);
		if ((error = git_commit_lookup(&commit, c->src, &f->id)) < 0) {
			error = missing(c, &f->id, "commit", error);
			break;
		}
		np = git_commit_parentcount(commit);
		for (i = 0; i < np; i++) {
			const git_oid *p = git_commit_parent_id(commit, i);

			if (oidset_has(&c->expanded, p) || has(c, p))
				continue;
			ALLOC_GROW(stack, nr + 1, alloc);
			stack[nr].id = *p;
			stack[nr++].expanded = 0;
		}
		git_commit_free(commit);
		error = tick(c);
	}
	free(stack);
	return error;
}

/* Queues object `id` (named by c->path, for delta search) unless it is known. */
static int queue(struct copy *c, const git_oid *id, int *queued)
{
	*queued = 0;
	if (!oidset_add(&c->seen, id) || has(c, id))
		return 0;
	*queued = 1;
	return git_packbuilder_insert(c->pb, id, c->path.len ? c->path.buf : NULL);
}

/*
 * Queues tree `id` and whatever in it differs from `old` (the same path in the
 * first parent's tree; NULL: nothing there).  What equals `old` is the parent's,
 * which was copied or had before this commit: commits go parents first.
 */
static int queue_tree(struct copy *c, const git_oid *id, const git_oid *old, unsigned depth)
{
	git_tree *tree = NULL, *prev = NULL;
	size_t i, n, len = c->path.len;
	int error, queued;

	if (old && git_oid_equal(id, old))
		return 0;
	if ((error = queue(c, id, &queued)) < 0 || !queued)
		return error;
	if (depth >= LOCALFETCH_MAX_DEPTH) {
		git_error_set(GIT_ERROR_INVALID, "a tree at %s is nested deeper than %d levels",
			      c->path.buf, LOCALFETCH_MAX_DEPTH);
		return -1;
	}
	if ((error = git_tree_lookup(&tree, c->src, id)) < 0)
		return missing(c, id, "tree", error);
	if (old && (error = git_tree_lookup(&prev, c->src, old)) < 0) {
		error = missing(c, old, "tree", error);
		goto done;
	}
	n = git_tree_entrycount(tree);
	for (i = 0; i < n && !error; i++) {
		const git_tree_entry *e = git_tree_entry_byindex(tree, i);
		const git_tree_entry *o = prev ? git_tree_entry_byname(prev, git_tree_entry_name(e))
					       : NULL;
		const git_oid *eid = git_tree_entry_id(e);
		git_object_t type = git_tree_entry_type(e);

		if (o && git_oid_equal(eid, git_tree_entry_id(o)))
			continue;
		if (len)
			strbuf_addch(&c->path, '/');
		strbuf_addstr(&c->path, git_tree_entry_name(e));
		if (type == GIT_OBJECT_TREE)
			error = queue_tree(c, eid,
					   o && git_tree_entry_type(o) == GIT_OBJECT_TREE
						   ? git_tree_entry_id(o) : NULL,
					   depth + 1);
		else if (type == GIT_OBJECT_BLOB)
			error = queue(c, eid, &queued);
		/* a gitlink (submodule) names a commit of another repository */
		strbuf_setlen(&c->path, len);
		if (!error)
			error = tick(c);
	}
done:
	git_tree_free(prev);
	git_tree_free(tree);
	return error;
}

static int queue_commit(struct copy *c, const git_oid *id)
{
	git_commit *commit = NULL, *parent = NULL;
	const git_oid *old = NULL;
	int error, queued;

	if ((error = git_commit_lookup(&commit, c->src, id)) < 0)
		return missing(c, id, "commit", error);
	if ((error = queue(c, id, &queued)) < 0)
		goto done;
	if (git_commit_parentcount(commit)) {
		if ((error = git_commit_parent(&parent, commit, 0)) < 0) {
			error = missing(c, git_commit_parent_id(commit, 0), "commit", error);
			goto done;
		}
		old = git_commit_tree_id(parent);
	}
	strbuf_setlen(&c->path, 0);
	error = queue_tree(c, git_commit_tree_id(commit), old, 0);
done:
	git_commit_free(parent);
	git_commit_free(commit);
	return error;
}

/* An annotated tag's objects are queued; *commit is what it peels to. */
static int peel_tip(struct copy *c, git_oid *commit, const git_oid *tip)
{
	git_object *obj = NULL;
	int error = 0, queued, hops = 0;

	*commit = *tip;
	while (!error) {
		if ((error = git_object_lookup(&obj, c->src, commit, GIT_OBJECT_ANY)) < 0)
			return missing(c, commit, "object", error);
		if (git_object_type(obj) == GIT_OBJECT_COMMIT)
			break;
		if (git_object_type(obj) != GIT_OBJECT_TAG || ++hops > 16) {
			git_error_set(GIT_ERROR_INVALID, "the tip is not a commit");
			error = -1;
		} else if (!(error = queue(c, commit, &queued))) {
			*commit = *git_tag_target_id((git_tag *)obj);
		}
		git_object_free(obj);
		obj = NULL;
	}
	git_object_free(obj);
	return error;
}

static int append(void *buf, size_t size, void *payload)
{
	struct copy *c = ((void **)payload)[0];
	git_odb_writepack *wp = ((void **)payload)[1];
	git_indexer_progress *stats = ((void **)payload)[2];
	int rc;

	c->bytes += size;
	if (c->progress && (rc = c->progress(c->bytes, c->payload)) < 0) {
		c->stopped = rc;
		return rc;
	}
	return wp->append(wp, buf, size, stats);
}

/*
 * The packbuilder's progress, at most every half second: while it queues, and through
 * its delta search, which writes nothing for minutes on a long history (the fetch
 * watcher gave a first night's copy up after 600 s without a beat).  Called from the
 * packbuilder's threads, one at a time (under its progress lock).
 */
static int on_packed(int stage, uint32_t current, uint32_t total, void *payload)
{
	struct copy *c = payload;
	int rc;

	(void)stage;
	(void)current;
	(void)total;
	if (!c->progress)
		return 0;
	if ((rc = c->progress(c->bytes, c->payload)) < 0)
		c->stopped = rc;
	return rc < 0 ? rc : 0;
}

/* The indexer's progress: a beat while it resolves deltas, which reads nothing. */
static int on_indexed(const git_indexer_progress *stats, void *payload)
{
	struct copy *c = payload;
	int rc;

	(void)stats;
	if (!c->progress || ++c->steps % 1024)
		return 0;
	if ((rc = c->progress(c->bytes, c->payload)) < 0)
		c->stopped = rc;
	return rc < 0 ? rc : 0;
}

static int write_pack(struct copy *c)
{
	git_odb_writepack *wp = NULL;
	git_indexer_progress stats;
	void *ctx[3];
	int error;

	memset(&stats, 0, sizeof(stats));
	if ((error = git_odb_write_pack(&wp, c->dst_odb, on_indexed, c)) < 0)
		return error;
	ctx[0] = c;
	ctx[1] = wp;
	ctx[2] = &stats;
	git_packbuilder_set_threads(c->pb, 0);
	if (!(error = git_packbuilder_foreach(c->pb, append, ctx)))
		error = wp->commit(wp, &stats);
	wp->free(wp);
	return error;
}

/* Whether object directory `dir` ("…/objects/") holds a loose object. */
static int has_loose(struct strbuf *dir)
{
	size_t len = dir->len;
	DIR *d = opendir(dir->buf);
	struct dirent *de;
	int loose = 0;

	if (!d)
		return 1;
	while (!loose && (de = readdir(d))) {
		const unsigned char *nm = (const unsigned char *)de->d_name;
		DIR *sub;

		if (strlen(de->d_name) != 2 || str_hexval(nm[0]) < 0 || str_hexval(nm[1]) < 0)
			continue;
		strbuf_setlen(dir, len);
		strbuf_addstr(dir, de->d_name);
		if ((sub = opendir(dir->buf))) {
			struct dirent *o;

			while (!loose && (o = readdir(sub)))
				loose = o->d_name[0] != '.';
			closedir(sub);
		}
	}
	closedir(d);
	strbuf_setlen(dir, len);
	return loose;
}

/*
 * Adds object directory `dir` and, through objects/info/alternates, those it borrows
 * from (git follows five levels) to dirs[] (canonical paths ending in '/', each once).
 * 0 when every one keeps its objects in packs only; -1 when one has a loose object,
 * cannot be read, or is named in a way this does not follow (a quoted path).
 */
static int add_object_dirs(char ***dirs, size_t *nr, size_t *alloc, const char *dir,
			   int depth)
{
	struct strbuf path = STRBUF_INIT, file = STRBUF_INIT;
	char *real = realpath(dir, NULL), *line, *save = NULL;
	size_t i;
	int error = 0;

	if (!real || depth > LOCALFETCH_MAX_ALTERNATES) {
		free(real);
		return -1;
	}
	strbuf_addf(&path, "%s/", real);
	free(real);
	for (i = 0; i < *nr; i++)
		if (!strcmp((*dirs)[i], path.buf)) {
			strbuf_release(&path);
			return 0;
		}
	if (has_loose(&path)) {
		strbuf_release(&path);
		return -1;
	}
	ALLOC_GROW(*dirs, *nr + 1, *alloc);
	(*dirs)[(*nr)++] = xstrdup(path.buf);
	strbuf_addstr(&path, "info/alternates");
	if (access(path.buf, F_OK) < 0) {
		error = errno == ENOENT ? 0 : -1;
		goto done;
	}
	if (strbuf_read_file(&file, path.buf, 1 << 20) < 0) {
		error = -1;
		goto done;
	}
	strbuf_setlen(&path, path.len - strlen("info/alternates"));
	for (line = strtok_r(file.buf, "\n", &save); line && !error;
	     line = strtok_r(NULL, "\n", &save)) {
		char *at;

		if (!*line || *line == '#')
			continue;
		if (*line == '"') {
			error = -1;
			continue;
		}
		/* a relative path is relative to the objects directory that names it */
		at = *line == '/' ? xstrdup(line) : xstrfmt("%s%s", path.buf, line);
		error = add_object_dirs(dirs, nr, alloc, at, depth + 1);
		free(at);
	}
done:
	strbuf_release(&file);
	strbuf_release(&path);
	return error;
}

/*
 * The object directories `src` reads (its own, then those it borrows from through
 * objects/info/alternates), when all of them keep every object in packs: no loose
 * object (a packed commit could name a loose tree), `src` not shallow.  Then their
 * packs, indexed again here, hold the closure of every ref.  *nr = 0 otherwise.
 */
static void packed_object_dirs(char ***dirs, size_t *nr, git_repository *src)
{
	size_t alloc = 0, i;
	char *own = xstrfmt("%sobjects", git_repository_path(src));

	*dirs = NULL;
	*nr = 0;
	if (git_repository_is_shallow(src) != 0 ||
	    add_object_dirs(dirs, nr, &alloc, own, 0) < 0) {
		for (i = 0; i < *nr; i++)
			free((*dirs)[i]);
		free(*dirs);
		*dirs = NULL;
		*nr = 0;
	}
	free(own);
}

/* One pack file of the source streamed through `dst`'s indexer (which checks it). */
static int index_pack(struct copy *c, const char *path)
{
	git_odb_writepack *wp = NULL;
	git_indexer_progress stats;
	char *buf = xmalloc(1 << 20);
	ssize_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), error;

	memset(&stats, 0, sizeof(stats));
	if (fd < 0) {
		git_error_set(GIT_ERROR_OS, "cannot open '%s': %s", path, strerror(errno));
		free(buf);
		return -1;
	}
	if ((error = git_odb_write_pack(&wp, c->dst_odb, on_indexed, c)) < 0)
		goto done;
	while (!error && (got = read(fd, buf, 1 << 20)) > 0) {
		c->bytes += (unsigned long long)got;
		if (c->progress && (error = c->progress(c->bytes, c->payload)) < 0)
			c->stopped = error;
		else
			error = wp->append(wp, buf, (size_t)got, &stats);
	}
	if (!error && got < 0) {
		git_error_set(GIT_ERROR_OS, "cannot read '%s': %s", path, strerror(errno));
		error = -1;
	}
	if (!error)
		error = wp->commit(wp, &stats);
	if (error < 0 && !c->stopped) {
		const git_error *last = git_error_last();
		/* libgit2's buffer, which git_error_set() overwrites: copied */
		char *why = xstrdup(last && last->message ? last->message : "unknown error");

		git_error_set(GIT_ERROR_ODB, "cannot index '%s': %s", path, why);
		free(why);
	}
done:
	if (wp)
		wp->free(wp);
	close(fd);
	free(buf);
	return error;
}

/* Every finished pack of object directory `dir` ("…/objects/") indexed into dst. */
static int copy_dir_packs(struct copy *c, const char *dir)
{
	struct strbuf path = STRBUF_INIT;
	DIR *d;
	struct dirent *de;
	size_t len;
	int error = 0;

	strbuf_addf(&path, "%spack/", dir);
	len = path.len;
	if (!(d = opendir(path.buf))) {
		strbuf_release(&path);
		return 0;
	}
	while (!error && (de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (n < 6 || strcmp(de->d_name + n - 5, ".pack") || de->d_name[0] == '.')
			continue;
		strbuf_setlen(&path, len);
		strbuf_add(&path, de->d_name, n - 5);
		strbuf_addstr(&path, ".idx");
		if (access(path.buf, F_OK) < 0)
			continue;               /* a pack being written */
		strbuf_setlen(&path, len);
		strbuf_addstr(&path, de->d_name);
		error = index_pack(c, path.buf);
	}
	closedir(d);
	strbuf_release(&path);
	return error;
}

/*
 * A first copy of a long history (a first night's mainline): rather than a pack built
 * object by object (libgit2's packbuilder searches deltas anew, without reusing the
 * source's: 200,000 commits took minutes and over 600 MB), the packs of the source
 * and of the repositories it borrows from (objects/info/alternates: a grokmirror
 * tree, the simulator's remotes) are indexed into `dst` as they are.  `dst` gets its
 * own copy, as `git clone --no-local` would, never a link to the source's objects:
 * a remote can be deleted, or its gc can drop what it no longer needs.  Only when
 * those packs are all there is (packed_object_dirs()); what `dst` then still lacks,
 * nothing normally, goes the usual way.  Returns 1 when the packs were copied.
 */
static int copy_packs(struct copy *c)
{
	char **dirs;
	size_t nr, i;
	int error = 0;

	packed_object_dirs(&dirs, &nr, c->src);
	for (i = 0; i < nr && !error; i++)
		error = copy_dir_packs(c, dirs[i]);
	for (i = 0; i < nr; i++)
		free(dirs[i]);
	free(dirs);
	if (error < 0 && !c->stopped) {
		/*
		 * A pack dst's indexer refuses (a corrupt one in a repository borrowed
		 * from): what dst lacks goes object by object, which needs only the
		 * objects the tips reach, and names any of them that cannot be read.
		 */
		const git_error *last = git_error_last();

		log_warn("%s; copying object by object",
			 last && last->message ? last->message : "a pack cannot be indexed");
		error = 0;
		nr = 0;
	}
	if (!error)
		error = git_odb_refresh(c->dst_odb);
	return error < 0 ? error : nr > 0;
}

int localfetch_copy(git_repository *dst, git_repository *src, const git_oid *tips, size_t n,
		    localfetch_progress_fn progress, void *payload)
{
	struct copy c;
	ssize_t cached = 0, cache_max = 0;
	size_t i;
	int error;

	/*
	 * Every commit and small tree looked up here would stay in libgit2's object cache
	 * (256 MB of raw objects by default, twice that parsed): a first night's copy of
	 * 200,000 commits grew to 678 MB.  Each object is needed once, its parent's tree
	 * just after it, so a small cache keeps what is reused.  Caching is global: the
	 * copy runs in the fetch child, where nothing else uses libgit2 meanwhile.
	 */
	git_libgit2_opts(GIT_OPT_GET_CACHED_MEMORY, &cached, &cache_max);
	git_libgit2_opts(GIT_OPT_SET_CACHE_MAX_SIZE, (ssize_t)LOCALFETCH_CACHE_MAX);
	memset(&c, 0, sizeof(c));
	c.src = src;
	c.progress = progress;
	c.payload = payload;
	strbuf_init(&c.path, 0);
	if ((error = git_repository_odb(&c.dst_odb, dst)) < 0 ||
	    (error = git_packbuilder_new(&c.pb, src)) < 0 ||
	    (error = git_packbuilder_set_callbacks(c.pb, on_packed, &c)) < 0)
		goto done;
	for (i = 0; i < n && !error; i++) {
		git_oid commit;

		if (!(error = peel_tip(&c, &commit, &tips[i])))
			error = order_commits(&c, &commit);
	}
	if (!error && c.nr_commits >= localfetch_whole_packs && (error = copy_packs(&c)) > 0) {
		error = 0;
		c.nr_commits = 0;
		oidset_release(&c.seen);
		oidset_release(&c.expanded);
		for (i = 0; i < n && !error; i++) {
			git_oid commit;

			if (!(error = peel_tip(&c, &commit, &tips[i])))
				error = order_commits(&c, &commit);
		}
	}
	for (i = 0; i < c.nr_commits && !error; i++)
		error = queue_commit(&c, &c.commits[i]);
	if (!error && git_packbuilder_object_count(c.pb))
		error = write_pack(&c);
done:
	if (error && c.stopped)
		error = c.stopped;
	git_packbuilder_free(c.pb);
	git_odb_free(c.dst_odb);
	oidset_release(&c.seen);
	oidset_release(&c.expanded);
	free(c.commits);
	strbuf_release(&c.path);
	if (cache_max > 0)
		git_libgit2_opts(GIT_OPT_SET_CACHE_MAX_SIZE, cache_max);
	return error;
}
