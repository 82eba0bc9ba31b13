/*
 * Network work in a child process that the caller watches (libgit2 1.5 has no
 * network timeout, and libssh2 does not give up on a signal): a child that
 * reports no data for `idle` seconds is killed.  Used by push (watch_run()); the
 * fetch (merge/transport/fetch.c) sends messages of its own in the same format.  For
 * merge/ code only.
 */
#ifndef MERGE_WATCH_INT_H
#define MERGE_WATCH_INT_H

#include <stddef.h>
#include <stdint.h>

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
 * The pieces, for a caller with its own messages (merge/transport/fetch.c):
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

/* Monotonic milliseconds. */
long watch_now_ms(void);

/*
 * The one message format on the pipe from a watched child: a header (type, a
 * number, the text's length) and at most WATCH_TEXT_MAX bytes of text, written
 * in one write (atomic on a pipe: under PIPE_BUF).  Types below WATCH_MSG_USER
 * are watch.c's; a caller with messages of its own numbers them from there.
 */
#define WATCH_TEXT_MAX 2048
enum { WATCH_MSG_BEAT, WATCH_MSG_END, WATCH_MSG_USER = 16 };
struct watch_msg {
	int32_t type, code;
	uint32_t len;
	char text[WATCH_TEXT_MAX + 1];  /* NUL-terminated on receipt */
};
/* In the child: sends one message (text may be NULL; longer text is cut); a gone
 * watcher ends the child (_exit(3)). */
void watch_msg_send(int fd, int32_t type, int32_t code, const char *text);
/* In the watcher: reads one message; 1, 0 at a clean end of the pipe, -1 broken. */
int watch_msg_recv(int fd, struct watch_msg *m);
/* The next message within `idle_ms`: 1; 0 when the child was silent (killed); -1
 * when it died or broke the format. */
int watch_next(struct watch_msg *m, int fd, int pid, long idle_ms);

#endif
