/* Growable NULL-terminated string vectors. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/strvec.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

char *strvec_empty[1];

void strvec_push_nodup(struct strvec *sv, char *s)
{
	if (sv->v == strvec_empty)
		sv->v = NULL;
	ALLOC_GROW(sv->v, sv->nr + 2, sv->alloc);
	sv->v[sv->nr++] = s;
	sv->v[sv->nr] = NULL;
}

void strvec_push(struct strvec *sv, const char *s)
{
	strvec_push_nodup(sv, xstrdup(s));
}

void strvec_pushf(struct strvec *sv, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	strvec_push_nodup(sv, strbuf_detach(&sb, NULL));
}

void strvec_pushl(struct strvec *sv, ...)
{
	const char *s;
	va_list ap;

	va_start(ap, sv);
	while ((s = va_arg(ap, const char *)))
		strvec_push(sv, s);
	va_end(ap);
}

int strvec_contains(const struct strvec *sv, const char *s)
{
	size_t i;

	for (i = 0; i < sv->nr; i++)
		if (!strcmp(sv->v[i], s))
			return 1;
	return 0;
}

void strvec_clear(struct strvec *sv)
{
	size_t i;

	if (sv->v != strvec_empty) {
		for (i = 0; i < sv->nr; i++)
			free(sv->v[i]);
		free(sv->v);
	}
	sv->v = strvec_empty;
	sv->nr = sv->alloc = 0;
}
