/* Strict config loading: YAML events into a small marked tree, then a schema walk. */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bot/config/config.h"
#include "bot/config/yread_int.h"
#include "merge/transport/transport.h"
#include "util/cron.h"
#include "util/error.h"
#include "util/size.h"
#include "util/strbuf.h"
#include "util/timespec.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define CONFIG_MAX_BYTES (1024 * 1024)
#define CONFIG_MAX_SECONDS (366L * 24 * 3600)

struct loader {
	struct yread r;
	struct config *cfg;
	int *never_lines;  /* line of each never_merge pattern; 0: the default */
};

static const char *const top_keys[] = {
	"workdir", "base", "trees", "never_merge", "build", "test", "build_after_each_merge",
	"on_breakage", "bisect", "deadline", "merge_identity", "runner", "git", "publish",
	"notify", "schedule", "keep_days", "inbox", "drop_push", "maintainers", "watch",
	"journey", "review_gate", NULL,
};

/* Keeps the first error of several checks that each report their own. */
static void keep(int *ret, int r)
{
	if (r < 0 && *ret >= 0)
		*ret = r;
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

/* A tree name is a ref component (refs/feeds/<name>): git check-ref-format's rules too. */
static int tree_name_ok(const char *s)
{
	size_t len = strlen(s);

	return name_ok(s) && !strstr(s, "..") && s[len - 1] != '.' && !str_ends_with(s, ".lock");
}

/*
 * "scheme://user:password@host/…": a password in a URL is written wherever the URL
 * is (state, run files, merge.log, the log).  scp-like "git@host:path" has none.
 */
static int url_has_password(const char *url)
{
	const char *p = strstr(url, "://"), *end, *at;

	if (!p)
		return 0;
	p += 3;
	end = p + strcspn(p, "/?#");
	at = memchr(p, '@', (size_t)(end - p));
	while (at && memchr(at + 1, '@', (size_t)(end - at - 1)))
		at = memchr(at + 1, '@', (size_t)(end - at - 1));
	return at && memchr(p, ':', (size_t)(at - p)) != NULL;
}

static int check_url(struct loader *ld, const struct ynode *map, const char *key,
		       const char *url, const char *instead)
{
	if (!url || !url_has_password(url))
		return 0;
	return yread_err(&ld->r, ynode_get(map, key), key,
		     "holds a password: it would be written to the state, the run's files, "
		     "merge.log and the log; put it in an environment variable and name it "
		     "with %s", instead);
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
			return yread_err(&ld->r, ynode_get(map, key), key,
					 "'~' needs $HOME to be set");
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
	if (is_base && ynode_is_null(n))
		return yread_err(&ld->r, n, key,
				 "must not be empty: name, url and branch are required");
	/* every key is checked whatever went wrong with another: check-config names all */
	if ((ret = yread_map_check(&ld->r, n, key, is_base ? base_keys : tree_keys)) < 0 &&
	    n->kind != YN_MAP)
		return ret;
	old = key ? yread_kp_push(&ld->r, key) : ld->r.kp.len;
	keep(&ret, yread_str(&ld->r, n, "name", &t->name, STR_REQUIRED));
	keep(&ret, yread_str(&ld->r, n, "url", &t->url, STR_REQUIRED));
	keep(&ret, local_url(ld, n, &t->url));
	keep(&ret, yread_str(&ld->r, n, "branch", &t->branch, STR_REQUIRED));
	keep(&ret, yread_str(&ld->r, n, "fixes", &t->fixes, 0));
	keep(&ret, yread_strlist(&ld->r, n, "contacts", &t->contacts, &contacts));
	if (t->name && !tree_name_ok(t->name))
		keep(&ret, yread_err(&ld->r, ynode_get(n, "name"), "name",
				     "'%s' is not a valid tree name (letters, digits, '.', "
				     "'_', '-'; it names a ref, so no \"..\", and no '.' or "
				     "\".lock\" at the end)", t->name));
	if (t->url)
		keep(&ret, check_url(ld, n, "url", t->url, "git.token_env"));
	if (t->branch && !branch_ok(t->branch))
		keep(&ret, yread_err(&ld->r, ynode_get(n, "branch"), "branch",
				     "'%s' is not a valid branch name", t->branch));
	for (i = 0; contacts && i < t->contacts.nr; i++) {
		if (!strchr(t->contacts.v[i], '@')) {
			size_t o2 = yread_kp_push(&ld->r, "contacts");

			keep(&ret, yread_err(&ld->r, contacts[i], NULL,
					     "'%s' is not a mail address", t->contacts.v[i]));
			yread_kp_pop(&ld->r, o2);
		}
	}
	keep(&ret, abs_path(ld, n, "fixes", &t->fixes));
	yread_kp_pop(&ld->r, old);
	return ret;
}

static int load_trees(struct loader *ld, const struct ynode *root)
{
	const struct ynode *v = ynode_get(root, "trees");
	struct config *cfg = ld->cfg;
	size_t i, j;
	int ret = 0;

	if (!v || ynode_is_null(v))
		return 0;
	if (v->kind != YN_SEQ)
		return yread_err(&ld->r, v, "trees", "expected a list of trees, got "
				"%s", ynode_kind_name(v));
	cfg->trees = xcalloc(v->nr ? v->nr : 1, sizeof(*cfg->trees));
	/* every tree is read, so that check-config names every wrong one */
	for (i = 0; i < v->nr; i++) {
		size_t old = yread_kp_push(&ld->r, "trees");
		int r;

		strbuf_addf(&ld->r.kp, "[%zu]", i);
		cfg->trees_nr++;
		cfg->trees[i].contacts = (struct strvec)STRVEC_INIT;
		r = load_tree(ld, v->kids[i], NULL, &cfg->trees[i], 0);
		for (j = 0; j < i && cfg->trees[i].name; j++)
			if (cfg->trees[j].name && !strcmp(cfg->trees[j].name, cfg->trees[i].name)) {
				keep(&r, yread_err(&ld->r, ynode_get(v->kids[i], "name"), "name",
						   "duplicate tree name '%s' (first at line %d)",
						   cfg->trees[i].name, cfg->trees[j].line));
				break;
			}
		if (cfg->trees[i].name && cfg->base.name &&
		    !strcmp(cfg->trees[i].name, cfg->base.name))
			keep(&r, yread_err(&ld->r, ynode_get(v->kids[i], "name"), "name",
					   "'%s' is already the base's name", cfg->trees[i].name));
		keep(&ret, r);
		yread_kp_pop(&ld->r, old);
	}
	return ret;
}

/* Matrix values name cells and worker folders: "x86_64", "gcc-12", "5.10", "lto+". */
static int matrix_value_ok(const char *s)
{
	if (!*s || *s == '.' || *s == '-')
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("._+-", *s))
			return 0;
	return 1;
}

static int env_sets(const struct strvec *env, const char *key)
{
	size_t i, n = strlen(key);

	for (i = 0; i < env->nr; i++)
		if (!strncmp(env->v[i], key, n) && env->v[i][n] == '=')
			return 1;
	return 0;
}

/* One axis: `key: [v1, v2, …]`. */
static int load_axis(struct loader *ld, const struct ynode *key, const struct ynode *v,
		       struct config_command *c, struct config_axis *a)
{
	size_t i, j, old;
	int ret = 0;

	a->key = xstrdup(key->value);
	a->values = (struct strvec)STRVEC_INIT;
	a->line = key->line;
	a->col = key->col;
	if (!env_name_ok(key->value))
		return yread_err(&ld->r, key, key->value, "not a valid environment variable name");
	if (!strncmp(key->value, "NEXTBOT_", 8))
		return yread_err(&ld->r, key, key->value,
				 "NEXTBOT_* variables are set by nextbot itself");
	if (env_sets(&c->env, key->value))
		return yread_err(&ld->r, key, key->value, "also set in this entry's env: a matrix "
				 "key varies from cell to cell, env does not");
	if (v->kind != YN_SEQ)
		return yread_err(&ld->r, v, key->value, "expected a list of values, got %s",
				 ynode_kind_name(v));
	if (!v->nr)
		return yread_err(&ld->r, v, key->value, "an empty axis: list at least one value");
	old = yread_kp_push(&ld->r, key->value);
	for (i = 0; i < v->nr && !ret; i++) {
		const struct ynode *item = v->kids[i];
		size_t o2 = yread_kp_push_index(&ld->r, i);

		if (item->kind != YN_SCALAR || ynode_is_null(item)) {
			ret = yread_err(&ld->r, item, NULL, "expected a string, got %s",
					ynode_kind_name(item));
			goto next;
		}
		if (!matrix_value_ok(item->value)) {
			ret = yread_err(&ld->r, item, NULL,
					"'%s' is not a valid matrix value (letters, digits, '.', "
					"'_', '+', '-'): it names cells and their worker folders",
					item->value);
			goto next;
		}
		for (j = 0; j < i; j++)
			if (!strcmp(v->kids[j]->value, item->value)) {
				ret = yread_err(&ld->r, item, NULL,
						"duplicate value '%s' (first at line %d)",
						item->value, v->kids[j]->line);
				goto next;
			}
		strvec_push(&a->values, item->value);
next:
		yread_kp_pop(&ld->r, o2);
	}
	yread_kp_pop(&ld->r, old);
	return ret;
}

