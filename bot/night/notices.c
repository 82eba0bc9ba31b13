/* Fills notify/'s notice structs from flags and the config. */
#include <stdlib.h>
#include <string.h>

#include "bot/night/night.h"
#include "merge/repo/repo.h"
#include "util/error.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

void notices_init(struct notices *n, const struct config *cfg)
{
	struct notice_settings *s = &n->settings;
	size_t i;

	memset(n, 0, sizeof(*n));
	n->cfg = cfg;
	n->outbox_dir = xstrfmt("%s/outbox", cfg->workdir);
	s->from = cfg->notify.from;
	s->list = cfg->notify.list;
	s->operator = cfg->notify.operator;
	s->private_dir = cfg->workdir;
	s->report_url = cfg->notify.report_url;
	s->outbox_dir = n->outbox_dir;
	s->smtp.url = cfg->notify.smtp.url;
	s->smtp.tls = cfg->notify.smtp.tls == CONFIG_TLS_NONE	   ? NOTICE_TLS_NONE
		      : cfg->notify.smtp.tls == CONFIG_TLS_STARTTLS ? NOTICE_TLS_STARTTLS
								    : NOTICE_TLS_IMPLICIT;
	s->smtp.user = cfg->notify.smtp.user;
	s->smtp.password = config_secret(cfg->notify.smtp.password_env);
	s->smtp.ca_file = cfg->notify.smtp.ca_file;
	n->hooks = xcalloc(cfg->notify.webhooks_nr + 1, sizeof(*n->hooks));
	for (i = 0; i < cfg->notify.webhooks_nr; i++) {
		n->hooks[i].url = cfg->notify.webhooks[i].url;
		n->hooks[i].secret = config_secret(cfg->notify.webhooks[i].secret_env);
		n->hooks[i].format = cfg->notify.webhooks[i].format == CONFIG_HOOK_SLACK
					     ? NOTICE_HOOK_SLACK
					     : NOTICE_HOOK_JSON;
	}
	s->mail_commands = cfg->inbox.configured;
	s->mail_tests = cfg->inbox.max_tests > 0;
	s->webhooks = n->hooks;
	s->webhooks_nr = cfg->notify.webhooks_nr;
	n->sent = (struct strvec)STRVEC_INIT;
	s->sent_ids = &n->sent;
}

void notices_release(struct notices *n)
{
	notices_scratch_clear(n);
	people_free(n->people);
	free(n->hooks);
	free(n->outbox_dir);
	strvec_clear(&n->sent);
	memset(n, 0, sizeof(*n));
}

const struct config_command *notices_command(const struct config *cfg, const char *name)
{
	size_t i;

	for (i = 0; name && i < cfg->build_nr; i++)
		if (!strcmp(cfg->build[i].name, name))
			return &cfg->build[i];
	for (i = 0; name && i < cfg->test_nr; i++)
		if (!strcmp(cfg->test[i].name, name))
			return &cfg->test[i];
	return NULL;
}

const struct config_tree *notices_tree(const struct config *cfg, const char *name)
{
	size_t i;

	for (i = 0; name && i < cfg->trees_nr; i++)
		if (!strcmp(cfg->trees[i].name, name))
			return &cfg->trees[i];
	return NULL;
}

static enum notice_action action(enum flag_action a)
{
	switch (a) {
	case FLAG_REVERTED:
		return NOTICE_ACTION_REVERTED;
	case FLAG_PREVIOUS_VERSION:
		return NOTICE_ACTION_PREVIOUS_VERSION;
	case FLAG_DROPPED_TREE:
		return NOTICE_ACTION_DROPPED_TREE;
	case FLAG_ACTION_UNSET:
	case FLAG_ACTION_NONE:
		break;
	}
	return NOTICE_ACTION_NONE;
}

