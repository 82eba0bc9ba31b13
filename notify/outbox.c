/* The outbox spool: one atomically replaced JSON file per notice, and its listing. */
#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/evp.h>

#include "notify/notice.h"
#include "notify/outbox.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/log.h"
#include "util/strvec.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define NOTICE_FILE_MAX (64 << 20)

static const char *const state_names[] = {"queued", "sent", "failed"};

const char *outbox_state_name(enum outbox_state s)
{
	return state_names[s];
}

enum outbox_channel outbox_channel_parse(const char *channel)
{
	if (channel && !strcmp(channel, "mail"))
		return OUTBOX_CHANNEL_MAIL;
	if (channel && !strcmp(channel, "webhook"))
		return OUTBOX_CHANNEL_WEBHOOK;
	return OUTBOX_CHANNEL_OTHER;
}

static int state_parse(const char *s, enum outbox_state *out)
{
	size_t i;

	for (i = 0; s && i < 3; i++) {
		if (!strcmp(s, state_names[i])) {
			*out = (enum outbox_state)i;
			return 0;
		}
	}
	return -1;
}

void outbox_time_fmt(struct strbuf *out, time_t t)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strbuf_addf(out, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1,
		    tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

static time_t time_parse(const char *s)
{
	struct tm tm = {0};
	const char *end;

	if (!s)
		return 0;
	end = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (!end || *end)
		return 0;
	return timegm(&tm);
}

void outbox_id(char out[33], const char *const *parts, size_t nr)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	size_t i;

	EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	for (i = 0; i < nr; i++) {
		const char *p = parts[i] ? parts[i] : "";

		EVP_DigestUpdate(ctx, p, strlen(p) + 1);
	}
	EVP_DigestFinal_ex(ctx, md, &mdlen);
	EVP_MD_CTX_free(ctx);
	for (i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

void outbox_notice_release(struct outbox_notice *n)
{
	size_t i;

	free(n->id);
	free(n->kind);
	free(n->channel);
	free(n->subject);
	free(n->from);
	free(n->url);
	free(n->body);
	free(n->body8);
	free(n->text);
	free(n->order);
	free(n->last_error);
	for (i = 0; i < n->rcpts_nr; i++) {
		free(n->rcpts[i].to);
		free(n->rcpts[i].error);
	}
	free(n->rcpts);
	memset(n, 0, sizeof(*n));
}

void outbox_notice_add_rcpt(struct outbox_notice *n, const char *to, enum outbox_state state,
			    const char *error)
{
	struct outbox_rcpt *r;

	ALLOC_GROW(n->rcpts, n->rcpts_nr + 1, n->rcpts_alloc);
	r = &n->rcpts[n->rcpts_nr++];
	r->to = xstrdup(to);
	r->state = state;
	r->error = error ? xstrdup(error) : NULL;
}

void outbox_notice_set_error(struct outbox_notice *n, const char *error)
{
	free(n->last_error);
	n->last_error = error ? xstrdup(error) : NULL;
}

char *outbox_notice_path(const char *dir, const char *id)
{
	return xstrfmt("%s/%s.json", dir, id);
}

static struct json_object *str(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static struct json_object *time_json(time_t t)
{
	struct strbuf sb = STRBUF_INIT;
	struct json_object *o;

	if (!t)
		return NULL;
	outbox_time_fmt(&sb, t);
	o = json_object_new_string(sb.buf);
	strbuf_release(&sb);
	return o;
}

static struct json_object *to_json(const struct outbox_notice *n)
{
	struct json_object *o = json_object_new_object(), *rs = json_object_new_array();
	size_t i;

	json_object_object_add(o, "version", json_object_new_int(1));
	json_object_object_add(o, "id", str(n->id));
	json_object_object_add(o, "kind", str(n->kind));
	json_object_object_add(o, "channel", str(n->channel));
	json_object_object_add(o, "subject", str(n->subject));
	json_object_object_add(o, "from", str(n->from));
	json_object_object_add(o, "url", str(n->url));
	for (i = 0; i < n->rcpts_nr; i++) {
		struct json_object *r = json_object_new_object();

		json_object_object_add(r, "to", str(n->rcpts[i].to));
		json_object_object_add(r, "state", str(state_names[n->rcpts[i].state]));
		json_object_object_add(r, "error", str(n->rcpts[i].error));
		json_object_array_add(rs, r);
	}
	json_object_object_add(o, "recipients", rs);
	json_object_object_add(o, "state", str(state_names[n->state]));
	json_object_object_add(o, "attempts", json_object_new_int(n->attempts));
	json_object_object_add(o, "last_error", str(n->last_error));
	if (n->order)
		json_object_object_add(o, "order", str(n->order));
	json_object_object_add(o, "created", time_json(n->created));
	json_object_object_add(o, "next_try", time_json(n->next_try));
	json_object_object_add(o, "sent", time_json(n->sent));
	json_object_object_add(o, "body", str(n->body));
	if (n->body8)
		json_object_object_add(o, "body8", str(n->body8));
	if (n->text)
		json_object_object_add(o, "text", str(n->text));
	return o;
}

int outbox_notice_save(const struct outbox_notice *n, const char *dir)
{
	struct json_object *o = to_json(n);
	const char *text;
	char *path = NULL;
	int ret;

	if ((ret = file_mkdir_p(dir, 0700)) < 0)
		goto done;
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
							 JSON_C_TO_STRING_NOSLASHESCAPE);
	path = outbox_notice_path(dir, n->id);
	ret = file_write_atomic(path, text, strlen(text));
done:
	json_object_put(o);
	free(path);
	return ret;
}

static char *get_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return xstrdup(json_object_get_string(v));
}

static int get_int(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		return 0;
	return json_object_get_int(v);
}

static time_t get_time(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return 0;
	return time_parse(json_object_get_string(v));
}

static int from_json(struct outbox_notice *n, struct json_object *o)
{
	struct json_object *rs, *st;
	size_t i;

	n->id = get_str(o, "id");
	n->kind = get_str(o, "kind");
	n->channel = get_str(o, "channel");
	n->subject = get_str(o, "subject");
	n->from = get_str(o, "from");
	n->url = get_str(o, "url");
	n->body = get_str(o, "body");
	n->body8 = get_str(o, "body8");
	n->text = get_str(o, "text");
	n->last_error = get_str(o, "last_error");
	n->attempts = get_int(o, "attempts");
	n->created = get_time(o, "created");
	n->order = get_str(o, "order");
	n->next_try = get_time(o, "next_try");
	n->sent = get_time(o, "sent");
	if (!n->id || !n->kind || !n->channel || !n->body ||
	    !json_object_object_get_ex(o, "state", &st) ||
	    state_parse(json_object_get_string(st), &n->state) < 0 ||
	    !json_object_object_get_ex(o, "recipients", &rs) ||
	    !json_object_is_type(rs, json_type_array))
		return -1;
	for (i = 0; i < json_object_array_length(rs); i++) {
		struct json_object *r = json_object_array_get_idx(rs, i), *v;
		enum outbox_state s = OUTBOX_QUEUED;
		char *to = get_str(r, "to"), *err = get_str(r, "error");
		int bad = !to || !json_object_object_get_ex(r, "state", &v) ||
			  state_parse(json_object_get_string(v), &s) < 0;

		if (!bad)
			outbox_notice_add_rcpt(n, to, s, err);
		free(to);
		free(err);
		if (bad)
			return -1;
	}
	return 0;
}

int outbox_notice_load(struct outbox_notice *out, const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	struct json_object *o = NULL;
	int ret;

	memset(out, 0, sizeof(*out));
	if ((ret = strbuf_read_file(&sb, path, NOTICE_FILE_MAX)) < 0)
		goto done;
	o = json_tokener_parse(sb.buf);
	if (!o || !json_object_is_type(o, json_type_object) || from_json(out, o) < 0) {
		outbox_notice_release(out);
		ret = nb_error_set(NB_EINVALID, "%s: not an outbox notice", path);
	}
done:
	json_object_put(o);
	strbuf_release(&sb);
	return ret;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int outbox_ids(char ***out, size_t *nr, const char *dir)
{
	size_t alloc = 0;
	struct dirent *de;
	DIR *d;

	*out = NULL;
	*nr = 0;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : nb_error_errno(NB_ERROR, "cannot read %s", dir);
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (de->d_name[0] == '.' || len <= 5 || !str_ends_with(de->d_name, ".json"))
			continue;
		ALLOC_GROW(*out, *nr + 1, alloc);
		(*out)[(*nr)++] = xstrndup(de->d_name, len - 5);
	}
	closedir(d);
	if (*nr)
		qsort(*out, *nr, sizeof(**out), name_cmp);
	return 0;
}

struct ordered_id {
	char *key, *id;
};

static int ordered_cmp(const void *a, const void *b)
{
	const struct ordered_id *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : strcmp(x->id, y->id);
}

/* A notice's place in the delivery order (see outbox_ids_ordered()); caller frees. */
static char *order_key(const char *dir, const char *id)
{
	struct outbox_notice n = OUTBOX_NOTICE_INIT;
	char *path = outbox_notice_path(dir, id), *key;

	if (outbox_notice_load(&n, path) < 0)
		key = xstrdup("");
	else if (n.order)
		key = xstrdup(n.order);
	else
		key = xstrfmt("%010lld.9", (long long)n.created);
	nb_error_clear();
	outbox_notice_release(&n);
	free(path);
	return key;
}

int outbox_ids_ordered(char ***out, size_t *nr, const char *dir)
{
	struct ordered_id *v;
	size_t i;
	int ret;

	if ((ret = outbox_ids(out, nr, dir)) < 0 || !*nr)
		return ret;
	v = xcalloc(*nr, sizeof(*v));
	for (i = 0; i < *nr; i++) {
		v[i].id = (*out)[i];
		v[i].key = order_key(dir, v[i].id);
	}
	qsort(v, *nr, sizeof(*v), ordered_cmp);
	for (i = 0; i < *nr; i++) {
		(*out)[i] = v[i].id;
		free(v[i].key);
	}
	free(v);
	return 0;
}

void outbox_ids_free(char **ids, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		free(ids[i]);
	free(ids);
}

static void list_one(struct json_object *arr, struct strbuf *text, const struct outbox_notice *n)
{
	struct json_object *o = json_object_new_object(), *to = json_object_new_array();
	struct strbuf tos = STRBUF_INIT, when = STRBUF_INIT;
	size_t i;

	for (i = 0; i < n->rcpts_nr; i++) {
		json_object_array_add(to, json_object_new_string(n->rcpts[i].to));
		strbuf_addf(&tos, "%s%s", i ? "," : "", n->rcpts[i].to);
	}
	json_object_object_add(o, "id", str(n->id));
	json_object_object_add(o, "kind", str(n->kind));
	json_object_object_add(o, "to", to);
	json_object_object_add(o, "subject", str(n->subject));
	json_object_object_add(o, "state", str(state_names[n->state]));
	json_object_object_add(o, "attempts", json_object_new_int(n->attempts));
	json_object_object_add(o, "last_error", str(n->last_error));
	json_object_object_add(o, "next_try",
			       n->state == OUTBOX_QUEUED ? time_json(n->next_try) : NULL);
	json_object_array_add(arr, o);
	if (n->state == OUTBOX_QUEUED)
		outbox_time_fmt(&when, n->next_try);
	strbuf_addf(text, "%.12s  %-7s %-14s %d  %s  %s  %s%s%s\n", n->id, state_names[n->state],
		    n->kind, n->attempts, when.len ? when.buf : "-", tos.buf,
		    n->subject ? n->subject : "", n->last_error ? "  error: " : "",
		    n->last_error ? n->last_error : "");
	strbuf_release(&tos);
	strbuf_release(&when);
}

/* Moves <dir>/<id>.json to <dir>/damaged/<id>.json; 0 or NB_ERROR (recorded). */
static int set_aside(const char *dir, const char *id)
{
	char *from = outbox_notice_path(dir, id), *aside = xstrfmt("%s/damaged", dir);
	char *to = outbox_notice_path(aside, id);
	int ret = file_mkdir_p(aside, 0700);

	if (!ret && rename(from, to) < 0)
		ret = nb_error_errno(NB_ERROR, "cannot move %s to %s", from, to);
	if (!ret)
		ret = file_fsync_dir(dir);
	free(from);
	free(aside);
	free(to);
	return ret;
}

int outbox_set_aside_if_damaged(const char *dir, const char *id, struct strbuf *why)
{
	struct outbox_notice n;
	char *path = outbox_notice_path(dir, id);
	int ret = outbox_notice_load(&n, path);

	free(path);
	outbox_notice_release(&n);
	if (ret != NB_EINVALID)
		return 0;
	strbuf_addstr(why, nb_error_last());
	return set_aside(dir, id) < 0 ? NB_ERROR : 1;
}

int notice_outbox_set_aside(const char *outbox_dir, struct strvec *ids, struct strvec *whys)
{
	char **all = NULL;
	size_t nr = 0, i;
	int ret, n = 0;

	if ((ret = outbox_ids(&all, &nr, outbox_dir)) < 0)
		return ret;
	for (i = 0; i < nr && ret >= 0; i++) {
		struct strbuf why = STRBUF_INIT;

		ret = outbox_set_aside_if_damaged(outbox_dir, all[i], &why);
		if (ret == 1) {
			log_warn("outbox: notice %s is damaged (%s): kept as %s/damaged/%s.json",
				 all[i], why.buf, outbox_dir, all[i]);
			strvec_push(ids, all[i]);
			strvec_push(whys, why.buf);
			n++;
		}
		strbuf_release(&why);
	}
	outbox_ids_free(all, nr);
	return ret < 0 ? ret : n;
}

/* A notice that cannot be read: listed as damaged, with why and where it is. */
static void list_damaged(struct json_object *arr, struct strbuf *text, const char *id,
			 const char *path, const char *why)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "id", str(id));
	json_object_object_add(o, "state", str("damaged"));
	json_object_object_add(o, "file", str(path));
	json_object_object_add(o, "error", str(why));
	json_object_array_add(arr, o);
	strbuf_addf(text, "%.12s  damaged %s: %s\n", id, path, why);
}

