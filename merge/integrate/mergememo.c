/* The memo of clean merges, one text file: a header, then a record per merge. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merge/integrate/mergememo_int.h"
#include "util/oid.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* Bump when the merge code can give another tree or diffstat for the same input. */
#define MEMO_HEADER "nextbot merge memo 1\n"
#define MEMO_FILE_MAX ((size_t)256 << 20)
#define STAT_MAX ((size_t)64 << 10)

struct memo_entry {
	git_oid key[3];         /* base, ours, theirs trees */
	git_oid result;
	char *stat;
	int used;
};

struct mergememo {
	char *path;
	struct memo_entry *v;   /* loaded ones sorted by key, [0, sorted); then added ones */
	size_t nr, alloc, sorted;
};

static int memo_key_cmp(const void *a, const void *b)
{
	return memcmp(((const struct memo_entry *)a)->key, ((const struct memo_entry *)b)->key,
		      sizeof(((const struct memo_entry *)a)->key));
}

static struct memo_entry *push(struct mergememo *m)
{
	ALLOC_GROW(m->v, m->nr + 1, m->alloc);
	memset(&m->v[m->nr], 0, sizeof(m->v[m->nr]));
	return &m->v[m->nr++];
}

/* One record at *pos: "<4 ids> <stat length>\n<stat>\n"; 0 ok, -1 damaged. */
static int parse_record(struct mergememo *m, const char *buf, size_t len, size_t *pos)
{
	const char *p = buf + *pos, *end = buf + len, *nl = memchr(p, '\n', (size_t)(end - p));
	git_oid ids[4];
	char *after;
	unsigned long statlen;
	struct memo_entry *e;
	int i;

	if (!nl || nl - p < 4 * (NB_OID_HEXSZ + 1) + 1)
		return -1;
	for (i = 0; i < 4; i++)
		if (git_oid_fromstrn(&ids[i], p + (NB_OID_HEXSZ + 1) * i, NB_OID_HEXSZ) < 0 ||
		    p[(NB_OID_HEXSZ + 1) * i + NB_OID_HEXSZ] != ' ')
			return -1;
	statlen = strtoul(p + 4 * (NB_OID_HEXSZ + 1), &after, 10);
	if (after != nl || statlen > STAT_MAX || (size_t)(end - nl - 1) < statlen + 1 ||
	    nl[1 + statlen] != '\n')
		return -1;
	e = push(m);
	memcpy(e->key, ids, sizeof(e->key));
	e->result = ids[3];
	e->stat = xmalloc(statlen + 1);
	memcpy(e->stat, nl + 1, statlen);
	e->stat[statlen] = '\0';
	*pos = (size_t)(nl + 1 + statlen + 1 - buf);
	return 0;
}

struct mergememo *mergememo_load(const char *path)
{
	struct mergememo *m = xcalloc(1, sizeof(*m));
	struct strbuf sb = STRBUF_INIT;
	size_t pos = strlen(MEMO_HEADER);

	m->path = xstrdup(path);
	if (strbuf_read_file(&sb, path, MEMO_FILE_MAX) < 0 || sb.len < pos ||
	    memcmp(sb.buf, MEMO_HEADER, pos))
		goto done;      /* none yet, or another version's: start empty */
	while (pos < sb.len)
		if (parse_record(m, sb.buf, sb.len, &pos) < 0) {
			log_warn("%s: damaged after byte %zu; the rest is ignored", path, pos);
			break;
		}
	if (m->nr)
		qsort(m->v, m->nr, sizeof(*m->v), memo_key_cmp);
	m->sorted = m->nr;
done:
	strbuf_release(&sb);
	return m;
}

void mergememo_free(struct mergememo *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->nr; i++)
		free(m->v[i].stat);
	free(m->v);
	free(m->path);
	free(m);
}

static struct memo_entry *memo_lookup(struct mergememo *m, const struct memo_entry *key)
{
	struct memo_entry *e =
		m->sorted ? bsearch(key, m->v, m->sorted, sizeof(*m->v), memo_key_cmp) : NULL;
	size_t i;

	for (i = m->sorted; !e && i < m->nr; i++)
		if (!memo_key_cmp(key, &m->v[i]))
			e = &m->v[i];
	return e;
}

int mergememo_find(git_oid *out_tree, const char **out_stat, struct mergememo *m,
		   const git_oid *base, const git_oid *ours, const git_oid *theirs)
{
	struct memo_entry key, *e;

	key.key[0] = *base;
	key.key[1] = *ours;
	key.key[2] = *theirs;
	if (!(e = memo_lookup(m, &key)))
		return 0;
	e->used = 1;
	*out_tree = e->result;
	*out_stat = e->stat;
	return 1;
}

void mergememo_add(struct mergememo *m, const git_oid *base, const git_oid *ours,
		   const git_oid *theirs, const git_oid *result, const char *stat)
{
	struct memo_entry key, *e;

	key.key[0] = *base;
	key.key[1] = *ours;
	key.key[2] = *theirs;
	if (strlen(stat) > STAT_MAX)
		return;         /* a merge that big is worth doing again */
	if (!(e = memo_lookup(m, &key))) {
		e = push(m);
		memcpy(e->key, key.key, sizeof(e->key));
	}
	free(e->stat);          /* a merge just made is the authority */
	e->result = *result;
	e->stat = xstrdup(stat);
	e->used = 1;
}

int mergememo_save(struct mergememo *m)
{
	struct strbuf sb = STRBUF_INIT;
	char hex[4][NB_OID_HEXSZ + 1];
	size_t i;
	int j, err;

	strbuf_addstr(&sb, MEMO_HEADER);
	for (i = 0; i < m->nr; i++) {
		const struct memo_entry *e = &m->v[i];

		if (!e->used)
			continue;
		for (j = 0; j < 3; j++)
			git_oid_tostr(hex[j], sizeof(hex[j]), &e->key[j]);
		git_oid_tostr(hex[3], sizeof(hex[3]), &e->result);
		strbuf_addf(&sb, "%s %s %s %s %zu\n%s\n", hex[0], hex[1], hex[2], hex[3],
			    strlen(e->stat), e->stat);
	}
	err = file_write_atomic(m->path, sb.buf, sb.len);
	strbuf_release(&sb);
	return err;
}
