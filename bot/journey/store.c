/* workdir/journeys.json: the patches' journeys and the commits read for them (not state.json). */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bot/journey/journey_int.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/log.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define STORE_MAX_BYTES (512u << 20)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char *const state_names[] = { "in-review", "in-next", "held",
					   "merged",	"dropped", "gone" };
static const char *const event_names[] = { "added",   "moved", "replaced", "removed",
					   "merged",  "dropped", "held", "released" };

static int name_index(const char *const *names, size_t nr, const char *s)
{
	size_t i;

	for (i = 0; s && i < nr; i++)
		if (!strcmp(names[i], s))
			return (int)i;
	return -1;
}

const char *journey_state_name(enum journey_state s)
{
	return (size_t)s < ARRAY_SIZE(state_names) ? state_names[s] : "in-review";
}

int journey_state_parse(enum journey_state *out, const char *s)
{
	int i = name_index(state_names, ARRAY_SIZE(state_names), s);

	if (i < 0)
		return -1;
	*out = (enum journey_state)i;
	return 0;
}

const char *journey_event_name(enum journey_event_kind k)
{
	return (size_t)k < ARRAY_SIZE(event_names) ? event_names[k] : "?";
}

int journey_event_parse(enum journey_event_kind *out, const char *s)
{
	int i = name_index(event_names, ARRAY_SIZE(event_names), s);

	if (i < 0)
		return -1;
	*out = (enum journey_event_kind)i;
	return 0;
}

/* ---- memory ---- */

void journey_people_free(struct journey_person *p, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		free(p[i].key);
		free(p[i].name);
		free(p[i].email);
	}
	free(p);
}

struct journey_person *journey_people_dup(const struct journey_person *p, size_t nr)
{
	struct journey_person *out = xcalloc(nr ? nr : 1, sizeof(*out));
	size_t i;

	for (i = 0; i < nr; i++) {
		out[i].key = xstrdup(p[i].key);
		out[i].name = xstrdup(p[i].name);
		out[i].email = xstrdup(p[i].email);
	}
	return out;
}

void journey_commit_release(struct journey_commit *c)
{
	free(c->message_id);
	free(c->subject);
	free(c->author_name);
	free(c->author_email);
	free(c->link);
	journey_people_free(c->people, c->people_nr);
	memset(c, 0, sizeof(*c));
}

void journey_release(struct journey *j)
{
	size_t i;

	free(j->key);
	free(j->subject);
	free(j->author_name);
	free(j->author_email);
	free(j->family);
	free(j->tree);
	free(j->since);
	free(j->first_seen);
	free(j->last_seen);
	free(j->held);
	free(j->link);
	for (i = 0; i < j->versions_nr; i++) {
		free(j->versions[i].message_id);
		free(j->versions[i].first_seen);
		journey_people_free(j->versions[i].people, j->versions[i].people_nr);
	}
	free(j->versions);
	for (i = 0; i < j->events_nr; i++) {
		free(j->events[i].date);
		free(j->events[i].tree);
		free(j->events[i].branch);
		free(j->events[i].from);
		free(j->events[i].reason);
	}
	free(j->events);
	strvec_clear(&j->told);
	memset(j, 0, sizeof(*j));
}

void journey_store_release(struct journey_store *s)
{
	size_t i;

	free(s->date);
	for (i = 0; i < s->trees_nr; i++)
		free(s->trees[i].name);
	free(s->trees);
	for (i = 0; i < s->commits_nr; i++)
		journey_commit_release(&s->commits[i]);
	free(s->commits);
	for (i = 0; i < s->patches_nr; i++)
		journey_release(&s->patches[i]);
	free(s->patches);
	memset(s, 0, sizeof(*s));
}

struct journey *journey_store_add(struct journey_store *s)
{
	struct journey *j;

	ALLOC_GROW(s->patches, s->patches_nr + 1, s->patches_alloc);
	j = &s->patches[s->patches_nr++];
	memset(j, 0, sizeof(*j));
	j->told = (struct strvec)STRVEC_INIT;
	return j;
}

struct journey_event *journey_event_add(struct journey *j, const char *date,
					enum journey_event_kind kind)
{
	struct journey_event *e;

	ALLOC_GROW(j->events, j->events_nr + 1, j->events_alloc);
	e = &j->events[j->events_nr++];
	memset(e, 0, sizeof(*e));
	e->date = xstrdup(date);
	e->kind = kind;
	return e;
}

struct journey_tree_seen *journey_tree_seen_find(struct journey_store *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->trees_nr; i++)
		if (!strcmp(s->trees[i].name, name))
			return &s->trees[i];
	return NULL;
}

static int commit_cmp(const void *a, const void *b)
{
	return strcmp(((const struct journey_commit *)a)->id.hex,
		      ((const struct journey_commit *)b)->id.hex);
}

