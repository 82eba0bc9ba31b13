/* Running subprocesses: supervisor, process group, timeout, capped output, privilege drop. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/runcmd.h"
#include "util/cgroup.h"
#include "util/error.h"
#include "util/size.h"
#include "util/timespec.h"
#include "util/log.h"
#include "util/strvec.h"
#include "util/xalloc.h"
#include "util/banned.h"

extern char **environ;

#define DEFAULT_CAP (1024 * 1024)
#define DEFAULT_NPROC 2048L
#define DEFAULT_AS (16LL << 30)
#define DEFAULT_FSIZE (8LL << 30)
#define STDERR_CAP 8192
#define CAPTURE_MAX (256u * 1024 * 1024)
#define KILL_GRACE 300
#define BOX_STATUS_FD 3      /* bwrap's --json-status-fd in the command process */
#define BOX_STATUS_MAX 4096
#define STOP_POLL_MS 100    /* how often a run asks whether it is to stop */

/*
 * Where the command child failed before (or at) exec; sent to the supervisor over a
 * close-on-exec pipe, so a successful exec sends nothing.
 */
enum child_stage {
	STAGE_NONE = 0,
	STAGE_EXEC,
	STAGE_CHDIR,
	STAGE_FDS,
	STAGE_LIMITS,
	STAGE_USER,
};

struct child_failure {
	int stage;
	int err;
};

/* What the supervisor reports to runcmd_run() once every process it had is gone. */
struct report {
	int started;     /* the command process was forked */
	int wstatus;     /* its wait status */
	int box_exit;    /* boxed: the command's exit status as bwrap reported it, -1 none */
	int timed_out;
	int interrupted; /* the supervisor was told to stop (nextbot died or was killed) */
	struct child_failure failure;
	int fork_errno;
	int lost;        /* the command would not die: treat as killed */
};

/* Everything the forked processes need, prepared before fork: no lookups after it. */
struct prepared {
	const struct runcmd_opts *opts;
	char *const *argv;
	char **envp;
	int use_path;           /* execvpe (argv) rather than execve (shell) */
	int boxed;              /* argv is bwrap's, with the command after "--" */
	int stdin_fd, out_w, err_w;
	int report_w;
	pid_t nextbot_pid;
	int drop;               /* switch to uid/gid below */
	uid_t uid;
	gid_t gid;
	int set_limits;
	struct runcmd_limits limits;
	struct cgroup cg;       /* the command's, when limits.memory or .processes */
	int has_deadline;
	struct timespec deadline; /* CLOCK_MONOTONIC */
};

/* Head and tail of a stream: memory stays bounded whatever the command prints. */
struct capture {
	struct strbuf head;
	size_t head_cap;
	char *tail;
	size_t tail_cap, tail_len, tail_pos;
	size_t total;
};

static void capture_init(struct capture *c, size_t cap)
{
	strbuf_init(&c->head, 0);
	c->head_cap = cap / 2;
	c->tail_cap = cap - c->head_cap;
	c->tail = NULL;
	c->tail_len = c->tail_pos = 0;
	c->total = 0;
}

static void capture_add(struct capture *c, const char *data, size_t n)
{
	size_t take;

	c->total += n;
	take = c->head_cap - c->head.len;
	if (take > n)
		take = n;
	strbuf_add(&c->head, data, take);
	data += take;
	n -= take;
	if (!n || !c->tail_cap)
		return;
	if (!c->tail)
		c->tail = xmalloc(c->tail_cap);
	if (n >= c->tail_cap) {
		memcpy(c->tail, data + n - c->tail_cap, c->tail_cap);
		c->tail_pos = 0;
		c->tail_len = c->tail_cap;
		return;
	}
	while (n) {
		size_t chunk = c->tail_cap - c->tail_pos;

		if (chunk > n)
			chunk = n;
		memcpy(c->tail + c->tail_pos, data, chunk);
		c->tail_pos = (c->tail_pos + chunk) % c->tail_cap;
		c->tail_len = c->tail_len + chunk > c->tail_cap ? c->tail_cap : c->tail_len + chunk;
		data += chunk;
		n -= chunk;
	}
}

/* Moves the kept text into `out`: head, an omission line if bytes were dropped, tail. */
static void capture_finish(struct capture *c, struct strbuf *out)
{
	size_t omitted = c->total - c->head.len - c->tail_len;
	size_t start = (c->tail_pos + c->tail_cap - c->tail_len) % (c->tail_cap ? c->tail_cap : 1);

	strbuf_addbuf(out, &c->head);
	if (omitted) {
		if (out->len && out->buf[out->len - 1] != '\n')
			strbuf_addch(out, '\n');
		strbuf_addf(out, "[... %zu bytes omitted ...]\n", omitted);
	}
	if (c->tail_len) {
		size_t first = c->tail_cap - start;

		if (first > c->tail_len)
			first = c->tail_len;
		strbuf_add(out, c->tail + start, first);
		strbuf_add(out, c->tail, c->tail_len - first);
	}
	strbuf_release(&c->head);
	free(c->tail);
	c->tail = NULL;
}

static void write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		p += n;
		len -= (size_t)n;
	}
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static void close_fds(unsigned int lo, unsigned int hi)
{
	long max;

	if (lo > hi)
		return;
	if (!syscall(SYS_close_range, lo, hi, 0))
		return;
	/* Kernels before 5.9: close one by one up to the descriptor limit. */
	max = sysconf(_SC_OPEN_MAX);
	if (max < 0 || max > 65536)
		max = 65536;
	for (; lo <= hi && lo < (unsigned int)max; lo++)
		close((int)lo);
}

