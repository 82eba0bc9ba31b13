/* The strict YAML reader (see yread_int.h): libyaml events to a tree, typed getters. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "bot/config/yread_int.h"
#include "util/error.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* ---- the YAML tree ---------------------------------------------------------- */

void ynode_free(struct ynode *n)
{
	size_t i;

	if (!n)
		return;
	for (i = 0; i < n->nr; i++)
		ynode_free(n->kids[i]);
	free(n->kids);
	free(n->value);
	free(n);
}

static struct ynode *ynode_new(enum ynode_kind kind, yaml_mark_t mark)
{
	struct ynode *n = xcalloc(1, sizeof(*n));

	n->kind = kind;
	n->line = (int)mark.line + 1;
	n->col = (int)mark.column + 1;
	return n;
}

int ynode_is_null(const struct ynode *n)
{
	static const char *const nulls[] = { "", "~", "null", "Null", "NULL", NULL };
	size_t i;

	if (n->kind != YN_SCALAR || !n->plain)
		return 0;
	for (i = 0; nulls[i]; i++)
		if (!strcmp(n->value, nulls[i]))
			return 1;
	return 0;
}

/* ---- the loader and its messages ----------------------------------------- */


/* Records "FILE:LINE:COL: PATH[.key]: message" and returns NB_EINVALID. */
int yread_err(struct yread *ld, const struct ynode *at, const char *key, const char *fmt, ...)
{
	struct strbuf msg = STRBUF_INIT;
	size_t mark;
	va_list ap;

	strbuf_addf(&msg, "%s:%d:%d: ", ld->path, at ? at->line : 1, at ? at->col : 1);
	mark = msg.len;
	strbuf_addstr(&msg, ld->kp.len ? ld->kp.buf + 1 : "");
	if (key)
		strbuf_addf(&msg, "%s%s", ld->kp.len ? "." : "", key);
	if (msg.len > mark)
		strbuf_addstr(&msg, ": ");
	va_start(ap, fmt);
	strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	nb_error_set(NB_EINVALID, "%s", msg.buf);
	if (ld->errors && !strvec_contains(ld->errors, msg.buf))
		strvec_push(ld->errors, msg.buf);
	strbuf_release(&msg);
	return NB_EINVALID;
}

size_t yread_kp_push(struct yread *ld, const char *key)
{
	size_t len = ld->kp.len;

	strbuf_addf(&ld->kp, ".%s", key);
	return len;
}

size_t yread_kp_push_index(struct yread *ld, size_t i)
{
	size_t len = ld->kp.len;

	strbuf_addf(&ld->kp, "[%zu]", i);
	return len;
}

void yread_kp_pop(struct yread *ld, size_t len)
{
	strbuf_setlen(&ld->kp, len);
}

/* ---- events to tree ------------------------------------------------------ */

struct builder {
	struct yread *ld;
	const char *data;
	struct ynode *root;
	struct ynode *stack[YREAD_MAX_DEPTH]; /* the open collections */
	int depth;
	int docs;
};

/* The key path of the position a parse is at, from the stack of open collections. */
static void stack_path(struct strbuf *out, const struct builder *b)
{
	int i;

	for (i = 0; i < b->depth; i++) {
		const struct ynode *n = b->stack[i];

		if (n->kind == YN_SEQ)
			strbuf_addf(out, "[%zu]", n->nr ? n->nr - 1 : 0);
		else if (n->nr % 2 && n->kids[n->nr - 1]->kind == YN_SCALAR)
			strbuf_addf(out, ".%s", n->kids[n->nr - 1]->value);
		else if (n->nr >= 2 && n->kids[n->nr - 2]->kind == YN_SCALAR && i + 1 < b->depth)
			strbuf_addf(out, ".%s", n->kids[n->nr - 2]->value);
	}
}

static int build_err(struct builder *b, yaml_mark_t mark, const char *what)
{
	struct ynode at = { .line = (int)mark.line + 1, .col = (int)mark.column + 1 };

	strbuf_reset(&b->ld->kp);
	stack_path(&b->ld->kp, b);
	return yread_err(b->ld, &at, NULL, "%s", what);
}

