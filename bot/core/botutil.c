/* Small pieces shared by the bot's commands. */
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bot/core/botutil.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

int bot_config_open(struct config **out, const struct cli_ctx *ctx)
{
	size_t i;

	if (config_load(out, ctx->config_path) < 0) {
		fprintf(stderr, "nextbot: %s\n", nb_error_last());
		return EXIT_USAGE;
	}
	for (i = 0; i < (*out)->warnings.nr; i++)
		fprintf(stderr, "nextbot: warning: %s\n", (*out)->warnings.v[i]);
	return 0;
}

void bot_error(const char *what)
{
	fprintf(stderr, "nextbot: %s: %s\n", what, nb_error_last());
}

void bot_rfc3339(char *buf, size_t n, time_t t)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void bot_today(char *buf, size_t n)
{
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(buf, n, "%Y-%m-%d", &tm);
}

int bot_date_valid(const char *s)
{
	struct tm tm;
	const char *end;
	char back[16];

	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%Y-%m-%d", &tm);
	if (!end || *end || strlen(s) != 10)
		return 0;
	/* strptime accepts 2026-02-31; a round trip through timegm does not */
	tm.tm_isdst = 0;
	{
		time_t t = timegm(&tm);
		struct tm norm;

		gmtime_r(&t, &norm);
		strftime(back, sizeof(back), "%Y-%m-%d", &norm);
	}
	return !strcmp(back, s);
}

volatile sig_atomic_t bot_stop_requested;

static void on_stop(int sig)
{
	bot_stop_requested = 1;
}

void bot_catch_stop(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

void bot_wrap(struct strbuf *out, const char *text, const char *indent)
{
	const char *p = text;
	size_t col = 0;

	while (*p) {
		size_t n = strcspn(p, " ");

		if (col && col + 1 + n > BOT_WRAP) {
			strbuf_addch(out, '\n');
			col = 0;
		}
		if (!col) {
			strbuf_addstr(out, indent);
			col = strlen(indent);
		} else {
			strbuf_addch(out, ' ');
			col++;
		}
		strbuf_add(out, p, n);
		col += n;
		p += n;
		p += strspn(p, " ");
	}
	strbuf_addstr(out, "\n\n");
}

const char *bot_self_exe(void)
{
	static char path[PATH_MAX];
	ssize_t n;

	if (path[0])
		return path;
	n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	if (n <= 0 || (size_t)n >= sizeof(path) - 1) {
		snprintf(path, sizeof(path), "/proc/self/exe");
		return path;
	}
	path[n] = 0;
	return path;
}

/* The binary is at most this big (a sanitizer build is about 10 MB). */
#define EXE_MAX ((size_t)256 << 20)

const char *bot_runner_exe(const char *dir)
{
	static char *copy, *copied_for;
	struct strbuf self = STRBUF_INIT, old = STRBUF_INIT;
	const char *exe = bot_self_exe();
	char *path;

	if (geteuid() != 0 || !dir)
		return exe;
	if (copied_for && !strcmp(copied_for, dir))
		return copy;
	path = xstrfmt("%s/nextbot-exe", dir);
	if (file_mkdir_p(dir, 0711) < 0 || strbuf_read_file(&self, exe, EXE_MAX) < 0 ||
	    ((strbuf_read_file(&old, path, EXE_MAX) < 0 || old.len != self.len ||
	      memcmp(old.buf, self.buf, self.len)) &&
	     file_write_atomic_mode(path, self.buf, self.len, 0755) < 0) ||
	    /* the workdir's nightly tightening takes files to 0700 */
	    (chmod(path, 0755) < 0 && nb_error_errno(NB_ERROR, "chmod %s", path) < 0)) {
		log_warn("the runner user starts %s itself: %s", exe, nb_error_last());
		free(path);
		path = NULL;
	}
	strbuf_release(&self);
	strbuf_release(&old);
	if (!path)
		return exe;
	free(copy);
	free(copied_for);
	copy = path;
	copied_for = xstrdup(dir);
	return copy;
}
