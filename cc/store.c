/* The compiler cache's store: one file per key, at most `max` bytes, least recently used out. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "cc/cc_int.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "util/banned.h"

/*
 * <dir>/v1/<first two hex digits>/<the other 62>: "NBCCE1\n\0", u32 stderr length,
 * u64 object length, the stderr, the object.  A file whose size does not add up
 * (a crash while it was written) is no entry.  Written in <dir>/tmp and renamed.
 * A hit sets the entry's mtime: trimming removes the oldest first, down to 90%.
 * Room for an entry is made before it is written: the store never holds more than
 * `max` (the entries being written counted), and never takes its disk below
 * `min_free` (runner.min_free): the oldest entries go first, and an entry that
 * would not fit even so is not kept.
 */
#define ENTRY_MAGIC "NBCCE1\n"
#define HEAD_LEN 20
#define TRIM_TO(max) ((max) / 10 * 9)

struct cc_store {
	char *dir, *entries, *tmp;
	long long max, min_free, bytes;
	long long reserved;  /* entries being written */
	pthread_mutex_t lock;
};

struct entry {
	char *path;
	long long size;
	struct timespec mtime;
};

static char *entry_path(const struct cc_store *s, const char key[SHA256_HEXSZ + 1])
{
	return xstrfmt("%s/%.2s/%s", s->entries, key, key + 2);
}

/* Every entry of the store, with its size and last use. */
static void list_entries(struct entry **out, size_t *nr, const struct cc_store *s)
{
	size_t alloc = 0;
	DIR *top = opendir(s->entries);
	struct dirent *de;

	*out = NULL;
	*nr = 0;
	while (top && (de = readdir(top))) {
		char *sub;
		DIR *d;
		struct dirent *e;

		if (strlen(de->d_name) != 2 || de->d_name[0] == '.')
			continue;
		sub = xstrfmt("%s/%s", s->entries, de->d_name);
		d = opendir(sub);
		while (d && (e = readdir(d))) {
			char *path;
			struct stat st;

			if (e->d_name[0] == '.')
				continue;
			path = xstrfmt("%s/%s", sub, e->d_name);
			if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode)) {
				free(path);
				continue;
			}
			ALLOC_GROW(*out, *nr + 1, alloc);
			(*out)[(*nr)++] = (struct entry){ path, (long long)st.st_size, st.st_mtim };
		}
		if (d)
			closedir(d);
		free(sub);
	}
	if (top)
		closedir(top);
}

static int older_first(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	return (x->mtime.tv_nsec > y->mtime.tv_nsec) - (x->mtime.tv_nsec < y->mtime.tv_nsec);
}

/* Bytes free on the disk of `dir`, or -1 when it cannot be looked at. */
static long long disk_free(const char *dir)
{
	struct statvfs sv;

	if (statvfs(dir, &sv) < 0)
		return -1;
	return (long long)sv.f_bavail * (long long)sv.f_frsize;
}

/* Whether `room` more bytes leave the disk of `dir` at least `min_free` (0: no floor). */
static int disk_room(const char *dir, long long min_free, long long room)
{
	long long avail = min_free ? disk_free(dir) : -1;

	return avail < 0 || avail - room >= min_free;
}

/*
 * Counts the store again and removes the least recently used entries while it holds
 * more than `max` with `room` more bytes (then down to 90%), or the disk has not
 * `room` more above `min_free`.  Locked.  1 when `room` fits now.
 */
static int make_room(struct cc_store *s, long long room)
{
	struct entry *e;
	size_t nr, i = 0;
	long long total = 0, want;
	int fits;

	list_entries(&e, &nr, s);
	for (i = 0; i < nr; i++)
		total += e[i].size;
	want = total + s->reserved + room > s->max ? TRIM_TO(s->max) : s->max;
	qsort(e, nr, sizeof(*e), older_first);
	for (i = 0; i < nr && (total + s->reserved + room > want ||
			       !disk_room(s->dir, s->min_free, s->reserved + room)); i++)
		if (!unlink(e[i].path) || errno == ENOENT)
			total -= e[i].size;
	fits = total + s->reserved + room <= s->max &&
	       disk_room(s->dir, s->min_free, s->reserved + room);
	s->bytes = total;
	for (i = 0; i < nr; i++)
		free(e[i].path);
	free(e);
	return fits;
}

long long cc_store_give_way(const char *dir, long long min_free)
{
	struct cc_store s = { .entries = xstrfmt("%s/v1", dir) };
	struct entry *e;
	size_t nr, i;
	long long freed = 0;

	if (disk_room(dir, min_free, 0)) {
		free(s.entries);
		return 0;
	}
	list_entries(&e, &nr, &s);
	qsort(e, nr, sizeof(*e), older_first);
	for (i = 0; i < nr && !disk_room(dir, min_free, 0); i++)
		if (!unlink(e[i].path))
			freed += e[i].size;
	for (i = 0; i < nr; i++)
		free(e[i].path);
	free(e);
	free(s.entries);
	return freed;
}

