/* workdir/journeys.txt: the patches' journeys, kept apart from state.json. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bot/journey/journey_int.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/log.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define STORE_MAX_BYTES (512u << 20)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char *const state_names[] = {
	[JOURNEY_IN_TREE] = "in-tree",	 [JOURNEY_IN_NEXT] = "in-next",
	[JOURNEY_HELD] = "held",	 [JOURNEY_MERGED] = "merged",
	[JOURNEY_DROPPED] = "dropped",	 [JOURNEY_GONE] = "removed",
	[JOURNEY_WATCHED] = "watched",	 [JOURNEY_REVERTED] = "reverted-in-next",
};
static const char *const event_names[] = { "added",   "moved", "replaced", "removed",
					   "merged",  "dropped", "held", "released" };

static int name_index(const char *const *names, size_t nr, const char *s)
{
	size_t i;

	for (i = 0; s && i < nr; i++)
		if (!strcmp(names[i], s))
			return (int)i;
	return -1;
}

const char *journey_state_name(enum journey_state s)
{
	return (size_t)s < ARRAY_SIZE(state_names) ? state_names[s] : "in-tree";
}

int journey_state_parse(enum journey_state *out, const char *s)
{
	int i = name_index(state_names, ARRAY_SIZE(state_names), s);

	/* the names of a store written before the states were these */
	if (i < 0 && s && !strcmp(s, "in-review"))
		i = JOURNEY_IN_TREE;
	else if (i < 0 && s && !strcmp(s, "gone"))
		i = JOURNEY_GONE;
	if (i < 0)
		return -1;
	*out = (enum journey_state)i;
	return 0;
}

const char *journey_event_name(enum journey_event_kind k)
{
	return (size_t)k < ARRAY_SIZE(event_names) ? event_names[k] : "?";
}

int journey_event_parse(enum journey_event_kind *out, const char *s)
{
	int i = name_index(event_names, ARRAY_SIZE(event_names), s);

	if (i < 0)
		return -1;
	*out = (enum journey_event_kind)i;
	return 0;
}

/* ---- memory ---- */

void journey_people_free(struct journey_person *p, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		free(p[i].key);
		free(p[i].name);
		free(p[i].email);
	}
	free(p);
}

struct journey_person *journey_people_dup(const struct journey_person *p, size_t nr)
{
	struct journey_person *out = xcalloc(nr ? nr : 1, sizeof(*out));
	size_t i;

	for (i = 0; i < nr; i++) {
		out[i].key = xstrdup(p[i].key);
		out[i].name = xstrdup(p[i].name);
		out[i].email = xstrdup(p[i].email);
	}
	return out;
}

void journey_str_free(const struct journey *j, char *str)
{
	uintptr_t p = (uintptr_t)str;

	if (j->block && p >= (uintptr_t)j->block && p < (uintptr_t)j->block_end)
		return;
	free(str);
}

void journey_people_release(const struct journey *j, struct journey_person *p, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		journey_str_free(j, p[i].key);
		journey_str_free(j, p[i].name);
		journey_str_free(j, p[i].email);
	}
	free(p);
}

void journey_commit_release(struct journey_commit *c)
{
	if (c->borrowed) {
		memset(c, 0, sizeof(*c));
		return;
	}
	free(c->message_id);
	free(c->subject);
	free(c->author_name);
	free(c->author_email);
	free(c->link);
	journey_people_free(c->people, c->people_nr);
	memset(c, 0, sizeof(*c));
}