void journey_store_sort_commits(struct journey_store *s)
{
	if (s->commits_nr)
		qsort(s->commits, s->commits_nr, sizeof(*s->commits), commit_cmp);
}

const struct journey_commit *journey_commit_find(const struct journey_store *s,
						 const struct nb_oid *id)
{
	struct journey_commit key;

	key.id = *id;
	return s->commits_nr ? bsearch(&key, s->commits, s->commits_nr, sizeof(key), commit_cmp) :
			       NULL;
}

/* ---- reading ---- */

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;

	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* A string field, made clean text (the file may be old or mended by hand); NULL if none. */
static char *get_str(json_object *o, const char *key)
{
	json_object *v = get(o, key);

	return v && json_object_is_type(v, json_type_string) ?
		       utf8_clean_dup(json_object_get_string(v)) : NULL;
}

static void get_oid(struct nb_oid *out, json_object *o, const char *key)
{
	json_object *v = get(o, key);

	nb_oid_clear(out);
	if (v && json_object_is_type(v, json_type_string) &&
	    nb_oid_valid(json_object_get_string(v)))
		nb_oid_parse(out, json_object_get_string(v));
}

static size_t array_len(json_object *a)
{
	return a && json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
}

static struct journey_person *people_read(json_object *a, size_t *nr)
{
	size_t i, n = array_len(a);
	struct journey_person *p = xcalloc(n ? n : 1, sizeof(*p));

	*nr = 0;
	for (i = 0; i < n; i++) {
		json_object *x = json_object_array_get_idx(a, i);
		char *key = get_str(x, "key"), *email = get_str(x, "email");

		if (!key || !email) {
			free(key);
			free(email);
			continue;
		}
		p[*nr].key = key;
		p[*nr].email = email;
		p[*nr].name = get_str(x, "name");
		if (!p[*nr].name)
			p[*nr].name = xstrdup("");
		(*nr)++;
	}
	return p;
}

static int commit_read(struct journey_commit *c, json_object *o)
{
	memset(c, 0, sizeof(*c));
	get_oid(&c->id, o, "commit");
	get_oid(&c->patch_id, o, "patch_id");
	c->message_id = get_str(o, "message_id");
	c->subject = get_str(o, "subject");
	c->author_name = get_str(o, "author_name");
	c->author_email = get_str(o, "author_email");
	c->link = get_str(o, "link");
	c->people = people_read(get(o, "people"), &c->people_nr);
	if (nb_oid_is_null(&c->id) || !c->subject || !c->author_name || !c->author_email) {
		journey_commit_release(c);
		return -1;
	}
	return 0;
}

static void version_read(struct journey_version *v, json_object *o)
{
	memset(v, 0, sizeof(*v));
	get_oid(&v->patch_id, o, "patch_id");
	get_oid(&v->commit, o, "commit");
	v->message_id = get_str(o, "message_id");
	v->first_seen = get_str(o, "first_seen");
	v->people = people_read(get(o, "trailers"), &v->people_nr);
}

static int event_read(struct journey_event *e, json_object *o)
{
	memset(e, 0, sizeof(*e));
	e->date = get_str(o, "date");
	e->tree = get_str(o, "tree");
	e->branch = get_str(o, "branch");
	e->from = get_str(o, "from");
	e->reason = get_str(o, "reason");
	if (!e->date || journey_event_parse(&e->kind, json_object_get_string(get(o, "event"))))
		return -1;
	return 0;
}

static int journey_read(struct journey *j, json_object *o)
{
	json_object *a;
	size_t i, n;

	j->key = get_str(o, "key");
	j->subject = get_str(o, "subject");
	j->author_name = get_str(o, "author_name");
	j->author_email = get_str(o, "author_email");
	j->family = get_str(o, "family");
	j->tree = get_str(o, "tree");
	j->since = get_str(o, "since");
	j->first_seen = get_str(o, "first_seen");
	j->last_seen = get_str(o, "last_seen");
	j->held = get_str(o, "held");
	j->link = get_str(o, "link");
	if (journey_state_parse(&j->state, json_object_get_string(get(o, "state"))))
		j->state = JOURNEY_IN_REVIEW;
	a = get(o, "versions");
	n = array_len(a);
	j->versions = xcalloc(n ? n : 1, sizeof(*j->versions));
	j->versions_alloc = n ? n : 1;
	for (i = 0; i < n; i++)
		version_read(&j->versions[j->versions_nr++], json_object_array_get_idx(a, i));
	a = get(o, "events");
	for (i = 0; i < array_len(a); i++) {
		ALLOC_GROW(j->events, j->events_nr + 1, j->events_alloc);
		if (!event_read(&j->events[j->events_nr], json_object_array_get_idx(a, i)))
			j->events_nr++;
	}
	a = get(o, "told");
	for (i = 0; i < array_len(a); i++)
		strvec_push(&j->told, json_object_get_string(json_object_array_get_idx(a, i)));
	if (!j->key || !j->subject || !j->author_name || !j->author_email || !j->versions_nr)
		return -1;
	return 0;
}

