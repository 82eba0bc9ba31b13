/* Allocation that aborts on out-of-memory: every other failure is recoverable. */
#ifndef UTIL_XALLOC_H
#define UTIL_XALLOC_H

#include <stddef.h>

/* All return memory the caller frees with free(); they never return NULL. */
void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* Returns a malloc'd printf-formatted string. */
char *xstrfmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Frees each of the `nr` strings of `v`, then `v` (NULL with nr 0 is fine). */
void free_strings(char **v, size_t nr);

/* Grow array `x` (with `alloc` slots) to hold at least `nr` elements. */
#define ALLOC_GROW(x, nr, alloc) ALLOC_GROW_MIN(x, nr, alloc, 8)

/* ALLOC_GROW with room for `min` elements at first (then doubling). */
#define ALLOC_GROW_MIN(x, nr, alloc, min)                                          \
	do {                                                                       \
		if ((size_t)(nr) > (size_t)(alloc)) {                              \
			size_t n__ = (size_t)(alloc) < (size_t)(min) ? (size_t)(min) \
								     : (size_t)(alloc) * 2; \
			if (n__ < (size_t)(nr))                                    \
				n__ = (nr);                                        \
			(x) = xrealloc((x), n__ * sizeof(*(x)));                  \
			(alloc) = n__;                                             \
		}                                                                  \
	} while (0)

#endif