/* An entry's `matrix: {KEY: [values], …}`; at most CONFIG_MAX_CELLS cells. */
static int load_matrix(struct loader *ld, const struct ynode *n, struct config_command *c)
{
	const struct ynode *m = ynode_get(n, "matrix");
	size_t i, old, cells = 1;
	int ret;

	if (!m || ynode_is_null(m))
		return 0;
	if ((ret = yread_map_check(&ld->r, m, "matrix", NULL)) < 0)
		return ret;
	if (!m->nr)
		return yread_err(&ld->r, m, "matrix", "an empty matrix: give each key its list "
				 "of values, or leave the matrix out");
	c->matrix = xcalloc(m->nr / 2, sizeof(*c->matrix));
	old = yread_kp_push(&ld->r, "matrix");
	for (i = 0; i + 1 < m->nr && !ret; i += 2) {
		ret = load_axis(ld, m->kids[i], m->kids[i + 1], c, &c->matrix[c->matrix_nr++]);
		cells *= ret ? 1 : c->matrix[c->matrix_nr - 1].values.nr;
		if (!ret && cells > CONFIG_MAX_CELLS)
			ret = yread_err(&ld->r, m->kids[i], m->kids[i]->value,
				    "the matrix has more than %d cells: each cell is a build of "
				    "its own every night", CONFIG_MAX_CELLS);
	}
	yread_kp_pop(&ld->r, old);
	return ret;
}

static int load_commands(struct loader *ld, const struct ynode *root, const char *key,
			   struct config_command **out, size_t *nr_out)
{
	static const char *const keys[] = { "name", "command", "timeout", "env", "matrix",
					    "incremental", NULL };
	const struct ynode *v = ynode_get(root, key);
	size_t i, j, old;
	int ret = 0;

	if (!v || ynode_is_null(v))
		return 0;
	if (v->kind != YN_SEQ)
		return yread_err(&ld->r, v, key, "expected a list of commands, got "
				"%s", ynode_kind_name(v));
	*out = xcalloc(v->nr ? v->nr : 1, sizeof(**out));
	for (i = 0; i < v->nr; i++) {
		const struct ynode *n = v->kids[i], *t, *env;
		struct config_command *c = &(*out)[i];
		int first = ret;

		old = yread_kp_push(&ld->r, key);
		strbuf_addf(&ld->r.kp, "[%zu]", i);
		(*nr_out)++;
		c->line = n->line;
		c->timeout = 3600;
		c->env = (struct strvec)STRVEC_INIT;
		/* every key of the entry is checked whatever went wrong with another */
		ret = yread_map_check(&ld->r, n, NULL, keys);
		if (ret < 0 && n->kind != YN_MAP)
			goto next;
		keep(&ret, yread_str(&ld->r, n, "name", &c->name, STR_REQUIRED));
		keep(&ret, yread_str(&ld->r, n, "command", &c->command,
				     STR_REQUIRED | STR_MULTILINE));
		keep(&ret, yread_bool(&ld->r, n, "incremental", &c->incremental));
		if (c->name && !name_ok(c->name))
			keep(&ret, yread_err(&ld->r, ynode_get(n, "name"), "name",
					     "'%s' is not a valid name (letters, digits, '.', '_', "
					     "'-')", c->name));
		for (j = 0; c->name && j < i; j++)
			if ((*out)[j].name && !strcmp((*out)[j].name, c->name)) {
				keep(&ret, yread_err(&ld->r, ynode_get(n, "name"), "name",
						     "duplicate command name '%s' (first at line "
						     "%d)", c->name, (*out)[j].line));
				break;
			}
		if ((t = ynode_get(n, "timeout")) &&
		    (t->kind != YN_SCALAR || config_parse_duration(t->value, &c->timeout) < 0))
			keep(&ret, yread_err(&ld->r, t, "timeout",
					     "expected a positive number of seconds or a duration "
					     "such as \"90s\", \"30m\", \"2h\""));
		if ((env = ynode_get(n, "env")) && !ynode_is_null(env)) {
			size_t o2;
			int r = yread_map_check(&ld->r, env, "env", NULL);

			keep(&ret, r);
			o2 = yread_kp_push(&ld->r, "env");
			for (j = 0; env->kind == YN_MAP && j + 1 < env->nr; j += 2) {
				const struct ynode *k = env->kids[j], *val = env->kids[j + 1];

				if (k->kind != YN_SCALAR)
					continue; /* named by yread_map_check() */
				if (!env_name_ok(k->value))
					keep(&ret, yread_err(&ld->r, k, k->value,
							     "not a valid environment variable "
							     "name"));
				else if (val->kind != YN_SCALAR)
					keep(&ret, yread_err(&ld->r, val, k->value, "expected a "
							     "string, got %s",
							     ynode_kind_name(val)));
				else if (!r)
					strvec_pushf(&c->env, "%s=%s", k->value,
						     ynode_is_null(val) ? "" : val->value);
			}
			yread_kp_pop(&ld->r, o2);
		}
		keep(&ret, load_matrix(ld, n, c));
next:
		yread_kp_pop(&ld->r, old);
		if (first < 0)
			ret = first; /* the first error stays the one returned */
	}
	return ret;
}

/* ---- the night's cells: the product of the matrix keys' values ----------- */

/* The first entry with a matrix (its keys order every cell name), or NULL. */
static const struct config_command *first_matrix(const struct config *cfg)
{
	size_t i;

	for (i = 0; i < cfg->build_nr; i++)
		if (cfg->build[i].matrix_nr)
			return &cfg->build[i];
	for (i = 0; i < cfg->test_nr; i++)
		if (cfg->test[i].matrix_nr)
			return &cfg->test[i];
	return NULL;
}

static const struct config_axis *axis_find(const struct config_command *c, const char *key)
{
	size_t i;

	for (i = 0; i < c->matrix_nr; i++)
		if (!strcmp(c->matrix[i].key, key))
			return &c->matrix[i];
	return NULL;
}

/* Every matrix has the first one's keys; `union_values` gets each key's values. */
static int same_keys(struct loader *ld, const char *list, struct config_command *c, size_t nr,
		       const struct config_command *first, struct strvec *union_values)
{
	size_t i, k, v;

	for (i = 0; i < nr; i++) {
		const struct config_axis *odd = NULL;

		if (!c[i].matrix_nr)
			continue;
		for (k = 0; k < c[i].matrix_nr && !odd; k++)
			if (!axis_find(first, c[i].matrix[k].key))
				odd = &c[i].matrix[k];
		for (k = 0; k < first->matrix_nr && !odd; k++)
			if (!axis_find(&c[i], first->matrix[k].key))
				odd = &c[i].matrix[0];
		if (odd) {
			struct ynode at = { .line = odd->line, .col = odd->col };

			strbuf_reset(&ld->r.kp);
			strbuf_addf(&ld->r.kp, ".%s[%zu]", list, i);
			return yread_err(&ld->r, &at, "matrix",
					 "its keys differ from those of the first matrix (line "
					 "%d): every matrix of a config has the same keys",
					 first->line);
		}
		for (k = 0; k < first->matrix_nr; k++) {
			const struct config_axis *a = axis_find(&c[i], first->matrix[k].key);

			for (v = 0; v < a->values.nr; v++)
				if (!strvec_contains(&union_values[k], a->values.v[v]))
					strvec_push(&union_values[k], a->values.v[v]);
		}
	}
	return 0;
}

/* 1 when some entry with a matrix lists the cell's values. */
static int cell_used(const struct config *cfg, const struct config_cell *cell)
{
	size_t i;

	for (i = 0; i < cfg->build_nr; i++)
		if (cfg->build[i].matrix_nr && config_cell_has(cell, &cfg->build[i]))
			return 1;
	for (i = 0; i < cfg->test_nr; i++)
		if (cfg->test[i].matrix_nr && config_cell_has(cell, &cfg->test[i]))
			return 1;
	return 0;
}

static int load_cells(struct loader *ld)
{
	struct config *cfg = ld->cfg;
	const struct config_command *first = first_matrix(cfg);
	struct strvec *values;
	size_t *at, k, total = 1, i;
	int ret;

	if (!first) {
		cfg->cells = xcalloc(1, sizeof(*cfg->cells));
		cfg->cells[0].name = xstrdup("");
		cfg->cells[0].env = (struct strvec)STRVEC_INIT;
		cfg->cells_nr = 1;
		return 0;
	}
	values = xcalloc(first->matrix_nr, sizeof(*values));
	at = xcalloc(first->matrix_nr, sizeof(*at));
	for (k = 0; k < first->matrix_nr; k++)
		values[k] = (struct strvec)STRVEC_INIT;
	if ((ret = same_keys(ld, "build", cfg->build, cfg->build_nr, first, values)) < 0 ||
	    (ret = same_keys(ld, "test", cfg->test, cfg->test_nr, first, values)) < 0)
		goto done;
	for (k = 0; k < first->matrix_nr; k++)
		total *= values[k].nr;
	if (total > CONFIG_MAX_CELLS) {
		struct ynode pos = { .line = first->matrix[0].line, .col = first->matrix[0].col };

		strbuf_reset(&ld->r.kp);
		ret = yread_err(&ld->r, &pos, NULL,
				"the matrices make %zu cells, more than %d: each cell is a "
				"build of its own every night", total, CONFIG_MAX_CELLS);
		goto done;
	}
	cfg->cells = xcalloc(total, sizeof(*cfg->cells));
	for (i = 0; i < total; i++) {
		struct config_cell *cell = &cfg->cells[cfg->cells_nr];
		struct strbuf name = STRBUF_INIT;

		cell->env = (struct strvec)STRVEC_INIT;
		for (k = 0; k < first->matrix_nr; k++) {
			strbuf_addf(&name, "%s%s=%s", k ? "," : "", first->matrix[k].key,
				    values[k].v[at[k]]);
			strvec_pushf(&cell->env, "%s=%s", first->matrix[k].key, values[k].v[at[k]]);
		}
		cell->name = strbuf_detach(&name, NULL);
		if (cell_used(cfg, cell)) {
			cfg->cells_nr++;
		} else {
			free(cell->name);
			strvec_clear(&cell->env);
		}
		/* the next combination, the last key fastest */
		for (k = first->matrix_nr; k-- > 0;) {
			if (++at[k] < values[k].nr)
				break;
			at[k] = 0;
		}
	}
done:
	for (k = 0; k < first->matrix_nr; k++)
		strvec_clear(&values[k]);
	free(values);
	free(at);
	return ret;
}

