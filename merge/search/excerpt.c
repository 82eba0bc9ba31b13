/* Error excerpts and fingerprints: which lines of a failing log a human needs to see. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "merge/search/search.h"
#include "merge/git/sha1_int.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define CONTEXT_AFTER 3
#define TAIL_LINES 20
#define MAKE_RESERVE 4

enum line_class { LINE_PLAIN = 0, LINE_ERROR, LINE_MAKE };

struct line {
	size_t off, len;	/* into the cleaned text */
	enum line_class cls;
};

struct lines {
	struct strbuf text;	/* cleaned lines, each NUL-terminated */
	struct line *items;
	size_t nr, alloc;
};

/* Escape sequences (colours) are dropped; so are control characters but tabs. */
static size_t skip_escape(const char *s, size_t i, size_t end)
{
	if (i + 1 < end && s[i + 1] == '[') {
		for (i += 2; i < end; i++)
			if ((unsigned char)s[i] >= 0x40 && (unsigned char)s[i] <= 0x7e)
				return i + 1;
		return end;
	}
	return i + 2 > end ? end : i + 2;
}

static void strip_prefix(struct strbuf *sb, size_t start, const char *prefix)
{
	size_t plen = prefix ? strlen(prefix) : 0, from = start;
	char *p;

	while (plen && prefix[plen - 1] == '/')
		plen--;
	if (!plen)
		return;
	while ((p = memmem(sb->buf + from, sb->len - from, prefix, plen))) {
		size_t at = p - sb->buf, cut = plen;

		if (at + cut < sb->len && sb->buf[at + cut] == '/')
			cut++;
		memmove(p, p + cut, sb->len - at - cut);
		strbuf_setlen(sb, sb->len - cut);
		/* the cut may join a new prefix ("/a//a/bb/b"): look again from before it */
		from = at - start >= plen ? at - plen + 1 : start;
	}
}

/* Appends the cleaned form of one raw line (text after its last CR) to `text`. */
static void clean_line(struct strbuf *text, const char *s, size_t len, const char *prefix)
{
	size_t i, start = text->len;
	const char *cr;

	while (len && s[len - 1] == '\r')
		len--;
	if ((cr = memrchr(s, '\r', len))) {
		len -= cr + 1 - s;
		s = cr + 1;
	}
	for (i = 0; i < len;) {
		unsigned char c = s[i];

		if (c == 0x1b) {
			i = skip_escape(s, i, len);
			continue;
		}
		if ((c < 0x20 && c != '\t') || c == 0x7f) {
			i++;
			continue;
		}
		strbuf_addch(text, c);
		i++;
	}
	strip_prefix(text, start, prefix);
	if (text->len - start > EXCERPT_LINE_MAX) {
		size_t cut = start + EXCERPT_LINE_MAX;

		/* do not cut a UTF-8 sequence in half */
		while (cut > start && ((unsigned char)text->buf[cut] & 0xc0) == 0x80)
			cut--;
		strbuf_setlen(text, cut);
		strbuf_addstr(text, "...");
	}
}

static int has(const char *l, const char *needle)
{
	return strstr(l, needle) != NULL;
}

static enum line_class classify(const char *l)
{
	static const char *const errors[] = {
		"undefined reference to", "multiple definition of", "ld returned",
		"FAIL", "Segmentation fault", "Aborted", "core dumped", "Kernel panic",
		"BUG:", "panic:", "command not found", ": not found", "Killed",
	};
	size_t i;

	if ((str_starts_with(l, "make") || str_starts_with(l, "gmake")) && has(l, "***"))
		return LINE_MAKE;
	if (str_starts_with(l, "ninja: build stopped"))
		return LINE_MAKE;
	if (strcasestr(l, "error:") || strcasestr(l, "assertion") || str_starts_with(l, "not ok"))
		return LINE_ERROR;
	for (i = 0; i < sizeof(errors) / sizeof(*errors); i++)
		if (has(l, errors[i]))
			return LINE_ERROR;
	return LINE_PLAIN;
}

static void split(struct lines *ls, const char *log, size_t len, const char *prefix)
{
	size_t i = 0;

	while (i < len) {
		const char *nl = memchr(log + i, '\n', len - i);
		size_t n = nl ? (size_t)(nl - (log + i)) : len - i;
		struct line *l;

		ALLOC_GROW(ls->items, ls->nr + 1, ls->alloc);
		l = &ls->items[ls->nr++];
		l->off = ls->text.len;
		clean_line(&ls->text, log + i, n, prefix);
		l->len = ls->text.len - l->off;
		strbuf_addch(&ls->text, '\0');
		i += n + 1;
	}
	for (i = 0; i < ls->nr; i++)
		ls->items[i].cls = classify(ls->text.buf + ls->items[i].off);
}

static const char *line_text(const struct lines *ls, size_t i)
{
	return ls->text.buf + ls->items[i].off;
}

static int is_context_before(const char *l)
{
	return has(l, "In function") || has(l, "In file included from") ||
	       has(l, "In member function") || has(l, "At top level");
}

