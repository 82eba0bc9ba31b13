/* Polling an IMAP mailbox with libcurl: new mails by UID, each marked once it was handled. */
#include "notify/curlload.h"
#include <stdlib.h>
#include <string.h>

#include "notify/inbox.h"
#include "util/error.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define SEARCH_MAX (1u << 20) /* bytes of a SEARCH answer read */
#define POLL_MAX 500	      /* mails fetched in one poll; the rest wait for the next */

struct sink {
	struct strbuf data;
	size_t cap;
	int truncated;
};

static size_t sink_cb(char *p, size_t size, size_t nmemb, void *data)
{
	struct sink *s = data;
	size_t n = size * nmemb;

	if (s->data.len + n > s->cap) { /* keep reading (the connection stays usable) */
		if (s->data.len < s->cap)
			strbuf_add(&s->data, p, s->cap - s->data.len);
		s->truncated = 1;
		return n;
	}
	strbuf_add(&s->data, p, n);
	return n;
}

struct imap_session {
	CURL *h;
	const struct inbox_imap *imap;
	struct strbuf base; /* the url without a trailing '/' */
	char errbuf[CURL_ERROR_SIZE];
};

static void session_opts(struct imap_session *s)
{
	const struct inbox_imap *imap = s->imap;
	CURL *h = s->h;

	ncurl.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	ncurl.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "imap,imaps");
	ncurl.easy_setopt(h, CURLOPT_CONNECTTIMEOUT,
			 imap->connect_timeout > 0 ? imap->connect_timeout : 30L);
	ncurl.easy_setopt(h, CURLOPT_TIMEOUT, imap->timeout > 0 ? imap->timeout : 300L);
	ncurl.easy_setopt(h, CURLOPT_SERVER_RESPONSE_TIMEOUT,
			 imap->connect_timeout > 0 ? imap->connect_timeout : 60L);
	/* a server that stops sending mid-mail is given up well before the whole timeout */
	ncurl.easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
	ncurl.easy_setopt(h, CURLOPT_LOW_SPEED_TIME, 60L);
	ncurl.easy_setopt(h, CURLOPT_ERRORBUFFER, s->errbuf);
	ncurl.easy_setopt(h, CURLOPT_USE_SSL,
			 imap->tls == NOTICE_TLS_NONE ? (long)CURLUSESSL_NONE
						       : (long)CURLUSESSL_ALL);
	if (imap->ca_file)
		ncurl.easy_setopt(h, CURLOPT_CAINFO, imap->ca_file);
	ncurl.easy_setopt(h, CURLOPT_USERNAME, imap->user ? imap->user : "");
	ncurl.easy_setopt(h, CURLOPT_PASSWORD, imap->password ? imap->password : "");
}

/* One request on the session's connection; the answer (or the mail) into `out`. */
static int request(struct imap_session *s, const char *url, const char *custom, struct sink *out)
{
	CURLcode rc;

	s->errbuf[0] = '\0';
	ncurl.easy_setopt(s->h, CURLOPT_URL, url);
	ncurl.easy_setopt(s->h, CURLOPT_CUSTOMREQUEST, custom);
	ncurl.easy_setopt(s->h, CURLOPT_WRITEFUNCTION, sink_cb);
	ncurl.easy_setopt(s->h, CURLOPT_WRITEDATA, out);
	rc = ncurl.easy_perform(s->h);
	if (rc == CURLE_OK)
		return 0;
	if (rc == CURLE_USE_SSL_FAILED)
		return nb_error_set(NB_EREFUSED, "%s: TLS required but the server does not offer "
						 "STARTTLS", s->imap->url);
	if (rc == CURLE_LOGIN_DENIED)
		return nb_error_set(NB_EREFUSED, "%s: login refused for %s (check inbox.user "
						 "and its password)", s->imap->url, s->imap->user);
	if (rc == CURLE_REMOTE_FILE_NOT_FOUND || rc == CURLE_QUOTE_ERROR)
		return nb_error_set(NB_ENOTFOUND, "%s: %s", url, *s->errbuf ? s->errbuf :
						  ncurl.easy_strerror(rc));
	return nb_error_set(NB_ERROR, "%s: %s", s->imap->url,
			    *s->errbuf ? s->errbuf : ncurl.easy_strerror(rc));
}