/* never_merge, then every tree (and the base) checked against it. */
static int load_never_merge(struct loader *ld, const struct ynode *root)
{
	const struct ynode *v = ynode_get(root, "never_merge");
	const struct ynode **nodes = NULL;
	size_t i;
	int ret;

	if (!v) {
		strvec_push(&ld->cfg->never_merge, "mm-unstable");
		ld->never_lines = xcalloc(1, sizeof(int));
		return 0;
	}
	if ((ret = yread_strlist(&ld->r, root, "never_merge", &ld->cfg->never_merge, &nodes)) < 0)
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
		return yread_err(&ld->r, at, NULL,
			     "%s '%s' (branch '%s') matches never_merge pattern '%s' (the default "
			     "when never_merge is absent): nextbot never merges it",
			     what, t->name, t->branch, pat);
	return yread_err(&ld->r, at, NULL,
		     "%s '%s' (branch '%s') matches never_merge pattern '%s' (line %d): "
		     "nextbot never merges it",
		     what, t->name, t->branch, pat, ld->never_lines[i]);
}

static int check_never_merge(struct loader *ld, const struct ynode *root)
{
	const struct ynode *trees = ynode_get(root, "trees");
	const struct config *cfg = ld->cfg;
	size_t i, old;
	int ret;

	old = yread_kp_push(&ld->r, "base");
	ret = refuse_never_merge(ld, ynode_get(root, "base"), &cfg->base, "base");
	yread_kp_pop(&ld->r, old);
	for (i = 0; i < cfg->trees_nr && !ret; i++) {
		const struct ynode *n = trees->kids[i];
		const struct ynode *at = ynode_get(n, "branch");
		const char *key = "branch";

		if (config_never_merge_match(cfg, cfg->trees[i].name, NULL)) {
			at = ynode_get(n, "name");
			key = "name";
		}
		old = yread_kp_push(&ld->r, "trees");
		strbuf_addf(&ld->r.kp, "[%zu].%s", i, key);
		ret = refuse_never_merge(ld, at, &cfg->trees[i], "tree");
		yread_kp_pop(&ld->r, old);
	}
	return ret;
}

/* An optional size ("8G", "512MiB", bytes); *out is left alone when absent. */
static int get_size(struct loader *ld, const struct ynode *map, const char *key,
		      long long *out)
{
	const struct ynode *t = ynode_get(map, key);

	if (!t || ynode_is_null(t))
		return 0;
	if (t->kind != YN_SCALAR || size_parse(out, t->value) < 0)
		return yread_err(&ld->r, t, key,
				 "expected a size such as \"512M\", \"8G\" or a number of bytes");
	return 0;
}

static int get_duration(struct loader *ld, const struct ynode *map, const char *key,
			  long *out);

/* A list of paths, made absolute as abs_path() does. */
static int get_paths(struct loader *ld, const struct ynode *map, const char *key,
		       struct strvec *out)
{
	const struct ynode **nodes = NULL;
	size_t i;
	int ret = yread_strlist(&ld->r, map, key, out, &nodes);

	for (i = 0; !ret && i < out->nr; i++) {
		struct ynode tmp = { .kind = YN_MAP };
		const struct ynode *kids[2];

		/* abs_path() works on a map's key: give it a map of one */
		kids[0] = &(struct ynode){ .kind = YN_SCALAR, .value = (char *)key };
		kids[1] = nodes[i];
		tmp.kids = (struct ynode **)kids;
		tmp.nr = 2;
		ret = abs_path(ld, &tmp, key, &out->v[i]);
	}
	return ret;
}

/* runner.devices: device files under /dev/ the box shows (e.g. /dev/kvm for QEMU). */
static int get_devices(struct loader *ld, const struct ynode *map)
{
	const struct ynode **nodes = NULL;
	size_t i;
	int ret = yread_strlist(&ld->r, map, "devices", &ld->cfg->runner.devices, &nodes);

	for (i = 0; !ret && i < ld->cfg->runner.devices.nr; i++) {
		const char *d = ld->cfg->runner.devices.v[i];

		if (strncmp(d, "/dev/", 5) || strstr(d, "/../") || !d[5])
			ret = yread_err(&ld->r, nodes[i], "devices",
					"'%s' is not a device under /dev/ (e.g. /dev/kvm)", d);
	}
	return ret;
}

static int load_limits(struct loader *ld, const struct ynode *n)
{
	static const char *const keys[] = { "memory", "processes", "cpu", "file_size", NULL };
	struct config *cfg = ld->cfg;
	size_t old;
	int ret;

	if (ynode_is_null(n))
		return 0;
	if ((ret = yread_map_check(&ld->r, n, "limits", keys)) < 0)
		return ret;
	old = yread_kp_push(&ld->r, "limits");
	if (!(ret = get_size(ld, n, "memory", &cfg->runner.limits.memory)) &&
	    !(ret = yread_long(&ld->r, n, "processes", &cfg->runner.limits.processes, 16,
			       1 << 22)) &&
	    !(ret = get_duration(ld, n, "cpu", &cfg->runner.limits.cpu)))
		ret = get_size(ld, n, "file_size", &cfg->runner.limits.file_size);
	if (!ret && cfg->runner.limits.memory < (16LL << 20))
		ret = yread_err(&ld->r, ynode_get(n, "memory"), "memory", "must be at least 16M");
	yread_kp_pop(&ld->r, old);
	return ret;
}

/*
 * runner.cache.listen: HOST:PORT or [V6]:PORT, a port 0-65535 (0: any free one),
 * and a host the nodes can dial (not the wildcard address).
 */
static int check_listen(struct loader *ld, const struct ynode *n)
{
	const char *v = ld->cfg->runner.cache.listen, *colon, *end;
	size_t hlen;
	long port;

	if (!v)
		return 0;
	colon = strrchr(v, ':');
	end = colon;
	if (v[0] == '[' && colon && colon > v && colon[-1] == ']') {
		v++;
		end = colon - 1;
	} else if (colon && memchr(v, ':', (size_t)(colon - v))) {
		colon = NULL; /* a bare IPv6 address: brackets needed */
	}
	hlen = colon ? (size_t)(end - v) : 0;
	if (!colon || !hlen || str_to_long(colon + 1, &port) < 0 || port < 0 || port > 65535)
		return yread_err(&ld->r, ynode_get(n, "listen"), "listen",
				 "not HOST:PORT (a port 0-65535; [ADDR]:PORT for IPv6)");
	if ((hlen == 7 && !strncmp(v, "0.0.0.0", 7)) || (hlen == 2 && !strncmp(v, "::", 2)))
		return yread_err(&ld->r, ynode_get(n, "listen"), "listen",
				 "name the address the nodes reach this host at, not the "
				 "wildcard");
	return 0;
}

/*
 * runner.cache: {dir, max, listen}.  The store must be out of every build's reach,
 * which only the sandbox gives; and the service's socket is on this host (a cluster's
 * nodes reach it over TCP at listen).  The old spelling `kind: ccache` is accepted
 * with a warning: the cache is nextbot's own.
 */
static int load_cache(struct loader *ld, const struct ynode *n)
{
	static const char *const keys[] = { "kind", "dir", "max", "listen", NULL };
	static const char *const kinds[] = { "ccache", NULL };
	const struct ynode *k = ynode_get(n, "kind");
	struct config *cfg = ld->cfg;
	int kind = -1, ret;
	size_t old;

	if (ynode_is_null(n))
		return 0;
	if ((ret = yread_map_check(&ld->r, n, "cache", keys)) < 0)
		return ret;
	old = yread_kp_push(&ld->r, "cache");
	if ((ret = yread_enum(&ld->r, n, "kind", kinds, &kind)) < 0 ||
	    (ret = yread_str(&ld->r, n, "dir", &cfg->runner.cache.dir, 0)) < 0 ||
	    (ret = abs_path(ld, n, "dir", &cfg->runner.cache.dir)) < 0 ||
	    (ret = get_size(ld, n, "max", &cfg->runner.cache.max)) < 0 ||
	    (ret = yread_str(&ld->r, n, "listen", &cfg->runner.cache.listen, 0)) < 0 ||
	    (ret = check_listen(ld, n)) < 0)
		goto done;
	if (k)
		strvec_pushf(&cfg->warnings,
			     "%s:%d:%d: runner.cache.kind: the cache is nextbot's own (a compile "
			     "service of its own and the nextbot-cc shims), not ccache; the key is "
			     "not needed: runner.cache: {dir, max}", ld->r.path, k->line, k->col);
	cfg->runner.cache.on = 1;
	if (!cfg->runner.cache.dir)
		cfg->runner.cache.dir = xstrfmt("%s/ccache", cfg->workdir);
	if (!cfg->runner.cache.max)
		cfg->runner.cache.max = 5LL << 30;
	if (cfg->runner.cache.max < (1LL << 20))
		ret = yread_err(&ld->r, ynode_get(n, "max"), "max", "must be at least 1M");
done:
	yread_kp_pop(&ld->r, old);
	return ret;
}

