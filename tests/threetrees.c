/* The three-remote world of test_fixes and test_rerere (see threetrees.h). */
#include <stdlib.h>

#include "tests/threetrees.h"
#include "tests/gitfixture.h"
#include "util/xalloc.h"
#include "util/banned.h"

static char *world_top;
static char **world_dir;
static char *urls[3];

void three_trees_world(char *top, char **dir)
{
	world_top = top;
	world_dir = dir;
}

static void free_urls(void)
{
	int i;

	for (i = 0; i < 3; i++) {
		free(urls[i]);
		urls[i] = NULL;
	}
}

void three_trees_point(const char *dir, struct fetch_tree ft[3], struct integ_tree it[3])
{
	static const char *const names[3] = { "origin", "t1", "t2" };
	static const char *const remotes[3] = { "upstream", "t1", "t2" };
	static const char *const branches[3] = { "master", "for-next", "next" };
	int i;

	free_urls();
	for (i = 0; i < 3; i++) {
		urls[i] = xstrfmt("file://%s/remotes/%s.git", dir, remotes[i]);
		ft[i] = (struct fetch_tree){ names[i], urls[i], branches[i], NULL };
		it[i] = (struct integ_tree){ names[i], urls[i], branches[i] };
	}
}

int three_trees_setup(void **state)
{
	(void)state;
	return fixture_world_open(world_top, 0);
}

int three_trees_teardown(void **state)
{
	(void)state;
	free(*world_dir);
	*world_dir = NULL;
	free_urls();
	fixture_world_close(world_top);
	return 0;
}
