/* Unit tests for the leaf helpers: utf8, strbuf, error recording, fileutil. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include "util/assign.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/size.h"
#include "util/strbuf.h"
#include "util/timespec.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define S(lit) lit, sizeof(lit) - 1
#define FFFD "\xEF\xBF\xBD"

/* ---- utf8 ---- */

static void test_utf8_valid(void **state)
{
	assert_true(utf8_is_valid(S("")));
	assert_true(utf8_is_valid(S("plain ascii")));
	assert_true(utf8_is_valid(S("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80")));
	assert_true(utf8_is_valid(S("\xF4\x8F\xBF\xBF")));  /* U+10FFFF */
	assert_true(utf8_is_valid(S("\xED\x9F\xBF")));      /* U+D7FF */
	assert_true(utf8_is_valid(S("\xEE\x80\x80")));      /* U+E000 */
	assert_true(utf8_is_valid(S("a\0b")));              /* NUL is valid UTF-8 */

	assert_false(utf8_is_valid(S("\x80")));             /* lone continuation */
	assert_false(utf8_is_valid(S("\xC0\xAF")));         /* overlong '/' */
	assert_false(utf8_is_valid(S("\xC1\xBF")));         /* overlong */
	assert_false(utf8_is_valid(S("\xE0\x80\xAF")));     /* overlong, 3 bytes */
	assert_false(utf8_is_valid(S("\xF0\x80\x80\xAF"))); /* overlong, 4 bytes */
	assert_false(utf8_is_valid(S("\xED\xA0\x80")));     /* U+D800 surrogate */
	assert_false(utf8_is_valid(S("\xED\xBF\xBF")));     /* U+DFFF surrogate */
	assert_false(utf8_is_valid(S("\xF4\x90\x80\x80"))); /* U+110000 */
	assert_false(utf8_is_valid(S("\xF5\x80\x80\x80")));
	assert_false(utf8_is_valid(S("\xFF")));
	assert_false(utf8_is_valid(S("caf\xC3")));          /* truncated at the end */
	assert_false(utf8_is_valid(S("\xE2\x82")));
	assert_false(utf8_is_valid(S("\xE2\x82x")));        /* truncated in the middle */
	/* The length bounds the check: a valid prefix of a longer buffer. */
	assert_true(utf8_is_valid("ok\xFF", 2));
}

static void check_repair(const char *in, size_t len, const char *want)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, ">");
	utf8_repair(&sb, in, len);
	assert_string_equal(sb.buf + 1, want);
	assert_int_equal(sb.buf[0], '>');
	assert_true(utf8_is_valid(sb.buf, sb.len));
	strbuf_release(&sb);
}

static void test_utf8_repair(void **state)
{
	check_repair(S(""), "");
	check_repair(S("caf\xC3\xA9"), "caf\xC3\xA9");
	check_repair(S("a\x80z"), "a" FFFD "z");
	check_repair(S("\xC0\xAF"), FFFD FFFD);
	check_repair(S("\xED\xA0\x80x"), FFFD FFFD FFFD "x");
	check_repair(S("end\xE2\x82"), "end" FFFD FFFD);
	check_repair(S("\xE2\x82\xE2\x82\xAC"), FFFD FFFD "\xE2\x82\xAC");
	check_repair(S("\xF4\x90\x80\x80"), FFFD FFFD FFFD FFFD);
}

static void test_utf8_from_charset(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	utf8_from_charset(&sb, S("Andr\xE9 M\xFCller"), "ISO-8859-1");
	assert_string_equal(sb.buf, "Andr\xC3\xA9 M\xC3\xBCller");
	strbuf_reset(&sb);
	utf8_from_charset(&sb, S("caf\xC3\xA9 \xFF"), NULL);
	assert_string_equal(sb.buf, "caf\xC3\xA9 " FFFD);
	strbuf_reset(&sb);
	utf8_from_charset(&sb, S("caf\xC3\xA9"), "utf-8");
	assert_string_equal(sb.buf, "caf\xC3\xA9");
	strbuf_reset(&sb);
	/* Unknown charset: treated as UTF-8 and repaired. */
	utf8_from_charset(&sb, S("x\xE9y"), "no-such-charset");
	assert_string_equal(sb.buf, "x" FFFD "y");
	strbuf_reset(&sb);
	/* Bytes that do not convert become U+FFFD, the rest survives. */
	utf8_from_charset(&sb, S("\x82\xA0ok\x82"), "SHIFT_JIS");
	assert_true(utf8_is_valid(sb.buf, sb.len));
	assert_non_null(strstr(sb.buf, "ok"));
	assert_non_null(strstr(sb.buf, FFFD));
	strbuf_reset(&sb);
	utf8_from_charset(&sb, S("\xA4\xA4"), "EUC-JP");
	assert_true(utf8_is_valid(sb.buf, sb.len));
	assert_true(sb.len > 0);
	strbuf_release(&sb);
}

