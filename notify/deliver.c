/* Outbox delivery over libcurl: SMTP one recipient per transaction, signed webhook POSTs. */
#include "notify/curlload.h"
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "notify/hook.h"
#include "notify/mime.h"
#include "notify/notice.h"
#include "notify/outbox.h"
#include "util/error.h"
#include "util/log.h"
#include "util/strvec.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define WORDS_MAX 300		/* bytes of a server's reply kept as the reason */
#define RESPONSE_MAX (64 << 10) /* bytes of a webhook response read at most */
#define BACKOFF_MAX (6 * 3600)
#define RETRY_AFTER_MAX (24 * 3600)

/* What one delivery attempt came to. */
enum attempt { ATTEMPT_SENT = 0, ATTEMPT_RETRY, ATTEMPT_FAILED };

struct attempt_result {
	enum attempt what;
	int unreachable;  /* no answer at all: do not try the same server again now */
	long retry_after; /* seconds the server asked us to wait; 0: none */
	struct strbuf why;
};
#define ATTEMPT_RESULT_INIT                     \
	{                                       \
		ATTEMPT_SENT, 0, 0, STRBUF_INIT \
	}

/* Keeps the words of a server's reply, printable and capped. */
static void set_words(struct strbuf *out, const char *data, size_t len)
{
	struct strbuf raw = STRBUF_INIT;

	strbuf_reset(out);
	strbuf_add(&raw, data, len < WORDS_MAX ? len : WORDS_MAX);
	mime_clean_line(out, raw.buf);
	strbuf_release(&raw);
}

/*
 * The mail is read after the server's EHLO answer: the 8bit version goes to a
 * server that offered 8BITMIME, the 7-bit one (quoted-printable) to any other.
 * libcurl (7.88) cannot add BODY=8BITMIME to MAIL FROM; the 8bit text is sent
 * as git send-email sends it through Net::SMTP, without the parameter.
 */
struct reader {
	const char *p;
	size_t left;
	const char *body8; /* NULL: no 8bit version */
	const int *eightbit; /* the server said 8BITMIME */
	int started;
};

static size_t read_cb(char *buf, size_t size, size_t nmemb, void *data)
{
	struct reader *r = data;
	size_t n;

	if (!r->started) {
		r->started = 1;
		if (r->body8 && *r->eightbit) {
			r->p = r->body8;
			r->left = strlen(r->body8);
		}
	}
	n = size * nmemb < r->left ? size * nmemb : r->left;

	memcpy(buf, r->p, n);
	r->p += n;
	r->left -= n;
	return n;
}

/*
 * Every line the SMTP server sends arrives here.  The last 4xx/5xx line is the
 * reason a transaction failed (the 221 of QUIT comes after it); else the last line.
 */
struct smtp_talk {
	struct strbuf *words;
	int eightbit; /* the EHLO answer listed 8BITMIME */
};

static int smtp_debug_cb(CURL *h, curl_infotype type, char *data, size_t size, void *p)
{
	struct smtp_talk *talk = p;
	struct strbuf *words = talk->words;
	int err = size && (data[0] == '4' || data[0] == '5');

	if (type != CURLINFO_HEADER_IN)
		return 0;
	while (size && (data[size - 1] == '\n' || data[size - 1] == '\r'))
		size--;
	if (size == 12 && !strncmp(data, "250", 3) && (data[3] == '-' || data[3] == ' ') &&
	    !strncasecmp(data + 4, "8BITMIME", 8))
		talk->eightbit = 1;
	if (err || !words->len || (words->buf[0] != '4' && words->buf[0] != '5'))
		set_words(words, data, size);
	return 0;
}

/*
 * The transfer's own deadline, asked about by libcurl about once a second whatever
 * the server does: CURLOPT_TIMEOUT alone let an SMTP server that hangs after DATA
 * take twice the timeout (the answer to the final "." and then QUIT each waited).
 */
struct deadline {
	struct timespec at;
	int passed;
};

