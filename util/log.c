/* Log lines and the live progress line; all output goes to stderr. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/log.h"
#include "util/banned.h"

static enum log_level level = LOG_NORMAL;
static int live_shown;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

void log_set_level(enum log_level l)
{
	level = l;
}

enum log_level log_get_level(void)
{
	return level;
}

static int is_tty(void)
{
	static int tty = -1;

	if (tty < 0)
		tty = isatty(2);
	return tty;
}

static void stamp(char *buf, size_t n)
{
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void clear_live(void)
{
	if (live_shown) {
		fputs("\r\033[K", stderr);
		live_shown = 0;
	}
}

__attribute__((format(printf, 2, 0)))
static void vlog(const char *tag, const char *fmt, va_list ap)
{
	char ts[32];

	pthread_mutex_lock(&log_lock);
	clear_live();
	if (!is_tty()) {
		stamp(ts, sizeof(ts));
		fprintf(stderr, "%s ", ts);
	}
	fprintf(stderr, "nextbot: %s", tag);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	fflush(stderr);
	pthread_mutex_unlock(&log_lock);
}

void log_info(const char *fmt, ...)
{
	va_list ap;

	if (level < LOG_NORMAL)
		return;
	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}

void log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("warning: ", fmt, ap);
	va_end(ap);
}

void log_verbose(const char *fmt, ...)
{
	va_list ap;

	if (level < LOG_VERBOSE)
		return;
	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}

void log_progress(const char *fmt, ...)
{
	va_list ap;

	if (level < LOG_NORMAL)
		return;
	va_start(ap, fmt);
	if (!is_tty() || level >= LOG_VERBOSE) {
		vlog("", fmt, ap);
	} else {
		pthread_mutex_lock(&log_lock);
		fputs("\r\033[K", stderr);
		vfprintf(stderr, fmt, ap);
		fflush(stderr);
		live_shown = 1;
		pthread_mutex_unlock(&log_lock);
	}
	va_end(ap);
}

void log_progress_done(void)
{
	pthread_mutex_lock(&log_lock);
	clear_live();
	pthread_mutex_unlock(&log_lock);
}
