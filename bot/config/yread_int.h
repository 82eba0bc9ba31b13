/*
 * A strict YAML reader for config files (libyaml stays here): the document as a
 * tree of nodes with their line and column, and typed getters that record
 * "FILE:LINE:COL: key.path: message" (with a did-you-mean for an unknown key).
 * Anchors, aliases, tags, duplicate keys and several documents are refused.
 * bot/config/config.c reads nextbot's schema with it.
 */
#ifndef BOT_YREAD_INT_H
#define BOT_YREAD_INT_H

#include <stddef.h>
#include "util/strbuf.h"
#include "util/strvec.h"

enum ynode_kind { YN_SCALAR, YN_SEQ, YN_MAP };

struct ynode {
	enum ynode_kind kind;
	int line, col;       /* 1-based */
	char *value;         /* scalar text */
	int plain;           /* scalar was unquoted (so may be null, an int, a bool) */
	struct ynode **kids; /* seq: items; map: key, value, key, value, … */
	size_t nr, alloc;
};

/* Where a read is: the file (borrowed) and the key path of the node being read. */
struct yread {
	const char *path;
	struct strbuf kp;  /* ".trees[2].branch" */
	struct strvec *errors; /* when set, every error recorded is also appended here */
};
#define YREAD_MAX_DEPTH 32

void ynode_free(struct ynode *n);
/* A plain scalar that YAML reads as null ("", "~", "null"). */
int ynode_is_null(const struct ynode *n);
/* The value of `key` in mapping `map`, or NULL. */
const struct ynode *ynode_get(const struct ynode *map, const char *key);
/* "a scalar", "a list", "a mapping". */
const char *ynode_kind_name(const struct ynode *n);

/* Parses `data` into *out (free with ynode_free()); NB_EINVALID recorded on an error. */
int yread_tree(struct yread *r, struct ynode **out, const char *data, size_t len);
/* Records "FILE:LINE:COL: PATH[.key]: message" and returns NB_EINVALID. */
int yread_err(struct yread *r, const struct ynode *at, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The key path: push a key or an index (returns the length to pop back to). */
size_t yread_kp_push(struct yread *r, const char *key);
size_t yread_kp_push_index(struct yread *r, size_t i);
void yread_kp_pop(struct yread *r, size_t len);
/*
 * `map` (named `key`, NULL: the top) is a mapping whose keys are all in `allowed`;
 * every unknown or duplicate key is an error (the first is returned).
 */
int yread_map_check(struct yread *r, const struct ynode *map, const char *key,
		    const char *const *allowed);

/* Typed getters: 0 absent (out untouched) or set, NB_EINVALID recorded otherwise. */
enum { STR_REQUIRED = 1, STR_MULTILINE = 2 };
int yread_str(struct yread *r, const struct ynode *map, const char *key, char **out,
	      int flags);
int yread_long(struct yread *r, const struct ynode *map, const char *key, long *out,
	       long min, long max);
int yread_int(struct yread *r, const struct ynode *map, const char *key, int *out,
	      int min, int max);
int yread_bool(struct yread *r, const struct ynode *map, const char *key, int *out);
/* `names` NULL-terminated; *out gets the index of the one matched. */
int yread_enum(struct yread *r, const struct ynode *map, const char *key,
	       const char *const *names, int *out);
/* A list of strings; *nodes_out (may be NULL) gets their nodes, borrowed from the tree. */
int yread_strlist(struct yread *r, const struct ynode *map, const char *key,
		  struct strvec *out, const struct ynode ***nodes_out);

#endif