static int deadline_cb(void *p, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct deadline *d = p;
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec > d->at.tv_sec ||
	    (now.tv_sec == d->at.tv_sec && now.tv_nsec >= d->at.tv_nsec))
		d->passed = 1;
	return d->passed;
}

static void curl_common(CURL *h, long connect_timeout, long timeout, char *errbuf,
			struct deadline *d)
{
	ncurl.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	ncurl.easy_setopt(h, CURLOPT_CONNECTTIMEOUT, connect_timeout);
	ncurl.easy_setopt(h, CURLOPT_TIMEOUT, timeout);
	/* SMTP waits for the answer to the final "." outside CURLOPT_TIMEOUT, 120 s by default. */
	ncurl.easy_setopt(h, CURLOPT_SERVER_RESPONSE_TIMEOUT, timeout);
	ncurl.easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	ncurl.easy_setopt(h, CURLOPT_FORBID_REUSE, 1L);
	ncurl.easy_setopt(h, CURLOPT_FRESH_CONNECT, 1L);
	clock_gettime(CLOCK_MONOTONIC, &d->at);
	d->at.tv_sec += connect_timeout > timeout ? connect_timeout : timeout;
	d->passed = 0;
	ncurl.easy_setopt(h, CURLOPT_XFERINFOFUNCTION, deadline_cb);
	ncurl.easy_setopt(h, CURLOPT_XFERINFODATA, d);
	ncurl.easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
}

static void transport_error(struct attempt_result *res, CURLcode rc, const char *errbuf)
{
	res->what = ATTEMPT_RETRY;
	res->unreachable = 1;
	strbuf_reset(&res->why);
	if (rc == CURLE_ABORTED_BY_CALLBACK)
		strbuf_addstr(&res->why, "timed out: no answer within the timeout");
	else
		strbuf_addstr(&res->why, *errbuf ? errbuf : ncurl.easy_strerror(rc));
}

/*
 * 530/534/535/538 and a refused login are about our own account, not about the
 * recipient: the mail stays queued (to be retried, or flushed once the password
 * is fixed) instead of failing for good.
 */
static int smtp_login_problem(CURLcode rc, long code)
{
	return rc == CURLE_LOGIN_DENIED || code == 530 || code == 534 || code == 535 ||
	       code == 538;
}

static void smtp_classify(struct attempt_result *res, CURL *h, CURLcode rc, const char *errbuf)
{
	long code = 0;
	struct strbuf words = STRBUF_INIT;

	strbuf_addbuf(&words, &res->why);
	ncurl.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	strbuf_reset(&res->why);
	if (rc == CURLE_OK) {
		res->what = ATTEMPT_SENT;
	} else if (smtp_login_problem(rc, code)) {
		res->what = ATTEMPT_RETRY;
		strbuf_addf(&res->why,
			    "SMTP login refused (check notify.smtp user and password): %s",
			    words.len ? words.buf : errbuf);
	} else if (rc == CURLE_USE_SSL_FAILED) {
		res->what = ATTEMPT_FAILED;
		strbuf_addstr(&res->why, "TLS required but the server does not offer STARTTLS");
	} else if (code >= 500 && code < 600) {
		res->what = ATTEMPT_FAILED;
		strbuf_addstr(&res->why, words.len ? words.buf : errbuf);
	} else if (code >= 400 && code < 500) {
		res->what = ATTEMPT_RETRY;
		strbuf_addstr(&res->why, words.len ? words.buf : errbuf);
	} else {
		transport_error(res, rc, errbuf);
	}
	strbuf_release(&words);
}

/*
 * The handle of one attempt, libcurl loaded at the first: a missing or broken
 * libcurl leaves the notice queued (retried as a server that did not answer).
 */
static CURL *attempt_start(struct attempt_result *res)
{
	int loaded = notify_curl_load() == 0;
	CURL *h = loaded ? ncurl.easy_init() : NULL;

	if (!h) {
		res->what = ATTEMPT_RETRY;
		res->unreachable = 1;
		strbuf_reset(&res->why);
		strbuf_addstr(&res->why, loaded ? "cannot start libcurl" : nb_error_last());
	}
	return h;
}

