/* A NULL-terminated, growable vector of owned strings (argv-like). */
#ifndef UTIL_STRVEC_H
#define UTIL_STRVEC_H

#include <stddef.h>

/* `v` is always NULL-terminated; the strings and the array belong to the strvec. */
struct strvec {
	char **v;
	size_t nr, alloc;
};
#define STRVEC_INIT { strvec_empty, 0, 0 }
extern char *strvec_empty[];

void strvec_push(struct strvec *sv, const char *s);
void strvec_pushf(struct strvec *sv, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Pushes each argument up to a NULL: strvec_pushl(&av, "--bind", a, b, NULL). */
void strvec_pushl(struct strvec *sv, ...) __attribute__((sentinel));
/* Takes ownership of the malloc'd `s`. */
void strvec_push_nodup(struct strvec *sv, char *s);
int strvec_contains(const struct strvec *sv, const char *s);
void strvec_clear(struct strvec *sv);

#endif
