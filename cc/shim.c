/* The shim a build runs as cc, gcc, …: compile through the service, else the real compiler. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cc/cc.h"
#include "cc/cc_int.h"
#include "util/strbuf.h"
#include "util/strvec.h"
#include "util/xalloc.h"
#include "util/banned.h"

/*
 * It runs in the build's box, as the build: nothing here is trusted by the
 * service, and nothing here can do worse than the build itself could.  Whatever
 * goes wrong (no service, a refusal, a failed compile, a timeout), the real
 * compiler runs with the arguments as given: the cache only ever saves time.
 */

/* Environment that changes what a compile does beyond what the key holds: uncached. */
static const char *const env_blockers[] = {
	"GCC_EXEC_PREFIX", "COMPILER_PATH", "GCC_COMPARE_DEBUG", "GCC_COLORS", "GCC_URLS",
	"TERM_URLS", "COLUMNS", "SOURCE_DATE_EPOCH", "DEPENDENCIES_OUTPUT", "SUNPRO_DEPENDENCIES",
	"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "LANGUAGE", "NLSPATH",
	"GCC_EXTRA_DIAGNOSTIC_OUTPUT", NULL,
};

/*
 * Environment that adds folders to the compiler's search (not in the manifests,
 * which the service's compiles wrote without it): no direct mode.
 */
static const char *const env_search[] = { "CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH",
					  "OBJC_INCLUDE_PATH", "OBJCPLUS_INCLUDE_PATH", NULL };

/* The locale of the messages: sent with the request (and in its key). */
static const char *const env_locale[] = { "LANG", "LC_ALL", "LC_MESSAGES", "LC_CTYPE", NULL };

struct shim {
	const char *name;       /* as called: gcc, cc, x86_64-linux-gnu-gcc-12 */
	char *real;             /* the compiler after the shims on PATH */
	char *own_dir;          /* the shims' folder on PATH */
	int argc;
	char **argv;
	struct cc_args args;
	int sock, text;
	char cwd[4096];
	struct strvec roots, shown; /* the box's own places (CC_PLACES_FILE) */
	struct cc_request req;
};

static void trace(const struct shim *sh, const char *what, const char *why)
{
	const char *path = getenv("NEXTBOT_CC_TRACE");
	FILE *f;

	if (!path || !*path || !(f = fopen(path, "ae")))
		return;
	fprintf(f, "%s %s%s%s\n", what, sh->args.source ? sh->args.source : "-", why ? ": " : "",
		why ? why : "");
	fclose(f);
}

/* The first `name` on PATH that is not a shim (not this program), and the shims' folder. */
static void find_real(struct shim *sh)
{
	const char *path = getenv("PATH"), *p;
	struct strbuf dir = STRBUF_INIT, cand = STRBUF_INIT;
	struct stat self, st;

	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	if (stat("/proc/self/exe", &self) < 0)
		memset(&self, 0, sizeof(self));
	for (p = path; !sh->real;) {
		size_t len = strcspn(p, ":");

		strbuf_reset(&dir);
		strbuf_add(&dir, p, len);
		if (!dir.len)
			strbuf_addch(&dir, '.');
		strbuf_reset(&cand);
		strbuf_addf(&cand, "%s/%s", dir.buf, sh->name);
		if (!stat(cand.buf, &st) && S_ISREG(st.st_mode) && !access(cand.buf, X_OK)) {
			if (st.st_dev == self.st_dev && st.st_ino == self.st_ino) {
				if (!sh->own_dir)
					sh->own_dir = xstrdup(dir.buf);
			} else {
				sh->real = strbuf_detach(&cand, NULL);
			}
		}
		if (!p[len])
			break;
		p += len + 1;
	}
	strbuf_release(&dir);
	strbuf_release(&cand);
}

static int blocked(const char *const *names)
{
	size_t i;

	for (i = 0; names[i]; i++)
		if (getenv(names[i]))
			return 1;
	return 0;
}

static int blocked_by_env(const char **why)
{
	if (!blocked(env_blockers))
		return 0;
	*why = "the environment sets something the compiler reads";
	return 1;
}

/* Reads all of `fd` into `out`, at most `cap` bytes; 1 if it all fit. */
static int slurp(struct strbuf *out, int fd, size_t cap)
{
	char buf[8192];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || out->len + (size_t)n > cap)
			return 0;
		strbuf_add(out, buf, (size_t)n);
	}
	return 1;
}

