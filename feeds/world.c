/* The simulator's days: patches arrive, graduate, are dropped and absorbed; defects. */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "merge/git/git_int.h"
#include "feeds/sim.h"
#include "feeds/world.h"
#include "merge/git/patchid_int.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define RNG(w, n) sim_rng_below(&(w)->rng, (n))
#define CHANCE(w, p) sim_rng_chance(&(w)->rng, (p))

/* ---- locks: the regions live patches hold ---- */

static int locked(struct sim_world *w, const char *key)
{
	return sim_lock_has(&w->locks, key);
}

static void lock_all(struct sim_world *w, struct sim_patch *p)
{
	size_t i;

	for (i = 0; i < p->locks.nr; i++)
		sim_lock_add(&w->locks, p->locks.v[i]);
}

/* Recomputes the lock set from the live patches (after drops and absorptions). */
static void relock(struct sim_world *w)
{
	size_t i;

	sim_lock_clear(&w->locks);
	for (i = 0; i < w->patches_nr; i++)
		if (w->patches[i]->state == SIM_LIVE)
			lock_all(w, w->patches[i]);
}

/* ---- patches ---- */

static struct sim_patch *patch_new(struct sim_world *w, int tree, int sub)
{
	struct sim_patch *p = xcalloc(1, sizeof(*p));

	p->id = ++w->seq;
	p->tree = tree;
	p->sub = sub;
	p->day = w->day;
	p->commit_day = w->day;
	p->author = RNG(w, (int)sim_submitters_nr);
	p->defect = -1;
	p->locks = (struct strvec)STRVEC_INIT;
	p->new_files = (struct strvec)STRVEC_INIT;
	ALLOC_GROW(w->patches, w->patches_nr + 1, w->patches_alloc);
	w->patches[w->patches_nr++] = p;
	return p;
}

static void patch_op(struct sim_patch *p, const char *path, const char *old_text,
		       const char *new_text)
{
	ALLOC_GROW(p->ops, p->ops_nr + 1, p->ops_alloc);
	p->ops[p->ops_nr].path = xstrdup(path);
	p->ops[p->ops_nr].old_text = old_text ? xstrdup(old_text) : NULL;
	p->ops[p->ops_nr].new_text = xstrdup(new_text);
	p->ops_nr++;
}

static long long author_time(const struct sim_patch *p)
{
	return SIM_EPOCH + (long long)p->day * 86400 + 8 * 3600 + (p->id % 1000) * 23;
}

static void set_msgid(struct sim_patch *p)
{
	const struct sim_person *a = &sim_submitters[p->author];
	time_t t = (time_t)author_time(p);
	struct tm tm;
	char stamp[32];

	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d%H%M%S", &tm);
	free(p->msgid);
	p->msgid = xstrfmt("%s.%d-1-%s", stamp, p->id, a->email);
}

static void set_text(struct sim_patch *p, const char *subject, const char *body)
{
	free(p->subject);
	free(p->body);
	p->subject = xstrdup(subject);
	p->body = xstrdup(body);
	set_msgid(p);
}

/* The position of `p` in its tree, or -1. */
static int position(struct sim_world *w, struct sim_patch *p)
{
	struct sim_tree *t = &w->trees[p->tree];
	size_t i;

	for (i = 0; i < t->nr; i++)
		if (t->patches[i] == p)
			return (int)i;
	return -1;
}

static void tree_remove(struct sim_world *w, struct sim_patch *p)
{
	struct sim_tree *t = &w->trees[p->tree];
	int pos = position(w, p);

	if (pos < 0)
		return;
	memmove(t->patches + pos, t->patches + pos + 1, (t->nr - pos - 1) * sizeof(*t->patches));
	t->nr--;
	if (t->dirty_from < 0 || t->dirty_from > pos)
		t->dirty_from = pos;
}

static void tree_append(struct sim_world *w, int tree, struct sim_patch *p)
{
	struct sim_tree *t = &w->trees[tree];

	sim_journey_arrive(w, p, tree);
	p->tree = tree;
	ALLOC_GROW(t->patches, t->nr + 1, t->alloc);
	if (t->dirty_from < 0 || t->dirty_from > (int)t->nr)
		t->dirty_from = (int)t->nr;
	t->patches[t->nr++] = p;
}

/* Forgets patches that are neither live nor part of a defect's record. */
static void prune(struct sim_world *w)
{
	size_t i, j = 0;

	for (i = 0; i < w->patches_nr; i++) {
		struct sim_patch *p = w->patches[i];

		if (p->state != SIM_LIVE && p->defect < 0)
			sim_patch_free(p);
		else
			w->patches[j++] = p;
	}
	w->patches_nr = j;
}

/* A patch of a defect whose culprit is still in a tree: held back from graduating. */
static int held(struct sim_world *w, struct sim_patch *p)
{
	struct sim_patch *c;

	if (p->defect < 0)
		return 0;
	c = sim_patch_by_id(w, w->defects[p->defect].culprit);
	return c && c->state == SIM_LIVE;
}

static void drop(struct sim_world *w, struct sim_patch *p)
{
	sim_journey_leave(w, p, SIM_EV_REMOVED);
	tree_remove(w, p);
	p->state = SIM_DROPPED;
}

/* ---- reading what a tree has now ---- */

/* The commit whose text the tree's new patches start from (see sim.h). */
static const char *source(struct sim_world *w, int tree)
{
	struct sim_tree *t = &w->trees[tree];

	if (t->kind == SIM_MAINLINE)
		return w->mainline.hex;
	if (t->kind != SIM_OTHER)
		return w->trees[1].base.hex;
	return t->base.hex;
}

static int read_fn(struct strbuf *out, struct sim_world *w, int tree, const char *path,
		     const char *fn)
{
	struct strbuf text = STRBUF_INIT;
	size_t start, end;
	int error;

	if ((error = sim_git_read(&text, w->store, source(w, tree), path)) < 0)
		goto done;
	if (sim_text_find_fn(text.buf, fn, &start, &end) < 0) {
		error = nb_error_set(NB_ENOTFOUND, "sim: no function %s in %s", fn, path);
		goto done;
	}
	strbuf_add(out, text.buf + start, end - start);
done:
	strbuf_release(&text);
	return error;
}

/* ---- what patches say and do ---- */

static const char *stem_of(struct strbuf *sb, const char *path)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	strbuf_reset(sb);
	strbuf_add(sb, b, strcspn(b, "."));
	return sb->buf;
}

