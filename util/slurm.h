/*
 * The Slurm runner: a configured command run as a Slurm job step (`runner: {kind:
 * slurm}`), with the same result as a local run so that callers classify it alike.
 */
#ifndef UTIL_SLURM_H
#define UTIL_SLURM_H

#include <signal.h>

#include "util/runcmd.h"

struct slurm_opts {
	const char *partition;         /* NULL: the cluster's default partition */
	const char *const *srun_args;  /* extra srun arguments, NULL-terminated; may be NULL */
	/*
	 * The job's name; NULL: "<NEXTBOT_TREE>:<first 12 of NEXTBOT_COMMIT>" taken
	 * from the command's env ("nextbot:<commit>" when NEXTBOT_TREE is empty, as for
	 * checks of next), or "nextbot".  A "/<pid>.<n>" suffix is always added
	 * so that the job can be cancelled by name without touching any other.
	 */
	const char *job_name;
	int max_jobs;                  /* jobs this process has on the cluster at once;
					  0: no limit of ours */
	double queue_timeout;          /* seconds a job may wait for resources before it
					  counts as the runner's failure; 0: the command's
					  timeout (then none if that is 0 too) */
};
#define SLURM_OPTS_INIT { NULL, NULL, NULL, 0, 0 }

/*
 * Runs the command of `opts` (argv or shell, cwd, env, timeout, log_path,
 * output_cap, user, inherit_env, box as for runcmd_run()) as one Slurm job step:
 *
 *   srun --quiet --chdir=<cwd> --job-name=<name> --ntasks=1 [--time=<minutes>]
 *        [--partition=<p>] [srun_args…] --
 *        /bin/sh -c <wrapper> nextbot-step <prefix> <command argv>
 *
 * srun itself runs through runcmd_run(), so its output (the command's, and srun's
 * own messages) goes into the same capped output and log.  The environment is
 * runcmd's allow-list plus opts->env, plus SLURM_CONF when nextbot has it; srun
 * passes it on to the step (--export=ALL).  --time is the timeout in minutes,
 * rounded up, plus one: Slurm's own limit is only a backstop to ours.
 *
 * How the runner's own failures are told apart: `srun` exits 1 both when the
 * command exits 1 and when srun fails (allocation refused, node down).  This Slurm
 * has no step accounting without slurmdbd (accounting_storage/filetxt is gone), so
 * the step reports its own state: the wrapper, a fixed script that gets the command
 * as arguments (never pasted into it), creates <prefix>.start when the step begins
 * and writes the command's exit status to <prefix>.exit when it ends ("127 exec"
 * when an argv program is not found).  <prefix> is
 * "<opts.runner_dir, else cwd>/.nextbot-slurm-<pid>-<n>", on the shared storage of
 * the worker directory; the files are removed afterwards.  They are read without
 * following a link or waiting on a FIFO, regular files only, a few bytes.
 * With opts.box the command runs in the same sandbox as a local one, made on the
 * node by the wrapper (bwrap must be installed there): its status goes to
 * <prefix>.box, and a box that did not come up is box_failed, not a verdict.
 *   - our timeout after the step began: the job is cancelled (scancel --name) and
 *     the result is timed_out, exit_code 128+SIGKILL, signal SIGKILL, as locally.
 *   - <prefix>.exit present: exit_code is the command's status, whatever srun says.
 *   - otherwise (srun refused, failed, the job got no resources within
 *     queue_timeout, which cancels it, opts->cancel was set (its result is no
 *     longer wanted: cancelled within a poll interval, or never submitted), or
 *     nextbot is stopping, see slurm_stop_on(),
 *     even if the dying step wrote a status): runner_failed = 1, and exec_failed = 1 too,
 *     so that a caller that only knows exec_failed reports infrastructure and caches
 *     nothing; exit_code is srun's.
 * A command that dies of a signal N is exit_code 128+N and signal N, as locally:
 * the wrapper shell tells it from an exit 128+N by the notice ("Killed") it writes
 * to its own stderr (<prefix>.sig; not for SIGINT and SIGPIPE, which stay exits).
 * limit_hit as locally: signal SIGXFSZ or SIGKILL (not our timeout's), or exit
 * 128+SIGXFSZ.
 * The output is the command's as a local run gives it: srun runs --quiet (no "job N
 * queued" lines; its errors still show); the wrapper shell's own stderr is
 * <prefix>.sig (no "Killed" of its own); once it has written <prefix>.exit the step
 * exits 0 (Slurm records the job COMPLETED), so that srun adds no "task 0: Exited
 * with exit code N" line; with merge_stderr the command's stderr is joined to its
 * stdout inside the step, so that lines keep their order (srun forwards 2 streams).
 *
 * Cancellation: at our timeout or queue timeout the job is cancelled by its unique
 * name and slurm_run() waits (up to 60 s) until squeue no longer lists it; it is
 * cancelled too whenever srun did not end cleanly.  When nextbot itself dies,
 * runcmd's supervisor SIGKILLs srun, and Slurm (InactiveLimit=0, its default) keeps
 * the job running until its --time: so nextbot's SIGTERM path must call
 * slurm_cancel_all() before it exits (block SIGTERM early in main, sigwait() for it
 * in a thread, slurm_cancel_all(), then exit; tests/test_slurm.c shows it).  Only
 * a SIGKILL of nextbot leaves a job behind, for at most its --time.
 *
 * Returns 0 when a result is in `out` (runner failures included), negative only when
 * srun could not be run at all (as runcmd_run()).  Thread-safe; with max_jobs > 0,
 * callers beyond that many wait for a slot.
 */
int slurm_run(struct runcmd_result *out, const struct runcmd_opts *opts,
	      const struct slurm_opts *s);

/*
 * Cancels (scancel) every job that slurm_run() calls of this process have running
 * or queued; their slurm_run() calls then return (as runner failures).  Call it
 * from a thread, not from a signal handler (it allocates and runs scancel).
 */
void slurm_cancel_all(void);

/*
 * From now on, once *flag is nonzero (the bot's SIGTERM flag, set by its handler),
 * every job of this process is cancelled within a poll interval (0.2 s) and its
 * slurm_run() returns a runner failure; a slurm_run() called after that submits
 * nothing and returns a runner failure at once.  So a stopping night ends within
 * seconds, with no job left, instead of after the running commands.  NULL: off.
 */
void slurm_stop_on(volatile sig_atomic_t *flag);

/*
 * A caller that can run either way, with `s` NULL for the local runner:
 *	err = slurm_or_local_run(&r, &opts, spec->slurm);
 */
int slurm_or_local_run(struct runcmd_result *out, const struct runcmd_opts *opts,
		       const struct slurm_opts *s);

#endif
