/*
 * Known facts of confirmation: a culprit that failed `confirm` times with its
 * parent passing as often, and next with that culprit reverted, kept in the
 * verdict cache (merge/search/verdict_int.h) under keys of their trees and commands.  A
 * later night that meets the same trees takes them instead of running the
 * confirmation again.  Only confirmed outcomes are stored: a flaky pair never is.
 */
#ifndef MERGE_KNOWN_INT_H
#define MERGE_KNOWN_INT_H

#include "merge/search/probe_int.h"

/*
 * The culprit's confirmed failure under `key`: fills `failure` (initialised with
 * PROBE_RESULT_INIT; the caller releases it) with the deciding command, its exit
 * and its output as the confirmation saw them, and `date` with the night that
 * confirmed it.  Returns 1 when known, 0 when not (or the entry is damaged).
 */
int known_pair_get(const char *cache_dir, const char *key, struct probe_result *failure,
		   char date[11]);
int known_pair_put(const char *cache_dir, const char *key, const struct probe_result *failure,
		   const char *date);

/*
 * Whether next with the culprit reverted passed (or failed another way, said in
 * `note`, which may be empty): 1 known with *passes set, 0 not known.
 */
int known_revert_get(const char *cache_dir, const char *key, int *passes, struct strbuf *note);
int known_revert_put(const char *cache_dir, const char *key, int passes, const char *note);

#endif