/* One SMTP transaction: MAIL FROM, one RCPT, DATA. */
static void smtp_send(struct attempt_result *res, const struct notice_settings *s,
			const char *from, const char *rcpt, const char *mail, const char *mail8)
{
	char errbuf[CURL_ERROR_SIZE] = "", *mfrom = xstrfmt("<%s>", from);
	struct curl_slist *rcpts = NULL;
	struct smtp_talk talk = {&res->why, 0};
	struct reader r = {mail, strlen(mail), mail8, &talk.eightbit, 0};
	struct deadline d;
	CURL *h = attempt_start(res);
	CURLcode rc;

	if (!h) {
		free(mfrom);
		return;
	}
	rcpts = ncurl.slist_append(rcpts, rcpt);
	curl_common(h, s->smtp.connect_timeout > 0 ? s->smtp.connect_timeout : 30,
		      s->smtp.timeout > 0 ? s->smtp.timeout : 120, errbuf, &d);
	ncurl.easy_setopt(h, CURLOPT_URL, s->smtp.url);
	ncurl.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
	ncurl.easy_setopt(h, CURLOPT_MAIL_FROM, mfrom);
	ncurl.easy_setopt(h, CURLOPT_MAIL_RCPT, rcpts);
	ncurl.easy_setopt(h, CURLOPT_UPLOAD, 1L);
	ncurl.easy_setopt(h, CURLOPT_READFUNCTION, read_cb);
	ncurl.easy_setopt(h, CURLOPT_READDATA, &r);
	/* SIZE= is an upper bound: the 8bit version is never longer */
	ncurl.easy_setopt(h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)r.left);
	ncurl.easy_setopt(h, CURLOPT_USE_SSL,
			 s->smtp.tls == NOTICE_TLS_NONE ? (long)CURLUSESSL_NONE
							: (long)CURLUSESSL_ALL);
	if (s->smtp.ca_file)
		ncurl.easy_setopt(h, CURLOPT_CAINFO, s->smtp.ca_file);
	if (s->smtp.user) {
		ncurl.easy_setopt(h, CURLOPT_USERNAME, s->smtp.user);
		ncurl.easy_setopt(h, CURLOPT_PASSWORD, s->smtp.password ? s->smtp.password : "");
	}
	ncurl.easy_setopt(h, CURLOPT_VERBOSE, 1L);
	ncurl.easy_setopt(h, CURLOPT_DEBUGFUNCTION, smtp_debug_cb);
	ncurl.easy_setopt(h, CURLOPT_DEBUGDATA, &talk);
	rc = ncurl.easy_perform(h);
	smtp_classify(res, h, rc, errbuf);
	ncurl.easy_cleanup(h);
	ncurl.slist_free_all(rcpts);
	free(mfrom);
}

struct http_reply {
	struct strbuf body;
	long retry_after;
	int capped;
};

static size_t http_write_cb(char *data, size_t size, size_t nmemb, void *p)
{
	struct http_reply *r = p;
	size_t n = size * nmemb;

	if (r->body.len + n > RESPONSE_MAX) {
		r->capped = 1;
		return 0; /* stop reading: nobody needs a webhook's 10 MB answer */
	}
	strbuf_add(&r->body, data, n);
	return n;
}

static size_t http_header_cb(char *data, size_t size, size_t nmemb, void *p)
{
	struct http_reply *r = p;
	size_t n = size * nmemb;
	struct strbuf line = STRBUF_INIT;

	strbuf_add(&line, data, n < 512 ? n : 512);
	strbuf_trim(&line);
	if (!strncasecmp(line.buf, "Retry-After:", 12)) {
		const char *v = line.buf + 12;
		char *end;
		long secs;

		while (*v == ' ' || *v == '\t')
			v++;
		secs = strtol(v, &end, 10);
		if (end == v || *end) {
			time_t when = ncurl.getdate(v, NULL);

			secs = when > 0 ? (long)(when - time(NULL)) : 0;
		}
		r->retry_after = secs < 0 ? 0 : secs > RETRY_AFTER_MAX ? RETRY_AFTER_MAX : secs;
	}
	strbuf_release(&line);
	return n;
}

