/*
 * Internals of the feed simulator, shared by the files of feeds/ only.
 *
 * The world is a set of subsystems (folders of the project) owned by trees.  Every
 * patch is a list of exact text replacements ("ops") that touch regions no other
 * live patch touches (locks), so that a patch replays onto any later base with the
 * same diff: its patch-id survives rebases.  Defects are patches whose text is
 * wrong on purpose; pairs (conflict, semantic) share a region or an API.
 */
#ifndef FEEDS_SIM_H
#define FEEDS_SIM_H

#include "util/oid.h"
#include <git2.h>
#include <stddef.h>
#include <stdint.h>

#include "util/strbuf.h"
#include "util/strvec.h"

/* 2025-01-06 00:00:00 UTC: day 0 of every world. */
#define SIM_EPOCH 1736121600LL
#define SIM_SLOTS_CORE 8
#define SIM_SLOTS_SMALL 2

enum sim_tree_kind { SIM_MAINLINE, SIM_MM_STABLE, SIM_MM_NEXT, SIM_MM_UNSTABLE, SIM_OTHER };
enum sim_patch_state { SIM_LIVE, SIM_DROPPED, SIM_ABSORBED };
enum sim_kind { SIM_NORMAL = -1, SIM_BUILD, SIM_TEST, SIM_FLAKY, SIM_CONFLICT, SIM_SEMANTIC,
		SIM_KINDS };
/* What an mm-unstable defect does at review: move on to mm-next or be dropped. */
enum sim_fate { SIM_FATE_GRADUATE, SIM_FATE_DROP };
/* The review trailers a patch may carry (feeds/journey.c). */
enum sim_review_kind { SIM_REVIEWED_BY, SIM_ACKED_BY };
/* A patch's journey as truth.json's `patches` records it. */
enum sim_event { SIM_EV_ADDED, SIM_EV_MOVED, SIM_EV_REPLACED, SIM_EV_REMOVED, SIM_EV_MERGED };

/* A review of a patch: by a submitter (the author too, which counts for nothing). */
struct sim_review {
	int who;    /* index into the submitters */
	int kind;   /* enum sim_review_kind */
	int day;    /* the day it is given: in the commit from then on */
};

struct sim_op {
	char *path;
	char *old_text; /* NULL: create the file */
	char *new_text;
};

struct sim_patch {
	int id;
	int tree;       /* index into world->trees */
	int sub;        /* subsystem the subject names */
	int day;        /* arrival */
	int review_day; /* mm: the day it moves on to the next stage */
	int drop_day;   /* > 0: the maintainer drops it that day */
	int commit_day; /* committer date of its current commit */
	int author;     /* index into the submitters */
	int state;      /* enum sim_patch_state */
	int defect;     /* index into world->defects, or -1 */
	int fate;       /* enum sim_fate, for mm-unstable defects */
	int archs;      /* a build defect being made in a matrix world: what it breaks */
	char *subject, *body, *msgid;
	struct sim_op *ops;
	size_t ops_nr, ops_alloc;
	struct strvec locks;     /* regions it holds: "s:SUB:SLOT", "t:SUB", "p:N", "a:SUB" */
	struct strvec new_files; /* files it creates with slots, registered when absorbed */
	struct nb_oid commit;
	/* its trailers besides the sign-offs and Link (feeds/journey.c; the journey stream) */
	struct sim_review *reviews;
	size_t reviews_nr, reviews_alloc;
	int version;    /* 1, 2, …: a new version has its own Message-ID */
	int tester;     /* a submitter's Tested-by, or -1 */
	int codev;      /* a submitter's Co-developed-by (and Signed-off-by), or -1 */
	int extras;     /* SIM_TRAILER_CC | SIM_TRAILER_ROBOT */
	int event_day;  /* the day of its last journey event */
};
#define SIM_TRAILER_CC 1    /* a Cc: of the subsystem's list */
#define SIM_TRAILER_ROBOT 2 /* a Tested-by of a test robot (nobody to mail) */