void journey_release(struct journey *j)
{
	size_t i;

	journey_str_free(j, j->key);
	journey_str_free(j, j->subject);
	journey_str_free(j, j->author_name);
	journey_str_free(j, j->author_email);
	journey_str_free(j, j->family);
	journey_str_free(j, j->tree);
	journey_str_free(j, j->since);
	journey_str_free(j, j->first_seen);
	journey_str_free(j, j->last_seen);
	journey_str_free(j, j->held);
	journey_str_free(j, j->link);
	for (i = 0; i < j->versions_nr; i++) {
		journey_str_free(j, j->versions[i].message_id);
		journey_str_free(j, j->versions[i].first_seen);
		journey_people_release(j, j->versions[i].people, j->versions[i].people_nr);
	}
	free(j->versions);
	for (i = 0; i < j->events_nr; i++) {
		journey_str_free(j, j->events[i].date);
		journey_str_free(j, j->events[i].tree);
		journey_str_free(j, j->events[i].branch);
		journey_str_free(j, j->events[i].from);
		journey_str_free(j, j->events[i].reason);
	}
	free(j->events);
	strvec_clear(&j->told);
	memset(j, 0, sizeof(*j));
}

void journey_store_release(struct journey_store *s)
{
	size_t i;

	free(s->date);
	for (i = 0; i < s->trees_nr; i++) {
		free(s->trees[i].name);
		free(s->trees[i].commits);
	}
	free(s->trees);
	for (i = 0; i < s->patches_nr; i++)
		journey_release(&s->patches[i]);
	free(s->patches);
	free(s->text); /* after the journeys: their strings point into it */
	memset(s, 0, sizeof(*s));
}

struct journey *journey_store_add(struct journey_store *s)
{
	struct journey *j;

	ALLOC_GROW(s->patches, s->patches_nr + 1, s->patches_alloc);
	j = &s->patches[s->patches_nr++];
	memset(j, 0, sizeof(*j));
	j->told = (struct strvec)STRVEC_INIT;
	return j;
}

struct journey_event *journey_event_add(struct journey *j, const char *date,
					enum journey_event_kind kind)
{
	struct journey_event *e;

	JOURNEY_GROW(j->events, j->events_nr + 1, j->events_alloc);
	e = &j->events[j->events_nr++];
	memset(e, 0, sizeof(*e));
	e->date = xstrdup(date);
	e->kind = kind;
	return e;
}

struct journey_tree_seen *journey_tree_seen_find(struct journey_store *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->trees_nr; i++)
		if (!strcmp(s->trees[i].name, name))
			return &s->trees[i];
	return NULL;
}

/* ---- the file: one record a line, tab-separated fields ---- */

/*
 * journeys.txt holds, after a "nextbot-journeys 1" line:
 *   night   DATE BASE_TIP
 *   tree    NAME TIP BASE COMMITS        (COMMITS: their ids, one after the other)
 *   patch   KEY SUBJECT AUTHOR_NAME AUTHOR_EMAIL FAMILY STATE TREE SINCE FIRST_SEEN
 *           LAST_SEEN HELD LINK
 *   version PATCH_ID MESSAGE_ID COMMIT FIRST_SEEN        (of the patch above)
 *   person  KEY NAME EMAIL                               (of the version above)
 *   event   DATE EVENT TREE BRANCH FROM REASON           (of the patch above)
 *   told    TREE                                         (of the patch above)
 * A field escapes backslash, tab, newline and CR as \\ \t \n \r, and is \N when
 * absent.  Not JSON: a 400-tree night follows 8,000 patches, and json-c's objects
 * made reading and writing them cost more than the rest of the journeys together.
 */
#define STORE_MAGIC "nextbot-journeys\t1"
#define STORE_FIELDS 16

static void put_field(struct strbuf *sb, const char *s)
{
	strbuf_addch(sb, '\t');
	if (!s) {
		strbuf_addstr(sb, "\\N");
		return;
	}
	/* plain runs in one piece: 8,000 patches are some 4 MB a night */
	for (;;) {
		size_t n = strcspn(s, "\\\t\n\r");

		strbuf_add(sb, s, n);
		s += n;
		if (!*s)
			break;
		strbuf_addch(sb, '\\');
		strbuf_addch(sb, *s == '\t' ? 't' : *s == '\n' ? 'n' : *s == '\r' ? 'r' : '\\');
		s++;
	}
}

