/* Cron expression parsing and next-run computation (UTC). */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "util/cron.h"
#include "util/error.h"
#include "util/banned.h"

struct field_def {
	const char *name;
	int lo, hi;
	const char *const *names; /* names[i] stands for lo + i */
};

static const char *const month_names[] = {
	"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec", NULL,
};
static const char *const day_names[] = { "sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL };

static const struct field_def fields[5] = {
	{ "minute", 0, 59, NULL },
	{ "hour", 0, 23, NULL },
	{ "day-of-month", 1, 31, NULL },
	{ "month", 1, 12, month_names },
	{ "day-of-week", 0, 7, day_names },
};

static const struct {
	const char *name, *expr;
} shorthands[] = {
	{ "@yearly", "0 0 1 1 *" },  { "@annually", "0 0 1 1 *" }, { "@monthly", "0 0 1 * *" },
	{ "@weekly", "0 0 * * 0" },  { "@daily", "0 0 * * *" },    { "@midnight", "0 0 * * *" },
	{ "@hourly", "0 * * * *" },
};

/* A number or (where the field has them) a three-letter name; advances *p. */
static int parse_value(const char **p, const char *end, const struct field_def *f, int *out)
{
	const char *s = *p;
	int v = 0, i;

	if (s < end && isdigit((unsigned char)*s)) {
		while (s < end && isdigit((unsigned char)*s)) {
			v = v * 10 + (*s++ - '0');
			if (v > f->hi)
				return -1;
		}
	} else if (f->names && end - s >= 3 && !(end - s > 3 && isalpha((unsigned char)s[3]))) {
		for (i = 0; f->names[i]; i++)
			if (!strncasecmp(s, f->names[i], 3))
				break;
		if (!f->names[i])
			return -1;
		v = f->lo + i;
		s += 3;
	} else {
		return -1;
	}
	if (v < f->lo)
		return -1;
	*p = s;
	*out = v;
	return 0;
}

/* One list item: '*', N or N-M, then optionally /step. */
static int parse_item(uint64_t *bits, const char *s, const char *end, const struct field_def *f)
{
	int a, b, step = 1, v;

	if (s < end && *s == '*') {
		a = f->lo;
		b = f->hi;
		s++;
	} else {
		if (parse_value(&s, end, f, &a) < 0)
			return -1;
		b = a;
		if (s < end && *s == '-') {
			s++;
			if (parse_value(&s, end, f, &b) < 0 || b < a)
				return -1;
		} else if (s < end && *s == '/') {
			b = f->hi;
		}
	}
	if (s < end && *s == '/') {
		s++;
		if (s == end)
			return -1;
		for (step = 0; s < end; s++) {
			if (!isdigit((unsigned char)*s))
				return -1;
			step = step * 10 + (*s - '0');
			if (step > f->hi + 1)
				return -1;
		}
		if (!step)
			return -1;
	}
	if (s != end)
		return -1;
	for (v = a; v <= b; v += step)
		*bits |= 1ULL << v;
	return 0;
}

static int parse_field(uint64_t *bits, const char *s, size_t len, const struct field_def *f)
{
	const char *end = s + len;

	*bits = 0;
	while (s <= end) {
		const char *comma = memchr(s, ',', (size_t)(end - s));
		const char *item_end = comma ? comma : end;

		if (item_end == s || parse_item(bits, s, item_end, f) < 0)
			return -1;
		s = item_end + 1;
	}
	return 0;
}

static int parse_fields(struct cron_expr *out, const char *orig, const char *expr)
{
	const char *s = expr, *start[6];
	size_t len[6];
	uint64_t bits[5];
	int n = 0, i;

	while (*s) {
		while (isspace((unsigned char)*s))
			s++;
		if (!*s)
			break;
		if (n == 6)
			break;
		start[n] = s;
		while (*s && !isspace((unsigned char)*s))
			s++;
		len[n] = (size_t)(s - start[n]);
		n++;
	}
	if (n != 5)
		return nb_error_set(NB_EINVALID,
				    "cron expression '%s': expected 5 fields (minute hour "
				    "day-of-month month day-of-week), got %s%d",
				    orig, n > 5 ? "more than " : "", n > 5 ? 5 : n);
	for (i = 0; i < 5; i++)
		if (parse_field(&bits[i], start[i], len[i], &fields[i]) < 0)
			return nb_error_set(NB_EINVALID,
					    "cron expression '%s': bad %s field '%.*s'", orig,
					    fields[i].name, (int)len[i], start[i]);
	out->minutes = bits[0];
	out->hours = (uint32_t)bits[1];
	out->mdays = (uint32_t)bits[2];
	out->months = (uint16_t)bits[3];
	out->wdays = (uint8_t)((bits[4] | bits[4] >> 7) & 0x7F); /* 7 is Sunday too */
	out->mday_star = *start[2] == '*';
	out->wday_star = *start[4] == '*';
	return 0;
}

int cron_parse(struct cron_expr *out, const char *expr)
{
	const char *s = expr;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (!expr)
		return nb_error_set(NB_EINVALID, "cron expression missing");
	while (isspace((unsigned char)*s))
		s++;
	if (*s == '@') {
		size_t n = strcspn(s, " \t\r\n");

		for (i = 0; i < sizeof(shorthands) / sizeof(shorthands[0]); i++)
			if (strlen(shorthands[i].name) == n && !strncmp(s, shorthands[i].name, n) &&
			    !s[n + strspn(s + n, " \t\r\n")])
				return parse_fields(out, expr, shorthands[i].expr);
		return nb_error_set(NB_EINVALID, "cron expression '%s': unknown shorthand", expr);
	}
	return parse_fields(out, expr, expr);
}

static int day_matches(const struct cron_expr *e, const struct tm *tm)
{
	int mday = !!(e->mdays & (1U << tm->tm_mday));
	int wday = !!(e->wdays & (1U << tm->tm_wday));

	if (e->mday_star || e->wday_star)
		return mday && wday;
	return mday || wday;
}

int cron_next(time_t *out, const struct cron_expr *e, time_t after)
{
	time_t t = after - ((after % 60) + 60) % 60 + 60;
	time_t limit = after + (time_t)30 * 366 * 86400;
	struct tm tm;

	while (t <= limit) {
		if (!gmtime_r(&t, &tm))
			break;
		tm.tm_sec = 0;
		if (!(e->months & (1U << (tm.tm_mon + 1)))) {
			tm.tm_mon++;
			tm.tm_mday = 1;
			tm.tm_hour = tm.tm_min = 0;
		} else if (!day_matches(e, &tm)) {
			tm.tm_mday++;
			tm.tm_hour = tm.tm_min = 0;
		} else if (!(e->hours & (1U << tm.tm_hour))) {
			tm.tm_hour++;
			tm.tm_min = 0;
		} else if (!(e->minutes & (1ULL << tm.tm_min))) {
			tm.tm_min++;
		} else {
			*out = t;
			return 0;
		}
		t = timegm(&tm);
	}
	return nb_error_set(NB_ENOTFOUND, "cron expression matches no time in the next 30 years");
}