static void test_utf8_strip_controls(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	utf8_strip_controls(&sb);
	assert_string_equal(sb.buf, "");
	strbuf_addstr(&sb, "Subject:\r\nBcc: x\there\x7F\x1B[31m");
	utf8_strip_controls(&sb);
	assert_string_equal(sb.buf, "Subject:  Bcc: x here  [31m");
	strbuf_reset(&sb);
	strbuf_addstr(&sb, "a\xC2\x85" "b\xC2\xA0" "c\xC3\xA9\xC2" "d\xC2");
	utf8_strip_controls(&sb);
	assert_string_equal(sb.buf, "a b\xC2\xA0" "c\xC3\xA9\xC2" "d\xC2");
	assert_int_equal(sb.len, strlen(sb.buf));
	strbuf_release(&sb);
}

/* ---- strbuf ---- */

static void test_strbuf_basics(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	char *s;
	size_t len;
	int i;

	assert_string_equal(sb.buf, "");
	strbuf_addstr(&sb, "abc");
	strbuf_addch(&sb, '-');
	strbuf_addf(&sb, "%d/%s", 42, "x");
	assert_string_equal(sb.buf, "abc-42/x");
	assert_int_equal(sb.len, 8);
	strbuf_setlen(&sb, 3);
	assert_string_equal(sb.buf, "abc");
	for (i = 0; i < 10000; i++)
		strbuf_addch(&sb, 'z');
	assert_int_equal(sb.len, 10003);
	assert_int_equal(sb.buf[sb.len], 0);
	strbuf_reset(&sb);
	assert_string_equal(sb.buf, "");
	strbuf_addstr(&sb, "  \t trimmed \n");
	strbuf_trim(&sb);
	assert_string_equal(sb.buf, "trimmed");
	s = strbuf_detach(&sb, &len);
	assert_string_equal(s, "trimmed");
	assert_int_equal(len, 7);
	assert_string_equal(sb.buf, "");
	free(s);
	s = strbuf_detach(&sb, NULL); /* detaching an empty strbuf gives an owned "" */
	assert_string_equal(s, "");
	free(s);
	strbuf_addf(&sb, "%s", "");
	assert_string_equal(sb.buf, "");
	strbuf_release(&sb);
	strbuf_release(&sb);
}

static void test_strbuf_strings(void **state)
{
	long v;

	assert_true(str_starts_with("refs/heads/x", "refs/"));
	assert_false(str_starts_with("ref", "refs/"));
	assert_true(str_ends_with("x.yaml", ".yaml"));
	assert_false(str_ends_with("yaml", ".yaml"));
	assert_int_equal(str_to_long("123", &v), 0);
	assert_int_equal(v, 123);
	assert_int_equal(str_to_long("-5", &v), 0);
	assert_int_equal(v, -5);
	assert_int_equal(str_to_long("12x", &v), -1);
	assert_int_equal(str_to_long("", &v), -1);
	assert_int_equal(str_to_long(NULL, &v), -1);
	assert_int_equal(str_to_long("99999999999999999999999", &v), -1);
}

static char *tmpdir;

static int setup_tmp(void **state)
{
	char tmpl[] = "/tmp/nb-util-XXXXXX";

	if (!mkdtemp(tmpl))
		return -1;
	tmpdir = xstrdup(tmpl);
	return 0;
}

static int teardown_tmp(void **state)
{
	file_remove_tree(tmpdir);
	free(tmpdir);
	tmpdir = NULL;
	return 0;
}

static void test_strbuf_read_file(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	char *path = xstrfmt("%s/f", tmpdir);
	char *missing = xstrfmt("%s/missing", tmpdir);

	assert_int_equal(file_write_atomic(path, "0123456789", 10), 0);
	assert_int_equal(strbuf_read_file(&sb, path, 0), 0);
	assert_string_equal(sb.buf, "0123456789");
	strbuf_reset(&sb);
	assert_int_equal(strbuf_read_file(&sb, path, 10), 0);
	strbuf_reset(&sb);
	assert_int_equal(strbuf_read_file(&sb, path, 9), NB_EINVALID);
	assert_int_equal(strbuf_read_file(&sb, missing, 0), NB_ENOTFOUND);
	assert_non_null(strstr(nb_error_last(), missing));
	strbuf_release(&sb);
	free(path);
	free(missing);
}

