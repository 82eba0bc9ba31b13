/* The trap scan of a worker's tree, folders spread over a few threads. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "merge/worker/treescan_int.h"
#include "util/error.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define OPEN_DIR (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
#define MAX_THREADS 8
/* as git's preload-index: a thread for so many index entries, up to the CPUs */
#define FILES_PER_THREAD 2000
#define GITLINK_MODE 0160000

struct folder {
	int fd;
	char *path;             /* relative to the tree; "" for the tree itself */
	int depth;
};

/* What the threads share; `lock` guards all but the read-only part. */
struct queue {
	struct treescan *s;
	uid_t uid;
	pthread_mutex_t lock;
	pthread_cond_t more;
	struct folder *v;
	size_t nr, alloc;
	int busy;               /* threads inside a folder */
	int found;              /* a trap or an error: everyone stops */
	struct strbuf *why;
	size_t tracked;
};

/* One thread's view. */
struct walker {
	struct queue *q;
	struct strbuf path;     /* of the entry looked at */
	struct strbuf why;
	size_t tracked;
};

__attribute__((format(printf, 2, 3)))
static int trap(struct walker *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&w->why, fmt, ap);
	va_end(ap);
	strbuf_addf(&w->why, " at '%s'", w->path.buf);
	return 1;
}

/*
 * A symlink git put there, or one in a place no tracked file is: fine.  One where
 * the index or the commit has files (a folder or a file swapped for a link) could
 * make the checkout write through it.
 */
static int symlink_ok(struct walker *w)
{
	const struct treescan *s = w->q->s;
	const struct gitindex_entry *e = gitindex_find(s->idx, w->path.buf);
	git_tree_entry *te = NULL;
	int ok;

	if (e)
		return (e->mode & S_IFMT) == S_IFLNK;
	strbuf_addch(&w->path, '/');
	ok = !gitindex_has_prefix(s->idx, w->path.buf);
	strbuf_setlen(&w->path, w->path.len - 1);
	if (ok) {
		/* libgit2 reads subtrees through the repository: one thread at a time */
		pthread_mutex_lock(&w->q->lock);
		if (git_tree_entry_bypath(&te, s->target, w->path.buf) == 0) {
			ok = 0;
			git_tree_entry_free(te);
		}
		pthread_mutex_unlock(&w->q->lock);
	}
	return ok;
}

/*
 * A file or link the scan met: if the index tracks it, counted, and dirty unless
 * its stat data is what the index recorded (git's own test: size, mtime, ctime,
 * inode, the owner's execute bit; a command can set a file's mtime back, never its
 * ctime).  One whose entry is as new as the index file is racily clean: its
 * content is compared.
 */
static void note_tracked(struct walker *w, const struct stat *st)
{
	const struct treescan *s = w->q->s;
	const struct gitindex_entry *e = gitindex_find(s->idx, w->path.buf);
	int same, racy, link;

	if (!e)
		return;
	w->tracked++;
	if (e->mode == GITLINK_MODE) {
		/* a file where a submodule's folder goes */
		s->files[e - s->idx->entries] = STEP_FILE_DIRTY;
		return;
	}
	link = (e->mode & S_IFMT) == S_IFLNK;
	same = e->size == (uint32_t)st->st_size &&
	       e->mtime_s == (uint32_t)st->st_mtim.tv_sec &&
	       e->mtime_ns == (uint32_t)st->st_mtim.tv_nsec &&
	       e->ctime_s == (uint32_t)st->st_ctim.tv_sec &&
	       e->ctime_ns == (uint32_t)st->st_ctim.tv_nsec &&
	       e->ino == (uint32_t)st->st_ino && link == !!S_ISLNK(st->st_mode) &&
	       (link || !(e->mode & S_IXUSR) == !(st->st_mode & S_IXUSR));
	racy = e->mtime_s > (uint32_t)s->index_time.tv_sec ||
	       (e->mtime_s == (uint32_t)s->index_time.tv_sec &&
		e->mtime_ns >= (uint32_t)s->index_time.tv_nsec);
	/* each entry is one path: no two threads write the same byte */
	s->files[e - s->idx->entries] = !same ? STEP_FILE_DIRTY
					: racy ? STEP_FILE_RACY : STEP_FILE_CLEAN;
}

/* A folder the scan met: a submodule's, if the index has one there. */
static void note_folder(struct walker *w)
{
	const struct treescan *s = w->q->s;
	const struct gitindex_entry *e = gitindex_find(s->idx, w->path.buf);

	if (e && e->mode == GITLINK_MODE) {
		w->tracked++;
		s->files[e - s->idx->entries] = STEP_FILE_CLEAN;
	}
}

static void push(struct queue *q, int fd, const char *path, int depth)
{
	pthread_mutex_lock(&q->lock);
	if (q->nr == q->alloc) {
		q->alloc = q->alloc ? 2 * q->alloc : 64;
		q->v = xrealloc(q->v, q->alloc * sizeof(*q->v));
	}
	q->v[q->nr].fd = fd;
	q->v[q->nr].path = xstrdup(path);
	q->v[q->nr++].depth = depth;
	pthread_cond_signal(&q->more);
	pthread_mutex_unlock(&q->lock);
}

