/* Small pieces the journey room shares: a string map, subjects, reviews, who is a bot. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bot/journey/night_int.h"
#include "merge/repo/repo.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* ---- a string to index map: FNV-1a, linear probing, at most half full ---- */

static size_t slot_of(const struct jmap *m, const char *key)
{
	unsigned long long h = 1469598103934665603ULL;
	const char *p;
	size_t i;

	for (p = key; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	for (i = (size_t)h & (m->cap - 1); m->keys[i] && strcmp(m->keys[i], key);
	     i = (i + 1) & (m->cap - 1))
		;
	return i;
}

/* Room for `nr` keys in all without growing again (each growth rehashes every key). */
static void grow(struct jmap *m, size_t nr)
{
	struct jmap bigger = { NULL, NULL, m->cap ? m->cap : 256, 0 };
	size_t i;

	while (2 * nr > bigger.cap)
		bigger.cap *= 2;
	if (bigger.cap == m->cap)
		return;
	bigger.keys = xcalloc(bigger.cap, sizeof(char *));
	bigger.vals = xcalloc(bigger.cap, sizeof(size_t));
	for (i = 0; i < m->cap; i++)
		if (m->keys[i]) {
			size_t s = slot_of(&bigger, m->keys[i]);

			bigger.keys[s] = m->keys[i];
			bigger.vals[s] = m->vals[i];
			bigger.nr++;
		}
	free(m->keys);
	free(m->vals);
	*m = bigger;
}

void jmap_reserve(struct jmap *m, size_t nr)
{
	grow(m, m->nr + nr);
}

void jmap_put(struct jmap *m, const char *key, size_t value)
{
	size_t i;

	if (!key || !*key)
		return;
	grow(m, m->nr + 1);
	i = slot_of(m, key);
	if (!m->keys[i]) {
		m->keys[i] = xstrdup(key);
		m->nr++;
	}
	m->vals[i] = value;
}

int jmap_get(const struct jmap *m, const char *key, size_t *value)
{
	size_t i;

	if (!m->cap || !key || !*key)
		return 0;
	i = slot_of(m, key);
	if (!m->keys[i])
		return 0;
	*value = m->vals[i];
	return 1;
}

void jmap_clear(struct jmap *m)
{
	size_t i;

	for (i = 0; i < m->cap; i++)
		free(m->keys[i]);
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* ---- subjects, people ---- */

/*
 * The subject a new version keeps: without "[PATCH v2 3/7]"-style prefixes (any
 * bracketed word at the start), lowercase ASCII, runs of blanks as one.
 */
void journey_subject_norm(struct strbuf *out, const char *subject)
{
	const char *p = subject;

	for (;;) {
		while (*p == ' ')
			p++;
		if (*p != '[' || !strchr(p, ']'))
			break;
		p = strchr(p, ']') + 1;
	}
	for (; *p; p++) {
		if (isspace((unsigned char)*p)) {
			if (out->len && out->buf[out->len - 1] != ' ')
				strbuf_addch(out, ' ');
			continue;
		}
		strbuf_addch(out, (char)tolower((unsigned char)*p));
	}
	strbuf_rtrim(out);
}

int journey_reviewed(const struct journey_person *people, size_t nr, const char *author_name,
		     const char *author_email, const struct strvec *require)
{
	size_t i, k;

	for (i = 0; i < nr; i++)
		for (k = 0; k < require->nr; k++) {
			struct trailer_person t = { people[i].key, people[i].name,
						    people[i].email };

			if (!strcasecmp(people[i].key, require->v[k]) &&
			    trailer_person_is_other(&t, author_name, author_email, NULL))
				return 1;
		}
	return 0;
}

int journey_reviewed_by_mail(const struct journey_person *people, size_t nr,
			     const char *author_name, const char *author_email,
			     const struct strvec *require, const struct state *st,
			     const char *message_id)
{
	size_t i, k;

	for (i = 0; st && message_id && i < nr; i++)
		for (k = 0; k < require->nr; k++) {
			struct trailer_person t = { people[i].key, people[i].name,
						    people[i].email };

			if (!strcasecmp(people[i].key, require->v[k]) &&
			    trailer_person_is_other(&t, author_name, author_email, NULL) &&
			    state_review_seen(st, people[i].email, people[i].key, message_id,
					      NULL))
				return 1;
		}
	return 0;
}

int journey_key_mailed(const char *key)
{
	static const char *const keys[] = { "Signed-off-by", "Reviewed-by", "Acked-by",
					    "Tested-by", "Co-developed-by" };
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcasecmp(key, keys[i]))
			return 1;
	return 0;
}

/*
 * "bot" or "robot" as a word of `s` (ASCII case ignored); with `suffix`, any word
 * ending in "bot" too (an address's "syzbot+…", "nextbot").
 */
static int has_bot_word(const char *s, size_t len, int suffix)
{
	size_t i = 0;

	while (i < len) {
		size_t start, n;

		while (i < len && !isalnum((unsigned char)s[i]))
			i++;
		start = i;
		while (i < len && isalnum((unsigned char)s[i]))
			i++;
		n = i - start;
		if ((n == 3 && !strncasecmp(s + start, "bot", 3)) ||
		    (n == 5 && !strncasecmp(s + start, "robot", 5)) ||
		    (suffix && n > 3 && !strncasecmp(s + i - 3, "bot", 3)))
			return 1;
	}
	return 0;
}

int journey_is_bot(const struct config *cfg, const char *name, const char *email)
{
	const char *at = strchr(email, '@'), *lt = strrchr(cfg->notify.from, '<');
	size_t local = at ? (size_t)(at - email) : strlen(email), from_len;
	const char *from = lt ? lt + 1 : cfg->notify.from;

	from_len = strcspn(from, ">");
	if (strlen(email) == from_len && !strncasecmp(email, from, from_len))
		return 1; /* nextbot itself */
	if (name && has_bot_word(name, strlen(name), 0))
		return 1; /* "kernel test robot" */
	return has_bot_word(email, local, 1) || strcasestr(email, "noreply") ||
	       strcasestr(email, "no-reply");
}
