/*
 * Internal to bot/journey/: one night of journeys (night.c, observe.c, mail.c).
 */
#ifndef BOT_JOURNEY_NIGHT_INT_H
#define BOT_JOURNEY_NIGHT_INT_H

#include "bot/journey/journey_int.h"

struct people;

/* A string -> index map (index.c). */
struct jmap {
	char **keys;
	size_t *vals;
	size_t cap, nr;
};
void jmap_put(struct jmap *m, const char *key, size_t value);
int jmap_get(const struct jmap *m, const char *key, size_t *value);
/* Room for nr more keys at once (8,000 patches: no rehash on the way). */
void jmap_reserve(struct jmap *m, size_t nr);
void jmap_clear(struct jmap *m);

/* The subject a new version keeps: no "[PATCH v2 1/3]", lowercase, blanks squeezed. */
void journey_subject_norm(struct strbuf *out, const char *subject);

/* A tree (or watched branch) followed tonight. */
struct jn_tree {
	const struct config_tree *cfg;
	int is_watch;
	int told;                /* journey.trees names it: its events are mailed */
	const struct config_gate *gate; /* the first review_gate naming it; NULL */
	int baseline;            /* not followed last night: recorded, nobody told */
	struct nb_oid tip;       /* tonight's; null when it could not be fetched */
	struct nb_oid *commits;  /* tonight's, oldest first */
	size_t commits_nr;
	int in_next;             /* journey_night_end(): merged tonight */
	const struct strvec *left_out;
	const struct strvec *reverted; /* its commits next reverted tonight (40 hex); NULL */
};

/* What tonight says of one journey (parallel to store.patches). */
struct jn_seen {
	int tree;                /* index into jn.trees of the most cooked one; -1: none */
	struct journey_commit *commit; /* its commit there */
	int old_tree;            /* where last night's record had it; -1: nowhere */
	int is_new;              /* a patch first seen tonight */
	int replaced;            /* a new version tonight: the old one is versions_nr - 2 */
	int reviewed;            /* its gate's require is met (when in a gated tree) */
	char *held;              /* held out of next tonight: why; NULL */
	char *note;              /* why a lookalike was not taken for an old version */
};

/* An event of tonight to tell: the journey, what, and (replaced) the delta. */
struct jn_told {
	size_t j;
	enum notice_journey_kind kind;
	int tree;                /* jn.trees index; -1 mainline */
	int from;                /* moved: jn.trees index; else -1 */
	char *reason;
};

struct journey_night {
	struct journey_night_opts o;
	/* the journeys' own handle on the work repository, for reading, so that the
	   8,000 commits of a first night do not fill the caches of the night's handle;
	   closed while the trees merge */
	struct repo *reader;
	const struct config *cfg;
	int active;              /* journeys or gates configured */
	struct journey_store store;
	struct jn_tree *trees;   /* merged trees in merge order, then watched ones */
	size_t trees_nr;
	struct journey_commit *tonight; /* every commit read tonight: the next cache */
	size_t tonight_nr, tonight_alloc;
	size_t read_nr;          /* of them, read from the repository (not cached) */
	size_t pid_nr;           /* patch-ids computed tonight */
	struct jn_seen *seen;    /* per journey */
	size_t seen_alloc;
	struct jmap by_pid, by_msgid, by_commit; /* -> journey; commit -> tonight[] */
	struct jmap by_cache;    /* the latest version's commit of each journey -> journey */
	struct jmap by_tree;     /* a followed tree's name -> its index in trees[] */
	size_t held_nr;          /* patches held out of next tonight */
	struct jn_told *told;
	size_t told_nr, told_alloc;
	struct strvec unreviewed;
	struct people *people;   /* the base's MAINTAINERS, read for the first notice */
	int people_read;
};

/* observe.c: tonight's commits of every followed tree, matched to journeys. */
int journey_observe(struct journey_night *jn);
/* The jn.trees index of tree `name`, or -1. */
int journey_tree_index(const struct journey_night *jn, const char *name);
/* A new journey for `c` first seen in tree ti tonight (seen[] grown to match). */
size_t journey_adopt(struct journey_night *jn, const struct journey_commit *c, int ti);
void journey_version_add(struct journey_night *jn, size_t j, const struct journey_commit *c);

/* Computes c's patch-id if it waited (observe.c); 0 or a negative error. */
int journey_commit_pid(struct journey_night *jn, struct journey_commit *c);
/* The version's patch-id from its commit, if it waited and the commit is still there. */
void journey_version_pid(struct journey_night *jn, struct journey_version *v);
/*
 * Patch-ids that waited, of tonight's commits: at most `budget` of them (the night
 * gives one per commit read anew, at most JOURNEY_PID_BUDGET).
 */
#define JOURNEY_PID_BUDGET 200
void journey_patch_ids(struct journey_night *jn, size_t budget);

/* mail.c: the notices of tonight's events (digests with journey.digest). */
int journey_mail(struct journey_night *jn);

#endif