void notices_scratch_clear(struct notices *n)
{
	strvec_clear(&n->repro);
	free(n->now_commit);
	n->now_commit = NULL;
	people_route_release(&n->route);
	free(n->extras);
	n->extras = NULL;
}

/* The base's MAINTAINERS, read once; its problems logged then. */
static const struct people *people_of(struct notices *n)
{
	char *ref;
	size_t i, nr;

	if (n->people_read || !n->repo || !n->cfg->maintainers.max)
		return n->people;
	n->people_read = 1;
	ref = xstrfmt("refs/feeds/%s", n->cfg->base.name);
	if (people_load_config(&n->people, n->cfg, n->repo, ref) < 0) {
		log_warn("%s: MAINTAINERS routing is off tonight: %s", ref, nb_error_last());
		nb_error_clear();
	}
	nr = n->people ? people_problems(n->people)->nr : 0;
	for (i = 0; i < nr && i < 10; i++)
		log_warn("%s", people_problems(n->people)->v[i]);
	if (nr > 10)
		log_warn("%s: %zu more problems (nextbot maintainers lists them)",
			 n->cfg->maintainers.file, nr - 10);
	free(ref);
	return n->people;
}

/*
 * Routes `paths` (and the files and changed lines of `commits`, when given: their
 * lines are what MAINTAINERS' K: keywords are matched against) through MAINTAINERS into
 * n->route and n->extras (valid until the next notices_scratch_clear()); *out
 * points at them.  Nothing when the tree has no MAINTAINERS.
 */
static size_t route(struct notices *n, const struct notice_extra **out, const char *const *paths,
		    size_t paths_nr, const char *const *commits, size_t commits_nr)
{
	const struct people *p = people_of(n);
	struct people_route_opts o;
	struct people_patch pp = PEOPLE_PATCH_INIT;
	struct nb_oid id;
	size_t i;

	*out = NULL;
	if (!p)
		return 0;
	for (i = 0; i < paths_nr; i++)
		strvec_push(&pp.paths, paths[i]);
	for (i = 0; i < commits_nr; i++)
		if (commits[i] && nb_oid_parse(&id, commits[i]) == 0 &&
		    people_patch_read(&pp, n->repo, &id) < 0)
			nb_error_clear(); /* a commit gone since: its files are unknown */
	people_route_opts_from_config(&o, n->cfg);
	people_route_opts_patch(&o, &pp); /* K: on lines and message; bindings */
	people_route_release(&n->route);
	people_route(&n->route, p, (const char *const *)pp.paths.v, pp.paths.nr, &o);
	free(n->extras);
	n->extras = xcalloc(n->route.nr + 1, sizeof(*n->extras));
	for (i = 0; i < n->route.nr; i++) {
		n->extras[i].spec = n->route.v[i].spec;
		n->extras[i].why = n->route.v[i].why;
	}
	people_patch_release(&pp);
	*out = n->extras;
	return n->route.nr;
}

/*
 * Is the culprit still on its tree's branch?  When not, b->now says so and names
 * the tree's current commit of the same patch (patch-id), if it has one.
 */
static void rebased(struct notice_breakage *b, struct notices *n, const struct flag *f)
{
	struct lookup_patches pool = LOOKUP_PATCHES_INIT;
	struct nb_oid tip, base, commit;
	char *ref;
	size_t i;

	if (!n->repo || !f->tree || !f->commit || nb_oid_parse(&commit, f->commit) < 0)
		return;
	ref = xstrfmt("refs/feeds/%s", f->tree);
	if (repo_ref_get(n->repo, ref, &tip) < 0 ||
	    lookup_contains(n->repo, &tip, &commit) != 0)
		goto done;
	b->now.rebased = 1;
	free(ref);
	ref = xstrfmt("refs/feeds/%s", n->cfg->base.name);
	if (nb_patchid_is_none(&f->patch_id) || repo_ref_get(n->repo, ref, &base) < 0 ||
	    lookup_new_patches(&pool, n->repo, f->tree, tip.hex, base.hex, 0) < 0)
		goto done;
	for (i = 0; i < pool.nr; i++)
		if (nb_patchid_eq(&pool.items[i].patch_id, &f->patch_id)) {
			n->now_commit = xstrdup(pool.items[i].commit.hex);
			b->now.commit = n->now_commit;
			break;
		}
done:
	lookup_patches_release(&pool);
	free(ref);
}

