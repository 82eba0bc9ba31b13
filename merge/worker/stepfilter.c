/* A commit's attribute filters for a worker's checkout, read from the commit, not the tree. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <git2/sys/repository.h>

#include "merge/worker/attrrules_int.h"
#include "merge/git/git_int.h"
#include "merge/repo/repo.h"
#include "merge/worker/stepfilter_int.h"
#include "util/error.h"
#include "util/strvec.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* An attributes file larger than this is described by its size alone. */
#define DESCRIBE_MAX (1u << 20)
#define ROOT_NAME "attributes-root"

struct stepfilter {
	git_repository *repo;   /* the git dir again, its work tree an empty folder */
	git_index *index;       /* empty: attributes come from the commit only */
	git_filter_options opts;
	git_attr_options attr_opts; /* the same sources, for one look at eol and ident */
	int always;             /* the config makes text CRLF: every file goes through */
	struct attrrules *rules; /* else: where eol=crlf or ident may apply */
};

/*
 * Whether the configuration writes text with CRLF (core.autocrlf true, core.eol
 * crlf): then any file may be converted, and each goes through libgit2's filters.
 */
static int config_crlf(git_repository *repo)
{
	git_config *cfg = NULL;
	const char *value;
	int crlf = 0, b;

	if (git_repository_config_snapshot(&cfg, repo) < 0) {
		git_error_clear();
		return 1;
	}
	if (git_config_get_string(&value, cfg, "core.autocrlf") == 0 &&
	    git_config_parse_bool(&b, value) == 0 && b)
		crlf = 1;
	if (git_config_get_string(&value, cfg, "core.eol") == 0 && !strcmp(value, "crlf"))
		crlf = 1;
	git_config_free(cfg);
	git_error_clear();
	return crlf;
}

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

/*
 * The attributes files outside the tree that git and libgit2 read, as "<name>
 * <path>" pairs in `out` (names "info", "system", "user"); those missing too.
 */
static void outside_files(struct strvec *out, git_repository *repo, const char *common_dir)
{
	git_config *cfg = NULL;
	git_buf user = GIT_BUF_INIT;
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	size_t len = strlen(common_dir);

	/* libgit2's commondir ends with a slash */
	while (len > 1 && common_dir[len - 1] == '/')
		len--;
	strvec_pushf(out, "info %.*s/info/attributes", (int)len, common_dir);
	/* libgit2 looks in the system config's folder: /etc here */
	strvec_push(out, "system /etc/gitattributes");
	if (git_repository_config_snapshot(&cfg, repo) == 0 &&
	    git_config_get_path(&user, cfg, "core.attributesfile") == 0)
		strvec_pushf(out, "user %s", user.ptr);
	else if (xdg && *xdg)
		/* git's per-user attributes file, read when core.attributesFile is unset */
		strvec_pushf(out, "user %s/git/attributes", xdg);
	else if (home)
		strvec_pushf(out, "user %s/.config/git/attributes", home);
	git_buf_dispose(&user);
	git_config_free(cfg);
	git_error_clear();
}

void stepfilter_describe_config(struct strbuf *out, git_repository *repo,
				const char *common_dir)
{
	struct strvec files = STRVEC_INIT;
	git_config *cfg = NULL;
	const char *value = NULL;
	size_t i;

	outside_files(&files, repo, common_dir);
	for (i = 0; i < files.nr; i++) {
		char *space = strchr(files.v[i], ' ');

		*space = '\0';
		describe_file(out, files.v[i], space + 1);
	}
	if (git_repository_config_snapshot(&cfg, repo) == 0) {
		/* "false" is the default: it asks for nothing */
		if (git_config_get_string(&value, cfg, "core.autocrlf") == 0 &&
		    strcmp(value, "false"))
			strbuf_addf(out, "core.autocrlf=%s\n", value);
		if (git_config_get_string(&value, cfg, "core.eol") == 0)
			strbuf_addf(out, "core.eol=%s\n", value);
	}
	strvec_clear(&files);
	git_config_free(cfg);
	git_error_clear();
}

/*
 * The rules that may convert a file, from the commit's attributes files and those
 * outside the tree; NULL when one cannot be read (then every file is looked up).
 */
static struct attrrules *read_rules(git_repository *repo, const struct stepfilter_source *src)
{
	struct attrrules *r = attrrules_new();
	struct strvec files = STRVEC_INIT;
	struct strbuf sb = STRBUF_INIT;
	size_t i;
	int ok = 1;

