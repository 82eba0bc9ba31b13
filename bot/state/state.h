/*
 * The bot's durable state (workdir/state.json): nights, flags, drops.  Loaded whole,
 * changed in memory, saved with an atomic replace; readers never see half a file.
 * The room's door: the run lock (lock.c), the private workdir (workdir.c) and
 * housekeeping (gc.c) are declared below.
 */
#ifndef BOT_STATE_H
#define BOT_STATE_H

#include <stddef.h>
#include <time.h>
#include "util/strvec.h"
#include "util/strbuf.h"
#include "util/oid.h"
#include "bot/config/config.h"
#include "merge/repo/repo.h"

/*
 * The states written to state.json as strings.  Code compares these enums; the
 * strings exist only at the JSON edge, through one _name()/_parse() pair each.
 * Each enum's 0 is "unset" (JSON null); _name() of it is NULL, and _parse() of
 * NULL gives it.  _parse() of an unknown string returns -1 and leaves *out alone.
 */
enum flag_kind {
	FLAG_KIND_UNSET = 0,
	FLAG_BUILD_FAILURE,
	FLAG_TEST_FAILURE,
	FLAG_FLAKY,
};
enum flag_state {
	FLAG_STATE_UNSET = 0,
	FLAG_OPEN,
	FLAG_DROPPED,
	FLAG_RESOLVED,
	FLAG_DISMISSED,
};
/* Why a flag was resolved (SPEC: flagged --json `resolution`). */
enum flag_resolution {
	FLAG_RESOLUTION_UNSET = 0,
	FLAG_LEFT_TREE,      /* its culprit (or a semantic partner) left every merged branch */
	FLAG_FIXED,          /* a fix arrived, or the culprit is still in and no longer fails */
	FLAG_GONE,           /* no longer reproducing (a flaky failure stayed away) */
};
/* What nextbot did about a flag in its tree. */
enum flag_action {
	FLAG_ACTION_UNSET = 0,
	FLAG_ACTION_NONE,
	FLAG_REVERTED,
	FLAG_PREVIOUS_VERSION,
	FLAG_DROPPED_TREE,
};
/* A tree's state in one night. */
enum tree_state {
	TREE_STATE_UNSET = 0,
	TREE_MERGED,
	TREE_REVERTED,
	TREE_PREVIOUS_VERSION,
	TREE_STALE,
	TREE_LEFT_OUT,
	TREE_FETCH_FAILED,
};
/* How a night ended. */
enum run_result {
	RUN_RESULT_UNSET = 0,
	RUN_CLEAN,
	RUN_REGRESSION,
	RUN_BASE_BROKEN,
	RUN_UNFINISHED,
	RUN_FAILED,
};

/* What became of a mail handled by `inbox` or `mail-in`. */
enum mail_outcome {
	MAIL_OUTCOME_UNSET = 0,
	MAIL_ACTED,
	MAIL_REFUSED,
	MAIL_IGNORED,
};
/* A `#nextbot test:` request. */
enum test_state {
	TEST_STATE_UNSET = 0,
	TEST_QUEUED,
	TEST_PASSED,  /* the failing command passed with the branch */
	TEST_FAILED,  /* it failed */
	TEST_ERROR,   /* it could not be tested: fetch, merge, the runner */
};

const char *flag_kind_name(enum flag_kind k);
int flag_kind_parse(enum flag_kind *out, const char *s);
const char *flag_state_name(enum flag_state s);
int flag_state_parse(enum flag_state *out, const char *s);
const char *flag_resolution_name(enum flag_resolution r);
int flag_resolution_parse(enum flag_resolution *out, const char *s);
const char *flag_action_name(enum flag_action a);
int flag_action_parse(enum flag_action *out, const char *s);
const char *tree_state_name(enum tree_state s);
int tree_state_parse(enum tree_state *out, const char *s);
const char *run_result_name(enum run_result r);
int run_result_parse(enum run_result *out, const char *s);
const char *mail_outcome_name(enum mail_outcome o);
int mail_outcome_parse(enum mail_outcome *out, const char *s);
const char *test_state_name(enum test_state t);
int test_state_parse(enum test_state *out, const char *s);

