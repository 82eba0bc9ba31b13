/* The compiler cache around a night's checks and a trial's: its service started, then stopped. */
#include <stdlib.h>

#include "bot/core/botutil.h"
#include "bot/config/config.h"
#include "bot/night/night.h"
#include "cc/cc.h"
#include "util/error.h"
#include "util/log.h"
#include "util/size.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

void night_cc_start(struct night *n)
{
	const struct config *cfg = n->cfg;
	char *run_dir, *jobs_dir, *token_file;
	const char *hide[4] = { cfg->workdir, cfg->runner.cache.dir, n->config_abs, NULL };
	struct cc_service_opts o = {
		.exe = bot_self_exe(),
		.store = cfg->runner.cache.dir,
		.max = cfg->runner.cache.max,
		.min_free = cfg->runner.min_free,
		.user = cfg->runner.user,
		.bwrap = cfg->runner.bwrap,
		.shown = (const char *const *)cfg->runner.read_only.v,
		.hide = hide,
		.limits = { .memory = cfg->runner.limits.memory,
			    .processes = cfg->runner.limits.processes,
			    .fsize = cfg->runner.limits.file_size,
			    .cpu = cfg->runner.limits.cpu },
	};

	n->cc = NULL;
	if (!cfg->runner.cache.on || cfg->runner.sandbox != CONFIG_SANDBOX_BWRAP)
		return;
	/* in workers/, which the runner user passes through (0711), and gc leaves alone */
	run_dir = xstrfmt("%s/workers/.cc", cfg->workdir);
	jobs_dir = xstrfmt("%s/workers/.cc-jobs", cfg->workdir);
	o.run_dir = run_dir;
	o.jobs_dir = jobs_dir;
	o.listen = cfg->runner.cache.listen;
	/* the nodes' relays read it; in workers/, but in no worker: no box shows it */
	token_file = xstrfmt("%s/workers/.cc-token", cfg->workdir);
	o.token_file = token_file;
	if (cc_service_start(&n->cc, &o) < 0)
		log_warn("%s; building without it", nb_error_last());
	free(run_dir);
	free(jobs_dir);
	free(token_file);
}

void night_cc_stop(struct night *n)
{
	struct strbuf size = STRBUF_INIT;
	struct cc_stats st;

	if (!n->cc)
		return;
	cc_service_stop(n->cc, &st);
	n->cc = NULL;
	size_format(&size, st.bytes);
	log_info("compiler cache: %ld compiles asked, %ld answered from the store (%ld by a "
		 "manifest, not preprocessed; %ld asked for one in vain), %ld compiled "
		 "and stored, %ld failed there and %ld refused (each compiled in its own box); "
		 "the store holds %s", st.requests, st.hits, st.direct_hits, st.direct_misses,
		 st.compiled, st.failed, st.refused, size.buf);
	if (n->cfg->runner.cache.listen)
		log_info("compiler cache: %ld connections of the nodes' relays over TCP, %ld "
			 "without the night's token (closed unread)", st.remote,
			 st.remote_refused);
	strbuf_release(&size);
}