/* Closes every descriptor >= 3 except those in `keep` (at most 8). */
static void close_fds_except(const int *keep, int nkeep)
{
	int sorted[8], i, n = 0;
	unsigned int lo = 3;

	for (i = 0; i < nkeep && n < 8; i++)
		if (keep[i] >= 3)
			sorted[n++] = keep[i];
	qsort(sorted, (size_t)n, sizeof(int), cmp_int);
	for (i = 0; i < n; i++) {
		if ((unsigned int)sorted[i] > lo)
			close_fds(lo, (unsigned int)sorted[i] - 1);
		lo = (unsigned int)sorted[i] + 1;
	}
	close_fds(lo, ~0U);
}

/* ---- the command process (grandchild of nextbot) ---- */

static void child_fail(int fd, int stage, int err)
{
	struct child_failure f = { stage, err };

	write_all(fd, &f, sizeof(f));
	_exit(stage == STAGE_EXEC && err != ENOENT ? 126 : 127);
}

static int set_limit(int resource, long long value)
{
	struct rlimit rl;

	if (value <= 0)
		return 0;
	rl.rlim_cur = rl.rlim_max = (rlim_t)value;
	/* SIGXCPU at the limit (it says which limit); SIGKILL only if it is ignored */
	if (resource == RLIMIT_CPU)
		rl.rlim_max = (rlim_t)value + 5;
	if (getuid() != 0) {
		/* Unprivileged: the hard limit may only go down. */
		struct rlimit old;

		if (!getrlimit(resource, &old) && old.rlim_max != RLIM_INFINITY &&
		    old.rlim_max < rl.rlim_max)
			rl.rlim_cur = rl.rlim_max = old.rlim_max;
	}
	return setrlimit(resource, &rl);
}

static void run_child(const struct prepared *p, int fail_fd, int status_w)
{
	const struct runcmd_opts *o = p->opts;
	int keep[2] = { fail_fd, BOX_STATUS_FD };
	sigset_t none;
	int sig;

	setpgid(0, 0);
	for (sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);

	if (dup2(p->stdin_fd, 0) < 0 || dup2(p->out_w, 1) < 0 ||
	    dup2(p->err_w >= 0 ? p->err_w : p->out_w, 2) < 0)
		child_fail(fail_fd, STAGE_FDS, errno);
	if (p->boxed) {
		/* bwrap reports the command's status on fd 3: nothing else may sit there */
		if (fail_fd <= BOX_STATUS_FD) {
			int moved = fcntl(fail_fd, F_DUPFD_CLOEXEC, 10);

			if (moved < 0)
				child_fail(fail_fd, STAGE_FDS, errno);
			fail_fd = keep[0] = moved;
		}
		if (status_w == BOX_STATUS_FD ? fcntl(status_w, F_SETFD, 0) < 0
					      : dup2(status_w, BOX_STATUS_FD) < 0)
			child_fail(fail_fd, STAGE_FDS, errno);
	}
	/* as root, before the switch: the runner user cannot leave it then */
	if (cgroup_join(&p->cg) < 0)
		child_fail(fail_fd, STAGE_LIMITS, errno);
	close_fds_except(keep, p->boxed ? 2 : 1);

	if (p->set_limits &&
	    (set_limit(RLIMIT_NPROC, p->limits.nproc) < 0 ||
	     set_limit(RLIMIT_AS, p->limits.as_bytes) < 0 ||
	     set_limit(RLIMIT_FSIZE, p->limits.fsize) < 0 ||
	     set_limit(RLIMIT_CPU, p->limits.cpu) < 0))
		child_fail(fail_fd, STAGE_LIMITS, errno);
	if (p->drop) {
		if (setgroups(1, &p->gid) < 0 || setgid(p->gid) < 0 || setuid(p->uid) < 0)
			child_fail(fail_fd, STAGE_USER, errno);
		if (setuid(0) == 0)
			child_fail(fail_fd, STAGE_USER, EPERM);
	}
	/*
	 * As the user the command runs as: a working directory that user cannot reach
	 * fails here, as it would on a Slurm node.  bwrap enters it itself (--chdir).
	 */
	if (p->boxed ? chdir("/") < 0 : o->cwd && chdir(o->cwd) < 0)
		child_fail(fail_fd, STAGE_CHDIR, errno);
	if (o->fn)
		_exit(o->fn(o->fn_data) & 0xff);
	if (p->use_path)
		execvpe(p->argv[0], p->argv, p->envp);
	else
		execve(p->argv[0], p->argv, p->envp);
	child_fail(fail_fd, STAGE_EXEC, errno);
}

/* ---- the supervisor (child of nextbot, parent of the command) ---- */

static int timespec_cmp(const struct timespec *a, const struct timespec *b)
{
	if (a->tv_sec != b->tv_sec)
		return a->tv_sec < b->tv_sec ? -1 : 1;
	return (a->tv_nsec > b->tv_nsec) - (a->tv_nsec < b->tv_nsec);
}

static void kill_pid_and_group(long pid)
{
	kill((pid_t)-pid, SIGKILL);
	kill((pid_t)pid, SIGKILL);
}

