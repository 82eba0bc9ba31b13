/*
 * K: lines: Perl regular expressions that get_maintainer.pl matches against a patch's
 * changed lines.  Each is translated into a POSIX extended regular expression with
 * glibc's GNU escapes (\b \B \w \W \s \S): the common Perl forms real K: lines use
 * ((?:X), (?i:X), (?i), \d, lazy quantifiers, /x white space) are rewritten; what
 * has no equivalent (lookaround, backreferences, other flags, escapes inside a
 * bracket expression) is refused with a reason.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "bot/people/maint_int.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

struct kw_tr {
	const char *s;		/* the source, at the next character */
	struct strbuf out;	/* the extended regular expression so far */
	const char *why;	/* the first problem (static text) */
	int depth;
	char icase[MAINT_MAX_REGEX + 2]; /* (?i) in force at each group level */
};

static int other_case(int c)
{
	return islower(c) ? toupper(c) : isupper(c) ? tolower(c) : c;
}

/* A range lo-hi of a bracket expression, and under (?i) its letters' other case. */
static void class_range(struct strbuf *extra, int lo, int hi)
{
	static const char *const cases[] = { "az", "AZ" };
	size_t i;

	for (i = 0; i < 2; i++) {
		int a = lo > cases[i][0] ? lo : cases[i][0];
		int b = hi < cases[i][1] ? hi : cases[i][1];

		if (a <= b)
			strbuf_addf(extra, "%c-%c", other_case(a), other_case(b));
	}
}

/*
 * A bracket expression ('[' at t->s): copied, a ']' kept first and a '-' last, and
 * under (?i) each letter's other case added.  Perl reads a backslash inside as an
 * escape, POSIX as itself: refused.
 */
static void bracket(struct kw_tr *t, int icase)
{
	struct strbuf body = STRBUF_INIT, extra = STRBUF_INIT;
	const char *p = t->s + 1;
	int neg = *p == '^', close = 0, dash = 0, caret = 0;

	p += neg;
	if (*p == ']') {
		close = 1;
		p++;
	}
	for (; *p && *p != ']'; p++) {
		if (*p == '\\') {
			t->why = "a backslash inside [...] (an escape to Perl, itself to POSIX)";
			goto done;
		}
		if (p[0] == '[' && p[1] == ':') {
			const char *end = strstr(p + 2, ":]");

			if (!end) {
				t->why = "a '[:' without its ':]'";
				goto done;
			}
			strbuf_add(&body, p, (size_t)(end + 2 - p));
			p = end + 1;
		} else if (p[1] == '-' && p[2] && p[2] != ']') {
			if (strchr("[]^-", p[0]) || strchr("[]^-", p[2]) ||
			    (unsigned char)p[0] > (unsigned char)p[2]) {
				t->why = "a range in [...] that POSIX reads otherwise";
				goto done;
			}
			strbuf_add(&body, p, 3);
			if (icase)
				class_range(&extra, (unsigned char)p[0], (unsigned char)p[2]);
			p += 2;
		} else if (*p == '-' || *p == '^') {
			dash |= *p == '-';
			caret |= *p == '^';
		} else {
			strbuf_addch(&body, *p);
			if (icase && isalpha((unsigned char)*p))
				strbuf_addch(&extra, other_case((unsigned char)*p));
		}
	}
	if (!*p) {
		t->why = "a '[' without its ']'";
		goto done;
	}
	if (!neg && !close && !body.len && !dash && caret)
		strbuf_addstr(&t->out, "\\^"); /* "[^]" would be a negation */
	else
		strbuf_addf(&t->out, "[%s%s%s%s%s%s]", neg ? "^" : "", close ? "]" : "", body.buf,
			    extra.buf, caret ? "^" : "", dash ? "-" : "");
	t->s = p + 1;
done:
	strbuf_release(&body);
	strbuf_release(&extra);
}

/* An escape outside brackets (t->s at the backslash). */
static void escape(struct kw_tr *t)
{
	unsigned char c = (unsigned char)t->s[1];

	t->s += 2;
	if (!c) {
		t->why = "a trailing backslash";
		t->s--;
	} else if (c >= '1' && c <= '9') {
		t->why = "a backreference (\\1 to \\9)";
	} else if (c == 'd' || c == 'D') {
		strbuf_addstr(&t->out, c == 'd' ? "[0-9]" : "[^0-9]");
	} else if (strchr("bBwWsS", c)) {
		strbuf_addf(&t->out, "\\%c", c); /* GNU escapes of glibc's regcomp() */
	} else if (isalnum(c)) {
		t->why = "a Perl escape other than \\b \\B \\w \\W \\s \\S \\d \\D";
	} else if (strchr(".[]()*+?{}|^$\\", c)) {
		strbuf_addf(&t->out, "\\%c", c);
	} else {
		strbuf_addch(&t->out, (char)c); /* "\<" is '<' to Perl, a word start to GNU */
	}
}

/* After a quantifier: Perl's lazy "?" matches the same lines; possessive "+" refused. */
static void quantifier_tail(struct kw_tr *t)
{
	if (*t->s == '?')
		t->s++;
	else if (*t->s == '+')
		t->why = "a possessive quantifier";
}