static void put_oid(struct strbuf *sb, const struct nb_oid *id)
{
	put_field(sb, nb_oid_is_null(id) ? NULL : id->hex);
}

static void put_pid(struct strbuf *sb, const struct nb_patchid *id)
{
	put_field(sb, nb_patchid_is_none(id) ? NULL : NB_PATCHID_HEX(id));
}

static void put_journey(struct strbuf *sb, const struct journey *j)
{
	size_t i, k;

	strbuf_addstr(sb, "patch");
	put_field(sb, j->key);
	put_field(sb, j->subject);
	put_field(sb, j->author_name);
	put_field(sb, j->author_email);
	put_field(sb, j->family);
	put_field(sb, journey_state_name(j->state));
	put_field(sb, j->tree);
	put_field(sb, j->since);
	put_field(sb, j->first_seen);
	put_field(sb, j->last_seen);
	put_field(sb, j->held);
	put_field(sb, j->link);
	strbuf_addch(sb, '\n');
	for (i = 0; i < j->versions_nr; i++) {
		const struct journey_version *v = &j->versions[i];

		strbuf_addstr(sb, "version");
		if (v->pid_known)
			put_pid(sb, &v->patch_id);
		else
			strbuf_addstr(sb, "\t?");
		put_field(sb, v->message_id);
		put_oid(sb, &v->commit);
		put_field(sb, v->first_seen);
		strbuf_addch(sb, '\n');
		for (k = 0; k < v->people_nr; k++) {
			strbuf_addstr(sb, "person");
			put_field(sb, v->people[k].key);
			put_field(sb, v->people[k].name);
			put_field(sb, v->people[k].email);
			strbuf_addch(sb, '\n');
		}
	}
	for (i = 0; i < j->events_nr; i++) {
		const struct journey_event *e = &j->events[i];

		strbuf_addstr(sb, "event");
		put_field(sb, e->date);
		put_field(sb, journey_event_name(e->kind));
		put_field(sb, e->tree);
		put_field(sb, e->branch);
		put_field(sb, e->from);
		put_field(sb, e->reason);
		strbuf_addch(sb, '\n');
	}
	for (i = 0; i < j->told.nr; i++) {
		strbuf_addstr(sb, "told");
		put_field(sb, j->told.v[i]);
		strbuf_addch(sb, '\n');
	}
}

int journey_store_save(const struct journey_store *s, const char *workdir)
{
	char *path = xstrfmt("%s/journeys.txt", workdir);
	struct strbuf sb = STRBUF_INIT;
	size_t i, k;
	int error;

	strbuf_grow(&sb, s->bytes + s->bytes / 8 + 4096); /* 4 MB: not grown by doubling */
	strbuf_addf(&sb, "%s\nnight", STORE_MAGIC);
	put_field(&sb, s->date);
	put_oid(&sb, &s->base_tip);
	strbuf_addch(&sb, '\n');
	for (i = 0; i < s->trees_nr; i++) {
		strbuf_addstr(&sb, "tree");
		put_field(&sb, s->trees[i].name);
		put_oid(&sb, &s->trees[i].tip);
		put_oid(&sb, &s->trees[i].base);
		strbuf_addch(&sb, '\t');
		for (k = 0; k < s->trees[i].commits_nr; k++)
			strbuf_addstr(&sb, s->trees[i].commits[k].hex);
		strbuf_addch(&sb, '\n');
	}
	for (i = 0; i < s->patches_nr; i++)
		put_journey(&sb, &s->patches[i]);
	error = file_write_atomic(path, sb.buf, sb.len);
	strbuf_release(&sb);
	free(path);
	return error;
}

/* ---- reading ---- */

