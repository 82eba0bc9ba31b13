/*
 * The people room's door: who should hear about a change (MAINTAINERS routing, as
 * scripts/get_maintainer.pl finds them), whether the MAINTAINERS file tells the truth
 * (the audit against the history), and what waits for review (the review queue).
 * Reports, conflict mails and journey notices get their recipients here.
 */
#ifndef BOT_PEOPLE_PEOPLE_H
#define BOT_PEOPLE_PEOPLE_H

#include <stddef.h>

#include "util/oid.h"
#include "util/strbuf.h"
#include "util/strvec.h"

struct mailmap;
struct repo;
struct config;

/* What a MAINTAINERS entry makes someone: M: maintainer, R: reviewer, L: list. */
enum people_role { PEOPLE_ROLE_M = 0, PEOPLE_ROLE_R, PEOPLE_ROLE_L, PEOPLE_ROLES };
/* "M", "R", "L"; parse: 0 or -1. */
const char *people_role_name(enum people_role role);
int people_role_parse(enum people_role *out, const char *s);

/* A section's S: line. */
enum people_status {
	PEOPLE_STATUS_NONE = 0, /* no S: */
	PEOPLE_STATUS_SUPPORTED,
	PEOPLE_STATUS_MAINTAINED,
	PEOPLE_STATUS_ODD_FIXES,
	PEOPLE_STATUS_ORPHAN,
	PEOPLE_STATUS_OBSOLETE,
	PEOPLE_STATUS_OTHER,	/* anything else ("Buried alive in reporters") */
};
/* "supported", "maintained", "odd-fixes", "orphan", "obsolete", "other", "none". */
const char *people_status_name(enum people_status st);

/* A tree's MAINTAINERS and .mailmap, read at one commit. */
struct people;

/* maintainers.regex_limits: what one K: pattern may cost; past them it is refused. */
struct people_regex_limits {
	long match; /* steps (and backtracking depth) of one match: PCRE2's match limit */
	long heap;  /* bytes of heap one match may use */
	long size;  /* bytes of one compiled pattern */
};
#define PEOPLE_REGEX_MATCH_DEFAULT 100000L
#define PEOPLE_REGEX_HEAP_DEFAULT (1L << 20)
#define PEOPLE_REGEX_SIZE_DEFAULT (16L << 10)

struct people_source {
	const char *path;	 /* the file's name for messages ("MAINTAINERS") */
	const char *text;	 /* its contents; len bytes */
	size_t len;
	const char *mailmap;	 /* the tree's .mailmap or NULL; mailmap_len bytes */
	size_t mailmap_len;
	const struct strvec *files; /* every file of the tree (F: "dir" means "dir/") */
	const struct people_regex_limits *limits; /* of K:; NULL: the defaults */
};

/*
 * Reads a MAINTAINERS file.  Never fails on its contents: what is wrong (an N: with a
 * backreference, "F: ../x", a malformed M: address, a section named twice, a line
 * of 5000 bytes, non-UTF-8 names) is left out and listed by people_problems(); the
 * rest counts.  Free with people_free().
 */
struct people *people_new(const struct people_source *src);
void people_free(struct people *p);
/* "MAINTAINERS:12: what is wrong", in file order; borrowed from p. */
const struct strvec *people_problems(const struct people *p);
/* The .mailmap (NULL when the tree has none); borrowed from p. */
const struct mailmap *people_mailmap(const struct people *p);

/*
 * Reads `maintainers` (the config's maintainers.file) and .mailmap from the commit
 * `rev` names in `repo` (a ref or hex id).  *out NULL and 0 when the tree has no
 * such file (routing is off); NB_ERROR recorded when the repository fails.
 */
int people_load(struct people **out, struct repo *repo, const char *rev, const char *maintainers);
/* maintainers.regex_limits. */
void people_limits_from_config(struct people_regex_limits *out, const struct config *cfg);
/* The same, with the K: limits `limits` (NULL: the defaults). */
int people_load_limits(struct people **out, struct repo *repo, const char *rev,
		       const char *maintainers, const struct people_regex_limits *limits);
/*
 * For routing mail and the review queue: the file the config names (maintainers.file,
 * .regex_limits) at `rev`, with the audit of it (maintainers.absent_days,
 * .window_days) run once: the people it calls absent (people_audit_absent()) are
 * left out of every routing and suggestion of this `struct people`.  An audit that
 * fails is logged, and then nobody is left out.
 */
int people_load_config(struct people **out, const struct config *cfg, struct repo *repo,
		       const char *rev);
/* The canonical addresses the audit called absent (empty without people_load_config()). */
void people_set_absent(struct people *p, const struct strvec *absent);
const struct strvec *people_absent(const struct people *p);
/* 1 when `email` (mapped through p's .mailmap) is one of people_absent(p). */
int people_is_absent(const struct people *p, const char *name, const char *email);

