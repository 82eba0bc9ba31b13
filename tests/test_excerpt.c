/* Error excerpts, normalised first error lines, fingerprints and flag ids. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "merge/search/search.h"
#include "merge/git/sha1_int.h"
#include "util/banned.h"

static void sha1_known_answers(void **state)
{
	char hex[SHA1_HEXSZ + 1];
	struct strbuf sb = STRBUF_INIT;
	int i;

	sha1_hex(hex, "", 0);
	assert_string_equal(hex, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
	sha1_hex(hex, "abc", 3);
	assert_string_equal(hex, "a9993e364706816aba3e25717850c26c9cd0d89d");
	sha1_hex(hex, "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56);
	assert_string_equal(hex, "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
	for (i = 0; i < 1000; i++)
		strbuf_addstr(&sb, "a");
	sha1_hex(hex, sb.buf, sb.len);
	assert_string_equal(hex, "291e9a6c66994949b57ba5e650361e98fc36b1ba");
	/* git's blob id of "hello\n" is SHA-1 of "blob 6\0hello\n" */
	sha1_hex(hex, "blob 6\0hello\n", 13);
	assert_string_equal(hex, "ce013625030ba8dba906f756967f9e9ca394464a");
	strbuf_release(&sb);
}

static void norm(const char *in, const char *want)
{
	struct strbuf sb = STRBUF_INIT;

	excerpt_normalise(&sb, in);
	assert_string_equal(sb.buf, want);
	strbuf_release(&sb);
}

static void normalise_rules(void **state)
{
	norm("mm/slub.c:1234:17: error: 'foo' undeclared (first use in this function)",
	     "mm/slub.c: error: 'foo' undeclared (first use in this function)");
	norm("mm/slub.c:99:2: error: 'foo' undeclared (first use in this function)",
	     "mm/slub.c: error: 'foo' undeclared (first use in this function)");
	norm("BUG: unable to handle page fault at 0xffff8880deadbeef in 3f2a9c1d7e",
	     "BUG: unable to handle page fault at in");
	norm("2026-12-03T02:00:01Z test_mm: FAIL expected 3", "test_mm: FAIL expected 3");
	norm("[   12.345678] kernel BUG at 10:11:12.5 here", "kernel BUG at here");
	norm("run.sh: line 42: frob: command not found", "run.sh: line: frob: command not found");
	norm("  lots   of\tspace  ", "lots of space");
	/* words made of hex letters only, and short numbers, are kept */
	norm("defaced cafe 1234 expected 3, got 4", "defaced cafe 1234 expected 3, got 4");
	norm("", "");
	norm("2026-12-03 05:06:07+02:00 x", "x");
}

static void fingerprint_stable_across_edits(void **state)
{
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	char ida[13], idb[13];

	excerpt_fingerprint(&a, "0123abcd", "x86_64", "fs/ext4/inode.c:10:3: error: no member");
	excerpt_fingerprint(&b, "0123abcd", "x86_64", "fs/ext4/inode.c:17:3: error: no member");
	assert_string_equal(a.buf, "0123abcd\nx86_64\nfs/ext4/inode.c: error: no member");
	assert_string_equal(a.buf, b.buf);
	excerpt_flag_id(ida, a.buf);
	excerpt_flag_id(idb, b.buf);
	assert_string_equal(ida, idb);
	assert_int_equal(strlen(ida), 12);
	strbuf_reset(&b);
	excerpt_fingerprint(&b, "0123abcd", "arm64", "fs/ext4/inode.c:17:3: error: no member");
	excerpt_flag_id(idb, b.buf);
	assert_string_not_equal(ida, idb);
	excerpt_fingerprint(&b, NULL, NULL, NULL);
	strbuf_release(&a);
	strbuf_release(&b);
}

/* A flaky test's values differ from failure to failure: one flaky failure, one flag. */
static void flaky_fingerprint_drops_values(void **state)
{
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;

	excerpt_flaky_fingerprint(&a, "flaky:vfs", "test",
				  "tests/test_fs_chunks57.c:21: FAIL: n == 5 "
				  "(got 4, want 5) 1.5s");
	excerpt_flaky_fingerprint(&b, "flaky:vfs", "test",
				  "tests/test_fs_chunks57.c:21: FAIL: n == 2 "
				  "(got 1, want 2) 0.25s");
	assert_string_equal(a.buf, "flaky:vfs\ntest\ntests/test_fs_chunks57.c: FAIL: n == (got , "
				   "want ) 1.5s");
	assert_string_not_equal(a.buf, b.buf); /* "1.5s" and "0.25s" are words */
	strbuf_reset(&a);
	strbuf_reset(&b);
	excerpt_flaky_fingerprint(&a, "flaky:vfs", "test", "x86_64 v2 test 3: got 4");
	excerpt_flaky_fingerprint(&b, "flaky:vfs", "test", "x86_64 v2 test 9: got 1");
	assert_string_equal(a.buf, "flaky:vfs\ntest\nx86_64 v2 test : got");
	assert_string_equal(a.buf, b.buf);
	strbuf_release(&a);
	strbuf_release(&b);
}

