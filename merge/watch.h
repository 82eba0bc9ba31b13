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

/*
 * The pieces, for a caller with its own messages (merge/fetch.c):
 * watch_spawn() runs child(fd, arg) in a child process (SIGPIPE, SIGTERM and SIGINT
 * back to their defaults: a stop ends the work now) writing to `fd`, and gives the
 * reading end; NB_ERROR when it cannot.  watch_wait() waits until `fd` is readable
 * (1) or the watch_now_ms() time `deadline` passes (0: the child is SIGKILLed).
 * watch_reap() collects the child's wait status.
 */
int watch_spawn(int *out_pid, int *out_fd, void (*child)(int fd, void *arg), void *arg,
		const char *what);
int watch_wait(int fd, int pid, long deadline);
int watch_reap(int pid);

/* Monotonic milliseconds; read exactly `len` bytes (1, 0 at a clean EOF, -1). */
long watch_now_ms(void);
int watch_read_full(int fd, void *buf, size_t len);

#endif
