/* The night's counters: one array under a mutex. */
#include <pthread.h>
#include <time.h>

#include "util/metrics.h"
#include "util/banned.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static double values[METRIC_NR];

static const struct {
	const char *name, *help;
} info[METRIC_NR] = {
	[METRIC_COMMANDS] = { "night_commands", "Build and test commands run." },
	[METRIC_COMMAND_SECONDS] = { "night_command_seconds",
				     "Wall time of the commands run." },
	[METRIC_COMMAND_CPU] = { "night_command_cpu_seconds",
				 "CPU time (user and system) of the commands run." },
	[METRIC_CACHE_HITS] = { "night_verdict_cache_hits",
				"Probes answered by the verdict cache." },
	[METRIC_CACHE_MISSES] = { "night_verdict_cache_misses",
				  "Probes the verdict cache could not answer." },
	[METRIC_BISECTIONS] = { "night_bisections", "Culprit searches." },
	[METRIC_BISECT_PROBES] = { "night_bisect_probes",
				   "Probes of the culprit searches (bounds and confirmation "
				   "excluded)." },
	[METRIC_CONFIRM_RUNS] = { "night_confirm_runs", "Confirmation runs." },
	[METRIC_KNOWN_CONFIRMS] = { "night_known_confirmations",
				    "Confirmations taken from an earlier night's facts." },
	[METRIC_CARRIED] = { "night_carried_breakages",
			     "Open flags whose breakage was seen again and acted on without a "
			     "search." },
};

void metrics_add(enum metric m, double value)
{
	if (m >= METRIC_NR)
		return;
	pthread_mutex_lock(&lock);
	values[m] += value;
	pthread_mutex_unlock(&lock);
}

double metrics_get(enum metric m)
{
	double v;

	if (m >= METRIC_NR)
		return 0;
	pthread_mutex_lock(&lock);
	v = values[m];
	pthread_mutex_unlock(&lock);
	return v;
}

void metrics_reset(void)
{
	int i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < METRIC_NR; i++)
		values[i] = 0;
	pthread_mutex_unlock(&lock);
}

double metrics_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double metrics_cpu_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

const char *metric_name(enum metric m)
{
	return m < METRIC_NR ? info[m].name : "";
}

const char *metric_help(enum metric m)
{
	return m < METRIC_NR ? info[m].help : "";
}
