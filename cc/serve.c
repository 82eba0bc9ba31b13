/* The compile service: answers shims from the store, or compiles in a box of its own. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cc/cc.h"
#include "cc/cc_int.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/log.h"
#include "util/runcmd.h"
#include "util/sha256.h"
#include "util/strbuf.h"
#include "util/strvec.h"
#include "util/xalloc.h"
#include "util/banned.h"

/*
 * Why a build cannot choose what another build reads.  An entry is written here
 * only, under a key that names everything its compile read that differs from box
 * to box: the compiler (a program only root may change, by its bytes), the
 * options, the locale, the working directory, the hash of the box's
 * `-E -fdirectives-only` text (clang: -frewrite-includes), and the path and hash
 * of every file that text came from in a place of the box's own (the worker tree,
 * /tmp, ...).  On a miss those files are asked for, checked against their hashes
 * and laid out at their paths in a box of the service's (the system read-only, as
 * in every box; nothing of any build but them); the compiler preprocesses there
 * again, and only when its text is the key's does its object count: the real
 * compiler's output for exactly the inputs the key names.  A request can name any
 * key; it cannot choose the bytes stored for it.  A compile that fails there is
 * neither stored nor answered with: the shim compiles itself, so a failure always
 * comes from the box that asked.
 *
 * Direct mode keeps that: a manifest (which files, with which hashes, and which
 * folders searched, make which key) is written here only, from a compile of the
 * service's own whose text was the key's, under a direct key of what the shim knows
 * before preprocessing (the key's parts but the text and files, and the source's
 * hash).  No request writes one.  A shim that finds one holding in its box (every
 * file the same, nothing new that the compiler would find first: cc/direct.c)
 * sends the request the manifest names without preprocessing; what it gets is still
 * the entry of that key, and a miss is compiled and checked as any other.
 */

#define MAX_CONNECTIONS 64
#define CHECK_NAME "nextbot-cc-check.i"
#define SEARCH_NAME "nextbot-cc-check.v" /* the check's -v messages: the folders searched */
#define OUT_NAME "nextbot-cc-out.o"
/* direct mode's probe: a header poisoning __has_include, and the preprocessor's verdict */
#define POISON_NAME "nextbot-cc-poison.h"
#define PROBE_NAME "nextbot-cc-probe"

/* A compile under way: others asking for the same key wait for it. */
struct flight {
	char key[SHA256_HEXSZ + 1];
	struct flight *next;
};

/* What a compiler is, by its real path and stat data: looked at once per service. */
struct identity {
	char *path;
	struct stat st;
	char hex[SHA256_HEXSZ + 1];
	struct identity *next;
};

struct server {
	const struct cc_serve_opts *o;
	struct cc_store *store;
	uid_t uid;              /* the runner user's, when nextbot is root (switched to) */
	gid_t gid;
	int chown_jobs;
	struct strvec private;  /* the box's own places: where a compile's files may be */
	struct strvec shown;    /* runner.read_only: the system's, even inside those */
	pthread_mutex_t lock;
	pthread_cond_t changed; /* a flight landed, a connection ended */
	struct flight *flights;
	struct identity *ids;
	pthread_mutex_t manifests; /* a direct key's manifests are read, merged, written */
	int active;
	struct cc_stats stats;
};

struct conn {
	struct server *srv;
	int fd;
	time_t alive;           /* last keepalive sent */
	int direct;             /* a direct request was answered: one more may follow */
	int remote;             /* over TCP: it shows the token first */
	struct strvec keys;     /* the keys of the manifests it was sent */
};

static volatile sig_atomic_t *stopping;

static void count(struct server *s, long *field)
{
	pthread_mutex_lock(&s->lock);
	(*field)++;
	pthread_mutex_unlock(&s->lock);
}

/* ---- answers ---- */

static void reply_fallback(struct conn *c, const char *why)
{
	unsigned char head[5];

	head[0] = CC_R_FALLBACK;
	cc_put_u32(head + 1, (uint32_t)strlen(why));
	if (cc_write_full(c->fd, head, 5) == 0)
		cc_write_full(c->fd, why, strlen(why));
}

/* The object: `err` then `obj_len` bytes of obj_fd from its current offset. */
static int reply_object(struct conn *c, int hit, const char *err, uint32_t err_len, int obj_fd,
			uint64_t obj_len)
{
	unsigned char head[6], num[8];
	char buf[65536];

	head[0] = CC_R_OBJECT;
	head[1] = (unsigned char)hit;
	cc_put_u32(head + 2, err_len);
	cc_put_u64(num, obj_len);
	if (cc_write_full(c->fd, head, 6) < 0 || cc_write_full(c->fd, err, err_len) < 0 ||
	    cc_write_full(c->fd, num, 8) < 0)
		return -1;
	while (obj_len) {
		size_t want = obj_len < sizeof(buf) ? (size_t)obj_len : sizeof(buf);
		ssize_t n = read(obj_fd, buf, want);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || cc_write_full(c->fd, buf, (size_t)n) < 0)
			return -1;
		obj_len -= (uint64_t)n;
	}
	return 0;
}