	for (i = 0; i < src->attributes_nr && ok; i++) {
		const char *path = src->attribute_paths[i], *slash = strrchr(path, '/');
		char *dir = xstrndup(path, slash ? (size_t)(slash - path + 1) : 0);
		git_blob *blob = NULL;

		ok = git_blob_lookup(&blob, repo, &src->attributes[i]) == 0;
		if (ok)
			attrrules_add(r, dir, git_blob_rawcontent(blob),
				      (size_t)git_blob_rawsize(blob));
		git_blob_free(blob);
		free(dir);
	}
	outside_files(&files, repo, git_repository_commondir(repo));
	for (i = 0; i < files.nr && ok; i++) {
		const char *path = strchr(files.v[i], ' ') + 1;

		strbuf_reset(&sb);
		if (access(path, F_OK) < 0)
			continue;
		ok = strbuf_read_file(&sb, path, DESCRIBE_MAX) == 0;
		if (ok)
			attrrules_add(r, "", sb.buf, sb.len);
	}
	strvec_clear(&files);
	strbuf_release(&sb);
	git_error_clear();
	if (!ok) {
		attrrules_free(r);
		return NULL;
	}
	attrrules_finish(r);
	return r;
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

int stepfilter_open(struct stepfilter **out, const struct stepfilter_source *src)
{
	struct stepfilter *f = xcalloc(1, sizeof(*f));
	char *root = xstrfmt("%s/%s", src->git, ROOT_NAME);
	const char *git = src->git;
	int gfd = src->gfd, macros = src->macros, err = 0;

	*out = NULL;
	/*
	 * Without a work tree libgit2 takes no macros from the top attributes file,
	 * and with one it pays a realpath() of every file's folder and a stat of
	 * each folder's attributes file for every file (30 system calls a file): the
	 * work tree only when the top file defines macros.
	 */
	if (macros && (err = empty_root(gfd, git)) < 0)
		goto done;
	if (git_repository_open_bare(&f->repo, git) < 0 ||
	    (macros && git_repository_set_workdir(f->repo, root, 0) < 0) ||
	    git_index_new(&f->index) < 0 || git_repository_set_index(f->repo, f->index) < 0) {
		err = merge_git_fail("cannot open %s for attributes", git);
		goto done;
	}
	f->opts.version = GIT_FILTER_OPTIONS_VERSION;
	f->opts.flags = GIT_FILTER_ATTRIBUTES_FROM_COMMIT;
	f->attr_opts.version = GIT_ATTR_OPTIONS_VERSION;
	f->attr_opts.flags = GIT_ATTR_CHECK_INCLUDE_COMMIT;
	/* a system attributes file that is not there need not be looked for each time */
	if (access("/etc/gitattributes", F_OK) < 0) {
		f->opts.flags |= GIT_FILTER_NO_SYSTEM_ATTRIBUTES;
		f->attr_opts.flags |= GIT_ATTR_CHECK_NO_SYSTEM;
	}
	git_oid_cpy(&f->opts.attr_commit_id, src->commit);
	git_oid_cpy(&f->attr_opts.attr_commit_id, src->commit);
	f->always = config_crlf(f->repo);
	/*
	 * Here text is written with LF: unless the configuration says CRLF, only an
	 * eol=crlf or an ident attribute can change a file's bytes, and where no
	 * rule mentioning them reaches, nothing does (merge/worker/attrrules.c).
	 */
	if (!f->always && (f->rules = read_rules(f->repo, src)) && !attrrules_any(f->rules)) {
		stepfilter_free(f);
		f = NULL;
	}
	err = 0;
done:
	free(root);
	if (err < 0)
		stepfilter_free(f);
	else
		*out = f;
	return err;
}

/*
 * Whether a file at `path` could be converted: its eol attribute says crlf, or it
 * has ident (libgit2's filters decide, then).  One attribute look instead of one
 * for each of libgit2's two filters.
 */
static int may_convert(struct stepfilter *f, const char *path)
{
	static const char *names[] = { "eol", "ident" };
	const char *values[2] = { NULL, NULL };

	if (f->always)
		return 1;
	if (f->rules && !attrrules_may_match(f->rules, path))
		return 0;
	if (git_attr_get_many_ext(values, f->repo, &f->attr_opts, path, 2, names) < 0) {
		git_error_clear();
		return 1;
	}
	return (GIT_ATTR_HAS_VALUE(values[0]) && !strcmp(values[0], "crlf")) ||
	       !(GIT_ATTR_IS_UNSPECIFIED(values[1]) || GIT_ATTR_IS_FALSE(values[1]));
}

void stepfilter_free(struct stepfilter *f)
{
	if (!f)
		return;
	attrrules_free(f->rules);
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
	if (!f || !may_convert(f, path))
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
