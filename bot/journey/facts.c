/*
 * The journey store's answer to the review queue (bot/people/reviews.c): for one patch,
 * its journey's lasting key (one row per patch, whichever branches carry it), the day
 * nextbot first saw it posted, and whether its journey ended (dropped, merged into
 * mainline, gone).  Read only; no lock needed.
 */
#include <stdlib.h>
#include <string.h>

#include "bot/journey/journey_int.h"
#include "bot/people/people.h"
#include "util/error.h"
#include "util/xalloc.h"
#include "util/banned.h"

struct journey_facts {
	struct journey_store store;
};

int journey_facts_load(struct journey_facts **out, const struct config *cfg)
{
	struct journey_facts *f = xcalloc(1, sizeof(*f));
	int error = journey_store_load(&f->store, cfg->workdir);

	if (error < 0) {
		free(f);
		*out = NULL;
		return error;
	}
	*out = f;
	return 0;
}

static int version_is(const struct journey_version *v, const struct nb_patchid *pid,
		      const char *message_id)
{
	if (pid && !nb_patchid_is_none(pid))
		return v->pid_known && nb_patchid_eq(&v->patch_id, pid);
	return message_id && v->message_id && !strcmp(v->message_id, message_id);
}

int journey_facts_find(const struct journey_facts *f, const struct nb_patchid *pid,
		       const char *message_id, struct journey_fact *out)
{
	size_t i, k;

	if (!f)
		return -1;
	for (i = 0; i < f->store.patches_nr; i++) {
		const struct journey *j = &f->store.patches[i];

		for (k = 0; k < j->versions_nr; k++)
			if (version_is(&j->versions[k], pid, message_id))
				break;
		if (k == j->versions_nr)
			continue;
		out->key = j->key;
		out->first_seen = j->first_seen;
		out->ended = j->state == JOURNEY_DROPPED || j->state == JOURNEY_MERGED ||
			     j->state == JOURNEY_GONE;
		return 0;
	}
	return -1;
}

const char *journey_facts_date(const struct journey_facts *f)
{
	return f ? f->store.date : NULL;
}

void journey_facts_free(struct journey_facts *f)
{
	if (!f)
		return;
	journey_store_release(&f->store);
	free(f);
}

static int people_find(void *ctx, const struct nb_patchid *pid, const char *message_id,
		       const char **key, const char **first_seen, int *ended)
{
	struct journey_fact jf;

	if (journey_facts_find(ctx, pid, message_id, &jf) < 0)
		return -1;
	*key = jf.key;
	*first_seen = jf.first_seen;
	*ended = jf.ended;
	return 0;
}

int journey_people_open(struct people_journeys *out, const struct config *cfg)
{
	struct journey_facts *f;
	int error = journey_facts_load(&f, cfg);

	memset(out, 0, sizeof(*out));
	if (error < 0)
		return error;
	out->ctx = f;
	out->find = people_find;
	out->date = journey_facts_date(f);
	return 0;
}

void journey_people_close(struct people_journeys *j)
{
	journey_facts_free(j->ctx);
	memset(j, 0, sizeof(*j));
}