/* Tells a waiting shim, at most every few seconds, that its compile goes on. */
static void keepalive(struct conn *c)
{
	time_t now = time(NULL);
	char k = CC_R_ALIVE;

	if (now - c->alive < CC_KEEPALIVE_SECONDS)
		return;
	c->alive = now;
	if (send(c->fd, &k, 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		return; /* gone: the compile still fills the store for the next one */
}

/* ---- the compiler: trusted, and its identity ---- */

/* Every folder from / down to `real`, and `real`: root's or ours, nobody else's to write. */
static int trusted_chain(const char *real)
{
	struct strbuf p = STRBUF_INIT;
	const char *at = real;
	int ok = 1;

	while (ok) {
		struct stat st;
		const char *slash = strchr(at + 1, '/');

		strbuf_reset(&p);
		strbuf_add(&p, real, slash ? (size_t)(slash - real) : strlen(real));
		if (!p.len)
			strbuf_addch(&p, '/');
		ok = !lstat(p.buf, &st) && (st.st_uid == 0 || st.st_uid == geteuid()) &&
		     !(st.st_mode & 022) && !S_ISLNK(st.st_mode);
		if (!slash)
			break;
		at = slash;
	}
	/* "/" itself */
	if (ok) {
		struct stat st;

		ok = !lstat("/", &st) && st.st_uid == 0 && !(st.st_mode & 022);
	}
	strbuf_release(&p);
	return ok;
}

/*
 * The compiler a request names: a compiler's name, in folders only root (or this
 * user) can change, so that what runs in the box is what the key names.  Returns
 * its real path (caller frees), or NULL with *why.
 */
static char *trusted_compiler(const char *path, const char **why)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/'), *real_dir, *real = NULL;
	struct stat st;

	*why = "the compiler is not one the cache trusts";
	*slash = 0;
	if (!cc_compiler_name(slash + 1) || !cc_path_plain(path))
		goto done;
	real_dir = realpath(*dir ? dir : "/", NULL);
	if (real_dir && trusted_chain(real_dir) && !lstat(path, &st) &&
	    (!S_ISLNK(st.st_mode) || st.st_uid == 0 || st.st_uid == geteuid()))
		real = realpath(path, NULL);
	free(real_dir);
	if (real && (!trusted_chain(real) || stat(real, &st) < 0 || !S_ISREG(st.st_mode) ||
		     !(st.st_mode & 0111) || !cc_is_elf(real))) {
		free(real);
		real = NULL;
	}
done:
	free(dir);
	return real;
}

static void hash_file(struct sha256 *h, const char *path)
{
	char buf[65536];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		sha256_update(h, buf, (size_t)n);
	close(fd);
}

/* The programs gcc runs for a compile (cc1, cc1plus, as): their stat data joins the identity. */
static void hash_parts(struct sha256 *h, const char *real)
{
	static const char *const parts[] = { "cc1", "cc1plus", "as", NULL };
	size_t i;

	for (i = 0; parts[i]; i++) {
		char *opt = xstrfmt("-print-prog-name=%s", parts[i]);
		const char *argv[] = { real, opt, NULL };
		struct strbuf out = STRBUF_INIT;
		struct stat st;

		if (!runcmd_capture(&out, "/", argv)) {
			strbuf_trim(&out);
			if (out.buf[0] == '/' && !stat(out.buf, &st)) {
				char line[256];

				snprintf(line, sizeof(line), "%s %lld %lld.%09ld %llu", parts[i],
					 (long long)st.st_size, (long long)st.st_mtim.tv_sec,
					 st.st_mtim.tv_nsec, (unsigned long long)st.st_ino);
				sha256_update(h, out.buf, out.len + 1);
				sha256_update(h, line, strlen(line) + 1);
			}
		}
		strbuf_release(&out);
		free(opt);
	}
	nb_error_clear();
}

/* A known identity for `real` as it is now, or NULL.  Locked. */
static const char *known_identity(const struct server *s, const char *real,
				  const struct stat *st)
{
	const struct identity *id;

	for (id = s->ids; id; id = id->next)
		if (!strcmp(id->path, real) && id->st.st_ino == st->st_ino &&
		    id->st.st_size == st->st_size && id->st.st_mtim.tv_sec == st->st_mtim.tv_sec &&
		    id->st.st_mtim.tv_nsec == st->st_mtim.tv_nsec &&
		    id->st.st_ctim.tv_sec == st->st_ctim.tv_sec)
			return id->hex;
	return NULL;
}

/*
 * The compiler's identity: its real path, its bytes, the parts it runs.  Worked
 * out once per compiler (outside the lock: it runs the compiler), then kept.
 */
static const char *identity(struct server *s, const char *real)
{
	struct identity *id;
	struct stat st;
	struct sha256 h;
	unsigned char d[SHA256_LEN];
	const char *hex;

	if (stat(real, &st) < 0)
		return NULL;
	pthread_mutex_lock(&s->lock);
	hex = known_identity(s, real, &st);
	pthread_mutex_unlock(&s->lock);
	if (hex)
		return hex;
	sha256_init(&h);
	sha256_update(&h, real, strlen(real) + 1);
	hash_file(&h, real);
	hash_parts(&h, real);
	sha256_final(d, &h);
	id = xcalloc(1, sizeof(*id));
	id->path = xstrdup(real);
	id->st = st;
	sha256_hex(id->hex, d);
	pthread_mutex_lock(&s->lock);
	id->next = s->ids;
	s->ids = id;
	pthread_mutex_unlock(&s->lock);
	return id->hex;
}

/* ---- places ---- */

/*
 * A compile's scratch folders are bound over the places every box has empty of its
 * own (the hidden workdir, /tmp, …), so that they hide nothing of the system; its
 * working directory and the files it sends must be in those places, and no folder
 * shown from the host may lie at or below the working directory.
 */
static int cwd_ok(const struct server *s, const char *cwd)
{
	size_t i;

	if (!cc_path_private(cwd, &s->private, &s->shown))
		return 0;
	for (i = 0; i < s->shown.nr; i++)
		if (cc_path_under(s->shown.v[i], cwd))
			return 0;
	return 1;
}

/* The index of the innermost of the box's own places that holds `path`. */
static size_t place_of(const struct server *s, const char *path)
{
	size_t i, best = 0, best_len = 0;

	for (i = 0; i < s->private.nr; i++)
		if (cc_path_under(path, s->private.v[i]) && strlen(s->private.v[i]) >= best_len) {
			best = i;
			best_len = strlen(s->private.v[i]);
		}
	return best;
}

/* ---- one request ---- */

/* The compile's options and environment, each list closed by a newline. */
static void hash_options(struct sha256 *h, const struct cc_request *r)
{
	size_t i;

	for (i = 0; i < r->args.nr; i++)
		sha256_update(h, r->args.v[i], strlen(r->args.v[i]) + 1);
	sha256_update(h, "\n", 1);
	for (i = 0; i < r->env.nr; i++)
		sha256_update(h, r->env.v[i], strlen(r->env.v[i]) + 1);
	sha256_update(h, "\n", 1);
}

/* The key: everything the compile's result depends on. */
static void make_key(char out[SHA256_HEXSZ + 1], const struct cc_request *r, const char *id)
{
	struct sha256 h;
	unsigned char d[SHA256_LEN];
	size_t i;

	sha256_init(&h);
	sha256_update(&h, "nextbot-cc 2", 13);
	sha256_update(&h, id, SHA256_HEXSZ + 1);
	sha256_update(&h, r->cwd, strlen(r->cwd) + 1);
	sha256_update(&h, r->text, SHA256_HEXSZ + 1);
	hash_options(&h, r);
	for (i = 0; i < r->files_nr; i++) {
		sha256_update(&h, r->files[i].hash, SHA256_HEXSZ + 1);
		sha256_update(&h, r->files[i].path, strlen(r->files[i].path) + 1);
	}
	sha256_final(d, &h);
	sha256_hex(out, d);
}

/* The direct key: the key's parts but the text and the files, and the source's hash. */
static void make_direct_key(char out[SHA256_HEXSZ + 1], const struct cc_request *r,
			    const char *id, const char *source_hash)
{
	struct sha256 h;
	unsigned char d[SHA256_LEN];

	sha256_init(&h);
	sha256_update(&h, "nextbot-cc direct 1", 20);
	sha256_update(&h, id, SHA256_HEXSZ + 1);
	sha256_update(&h, r->cwd, strlen(r->cwd) + 1);
	hash_options(&h, r);
	sha256_update(&h, source_hash, SHA256_HEXSZ + 1);
	sha256_final(d, &h);
	sha256_hex(out, d);
}

/* The manifests stored for direct key `dkey` into `out` (nothing when none). */
static void read_manifests(struct strbuf *out, struct server *s, const char *dkey)
{
	uint32_t len;
	uint64_t obj_len;
	int fd;

	if (!cc_store_get(s->store, dkey, &fd, &len, &obj_len))
		return;
	strbuf_grow(out, len);
	if (cc_read_full(fd, out->buf, len) == 0)
		strbuf_addlen(out, len);
	close(fd);
}

/* A direct request: the manifests of its direct key (perhaps none). */
static void answer_direct(struct conn *c, const struct cc_request *req, const char *id)
{
	struct strbuf m = STRBUF_INIT;
	unsigned char head[5];
	const char *at;
	char dkey[SHA256_HEXSZ + 1];

	make_direct_key(dkey, req, id, req->text);
	pthread_mutex_lock(&c->srv->manifests);
	read_manifests(&m, c->srv, dkey);
	pthread_mutex_unlock(&c->srv->manifests);
	for (at = m.buf; *at;) {
		struct cc_manifest one = CC_MANIFEST_INIT;

		at = cc_manifest_parse(&one, at);
		if (one.key[0])
			strvec_push(&c->keys, one.key);
		cc_manifest_release(&one);
	}
	head[0] = CC_R_MANIFESTS;
	cc_put_u32(head + 1, (uint32_t)m.len);
	if (cc_write_full(c->fd, head, 5) == 0 && cc_write_full(c->fd, m.buf, m.len) == 0)
		c->direct = 1;
	strbuf_release(&m);
}

static int answer_hit(struct conn *c, const char key[SHA256_HEXSZ + 1])
{
	uint32_t err_len;
	uint64_t obj_len;
	char *err;
	int fd, ret = 0;

	if (!cc_store_get(c->srv->store, key, &fd, &err_len, &obj_len))
		return 0;
	err = xmalloc(err_len + 1);
	if (cc_read_full(fd, err, err_len) == 0) {
		count(c->srv, &c->srv->stats.hits);
		reply_object(c, 1, err, err_len, fd, obj_len);
		ret = 1;
	}
	free(err);
	close(fd);
	return ret;
}

/* A miss's scratch: one folder per place used (m<index>), bound over that place. */
struct serve_job {
	char *dir;
	int dirfd, cwdfd;
	unsigned char *used;    /* per place of s->private */
};

/* mkdir -p `rel` below dirfd, each folder the runner user's; returns an fd of the last. */
static int mkdirs_at(const struct server *s, int dirfd, const char *rel)
{
	char *copy = xstrdup(rel), *part, *save = NULL;
	int fd = dup(dirfd);

	for (part = strtok_r(copy, "/", &save); part && fd >= 0;
	     part = strtok_r(NULL, "/", &save)) {
		int next;

		if (mkdirat(fd, part, 0755) == 0 && s->chown_jobs)
			fchownat(fd, part, s->uid, s->gid, AT_SYMLINK_NOFOLLOW);
		next = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = next;
	}
	free(copy);
	return fd;
}

/* The folder of place `k` in the job, made on first use; an fd of it, or -1. */
static int place_dir(const struct server *s, struct serve_job *j, size_t k)
{
	char name[32];

	snprintf(name, sizeof(name), "m%zu", k);
	j->used[k] = 1;
	return mkdirs_at(s, j->dirfd, name);
}

/* Receives one file's bytes into the job, checked against the hash the key holds. */
static int receive_file(struct conn *c, struct serve_job *j, const struct cc_file *f,
			uint64_t *total)
{
	const struct server *s = c->srv;
	size_t k = place_of(s, f->path);
	const char *rel = f->path + strlen(s->private.v[k]), *slash = strrchr(rel, '/');
	unsigned char num[8], d[SHA256_LEN];
	char hex[SHA256_HEXSZ + 1], buf[65536], *parent;
	struct sha256 h;
	uint64_t len;
	int pfd, fd = -1, ret = -1;

	/* a file is below its place, never the place itself */
	if (!slash || !slash[1] || cc_read_full(c->fd, num, 8) < 0 ||
	    (len = cc_get_u64(num)) > CC_MAX_FILES_BYTES - *total)
		return -1;
	*total += len;
	parent = xstrndup(rel, (size_t)(slash - rel));
	pfd = place_dir(s, j, k);
	if (pfd >= 0) {
		int dfd = mkdirs_at(s, pfd, parent);

		fd = dfd < 0 ? -1
			     : openat(dfd, slash + 1,
				      O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (dfd >= 0)
			close(dfd);
		close(pfd);
	}
	free(parent);
	if (fd < 0 || fchmod(fd, 0644) < 0)
		goto done;
	sha256_init(&h);
	while (len) {
		size_t want = len < sizeof(buf) ? (size_t)len : sizeof(buf);

		if (cc_read_full(c->fd, buf, want) < 0 || cc_write_full(fd, buf, want) < 0)
			goto done;
		sha256_update(&h, buf, want);
		len -= want;
	}
	sha256_final(d, &h);
	sha256_hex(hex, d);
	ret = strcmp(hex, f->hash) ? -1 : 0;
done:
	if (fd >= 0)
		close(fd);
	return ret;
}

/*
 * The folders the options name for the search (-I, -iquote, -isystem, -idirafter)
 * in the box's own places, made empty: the compiler then lists them where they
 * are in its search (its -v), rather than as ignored, wherever they would be.
 */
static void make_search_dirs(struct conn *c, struct serve_job *j, const struct cc_request *req)
{
	static const char *const opts[] = { "-I", "-iquote", "-isystem", "-idirafter", NULL };
	const struct server *s = c->srv;
	size_t i, o;

	for (i = 0; i < req->args.nr; i++)
		for (o = 0; opts[o]; o++) {
			const char *a = req->args.v[i], *dir = NULL;
			char *abs;
			size_t k;
			int pfd, dfd;

			if (!strcmp(a, opts[o]) && i + 1 < req->args.nr)
				dir = req->args.v[i + 1];
			else if (str_starts_with(a, opts[o]) && a[strlen(opts[o])])
				dir = a + strlen(opts[o]);
			if (!dir || !*dir)
				continue;
			abs = cc_path_absolute(req->cwd, dir);
			if (cc_path_plain(abs) && cc_path_private(abs, &s->private, &s->shown)) {
				k = place_of(s, abs);
				if ((pfd = place_dir(s, j, k)) >= 0) {
					const char *rel = abs + strlen(s->private.v[k]);

					dfd = *rel ? mkdirs_at(s, pfd, rel) : -1;
					if (dfd >= 0)
						close(dfd);
					close(pfd);
				}
			}
			free(abs);
			break;
		}
}

/* Asks for the files, lays them out at their places, makes the working directory. */
static int make_job(struct conn *c, struct serve_job *j, const struct cc_request *req,
		    const char **why)
{
	const struct server *s = c->srv;
	char n = CC_R_NEED;
	uint64_t total = 0;
	size_t i, k;
	int pfd;

	*why = "the files did not arrive as the request said";
	if (cc_write_full(c->fd, &n, 1) < 0)
		return -1;
	for (i = 0; i < req->files_nr; i++)
		if (receive_file(c, j, &req->files[i], &total) < 0)
			return -1;
	*why = "the service has no room for the compile";
	make_search_dirs(c, j, req);
	k = place_of(s, req->cwd);
	if ((pfd = place_dir(s, j, k)) < 0)
		return -1;
	j->cwdfd = req->cwd[strlen(s->private.v[k])] ? mkdirs_at(s, pfd, req->cwd +
								strlen(s->private.v[k]))
						       : dup(pfd);
	close(pfd);
	return j->cwdfd < 0 ? -1 : 0;
}

/* runcmd's question every 0.1 s: stop the compile?  Also the time to say "still here". */
static int compile_stop(void *data)
{
	keepalive(data);
	return stopping && *stopping;
}

/* Places used, outer first, each bound over its place; then what is shown inside them. */
static struct runcmd_bind *job_binds(const struct server *s, const struct serve_job *j,
				     struct strvec *paths)
{
	struct runcmd_bind *b = xcalloc(s->private.nr + s->shown.nr + 1, sizeof(*b));
	size_t i, k, n = 0, len;

	for (len = 1; len <= PATH_MAX; len++)
		for (k = 0; k < s->private.nr; k++)
			if (j->used[k] && strlen(s->private.v[k]) == len) {
				strvec_pushf(paths, "%s/m%zu", j->dir, k);
				b[n++] = (struct runcmd_bind){ NULL, s->private.v[k], 1 };
			}
	for (i = 0; i < n; i++)
		b[i].host = paths->v[i];
	for (i = 0; i < s->shown.nr; i++)
		for (k = 0; k < s->private.nr; k++)
			if (j->used[k] && cc_path_under(s->shown.v[i], s->private.v[k])) {
				b[n++] = (struct runcmd_bind){ s->shown.v[i], s->shown.v[i], 0 };
				break;
			}
	return b;
}

static int printable(const char *c)
{
	for (; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return 0;
	return 1;
}

/* Options a manifest cannot answer for: files included by name, a search made otherwise. */
static int direct_args_ok(const struct cc_request *req)
{
	size_t i;

	for (i = 0; i < req->args.nr; i++) {
		const char *a = req->args.v[i];

		if (!printable(a) || strstr(a, "__has_include") || !strcmp(a, "-I-") ||
		    str_starts_with(a, "-include") || str_starts_with(a, "-imacros") ||
		    str_starts_with(a, "--include") || str_starts_with(a, "--imacros"))
			return 0;
	}
	return 1;
}

/*
 * In the box: the box's preprocessing again (its text must be the one the key
 * names: the files laid out are those the source really read), then the compile
 * itself, of the source, with the options as the build gave them.  When a
 * manifest may be written ($2 is 1), after a compile that worked, the
 * preprocessing once more with __has_include poisoned: a probe for a file's
 * existence, however it is spelled (a line splice, a paste, a macro), is what no
 * manifest can answer for; PROBE_NAME says 0 when there was none.
 */
static const char compile_script[] =
	"pp=$1; probe=$2; shift 2\n"
	"\"$0\" \"$@\" -E \"$pp\" -v -o " CHECK_NAME " 2>" SEARCH_NAME " || exit 97\n"
	"\"$0\" \"$@\" -c -o " OUT_NAME " || exit\n"
	"[ \"$probe\" = 1 ] || exit 0\n"
	"echo '#pragma GCC poison __has_include __has_include_next' >" POISON_NAME " || exit\n"
	"\"$0\" \"$@\" -E \"$pp\" -include ./" POISON_NAME " -o /dev/null >/dev/null 2>&1\n"
	"echo $? >" PROBE_NAME "\n"
	"rm -f " POISON_NAME "\n";

static int compile_in_box(struct runcmd_result *r, struct conn *c, const struct cc_request *req,
			  const struct serve_job *j, const char *real)
{
	const struct server *s = c->srv;
	const struct cc_serve_opts *o = s->o;
	struct runcmd_opts ro = RUNCMD_OPTS_INIT;
	struct strvec argv = STRVEC_INIT, paths = STRVEC_INIT;
	struct runcmd_bind *binds = job_binds(s, j, &paths);
	struct runcmd_box box = { .bwrap = o->bwrap, .shown = o->shown, .hide = o->hide,
				  .binds = binds, .cwd_in_box = 1 };
	size_t i;
	int err;

	strvec_pushl(&argv, "/bin/sh", "-c", compile_script, req->compiler, cc_pp_option(real),
		     direct_args_ok(req) ? "1" : "0", NULL);
	for (i = 0; i < req->args.nr; i++)
		strvec_push(&argv, req->args.v[i]);
	ro.argv = (const char *const *)argv.v;
	ro.cwd = req->cwd;
	ro.env = (const char *const *)req->env.v;
	ro.user = o->user;
	ro.box = &box;
	ro.limits = o->limits;
	ro.timeout = o->timeout > 0 ? o->timeout : 30 * 60;
	ro.output_cap = CC_MAX_STDERR;
	ro.stop = compile_stop;
	ro.stop_data = c;
	err = runcmd_run(r, &ro);
	strvec_clear(&argv);
	strvec_clear(&paths);
	free(binds);
	return err;
}

/* The compile did what a compile does: exit 0, nothing cut short, all of stderr kept. */
static int compiled(const struct runcmd_result *r)
{
	return r->exit_code == 0 && !r->signal && !r->timed_out && !r->limit_hit &&
	       !r->stopped && !r->exec_failed && !r->box_failed && !r->runner_failed &&
	       r->output_total == r->output.len && r->output.len <= CC_MAX_STDERR;
}

/* A regular file the compile left in its working directory; -1 if none. */
static int job_file(const struct serve_job *j, const char *name, struct stat *st)
{
	int fd = openat(j->cwdfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0 && (fstat(fd, st) < 0 || !S_ISREG(st->st_mode) ||
			(uint64_t)st->st_size > CC_MAX_OBJECT)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Whether the box's text and the one the key names are the same. */
static int same_text(const struct serve_job *j, const char *text)
{
	char hex[SHA256_HEXSZ + 1];
	struct stat st;
	int fd = job_file(j, CHECK_NAME, &st), same;

	if (fd < 0)
		return 0;
	same = !sha256_fd_hex(hex, fd) && !strcmp(hex, text);
	close(fd);
	return same;
}

/* ---- manifests: written here only, from a compile of the service's own ---- */

struct record {
	const struct server *s;
	const struct serve_job *j;
	const struct cc_request *req;
	struct strbuf files;    /* "F <hash> <name>" lines */
	struct strvec seen, hashes;
	struct strvec incs;     /* "<kind><folder of the includer>\t<name>": every directive */
	const char *dir;        /* the folder of the file being read */
	char source[SHA256_HEXSZ + 1]; /* the first marker's: the main file's */
	int n;
};

/* Whether `hay` holds `needle` (the bytes may hold NULs). */
static int holds(const char *hay, size_t len, const char *needle)
{
	size_t n = strlen(needle), i;

	for (i = 0; i + n <= len; i++)
		if (hay[i] == needle[0] && !memcmp(hay + i, needle, n))
			return 1;
	return 0;
}

static int record_include(void *data, int kind, const char *name)
{
	struct record *rc = data;

	if (!printable(name))
		return -1;
	strvec_pushf(&rc->incs, "%c%s\t%s", '0' + kind, rc->dir, name);
	return 0;
}

/* Where the service's compile saw `name` (from its working directory), outside its box. */
static char *seen_at(const struct record *rc, const char *name)
{
	const struct server *s = rc->s;
	char *abs = cc_path_absolute(rc->req->cwd, name), *at;

	if (cc_path_private(abs, &s->private, &s->shown)) {
		size_t k = place_of(s, abs);

		at = xstrfmt("%s/m%zu%s", rc->j->dir, k, abs + strlen(s->private.v[k]));
		free(abs);
		return at;
	}
	return abs;
}

/*
 * One file the service's text came from: hashed where the compile read it (a file
 * of the box's own from the job, laid out and checked; else the system's), and
 * read: its include directives, for what must not be found before them.  A probe
 * for a file's existence (__has_include) is not something a manifest can answer
 * for; two files with the same bytes (#pragma once compares them by their times)
 * neither.
 */
static int record_file(void *data, const char *name)
{
	struct record *rc = data;
	struct strbuf bytes = STRBUF_INIT;
	char *at, *dir, hex[SHA256_HEXSZ + 1];
	unsigned char d[SHA256_LEN];
	struct sha256 h;
	int fd, ret = -1;

	if (rc->n++ == 0 && name[0] == '<')
		return -1;
	if (!name[0] || name[0] == '<' || str_ends_with(name, "//") ||
	    strvec_contains(&rc->seen, name))
		return 0;
	if (!printable(name) || !(dir = cc_dir_of(name)))
		return -1;
	at = seen_at(rc, name);
	/* a file laid out in the job is ours (no link); the system's may be a link */
	fd = open(at, O_RDONLY | O_NONBLOCK | O_CLOEXEC |
			      (str_starts_with(at, rc->j->dir) ? O_NOFOLLOW : 0));
	if (fd < 0)
		goto done;
	for (;;) {
		ssize_t n;

		strbuf_grow(&bytes, 65536);
		n = read(fd, bytes.buf + bytes.len, 65536);
		if (n <= 0 || bytes.len + (size_t)n > CC_MAX_FILES_BYTES)
			break;
		strbuf_addlen(&bytes, (size_t)n);
	}
	close(fd);
	rc->dir = dir;
	if (holds(bytes.buf, bytes.len, "__has_include") ||
	    cc_include_names(bytes.buf, bytes.len, record_include, rc) < 0)
		goto done;
	sha256_init(&h);
	sha256_update(&h, bytes.buf, bytes.len);
	sha256_final(d, &h);
	sha256_hex(hex, d);
	if (strvec_contains(&rc->hashes, hex))
		goto done;
	if (rc->n == 1)
		memcpy(rc->source, hex, sizeof(hex));
	strvec_push(&rc->hashes, hex);
	strvec_push(&rc->seen, name);
	strbuf_addf(&rc->files, "F %s %s\n", hex, name);
	ret = 0;
done:
	strbuf_release(&bytes);
	free(at);
	free(dir);
	return ret;
}

/* Whether anything was at `name` for the service's compile. */
static int was_there(const struct record *rc, const char *name)
{
	char *at = seen_at(rc, name);
	struct stat st;
	int there = !stat(at, &st) || (errno != ENOENT && errno != ENOTDIR);

	free(at);
	return there;
}

/*
 * What must stay absent for one directive (kind, the includer's folder, its name)
 * to find the same file: the places searched before the file it found (the first
 * listed; for #include_next, up to the last listed, wherever its search began),
 * none of which may have existed then (else the manifest cannot say which file it
 * found: -1), and its name in every folder ignored as absent.  A directive none of
 * whose places was there was not run (it would have failed the compile).
 */
static int absent_for(struct strvec *absent, const struct record *rc, const struct cc_search *sd,
		      const char *inc)
{
	int kind = inc[0] - '0';
	const char *tab = strchr(inc, '\t'), *name = tab + 1;
	char *incdir = xstrndup(inc + 1, (size_t)(tab - inc - 1));
	struct strvec chain = STRVEC_INIT, before = STRVEC_INIT;
	size_t i, last = 0;
	int found = 0, ret = 0;

	if (name[0] == '/')
		goto done;      /* an absolute name is searched nowhere */
	if (kind & CC_INCLUDE_QUOTE) {
		strvec_push(&chain, incdir);
		for (i = 0; i < sd->quote.nr; i++)
			strvec_push(&chain, sd->quote.v[i]);
	}
	for (i = 0; i < sd->bracket.nr; i++)
		strvec_push(&chain, sd->bracket.v[i]);
	for (i = 0; i < chain.nr; i++) {
		char *cand = cc_path_join(chain.v[i], name);

		if (strvec_contains(&rc->seen, cand)) {
			found = 1;
			last = before.nr;
			free(cand);
			if (!(kind & CC_INCLUDE_NEXT))
				break;
			continue;
		}
		strvec_push_nodup(&before, cand);
	}
	if (!found)
		goto done;
	for (i = 0; i < last && !ret; i++)
		if (was_there(rc, before.v[i]))
			ret = -1;
		else
			strvec_push(absent, before.v[i]);
	for (i = 0; i < sd->ignored.nr; i++) {
		char *cand = cc_path_join(sd->ignored.v[i], name);

		if (!strvec_contains(&rc->seen, cand))
			strvec_push(absent, cand);
		free(cand);
	}
done:
	/*
	 * Not found: the first place that was there is what the directive would have
	 * read, had it run (it was not, or its file would be listed) unless #pragma
	 * once or #import skipped that file as one already read by another name.
	 */
	for (i = 0; !found && i < before.nr; i++)
		if (was_there(rc, before.v[i])) {
			char *at = seen_at(rc, before.v[i]), hex[SHA256_HEXSZ + 1];
			int fd = open(at, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

			if (fd < 0 || sha256_fd_hex(hex, fd) < 0 ||
			    strvec_contains(&rc->hashes, hex))
				ret = -1;
			if (fd >= 0)
				close(fd);
			free(at);
			break;
		}
	strvec_clear(&chain);
	strvec_clear(&before);
	free(incdir);
	return ret;
}

/* The text the service's check wrote, into `out`; 0 or -1. */
static int job_bytes(struct strbuf *out, const struct serve_job *j, const char *name)
{
	struct stat st;
	int fd = job_file(j, name, &st), ok;

	if (fd < 0)
		return -1;
	ok = (uint64_t)st.st_size <= CC_MAX_TEXT;
	if (ok) {
		strbuf_grow(out, (size_t)st.st_size);
		ok = cc_read_full(fd, out->buf, (size_t)st.st_size) == 0;
		if (ok)
			strbuf_addlen(out, (size_t)st.st_size);
	}
	close(fd);
	return ok ? 0 : -1;
}

/*
 * After a compile of the service's own (its text the key's): the manifest of it
 * under its direct key, with those already there (the newest first, a few).
 */
static void record_manifest(struct server *s, const struct serve_job *j,
			    const struct cc_request *req, const char *key, const char *id)
{
	struct record rc = { .s = s, .j = j, .req = req, .files = STRBUF_INIT,
			     .seen = STRVEC_INIT, .hashes = STRVEC_INIT, .incs = STRVEC_INIT };
	struct strbuf text = STRBUF_INIT, v = STRBUF_INIT, m = STRBUF_INIT, old = STRBUF_INIT;
	struct strbuf probe = STRBUF_INIT;
	struct cc_search sd = CC_SEARCH_INIT;
	struct strvec absent = STRVEC_INIT;
	char dkey[SHA256_HEXSZ + 1];
	const char *at;
	size_t i;
	int kept = 1, fd;

	if (!direct_args_ok(req) || job_bytes(&probe, j, PROBE_NAME) < 0 ||
	    strcmp(probe.buf, "0\n") || job_bytes(&text, j, CHECK_NAME) < 0 ||
	    job_bytes(&v, j, SEARCH_NAME) < 0 || cc_text_timed(text.buf, text.len) ||
	    cc_search_dirs(&sd, v.buf) < 0 ||
	    cc_text_names(text.buf, text.len, record_file, &rc) < 0 || !rc.source[0])
		goto done;
	/* the compiler's own first include, from the command line's place */
	strvec_pushf(&rc.incs, "0\tstdc-predef.h");
	for (i = 0; i < rc.incs.nr; i++)
		if (absent_for(&absent, &rc, &sd, rc.incs.v[i]) < 0)
			goto done;
	strbuf_addf(&m, "K %s\nT %s\n", key, req->text);
	strbuf_addbuf(&m, &rc.files);
	for (i = 0; i < absent.nr; i++)
		if (!strvec_contains(&rc.seen, absent.v[i])) {
			strbuf_addf(&m, "C %s\n", absent.v[i]);
			strvec_push(&rc.seen, absent.v[i]); /* once */
		}
	make_direct_key(dkey, req, id, rc.source);
	pthread_mutex_lock(&s->manifests);
	read_manifests(&old, s, dkey);
	for (at = old.buf; *at && kept < CC_MANIFESTS_MAX;) {
		struct cc_manifest one = CC_MANIFEST_INIT;
		const char *next = cc_manifest_parse(&one, at);

		if (one.key[0] && strcmp(one.key, key)) {
			strbuf_add(&m, at, (size_t)(next - at));
			kept++;
		}
		cc_manifest_release(&one);
		at = next;
	}
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (m.len <= CC_MAX_STDERR && fd >= 0 &&
	    cc_store_put(s->store, dkey, m.buf, (uint32_t)m.len, fd, 0) < 0)
		log_warn("%s", nb_error_last());
	if (fd >= 0)
		close(fd);
	pthread_mutex_unlock(&s->manifests);
done:
	strbuf_release(&text);
	strbuf_release(&v);
	strbuf_release(&m);
	strbuf_release(&old);
	strbuf_release(&probe);
	strbuf_release(&rc.files);
	strvec_clear(&rc.seen);
	strvec_clear(&rc.hashes);
	strvec_clear(&rc.incs);
	strvec_clear(&absent);
	cc_search_release(&sd);
}

static void fail(struct conn *c, long *counter, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fail(struct conn *c, long *counter, const char *fmt, ...)
{
	struct strbuf why = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&why, fmt, ap);
	va_end(ap);
	count(c->srv, counter);
	reply_fallback(c, why.buf);
	strbuf_release(&why);
}

/* A miss: compile, store, answer; a failure is neither stored nor answered with. */
static void answer_miss(struct conn *c, const struct cc_request *req, const char *key,
			struct serve_job *j, const char *real, const char *id)
{
	struct runcmd_result r = RUNCMD_RESULT_INIT;
	struct stat st;
	const char *why;
	int obj = -1;

	if (make_job(c, j, req, &why) < 0) {
		fail(c, &c->srv->stats.refused, "%s", why);
		return;
	}
	if (compile_in_box(&r, c, req, j, real) < 0 || !compiled(&r)) {
		/* the asker may see what its own compile said; it compiles itself now */
		fail(c, &c->srv->stats.failed,
		     "the compile failed in the service's box (exit %d): %.*s", r.exit_code,
		     (int)strcspn(r.output.buf, "\n"), r.output.buf);
		goto done;
	}
	if (!same_text(j, req->text)) {
		fail(c, &c->srv->stats.refused, "the source's text there is not the box's");
		goto done;
	}
	if ((obj = job_file(j, OUT_NAME, &st)) < 0) {
		fail(c, &c->srv->stats.failed, "the compile left no object");
		goto done;
	}
	if (cc_store_put(c->srv->store, key, r.output.buf, (uint32_t)r.output.len, obj,
			 (uint64_t)st.st_size) < 0)
		log_warn("%s", nb_error_last());
	else
		record_manifest(c->srv, j, req, key, id);
	count(c->srv, &c->srv->stats.compiled);
	if (lseek(obj, 0, SEEK_SET) == 0)
		reply_object(c, 0, r.output.buf, (uint32_t)r.output.len, obj, (uint64_t)st.st_size);
done:
	if (obj >= 0)
		close(obj);
	runcmd_result_release(&r);
}

/* Waits while another connection compiles `key`; 1 if it did (look again), 0 if none did. */
static int wait_flight(struct conn *c, const char *key, struct flight *mine)
{
	struct server *s = c->srv;
	int waited = 0;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		struct flight *f;
		struct timespec t;

		for (f = s->flights; f && strcmp(f->key, key); f = f->next)
			;
		if (!f)
			break;
		waited = 1;
		pthread_mutex_unlock(&s->lock);
		keepalive(c);
		pthread_mutex_lock(&s->lock);
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_sec += 1;
		pthread_cond_timedwait(&s->changed, &s->lock, &t);
	}
	if (!waited) {
		memcpy(mine->key, key, sizeof(mine->key));
		mine->next = s->flights;
		s->flights = mine;
	}
	pthread_mutex_unlock(&s->lock);
	return waited;
}

static void land(struct server *s, struct flight *mine)
{
	struct flight **p;

	pthread_mutex_lock(&s->lock);
	for (p = &s->flights; *p && *p != mine; p = &(*p)->next)
		;
	if (*p)
		*p = mine->next;
	pthread_cond_broadcast(&s->changed);
	pthread_mutex_unlock(&s->lock);
}

/* Checks what a request says before anything else is read; 0 or -1 with *why. */
static int check_request(const char **id, char **real, struct server *s,
			 const struct cc_request *req, const char **why)
{
	size_t i;

	if (!(*real = trusted_compiler(req->compiler, why)))
		return -1;
	if (cc_args_check_send((const char *const *)req->args.v, req->args.nr, why))
		return -1;
	if (!cwd_ok(s, req->cwd)) {
		*why = "the working directory is not a place of the box's own";
		return -1;
	}
	for (i = 0; i < req->files_nr; i++)
		if (!cc_path_private(req->files[i].path, &s->private, &s->shown)) {
			*why = "a file that is not in a place of the box's own";
			return -1;
		}
	if (!(*id = identity(s, *real))) {
		*why = "the compiler cannot be read";
		return -1;
	}
	return 0;
}

/* A scratch folder of the compile's: the runner user passes through, lists nothing. */
static int job_open(struct serve_job *j, const struct server *s)
{
	j->dir = xstrfmt("%s/XXXXXX", s->o->jobs);
	j->dirfd = j->cwdfd = -1;
	j->used = xcalloc(s->private.nr + 1, 1);
	if (!mkdtemp(j->dir) || chmod(j->dir, 0711) < 0)
		return -1;
	j->dirfd = open(j->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return j->dirfd < 0 ? -1 : 0;
}

static void job_close(struct serve_job *j)
{
	if (j->cwdfd >= 0)
		close(j->cwdfd);
	if (j->dirfd >= 0)
		close(j->dirfd);
	if (j->dir && file_remove_tree(j->dir) < 0)
		log_warn("compiler cache: %s", nb_error_last());
	free(j->dir);
	free(j->used);
}

/* One request; 1 when another may follow on the connection (after a direct one). */
static int serve_request(struct conn *c)
{
	struct server *s = c->srv;
	struct cc_request req = CC_REQUEST_INIT;
	struct serve_job j = { .dirfd = -1, .cwdfd = -1 };
	char key[SHA256_HEXSZ + 1], *real = NULL;
	const char *why = NULL, *id = NULL;
	struct flight mine;

	int more = 0, bad, via;

	bad = cc_request_read(&req, c->fd, &why) < 0;
	if (bad && c->direct && !req.compiler)
		goto done; /* the shim that asked directly went its own way */
	/* a direct request is counted with the request that follows it */
	if (bad || !req.direct)
		count(s, &s->stats.requests);
	if (bad || check_request(&id, &real, s, &req, &why) < 0) {
		if (!bad && req.direct)
			count(s, &s->stats.requests);
		count(s, &s->stats.refused);
		reply_fallback(c, why);
		goto done;
	}
	if (req.direct) {
		more = !c->direct;
		answer_direct(c, &req, id);
		goto done;
	}
	make_key(key, &req, id);
	via = c->direct && strvec_contains(&c->keys, key);
	if (answer_hit(c, key)) {
		if (c->direct)
			count(s, via ? &s->stats.direct_hits : &s->stats.direct_misses);
		goto done;
	}
	if (c->direct)
		count(s, &s->stats.direct_misses);
	if (wait_flight(c, key, &mine)) {
		if (!answer_hit(c, key))
			reply_fallback(c, "the same compile failed just now");
		goto done;
	}
	if (job_open(&j, s) < 0)
		reply_fallback(c, "the service has no room for the compile");
	else
		answer_miss(c, &req, key, &j, real, id);
	land(s, &mine);
done:
	job_close(&j);
	free(real);
	cc_request_release(&req);
	return more;
}

static void *conn_thread(void *arg)
{
	struct conn *c = arg;
	struct server *s = c->srv;
	struct timeval tv = { CC_SILENCE_SECONDS, 0 };

	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	c->keys = (struct strvec)STRVEC_INIT;
	if (c->remote && !cc_remote_admit(c->fd, s->o->token, CC_KEEPALIVE_SECONDS * 2))
		count(s, &s->stats.remote_refused);
	else {
		if (c->remote)
			count(s, &s->stats.remote);
		while (serve_request(c))
			;
	}
	close(c->fd);
	strvec_clear(&c->keys);
	free(c);
	pthread_mutex_lock(&s->lock);
	s->active--;
	pthread_cond_broadcast(&s->changed);
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* ---- the service ---- */

void cc_places(struct strvec *private, struct strvec *shown, const struct cc_serve_opts *o)
{
	const char *const *p;
	size_t i;

	for (p = runcmd_box_private(); *p; p++)
		strvec_push(private, *p);
	for (i = 0; o->hide && o->hide[i]; i++)
		strvec_push(private, o->hide[i]);
	for (i = 0; o->shown && o->shown[i]; i++)
		strvec_push(shown, o->shown[i]);
}

static int server_init(struct server *s, const struct cc_serve_opts *o)
{
	memset(s, 0, sizeof(*s));
	s->o = o;
	if (!o->bwrap)
		return nb_error_set(NB_EINVALID, "the compiler cache needs the bwrap sandbox");
	s->private = s->shown = (struct strvec)STRVEC_INIT;
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->manifests, NULL);
	pthread_cond_init(&s->changed, NULL);
	cc_places(&s->private, &s->shown, o);
	if (!geteuid() && o->user) {
		struct passwd *pw = getpwnam(o->user);

		if (!pw)
			return nb_error_set(NB_ENOTFOUND, "runner user '%s' does not exist",
					    o->user);
		s->uid = pw->pw_uid;
		s->gid = pw->pw_gid;
		s->chown_jobs = 1;
	}
	/* the compiles' scratch: the runner user reaches its own folder in it, nothing else */
	if (file_remove_tree(o->jobs) < 0 || file_mkdir_p(o->jobs, 0711) < 0)
		return NB_ERROR;
	return cc_store_open(&s->store, o->store, o->max, o->min_free);
}

static void server_release(struct server *s)
{
	while (s->ids) {
		struct identity *id = s->ids;

		s->ids = id->next;
		free(id->path);
		free(id);
	}
	cc_store_free(s->store);
	strvec_clear(&s->private);
	strvec_clear(&s->shown);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->manifests);
	pthread_cond_destroy(&s->changed);
}

/* Takes one connection (or refuses it when too many are open). */
static void take(struct server *s, int fd, int remote)
{
	struct conn *c;
	pthread_attr_t attr;
	pthread_t tid;
	int started;

	pthread_mutex_lock(&s->lock);
	if (s->active >= MAX_CONNECTIONS) {
		pthread_mutex_unlock(&s->lock);
		close(fd);  /* the shim compiles itself */
		return;
	}
	s->active++;
	pthread_mutex_unlock(&s->lock);
	c = xcalloc(1, sizeof(*c));
	c->srv = s;
	c->fd = fd;
	c->remote = remote;
	c->alive = time(NULL);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	started = !pthread_create(&tid, &attr, conn_thread, c);
	pthread_attr_destroy(&attr);
	if (!started)
		conn_thread(c);
}

int cc_serve_run(struct cc_stats *out, int listen_fd, const struct cc_serve_opts *o)
{
	struct server s;
	struct timespec t;
	int error;

	stopping = o->stopping;
	if ((error = server_init(&s, o)) < 0) {
		server_release(&s);
		return error;
	}
	if (o->ready)
		o->ready(o->ready_data);
	while (!(stopping && *stopping)) {
		struct pollfd p[2] = { { .fd = listen_fd, .events = POLLIN },
				       { .fd = o->token ? o->remote_fd : -1, .events = POLLIN } };
		int fd, k;

		if (poll(p, o->token ? 2 : 1, 200) <= 0)
			continue;
		for (k = 0; k < 2; k++) {
			if (!(p[k].revents & POLLIN))
				continue;
			fd = accept4(p[k].fd, NULL, NULL, SOCK_CLOEXEC);
			if (fd >= 0)
				take(&s, fd, k);
		}
	}
	close(listen_fd);
	if (o->token)
		close(o->remote_fd);
	/* the compiles under way are killed (compile_stop); their shims compile themselves */
	pthread_mutex_lock(&s.lock);
	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += 30;
	while (s.active && pthread_cond_timedwait(&s.changed, &s.lock, &t) != ETIMEDOUT)
		;
	s.stats.bytes = cc_store_bytes(s.store);
	*out = s.stats;
	error = s.active;
	pthread_mutex_unlock(&s.lock);
	if (error) {
		/* a thread still holds the server: leave it to the process's end */
		return 0;
	}
	server_release(&s);
	return 0;
}
