/*
 * One nightly run: fetch, merge in order, build and
 * test, find and confirm culprits, act on them, tag, record, notify.  Split over
 * night.c (the flow), night_check.c (building and bisecting), night_flags.c
 * (flags and their notices) and night_summary.c (the daily summary).  The room's door:
 * notices.c (who is told what) and repro.c (the Reproduce: steps) are declared here too.
 */
#ifndef BOT_NIGHT_H
#define BOT_NIGHT_H

#include <time.h>
#include "util/oid.h"
#include "bot/config/config.h"
#include "bot/state/state.h"
#include "merge/search/search.h"
#include "merge/transport/transport.h"
#include "merge/integrate/integrate.h"
#include "util/slurm.h"
#include "bot/people/people.h"
#include "notify/notice.h"
#include "util/strvec.h"

/* From the bot's flags and config to notify/'s notices: who is told what. */
struct repo;

/* Settings for notify/ from the config; secrets read from the environment now. */
struct notices {
	struct notice_settings settings;
	struct notice_webhook *hooks;
	char *outbox_dir;
	const struct config *cfg; /* borrowed */
	/* When set (borrowed), the Message-ID of every mail about a flag or a conflict
	   is recorded in it (state_sent_add), so replies can be told what they answer. */
	struct state *st;
	struct strvec sent;       /* Message-IDs the last queue call reported */
	/* the work repository, when the caller has it open: a culprit's tree is checked
	   for a rebase that took it away (borrowed; NULL: not checked) */
	struct repo *repo;
	/* scratch for one notice: its Reproduce: lines, the rebased culprit's commit */
	struct strvec repro;
	char *now_commit;
	/* MAINTAINERS at the base's tip, read at the first mail that needs it (NULL:
	   none, or no repository); the last routing and its notice form */
	struct people *people;
	int people_read;
	struct people_route route;
	struct notice_extra *extras;
};

void notices_init(struct notices *n, const struct config *cfg);
void notices_release(struct notices *n);
void notices_scratch_clear(struct notices *n);

/*
 * Queues the notices of a flag: the first report and maintainer mail
 * (reminder 0), the N-th reminder, `resolved` or `dropped`.  `date` is the night.
 * Reminders answer the first mail of their audience (f->notified says its night).
 * notices_flag_back: a resolved flag found again, said at once in the same threads.
 * Returns the number of new notices or a negative error.
 */
int notices_flag_report(struct notices *n, const struct flag *f, const char *date, int reminder);
int notices_flag_back(struct notices *n, const struct flag *f, const char *date);
int notices_flag_resolved(struct notices *n, const struct flag *f, const char *date,
			  const char *why);
int notices_flag_dropped(struct notices *n, const struct flag *f, const char *date,
			 const char *reason);

/* Queues tonight's conflict notice and records its Message-ID for `tree`/`other`. */
int notices_conflict(struct notices *n, const struct notice_conflict *c);
/* Queues a reply to a mail and records its Message-ID (kind "reply", about flag_id). */
int notices_reply(struct notices *n, const struct notice_reply *r, const char *flag_id);

/*
 * Outbox files that are not notices any more (truncated, garbled) are moved to
 * <outbox>/damaged/ (kept, listed, never sent).  One that the state says was a
 * flag's report or maintainer mail (by its Message-ID) is queued again, that one
 * notice only, from the flag; with `no_notify` nothing is queued.  Appends one
 * line per file to `notes` (the night's, which the daily summary says).  Returns
 * how many were damaged, or a negative error.
 */
int notices_outbox_mend(struct notices *n, struct state *st, int no_notify,
			struct strvec *notes);

/* The configured command line of command `name` (build or test), or NULL. */
const struct config_command *notices_command(const struct config *cfg, const char *name);
/* The configured tree `name`, or NULL. */
const struct config_tree *notices_tree(const struct config *cfg, const char *name);

/*
 * Reproduce steps that work away from the bot's host (bot/ only).  At flag time the
 * night's ingredients of the failing probe are recorded in the flag (the base and
 * every earlier tree at the commits merged, reverts, the culprit); a notice renders
 * them as plain git and the configured commands, for an empty folder where only the
 * trees' URLs (or publish.url and the night's tag) are reachable.  night_repro.c
 * records (the night's side); repro.c renders, from the flag alone.
 */
