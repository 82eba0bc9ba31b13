/*
 * The simulated world's data itself, below the files (state.c) and the days
 * (world.c) that use it: its trees laid out, patches by id, the lock set, kind
 * names, and releasing a world.
 */
#include <stdlib.h>
#include <string.h>

#include "feeds/sim.h"
#include "util/xalloc.h"
#include "util/banned.h"

static const char *const kind_names[SIM_KINDS] = { "build", "test", "flaky", "conflict",
						   "semantic" };

const char *sim_kind_name(int kind)
{
	return kind >= 0 && kind < SIM_KINDS ? kind_names[kind] : "normal";
}

struct sim_patch *sim_patch_by_id(struct sim_world *w, int id)
{
	size_t lo = 0, hi = w->patches_nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (w->patches[mid]->id == id)
			return w->patches[mid];
		if (w->patches[mid]->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void sim_patch_free(struct sim_patch *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->ops_nr; i++) {
		free(p->ops[i].path);
		free(p->ops[i].old_text);
		free(p->ops[i].new_text);
	}
	free(p->ops);
	free(p->subject);
	free(p->body);
	free(p->msgid);
	strvec_clear(&p->locks);
	strvec_clear(&p->new_files);
	free(p->reviews);
	free(p);
}

void sim_world_release(struct sim_world *w)
{
	size_t i;

	for (i = 0; i < w->patches_nr; i++)
		sim_patch_free(w->patches[i]);
	free(w->patches);
	for (i = 0; i < w->trees_nr; i++) {
		free(w->trees[i].name);
		free(w->trees[i].repo);
		free(w->trees[i].branch);
		free(w->trees[i].patches);
	}
	free(w->trees);
	for (i = 0; i < w->defects_nr; i++) {
		free(w->defects[i].trees);
		free(w->defects[i].maintainers);
	}
	free(w->defects);
	for (i = 0; i < w->journeys_nr; i++)
		sim_journey_release(&w->journeys[i]);
	free(w->journeys);
	sim_subs_release(w);
	sim_lock_clear(&w->locks);
	free(w->locks.keys);
	git_repository_free(w->store); /* frees the mempack backend with its odb */
	free(w->dir);
	memset(w, 0, sizeof(*w));
}

/* ---- the lock set: FNV-1a, linear probing, at most half full ---- */

static size_t lock_slot(const struct sim_lockset *ls, const char *key)
{
	uint64_t h = 1469598103934665603ULL;
	const char *p;
	size_t i;

	for (p = key; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	for (i = h & (ls->cap - 1); ls->keys[i] && strcmp(ls->keys[i], key);
	     i = (i + 1) & (ls->cap - 1))
		;
	return i;
}

int sim_lock_has(const struct sim_lockset *ls, const char *key)
{
	return ls->cap && ls->keys[lock_slot(ls, key)] != NULL;
}

void sim_lock_add(struct sim_lockset *ls, const char *key)
{
	size_t i;

	if (2 * (ls->nr + 1) > ls->cap) {
		struct sim_lockset bigger = { NULL, ls->cap ? ls->cap * 2 : 64, 0 };

		bigger.keys = xcalloc(bigger.cap, sizeof(char *));
		for (i = 0; i < ls->cap; i++)
			if (ls->keys[i]) {
				bigger.keys[lock_slot(&bigger, ls->keys[i])] = ls->keys[i];
				bigger.nr++;
			}
		free(ls->keys);
		*ls = bigger;
	}
	i = lock_slot(ls, key);
	if (!ls->keys[i]) {
		ls->keys[i] = xstrdup(key);
		ls->nr++;
	}
}

void sim_lock_clear(struct sim_lockset *ls)
{
	size_t i;

	for (i = 0; i < ls->cap; i++) {
		free(ls->keys[i]);
		ls->keys[i] = NULL;
	}
	ls->nr = 0;
}

/* ---- writing ---- */

void sim_trees_build(struct sim_world *w)
{
	static const char *const mm[] = { "mm-stable", "mm-next", "mm-unstable" };
	size_t i;

	w->trees_nr = 4 + (size_t)w->ntrees;
	w->trees = xcalloc(w->trees_nr, sizeof(*w->trees));
	w->trees[0].name = xstrdup("mainline");
	w->trees[0].repo = xstrdup("mainline");
	w->trees[0].branch = xstrdup("master");
	w->trees[0].kind = SIM_MAINLINE;
	for (i = 1; i < 4; i++) {
		w->trees[i].name = xstrdup(mm[i - 1]);
		w->trees[i].repo = xstrdup("mm");
		w->trees[i].branch = xstrdup(mm[i - 1]);
		w->trees[i].kind = SIM_MM_STABLE + (int)i - 1;
		w->trees[i].sub = 1;
		w->trees[i].maintainer = 1;
	}
	for (i = 4; i < w->trees_nr; i++) {
		w->trees[i].name = xstrdup(w->subs[i - 2].tree);
		w->trees[i].repo = xstrdup(w->subs[i - 2].tree);
		w->trees[i].branch = xstrdup(w->subs[i - 2].tree);
		w->trees[i].kind = SIM_OTHER;
		w->trees[i].sub = (int)i - 2;
		w->trees[i].maintainer = (int)i - 2;
	}
	for (i = 0; i < w->trees_nr; i++)
		w->trees[i].dirty_from = -1;
}
