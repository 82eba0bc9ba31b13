/* Strict config loading: YAML events into a small marked tree, then a schema walk. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <yaml.h>

#include "bot/config.h"
#include "merge/fetch.h"
#include "util/cron.h"
#include "util/error.h"
#include "util/strbuf.h"
#include "util/timespec.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define CONFIG_MAX_BYTES (1024 * 1024)
#define CONFIG_MAX_DEPTH 32
#define CONFIG_MAX_SECONDS (366L * 24 * 3600)

/* ---- the YAML tree ---------------------------------------------------------- */

enum ynode_kind { YN_SCALAR, YN_SEQ, YN_MAP };

struct ynode {
	enum ynode_kind kind;
	int line, col;       /* 1-based */
	char *value;         /* scalar text */
	int plain;           /* scalar was unquoted (so may be null, an int, a bool) */
	struct ynode **kids; /* seq: items; map: key, value, key, value, … */
	size_t nr, alloc;
};

static void ynode_free(struct ynode *n)
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

static int is_null(const struct ynode *n)
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

struct loader {
	const char *path;
	struct strbuf kp;  /* key path of the node being read: ".trees[2].branch" */
	struct config *cfg;
	int *never_lines;  /* line of each never_merge pattern; 0: the default */
};

/* Records "FILE:LINE:COL: PATH[.key]: message" and returns NB_EINVALID. */
__attribute__((format(printf, 4, 5)))
static int err(struct loader *ld, const struct ynode *at, const char *key, const char *fmt, ...)
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
	strbuf_release(&msg);
	return NB_EINVALID;
}

static size_t kp_push(struct loader *ld, const char *key)
{
	size_t len = ld->kp.len;

	strbuf_addf(&ld->kp, ".%s", key);
	return len;
}

static size_t kp_push_index(struct loader *ld, size_t i)
{
	size_t len = ld->kp.len;

	strbuf_addf(&ld->kp, "[%zu]", i);
	return len;
}

static void kp_pop(struct loader *ld, size_t len)
{
	strbuf_setlen(&ld->kp, len);
}

/* ---- events to tree ------------------------------------------------------ */