static void list_dir(struct json_object *arr, struct strbuf *text, const char *dir,
		     int damaged_only)
{
	char **ids = NULL;
	size_t nr = 0, i;

	if (outbox_ids(&ids, &nr, dir) < 0)
		return;
	for (i = 0; i < nr; i++) {
		struct outbox_notice n;
		char *path = outbox_notice_path(dir, ids[i]);
		int ret = outbox_notice_load(&n, path);

		if (damaged_only)
			list_damaged(arr, text, ids[i], path,
				     ret ? nb_error_last() : "kept aside as damaged");
		else if (!ret)
			list_one(arr, text, &n);
		else if (ret == NB_EINVALID)
			list_damaged(arr, text, ids[i], path, nb_error_last());
		outbox_notice_release(&n);
		free(path);
	}
	outbox_ids_free(ids, nr);
}

int notice_outbox_list(struct strbuf *out, const char *outbox_dir, int json)
{
	struct json_object *doc = json_object_new_object(), *arr = json_object_new_array();
	struct strbuf text = STRBUF_INIT;
	char *aside = xstrfmt("%s/damaged", outbox_dir);
	struct stat st;

	json_object_object_add(doc, "notices", arr);
	if (stat(outbox_dir, &st) < 0 && errno != ENOENT) {
		json_object_put(doc);
		free(aside);
		return nb_error_errno(NB_ERROR, "cannot read %s", outbox_dir);
	}
	/* a file being replaced right now is never half-read: the rename is atomic */
	list_dir(arr, &text, outbox_dir, 0);
	list_dir(arr, &text, aside, 1);
	if (json) {
		strbuf_addstr(out, json_object_to_json_string_ext(
					   doc, JSON_C_TO_STRING_PRETTY |
							JSON_C_TO_STRING_NOSLASHESCAPE));
		strbuf_addch(out, '\n');
	} else {
		strbuf_addbuf(out, &text);
	}
	strbuf_release(&text);
	json_object_put(doc);
	free(aside);
	return 0;
}