/* Who gets a change to `paths`, and why. */
struct people_recipient {
	char *name;	 /* as the file (or .mailmap) writes it; NULL for lists */
	char *email;
	enum people_role role;
	char *why;	 /* "R: in SLAB ALLOCATOR" (several: ", "-separated) */
	char *spec;	 /* "Name <email>" or "email", for a mail's recipients */
};

struct people_route {
	struct people_recipient *v;
	size_t nr;
	struct strvec sections; /* the sections matched, most specific first; "FOO (orphan)" */
	size_t left_out;	/* people and lists past `max` */
	/*
	 * People left out because the audit calls them absent, each once:
	 * "Name <email> (R: in SLAB ALLOCATOR): absent" (people_load_config()).
	 */
	struct strvec absent;
};
#define PEOPLE_ROUTE_INIT { NULL, 0, STRVEC_INIT, 0, STRVEC_INIT }

/* A device-tree binding's maintainer ("maintainers:" of a .yaml the patch touches). */
struct people_binding {
	char *path;  /* "Documentation/devicetree/bindings/iio/adc/x.yaml" */
	char *name;  /* NULL when the line has only an address */
	char *email;
};

/*
 * What routing reads of a patch (of its commits, people_patch_read()): the files it
 * touches, its changed lines, its commit message, and the maintainers: of the
 * device-tree bindings (Documentation/devicetree/bindings/.../NAME.yaml) it touches,
 * read from the file at the commit.
 */
struct people_patch {
	struct strvec paths;
	struct strvec lines;	/* each with its '+' or '-' */
	struct strvec message;	/* the message's lines (subject and body) */
	struct people_binding *bindings;
	size_t bindings_nr, bindings_alloc;
};
#define PEOPLE_PATCH_INIT { STRVEC_INIT, STRVEC_INIT, STRVEC_INIT, NULL, 0, 0 }
/*
 * Adds what `commit` touches, changes and says; 0, or NB_ERROR (recorded) when it
 * cannot be read (what was added stays).
 */
int people_patch_read(struct people_patch *pp, struct repo *repo, const struct nb_oid *commit);
/* The maintainers: of a binding's text, appended to pp (tests; people_patch_read()). */
void people_patch_binding(struct people_patch *pp, const char *path, const char *yaml);
void people_patch_release(struct people_patch *pp);

struct people_route_opts {
	int roles[PEOPLE_ROLES]; /* 1: that role is wanted (maintainers.roles) */
	size_t max;		 /* at most this many; 0: no cap */
	/*
	 * The patch's changed lines, each with its '+' or '-' (activity_commit_lines()
	 * of merge/repo/repo.h), borrowed: K: lines are matched against them.  NULL, 0:
	 * the routing is about paths only (no K:).
	 */
	const char *const *lines;
	size_t lines_nr;
	/* The commit message's lines: K: lines are matched anywhere in them too. */
	const char *const *message;
	size_t message_nr;
	/* The maintainers: of the bindings the patch touches: M: people after the R:. */
	const struct people_binding *bindings;
	size_t bindings_nr;
};
/* Points o's lines, message and bindings at pp's (borrowed). */
void people_route_opts_patch(struct people_route_opts *o, const struct people_patch *pp);

/*
 * The M:/R: people and L: lists of the sections that `paths` are in, as
 * get_maintainer.pl --no-git --no-git-fallback finds them for a patch (F:/X: globs,
 * directories, N: regexes), and of the sections a K: of which matches one of
 * o->lines (its Perl regex, by PCRE2 within maintainers.regex_limits; what is
 * refused is a problem of the file), addresses through .mailmap, each once: M:
 * first, then R:, then L:, each by the most specific section first, the K: sections
 * after those of the paths, at most o->max.  K: lines are matched against o->lines
 * and o->message (the script's patch mode); the maintainers: of o->bindings come
 * after the sections' R: people (why: "maintainers: in PATH").  People the audit
 * calls absent (people_load_config()) are left out, named in out->absent.  An
 * orphaned or obsolete section is named so in `sections` and in `why`.  `p` NULL:
 * nobody.  Release with people_route_release().
 */
void people_route(struct people_route *out, const struct people *p, const char *const *paths,
		  size_t paths_nr, const struct people_route_opts *o);
void people_route_release(struct people_route *r);

/*
 * For a journey notice (bot/journey/) or any mail about some paths: the people and
 * lists the base's MAINTAINERS names for them, as the config asks, each with its
 * why; nobody when the base has no such file.  Reads the file each call (a night
 * that routes many mails keeps a `struct people` instead: people_load()).  0, or
 * NB_ERROR (recorded; *out then empty).  Release *out with people_route_release().
 */
