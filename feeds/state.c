/* The simulator's files: sim-state.json (its memory), truth.json, nextbot.yaml. */
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merge/git/git_int.h"
#include "feeds/sim.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/oid.h"
#include "util/xalloc.h"
#include "util/banned.h"

static void set_str(json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, v ? json_object_new_string(v) : NULL);
}

static void set_int(json_object *o, const char *key, long long v)
{
	json_object_object_add(o, key, json_object_new_int64(v));
}

static json_object *strvec_json(const struct strvec *sv)
{
	json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; i < sv->nr; i++)
		json_object_array_add(a, json_object_new_string(sv->v[i]));
	return a;
}

/* Reviews as [who, kind, day] (state) or [who, kind] (journeys). */
static json_object *reviews_json(const struct sim_review *r, size_t nr, int with_day)
{
	json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; i < nr; i++) {
		json_object *x = json_object_new_array();

		json_object_array_add(x, json_object_new_int(r[i].who));
		json_object_array_add(x, json_object_new_int(r[i].kind));
		if (with_day)
			json_object_array_add(x, json_object_new_int(r[i].day));
		json_object_array_add(a, x);
	}
	return a;
}

/* A journey as sim-state.json keeps it (indices; truth.json has names). */
static json_object *journey_json(const struct sim_journey *j)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();
	size_t i;

	set_int(o, "id", j->id);
	set_int(o, "author", j->author);
	set_str(o, "subject", j->subject);
	for (i = 0; i < j->versions_nr; i++) {
		json_object *x = json_object_new_array();
		const struct nb_patchid *pid = &j->versions[i].patch_id;

		json_object_array_add(x, json_object_new_string(NB_PATCHID_HEX(pid)));
		json_object_array_add(x, json_object_new_int(j->versions[i].day));
		json_object_array_add(x, json_object_new_string(j->versions[i].msgid));
		json_object_array_add(a, x);
	}
	json_object_object_add(o, "versions", a);
	a = json_object_new_array();
	for (i = 0; i < j->events_nr; i++) {
		json_object *x = json_object_new_array();

		json_object_array_add(x, json_object_new_int(j->events[i].day));
		json_object_array_add(x, json_object_new_int(j->events[i].event));
		json_object_array_add(x, json_object_new_int(j->events[i].tree));
		json_object_array_add(x, json_object_new_int(j->events[i].from));
		json_object_array_add(a, x);
	}
	json_object_object_add(o, "events", a);
	json_object_object_add(o, "reviews", reviews_json(j->reviews, j->reviews_nr, 0));
	return o;
}

static json_object *patch_json(const struct sim_patch *p)
{
	json_object *o = json_object_new_object(), *ops = json_object_new_array();
	size_t i;

	set_int(o, "id", p->id);
	set_int(o, "tree", p->tree);
	set_int(o, "sub", p->sub);
	set_int(o, "day", p->day);
	set_int(o, "review_day", p->review_day);
	set_int(o, "drop_day", p->drop_day);
	set_int(o, "commit_day", p->commit_day);
	set_int(o, "author", p->author);
	set_int(o, "state", p->state);
	set_int(o, "defect", p->defect);
	set_int(o, "fate", p->fate);
	set_str(o, "subject", p->subject);
	set_str(o, "body", p->body);
	set_str(o, "msgid", p->msgid);
	set_str(o, "commit", p->commit.hex);
	for (i = 0; i < p->ops_nr && p->state == SIM_LIVE; i++) {
		const char *old = p->ops[i].old_text;
		json_object *op = json_object_new_array();

		json_object_array_add(op, json_object_new_string(p->ops[i].path));
		json_object_array_add(op, old ? json_object_new_string(old) : NULL);
		json_object_array_add(op, json_object_new_string(p->ops[i].new_text));
		json_object_array_add(ops, op);
	}
	json_object_object_add(o, "ops", ops);
	json_object_object_add(o, "locks", strvec_json(&p->locks));
	json_object_object_add(o, "new_files", strvec_json(&p->new_files));
	json_object_object_add(o, "reviews", reviews_json(p->reviews, p->reviews_nr, 1));
	set_int(o, "version", p->version);
	set_int(o, "tester", p->tester);
	set_int(o, "codev", p->codev);
	set_int(o, "extras", p->extras);
	set_int(o, "event_day", p->event_day);
	return o;
}

