/*
 * The index file reader/writer (merge/worker/gitindex.c) and the incremental checkout by
 * what changed (merge/worker/stepcheckout.c), with git itself as the oracle: the index
 * nextbot writes is one git reads as clean, and a worker moved from commit to
 * commit in any order holds exactly what git's checkout of that commit holds.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "merge/worker/attrrules_int.h"
#include "merge/worker/gitindex_int.h"
#include "merge/git/sha1_int.h"
#include "merge/worker/worker_int.h"
#include "tests/gitfixture.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

static char top[256];

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = fixture_vsh(top, FIXTURE_PRELUDE, fmt, ap);
	va_end(ap);
	if (rc != 0)
		fail_msg("command failed (%d): %s", rc, fmt);
}

static char *out_of(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *out_of(const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = fixture_vsh_out(&sb, top, FIXTURE_PRELUDE, fmt, ap);
	va_end(ap);
	if (rc != 0)
		fail_msg("command failed (%d): %s", rc, fmt);
	strbuf_trim(&sb);
	return strbuf_detach(&sb, NULL);
}

static int setup(void **state)
{
	snprintf(top, sizeof(top), "/tmp/nb-stepco-%d", (int)getpid());
	file_remove_tree(top);
	assert_int_equal(file_mkdir_p(top, 0755), 0);
	fixture_dir = top;
	return 0;
}

static int teardown(void **state)
{
	if (!getenv("KEEP"))
		file_remove_tree(top);
	return 0;
}

static int read_index(struct gitindex *idx, struct strbuf *why, const char *gitdir)
{
	char *dir = xstrfmt("%s/%s", top, gitdir);
	int fd = open(dir, O_RDONLY | O_DIRECTORY), err;

	assert_true(fd >= 0);
	err = gitindex_read(idx, why, fd, "index");
	close(fd);
	free(dir);
	return err;
}

static void rev_oid(git_oid *out, const char *repo, const char *rev)
{
	char *hex = out_of("git --git-dir=%s rev-parse %s", repo, rev);

	assert_int_equal(git_oid_fromstr(out, hex), 0);
	free(hex);
}

/*
 * SHA-1 with the CPU's instructions (where it has them) and without, against
 * known digests and sha1sum over lengths around the 64-byte block.
 */
static void sha1_both_ways(void **state)
{
	static const size_t lens[] = { 0, 1, 55, 56, 63, 64, 65, 127, 128, 1000, 99991 };
	unsigned char *big = xmalloc(100003);
	char *path = xstrfmt("%s/big", top);
	char a[SHA1_HEXSZ + 1];
	size_t i;
	int portable;

	for (i = 0; i < 100003; i++)
		big[i] = (unsigned char)(i * 131 + (i >> 7));
	assert_int_equal(file_write_atomic(path, big, 100003), 0);
	for (portable = 0; portable < 2; portable++) {
		if (portable)
			setenv("NEXTBOT_SHA1_PORTABLE", "1", 1);
		sha1_hex(a, "abc", 3);
		assert_string_equal(a, "a9993e364706816aba3e25717850c26c9cd0d89d");
		for (i = 0; i < sizeof(lens) / sizeof(*lens); i++) {
			char *want = out_of("head -c %zu big | sha1sum | cut -c1-40", lens[i]);

			sha1_hex(a, big, lens[i]);
			assert_string_equal(a, want);
			free(want);
		}
	}
	unsetenv("NEXTBOT_SHA1_PORTABLE");
	free(big);
	free(path);
}

/*
 * An index git wrote reads as git lists it, and written back entry by entry it is
 * one git reads with every file still clean (the stat data kept).
 */
static void index_roundtrip(void **state)
{
	struct gitindex idx = GITINDEX_INIT;
	struct strbuf why = STRBUF_INIT, out = STRBUF_INIT, listed = STRBUF_INIT;
	char *want, *dir;
	size_t i;
	int fd;

	sh("git init -q rt && cd rt && mkdir -p a/b && echo 1 >a/b/x && echo 2 >a.c && "
	   "echo 3 >a-b && printf '#!/bin/sh\\n' >run && chmod +x run && ln -s a.c lnk && "
	   "c one");
	want = out_of("cd rt && git ls-files -s");
	assert_int_equal(read_index(&idx, &why, "rt/.git"), 0);
	assert_int_equal(idx.nr, 5);
	for (i = 0; i < idx.nr; i++) {
		char hex[GIT_OID_HEXSZ + 1];

		git_oid_tostr(hex, sizeof(hex), &idx.entries[i].id);
		strbuf_addf(&listed, "%o %s 0\t%s\n", idx.entries[i].mode, hex,
			    idx.entries[i].path);
	}
	strbuf_trim(&listed);
	assert_string_equal(listed.buf, want);
	gitindex_out_begin(&out);
	for (i = 0; i < idx.nr; i++)
		gitindex_out_raw(&out, &idx.entries[i]);
	gitindex_out_finish(&out, idx.nr);
	dir = xstrfmt("%s/rt/.git", top);
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_int_equal(gitindex_write(fd, "index", &out, dir), 0);
	close(fd);
	free(want);
	want = out_of("cd rt && git ls-files -s && git status --porcelain && "
		      "test ! -e .git/index.lock && git diff-files --quiet");
	assert_string_equal(listed.buf, want);
	gitindex_release(&idx);
	strbuf_release(&why);
	strbuf_release(&out);
	strbuf_release(&listed);
	free(want);
	free(dir);
}

