/*
 * Direct mode's reading and checking: the files a preprocessed text came from, the
 * folders the compiler searched, and whether a manifest the service wrote still
 * holds in a box without preprocessing there.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cc/cc_int.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* One linemarker's name with its escapes undone, into `raw`; -1 when malformed. */
static int unescape(struct strbuf *raw, const char *name, size_t len)
{
	size_t i;

	strbuf_reset(raw);
	for (i = 0; i < len; i++) {
		if (name[i] == '\\' && i + 1 < len && (name[i + 1] == '\\' || name[i + 1] == '"'))
			i++;
		else if (name[i] == '\\')
			return -1;
		strbuf_addch(raw, name[i]);
	}
	return 0;
}

int cc_text_names(const char *t, size_t len, int (*fn)(void *data, const char *name),
		  void *data)
{
	const char *p = t, *end = t + len;
	struct strbuf raw = STRBUF_INIT;
	int ret = 0;

	for (; p < end && !ret; p = memchr(p, '\n', (size_t)(end - p)), p = p ? p + 1 : end) {
		const char *q = p, *name;

		if (end - q < 4 || q[0] != '#' || q[1] != ' ' || q[2] < '0' || q[2] > '9')
			continue;
		for (q += 2; q < end && *q >= '0' && *q <= '9'; q++)
			;
		if (end - q < 2 || q[0] != ' ' || q[1] != '"')
			continue;
		for (name = q += 2; q < end && *q != '"' && *q != '\n'; q++)
			if (*q == '\\' && q + 1 < end)
				q++;
		if (q == end || *q != '"' || unescape(&raw, name, (size_t)(q - name)) < 0 ||
		    fn(data, raw.buf) < 0)
			ret = -1;
	}
	strbuf_release(&raw);
	return ret;
}

int cc_search_dirs(struct cc_search *out, const char *v)
{
	static const char ignored[] = "ignoring nonexistent directory \"";
	static const char end[] = "End of search list.";
	static const char quote_start[] = "#include \"...\" search starts here:";
	static const char bracket_start[] = "#include <...> search starts here:";
	const char *line = v;
	struct strvec *in = NULL;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		if (len == sizeof(end) - 1 && !strncmp(line, end, len))
			return out->bracket.nr ? 0 : -1;
		if (!strncmp(line, ignored, sizeof(ignored) - 1) && line[len - 1] == '"' &&
		    len > sizeof(ignored))
			strvec_push_nodup(&out->ignored, xstrndup(line + sizeof(ignored) - 1,
								  len - sizeof(ignored)));
		else if (len == sizeof(quote_start) - 1 && !strncmp(line, quote_start, len))
			in = &out->quote;
		else if (len == sizeof(bracket_start) - 1 && !strncmp(line, bracket_start, len))
			in = &out->bracket;
		else if (in && len > 1 && line[0] == ' ')
			strvec_push_nodup(in, xstrndup(line + 1, len - 1));
		line = nl ? nl + 1 : NULL;
	}
	return -1;
}

void cc_search_release(struct cc_search *s)
{
	strvec_clear(&s->quote);
	strvec_clear(&s->bracket);
	strvec_clear(&s->ignored);
}

/* Past blanks and block comments on the line from `i`; -1 for a comment the line does not end. */
static long past_blanks(const char *l, size_t len, size_t i)
{
	for (;;) {
		while (i < len && (l[i] == ' ' || l[i] == '\t' || l[i] == '\f' || l[i] == '\v' ||
				   l[i] == '\r'))
			i++;
		if (i + 1 < len && l[i] == '/' && l[i + 1] == '*') {
			for (i += 2; i + 1 < len && !(l[i] == '*' && l[i + 1] == '/'); i++)
				;
			if (i + 1 >= len)
				return -1;
			i += 2;
			continue;
		}
		return (long)i;
	}
}

