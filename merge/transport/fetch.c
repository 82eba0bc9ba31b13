/* Fetch of the base and trees into refs/feeds/<name>, one connection per url. */
#include <fnmatch.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include <git2.h>

#include "merge/transport/fetch_int.h"
#include "merge/transport/localfetch_int.h"
#include "merge/git/repohandle_int.h"
#include "merge/transport/transport.h"
#include "merge/repo/repo.h"
#include "merge/transport/watch_int.h"
#include "util/error.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

const char *fetch_state_name(enum fetch_state s)
{
	switch (s) {
	case FETCH_FETCHED: return "fetched";
	case FETCH_STALE: return "stale";
	case FETCH_FAILED: return "fetch-failed";
	case FETCH_REFUSED: return "refused";
	}
	return "?";
}

void fetch_result_release(struct fetch_result *r)
{
	if (!r)
		return;
	free(r->reason);
	r->reason = NULL;
}

const char *fetch_never_merge_match(const char *const *never_merge, const char *name,
				    const char *branch)
{
	size_t i;

	for (i = 0; never_merge && never_merge[i]; i++) {
		if ((name && fnmatch(never_merge[i], name, 0) == 0) ||
		    (branch && fnmatch(never_merge[i], branch, 0) == 0))
			return never_merge[i];
	}
	return NULL;
}

/* Credentials for libgit2; gives up after a few rounds so a bad token cannot loop. */
int fetch_credentials(git_credential **out, const char *url, const char *user_from_url,
		      unsigned int allowed, void *payload)
{
	struct fetch_cred_state *cs = payload;
	const char *token;

	if (++cs->tries > 3 || !cs->creds)
		return GIT_PASSTHROUGH;
	if (allowed & GIT_CREDENTIAL_SSH_KEY) {
		const char *user = user_from_url ? user_from_url : "git";

		if (cs->creds->ssh_key)
			return git_credential_ssh_key_new(out, user, NULL, cs->creds->ssh_key,
							  NULL);
		return git_credential_ssh_key_from_agent(out, user);
	}
	if ((allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT) && cs->creds->token_env &&
	    (token = getenv(cs->creds->token_env)) && *token)
		return git_credential_userpass_plaintext_new(
			out, user_from_url ? user_from_url : "x-access-token", token);
	return GIT_PASSTHROUGH;
}

char *fetch_trust(const struct fetch_creds *creds, const char *url)
{
	if (!creds || !creds->ca_file || !str_starts_with(url, "https://"))
		return NULL;
	if (git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, creds->ca_file, NULL) < 0)
		return xstrfmt("git.ca_file %s: %s", creds->ca_file, merge_git_error());
	return NULL;
}

/* "ssh://[user@]host[:port]/path" and "[user@]host:path" are ssh; the port or 22. */
static int ssh_host(const char *url, char *host, size_t size, long *port)
{
	const char *h = url, *end, *at;
	int scp = 0;
	size_t len;

	*port = 22;
	if (str_starts_with(url, "ssh://") || str_starts_with(url, "git+ssh://"))
		h = strstr(url, "://") + 3;
	else if (strstr(url, "://") || !strchr(url, ':'))
		return 0;
	else
		scp = 1;
	end = h + strcspn(h, scp ? ":" : ":/");
	if ((at = memchr(h, '@', (size_t)(end - h))))
		h = at + 1;
	if (!scp && *end == ':')
		*port = strtol(end + 1, NULL, 10);
	len = (size_t)(end - h);
	if (!len || len >= size)
		return 0;
	memcpy(host, h, len);
	host[len] = '\0';
	return 1;
}

