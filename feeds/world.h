/*
 * The branch-feed simulator: a small kernel-shaped C project, its mainline and
 * subsystem trees as bare repositories, played day by day with injected defects
 * whose ground truth is written to truth.json.
 *
 * Layout of a world directory DIR:
 *   DIR/remotes/mainline.git   branch master
 *   DIR/remotes/mm.git         branches mm-stable, mm-next, mm-unstable
 *   DIR/remotes/<tree>.git     branch <tree> (net-next, vfs, sched, …)
 *   DIR/nextbot.yaml           a ready config (file:// urls, make / make test; with
 *                              --matrix, make ARCH=$ARCH over three cells)
 *   DIR/truth.json             the ground truth of injected defects
 *   DIR/sim-state.json         the simulator's own state (day, PRNG, queues)
 */
#ifndef FEEDS_WORLD_H
#define FEEDS_WORLD_H

#include <stdint.h>

struct feeds_world_opts {
	uint64_t seed;  /* default 1 */
	int trees;      /* trees besides mm and mainline; default 3 */
	int files;      /* approximate number of source files; default 0 = small */
	/* configurations: the Makefile takes ARCH (x86_64, arm64, riscv; NB_ARCH_<ARCH>
	   is defined), the config builds a matrix over them, build defects may break
	   only some (an #ifdef path), and truth.json lists the cells each breaks */
	int matrix;
	/* commits of mainline history under the initial import (a linear chain, each
	   changing one file HISTORY); 0: the import is the root, as before */
	int history;
	/* nextbot.yaml turns the compiler cache on (runner: {cache: {max: 5G}}):
	   the caller sets it only where check-config accepts it (bwrap is installed) */
	int cache;
};
#define FEEDS_WORLD_OPTS_INIT { 1, 3, 0, 0, 0, 0 }

/*
 * Creates the world in `dir` (created if missing; must not already hold one).
 * Day 0: mainline and every tree at their first state.  Returns 0, NB_EEXISTS if
 * `dir` already holds a world, NB_EINVALID for bad options, NB_ERROR (recorded).
 */
int feeds_world_init(const char *dir, const struct feeds_world_opts *opts);

/*
 * Plays `days` days (>= 1) in the world in `dir`: new patches, graduation,
 * rebases, drops, merge windows, defects; updates truth.json and sim-state.json
 * after each day.  Deterministic: the same world and the same calls give the same
 * commit ids.  Returns 0, NB_ENOTFOUND if `dir` holds no world, or NB_ERROR.
 */
int feeds_world_advance(const char *dir, int days);

/*
 * feeds/kernel.c: a kernel world.  `src` is a kernel source tarball or tree; mainline
 * is that source as one commit, the feeds a fixed script of edits of real files with a
 * build break, a boot failure, a semantic conflict and a flaky boot (truth.json); the
 * config builds a tinyconfig and boots it (`nextbot boot-test`).  Same returns as
 * feeds_world_init(); only opts->cache is read.
 */
int feeds_kernel_init(const char *dir, const char *src, const struct feeds_world_opts *opts);
/* Whether `dir` holds a kernel world; feeds_world_advance() plays one by its script. */
int feeds_kernel_is_world(const char *dir);
int feeds_kernel_advance(const char *dir, int days);

#endif
