/*
 * The outbox spool inside notify/: one JSON file per notice, <outbox>/<id>.json,
 * replaced atomically on every change.  Not for use outside notify/ (bot/ uses
 * notice.h); declared here for notify's own files and its tests.
 *
 * File format (version 1):
 *   {"version": 1, "id": "<32 hex>", "kind": "<event>", "channel": "mail"|"webhook",
 *    "subject": "<decoded subject, or the event for webhooks>",
 *    "from": "<envelope sender>" (mail), "url": "<POST url>" (webhook),
 *    "recipients": [{"to": "<address or url>", "state": "queued"|"sent"|"failed",
 *                    "error": null|"…"}],
 *    "state": "queued"|"sent"|"failed", "attempts": N, "last_error": null|"…",
 *    "order": "<NIGHT-EPOCH>.<PLACE>.<SEQ>" (delivery order; absent in older files),
 *    "created": "<RFC 3339>", "next_try": "<RFC 3339>", "sent": null|"<RFC 3339>",
 *    "body": "<the whole RFC 5322 mail with CRLF, or the exact webhook JSON body>",
 *    "body8": "<the same mail with 8bit text parts>" (only when it differs),
 *    "text": "<the mail as a reader sees it: From, To, Cc, Subject, Date, the text,
 *             each attachment after a '--- <name> ---' line>" (mail)}
 * "body" is 7-bit clean (quoted-printable where needed); "body8" is sent instead to a
 * server that offers 8BITMIME.
 * A webhook's headers follow from the file: X-Nextbot-Event is "kind",
 * X-Nextbot-Delivery is "id", and the signature is computed at send time with the
 * secret configured for "url" (secrets never touch the disk).
 */
#ifndef NOTIFY_OUTBOX_H
#define NOTIFY_OUTBOX_H

#include <stddef.h>
#include <time.h>
#include "util/strbuf.h"

enum outbox_state { OUTBOX_QUEUED = 0, OUTBOX_SENT, OUTBOX_FAILED };

struct outbox_rcpt {
	char *to;
	enum outbox_state state;
	char *error;
};

/* Every char * is owned; outbox_notice_release() frees them. */
struct outbox_notice {
	char *id, *kind, *channel, *subject, *from, *url, *body;
	char *body8; /* mail: the 8bit version for servers that offer 8BITMIME; NULL: same */
	char *text;  /* mail: as a reader sees it (headers decoded, the text, attachments) */
	/* where it goes in the delivery order: "<night start>.<place in the night's story>.
	   <queue order>" (render.c's notice_order()); NULL: by `created` */
	char *order;
	enum outbox_state state;
	int attempts;
	char *last_error;
	time_t created, next_try, sent;
	struct outbox_rcpt *rcpts;
	size_t rcpts_nr, rcpts_alloc;
};
#define OUTBOX_NOTICE_INIT \
	{                  \
		0          \
	}

void outbox_notice_release(struct outbox_notice *n);
void outbox_notice_add_rcpt(struct outbox_notice *n, const char *to, enum outbox_state state,
			    const char *error);
void outbox_notice_set_error(struct outbox_notice *n, const char *error);

/* <dir>/<id>.json; caller frees. */
char *outbox_notice_path(const char *dir, const char *id);
/* Loads one notice file; NB_EINVALID for a file that is not a notice. */
int outbox_notice_load(struct outbox_notice *out, const char *path);
/* Writes (atomically replaces) <dir>/<id>.json, creating dir if needed. */
int outbox_notice_save(const struct outbox_notice *n, const char *dir);
/*
 * When <dir>/<id>.json cannot be read as a notice (truncated, garbled), moves it to
 * <dir>/damaged/ and appends why to `why`: 1.  0 when it is a notice (or could not
 * be read at all: an I/O error is not damage), NB_ERROR when it could not be moved.
 */
int outbox_set_aside_if_damaged(const char *dir, const char *id, struct strbuf *why);
/* The ids of every notice file in dir, sorted; a missing dir gives none. */
int outbox_ids(char ***out, size_t *nr, const char *dir);
/*
 * The same ids in delivery order: by each notice's "order" (a notice without one: its
 * `created` time, after any notice of that second that has one), then by id.  A
 * file that cannot be read sorts first (flushing it names what is wrong).
 */
int outbox_ids_ordered(char ***out, size_t *nr, const char *dir);
void outbox_ids_free(char **ids, size_t nr);

const char *outbox_state_name(enum outbox_state s);

/* A notice's channel, read from its "channel" text; OTHER for anything else. */
enum outbox_channel { OUTBOX_CHANNEL_OTHER, OUTBOX_CHANNEL_MAIL, OUTBOX_CHANNEL_WEBHOOK };
enum outbox_channel outbox_channel_parse(const char *channel);
/* RFC 3339 UTC ("2026-12-03T02:00:01Z"). */
void outbox_time_fmt(struct strbuf *out, time_t t);

/*
 * The notice id: the first 32 hex digits of SHA-256 over the parts joined with NUL
 * bytes (kind, what it is about, role, reminder, webhook url).  `out` gets 33 bytes.
 */
void outbox_id(char out[33], const char *const *parts, size_t nr);

#endif
