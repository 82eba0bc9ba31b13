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
