/* Unit tests for the compiler cache (cc/): command lines, wire, store, a hostile client. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cc/cc.h"
#include "cc/cc_int.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/runcmd.h"
#include "util/sha256.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "tests/gitfixture.h"
#include "util/banned.h"

static char *tmpdir;

static int setup_tmp(void **state)
{
	tmpdir = fixture_tmpdir("cc");
	return tmpdir && chmod(tmpdir, 0711) == 0 ? 0 : -1;
}

static int teardown_tmp(void **state)
{
	fixture_tmpdir_remove(&tmpdir);
	return 0;
}

static void write_file(const char *path, const char *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

static void hex_of(char out[SHA256_HEXSZ + 1], const void *data, size_t len, size_t chunk)
{
	unsigned char d[SHA256_LEN];
	struct sha256 h;
	size_t at;

	sha256_init(&h);
	for (at = 0; at < len; at += chunk)
		sha256_update(&h, (const char *)data + at, len - at < chunk ? len - at : chunk);
	sha256_final(d, &h);
	sha256_hex(out, d);
}

/* ---- SHA-256, with sha256sum(1) as the oracle ---- */

static void test_sha256_oracle(void **state)
{
	static const size_t lens[] = { 0, 1, 3, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1000,
				       70000 };
	static const size_t chunks[] = { 1, 7, 64, 65536 };
	char *path = xstrfmt("%s/data", tmpdir);
	size_t i, c;
	int fd;

	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		char *data = xmalloc(lens[i] + 1), hex[SHA256_HEXSZ + 1];
		const char *argv[] = { "sha256sum", path, NULL };
		struct strbuf out = STRBUF_INIT;
		size_t k;

		for (k = 0; k < lens[i]; k++)
			data[k] = (char)(k * 31 + i);
		write_file(path, data, lens[i]);
		assert_int_equal(runcmd_capture(&out, NULL, argv), 0);
		for (c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
			hex_of(hex, data, lens[i], chunks[c]);
			assert_memory_equal(hex, out.buf, SHA256_HEXSZ);
		}
		fd = open(path, O_RDONLY);
		assert_true(fd >= 0);
		assert_int_equal(sha256_fd_hex(hex, fd), 0);
		close(fd);
		assert_memory_equal(hex, out.buf, SHA256_HEXSZ);
		strbuf_release(&out);
		free(data);
	}
	free(path);
}

/* ---- command lines ---- */

static char *joined(const struct strvec *v)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	for (i = 0; i < v->nr; i++)
		strbuf_addf(&sb, "%s%s", i ? " " : "", v->v[i]);
	return strbuf_detach(&sb, NULL);
}

/* Splits `line` at spaces into argv (no quoting needed here). */
static int split(char **argv, char *line)
{
	int n = 0;
	char *save = NULL, *w;

	for (w = strtok_r(line, " ", &save); w; w = strtok_r(NULL, " ", &save))
		argv[n++] = w;
	argv[n] = NULL;
	return n;
}

