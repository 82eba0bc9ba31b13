/* Cron expressions (the 5-field crontab schedule) for `nextbot daemon`. */
#ifndef UTIL_CRON_H
#define UTIL_CRON_H

#include <stdint.h>
#include <time.h>

/*
 * A parsed schedule: bit i of a field set means value i matches.  As in cron, when
 * both day-of-month and day-of-week are restricted (neither field starts with '*')
 * a day matches if EITHER does; otherwise both must (the '*' one always does).
 */
struct cron_expr {
	uint64_t minutes;  /* 0..59 */
	uint32_t hours;    /* 0..23 */
	uint32_t mdays;    /* 1..31 */
	uint16_t months;   /* 1..12 */
	uint8_t wdays;     /* 0..6, Sunday is 0 (7 is accepted for Sunday) */
	int mday_star, wday_star;
};

/*
 * Parses "minute hour day-of-month month day-of-week": each field a comma list of
 * '*', N or N-M, each optionally "/step" (N/step means N-max/step); month names
 * jan..dec and day names sun..sat (any case) are accepted, as are @yearly,
 * @annually, @monthly, @weekly, @daily, @midnight and @hourly.  Returns 0, or
 * NB_EINVALID with a message naming the bad field.
 */
int cron_parse(struct cron_expr *out, const char *expr);

/*
 * The first matching minute strictly after `after`, in UTC.  Returns 0, or
 * NB_ENOTFOUND when nothing matches within 30 years (e.g. "0 0 31 2 *").
 */
int cron_next(time_t *out, const struct cron_expr *e, time_t after);

#endif
