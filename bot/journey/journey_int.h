/*
 * Internal to bot/journey/: the journeys store (workdir/journeys.txt) and what its
 * files share.  Everything else includes bot/journey/journey.h.
 */
#ifndef BOT_JOURNEY_JOURNEY_INT_H
#define BOT_JOURNEY_JOURNEY_INT_H

#include "util/oid.h"
#include <stddef.h>
#include "bot/config/config.h"
#include "bot/journey/journey.h"
#include "bot/state/state.h"
#include "util/xalloc.h"
#include "util/strbuf.h"
#include "util/strvec.h"

/*
 * ALLOC_GROW for the small arrays of one journey (its versions, events, people: one
 * or two each): room for exactly the first, then doubling.  ALLOC_GROW's eight made
 * 8,000 journeys spread over some 16 MB of heap that a night faulted in.
 */
#define JOURNEY_GROW(x, nr, alloc) ALLOC_GROW_MIN(x, nr, alloc, 1)

/*
 * What a patch is now: `nextbot patch`'s "state" (SPEC "Every sentence true"), kept
 * here alone and changed by the night only; each change of it is one event, and a
 * notice says no more than the change.
 */
enum journey_state {
	JOURNEY_IN_TREE = 0,   /* in a tree whose merge did not bring it into next tonight */
	JOURNEY_IN_NEXT,       /* next carries it tonight */
	JOURNEY_HELD,          /* a review gate with policy hold keeps it out of next */
	JOURNEY_MERGED,        /* mainline took it */
	JOURNEY_DROPPED,       /* a maintainer's `nextbot drop` */
	JOURNEY_GONE,          /* "removed": it left its branch without reaching mainline */
	JOURNEY_WATCHED,       /* only in a watched branch (mm-unstable), never merged */
	JOURNEY_REVERTED,      /* next merged it and reverted it tonight (a flag's culprit) */
};
const char *journey_state_name(enum journey_state s);
int journey_state_parse(enum journey_state *out, const char *s);

/* An event of a journey, as `nextbot patch` lists it ("added", "moved", …). */
enum journey_event_kind {
	JOURNEY_ADDED = 0,
	JOURNEY_MOVED,
	JOURNEY_REPLACED,
	JOURNEY_REMOVED,
	JOURNEY_MERGED_EV,
	JOURNEY_DROPPED_EV,
	JOURNEY_HELD_EV,
	JOURNEY_RELEASED,
	JOURNEY_EVENT_KINDS,
};
const char *journey_event_name(enum journey_event_kind k);
int journey_event_parse(enum journey_event_kind *out, const char *s);

/* A person of a commit's trailers ("Reviewed-by", name, address); all owned. */
struct journey_person {
	char *key, *name, *email;
};

/* What nextbot read of a commit (or knows of it: the latest version of a journey). */
struct journey_commit {
	struct nb_oid id;
	struct nb_patchid patch_id; /* none: a binary change, or not computed yet */
	int pid_known;           /* patch_id is computed (a diff: most of reading a commit,
				    so a commit with a Message-ID waits for it) */
	char *message_id;        /* NULL: none */
	char *subject;           /* one line, valid UTF-8 */
	char *author_name, *author_email;
	char *link;              /* the Link: URL naming message_id; NULL */
	struct journey_person *people; /* its trailers with an address, in order */
	size_t people_nr;
	int borrowed;            /* its strings are a journey's: not freed with it */
};

struct journey_version {
	struct nb_patchid patch_id;
	int pid_known;           /* as in journey_commit; "?" in the file when not */
	char *message_id;
	struct nb_oid commit;    /* its last commit seen */
	char *first_seen;        /* YYYY-MM-DD */
	struct journey_person *people; /* its trailers, as in journey_commit */
	size_t people_nr;
};

struct journey_event {
	char *date;
	enum journey_event_kind kind;
	char *tree, *branch;     /* where it happened; NULL: mainline */
	char *from;              /* moved: the tree it left */
	char *reason;            /* removed, held, released, a new patch not a version */
};

