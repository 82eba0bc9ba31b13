/* The Slurm runner: a command as a job step through srun, its own failures told apart. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/slurm.h"
#include "util/error.h"
#include "util/log.h"
#include "util/strvec.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define POLL_NS 200000000L     /* the watchdog looks at the step every 0.2 s */
#define RESEND_SECONDS 2.0     /* scancel again while srun has not ended */
#define GRACE_SECONDS 60.0     /* srun's own backstop beyond our limits */
#define GONE_SECONDS 60.0      /* how long a cancelled job may take to leave the queue */

/*
 * Run in the step: $1 is the status prefix, the rest the command's argv.  Fixed
 * text: the command is never pasted into it.  The wrapper shell keeps its own
 * stderr in <prefix>.sig and the command gets the real one (fd 3) in a subshell of
 * its own, so that the shell's "Killed" for a command ended by a signal never
 * reaches the output, but tells the wrapper that the command died of a signal
 * ("137 signal": $? alone cannot tell exit 137 from SIGKILL, which a local run
 * does); once the status is recorded the step ends 0, so that srun adds no
 * "task 0: Exited with exit code N" line either.  With merged output the command's
 * stderr joins its stdout in the step: srun forwards the two as separate streams,
 * which would reorder lines (and change the first error) against a local run.
 * In a sandbox the command is bwrap, which reports on fd 4 (<prefix>.box) whether
 * the box came up; the wrapper itself stays outside the box, where the command
 * cannot reach its files.
 */
#define WRAPPER(BOX_FD) \
	"f=$1; shift; : >\"$f.start\"; exec 3>&2 2>\"$f.sig\"; " \
	"if ! command -v -- \"$1\" >/dev/null; then " \
	"echo \"nextbot: $1: not found\" >&3; echo '127 exec' >\"$f.tmp\"; " \
	"mv -f \"$f.tmp\" \"$f.exit\" && exit 0; exit 127; fi; " \
	"(exec 2>&3 3>&-" BOX_FD "; exec \"$@\"); s=$?; w=; " \
	"if [ $s -gt 128 ] && [ -s \"$f.sig\" ]; then w=' signal'; fi; " \
	"echo \"$s$w\" >\"$f.tmp\" && mv -f \"$f.tmp\" \"$f.exit\" && exit 0; exit $s"
#define BOX_STATUS_FD 4
static const char wrapper[] = WRAPPER("");
static const char wrapper_merged[] = "exec 2>&1; " WRAPPER("");
static const char wrapper_boxed[] = WRAPPER(" 4>\"$f.box\"");
static const char wrapper_boxed_merged[] = "exec 2>&1; " WRAPPER(" 4>\"$f.box\"");
#define STATUS_MAX 4096

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t slot_freed = PTHREAD_COND_INITIALIZER;
static unsigned long seq;
static int active;
static struct strvec running = STRVEC_INIT;  /* names of the jobs in flight */
static struct strvec cancelled = STRVEC_INIT; /* of those, what slurm_cancel_all() cancelled */
static volatile sig_atomic_t *stop_flag;      /* slurm_stop_on(): nonzero cancels all */

/* One srun in flight, watched by its own thread. */
struct watch {
	pthread_mutex_t mu;
	pthread_cond_t cond;
	int done;                 /* srun returned */
	const char *name;
	const char *start_path;
	const char *const *env;   /* for scancel */
	double timeout, queue_timeout;
	int timed_out;            /* cancelled at our timeout, the step had begun */
	int never_started;        /* cancelled after queue_timeout without a step */
	int stopped;              /* cancelled because nextbot is stopping … */
	int unwanted;             /* … or because its result is no longer wanted */
	const volatile int *cancel; /* runcmd_opts.cancel */
};

