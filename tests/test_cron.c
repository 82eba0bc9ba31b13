/* Unit tests for util/cron (schedules) and util/timespec (durations and deadlines). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include <time.h>

#include "util/cron.h"
#include "util/error.h"
#include "util/timespec.h"
#include "util/banned.h"

/* "2026-12-03 02:00:00" style UTC string to time_t. */
static time_t utc(const char *s)
{
	struct tm tm;

	memset(&tm, 0, sizeof(tm));
	assert_non_null(strptime(s, "%Y-%m-%d %H:%M:%S", &tm));
	return timegm(&tm);
}

static void assert_next(const char *expr, const char *after, const char *want)
{
	struct cron_expr e;
	time_t t = 0;

	assert_int_equal(cron_parse(&e, expr), 0);
	assert_int_equal(cron_next(&t, &e, utc(after)), 0);
	if (t != utc(want)) {
		char got[32];
		struct tm tm;

		gmtime_r(&t, &tm);
		strftime(got, sizeof(got), "%Y-%m-%d %H:%M:%S", &tm);
		fail_msg("'%s' after %s: got %s, want %s", expr, after, got, want);
	}
}

static void test_cron_next_basic(void **state)
{
	assert_next("0 2 * * *", "2026-12-03 01:59:59", "2026-12-03 02:00:00");
	/* Strictly after: at the matching minute itself, the next day. */
	assert_next("0 2 * * *", "2026-12-03 02:00:00", "2026-12-04 02:00:00");
	assert_next("0 2 * * *", "2026-12-03 02:00:30", "2026-12-04 02:00:00");
	assert_next("* * * * *", "2026-12-03 02:00:30", "2026-12-03 02:01:00");
	assert_next("* * * * *", "2026-12-03 02:00:00", "2026-12-03 02:01:00");
	assert_next("*/15 * * * *", "2026-12-03 02:16:00", "2026-12-03 02:30:00");
	assert_next("5,10-12 * * * *", "2026-12-03 02:10:00", "2026-12-03 02:11:00");
	assert_next("5,10-12 * * * *", "2026-12-03 02:12:00", "2026-12-03 03:05:00");
	assert_next("10-40/15 3 * * *", "2026-12-03 03:26:00", "2026-12-03 03:40:00");
	assert_next("30 */6 * * *", "2026-12-03 12:30:00", "2026-12-03 18:30:00");
	/* Year and month boundaries. */
	assert_next("0 0 1 1 *", "2026-12-03 00:00:00", "2027-01-01 00:00:00");
	assert_next("0 0 31 * *", "2026-11-01 00:00:00", "2026-12-31 00:00:00");
	assert_next("0 0 29 2 *", "2026-03-01 00:00:00", "2028-02-29 00:00:00");
	assert_next("@daily", "2026-12-03 10:00:00", "2026-12-04 00:00:00");
	assert_next("@hourly", "2026-12-03 10:00:00", "2026-12-03 11:00:00");
	assert_next("  0   2 * *   *  ", "2026-12-03 01:00:00", "2026-12-03 02:00:00");
}

static void test_cron_next_days(void **state)
{
	/* 2026-12-03 is a Thursday. */
	assert_next("0 2 * * mon", "2026-12-03 00:00:00", "2026-12-07 02:00:00");
	assert_next("0 2 * * 1-5", "2026-12-04 03:00:00", "2026-12-07 02:00:00");
	assert_next("0 2 * * MON-fri", "2026-12-04 03:00:00", "2026-12-07 02:00:00");
	assert_next("0 2 * * 0", "2026-12-03 00:00:00", "2026-12-06 02:00:00");
	assert_next("0 2 * * 7", "2026-12-03 00:00:00", "2026-12-06 02:00:00");
	assert_next("0 2 * * sat,sun", "2026-12-03 00:00:00", "2026-12-05 02:00:00");
	assert_next("0 0 * jun *", "2026-12-03 00:00:00", "2027-06-01 00:00:00");
	assert_next("0 0 1 feb-mar *", "2026-12-03 00:00:00", "2027-02-01 00:00:00");
	/* Both restricted: either matches (the 15th, or any Monday). */
	assert_next("0 0 15 * mon", "2026-12-03 00:00:00", "2026-12-07 00:00:00");
	assert_next("0 0 15 * mon", "2026-12-14 00:00:00", "2026-12-15 00:00:00");
	/* A '*' day-of-week (even with a step) leaves day-of-month alone in charge. */
	assert_next("0 0 15 * *", "2026-12-03 00:00:00", "2026-12-15 00:00:00");
	assert_next("0 0 15 * */2", "2026-12-03 00:00:00", "2026-12-15 00:00:00");
	/* And a '*' day-of-month leaves the weekday in charge. */
	assert_next("0 0 * * fri", "2026-12-03 00:00:00", "2026-12-04 00:00:00");
}