static json_object *tree_json(const struct sim_tree *t)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();
	size_t i;

	set_str(o, "name", t->name);
	set_str(o, "base", t->base.hex);
	set_str(o, "tip", t->tip.hex);
	for (i = 0; i < t->nr; i++)
		json_object_array_add(a, json_object_new_int(t->patches[i]->id));
	json_object_object_add(o, "patches", a);
	return o;
}

static json_object *state_json(struct sim_world *w)
{
	json_object *o = json_object_new_object(), *a;
	char rng[32];
	size_t i;

	set_int(o, "version", 1);
	json_object_object_add(o, "seed", json_object_new_uint64(w->seed));
	snprintf(rng, sizeof(rng), "%016" PRIx64, w->rng);
	set_str(o, "rng", rng);
	snprintf(rng, sizeof(rng), "%016" PRIx64, w->jrng);
	set_str(o, "jrng", rng);
	set_int(o, "trees", w->ntrees);
	set_int(o, "files", w->nfiles);
	if (w->matrix)  /* absent otherwise: worlds without a matrix stay as they were */
		set_int(o, "matrix", 1);
	set_int(o, "day", w->day);
	set_int(o, "seq", w->seq);
	set_str(o, "mainline", w->mainline.hex);
	a = json_object_new_array();
	for (i = 0; i < SIM_KINDS; i++)
		json_object_array_add(a, json_object_new_int(w->covered[i]));
	json_object_object_add(o, "covered", a);
	a = json_object_new_array();
	for (i = 0; i < w->subs_nr; i++) {
		json_object *s = json_object_new_object();

		json_object_object_add(s, "extras", strvec_json(&w->subs[i].extras));
		set_int(s, "api_used", w->subs[i].api_used);
		set_int(s, "api_rename", w->subs[i].api_rename);
		json_object_array_add(a, s);
	}
	json_object_object_add(o, "subs", a);
	a = json_object_new_array();
	for (i = 0; i < w->trees_nr; i++)
		json_object_array_add(a, tree_json(&w->trees[i]));
	json_object_object_add(o, "branches", a);
	a = json_object_new_array();
	for (i = 0; i < w->patches_nr; i++)
		json_object_array_add(a, patch_json(w->patches[i]));
	json_object_object_add(o, "patches", a);
	a = json_object_new_array();
	for (i = 0; i < w->defects_nr; i++) {
		const struct sim_defect *d = &w->defects[i];
		json_object *x = json_object_new_object();

		set_int(x, "id", d->id);
		set_int(x, "day", d->day);
		set_int(x, "kind", d->kind);
		set_int(x, "culprit", d->culprit);
		set_int(x, "partner", d->partner);
		set_str(x, "patch_id", NB_PATCHID_HEX(&d->patch_id));
		set_str(x, "partner_patch_id", NB_PATCHID_HEX(&d->partner_patch_id));
		set_str(x, "trees", d->trees);
		set_str(x, "maintainers", d->maintainers);
		if (w->matrix)
			set_int(x, "archs", d->archs);
		json_object_array_add(a, x);
	}
	json_object_object_add(o, "defects", a);
	a = json_object_new_array();
	for (i = 0; i < w->journeys_nr; i++)
		json_object_array_add(a, journey_json(&w->journeys[i]));
	json_object_object_add(o, "journeys", a);
	return o;
}

