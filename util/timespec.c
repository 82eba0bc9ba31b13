/* Parsing durations and deadlines given in configs and on the command line. */
#include <ctype.h>
#include <limits.h>
#include <string.h>

#include "util/timespec.h"
#include "util/error.h"
#include "util/banned.h"

/* Digits at *p (at least one) into *out, refusing overflow past `max`; advances *p. */
static int digits(const char **p, long max, long *out)
{
	const char *s = *p;
	long v = 0;

	if (!isdigit((unsigned char)*s))
		return -1;
	while (isdigit((unsigned char)*s)) {
		if (v > (max - (*s - '0')) / 10)
			return -1;
		v = v * 10 + (*s++ - '0');
	}
	*p = s;
	*out = v;
	return 0;
}

static const char *skip_space(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return s;
}

static int at_end(const char *s)
{
	return !*skip_space(s);
}

int timespec_parse_duration(long *out, const char *s)
{
	static const char units[] = "dhms";
	static const long scale[] = { 86400, 3600, 60, 1 };
	const char *p = s ? skip_space(s) : NULL;
	long total = 0, n;
	int next = 0; /* index of the smallest unit still allowed */

	if (!p || !*p)
		return nb_error_set(NB_EINVALID, "empty duration");
	if (digits(&p, LONG_MAX, &n) < 0)
		goto bad;
	if (at_end(p)) {
		*out = n;
		return 0;
	}
	for (;;) {
		const char *u = *p ? strchr(units + next, *p) : NULL;

		if (!u)
			goto bad;
		next = (int)(u - units);
		if (n > (LONG_MAX - total) / scale[next])
			goto bad;
		total += n * scale[next];
		next++;
		p++;
		if (at_end(p))
			break;
		if (digits(&p, LONG_MAX, &n) < 0)
			goto bad;
	}
	*out = total;
	return 0;
bad:
	return nb_error_set(NB_EINVALID,
			    "bad duration '%s' (want seconds, or e.g. \"90s\", \"15m\", \"4h\", "
			    "\"1h30m\")",
			    s);
}

/* Exactly `n` (1 or 2) digits at *p, not followed by another digit; advances *p. */
static int fixed_digits(const char **p, int n, long *out)
{
	const char *s = *p;
	long v = 0;
	int i;

	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	if (isdigit((unsigned char)s[n]))
		return -1;
	*p = s + n;
	*out = v;
	return 0;
}

int timespec_parse_clock(long *out, const char *s)
{
	const char *p = s ? skip_space(s) : "";
	long h, m, sec = 0;
	int hour_digits = *p && isdigit((unsigned char)p[1]) ? 2 : 1;

	if (fixed_digits(&p, hour_digits, &h) < 0 || h > 23 || *p++ != ':')
		goto bad;
	if (fixed_digits(&p, 2, &m) < 0 || m > 59)
		goto bad;
	if (*p == ':') {
		p++;
		if (fixed_digits(&p, 2, &sec) < 0 || sec > 59)
			goto bad;
	}
	if (!at_end(p))
		goto bad;
	*out = h * 3600 + m * 60 + sec;
	return 0;
bad:
	return nb_error_set(NB_EINVALID, "bad clock time '%s' (want HH:MM or HH:MM:SS, UTC)",
			    s ? s : "");
}

int timespec_parse_deadline(time_t *out, const char *s, time_t start)
{
	long secs;
	time_t midnight;

	if (s && strchr(s, ':')) {
		if (timespec_parse_clock(&secs, s) < 0)
			return nb_error_set(NB_EINVALID,
					    "bad deadline '%s' (want HH:MM[:SS] UTC or a duration "
					    "such as \"4h\")",
					    s);
		midnight = start - ((start % 86400) + 86400) % 86400;
		*out = midnight + secs;
		if (*out < start)
			*out += 86400;
		return 0;
	}
	if (timespec_parse_duration(&secs, s) < 0)
		return nb_error_set(NB_EINVALID,
				    "bad deadline '%s' (want HH:MM[:SS] UTC or a duration such as "
				    "\"4h\")",
				    s ? s : "");
	if (start > 0 && secs > LONG_MAX - start)
		return nb_error_set(NB_EINVALID, "deadline '%s' is too far away", s);
	*out = start + secs;
	return 0;
}

void timespec_format_duration(struct strbuf *sb, long seconds)
{
	static const char units[] = "dhms";
	static const long scale[] = { 86400, 3600, 60, 1 };
	int i, any = 0;

	if (seconds <= 0) {
		strbuf_addstr(sb, "0s");
		return;
	}
	for (i = 0; i < 4; i++) {
		if (seconds >= scale[i]) {
			strbuf_addf(sb, "%ld%c", seconds / scale[i], units[i]);
			seconds %= scale[i];
			any = 1;
		}
	}
	if (!any)
		strbuf_addstr(sb, "0s");
}
