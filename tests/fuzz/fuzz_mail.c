/*
 * Fuzz target: the mail renderer (notify/render.c through notice_queue_*) with
 * arbitrary names, addresses, subjects, bodies and Message-IDs; every notice it
 * queues must be a sane outbox file, every mail a clean RFC 5322 message
 * (tests/fuzz/mailcheck.h), every webhook body clean JSON.
 *
 * Input: byte 0 picks kind/partner/action/reminder, byte 1 the queue function; the
 * rest is NUL-separated fields in the order of enum mail_field.
 */
#include <stdint.h>
#include <string.h>

#include "notify/mime.h"
#include "util/oid.h"
#include "notify/notice.h"
#include "notify/outbox.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/jsoncheck.h"
#include "tests/fuzz/mailcheck.h"
#include "util/fileutil.h"
#include "util/xalloc.h"
#include "util/banned.h"

enum mail_field {
	MF_NAME, MF_EMAIL, MF_SUBJECT, MF_EXCERPT, MF_MSGID, MF_TREE, MF_COMMIT,
	MF_PNAME, MF_PEMAIL, MF_PSUBJECT, MF_CONTACT1, MF_CONTACT2, MF_LIST, MF_CMDLINE,
	MF_BISECT, MF_WHY, MF_FROM, MF_URL, MF_TAG, MF_NR
};

static const char *mail_opt(const struct fuzz_fields *f, int i)
{
	return *f->v[i] ? f->v[i] : NULL;
}

/*
 * Commit ids come from libgit2, never from strangers: the field's bytes become hex
 * digits (at most 40).  The renderer cuts them with "%.12s", which would split a
 * UTF-8 sequence of anything else.
 */
static void mail_hex(char out[NB_OID_HEXSZ + 1], const char *in)
{
	size_t i;

	for (i = 0; i < 40 && in[i]; i++)
		out[i] = "0123456789abcdef"[(unsigned char)in[i] & 15];
	out[i] = '\0';
}

static void mail_breakage(struct notice_breakage *b, const struct fuzz_fields *f, uint8_t sel,
			    const char *contacts[2], const char *log[2], const char *commit)
{
	static const char *const kinds[] = { "build-failure", "test-failure", "flaky",
					     "build-failure" };

	memset(b, 0, sizeof(*b));
	b->kind = kinds[sel & 3];
	b->flag_id = "0123456789ab";
	b->reminder = (sel >> 5) & 1;
	b->date = "2026-12-03";
	b->next_tag = *f->v[MF_TAG] ? f->v[MF_TAG] : "next-20261203";
	b->tree = f->v[MF_TREE];
	contacts[0] = f->v[MF_CONTACT1];
	contacts[1] = f->v[MF_CONTACT2];
	b->contacts = contacts;
	b->contacts_nr = 2;
	b->commit = commit;
	b->subject = f->v[MF_SUBJECT];
	b->author.name = mail_opt(f, MF_NAME);
	b->author.email = mail_opt(f, MF_EMAIL);
	nb_patchid_parse(&b->patch_id, "f00dfacef00dfacef00dfacef00dfacef00dface");
	b->message_id = mail_opt(f, MF_MSGID);
	if (sel & 4) {
		b->partner.tree = "partner";
		b->partner.commit = commit;
		b->partner.subject = f->v[MF_PSUBJECT];
		b->partner.author.name = mail_opt(f, MF_PNAME);
		b->partner.author.email = mail_opt(f, MF_PEMAIL);
	}
	b->command_name = "x86_64";
	b->command_line = f->v[MF_CMDLINE];
	b->exit_code = 2;
	b->timed_out = (sel >> 6) & 1;
	b->excerpt = f->v[MF_EXCERPT];
	log[0] = f->v[MF_BISECT];
	log[1] = f->v[MF_WHY];
	b->bisect_log = log;
	b->bisect_log_nr = 2;
	b->bisect_steps = 7;
	b->reproduce = log;
	b->reproduce_nr = 2;
	b->patch_link = mail_opt(f, MF_URL);
	b->compiler = f->v[MF_WHY];
	b->tree_head = commit;
	b->culprit_fails = 3;
	b->parent_passes = 3;
	b->revert_passes = 1;
	b->tree_url = mail_opt(f, MF_URL);
	b->tree_branch = f->v[MF_TREE];
	b->action = (enum notice_action)((sel >> 3) & 3);
	b->previous_tag = (sel & 0x80) ? f->v[MF_TAG] : NULL;
	b->failing = 2;
	b->total = 3;
}