/* Without CONFIG_PROC_CHILDREN: scan /proc for processes whose parent we are. */
static void kill_children_scan(void)
{
	char path[64], buf[1024];
	struct dirent *de;
	DIR *d = opendir("/proc");

	if (!d)
		return;
	while ((de = readdir(d))) {
		long pid, ppid;
		char *rp, *end;
		ssize_t n;
		int fd;

		pid = strtol(de->d_name, &end, 10);
		if (pid <= 0 || *end)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = 0;
		rp = strrchr(buf, ')');
		if (rp && sscanf(rp, ") %*c %ld", &ppid) == 1 && ppid == getpid())
			kill_pid_and_group(pid);
	}
	closedir(d);
}

/* SIGKILLs every direct child of ours and the process groups they lead. */
static void kill_children(void)
{
	char path[64], buf[8192], *p, *end;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)getpid(), (int)getpid());
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		kill_children_scan();
		return;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0) {
		kill_children_scan();
		return;
	}
	buf[n] = 0;
	/* A full buffer may end inside a pid: never act on a cut one (next round gets it). */
	if ((size_t)n == sizeof(buf) - 1 && (p = strrchr(buf, ' ')))
		*p = 0;
	for (p = buf;; p = end) {
		long pid = strtol(p, &end, 10);

		if (end == p)
			break;
		if (pid > 0)
			kill_pid_and_group(pid);
	}
}

/*
 * Kills the command's process group and then every process left under us: as a
 * child subreaper we inherit whatever the command orphaned, setsid'd or not, so
 * killing our children until none is left empties the whole tree.  A process that
 * does not die (stuck in the kernel, state D) is given up on after KILL_GRACE
 * tenths of a second, so that nextbot itself does not hang on it.
 */
static void kill_tree(pid_t pgid, pid_t main_pid, struct report *r)
{
	struct timespec tick = { 0, 100000000L };
	sigset_t chld;
	int rounds = 0, status;
	pid_t pid;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (pgid > 0)
		kill(-pgid, SIGKILL);
	while (rounds < KILL_GRACE) {
		kill_children();
		pid = waitpid(-1, &status, WNOHANG);
		if (pid < 0 && errno == ECHILD)
			return;
		if (pid > 0) {
			if (main_pid && pid == main_pid) {
				r->wstatus = status;
				r->lost = 0;
			}
			continue;
		}
		sigtimedwait(&chld, NULL, &tick);
		rounds++;
	}
}

/*
 * Waits until the command exits (returns 1, its status in *status), the deadline
 * passes or the supervisor is told to stop (returns 0, the reason noted in r).
 */
static int wait_main(const struct prepared *p, pid_t pid, int *status, struct report *r)
{
	sigset_t waitset;
	int sig;

	sigemptyset(&waitset);
	sigaddset(&waitset, SIGCHLD);
	sigaddset(&waitset, SIGTERM);
	sigaddset(&waitset, SIGINT);
	sigaddset(&waitset, SIGHUP);
	for (;;) {
		struct timespec now, left, *tp = NULL;
		pid_t w;

		/* Orphans reparented to us are reaped here as well. */
		while ((w = waitpid(-1, status, WNOHANG)) > 0)
			if (w == pid)
				return 1;
		if (p->has_deadline) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (timespec_cmp(&now, &p->deadline) >= 0) {
				r->timed_out = 1;
				return 0;
			}
			left.tv_sec = p->deadline.tv_sec - now.tv_sec;
			left.tv_nsec = p->deadline.tv_nsec - now.tv_nsec;
			if (left.tv_nsec < 0) {
				left.tv_nsec += 1000000000L;
				left.tv_sec--;
			}
			tp = &left;
		}
		sig = tp ? sigtimedwait(&waitset, NULL, tp) : sigwaitinfo(&waitset, NULL);
		if (sig > 0 && sig != SIGCHLD) {
			r->interrupted = 1;
			return 0;
		}
	}
}

/*
 * bwrap's --json-status-fd: one JSON object when the sandbox is up ("child-pid"),
 * another when the command ended ({ "exit-code": N }).  Every writer is gone when
 * this is read, so the pipe holds all there is.  -1 when there is no exit code:
 * the sandbox or the exec failed (or the command was killed with bwrap).
 */
