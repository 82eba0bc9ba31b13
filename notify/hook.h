/* Webhook bodies and signatures (HMAC-SHA256 of the body); internal to notify/. */
#ifndef NOTIFY_HOOK_H
#define NOTIFY_HOOK_H

#include <stddef.h>
#include "notify/notice.h"
#include "util/strbuf.h"

/*
 * The fields of one webhook event; borrowed.  NULL strings and has_* == 0 become
 * JSON null.  Text is repaired (valid UTF-8, no DEL, no controls in one-liners)
 * before json-c sees it.
 */
struct hook_event {
	const char *event, *id, *date, *next_tag, *tree, *commit, *subject;
	struct notice_person author;
	struct nb_patchid patch_id; /* none: JSON null */
	const char *message_id;
	const char *partner_tree, *partner_commit, *partner_subject;
	struct notice_person partner_author;
	const char *command;
	int has_exit;
	int exit_code, timed_out;
	const char *log_excerpt;
	int has_bisect;
	int steps;
	const char *const *log;
	size_t log_nr;
	/* Extras for events the common event keys do not cover (null elsewhere). */
	const char *reason;	/* dropped, resolved */
	const char *other_tree; /* merge-conflict */
	const char *const *paths;
	size_t paths_nr;
	const char *result; /* summary: "success" | "regression" */
	const struct notice_summary_tree *trees; /* summary: every tree's outcome */
	size_t trees_nr;
	const struct notice_summary_flag *flags; /* summary: the open flags */
	size_t flags_nr;
	const char *flag_url; /* the flag's report_url, when configured */
	int has_counts;
	int failing, total; /* flaky */
	const struct notice_cell *cells; /* build matrix: "cells" [{name, env, first_error}] */
	size_t cells_nr;
};

/* Appends the exact JSON body (one line, no trailing newline). */
void hook_body(struct strbuf *out, const struct hook_event *ev);

/*
 * Chat messages (`format: slack`): the incoming-webhook JSON {"text": …} that Slack,
 * Mattermost and Rocket.Chat accept.  hook_slack_text() appends text from anyone
 * as one clean line with &, < and > as entities (Slack's control characters) and
 * '@' as U+FF20 FULLWIDTH COMMERCIAL AT (no @channel or @all mentions from a subject);
 * hook_slack_link() appends <url|label> for an http(s) url, else the label alone;
 * hook_slack_body() wraps the composed text (lines separated by LF) as the JSON body.
 */
void hook_slack_text(struct strbuf *out, const char *text);
void hook_slack_link(struct strbuf *out, const char *url, const char *label);
void hook_slack_body(struct strbuf *out, const char *text);

/* Appends "sha256=<hex HMAC-SHA256 of body under secret>". */
void hook_signature(struct strbuf *out, const char *secret, const char *body, size_t len);

#endif
