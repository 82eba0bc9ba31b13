/*
 * Shared helpers of the fuzz targets (tests/fuzz/fuzz_*.c).  Each target defines
 * fuzz_<name>_one(), which checks a property of one input and abort()s when it does
 * not hold; libFuzzer calls it through LLVMFuzzerTestOneInput and
 * tests/test_fuzz_replay.c calls it on every corpus file (with FUZZ_REPLAY defined,
 * which leaves LLVMFuzzerTestOneInput out).  Everything here is static inline so
 * that one translation unit may include every target.
 */
#ifndef TESTS_FUZZ_FUZZ_H
#define TESTS_FUZZ_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/fileutil.h"

int fuzz_config_one(const uint8_t *data, size_t size);
int fuzz_mail_one(const uint8_t *data, size_t size);
int fuzz_addr_one(const uint8_t *data, size_t size);
int fuzz_ccdirect_one(const uint8_t *data, size_t size);
int fuzz_webhook_one(const uint8_t *data, size_t size);
int fuzz_excerpt_one(const uint8_t *data, size_t size);
int fuzz_trailer_one(const uint8_t *data, size_t size);
int fuzz_cron_one(const uint8_t *data, size_t size);
int fuzz_utf8_one(const uint8_t *data, size_t size);
int fuzz_memo_one(const uint8_t *data, size_t size);
int fuzz_inbox_one(const uint8_t *data, size_t size);

/* The corpus file being replayed (set by the replay test), named on failure. */
static const char *fuzz_current_input;

/* Property check: on failure names the property (and input) and aborts. */
#define FUZZ_CHECK(cond, ...)                                                       \
	do {                                                                        \
		if (!(cond)) {                                                      \
			fprintf(stderr, "fuzz property failed at %s:%d: %s: ",       \
				__FILE__, __LINE__, #cond);                         \
			fprintf(stderr, __VA_ARGS__);                               \
			fprintf(stderr, "\n");                                      \
			if (fuzz_current_input)                                     \
				fprintf(stderr, "input: %s\n", fuzz_current_input);  \
			abort();                                                    \
		}                                                                   \
	} while (0)

/*
 * An independent UTF-8 validator (the oracle for util/utf8.c): no overlongs, no
 * surrogates, nothing above U+10FFFF, no truncated sequences.
 */
static inline int fuzz_utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;

	while (p < end) {
		unsigned c = *p, cp, min, n, i;

		if (c < 0x80) {
			p++;
			continue;
		}
		if ((c & 0xe0) == 0xc0)
			n = 2, cp = c & 0x1f, min = 0x80;
		else if ((c & 0xf0) == 0xe0)
			n = 3, cp = c & 0x0f, min = 0x800;
		else if ((c & 0xf8) == 0xf0)
			n = 4, cp = c & 0x07, min = 0x10000;
		else
			return 0;
		if ((size_t)(end - p) < n)
			return 0;
		for (i = 1; i < n; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return 0;
			cp = (cp << 6) | (p[i] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		p += n;
	}
	return 1;
}

/*
 * 1 if valid UTF-8 `s` holds a C0 control (other than those in `allowed`), DEL or
 * a C1 control (U+0080..U+009F, encoded C2 80..C2 9F).
 */
static inline int fuzz_has_controls(const char *s, size_t len, const char *allowed)
{
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = s[i];

		if ((c < 0x20 && !(c && strchr(allowed, c))) || c == 0x7f)
			return 1;
		if (c == 0xc2 && i + 1 < len && (unsigned char)s[i + 1] >= 0x80 &&
		    (unsigned char)s[i + 1] <= 0x9f)
			return 1;
	}
	return 0;
}

/*
 * Splits the input into NUL-terminated fields: the bytes up to each NUL (or the
 * end) become one string.  fields[i] is "" when the input has fewer than `nr`.
 * Free the result with fuzz_fields_free().
 */
struct fuzz_fields {
	char *copy;
	const char **v;
	size_t nr;
};

static inline void fuzz_fields_split(struct fuzz_fields *f, const uint8_t *data, size_t size,
				     size_t nr)
{
	size_t i, at = 0;

	f->copy = malloc(size + 1);
	f->v = calloc(nr ? nr : 1, sizeof(*f->v));
	if (!f->copy || !f->v)
		abort();
	if (size)
		memcpy(f->copy, data, size);
	f->copy[size] = '\0';
	f->nr = nr;
	for (i = 0; i < nr; i++) {
		if (at <= size) {
			f->v[i] = f->copy + at;
			at += strlen(f->copy + at) + 1;
		} else {
			f->v[i] = "";
		}
	}
}

static inline void fuzz_fields_free(struct fuzz_fields *f)
{
	free(f->copy);
	free(f->v);
}

/* A NUL-terminated copy of the input (an embedded NUL ends the string early). */
static inline char *fuzz_strdup(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* A private temp directory for targets that need files, removed at exit. */
static char fuzz_tmpdir_buf[64];

static inline void fuzz_tmpdir_remove(void)
{
	if (fuzz_tmpdir_buf[0])
		file_remove_tree(fuzz_tmpdir_buf);
}

static inline const char *fuzz_tmpdir(void)
{
	if (!fuzz_tmpdir_buf[0]) {
		/* tmpfs when there is one: the targets fsync on every write */
		const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";

		snprintf(fuzz_tmpdir_buf, sizeof(fuzz_tmpdir_buf), "%s/nextbot-fuzz.XXXXXX", base);
		if (!mkdtemp(fuzz_tmpdir_buf))
			abort();
		atexit(fuzz_tmpdir_remove);
	}
	return fuzz_tmpdir_buf;
}

#endif
