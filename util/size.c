/* Parsing and printing sizes (memory and file size limits). */
#include <ctype.h>
#include <limits.h>
#include <string.h>

#include "util/size.h"
#include "util/error.h"
#include "util/banned.h"

static const char units[] = "KMGT";

int size_parse(long long *out, const char *s)
{
	const char *p = s, *u;
	long long n = 0;
	int shift = 0;

	if (!s || !isdigit((unsigned char)*p))
		goto bad;
	for (; isdigit((unsigned char)*p); p++) {
		if (n > (LLONG_MAX - (*p - '0')) / 10)
			goto bad;
		n = n * 10 + (*p - '0');
	}
	if (*p && (u = strchr(units, toupper((unsigned char)*p)))) {
		shift = 10 * (int)(u - units + 1);
		p++;
		if (!strcmp(p, "iB") || !strcmp(p, "B"))
			p += strlen(p);
	} else if (!strcmp(p, "B")) {
		p++;
	}
	if (*p || n <= 0 || n > (LLONG_MAX >> shift))
		goto bad;
	*out = n << shift;
	return 0;
bad:
	return nb_error_set(NB_EINVALID,
			    "bad size '%s' (want bytes, or e.g. \"512M\", \"8G\", \"8GiB\")",
			    s ? s : "");
}

void size_format(struct strbuf *sb, long long bytes)
{
	static const char *const names[] = { "KiB", "MiB", "GiB", "TiB" };
	int i = -1;
	long long unit = 1;

	while (i < 3 && bytes >= unit * 1024) {
		unit *= 1024;
		i++;
	}
	if (i < 0)
		strbuf_addf(sb, "%lld bytes", bytes);
	else if (bytes % unit == 0)
		strbuf_addf(sb, "%lld %s", bytes / unit, names[i]);
	else
		strbuf_addf(sb, "%.1f %s", (double)bytes / (double)unit, names[i]);
}