struct builder {
	struct loader *ld;
	const char *data;
	struct ynode *root;
	struct ynode *stack[CONFIG_MAX_DEPTH]; /* the open collections */
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
	return err(b->ld, &at, NULL, "%s", what);
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
	if (b->depth == CONFIG_MAX_DEPTH)
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

static int yaml_tree(struct loader *ld, struct ynode **out, const char *data, size_t len)
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

static const char *const top_keys[] = {
	"workdir", "base", "trees", "never_merge", "build", "test", "build_after_each_merge",
	"on_breakage", "bisect", "deadline", "merge_identity", "runner", "git", "publish",
	"notify", "schedule", "keep_days", "inbox", "drop_push", NULL,
};

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

static int unknown_key(struct loader *ld, const struct ynode *key, const char *const *allowed)
{
	char *as_env = xstrfmt("%s_env", key->value);
	const char *best = NULL;
	size_t i, d, best_d = 3;
	int ret;

	for (i = 0; allowed[i]; i++) {
		if (!strcmp(allowed[i], as_env)) {
			ret = err(ld, key, key->value,
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
		ret = err(ld, key, key->value, "unknown key (did you mean '%s'?)", best);
	else
		ret = err(ld, key, key->value, "unknown key");
done:
	free(as_env);
	return ret;
}

static const char *kind_name(const struct ynode *n)
{
	if (is_null(n))
		return "nothing";
	return n->kind == YN_SCALAR ? "a scalar" : n->kind == YN_SEQ ? "a list" : "a mapping";
}

/* Checks that map is a mapping with unique scalar keys, all in `allowed`. */
static int map_check(struct loader *ld, const struct ynode *map, const char *key,
		       const char *const *allowed)
{
	size_t i, j, k;

	if (map->kind != YN_MAP)
		return err(ld, map, key, "expected a mapping, got %s", kind_name(map));
	for (i = 0; i < map->nr; i += 2) {
		const struct ynode *k_node = map->kids[i];

		if (k_node->kind != YN_SCALAR)
			return err(ld, k_node, key, "keys must be plain strings");
		for (j = 0; j < i; j += 2)
			if (!strcmp(map->kids[j]->value, k_node->value))
				return err(ld, k_node, k_node->value,
					     "duplicate key (first at line %d)",
					     map->kids[j]->line);
		if (!allowed)
			continue;
		for (k = 0; allowed[k] && strcmp(allowed[k], k_node->value); k++)
			;
		if (!allowed[k]) {
			size_t old = key ? kp_push(ld, key) : ld->kp.len;
			int ret = unknown_key(ld, k_node, allowed);

			kp_pop(ld, old);
			return ret;
		}
	}
	return 0;
}

static const struct ynode *map_get(const struct ynode *map, const char *key)
{
	size_t i;

	for (i = 0; i + 1 < map->nr; i += 2)
		if (!strcmp(map->kids[i]->value, key))
			return map->kids[i + 1];
	return NULL;
}

enum { STR_REQUIRED = 1, STR_MULTILINE = 2 };

static int scalar(struct loader *ld, const struct ynode *v, const char *key, int flags)
{
	const char *s;

	if (v->kind != YN_SCALAR)
		return err(ld, v, key, "expected a string, got %s", kind_name(v));
	if (is_null(v) || !*v->value)
		return err(ld, v, key, "must not be empty");
	for (s = v->value; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c < 0x20 && !((flags & STR_MULTILINE) && (c == '\n' || c == '\t'))) ||
		    c == 0x7f)
			return err(ld, v, key, "control characters are not allowed here");
	}
	return 0;
}

/* Reads string `key` of map into *out (replacing a default).  Absent: 0, or an error. */
static int get_str(struct loader *ld, const struct ynode *map, const char *key, char **out,
		     int flags)
{
	const struct ynode *v = map_get(map, key);
	int ret;

	if (!v)
		return (flags & STR_REQUIRED) ? err(ld, map, key, "missing (required)") : 0;
	if ((ret = scalar(ld, v, key, flags)) < 0)
		return ret;
	free(*out);
	*out = xstrdup(v->value);
	return 0;
}

static int get_long(struct loader *ld, const struct ynode *map, const char *key, long *out,
		      long min, long max)
{
	const struct ynode *v = map_get(map, key);
	long n;

	if (!v)
		return 0;
	if (v->kind != YN_SCALAR || !v->plain || str_to_long(v->value, &n) < 0)
		return err(ld, v, key, "expected an integer, got %s",
			     v->kind == YN_SCALAR ? "a string" : kind_name(v));
	if (n < min || n > max)
		return err(ld, v, key, "%ld is out of range (%ld to %ld)", n, min, max);
	*out = n;
	return 0;
}

static int get_int(struct loader *ld, const struct ynode *map, const char *key, int *out,
		     int min, int max)
{
	long n = *out;
	int ret = get_long(ld, map, key, &n, min, max);

	*out = (int)n;
	return ret;
}

static int get_bool(struct loader *ld, const struct ynode *map, const char *key, int *out)
{
	const struct ynode *v = map_get(map, key);

	if (!v)
		return 0;
	if (v->kind == YN_SCALAR && v->plain &&
	    (!strcmp(v->value, "true") || !strcmp(v->value, "yes")))
		*out = 1;
	else if (v->kind == YN_SCALAR && v->plain &&
		 (!strcmp(v->value, "false") || !strcmp(v->value, "no")))
		*out = 0;
	else
		return err(ld, v, key, "expected true or false");
	return 0;
}

/* An enum keyword: *out becomes its index in names. */
static int get_enum(struct loader *ld, const struct ynode *map, const char *key,
		      const char *const *names, int *out)
{
	const struct ynode *v = map_get(map, key);
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
	ret = err(ld, v, key, "'%s' is not one of: %s", v->value, all.buf);
	strbuf_release(&all);
	return ret;
}

/* A list of strings; absent or null: left empty. */
static int get_strlist(struct loader *ld, const struct ynode *map, const char *key,
			 struct strvec *out, const struct ynode ***nodes_out)
{
	const struct ynode *v = map_get(map, key);
	size_t i, old;
	int ret = 0;

	if (!v || is_null(v))
		return 0;
	if (v->kind != YN_SEQ)
		return err(ld, v, key, "expected a list, got %s", kind_name(v));
	old = kp_push(ld, key);
	for (i = 0; i < v->nr && !ret; i++) {
		size_t o2 = kp_push_index(ld, i);

		ret = scalar(ld, v->kids[i], NULL, 0);
		if (!ret)
			strvec_push(out, v->kids[i]->value);
		kp_pop(ld, o2);
	}
	kp_pop(ld, old);
	if (!ret && nodes_out)
		*nodes_out = (const struct ynode **)v->kids;
	return ret;
}

/* ---- value checks -------------------------------------------------------- */

int config_parse_duration(const char *s, long *out)
{
	long n;

	/* one parser of durations (util/timespec.c); a config's must be positive */
	if (!s || !isdigit((unsigned char)*s) || timespec_parse_duration(&n, s) < 0 || n <= 0 ||
	    n > CONFIG_MAX_SECONDS)
		return -1;
	*out = n;
	return 0;
}

static int name_ok(const char *s)
{
	if (!*s || *s == '.' || *s == '-')
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("._-", *s))
			return 0;
	return 1;
}

/* Roughly git check-ref-format for a branch name. */
static int branch_ok(const char *s)
{
	size_t len = strlen(s);

	if (!len || *s == '-' || *s == '/' || s[len - 1] == '/' || s[len - 1] == '.' ||
	    str_ends_with(s, ".lock") || strstr(s, "..") || strstr(s, "//") || strstr(s, "@{") ||
	    strstr(s, "/."))
		return 0;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || strchr("~^:?*[\\", *s))
			return 0;
	return 1;
}

static int env_name_ok(const char *s)
{
	if (!isalpha((unsigned char)*s) && *s != '_')
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return 0;
	return 1;
}

/* "Name <user@host>" */
static int identity_ok(const char *s)
{
	const char *lt = strchr(s, '<'), *at = strchr(s, '@');
	size_t len = strlen(s);

	return lt && lt > s && lt[-1] == ' ' && at && at > lt + 1 && s[len - 1] == '>' &&
	       at < s + len - 2 && !strchr(lt + 1, '<') && strchr(s, '>') == s + len - 1;
}

/* "user@host": no spaces, no angle brackets, one '@' with something on both sides. */
static int bare_address_ok(const char *s)
{
	const char *at = strchr(s, '@');

	return at && at > s && at[1] && !strchr(at + 1, '@') && !strpbrk(s, " <>\t");
}

/* Absolute path for p: "~/x" under $HOME, relative ones under the config's directory. */
static int abs_path(struct loader *ld, const struct ynode *map, const char *key, char **p)
{
	char *old = *p;

	if (!old)
		return 0;
	if (old[0] == '~' && (old[1] == '/' || !old[1])) {
		const char *home = getenv("HOME");

		if (!home || !*home)
			return err(ld, map_get(map, key), key, "'~' needs $HOME to be set");
		*p = xstrfmt("%s%s", home, old + 1);
	} else if (old[0] == '/') {
		return 0;
	} else if (!strcmp(old, ".")) {
		*p = xstrdup(ld->cfg->dir);
	} else {
		*p = xstrfmt("%s/%s", ld->cfg->dir, old + (str_starts_with(old, "./") ? 2 : 0));
	}
	free(old);
	return 0;
}

