/* Typed object ids: parsing and comparing the hex form the modules pass around. */
#include <ctype.h>
#include <string.h>

#include "util/error.h"
#include "util/oid.h"
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
