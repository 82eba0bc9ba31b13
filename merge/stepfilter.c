/* A commit's attribute filters for a worker's checkout, read from the commit, not the tree. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <git2/sys/repository.h>

#include "merge/git_int.h"
#include "merge/merge_global.h"
#include "merge/stepfilter_int.h"
#include "util/error.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* An attributes file larger than this is described by its size alone. */
#define DESCRIBE_MAX (1u << 20)
#define ROOT_NAME "attributes-root"

struct stepfilter {
	git_repository *repo;   /* the git dir again, its work tree an empty folder */
	git_index *index;       /* empty: attributes come from the commit only */
	git_filter_options opts;
};

/* "<name>: <contents>\n" of an attributes file that is there. */
static void describe_file(struct strbuf *out, const char *name, const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	struct stat st;

	if (!path || stat(path, &st) < 0)
		return;
	if (st.st_size > DESCRIBE_MAX || strbuf_read_file(&sb, path, DESCRIBE_MAX) < 0)
		strbuf_addf(out, "%s: %s, %lld bytes, mtime %lld\n", name, path,
			    (long long)st.st_size, (long long)st.st_mtime);
	else
		strbuf_addf(out, "%s: %s\n%s\n", name, path, sb.buf);
	strbuf_release(&sb);
}

void stepfilter_describe_config(struct strbuf *out, git_repository *repo,
				const char *common_dir)
{
	git_config *cfg = NULL;
	git_buf user = GIT_BUF_INIT;
	const char *value = NULL;
	char *path = xstrfmt("%s/info/attributes", common_dir);
	int have_user = 0;

	describe_file(out, "info", path);
	free(path);
	/* libgit2 looks in the system config's folder: /etc here */
	describe_file(out, "system", "/etc/gitattributes");
	if (git_repository_config_snapshot(&cfg, repo) == 0) {
		have_user = git_config_get_path(&user, cfg, "core.attributesfile") == 0;
		/* "false" is the default: it asks for nothing */
		if (git_config_get_string(&value, cfg, "core.autocrlf") == 0 &&
		    strcmp(value, "false"))
			strbuf_addf(out, "core.autocrlf=%s\n", value);
		if (git_config_get_string(&value, cfg, "core.eol") == 0)
			strbuf_addf(out, "core.eol=%s\n", value);
	}
	if (have_user) {
		describe_file(out, "user", user.ptr);
	} else {
		/* git's per-user attributes file, read when core.attributesFile is unset */
		const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");

		path = xdg && *xdg ? xstrfmt("%s/git/attributes", xdg)
		       : home	   ? xstrfmt("%s/.config/git/attributes", home)
				   : NULL;
		describe_file(out, "user", path);
		free(path);
	}
	git_buf_dispose(&user);
	git_config_free(cfg);
	git_error_clear();
}

/*
 * The empty folder that stands for the work tree: libgit2 takes macros (`[attr]`)
 * only from the top folder's attributes, and knows the top only by a work tree.
 * Made again each time, so that it is empty (one that will not go is refused).
 */
static int empty_root(int gfd, const char *git)
{
	if (unlinkat(gfd, ROOT_NAME, AT_REMOVEDIR) < 0 && errno != ENOENT)
		return nb_error_errno(NB_ERROR, "cannot empty %s/%s", git, ROOT_NAME);
	if (mkdirat(gfd, ROOT_NAME, 0700) < 0)
		return nb_error_errno(NB_ERROR, "cannot create %s/%s", git, ROOT_NAME);
	return 0;
}

int stepfilter_open(struct stepfilter **out, const char *git, int gfd, const git_oid *commit)
{
	struct stepfilter *f = xcalloc(1, sizeof(*f));
	char *root = xstrfmt("%s/%s", git, ROOT_NAME);
	int err;

	*out = NULL;
	if ((err = empty_root(gfd, git)) < 0)
		goto done;
	if (git_repository_open_bare(&f->repo, git) < 0 ||
	    git_repository_set_workdir(f->repo, root, 0) < 0 || git_index_new(&f->index) < 0 ||
	    git_repository_set_index(f->repo, f->index) < 0) {
		err = merge_git_fail("cannot open %s for attributes", git);
		goto done;
	}
	f->opts.version = GIT_FILTER_OPTIONS_VERSION;
	f->opts.flags = GIT_FILTER_ATTRIBUTES_FROM_COMMIT;
	git_oid_cpy(&f->opts.attr_commit_id, commit);
	err = 0;
done:
	free(root);
	if (err < 0)
		stepfilter_free(f);
	else
		*out = f;
	return err;
}

void stepfilter_free(struct stepfilter *f)
{
	if (!f)
		return;
	git_index_free(f->index);
	git_repository_free(f->repo);
	free(f);
}

int stepfilter_apply(const char **data, size_t *len, git_buf *buf, struct stepfilter *f,
		     git_blob *blob, const char *path)
{
	git_filter_list *fl = NULL;
	int err = 0;

	*data = git_blob_rawcontent(blob);
	*len = (size_t)git_blob_rawsize(blob);
	if (!f)
		return 0;
	if (git_filter_list_load_ext(&fl, f->repo, blob, path, GIT_FILTER_TO_WORKTREE,
				     &f->opts) < 0)
		return merge_git_fail("the attributes of '%s'", path);
	if (!fl)
		return 0;
	if (git_filter_list_apply_to_blob(buf, fl, blob) < 0) {
		err = merge_git_fail("filtering '%s'", path);
	} else {
		*data = buf->ptr;
		*len = buf->size;
	}
	git_filter_list_free(fl);
	return err;
}
