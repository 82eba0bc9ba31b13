/*
 * What nextbot needs to know about one commit, read once and made safe: valid
 * UTF-8 text, one-line fields without control characters, trailers parsed, the
 * patch-id computed.
 */
#ifndef MERGE_COMMITINFO_INT_H
#define MERGE_COMMITINFO_INT_H

#include "util/oid.h"
#include <git2.h>
#include <stddef.h>

struct commit_info {
	struct nb_oid id;            /* commit id, hex */
	char *author_name;      /* one line, valid UTF-8 (utf8_strip_controls) */
	char *author_email;
	char *committer_name;
	char *committer_email;
	long long author_time;  /* seconds since the epoch, UTC */
	long long commit_time;
	char *subject;          /* one line, valid UTF-8, control characters replaced */
	char *body;             /* valid UTF-8, LF line ends, may be "" */
	char *message_id;       /* from a Link:/Message-ID: trailer, NULL if none */
	struct nb_patchid patch_id;  /* none for merges, root commits, binary changes */
	int has_author_signoff; /* a Signed-off-by: with the author's address */
	char **signoffs;        /* Signed-off-by: values, valid UTF-8, one line each */
	size_t signoffs_nr;
	size_t parents_nr;
};
#define COMMIT_INFO_INIT { .id = NB_OID_INIT, .patch_id = NB_PATCHID_NONE }

/*
 * Reads commit `id` of `repo` into `out` (initialised with COMMIT_INFO_INIT or
 * released before).  The message and names are converted from the commit's
 * `encoding` header (if any) to UTF-8; invalid bytes are repaired.  Every string is
 * owned by `out`; free them with commitinfo_release().  Returns 0, NB_ENOTFOUND
 * (recorded) if there is no such commit, or NB_ERROR.  A commit without a
 * patch-id (merge, root, binary) is not an error: patch_id is none.
 */
int commitinfo_read(struct commit_info *out, git_repository *repo, const git_oid *id);
/* The same without the patch-id (patch_id none): a diff is most of a commit's reading. */
int commitinfo_read_meta(struct commit_info *out, git_repository *repo, const git_oid *id);
void commitinfo_release(struct commit_info *info);

/* "Name <email>" of the author, malloc'd (caller frees). */
char *commitinfo_author_ident(const struct commit_info *info);

#endif
