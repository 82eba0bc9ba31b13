/* `nextbot patch ID`: where a patch is and has been, from journeys.txt (no lock needed). */
#include <ctype.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bot/journey/journey_int.h"
#include "merge/repo/repo.h"
#include "util/error.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* Subject substrings shorter than this match too much to mean anything. */
#define PATCH_SUBSTRING_MIN 4

static int is_hex_id(const char *id)
{
	size_t n = strlen(id), i;

	if (n < 4 || n > NB_OID_HEXSZ)
		return 0;
	for (i = 0; i < n; i++)
		if (!isxdigit((unsigned char)id[i]))
			return 0;
	return 1;
}

static int hex_prefix(const struct nb_oid *full, const char *id)
{
	return !nb_oid_is_null(full) && !strncasecmp(full->hex, id, strlen(id));
}

/* "<x@y>" or "x@y" against a stored Message-ID. */
static int msgid_is(const char *stored, const char *id)
{
	size_t n = strlen(id);

	if (!stored)
		return 0;
	if (n > 2 && id[0] == '<' && id[n - 1] == '>')
		return strlen(stored) == n - 2 && !strncmp(stored, id + 1, n - 2);
	return !strcmp(stored, id);
}

/* Flags whose id starts with `id`: their commits and patch-ids name patches too. */
static int by_flag(const struct journey *j, const struct state *st, const char *id)
{
	size_t i, v;

	for (i = 0; st && i < st->flags_nr; i++) {
		const struct flag *f = &st->flags[i];

		if (!f->id || strncasecmp(f->id, id, strlen(id)))
			continue;
		for (v = 0; v < j->versions_nr; v++)
			if (nb_patchid_eq(&j->versions[v].patch_id, &f->patch_id) ||
			    (f->commit && !strcmp(f->commit, j->versions[v].commit.hex)))
				return 1;
	}
	return 0;
}

static int by_id(const struct journey *j, const struct state *st, const char *id)
{
	size_t v;

	for (v = 0; v < j->versions_nr; v++) {
		const struct journey_version *ver = &j->versions[v];

		if (msgid_is(ver->message_id, id) ||
		    (is_hex_id(id) &&
		     (hex_prefix(&ver->commit, id) ||
		      nb_patchid_has_prefix(&ver->patch_id, id, strlen(id)))))
			return 1;
	}
	return is_hex_id(id) && by_flag(j, st, id);
}

size_t journey_match(const struct journey_store *s, const struct state *st, const char *id,
		     size_t *out, size_t max)
{
	size_t i, n = 0, pass;

	/* ids first; a word that names no id may still be part of a subject */
	for (pass = 0; pass < 2 && !n; pass++)
		for (i = 0; i < s->patches_nr; i++) {
			const struct journey *j = &s->patches[i];
			int hit = pass == 0 ? by_id(j, st, id) :
					      strlen(id) >= PATCH_SUBSTRING_MIN &&
						      strcasestr(j->subject, id) != NULL;

			if (!hit)
				continue;
			if (n < max)
				out[n] = i;
			n++;
		}
	return n;
}

/* Does flag f name a version of journey j (by patch-id, or its commit)? */
static int flag_names(const struct flag *f, const struct journey *j)
{
	size_t v;

	for (v = 0; v < j->versions_nr; v++)
		if (nb_patchid_eq(&j->versions[v].patch_id, &f->patch_id) ||
		    (f->commit && !strcmp(f->commit, j->versions[v].commit.hex)))
			return 1;
	return 0;
}

/*
 * The patch's state as the command says it: the journey's, but a patch in next
 * that the last night carried reverted (an open flag of it, reverted, seen that
 * night) is "reverted-in-next", whichever way the journey was told.
 */
static const char *shown_state(const struct journey *j, const struct state *st)
{
	const char *last = st && st->runs_nr ? st->runs[st->runs_nr - 1].date : NULL;
	size_t i;

	if (j->state != JOURNEY_IN_NEXT || !last)
		return journey_state_name(j->state);
	for (i = 0; i < st->flags_nr; i++) {
		const struct flag *f = &st->flags[i];

		if (f->state == FLAG_OPEN && f->action == FLAG_REVERTED && f->last_seen &&
		    !strcmp(f->last_seen, last) && flag_names(f, j))
			return "reverted-in-next";
	}
	return journey_state_name(j->state);
}

