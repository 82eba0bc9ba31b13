/* Three-way merge of file contents, hunk for hunk what git's xdl_merge() gives. */
#include <stdlib.h>
#include <string.h>

#include "merge/git/filemerge_int.h"
#include "merge/git/linediff_int.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define FIRST_FEW_BYTES 8000
#define DEFAULT_MARKER_SIZE 7

int filemerge_is_binary(const char *buf, size_t len)
{
	return memchr(buf, 0, len < FIRST_FEW_BYTES ? len : FIRST_FEW_BYTES) != NULL;
}

/*
 * A region of the result.  mode 0: conflict; 1: take ours; 2: take theirs; 4: both
 * sides made the same change (ours' lines stand).  Lines [i1, i1 + n1) of ours and
 * [i2, i2 + n2) of theirs.
 */
struct hunk {
	int mode;
	long i1, n1, i2, n2;
};

struct hunks {
	struct hunk *v;
	size_t nr, alloc;
};

struct merge_in {
	struct linediff_text base, ours, theirs;
};

/* xdl_append_merge(): a change touching or overlapping the last one joins it. */
static void append(struct hunks *h, int mode, long i1, long n1, long i2, long n2)
{
	struct hunk *m = h->nr ? &h->v[h->nr - 1] : NULL;

	if (m && (i1 <= m->i1 + m->n1 || i2 <= m->i2 + m->n2)) {
		if (mode != m->mode)
			m->mode = 0;
		m->n1 = i1 + n1 - m->i1;
		m->n2 = i2 + n2 - m->i2;
		return;
	}
	ALLOC_GROW(h->v, h->nr + 1, h->alloc);
	h->v[h->nr++] = (struct hunk){ mode, i1, n1, i2, n2 };
}

static int same_lines(const struct merge_in *in, long i1, long i2, long n)
{
	long k;

	for (k = 0; k < n; k++)
		if (in->ours.cls[i1 + k] != in->theirs.cls[i2 + k])
			return 0;
	return 1;
}

/* Walks both scripts (base->ours, base->theirs) in step, as xdl_do_merge() does. */
static void collect(struct hunks *h, const struct merge_in *in, const struct linediff_script *s1,
		    const struct linediff_script *s2)
{
	size_t p1 = 0, p2 = 0;

	while (p1 < s1->nr && p2 < s2->nr) {
		const struct linediff_change *x1 = &s1->v[p1], *x2 = &s2->v[p2];
		long e1, e2;

		if (x1->a + x1->a_nr < x2->a) {
			append(h, 1, x1->b, x1->b_nr, x2->b - x2->a + x1->a, x1->a_nr);
			p1++;
			continue;
		}
		if (x2->a + x2->a_nr < x1->a) {
			append(h, 2, x1->b - x1->a + x2->a, x2->a_nr, x2->b, x2->b_nr);
			p2++;
			continue;
		}
		if (x1->a != x2->a || x1->a_nr != x2->a_nr || x1->b_nr != x2->b_nr ||
		    !same_lines(in, x1->b, x2->b, x1->b_nr)) {
			long off = x1->a - x2->a, ffo = off + x1->a_nr - x2->a_nr;
			long i1 = x1->b, i2 = x2->b, n1, n2;

			if (off > 0)
				i1 -= off;
			else
				i2 += off;
			n1 = x1->b + x1->b_nr - i1;
			n2 = x2->b + x2->b_nr - i2;
			if (ffo < 0)
				n1 -= ffo;
			else
				n2 += ffo;
			append(h, 0, i1, n1, i2, n2);
		}
		e1 = x1->a + x1->a_nr;
		e2 = x2->a + x2->a_nr;
		if (e1 >= e2)
			p2++;
		if (e2 >= e1)
			p1++;
	}
	for (; p1 < s1->nr; p1++) {
		const struct linediff_change *x1 = &s1->v[p1];

		append(h, 1, x1->b, x1->b_nr,
		       x1->a + (long)in->theirs.nr - (long)in->base.nr, x1->a_nr);
	}
	for (; p2 < s2->nr; p2++) {
		const struct linediff_change *x2 = &s2->v[p2];

		append(h, 2, x2->a + (long)in->ours.nr - (long)in->base.nr, x2->a_nr, x2->b,
		       x2->b_nr);
	}
}

