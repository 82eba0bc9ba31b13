/*
 * Verdict cache files: <dir>/<2 hex>/<38 hex>, "good" or "bad <exit>" on the first
 * line; a fact's file starts with "fact <length>" and holds that many bytes after it.
 */
#include <stdlib.h>
#include <string.h>

#include "merge/git/sha1_int.h"
#include "merge/search/verdict_int.h"
#include "util/fileutil.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

static int env_entry_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void verdict_key(char out[SHA1_HEXSZ + 1], const char *tree_hex, const char *command,
		 const char *const *env, const char *runner)
{
	struct strbuf sb = STRBUF_INIT;
	const char **sorted;
	size_t n = 0, i;

	while (env && env[n])
		n++;
	sorted = xcalloc(n + 1, sizeof(*sorted));
	for (i = 0; i < n; i++)
		sorted[i] = env[i];
	qsort(sorted, n, sizeof(*sorted), env_entry_cmp);
	/* NUL-separated fields: no value can pose as another field */
	strbuf_addf(&sb, "tree %s", tree_hex ? tree_hex : "");
	strbuf_addch(&sb, '\0');
	strbuf_addf(&sb, "command %s", command ? command : "");
	strbuf_addch(&sb, '\0');
	for (i = 0; i < n; i++) {
		strbuf_addf(&sb, "env %s", sorted[i]);
		strbuf_addch(&sb, '\0');
	}
	strbuf_addf(&sb, "runner %s", runner ? runner : "local");
	sha1_hex(out, sb.buf, sb.len);
	free(sorted);
	strbuf_release(&sb);
}

static int valid_key(const char *key)
{
	return strlen(key) == SHA1_HEXSZ && strspn(key, "0123456789abcdef") == SHA1_HEXSZ;
}

static char *entry_path(const char *dir, const char *key)
{
	return xstrfmt("%s/%.2s/%s", dir, key, key + 2);
}

enum verdict_kind verdict_get(const char *cache_dir, const char *key, int *exit_code)
{
	struct strbuf sb = STRBUF_INIT;
	enum verdict_kind kind = VERDICT_NONE;
	char *path;
	long code;

	if (!cache_dir || !valid_key(key))
		return VERDICT_NONE;
	path = entry_path(cache_dir, key);
	if (!file_exists(path) || strbuf_read_file(&sb, path, 4096) < 0)
		goto done;
	if (str_starts_with(sb.buf, "good\n")) {
		kind = VERDICT_GOOD;
	} else if (str_starts_with(sb.buf, "bad ")) {
		char *nl = strchr(sb.buf, '\n');

		if (!nl)
			goto done;
		*nl = '\0';
		if (str_to_long(sb.buf + 4, &code) < 0 || code <= 0 || code > 255)
			goto done;
		kind = VERDICT_BAD;
		if (exit_code)
			*exit_code = (int)code;
	}
done:
	free(path);
	strbuf_release(&sb);
	return kind;
}

static int cache_put(const char *cache_dir, const char *key, const struct strbuf *sb)
{
	char *dir, *path;
	int err;

	dir = xstrfmt("%s/%.2s", cache_dir, key);
	path = entry_path(cache_dir, key);
	if ((err = file_mkdir_p(dir, 0700)) >= 0)
		err = file_write_atomic(path, sb->buf, sb->len);
	free(dir);
	free(path);
	return err < 0 ? err : 0;
}

int verdict_put(const char *cache_dir, const char *key, enum verdict_kind kind, int exit_code,
		const char *what)
{
	struct strbuf sb = STRBUF_INIT;
	int err;

	if (!cache_dir || !valid_key(key) || kind == VERDICT_NONE)
		return 0;
	if (kind == VERDICT_GOOD)
		strbuf_addstr(&sb, "good\n");
	else
		strbuf_addf(&sb, "bad %d\n", exit_code);
	if (what)
		strbuf_addf(&sb, "%s\n", what);
	err = cache_put(cache_dir, key, &sb);
	strbuf_release(&sb);
	return err;
}

int verdict_fact_put(const char *cache_dir, const char *key, const char *text, size_t len)
{
	struct strbuf sb = STRBUF_INIT;
	int err;

	if (!cache_dir || !valid_key(key))
		return 0;
	strbuf_addf(&sb, "fact %zu\n", len);
	strbuf_add(&sb, text, len);
	err = cache_put(cache_dir, key, &sb);
	strbuf_release(&sb);
	return err;
}

/* A fact is at most this big: its text is a few lines and a command's output. */
#define FACT_MAX (1024 * 1024)

int verdict_fact_get(const char *cache_dir, const char *key, struct strbuf *out)
{
	struct strbuf sb = STRBUF_INIT;
	char *path, *nl;
	long len;
	int found = 0;

	strbuf_reset(out);
	if (!cache_dir || !valid_key(key))
		return 0;
	path = entry_path(cache_dir, key);
	if (!file_exists(path) || strbuf_read_file(&sb, path, FACT_MAX) < 0 ||
	    !str_starts_with(sb.buf, "fact ") || !(nl = strchr(sb.buf, '\n')))
		goto done;
	*nl = '\0';
	/* a short file is a damaged one: never half a fact */
	if (str_to_long(sb.buf + 5, &len) < 0 || len < 0 ||
	    (size_t)len != sb.len - (size_t)(nl + 1 - sb.buf))
		goto done;
	strbuf_add(out, nl + 1, (size_t)len);
	found = 1;
done:
	free(path);
	strbuf_release(&sb);
	return found;
}