static int box_exit_code(int fd)
{
	char buf[BOX_STATUS_MAX + 1];
	size_t len = 0;
	const char *at;
	long code;
	char *end;

	while (len < BOX_STATUS_MAX) {
		ssize_t n = read(fd, buf + len, BOX_STATUS_MAX - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	buf[len] = 0;
	at = strstr(buf, "\"exit-code\"");
	if (!at || !(at = strchr(at, ':')))
		return -1;
	code = strtol(at + 1, &end, 10);
	return end == at + 1 || code < 0 || code > 255 ? -1 : (int)code;
}

/*
 * The supervisor: a child subreaper between nextbot and the command.  It starts
 * with every signal blocked (see spawn) and only ever waits for the ones it wants;
 * PR_SET_PDEATHSIG turns nextbot's death into a SIGTERM that makes it kill the tree.
 */
static void supervise(const struct prepared *p)
{
	struct report r = { .box_exit = -1 };
	int fail_pipe[2] = { -1, -1 }, status_pipe[2] = { -1, -1 };
	int keep[6] = { p->stdin_fd, p->out_w, p->err_w, p->report_w, p->cg.procs_fd[0],
			p->cg.procs_fd[1] };
	int status;
	pid_t pid;

	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != p->nextbot_pid)
		_exit(1);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	close_fds_except(keep, 6);
	signal(SIGCHLD, SIG_DFL);

	if (pipe2(fail_pipe, O_CLOEXEC | O_NONBLOCK) < 0 ||
	    (p->boxed && pipe2(status_pipe, O_CLOEXEC | O_NONBLOCK) < 0)) {
		r.fork_errno = errno;
		goto report;
	}
	pid = fork();
	if (pid < 0) {
		r.fork_errno = errno;
		goto report;
	}
	if (!pid) {
		close(fail_pipe[0]);
		if (status_pipe[0] >= 0)
			close(status_pipe[0]);
		run_child(p, fail_pipe[1], status_pipe[1]);
	}
	r.started = 1;
	setpgid(pid, pid);
	close(fail_pipe[1]);
	if (status_pipe[1] >= 0)
		close(status_pipe[1]);
	close(p->out_w);
	if (p->err_w >= 0)
		close(p->err_w);
	close(p->stdin_fd);

	if (wait_main(p, pid, &status, &r)) {
		r.wstatus = status;
		/* Reaped: only its process group and the orphans remain. */
		kill_tree(pid, 0, &r);
	} else {
		/* Timed out or told to stop: nothing it started may stay. */
		r.lost = 1;
		kill_tree(pid, pid, &r);
	}
	if (read(fail_pipe[0], &r.failure, sizeof(r.failure)) != sizeof(r.failure))
		memset(&r.failure, 0, sizeof(r.failure));
	if (status_pipe[0] >= 0)
		r.box_exit = box_exit_code(status_pipe[0]);
report:
	write_all(p->report_w, &r, sizeof(r));
	_exit(0);
}

/* ---- runcmd_run(), in the calling thread ---- */

static const char *const allowed_env[] = {
	"PATH", "HOME", "LANG", "TZ", "TERM", "TMPDIR", "USER", "LOGNAME", "SHELL", "MAKEFLAGS",
	NULL,
};

static int env_allowed(const char *entry)
{
	size_t klen = strcspn(entry, "=");
	int i;

	if (!strncmp(entry, "LC_", 3))
		return 1;
	for (i = 0; allowed_env[i]; i++)
		if (strlen(allowed_env[i]) == klen && !strncmp(entry, allowed_env[i], klen))
			return 1;
	return 0;
}

/* Adds or replaces KEY=VALUE in `env`. */
static void env_set(struct strvec *env, const char *entry)
{
	size_t klen = strcspn(entry, "="), i;

	for (i = 0; i < env->nr; i++) {
		if (!strncmp(env->v[i], entry, klen) && env->v[i][klen] == '=') {
			free(env->v[i]);
			env->v[i] = xstrdup(entry);
			return;
		}
	}
	strvec_push(env, entry);
}

/* PATH=first:<PATH as it is> (a command's own env: PATH included). */
static void path_prepend(struct strvec *env, const char *first)
{
	const char *path = "/usr/local/bin:/usr/bin:/bin";
	char *s;
	size_t i;

	for (i = 0; i < env->nr; i++)
		if (!strncmp(env->v[i], "PATH=", 5))
			path = env->v[i] + 5;
	s = xstrfmt("PATH=%s%s%s", first, *path ? ":" : "", path);
	env_set(env, s);
	free(s);
}

static void build_env(struct strvec *env, const struct runcmd_opts *o, const struct passwd *pw)
{
	char **e;
	size_t i;

	for (e = environ; e && *e; e++)
		if (o->inherit_env || env_allowed(*e))
			strvec_push(env, *e);
	if (pw) {
		char *s = xstrfmt("HOME=%s", pw->pw_dir);

		env_set(env, s);
		free(s);
		s = xstrfmt("USER=%s", pw->pw_name);
		env_set(env, s);
		free(s);
		s = xstrfmt("LOGNAME=%s", pw->pw_name);
		env_set(env, s);
		free(s);
	}
	for (i = 0; o->env && o->env[i]; i++)
		if (strchr(o->env[i], '='))
			env_set(env, o->env[i]);
}

static int lookup_user(struct prepared *p, const char *user, struct passwd *pw,
			 char **pwbuf)
{
	struct passwd *res = NULL;
	size_t size = 16384;
	int err;

	*pwbuf = xmalloc(size);
	err = getpwnam_r(user, pw, *pwbuf, size, &res);
	if (!res) {
		if (err)
			errno = err;
		return err ? nb_error_errno(NB_ENOTFOUND, "runner user '%s' cannot be looked up",
					    user)
			   : nb_error_set(NB_ENOTFOUND, "runner user '%s' does not exist", user);
	}
	p->drop = 1;
	p->uid = pw->pw_uid;
	p->gid = pw->pw_gid;
	return 0;
}

static double elapsed(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start->tv_sec) +
	       (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

static void fill_result(struct runcmd_result *out, const struct report *r, int is_shell,
			  int boxed)
{
	int st = r->wstatus;

	if (r->lost) {
		out->signal = SIGKILL;
		out->exit_code = 128 + SIGKILL;
	} else if (WIFEXITED(st)) {
		out->exit_code = WEXITSTATUS(st);
	} else if (WIFSIGNALED(st)) {
		out->signal = WTERMSIG(st);
		out->exit_code = 128 + out->signal;
	}
	out->timed_out = r->timed_out;
	out->stopped = r->interrupted;
	if (r->failure.stage == STAGE_EXEC) {
		out->exec_failed = 1;
		out->exit_code = r->failure.err == ENOENT ? 127 : 126;
	}
	if (boxed && !r->lost && !r->interrupted && !out->exec_failed) {
		if (r->box_exit >= 0) {
			/* bwrap passes a signal on as 128+N, as a shell does */
			out->exit_code = r->box_exit;
		} else if (!out->signal) {
			/* bwrap gave up before the command ran: its reason is in the output */
			out->box_failed = out->exec_failed = 1;
		}
	}
	/*
	 * SIGXFSZ is RLIMIT_FSIZE; a SIGKILL we did not send is most likely the OOM
	 * killer.  A shell reports its child's SIGXFSZ as exit 128+SIGXFSZ.
	 */
	if (out->signal == SIGXFSZ ||
	    (out->signal == SIGKILL && !r->timed_out && !r->interrupted) ||
	    ((is_shell || boxed) && out->exit_code == 128 + SIGXFSZ))
		out->limit_hit = 1;
}

static const char *stage_name(int stage)
{
	switch (stage) {
	case STAGE_CHDIR:
		return "cannot change to the working directory";
	case STAGE_FDS:
		return "cannot set up file descriptors";
	case STAGE_LIMITS:
		return "cannot set resource limits";
	case STAGE_USER:
		return "cannot switch to the runner user";
	default:
		return "cannot start";
	}
}

static void write_log(const char *path, const struct strbuf *out, const struct strbuf *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0) {
		log_warn("cannot write log '%s': %s", path, strerror(errno));
		return;
	}
	write_all(fd, out->buf, out->len);
	if (err && err->len) {
		write_all(fd, "--- stderr ---\n", 15);
		write_all(fd, err->buf, err->len);
	}
	close(fd);
}

/* Reads what is available on `fd` into `c`; returns 0 at EOF, 1 if more may come. */
static int pump(int fd, struct capture *c)
{
	char buf[65536];
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n > 0) {
		capture_add(c, buf, (size_t)n);
		return 1;
	}
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 1;
	return 0;
}

