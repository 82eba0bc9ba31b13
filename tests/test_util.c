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
#include <pwd.h>
#include <unistd.h>

#include "util/assign.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/size.h"
#include "util/strbuf.h"
#include "util/timespec.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "tests/gitfixture.h"
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

/* Bidi controls show as \u202e in one-line and multi-line text; ZWJ and ZWNJ stay. */
static void test_utf8_bidi(void **state)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		/* U+202E RIGHT-TO-LEFT OVERRIDE, U+202C POP DIRECTIONAL FORMATTING */
		{ "fix \xE2\x80\xAE" "txt.exe\xE2\x80\xAC", "fix \\u202etxt.exe\\u202c" },
		{ "\xE2\x80\xAA\xE2\x80\xAB\xE2\x80\xAD", "\\u202a\\u202b\\u202d" },
		/* U+2066..U+2069 isolates, U+200E/U+200F marks, U+061C ARABIC LETTER MARK */
		{ "\xE2\x81\xA6" "a\xE2\x81\xA9\xE2\x81\xA7\xE2\x81\xA8",
		  "\\u2066a\\u2069\\u2067\\u2068" },
		{ "\xE2\x80\x8E\xE2\x80\x8F\xD8\x9C", "\\u200e\\u200f\\u061c" },
		/* neighbours that are not bidi controls stay: U+2029, U+202F, U+206A, U+200D */
		{ "\xE2\x80\xA9\xE2\x80\xAF\xE2\x81\xAA", "\xE2\x80\xA9\xE2\x80\xAF\xE2\x81\xAA" },
		/* a Persian name with ZWNJ (U+200C), a Hindi word with ZWJ (U+200D): unchanged */
		{ "\xD9\x85\xD9\x87\xE2\x80\x8C\xD8\xB3\xD8\xA7",
		  "\xD9\x85\xD9\x87\xE2\x80\x8C\xD8\xB3\xD8\xA7" },
		{ "\xE0\xA4\x95\xE0\xA5\x8D\xE2\x80\x8D\xE0\xA4\xB7",
		  "\xE0\xA4\x95\xE0\xA5\x8D\xE2\x80\x8D\xE0\xA4\xB7" },
		/* with C1 and C0 controls around */
		{ "\xC2\x9B" "1m\xE2\x80\xAE\x1B", " 1m\\u202e " },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct strbuf line = STRBUF_INIT, text = STRBUF_INIT;

		strbuf_addstr(&line, cases[i].in);
		utf8_strip_controls(&line);
		assert_string_equal(line.buf, cases[i].want);
		utf8_clean_text(&text, cases[i].in, strlen(cases[i].in));
		assert_string_equal(text.buf, cases[i].want);
		strbuf_release(&line);
		strbuf_release(&text);
	}
	{
		struct strbuf text = STRBUF_INIT;
		char *dup = utf8_clean_dup("a\n\xE2\x80\xAE\tb\r\n");

		utf8_clean_text(&text, "a\n\xE2\x80\xAE\tb\r\n", 9);
		assert_string_equal(text.buf, "a\n\\u202e\tb \n");
		assert_string_equal(dup, text.buf);
		free(dup);
		strbuf_release(&text);
	}
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
	tmpdir = fixture_tmpdir("util");
	return tmpdir ? 0 : -1;
}

static int teardown_tmp(void **state)
{
	fixture_tmpdir_remove(&tmpdir);
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

/* Builds the hostile tree of the test below in `dir`; 0 or -1. */
static int unprivileged_tree(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY), next = -1, i, ok = fd >= 0;
	char *p;

	/* 5,000 folders deep: made one below the other, beyond PATH_MAX */
	for (i = 0; ok && i < 5000; i++) {
		ok = mkdirat(fd, "d", 0755) == 0 && (next = openat(fd, "d", O_RDONLY)) >= 0;
		if (i == 4000 && ok)
			ok = close(openat(next, "f", O_CREAT | O_WRONLY, 0644)) == 0;
		close(fd);
		fd = ok ? next : -1;
	}
	if (fd >= 0)
		close(fd);
	/* files in a folder without write permission, one mode 000 inside it, and more */
	p = xstrfmt("%s/ro/locked/inner", dir), ok = ok && file_mkdir_p(p, 0755) == 0, free(p);
	p = xstrfmt("%s/ro/locked/inner/x", dir), ok = ok && file_write_atomic(p, "x", 1) == 0;
	free(p);
	p = xstrfmt("%s/ro/file", dir), ok = ok && file_write_atomic(p, "x", 1) == 0, free(p);
	p = xstrfmt("%s/ro/locked", dir), ok = ok && chmod(p, 0) == 0, free(p);
	p = xstrfmt("%s/ro", dir), ok = ok && chmod(p, 0555) == 0, free(p);
	/* and the top itself: what is moved up out of the depths lands there */
	return ok && chmod(dir, 0500) == 0 ? 0 : -1;
}

