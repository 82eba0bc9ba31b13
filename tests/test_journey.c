/* bot/journey/: the journeys store, matching `nextbot patch` ids, subjects, bots, reviews, gc. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "bot/journey/night_int.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

static char dir[256];

static int setup(void **state)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/nb-journey.XXXXXX", tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	return file_remove_tree(dir);
}

static struct journey_person *people(size_t *nr)
{
	struct journey_person *p = xcalloc(2, sizeof(*p));

	p[0] = (struct journey_person){ xstrdup("Signed-off-by"), xstrdup("Zoë \xe2\x80\xae"),
					xstrdup("zoe@example.org") };
	p[1] = (struct journey_person){ xstrdup("Reviewed-by"), xstrdup("Rev"),
					xstrdup("rev@example.org") };
	*nr = 2;
	return p;
}

/* A journey of one version and one event, its last event on `date`. */
static struct journey *add(struct journey_store *s, const char *subject, const char *pid,
			   const char *msgid, enum journey_state state, const char *date)
{
	struct journey *j = journey_store_add(s);
	struct journey_version *v;

	j->key = xstrdup(pid);
	j->subject = xstrdup(subject);
	j->author_name = xstrdup("Zoë");
	j->author_email = xstrdup("zoe@example.org");
	j->family = xstrdup("file:///mm.git");
	j->state = state;
	j->tree = state == JOURNEY_IN_NEXT ? xstrdup("mm-next") : NULL;
	j->first_seen = xstrdup(date);
	j->versions = xcalloc(1, sizeof(*j->versions));
	j->versions_alloc = j->versions_nr = 1;
	v = &j->versions[0];
	nb_patchid_parse(&v->patch_id, pid);
	v->pid_known = 1;
	nb_oid_parse(&v->commit, "c0ffee0000000000000000000000000000000001");
	v->message_id = xstrdup(msgid);
	v->first_seen = xstrdup(date);
	v->people = people(&v->people_nr);
	journey_event_add(j, date, JOURNEY_ADDED)->tree = xstrdup("mm-unstable");
	return j;
}

#define PID1 "1111111111111111111111111111111111111111"
#define PID2 "2222222222222222222222222222222222222222"
#define PID3 "3333333333333333333333333333333333333333"

/* What is saved is what is read back, hostile text included; a damaged file is set aside. */
static void test_store_round_trip(void **state)
{
	struct journey_store s = JOURNEY_STORE_INIT, t = JOURNEY_STORE_INIT;
	struct journey *j = add(&s, "mm: \"quoted\" <b>x</b>\n", PID1, "a@b", JOURNEY_HELD,
				"2025-01-06");
	char *path = xstrfmt("%s/journeys.txt", dir), *aside = xstrfmt("%s.damaged", path);

	j->held = xstrdup("it has no review");
	strvec_push(&j->told, "mm-next");
	s.date = xstrdup("2025-01-07");
	assert_int_equal(journey_store_save(&s, dir), 0);
	assert_int_equal(journey_store_load(&t, dir), 0);
	assert_int_equal(t.patches_nr, 1);
	assert_string_equal(t.date, "2025-01-07");
	j = &t.patches[0];
	assert_string_equal(j->subject, "mm: \"quoted\" <b>x</b>\n");
	assert_int_equal(j->state, JOURNEY_HELD);
	assert_string_equal(j->held, "it has no review");
	assert_true(strvec_contains(&j->told, "mm-next"));
	assert_string_equal(NB_PATCHID_HEX(&j->versions[0].patch_id), PID1);
	assert_int_equal(j->versions[0].people_nr, 2);
	/* a bidi control from a stranger's text is kept as its visible mark (util/utf8.h) */
	assert_string_equal(j->versions[0].people[0].name, "Zoë \\u202e");
	assert_int_equal(j->events[0].kind, JOURNEY_ADDED);
	journey_store_release(&t);
	journey_store_release(&s);

	assert_int_equal(file_write_atomic(path, "{\"patches\": [", 13), 0); /* not ours */
	assert_int_equal(journey_store_load(&t, dir), 0);
	assert_int_equal(t.patches_nr, 0);
	assert_true(file_exists(aside));
	journey_store_release(&t);
	free(path);
	free(aside);
}

