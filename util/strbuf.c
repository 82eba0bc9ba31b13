/* Growable strings, always NUL-terminated. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/error.h"
#include "util/banned.h"

char strbuf_empty[1];

void strbuf_init(struct strbuf *sb, size_t hint)
{
	sb->buf = strbuf_empty;
	sb->len = sb->alloc = 0;
	if (hint)
		strbuf_grow(sb, hint);
}

void strbuf_release(struct strbuf *sb)
{
	if (sb->alloc)
		free(sb->buf);
	strbuf_init(sb, 0);
}

char *strbuf_detach(struct strbuf *sb, size_t *len_out)
{
	char *res;

	strbuf_grow(sb, 0);
	res = sb->buf;
	if (len_out)
		*len_out = sb->len;
	strbuf_init(sb, 0);
	return res;
}

void strbuf_reset(struct strbuf *sb)
{
	strbuf_setlen(sb, 0);
}

void strbuf_grow(struct strbuf *sb, size_t extra)
{
	size_t want = sb->len + extra + 1;

	if (want <= sb->alloc)
		return;
	if (!sb->alloc) {
		sb->buf = NULL;
	}
	if (want < sb->alloc * 2)
		want = sb->alloc * 2;
	if (want < 64)
		want = 64;
	sb->buf = xrealloc(sb->buf, want);
	if (!sb->alloc)
		sb->buf[0] = 0;
	sb->alloc = want;
}

void strbuf_setlen(struct strbuf *sb, size_t len)
{
	if (!sb->alloc)
		return;
	sb->len = len < sb->len ? len : sb->len;
	sb->buf[sb->len] = 0;
}

void strbuf_addlen(struct strbuf *sb, size_t n)
{
	if (sb->len + n >= sb->alloc)
		abort();        /* a write past the room made: memory is corrupt */
	sb->len += n;
	sb->buf[sb->len] = 0;
}

void strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	strbuf_grow(sb, len);
	memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = 0;
}

void strbuf_addstr(struct strbuf *sb, const char *s)
{
	strbuf_add(sb, s, strlen(s));
}

void strbuf_addch(struct strbuf *sb, int c)
{
	strbuf_grow(sb, 1);
	sb->buf[sb->len++] = (char)c;
	sb->buf[sb->len] = 0;
}

void strbuf_addbuf(struct strbuf *sb, const struct strbuf *other)
{
	strbuf_add(sb, other->buf, other->len);
}

__attribute__((format(printf, 2, 0)))
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int len;

	va_copy(cp, ap);
	len = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (len <= 0)
		return;
	strbuf_grow(sb, (size_t)len);
	vsnprintf(sb->buf + sb->len, (size_t)len + 1, fmt, ap);
	sb->len += (size_t)len;
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

void strbuf_rtrim(struct strbuf *sb)
{
	while (sb->len && is_space(sb->buf[sb->len - 1]))
		sb->len--;
	if (sb->alloc)
		sb->buf[sb->len] = 0;
}

void strbuf_trim(struct strbuf *sb)
{
	size_t skip = 0;

	strbuf_rtrim(sb);
	while (skip < sb->len && is_space(sb->buf[skip]))
		skip++;
	if (skip) {
		memmove(sb->buf, sb->buf + skip, sb->len - skip);
		sb->len -= skip;
		sb->buf[sb->len] = 0;
	}
}

int strbuf_read_file(struct strbuf *sb, const char *path, size_t max)
{
	char chunk[65536];
	size_t total = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return nb_error_errno(errno == ENOENT ? NB_ENOTFOUND : NB_ERROR,
				      "cannot open '%s'", path);
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			return nb_error_errno(NB_ERROR, "cannot read '%s'", path);
		}
		total += (size_t)n;
		if (max && total > max) {
			close(fd);
			return nb_error_set(NB_EINVALID, "'%s' is larger than %zu bytes", path,
					    max);
		}
		strbuf_add(sb, chunk, (size_t)n);
	}
	close(fd);
	return 0;
}

int str_starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

int str_ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

int str_to_long(const char *s, long *out)
{
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s)
		return -1;
	*out = v;
	return 0;
}

int str_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}