/* The cache needs the box (nothing else keeps builds from its store) and this host. */
static int check_cache(struct loader *ld, const struct ynode *n)
{
	const struct ynode *at = ynode_get(n, "cache");
	struct config *cfg = ld->cfg;

	if (!cfg->runner.cache.on)
		return 0;
	if (cfg->runner.sandbox != CONFIG_SANDBOX_BWRAP)
		return yread_err(&ld->r, at, "cache",
				 "needs runner.sandbox: bwrap: without the sandbox nothing keeps "
				 "a build from writing what another build's compile reads");
	if (cfg->runner.kind != CONFIG_RUNNER_LOCAL && !cfg->runner.cache.listen)
		return yread_err(&ld->r, at, "cache",
				 "needs listen: HOST:PORT on a cluster: the nodes reach the "
				 "compile service over TCP there (its socket is this host's)");
	if (cfg->runner.kind == CONFIG_RUNNER_LOCAL && cfg->runner.cache.listen) {
		size_t old = yread_kp_push(&ld->r, "cache");
		int ret = yread_err(&ld->r, ynode_get(at, "listen"), "listen",
				    "is for runner.kind: slurm (the local runner's builds use the "
				    "service's socket on this host)");

		yread_kp_pop(&ld->r, old);
		return ret;
	}
	return 0;
}

/* The runner user: it must exist here and must not be root (it runs strangers' code). */
static int check_runner_user(struct loader *ld, const struct ynode *n)
{
	const char *user = ld->cfg->runner.user;
	const struct ynode *at = n ? ynode_get(n, "user") : NULL;
	struct passwd pw, *res = NULL;
	char buf[16384];

	if (getpwnam_r(user, &pw, buf, sizeof(buf), &res) || !res)
		return yread_err(&ld->r, at ? at : n, "user",
			     "no user '%s' on this host: commands run as this user (create it, "
			     "or name another unprivileged one)", user);
	if (!res->pw_uid)
		return yread_err(&ld->r, at ? at : n, "user",
			     "'%s' is root: build and test commands run code nobody has reviewed; "
			     "name an unprivileged user (default nobody)", user);
	return 0;
}

char *config_find_bwrap(void)
{
	const char *path = getenv("PATH");
	struct strbuf dir = STRBUF_INIT;
	char *found = NULL;

	if (!path || !*path)
		path = "/usr/bin:/bin";
	while (!found && *path) {
		size_t len = strcspn(path, ":");

		strbuf_reset(&dir);
		strbuf_add(&dir, path, len);
		strbuf_addstr(&dir, "/bwrap");
		if (dir.buf[0] == '/' && !access(dir.buf, X_OK))
			found = xstrdup(dir.buf);
		path += len + (path[len] == ':');
	}
	strbuf_release(&dir);
	if (!found && !access("/usr/bin/bwrap", X_OK))
		found = xstrdup("/usr/bin/bwrap");
	return found;
}

static int load_runner(struct loader *ld, const struct ynode *root)
{
	static const char *const keys[] = { "kind",    "user",    "partition", "srun_args",
					    "max_jobs", "sandbox", "network",  "limits",
					    "read_only", "min_free", "cache", "devices", NULL };
	static const char *const kinds[] = { "local", "slurm", NULL };
	static const char *const sandboxes[] = { "bwrap", "none", NULL };
	const struct ynode *n = ynode_get(root, "runner"), *v;
	struct config *cfg = ld->cfg;
	int kind = 0, sandbox = -1, ret = 0;
	size_t old;

	cfg->runner.bwrap = config_find_bwrap();
	if (n && ynode_is_null(n))
		n = NULL;
	if (n && (ret = yread_map_check(&ld->r, n, "runner", keys)) < 0)
		return ret;
	old = yread_kp_push(&ld->r, "runner");
	if (n && ((ret = yread_enum(&ld->r, n, "kind", kinds, &kind)) < 0 ||
		  (ret = yread_str(&ld->r, n, "user", &cfg->runner.user, 0)) < 0 ||
		  (ret = yread_str(&ld->r, n, "partition", &cfg->runner.partition, 0)) < 0 ||
		  (ret = yread_strlist(&ld->r, n, "srun_args", &cfg->runner.srun_args, NULL)) < 0 ||
		  (ret = yread_int(&ld->r, n, "max_jobs", &cfg->runner.max_jobs, 1, 1024)) < 0 ||
		  (ret = yread_enum(&ld->r, n, "sandbox", sandboxes, &sandbox)) < 0 ||
		  (ret = yread_bool(&ld->r, n, "network", &cfg->runner.network)) < 0 ||
		  (ret = get_paths(ld, n, "read_only", &cfg->runner.read_only)) < 0 ||
		  (ret = get_devices(ld, n)) < 0 ||
		  (ret = get_size(ld, n, "min_free", &cfg->runner.min_free)) < 0 ||
		  ((v = ynode_get(n, "limits")) && (ret = load_limits(ld, v)) < 0) ||
		  ((v = ynode_get(n, "cache")) && (ret = load_cache(ld, v)) < 0)))
		goto done;
	cfg->runner.kind = (enum config_runner_kind)kind;
	if ((ret = check_runner_user(ld, n ? n : root)) < 0)
		goto done;
	if (sandbox < 0) {
		cfg->runner.sandbox_defaulted = 1;
		sandbox = cfg->runner.bwrap ? CONFIG_SANDBOX_BWRAP : CONFIG_SANDBOX_NONE;
	}
	cfg->runner.sandbox = (enum config_sandbox)sandbox;
	if (cfg->runner.sandbox == CONFIG_SANDBOX_BWRAP && !cfg->runner.bwrap) {
		ret = yread_err(&ld->r, ynode_get(n, "sandbox"), "sandbox",
			    "bwrap is not installed (Debian: apt-get install bubblewrap); "
			    "'none' runs commands without a sandbox");
		goto done;
	}
	if (cfg->runner.sandbox == CONFIG_SANDBOX_NONE) {
		free(cfg->runner.bwrap);
		cfg->runner.bwrap = NULL;
	}
	ret = n ? check_cache(ld, n) : 0;
done:
	yread_kp_pop(&ld->r, old);
	return ret;
}

/*
 * max_jobs when not given: 1 locally (a build there is `make -j$(nproc)` already;
 * two at once only fight over the same cores), 4 on a cluster.
 */
static void runner_defaults(struct config *cfg)
{
	if (!cfg->runner.max_jobs)
		cfg->runner.max_jobs = cfg->runner.kind == CONFIG_RUNNER_SLURM ? 4 : 1;
}

/* An optional duration ("90s", "10m", or seconds); *out is left alone when absent. */
static int get_duration(struct loader *ld, const struct ynode *map, const char *key,
			  long *out)
{
	const struct ynode *t = ynode_get(map, key);

	if (!t || ynode_is_null(t))
		return 0;
	if (t->kind != YN_SCALAR || config_parse_duration(t->value, out) < 0)
		return yread_err(&ld->r, t, key, "expected a positive number of seconds or a "
				"duration "
			     "such as \"90s\", \"30m\", \"2h\"");
	return 0;
}

static int get_env_name(struct loader *ld, const struct ynode *map, const char *key,
			  char **out)
{
	int ret = yread_str(&ld->r, map, key, out, 0);

	if (!ret && *out && !env_name_ok(*out))
		ret = yread_err(&ld->r, ynode_get(map, key), key,
			    "'%s' is not an environment variable name", *out);
	return ret;
}

