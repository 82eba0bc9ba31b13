/*
 * Counters of a night's cost, kept process-wide and thread-safe (commands run in
 * several threads at once), read when the night writes workdir/metrics.prom.
 */
#ifndef UTIL_METRICS_H
#define UTIL_METRICS_H

enum metric {
	METRIC_COMMANDS,          /* build and test commands run (not the cache's answers) */
	METRIC_COMMAND_SECONDS,   /* their wall time */
	METRIC_COMMAND_CPU,       /* their CPU time, user and system, every process of them */
	METRIC_CACHE_HITS,        /* probes the verdict cache answered */
	METRIC_CACHE_MISSES,      /* probes it could not */
	METRIC_BISECTIONS,        /* culprit searches */
	METRIC_BISECT_PROBES,     /* their probes (bounds and confirmation excluded) */
	METRIC_CONFIRM_RUNS,      /* confirmation runs */
	METRIC_KNOWN_CONFIRMS,    /* confirmations taken from an earlier night's facts */
	METRIC_CARRIED,           /* failures an open flag explained (no search) */
	METRIC_NR
};

void metrics_add(enum metric m, double value);
double metrics_get(enum metric m);
/* Every counter back to 0 (a night starts). */
void metrics_reset(void);
/* Seconds on the monotonic clock, for durations. */
double metrics_clock(void);
/*
 * Seconds of CPU (user and system) the calling thread has used: a step's own cost on a
 * busy machine, where its wall time is mostly other processes'.
 */
double metrics_cpu_clock(void);
/* The counter's name in the Prometheus text format, without the nextbot_ prefix. */
const char *metric_name(enum metric m);
/* Its HELP text. */
const char *metric_help(enum metric m);

#endif