static void test_cron_never(void **state)
{
	struct cron_expr e;
	time_t t;

	assert_int_equal(cron_parse(&e, "0 0 31 2 *"), 0);
	assert_int_equal(cron_next(&t, &e, utc("2026-12-03 00:00:00")), NB_ENOTFOUND);
	assert_int_equal(cron_parse(&e, "0 0 30 feb *"), 0);
	assert_int_equal(cron_next(&t, &e, utc("2026-12-03 00:00:00")), NB_ENOTFOUND);
}

static void assert_bad(const char *expr, const char *field)
{
	struct cron_expr e;

	nb_error_clear();
	if (cron_parse(&e, expr) != NB_EINVALID)
		fail_msg("'%s' was accepted", expr);
	if (!strstr(nb_error_last(), field))
		fail_msg("'%s': message '%s' does not name '%s'", expr, nb_error_last(), field);
}

static void test_cron_invalid(void **state)
{
	struct cron_expr e;

	assert_bad("", "5 fields");
	assert_bad("   ", "5 fields");
	assert_bad("0 2 * *", "5 fields");
	assert_bad("0 2 * * * *", "5 fields");
	assert_bad("60 2 * * *", "minute field '60'");
	assert_bad("-1 2 * * *", "minute");
	assert_bad("0 24 * * *", "hour field '24'");
	assert_bad("0 2 0 * *", "day-of-month field '0'");
	assert_bad("0 2 32 * *", "day-of-month");
	assert_bad("0 2 * 13 *", "month field '13'");
	assert_bad("0 2 * 0 *", "month");
	assert_bad("0 2 * * 8", "day-of-week field '8'");
	assert_bad("0 2 * * monday", "day-of-week");
	assert_bad("0 2 * * xyz", "day-of-week");
	assert_bad("0 2 * jan-foo *", "month");
	assert_bad("jan 2 * * *", "minute"); /* names only where they belong */
	assert_bad("5-1 2 * * *", "minute");
	assert_bad("*/0 2 * * *", "minute");
	assert_bad("*/ 2 * * *", "minute");
	assert_bad("*/x 2 * * *", "minute");
	assert_bad("1,,2 2 * * *", "minute");
	assert_bad("1, 2 * * *", "minute");
	assert_bad("0 2, * * *", "hour");
	assert_bad("0 2 * * 1-", "day-of-week");
	assert_bad("** 2 * * *", "minute");
	assert_bad("99999999999999999999 2 * * *", "minute");
	assert_bad("@sometimes", "shorthand");
	assert_bad("@daily extra", "shorthand");
	assert_int_equal(cron_parse(&e, NULL), NB_EINVALID);
}

static void test_cron_fields(void **state)
{
	struct cron_expr e;

	assert_int_equal(cron_parse(&e, "0,59 0-23/23 1,31 jan,DEC 0-7"), 0);
	assert_int_equal(e.minutes, 1ULL | 1ULL << 59);
	assert_int_equal(e.hours, 1U | 1U << 23);
	assert_int_equal(e.mdays, 1U << 1 | 1U << 31);
	assert_int_equal(e.months, 1U << 1 | 1U << 12);
	assert_int_equal(e.wdays, 0x7F);
	assert_false(e.mday_star);
	assert_false(e.wday_star);
	assert_int_equal(cron_parse(&e, "5/20 * * * *"), 0);
	assert_int_equal(e.minutes, 1ULL << 5 | 1ULL << 25 | 1ULL << 45);
	assert_true(e.mday_star);
}

/* ---- timespec ---- */

