/*
 * libcurl, loaded when the first mail, webhook or IMAP request is made (dlopen),
 * not when nextbot starts: libcurl brings some 30 libraries of its own (gnutls,
 * krb5, ldap, ...) whose loading cost every nextbot process about half its start,
 * and most processes (the checkout worker, status, a night without delivery) never
 * talk to a server.  Internal to notify/ (deliver.c, imap.c); bot/ starts and stops
 * it through notice.h's notify_global_init() and notify_global_cleanup().
 */
#ifndef NOTIFY_CURLLOAD_H
#define NOTIFY_CURLLOAD_H

#include <curl/curl.h>

/* The libcurl functions notify/ calls, resolved from the loaded library. */
struct notify_curl {
	CURLcode (*global_init)(long flags);
	void (*global_cleanup)(void);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *h, CURLoption option, ...);
	CURLcode (*easy_perform)(CURL *h);
	CURLcode (*easy_getinfo)(CURL *h, CURLINFO info, ...);
	void (*easy_cleanup)(CURL *h);
	const char *(*easy_strerror)(CURLcode rc);
	struct curl_slist *(*slist_append)(struct curl_slist *list, const char *s);
	void (*slist_free_all)(struct curl_slist *list);
	time_t (*getdate)(const char *p, const time_t *unused);
};

/* Valid once notify_curl_load() returned 0; never unloaded. */
extern struct notify_curl ncurl;

/*
 * Loads libcurl and runs curl_global_init() once per process (thread-safe);
 * later calls return the first one's result.  A missing libcurl is an error that
 * names the library and what needs it.
 */
int notify_curl_load(void);

#endif
