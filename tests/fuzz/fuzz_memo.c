/*
 * Fuzz target: the merge memo file (merge/integrate/mergememo.c), damaged or hostile.  Any
 * bytes load (a damaged tail is dropped, never a crash); an entry added on top,
 * whose diffstat is the input itself, survives a save and a load exactly, and the
 * saved file is a fixed point (loading and saving it again changes nothing).
 */
#include <stdint.h>
#include <string.h>
#include <git2.h>

#include "merge/integrate/mergememo_int.h"
#include "tests/fuzz/fuzz.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

static void memo_key(git_oid k[4], const uint8_t *data, size_t size)
{
	size_t i;

	memset(k, 0, 4 * sizeof(*k));
	for (i = 0; i < size; i++)
		k[i % 4].id[(i / 4) % GIT_OID_RAWSZ] ^= data[i];
	k[0].id[0] |= 1;        /* never the zero id */
}

static void memo_saved(struct strbuf *out, const char *path)
{
	strbuf_reset(out);
	if (strbuf_read_file(out, path, (size_t)1 << 30) < 0)
		abort();
}

int fuzz_memo_one(const uint8_t *data, size_t size)
{
	char *path = xstrfmt("%s/merge-memo", fuzz_tmpdir());
	char *stat = fuzz_strdup(data, size > 4096 ? 4096 : size);
	struct strbuf once = STRBUF_INIT, twice = STRBUF_INIT;
	struct mergememo *m;
	const char *got_stat;
	git_oid k[4], got;

	if (file_write_atomic(path, data, size) < 0)
		abort();
	memo_key(k, data, size);
	m = mergememo_load(path);
	mergememo_add(m, &k[0], &k[1], &k[2], &k[3], stat);
	FUZZ_CHECK(mergememo_save(m) == 0, "save failed");
	mergememo_free(m);
	memo_saved(&once, path);

	m = mergememo_load(path);
	FUZZ_CHECK(mergememo_find(&got, &got_stat, m, &k[0], &k[1], &k[2]) == 1,
		   "the added entry is gone after a save and a load");
	FUZZ_CHECK(git_oid_equal(&got, &k[3]), "the entry's tree changed");
	FUZZ_CHECK(!strcmp(got_stat, stat), "the entry's diffstat changed");
	FUZZ_CHECK(mergememo_save(m) == 0, "second save failed");
	mergememo_free(m);
	memo_saved(&twice, path);
	FUZZ_CHECK(once.len == twice.len && !memcmp(once.buf, twice.buf, once.len),
		   "the saved memo is not a fixed point");
	strbuf_release(&once);
	strbuf_release(&twice);
	free(stat);
	free(path);
	return 0;
}

#ifndef FUZZ_REPLAY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_memo_one(data, size);
}
#endif