struct journey {
	char *key;               /* lasting: the first version's patch-id, Message-ID or commit */
	char *subject, *author_name, *author_email;
	char *family;            /* the url of the trees it has been in */
	enum journey_state state;
	char *tree;              /* the most cooked tree holding it tonight; NULL: none */
	char *since;             /* the night it entered `tree` */
	char *first_seen, *last_seen;
	struct journey_version *versions;
	size_t versions_nr, versions_alloc;
	struct journey_event *events;
	size_t events_nr, events_alloc;
	struct strvec told;      /* gated trees whose review-missing went out */
	char *held;              /* while held: why; else NULL */
	char *link;              /* the latest version's Link: URL; NULL */
	/*
	 * The store file's text its strings (its versions', people's and events' too)
	 * may point into, read in one block and freed with the store: a string within
	 * [block, block_end) is not freed on its own (journey_str_free()).  NULL for a
	 * journey begun tonight.
	 */
	const char *block, *block_end;
};

/* Last night's view of a tracked tree, kept for tonight's comparison. */
struct journey_tree_seen {
	char *name;
	struct nb_oid tip, base; /* its tip and the base's, that night */
	struct nb_oid *commits;  /* its commits then (base..tip, oldest first): an unchanged
				    tree is not walked again */
	size_t commits_nr;
};

struct journey_store {
	char *date;              /* the last night recorded; NULL: none yet */
	struct nb_oid base_tip;  /* the base's tip that night */
	struct journey_tree_seen *trees;
	size_t trees_nr, trees_alloc;
	struct journey *patches;
	size_t patches_nr, patches_alloc;
	size_t bytes;            /* the file's size when read: what writing it needs */
	char *text;              /* the file as read: the journeys' strings point into it */
};
#define JOURNEY_STORE_INIT { 0 }

/* store.c: workdir/journeys.txt, replaced atomically; a missing file is empty. */
int journey_store_load(struct journey_store *out, const char *workdir);
int journey_store_save(const struct journey_store *s, const char *workdir);
void journey_store_release(struct journey_store *s);
void journey_commit_release(struct journey_commit *c);
void journey_people_free(struct journey_person *p, size_t nr);
/* Frees a string of journey j, unless it lies in the store's block (then it stays). */
void journey_str_free(const struct journey *j, char *str);
/* Frees the people of a version of journey j (their strings as journey_str_free()). */
void journey_people_release(const struct journey *j, struct journey_person *p, size_t nr);
struct journey_person *journey_people_dup(const struct journey_person *p, size_t nr);
void journey_release(struct journey *j);
struct journey *journey_store_add(struct journey_store *s);
struct journey_event *journey_event_add(struct journey *j, const char *date,
					enum journey_event_kind kind);
struct journey_tree_seen *journey_tree_seen_find(struct journey_store *s, const char *name);
/* The journeys whose state is terminal and last event older than `keep_days`: removed. */
size_t journey_store_prune(struct journey_store *s, const char *today, int keep_days);

/* A review trailer of `people` counts under `require` (merge/repo/repo.h's rule). */
int journey_reviewed(const struct journey_person *people, size_t nr, const char *author_name,
		     const char *author_email, const struct strvec *require);
/*
 * As journey_reviewed(), and the reviewer's own mail carrying that trailer was seen
 * in the thread of `message_id` (review_gate.verify: mail; state's reviews).
 */
int journey_reviewed_by_mail(const struct journey_person *people, size_t nr,
			     const char *author_name, const char *author_email,
			     const struct strvec *require, const struct state *st,
			     const char *message_id);
/* A trailer key among the recipients' (Signed-off-by, Reviewed-by, …)? */
int journey_key_mailed(const char *key);
/* Is `email` (of `name`) a bot's, never mailed: notify.from's, or a robot's name? */
int journey_is_bot(const struct config *cfg, const char *name, const char *email);

/* The journey matching `id` (flag id, commit, patch-id, Message-ID, subject); patch.c. */
size_t journey_match(const struct journey_store *s, const struct state *st, const char *id,
		     size_t *out, size_t max);

#endif