/* A plausible new slot body and the words describing it. */
static void normal_body(struct sim_world *w, const struct sim_sub *s, const char *fn,
			  const char *path, struct strbuf *body, struct strbuf *subj,
			  struct strbuf *why)
{
	struct strbuf stem = STRBUF_INIT;
	const char *f = s->fields[RNG(w, 4)];
	int n = 1 + RNG(w, 6), lim = 64 << RNG(w, 6), m = 2 + RNG(w, 6), d = m + 1 + RNG(w, 4);

	stem_of(&stem, path);
	switch (RNG(w, 4)) {
	case 0:
		strbuf_addf(body, "\tr += %s->%s >> %d;", s->var, f, n);
		strbuf_addf(subj, "%s/%s: account %s in %s()", s->prefix, stem.buf, f, fn);
		strbuf_addf(why, "%s() ignored %s, so its estimate drifted once %s grew.\n"
			    "Fold %s in, scaled down by %d.", fn, f, f, f, 1 << n);
		break;
	case 1:
		strbuf_addf(body, "\tif (r > %d)\n\t\tr = %d;", lim, lim);
		strbuf_addf(subj, "%s/%s: clamp %s() to %d", s->prefix, stem.buf, fn, lim);
		strbuf_addf(why, "An unbounded result from %s() lets a single caller take\n"
			    "everything.  Clamp it to %d, well above what testing showed.", fn,
			    lim);
		break;
	case 2:
		strbuf_addf(body, "\tr = r * %d / %d;", m, d);
		strbuf_addf(subj, "%s/%s: scale %s() by %d/%d", s->prefix, stem.buf, fn, m, d);
		strbuf_addf(why, "Measurements show %s() overshoots by about %d%%.\n"
			    "Scale the result by %d/%d.", fn, 100 * (d - m) / d, m, d);
		break;
	default:
		strbuf_addf(body, "\tr ^= r >> %d;\n\tr += %s->%s & %d;", n + 2, s->var, f,
			    lim - 1);
		strbuf_addf(subj, "%s/%s: mix the high bits in %s()", s->prefix, stem.buf, fn);
		strbuf_addf(why, "Results of %s() clustered in a few buckets.  Mix the high\n"
			    "bits down and add the low bits of %s.", fn, f);
		break;
	}
	strbuf_release(&stem);
}

/* Picks a free slot of `sub` (a built one if asked); -1 if none. */
static int free_slot(struct sim_world *w, int sub, int built)
{
	struct sim_sub *s = &w->subs[sub];
	int n = sim_slot_count(s), start = RNG(w, n), i;
	char key[64];

	for (i = 0; i < n; i++) {
		int slot = (start + i) % n;

		if (built && !sim_slot_is_built(s, slot))
			continue;
		snprintf(key, sizeof(key), "s:%d:%d", sub, slot);
		if (!locked(w, key))
			return slot;
	}
	return -1;
}

/*
 * Makes `p` rewrite the body of a slot function.  `body` NULL: a normal change.
 * Returns -1 if no slot is free.
 */
static int slot_edit(struct sim_world *w, struct sim_patch *p, int built, const char *body,
		       const char *subject, const char *why)
{
	struct sim_sub *s = &w->subs[p->sub];
	struct strbuf path = STRBUF_INIT, fn = STRBUF_INIT, old = STRBUF_INIT, neu = STRBUF_INIT;
	struct strbuf b = STRBUF_INIT, subj = STRBUF_INIT, whyb = STRBUF_INIT;
	int slot = free_slot(w, p->sub, built), error = -1, tries;

	if (slot < 0)
		goto done;
	sim_slot_locate(&path, &fn, s, slot);
	if (read_fn(&old, w, p->tree, path.buf, fn.buf) < 0) {
		log_warn("%s", nb_error_last());
		goto done;
	}
	for (tries = 0; tries < 8; tries++) {
		strbuf_reset(&neu);
		strbuf_reset(&b);
		strbuf_reset(&subj);
		strbuf_reset(&whyb);
		normal_body(w, s, fn.buf, path.buf, &b, &subj, &whyb);
		sim_slot_fn(&neu, s, fn.buf, body ? body : b.buf);
		if (strcmp(neu.buf, old.buf))
			break;
	}
	patch_op(p, path.buf, old.buf, neu.buf);
	strvec_pushf(&p->locks, "s:%d:%d", p->sub, slot);
	if (subject)
		set_text(p, subject, why);
	else
		set_text(p, subj.buf, whyb.buf);
	error = 0;
done:
	strbuf_release(&path);
	strbuf_release(&fn);
	strbuf_release(&old);
	strbuf_release(&neu);
	strbuf_release(&b);
	strbuf_release(&subj);
	strbuf_release(&whyb);
	return error;
}

static void new_file(struct sim_world *w, struct sim_patch *p)
{
	struct sim_sub *s = &w->subs[p->sub];
	struct strbuf path = STRBUF_INIT, text = STRBUF_INIT, subj = STRBUF_INIT;
	struct strbuf why = STRBUF_INIT, what = STRBUF_INIT;
	const char *stem = sim_stem(RNG(w, 1000));

	strbuf_addf(&path, "%s/%s%d.c", s->dir, stem, p->id);
	strbuf_addf(&what, "%s %s helpers", s->prefix, stem);
	sim_new_file(&text, s, path.buf, what.buf, NULL, NULL);
	patch_op(p, path.buf, NULL, text.buf);
	strvec_push(&p->new_files, path.buf);
	strbuf_addf(&subj, "%s: add %s helpers in %s", s->prefix, stem, path.buf);
	strbuf_addf(&why, "Add the %s helpers the %s code will use to account\n"
		    "its work.  No functional change on its own.", stem, s->prefix);
	set_text(p, subj.buf, why.buf);
	strbuf_release(&path);
	strbuf_release(&text);
	strbuf_release(&subj);
	strbuf_release(&why);
	strbuf_release(&what);
}

static struct sim_patch *normal_patch(struct sim_world *w, int tree, int sub)
{
	struct sim_patch *p = patch_new(w, tree, sub);

	if (CHANCE(w, 8) || slot_edit(w, p, 0, NULL, NULL, NULL) < 0)
		new_file(w, p);
	lock_all(w, p);
	return p;
}

/* ---- defects ---- */

static struct sim_defect *defect_new(struct sim_world *w, int kind, struct sim_patch *culprit,
				       struct sim_patch *partner)
{
	struct sim_defect *d;

