/* Tonight's commits of the followed trees, read once (cached), and matched to journeys. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bot/journey/night_int.h"
#include "merge/repo/repo.h"
#include "util/error.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* Commits read of one tree at most: a tree this far from the base is not a patch queue. */
#define OBSERVE_MAX_COMMITS 20000

int journey_tree_index(const struct journey_night *jn, const char *name)
{
	size_t i;

	return jmap_get(&jn->by_tree, name, &i) ? (int)i : -1;
}

/*
 * A commit read from the repository.  Its patch-id (a diff, nine tenths of the
 * cost) waits when it has a Message-ID, which identifies it as well: until a
 * comparison needs it or the night has time left (journey_patch_ids()).
 */
static int read_commit(struct journey_commit *out, struct repo *repo, const struct nb_oid *id)
{
	struct lookup_patch lp;
	struct trailer_people people = TRAILER_PEOPLE_INIT;
	struct strbuf msg = STRBUF_INIT;
	size_t i;
	int error;

	memset(out, 0, sizeof(*out));
	if ((error = lookup_commit_meta(&lp, repo, NULL, id)) < 0)
		return error;
	out->id = lp.commit;
	if (!lp.message_id) {
		if ((error = lookup_patch_id(&out->patch_id, repo, id)) < 0) {
			lookup_patch_release(&lp);
			return error;
		}
		out->pid_known = 1;
	}
	out->message_id = lp.message_id ? xstrdup(lp.message_id) : NULL;
	out->subject = xstrdup(lp.subject);
	out->author_name = xstrdup(lp.author_name);
	out->author_email = xstrdup(lp.author_email);
	out->link = lp.link ? xstrdup(lp.link) : NULL;
	strbuf_addf(&msg, "%s\n\n%s", lp.subject, lp.body ? lp.body : "");
	trailer_people_parse(&people, msg.buf, NULL, 0);
	out->people = xcalloc(people.nr ? people.nr : 1, sizeof(*out->people));
	for (i = 0; i < people.nr; i++) {
		const char *e = people.v[i].email;

		/* people only: "Link: https://…/r/<msgid@host>" names a mail, not someone */
		if (!strchr(e, '@') || strstr(e, "://") || strpbrk(e, " \t<>"))
			continue;
		out->people[out->people_nr].key = xstrdup(people.v[i].key);
		out->people[out->people_nr].name = xstrdup(people.v[i].name);
		out->people[out->people_nr++].email = xstrdup(people.v[i].email);
	}
	trailer_people_release(&people);
	strbuf_release(&msg);
	lookup_patch_release(&lp);
	return 0;
}

/*
 * What a journey's latest version says of its commit: what reading it would say.
 * Borrowed, not copied (8,000 of them a night): the journey's strings outlive the
 * night's list, and nothing replaces them while they are the same commit.
 */
static void commit_known(struct journey_commit *out, const struct journey *jr)
{
	const struct journey_version *v = &jr->versions[jr->versions_nr - 1];

	*out = (struct journey_commit){
		.id = v->commit, .patch_id = v->patch_id, .pid_known = v->pid_known,
		.message_id = v->message_id,
		.subject = jr->subject, .author_name = jr->author_name,
		.author_email = jr->author_email, .link = jr->link, .people = v->people,
		.people_nr = v->people_nr, .borrowed = 1,
	};
}

/*
 * Tonight's entry of commit `id`: from tonight's list, from the journey whose latest
 * version it is (a commit is read from the repository once), or read now.
 */
static int commit_of(size_t *out, struct journey_night *jn, const struct nb_oid *id)
{
	struct journey_commit *c;
	size_t j;
	int error;

	if (jmap_get(&jn->by_commit, id->hex, out))
		return 0;
	ALLOC_GROW(jn->tonight, jn->tonight_nr + 1, jn->tonight_alloc);
	c = &jn->tonight[jn->tonight_nr];
	if (jmap_get(&jn->by_cache, id->hex, &j))
		commit_known(c, &jn->store.patches[j]);
	else if ((error = read_commit(c, jn->reader, id)) < 0)
		return error;
	else
		jn->read_nr++;
	*out = jn->tonight_nr++;
	jmap_put(&jn->by_commit, id->hex, *out);
	return 0;
}