/*
 * A url that is a path starting with "./" or "../" names a repository beside the
 * config file (as workdir does), so a folder holding both can be moved whole.
 */
static int local_url(struct loader *ld, const struct ynode *map, char **url)
{
	if (*url && (str_starts_with(*url, "./") || str_starts_with(*url, "../")))
		return abs_path(ld, map, "url", url);
	return 0;
}

/* ---- sections ------------------------------------------------------------ */

static int load_tree(struct loader *ld, const struct ynode *n, const char *key,
		       struct config_tree *t, int is_base)
{
	static const char *const base_keys[] = { "name", "url", "branch", NULL };
	static const char *const tree_keys[] = { "name",     "url",   "branch",
						 "contacts", "fixes", NULL };
	const struct ynode **contacts = NULL;
	size_t i, old;
	int ret;

	t->line = n->line;
	if (is_base && is_null(n))
		return err(ld, n, key, "must not be empty: name, url and branch are required");
	if ((ret = map_check(ld, n, key, is_base ? base_keys : tree_keys)) < 0)
		return ret;
	old = key ? kp_push(ld, key) : ld->kp.len;
	if ((ret = get_str(ld, n, "name", &t->name, STR_REQUIRED)) < 0 ||
	    (ret = get_str(ld, n, "url", &t->url, STR_REQUIRED)) < 0 ||
	    (ret = local_url(ld, n, &t->url)) < 0 ||
	    (ret = get_str(ld, n, "branch", &t->branch, STR_REQUIRED)) < 0 ||
	    (ret = get_str(ld, n, "fixes", &t->fixes, 0)) < 0 ||
	    (ret = get_strlist(ld, n, "contacts", &t->contacts, &contacts)) < 0)
		goto done;
	if (!name_ok(t->name)) {
		ret = err(ld, map_get(n, "name"), "name",
			    "'%s' is not a valid name (letters, digits, '.', '_', '-')", t->name);
		goto done;
	}
	if (!branch_ok(t->branch)) {
		ret = err(ld, map_get(n, "branch"), "branch", "'%s' is not a valid branch name",
			    t->branch);
		goto done;
	}
	for (i = 0; i < t->contacts.nr; i++) {
		if (!strchr(t->contacts.v[i], '@')) {
			size_t o2 = kp_push(ld, "contacts");

			ret = err(ld, contacts[i], NULL, "'%s' is not a mail address",
				    t->contacts.v[i]);
			kp_pop(ld, o2);
			goto done;
		}
	}
	ret = abs_path(ld, n, "fixes", &t->fixes);
done:
	kp_pop(ld, old);
	return ret;
}

static int load_trees(struct loader *ld, const struct ynode *root)
{
	const struct ynode *v = map_get(root, "trees");
	struct config *cfg = ld->cfg;
	size_t i, j;
	int ret = 0;

	if (!v || is_null(v))
		return 0;
	if (v->kind != YN_SEQ)
		return err(ld, v, "trees", "expected a list of trees, got %s", kind_name(v));
	cfg->trees = xcalloc(v->nr ? v->nr : 1, sizeof(*cfg->trees));
	for (i = 0; i < v->nr && !ret; i++) {
		size_t old = kp_push(ld, "trees");

		strbuf_addf(&ld->kp, "[%zu]", i);
		cfg->trees_nr++;
		cfg->trees[i].contacts = (struct strvec)STRVEC_INIT;
		ret = load_tree(ld, v->kids[i], NULL, &cfg->trees[i], 0);
		for (j = 0; j < i && !ret; j++)
			if (!strcmp(cfg->trees[j].name, cfg->trees[i].name))
				ret = err(ld, map_get(v->kids[i], "name"), "name",
					    "duplicate tree name '%s' (first at line %d)",
					    cfg->trees[i].name, cfg->trees[j].line);
		if (!ret && !strcmp(cfg->trees[i].name, cfg->base.name))
			ret = err(ld, map_get(v->kids[i], "name"), "name",
				    "'%s' is already the base's name", cfg->trees[i].name);
		kp_pop(ld, old);
	}
	return ret;
}

static int load_commands(struct loader *ld, const struct ynode *root, const char *key,
			   struct config_command **out, size_t *nr_out)
{
	static const char *const keys[] = { "name", "command", "timeout", "env", NULL };
	const struct ynode *v = map_get(root, key);
	size_t i, j, old;
	int ret = 0;

	if (!v || is_null(v))
		return 0;
	if (v->kind != YN_SEQ)
		return err(ld, v, key, "expected a list of commands, got %s", kind_name(v));
	*out = xcalloc(v->nr ? v->nr : 1, sizeof(**out));
	for (i = 0; i < v->nr && !ret; i++) {
		const struct ynode *n = v->kids[i], *t, *env;
		struct config_command *c = &(*out)[i];

		old = kp_push(ld, key);
		strbuf_addf(&ld->kp, "[%zu]", i);
		(*nr_out)++;
		c->line = n->line;
		c->timeout = 3600;
		c->env = (struct strvec)STRVEC_INIT;
		if ((ret = map_check(ld, n, NULL, keys)) < 0 ||
		    (ret = get_str(ld, n, "name", &c->name, STR_REQUIRED)) < 0 ||
		    (ret = get_str(ld, n, "command", &c->command,
				     STR_REQUIRED | STR_MULTILINE)) < 0)
			goto next;
		if (!name_ok(c->name)) {
			ret = err(ld, map_get(n, "name"), "name",
				    "'%s' is not a valid name (letters, digits, '.', '_', '-')",
				    c->name);
			goto next;
		}
		for (j = 0; j < i; j++)
			if (!strcmp((*out)[j].name, c->name)) {
				ret = err(ld, map_get(n, "name"), "name",
					    "duplicate command name '%s' (first at line %d)",
					    c->name, (*out)[j].line);
				goto next;
			}
		if ((t = map_get(n, "timeout"))) {
			if (t->kind != YN_SCALAR ||
			    config_parse_duration(t->value, &c->timeout) < 0) {
				ret = err(ld, t, "timeout",
					    "expected a positive number of seconds or a duration "
					    "such as \"90s\", \"30m\", \"2h\"");
				goto next;
			}
		}
		if ((env = map_get(n, "env")) && !is_null(env)) {
			size_t o2;

			if ((ret = map_check(ld, env, "env", NULL)) < 0)
				goto next;
			o2 = kp_push(ld, "env");
			for (j = 0; j + 1 < env->nr && !ret; j += 2) {
				const struct ynode *k = env->kids[j], *val = env->kids[j + 1];

				if (!env_name_ok(k->value))
					ret = err(ld, k, k->value,
						    "not a valid environment variable name");
				else if (val->kind != YN_SCALAR)
					ret = err(ld, val, k->value, "expected a string, got %s",
						    kind_name(val));
				else
					strvec_pushf(&c->env, "%s=%s", k->value,
						     is_null(val) ? "" : val->value);
			}
			kp_pop(ld, o2);
		}
next:
		kp_pop(ld, old);
	}
	return ret;
}

