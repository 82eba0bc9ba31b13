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
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		nb_error_errno(NB_ERROR, "cannot create '%s'", tmp);
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
		if (sb.len && mkdir(sb.buf, (mode_t)mode) < 0 && errno != EEXIST) {
			error = nb_error_errno(NB_ERROR, "cannot create directory '%s'", sb.buf);
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

int file_remove_tree(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	int error = 0;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : nb_error_errno(NB_ERROR, "cannot stat '%s'", path);
	if (!S_ISDIR(st.st_mode)) {
		if (unlink(path) < 0 && errno != ENOENT)
			return nb_error_errno(NB_ERROR, "cannot remove '%s'", path);
		return 0;
	}
	d = opendir(path);
	if (!d)
		return nb_error_errno(NB_ERROR, "cannot open directory '%s'", path);
	while (!error && (de = readdir(d))) {
		char *sub;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		sub = xstrfmt("%s/%s", path, de->d_name);
		error = file_remove_tree(sub);
		free(sub);
	}
	closedir(d);
	if (!error && rmdir(path) < 0 && errno != ENOENT)
		error = nb_error_errno(NB_ERROR, "cannot remove directory '%s'", path);
	return error;
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