static void test_duration(void **state)
{
	long v;

	assert_int_equal(timespec_parse_duration(&v, "90s"), 0);
	assert_int_equal(v, 90);
	assert_int_equal(timespec_parse_duration(&v, "3600"), 0);
	assert_int_equal(v, 3600);
	assert_int_equal(timespec_parse_duration(&v, "4h"), 0);
	assert_int_equal(v, 4 * 3600);
	assert_int_equal(timespec_parse_duration(&v, "30m"), 0);
	assert_int_equal(v, 1800);
	assert_int_equal(timespec_parse_duration(&v, "1h30m"), 0);
	assert_int_equal(v, 5400);
	assert_int_equal(timespec_parse_duration(&v, "1d2h3m4s"), 0);
	assert_int_equal(v, 86400 + 7200 + 180 + 4);
	assert_int_equal(timespec_parse_duration(&v, " 15m "), 0);
	assert_int_equal(v, 900);
	assert_int_equal(timespec_parse_duration(&v, "0s"), 0);
	assert_int_equal(v, 0);

	static const char *const bad[] = {
		"", " ", "h", "1x", "1.5h", "-5", "+5", "1h 30m", "30m1h", "1h1h", "1hm",
		"1h30", "4 h", "99999999999999999999", "9999999999999999999d", "s", NULL,
	};
	for (int i = 0; bad[i]; i++) {
		nb_error_clear();
		if (timespec_parse_duration(&v, bad[i]) != NB_EINVALID)
			fail_msg("duration '%s' was accepted", bad[i]);
		assert_non_null(strstr(nb_error_last(), "duration"));
	}
	assert_int_equal(timespec_parse_duration(&v, NULL), NB_EINVALID);
}

static void test_clock_and_deadline(void **state)
{
	time_t start = utc("2026-12-03 02:00:00"), t;
	long v;

	assert_int_equal(timespec_parse_clock(&v, "06:00"), 0);
	assert_int_equal(v, 6 * 3600);
	assert_int_equal(timespec_parse_clock(&v, "6:05:09"), 0);
	assert_int_equal(v, 6 * 3600 + 5 * 60 + 9);
	assert_int_equal(timespec_parse_clock(&v, "23:59:59"), 0);

	assert_int_equal(timespec_parse_deadline(&t, "06:00", start), 0);
	assert_int_equal(t, utc("2026-12-03 06:00:00"));
	/* Already past today: tomorrow's. */
	assert_int_equal(timespec_parse_deadline(&t, "01:30", start), 0);
	assert_int_equal(t, utc("2026-12-04 01:30:00"));
	/* Exactly now counts (at or after). */
	assert_int_equal(timespec_parse_deadline(&t, "02:00:00", start), 0);
	assert_int_equal(t, start);
	assert_int_equal(timespec_parse_deadline(&t, "00:00", utc("2026-12-31 23:00:00")), 0);
	assert_int_equal(t, utc("2027-01-01 00:00:00"));
	assert_int_equal(timespec_parse_deadline(&t, "4h", start), 0);
	assert_int_equal(t, start + 4 * 3600);
	assert_int_equal(timespec_parse_deadline(&t, "90s", start), 0);
	assert_int_equal(t, start + 90);

	static const char *const bad[] = {
		"24:00", "06:60", "06:00:60", "6x", "06:000", "06:00:000", "06:", ":30",
		"06:0", "006:00",
		"06:00:", "06-00", "06:00 tomorrow", "ab:cd", "1h30x", "", NULL,
	};
	for (int i = 0; bad[i]; i++) {
		nb_error_clear();
		if (timespec_parse_deadline(&t, bad[i], start) != NB_EINVALID)
			fail_msg("deadline '%s' was accepted", bad[i]);
		assert_non_null(strstr(nb_error_last(), bad[i]));
	}
	assert_int_equal(timespec_parse_deadline(&t, NULL, start), NB_EINVALID);
	assert_int_equal(timespec_parse_clock(&v, NULL), NB_EINVALID);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cron_next_basic),
		cmocka_unit_test(test_cron_next_days),
		cmocka_unit_test(test_cron_never),
		cmocka_unit_test(test_cron_invalid),
		cmocka_unit_test(test_cron_fields),
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_clock_and_deadline),
	};

	return cmocka_run_group_tests_name("cron", tests, NULL, NULL);
}