int sim_write_json(const char *dir, const char *name, json_object *o, int pretty)
{
	char *path = xstrfmt("%s/%s", dir, name);
	const char *text = json_object_to_json_string_ext(
		o, (pretty ? JSON_C_TO_STRING_PRETTY : JSON_C_TO_STRING_PLAIN) |
			   JSON_C_TO_STRING_NOSLASHESCAPE);
	struct strbuf sb = STRBUF_INIT;
	int error;

	strbuf_addstr(&sb, text);
	strbuf_addch(&sb, '\n');
	error = file_write_atomic(path, sb.buf, sb.len);
	strbuf_release(&sb);
	free(path);
	return error;
}

int sim_state_save(struct sim_world *w)
{
	json_object *o = state_json(w);
	int error = sim_write_json(w->dir, "sim-state.json", o, 0);

	json_object_put(o);
	return error;
}

/* ---- truth.json ---- */

static void branches(json_object *a, struct sim_world *w, const struct sim_patch *p)
{
	int kind = w->trees[p->tree].kind, t;

	if (p->state != SIM_LIVE)
		return;
	if (kind == SIM_OTHER) {
		json_object_array_add(a, json_object_new_string(w->trees[p->tree].branch));
		return;
	}
	for (t = kind; t <= SIM_MM_UNSTABLE; t++)
		json_object_array_add(a, json_object_new_string(w->trees[t].branch));
}

/*
 * The cells a defect breaks, as nextbot names them: "build[ARCH=arm64]" for a build
 * or semantic defect, "test[ARCH=…]" for a test or flaky one (the test runs in every
 * cell); none for a conflict.
 */
static json_object *cells_json(const struct sim_defect *d)
{
	json_object *a = json_object_new_array();
	const char *cmd = d->kind == SIM_TEST || d->kind == SIM_FLAKY ? "test" : "build";
	int i;

	for (i = 0; i < SIM_ARCHS; i++)
		if (d->archs & (1 << i)) {
			char *name = xstrfmt("%s[ARCH=%s]", cmd, sim_arch[i]);

			json_object_array_add(a, json_object_new_string(name));
			free(name);
		}
	return a;
}

/* d->maintainers ("a,b,c", set by sim_defect_recipients()) as a list. */
static json_object *recipients_json(const struct sim_defect *d)
{
	json_object *a = json_object_new_array();
	const char *p = d->maintainers ? d->maintainers : "", *comma;

	for (; *p; p = *comma ? comma + 1 : comma) {
		comma = strchrnul(p, ',');
		json_object_array_add(a, json_object_new_string_len(p, (int)(comma - p)));
	}
	return a;
}

static json_object *defect_json(struct sim_world *w, const struct sim_defect *d)
{
	struct sim_patch *c = sim_patch_by_id(w, d->culprit);
	struct sim_patch *p = d->partner >= 0 ? sim_patch_by_id(w, d->partner) : NULL;
	json_object *o = json_object_new_object(), *a = json_object_new_array();
	const struct sim_person *who = &sim_submitters[c->author];
	char *author = xstrfmt("%s <%s>", who->name, who->email);
	const char *s, *comma;

	set_int(o, "id", d->id);
	set_int(o, "day", d->day);
	set_str(o, "kind", sim_kind_name(d->kind));
	for (s = d->trees ? d->trees : ""; *s; s = *comma ? comma + 1 : comma) {
		comma = strchrnul(s, ',');
		json_object_array_add(a, json_object_new_string_len(s, (int)(comma - s)));
	}
	json_object_object_add(o, "trees", a);
	a = json_object_new_array();
	branches(a, w, c);
	json_object_object_add(o, "branches", a);
	set_str(o, "subject", c->subject);
	set_str(o, "patch_id", NB_PATCHID_HEX(&d->patch_id));
	set_str(o, "message_id", c->msgid);
	set_str(o, "author", author);
	if (p) {
		json_object *x = json_object_new_object();

		set_str(x, "subject", p->subject);
		set_str(x, "patch_id", NB_PATCHID_HEX(&d->partner_patch_id));
		set_str(x, "message_id", p->msgid);
		json_object_object_add(o, "partner", x);
	} else {
		json_object_object_add(o, "partner", NULL);
	}
	json_object_object_add(o, "dropped", json_object_new_boolean(c->state == SIM_DROPPED));
	json_object_object_add(o, "maintainers", recipients_json(d));
	if (w->matrix)
		json_object_object_add(o, "cells", cells_json(d));
	free(author);
	return o;
}