/* What the reader does not take it names, and nothing it was not sure of is read. */
static void index_refusals(void **state)
{
	struct gitindex idx = GITINDEX_INIT;
	struct strbuf why = STRBUF_INIT, out = STRBUF_INIT;
	struct stat st;
	git_oid id;
	char *dir;
	int fd;

	sh("git init -q rf && cd rf && echo 1 >f && echo 2 >g && c one");
	assert_int_equal(read_index(&idx, &why, "rf/.git"), 0);
	gitindex_release(&idx);

	sh("cd rf && git update-index --index-version 4");
	assert_int_equal(read_index(&idx, &why, "rf/.git"), 1);
	assert_non_null(strstr(why.buf, "version 4"));
	gitindex_release(&idx);
	strbuf_reset(&why);

	sh("cd rf && git update-index --index-version 2 && git update-index --skip-worktree f");
	assert_int_equal(read_index(&idx, &why, "rf/.git"), 1);
	assert_non_null(strstr(why.buf, "skip-worktree"));
	gitindex_release(&idx);
	strbuf_reset(&why);

	/* one byte changed after the header: the checksum no longer holds */
	sh("cd rf && git update-index --no-skip-worktree f && "
	   "printf 'X' | dd of=.git/index bs=1 seek=40 conv=notrunc 2>/dev/null");
	assert_int_equal(read_index(&idx, &why, "rf/.git"), 1);
	assert_non_null(strstr(why.buf, "checksum"));
	gitindex_release(&idx);
	strbuf_reset(&why);

	/* a path out of the tree, in an index that is otherwise sound */
	memset(&st, 0, sizeof(st));
	memset(&id, 0, sizeof(id));
	gitindex_out_begin(&out);
	gitindex_out_new(&out, "../outside", &st, 0100644, &id);
	gitindex_out_finish(&out, 1);
	dir = xstrfmt("%s/rf/.git", top);
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_int_equal(gitindex_write(fd, "index", &out, dir), 0);
	close(fd);
	assert_int_equal(read_index(&idx, &why, "rf/.git"), 1);
	assert_non_null(strstr(why.buf, "leave the tree"));
	gitindex_release(&idx);
	strbuf_reset(&why);

	/* a path of 0xfff bytes or more: its length is found by its NUL */
	{
		struct strbuf longp = STRBUF_INIT;
		const struct gitindex_entry *e;

		while (longp.len < 5000)
			strbuf_addstr(&longp, "a-folder-name-of-some-length/");
		strbuf_addstr(&longp, "file");
		strbuf_reset(&out);
		gitindex_out_begin(&out);
		gitindex_out_new(&out, longp.buf, &st, 0100644, &id);
		gitindex_out_new(&out, "z", &st, 0100755, &id);
		gitindex_out_finish(&out, 2);
		assert_int_equal(gitindex_write(fd = open(dir, O_RDONLY | O_DIRECTORY), "index",
						&out, dir), 0);
		close(fd);
		assert_int_equal(read_index(&idx, &why, "rf/.git"), 0);
		assert_int_equal(idx.nr, 2);
		assert_non_null(e = gitindex_find(&idx, longp.buf));
		assert_int_equal(e->path_len, longp.len);
		assert_non_null(e = gitindex_find(&idx, "z"));
		assert_int_equal(e->mode, 0100755);
		gitindex_release(&idx);
		strbuf_release(&longp);
	}

	sh("rm rf/.git/index");
	assert_int_equal(read_index(&idx, &why, "rf/.git"), NB_ENOTFOUND);
	gitindex_release(&idx);
	strbuf_release(&why);
	strbuf_release(&out);
	free(dir);
}

static const struct worker_opts *fixture_wo(void)
{
	static struct worker_opts wo;

	wo.exe = fixture_nextbot();
	return &wo;
}

/*
 * The worker holds what git's checkout of `rev` holds: the same index (as
 * `git ls-files -s` lists it), no file differing from the commit, and the same
 * files on disk but for the build output left there on purpose.
 */
static void same_as_git(const char *rev)
{
	char *want = out_of("git -C hist.git ls-tree -r --full-tree %s | "
			    "sed -E 's/^([0-9]+) [a-z]+ ([0-9a-f]+)\t/\\1 \\2 0\t/' | "
			    "LC_ALL=C sort",
			    rev);
	char *got = out_of("cd w/tree && git ls-files -s | LC_ALL=C sort");
	char *head = out_of("cd w/tree && git rev-parse HEAD");
	char *commit = out_of("git -C hist.git rev-parse %s^{commit}", rev);
	char *files, *tracked;

	assert_string_equal(got, want);
	assert_string_equal(head, commit);
	sh("cd w/tree && git diff-index --quiet HEAD && git diff-files --quiet && "
	   "test -z \"$(git status --porcelain --untracked-files=no)\"");
	/* every tracked file there, nothing else but build output */
	files = out_of("cd w/tree && find . -path ./.git -prune -o ! -type d -print | "
		       "sed 's|^./||' | grep -v '\\.o$' | LC_ALL=C sort");
	tracked = out_of("git -C hist.git ls-tree -r --name-only --full-tree %s | LC_ALL=C sort",
			 rev);
	assert_string_equal(files, tracked);
	free(want);
	free(got);
	free(head);
	free(commit);
	free(files);
	free(tracked);
}

