/*
 * Line diffs exactly as git's xdiff computes them for a merge: the histogram
 * algorithm (what merge-ort asks for), the Myers algorithm it falls back to on
 * lines that repeat too often, and the compaction that slides changes to their
 * canonical place (without the indent heuristic, which merges do not use).  Used by
 * merge/git/filemerge.c; internal to merge/ (and the unit tests).
 */
#ifndef MERGE_LINEDIFF_INT_H
#define MERGE_LINEDIFF_INT_H

#include <stddef.h>

/* Equal lines get equal classes; one classifier serves every text of a merge. */
struct linediff_classifier;
struct linediff_classifier *linediff_classifier_new(void);
void linediff_classifier_free(struct linediff_classifier *c);

/*
 * A buffer cut into lines, each with its '\n' (the last may lack one), each with
 * its class.  `buf` is borrowed and must outlive the text.
 */
struct linediff_text {
	const char *buf;
	size_t size;
	size_t nr;              /* lines */
	size_t *start;          /* owned: nr + 1 offsets, start[nr] == size */
	unsigned *cls;          /* owned: a class per line */
};
#define LINEDIFF_TEXT_INIT { NULL, 0, 0, NULL, NULL }
void linediff_text_init(struct linediff_text *t, struct linediff_classifier *c,
			const char *buf, size_t size);
void linediff_text_release(struct linediff_text *t);

static inline size_t linediff_line_len(const struct linediff_text *t, size_t i)
{
	return t->start[i + 1] - t->start[i];
}

/* Lines [a, a + a_nr) of the old side became lines [b, b + b_nr) of the new one. */
struct linediff_change {
	long a, b, a_nr, b_nr;
};

struct linediff_script {
	struct linediff_change *v;      /* owned, in ascending order */
	size_t nr, alloc;
};
#define LINEDIFF_SCRIPT_INIT { NULL, 0, 0 }
void linediff_script_release(struct linediff_script *s);

enum linediff_algorithm {
	LINEDIFF_HISTOGRAM,     /* git's merges (merge-ort) */
	LINEDIFF_MYERS,         /* git's default for diffs; histogram's fallback */
};

/* Lines [off, off + nr) of a text. */
struct linediff_range {
	const struct linediff_text *text;
	size_t off, nr;
};

/*
 * The changes from range `a` to range `b`, each range taken as a whole file
 * (positions in `out` are relative to the ranges), as xdiff's xdl_do_diff() +
 * xdl_change_compact() + xdl_build_script() give them.  Both texts must come from
 * one classifier.  Returns 0, or -1 when the compaction met a state git's code
 * treats as a bug (nothing in `out` then).
 */
int linediff_diff(struct linediff_script *out, const struct linediff_range *a,
		  const struct linediff_range *b, enum linediff_algorithm alg);

#endif