static double monotonic_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void scancel(const char *name, const char *const *env)
{
	const char *argv[] = { "scancel", "--quiet", "--full", NULL, NULL };
	struct runcmd_opts o = RUNCMD_OPTS_INIT;
	struct runcmd_result r = RUNCMD_RESULT_INIT;
	char *arg = xstrfmt("--name=%s", name);

	argv[3] = arg;
	o.argv = argv;
	o.env = env;
	o.timeout = 30;
	if (runcmd_run(&r, &o) < 0 || r.exit_code != 0)
		log_warn("slurm: scancel of job '%s' failed (exit %d): %s", name, r.exit_code,
			 r.output.len ? r.output.buf : nb_error_last());
	runcmd_result_release(&r);
	free(arg);
}

/* 1 when squeue no longer lists the job (0 while it does, or squeue failed). */
static int gone(const char *name, const char *const *env)
{
	const char *argv[] = { "squeue", "--noheader", "--format=%i", NULL, NULL };
	struct runcmd_opts o = RUNCMD_OPTS_INIT;
	struct runcmd_result r = RUNCMD_RESULT_INIT;
	int gone;

	argv[3] = xstrfmt("--name=%s", name);
	o.argv = argv;
	o.env = env;
	o.timeout = 30;
	o.merge_stderr = 0;
	gone = runcmd_run(&r, &o) == 0 && r.exit_code == 0 && !r.output.len;
	runcmd_result_release(&r);
	free((char *)argv[3]);
	return gone;
}

/* Cancels the job and waits (bounded) until Slurm has it out of the queue. */
static void cancel_and_wait(const char *name, const char *const *env)
{
	double until = 0;
	struct timespec pause = { 0, 250000000L };

	scancel(name, env);
	for (;;) {
		struct timespec ts;

		if (gone(name, env))
			return;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if (!until)
			until = (double)ts.tv_sec + GONE_SECONDS;
		if ((double)ts.tv_sec > until)
			break;
		nanosleep(&pause, NULL);
	}
	log_warn("slurm: job '%s' is still in the queue %.0f s after scancel", name, GONE_SECONDS);
}

/* Sleeps one poll interval unless srun finishes; returns 1 when it has. */
static int wait_poll(struct watch *w)
{
	struct timespec ts;
	int done;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += POLL_NS;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_nsec -= 1000000000L;
		ts.tv_sec++;
	}
	pthread_mutex_lock(&w->mu);
	if (!w->done)
		pthread_cond_timedwait(&w->cond, &w->mu, &ts);
	done = w->done;
	pthread_mutex_unlock(&w->mu);
	return done;
}

void slurm_stop_on(volatile sig_atomic_t *flag)
{
	pthread_mutex_lock(&lock);
	stop_flag = flag;
	pthread_mutex_unlock(&lock);
}

static int stopping(void)
{
	int stop;

	pthread_mutex_lock(&lock);
	stop = stop_flag && *stop_flag;
	pthread_mutex_unlock(&lock);
	return stop;
}

/* 1 when the job is to be cancelled now; sets the watch's reason. */
static int must_cancel(struct watch *w, double begin, double started, double now)
{
	if (stopping())
		w->stopped = 1;
	else if (w->cancel && *w->cancel)
		w->stopped = w->unwanted = 1;
	else if (started && w->timeout > 0 && now - started >= w->timeout)
		w->timed_out = 1;
	else if (!started && w->queue_timeout > 0 && now - begin >= w->queue_timeout)
		w->never_started = 1;
	else
		return 0;
	return 1;
}

/*
 * Cancels the job at our timeout (from the step's start), at the queue timeout, or
 * when nextbot is stopping.  scancel is sent again every few seconds until srun
 * ends: a job srun has not yet registered with the controller is not found by
 * the first one, and a busy controller may drop one.
 */
static void *watchdog(void *arg)
{
	struct watch *w = arg;
	double begin = monotonic_now(), started = 0, now, sent = 0;
	struct stat st;

	while (!wait_poll(w)) {
		now = monotonic_now();
		if (!started && !lstat(w->start_path, &st))
			started = now;
		if (sent) {
			if (now - sent >= RESEND_SECONDS) {
				scancel(w->name, w->env);
				sent = now;
			}
		} else if (must_cancel(w, begin, started, now)) {
			scancel(w->name, w->env);
			sent = now;
		}
	}
	return NULL;
}

