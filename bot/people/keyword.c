/*
 * K: lines: Perl regular expressions that get_maintainer.pl matches, with /x, against a
 * patch's changed lines (m/^[+-].*KEYWORD/x) and, in patch mode, against the lines
 * before the diff (the commit message).  Matched here in Perl's own syntax by PCRE2,
 * under limits: a pattern's compiled size, and the steps and heap of one match.  A
 * pattern over its size, or over its match limits on the probes tried when the file is
 * read, is refused and named; one that goes over them on a patch's line later is
 * refused from then on (logged, and named with the file's problems).
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <ctype.h>
#include <pcre2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bot/people/maint_int.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* A compiled pattern over this is not JIT-compiled: the interpreter's limits hold. */
#define KW_JIT_MAX_SIZE ((size_t)8 << 10)
/* Distinct characters of a pattern whose runs are tried as probes. */
#define KW_PROBE_CHARS 8
#define KW_PROBE_RUN 512

/* PCRE2 allocates on its own: out of memory aborts, as util/xalloc.c's does. */
static void kw_oom(void)
{
	fputs("nextbot: out of memory (PCRE2)\n", stderr);
	abort();
}

void maint_regex_limits_default(struct people_regex_limits *l)
{
	l->match = PEOPLE_REGEX_MATCH_DEFAULT;
	l->heap = PEOPLE_REGEX_HEAP_DEFAULT;
	l->size = PEOPLE_REGEX_SIZE_DEFAULT;
}

void maint_keywords_init(struct maint_keywords *kw, const struct people_regex_limits *l)
{
	uint32_t jit = 0;

	memset(kw, 0, sizeof(*kw));
	if (l)
		kw->limits = *l;
	else
		maint_regex_limits_default(&kw->limits);
	kw->mctx = pcre2_match_context_create(NULL);
	if (!kw->mctx)
		kw_oom();
	pcre2_set_match_limit(kw->mctx, (uint32_t)kw->limits.match);
	pcre2_set_depth_limit(kw->mctx, (uint32_t)kw->limits.match);
	pcre2_set_heap_limit(kw->mctx, (uint32_t)((kw->limits.heap + 1023) / 1024));
	kw->jit = pcre2_config(PCRE2_CONFIG_JIT, &jit) >= 0 && jit;
}

void maint_keywords_release(struct maint_keywords *kw)
{
	pcre2_match_context_free(kw->mctx);
	memset(kw, 0, sizeof(*kw));
}

void maint_keyword_free(struct maint_pattern *p)
{
	pcre2_code_free(p->code);
	p->code = NULL;
	free(p->text);
	p->text = NULL;
}

/*
 * One search of `code` in s (len bytes) from `start`: 1 a match, 0 none, -1 over a
 * limit (steps, depth, heap or the JIT's stack), -2 another error.
 */
static int search(const struct maint_keywords *kw, pcre2_code *code, const char *s, size_t len,
		  size_t start)
{
	pcre2_match_data *md = pcre2_match_data_create(1, NULL);
	int rc;

	if (!md)
		kw_oom();
	rc = pcre2_match(code, (PCRE2_SPTR)s, len, start, 0, md, kw->mctx);
	pcre2_match_data_free(md);
	if (rc >= 0)
		return 1;
	if (rc == PCRE2_ERROR_NOMATCH || rc == PCRE2_ERROR_PARTIAL)
		return 0;
	if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ||
	    rc == PCRE2_ERROR_HEAPLIMIT || rc == PCRE2_ERROR_JIT_STACKLIMIT ||
	    rc == PCRE2_ERROR_NOMEMORY)
		return -1;
	return -2;
}

/*
 * The probes: for each of the pattern's first distinct literal characters c, a changed
 * line "+ccc…c\1" followed by all of them: what makes a backtracking matcher explode
 * (a run it can split many ways, then a near miss) without a match to stop it early.
 * 0, or -1: over the limits on one.
 */