static void drain(int fd, struct capture *c)
{
	int i;

	if (fd < 0)
		return;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	/* Bounded: every writer is dead, so only what sits in the pipe is left. */
	for (i = 0; i < 1024; i++) {
		char buf[65536];
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n <= 0 && !(n < 0 && errno == EINTR))
			break;
		if (n > 0)
			capture_add(c, buf, (size_t)n);
	}
}

/*
 * Collects output until the supervisor's report arrives; returns 0 or -1 (no report).
 * The supervisor is told to stop (SIGTERM: it kills the tree and reports) once
 * *o->cancel is set (then *cancelled says so), nextbot is stopping or o->stop says so.
 */
static volatile sig_atomic_t *stop_flag;

void runcmd_stop_on(volatile sig_atomic_t *flag)
{
	stop_flag = flag;
}

/* Whether this run is to end now: nextbot is stopping, or the caller says so. */
static int told_to_stop(const struct runcmd_opts *o)
{
	return (o->stoppable && stop_flag && *stop_flag) || (o->stop && o->stop(o->stop_data));
}

/*
 * Reads the child's stdout and stderr into `oc`, `ec` and the supervisor's report
 * into `r`, from the pipes' read ends `fds`: stdout, stderr, report.
 */
static int collect(const struct runcmd_opts *o, pid_t sup, const int fds[3], struct capture *oc,
		   struct capture *ec, struct report *r, int *cancelled)
{
	int out_r = fds[0], err_r = fds[1], report_r = fds[2];
	size_t got = 0;
	int stopped = 0;