/* Was the job cancelled by slurm_cancel_all()?  Forgets it: names are unique. */
static int take_cancelled(const char *name)
{
	size_t i;
	int found = 0;

	pthread_mutex_lock(&lock);
	for (i = 0; i < cancelled.nr && strcmp(cancelled.v[i], name); i++)
		;
	if (i < cancelled.nr) {
		free(cancelled.v[i]);
		memmove(&cancelled.v[i], &cancelled.v[i + 1], (cancelled.nr - i) * sizeof(char *));
		cancelled.nr--;
		found = 1;
	}
	pthread_mutex_unlock(&lock);
	return found;
}

static void slot_take(int max_jobs)
{
	pthread_mutex_lock(&lock);
	while (max_jobs > 0 && active >= max_jobs)
		pthread_cond_wait(&slot_freed, &lock);
	active++;
	pthread_mutex_unlock(&lock);
}

static void register_job(const char *name, int add)
{
	size_t i;

	pthread_mutex_lock(&lock);
	if (add) {
		strvec_push(&running, name);
	} else {
		for (i = 0; i < running.nr && strcmp(running.v[i], name); i++)
			;
		if (i < running.nr) {
			free(running.v[i]);
			memmove(&running.v[i], &running.v[i + 1],
				(running.nr - i) * sizeof(char *));
			running.nr--;
		}
		active--;
		pthread_cond_broadcast(&slot_freed);
	}
	pthread_mutex_unlock(&lock);
}

void slurm_cancel_all(void)
{
	struct strvec names = STRVEC_INIT, env = STRVEC_INIT;
	const char *conf = getenv("SLURM_CONF");
	size_t i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < running.nr; i++) {
		strvec_push(&names, running.v[i]);
		if (!strvec_contains(&cancelled, running.v[i]))
			strvec_push(&cancelled, running.v[i]);
	}
	pthread_mutex_unlock(&lock);
	if (conf)
		strvec_pushf(&env, "SLURM_CONF=%s", conf);
	for (i = 0; i < names.nr; i++)
		scancel(names.v[i], (const char *const *)env.v);
	strvec_clear(&names);
	strvec_clear(&env);
}

static const char *env_get(const char *const *env, const char *key)
{
	size_t n = strlen(key);

	for (; env && *env; env++)
		if (!strncmp(*env, key, n) && (*env)[n] == '=')
			return *env + n + 1;
	return NULL;
}

/* "<name>/<pid>.<n>"; the name from the tree and commit when the caller gave none
 * (a check of next or the base has no tree: "nextbot:<commit>"). */
static char *job_name(const struct slurm_opts *s, const char *const *env)
{
	const char *tree = env_get(env, "NEXTBOT_TREE");
	const char *commit = env_get(env, "NEXTBOT_COMMIT");
	struct strbuf sb = STRBUF_INIT;
	unsigned long n;

	pthread_mutex_lock(&lock);
	n = ++seq;
	pthread_mutex_unlock(&lock);
	if (s->job_name)
		strbuf_addstr(&sb, s->job_name);
	else if (commit && *commit)
		strbuf_addf(&sb, "%s:%.12s", tree && *tree ? tree : "nextbot", commit);
	else
		strbuf_addstr(&sb, "nextbot");
	strbuf_addf(&sb, "/%ld.%lu", (long)getpid(), n);
	return strbuf_detach(&sb, NULL);
}

/*
 * bwrap's command line on the node; with a relay (the compiler cache's), under it:
 * its socket at <prefix>.cc on the node, bound at box->relay_at inside.
 */
