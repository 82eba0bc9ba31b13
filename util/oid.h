/*
 * Object ids (commits, trees, patch-ids) as they cross module boundaries: a typed,
 * fixed-size hex id, never a bare char array.  Inside merge/ ids are libgit2's
 * git_oid; merge/ converts at its edge (merge_oid_*() in merge/repo/repo.h).  The hash
 * length is named once here, so a SHA-256 repository is one change.
 */
#ifndef UTIL_OID_H
#define UTIL_OID_H

#include <stddef.h>

#define NB_OID_RAWSZ 20			   /* SHA-1 object ids */
#define NB_OID_HEXSZ (2 * NB_OID_RAWSZ)	   /* hex digits of an id */

/*
 * `hex` is always NUL-terminated: either empty (no id: "none", "left out") or
 * exactly NB_OID_HEXSZ lowercase hex digits.  A plain value: copy it by assignment.
 */
struct nb_oid {
	char hex[NB_OID_HEXSZ + 1];
};
#define NB_OID_INIT { { 0 } }

/* Sets `out` from exactly NB_OID_HEXSZ hex digits (either case); else NB_EINVALID
 * (recorded, naming `s`) and `out` is left empty. */
int nb_oid_parse(struct nb_oid *out, const char *s);
/* Is `s` a full id (NB_OID_HEXSZ hex digits and nothing else)? */
int nb_oid_valid(const char *s);
static inline int nb_oid_is_null(const struct nb_oid *id)
{
	return !id->hex[0];
}
void nb_oid_clear(struct nb_oid *id);
/* Equal ids; two empty ids are equal. */
int nb_oid_equal(const struct nb_oid *a, const struct nb_oid *b);

#endif