/*
 * Issue 28: what a command can leave as an unprivileged user (as the runner user
 * does; the test drops to `nobody` when run as root, so that permissions count):
 * folders without write permission (files in them cannot be unlinked as they
 * are), a mode 000 folder inside one, 5,000 folders deep.  All of it goes.
 */
static void test_file_remove_tree_unprivileged(void **state)
{
	char *home = xstrfmt("%s/n", tmpdir), *dir = xstrfmt("%s/n/u", tmpdir);
	struct passwd *pw = getpwnam("nobody");
	int status = -1;
	pid_t pid;

	assert_int_equal(mkdir(home, 0755), 0);
	if (!geteuid()) {
		if (!pw)
			skip();
		assert_int_equal(chmod(tmpdir, 0711), 0);
		assert_int_equal(chown(home, pw->pw_uid, pw->pw_gid), 0);
	}
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		if (!geteuid() && (setgid(pw->pw_gid) < 0 || setuid(pw->pw_uid) < 0))
			_exit(2);
		if (mkdir(dir, 0755) < 0 || unprivileged_tree(dir) < 0)
			_exit(3);
		if (file_remove_tree(dir) < 0)
			fprintf(stderr, "%s\n", nb_error_last());
		_exit(!file_exists(dir) ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	free(home);
	free(dir);
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
static void test_alloc_grow(void **state)
{
	size_t nr, alloc = 0, alloc_min = 0, alloc_one = 0;
	char **v = NULL, **w = NULL;
	int *one = NULL;

	(void)state;
	ALLOC_GROW(v, 1, alloc);
	assert_int_equal(alloc, 8);
	ALLOC_GROW(v, 9, alloc);
	assert_int_equal(alloc, 16);
	ALLOC_GROW(v, 40, alloc);
	assert_int_equal(alloc, 40);
	ALLOC_GROW_MIN(one, 1, alloc_one, 1);
	assert_int_equal(alloc_one, 1);
	ALLOC_GROW_MIN(one, 2, alloc_one, 1);
	assert_int_equal(alloc_one, 2);
	ALLOC_GROW_MIN(one, 3, alloc_one, 1);
	assert_int_equal(alloc_one, 4);
	ALLOC_GROW_MIN(w, 3, alloc_min, 2);
	assert_int_equal(alloc_min, 3);
	for (nr = 0; nr < 3; nr++)
		w[nr] = xstrfmt("s%zu", nr);
	assert_string_equal(w[2], "s2");
	free_strings(w, nr); /* leaks would show under SAN=1 */
	free_strings(NULL, 0);
	free(v);
	free(one);
}

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
		cmocka_unit_test(test_alloc_grow),
		cmocka_unit_test(test_assign_least_cost),
		cmocka_unit_test(test_utf8_valid),
		cmocka_unit_test(test_utf8_repair),
		cmocka_unit_test(test_utf8_from_charset),
		cmocka_unit_test(test_utf8_strip_controls),
		cmocka_unit_test(test_utf8_bidi),
		cmocka_unit_test(test_strbuf_basics),
		cmocka_unit_test(test_strbuf_strings),
		TT(test_strbuf_read_file),
		cmocka_unit_test(test_error),
		TT(test_file_write_atomic),
		TT(test_file_fault_injection),
		TT(test_file_dirs),
		TT(test_file_remove_tree_keeps_symlink_targets),
		TT(test_file_remove_tree_hostile),
		TT(test_file_remove_tree_unprivileged),
		cmocka_unit_test(test_sizes_and_durations),
	};

	return cmocka_run_group_tests_name("util", tests, NULL, NULL);
}
