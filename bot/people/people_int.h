/* Internal to bot/people/: what `struct people` holds, shared by the room's files. */
#ifndef BOT_PEOPLE_PEOPLE_INT_H
#define BOT_PEOPLE_PEOPLE_INT_H

#include "bot/people/maint_int.h"
#include "bot/people/people.h"

struct people {
	struct maint_file mf;
	struct mailmap *mailmap; /* NULL: the tree has no .mailmap */
	char **dirs;		 /* the tree's directories, open addressing */
	size_t dirs_cap;
	struct strvec files;	 /* the tree's files, as given */
	struct strvec absent;	 /* canonical addresses the audit calls absent */
};

/* 1 when `path` ("drivers/net") is a directory of the tree; ctx is the people. */
int people_is_dir(void *ctx, const char *path);

#endif
