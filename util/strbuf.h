/* The one growable string type for all text. */
#ifndef UTIL_STRBUF_H
#define UTIL_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

/*
 * `buf` is always NUL-terminated (also when len == 0) and owned by the strbuf;
 * strbuf_release() frees it, strbuf_detach() hands it to the caller.
 */
struct strbuf {
	char *buf;
	size_t len;
	size_t alloc;
};

extern char strbuf_empty[];
#define STRBUF_INIT { strbuf_empty, 0, 0 }

void strbuf_init(struct strbuf *sb, size_t hint);
void strbuf_release(struct strbuf *sb);
/* Returns the buffer (caller frees) and leaves `sb` empty and initialised. */
char *strbuf_detach(struct strbuf *sb, size_t *len_out);
void strbuf_reset(struct strbuf *sb);
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_setlen(struct strbuf *sb, size_t len);
/* Takes `n` more bytes, written into the room strbuf_grow() made, into the string. */
void strbuf_addlen(struct strbuf *sb, size_t n);

void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, int c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
void strbuf_addbuf(struct strbuf *sb, const struct strbuf *other);

void strbuf_trim(struct strbuf *sb);
void strbuf_rtrim(struct strbuf *sb);

/* Appends the file's contents; fails (-1, error recorded) past `max` bytes (0: no cap). */
int strbuf_read_file(struct strbuf *sb, const char *path, size_t max);

/* Plain string helpers. */
int str_starts_with(const char *s, const char *prefix);
int str_ends_with(const char *s, const char *suffix);
/* 0..15 for a hex digit (either case), else -1. */
int str_hexval(int c);
/* Parses a base-10 integer occupying all of `s`; -1 on junk or overflow. */
int str_to_long(const char *s, long *out);

#endif
