/* Worker checkouts, probes (verdicts, env, logs, pristine retry) and the verdict cache. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "merge/search/search.h"
#include "merge/search/known_int.h"
#include "merge/search/probe_int.h"
#include "merge/search/verdict_int.h"
#include "merge/worker/worker.h"
#include "merge/worker/worker_int.h"
#include "tests/gitfixture.h"
#include "util/fileutil.h"
#include "util/strbuf.h"
#include "util/strvec.h"
#include "util/xalloc.h"
#include "util/banned.h"

static char top[256];
static git_oid c1, c2, c3;

/* Checkouts are made by the nextbot binary under test, as they are in a night. */
static const struct worker_opts *fixture_wo(void)
{
	static struct worker_opts wo;

	wo.exe = fixture_nextbot();
	return &wo;
}

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = fixture_vsh(".", NULL, fmt, ap);
	va_end(ap);
	if (rc != 0)
		fail_msg("command failed (%d): %s", rc, fmt);
}

static void rev(git_oid *out, const char *spec)
{
	git_repository *repo;
	git_object *obj;
	char *path = xstrfmt("%s/src", top);

	assert_int_equal(git_repository_open(&repo, path), 0);
	assert_int_equal(git_revparse_single(&obj, repo, spec), 0);
	git_oid_cpy(out, git_object_id(obj));
	git_object_free(obj);
	git_repository_free(repo);
	free(path);
}

/*
 * src: c1 has a, b, sub/c and a Makefile whose incremental run fails (ln -s
 * onto an existing link); c2 changes b, deletes sub/c; c3 breaks the build.
 */
static int setup(void **state)
{
	snprintf(top, sizeof(top), "/tmp/nb-probe-%d", (int)getpid());
	file_remove_tree(top);
	sh("set -e; mkdir -p %s/src && cd %s/src && git init -q && "
	   "G='git -c user.name=t -c user.email=t@e.org'; "
	   "echo a >a; echo b >b; mkdir sub; echo c >sub/c; "
	   "printf 'all:\\n\\tln -s a link\\n\\tcat b >out\\n' >Makefile; "
	   "git add -A; $G commit -qm c1; "
	   "echo b2 >b; git rm -q sub/c; git add -A; $G commit -qm c2; "
	   "printf 'all:\\n\\tln -s a link\\n\\tfalse\\n' >Makefile; git add -A; $G commit -qm c3; "
	   "git clone -q --bare . ../bare.git",
	   top, top);
	rev(&c1, "HEAD~2");
	rev(&c2, "HEAD~1");
	rev(&c3, "HEAD");
	return 0;
}

static int teardown(void **state)
{
	if (!getenv("KEEP"))
		file_remove_tree(top);
	return 0;
}

