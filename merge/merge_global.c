/* libgit2 start-up and shut-down, and its last error message, for bot/ and tests. */
#include <git2.h>

#include <stdarg.h>

#include "merge/git_int.h"
#include "merge/merge_global.h"
#include "util/strbuf.h"
#include "util/error.h"
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
	size_t i, from = sb->len;

	strbuf_addstr(sb, s ? s : "");
	for (i = from; i < sb->len; i++)
		if ((unsigned char)sb->buf[i] < 0x20 || sb->buf[i] == 0x7f)
			sb->buf[i] = ' ';
}
