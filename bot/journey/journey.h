/*
 * A patch's journey (issue 31): each patch followed through the trees and watched
 * branches nextbot fetches, by patch-id, by Message-ID and, for a new version, by
 * subject and author; its arrivals, moves, replacements and departures kept in
 * workdir/journeys.txt; the mm-commits notices about them; the review gate; and
 * `nextbot patch`, the dashboard's patch pages.  This is the room's one door.
 *
 * The night calls it in three places: journey_night_begin() after the fetch,
 * journey_night_held() as each tree is merged (a held patch is left out as a dropped
 * one is), journey_night_end() once next is final; the summary asks
 * journey_night_unreviewed().  Nothing here takes the lock: the night holds it.
 */
#ifndef BOT_JOURNEY_JOURNEY_H
#define BOT_JOURNEY_JOURNEY_H

#include "util/oid.h"
#include <stddef.h>
#include "bot/config/config.h"
#include "bot/state/state.h"
#include "notify/notice.h"
#include "util/strbuf.h"
#include "util/strvec.h"

struct repo;
struct journey_night;

struct journey_night_opts {
	const struct config *cfg;
	struct repo *repo;               /* the work repository, open (borrowed) */
	struct state *st;                /* flags and drops (borrowed; read only) */
	const char *date, *next_tag;
	int no_notify;                   /* record, queue nothing */
	const struct notice_settings *settings; /* where notices go (borrowed) */
	const struct nb_oid *base_tip;   /* tonight's base */
	const struct nb_oid *tips;       /* tonight's tip of each cfg->trees[i]; null: none */
};

/*
 * The night's first look: fetches the watched branches (refs/feeds/<name>), reads the
 * commits of every tree a journey or a review gate names (a commit is read once and
 * cached), follows each patch from last night, and decides which patches a hold
 * gate keeps out of next.  *out is always set (free with journey_night_free()); with
 * neither journeys nor gates configured it does nothing.  Returns 0, or a negative
 * error (recorded) after which the night goes on without journeys.
 */
int journey_night_begin(struct journey_night **out, const struct journey_night_opts *o);

/*
 * The patches held out of `tree`'s merge tonight, appended as drops are: their
 * patch-ids to `patch_ids`, the Message-IDs of those without one to
 * `message_ids`.  Nothing for a NULL night or a tree without holds.
 */
void journey_night_held(const struct journey_night *jn, const char *tree,
			struct nb_patchid_list *patch_ids, struct strvec *message_ids);

/* How a tree ended tonight, for journey_night_end(). */
struct journey_tree_outcome {
	const char *name;
	int in_next;                     /* merged (as tonight's tip or a replay of it) */
	const struct strvec *left_out;   /* its commits (40 hex) the merge left out */
	const struct strvec *reverted;   /* its commits (40 hex) reverted in next tonight; NULL */
};

/*
 * The night's events: arrivals, moves, replacements (with the range-diff against the
 * old version), departures (merged into mainline or removed), holds that cascaded
 * (a patch left out because a held one is missing is held too), releases, reviews
 * missing; their notices queued (or digests); journeys.txt saved and the tips kept
 * for tomorrow's range-diffs.  The first night a tree is followed records what is in
 * it without a notice.  Returns 0 or a negative error (recorded).
 */
int journey_night_end(struct journey_night *jn, const struct journey_tree_outcome *trees,
		      size_t nr);

/* Lines for the summary: the patches in gated trees without a review ("tree: subject"). */
void journey_night_unreviewed(const struct journey_night *jn, struct strvec *out);

void journey_night_free(struct journey_night *jn);

/*
 * `nextbot patch ID [--json]`: the journeys that ID names (a flag id, commit,
 * patch-id or Message-ID, or a subject substring of 4 characters or more), at most
 * 50.  Appends the text (or with `json` the document {"patches": [...]}) to `out`.
 * Returns 0, NB_ENOTFOUND when nothing matches, NB_EINVALID for a too short
 * substring (both recorded).
 */
#define JOURNEY_PATCH_MAX 50
int journey_patch_show(struct strbuf *out, const struct config *cfg, struct state *st,
		       const char *id, int json);

/*
 * `report --html DIR`: a page per patch (DIR/patch/<key>.html) and a page per tree
 * listing its patches with their state, age and reviews (DIR/patches-<tree>.html);
 * appends to `index_links` one HTML list item per tree page for the index.  0, or a
 * negative error (recorded).  Readers need no lock.
 */
int journey_report_html(const char *dir, const struct config *cfg, struct state *st,
			const char *today, struct strbuf *index_links);

/* A patch the review gate holds out of next, as the dashboard lists it. */
struct journey_held {
	char *subject, *author, *tree, *since, *why;
};
/*
 * The patches held tonight (journeys.txt), oldest hold first: *out and *nr (free with
 * journey_held_free()).  0, or a negative error (recorded).  Readers need no lock.
 */
int journey_held_list(const struct config *cfg, struct journey_held **out, size_t *nr);
void journey_held_free(struct journey_held *v, size_t nr);

/*
 * `gc`: journeys that ended (merged into mainline, gone) more than keep_days nights
 * before the last night followed (or `today`, if earlier) are forgotten; *pruned
 * says how many.  The caller holds the lock.
 */
int journey_gc(const struct config *cfg, const char *today, size_t *pruned);

/* `nextbot patch` (cmd_patch.c): as the commands of bot/cli/cli_int.h. */
struct cli_ctx;
int cmd_patch(const struct cli_ctx *ctx, int argc, char **argv);

/*
 * For the review queue (bot/people/reviews.c, facts.c): what the store knows of a
 * patch.  journey_facts_load() reads workdir/journeys.txt (none: no facts; 0);
 * journey_facts_find() looks a patch up by patch-id (by Message-ID when it has
 * none): 0 with *out (borrowed from f), or -1 when no journey has it.
 */
struct journey_facts;
struct journey_fact {
	const char *key;        /* the journey's lasting key: one row per patch */
	const char *first_seen; /* YYYY-MM-DD: the night nextbot first saw it */
	int ended;              /* dropped, merged into mainline or gone from its branch */
};
int journey_facts_load(struct journey_facts **out, const struct config *cfg);
int journey_facts_find(const struct journey_facts *f, const struct nb_patchid *pid,
		       const char *message_id, struct journey_fact *out);
/* The last night the store recorded (YYYY-MM-DD), or NULL: the queue's "today". */
const char *journey_facts_date(const struct journey_facts *f);
void journey_facts_free(struct journey_facts *f);
/* The same for bot/people/'s review queue (people_journeys_open_fn, _close_fn). */
struct people_journeys;
int journey_people_open(struct people_journeys *out, const struct config *cfg);
void journey_people_close(struct people_journeys *j);

#endif
