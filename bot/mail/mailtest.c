/* `#nextbot test:`: where a branch may come from, and running the failing command on it. */
#include <arpa/inet.h>
#include <ctype.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include "bot/core/botutil.h"
#include "bot/mail/mail.h"
#include "bot/night/night.h"
#include "merge/transport/transport.h"
#include "merge/repo/repo.h"
#include "merge/integrate/integrate.h"
#include "util/error.h"
#include "util/log.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define FETCH_MAX_BYTES (1ULL << 30) /* a branch to test is not worth more of the disk */
#define TEST_TIP_REF "refs/nextbot/test/tip"
#define TEST_MERGE_REF "refs/nextbot/test/merge"

/* ---- where a branch may come from ---- */

struct url {
	int git;    /* git:// (else https://) */
	char *host; /* lower case; an IPv6 literal without its brackets */
	int port;   /* 443 or 9418 when not written */
	char *path; /* "/" when none */
	int literal; /* host is an IP address */
};

static void url_release(struct url *u)
{
	free(u->host);
	free(u->path);
	memset(u, 0, sizeof(*u));
}

static int is_literal(const char *host)
{
	unsigned char buf[sizeof(struct in6_addr)];

	return inet_pton(AF_INET, host, buf) == 1 || inet_pton(AF_INET6, host, buf) == 1;
}

/* An https:// or git:// URL, strictly: no credentials, no "..", no escapes. */
static int url_parse(struct url *out, const char *s, struct strbuf *why)
{
	const char *p, *auth_end, *colon;
	size_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; s[i]; i++)
		if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 127 ||
		    strchr("\\\"'`<>{}|^%", s[i]))
			goto bad_char;
	if (i > 500) {
		strbuf_addstr(why, "the URL is longer than 500 characters");
		return -1;
	}
	if (!strncmp(s, "https://", 8)) {
		p = s + 8;
	} else if (!strncmp(s, "git://", 6)) {
		p = s + 6;
		out->git = 1;
	} else {
		strbuf_addstr(why, "only https:// and git:// URLs are fetched");
		return -1;
	}
	auth_end = p + strcspn(p, "/?#");
	if (memchr(p, '@', (size_t)(auth_end - p))) {
		strbuf_addstr(why, "a URL with credentials in it is not fetched");
		return -1;
	}
	if (*p == '[') {
		const char *rb = memchr(p, ']', (size_t)(auth_end - p));

		if (!rb)
			goto bad_host;
		out->host = xstrndup(p + 1, (size_t)(rb - p - 1));
		colon = rb[1] == ':' ? rb + 1 : NULL;
		if (!colon && rb + 1 != auth_end)
			goto bad_host;
	} else {
		colon = memchr(p, ':', (size_t)(auth_end - p));
		out->host = xstrndup(p, (size_t)((colon ? colon : auth_end) - p));
		for (i = 0; out->host[i]; i++)
			if (!isalnum((unsigned char)out->host[i]) && !strchr(".-", out->host[i]))
				goto bad_host;
	}
	if (!*out->host)
		goto bad_host;
	for (i = 0; out->host[i]; i++)
		out->host[i] = (char)tolower((unsigned char)out->host[i]);
	out->port = out->git ? 9418 : 443;
	if (colon) {
		char *end;
		long port = strtol(colon + 1, &end, 10);

		if (end != auth_end || port < 1 || port > 65535)
			goto bad_host;
		out->port = (int)port;
	}
	if (strpbrk(s, "?#")) {
		strbuf_addstr(why, "a URL with a query or fragment is not fetched");
		goto fail;
	}
	out->path = xstrdup(*auth_end ? auth_end : "/");
	if (strstr(out->path, "/../") || strstr(out->path, "/./") ||
	    str_ends_with(out->path, "/..") || str_ends_with(out->path, "/.")) {
		strbuf_addstr(why, "a URL path with . or .. segments is not fetched");
		goto fail;
	}
	out->literal = is_literal(out->host);
	return 0;
bad_char:
	strbuf_addstr(why, "the URL holds a character nextbot does not fetch");
	return -1;
bad_host:
	strbuf_addstr(why, "the URL's host or port is not valid");