/* A state's name in words, for a reader: "reverted-in-next" is "reverted in next". */
static void add_state_words(struct strbuf *out, const char *name)
{
	for (; *name; name++)
		strbuf_addch(out, *name == '-' ? ' ' : *name);
}

/* ---- JSON ---- */

static json_object *jstr(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static json_object *joid(const struct nb_oid *id)
{
	return nb_oid_is_null(id) ? NULL : json_object_new_string(id->hex);
}

static json_object *jpid(const struct nb_patchid *id)
{
	return nb_patchid_is_none(id) ? NULL : json_object_new_string(NB_PATCHID_HEX(id));
}

static int is_review(const char *key)
{
	enum trailer_kind kind = trailer_kind_parse(key);

	return kind == TRAILER_REVIEWED || kind == TRAILER_ACKED;
}

static json_object *version_json(const struct journey_version *v)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();
	size_t i;

	json_object_object_add(o, "patch_id", jpid(&v->patch_id));
	json_object_object_add(o, "message_id", jstr(v->message_id));
	json_object_object_add(o, "commit", joid(&v->commit));
	json_object_object_add(o, "first_seen", jstr(v->first_seen));
	for (i = 0; i < v->people_nr; i++) {
		char *t = xstrfmt("%s: %s <%s>", v->people[i].key, v->people[i].name,
				  v->people[i].email);

		json_object_array_add(a, json_object_new_string(t));
		free(t);
	}
	json_object_object_add(o, "trailers", a);
	return o;
}

static json_object *event_json(const struct journey_event *e)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "date", jstr(e->date));
	json_object_object_add(o, "event", jstr(journey_event_name(e->kind)));
	json_object_object_add(o, "tree", jstr(e->tree));
	json_object_object_add(o, "branch", jstr(e->branch));
	json_object_object_add(o, "from", jstr(e->from));
	json_object_object_add(o, "reason", jstr(e->reason));
	return o;
}

static json_object *flags_json(const struct journey *j, const struct state *st)
{
	json_object *a = json_object_new_array();
	size_t i, v;

	for (i = 0; st && i < st->flags_nr; i++) {
		const struct flag *f = &st->flags[i];

		for (v = 0; v < j->versions_nr; v++)
			if (nb_patchid_eq(&j->versions[v].patch_id, &f->patch_id) ||
			    (f->commit && !strcmp(f->commit, j->versions[v].commit.hex))) {
				json_object_array_add(a, json_object_new_string(f->id));
				break;
			}
	}
	return a;
}

static json_object *patch_json(const struct journey *j, const struct state *st)
{
	const struct journey_version *last = &j->versions[j->versions_nr - 1];
	json_object *o = json_object_new_object(), *a, *x;
	size_t i;

	json_object_object_add(o, "patch_id", jpid(&last->patch_id));
	json_object_object_add(o, "message_id", jstr(last->message_id));
	json_object_object_add(o, "subject", jstr(j->subject));
	x = json_object_new_object();
	json_object_object_add(x, "name", jstr(j->author_name));
	json_object_object_add(x, "email", jstr(j->author_email));
	json_object_object_add(o, "author", x);
	json_object_object_add(o, "state", jstr(shown_state(j, st)));
	json_object_object_add(o, "tree", jstr(j->tree));
	json_object_object_add(o, "since", jstr(j->since));
	json_object_object_add(o, "held", jstr(j->held));
	json_object_object_add(o, "link", jstr(j->link));
	a = json_object_new_array();
	for (i = 0; i < j->versions_nr; i++)
		json_object_array_add(a, version_json(&j->versions[i]));
	json_object_object_add(o, "versions", a);
	a = json_object_new_array();
	for (i = 0; i < j->events_nr; i++)
		json_object_array_add(a, event_json(&j->events[i]));
	json_object_object_add(o, "events", a);
	a = json_object_new_array();
	for (i = 0; i < last->people_nr; i++) {
		if (!is_review(last->people[i].key))
			continue;
		x = json_object_new_object();
		json_object_object_add(x, "trailer", jstr(last->people[i].key));
		json_object_object_add(x, "name", jstr(last->people[i].name));
		json_object_object_add(x, "email", jstr(last->people[i].email));
		json_object_array_add(a, x);
	}
	json_object_object_add(o, "reviews", a);
	json_object_object_add(o, "flags", flags_json(j, st));
	return o;
}