/* 1 when the entry `name` of the folder open at `fd` is a trap (w->why says which). */
static int scan_entry(struct walker *w, int fd, const char *name, int depth)
{
	struct stat st;
	int sub;

	if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : trap(w, "an entry it cannot look at (%s)",
						   strerror(errno));
	if (S_ISLNK(st.st_mode)) {
		if (!symlink_ok(w))
			return trap(w, "a symlink where the commit has files");
		note_tracked(w, &st);
		return 0;
	}
	if (st.st_uid != w->q->uid)
		return trap(w, "an entry that is not the runner user's (uid %ld)",
			    (long)st.st_uid);
	if (S_ISREG(st.st_mode)) {
		if (st.st_nlink > 1)
			return trap(w, "a hard link");
		if (st.st_mode & (S_ISUID | S_ISGID))
			return trap(w, "a setuid or setgid file");
		note_tracked(w, &st);
		return 0;
	}
	if (!S_ISDIR(st.st_mode))
		return trap(w, "%s", S_ISFIFO(st.st_mode)    ? "a FIFO"
				    : S_ISSOCK(st.st_mode) ? "a socket"
							    : "a device node");
	if (depth >= TREESCAN_MAX_DEPTH)
		return trap(w, "folders nested deeper than %d", TREESCAN_MAX_DEPTH);
	note_folder(w);
	sub = openat(fd, name, OPEN_DIR);
	if (sub < 0)
		return trap(w, "a folder it cannot enter (%s)", strerror(errno));
	push(w->q, sub, w->path.buf, depth + 1);
	return 0;
}

/* Looks at the entries of folder `f` (and closes it); its subfolders are queued. */
static int scan_folder(struct walker *w, struct folder *f)
{
	DIR *d = fdopendir(f->fd);
	struct dirent *de;
	int found = 0;

	strbuf_reset(&w->path);
	strbuf_addstr(&w->path, f->path);
	if (!d) {
		close(f->fd);
		return trap(w, "a folder it cannot read");
	}
	while (!found && !__atomic_load_n(&w->q->found, __ATOMIC_RELAXED) &&
	       (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		strbuf_reset(&w->path);
		strbuf_addstr(&w->path, f->path);
		if (*f->path)
			strbuf_addch(&w->path, '/');
		strbuf_addstr(&w->path, de->d_name);
		if (!f->depth && !strcmp(de->d_name, ".git")) {
			struct stat st;

			/* our gitfile; anything else there is the command's doing */
			if (fstatat(f->fd, ".git", &st, AT_SYMLINK_NOFOLLOW) < 0 ||
			    !S_ISREG(st.st_mode) || st.st_nlink > 1)
				found = trap(w, "a .git that is not nextbot's file");
			continue;
		}
		found = scan_entry(w, f->fd, de->d_name, f->depth);
	}
	closedir(d);
	return found;
}

/* A thread: folders from the queue until none is left and nobody can add one. */
static void *walker_thread(void *data)
{
	struct walker *w = data;
	struct queue *q = w->q;
	struct folder f;
	int found;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		while (!q->nr && q->busy && !q->found)
			pthread_cond_wait(&q->more, &q->lock);
		if (q->found || !q->nr)
			break;
		f = q->v[--q->nr];
		q->busy++;
		pthread_mutex_unlock(&q->lock);
		found = scan_folder(w, &f);
		free(f.path);
		pthread_mutex_lock(&q->lock);
		q->busy--;
		if (found && !q->found) {
			__atomic_store_n(&q->found, found, __ATOMIC_RELAXED);
			strbuf_addbuf(q->why, &w->why);
		}
	}
	q->tracked += w->tracked;
	pthread_cond_broadcast(&q->more);
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

int treescan_run(struct treescan *s, struct strbuf *why, int tfd)
{
	struct queue q = { s, geteuid(), PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
			   NULL, 0, 0, 0, 0, why, 0 };
	struct walker w[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int n = (int)(s->idx->nr / FILES_PER_THREAD), i, started = 1, fd = dup(tfd);

	if (n > cpus)
		n = (int)cpus;
	n = n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : n;

	if (fd < 0)
		return nb_error_errno(NB_ERROR, "cannot scan the tree");
	push(&q, fd, "", 0);
	for (i = 0; i < n; i++) {
		w[i].q = &q;
		strbuf_init(&w[i].path, 0);
		strbuf_init(&w[i].why, 0);
		w[i].tracked = 0;
	}
	/* the caller's thread is one of them; fewer when a thread cannot start */
	while (started < n && pthread_create(&tid[started], NULL, walker_thread, &w[started]) == 0)
		started++;
	walker_thread(&w[0]);
	for (i = 1; i < started; i++)
		pthread_join(tid[i], NULL);
	for (i = 0; i < n; i++) {
		strbuf_release(&w[i].path);
		strbuf_release(&w[i].why);
	}
	while (q.nr) {
		close(q.v[--q.nr].fd);
		free(q.v[q.nr].path);
	}
	free(q.v);
	s->tracked = q.tracked;
	return q.found;
}
