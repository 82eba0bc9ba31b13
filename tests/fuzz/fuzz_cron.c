/*
 * Fuzz target: the cron expression parser and next-match search (util/cron.c).
 * Properties: an accepted expression has only in-range bits, none of its fields is
 * empty, and parsing is deterministic; cron_next() gives a whole minute strictly
 * after the start that matches the expression (checked independently with
 * gmtime_r and cron's day rule) with no matching minute before it (checked over
 * the first day); NB_ENOTFOUND only when no day of the next 8 years matches.
 */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "tests/fuzz/fuzz.h"
#include "util/cron.h"
#include "util/error.h"
#include "util/banned.h"

static int cron_day_matches(const struct cron_expr *e, const struct tm *tm)
{
	int mday = (e->mdays >> tm->tm_mday) & 1, wday = (e->wdays >> tm->tm_wday) & 1;

	if (!((e->months >> (tm->tm_mon + 1)) & 1))
		return 0;
	if (!e->mday_star && !e->wday_star)
		return mday || wday;
	return mday && wday;
}

static int cron_matches(const struct cron_expr *e, time_t t)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	return ((e->minutes >> tm.tm_min) & 1) && ((e->hours >> tm.tm_hour) & 1) &&
	       cron_day_matches(e, &tm);
}

static void cron_check_expr(const struct cron_expr *e)
{
	FUZZ_CHECK(e->minutes && !(e->minutes >> 60), "minutes %#llx",
		   (unsigned long long)e->minutes);
	FUZZ_CHECK(e->hours && !(e->hours >> 24), "hours %#x", e->hours);
	FUZZ_CHECK(e->mdays && !(e->mdays & 1), "mdays %#x", e->mdays);
	FUZZ_CHECK(e->months && !(e->months & 1) && !(e->months >> 13), "months %#x", e->months);
	FUZZ_CHECK(e->wdays && !(e->wdays >> 7), "wdays %#x", e->wdays);
}

static void cron_check_next(const struct cron_expr *e, time_t after)
{
	time_t next = 0, t, start = after - after % 60 + 60;
	int ret = cron_next(&next, e, after);

	if (ret == NB_ENOTFOUND) {
		struct tm tm;

		for (t = start; t < start + 8 * 366 * 86400L; t += 86400) {
			gmtime_r(&t, &tm);
			FUZZ_CHECK(!cron_day_matches(e, &tm),
				   "NB_ENOTFOUND, but day %04d-%02d-%02d matches",
				   tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
		}
		return;
	}
	FUZZ_CHECK(ret == 0, "cron_next returned %d", ret);
	FUZZ_CHECK(next > after && next % 60 == 0, "next %lld after %lld", (long long)next,
		   (long long)after);
	FUZZ_CHECK(next - after <= 31L * 366 * 86400, "next more than 30 years away");
	FUZZ_CHECK(cron_matches(e, next), "next %lld does not match", (long long)next);
	for (t = start; t < next && t < start + 1440 * 60; t += 60)
		FUZZ_CHECK(!cron_matches(e, t), "%lld matches before next %lld", (long long)t,
			   (long long)next);
}

int fuzz_cron_one(const uint8_t *data, size_t size)
{
	struct cron_expr a, b;
	char *s = fuzz_strdup(data, size);
	uint64_t h = 1469598103934665603ULL;
	size_t i;
	int ra, rb;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	ra = cron_parse(&a, s);
	rb = cron_parse(&b, s);
	FUZZ_CHECK(ra == rb, "parse is not deterministic");
	if (ra == 0) {
		FUZZ_CHECK(!memcmp(&a, &b, sizeof(a)), "parse is not deterministic");
		cron_check_expr(&a);
		for (i = 0; i < size; i++)
			h = (h ^ data[i]) * 1099511628211ULL;
		cron_check_next(&a, 1796263201);  /* 2026-12-03 02:00:01 */
		cron_check_next(&a, (time_t)(h % 4102444800ULL)); /* up to 2100 */
	} else {
		FUZZ_CHECK(ra == NB_EINVALID, "cron_parse returned %d", ra);
		FUZZ_CHECK(*nb_error_last(), "refused without a message");
	}
	free(s);
	return 0;
}

#ifndef FUZZ_REPLAY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_cron_one(data, size);
}
#endif