	while (got < sizeof(*r)) {
		struct pollfd pfd[3];
		int n = 0, i, wait_ms;

		/* the supervisor kills the whole tree and reports, as at a timeout */
		if (!stopped && o->cancel && *o->cancel) {
			*cancelled = 1;
			kill(sup, SIGTERM);
			stopped = 1;
		}
		if (!stopped && told_to_stop(o)) {
			kill(sup, SIGTERM);
			stopped = 1;
		}
		pfd[n++] = (struct pollfd){ .fd = report_r, .events = POLLIN };
		if (out_r >= 0)
			pfd[n++] = (struct pollfd){ .fd = out_r, .events = POLLIN };
		if (err_r >= 0)
			pfd[n++] = (struct pollfd){ .fd = err_r, .events = POLLIN };
		wait_ms = !stopped && (o->cancel || (o->stoppable && stop_flag) || o->stop)
				  ? STOP_POLL_MS
				  : -1;
		if (poll(pfd, (nfds_t)n, wait_ms) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		for (i = 1; i < n; i++) {
			if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (pfd[i].fd == out_r && !pump(out_r, oc))
				out_r = -1;
			else if (pfd[i].fd == err_r && !pump(err_r, ec))
				err_r = -1;
		}
		if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t k = read(report_r, (char *)r + got, sizeof(*r) - got);

			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				return -1;
			got += (size_t)k;
		}
	}
	drain(out_r, oc);
	drain(err_r, ec);
	return 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static int prepare(struct prepared *p, const struct runcmd_opts *o, struct passwd *pw,
		     char **pwbuf)
{
	int is_root = geteuid() == 0;
	struct stat st;

	if (!!o->argv == !!o->shell || (o->argv && !o->argv[0]))
		return nb_error_set(NB_EINVALID, "runcmd: exactly one of argv and shell is needed");
	if (o->fn && (!o->argv || o->box || (is_root && o->user)))
		return nb_error_set(NB_EINVALID, "runcmd: a function child needs argv, no box "
				    "and no user switch");
	/* a place inside the box only: bwrap enters it, or says why not */
	if (o->box && o->box->cwd_in_box)
		st.st_mode = S_IFDIR;
	else if (o->cwd && stat(o->cwd, &st) < 0)
		return nb_error_errno(NB_ENOTFOUND, "cannot use working directory '%s'", o->cwd);
	if (o->cwd && !S_ISDIR(st.st_mode))
		return nb_error_set(NB_EINVALID, "working directory '%s' is not a directory",
				    o->cwd);
	if (is_root && o->user) {
		int error = lookup_user(p, o->user, pw, pwbuf);

		if (error)
			return error;
	}
	p->limits = o->limits;
	if (p->limits.memory || p->limits.processes) {
		if (cgroup_create(&p->cg, p->limits.memory, p->limits.processes) < 0)
			return NB_ERROR;
		/*
		 * The cgroup limits the whole command, the rlimits each process: where
		 * there is no cgroup, the rlimits stand in for it.
		 */
		if (p->cg.kind == CGROUP_NONE) {
			if (!p->limits.as_bytes)
				p->limits.as_bytes = p->limits.memory;
			if (!p->limits.nproc)
				p->limits.nproc = p->limits.processes;
		}
	}
	if (is_root) {
		if (!p->limits.nproc && p->cg.kind == CGROUP_NONE)
			p->limits.nproc = DEFAULT_NPROC;
		if (!p->limits.as_bytes && !p->limits.memory)
			p->limits.as_bytes = DEFAULT_AS;
		if (!p->limits.fsize)
			p->limits.fsize = DEFAULT_FSIZE;
	}
	p->set_limits = p->limits.nproc || p->limits.as_bytes || p->limits.fsize ||
			p->limits.cpu;
	p->stdin_fd = open(o->stdin_path ? o->stdin_path : "/dev/null", O_RDONLY | O_CLOEXEC);
	if (p->stdin_fd < 0)
		return nb_error_errno(NB_ERROR, "cannot open '%s'",
				      o->stdin_path ? o->stdin_path : "/dev/null");
	return 0;
}

static void set_deadline(struct prepared *p, const struct timespec *start, double timeout)
{
	double whole;

	if (timeout <= 0)
		return;
	if (timeout > 1e9)
		timeout = 1e9;
	whole = (double)(long)timeout;
	p->has_deadline = 1;
	p->deadline.tv_sec = start->tv_sec + (time_t)whole;
	p->deadline.tv_nsec = start->tv_nsec + (long)((timeout - whole) * 1e9);
	if (p->deadline.tv_nsec >= 1000000000L) {
		p->deadline.tv_nsec -= 1000000000L;
		p->deadline.tv_sec++;
	}
}

static void result_reset(struct runcmd_result *out)
{
	out->exit_code = -1;
	out->signal = out->timed_out = out->exec_failed = out->limit_hit = out->box_failed = 0;
	out->stopped = 0;
	out->limit = RUNCMD_LIMIT_NONE;
	out->limit_value = 0;
	out->seconds = out->cpu_seconds = 0;
	out->output_total = 0;
	strbuf_reset(&out->output);
}

/* Forks the supervisor and collects output until it reports; the core of runcmd_run(). */
static int spawn(struct runcmd_result *out, struct prepared *p, struct strbuf *err_out)
{
	const struct runcmd_opts *o = p->opts;
	int out_pipe[2] = { -1, -1 }, err_pipe[2] = { -1, -1 }, rep_pipe[2] = { -1, -1 };
	struct capture oc, ec;
	struct report r;
	struct rusage ru;
	sigset_t all, old;
	pid_t sup;
	int error = 0, cancelled = 0;

	if (pipe2(out_pipe, O_CLOEXEC) < 0 || pipe2(rep_pipe, O_CLOEXEC) < 0 ||
	    (!o->merge_stderr && pipe2(err_pipe, O_CLOEXEC) < 0)) {
		error = nb_error_errno(NB_ERROR, "cannot create a pipe");
		goto done;
	}
	p->out_w = out_pipe[1];
	p->err_w = err_pipe[1];
	p->report_w = rep_pipe[1];
	p->nextbot_pid = getpid();

	/* The supervisor starts with every signal blocked; it waits for the ones it wants. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	sup = fork();
	if (!sup)
		supervise(p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (sup < 0) {
		error = nb_error_errno(NB_ERROR, "cannot fork");
		goto done;
	}
	close_fd(&out_pipe[1]);
	close_fd(&err_pipe[1]);
	close_fd(&rep_pipe[1]);

	capture_init(&oc, o->output_cap ? o->output_cap : DEFAULT_CAP);
	capture_init(&ec, STDERR_CAP);
	memset(&r, 0, sizeof(r));
	if (collect(o, sup, (const int[3]){ out_pipe[0], err_pipe[0], rep_pipe[0] }, &oc, &ec, &r,
		    &cancelled) < 0) {
		kill(sup, SIGKILL);
		error = nb_error_set(NB_ERROR, "the command's supervisor died without a report");
	}
	memset(&ru, 0, sizeof(ru));
	while (wait4(sup, NULL, 0, &ru) < 0 && errno == EINTR)
		;
	out->cpu_seconds = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
			   (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	out->output_total = oc.total;
	capture_finish(&oc, &out->output);
	if (err_out)
		capture_finish(&ec, err_out);
	else
		capture_finish(&ec, &(struct strbuf)STRBUF_INIT);
	if (error)
		goto done;
	if (r.fork_errno) {
		errno = r.fork_errno;
		error = nb_error_errno(NB_ERROR, "cannot fork");
	} else if (r.failure.stage && r.failure.stage != STAGE_EXEC) {
		errno = r.failure.err;
		error = nb_error_errno(NB_ERROR, "%s", stage_name(r.failure.stage));
	} else {
		fill_result(out, &r, !o->argv, p->boxed);
		if (cancelled) {
			/* stopped because nobody wants its result: not a verdict */
			out->runner_failed = 1;
			out->limit_hit = out->timed_out = 0;
		}
	}
