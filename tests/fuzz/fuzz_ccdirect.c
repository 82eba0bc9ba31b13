/*
 * Fuzz target: what the compile service reads from a build's files for direct mode
 * (cc/direct.c), all of it the build's to choose: a file's include directives, a
 * preprocessed text's linemarkers, the compiler's -v search list, a stored
 * manifest.  Properties: an include name is one non-empty line without its closing
 * quote; a linemarker name holds no newline; a search list names folders only (no
 * newline, none empty) and only when it has the <...> part; a manifest read back
 * holds paths and hashes in pairs, and the reader always moves on.
 */
#include <stdint.h>
#include <string.h>

#include "cc/cc_int.h"
#include "tests/fuzz/fuzz.h"
#include "util/xalloc.h"
#include "util/banned.h"

static int cd_include(void *data, int kind, const char *name)
{
	(void)data;
	FUZZ_CHECK(*name && !strchr(name, '\n'), "include name '%s'", name);
	FUZZ_CHECK(!(kind & CC_INCLUDE_QUOTE) || !strchr(name, '"'), "quoted name '%s'", name);
	FUZZ_CHECK((kind & CC_INCLUDE_QUOTE) || !strchr(name, '>'), "bracket name '%s'", name);
	return 0;
}

static int cd_marker(void *data, const char *name)
{
	(void)data;
	FUZZ_CHECK(!strchr(name, '\n'), "marker name '%s'", name);
	return 0;
}

static void cd_search(const char *text)
{
	struct cc_search sd = CC_SEARCH_INIT;
	size_t i;

	if (!cc_search_dirs(&sd, text)) {
		FUZZ_CHECK(sd.bracket.nr > 0, "a search list without its <...> part");
		for (i = 0; i < sd.bracket.nr; i++)
			FUZZ_CHECK(*sd.bracket.v[i] && !strchr(sd.bracket.v[i], '\n'),
				   "folder '%s'", sd.bracket.v[i]);
		for (i = 0; i < sd.quote.nr; i++)
			FUZZ_CHECK(*sd.quote.v[i] && !strchr(sd.quote.v[i], '\n'),
				   "folder '%s'", sd.quote.v[i]);
	}
	cc_search_release(&sd);
}

static void cd_manifests(const char *text)
{
	const char *at = text;

	while (*at) {
		struct cc_manifest m = CC_MANIFEST_INIT;
		const char *next = cc_manifest_parse(&m, at);

		FUZZ_CHECK(next > at && next <= text + strlen(text), "the reader stood still");
		FUZZ_CHECK(m.paths.nr == m.hashes.nr, "%zu paths, %zu hashes", m.paths.nr,
			   m.hashes.nr);
		cc_manifest_release(&m);
		at = next;
	}
}

int fuzz_ccdirect_one(const uint8_t *data, size_t size)
{
	char *text = xstrndup((const char *)data, size);

	cc_include_names((const char *)data, size, cd_include, NULL);
	cc_text_names((const char *)data, size, cd_marker, NULL);
	cd_search(text);
	cd_manifests(text);
	free(text);
	return 0;
}

#ifndef FUZZ_REPLAY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_ccdirect_one(data, size);
}
#endif