char *fetch_why(const char *url, int error, const struct fetch_creds *creds)
{
	const char *msg = merge_git_error();
	char host[256];
	long port;

	if (strstr(msg, "early EOF"))
		return xstrfmt("%s: the server closed the connection before the pack was whole",
			       msg);
	if (strstr(msg, "unexpected redirect"))
		return xstrfmt("%s: the server redirected a request after the first one, and "
			       "libgit2 1.5 follows only a redirect of the first (point the url "
			       "where it leads)", msg);
	if (strstr(msg, "error parsing REF pkt-line"))
		return xstrfmt("%s: the server sent more than its refs, as a shallow repository "
			       "does: its history is cut short, and libgit2 1.5 cannot fetch from "
			       "it", msg);
	if (error != GIT_ECERTIFICATE)
		return xstrdup(msg);
	if (ssh_host(url, host, sizeof(host), &port))
		return xstrfmt("%s (the host key of %s port %ld is not in ~/.ssh/known_hosts, "
			       "or not the one there: a key that changed may be an attack; check "
			       "it, then add it, e.g. from ssh-keyscan -p %ld %s)",
			       msg, host, port, port, host);
	if (creds && creds->ca_file)
		return xstrfmt("%s (checked against git.ca_file %s)", msg, creds->ca_file);
	return xstrfmt("%s (checked against the system's CA certificates; git.ca_file "
		       "names others)", msg);
}

/* Where tree t's tip goes; caller frees. */
static char *ref_of(const struct fetch_tree *t)
{
	return t->ref ? xstrdup(t->ref) : xstrfmt("refs/feeds/%s", t->name);
}

/* Marks tree i failed: stale at its last fetched tip if it has one. */
static void fail(struct fetch_result *r, struct repo *repo, const struct fetch_tree *t,
		   const char *why)
{
	char *ref = ref_of(t);

	free(r->reason);
	if (repo_ref_get(repo, ref, &r->tip) == 0) {
		r->state = FETCH_STALE;
		r->reason = xstrfmt("fetch of %s %s failed (%s); using the last fetched tip",
				    t->url, t->branch, why);
	} else {
		r->state = FETCH_FAILED;
		nb_oid_clear(&r->tip);
		r->reason = xstrfmt("fetch of %s %s failed: %s", t->url, t->branch, why);
	}
	log_warn("%s: %s", t->name, r->reason);
	free(ref);
}

static int remote_has(const git_remote_head **heads, size_t nheads, const char *branch)
{
	char *want = xstrfmt("refs/heads/%s", branch);
	size_t i;
	int found = 0;

	for (i = 0; i < nheads && !found; i++)
		found = !strcmp(heads[i]->name, want) || !strcmp(heads[i]->name, branch);
	free(want);
	return found;
}

/*
 * What the fetch child tells its watcher, in watch.c's message format: a tree's
 * url started (code: its index), a tree's result (code: its index; text: "<state>
 * <tip or -> <reason>"), beats and the end.
 */
enum { MSG_START = WATCH_MSG_USER, MSG_RESULT };

static void send_result(int fd, uint32_t index, const struct fetch_result *r)
{
	struct strbuf text = STRBUF_INIT;

	strbuf_addf(&text, "%d %s %s", (int)r->state, nb_oid_is_null(&r->tip) ? "-" : r->tip.hex,
		    r->reason ? r->reason : "");
	watch_msg_send(fd, MSG_RESULT, (int32_t)index, text.buf);
	strbuf_release(&text);
}

/* Callback payload: the credentials' state and the pipe to the watcher (-1: none). */
struct payload {
	struct fetch_cred_state cs;
	int fd;
	time_t last_beat;
};

static int payload_credentials(git_credential **out, const char *url, const char *user,
				 unsigned int allowed, void *payload)
{
	return fetch_credentials(out, url, user, allowed, &((struct payload *)payload)->cs);
}

/* Data arrived: at most one beat a second tells the watcher the remote is alive. */
static void beat(struct payload *p)
{
	time_t now = time(NULL);

	if (p->fd >= 0 && now != p->last_beat) {
		p->last_beat = now;
		watch_msg_send(p->fd, WATCH_MSG_BEAT, 0, NULL);
	}
}

static int on_transfer(const git_indexer_progress *stats, void *payload)
{
	struct payload *p = payload;
	const struct fetch_creds *c = p->cs.creds;

	beat(p);
	if (c && c->max_bytes && stats->received_bytes > c->max_bytes) {
		git_error_set_str(GIT_ERROR_NET, "the remote sent more than the cap");
		return -1;
	}
	return 0;
}

static int on_sideband(const char *str, int len, void *payload)
{
	(void)str;
	(void)len;
	beat(payload);
	return 0;
}