/* never_merge, then every tree (and the base) checked against it. */
static int load_never_merge(struct loader *ld, const struct ynode *root)
{
	const struct ynode *v = map_get(root, "never_merge");
	const struct ynode **nodes = NULL;
	size_t i;
	int ret;

	if (!v) {
		strvec_push(&ld->cfg->never_merge, "mm-unstable");
		ld->never_lines = xcalloc(1, sizeof(int));
		return 0;
	}
	if ((ret = get_strlist(ld, root, "never_merge", &ld->cfg->never_merge, &nodes)) < 0)
		return ret;
	ld->never_lines = xcalloc(ld->cfg->never_merge.nr + 1, sizeof(int));
	for (i = 0; i < ld->cfg->never_merge.nr; i++)
		ld->never_lines[i] = nodes[i]->line;
	return 0;
}

static int refuse_never_merge(struct loader *ld, const struct ynode *at,
				const struct config_tree *t, const char *what)
{
	const struct config *cfg = ld->cfg;
	const char *pat = config_never_merge_match(cfg, t->name, t->branch);
	size_t i;

	if (!pat)
		return 0;
	for (i = 0; strcmp(cfg->never_merge.v[i], pat); i++)
		;
	if (!ld->never_lines[i])
		return err(ld, at, NULL,
			     "%s '%s' (branch '%s') matches never_merge pattern '%s' (the default "
			     "when never_merge is absent): nextbot never merges it",
			     what, t->name, t->branch, pat);
	return err(ld, at, NULL,
		     "%s '%s' (branch '%s') matches never_merge pattern '%s' (line %d): "
		     "nextbot never merges it",
		     what, t->name, t->branch, pat, ld->never_lines[i]);
}

static int check_never_merge(struct loader *ld, const struct ynode *root)
{
	const struct ynode *trees = map_get(root, "trees");
	const struct config *cfg = ld->cfg;
	size_t i, old;
	int ret;

	old = kp_push(ld, "base");
	ret = refuse_never_merge(ld, map_get(root, "base"), &cfg->base, "base");
	kp_pop(ld, old);
	for (i = 0; i < cfg->trees_nr && !ret; i++) {
		const struct ynode *n = trees->kids[i];
		const struct ynode *at = map_get(n, "branch");
		const char *key = "branch";

		if (config_never_merge_match(cfg, cfg->trees[i].name, NULL)) {
			at = map_get(n, "name");
			key = "name";
		}
		old = kp_push(ld, "trees");
		strbuf_addf(&ld->kp, "[%zu].%s", i, key);
		ret = refuse_never_merge(ld, at, &cfg->trees[i], "tree");
		kp_pop(ld, old);
	}
	return ret;
}

static int load_runner(struct loader *ld, const struct ynode *root)
{
	static const char *const keys[] = { "kind", "user", "partition", "srun_args", "max_jobs",
					    NULL };
	static const char *const kinds[] = { "local", "slurm", NULL };
	const struct ynode *n = map_get(root, "runner");
	struct config *cfg = ld->cfg;
	int kind = 0, ret;
	size_t old;

	if (!n || is_null(n))
		return 0;
	if ((ret = map_check(ld, n, "runner", keys)) < 0)
		return ret;
	old = kp_push(ld, "runner");
	if ((ret = get_enum(ld, n, "kind", kinds, &kind)) < 0 ||
	    (ret = get_str(ld, n, "user", &cfg->runner.user, 0)) < 0 ||
	    (ret = get_str(ld, n, "partition", &cfg->runner.partition, 0)) < 0 ||
	    (ret = get_strlist(ld, n, "srun_args", &cfg->runner.srun_args, NULL)) < 0 ||
	    (ret = get_int(ld, n, "max_jobs", &cfg->runner.max_jobs, 1, 1024)) < 0)
		goto done;
	cfg->runner.kind = (enum config_runner_kind)kind;
done:
	kp_pop(ld, old);
	return ret;
}

/* An optional duration ("90s", "10m", or seconds); *out is left alone when absent. */
static int get_duration(struct loader *ld, const struct ynode *map, const char *key,
			  long *out)
{
	const struct ynode *t = map_get(map, key);

	if (!t || is_null(t))
		return 0;
	if (t->kind != YN_SCALAR || config_parse_duration(t->value, out) < 0)
		return err(ld, t, key, "expected a positive number of seconds or a duration "
			     "such as \"90s\", \"30m\", \"2h\"");
	return 0;
}

static int get_env_name(struct loader *ld, const struct ynode *map, const char *key,
			  char **out)
{
	int ret = get_str(ld, map, key, out, 0);

	if (!ret && *out && !env_name_ok(*out))
		ret = err(ld, map_get(map, key), key,
			    "'%s' is not an environment variable name", *out);
	return ret;
}