/* <own_dir>/../<name>: the shims' folder's neighbours (the socket, the places). */
static char *beside(const struct shim *sh, const char *name)
{
	const char *slash = strrchr(sh->own_dir, '/');

	return xstrfmt("%.*s/%s", slash ? (int)(slash - sh->own_dir) : 0, sh->own_dir, name);
}

/* The box's own places, as the service counts them. */
static int read_places(struct shim *sh)
{
	char *path = beside(sh, CC_PLACES_FILE);
	struct strbuf sb = STRBUF_INIT;
	char *line, *save = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ok = fd >= 0 && slurp(&sb, fd, 1 << 20);

	if (fd >= 0)
		close(fd);
	for (line = strtok_r(sb.buf, "\n", &save); ok && line; line = strtok_r(NULL, "\n", &save))
		if (!strncmp(line, "private ", 8))
			strvec_push(&sh->roots, line + 8);
		else if (!strncmp(line, "shown ", 6))
			strvec_push(&sh->shown, line + 6);
	strbuf_release(&sb);
	free(path);
	return ok && sh->roots.nr;
}

/* connect() without waiting: a full or absent service is no cache, at once. */
static int dial(const struct shim *sh)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char *path = beside(sh, "sock");
	const char *silence = getenv("NEXTBOT_CC_SILENCE");
	struct timeval tv = { CC_SILENCE_SECONDS, 0 };
	long secs;
	int fd = -1;

	/* for tests of a service that stops answering: how long to wait, in seconds */
	if (silence && !str_to_long(silence, &secs) && secs > 0 && secs < CC_SILENCE_SECONDS)
		tv.tv_sec = secs;
	if (path[0] != '/' || strlen(path) >= sizeof(sa.sun_path))
		goto done;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd >= 0 &&
	    (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	     fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0 ||
	     setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	     setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)) {
		close(fd);
		fd = -1;
	}
done:
	free(path);
	return fd;
}

/* The -E pass, here in the box (cc_pp_option()): the text into sh->text; 0 or -1. */
static int preprocess(struct shim *sh, const char **why)
{
	struct strvec av = STRVEC_INIT;
	char *real = realpath(sh->real, NULL);
	int status = 0;
	size_t i;
	pid_t pid;

	sh->text = memfd_create("nextbot-cc", MFD_CLOEXEC);
	if (sh->text < 0) {
		*why = "no room for the preprocessed text";
		return -1;
	}
	strvec_push(&av, sh->real);
	for (i = 0; i < sh->args.pre.nr; i++)
		strvec_push(&av, sh->args.pre.v[i]);
	strvec_pushl(&av, "-E", cc_pp_option(real ? real : sh->real), NULL);
	free(real);
	pid = fork();
	if (!pid) {
		/* its messages are the compile's too: the service's compile says them */
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

		if (dup2(sh->text, 1) < 0 || null < 0 || dup2(null, 2) < 0)
			_exit(127);
		execv(av.v[0], av.v);
		_exit(127);
	}
	while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	strvec_clear(&av);
	if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		*why = "the preprocessor failed (the compiler says why)";
		return -1;
	}
	return 0;
}

/* A file the text came from: hashed for the key when it is in a place of the box's own. */
static int note_file(void *data, const char *name)
{
	struct shim *sh = data;
	char hash[SHA256_HEXSZ + 1], *abs = NULL;
	struct stat st;
	size_t i;
	int fd = -1, ret = -1;

	/* <built-in>, <command-line>, and the working directory's own line ("/dir//") */
	if (!name[0] || name[0] == '<' || str_ends_with(name, "//"))
		return 0;
	abs = cc_path_absolute(sh->cwd, name);
	for (i = 0; i < sh->req.files_nr; i++)
		if (!strcmp(sh->req.files[i].path, abs))
			break;
	if (i < sh->req.files_nr || !cc_path_private(abs, &sh->roots, &sh->shown)) {
		ret = 0;
		goto done;
	}
	fd = open(abs, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || sha256_fd_hex(hash, fd) < 0 ||
	    !cc_path_plain(abs))
		goto done;
	cc_request_add_file(&sh->req, hash, abs);
	ret = 0;
done:
	if (fd >= 0)
		close(fd);
	free(abs);
	return ret;
}