static void box_on_node(struct strvec *av, const struct runcmd_box *box, const char *dir,
			const char *prefix, char **cmd)
{
	struct runcmd_box relayed = *box;
	struct runcmd_bind *binds;
	char *sock;
	size_t n = 0, i;

	if (!box->relay || !box->relay_at) {
		runcmd_box_argv(av, box, dir, BOX_STATUS_FD, cmd);
		return;
	}
	sock = xstrfmt("%s.cc", prefix);
	for (i = 0; box->relay[i]; i++)
		strvec_push(av, box->relay[i]);
	strvec_pushl(av, sock, "--", NULL);
	while (box->binds && box->binds[n].at)
		n++;
	binds = xcalloc(n + 2, sizeof(*binds));
	for (i = 0; i < n; i++)
		binds[i] = box->binds[i];
	/* after the cache's folder, over the host's socket in it */
	binds[n] = (struct runcmd_bind){ sock, box->relay_at, 0 };
	relayed.binds = binds;
	runcmd_box_argv(av, &relayed, dir, BOX_STATUS_FD, cmd);
	free(binds);
	free(sock);
}

static void srun_argv(struct strvec *av, const struct runcmd_opts *opts,
			const struct slurm_opts *s, const char *dir, const char *name,
			const char *prefix)
{
	struct strvec cmd = STRVEC_INIT;
	size_t i;

	strvec_push(av, "srun");
	strvec_push(av, "--quiet");  /* no "job N queued" lines in the command's output */
	strvec_pushf(av, "--chdir=%s", dir);
	strvec_pushf(av, "--job-name=%s", name);
	strvec_push(av, "--ntasks=1");
	if (opts->timeout > 0) {
		long minutes = (long)(opts->timeout / 60.0);

		/* rounded up, plus one: Slurm's limit is a backstop to ours */
		strvec_pushf(av, "--time=%ld", minutes + (minutes * 60.0 < opts->timeout) + 1);
	}
	if (s->partition)
		strvec_pushf(av, "--partition=%s", s->partition);
	for (i = 0; s->srun_args && s->srun_args[i]; i++)
		strvec_push(av, s->srun_args[i]);
	strvec_push(av, "--");
	strvec_push(av, "/bin/sh");
	strvec_push(av, "-c");
	if (opts->box)
		strvec_push(av, opts->merge_stderr ? wrapper_boxed_merged : wrapper_boxed);
	else
		strvec_push(av, opts->merge_stderr ? wrapper_merged : wrapper);
	strvec_push(av, "nextbot-step");
	strvec_push(av, prefix);
	if (opts->shell) {
		strvec_push(&cmd, "/bin/sh");
		strvec_push(&cmd, "-c");
		strvec_push(&cmd, opts->shell);
	} else {
		for (i = 0; opts->argv && opts->argv[i]; i++)
			strvec_push(&cmd, opts->argv[i]);
	}
	/* the same box as a local run's, made on the node */
	if (opts->box)
		box_on_node(av, opts->box, dir, prefix, cmd.v);
	else
		for (i = 0; i < cmd.nr; i++)
			strvec_push(av, cmd.v[i]);
	strvec_clear(&cmd);
}

/*
 * Reads <prefix>.exit: 1 with the status in `out`, 0 if none.  "N exec": the program
 * was not found; "N signal": the command died of signal N-128, with the limits a
 * local run infers from that (SIGXFSZ; a SIGKILL that was not our timeout's).
 */
/*
 * A status file of the step, into buf (NUL-terminated, at most size - 1 bytes): 1,
 * or 0 when there is none.  The folder is the runner user's, so what is there is
 * never followed, never waited on (a FIFO) and never read beyond a small size.
 */
static int read_small_file(const char *path, char *buf, size_t size)
{
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

	buf[0] = 0;
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return 0;
	buf[n] = 0;
	return 1;
}