int people_recipients(struct people_route *out, const struct config *cfg, struct repo *repo,
		      const char *const *paths, size_t paths_nr);

/* The options the config asks for (maintainers.roles and .max). */
void people_route_opts_from_config(struct people_route_opts *out, const struct config *cfg);

/* ---- the audit: the file held against history ---- */

/* What is wrong with a section (bit i of people_audit_section.findings). */
enum people_finding {
	PEOPLE_FINDING_ALL_ABSENT = 0,	/* it has M: people, every one absent */
	PEOPLE_FINDING_NO_MAINTAINER,	/* no M: (and not marked Orphan or Obsolete) */
	PEOPLE_FINDING_ORPHAN,		/* S: Orphan */
	PEOPLE_FINDING_OBSOLETE,	/* S: Obsolete */
	PEOPLE_FINDING_NO_FILES,	/* its patterns match no file of the tree */
	PEOPLE_FINDING_CASE_DUPLICATE,	/* an address listed elsewhere in another case */
	PEOPLE_FINDING_MAILMAP_DUPLICATE, /* an address .mailmap maps to another one */
	PEOPLE_FINDINGS,
};
/*
 * "all-absent", "no-maintainer", "orphan", "obsolete", "no-files", "case-duplicate",
 * "mailmap-duplicate"; parse: 0 or -1.
 */
const char *people_finding_name(enum people_finding f);
int people_finding_parse(enum people_finding *out, const char *s);

struct people_audit_person {
	enum people_role role;	/* M or R */
	char *name, *email;	/* as listed */
	char *canonical;	/* the address through .mailmap */
	long long last;		/* last active (seconds since the epoch); 0: not seen */
	int absent;		/* not seen in absent_days before `now` */
};

struct people_audit_section {
	char *name;
	enum people_status status;
	int line;
	size_t files_matched;	/* files of the tree it covers */
	struct people_audit_person *people;
	size_t people_nr;
	unsigned findings;	/* 1u << enum people_finding */
};

struct people_audit {
	struct people_audit_section *sections; /* in the file's order */
	size_t sections_nr;
	long long now;		/* the audited commit's date: absence is counted from it */
	long long since;	/* the window's start */
	int absent_days;
	size_t commits;		/* commits read */
};

struct people_audit_opts {
	int absent_days; /* maintainers.absent_days, or --absent-days */
	int window_days; /* maintainers.window_days */
};

/*
 * Audits `p` (read at `rev`) against the history of `rev` in `repo`: one walk of
 * the commits of the window (the commit-graph's), each commit's paths mapped to
 * sections once.  A person's activity: authoring, or a Signed-off-by, Reviewed-by,
 * Acked-by or Tested-by, on a commit touching the section's files, addresses
 * compared through .mailmap and ignoring case.  Release with people_audit_release().
 */
int people_audit_run(struct people_audit *out, struct repo *repo, const char *rev,
		     const struct people *p, const struct people_audit_opts *o);
void people_audit_release(struct people_audit *a);
/* The canonical addresses of everyone absent in some section, each once (appended). */
void people_audit_absent(struct strvec *out, const struct people_audit *a);

/*
 * `nextbot maintainers` output: with `json` {"sections": [{name, status,
 * files_matched, people: [{role, name, email, last_active, absent_days}],
 * findings}], "problems": [..], "absent": [..]} (last_active a date or null: not
 * in the window; absent_days null then), else text: the sections with findings or
 * absent people, then a summary.  `problems` are the file's own.
 */
void people_audit_show(struct strbuf *out, const struct people_audit *a,
		       const struct strvec *problems, int json);

/*
 * The audit the config asks for (maintainers.file, .absent_days unless
 * `absent_days` > 0, .window_days) of the commit `ref` names.  *p_out gets the
 * file read (people_free() it, also on failure); NB_ENOTFOUND when the tree has
 * no such file.
 */
int people_audit_of_config(struct people_audit *out, struct people **p_out,
			   const struct config *cfg, struct repo *repo, const char *ref,
			   int absent_days);

/* ---- the review queue ---- */

struct people_suggestion {
	char *name;  /* NULL when unknown */
	char *email;
	char *why;   /* "R: in MM SUBSYSTEM", "reviewed mm/slab.c lately" */
};