/*
 * A history with every kind of change a step meets: files added, removed and
 * changed, an execute bit set, a symlink, a file that becomes a folder and back,
 * folders that appear deep and go away (made once, for the tests that use it).
 */
static void history(void)
{
	sh("test -d hist.git || { git init -q hist && cd hist && mkdir -p d1 d2/deep && "
	   "for i in 1 2 3 4 5 6 7 8; do echo $i >d1/f$i; echo x$i >d2/deep/g$i; done && "
	   "echo top >top && echo same >same && c c1 && git tag c1 && "
	   "echo changed >d1/f1 && rm d1/f2 && chmod +x d1/f3 && ln -s ../top d1/link && "
	   "mkdir -p new/a/b/c && echo n >new/a/b/c/n && c c2 && git tag c2 && "
	   "rm top && mkdir top && echo inside >top/file && rm -r d2 && c c3 && git tag c3 && "
	   "rm -r top && echo top-again >top && rm d1/link && echo l >d1/link && "
	   "chmod -x d1/f3 && c c4 && git tag c4 && "
	   "rm -r new d1 && echo only >solo && c c5 && git tag c5 && "
	   "git clone -q --bare . ../hist.git; }");
}

/*
 * The worker visits the commits in an
 * order that crosses every change both ways, with build output between steps.
 */
static void steps_match_git(void **state)
{
	static const char *const order[] = { "c1", "c5", "c2", "c4", "c3", "c1", "c4",
					      "c5", "c3", "c2", "c5", "c1" };
	struct worker *w;
	char *repo = xstrfmt("%s/hist.git", top), *dir = xstrfmt("%s/w", top);
	size_t i;

	history();
	assert_int_equal(worker_open(&w, repo, dir, fixture_wo()), 0);
	for (i = 0; i < sizeof(order) / sizeof(*order); i++) {
		git_oid id;
		char *hex = out_of("git -C hist.git rev-parse %s", order[i]);

		assert_int_equal(git_oid_fromstr(&id, hex), 0);
		assert_int_equal(worker_checkout_git(w, &id, i == 0), 0);
		same_as_git(order[i]);
		/* a build leaves output beside the sources */
		sh("cd w/tree && for d in . d1 new/a; do if [ -d $d ]; then "
		   "echo obj >$d/built-%zu.o; fi; done", i);
		free(hex);
	}
	worker_free(w);
	free(repo);
	free(dir);
}

/*
 * What a command did to tracked files is undone: a file changed with its size
 * and mtime put back (only its ctime tells), a file removed, a file swapped for a
 * folder; the tree is git's again after one incremental step to the same commit.
 */
static void command_damage_undone(void **state)
{
	struct worker *w;
	char *repo = xstrfmt("%s/hist.git", top), *dir = xstrfmt("%s/w", top);
	char *hex;
	git_oid id;

	history();
	hex = out_of("git -C hist.git rev-parse c1");
	assert_int_equal(git_oid_fromstr(&id, hex), 0);
	assert_int_equal(worker_open(&w, repo, dir, fixture_wo()), 0);
	assert_int_equal(worker_checkout_git(w, &id, 0), 0);
	same_as_git("c1");
	sh("cd w/tree && sleep 0.01 && m=$(stat -c %%y d1/f4) && echo 9 >d1/f4 && "
	   "touch -d \"$m\" d1/f4 && rm d1/f5 && rm same && mkdir same && echo o >same/x.o");
	assert_int_equal(worker_checkout_git(w, &id, 0), 0);
	same_as_git("c1");
	sh("cd w/tree && grep -qx 4 d1/f4 && test -f same");
	worker_free(w);
	free(repo);
	free(dir);
	free(hex);
}

/* The stamp file of worker `wdir` names its index (a checkout of nextbot's wrote it). */
static int stamp_names_index(const char *wdir)
{
	struct gitindex idx = GITINDEX_INIT;
	struct strbuf why = STRBUF_INIT, want = STRBUF_INIT;
	char *gitdir = xstrfmt("%s/git", wdir), *line;
	size_t i;
	int same;

	assert_int_equal(read_index(&idx, &why, gitdir), 0);
	for (i = 0; i < sizeof(idx.checksum); i++)
		strbuf_addf(&want, "%02x", idx.checksum[i]);
	line = out_of("sed -n 2p %s/nextbot-checkout | cut -d' ' -f1", gitdir);
	same = !strcmp(line, want.buf);
	gitindex_release(&idx);
	strbuf_release(&why);
	strbuf_release(&want);
	free(gitdir);
	free(line);
	return same;
}

