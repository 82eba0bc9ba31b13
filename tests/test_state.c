/* Unit tests for bot/state: the states' names at the JSON edge, and loading them back. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bot/state/state.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* Every name parses back to its value; unset is NULL both ways; unknown is refused. */
#define ROUND_TRIP(type, first, last)                                          \
	do {                                                                   \
		enum type v_, got_;                                            \
		for (v_ = first; v_ <= last; v_++) {                           \
			assert_non_null(type##_name(v_));                      \
			got_ = 0;                                              \
			assert_int_equal(type##_parse(&got_, type##_name(v_)), 0); \
			assert_int_equal(got_, v_);                            \
		}                                                              \
		assert_null(type##_name(0));                                   \
		got_ = first;                                                  \
		assert_int_equal(type##_parse(&got_, NULL), 0);                \
		assert_int_equal(got_, 0);                                     \
		got_ = first;                                                  \
		assert_int_equal(type##_parse(&got_, "no-such-state"), -1);    \
		assert_int_equal(got_, first);                                 \
	} while (0)

static void test_names_round_trip(void **unused)
{
	ROUND_TRIP(flag_kind, FLAG_BUILD_FAILURE, FLAG_FLAKY);
	ROUND_TRIP(flag_state, FLAG_OPEN, FLAG_DISMISSED);
	ROUND_TRIP(flag_action, FLAG_ACTION_NONE, FLAG_DROPPED_TREE);
	ROUND_TRIP(flag_resolution, FLAG_LEFT_TREE, FLAG_GONE);
	ROUND_TRIP(tree_state, TREE_MERGED, TREE_FETCH_FAILED);
	ROUND_TRIP(run_result, RUN_CLEAN, RUN_FAILED);
	/* the spellings state.json and the mails use */
	assert_string_equal(flag_state_name(FLAG_DISMISSED), "dismissed");
	assert_string_equal(tree_state_name(TREE_LEFT_OUT), "left-out");
	assert_string_equal(tree_state_name(TREE_FETCH_FAILED), "fetch-failed");
	assert_string_equal(run_result_name(RUN_BASE_BROKEN), "base-broken");
	assert_string_equal(flag_action_name(FLAG_DROPPED_TREE), "dropped-tree");
	assert_string_equal(flag_kind_name(FLAG_TEST_FAILURE), "test-failure");
	assert_string_equal(flag_resolution_name(FLAG_LEFT_TREE), "left-tree");
	assert_string_equal(flag_resolution_name(FLAG_FIXED), "fixed");
	assert_string_equal(flag_resolution_name(FLAG_GONE), "gone");
}

static char *tmpdir(void)
{
	char *d = xstrdup("/tmp/nextbot-state-XXXXXX");

	assert_non_null(mkdtemp(d));
	return d;
}

static void write_state(const char *dir, const char *json)
{
	char *path = xstrfmt("%s/state.json", dir);
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(json, f);
	fclose(f);
	free(path);
}

static void cleanup(char *dir)
{
	char *path = xstrfmt("%s/state.json", dir);

	unlink(path);
	rmdir(dir);
	free(path);
	free(dir);
}

static void test_save_load_keeps_states(void **unused)
{
	struct state st = STATE_INIT, back = STATE_INIT;
	char *dir = tmpdir();
	struct run_record *r;
	struct flag *f;

	r = state_run_begin(&st, "2026-12-03");
	r->result = RUN_BASE_BROKEN;
	state_run_tree_add(r)->state = TREE_PREVIOUS_VERSION;
	state_run_tree_add(r); /* unset stays null */
	f = state_flag_add(&st);
	f->id = xstrdup("0123456789ab");
	f->kind = FLAG_FLAKY;
	f->state = FLAG_DISMISSED;
	f->action = FLAG_DROPPED_TREE;
	assert_int_equal(state_save(&st, dir), 0);
	assert_int_equal(state_load(&back, dir), 0);
	assert_int_equal(back.runs_nr, 1);
	assert_int_equal(back.runs[0].result, RUN_BASE_BROKEN);
	assert_int_equal(back.runs[0].trees_nr, 2);
	assert_int_equal(back.runs[0].trees[0].state, TREE_PREVIOUS_VERSION);
	assert_int_equal(back.runs[0].trees[1].state, TREE_STATE_UNSET);
	assert_int_equal(back.flags_nr, 1);
	assert_int_equal(back.flags[0].kind, FLAG_FLAKY);
	assert_int_equal(back.flags[0].state, FLAG_DISMISSED);
	assert_int_equal(back.flags[0].action, FLAG_DROPPED_TREE);
	state_release(&st);
	state_release(&back);
	cleanup(dir);
}

/*
 * A resolved flag says why in `flagged --json` (resolution); one found again keeps
 * its last resolution in state.json only, and its partner's identity is kept.
 */
static void test_flag_resolution(void **unused)
{
	struct state st = STATE_INIT, back = STATE_INIT;
	struct strbuf json = STRBUF_INIT;
	char *dir = tmpdir();
	struct flag *f;

	f = state_flag_add(&st);
	f->id = xstrdup("0123456789ab");
	f->state = FLAG_RESOLVED;
	f->resolution = FLAG_LEFT_TREE;
	f->partner_tree = xstrdup("vfs");
	f->partner_commit = xstrdup("fedcba9876543210fedcba9876543210fedcba98");
	nb_patchid_parse(&f->partner_patch_id, "00112233445566778899aabbccddeeff00112233");
	f = state_flag_add(&st);
	f->id = xstrdup("ba9876543210");
	f->state = FLAG_OPEN;
	f->resolution = FLAG_FIXED;
	f->report_thread = xstrdup("20250118085231.137-1-soren@example.dk");
	state_flags_json(&json, &st);
	assert_non_null(strstr(json.buf,
			       "\"state\":\"resolved\",\n      \"resolution\":\"left-tree\""));
	assert_non_null(strstr(json.buf, "\"state\":\"open\",\n      \"resolution\":null"));
	assert_null(strstr(json.buf, "00112233445566778899"));
	assert_int_equal(state_save(&st, dir), 0);
	assert_int_equal(state_load(&back, dir), 0);
	assert_int_equal(back.flags[0].resolution, FLAG_LEFT_TREE);
	assert_string_equal(NB_PATCHID_HEX(&back.flags[0].partner_patch_id),
			    "00112233445566778899aabbccddeeff00112233");
	assert_null(back.flags[0].partner_message_id);
	assert_int_equal(back.flags[1].state, FLAG_OPEN);
	assert_int_equal(back.flags[1].resolution, FLAG_FIXED);
	/* the submission its mails were started again for; none: no key written */
	assert_null(back.flags[0].report_thread);
	assert_string_equal(back.flags[1].report_thread, "20250118085231.137-1-soren@example.dk");
	assert_null(strstr(json.buf, "report_thread"));
	state_release(&st);
	state_release(&back);
	strbuf_release(&json);
	cleanup(dir);
}

/* A state the code does not know is a damaged file, named, not a silent default. */
static void test_load_refuses_unknown_state(void **unused)
{
	struct state st = STATE_INIT;
	char *dir = tmpdir();

	write_state(dir, "{\"flags\":[{\"id\":\"x\",\"state\":\"opne\"}]}");
	assert_true(state_load(&st, dir) < 0);
	assert_non_null(strstr(nb_error_last(), "opne"));
	state_release(&st);
	write_state(dir, "{\"runs\":[{\"date\":\"2026-12-03\",\"result\":\"clean\","
			 "\"trees\":[{\"name\":\"a\",\"state\":\"merge\"}]}]}");
	assert_true(state_load(&st, dir) < 0);
	assert_non_null(strstr(nb_error_last(), "merge"));
	state_release(&st);
	write_state(dir, "{\"runs\":[{\"date\":\"2026-12-03\",\"result\":null}]}");
	assert_int_equal(state_load(&st, dir), 0);
	assert_int_equal(st.runs[0].result, RUN_RESULT_UNSET);
	state_release(&st);
	cleanup(dir);
}

/* A flag's cells: added once each, keep their first day, survive a save and a load. */
static void test_flag_cells(void **unused)
{
	struct state st = STATE_INIT, back = STATE_INIT;
	struct strvec env = STRVEC_INIT;
	struct strbuf json = STRBUF_INIT;
	char *dir = tmpdir();
	struct flag *f;

	f = state_flag_add(&st);
	f->id = xstrdup("0123456789ab");
	f->state = FLAG_OPEN;
	strvec_push(&env, "ARCH=arm64");
	assert_int_equal(state_flag_cell_set(f, "build[ARCH=arm64]", &env, "a.c:1: error: x",
					     "2026-12-05"), 1);
	/* again: no second cell; an unknown error (a cached verdict) keeps the known one */
	assert_int_equal(state_flag_cell_set(f, "build[ARCH=arm64]", &env, "", "2026-12-06"), 0);
	strvec_clear(&env);
	strvec_push(&env, "ARCH=riscv");
	assert_int_equal(state_flag_cell_set(f, "build[ARCH=riscv]", &env, "a.c:2: error: y",
					     "2026-12-06"), 1);
	assert_int_equal(f->cells_nr, 2);
	assert_string_equal(f->cells[0].first_error, "a.c:1: error: x");
	assert_string_equal(f->cells[0].first_seen, "2026-12-05");
	assert_int_equal(state_save(&st, dir), 0);
	assert_int_equal(state_load(&back, dir), 0);
	assert_int_equal(back.flags[0].cells_nr, 2);
	assert_string_equal(back.flags[0].cells[1].name, "build[ARCH=riscv]");
	assert_int_equal(back.flags[0].cells[1].env.nr, 1);
	assert_string_equal(back.flags[0].cells[1].env.v[0], "ARCH=riscv");
	assert_string_equal(back.flags[0].cells[1].first_error, "a.c:2: error: y");
	assert_string_equal(back.flags[0].cells[1].first_seen, "2026-12-06");
	state_flags_json(&json, &back);
	assert_non_null(strstr(json.buf, "\"name\":\"build[ARCH=riscv]\""));
	assert_non_null(strstr(json.buf, "\"ARCH\":\"riscv\""));
	strbuf_reset(&json);
	state_runs_json(&json, &back, 5);
	assert_non_null(strstr(json.buf, "\"open_flags\""));
	assert_non_null(strstr(json.buf, "build[ARCH=arm64]"));
	strbuf_release(&json);
	strvec_clear(&env);
	state_release(&st);
	state_release(&back);
	cleanup(dir);
}


/*
 * Patch-ids at the state.json edge: 40 hex digits, or null for none (binary or merge
 * changes).  The files below are what nextbot wrote before patch-ids were typed:
 * loading and saving them gives the same bytes, and `flagged --json` prints the same.
 */
#define PID_A "00112233445566778899aabbccddeeff00112233"
#define PID_B "fedcba9876543210fedcba9876543210fedcba98"
#define CMT_A "1111111111111111111111111111111111111111"
#define CMT_B "2222222222222222222222222222222222222222"
static const char loose_state[] =
	"{\"flags\":[{\"id\":\"0123456789ab\",\"kind\":\"build-failure\",\"tree\":\"net\","
	"\"commit\":\"" CMT_A "\",\"patch_id\":\"" PID_A "\",\"state\":\"open\","
	"\"partner\":{\"tree\":\"vfs\",\"commit\":\"" CMT_B "\",\"patch_id\":\"" PID_B "\","
	"\"message_id\":\"<p@example.org>\"}},"
	"{\"id\":\"ba9876543210\",\"kind\":\"test-failure\",\"tree\":\"net\",\"commit\":\""
	CMT_B "\",\"patch_id\":null,\"state\":\"dropped\",\"partner\":{\"tree\":\"vfs\","
	"\"commit\":\"" CMT_A "\",\"patch_id\":null}}],"
	"\"drops\":[{\"tree\":\"net\",\"commit\":\"" CMT_A "\",\"patch_id\":\"" PID_A "\","
	"\"flag_id\":\"0123456789ab\",\"active\":1},"
	"{\"tree\":\"net\",\"commit\":\"" CMT_B "\",\"patch_id\":null,\"active\":0}]}";

/*
 * The golden texts below are the old code's output, byte for byte; the records they
 * repeat are spelled once here and pasted together by the compiler.  A JSON value
 * (`patch_id` and friends) is passed as its literal text: "null" or Q(...).
 */
#define Q(s) "\"" s "\""

/* "author" with no name or email, `in` deep, with no line end after its "}" */
#define NULL_AUTHOR(in)                                                        \
	in "\"author\":{\n"                                                    \
	in "  \"name\":null,\n"                                                \
	in "  \"email\":null\n"                                                \
	in "}"

/* The lines a flag and a drop begin with, after their "{" */
#define RECORD_HEAD(commit, patch_id)                                          \
	"      \"tree\":\"net\",\n"                                            \
	"      \"commit\":\"" commit "\",\n"                                   \
	"      \"patch_id\":" patch_id ",\n"                                   \
	"      \"message_id\":null,\n"                                         \
	"      \"subject\":null,\n"                                            \
	NULL_AUTHOR("      ") ",\n"

/* A flag from its "{" to the partner's author (state.json adds the partner's ids) */
#define FLAG_HEAD(id, commit, patch_id, partner_commit)                        \
	"    {\n"                                                              \
	"      \"id\":" id ",\n"                                               \
	RECORD_HEAD(commit, patch_id)                                          \
	"      \"partner\":{\n"                                                \
	"        \"tree\":\"vfs\",\n"                                          \
	"        \"commit\":\"" partner_commit "\",\n"                         \
	"        \"subject\":null,\n"                                          \
	NULL_AUTHOR("        ")

/* A flag from "kind" to its empty "cells" list, with no line end after the "]" */
#define FLAG_BODY(kind, state)                                                 \
	"      \"kind\":\"" kind "\",\n"                                       \
	"      \"command\":null,\n"                                            \
	"      \"exit_code\":0,\n"                                             \
	"      \"timed_out\":false,\n"                                         \
	"      \"error\":null,\n"                                              \
	"      \"first_seen\":null,\n"                                         \
	"      \"last_seen\":null,\n"                                          \
	"      \"state\":\"" state "\",\n"                                     \
	"      \"resolution\":null,\n"                                         \
	"      \"verdict\":{\n"                                                \
	"        \"culprit_fails\":0,\n"                                       \
	"        \"parent_passes\":0,\n"                                       \
	"        \"revert_passes\":0\n"                                        \
	"      },\n"                                                           \
	"      \"bisect\":{\n"                                                 \
	"        \"steps\":0,\n"                                               \
	"        \"confirm_runs\":0,\n"                                        \
	"        \"log\":[\n"                                                  \
	"        ]\n"                                                          \
	"      },\n"                                                           \
	"      \"reason\":null,\n"                                             \
	"      \"failing\":0,\n"                                               \
	"      \"total\":0,\n"                                                 \
	"      \"excerpt\":null,\n"                                            \
	"      \"fix\":null,\n"                                                \
	"      \"mail\":[\n"                                                   \
	"      ],\n"                                                           \
	"      \"patch_link\":null,\n"                                         \
	"      \"cells\":[\n"                                                  \
	"      ]"

/* A flag as state_save() writes it, with no line end after its "}" */
#define STATE_FLAG(id, commit, patch_id, partner_commit, partner_patch_id,     \
		   partner_message_id, kind, state)                            \
	FLAG_HEAD(id, commit, patch_id, partner_commit) ",\n"                  \
	"        \"patch_id\":" partner_patch_id ",\n"                         \
	"        \"message_id\":" partner_message_id "\n"                      \
	"      },\n"                                                           \
	FLAG_BODY(kind, state) ",\n"                                           \
	"      \"fingerprint\":null,\n"                                        \
	"      \"repro_base\":null,\n"                                         \
	"      \"repro\":[\n"                                                  \
	"      ],\n"                                                           \
	"      \"tree_head\":null,\n"                                          \
	"      \"commit_date\":null,\n"                                        \
	"      \"compiler\":null,\n"                                           \
	"      \"action\":null,\n"                                             \
	"      \"notified\":null,\n"                                           \
	"      \"reminded\":null\n"                                            \
	"    }"

/* A flag as `flagged --json` prints it, with no line end after its "}" */
#define FLAGGED_FLAG(id, commit, patch_id, partner_commit, kind, state)        \
	FLAG_HEAD(id, commit, patch_id, partner_commit) "\n"                   \
	"      },\n"                                                           \
	FLAG_BODY(kind, state) "\n"                                            \
	"    }"

/* A drop as state_save() writes it, with no line end after its "}" */
#define STATE_DROP(commit, patch_id, flag_id, active)                          \
	"    {\n"                                                              \
	RECORD_HEAD(commit, patch_id)                                          \
	"      \"flag_id\":" flag_id ",\n"                                     \
	"      \"reason\":null,\n"                                             \
	"      \"when\":null,\n"                                               \
	"      \"active\":" active ",\n"                                       \
	"      \"by\":null,\n"                                                 \
	"      \"mail\":null\n"                                                \
	"    }"

/* state.json as state_save() writes it, flags and drops with and without patch-ids */
static const char golden_state[] =
	"{\n"
	"  \"version\":2,\n"
	"  \"runs\":[\n"
	"  ],\n"
	"  \"flags\":[\n"
	STATE_FLAG(Q("0123456789ab"), CMT_A, Q(PID_A), CMT_B, Q(PID_B),
		   Q("<p@example.org>"), "build-failure", "open") ",\n"
	STATE_FLAG(Q("ba9876543210"), CMT_B, "null", CMT_A, "null", "null",
		   "test-failure", "dropped") "\n"
	"  ],\n"
	"  \"drops\":[\n"
	STATE_DROP(CMT_A, Q(PID_A), Q("0123456789ab"), "1") ",\n"
	STATE_DROP(CMT_B, "null", "null", "0") "\n"
	"  ],\n"
	"  \"sent\":[\n"
	"  ],\n"
	"  \"inbox\":[\n"
	"  ],\n"
	"  \"reviews\":[\n"
	"  ],\n"
	"  \"tests\":[\n"
	"  ]\n"
	"}\n";

/* `flagged --json` of that state */
static const char golden_flagged[] =
	"{\n"
	"  \"flags\":[\n"
	FLAGGED_FLAG(Q("0123456789ab"), CMT_A, Q(PID_A), CMT_B, "build-failure", "open") ",\n"
	FLAGGED_FLAG(Q("ba9876543210"), CMT_B, "null", CMT_A, "test-failure", "dropped") "\n"
	"  ]\n"
	"}\n";

static void remove_all(char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			char *p = xstrfmt("%s/%s", dir, e->d_name);

			unlink(p);
			free(p);
		}
	closedir(d);
	rmdir(dir);
	free(dir);
}

static void read_state(struct strbuf *sb, const char *dir)
{
	char *path = xstrfmt("%s/state.json", dir);

	strbuf_reset(sb);
	assert_true(strbuf_read_file(sb, path, 1 << 20) >= 0);
	free(path);
}

/* Loads `text` and saves it back: the bytes state_save() wrote. */
static void load_save(struct strbuf *out, const char *dir, const char *text)
{
	struct state st = STATE_INIT;

	write_state(dir, text);
	assert_int_equal(state_load(&st, dir), 0);
	assert_int_equal(state_save(&st, dir), 0);
	read_state(out, dir);
	state_release(&st);
}

static void test_patchids_round_trip(void **unused)
{
	struct state st = STATE_INIT;
	struct strbuf sb = STRBUF_INIT;
	char *dir = tmpdir();

	load_save(&sb, dir, golden_state);
	assert_string_equal(sb.buf, golden_state);
	load_save(&sb, dir, loose_state);
	assert_string_equal(sb.buf, golden_state);
	assert_int_equal(state_load(&st, dir), 0);
	assert_int_equal(st.flags_nr, 2);
	assert_string_equal(NB_PATCHID_HEX(&st.flags[0].patch_id), PID_A);
	assert_string_equal(NB_PATCHID_HEX(&st.flags[0].partner_patch_id), PID_B);
	assert_true(nb_patchid_is_none(&st.flags[1].patch_id));
	assert_true(nb_patchid_is_none(&st.flags[1].partner_patch_id));
	assert_int_equal(st.drops_nr, 2);
	assert_true(nb_patchid_eq(&st.drops[0].patch_id, &st.flags[0].patch_id));
	assert_true(nb_patchid_is_none(&st.drops[1].patch_id));
	/* two none patch-ids are not the same patch */
	assert_false(nb_patchid_eq(&st.drops[1].patch_id, &st.flags[1].patch_id));
	strbuf_reset(&sb);
	state_flags_json(&sb, &st);
	assert_string_equal(sb.buf, golden_flagged);
	state_release(&st);
	strbuf_release(&sb);
	remove_all(dir);
}

/* Loads `text`, which must fail naming the file, `field` and `where`, and keep the file. */
static void refused(const char *dir, const char *text, const char *field, const char *where)
{
	struct state st = STATE_INIT;
	struct strbuf sb = STRBUF_INIT;

	write_state(dir, text);
	assert_true(state_load(&st, dir) < 0);
	assert_non_null(strstr(nb_error_last(), "state.json' is damaged"));
	assert_non_null(strstr(nb_error_last(), field));
	assert_non_null(strstr(nb_error_last(), "is not a patch-id"));
	assert_non_null(strstr(nb_error_last(), where));
	read_state(&sb, dir);
	assert_string_equal(sb.buf, text); /* nothing lost: the file stays as it was */
	state_release(&st);
	strbuf_release(&sb);
}

static void test_patchid_malformed(void **unused)
{
	char *dir = tmpdir();

	refused(dir, "{\"flags\":[{\"id\":\"a\",\"patch_id\":\"" PID_A "\"},"
		     "{\"id\":\"b\",\"patch_id\":\"0011zz\"}]}",
		"patch_id '0011zz'", "in flags[1]");
	refused(dir, "{\"flags\":[{\"id\":\"a\",\"partner\":{\"tree\":\"vfs\","
		     "\"patch_id\":\"" PID_A "0\"}}]}",
		"partner.patch_id '" PID_A "0'", "in flags[0]");
	refused(dir, "{\"drops\":[{\"commit\":\"" CMT_A "\",\"patch_id\":null},"
		     "{\"commit\":\"" CMT_B "\",\"patch_id\":42}]}",
		"patch_id '42'", "in drops[1]");
	remove_all(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_round_trip),
		cmocka_unit_test(test_save_load_keeps_states),
		cmocka_unit_test(test_flag_resolution),
		cmocka_unit_test(test_load_refuses_unknown_state),
		cmocka_unit_test(test_flag_cells),
		cmocka_unit_test(test_patchids_round_trip),
		cmocka_unit_test(test_patchid_malformed),
	};

	return cmocka_run_group_tests_name("state", tests, NULL, NULL);
}