static void test_args_cacheable(void **state)
{
	static const struct {
		const char *line, *pre, *send, *output;
		int deps, pp_deps;
	} cases[] = {
		{ "-O2 -c x.c", "-O2 x.c", "-O2 x.c", NULL, 0, 0 },
		{ "-c -o out/x.o src/x.c -g -Wall -Iinc -DA=1", "src/x.c -g -Wall -Iinc -DA=1",
		  "src/x.c -g -Wall -Iinc -DA=1", "out/x.o", 0, 0 },
		/* the dependency file: named for the -E pass as gcc names it, never sent */
		{ "-MD -c x.c -o out/x.o", "-MD x.c -MF out/x.d -MQ out/x.o", "x.c", "out/x.o",
		  1, 0 },
		{ "-MMD -MP -c src/x.c", "-MMD -MP src/x.c -MF x.d", "src/x.c", NULL, 1, 0 },
		{ "-MD -MF d -MT t -c x.c -o x.o", "-MD -MF d -MT t x.c", "x.c", "x.o", 1, 0 },
		/* kbuild's: the preprocessor names the file itself, in the -E pass too */
		{ "-Wp,-MMD,.x.o.d -Wp,-D_X=1 -c x.c", "-Wp,-MMD,.x.o.d -Wp,-D_X=1 x.c",
		  "-Wp,-D_X=1 x.c", NULL, 0, 1 },
		{ "-c x.cpp -std=c++17 -fno-rtti --param max-inline-insns-auto=10 -ox.o",
		  "x.cpp -std=c++17 -fno-rtti --param max-inline-insns-auto=10",
		  "x.cpp -std=c++17 -fno-rtti --param max-inline-insns-auto=10", "x.o", 0, 0 },
		{ "-c x.c -include c.h -isystem /i -Wa,--noexecstack -ffile-prefix-map=/a=/b",
		  "x.c -include c.h -isystem /i -Wa,--noexecstack -ffile-prefix-map=/a=/b",
		  "x.c -include c.h -isystem /i -Wa,--noexecstack -ffile-prefix-map=/a=/b", NULL,
		  0, 0 },
		/* a 32-bit kbuild compile (tinyconfig on x86): every one says -Wa,-mtune= */
		{ "-m32 -march=i686 -Wa,-mtune=generic32 -c x.c -o x.o",
		  "-m32 -march=i686 -Wa,-mtune=generic32 x.c",
		  "-m32 -march=i686 -Wa,-mtune=generic32 x.c", "x.o", 0, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cc_args a = CC_ARGS_INIT;
		char *line = xstrdup(cases[i].line), *argv[32], *pre, *send;
		const char *why = NULL;
		int n = split(argv, line);

		assert_int_equal(cc_args_parse(&a, n, (const char *const *)argv), 1);
		pre = joined(&a.pre);
		send = joined(&a.send);
		assert_string_equal(pre, cases[i].pre);
		assert_string_equal(send, cases[i].send);
		assert_int_equal(a.deps, cases[i].deps);
		assert_int_equal(a.pp_deps, cases[i].pp_deps);
		free(pre);
		if (cases[i].output)
			assert_string_equal(a.output, cases[i].output);
		else
			assert_null(a.output);
		/* what the shim sends, the service takes */
		assert_int_equal(cc_args_check_send((const char *const *)a.send.v, a.send.nr,
						    &why), 0);
		free(send);
		free(line);
		cc_args_release(&a);
	}
}

static void test_args_not_cacheable(void **state)
{
	static const char *const lines[] = {
		"x.c -o x",                    /* a link */
		"-c x.c y.c",                  /* two sources */
		"-S x.c",                      /* assembly out */
		"-E x.c",
		"-c x.s",                      /* not C */
		"-c -",                        /* standard input */
		"-c @opts x.c",                /* response file */
		"-c x.c -save-temps",
		"-c x.c -fplugin=./evil.so",
		"-c x.c -fprofile-use=p.gcda",
		"-c x.c -fdump-tree-all",
		"-c x.c -fstack-usage",
		"-c x.c -specs=my.specs",
		"-c x.c -B /tmp/bin",
		"-c x.c -x c",
		"-c x.c -gsplit-dwarf",
		"-c x.c -Wa,-adhln=x.lst",
		"-c x.c -Wl,-z,now",
		"-c x.c -o a.o -o b.o",
		"-c x.c -o /dev/null",
		"-c x.c -fsanitize-ignorelist=ign.txt",
		"-c x.c -fsomething=/a/file",
		"-c x.c -M",
		"-c x.c -frecord-gcc-switches",
		"-c x.c -MF",                 /* no value */
		"-c x.c --frobnicate",
	};
	size_t i;

	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		struct cc_args a = CC_ARGS_INIT;
		char *line = xstrdup(lines[i]), *argv[32];
		int n = split(argv, line);

		if (cc_args_parse(&a, n, (const char *const *)argv) != 0)
			fail_msg("cacheable: %s", lines[i]);
		assert_non_null(a.why);
		free(line);
		cc_args_release(&a);
	}
}

/* What a forged request may carry: the service decides by itself. */
static void test_args_check_send(void **state)
{
	static const char *const good[] = { "x.c", "-O2 -Iinc -DX x.c", "x.cc -std=c++20" };
	static const char *const bad[] = {
		"", "-O2", "x.c y.c", "x.c -c", "x.c -o x.o", "x.c -MD", "x.c -MF d",
		"x.c -Wp,-MD,d", "x.c -fplugin=/usr/lib/x.so", "x.c -S", "x.c -B/tmp",
		"x.s", "@f x.c", "x.c -save-temps", "x.c --param",
	};
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		char *line = xstrdup(good[i]), *argv[32];
		const char *why = NULL;
		int n = split(argv, line);

		assert_int_equal(cc_args_check_send((const char *const *)argv, (size_t)n, &why), 0);
		free(line);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *line = xstrdup(bad[i]), *argv[32];
		const char *why = NULL;
		int n = split(argv, line);

		if (!cc_args_check_send((const char *const *)argv, (size_t)n, &why))
			fail_msg("taken: '%s'", bad[i]);
		assert_non_null(why);
		free(line);
	}
}

