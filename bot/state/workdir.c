/* Keeping the workdir private, and checking that the runner user reaches its workers. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bot/state/state.h"
#include "merge/repo/repo.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/log.h"
#include "util/runcmd.h"
#include "util/strbuf.h"
#include "util/strvec.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define OPEN_DIR (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)

static void chmod_at(int dirfd, const char *name, const struct stat *st, mode_t want)
{
	if ((st->st_mode & 07777) != want &&
	    fchmodat(dirfd, name, want, AT_SYMLINK_NOFOLLOW) < 0 && errno != EOPNOTSUPP)
		log_warn("workdir: cannot make '%s' private: %s", name, strerror(errno));
}

/* One entry of a folder, as lstat saw it. */
typedef void entry_fn(int dirfd, const char *name, const struct stat *st, void *arg);

/* fn on each entry of dirfd but "." and "..", then dirfd closed: 0, or -1 if unreadable. */
static int for_each_entry_at(int dirfd, entry_fn *fn, void *arg)
{
	DIR *d = fdopendir(dirfd);
	struct dirent *de;
	struct stat st;

	if (!d) {
		close(dirfd);
		return -1;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			fn(dirfd, de->d_name, &st, arg);
	closedir(d);
	return 0;
}

static void tighten(int dirfd, int depth);

static void tighten_entry(int dirfd, const char *name, const struct stat *st, void *arg)
{
	int depth = *(const int *)arg, fd;

	if (S_ISDIR(st->st_mode)) {
		chmod_at(dirfd, name, st, (st->st_mode & 07000) | 0700);
		if (depth < 32 && (fd = openat(dirfd, name, OPEN_DIR)) >= 0)
			tighten(fd, depth + 1);
	} else if (S_ISREG(st->st_mode)) {
		chmod_at(dirfd, name, st, st->st_mode & 0700);
	}
}

/* The bot's own files below dirfd: folders 0700, files 0600 (executables 0700). */
static void tighten(int dirfd, int depth)
{
	for_each_entry_at(dirfd, tighten_entry, &depth);
}

static void tighten_worker_entry(int dirfd, const char *name, const struct stat *st, void *arg)
{
	(void)arg;
	if (S_ISDIR(st->st_mode))
		chmod_at(dirfd, name, st, 0711);
	else if (S_ISREG(st->st_mode))
		chmod_at(dirfd, name, st, st->st_mode & 0700);
}

/* workers/: 0711 itself and each worker folder; inside a worker, only its own files. */
static void tighten_workers(int dirfd)
{
	for_each_entry_at(dirfd, tighten_worker_entry, NULL);
}

struct share_walk {
	gid_t gid;
	int depth;
};

static void share(int dirfd, gid_t gid, int depth);

static void share_entry(int dirfd, const char *name, const struct stat *st, void *arg)
{
	const struct share_walk *sw = arg;
	int fd;

	if (!S_ISDIR(st->st_mode) && !S_ISREG(st->st_mode))
		return;
	if (st->st_gid != sw->gid &&
	    fchownat(dirfd, name, (uid_t)-1, sw->gid, AT_SYMLINK_NOFOLLOW) < 0)
		log_warn("workdir: cannot give '%s' to the runner's group: %s", name,
			 strerror(errno));
	if (S_ISDIR(st->st_mode)) {
		chmod_at(dirfd, name, st, 02750);
		if (sw->depth < 32 && (fd = openat(dirfd, name, OPEN_DIR)) >= 0)
			share(fd, sw->gid, sw->depth + 1);
	} else {
		chmod_at(dirfd, name, st, (st->st_mode & 0700) | 0040);
	}
}

/* The work repository below dirfd, for the runner's group: folders 2750, files g+r. */
static void share(int dirfd, gid_t gid, int depth)
{
	struct share_walk sw = { .gid = gid, .depth = depth };

	for_each_entry_at(dirfd, share_entry, &sw);
}

/*
 * repo.git, readable by the runner user's group (as root): the worker checkouts
 * are made by that user, and git in the sandbox reads objects and refs.  A folder
 * already 2750 of that group is taken as done: new files inherit the group
 * (setgid folders) and the umask (027) leaves them group-readable.
 */
static int share_repo(int top, const char *workdir, const char *user)
{
	struct passwd *pw = geteuid() == 0 && user ? getpwnam(user) : NULL;
	struct stat st;
	int fd;

	if (!pw)
		return 0;
	if (fstatat(top, "repo.git", &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (mkdirat(top, "repo.git", 02750) < 0)
			return 1;
		if (fstatat(top, "repo.git", &st, AT_SYMLINK_NOFOLLOW) < 0)
			return 1;
	}
	if (!S_ISDIR(st.st_mode) ||
	    (st.st_gid == pw->pw_gid && (st.st_mode & 07777) == 02750))
		return 1;
	log_info("workdir: making '%s/repo.git' readable by the runner user's group", workdir);
	if (fchownat(top, "repo.git", (uid_t)-1, pw->pw_gid, AT_SYMLINK_NOFOLLOW) < 0 ||
	    fchmodat(top, "repo.git", 02750, 0) < 0)
		log_warn("workdir: cannot share '%s/repo.git': %s", workdir, strerror(errno));
	if ((fd = openat(top, "repo.git", OPEN_DIR)) >= 0)
		share(fd, pw->pw_gid, 0);
	return 1;
}

struct private_walk {
	const char *workdir;
	int shared;
};

static void private_entry(int top, const char *name, const struct stat *st, void *arg)
{
	const struct private_walk *pw = arg;
	int fd;

	if (!S_ISDIR(st->st_mode)) {
		if (S_ISREG(st->st_mode))
			chmod_at(top, name, st, st->st_mode & 0700);
		return;
	}
	if (pw->shared && !strcmp(name, "repo.git"))
		return;
	if (!strcmp(name, "workers")) {
		chmod_at(top, name, st, 0711);
		if ((fd = openat(top, name, OPEN_DIR)) >= 0)
			tighten_workers(fd);
		return;
	}
	/* a folder already private was made so by this code: its content too */
	if (!(st->st_mode & 077))
		return;
	log_info("workdir: making '%s/%s' private (0700 folders, 0600 files)", pw->workdir, name);
	chmod_at(top, name, st, (st->st_mode & 07000) | 0700);
	if ((fd = openat(top, name, OPEN_DIR)) >= 0)
		tighten(fd, 0);
}

int workdir_make_private(const char *workdir, const char *user)
{
	struct private_walk pw = { .workdir = workdir };
	struct stat st;
	int top;

	if (file_mkdir_p(workdir, 0711) < 0)
		return NB_ERROR;
	top = open(workdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (top < 0)
		return nb_error_errno(NB_ERROR, "cannot open the workdir '%s'", workdir);
	if (fstat(top, &st) == 0 && (st.st_mode & 07777) != 0711 && fchmod(top, 0711) < 0)
		log_warn("workdir: cannot make '%s' 0711: %s", workdir, strerror(errno));
	pw.shared = share_repo(top, workdir, user);
	if (for_each_entry_at(top, private_entry, &pw) < 0)
		return nb_error_errno(NB_ERROR, "cannot read the workdir '%s'", workdir);
	return 0;
}

/* "'/root' (0700 root:root)" for the first component `user` cannot search, into sb. */
static void describe(struct strbuf *sb, const char *path)
{
	struct stat st;
	struct passwd *pw;
	struct group *gr;

	if (stat(path, &st) < 0) {
		strbuf_addf(sb, "'%s' (%s)", path, strerror(errno));
		return;
	}
	pw = getpwuid(st.st_uid);
	gr = getgrgid(st.st_gid);
	strbuf_addf(sb, "'%s' (%04o ", path, (unsigned)(st.st_mode & 07777));
	if (pw)
		strbuf_addstr(sb, pw->pw_name);
	else
		strbuf_addf(sb, "%ld", (long)st.st_uid);
	if (gr)
		strbuf_addf(sb, ":%s)", gr->gr_name);
	else
		strbuf_addf(sb, ":%ld)", (long)st.st_gid);
}

int workdir_check_reach(const char *dir, const char *user)
{
	struct passwd pw, *res = NULL;
	char buf[16384];
	gid_t groups[256];
	int ngroups = 256, status, error = 0;
	struct strvec prefixes = STRVEC_INIT;
	const char *p;
	size_t i;
	pid_t pid;

	if (geteuid() != 0)
		return 0;
	if (getpwnam_r(user, &pw, buf, sizeof(buf), &res) || !res)
		return nb_error_set(NB_ERROR, "runner user '%s' does not exist", user);
	if (getgrouplist(user, pw.pw_gid, groups, &ngroups) < 0)
		ngroups = 0;
	/* every prefix of the path, and the path itself */
	for (p = dir; *p && prefixes.nr < 254;) {
		const char *slash = strchr(p + 1, '/');

		if (!slash)
			break;
		if (slash > dir)
			strvec_pushf(&prefixes, "%.*s", (int)(slash - dir), dir);
		p = slash;
	}
	strvec_push(&prefixes, dir);
	pid = fork();
	if (pid < 0) {
		error = nb_error_errno(NB_ERROR, "cannot fork");
		goto done;
	}
	if (!pid) {
		if (setgroups((size_t)ngroups, groups) < 0 || setgid(pw.pw_gid) < 0 ||
		    setuid(pw.pw_uid) < 0)
			_exit(255);
		/* what does not exist yet nextbot creates 0711 */
		for (i = 0; i < prefixes.nr; i++)
			if (access(prefixes.v[i], X_OK) < 0)
				_exit(errno == ENOENT ? 0 : (int)i + 1);
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) == 255) {
		error = nb_error_set(NB_ERROR, "cannot check as user '%s' whether it reaches '%s'",
				     user, dir);
	} else if (WEXITSTATUS(status)) {
		struct strbuf sb = STRBUF_INIT;

		describe(&sb, prefixes.v[WEXITSTATUS(status) - 1]);
		error = nb_error_set(NB_ERROR,
				     "the runner user '%s' cannot reach '%s': %s stops it; every "
				     "command would fail (give the folders on the way o+x, or move "
				     "it)",
				     user, dir, sb.buf);
		strbuf_release(&sb);
	}
done:
	strvec_clear(&prefixes);
	return error;
}

int workdir_check_alternates(const char *workdir, const char *user)
{
	struct strvec alt = STRVEC_INIT;
	char *repo = xstrfmt("%s/repo.git", workdir);
	size_t i;
	int error = 0;

	repo_alternates(&alt, repo, 8);
	for (i = 0; i < alt.nr && !error; i++)
		if ((error = workdir_check_reach(alt.v[i], user)) < 0)
			nb_error_prefix("the work repository borrows objects from '%s' "
					"(objects/info/alternates): ", alt.v[i]);
	strvec_clear(&alt);
	free(repo);
	return error;
}

int workdir_check_sandbox(const char *bwrap, const char *user, const char *workdir)
{
	struct runcmd_opts o = RUNCMD_OPTS_INIT;
	struct runcmd_result r = RUNCMD_RESULT_INIT;
	const char *argv[] = { "true", NULL }, *hide[] = { workdir, NULL };
	struct runcmd_box box = { .bwrap = bwrap, .hide = hide };
	int error = 0;

	o.argv = argv;
	o.user = user;
	o.box = &box;
	o.timeout = 60;
	if (runcmd_run(&r, &o) < 0) {
		error = nb_error_set(NB_ERROR, "the sandbox cannot start: %s", nb_error_last());
	} else if (r.exit_code != 0 || r.box_failed) {
		strbuf_trim(&r.output);
		error = nb_error_set(NB_ERROR,
				     "the sandbox cannot start here (%s): %s; runner.sandbox: none "
				     "runs commands without one", bwrap,
				     r.output.len ? r.output.buf : "no reason given");
	}
	runcmd_result_release(&r);
	return error;
}
