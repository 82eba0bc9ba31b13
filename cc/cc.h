/*
 * The compiler cache (runner.cache): a compile service nextbot runs outside the
 * box for a night, and the shims a build's own Makefile reaches through PATH.
 * The one door of cc/ for bot/; its insides are cc/cc_int.h.
 */
#ifndef CC_CC_H
#define CC_CC_H

#include <signal.h>
#include "util/runcmd.h"

/* What a service did: the night's log line and metrics. */
struct cc_stats {
	long requests;   /* requests of shims */
	long hits;       /* answered from the store, nothing run */
	long compiled;   /* compiled in the service's box and stored */
	long failed;     /* the compile failed there: the shim compiled itself */
	long refused;    /* not a request the cache takes (the shim compiled itself) */
	long direct_hits;   /* hits asked for by a manifest: no compiler ran anywhere */
	long direct_misses; /* direct requests no manifest answered (the shim preprocessed) */
	long remote;     /* connections of a cluster's nodes, over TCP, with the token */
	long remote_refused; /* TCP connections without it: closed unread */
	long long bytes; /* the store's size at the end */
};

/* How a service is set up; every string is borrowed for the call. */
struct cc_service_opts {
	const char *exe;       /* nextbot, started as `exe cc-serve …` */
	const char *shim;      /* the nextbot-cc program (NULL: beside `exe`) */
	const char *run_dir;   /* made afresh: the shims (bin/) and the socket (sock); the
				  runner user must reach it: it is bound into every box */
	const char *jobs_dir;  /* made afresh: the scratch folders of compiles */
	const char *store;     /* the entries: private, never in a box */
	long long max;         /* bytes the store may hold */
	long long min_free;    /* the store's disk keeps this free (runner.min_free) */
	const char *user;      /* as root: whom compiles run as (runner.user) */
	const char *bwrap;
	const char *const *shown; /* runner.read_only: shown in the compiles' box too */
	const char *const *hide;  /* hidden from the compiles (the workdir, the config, the
				     store); with the box's own private places, where a
				     compile's working directory may be */
	struct runcmd_limits limits;
	double timeout;        /* one compile's (0: 30 minutes) */
	/* runner.cache.listen (runner.kind: slurm): HOST:PORT the nodes reach the
	   service at, over TCP with a token of the night's; NULL: this host only */
	const char *listen;
	const char *token_file; /* where the token is kept (the runner user's, 0600) */
};

/* Where the shims' folder is inside a box, and the shims' folder in it. */
#define CC_BOX_DIR "/run/nextbot-cc"
#define CC_BOX_BIN CC_BOX_DIR "/bin"

struct cc_service;

/*
 * Starts the service (a `nextbot cc-serve` child that dies with this process) and
 * returns once it listens.  On failure (recorded) *out is NULL and builds simply
 * run without the cache.
 */
int cc_service_start(struct cc_service **out, const struct cc_service_opts *o);

/*
 * Adds what a box needs for the cache to `box`: the shims' folder bound read-only
 * at CC_BOX_DIR and first on PATH, and an empty folder over the store (wherever
 * runner.cache.dir is, no build sees it); with `listen`, the relay a cluster's
 * node starts the box under (runcmd_box.relay).  Nothing when s is NULL.  What it
 * points to lives as long as `s`.
 */
void cc_service_box(const struct cc_service *s, struct runcmd_box *box);

/*
 * The disk's floor first: removes the least recently used entries of the store at
 * `dir` (a service may be using it) until its disk has `min_free` bytes free or the
 * store is empty.  Returns the bytes removed.
 */
long long cc_store_give_way(const char *dir, long long min_free);

/* Stops the service (its compiles under way are killed) and frees `s`; NULL: no-op. */
void cc_service_stop(struct cc_service *s, struct cc_stats *stats);

/* `nextbot cc-serve`'s options (the service process; see bot/cli/cmd_cc.c). */
struct cc_serve_opts {
	const char *store, *jobs;
	long long max, min_free;
	const char *user, *bwrap;
	const char *const *shown, *const *hide;
	struct runcmd_limits limits;
	double timeout;
	/* with a token: the listening TCP socket of cc_remote_listen() too, whose
	   connections must show the token first (CC_TOKEN_HEXSZ hex digits) */
	const char *token;
	int remote_fd;
	volatile sig_atomic_t *stopping; /* set by SIGTERM: stop taking, kill compiles */
	void (*ready)(void *data);       /* called once it serves */
	void *ready_data;
};

/*
 * Makes `run_dir` afresh: bin/ with a copy of `shim` and a link to it for each
 * compiler name found in `path`'s folders, the list of the box's own places the
 * shims read, and the socket `sock` listening (the runner user's, o->user, as
 * root).  Returns the socket, or < 0 (recorded).
 */
int cc_run_dir_make(const char *run_dir, const char *shim, const char *path,
		    const struct cc_serve_opts *o);

/*
 * Serves on `listen_fd` until *o->stopping, then waits (30 s at most) for the
 * connections still open; `out` gets the counts.  Returns 0, or < 0 (recorded) when
 * it could not start.
 */
int cc_serve_run(struct cc_stats *out, int listen_fd, const struct cc_serve_opts *o);

/* The token a cluster node's connections show (hex digits of 32 random bytes). */
#define CC_TOKEN_HEXSZ 64

/* The service's TCP side (runner.cache.listen): its socket, its port, the token. */
struct cc_remote {
	int fd;
	int port;              /* the one asked for, or the kernel's choice for port 0 */
	char token[CC_TOKEN_HEXSZ + 1];
};

/*
 * Listens at `addr` (HOST:PORT, [V6]:PORT) and reads the token from `token_file`
 * into `out`.  0, or < 0 (recorded; out->fd is -1).  The caller closes out->fd,
 * or hands it to cc_serve_run() (cc_serve_opts.remote_fd), which does.
 */
int cc_remote_open(struct cc_remote *out, const char *addr, const char *token_file);

/* The shim's whole program (nextbot-cc, under a compiler's name); its exit code. */
int cc_shim_main(int argc, char **argv);

#endif