static int ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* A directive at l[i] (past its '#'): an include's name to fn; -1 for one it cannot read. */
static int directive(const char *l, size_t len, size_t i,
		     int (*fn)(void *data, int kind, const char *name), void *data)
{
	long at = past_blanks(l, len, i);
	size_t w, e;
	int kind = 0, ret;
	char close;
	char *name;

	if (at < 0)
		return -1;
	i = (size_t)at;
	if (i == len || l[i] == '\n')
		return 0;       /* the null directive */
	if (!ident_char(l[i]) || (l[i] >= '0' && l[i] <= '9'))
		return -1;      /* a line marker, or something unlike C */
	for (w = i; w < len && ident_char(l[w]); w++)
		;
	if ((w - i == 4 && !strncmp(l + i, "line", 4)))
		return -1;      /* names change: the markers would not tell who includes whom */
	if (w - i == 12 && !strncmp(l + i, "include_next", 12))
		kind = CC_INCLUDE_NEXT;
	else if (!(w - i == 7 && !strncmp(l + i, "include", 7)) &&
		 !(w - i == 6 && !strncmp(l + i, "import", 6)))
		return 0;
	if ((at = past_blanks(l, len, w)) < 0)
		return -1;
	i = (size_t)at;
	if (i < len && l[i] == '"')
		kind |= CC_INCLUDE_QUOTE, close = '"';
	else if (i < len && l[i] == '<')
		close = '>';
	else
		return -1;      /* a computed include */
	for (e = i + 1; e < len && l[e] != close && l[e] != '\n'; e++)
		;
	if (e == len || l[e] != close || e == i + 1)
		return -1;
	name = xstrndup(l + i + 1, e - i - 1);
	ret = fn(data, kind, name);
	free(name);
	return ret;
}

/* The bytes with lines joined where a backslash (and blanks) ends them; -1 on a NUL. */
static int join_lines(struct strbuf *t, const char *bytes, size_t n)
{
	size_t i, k;

	for (i = 0; i < n; i++) {
		if (bytes[i] == '\\') {
			for (k = i + 1; k < n && (bytes[k] == ' ' || bytes[k] == '\t' ||
						  bytes[k] == '\r');
			     k++)
				;
			if (k < n && bytes[k] == '\n') {
				i = k;
				continue;
			}
		}
		if (!bytes[i])
			return -1;
		strbuf_addch(t, bytes[i]);
	}
	return 0;
}

/* How long the directive sign at l[j] is ('#', '%:', '??='); 0 if it is none. */
static size_t directive_sign(const char *l, size_t len, size_t j)
{
	if (l[j] == '#')
		return 1;
	if (l[j] == '%' && j + 1 < len && l[j + 1] == ':')
		return 2;
	if (l[j] == '?' && j + 2 < len && l[j + 1] == '?' && l[j + 2] == '=')
		return 3;
	return 0;
}

/* Past a string or character literal opening at l[j]; *raw when it may be a raw string. */
static size_t past_literal(const char *l, size_t len, size_t j, int *raw)
{
	char c = l[j];

	*raw = c == '"' && j && l[j - 1] == 'R';
	for (j++; j < len && l[j] != c; j++)
		if (l[j] == '\\')
			j++;
	return j + 1;
}

/* One joined line: its directive, if it opens with one; comments carried in *in_comment. */
static int read_line(const char *l, size_t len, int *in_comment,
		     int (*fn)(void *data, int kind, const char *name), void *data)
{
	size_t j = 0, sign;
	int first = 1, raw;

	while (j < len) {
		char c = l[j];

		if (*in_comment) {
			if (c == '*' && j + 1 < len && l[j + 1] == '/')
				*in_comment = 0, j++;
			j++;
		} else if (c == '/' && j + 1 < len && l[j + 1] == '*') {
			*in_comment = 1;
			j += 2;
		} else if (c == '/' && j + 1 < len && l[j + 1] == '/') {
			return 0;
		} else if (c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\r') {
			j++;
		} else if (first && (sign = directive_sign(l, len, j))) {
			/* a directive is its line (a comment ending past it refused) */
			return directive(l, len, j + sign, fn, data);
		} else if (c == '"' || c == '\'') {
			/* a raw string may hold lines of anything: not read here */
			j = past_literal(l, len, j, &raw);
			if (raw)
				return -1;
			first = 0;
		} else {
			first = 0;
			j++;
		}
	}
	return 0;
}

int cc_include_names(const char *bytes, size_t n, int (*fn)(void *data, int kind, const char *name),
		     void *data)
{
	struct strbuf t = STRBUF_INIT;
	size_t i;
	int in_comment = 0, ret = join_lines(&t, bytes, n);

	for (i = 0; i < t.len && !ret;) {
		const char *l = t.buf + i, *nl = memchr(l, '\n', t.len - i);
		size_t len = nl ? (size_t)(nl - l) : t.len - i;

		ret = read_line(l, len, &in_comment, fn, data);
		i += len + 1;
	}
	strbuf_release(&t);
	return ret;
}