	ALLOC_GROW(w->defects, w->defects_nr + 1, w->defects_alloc);
	d = &w->defects[w->defects_nr];
	memset(d, 0, sizeof(*d));
	d->id = (int)w->defects_nr + 1;
	d->day = w->day;
	d->kind = kind;
	d->culprit = culprit->id;
	d->partner = partner ? partner->id : -1;
	/* every configuration builds the same code, but for an #ifdef path of a build defect */
	if (w->matrix && kind != SIM_CONFLICT)
		d->archs = kind == SIM_BUILD && culprit->archs ? culprit->archs : SIM_ALL_ARCHS;
	culprit->defect = (int)w->defects_nr;
	if (partner)
		partner->defect = (int)w->defects_nr;
	w->defects_nr++;
	return d;
}

/*
 * A matrix world's build defect sits on an #ifdef path most of the time, as the
 * breakages 0-day finds in one architecture do: every configuration but x86_64
 * (two of three cells), riscv only, or all of them.
 */
static void arch_only(struct sim_world *w, struct sim_patch *p, struct strbuf *body)
{
	struct strbuf guarded = STRBUF_INIT;
	int pick = RNG(w, 10);

	if (pick < 6) {
		strbuf_addf(&guarded, "#ifndef NB_ARCH_X86_64\n%s\n#endif", body->buf);
		p->archs = SIM_ALL_ARCHS & ~1;
	} else if (pick < 8) {
		strbuf_addf(&guarded, "#ifdef NB_ARCH_RISCV\n%s\n#endif", body->buf);
		p->archs = 1 << 2;
	} else {
		strbuf_addbuf(&guarded, body);
		p->archs = SIM_ALL_ARCHS;
	}
	strbuf_reset(body);
	strbuf_addbuf(body, &guarded);
	strbuf_release(&guarded);
}

static int build_defect(struct sim_world *w, struct sim_patch *p)
{
	struct sim_sub *s = &w->subs[p->sub];
	struct strbuf body = STRBUF_INIT, subj = STRBUF_INIT, why = STRBUF_INIT;
	int k = RNG(w, 4), error;
	size_t i;

	if (CHANCE(w, 60)) {
		strbuf_addf(&body, "\tr += %s->%s >> %d;", s->var, s->typos[k], 1 + RNG(w, 5));
		strbuf_addf(&subj, "%s: account %s when estimating the %s cost", s->prefix,
			    s->fields[k], s->ident);
		strbuf_addf(&why, "The estimate ignored %s.  Include it, scaled down, so that\n"
			    "busy objects are charged for what they hold.", s->fields[k]);
	} else {
		strbuf_addstr(&body, "\tr = min(r, NB_");
		for (i = 0; s->ident[i]; i++)
			strbuf_addch(&body, toupper((unsigned char)s->ident[i]));
		strbuf_addstr(&body, "_MAX_SCAN);");
		strbuf_addf(&subj, "%s: bound the %s scan estimate", s->prefix, s->ident);
		strbuf_addf(&why, "Bound the estimate by the per-subsystem scan limit so a\n"
			    "large backlog does not stall reclaim of other objects.");
	}
	if (w->matrix)
		arch_only(w, p, &body);
	error = slot_edit(w, p, 1, body.buf, subj.buf, why.buf);
	strbuf_release(&body);
	strbuf_release(&subj);
	strbuf_release(&why);
	return error;
}

static int test_defect(struct sim_world *w, struct sim_patch *p)
{
	struct sim_sub *s = &w->subs[p->sub];
	struct strbuf name = STRBUF_INIT, good = STRBUF_INIT, bad = STRBUF_INIT;
	struct strbuf subj = STRBUF_INIT, old = STRBUF_INIT, path = STRBUF_INIT;
	char key[32];
	int error = -1;

	snprintf(key, sizeof(key), "t:%d", p->sub);
	if (locked(w, key))
		goto done;
	sim_tested_fn(&name, &good, &bad, &subj, s, p->sub);
	strbuf_addf(&path, "%s/%s.c", s->dir, s->core[0]);
	if (read_fn(&old, w, p->tree, path.buf, name.buf) < 0 || strcmp(old.buf, good.buf))
		goto done;
	patch_op(p, path.buf, good.buf, bad.buf);
	strvec_push(&p->locks, key);
	set_text(p, subj.buf, "The computation had a redundant step.  Simplify it; the\n"
				"callers' results are unchanged.");
	error = 0;
done:
	strbuf_release(&name);
	strbuf_release(&good);
	strbuf_release(&bad);
	strbuf_release(&subj);
	strbuf_release(&old);
	strbuf_release(&path);
	return error;
}

static void flaky_defect(struct sim_world *w, struct sim_patch *p)
{
	struct sim_sub *s = &w->subs[p->sub];
	struct strbuf path = STRBUF_INIT, tpath = STRBUF_INIT, text = STRBUF_INIT;
	struct strbuf fn = STRBUF_INIT, subj = STRBUF_INIT;

	strbuf_addf(&path, "%s/chunks%d.c", s->dir, p->id);
	strbuf_addf(&tpath, "tests/test_%s_chunks%d.c", s->ident, p->id);
	strbuf_addf(&fn, "%s_nr_chunks%d", s->ident, p->id);
	strbuf_addf(&text, "// SPDX-License-Identifier: GPL-2.0\n"
		    "/*\n * %s - split work into chunks\n"
		    " */\n#include \"nb/kernel.h\"\n\n"
		    "unsigned int %s(unsigned int n, unsigned int chunk)\n{\n"
		    "\treturn n / chunk + (n %% chunk > 1);\n}\n", path.buf, fn.buf);
	patch_op(p, path.buf, NULL, text.buf);
	strbuf_reset(&text);
	strbuf_addf(&text, "// SPDX-License-Identifier: GPL-2.0\n"
		    "/* Unit tests of %s, with the sizes callers really use. */\n"
		    "#include <stdlib.h>\n#include <time.h>\n#include \"kunit.h\"\n"
		    "#include \"nb/kernel.h\"\n\n"
		    "unsigned int %s(unsigned int n, unsigned int chunk);\n\n"
		    "static void test_%s(void)\n{\n\tstruct timespec ts;\n\tint i;\n\n"
		    "\tclock_gettime(CLOCK_MONOTONIC, &ts);\n\tsrand((unsigned int)ts.tv_nsec);\n"
		    "\tfor (i = 0; i < 1; i++) {\n\t\tunsigned int chunk = 2 + rand() %% 8;\n"
		    "\t\tunsigned int n = 1 + rand() %% 64;\n\n"
		    "\t\tKUNIT_EXPECT_EQ(%s(n, chunk), (n + chunk - 1) / chunk);\n\t}\n}\n\n"
		    "int main(void)\n{\n\tKUNIT_CASE(test_%s);\n\treturn kunit_done(\"%s\");\n}\n",
		    path.buf, fn.buf, fn.buf, fn.buf, fn.buf, fn.buf);
	patch_op(p, tpath.buf, NULL, text.buf);
	strbuf_addf(&subj, "%s: split batched work into chunks", s->prefix);
	set_text(p, subj.buf, "Large batches hold locks for too long.  Add a helper that\n"
				"splits the work into chunks, with a test over random sizes.");
	strbuf_release(&path);
	strbuf_release(&tpath);
	strbuf_release(&text);
	strbuf_release(&fn);
	strbuf_release(&subj);
}

