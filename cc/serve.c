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
 */

#define MAX_CONNECTIONS 64
#define CHECK_NAME "nextbot-cc-check.i"
#define OUT_NAME "nextbot-cc-out.o"

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
	int active;
	struct cc_stats stats;
};

struct conn {
	struct server *srv;
	int fd;
	time_t alive;           /* last keepalive sent */
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
	for (i = 0; i < r->args.nr; i++)
		sha256_update(&h, r->args.v[i], strlen(r->args.v[i]) + 1);
	sha256_update(&h, "\n", 1);
	for (i = 0; i < r->env.nr; i++)
		sha256_update(&h, r->env.v[i], strlen(r->env.v[i]) + 1);
	sha256_update(&h, "\n", 1);
	for (i = 0; i < r->files_nr; i++) {
		sha256_update(&h, r->files[i].hash, SHA256_HEXSZ + 1);
		sha256_update(&h, r->files[i].path, strlen(r->files[i].path) + 1);
	}
	sha256_final(d, &h);
	sha256_hex(out, d);
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

/*
 * In the box: the box's preprocessing again (its text must be the one the key
 * names: the files laid out are those the source really read), then the compile
 * itself, of the source, with the options as the build gave them.
 */
static const char compile_script[] =
	"pp=$1; shift\n"
	"\"$0\" \"$@\" -E \"$pp\" -o " CHECK_NAME " 2>/dev/null || exit 97\n"
	"exec \"$0\" \"$@\" -c -o " OUT_NAME "\n";

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
		     NULL);
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
			struct serve_job *j, const char *real)
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

static void serve_request(struct conn *c)
{
	struct server *s = c->srv;
	struct cc_request req = CC_REQUEST_INIT;
	struct serve_job j = { .dirfd = -1, .cwdfd = -1 };
	char key[SHA256_HEXSZ + 1], *real = NULL;
	const char *why = NULL, *id = NULL;
	struct flight mine;

	count(s, &s->stats.requests);
	if (cc_request_read(&req, c->fd, &why) < 0 ||
	    check_request(&id, &real, s, &req, &why) < 0) {
		count(s, &s->stats.refused);
		reply_fallback(c, why);
		goto done;
	}
	make_key(key, &req, id);
	if (answer_hit(c, key))
		goto done;
	if (wait_flight(c, key, &mine)) {
		if (!answer_hit(c, key))
			reply_fallback(c, "the same compile failed just now");
		goto done;
	}
	if (job_open(&j, s) < 0)
		reply_fallback(c, "the service has no room for the compile");
	else
		answer_miss(c, &req, key, &j, real);
	land(s, &mine);
done:
	job_close(&j);
	free(real);
	cc_request_release(&req);
}

static void *conn_thread(void *arg)
{
	struct conn *c = arg;
	struct server *s = c->srv;
	struct timeval tv = { CC_SILENCE_SECONDS, 0 };

	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	serve_request(c);
	close(c->fd);
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
	return cc_store_open(&s->store, o->store, o->max);
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
	pthread_cond_destroy(&s->changed);
}

/* Takes one connection (or refuses it when too many are open). */
static void take(struct server *s, int fd)
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
		struct pollfd p = { .fd = listen_fd, .events = POLLIN };
		int fd;

		if (poll(&p, 1, 200) <= 0)
			continue;
		fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			take(&s, fd);
	}
	close(listen_fd);
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