static int cmp_uid(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

/* The UIDs of "* SEARCH 3 7 12" lines, ascending. */
static void search_uids(unsigned long **out, size_t *nr, const char *text)
{
	size_t alloc = 0;
	const char *p = text;

	*out = NULL;
	*nr = 0;
	while ((p = strstr(p, "* SEARCH"))) {
		p += 8;
		while (*p == ' ') {
			char *end;
			unsigned long uid;

			p++;
			uid = strtoul(p, &end, 10);
			if (end == p)
				break;
			if (uid) {
				ALLOC_GROW(*out, *nr + 1, alloc);
				(*out)[(*nr)++] = uid;
			}
			p = end;
		}
	}
	if (*nr)
		qsort(*out, *nr, sizeof(**out), cmp_uid);
}

/* \Seen and the keyword for a mail handled; \Seen alone where keywords are not kept. */
static int mark(struct imap_session *s, unsigned long uid)
{
	struct sink ignore = { STRBUF_INIT, 1 << 16, 0 };
	char *cmd = xstrfmt("UID STORE %lu +FLAGS.SILENT (\\Seen %s)", uid, INBOX_IMAP_KEYWORD);
	int ret = request(s, s->base.buf, cmd, &ignore);

	if (ret == NB_ENOTFOUND || ret == NB_ERROR) {
		log_warn("inbox: cannot keep the keyword %s on mail %lu (%s): marking it seen "
			 "only; it is skipped by its Message-ID from now on",
			 INBOX_IMAP_KEYWORD, uid, nb_error_last());
		free(cmd);
		cmd = xstrfmt("UID STORE %lu +FLAGS.SILENT (\\Seen)", uid);
		ret = request(s, s->base.buf, cmd, &ignore);
	}
	free(cmd);
	strbuf_release(&ignore.data);
	return ret;
}

int inbox_imap_poll(struct inbox_imap_stats *out, const struct inbox_imap *imap,
		    inbox_imap_fn fn, void *data)
{
	struct imap_session s = { NULL, imap, STRBUF_INIT, "" };
	struct sink search = { STRBUF_INIT, SEARCH_MAX, 0 };
	unsigned long *uids = NULL;
	size_t nr = 0, i;
	int ret;

	memset(out, 0, sizeof(*out));
	if ((ret = notify_curl_load()) < 0)
		return ret;
	if (!(s.h = ncurl.easy_init()))
		return nb_error_set(NB_ERROR, "cannot start libcurl");
	strbuf_addstr(&s.base, imap->url);
	while (s.base.len > 8 && s.base.buf[s.base.len - 1] == '/')
		strbuf_setlen(&s.base, s.base.len - 1);
	session_opts(&s);
	if ((ret = request(&s, s.base.buf, "UID SEARCH UNDELETED UNKEYWORD " INBOX_IMAP_KEYWORD,
			   &search)) < 0)
		goto done;
	search_uids(&uids, &nr, search.data.buf);
	out->found = (int)nr;
	for (i = 0; i < nr && i < POLL_MAX; i++) {
		struct sink mail = { STRBUF_INIT, INBOX_MAIL_MAX, 0 };
		char *url = xstrfmt("%s/;UID=%lu", s.base.buf, uids[i]);
		int r;

		ret = request(&s, url, NULL, &mail);
		free(url);
		if (ret == NB_ENOTFOUND) { /* expunged since the search */
			strbuf_release(&mail.data);
			ret = 0;
			continue;
		}
		if (ret < 0) {
			strbuf_release(&mail.data);
			goto done;
		}
		r = fn(data, mail.data.buf, mail.data.len);
		strbuf_release(&mail.data);
		if (r < 0) { /* the caller cannot go on: this one and the rest stay new */
			out->left += (int)(nr - i);
			ret = 0;
			goto done;
		}
		if (r > 0) {
			out->left++;
			continue;
		}
		if ((ret = mark(&s, uids[i])) < 0)
			goto done;
		out->handled++;
	}
	if (nr > POLL_MAX)
		out->left += (int)(nr - POLL_MAX);
done:
	free(uids);
	strbuf_release(&search.data);
	strbuf_release(&s.base);
	ncurl.easy_cleanup(s.h);
	return ret;
}
