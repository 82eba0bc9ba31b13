/*
 * One probe: check a commit out into a worker and run the configured commands on
 * it, with the verdict cache, a pristine retry before a failure counts, and the
 * classification into good, bad, skip (exit 125) and infrastructure (could not be
 * judged: nobody is blamed).
 */
#ifndef MERGE_PROBE_INT_H
#define MERGE_PROBE_INT_H

#include <git2.h>
#include <stddef.h>
#include "merge/git/sha1_int.h"
#include "merge/worker/worker.h"
#include "util/strbuf.h"

struct slurm_opts;
struct runcmd_box;
struct runcmd_limits;

enum probe_verdict {
	PROBE_GOOD = 0,  /* every command exited 0 */
	PROBE_BAD,       /* a command failed: exit 1..255 but 125, a signal, its timeout
			    or another limit (named in `limit`: the caller decides
			    whether a limit is a patch's doing, by the good end and
			    the culprit's parent passing under the same limit) */
	PROBE_SKIP,      /* exit 125, or a failure of a skip_on_fail command */
	PROBE_INFRA,     /* could not be judged: checkout failed, the runner could not
			    start the command, the sandbox could not be set up */
};

struct probe_command {
	const char *name;          /* "x86_64", "selftests"; for logs and reports */
	const char *shell;         /* run by /bin/sh -c as written … */
	const char *const *argv;   /* … or this argv (standalone bisect) */
	const char *const *env;    /* "KEY=VALUE", NULL-terminated; may be NULL */
	double timeout;            /* seconds; 0: none */
	/* a failure (not a skip) of this command makes the probe a skip: a build
	   failing while a test failure is bisected */
	int skip_on_fail;
	/* config `incremental: true`: a search may probe it in a kept tree */
	int incremental;
};

/* 1 when every one of the `nr` commands is `incremental` (0 for none). */
int probe_commands_incremental(const struct probe_command *cmds, size_t nr);

struct probe_spec {
	const struct probe_command *cmds;  /* run in order; the first not to pass decides */
	size_t cmds_nr;
	const char *tree_name;     /* NEXTBOT_TREE; may be NULL */
	const char *date;          /* NEXTBOT_DATE (YYYY-MM-DD); may be NULL */
	const char *runs_dir;      /* a log per command run is written here; NULL: none */
	const char *cache_dir;     /* the verdict cache; NULL: none */
	const char *runner;        /* runner kind for the cache key; NULL: "local" */
	const char *user;          /* as root, run commands as this user; NULL: runcmd's */
	int no_cache;              /* do not read the cache (confirmation runs) */
	/*
	 * A clean tree: the commit's files and nothing else (a pristine checkout).
	 * Such a probe reads and writes only verdicts of clean trees; without it, a
	 * pass in the kept tree is cached as a pass "seen incrementally", which only
	 * probes without `pristine` read (detection after a merge).
	 */
	int pristine;
	int pristine_retry;        /* a failure in an incremental tree is re-run pristine … */
	/* … unless it is one of these, "<command name>\t<first error, normalised>"
	   (NULL-terminated; may be NULL): a confirmed breakage seen again */
	const char *const *known_errors;
	int inherit_env;           /* pass nextbot's whole environment (standalone bisect,
				      a command the user typed); never for configured ones */
	/* runner kind slurm: each command runs as a Slurm job step (util/slurm.h);
	   NULL: locally.  Set `runner` to "slurm" too, for the cache key */
	const struct slurm_opts *slurm;
	/* set by another thread when the result is no longer wanted: the running
	   command is killed and the probe ends PROBE_INFRA (runcmd_opts.cancel) */
	const volatile int *cancel;
	/* the sandbox every command runs in (util/runcmd.h), with the worker's tree
	   bound writable on top of it; NULL: none */
	const struct runcmd_box *box;
	const struct runcmd_limits *limits; /* NULL: runcmd's defaults */
};

struct probe_result {
	enum probe_verdict verdict;
	int cmd_index;             /* the deciding command; -1 when all passed */
	int exit_code;             /* its exit status (128+N for signal N) */
	int signal;
	int timed_out;
	int from_cache;            /* decided by the verdict cache, nothing ran */
	int pristine_retried;      /* an incremental failure was re-run pristine */
	int incremental_only;      /* … and then passed: the build is not incremental-safe */
	int clean;                 /* the verdict is a clean tree's (run pristine, or a
				      clean verdict from the cache) */
	git_oid tree;              /* the tree probed (zero when the commit is unreadable) */
	unsigned runs;             /* commands actually run */
	char *log_path;            /* the deciding run's log, or NULL; owned */
	char *infra_reason;        /* PROBE_INFRA: why; owned */
	struct strbuf output;      /* the deciding command's output (head and tail) */
	/* the limit that ended the deciding command, as runcmd_limit_describe() says it
	   ("killed: memory limit 8 GiB", "timed out after 30m"); owned; NULL: none.
	   It is also the output's last line, after "nextbot: " */
	char *limit;
};
#define PROBE_RESULT_INIT { .verdict = PROBE_GOOD, .cmd_index = -1, .output = STRBUF_INIT }
void probe_result_release(struct probe_result *r);

/*
 * Checks `commit` out into worker `w` (incrementally unless spec->pristine) and
 * runs spec's commands in the worker's tree with NEXTBOT_TREE, NEXTBOT_COMMIT,
 * NEXTBOT_DATE and NEXTBOT_STEP (= `step`) in their environment.  Fills `out`
 * (initialised with PROBE_RESULT_INIT; release with probe_result_release()).
 * Returns 0 whenever a verdict, PROBE_INFRA included, is in `out`; negative only
 * on a failure of nextbot itself (the cache or log directory unwritable).
 */
int probe_run(struct probe_result *out, struct worker *w, const git_oid *commit, unsigned step,
	      const struct probe_spec *spec);

/*
 * The verdict cache's key (merge/search/verdict_int.h) of a fact about `what`, a text
 * naming the trees it is about, under every command of `spec` with its env and
 * the runner: another command, env or runner is another key.
 */
void probe_fact_key(char out[SHA1_HEXSZ + 1], const char *what, const struct probe_spec *spec);

/*
 * Runs probe_run() for commits[i] in workers[i], i < n, each in its own thread,
 * steps first_step, first_step + 1, ….  Returns the first negative result, after
 * all have finished.
 */
int probe_run_many(struct probe_result *out, struct worker **workers, const git_oid *commits,
		   size_t n, unsigned first_step, const struct probe_spec *spec);

#endif