/* The local copy's progress: a beat for the watcher, and the byte cap. */
static int on_copied(unsigned long long bytes, void *payload)
{
	struct payload *p = payload;
	const struct fetch_creds *c = p->cs.creds;

	beat(p);
	if (c && c->max_bytes && bytes > c->max_bytes) {
		git_error_set_str(GIT_ERROR_NET, "the remote sent more than the cap");
		return -1;
	}
	return 0;
}

/* The tip of refs/heads/<branch> in `src`; -1 when there is none. */
static int branch_tip(git_oid *out, git_repository *src, const char *branch)
{
	char *ref = xstrfmt("refs/heads/%s", branch);
	int error = git_reference_name_to_id(out, src, ref);

	free(ref);
	return error;
}

/* The trees to fetch, what each came to, which are done; one batch of fetches. */
struct fetch_job {
	struct fetch_result *out;
	char *done;
	struct repo *repo;
	const struct fetch_tree *trees;
	size_t n;
	const struct fetch_creds *creds;
};

/*
 * fetch_url() for a repository on this host (`path`): one copy of what is new for all
 * of its trees (merge/transport/localfetch_int.h), then their refs.
 */
static void fetch_local(const struct fetch_job *jb, size_t first, struct payload *pl,
			const char *path)
{
	struct fetch_result *out = jb->out;
	char *done = jb->done;
	struct repo *repo = jb->repo;
	const struct fetch_tree *trees = jb->trees;
	size_t n = jb->n;
	git_repository *git = repo_git(repo), *src = NULL;
	git_oid *tips = xcalloc(n, sizeof(*tips));
	size_t *which = xcalloc(n, sizeof(*which)), nr = 0, i, k;
	const char *url = trees[first].url;
	char *why = NULL;

	if (git_repository_open_ext(&src, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0)
		why = xstrdup(merge_git_error());
	for (i = first; i < n && !why; i++) {
		if (done[i] || strcmp(trees[i].url, url))
			continue;
		if (branch_tip(&tips[nr], src, trees[i].branch) < 0) {
			char *msg = xstrfmt("branch %s not found", trees[i].branch);

			fail(&out[i], repo, &trees[i], msg);
			free(msg);
			done[i] = 1;
			continue;
		}
		which[nr++] = i;
	}
	if (!why && nr && localfetch_copy(git, src, tips, nr, on_copied, pl) < 0)
		why = xstrdup(merge_git_error());
	for (i = first; i < n; i++) {
		if (!done[i] && !strcmp(trees[i].url, url) && why) {
			fail(&out[i], repo, &trees[i], why);
			done[i] = 1;
		}
	}
	for (k = 0; k < nr && !why; k++) {
		char *ref = ref_of(&trees[which[k]]);
		git_reference *r = NULL;

		i = which[k];
		done[i] = 1;
		if (git_reference_create(&r, git, ref, &tips[k], 1, "nextbot: fetch") < 0 ||
		    repo_ref_get(repo, ref, &out[i].tip) < 0)
			fail(&out[i], repo, &trees[i], merge_git_error());
		else
			out[i].state = FETCH_FETCHED;
		git_reference_free(r);
		free(ref);
	}
	git_repository_free(src);
	free(which);
	free(tips);
	free(why);
}

/* Fetches every not yet done tree whose url is trees[first].url. */
static void fetch_url(const struct fetch_job *jb, size_t first, int beat_fd)
{
	struct fetch_result *out = jb->out;
	char *done = jb->done;
	struct repo *repo = jb->repo;
	const struct fetch_tree *trees = jb->trees;
	size_t n = jb->n;
	const struct fetch_creds *creds = jb->creds;
	git_repository *git = repo_git(repo);
	git_remote *remote = NULL;
	git_remote_callbacks cb;
	git_fetch_options fo;
	git_remote_create_options ro;
	const git_remote_head **heads = NULL;
	struct payload pl = { { creds, 0 }, beat_fd, 0 };
	struct strvec_like { char **v; size_t nr; } specs = { NULL, 0 };
	git_strarray arr;
	size_t i, nheads = 0;
	const char *url = trees[first].url;
	char *why = NULL, *local = localfetch_path(url);
	int error;

	if (local) {
		fetch_local(jb, first, &pl, local);
		free(local);
		return;
	}
	specs.v = xcalloc(n, sizeof(char *));
	git_remote_create_options_init(&ro, GIT_REMOTE_CREATE_OPTIONS_VERSION);
	ro.repository = git;
	/* insteadOf rewriting leaks in libgit2 1.5 (pcre2 match data); urls are literal */
	ro.flags = GIT_REMOTE_CREATE_SKIP_INSTEADOF | GIT_REMOTE_CREATE_SKIP_DEFAULT_FETCHSPEC;
	git_remote_init_callbacks(&cb, GIT_REMOTE_CALLBACKS_VERSION);
	cb.credentials = payload_credentials;
	cb.transfer_progress = on_transfer;
	cb.sideband_progress = on_sideband;
	cb.payload = &pl;
	if ((why = fetch_trust(creds, url)))
		goto done;
	if ((error = git_remote_create_with_opts(&remote, url, &ro)) < 0 ||
	    (error = git_remote_connect(remote, GIT_DIRECTION_FETCH, &cb, NULL, NULL)) < 0 ||
	    (error = git_remote_ls(&heads, &nheads, remote)) < 0) {
		why = fetch_why(url, error, creds);
		goto done;
	}
	for (i = first; i < n; i++) {
		if (done[i] || strcmp(trees[i].url, url))
			continue;
		if (!remote_has(heads, nheads, trees[i].branch)) {
			char *msg = xstrfmt("branch %s not found", trees[i].branch);

			fail(&out[i], repo, &trees[i], msg);
			free(msg);
			done[i] = 1;
			continue;
		}
		{
			char *ref = ref_of(&trees[i]);

			specs.v[specs.nr++] = xstrfmt("+refs/heads/%s:%s", trees[i].branch, ref);
			free(ref);
		}
	}
	if (!specs.nr)
		goto done;
	arr.strings = specs.v;
	arr.count = specs.nr;
	git_fetch_options_init(&fo, GIT_FETCH_OPTIONS_VERSION);
	fo.callbacks = cb;
	fo.prune = GIT_FETCH_NO_PRUNE;
	fo.update_fetchhead = 0;
	fo.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
	if ((error = git_remote_fetch(remote, &arr, &fo, "nextbot: fetch")) < 0)
		why = fetch_why(url, error, creds);
done:
	for (i = first; i < n; i++) {
		char *ref;

		if (done[i] || strcmp(trees[i].url, url))
			continue;
		done[i] = 1;
		if (why) {
			fail(&out[i], repo, &trees[i], why);
			continue;
		}
		ref = ref_of(&trees[i]);
		if (repo_ref_get(repo, ref, &out[i].tip) == 0)
			out[i].state = FETCH_FETCHED;
		else
			fail(&out[i], repo, &trees[i], "no ref after fetch");
		free(ref);
	}
	for (i = 0; i < specs.nr; i++)
		free(specs.v[i]);
	free(specs.v);
	free(why);
	git_remote_free(remote);
}

/* ---- the child that fetches, and the watcher that gives up on a silent remote ---- */

/* The child: every url not done yet, in order; a message per start, beat and result. */
static void child(int fd, void *arg)
{
	const struct fetch_job *jb = arg;
	struct fetch_result *out = jb->out;
	const struct fetch_tree *trees = jb->trees;
	char *done = jb->done, *before = xmalloc(jb->n);
	size_t i, j, n = jb->n;

	for (i = 0; i < n; i++) {
		if (done[i])
			continue;
		memcpy(before, done, n);
		watch_msg_send(fd, MSG_START, (int32_t)i, NULL);
		log_progress("fetching %s (%s)", trees[i].name, trees[i].url);
		fetch_url(jb, i, fd);
		for (j = i; j < n; j++)
			if (done[j] && !before[j])
				send_result(fd, (uint32_t)j, &out[j]);
	}
	watch_msg_send(fd, WATCH_MSG_END, 0, NULL);
}

/* A result from the child becomes the caller's; -1 when it is not one. */
static int take(struct fetch_result *out, char *done, size_t n, const struct watch_msg *m)
{
	char *end, *tip, *reason;
	long state;

	if (m->code < 0 || (size_t)m->code >= n)
		return -1;
	state = strtol(m->text, &end, 10);
	if (end == m->text || *end != ' ' || state < 0 || state > FETCH_REFUSED)
		return -1;
	tip = end + 1;
	if (!(reason = strchr(tip, ' ')))
		return -1;
	*reason++ = '\0';
	free(out[m->code].reason);
	out[m->code].state = (enum fetch_state)state;
	nb_oid_clear(&out[m->code].tip);
	if (strcmp(tip, "-") && nb_oid_parse(&out[m->code].tip, tip) < 0)
		return -1;
	out[m->code].reason = *reason ? xstrdup(reason) : NULL;
	done[m->code] = 1;
	return 0;
}

/*
 * Follows one child until it ends, dies, or is silent for `idle_ms`; *current is
 * the tree whose url it was on (-1: none yet).  Returns 1 when it ended normally,
 * 0 when it was killed for silence, -1 when it died or broke the protocol.
 */
static int follow(long *current, int fd, pid_t pid, struct fetch_result *out, char *done,
		    size_t n, long idle_ms)
{
	struct watch_msg m;
	int rc;

	while ((rc = watch_next(&m, fd, pid, idle_ms)) == 1) {
		if (m.type == MSG_START)
			*current = m.code >= 0 && (size_t)m.code < n ? (long)m.code : -1;
		else if (m.type == MSG_RESULT && take(out, done, n, &m) < 0)
			return -1;
		else if (m.type == WATCH_MSG_END)
			return 1;
	}
	return rc;
}

/* The trees of the url the child was on (or all left, if none) fail with `why`. */
static void fail_rest(struct fetch_result *out, char *done, struct repo *repo,
			const struct fetch_tree *trees, size_t n, long current, const char *why)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (done[i] || (current >= 0 && strcmp(trees[i].url, trees[current].url)))
			continue;
		fail(&out[i], repo, &trees[i], why);
		done[i] = 1;
	}
}