static void test_compiler_names(void **state)
{
	static const char *const yes[] = { "cc", "gcc", "g++", "c++", "c89", "c99", "clang",
					   "clang++", "gcc-12", "x86_64-linux-gnu-gcc-12",
					   "x86_64-linux-gnu-g++", "clang-14", "c99-gcc",
					   "aarch64-linux-gnu-gcc-12.2" };
	static const char *const no[] = { "", "gcc-ar", "gcc-nm-12", "x86_64-linux-gnu-gcc-ranlib",
					  "clang-cpp-14", "gnatgcc", "ld", "python3", "sh",
					  "gcc;rm", "../gcc", "cc1", "-gcc" };
	size_t i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (!cc_compiler_name(yes[i]))
			fail_msg("not a compiler: %s", yes[i]);
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (cc_compiler_name(no[i]))
			fail_msg("a compiler: %s", no[i]);
}

static void test_text_timed(void **state)
{
	static const char *const timed[] = { "__DATE__", "x = __TIME__;", "(__TIMESTAMP__)",
					     "a\n__DATE__" };
	static const char *const plain[] = { "", "__DATE", "X__DATE__", "__DATE__X",
					     "__TIME___", "__date__", "_DATE_" };
	size_t i;

	for (i = 0; i < sizeof(timed) / sizeof(timed[0]); i++)
		assert_true(cc_text_timed(timed[i], strlen(timed[i])));
	for (i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		assert_false(cc_text_timed(plain[i], strlen(plain[i])));
}

static void test_paths(void **state)
{
	struct strvec roots = STRVEC_INIT, shown = STRVEC_INIT;

	assert_true(cc_path_plain("/a/b.c"));
	assert_true(cc_path_plain("/"));
	assert_true(cc_path_plain("/a/.hidden/..x"));
	assert_false(cc_path_plain("a/b"));
	assert_false(cc_path_plain("/a//b"));
	assert_false(cc_path_plain("/a/./b"));
	assert_false(cc_path_plain("/a/../b"));
	assert_false(cc_path_plain("/a/.."));
	assert_false(cc_path_plain("/a/"));
	assert_false(cc_path_plain("/a\nb"));
	assert_true(cc_path_under("/tmp/x", "/tmp"));
	assert_true(cc_path_under("/tmp", "/tmp/"));
	assert_false(cc_path_under("/tmpx", "/tmp"));
	strvec_pushl(&roots, "/tmp", "/home", "/w/work", NULL);
	strvec_push(&shown, "/home/tc");
	assert_true(cc_path_private("/tmp/a.c", &roots, &shown));
	assert_true(cc_path_private("/w/work/workers/w0/tree/x.h", &roots, &shown));
	assert_true(cc_path_private("/home/u/x.h", &roots, &shown));
	assert_false(cc_path_private("/home/tc/include/x.h", &roots, &shown));
	assert_false(cc_path_private("/usr/include/stdio.h", &roots, &shown));
	assert_false(cc_path_private("/w/workers", &roots, &shown));
	strvec_clear(&roots);
	strvec_clear(&shown);
}

/* ---- the wire ---- */

static void fill(struct cc_request *r)
{
	char hex[SHA256_HEXSZ + 1];

	memset(hex, 'a', SHA256_HEXSZ);
	hex[SHA256_HEXSZ] = 0;
	r->compiler = xstrdup("/usr/bin/gcc");
	r->cwd = xstrdup("/tmp/w");
	memcpy(r->text, hex, sizeof(hex));
	strvec_pushl(&r->args, "-O2", "x.c", NULL);
	strvec_push(&r->env, "LANG=C.UTF-8");
	cc_request_add_file(r, hex, "/tmp/w/x.c");
}

static void test_proto_roundtrip(void **state)
{
	struct cc_request in = CC_REQUEST_INIT, out = CC_REQUEST_INIT;
	const char *why = NULL;
	int p[2];

	assert_int_equal(pipe(p), 0);
	fill(&in);
	assert_int_equal(cc_request_write(p[1], &in), 0);
	close(p[1]);
	assert_int_equal(cc_request_read(&out, p[0], &why), 0);
	close(p[0]);
	assert_string_equal(out.compiler, in.compiler);
	assert_string_equal(out.cwd, in.cwd);
	assert_string_equal(out.text, in.text);
	assert_int_equal(out.args.nr, 2);
	assert_string_equal(out.args.v[1], "x.c");
	assert_string_equal(out.env.v[0], "LANG=C.UTF-8");
	assert_int_equal(out.files_nr, 1);
	assert_string_equal(out.files[0].path, "/tmp/w/x.c");
	cc_request_release(&in);
	cc_request_release(&out);
}

/* A request's bytes with one field replaced: tag and value. */
static void forge(struct strbuf *sb, const char *const *fields)
{
	unsigned char num[4];
	size_t i, start;

	strbuf_add(sb, CC_MAGIC, 6);
	start = sb->len;
	strbuf_add(sb, "\0\0\0\0", 4);
	for (i = 0; fields[i]; i++) {
		strbuf_addch(sb, fields[i][0]);
		cc_put_u32(num, (uint32_t)strlen(fields[i] + 1));
		strbuf_add(sb, num, 4);
		strbuf_addstr(sb, fields[i] + 1);
	}
	cc_put_u32((unsigned char *)sb->buf + start, (uint32_t)(sb->len - start - 4));
}

static int read_bytes(const char *data, size_t len)
{
	struct cc_request r = CC_REQUEST_INIT;
	const char *why = NULL;
	int p[2], ret;

	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], data, len), (ssize_t)len);
	close(p[1]);
	ret = cc_request_read(&r, p[0], &why);
	if (ret < 0)
		assert_non_null(why);
	close(p[0]);
	cc_request_release(&r);
	return ret;
}