static int read_tree(struct journey_night *jn, struct jn_tree *t)
{
	const struct journey_tree_seen *seen = journey_tree_seen_find(&jn->store, t->cfg->name);
	size_t i, at;
	int error;

	if (nb_oid_is_null(&t->tip))
		return 0;
	if (seen && seen->commits_nr && nb_oid_equal(&seen->tip, &t->tip) &&
	    nb_oid_equal(&seen->base, jn->o.base_tip)) {
		t->commits = xcalloc(seen->commits_nr, sizeof(*t->commits));
		memcpy(t->commits, seen->commits, seen->commits_nr * sizeof(*t->commits));
		t->commits_nr = seen->commits_nr;
	} else if ((error = lookup_commit_ids(&t->commits, &t->commits_nr, jn->reader, t->cfg->name,
				       &t->tip, jn->o.base_tip, OBSERVE_MAX_COMMITS)) < 0) {
		return error;
	}
	if (t->commits_nr == OBSERVE_MAX_COMMITS)
		log_warn("journeys: %s: only its first %d commits are followed", t->cfg->name,
			 OBSERVE_MAX_COMMITS);
	for (i = 0; i < t->commits_nr; i++)
		if ((error = commit_of(&at, jn, &t->commits[i])) < 0)
			return error;
	return 0;
}

/* ---- matching ---- */

static void grow_seen(struct journey_night *jn)
{
	size_t old = jn->seen_alloc;

	if (jn->store.patches_nr <= old)
		return;
	ALLOC_GROW(jn->seen, jn->store.patches_nr, jn->seen_alloc);
	memset(jn->seen + old, 0, (jn->seen_alloc - old) * sizeof(*jn->seen));
	for (; old < jn->seen_alloc; old++)
		jn->seen[old].tree = jn->seen[old].old_tree = -1;
}

/*
 * A patch-id or Message-ID names the journey that had it first: a later journey that
 * carries it too (a claim, below) never takes it over.
 */
static void index_version(struct journey_night *jn, size_t j, const struct journey_version *v)
{
	size_t had;

	if (v->pid_known && !nb_patchid_is_none(&v->patch_id) &&
	    !jmap_get(&jn->by_pid, NB_PATCHID_HEX(&v->patch_id), &had))
		jmap_put(&jn->by_pid, NB_PATCHID_HEX(&v->patch_id), j);
	if (!jmap_get(&jn->by_msgid, v->message_id, &had))
		jmap_put(&jn->by_msgid, v->message_id, j);
}

static void version_fill(struct journey_version *v, const struct journey_commit *c,
			 const char *date)
{
	memset(v, 0, sizeof(*v));
	v->patch_id = c->patch_id;
	v->pid_known = c->pid_known;
	v->message_id = c->message_id ? xstrdup(c->message_id) : NULL;
	v->commit = c->id;
	v->first_seen = xstrdup(date);
	v->people = journey_people_dup(c->people, c->people_nr);
	v->people_nr = c->people_nr;
}

void journey_version_add(struct journey_night *jn, size_t j, const struct journey_commit *c)
{
	struct journey *jr = &jn->store.patches[j];

	char *link = c->link ? xstrdup(c->link) : NULL;

	JOURNEY_GROW(jr->versions, jr->versions_nr + 1, jr->versions_alloc);
	version_fill(&jr->versions[jr->versions_nr++], c, jn->o.date);
	index_version(jn, j, &jr->versions[jr->versions_nr - 1]);
	journey_str_free(jr, jr->link);
	jr->link = link;
}

size_t journey_adopt(struct journey_night *jn, const struct journey_commit *c, int ti)
{
	struct journey *jr = journey_store_add(&jn->store);
	size_t j = jn->store.patches_nr - 1;

	jr->key = xstrdup(!nb_patchid_is_none(&c->patch_id) ? NB_PATCHID_HEX(&c->patch_id) :
			  c->message_id			? c->message_id :
							  c->id.hex);
	jr->subject = xstrdup(c->subject);
	jr->author_name = xstrdup(c->author_name);
	jr->author_email = xstrdup(c->author_email);
	jr->family = xstrdup(jn->trees[ti].cfg->url);
	jr->first_seen = xstrdup(jn->o.date);
	journey_version_add(jn, j, c);
	grow_seen(jn);
	jn->seen[j].is_new = 1;
	return j;
}

int journey_commit_pid(struct journey_night *jn, struct journey_commit *c)
{
	int error;

	if (c->pid_known)
		return 0;
	if ((error = lookup_patch_id(&c->patch_id, jn->reader, &c->id)) < 0)
		return error;
	c->pid_known = 1;
	jn->pid_nr++;
	return 0;
}

void journey_version_pid(struct journey_night *jn, struct journey_version *v)
{
	if (v->pid_known || lookup_patch_id(&v->patch_id, jn->reader, &v->commit) < 0) {
		nb_error_clear();
		return;
	}
	v->pid_known = 1;
	jn->pid_nr++;
}

