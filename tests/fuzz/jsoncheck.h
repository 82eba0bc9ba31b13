/*
 * The oracle for JSON nextbot writes (webhook bodies): strict JSON of valid UTF-8,
 * one line, no raw control or DEL bytes, parsed back by json-c.  Aborts on any
 * violation; returns the parsed object (caller puts it with json_object_put()).
 */
#ifndef TESTS_FUZZ_JSONCHECK_H
#define TESTS_FUZZ_JSONCHECK_H

#include <json-c/json.h>
#include <string.h>

#include "tests/fuzz/fuzz.h"

static inline struct json_object *fuzz_json_check(const char *s, size_t len)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *o;
	enum json_tokener_error err;

	if (!tok)
		abort();
	FUZZ_CHECK(fuzz_utf8_valid(s, len), "JSON is not valid UTF-8: '%.*s'", (int)len, s);
	FUZZ_CHECK(!fuzz_has_controls(s, len, ""), "JSON holds raw control bytes: '%.*s'",
		   (int)len, s);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, s, (int)len);
	err = json_tokener_get_error(tok);
	FUZZ_CHECK(o && err == json_tokener_success, "JSON does not parse (%s): '%.*s'",
		   json_tokener_error_desc(err), (int)len, s);
	FUZZ_CHECK(json_tokener_get_parse_end(tok) == len, "JSON followed by garbage");
	json_tokener_free(tok);
	return o;
}

/* A string member that must be one clean line (or null). */
static inline void fuzz_json_check_line(struct json_object *o, const char *key)
{
	struct json_object *v;
	const char *s;

	if (!json_object_object_get_ex(o, key, &v) || !v)
		return;
	FUZZ_CHECK(json_object_is_type(v, json_type_string), "%s is not a string", key);
	s = json_object_get_string(v);
	FUZZ_CHECK(strlen(s) == (size_t)json_object_get_string_len(v), "%s holds a NUL", key);
	FUZZ_CHECK(!fuzz_has_controls(s, strlen(s), ""), "%s holds control characters: '%s'",
		   key, s);
}

#endif