/* The fields of one line, unescaped in place (f[i] NULL for \N); their number. */
static size_t split(char **f, char *line)
{
	size_t n = 0;
	char *p = line;

	while (n < STORE_FIELDS) {
		char *w = p, *r = p, end;

		f[n++] = p;
		for (; *r && *r != '\t'; r++) {
			if (*r != '\\' || !r[1]) {
				*w++ = *r;
				continue;
			}
			r++;
			if (*r == 'N' && w == f[n - 1] && (!r[1] || r[1] == '\t'))
				f[n - 1] = NULL;
			*w++ = *r == 't' ? '\t' : *r == 'n' ? '\n' : *r == 'r' ? '\r' : *r;
		}
		end = *r;
		*w = '\0';
		if (end != '\t')
			break;
		p = r + 1;
	}
	return n;
}

/* A copy made clean text (a file may have been mended by hand); NULL stays NULL. */
static char *take(const char *s)
{
	const unsigned char *p;

	if (!s)
		return NULL;
	for (p = (const unsigned char *)s; *p >= 0x20 && *p < 0x7f; p++)
		;
	return *p ? utf8_clean_dup(s) : xstrdup(s); /* most are plain ASCII */
}

/*
 * A journey's field: the unescaped text in the store's block itself when it is plain
 * ASCII (most are: some 250,000 strings of a 4 MB store were as many allocations and
 * copies), else a clean copy.  journey_str_free() tells the two apart.
 */
static char *take_in(char *s)
{
	const unsigned char *p;

	if (!s)
		return NULL;
	for (p = (const unsigned char *)s; *p >= 0x20 && *p < 0x7f; p++)
		;
	return *p ? utf8_clean_dup(s) : s;
}

static void take_oid(struct nb_oid *out, const char *s)
{
	nb_oid_clear(out);
	if (s && nb_oid_valid(s))
		nb_oid_parse(out, s);
}

static void tree_read(struct journey_store *s, char **f, size_t n)
{
	struct journey_tree_seen *t;
	size_t k, nr;

	if (n < 5 || !f[1])
		return;
	ALLOC_GROW(s->trees, s->trees_nr + 1, s->trees_alloc);
	t = &s->trees[s->trees_nr++];
	memset(t, 0, sizeof(*t));
	t->name = take(f[1]);
	take_oid(&t->tip, f[2]);
	take_oid(&t->base, f[3]);
	nr = f[4] ? strlen(f[4]) / NB_OID_HEXSZ : 0;
	t->commits = xcalloc(nr ? nr : 1, sizeof(*t->commits));
	for (k = 0; k < nr; k++) {
		char hex[NB_OID_HEXSZ + 1];

		memcpy(hex, f[4] + k * NB_OID_HEXSZ, NB_OID_HEXSZ);
		hex[NB_OID_HEXSZ] = '\0';
		if (!nb_oid_valid(hex)) {
			t->commits_nr = 0; /* mended or damaged: walked again */
			return;
		}
		nb_oid_parse(&t->commits[t->commits_nr++], hex);
	}
}

static void patch_read(struct journey *j, char **f, size_t n)
{
	if (n < 13)
		return;
	j->key = take_in(f[1]);
	j->subject = take_in(f[2]);
	j->author_name = take_in(f[3]);
	j->author_email = take_in(f[4]);
	j->family = take_in(f[5]);
	if (journey_state_parse(&j->state, f[6]))
		j->state = JOURNEY_IN_TREE;
	j->tree = take_in(f[7]);
	j->since = take_in(f[8]);
	j->first_seen = take_in(f[9]);
	j->last_seen = take_in(f[10]);
	j->held = take_in(f[11]);
	j->link = take_in(f[12]);
}

static void version_read(struct journey *j, char **f, size_t n)
{
	struct journey_version *v;

	if (n < 5)
		return;
	JOURNEY_GROW(j->versions, j->versions_nr + 1, j->versions_alloc);
	v = &j->versions[j->versions_nr++];
	memset(v, 0, sizeof(*v));
	if (nb_patchid_parse(&v->patch_id, f[1]) < 0) /* "?": not computed yet */
		nb_error_clear();
	v->pid_known = !f[1] || strcmp(f[1], "?");
	v->message_id = take_in(f[2]);
	take_oid(&v->commit, f[3]);
	v->first_seen = take_in(f[4]);
}

