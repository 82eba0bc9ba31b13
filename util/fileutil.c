/* Durable file replacement and directory helpers, with fault injection for tests. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fileutil.h"
#include "util/error.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

int file_fault_check(const char *op)
{
	static long counts[4];
	static const char *ops[] = { "open", "write", "fsync", "rename" };
	const char *spec = getenv("NEXTBOT_FAULT");
	size_t oplen = strlen(op);
	char *end;
	long n;
	int i;

	if (!spec || strncmp(spec, op, oplen) || spec[oplen] != ':')
		return 0;
	for (i = 0; i < 4; i++)
		if (!strcmp(ops[i], op))
			break;
	if (i == 4)
		return 0;
	n = strtol(spec + oplen + 1, &end, 10);
	if (++counts[i] != n)
		return 0;
	if (!strcmp(end, ":kill"))
		kill(getpid(), SIGKILL);
	errno = EIO;
	return -1;
}

int file_fsync_dir(const char *dir)
{
	int fd, ret;

	if (file_fault_check("open"))
		return nb_error_errno(NB_ERROR, "cannot open directory '%s'", dir);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return nb_error_errno(NB_ERROR, "cannot open directory '%s'", dir);
	ret = file_fault_check("fsync") ? -1 : fsync(fd);
	close(fd);
	if (ret < 0)
		return nb_error_errno(NB_ERROR, "cannot fsync directory '%s'", dir);
	return 0;
}

static int write_all(int fd, const char *data, size_t len)
{
	while (len) {
		ssize_t n;

		if (file_fault_check("write"))
			return -1;
		n = write(fd, data, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

static char *dirname(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return xstrdup(".");
	if (slash == path)
		return xstrdup("/");
	return xstrndup(path, (size_t)(slash - path));
}

int file_write_atomic(const char *path, const void *data, size_t len)
{
	return file_write_atomic_mode(path, data, len, 0600);
}

int file_write_public(const char *path, const void *data, size_t len)
{
	return file_write_atomic_mode(path, data, len, 0644);
}

int file_write_atomic_mode(const char *path, const void *data, size_t len, int mode)
{
	static unsigned counter;
	/* unique per thread and call: two threads may replace the same file at once */
	char *tmp = xstrfmt("%s.tmp.%ld.%u", path, (long)gettid(),
			    __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED));
	char *dir = dirname(path);
	int fd = -1, error = NB_ERROR;

	if (file_fault_check("open")) {
		nb_error_errno(NB_ERROR, "cannot create '%s'", tmp);
		goto done;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  (mode_t)mode);
	if (fd < 0) {
		nb_error_errno(NB_ERROR, "cannot create '%s'", tmp);
		goto done;
	}
	/* the umask may have taken bits away; a public file gets them back, no more */
	if (fchmod(fd, (mode_t)mode) < 0) {
		nb_error_errno(NB_ERROR, "cannot set the mode of '%s'", tmp);
		goto done;
	}
	if (write_all(fd, data, len) < 0) {
		nb_error_errno(NB_ERROR, "cannot write '%s'", tmp);
		goto done;
	}
	if (file_fault_check("fsync") || fsync(fd) < 0) {
		nb_error_errno(NB_ERROR, "cannot fsync '%s'", tmp);
		goto done;
	}
	if (close(fd) < 0) {
		fd = -1;
		nb_error_errno(NB_ERROR, "cannot close '%s'", tmp);
		goto done;
	}
	fd = -1;
	if (file_fault_check("rename") || rename(tmp, path) < 0) {
		nb_error_errno(NB_ERROR, "cannot rename '%s' to '%s'", tmp, path);
		goto done;
	}
	error = file_fsync_dir(dir);
done:
	if (fd >= 0)
		close(fd);
	if (error < 0)
		unlink(tmp);
	free(tmp);
	free(dir);
	return error;
}