static int syntax_err(struct builder *b, const yaml_parser_t *p)
{
	yaml_mark_t mark = p->problem_mark;
	struct strbuf what = STRBUF_INIT;
	size_t i;
	int ret;

	if (p->error == YAML_READER_ERROR) {
		/* reader errors (bad UTF-8, control characters) carry an offset, no mark */
		memset(&mark, 0, sizeof(mark));
		for (i = 0; i < p->problem_offset; i++, mark.column++) {
			if (b->data[i] == '\n') {
				mark.line++;
				mark.column = (size_t)-1;
			}
		}
	}
	strbuf_addf(&what, "malformed YAML: %s", p->problem ? p->problem : "parse error");
	if (p->context)
		strbuf_addf(&what, " (%s at line %zu)", p->context, p->context_mark.line + 1);
	ret = build_err(b, mark, what.buf);
	strbuf_release(&what);
	return ret;
}

/* Attaches n to the open collection (or makes it the root); takes ownership. */
static void attach(struct builder *b, struct ynode *n)
{
	struct ynode *parent;

	if (!b->depth) {
		ynode_free(b->root);
		b->root = n;
		return;
	}
	parent = b->stack[b->depth - 1];
	ALLOC_GROW(parent->kids, parent->nr + 1, parent->alloc);
	parent->kids[parent->nr++] = n;
}

/* Anchors are refused outright: aliases are how "billion laughs" files grow. */
static int props_ok(struct builder *b, yaml_mark_t mark, const yaml_char_t *anchor,
		      const yaml_char_t *tag, int implicit)
{
	if (anchor)
		return build_err(b, mark, "anchors and aliases are not allowed in the config");
	if (tag && !implicit)
		return build_err(b, mark, "YAML tags are not allowed in the config");
	return 0;
}

static int on_scalar(struct builder *b, const yaml_event_t *ev)
{
	struct ynode *n;
	int ret;

	ret = props_ok(b, ev->start_mark, ev->data.scalar.anchor, ev->data.scalar.tag,
			 ev->data.scalar.plain_implicit || ev->data.scalar.quoted_implicit);
	if (ret)
		return ret;
	/* a "\0" escape would cut the string where C reads it: refuse, never truncate */
	if (memchr(ev->data.scalar.value, 0, ev->data.scalar.length))
		return build_err(b, ev->start_mark,
				 "a NUL byte (\"\\0\") is not allowed in a string");
	n = ynode_new(YN_SCALAR, ev->start_mark);
	n->value = xstrndup((const char *)ev->data.scalar.value, ev->data.scalar.length);
	n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	attach(b, n);
	return 0;
}

static int on_collection(struct builder *b, const yaml_event_t *ev)
{
	int seq = ev->type == YAML_SEQUENCE_START_EVENT;
	struct ynode *n;
	int ret;

	if (seq)
		ret = props_ok(b, ev->start_mark, ev->data.sequence_start.anchor,
				 ev->data.sequence_start.tag, ev->data.sequence_start.implicit);
	else
		ret = props_ok(b, ev->start_mark, ev->data.mapping_start.anchor,
				 ev->data.mapping_start.tag, ev->data.mapping_start.implicit);
	if (ret)
		return ret;
	/* libyaml 0.2.5 has no nesting limit of its own */
	if (b->depth == YREAD_MAX_DEPTH)
		return build_err(b, ev->start_mark, "nesting deeper than 32 levels");
	n = ynode_new(seq ? YN_SEQ : YN_MAP, ev->start_mark);
	attach(b, n);
	b->stack[b->depth++] = n;
	return 0;
}

/* 1 at the end of the stream, 0 to go on, negative on error. */
static int on_event(struct builder *b, const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_STREAM_END_EVENT:
		return 1;
	case YAML_DOCUMENT_START_EVENT:
		if (++b->docs > 1)
			return build_err(b, ev->start_mark,
					   "the config must be a single YAML document");
		return 0;
	case YAML_ALIAS_EVENT:
		return build_err(b, ev->start_mark,
				   "anchors and aliases are not allowed in the config");
	case YAML_SCALAR_EVENT:
		return on_scalar(b, ev);
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		return on_collection(b, ev);
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		b->depth--;
		return 0;
	default:
		return 0;
	}
}