static int is_caret(const char *l)
{
	l += strspn(l, " \t");
	return *l == '^' || *l == '~';
}

/* The source and caret lines a compiler prints under an error, or test diagnostics. */
static int is_context_after(const char *l, const char *next)
{
	if (l[0] == '#' || has(l, " | ") || has(l, "note:") || is_caret(l))
		return 1;
	return (l[0] == ' ' || l[0] == '\t') && next && is_caret(next);
}

/* Marks line i's group (context included) if the budget allows; returns lines added. */
static size_t mark_group(const struct lines *ls, char *mark, size_t i, size_t budget)
{
	size_t s = i, e = i, j, added = 0;

	if (i > 0 && is_context_before(line_text(ls, i - 1)))
		s = i - 1;
	for (j = i + 1; j < ls->nr && j <= i + CONTEXT_AFTER; j++) {
		const char *next = j + 1 < ls->nr ? line_text(ls, j + 1) : NULL;

		if (!is_context_after(line_text(ls, j), next) || ls->items[j].cls != LINE_PLAIN)
			break;
		e = j;
	}
	for (j = s; j <= e && added < budget; j++) {
		if (j != i && mark[j])
			continue;
		if (!mark[j])
			added++;
		mark[j] = 1;
	}
	return added;
}

static void select_lines(const struct lines *ls, char *mark)
{
	size_t i, used = 0, nmake = 0, budget;

	for (i = 0; i < ls->nr; i++)
		nmake += ls->items[i].cls == LINE_MAKE;
	budget = EXCERPT_MAX_LINES - (nmake < MAKE_RESERVE ? nmake : MAKE_RESERVE);
	for (i = 0; i < ls->nr && used < budget; i++)
		if (ls->items[i].cls == LINE_ERROR && !mark[i])
			used += mark_group(ls, mark, i, budget - used);
	for (i = 0; i < ls->nr && used < EXCERPT_MAX_LINES; i++)
		if (ls->items[i].cls == LINE_MAKE && !mark[i]) {
			mark[i] = 1;
			used++;
		}
	if (used)
		return;
	i = ls->nr; /* the tail, without trailing blank (or only white) lines */
	while (i > 0 && strspn(line_text(ls, i - 1), " \t") == ls->items[i - 1].len)
		i--;
	while (i > 0 && used < TAIL_LINES) {
		mark[--i] = 1;
		used++;
	}
}

static void pick_first_error(struct strbuf *out, const struct lines *ls)
{
	enum line_class want[] = { LINE_ERROR, LINE_MAKE };
	size_t i, k;

	for (k = 0; k < 2; k++)
		for (i = 0; i < ls->nr; i++)
			if (ls->items[i].cls == want[k]) {
				strbuf_addstr(out, line_text(ls, i));
				return;
			}
	for (i = ls->nr; i > 0; i--)
		if (ls->items[i - 1].len) {
			strbuf_addstr(out, line_text(ls, i - 1));
			return;
		}
}

void excerpt_extract(struct strbuf *out, struct strbuf *first_error, const char *log,
		     size_t len, const char *strip_prefix)
{
	struct lines ls = { STRBUF_INIT, NULL, 0, 0 };
	char *mark;
	size_t i;

	split(&ls, log ? log : "", log ? len : 0, strip_prefix);
	mark = xcalloc(ls.nr + 1, 1);
	select_lines(&ls, mark);
	for (i = 0; i < ls.nr; i++)
		if (mark[i]) {
			strbuf_addstr(out, line_text(&ls, i));
			strbuf_addch(out, '\n');
		}
	if (first_error)
		pick_first_error(first_error, &ls);
	free(mark);
	free(ls.items);
	strbuf_release(&ls.text);
}