done:
	close_fd(&out_pipe[0]);
	close_fd(&out_pipe[1]);
	close_fd(&err_pipe[0]);
	close_fd(&err_pipe[1]);
	close_fd(&rep_pipe[0]);
	close_fd(&rep_pipe[1]);
	return error;
}

/*
 * Which limit ended the command, from what the kernel says: the timeout, the
 * cgroup's OOM kills and refused forks, SIGXCPU and SIGXFSZ (a shell or bwrap
 * passes them on as 128+N).  A limit counts only for a command that failed.
 */
static void name_limit(struct runcmd_result *out, const struct runcmd_opts *o,
			 const struct prepared *p)
{
	struct cgroup_events ev;
	int sig = out->signal ? out->signal
		  : out->exit_code > 128 && out->exit_code < 128 + 32 ? out->exit_code - 128 : 0;
	int shell_like = !o->argv || p->boxed;

	cgroup_events(&p->cg, &ev);
	out->limit = RUNCMD_LIMIT_NONE;
	out->limit_value = 0;
	if (out->timed_out) {
		out->limit = RUNCMD_LIMIT_TIME;
		out->limit_value = (long long)(o->timeout + 0.5);
	} else if (out->stopped || out->exec_failed || out->exit_code == 0) {
		return;
	} else if (ev.oom_kills) {
		out->limit = RUNCMD_LIMIT_MEMORY;
		out->limit_value = p->cg.memory;
	} else if (ev.pids_max) {
		out->limit = RUNCMD_LIMIT_PROCESSES;
		out->limit_value = p->cg.processes;
	} else if (sig == SIGXCPU && (out->signal || shell_like)) {
		out->limit = RUNCMD_LIMIT_CPU;
		out->limit_value = p->limits.cpu;
	} else if (sig == SIGXFSZ && (out->signal || shell_like)) {
		out->limit = RUNCMD_LIMIT_FILE_SIZE;
		out->limit_value = p->limits.fsize;
	} else if (out->signal == SIGKILL && p->cg.kind == CGROUP_NONE) {
		/* a SIGKILL nobody here sent, and no cgroup to ask: most likely the OOM killer */
		out->limit = RUNCMD_LIMIT_MEMORY;
	}
	out->limit_hit = out->limit != RUNCMD_LIMIT_NONE && out->limit != RUNCMD_LIMIT_TIME;
}

void runcmd_limit_describe(struct strbuf *sb, const struct runcmd_result *r)
{
	switch (r->limit) {
	case RUNCMD_LIMIT_TIME:
		strbuf_addstr(sb, "timed out after ");
		timespec_format_duration(sb, (long)r->limit_value);
		break;
	case RUNCMD_LIMIT_MEMORY:
		if (!r->limit_value) {
			strbuf_addstr(sb, "killed by SIGKILL (most likely out of memory)");
			break;
		}
		strbuf_addstr(sb, "killed: memory limit ");
		size_format(sb, r->limit_value);
		break;
	case RUNCMD_LIMIT_PROCESSES:
		strbuf_addf(sb, "stopped: process limit %lld reached", r->limit_value);
		break;
	case RUNCMD_LIMIT_CPU:
		strbuf_addstr(sb, "killed: CPU time limit ");
		timespec_format_duration(sb, (long)r->limit_value);
		break;
	case RUNCMD_LIMIT_FILE_SIZE:
		strbuf_addstr(sb, "killed: file size limit ");
		size_format(sb, r->limit_value);
		break;
	default:
		break;
	}
}

/* Places of the host that hold other users' and services' things: never in a box. */
static const char *const box_private[] = { "/tmp", "/var/tmp", "/run", "/home", "/root", NULL };

const char *const *runcmd_box_private(void)
{
	return box_private;
}

/* Hides `path`: an empty folder over a folder, an empty file over anything else. */
static void box_hide(struct strvec *av, const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0 || S_ISLNK(st.st_mode))
		return;
	if (S_ISDIR(st.st_mode))
		strvec_pushl(av, "--tmpfs", path, NULL);
	else
		strvec_pushl(av, "--ro-bind", "/dev/null", path, NULL);
}