/* Calls one of the queue functions; returns its result. */
static int mail_queue(const struct notice_settings *s, const struct fuzz_fields *f,
			uint8_t sel, uint8_t fn)
{
	const char *contacts[2], *log[2], *lines[2] = { f->v[MF_SUBJECT], f->v[MF_BISECT] };
	struct notice_commit sides[2];
	struct notice_breakage b;
	struct notice_conflict c;
	struct notice_base_broken bb;
	struct notice_summary sum;
	struct notice_summary_tree trees[1] = {
		{ f->v[MF_TREE], "merged", mail_opt(f, MF_WHY) },
	};
	char commit[NB_OID_HEXSZ + 1];

	mail_hex(commit, f->v[MF_COMMIT]);
	mail_breakage(&b, f, sel, contacts, log, commit);
	switch (fn % 6) {
	case 0:
		return notice_queue_breakage(s, &b);
	case 1:
		return notice_queue_dropped(s, &b, mail_opt(f, MF_WHY));
	case 2:
		return notice_queue_resolved(s, &b, mail_opt(f, MF_WHY));
	case 3:
		memset(&c, 0, sizeof(c));
		c.date = b.date;
		c.next_tag = b.next_tag;
		c.tree = b.tree;
		c.other = f->v[MF_PSUBJECT];
		c.contacts = contacts;
		c.contacts_nr = 2;
		c.paths = lines;
		c.paths_nr = 2;
		memset(sides, 0, sizeof(sides));
		sides[0].tree = c.other;
		sides[0].commit = commit;
		sides[0].subject = f->v[MF_BISECT];
		sides[0].author = b.partner.author;
		sides[1].tree = c.tree;
		sides[1].commit = commit;
		sides[1].subject = f->v[MF_SUBJECT];
		sides[1].author = b.author;
		c.ours = &sides[0];
		c.ours_nr = 1;
		c.theirs = &sides[1];
		c.theirs_nr = 1;
		c.other_contacts = contacts + 1;
		c.other_contacts_nr = 1;
		c.first_date = (sel & 2) ? "2026-12-01" : b.date;
		c.gone = (sel >> 4) & 1;
		c.outcome = mail_opt(f, MF_WHY);
		c.operator_note = mail_opt(f, MF_CMDLINE);
		return notice_queue_conflict(s, &c);
	case 4:
		memset(&bb, 0, sizeof(bb));
		bb.date = b.date;
		bb.next_tag = b.next_tag;
		bb.base_name = b.tree;
		bb.base_commit = b.commit;
		bb.command_name = "x86_64";
		bb.command_line = b.command_line;
		bb.excerpt = b.excerpt;
		return notice_queue_base_broken(s, &bb);
	default:
		memset(&sum, 0, sizeof(sum));
		sum.date = b.date;
		sum.next_tag = b.next_tag;
		sum.next_commit = b.commit;
		sum.trees = trees;
		sum.trees_nr = 1;
		sum.new_flags = lines;
		sum.new_flags_nr = 2;
		sum.notes = log;
		sum.notes_nr = 2;
		return notice_queue_summary(s, &sum);
	}
}