static int probe(const struct maint_keywords *kw, pcre2_code *code, const char *value)
{
	char chars[KW_PROBE_CHARS + 1] = "";
	struct strbuf line = STRBUF_INIT;
	size_t n = 0, i;
	const char *c;
	int rc = 0;

	for (c = value; *c && n < KW_PROBE_CHARS; c++) {
		if ((isalnum((unsigned char)*c) || *c == '_') && !strchr(chars, *c)) {
			chars[n++] = *c;
			chars[n] = 0;
		}
	}
	for (i = 0; i < n && rc == 0; i++) {
		strbuf_reset(&line);
		strbuf_addch(&line, '+');
		strbuf_grow(&line, KW_PROBE_RUN);
		memset(line.buf + line.len, chars[i], KW_PROBE_RUN);
		strbuf_addlen(&line, KW_PROBE_RUN);
		strbuf_addf(&line, "\x01%s\x01", chars);
		if (search(kw, code, line.buf, line.len, 1) < 0)
			rc = -1;
	}
	strbuf_release(&line);
	return rc;
}

int maint_keyword_prepare(struct maint_keywords *kw, struct maint_pattern *p, const char *value,
			  struct strbuf *why)
{
	PCRE2_UCHAR msg[256];
	PCRE2_SIZE off;
	size_t size = 0;
	pcre2_code *code;
	int err;

	if (!*value) {
		strbuf_addstr(why, "an empty regular expression");
		return -1;
	}
	if (strlen(value) > MAINT_MAX_REGEX) {
		strbuf_addstr(why, "over 256 characters");
		return -1;
	}
	code = pcre2_compile((PCRE2_SPTR)value, PCRE2_ZERO_TERMINATED, PCRE2_EXTENDED, &err, &off,
			     NULL);
	if (!code) {
		pcre2_get_error_message(err, msg, sizeof(msg));
		strbuf_addf(why, "not a Perl regular expression (at offset %zu: %s)", (size_t)off,
			    (const char *)msg);
		return -1;
	}
	pcre2_pattern_info(code, PCRE2_INFO_SIZE, &size);
	if ((long)size > kw->limits.size || kw->memory + size > MAINT_MAX_KEYS_MEMORY) {
		strbuf_addf(why, "over its limits: %zu bytes compiled (maintainers.regex_limits."
			    "size: %ld%s)", size, kw->limits.size,
			    (long)size > kw->limits.size ? "" : "; or the file's K: lines together "
							      "over 64 MiB");
		pcre2_code_free(code);
		return -1;
	}
	if (kw->jit && size <= KW_JIT_MAX_SIZE)
		pcre2_jit_compile(code, PCRE2_JIT_COMPLETE); /* the interpreter when it fails */
	if (probe(kw, code, value) < 0) {
		strbuf_addf(why, "over its limits: a match took over %ld steps or %ld bytes "
			    "(maintainers.regex_limits)", kw->limits.match, kw->limits.heap);
		pcre2_code_free(code);
		return -1;
	}
	kw->memory += size;
	p->kind = MAINT_K;
	p->code = code;
	p->text = xstrdup(value);
	return 0;
}

/* A search past the limits: the pattern is refused from then on, said once. */
static int searched(struct maint_keywords *kw, struct maint_pattern *p, const char *s, size_t len,
		    size_t start)
{
	int rc = search(kw, p->code, s, len, start);

	if (rc >= 0)
		return rc;
	p->refused = 1;
	strvec_pushf(kw->problems, "%s:%d: K: '%s' refused: %s",
		     kw->path ? kw->path : "MAINTAINERS", p->line, p->text,
		     rc == -1 ? "over its limits on a patch's line (maintainers.regex_limits)"
			      : "PCRE2 failed on a patch's line");
	log_warn("%s", kw->problems->v[kw->problems->nr - 1]);
	return 0;
}

/*
 * The script reads "+++ x" and "--- x" as a file's header, even when it is a changed
 * line ("-- x" removed, "++ x" added): it matches no keyword there.
 */
static int header_like(const char *line)
{
	return (!strncmp(line, "+++", 3) || !strncmp(line, "---", 3)) &&
	       isspace((unsigned char)line[3]) && line[3 + strspn(line + 3, " \t\r\n\f\v")];
}

int maint_keyword_match(struct maint_keywords *kw, struct maint_pattern *p, const char *line)
{
	/* ^[+-].*KEYWORD: a search from past the '+' or '-' (which \b and lookbehind see) */
	if (!p->code || p->refused || (line[0] != '+' && line[0] != '-') || header_like(line))
		return 0;
	return searched(kw, p, line, strlen(line), 1);
}

int maint_keyword_match_message(struct maint_keywords *kw, struct maint_pattern *p,
				const char *line)
{
	if (!p->code || p->refused)
		return 0;
	return searched(kw, p, line, strlen(line), 0);
}