/* One patch's journey in the ground truth; kept after the patch is forgotten. */
struct sim_journey {
	int id;          /* the patch's id */
	int author;      /* index into the submitters */
	char *subject;
	struct sim_version {
		struct nb_patchid patch_id; /* filled once its commit is written */
		int day;
		char *msgid;
	} *versions;
	size_t versions_nr, versions_alloc;
	struct sim_event_rec {
		int day;
		int event;   /* enum sim_event */
		int tree;    /* index into world->trees (0: mainline) */
		int from;    /* moved: the tree it left; else -1 */
	} *events;
	size_t events_nr, events_alloc;
	struct sim_review *reviews; /* those in its latest commit, in order */
	size_t reviews_nr, reviews_alloc;
};

struct sim_tree {
	char *name;   /* config name == branch name */
	char *repo;   /* DIR/remotes/<repo>.git */
	char *branch;
	int kind;
	int sub;
	int maintainer;
	struct nb_oid base;
	struct nb_oid tip;
	struct sim_patch **patches;
	size_t nr, alloc;
	int dirty_from; /* first position to replay, -1: the tip is current */
};

struct sim_sub {
	char *tree;    /* the tree that owns it ("mm" for the mm trees, NULL: mainline) */
	char *ident;   /* C identifier stem: "mm", "net", "usb" */
	char *dir;     /* "mm", "kernel/sched", "drivers/usb" */
	char *prefix;  /* subject prefix */
	char *objtype; /* "struct page" */
	char *var;     /* "pg" */
	char *fields[4];
	char *typos[4];
	char *core[3];
	int core_nr;
	int fillers;
	struct strvec extras; /* absorbed new files with two slots each */
	int api_used;
	int api_rename; /* the API change is a rename (else an added parameter) */
};

/*
 * A matrix world (`sim init --matrix`) builds every configuration of SIM_ARCHS
 * (`make ARCH=…` defines NB_ARCH_<ARCH>); a defect breaks a set of them, as a
 * bit mask over SIM_ARCHS (1 << i: sim_arch[i]).
 */
#define SIM_ARCHS 3
extern const char *const sim_arch[SIM_ARCHS];
#define SIM_ALL_ARCHS ((1 << SIM_ARCHS) - 1)

struct sim_defect {
	int id;
	int day;
	int kind;
	int culprit;  /* patch id */
	int partner;  /* patch id or -1 */
	struct nb_patchid patch_id;
	struct nb_patchid partner_patch_id;
	char *trees;  /* "a,b" culprit's tree then partner's, as they were last seen */
	char *maintainers; /* "a,b,…": whom MAINTAINERS adds to its mails (truth.json),
			      computed once while the patches' texts are at hand; NULL: not yet */
	int archs;    /* matrix worlds: the configurations it breaks (mask); 0 none */
};

struct sim_person {
	const char *name;
	const char *email;
};

struct sim_world {
	char *dir;
	uint64_t seed;
	uint64_t rng;
	uint64_t jrng;  /* the journeys' own stream: reviews, versions (feeds/journey.c) */
	int ntrees, nfiles;
	int matrix;     /* configurations: `make ARCH=…` over sim_arch[] */
	int history;    /* commits of mainline history before the initial import */
	int cache;      /* init only (not saved): nextbot.yaml turns runner.cache on */
	int day;
	int seq; /* last patch id */
	int covered[SIM_KINDS]; /* kinds already injected into merged trees */
	struct nb_oid mainline;
	struct sim_sub *subs;
	size_t subs_nr;
	struct sim_tree *trees;
	size_t trees_nr;
	struct sim_patch **patches; /* live ones and every defect's, by ascending id */
	size_t patches_nr, patches_alloc;
	struct sim_defect *defects;
	size_t defects_nr, defects_alloc;
	struct sim_journey *journeys; /* by ascending patch id */
	size_t journeys_nr, journeys_alloc;
	struct sim_lockset {
		char **keys; /* open addressing; NULL: empty */
		size_t cap, nr;
	} locks;
	git_repository *store;
	git_odb_backend *mempack; /* feeds/odb.c; owned by the store's odb */
};

