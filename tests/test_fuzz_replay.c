/*
 * Replays every file of every fuzz corpus (tests/fuzz/corpus/<target>/) through the
 * same fuzz_<target>_one() functions libFuzzer drives, without libFuzzer: seeds,
 * merged inputs and every crash ever found are regression tests on each
 * `make check`.  A property failure aborts, naming the input.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#define FUZZ_REPLAY 1
#include "tests/fuzz/fuzz_addr.c"
#include "tests/fuzz/fuzz_ccdirect.c"
#include "tests/fuzz/fuzz_config.c"
#include "tests/fuzz/fuzz_cron.c"
#include "tests/fuzz/fuzz_excerpt.c"
#include "tests/fuzz/fuzz_inbox.c"
#include "tests/fuzz/fuzz_mail.c"
#include "tests/fuzz/fuzz_memo.c"
#include "tests/fuzz/fuzz_trailer.c"
#include "tests/fuzz/fuzz_utf8.c"
#include "tests/fuzz/fuzz_webhook.c"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

struct replay_target {
	const char *name;
	int (*one)(const uint8_t *data, size_t size);
};

static const struct replay_target targets[] = {
	{ "addr", fuzz_addr_one },       { "ccdirect", fuzz_ccdirect_one },
	{ "config", fuzz_config_one },
	{ "cron", fuzz_cron_one },
	{ "excerpt", fuzz_excerpt_one }, { "inbox", fuzz_inbox_one },
	{ "mail", fuzz_mail_one },
	{ "memo", fuzz_memo_one },
	{ "trailer", fuzz_trailer_one }, { "utf8", fuzz_utf8_one },
	{ "webhook", fuzz_webhook_one },
};
#define NTARGETS (sizeof(targets) / sizeof(*targets))

/* tests/fuzz/corpus, found from the current directory (make check runs at the top). */
static const char *corpus_root(void)
{
	return "tests/fuzz/corpus";
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of the regular files in dir; returns how many. */
static size_t list_files(char ***out, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **v = NULL;
	size_t nr = 0, alloc = 0;

	assert_non_null(d);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		ALLOC_GROW(v, nr + 1, alloc);
		v[nr++] = xstrdup(de->d_name);
	}
	closedir(d);
	if (nr)
		qsort(v, nr, sizeof(*v), cmp_names);
	*out = v;
	return nr;
}

static void replay_one_target(const struct replay_target *t)
{
	char *dir = xstrfmt("%s/%s", corpus_root(), t->name), **names;
	size_t nr = list_files(&names, dir), i;

	assert_true(nr > 0);
	for (i = 0; i < nr; i++) {
		struct strbuf data = STRBUF_INIT;
		char *path = xstrfmt("%s/%s", dir, names[i]);

		assert_int_equal(strbuf_read_file(&data, path, 16 << 20), 0);
		fuzz_current_input = path;
		t->one((const uint8_t *)data.buf, data.len);
		fuzz_current_input = NULL;
		strbuf_release(&data);
		free(path);
		free(names[i]);
	}
	print_message("%s: %zu inputs replayed\n", t->name, nr);
	free(names);
	free(dir);
}

static void test_replay(void **state)
{
	replay_one_target(*state);
}

/* Every corpus directory and every fuzz_*.c belongs to a target replayed here. */
static void test_every_target_replayed(void **state)
{
	char **names;
	size_t nr = list_files(&names, corpus_root()), i, j;

	for (i = 0; i < nr; i++) {
		for (j = 0; j < NTARGETS && strcmp(targets[j].name, names[i]); j++)
			;
		if (j == NTARGETS)
			fail_msg("corpus %s has no replayed target", names[i]);
		free(names[i]);
	}
	free(names);
	nr = list_files(&names, "tests/fuzz");
	for (i = 0; i < nr; i++) {
		size_t len = strlen(names[i]);

		if (!strncmp(names[i], "fuzz_", 5) && len > 7 &&
		    !strcmp(names[i] + len - 2, ".c")) {
			for (j = 0; j < NTARGETS; j++)
				if (strlen(targets[j].name) == len - 7 &&
				    !strncmp(targets[j].name, names[i] + 5, len - 7))
					break;
			if (j == NTARGETS)
				fail_msg("%s is not replayed by test_fuzz_replay.c", names[i]);
		}
		free(names[i]);
	}
	free(names);
}

int main(void)
{
	struct CMUnitTest tests[NTARGETS + 1];
	size_t i;

	for (i = 0; i < NTARGETS; i++) {
		tests[i] = (struct CMUnitTest)cmocka_unit_test_prestate(test_replay,
									(void *)&targets[i]);
		tests[i].name = targets[i].name;
	}
	tests[NTARGETS] = (struct CMUnitTest)cmocka_unit_test(test_every_target_replayed);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
