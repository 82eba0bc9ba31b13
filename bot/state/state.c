/* state.json: the bot's memory between nights, read and written with json-c. */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "bot/state/state.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define STATE_MAX_BYTES (256u << 20)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- the states' names (index = enum value; 0 is unset, JSON null) ---- */

static const char *const flag_kind_names[] = { NULL, "build-failure", "test-failure", "flaky" };
static const char *const flag_state_names[] = { NULL, "open", "dropped", "resolved", "dismissed" };
static const char *const flag_resolution_names[] = { NULL, "left-tree", "fixed", "gone" };
static const char *const flag_action_names[] = { NULL, "none", "reverted", "previous-version",
						 "dropped-tree" };
static const char *const tree_state_names[] = { NULL,	     "merged", "reverted",
						"previous-version", "stale", "left-out",
						"fetch-failed" };
static const char *const run_result_names[] = { NULL,	     "clean",	 "regression",
						"base-broken", "unfinished", "failed" };
static const char *const mail_outcome_names[] = { NULL, "acted", "refused", "ignored" };
static const char *const test_state_names[] = { NULL, "queued", "passed", "failed", "error" };

static const char *name_of(const char *const *names, size_t nr, unsigned v)
{
	return v < nr ? names[v] : NULL;
}

static int parse_name(const char *const *names, size_t nr, const char *s)
{
	size_t i;

	if (!s)
		return 0;
	for (i = 1; i < nr; i++)
		if (!strcmp(names[i], s))
			return (int)i;
	return -1;
}

#define STATE_NAMES(type, table)                                                   \
	const char *type##_name(enum type v)                                       \
	{                                                                          \
		return name_of(table, ARRAY_SIZE(table), (unsigned)v);             \
	}                                                                          \
	int type##_parse(enum type *out, const char *s)                            \
	{                                                                          \
		int v = parse_name(table, ARRAY_SIZE(table), s);                   \
		if (v < 0)                                                         \
			return -1;                                                 \
		*out = (enum type)v;                                               \
		return 0;                                                          \
	}

STATE_NAMES(flag_kind, flag_kind_names)
STATE_NAMES(flag_state, flag_state_names)
STATE_NAMES(flag_resolution, flag_resolution_names)
STATE_NAMES(flag_action, flag_action_names)
STATE_NAMES(tree_state, tree_state_names)
STATE_NAMES(run_result, run_result_names)
STATE_NAMES(mail_outcome, mail_outcome_names)
STATE_NAMES(test_state, test_state_names)

/* ---- reading ---- */

static char *get_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	/* a file an older nextbot wrote may hold raw text from strangers */
	return utf8_clean_dup(json_object_get_string(v));
}

static int get_int(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v))
		return 0;
	return json_object_get_int(v);
}

static struct json_object *get_obj(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_object))
		return NULL;
	return v;
}

static void get_strvec(struct strvec *out, struct json_object *o, const char *key)
{
	struct json_object *v;
	size_t i, n;

	if (!o || !json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_array))
		return;
	n = json_object_array_length(v);
	for (i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(v, i);

		if (json_object_is_type(e, json_type_string))
			strvec_push_nodup(out, utf8_clean_dup(json_object_get_string(e)));
	}
}

/*
 * An enum-valued key: a string _parse() knows, or null/absent (unset).  Anything
 * else is a damaged file: said once, and the load fails.
 */