int yread_tree(struct yread *ld, struct ynode **out, const char *data, size_t len)
{
	struct builder b = { .ld = ld, .data = data };
	yaml_parser_t p;
	yaml_event_t ev;
	int ret = 0;

	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, (const unsigned char *)data, len);
	while (!ret) {
		if (!yaml_parser_parse(&p, &ev)) {
			ret = syntax_err(&b, &p);
			break;
		}
		ret = on_event(&b, &ev);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	strbuf_reset(&ld->kp);
	if (ret < 0) {
		ynode_free(b.root);
		return ret;
	}
	*out = b.root;
	return 0;
}

/* ---- typed readers ------------------------------------------------------- */

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, prev, tmp;
	size_t row[64];

	if (la >= 64 || lb >= 64)
		return 99;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t best = prev + (a[i - 1] != b[j - 1]);

			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			tmp = row[j];
			row[j] = best;
			prev = tmp;
		}
	}
	return row[lb];
}

static int unknown_key(struct yread *ld, const struct ynode *key, const char *const *allowed)
{
	char *as_env = xstrfmt("%s_env", key->value);
	const char *best = NULL;
	size_t i, d, best_d = 3;
	int ret;

	for (i = 0; allowed[i]; i++) {
		if (!strcmp(allowed[i], as_env)) {
			ret = yread_err(ld, key, key->value,
				    "secrets are never read from the config: put it in an "
				    "environment variable and name that variable with '%s'",
				    as_env);
			goto done;
		}
		d = edit_distance(key->value, allowed[i]);
		if (d < best_d) {
			best_d = d;
			best = allowed[i];
		}
	}
	if (best)
		ret = yread_err(ld, key, key->value, "unknown key (did you mean '%s'?)", best);
	else
		ret = yread_err(ld, key, key->value, "unknown key");
done:
	free(as_env);
	return ret;
}

const char *ynode_kind_name(const struct ynode *n)
{
	if (ynode_is_null(n))
		return "nothing";
	return n->kind == YN_SCALAR ? "a scalar" : n->kind == YN_SEQ ? "a list" : "a mapping";
}

/* Checks that map is a mapping with unique scalar keys, all in `allowed`. */
int yread_map_check(struct yread *ld, const struct ynode *map, const char *key,
		       const char *const *allowed)
{
	size_t i, j, k;
	int ret = 0, r;

	if (map->kind != YN_MAP)
		return yread_err(ld, map, key, "expected a mapping, got %s", ynode_kind_name(map));
	for (i = 0; i < map->nr; i += 2) {
		const struct ynode *k_node = map->kids[i];

		if (k_node->kind != YN_SCALAR) {
			r = yread_err(ld, k_node, key, "keys must be plain strings");
			ret = ret ? ret : r;
			continue;
		}
		for (j = 0; j < i; j += 2)
			if (map->kids[j]->kind == YN_SCALAR &&
			    !strcmp(map->kids[j]->value, k_node->value))
				break;
		if (j < i) {
			r = yread_err(ld, k_node, k_node->value, "duplicate key (first at line %d)",
				      map->kids[j]->line);
			ret = ret ? ret : r;
			continue;
		}
		if (!allowed)
			continue;
		for (k = 0; allowed[k] && strcmp(allowed[k], k_node->value); k++)
			;
		if (!allowed[k]) {
			size_t old = key ? yread_kp_push(ld, key) : ld->kp.len;

			r = unknown_key(ld, k_node, allowed);
			ret = ret ? ret : r;
			yread_kp_pop(ld, old);
		}
	}
	return ret;
}

const struct ynode *ynode_get(const struct ynode *map, const char *key)
{
	size_t i;

	/* a key that is not a scalar (a list as a key) has no text: no key matches it */
	for (i = 0; i + 1 < map->nr; i += 2)
		if (map->kids[i]->value && !strcmp(map->kids[i]->value, key))
			return map->kids[i + 1];
	return NULL;
}