/* {absent: [emails], orphans: [section names]} of the mainline's MAINTAINERS. */
static json_object *maintainers_json(struct sim_world *w)
{
	struct strvec absent = STRVEC_INIT, orphans = STRVEC_INIT;
	json_object *o = json_object_new_object();

	sim_maintainers_absent(&absent, w);
	sim_maintainers_orphans(&orphans, w);
	json_object_object_add(o, "absent", strvec_json(&absent));
	json_object_object_add(o, "orphans", strvec_json(&orphans));
	strvec_clear(&absent);
	strvec_clear(&orphans);
	return o;
}

static const char *const event_names[] = { "added", "moved", "replaced", "removed", "merged" };
static const char *const review_trailers[] = { "Reviewed-by", "Acked-by" };

static json_object *person_json(int who)
{
	json_object *o = json_object_new_object();

	set_str(o, "name", sim_submitters[who].name);
	set_str(o, "email", sim_submitters[who].email);
	return o;
}

/* A journey as truth.json has it: branch names, people by name and address. */
static json_object *journey_truth(struct sim_world *w, const struct sim_journey *j)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array(), *x;
	const struct sim_version *last = &j->versions[j->versions_nr - 1];
	size_t i;

	set_int(o, "id", j->id);
	set_str(o, "patch_id", NB_PATCHID_HEX(&last->patch_id));
	set_str(o, "message_id", last->msgid);
	set_str(o, "subject", j->subject);
	json_object_object_add(o, "author", person_json(j->author));
	for (i = 0; i < j->versions_nr; i++) {
		x = json_object_new_object();
		set_str(x, "patch_id", NB_PATCHID_HEX(&j->versions[i].patch_id));
		set_int(x, "day", j->versions[i].day);
		set_str(x, "message_id", j->versions[i].msgid);
		json_object_array_add(a, x);
	}
	json_object_object_add(o, "versions", a);
	a = json_object_new_array();
	for (i = 0; i < j->events_nr; i++) {
		const struct sim_event_rec *e = &j->events[i];

		x = json_object_new_object();
		set_int(x, "day", e->day);
		set_str(x, "event", event_names[e->event]);
		set_str(x, "branch", w->trees[e->tree].branch);
		set_str(x, "from", e->from >= 0 ? w->trees[e->from].branch : NULL);
		json_object_array_add(a, x);
	}
	json_object_object_add(o, "events", a);
	a = json_object_new_array();
	for (i = 0; i < j->reviews_nr; i++) {
		x = person_json(j->reviews[i].who);
		set_str(x, "trailer", review_trailers[j->reviews[i].kind]);
		json_object_array_add(a, x);
	}
	json_object_object_add(o, "reviews", a);
	return o;
}

int sim_truth_save(struct sim_world *w)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();
	size_t i;
	int error;

	json_object_object_add(o, "seed", json_object_new_uint64(w->seed));
	set_int(o, "days", w->day);
	if (w->matrix) {
		json_object *m = json_object_new_object(), *v = json_object_new_array();
		int k;

		for (k = 0; k < SIM_ARCHS; k++)
			json_object_array_add(v, json_object_new_string(sim_arch[k]));
		json_object_object_add(m, "ARCH", v);
		json_object_object_add(o, "matrix", m);
	}
	for (i = 0; i < w->defects_nr; i++)
		json_object_array_add(a, defect_json(w, &w->defects[i]));
	json_object_object_add(o, "defects", a);
	json_object_object_add(o, "maintainers", maintainers_json(w));
	a = json_object_new_array();
	for (i = 0; i < w->journeys_nr; i++)
		if (w->journeys[i].versions_nr)
			json_object_array_add(a, journey_truth(w, &w->journeys[i]));
	json_object_object_add(o, "patches", a);
	error = sim_write_json(w->dir, "truth.json", o, 1);
	json_object_put(o);
	return error;
}