/* Every `from` in sb made `to`. */
static void replace(struct strbuf *sb, const char *from, const char *to)
{
	struct strbuf out = STRBUF_INIT;
	const char *p = sb->buf, *hit;

	while ((hit = strstr(p, from))) {
		strbuf_add(&out, p, hit - p);
		strbuf_addstr(&out, to);
		p = hit + strlen(from);
	}
	strbuf_addstr(&out, p);
	strbuf_reset(sb);
	strbuf_addbuf(sb, &out);
	strbuf_release(&out);
}

/*
 * The states are SPEC's (watched, in-tree, held, in-next, reverted-in-next, dropped,
 * removed, merged), each saved and read back; a store written with the old names
 * (in-review, gone) reads as in-tree and removed.
 */
static void test_store_states(void **state)
{
	static const char *const names[] = { "in-tree", "in-next", "held", "merged", "dropped",
					     "removed", "watched", "reverted-in-next" };
	struct journey_store s = JOURNEY_STORE_INIT, t = JOURNEY_STORE_INIT;
	struct strbuf text = STRBUF_INIT;
	char *path = xstrfmt("%s/journeys.txt", dir);
	size_t i;
	enum journey_state st;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		assert_string_equal(journey_state_name((enum journey_state)i), names[i]);
		assert_int_equal(journey_state_parse(&st, names[i]), 0);
		assert_int_equal(st, (enum journey_state)i);
	}
	add(&s, "old in review", PID1, "1@x", JOURNEY_IN_TREE, "2025-01-06");
	add(&s, "old gone", PID2, "2@x", JOURNEY_GONE, "2025-01-06");
	assert_int_equal(journey_store_save(&s, dir), 0);
	assert_true(strbuf_read_file(&text, path, 1 << 20) >= 0);
	replace(&text, "\tin-tree\t", "\tin-review\t");
	replace(&text, "\tremoved\t", "\tgone\t");
	assert_non_null(strstr(text.buf, "\tin-review\t"));
	assert_int_equal(file_write_atomic(path, text.buf, text.len), 0);
	assert_int_equal(journey_store_load(&t, dir), 0);
	assert_int_equal(t.patches_nr, 2);
	assert_int_equal(t.patches[0].state, JOURNEY_IN_TREE);
	assert_int_equal(t.patches[1].state, JOURNEY_GONE);
	journey_store_release(&t);
	journey_store_release(&s);
	strbuf_release(&text);
	free(path);
}

/* `nextbot patch ID`: Message-ID with or without <>, prefixes, flags, subject words. */
static void test_match(void **state)
{
	struct journey_store s = JOURNEY_STORE_INIT;
	struct state st = STATE_INIT;
	struct flag *f;
	size_t out[4];

	add(&s, "mm: fix the thing", PID1, "one@example.org", JOURNEY_IN_NEXT, "2025-01-06");
	add(&s, "mm: fix another thing", PID2, "two@example.org", JOURNEY_GONE, "2025-01-06");
	add(&s, "net: beef up", PID3, "three@example.org", JOURNEY_MERGED, "2025-01-06");
	f = state_flag_add(&st);
	f->id = xstrdup("abcdef012345");
	nb_patchid_parse(&f->patch_id, PID2);
	assert_int_equal(journey_match(&s, &st, "<two@example.org>", out, 4), 1);
	assert_int_equal(out[0], 1);
	assert_int_equal(journey_match(&s, &st, "three@example.org", out, 4), 1);
	assert_int_equal(journey_match(&s, &st, "2222", out, 4), 1);
	assert_int_equal(out[0], 1);
	assert_int_equal(journey_match(&s, &st, "abcdef012345", out, 4), 1);
	assert_int_equal(out[0], 1);
	assert_int_equal(journey_match(&s, &st, "FIX THE", out, 4), 1);
	assert_int_equal(journey_match(&s, &st, "thing", out, 4), 2);
	assert_int_equal(journey_match(&s, &st, "beef", out, 4), 1); /* hex, yet a word */
	assert_int_equal(journey_match(&s, &st, "thing", out, 1), 2); /* counted, 1 kept */
	assert_int_equal(journey_match(&s, &st, "nothing here", out, 4), 0);
	state_release(&st);
	journey_store_release(&s);
}

