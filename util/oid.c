/* Typed object ids: parsing and comparing the hex form the modules pass around;
 * patch-ids as raw bytes or none, and their text. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/error.h"
#include "util/oid.h"
#include "util/xalloc.h"
#include "util/banned.h"

int nb_oid_valid(const char *s)
{
	size_t i;

	if (!s)
		return 0;
	for (i = 0; i < NB_OID_HEXSZ; i++)
		if (!isxdigit((unsigned char)s[i]))
			return 0;
	return s[NB_OID_HEXSZ] == '\0';
}

int nb_oid_parse(struct nb_oid *out, const char *s)
{
	size_t i;

	nb_oid_clear(out);
	if (!nb_oid_valid(s))
		return nb_error_set(NB_EINVALID, "'%s' is not a full object id (%d hex digits)",
				    s ? s : "(null)", NB_OID_HEXSZ);
	for (i = 0; i < NB_OID_HEXSZ; i++)
		out->hex[i] = (char)tolower((unsigned char)s[i]);
	out->hex[NB_OID_HEXSZ] = '\0';
	return 0;
}

void nb_oid_clear(struct nb_oid *id)
{
	memset(id->hex, 0, sizeof(id->hex));
}

int nb_oid_equal(const struct nb_oid *a, const struct nb_oid *b)
{
	return !strcmp(a->hex, b->hex);
}

void nb_patchid_set_raw(struct nb_patchid *p, const unsigned char raw[NB_OID_RAWSZ])
{
	memcpy(p->raw, raw, NB_OID_RAWSZ);
	p->present = 1;
}

int nb_patchid_eq(const struct nb_patchid *a, const struct nb_patchid *b)
{
	return a->present && b->present && !memcmp(a->raw, b->raw, NB_OID_RAWSZ);
}

char *nb_patchid_tostr(char out[NB_PATCHID_STRSZ], const struct nb_patchid *p)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	if (!p->present) {
		out[0] = '\0';
		return out;
	}
	for (i = 0; i < NB_OID_RAWSZ; i++) {
		out[2 * i] = digits[p->raw[i] >> 4];
		out[2 * i + 1] = digits[p->raw[i] & 0xf];
	}
	out[NB_OID_HEXSZ] = '\0';
	return out;
}

static int hexval(char c)
{
	return isdigit((unsigned char)c) ? c - '0' : tolower((unsigned char)c) - 'a' + 10;
}

int nb_patchid_parse(struct nb_patchid *out, const char *s)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	if (!s || !*s)
		return 0;
	if (!nb_oid_valid(s))
		return nb_error_set(NB_EINVALID, "'%s' is not a patch-id (%d hex digits)", s,
				    NB_OID_HEXSZ);
	for (i = 0; i < NB_OID_RAWSZ; i++)
		out->raw[i] = (unsigned char)(hexval(s[2 * i]) << 4 | hexval(s[2 * i + 1]));
	out->present = 1;
	return 0;
}

int nb_patchid_has_prefix(const struct nb_patchid *p, const char *prefix, size_t len)
{
	char hex[NB_PATCHID_STRSZ];

	return p->present && len && len <= NB_OID_HEXSZ &&
	       !strncasecmp(nb_patchid_tostr(hex, p), prefix, len);
}

void nb_patchid_list_push(struct nb_patchid_list *l, const struct nb_patchid *p)
{
	ALLOC_GROW(l->v, l->nr + 1, l->alloc);
	l->v[l->nr++] = *p;
}

void nb_patchid_list_clear(struct nb_patchid_list *l)
{
	free(l->v);
	*l = (struct nb_patchid_list)NB_PATCHID_LIST_INIT;
}