/* ---- error ---- */

static void *other_thread(void *arg)
{
	char **seen = arg;

	*seen = xstrdup(nb_error_last());
	nb_error_set(NB_ERROR, "from the other thread");
	return NULL;
}

static void test_error(void **state)
{
	pthread_t t;
	char *seen = NULL;

	nb_error_clear();
	assert_string_equal(nb_error_last(), "");
	assert_int_equal(nb_error_set(NB_ENOTFOUND, "tree '%s' not found", "mm"), NB_ENOTFOUND);
	assert_string_equal(nb_error_last(), "tree 'mm' not found");
	nb_error_prefix("config %s: ", "x.yaml");
	assert_string_equal(nb_error_last(), "config x.yaml: tree 'mm' not found");
	errno = ENOENT;
	assert_int_equal(nb_error_errno(NB_ERROR, "cannot open '%s'", "f"), NB_ERROR);
	assert_string_equal(nb_error_last(), "cannot open 'f': No such file or directory");
	assert_int_equal(errno, ENOENT);

	/* Per thread: another thread neither sees nor clobbers ours. */
	assert_int_equal(pthread_create(&t, NULL, other_thread, &seen), 0);
	pthread_join(t, NULL);
	assert_string_equal(seen, "");
	assert_string_equal(nb_error_last(), "cannot open 'f': No such file or directory");
	free(seen);
	nb_error_clear();
}

/* ---- fileutil ---- */

static void test_file_write_atomic(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	char *path = xstrfmt("%s/state.json", tmpdir);
	char *nodir = xstrfmt("%s/no/state.json", tmpdir);

	assert_int_equal(file_write_atomic(path, "old", 3), 0);
	assert_int_equal(file_write_atomic(path, "new content", 11), 0);
	assert_int_equal(strbuf_read_file(&sb, path, 0), 0);
	assert_string_equal(sb.buf, "new content");
	assert_true(file_write_atomic(nodir, "x", 1) < 0);
	assert_non_null(strstr(nb_error_last(), "no/state.json"));
	assert_false(file_exists(nodir));
	strbuf_release(&sb);
	free(path);
	free(nodir);
}

/*
 * The fault counters are static per process, so each injected fault runs in a
 * child of its own.  Returns the child's file_write_atomic() result (0 or 1 for
 * failure), or 2 for a crash.
 */
static int write_with_fault(const char *path, const char *fault)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		setenv("NEXTBOT_FAULT", fault, 1);
		_exit(file_write_atomic(path, "NEW", 3) < 0 ? 1 : 0);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFSIGNALED(status))
		return 2;
	return WEXITSTATUS(status);
}

static int dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

static void test_file_fault_injection(void **state)
{
	static const char *const faults[] = { "open:1", "write:1", "fsync:1", "rename:1" };
	struct strbuf sb = STRBUF_INIT;
	char *path = xstrfmt("%s/state.json", tmpdir);
	size_t i;

	assert_int_equal(file_write_atomic(path, "OLD", 3), 0);
	for (i = 0; i < sizeof(faults) / sizeof(faults[0]); i++) {
		assert_int_equal(write_with_fault(path, faults[i]), 1);
		strbuf_reset(&sb);
		assert_int_equal(strbuf_read_file(&sb, path, 0), 0);
		assert_string_equal(sb.buf, "OLD");
		assert_int_equal(dir_entries(tmpdir), 1); /* no temp file left behind */
	}
	/* The second fsync is the directory's, after the rename: still reported. */
	assert_int_equal(write_with_fault(path, "fsync:2"), 1);
	/* A later call than the one named does not fail. */
	assert_int_equal(write_with_fault(path, "open:5"), 0);
	/* ":kill" dies on the spot; the old content is intact. */
	assert_int_equal(file_write_atomic(path, "OLD", 3), 0);
	assert_int_equal(write_with_fault(path, "rename:1:kill"), 2);
	strbuf_reset(&sb);
	assert_int_equal(strbuf_read_file(&sb, path, 0), 0);
	assert_string_equal(sb.buf, "OLD");
	strbuf_release(&sb);
	free(path);
}