static void test_proto_malformed(void **state)
{
	const char *ok[] = { "P/usr/bin/gcc", "D/tmp/w", "H" "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
			     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "Ax.c", NULL };
	const char *const *bad[] = {
		(const char *[]){ "Pgcc", "D/tmp/w", ok[2], NULL },          /* relative */
		(const char *[]){ "P/usr/bin/gcc", "D/tmp/../w", ok[2], NULL },
		(const char *[]){ "P/usr/bin/gcc", "D/tmp/w", "Hxyz", NULL },
		(const char *[]){ "D/tmp/w", "P/usr/bin/gcc", ok[2], NULL },  /* order */
		(const char *[]){ ok[0], ok[1], ok[2], "Eevil=1", NULL },
		(const char *[]){ ok[0], ok[1], ok[2], "ELANG=a b", NULL },
		(const char *[]){ ok[0], ok[1], ok[2], "Fnot-a-hash /tmp/x", NULL },
		(const char *[]){ ok[0], ok[1], ok[2], "F" "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
				  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa x.c", NULL },
		(const char *[]){ ok[0], ok[1], ok[2], "ELANG=C", "Ax.c", NULL }, /* A after E */
		(const char *[]){ ok[0], ok[1], NULL },
		(const char *[]){ ok[0], ok[1], ok[2], "Z?", NULL },
	};
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	forge(&sb, ok);
	assert_int_equal(read_bytes(sb.buf, sb.len), 0);
	/* cut anywhere: an error, never a hang or a read past the end */
	for (i = 0; i < sb.len; i++)
		assert_int_equal(read_bytes(sb.buf, i), -1);
	/* a NUL inside a field */
	sb.buf[20] = 0;
	assert_int_equal(read_bytes(sb.buf, sb.len), -1);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		strbuf_reset(&sb);
		forge(&sb, bad[i]);
		if (read_bytes(sb.buf, sb.len) != -1)
			fail_msg("forged request %zu read", i);
	}
	/* a header length past the cap, and a field length past the header */
	strbuf_reset(&sb);
	strbuf_add(&sb, CC_MAGIC, 6);
	strbuf_add(&sb, "\xff\xff\xff\xff", 4);
	assert_int_equal(read_bytes(sb.buf, sb.len), -1);
	strbuf_reset(&sb);
	forge(&sb, ok);
	sb.buf[12] = 0x7f;  /* the first field's length */
	assert_int_equal(read_bytes(sb.buf, sb.len), -1);
	strbuf_release(&sb);
}

/*
 * Direct mode's wire: a direct request reads back as one; one that names files (a
 * shim offering what a manifest would say) is refused: no request writes a manifest.
 */
static void test_proto_direct(void **state)
{
	struct cc_request in = CC_REQUEST_INIT, out = CC_REQUEST_INIT;
	const char *why = NULL;
	int p[2];

	(void)state;
	fill(&in);
	in.direct = 1;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(cc_request_write(p[1], &in), 0);
	close(p[1]);
	assert_int_equal(cc_request_read(&out, p[0], &why), -1);
	assert_string_equal(why, "a direct request names no files");
	close(p[0]);
	cc_request_release(&out);
	out = (struct cc_request)CC_REQUEST_INIT;
	free(in.files[0].path);
	in.files_nr = 0;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(cc_request_write(p[1], &in), 0);
	close(p[1]);
	assert_int_equal(cc_request_read(&out, p[0], &why), 0);
	close(p[0]);
	assert_true(out.direct);
	assert_string_equal(out.text, in.text);
	assert_int_equal(out.args.nr, 2);
	cc_request_release(&in);
	cc_request_release(&out);
}