/* The text's hash, and the files it came from; not when it names the time. */
static int read_text(struct shim *sh, const char **why)
{
	off_t end = lseek(sh->text, 0, SEEK_END);
	unsigned char d[SHA256_LEN];
	struct sha256 h;
	void *map = NULL;
	int ret = -1;

	*why = "the preprocessed text cannot be read";
	if (end <= 0 || (uint64_t)end > CC_MAX_TEXT)
		return -1;
	map = mmap(NULL, (size_t)end, PROT_READ, MAP_PRIVATE, sh->text, 0);
	if (map == MAP_FAILED)
		return -1;
	if (cc_text_timed(map, (size_t)end)) {
		*why = "the source uses __DATE__, __TIME__ or __TIMESTAMP__";
		goto done;
	}
	sha256_init(&h);
	sha256_update(&h, map, (size_t)end);
	sha256_final(d, &h);
	sha256_hex(sh->req.text, d);
	if (cc_text_names(map, (size_t)end, note_file, sh) < 0) {
		*why = "a file the source includes cannot be read";
		goto done;
	}
	ret = 0;
done:
	munmap(map, (size_t)end);
	return ret;
}

static void fill_request(struct shim *sh)
{
	size_t i;

	sh->req.compiler = xstrdup(sh->real);
	sh->req.cwd = xstrdup(sh->cwd);
	for (i = 0; i < sh->args.send.nr; i++)
		strvec_push(&sh->req.args, sh->args.send.v[i]);
	for (i = 0; env_locale[i]; i++) {
		const char *v = getenv(env_locale[i]);

		if (v)
			strvec_pushf(&sh->req.env, "%s=%s", env_locale[i], v);
	}
}

/* After CC_R_NEED: each file's bytes, as u64 length and the bytes. */
static int send_files(struct shim *sh)
{
	size_t i;

	for (i = 0; i < sh->req.files_nr; i++) {
		unsigned char num[8], buf[65536];
		int fd = open(sh->req.files[i].path, O_RDONLY | O_CLOEXEC);
		struct stat st;
		uint64_t left;
		ssize_t n;

		if (fd < 0 || fstat(fd, &st) < 0) {
			if (fd >= 0)
				close(fd);
			return -1;
		}
		left = (uint64_t)st.st_size;
		cc_put_u64(num, left);
		if (cc_write_full(sh->sock, num, 8) < 0)
			left = 1;  /* gone */
		while (left) {
			n = read(fd, buf, left < sizeof(buf) ? (size_t)left : sizeof(buf));
			if (n <= 0 || cc_write_full(sh->sock, buf, (size_t)n) < 0)
				break;
			left -= (uint64_t)n;
		}
		close(fd);
		if (left)
			return -1;
	}
	return 0;
}

/* Where the object goes: -o's, or the source's base name with .o, here. */
static char *output_path(const struct shim *sh)
{
	const char *base = strrchr(sh->args.source, '/'), *dot;

	if (sh->args.output)
		return xstrdup(sh->args.output);
	base = base ? base + 1 : sh->args.source;
	dot = strrchr(base, '.');
	return xstrfmt("%.*s.o", (int)(dot ? dot - base : (long)strlen(base)), base);
}

/* Copies `len` bytes of the socket into `path`; 0, or -1 with the file removed. */
static int write_object(const char *path, int sock, uint64_t len)
{
	char buf[65536];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);

	if (fd < 0)
		return -1;
	while (len) {
		size_t want = len < sizeof(buf) ? (size_t)len : sizeof(buf);

		if (cc_read_full(sock, buf, want) < 0 || cc_write_full(fd, buf, want) < 0) {
			close(fd);
			unlink(path);
			return -1;
		}
		len -= want;
	}
	if (close(fd) < 0) {
		unlink(path);
		return -1;
	}
	return 0;
}

/* The next answer's tag, past the keepalives; 0 when the service is gone or silent. */
static char next_tag(struct shim *sh)
{
	char tag;

	do {
		if (cc_read_full(sh->sock, &tag, 1) < 0)
			return 0;
	} while (tag == CC_R_ALIVE);
	return tag;
}

