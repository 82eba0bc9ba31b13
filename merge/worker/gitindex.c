/* git's index file, read in one piece and written back, for a worker's incremental checkout. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "merge/worker/gitindex_int.h"
#include "merge/git/sha1_int.h"
#include "util/error.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define HEADER_LEN 12
/* ctime, mtime (8 each), dev, ino, mode, uid, gid, size (4 each), id, flags */
/* an entry's stat data: ten 32-bit fields, ctime to size */
#define ENTRY_STAT_SZ (10 * 4)
#define ENTRY_FIXED (ENTRY_STAT_SZ + GIT_OID_RAWSZ + 2)
#define FLAG_ASSUME_VALID 0x8000
#define FLAG_EXTENDED 0x4000
#define FLAG_STAGE 0x3000
#define NAME_MASK 0x0fff

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static int refuse(struct strbuf *why, const char *what)
{
	strbuf_addf(why, "an index nextbot does not read (%s)", what);
	return 1;
}

int gitindex_path_ok(const char *path)
{
	const char *p = path;

	if (!*p || *p == '/')
		return 0;
	while (*p) {
		const char *end = strchrnul(p, '/');
		size_t n = end - p;

		if (!n || (n == 1 && p[0] == '.') || (n == 2 && !memcmp(p, "..", 2)) ||
		    (n == 4 && !strncasecmp(p, ".git", 4)))
			return 0;
		p = *end ? end + 1 : end;
		if (*end && !*p)
			return 0;       /* a trailing slash */
	}
	return 1;
}

static int read_whole(struct strbuf *out, int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	ssize_t n;

	if (fd < 0)
		return errno == ENOENT ? NB_ENOTFOUND
				       : nb_error_errno(NB_ERROR, "cannot open the index");
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > GITINDEX_MAX_BYTES) {
		close(fd);
		return nb_error_set(NB_ERROR, "the index is not a regular file under %u MB",
				    GITINDEX_MAX_BYTES >> 20);
	}
	strbuf_grow(out, st.st_size + 1);
	while ((n = read(fd, out->buf + out->len, st.st_size + 1 - out->len)) > 0 &&
	       out->len + n <= (size_t)st.st_size)
		strbuf_addlen(out, n);
	close(fd);
	if (n < 0)
		return nb_error_errno(NB_ERROR, "cannot read the index");
	if (n > 0)
		return nb_error_set(NB_ERROR, "the index grew while it was read");
	return 0;
}

/* Parses the entry at `*off`; 1 with `why` when it is one this reader does not take. */
static int parse_entry(struct gitindex_entry *e, struct strbuf *why, const struct strbuf *b,
		       size_t *off, uint32_t version)
{
	const unsigned char *p = (const unsigned char *)b->buf + *off;
	size_t left = b->len - GIT_OID_RAWSZ - *off, fixed = ENTRY_FIXED, name_len;
	const char *name, *nul;
	uint32_t flags;

	if (left < ENTRY_FIXED + 1)
		return refuse(why, "it ends inside an entry");
	flags = (uint32_t)p[ENTRY_FIXED - 2] << 8 | p[ENTRY_FIXED - 1];
	if (flags & FLAG_STAGE)
		return refuse(why, "a conflict");
	if (flags & FLAG_ASSUME_VALID)
		return refuse(why, "an assume-unchanged entry");
	if (flags & FLAG_EXTENDED) {
		if (version < 3 || left < ENTRY_FIXED + 3)
			return refuse(why, "a bad extended entry");
		if (p[ENTRY_FIXED] | p[ENTRY_FIXED + 1])
			return refuse(why, "a skip-worktree or intent-to-add entry");
		fixed += 2;
	}
	name = (const char *)p + fixed;
	nul = memchr(name, 0, left - fixed);
	if (!nul)
		return refuse(why, "it ends inside a path");
	name_len = nul - name;
	if ((flags & NAME_MASK) != NAME_MASK ? name_len != (flags & NAME_MASK)
					     : name_len < NAME_MASK)
		return refuse(why, "a path whose length is not its entry's");
	if (!gitindex_path_ok(name))
		return refuse(why, "a path that could leave the tree");
	e->path = name;
	e->path_len = name_len;
	e->ctime_s = get32(p);
	e->ctime_ns = get32(p + 4);
	e->mtime_s = get32(p + 8);
	e->mtime_ns = get32(p + 12);
	e->ino = get32(p + 20);
	e->mode = get32(p + 24);
	e->size = get32(p + 36);
	git_oid_fromraw(&e->id, p + ENTRY_STAT_SZ);
	e->raw = p;
	e->raw_len = (fixed + name_len + 8) & ~(size_t)7;
	if (e->raw_len > left)
		return refuse(why, "it ends inside an entry's padding");
	*off += e->raw_len;
	return 0;
}

