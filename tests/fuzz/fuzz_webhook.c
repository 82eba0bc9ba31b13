/*
 * Fuzz target: the webhook body builder (notify/hook.c hook_body) with arbitrary
 * text in every field; the body must be strict, valid-UTF-8, one-line JSON whose
 * one-line fields hold no control characters and whose numbers come back intact.
 *
 * Input: bytes 0..3 the exit code, byte 4 flags, then NUL-separated fields.
 */
#include <stdint.h>
#include <string.h>

#include "notify/hook.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/jsoncheck.h"
#include "util/strbuf.h"
#include "util/banned.h"

#define HOOK_FIELDS 14

static const char *hook_opt(const struct fuzz_fields *f, size_t i, int as_null)
{
	return as_null && !*f->v[i] ? NULL : f->v[i];
}

static void hook_check_parsed(struct json_object *o, const struct hook_event *ev)
{
	static const char *const lines[] = { "event", "id", "date", "tree", "commit", "subject",
					     "patch_id", "message_id", "command", "next_tag",
					     "reason", "other_tree", "result" };
	struct json_object *v;
	size_t i;

	FUZZ_CHECK(json_object_is_type(o, json_type_object), "body is not an object");
	for (i = 0; i < sizeof(lines) / sizeof(*lines); i++)
		fuzz_json_check_line(o, lines[i]);
	if (json_object_object_get_ex(o, "author", &v) && v) {
		fuzz_json_check_line(v, "name");
		fuzz_json_check_line(v, "email");
	}
	FUZZ_CHECK(json_object_object_get_ex(o, "exit_code", &v), "no exit_code");
	if (ev->has_exit)
		FUZZ_CHECK(v && json_object_get_int(v) == ev->exit_code, "exit_code changed");
	else
		FUZZ_CHECK(!v, "exit_code not null");
	if (json_object_object_get_ex(o, "log_excerpt", &v) && v) {
		const char *s = json_object_get_string(v);

		FUZZ_CHECK(!fuzz_has_controls(s, strlen(s), "\t\n\r"),
			   "log_excerpt holds control characters");
	}
	if (json_object_object_get_ex(o, "bisect", &v) && v) {
		struct json_object *log;

		FUZZ_CHECK(json_object_object_get_ex(v, "log", &log) &&
			   json_object_is_type(log, json_type_array), "bisect.log not a list");
		for (i = 0; i < json_object_array_length(log); i++) {
			const char *s = json_object_get_string(json_object_array_get_idx(log, i));

			FUZZ_CHECK(s && !fuzz_has_controls(s, strlen(s), ""),
				   "bisect log line with control characters");
		}
	}
}

int fuzz_webhook_one(const uint8_t *data, size_t size)
{
	struct hook_event ev;
	struct fuzz_fields f;
	struct strbuf body = STRBUF_INIT;
	struct json_object *o;
	const char *log[2], *paths[2];
	uint8_t flags;
	int32_t code;

	if (size < 5)
		return 0;
	memcpy(&code, data, 4);
	flags = data[4];
	fuzz_fields_split(&f, data + 5, size - 5, HOOK_FIELDS);
	memset(&ev, 0, sizeof(ev));
	ev.event = f.v[0];
	ev.id = hook_opt(&f, 1, flags & 1);
	ev.date = "2026-12-03";
	ev.next_tag = f.v[2];
	ev.tree = f.v[3];
	ev.commit = hook_opt(&f, 4, flags & 1);
	ev.subject = f.v[5];
	ev.author.name = hook_opt(&f, 6, flags & 2);
	ev.author.email = hook_opt(&f, 7, flags & 2);
	ev.message_id = hook_opt(&f, 8, 1);
	if (flags & 4) {
		ev.partner_tree = f.v[3];
		ev.partner_subject = f.v[9];
		ev.partner_author.name = f.v[6];
	}
	ev.command = f.v[10];
	ev.has_exit = !(flags & 8);
	ev.exit_code = code;
	ev.timed_out = (flags >> 4) & 1;
	ev.log_excerpt = hook_opt(&f, 11, flags & 1);
	log[0] = f.v[12];
	log[1] = f.v[13];
	ev.has_bisect = (flags >> 5) & 1;
	ev.steps = code;
	ev.log = log;
	ev.log_nr = 2;
	ev.reason = hook_opt(&f, 13, 1);
	paths[0] = f.v[9];
	paths[1] = f.v[12];
	ev.paths = paths;
	ev.paths_nr = (flags >> 6) & 1 ? 2 : 0;
	ev.has_counts = (flags >> 7) & 1;
	ev.failing = code;
	ev.total = code;
	hook_body(&body, &ev);
	FUZZ_CHECK(body.len == strlen(body.buf), "body holds a NUL");
	FUZZ_CHECK(!memchr(body.buf, '\n', body.len), "body is not one line");
	o = fuzz_json_check(body.buf, body.len);
	hook_check_parsed(o, &ev);
	json_object_put(o);
	strbuf_release(&body);
	fuzz_fields_free(&f);
	return 0;
}

#ifndef FUZZ_REPLAY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_webhook_one(data, size);
}
#endif
