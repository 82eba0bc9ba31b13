/* Escaping and the page frame of the dashboard: hostile commit text stays text. */
#include <string.h>

#include "bot/dash/html.h"
#include "util/utf8.h"
#include "util/banned.h"

/* Verdicts as background colours; the same class on a <th> or a <td>. */
static const char *const css =
	"body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;"
	"padding:1em;max-width:72em;line-height:1.4;color:#111;background:#fff}"
	"h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.5em}"
	"a{color:#0645ad}nav{font-size:90%;margin-bottom:1em}"
	".scroll{overflow-x:auto;-webkit-overflow-scrolling:touch}"
	"table{border-collapse:collapse;margin:.3em 0}"
	"td,th{border:1px solid #bbb;padding:3px 6px;font-size:90%;vertical-align:top;"
	"text-align:left}"
	/* a 40-hex id or a long address breaks anywhere rather than widen a phone's page */
	"td,th,li,p,h1,h2,h3,code{overflow-wrap:anywhere}"
	/* ids and kinds are words: never broken, a table too wide scrolls in its .scroll */
	".scroll td,.scroll th,.scroll td code{overflow-wrap:break-word}"
	".id,.kind,.grid td,.clean,.regression,.unfinished,.failed,.base-broken,.merged,"
	".reverted,.previous-version,.stale,.left-out,.fetch-failed{white-space:nowrap}"
	"th{background:#eee}.grid th{white-space:nowrap}"
	".merged,.clean{background:#b7e4b0}.reverted{background:#f7d27a}"
	".regression{background:#e58080}"
	".previous-version{background:#f3e6a0}.stale,.unfinished{background:#d8d8d8}"
	".left-out{background:#f4a6a6}.fetch-failed,.base-broken,.failed{background:#e58080}"
	".open{background:#f7d27a}.resolved{background:#b7e4b0}"
	".dropped,.dismissed{background:#d8d8d8}"
	".in-next{background:#b7e4b0}.held,.in-tree,.watched{background:#f3e6a0}"
	".reverted-in-next{background:#f7d27a}.removed{background:#d8d8d8}"
	".why{display:block;font-size:85%;color:#333}"
	/* the night grid in the colours of each night's result: green only when clean */
	".grid .night-regression.merged,.grid .night-failed.merged,"
	".grid .night-base-broken.merged{background:#f6caca}"
	".grid .night-unfinished.merged{background:#d8d8d8}"
	"code,pre{font-family:ui-monospace,'DejaVu Sans Mono',monospace;font-size:88%}"
	"pre{background:#f4f4f4;padding:.7em;overflow-x:auto;max-width:100%}"
	"ul.items{padding-left:1.2em}ul.items li{margin:.3em 0}"
	".subject{font-weight:600}.wrap{overflow-wrap:anywhere}"
	"@media (max-width:40em){body{padding:.5em}td,th{font-size:80%;padding:2px 4px}"
	"h1{font-size:1.25em}}";

/* Text as util/utf8.c shows it (controls, bidi controls), then HTML-escaped. */
static void put_escaped(struct strbuf *out, const char *s, size_t len, int multiline)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	utf8_clean_text(&sb, s ? s : "", s ? len : 0);
	for (i = 0; i < sb.len; i++) {
		unsigned char c = (unsigned char)sb.buf[i];

		if (c == '\n' || c == '\t') {
			strbuf_addch(out, multiline ? (char)c : ' ');
			continue;
		}
		switch (c) {
		case '<': strbuf_addstr(out, "&lt;"); break;
		case '>': strbuf_addstr(out, "&gt;"); break;
		case '&': strbuf_addstr(out, "&amp;"); break;
		case '"': strbuf_addstr(out, "&quot;"); break;
		case '\'': strbuf_addstr(out, "&#39;"); break;
		default: strbuf_addch(out, (char)c);
		}
	}
	strbuf_release(&sb);
}

void html_line(struct strbuf *out, const char *s)
{
	put_escaped(out, s, s ? strlen(s) : 0, 0);
}

void html_line_n(struct strbuf *out, const char *s, size_t n)
{
	put_escaped(out, s, s ? strnlen(s, n) : 0, 0);
}

void html_text(struct strbuf *out, const char *s)
{
	put_escaped(out, s, s ? strlen(s) : 0, 1);
}

void html_begin(struct strbuf *out, const char *title, const char *root)
{
	strbuf_addstr(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
			   "<meta name=\"viewport\" content=\"width=device-width, "
			   "initial-scale=1\">\n<title>");
	html_line(out, title);
	strbuf_addf(out, "</title>\n<style>%s</style></head>\n<body>\n", css);
	if (*root)
		strbuf_addf(out, "<nav><a href=\"%sindex.html\">nextbot: all nights</a></nav>\n",
			    root);
}

void html_end(struct strbuf *out)
{
	strbuf_addstr(out, "</body></html>\n");
}