struct night;
struct culprit_result;

/*
 * Fills f->repro from the night's steps before the culprit's tree and the culprit
 * (r->step, r->commit).  Never fails: what cannot be known is left out.
 */
void repro_record(struct night *n, struct flag *f, const struct culprit_result *r);

/* After a successful publish: the flags seen tonight can start from the tag. */
void repro_mark_published(struct night *n);

/*
 * Appends the Reproduce: block's lines (without indentation) for flag `f`: git to
 * rebuild next as it stood before the tree's merge, the culprit merged in, then the
 * configured commands with their environment.  Nothing when f has no record.
 */
void repro_render(struct strvec *out, const struct config *cfg, const struct flag *f);

/* The URL as it may be shown to anyone: "user:password@" taken out. */
char *repro_public_url(const char *url);

struct cc_service;
struct journey_night;

struct night_opts {
	const char *date;  /* YYYY-MM-DD */
	int no_notify;     /* record flags, queue no notice */
};

/* Per configured tree (index 0 is the base), what happened tonight. */
struct night_tree {
	const struct config_tree *cfg;
	struct fetch_result fetch;
	enum tree_state state;   /* TREE_STATE_UNSET before its turn */
	char *reason;
	struct nb_oid merged;         /* commit merged tonight, "" if none */
	size_t step;             /* integ step index of its merge; (size_t)-1 if none */
	int reverts;             /* culprits reverted in it tonight */
	int checked_clean;       /* next built clean right after its merge */
	/* what of its merge exists only on this host (for reproduce steps) */
	struct strvec left_out;  /* dropped patches replayed away (40 hex) */
	int fixes_applied;       /* carried fixes applied after its merge */
	int rerere;              /* its conflict was resolved from recorded resolutions */
	/* a merge made ahead of its turn (speculative builds) keeps what it has to
	   say until its turn comes: its conflict (has_pending) and its fixes' notes */
	struct integ_outcome pending;
	int has_pending;
	struct strvec pending_notes;
};

/*
 * A cell of the config's matrix (config.h), ready to run: the entries that run in
 * it, each under its cell name ("build[ARCH=arm64]") with the entry's env and then
 * the cell's.  Without a matrix there is one cell: the commands as configured.
 */
struct night_cell {
	const struct config_cell *cfg;
	char *workers_dir;          /* workers/ (no matrix) or workers/<cell name> */
	struct culprit_command *builds, *tests;
	size_t builds_nr, tests_nr;
	const struct config_command **build_src, **test_src; /* the entry of each */
	struct strvec names;        /* owns the names, builds then tests */
	struct strvec *envs;        /* owns each command's env, builds then tests */
};

/* One cell of a failing check; strings owned. */
struct night_cell_failure {
	size_t cell;                       /* index into night.cells */
	const struct config_command *cmd;  /* the entry that failed */
	const char *name;                  /* its name in the cell; borrowed from the cell */
	int is_test;
	int bad;                           /* a verdict (else: infra or skip) */
	char *first_error;
	char *infra;                       /* !bad: why it could not be judged */
};

/* What a failing check says; strings owned. */
struct night_failure {
	const struct config_command *cmd; /* the command that failed (in the first failing cell) */
	const char *name;        /* its name in that cell; borrowed from the night's cells */
	size_t cell;             /* that cell: a bad one if any, else the first failing */
	int is_test;
	int exit_code, timed_out;
	char *excerpt, *first_error;
	char *infra;             /* set: could not be judged, and why */
	struct night_cell_failure *cells; /* every failing cell, in cell order */
	size_t cells_nr;
	char *limit;             /* set: a limit ended the command ("killed: memory
				    limit 8 GiB", "timed out after 30m") */
};