static const char *hook_secret(const struct notice_settings *s, const char *url)
{
	size_t i;

	for (i = 0; i < s->webhooks_nr; i++)
		if (s->webhooks[i].url && !strcmp(s->webhooks[i].url, url))
			return s->webhooks[i].secret;
	return NULL;
}

static void http_classify(struct attempt_result *res, CURL *h, CURLcode rc,
			    const struct http_reply *reply, const char *errbuf)
{
	long code = 0;

	ncurl.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	strbuf_reset(&res->why);
	if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && reply->capped && code)) {
		transport_error(res, rc, errbuf);
		return;
	}
	if (code >= 200 && code < 300) {
		res->what = ATTEMPT_SENT;
		return;
	}
	strbuf_addf(&res->why, "HTTP %ld", code);
	if (code >= 300 && code < 400) {
		strbuf_addstr(&res->why, ": redirect not followed");
	} else if (reply->body.len) {
		struct strbuf w = STRBUF_INIT;

		set_words(&w, reply->body.buf, reply->body.len);
		strbuf_addf(&res->why, ": %s", w.buf);
		strbuf_release(&w);
	}
	res->what = code == 429 || code >= 500 ? ATTEMPT_RETRY : ATTEMPT_FAILED;
	res->retry_after = reply->retry_after;
}

static void hook_send(struct attempt_result *res, const struct notice_settings *s,
			const struct outbox_notice *n)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	struct http_reply reply = {STRBUF_INIT, 0, 0};
	struct curl_slist *hdrs = NULL;
	struct strbuf hdr = STRBUF_INIT;
	const char *secret = hook_secret(s, n->url);
	long t = s->http_timeout > 0 ? s->http_timeout : 30;
	struct deadline d;
	CURL *h = attempt_start(res);
	CURLcode rc;

	if (!h)
		return;
	hdrs = ncurl.slist_append(hdrs, "Content-Type: application/json");
	hdrs = ncurl.slist_append(hdrs, "Expect:");
	strbuf_addf(&hdr, "X-Nextbot-Event: %s", n->kind);
	hdrs = ncurl.slist_append(hdrs, hdr.buf);
	strbuf_reset(&hdr);
	strbuf_addf(&hdr, "X-Nextbot-Delivery: %s", n->id);
	hdrs = ncurl.slist_append(hdrs, hdr.buf);
	if (secret) {
		strbuf_reset(&hdr);
		strbuf_addstr(&hdr, "X-Nextbot-Signature: ");
		hook_signature(&hdr, secret, n->body, strlen(n->body));
		hdrs = ncurl.slist_append(hdrs, hdr.buf);
	}
	curl_common(h, t, t, errbuf, &d);
	ncurl.easy_setopt(h, CURLOPT_URL, n->url);
	ncurl.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	ncurl.easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	ncurl.easy_setopt(h, CURLOPT_USERAGENT, "nextbot/" NEXTBOT_VERSION);
	ncurl.easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	ncurl.easy_setopt(h, CURLOPT_POSTFIELDS, n->body);
	ncurl.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(n->body));
	ncurl.easy_setopt(h, CURLOPT_WRITEFUNCTION, http_write_cb);
	ncurl.easy_setopt(h, CURLOPT_WRITEDATA, &reply);
	ncurl.easy_setopt(h, CURLOPT_HEADERFUNCTION, http_header_cb);
	ncurl.easy_setopt(h, CURLOPT_HEADERDATA, &reply);
	rc = ncurl.easy_perform(h);
	http_classify(res, h, rc, &reply, errbuf);
	ncurl.easy_cleanup(h);
	ncurl.slist_free_all(hdrs);
	strbuf_release(&hdr);
	strbuf_release(&reply.body);
}

static time_t now_of(const struct notice_settings *s)
{
	return s->now ? s->now : time(NULL);
}