/* The object: written where the compiler would, its messages printed; 1, or 0. */
static int take_object(struct shim *sh, const char **why)
{
	struct strbuf err = STRBUF_INIT;
	unsigned char head[9];  /* the hit byte, then a u32 or a u64 */
	char *out = NULL;
	uint32_t elen;
	uint64_t len;
	int done = 0;

	*why = "the object did not arrive";
	if (cc_read_full(sh->sock, head, 5) < 0 || (elen = cc_get_u32(head + 1)) > CC_MAX_STDERR)
		return 0;
	strbuf_grow(&err, elen);
	if (cc_read_full(sh->sock, err.buf, elen) < 0)
		goto done;
	strbuf_addlen(&err, elen);
	if (cc_read_full(sh->sock, head + 1, 8) < 0 || (len = cc_get_u64(head + 1)) > CC_MAX_OBJECT)
		goto done;
	out = output_path(sh);
	if (write_object(out, sh->sock, len) < 0)
		goto done;
	cc_write_full(2, err.buf, err.len);
	*why = head[0] ? "hit" : "compiled";
	done = 1;
done:
	strbuf_release(&err);
	free(out);
	return done;
}

/* The service's answers: 1 done, 0 compile it here (*why says why). */
static int converse(struct shim *sh, const char **why)
{
	static char reason[256];
	unsigned char num[4];
	uint32_t n;
	char tag;

	*why = "the service went silent";
	if (cc_request_write(sh->sock, &sh->req) < 0)
		return 0;
	tag = next_tag(sh);
	if (tag == CC_R_NEED) {
		if (send_files(sh) < 0)
			return 0;
		tag = next_tag(sh);
	}
	if (tag == CC_R_OBJECT)
		return take_object(sh, why);
	if (tag != CC_R_FALLBACK || cc_read_full(sh->sock, num, 4) < 0)
		return 0;
	n = cc_get_u32(num);
	n = n < sizeof(reason) - 1 ? n : sizeof(reason) - 1;
	if (cc_read_full(sh->sock, reason, n) < 0)
		return 0;
	reason[n] = 0;
	*why = reason;
	return 0;
}

/* The request a usable manifest names, as if the box had preprocessed: 0, or -1. */
static int request_of(struct shim *sh, const struct cc_manifest *m)
{
	size_t i, k;

	memcpy(sh->req.text, m->text, sizeof(sh->req.text));
	for (i = 0; i < m->paths.nr; i++) {
		char *abs = cc_path_absolute(sh->cwd, m->paths.v[i]);

		for (k = 0; k < sh->req.files_nr; k++)
			if (!strcmp(sh->req.files[k].path, abs))
				break;
		if (k == sh->req.files_nr && cc_path_private(abs, &sh->roots, &sh->shown)) {
			if (!cc_path_plain(abs)) {
				free(abs);
				return -1;
			}
			cc_request_add_file(&sh->req, m->hashes.v[i], abs);
		}
		free(abs);
	}
	return 0;
}

/*
 * Direct mode: asks for the manifests of what this compile is before it is
 * preprocessed, and sends the request of one that holds here.  1 done, 0 none
 * holds (the connection is still open for the usual request; *why), -1 the
 * service will not do it (*why).
 */
static int direct(struct shim *sh, const char **why)
{
	struct strbuf ms = STRBUF_INIT;
	unsigned char num[4];
	const char *at;
	uint32_t len;
	int fd = open(sh->args.source, O_RDONLY | O_NONBLOCK | O_CLOEXEC), ret = -1, at_first = 1;
	char tag;

	*why = "the source cannot be read";
	if (fd < 0)
		return 0;
	if (sha256_fd_hex(sh->req.text, fd) < 0) {
		close(fd);
		return 0;
	}
	close(fd);
	fill_request(sh);
	sh->req.direct = 1;
	*why = "the service went silent";
	if (cc_request_write(sh->sock, &sh->req) < 0)
		goto done;
	tag = next_tag(sh);
	if (tag == CC_R_FALLBACK && cc_read_full(sh->sock, num, 4) == 0) {
		static char reason[256];

		len = cc_get_u32(num);
		len = len < sizeof(reason) - 1 ? len : sizeof(reason) - 1;
		if (cc_read_full(sh->sock, reason, len) == 0) {
			reason[len] = 0;
			*why = reason;
		}
		goto done;
	}
	if (tag != CC_R_MANIFESTS || cc_read_full(sh->sock, num, 4) < 0 ||
	    (len = cc_get_u32(num)) > CC_MAX_STDERR)
		goto done;
	strbuf_grow(&ms, len);
	if (cc_read_full(sh->sock, ms.buf, len) < 0)
		goto done;
	strbuf_addlen(&ms, len);
	*why = "no manifest";
	ret = 0;
	for (at = ms.buf; *at && !ret;) {
		struct cc_manifest m = CC_MANIFEST_INIT;
		const char *its = NULL;
		int usable;

		at = cc_manifest_parse(&m, at);
		usable = cc_manifest_usable(&m, &its);
		/* the newest one's reason is the one to tell */
		if (at_first || usable)
			*why = its;
		at_first = 0;
		if (usable && request_of(sh, &m) < 0) {
			*why = "a file it lists has an unusual path";
			at = "";
		} else if (usable) {
			sh->req.direct = 0;
			ret = converse(sh, why) ? 1 : -1;
		}
		cc_manifest_release(&m);
	}
done:
	strbuf_release(&ms);
	if (ret == 0)
		cc_request_release(&sh->req);
	return ret;
}

