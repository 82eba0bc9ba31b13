/*
 * Unit tests of the people room (bot/people/) and util/mailmap.c: MAINTAINERS
 * routing against the real get_maintainer.pl's answers (the .expected files of tests/people/),
 * .mailmap against `git check-mailmap`, and hostile MAINTAINERS files.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "bot/config/config.h"
#include "bot/people/people.h"
#include "merge/repo/repo.h"
#include "tests/gitfixture.h"
#include "util/error.h"
#include "util/mailmap.h"
#include "util/strbuf.h"
#include "util/strvec.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define ALL_ROLES { .roles = { 1, 1, 1 }, .max = 0 }

/* A fresh temporary folder (caller frees the name and removes the folder). */
static char *temp_dir(void)
{
	char *dir = xstrdup("/tmp/nextbot-test-people.XXXXXX");

	assert_non_null(mkdtemp(dir));
	return dir;
}

static void read_file(struct strbuf *out, const char *path)
{
	if (strbuf_read_file(out, path, 0) < 0)
		fail_msg("cannot read %s", path);
}

static void split_lines(struct strvec *out, const char *text)
{
	const char *p = text;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		if (n)
			strvec_push_nodup(out, xstrndup(p, n));
		p += n + (nl != NULL);
	}
}

/* The people of a fixture: tests/people/NAME.{MAINTAINERS,mailmap,files}. */
static struct people *fixture_people(const char *name)
{
	struct strbuf m = STRBUF_INIT, mm = STRBUF_INIT, f = STRBUF_INIT;
	struct strvec files = STRVEC_INIT;
	struct people_source src = { .path = "MAINTAINERS" };
	struct people *p;
	char *path;

	path = xstrfmt("tests/people/%s.MAINTAINERS", name);
	read_file(&m, path);
	free(path);
	path = xstrfmt("tests/people/%s.mailmap", name);
	if (strbuf_read_file(&mm, path, 0) == 0) {
		src.mailmap = mm.buf;
		src.mailmap_len = mm.len;
	}
	free(path);
	path = xstrfmt("tests/people/%s.files", name);
	read_file(&f, path);
	free(path);
	split_lines(&files, f.buf);
	src.text = m.buf;
	src.len = m.len;
	src.files = &files;
	p = people_new(&src);
	strbuf_release(&m);
	strbuf_release(&mm);
	strbuf_release(&f);
	strvec_clear(&files);
	return p;
}

/* The address of one line get_maintainer.pl printed: "Name <a>", "\"N\" <a>" or "a". */
static char *printed_address(const char *line)
{
	const char *lt = strchr(line, '<'), *gt = lt ? strchr(lt, '>') : NULL;

	return lt && gt ? xstrndup(lt + 1, (size_t)(gt - lt - 1)) : xstrdup(line);
}

static int cmp_strp(const void *a, const void *b)
{
	return strcasecmp(*(char *const *)a, *(char *const *)b);
}

static void sort_vec(struct strvec *v)
{
	qsort(v->v, v->nr, sizeof(*v->v), cmp_strp);
}

/*
 * Compares one routing of `paths` (and the patch's changed `lines`, for K:) to what
 * the script printed; 1 when they differ.
 */
static int check_route(const struct people *p, const char *label, const struct strvec *paths,
		       const struct strvec *lines, const struct strvec *want)
{
	struct strvec got = STRVEC_INIT, exp = STRVEC_INIT;
	struct people_route_opts o = ALL_ROLES;
	struct people_route r;
	size_t i;
	int bad = 0;

	o.lines = (const char *const *)lines->v;
	o.lines_nr = lines->nr;
	people_route(&r, p, (const char *const *)paths->v, paths->nr, &o);
	for (i = 0; i < r.nr; i++)
		strvec_push(&got, r.v[i].email);
	for (i = 0; i < want->nr; i++)
		strvec_push_nodup(&exp, printed_address(want->v[i]));
	sort_vec(&got);
	sort_vec(&exp);
	bad = got.nr != exp.nr;
	for (i = 0; !bad && i < got.nr; i++)
		bad = strcasecmp(got.v[i], exp.v[i]) != 0;
	if (bad) {
		print_message("case '%s':\n  get_maintainer.pl:", label);
		for (i = 0; i < exp.nr; i++)
			print_message(" %s", exp.v[i]);
		print_message("\n  nextbot:          ");
		for (i = 0; i < got.nr; i++)
			print_message(" %s", got.v[i]);
		print_message("\n");
	}
	people_route_release(&r);
	strvec_clear(&got);
	strvec_clear(&exp);
	return bad;
}