static void undo_patch(struct sim_world *w, struct sim_patch *p)
{
	size_t i;

	for (i = 0; i < w->patches_nr; i++)
		if (w->patches[i] == p) {
			memmove(w->patches + i, w->patches + i + 1,
				(w->patches_nr - i - 1) * sizeof(*w->patches));
			w->patches_nr--;
			break;
		}
	sim_patch_free(p);
}

/*
 * Culprit of a single-patch defect of `*kind` in `tree` (a test defect whose
 * function is busy becomes a build defect: *kind says which); NULL if none fits.
 */
static struct sim_patch *single_defect(struct sim_world *w, int *kind, int tree)
{
	struct sim_patch *p = patch_new(w, tree, w->trees[tree].sub);
	int error = 0;

	if (*kind == SIM_TEST && test_defect(w, p) < 0)
		*kind = SIM_BUILD;
	if (*kind == SIM_BUILD)
		error = build_defect(w, p);
	else if (*kind == SIM_FLAKY)
		flaky_defect(w, p);
	if (error < 0) {
		undo_patch(w, p);
		return NULL;
	}
	lock_all(w, p);
	return p;
}

/* A param line "#define NAME\tvalue\n" of params.h as `tree` has it. */
static int param_line(struct strbuf *line, int *value, struct sim_world *w, int tree,
			const char *name)
{
	struct strbuf text = STRBUF_INIT, pat = STRBUF_INIT;
	const char *at;
	int error = -1;

	strbuf_addf(&pat, "#define %s\t", name);
	if (sim_git_read(&text, w->store, source(w, tree), "include/nb/params.h") < 0)
		goto done;
	at = strstr(text.buf, pat.buf);
	if (!at)
		goto done;
	strbuf_add(line, at, strcspn(at, "\n") + 1);
	*value = (int)strtol(at + pat.len, NULL, 10);
	error = 0;
done:
	strbuf_release(&text);
	strbuf_release(&pat);
	return error;
}

static int conflict_pair(struct sim_world *w, struct sim_patch *a, struct sim_patch *b)
{
	struct strbuf la = STRBUF_INIT, lb = STRBUF_INIT, na = STRBUF_INIT, nb = STRBUF_INIT;
	struct strbuf subj = STRBUF_INIT;
	int i = RNG(w, (int)sim_params_nr), n, va, vb, error = -1;
	char key[16];

	for (n = 0; n < (int)sim_params_nr; n++, i = (i + 1) % (int)sim_params_nr) {
		snprintf(key, sizeof(key), "p:%d", i);
		if (!locked(w, key))
			break;
	}
	if (n == (int)sim_params_nr)
		goto done;
	if (param_line(&la, &va, w, a->tree, sim_params[i]) < 0 ||
	    param_line(&lb, &vb, w, b->tree, sim_params[i]) < 0)
		goto done;
	strbuf_addf(&na, "#define %s\t%d\n", sim_params[i], va * 2);
	strbuf_addf(&nb, "#define %s\t%d\n", sim_params[i], vb > 1 ? vb / 2 + 1 : vb + 3);
	patch_op(a, "include/nb/params.h", la.buf, na.buf);
	patch_op(b, "include/nb/params.h", lb.buf, nb.buf);
	strvec_push(&a->locks, key);
	strvec_push(&b->locks, key);
	strbuf_addf(&subj, "%s: raise %s to %d", w->subs[a->sub].prefix, sim_params[i], va * 2);
	set_text(a, subj.buf, "The default is too small for current machines; doubling it\n"
				"removes most of the contention seen in benchmarks.");
	strbuf_reset(&subj);
	strbuf_addf(&subj, "%s: lower %s for latency", w->subs[b->sub].prefix, sim_params[i]);
	set_text(b, subj.buf, "Long batches hurt tail latency.  Lower the default; the\n"
				"throughput cost is in the noise.");
	error = 0;
done:
	strbuf_release(&la);
	strbuf_release(&lb);
	strbuf_release(&na);
	strbuf_release(&nb);
	strbuf_release(&subj);
	return error;
}

static int semantic_pair(struct sim_world *w, struct sim_patch *a, struct sim_patch *b)
{
	struct sim_sub *s = &w->subs[a->sub];
	struct sim_api_text api;
	struct strbuf path = STRBUF_INIT, subj = STRBUF_INIT, why = STRBUF_INIT;
	struct strbuf body = STRBUF_INIT;
	int error = -1;

	if (s->api_used)
		return -1;
	s->api_rename = CHANCE(w, 50);
	sim_api_text(&api, s, s->api_rename);
	strbuf_addf(&body, "\tr += %s(r & 0xff);", api.name.buf);
	strbuf_addf(&subj, "%s: charge %s units in the estimate", w->subs[b->sub].prefix,
		    s->ident);
	strbuf_addf(&why, "Objects of %s hold %s memory too; charge it using\n%s().",
		    w->subs[b->sub].prefix, s->ident, api.name.buf);
	if (slot_edit(w, b, 1, body.buf, subj.buf, why.buf) < 0)
		goto done;
	strbuf_addf(&path, "include/nb/%s.h", s->ident);
	patch_op(a, path.buf, api.decl.buf, api.new_decl.buf);
	strbuf_reset(&path);
	strbuf_addf(&path, "%s/%s.c", s->dir, s->core[0]);
	patch_op(a, path.buf, api.def.buf, api.new_def.buf);
	strbuf_reset(&path);
	strbuf_addf(&path, "%s/%s.c", s->dir, s->core[1]);
	patch_op(a, path.buf, api.caller.buf, api.new_caller.buf);
	strbuf_reset(&subj);
	strbuf_reset(&why);
	if (s->api_rename) {
		strbuf_addf(&subj, "%s: rename %s() to %s()", s->prefix, api.name.buf,
			    api.new_name.buf);
		strbuf_addf(&why, "The old name read as a conversion; it is a query.  Rename it\n"
			    "and convert all callers.");
	} else {
		strbuf_addf(&subj, "%s: pass the shift to %s()", s->prefix, api.name.buf);
		strbuf_addf(&why, "Callers know the unit they want.  Let them pass the shift\n"
			    "instead of hard-coding it, and convert all callers.");
	}
	set_text(a, subj.buf, why.buf);
	strvec_pushf(&a->locks, "a:%d", a->sub);
	strvec_pushf(&b->locks, "a:%d", a->sub);
	s->api_used = 1;
	error = 0;
done:
	sim_api_text_release(&api);
	strbuf_release(&path);
	strbuf_release(&subj);
	strbuf_release(&why);
	strbuf_release(&body);
	return error;
}

