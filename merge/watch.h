/*
 * Network work in a child process that the caller watches (libgit2 1.5 has no
 * network timeout, and libssh2 does not give up on a signal): a child that
 * reports no data for `idle` seconds is killed.  Used by push (watch_run()); the
 * fetch (merge/fetch.c) has its own protocol and uses the helpers below.  For
 * merge/ code only.
 */
#ifndef MERGE_WATCH_H
#define MERGE_WATCH_H

#include <stddef.h>

/*
 * Runs fn(arg) in a child process and returns its result (0 or an NB_E* code)
 * with its error message recorded here, as if it had run in this process.  The
 * child's work must be on files only (its memory is its own).  A child silent for
 * `idle` seconds (watch_beat() resets the clock) is killed: NB_ETIMEOUT "no data
 * from <what> for N s; gave up".  A child killed otherwise: NB_ERROR naming how.
 */
int watch_run(int (*fn)(void *arg), void *arg, long idle, const char *what);

/* In the child of watch_run(): data came, the remote is alive (rate-limited). */
void watch_beat(void);

/* Monotonic milliseconds; read exactly `len` bytes (1, 0 at a clean EOF, -1). */
long watch_now_ms(void);
int watch_read_full(int fd, void *buf, size_t len);

#endif
