/* Inbound mail: what the receiving server's Authentication-Results say of the From: domain. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "notify/inbox.h"
#include "notify/mailparse.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* What the results of one server said about the From: domain. */
struct verdict {
	const char *domain; /* the From: domain, lower case */
	int pass;           /* dmarc=pass or an aligned dkim=pass */
	int dmarc_fail;     /* an explicit dmarc=fail */
	struct strbuf seen; /* "dkim=pass header.d=x, dmarc=fail, …" for the reason */
};

static void lower(char *s)
{
	for (; *s; s++)
		*s = (char)tolower((unsigned char)*s);
}

/* The words of a result (method=result, then ptype.property=value), split on blanks. */
struct words {
	char *v[16];
	size_t nr;
};

static void words_split(struct words *w, const char *p, size_t n)
{
	const char *end = p + n;

	w->nr = 0;
	while (p < end && w->nr < 16) {
		const char *s;

		while (p < end && isspace((unsigned char)*p))
			p++;
		if (p >= end)
			break;
		s = p;
		while (p < end && !isspace((unsigned char)*p)) {
			if (*p == '"') { /* a quoted value may hold blanks */
				for (p++; p < end && *p != '"'; p++)
					if (*p == '\\' && p + 1 < end)
						p++;
			}
			if (p < end)
				p++;
		}
		w->v[w->nr++] = xstrndup(s, (size_t)(p - s));
	}
}

static void words_release(struct words *w)
{
	size_t i;

	for (i = 0; i < w->nr; i++)
		free(w->v[i]);
	w->nr = 0;
}

/* The value of property `name` ("header.d") among the words, unquoted; caller frees. */
static char *prop(const struct words *w, const char *name)
{
	size_t i, k = strlen(name);

	for (i = 1; i < w->nr; i++) {
		if (!strncasecmp(w->v[i], name, k) && w->v[i][k] == '=') {
			char *v = mail_param_value(w->v[i] + k + 1, strlen(w->v[i] + k + 1));

			lower(v);
			return v;
		}
	}
	return NULL;
}

/*
 * The domain of a DKIM identity (header.i, RFC 6376 "i="): what follows its last '@';
 * without an '@' the value is taken as a domain.  "user@" has the empty domain,
 * which lies within no header.d.
 */
static const char *ident_domain(const char *ident)
{
	const char *at = strrchr(ident, '@');

	return at ? at + 1 : ident;
}

/* Is `domain` `d` or a subdomain of it (both lower case)?  RFC 6376 asks that of i=. */
static int within(const char *domain, const char *d)
{
	size_t n = strlen(domain), k = strlen(d);

	if (!*domain || !k)
		return 0;
	return !strcmp(domain, d) ||
	       (n > k && domain[n - k - 1] == '.' && !strcmp(domain + n - k, d));
}

static void resinfo(const char *p, size_t n, void *data)
{
	struct verdict *vd = data;
	struct words w;
	char *eq, *method, *slash, *d = NULL, *from = NULL, *ident = NULL;
	const char *result;
	int outside;

	words_split(&w, p, n);
	if (!w.nr || !(eq = strchr(w.v[0], '=')))
		goto done;
	method = w.v[0];
	*eq = '\0';
	result = eq + 1;
	if ((slash = strchr(method, '/')))
		*slash = '\0';
	lower(method);
	lower(eq + 1);
	if (!strcmp(method, "dmarc")) {
		from = prop(&w, "header.from");
		if (!strcmp(result, "pass") && (!from || !strcmp(from, vd->domain)))
			vd->pass = 1;
		else if (!strcmp(result, "fail") && (!from || !strcmp(from, vd->domain)))
			vd->dmarc_fail = 1;
		strbuf_addf(&vd->seen, "%sdmarc=%s%s%s", vd->seen.len ? ", " : "", result,
			    from ? " header.from=" : "", from ? from : "");
	} else if (!strcmp(method, "dkim")) {
		d = prop(&w, "header.d");
		ident = prop(&w, "header.i");
		outside = d && ident && !within(ident_domain(ident), d);
		if (!strcmp(result, "pass") && !outside &&
		    ((d && !strcmp(d, vd->domain)) ||
		     (!d && ident && !strcmp(ident_domain(ident), vd->domain))))
			vd->pass = 1;
		strbuf_addf(&vd->seen, "%sdkim=%s%s%s%s%s%s", vd->seen.len ? ", " : "", result,
			    d ? " header.d=" : "", d ? d : "", ident ? " header.i=" : "",
			    ident ? ident : "", outside ? " (header.i outside header.d)" : "");
	}
done:
	free(d);
	free(from);
	free(ident);
	words_release(&w);
}