/*
 * Does commit c say something the latest version does not: another Message-ID, or
 * the same one (or none) with another patch-id (the patch changed in place)?  The
 * same commit says the same.
 */
static int differs(struct journey_night *jn, struct journey_version *v, struct journey_commit *c)
{
	if (nb_oid_equal(&v->commit, &c->id))
		return 0;
	if (v->message_id && c->message_id && strcmp(v->message_id, c->message_id))
		return 1;
	journey_version_pid(jn, v);
	if (journey_commit_pid(jn, c) < 0) {
		nb_error_clear();
		return 0;
	}
	return v->pid_known && !nb_patchid_is_none(&v->patch_id) &&
	       !nb_patchid_is_none(&c->patch_id) && !nb_patchid_eq(&v->patch_id, &c->patch_id);
}

/* The same address, ASCII case and a "+tag" of the local part ignored. */
static int same_address(const char *a, const char *b)
{
	size_t la = strcspn(a, "+@"), lb = strcspn(b, "+@");
	const char *da = strrchr(a, '@'), *db = strrchr(b, '@');

	return la == lb && !strncasecmp(a, b, la) &&
	       ((!da && !db) || (da && db && !strcasecmp(da, db)));
}

/*
 * The journey of commit c: by its commit, else its patch-id, else its Message-ID.
 * One patch-id can be several people's (the same fix sent by two): when the
 * patch-id's journey is another author's and the Message-ID's is c's author's, the
 * Message-ID's is c's.
 */
static int find_journey(const struct journey_night *jn, const struct journey_commit *c, size_t *j)
{
	size_t by_pid = 0, by_mid = 0;
	int has_pid, has_mid;

	if (jmap_get(&jn->by_cache, c->id.hex, j))
		return 1;
	has_pid = c->pid_known && !nb_patchid_is_none(&c->patch_id) &&
		  jmap_get(&jn->by_pid, NB_PATCHID_HEX(&c->patch_id), &by_pid);
	has_mid = c->message_id && jmap_get(&jn->by_msgid, c->message_id, &by_mid);
	if (has_pid && has_mid && by_pid != by_mid &&
	    !same_address(jn->store.patches[by_pid].author_email, c->author_email) &&
	    same_address(jn->store.patches[by_mid].author_email, c->author_email))
		has_pid = 0;
	if (has_pid || has_mid)
		*j = has_pid ? by_pid : by_mid;
	return has_pid || has_mid;
}

/*
 * Is commit c the patch of journey j (its patch-id and author), not a claim of its
 * Message-ID?  The same commit is; else the same author and, when c was found by
 * its Message-ID alone, the same patch-id as j's latest version.
 */
static int is_patch_of(struct journey_night *jn, size_t j, struct journey_commit *c)
{
	struct journey *jr = &jn->store.patches[j];
	struct journey_version *v = &jr->versions[jr->versions_nr - 1];
	size_t i;

	for (i = 0; i < jr->versions_nr; i++)
		if (nb_oid_equal(&jr->versions[i].commit, &c->id))
			return 1;
	if (!same_address(jr->author_email, c->author_email))
		return 0;
	journey_version_pid(jn, v);
	if (journey_commit_pid(jn, c) < 0) {
		nb_error_clear();
		return 0;
	}
	return v->pid_known && nb_patchid_eq(&v->patch_id, &c->patch_id);
}

/*
 * A commit found by a Message-ID (or patch-id) that is not that journey's patch: a
 * new version of it when the same author's patch is nowhere else tonight and the
 * commit is in its family of trees; otherwise a claim, a journey of its own that
 * inherits nothing (reviews, events, drops, flags) of the patch it names.
 */
static int is_version_of(const struct journey_night *jn, size_t j, const struct journey_commit *c,
			 int ti)
{
	const struct journey *jr = &jn->store.patches[j];

	return jn->seen[j].tree < 0 && !jn->seen[j].is_new &&
	       same_address(jr->author_email, c->author_email) &&
	       !strcmp(jr->family, jn->trees[ti].cfg->url);
}

/*
 * The journey of a claim seen on an earlier night (its own patch-id, or its Message-ID,
 * and its author), other than `of`; a rare path, so a walk over the journeys.
 */