static int load_git_publish(struct loader *ld, const struct ynode *root)
{
	static const char *const git_keys[] = { "token_env", "ssh_key", "ca_file", "fetch_timeout",
						NULL };
	static const char *const pub_keys[] = { "url", "branch", NULL };
	const struct ynode *g = ynode_get(root, "git"), *p = ynode_get(root, "publish");
	struct config *cfg = ld->cfg;
	size_t old;
	int ret = 0;

	if (g && !ynode_is_null(g)) {
		if ((ret = yread_map_check(&ld->r, g, "git", git_keys)) < 0)
			return ret;
		old = yread_kp_push(&ld->r, "git");
		if (!(ret = get_env_name(ld, g, "token_env", &cfg->git.token_env)) &&
		    !(ret = yread_str(&ld->r, g, "ssh_key", &cfg->git.ssh_key, 0)) &&
		    !(ret = abs_path(ld, g, "ssh_key", &cfg->git.ssh_key)) &&
		    !(ret = yread_str(&ld->r, g, "ca_file", &cfg->git.ca_file, 0)) &&
		    !(ret = abs_path(ld, g, "ca_file", &cfg->git.ca_file)))
			ret = get_duration(ld, g, "fetch_timeout", &cfg->git.fetch_timeout);
		yread_kp_pop(&ld->r, old);
		if (ret)
			return ret;
	}
	if (p && !ynode_is_null(p)) {
		if ((ret = yread_map_check(&ld->r, p, "publish", pub_keys)) < 0)
			return ret;
		old = yread_kp_push(&ld->r, "publish");
		if (!(ret = yread_str(&ld->r, p, "url", &cfg->publish.url, STR_REQUIRED)) &&
		    !(ret = check_url(ld, p, "url", cfg->publish.url, "git.token_env")) &&
		    !(ret = yread_str(&ld->r, p, "branch", &cfg->publish.branch, 0)) &&
		    !branch_ok(cfg->publish.branch))
			ret = yread_err(&ld->r, ynode_get(p, "branch"), "branch",
				    "'%s' is not a valid branch name", cfg->publish.branch);
		yread_kp_pop(&ld->r, old);
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

	if ((ret = yread_map_check(&ld->r, n, "smtp", keys)) < 0)
		return ret;
	old = yread_kp_push(&ld->r, "smtp");
	if ((ret = yread_str(&ld->r, n, "url", &cfg->notify.smtp.url, STR_REQUIRED)) < 0 ||
	    (ret = yread_enum(&ld->r, n, "tls", tls_names, &tls)) < 0 ||
	    (ret = yread_str(&ld->r, n, "user", &cfg->notify.smtp.user, 0)) < 0 ||
	    (ret = get_env_name(ld, n, "password_env", &cfg->notify.smtp.password_env)) < 0 ||
	    (ret = yread_str(&ld->r, n, "ca_file", &cfg->notify.smtp.ca_file, 0)) < 0 ||
	    (ret = abs_path(ld, n, "ca_file", &cfg->notify.smtp.ca_file)) < 0)
		goto done;
	if ((ret = check_url(ld, n, "url", cfg->notify.smtp.url, "smtp.user and "
			     "smtp.password_env")) < 0)
		goto done;
	smtps = str_starts_with(cfg->notify.smtp.url, "smtps://");
	if (!smtps && !str_starts_with(cfg->notify.smtp.url, "smtp://")) {
		ret = yread_err(&ld->r, ynode_get(n, "url"), "url", "must start with smtp:// or "
				"smtps://");
		goto done;
	}
	if (tls < 0)
		tls = smtps ? CONFIG_TLS_IMPLICIT : CONFIG_TLS_STARTTLS;
	if (smtps != (tls == CONFIG_TLS_IMPLICIT)) {
		ret = yread_err(&ld->r, ynode_get(n, "tls"), "tls",
			    "'%s' does not fit a %s url (implicit TLS is smtps://)", tls_names[tls],
			    smtps ? "smtps://" : "smtp://");
		goto done;
	}
	cfg->notify.smtp.tls = (enum config_tls)tls;
done:
	yread_kp_pop(&ld->r, old);
	return ret;
}

static int load_webhooks(struct loader *ld, const struct ynode *v)
{
	static const char *const keys[] = { "url", "secret_env", "format", NULL };
	static const char *const formats[] = { "json", "slack", NULL };
	struct config *cfg = ld->cfg;
	size_t i, old;
	int ret = 0;

	if (ynode_is_null(v))
		return 0;
	if (v->kind != YN_SEQ)
		return yread_err(&ld->r, v, "webhooks", "expected a list, got "
				"%s", ynode_kind_name(v));
	cfg->notify.webhooks = xcalloc(v->nr ? v->nr : 1, sizeof(*cfg->notify.webhooks));
	for (i = 0; i < v->nr; i++) {
		struct config_webhook *w = &cfg->notify.webhooks[i];
		const struct ynode *n = v->kids[i];
		int format = CONFIG_HOOK_JSON, first = ret;

		old = yread_kp_push(&ld->r, "webhooks");
		strbuf_addf(&ld->r.kp, "[%zu]", i);
		cfg->notify.webhooks_nr++;
		if (!(ret = yread_map_check(&ld->r, n, NULL, keys)) &&
		    !(ret = yread_str(&ld->r, n, "url", &w->url, STR_REQUIRED)) &&
		    !(ret = get_env_name(ld, n, "secret_env", &w->secret_env)) &&
		    !(ret = yread_enum(&ld->r, n, "format", formats, &format)) &&
		    !str_starts_with(w->url, "http://") && !str_starts_with(w->url, "https://"))
			ret = yread_err(&ld->r, ynode_get(n, "url"), "url",
				    "must start with http:// or https://");
		w->format = (enum config_hook_format)format;
		if (!ret)
			ret = check_url(ld, n, "url", w->url, "secret_env (an HMAC secret)");
		yread_kp_pop(&ld->r, old);
		if (first < 0)
			ret = first;
	}
	return ret;
}

static int load_notify(struct loader *ld, const struct ynode *root)
{
	static const char *const keys[] = { "from", "list",	"operator", "report_url",
					    "remind_days", "smtp", "webhooks", NULL };
	const struct ynode *n = ynode_get(root, "notify"), *v;
	struct config *cfg = ld->cfg;
	size_t old;
	int ret;

	if (!n || ynode_is_null(n))
		return 0;
	if ((ret = yread_map_check(&ld->r, n, "notify", keys)) < 0)
		return ret;
	old = yread_kp_push(&ld->r, "notify");
	if ((ret = yread_str(&ld->r, n, "from", &cfg->notify.from, 0)) < 0 ||
	    (ret = yread_str(&ld->r, n, "list", &cfg->notify.list, 0)) < 0 ||
	    (ret = yread_str(&ld->r, n, "operator", &cfg->notify.operator, 0)) < 0 ||
	    (ret = yread_str(&ld->r, n, "report_url", &cfg->notify.report_url, 0)) < 0 ||
	    (ret = yread_int(&ld->r, n, "remind_days", &cfg->notify.remind_days, 0, 3650)) < 0)
		goto done;
	if (!identity_ok(cfg->notify.from) && !bare_address_ok(cfg->notify.from)) {
		ret = yread_err(&ld->r, ynode_get(n, "from"), "from",
			    "'%s' is neither \"Name <user@host>\" nor \"user@host\"",
			    cfg->notify.from);
		goto done;
	}
	if (cfg->notify.list && !strchr(cfg->notify.list, '@')) {
		ret = yread_err(&ld->r, ynode_get(n, "list"), "list", "'%s' is not a mail address",
			    cfg->notify.list);
		goto done;
	}
	if (cfg->notify.operator && !strchr(cfg->notify.operator, '@')) {
		ret = yread_err(&ld->r, ynode_get(n, "operator"), "operator", "'%s' is not a "
				"mail address",
			  cfg->notify.operator);
		goto done;
	}
	if ((v = ynode_get(n, "smtp")) && !ynode_is_null(v) && (ret = load_smtp(ld, v)) < 0)
		goto done;
	if ((v = ynode_get(n, "webhooks")))
		ret = load_webhooks(ld, v);
done:
	yread_kp_pop(&ld->r, old);
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
	const struct ynode *n = ynode_get(root, "inbox"), **urls = NULL;
	struct config *cfg = ld->cfg;
	int tls = -1, imaps, ret;
	size_t old, i;

	if (!n || ynode_is_null(n))
		return 0;
	if ((ret = yread_map_check(&ld->r, n, "inbox", keys)) < 0)
		return ret;
	cfg->inbox.configured = 1;
	old = yread_kp_push(&ld->r, "inbox");
	if ((ret = yread_str(&ld->r, n, "url", &cfg->inbox.url, 0)) < 0 ||
	    (ret = yread_enum(&ld->r, n, "tls", tls_names, &tls)) < 0 ||
	    (ret = yread_str(&ld->r, n, "user", &cfg->inbox.user, 0)) < 0 ||
	    (ret = get_env_name(ld, n, "password_env", &cfg->inbox.password_env)) < 0 ||
	    (ret = yread_str(&ld->r, n, "ca_file", &cfg->inbox.ca_file, 0)) < 0 ||
	    (ret = abs_path(ld, n, "ca_file", &cfg->inbox.ca_file)) < 0 ||
	    (ret = get_duration(ld, n, "poll", &cfg->inbox.poll)) < 0 ||
	    (ret = yread_str(&ld->r, n, "authserv_id", &cfg->inbox.authserv_id, 0)) < 0 ||
	    (ret = yread_int(&ld->r, n, "max_tests", &cfg->inbox.max_tests, 0, 10000)) < 0 ||
	    (ret = yread_strlist(&ld->r, n, "test_urls", &cfg->inbox.test_urls, &urls)) < 0)
		goto done;
	for (i = 0; i < cfg->inbox.test_urls.nr; i++) {
		if (!test_url_ok(cfg->inbox.test_urls.v[i])) {
			size_t o2 = yread_kp_push(&ld->r, "test_urls");

			yread_kp_push_index(&ld->r, i);
			ret = yread_err(&ld->r, urls[i], NULL,
				  "'%s' is not an https:// or git:// URL with a host (test: "
				  "fetches nothing else)",
				  cfg->inbox.test_urls.v[i]);
			yread_kp_pop(&ld->r, o2);
			goto done;
		}
	}
	if (cfg->inbox.authserv_id && (!*cfg->inbox.authserv_id ||
				       strpbrk(cfg->inbox.authserv_id, " \t;()\""))) {
		ret = yread_err(&ld->r, ynode_get(n, "authserv_id"), "authserv_id",
			  "'%s' is not an authserv-id (the receiving server's name in its "
			  "Authentication-Results fields)",
			  cfg->inbox.authserv_id);
		goto done;
	}
	if (!cfg->inbox.url) {
		if (tls >= 0 || cfg->inbox.user || cfg->inbox.password_env || cfg->inbox.ca_file)
			ret = yread_err(&ld->r, n, NULL,
				  "tls, user, password_env and ca_file need a url (without one, "
				  "mail arrives through `nextbot mail-in`)");
		goto done;
	}
	imaps = str_starts_with(cfg->inbox.url, "imaps://");
	if (!imaps && !str_starts_with(cfg->inbox.url, "imap://")) {
		ret = yread_err(&ld->r, ynode_get(n, "url"), "url", "must start with imaps:// "
				"or imap://");
		goto done;
	}
	if (!cfg->inbox.user) {
		ret = yread_err(&ld->r, n, "user", "missing (required with a url): the IMAP login");
		goto done;
	}
	if (tls < 0)
		tls = imaps ? CONFIG_TLS_IMPLICIT : CONFIG_TLS_STARTTLS;
	if (imaps != (tls == CONFIG_TLS_IMPLICIT)) {
		ret = yread_err(&ld->r, ynode_get(n, "tls"), "tls",
			  "'%s' does not fit a %s url (implicit TLS is imaps://)", tls_names[tls],
			  imaps ? "imaps://" : "imap://");
		goto done;
	}
	cfg->inbox.tls = (enum config_tls)tls;
done:
	yread_kp_pop(&ld->r, old);
	return ret;
}

/* maintainers.roles: a list of "M", "R", "L", each once. */
static int load_roles(struct loader *ld, const struct ynode *n)
{
	static const char *const names[] = { "M", "R", "L" };
	const struct ynode **nodes = NULL;
	struct strvec v = STRVEC_INIT;
	int ret, k, *roles = ld->cfg->maintainers.roles;
	size_t i, old;

	if ((ret = yread_strlist(&ld->r, n, "roles", &v, &nodes)) < 0 || !ynode_get(n, "roles"))
		goto done;
	memset(ld->cfg->maintainers.roles, 0, sizeof(ld->cfg->maintainers.roles));
	for (i = 0; i < v.nr && !ret; i++) {
		for (k = 0; k < 3 && strcmp(v.v[i], names[k]); k++)
			;
		if (k < 3 && !roles[k]) {
			roles[k] = 1;
			continue;
		}
		old = yread_kp_push(&ld->r, "roles");
		yread_kp_push_index(&ld->r, i);
		ret = yread_err(&ld->r, nodes[i], NULL, k < 3 ? "'%s' is listed twice"
					 : "'%s' is not a role: M (maintainers), R (reviewers) or "
					   "L (lists)", v.v[i]);
		yread_kp_pop(&ld->r, old);
	}
done:
	strvec_clear(&v);
	return ret;
}

/* maintainers.regex_limits: {match: steps, heap: size, size: size}, each optional. */
static int load_regex_limits(struct loader *ld, const struct ynode *map)
{
	static const char *const keys[] = { "match", "heap", "size", NULL };
	const struct ynode *n = ynode_get(map, "regex_limits");
	long match = (long)ld->cfg->maintainers.regex_limits.match;
	size_t old;
	int ret;

	if (!n || ynode_is_null(n))
		return 0;
	if ((ret = yread_map_check(&ld->r, n, "regex_limits", keys)) < 0)
		return ret;
	old = yread_kp_push(&ld->r, "regex_limits");
	if (!(ret = yread_long(&ld->r, n, "match", &match, 100, 100000000)) &&
	    !(ret = get_size(ld, n, "heap", &ld->cfg->maintainers.regex_limits.heap)))
		ret = get_size(ld, n, "size", &ld->cfg->maintainers.regex_limits.size);
	ld->cfg->maintainers.regex_limits.match = match;
	if (!ret && (ld->cfg->maintainers.regex_limits.heap < 1024 ||
		     ld->cfg->maintainers.regex_limits.heap > (1LL << 32)))
		ret = yread_err(&ld->r, ynode_get(n, "heap"), "heap", "must be from 1K to 4G");
	if (!ret && (ld->cfg->maintainers.regex_limits.size < 256 ||
		     ld->cfg->maintainers.regex_limits.size > (64LL << 20)))
		ret = yread_err(&ld->r, ynode_get(n, "size"), "size", "must be from 256 to 64M");
	yread_kp_pop(&ld->r, old);
	return ret;
}

static int load_maintainers(struct loader *ld, const struct ynode *root)
{
	static const char *const keys[] = { "file",	   "roles",	 "max",
					    "absent_days", "window_days", "audit_list",
					    "regex_limits", NULL };
	const struct ynode *n = ynode_get(root, "maintainers");
	struct config *cfg = ld->cfg;
	size_t old;
	int ret;

	if (!n || ynode_is_null(n))
		return 0;
	if ((ret = yread_map_check(&ld->r, n, "maintainers", keys)) < 0)
		return ret;
	cfg->maintainers.line = n->line;
	old = yread_kp_push(&ld->r, "maintainers");
	if ((ret = yread_str(&ld->r, n, "file", &cfg->maintainers.file, 0)) < 0 ||
	    (ret = load_roles(ld, n)) < 0 ||
	    (ret = yread_int(&ld->r, n, "max", &cfg->maintainers.max, 0, 1000)) < 0 ||
	    (ret = yread_int(&ld->r, n, "absent_days", &cfg->maintainers.absent_days, 1,
			     36500)) < 0 ||
	    (ret = yread_int(&ld->r, n, "window_days", &cfg->maintainers.window_days, 1,
			     36500)) < 0 ||
	    (ret = yread_str(&ld->r, n, "audit_list", &cfg->maintainers.audit_list, 0)) < 0 ||
	    (ret = load_regex_limits(ld, n)) < 0)
		goto done;
	if (!*cfg->maintainers.file || cfg->maintainers.file[0] == '/' ||
	    strstr(cfg->maintainers.file, "..")) {
		ret = yread_err(&ld->r, ynode_get(n, "file"), "file",
				"'%s' is not a path inside the tree", cfg->maintainers.file);
		goto done;
	}
	if (cfg->maintainers.audit_list && !strchr(cfg->maintainers.audit_list, '@'))
		ret = yread_err(&ld->r, ynode_get(n, "audit_list"), "audit_list",
				"'%s' is not a mail address", cfg->maintainers.audit_list);
done:
	yread_kp_pop(&ld->r, old);
	return ret;
}

static int load_misc(struct loader *ld, const struct ynode *root)
{
	static const char *const breakage[] = { "revert-culprit", "previous-version", "drop-tree",
						NULL };
	static const char *const bisect_keys[] = { "confirm", "jobs", NULL };
	const struct ynode *b = ynode_get(root, "bisect");
	struct config *cfg = ld->cfg;
	struct cron_expr cron;
	int on_breakage = 0, ret;
	size_t old;

	if ((ret = yread_bool(&ld->r, root, "build_after_each_merge",
			      &cfg->build_after_each_merge)) ||
	    (ret = yread_enum(&ld->r, root, "on_breakage", breakage, &on_breakage)) < 0 ||
	    (ret = yread_int(&ld->r, root, "keep_days", &cfg->keep_days, 1, 100000)) < 0 ||
	    (ret = yread_bool(&ld->r, root, "drop_push", &cfg->drop_push)) ||
	    (ret = yread_str(&ld->r, root, "schedule", &cfg->schedule, 0)) < 0 ||
	    (ret = yread_str(&ld->r, root, "merge_identity", &cfg->merge_identity, 0)) < 0)
		return ret;
	cfg->on_breakage = (enum config_on_breakage)on_breakage;
	if (cfg->schedule && cron_parse(&cron, cfg->schedule) < 0)
		return yread_err(&ld->r, ynode_get(root, "schedule"), "schedule",
			     "'%s' is not a 5-field cron expression (minute hour day month "
			     "weekday): %s", cfg->schedule, nb_error_last());
	if (cfg->merge_identity && !identity_ok(cfg->merge_identity))
		return yread_err(&ld->r, ynode_get(root, "merge_identity"), "merge_identity",
			     "'%s' is not of the form \"Name <user@host>\"", cfg->merge_identity);
	if (b && !ynode_is_null(b)) {
		if ((ret = yread_map_check(&ld->r, b, "bisect", bisect_keys)) < 0)
			return ret;
		old = yread_kp_push(&ld->r, "bisect");
		if (!(ret = yread_int(&ld->r, b, "confirm", &cfg->bisect.confirm, 0, 100)))
			ret = yread_int(&ld->r, b, "jobs", &cfg->bisect.jobs, 1, 256);
		yread_kp_pop(&ld->r, old);
	}
	return ret;
}

static int load_deadline(struct loader *ld, const struct ynode *root)
{
	struct config *cfg = ld->cfg;
	int ret = yread_str(&ld->r, root, "deadline", &cfg->deadline.text, 0);
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
		return yread_err(&ld->r, ynode_get(root, "deadline"), "deadline",
			     "'%s' is neither a UTC time \"HH:MM[:SS]\" nor a duration such as "
			     "\"4h\" or \"90s\"",
			     cfg->deadline.text);
	}
	return 0;
}

