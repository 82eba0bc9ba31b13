/* Worker checkouts: made by a child as the runner user, in the sandbox; never by nextbot. */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "merge/git/commitgraph_int.h"
#include "merge/worker/gitindex_int.h"
#include "merge/worker/stepcheckout_int.h"
#include "merge/worker/stepfilter_int.h"
#include "merge/worker/treescan_int.h"
#include "merge/git/git_int.h"
#include "merge/repo/repo.h"
#include "merge/worker/worker.h"
#include "merge/worker/worker_int.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/log.h"
#include "util/runcmd.h"
#include "util/strbuf.h"
#include "util/strvec.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define WORKER_TIMEOUT (30 * 60.0)
#define CHILD_OUTPUT_CAP (64 * 1024)
#define OPEN_DIR (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)

/* The child's exit status when the tree holds traps (or has no git dir yet). */
#define EXIT_NEEDS_PRISTINE 3

/* At most this many borrowed object stores are shown in the box. */
#define MAX_ALTERNATES 8

struct worker {
	char *dir, *tree, *git, *run, *common, *exe;
	/* what the box shows read-only: for the checkout child (the repository, the
	   binary, the object stores borrowed), for commands (the repository, the git
	   dir, the same stores); NULL-terminated */
	const char *child_ro[MAX_ALTERNATES + 3], *cmd_ro[MAX_ALTERNATES + 3];
	struct strvec alternates;
	struct worker_opts opts;
	int chown_to;           /* as root: the tree and git dir are the runner's */
	uid_t uid;
	gid_t gid;
	git_repository *repo;
};

/* A path without its trailing slashes (libgit2's commondir ends with one). */
static char *no_trailing_slash(const char *p)
{
	size_t len = strlen(p);

	while (len > 1 && p[len - 1] == '/')
		len--;
	return xstrndup(p, len);
}

/*
 * The object stores the repository borrows from (objects/info/alternates: a
 * repository made with `git clone --reference`, a shared mirror), which a checkout
 * and git in a command need as much as the repository itself.  Those of their own
 * alternates files are not followed (git follows them; a chain is rare).
 */
static void box_paths(struct worker *w)
{
	size_t i, n = 0;

	repo_alternates(&w->alternates, w->common, MAX_ALTERNATES);
	w->child_ro[n] = w->common;
	w->cmd_ro[n++] = w->common;
	w->child_ro[n] = w->exe;
	w->cmd_ro[n++] = w->git;
	/* a store that is gone is no object source: git skips it, and bwrap would fail */
	for (i = 0; i < w->alternates.nr; i++)
		if (file_is_dir(w->alternates.v[i])) {
			w->child_ro[n] = w->cmd_ro[n] = w->alternates.v[i];
			n++;
		}
	w->child_ro[n] = w->cmd_ro[n] = NULL;
}

int worker_open(struct worker **out, const char *repo_path, const char *dir,
		const struct worker_opts *opts)
{
	struct worker *w = xcalloc(1, sizeof(*w));
	int err;

	*out = NULL;
	w->alternates = (struct strvec)STRVEC_INIT;
	w->dir = xstrdup(dir);
	w->tree = xstrfmt("%s/tree", dir);
	w->git = xstrfmt("%s/git", dir);
	w->run = xstrfmt("%s/run", dir);
	if (opts)
		w->opts = *opts;
	if (!w->opts.exe) {
		err = nb_error_set(NB_EINVALID, "worker %s: no nextbot binary to make checkouts",
				   dir);
		goto done;
	}
	w->exe = xstrdup(w->opts.exe);
	if ((err = file_mkdir_p(dir, 0711)) < 0)
		goto done;
	if (git_repository_open(&w->repo, repo_path) < 0) {
		err = merge_git_fail("worker %s: opening the repository", dir);
		goto done;
	}
	if ((err = commitgraph_detach(w->repo)) < 0)
		goto done;
	w->common = no_trailing_slash(git_repository_commondir(w->repo));
	box_paths(w);
	if (!geteuid() && w->opts.user) {
		struct passwd pw, *res = NULL;
		char buf[16384];

		if (getpwnam_r(w->opts.user, &pw, buf, sizeof(buf), &res) || !res) {
			err = nb_error_set(NB_ENOTFOUND, "runner user '%s' does not exist",
					   w->opts.user);
			goto done;
		}
		w->chown_to = 1;
		w->uid = res->pw_uid;
		w->gid = res->pw_gid;
	}
	err = 0;
done:
	if (err < 0)
		worker_free(w);
	else
		*out = w;
	return err;
}

