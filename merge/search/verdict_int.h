/*
 * The verdict cache: what a command said about a tree,
 * so that a tree already judged is never built again, tonight or later.  One
 * small file per key under the cache directory, replaced atomically.
 */
#ifndef MERGE_VERDICT_INT_H
#define MERGE_VERDICT_INT_H

#include "merge/git/sha1_int.h"
#include "util/strbuf.h"

enum verdict_kind {
	VERDICT_NONE = 0,   /* not cached */
	VERDICT_GOOD,
	VERDICT_BAD,
};

/*
 * The key of (tree object id, command string, its env, runner kind) into `out`
 * (40 hex digits and a NUL).  `env` is "KEY=VALUE" strings, NULL-terminated (may
 * be NULL); its order does not matter.  `runner` is "local", "slurm", ….
 */
void verdict_key(char out[SHA1_HEXSZ + 1], const char *tree_hex, const char *command,
		 const char *const *env, const char *runner);

/*
 * Looks `key` up in `cache_dir`: VERDICT_GOOD, VERDICT_BAD (with the exit code
 * in *exit_code if not NULL) or VERDICT_NONE (missing, unreadable or damaged:
 * a damaged entry is treated as absent, never as a verdict).
 */
enum verdict_kind verdict_get(const char *cache_dir, const char *key, int *exit_code);

/*
 * Stores a confirmed verdict (GOOD or BAD with its exit code) for `key`.  `what`
 * (may be NULL) is a human line saying what was run, kept in the file.  Callers
 * store only confirmed verdicts: never skips, timeouts, infrastructure failures,
 * nor a failure not reproduced in a pristine checkout.  Returns 0 or the file
 * error (recorded).
 */
int verdict_put(const char *cache_dir, const char *key, enum verdict_kind kind, int exit_code,
		const char *what);

/*
 * Facts: what a confirmation established about a set of trees (a culprit failing
 * and its parent passing, `confirm` times each; next with the culprit reverted),
 * kept so that a later night meeting the same trees does not run them again.
 * `key` comes from verdict_key() over a text naming the trees and the commands.
 * verdict_fact_get() fills `out` with the text stored and returns 1; 0 when there
 * is none (missing or damaged: never a fact).  Only confirmed outcomes are stored.
 */
int verdict_fact_put(const char *cache_dir, const char *key, const char *text, size_t len);
int verdict_fact_get(const char *cache_dir, const char *key, struct strbuf *out);

#endif