static long backoff(const struct notice_settings *s, int attempts)
{
	long delay = s->backoff_min > 0 ? s->backoff_min : 300;
	int i;

	for (i = 1; i < attempts && delay < BACKOFF_MAX; i++)
		delay *= 2;
	return delay < BACKOFF_MAX ? delay : BACKOFF_MAX;
}

/* Sets the notice's state from its recipients after an attempt; `retry` is why not all went. */
static void settle(struct outbox_notice *n, const struct notice_settings *s,
		     const struct attempt_result *retry)
{
	struct strbuf errors = STRBUF_INIT;
	long give_up = s->give_up_after > 0 ? s->give_up_after : 4 * 86400;
	time_t now = now_of(s);
	size_t i, queued = 0, sent = 0;

	for (i = 0; i < n->rcpts_nr; i++) {
		queued += n->rcpts[i].state == OUTBOX_QUEUED;
		sent += n->rcpts[i].state == OUTBOX_SENT;
	}
	if (queued && now - n->created >= give_up) {
		for (i = 0; i < n->rcpts_nr; i++) {
			if (n->rcpts[i].state != OUTBOX_QUEUED)
				continue;
			n->rcpts[i].state = OUTBOX_FAILED;
			free(n->rcpts[i].error);
			n->rcpts[i].error = xstrfmt("gave up after %d attempts: %s", n->attempts,
						    retry ? retry->why.buf : "");
		}
		queued = 0;
	}
	if (queued) {
		long delay = backoff(s, n->attempts);

		if (retry && retry->retry_after > delay)
			delay = retry->retry_after;
		n->next_try = now + delay;
		outbox_notice_set_error(n, retry ? retry->why.buf : NULL);
		return;
	}
	for (i = 0; i < n->rcpts_nr; i++)
		if (n->rcpts[i].state == OUTBOX_FAILED)
			strbuf_addf(&errors, "%s%s: %s", errors.len ? "; " : "", n->rcpts[i].to,
				    n->rcpts[i].error ? n->rcpts[i].error : "failed");
	n->state = sent ? OUTBOX_SENT : OUTBOX_FAILED;
	outbox_notice_set_error(n, errors.len ? errors.buf : NULL);
	strbuf_release(&errors);
}

static void rcpt_done(struct outbox_rcpt *r, const struct attempt_result *res)
{
	r->state = res->what == ATTEMPT_SENT ? OUTBOX_SENT : OUTBOX_FAILED;
	free(r->error);
	r->error = res->what == ATTEMPT_SENT ? NULL : xstrdup(res->why.buf);
}

static int flush_mail(struct outbox_notice *n, const struct notice_settings *s, int *down)
{
	struct attempt_result res = ATTEMPT_RESULT_INIT;
	int ret = 0, retry = 0;
	size_t i;

	for (i = 0; i < n->rcpts_nr && !retry; i++) {
		struct outbox_rcpt *r = &n->rcpts[i];

		if (r->state != OUTBOX_QUEUED)
			continue;
		strbuf_reset(&res.why);
		smtp_send(&res, s, n->from, r->to, n->body, n->body8);
		if (res.what == ATTEMPT_RETRY) {
			retry = 1;
			*down = res.unreachable;
			break;
		}
		rcpt_done(r, &res);
		if (res.what == ATTEMPT_SENT) {
			log_verbose("notice %.12s: mail to %s accepted", n->id, r->to);
			n->sent = now_of(s);
			/* Recorded at once: only a crash right here can send it twice. */
			if ((ret = outbox_notice_save(n, s->outbox_dir)) < 0)
				goto done;
		} else {
			log_warn("notice %.12s: mail to %s refused: %s", n->id, r->to, r->error);
		}
	}
	settle(n, s, retry ? &res : NULL);
done:
	strbuf_release(&res.why);
	return ret;
}

