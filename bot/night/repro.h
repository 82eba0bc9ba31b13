/*
 * Reproduce steps that work away from the bot's host (bot/ only).  At flag time the
 * night's ingredients of the failing probe are recorded in the flag (the base and
 * every earlier tree at the commits merged, reverts, the culprit); a notice renders
 * them as plain git and the configured commands, for an empty folder where only the
 * trees' URLs (or publish.url and the night's tag) are reachable.  night_repro.c
 * records (the night's side); repro.c renders, from the flag alone.
 */
#ifndef BOT_REPRO_H
#define BOT_REPRO_H

#include "bot/config/config.h"
#include "bot/state/state.h"
#include "util/strvec.h"

struct night;
struct culprit_result;

/*
 * Fills f->repro from the night's steps before the culprit's tree and the culprit
 * (r->step, r->commit).  Never fails: what cannot be known is left out.
 */
void repro_record(struct night *n, struct flag *f, const struct culprit_result *r);

/* After a successful publish: the flags seen tonight can start from the tag. */
void repro_mark_published(struct night *n);

/*
 * Appends the Reproduce: block's lines (without indentation) for flag `f`: git to
 * rebuild next as it stood before the tree's merge, the culprit merged in, then the
 * configured commands with their environment.  Nothing when f has no record.
 */
void repro_render(struct strvec *out, const struct config *cfg, const struct flag *f);

/* The URL as it may be shown to anyone: "user:password@" taken out. */
char *repro_public_url(const char *url);

#endif
