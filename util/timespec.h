/* Durations ("90s", "1h30m") and deadlines ("06:00" UTC or a duration from the start). */
#ifndef UTIL_TIMESPEC_H
#define UTIL_TIMESPEC_H

#include <time.h>
#include "util/strbuf.h"

/*
 * Parses a duration: a plain number of seconds ("3600"), or numbers with units
 * d, h, m, s in that order, each at most once ("90s", "15m", "4h", "1h30m", "1d12h").
 * Whitespace around it is allowed, none inside.  *out may be 0 ("0s").  Returns 0
 * or NB_EINVALID (junk, unknown or repeated unit, overflow) with a message.
 */
int timespec_parse_duration(long *out, const char *s);

/* Parses a UTC clock time "HH:MM" or "HH:MM:SS" into seconds after midnight. */
int timespec_parse_clock(long *out, const char *s);

/*
 * Parses a deadline relative to `start`: a clock time "HH:MM[:SS]" (UTC) means its
 * next occurrence at or after `start`; a duration means start + duration.  Returns
 * 0 with the absolute time in *out, or NB_EINVALID with a message.
 */
int timespec_parse_deadline(time_t *out, const char *s, time_t start);

/* Appends a duration as a config would write it: "30m", "1h30m", "90s" is "1m30s". */
void timespec_format_duration(struct strbuf *sb, long seconds);

#endif
