/* The compile service's life: its folder of shims and socket, its start and stop for a night. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cc/cc.h"
#include "cc/cc_int.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/strvec.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define SHIM_NAME "nextbot-cc"
#define SHIM_MAX ((size_t)64 << 20)
#define START_SECONDS 60      /* the service must listen by then */
#define STOP_SECONDS 45       /* and be gone by then once told to stop (it waits 30) */

struct cc_service {
	pid_t pid;
	int status_fd;          /* its lines: "ready", "error …", "stats …" */
	char *run_dir, *jobs_dir, *empty, *store;
	struct runcmd_bind binds[3];
	/* with runner.cache.listen: the token's file, and the relay a node starts a box
	   under: the shim's copy in run_dir, "--relay", HOST:PORT, the token's file */
	char *token_file, *relay_to, *relay_exe;
	const char *relay[5];
};

/* ---- the service's folder (made by the service process itself) ---- */

/* A link bin/<name> → nextbot-cc for each compiler name in PATH's folders. */
static void link_compilers(const char *bin, const char *path, const char *self_bin)
{
	struct strbuf dir = STRBUF_INIT;

	while (*path) {
		size_t len = strcspn(path, ":");
		DIR *d;
		struct dirent *de;

		strbuf_reset(&dir);
		strbuf_add(&dir, path, len);
		path += len + (path[len] == ':');
		if (dir.buf[0] != '/' || !strcmp(dir.buf, self_bin) || !strcmp(dir.buf, CC_BOX_BIN))
			continue;
		d = opendir(dir.buf);
		while (d && (de = readdir(d))) {
			char *src, *link;
			struct stat st;

			if (!cc_compiler_name(de->d_name))
				continue;
			src = xstrfmt("%s/%s", dir.buf, de->d_name);
			link = xstrfmt("%s/%s", bin, de->d_name);
			if (!stat(src, &st) && S_ISREG(st.st_mode) && (st.st_mode & 0111) &&
			    symlink(SHIM_NAME, link) < 0 && errno != EEXIST)
				log_warn("compiler cache: cannot link %s: %s", link,
					 strerror(errno));
			free(src);
			free(link);
		}
		if (d)
			closedir(d);
	}
	strbuf_release(&dir);
}

/* The socket at <run_dir>/sock, listening; a long path is reached through /proc. */
static int listen_at(const char *run_dir, const char *user)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char *path = xstrfmt("%s/sock", run_dir);
	int dirfd = open(run_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int error = 0;

	if (fd < 0 || dirfd < 0) {
		error = nb_error_errno(NB_ERROR, "compiler cache: cannot make a socket");
		goto done;
	}
	if (strlen(path) < sizeof(sa.sun_path))
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	else
		snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/sock", dirfd);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    fchmodat(dirfd, "sock", 0600, 0) < 0 || listen(fd, 128) < 0) {
		error = nb_error_errno(NB_ERROR, "compiler cache: cannot listen at '%s'", path);
		goto done;
	}
	if (!geteuid() && user) {
		struct passwd *pw = getpwnam(user);

		/* only the runner user (and root) may connect */
		if (!pw || fchownat(dirfd, "sock", pw->pw_uid, pw->pw_gid, 0) < 0)
			error = nb_error_errno(NB_ERROR, "compiler cache: cannot give '%s' to %s",
					       path, user);
	}
done:
	if (dirfd >= 0)
		close(dirfd);
	free(path);
	if (error && fd >= 0)
		close(fd);
	return error ? error : fd;
}

/* The places file: what a shim hashes and sends, the service's word for it. */
static int write_places(const char *run_dir, const struct cc_serve_opts *o)
{
	struct strvec private = STRVEC_INIT, shown = STRVEC_INIT;
	struct strbuf sb = STRBUF_INIT;
	char *path = xstrfmt("%s/" CC_PLACES_FILE, run_dir);
	size_t i;
	int ret;

	cc_places(&private, &shown, o);
	for (i = 0; i < private.nr; i++)
		strbuf_addf(&sb, "private %s\n", private.v[i]);
	for (i = 0; i < shown.nr; i++)
		strbuf_addf(&sb, "shown %s\n", shown.v[i]);
	ret = file_write_atomic_mode(path, sb.buf, sb.len, 0644);
	strvec_clear(&private);
	strvec_clear(&shown);
	strbuf_release(&sb);
	free(path);
	return ret;
}