fail:
	url_release(out);
	return -1;
}

/* The host of a configured tree's url (https, http, git, ssh, scp-like), lower case. */
static char *tree_host(const char *u)
{
	const char *p = strstr(u, "://"), *end;
	char *host;
	size_t i;

	if (p) {
		p += 3;
	} else {
		const char *colon = strchr(u, ':'), *slash = strchr(u, '/');

		if (!colon || (slash && slash < colon))
			return NULL; /* a path */
		p = u; /* scp-like user@host:path */
	}
	end = p + strcspn(p, "/:");
	if (memchr(p, '@', (size_t)(end - p)))
		p = (const char *)memchr(p, '@', (size_t)(end - p)) + 1;
	if (*p == '[') {
		const char *rb = strchr(p, ']');

		if (!rb)
			return NULL;
		host = xstrndup(p + 1, (size_t)(rb - p - 1));
	} else {
		end = p + strcspn(p, "/:");
		host = xstrndup(p, (size_t)(end - p));
	}
	for (i = 0; host[i]; i++)
		host[i] = (char)tolower((unsigned char)host[i]);
	if (!*host || !strncmp(u, "file:", 5)) {
		free(host);
		return NULL;
	}
	return host;
}

static int is_tree_host(const struct config *cfg, const char *host)
{
	char *h = tree_host(cfg->base.url);
	size_t i;
	int yes = h && !strcmp(h, host);

	free(h);
	for (i = 0; !yes && i < cfg->trees_nr; i++) {
		h = tree_host(cfg->trees[i].url);
		yes = h && !strcmp(h, host);
		free(h);
	}
	return yes;
}

/* Does test_urls entry `e` allow `u`: same scheme, host and port, path below its path? */
static int entry_allows(const struct url *e, const struct url *u)
{
	size_t n = strlen(e->path);

	if (e->git != u->git || strcmp(e->host, u->host) || e->port != u->port)
		return 0;
	if (strncmp(u->path, e->path, n))
		return 0;
	return n && (e->path[n - 1] == '/' || !u->path[n] || u->path[n] == '/');
}

static int v4_internal(uint32_t a)
{
	return (a >> 24) == 0 || (a >> 24) == 10 || (a >> 24) == 127 || /* this, private, loop */
	       (a >> 22) == 0x191 ||                                  /* 100.64/10 shared */
	       (a >> 16) == 0xa9fe ||                                 /* 169.254/16 link-local */
	       (a >> 20) == 0xac1 ||                                  /* 172.16/12 private */
	       (a >> 8) == 0xc00000 ||                                /* 192.0.0/24 */
	       (a >> 16) == 0xc0a8 ||                                 /* 192.168/16 private */
	       (a >> 17) == 0x6309 ||                                 /* 198.18/15 */
	       (a >> 28) >= 0xe;                                      /* multicast, reserved */
}

static uint32_t v4_at(const unsigned char *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static int v6_internal(const unsigned char *b)
{
	static const unsigned char zero[16] = { 0 };

	if (!memcmp(b, zero, 15) && (b[15] == 0 || b[15] == 1)) /* ::, ::1 */
		return 1;
	if (!memcmp(b, zero, 10) && b[10] == 0xff && b[11] == 0xff) /* ::ffff:a.b.c.d */
		return v4_internal(v4_at(b + 12));
	if (!memcmp(b, zero, 12)) /* ::a.b.c.d */
		return v4_internal(v4_at(b + 12));
	if (b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b) /* 64:ff9b::/96 */
		return v4_internal(v4_at(b + 12));
	if (b[0] == 0x20 && b[1] == 0x02) /* 2002::/16 6to4 */
		return v4_internal(v4_at(b + 2));
	return (b[0] & 0xfe) == 0xfc ||		  /* fc00::/7 unique local */
	       (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) || /* fe80::/10 link-local */
	       (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) || /* fec0::/10 site-local */
	       b[0] == 0xff;				  /* multicast */
}

/* 1 when some address of `host` is on nextbot's own kind of network; -1: unresolved. */
static int host_internal(const char *host, struct strbuf *addr)
{
	struct addrinfo hints, *res = NULL, *ai;
	int internal = 0;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, NULL, &hints, &res) != 0 || !res)
		return -1;
	for (ai = res; ai && !internal; ai = ai->ai_next) {
		char buf[INET6_ADDRSTRLEN] = "";

		if (ai->ai_family == AF_INET) {
			const struct sockaddr_in *sin = (const void *)ai->ai_addr;

			internal = v4_internal(ntohl(sin->sin_addr.s_addr));
			inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof(buf));
		} else if (ai->ai_family == AF_INET6) {
			const struct sockaddr_in6 *sin6 = (const void *)ai->ai_addr;

			internal = v6_internal(sin6->sin6_addr.s6_addr);
			inet_ntop(AF_INET6, &sin6->sin6_addr, buf, sizeof(buf));
		}
		if (internal)
			strbuf_addstr(addr, buf);
	}
	freeaddrinfo(res);
	return internal;
}