static int find_claim(struct journey_night *jn, size_t of, struct journey_commit *c, size_t *out)
{
	size_t k, v;

	if (journey_commit_pid(jn, c) < 0)
		nb_error_clear();
	for (k = 0; k < jn->store.patches_nr; k++) {
		const struct journey *jr = &jn->store.patches[k];

		if (k == of || jn->seen[k].tree >= 0 ||
		    !same_address(jr->author_email, c->author_email))
			continue;
		for (v = 0; v < jr->versions_nr; v++) {
			const struct journey_version *ver = &jr->versions[v];

			if ((c->pid_known && ver->pid_known &&
			     nb_patchid_eq(&ver->patch_id, &c->patch_id)) ||
			    (!ver->pid_known && ver->message_id && c->message_id &&
			     !strcmp(ver->message_id, c->message_id))) {
				*out = k;
				return 1;
			}
		}
	}
	return 0;
}

static void sighted(struct journey_night *jn, size_t j, int ti, struct journey_commit *c);

static void claim(struct journey_night *jn, size_t of, struct journey_commit *c, int ti)
{
	const struct journey *jr;
	size_t j;

	if (find_claim(jn, of, c, &j)) {
		sighted(jn, j, ti, c);
		return;
	}
	j = journey_adopt(jn, c, ti);
	jr = &jn->store.patches[of]; /* after the store grew */

	jn->seen[j].tree = ti;
	jn->seen[j].commit = c;
	jn->seen[j].note = xstrfmt("a claim: it carries the Message-ID <%s> of \"%s\" by %s, "
				   "another patch, and inherits nothing of it",
				   c->message_id ? c->message_id : "?", jr->subject,
				   jr->author_email);
	log_info("journeys: %.12s claims <%s> of %s: a patch of its own", c->id.hex,
		 c->message_id ? c->message_id : "?", jr->key);
}

/* Journey j is in tree ti tonight as commit c (the first, most cooked, sighting counts). */
static void sighted(struct journey_night *jn, size_t j, int ti, struct journey_commit *c)
{
	struct journey *jr = &jn->store.patches[j];
	struct jn_seen *s = &jn->seen[j];
	struct journey_version *v;

	if (s->tree >= 0)
		return;
	s->tree = ti;
	s->commit = c;
	if (!s->is_new && differs(jn, &jr->versions[jr->versions_nr - 1], c)) {
		journey_version_add(jn, j, c);
		s->replaced = 1;
		return;
	}
	/* the same version, maybe rebased with tags added (a review landing): the latest */
	v = &jr->versions[jr->versions_nr - 1];
	if (nb_oid_equal(&v->commit, &c->id))
		return;
	v->commit = c->id;
	if (c->pid_known && !v->pid_known) {
		v->patch_id = c->patch_id;
		v->pid_known = 1;
	}
	journey_people_release(jr, v->people, v->people_nr);
	v->people = journey_people_dup(c->people, c->people_nr);
	v->people_nr = c->people_nr;
	journey_str_free(jr, jr->link);
	jr->link = c->link ? xstrdup(c->link) : NULL;
}

/* Gone from where it was tonight, and that tree was fetched: a version may replace it. */
static int departing(const struct journey_night *jn, size_t j)
{
	const struct jn_seen *s = &jn->seen[j];

	return s->tree < 0 && s->old_tree >= 0 && !nb_oid_is_null(&jn->trees[s->old_tree].tip);
}

/*
 * A commit no journey knows by patch-id or Message-ID: a new version of a patch that
 * left its branch tonight (same family, subject without its [PATCH vN] prefix, and
 * author), when exactly one such patch left; otherwise a new patch.
 */
static void new_or_version(struct journey_night *jn, const size_t *gone, size_t gone_nr, int ti,
			   struct journey_commit *c)
{
	struct strbuf want = STRBUF_INIT, have = STRBUF_INIT;
	size_t i, hit = 0, hits = 0;

	journey_subject_norm(&want, c->subject);
	for (i = 0; i < gone_nr; i++) {
		const struct journey *jr = &jn->store.patches[gone[i]];

		if (jn->seen[gone[i]].tree >= 0 || strcmp(jr->family, jn->trees[ti].cfg->url) ||
		    strcasecmp(jr->author_email, c->author_email))
			continue;
		strbuf_reset(&have);
		journey_subject_norm(&have, jr->subject);
		if (!strcmp(have.buf, want.buf)) {
			hit = gone[i];
			hits++;
		}
	}
	if (hits == 1) {
		journey_version_add(jn, hit, c);
		jn->seen[hit].replaced = 1;
		jn->seen[hit].tree = ti;
		jn->seen[hit].commit = c;
	} else {
		size_t j = journey_adopt(jn, c, ti);

		jn->seen[j].tree = ti;
		jn->seen[j].commit = c;
		if (hits)
			jn->seen[j].note = xstrfmt("a new patch, not a new version: %zu patches "
						   "that left tonight have its subject and author",
						   hits);
	}
	strbuf_release(&want);
	strbuf_release(&have);
}