static int load_git_publish(struct loader *ld, const struct ynode *root)
{
	static const char *const git_keys[] = { "token_env", "ssh_key", "fetch_timeout", NULL };
	static const char *const pub_keys[] = { "url", "branch", NULL };
	const struct ynode *g = map_get(root, "git"), *p = map_get(root, "publish");
	struct config *cfg = ld->cfg;
	size_t old;
	int ret = 0;

	if (g && !is_null(g)) {
		if ((ret = map_check(ld, g, "git", git_keys)) < 0)
			return ret;
		old = kp_push(ld, "git");
		if (!(ret = get_env_name(ld, g, "token_env", &cfg->git.token_env)) &&
		    !(ret = get_str(ld, g, "ssh_key", &cfg->git.ssh_key, 0)) &&
		    !(ret = abs_path(ld, g, "ssh_key", &cfg->git.ssh_key)))
			ret = get_duration(ld, g, "fetch_timeout", &cfg->git.fetch_timeout);
		kp_pop(ld, old);
		if (ret)
			return ret;
	}
	if (p && !is_null(p)) {
		if ((ret = map_check(ld, p, "publish", pub_keys)) < 0)
			return ret;
		old = kp_push(ld, "publish");
		if (!(ret = get_str(ld, p, "url", &cfg->publish.url, STR_REQUIRED)) &&
		    !(ret = get_str(ld, p, "branch", &cfg->publish.branch, 0)) &&
		    !branch_ok(cfg->publish.branch))
			ret = err(ld, map_get(p, "branch"), "branch",
				    "'%s' is not a valid branch name", cfg->publish.branch);
		kp_pop(ld, old);
	}
	return ret;
}

static int load_smtp(struct loader *ld, const struct ynode *n)
{
	static const char *const keys[] = { "url", "tls", "user", "password_env", "ca_file",
					    NULL };
	static const char *const tls_names[] = { "none", "starttls", "implicit", NULL };
	struct config *cfg = ld->cfg;
	int tls = -1, smtps, ret;
	size_t old;

	if ((ret = map_check(ld, n, "smtp", keys)) < 0)
		return ret;
	old = kp_push(ld, "smtp");
	if ((ret = get_str(ld, n, "url", &cfg->notify.smtp.url, STR_REQUIRED)) < 0 ||
	    (ret = get_enum(ld, n, "tls", tls_names, &tls)) < 0 ||
	    (ret = get_str(ld, n, "user", &cfg->notify.smtp.user, 0)) < 0 ||
	    (ret = get_env_name(ld, n, "password_env", &cfg->notify.smtp.password_env)) < 0 ||
	    (ret = get_str(ld, n, "ca_file", &cfg->notify.smtp.ca_file, 0)) < 0 ||
	    (ret = abs_path(ld, n, "ca_file", &cfg->notify.smtp.ca_file)) < 0)
		goto done;
	smtps = str_starts_with(cfg->notify.smtp.url, "smtps://");
	if (!smtps && !str_starts_with(cfg->notify.smtp.url, "smtp://")) {
		ret = err(ld, map_get(n, "url"), "url", "must start with smtp:// or smtps://");
		goto done;
	}
	if (tls < 0)
		tls = smtps ? CONFIG_TLS_IMPLICIT : CONFIG_TLS_STARTTLS;
	if (smtps != (tls == CONFIG_TLS_IMPLICIT)) {
		ret = err(ld, map_get(n, "tls"), "tls",
			    "'%s' does not fit a %s url (implicit TLS is smtps://)", tls_names[tls],
			    smtps ? "smtps://" : "smtp://");
		goto done;
	}
	cfg->notify.smtp.tls = (enum config_tls)tls;
done:
	kp_pop(ld, old);
	return ret;
}

static int load_webhooks(struct loader *ld, const struct ynode *v)
{
	static const char *const keys[] = { "url", "secret_env", NULL };
	struct config *cfg = ld->cfg;
	size_t i, old;
	int ret = 0;

	if (is_null(v))
		return 0;
	if (v->kind != YN_SEQ)
		return err(ld, v, "webhooks", "expected a list, got %s", kind_name(v));
	cfg->notify.webhooks = xcalloc(v->nr ? v->nr : 1, sizeof(*cfg->notify.webhooks));
	for (i = 0; i < v->nr && !ret; i++) {
		struct config_webhook *w = &cfg->notify.webhooks[i];
		const struct ynode *n = v->kids[i];

		old = kp_push(ld, "webhooks");
		strbuf_addf(&ld->kp, "[%zu]", i);
		cfg->notify.webhooks_nr++;
		if (!(ret = map_check(ld, n, NULL, keys)) &&
		    !(ret = get_str(ld, n, "url", &w->url, STR_REQUIRED)) &&
		    !(ret = get_env_name(ld, n, "secret_env", &w->secret_env)) &&
		    !str_starts_with(w->url, "http://") && !str_starts_with(w->url, "https://"))
			ret = err(ld, map_get(n, "url"), "url",
				    "must start with http:// or https://");
		kp_pop(ld, old);
	}
	return ret;
}

