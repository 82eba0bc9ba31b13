/* A cluster node's relay: the box's cache socket carried over TCP to the nextbot host's service. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cc/cc_int.h"
#include "util/xalloc.h"
#include "util/banned.h"

/*
 * The Slurm runner starts a step's box under this program, on the node, as the
 * runner user: the box binds SOCK over its own socket, so the shims inside talk
 * to the relay as they would to the service of the host.  Nothing here decides
 * anything: whatever fails (no service, a wrong token, a dying connection), the
 * shim sees its connection end and runs the real compiler.  It prints nothing:
 * the command's output is the build's, and a line of ours would change its
 * excerpts.
 */

#define CONNECT_SECONDS 10

struct relay {
	const char *addr, *token_file, *sock;
	char **cmd;
	char token[CC_TOKEN_HEXSZ + 1];
	int have_token;
};

/* Listens at `path` (a long one through its folder); -1 when it cannot. */
static int relay_listen(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *slash = strrchr(path, '/');
	char *dir = slash ? xstrndup(path, slash == path ? 1 : (size_t)(slash - path)) : NULL;
	int dirfd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	free(dir);
	if (fd >= 0 && strlen(path) < sizeof(sa.sun_path))
		memcpy(sa.sun_path, path, strlen(path) + 1);
	else if (fd >= 0 && dirfd >= 0 && slash)
		snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", dirfd, slash + 1);
	else if (fd >= 0) {
		close(fd);
		fd = -1;
	}
	if (fd >= 0) {
		unlink(path);
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(path, 0600) < 0 ||
		    listen(fd, 64) < 0) {
			close(fd);
			fd = -1;
		}
	}
	if (dirfd >= 0)
		close(dirfd);
	return fd;
}

/* A TCP connection to the service, within CONNECT_SECONDS; -1 when none. */
static int dial_service(const char *addr)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL, *ai;
	char *host, *port;
	int fd = -1, one = 1;

	if (cc_addr_split(addr, &host, &port) < 0)
		return -1;
	if (getaddrinfo(host, port, &hints, &res))
		res = NULL;
	for (ai = res; ai && fd < 0; ai = ai->ai_next) {
		struct pollfd p;
		int err = 0;
		socklen_t len = sizeof(err);

		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0)
			continue;
		p = (struct pollfd){ .fd = fd, .events = POLLOUT };
		if ((connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 && errno != EINPROGRESS) ||
		    poll(&p, 1, CONNECT_SECONDS * 1000) != 1 ||
		    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err ||
		    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
			close(fd);
			fd = -1;
		}
	}
	if (fd >= 0)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (res)
		freeaddrinfo(res);
	free(host);
	free(port);
	return fd;
}

/* Moves what `from` has to `to`: 0 at its end (`to` is told), 1 more may come, -1 broken. */
static int pump(int from, int to)
{
	char buf[65536];
	ssize_t n = read(from, buf, sizeof(buf));

	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 1 : -1;
	if (!n) {
		shutdown(to, SHUT_WR);
		return 0;
	}
	return cc_write_full(to, buf, (size_t)n) < 0 ? -1 : 1;
}

/* One shim's connection, carried both ways until both have ended (a child of its own). */
static void carry(const struct relay *r, int shim)
{
	char line[CC_TOKEN_LINE + 1];
	int up = -1, open_up = 1, open_down = 1;

	if (!r->have_token || (up = dial_service(r->addr)) < 0)
		_exit(0);
	snprintf(line, sizeof(line), "%s %s\n", CC_TOKEN_MAGIC, r->token);
	if (cc_write_full(up, line, CC_TOKEN_LINE) < 0)
		_exit(0);
	while (open_up || open_down) {
		struct pollfd p[2] = { { .fd = open_up ? shim : -1, .events = POLLIN },
				       { .fd = open_down ? up : -1, .events = POLLIN } };
		int k;

		if (poll(p, 2, CC_SILENCE_SECONDS * 2 * 1000) <= 0)
			break;
		if (open_up && (p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
			k = pump(shim, up);
			if (k < 0)
				break;
			open_up = k;
		}
		if (open_down && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
			k = pump(up, shim);
			if (k < 0)
				break;
			open_down = k;
		}
	}
	_exit(0);
}

/* Takes a waiting connection into a child of its own. */
static void take(const struct relay *r, int listen_fd)
{
	int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
	pid_t pid;

	if (fd < 0)
		return;
	pid = fork();
	if (!pid) {
		close(listen_fd);
		carry(r, fd);
	}
	close(fd);
}

/* The command's way of ending, as this process's own. */
static int end_as(int status)
{
	if (WIFSIGNALED(status)) {
		signal(WTERMSIG(status), SIG_DFL);
		kill(getpid(), WTERMSIG(status));
		return 128 + WTERMSIG(status);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static int parse(struct relay *r, int argc, char **argv)
{
	if (argc < 6 || strcmp(argv[0], "--relay") || strcmp(argv[4], "--"))
		return -1;
	r->addr = argv[1];
	r->token_file = argv[2];
	r->sock = argv[3];
	r->cmd = argv + 5;
	return 0;
}

int cc_relay_main(int argc, char **argv)
{
	struct relay r = { 0 };
	int listen_fd, status = 0;
	pid_t cmd;

	if (parse(&r, argc, argv) < 0) {
		fprintf(stderr, "usage: nextbot-cc --relay HOST:PORT TOKENFILE SOCK -- CMD...\n");
		return 127;
	}
	signal(SIGPIPE, SIG_IGN);
	r.have_token = !cc_token_read(r.token, r.token_file);
	listen_fd = relay_listen(r.sock);
	if (listen_fd < 0) {
		/* something at SOCK all the same: the box binds it (shims compile themselves) */
		int fd = open(r.sock, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

		if (fd >= 0)
			close(fd);
	}
	cmd = fork();
	if (!cmd) {
		execvp(r.cmd[0], r.cmd);
		_exit(errno == ENOENT ? 127 : 126);
	}
	while (cmd > 0) {
		struct pollfd p = { .fd = listen_fd, .events = POLLIN };
		int st;
		pid_t done;

		if (listen_fd < 0) {
			if (waitpid(cmd, &status, 0) == cmd || errno != EINTR)
				break;
			continue;
		}
		if (poll(&p, 1, 200) == 1)
			take(&r, listen_fd);
		/* the connections' children too, as they end */
		while ((done = waitpid(-1, &st, WNOHANG)) > 0)
			if (done == cmd) {
				status = st;
				cmd = 0;
			}
	}
	if (listen_fd >= 0)
		close(listen_fd);
	unlink(r.sock);
	return cmd < 0 ? 127 : end_as(status);
}
