/* Webhook JSON bodies (json-c, text repaired first) and their HMAC-SHA256 signature. */
#include <json-c/json.h>
#include <string.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "notify/hook.h"
#include "notify/mime.h"
#include "util/banned.h"

static struct json_object *line(const char *s)
{
	struct strbuf sb = STRBUF_INIT;
	struct json_object *o;

	if (!s)
		return NULL;
	mime_clean_line(&sb, s);
	o = json_object_new_string_len(sb.buf, (int)sb.len);
	strbuf_release(&sb);
	return o;
}

static struct json_object *text_obj(const char *s)
{
	struct strbuf sb = STRBUF_INIT;
	struct json_object *o;

	if (!s)
		return NULL;
	mime_clean_text(&sb, s);
	o = json_object_new_string_len(sb.buf, (int)sb.len);
	strbuf_release(&sb);
	return o;
}

static struct json_object *person(const struct notice_person *p)
{
	struct json_object *o;

	if (!p->name && !p->email)
		return NULL;
	o = json_object_new_object();
	json_object_object_add(o, "name", line(p->name));
	json_object_object_add(o, "email", line(p->email));
	return o;
}

static struct json_object *lines(const char *const *v, size_t nr)
{
	struct json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; i < nr; i++)
		json_object_array_add(a, line(v[i]));
	return a;
}

static struct json_object *partner(const struct hook_event *ev)
{
	struct json_object *o;

	if (!ev->partner_tree)
		return NULL;
	o = json_object_new_object();
	json_object_object_add(o, "tree", line(ev->partner_tree));
	json_object_object_add(o, "commit", line(ev->partner_commit));
	json_object_object_add(o, "subject", line(ev->partner_subject));
	json_object_object_add(o, "author", person(&ev->partner_author));
	return o;
}

static struct json_object *bisect(const struct hook_event *ev)
{
	struct json_object *o;

	if (!ev->has_bisect)
		return NULL;
	o = json_object_new_object();
	json_object_object_add(o, "steps", json_object_new_int(ev->steps));
	json_object_object_add(o, "log", lines(ev->log, ev->log_nr));
	return o;
}

static struct json_object *summary_trees(const struct hook_event *ev)
{
	struct json_object *a;
	size_t i;

	if (!ev->trees_nr)
		return NULL;
	a = json_object_new_array();
	for (i = 0; i < ev->trees_nr; i++) {
		struct json_object *t = json_object_new_object();

		json_object_object_add(t, "name", line(ev->trees[i].name));
		json_object_object_add(t, "state", line(ev->trees[i].state));
		json_object_object_add(t, "reason", line(ev->trees[i].reason));
		json_object_array_add(a, t);
	}
	return a;
}

static struct json_object *summary_flags(const struct hook_event *ev)
{
	struct json_object *a;
	size_t i;

	if (!ev->result)
		return NULL;
	a = json_object_new_array();
	for (i = 0; i < ev->flags_nr; i++) {
		const struct notice_summary_flag *f = &ev->flags[i];
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "id", line(f->id));
		json_object_object_add(o, "kind", line(f->kind));
		json_object_object_add(o, "tree", line(f->tree));
		json_object_object_add(o, "commit", line(f->commit));
		json_object_object_add(o, "subject", line(f->subject));
		json_object_object_add(o, "partner_tree", line(f->partner_tree));
		json_object_array_add(a, o);
	}
	return a;
}

/* [{name, env: {K: v}, first_error}]; absent without a matrix (bodies stay as they were). */
static struct json_object *cells(const struct hook_event *ev)
{
	struct json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; i < ev->cells_nr; i++) {
		const struct notice_cell *c = &ev->cells[i];
		struct json_object *o = json_object_new_object(), *env = json_object_new_object();
		const char *p = c->env ? c->env : "";

		while (*p) {
			size_t len = strcspn(p, " "), k = strcspn(p, "=");
			struct strbuf key = STRBUF_INIT, val = STRBUF_INIT;

			if (k < len) {
				strbuf_add(&key, p, k);
				strbuf_add(&val, p + k + 1, len - k - 1);
				json_object_object_add(env, key.buf, line(val.buf));
			}
			strbuf_release(&key);
			strbuf_release(&val);
			p += len;
			p += *p == ' ';
		}
		json_object_object_add(o, "name", line(c->name));
		json_object_object_add(o, "env", env);
		json_object_object_add(o, "first_error", line(c->first_error));
		json_object_array_add(a, o);
	}
	return a;
}

