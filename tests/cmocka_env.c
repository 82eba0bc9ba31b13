/*
 * Linked into every unit-test binary: picks test cases by name from the environment,
 * so `make unit TESTS='oracle_*'` or `CMOCKA_FILTER=... build/tests/test_bisect` runs
 * only those.  CMOCKA_FILTER runs the cases whose name matches (cmocka's wildcards:
 * `*` and `?`); CMOCKA_SKIP skips the matching ones.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "util/banned.h"

__attribute__((constructor)) static void cmocka_env(void)
{
	const char *run = getenv("CMOCKA_FILTER"), *skip = getenv("CMOCKA_SKIP");

	if (run && *run)
		cmocka_set_test_filter(run);
	if (skip && *skip)
		cmocka_set_skip_filter(skip);
}