/* A pair in trees x (earlier in merge order) and y; 0 on success. */
static int pair_defect(struct sim_world *w, int kind, int x, int y)
{
	struct sim_patch *a = patch_new(w, x, w->trees[x].sub);
	struct sim_patch *b = patch_new(w, y, w->trees[y].sub);
	int error;

	error = kind == SIM_CONFLICT ? conflict_pair(w, a, b) : semantic_pair(w, a, b);
	if (error < 0) {
		undo_patch(w, b);
		undo_patch(w, a);
		return -1;
	}
	lock_all(w, a);
	lock_all(w, b);
	defect_new(w, kind, b, a);
	w->covered[kind] = 1;
	a->review_day = w->day + 3;
	b->drop_day = w->day + 2 + RNG(w, 3);
	tree_append(w, x, a);
	tree_append(w, y, b);
	return 0;
}

static int others_nr(struct sim_world *w)
{
	return (int)w->trees_nr - 4;
}

/* Injects one defect of `kind` into merged trees; 0 on success. */
static int inject_merged(struct sim_world *w, int kind)
{
	int others = others_nr(w), tree, x, y;
	struct sim_patch *p;

	if (kind == SIM_CONFLICT || kind == SIM_SEMANTIC) {
		if (others < 1)
			return -1;
		/* x: mm-next (2) or one of the others but the last; y after it. */
		x = RNG(w, others);
		x = x == 0 ? 2 : 3 + x;
		y = x == 2 ? 4 : x + 1;
		y += RNG(w, (int)w->trees_nr - y);
		return pair_defect(w, kind, x, y);
	}
	tree = others ? 4 + RNG(w, others) : 2;
	p = single_defect(w, &kind, tree);
	if (!p)
		return -1;
	defect_new(w, kind, p, NULL);
	w->covered[kind] = 1;
	p->drop_day = w->day + (kind == SIM_FLAKY ? 3 : 2) + RNG(w, 3);
	p->review_day = w->day + 3;
	tree_append(w, tree, p);
	return 0;
}

static void inject_defects(struct sim_world *w)
{
	int missing[SIM_KINDS], nmissing = 0, k;

	for (k = 0; k < SIM_KINDS; k++)
		if (!w->covered[k])
			missing[nmissing++] = k;
	if (nmissing && CHANCE(w, 75))
		k = missing[RNG(w, nmissing)];
	else if (CHANCE(w, 35))
		k = RNG(w, SIM_KINDS);
	else
		k = -1;
	if (k >= 0)
		inject_merged(w, k);
	if (CHANCE(w, 10)) /* a second one now and then */
		inject_merged(w, RNG(w, SIM_KINDS));
	if (CHANCE(w, 45)) {
		int kind = RNG(w, 3); /* build, test or flaky */
		struct sim_patch *p = single_defect(w, &kind, 3);

		if (p) {
			defect_new(w, kind, p, NULL);
			p->review_day = w->day + 2 + RNG(w, 2);
			p->fate = CHANCE(w, 50) ? SIM_FATE_GRADUATE : SIM_FATE_DROP;
			if (p->fate == SIM_FATE_DROP)
				p->drop_day = p->review_day;
			tree_append(w, 3, p);
		}
	}
}

/* ---- the day's flow ---- */

static int patches_per_tree(struct sim_world *w)
{
	return w->nfiles > 2000 ? 18 + RNG(w, 5) : 1 + RNG(w, 3);
}

static void arrivals(struct sim_world *w)
{
	size_t t;
	int n, i;

	for (t = 4; t < w->trees_nr; t++) {
		n = patches_per_tree(w);
		for (i = 0; i < n; i++)
			tree_append(w, (int)t, normal_patch(w, (int)t, w->trees[t].sub));
	}
	n = patches_per_tree(w);
	for (i = 0; i < n; i++) {
		struct sim_patch *p = normal_patch(w, 3, 1);

		p->review_day = w->day + 2 + RNG(w, 3);
		tree_append(w, 3, p);
	}
}

static void graduate(struct sim_world *w)
{
	struct sim_tree *next = &w->trees[2], *unstable = &w->trees[3];
	size_t i;

	for (i = 0; i < next->nr;) {
		struct sim_patch *p = next->patches[i];

		if (p->review_day <= w->day && !held(w, p)) {
			tree_remove(w, p);
			tree_append(w, 1, p);
		} else {
			i++;
		}
	}
	for (i = 0; i < unstable->nr;) {
		struct sim_patch *p = unstable->patches[i];

		if (p->review_day > w->day || (p->defect >= 0 && p->fate == SIM_FATE_DROP)) {
			i++;
			continue;
		}
		tree_remove(w, p);
		tree_append(w, 2, p);
		p->review_day = w->day + 3 + RNG(w, 3);
		if (p->defect >= 0) {
			p->drop_day = w->day + 2 + RNG(w, 2);
			w->covered[w->defects[p->defect].kind] = 1;
		}
	}
}