struct night {
	const struct config *cfg;
	const struct night_opts *opts;
	struct state *st;
	struct run_record *run;
	struct repo *repo;
	struct repo *walker;        /* walks of fetched history only (merge/repo/repo.h); lazy */
	struct integ_night *integ;
	struct notices notices;
	struct night_tree *trees;   /* cfg->trees_nr + 1, base first */
	size_t trees_nr;
	char tag[16];
	char *runs_dir, *repo_path, *cache_dir, *workers_dir;
	time_t deadline;
	int unfinished;             /* the deadline stopped the work */
	int broken;                 /* next still fails at the end */
	int rounds;                 /* failures handled tonight (bounded) */
	int build_rounds;           /* checks of next (a round of speculative ones counts once) */
	struct {                    /* seconds spent in each phase (bot/night/promfile_int.h) */
		double fetch, merge, check, bisect, total;
	} phase;
	/* open flags' breakages whose culprit is in tonight's trees, for merge/check:
	   "<cell command name>\t<normalised first error>"; filled at the first check */
	struct strvec known_errors;
	int known_errors_set;
	int checks_off;             /* the base could not be judged: build nothing more */
	struct slurm_opts slurm;    /* runner kind slurm: how to submit */
	struct night_cell *cells;   /* cfg->cells_nr, in the config's order */
	size_t cells_nr;
	struct runcmd_box box;      /* runner.sandbox bwrap: what commands run in */
	struct runcmd_limits limits; /* runner.limits */
	const char *box_hide[3];    /* … hiding the workdir and the config file */
	char *config_abs;           /* the config file's absolute path */
	struct strvec new_flags;    /* flag ids first found tonight */
	struct strvec seen_flags;   /* flag ids blamed (or re-found) tonight */
	struct strvec resolved;     /* flag ids resolved tonight */
	struct strvec gone_conflicts; /* "tree/other" conflicts of last night gone tonight */
	struct strvec compilers;    /* command name, its compiler's --version line ("": none) */
	struct cc_service *cc;      /* runner.cache: the compile service, while it runs */
	struct journey_night *journey; /* bot/journey/: tonight's patches' journeys */
};

/*
 * night_cc.c: the compiler cache (runner.cache) for the night's commands: its
 * service started (n->cc; a failure is logged and the night builds without it)
 * and stopped, its counts logged.  The box of opts() then carries its shims.
 */
void night_cc_start(struct night *n);
void night_cc_stop(struct night *n);

/* The whole night; returns a cli exit code (0 done, 1 the bot failed). */
int night_run(const struct config *cfg, const struct night_opts *opts);

/* What a check of next runs: night_check_head(), night_check_heads(). */
enum night_check_what {
	NIGHT_CHECK_BUILD = 1,
	NIGHT_CHECK_TEST = 2,
	/* a verdict of record (the base, next's final verdict): in a clean tree, the
	   commit's files and nothing else (merge/search/search.h); without it the kept tree
	   is built, as linux-next does after each merge */
	NIGHT_CHECK_CLEAN = 4,
	NIGHT_CHECK_ALL = 7,    /* every command, clean: a verdict of record */
};

/*
 * night_check.c: runs the build (and test) commands on next's head, as `what`
 * (enum night_check_what bits) says.  Returns 0 when clean, 1 with `out` filled
 * when not, negative when nextbot itself fails.
 */
int night_check_head(struct night *n, unsigned what, struct night_failure *out);
/*
 * 1 when an open flag (not flaky) blames a commit that tree ti brought tonight:
 * next is then checked right after that tree's merge (*with_test set when the
 * flag's failure is a test's), where the known culprit is acted on again.
 */
int night_carries(struct night *n, size_t ti, int *with_test);
/*
 * `#nextbot test:`: runs what a failure of the configured command `command` needs
 * (every build up to it, and the test itself when it is a test) on `commit`, exactly
 * as a night's check would (worker 0 of the cell, the runner, its limits and sandbox;
 * logs in `runs_dir`) but without the verdict cache.  `command` is a matrix cell's
 * ("build[ARCH=arm64]": that cell's env and builds) or an entry's name (its first
 * cell).  0 with the verdict in *out (release it with check_result_release());
 * NB_ENOTFOUND for an unknown command; negative when nextbot itself fails.  The
 * caller holds the lock.
 */
int night_check_trial(struct check_result *out, const struct config *cfg, const char *date,
		      const char *runs_dir, const struct nb_oid *commit, const char *command,
		      const char *tree);
