/* libcurl opened at the first request (dlopen): a process that sends nothing loads none of it. */
#include <stdio.h>
#include <string.h>
#include <dlfcn.h>
#include <pthread.h>

#include "notify/curlload.h"
#include "notify/notice.h"
#include "util/error.h"
#include "util/banned.h"

#ifndef NB_LIBCURL_SONAME
#define NB_LIBCURL_SONAME "libcurl.so.4"
#endif

struct notify_curl ncurl;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_error[512];
static int loaded;

/* dlsym's void * to a function pointer: through memcpy, as ISO C has no such cast. */
#define RESOLVE(lib, field, name)                                               \
	do {                                                                    \
		void *sym = dlsym(lib, name);                                   \
		if (!sym) {                                                     \
			missing = name;                                         \
			goto done;                                              \
		}                                                               \
		memcpy(&ncurl.field, &sym, sizeof(ncurl.field));                \
	} while (0)

static void load(void)
{
	const char *missing = NULL;
	void *lib = dlopen(NB_LIBCURL_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!lib) /* the same ABI, built on GnuTLS (Debian's libcurl3-gnutls) */
		lib = dlopen("libcurl-gnutls.so.4", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(load_error, sizeof(load_error),
			 "cannot load libcurl (" NB_LIBCURL_SONAME " or libcurl-gnutls.so.4), "
			 "needed for mail, webhooks and IMAP "
			 "(install libcurl4): %s", dlerror());
		return;
	}
	RESOLVE(lib, global_init, "curl_global_init");
	RESOLVE(lib, global_cleanup, "curl_global_cleanup");
	RESOLVE(lib, easy_init, "curl_easy_init");
	RESOLVE(lib, easy_setopt, "curl_easy_setopt");
	RESOLVE(lib, easy_perform, "curl_easy_perform");
	RESOLVE(lib, easy_getinfo, "curl_easy_getinfo");
	RESOLVE(lib, easy_cleanup, "curl_easy_cleanup");
	RESOLVE(lib, easy_strerror, "curl_easy_strerror");
	RESOLVE(lib, slist_append, "curl_slist_append");
	RESOLVE(lib, slist_free_all, "curl_slist_free_all");
	RESOLVE(lib, getdate, "curl_getdate");
	if (ncurl.global_init(CURL_GLOBAL_DEFAULT)) {
		snprintf(load_error, sizeof(load_error), "cannot initialise libcurl");
		return;
	}
	loaded = 1;
done:
	if (missing)
		snprintf(load_error, sizeof(load_error), "%s has no %s: %s", NB_LIBCURL_SONAME,
			 missing, dlerror());
}

int notify_curl_load(void)
{
	pthread_once(&load_once, load);
	return loaded ? 0 : nb_error_set(NB_ERROR, "%s", load_error);
}

int notify_global_init(void)
{
	return 0; /* libcurl is loaded and started by the first request */
}

void notify_global_cleanup(void)
{
	if (loaded)
		ncurl.global_cleanup();
}