/*
 * Writes worker `wdir`'s index again with the current stat data of `path` and
 * its old blob: what an index says after a change in the same clock tick as its
 * writing (`as_nextbot`: the stamp file names the new index), or what a forged
 * one says.
 */
static void forge_index(const char *wdir, const char *path, int as_nextbot)
{
	struct gitindex idx = GITINDEX_INIT;
	struct strbuf why = STRBUF_INIT, out = STRBUF_INIT, hex = STRBUF_INIT;
	char *gitdir = xstrfmt("%s/git", wdir), *full = xstrfmt("%s/%s/git", top, wdir);
	char *file = xstrfmt("%s/%s/tree/%s", top, wdir, path);
	struct stat st;
	size_t i;
	int fd;

	assert_int_equal(read_index(&idx, &why, gitdir), 0);
	gitindex_out_begin(&out);
	for (i = 0; i < idx.nr; i++) {
		if (strcmp(idx.entries[i].path, path)) {
			gitindex_out_raw(&out, &idx.entries[i]);
			continue;
		}
		assert_int_equal(lstat(file, &st), 0);
		gitindex_out_new(&out, path, &st, idx.entries[i].mode, &idx.entries[i].id);
	}
	gitindex_out_finish(&out, idx.nr);
	fd = open(full, O_RDONLY | O_DIRECTORY);
	assert_int_equal(gitindex_write(fd, "index", &out, full), 0);
	close(fd);
	for (i = 0; i < 20; i++)
		strbuf_addf(&hex, "%02x", (unsigned char)out.buf[out.len - 20 + i]);
	if (as_nextbot)
		sh("cd %s && sed -i '2s/^[0-9a-f]* /%s /' nextbot-checkout", gitdir, hex.buf);
	gitindex_release(&idx);
	strbuf_release(&why);
	strbuf_release(&out);
	strbuf_release(&hex);
	free(gitdir);
	free(full);
	free(file);
}

/* A worker at `dir` on the history, c1 checked out whole: where the index tests start. */
static void open_at_c1(struct worker **out, git_oid *id, const char *repo, const char *dir)
{
	history();
	rev_oid(id, "hist.git", "c1");
	assert_int_equal(worker_open(out, repo, dir, fixture_wo()), 0);
	assert_int_equal(worker_checkout_git(*out, id, 1), 0);
}

/*
 * Racily clean entries (as new as the index file) have their content compared: a
 * file changed with its stat data written into the index (what a change in the
 * same clock tick as the index looks like) is found and restored, and files that
 * are still right are left alone (same inode).
 */
static void racy_entries_compared(void **state)
{
	struct worker *w;
	char *repo = xstrfmt("%s/hist.git", top), *dir = xstrfmt("%s/wr", top);
	char *ino1, *ino2;
	git_oid id;

	open_at_c1(&w, &id, repo, dir);
	ino1 = out_of("stat -c %%i wr/tree/top");
	sh("cd wr/tree && printf 'SAME\\n' >same");
	forge_index("wr", "same", 1);
	assert_true(stamp_names_index("wr"));
	/* every entry as new as the index: git compares content and sees the change */
	sh("cd wr/tree && touch -d 2000-01-01 ../git/index && ! git diff-files --quiet");
	assert_int_equal(worker_checkout_git(w, &id, 0), 0);
	ino2 = out_of("stat -c %%i wr/tree/top");
	sh("cd wr/tree && grep -qx same same && git diff-files --quiet");
	assert_string_equal(ino1, ino2);
	worker_free(w);
	free(repo);
	free(dir);
	free(ino1);
	free(ino2);
}

/*
 * A trap the scan finds sends the tree to a pristine checkout, never to a step or
 * to libgit2's checkout: a FIFO in place of a tracked file would hang a writer
 * (the checkout's time limit turns a hang into a failure here).
 */
static void trap_goes_pristine(void **state)
{
	struct worker_opts wo = *fixture_wo();
	struct worker *w;
	char *repo = xstrfmt("%s/hist.git", top), *dir = xstrfmt("%s/wt", top);
	char *c1 = NULL, *c2 = NULL;
	git_oid id1, id2;

	history();
	c1 = out_of("git -C hist.git rev-parse c1");
	c2 = out_of("git -C hist.git rev-parse c2");
	assert_int_equal(git_oid_fromstr(&id1, c1), 0);
	assert_int_equal(git_oid_fromstr(&id2, c2), 0);
	wo.timeout = 30;
	assert_int_equal(worker_open(&w, repo, dir, &wo), 0);
	assert_int_equal(worker_checkout_git(w, &id1, 1), 0);
	/* d1/f1 changes between c1 and c2: a writer would open the FIFO */
	sh("cd wt/tree && echo kept >built.o && rm d1/f1 && mkfifo d1/f1");
	assert_int_equal(worker_checkout_git(w, &id2, 0), 0);
	sh("cd wt/tree && test -f d1/f1 && ! test -p d1/f1 && grep -qx changed d1/f1 && "
	   "test ! -e built.o");
	worker_free(w);
	free(repo);
	free(dir);
	free(c1);
	free(c2);
}