static char *died_why(int status, int silent, long idle)
{
	if (silent)
		return xstrfmt("no data from the remote for %ld s; gave up", idle);
	if (WIFSIGNALED(status))
		return xstrfmt("the fetch process died of signal %d", WTERMSIG(status));
	return xstrfmt("the fetch process exited with status %d",
		       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/* One child after another until every tree has a result. */
static int watch(struct fetch_result *out, char *done, struct repo *repo,
		   const struct fetch_tree *trees, size_t n, const struct fetch_creds *creds)
{
	long idle = creds && creds->idle_timeout > 0 ? creds->idle_timeout : FETCH_IDLE_TIMEOUT;
	struct fetch_job jb = { out, done, repo, trees, n, creds };
	size_t i;

	for (i = 0; i < n && done[i]; i++)
		;
	while (i < n) {
		long current = -1;
		int fd, pid, status, how, err;
		char *why;

		if ((err = watch_spawn(&pid, &fd, child, &jb, "fetch")) < 0)
			return err;
		how = follow(&current, fd, pid, out, done, n, idle * 1000);
		close(fd);
		status = watch_reap(pid);
		if (how != 1) {
			/* SIGTERM/SIGINT came from outside (systemd stopping us): stop here */
			int stopped = how < 0 && WIFSIGNALED(status) &&
				      (WTERMSIG(status) == SIGTERM || WTERMSIG(status) == SIGINT);

			why = died_why(status, how == 0, idle);
			fail_rest(out, done, repo, trees, n, stopped ? -1 : current, why);
			free(why);
		}
		for (; i < n && done[i]; i++)
			;
	}
	return 0;
}

int fetch_trees(struct fetch_result *out, struct repo *repo,
		const struct fetch_tree *trees, size_t n, const struct fetch_creds *creds,
		const char *const *never_merge)
{
	char *done = xcalloc(n ? n : 1, 1);
	size_t i;
	int err;

	for (i = 0; i < n; i++) {
		const char *pat = fetch_never_merge_match(never_merge, trees[i].name,
							  trees[i].branch);

		nb_oid_clear(&out[i].tip);
		if (pat) {
			out[i].state = FETCH_REFUSED;
			out[i].reason = xstrfmt("never_merge '%s' matches %s (%s)", pat,
						trees[i].name, trees[i].branch);
			done[i] = 1;
		}
	}
	err = watch(out, done, repo, trees, n, creds);
	free(done);
	return err;
}
