/* Per-thread last-error message, set where a failure happens. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/error.h"
#include "util/banned.h"

#define ERRMSG_MAX 4096

static _Thread_local char errmsg[ERRMSG_MAX];

__attribute__((format(printf, 1, 0)))
static void vset(const char *fmt, va_list ap)
{
	vsnprintf(errmsg, sizeof(errmsg), fmt, ap);
}

int nb_error_set(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vset(fmt, ap);
	va_end(ap);
	return code;
}

int nb_error_errno(int code, const char *fmt, ...)
{
	int saved = errno;
	size_t len;
	va_list ap;

	va_start(ap, fmt);
	vset(fmt, ap);
	va_end(ap);
	len = strlen(errmsg);
	snprintf(errmsg + len, sizeof(errmsg) - len, ": %s", strerror(saved));
	errno = saved;
	return code;
}

void nb_error_prefix(const char *fmt, ...)
{
	char old[ERRMSG_MAX];
	size_t len;
	va_list ap;

	memcpy(old, errmsg, sizeof(old));
	va_start(ap, fmt);
	vset(fmt, ap);
	va_end(ap);
	len = strlen(errmsg);
	snprintf(errmsg + len, sizeof(errmsg) - len, "%s", old);
}

const char *nb_error_last(void)
{
	return errmsg;
}

void nb_error_clear(void)
{
	errmsg[0] = 0;
}