/* ---- text ---- */

/*
 * One line for a terminal: valid UTF-8, no control characters, and no bidirectional
 * overrides or isolates (U+202A..U+202E, U+2066..U+2069, U+200E, U+200F, U+061C),
 * which would let a subject reorder what is printed after it: each becomes U+FFFD.
 */
static void add_line(struct strbuf *out, const char *s)
{
	struct strbuf sb = STRBUF_INIT;
	const unsigned char *p;

	utf8_repair(&sb, s ? s : "", s ? strlen(s) : 0);
	utf8_strip_controls(&sb);
	for (p = (const unsigned char *)sb.buf; *p; p++) {
		int bidi = (p[0] == 0xe2 && p[1] == 0x80 &&
			    ((p[2] >= 0xaa && p[2] <= 0xae) || p[2] == 0x8e || p[2] == 0x8f)) ||
			   (p[0] == 0xe2 && p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9) ||
			   (p[0] == 0xd8 && p[1] == 0x9c);

		if (bidi) {
			strbuf_addstr(out, "\xef\xbf\xbd");
			p += p[0] == 0xd8 ? 1 : 2;
		} else {
			strbuf_addch(out, (char)*p);
		}
	}
	strbuf_release(&sb);
}

static void text_of(struct strbuf *out, const struct journey *j, const struct state *st)
{
	size_t i, k;

	add_line(out, j->subject);
	strbuf_addstr(out, "\n  author:  ");
	add_line(out, j->author_name);
	strbuf_addstr(out, " <");
	add_line(out, j->author_email);
	strbuf_addstr(out, ">\n  state:   ");
	add_state_words(out, shown_state(j, st));
	if (j->tree) {
		strbuf_addstr(out, " (tree ");
		add_line(out, j->tree);
		strbuf_addf(out, " since %s)", j->since ? j->since : "?");
	}
	if (j->held) {
		strbuf_addstr(out, " (held: ");
		add_line(out, j->held);
		strbuf_addch(out, ')');
	}
	strbuf_addstr(out, "\n  versions:\n");
	for (i = 0; i < j->versions_nr; i++) {
		const struct journey_version *v = &j->versions[i];

		strbuf_addf(out, "    v%zu  %s  commit %.12s  patch-id %.12s  <", i + 1,
			    v->first_seen ? v->first_seen : "?", v->commit.hex,
			    nb_patchid_is_none(&v->patch_id) ? "-" : NB_PATCHID_HEX(&v->patch_id));
		add_line(out, v->message_id ? v->message_id : "");
		strbuf_addstr(out, ">\n");
		for (k = 0; k < v->people_nr; k++) {
			strbuf_addstr(out, "        ");
			add_line(out, v->people[k].key);
			strbuf_addstr(out, ": ");
			add_line(out, v->people[k].name);
			strbuf_addstr(out, " <");
			add_line(out, v->people[k].email);
			strbuf_addstr(out, ">\n");
		}
	}
	strbuf_addstr(out, "  events:\n");
	for (i = 0; i < j->events_nr; i++) {
		const struct journey_event *e = &j->events[i];

		strbuf_addf(out, "    %s  %-8s ", e->date, journey_event_name(e->kind));
		if (e->from) {
			add_line(out, e->from);
			strbuf_addstr(out, " -> ");
		}
		add_line(out, e->tree ? e->tree : "");
		if (e->reason) {
			strbuf_addstr(out, ": ");
			add_line(out, e->reason);
		}
		strbuf_addch(out, '\n');
	}
	for (i = 0; st && i < st->flags_nr; i++)
		for (k = 0; k < j->versions_nr; k++)
			if (nb_patchid_eq(&j->versions[k].patch_id, &st->flags[i].patch_id)) {
				strbuf_addf(out, "  flag %s (%s)\n", st->flags[i].id,
					    flag_state_name(st->flags[i].state));
				break;
			}
}