/* A flag's matrix cells as notify/ takes them; `env` holds their env texts. */
static struct notice_cell *cells(const struct flag *f, struct strvec *env, size_t *nr)
{
	struct notice_cell *v = xcalloc(f->cells_nr + 1, sizeof(*v));
	size_t i, j;

	*nr = 0;
	for (i = 0; i < f->cells_nr; i++) {
		struct strbuf sb = STRBUF_INIT;

		if (!f->cells[i].env.nr)
			continue;  /* no matrix: the command says it all */
		for (j = 0; j < f->cells[i].env.nr; j++)
			strbuf_addf(&sb, "%s%s", j ? " " : "", f->cells[i].env.v[j]);
		strvec_push_nodup(env, strbuf_detach(&sb, NULL));
		v[*nr].name = f->cells[i].name;
		v[*nr].first_error = f->cells[i].first_error;
		(*nr)++;
	}
	/* the env strings are in place now that the vector stops growing */
	for (i = j = 0; i < f->cells_nr; i++)
		if (f->cells[i].env.nr) {
			v[j].env = env->v[j];
			j++;
		}
	return v;
}

/*
 * Fills `b` from `f`; the strings stay borrowed from f, cfg, n and `tag`, and b->cells
 * from `env`: free((void *)b->cells) and clear `env` after use.
 */
static void breakage(struct notice_breakage *b, struct notices *n, const struct flag *f,
		     const char *date, char *tag, int reminder, struct strvec *env)
{
	const struct config_tree *t = notices_tree(n->cfg, f->tree);
	const struct config_tree *pt = notices_tree(n->cfg, f->partner_tree);
	const struct config_command *c = notices_command(n->cfg, f->command);

	notices_scratch_clear(n);
	memset(b, 0, sizeof(*b));
	b->kind = flag_kind_name(f->kind);
	b->flag_id = f->id;
	b->reminder = reminder;
	b->date = date;
	b->next_tag = tag;
	b->tree = f->tree;
	if (t) {
		b->contacts = (const char *const *)t->contacts.v;
		b->contacts_nr = t->contacts.nr;
		b->tree_url = t->url;
		b->tree_branch = t->branch;
	}
	b->tree_head = f->tree_head;
	b->commit = f->commit;
	b->commit_date = f->commit_date;
	b->subject = f->subject;
	b->author.name = f->author.name;
	b->author.email = f->author.email;
	b->patch_id = f->patch_id;
	b->message_id = f->message_id;
	b->thread = f->report_thread;
	b->patch_link = f->patch_link;
	b->partner.tree = f->partner_tree;
	b->partner.commit = f->partner_commit;
	b->partner.subject = f->partner_subject;
	b->partner.author.name = f->partner_author.name;
	b->partner.author.email = f->partner_author.email;
	if (pt) {
		b->partner.contacts = (const char *const *)pt->contacts.v;
		b->partner.contacts_nr = pt->contacts.nr;
	}
	b->command_name = f->command;
	b->command_line = c ? c->command : NULL;
	b->compiler = f->compiler;
	b->exit_code = f->exit_code;
	b->timed_out = f->timed_out;
	b->excerpt = f->excerpt;
	b->bisect_steps = f->steps;
	b->culprit_fails = f->culprit_fails;
	b->parent_passes = f->parent_passes;
	b->revert_passes = f->revert_passes;
	b->bisect_log = (const char *const *)f->log.v;
	b->bisect_log_nr = f->log.nr;
	repro_render(&n->repro, n->cfg, f);
	b->reproduce = (const char *const *)n->repro.v;
	b->reproduce_nr = n->repro.nr;
	b->action = action(f->action);
	b->failing = f->failing;
	b->total = f->total;
	rebased(b, n, f);
	b->cells = cells(f, env, &b->cells_nr);
	if (f->fix_subject && !f->fix_commit) {
		b->fix_subject = f->fix_subject;
		b->fix_by = f->fix_by;
		b->fix_date = f->fix_date;
	}
	/* the files in question: the culprit's (and the partner's); none for flaky */
	if (f->kind != FLAG_FLAKY) {
		const char *commits[2] = { f->commit, f->partner_commit };

		b->maintainers_nr = route(n, &b->maintainers, NULL, 0, commits,
					  f->partner_tree ? 2 : 1);
	}
}