/* All char * fields below are owned by their struct and may be NULL (JSON null). */
struct person {
	char *name;
	char *email;
};

/* A command someone sent by mail about a flag, kept with the flag (`flagged`). */
struct flag_mail {
	char *command;       /* drop | undrop | invalid | reopen | fix | test */
	char *by;            /* the sender's address */
	char *message_id;    /* the command mail's key: its Message-ID, else a digest */
	char *when;          /* RFC 3339 */
	char *text;          /* the reason, the fix's subject, the test's url and branch */
};

/* A matrix cell a flag's culprit breaks (every failing command, without a matrix). */
struct flag_cell {
	char *name;          /* "build[ARCH=arm64]"; without a matrix the command's name */
	struct strvec env;   /* the cell's "KEY=VALUE" (empty without a matrix) */
	char *first_error;   /* its first error line */
	char *first_seen;    /* YYYY-MM-DD it joined the flag */
};

struct flag {
	char *id;            /* 12 hex: SHA-1 of the fingerprint */
	char *fingerprint;
	enum flag_kind kind;
	char *tree, *commit, *message_id, *subject;
	struct nb_patchid patch_id; /* none: a binary or merge change (JSON null) */
	struct person author;
	char *partner_tree, *partner_commit, *partner_subject; /* partner_tree NULL: none */
	/* how the partner is followed */
	struct nb_patchid partner_patch_id;
	char *partner_message_id;
	struct person partner_author;
	char *command;       /* the configured command's name */
	int exit_code;
	int timed_out;
	char *error;         /* the first error line */
	char *excerpt;
	char *first_seen, *last_seen; /* YYYY-MM-DD */
	enum flag_state state;
	char *reason;        /* why dismissed, dropped or resolved */
	enum flag_resolution resolution; /* set with FLAG_RESOLVED (kept if it comes back) */
	int culprit_fails, parent_passes, revert_passes;
	int steps, confirm_runs;
	int failing, total;  /* flaky: failing runs of total */
	struct strvec log;   /* bisect log lines */
	struct flag_cell *cells;  /* the failing cells, in the order they joined */
	size_t cells_nr, cells_alloc;
	char *repro_base;    /* next as it stood before the tree's merge (reproduce from) */
	/*
	 * How to rebuild that night's next-before-the-merge and the probe from the
	 * trees' URLs (bot/night/repro.c writes and reads it), and the report's facts.
	 */
	struct strvec repro;
	char *tree_head;     /* the tree's tip that night (40 hex) */
	char *commit_date;   /* the culprit's author date, "YYYY-MM-DD HH:MM:SS +0000" */
	char *patch_link;    /* the patch on the list archive (its Link: trailer) */
	char *compiler;      /* first line of the compiler's --version */
	enum flag_action action;
	char *notified;      /* date the first notices were queued; NULL: not yet */
	char *reminded;      /* date of the last reminder */
	/*
	 * The submission (Message-ID, else author address) the flag's mails were started
	 * again for, when a search blamed another submission of the same patch after the
	 * first mails (notify/notice.h: notice_breakage.thread); NULL: the first.
	 */
	char *report_thread;
	/* `#nextbot fix: <subject>`: resolved when a commit so titled reaches the tree */
	char *fix_subject;   /* NULL: no fix announced */
	char *fix_by, *fix_date; /* who announced it, and when (YYYY-MM-DD) */
	char *fix_commit;    /* the tree's commit with that subject, once it arrived */
	struct flag_mail *mail; /* mail commands about this flag, oldest first */
	size_t mail_nr, mail_alloc;
};

struct drop {
	char *tree, *commit, *message_id, *subject;
	struct nb_patchid patch_id; /* none: a binary or merge change (JSON null) */
	struct person author;
	char *flag_id;       /* the flag this drop answered, if any */
	char *reason;
	char *when;          /* RFC 3339 */
	int active;          /* 0 after undrop */
	char *by;            /* dropped by mail: the sender's address; NULL from the shell */
	char *mail;          /* … and the command mail's key (Message-ID) */
};