/*
 * Symlinks pointing out of the tree never carry a write out: a commit's link
 * that the next commit replaces with a folder of the same name, and a link a
 * command planted where the next commit puts a folder.
 */
static void symlink_swaps_stay_inside(void **state)
{
	struct worker *w;
	char *repo = xstrfmt("%s/esc.git", top), *dir = xstrfmt("%s/we", top);
	char *ha, *hb;
	git_oid a, b;

	sh("mkdir -p outside && git init -q esc && cd esc && echo x >keep && "
	   "ln -s %s/outside esc && c a && rm esc && mkdir esc && echo p >esc/pwned && "
	   "mkdir -p newdir && echo f >newdir/f && c b && git clone -q --bare . ../esc.git", top);
	ha = out_of("git -C esc.git rev-parse HEAD~1");
	hb = out_of("git -C esc.git rev-parse HEAD");
	assert_int_equal(git_oid_fromstr(&a, ha), 0);
	assert_int_equal(git_oid_fromstr(&b, hb), 0);
	assert_int_equal(worker_open(&w, repo, dir, fixture_wo()), 0);
	assert_int_equal(worker_checkout_git(w, &a, 1), 0);
	sh("test -L we/tree/esc");
	assert_int_equal(worker_checkout_git(w, &b, 0), 0);
	sh("test -d we/tree/esc && ! test -L we/tree/esc && grep -qx p we/tree/esc/pwned && "
	   "test -z \"$(ls -A outside)\"");
	assert_int_equal(worker_checkout_git(w, &a, 0), 0);
	sh("test -L we/tree/esc && test -z \"$(ls -A outside)\"");
	/*
	 * A command's links: one swapped for the commit's own link (tracked: it is
	 * removed, the folder made in its place), one where the next commit has
	 * files the index does not (a trap: pristine), one elsewhere (left alone,
	 * nothing written through it).
	 */
	sh("cd we/tree && rm esc && ln -s %s/outside esc && ln -s %s/outside newdir && "
	   "ln -s %s/outside elsewhere && echo o >built.o", top, top, top);
	assert_int_equal(worker_checkout_git(w, &b, 0), 0);
	sh("cd we/tree && test -d esc && ! test -L esc && test -d newdir && ! test -L newdir && "
	   "grep -qx f newdir/f && test ! -e built.o && test -z \"$(ls -A ../../outside)\"");
	assert_int_equal(worker_checkout_git(w, &a, 0), 0);
	sh("cd we/tree && ln -s %s/outside elsewhere && echo o >built.o", top);
	assert_int_equal(worker_checkout_git(w, &b, 0), 0);
	sh("cd we/tree && test -L elsewhere && test -f built.o && grep -qx f newdir/f && "
	   "test -z \"$(ls -A ../../outside)\"");
	worker_free(w);
	free(repo);
	free(dir);
	free(ha);
	free(hb);
}

/*
 * A hostile commit's names: a newline, bytes that are not UTF-8, a name of 250
 * bytes, a leading dash; stepping to and from them leaves git's tree exactly.
 */
static void odd_names(void **state)
{
	struct worker *w;
	char *repo = xstrfmt("%s/odd.git", top), *dir = xstrfmt("%s/wo", top);
	char *ha, *hb;
	git_oid a, b;

	sh("git init -q odd && cd odd && echo x >plain && c a && "
	   "printf 1 >\"$(printf 'new\\nline')\" && printf 2 >\"$(printf '\\377\\376')\" && "
	   "mkdir \"$(printf '%%0250d' 0)\" && printf 3 >\"$(printf '%%0250d' 0)/-dash\" && "
	   "c b && git clone -q --bare . ../odd.git");
	ha = out_of("git -C odd.git rev-parse HEAD~1");
	hb = out_of("git -C odd.git rev-parse HEAD");
	assert_int_equal(git_oid_fromstr(&a, ha), 0);
	assert_int_equal(git_oid_fromstr(&b, hb), 0);
	assert_int_equal(worker_open(&w, repo, dir, fixture_wo()), 0);
	assert_int_equal(worker_checkout_git(w, &a, 1), 0);
	assert_int_equal(worker_checkout_git(w, &b, 0), 0);
	sh("cd wo/tree && git diff-index --quiet HEAD && git diff-files --quiet && "
	   "test -z \"$(git status --porcelain --untracked-files=all)\" && "
	   "test $(git ls-files -z | tr -cd '\\0' | wc -c) = 4");
	assert_int_equal(worker_checkout_git(w, &a, 0), 0);
	sh("cd wo/tree && test -z \"$(git status --porcelain --untracked-files=all)\" && "
	   "test \"$(ls -A | grep -v '^.git$')\" = plain");
	assert_int_equal(worker_checkout_git(w, &b, 1), 0);
	sh("cd wo/tree && test -z \"$(git status --porcelain --untracked-files=all)\"");
	worker_free(w);
	free(repo);
	free(dir);
	free(ha);
	free(hb);
}

/*
 * On a tree large enough for the scan to use threads (one per 2,000 index
 * entries): a file the command changed deep down is found and restored, and a
 * FIFO in some folder is still a trap.
 */