struct people_review_patch {
	struct nb_oid commit;
	struct nb_patchid patch_id; /* none: a binary or merge change (JSON null) */
	char *subject;
	char *author_name, *author_email;
	long long author_time;
	char *message_id;	/* NULL: none */
	char *key;		/* its journey's key, else its patch-id or Message-ID: one row */
	long long posted;	/* the night nextbot first saw it (its journey); 0: unknown */
	int age_days;	/* from `posted` (else its author date) to the queue's `now` */
	struct people_suggestion *suggested; /* never the author, nor anyone absent; <= 5 */
	size_t suggested_nr;
	struct strvec branches;	/* every tree carrying it, this row's first (JSON) */
};

struct people_review_tree {
	char *name;
	struct people_review_patch *patches; /* oldest first */
	size_t patches_nr;
};

struct people_review_author {
	char *name, *email;
	int waiting;	 /* their patches without a review */
	int oldest_days; /* how long the oldest has waited */
};

struct people_reviews {
	struct people_review_tree *trees; /* in the config's order */
	size_t trees_nr;
	struct people_review_author *authors;
	size_t authors_nr;
	long long now; /* the journeys' last night, else the newest tip's date: ages from it */
};

/*
 * The patches of each configured tree (only `only_tree` when not NULL) that are
 * not in the base yet and that nobody but their author reviewed (a Reviewed-by or
 * Acked-by, trailer_reviewed() of merge/repo/repo.h, addresses through p's
 * .mailmap), oldest first, with suggested reviewers: the M:/R: of their files'
 * sections (`p` may be NULL: none), then who reviewed the same files in the base's
 * last year; never the author (address, '+' alias or name) nor anyone the audit
 * calls absent (people_load_config()).  One row per patch (by its journey, else its
 * patch-id or Message-ID) under the first tree carrying it; none for a patch dropped
 * (journeys or `nextbot drop`), merged or gone.  Ages count from the night nextbot
 * first saw the patch (the journeys' store), else from its author date.  Release
 * with people_reviews_release().
 */
/*
 * What the journeys' store says of a patch, for the queue: bot/journey/ opens it
 * (journey_people_open()); `find` gives 0 with the journey's lasting key, the night
 * it was first seen (YYYY-MM-DD) and whether its journey ended (dropped, merged,
 * gone), or -1: no journey has it.  `date`: the journeys' last night, or NULL.
 */
struct people_journeys {
	void *ctx;
	int (*find)(void *ctx, const struct nb_patchid *pid, const char *message_id,
		    const char **key, const char **first_seen, int *ended);
	const char *date;
};
typedef int people_journeys_open_fn(struct people_journeys *out, const struct config *cfg);
typedef void people_journeys_close_fn(struct people_journeys *j);

int people_reviews_run(struct people_reviews *out, const struct config *cfg, struct repo *repo,
		       const char *only_tree, const struct people *p,
		       const struct people_journeys *journeys);
void people_reviews_release(struct people_reviews *r);

/*
 * `nextbot reviews` output: with `json` {"trees": [{name, patches: [{patch_id,
 * commit, subject, author: {name, email}, age_days, suggested: [{name, email,
 * why}]}]}], "authors": [{name, email, waiting, oldest_days}]}, else text.
 */
void people_reviews_show(struct strbuf *out, const struct people_reviews *r, int json);
/* The daily summary's short list: at most `max` lines, the oldest patches first. */
void people_reviews_summary(struct strvec *out, const struct people_reviews *r, size_t max);

/*
 * The night's share (bot/night/night_summary.c): the review queue's oldest `max` lines for
 * the daily summary; the audit's text and one-line summary for the monthly mail.
 * NB_ENOTFOUND from the latter when the base has no MAINTAINERS.
 */
int people_review_lines(struct strvec *out, const struct config *cfg, struct repo *repo,
			size_t max, const struct people_journeys *journeys);
int people_audit_mail_text(struct strbuf *text, struct strbuf *summary,
			   const struct config *cfg, struct repo *repo);

/*
 * The dashboard's pages (`report --html`, written as people/maintainers.html and
 * people/reviews.html, one level below the index): the audit, when the base has a
 * MAINTAINERS file (`maintainers` stays empty otherwise), and the review queue.
 * 0, or NB_ERROR (recorded) when the queue cannot be read.
 */
int people_pages(struct strbuf *maintainers, struct strbuf *reviews, const struct config *cfg,
		 struct repo *repo, const struct people_journeys *journeys);

/*
 * bot/people/cmd_people.c: `nextbot maintainers`, as bot/cli/cli_int.h's commands;
 * `nextbot reviews` with the journeys `open` gives (bot/cli/cmd_reviews.c's cmd_reviews).
 */
struct cli_ctx;
int cmd_maintainers(const struct cli_ctx *ctx, int argc, char **argv);
int people_cmd_reviews(const struct cli_ctx *ctx, int argc, char **argv,
		       people_journeys_open_fn *open, people_journeys_close_fn *close);

#endif
