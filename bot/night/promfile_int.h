/*
 * workdir/metrics.prom after each night: the night's cost in the Prometheus text
 * format, as node_exporter's textfile collector reads it (phases, commands and
 * their CPU time, verdict cache hits and misses, bisections and their probes,
 * open flags, notices in the outbox, the work repository's size).
 */
#ifndef BOT_PROMFILE_INT_H
#define BOT_PROMFILE_INT_H

struct night;

/* Writes it (replaced atomically); a failure is the caller's to warn about. */
int promfile_write(const struct night *n);

#endif
