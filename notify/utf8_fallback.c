/*
 * TEMPORARY weak stand-ins for util/utf8.c until it lands (another helper owns it);
 * the real strong definitions override these.  Delete this file then.
 */
#include <string.h>

#include "util/utf8.h"
#include "util/banned.h"

/* Length of the valid UTF-8 sequence at s (at most len bytes), or 0. */
static size_t __seq(const unsigned char *s, size_t len)
{
	size_t n, i;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (n > len)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

__attribute__((weak)) int utf8_is_valid(const char *s, size_t len)
{
	size_t i = 0, n;

	while (i < len) {
		if (!(n = __seq((const unsigned char *)s + i, len - i)))
			return 0;
		i += n;
	}
	return 1;
}

__attribute__((weak)) void utf8_repair(struct strbuf *out, const char *in, size_t len)
{
	size_t i = 0, n;

	while (i < len) {
		n = __seq((const unsigned char *)in + i, len - i);
		if (n) {
			strbuf_add(out, in + i, n);
			i += n;
		} else {
			strbuf_addstr(out, "\xef\xbf\xbd");
			i++;
		}
	}
}

__attribute__((weak)) void utf8_strip_controls(struct strbuf *sb)
{
	struct strbuf tmp = STRBUF_INIT;
	size_t i;

	for (i = 0; i < sb->len; i++) {
		unsigned char c = sb->buf[i];

		if (c == 0xc2 && i + 1 < sb->len && (unsigned char)sb->buf[i + 1] >= 0x80 &&
		    (unsigned char)sb->buf[i + 1] <= 0x9f) {
			strbuf_addch(&tmp, ' ');
			i++;
		} else {
			strbuf_addch(&tmp, c < 0x20 || c == 0x7f ? ' ' : c);
		}
	}
	strbuf_reset(sb);
	strbuf_addbuf(sb, &tmp);
	strbuf_release(&tmp);
}