/* xdl_refine_conflicts(): a conflict narrowed to the lines where the sides differ. */
static int refine(struct hunks *out, const struct hunks *in, const struct merge_in *m)
{
	struct linediff_script x = LINEDIFF_SCRIPT_INIT;
	size_t i, k;
	int err = 0;

	out->nr = 0;
	for (i = 0; !err && i < in->nr; i++) {
		struct hunk h = in->v[i];

		if (h.mode || !h.n1 || !h.n2) {
			ALLOC_GROW(out->v, out->nr + 1, out->alloc);
			out->v[out->nr++] = h;
			continue;
		}
		const struct linediff_range ro = { &m->ours, (size_t)h.i1, (size_t)h.n1 };
		const struct linediff_range rt = { &m->theirs, (size_t)h.i2, (size_t)h.n2 };

		if (linediff_diff(&x, &ro, &rt, LINEDIFF_HISTOGRAM) < 0) {
			err = -1;
			break;
		}
		if (!x.nr) {
			h.mode = 4;
			ALLOC_GROW(out->v, out->nr + 1, out->alloc);
			out->v[out->nr++] = h;
			continue;
		}
		for (k = 0; k < x.nr; k++) {
			ALLOC_GROW(out->v, out->nr + 1, out->alloc);
			out->v[out->nr++] = (struct hunk){ 0, h.i1 + x.v[k].a, x.v[k].a_nr,
							   h.i2 + x.v[k].b, x.v[k].b_nr };
		}
	}
	linediff_script_release(&x);
	return err;
}

/* xdl_simplify_non_conflicts(): conflicts at most three lines apart become one. */
static void simplify(struct hunks *h)
{
	size_t i = 0, k;

	while (i + 1 < h->nr) {
		struct hunk *m = &h->v[i], *next = &h->v[i + 1];

		if (m->mode || next->mode || next->i1 - (m->i1 + m->n1) > 3) {
			i++;
			continue;
		}
		m->n1 = next->i1 + next->n1 - m->i1;
		m->n2 = next->i2 + next->n2 - m->i2;
		for (k = i + 1; k + 1 < h->nr; k++)
			h->v[k] = h->v[k + 1];
		h->nr--;
	}
}

/* 1: the line ends in CRLF (the last, without one: the line before), 0: LF, -1: unknown. */
static int eol_crlf(const struct linediff_text *t, long i)
{
	const char *p;
	size_t len;

	if (i < (long)t->nr - 1) {
		len = linediff_line_len(t, (size_t)i);
		p = t->buf + t->start[i];
		return len > 1 && p[len - 2] == '\r';
	}
	if (!t->nr)
		return -1;
	len = linediff_line_len(t, (size_t)i);
	p = t->buf + t->start[i];
	if (len && p[len - 1] == '\n')
		return len > 1 && p[len - 2] == '\r';
	if (!i)
		return -1;
	len = linediff_line_len(t, (size_t)i - 1);
	p = t->buf + t->start[i - 1];
	return len > 1 && p[len - 2] == '\r';
}

static int cr_needed(const struct merge_in *in, const struct hunk *h)
{
	int cr = eol_crlf(&in->ours, h->i1 ? h->i1 - 1 : 0);

	if (cr)
		cr = eol_crlf(&in->theirs, h->i2 ? h->i2 - 1 : 0);
	if (cr)
		cr = eol_crlf(&in->base, 0);
	return cr < 0 ? 0 : cr;
}

/* Lines [i, i + n) of t; with `add_nl`, a missing last newline is supplied. */
static void copy_lines(struct strbuf *out, const struct linediff_text *t, long i, long n,
		       int cr, int add_nl)
{
	size_t from, to;

	if (n < 1)
		return;
	from = t->start[i];
	to = t->start[i + n];
	strbuf_add(out, t->buf + from, to - from);
	if (add_nl && (to == from || t->buf[to - 1] != '\n')) {
		if (cr)
			strbuf_addch(out, '\r');
		strbuf_addch(out, '\n');
	}
}

