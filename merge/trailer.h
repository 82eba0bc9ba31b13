/*
 * merge/'s face for the people a commit message names in its trailers, and the one
 * definition of "reviewed" that the review gate (bot/journey/) and the review queue
 * (bot/people/) share.  Pure text: no libgit2 type.
 */
#ifndef MERGE_TRAILER_H
#define MERGE_TRAILER_H

#include <stddef.h>

/* One "Key: Name <address>" trailer. */
struct trailer_person {
	char *key;   /* as written: "Reviewed-by", "acked-by", … */
	char *name;  /* one line, valid UTF-8, no control characters; may be "" */
	char *email; /* the part in <…>, or the whole value; one line; may be "" */
};

struct trailer_people {
	struct trailer_person *v;
	size_t nr, alloc;
};
#define TRAILER_PEOPLE_INIT { NULL, 0, 0 }

/*
 * Appends to `out` the trailers of `message` (a whole commit message, any line
 * ends, any bytes) whose key is one of keys[0..keys_nr) (ASCII case ignored; all
 * keys when keys_nr is 0), in the order written.  The trailers are those of the
 * message's last paragraph (after its subject), as `git interpret-trailers --parse`
 * reads them: "Key: value" lines, a line starting with white space continuing the
 * one before.  Every string is owned by `out`; free with trailer_people_release().
 */
void trailer_people_parse(struct trailer_people *out, const char *message,
			  const char *const *keys, size_t keys_nr);
void trailer_people_release(struct trailer_people *people);

/*
 * An address map such as a tree's .mailmap, read by its owner (bot/people/).
 * `canonical` returns the address that `name <email>` stands for, or NULL when
 * the map says nothing of it; the string lives as long as the map.
 */
struct trailer_mailmap {
	const char *(*canonical)(void *ctx, const char *name, const char *email);
	void *ctx;
};

/*
 * The one definition of "reviewed": 1 when `message` has a trailer whose key is one
 * of require[0..require_nr) (ASCII case ignored; e.g. "Reviewed-by", "Acked-by")
 * by someone other than the patch's author; 0 otherwise (also when require_nr is 0).
 * "Other" compares addresses ignoring ASCII case, each first mapped through
 * `mailmap` when one is given (NULL: none); a trailer without an address is no
 * review.  `author_name` may be NULL.  When `out_index` is not NULL and the answer
 * is 1, it gets the index in trailer_people_parse(…, require, require_nr)'s list
 * of the first review that counts.
 */
int trailer_reviewed(const char *message, const char *author_name, const char *author_email,
		     const char *const *require, size_t require_nr,
		     const struct trailer_mailmap *mailmap, size_t *out_index);

/* Is trailer `t` a review of the author by someone else?  As trailer_reviewed(). */
int trailer_person_is_other(const struct trailer_person *t, const char *author_name,
			    const char *author_email, const struct trailer_mailmap *mailmap);

/* The trailer keys nextbot knows; a trailer's `key` text is read once into one. */
enum trailer_kind {
	TRAILER_OTHER, /* a key nextbot gives no meaning */
	TRAILER_SIGNED_OFF,
	TRAILER_REVIEWED,
	TRAILER_ACKED,
	TRAILER_TESTED,
	TRAILER_CO_DEVELOPED,
};

/* "Reviewed-by" etc. as commits write it (no colon); NULL for TRAILER_OTHER. */
const char *trailer_kind_name(enum trailer_kind kind);
/* The kind of a trailer key as written (ASCII case ignored); TRAILER_OTHER else. */
enum trailer_kind trailer_kind_parse(const char *key);

#endif