int cc_store_open(struct cc_store **out, const char *dir, long long max, long long min_free)
{
	struct cc_store *s = xcalloc(1, sizeof(*s));
	struct stat st;

	*out = NULL;
	s->dir = xstrdup(dir);
	s->entries = xstrfmt("%s/v1", dir);
	s->tmp = xstrfmt("%s/tmp", dir);
	s->max = max;
	s->min_free = min_free;
	pthread_mutex_init(&s->lock, NULL);
	/* the store's own folder, of this user's, nobody else's to enter */
	nb_error_clear();
	if (!file_mkdir_p(dir, 0700) &&
	    (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	     chmod(dir, 0700) < 0))
		nb_error_set(NB_ERROR, "not a folder of nextbot's own");
	if (*nb_error_last() || file_remove_tree(s->tmp) < 0 ||
	    file_mkdir_p(s->tmp, 0700) < 0 || file_mkdir_p(s->entries, 0700) < 0) {
		nb_error_prefix("compiler cache store '%s': ", dir);
		cc_store_free(s);
		return NB_ERROR;
	}
	make_room(s, 0);
	*out = s;
	return 0;
}

void cc_store_free(struct cc_store *s)
{
	if (!s)
		return;
	pthread_mutex_destroy(&s->lock);
	free(s->dir);
	free(s->entries);
	free(s->tmp);
	free(s);
}

long long cc_store_bytes(struct cc_store *s)
{
	long long b;

	pthread_mutex_lock(&s->lock);
	b = s->bytes;
	pthread_mutex_unlock(&s->lock);
	return b;
}

int cc_store_get(struct cc_store *s, const char key[SHA256_HEXSZ + 1], int *fd,
		 uint32_t *stderr_len, uint64_t *object_len)
{
	char *path = entry_path(s, key);
	unsigned char head[HEAD_LEN];
	struct stat st;
	int f = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	*fd = -1;
	if (f < 0)
		goto miss;
	if (fstat(f, &st) < 0 || !S_ISREG(st.st_mode) ||
	    cc_read_full(f, head, HEAD_LEN) < 0 || memcmp(head, ENTRY_MAGIC, 8))
		goto bad;
	*stderr_len = cc_get_u32(head + 8);
	*object_len = cc_get_u64(head + 12);
	if (*stderr_len > CC_MAX_STDERR || *object_len > CC_MAX_OBJECT ||
	    (uint64_t)st.st_size != HEAD_LEN + (uint64_t)*stderr_len + *object_len)
		goto bad;
	/* the last use decides what goes first when the store is full */
	futimens(f, NULL);
	*fd = f;
	free(path);
	return 1;
bad:
	log_warn("compiler cache: entry %s is damaged: removed", key);
	unlink(path);
	close(f);
miss:
	free(path);
	return 0;
}

/* Writes the entry to an open temp file; 0 or -1 (errno). */
static int write_entry(int out, const char *err, uint32_t err_len, int object_fd,
		       uint64_t object_len)
{
	unsigned char head[HEAD_LEN];
	char buf[65536];
	uint64_t left = object_len;

	memcpy(head, ENTRY_MAGIC, 8);
	cc_put_u32(head + 8, err_len);
	cc_put_u64(head + 12, object_len);
	if (cc_write_full(out, head, HEAD_LEN) < 0 || cc_write_full(out, err, err_len) < 0 ||
	    lseek(object_fd, 0, SEEK_SET) < 0)
		return -1;
	while (left) {
		ssize_t n = read(object_fd, buf, left < sizeof(buf) ? (size_t)left : sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			errno = n ? errno : EIO;
			return -1;
		}
		if (cc_write_full(out, buf, (size_t)n) < 0)
			return -1;
		left -= (uint64_t)n;
	}
	/* a crash must not leave an entry of the right size and the wrong bytes */
	return fdatasync(out);
}

int cc_store_put(struct cc_store *s, const char key[SHA256_HEXSZ + 1], const char *err,
		 uint32_t err_len, int object_fd, uint64_t object_len)
{
	long long size = HEAD_LEN + (long long)err_len + (long long)object_len, old = 0;
	char *tmp = xstrfmt("%s/e-XXXXXX", s->tmp), *path = entry_path(s, key), *sub;
	struct stat st;
	int fd = -1, error = 0, fits;

	if (size > s->max || err_len > CC_MAX_STDERR || object_len > CC_MAX_OBJECT)
		goto done;  /* bigger than the whole store: never kept */
	pthread_mutex_lock(&s->lock);
	fits = (s->bytes + s->reserved + size <= s->max &&
		disk_room(s->dir, s->min_free, s->reserved + size)) || make_room(s, size);
	if (fits)
		s->reserved += size;
	pthread_mutex_unlock(&s->lock);
	if (!fits)
		goto done;  /* no room under max, or above the disk's floor: not kept */
	sub = xstrfmt("%s/%.2s", s->entries, key);
	if (mkdir(sub, 0700) < 0 && errno != EEXIST)
		error = nb_error_errno(NB_ERROR, "compiler cache: cannot make '%s'", sub);
	free(sub);
	if (!error) {
		fd = mkstemp(tmp);
		if (fd < 0 || write_entry(fd, err, err_len, object_fd, object_len) < 0)
			error = nb_error_errno(NB_ERROR, "compiler cache: cannot write '%s'", tmp);
	}
	pthread_mutex_lock(&s->lock);
	s->reserved -= size;
	if (!error && !lstat(path, &st))
		old = (long long)st.st_size;
	if (!error && rename(tmp, path) < 0)
		error = nb_error_errno(NB_ERROR, "compiler cache: cannot store '%s'", path);
	else if (!error)
		s->bytes += size - old;
	pthread_mutex_unlock(&s->lock);
done:
	if (fd >= 0) {
		close(fd);
		unlink(tmp);
	}
	free(tmp);
	free(path);
	return error;
}