/* Compares one case of paths (no patch: K: matches nothing). */
static int check_case(const struct people *p, const char *paths_line, const struct strvec *want)
{
	struct strvec paths = STRVEC_INIT, lines = STRVEC_INIT;
	char *copy = xstrdup(paths_line), *tok, *save = NULL;
	int bad;

	for (tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		strvec_push(&paths, tok);
	bad = check_route(p, paths_line, &paths, &lines, want);
	strvec_clear(&paths);
	free(copy);
	return bad;
}

/*
 * A patch file's paths ("diff --git a/X b/Y": X and Y) and changed lines (the '+'
 * and '-' lines of its hunks, a changed line that looks like a file header
 * included), as activity_commit_lines() gives a commit's.
 */
static void patch_read(struct strvec *paths, struct strvec *lines, const char *path)
{
	struct strbuf text = STRBUF_INIT;
	struct strvec all = STRVEC_INIT;
	size_t i;
	int in_hunk = 0;

	read_file(&text, path);
	split_lines(&all, text.buf);
	for (i = 0; i < all.nr; i++) {
		const char *l = all.v[i], *b = strstr(l, " b/");

		if (!strncmp(l, "diff --git a/", 13) && b) {
			strvec_push_nodup(paths, xstrndup(l + 13, (size_t)(b - l - 13)));
			strvec_push(paths, b + 3);
			in_hunk = 0;
		} else if (!strncmp(l, "@@ ", 3)) {
			in_hunk = 1;
		} else if (in_hunk && (l[0] == '+' || l[0] == '-')) {
			strvec_push(lines, l);
		}
	}
	strvec_clear(&all);
	strbuf_release(&text);
}

/* One case of an .expected file: its "== " line's text, the lines it wants. */
typedef int (*expected_case_fn)(const struct people *p, const char *name, const char *head,
				const struct strvec *want);

/* A patch case: the patch file tests/people/NAME-patches/HEAD, routed by its lines. */
static int patch_case(const struct people *p, const char *name, const char *head,
		      const struct strvec *want)
{
	struct strvec paths = STRVEC_INIT, changed = STRVEC_INIT;
	char *patch = xstrfmt("tests/people/%s-patches/%s", name, head);
	int bad;

	patch_read(&paths, &changed, patch);
	bad = check_route(p, head, &paths, &changed, want);
	free(patch);
	strvec_clear(&paths);
	strvec_clear(&changed);
	return bad;
}

/* A path case: HEAD is the paths asked about. */
static int path_case(const struct people *p, const char *name, const char *head,
		     const struct strvec *want)
{
	(void)name;
	return check_case(p, head, want);
}

/*
 * Every case of tests/people/NAME<SUFFIX> (a "== " line, then the lines the real
 * get_maintainer.pl printed for it), each checked by `one`; returns how many.
 */
static size_t check_expected_file(const char *name, const char *suffix, expected_case_fn one,
				  const char *what)
{
	struct people *p = fixture_people(name);
	struct strbuf text = STRBUF_INIT;
	struct strvec lines = STRVEC_INIT, want = STRVEC_INIT;
	char *path = xstrfmt("tests/people/%s%s", name, suffix);
	const char *cur = NULL;
	size_t i, cases = 0, bad = 0;

	read_file(&text, path);
	split_lines(&lines, text.buf);
	for (i = 0; i <= lines.nr; i++) {
		const char *l = i < lines.nr ? lines.v[i] : "== ";

		if (l[0] == '#')
			continue;
		if (strncmp(l, "== ", 3)) {
			strvec_push(&want, l);
			continue;
		}
		if (cur) {
			bad += (size_t)one(p, name, cur, &want);
			cases++;
		}
		strvec_clear(&want);
		cur = l + 3;
	}
	for (i = 0; i < people_problems(p)->nr; i++)
		print_message("%s\n", people_problems(p)->v[i]);
	if (bad)
		fail_msg("%zu of %zu %s of %s differ from get_maintainer.pl", bad, cases, what,
			 path);
	people_free(p);
	strvec_clear(&lines);
	strvec_clear(&want);
	strbuf_release(&text);
	free(path);
	return cases;
}

/* Every patch of tests/people/NAME-patches.expected; returns how many there were. */
static size_t check_patches(const char *name)
{
	return check_expected_file(name, "-patches.expected", patch_case, "patches");
}

/* Every case of tests/people/NAME.expected; returns how many cases there were. */
static size_t check_oracle(const char *name)
{
	return check_expected_file(name, ".expected", path_case, "cases");
}

/* Hand-made cases: globs, '?', classes, X:, N:, nested and overlapping sections. */
static void test_route_hand_made(void **state)
{
	struct people *p = fixture_people("hand");

	assert_int_equal(people_problems(p)->nr, 0);
	people_free(p);
	assert_true(check_oracle("hand") > 50);
}

/* A sample of real kernel paths against an excerpt of the real MAINTAINERS. */
static void test_route_kernel_sample(void **state)
{
	assert_true(check_oracle("kernel") > 90);
}

/*
 * Real kernel K: lines against patches' changed lines (keywords on, as the script's
 * default): every K: of the excerpt compiles, and the script agrees on each patch.
 */
static void test_route_kernel_keywords(void **state)
{
	struct people *p = fixture_people("kernel");
	const struct strvec *pr = people_problems(p);
	size_t i;

	for (i = 0; i < pr->nr; i++)
		assert_null(strstr(pr->v[i], "K:"));
	people_free(p);
	assert_true(check_patches("kernel") >= 5);
}

static struct people *people_of(const char *text, const char *const *files)
{
	struct strvec fv = STRVEC_INIT;
	struct people_source src = { .path = "MAINTAINERS", .text = text, .len = strlen(text) };
	struct people *p;

	for (; files && *files; files++)
		strvec_push(&fv, *files);
	src.files = &fv;
	p = people_new(&src);
	strvec_clear(&fv);
	return p;
}

/* The order and the cap: M: first, then R:, then L:, the most specific section first. */
static void test_route_order_and_cap(void **state)
{
	static const char text[] =
		"MEMORY MANAGEMENT\nM:\tAndrea <a@mm.example>\nR:\tRay <r@mm.example>\n"
		"L:\tmm@lists.example\nS:\tMaintained\nF:\tmm/\n\n"
		"SLAB ALLOCATOR\nM:\tChris <c@slab.example>\nR:\tVera <v@slab.example>\n"
		"R:\tRay <R@MM.example>\nL:\tmm@lists.example\nS:\tMaintained\nF:\tmm/slab.c\n\n"
		"WIDGET\nL:\twidget@lists.example\nS:\tOrphan\nF:\tmm/slab.c\n";
	static const char *const files[] = { "mm/slab.c", "mm/x.c", NULL };
	const char *paths[] = { "mm/slab.c" };
	struct people *p = people_of(text, files);
	struct people_route_opts o = ALL_ROLES;
	struct people_route r;

	people_route(&r, p, paths, 1, &o);
	assert_int_equal(r.nr, 6);
	assert_string_equal(r.v[0].email, "c@slab.example"); /* M: of the most specific */
	assert_string_equal(r.v[0].why, "M: in SLAB ALLOCATOR");
	assert_string_equal(r.v[1].email, "a@mm.example");
	assert_string_equal(r.v[2].email, "v@slab.example");
	assert_string_equal(r.v[3].email, "R@MM.example"); /* once, as first met */
	assert_string_equal(r.v[3].why, "R: in SLAB ALLOCATOR, R: in MEMORY MANAGEMENT");
	assert_string_equal(r.v[4].email, "mm@lists.example");
	assert_string_equal(r.v[5].email, "widget@lists.example");
	assert_string_equal(r.v[5].why, "L: in WIDGET (orphan)");
	assert_int_equal(r.sections.nr, 3);
	assert_string_equal(r.sections.v[2], "MEMORY MANAGEMENT");
	people_route_release(&r);
	o.max = 3;
	o.roles[PEOPLE_ROLE_L] = 0;
	people_route(&r, p, paths, 1, &o);
	assert_int_equal(r.nr, 3);
	assert_int_equal(r.left_out, 1);
	assert_string_equal(r.v[2].email, "v@slab.example");
	people_route_release(&r);
	people_free(p);
}

/* ---- the files of a commit (a flag's culprit or partner), routed ---- */

/* The e-mail addresses people_route() gives for the files commit REV changed. */
static char *route_of_commit(struct repo *repo, const struct people *p, const char *rev)
{
	struct people_route_opts o = ALL_ROLES;
	struct strvec paths = STRVEC_INIT;
	struct people_route r;
	struct strbuf out = STRBUF_INIT, sb = STRBUF_INIT;
	struct nb_oid id;
	size_t i;

	assert_int_equal(fixture_sh_out(&sb, 1, "git rev-parse %s", rev), 0);
	assert_int_equal(nb_oid_parse(&id, sb.buf), 0);
	assert_int_equal(activity_commit_paths(&paths, repo, &id), 0);
	people_route(&r, p, (const char *const *)paths.v, paths.nr, &o);
	for (i = 0; i < r.nr; i++)
		strbuf_addf(&out, "%s%s", i ? " " : "", r.v[i].email);
	people_route_release(&r);
	strvec_clear(&paths);
	strbuf_release(&sb);
	return strbuf_detach(&out, NULL);
}

/*
 * What a culprit can do to its files that get_maintainer.pl sees in its patch
 * (diff --git a/OLD b/NEW, --- a/FILE, mode change): a rename reaches the
 * sections of both names, a deletion and a mode change the file's section, a file
 * that became a folder both, a merge the files it brought (against its first
 * parent), a root commit all its files.
 */
static void test_route_commit_files(void **state)
{
	static const char maint[] =
		"OLD HOME\nM:\tOld <old@example.org>\nS:\tMaintained\nF:\told/\n\n"
		"NEW HOME\nM:\tNew <new@example.org>\nS:\tMaintained\nF:\tnew/\n\n"
		"GONE\nM:\tGone <gone@example.org>\nS:\tMaintained\nF:\tgone/\n\n"
		"SCRIPTS\nM:\tMode <mode@example.org>\nS:\tMaintained\nF:\tscripts/\n\n"
		"SIDE\nM:\tSide <side@example.org>\nS:\tMaintained\nF:\tside/\n\n"
		"LIB\nM:\tLib <lib@example.org>\nS:\tMaintained\nF:\tlib/\nX:\tlib/thing/\n\n"
		"THING DIR\nM:\tDir <dir@example.org>\nS:\tMaintained\nF:\tlib/thing/\n";
	struct strbuf sb = STRBUF_INIT;
	char *dir = temp_dir(), *got;
	struct people *p = NULL;
	struct repo *repo = NULL;

	(void)state;
	fixture_dir = dir;
	assert_int_equal(merge_global_init(), 0);
	strbuf_addf(&sb, "%s/MAINTAINERS", dir);
	{
		FILE *f = fopen(sb.buf, "w");

		assert_non_null(f);
		fputs(maint, f);
		fclose(f);
	}
	/* a tag per commit: base (the root), rename, delete, mode, folder, merge */
	assert_int_equal(
		fixture_sh("git init -q -b master . && mkdir old gone scripts lib && "
			   "echo a > old/a.c && echo g > gone/g.c && echo s > scripts/s.sh && "
			   "echo t > lib/thing && c base && git tag base && "
			   "mkdir new && git mv old/a.c new/a.c && c rename && git tag rename && "
			   "git rm -q gone/g.c && c delete && git tag delete && "
			   "chmod +x scripts/s.sh && c mode && git tag mode && "
			   "git rm -q lib/thing && mkdir -p lib/thing && "
			   "echo x > lib/thing/x.c && c folder && git tag folder && "
			   "git checkout -q -b side && mkdir side && echo s > side/s.c && "
			   "c side && git checkout -q master && echo b >> new/a.c && "
			   "c meanwhile && git merge -q --no-ff -m merge side && git tag merge"),
		0);
	strbuf_reset(&sb);
	strbuf_addf(&sb, "%s/.git", dir);
	if (repo_open_readonly(&repo, sb.buf) < 0)
		fail_msg("%s", nb_error_last());
	assert_int_equal(people_load(&p, repo, "HEAD", "MAINTAINERS"), 0);
	assert_non_null(p);
	got = route_of_commit(repo, p, "rename");
	assert_string_equal(got, "old@example.org new@example.org");
	free(got);
	got = route_of_commit(repo, p, "delete");
	assert_string_equal(got, "gone@example.org");
	free(got);
	got = route_of_commit(repo, p, "mode");
	assert_string_equal(got, "mode@example.org");
	free(got);
	got = route_of_commit(repo, p, "folder");
	assert_string_equal(got, "dir@example.org lib@example.org");
	free(got);
	got = route_of_commit(repo, p, "merge"); /* not new/a.c: master's own change */
	assert_string_equal(got, "side@example.org");
	free(got);
	got = route_of_commit(repo, p, "base");
	assert_string_equal(got, "old@example.org gone@example.org mode@example.org "
				 "lib@example.org");
	free(got);
	people_free(p);
	repo_free(repo);
	merge_global_shutdown();
	strbuf_release(&sb);
	fixture_sys_free(xstrfmt("rm -rf '%s'", dir));
	free(dir);
}

/* ---- bad and hostile MAINTAINERS ---- */

static int has_problem(const struct people *p, const char *line, const char *words)
{
	size_t i;
	const struct strvec *v = people_problems(p);

	for (i = 0; i < v->nr; i++)
		if (strstr(v->v[i], line) && strstr(v->v[i], words))
			return 1;
	return 0;
}

static void test_bad_lines(void **state)
{
	static const char text[] =
		/* lines 1-3 */
		"GOOD\nM:\tGood One <good@example.org>\nF:\tgood/\n\n"
		/* 5-9 */
		"BAD\nM:\tno address here\nR:\tA <a@b@c>\nF:\t../x\nF:\t/etc/passwd\n"
		/* 10-14 */
		"N:\t(a)\\1\nN:\t(?=x)y\nN:\t(?<!x)y\nN:\t((a{50}){50}){50}\nX:\tfoo[ch\n"
		/* 15-16 */
		"N:\tsun[x456]i\nF:\tgood/a/./b\n\n"
		/* 18 */
		"GOOD\nM:\tTwice <twice@example.org>\nF:\tgood/\n";
	struct people *p = people_of(text, NULL);
	const char *paths[] = { "good/sun6i.c" };
	struct people_route_opts o = ALL_ROLES;
	struct people_route r;
	size_t i;

	for (i = 0; i < people_problems(p)->nr; i++)
		print_message("%s\n", people_problems(p)->v[i]);
	assert_true(has_problem(p, "MAINTAINERS:6:", "is not a mail address"));
	assert_true(has_problem(p, "MAINTAINERS:7:", "is not a mail address"));
	assert_true(has_problem(p, "MAINTAINERS:8:", "'..'"));
	assert_true(has_problem(p, "MAINTAINERS:9:", "absolute path"));
	assert_true(has_problem(p, "MAINTAINERS:10:", "backreference"));
	assert_true(has_problem(p, "MAINTAINERS:11:", "lookaround"));
	assert_true(has_problem(p, "MAINTAINERS:12:", "lookaround"));
	assert_true(has_problem(p, "MAINTAINERS:13:", "counted repetition"));
	assert_true(has_problem(p, "MAINTAINERS:14:", "without its ']'"));
	assert_true(has_problem(p, "MAINTAINERS:16:", "'.'"));
	assert_true(has_problem(p, "MAINTAINERS:18:", "named twice (first at line 1)"));
	assert_int_equal(people_problems(p)->nr, 11);
	/* what was left is still used: the good N: and both GOOD sections */
	people_route(&r, p, paths, 1, &o);
	assert_int_equal(r.nr, 2);
	assert_string_equal(r.v[0].email, "good@example.org");
	assert_string_equal(r.v[1].email, "twice@example.org");
	people_route_release(&r);
	people_free(p);
}

/* Runs `fn` under an alarm: a hang fails the test instead of stalling make check. */
static void no_hang(void (*fn)(void))
{
	alarm(120);
	fn();
	alarm(0);
}

static void hostile_big_file(void)
{
	struct strbuf sb = STRBUF_INIT;
	struct people_route_opts o = ALL_ROLES;
	struct people_route r;
	const char *paths[] = { "d/17/x.c", "d/49999/y.c" };
	struct people *p;
	int i;

	/* 100,000 lines: 25,000 sections of four lines each */
	for (i = 0; i < 25000; i++)
		strbuf_addf(&sb, "SECTION %d\nM:\tP%d <p%d@example.org>\nF:\td/%d/\n\n", i, i, i,
			    i % 20000);
	p = people_of(sb.buf, NULL);
	people_route(&r, p, paths, 2, &o);
	assert_int_equal(r.nr, 2); /* sections 17 and 20017 */
	assert_string_equal(r.v[1].email, "p20017@example.org");
	people_route_release(&r);
	people_free(p);
	strbuf_release(&sb);
}

static void hostile_stars_crlf_bytes(void)
{
	struct strbuf sb = STRBUF_INIT;
	struct people_route_opts o = ALL_ROLES;
	struct people_route r;
	char long_path[4000];
	const char *paths[] = { long_path, "a/b.c" };
	struct people *p;
	int i;

	memset(long_path, 'a', sizeof(long_path) - 1);
	long_path[sizeof(long_path) - 1] = 0;
	strbuf_addstr(&sb, "STARS\r\nM:\tS\xff\xfe Star <star@example.org>\r\nF:\t");
	for (i = 0; i < 10000; i++)
		strbuf_addch(&sb, '*');
	strbuf_addstr(&sb, "\r\n\r\nBACKTRACK \xc3\x28 NAME\r\nM:\tB <b@example.org>\r\n"
			   "N:\t(a|aa)*(a*)*(a+)+b\r\nN:\t(.*a){12}x\r\n");
	p = people_of(sb.buf, NULL);
	for (i = 0; i < (int)people_problems(p)->nr; i++)
		print_message("%s\n", people_problems(p)->v[i]);
	/* the stars are one '*' now; the names were repaired, CR LF read as LF */
	assert_true(has_problem(p, "MAINTAINERS:2:", "not valid UTF-8"));
	assert_true(has_problem(p, "MAINTAINERS:5:", "not valid UTF-8"));
	assert_int_equal(people_problems(p)->nr, 2);
	people_route(&r, p, paths, 2, &o);
	assert_int_equal(r.nr, 1);
	assert_string_equal(r.v[0].email, "star@example.org");
	assert_non_null(strstr(r.v[0].name, "Star"));
	people_route_release(&r);
	people_free(p);
	strbuf_release(&sb);
}

/* The addresses a routing of `lines` (no paths) gives, ' '-joined. */
static char *route_lines(const struct people *p, const char *const *lines, size_t nr)
{
	struct people_route_opts o = ALL_ROLES;
	struct people_route r;
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	o.lines = lines;
	o.lines_nr = nr;
	people_route(&r, p, NULL, 0, &o);
	for (i = 0; i < r.nr; i++)
		strbuf_addf(&sb, "%s%s", i ? " " : "", r.v[i].email);
	people_route_release(&r);
	return strbuf_detach(&sb, NULL);
}

/*
 * K: lines, Perl regular expressions by PCRE2: hostile ones are refused, named (huge,
 * compiled past its size, catastrophic on a probe, not Perl); Perl's own forms hold
 * (lookaround, backreferences, (?i), \b \s \w, /x comments).
 */
static void hostile_keywords(void)
{
	struct strbuf text = STRBUF_INIT, big = STRBUF_INIT;
	struct people *p;
	char *got;
	int i;
	const char *l1[] = { "+\tint PIDFD_x;", "-struct  phylink *pl;" };
	const char *l2[] = { "+bpf_prog", "+xbpfy", "+ Clang" };
	const char *l3[] = { "+ struct dma_fence *f", "+ dma_fencex", "+ [clang]" };
	const char *l4[] = { "+++ lookalike mediatek", "+mediatek", " mediatek context" };
	const char *l5[] = { "+ qzz", "+ qzzz", "- jj" };

	for (i = 0; i < 300; i++)
		strbuf_addch(&big, 'a');
	strbuf_addf(&text, "BAD\nM:\tBad <bad@example.org>\nK:\t%s\n" /* 1-3 */
		    "K:\t((a{50}){50}){50}\nK:\t(abc\nK:\tabc)\nK:\t(a|aa)+$\n" /* 4-7 */
		    "K:\t(a|a){1,1000}c\nK:\t(?<=q)zz(?!z)\n" /* 8-9 */
		    "K:\t(j)\\1\nK:\t(?x-i)w w\n\n" /* 10-11 */
		    "P1\nM:\tOne <one@example.org>\nK:\t(?i)pidfd\n" /* 13-15 */
		    "K:\tphylink\\.h|struct\\s+phylink\n\n" /* 16 */
		    "P2\nM:\tTwo <two@example.org>\nK:\t(?:\\b|_)bpf(?:\\b|_)\n\n" /* 18-20 */
		    "P3\nM:\tThree <three@example.org>\nK:\t\\bdma_(?:buf|fence|resv)\\b\n\n"
		    "P4\nM:\tFour <four@example.org>\nK:\t\\b(?i:clang|llvm)\\b\n\n" /* 26-28 */
		    "P5\nM:\tFive <five@example.org>\nK:\t[^@]mediatek  # a comment\n",
		    big.buf);
	p = people_of(text.buf, NULL);
	for (i = 0; i < (int)people_problems(p)->nr; i++)
		print_message("%s\n", people_problems(p)->v[i]);
	assert_true(has_problem(p, "MAINTAINERS:3:", "over 256 characters"));
	assert_true(has_problem(p, "MAINTAINERS:4:", "bytes compiled"));
	assert_true(has_problem(p, "MAINTAINERS:5:", "missing closing parenthesis"));
	assert_true(has_problem(p, "MAINTAINERS:6:", "unmatched closing parenthesis"));
	assert_true(has_problem(p, "MAINTAINERS:7:", "a match took over 100000 steps"));
	assert_true(has_problem(p, "MAINTAINERS:8:", "bytes compiled"));
	assert_int_equal(people_problems(p)->nr, 6);
	/* Perl's lookaround and backreferences, which extended regular expressions lack */
	got = route_lines(p, l5, 3);
	assert_string_equal(got, "bad@example.org");
	free(got);
	got = route_lines(p, l5 + 1, 1); /* "qzzz": (?!z) */
	assert_string_equal(got, "");
	free(got);
	got = route_lines(p, l1, 2);
	assert_string_equal(got, "one@example.org");
	free(got);
	got = route_lines(p, l2, 2); /* "xbpfy": no word boundary, no '_' */
	assert_string_equal(got, "two@example.org");
	free(got);
	got = route_lines(p, l3, 3);
	assert_string_equal(got, "three@example.org four@example.org");
	free(got);
	got = route_lines(p, l4, 3); /* "+mediatek": [^@] cannot be the '+' */
	assert_string_equal(got, "");
	free(got);
	got = route_lines(p, l2 + 1, 1);
	assert_string_equal(got, "");
	free(got);
	/* a long line against every K: at once, in time */
	strbuf_reset(&big);
	strbuf_addch(&big, '+');
	for (i = 0; i < 100000; i++)
		strbuf_addch(&big, i % 7 ? 'a' : ' ');
	l1[0] = big.buf;
	got = route_lines(p, l1, 1);
	assert_string_equal(got, "");
	free(got);
	people_free(p);
	strbuf_release(&text);
	strbuf_release(&big);
}

static void test_hostile_files(void **state)
{
	no_hang(hostile_big_file);
	no_hang(hostile_stars_crlf_bytes);
	no_hang(hostile_keywords);
}

/*
 * As get_maintainer.pl in patch mode: K: also matches the commit message (anywhere on
 * a line, no '+' needed), and the maintainers: of a touched binding get the mail.
 */
static void test_route_message_and_bindings(void **state)
{
	static const char text[] =
		"IIO\nM:\tJon <jic@example.org>\nL:\tiio@lists.example\nF:\tdrivers/iio/\n\n"
		"OPEN FIRMWARE BINDINGS\nM:\tRob <robh@example.org>\n"
		"F:\tDocumentation/devicetree/bindings/\n\n"
		"RUST\nM:\tMiguel <ojeda@example.org>\nK:\t\\b(?i:rust)\\b\n";
	static const char yaml[] =
		"# SPDX-License-Identifier: GPL-2.0\n$id: http://devicetree.org/x\n"
		"title: An ADC\n\nmaintainers:\n  - Ann Author <ann@example.org>\n"
		"  - \"Bo B.\" <bo@example.org>\n  - not an address\n\n"
		"description: |\n  - Not Me <notme@example.org>\nproperties:\n";
	static const char *const files[] = {
		"drivers/iio/adc.c", "Documentation/devicetree/bindings/iio/adc.yaml", NULL
	};
	const char *paths[] = { "drivers/iio/adc.c",
				"Documentation/devicetree/bindings/iio/adc.yaml" };
	const char *msg[] = { "iio: adc: a driver in Rust", "", "Signed-off-by: A <a@x.org>" };
	struct people *p = people_of(text, files);
	struct people_patch pp = PEOPLE_PATCH_INIT;
	struct people_route_opts o = ALL_ROLES;
	struct people_route r;

	people_patch_binding(&pp, paths[1], yaml);
	assert_int_equal(pp.bindings_nr, 2);
	assert_string_equal(pp.bindings[1].name, "Bo B.");
	o.message = msg;
	o.message_nr = 3;
	o.bindings = pp.bindings;
	o.bindings_nr = pp.bindings_nr;
	people_route(&r, p, paths, 2, &o);
	assert_int_equal(r.nr, 6);
	assert_string_equal(r.v[0].email, "robh@example.org"); /* the deeper F: first */
	assert_string_equal(r.v[1].email, "jic@example.org");
	assert_string_equal(r.v[2].email, "ojeda@example.org"); /* K: on the message */
	assert_string_equal(r.v[2].why, "M: in RUST (K: \\b(?i:rust)\\b matches the patch)");
	assert_string_equal(r.v[3].email, "ann@example.org");
	assert_string_equal(r.v[3].why,
			    "maintainers: in Documentation/devicetree/bindings/iio/adc.yaml");
	assert_string_equal(r.v[4].email, "bo@example.org");
	assert_string_equal(r.v[5].email, "iio@lists.example");
	people_route_release(&r);
	/* without the message, no K: */
	o.message_nr = 0;
	o.bindings_nr = 0;
	people_route(&r, p, paths, 2, &o);
	assert_int_equal(r.nr, 3);
	people_route_release(&r);
	people_patch_release(&pp);
	people_free(p);
}

/*
 * The real get_maintainer.pl (the kernel source's, run by perl) as the oracle of a
 * patch's routing on a small made-up tree: a K: matched in the commit message, and
 * the maintainers: of a .yaml binding the patch touches.  Skipped without perl or the
 * script.
 */
#define ORACLE_SCRIPT "/work/kernel/linux-source-6.1/scripts/get_maintainer.pl"

static void test_route_oracle_message_and_bindings(void **state)
{
	static const char maint[] =
		"IIO\nM:\tJon <jic@example.org>\nL:\tiio@lists.example\nF:\tdrivers/iio/\n\n"
		"OPEN FIRMWARE BINDINGS\nM:\tRob <robh@example.org>\n"
		"F:\tDocumentation/devicetree/bindings/\n\n"
		"RUST\nM:\tMiguel <ojeda@example.org>\nK:\t\\b(?i:rust)\\b\n";
	struct people_route_opts o = { .roles = { 1, 1, 0 }, .max = 0 };
	struct people_patch pp = PEOPLE_PATCH_INIT;
	struct strbuf sb = STRBUF_INIT, want = STRBUF_INIT, got = STRBUF_INIT;
	struct people_route r;
	struct people *p = NULL;
	struct repo *repo = NULL;
	struct nb_oid id;
	char *dir;
	size_t i;

	if (access(ORACLE_SCRIPT, R_OK) || system("perl -e 1 >/dev/null 2>&1")) {
		print_message("skipped: no perl or no %s\n", ORACLE_SCRIPT);
		skip();
	}
	dir = temp_dir();
	fixture_dir = dir;
	assert_int_equal(merge_global_init(), 0);
	strbuf_addf(&sb, "%s/MAINTAINERS", dir);
	{
		FILE *f = fopen(sb.buf, "w");

		assert_non_null(f);
		fputs(maint, f);
		fclose(f);
	}
	/* the script wants a kernel tree's top: these files and folders */
	assert_int_equal(
		fixture_sh("git init -q -b master . && B=Documentation/devicetree/bindings/iio && "
			   "mkdir -p scripts drivers/iio $B fs arch include init ipc kernel lib && "
			   "cp " ORACLE_SCRIPT " scripts/ && touch COPYING CREDITS Kbuild Makefile "
			   "README fs/x arch/x include/x init/x ipc/x kernel/x lib/x && "
			   "printf 'maintainers:\\n  - Ann Author <ann@example.org>\\n"
			   "  - \"Bo B\" <bo@example.org>\\n' > $B/adc.yaml && "
			   "echo a > drivers/iio/adc.c && c base && echo b >> drivers/iio/adc.c && "
			   "echo '# no address here' >> $B/adc.yaml && git add -A && "
			   "git commit -q -m 'iio: adc: a driver in Rust' && "
			   "git format-patch -q -1 -o out"),
		0);
	assert_int_equal(fixture_sh_out(&want, 1, "perl scripts/get_maintainer.pl --no-git "
				       "--no-git-fallback --no-l --no-rolestats out/*.patch | "
				       "sed 's/.*<//; s/>.*//' | tr '\\n' ' '"), 0);
	strbuf_reset(&sb);
	strbuf_addf(&sb, "%s/.git", dir);
	if (repo_open_readonly(&repo, sb.buf) < 0)
		fail_msg("%s", nb_error_last());
	assert_int_equal(people_load(&p, repo, "HEAD", "MAINTAINERS"), 0);
	assert_int_equal(fixture_sh_out(&sb, 1, "git rev-parse HEAD"), 0);
	assert_int_equal(nb_oid_parse(&id, sb.buf + sb.len - NB_OID_HEXSZ), 0);
	assert_int_equal(people_patch_read(&pp, repo, &id), 0);
	people_route_opts_patch(&o, &pp);
	people_route(&r, p, (const char *const *)pp.paths.v, pp.paths.nr, &o);
	for (i = 0; i < r.nr; i++)
		strbuf_addf(&got, "%s ", r.v[i].email);
	print_message("script: %s\nnextbot: %s\n", want.buf, got.buf);
	strbuf_trim(&want);
	strbuf_trim(&got);
	assert_string_equal(got.buf, want.buf);
	assert_non_null(strstr(got.buf, "ojeda@example.org")); /* the message's "Rust" */
	assert_non_null(strstr(got.buf, "bo@example.org"));	/* the binding's */
	people_route_release(&r);
	people_patch_release(&pp);
	people_free(p);
	repo_free(repo);
	merge_global_shutdown();
	strbuf_release(&sb);
	strbuf_release(&want);
	strbuf_release(&got);
	fixture_sys_free(xstrfmt("rm -rf '%s'", dir));
	free(dir);
}

/*
 * A K: line that passes its probes but goes over its limits on a patch's line is
 * refused from then on, named with the file's problems; the others still match.
 */
static void test_keyword_refused_late(void **state)
{
	static const char text[] = "SLOW\nM:\tSlow <slow@example.org>\nK:\t(?:\\d+\\d+)+x\n\n"
				   "FAST\nM:\tFast <fast@example.org>\nK:\tfast\n";
	struct people *p = people_of(text, NULL);
	struct strbuf line = STRBUF_INIT;
	const char *lines[2];
	char *got;
	int i;

	assert_int_equal(people_problems(p)->nr, 0);
	strbuf_addch(&line, '+');
	for (i = 0; i < 40; i++)
		strbuf_addch(&line, '1');
	strbuf_addstr(&line, "! x fast");
	lines[0] = line.buf;
	got = route_lines(p, lines, 1);
	assert_string_equal(got, "fast@example.org");
	free(got);
	assert_int_equal(people_problems(p)->nr, 1);
	assert_true(has_problem(p, "MAINTAINERS:3:", "over its limits on a patch's line"));
	lines[0] = "+12x"; /* would match: the pattern is refused now */
	got = route_lines(p, lines, 1);
	assert_string_equal(got, "");
	free(got);
	strbuf_release(&line);
	people_free(p);
}

/* ---- MAINTAINERS at kernel scale: bounded in memory (a child's peak RSS) ---- */

/* A file of at least `size` bytes: `head`, then the kernel's MAINTAINERS repeated. */
static void kernel_scale_text(struct strbuf *out, const char *head, size_t size)
{
	struct strbuf real = STRBUF_INIT;

	if (strbuf_read_file(&real, "/work/kernel/linux-source-6.1/MAINTAINERS", 0) < 0 ||
	    real.len < 4096) {
		strbuf_reset(&real);
		read_file(&real, "tests/people/kernel.MAINTAINERS");
	}
	strbuf_addstr(out, head);
	while (out->len < size)
		strbuf_addbuf(out, &real);
	strbuf_release(&real);
}

/* Loads and routes `text` in a child; its peak RSS in KiB. */
static long child_peak_kib(const char *text, const char *why_wanted)
{
	struct rusage ru;
	int status = 0;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		struct people_source src = { .path = "MAINTAINERS", .text = text,
					     .len = strlen(text) };
		struct people_route_opts o = ALL_ROLES;
		struct people_route r;
		struct strbuf big = STRBUF_INIT;
		const char *lines[1];
		const char *paths[] = { "mm/slab.c", "drivers/net/ethernet/intel/e1000/e1000.h" };
		struct people *p;
		size_t i;
		int found = !why_wanted;

		alarm(120);
		p = people_new(&src);
		for (i = 0; i < people_problems(p)->nr; i++)
			found |= why_wanted && strstr(people_problems(p)->v[i], why_wanted) != NULL;
		strbuf_addch(&big, '+');
		for (i = 0; i < 20000; i++)
			strbuf_addch(&big, 'a');
		lines[0] = big.buf;
		o.lines = lines;
		o.lines_nr = 1;
		people_route(&r, p, paths, 2, &o);
		people_route_release(&r);
		people_free(p);
		strbuf_release(&big);
		_exit(found ? 0 : 3);
	}
	assert_int_equal(wait4(pid, &status, 0, &ru), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	return ru.ru_maxrss;
}

static void test_kernel_scale(void **state)
{
	struct strbuf text = STRBUF_INIT, head = STRBUF_INIT;
	long kib;
	int i;

	kernel_scale_text(&text, "", (size_t)7 << 20);
	kib = child_peak_kib(text.buf, NULL);
	print_message("7 MiB MAINTAINERS: peak %ld MiB\n", kib >> 10);
	assert_true(kib < 200 << 10);
	strbuf_reset(&text);
	for (i = 0; i < 3000; i++)
		strbuf_addf(&head, "HOSTILE %d\nM:\tH %d <h%d@example.org>\nK:\t(a|a){1,1000}\n\n",
			    i, i, i);
	kernel_scale_text(&text, head.buf, (size_t)7 << 20);
	kib = child_peak_kib(text.buf, "K: '(a|a){1,1000}' refused: over its limits");
	print_message("hostile 7 MiB MAINTAINERS: peak %ld MiB\n", kib >> 10);
	assert_true(kib < 200 << 10);
	strbuf_release(&text);
	strbuf_release(&head);
}

/* ---- .mailmap against git check-mailmap ---- */

static void test_mailmap_git(void **state)
{
	static const char map[] =
		"# comment\n"
		"Proper Name <commit@example.org>\n"
		"<proper@example.org> <other@example.org>\n"
		"Both Name <both@example.org> <old-both@example.org>\n"
		"Name Four <four@example.org> Commit Four <shared@example.org>\n"
		"Shared Default <shared-default@example.org> <shared@example.org>\n"
		"  Spaced   Name   <spaced@example.org>   # trailing comment\n"
		"<upper@example.org> <MiXeD@Example.ORG>\n"
		"Later Wins <later@example.org> <twice@example.org>\n"
		"Later Wins Two <later2@example.org> <twice@example.org>\n"
		"broken line without address\n"
		"<> <empty@example.org>\n";
	static const char *const who[] = {
		"Someone <commit@example.org>", "X <other@example.org>",
		"Y <old-both@example.org>",	"Commit Four <shared@example.org>",
		"commit four <SHARED@example.org>", "Else <shared@example.org>",
		"Z <spaced@example.org>",	"W <mixed@example.org>",
		"V <twice@example.org>",	"U <nobody@example.org>",
		"T <empty@example.org>",	"S <COMMIT@EXAMPLE.ORG>",
	};
	struct mailmap *mm = mailmap_parse(map, sizeof(map) - 1, NULL);
	struct strbuf out = STRBUF_INIT, sb = STRBUF_INIT;
	char *dir = temp_dir();
	size_t i;

	fixture_dir = dir;
	strbuf_addf(&sb, "%s/.mailmap", dir);
	{
		FILE *f = fopen(sb.buf, "w");

		assert_non_null(f);
		fputs(map, f);
		fclose(f);
	}
	assert_int_equal(fixture_sh("git init -q . && git config mailmap.file .mailmap"), 0);
	for (i = 0; i < sizeof(who) / sizeof(*who); i++) {
		char *n = xstrndup(who[i], (size_t)(strchr(who[i], '<') - who[i] - 1));
		char *e = xstrndup(strchr(who[i], '<') + 1,
				   strlen(strchr(who[i], '<') + 1) - 1);
		const char *name = n, *email = e;
		char *mine;

		strbuf_reset(&out);
		assert_int_equal(fixture_sh_out(&out, 1, "git check-mailmap '%s'", who[i]), 0);
		mailmap_map(mm, &name, &email);
		mine = xstrfmt("%s <%s>", name, email);
		if (strcmp(mine, out.buf))
			fail_msg("'%s': git says '%s', nextbot '%s'", who[i], out.buf, mine);
		free(mine);
		free(n);
		free(e);
	}
	assert_true(mailmap_same_email(mm, "other@example.org", "PROPER@example.org"));
	assert_false(mailmap_same_email(mm, "other@example.org", "commit@example.org"));
	assert_false(mailmap_same_email(NULL, "a@b.c", "x@b.c"));
	assert_true(mailmap_same_email(NULL, "A@b.c", "a@B.c"));
	mailmap_free(mm);
	strbuf_release(&out);
	strbuf_release(&sb);
	fixture_sys_free(xstrfmt("rm -rf '%s'", dir));
	free(dir);
}

/* ---- the audit: two of six maintainers of a section stopped long ago ---- */

static const char slab_maintainers[] =
	"SLAB ALLOCATOR\n"
	"M:\tChristoph Lameter <cl@linux.example>\n"
	"M:\tPekka Enberg <penberg@kernel.example>\n"
	"M:\tDavid Rientjes <rientjes@google.example>\n"
	"M:\tJoonsoo Kim <iamjoonsoo.kim@lge.example>\n"
	"M:\tAndrew Morton <akpm@linux-foundation.example>\n"
	"M:\tVlastimil Babka <vbabka@suse.example>\n"
	"R:\tRoman Gushchin <roman.gushchin@linux.example>\n"
	"R:\tHyeonggon Yoo <42.hyeyoo@gmail.example>\n"
	"L:\tlinux-mm@kvack.example\n"
	"S:\tMaintained\n"
	"F:\tinclude/linux/sl?b*.h\n"
	"F:\tmm/sl?b*\n\n"
	"MEMORY MANAGEMENT\n"
	"M:\tAndrew Morton <AKPM@linux-foundation.example>\n"
	"L:\tlinux-mm@kvack.example\n"
	"S:\tMaintained\n"
	"F:\tmm/\n\n"
	"FORGOTTEN\n"
	"M:\tNobody Here <nobody@example.org>\n"
	"S:\tMaintained\n"
	"F:\tdrivers/forgotten/\n\n"
	"ORPHANED THING\n"
	"L:\tlinux-kernel@vger.example\n"
	"S:\tOrphan\n"
	"F:\tlib/thing.c\n";

/* A commit at DATE by NAME <MAIL> of FILE, with TRAILERS (a printf-safe string). */
#define COMMIT(date, name, mail, file, trailers)                                          \
	"echo " date " >> " file " && git add -A && GIT_AUTHOR_NAME='" name "' "           \
	"GIT_AUTHOR_EMAIL='" mail "' GIT_AUTHOR_DATE='" date "T12:00:00Z' "                 \
	"GIT_COMMITTER_DATE='" date "T12:00:00Z' git commit -q -m 'mm: change' -m '"       \
	trailers "'; "

/*
 * Routing with the audit the config asks for (people_load_config()): the people it
 * calls absent get no mail, and the routing names them, with their why.
 */
static void route_without_absent(struct repo *repo)
{
	struct config cfg;
	struct people_route_opts o = ALL_ROLES;
	struct people_route r;
	struct people *p = NULL;
	const char *paths[] = { "mm/slab.c" };
	struct strbuf got = STRBUF_INIT;
	size_t i;

	memset(&cfg, 0, sizeof(cfg));
	cfg.maintainers.file = (char *)"MAINTAINERS";
	cfg.maintainers.absent_days = 730;
	cfg.maintainers.window_days = 3650;
	cfg.maintainers.regex_limits.match = PEOPLE_REGEX_MATCH_DEFAULT;
	cfg.maintainers.regex_limits.heap = PEOPLE_REGEX_HEAP_DEFAULT;
	cfg.maintainers.regex_limits.size = PEOPLE_REGEX_SIZE_DEFAULT;
	assert_int_equal(people_load_config(&p, &cfg, repo, "HEAD"), 0);
	assert_int_equal(people_absent(p)->nr, 4);
	people_route(&r, p, paths, 1, &o);
	for (i = 0; i < r.nr; i++)
		strbuf_addf(&got, "%s ", r.v[i].email);
	print_message("routed: %s\n", got.buf);
	assert_null(strstr(got.buf, "penberg@"));
	assert_null(strstr(got.buf, "rientjes@"));
	assert_null(strstr(got.buf, "roman.gushchin@"));
	assert_non_null(strstr(got.buf, "cl@linux.example"));
	assert_non_null(strstr(got.buf, "vbabka@suse.example"));
	assert_int_equal(r.absent.nr, 3);
	assert_string_equal(r.absent.v[0],
			    "Pekka Enberg <penberg@kernel.example> (M: in SLAB ALLOCATOR): absent");
	assert_string_equal(r.absent.v[2], "Roman Gushchin <roman.gushchin@linux.example> "
					   "(R: in SLAB ALLOCATOR): absent");
	people_route_release(&r);
	strbuf_release(&got);
	people_free(p);
}

static void test_audit_two_of_six_stopped_slow(void **state)
{
	struct people_audit a;
	struct people_audit_opts o = { .absent_days = 730, .window_days = 3650 };
	struct strvec absent = STRVEC_INIT;
	struct repo *repo = NULL;
	struct people *p = NULL;
	char *dir = temp_dir(), *git;
	const struct people_audit_section *slab;
	size_t i;
	int f;

	fixture_dir = dir;
	assert_int_equal(merge_global_init(), 0);
	{
		FILE *fp;
		char *path = xstrfmt("%s/MAINTAINERS", dir);

		assert_int_equal(fixture_sh("git init -q . && mkdir -p mm include/linux lib"), 0);
		fp = fopen(path, "w");
		assert_non_null(fp);
		fputs(slab_maintainers, fp);
		fclose(fp);
		free(path);
	}
	assert_int_equal(
		fixture_sh("printf 'Joonsoo Kim <js1304@gmail.example> "
			   "<iamjoonsoo.kim@lge.example>\n' > .mailmap && touch lib/thing.c && "
			   COMMIT("2015-03-01", "Linus", "torvalds@example.org", "mm/slab.c", "")
			   /* the two who stopped, long ago */
			   COMMIT("2016-05-01", "Pekka Enberg", "penberg@kernel.example",
				  "mm/slab.c",
				  "Signed-off-by: Pekka Enberg <penberg@kernel.example>")
			   COMMIT("2016-06-01", "Someone", "someone@example.org", "mm/slub.c",
				  "Acked-by: David Rientjes <rientjes@google.example>")
			   /* the four who are here: each a different way */
			   COMMIT("2024-11-01", "Christoph Lameter", "CL@linux.example",
				  "mm/slub.c", "")
			   COMMIT("2025-01-10", "Someone", "someone@example.org",
				  "include/linux/slab.h",
				  "Reviewed-by: Vlastimil Babka <vbabka@suse.example>")
			   COMMIT("2025-02-01", "Someone", "someone@example.org", "mm/slob.c",
				  "Signed-off-by: Joonsoo Kim <js1304@gmail.example>\n"
				  "Tested-by: Hyeonggon Yoo <42.hyeyoo@gmail.example>")
			   COMMIT("2025-03-01", "Andrew Morton", "akpm@linux-foundation.example",
				  "mm/slab_common.c", "")
			   /* outside the section: counts for nothing there */
			   COMMIT("2025-04-01", "Roman Gushchin", "roman.gushchin@linux.example",
				  "lib/thing.c", "")
			   "git commit-graph write --reachable"),
		0);
	git = xstrfmt("%s/.git", dir);
	assert_int_equal(repo_open_readonly(&repo, git), 0);
	assert_int_equal(people_load(&p, repo, "HEAD", "MAINTAINERS"), 0);
	assert_non_null(p);
	assert_int_equal(people_audit_run(&a, repo, "HEAD", p, &o), 0);
	assert_int_equal(a.commits, 7); /* 2015-03-01 is before the window */
	slab = &a.sections[0];
	assert_string_equal(slab->name, "SLAB ALLOCATOR");
	assert_int_equal(slab->files_matched, 5); /* slab.c slub.c slob.c slab_common.c, slab.h */
	for (i = 0; i < slab->people_nr; i++)
		print_message("%s %s last %lld absent %d\n", people_role_name(slab->people[i].role),
			      slab->people[i].email, slab->people[i].last, slab->people[i].absent);
	/* Pekka and David stopped in 2016; Roman was never seen on the section's files */
	assert_true(slab->people[1].absent && slab->people[1].last);
	assert_true(slab->people[2].absent && slab->people[2].last);
	assert_true(slab->people[6].absent && !slab->people[6].last);
	for (i = 0; i < slab->people_nr; i++)
		if (i != 1 && i != 2 && i != 6)
			assert_false(slab->people[i].absent);
	assert_false(slab->findings & (1u << PEOPLE_FINDING_ALL_ABSENT));
	assert_true(slab->findings & (1u << PEOPLE_FINDING_MAILMAP_DUPLICATE)); /* Joonsoo */
	assert_true(slab->findings & (1u << PEOPLE_FINDING_CASE_DUPLICATE));	 /* AKPM */
	assert_true(a.sections[2].findings & (1u << PEOPLE_FINDING_ALL_ABSENT));
	assert_true(a.sections[2].findings & (1u << PEOPLE_FINDING_NO_FILES));
	assert_true(a.sections[3].findings & (1u << PEOPLE_FINDING_ORPHAN));
	for (f = 0; f < PEOPLE_FINDINGS; f++) {
		enum people_finding back;

		assert_int_equal(people_finding_parse(&back, people_finding_name(f)), 0);
		assert_int_equal(back, f);
	}
	people_audit_absent(&absent, &a);
	assert_int_equal(absent.nr, 4); /* Pekka, David, Roman, Nobody */
	people_audit_release(&a);
	route_without_absent(repo);
	/* a window of five years: the two are no longer seen at all */
	o.window_days = 1825;
	assert_int_equal(people_audit_run(&a, repo, "HEAD", p, &o), 0);
	assert_int_equal(a.commits, 5);
	assert_true(a.sections[0].people[1].absent && !a.sections[0].people[1].last);
	people_audit_release(&a);
	strvec_clear(&absent);
	people_free(p);
	repo_free(repo);
	free(git);
	merge_global_shutdown();
	fixture_sys_free(xstrfmt("rm -rf '%s'", dir));
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_route_hand_made),
		cmocka_unit_test(test_route_kernel_sample),
		cmocka_unit_test(test_route_kernel_keywords),
		cmocka_unit_test(test_route_order_and_cap),
		cmocka_unit_test(test_route_commit_files),
		cmocka_unit_test(test_bad_lines),
		cmocka_unit_test(test_hostile_files),
		cmocka_unit_test(test_route_message_and_bindings),
		cmocka_unit_test(test_route_oracle_message_and_bindings),
		cmocka_unit_test(test_keyword_refused_late),
		cmocka_unit_test(test_kernel_scale),
		cmocka_unit_test(test_mailmap_git),
		cmocka_unit_test(test_audit_two_of_six_stopped_slow),
	};

	return cmocka_run_group_tests_name("people", tests, NULL, NULL);
}
