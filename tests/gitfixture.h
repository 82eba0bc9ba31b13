/*
 * Shell snippets run in a test's directory: how the unit tests make git
 * repositories and ask the real git about them.  Linked into every test binary.
 */
#ifndef TESTS_GITFIXTURE_H
#define TESTS_GITFIXTURE_H

#include <stdarg.h>
#include "util/strbuf.h"

/*
 * With FIXTURE_PRELUDE a snippet runs under `set -e`, with a fixed author and
 * committer, and `c MSG` commits everything (empty commits too).
 */
#define FIXTURE_PRELUDE "set -e; export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org " \
	"GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org; " \
	"c() { git add -A && git commit -q --allow-empty -m \"$1\"; }; "

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

#endif