void worker_free(struct worker *w)
{
	if (!w)
		return;
	git_repository_free(w->repo);
	free(w->dir);
	free(w->tree);
	free(w->git);
	free(w->run);
	free(w->common);
	free(w->exe);
	strvec_clear(&w->alternates);
	free(w);
}

/*
 * <dir>/tree, <dir>/git and <dir>/run as empty folders of the runner user's (with `fresh`, or
 * when they are not such folders: an older layout, a file in their place).  <dir>
 * is nextbot's, so nothing can be swapped under these two names meanwhile.
 * Returns 1 when the git dir is new (an incremental checkout has nothing to go
 * from), 0, or NB_ERROR.
 */
static int make_dirs(struct worker *w, int fresh)
{
	static const char *const names[] = { "tree", "git", "run", "index" };
	int dfd, i, error = 0, made_git = 0;

	dfd = open(w->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return nb_error_errno(NB_ERROR, "worker %s: cannot open it", w->dir);
	/* an older nextbot kept the index beside the tree */
	if (unlinkat(dfd, names[3], 0) < 0 && errno != ENOENT && errno != EISDIR)
		log_warn("worker %s: cannot remove its old index: %s", w->dir, strerror(errno));
	for (i = 0; i < 3 && !error; i++) {
		char *path = xstrfmt("%s/%s", w->dir, names[i]);
		struct stat st;
		int ok = !fresh && fstatat(dfd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			 S_ISDIR(st.st_mode) && (!w->chown_to || st.st_uid == w->uid);

		if (!ok && (error = file_remove_tree(path)) == 0) {
			made_git |= i == 1;
			if (mkdirat(dfd, names[i], 0700) < 0 ||
			    fchmodat(dfd, names[i], 0700, 0) < 0 ||
			    (w->chown_to && fchownat(dfd, names[i], w->uid, w->gid,
						     AT_SYMLINK_NOFOLLOW) < 0))
				error = nb_error_errno(NB_ERROR, "worker %s: cannot create '%s'",
						       w->dir, names[i]);
		}
		free(path);
	}
	close(dfd);
	return error ? error : made_git;
}

struct child_args {
	const char *common, *dir;
	const struct nb_oid *commit;
	int pristine;
};

int worker_checkout_child(const char *common_dir, const char *dir, const struct nb_oid *commit,
			  int pristine)
{
	struct strbuf why = STRBUF_INIT;
	int code = worker_checkout_here(&why, common_dir, dir, commit, pristine);

	if (code < 0) {
		strbuf_reset(&why);
		strbuf_addstr(&why, nb_error_last());
	}
	strbuf_addch(&why, '\n');
	if (code && write(1, why.buf, why.len) < 0)
		code = NB_ERROR;
	strbuf_release(&why);
	return code == 1 ? EXIT_NEEDS_PRISTINE : code == NB_ENOTFOUND ? 2 : code < 0 ? 1 : 0;
}

/* The checkout child without exec (runcmd_opts.fn): the same as `nextbot worker-checkout`. */
static int checkout_forked(void *data)
{
	const struct child_args *a = data;

	return worker_checkout_child(a->common, a->dir, a->commit, a->pristine);
}

/*
 * Runs `<exe> worker-checkout …` as the runner user, boxed; its exit status or < 0.
 * With no box and no user to switch to, the child is a fork of this process that
 * checks out without exec'ing nextbot again (when this process has one thread).
 */
static int run_child(struct worker *w, const struct nb_oid *commit, int pristine,
		     struct strbuf *out)
{
	const char *hex = commit->hex; /* the child's command line is text */
	struct child_args args = { w->common, w->dir, commit, pristine };
	const char *argv[] = { w->exe, "worker-checkout", "--common", w->common, "--worker",
			       w->dir, "--commit", hex, pristine ? "--pristine" : NULL, NULL };
	const char *rw[] = { w->tree, w->git, NULL };
	struct runcmd_opts o = RUNCMD_OPTS_INIT;
	struct runcmd_result r = RUNCMD_RESULT_INIT;
	struct runcmd_box box;
	int code;

	o.argv = argv;
	o.user = w->opts.user;
	/* nextbot's own code: no address-space limit (a sanitizer build reserves TBs) */
	o.limits.as_bytes = RUNCMD_NO_LIMIT;
	o.timeout = w->opts.timeout > 0 ? w->opts.timeout : WORKER_TIMEOUT;
	o.output_cap = CHILD_OUTPUT_CAP;
	o.stoppable = 1;
	o.stop = w->opts.stop;
	o.stop_data = w->opts.stop_data;
	if (!w->opts.box && !w->opts.user && runcmd_single_threaded()) {
		o.fn = checkout_forked;
		o.fn_data = &args;
	}
	if (w->opts.box) {
		box = *w->opts.box;
		box.network = 0;
		box.read_only = w->child_ro;
		box.writable = rw;
		o.box = &box;
	}
	if (runcmd_run(&r, &o) < 0) {
		nb_error_prefix("worker %s: the checkout could not run: ", w->dir);
		runcmd_result_release(&r);
		return NB_ERROR;
	}
	strbuf_addbuf(out, &r.output);
	strbuf_trim(out);
	if (r.stopped)
		code = nb_error_set(NB_ERROR, "worker %s: checkout of %.12s stopped: nextbot is "
				    "stopping", w->dir, hex);
	else if (r.timed_out)
		code = nb_error_set(NB_ERROR, "worker %s: checkout of %.12s timed out after %.0f s",
				    w->dir, hex, o.timeout);
	else if (r.exec_failed)
		code = nb_error_set(NB_ERROR, "worker %s: the checkout could not start: %s",
				    w->dir, out->len ? out->buf : "no reason given");
	else
		code = r.exit_code;
	runcmd_result_release(&r);
	return code;
}

int worker_checkout(struct worker *w, const struct nb_oid *commit, int pristine)
{
	struct strbuf out = STRBUF_INIT;
	const char *hex = commit->hex; /* for the log */
	int code;

	if ((code = make_dirs(w, pristine)) < 0)
		goto done;
	pristine |= code;       /* a new git dir: no step to take from it */
	code = run_child(w, commit, pristine, &out);
	if (code > 0 && !pristine) {
		/* a trap, no git dir yet or a failed incremental checkout: start over */
		if (code == EXIT_NEEDS_PRISTINE && !strcmp(out.buf, "no git dir yet"))
			log_verbose("worker %s: a fresh checkout of %.12s", w->dir, hex);
		else if (code == EXIT_NEEDS_PRISTINE)
			log_warn("worker %s: %s: checking out %.12s pristine", w->dir,
				 out.len ? out.buf : "no git dir", hex);
		else
			log_warn("worker %s: incremental checkout of %.12s failed (%s): checking "
				 "out pristine",
				 w->dir, hex, out.len ? out.buf : "no reason given");
		strbuf_reset(&out);
		if ((code = make_dirs(w, 1)) < 0)
			goto done;
		code = run_child(w, commit, 1, &out);
	}
	if (code > 0)
		code = nb_error_set(code == 2 ? NB_ENOTFOUND : NB_ERROR,
				    "worker %s: checkout of %.12s failed: %s", w->dir, hex,
				    out.len ? out.buf : "no reason given");
done:
	strbuf_release(&out);
	return code < 0 ? code : 0;
}

int worker_checkout_git(struct worker *w, const git_oid *commit, int pristine)
{
	struct nb_oid id;

	merge_oid_from_git(&id, commit);
	return worker_checkout(w, &id, pristine);
}

int worker_commit_tree(struct nb_oid *tree, struct worker *w, const struct nb_oid *commit)
{
	git_commit *c = NULL;
	git_oid id;
	int err;

	if ((err = merge_oid_to_git(&id, commit)) < 0)
		return err;
	if (git_commit_lookup(&c, w->repo, &id) < 0)
		return nb_error_set(NB_ENOTFOUND, "worker %s: no commit %s", w->dir, commit->hex);
	merge_oid_from_git(tree, git_commit_tree_id(c));
	git_commit_free(c);
	return 0;
}

const char *worker_tree_path(const struct worker *w)
{
	return w->tree;
}

const char *worker_git_path(const struct worker *w)
{
	return w->git;
}

const char *worker_run_path(const struct worker *w)
{
	return w->run;
}

const char *const *worker_read_only(const struct worker *w)
{
	return w->cmd_ro;
}

const char *worker_common_path(const struct worker *w)
{
	return w->common;
}

/* ---- disposable workers: a disk a command filled is given back at once ---- */

/* Fewer free inodes than this is a full disk too (a build makes many small files). */
#define MIN_FREE_INODES 1000

static unsigned long long min_free;
static void (*relief)(unsigned long long floor);
static pthread_mutex_t events_lock = PTHREAD_MUTEX_INITIALIZER;
static struct strvec events = STRVEC_INIT;

void worker_min_free_set(unsigned long long bytes)
{
	__atomic_store_n(&min_free, bytes, __ATOMIC_RELAXED);
}

void worker_disk_relief_set(void (*fn)(unsigned long long floor))
{
	relief = fn;
}

void worker_disk_events_take(struct strvec *out)
{
	size_t i;

	pthread_mutex_lock(&events_lock);
	for (i = 0; i < events.nr; i++)
		strvec_push(out, events.v[i]);
	strvec_clear(&events);
	pthread_mutex_unlock(&events_lock);
}

/* The disk of `path`: 0 with what is free, or -1 when it cannot be looked at. */
static int disk_look(const char *path, unsigned long long *avail, unsigned long *inodes)
{
	struct statvfs sv;

	if (statvfs(path, &sv) < 0)
		return -1;
	*avail = (unsigned long long)sv.f_bavail * sv.f_frsize;
	*inodes = sv.f_files ? (unsigned long)sv.f_favail : (unsigned long)-1;
	return 0;
}

/* Below the floor of worker_min_free_set() (never when it is 0). */
static int disk_short(unsigned long long avail, unsigned long inodes)
{
	unsigned long long floor = __atomic_load_n(&min_free, __ATOMIC_RELAXED);

	return floor && (avail < floor || inodes < MIN_FREE_INODES);
}

int worker_disk_settle(struct worker *w, const struct nb_oid *commit, const char *what,
		       struct strbuf *why)
{
	unsigned long long avail, after;
	unsigned long inodes, inodes_after;
	struct strbuf line = STRBUF_INIT;
	git_commit *c = NULL;
	git_oid id;
	int err;

	if (disk_look(w->dir, &avail, &inodes) < 0 || !disk_short(avail, inodes))
		return 0;
	/* what gives way first (the compiler cache), then the worker, if it must */
	if (relief) {
		relief(__atomic_load_n(&min_free, __ATOMIC_RELAXED));
		if (disk_look(w->dir, &avail, &inodes) < 0 || !disk_short(avail, inodes))
			return 0;
	}
	strbuf_addf(&line, "`%s` of %.12s", what ? what : "?", commit->hex);
	if (git_oid_fromstr(&id, commit->hex) == 0 && git_commit_lookup(&c, w->repo, &id) == 0)
		strbuf_addf(&line, " (\"%s\")", git_commit_summary(c) ? git_commit_summary(c) : "");
	git_commit_free(c);
	strbuf_addf(&line, " left the disk of %s short (%llu KiB", w->dir, avail >> 10);
	if (inodes != (unsigned long)-1)
		strbuf_addf(&line, ", %lu inodes", inodes);
	strbuf_addstr(&line, " free)");
	/* the tree and its git dir: the next checkout makes both again, pristine */
	err = file_remove_tree(w->tree);
	if (!err)
		err = file_remove_tree(w->git);
	if (err < 0) {
		strbuf_addf(&line, "; its worker could not be removed: %s", nb_error_last());
	} else {
		strbuf_addstr(&line, "; its worker was removed");
		if (disk_look(w->dir, &after, &inodes_after) == 0)
			strbuf_addf(&line, " (%llu KiB free now)", after >> 10);
	}
	log_warn("%s", line.buf);
	strbuf_addbuf(why, &line);
	pthread_mutex_lock(&events_lock);
	strvec_push(&events, line.buf);
	pthread_mutex_unlock(&events_lock);
	strbuf_release(&line);
	return 1;
}

/* ---- the child: `nextbot worker-checkout`, as the runner user ---- */

/* Writes `text` to <dirfd>/<name>, never through a link someone put there. */
static int write_small(int dirfd, const char *name, const char *text, const char *where)
{
	size_t len = strlen(text);
	int fd;

	unlinkat(dirfd, name, 0);
	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		errno = e;
		return nb_error_errno(NB_ERROR, "cannot write %s/%s", where, name);
	}
	return close(fd) < 0 ? nb_error_errno(NB_ERROR, "cannot write %s/%s", where, name) : 0;
}

/* "commondir" and HEAD say what this git dir is: 1 when they are as expected. */
static int git_dir_ready(const char *git, const char *common_dir)
{
	struct strbuf sb = STRBUF_INIT;
	char *path = xstrfmt("%s/commondir", git);
	int ok = strbuf_read_file(&sb, path, 4096) == 0;

	strbuf_trim(&sb);
	ok = ok && !strcmp(sb.buf, common_dir);
	free(path);
	path = xstrfmt("%s/HEAD", git);
	ok = ok && file_exists(path);
	free(path);
	strbuf_release(&sb);
	return ok;
}

/*
 * An incremental checkout: the trap scan (1 with `why` when the tree must be
 * checked out pristine), then the step by what changed.
 */
static int checkout_step(struct strbuf *why, struct stepcheckout_opts *o)
{
	struct gitindex idx = GITINDEX_INIT;
	struct treescan s = { &idx, o->target, { 0, 0 }, NULL, 0 };
	struct stat st;
	int err;

	err = gitindex_read(&idx, why, o->gfd, "index");
	if (err == NB_ENOTFOUND) {
		strbuf_addstr(why, "no index yet");
		err = 1;
	}
	if (err)
		goto done;
	s.files = xcalloc(idx.nr + 1, 1);
	if (!fstatat(o->gfd, "index", &st, AT_SYMLINK_NOFOLLOW))
		s.index_time = st.st_mtim;
	/* a trap (1, with `why`): the caller checks out pristine */
	if ((err = treescan_run(&s, why, o->tfd)) != 0)
		goto done;
	o->idx = &idx;
	o->files = s.files;
	err = stepcheckout_run(why, o);
done:
	o->idx = NULL;
	o->files = NULL;
	free(s.files);
	gitindex_release(&idx);
	return err;
}

/* A pristine checkout into the empty tree: the step from an empty index writes every file. */
static int checkout_fresh(struct stepcheckout_opts *o)
{
	struct gitindex empty = GITINDEX_INIT;
	struct strbuf cannot = STRBUF_INIT;
	int err;

	o->idx = &empty;
	err = stepcheckout_run(&cannot, o);
	if (err == 1)
		err = nb_error_set(NB_ERROR, "cannot check it out: %s", cannot.buf);
	o->idx = NULL;
	strbuf_release(&cannot);
	gitindex_release(&empty);
	return err;
}

int worker_checkout_here(struct strbuf *why, const char *common_dir, const char *dir,
			 const struct nb_oid *commit_id, int pristine)
{
	char *tree = xstrfmt("%s/tree", dir), *git = xstrfmt("%s/git", dir), *line = NULL;
	char hex[GIT_OID_HEXSZ + 2];
	git_oid id, *commit = &id;
	git_repository *repo = NULL;
	git_commit *c = NULL;
	git_tree *target = NULL;
	struct stepcheckout_opts o = STEPCHECKOUT_OPTS_INIT;
	struct strbuf config = STRBUF_INIT;
	int gfd = -1, tfd = -1, err = 0;

	if ((err = merge_oid_to_git(&id, commit_id)) < 0)
		goto done;
	git_oid_tostr(hex, sizeof(hex), commit);
	gfd = open(git, OPEN_DIR);
	tfd = open(tree, OPEN_DIR);
	if (gfd < 0 || tfd < 0) {
		err = nb_error_errno(NB_ERROR, "cannot open %s", gfd < 0 ? git : tree);
		goto done;
	}
	if (!pristine && !git_dir_ready(git, common_dir)) {
		strbuf_addstr(why, "no git dir yet");
		err = 1;
		goto done;
	}
	if (pristine) {
		line = xstrfmt("%s\n", common_dir);
		if ((err = write_small(gfd, "commondir", line, git)) < 0)
			goto done;
		free(line);
		line = xstrfmt("%s\n", hex);
		if ((err = write_small(gfd, "HEAD", line, git)) < 0)
			goto done;
	}
	/*
	 * The work repository is nextbot's, not the runner user's, and libgit2 (which
	 * runs no hooks and no fsmonitor from a config) would refuse it for that; the
	 * layout is the one nextbot made, so the check protects nothing here.
	 */
	git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, 0);
	if (git_repository_open_ext(&repo, git, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0 ||
	    git_repository_set_workdir(repo, tree, 0) < 0) {
		err = nb_error_set(NB_ERROR, "cannot open %s: %s", git, merge_git_error());
		goto done;
	}
	if (git_commit_lookup(&c, repo, commit) < 0 || git_commit_tree(&target, c) < 0) {
		err = nb_error_set(NB_ENOTFOUND, "no commit %s: %s", hex, merge_git_error());
		goto done;
	}
	stepfilter_describe_config(&config, repo, common_dir);
	o.repo = repo;
	o.target = target;
	o.commit = commit;
	o.filter_config = config.buf;
	o.tfd = tfd;
	o.gfd = gfd;
	o.git = git;
	err = pristine ? checkout_fresh(&o) : checkout_step(why, &o);
	if (err)
		goto done;
	free(line);
	line = xstrfmt("%s\n", hex);
	if ((err = write_small(gfd, "HEAD", line, git)) < 0)
		goto done;
	free(line);
	line = xstrfmt("gitdir: %s\n", git);
	err = write_small(tfd, ".git", line, tree);
done:
	git_tree_free(target);
	git_commit_free(c);
	git_repository_free(repo);
	if (gfd >= 0)
		close(gfd);
	if (tfd >= 0)
		close(tfd);
	free(line);
	free(tree);
	free(git);
	strbuf_release(&config);
	return err;
}