void runcmd_box_argv(struct strvec *av, const struct runcmd_box *b, const char *cwd,
		     int status_fd, char *const *cmd)
{
	size_t i;

	strvec_pushl(av, b->bwrap, "--die-with-parent", "--new-session", "--unshare-all", NULL);
	if (b->network)
		strvec_push(av, "--share-net");
	strvec_pushl(av, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", NULL);
	for (i = 0; b->devices && b->devices[i]; i++)
		strvec_pushl(av, "--dev-bind-try", b->devices[i], b->devices[i], NULL);
	for (i = 0; box_private[i]; i++)
		box_hide(av, box_private[i]);
	for (i = 0; b->shown && b->shown[i]; i++)
		strvec_pushl(av, "--ro-bind-try", b->shown[i], b->shown[i], NULL);
	for (i = 0; b->hide && b->hide[i]; i++)
		box_hide(av, b->hide[i]);
	for (i = 0; b->read_only && b->read_only[i]; i++)
		strvec_pushl(av, "--ro-bind", b->read_only[i], b->read_only[i], NULL);
	for (i = 0; b->writable && b->writable[i]; i++)
		strvec_pushl(av, "--bind", b->writable[i], b->writable[i], NULL);
	for (i = 0; b->binds && b->binds[i].at; i++)
		strvec_pushl(av, b->binds[i].writable ? "--bind" : "--ro-bind", b->binds[i].host,
			     b->binds[i].at, NULL);
	if (status_fd >= 0) {
		strvec_push(av, "--json-status-fd");
		strvec_pushf(av, "%d", status_fd);
	}
	if (cwd)
		strvec_pushl(av, "--chdir", cwd, NULL);
	strvec_push(av, "--");
	for (i = 0; cmd[i]; i++)
		strvec_push(av, cmd[i]);
}

static int run_prepared(struct runcmd_result *out, const struct runcmd_opts *o,
			struct strbuf *err_out)
{
	struct prepared p = {.opts = o,
			     .stdin_fd = -1,
			     .out_w = -1,
			     .err_w = -1,
			     .report_w = -1,
			     .cg = CGROUP_INIT};
	const char *sh_argv[4] = { "/bin/sh", "-c", o->shell, NULL };
	struct strvec env = STRVEC_INIT, box = STRVEC_INIT;
	struct strbuf errbuf = STRBUF_INIT;
	struct timespec start;
	struct passwd pw;
	char *pwbuf = NULL;
	int error;

	result_reset(out);
	if (o->cancel && *o->cancel) {
		out->runner_failed = 1;  /* not wanted any more: not started */
		return 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	error = prepare(&p, o, &pw, &pwbuf);
	if (error)
		goto done;
	build_env(&env, o, p.drop ? &pw : NULL);
	p.envp = env.v;
	p.argv = o->argv ? (char *const *)o->argv : (char *const *)sh_argv;
	p.use_path = !!o->argv;
	if (o->box) {
		/* the box has a /tmp of its own: the host's TMPDIR means nothing in it */
		env_set(&env, "TMPDIR=/tmp");
		if (o->box->path_first)
			path_prepend(&env, o->box->path_first);
		p.envp = env.v;
		runcmd_box_argv(&box, o->box, o->cwd, BOX_STATUS_FD, p.argv);
		p.argv = box.v;
		p.use_path = 0;
		p.boxed = 1;
	}
	set_deadline(&p, &start, o->timeout);
	error = spawn(out, &p, &errbuf);
	out->seconds = elapsed(&start);
	if (!error)
		name_limit(out, o, &p);
	if (o->log_path)
		write_log(o->log_path, &out->output, &errbuf);
	if (err_out)
		strbuf_addbuf(err_out, &errbuf);
done:
	cgroup_destroy(&p.cg);
	close_fd(&p.stdin_fd);
	strvec_clear(&env);
	strvec_clear(&box);
	strbuf_release(&errbuf);
	free(pwbuf);
	return error;
}

int runcmd_single_threaded(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int n = 0;

	if (!d)
		return 0;       /* cannot tell: as if threaded */
	while ((de = readdir(d)) && n < 2)
		n += de->d_name[0] != '.';
	closedir(d);
	return n == 1;
}

int runcmd_run(struct runcmd_result *out, const struct runcmd_opts *opts)
{
	return run_prepared(out, opts, NULL);
}

void runcmd_result_release(struct runcmd_result *r)
{
	strbuf_release(&r->output);
	r->exit_code = -1;
}

static void describe(struct strbuf *sb, const char *const *argv)
{
	size_t i;

	for (i = 0; argv[i]; i++) {
		if (i)
			strbuf_addch(sb, ' ');
		strbuf_addstr(sb, argv[i]);
	}
}

int runcmd_capture(struct strbuf *out, const char *cwd, const char *const *argv)
{
	struct runcmd_opts opts = RUNCMD_OPTS_INIT;
	struct runcmd_result res = RUNCMD_RESULT_INIT;
	struct strbuf err = STRBUF_INIT, cmd = STRBUF_INIT;
	int error;

	opts.argv = argv;
	opts.cwd = cwd;
	opts.inherit_env = 1;
	opts.merge_stderr = 0;
	opts.output_cap = CAPTURE_MAX;
	error = run_prepared(&res, &opts, &err);
	if (error)
		goto done;
	describe(&cmd, argv);
	strbuf_trim(&err);
	if (res.exec_failed)
		error = nb_error_set(NB_ERROR, "cannot run '%s' (exit %d)", cmd.buf, res.exit_code);
	else if (res.output_total > res.output.len)
		error = nb_error_set(NB_ERROR, "'%s' printed more than %u bytes", cmd.buf,
				     CAPTURE_MAX);
	else if (res.exit_code)
		error = nb_error_set(NB_ERROR, "'%s' failed (exit %d)%s%s", cmd.buf, res.exit_code,
				     err.len ? ": " : "", err.buf);
	else
		strbuf_addbuf(out, &res.output);
done:
	strbuf_release(&err);
	strbuf_release(&cmd);
	runcmd_result_release(&res);
	return error;
}

int runcmd_become_subreaper(void)
{
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		return nb_error_errno(NB_ERROR, "cannot become a child subreaper");
	return 0;
}