/* ---- the whole file ------------------------------------------------------ */

/* Three quarters of the host's RAM (a build may use most of it, not all); 8 GiB if unknown. */
/* ---- watch, journey, review_gate (a patch's journey) ---------------------- */

int config_globs_match(const struct strvec *globs, const char *name)
{
	size_t i;

	for (i = 0; i < globs->nr; i++)
		if (!fnmatch(globs->v[i], name, 0))
			return 1;
	return 0;
}

const struct config_tree *config_tree_find(const struct config *cfg, const char *name,
					   int *is_watch)
{
	size_t i;

	for (i = 0; i < cfg->trees_nr + cfg->watch_nr; i++) {
		const struct config_tree *t = i < cfg->trees_nr ? &cfg->trees[i] :
								  &cfg->watch[i - cfg->trees_nr];

		if (t->name && !strcmp(t->name, name)) {
			if (is_watch)
				*is_watch = i >= cfg->trees_nr;
			return t;
		}
	}
	return NULL;
}

/* watch: as trees, never merged, so never_merge does not apply and fixes mean nothing. */
static int load_watch(struct loader *ld, const struct ynode *root)
{
	const struct ynode *v = ynode_get(root, "watch");
	struct config *cfg = ld->cfg;
	size_t i;
	int ret = 0, w = 0;

	if (!v || ynode_is_null(v))
		return 0;
	if (v->kind != YN_SEQ)
		return yread_err(&ld->r, v, "watch", "expected a list of branches, got %s",
				 ynode_kind_name(v));
	cfg->watch = xcalloc(v->nr ? v->nr : 1, sizeof(*cfg->watch));
	/* every branch is read, so that check-config names every wrong one */
	for (i = 0; i < v->nr; i++) {
		const struct config_tree *other;
		struct config_tree *t = &cfg->watch[i];
		size_t old = yread_kp_push(&ld->r, "watch");
		int r;

		strbuf_addf(&ld->r.kp, "[%zu]", i);
		t->contacts = (struct strvec)STRVEC_INIT;
		r = load_tree(ld, v->kids[i], NULL, t, 0);
		cfg->watch_nr++;
		if (t->fixes)
			keep(&r, yread_err(&ld->r, ynode_get(v->kids[i], "fixes"), "fixes",
					   "a watched branch is never merged: it carries no "
					   "fixes"));
		other = t->name ? config_tree_find(cfg, t->name, &w) : NULL;
		if (other && (other != t || (cfg->base.name && !strcmp(t->name, cfg->base.name))))
			keep(&r, yread_err(&ld->r, ynode_get(v->kids[i], "name"), "name",
					   "duplicate name '%s' (%s at line %d): names are "
					   "unique across base, trees and watch", t->name,
					   other == t ? "the base" :
					   w ? "a watched branch" : "a tree",
					   other != t ? other->line : cfg->base.line));
		keep(&ret, r);
		yread_kp_pop(&ld->r, old);
	}
	return ret;
}