static int load_notify(struct loader *ld, const struct ynode *root)
{
	static const char *const keys[] = { "from", "list",	"operator", "report_url",
					    "remind_days", "smtp", "webhooks", NULL };
	const struct ynode *n = map_get(root, "notify"), *v;
	struct config *cfg = ld->cfg;
	size_t old;
	int ret;

	if (!n || is_null(n))
		return 0;
	if ((ret = map_check(ld, n, "notify", keys)) < 0)
		return ret;
	old = kp_push(ld, "notify");
	if ((ret = get_str(ld, n, "from", &cfg->notify.from, 0)) < 0 ||
	    (ret = get_str(ld, n, "list", &cfg->notify.list, 0)) < 0 ||
	    (ret = get_str(ld, n, "operator", &cfg->notify.operator, 0)) < 0 ||
	    (ret = get_str(ld, n, "report_url", &cfg->notify.report_url, 0)) < 0 ||
	    (ret = get_int(ld, n, "remind_days", &cfg->notify.remind_days, 0, 3650)) < 0)
		goto done;
	if (!identity_ok(cfg->notify.from) && !bare_address_ok(cfg->notify.from)) {
		ret = err(ld, map_get(n, "from"), "from",
			    "'%s' is neither \"Name <user@host>\" nor \"user@host\"",
			    cfg->notify.from);
		goto done;
	}
	if (cfg->notify.list && !strchr(cfg->notify.list, '@')) {
		ret = err(ld, map_get(n, "list"), "list", "'%s' is not a mail address",
			    cfg->notify.list);
		goto done;
	}
	if (cfg->notify.operator && !strchr(cfg->notify.operator, '@')) {
		ret = err(ld, map_get(n, "operator"), "operator", "'%s' is not a mail address",
			  cfg->notify.operator);
		goto done;
	}
	if ((v = map_get(n, "smtp")) && !is_null(v) && (ret = load_smtp(ld, v)) < 0)
		goto done;
	if ((v = map_get(n, "webhooks")))
		ret = load_webhooks(ld, v);
done:
	kp_pop(ld, old);
	return ret;
}

/* A URL `test:` may fetch from: https:// or git://, with a host. */
static int test_url_ok(const char *u)
{
	const char *host = str_starts_with(u, "https://") ? u + 8
			   : str_starts_with(u, "git://") ? u + 6
							  : NULL;

	return host && *host && *host != '/' && !strpbrk(u, " \t\\");
}

static int load_inbox(struct loader *ld, const struct ynode *root)
{
	static const char *const keys[] = { "url",	   "tls",	  "user",
					    "password_env", "ca_file",	  "poll",
					    "authserv_id",  "max_tests", "test_urls",
					    NULL };
	static const char *const tls_names[] = { "none", "starttls", "implicit", NULL };
	const struct ynode *n = map_get(root, "inbox"), **urls = NULL;
	struct config *cfg = ld->cfg;
	int tls = -1, imaps, ret;
	size_t old, i;

	if (!n || is_null(n))
		return 0;
	if ((ret = map_check(ld, n, "inbox", keys)) < 0)
		return ret;
	cfg->inbox.configured = 1;
	old = kp_push(ld, "inbox");
	if ((ret = get_str(ld, n, "url", &cfg->inbox.url, 0)) < 0 ||
	    (ret = get_enum(ld, n, "tls", tls_names, &tls)) < 0 ||
	    (ret = get_str(ld, n, "user", &cfg->inbox.user, 0)) < 0 ||
	    (ret = get_env_name(ld, n, "password_env", &cfg->inbox.password_env)) < 0 ||
	    (ret = get_str(ld, n, "ca_file", &cfg->inbox.ca_file, 0)) < 0 ||
	    (ret = abs_path(ld, n, "ca_file", &cfg->inbox.ca_file)) < 0 ||
	    (ret = get_duration(ld, n, "poll", &cfg->inbox.poll)) < 0 ||
	    (ret = get_str(ld, n, "authserv_id", &cfg->inbox.authserv_id, 0)) < 0 ||
	    (ret = get_int(ld, n, "max_tests", &cfg->inbox.max_tests, 0, 10000)) < 0 ||
	    (ret = get_strlist(ld, n, "test_urls", &cfg->inbox.test_urls, &urls)) < 0)
		goto done;
	for (i = 0; i < cfg->inbox.test_urls.nr; i++) {
		if (!test_url_ok(cfg->inbox.test_urls.v[i])) {
			size_t o2 = kp_push(ld, "test_urls");

			kp_push_index(ld, i);
			ret = err(ld, urls[i], NULL,
				  "'%s' is not an https:// or git:// URL with a host (test: "
				  "fetches nothing else)",
				  cfg->inbox.test_urls.v[i]);
			kp_pop(ld, o2);
			goto done;
		}
	}
	if (cfg->inbox.authserv_id && (!*cfg->inbox.authserv_id ||
				       strpbrk(cfg->inbox.authserv_id, " \t;()\""))) {
		ret = err(ld, map_get(n, "authserv_id"), "authserv_id",
			  "'%s' is not an authserv-id (the receiving server's name in its "
			  "Authentication-Results fields)",
			  cfg->inbox.authserv_id);
		goto done;
	}
	if (!cfg->inbox.url) {
		if (tls >= 0 || cfg->inbox.user || cfg->inbox.password_env || cfg->inbox.ca_file)
			ret = err(ld, n, NULL,
				  "tls, user, password_env and ca_file need a url (without one, "
				  "mail arrives through `nextbot mail-in`)");
		goto done;
	}
	imaps = str_starts_with(cfg->inbox.url, "imaps://");
	if (!imaps && !str_starts_with(cfg->inbox.url, "imap://")) {
		ret = err(ld, map_get(n, "url"), "url", "must start with imaps:// or imap://");
		goto done;
	}
	if (!cfg->inbox.user) {
		ret = err(ld, n, "user", "missing (required with a url): the IMAP login");
		goto done;
	}
	if (tls < 0)
		tls = imaps ? CONFIG_TLS_IMPLICIT : CONFIG_TLS_STARTTLS;
	if (imaps != (tls == CONFIG_TLS_IMPLICIT)) {
		ret = err(ld, map_get(n, "tls"), "tls",
			  "'%s' does not fit a %s url (implicit TLS is imaps://)", tls_names[tls],
			  imaps ? "imaps://" : "imap://");
		goto done;
	}
	cfg->inbox.tls = (enum config_tls)tls;
done:
	kp_pop(ld, old);
	return ret;
}

