/* The audit of MAINTAINERS as `nextbot maintainers` prints it: text, or JSON. */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bot/people/people.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define DAY 86400LL

static void format_ymd(char out[16], long long t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(out, 16, "%Y-%m-%d", &tm);
}

static json_object *json_clean_string(const char *s)
{
	char *clean = utf8_clean_dup(s);
	json_object *o = clean ? json_object_new_string(clean) : NULL;

	free(clean);
	return o;
}

static json_object *person_json(const struct people_audit *a,
				const struct people_audit_person *pe)
{
	json_object *o = json_object_new_object();
	char d[16];

	json_object_object_add(o, "role", json_object_new_string(people_role_name(pe->role)));
	json_object_object_add(o, "name", json_clean_string(pe->name));
	json_object_object_add(o, "email", json_clean_string(pe->email));
	if (pe->last) {
		format_ymd(d, pe->last);
		json_object_object_add(o, "last_active", json_object_new_string(d));
		json_object_object_add(o, "absent_days",
				       json_object_new_int64((a->now - pe->last) / DAY));
	} else {
		json_object_object_add(o, "last_active", NULL);
		json_object_object_add(o, "absent_days", NULL);
	}
	json_object_object_add(o, "absent", json_object_new_boolean(pe->absent));
	return o;
}

static json_object *section_json(const struct people_audit *a,
				 const struct people_audit_section *s)
{
	json_object *o = json_object_new_object(), *v = json_object_new_array();
	size_t k;
	int f;

	json_object_object_add(o, "name", json_clean_string(s->name));
	json_object_object_add(o, "status", json_object_new_string(people_status_name(s->status)));
	json_object_object_add(o, "files_matched",
			       json_object_new_int64((int64_t)s->files_matched));
	for (k = 0; k < s->people_nr; k++)
		json_object_array_add(v, person_json(a, &s->people[k]));
	json_object_object_add(o, "people", v);
	v = json_object_new_array();
	for (f = 0; f < PEOPLE_FINDINGS; f++)
		if (s->findings & (1u << f)) {
			const char *name = people_finding_name((enum people_finding)f);

			json_object_array_add(v, json_object_new_string(name));
		}
	json_object_object_add(o, "findings", v);
	return o;
}

static json_object *strings(const struct strvec *v)
{
	json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; v && i < v->nr; i++)
		json_object_array_add(a, json_clean_string(v->v[i]));
	return a;
}

static void show_json(struct strbuf *out, const struct people_audit *a,
		      const struct strvec *problems)
{
	json_object *o = json_object_new_object(), *v = json_object_new_array();
	struct strvec absent = STRVEC_INIT;
	char d[16];
	size_t i;

	format_ymd(d, a->now);
	json_object_object_add(o, "as_of", json_object_new_string(d));
	format_ymd(d, a->since);
	json_object_object_add(o, "since", json_object_new_string(d));
	json_object_object_add(o, "absent_days_limit", json_object_new_int(a->absent_days));
	json_object_object_add(o, "commits", json_object_new_int64((int64_t)a->commits));
	for (i = 0; i < a->sections_nr; i++)
		json_object_array_add(v, section_json(a, &a->sections[i]));
	json_object_object_add(o, "sections", v);
	people_audit_absent(&absent, a);
	json_object_object_add(o, "absent", strings(&absent));
	json_object_object_add(o, "problems", strings(problems));
	strbuf_addstr(out, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
							       JSON_C_TO_STRING_NOSLASHESCAPE));
	strbuf_addch(out, '\n');
	json_object_put(o);
	strvec_clear(&absent);
}

static void person_text(struct strbuf *out, const struct people_audit *a,
			const struct people_audit_person *pe)
{
	char d[16];
	char *name = utf8_clean_dup(pe->name ? pe->name : ""), *email = utf8_clean_dup(pe->email);

	strbuf_addf(out, "  %s: %s%s<%s>  ", people_role_name(pe->role), name, *name ? " " : "",
		    email);
	if (pe->last) {
		format_ymd(d, pe->last);
		strbuf_addf(out, "last active %s (%lld day%s)", d, (a->now - pe->last) / DAY,
			    (a->now - pe->last) / DAY == 1 ? "" : "s");
	} else {
		format_ymd(d, a->since);
		strbuf_addf(out, "not since %s", d);
	}
	strbuf_addstr(out, pe->absent ? "  ABSENT\n" : "\n");
	free(name);
	free(email);
}

static void section_text(struct strbuf *out, const struct people_audit *a,
			 const struct people_audit_section *s)
{
	char *name = utf8_clean_dup(s->name);
	size_t k;
	int f, first = 1;

	strbuf_addf(out, "%s (%s, %zu file%s)\n", name, people_status_name(s->status),
		    s->files_matched, s->files_matched == 1 ? "" : "s");
	for (k = 0; k < s->people_nr; k++)
		person_text(out, a, &s->people[k]);
	for (f = 0; f < PEOPLE_FINDINGS; f++)
		if (s->findings & (1u << f)) {
			strbuf_addf(out, "%s%s", first ? "  findings: " : ", ",
				    people_finding_name((enum people_finding)f));
			first = 0;
		}
	strbuf_addstr(out, first ? "\n" : "\n\n");
	free(name);
}

static int worth_showing(const struct people_audit_section *s)
{
	size_t k;

	for (k = 0; k < s->people_nr; k++)
		if (s->people[k].absent)
			return 1;
	return s->findings != 0;
}

static void show_text(struct strbuf *out, const struct people_audit *a,
		      const struct strvec *problems)
{
	struct strvec absent = STRVEC_INIT;
	char now[16], since[16];
	size_t i, shown = 0;

	format_ymd(now, a->now);
	format_ymd(since, a->since);
	for (i = 0; problems && i < problems->nr; i++)
		strbuf_addf(out, "%s\n", problems->v[i]);
	if (problems && problems->nr)
		strbuf_addch(out, '\n');
	for (i = 0; i < a->sections_nr; i++)
		if (worth_showing(&a->sections[i])) {
			section_text(out, a, &a->sections[i]);
			shown++;
		}
	people_audit_absent(&absent, a);
	strbuf_addf(out, "%zu of %zu sections need a look; %zu %s absent (not seen in %d days "
		    "before %s); history read from %s (%zu commits)\n",
		    shown, a->sections_nr, absent.nr, absent.nr == 1 ? "person" : "people",
		    a->absent_days, now, since, a->commits);
	strvec_clear(&absent);
}

void people_audit_show(struct strbuf *out, const struct people_audit *a,
		       const struct strvec *problems, int json)
{
	if (json)
		show_json(out, a, problems);
	else
		show_text(out, a, problems);
}
