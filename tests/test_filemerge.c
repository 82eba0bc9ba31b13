/* merge/git/linediff.c and filemerge.c against git: diffs, and merges with markers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "merge/git/filemerge_int.h"
#include "merge/git/linediff_int.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "tests/gitfixture.h"
#include "util/banned.h"

#define CASES 300

static char top[] = "/tmp/nb-filemerge.XXXXXX";

static const char *const vocab[] = {
	"int x;", "}", "{", "", "return 0;", "x++;", "if (x) {", "\tfoo();", "/* c */",
};

/* base, ours, theirs of each case */
static struct strbuf cases[CASES][3];

/* Random text: lines from a small vocabulary (so that they repeat) and unique ones. */
static void gen_lines(struct strbuf *sb, unsigned *seed, int n, int nvocab, int *uniq)
{
	int i;

	for (i = 0; i < n; i++) {
		if (rand_r(seed) % 3)
			strbuf_addstr(sb, vocab[rand_r(seed) % (unsigned)nvocab]);
		else
			strbuf_addf(sb, "u%d", (*uniq)++);
		strbuf_addch(sb, '\n');
	}
}

/* A few edits of `in`'s lines: deletions, insertions, replacements. */
static void mutate(struct strbuf *out, const struct strbuf *in, unsigned *seed, int *uniq)
{
	struct linediff_classifier *c = linediff_classifier_new();
	struct linediff_text t = LINEDIFF_TEXT_INIT;
	int edits = 1 + rand_r(seed) % 5;
	size_t i;

	linediff_text_init(&t, c, in->buf, in->len);
	for (i = 0; i <= t.nr; i++) {
		int op = rand_r(seed) % 18;

		if (edits && op < 3) {
			edits--;
			if (op == 0) {          /* delete the line */
				continue;
			} else if (op == 1) {   /* insert one */
				strbuf_addf(out, "e%d\n", (*uniq)++);
			} else if (i < t.nr) {  /* replace it */
				strbuf_addstr(out, vocab[rand_r(seed) % 9]);
				strbuf_addch(out, '\n');
				continue;
			}
		}
		if (i < t.nr)
			strbuf_add(out, t.buf + t.start[i], linediff_line_len(&t, i));
	}
	linediff_text_release(&t);
	linediff_classifier_free(c);
}

/* CRLF line ends, and now and then no last newline. */
static void style(struct strbuf *sb, unsigned *seed, int crlf)
{
	struct strbuf out = STRBUF_INIT;
	size_t i;

	for (i = 0; i < sb->len; i++) {
		if (crlf && sb->buf[i] == '\n')
			strbuf_addch(&out, '\r');
		strbuf_addch(&out, sb->buf[i]);
	}
	if (out.len && rand_r(seed) % 5 == 0)
		strbuf_setlen(&out, out.len - (crlf ? 2 : 1));
	strbuf_release(sb);
	*sb = out;
}

static void generate(void)
{
	unsigned seed = 4242;
	int i, k, uniq = 0;

	for (i = 0; i < CASES; i++) {
		int crlf = rand_r(&seed) % 8 == 0, nvocab = 2 + rand_r(&seed) % 8;

		for (k = 0; k < 3; k++)
			strbuf_init(&cases[i][k], 0);
		gen_lines(&cases[i][0], &seed, 3 + rand_r(&seed) % 60, nvocab, &uniq);
		mutate(&cases[i][1], &cases[i][0], &seed, &uniq);
		mutate(&cases[i][2], &cases[i][0], &seed, &uniq);
		for (k = 0; k < 3; k++)
			style(&cases[i][k], &seed, crlf);
	}
}

static void write_file(const char *name, const struct strbuf *sb)
{
	char *path = xstrfmt("%s/%s", top, name);
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(sb->buf, 1, sb->len, f), sb->len);
	fclose(f);
	free(path);
}

