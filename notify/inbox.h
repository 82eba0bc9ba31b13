/*
 * Inbound mail: the answers people send to nextbot's notices.  A parser for one
 * RFC 5322 message from a stranger (any bytes: MIME, quoted-printable, base64,
 * RFC 2047 words, folded headers, CRLF or LF, NULs, any charset), the `#nextbot`
 * command lines of its text, what the receiving server's Authentication-Results
 * say of its From:, and polling an IMAP mailbox (libcurl).  What the commands mean
 * is bot/'s business; nothing here acts on them.
 */
#ifndef NOTIFY_INBOX_H
#define NOTIFY_INBOX_H

#include <stddef.h>
#include "notify/notice.h"
#include "util/strbuf.h"
#include "util/strvec.h"

/* Bytes of one message that are read at most (stdin or IMAP); the rest is cut off. */
#define INBOX_MAIL_MAX (16u << 20)
/* Bytes of decoded text kept from the body. */
#define INBOX_BODY_MAX (1u << 20)

/* One header field as it stood: unfolded, not decoded; NUL and CR made spaces. */
struct inbox_header {
	char *name;
	char *value;
};

/*
 * A parsed message.  Every char * is owned (inbox_mail_release() frees) and is
 * valid UTF-8 without control characters, except `body` (LF line ends, TAB kept)
 * and the raw `headers`.  Addresses are bare addr-specs that passed notify's strict
 * address check; an address that did not is left out (from_addr NULL).
 */
struct inbox_mail {
	char *key;              /* what makes the message itself: its Message-ID, else
				   "sha256:<hex>" of its bytes.  Never NULL. */
	char *message_id;       /* "<x@y>"; NULL when missing or not a safe msg-id */
	char *from_name;        /* decoded display name; NULL when none */
	char *from_addr;        /* the From: address; NULL when missing or refused */
	char *subject;          /* decoded; "" when none */
	char *in_reply_to;      /* "<x@y>"; NULL when none */
	struct strvec references; /* "<x@y>" in order (at most 100: the first and last 50) */
	struct strvec recipients; /* To: and Cc: addresses, each once (case-insensitive) */
	char *return_path;      /* the topmost Return-Path: "" for the null path <>;
				   NULL when there is none */
	char *auto_submitted;   /* the Auto-Submitted keyword, lower case; NULL: none */
	int autoreply;          /* Precedence bulk/junk/auto_reply, X-Autoreply,
				   X-Autorespond, or an RFC 3834 style auto-reply header */
	int is_report;          /* multipart/report: a delivery or read report */
	int truncated;          /* the input or its text was cut at the caps above */
	struct inbox_header *headers; /* every field in order (at most 1000) */
	size_t headers_nr;
	char *body;             /* the first text/plain part (else text/html made text),
				   decoded to UTF-8; "" when there is none */
};
#define INBOX_MAIL_INIT { 0 }

/*
 * Parses raw[0..len) (len is capped at INBOX_MAIL_MAX by the caller or here).
 * Returns 0, or NB_EINVALID (error recorded) when the input is not a message at all:
 * empty, its first line is not a header field (an mbox "From " line is skipped), or
 * it has no From: field.  *out is always initialised; release it either way.
 */
int inbox_mail_parse(struct inbox_mail *out, const char *raw, size_t len);
void inbox_mail_release(struct inbox_mail *m);

/*
 * What a mail says and who says it, whatever its Message-ID: "sha256:<hex>" of its
 * From: address (ASCII case ignored) and its decoded text (trailing blanks ignored),
 * appended.  The same command resent under a new Message-ID has the same key.
 */
void inbox_mail_content_key(struct strbuf *out, const struct inbox_mail *m);

/* The topmost field called `name` (case-insensitive), raw; NULL when absent. */
const char *inbox_mail_header(const struct inbox_mail *m, const char *name);