struct run_tree {
	char *name, *branch, *sha1;
	enum tree_state state;
	char *reason;
};

struct run_record {
	char *date, *tag, *next;
	enum run_result result;
	char *started, *finished;
	struct run_tree *trees;
	size_t trees_nr, trees_alloc;
	struct strvec flags; /* flag ids seen that night */
	struct strvec notes; /* what the summary should say besides trees and flags */
	struct strvec conflicts; /* "tree/other: path path …" of each conflict that night */
	struct strvec notices;   /* ids of the notices (outbox) the night queued */
};

/* A mail nextbot queued: what a reply to its Message-ID is about. */
struct sent_mail {
	char *message_id;    /* "<nextbot.…@domain>" */
	char *kind;          /* the notice's kind: report, maintainer, dropped, …, reply */
	char *flag_id;       /* the flag it is about; NULL for a conflict */
	char *conflict;      /* a conflict mail: "<date> <tree> <other tree>"; else NULL */
};

/* A mail handled by `inbox` or `mail-in`, by its key (so it acts only once). */
struct inbox_record {
	char *key;           /* its Message-ID, else "sha256:<hex>" of its bytes */
	char *from;          /* the From: address; NULL when it had none */
	char *when;          /* RFC 3339, when it was handled */
	enum mail_outcome outcome;
	char *summary;       /* one line: what was done, or why not */
	char *content;       /* inbox_mail_content_key() of an acted mail; NULL: none */
};

/*
 * A review nextbot saw by mail (review_gate.verify: mail): the reviewer's own mail,
 * vouched for as commands are, carrying the trailer in its text, answering a thread.
 */
struct review_mail {
	char *by;            /* the reviewer's address: the mail's From: */
	char *kind;          /* the trailer's key as written: "Reviewed-by", "Acked-by", … */
	char *mail;          /* the mail's key */
	char *when;          /* RFC 3339, when it was handled */
	struct strvec thread; /* the Message-IDs it answered (In-Reply-To, References),
				 without angle brackets */
};

/*
 * `#nextbot test: <url> <branch>`: the branch merged in place of the flag's tree
 * into next as it stood before that tree's merge, the failing command run on it.
 */
struct test_request {
	char *key;           /* the command mail's key: the request's identity */
	char *flag_id, *by;  /* the flag, the sender's address */
	char *url, *branch;
	char *when;          /* RFC 3339, queued */
	enum test_state state;
	char *commit;        /* the branch's tip as fetched; NULL before */
	char *result;        /* one line: the first error, or why it could not be tested */
	/* the answer goes in the command mail's thread, to its sender and recipients */
	char *reply_name, *reply_subject, *reply_message_id;
	struct strvec reply_cc, reply_references;
};

struct state {
	struct run_record *runs;   /* oldest first */
	size_t runs_nr, runs_alloc;
	struct flag *flags;
	size_t flags_nr, flags_alloc;
	struct drop *drops;
	size_t drops_nr, drops_alloc;
	struct sent_mail *sent;    /* oldest first */
	size_t sent_nr, sent_alloc;
	struct inbox_record *inbox; /* oldest first; the last STATE_INBOX_KEPT */
	size_t inbox_nr, inbox_alloc;
	struct test_request *tests; /* oldest first; the last STATE_TESTS_KEPT */
	size_t tests_nr, tests_alloc;
	struct review_mail *reviews; /* oldest first; the last STATE_REVIEWS_KEPT */
	size_t reviews_nr, reviews_alloc;
};
#define STATE_REVIEWS_KEPT 5000
#define STATE_TESTS_KEPT 1000
#define STATE_INBOX_KEPT 5000
#define STATE_INIT { 0 }