/* ---- nextbot.yaml ---- */

void sim_yaml_str(struct strbuf *sb, const char *s)
{
	strbuf_addch(sb, '"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			strbuf_addch(sb, '\\');
		strbuf_addch(sb, *s);
	}
	strbuf_addch(sb, '"');
}

static void yaml_tree(struct strbuf *sb, struct sim_world *w, const struct sim_tree *t)
{
	struct sim_person m = sim_maintainer(t->maintainer);
	struct strbuf tmp = STRBUF_INIT;

	strbuf_addf(sb, "  - name: %s\n    url: ", t->name);
	strbuf_addf(&tmp, "./remotes/%s.git", t->repo);
	sim_yaml_str(sb, tmp.buf);
	strbuf_addf(sb, "\n    branch: %s\n    contacts: [", t->branch);
	strbuf_reset(&tmp);
	strbuf_addf(&tmp, "%s <%s>", m.name, m.email);
	sim_yaml_str(sb, tmp.buf);
	strbuf_addstr(sb, ", ");
	strbuf_reset(&tmp);
	strbuf_addf(&tmp, "linux-%s@lists.example.org", w->subs[t->sub].ident);
	sim_yaml_str(sb, tmp.buf);
	strbuf_addstr(sb, "]\n");
	strbuf_release(&tmp);
}

int sim_config_save(struct sim_world *w)
{
	struct strbuf sb = STRBUF_INIT, url = STRBUF_INIT;
	char *path = xstrfmt("%s/nextbot.yaml", w->dir);
	size_t i;
	int error;

	strbuf_addf(&sb, "# A simulated world made by `nextbot sim init` (seed %" PRIu64 ").\n"
			 "# `nextbot sim advance %s` plays a day; `nextbot -c %s run` a night.\n",
		    w->seed, w->dir, path);
	strbuf_addstr(&sb, "workdir: state\nbase: {name: origin, url: ");
	strbuf_addstr(&url, "./remotes/mainline.git");
	sim_yaml_str(&sb, url.buf);
	strbuf_addstr(&sb, ", branch: master}\ntrees:\n");
	for (i = 1; i < w->trees_nr; i++)
		if (w->trees[i].kind != SIM_MM_UNSTABLE)
			yaml_tree(&sb, w, &w->trees[i]);
	strbuf_addstr(&sb, "never_merge: [mm-unstable]\n"
			   "# fetched every night, never merged: patches start out there\n"
			   "watch:\n");
	yaml_tree(&sb, w, &w->trees[3]);
	if (w->matrix)
		strbuf_addstr(&sb, "# every cell builds and tests its own configuration\n"
				   "build:\n"
				   "  - {name: build, command: 'make ARCH=$ARCH', timeout: 120,\n"
				   "     matrix: {ARCH: [x86_64, arm64, riscv]}}\n"
				   "test:\n  - {name: test, command: 'make test ARCH=$ARCH', "
				   "timeout: 120}\n");
	else
		strbuf_addstr(&sb, "build:\n  - {name: build, command: make, timeout: 120}\n"
				   "test:\n  - {name: test, command: make test, timeout: 120}\n");
	strbuf_addstr(&sb, "# the simulated flaky tests fail about one run in four: three\n"
			   "# confirmations make blaming one as a culprit a 1-in-300 event\n"
			   "bisect: {confirm: 3}\n"
			   "notify:\n  from: \"nextbot <nextbot@example.org>\"\n"
			   "  list: \"linux-next@lists.example.org\"\n");
	if (w->cache)
		strbuf_addstr(&sb, "# every probe of a search builds a clean tree: the compiler\n"
				   "# cache makes that little more than preprocessing\n"
				   "runner: {cache: {max: 5G}}\n");
	error = file_write_atomic(path, sb.buf, sb.len);
	strbuf_release(&sb);
	strbuf_release(&url);
	free(path);
	return error;
}

/* ---- reading sim-state.json back ---- */