struct names {
	struct strvec v;
};

static int note_name(void *data, int kind, const char *name)
{
	struct names *n = data;

	strvec_pushf(&n->v, "%c%s", kind & CC_INCLUDE_NEXT ? 'n' :
				    kind & CC_INCLUDE_QUOTE ? 'q' : 'b', name);
	return 0;
}

static const char *names_of(struct names *n, const char *text)
{
	static char buf[512];
	size_t i;

	strvec_clear(&n->v);
	if (cc_include_names(text, strlen(text), note_name, n) < 0)
		return "refused";
	buf[0] = 0;
	for (i = 0; i < n->v.nr; i++)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s", i ? " " : "",
			 n->v.v[i]);
	return buf;
}

/*
 * The service reads every include directive of a file it lists (the places before
 * what each found must stay empty): never fewer than the compiler runs, and when
 * unsure, no manifest.
 */
static void test_include_names(void **state)
{
	struct names n = { STRVEC_INIT };
	struct cc_search sd = CC_SEARCH_INIT;

	(void)state;
	assert_string_equal(names_of(&n, "#include \"a.h\"\n  #  include <b/c.h>\n"
				      "#if 0\n#include_next <d.h>\n#endif\n#import \"e.h\"\n"),
			    "qa.h bb/c.h nd.h qe.h");
	/* comments, continued lines, digraphs: still found */
	assert_string_equal(names_of(&n, "/* x */ # /* y */ include \"a.h\"\n#inc\\\nlude <b.h>\n"
				      "%:include \"c.h\"\nint x; /* a\n#include \"no.h\" */\n"
				      "/* z\n */ #include \"d.h\"\n"),
			    "qa.h bb.h qc.h qd.h");
	/* a string or a comment is not a directive, nor a '#' inside a line */
	assert_string_equal(names_of(&n, "char *s = \"/*\";\n#include \"a.h\"\n"
				      "x # include \"b.h\"\n// #include \"c.h\"\n"),
			    "qa.h");
	/* what the service cannot read for sure: no manifest */
	assert_string_equal(names_of(&n, "#define H \"a.h\"\n#include H\n"), "refused");
	assert_string_equal(names_of(&n, "#line 10 \"other.c\"\n"), "refused");
	assert_string_equal(names_of(&n, "# 1 \"other.h\" 1\n"), "refused");
	assert_string_equal(names_of(&n, "const char *r = R\"(\n#include \"a.h\"\n)\";\n"),
			    "refused");
	assert_string_equal(names_of(&n, "#include /* a comment\n that goes on */ \"a.h\"\n"),
			    "refused");
	strvec_clear(&n.v);

	/* the search list as gcc -v says it, before any message of the source's */
	assert_int_equal(cc_search_dirs(&sd, "gcc version 12\n"
					     "ignoring nonexistent directory \"/usr/local/x\"\n"
					     "#include \"...\" search starts here:\n q\n"
					     "#include <...> search starts here:\n"
					     " inc\n /usr/include\n"
					     "End of search list.\n"
					     "#include <...> search starts here:\n evil\n"
					     "End of search list.\n"), 0);
	assert_int_equal(sd.quote.nr, 1);
	assert_string_equal(sd.quote.v[0], "q");
	assert_int_equal(sd.bracket.nr, 2);
	assert_string_equal(sd.bracket.v[0], "inc");
	assert_int_equal(sd.ignored.nr, 1);
	assert_string_equal(sd.ignored.v[0], "/usr/local/x");
	cc_search_release(&sd);
	assert_int_equal(cc_search_dirs(&sd, "no list\n"), -1);
	cc_search_release(&sd);
}