/* The cases as a fast-import stream: per case a base commit and two children. */
static void import_stream(struct strbuf *fi, struct strbuf *pairs)
{
	int i, k, mark = 1;

	for (i = 0; i < CASES; i++) {
		static const char *const ref[] = { "b", "o", "t" };
		int blob[3], base = 0;

		for (k = 0; k < 3; k++) {
			blob[k] = mark++;
			strbuf_addf(fi, "blob\nmark :%d\ndata %zu\n", blob[k], cases[i][k].len);
			strbuf_add(fi, cases[i][k].buf, cases[i][k].len);
			strbuf_addch(fi, '\n');
		}
		for (k = 0; k < 3; k++) {
			strbuf_addf(fi, "commit refs/heads/%s%d\nmark :%d\ncommitter t <t@e> "
				    "1000000000 +0000\ndata 1\nc\n", ref[k], i, mark);
			if (k)
				strbuf_addf(fi, "from :%d\n", base);
			else
				base = mark;
			strbuf_addf(fi, "M 100644 :%d f\n\n", blob[k]);
			mark++;
		}
		strbuf_addf(pairs, "o%d t%d\n", i, i);
	}
}

static int sh_out(struct strbuf *out, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = fixture_vsh_out(out, top, NULL, fmt, ap);
	va_end(ap);
	return rc;
}

/* The blob `f` of each merged tree, as `git cat-file --batch` prints them. */
static void merged_files(struct strbuf files[CASES], const char trees[CASES][41])
{
	struct strbuf req = STRBUF_INIT, out = STRBUF_INIT;
	const char *p, *end;
	int i;

	for (i = 0; i < CASES; i++)
		strbuf_addf(&req, "%s:f\n", trees[i]);
	write_file("req", &req);
	assert_int_equal(sh_out(&out, "git -C m.git cat-file --batch <req"), 0);
	p = out.buf;
	end = out.buf + out.len;
	for (i = 0; i < CASES; i++) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		unsigned long size;

		assert_non_null(nl);
		assert_int_equal(sscanf(p, "%*40s blob %lu", &size), 1);
		strbuf_init(&files[i], 0);
		strbuf_add(&files[i], nl + 1, size);
		p = nl + 1 + size + 1;
	}
	strbuf_release(&req);
	strbuf_release(&out);
}

/*
 * Three-way merges of random texts, each against `git merge-tree` over a file `f`
 * both sides changed: the same merged bytes (markers labelled with the branch names,
 * as git writes them) and the same verdict, clean or conflict.
 */
static void test_merges_like_git(void **state)
{
	struct strbuf fi = STRBUF_INIT, pairs = STRBUF_INIT, out = STRBUF_INIT;
	struct strbuf files[CASES];
	char trees[CASES][41];
	int clean[CASES], i, conflicts = 0;
	const char *p, *end;

	generate();
	import_stream(&fi, &pairs);
	write_file("m.fi", &fi);
	write_file("pairs", &pairs);
	assert_int_equal(sh_out(&out, "git init -q --bare m.git && git -C m.git fast-import "
				"--quiet <m.fi && git -C m.git merge-tree --write-tree --stdin "
				"--name-only --no-messages <pairs"), 0);
	p = out.buf;
	end = out.buf + out.len;
	for (i = 0; i < CASES; i++) {
		assert_true(p < end);
		clean[i] = *p == '1';
		p += strlen(p) + 1;
		snprintf(trees[i], sizeof(trees[i]), "%s", p);
		p += strlen(p) + 1;
		while (p < end && *p)
			p += strlen(p) + 1;
		p++;
	}
	merged_files(files, trees);
	for (i = 0; i < CASES; i++) {
		struct strbuf mine = STRBUF_INIT;
		char *l1 = xstrfmt("o%d", i), *l2 = xstrfmt("t%d", i);
		struct filemerge_options fo = { l1, l2, 7 };
		const struct filemerge_buf base = { cases[i][0].buf, cases[i][0].len };
		const struct filemerge_buf ours = { cases[i][1].buf, cases[i][1].len };
		const struct filemerge_buf theirs = { cases[i][2].buf, cases[i][2].len };
		int n = filemerge_texts(&mine, &base, &ours, &theirs, &fo);

		assert_true(n >= 0);
		if ((n == 0) != clean[i] || mine.len != files[i].len ||
		    memcmp(mine.buf, files[i].buf, mine.len))
			print_error("case %d differs from git's (%s)\n", i, trees[i]);
		assert_int_equal(n == 0, clean[i]);
		assert_int_equal(mine.len, files[i].len);
		assert_memory_equal(mine.buf, files[i].buf, mine.len);
		conflicts += n > 0;
		strbuf_release(&mine);
		strbuf_release(&files[i]);
		free(l1);
		free(l2);
	}
	print_message("%d merges, %d with conflicts\n", CASES, conflicts);
	assert_true(conflicts > CASES / 5 && conflicts < CASES * 4 / 5);
	strbuf_release(&fi);
	strbuf_release(&pairs);
	strbuf_release(&out);
}