static void marker(struct strbuf *out, int c, int size, const char *label, int cr)
{
	int k;

	for (k = 0; k < size; k++)
		strbuf_addch(out, c);
	if (label) {
		strbuf_addch(out, ' ');
		strbuf_addstr(out, label);
	}
	if (cr)
		strbuf_addch(out, '\r');
	strbuf_addch(out, '\n');
}

/* xdl_fill_merge_buffer() in the default style; returns the conflicts written. */
static int fill(struct strbuf *out, const struct merge_in *in, const struct hunks *h,
		const struct filemerge_options *opts)
{
	int size = opts && opts->marker_size > 0 ? opts->marker_size : DEFAULT_MARKER_SIZE;
	long i = 0;
	size_t k;
	int conflicts = 0;

	for (k = 0; k < h->nr; k++) {
		const struct hunk *m = &h->v[k];

		if (m->mode == 0) {
			int cr = cr_needed(in, m);

			copy_lines(out, &in->ours, i, m->i1 - i, 0, 0);
			marker(out, '<', size, opts ? opts->ours_label : NULL, cr);
			copy_lines(out, &in->ours, m->i1, m->n1, cr, 1);
			marker(out, '=', size, NULL, cr);
			copy_lines(out, &in->theirs, m->i2, m->n2, cr, 1);
			marker(out, '>', size, opts ? opts->theirs_label : NULL, cr);
			conflicts++;
		} else if (m->mode & 3) {
			copy_lines(out, &in->ours, i, m->i1 - i, 0, 0);
			if (m->mode & 1)
				copy_lines(out, &in->ours, m->i1, m->n1, 0, 0);
			if (m->mode & 2)
				copy_lines(out, &in->theirs, m->i2, m->n2, 0, 0);
		} else {
			continue;
		}
		i = m->i1 + m->n1;
	}
	copy_lines(out, &in->ours, i, (long)in->ours.nr - i, 0, 0);
	return conflicts;
}

int filemerge_texts(struct strbuf *out, const struct filemerge_buf *base,
		    const struct filemerge_buf *ours, const struct filemerge_buf *theirs,
		    const struct filemerge_options *opts)
{
	struct linediff_classifier *c = linediff_classifier_new();
	struct linediff_script s1 = LINEDIFF_SCRIPT_INIT, s2 = LINEDIFF_SCRIPT_INIT;
	struct hunks h = { NULL, 0, 0 }, refined = { NULL, 0, 0 };
	struct merge_in in;
	int ret = -1;

	linediff_text_init(&in.base, c, base->buf, base->len);
	linediff_text_init(&in.ours, c, ours->buf, ours->len);
	linediff_text_init(&in.theirs, c, theirs->buf, theirs->len);
	if (linediff_diff(&s1, &(struct linediff_range){ &in.base, 0, in.base.nr },
			  &(struct linediff_range){ &in.ours, 0, in.ours.nr },
			  LINEDIFF_HISTOGRAM) < 0 ||
	    linediff_diff(&s2, &(struct linediff_range){ &in.base, 0, in.base.nr },
			  &(struct linediff_range){ &in.theirs, 0, in.theirs.nr },
			  LINEDIFF_HISTOGRAM) < 0)
		goto done;
	if (!s1.nr) {
		strbuf_add(out, theirs->buf, theirs->len);
		ret = 0;
		goto done;
	}
	if (!s2.nr) {
		strbuf_add(out, ours->buf, ours->len);
		ret = 0;
		goto done;
	}
	collect(&h, &in, &s1, &s2);
	if (refine(&refined, &h, &in) < 0)
		goto done;
	simplify(&refined);
	ret = fill(out, &in, &refined, opts);
done:
	free(h.v);
	free(refined.v);
	linediff_script_release(&s1);
	linediff_script_release(&s2);
	linediff_text_release(&in.base);
	linediff_text_release(&in.ours);
	linediff_text_release(&in.theirs);
	linediff_classifier_free(c);
	return ret;
}