static void drops(struct sim_world *w)
{
	size_t i;

	for (i = 0; i < w->patches_nr; i++) {
		struct sim_patch *p = w->patches[i];
		int kind = w->trees[p->tree].kind;

		if (p->state != SIM_LIVE || kind == SIM_MM_STABLE)
			continue;
		if (p->drop_day > 0 && p->drop_day <= w->day)
			drop(w, p);
		else if (p->defect < 0 && CHANCE(w, 2))
			drop(w, p);
	}
}

static int absorbable(struct sim_world *w, int tree)
{
	struct sim_tree *t = &w->trees[tree];
	size_t i;

	for (i = 0; i < t->nr; i++)
		if (held(w, t->patches[i]))
			return 0;
	return t->nr > 0;
}

static int absorb(struct sim_world *w, int tree, int k)
{
	struct sim_tree *t = &w->trees[tree];
	struct sim_tree *mainline = &w->trees[0];
	struct sim_op *ops = NULL;
	size_t i, j, ops_nr = 0, ops_alloc = 0;
	struct strbuf msg = STRBUF_INIT;
	struct sim_person linus = sim_maintainer(0), m = sim_maintainer(t->maintainer);
	const char *parents[2];
	git_commit *c = NULL;
	git_oid oid, tree_oid;
	long long when = SIM_EPOCH + (long long)w->day * 86400 + 10 * 3600 + k * 300;
	struct nb_oid out;
	int error = 0;

	for (i = 0; i < t->nr; i++)
		for (j = 0; j < t->patches[i]->ops_nr; j++) {
			ALLOC_GROW(ops, ops_nr + 1, ops_alloc);
			ops[ops_nr++] = t->patches[i]->ops[j];
		}
	if ((error = merge_oid_to_git(&oid, &w->mainline)) < 0)
		goto done;
	if (git_commit_lookup(&c, w->store, &oid) < 0) {
		error = merge_git_fail("sim: mainline");
		goto done;
	}
	if ((error = sim_git_apply(&tree_oid, w->store, git_commit_tree_id(c), ops, ops_nr)) < 0)
		goto done;
	strbuf_addf(&msg, "Merge branch '%s' of https://git.example.org/%s.git\n\n"
		    "Pull %s updates from %s:\n\n", t->branch, t->repo, t->name, m.name);
	for (i = 0; i < t->nr; i++)
		strbuf_addf(&msg, " - %s\n", t->patches[i]->subject);
	parents[0] = w->mainline.hex;
	parents[1] = t->tip.hex;
	if ((error = sim_git_commit(&out, w->store, &(struct sim_commit_spec){
					    .tree = &tree_oid, .parents = parents, .parents_nr = 2,
					    .author = &linus, .author_time = when,
					    .committer = &linus, .commit_time = when,
					    .message = msg.buf })) < 0)
		goto done;
	w->mainline = out;
	mainline->tip = out;
	for (i = 0; i < t->nr; i++) {
		struct sim_patch *p = t->patches[i];

		sim_journey_leave(w, p, SIM_EV_MERGED);
		p->state = SIM_ABSORBED;
		for (j = 0; j < p->new_files.nr; j++)
			strvec_push(&w->subs[p->sub].extras, p->new_files.v[j]);
	}
	t->nr = 0;
	t->base = out;
	t->tip = out;
	t->dirty_from = -1;
done:
	git_commit_free(c);
	free(ops);
	strbuf_release(&msg);
	return error;
}

/* Mainline's own fixes: edits of lib/ committed straight onto master. */
static int mainline_commit(struct sim_world *w, int k)
{
	struct sim_patch *p = patch_new(w, 0, 0);
	struct sim_person linus = sim_maintainer(0);
	const struct sim_person *a;
	struct strbuf msg = STRBUF_INIT;
	git_commit *c = NULL;
	git_oid oid, tree_oid;
	const char *parents[1] = { w->mainline.hex };
	struct nb_oid out;
	int error = 0;

	if (slot_edit(w, p, 0, NULL, NULL, NULL) < 0)
		goto done;
	a = &sim_submitters[p->author];
	if ((error = merge_oid_to_git(&oid, &w->mainline)) < 0)
		goto done;
	if (git_commit_lookup(&c, w->store, &oid) < 0) {
		error = merge_git_fail("sim: mainline");
		goto done;
	}
	if ((error = sim_git_apply(&tree_oid, w->store, git_commit_tree_id(c), p->ops,
				   p->ops_nr)) < 0)
		goto done;
	strbuf_addf(&msg, "%s\n\n%s\n\nSigned-off-by: %s <%s>\nLink: https://lore.kernel.org/r/%s\n"
		    "Signed-off-by: %s <%s>\n", p->subject, p->body, a->name, a->email, p->msgid,
		    linus.name, linus.email);
	error = sim_git_commit(&out, w->store, &(struct sim_commit_spec){
				       .tree = &tree_oid, .parents = parents, .parents_nr = 1,
				       .author = a, .author_time = author_time(p),
				       .committer = &linus,
				       .commit_time = SIM_EPOCH + (long long)w->day * 86400 +
						      9 * 3600 + k * 60,
				       .message = msg.buf });
	if (!error) {
		w->mainline = out;
		w->trees[0].tip = out;
	}
done:
	p->state = SIM_ABSORBED;
	git_commit_free(c);
	strbuf_release(&msg);
	return error;
}

static int mainline_day(struct sim_world *w)
{
	size_t t;
	int k = 0, error = 0, n = 1 + RNG(w, 2), i;

	for (i = 0; i < n && !error; i++)
		error = mainline_commit(w, i);
	if (!error && w->day % 7 == 0) {
		if (absorbable(w, 1))
			error = absorb(w, 1, k++);
		for (t = 4; t < w->trees_nr && !error; t++)
			if (absorbable(w, (int)t) && CHANCE(w, 80))
				error = absorb(w, (int)t, k++);
	} else if (!error && others_nr(w) > 0 && CHANCE(w, 15)) {
		t = 4 + (size_t)RNG(w, others_nr(w));
		if (absorbable(w, (int)t))
			error = absorb(w, (int)t, k);
	}
	return error;
}

/* ---- writing the branches ---- */

static void message(struct strbuf *msg, struct sim_world *w, const struct sim_patch *p,
		    const struct sim_person *m)
{
	const struct sim_person *a = &sim_submitters[p->author];

	strbuf_addf(msg, "%s\n\n%s\n\nSigned-off-by: %s <%s>\n", p->subject, p->body, a->name,
		    a->email);
	sim_journey_trailers(msg, w, p);
	strbuf_addf(msg, "Link: https://lore.kernel.org/r/%s\n", p->msgid);
	if (strcmp(a->email, m->email))
		strbuf_addf(msg, "Signed-off-by: %s <%s>\n", m->name, m->email);
}