static int load_misc(struct loader *ld, const struct ynode *root)
{
	static const char *const breakage[] = { "revert-culprit", "previous-version", "drop-tree",
						NULL };
	static const char *const bisect_keys[] = { "confirm", "jobs", NULL };
	const struct ynode *b = map_get(root, "bisect");
	struct config *cfg = ld->cfg;
	struct cron_expr cron;
	int on_breakage = 0, ret;
	size_t old;

	if ((ret = get_bool(ld, root, "build_after_each_merge", &cfg->build_after_each_merge)) ||
	    (ret = get_enum(ld, root, "on_breakage", breakage, &on_breakage)) < 0 ||
	    (ret = get_int(ld, root, "keep_days", &cfg->keep_days, 1, 100000)) < 0 ||
	    (ret = get_bool(ld, root, "drop_push", &cfg->drop_push)) ||
	    (ret = get_str(ld, root, "schedule", &cfg->schedule, 0)) < 0 ||
	    (ret = get_str(ld, root, "merge_identity", &cfg->merge_identity, 0)) < 0)
		return ret;
	cfg->on_breakage = (enum config_on_breakage)on_breakage;
	if (cfg->schedule && cron_parse(&cron, cfg->schedule) < 0)
		return err(ld, map_get(root, "schedule"), "schedule",
			     "'%s' is not a 5-field cron expression (minute hour day month "
			     "weekday): %s", cfg->schedule, nb_error_last());
	if (cfg->merge_identity && !identity_ok(cfg->merge_identity))
		return err(ld, map_get(root, "merge_identity"), "merge_identity",
			     "'%s' is not of the form \"Name <user@host>\"", cfg->merge_identity);
	if (b && !is_null(b)) {
		if ((ret = map_check(ld, b, "bisect", bisect_keys)) < 0)
			return ret;
		old = kp_push(ld, "bisect");
		if (!(ret = get_int(ld, b, "confirm", &cfg->bisect.confirm, 0, 100)))
			ret = get_int(ld, b, "jobs", &cfg->bisect.jobs, 1, 256);
		kp_pop(ld, old);
	}
	return ret;
}

static int load_deadline(struct loader *ld, const struct ynode *root)
{
	struct config *cfg = ld->cfg;
	int ret = get_str(ld, root, "deadline", &cfg->deadline.text, 0);
	long s;

	if (ret || !cfg->deadline.text)
		return ret;
	if (timespec_parse_clock(&s, cfg->deadline.text) == 0) {
		cfg->deadline.kind = CONFIG_DEADLINE_CLOCK;
		cfg->deadline.seconds = s;
	} else if (config_parse_duration(cfg->deadline.text, &s) == 0) {
		cfg->deadline.kind = CONFIG_DEADLINE_DURATION;
		cfg->deadline.seconds = s;
	} else {
		return err(ld, map_get(root, "deadline"), "deadline",
			     "'%s' is neither a UTC time \"HH:MM[:SS]\" nor a duration such as "
			     "\"4h\" or \"90s\"",
			     cfg->deadline.text);
	}
	return 0;
}

/* ---- the whole file ------------------------------------------------------ */

static struct config *config_new(const char *path)
{
	struct config *cfg = xcalloc(1, sizeof(*cfg));

	cfg->path = xstrdup(path);
	cfg->never_merge = (struct strvec)STRVEC_INIT;
	cfg->base.contacts = (struct strvec)STRVEC_INIT;
	cfg->runner.srun_args = (struct strvec)STRVEC_INIT;
	cfg->build_after_each_merge = 1;
	cfg->bisect.confirm = 2;
	cfg->bisect.jobs = 1;
	cfg->runner.user = xstrdup("nobody");
	cfg->runner.max_jobs = 4;
	cfg->publish.branch = xstrdup("master");
	cfg->notify.from = xstrdup("nextbot <nextbot@localhost>");
	cfg->schedule = xstrdup("0 2 * * *");
	cfg->git.fetch_timeout = 600;
	cfg->keep_days = 60;
	cfg->workdir = xstrdup("state");
	cfg->inbox.poll = 300;
	cfg->inbox.max_tests = 10;
	cfg->inbox.test_urls = (struct strvec)STRVEC_INIT;
	return cfg;
}

static int config_dir(struct loader *ld)
{
	char *copy = xstrdup(ld->path), *slash = strrchr(copy, '/'), *real;
	int ret = 0;

	if (slash)
		slash[slash == copy ? 1 : 0] = 0;
	real = realpath(slash ? copy : ".", NULL);
	if (!real)
		ret = nb_error_errno(NB_EINVALID, "%s: cannot resolve its directory", ld->path);
	else
		ld->cfg->dir = real;
	free(copy);
	return ret;
}

static int load_root(struct loader *ld, const struct ynode *root)
{
	const struct ynode *base;
	struct config *cfg = ld->cfg;
	int ret;

	if (!root || is_null(root))
		return err(ld, root, NULL, "the config is empty");
	if ((ret = map_check(ld, root, NULL, top_keys)) < 0)
		return ret;
	if (!(base = map_get(root, "base")))
		return err(ld, root, "base", "missing (required): the mainline to build on");
	if ((ret = get_str(ld, root, "workdir", &cfg->workdir, 0)) < 0 ||
	    (ret = abs_path(ld, root, "workdir", &cfg->workdir)) < 0 ||
	    (ret = load_tree(ld, base, "base", &cfg->base, 1)) < 0 ||
	    (ret = load_trees(ld, root)) < 0 || (ret = load_never_merge(ld, root)) < 0 ||
	    (ret = check_never_merge(ld, root)) < 0 ||
	    (ret = load_commands(ld, root, "build", &cfg->build, &cfg->build_nr)) < 0 ||
	    (ret = load_commands(ld, root, "test", &cfg->test, &cfg->test_nr)) < 0 ||
	    (ret = load_misc(ld, root)) < 0 || (ret = load_deadline(ld, root)) < 0 ||
	    (ret = load_runner(ld, root)) < 0 || (ret = load_git_publish(ld, root)) < 0 ||
	    (ret = load_notify(ld, root)) < 0 || (ret = load_inbox(ld, root)) < 0)
		return ret;
	if (!cfg->merge_identity)
		cfg->merge_identity = identity_ok(cfg->notify.from)
					      ? xstrdup(cfg->notify.from)
					      : xstrfmt("nextbot <%s>", cfg->notify.from);
	return 0;
}