int mailtest_url_check(const struct config *cfg, const char *url, struct strbuf *why)
{
	struct strbuf addr = STRBUF_INIT;
	struct url u;
	size_t i;
	int allowed = 0, named_literal = 0, internal, ret = -1;

	if (url_parse(&u, url, why) < 0)
		return -1;
	if (cfg->inbox.test_urls.nr) {
		for (i = 0; i < cfg->inbox.test_urls.nr; i++) {
			struct strbuf ignore = STRBUF_INIT;
			struct url e;

			if (url_parse(&e, cfg->inbox.test_urls.v[i], &ignore) == 0) {
				if (entry_allows(&e, &u)) {
					allowed = 1;
					named_literal |= e.literal;
				}
				url_release(&e);
			}
			strbuf_release(&ignore);
		}
		if (!allowed) {
			strbuf_addstr(why, "the URL is not below any of inbox.test_urls");
			goto done;
		}
	} else if (!is_tree_host(cfg, u.host)) {
		strbuf_addf(why, "%s is not a host of the configured trees (inbox.test_urls "
				 "names other places)",
			    u.host);
		goto done;
	}
	internal = host_internal(u.host, &addr);
	if (internal < 0) {
		strbuf_addf(why, "%s does not resolve", u.host);
		goto done;
	}
	if (internal && !named_literal && !is_tree_host(cfg, u.host)) {
		strbuf_addf(why, "%s is on a local or private network (%s)", u.host, addr.buf);
		goto done;
	}
	ret = 0;
done:
	url_release(&u);
	strbuf_release(&addr);
	return ret;
}

int mailtest_branch_ok(const char *s)
{
	size_t len = strlen(s), i;

	if (!len || len > 200 || *s == '-' || *s == '/' || *s == '.' || s[len - 1] == '/' ||
	    s[len - 1] == '.' || str_ends_with(s, ".lock") || strstr(s, "..") ||
	    strstr(s, "//") || strstr(s, "/.") || strstr(s, "@{"))
		return 0;
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("._/-+", s[i]))
			return 0;
	return 1;
}

/* ---- running one ---- */

static struct flag *flag_of(struct state *st, const char *id)
{
	size_t i;

	for (i = 0; id && i < st->flags_nr; i++)
		if (st->flags[i].id && !strcmp(st->flags[i].id, id))
			return &st->flags[i];
	return NULL;
}

/* The branch's tip, fetched into TEST_TIP_REF. */
static int fetch_branch(struct nb_oid *tip, struct repo *repo, const struct config *cfg,
			const struct test_request *t, struct strbuf *why)
{
	struct fetch_tree ft = { "test", t->url, t->branch, TEST_TIP_REF };
	/* a stranger's URL gets none of nextbot's own credentials */
	struct fetch_creds none = { .ca_file = cfg->git.ca_file,
				    .idle_timeout = cfg->git.fetch_timeout,
				    .max_bytes = FETCH_MAX_BYTES };
	struct fetch_result r = { 0 };
	int ret = -1;

	if (fetch_trees(&r, repo, &ft, 1, &none, NULL) < 0) {
		strbuf_addf(why, "fetching failed: %s", nb_error_last());
	} else if (r.state != FETCH_FETCHED) {
		/* a failed fetch may point at an earlier test's tip: never use it */
		strbuf_addf(why, "cannot fetch %s from %s", t->branch, t->url);
		if (r.reason && strstr(r.reason, "failed"))
			strbuf_addf(why, " (%s)", strstr(r.reason, "failed") + 7);
	} else {
		*tip = r.tip;
		ret = 0;
	}
	fetch_result_release(&r);
	return ret;
}

