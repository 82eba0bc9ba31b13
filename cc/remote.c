/* The compile service's TCP side for cluster nodes: its socket, the token a connection shows. */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cc/cc_int.h"
#include "util/error.h"
#include "util/xalloc.h"
#include "util/banned.h"

static int listen_tcp(const char *addr, int *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *res, *ai;
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char *host, *svc;
	int fd = -1, one = 1, gai;

	if (cc_addr_split(addr, &host, &svc) < 0)
		return nb_error_set(NB_EINVALID, "compiler cache: '%s' is not HOST:PORT", addr);
	gai = getaddrinfo(host, svc, &hints, &res);
	if (gai) {
		nb_error_set(NB_ERROR, "compiler cache: cannot resolve '%s': %s", host,
			     gai_strerror(gai));
		goto done;
	}
	for (ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 128) < 0) {
			nb_error_errno(NB_ERROR, "compiler cache: cannot listen at '%s'", addr);
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	if (fd >= 0 && getsockname(fd, (struct sockaddr *)&ss, &len) == 0)
		*port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
						       : ((struct sockaddr_in *)&ss)->sin_port);
done:
	free(host);
	free(svc);
	return fd >= 0 ? fd : NB_ERROR;
}

int cc_remote_admit(int fd, const char *token, int seconds)
{
	char want[CC_TOKEN_LINE + 1], got[CC_TOKEN_LINE];
	unsigned char diff = 0;
	size_t have = 0, i;
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	snprintf(want, sizeof(want), "%s %s\n", CC_TOKEN_MAGIC, token);
	if (strlen(want) != CC_TOKEN_LINE)
		return 0;
	while (have < CC_TOKEN_LINE) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, seconds * 1000) != 1)
			return 0;
		n = read(fd, got + have, CC_TOKEN_LINE - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		have += (size_t)n;
	}
	/* every byte compared: the time taken says nothing of where a guess went wrong */
	for (i = 0; i < CC_TOKEN_LINE; i++)
		diff |= (unsigned char)(want[i] ^ got[i]);
	return !diff;
}

int cc_remote_open(struct cc_remote *out, const char *addr, const char *token_file)
{
	out->fd = -1;
	out->port = 0;
	if (cc_token_read(out->token, token_file) < 0)
		return nb_error_set(NB_EINVALID, "compiler cache: no token in '%s'", token_file);
	out->fd = listen_tcp(addr, &out->port);
	return out->fd < 0 ? out->fd : 0;
}
