/* Shell snippets run in a test's directory, and shared setups (see gitfixture.h). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "tests/gitfixture.h"
#include "merge/repo/repo.h"
#include "util/fileutil.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "util/banned.h"

static void command(struct strbuf *cmd, const char *dir, const char *prelude,
		      const char *fmt, va_list ap)
{
	strbuf_addf(cmd, "cd '%s' && { %s", dir, prelude ? prelude : "");
	strbuf_vaddf(cmd, fmt, ap);
}

int fixture_vsh(const char *dir, const char *prelude, const char *fmt, va_list ap)
{
	struct strbuf cmd = STRBUF_INIT;
	int rc;

	command(&cmd, dir, prelude, fmt, ap);
	strbuf_addstr(&cmd, "; } >/dev/null 2>&1");
	rc = system(cmd.buf);
	strbuf_release(&cmd);
	return rc;
}

int fixture_vsh_out(struct strbuf *out, const char *dir, const char *prelude, const char *fmt,
		    va_list ap)
{
	struct strbuf cmd = STRBUF_INIT;
	char buf[4096];
	size_t n;
	FILE *f;
	int rc;

	strbuf_reset(out);
	command(&cmd, dir, prelude, fmt, ap);
	strbuf_addstr(&cmd, "; } 2>/dev/null");
	f = popen(cmd.buf, "r");
	strbuf_release(&cmd);
	if (!f)
		return -1;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_add(out, buf, n);
	rc = pclose(f);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

const char *fixture_dir = ".";

int fixture_sh(const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = fixture_vsh(fixture_dir, FIXTURE_PRELUDE, fmt, ap);
	va_end(ap);
	return rc;
}

int fixture_sh_out(struct strbuf *out, int trim, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = fixture_vsh_out(out, fixture_dir, trim ? FIXTURE_PRELUDE : NULL, fmt, ap);
	va_end(ap);
	if (trim)
		strbuf_trim(out);
	return rc;
}

int fixture_sys_free(char *cmd)
{
	int rc = system(cmd);

	free(cmd);
	return rc;
}

const char *fixture_nextbot(void)
{
	static char path[4096];
	const char *env = getenv("NEXTBOT");

	if (!path[0] && !(env && *env && realpath(env, path)) && !realpath("nextbot", path))
		snprintf(path, sizeof(path), "nextbot");
	return path;
}

int fixture_world_open(char *top, unsigned flags)
{
	if (!mkdtemp(top))
		return -1;
	if (flags & FIXTURE_IDENTITY) {
		setenv("GIT_AUTHOR_NAME", "t", 1);
		setenv("GIT_AUTHOR_EMAIL", "t@example.org", 1);
		setenv("GIT_COMMITTER_NAME", "t", 1);
		setenv("GIT_COMMITTER_EMAIL", "t@example.org", 1);
	}
	if (flags & FIXTURE_HOME)
		setenv("HOME", top, 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	log_set_level(LOG_QUIET);
	return merge_global_init() < 0 ? -1 : 0;
}

void fixture_world_close(const char *top)
{
	if (!getenv("KEEP") && fixture_sys_free(xstrfmt("rm -rf '%s'", top)) != 0)
		fprintf(stderr, "cannot remove %s\n", top);
	merge_global_shutdown();
}

char *fixture_tmpdir(const char *name)
{
	char *dir = xstrfmt("/tmp/nb-%s-XXXXXX", name);

	if (!mkdtemp(dir)) {
		free(dir);
		return NULL;
	}
	return dir;
}

void fixture_tmpdir_remove(char **dir)
{
	file_remove_tree(*dir);
	free(*dir);
	*dir = NULL;
}