/* Past the entries: extensions, each a signature and a length; only optional ones. */
static int check_extensions(struct strbuf *why, const struct strbuf *b, size_t off)
{
	size_t end = b->len - GIT_OID_RAWSZ;

	while (off < end) {
		const unsigned char *p = (const unsigned char *)b->buf + off;
		uint32_t len;

		if (end - off < 8)
			return refuse(why, "a truncated extension");
		len = get32(p + 4);
		if (p[0] < 'A' || p[0] > 'Z')
			return refuse(why, "a required extension");
		if (len > end - off - 8)
			return refuse(why, "a truncated extension");
		off += 8 + len;
	}
	return 0;
}

static int parse_index(struct gitindex *idx, struct strbuf *why)
{
	const unsigned char *p = (const unsigned char *)idx->buf.buf;
	unsigned char sum[SHA1_RAWSZ];
	static const unsigned char zero[SHA1_RAWSZ];
	uint32_t version, count, i;
	size_t off = HEADER_LEN;
	int err;

	if (idx->buf.len < HEADER_LEN + SHA1_RAWSZ || memcmp(p, "DIRC", 4))
		return refuse(why, "not an index file");
	version = get32(p + 4);
	count = get32(p + 8);
	if (version != 2 && version != 3)
		return refuse(why, version == 4 ? "version 4" : "an unknown version");
	memcpy(idx->checksum, p + idx->buf.len - SHA1_RAWSZ, SHA1_RAWSZ);
	/* git's index.skipHash writes no checksum: zeros */
	if (memcmp(p + idx->buf.len - SHA1_RAWSZ, zero, SHA1_RAWSZ)) {
		sha1_raw(sum, p, idx->buf.len - SHA1_RAWSZ);
		if (memcmp(sum, p + idx->buf.len - SHA1_RAWSZ, SHA1_RAWSZ))
			return refuse(why, "a bad checksum");
	}
	if (count > (idx->buf.len - HEADER_LEN) / (ENTRY_FIXED + 2))
		return refuse(why, "more entries than the file can hold");
	idx->entries = xcalloc(count ? count : 1, sizeof(*idx->entries));
	for (i = 0; i < count; i++) {
		if ((err = parse_entry(&idx->entries[i], why, &idx->buf, &off, version)) != 0)
			return err;
		idx->nr++;
		if (i && strcmp(idx->entries[i - 1].path, idx->entries[i].path) >= 0)
			return refuse(why, "entries out of order");
	}
	return check_extensions(why, &idx->buf, off);
}

int gitindex_read(struct gitindex *out, struct strbuf *why, int dirfd, const char *name)
{
	int err = read_whole(&out->buf, dirfd, name);

	return err < 0 ? err : parse_index(out, why);
}

void gitindex_release(struct gitindex *idx)
{
	free(idx->entries);
	idx->entries = NULL;
	idx->nr = 0;
	strbuf_release(&idx->buf);
}