static void store_read(struct journey_store *s, json_object *root)
{
	json_object *a;
	size_t i;

	s->date = get_str(root, "date");
	get_oid(&s->base_tip, root, "base_tip");
	a = get(root, "trees");
	for (i = 0; i < array_len(a); i++) {
		json_object *x = json_object_array_get_idx(a, i);
		char *name = get_str(x, "name");

		if (!name)
			continue;
		ALLOC_GROW(s->trees, s->trees_nr + 1, s->trees_alloc);
		s->trees[s->trees_nr].name = name;
		get_oid(&s->trees[s->trees_nr].tip, x, "tip");
		get_oid(&s->trees[s->trees_nr++].base, x, "base");
	}
	a = get(root, "commits");
	for (i = 0; i < array_len(a); i++) {
		ALLOC_GROW(s->commits, s->commits_nr + 1, s->commits_alloc);
		if (!commit_read(&s->commits[s->commits_nr], json_object_array_get_idx(a, i)))
			s->commits_nr++;
	}
	if (s->commits_nr)
		qsort(s->commits, s->commits_nr, sizeof(*s->commits), commit_cmp);
	a = get(root, "patches");
	for (i = 0; i < array_len(a); i++) {
		struct journey *j = journey_store_add(s);

		if (journey_read(j, json_object_array_get_idx(a, i)) < 0) {
			journey_release(j);
			s->patches_nr--;
		}
	}
}

/*
 * A damaged store costs the journeys' history, never the night: it is kept aside
 * (journeys.json.damaged) and the night starts afresh, as on a first night.
 */
static void set_aside(const char *path, const struct strbuf *text)
{
	char *copy = xstrfmt("%s.damaged", path);

	if (file_write_atomic(copy, text->buf, text->len) < 0)
		log_warn("journeys: %s is damaged and could not be copied aside: %s", path,
			 nb_error_last());
	else
		log_warn("journeys: %s is damaged (kept as %s): the journeys start afresh", path,
			 copy);
	free(copy);
}

int journey_store_load(struct journey_store *out, const char *workdir)
{
	char *path = xstrfmt("%s/journeys.json", workdir);
	struct strbuf sb = STRBUF_INIT;
	json_object *root = NULL;
	json_tokener *tok = NULL;
	int error;

	memset(out, 0, sizeof(*out));
	error = strbuf_read_file(&sb, path, STORE_MAX_BYTES);
	if (error == NB_ENOTFOUND) {
		error = 0;
		goto done;
	}
	if (error < 0)
		goto done;
	tok = json_tokener_new();
	root = json_tokener_parse_ex(tok, sb.buf, (int)sb.len);
	if (!root || !json_object_is_type(root, json_type_object))
		set_aside(path, &sb);
	else
		store_read(out, root);
done:
	json_object_put(root);
	if (tok)
		json_tokener_free(tok);
	strbuf_release(&sb);
	free(path);
	return error;
}

/* ---- writing ---- */

static void put_str(json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, v ? json_object_new_string(v) : NULL);
}

static void put_oid(json_object *o, const char *key, const struct nb_oid *id)
{
	put_str(o, key, nb_oid_is_null(id) ? NULL : id->hex);
}

static json_object *people_json(const struct journey_person *p, size_t nr)
{
	json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; i < nr; i++) {
		json_object *x = json_object_new_object();

		put_str(x, "key", p[i].key);
		put_str(x, "name", p[i].name);
		put_str(x, "email", p[i].email);
		json_object_array_add(a, x);
	}
	return a;
}

static json_object *commit_json(const struct journey_commit *c)
{
	json_object *o = json_object_new_object();

	put_oid(o, "commit", &c->id);
	put_oid(o, "patch_id", &c->patch_id);
	put_str(o, "message_id", c->message_id);
	put_str(o, "subject", c->subject);
	put_str(o, "author_name", c->author_name);
	put_str(o, "author_email", c->author_email);
	put_str(o, "link", c->link);
	json_object_object_add(o, "people", people_json(c->people, c->people_nr));
	return o;
}

