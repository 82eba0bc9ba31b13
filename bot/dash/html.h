/*
 * HTML for `report --html` (bot/ only): escaping of text from strangers (repaired
 * to valid UTF-8, control characters removed, every special character an entity)
 * and the frame every page shares (viewport, style sheet, navigation).
 */
#ifndef BOT_HTML_H
#define BOT_HTML_H

#include "util/strbuf.h"

/* One line of text: repaired, controls as spaces, escaped. */
void html_line(struct strbuf *out, const char *s);
/* At most n bytes of s, as html_line() (a 12-hex id from a longer one). */
void html_line_n(struct strbuf *out, const char *s, size_t n);
/* Several lines (for <pre>): repaired, controls but LF and TAB removed, escaped. */
void html_text(struct strbuf *out, const char *s);
/* An attribute value or a path in a link: as html_line(). */
#define html_attr html_line

/*
 * The top of a page: doctype, charset, viewport, title, the style sheet, and a
 * link back to the index (`root` is the relative way there: "" or "../").
 */
void html_begin(struct strbuf *out, const char *title, const char *root);
void html_end(struct strbuf *out);

#endif
