/*
 * A cgroup per command: memory and process limits for everything the command starts,
 * and, afterwards, whether it hit them.  cgroup v2 where its memory and pids
 * controllers can be had; else v1's memory and pids hierarchies; else none (with a
 * warning: limits are then rlimits only).  Used by util/runcmd.c.
 */
#ifndef UTIL_CGROUP_H
#define UTIL_CGROUP_H

#include "util/strbuf.h"

enum cgroup_kind {
	CGROUP_NONE = 0,
	CGROUP_V2,
	CGROUP_V1,
};

/* "v2", "v1 (memory, pids)", "none". */
const char *cgroup_kind_name(enum cgroup_kind k);

/*
 * What this host offers (found once per process; thread-safe): the kind, and in
 * `why` (may be NULL) where, or why there is none.  With cgroup v2, nextbot moves
 * itself into a leaf of its own cgroup ("nextbot") the first time, so that the
 * controllers can be enabled for the commands' cgroups beside it (systemd:
 * Delegate=yes on the service).
 */
enum cgroup_kind cgroup_available(struct strbuf *why);

struct cgroup {
	enum cgroup_kind kind;
	char *dir[2];        /* v2: dir[0]; v1: the memory and the pids cgroup */
	int procs_fd[2];     /* their cgroup.procs, open for the command to join; -1 */
	long long memory;    /* the limits written, 0: none */
	long processes;
};
#define CGROUP_INIT { CGROUP_NONE, { NULL, NULL }, { -1, -1 }, 0, 0 }

/*
 * Creates a cgroup for one command with these limits (0: none) and opens its
 * cgroup.procs for cgroup_join().  Returns 0 (kind CGROUP_NONE when the host has
 * none), or NB_ERROR (recorded) when it could not be made.
 */
int cgroup_create(struct cgroup *cg, long long memory, long processes);

/*
 * In the command's process, after fork, before exec (async-signal-safe): moves the
 * calling process into the cgroup.  Returns 0 or -1 with errno.
 */
int cgroup_join(const struct cgroup *cg);

/* Closes the cgroup.procs files (in the parent, once the command is forked). */
void cgroup_close_procs(struct cgroup *cg);

struct cgroup_events {
	unsigned long oom_kills;    /* processes the memory limit killed */
	unsigned long memory_max;   /* times the memory limit was reached */
	unsigned long pids_max;     /* forks refused by the process limit */
};

/* What the command ran into (zeros where the host does not say). */
void cgroup_events(const struct cgroup *cg, struct cgroup_events *out);

/*
 * Kills whatever is still in the cgroup, removes it and frees `cg` (bounded: a
 * process that will not die is left, with a warning).  CGROUP_INIT again after.
 */
void cgroup_destroy(struct cgroup *cg);

#endif