static json_object *journey_json(const struct journey *j)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();
	size_t i;

	put_str(o, "key", j->key);
	put_str(o, "subject", j->subject);
	put_str(o, "author_name", j->author_name);
	put_str(o, "author_email", j->author_email);
	put_str(o, "family", j->family);
	put_str(o, "state", journey_state_name(j->state));
	put_str(o, "tree", j->tree);
	put_str(o, "since", j->since);
	put_str(o, "first_seen", j->first_seen);
	put_str(o, "last_seen", j->last_seen);
	put_str(o, "held", j->held);
	put_str(o, "link", j->link);
	for (i = 0; i < j->versions_nr; i++) {
		const struct journey_version *v = &j->versions[i];
		json_object *x = json_object_new_object();

		put_oid(x, "patch_id", &v->patch_id);
		put_str(x, "message_id", v->message_id);
		put_oid(x, "commit", &v->commit);
		put_str(x, "first_seen", v->first_seen);
		json_object_object_add(x, "trailers", people_json(v->people, v->people_nr));
		json_object_array_add(a, x);
	}
	json_object_object_add(o, "versions", a);
	a = json_object_new_array();
	for (i = 0; i < j->events_nr; i++) {
		const struct journey_event *e = &j->events[i];
		json_object *x = json_object_new_object();

		put_str(x, "date", e->date);
		put_str(x, "event", journey_event_name(e->kind));
		put_str(x, "tree", e->tree);
		put_str(x, "branch", e->branch);
		put_str(x, "from", e->from);
		put_str(x, "reason", e->reason);
		json_object_array_add(a, x);
	}
	json_object_object_add(o, "events", a);
	a = json_object_new_array();
	for (i = 0; i < j->told.nr; i++)
		json_object_array_add(a, json_object_new_string(j->told.v[i]));
	json_object_object_add(o, "told", a);
	return o;
}

int journey_store_save(const struct journey_store *s, const char *workdir)
{
	json_object *root = json_object_new_object(), *a = json_object_new_array();
	char *path = xstrfmt("%s/journeys.json", workdir);
	struct strbuf sb = STRBUF_INIT;
	size_t i;
	int error;

	json_object_object_add(root, "version", json_object_new_int(1));
	put_str(root, "date", s->date);
	put_oid(root, "base_tip", &s->base_tip);
	for (i = 0; i < s->trees_nr; i++) {
		json_object *x = json_object_new_object();

		put_str(x, "name", s->trees[i].name);
		put_oid(x, "tip", &s->trees[i].tip);
		put_oid(x, "base", &s->trees[i].base);
		json_object_array_add(a, x);
	}
	json_object_object_add(root, "trees", a);
	a = json_object_new_array();
	for (i = 0; i < s->patches_nr; i++)
		json_object_array_add(a, journey_json(&s->patches[i]));
	json_object_object_add(root, "patches", a);
	a = json_object_new_array();
	for (i = 0; i < s->commits_nr; i++)
		json_object_array_add(a, commit_json(&s->commits[i]));
	json_object_object_add(root, "commits", a);
	strbuf_addstr(&sb, json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN |
								 JSON_C_TO_STRING_NOSLASHESCAPE));
	strbuf_addch(&sb, '\n');
	json_object_put(root);
	error = file_write_atomic(path, sb.buf, sb.len);
	strbuf_release(&sb);
	free(path);
	return error;
}

/* ---- pruning ---- */

int journey_gc(const struct config *cfg, const char *today, size_t *pruned)
{
	struct journey_store s = JOURNEY_STORE_INIT;
	int error;

	*pruned = 0;
	if ((error = journey_store_load(&s, cfg->workdir)) < 0 || !s.date)
		goto done;
	/* by nights, as gc keeps runs: keep_days before the last night followed */
	*pruned = journey_store_prune(&s, today && strcmp(today, s.date) < 0 ? today : s.date,
				      cfg->keep_days);
	if (*pruned)
		error = journey_store_save(&s, cfg->workdir);
done:
	journey_store_release(&s);
	return error;
}

size_t journey_store_prune(struct journey_store *s, const char *today, int keep_days)
{
	char cutoff[16];
	size_t i, kept = 0, pruned = 0;
	int y, m, d;

	if (!today || sscanf(today, "%4d-%2d-%2d", &y, &m, &d) != 3)
		return 0;
	{
		struct tm tm = { .tm_year = y - 1900, .tm_mon = m - 1, .tm_mday = d - keep_days };
		time_t t = timegm(&tm);

		gmtime_r(&t, &tm);
		strftime(cutoff, sizeof(cutoff), "%Y-%m-%d", &tm);
	}
	for (i = 0; i < s->patches_nr; i++) {
		struct journey *j = &s->patches[i];
		const char *last = j->events_nr ? j->events[j->events_nr - 1].date : j->last_seen;

		if ((j->state == JOURNEY_MERGED || j->state == JOURNEY_GONE) && last &&
		    strcmp(last, cutoff) < 0) {
			journey_release(j);
			pruned++;
			continue;
		}
		if (kept != i)
			s->patches[kept] = *j;
		kept++;
	}
	s->patches_nr = kept;
	return pruned;
}