static const char gcc_log[] =
	"  CC      mm/filemap.o\n"
	"  CC      mm/slub.o\n"
	"\x1b[01m\x1b[Kmm/slub.c:\x1b[m\x1b[K In function '\x1b[01m\x1b[Kkmalloc\x1b[m\x1b[K':\n"
	"/state/workers/w1/mm/slub.c:120:9: error: 'foo' undeclared\n"
	"  120 |         foo = 1;\n"
	"      |         ^~~\n"
	"  CC      mm/vmscan.o\n"
	"make[1]: *** [scripts/Makefile.build:250: mm/slub.o] Error 1\n"
	"make: *** [Makefile:1900: mm] Error 2\n";

static void gcc_error_with_context(void **state)
{
	struct strbuf out = STRBUF_INIT, first = STRBUF_INIT;

	excerpt_extract(&out, &first, gcc_log, sizeof(gcc_log) - 1, "/state/workers/w1");
	assert_string_equal(out.buf,
			    "mm/slub.c: In function 'kmalloc':\n"
			    "mm/slub.c:120:9: error: 'foo' undeclared\n"
			    "  120 |         foo = 1;\n"
			    "      |         ^~~\n"
			    "make[1]: *** [scripts/Makefile.build:250: mm/slub.o] Error 1\n"
			    "make: *** [Makefile:1900: mm] Error 2\n");
	assert_string_equal(first.buf, "mm/slub.c:120:9: error: 'foo' undeclared");
	strbuf_release(&out);
	strbuf_release(&first);
}

static void test_failure_lines(void **state)
{
	static const char log[] = "ok 1 - alloc\nok 2 - free\nnot ok 3 - reclaim\n"
				  "# expected 3, got 4\n# at test.c:50\nok 4 - more\n";
	struct strbuf out = STRBUF_INIT, first = STRBUF_INIT;

	excerpt_extract(&out, &first, log, sizeof(log) - 1, NULL);
	assert_string_equal(out.buf, "not ok 3 - reclaim\n# expected 3, got 4\n# at test.c:50\n");
	assert_string_equal(first.buf, "not ok 3 - reclaim");
	strbuf_release(&out);
	strbuf_release(&first);
}

static size_t count_lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void capped_and_tail(void **state)
{
	struct strbuf log = STRBUF_INIT, out = STRBUF_INIT, first = STRBUF_INIT;
	int i;

	for (i = 0; i < 500; i++)
		strbuf_addf(&log, "f%d.c:%d:1: error: bad thing %d\n", i, i, i);
	strbuf_addstr(&log, "make: *** [all] Error 1\n");
	excerpt_extract(&out, &first, log.buf, log.len, NULL);
	assert_int_equal(count_lines(out.buf), EXCERPT_MAX_LINES);
	assert_non_null(strstr(out.buf, "make: *** [all] Error 1\n"));
	assert_string_equal(first.buf, "f0.c:0:1: error: bad thing 0");

	strbuf_reset(&log);
	strbuf_reset(&out);
	strbuf_reset(&first);
	for (i = 0; i < 100; i++)
		strbuf_addf(&log, "progress %d\n", i);
	strbuf_addstr(&log, "\n\n");
	excerpt_extract(&out, &first, log.buf, log.len, NULL);
	assert_int_equal(count_lines(out.buf), 20);
	assert_true(str_starts_with(out.buf, "progress 80\n"));
	assert_string_equal(first.buf, "progress 99");
	strbuf_release(&log);
	strbuf_release(&out);
	strbuf_release(&first);
}

static void odd_bytes(void **state)
{
	static const char log[] = "a\0b error: x\r\nfoo\rbar error: y\n\xff\xfe\x01\x7f\n\x1b";
	struct strbuf out = STRBUF_INIT, first = STRBUF_INIT, big = STRBUF_INIT;
	int i;

	excerpt_extract(&out, &first, log, sizeof(log) - 1, "");
	assert_string_equal(first.buf, "ab error: x");
	assert_non_null(strstr(out.buf, "bar error: y\n"));
	assert_null(strstr(out.buf, "foo"));
	strbuf_reset(&out);
	excerpt_extract(&out, NULL, NULL, 0, NULL);
	assert_string_equal(out.buf, "");
	for (i = 0; i < 2000; i++)
		strbuf_addstr(&big, "\xc3\xa9");
	excerpt_extract(&out, NULL, big.buf, big.len, NULL);
	assert_true(out.len <= EXCERPT_LINE_MAX + 4);
	strbuf_release(&out);
	strbuf_release(&first);
	strbuf_release(&big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sha1_known_answers),
		cmocka_unit_test(normalise_rules),
		cmocka_unit_test(flaky_fingerprint_drops_values),
		cmocka_unit_test(fingerprint_stable_across_edits),
		cmocka_unit_test(gcc_error_with_context),
		cmocka_unit_test(test_failure_lines),
		cmocka_unit_test(capped_and_tail),
		cmocka_unit_test(odd_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
