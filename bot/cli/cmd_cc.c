/* `nextbot cc-serve`: the compile service process a night starts for its compiler cache. */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bot/cli/cli_int.h"
#include "cc/cc.h"
#include "util/error.h"
#include "util/size.h"
#include "util/strvec.h"
#include "util/banned.h"

static volatile sig_atomic_t stop_now;

static void on_signal(int sig)
{
	(void)sig;
	stop_now = 1;
}

struct serve_args {
	struct cc_serve_opts o;
	const char *run, *shim, *path;
	const char *listen, *token_file;
	struct cc_remote remote; /* --listen's socket, its port and the token */
	struct strvec shown, hide;
	long parent;
	int status_fd;
};

static int number(long long *out, const char *s)
{
	long v;

	if (str_to_long(s, &v) < 0 || v < 0)
		return -1;
	*out = v;
	return 0;
}

/* One option and its value; 1 taken, 0 not ours, -1 a bad value. */
static int option(struct serve_args *a, const char *name, const char *v)
{
	long long n = 0;
	int bad = 0;

	if (!strcmp(name, "--run"))
		a->run = v;
	else if (!strcmp(name, "--jobs"))
		a->o.jobs = v;
	else if (!strcmp(name, "--store"))
		a->o.store = v;
	else if (!strcmp(name, "--shim"))
		a->shim = v;
	else if (!strcmp(name, "--path"))
		a->path = v;
	else if (!strcmp(name, "--listen"))
		a->listen = v;
	else if (!strcmp(name, "--token-file"))
		a->token_file = v;
	else if (!strcmp(name, "--bwrap"))
		a->o.bwrap = *v ? v : NULL;
	else if (!strcmp(name, "--user"))
		a->o.user = v;
	else if (!strcmp(name, "--show"))
		strvec_push(&a->shown, v);
	else if (!strcmp(name, "--hide"))
		strvec_push(&a->hide, v);
	else if (!strcmp(name, "--max"))
		bad = size_parse(&a->o.max, v) < 0;
	else if (!strcmp(name, "--min-free"))
		bad = size_parse(&a->o.min_free, v) < 0;
	else if (!strcmp(name, "--memory"))
		bad = number(&a->o.limits.memory, v);
	else if (!strcmp(name, "--file-size"))
		bad = number(&a->o.limits.fsize, v);
	else if (!strcmp(name, "--processes") && !(bad = number(&n, v)))
		a->o.limits.processes = (long)n;
	else if (!strcmp(name, "--cpu") && !(bad = number(&n, v)))
		a->o.limits.cpu = (long)n;
	else if (!strcmp(name, "--timeout") && !(bad = number(&n, v)))
		a->o.timeout = (double)n;
	else if (!strcmp(name, "--parent") && !(bad = number(&n, v)))
		a->parent = (long)n;
	else if (!strcmp(name, "--status-fd") && !(bad = number(&n, v)))
		a->status_fd = (int)n;
	else
		return bad ? -1 : 0;
	return bad ? -1 : 1;
}

static void say(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(int fd, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	/* the night may be gone: nobody to tell then */
	if (write(fd, sb.buf, sb.len) < 0)
		sb.len = 0;
	strbuf_release(&sb);
}

static void ready(void *data)
{
	const struct serve_args *a = data;

	if (a->o.token)
		say(a->status_fd, "ready %d\n", a->remote.port);
	else
		say(a->status_fd, "ready\n");
}

/* --listen's socket and --token-file's token: 0, or -1 (recorded). */
static int open_remote(struct serve_args *a)
{
	a->o.remote_fd = -1;
	if (!a->listen)
		return 0;
	if (!a->token_file)
		return nb_error_set(NB_EINVALID, "compiler cache: --listen without --token-file");
	if (cc_remote_open(&a->remote, a->listen, a->token_file) < 0)
		return NB_ERROR;
	a->o.remote_fd = a->remote.fd;
	a->o.token = a->remote.token;
	return 0;
}

/*
 * Run by nextbot itself (cc/service.c), never by people: `nextbot cc-serve --run DIR
 * --jobs DIR --store DIR --shim FILE --bwrap FILE [--user U] [--show P]… [--hide P]…
 * [--max SIZE] [--min-free SIZE] [--memory N] [--processes N] [--cpu N] [--file-size N]
 * [--timeout S] [--path PATH] [--status-fd N] [--parent PID]
 * [--listen HOST:PORT --token-file F]`.  It says "ready" (with --listen: "ready PORT",
 * the TCP port it has) on the status descriptor (default 1) once it serves, "error …"
 * when it cannot, and "stats …"
 * when SIGTERM ends it.
 */
int cmd_cc_serve(const struct cli_ctx *ctx, int argc, char **argv)
{
	struct serve_args a = { .o.max = 5LL << 30, .shown = STRVEC_INIT, .hide = STRVEC_INIT,
				.status_fd = 1 };
	struct cc_stats st = { 0 };
	int i, fd, r, code = EXIT_USAGE;

	(void)ctx;
	for (i = 1; i + 1 < argc && (r = option(&a, argv[i], argv[i + 1])) > 0; i += 2)
		;
	if (i < argc || !a.run || !a.o.jobs || !a.o.store || !a.shim) {
		say(a.status_fd, "error usage: nextbot cc-serve --run DIR --jobs DIR --store DIR "
				 "--shim FILE [options]\n");
		goto done;
	}
	if (a.parent && getppid() != (pid_t)a.parent) {
		code = EXIT_FAILED;
		goto done;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGPIPE, SIG_IGN);
	a.o.shown = (const char *const *)a.shown.v;
	a.o.hide = (const char *const *)a.hide.v;
	a.o.stopping = &stop_now;
	a.o.ready = ready;
	a.o.ready_data = &a;
	code = EXIT_FAILED;
	if (open_remote(&a) < 0 ||
	    (fd = cc_run_dir_make(a.run, a.shim, a.path ? a.path : "/usr/local/bin:/usr/bin:/bin",
				  &a.o)) < 0 ||
	    cc_serve_run(&st, fd, &a.o) < 0) {
		say(a.status_fd, "error %s\n", nb_error_last());
		goto done;
	}
	say(a.status_fd, "stats %ld %ld %ld %ld %ld %lld %ld %ld %ld %ld\n", st.requests, st.hits,
	    st.compiled, st.failed, st.refused, st.bytes, st.direct_hits, st.direct_misses,
	    st.remote, st.remote_refused);
	code = EXIT_DONE;
done:
	strvec_clear(&a.shown);
	strvec_clear(&a.hide);
	return code;
}
