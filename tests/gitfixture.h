/*
 * Shell snippets run in a test's directory: how the unit tests make git
 * repositories and ask the real git about them; and the setups and teardowns
 * several test binaries share.  Linked into every test binary.
 */
#ifndef TESTS_GITFIXTURE_H
#define TESTS_GITFIXTURE_H

#include <stdarg.h>
#include "util/strbuf.h"

/*
 * With FIXTURE_PRELUDE a snippet runs under `set -e`, with a fixed author and
 * committer, its git commands spawn no auto maintenance after them (the product's
 * own do), and `c MSG` commits everything (empty commits too).  `cn N FILE MSG`
 * adds N commits to the current branch in one git fast-import (commit i writes i
 * into FILE, subject "MSG i"), then resets the work tree to the new tip: a long
 * history for the price of a few processes instead of two per commit.
 */
#define FIXTURE_PRELUDE "set -e; export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org " \
	"GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org; " \
	"git() { command git -c maintenance.auto=false \"$@\"; }; " \
	"c() { git add -A && git commit -q --allow-empty -m \"$1\"; }; " \
	"cn() { b=$(git symbolic-ref HEAD) && t=$(date +%s) && i=1 && { " \
	"while [ $i -le $1 ]; do " \
	"printf 'commit %s\\ncommitter t <t@example.org> %s +0000\\ndata <<E\\n%s %s\\nE\\n' " \
	"\"$b\" \"$t\" \"$3\" $i; [ $i != 1 ] || printf 'from %s^0\\n' \"$b\"; " \
	"printf 'M 100644 inline %s\\ndata <<E\\n%s\\nE\\n\\n' \"$2\" $i; i=$((i+1)); done; } | " \
	"git fast-import --quiet && git reset -q --hard; }; "

/*
 * Put before a fixture's git fast-import or other long-running git (never before
 * the product's commands under test): glibc keeps its heap instead of trimming and
 * regrowing it, thousands of brk calls fewer.
 */
#define FIXTURE_GIT_MALLOC_ENV "GLIBC_TUNABLES=glibc.malloc.top_pad=16777216:" \
	"glibc.malloc.trim_threshold=67108864 "

/* `cd dir && { prelude snippet; }`, output discarded: system()'s status. */
int fixture_vsh(const char *dir, const char *prelude, const char *fmt, va_list ap);

/*
 * The same with all of its stdout (stderr discarded) into `out`, untrimmed:
 * the exit status, or -1 when it could not run or died of a signal.
 */
int fixture_vsh_out(struct strbuf *out, const char *dir, const char *prelude, const char *fmt,
		    va_list ap);

/*
 * The directory the snippets below run in: each test binary points it at its own
 * (a borrowed string that must outlive the calls).
 */
extern const char *fixture_dir;

/* A snippet with FIXTURE_PRELUDE in fixture_dir, output discarded: system()'s status. */
int fixture_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Its stdout into `out`: with `trim`, FIXTURE_PRELUDE and the output trimmed; without,
 * the snippet alone and the output untouched.  The exit status, or -1. */
int fixture_sh_out(struct strbuf *out, int trim, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Runs and frees a malloc'd command line: system()'s status. */
int fixture_sys_free(char *cmd);

/*
 * The nextbot binary under test ($NEXTBOT, as `make check` sets it, else ./nextbot):
 * worker checkouts are made by it (`nextbot worker-checkout`).  Static storage.
 */
const char *fixture_nextbot(void);

/* Flags of fixture_world_open(). */
#define FIXTURE_IDENTITY 1 /* a fixed author and committer in the environment */
#define FIXTURE_HOME 2     /* $HOME is the world's directory */

/*
 * A test binary's world: mkdtemp(top) (a template, rewritten in place), git's
 * system config ignored, quiet logs, libgit2 up, and what `flags` add.  0, or -1.
 */
int fixture_world_open(char *top, unsigned flags);
/* The world's directory removed (kept when $KEEP is set), and libgit2 down. */
void fixture_world_close(const char *top);

/* A new /tmp/nb-NAME-XXXXXX (caller frees, or fixture_tmpdir_remove()), or NULL. */
char *fixture_tmpdir(const char *name);
/* Removes *dir and what is in it, frees it, and sets it NULL. */
void fixture_tmpdir_remove(char **dir);

#endif
