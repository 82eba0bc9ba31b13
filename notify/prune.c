/* Removing sent notices from the outbox spool. */
#include <stdlib.h>
#include <unistd.h>

#include "notify/outbox.h"
#include "notify/prune.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/banned.h"

int notice_outbox_prune(const char *outbox_dir, time_t older_than, size_t *removed)
{
	char **ids = NULL;
	size_t nr = 0, i, n = 0;
	int err;

	if ((err = outbox_ids(&ids, &nr, outbox_dir)) < 0)
		return err;
	for (i = 0; i < nr; i++) {
		struct outbox_notice note = OUTBOX_NOTICE_INIT;
		char *path = outbox_notice_path(outbox_dir, ids[i]);

		if (outbox_notice_load(&note, path) == 0 && note.state == OUTBOX_SENT &&
		    note.sent < older_than && unlink(path) == 0)
			n++;
		outbox_notice_release(&note);
		free(path);
	}
	if (n)
		file_fsync_dir(outbox_dir);
	outbox_ids_free(ids, nr);
	if (removed)
		*removed = n;
	return 0;
}
