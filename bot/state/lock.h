/* The run lock: one writer of a work directory at a time. */
#ifndef BOT_LOCK_H
#define BOT_LOCK_H

struct run_lock {
	int fd;
};
#define RUN_LOCK_INIT { -1 }

/*
 * Takes workdir/lock with a non-blocking flock and writes our pid into it.
 * Returns NB_ELOCKED (error names the holder's pid) when another process holds
 * it.  A lock left by a dead process does not block: the kernel dropped its flock.
 */
int run_lock_take(struct run_lock *lock, const char *workdir);
void run_lock_release(struct run_lock *lock);

/*
 * Removes the temp files an atomic replace leaves when it is killed
 * ("<name>.tmp.<tid>.<n>" in workdir, its outbox, verdicts/<xx> and runs/<date>).
 * Call with the lock held: no writer of ours is running then.
 */
void run_lock_clean_temp(const char *workdir);

#endif