static void threaded_scan(void **state)
{
	struct worker *w;
	char *repo = xstrfmt("%s/many.git", top), *dir = xstrfmt("%s/wm", top), *hex;
	git_oid id;

	/* one commit of d1..d45/sub/f1..f100, each file "D.F\n", in one fast-import */
	sh("git init -q --bare many.git && b=$(git -C many.git symbolic-ref HEAD) && "
	   "awk -v b=\"$b\" 'BEGIN { print \"commit \" b; "
	   "print \"committer t <t@example.org> 1500000000 +0000\"; print \"data 5\"; "
	   "print \"many\"; for (d = 1; d <= 45; d++) for (f = 1; f <= 100; f++) { "
	   "s = d \".\" f \"\\n\"; print \"M 100644 inline d\" d \"/sub/f\" f; "
	   "print \"data \" length(s); printf \"%%s\", s } }' | "
	   FIXTURE_GIT_MALLOC_ENV "git -C many.git fast-import --quiet");
	hex = out_of("git -C many.git rev-parse HEAD");
	assert_int_equal(git_oid_fromstr(&id, hex), 0);
	assert_int_equal(worker_open(&w, repo, dir, fixture_wo()), 0);
	assert_int_equal(worker_checkout_git(w, &id, 1), 0);
	sh("cd wm/tree && sleep 0.01 && echo changed >d44/sub/f99 && echo o >d3/built.o");
	assert_int_equal(worker_checkout_git(w, &id, 0), 0);
	sh("cd wm/tree && grep -qx 44.99 d44/sub/f99 && test -f d3/built.o && "
	   "git diff-files --quiet");
	sh("mkfifo wm/tree/d27/sub/pipe");
	assert_int_equal(worker_checkout_git(w, &id, 0), 0);
	sh("cd wm/tree && test ! -e d27/sub/pipe && test ! -e d3/built.o && "
	   "git diff-files --quiet");
	worker_free(w);
	free(repo);
	free(dir);
	free(hex);
}

/*
 * The worker's tree `dir` holds what git's checkout-index of `rev` (from `repo`,
 * into an empty folder: no earlier attributes to keep) writes, byte for byte, type
 * and execute bit, but for build output (*.o) and submodules' contents.
 */
static void same_bytes_as_git(const char *repo, const char *rev, const char *dir)
{
	sh("rm -rf ref ref.idx && mkdir ref && GIT_INDEX_FILE=$PWD/ref.idx git --git-dir=%s "
	   "read-tree %s && GIT_INDEX_FILE=$PWD/ref.idx git --git-dir=%s --work-tree=ref "
	   "-c core.autocrlf=false checkout-index -a -f",
	   repo, rev, repo);
	sh("(cd %s && find . -path ./.git -prune -o ! -name '*.o' -printf '%%y %%m %%p\\n') | "
	   "grep -v '^d' | LC_ALL=C sort >list.got && (cd ref && find . ! -name '*.o' "
	   "-printf '%%y %%m %%p\\n') | grep -v '^d' | LC_ALL=C sort >list.want && "
	   "diff -u list.want list.got && diff -r --no-dereference -x .git -x '*.o' ref %s",
	   dir, dir);
}

/*
 * Attributes are the commit's, however the tree came to be: a file whose name
 * sorts before .gitattributes, a macro of the top attributes file, eol and
 * ident filters; a commit that changes only the attributes changes the files
 * (their blobs did not: git's own checkout keeps the old bytes); a command that
 * edits .gitattributes at the same size with its mtime put back, or leaves an
 * untracked one, chooses nothing.
 */
static void attributes_from_the_commit(void **state)
{
	struct worker *w;
	char *repo = xstrfmt("%s/attrs.git", top), *dir = xstrfmt("%s/wa", top);
	git_oid a, b, c;

	sh("git init -q attrs && cd attrs && mkdir sub && printf 'x\\ny\\n' >t.txt && "
	   "printf 'one\\ntwo\\n' >-first.txt && printf 'r\\n' >s.bat && "
	   "printf '$Id$\\nid\\n' >sub/v.c && printf 'k\\nl\\n' >sub/k.txt && "
	   "printf '[attr]crlftext text eol=crlf\\n*.txt text eol=crlf\\n*.bat crlftext\\n' "
	   ">.gitattributes && printf '*.c ident\\n' >sub/.gitattributes && c a && "
	   "printf '*.txt -text\\n*.bat crlftext\\n' >.gitattributes && "
	   "printf '*.c -ident\\n' >sub/.gitattributes && c b && "
	   "printf 'z\\n' >sub/z.txt && c c && git clone -q --bare . ../attrs.git");
	rev_oid(&a, "attrs.git", "HEAD~2");
	rev_oid(&b, "attrs.git", "HEAD~1");
	rev_oid(&c, "attrs.git", "HEAD");
	assert_int_equal(worker_open(&w, repo, dir, fixture_wo()), 0);
	assert_int_equal(worker_checkout_git(w, &a, 1), 0);
	same_bytes_as_git("attrs.git", "HEAD~2", "wa/tree");
	sh("od -c wa/tree/-first.txt | grep -q '\\\\r' && grep -q 'Id: ' wa/tree/sub/v.c");
	assert_int_equal(worker_checkout_git(w, &b, 0), 0);
	same_bytes_as_git("attrs.git", "HEAD~1", "wa/tree");
	assert_int_equal(worker_checkout_git(w, &a, 0), 0);
	same_bytes_as_git("attrs.git", "HEAD~2", "wa/tree");
	/* the command's attributes: the commit's file edited, and one of its own */
	sh("cd wa/tree && cp -p .gitattributes ../ga && sed -i 's/eol=crlf/eol=lf  /' "
	   ".gitattributes && touch -r ../ga .gitattributes && "
	   "printf '* text eol=crlf ident\\n' >.gitattributes.o && cp .gitattributes.o "
	   "sub/.gitattributes.o && printf '*.txt text eol=crlf\\n' >sub/x.o && "
	   "mkdir new && printf '* ident\\n' >new/.gitattributes");
	assert_int_equal(worker_checkout_git(w, &c, 0), 0);
	sh("rm -r wa/tree/new");
	same_bytes_as_git("attrs.git", "HEAD", "wa/tree");
	assert_int_equal(worker_checkout_git(w, &a, 1), 0);
	assert_int_equal(worker_checkout_git(w, &c, 0), 0);
	same_bytes_as_git("attrs.git", "HEAD", "wa/tree");
	worker_free(w);
	free(repo);
	free(dir);
}