static void test_file_dirs(void **state)
{
	char *deep = xstrfmt("%s/a/b/c", tmpdir);
	char *top = xstrfmt("%s/a", tmpdir);
	char *file = xstrfmt("%s/a/b/file", tmpdir);
	char *under_file = xstrfmt("%s/a/b/file/d", tmpdir);
	char *missing = xstrfmt("%s/missing", tmpdir);

	assert_int_equal(file_mkdir_p(deep, 0755), 0);
	assert_true(file_is_dir(deep));
	assert_int_equal(file_mkdir_p(deep, 0755), 0); /* exists: fine */
	assert_int_equal(file_write_atomic(file, "x", 1), 0);
	assert_true(file_exists(file));
	assert_false(file_is_dir(file));
	assert_true(file_mkdir_p(under_file, 0755) < 0);
	assert_true(file_mkdir_p(file, 0755) < 0);
	assert_int_equal(file_remove_tree(top), 0);
	assert_false(file_exists(top));
	assert_int_equal(file_remove_tree(missing), 0);
	assert_int_equal(file_fsync_dir(tmpdir), 0);
	assert_true(file_fsync_dir(missing) < 0);
	free(deep), free(top), free(file), free(under_file), free(missing);
}

static void test_file_remove_tree_keeps_symlink_targets(void **state)
{
	char *dir = xstrfmt("%s/d", tmpdir);
	char *keep = xstrfmt("%s/keep", tmpdir);
	char *keepfile = xstrfmt("%s/keep/precious", tmpdir);
	char *link = xstrfmt("%s/d/link", tmpdir);

	assert_int_equal(file_mkdir_p(dir, 0755), 0);
	assert_int_equal(file_mkdir_p(keep, 0755), 0);
	assert_int_equal(file_write_atomic(keepfile, "x", 1), 0);
	assert_int_equal(symlink(keep, link), 0);
	assert_int_equal(file_remove_tree(dir), 0);
	assert_false(file_exists(dir));
	assert_true(file_exists(keepfile));
	free(dir), free(keep), free(keepfile), free(link);
}

/*
 * RELIABILITY 32: a worker tree that a command filled with traps is removed without
 * following, opening or blocking on any of them: symlinks to directories and files
 * outside, a FIFO, a socket, a device node (as root), a hard link to an outside
 * file, a chmod 000 folder, 300 levels of nesting.  Everything outside stays.
 */