static void mail_check_notice(const struct outbox_notice *n)
{
	size_t i;

	FUZZ_CHECK(n->body && n->subject && n->kind && n->channel, "notice %s incomplete", n->id);
	FUZZ_CHECK(fuzz_utf8_valid(n->subject, strlen(n->subject)) &&
		   !fuzz_has_controls(n->subject, strlen(n->subject), ""),
		   "notice subject not one clean line: '%s'", n->subject);
	for (i = 0; i < n->rcpts_nr; i++) {
		const struct outbox_rcpt *r = &n->rcpts[i];

		FUZZ_CHECK(r->to, "recipient without address");
		if (r->state == OUTBOX_QUEUED && !strcmp(n->channel, "mail"))
			FUZZ_CHECK(mime_addr_check(r->to) == 0, "queued recipient '%s' fails the "
				   "address check", r->to);
		FUZZ_CHECK(fuzz_utf8_valid(r->to, strlen(r->to)) &&
			   !fuzz_has_controls(r->to, strlen(r->to), ""),
			   "recipient not one clean line");
	}
	if (!strcmp(n->channel, "mail")) {
		struct fuzz_mail m;

		fuzz_mail_check(&m, n->body, strlen(n->body));
		FUZZ_CHECK(mime_addr_check(n->from) == 0, "envelope sender '%s'", n->from);
		fuzz_mail_release(&m);
		if (n->body8) {
			fuzz_mail_check_ext(&m, n->body8, strlen(n->body8), 1);
			fuzz_mail_release(&m);
		}
	} else {
		struct json_object *o;

		FUZZ_CHECK(!strcmp(n->channel, "webhook"), "channel %s", n->channel);
		o = fuzz_json_check(n->body, strlen(n->body));
		json_object_put(o);
	}
}

/* Every file in the outbox must load as a notice and pass the checks. */
static void mail_check_outbox(const char *dir)
{
	char **ids = NULL;
	size_t nr = 0, i;

	FUZZ_CHECK(outbox_ids(&ids, &nr, dir) == 0, "outbox unreadable");
	for (i = 0; i < nr; i++) {
		struct outbox_notice n = OUTBOX_NOTICE_INIT;
		char *path = outbox_notice_path(dir, ids[i]);

		FUZZ_CHECK(outbox_notice_load(&n, path) == 0, "%s does not load back", path);
		mail_check_notice(&n);
		outbox_notice_release(&n);
		free(path);
	}
	outbox_ids_free(ids, nr);
}

int fuzz_mail_one(const uint8_t *data, size_t size)
{
	static const struct notice_webhook hooks[2] = {
		{ "http://127.0.0.1:9/hook", NULL, NOTICE_HOOK_JSON },
		{ "http://127.0.0.1:9/chat", NULL, NOTICE_HOOK_SLACK },
	};
	struct notice_settings s;
	struct fuzz_fields f;
	char *dir;
	int ret;

	if (size < 2)
		return 0;
	fuzz_fields_split(&f, data + 2, size - 2, MF_NR);
	dir = xstrfmt("%s/outbox", fuzz_tmpdir());
	memset(&s, 0, sizeof(s));
	s.from = *f.v[MF_FROM] ? f.v[MF_FROM] : "nextbot <nextbot@example.org>";
	s.list = mail_opt(&f, MF_LIST);
	s.report_url = (data[0] & 1) ? "https://next.example.org/flag/{id}"
				     : mail_opt(&f, MF_URL);
	s.outbox_dir = dir;
	s.webhooks = hooks;
	s.webhooks_nr = 2;
	s.operator = (data[0] & 2) ? "Operator <root@example.org>" : NULL;
	s.now = 1796263201; /* 2026-12-03 02:00:01 */
	ret = mail_queue(&s, &f, data[0], data[1]);
	FUZZ_CHECK(ret >= -1000, "queue returned %d", ret);
	mail_check_outbox(dir);
	file_remove_tree(dir);
	free(dir);
	fuzz_fields_free(&f);
	return 0;
}

#ifndef FUZZ_REPLAY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_mail_one(data, size);
}
#endif