/* feeds/rng.c: splitmix64, the world's only source of randomness. */
uint64_t sim_rng_next(uint64_t *state);
int sim_rng_below(uint64_t *state, int n);     /* uniform in [0, n) */
int sim_rng_chance(uint64_t *state, int percent);

/* feeds/people.c */
extern const struct sim_person sim_submitters[];
extern const size_t sim_submitters_nr;
struct sim_person sim_maintainer(int index);  /* static storage */

/* feeds/text.c: the project's text. */
void sim_subs_build(struct sim_world *w);
void sim_subs_release(struct sim_world *w);
int sim_slot_count(const struct sim_sub *s);
/* Path and function name of slot `slot` of `s`. */
void sim_slot_locate(struct strbuf *path, struct strbuf *fn, const struct sim_sub *s, int slot);
int sim_slot_is_built(const struct sim_sub *s, int slot);
/* Calls `emit` for every file of the day-0 project. */
int sim_project_files(struct sim_world *w,
		      int (*emit)(void *ctx, const char *path, const char *text), void *ctx);
/* Finds function `fn` in `text`; sets [*start, *end) to its definition. */
int sim_text_find_fn(const char *text, const char *fn, size_t *start, size_t *end);
/* A slot function with the given body lines (each without tab or newline). */
void sim_slot_fn(struct strbuf *out, const struct sim_sub *s, const char *fn, const char *body);

/* feeds/state.c, shared with the kernel world (feeds/kernel.c). */
struct json_object;
/* `o` as JSON (pretty or one line) and a newline, atomically at dir/name; 0 or < 0. */
int sim_write_json(const char *dir, const char *name, struct json_object *o, int pretty);
/* `s` as a double-quoted YAML scalar (" and \ escaped). */
void sim_yaml_str(struct strbuf *sb, const char *s);
void sim_new_file(struct strbuf *out, const struct sim_sub *s, const char *path,
		  const char *what, const char *body_a, const char *body_b);
void sim_fn_name(struct strbuf *out, const struct sim_sub *s, const char *path, const char *word);
/* The tested function of `s`: its name, good text and a wrong one with a subject. */
void sim_tested_fn(struct strbuf *name, struct strbuf *good, struct strbuf *bad,
		   struct strbuf *subject, const struct sim_sub *s, int sub_index);
/* API of subsystem `s`: declaration, definition and caller texts, old or new form. */
struct sim_api_text {
	struct strbuf name, new_name, decl, def, caller, new_decl, new_def, new_caller;
};
void sim_api_text(struct sim_api_text *out, const struct sim_sub *s, int rename);
void sim_api_text_release(struct sim_api_text *t);
/* A file-name stem from a fixed list (k taken modulo its length). */
const char *sim_stem(int k);
extern const char *const sim_params[];
extern const size_t sim_params_nr;

/* feeds/git.c: writing trees and commits through libgit2. */
int sim_git_read(struct strbuf *out, git_repository *repo, const char *commit_hex,
		 const char *path);
int sim_git_apply(git_oid *out_tree, git_repository *repo, const git_oid *tree,
		  const struct sim_op *ops, size_t ops_nr);
/* A commit to write: its tree, parents (hex, at most two), people, times and message. */
struct sim_commit_spec {
	const git_oid *tree;
	const char *const *parents;
	size_t parents_nr;
	const struct sim_person *author;
	long long author_time;
	const struct sim_person *committer;
	long long commit_time;
	const char *message;
};
int sim_git_commit(struct nb_oid *out, git_repository *repo,
		   const struct sim_commit_spec *spec);
