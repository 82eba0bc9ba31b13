/*
 * Known facts of confirmation, as text in the verdict cache.  A culprit's fact:
 * "date D", "cmd I", "exit E", "signal S", "timed_out T", "limit L" lines, then
 * "output" and the failure's output to the end.  A revert's: "passes P" and an
 * optional "note N" line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merge/search/known_int.h"
#include "merge/search/verdict_int.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* One line's text, newlines and CRs made spaces: a field never spans lines. */
static void add_field(struct strbuf *sb, const char *name, const char *value)
{
	size_t start;

	strbuf_addf(sb, "%s ", name);
	start = sb->len;
	strbuf_addstr(sb, value ? value : "");
	for (; start < sb->len; start++)
		if (sb->buf[start] == '\n' || sb->buf[start] == '\r')
			sb->buf[start] = ' ';
	strbuf_addch(sb, '\n');
}

/* The value of line `name` in `text` (up to `end`), copied into `out`; -1 if none. */
static int field(struct strbuf *out, const char *text, const char *end, const char *name)
{
	size_t len = strlen(name);
	const char *p = text, *nl;

	while (p < end && (nl = memchr(p, '\n', (size_t)(end - p)))) {
		if ((size_t)(nl - p) > len && !strncmp(p, name, len) && p[len] == ' ') {
			strbuf_reset(out);
			strbuf_add(out, p + len + 1, (size_t)(nl - p - (ptrdiff_t)len - 1));
			return 0;
		}
		if ((size_t)(nl - p) == len && !strncmp(p, name, len)) {
			strbuf_reset(out);
			return 0;
		}
		p = nl + 1;
	}
	return -1;
}

static int int_field(int *out, const char *text, const char *end, const char *name,
		     long lo, long hi)
{
	struct strbuf v = STRBUF_INIT;
	long n = 0;
	int err = field(&v, text, end, name);

	if (!err && (str_to_long(v.buf, &n) < 0 || n < lo || n > hi))
		err = -1;
	if (!err)
		*out = (int)n;
	strbuf_release(&v);
	return err;
}

int known_pair_put(const char *cache_dir, const char *key, const struct probe_result *failure,
		   const char *date)
{
	struct strbuf sb = STRBUF_INIT;
	int err;

	add_field(&sb, "date", date);
	strbuf_addf(&sb, "cmd %d\nexit %d\nsignal %d\ntimed_out %d\n", failure->cmd_index,
		    failure->exit_code, failure->signal, failure->timed_out ? 1 : 0);
	add_field(&sb, "limit", failure->limit);
	strbuf_addstr(&sb, "output\n");
	strbuf_add(&sb, failure->output.buf, failure->output.len);
	err = verdict_fact_put(cache_dir, key, sb.buf, sb.len);
	strbuf_release(&sb);
	return err;
}

int known_pair_get(const char *cache_dir, const char *key, struct probe_result *failure,
		   char date[11])
{
	struct strbuf sb = STRBUF_INIT, v = STRBUF_INIT;
	const char *out, *end;
	int ok = 0;

	if (!verdict_fact_get(cache_dir, key, &sb))
		goto done;
	/* the head ends at the "output" line; the output may hold anything */
	if (str_starts_with(sb.buf, "output\n"))
		goto done;
	if (!(out = strstr(sb.buf, "\noutput\n")))
		goto done;
	end = out + 1;
	if (int_field(&failure->cmd_index, sb.buf, end, "cmd", 0, 1024) < 0 ||
	    int_field(&failure->exit_code, sb.buf, end, "exit", -1, 255) < 0 ||
	    int_field(&failure->signal, sb.buf, end, "signal", 0, 128) < 0 ||
	    int_field(&failure->timed_out, sb.buf, end, "timed_out", 0, 1) < 0 ||
	    field(&v, sb.buf, end, "limit") < 0)
		goto done;
	free(failure->limit);
	failure->limit = v.len ? xstrdup(v.buf) : NULL;
	if (field(&v, sb.buf, end, "date") < 0)
		goto done;
	snprintf(date, 11, "%s", v.buf);
	end = out + strlen("\noutput\n");
	strbuf_reset(&failure->output);
	strbuf_add(&failure->output, end, sb.len - (size_t)(end - sb.buf));
	failure->verdict = PROBE_BAD;
	failure->from_cache = 1;
	ok = 1;
done:
	strbuf_release(&sb);
	strbuf_release(&v);
	return ok;
}

int known_revert_put(const char *cache_dir, const char *key, int passes, const char *note)
{
	struct strbuf sb = STRBUF_INIT;
	int err;

	strbuf_addf(&sb, "passes %d\n", passes ? 1 : 0);
	if (note && *note)
		add_field(&sb, "note", note);
	err = verdict_fact_put(cache_dir, key, sb.buf, sb.len);
	strbuf_release(&sb);
	return err;
}

int known_revert_get(const char *cache_dir, const char *key, int *passes, struct strbuf *note)
{
	struct strbuf sb = STRBUF_INIT;
	int ok = 0;

	strbuf_reset(note);
	if (verdict_fact_get(cache_dir, key, &sb) &&
	    int_field(passes, sb.buf, sb.buf + sb.len, "passes", 0, 1) == 0) {
		if (field(note, sb.buf, sb.buf + sb.len, "note") < 0)
			strbuf_reset(note);
		ok = 1;
	}
	strbuf_release(&sb);
	return ok;
}
