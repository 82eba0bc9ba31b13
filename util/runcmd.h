/* The one way nextbot runs a subprocess: argv or a configured shell command. */
#ifndef UTIL_RUNCMD_H
#define UTIL_RUNCMD_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>
#include "util/strbuf.h"
#include "util/strvec.h"

/* A limit asked to be left as it is, even where runcmd would set a default. */
#define RUNCMD_NO_LIMIT (-1)

/*
 * Resource limits applied in the child (0: leave as is).  As root they are always
 * applied, with the defaults below when left 0 (RUNCMD_NO_LIMIT keeps one as it
 * is), since commands then run as an unprivileged user and RLIMIT_NPROC is not
 * enforced for uid 0.
 */
struct runcmd_limits {
	long nproc;          /* RLIMIT_NPROC; default as root 2048 when no cgroup */
	long long as_bytes;  /* RLIMIT_AS; default as root 16 GiB when no memory limit */
	long long fsize;     /* RLIMIT_FSIZE; default as root 8 GiB */
	long cpu;            /* RLIMIT_CPU, seconds; default none */
	/*
	 * The whole command's (util/cgroup.h): memory of all its processes, tasks at
	 * once.  Where the host has no cgroup for them, RLIMIT_AS and RLIMIT_NPROC
	 * stand in (per process, and per user), unless set above.
	 */
	long long memory;
	long processes;
};

/*
 * The sandbox a command runs in (bubblewrap).  Inside it the command sees the
 * system read-only, a private /tmp, /var/tmp, /run, /dev and /proc (its own pid
 * namespace: no other process of the host), no /home and /root, no network but its
 * own loopback unless `network`; then `shown` bound read-only (paths the configured
 * commands need from the private places, such as a toolchain under /home), each of
 * `hide` replaced by an empty folder (or an empty file), and `read_only` and
 * `writable` bound at their own paths, in that order: typically the workdir hidden
 * and one worker tree bound writable.  It is started after the
 * switch to opts.user, so nothing in it has more rights than that user.
 */
struct runcmd_box {
	const char *bwrap;              /* absolute path of bwrap */
	int network;                    /* share the host's network namespace */
	const char *const *shown;       /* NULL-terminated lists, each may be NULL */
	const char *const *hide;
	const char *const *read_only;
	const char *const *writable;
	/* then these, each at a place of its own inside (the compiler cache's folder;
	   a compile's scratch at its working directory); ended by one with `at` NULL */
	const struct runcmd_bind *binds;
	/* device files shown in the box's own /dev (runner.devices: /dev/kvm), each
	   only when the host has it */
	const char *const *devices;
	/* a folder inside, put first on the command's PATH (the compiler cache's shims) */
	const char *path_first;
	/* runcmd_opts.cwd is a place inside the box only (a bind's): not looked for on
	   the host */
	int cwd_in_box;
	/* on a cluster's node (the Slurm runner; the local runner ignores it): the box
	   starts under this program and its first arguments, followed by a socket's
	   place on the node, "--" and bwrap's command line; that socket is bound at
	   `relay_at` inside (the compiler cache's relay, cc/relay.c) */
	const char *const *relay;
	const char *relay_at;
};

/* A bind of `host` at `at` inside the box, read-only unless `writable`. */
struct runcmd_bind {
	const char *host;
	const char *at;
	int writable;
};

/* The host's places every box replaces with empty ones of its own (/tmp, /home, …). */
const char *const *runcmd_box_private(void);

struct runcmd_opts {
	/* Exactly one of argv (execvp'd, no shell) and shell ("/bin/sh -c shell"). */
	const char *const *argv;
	const char *shell;
	/*
	 * With argv: instead of exec'ing it, the child (still a copy of this process)
	 * exits with fn(fn_data) & 0xff, writing what it says to fd 1 with write(2),
	 * never stdio (the buffers are the parent's); argv only names it.  Only with
	 * no box and no user to switch to (nothing would separate it from nextbot),
	 * and only from a process of one thread (runcmd_single_threaded(): a copy of
	 * a threaded one could wait forever on a lock another thread held).  It saves
	 * the exec and the dynamic linking of a nextbot child.
	 */
	int (*fn)(void *data);
	void *fn_data;
	const char *cwd;          /* NULL: the caller's */
	/*
	 * The child's environment is an allow-list (PATH, HOME, LANG, LC_*, TZ, TERM,
	 * TMPDIR, USER, LOGNAME, SHELL, MAKEFLAGS) plus `env` ("KEY=VALUE" strings,
	 * NULL-terminated).  With inherit_env the whole environment is passed (for
	 * nextbot's own git invocations, never for configured commands).
	 */
	const char *const *env;
	int inherit_env;
	double timeout;           /* wall-clock seconds; 0: none */
	size_t output_cap;        /* bytes of output kept (head + tail); 0: 1 MiB */
	const char *log_path;     /* when set, the kept output is also written here */
	const char *stdin_path;   /* NULL: /dev/null */
	const char *user;         /* as root: run as this user; the working directory is
				     entered as that user (who must be able to) */
	const struct runcmd_box *box; /* run inside this sandbox; NULL: none */
	/* a folder of the user's, outside the box, for the runner's own files (Slurm's
	   status files); NULL: the working directory */
	const char *runner_dir;
	struct runcmd_limits limits;
	int merge_stderr;         /* 1 (default via INIT): stderr into the same output */
	/*
	 * When set, looked at every 0.1 s: once *cancel is nonzero the command is
	 * killed (its whole tree) and the result says runner_failed (no verdict: its
	 * result is no longer wanted).  Another thread sets it.
	 */
	const volatile int *cancel;
	/* a stopping nextbot (runcmd_stop_on()) kills it at once: for the commands
	   nextbot runs for others, not for its own cleanup (scancel) */
	int stoppable;
	/* asked every 0.1 s while the command runs: nonzero kills it at once (the
	   result is `stopped`); NULL: only the timeout (and runcmd_stop_on()) */
	int (*stop)(void *data);
	void *stop_data;
};
#define RUNCMD_OPTS_INIT { .merge_stderr = 1 }