static int get_enum(struct json_object *o, const char *key, const char *const *names,
		    size_t nr, int *out)
{
	struct json_object *v;
	int e;

	*out = 0;
	if (!o || !json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
		return 0;
	if (!json_object_is_type(v, json_type_string) ||
	    (e = parse_name(names, nr, json_object_get_string(v))) < 0)
		return nb_error_set(NB_ERROR, "state.json: unknown %s '%s'", key,
				    json_object_get_string(v));
	*out = e;
	return 0;
}

/*
 * A patch-id: 40 hex digits, or null/absent/"" (none: a binary or merge change).
 * Anything else is a damaged file, said naming `what` (the field), and the load fails.
 */
static int get_patchid(struct json_object *o, const char *key, const char *what,
		       struct nb_patchid *out)
{
	struct json_object *v;

	*out = (struct nb_patchid)NB_PATCHID_NONE;
	if (!o || !json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
		return 0;
	if (!json_object_is_type(v, json_type_string) ||
	    nb_patchid_parse(out, json_object_get_string(v)) < 0)
		return nb_error_set(NB_ERROR, "state.json: %s '%s' is not a patch-id (%d hex "
				    "digits, or null for none)", what, json_object_get_string(v),
				    NB_OID_HEXSZ);
	return 0;
}

#define GET_ENUM(o, key, table, field)                                              \
	do {                                                                        \
		int v_;                                                             \
		if (get_enum(o, key, table, ARRAY_SIZE(table), &v_) < 0)             \
			error = -1;                                                 \
		field = v_;                                                         \
	} while (0)

static void get_person(struct person *p, struct json_object *o)
{
	p->name = get_str(o, "name");
	p->email = get_str(o, "email");
}

static void flag_mail_read(struct flag *f, struct json_object *o)
{
	struct json_object *fix = get_obj(o, "fix"), *arr;
	size_t i, n;

	if (fix) {
		f->fix_subject = get_str(fix, "subject");
		f->fix_by = get_str(fix, "by");
		f->fix_date = get_str(fix, "date");
		f->fix_commit = get_str(fix, "commit");
	}
	if (!json_object_object_get_ex(o, "mail", &arr) ||
	    !json_object_is_type(arr, json_type_array))
		return;
	n = json_object_array_length(arr);
	for (i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		char *c = get_str(e, "command"), *by = get_str(e, "by");
		char *id = get_str(e, "message_id"), *when = get_str(e, "when");
		char *text = get_str(e, "text");

		state_flag_mail_add(f, c, by, id, when, text);
		free(c);
		free(by);
		free(id);
		free(when);
		free(text);
	}
}

static void cells_read(struct flag *f, struct json_object *o)
{
	struct json_object *v, *env;
	size_t i, n;

	if (!json_object_object_get_ex(o, "cells", &v) || !json_object_is_type(v, json_type_array))
		return;
	n = json_object_array_length(v);
	for (i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(v, i);
		struct flag_cell *c;
		char *name = json_object_is_type(e, json_type_object) ? get_str(e, "name") : NULL;

		if (!name)
			continue;
		ALLOC_GROW(f->cells, f->cells_nr + 1, f->cells_alloc);
		c = &f->cells[f->cells_nr++];
		c->name = name;
		c->env = (struct strvec)STRVEC_INIT;
		c->first_error = get_str(e, "first_error");
		c->first_seen = get_str(e, "first_seen");
		env = get_obj(e, "env");
		if (env && json_object_is_type(env, json_type_object)) {
			json_object_object_foreach(env, k, val)
				if (json_object_is_type(val, json_type_string))
					strvec_pushf(&c->env, "%s=%s", k,
						     json_object_get_string(val));
		}
	}
}

static int flag_read(struct flag *f, struct json_object *o)
{
	int error = 0;
	struct json_object *partner = get_obj(o, "partner");
	struct json_object *verdict = get_obj(o, "verdict");
	struct json_object *bisect = get_obj(o, "bisect");

	f->id = get_str(o, "id");
	f->fingerprint = get_str(o, "fingerprint");
	GET_ENUM(o, "kind", flag_kind_names, f->kind);
	f->tree = get_str(o, "tree");
	f->commit = get_str(o, "commit");
	if (get_patchid(o, "patch_id", "patch_id", &f->patch_id) < 0)
		error = -1;
	f->message_id = get_str(o, "message_id");
	f->subject = get_str(o, "subject");
	get_person(&f->author, get_obj(o, "author"));
	if (partner) {
		f->partner_tree = get_str(partner, "tree");
		f->partner_commit = get_str(partner, "commit");
		f->partner_subject = get_str(partner, "subject");
		if (get_patchid(partner, "patch_id", "partner.patch_id", &f->partner_patch_id) < 0)
			error = -1;
		f->partner_message_id = get_str(partner, "message_id");
		get_person(&f->partner_author, get_obj(partner, "author"));
	}
	f->command = get_str(o, "command");
	f->exit_code = get_int(o, "exit_code");
	f->timed_out = get_int(o, "timed_out");
	f->error = get_str(o, "error");
	f->excerpt = get_str(o, "excerpt");
	f->first_seen = get_str(o, "first_seen");
	f->last_seen = get_str(o, "last_seen");
	GET_ENUM(o, "state", flag_state_names, f->state);
	f->reason = get_str(o, "reason");
	GET_ENUM(o, "resolution", flag_resolution_names, f->resolution);
	f->culprit_fails = get_int(verdict, "culprit_fails");
	f->parent_passes = get_int(verdict, "parent_passes");
	f->revert_passes = get_int(verdict, "revert_passes");
	f->steps = get_int(bisect, "steps");
	f->confirm_runs = get_int(bisect, "confirm_runs");
	get_strvec(&f->log, bisect, "log");
	f->failing = get_int(o, "failing");
	f->total = get_int(o, "total");
	cells_read(f, o);
	f->repro_base = get_str(o, "repro_base");
	get_strvec(&f->repro, o, "repro");
	f->tree_head = get_str(o, "tree_head");
	f->commit_date = get_str(o, "commit_date");
	f->patch_link = get_str(o, "patch_link");
	f->compiler = get_str(o, "compiler");
	GET_ENUM(o, "action", flag_action_names, f->action);
	f->notified = get_str(o, "notified");
	f->reminded = get_str(o, "reminded");
	f->report_thread = get_str(o, "report_thread");
	flag_mail_read(f, o);
	return error;
}

static int drop_read(struct drop *d, struct json_object *o)
{
	int error = 0;

	d->tree = get_str(o, "tree");
	d->commit = get_str(o, "commit");
	if (get_patchid(o, "patch_id", "patch_id", &d->patch_id) < 0)
		error = -1;
	d->message_id = get_str(o, "message_id");
	d->subject = get_str(o, "subject");
	get_person(&d->author, get_obj(o, "author"));
	d->flag_id = get_str(o, "flag_id");
	d->reason = get_str(o, "reason");
	d->when = get_str(o, "when");
	d->active = get_int(o, "active");
	d->by = get_str(o, "by");
	d->mail = get_str(o, "mail");
	return error;
}

static int run_read(struct run_record *r, struct json_object *o)
{
	struct json_object *trees;
	size_t i, n;
	int error = 0;

	r->date = get_str(o, "date");
	r->tag = get_str(o, "tag");
	r->next = get_str(o, "next");
	GET_ENUM(o, "result", run_result_names, r->result);
	r->started = get_str(o, "started");
	r->finished = get_str(o, "finished");
	get_strvec(&r->flags, o, "flags");
	get_strvec(&r->notes, o, "notes");
	get_strvec(&r->conflicts, o, "conflicts");
	get_strvec(&r->notices, o, "notices");
	if (!json_object_object_get_ex(o, "trees", &trees) ||
	    !json_object_is_type(trees, json_type_array))
		return error;
	n = json_object_array_length(trees);
	for (i = 0; i < n; i++) {
		struct json_object *t = json_object_array_get_idx(trees, i);
		struct run_tree *rt = state_run_tree_add(r);

		rt->name = get_str(t, "name");
		rt->branch = get_str(t, "branch");
		rt->sha1 = get_str(t, "sha1");
		GET_ENUM(t, "state", tree_state_names, rt->state);
		rt->reason = get_str(t, "reason");
	}
	return error;
}

static void run_init(struct run_record *r, const char *date);
static struct json_object *get_array(struct json_object *o, const char *key, size_t *n);

static int test_read(struct test_request *t, struct json_object *o)
{
	int error = 0;

	t->key = get_str(o, "key");
	t->flag_id = get_str(o, "flag");
	t->by = get_str(o, "by");
	t->url = get_str(o, "url");
	t->branch = get_str(o, "branch");
	t->when = get_str(o, "when");
	GET_ENUM(o, "state", test_state_names, t->state);
	t->commit = get_str(o, "commit");
	t->result = get_str(o, "result");
	t->reply_name = get_str(o, "reply_name");
	t->reply_subject = get_str(o, "reply_subject");
	t->reply_message_id = get_str(o, "reply_message_id");
	get_strvec(&t->reply_cc, o, "reply_cc");
	get_strvec(&t->reply_references, o, "reply_references");
	return error;
}

/* The sent Message-IDs, the handled mails and the test requests. */
static void review_read(struct state *s, struct json_object *e)
{
	char *by = get_str(e, "by"), *kind = get_str(e, "kind"), *mail = get_str(e, "mail");
	char *when = get_str(e, "when");
	struct strvec thread = STRVEC_INIT;
	struct json_object *arr;
	size_t i, n;

	if ((arr = get_array(e, "thread", &n)))
		for (i = 0; i < n; i++) {
			struct json_object *v = json_object_array_get_idx(arr, i);

			if (json_object_is_type(v, json_type_string))
				strvec_push(&thread, json_object_get_string(v));
		}
	state_review_add(s, by, kind, mail, when, &thread);
	strvec_clear(&thread);
	free(by);
	free(kind);
	free(mail);
	free(when);
}

static int mail_read(struct state *s, struct json_object *root)
{
	int error = 0;

	struct json_object *arr;
	size_t i, n;

	if ((arr = get_array(root, "sent", &n))) {
		for (i = 0; i < n; i++) {
			struct json_object *e = json_object_array_get_idx(arr, i);
			struct sent_mail *m;

			ALLOC_GROW(s->sent, s->sent_nr + 1, s->sent_alloc);
			m = &s->sent[s->sent_nr++];
			m->message_id = get_str(e, "message_id");
			m->kind = get_str(e, "kind");
			m->flag_id = get_str(e, "flag");
			m->conflict = get_str(e, "conflict");
			if (!m->message_id) {
				free(m->kind);
				free(m->flag_id);
				free(m->conflict);
				s->sent_nr--;
			}
		}
	}
	if ((arr = get_array(root, "inbox", &n))) {
		for (i = 0; i < n; i++) {
			struct json_object *e = json_object_array_get_idx(arr, i);
			char *key = get_str(e, "key"), *from = get_str(e, "from");
			char *when = get_str(e, "when"), *summary = get_str(e, "summary");
			enum mail_outcome outcome;

			GET_ENUM(e, "outcome", mail_outcome_names, outcome);
			if (key) /* "content": since issue 38; absent before */
				state_inbox_add(s, key, from, when, outcome, summary)->content =
					get_str(e, "content");
			free(key);
			free(from);
			free(when);
			free(summary);
		}
	}
	if ((arr = get_array(root, "reviews", &n))) /* absent before version 2 */
		for (i = 0; i < n; i++)
			review_read(s, json_object_array_get_idx(arr, i));
	if ((arr = get_array(root, "tests", &n)))
		for (i = 0; i < n; i++)
			if (test_read(state_test_add(s), json_object_array_get_idx(arr, i)) < 0)
				error = -1;
	return error;
}

static struct run_record *run_append(struct state *s)
{
	ALLOC_GROW(s->runs, s->runs_nr + 1, s->runs_alloc);
	run_init(&s->runs[s->runs_nr], "");
	free(s->runs[s->runs_nr].date);
	s->runs[s->runs_nr].date = NULL;
	return &s->runs[s->runs_nr++];
}

static struct json_object *get_array(struct json_object *o, const char *key, size_t *n)
{
	struct json_object *v;

	*n = 0;
	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_array))
		return NULL;
	*n = json_object_array_length(v);
	return v;
}