static void person_read(struct journey *j, char **f, size_t n, size_t *alloc)
{
	struct journey_version *v = j->versions_nr ? &j->versions[j->versions_nr - 1] : NULL;

	if (!v || n < 4 || !f[1] || !f[3])
		return;
	if (!v->people_nr)
		*alloc = 0;
	JOURNEY_GROW(v->people, v->people_nr + 1, *alloc);
	v->people[v->people_nr].key = take_in(f[1]);
	v->people[v->people_nr].name = f[2] ? take_in(f[2]) : xstrdup("");
	v->people[v->people_nr++].email = take_in(f[3]);
}

static void event_read(struct journey *j, char **f, size_t n)
{
	struct journey_event *e;
	enum journey_event_kind kind;

	if (n < 7 || !f[1] || journey_event_parse(&kind, f[2]))
		return;
	JOURNEY_GROW(j->events, j->events_nr + 1, j->events_alloc);
	e = &j->events[j->events_nr++];
	memset(e, 0, sizeof(*e));
	e->date = take_in(f[1]);
	e->kind = kind;
	e->tree = take_in(f[3]);
	e->branch = take_in(f[4]);
	e->from = take_in(f[5]);
	e->reason = take_in(f[6]);
}

/* Drops the last journey read when it lacks what every journey has. */
static void patch_check(struct journey_store *s)
{
	struct journey *j = s->patches_nr ? &s->patches[s->patches_nr - 1] : NULL;

	if (j && (!j->key || !j->subject || !j->author_name || !j->author_email ||
		  !j->family || !j->versions_nr)) {
		journey_release(j);
		s->patches_nr--;
	}
}

/* A store line's kind: its first field, as the writer above spells it. */
enum store_rec {
	STORE_REC_OTHER, STORE_REC_PATCH, STORE_REC_VERSION, STORE_REC_PERSON,
	STORE_REC_EVENT, STORE_REC_TOLD,  STORE_REC_TREE,    STORE_REC_NIGHT,
};

static enum store_rec store_rec_parse(const char *word)
{
	static const char *const words[] = {
		[STORE_REC_PATCH] = "patch", [STORE_REC_VERSION] = "version",
		[STORE_REC_PERSON] = "person", [STORE_REC_EVENT] = "event",
		[STORE_REC_TOLD] = "told", [STORE_REC_TREE] = "tree", [STORE_REC_NIGHT] = "night",
	};
	size_t i;

	for (i = 1; word && i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(word, words[i]))
			return (enum store_rec)i;
	return STORE_REC_OTHER;
}

static void store_read(struct journey_store *s, char *text, const char *end)
{
	char *f[STORE_FIELDS], *line = text, *eol;
	struct journey *j = NULL;
	size_t n, people_alloc = 0, patches = 0;
	enum store_rec kind;
	const char *p;

	/* the journeys' array sized once (8,000 of them: no copies on the way) */
	for (p = text; (p = strstr(p, "\npatch\t")); p++)
		patches++;
	ALLOC_GROW(s->patches, patches + 1, s->patches_alloc);

	for (; *line; line = eol) {
		eol = strchrnul(line, '\n');
		if (*eol)
			*eol++ = '\0';
		n = split(f, line);
		if (!f[0])
			continue;
		kind = store_rec_parse(f[0]);
		if (kind == STORE_REC_PATCH) {
			patch_check(s);
			j = journey_store_add(s);
			j->block = text;
			j->block_end = end;
			patch_read(j, f, n);
		} else if (kind == STORE_REC_VERSION && j) {
			version_read(j, f, n);
		} else if (kind == STORE_REC_PERSON && j) {
			person_read(j, f, n, &people_alloc);
		} else if (kind == STORE_REC_EVENT && j) {
			event_read(j, f, n);
		} else if (kind == STORE_REC_TOLD && j && n >= 2 && f[1]) {
			strvec_push(&j->told, f[1]);
		} else if (kind == STORE_REC_TREE) {
			tree_read(s, f, n);
		} else if (kind == STORE_REC_NIGHT && n >= 3) {
			s->date = take(f[1]);
			take_oid(&s->base_tip, f[2]);
		}
	}
	patch_check(s);
}

