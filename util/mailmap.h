/*
 * A tree's .mailmap, read as git reads it (gitmailmap(5)), so that two addresses of
 * one person count as one: the review predicate (merge/repo/trailer.c) and the people
 * room (bot/people/) share it.  Pure text, no libgit2: the caller reads the file.
 *
 * The four forms of line:
 *   Proper Name <commit@email>                             the name, for that address
 *   <proper@email> <commit@email>                          the address
 *   Proper Name <proper@email> <commit@email>              both
 *   Proper Name <proper@email> Commit Name <commit@email>  both, for that name only
 * A line starting with '#' is a comment; so is whatever follows the last address
 * that is not one (git reads no more than two <...>).  Addresses and names are
 * compared ignoring ASCII case, as git does; a later line for the same key wins.
 */
#ifndef UTIL_MAILMAP_H
#define UTIL_MAILMAP_H

#include <stddef.h>

/* Past this many bytes a .mailmap is not read (the kernel's is 25 KiB). */
#define MAILMAP_MAX_BYTES ((size_t)4 << 20)

struct mailmap;

/*
 * Parses `text[0..len)` (NULs end it) into a new map (free with mailmap_free()).
 * Lines git would ignore are ignored; never fails.  *out_lines (may be NULL) gets
 * the number of lines that mapped something.
 */
struct mailmap *mailmap_parse(const char *text, size_t len, size_t *out_lines);
void mailmap_free(struct mailmap *mm);

/*
 * Maps (*name, *email) as `git check-mailmap` does: each is replaced by the
 * canonical one when the map has it, else left as it is.  `mm` may be NULL (no
 * map); *name may be NULL.  The strings set are the map's (valid until
 * mailmap_free()) or the inputs.  Returns 1 when something was mapped, 0 when not.
 */
int mailmap_map(const struct mailmap *mm, const char **name, const char **email);

/*
 * 1 when addresses `a` and `b` name the same person: equal ignoring ASCII case, or
 * equal after both were mapped through `mm` (which may be NULL).
 */
int mailmap_same_email(const struct mailmap *mm, const char *a, const char *b);

#endif