int journey_patch_show(struct strbuf *out, const struct config *cfg, struct state *st,
		       const char *id, int json)
{
	struct journey_store s = JOURNEY_STORE_INIT;
	size_t hits[JOURNEY_PATCH_MAX], nr, i;
	int error;

	if ((error = journey_store_load(&s, cfg->workdir)) < 0)
		return error;
	nr = journey_match(&s, st, id, hits, JOURNEY_PATCH_MAX);
	if (!nr && !is_hex_id(id) && !strchr(id, '@') && strlen(id) < PATCH_SUBSTRING_MIN) {
		error = nb_error_set(NB_EINVALID, "'%s': a subject substring needs %d characters "
				     "or more", id, PATCH_SUBSTRING_MIN);
		goto done;
	}
	if (!nr) {
		error = nb_error_set(NB_ENOTFOUND, "no patch's journey matches '%s'", id);
		goto done;
	}
	if (json) {
		json_object *root = json_object_new_object(), *a = json_object_new_array();

		for (i = 0; i < nr && i < JOURNEY_PATCH_MAX; i++)
			json_object_array_add(a, patch_json(&s.patches[hits[i]], st));
		json_object_object_add(root, "patches", a);
		strbuf_addstr(out, json_object_to_json_string_ext(
					   root, JSON_C_TO_STRING_PRETTY |
							 JSON_C_TO_STRING_NOSLASHESCAPE));
		strbuf_addch(out, '\n');
		json_object_put(root);
	} else if (nr == 1) {
		text_of(out, &s.patches[hits[0]], st);
	} else {
		strbuf_addf(out, "%zu patches match '", nr);
		add_line(out, id);
		strbuf_addf(out, "'%s:\n", nr > JOURNEY_PATCH_MAX ? " (the first 50)" : "");
		for (i = 0; i < nr && i < JOURNEY_PATCH_MAX; i++) {
			const struct journey *j = &s.patches[hits[i]];

			size_t col = out->len;

			strbuf_addf(out, "  %.12s  ", j->versions[j->versions_nr - 1].commit.hex);
			add_state_words(out, shown_state(j, st));
			while (out->len - col < 34)
				strbuf_addch(out, ' ');
			strbuf_addch(out, ' ');
			add_line(out, j->subject);
			strbuf_addstr(out, "\n      by ");
			add_line(out, j->author_name);
			strbuf_addstr(out, " <");
			add_line(out, j->author_email);
			strbuf_addstr(out, ">\n");
		}
	}
done:
	journey_store_release(&s);
	return error;
}

/* ---- the dashboard's list of held patches ---- */

static int held_cmp(const void *a, const void *b)
{
	const struct journey_held *x = a, *y = b;

	return strcmp(x->since ? x->since : "", y->since ? y->since : "");
}

int journey_held_list(const struct config *cfg, struct journey_held **out, size_t *nr)
{
	struct journey_store s = JOURNEY_STORE_INIT;
	size_t i;
	int error;

	*out = NULL;
	*nr = 0;
	if ((error = journey_store_load(&s, cfg->workdir)) < 0)
		return error;
	*out = xcalloc(s.patches_nr + 1, sizeof(**out));
	for (i = 0; i < s.patches_nr; i++) {
		const struct journey *j = &s.patches[i];
		struct journey_held *h = &(*out)[*nr];

		if (!j->held)
			continue;
		h->subject = xstrdup(j->subject ? j->subject : "");
		h->author = j->author_name && *j->author_name ? xstrdup(j->author_name)
			    : xstrdup(j->author_email ? j->author_email : "");
		h->tree = j->tree ? xstrdup(j->tree) : NULL;
		h->since = j->since ? xstrdup(j->since) : NULL;
		h->why = xstrdup(j->held);
		(*nr)++;
	}
	qsort(*out, *nr, sizeof(**out), held_cmp);
	journey_store_release(&s);
	return 0;
}

void journey_held_free(struct journey_held *v, size_t nr)
{
	size_t i;

	for (i = 0; v && i < nr; i++) {
		free(v[i].subject);
		free(v[i].author);
		free(v[i].tree);
		free(v[i].since);
		free(v[i].why);
	}
	free(v);
}