/* Keeps the Message-IDs the last queue call reported, when there is a state to keep them. */
static int record(struct notices *n, int ret, const char *kind, const char *flag_id,
		  const char *conflict)
{
	size_t i;

	for (i = 0; ret >= 0 && n->st && i < n->sent.nr; i++)
		state_sent_add(n->st, n->sent.v[i], kind, flag_id, conflict);
	strvec_clear(&n->sent);
	return ret;
}

/* Forgets what earlier queue calls reported (those nobody records: the summary, …). */
static void begin(struct notices *n)
{
	strvec_clear(&n->sent);
}

int notices_conflict(struct notices *n, const struct notice_conflict *c)
{
	char *what = xstrfmt("%s %s %s", c->date, c->tree, c->other);
	struct notice_conflict routed = *c;
	int ret;

	/* the files in question: the conflicted paths */
	notices_scratch_clear(n);
	routed.maintainers_nr = route(n, &routed.maintainers, c->paths, c->paths_nr, NULL, 0);
	begin(n);
	ret = record(n, notice_queue_conflict(&n->settings, &routed), "merge-conflict", NULL,
		     what);
	notices_scratch_clear(n);

	free(what);
	return ret;
}

int notices_reply(struct notices *n, const struct notice_reply *r, const char *flag_id)
{
	begin(n);
	return record(n, notice_queue_reply(&n->settings, r), "reply", flag_id, NULL);
}

/* "next-YYYYMMDD" of a YYYY-MM-DD date; caller frees. */
static char *next_tag(const char *date)
{
	char *tag = xstrfmt("next-%.4s%.2s%.2s", date, date + 5, date + 8);

	return tag;
}

/* The report (reminder N, or `back`) of flag f tonight. */
static int flag_report(struct notices *n, const struct flag *f, const char *date, int reminder,
		       int back)
{
	struct notice_breakage b;
	struct strvec env = STRVEC_INIT;
	char *tag = next_tag(date), *first = f->notified ? next_tag(f->notified) : NULL;
	int ret;

	breakage(&b, n, f, date, tag, reminder, &env);
	b.back = back;
	b.first_tag = first;
	begin(n);
	ret = record(n, notice_queue_breakage(&n->settings, &b),
		     reminder || back ? "reminder" : "report", f->id, NULL);
	free((void *)b.cells);
	strvec_clear(&env);
	free(tag);
	free(first);
	return ret;
}

int notices_flag_report(struct notices *n, const struct flag *f, const char *date, int reminder)
{
	return flag_report(n, f, date, reminder, 0);
}

int notices_flag_back(struct notices *n, const struct flag *f, const char *date)
{
	return flag_report(n, f, date, 0, 1);
}

int notices_flag_resolved(struct notices *n, const struct flag *f, const char *date,
			  const char *why)
{
	struct notice_breakage b;
	struct strvec env = STRVEC_INIT;
	char *tag = next_tag(date);
	int ret;

	breakage(&b, n, f, date, tag, 0, &env);
	begin(n);
	ret = record(n, notice_queue_resolved(&n->settings, &b, why), "resolved", f->id, NULL);
	free((void *)b.cells);
	strvec_clear(&env);
	free(tag);
	return ret;
}