static void test_file_remove_tree_hostile(void **state)
{
	char *dir = xstrfmt("%s/w", tmpdir), *out = xstrfmt("%s/outside", tmpdir);
	char *outfile = xstrfmt("%s/outside/precious", tmpdir), *p;
	struct strbuf deep = STRBUF_INIT, sb = STRBUF_INIT;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int i, fd;

	assert_int_equal(file_mkdir_p(dir, 0755), 0);
	assert_int_equal(file_mkdir_p(out, 0755), 0);
	assert_int_equal(file_write_atomic(outfile, "keep", 4), 0);
	p = xstrfmt("%s/fs", dir), assert_int_equal(symlink(out, p), 0), free(p);
	p = xstrfmt("%s/f.c", dir), assert_int_equal(symlink(outfile, p), 0), free(p);
	p = xstrfmt("%s/fifo", dir), assert_int_equal(mkfifo(p, 0644), 0), free(p);
	p = xstrfmt("%s/hard", dir), assert_int_equal(link(outfile, p), 0), free(p);
	p = xstrfmt("%s/sock", dir);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", p);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	if (strlen(p) < sizeof(sa.sun_path))
		assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd), free(p);
	if (!geteuid()) {
		p = xstrfmt("%s/null", dir);
		assert_int_equal(mknod(p, S_IFCHR | 0666, makedev(1, 3)), 0);
		free(p);
	}
	p = xstrfmt("%s/locked/inner", dir), assert_int_equal(file_mkdir_p(p, 0755), 0), free(p);
	p = xstrfmt("%s/locked/inner/x", dir), assert_int_equal(file_write_atomic(p, "x", 1), 0);
	free(p);
	p = xstrfmt("%s/locked", dir), assert_int_equal(chmod(p, 0), 0), free(p);
	strbuf_addstr(&deep, dir);
	for (i = 0; i < 300; i++) {
		strbuf_addstr(&deep, "/d");
		if (mkdir(deep.buf, 0755) < 0 && errno == ENAMETOOLONG)
			break;
	}
	assert_true(i > 60);
	assert_int_equal(file_remove_tree(dir), 0);
	assert_false(file_exists(dir));
	assert_int_equal(lstat(outfile, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(strbuf_read_file(&sb, outfile, 0), 0);
	assert_string_equal(sb.buf, "keep");
	strbuf_release(&sb), strbuf_release(&deep);
	free(dir), free(out), free(outfile);
}

static void test_sizes_and_durations(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	long long n;

	assert_int_equal(size_parse(&n, "512M"), 0), assert_true(n == 512LL << 20);
	assert_int_equal(size_parse(&n, "8GiB"), 0), assert_true(n == 8LL << 30);
	assert_int_equal(size_parse(&n, "2g"), 0), assert_true(n == 2LL << 30);
	assert_int_equal(size_parse(&n, "4096"), 0), assert_true(n == 4096);
	assert_int_equal(size_parse(&n, "1KB"), 0), assert_true(n == 1024);
	assert_true(size_parse(&n, "0") < 0);
	assert_true(size_parse(&n, "-1G") < 0);
	assert_true(size_parse(&n, "8 G") < 0);
	assert_true(size_parse(&n, "8X") < 0);
	assert_true(size_parse(&n, "99999999999T") < 0);
	size_format(&sb, 8LL << 30), assert_string_equal(sb.buf, "8 GiB"), strbuf_reset(&sb);
	size_format(&sb, 256LL << 20), assert_string_equal(sb.buf, "256 MiB"), strbuf_reset(&sb);
	size_format(&sb, 3LL << 29), assert_string_equal(sb.buf, "1.5 GiB"), strbuf_reset(&sb);
	size_format(&sb, 100), assert_string_equal(sb.buf, "100 bytes"), strbuf_reset(&sb);
	timespec_format_duration(&sb, 1800), assert_string_equal(sb.buf, "30m");
	strbuf_reset(&sb);
	timespec_format_duration(&sb, 5400), assert_string_equal(sb.buf, "1h30m");
	strbuf_reset(&sb);
	timespec_format_duration(&sb, 90), assert_string_equal(sb.buf, "1m30s");
	strbuf_reset(&sb);
	timespec_format_duration(&sb, 86400 + 7), assert_string_equal(sb.buf, "1d7s");
	strbuf_release(&sb);
}

/* The least total over all n! pairings, by trying each (small n only). */
static long brute_least(const int *cost, int n, int row, int used, long sum)
{
	long best = -1;
	int j;

	if (row == n)
		return sum;
	for (j = 0; j < n; j++) {
		long got;

		if (used & (1 << j))
			continue;
		got = brute_least(cost, n, row + 1, used | (1 << j), sum + cost[row * n + j]);
		if (best < 0 || got < best)
			best = got;
	}
	return best;
}

/*
 * assign_min_cost(): with costs all different the pairing is the least one (there is
 * exactly one); with many ties (git's procedure may then leave an item unpaired) it is
 * at least a pairing: nobody twice.
 */
static void test_assign_least_cost(void **state)
{
	uint64_t seed = 42;
	int cost[49] = { 0 }, pairs[7], trial, n, i;

	assign_min_cost(pairs, cost, 0); /* nothing to pair */
	for (trial = 0; trial < 800; trial++) {
		int ties = trial % 2, seen = 0;
		long total = 0;

		n = 1 + (trial / 2) % 7;
		for (i = 0; i < n * n; i++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			/* distinct: a value per cell (i in the low bits); ties: small values */
			cost[i] = ties ? (int)((seed >> 40) % 8) :
				       (int)((seed >> 44) % 500) * 64 + i;
		}
		assign_min_cost(pairs, cost, (size_t)n);
		for (i = 0; i < n; i++) {
			if (pairs[i] < 0) {
				assert_true(ties);
				continue;
			}
			assert_true(pairs[i] < n);
			assert_false(seen & (1 << pairs[i]));
			seen |= 1 << pairs[i];
			total += cost[i * n + pairs[i]];
		}
		if (!ties)
			assert_int_equal(total, brute_least(cost, n, 0, 0, 0));
	}
}

#define TT(f) cmocka_unit_test_setup_teardown(f, setup_tmp, teardown_tmp)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_assign_least_cost),
		cmocka_unit_test(test_utf8_valid),
		cmocka_unit_test(test_utf8_repair),
		cmocka_unit_test(test_utf8_from_charset),
		cmocka_unit_test(test_utf8_strip_controls),
		cmocka_unit_test(test_strbuf_basics),
		cmocka_unit_test(test_strbuf_strings),
		TT(test_strbuf_read_file),
		cmocka_unit_test(test_error),
		TT(test_file_write_atomic),
		TT(test_file_fault_injection),
		TT(test_file_dirs),
		TT(test_file_remove_tree_keeps_symlink_targets),
		TT(test_file_remove_tree_hostile),
		cmocka_unit_test(test_sizes_and_durations),
	};

	return cmocka_run_group_tests_name("util", tests, NULL, NULL);
}