enum runcmd_limit {
	RUNCMD_LIMIT_NONE = 0,
	RUNCMD_LIMIT_TIME,       /* opts.timeout (timed_out) */
	RUNCMD_LIMIT_MEMORY,     /* limits.memory: the cgroup's OOM killer (value 0: a
				    SIGKILL nobody here sent, and no cgroup to ask) */
	RUNCMD_LIMIT_PROCESSES,  /* limits.processes: the cgroup refused forks */
	RUNCMD_LIMIT_CPU,        /* limits.cpu (SIGXCPU) */
	RUNCMD_LIMIT_FILE_SIZE,  /* limits.fsize (SIGXFSZ) */
};

struct runcmd_result {
	int exit_code;      /* exit status; 128+signal when killed; -1 if never started */
	int signal;         /* the signal that ended it, 0 if it exited */
	int timed_out;      /* killed at opts.timeout (the whole process tree) */
	int exec_failed;    /* the program could not be started (exit_code 127 or 126) */
	int limit_hit;      /* ended by a resource limit (SIGXFSZ, SIGKILL by OOM, …) if known */
	int box_failed;     /* the sandbox could not be set up (or the program not found
			       in it): nothing of the command ran; exec_failed is set too */
	int stopped;        /* killed because nextbot is stopping (runcmd_stop_on(),
			       opts.stop): no verdict */
	enum runcmd_limit limit; /* the limit that ended it (with limit_hit, or timed_out) */
	long long limit_value;   /* its value: seconds, bytes or processes */
	double seconds;     /* wall time */
	double cpu_seconds; /* CPU time, user and system, of every process of it that the
			       supervisor reaped (on Slurm: srun's own, on this host) */
	size_t output_total;/* bytes the command printed, of which `output` keeps some */
	struct strbuf output; /* head, a "[... N bytes omitted ...]" line, tail */
	/* the runner failed on its own (Slurm: allocation refused, node down, no
	   resources within the queue time; cancelled through opts.cancel): exit_code
	   is the runner's, not a verdict.  See util/slurm.h */
	int runner_failed;
};
#define RUNCMD_RESULT_INIT { .exit_code = -1, .output = STRBUF_INIT }

/*
 * Runs the command to completion and fills `out` (release it with
 * runcmd_result_release()).  The command gets its own process group under a
 * supervisor that is a child subreaper, so at the timeout, or when the command
 * exits, every process it left behind (setsid'd daemons too) is killed.  Returns
 * 0 when the command ran (whatever its exit status), negative with an error
 * recorded when it could not be run at all (fork, pipe, cwd missing).
 * Thread-safe: several commands may run at once from different threads.
 */
int runcmd_run(struct runcmd_result *out, const struct runcmd_opts *opts);

/* Whether this process runs one thread (a runcmd_opts.fn child is safe). */
int runcmd_single_threaded(void);
void runcmd_result_release(struct runcmd_result *r);

/*
 * bwrap's argument vector for `box`: bwrap and its options, --chdir `cwd` (NULL:
 * none), its status as JSON on fd `status_fd` (-1: none), "--", then `cmd`.  For a
 * runner that starts the box elsewhere (util/slurm.c, on the node).
 */
void runcmd_box_argv(struct strvec *av, const struct runcmd_box *box, const char *cwd,
		     int status_fd, char *const *cmd);

/*
 * Appends what stopped the command, with the limit's value: "timed out after 30m",
 * "killed: memory limit 8 GiB", "stopped: process limit 2048 reached", "killed: CPU
 * time limit 2h", "killed: file size limit 8 GiB"; nothing when r->limit is NONE.
 */
void runcmd_limit_describe(struct strbuf *sb, const struct runcmd_result *r);

/* Convenience: runs argv (inheriting the environment) and captures stdout only. */
int runcmd_capture(struct strbuf *out, const char *cwd, const char *const *argv);

/*
 * From now on, once *flag is nonzero (the bot's SIGTERM flag), every running
 * stoppable command is killed within 0.2 s with everything it started, and its
 * result is `stopped`; so a stopping night ends within seconds, whatever runs.
 * NULL: off.
 */
void runcmd_stop_on(volatile sig_atomic_t *flag);

/* Makes the calling process a child subreaper (call once, early, from main). */
int runcmd_become_subreaper(void);

#endif