static int read_status(const char *path, struct runcmd_result *out)
{
	char buf[64] = "", word[8] = "";
	int code, n;

	if (!read_small_file(path, buf, sizeof(buf)))
		return 0;
	n = sscanf(buf, "%d %7s", &code, word);
	if (n < 1 || code < 0 || code > 255)
		return 0;
	out->exit_code = code;
	out->signal = n == 2 && !strcmp(word, "signal") && code > 128 ? code - 128 : 0;
	out->exec_failed = n == 2 && !strcmp(word, "exec");
	out->limit_hit = code == 128 + SIGXFSZ || out->signal == SIGKILL;
	out->limit = code == 128 + SIGXFSZ ? RUNCMD_LIMIT_FILE_SIZE
		     : out->signal == SIGKILL ? RUNCMD_LIMIT_MEMORY
					      : RUNCMD_LIMIT_NONE;
	out->limit_value = 0;
	return 1;
}

/* bwrap's status on the node: 1 when the box came up and the command ran. */
static int box_ran(const char *prefix)
{
	char buf[STATUS_MAX], *path = xstrfmt("%s.box", prefix);
	int ran = read_small_file(path, buf, sizeof(buf)) && strstr(buf, "\"exit-code\"");

	free(path);
	return ran;
}

/* The result from srun's, the step's status file and the watchdog. */
static void classify(struct runcmd_result *out, const struct watch *w, const char *prefix,
		       const char *name, const struct runcmd_opts *opts)
{
	char *exit_path = xstrfmt("%s.exit", prefix);
	int srun_code = out->exit_code;

	if (w->timed_out) {
		out->timed_out = 1;
		out->signal = SIGKILL;
		out->exit_code = 128 + SIGKILL;
		out->exec_failed = out->limit_hit = 0;
		out->limit = RUNCMD_LIMIT_TIME;
		out->limit_value = (long long)(w->timeout + 0.5);
	} else if (!w->stopped && !out->timed_out && read_status(exit_path, out)) {
		/* the command's own status (not one that our cancel caused) */
		if (opts->box && !out->exec_failed && !box_ran(prefix)) {
			/* bwrap's own exit 1: the sandbox did not come up on the node */
			out->box_failed = out->exec_failed = 1;
			out->limit_hit = 0;
			out->limit = RUNCMD_LIMIT_NONE;
		}
	} else {
		out->runner_failed = out->exec_failed = 1;
		out->timed_out = out->limit_hit = 0;
		out->limit = RUNCMD_LIMIT_NONE;
		log_warn("slurm: job '%s' failed in Slurm (srun exit %d%s): no verdict", name,
			 srun_code, w->unwanted ? ", cancelled: its result is no longer wanted" :
			 w->stopped ? ", cancelled: nextbot is stopping" :
			 w->never_started ? ", no resources within the queue timeout" :
			 out->timed_out ? ", srun outlived every limit" : "");
	}
	free(exit_path);
}

static void remove_status(const char *prefix)
{
	const char *suffix[] = { ".start", ".exit", ".tmp", ".sig", ".box", ".cc" };
	size_t i;

	for (i = 0; i < sizeof(suffix) / sizeof(*suffix); i++) {
		char *p = xstrfmt("%s%s", prefix, suffix[i]);

		unlink(p);
		free(p);
	}
}

/* srun through runcmd, watched; fills `out` and the watch. */
static int run_watched(struct runcmd_result *out, const struct runcmd_opts *ro,
			 struct watch *w)
{
	pthread_t tid;
	int watching, err;

	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cond, NULL);
	watching = !pthread_create(&tid, NULL, watchdog, w);
	if (!watching)
		log_warn("slurm: no watchdog thread; only srun's backstop timeout applies");
	err = runcmd_run(out, ro);
	pthread_mutex_lock(&w->mu);
	w->done = 1;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->mu);
	if (watching)
		pthread_join(tid, NULL);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->mu);
	return err;
}