int sim_git_set_ref(const char *repo_path, const char *ref, const char *hex);
/* feeds/odb.c: new objects wait in memory; sim_git_flush() writes them as one pack. */
int sim_git_store_setup(struct sim_world *w);
int sim_git_flush(struct sim_world *w);
/* Stores an object made by the caller, known to be new, in the memory store. */
int sim_git_put(git_oid *out, struct sim_world *w, const void *data, size_t len,
		git_object_t type);
int sim_git_init_remote(const char *path, const char *store_objects, const char *head_branch);

/*
 * feeds/history.c: `n` (1..SIM_HISTORY_MAX) linear commits of mainline history, dated
 * before SIM_EPOCH, into the store; `out` is the newest.  Draws no randomness.
 */
#define SIM_HISTORY_MAX 2000000
int sim_history_write(struct nb_oid *out, struct sim_world *w, int n);

/*
 * feeds/maintainers.c: the mainline's MAINTAINERS and .mailmap, the Acked-by lines
 * of the initial import (everyone listed who is not absent), and the ground truth:
 * the absent people's addresses, the orphaned sections' names, and the addresses
 * MAINTAINERS names for some paths (a section's folders by construction, .mailmap
 * applied, each once).
 */
void sim_maintainers_text(struct strbuf *out, const struct sim_world *w);
void sim_mailmap_text(struct strbuf *out);
void sim_maintainers_acks(struct strbuf *msg, const struct sim_world *w);
void sim_maintainers_absent(struct strvec *out, const struct sim_world *w);
void sim_maintainers_orphans(struct strvec *out, const struct sim_world *w);
void sim_maintainers_for(struct strvec *out, const struct sim_world *w,
			 const char *const *paths, size_t paths_nr);
/*
 * Sets d->maintainers, once, from the files in question (the culprit's; a semantic
 * conflict's both patches'; a textual conflict's files both touch; none for flaky)
 * while both patches still hold their text.
 */
void sim_defect_recipients(struct sim_world *w, struct sim_defect *d);

/* feeds/state.c: the lock set. */
int sim_lock_has(const struct sim_lockset *ls, const char *key);
void sim_lock_add(struct sim_lockset *ls, const char *key);
void sim_lock_clear(struct sim_lockset *ls);

/* feeds/world.c: the list of branches, from w->ntrees and w->subs. */
void sim_trees_build(struct sim_world *w);

/*
 * feeds/journey.c: what a patch's journey adds to the world, all drawn from w->jrng
 * so that the world stream (w->rng) and so every seed's defects stay as they were.
 */
uint64_t sim_journey_seed(uint64_t seed);
/* A patch joins `tree` (its first arrival: reviews and trailers drawn) or moves there. */
void sim_journey_arrive(struct sim_world *w, struct sim_patch *p, int tree);
void sim_journey_leave(struct sim_world *w, struct sim_patch *p, int event);
/* The day's reviews landing and new versions, after the world's own moves. */
void sim_journey_day(struct sim_world *w);
/* The trailers of `p`'s commit between the author's sign-off and the Link. */
void sim_journey_trailers(struct strbuf *msg, struct sim_world *w, const struct sim_patch *p);
/* Patch-ids of versions whose commits were written today. */
void sim_journey_patch_ids(struct sim_world *w);
struct sim_journey *sim_journey_find(struct sim_world *w, int id);
void sim_journey_release(struct sim_journey *j);
void sim_patch_version_msgid(struct sim_patch *p, int day);

/* feeds/state.c: sim-state.json, truth.json, nextbot.yaml. */
int sim_state_save(struct sim_world *w);
int sim_state_load(struct sim_world *w, const char *dir);
int sim_truth_save(struct sim_world *w);
int sim_config_save(struct sim_world *w);
void sim_world_release(struct sim_world *w);
struct sim_patch *sim_patch_by_id(struct sim_world *w, int id);
void sim_patch_free(struct sim_patch *p);
const char *sim_kind_name(int kind);

#endif
