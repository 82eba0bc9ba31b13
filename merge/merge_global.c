/* libgit2 start-up and shut-down, and its last error message, for bot/ and tests. */
#include <git2.h>

#include "merge/merge_global.h"
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