/* What to tell the sender; `text` gets the body. */
static void outcome_text(struct strbuf *text, const struct flag *f, const struct test_request *t,
			 const struct check_result *cr, const char *subject)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addf(text, "> #nextbot test: %s %s\n\n", t->url, t->branch);
	if (t->state == TEST_ERROR) {
		strbuf_addf(&sb, "nextbot could not test it: %s", t->result);
		bot_wrap(text, sb.buf, "");
		goto done;
	}
	strbuf_addf(&sb,
		    "nextbot merged %s (%.12s \"%s\") in place of the %s tree into next as "
		    "it stood before that tree's merge on next-%.4s%.2s%.2s, and ran %s:",
		    t->branch, t->commit, subject ? subject : "", f->tree, f->last_seen,
		    f->last_seen + 5, f->last_seen + 8, f->command);
	bot_wrap(text, sb.buf, "");
	if (t->state == TEST_PASSED) {
		strbuf_addf(text, "  PASS: %s succeeded.\n\n", f->command);
		strbuf_reset(&sb);
		strbuf_addf(&sb, "The failure of flag %s is gone with this branch.", f->id);
		bot_wrap(text, sb.buf, "");
		goto done;
	}
	strbuf_addf(text, "  FAIL: %s %s.\n\n", f->command,
		    cr->timed_out ? "was killed at its timeout" : "failed");
	if (cr->first_error)
		strbuf_addf(text, "The first error:\n\n  %s\n\n", cr->first_error);
	if (f->error && cr->first_error && !strcmp(f->error, cr->first_error))
		strbuf_addf(text, "That is the error flag %s was raised for.\n", f->id);
	else if (f->error)
		strbuf_addf(text, "Flag %s was raised for:\n\n  %s\n", f->id, f->error);
	if (cr->excerpt)
		strbuf_addf(text, "\nMore of the output:\n\n%s\n", cr->excerpt);
done:
	strbuf_release(&sb);
}

static int answer(struct maint *m, const struct test_request *t, const struct strbuf *text)
{
	struct notice_reply r = { 0 };
	struct notices n;
	int ret;

	if (!t->reply_message_id && !t->by)
		return 0;
	r.key = t->key;
	r.role = "test-result";
	r.to.name = t->reply_name;
	r.to.email = t->by;
	r.cc = (const char *const *)t->reply_cc.v;
	r.cc_nr = t->reply_cc.nr;
	r.subject = t->reply_subject;
	r.message_id = t->reply_message_id;
	r.references = (const char *const *)t->reply_references.v;
	r.references_nr = t->reply_references.nr;
	r.text = text->buf;
	r.flag_id = t->flag_id;
	notices_init(&n, m->cfg);
	n.st = &m->st;
	ret = notices_reply(&n, &r, t->flag_id);
	notices_release(&n);
	return ret;
}

static void finish(struct test_request *t, enum test_state state, const char *result)
{
	t->state = state;
	free(t->result);
	t->result = xstrdup(result ? result : "");
}