/*
 * Speculative builds: checks `nr` heads of next at once (as `what` says) (next after each of the
 * next trees, in merge order), each in every cell (head j in worker w<j> of the
 * cell), up to runner.max_jobs jobs at once; once a job fails, the jobs of later
 * heads are cancelled (their results can no longer matter).  state[j]: 0 clean,
 * 1 failing (out[j] filled, release it), -1 unknown (cancelled).  No disk or
 * checks_off test: the caller's.  Returns 0, negative when nextbot itself fails.
 */
int night_check_heads(struct night *n, const struct nb_oid *heads, size_t nr, unsigned what,
		      struct night_failure *out, int *state);
/* A tree gets at most this many culprits reverted a night before its previous
 * version is used instead: past that, bisecting on costs more than the fallback. */
#define NIGHT_MAX_REVERTS 4

/* What the breakage handling decided; night.c alone carries it out. */
enum night_action {
	NIGHT_ACT_NONE,      /* nothing more can be done tonight */
	NIGHT_ACT_CULPRIT,   /* revert `commit` right after its tree's merge; when that
				cannot be (on_breakage, the cap, a conflict), fall back */
	NIGHT_ACT_FALLBACK,  /* the tree falls back: no single culprit (`why`) */
};

struct night_decision {
	enum night_action action;
	size_t tree;         /* index into night.trees of the tree acted on */
	struct flag *flag;   /* CULPRIT: its flag (flag->action is set when acted) */
	struct nb_oid commit; /* CULPRIT: the culprit's commit tonight */
	char *why;           /* FALLBACK: owned */
};
#define NIGHT_DECISION_INIT { .action = NIGHT_ACT_NONE, .commit = NB_OID_INIT }
void night_decision_release(struct night_decision *d);

/*
 * Tonight's next fails as `fail` says: find the culprit over the night's steps,
 * confirm it, flag it and decide what is done about it (*out), which night.c
 * carries out.  Returns 0 with a decision (out->action is not NONE), 1 when
 * nothing more can be done (flaky, infrastructure, dismissed, deadline), negative
 * on a failure of nextbot itself.  Changes nothing of next.
 */
int night_handle_breakage(struct night *n, struct night_failure *fail,
			  struct night_decision *out);
void night_failure_release(struct night_failure *f);
/* night_check.c: the cells of the config, ready to run; released by night_cells_release(). */
void night_cells_init(struct night *n);
void night_cells_release(struct night *n);
int night_past_deadline(struct night *n);
/*
 * night_check.c: 1 with out->infra filled when the work directory's disk is full,
 * even after night_disk_reclaim().
 */
int night_disk_full(struct night *n, struct night_failure *out);
/*
 * night_disk.c.  When the workdir's disk is short (below runner.min_free, or fewer
 * than 1000 inodes), the compiler cache's store gives way first (its least recently
 * used entries removed until there is room, or none is left); if that is not
 * enough, every worker is removed (each is checked out anew at its next
 * use) and a note names the one that held the most: its commit and the command
 * that last ran on it tonight.  The workers' own disk events since the last call
 * become notes too.  Returns 1 when the disk is still short, with `*why`
 * (malloc'd; NULL `why`: not wanted), else 0.
 */
int night_disk_reclaim(struct night *n, char **why);
/*
 * At the night's start: merge/'s workers learn runner.min_free (a worker whose
 * commands leave the disk short is removed at once, merge/worker/worker.h, once the
 * compiler cache's store has given way), and the disk
 * is reclaimed if an earlier night left it short.
 */
void night_disk_begin(struct night *n);
/*
 * At the night's end: the disk reclaimed if it is short (it never outlives the
 * night), and the night's disk and infrastructure notes mailed to notify.operator.
 */
void night_disk_finish(struct night *n);
/*
 * What stops a night early, for notes: night_stop_cause() "the deadline" or "a stop
 * request (SIGTERM)"; night_stop_event() "the deadline passed" or "a stop request
 * (SIGTERM) came".
 */
const char *night_stop_cause(void);
const char *night_stop_event(void);

/* night_flags.c */
void night_flags_after(struct night *n);
int night_flags_notify(struct night *n);

/* night_summary.c */
int night_summary_queue(struct night *n);

#endif
