/* Pruning the outbox spool (`nextbot gc`): sent notices are removed. */
#ifndef NOTIFY_PRUNE_H
#define NOTIFY_PRUNE_H

#include <stddef.h>
#include <time.h>

/*
 * Removes the notices of `outbox_dir` whose state is "sent" and that were sent
 * before `older_than` (a sent notice without a time counts as old).  Queued and
 * failed notices are kept, and so are files that are not notices.  *removed (may
 * be NULL) gets how many were removed.  Returns 0, or a negative error when the
 * directory cannot be read.  The caller holds the run lock.
 */
int notice_outbox_prune(const char *outbox_dir, time_t older_than, size_t *removed);

#endif