static int word(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* Length of a run of `n` digits at s (exactly n), else 0. */
static size_t digits(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return 0;
	return isdigit((unsigned char)s[n]) ? 0 : n;
}

/* HH:MM[:SS[.frac]] at s: its length, or 0. */
static size_t time_len(const char *s)
{
	size_t n;

	if (!isdigit((unsigned char)s[0]))
		return 0;
	n = isdigit((unsigned char)s[1]) ? 2 : 1;
	if (s[n] != ':' || !digits(s + n + 1, 2))
		return 0;
	n += 3;
	if (s[n] == ':' && digits(s + n + 1, 2))
		n += 3;
	else
		return 0;	/* "12:30" alone is too likely a file:line */
	if (s[n] == '.' && isdigit((unsigned char)s[n + 1]))
		for (n++; isdigit((unsigned char)s[n]); n++)
			;
	return n;
}

/* YYYY-MM-DD with an optional time and zone: its length, or 0. */
static size_t date_len(const char *s)
{
	size_t n, t = 0;

	if (!digits(s, 4) || s[4] != '-' || !digits(s + 5, 2) || s[7] != '-' ||
	    !digits(s + 8, 2))
		return 0;
	n = 10;
	if ((s[n] == 'T' || s[n] == ' ') && (t = time_len(s + n + 1)))
		n += 1 + t;
	if (s[n] == 'Z')
		n++;
	else if (t && (s[n] == '+' || s[n] == '-') && digits(s + n + 1, 2))
		n += s[n + 3] == ':' && digits(s + n + 4, 2) ? 6 : 3;
	return n;
}

/* "[ 123.456789]" as dmesg stamps lines: its length, or 0. */
static size_t stamp_len(const char *s)
{
	size_t n = 1;

	while (s[n] == ' ')
		n++;
	if (!isdigit((unsigned char)s[n]))
		return 0;
	while (isdigit((unsigned char)s[n]))
		n++;
	if (s[n] != '.')
		return 0;
	for (n++; isdigit((unsigned char)s[n]); n++)
		;
	return s[n] == ']' ? n + 1 : 0;
}

/* A hex id: 7+ hex digits with a digit among them, a whole word. */
static size_t hexid_len(const char *s)
{
	size_t n = 0;
	int digit = 0;

	while (isxdigit((unsigned char)s[n])) {
		digit |= isdigit((unsigned char)s[n]);
		n++;
	}
	return n >= 7 && digit && !word(s[n]) ? n : 0;
}

/* Length of the noise at s[i] that the fingerprint drops, or 0. */
static size_t noise_len(const char *s, size_t i)
{
	const char *p = s + i;
	int word_start = i == 0 || !word(s[i - 1]);
	size_t n;

	if (*p == ':' && isdigit((unsigned char)p[1])) {
		for (n = 1; isdigit((unsigned char)p[n]); n++)
			;
		return n;
	}
	if (*p == '[' && (n = stamp_len(p)))
		return n;
	if (!word_start)
		return 0;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && isxdigit((unsigned char)p[2])) {
		for (n = 2; isxdigit((unsigned char)p[n]); n++)
			;
		return n;
	}
	if ((n = date_len(p)) || (n = time_len(p)) || (n = hexid_len(p)))
		return n;
	return 0;
}

void excerpt_normalise(struct strbuf *out, const char *line)
{
	size_t i = 0, start = out->len, n;
	int space = 0;

	while (line && line[i]) {
		if ((n = noise_len(line, i))) {
			i += n;
			continue;
		}
		if (!strncasecmp(line + i, "line ", 5) && (i == 0 || !word(line[i - 1])) &&
		    isdigit((unsigned char)line[i + 5])) {
			if (space && out->len > start)
				strbuf_addch(out, ' ');
			space = 0;
			strbuf_add(out, line + i, 4);
			for (i += 5; isdigit((unsigned char)line[i]); i++)
				;
			continue;
		}
		if (isspace((unsigned char)line[i])) {
			space = 1;
			i++;
			continue;
		}
		if (space && out->len > start)
			strbuf_addch(out, ' ');
		space = 0;
		strbuf_addch(out, line[i++]);
	}
}

void excerpt_fingerprint(struct strbuf *out, const char *patch_id, const char *command_name,
			 const char *first_error_line)
{
	strbuf_addstr(out, patch_id ? patch_id : "");
	strbuf_addch(out, '\n');
	strbuf_addstr(out, command_name ? command_name : "");
	strbuf_addch(out, '\n');
	excerpt_normalise(out, first_error_line);
}

/*
 * Drops from `sb` (from `start` on) the decimal numbers that stand alone as words,
 * and the spaces they leave doubled or trailing.
 */
static void drop_numbers(struct strbuf *sb, size_t start)
{
	size_t i = start, o = start, n;

	while (i < sb->len) {
		if (isdigit((unsigned char)sb->buf[i]) && (i == start || !word(sb->buf[i - 1]))) {
			for (n = i; n < sb->len && (isdigit((unsigned char)sb->buf[n]) ||
						    (sb->buf[n] == '.' &&
						     isdigit((unsigned char)sb->buf[n + 1]))); n++)
				;
			if (n == sb->len || !word(sb->buf[n])) {
				i = n;
				continue;
			}
		}
		if (sb->buf[i] == ' ' && (o == start || sb->buf[o - 1] == ' ')) {
			i++; /* a space the dropped number stood between */
			continue;
		}
		sb->buf[o++] = sb->buf[i++];
	}
	while (o > start && sb->buf[o - 1] == ' ')
		o--;
	strbuf_setlen(sb, o);
}

void excerpt_flaky_fingerprint(struct strbuf *out, const char *who, const char *command_name,
			       const char *first_error_line)
{
	size_t start;

	excerpt_fingerprint(out, who, command_name, NULL);
	start = out->len;
	excerpt_normalise(out, first_error_line);
	drop_numbers(out, start);
}

void excerpt_flag_id(char out[13], const char *fingerprint)
{
	char hex[SHA1_HEXSZ + 1];

	sha1_hex(hex, fingerprint ? fingerprint : "", fingerprint ? strlen(fingerprint) : 0);
	memcpy(out, hex, 12);
	out[12] = '\0';
}