static void build_env(struct strvec *env, const struct runcmd_opts *opts)
{
	const char *conf = getenv("SLURM_CONF");
	size_t i;

	for (i = 0; opts->env && opts->env[i]; i++)
		strvec_push(env, opts->env[i]);
	/* the box has a /tmp of its own: the host's TMPDIR means nothing in it */
	if (opts->box)
		strvec_push(env, "TMPDIR=/tmp");
	/* a folder of the box's first on PATH, as a local run's (the cache's shims) */
	if (opts->box && opts->box->path_first) {
		const char *path = env_get(opts->env, "PATH");

		if (!path)
			path = getenv("PATH");
		strvec_pushf(env, "PATH=%s:%s", opts->box->path_first,
			     path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	}
	if (conf && !env_get(opts->env, "SLURM_CONF"))
		strvec_pushf(env, "SLURM_CONF=%s", conf);
}

int slurm_run(struct runcmd_result *out, const struct runcmd_opts *opts,
	      const struct slurm_opts *s)
{
	struct runcmd_opts ro = *opts;
	struct strvec av = STRVEC_INIT, env = STRVEC_INIT;
	struct watch w = { 0 };
	char cwd_buf[PATH_MAX], *name, *prefix;
	const char *dir = opts->cwd;
	double queue = s->queue_timeout > 0 ? s->queue_timeout : opts->timeout;
	int err;

	if (!dir && !(dir = getcwd(cwd_buf, sizeof(cwd_buf))))
		return nb_error_errno(NB_ERROR, "slurm: cannot get the working directory");
	build_env(&env, opts);
	name = job_name(s, (const char *const *)env.v);
	prefix = xstrfmt("%s/.nextbot-slurm-%s", opts->runner_dir ? opts->runner_dir : dir,
			 strrchr(name, '/') + 1);
	srun_argv(&av, opts, s, dir, name, prefix);
	ro.argv = (const char *const *)av.v;
	ro.shell = NULL;
	ro.box = NULL;  /* srun runs on this host; the step is not boxed yet */
	ro.stoppable = 0; /* a stop cancels the job (slurm_stop_on()), srun then ends */
	/* the step's memory and processes are Slurm's to limit (srun_args), not srun's */
	ro.limits.memory = 0;
	ro.limits.processes = 0;
	ro.env = (const char *const *)env.v;
	ro.timeout = opts->timeout > 0 ? queue + opts->timeout + GRACE_SECONDS : 0;
	w = (struct watch){ .name = name, .env = ro.env, .timeout = opts->timeout,
			    .queue_timeout = queue, .cancel = opts->cancel };
	w.start_path = xstrfmt("%s.start", prefix);

	slot_take(s->max_jobs);
	register_job(name, 1);
	if (stopping() || (opts->cancel && *opts->cancel)) {
		/* nextbot is stopping: nothing new goes to the cluster */
		strbuf_reset(&out->output);
		out->exit_code = -1;
		out->signal = out->timed_out = out->limit_hit = 0;
		out->output_total = 0;
		out->seconds = 0;
		out->runner_failed = out->exec_failed = 1;
		if (stopping())
			log_warn("slurm: job '%s' not submitted: nextbot is stopping", name);
		err = 0;
	} else if (!(err = run_watched(out, &ro, &w))) {
		out->runner_failed = 0;
		/* slurm_cancel_all() may have cancelled it while srun still said 0 */
		w.stopped |= take_cancelled(name);
		if (out->exit_code != 0 || out->timed_out || w.timed_out || w.never_started ||
		    w.stopped)
			cancel_and_wait(name, ro.env);
		classify(out, &w, prefix, name, opts);
	}
	register_job(name, 0);
	remove_status(prefix);
	free((char *)w.start_path);
	free(prefix);
	free(name);
	strvec_clear(&av);
	strvec_clear(&env);
	return err;
}

int slurm_or_local_run(struct runcmd_result *out, const struct runcmd_opts *opts,
		       const struct slurm_opts *s)
{
	return s ? slurm_run(out, opts, s) : runcmd_run(out, opts);
}