/* "{n}", "{n,}", "{n,m}" at t->s is a quantifier; anything else is literal to Perl. */
static void brace(struct kw_tr *t)
{
	size_t n = 1 + strspn(t->s + 1, "0123456789");

	if (n > 1 && t->s[n] == ',')
		n += 1 + strspn(t->s + n + 1, "0123456789");
	if (n > 1 && t->s[n] == '}') {
		strbuf_add(&t->out, t->s, n + 1);
		t->s += n + 1;
		quantifier_tail(t);
		return;
	}
	strbuf_addstr(&t->out, "\\{");
	t->s++;
}

static void group_open(struct kw_tr *t)
{
	const char *s = t->s;
	int icase = t->icase[t->depth];

	if (s[1] == '?' && s[2] == 'i' && s[3] == ')') {
		t->icase[t->depth] = 1; /* for the rest of the group */
		t->s += 4;
		return;
	}
	if (s[1] == '?' && s[2] == ':') {
		t->s += 3;
	} else if (s[1] == '?' && s[2] == 'i' && s[3] == ':') {
		icase = 1;
		t->s += 4;
	} else if (s[1] == '?') {
		t->why = "Perl's (?...) other than (?:...), (?i:...) and (?i): lookaround, "
			 "named groups and other flags have no extended regular expression";
		return;
	} else {
		t->s++;
	}
	strbuf_addch(&t->out, '(');
	t->icase[++t->depth] = (char)icase;
}

static void one(struct kw_tr *t)
{
	unsigned char c = (unsigned char)*t->s;

	if (isspace(c)) {
		t->s++; /* the script matches with /x: white space is not matched */
	} else if (c == '\\') {
		escape(t);
	} else if (c == '[') {
		bracket(t, t->icase[t->depth]);
	} else if (c == '(') {
		group_open(t);
	} else if (c == ')') {
		if (!t->depth) {
			t->why = "a ')' without its '('";
			return;
		}
		t->depth--;
		strbuf_addch(&t->out, ')');
		t->s++;
	} else if (c == '{') {
		brace(t);
	} else if (c == '}') {
		strbuf_addstr(&t->out, "\\}");
		t->s++;
	} else if (c == '*' || c == '+' || c == '?') {
		strbuf_addch(&t->out, (char)c);
		t->s++;
		quantifier_tail(t);
	} else if (isalpha(c) && t->icase[t->depth]) {
		strbuf_addf(&t->out, "[%c%c]", c, other_case(c));
		t->s++;
	} else {
		strbuf_addch(&t->out, (char)c);
		t->s++;
	}
}

int maint_keyword_translate(struct strbuf *out, const char *value, struct strbuf *why)
{
	struct kw_tr t = { .s = value, .out = STRBUF_INIT };

	if (!*value)
		t.why = "an empty regular expression";
	else if (strlen(value) > MAINT_MAX_REGEX)
		t.why = "over 256 characters";
	while (!t.why && *t.s && *t.s != '#') /* /x: '#' starts a comment */
		one(&t);
	if (!t.why && t.depth)
		t.why = "a '(' without its ')'";
	if (!t.why && !t.out.len)
		t.why = "an empty regular expression";
	if (!t.why && t.out.len > MAINT_MAX_PATTERN)
		t.why = "longer than 1024 characters once translated";
	if (!t.why)
		t.why = maint_regex_problem(t.out.buf);
	if (t.why) {
		strbuf_addstr(why, t.why);
		strbuf_release(&t.out);
		return -1;
	}
	strbuf_addbuf(out, &t.out);
	strbuf_release(&t.out);
	return 0;
}

int maint_keyword_prepare(struct maint_pattern *p, const char *value, struct strbuf *why)
{
	struct strbuf ere = STRBUF_INIT, re = STRBUF_INIT;
	char msg[256];
	int rc;

	if (maint_keyword_translate(&ere, value, why) < 0)
		return -1;
	/* the script's m/^[+-].*KEYWORD/x: a changed line, the keyword past its '+'/'-' */
	strbuf_addf(&re, "^[+-].*(%s)", ere.buf);
	rc = regcomp(&p->re, re.buf, REG_EXTENDED | REG_NOSUB);
	strbuf_release(&ere);
	strbuf_release(&re);
	if (rc != 0) {
		regerror(rc, &p->re, msg, sizeof(msg));
		strbuf_addf(why, "not an extended regular expression once translated: %s", msg);
		return -1;
	}
	p->kind = MAINT_K;
	p->has_re = 1;
	p->text = xstrdup(value);
	return 0;
}

/*
 * The script reads "+++ x" and "--- x" as a file's header, even when it is a changed
 * line ("-- x" removed, "++ x" added): it matches no keyword there.
 */
static int header_like(const char *line)
{
	return (!strncmp(line, "+++", 3) || !strncmp(line, "---", 3)) &&
	       isspace((unsigned char)line[3]) && line[3 + strspn(line + 3, " \t\r\n\f\v")];
}

int maint_keyword_match(const struct maint_pattern *p, const char *line)
{
	return p->has_re && !header_like(line) && regexec(&p->re, line, 0, NULL, 0) == 0;
}