/* The authserv-id of an Authentication-Results value (lower case), or NULL. */
static char *authserv(const char *value, struct strbuf *stripped)
{
	size_t n;

	strbuf_reset(stripped);
	mail_strip_comments(stripped, value);
	n = strcspn(stripped->buf, ";");
	{
		char *first = mail_param_value(stripped->buf, n), *sp = strpbrk(first, " \t");

		if (sp) /* "example.org 1": an id, then a version */
			*sp = '\0';
		lower(first);
		if (!*first) {
			free(first);
			return NULL;
		}
		return first;
	}
}

static void evaluate(struct verdict *vd, const char *stripped)
{
	const char *semi = strchr(stripped, ';');

	if (semi)
		mail_split_unquoted(semi + 1, ';', resinfo, vd);
}

enum inbox_auth inbox_mail_auth(const struct inbox_mail *m, const char *authserv_id,
				struct strbuf *why)
{
	struct verdict vd = { NULL, 0, 0, STRBUF_INIT };
	struct strbuf stripped = STRBUF_INIT;
	enum inbox_auth ret = INBOX_AUTH_MISSING;
	char *domain = NULL, *want = xstrdup(authserv_id ? authserv_id : "");
	size_t i;
	int received = 0;

	lower(want);
	if (!m->from_addr) {
		ret = INBOX_AUTH_FAIL;
		if (why)
			strbuf_addstr(why, "no usable From: address");
		goto done;
	}
	domain = xstrdup(strchr(m->from_addr, '@') + 1);
	lower(domain);
	vd.domain = domain;
	/*
	 * The receiving server adds its Received: field and its Authentication-Results
	 * on top of what it was given, so only the fields above its Received: are its
	 * own; every field below came with the mail and may be the sender's (RFC 8601
	 * section 5).  Each milter writes a field of its own: all of them count.
	 */
	for (i = 0; i < m->headers_nr && !received; i++) {
		char *id;

		if (!strcasecmp(m->headers[i].name, "Received")) {
			received = 1;
			continue;
		}
		if (strcasecmp(m->headers[i].name, "Authentication-Results"))
			continue;
		id = authserv(m->headers[i].value, &stripped);
		if (id && !strcmp(id, want)) {
			ret = INBOX_AUTH_FAIL;
			evaluate(&vd, stripped.buf);
		}
		free(id);
	}
	if (!received) {
		ret = INBOX_AUTH_MISSING;
		if (why)
			strbuf_addf(why, "no Received: field, so no Authentication-Results can "
					 "be told to be %s's own", want);
		goto done;
	}
	if (ret == INBOX_AUTH_MISSING) {
		if (why)
			strbuf_addf(why, "no Authentication-Results from %s above its Received: "
					 "field", want);
		goto done;
	}
	if (vd.pass && !vd.dmarc_fail)
		ret = INBOX_AUTH_PASS;
	if (why)
		strbuf_addf(why, "%s for %s: %s", want, domain,
			    vd.seen.len ? vd.seen.buf : "no dkim or dmarc result");
done:
	strbuf_release(&vd.seen);
	strbuf_release(&stripped);
	free(domain);
	free(want);
	return ret;
}