/* Loads workdir/state.json; a missing file is an empty state. */
int state_load(struct state *out, const char *workdir);
/* Atomically replaces workdir/state.json (and fsyncs); fails without retrying. */
int state_save(const struct state *s, const char *workdir);
void state_release(struct state *s);

/* Lookups return pointers into `s`, valid until the next state_* call that adds. */
struct flag *state_flag_find(struct state *s, const char *id_or_prefix, int *ambiguous);
struct flag *state_flag_by_fingerprint(struct state *s, const char *fingerprint);
struct flag *state_flag_add(struct state *s);
struct drop *state_drop_add(struct state *s);
/*
 * The cell `name` of flag f, added (with `env` and `date` as its first_seen) if
 * it is not there yet; `first_error`, when not NULL or empty, replaces the cell's.
 * Returns 1 when added.
 */
int state_flag_cell_set(struct flag *f, const char *name, const struct strvec *env,
			const char *first_error, const char *date);
/* The run of `date`, replaced if it exists (a second run of a night replaces it). */
struct run_record *state_run_begin(struct state *s, const char *date);
struct run_tree *state_run_tree_add(struct run_record *run);

/* The mail nextbot sent with that Message-ID ("<x@y>"), or NULL. */
const struct sent_mail *state_sent_find(const struct state *s, const char *message_id);
/* Records a mail nextbot queued (once per Message-ID); flag_id or conflict may be NULL. */
void state_sent_add(struct state *s, const char *message_id, const char *kind,
		    const char *flag_id, const char *conflict);
/* The record of the handled mail with that key, or NULL. */
const struct inbox_record *state_inbox_find(const struct state *s, const char *key);
/* Records a handled mail (dropping the oldest past STATE_INBOX_KEPT); strings copied. */
struct inbox_record *state_inbox_add(struct state *s, const char *key, const char *from,
				     const char *when, enum mail_outcome outcome,
				     const char *summary);
/* The latest record of an acted mail with that content key, or NULL. */
const struct inbox_record *state_inbox_acted(const struct state *s, const char *content);
/* Records a review seen by mail (the oldest dropped past STATE_REVIEWS_KEPT); copied. */
void state_review_add(struct state *s, const char *by, const char *kind, const char *mail,
		      const char *when, const struct strvec *thread);
/*
 * Did `by`'s own mail carry a `kind` trailer (ASCII case ignored) in the thread of
 * `message_id` (with or without angle brackets)?  `same` compares two addresses
 * (NULL: ASCII case ignored).
 */
int state_review_seen(const struct state *s, const char *by, const char *kind,
		      const char *message_id, int (*same)(const char *, const char *));
/* A new test request (zeroed but for its lists; the oldest dropped past STATE_TESTS_KEPT). */
struct test_request *state_test_add(struct state *s);
/* Appends a mail command to a flag's history; strings copied, any may be NULL. */
void state_flag_mail_add(struct flag *f, const char *command, const char *by,
			 const char *message_id, const char *when, const char *text);

/* The --json listings of `flagged` ({"flags":[…]}) and `status` ({"runs":[…]}). */
void state_flags_json(struct strbuf *out, const struct state *s);
void state_runs_json(struct strbuf *out, const struct state *s, size_t last_n);
/* One run as runs/<date>/run.json holds it. */
void state_run_json(struct strbuf *out, const struct run_record *run);

void flag_release(struct flag *f);
void drop_release(struct drop *d);
void run_record_release(struct run_record *r);

/* The run lock: one writer of a work directory at a time. */
struct run_lock {
	int fd;
};
#define RUN_LOCK_INIT { -1 }

/*
 * Takes workdir/lock with a non-blocking flock and writes our pid into it.
 * Returns NB_ELOCKED (error names the holder's pid) when another process holds
 * it.  A lock left by a dead process does not block: the kernel dropped its flock.
 */
int run_lock_take(struct run_lock *lock, const char *workdir);
void run_lock_release(struct run_lock *lock);

