/* Error recording: set once where it happens, passed up, printed once by bot/. */
#ifndef UTIL_ERROR_H
#define UTIL_ERROR_H

/*
 * Error codes returned by functions across nextbot: 0 ok, negative failure.
 * NB_ERROR is a plain failure; the others are ones a caller can act on.
 */
enum nb_error_code {
	NB_OK = 0,
	NB_ERROR = -1,
	NB_ENOTFOUND = -3,
	NB_ECONFLICT = -4,
	NB_ETIMEOUT = -5,
	NB_EREFUSED = -6,  /* policy said no: never_merge, address check, … */
	NB_EEXISTS = -7,
	NB_ELOCKED = -8,
	NB_EUNRELATED = -9,
	NB_EINVALID = -10, /* bad input: config, arguments, parse errors */
};

/*
 * Records the last error of the calling thread and returns `code`, so that
 * `return nb_error_set(NB_ENOTFOUND, "tree '%s' not found", name);` reads well.
 */
int nb_error_set(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Like nb_error_set() with ": strerror(errno)" appended. */
int nb_error_errno(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prefixes the recorded message with more context ("tree mm-next: "). */
void nb_error_prefix(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The calling thread's last message; valid until the next nb_error_* call. "" if none. */
const char *nb_error_last(void);
void nb_error_clear(void);

#endif