int cc_run_dir_make(const char *run_dir, const char *shim, const char *path,
		    const struct cc_serve_opts *o)
{
	char *bin = xstrfmt("%s/bin", run_dir), *copy = xstrfmt("%s/" SHIM_NAME, bin);
	char *empty = xstrfmt("%s/empty", run_dir);
	struct strbuf exe = STRBUF_INIT;
	int ret;

	if ((ret = file_remove_tree(run_dir)) < 0 || (ret = file_mkdir_p(run_dir, 0711)) < 0 ||
	    (ret = file_mkdir_p(bin, 0755)) < 0 || (ret = file_mkdir_p(empty, 0555)) < 0)
		goto done;
	/* a copy: the runner user can start it wherever nextbot itself lives */
	if ((ret = strbuf_read_file(&exe, shim, SHIM_MAX)) < 0 ||
	    (ret = file_write_atomic_mode(copy, exe.buf, exe.len, 0755)) < 0) {
		nb_error_prefix("compiler cache: the shim: ");
		goto done;
	}
	link_compilers(bin, path, bin);
	if ((ret = write_places(run_dir, o)) < 0)
		goto done;
	ret = listen_at(run_dir, o->user);
done:
	strbuf_release(&exe);
	free(bin);
	free(copy);
	free(empty);
	return ret;
}

/* ---- the night's side ---- */

static void push_opt(struct strvec *av, const char *name, long long v)
{
	if (v > 0) {
		strvec_push(av, name);
		strvec_pushf(av, "%lld", v);
	}
}

static void serve_argv(struct strvec *av, const struct cc_service_opts *o, const char *shim)
{
	const char *path = getenv("PATH");
	size_t i;

	strvec_pushl(av, o->exe, "cc-serve", "--run", o->run_dir, "--jobs", o->jobs_dir,
		     "--store", o->store, "--shim", shim, "--bwrap", o->bwrap ? o->bwrap : "",
		     "--path", path && *path ? path : "/usr/local/bin:/usr/bin:/bin",
		     "--status-fd", "3", NULL);
	strvec_push(av, "--parent");
	strvec_pushf(av, "%ld", (long)getpid());
	if (o->user)
		strvec_pushl(av, "--user", o->user, NULL);
	for (i = 0; o->shown && o->shown[i]; i++)
		strvec_pushl(av, "--show", o->shown[i], NULL);
	for (i = 0; o->hide && o->hide[i]; i++)
		strvec_pushl(av, "--hide", o->hide[i], NULL);
	push_opt(av, "--max", o->max);
	push_opt(av, "--min-free", o->min_free);
	push_opt(av, "--memory", o->limits.memory);
	push_opt(av, "--processes", o->limits.processes);
	push_opt(av, "--cpu", o->limits.cpu);
	push_opt(av, "--file-size", o->limits.fsize);
	push_opt(av, "--timeout", (long long)o->timeout);
	if (o->listen)
		strvec_pushl(av, "--listen", o->listen, "--token-file", o->token_file, NULL);
}

/*
 * A new token for the night, in a file only the runner user (and root) reads: the
 * nodes' relays read it there; no box sees it (it is not in the shims' folder).
 */