static char *path_in(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *path_in(const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	strbuf_addf(&sb, "%s/", top);
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	return strbuf_detach(&sb, NULL);
}

static void incremental_checkout(void **state)
{
	struct worker *w;
	char *repo = path_in("bare.git"), *dir = path_in("workers/w0"), *p;
	struct stat a1, a2, b1, b2;

	assert_int_equal(worker_open(&w, repo, dir, fixture_wo()), 0);
	assert_int_equal(worker_checkout_git(w, &c1, 0), 0);
	p = xstrfmt("%s/a", worker_tree_path(w));
	assert_int_equal(stat(p, &a1), 0);
	free(p);
	p = xstrfmt("%s/b", worker_tree_path(w));
	assert_int_equal(stat(p, &b1), 0);
	free(p);
	sh("echo built >%s/workers/w0/tree/build-output.o", top);
	sleep(1);
	assert_int_equal(worker_checkout_git(w, &c2, 0), 0);
	p = xstrfmt("%s/a", worker_tree_path(w));
	assert_int_equal(stat(p, &a2), 0);
	free(p);
	p = xstrfmt("%s/b", worker_tree_path(w));
	assert_int_equal(stat(p, &b2), 0);
	free(p);
	/* a is untouched (same inode, same mtime); b is rewritten; sub/c is gone */
	assert_int_equal(a1.st_ino, a2.st_ino);
	assert_int_equal(a1.st_mtime, a2.st_mtime);
	assert_true(b2.st_mtime > b1.st_mtime);
	sh("grep -qx b2 %s/workers/w0/tree/b", top);
	sh("test ! -e %s/workers/w0/tree/sub/c", top);
	sh("test -e %s/workers/w0/tree/build-output.o", top);
	/* back and forth; then pristine wipes the build output */
	assert_int_equal(worker_checkout_git(w, &c1, 0), 0);
	sh("test -e %s/workers/w0/tree/sub/c && grep -qx b %s/workers/w0/tree/b", top, top);
	assert_int_equal(worker_checkout_git(w, &c2, 1), 0);
	sh("test ! -e %s/workers/w0/tree/build-output.o", top);
	worker_free(w);
	free(repo);
	free(dir);
}

/* The id in file `name` under top (as `git rev-parse` wrote it). */
static void oid_from_file(git_oid *out, const char *name)
{
	struct strbuf sb = STRBUF_INIT;
	char *path = path_in("%s", name);

	assert_int_equal(strbuf_read_file(&sb, path, 100), 0);
	strbuf_trim(&sb);
	assert_int_equal(git_oid_fromstr(out, sb.buf), 0);
	strbuf_release(&sb);
	free(path);
}

/*
 * A pristine checkout skips libgit2's filters only when nothing asks for one: with
 * `*.txt text eol=crlf` the file gets CRLF as git's own checkout writes it, and
 * without attributes the bytes are the commit's.
 */
static void pristine_checkout_filters(void **state)
{
	struct worker *w;
	char *repo = path_in("attrs.git"), *dir = path_in("workers/wa");
	git_oid with, without;

	sh("set -e; cd %s; git clone -q src attrs-src; cd attrs-src; "
	   "G='git -c user.name=t -c user.email=t@e.org'; "
	   "printf 'x\\ny\\n' > t.txt; git add -A; $G commit -qm plain; "
	   "printf '*.txt text eol=crlf\\n' > .gitattributes; git add -A; $G commit -qm attrs; "
	   "git clone -q --bare . ../attrs.git; git clone -q . ../attrs-git", top);
	sh("cd %s/attrs.git && git rev-parse HEAD~1 > ../without && git rev-parse HEAD > ../with",
	   top);
	oid_from_file(&without, "without");
	oid_from_file(&with, "with");
	assert_int_equal(worker_open(&w, repo, dir, fixture_wo()), 0);
	assert_int_equal(worker_checkout_git(w, &with, 1), 0);
	sh("cd %s && od -c workers/wa/tree/t.txt | grep -q '\\\\r' && "
	   "cmp workers/wa/tree/t.txt attrs-git/t.txt", top);
	assert_int_equal(worker_checkout_git(w, &without, 1), 0);
	sh("cd %s && ! od -c workers/wa/tree/t.txt | grep -q '\\\\r' && "
	   "git -C attrs-src cat-file blob HEAD~1:t.txt | cmp - workers/wa/tree/t.txt", top);
	worker_free(w);
	free(repo);
	free(dir);
}

/*
 * What a command changed in tracked files is undone by the next incremental
 * checkout, whether the commit changes those files or not; a tracked file it
 * removed comes back; checking the same commit out again changes nothing.
 */
static void incremental_undoes_the_command(void **state)
{
	struct worker *w;
	char *repo = path_in("bare.git"), *dir = path_in("workers/u0"), *p;
	struct stat b1, b2;

	assert_int_equal(worker_open(&w, repo, dir, fixture_wo()), 0);
	assert_int_equal(worker_checkout_git(w, &c1, 0), 0);
	/* a: same size, other content; Makefile: longer; both as in c1 in c2 */
	sh("cd %s/workers/u0/tree && printf 'X\\n' >a && echo tampered >>Makefile", top);
	assert_int_equal(worker_checkout_git(w, &c2, 0), 0);
	sh("cd %s/workers/u0/tree && grep -qx a a && ! grep -q tampered Makefile && "
	   "grep -qx b2 b && test ! -e sub/c", top);
	/* a command that puts the mtime back (same size, same inode) is still seen */
	sh("cd %s/workers/u0/tree && touch -r a .ref && printf 'Y\\n' >a && touch -r .ref a && "
	   "rm .ref", top);
	assert_int_equal(worker_checkout_git(w, &c1, 0), 0);
	sh("cd %s/workers/u0/tree && grep -qx a a", top);
	sh("rm %s/workers/u0/tree/a", top);
	assert_int_equal(worker_checkout_git(w, &c1, 0), 0);
	sh("cd %s/workers/u0/tree && grep -qx a a && grep -qx b b && test -e sub/c", top);
	p = xstrfmt("%s/b", worker_tree_path(w));
	assert_int_equal(stat(p, &b1), 0);
	assert_int_equal(worker_checkout_git(w, &c1, 0), 0);
	assert_int_equal(stat(p, &b2), 0);
	assert_int_equal(b1.st_ino, b2.st_ino);
	assert_int_equal(b1.st_mtim.tv_nsec, b2.st_mtim.tv_nsec);
	sh("cd %s/workers/u0/tree && grep -qx a a && grep -qx b b", top);
	free(p);
	worker_free(w);
	free(repo);
	free(dir);
}

/* Two workers over one non-bare repository: neither touches its index or tree. */
static void own_index(void **state)
{
	struct worker *w1, *w2;
	char *repo = path_in("src"), *d1 = path_in("workers/i1"), *d2 = path_in("workers/i2");

	sh("cd %s/src && git status --porcelain >../status-before", top);
	assert_int_equal(worker_open(&w1, repo, d1, fixture_wo()), 0);
	assert_int_equal(worker_open(&w2, repo, d2, fixture_wo()), 0);
	assert_int_equal(worker_checkout_git(w1, &c1, 0), 0);
	assert_int_equal(worker_checkout_git(w2, &c2, 0), 0);
	assert_int_equal(worker_checkout_git(w1, &c2, 0), 0);
	assert_int_equal(worker_checkout_git(w2, &c1, 0), 0);
	sh("grep -qx b2 %s/workers/i1/tree/b && grep -qx b %s/workers/i2/tree/b", top, top);
	sh("cd %s/src && git status --porcelain >../status-after && "
	   "cmp ../status-before ../status-after && test ! -s ../status-after", top);
	sh("cd %s/src && test \"$(git rev-parse HEAD)\" = %s", top, git_oid_tostr_s(&c3));
	worker_free(w1);
	worker_free(w2);
	free(repo);
	free(d1);
	free(d2);
}

static enum probe_verdict probe_shell(const char *shell, double timeout, int *exit_code,
				      int *timed_out)
{
	struct probe_command cmd = { .name = "t", .shell = shell, .timeout = timeout };
	struct probe_spec spec = { .cmds = &cmd, .cmds_nr = 1, .tree_name = "mm", .date =
				   "2026-12-03" };
	struct probe_result r = PROBE_RESULT_INIT;
	struct worker *w;
	char *repo = path_in("bare.git"), *dir = path_in("workers/p");
	enum probe_verdict v;

	assert_int_equal(worker_open(&w, repo, dir, fixture_wo()), 0);
	assert_int_equal(probe_run(&r, w, &c2, 7, &spec), 0);
	v = r.verdict;
	if (exit_code)
		*exit_code = r.exit_code;
	if (timed_out)
		*timed_out = r.timed_out;
	probe_result_release(&r);
	worker_free(w);
	free(repo);
	free(dir);
	return v;
}

/*
 * Disposable workers (issue 28): with a floor above any disk's free space, every
 * probe leaves the disk "short".  A failure then is an infrastructure verdict
 * naming the command and commit, never cached; a pass stays a pass; either way
 * the worker is removed at once (its build output gone) and the events are told.
 */
static void disposable_worker(void **state)
{
	struct probe_command cmd = { .name = "build", .shell = "echo out >junk.o; test -e pass" };
	char *cache = path_in("disk-cache"), *repo = path_in("bare.git");
	char *dir = path_in("workers/d");
	struct probe_spec spec = { .cmds = &cmd, .cmds_nr = 1, .cache_dir = cache };
	struct probe_result r = PROBE_RESULT_INIT;
	struct strvec events = STRVEC_INIT;
	struct worker *w;

	assert_int_equal(worker_open(&w, repo, dir, fixture_wo()), 0);
	worker_min_free_set(1ULL << 62);
	assert_int_equal(probe_run(&r, w, &c2, 1, &spec), 0);
	assert_int_equal(r.verdict, PROBE_INFRA);
	assert_non_null(strstr(r.infra_reason, "`build` of "));
	assert_non_null(strstr(r.infra_reason, "(\"c2\") left the disk of"));
	assert_non_null(strstr(r.infra_reason, "a failure on a full disk is nobody's"));
	sh("test ! -e %s/workers/d/tree && test ! -e %s/workers/d/git", top, top);
	sh("test -z \"$(find %s/disk-cache -type f 2>/dev/null)\"", top);
	probe_result_release(&r);
	/* a pass is a pass, and its worker goes too */
	cmd.shell = "echo out >junk.o && test -e b";
	assert_int_equal(probe_run(&r, w, &c2, 2, &spec), 0);
	assert_int_equal(r.verdict, PROBE_GOOD);
	sh("test ! -e %s/workers/d/tree/junk.o", top);
	worker_disk_events_take(&events);
	assert_int_equal(events.nr, 2);
	assert_non_null(strstr(events.v[1], "its worker was removed"));
	strvec_clear(&events);
	worker_disk_events_take(&events);
	assert_int_equal(events.nr, 0);
	/* room again: the worker is kept (another command: the pass above is cached) */
	worker_min_free_set(0);
	cmd.shell = "echo out >junk.o && test -e a";
	assert_int_equal(probe_run(&r, w, &c2, 3, &spec), 0);
	assert_int_equal(r.verdict, PROBE_GOOD);
	sh("test -e %s/workers/d/tree/junk.o", top);
	probe_result_release(&r);
	worker_free(w);
	free(cache);
	free(repo);
	free(dir);
}

static void verdicts(void **state)
{
	int code = 0, to = 0;
	char *want;

	assert_int_equal(probe_shell("exit 0", 0, NULL, NULL), PROBE_GOOD);
	assert_int_equal(probe_shell("exit 125", 0, NULL, NULL), PROBE_SKIP);
	assert_int_equal(probe_shell("exit 1", 0, &code, NULL), PROBE_BAD);
	assert_int_equal(code, 1);
	assert_int_equal(probe_shell("exit 200", 0, &code, NULL), PROBE_BAD);
	assert_int_equal(probe_shell("kill -SEGV $$", 0, &code, NULL), PROBE_BAD);
	assert_int_equal(code, 128 + 11);
	assert_int_equal(probe_shell("no-such-tool-xyz", 0, &code, NULL), PROBE_BAD);
	assert_int_equal(code, 127);
	assert_int_equal(probe_shell("sleep 30", 0.5, &code, &to), PROBE_BAD);
	assert_true(to);
	/* the environment names tree, commit, date and step; the tree is the commit's */
	want = xstrfmt("test \"$NEXTBOT_TREE $NEXTBOT_COMMIT $NEXTBOT_DATE $NEXTBOT_STEP\" = "
		       "'mm %s 2026-12-03 7' && grep -qx b2 b && test ! -e sub/c",
		       git_oid_tostr_s(&c2));
	assert_int_equal(probe_shell(want, 0, NULL, NULL), PROBE_GOOD);
	free(want);
}

static void argv_exec_failure_is_infra(void **state)
{
	static const char *const argv[] = { "/nonexistent/tool", NULL };
	struct probe_command cmd = { .name = "t", .argv = argv };
	struct probe_spec spec = { .cmds = &cmd, .cmds_nr = 1 };
	struct probe_result r = PROBE_RESULT_INIT;
	struct worker *w;
	char *repo = path_in("bare.git"), *dir = path_in("workers/x");

	assert_int_equal(worker_open(&w, repo, dir, fixture_wo()), 0);
	assert_int_equal(probe_run(&r, w, &c1, 1, &spec), 0);
	assert_int_equal(r.verdict, PROBE_INFRA);
	assert_non_null(r.infra_reason);
	probe_result_release(&r);
	worker_free(w);
	free(repo);
	free(dir);
}

/* make's second run fails on `ln -s` (the link exists): pristine retry saves it. */
static void pristine_retry(void **state)
{
	struct probe_command cmd = { .name = "build", .shell = "make -s", .timeout = 60 };
	struct probe_spec spec = { .cmds = &cmd, .cmds_nr = 1 };
	struct probe_result r = PROBE_RESULT_INIT;
	struct worker *w;
	char *repo = path_in("bare.git"), *dir = path_in("workers/m");
	char *runs = path_in("runs");

	spec.runs_dir = runs;
	assert_int_equal(worker_open(&w, repo, dir, fixture_wo()), 0);
	assert_int_equal(probe_run(&r, w, &c1, 1, &spec), 0);
	assert_int_equal(r.verdict, PROBE_GOOD);
	/* without the retry, the incremental run of the same good commit fails */
	assert_int_equal(probe_run(&r, w, &c2, 2, &spec), 0);
	assert_int_equal(r.verdict, PROBE_BAD);
	assert_non_null(r.log_path);
	sh("test -s %s", r.log_path);
	spec.pristine_retry = 1;
	assert_int_equal(probe_run(&r, w, &c2, 3, &spec), 0);
	assert_int_equal(r.verdict, PROBE_GOOD);
	assert_true(r.pristine_retried);
	assert_true(r.incremental_only);
	/* a real failure fails pristine too */
	assert_int_equal(probe_run(&r, w, &c3, 4, &spec), 0);
	assert_int_equal(r.verdict, PROBE_BAD);
	assert_true(r.pristine_retried);
	assert_non_null(strstr(r.log_path, "-pristine.log"));
	assert_int_equal(r.exit_code, 2);
	probe_result_release(&r);
	worker_free(w);
	free(repo);
	free(dir);
	free(runs);
}

/* Known facts: a culprit's failure round-trips whole; a damaged one is no fact. */
static void facts(const char *cdir)
{
	struct probe_result f = PROBE_RESULT_INIT, g = PROBE_RESULT_INIT;
	struct strbuf note = STRBUF_INIT;
	char date[11], key[SHA1_HEXSZ + 1], *p;
	int passes = -1;

	verdict_key(key, "culprit", "make", NULL, "local");
	assert_int_equal(known_pair_get(cdir, key, &g, date), 0);
	f.verdict = PROBE_BAD;
	f.cmd_index = 1;
	f.exit_code = 2;
	f.limit = xstrdup("killed: memory\nlimit");
	/* output with every byte a line could hold, "output" lines included */
	strbuf_addstr(&f.output, "cc: error\noutput\n\r\x01\xff tail");
	assert_int_equal(known_pair_put(cdir, key, &f, "2026-12-03"), 0);
	assert_int_equal(known_pair_get(cdir, key, &g, date), 1);
	assert_string_equal(date, "2026-12-03");
	assert_int_equal(g.verdict, PROBE_BAD);
	assert_int_equal(g.cmd_index, 1);
	assert_int_equal(g.exit_code, 2);
	assert_string_equal(g.limit, "killed: memory limit");
	assert_int_equal(g.output.len, f.output.len);
	assert_memory_equal(g.output.buf, f.output.buf, f.output.len);
	/* a cut-short file is not half a fact; nor is a plain verdict */
	p = xstrfmt("%s/%.2s/%s", cdir, key, key + 2);
	assert_int_equal(file_write_atomic(p, "fact 900\ndate x\n", 16), 0);
	assert_int_equal(known_pair_get(cdir, key, &g, date), 0);
	assert_int_equal(file_write_atomic(p, "good\n", 5), 0);
	assert_int_equal(known_pair_get(cdir, key, &g, date), 0);
	assert_int_equal(known_revert_get(cdir, key, &passes, &note), 0);
	assert_int_equal(known_revert_put(cdir, key, 1, "# revert: another\nfailure"), 0);
	assert_int_equal(known_revert_get(cdir, key, &passes, &note), 1);
	assert_int_equal(passes, 1);
	assert_string_equal(note.buf, "# revert: another failure");
	free(p);
	strbuf_release(&note);
	probe_result_release(&f);
	probe_result_release(&g);
}

static void cache(void **state)
{
	struct probe_command cmds[2] = {
		{ .name = "build", .shell = "echo run >>../../count; make -s", .timeout = 60,
		  .skip_on_fail = 1 },
		{ .name = "test", .shell = "test -e out", .timeout = 60 },
	};
	static const char *const env_a[] = { "A=1", "B=2", NULL }, *const env_b[] = { "B=2", "A=1",
										    NULL };
	struct probe_spec spec = { .cmds = cmds, .cmds_nr = 2, .pristine_retry = 1 };
	struct probe_result r = PROBE_RESULT_INIT;
	struct worker *w;
	char *repo = path_in("bare.git"), *dir = path_in("workers/c"), *cdir = path_in("verdicts");
	char *p;
	struct nb_oid k1 = NB_OID_INIT, k2 = NB_OID_INIT;
	int code = 0;

	spec.cache_dir = cdir;
	assert_int_equal(worker_open(&w, repo, dir, fixture_wo()), 0);
	assert_int_equal(probe_run(&r, w, &c1, 1, &spec), 0);
	assert_int_equal(r.verdict, PROBE_GOOD);
	assert_false(r.from_cache);
	assert_int_equal(probe_run(&r, w, &c1, 2, &spec), 0);
	assert_int_equal(r.verdict, PROBE_GOOD);
	assert_true(r.from_cache);
	assert_int_equal(r.runs, 0);
	/* a build failure while a test is bisected is a skip; cached once pristine */
	assert_int_equal(probe_run(&r, w, &c3, 3, &spec), 0);
	if (r.verdict == PROBE_INFRA)
		print_message("infra: %s\n", r.infra_reason);
	assert_int_equal(r.verdict, PROBE_SKIP);
	assert_true(r.pristine_retried);
	assert_int_equal(probe_run(&r, w, &c3, 4, &spec), 0);
	assert_int_equal(r.verdict, PROBE_SKIP);
	assert_true(r.from_cache);
	/* confirmation runs bypass the cache */
	spec.no_cache = spec.pristine = 1;
	assert_int_equal(probe_run(&r, w, &c1, 5, &spec), 0);
	assert_false(r.from_cache);
	assert_int_equal(r.runs, 2);
	sh("test $(wc -l <%s/workers/count) = 4", top);
	/* keys: env order does not matter, its content and the runner do */
	verdict_key(k1.hex, "t", "make", env_a, "local");
	verdict_key(k2.hex, "t", "make", env_b, "local");
	assert_string_equal(k1.hex, k2.hex);
	verdict_key(k2.hex, "t", "make", env_a, "slurm");
	assert_string_not_equal(k1.hex, k2.hex);
	verdict_key(k2.hex, "t", "make", NULL, "local");
	assert_string_not_equal(k1.hex, k2.hex);
	verdict_key(k2.hex, "u", "make", env_a, "local");
	assert_string_not_equal(k1.hex, k2.hex);
	/* damaged entries are no verdict */
	assert_int_equal(verdict_put(cdir, k1.hex, VERDICT_BAD, 2, "x"), 0);
	assert_int_equal(verdict_get(cdir, k1.hex, &code), VERDICT_BAD);
	assert_int_equal(code, 2);
	p = xstrfmt("%s/%.2s/%s", cdir, k1.hex, k1.hex + 2);
	assert_int_equal(file_write_atomic(p, "ba", 2), 0);
	assert_int_equal(verdict_get(cdir, k1.hex, NULL), VERDICT_NONE);
	assert_int_equal(file_write_atomic(p, "bad x\n", 6), 0);
	assert_int_equal(verdict_get(cdir, k1.hex, NULL), VERDICT_NONE);
	assert_int_equal(verdict_get(cdir, "../../etc/passwd", NULL), VERDICT_NONE);
	free(p);
	facts(cdir);
	probe_result_release(&r);
	worker_free(w);
	free(repo);
	free(dir);
	free(cdir);
}

static void many_at_once(void **state)
{
	struct probe_command cmd = {
		.name = "t",
		.shell = "sleep 0.3; grep -qx b2 b",
		.timeout = 30,
	};
	struct probe_spec spec = { .cmds = &cmd, .cmds_nr = 1 };
	struct probe_result r[3] = { PROBE_RESULT_INIT, PROBE_RESULT_INIT, PROBE_RESULT_INIT };
	struct worker *w[3];
	git_oid commits[3] = { c1, c2, c3 };
	char *repo = path_in("bare.git"), *dir;
	int i;

	for (i = 0; i < 3; i++) {
		dir = path_in("workers/j%d", i);
		assert_int_equal(worker_open(&w[i], repo, dir, fixture_wo()), 0);
		free(dir);
	}
	assert_int_equal(probe_run_many(r, w, commits, 3, 10, &spec), 0);
	assert_int_equal(r[0].verdict, PROBE_BAD);
	assert_int_equal(r[1].verdict, PROBE_GOOD);
	assert_int_equal(r[2].verdict, PROBE_GOOD);
	for (i = 0; i < 3; i++) {
		probe_result_release(&r[i]);
		worker_free(w[i]);
	}
	free(repo);
}


/* ---- the nightly search, on small hand-built nights ---- */

/* Shell helpers for building a night in $1: trees are branches, next merges them. */
static const char night_lib[] =
	"set -e; G='git -c user.name=t -c user.email=t@e.org -c maintenance.auto=false'; "
	"commit() { printf '%s\\n' \"$2\" >\"$1\"; git add -A; $G commit -qm \"$3\"; }; "
	"remove() { git rm -q \"$1\"; $G commit -qm \"$2\"; }; "
	"step() { b=$(git rev-parse HEAD); $G merge -q --no-ff -m \"Merge $1\" \"$1\"; "
	"echo \"$1 $b $(git rev-parse HEAD) $(git rev-parse $1)\" >>../steps; }; "
	/* revert TREE SUBJECT: the night reverted that commit of TREE (a non-merge step) */
	"revert() { b=$(git rev-parse HEAD); c=$(git rev-parse \":/^$2\"); "
	"$G revert --no-edit $c >/dev/null; "
	"echo \"-$1 $b $(git rev-parse HEAD) $c\" >>../steps; }; ";

struct night_fixture {
	char dir[300];
	struct culprit_step steps[8];
	char ids[8][4][NB_OID_HEXSZ + 1];
	char names[8][32];
	size_t nr;
};

/* A culprit step of hex ids (NULL: none). */
static struct culprit_step step_of(const char *tree, int is_merge, const char *before,
				   const char *after, const char *merged, const char *reverted)
{
	struct culprit_step st = { tree, is_merge, NB_OID_INIT, NB_OID_INIT, NB_OID_INIT,
				   NB_OID_INIT };

	assert_int_equal(nb_oid_parse(&st.before, before), 0);
	assert_int_equal(nb_oid_parse(&st.after, after), 0);
	if (merged)
		assert_int_equal(nb_oid_parse(&st.merged, merged), 0);
	if (reverted)
		assert_int_equal(nb_oid_parse(&st.reverted, reverted), 0);
	return st;
}

/* Runs `script` (after night_lib) in a fresh repository and reads ../steps. */
static void night_make(struct night_fixture *nf, const char *name, const char *script)
{
	char line[512], *path;
	FILE *f;

	memset(nf, 0, sizeof(*nf));
	snprintf(nf->dir, sizeof(nf->dir), "%s/%s", top, name);
	sh("mkdir -p %s && cd %s && git init -q repo && cd repo && %s %s", nf->dir, nf->dir,
	   night_lib, script);
	path = xstrfmt("%s/steps", nf->dir);
	f = fopen(path, "r");
	assert_non_null(f);
	while (nf->nr < 8 && fgets(line, sizeof(line), f)) {
		size_t i = nf->nr++;

		assert_int_equal(sscanf(line, "%31s %40s %40s %40s", nf->names[i], nf->ids[i][0],
					nf->ids[i][1], nf->ids[i][2]),
				 4);
		nf->steps[i] = step_of(nf->names[i], 1, nf->ids[i][0], nf->ids[i][1],
				       nf->ids[i][2], NULL);
		if (nf->names[i][0] == '-')     /* a revert step */
			nf->steps[i] = step_of(nf->names[i] + 1, 0, nf->ids[i][0], nf->ids[i][1],
					       nf->ids[i][1], nf->ids[i][2]);
	}
	fclose(f);
	free(path);
}

/* The id of the commit whose subject starts with `subject`. */
static void night_commit(struct nb_oid *out, const struct night_fixture *nf, const char *subject)
{
	char *cmd = xstrfmt("git -C %s/repo rev-parse ':/^%s'", nf->dir, subject);
	FILE *p = popen(cmd, "r");

	assert_non_null(p);
	assert_non_null(fgets(out->hex, sizeof(out->hex), p));
	pclose(p);
	free(cmd);
}

static void night_find(struct culprit_result *r, const struct night_fixture *nf,
		       const struct culprit_command *builds, size_t builds_nr,
		       const struct culprit_command *tests, size_t tests_nr, unsigned jobs)
{
	struct culprit_opts o = { 0 };
	char *repo = xstrfmt("%s/repo", nf->dir), *workers = xstrfmt("%s/workers", nf->dir);
	char *cache = xstrfmt("%s/verdicts", nf->dir), *runs = xstrfmt("%s/runs", nf->dir);

	o.repo_path = repo;
	o.workers_dir = workers;
	o.cache_dir = cache;
	o.runs_dir = runs;
	o.date = "2026-12-03";
	o.steps = nf->steps;
	o.steps_nr = nf->nr;
	o.builds = builds;
	o.builds_nr = builds_nr;
	o.tests = tests;
	o.tests_nr = tests_nr;
	o.failing = 0;
	o.failing_is_test = tests_nr > 0;
	o.confirm = 2;
	o.jobs = jobs;
	o.runner = "local";
	o.exe = fixture_nextbot();
	assert_int_equal(culprit_find(r, &o), 0);
	if (getenv("NB_DEBUG")) {
		size_t i;

		print_message("outcome %s tree %s commit %s partner %s infra %s\n",
			      culprit_outcome_name(r->outcome), r->tree, r->commit.hex,
			      r->partner_commit.hex,
			      r->infra_reason ? r->infra_reason : "");
		for (i = 0; i < r->log.nr; i++)
			print_message("  %s\n", r->log.v[i]);
	}
	free(repo);
	free(workers);
	free(cache);
	free(runs);
}

static const struct culprit_command no_broken = {
	.name = "x86_64",
	.command = "test ! -e BROKEN",
	.timeout = 30,
};

static const char linear_night[] =
	"commit README base base; git tag base; "
	"git checkout -q -b beta base; commit b1 1 'beta: one'; commit b2 2 'beta: two'; "
	"git checkout -q -b alpha base; for i in 1 2 3 4 5 6 7 8 9; do "
	"  commit a$i $i \"alpha: patch $i\"; "
	"  if [ $i = 6 ]; then commit BROKEN x 'alpha: break the build'; fi; done; "
	"git checkout -q -b gamma base; commit g1 1 'gamma: one'; "
	"git checkout -q -b next base; step beta; step alpha; step gamma";

static int strvec_contains_prefix(const struct strvec *v, const char *prefix)
{
	size_t i;

	for (i = 0; i < v->nr; i++)
		if (str_starts_with(v->v[i], prefix))
			return 1;
	return 0;
}

static void night_linear_tree_slow(void **state)
{
	struct night_fixture nf;
	struct culprit_result r = CULPRIT_RESULT_INIT;
	struct nb_oid want = NB_OID_INIT;
	char flag_id[13];

	night_make(&nf, "linear", linear_night);
	night_commit(&want, &nf, "alpha: break the build");
	night_find(&r, &nf, &no_broken, 1, NULL, 0, 1);
	assert_string_equal(culprit_outcome_name(r.outcome), "found");
	assert_string_equal(r.tree, "alpha");
	assert_int_equal(r.step, 1);
	assert_string_equal(r.commit.hex, want.hex);
	assert_string_equal(r.subject, "alpha: break the build");
	assert_string_equal(r.partner_commit.hex, "");
	assert_int_equal(r.verdict.culprit_fails, 2);
	assert_int_equal(r.verdict.parent_passes, 2);
	assert_int_equal(r.verdict.revert_passes, 1);
	assert_int_equal(r.confirm_runs, 5);
	assert_true(r.steps >= 2 && r.steps <= 8);
	assert_string_equal(r.command, "x86_64");
	assert_int_equal(r.exit_code, 1);
	assert_int_equal(strlen(r.flag_id), 12);
	assert_non_null(strstr(r.fingerprint, "\nx86_64\n"));
	snprintf(flag_id, sizeof(flag_id), "%s", r.flag_id);
	culprit_result_release(&r);
	/* again with three jobs, from the verdict cache: the confirmation is known */
	night_find(&r, &nf, &no_broken, 1, NULL, 0, 3);
	assert_string_equal(culprit_outcome_name(r.outcome), "found");
	assert_string_equal(r.commit.hex, want.hex);
	assert_int_equal(r.confirm_runs, 0);
	assert_true(r.known);
	assert_int_equal(r.verdict.culprit_fails, 2);
	assert_int_equal(r.verdict.parent_passes, 2);
	assert_int_equal(r.verdict.revert_passes, 1);
	assert_string_equal(r.flag_id, flag_id);
	assert_int_equal(r.exit_code, 1);
	assert_true(strvec_contains_prefix(&r.log, "# confirmation: known since 2026-12-03"));
	culprit_result_release(&r);
}

static const char merges_night[] =
	"commit README base base; git tag base; "
	"git checkout -q -b alpha base; commit a1 1 'alpha: one'; commit a2 2 'alpha: two'; "
	"git checkout -q -b side alpha; commit s1 1 'side: one'; "
	"commit BROKEN x 'side: break'; commit s3 3 'side: three'; "
	"git checkout -q alpha; commit a3 3 'alpha: three'; "
	"$G merge -q --no-ff -m 'alpha: merge side' side; commit a4 4 'alpha: four'; "
	"git checkout -q -b next base; commit n1 1 'mainline: one'; step alpha";

static void night_tree_with_merges(void **state)
{
	struct night_fixture nf;
	struct culprit_result r = CULPRIT_RESULT_INIT;
	struct nb_oid want = NB_OID_INIT;

	night_make(&nf, "merges", merges_night);
	night_commit(&want, &nf, "side: break");
	night_find(&r, &nf, &no_broken, 1, NULL, 0, 2);
	assert_string_equal(culprit_outcome_name(r.outcome), "found");
	assert_string_equal(r.tree, "alpha");
	assert_string_equal(r.commit.hex, want.hex);
	culprit_result_release(&r);
}

/* gamma renames an API, delta adds a user of the old name: fine alone, broken together. */
static const char semantic_night[] =
	"commit api_v1 v1 base; git tag base; "
	"git checkout -q -b gamma base; commit g1 1 'gamma: one'; "
	"remove api_v1 'gamma: drop the old api'; commit api_v2 v2 'gamma: new api'; "
	"commit g4 4 'gamma: four'; "
	"git checkout -q -b other base; commit o1 1 'other: one'; "
	"git checkout -q -b delta base; commit d1 1 'delta: one'; "
	"commit user_v1 u 'delta: use the old api'; commit d3 3 'delta: three'; "
	"git checkout -q -b next base; step gamma; step other; step delta";

static void night_semantic_pair_slow(void **state)
{
	static const struct culprit_command build = {
		.name = "x86_64",
		.command = "if [ -e user_v1 ] && [ ! -e api_v1 ]; then exit 1; fi",
		.timeout = 30,
	};
	struct night_fixture nf;
	struct culprit_result r = CULPRIT_RESULT_INIT;
	struct nb_oid culprit = NB_OID_INIT, partner = NB_OID_INIT;

	night_make(&nf, "semantic", semantic_night);
	night_commit(&culprit, &nf, "delta: use the old api");
	night_commit(&partner, &nf, "gamma: drop the old api");
	night_find(&r, &nf, &build, 1, NULL, 0, 1);
	assert_string_equal(culprit_outcome_name(r.outcome), "found");
	assert_string_equal(r.tree, "delta");
	assert_string_equal(r.commit.hex, culprit.hex);
	assert_non_null(r.partner_tree);
	assert_string_equal(r.partner_tree, "gamma");
	assert_string_equal(r.partner_commit.hex, partner.hex);
	culprit_result_release(&r);
}

/*
 * A build that fails 30% of the time, whatever the commit (deterministically
 * pseudo-random per run): never blamed with confirm 2.
 */
static void night_flaky_never_blamed_slow(void **state)
{
	struct night_fixture nf;
	struct culprit_result r = CULPRIT_RESULT_INIT;
	int seed, flaky = 0;

	night_make(&nf, "flaky", linear_night);
	sh("rm -f %s/repo/BROKEN", nf.dir);
	for (seed = 1; seed <= 12; seed++) {
		char *cmd = xstrfmt("f=%s/counter; n=$(cat $f 2>/dev/null || echo %d); "
				    "echo $((n + 1)) >$f; test $(( (n * 7919 + 13) %% 10 )) -ge 3",
				    nf.dir, seed * 31);
		struct culprit_command build = { .name = "x86_64", .command = cmd, .timeout = 30 };
		struct night_fixture copy = nf;
		size_t i;

		for (i = 0; i < copy.nr; i++)
			copy.steps[i] = step_of(copy.names[i], 1, copy.ids[i][0], copy.ids[i][1],
						copy.ids[i][2], NULL);
		sh("rm -rf %s/verdicts %s/counter", nf.dir, nf.dir);
		/* make "BROKEN" irrelevant: this command looks at nothing in the tree */
		night_find(&r, &copy, &build, 1, NULL, 0, 1);
		assert_true(r.outcome != CULPRIT_FOUND);
		flaky += r.outcome == CULPRIT_FLAKY;
		if (r.outcome == CULPRIT_FLAKY)
			assert_true(r.flaky_runs > 0 && r.flaky_fails <= r.flaky_runs);
		culprit_result_release(&r);
		free(cmd);
	}
	print_message("# flaky command: %d of 12 nights reported flaky, none blamed\n", flaky);
}

/*
 * make's second run fails on `ln -s`.  Probes in kept trees (`incremental: true`)
 * retry a failure pristine; clean probes (the default) never see it.  Both find
 * the right patch.
 */
static void night_incremental_unsafe_slow(void **state)
{
	struct culprit_command build = { .name = "make", .command = "make -s", .timeout = 60 };
	struct night_fixture nf;
	struct culprit_result r = CULPRIT_RESULT_INIT;
	struct nb_oid want = NB_OID_INIT;
	int kept;

	night_make(&nf, "incremental",
		   "printf 'all:\\n\\tln -s README link\\n\\ttest ! -e BROKEN\\n' >Makefile; "
		   "commit README base base; git tag base; "
		   "git checkout -q -b alpha base; for i in 1 2 3 4 5 6 7; do "
		   "  commit a$i $i \"alpha: patch $i\"; "
		   "  if [ $i = 3 ]; then commit BROKEN x 'alpha: break'; fi; done; "
		   "git checkout -q -b next base; step alpha");
	night_commit(&want, &nf, "alpha: break");
	for (kept = 1; kept >= 0; kept--) {
		build.incremental = kept;
		sh("rm -rf %s/verdicts", nf.dir);
		night_find(&r, &nf, &build, 1, NULL, 0, 1);
		assert_string_equal(culprit_outcome_name(r.outcome), "found");
		assert_string_equal(r.commit.hex, want.hex);
		assert_int_equal(r.incremental_unsafe, kept);
		culprit_result_release(&r);
	}
}

/* 1 when a line of `log` starts with `prefix`. */
static int log_has(const struct strvec *log, const char *prefix)
{
	size_t i;

	for (i = 0; i < log->nr; i++)
		if (!strncmp(log->v[i], prefix, strlen(prefix)))
			return 1;
	return 0;
}

/*
 * A test that passes whenever an earlier probe left an untracked stamp (a passing
 * probe from patch 3 on leaves one): in kept trees every probe after such a one
 * passes, so the search ends on the wrong patch; its clean confirmation
 * contradicts it and the search is made again in clean trees.  Clean probes
 * never see a stamp.  Either way the breaker is found and nothing is called
 * flaky.
 */
static void night_untracked_stamp_slow(void **state)
{
	struct culprit_command test = {
		.name = "selftests",
		.command = "if [ ! -e stamp ] && [ -e BROKEN ]; then echo 'FAIL: broken'; "
			   "exit 1; fi; if [ -e a3 ]; then touch stamp; fi",
		.timeout = 30,
	};
	struct night_fixture nf;
	struct culprit_result r = CULPRIT_RESULT_INIT;
	struct nb_oid want = NB_OID_INIT;
	int kept;

	night_make(&nf, "stamp",
		   "commit README base base; git tag base; "
		   "git checkout -q -b alpha base; for i in 1 2 3 4 5 6 7 8 9; do "
		   "  commit a$i $i \"alpha: patch $i\"; "
		   "  if [ $i = 6 ]; then commit BROKEN x 'alpha: break'; fi; done; "
		   "git checkout -q -b next base; step alpha");
	night_commit(&want, &nf, "alpha: break");
	for (kept = 1; kept >= 0; kept--) {
		test.incremental = kept;
		sh("rm -rf %s/verdicts %s/workers", nf.dir, nf.dir);
		night_find(&r, &nf, NULL, 0, &test, 1, 1);
		assert_string_equal(culprit_outcome_name(r.outcome), "found");
		assert_string_equal(r.commit.hex, want.hex);
		/* in kept trees, the stamp misled the first search */
		assert_int_equal(log_has(&r.log, "# confirmation in clean trees contradicts"),
				 kept);
		culprit_result_release(&r);
	}
}

/*
 * An earlier tree's flaky test masks the culprit's failure in some runs (`make
 * test` stops at the first failing test): it fails in the culprit's runs with its
 * own error, and in the parent's too.  Such runs neither confirm nor contradict:
 * they are run again.  The culprit is flagged with its own error, and nobody is
 * called flaky.  The flaky test fails every third run (a counter outside the tree).
 */
static void night_masked_by_flaky_slow(void **state)
{
	struct night_fixture nf;
	struct culprit_result r = CULPRIT_RESULT_INIT;
	struct nb_oid want = NB_OID_INIT;
	struct culprit_command test = { .name = "selftests", .timeout = 30 };
	char *cmd;

	night_make(&nf, "masked",
		   "commit README base base; git tag base; "
		   "git checkout -q -b vfs base; commit v1 1 'vfs: one'; "
		   "commit FLAKY x 'vfs: a test over random sizes'; "
		   "git checkout -q -b sched base; for i in 1 2 3 4 5; do "
		   "  commit s$i $i \"sched: patch $i\"; "
		   "  if [ $i = 3 ]; then commit BROKEN x 'sched: break the test'; fi; done; "
		   "git checkout -q -b next base; step vfs; step sched");
	night_commit(&want, &nf, "sched: break the test");
	cmd = xstrfmt("c=%s/counter; n=$(cat $c 2>/dev/null || echo 0); echo $((n + 1)) >$c; "
		      "if [ -e FLAKY ] && [ $((n %% 3)) = 2 ]; then "
		      "echo 'tests/test_fs.c:21: FAIL: random sizes'; exit 1; fi; "
		      "if [ -e BROKEN ]; then echo 'tests/test_sched.c:8: FAIL: pages'; exit 1; fi",
		      nf.dir);
	test.command = cmd;
	night_find(&r, &nf, NULL, 0, &test, 1, 1);
	assert_string_equal(culprit_outcome_name(r.outcome), "found");
	assert_string_equal(r.commit.hex, want.hex);
	assert_non_null(strstr(r.first_error, "test_sched.c"));
	assert_int_equal(r.verdict.culprit_fails, 2);
	assert_int_equal(r.verdict.parent_passes, 2);
	culprit_result_release(&r);
	free(cmd);
}

/* A build that fails while the file NOBUILD exists, and a test that fails on TESTFAIL. */
static const struct culprit_command nobuild_build = {
	.name = "build",
	.command = "test ! -e NOBUILD",
	.timeout = 30,
};
static const struct culprit_command testfail_test = {
	.name = "selftests",
	.command = "test ! -e TESTFAIL",
	.timeout = 30,
};

/* Bisecting a test failure: a commit whose build fails is a skip, never the culprit. */
static void night_build_failure_is_skip_slow(void **state)
{
	struct night_fixture nf;
	struct culprit_result r = CULPRIT_RESULT_INIT;
	struct nb_oid want = NB_OID_INIT;
	size_t i;

	night_make(&nf, "skip",
		   "commit README base base; git tag base; "
		   "git checkout -q -b alpha base; commit a1 1 'alpha: one'; "
		   "commit NOBUILD x 'alpha: build broken'; commit a3 3 'alpha: three'; "
		   "commit a4 4 'alpha: four'; remove NOBUILD 'alpha: build fixed'; "
		   "commit TESTFAIL x 'alpha: break a test'; commit a7 7 'alpha: seven'; "
		   "git checkout -q -b next base; step alpha");
	night_commit(&want, &nf, "alpha: break a test");
	night_find(&r, &nf, &nobuild_build, 1, &testfail_test, 1, 1);
	assert_string_equal(culprit_outcome_name(r.outcome), "found");
	assert_string_equal(r.commit.hex, want.hex);
	assert_string_equal(r.command, "selftests");
	for (i = 0; i < r.log.nr && !str_starts_with(r.log.v[i], "git bisect skip"); i++)
		;
	assert_true(i < r.log.nr);
	culprit_result_release(&r);
}

/*
 * Two breakages in one tree, one night.  The build breakage was found after the
 * merge and reverted as a step; the final check then finds a test failure: the
 * search must blame it whether it comes after or before the reverted commit.
 */
static void night_test_after_reverted_build_breakage_slow(void **state)
{
	static const char *const orders[] = {
		"commit NOBUILD x 'alpha: build broken'; commit a2 2 'alpha: two'; "
		"commit TESTFAIL x 'alpha: break a test'; commit a4 4 'alpha: four'; ",
		"commit TESTFAIL x 'alpha: break a test'; commit a2 2 'alpha: two'; "
		"commit NOBUILD x 'alpha: build broken'; commit a4 4 'alpha: four'; ",
	};
	struct night_fixture nf;
	struct culprit_result r = CULPRIT_RESULT_INIT;
	char *script;
	struct nb_oid want = NB_OID_INIT;
	size_t i;

	for (i = 0; i < 2; i++) {
		script = xstrfmt("commit README base base; git tag base; "
				 "git checkout -q -b beta base; commit b1 1 'beta: one'; "
				 "git checkout -q -b alpha base; commit a1 1 'alpha: one'; %s"
				 "git checkout -q -b gamma base; commit g1 1 'gamma: one'; "
				 "git checkout -q -b next base; step beta; step alpha; "
				 "revert alpha 'alpha: build broken'; step gamma",
				 orders[i]);
		night_make(&nf, i ? "reverted-build-after" : "reverted-build-before", script);
		free(script);
		assert_int_equal(nf.nr, 4);
		if (i)  /* the step's commit read from the revert's message */
			nb_oid_clear(&nf.steps[2].reverted);
		night_commit(&want, &nf, "alpha: break a test");
		night_find(&r, &nf, &nobuild_build, 1, &testfail_test, 1, 1);
		assert_string_equal(culprit_outcome_name(r.outcome), "found");
		assert_string_equal(r.tree, "alpha");
		assert_int_equal(r.step, 1);
		assert_string_equal(r.commit.hex, want.hex);
		assert_string_equal(r.command, "selftests");
		assert_int_equal(r.verdict.revert_passes, 1);
		culprit_result_release(&r);
	}
}

/* A build that prints a compiler-like error naming the first BREAK* file present. */
static const struct culprit_command break_build = {
	.name = "x86_64",
	.command = "for f in BREAK*; do [ -e \"$f\" ] || continue; "
		   "echo \"src/$(cat $f).c:12:3: error: '$(cat $f)' undeclared\"; exit 1; done",
	.timeout = 30,
};

/*
 * Two build breakages in one tree: the first is found, and confirmed although next
 * with it reverted still fails (with the other's error); once reverted as a step,
 * the second is found.  Two breakages with the same error stay unconfirmed.
 */
static void night_two_build_breakages_slow(void **state)
{
	static const char tree[] =
		"commit README base base; git tag base; "
		"git checkout -q -b alpha base; commit a1 1 'alpha: one'; "
		"commit BREAK1 %s 'alpha: break one'; commit a3 3 'alpha: three'; "
		"commit BREAK2 %s 'alpha: break two'; commit a5 5 'alpha: five'; "
		"git checkout -q -b beta base; commit b1 1 'beta: one'; "
		"git checkout -q -b next base; step alpha; %sstep beta";
	struct night_fixture nf;
	struct culprit_result r = CULPRIT_RESULT_INIT;
	char *script;
	struct nb_oid one = NB_OID_INIT, two = NB_OID_INIT;
	size_t i;

	script = xstrfmt(tree, "foo", "bar", "");
	night_make(&nf, "two-breakages", script);
	free(script);
	night_commit(&one, &nf, "alpha: break one");
	night_find(&r, &nf, &break_build, 1, NULL, 0, 1);
	assert_string_equal(culprit_outcome_name(r.outcome), "found");
	assert_string_equal(r.commit.hex, one.hex);
	assert_int_equal(r.verdict.revert_passes, 1);
	for (i = 0; i < r.log.nr && !strstr(r.log.v[i], "# revert: the remaining failure is a "
							"different one: src/bar.c"); i++)
		;
	assert_true(i < r.log.nr);
	assert_non_null(strstr(r.first_error, "'foo' undeclared"));
	culprit_result_release(&r);

	/* the night reverted the first: the second is found */
	script = xstrfmt(tree, "foo", "bar", "revert alpha 'alpha: break one'; ");
	night_make(&nf, "two-breakages-reverted", script);
	free(script);
	night_commit(&two, &nf, "alpha: break two");
	night_find(&r, &nf, &break_build, 1, NULL, 0, 1);
	assert_string_equal(culprit_outcome_name(r.outcome), "found");
	assert_string_equal(r.commit.hex, two.hex);
	assert_int_equal(r.step, 0);
	assert_int_equal(r.verdict.revert_passes, 1);
	assert_non_null(strstr(r.first_error, "'bar' undeclared"));
	culprit_result_release(&r);

	/* the same error twice: next with the first reverted fails the same way */
	script = xstrfmt(tree, "foo", "foo", "");
	night_make(&nf, "two-same-breakages", script);
	free(script);
	night_commit(&one, &nf, "alpha: break one");
	night_find(&r, &nf, &break_build, 1, NULL, 0, 1);
	assert_string_equal(culprit_outcome_name(r.outcome), "unconfirmed");
	assert_string_equal(r.commit.hex, one.hex);
	assert_int_equal(r.verdict.revert_passes, 0);
	culprit_result_release(&r);
}

/* Bounds before blame: a good end that fails (a missing tool) blames nobody. */
static void night_bounds_slow(void **state)
{
	static const struct culprit_command missing = { .name = "x86_64",
							.command = "no-such-compiler-xyz",
							.timeout = 30 };
	static const struct culprit_command passes = { .name = "x86_64", .command = "true",
						       .timeout = 30 };
	struct night_fixture nf;
	struct culprit_result r = CULPRIT_RESULT_INIT;

	night_make(&nf, "bounds", linear_night);
	night_find(&r, &nf, &missing, 1, NULL, 0, 1);
	assert_string_equal(culprit_outcome_name(r.outcome), "infrastructure");
	assert_non_null(strstr(r.infra_reason, "missing tool"));
	assert_string_equal(r.commit.hex, "");
	culprit_result_release(&r);
	/* a tip that passes in a clean tree: tonight's failure is not reproduced */
	night_find(&r, &nf, &passes, 1, NULL, 0, 1);
	assert_string_equal(culprit_outcome_name(r.outcome), "not-reproduced");
	assert_string_equal(r.commit.hex, "");
	culprit_result_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(incremental_checkout),
		cmocka_unit_test(incremental_undoes_the_command),
		cmocka_unit_test(pristine_checkout_filters),
		cmocka_unit_test(own_index),
		cmocka_unit_test(verdicts),
		cmocka_unit_test(disposable_worker),
		cmocka_unit_test(argv_exec_failure_is_infra),
		cmocka_unit_test(pristine_retry),
		cmocka_unit_test(cache),
		cmocka_unit_test(many_at_once),
		cmocka_unit_test(night_linear_tree_slow),
		cmocka_unit_test(night_tree_with_merges),
		cmocka_unit_test(night_semantic_pair_slow),
		cmocka_unit_test(night_flaky_never_blamed_slow),
		cmocka_unit_test(night_incremental_unsafe_slow),
		cmocka_unit_test(night_untracked_stamp_slow),
		cmocka_unit_test(night_masked_by_flaky_slow),
		cmocka_unit_test(night_build_failure_is_skip_slow),
		cmocka_unit_test(night_bounds_slow),
		cmocka_unit_test(night_test_after_reverted_build_breakage_slow),
		cmocka_unit_test(night_two_build_breakages_slow),
	};
	int rc;

	git_libgit2_init();
	rc = cmocka_run_group_tests(tests, setup, teardown);
	git_libgit2_shutdown();
	return rc;
}