/*
 * The command lines of a message's text: lines whose first word is `#nextbot`
 * (any case) followed by a blank, a colon or the end of the line (`#nextbot:
 * drop` is `#nextbot drop`), outside quoted text (lines starting with '>', and
 * the indented or blank lines after an attribution line such as "On …, Ann wrote:",
 * up to the first line that is neither) and before a signature ("-- ") or a forwarded or
 * quoted original ("-----Original Message-----").  Appends the text after the
 * word, trimmed and cleaned (one line, at most 1000 bytes), at most `max` lines.
 * Returns how many command lines there were in all (more than `max`: some left out).
 */
size_t inbox_mail_commands(struct strvec *out, const char *body, size_t max);

/*
 * The "<Key>-by: Name <addr>" trailers (Reviewed-by, Acked-by, …) of a message's own
 * text: at the start of a line, outside quoted text and before a signature, as
 * inbox_mail_commands() reads commands.  Appends each key and its address (at most
 * 20); returns how many there were.
 */
size_t inbox_mail_trailers(struct strvec *keys, struct strvec *addrs, const char *body);

enum inbox_auth {
	INBOX_AUTH_PASS = 0, /* the server saw dmarc=pass, or dkim=pass for the From: domain */
	INBOX_AUTH_MISSING,  /* no Authentication-Results of that server above its
				Received: field, or no Received: field at all */
	INBOX_AUTH_FAIL,     /* its results do not vouch for the From: domain */
};

/*
 * Does the receiving server `authserv_id` vouch for the From: address (RFC 8601)?
 * Only the Authentication-Results fields carrying that authserv-id that stand
 * above the first Received: field count (all of them: a server with two milters
 * writes two): the receiving server adds those on top of what it was given, so
 * any field below its Received: may be the sender's (RFC 8601 section 5).  A mail
 * without a Received: field is never vouched for.  Pass: dmarc=pass with
 * header.from the From: domain (or no header.from), or dkim=pass with header.d
 * equal to it (without header.d: the domain of header.i) and header.i, when
 * given, within header.d (that domain or a subdomain; a signature whose i= lies
 * outside d vouches for nothing); an explicit dmarc=fail refuses whatever else is
 * there.  Domains compare case-insensitively.
 * `why` (may be NULL) gets a short reason for logs and replies.
 */
enum inbox_auth inbox_mail_auth(const struct inbox_mail *m, const char *authserv_id,
				struct strbuf *why);

/* ---- IMAP (libcurl; notify_global_init() first) ---- */

/* The keyword set, beside \Seen, on every mail once it has been handled. */
#define INBOX_IMAP_KEYWORD "$Nextbot"

/* Where to poll; strings borrowed for the call. */
struct inbox_imap {
	const char *url;       /* imaps://host[:port]/MAILBOX, or imap:// */
	enum notice_tls tls;   /* IMPLICIT for imaps://; STARTTLS (required) or NONE */
	const char *user, *password;
	const char *ca_file;   /* PEM CA certificates to trust; NULL: the system's */
	long connect_timeout;  /* seconds; 0: 30 */
	long timeout;          /* seconds for one request (one mail); 0: 300 */
};

struct inbox_imap_stats {
	int found;   /* mails without the keyword */
	int handled; /* handled and marked */
	int left;    /* left for the next poll */
};

/*
 * Called with each new mail's bytes (at most INBOX_MAIL_MAX; borrowed for the call).
 * Returns 0 when it has been handled for good: it is then marked (\Seen and
 * INBOX_IMAP_KEYWORD); > 0 to leave it unmarked and go on; < 0 to leave it and the
 * rest unmarked and stop.
 */
typedef int (*inbox_imap_fn)(void *data, const char *raw, size_t len);

/*
 * Fetches the mails of the mailbox that do not carry INBOX_IMAP_KEYWORD (and are not
 * deleted), oldest UID first, at most 500 a poll, hands each to `fn` and marks those
 * it handled.  A mail is marked only after `fn` returned, so a crash in between
 * hands it over again at the next poll (the caller recognises it by its key).  TLS is
 * required unless imap->tls is NOTICE_TLS_NONE.  Returns 0, or a negative error with
 * the reason recorded (server unreachable, TLS missing, login refused): what was not
 * marked stays for the next poll.
 */
int inbox_imap_poll(struct inbox_imap_stats *out, const struct inbox_imap *imap,
		    inbox_imap_fn fn, void *data);

#endif
