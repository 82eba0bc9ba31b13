/* Logging: timestamped lines off a terminal, a live progress line on one. */
#ifndef UTIL_LOG_H
#define UTIL_LOG_H

enum log_level { LOG_QUIET = 0, LOG_NORMAL = 1, LOG_VERBOSE = 2 };

void log_set_level(enum log_level level);
enum log_level log_get_level(void);

/* To stderr: "2026-12-03T02:00:01Z nextbot: message" (timestamp when not a tty). */
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_verbose(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * A phase of a long job ("merging mm-next (3/12)"): on a terminal it replaces the
 * live line, otherwise it is a log line.  Quiet mode hides it.
 */
void log_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Ends a live progress line, if one is showing. */
void log_progress_done(void);

#endif
