/* libgit2 start-up and shut-down, and its last error message, for bot/ and tests. */
#include <string.h>
#include <git2.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "merge/git/git_int.h"
#include "merge/repo/repo.h"
#include "util/strbuf.h"
#include "util/error.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "util/banned.h"

int merge_global_init(void)
{
	int err = git_libgit2_init();

	if (err < 0)
		return nb_error_set(NB_ERROR, "libgit2 init failed: %s", merge_git_error());
	/*
	 * As git itself: an object read is not hashed again (fsck's job; ~20% of a
	 * night's merging), and a tree or commit written by us names objects we just
	 * read, so their existence is not looked up again.
	 */
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_OBJECT_CREATION, 0);
	return 0;
}

void merge_global_shutdown(void)
{
	git_libgit2_shutdown();
}

const char *merge_git_error(void)
{
	const git_error *e = git_error_last();

	return e && e->message ? e->message : "unknown error";
}

int merge_git_fail(const char *fmt, ...)
{
	struct strbuf what = STRBUF_INIT;
	va_list ap;
	int error;

	va_start(ap, fmt);
	strbuf_vaddf(&what, fmt, ap);
	va_end(ap);
	error = nb_error_set(NB_ERROR, "%s: %s", what.buf, merge_git_error());
	strbuf_release(&what);
	return error;
}

void merge_oid_from_git(struct nb_oid *out, const git_oid *id)
{
	git_oid_tostr(out->hex, sizeof(out->hex), id);
}

int merge_oid_parse_git(git_oid *out, const char *hex)
{
	if (!nb_oid_valid(hex) || git_oid_fromstr(out, hex) < 0)
		return nb_error_set(NB_EINVALID, "'%s' is not a full object id", hex ? hex : "");
	return 0;
}

int merge_oid_to_git(git_oid *out, const struct nb_oid *id)
{
	return merge_oid_parse_git(out, id->hex);
}

void merge_commit_subject(struct strbuf *sb, const git_commit *c)
{
	const char *s = git_commit_summary((git_commit *)c);
	struct strbuf one = STRBUF_INIT;

	/* a stranger's text: its encoding's, valid UTF-8, no control character at all */
	utf8_from_charset(&one, s ? s : "", s ? strlen(s) : 0,
			  git_commit_message_encoding((git_commit *)c));
	utf8_strip_controls(&one);
	strbuf_addbuf(sb, &one);
	strbuf_release(&one);
}

int merge_signature(git_signature **out, const char *ident, const char *date)
{
	struct tm tm = { 0 };
	const char *lt = strchr(ident, '<'), *gt = lt ? strchr(lt, '>') : NULL;
	char *name, *email;
	int y, m, d, n = 0, err;

	if (sscanf(date, "%4d-%2d-%2d%n", &y, &m, &d, &n) != 3 || date[n] || m < 1 || m > 12 ||
	    d < 1 || d > 31)
		return nb_error_set(NB_EINVALID, "bad date '%s' (want YYYY-MM-DD)", date);
	tm.tm_year = y - 1900;
	tm.tm_mon = m - 1;
	tm.tm_mday = d;
	if (!lt || !gt || gt == lt + 1)
		return nb_error_set(NB_EINVALID, "bad merge identity '%s' (want Name <email>)",
				    ident);
	name = xstrndup(ident, (size_t)(lt - ident));
	email = xstrndup(lt + 1, (size_t)(gt - lt - 1));
	while (*name && name[strlen(name) - 1] == ' ')
		name[strlen(name) - 1] = '\0';
	err = git_signature_new(out, *name ? name : email, email, (git_time_t)timegm(&tm), 0);
	free(name);
	free(email);
	return err < 0 ? nb_error_set(NB_EINVALID, "bad merge identity '%s': %s", ident,
				      merge_git_error()) : 0;
}