/* A manifest holds when every file is the same and nothing is where it must not be. */
static void test_manifest_usable(void **state)
{
	char *a = xstrfmt("%s/a.h", tmpdir), *b = xstrfmt("%s/sub/a.h", tmpdir);
	char hex[SHA256_HEXSZ + 1];
	struct strbuf text = STRBUF_INIT;
	struct cc_manifest m = CC_MANIFEST_INIT, two = CC_MANIFEST_INIT;
	const char *why, *next;

	(void)state;
	write_file(a, "int a;\n", 7);
	hex_of(hex, "int a;\n", 7, 64);
	strbuf_addf(&text, "K %s\nT %s\nF %s %s\nC %s\nK %s\nT %s\nF %s %s\n", hex, hex, hex,
		    a, b, hex, hex, hex, b);
	next = cc_manifest_parse(&m, text.buf);
	assert_int_equal(m.paths.nr, 1);
	assert_int_equal(m.absent.nr, 1);
	assert_true(cc_manifest_usable(&m, &why));
	cc_manifest_parse(&two, next);
	assert_string_equal(two.paths.v[0], b);
	assert_false(cc_manifest_usable(&two, &why));       /* b is not there */
	/* a file changed */
	write_file(a, "int b;\n", 7);
	assert_false(cc_manifest_usable(&m, &why));
	assert_string_equal(why, "a file it lists is not the same here");
	write_file(a, "int a;\n", 7);
	/* a file where none must be */
	{
		char *sub = xstrfmt("%s/sub", tmpdir);

		assert_int_equal(file_mkdir_p(sub, 0755), 0);
		free(sub);
	}
	write_file(b, "", 0);
	assert_false(cc_manifest_usable(&m, &why));
	assert_string_equal(why, "a header it does not list would now be found first");
	unlink(b);
	assert_true(cc_manifest_usable(&m, &why));
	cc_manifest_release(&m);
	cc_manifest_release(&two);
	strbuf_release(&text);
	free(a);
	free(b);
}

/* ---- the store ---- */

static int object_fd(const char *dir, const char *name, size_t size)
{
	char *path = xstrfmt("%s/%s", dir, name), *data = xmalloc(size);
	int fd;

	memset(data, name[0], size);
	write_file(path, data, size);
	fd = open(path, O_RDONLY);
	free(path);
	free(data);
	return fd;
}

static void key_of(char key[SHA256_HEXSZ + 1], int n)
{
	char s[16];

	snprintf(s, sizeof(s), "k%d", n);
	hex_of(key, s, strlen(s), 64);
}

/* Bytes of the entries under <dir>/v1, as the disk holds them. */
static long long store_files_bytes(const char *dir)
{
	char *cmd = xstrfmt("find '%s/v1' -type f -printf '%%s\\n' | "
			    "awk '{s += $1} END {print s + 0}'", dir);
	FILE *p = popen(cmd, "r");
	long long n = -1;

	assert_non_null(p);
	assert_int_equal(fscanf(p, "%lld", &n), 1);
	pclose(p);
	free(cmd);
	return n;
}

/* The disk's floor: a store gives way to it, first the least recently used. */
static void test_store_disk_floor(void **state)
{
	char *dir = xstrfmt("%s/floor", tmpdir), key[SHA256_HEXSZ + 1];
	const long long never = 1LL << 60;  /* no disk has this free */
	struct cc_store *s;
	uint32_t elen;
	uint64_t olen;
	int fd, i;

	(void)state;
	assert_int_equal(cc_store_open(&s, dir, 1 << 20, 0), 0);
	for (i = 0; i < 3; i++) {
		key_of(key, 200 + i);
		fd = object_fd(tmpdir, "f", 3000);
		assert_int_equal(cc_store_put(s, key, "", 0, fd, 3000), 0);
		close(fd);
	}
	cc_store_free(s);
	/* room enough: nothing goes */
	assert_int_equal(cc_store_give_way(dir, 0), 0);
	assert_int_equal(store_files_bytes(dir), 3 * 3020);
	/* a floor no disk reaches: every entry goes, and is counted */
	assert_int_equal(cc_store_give_way(dir, never), 3 * 3020);
	assert_int_equal(store_files_bytes(dir), 0);
	/* a service whose disk is below its floor keeps nothing, and says nothing wrong */
	assert_int_equal(cc_store_open(&s, dir, 1 << 20, never), 0);
	key_of(key, 210);
	fd = object_fd(tmpdir, "g", 3000);
	assert_int_equal(cc_store_put(s, key, "", 0, fd, 3000), 0);
	close(fd);
	assert_int_equal(cc_store_get(s, key, &fd, &elen, &olen), 0);
	assert_int_equal(store_files_bytes(dir), 0);
	cc_store_free(s);
	free(dir);
}