static int write_token(const char *path, const char *user)
{
	unsigned char raw[SHA256_LEN];
	char hex[SHA256_HEXSZ + 1];
	struct passwd *pw;
	const char *slash = strrchr(path, '/');
	char *dir = slash && slash != path ? xstrndup(path, (size_t)(slash - path)) : NULL;
	int made = !dir || file_mkdir_p(dir, 0711) == 0;

	free(dir);
	if (!made)
		return NB_ERROR;
	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		return nb_error_errno(NB_ERROR, "compiler cache: no random bytes for a token");
	sha256_hex(hex, raw);
	if (file_write_atomic_mode(path, hex, SHA256_HEXSZ, 0600) < 0)
		return NB_ERROR;
	if (!geteuid() && user &&
	    (!(pw = getpwnam(user)) || chown(path, pw->pw_uid, pw->pw_gid) < 0))
		return nb_error_errno(NB_ERROR, "compiler cache: cannot give '%s' to %s", path,
				      user);
	return 0;
}

/* The relay's command: the address the nodes dial (the port the service got). */
static int set_relay(struct cc_service *s, const char *listen, const char *ready)
{
	char *host, *port;
	long got;

	if (str_to_long(ready + strlen("ready "), &got) < 0 || got <= 0 || got > 65535 ||
	    cc_addr_split(listen, &host, &port) < 0)
		return nb_error_set(NB_ERROR, "compiler cache: the service said '%s'", ready);
	s->relay_to = strchr(host, ':') ? xstrfmt("[%s]:%ld", host, got)
					: xstrfmt("%s:%ld", host, got);
	s->relay_exe = xstrfmt("%s/bin/" SHIM_NAME, s->run_dir);
	s->relay[0] = s->relay_exe;
	s->relay[1] = "--relay";
	s->relay[2] = s->relay_to;
	s->relay[3] = s->token_file;
	s->relay[4] = NULL;
	free(host);
	free(port);
	return 0;
}

/* nextbot-cc beside nextbot: the build puts them side by side, and so does make install. */
static char *shim_beside(const char *exe)
{
	char self[4096];
	const char *slash;
	ssize_t n;

	if (!strchr(exe, '/')) {
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		self[n > 0 ? n : 0] = 0;
		exe = self;
	}
	slash = strrchr(exe, '/');
	return xstrfmt("%.*s" SHIM_NAME, slash ? (int)(slash - exe + 1) : 0, exe);
}

/* Reads one line of the service's (at most `seconds` of waiting); 0 or -1 (EOF, silence). */
static int read_line(struct strbuf *line, int fd, int seconds)
{
	time_t end = time(NULL) + seconds;

	strbuf_reset(line);
	while (!strchr(line->buf, '\n') && line->len < 4096) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char buf[512];
		ssize_t n;
		int left = (int)(end - time(NULL));

		if (left <= 0 || poll(&p, 1, left * 1000) <= 0)
			return -1;
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		strbuf_add(line, buf, (size_t)n);
	}
	strbuf_rtrim(line);
	return 0;
}

/* The child: fd 3 the status pipe, nothing else open, dies with us; only async-safe calls. */
static void exec_child(char *const *argv, char *const *envp, int status_w, pid_t parent)
{
	if (status_w == 3 ? fcntl(3, F_SETFD, 0) < 0 : dup2(status_w, 3) < 0)
		_exit(127);
	syscall(SYS_close_range, 4U, ~0U, 0);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(1);
	execve(argv[0], argv, envp);
	_exit(127);
}

static void reap(pid_t pid, int seconds)
{
	time_t end = time(NULL) + seconds;
	int status;

	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (time(NULL) >= end) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return;
		}
		usleep(20000);
	}
}