void cc_manifest_release(struct cc_manifest *m)
{
	strvec_clear(&m->absent);
	strvec_clear(&m->paths);
	strvec_clear(&m->hashes);
}

const char *cc_manifest_parse(struct cc_manifest *m, const char *s)
{
	const char *line = s;

	m->key[0] = m->text[0] = 0;
	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		if (len > 2 && line[0] == 'K' && m->key[0] && m->text[0])
			return line; /* the next one */
		if (len == SHA256_HEXSZ + 2 && line[0] == 'K' && line[1] == ' ') {
			memcpy(m->key, line + 2, SHA256_HEXSZ);
			m->key[SHA256_HEXSZ] = 0;
		} else if (len == SHA256_HEXSZ + 2 && line[0] == 'T' && line[1] == ' ') {
			memcpy(m->text, line + 2, SHA256_HEXSZ);
			m->text[SHA256_HEXSZ] = 0;
		} else if (len > 2 && line[0] == 'C' && line[1] == ' ') {
			strvec_push_nodup(&m->absent, xstrndup(line + 2, len - 2));
		} else if (len > SHA256_HEXSZ + 3 && line[0] == 'F' && line[1] == ' ' &&
			   line[SHA256_HEXSZ + 2] == ' ') {
			strvec_push_nodup(&m->hashes, xstrndup(line + 2, SHA256_HEXSZ));
			strvec_push_nodup(&m->paths, xstrndup(line + SHA256_HEXSZ + 3,
							      len - SHA256_HEXSZ - 3));
		}
		line = nl ? nl + 1 : line + len;
	}
	return line;
}

/* The folder of a path as named: "" for a bare name, NULL for "/x" (never usable). */
char *cc_dir_of(const char *p)
{
	const char *slash = strrchr(p, '/');

	if (!slash)
		return xstrdup("");
	if (slash == p)
		return NULL;
	return xstrndup(p, (size_t)(slash - p));
}

char *cc_path_join(const char *dir, const char *name)
{
	return *dir ? xstrfmt("%s/%s", dir, name) : xstrdup(name);
}

/* Whether anything is at `p`: only "no such file" and "not a folder" say nothing is. */
static int exists(const char *p)
{
	struct stat st;

	return !stat(p, &st) || (errno != ENOENT && errno != ENOTDIR);
}

int cc_manifest_usable(const struct cc_manifest *m, const char **why)
{
	size_t i;

	*why = "a file it lists is not the same here";
	if (!m->key[0] || !m->text[0] || !m->paths.nr || m->paths.nr != m->hashes.nr)
		return 0;
	for (i = 0; i < m->paths.nr; i++) {
		char hex[SHA256_HEXSZ + 1];
		struct stat st;
		int fd = open(m->paths.v[i], O_RDONLY | O_NONBLOCK | O_CLOEXEC), same;

		same = fd >= 0 && !fstat(fd, &st) && S_ISREG(st.st_mode) &&
		       !sha256_fd_hex(hex, fd) && !strcmp(hex, m->hashes.v[i]);
		if (fd >= 0)
			close(fd);
		if (!same)
			return 0;
	}
	*why = "a header it does not list would now be found first";
	for (i = 0; i < m->absent.nr; i++)
		if (exists(m->absent.v[i]))
			return 0;
	*why = NULL;
	return 1;
}

char *cc_path_absolute(const char *cwd, const char *p)
{
	struct strbuf sb = STRBUF_INIT;
	char *copy = xstrdup(p), *part, *save = NULL;

	if (p[0] != '/')
		strbuf_addstr(&sb, cwd);
	for (part = strtok_r(copy, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
		if (!strcmp(part, "."))
			continue;
		if (!strcmp(part, "..")) {
			char *slash = strrchr(sb.buf, '/');

			strbuf_setlen(&sb, slash ? (size_t)(slash - sb.buf) : 0);
			continue;
		}
		strbuf_addf(&sb, "/%s", part);
	}
	if (!sb.len)
		strbuf_addch(&sb, '/');
	free(copy);
	return strbuf_detach(&sb, NULL);
}