/* Committer dates of rebuilt branches: the evening of the day, in branch order. */
static long long commit_time(int day, size_t position)
{
	return SIM_EPOCH + (long long)day * 86400 + 17 * 3600 + (long long)position * 7;
}

static int replay(struct sim_world *w, int tree, int all)
{
	struct sim_tree *t = &w->trees[tree];
	struct sim_person m = sim_maintainer(t->maintainer);
	struct strbuf msg = STRBUF_INIT;
	git_commit *c = NULL;
	git_oid oid, tree_oid;
	size_t i;
	int error = 0, start = all ? 0 : t->dirty_from;

	if (start < 0)
		return 0;
	t->tip = start ? t->patches[start - 1]->commit : t->base;
	for (i = (size_t)start; i < t->nr;) {
		struct sim_patch *p = t->patches[i];
		const char *parents[1] = { t->tip.hex };
		struct sim_commit_spec spec = {
			.tree = &tree_oid, .parents = parents, .parents_nr = 1,
			.author = &sim_submitters[p->author], .committer = &m,
		};

		git_commit_free(c);
		c = NULL;
		if ((error = merge_oid_to_git(&oid, &t->tip)) < 0)
			break;
		if (git_commit_lookup(&c, w->store, &oid) < 0) {
			error = merge_git_fail("%s", t->name);
			break;
		}
		if (sim_git_apply(&tree_oid, w->store, git_commit_tree_id(c), p->ops,
				  p->ops_nr) < 0) {
			log_warn("sim: %s: dropping '%s': %s", t->name, p->subject,
				 nb_error_last());
			drop(w, p);
			continue;
		}
		p->commit_day = w->day;
		strbuf_reset(&msg);
		message(&msg, w, p, &m);
		spec.author_time = author_time(p);
		spec.commit_time = commit_time(w->day, i);
		spec.message = msg.buf;
		error = sim_git_commit(&p->commit, w->store, &spec);
		if (error)
			break;
		t->tip = p->commit;
		i++;
	}
	t->dirty_from = -1;
	git_commit_free(c);
	strbuf_release(&msg);
	return error;
}

static int rebuild(struct sim_world *w)
{
	size_t t;
	int error = 0;

	for (t = 4; t < w->trees_nr && !error; t++)
		error = replay(w, (int)t, 0);
	if (!error)
		error = replay(w, 1, 0);
	w->trees[2].base = w->trees[1].tip;
	if (!error)
		error = replay(w, 2, 1);
	w->trees[3].base = w->trees[2].tip;
	if (!error)
		error = replay(w, 3, 1);
	return error;
}

static int publish(struct sim_world *w)
{
	struct strbuf path = STRBUF_INIT, ref = STRBUF_INIT;
	size_t t;
	int error = 0;

	for (t = 0; t < w->trees_nr && !error; t++) {
		strbuf_reset(&path);
		strbuf_reset(&ref);
		strbuf_addf(&path, "%s/remotes/%s.git", w->dir, w->trees[t].repo);
		strbuf_addf(&ref, "refs/heads/%s", w->trees[t].branch);
		error = sim_git_set_ref(path.buf, ref.buf, w->trees[t].tip.hex);
	}
	strbuf_release(&path);
	strbuf_release(&ref);
	return error;
}