static void match(struct journey_night *jn)
{
	size_t t, i, j, *gone = NULL, gone_nr = 0, gone_alloc = 0;
	struct strvec later = STRVEC_INIT; /* "tree index:tonight index" not known by pid/msgid */

	for (j = 0; j < jn->store.patches_nr; j++) {
		index_version(jn, j, &jn->store.patches[j].versions[0]);
		for (i = 1; i < jn->store.patches[j].versions_nr; i++)
			index_version(jn, j, &jn->store.patches[j].versions[i]);
		jn->seen[j].old_tree = journey_tree_index(jn, jn->store.patches[j].tree);
	}
	for (t = 0; t < jn->trees_nr; t++)
		for (i = 0; i < jn->trees[t].commits_nr; i++) {
			size_t at;
			struct journey_commit *c;

			jmap_get(&jn->by_commit, jn->trees[t].commits[i].hex, &at);
			c = &jn->tonight[at];
			if (find_journey(jn, c, &j) && is_patch_of(jn, j, c))
				sighted(jn, j, (int)t, c);
			else
				strvec_pushf(&later, "%zu:%zu", t, at);
		}
	for (j = 0; j < jn->store.patches_nr; j++)
		if (departing(jn, j)) {
			ALLOC_GROW(gone, gone_nr + 1, gone_alloc);
			gone[gone_nr++] = j;
		}
	for (i = 0; i < later.nr; i++) {
		char *colon;
		size_t ti = strtoul(later.v[i], &colon, 10), at = strtoul(colon + 1, NULL, 10);
		struct journey_commit *c = &jn->tonight[at];

		if (!find_journey(jn, c, &j))
			new_or_version(jn, gone, gone_nr, (int)ti, c);
		else if (is_patch_of(jn, j, c) || is_version_of(jn, j, c, (int)ti))
			sighted(jn, j, (int)ti, c);
		else if (jn->seen[j].commit && nb_oid_equal(&jn->seen[j].commit->id, &c->id))
			continue; /* the same commit in a second tree */
		else
			claim(jn, j, c, (int)ti);
	}
	free(gone);
	strvec_clear(&later);
}

/*
 * The patch-ids that waited, of tonight's commits, up to a budget a night (a first
 * night over 8,000 patches fills them in over the nights that read new commits
 * rather than doubling its own cost); each goes to the version whose commit it is.
 * Until then a version's patch-id is unknown ("?" in the store, null in `nextbot
 * patch --json`); its Message-ID and commit find it meanwhile.
 */
void journey_patch_ids(struct journey_night *jn, size_t budget)
{
	size_t j, done = 0;

	for (j = 0; j < jn->store.patches_nr && done < budget; j++) {
		struct journey *jr = &jn->store.patches[j];
		struct journey_version *v = &jr->versions[jr->versions_nr - 1];
		struct journey_commit *c = jn->seen[j].commit;

		if (!c || c->pid_known || !nb_oid_equal(&c->id, &v->commit))
			continue;
		if (journey_commit_pid(jn, c) < 0) {
			nb_error_clear();
			continue;
		}
		done++;
		v->patch_id = c->patch_id;
		v->pid_known = 1;
	}
}

int journey_observe(struct journey_night *jn)
{
	size_t t, j;
	int error;

	for (t = 0; t < jn->trees_nr; t++)
		jmap_put(&jn->by_tree, jn->trees[t].cfg->name, t);
	/* last night's patches are most of tonight's: the maps sized once for them */
	jmap_reserve(&jn->by_cache, jn->store.patches_nr);
	jmap_reserve(&jn->by_commit, jn->store.patches_nr);
	jmap_reserve(&jn->by_pid, jn->store.patches_nr);
	jmap_reserve(&jn->by_msgid, jn->store.patches_nr);
	for (j = 0; j < jn->store.patches_nr; j++) {
		const struct journey *jr = &jn->store.patches[j];

		jmap_put(&jn->by_cache, jr->versions[jr->versions_nr - 1].commit.hex, j);
	}
	for (t = 0; t < jn->trees_nr; t++)
		if ((error = read_tree(jn, &jn->trees[t])) < 0)
			return error;
	grow_seen(jn);
	match(jn);
	return 0;
}
