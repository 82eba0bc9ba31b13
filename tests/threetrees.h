/*
 * The three-remote world test_fixes and test_rerere share: upstream, t1 and t2 as
 * bare repositories in <dir>/remotes, fetched and merged as the trees origin (master),
 * t1 (for-next) and t2 (next); and the group setup and teardown around it.
 * Linked into every test binary.
 */
#ifndef TESTS_THREETREES_H
#define TESTS_THREETREES_H

#include "merge/transport/transport.h"
#include "merge/integrate/integrate.h"

/*
 * The test binary's mkdtemp template and the string of its work directory (both
 * borrowed; *dir is freed by three_trees_teardown()).  Call before the group runs.
 */
void three_trees_world(char *top, char **dir);

/* Points ft[0..2] and it[0..2] at the remotes under `dir` (the urls kept until teardown). */
void three_trees_point(const char *dir, struct fetch_tree ft[3], struct integ_tree it[3]);

/* cmocka group setup: fixture_world_open(top, 0). */
int three_trees_setup(void **state);
/* cmocka group teardown: *dir and the urls freed, fixture_world_close(top). */
int three_trees_teardown(void **state);

#endif