/* 1 when the compile was done through the service, 0 when the real compiler must run. */
static int through_service(struct shim *sh)
{
	const char *why = NULL;
	int done;

	if (!cc_args_parse(&sh->args, sh->argc - 1, (const char *const *)sh->argv + 1)) {
		trace(sh, "uncached", sh->args.why);
		return 0;
	}
	if (blocked_by_env(&why) || !sh->own_dir || sh->real[0] != '/' || !cc_is_elf(sh->real) ||
	    !getcwd(sh->cwd, sizeof(sh->cwd)) || !read_places(sh)) {
		trace(sh, "uncached", why ? why : "no service, or a compiler it does not take");
		return 0;
	}
	if (!cc_path_private(sh->cwd, &sh->roots, &sh->shown)) {
		trace(sh, "uncached", "the working directory is not a place of the box's own");
		return 0;
	}
	if ((sh->sock = dial(sh)) < 0) {
		trace(sh, "uncached", "no service");
		return 0;
	}
	/* a direct hit runs no preprocessor, and so would write no dependency file */
	if (!sh->args.deps && !sh->args.pp_deps && !blocked(env_search)) {
		int d = direct(sh, &why);

		if (d) {
			trace(sh, d > 0 ? why : "uncached", d > 0 ? "direct" : why);
			return d > 0;
		}
		trace(sh, "direct-miss", why);
	}
	if (preprocess(sh, &why) < 0 || read_text(sh, &why) < 0) {
		trace(sh, "uncached", why);
		return 0;
	}
	fill_request(sh);
	done = converse(sh, &why);
	trace(sh, done ? why : "uncached", done ? NULL : why);
	return done;
}

/* Everything the shim holds (but sh->real, which the exec still needs). */
static void shim_release(struct shim *sh)
{
	if (sh->sock >= 0)
		close(sh->sock);
	if (sh->text >= 0)
		close(sh->text);
	sh->sock = sh->text = -1;
	cc_args_release(&sh->args);
	cc_request_release(&sh->req);
	strvec_clear(&sh->roots);
	strvec_clear(&sh->shown);
	free(sh->own_dir);
	sh->own_dir = NULL;
}

int cc_shim_main(int argc, char **argv)
{
	struct shim sh = { .argc = argc, .argv = argv, .args = CC_ARGS_INIT, .sock = -1,
			   .text = -1, .roots = STRVEC_INIT, .shown = STRVEC_INIT,
			   .req = CC_REQUEST_INIT };
	const char *slash = strrchr(argv[0], '/');
	int code, done;

	sh.name = slash ? slash + 1 : argv[0];
	/* the program's own name, on a cluster's node: the relay the Slurm runner starts */
	if (argc > 1 && !strcmp(argv[1], "--relay") && !strcmp(sh.name, "nextbot-cc"))
		return cc_relay_main(argc - 1, argv + 1);
	if (!cc_compiler_name(sh.name)) {
		fprintf(stderr, "nextbot-cc: run it as a compiler (cc, gcc, …), not as '%s'\n",
			sh.name);
		return 127;
	}
	find_real(&sh);
	if (!sh.real) {
		fprintf(stderr, "%s: command not found\n", sh.name);
		free(sh.own_dir);
		return 127;
	}
	done = through_service(&sh);
	shim_release(&sh);
	if (done) {
		free(sh.real);
		return 0;
	}
	/* the real compiler, as asked: its argv[0] the path found, as a shell would give */
	argv[0] = sh.real;
	execv(sh.real, argv);
	fprintf(stderr, "%s: %s\n", sh.real, strerror(errno));
	code = errno == ENOENT ? 127 : 126;
	free(sh.real);
	return code;
}