int notices_flag_dropped(struct notices *n, const struct flag *f, const char *date,
			 const char *reason)
{
	struct notice_breakage b;
	struct strvec env = STRVEC_INIT;
	char *tag = next_tag(date);
	int ret;

	breakage(&b, n, f, date, tag, 0, &env);
	if (!b.kind) {
		/* a drop that answered no flag: the mail names none, and answers the
		   patch's posting, not a report that was never sent */
		b.kind = "dropped";
		b.flag_id = NULL;
	}
	begin(n);
	ret = record(n, notice_queue_dropped(&n->settings, &b, reason), "dropped", f->id, NULL);
	free((void *)b.cells);
	strvec_clear(&env);
	free(tag);
	return ret;
}

/* Queues the flag's report again, keeping only the notice `id` of what it made. */
static int rebuild(struct notices *n, const struct flag *f, const char *id)
{
	struct strvec before = STRVEC_INIT, after = STRVEC_INIT;
	size_t i;
	int ret, found = 0;

	if ((ret = notice_outbox_ids(&before, n->outbox_dir)) < 0)
		goto done;
	ret = notices_flag_report(n, f, f->notified ? f->notified : f->first_seen, 0);
	if (ret < 0 || (ret = notice_outbox_ids(&after, n->outbox_dir)) < 0)
		goto done;
	/* the others it made were sent and pruned long ago: never twice */
	for (i = 0; i < after.nr && ret >= 0; i++) {
		if (strvec_contains(&before, after.v[i]))
			continue;
		if (!strcmp(after.v[i], id))
			found = 1;
		else
			ret = notice_outbox_remove(n->outbox_dir, after.v[i]);
	}
done:
	strvec_clear(&before);
	strvec_clear(&after);
	return ret < 0 ? ret : found;
}

/* A sent notice's kind, as state.json records it: the submitter report or another. */
enum sent_kind { SENT_OTHER, SENT_REPORT };

static enum sent_kind sent_kind_parse(const char *kind)
{
	return kind && !strcmp(kind, "report") ? SENT_REPORT : SENT_OTHER;
}

int notices_outbox_mend(struct notices *n, struct state *st, int no_notify,
			struct strvec *notes)
{
	struct strvec ids = STRVEC_INIT, whys = STRVEC_INIT;
	size_t i;
	int ret = notice_outbox_set_aside(n->outbox_dir, &ids, &whys);

	for (i = 0; ret >= 0 && i < ids.nr; i++) {
		char *msgid = xstrfmt("<nextbot.%s@", ids.v[i]);
		const struct sent_mail *m = NULL;
		struct flag *f = NULL;
		size_t k;
		int ambiguous, rebuilt = 0;

		for (k = 0; k < st->sent_nr && !m; k++)
			if (str_starts_with(st->sent[k].message_id, msgid))
				m = &st->sent[k];
		if (m && m->flag_id && sent_kind_parse(m->kind) == SENT_REPORT)
			f = state_flag_find(st, m->flag_id, &ambiguous);
		if (f && !no_notify && (rebuilt = rebuild(n, f, ids.v[i])) < 0)
			ret = rebuilt;
		strvec_pushf(notes, "outbox: notice %s was damaged (%s); it is kept as "
			     "outbox/damaged/%s.json%s%s%s",
			     ids.v[i], whys.v[i], ids.v[i],
			     rebuilt > 0 ? " and was queued again from flag " : "",
			     rebuilt > 0 ? f->id : "",
			     rebuilt > 0 ? "" : ", not sent: look at it, then remove it");
		free(msgid);
	}
	strvec_clear(&ids);
	strvec_clear(&whys);
	return ret < 0 ? ret : (int)i;
}
