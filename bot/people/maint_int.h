/*
 * Internal to bot/people/: a MAINTAINERS file in memory, its patterns and their
 * index.  Others use the door, bot/people/people.h.
 */
#ifndef BOT_PEOPLE_MAINT_INT_H
#define BOT_PEOPLE_MAINT_INT_H

#include <regex.h>
#include <stddef.h>

#include "bot/people/people.h"
#include "util/strbuf.h"
#include "util/strvec.h"

/* Bounds on what a MAINTAINERS file may hold; past them a line is refused, named. */
#define MAINT_MAX_BYTES ((size_t)32 << 20)
#define MAINT_MAX_LINE 65536
#define MAINT_MAX_PATTERN 1024
#define MAINT_MAX_WILDCARDS 32
#define MAINT_MAX_REGEX 256
#define MAINT_MAX_PATH 4096
#define MAINT_MAX_PROBLEMS 1000
/* The compiled K: patterns of one file together. */
#define MAINT_MAX_KEYS_MEMORY ((size_t)64 << 20)

enum maint_pattern_kind { MAINT_F, MAINT_X, MAINT_N, MAINT_K };

/* One F:, X:, N: or K: line. */
struct maint_pattern {
	enum maint_pattern_kind kind;
	char *text;	/* as written (F:/X: with runs of '*' made one) */
	char *glob;	/* F:/X: what is matched: text, plus '/' for a directory */
	int line;
	int depth;	/* get_maintainer.pl's "value_pd": '/'s, +1 without a trailing
			   '/', -1 for a leading '*'; N: 0 */
	int slashes;	/* '/'s in glob */
	int dir;	/* glob ends with '/': matches everything below */
	regex_t re;	/* N: only */
	int has_re;
	struct pcre2_real_code_8 *code; /* K: only: the Perl regex, by PCRE2 */
	int refused;	/* K: went over its limits on a patch's line: no longer matched */
	size_t order;	/* position among the section's F: and N: lines */
};

struct maint_entry {
	enum people_role role;
	char *name;  /* clean UTF-8 or NULL */
	char *email; /* checked address */
	int line;
	int moderated;
};

struct maint_section {
	char *name;
	int line;
	char *status_text;	/* as written; NULL: no S: */
	enum people_status status;
	struct maint_entry *entries; /* M:, R:, L: in file order */
	size_t entries_nr, entries_alloc;
	struct maint_pattern *pats;  /* F:, X:, N: in file order */
	size_t pats_nr, pats_alloc;
	struct maint_pattern *keys;  /* K: in file order (kept apart: they match no path) */
	size_t keys_nr, keys_alloc;
	int duplicate_of;	/* index of an earlier section of the same name, or -1 */
};

/* What the K: patterns of a file share: their limits, and what went wrong late. */
struct maint_keywords {
	struct people_regex_limits limits;
	struct pcre2_real_match_context_8 *mctx;
	int jit;		/* PCRE2 has a JIT compiler here */
	size_t memory;		/* bytes compiled so far */
	const char *path;	/* the file's name, for messages (the maint_file's) */
	struct strvec *problems; /* the file's: "MAINTAINERS:12: K: 'x' refused: …" */
};

/* Patterns filed by the directory they cannot match outside of ("drivers/net/"). */
struct maint_index_slot {
	char *dir;
	size_t *refs; /* section << 16 | pattern */
	size_t nr, alloc;
};

struct maint_file {
	char *path; /* for messages: "MAINTAINERS" */
	struct maint_section *sections;
	size_t sections_nr, sections_alloc;
	struct strvec problems; /* "MAINTAINERS:12: what is wrong" */
	size_t problems_more;	/* past MAINT_MAX_PROBLEMS: only counted */
	struct maint_index_slot *slots; /* open addressing on dir */
	size_t slots_cap, slots_nr;
	size_t *regexes; /* N: patterns, tried on every path (section << 16 | pattern) */
	size_t regexes_nr, regexes_alloc;
	struct maint_keywords *kw; /* changed by routing: a pattern refused late */
};

/* A section that a path is in, and how specific the match is. */
struct maint_hit {
	size_t section;
	int depth;
	size_t order; /* the last matching F:/N: line's order: its depth counts */
};

/*
 * maintainers.c: parses text into `mf` (problems recorded, never fatal); K: patterns
 * under `limits` (NULL: the defaults).
 */
void maint_file_parse(struct maint_file *mf, const char *path, const char *text, size_t len,
		      const struct people_regex_limits *limits,
		      int (*is_dir)(void *ctx, const char *path), void *ctx);
void maint_file_release(struct maint_file *mf);

/* pattern.c */
/* Checks and compiles one F:/X: pattern; 0, or -1 with *why set (static text). */
int maint_glob_prepare(struct maint_pattern *p, const char *value, const char **why,
		       int (*is_dir)(void *ctx, const char *path), void *ctx);
/*
 * What an extended regular expression holds that pattern.c refuses (a Perl form,
 * a backreference, nested counted repetitions, unbalanced parts), or NULL.
 */
const char *maint_regex_problem(const char *v);
/* Checks and compiles one N: regex; 0, or -1 with `why` filled. */
int maint_regex_prepare(struct maint_pattern *p, const char *value, struct strbuf *why);
/* get_maintainer.pl's file_match_pattern() for F:/X:, N: a regex search. */
int maint_pattern_match(const struct maint_pattern *p, const char *path);
/* Files every pattern of mf in the index. */
void maint_index_build(struct maint_file *mf);
/*
 * The sections `path` is in (an X: of a section keeps it out), appended to *hits
 * (grown with xrealloc; *nr, *alloc), in the order of the file.  `path` longer than
 * MAINT_MAX_PATH is in none.
 */
void maint_file_match(const struct maint_file *mf, const char *path, struct maint_hit **hits,
		      size_t *nr, size_t *alloc);

/* keyword.c */
void maint_regex_limits_default(struct people_regex_limits *l);
void maint_keywords_init(struct maint_keywords *kw, const struct people_regex_limits *l);
void maint_keywords_release(struct maint_keywords *kw);
/*
 * Compiles one K: line (Perl syntax, /x) into p (kind MAINT_K) within kw's limits,
 * and tries it on probes; 0, or -1 with `why` filled (not Perl, over its limits).
 */
int maint_keyword_prepare(struct maint_keywords *kw, struct maint_pattern *p, const char *value,
			  struct strbuf *why);
void maint_keyword_free(struct maint_pattern *p);
/*
 * Does the K: pattern match `line`, a changed line of a patch with its '+' or '-',
 * as the script's m/^[+-].*KEYWORD/x does (a "--- x" or "+++ x" line never matches)?
 * A pattern over its limits matches nothing, then or later (p->refused; named in
 * kw->problems and logged).
 */
int maint_keyword_match(struct maint_keywords *kw, struct maint_pattern *p, const char *line);
/* Does it match `line` of the commit message, anywhere (the script's patch intro)? */
int maint_keyword_match_message(struct maint_keywords *kw, struct maint_pattern *p,
				const char *line);

#endif