static int scalar(struct yread *ld, const struct ynode *v, const char *key, int flags)
{
	const char *s;

	if (v->kind != YN_SCALAR)
		return yread_err(ld, v, key, "expected a string, got %s", ynode_kind_name(v));
	if (ynode_is_null(v) || !*v->value)
		return yread_err(ld, v, key, "must not be empty");
	for (s = v->value; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c < 0x20 && !((flags & STR_MULTILINE) && (c == '\n' || c == '\t'))) ||
		    c == 0x7f)
			return yread_err(ld, v, key, "control characters are not allowed here");
	}
	return 0;
}

/* Reads string `key` of map into *out (replacing a default).  Absent: 0, or an error. */
int yread_str(struct yread *ld, const struct ynode *map, const char *key, char **out,
		     int flags)
{
	const struct ynode *v = ynode_get(map, key);
	int ret;

	if (!v)
		return (flags & STR_REQUIRED) ? yread_err(ld, map, key, "missing (required)") : 0;
	if ((ret = scalar(ld, v, key, flags)) < 0)
		return ret;
	free(*out);
	*out = xstrdup(v->value);
	return 0;
}

int yread_long(struct yread *ld, const struct ynode *map, const char *key, long *out,
		      long min, long max)
{
	const struct ynode *v = ynode_get(map, key);
	long n;

	if (!v)
		return 0;
	if (v->kind != YN_SCALAR || !v->plain || str_to_long(v->value, &n) < 0)
		return yread_err(ld, v, key, "expected an integer, got %s",
			     v->kind == YN_SCALAR ? "a string" : ynode_kind_name(v));
	if (n < min || n > max)
		return yread_err(ld, v, key, "%ld is out of range (%ld to %ld)", n, min, max);
	*out = n;
	return 0;
}

int yread_int(struct yread *ld, const struct ynode *map, const char *key, int *out,
		     int min, int max)
{
	long n = *out;
	int ret = yread_long(ld, map, key, &n, min, max);

	*out = (int)n;
	return ret;
}

int yread_bool(struct yread *ld, const struct ynode *map, const char *key, int *out)
{
	const struct ynode *v = ynode_get(map, key);

	if (!v)
		return 0;
	if (v->kind == YN_SCALAR && v->plain &&
	    (!strcmp(v->value, "true") || !strcmp(v->value, "yes")))
		*out = 1;
	else if (v->kind == YN_SCALAR && v->plain &&
		 (!strcmp(v->value, "false") || !strcmp(v->value, "no")))
		*out = 0;
	else
		return yread_err(ld, v, key, "expected true or false");
	return 0;
}

/* An enum keyword: *out becomes its index in names. */
int yread_enum(struct yread *ld, const struct ynode *map, const char *key,
		      const char *const *names, int *out)
{
	const struct ynode *v = ynode_get(map, key);
	struct strbuf all = STRBUF_INIT;
	int i, ret;

	if (!v)
		return 0;
	if ((ret = scalar(ld, v, key, 0)) < 0)
		return ret;
	for (i = 0; names[i]; i++) {
		if (!strcmp(names[i], v->value)) {
			*out = i;
			return 0;
		}
	}
	for (i = 0; names[i]; i++)
		strbuf_addf(&all, "%s%s", i ? " | " : "", names[i]);
	ret = yread_err(ld, v, key, "'%s' is not one of: %s", v->value, all.buf);
	strbuf_release(&all);
	return ret;
}

/* A list of strings; absent or null: left empty. */
int yread_strlist(struct yread *ld, const struct ynode *map, const char *key,
			 struct strvec *out, const struct ynode ***nodes_out)
{
	const struct ynode *v = ynode_get(map, key);
	size_t i, old;
	int ret = 0;

	if (!v || ynode_is_null(v))
		return 0;
	if (v->kind != YN_SEQ)
		return yread_err(ld, v, key, "expected a list, got %s", ynode_kind_name(v));
	old = yread_kp_push(ld, key);
	for (i = 0; i < v->nr && !ret; i++) {
		size_t o2 = yread_kp_push_index(ld, i);

		ret = scalar(ld, v->kids[i], NULL, 0);
		if (!ret)
			strvec_push(out, v->kids[i]->value);
		yread_kp_pop(ld, o2);
	}
	yread_kp_pop(ld, old);
	if (!ret && nodes_out)
		*nodes_out = (const struct ynode **)v->kids;
	return ret;
}