int file_mkdir_p(const char *path, int mode)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p = path;
	int error = 0;

	while (1) {
		const char *slash = strchr(p + (*p == '/'), '/');

		strbuf_reset(&sb);
		strbuf_add(&sb, path, slash ? (size_t)(slash - path) : strlen(path));
		if (sb.len && mkdir(sb.buf, (mode_t)mode) < 0) {
			if (errno != EEXIST) {
				error = nb_error_errno(NB_ERROR, "cannot create directory '%s'",
						       sb.buf);
				break;
			}
		} else if (sb.len && chmod(sb.buf, (mode_t)mode) < 0) {
			/* the mode asked for, whatever the umask took away */
			error = nb_error_errno(NB_ERROR, "cannot set the mode of '%s'", sb.buf);
			break;
		}
		if (!slash)
			break;
		p = slash + 1;
	}
	if (!error && !file_is_dir(path))
		error = nb_error_set(NB_ERROR, "'%s' exists and is not a directory", path);
	strbuf_release(&sb);
	return error;
}

/*
 * Removing a tree someone else filled (a worker that ran strangers' code): only
 * directories are ever opened, each with O_NOFOLLOW|O_DIRECTORY|O_NONBLOCK relative
 * to its parent's descriptor, so a symlink, FIFO, socket or device is unlinked
 * and never followed or opened, and nothing is looked up by path below the top.
 * A directory we cannot open (chmod 000) is given back its owner's rights first.
 * A tree deeper than REMOVE_DEPTH open directories has its deep part moved up to
 * the top and removed on a later pass, so neither the stack nor the descriptors
 * grow with the depth (a pass that did only that is not counted); a bounded
 * number of passes ends even a tree that a leftover process keeps filling.
 */
#define REMOVE_DEPTH 48
#define REMOVE_PASSES 64
/* deep parts moved up before passes that move them count too: a tree that grows */
#define REMOVE_MOVES_MAX (1u << 20)

struct rm_frame {
	int fd;
	DIR *d;
	char *name;  /* its name in the frame below */
};

static int open_dir_at(int dirfd, const char *name)
{
	int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
	int fd = openat(dirfd, name, flags);

	if (fd < 0 && errno == EACCES &&
	    fchmodat(dirfd, name, 0700, AT_SYMLINK_NOFOLLOW) == 0)
		fd = openat(dirfd, name, flags);
	return fd;
}

/*
 * unlinkat() in a folder being emptied, which a command may have left without
 * write permission (chmod 555): its owner's rights are given back and it is tried
 * again.
 */
static int unlink_in(int dirfd, const char *name)
{
	int ret = unlinkat(dirfd, name, 0);

	if (ret < 0 && errno == EACCES && fchmod(dirfd, 0700) == 0)
		ret = unlinkat(dirfd, name, 0);
	return ret;
}

static int rmdir_in(int dirfd, const char *name)
{
	int ret = unlinkat(dirfd, name, AT_REMOVEDIR);

	if (ret < 0 && errno == EACCES && fchmod(dirfd, 0700) == 0)
		ret = unlinkat(dirfd, name, AT_REMOVEDIR);
	return ret;
}