/* Each glob of `globs` (key `key` of `map`) names at least one tree or watched branch. */
static int globs_name_trees(struct loader *ld, const struct ynode *map, const char *key,
			    const struct strvec *globs, const struct ynode **nodes)
{
	const struct config *cfg = ld->cfg;
	size_t i, j;
	int ret = 0;

	for (i = 0; i < globs->nr; i++) {
		int hit = 0;

		for (j = 0; j < cfg->trees_nr + cfg->watch_nr && !hit; j++) {
			const char *name = j < cfg->trees_nr ? cfg->trees[j].name :
							       cfg->watch[j - cfg->trees_nr].name;

			hit = name && !fnmatch(globs->v[i], name, 0);
		}
		if (!hit) {
			size_t old = yread_kp_push(&ld->r, key);

			keep(&ret, yread_err(&ld->r, nodes[i], NULL, "'%s' names no tree or "
					     "watched branch", globs->v[i]));
			yread_kp_pop(&ld->r, old);
		}
	}
	(void)map;
	return ret;
}

/* journey.list: an address for every tree, or a mapping of tree names (or globs) to one. */
static int load_journey_lists(struct loader *ld, const struct ynode *n)
{
	const struct ynode *l = ynode_get(n, "list");
	struct config *cfg = ld->cfg;
	size_t i, old;
	int ret = 0;

	if (!l || l->kind != YN_MAP) {
		ret = yread_str(&ld->r, n, "list", &cfg->journey.list, 0);
		if (cfg->journey.list && !strchr(cfg->journey.list, '@'))
			ret = yread_err(&ld->r, l, "list", "'%s' is not a mail address",
					cfg->journey.list);
		return ret;
	}
	old = yread_kp_push(&ld->r, "list");
	for (i = 0; i + 1 < l->nr; i += 2) {
		const struct ynode *k = l->kids[i], *v = l->kids[i + 1];

		if (v->kind != YN_SCALAR || !strchr(v->value, '@')) {
			keep(&ret, yread_err(&ld->r, v, k->value, "expected a mail address, got "
					     "%s", v->kind == YN_SCALAR ? v->value :
					     ynode_kind_name(v)));
			continue;
		}
		strvec_push(&cfg->journey.list_trees, k->value);
		strvec_push(&cfg->journey.lists, v->value);
	}
	yread_kp_pop(&ld->r, old);
	return ret;
}

const char *config_journey_list(const struct config *cfg, const char *tree)
{
	size_t i;

	for (i = 0; tree && i < cfg->journey.list_trees.nr; i++)
		if (!fnmatch(cfg->journey.list_trees.v[i], tree, 0))
			return cfg->journey.lists.v[i];
	return cfg->journey.list;
}

static int load_journey(struct loader *ld, const struct ynode *root)
{
	static const char *const keys[] = { "trees", "list", "digest", NULL };
	const struct ynode *n = ynode_get(root, "journey"), **nodes = NULL;
	struct config *cfg = ld->cfg;
	size_t old;
	int ret;

	if (!n || ynode_is_null(n))
		return 0;
	if ((ret = yread_map_check(&ld->r, n, "journey", keys)) < 0 && n->kind != YN_MAP)
		return ret;
	old = yread_kp_push(&ld->r, "journey");
	if (yread_strlist(&ld->r, n, "trees", &cfg->journey.trees, &nodes) < 0)
		keep(&ret, NB_EINVALID);
	else
		keep(&ret, globs_name_trees(ld, n, "trees", &cfg->journey.trees, nodes));
	keep(&ret, load_journey_lists(ld, n));
	keep(&ret, yread_bool(&ld->r, n, "digest", &cfg->journey.digest));
	yread_kp_pop(&ld->r, old);
	return ret;
}

/* A trailer key as commits write it: letters, digits and '-' ("Reviewed-by"). */
static int trailer_key_ok(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '-')
			return 0;
	return 1;
}

static int load_gate(struct loader *ld, const struct ynode *n, struct config_gate *g)
{
	static const char *const keys[] = { "trees", "require", "policy", "follow", "verify",
					    NULL };
	static const char *const policies[] = { "report", "hold", NULL };
	static const char *const verify_names[] = { "trailers", "mail", NULL };
	const struct ynode **trees = NULL, **req = NULL;
	const struct config *cfg = ld->cfg;
	size_t i;
	int ret, policy = 0, w = 0, verify = cfg->inbox.configured;

	g->line = n->line;
	/* every key of the gate is checked whatever went wrong with another */
	if ((ret = yread_map_check(&ld->r, n, NULL, keys)) < 0 && n->kind != YN_MAP)
		return ret;
	if (yread_strlist(&ld->r, n, "trees", &g->trees, &trees) < 0)
		keep(&ret, NB_EINVALID);
	else if (!g->trees.nr)
		keep(&ret, yread_err(&ld->r, n, "trees", "missing (required): the gated trees"));
	else
		keep(&ret, globs_name_trees(ld, n, "trees", &g->trees, trees));
	if (yread_strlist(&ld->r, n, "require", &g->require, &req) < 0) {
		keep(&ret, NB_EINVALID);
	} else {
		for (i = 0; i < g->require.nr; i++)
			if (!trailer_key_ok(g->require.v[i])) {
				size_t old = yread_kp_push(&ld->r, "require");

				keep(&ret, yread_err(&ld->r, req[i], NULL, "'%s' is not a trailer "
						     "key such as Reviewed-by", g->require.v[i]));
				yread_kp_pop(&ld->r, old);
			}
		if (!g->require.nr && !ynode_get(n, "require")) {
			strvec_push(&g->require, "Reviewed-by");
			strvec_push(&g->require, "Acked-by");
		} else if (!g->require.nr) {
			keep(&ret, yread_err(&ld->r, n, "require",
					     "an empty list: no review could count"));
		}
	}
	g->follow = 1;
	keep(&ret, yread_bool(&ld->r, n, "follow", &g->follow));
	if (yread_enum(&ld->r, n, "policy", policies, &policy) < 0)
		return NB_EINVALID;
	g->policy = (enum config_gate_policy)policy;
	if (yread_enum(&ld->r, n, "verify", verify_names, &verify) < 0)
		return NB_EINVALID;
	g->verify = (enum config_gate_verify)verify;
	for (i = 0; g->policy == CONFIG_GATE_HOLD && i < cfg->watch_nr; i++)
		if (cfg->watch[i].name && config_globs_match(&g->trees, cfg->watch[i].name) &&
		    config_tree_find(cfg, cfg->watch[i].name, &w) && w) {
			keep(&ret, yread_err(&ld->r, ynode_get(n, "policy"), "policy",
					     "hold on '%s', a watched branch, which is never "
					     "merged (use report)", cfg->watch[i].name));
			break;
		}
	return ret;
}

static int load_gates(struct loader *ld, const struct ynode *root)
{
	const struct ynode *v = ynode_get(root, "review_gate");
	struct config *cfg = ld->cfg;
	size_t i;
	int ret = 0;

	if (!v || ynode_is_null(v))
		return 0;
	if (v->kind != YN_SEQ)
		return yread_err(&ld->r, v, "review_gate", "expected a list of gates, got %s",
				 ynode_kind_name(v));
	cfg->gates = xcalloc(v->nr ? v->nr : 1, sizeof(*cfg->gates));
	for (i = 0; i < v->nr; i++) {
		size_t old = yread_kp_push(&ld->r, "review_gate");

		strbuf_addf(&ld->r.kp, "[%zu]", i);
		cfg->gates[i].trees = (struct strvec)STRVEC_INIT;
		cfg->gates[i].require = (struct strvec)STRVEC_INIT;
		cfg->gates_nr++;
		keep(&ret, load_gate(ld, v->kids[i], &cfg->gates[i]));
		yread_kp_pop(&ld->r, old);
	}
	return ret;
}

const char *config_gate_policy_name(enum config_gate_policy v)
{
	return v == CONFIG_GATE_HOLD ? "hold" : "report";
}

const char *config_gate_verify_name(enum config_gate_verify v)
{
	return v == CONFIG_GATE_VERIFY_MAIL ? "mail" : "trailers";
}

