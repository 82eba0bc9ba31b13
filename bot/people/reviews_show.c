/* The review queue as `nextbot reviews` prints it (text or JSON) and the summary lists it. */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "bot/people/people.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "util/banned.h"

static json_object *json_clean_string(const char *s)
{
	char *clean = utf8_clean_dup(s);
	json_object *o = clean ? json_object_new_string(clean) : NULL;

	free(clean);
	return o;
}

static json_object *who(const char *name, const char *email)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "name", json_clean_string(name));
	json_object_object_add(o, "email", json_clean_string(email));
	return o;
}

static json_object *patch_json(const struct people_review_patch *rp)
{
	json_object *o = json_object_new_object(), *v = json_object_new_array(), *b;
	size_t k;

	json_object_object_add(o, "patch_id", nb_patchid_is_none(&rp->patch_id) ? NULL
					      : json_clean_string(NB_PATCHID_HEX(&rp->patch_id)));
	json_object_object_add(o, "commit", json_clean_string(rp->commit.hex));
	json_object_object_add(o, "subject", json_clean_string(rp->subject));
	json_object_object_add(o, "author", who(rp->author_name, rp->author_email));
	json_object_object_add(o, "age_days", json_object_new_int(rp->age_days));
	b = json_object_new_array();
	for (k = 0; k < rp->branches.nr; k++)
		json_object_array_add(b, json_clean_string(rp->branches.v[k]));
	json_object_object_add(o, "branches", b);
	for (k = 0; k < rp->suggested_nr; k++) {
		json_object *s = who(rp->suggested[k].name, rp->suggested[k].email);

		json_object_object_add(s, "why", json_clean_string(rp->suggested[k].why));
		json_object_array_add(v, s);
	}
	json_object_object_add(o, "suggested", v);
	return o;
}

static void show_json(struct strbuf *out, const struct people_reviews *r)
{
	json_object *o = json_object_new_object(), *trees = json_object_new_array();
	json_object *authors = json_object_new_array();
	size_t i, j;

	for (i = 0; i < r->trees_nr; i++) {
		json_object *t = json_object_new_object(), *v = json_object_new_array();

		json_object_object_add(t, "name", json_clean_string(r->trees[i].name));
		for (j = 0; j < r->trees[i].patches_nr; j++)
			json_object_array_add(v, patch_json(&r->trees[i].patches[j]));
		json_object_object_add(t, "patches", v);
		json_object_array_add(trees, t);
	}
	for (i = 0; i < r->authors_nr; i++) {
		json_object *a = who(r->authors[i].name, r->authors[i].email);

		json_object_object_add(a, "waiting", json_object_new_int(r->authors[i].waiting));
		json_object_object_add(a, "oldest_days",
				       json_object_new_int(r->authors[i].oldest_days));
		json_object_array_add(authors, a);
	}
	json_object_object_add(o, "trees", trees);
	json_object_object_add(o, "authors", authors);
	strbuf_addstr(out, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
							       JSON_C_TO_STRING_NOSLASHESCAPE));
	strbuf_addch(out, '\n');
	json_object_put(o);
}

static void add_person(struct strbuf *out, const char *name, const char *email)
{
	char *n = utf8_clean_dup(name ? name : ""), *e = utf8_clean_dup(email);

	strbuf_addf(out, "%s%s<%s>", n, *n ? " " : "", e);
	free(n);
	free(e);
}

static void patch_text(struct strbuf *out, const struct people_review_patch *rp)
{
	char *subject = utf8_clean_dup(rp->subject);
	size_t k;

	strbuf_addf(out, "  %4d day%s  %.12s %s\n            by ", rp->age_days,
		    rp->age_days == 1 ? " " : "s", rp->commit.hex, subject);
	add_person(out, rp->author_name, rp->author_email);
	strbuf_addch(out, '\n');
	if (rp->branches.nr > 1) {
		strbuf_addstr(out, "            also in");
		for (k = 1; k < rp->branches.nr; k++)
			strbuf_addf(out, " %s", rp->branches.v[k]);
		strbuf_addch(out, '\n');
	}
	for (k = 0; k < rp->suggested_nr; k++) {
		char *why = utf8_clean_dup(rp->suggested[k].why);

		strbuf_addstr(out, k ? "            or " : "            ask ");
		add_person(out, rp->suggested[k].name, rp->suggested[k].email);
		strbuf_addf(out, " (%s)\n", why);
		free(why);
	}
	free(subject);
}

static void show_text(struct strbuf *out, const struct people_reviews *r)
{
	size_t i, j;

	for (i = 0; i < r->trees_nr; i++) {
		const struct people_review_tree *t = &r->trees[i];

		strbuf_addf(out, "%s: %zu patch%s without a review\n", t->name, t->patches_nr,
			    t->patches_nr == 1 ? "" : "es");
		for (j = 0; j < t->patches_nr; j++)
			patch_text(out, &t->patches[j]);
		strbuf_addch(out, '\n');
	}
	if (r->authors_nr)
		strbuf_addstr(out, "Waiting, by author:\n");
	for (i = 0; i < r->authors_nr; i++) {
		strbuf_addstr(out, "  ");
		add_person(out, r->authors[i].name, r->authors[i].email);
		strbuf_addf(out, ": %d waiting, the oldest %d day%s\n", r->authors[i].waiting,
			    r->authors[i].oldest_days, r->authors[i].oldest_days == 1 ? "" : "s");
	}
}

void people_reviews_show(struct strbuf *out, const struct people_reviews *r, int json)
{
	if (json)
		show_json(out, r);
	else
		show_text(out, r);
}

void people_reviews_summary(struct strvec *out, const struct people_reviews *r, size_t max)
{
	const struct people_review_patch **all = NULL;
	const char **tree = NULL;
	size_t i, j, n = 0, k, total = 0;

	for (i = 0; i < r->trees_nr; i++)
		total += r->trees[i].patches_nr;
	all = xcalloc(total + 1, sizeof(*all));
	tree = xcalloc(total + 1, sizeof(*tree));
	for (i = 0; i < r->trees_nr; i++)
		for (j = 0; j < r->trees[i].patches_nr; j++) {
			/* insert by age, oldest first */
			for (k = n; k > 0 && all[k - 1]->age_days < r->trees[i].patches[j].age_days;
			     k--) {
				all[k] = all[k - 1];
				tree[k] = tree[k - 1];
			}
			all[k] = &r->trees[i].patches[j];
			tree[k] = r->trees[i].name;
			n++;
		}
	for (i = 0; i < n && i < max; i++) {
		struct strbuf sb = STRBUF_INIT;
		char *subject = utf8_clean_dup(all[i]->subject);

		strbuf_addf(&sb, "%s %.12s (%d days) %s", tree[i], all[i]->commit.hex,
			    all[i]->age_days, subject);
		if (all[i]->suggested_nr) {
			strbuf_addstr(&sb, "; ask ");
			add_person(&sb, all[i]->suggested[0].name, all[i]->suggested[0].email);
		}
		strvec_push_nodup(out, strbuf_detach(&sb, NULL));
		free(subject);
	}
	if (n > max)
		strvec_pushf(out, "and %zu more: nextbot reviews", n - max);
	free(all);
	free(tree);
}
