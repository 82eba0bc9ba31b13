/* flock-based run lock; the pid inside is for the message, not for the locking. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "bot/state/state.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

int run_lock_take(struct run_lock *lock, const char *workdir)
{
	char *path = xstrfmt("%s/lock", workdir);
	struct strbuf holder = STRBUF_INIT;
	char pid[32];
	int fd, error = 0, len;

	if ((error = file_mkdir_p(workdir, 0711)) < 0)
		goto done;
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		error = nb_error_errno(NB_ERROR, "cannot open lock '%s'", path);
		goto done;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int busy = errno == EWOULDBLOCK;

		strbuf_read_file(&holder, path, 64);
		strbuf_trim(&holder);
		close(fd);
		if (busy)
			error = nb_error_set(NB_ELOCKED, "another nextbot (pid %s) holds '%s'",
					     holder.len ? holder.buf : "unknown", path);
		else
			error = nb_error_errno(NB_ERROR, "cannot lock '%s'", path);
		goto done;
	}
	/*
	 * The holder's pid is for messages only (the flock is the lock): on a full disk,
	 * which the night is about to reclaim, the lock is held without it.
	 */
	len = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)len, 0) != len) {
		if (errno != ENOSPC && errno != EDQUOT) {
			close(fd);
			error = nb_error_errno(NB_ERROR, "cannot write lock '%s'", path);
			goto done;
		}
		log_warn("%s: the holder's pid not written (%s): the disk is full", path,
			 strerror(errno));
	}
	lock->fd = fd;
	run_lock_clean_temp(workdir);
done:
	strbuf_release(&holder);
	free(path);
	return error;
}

void run_lock_release(struct run_lock *lock)
{
	if (lock->fd >= 0) {
		/* the holder's line is informational: a lock left with it is still free */
		(void)!ftruncate(lock->fd, 0);
		close(lock->fd);
	}
	lock->fd = -1;
}

static void clean_dir(const char *dir, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		char *path;

		if (de->d_name[0] == '.')
			continue;
		path = xstrfmt("%s/%s", dir, de->d_name);
		if (strstr(de->d_name, ".tmp.") && !file_is_dir(path))
			unlink(path);
		else if (depth > 0 && file_is_dir(path))
			clean_dir(path, depth - 1);
		free(path);
	}
	closedir(d);
}

void run_lock_clean_temp(const char *workdir)
{
	char *outbox = xstrfmt("%s/outbox", workdir), *runs = xstrfmt("%s/runs", workdir);
	char *verdicts = xstrfmt("%s/verdicts", workdir);
	char *workers = xstrfmt("%s/workers", workdir);

	clean_dir(workdir, 0);
	clean_dir(outbox, 0);
	clean_dir(runs, 1);
	clean_dir(verdicts, 1);  /* verdicts/<2 hex>/<key> */
	clean_dir(workers, 0);   /* the copy of the binary; never into a worker */
	free(workers);
	free(outbox);
	free(runs);
	free(verdicts);
}