int notice_outbox_ids(struct strvec *out, const char *outbox_dir)
{
	char **ids = NULL;
	size_t nr = 0, i;
	int ret = outbox_ids(&ids, &nr, outbox_dir);

	for (i = 0; i < nr; i++)
		strvec_push(out, ids[i]);
	outbox_ids_free(ids, nr);
	return ret;
}

int notice_outbox_remove(const char *outbox_dir, const char *id)
{
	char *path = outbox_notice_path(outbox_dir, id);
	int ret = 0;

	if (unlink(path) < 0 && errno != ENOENT)
		ret = nb_error_errno(NB_ERROR, "cannot remove %s", path);
	free(path);
	return ret;
}

int notice_outbox_show(struct notice_shown *out, const char *outbox_dir, const char *id)
{
	struct outbox_notice n;
	char *path;
	int ret;

	memset(out, 0, sizeof(*out));
	if (!id || strspn(id, "0123456789abcdef") != strlen(id) || strlen(id) != 32)
		return nb_error_set(NB_EINVALID, "'%s' is not a notice id", id ? id : "");
	path = outbox_notice_path(outbox_dir, id);
	if (!file_exists(path)) {
		ret = nb_error_set(NB_ENOTFOUND, "no notice %s in the outbox", id);
		goto done;
	}
	if ((ret = outbox_notice_load(&n, path)) < 0)
		goto done;
	out->kind = xstrdup(n.kind);
	out->channel = xstrdup(n.channel);
	out->subject = xstrdup(n.subject ? n.subject : "");
	out->state = xstrdup(state_names[n.state]);
	{
		struct strbuf to = STRBUF_INIT;
		size_t i;

		for (i = 0; i < n.rcpts_nr; i++)
			strbuf_addf(&to, "%s\n", n.rcpts[i].to ? n.rcpts[i].to : "");
		out->to = strbuf_detach(&to, NULL);
	}
	if (outbox_channel_parse(n.channel) == OUTBOX_CHANNEL_WEBHOOK)
		out->text = xstrfmt("POST %s\nX-Nextbot-Event: %s\nX-Nextbot-Delivery: %s\n\n%s\n",
				    n.url ? n.url : "", n.kind, n.id, n.body);
	else
		out->text = xstrdup(n.text ? n.text : n.body);
	outbox_notice_release(&n);
done:
	free(path);
	return ret;
}

void notice_shown_release(struct notice_shown *s)
{
	free(s->kind);
	free(s->channel);
	free(s->subject);
	free(s->state);
	free(s->to);
	free(s->text);
	memset(s, 0, sizeof(*s));
}