/* The first entry whose path is not below `path` (git's order is strcmp's). */
static size_t lower_bound(const struct gitindex *idx, const char *path)
{
	size_t lo = 0, hi = idx->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(idx->entries[mid].path, path) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct gitindex_entry *gitindex_find(const struct gitindex *idx, const char *path)
{
	size_t i = lower_bound(idx, path);

	return i < idx->nr && !strcmp(idx->entries[i].path, path) ? &idx->entries[i] : NULL;
}

int gitindex_has_prefix(const struct gitindex *idx, const char *prefix)
{
	size_t i = lower_bound(idx, prefix);

	return i < idx->nr && !strncmp(idx->entries[i].path, prefix, strlen(prefix));
}

void gitindex_out_begin(struct strbuf *out)
{
	strbuf_add(out, "DIRC\0\0\0\2\0\0\0\0", HEADER_LEN);
}

void gitindex_out_raw(struct strbuf *out, const struct gitindex_entry *e)
{
	size_t at = out->len, fixed = ENTRY_FIXED;

	/* a version-3 entry without extended flags is a version-2 one */
	strbuf_add(out, e->raw, fixed);
	strbuf_add(out, e->path, e->path_len);
	strbuf_grow(out, 8);
	memset(out->buf + out->len, 0, 8);
	strbuf_addlen(out, at + ((fixed + e->path_len + 8) & ~(size_t)7) - out->len);
	out->buf[at + fixed - 2] &= ~(FLAG_EXTENDED >> 8);
}

void gitindex_out_new(struct strbuf *out, const char *path, const struct stat *st,
		      uint32_t mode, const git_oid *id)
{
	size_t at = out->len, len = strlen(path);
	size_t size = (ENTRY_FIXED + len + 8) & ~(size_t)7;
	unsigned char *p;

	strbuf_grow(out, size);
	p = (unsigned char *)out->buf + at;
	memset(p, 0, size);
	put32(p, st->st_ctim.tv_sec);
	put32(p + 4, st->st_ctim.tv_nsec);
	put32(p + 8, st->st_mtim.tv_sec);
	put32(p + 12, st->st_mtim.tv_nsec);
	put32(p + 16, st->st_dev);
	put32(p + 20, st->st_ino);
	put32(p + 24, mode);
	put32(p + 28, st->st_uid);
	put32(p + 32, st->st_gid);
	put32(p + 36, st->st_size);
	memcpy(p + ENTRY_STAT_SZ, id->id, GIT_OID_RAWSZ);
	p[ENTRY_FIXED - 2] = (len < NAME_MASK ? len : NAME_MASK) >> 8;
	p[ENTRY_FIXED - 1] = (len < NAME_MASK ? len : NAME_MASK) & 0xff;
	memcpy(p + ENTRY_FIXED, path, len);
	strbuf_addlen(out, size);
}

void gitindex_out_finish(struct strbuf *out, size_t count)
{
	unsigned char sum[SHA1_RAWSZ];

	put32((unsigned char *)out->buf + 8, count);
	sha1_raw(sum, out->buf, out->len);
	strbuf_add(out, sum, SHA1_RAWSZ);
}

int gitindex_write(int dirfd, const char *name, const struct strbuf *data, const char *where)
{
	struct strbuf lock = STRBUF_INIT;
	size_t done = 0;
	int fd, err = 0;

	strbuf_addf(&lock, "%s.lock", name);
	/* a lock left by a checkout that was killed: this child is the only writer */
	unlinkat(dirfd, lock.buf, 0);
	fd = openat(dirfd, lock.buf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	while (fd >= 0 && done < data->len) {
		ssize_t n = write(fd, data->buf + done, data->len - done);

		if (n <= 0)
			break;
		done += n;
	}
	if (fd < 0 || done < data->len || close(fd) < 0 ||
	    renameat(dirfd, lock.buf, dirfd, name) < 0) {
		err = nb_error_errno(NB_ERROR, "cannot write %s/%s", where, name);
		if (fd >= 0 && done < data->len)
			close(fd);
		unlinkat(dirfd, lock.buf, 0);
	}
	strbuf_release(&lock);
	return err;
}
