/*
 * `nextbot drop ID --push`: the tree's branch on its
 * remote is rewritten without the dropped patch.  Its commits since the merge base
 * with the base are replayed (merge/replay_int.h) minus the dropped ones, and minus
 * any later one that no longer applies; the result is pushed, forced, after a
 * check that the remote still has the tip that was rewritten (libgit2 1.5 has no
 * push lease).  Commits are 40-hex strings; no libgit2 type appears here.
 */
#ifndef MERGE_DROPPUSH_H
#define MERGE_DROPPUSH_H

#include "util/oid.h"
#include "merge/integrate.h"
#include "util/strvec.h"

struct repo;
struct fetch_creds;

struct droppush_result {
	int changed;            /* 0: no commit of the branch matched a drop; nothing pushed */
	struct nb_oid old_tip;       /* refs/feeds/<tree> as last fetched: what was rewritten */
	struct nb_oid new_tip;       /* the replayed tip ("" when unchanged) */
	struct strvec left_out; /* 40-hex of the commits left out, oldest first */
	struct strvec reasons;  /* one per left_out: "dropped" or why it no longer applies */
};
#define DROPPUSH_RESULT_INIT { 0, NB_OID_INIT, NB_OID_INIT, STRVEC_INIT, STRVEC_INIT }
void droppush_result_release(struct droppush_result *r);

/*
 * Rewrites refs/heads/<tree->branch> at tree->url without the patches `drops`
 * names: replays refs/feeds/<tree->name> onto its merge base with
 * refs/feeds/<base_name> (merge commits of the tree are flattened, as replay
 * does), committer `committer` ("Name <email>", now), then pushes the result
 * forced once the remote has been seen to still advertise the old tip, and moves
 * refs/feeds/<tree->name> to it (what the remote now has).  *out (initialised
 * with DROPPUSH_RESULT_INIT) is filled as far as it got and released by the caller.
 * Returns 0 (pushed, or out->changed == 0: nothing to push); NB_ENOTFOUND
 * (recorded) when the base or the tree was never fetched; NB_EREFUSED (recorded:
 * both ids) when the remote's branch moved since the last fetch, nothing pushed;
 * NB_EINVALID for a bad identity; NB_ERROR (recorded) when the repository or the
 * push failed.
 */
int droppush_tree(struct droppush_result *out, struct repo *repo, const char *base_name,
		  const struct integ_tree *tree, const struct integ_drops *drops,
		  const char *committer, const struct fetch_creds *creds);

#endif