/*
 * No attribute at all, but the repository says core.autocrlf true: text goes out
 * with CRLF as git's checkout-index writes it with that setting; a binary file
 * does not.  Then the setting goes: the stamp changes, and the files with it.
 */
static void config_autocrlf(void **state)
{
	struct worker *w;
	char *repo = xstrfmt("%s/crlf.git", top), *dir = xstrfmt("%s/wc", top);
	git_oid id;

	sh("git init -q crlf && cd crlf && printf 'a\\nb\\n' >t.txt && printf 'x\\0y\\n' >bin && "
	   "mkdir d && printf 'c\\n' >d/u.c && c one && git clone -q --bare . ../crlf.git && "
	   "git -C ../crlf.git config core.autocrlf true");
	rev_oid(&id, "crlf.git", "HEAD");
	assert_int_equal(worker_open(&w, repo, dir, fixture_wo()), 0);
	assert_int_equal(worker_checkout_git(w, &id, 1), 0);
	sh("rm -rf ref ref.idx && mkdir ref && GIT_INDEX_FILE=$PWD/ref.idx git --git-dir=crlf.git "
	   "read-tree HEAD && GIT_INDEX_FILE=$PWD/ref.idx git --git-dir=crlf.git --work-tree=ref "
	   "checkout-index -a -f && diff -r -x .git ref wc/tree && od -c wc/tree/t.txt | "
	   "grep -q '\\\\r' && ! od -c wc/tree/bin | grep -q '\\\\r'");
	sh("git -C crlf.git config core.autocrlf false");
	assert_int_equal(worker_checkout_git(w, &id, 0), 0);
	same_bytes_as_git("crlf.git", "HEAD", "wc/tree");
	worker_free(w);
	free(repo);
	free(dir);
}

static struct attrrules *rules_of(const char *const *dirs_texts)
{
	struct attrrules *r = attrrules_new();

	for (; *dirs_texts; dirs_texts += 2)
		attrrules_add(r, dirs_texts[0], dirs_texts[1], strlen(dirs_texts[1]));
	attrrules_finish(r);
	return r;
}

/*
 * Which files a rule that could convert may reach (merge/worker/attrrules.c): patterns
 * by base name, below their file's folder, without regard to case; macros, also
 * through macros; anything with a slash or in quotes reaches every file; rules
 * and comments that mention neither crlf nor ident reach none.
 */
static void attribute_rules(void **state)
{
	static const char *const top_only[] = {
		"", "# a comment: eol=crlf\n* text=auto\n*.sh eol=lf\n*.png binary\n", NULL
	};
	static const char *const several[] = {
		"", "[attr]b eol=crlf\n[attr]a b\n[attr]plain -diff\n*.bat text eol=crlf\n"
		    "*.z a\n*.p plain\n*.c -crlf\n",
		"sub/", "*.h ident\n", NULL
	};
	static const char *const wide[] = { "d/", "docs/*.txt eol=crlf\n", NULL };
	static const char *const quoted[] = { "", "\"a b\" ident\n", NULL };
	struct attrrules *r = rules_of(top_only);

	assert_false(attrrules_any(r));
	assert_false(attrrules_may_match(r, "x.sh"));
	attrrules_free(r);
	r = rules_of(several);
	assert_true(attrrules_any(r));
	assert_true(attrrules_may_match(r, "a.bat"));
	assert_true(attrrules_may_match(r, "deep/er/A.BAT"));
	assert_true(attrrules_may_match(r, "q.z"));
	assert_false(attrrules_may_match(r, "q.p"));
	assert_true(attrrules_may_match(r, "m.c"));
	assert_true(attrrules_may_match(r, "sub/k.h"));
	assert_true(attrrules_may_match(r, "sub/deep/k.h"));
	assert_false(attrrules_may_match(r, "k.h"));
	assert_false(attrrules_may_match(r, "subway/k.h"));
	assert_false(attrrules_may_match(r, "readme"));
	attrrules_free(r);
	r = rules_of(wide);
	assert_true(attrrules_may_match(r, "d/x.o"));
	assert_false(attrrules_may_match(r, "x.txt"));
	attrrules_free(r);
	r = rules_of(quoted);
	assert_true(attrrules_may_match(r, "anything"));
	attrrules_free(r);
}

