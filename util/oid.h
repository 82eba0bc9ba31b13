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

/*
 * A patch-id (git patch-id --stable): raw bytes, or none.  Merges, root commits,
 * empty and binary changes have none, and a none patch-id names no patch: two of
 * them are never "the same patch" (nb_patchid_eq() is 0), so such commits are
 * matched by commit id or Message-ID instead.  Hex only at the text edges
 * (state.json, the journey store, mails): nb_patchid_tostr(), nb_patchid_parse().
 * A plain value: copy it by assignment.
 */
struct nb_patchid {
	unsigned char raw[NB_OID_RAWSZ];
	unsigned char present;	/* 0: none */
};
#define NB_PATCHID_NONE { { 0 }, 0 }
/* Room for a patch-id's text: NB_OID_HEXSZ digits and a NUL. */
#define NB_PATCHID_STRSZ (NB_OID_HEXSZ + 1)

static inline int nb_patchid_is_none(const struct nb_patchid *p)
{
	return !p->present;
}
void nb_patchid_set_raw(struct nb_patchid *p, const unsigned char raw[NB_OID_RAWSZ]);
/* The same patch: both present and equal.  A none patch-id equals nothing. */
int nb_patchid_eq(const struct nb_patchid *a, const struct nb_patchid *b);
/* Writes the lowercase hex form into `out` ("" for none); returns `out`. */
char *nb_patchid_tostr(char out[NB_PATCHID_STRSZ], const struct nb_patchid *p);
/*
 * Sets `out` from NB_OID_HEXSZ hex digits (either case); NULL or "" is none (what
 * a record without one says) and returns 0.  Anything else: NB_EINVALID (recorded,
 * naming `s`), `out` none.
 */
int nb_patchid_parse(struct nb_patchid *out, const char *s);
/* Is `prefix` (`len` hex digits, either case, 1 <= len) a prefix of `p`'s text?
 * Never for none. */
int nb_patchid_has_prefix(const struct nb_patchid *p, const char *prefix, size_t len);
/* `p`'s text in a buffer that lives to the end of the enclosing block. */
#define NB_PATCHID_HEX(p) nb_patchid_tostr((char[NB_PATCHID_STRSZ]){ 0 }, (p))

/* A growing list of patch-ids (drops, held patches): push copies, clear frees. */
struct nb_patchid_list {
	struct nb_patchid *v;
	size_t nr, alloc;
};
#define NB_PATCHID_LIST_INIT { NULL, 0, 0 }
void nb_patchid_list_push(struct nb_patchid_list *l, const struct nb_patchid *p);
void nb_patchid_list_clear(struct nb_patchid_list *l);

#endif