static void test_subject_norm(void **state)
{
	static const char *const cases[][2] = {
		{ "[PATCH v2 3/7] mm: Fix  the\tThing ", "mm: fix the thing" },
		{ "[RFC][PATCH] mm: x", "mm: x" },
		{ "mm: [not a prefix] x", "mm: [not a prefix] x" },
		{ "[unclosed mm: x", "[unclosed mm: x" },
		{ "", "" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct strbuf sb = STRBUF_INIT;

		journey_subject_norm(&sb, cases[i][0]);
		assert_string_equal(sb.buf, cases[i][1]);
		strbuf_release(&sb);
	}
}

/* Who is never mailed: nextbot itself and robots, not people whose names look odd. */
static void test_bots(void **state)
{
	struct config cfg = { 0 };

	cfg.notify.from = "nextbot <NextBot@example.org>";
	assert_true(journey_is_bot(&cfg, "x", "nextbot@example.org"));
	assert_true(journey_is_bot(&cfg, "kernel test robot", "lkp@intel.com"));
	assert_true(journey_is_bot(&cfg, "syzbot", "syzbot+1234@syzkaller.appspotmail.com"));
	assert_true(journey_is_bot(&cfg, "CI", "ci-bot@example.org"));
	assert_true(journey_is_bot(&cfg, "Jenkins", "noreply@ci.example.org"));
	assert_false(journey_is_bot(&cfg, "Jane Abbott", "jane@example.org"));
	assert_false(journey_is_bot(&cfg, "Botond Kiss", "botond@example.org"));
	assert_false(journey_is_bot(&cfg, "Zoë", "zoe@example.org"));
}

/* The gate's test: a review by someone else among the required trailers. */
static void test_reviewed(void **state)
{
	struct strvec require = STRVEC_INIT, acked = STRVEC_INIT;
	struct journey_person p[2] = {
		{ "Reviewed-by", "Zoë", "ZOE@example.org" },
		{ "acked-by", "Rev", "rev@example.org" },
	};
	struct journey_person alias[2] = {
		{ "Reviewed-by", "Z", "zoe+review@example.org" },
		{ "Reviewed-by", "Zoë  Ångström", "zoe@elsewhere.org" },
	};

	strvec_push(&require, "Reviewed-by");
	strvec_push(&acked, "Acked-by");
	assert_false(journey_reviewed(p, 2, "Zoë", "zoe@example.org", &require)); /* her own */
	assert_true(journey_reviewed(p, 2, "Zoë", "zoe@example.org", &acked));
	assert_false(journey_reviewed(p, 1, "Zoë", "zoe@example.org", &acked));
	/* her "+" alias, her own name at another address: still hers (issue 38) */
	assert_false(journey_reviewed(alias, 2, "Zoë Ångström", "zoe@example.org", &require));
	assert_true(journey_reviewed(alias, 2, "Zoë Ångström", "zoe2@example.org", &require));
	strvec_clear(&require);
	strvec_clear(&acked);
}

/* gc forgets journeys that ended keep_days nights before the last one, no others. */
static void test_gc(void **state)
{
	struct journey_store s = JOURNEY_STORE_INIT, t = JOURNEY_STORE_INIT;
	struct config cfg = { 0 };
	size_t pruned;

	cfg.workdir = dir;
	cfg.keep_days = 10;
	add(&s, "old and merged", PID1, "1@x", JOURNEY_MERGED, "2025-01-01");
	add(&s, "old, still in next", PID2, "2@x", JOURNEY_IN_NEXT, "2025-01-01");
	add(&s, "recently gone", PID3, "3@x", JOURNEY_GONE, "2025-01-25");
	s.date = xstrdup("2025-01-30");
	assert_int_equal(journey_store_save(&s, dir), 0);
	assert_int_equal(journey_gc(&cfg, "2026-12-06", &pruned), 0);
	assert_int_equal(pruned, 1);
	assert_int_equal(journey_store_load(&t, dir), 0);
	assert_int_equal(t.patches_nr, 2);
	assert_string_equal(t.patches[0].subject, "old, still in next");
	assert_string_equal(t.patches[1].subject, "recently gone");
	journey_store_release(&t);
	journey_store_release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_store_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_states, setup, teardown),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_subject_norm),
		cmocka_unit_test(test_bots),
		cmocka_unit_test(test_reviewed),
		cmocka_unit_test_setup_teardown(test_gc, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