/*
 * An index git rewrote (a command ran `git status`, `git add`, or forged it)
 * is not the one the stamp file names: every file's content is compared, a
 * change the index hides is found, and the files still right keep their inodes.
 */
static void foreign_index_compared(void **state)
{
	struct worker *w;
	char *repo = xstrfmt("%s/hist.git", top), *dir = xstrfmt("%s/wf", top);
	char *ino1, *ino2;
	git_oid id;

	open_at_c1(&w, &id, repo, dir);
	assert_true(stamp_names_index("wf"));
	/* git status rewrites the index when it refreshes an entry */
	sh("cd wf/tree && touch -d @$(($(date +%%s) + 5)) top && "
	   "git status --porcelain >/dev/null");
	assert_false(stamp_names_index("wf"));
	ino1 = out_of("stat -c %%i wf/tree/top");
	/* a change with its stat data written into the index, not as nextbot would */
	sh("cd wf/tree && printf 'SAME\\n' >same");
	forge_index("wf", "same", 0);
	/* not racy: only the missing stamp says to compare */
	sh("cd wf/tree && sleep 0.01 && touch ../git/index");
	assert_int_equal(worker_checkout_git(w, &id, 0), 0);
	ino2 = out_of("stat -c %%i wf/tree/top");
	sh("cd wf/tree && grep -qx same same && git diff-files --quiet");
	assert_string_equal(ino1, ino2);
	assert_true(stamp_names_index("wf"));
	worker_free(w);
	free(repo);
	free(dir);
	free(ino1);
	free(ino2);
}

/*
 * A submodule (not initialised) is an empty folder, as git leaves one: made,
 * kept with whatever a build put in it, made again when a command replaced it
 * with a file, gone when the commit has a file there instead, and back.
 */
static void submodule_folder(void **state)
{
	struct worker *w;
	char *repo = xstrfmt("%s/sub.git", top), *dir = xstrfmt("%s/ws", top), *sub;
	git_oid a, b;

	sh("git init -q subsrc && cd subsrc && echo s >s && c s");
	sub = out_of("git -C subsrc rev-parse HEAD");
	sh("git init -q sup && cd sup && echo x >x && git add x && "
	   "git update-index --add --cacheinfo 160000,%s,lib && git commit -qm a && "
	   "git rm -q --cached lib && echo 'not a submodule' >lib && c b && "
	   "git clone -q --bare . ../sub.git",
	   sub);
	rev_oid(&a, "sub.git", "HEAD~1");
	rev_oid(&b, "sub.git", "HEAD");
	assert_int_equal(worker_open(&w, repo, dir, fixture_wo()), 0);
	assert_int_equal(worker_checkout_git(w, &a, 1), 0);
	sh("cd ws/tree && test -d lib && test -z \"$(ls -A lib)\" && "
	   "git ls-files -s lib | grep -q '^160000 %s 0' && git diff-files --quiet", sub);
	sh("cd ws/tree && echo o >lib/built.o");
	assert_int_equal(worker_checkout_git(w, &a, 0), 0);
	sh("test -f ws/tree/lib/built.o");
	sh("cd ws/tree && rm -r lib && echo file >lib");
	assert_int_equal(worker_checkout_git(w, &a, 0), 0);
	sh("cd ws/tree && test -d lib && test -z \"$(ls -A lib)\"");
	assert_int_equal(worker_checkout_git(w, &b, 0), 0);
	sh("cd ws/tree && test -f lib && grep -qx 'not a submodule' lib && git diff-files --quiet");
	assert_int_equal(worker_checkout_git(w, &a, 0), 0);
	sh("cd ws/tree && test -d lib && git diff-files --quiet");
	worker_free(w);
	free(repo);
	free(dir);
	free(sub);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sha1_both_ways),
		cmocka_unit_test(index_roundtrip),
		cmocka_unit_test(index_refusals),
		cmocka_unit_test(steps_match_git),
		cmocka_unit_test(command_damage_undone),
		cmocka_unit_test(racy_entries_compared),
		cmocka_unit_test(trap_goes_pristine),
		cmocka_unit_test(threaded_scan),
		cmocka_unit_test(symlink_swaps_stay_inside),
		cmocka_unit_test(odd_names),
		cmocka_unit_test(attributes_from_the_commit),
		cmocka_unit_test(config_autocrlf),
		cmocka_unit_test(attribute_rules),
		cmocka_unit_test(foreign_index_compared),
		cmocka_unit_test(submodule_folder),
	};

	git_libgit2_init();
	return cmocka_run_group_tests(tests, setup, teardown);
}