static void refresh_truth(struct sim_world *w)
{
	size_t i;

	for (i = 0; i < w->defects_nr; i++) {
		struct sim_defect *d = &w->defects[i];
		struct sim_patch *c = sim_patch_by_id(w, d->culprit);
		struct sim_patch *p = d->partner >= 0 ? sim_patch_by_id(w, d->partner) : NULL;
		git_oid oid;

		if (c && c->state == SIM_LIVE && !merge_oid_to_git(&oid, &c->commit)) {
			merge_patch_id_oid(&d->patch_id, w->store, &oid);
			free(d->trees);
			const char *ct = w->trees[c->tree].name;

			d->trees = p ? xstrfmt("%s,%s", ct, w->trees[p->tree].name) : xstrdup(ct);
		}
		if (p && p->state == SIM_LIVE && !merge_oid_to_git(&oid, &p->commit))
			merge_patch_id_oid(&d->partner_patch_id, w->store, &oid);
		sim_defect_recipients(w, d);
	}
	nb_error_clear();
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int finish_day(struct sim_world *w)
{
	double t0 = now(), t1, t2;
	int error;

	relock(w);
	if ((error = rebuild(w)) < 0)
		return error;
	t1 = now();
	relock(w);
	if ((error = sim_git_flush(w)) < 0 || (error = publish(w)) < 0)
		return error;
	t2 = now();
	refresh_truth(w);
	sim_journey_patch_ids(w);
	prune(w);
	if ((error = sim_truth_save(w)) < 0 || (error = sim_state_save(w)) < 0)
		return error;
	log_verbose("sim: day %d: commits %.2fs, pack and refs %.2fs, state %.2fs", w->day,
		    t1 - t0, t2 - t1, now() - t2);
	return 0;
}

static int play_day(struct sim_world *w)
{
	int error;

	double t0 = now();

	w->day++;
	log_progress("sim: day %d", w->day);
	if ((error = mainline_day(w)) < 0)
		return error;
	drops(w);
	graduate(w);
	sim_journey_day(w);
	relock(w);
	prune(w);
	arrivals(w);
	inject_defects(w);
	log_verbose("sim: day %d: news %.2fs", w->day, now() - t0);
	return finish_day(w);
}

/* ---- creating a world ---- */

struct import {
	git_tree_update *u;
	size_t nr, alloc;
	git_repository *repo;
	struct strvec paths;
};

static int import_file(void *ctx, const char *path, const char *text)
{
	struct import *im = ctx;
	git_tree_update *u;

	ALLOC_GROW(im->u, im->nr + 1, im->alloc);
	u = &im->u[im->nr];
	memset(u, 0, sizeof(*u));
	if (git_blob_create_from_buffer(&u->id, im->repo, text, strlen(text)) < 0)
		return merge_git_fail("%s", path);
	strvec_push(&im->paths, path);
	u->action = GIT_TREE_UPDATE_UPSERT;
	u->filemode = GIT_FILEMODE_BLOB;
	im->nr++;
	return 0;
}

/* MAINTAINERS and .mailmap at the top of mainline (feeds/maintainers.c). */
static int import_people(struct sim_world *w, struct import *im)
{
	struct strbuf text = STRBUF_INIT;
	int error;

	sim_maintainers_text(&text, w);
	error = import_file(im, "MAINTAINERS", text.buf);
	strbuf_reset(&text);
	sim_mailmap_text(&text);
	if (!error)
		error = import_file(im, ".mailmap", text.buf);
	strbuf_release(&text);
	return error;
}

static int import(struct sim_world *w)
{
	struct import im = { NULL, 0, 0, w->store, STRVEC_INIT };
	struct sim_person linus = sim_maintainer(0);
	git_treebuilder *tb = NULL;
	git_tree *empty = NULL;
	git_oid oid, tree_oid;
	struct nb_oid history = NB_OID_INIT;
	const char *parents[1] = { history.hex };
	struct strbuf msg = STRBUF_INIT;
	size_t i;
	int error;

	if ((error = sim_project_files(w, import_file, &im)) < 0 ||
	    (error = import_people(w, &im)) < 0)
		goto done;
	for (i = 0; i < im.nr; i++)
		im.u[i].path = im.paths.v[i];
	if (git_treebuilder_new(&tb, w->store, NULL) < 0 || git_treebuilder_write(&oid, tb) < 0 ||
	    git_tree_lookup(&empty, w->store, &oid) < 0 ||
	    git_tree_create_updated(&tree_oid, w->store, empty, im.nr, im.u) < 0) {
		error = merge_git_fail("sim: import");
		goto done;
	}
	if (w->history > 0 && (error = sim_history_write(&history, w, w->history)) < 0)
		goto done;
	strbuf_addstr(&msg, "Initial import of the nb kernel\n");
	sim_maintainers_acks(&msg, w);
	error = sim_git_commit(&w->mainline, w->store, &(struct sim_commit_spec){
				       .tree = &tree_oid, .parents = parents,
				       .parents_nr = w->history > 0, .author = &linus,
				       .author_time = SIM_EPOCH, .committer = &linus,
				       .commit_time = SIM_EPOCH, .message = msg.buf });
	for (i = 0; i < w->trees_nr && !error; i++) {
		w->trees[i].base = w->mainline;
		w->trees[i].tip = w->mainline;
	}
done:
	git_tree_free(empty);
	git_treebuilder_free(tb);
	free(im.u);
	strvec_clear(&im.paths);
	strbuf_release(&msg);
	return error;
}

static int create_repos(struct sim_world *w)
{
	struct strbuf path = STRBUF_INIT, store = STRBUF_INIT;
	size_t i;
	int error = 0;

	strbuf_addf(&store, "%s/sim/store.git", w->dir);
	if (git_repository_init(&w->store, store.buf, 1) < 0) {
		error = merge_git_fail("%s", store.buf);
		goto done;
	}
	for (i = 0; i < w->trees_nr && !error; i++) {
		const char *r;

		if (i > 1 && w->trees[i].kind != SIM_OTHER)
			continue; /* mm.git is made once */
		strbuf_reset(&path);
		strbuf_addf(&path, "%s/remotes/%s.git", w->dir, w->trees[i].repo);
		/*
		 * The remote borrows the store's objects by a path relative to its own
		 * objects folder (git resolves it from there), so the world can be moved:
		 * up from remotes/<repo>.git/objects to the world, then sim/store.git.
		 */
		strbuf_reset(&store);
		strbuf_addstr(&store, "../../../");
		for (r = w->trees[i].repo; *r; r++)
			if (*r == '/')
				strbuf_addstr(&store, "../");
		strbuf_addstr(&store, "sim/store.git/objects");
		error = sim_git_init_remote(path.buf, store.buf, w->trees[i].branch);
	}
done:
	strbuf_release(&path);
	strbuf_release(&store);
	return error;
}

int feeds_world_init(const char *dir, const struct feeds_world_opts *opts)
{
	struct sim_world w;
	char *state = xstrfmt("%s/sim-state.json", dir), *abs = NULL;
	int error, i;

	memset(&w, 0, sizeof(w));
	if (opts->trees < 0 || opts->trees > 1000 || opts->files < 0 || opts->files > 1000000 ||
	    opts->history < 0 || opts->history > SIM_HISTORY_MAX) {
		error = nb_error_set(NB_EINVALID, "sim: --trees must be 0..1000, --files "
				     "0..1000000, --history 0..%d", SIM_HISTORY_MAX);
		goto done;
	}
	if (file_exists(state) || feeds_kernel_is_world(dir)) {
		error = nb_error_set(NB_EEXISTS, "sim: %s already holds a world", dir);
		goto done;
	}
	if ((error = file_mkdir_p(dir, 0755)) < 0)
		goto done;
	abs = realpath(dir, NULL);
	if (!abs) {
		error = nb_error_errno(NB_ERROR, "sim: %s", dir);
		goto done;
	}
	w.dir = abs;
	abs = NULL;
	w.seed = w.rng = opts->seed;
	w.jrng = sim_journey_seed(opts->seed);
	w.ntrees = opts->trees;
	w.nfiles = opts->files;
	w.matrix = opts->matrix;
	w.history = opts->history;
	w.cache = opts->cache;
	sim_subs_build(&w);
	sim_trees_build(&w);
	if ((error = create_repos(&w)) < 0 || (error = sim_git_store_setup(&w)) < 0 ||
	    (error = import(&w)) < 0)
		goto done;
	for (i = 0; i < SIM_KINDS; i++)
		w.covered[i] = 0;
	arrivals(&w);
	if ((error = finish_day(&w)) < 0)
		goto done;
	error = sim_config_save(&w);
done:
	sim_world_release(&w);
	free(state);
	free(abs);
	return error;
}

int feeds_world_advance(const char *dir, int days)
{
	struct sim_world w;
	int error, i;

	if (days < 1)
		return nb_error_set(NB_EINVALID, "sim: --days must be at least 1");
	if (feeds_kernel_is_world(dir))
		return feeds_kernel_advance(dir, days);
	memset(&w, 0, sizeof(w));
	if ((error = sim_state_load(&w, dir)) < 0 || (error = sim_git_store_setup(&w)) < 0)
		goto done;
	relock(&w);
	for (i = 0; i < days && !error; i++)
		error = play_day(&w);
	log_progress_done();
done:
	sim_world_release(&w);
	return error;
}