static void test_store(void **state)
{
	char *dir = xstrfmt("%s/store", tmpdir), key[SHA256_HEXSZ + 1], err[8];
	struct cc_store *s;
	uint32_t elen;
	uint64_t olen;
	int fd, got, i;

	assert_int_equal(cc_store_open(&s, dir, 10000, 0), 0);
	key_of(key, 0);
	assert_int_equal(cc_store_get(s, key, &fd, &elen, &olen), 0);
	fd = object_fd(tmpdir, "a", 1000);
	assert_int_equal(cc_store_put(s, key, "warn\n", 5, fd, 1000), 0);
	close(fd);
	got = cc_store_get(s, key, &fd, &elen, &olen);
	assert_int_equal(got, 1);
	assert_int_equal(elen, 5);
	assert_int_equal(olen, 1000);
	assert_int_equal(read(fd, err, 5), 5);
	assert_memory_equal(err, "warn\n", 5);
	close(fd);
	/* the cap: 2,000 bytes each, at most 10,000 held; the least recently used go */
	for (i = 1; i <= 12; i++) {
		key_of(key, i);
		fd = object_fd(tmpdir, "b", 2000);
		assert_int_equal(cc_store_put(s, key, "", 0, fd, 2000), 0);
		close(fd);
		assert_true(cc_store_bytes(s) <= 10000);
		assert_true(store_files_bytes(dir) <= 10000);
		/* file times tick coarsely (a jiffy): without a pause, two puts can share
		 * an mtime and their order of removal is a coin toss (CI saw it) */
		usleep(30 * 1000);
		if (i == 6) {
			/* entry 3 used now: it outlives 4 and 5 */
			key_of(key, 3);
			sleep(1);
			assert_int_equal(cc_store_get(s, key, &fd, &elen, &olen), 1);
			close(fd);
		}
	}
	key_of(key, 12);
	assert_int_equal(cc_store_get(s, key, &fd, &elen, &olen), 1);
	close(fd);
	key_of(key, 1);
	assert_int_equal(cc_store_get(s, key, &fd, &elen, &olen), 0);
	/* bigger than the whole store: not kept */
	key_of(key, 99);
	fd = object_fd(tmpdir, "c", 20000);
	assert_int_equal(cc_store_put(s, key, "", 0, fd, 20000), 0);
	close(fd);
	assert_int_equal(cc_store_get(s, key, &fd, &elen, &olen), 0);
	cc_store_free(s);
	/* a damaged entry (a crash while it was written) is no entry, and goes */
	{
		char *path;

		key_of(key, 12);
		path = xstrfmt("%s/v1/%.2s/%s", dir, key, key + 2);
		assert_int_equal(truncate(path, 100), 0);
		assert_int_equal(cc_store_open(&s, dir, 10000, 0), 0);
		assert_int_equal(cc_store_get(s, key, &fd, &elen, &olen), 0);
		assert_false(file_exists(path));
		cc_store_free(s);
		free(path);
	}
	/* a folder someone else could write in is no store */
	if (!geteuid()) {
		char *theirs = xstrfmt("%s/theirs", tmpdir);

		assert_int_equal(mkdir(theirs, 0700), 0);
		assert_int_equal(chown(theirs, 65534, 65534), 0);
		assert_int_equal(cc_store_open(&s, theirs, 10000, 0), NB_ERROR);
		assert_non_null(strstr(nb_error_last(), "not a folder of nextbot's own"));
		free(theirs);
	}
	free(dir);
}

/* ---- the service, against a client nobody vouches for ---- */

static volatile sig_atomic_t stop_serving;

struct served {
	int fd;
	struct cc_serve_opts o;
	struct cc_stats st;
	int ret;
};

static void *serve_thread(void *arg)
{
	struct served *s = arg;

	s->ret = cc_serve_run(&s->st, s->fd, &s->o);
	return NULL;
}

/* Sends `r` (with the bytes of `files` if asked) and returns the answer's tag. */
static char ask(const char *sock, const struct cc_request *r, const char *const *files)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	char tag = 0;
	size_t i;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(cc_request_write(fd, r), 0);
	do {
		if (read(fd, &tag, 1) != 1)
			tag = 0;
	} while (tag == CC_R_ALIVE);
	if (tag == CC_R_NEED) {
		for (i = 0; i < r->files_nr; i++) {
			unsigned char num[8];

			cc_put_u64(num, strlen(files[i]));
			if (write(fd, num, 8) != 8 ||
			    write(fd, files[i], strlen(files[i])) != (ssize_t)strlen(files[i]))
				break;
		}
		do {
			if (read(fd, &tag, 1) != 1)
				tag = 0;
		} while (tag == CC_R_ALIVE);
	}
	close(fd);
	return tag;
}