static json_object *json_member(json_object *o, const char *key)
{
	json_object *v = NULL;

	json_object_object_get_ex(o, key, &v);
	return v;
}

static int get_int(json_object *o, const char *key)
{
	return json_object_get_int(json_member(o, key));
}

static char *dup(json_object *o, const char *key)
{
	json_object *v = json_member(o, key);

	return v && json_object_is_type(v, json_type_string) ?
		       xstrdup(json_object_get_string(v)) : NULL;
}

static void hex(char out[NB_OID_HEXSZ + 1], json_object *o, const char *key)
{
	const char *s = json_object_get_string(json_member(o, key));

	snprintf(out, NB_OID_HEXSZ + 1, "%s", s ? s : "");
}

static void patchid(struct nb_patchid *out, json_object *o, const char *key)
{
	if (nb_patchid_parse(out, json_object_get_string(json_member(o, key))) < 0)
		nb_error_clear();
}

static void strvec_load(struct strvec *sv, json_object *a)
{
	size_t i, n = json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;

	*sv = (struct strvec)STRVEC_INIT;
	for (i = 0; i < n; i++)
		strvec_push(sv, json_object_get_string(json_object_array_get_idx(a, i)));
}

/* An int field, or `dflt` when absent (states written before the field was). */
static int get_int_or(json_object *o, const char *key, int dflt)
{
	json_object *v = json_member(o, key);

	return v ? json_object_get_int(v) : dflt;
}

static void reviews_load(struct sim_review **r, size_t *nr, size_t *alloc, json_object *a)
{
	size_t i, n = json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;

	for (i = 0; i < n; i++) {
		json_object *x = json_object_array_get_idx(a, i);
		int who = json_object_get_int(json_object_array_get_idx(x, 0));

		if (who < 0 || (size_t)who >= sim_submitters_nr)
			continue;
		ALLOC_GROW(*r, *nr + 1, *alloc);
		(*r)[(*nr)++] = (struct sim_review){
			.who = who,
			.kind = json_object_get_int(json_object_array_get_idx(x, 1)) ? 1 : 0,
			.day = json_object_get_int(json_object_array_get_idx(x, 2)),
		};
	}
}

static int journey_load(struct sim_journey *j, json_object *o, int trees_nr)
{
	json_object *a = json_member(o, "versions");
	size_t i, n = json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;

	memset(j, 0, sizeof(*j));
	j->id = get_int(o, "id");
	j->author = get_int(o, "author");
	j->subject = dup(o, "subject");
	for (i = 0; i < n; i++) {
		json_object *x = json_object_array_get_idx(a, i);
		const char *id = json_object_get_string(json_object_array_get_idx(x, 0));

		ALLOC_GROW(j->versions, j->versions_nr + 1, j->versions_alloc);
		j->versions[j->versions_nr] = (struct sim_version){
			.day = json_object_get_int(json_object_array_get_idx(x, 1)),
			.msgid = xstrdup(json_object_get_string(json_object_array_get_idx(x, 2))),
		};
		if (id && *id)
			nb_patchid_parse(&j->versions[j->versions_nr].patch_id, id);
		j->versions_nr++;
	}
	a = json_member(o, "events");
	n = json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
	for (i = 0; i < n; i++) {
		json_object *x = json_object_array_get_idx(a, i);

		struct sim_event_rec *e;

		ALLOC_GROW(j->events, j->events_nr + 1, j->events_alloc);
		e = &j->events[j->events_nr++];
		*e = (struct sim_event_rec){
			.day = json_object_get_int(json_object_array_get_idx(x, 0)),
			.event = json_object_get_int(json_object_array_get_idx(x, 1)),
			.tree = json_object_get_int(json_object_array_get_idx(x, 2)),
			.from = json_object_get_int(json_object_array_get_idx(x, 3)),
		};
		if (e->tree < 0 || e->tree >= trees_nr || e->from < -1 || e->from >= trees_nr ||
		    e->event < 0 || e->event > SIM_EV_MERGED)
			return -1;
	}
	reviews_load(&j->reviews, &j->reviews_nr, &j->reviews_alloc, json_member(o, "reviews"));
	if (!j->subject || (size_t)j->author >= sim_submitters_nr || !j->versions_nr)
		return -1;
	return 0;
}

