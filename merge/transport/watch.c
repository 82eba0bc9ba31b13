/* Network work in a watched child process: killed when silent (see watch.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "merge/transport/watch_int.h"
#include "util/error.h"
#include "util/xalloc.h"
#include "util/banned.h"

static int beat_fd = -1;        /* in the child: the pipe to the watcher */
static time_t last_beat;

long watch_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static int read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = read(fd, (char *)buf + got, len - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r == 0 && got == 0 ? 0 : -1;
		got += (size_t)r;
	}
	return 1;
}

/* The header on the pipe; the text follows. */
struct header {
	int32_t type, code;
	uint32_t len;
};

void watch_msg_send(int fd, int32_t type, int32_t code, const char *text)
{
	char buf[sizeof(struct header) + WATCH_TEXT_MAX];
	struct header h = { type, code, 0 };
	size_t len = text ? strlen(text) : 0;

	h.len = (uint32_t)(len > WATCH_TEXT_MAX ? WATCH_TEXT_MAX : len);
	memcpy(buf, &h, sizeof(h));
	if (h.len)
		memcpy(buf + sizeof(h), text, h.len);
	if (write(fd, buf, sizeof(h) + h.len) < 0)
		_exit(3);       /* the watcher is gone */
}

int watch_msg_recv(int fd, struct watch_msg *m)
{
	struct header h;
	int rc = read_full(fd, &h, sizeof(h));

	if (rc <= 0)
		return rc;
	if (h.len > WATCH_TEXT_MAX || (h.len && read_full(fd, m->text, h.len) <= 0))
		return -1;
	m->type = h.type;
	m->code = h.code;
	m->len = h.len;
	m->text[h.len] = '\0';
	return 1;
}

void watch_beat(void)
{
	time_t now = time(NULL);

	if (beat_fd >= 0 && now != last_beat) {
		last_beat = now;
		watch_msg_send(beat_fd, WATCH_MSG_BEAT, 0, NULL);
	}
}

int watch_spawn(int *out_pid, int *out_fd, void (*child)(int fd, void *arg), void *arg,
		const char *what)
{
	int fds[2];
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return nb_error_set(NB_ERROR, "%s: pipe: %s", what, strerror(errno));
	fflush(NULL);
	if ((pid = fork()) < 0) {
		close(fds[0]);
		close(fds[1]);
		return nb_error_set(NB_ERROR, "%s: fork: %s", what, strerror(errno));
	}
	if (pid == 0) {
		close(fds[0]);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGTERM, SIG_DFL);       /* a stop ends the work now, not after it */
		signal(SIGINT, SIG_DFL);
		child(fds[1], arg);
		_exit(0);
	}
	close(fds[1]);
	*out_pid = pid;
	*out_fd = fds[0];
	return 0;
}

int watch_wait(int fd, int pid, long deadline)
{
	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		long left = deadline - watch_now_ms();
		int rc = left > 0 ? poll(&p, 1, (int)(left > 60000 ? 60000 : left)) : 0;

		if (rc > 0 || (rc < 0 && errno != EINTR))
			return 1;       /* readable, or broken: the read says which */
		if (rc == 0 && watch_now_ms() >= deadline) {
			kill(pid, SIGKILL);
			return 0;
		}
	}
}

int watch_reap(int pid)
{
	int status = 0;

	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return status;
}

struct run {
	int (*fn)(void *arg);
	void *arg;
};

static void child(int fd, void *arg)
{
	struct run *r = arg;
	int code;

	beat_fd = fd;
	code = r->fn(r->arg);
	watch_msg_send(fd, WATCH_MSG_END, code, code < 0 ? nb_error_last() : NULL);
}

int watch_next(struct watch_msg *m, int fd, int pid, long idle_ms)
{
	if (!watch_wait(fd, pid, watch_now_ms() + idle_ms))
		return 0;
	return watch_msg_recv(fd, m) <= 0 ? -1 : 1;
}

/* 1: the child ended (*code, message recorded); 0: silent, killed; -1: it died. */
static int follow(int *code, int fd, pid_t pid, long idle_ms)
{
	struct watch_msg m;
	int rc;

	while ((rc = watch_next(&m, fd, pid, idle_ms)) == 1) {
		if (m.type != WATCH_MSG_END)
			continue;
		*code = m.code;
		if (m.code < 0)
			nb_error_set(m.code, "%s", m.text);
		return 1;
	}
	return rc;
}

int watch_run(int (*fn)(void *arg), void *arg, long idle, const char *what)
{
	struct run r = { fn, arg };
	int fd, pid, status, code = NB_ERROR, how, err;

	if ((err = watch_spawn(&pid, &fd, child, &r, what)) < 0)
		return err;
	how = follow(&code, fd, pid, idle * 1000);
	close(fd);
	status = watch_reap(pid);
	if (how == 0)
		return nb_error_set(NB_ETIMEOUT, "no data from %s for %ld s; gave up", what, idle);
	if (how < 0 && WIFSIGNALED(status))
		return nb_error_set(NB_ERROR, "%s: the process died of signal %d", what,
				    WTERMSIG(status));
	if (how < 0)
		return nb_error_set(NB_ERROR, "%s: the process ended without a result", what);
	return code;
}
