/*
 * What a maintainer dropped from a tree, as integration (integrate.h) and the
 * replay without them (replay_int.h) both take it: a type alone.
 */
#ifndef MERGE_INTEG_DROPS_H
#define MERGE_INTEG_DROPS_H

#include <stddef.h>

#include "util/oid.h"

/* Patches a maintainer dropped: they match by patch-id or Message-ID (no <>). */
struct integ_drops {
	const struct nb_patchid *patch_ids;  /* none of them none */
	size_t patch_ids_nr;
	const char *const *message_ids;
	size_t message_ids_nr;
};

#endif