static struct sim_patch *patch_load(json_object *o)
{
	struct sim_patch *p = xcalloc(1, sizeof(*p));
	json_object *ops = json_member(o, "ops");
	size_t i, n = json_object_is_type(ops, json_type_array) ? json_object_array_length(ops) : 0;

	p->id = get_int(o, "id");
	p->tree = get_int(o, "tree");
	p->sub = get_int(o, "sub");
	p->day = get_int(o, "day");
	p->review_day = get_int(o, "review_day");
	p->drop_day = get_int(o, "drop_day");
	p->commit_day = get_int(o, "commit_day");
	p->author = get_int(o, "author");
	p->state = get_int(o, "state");
	p->defect = get_int(o, "defect");
	p->fate = get_int(o, "fate");
	p->subject = dup(o, "subject");
	p->body = dup(o, "body");
	p->msgid = dup(o, "msgid");
	hex(p->commit.hex, o, "commit");
	p->ops = xcalloc(n ? n : 1, sizeof(*p->ops));
	p->ops_alloc = n ? n : 1;
	for (i = 0; i < n; i++) {
		json_object *op = json_object_array_get_idx(ops, i);
		json_object *old = json_object_array_get_idx(op, 1);

		p->ops[i].path = xstrdup(json_object_get_string(json_object_array_get_idx(op, 0)));
		p->ops[i].old_text = old ? xstrdup(json_object_get_string(old)) : NULL;
		p->ops[i].new_text =
			xstrdup(json_object_get_string(json_object_array_get_idx(op, 2)));
	}
	p->ops_nr = n;
	strvec_load(&p->locks, json_member(o, "locks"));
	strvec_load(&p->new_files, json_member(o, "new_files"));
	reviews_load(&p->reviews, &p->reviews_nr, &p->reviews_alloc, json_member(o, "reviews"));
	p->version = get_int_or(o, "version", 1);
	p->tester = get_int_or(o, "tester", -1);
	p->codev = get_int_or(o, "codev", -1);
	p->extras = get_int(o, "extras");
	p->event_day = get_int(o, "event_day");
	if (p->tester < -1 || p->tester >= (int)sim_submitters_nr || p->codev < -1 ||
	    p->codev >= (int)sim_submitters_nr)
		p->tester = p->codev = -1;
	if (!p->subject || !p->body || !p->msgid || (size_t)p->author >= sim_submitters_nr) {
		sim_patch_free(p);
		return NULL;
	}
	return p;
}

static int trees_load(struct sim_world *w, json_object *a)
{
	size_t i, j, n;

	if (!json_object_is_type(a, json_type_array) || json_object_array_length(a) != w->trees_nr)
		return -1;
	for (i = 0; i < w->trees_nr; i++) {
		struct sim_tree *t = &w->trees[i];
		json_object *o = json_object_array_get_idx(a, i), *ids = json_member(o, "patches");

		hex(t->base.hex, o, "base");
		hex(t->tip.hex, o, "tip");
		n = json_object_is_type(ids, json_type_array) ? json_object_array_length(ids) : 0;
		for (j = 0; j < n; j++) {
			struct sim_patch *p = sim_patch_by_id(
				w, json_object_get_int(json_object_array_get_idx(ids, j)));

			if (!p)
				return -1;
			ALLOC_GROW(t->patches, t->nr + 1, t->alloc);
			t->patches[t->nr++] = p;
		}
	}
	return 0;
}

