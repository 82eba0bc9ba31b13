/* The wire between a shim in a box and the compile service: framed, every length capped. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cc/cc_int.h"
#include "util/xalloc.h"
#include "util/banned.h"

/*
 * A request: "NBCC2\0", u32 header length, the header: fields of u8 tag, u32
 * length and bytes (no NUL).  Integers are big-endian.
 */
#define MAGIC_LEN 6

void cc_put_u32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

void cc_put_u64(unsigned char *p, uint64_t v)
{
	cc_put_u32(p, (uint32_t)(v >> 32));
	cc_put_u32(p + 4, (uint32_t)v);
}

uint32_t cc_get_u32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

uint64_t cc_get_u64(const unsigned char *p)
{
	return (uint64_t)cc_get_u32(p) << 32 | cc_get_u32(p + 4);
}

int cc_read_full(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!n)
				errno = EPIPE;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int cc_write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

void cc_request_release(struct cc_request *r)
{
	size_t i;

	free(r->compiler);
	free(r->cwd);
	strvec_clear(&r->args);
	strvec_clear(&r->env);
	for (i = 0; i < r->files_nr; i++)
		free(r->files[i].path);
	free(r->files);
	r->files = NULL;
	r->files_nr = r->files_alloc = 0;
	r->compiler = r->cwd = NULL;
	r->text[0] = 0;
	r->direct = 0;
}

void cc_request_add_file(struct cc_request *r, const char hash[SHA256_HEXSZ + 1],
			 const char *path)
{
	ALLOC_GROW(r->files, r->files_nr + 1, r->files_alloc);
	memcpy(r->files[r->files_nr].hash, hash, SHA256_HEXSZ + 1);
	r->files[r->files_nr++].path = xstrdup(path);
}

int cc_path_plain(const char *p)
{
	const char *c;

	if (p[0] != '/' || strlen(p) > 4095)
		return 0;
	for (c = p; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return 0;
	for (c = p; c; c = strchr(c + 1, '/')) {
		if (c[1] == '/' || (!c[1] && c != p))
			return 0;
		if (c[1] == '.' && (!c[2] || c[2] == '/'))
			return 0;
		if (c[1] == '.' && c[2] == '.' && (!c[3] || c[3] == '/'))
			return 0;
	}
	return 1;
}

int cc_path_under(const char *path, const char *dir)
{
	size_t len = strlen(dir);

	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (len == 1)
		return path[0] == '/';
	return !strncmp(path, dir, len) && (path[len] == '/' || !path[len]);
}

int cc_path_private(const char *path, const struct strvec *roots, const struct strvec *shown)
{
	size_t i;
	int inside = 0;

	for (i = 0; i < roots->nr && !inside; i++)
		inside = cc_path_under(path, roots->v[i]);
	for (i = 0; inside && i < shown->nr; i++)
		inside = !cc_path_under(path, shown->v[i]);
	return inside;
}

static void field(struct strbuf *h, int tag, const char *s)
{
	unsigned char len[4];

	strbuf_addch(h, tag);
	cc_put_u32(len, (uint32_t)strlen(s));
	strbuf_add(h, len, 4);
	strbuf_addstr(h, s);
}

int cc_request_write(int fd, const struct cc_request *r)
{
	struct strbuf h = STRBUF_INIT, f = STRBUF_INIT;
	size_t i;
	int ret;

	strbuf_add(&h, r->direct ? CC_MAGIC_DIRECT : CC_MAGIC, MAGIC_LEN);
	strbuf_add(&h, "\0\0\0\0", 4);
	field(&h, CC_F_COMPILER, r->compiler);
	field(&h, CC_F_CWD, r->cwd);
	field(&h, CC_F_TEXT, r->text);
	for (i = 0; i < r->args.nr; i++)
		field(&h, CC_F_ARG, r->args.v[i]);
	for (i = 0; i < r->env.nr; i++)
		field(&h, CC_F_ENV, r->env.v[i]);
	for (i = 0; i < r->files_nr; i++) {
		strbuf_reset(&f);
		strbuf_addf(&f, "%s %s", r->files[i].hash, r->files[i].path);
		field(&h, CC_F_FILE, f.buf);
	}
	cc_put_u32((unsigned char *)h.buf + MAGIC_LEN, (uint32_t)(h.len - MAGIC_LEN - 4));
	ret = cc_write_full(fd, h.buf, h.len);
	strbuf_release(&h);
	strbuf_release(&f);
	return ret;
}

/* The locale of the messages: the only environment a request carries. */
static int env_ok(const char *e)
{
	static const char *const names[] = { "LANG=", "LC_ALL=", "LC_MESSAGES=", "LC_CTYPE=",
					     NULL };
	const char *v = NULL;
	size_t i;

	for (i = 0; names[i] && !v; i++)
		if (!strncmp(e, names[i], strlen(names[i])))
			v = e + strlen(names[i]);
	if (!v || strlen(v) > 64)
		return 0;
	for (; *v; v++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.@-",
			    *v))
			return 0;
	return 1;
}

static int is_hex64(const char *s)
{
	size_t i;

	for (i = 0; i < SHA256_HEXSZ; i++)
		if (!s[i] || !strchr("0123456789abcdef", s[i]))
			return 0;
	return 1;
}