int config_load(struct config **out, const char *path)
{
	struct loader ld = { .path = path, .kp = STRBUF_INIT };
	struct strbuf data = STRBUF_INIT;
	struct ynode *root = NULL;
	struct stat st;
	int ret;

	*out = NULL;
	ld.cfg = config_new(path);
	if (stat(path, &st) < 0) {
		ret = nb_error_errno(NB_EINVALID, "%s: cannot read the config", path);
		goto done;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = nb_error_set(NB_EINVALID, "%s: the config is not a regular file", path);
		goto done;
	}
	if (st.st_size > CONFIG_MAX_BYTES ||
	    strbuf_read_file(&data, path, CONFIG_MAX_BYTES) < 0) {
		ret = st.st_size > CONFIG_MAX_BYTES
			      ? nb_error_set(NB_EINVALID, "%s:1:1: the config is larger than 1 MiB",
					     path)
			      : NB_EINVALID;
		if (st.st_size <= CONFIG_MAX_BYTES)
			nb_error_prefix("%s: ", path);
		goto done;
	}
	if ((ret = config_dir(&ld)) < 0 ||
	    (ret = yaml_tree(&ld, &root, data.buf, data.len)) < 0 ||
	    (ret = load_root(&ld, root)) < 0)
		goto done;
	*out = ld.cfg;
	ld.cfg = NULL;
done:
	config_free(ld.cfg);
	ynode_free(root);
	free(ld.never_lines);
	strbuf_release(&ld.kp);
	strbuf_release(&data);
	return ret < 0 ? NB_EINVALID : 0;
}

static void tree_release(struct config_tree *t)
{
	free(t->name);
	free(t->url);
	free(t->branch);
	free(t->fixes);
	strvec_clear(&t->contacts);
}

static void commands_free(struct config_command *c, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		free(c[i].name);
		free(c[i].command);
		strvec_clear(&c[i].env);
	}
	free(c);
}

void config_free(struct config *cfg)
{
	size_t i;

	if (!cfg)
		return;
	free(cfg->path);
	free(cfg->dir);
	free(cfg->workdir);
	tree_release(&cfg->base);
	for (i = 0; i < cfg->trees_nr; i++)
		tree_release(&cfg->trees[i]);
	free(cfg->trees);
	strvec_clear(&cfg->never_merge);
	commands_free(cfg->build, cfg->build_nr);
	commands_free(cfg->test, cfg->test_nr);
	free(cfg->deadline.text);
	free(cfg->merge_identity);
	free(cfg->runner.user);
	free(cfg->runner.partition);
	strvec_clear(&cfg->runner.srun_args);
	free(cfg->git.token_env);
	free(cfg->git.ssh_key);
	free(cfg->publish.url);
	free(cfg->publish.branch);
	free(cfg->notify.from);
	free(cfg->notify.list);
	free(cfg->notify.operator);
	free(cfg->notify.report_url);
	free(cfg->notify.smtp.url);
	free(cfg->notify.smtp.user);
	free(cfg->notify.smtp.password_env);
	free(cfg->notify.smtp.ca_file);
	for (i = 0; i < cfg->notify.webhooks_nr; i++) {
		free(cfg->notify.webhooks[i].url);
		free(cfg->notify.webhooks[i].secret_env);
	}
	free(cfg->notify.webhooks);
	free(cfg->inbox.url);
	free(cfg->inbox.user);
	free(cfg->inbox.password_env);
	free(cfg->inbox.ca_file);
	free(cfg->inbox.authserv_id);
	strvec_clear(&cfg->inbox.test_urls);
	free(cfg->schedule);
	free(cfg);
}

/* ---- helpers for users of the config ------------------------------------- */

const char *config_never_merge_match(const struct config *cfg, const char *name,
				     const char *branch)
{
	/* the one rule, merge/'s: the config refuses at load what the night refuses */
	return fetch_never_merge_match((const char *const *)cfg->never_merge.v, name, branch);
}

const char *config_secret(const char *env_name)
{
	const char *v;

	if (!env_name)
		return NULL;
	v = getenv(env_name);
	return v && *v ? v : NULL;
}

time_t config_deadline_at(const struct config *cfg, time_t start)
{
	time_t midnight, at;

	switch (cfg->deadline.kind) {
	case CONFIG_DEADLINE_DURATION:
		return start + cfg->deadline.seconds;
	case CONFIG_DEADLINE_CLOCK:
		midnight = start - start % 86400;
		at = midnight + cfg->deadline.seconds;
		return at > start ? at : at + 86400;
	default:
		return 0;
	}
}

const char *config_on_breakage_name(enum config_on_breakage v)
{
	static const char *const names[] = { "revert-culprit", "previous-version", "drop-tree" };

	return (unsigned)v < 3 ? names[v] : "?";
}

const char *config_runner_kind_name(enum config_runner_kind v)
{
	return v == CONFIG_RUNNER_SLURM ? "slurm" : "local";
}

const char *config_tls_name(enum config_tls v)
{
	static const char *const names[] = { "none", "starttls", "implicit" };

	return (unsigned)v < 3 ? names[v] : "?";
}
