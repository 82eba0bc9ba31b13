/* Shell snippets run in a test's directory (see gitfixture.h). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "tests/gitfixture.h"
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