void hook_body(struct strbuf *out, const struct hook_event *ev)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "event", line(ev->event));
	json_object_object_add(o, "id", line(ev->id));
	json_object_object_add(o, "date", line(ev->date));
	json_object_object_add(o, "tree", line(ev->tree));
	json_object_object_add(o, "commit", line(ev->commit));
	json_object_object_add(o, "subject", line(ev->subject));
	json_object_object_add(o, "author", person(&ev->author));
	json_object_object_add(o, "patch_id", nb_patchid_is_none(&ev->patch_id) ? NULL
					      : line(NB_PATCHID_HEX(&ev->patch_id)));
	json_object_object_add(o, "message_id", line(ev->message_id));
	json_object_object_add(o, "partner", partner(ev));
	json_object_object_add(o, "command", line(ev->command));
	json_object_object_add(o, "exit_code",
			       ev->has_exit ? json_object_new_int(ev->exit_code) : NULL);
	json_object_object_add(o, "timed_out",
			       ev->has_exit ? json_object_new_boolean(ev->timed_out) : NULL);
	json_object_object_add(o, "log_excerpt", text_obj(ev->log_excerpt));
	json_object_object_add(o, "bisect", bisect(ev));
	if (ev->cells_nr)
		json_object_object_add(o, "cells", cells(ev));
	json_object_object_add(o, "next_tag", line(ev->next_tag));
	json_object_object_add(o, "reason", line(ev->reason));
	json_object_object_add(o, "other_tree", line(ev->other_tree));
	json_object_object_add(o, "paths", ev->paths_nr ? lines(ev->paths, ev->paths_nr) : NULL);
	json_object_object_add(o, "result", line(ev->result));
	json_object_object_add(o, "trees", summary_trees(ev));
	json_object_object_add(o, "flags", summary_flags(ev));
	json_object_object_add(o, "url", line(ev->flag_url));
	json_object_object_add(o, "failing",
			       ev->has_counts ? json_object_new_int(ev->failing) : NULL);
	json_object_object_add(o, "total", ev->has_counts ? json_object_new_int(ev->total) : NULL);
	strbuf_addstr(out, json_object_to_json_string_ext(
				   o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

void hook_slack_text(struct strbuf *out, const char *text)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	mime_clean_line(&sb, text ? text : "");
	for (i = 0; i < sb.len; i++) {
		switch (sb.buf[i]) {
		case '&': strbuf_addstr(out, "&amp;"); break;
		case '<': strbuf_addstr(out, "&lt;"); break;
		case '>': strbuf_addstr(out, "&gt;"); break;
		/* U+FF20 FULLWIDTH COMMERCIAL AT: no @channel or @all from a subject */
		case '@': strbuf_addstr(out, "\xef\xbc\xa0"); break;
		default: strbuf_addch(out, sb.buf[i]);
		}
	}
	strbuf_release(&sb);
}

void hook_slack_link(struct strbuf *out, const char *url, const char *label)
{
	struct strbuf u = STRBUF_INIT;
	size_t i;
	int ok;

	mime_clean_line(&u, url ? url : "");
	ok = (!strncmp(u.buf, "https://", 8) || !strncmp(u.buf, "http://", 7)) &&
	     !strpbrk(u.buf, "<>| \"");
	if (!ok) {
		hook_slack_text(out, label);
		strbuf_release(&u);
		return;
	}
	strbuf_addch(out, '<');
	for (i = 0; i < u.len; i++) {
		if (u.buf[i] == '&')
			strbuf_addstr(out, "&amp;");
		else
			strbuf_addch(out, u.buf[i]);
	}
	strbuf_addch(out, '|');
	{
		struct strbuf l = STRBUF_INIT;
		size_t j;

		hook_slack_text(&l, label);
		for (j = 0; j < l.len; j++)
			if (l.buf[j] != '|')
				strbuf_addch(out, l.buf[j]);
		strbuf_release(&l);
	}
	strbuf_addch(out, '>');
	strbuf_release(&u);
}

void hook_slack_body(struct strbuf *out, const char *text)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "text", text_obj(text));
	strbuf_addstr(out, json_object_to_json_string_ext(
				   o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

void hook_signature(struct strbuf *out, const char *secret, const char *body, size_t len)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0, i;

	HMAC(EVP_sha256(), secret, (int)strlen(secret), (const unsigned char *)body, len, md,
	     &mdlen);
	strbuf_addstr(out, "sha256=");
	for (i = 0; i < mdlen; i++)
		strbuf_addf(out, "%02x", md[i]);
}