static long long default_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

	if (pages <= 0 || size <= 0)
		return 8LL << 30;
	return (long long)pages * size / 4 * 3;
}

static struct config *config_new(const char *path)
{
	struct config *cfg = xcalloc(1, sizeof(*cfg));

	cfg->path = xstrdup(path);
	cfg->never_merge = (struct strvec)STRVEC_INIT;
	cfg->warnings = (struct strvec)STRVEC_INIT;
	cfg->journey.trees = (struct strvec)STRVEC_INIT;
	cfg->journey.list_trees = (struct strvec)STRVEC_INIT;
	cfg->journey.lists = (struct strvec)STRVEC_INIT;
	cfg->base.contacts = (struct strvec)STRVEC_INIT;
	cfg->runner.srun_args = (struct strvec)STRVEC_INIT;
	cfg->runner.read_only = (struct strvec)STRVEC_INIT;
	cfg->runner.devices = (struct strvec)STRVEC_INIT;
	cfg->build_after_each_merge = 1;
	cfg->bisect.confirm = 2;
	cfg->bisect.jobs = 1;
	cfg->runner.user = xstrdup("nobody");
	cfg->runner.max_jobs = 0;  /* unset: see load_runner() */
	cfg->runner.limits.processes = 2048;
	cfg->runner.limits.file_size = 8LL << 30;
	cfg->runner.limits.memory = default_memory();
	cfg->runner.min_free = 256LL << 20;
	cfg->publish.branch = xstrdup("master");
	cfg->notify.from = xstrdup("nextbot <nextbot@localhost>");
	cfg->schedule = xstrdup("0 2 * * *");
	cfg->git.fetch_timeout = 600;
	cfg->keep_days = 60;
	cfg->workdir = xstrdup("state");
	cfg->inbox.poll = 300;
	cfg->inbox.max_tests = 10;
	cfg->inbox.test_urls = (struct strvec)STRVEC_INIT;
	cfg->maintainers.file = xstrdup("MAINTAINERS");
	cfg->maintainers.roles[0] = cfg->maintainers.roles[1] = cfg->maintainers.roles[2] = 1;
	cfg->maintainers.max = 20;
	cfg->maintainers.absent_days = 730;
	cfg->maintainers.window_days = 1825;
	cfg->maintainers.regex_limits.match = 100000;
	cfg->maintainers.regex_limits.heap = 1LL << 20;
	cfg->maintainers.regex_limits.size = 16LL << 10;
	return cfg;
}

static int config_dir(struct loader *ld)
{
	char *copy = xstrdup(ld->r.path), *slash = strrchr(copy, '/'), *real;
	int ret = 0;

	if (slash)
		slash[slash == copy ? 1 : 0] = 0;
	real = realpath(slash ? copy : ".", NULL);
	if (!real)
		ret = nb_error_errno(NB_EINVALID, "%s: cannot resolve its directory", ld->r.path);
	else
		ld->cfg->dir = real;
	free(copy);
	return ret;
}

static int load_root(struct loader *ld, const struct ynode *root)
{
	const struct ynode *base;
	struct config *cfg = ld->cfg;
	int ret, trees, commands;

	if (!root || ynode_is_null(root))
		return yread_err(&ld->r, root, NULL, "the config is empty");
	/*
	 * Every section is read whatever went wrong in another, so that check-config
	 * names every error of the file; checks that build on a section (never_merge
	 * on the trees, the cells on the commands) run only when it was read whole.
	 */
	ret = yread_map_check(&ld->r, root, NULL, top_keys);
	if (!(base = ynode_get(root, "base")))
		keep(&ret, yread_err(&ld->r, root, "base", "missing (required): the mainline to "
				     "build on"));
	keep(&ret, yread_str(&ld->r, root, "workdir", &cfg->workdir, 0));
	keep(&ret, abs_path(ld, root, "workdir", &cfg->workdir));
	trees = base ? load_tree(ld, base, "base", &cfg->base, 1) : NB_EINVALID;
	keep(&trees, load_trees(ld, root));
	keep(&trees, load_never_merge(ld, root));
	if (trees >= 0)
		keep(&trees, check_never_merge(ld, root));
	keep(&ret, trees);
	commands = load_commands(ld, root, "build", &cfg->build, &cfg->build_nr);
	keep(&commands, load_commands(ld, root, "test", &cfg->test, &cfg->test_nr));
	if (commands >= 0)
		keep(&commands, load_cells(ld));
	keep(&ret, commands);
	keep(&ret, load_misc(ld, root));
	keep(&ret, load_deadline(ld, root));
	keep(&ret, load_runner(ld, root));
	keep(&ret, load_git_publish(ld, root));
	keep(&ret, load_notify(ld, root));
	keep(&ret, load_inbox(ld, root));
	keep(&ret, load_maintainers(ld, root));
	keep(&ret, load_watch(ld, root));
	keep(&ret, load_journey(ld, root));
	keep(&ret, load_gates(ld, root));
	if (ret < 0)
		return ret;
	runner_defaults(cfg);
	if (!cfg->merge_identity)
		cfg->merge_identity = identity_ok(cfg->notify.from)
					      ? xstrdup(cfg->notify.from)
					      : xstrfmt("nextbot <%s>", cfg->notify.from);
	return 0;
}

int config_load(struct config **out, const char *path)
{
	return config_load_all(out, path, NULL);
}

int config_load_all(struct config **out, const char *path, struct strvec *errors)
{
	struct strvec mine = STRVEC_INIT;
	struct loader ld = { .r = { .path = path, .kp = STRBUF_INIT, .errors = &mine } };
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
	    (ret = yread_tree(&ld.r, &root, data.buf, data.len)) < 0 ||
	    (ret = load_root(&ld, root)) < 0)
		goto done;
	*out = ld.cfg;
	ld.cfg = NULL;
done:
	/* the error recorded is the first one found, as before; `errors` gets them all */
	if (ret < 0 && mine.nr)
		nb_error_set(NB_EINVALID, "%s", mine.v[0]);
	if (ret < 0 && errors)
		for (size_t i = 0; i < (mine.nr ? mine.nr : 1); i++)
			strvec_push(errors, mine.nr ? mine.v[i] : nb_error_last());
	strvec_clear(&mine);
	config_free(ld.cfg);
	ynode_free(root);
	free(ld.never_lines);
	strbuf_release(&ld.r.kp);
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
	size_t i, j;

	for (i = 0; i < nr; i++) {
		free(c[i].name);
		free(c[i].command);
		strvec_clear(&c[i].env);
		for (j = 0; j < c[i].matrix_nr; j++) {
			free(c[i].matrix[j].key);
			strvec_clear(&c[i].matrix[j].values);
		}
		free(c[i].matrix);
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
	strvec_clear(&cfg->warnings);
	tree_release(&cfg->base);
	for (i = 0; i < cfg->trees_nr; i++)
		tree_release(&cfg->trees[i]);
	free(cfg->trees);
	strvec_clear(&cfg->never_merge);
	for (i = 0; i < cfg->watch_nr; i++)
		tree_release(&cfg->watch[i]);
	free(cfg->watch);
	strvec_clear(&cfg->journey.trees);
	free(cfg->journey.list);
	strvec_clear(&cfg->journey.list_trees);
	strvec_clear(&cfg->journey.lists);
	for (i = 0; i < cfg->gates_nr; i++) {
		strvec_clear(&cfg->gates[i].trees);
		strvec_clear(&cfg->gates[i].require);
	}
	free(cfg->gates);
	commands_free(cfg->build, cfg->build_nr);
	commands_free(cfg->test, cfg->test_nr);
	for (i = 0; i < cfg->cells_nr; i++) {
		free(cfg->cells[i].name);
		strvec_clear(&cfg->cells[i].env);
	}
	free(cfg->cells);
	free(cfg->deadline.text);
	free(cfg->merge_identity);
	free(cfg->runner.user);
	free(cfg->runner.partition);
	free(cfg->runner.bwrap);
	free(cfg->runner.cache.dir);
	free(cfg->runner.cache.listen);
	strvec_clear(&cfg->runner.srun_args);
	strvec_clear(&cfg->runner.read_only);
	strvec_clear(&cfg->runner.devices);
	free(cfg->git.token_env);
	free(cfg->git.ssh_key);
	free(cfg->git.ca_file);
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
	free(cfg->maintainers.file);
	free(cfg->maintainers.audit_list);
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

int config_cell_has(const struct config_cell *cell, const struct config_command *c)
{
	size_t i, j;

	for (i = 0; i < c->matrix_nr; i++) {
		const struct config_axis *a = &c->matrix[i];
		size_t n = strlen(a->key);

		for (j = 0; j < cell->env.nr; j++)
			if (!strncmp(cell->env.v[j], a->key, n) && cell->env.v[j][n] == '=')
				break;
		if (j == cell->env.nr || !strvec_contains(&a->values, cell->env.v[j] + n + 1))
			return 0;
	}
	return 1;
}

char *config_cell_command_name(const struct config_cell *cell, const struct config_command *c)
{
	return *cell->name ? xstrfmt("%s[%s]", c->name, cell->name) : xstrdup(c->name);
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

const char *config_hook_format_name(enum config_hook_format v)
{
	return v == CONFIG_HOOK_SLACK ? "slack" : "json";
}

const char *config_sandbox_name(enum config_sandbox v)
{
	return v == CONFIG_SANDBOX_NONE ? "none" : "bwrap";
}

const char *config_tls_name(enum config_tls v)
{
	static const char *const names[] = { "none", "starttls", "implicit" };

	return (unsigned)v < 3 ? names[v] : "?";
}