/* One POST; sets *down when the URL did not answer at all (timed out, refused). */
static void flush_hook(struct outbox_notice *n, const struct notice_settings *s, int *down)
{
	struct attempt_result res = ATTEMPT_RESULT_INIT;
	size_t i;

	hook_send(&res, s, n);
	*down = res.what == ATTEMPT_RETRY && res.unreachable;
	for (i = 0; i < n->rcpts_nr; i++) {
		if (n->rcpts[i].state != OUTBOX_QUEUED || res.what == ATTEMPT_RETRY)
			continue;
		rcpt_done(&n->rcpts[i], &res);
		if (res.what == ATTEMPT_SENT)
			n->sent = now_of(s);
	}
	if (res.what == ATTEMPT_FAILED)
		log_warn("notice %.12s: webhook %s refused: %s", n->id, n->url, res.why.buf);
	settle(n, s, res.what == ATTEMPT_RETRY ? &res : NULL);
	strbuf_release(&res.why);
}

/*
 * What this flush learnt about the servers: a mail server or a webhook URL that
 * did not answer at all is not tried again in the same flush (each try would cost
 * the whole timeout); its notices wait for the next one.
 */
struct servers_down {
	int smtp;
	struct strvec hooks;  /* webhook URLs */
};

static int flush_one(const struct notice_settings *s, const char *id, int all,
		       struct servers_down *down, struct notice_flush_stats *st)
{
	struct outbox_notice n;
	char *path = outbox_notice_path(s->outbox_dir, id);
	int ret = 0, mail;

	if (outbox_notice_load(&n, path) < 0) {
		struct strbuf why = STRBUF_INIT;

		/* never sent, never dropped in silence: kept aside, listed as damaged */
		if (outbox_set_aside_if_damaged(s->outbox_dir, id, &why) == 1) {
			log_warn("outbox: notice %s is damaged (%s): kept as %s/damaged/%s.json",
				 id, why.buf, s->outbox_dir, id);
			st->damaged++;
		} else {
			log_warn("%s", nb_error_last());
		}
		strbuf_release(&why);
		free(path);
		return 0;
	}
	mail = outbox_channel_parse(n.channel) == OUTBOX_CHANNEL_MAIL;
	if (n.state != OUTBOX_QUEUED)
		goto done;
	if ((!all && n.next_try > now_of(s)) || (mail && (!s->smtp.url || down->smtp)) ||
	    (!mail && n.url && strvec_contains(&down->hooks, n.url))) {
		st->skipped++;
		goto done;
	}
	n.attempts++;
	if (mail) {
		ret = flush_mail(&n, s, &down->smtp);
	} else {
		int hook_down = 0;

		flush_hook(&n, s, &hook_down);
		if (hook_down && n.url) {
			log_warn("webhook %s does not answer: its other notices wait for the "
				 "next delivery", n.url);
			strvec_push(&down->hooks, n.url);
		}
	}
	if (!ret)
		ret = outbox_notice_save(&n, s->outbox_dir);
	if (n.state == OUTBOX_SENT)
		st->sent++;
	else if (n.state == OUTBOX_FAILED)
		st->failed++;
	else
		st->deferred++;
done:
	outbox_notice_release(&n);
	free(path);
	return ret;
}

int notice_outbox_flush(const struct notice_settings *s, int all, struct notice_flush_stats *out)
{
	struct notice_flush_stats st = {0};
	struct servers_down down = { 0, STRVEC_INIT };
	char **ids = NULL;
	size_t nr = 0, i;
	int ret;

	if (s->smtp.url && s->smtp.tls == NOTICE_TLS_IMPLICIT &&
	    strncasecmp(s->smtp.url, "smtps://", 8))
		return nb_error_set(NB_EINVALID, "notify.smtp: tls implicit needs an smtps:// url");
	/* in the order the story happened (a night's moves, its gate, its breakage) */
	if ((ret = outbox_ids_ordered(&ids, &nr, s->outbox_dir)) < 0)
		return ret;
	for (i = 0; i < nr && ret >= 0; i++)
		ret = flush_one(s, ids[i], all, &down, &st);
	outbox_ids_free(ids, nr);
	strvec_clear(&down.hooks);
	if (out)
		*out = st;
	return ret;
}