/* `git diff -U0`'s hunk headers as changes ("@@ -a,n +b,m @@"; a missing count is 1). */
static void git_changes(struct linediff_script *out, const char *alg)
{
	struct strbuf diff = STRBUF_INIT;
	const char *p;

	out->nr = 0;
	sh_out(&diff, "git diff --no-index --no-ext-diff --no-color --%s --no-indent-heuristic "
	       "-U0 a b", alg);
	for (p = diff.buf; (p = strstr(p, "\n@@ -")); p++) {
		long a, n = 1, b, m = 1;
		const char *q = p + 5;
		char *e;

		a = strtol(q, &e, 10);
		if (*e == ',')
			n = strtol(e + 1, &e, 10);
		b = strtol(e + 2, &e, 10);
		if (*e == ',')
			m = strtol(e + 1, &e, 10);
		ALLOC_GROW(out->v, out->nr + 1, out->alloc);
		out->v[out->nr++] = (struct linediff_change){ n ? a - 1 : a, m ? b - 1 : b, n, m };
	}
	strbuf_release(&diff);
}

/* The diffs themselves: histogram and Myers hunks as `git diff` finds them. */
static void test_diffs_like_git(void **state)
{
	int i, k;

	if (!cases[0][0].alloc)
		generate();
	for (i = 0; i < 60; i++) {
		const struct strbuf *a = &cases[i][0], *b = &cases[i][1 + i % 2];

		write_file("a", a);
		write_file("b", b);
		for (k = 0; k < 2; k++) {
			struct linediff_classifier *c = linediff_classifier_new();
			struct linediff_text ta = LINEDIFF_TEXT_INIT, tb = LINEDIFF_TEXT_INIT;
			struct linediff_script mine = LINEDIFF_SCRIPT_INIT;
			struct linediff_script git = LINEDIFF_SCRIPT_INIT;
			struct linediff_range ra = { &ta, 0, 0 }, rb = { &tb, 0, 0 };
			size_t j;

			linediff_text_init(&ta, c, a->buf, a->len);
			linediff_text_init(&tb, c, b->buf, b->len);
			ra.nr = ta.nr;
			rb.nr = tb.nr;
			assert_int_equal(linediff_diff(&mine, &ra, &rb,
						       k ? LINEDIFF_MYERS : LINEDIFF_HISTOGRAM), 0);
			git_changes(&git, k ? "diff-algorithm=myers" : "histogram");
			assert_int_equal(mine.nr, git.nr);
			for (j = 0; j < mine.nr; j++) {
				assert_int_equal(mine.v[j].a, git.v[j].a);
				assert_int_equal(mine.v[j].a_nr, git.v[j].a_nr);
				assert_int_equal(mine.v[j].b, git.v[j].b);
				assert_int_equal(mine.v[j].b_nr, git.v[j].b_nr);
			}
			linediff_script_release(&mine);
			linediff_script_release(&git);
			linediff_text_release(&ta);
			linediff_text_release(&tb);
			linediff_classifier_free(c);
		}
	}
}

static int setup_all(void **state)
{
	if (!mkdtemp(top))
		return -1;
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("HOME", top, 1);
	return 0;
}

static int teardown_all(void **state)
{
	int i, k;

	if (!getenv("KEEP"))
		fixture_sys_free(xstrfmt("rm -rf '%s'", top));
	for (i = 0; i < CASES; i++)
		for (k = 0; k < 3; k++)
			strbuf_release(&cases[i][k]);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merges_like_git),
		cmocka_unit_test(test_diffs_like_git),
	};

	return cmocka_run_group_tests_name("filemerge", tests, setup_all, teardown_all);
}