static void test_serve_refuses_forgeries(void **state)
{
	char *sock = xstrfmt("%s/sock", tmpdir), *store = xstrfmt("%s/store", tmpdir);
	char *jobs = xstrfmt("%s/jobs", tmpdir), *work = xstrfmt("%s/work", tmpdir);
	char *src = xstrfmt("%s/x.c", work), *fake = xstrfmt("%s/gcc", tmpdir);
	const char *hide[] = { work, store, NULL };
	static const char good[] = "int answer(void) { return 42; }\n";
	static const char evil[] = "int answer(void) { return 41; }\n";
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct served sv = { .o = { .store = store, .jobs = jobs, .max = 1 << 20,
				    .bwrap = "/usr/bin/bwrap", .hide = hide,
				    .stopping = &stop_serving } };
	struct cc_request r = CC_REQUEST_INIT;
	char hex[SHA256_HEXSZ + 1];
	const char *files[] = { evil, NULL };
	pthread_t tid;

	if (access("/usr/bin/bwrap", X_OK) || access("/usr/bin/gcc", X_OK))
		skip();
	assert_int_equal(file_mkdir_p(work, 0755), 0);
	write_file(src, good, strlen(good));
	write_file(fake, "#!/bin/sh\n", 10);
	chmod(fake, 0755);
	sv.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	assert_int_equal(bind(sv.fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(sv.fd, 16), 0);
	stop_serving = 0;
	assert_int_equal(pthread_create(&tid, NULL, serve_thread, &sv), 0);

	/*
	 * The shape of an honest request for work/x.c, with the text of the evil
	 * version (so that only the file's hash stands between it and the store): it
	 * names the good file and sends the evil one.
	 */
	r.compiler = xstrdup("/usr/bin/gcc");
	r.cwd = xstrdup(work);
	{
		const char *argv[] = { "gcc", "-O2", "x.c", "-E", "-fdirectives-only", NULL };
		struct strbuf t = STRBUF_INIT;

		write_file(src, evil, strlen(evil));
		assert_int_equal(runcmd_capture(&t, work, argv), 0);
		hex_of(r.text, t.buf, t.len, 64);
		write_file(src, good, strlen(good));
		strbuf_release(&t);
	}
	strvec_pushl(&r.args, "-O2", "x.c", NULL);
	hex_of(hex, good, strlen(good), 64);
	cc_request_add_file(&r, hex, src);

	/* a file that is not the one its hash names: refused, nothing stored */
	assert_int_equal(ask(sock, &r, files), CC_R_FALLBACK);
	/* a compiler in a folder others may write, and a program that is no compiler */
	free(r.compiler);
	r.compiler = xstrdup(fake);
	assert_int_equal(ask(sock, &r, files), CC_R_FALLBACK);
	free(r.compiler);
	r.compiler = xstrdup("/usr/bin/python3");
	assert_int_equal(ask(sock, &r, files), CC_R_FALLBACK);
	free(r.compiler);
	r.compiler = xstrdup("/usr/bin/gcc");
	/* an option that would load code or write elsewhere */
	strvec_push(&r.args, "-fplugin=/usr/lib/evil.so");
	assert_int_equal(ask(sock, &r, files), CC_R_FALLBACK);
	strvec_clear(&r.args);
	strvec_pushl(&r.args, "-O2", "x.c", NULL);
	/* a working directory, or a file, in the system every box shares */
	free(r.cwd);
	r.cwd = xstrdup("/usr/lib");
	assert_int_equal(ask(sock, &r, files), CC_R_FALLBACK);
	free(r.cwd);
	r.cwd = xstrdup(work);
	cc_request_add_file(&r, hex, "/usr/include/stdio.h");
	assert_int_equal(ask(sock, &r, files), CC_R_FALLBACK);
	r.files_nr--;
	free(r.files[r.files_nr].path);

	stop_serving = 1;
	pthread_join(tid, NULL);
	assert_int_equal(sv.ret, 0);
	assert_int_equal(sv.st.hits + sv.st.compiled, 0);
	assert_int_equal(sv.st.requests, 6);
	assert_int_equal(sv.st.bytes, 0);
	cc_request_release(&r);
	free(sock);
	free(store);
	free(jobs);
	free(work);
	free(src);
	free(fake);
}

#define TT(f) cmocka_unit_test_setup_teardown(f, setup_tmp, teardown_tmp)

int main(void)
{
	const struct CMUnitTest tests[] = {
		TT(test_sha256_oracle),
		cmocka_unit_test(test_args_cacheable),
		cmocka_unit_test(test_args_not_cacheable),
		cmocka_unit_test(test_args_check_send),
		cmocka_unit_test(test_compiler_names),
		cmocka_unit_test(test_text_timed),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_proto_roundtrip),
		cmocka_unit_test(test_proto_malformed),
		cmocka_unit_test(test_proto_direct),
		cmocka_unit_test(test_include_names),
		TT(test_manifest_usable),
		TT(test_store),
		TT(test_store_disk_floor),
		TT(test_serve_refuses_forgeries),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name("cc", tests, NULL, NULL);
}