int cc_service_start(struct cc_service **out, const struct cc_service_opts *o)
{
	struct cc_service *s = xcalloc(1, sizeof(*s));
	struct strvec av = STRVEC_INIT, env = STRVEC_INIT;
	struct strbuf line = STRBUF_INIT;
	char *shim = o->shim ? xstrdup(o->shim) : shim_beside(o->exe);
	int pipefd[2] = { -1, -1 }, error = 0;
	const char *path = getenv("PATH");
	pid_t self = getpid();

	*out = NULL;
	s->pid = -1;
	s->status_fd = -1;
	s->run_dir = xstrdup(o->run_dir);
	s->jobs_dir = xstrdup(o->jobs_dir);
	s->empty = xstrfmt("%s/empty", o->run_dir);
	s->store = xstrdup(o->store);
	if (access(shim, X_OK) < 0) {
		error = nb_error_errno(NB_ENOTFOUND, "compiler cache: no shim program '%s'", shim);
		goto done;
	}
	if (o->listen) {
		s->token_file = xstrdup(o->token_file);
		if ((error = write_token(s->token_file, o->user)) < 0)
			goto done;
	}
	serve_argv(&av, o, shim);
	/* the service's own environment: nothing of ours reaches a compile but PATH */
	strvec_pushf(&env, "PATH=%s", path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		error = nb_error_errno(NB_ERROR, "compiler cache: cannot make a pipe");
		goto done;
	}
	s->pid = fork();
	if (s->pid < 0) {
		error = nb_error_errno(NB_ERROR, "compiler cache: cannot fork");
		goto done;
	}
	if (!s->pid)
		exec_child(av.v, env.v, pipefd[1], self);
	close(pipefd[1]);
	pipefd[1] = -1;
	s->status_fd = pipefd[0];
	if (read_line(&line, s->status_fd, START_SECONDS) < 0 ||
	    (strcmp(line.buf, "ready") && !str_starts_with(line.buf, "ready "))) {
		error = nb_error_set(NB_ERROR, "compiler cache: the service did not start%s%s",
				     str_starts_with(line.buf, "error ") ? ": " : "",
				     str_starts_with(line.buf, "error ") ? line.buf + 6 : "");
		goto done;
	}
	/* the shims; and the store, wherever it is, covered by an empty folder */
	s->binds[0] = (struct runcmd_bind){ s->run_dir, CC_BOX_DIR, 0 };
	s->binds[1] = (struct runcmd_bind){ s->empty, s->store, 0 };
	s->binds[2] = (struct runcmd_bind){ NULL, NULL, 0 };
	if (o->listen && (error = set_relay(s, o->listen, line.buf)) < 0)
		goto done;
	*out = s;
done:
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	if (error)
		cc_service_stop(s, NULL);
	strvec_clear(&av);
	strvec_clear(&env);
	strbuf_release(&line);
	free(shim);
	return error;
}

void cc_service_box(const struct cc_service *s, struct runcmd_box *box)
{
	if (!s)
		return;
	box->binds = s->binds;
	box->path_first = CC_BOX_BIN;
	if (s->relay_exe) {
		box->relay = s->relay;
		box->relay_at = CC_BOX_DIR "/sock";
	}
}

static void parse_stats(struct cc_stats *st, const char *line)
{
	if (sscanf(line, "stats %ld %ld %ld %ld %ld %lld %ld %ld %ld %ld", &st->requests,
		   &st->hits, &st->compiled, &st->failed, &st->refused, &st->bytes,
		   &st->direct_hits, &st->direct_misses, &st->remote, &st->remote_refused) != 10)
		memset(st, 0, sizeof(*st));
}

void cc_service_stop(struct cc_service *s, struct cc_stats *stats)
{
	struct strbuf line = STRBUF_INIT;

	if (stats)
		memset(stats, 0, sizeof(*stats));
	if (!s)
		return;
	if (s->pid > 0) {
		kill(s->pid, SIGTERM);
		while (s->status_fd >= 0 && !read_line(&line, s->status_fd, STOP_SECONDS))
			if (stats && str_starts_with(line.buf, "stats "))
				parse_stats(stats, line.buf);
		reap(s->pid, 5);
	}
	if (s->status_fd >= 0)
		close(s->status_fd);
	if (file_remove_tree(s->run_dir) < 0 || file_remove_tree(s->jobs_dir) < 0)
		log_warn("%s", nb_error_last());
	if (s->token_file && unlink(s->token_file) < 0 && errno != ENOENT)
		log_warn("compiler cache: cannot remove '%s': %s", s->token_file, strerror(errno));
	free(s->token_file);
	free(s->relay_to);
	free(s->relay_exe);
	strbuf_release(&line);
	free(s->run_dir);
	free(s->jobs_dir);
	free(s->empty);
	free(s->store);
	free(s);
}