/*
 * Removes the temp files an atomic replace leaves when it is killed
 * ("<name>.tmp.<tid>.<n>" in workdir, its outbox, verdicts/<xx> and runs/<date>).
 * Call with the lock held: no writer of ours is running then.
 */
void run_lock_clean_temp(const char *workdir);

/*
 * The workdir is private: state, outbox, runs, the verdict cache and the config's
 * copies are the bot's alone; the runner user reaches its worker trees and nothing
 * else of it.
 */
/*
 * Creates `workdir` if missing and tightens what an older nextbot (or a careless
 * umask) left open: the workdir itself at most 0711 (traversable, not listable),
 * folders 0700 and files 0600 below it, `workers/` and each worker folder 0711 (so
 * the runner user can reach the tree inside that is its own; nothing in a tree is
 * touched).  As root, the work repository `repo.git` is made readable by `user`'s
 * group (folders 2750, files 0640 or 0440, created first when missing): the
 * worker checkouts are made, and git in the sandbox reads it, as that user.
 * Folders already 0700 are taken as done: an unchanged workdir costs a few stats.
 * Returns 0, or NB_ERROR (recorded) when the workdir cannot be made.
 */
int workdir_make_private(const char *workdir, const char *user);

/*
 * Whether `user` may reach `dir` (search permission on every component of the
 * path that exists, checked by a child that has become that user).  Only meaningful as root:
 * otherwise commands run as ourselves and this returns 0.  Returns 0, or NB_ERROR
 * with a message naming the component that stops it ("'/root' (0700 root:root)").
 */
int workdir_check_reach(const char *dir, const char *user);

/*
 * Whether `user` reaches the object stores the work repository borrows from (its
 * objects/info/alternates): checkouts and git in the box read them as that user.
 * Returns 0, or NB_ERROR naming the store and what stops it.
 */
int workdir_check_alternates(const char *workdir, const char *user);

/*
 * Whether the sandbox starts here: `true` run in a box hiding `workdir`, as `user`
 * (as root).  bwrap needs unprivileged user namespaces (a container may forbid
 * them).  Returns 0, or NB_ERROR with bwrap's own reason.
 */
int workdir_check_sandbox(const char *bwrap, const char *user, const char *workdir);

/*
 * Housekeeping (`nextbot gc`; the daemon runs it weekly): keeps the runs
 * of the keep_days most recent nights by run date, drops older runs (their
 * runs/<date>/ folders, state.json records and next-YYYYMMDD tags), idle worker
 * directories and sent notices, and repacks the work repository.  Flags and drops
 * are never touched.
 */
struct bot_gc_report {
	struct strvec runs_removed;   /* dates, oldest first (records or folders) */
	size_t nights_kept;
	char oldest_kept[11], newest_kept[11];   /* "" when there is no run */
	size_t tags_removed;
	struct strvec workers_removed; /* directory names */
	size_t notices_removed;
	size_t journeys_removed;      /* ended patch journeys forgotten (bot/journey/) */
	int repacked;                 /* 0: no repository yet */
	struct gc_result repack;
};
#define BOT_GC_REPORT_INIT { .runs_removed = STRVEC_INIT, .workers_removed = STRVEC_INIT }
void bot_gc_report_release(struct bot_gc_report *r);

/*
 * Does it all under workdir; the caller holds the run lock, has loaded `st` and
 * saves it afterwards (its older run records are removed).  Worker directories
 * unused (their index and checkout untouched) for keep_days days of `now` are
 * removed; every sent notice is removed; `journeys` (journey_gc() of bot/journey/,
 * which stands above state/; NULL: none) forgets the ended patch journeys.  Returns 0,
 * or a negative error after doing what it could (the report says what was done).
 */
typedef int bot_gc_journeys_fn(const struct config *cfg, const char *today, size_t *pruned);
int bot_gc(struct bot_gc_report *out, const struct config *cfg, struct state *st, time_t now,
	   bot_gc_journeys_fn *journeys);

/* Prints the report for people: what was kept and what was removed. */
void bot_gc_print(const struct bot_gc_report *r, const char *repo_path);

#endif