static int is_dir_at(int dirfd, const char *name, unsigned char type)
{
	struct stat st;

	if (type != DT_UNKNOWN)
		return type == DT_DIR;
	return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

/*
 * One pass over the directory open at `top`: 0 when it is empty now, 1 to go
 * again (something changed meanwhile), 2 to go again for the deep parts it moved up.
 */
static int remove_pass(int top, const char *path, unsigned *moved)
{
	struct rm_frame stack[REMOVE_DEPTH];
	int depth = 0, again = 0, deep = 0, fd;
	struct dirent *de;

	fd = dup(top);
	if (fd < 0)
		return nb_error_errno(NB_ERROR, "cannot remove '%s'", path);
	lseek(fd, 0, SEEK_SET);
	stack[0] = (struct rm_frame){ fd, fdopendir(fd), NULL };
	if (!stack[0].d) {
		close(fd);
		return nb_error_errno(NB_ERROR, "cannot read directory '%s'", path);
	}
	rewinddir(stack[0].d);
	depth = 1;
	while (depth > 0) {
		struct rm_frame *f = &stack[depth - 1];

		errno = 0;
		de = readdir(f->d);
		if (!de) {
			closedir(f->d);
			depth--;
			if (depth > 0 && rmdir_in(stack[depth - 1].fd, f->name) < 0 &&
			    errno != ENOENT)
				again = 1;
			free(f->name);
			continue;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!is_dir_at(f->fd, de->d_name, de->d_type)) {
			if (unlink_in(f->fd, de->d_name) < 0 && errno != ENOENT) {
				if (errno != EISDIR)
					goto fail;
				again = 1; /* replaced by a directory meanwhile */
			}
			continue;
		}
		if (depth == REMOVE_DEPTH) {
			char name[64];

			snprintf(name, sizeof(name), ".nextbot-deep-%u", (*moved)++);
			if (renameat(f->fd, de->d_name, top, name) < 0 &&
			    (errno != EACCES || fchmod(f->fd, 0700) < 0 || fchmod(top, 0700) < 0 ||
			     renameat(f->fd, de->d_name, top, name) < 0))
				goto fail;
			deep = 1;
			continue;
		}
		fd = open_dir_at(f->fd, de->d_name);
		if (fd < 0) {
			if (errno == ENOENT)
				continue;
			if (errno == ENOTDIR || errno == ELOOP) {
				again = 1; /* replaced meanwhile: the next pass unlinks it */
				continue;
			}
			goto fail;
		}
		stack[depth] = (struct rm_frame){ fd, fdopendir(fd), xstrdup(de->d_name) };
		if (!stack[depth].d) {
			close(fd);
			free(stack[depth].name);
			goto fail;
		}
		depth++;
	}
	return again ? 1 : deep ? 2 : 0;
fail:
	nb_error_errno(NB_ERROR, "cannot remove '%s/…/%s'", path, de ? de->d_name : "");
	while (depth > 0) {
		depth--;
		closedir(stack[depth].d);
		free(stack[depth].name);
	}
	return NB_ERROR;
}

/* Removes the entry `base` of the folder open at `pfd`; `path` names it in errors. */
static int remove_at(int pfd, const char *base, const char *path)
{
	struct stat st;
	unsigned moved = 0;
	int top = -1, error = 0, pass;

	if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : nb_error_errno(NB_ERROR, "cannot stat '%s'", path);
	if (!S_ISDIR(st.st_mode)) {
		if (unlinkat(pfd, base, 0) < 0 && errno != ENOENT)
			error = nb_error_errno(NB_ERROR, "cannot remove '%s'", path);
		return error;
	}
	top = open_dir_at(pfd, base);
	if (top < 0)
		return errno == ENOENT ? 0 : nb_error_errno(NB_ERROR, "cannot open '%s'", path);
	/* a pass that only moved deep parts up made progress: it is not counted */
	for (pass = 0; pass < REMOVE_PASSES;) {
		error = remove_pass(top, path, &moved);
		if (error <= 0)
			break;
		if (error == 1 || moved > REMOVE_MOVES_MAX)
			pass++;
	}
	if (error > 0)
		error = nb_error_set(NB_ERROR, "cannot remove '%s': it keeps changing", path);
	else if (!error && unlinkat(pfd, base, AT_REMOVEDIR) < 0 && errno != ENOENT)
		error = nb_error_errno(NB_ERROR, "cannot remove directory '%s'", path);
	close(top);
	return error;
}

int file_remove_tree(const char *path)
{
	char *parent = dirname(path);
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	int pfd, error = 0;

	if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) {
		free(parent);
		return nb_error_set(NB_EINVALID, "will not remove '%s'", path);
	}
	/* O_PATH: a parent one may enter but not list (0711) is enough */
	pfd = open(parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		error = errno == ENOENT ? 0 : nb_error_errno(NB_ERROR, "cannot open '%s'", parent);
	else
		error = remove_at(pfd, base, path);
	if (pfd >= 0)
		close(pfd);
	free(parent);
	return error;
}

int file_remove_at(int dirfd, const char *name, const char *path)
{
	if (!*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return nb_error_set(NB_EINVALID, "will not remove '%s'", path);
	return remove_at(dirfd, name, path);
}

int file_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

int file_is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}