/* Line and column (1-based) of byte `off` of `text`. */
static void where(const struct strbuf *text, size_t off, size_t *line, size_t *col)
{
	size_t i;

	*line = *col = 1;
	for (i = 0; i < off && i < text->len; i++) {
		if (text->buf[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

/*
 * A damaged state: a copy kept beside it (one per content, so a second attempt
 * adds nothing), and a message that says what is wrong, where, and what to do.
 * The file itself stays: a night on an empty state would mail every breakage again.
 */
static int damaged(const char *path, const struct strbuf *text, const char *what)
{
	unsigned long long h = 1469598103934665603ULL;
	char *copy;
	size_t i;

	for (i = 0; i < text->len; i++)
		h = (h ^ (unsigned char)text->buf[i]) * 1099511628211ULL;
	copy = xstrfmt("%s.damaged-%016llx", path, h);
	if (!file_exists(copy) && file_write_atomic(copy, text->buf, text->len) < 0) {
		free(copy);
		copy = xstrdup("(a copy could not be made)");
	}
	nb_error_set(NB_ERROR,
		     "'%s' is damaged: %s.  A copy is kept as '%s'.  To recover: mend the file "
		     "at that place (it is JSON) and run again, or move it away to start with "
		     "an empty state (flags, drops and the record of sent mail are then "
		     "forgotten: breakages still there are found and reported again)",
		     path, what, copy);
	free(copy);
	return NB_ERROR;
}

int state_load(struct state *out, const char *workdir)
{
	char *path = xstrfmt("%s/state.json", workdir);
	struct strbuf sb = STRBUF_INIT;
	struct json_object *root = NULL, *arr;
	struct json_tokener *tok = NULL;
	char *bad = NULL;
	size_t i, n;
	int error;

	memset(out, 0, sizeof(*out));
	error = strbuf_read_file(&sb, path, STATE_MAX_BYTES);
	if (error == NB_ENOTFOUND) {
		error = 0;
		goto done;
	}
	if (error < 0)
		goto done;
	tok = json_tokener_new();
	root = json_tokener_parse_ex(tok, sb.buf, (int)sb.len);
	if (!root || !json_object_is_type(root, json_type_object) ||
	    (size_t)json_tokener_get_parse_end(tok) < sb.len) {
		enum json_tokener_error e = json_tokener_get_error(tok);
		size_t end = json_tokener_get_parse_end(tok), line, col;
		struct strbuf what = STRBUF_INIT;

		/* trailing blanks after the document are fine */
		while (root && end < sb.len && strchr(" \t\r\n", sb.buf[end]))
			end++;
		if (root && end == sb.len && json_object_is_type(root, json_type_object))
			goto parsed;
		where(&sb, end, &line, &col);
		if (!sb.len || e == json_tokener_continue)
			strbuf_addf(&what, "it ends in the middle (line %zu, column %zu): "
				    "truncated", line, col);
		else if (root && json_object_is_type(root, json_type_object))
			strbuf_addf(&what, "text after the document at line %zu, column %zu",
				    line, col);
		else if (root)
			strbuf_addf(&what, "it is not a JSON object (line 1, column 1)");
		else
			strbuf_addf(&what, "%s at line %zu, column %zu",
				    json_tokener_error_desc(e), line, col);
		error = damaged(path, &sb, what.buf);
		strbuf_release(&what);
		goto done;
	}
parsed:
	if ((arr = get_array(root, "runs", &n)))
		for (i = 0; i < n && error >= 0; i++)
			if ((error = run_read(run_append(out),
					      json_object_array_get_idx(arr, i))) < 0)
				bad = xstrfmt("%s, in runs[%zu]", nb_error_last(), i);
	if (error >= 0 && (arr = get_array(root, "flags", &n)))
		for (i = 0; i < n && error >= 0; i++)
			if ((error = flag_read(state_flag_add(out),
					       json_object_array_get_idx(arr, i))) < 0)
				bad = xstrfmt("%s, in flags[%zu]", nb_error_last(), i);
	if (error >= 0 && (arr = get_array(root, "drops", &n)))
		for (i = 0; i < n && error >= 0; i++)
			if ((error = drop_read(state_drop_add(out),
					       json_object_array_get_idx(arr, i))) < 0)
				bad = xstrfmt("%s, in drops[%zu]", nb_error_last(), i);
	if (error < 0) {
		error = damaged(path, &sb, bad ? bad : nb_error_last());
		goto done;
	}
	error = mail_read(out, root);
done:
	if (tok)
		json_tokener_free(tok);
	json_object_put(root);
	strbuf_release(&sb);
	free(path);
	free(bad);
	return error;
}

/* ---- writing ---- */

/*
 * Every string the state holds came from somewhere (subjects, build output, file
 * names): json-c 0.16 writes invalid UTF-8 as it is, which makes the file invalid
 * JSON, and escape sequences would act on the terminal of whoever prints it.
 */
static struct json_object *clean_string(const char *val)
{
	struct json_object *s;
	char *clean;

	if (!val)
		return NULL;
	clean = utf8_clean_dup(val);
	s = json_object_new_string(clean);
	free(clean);
	return s;
}

static void put_str(struct json_object *o, const char *key, const char *val)
{
	json_object_object_add(o, key, clean_string(val));
}

/* A patch-id's hex, or null for none. */
static void put_patchid(struct json_object *o, const char *key, const struct nb_patchid *p)
{
	json_object_object_add(o, key, nb_patchid_is_none(p) ? NULL
				       : json_object_new_string(NB_PATCHID_HEX(p)));
}

static void put_int(struct json_object *o, const char *key, int val)
{
	json_object_object_add(o, key, json_object_new_int(val));
}

static struct json_object *strvec_json(const struct strvec *sv)
{
	struct json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; i < sv->nr; i++)
		json_object_array_add(a, clean_string(sv->v[i]));
	return a;
}

static struct json_object *person_json(const struct person *p)
{
	struct json_object *o = json_object_new_object();

	put_str(o, "name", p->name);
	put_str(o, "email", p->email);
	return o;
}

/* "fix": {subject, by, date, commit} or null, "mail": [{command, by, message_id, when, text}] */
static void flag_mail_json(struct json_object *o, const struct flag *f)
{
	struct json_object *fix = NULL, *arr = json_object_new_array();
	size_t i;

	if (f->fix_subject) {
		fix = json_object_new_object();
		put_str(fix, "subject", f->fix_subject);
		put_str(fix, "by", f->fix_by);
		put_str(fix, "date", f->fix_date);
		put_str(fix, "commit", f->fix_commit);
	}
	json_object_object_add(o, "fix", fix);
	for (i = 0; i < f->mail_nr; i++) {
		struct json_object *e = json_object_new_object();
		const struct flag_mail *m = &f->mail[i];

		put_str(e, "command", m->command);
		put_str(e, "by", m->by);
		put_str(e, "message_id", m->message_id);
		put_str(e, "when", m->when);
		put_str(e, "text", m->text);
		json_object_array_add(arr, e);
	}
	json_object_object_add(o, "mail", arr);
}

/* [{name, env: {KEY: VALUE}, first_error, first_seen}] */
static struct json_object *cells_json(const struct flag *f)
{
	struct json_object *a = json_object_new_array();
	size_t i, j;

	for (i = 0; i < f->cells_nr; i++) {
		const struct flag_cell *c = &f->cells[i];
		struct json_object *o = json_object_new_object(), *env = json_object_new_object();

		for (j = 0; j < c->env.nr; j++) {
			const char *eq = strchr(c->env.v[j], '=');
			char *k;

			if (!eq)
				continue;
			k = xstrndup(c->env.v[j], (size_t)(eq - c->env.v[j]));
			json_object_object_add(env, k, json_object_new_string(eq + 1));
			free(k);
		}
		put_str(o, "name", c->name);
		json_object_object_add(o, "env", env);
		put_str(o, "first_error", c->first_error);
		put_str(o, "first_seen", c->first_seen);
		json_object_array_add(a, o);
	}
	return a;
}

static struct json_object *flag_json(const struct flag *f, int full)
{
	struct json_object *o = json_object_new_object();
	struct json_object *verdict = json_object_new_object();
	struct json_object *bisect = json_object_new_object();
	struct json_object *partner = NULL;

	put_str(o, "id", f->id);
	put_str(o, "tree", f->tree);
	put_str(o, "commit", f->commit);
	put_patchid(o, "patch_id", &f->patch_id);
	put_str(o, "message_id", f->message_id);
	put_str(o, "subject", f->subject);
	json_object_object_add(o, "author", person_json(&f->author));
	if (f->partner_tree) {
		partner = json_object_new_object();
		put_str(partner, "tree", f->partner_tree);
		put_str(partner, "commit", f->partner_commit);
		put_str(partner, "subject", f->partner_subject);
		json_object_object_add(partner, "author", person_json(&f->partner_author));
		if (full) {
			put_patchid(partner, "patch_id", &f->partner_patch_id);
			put_str(partner, "message_id", f->partner_message_id);
		}
	}
	json_object_object_add(o, "partner", partner);
	put_str(o, "kind", flag_kind_name(f->kind));
	put_str(o, "command", f->command);
	put_int(o, "exit_code", f->exit_code);
	json_object_object_add(o, "timed_out", json_object_new_boolean(f->timed_out));
	put_str(o, "error", f->error);
	put_str(o, "first_seen", f->first_seen);
	put_str(o, "last_seen", f->last_seen);
	put_str(o, "state", flag_state_name(f->state));
	/* state.json keeps the last resolution of a flag found again; `flagged` says it
	   of resolved flags only */
	put_str(o, "resolution", full || f->state == FLAG_RESOLVED
					 ? flag_resolution_name(f->resolution) : NULL);
	put_int(verdict, "culprit_fails", f->culprit_fails);
	put_int(verdict, "parent_passes", f->parent_passes);
	put_int(verdict, "revert_passes", f->revert_passes);
	json_object_object_add(o, "verdict", verdict);
	put_int(bisect, "steps", f->steps);
	put_int(bisect, "confirm_runs", f->confirm_runs);
	json_object_object_add(bisect, "log", strvec_json(&f->log));
	json_object_object_add(o, "bisect", bisect);
	put_str(o, "reason", f->reason);
	put_int(o, "failing", f->failing);
	put_int(o, "total", f->total);
	put_str(o, "excerpt", f->excerpt);
	flag_mail_json(o, f);
	put_str(o, "patch_link", f->patch_link);
	json_object_object_add(o, "cells", cells_json(f));
	if (full) {
		put_str(o, "fingerprint", f->fingerprint);
		put_str(o, "repro_base", f->repro_base);
		json_object_object_add(o, "repro", strvec_json(&f->repro));
		put_str(o, "tree_head", f->tree_head);
		put_str(o, "commit_date", f->commit_date);
		put_str(o, "compiler", f->compiler);
		put_str(o, "action", flag_action_name(f->action));
		put_str(o, "notified", f->notified);
		put_str(o, "reminded", f->reminded);
		if (f->report_thread)  /* only then: older workdirs' files stay as they were */
			put_str(o, "report_thread", f->report_thread);
	}
	return o;
}

static struct json_object *drop_json(const struct drop *d)
{
	struct json_object *o = json_object_new_object();

	put_str(o, "tree", d->tree);
	put_str(o, "commit", d->commit);
	put_patchid(o, "patch_id", &d->patch_id);
	put_str(o, "message_id", d->message_id);
	put_str(o, "subject", d->subject);
	json_object_object_add(o, "author", person_json(&d->author));
	put_str(o, "flag_id", d->flag_id);
	put_str(o, "reason", d->reason);
	put_str(o, "when", d->when);
	put_int(o, "active", d->active);
	put_str(o, "by", d->by);
	put_str(o, "mail", d->mail);
	return o;
}

static struct json_object *tests_json(const struct state *s)
{
	struct json_object *arr = json_object_new_array();
	size_t i;

	for (i = 0; i < s->tests_nr; i++) {
		const struct test_request *t = &s->tests[i];
		struct json_object *e = json_object_new_object();

		put_str(e, "key", t->key);
		put_str(e, "flag", t->flag_id);
		put_str(e, "by", t->by);
		put_str(e, "url", t->url);
		put_str(e, "branch", t->branch);
		put_str(e, "when", t->when);
		put_str(e, "state", test_state_name(t->state));
		put_str(e, "commit", t->commit);
		put_str(e, "result", t->result);
		put_str(e, "reply_name", t->reply_name);
		put_str(e, "reply_subject", t->reply_subject);
		put_str(e, "reply_message_id", t->reply_message_id);
		json_object_object_add(e, "reply_cc", strvec_json(&t->reply_cc));
		json_object_object_add(e, "reply_references", strvec_json(&t->reply_references));
		json_object_array_add(arr, e);
	}
	return arr;
}

/* "reviews": [{by, kind, mail, when, thread: [message ids]}] (since version 2) */
static struct json_object *reviews_json(const struct state *s)
{
	struct json_object *arr = json_object_new_array();
	size_t i, k;

	for (i = 0; i < s->reviews_nr; i++) {
		const struct review_mail *r = &s->reviews[i];
		struct json_object *e = json_object_new_object(), *t = json_object_new_array();

		put_str(e, "by", r->by);
		put_str(e, "kind", r->kind);
		put_str(e, "mail", r->mail);
		put_str(e, "when", r->when);
		for (k = 0; k < r->thread.nr; k++)
			json_object_array_add(t, json_object_new_string(r->thread.v[k]));
		json_object_object_add(e, "thread", t);
		json_object_array_add(arr, e);
	}
	return arr;
}

static void mail_json(struct json_object *root, const struct state *s)
{
	struct json_object *sent = json_object_new_array(), *inbox = json_object_new_array();
	size_t i;

	for (i = 0; i < s->sent_nr; i++) {
		struct json_object *e = json_object_new_object();

		put_str(e, "message_id", s->sent[i].message_id);
		put_str(e, "kind", s->sent[i].kind);
		put_str(e, "flag", s->sent[i].flag_id);
		put_str(e, "conflict", s->sent[i].conflict);
		json_object_array_add(sent, e);
	}
	for (i = 0; i < s->inbox_nr; i++) {
		struct json_object *e = json_object_new_object();

		put_str(e, "key", s->inbox[i].key);
		put_str(e, "from", s->inbox[i].from);
		put_str(e, "when", s->inbox[i].when);
		put_str(e, "outcome", mail_outcome_name(s->inbox[i].outcome));
		put_str(e, "summary", s->inbox[i].summary);
		if (s->inbox[i].content)
			put_str(e, "content", s->inbox[i].content);
		json_object_array_add(inbox, e);
	}
	json_object_object_add(root, "sent", sent);
	json_object_object_add(root, "inbox", inbox);
	json_object_object_add(root, "reviews", reviews_json(s));
	json_object_object_add(root, "tests", tests_json(s));
}

static struct json_object *run_json(const struct run_record *r, int full)
{
	struct json_object *o = json_object_new_object();
	struct json_object *trees = json_object_new_array();
	size_t i;

	put_str(o, "date", r->date);
	put_str(o, "tag", r->tag);
	put_str(o, "next", r->next);
	put_str(o, "result", run_result_name(r->result));
	for (i = 0; i < r->trees_nr; i++) {
		struct json_object *t = json_object_new_object();

		put_str(t, "name", r->trees[i].name);
		put_str(t, "branch", r->trees[i].branch);
		put_str(t, "sha1", r->trees[i].sha1);
		put_str(t, "state", tree_state_name(r->trees[i].state));
		put_str(t, "reason", r->trees[i].reason);
		json_object_array_add(trees, t);
	}
	json_object_object_add(o, "trees", trees);
	json_object_object_add(o, "flags", strvec_json(&r->flags));
	if (full) {
		put_str(o, "started", r->started);
		put_str(o, "finished", r->finished);
		json_object_object_add(o, "notes", strvec_json(&r->notes));
		json_object_object_add(o, "conflicts", strvec_json(&r->conflicts));
		json_object_object_add(o, "notices", strvec_json(&r->notices));
	}
	return o;
}

static void write_pretty_json(struct strbuf *out, struct json_object *root)
{
	strbuf_addstr(out, json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
								 JSON_C_TO_STRING_NOSLASHESCAPE));
	strbuf_addch(out, '\n');
	json_object_put(root);
}

int state_save(const struct state *s, const char *workdir)
{
	struct json_object *root = json_object_new_object();
	struct json_object *runs = json_object_new_array();
	struct json_object *flags = json_object_new_array();
	struct json_object *drops = json_object_new_array();
	struct strbuf sb = STRBUF_INIT;
	char *path = xstrfmt("%s/state.json", workdir);
	size_t i;
	int error;

	put_int(root, "version", 2); /* 2: "reviews", an inbox record's "content" */
	for (i = 0; i < s->runs_nr; i++)
		json_object_array_add(runs, run_json(&s->runs[i], 1));
	for (i = 0; i < s->flags_nr; i++)
		json_object_array_add(flags, flag_json(&s->flags[i], 1));
	for (i = 0; i < s->drops_nr; i++)
		json_object_array_add(drops, drop_json(&s->drops[i]));
	json_object_object_add(root, "runs", runs);
	json_object_object_add(root, "flags", flags);
	json_object_object_add(root, "drops", drops);
	mail_json(root, s);
	write_pretty_json(&sb, root);
	error = file_write_atomic(path, sb.buf, sb.len);
	strbuf_release(&sb);
	free(path);
	return error;
}

void state_flags_json(struct strbuf *out, const struct state *s)
{
	struct json_object *root = json_object_new_object();
	struct json_object *flags = json_object_new_array();
	size_t i;

	for (i = 0; i < s->flags_nr; i++)
		json_object_array_add(flags, flag_json(&s->flags[i], 0));
	json_object_object_add(root, "flags", flags);
	write_pretty_json(out, root);
}

void state_runs_json(struct strbuf *out, const struct state *s, size_t last_n)
{
	struct json_object *root = json_object_new_object();
	struct json_object *runs = json_object_new_array();
	size_t i = s->runs_nr > last_n && last_n ? s->runs_nr - last_n : 0;

	struct json_object *open = json_object_new_array();

	for (; i < s->runs_nr; i++)
		json_object_array_add(runs, run_json(&s->runs[i], 0));
	json_object_object_add(root, "runs", runs);
	/* what is broken now, and where: each open flag with its cells */
	for (i = 0; i < s->flags_nr; i++) {
		const struct flag *f = &s->flags[i];
		struct json_object *o;

		if (f->state != FLAG_OPEN)
			continue;
		o = json_object_new_object();
		put_str(o, "id", f->id);
		put_str(o, "kind", flag_kind_name(f->kind));
		put_str(o, "tree", f->tree);
		put_str(o, "commit", f->commit);
		put_str(o, "subject", f->subject);
		json_object_object_add(o, "cells", cells_json(f));
		json_object_array_add(open, o);
	}
	json_object_object_add(root, "open_flags", open);
	write_pretty_json(out, root);
}

void state_run_json(struct strbuf *out, const struct run_record *run)
{
	write_pretty_json(out, run_json(run, 1));
}

/* ---- lookups and lifetime ---- */

struct flag *state_flag_find(struct state *s, const char *id, int *ambiguous)
{
	struct flag *found = NULL;
	size_t i, len = strlen(id);

	*ambiguous = 0;
	for (i = 0; len && i < s->flags_nr; i++) {
		struct flag *f = &s->flags[i];

		if ((f->id && !strncmp(f->id, id, len)) ||
		    (f->commit && len >= 4 && !strncmp(f->commit, id, len)) ||
		    (!nb_patchid_is_none(&f->patch_id) && len >= 4 &&
		     !strncmp(NB_PATCHID_HEX(&f->patch_id), id, len)) ||
		    (f->message_id && !strcmp(f->message_id, id))) {
			if (found && found != f)
				*ambiguous = 1;
			found = f;
		}
	}
	return *ambiguous ? NULL : found;
}

struct flag *state_flag_by_fingerprint(struct state *s, const char *fingerprint)
{
	size_t i;

	for (i = 0; i < s->flags_nr; i++)
		if (s->flags[i].fingerprint && !strcmp(s->flags[i].fingerprint, fingerprint))
			return &s->flags[i];
	return NULL;
}

struct flag *state_flag_add(struct state *s)
{
	ALLOC_GROW(s->flags, s->flags_nr + 1, s->flags_alloc);
	memset(&s->flags[s->flags_nr], 0, sizeof(struct flag));
	s->flags[s->flags_nr].log = (struct strvec)STRVEC_INIT;
	return &s->flags[s->flags_nr++];
}

int state_flag_cell_set(struct flag *f, const char *name, const struct strvec *env,
			const char *first_error, const char *date)
{
	struct flag_cell *c;
	size_t i;

	for (i = 0; i < f->cells_nr; i++)
		if (f->cells[i].name && !strcmp(f->cells[i].name, name)) {
			if (first_error && *first_error) {
				free(f->cells[i].first_error);
				f->cells[i].first_error = xstrdup(first_error);
			}
			return 0;
		}
	ALLOC_GROW(f->cells, f->cells_nr + 1, f->cells_alloc);
	c = &f->cells[f->cells_nr++];
	c->name = xstrdup(name);
	c->env = (struct strvec)STRVEC_INIT;
	for (i = 0; env && i < env->nr; i++)
		strvec_push(&c->env, env->v[i]);
	c->first_error = first_error ? xstrdup(first_error) : NULL;
	c->first_seen = date ? xstrdup(date) : NULL;
	return 1;
}

struct drop *state_drop_add(struct state *s)
{
	ALLOC_GROW(s->drops, s->drops_nr + 1, s->drops_alloc);
	memset(&s->drops[s->drops_nr], 0, sizeof(struct drop));
	return &s->drops[s->drops_nr++];
}

static void run_init(struct run_record *r, const char *date)
{
	memset(r, 0, sizeof(*r));
	r->flags = (struct strvec)STRVEC_INIT;
	r->notes = (struct strvec)STRVEC_INIT;
	r->conflicts = (struct strvec)STRVEC_INIT;
	r->notices = (struct strvec)STRVEC_INIT;
	r->date = xstrdup(date);
}

struct run_record *state_run_begin(struct state *s, const char *date)
{
	size_t i;

	for (i = 0; i < s->runs_nr; i++) {
		if (s->runs[i].date && !strcmp(s->runs[i].date, date)) {
			run_record_release(&s->runs[i]);
			run_init(&s->runs[i], date);
			return &s->runs[i];
		}
	}
	ALLOC_GROW(s->runs, s->runs_nr + 1, s->runs_alloc);
	/* keep nights in date order, whatever order they were run in */
	for (i = s->runs_nr; i > 0 && s->runs[i - 1].date && strcmp(s->runs[i - 1].date, date) > 0;
	     i--)
		;
	memmove(&s->runs[i + 1], &s->runs[i], (s->runs_nr - i) * sizeof(*s->runs));
	s->runs_nr++;
	run_init(&s->runs[i], date);
	return &s->runs[i];
}

struct run_tree *state_run_tree_add(struct run_record *run)
{
	ALLOC_GROW(run->trees, run->trees_nr + 1, run->trees_alloc);
	memset(&run->trees[run->trees_nr], 0, sizeof(struct run_tree));
	return &run->trees[run->trees_nr++];
}

static void person_release(struct person *p)
{
	free(p->name);
	free(p->email);
}

void flag_release(struct flag *f)
{
	size_t i;

	free(f->id);
	free(f->fingerprint);
	free(f->tree);
	free(f->commit);
	free(f->message_id);
	free(f->subject);
	person_release(&f->author);
	free(f->partner_tree);
	free(f->partner_commit);
	free(f->partner_subject);
	free(f->partner_message_id);
	person_release(&f->partner_author);
	free(f->command);
	free(f->error);
	free(f->excerpt);
	free(f->first_seen);
	free(f->last_seen);
	free(f->reason);
	strvec_clear(&f->log);
	for (i = 0; i < f->cells_nr; i++) {
		free(f->cells[i].name);
		strvec_clear(&f->cells[i].env);
		free(f->cells[i].first_error);
		free(f->cells[i].first_seen);
	}
	free(f->cells);
	free(f->repro_base);
	strvec_clear(&f->repro);
	free(f->tree_head);
	free(f->commit_date);
	free(f->patch_link);
	free(f->compiler);
	free(f->notified);
	free(f->reminded);
	free(f->report_thread);
	free(f->fix_subject);
	free(f->fix_by);
	free(f->fix_date);
	free(f->fix_commit);
	for (i = 0; i < f->mail_nr; i++) {
		free(f->mail[i].command);
		free(f->mail[i].by);
		free(f->mail[i].message_id);
		free(f->mail[i].when);
		free(f->mail[i].text);
	}
	free(f->mail);
}

void drop_release(struct drop *d)
{
	free(d->tree);
	free(d->commit);
	free(d->message_id);
	free(d->subject);
	person_release(&d->author);
	free(d->flag_id);
	free(d->reason);
	free(d->when);
	free(d->by);
	free(d->mail);
}

void run_record_release(struct run_record *r)
{
	size_t i;

	free(r->date);
	free(r->tag);
	free(r->next);
	free(r->started);
	free(r->finished);
	for (i = 0; i < r->trees_nr; i++) {
		free(r->trees[i].name);
		free(r->trees[i].branch);
		free(r->trees[i].sha1);
		free(r->trees[i].reason);
	}
	free(r->trees);
	strvec_clear(&r->flags);
	strvec_clear(&r->notes);
	strvec_clear(&r->conflicts);
	strvec_clear(&r->notices);
}

static void inbox_record_release(struct inbox_record *r);
static void test_request_release(struct test_request *t);

static void review_mail_release(struct review_mail *r);

void state_release(struct state *s)
{
	size_t i;

	for (i = 0; i < s->runs_nr; i++)
		run_record_release(&s->runs[i]);
	for (i = 0; i < s->flags_nr; i++)
		flag_release(&s->flags[i]);
	for (i = 0; i < s->drops_nr; i++)
		drop_release(&s->drops[i]);
	for (i = 0; i < s->sent_nr; i++) {
		free(s->sent[i].message_id);
		free(s->sent[i].kind);
		free(s->sent[i].flag_id);
		free(s->sent[i].conflict);
	}
	for (i = 0; i < s->inbox_nr; i++)
		inbox_record_release(&s->inbox[i]);
	for (i = 0; i < s->tests_nr; i++)
		test_request_release(&s->tests[i]);
	free(s->tests);
	for (i = 0; i < s->reviews_nr; i++)
		review_mail_release(&s->reviews[i]);
	free(s->reviews);
	free(s->runs);
	free(s->flags);
	free(s->drops);
	free(s->sent);
	free(s->inbox);
	memset(s, 0, sizeof(*s));
}

/* ---- mail: what was sent, what came back ---- */

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static void review_mail_release(struct review_mail *r)
{
	free(r->by);
	free(r->kind);
	free(r->mail);
	free(r->when);
	strvec_clear(&r->thread);
}

void state_review_add(struct state *s, const char *by, const char *kind, const char *mail,
		      const char *when, const struct strvec *thread)
{
	struct review_mail *r;
	size_t i;

	if (!by || !kind)
		return;
	if (s->reviews_nr >= STATE_REVIEWS_KEPT) {
		review_mail_release(&s->reviews[0]);
		memmove(&s->reviews[0], &s->reviews[1], (s->reviews_nr - 1) * sizeof(*s->reviews));
		s->reviews_nr--;
	}
	ALLOC_GROW(s->reviews, s->reviews_nr + 1, s->reviews_alloc);
	r = &s->reviews[s->reviews_nr++];
	r->by = xstrdup(by);
	r->kind = xstrdup(kind);
	r->mail = dup_or_null(mail);
	r->when = dup_or_null(when);
	r->thread = (struct strvec)STRVEC_INIT;
	for (i = 0; thread && i < thread->nr; i++)
		strvec_push(&r->thread, thread->v[i]);
}

/* `a` and `b` name one Message-ID, each with or without its angle brackets. */
static int msgid_same(const char *a, const char *b)
{
	size_t la, lb;

	a += *a == '<';
	b += *b == '<';
	la = strcspn(a, ">");
	lb = strcspn(b, ">");
	return la == lb && !strncmp(a, b, la);
}

int state_review_seen(const struct state *s, const char *by, const char *kind,
		      const char *message_id, int (*same)(const char *, const char *))
{
	size_t i, k;

	for (i = 0; by && kind && message_id && i < s->reviews_nr; i++) {
		const struct review_mail *r = &s->reviews[i];

		if (strcasecmp(r->kind, kind) ||
		    (same ? !same(r->by, by) : !!strcasecmp(r->by, by)))
			continue;
		for (k = 0; k < r->thread.nr; k++)
			if (msgid_same(r->thread.v[k], message_id))
				return 1;
	}
	return 0;
}

static void inbox_record_release(struct inbox_record *r)
{
	free(r->key);
	free(r->from);
	free(r->when);
	free(r->summary);
	free(r->content);
}

static void test_request_release(struct test_request *t)
{
	free(t->key);
	free(t->flag_id);
	free(t->by);
	free(t->url);
	free(t->branch);
	free(t->when);
	free(t->commit);
	free(t->result);
	free(t->reply_name);
	free(t->reply_subject);
	free(t->reply_message_id);
	strvec_clear(&t->reply_cc);
	strvec_clear(&t->reply_references);
}

struct test_request *state_test_add(struct state *s)
{
	struct test_request *t;

	if (s->tests_nr >= STATE_TESTS_KEPT) {
		test_request_release(&s->tests[0]);
		memmove(&s->tests[0], &s->tests[1], (s->tests_nr - 1) * sizeof(*s->tests));
		s->tests_nr--;
	}
	ALLOC_GROW(s->tests, s->tests_nr + 1, s->tests_alloc);
	t = &s->tests[s->tests_nr++];
	memset(t, 0, sizeof(*t));
	t->reply_cc = (struct strvec)STRVEC_INIT;
	t->reply_references = (struct strvec)STRVEC_INIT;
	return t;
}

const struct sent_mail *state_sent_find(const struct state *s, const char *message_id)
{
	size_t i;

	for (i = s->sent_nr; message_id && i > 0; i--)
		if (!strcmp(s->sent[i - 1].message_id, message_id))
			return &s->sent[i - 1];
	return NULL;
}

void state_sent_add(struct state *s, const char *message_id, const char *kind,
		    const char *flag_id, const char *conflict)
{
	struct sent_mail *m;

	if (!message_id || state_sent_find(s, message_id))
		return;
	ALLOC_GROW(s->sent, s->sent_nr + 1, s->sent_alloc);
	m = &s->sent[s->sent_nr++];
	m->message_id = xstrdup(message_id);
	m->kind = dup_or_null(kind);
	m->flag_id = dup_or_null(flag_id);
	m->conflict = dup_or_null(conflict);
}

const struct inbox_record *state_inbox_find(const struct state *s, const char *key)
{
	size_t i;

	for (i = s->inbox_nr; key && i > 0; i--)
		if (!strcmp(s->inbox[i - 1].key, key))
			return &s->inbox[i - 1];
	return NULL;
}

const struct inbox_record *state_inbox_acted(const struct state *s, const char *content)
{
	size_t i;

	for (i = s->inbox_nr; content && i > 0; i--)
		if (s->inbox[i - 1].outcome == MAIL_ACTED && s->inbox[i - 1].content &&
		    !strcmp(s->inbox[i - 1].content, content))
			return &s->inbox[i - 1];
	return NULL;
}

struct inbox_record *state_inbox_add(struct state *s, const char *key, const char *from,
				     const char *when, enum mail_outcome outcome,
				     const char *summary)
{
	struct inbox_record *r;

	if (s->inbox_nr >= STATE_INBOX_KEPT) {
		inbox_record_release(&s->inbox[0]);
		memmove(&s->inbox[0], &s->inbox[1], (s->inbox_nr - 1) * sizeof(*s->inbox));
		s->inbox_nr--;
	}
	ALLOC_GROW(s->inbox, s->inbox_nr + 1, s->inbox_alloc);
	r = &s->inbox[s->inbox_nr++];
	r->key = xstrdup(key);
	r->from = dup_or_null(from);
	r->when = dup_or_null(when);
	r->outcome = outcome;
	r->summary = dup_or_null(summary);
	r->content = NULL;
	return r;
}

void state_flag_mail_add(struct flag *f, const char *command, const char *by,
			 const char *message_id, const char *when, const char *text)
{
	struct flag_mail *m;

	ALLOC_GROW(f->mail, f->mail_nr + 1, f->mail_alloc);
	m = &f->mail[f->mail_nr++];
	m->command = dup_or_null(command);
	m->by = dup_or_null(by);
	m->message_id = dup_or_null(message_id);
	m->when = dup_or_null(when);
	m->text = dup_or_null(text);
}