/* Runs request t; returns < 0 only when its answer cannot be queued. */
static int run_one(struct maint *m, struct test_request *t)
{
	const struct config *cfg = m->cfg;
	struct check_result cr = CHECK_RESULT_INIT;
	struct strbuf why = STRBUF_INIT, text = STRBUF_INIT;
	struct strvec paths = STRVEC_INIT;
	struct repo *repo = NULL;
	struct nb_oid tip = NB_OID_INIT, onto = NB_OID_INIT, merged = NB_OID_INIT;
	struct trial_merge_opts to;
	struct flag *f = flag_of(&m->st, t->flag_id);
	char *path = xstrfmt("%s/repo.git", cfg->workdir), *runs = NULL, *subject = NULL;
	int err;

	log_info("test: %s %s for flag %s (asked by %s)", t->url, t->branch, t->flag_id, t->by);
	if (!f || !f->repro_base || nb_oid_parse(&onto, f->repro_base) < 0 || !f->command) {
		finish(t, TEST_ERROR, "the flag's night is not on record any more");
		goto reply;
	}
	if (mailtest_url_check(cfg, t->url, &why) < 0) { /* again: names resolve anew */
		finish(t, TEST_ERROR, why.buf);
		goto reply;
	}
	if (repo_open(&repo, path) < 0) {
		finish(t, TEST_ERROR, nb_error_last());
		goto reply;
	}
	if (fetch_branch(&tip, repo, cfg, t, &why) < 0) {
		finish(t, TEST_ERROR, why.buf);
		goto reply;
	}
	free(t->commit);
	t->commit = xstrdup(tip.hex);
	subject = repo_commit_subject(repo, &tip);
	to = (struct trial_merge_opts){ .onto = &onto, .tip = &tip, .branch = t->branch,
					.url = t->url, .identity = cfg->merge_identity,
					.date = f->last_seen };
	err = trial_merge(&merged, &paths, repo, &to);
	if (err == NB_ECONFLICT) {
		size_t i;

		strbuf_addf(&why, "%s does not merge into next before the %s tree: a conflict "
				  "in",
			    t->branch, f->tree);
		for (i = 0; i < paths.nr; i++)
			strbuf_addf(&why, " %s", paths.v[i]);
		finish(t, TEST_ERROR, why.buf);
		goto reply;
	}
	if (err < 0 || repo_ref_set(repo, TEST_MERGE_REF, &merged) < 0) {
		finish(t, TEST_ERROR, nb_error_last());
		goto reply;
	}
	{ /* under today's runs/ folder, so that gc takes it with that night's */
		char today[16];

		bot_today(today, sizeof(today));
		runs = xstrfmt("%s/runs/%s/test-%s-%ld", cfg->workdir, today, f->id,
			       (long)time(NULL));
	}
	/* with a matrix, in the first cell the flag fails in, with that cell's env */
	err = night_check_trial(&cr, cfg, f->last_seen, runs, &merged,
				f->cells_nr && f->cells[0].env.nr ? f->cells[0].name : f->command,
				f->tree);
	if (bot_stop_requested) { /* stopped half way: it stays queued for the next time */
		log_info("test: %s %s: stopped; it stays queued", t->url, t->branch);
		err = 0;
		goto out;
	}
	if (err < 0)
		finish(t, TEST_ERROR, nb_error_last());
	else if (cr.verdict == CHECK_GOOD)
		finish(t, TEST_PASSED, "passed");
	else if (cr.verdict == CHECK_BAD)
		finish(t, TEST_FAILED, cr.first_error ? cr.first_error : "failed");
	else
		finish(t, TEST_ERROR, cr.infra_reason ? cr.infra_reason
						       : "the command says it cannot be tested");
reply:
	log_info("test: %s %s: %s: %s", t->url, t->branch, test_state_name(t->state), t->result);
	if (f) {
		char when[32];

		bot_rfc3339(when, sizeof(when), time(NULL));
		state_flag_mail_add(f, "tested", t->by, t->key, when, t->result);
	}
	outcome_text(&text, f ? f : &(struct flag){ .id = t->flag_id }, t, &cr, subject);
	err = answer(m, t, &text);
out:
	check_result_release(&cr);
	strbuf_release(&why);
	strbuf_release(&text);
	strvec_clear(&paths);
	repo_free(repo);
	free(path);
	free(runs);
	free(subject);
	return err < 0 ? err : 0;
}

int mailtest_run_queued(struct maint *m)
{
	size_t i;
	int ran = 0;

	for (i = 0; i < m->st.tests_nr && !bot_stop_requested; i++) {
		struct test_request *t = &m->st.tests[i];

		if (t->state != TEST_QUEUED)
			continue;
		if (run_one(m, t) < 0)
			return -1;
		if (maint_save(m) != EXIT_DONE)
			return -1;
		ran++;
	}
	return ran;
}