/* Takes one field from the header's fields; returns its tag, 0 at the end, -1 malformed. */
static int next_field(char **out, const unsigned char **p, const unsigned char *end)
{
	uint32_t len;
	int tag;

	if (*p == end)
		return 0;
	if (end - *p < 5)
		return -1;
	tag = (*p)[0];
	len = cc_get_u32(*p + 1);
	if (!tag || len > CC_MAX_FIELD || (uint32_t)(end - *p - 5) < len ||
	    memchr(*p + 5, 0, len))
		return -1;
	*out = xstrndup((const char *)*p + 5, len);
	*p += 5 + len;
	return tag;
}

/* One field in its place; 0 taken, -1 not (the caller frees s). */
static int take_field(struct cc_request *r, int n, int tag, char *s)
{
	int later = n > 3;

	if (n == 1 && tag == CC_F_COMPILER && cc_path_plain(s)) {
		r->compiler = s;
	} else if (n == 2 && tag == CC_F_CWD && cc_path_plain(s)) {
		r->cwd = s;
	} else if (n == 3 && tag == CC_F_TEXT && strlen(s) == SHA256_HEXSZ && is_hex64(s)) {
		memcpy(r->text, s, SHA256_HEXSZ + 1);
		free(s);
	} else if (later && tag == CC_F_ARG && !r->env.nr && !r->files_nr) {
		strvec_push_nodup(&r->args, s);
	} else if (later && tag == CC_F_ENV && !r->files_nr && env_ok(s)) {
		strvec_push_nodup(&r->env, s);
	} else if (later && tag == CC_F_FILE && strlen(s) > SHA256_HEXSZ + 1 && is_hex64(s) &&
		   s[SHA256_HEXSZ] == ' ' && cc_path_plain(s + SHA256_HEXSZ + 1)) {
		s[SHA256_HEXSZ] = 0;
		cc_request_add_file(r, s, s + SHA256_HEXSZ + 1);
		free(s);
	} else {
		return -1;
	}
	return 0;
}

/* Fills `r` from the fields; 0, or -1 with *why. */
static int parse_fields(struct cc_request *r, const unsigned char *p, const unsigned char *end,
			const char **why)
{
	int tag, n = 0;
	char *s = NULL;

	*why = "a malformed request";
	while ((tag = next_field(&s, &p, end)) > 0) {
		if (++n > CC_MAX_FIELDS) {
			free(s);
			*why = "too many fields";
			return -1;
		}
		if (take_field(r, n, tag, s) < 0) {
			free(s);
			return -1;
		}
		s = NULL;
	}
	return tag < 0 || n < 3 ? -1 : 0;
}

int cc_request_read(struct cc_request *out, int fd, const char **why)
{
	unsigned char head[MAGIC_LEN + 4];
	unsigned char *h = NULL;
	uint32_t len;
	int ret = -1;

	*why = "the request ended early";
	if (cc_read_full(fd, head, sizeof(head)) < 0)
		goto done;
	out->direct = !memcmp(head, CC_MAGIC_DIRECT, MAGIC_LEN);
	if (!out->direct && memcmp(head, CC_MAGIC, MAGIC_LEN)) {
		*why = "not a request of this version";
		goto done;
	}
	len = cc_get_u32(head + MAGIC_LEN);
	if (len > CC_MAX_HEADER) {
		*why = "the request is too long";
		goto done;
	}
	h = xmalloc(len + 1);
	if (cc_read_full(fd, h, len) < 0 || parse_fields(out, h, h + len, why) < 0)
		goto done;
	if (out->direct && out->files_nr) {
		*why = "a direct request names no files";
		goto done;
	}
	ret = 0;
done:
	free(h);
	return ret;
}

int cc_addr_split(const char *addr, char **host, char **port)
{
	const char *colon, *h = addr, *h_end;
	char *end;
	long n;

	*host = *port = NULL;
	if (addr[0] == '[') {
		h = addr + 1;
		h_end = strchr(h, ']');
		if (!h_end || h_end[1] != ':')
			return -1;
		colon = h_end + 1;
	} else {
		colon = strrchr(addr, ':');
		if (!colon || memchr(addr, ':', (size_t)(colon - addr)))
			return -1;
		h_end = colon;
	}
	errno = 0;
	n = strtol(colon + 1, &end, 10);
	if (h_end == h || !colon[1] || *end || errno || n < 0 || n > 65535)
		return -1;
	*host = xstrndup(h, (size_t)(h_end - h));
	*port = xstrdup(colon + 1);
	return 0;
}

int cc_token_read(char out[CC_TOKEN_HEXSZ + 1], const char *path)
{
	char buf[CC_TOKEN_HEXSZ + 2];
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf));
	size_t i;

	if (fd >= 0)
		close(fd);
	if (n < CC_TOKEN_HEXSZ || (n == CC_TOKEN_HEXSZ + 1 && buf[CC_TOKEN_HEXSZ] != '\n') ||
	    n > CC_TOKEN_HEXSZ + 1)
		return -1;
	for (i = 0; i < CC_TOKEN_HEXSZ; i++)
		if (!strchr("0123456789abcdef", buf[i]) || !buf[i])
			return -1;
	memcpy(out, buf, CC_TOKEN_HEXSZ);
	out[CC_TOKEN_HEXSZ] = 0;
	return 0;
}