/*
 * A damaged store costs the journeys' history, never the night: it is kept aside
 * (journeys.txt.damaged) and the night starts afresh, as on a first night.
 */
static void set_aside(const char *path, const struct strbuf *text)
{
	char *copy = xstrfmt("%s.damaged", path);

	if (file_write_atomic(copy, text->buf, text->len) < 0)
		log_warn("journeys: %s is damaged and could not be copied aside: %s", path,
			 nb_error_last());
	else
		log_warn("journeys: %s is damaged (kept as %s): the journeys start afresh", path,
			 copy);
	free(copy);
}

int journey_store_load(struct journey_store *out, const char *workdir)
{
	char *path = xstrfmt("%s/journeys.txt", workdir);
	struct strbuf sb = STRBUF_INIT;
	int error;

	memset(out, 0, sizeof(*out));
	error = strbuf_read_file(&sb, path, STORE_MAX_BYTES);
	if (error == NB_ENOTFOUND) {
		error = 0;
		goto done;
	}
	if (error < 0)
		goto done;
	if (strncmp(sb.buf, STORE_MAGIC "\n", sizeof(STORE_MAGIC)) ||
	    memchr(sb.buf, '\0', sb.len))
		set_aside(path, &sb);
	else
		store_read(out, sb.buf + sizeof(STORE_MAGIC), sb.buf + sb.len + 1);
	out->bytes = sb.len;
	out->text = strbuf_detach(&sb, NULL); /* the journeys' strings point into it */
done:
	strbuf_release(&sb);
	free(path);
	return error;
}

/* ---- pruning ---- */

int journey_gc(const struct config *cfg, const char *today, size_t *pruned)
{
	struct journey_store s = JOURNEY_STORE_INIT;
	int error;

	*pruned = 0;
	if ((error = journey_store_load(&s, cfg->workdir)) < 0 || !s.date)
		goto done;
	/* by nights, as gc keeps runs: keep_days before the last night followed */
	*pruned = journey_store_prune(&s, today && strcmp(today, s.date) < 0 ? today : s.date,
				      cfg->keep_days);
	if (*pruned)
		error = journey_store_save(&s, cfg->workdir);
done:
	journey_store_release(&s);
	return error;
}

size_t journey_store_prune(struct journey_store *s, const char *today, int keep_days)
{
	char cutoff[16];
	size_t i, kept = 0, pruned = 0;
	int y, m, d;

	if (!today || sscanf(today, "%4d-%2d-%2d", &y, &m, &d) != 3)
		return 0;
	{
		struct tm tm = { .tm_year = y - 1900, .tm_mon = m - 1, .tm_mday = d - keep_days };
		time_t t = timegm(&tm);

		gmtime_r(&t, &tm);
		strftime(cutoff, sizeof(cutoff), "%Y-%m-%d", &tm);
	}
	for (i = 0; i < s->patches_nr; i++) {
		struct journey *j = &s->patches[i];
		const char *last = j->events_nr ? j->events[j->events_nr - 1].date : j->last_seen;

		if ((j->state == JOURNEY_MERGED || j->state == JOURNEY_GONE) && last &&
		    strcmp(last, cutoff) < 0) {
			journey_release(j);
			pruned++;
			continue;
		}
		if (kept != i)
			s->patches[kept] = *j;
		kept++;
	}
	s->patches_nr = kept;
	return pruned;
}