static int world_load(struct sim_world *w, json_object *o)
{
	json_object *a;
	size_t i, n;

	if (get_int(o, "version") != 1)
		return -1;
	w->seed = json_object_get_uint64(json_member(o, "seed"));
	w->rng = strtoull(json_object_get_string(json_member(o, "rng")), NULL, 16);
	w->jrng = json_member(o, "jrng")
			  ? strtoull(json_object_get_string(json_member(o, "jrng")), NULL, 16)
			  : sim_journey_seed(w->seed);
	w->ntrees = get_int(o, "trees");
	w->nfiles = get_int(o, "files");
	w->matrix = get_int(o, "matrix");
	w->day = get_int(o, "day");
	w->seq = get_int(o, "seq");
	hex(w->mainline.hex, o, "mainline");
	if (w->ntrees < 0 || w->ntrees > 1000)
		return -1;
	a = json_member(o, "covered");
	for (i = 0; i < SIM_KINDS; i++)
		w->covered[i] = json_object_get_int(json_object_array_get_idx(a, i));
	sim_subs_build(w);
	a = json_member(o, "subs");
	if (!json_object_is_type(a, json_type_array) || json_object_array_length(a) != w->subs_nr)
		return -1;
	for (i = 0; i < w->subs_nr; i++) {
		json_object *s = json_object_array_get_idx(a, i);

		strvec_load(&w->subs[i].extras, json_member(s, "extras"));
		w->subs[i].api_used = get_int(s, "api_used");
		w->subs[i].api_rename = get_int(s, "api_rename");
	}
	a = json_member(o, "patches");
	n = json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
	for (i = 0; i < n; i++) {
		struct sim_patch *p = patch_load(json_object_array_get_idx(a, i));

		if (!p)
			return -1;
		ALLOC_GROW(w->patches, w->patches_nr + 1, w->patches_alloc);
		w->patches[w->patches_nr++] = p;
	}
	a = json_member(o, "defects");
	n = json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
	for (i = 0; i < n; i++) {
		json_object *x = json_object_array_get_idx(a, i);
		struct sim_defect *d;

		ALLOC_GROW(w->defects, w->defects_nr + 1, w->defects_alloc);
		d = &w->defects[w->defects_nr++];
		memset(d, 0, sizeof(*d));
		d->id = get_int(x, "id");
		d->day = get_int(x, "day");
		d->kind = get_int(x, "kind");
		d->culprit = get_int(x, "culprit");
		d->partner = get_int(x, "partner");
		patchid(&d->patch_id, x, "patch_id");
		patchid(&d->partner_patch_id, x, "partner_patch_id");
		d->trees = dup(x, "trees");
		d->maintainers = dup(x, "maintainers");
		d->archs = get_int(x, "archs");
		if (!sim_patch_by_id(w, d->culprit))
			return -1;
	}
	a = json_member(o, "journeys");
	n = json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
	for (i = 0; i < n; i++) {
		ALLOC_GROW(w->journeys, w->journeys_nr + 1, w->journeys_alloc);
		if (journey_load(&w->journeys[w->journeys_nr++], json_object_array_get_idx(a, i),
				 4 + w->ntrees))
			return -1;
	}
	return 0;
}

int sim_state_load(struct sim_world *w, const char *dir)
{
	char *path = xstrfmt("%s/sim-state.json", dir), *store = NULL;
	json_object *o = NULL;
	int error = 0;

	if (!file_exists(path)) {
		error = nb_error_set(NB_ENOTFOUND, "sim: %s holds no world (no sim-state.json)",
				     dir);
		goto done;
	}
	w->dir = realpath(dir, NULL);
	o = json_object_from_file(path);
	if (!w->dir || !o || world_load(w, o) < 0) {
		error = nb_error_set(NB_EINVALID, "sim: %s: not a valid simulator state", path);
		goto done;
	}
	sim_trees_build(w);
	if (trees_load(w, json_member(o, "branches")) < 0) {
		error = nb_error_set(NB_EINVALID, "sim: %s: branches do not match", path);
		goto done;
	}
	store = xstrfmt("%s/sim/store.git", w->dir);
	if (git_repository_open_bare(&w->store, store) < 0)
		error = merge_git_fail("%s", store);
done:
	json_object_put(o);
	free(path);
	free(store);
	return error;
}
