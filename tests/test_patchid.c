/* merge/git/patchid.c and merge/repo/trailer.c against git itself: patch-ids, trailers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <git2.h>

#include "merge/repo/commitinfo_int.h"
#include "merge/git/patchid_int.h"
#include "merge/repo/repo.h"
#include "merge/repo/trailer_int.h"
#include "util/error.h"
#include "tests/gitfixture.h"
#include "util/fileutil.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

static char repo_dir[256];

/* Runs a shell snippet inside the test repository; fails the test if it fails. */
static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = fixture_vsh(repo_dir, NULL, fmt, ap);
	va_end(ap);
	if (rc != 0)
		fail_msg("command failed in %s: %s", repo_dir, fmt);
}

/* Output of a shell snippet run in the repository, trimmed. */
static void sh_out(struct strbuf *out, const char *cmd)
{
	fixture_dir = repo_dir;
	assert_int_equal(fixture_sh_out(out, 0, "%s", cmd), 0);
	strbuf_trim(out);
}

static int setup_repo(void **state)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(repo_dir, sizeof(repo_dir), "%s/nb-patchid.XXXXXX", tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(repo_dir));
	sh("git init -q -b master . && git config user.name T && "
	     "git config user.email t@example.org && git config core.autocrlf false");
	git_libgit2_init();
	return 0;
}

static int teardown_repo(void **state)
{
	file_remove_tree(repo_dir);
	git_libgit2_shutdown();
	return 0;
}

/*
 * Compares merge_patch_id() of HEAD with git's.  `expect_none`: nextbot must
 * refuse (NB_ENOTFOUND) rather than give a patch-id.
 */
static void check_head(const char *what, int expect_none)
{
	struct strbuf want = STRBUF_INIT, head = STRBUF_INIT;
	git_repository *repo = NULL;
	git_oid oid;
	struct nb_patchid got = NB_PATCHID_NONE;
	int error;

	sh_out(&head, "git rev-parse HEAD");
	sh_out(&want, "git diff-tree -p --no-renames HEAD^ HEAD | git patch-id --stable"
			" | cut -d' ' -f1");
	assert_int_equal(git_repository_open(&repo, repo_dir), 0);
	assert_int_equal(git_oid_fromstr(&oid, head.buf), 0);
	error = merge_patch_id_oid(&got, repo, &oid);
	if (expect_none) {
		if (error != NB_ENOTFOUND || NB_PATCHID_HEX(&got)[0])
			fail_msg("%s: expected no patch-id, got %d '%s'", what, error,
				 NB_PATCHID_HEX(&got));
	} else {
		if (error)
			fail_msg("%s: error %d %s", what, error, nb_error_last());
		if (strcmp(NB_PATCHID_HEX(&got), want.buf))
			fail_msg("%s: libgit2 %s, git %s", what, NB_PATCHID_HEX(&got), want.buf);
	}
	git_repository_free(repo);
	strbuf_release(&want);
	strbuf_release(&head);
}

static void test_patchid_text_changes(void **state)
{
	sh("printf 'a\\nb\\nc\\n' >f.c && git add f.c && git commit -q -m root");
	sh("printf 'int x;\\n' >new.c && git add new.c && git commit -q -m new");
	check_head("new file", 0);
	sh("seq 1 60 >big && git add big && git commit -q -m big");
	check_head("new file of 60 lines", 0);
	sh("seq 1 60 | sed 's/^5$/five/; s/^50$/fifty/' >big && git commit -q -am multi");
	check_head("multi-hunk edit", 0);
	sh("printf 'a\\nb\\nc' >f.c && git commit -q -am noeol");
	check_head("no newline at EOF", 0);
	sh("printf 'a\\nb\\nc\\nd\\n' >f.c && git commit -q -am eol-again");
	check_head("newline at EOF restored", 0);
	sh("git rm -q new.c && git commit -q -m del");
	check_head("deleted file", 0);
	sh("printf '\\ta  b\\n' >ws && git add ws && git commit -q -m ws");
	sh("printf '  a b \\n' >ws && git commit -q -am ws2");
	check_head("whitespace-only change", 0);
	sh("git mv big moved && git commit -q -m rename");
	check_head("rename as delete + add", 0);
	sh("mkdir -p sub/dir && printf 'x\\n' >sub/dir/deep.h && git add sub && "
	     "printf 'z\\n' >>f.c && git commit -q -am two-files");
	check_head("two files in two folders", 0);
}

static void test_patchid_mode_and_binary(void **state)
{
	sh("printf 'a\\n' >s.sh && git add s.sh && git commit -q -m root");
	sh("chmod +x s.sh && git commit -q -am mode");
	check_head("mode change only", 0);
	sh("chmod -x s.sh && printf 'b\\n' >>s.sh && git commit -q -am mode+edit");
	check_head("mode change and edit", 0);
	sh("printf 'a\\0b\\0' >bin && git add bin && git commit -q -m bin");
	check_head("new binary file", 1);
	sh("printf 'c\\0d\\0' >bin && printf 'x\\n' >>s.sh && git commit -q -am bin2");
	check_head("binary and text change", 1);
	sh(": >empty && git add empty && git commit -q -m empty");
	check_head("new empty file", 1);
	sh("printf 'y\\n' >>s.sh && git rm -q empty && git commit -q -am del-empty");
	check_head("deleted empty file", 1);
	sh("printf 'q\\n' >empty && git add empty && git commit -q -m full");
	sh(": >empty && git commit -q -am emptied");
	check_head("file emptied, not deleted", 0);
}

static void test_patchid_merge_root_empty(void **state)
{
	git_repository *repo = NULL;
	struct strbuf head = STRBUF_INIT;
	git_oid oid;
	struct nb_patchid got = NB_PATCHID_NONE;

	sh("printf 'a\\n' >f && git add f && git commit -q -m root");
	sh_out(&head, "git rev-parse HEAD");
	assert_int_equal(git_repository_open(&repo, repo_dir), 0);
	assert_int_equal(git_oid_fromstr(&oid, head.buf), 0);
	assert_int_equal(merge_patch_id_oid(&got, repo, &oid), NB_ENOTFOUND);
	assert_string_equal(NB_PATCHID_HEX(&got), "");

	sh("git checkout -q -b side && printf 'b\\n' >g && git add g && git commit -q -m g && "
	     "git checkout -q master && printf 'c\\n' >h && git add h && git commit -q -m h && "
	     "git merge -q --no-edit side");
	sh_out(&head, "git rev-parse HEAD");
	assert_int_equal(git_oid_fromstr(&oid, head.buf), 0);
	assert_int_equal(merge_patch_id_oid(&got, repo, &oid), NB_ENOTFOUND);
	assert_string_equal(NB_PATCHID_HEX(&got), "");

	sh("git commit -q --allow-empty -m nothing");
	sh_out(&head, "git rev-parse HEAD");
	assert_int_equal(git_oid_fromstr(&oid, head.buf), 0);
	assert_int_equal(merge_patch_id_oid(&got, repo, &oid), NB_ENOTFOUND);

	git_oid_fromstr(&oid, "0123456789012345678901234567890123456789");
	assert_int_equal(merge_patch_id_oid(&got, repo, &oid), NB_ENOTFOUND);
	git_repository_free(repo);
	strbuf_release(&head);
}

/* The patch-id of HEAD (NB_ENOTFOUND: none). */
static int head_pid(struct nb_patchid *out, git_repository *repo)
{
	struct strbuf head = STRBUF_INIT;
	git_oid oid;
	int error;

	sh_out(&head, "git rev-parse HEAD");
	assert_int_equal(git_oid_fromstr(&oid, head.buf), 0);
	error = merge_patch_id_oid(out, repo, &oid);
	strbuf_release(&head);
	return error;
}

/*
 * A merge and a binary change have no patch-id, and two nones are never "the same
 * patch": not even the one binary change picked onto two bases.
 */
static void test_patchid_none_is_no_patch(void **state)
{
	git_repository *repo = NULL;
	struct nb_patchid merge_pid, bin_a, bin_b, text_pid, again;

	assert_int_equal(git_repository_open(&repo, repo_dir), 0);
	sh("seq 1 30 >f && git add f && git commit -q -m root && git branch base");
	sh("git checkout -q -b side && printf 'b\\n' >g && git add g && git commit -q -m g && "
	   "git checkout -q master && printf 'c\\n' >h && git add h && git commit -q -m h && "
	   "git merge -q --no-edit side");
	assert_int_equal(head_pid(&merge_pid, repo), NB_ENOTFOUND);
	assert_true(nb_patchid_is_none(&merge_pid));
	sh("printf 'a\\0b\\0' >bin && git add bin && git commit -q -m bin");
	assert_int_equal(head_pid(&bin_a, repo), NB_ENOTFOUND);
	sh("git checkout -q -b other base && sed -i 's/^2$/two/' f && git commit -q -am up && "
	   "git cherry-pick master >/dev/null");
	assert_int_equal(head_pid(&bin_b, repo), NB_ENOTFOUND);
	assert_true(nb_patchid_is_none(&bin_a) && nb_patchid_is_none(&bin_b));
	assert_false(nb_patchid_eq(&bin_a, &bin_b));
	assert_false(nb_patchid_eq(&merge_pid, &bin_a));
	assert_false(nb_patchid_eq(&merge_pid, &merge_pid));
	assert_string_equal(NB_PATCHID_HEX(&bin_a), "");
	assert_int_equal(nb_patchid_parse(&again, ""), 0);
	assert_false(nb_patchid_eq(&bin_a, &again));
	assert_false(nb_patchid_has_prefix(&bin_a, "0000", 4));

	/* a real patch-id equals itself and its text, and its text reads back the same */
	sh("sed -i 's/^20$/twenty/' f && git commit -q -am text");
	assert_int_equal(head_pid(&text_pid, repo), 0);
	assert_false(nb_patchid_is_none(&text_pid));
	assert_true(nb_patchid_eq(&text_pid, &text_pid));
	assert_false(nb_patchid_eq(&text_pid, &bin_a));
	assert_int_equal(nb_patchid_parse(&again, NB_PATCHID_HEX(&text_pid)), 0);
	assert_true(nb_patchid_eq(&again, &text_pid));
	assert_true(nb_patchid_has_prefix(&again, NB_PATCHID_HEX(&text_pid), 12));

	/* the text edge: "" and NULL are none, anything else but full hex is refused */
	assert_int_equal(nb_patchid_parse(&again, ""), 0);
	assert_true(nb_patchid_is_none(&again));
	assert_int_equal(nb_patchid_parse(&again, NULL), 0);
	assert_true(nb_patchid_is_none(&again));
	assert_int_equal(nb_patchid_parse(&again, "0123abc"), NB_EINVALID);
	assert_true(nb_patchid_is_none(&again));
	nb_error_clear();
	git_repository_free(repo);
}

/* The same patch on two different bases has one patch-id (what a rebase keeps). */
static void test_patchid_survives_rebase(void **state)
{
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	git_repository *repo = NULL;
	git_oid oid;
	struct nb_patchid got_a = NB_PATCHID_NONE, got_b = NB_PATCHID_NONE;

	sh("seq 1 30 >f && git add f && git commit -q -m root && git branch base");
	sh("sed -i 's/^20$/twenty/' f && git commit -q -am patch");
	sh_out(&a, "git rev-parse HEAD");
	sh("git checkout -q -b other base && sed -i 's/^2$/two/' f && git commit -q -am up && "
	     "git cherry-pick " "master >/dev/null");
	sh_out(&b, "git rev-parse HEAD");
	assert_string_not_equal(a.buf, b.buf);
	assert_int_equal(git_repository_open(&repo, repo_dir), 0);
	git_oid_fromstr(&oid, a.buf);
	assert_int_equal(merge_patch_id_oid(&got_a, repo, &oid), 0);
	git_oid_fromstr(&oid, b.buf);
	assert_int_equal(merge_patch_id_oid(&got_b, repo, &oid), 0);
	assert_string_equal(NB_PATCHID_HEX(&got_a), NB_PATCHID_HEX(&got_b));
	git_repository_free(repo);
	strbuf_release(&a);
	strbuf_release(&b);
}

static void test_trailer_parse_kernel_message(void **state)
{
	struct trailer_info ti = TRAILER_INFO_INIT;
	const char *msg = "mm/slab: fix the thing\n\nLong explanation\nof the fix.\n\n"
			  "Signed-off-by: Jörg Rödel <joro@example.org>\n"
			  "Link: https://lore.kernel.org/r/20240101.123-1-joro@example.org\n"
			  "Signed-off-by: Andrew Morton <akpm@linux-foundation.org>\n\n\n";

	trailer_parse(&ti, msg);
	assert_string_equal(ti.subject, "mm/slab: fix the thing");
	assert_true(strncmp(ti.body, "Long explanation\n", 17) == 0);
	assert_true(str_ends_with(ti.body, "akpm@linux-foundation.org>\n"));
	assert_string_equal(ti.message_id, "20240101.123-1-joro@example.org");
	assert_int_equal(ti.signoffs_nr, 2);
	assert_string_equal(ti.signoffs[0], "Jörg Rödel <joro@example.org>");
	assert_string_equal(ti.signoffs[1], "Andrew Morton <akpm@linux-foundation.org>");
	assert_true(trailer_has_signoff(msg, "JORO@example.org"));
	assert_true(trailer_has_signoff(msg, " akpm@linux-foundation.org "));
	assert_false(trailer_has_signoff(msg, "akpm@linux-foundation"));
	assert_false(trailer_has_signoff(msg, ""));
	trailer_info_release(&ti);
}

static void test_trailer_msgid_forms(void **state)
{
	static const struct {
		const char *value, *want;
	} cases[] = {
		{ "https://lore.kernel.org/r/abc@x.org", "abc@x.org" },
		{ "https://lore.kernel.org/linux-mm/abc@x.org/", "abc@x.org" },
		{ "https://lore.kernel.org/linux-mm/abc@x.org/T/#u", "abc@x.org" },
		{ "https://lore.kernel.org/all/20240101%40x.org/", "20240101@x.org" },
		{ "https://patch.msgid.link/abc@x.org", "abc@x.org" },
		{ "<abc@x.org>", "abc@x.org" },
		{ "  <abc@x.org>  ", "abc@x.org" },
		{ "https://bugzilla.kernel.org/show_bug.cgi?id=1", NULL },
		{ "https://lore.kernel.org/r/", NULL },
		{ "<>", NULL },
		{ "", NULL },
		{ "not a msgid", NULL },
		{ "https://x/%00@y", NULL },
		{ "https://x/%4", NULL },
		{ "<a b@c>", NULL },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = trailer_msgid_from_value(cases[i].value);

		if (!cases[i].want ? got != NULL : !got || strcmp(got, cases[i].want))
			fail_msg("'%s': got '%s'", cases[i].value, got ? got : "(null)");
		free(got);
	}
}

/* The door's one question (merge/repo/repo.h): the last Message-ID named, or none. */
static void test_trailer_message_id(void **state)
{
	char *id = trailer_message_id("s\n\nbody\n\nMessage-Id: <m1@x>\n"
				      "Link: https://lore.kernel.org/r/m2@x\n");

	assert_string_equal(id, "m2@x");
	free(id);
	assert_null(trailer_message_id("s\n\nLink: https://bugzilla.kernel.org/1\n"));
	assert_null(trailer_message_id(""));
}

static void test_trailer_odd_messages(void **state)
{
	struct trailer_info ti = TRAILER_INFO_INIT;
	struct strbuf big = STRBUF_INIT;
	size_t i;

	trailer_parse(&ti, "");
	assert_string_equal(ti.subject, "");
	assert_string_equal(ti.body, "");
	assert_null(ti.message_id);
	assert_int_equal(ti.signoffs_nr, 0);

	trailer_parse(&ti, "\r\n\r\nnet: two\r\n line subject\r\n\r\nbody\r\n"
			   "Message-Id: <m1@x>\r\nLink: https://lore.kernel.org/r/m2@x\r\n");
	assert_string_equal(ti.subject, "net: two line subject");
	assert_null(strchr(ti.body, '\r'));
	assert_string_equal(ti.message_id, "m2@x");

	trailer_parse(&ti, "only a subject");
	assert_string_equal(ti.subject, "only a subject");
	assert_string_equal(ti.body, "");

	trailer_parse(&ti, "s\n\nSigned-off-by:\nSigned-off-by:x\nsigned-off-by: <y@z>\r");
	assert_int_equal(ti.signoffs_nr, 3);
	assert_string_equal(ti.signoffs[0], "");
	assert_string_equal(ti.signoffs[2], "<y@z>");

	for (i = 0; i < 1000; i++)
		strbuf_addch(&big, 'a' + i % 26);
	strbuf_addstr(&big, "\r\rMessage-ID: <\xff@x>\n");
	trailer_parse(&ti, big.buf);
	assert_int_equal(strlen(ti.subject), 1000);
	assert_null(ti.message_id);
	trailer_info_release(&ti);
	trailer_info_release(&ti); /* twice is harmless */
	strbuf_release(&big);
}

/*
 * trailer_people_parse() reads the trailers `git interpret-trailers --parse` reads:
 * the same keys and addresses (the part in <>, or the whole value), in order.
 */
static void test_trailer_people_like_git(void **state)
{
	static const char *const msgs[] = {
		"mm: x\n\nBody.\n\nSigned-off-by: A B <a@x.org>\nReviewed-by: C <c@x.org>\n"
		"Acked-by: \"D, E\" <d@x.org>\nLink: https://lore.kernel.org/r/1@x\n",
		"mm: x\n\nReviewed-by: early <e@x.org> is prose here\nand more prose.\n\n"
		"Signed-off-by: A <a@x.org>\nTested-by: T\n <t@x.org>\nCc: list@x.org\n",
		"mm: x\r\n\r\nbody\r\n\r\nSigned-off-by: A <a@x.org>\r\nAcked-by: Z <z@x.org>\r\n",
		"only: a subject line\n",
		"mm: x\n\nSigned-off-by: A <a@x.org>\nsome words that are not a trailer\n"
		"Reviewed-by: R <r@x.org>\n",
		"mm: x\n\nthree lines of prose\nwithout trailers\nReviewed-by: R <r@x.org>\n",
		"mm: x\n\nReviewed-by: R <R@X.org>\nCo-developed-by: Q <q@x.org>\n"
		"Signed-off-by: Q <q@x.org>\n",
	};
	size_t i, j;

	for (i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++) {
		struct trailer_people people = TRAILER_PEOPLE_INIT;
		struct strbuf want = STRBUF_INIT, got = STRBUF_INIT;
		char *path = xstrfmt("%s/msg", repo_dir);

		assert_int_equal(file_write_atomic(path, msgs[i], strlen(msgs[i])), 0);
		sh_out(&want, "git interpret-trailers --parse msg |"
			      " sed -E 's/^([^:]+): (.*<([^>]*)>.*|(.*))$/\\1: <\\3\\4>/'");
		trailer_people_parse(&people, msgs[i], NULL, 0);
		for (j = 0; j < people.nr; j++) {
			const char *e = people.v[j].email[0] ? people.v[j].email : people.v[j].name;

			strbuf_addf(&got, "%s%s: <%s>", j ? "\n" : "", people.v[j].key, e);
		}
		if (strcmp(want.buf, got.buf))
			fail_msg("message %zu: git says\n%s\nnextbot says\n%s", i, want.buf,
				 got.buf);
		trailer_people_release(&people);
		strbuf_release(&want);
		strbuf_release(&got);
		free(path);
	}
}

/* A .mailmap of one line: alias@x.org is the author's other address. */
static const char *alias_map(void *ctx, const char *name, const char *email)
{
	(void)name;
	return !strcasecmp(email, "alias@x.org") ? (const char *)ctx : NULL;
}

/* The review predicate: reviewed by someone other than the author, as the gate wants. */
static void test_trailer_reviewed(void **state)
{
	static const char *const both[] = { "Reviewed-by", "Acked-by" };
	static const char *const reviewed_only[] = { "Reviewed-by" };
	struct trailer_mailmap mm = { alias_map, "Author@X.org" };
	const char *own = "x: y\n\nSigned-off-by: A <author@x.org>\n"
			  "Reviewed-by: A <AUTHOR@x.org>\n";
	const char *alias = "x: y\n\nSigned-off-by: A <author@x.org>\n"
			    "Acked-by: A <alias@x.org>\n";
	const char *acked = "x: y\n\nSigned-off-by: A <author@x.org>\n"
			    "Reviewed-by: A <author@x.org>\nAcked-by: B <b@x.org>\n";
	const char *prose = "x: y\n\nReviewed-by: B <b@x.org> said so in a mail.\n"
			    "And more prose.\n\nSigned-off-by: A <author@x.org>\n";
	const char *noaddr = "x: y\n\nSigned-off-by: A <author@x.org>\nReviewed-by: Bob\n";
	const char *plus = "x: y\n\nSigned-off-by: A <author@x.org>\n"
			   "Reviewed-by: Someone Else <Author+review@X.org>\n";
	const char *plus_other = "x: y\n\nSigned-off-by: A <author@x.org>\n"
				 "Reviewed-by: B <b+author@x.org>\n";
	const char *spaced = "x: y\n\nSigned-off-by: A <a@x.org>\n"
			     "Reviewed-by: ann author <ann@elsewhere.org>\n";
	size_t at = 99;

	assert_false(trailer_reviewed(own, "A", "author@x.org", both, 2, NULL, NULL));
	/* the author's own name under another address is the author (issue 38) */
	assert_false(trailer_reviewed(alias, "A", "author@x.org", both, 2, NULL, NULL));
	assert_true(trailer_reviewed(alias, "Ann", "author@x.org", both, 2, NULL, &at));
	assert_int_equal(at, 0);
	/* a "+" alias of the author's address is the author's, whatever the name says */
	assert_false(trailer_reviewed(plus, "A", "author@x.org", both, 2, NULL, NULL));
	assert_false(trailer_reviewed(plus, "A", "author+lkml@x.org", both, 2, NULL, NULL));
	assert_true(trailer_reviewed(plus_other, "A", "author@x.org", both, 2, NULL, NULL));
	assert_false(trailer_reviewed(spaced, "Ann  Author", "a@x.org", both, 2, NULL, NULL));
	assert_false(trailer_reviewed(alias, "A", "author@x.org", both, 2, &mm, NULL));
	assert_true(trailer_reviewed(acked, "A", "author@x.org", both, 2, &mm, &at));
	assert_int_equal(at, 1);
	assert_false(trailer_reviewed(acked, "A", "author@x.org", reviewed_only, 1, NULL, NULL));
	assert_false(trailer_reviewed(acked, "A", "author@x.org", both, 0, NULL, NULL));
	assert_false(trailer_reviewed(prose, "A", "author@x.org", both, 2, NULL, NULL));
	assert_false(trailer_reviewed(noaddr, "A", "author@x.org", both, 2, NULL, NULL));
	assert_true(trailer_reviewed(acked, NULL, "", both, 2, NULL, NULL));
	assert_false(trailer_reviewed("", "A", "a@x.org", both, 2, NULL, NULL));
}

/* Hostile trailers: CR, control bytes and invalid UTF-8 never reach a name or address. */
static void test_trailer_people_hostile(void **state)
{
	struct trailer_people people = TRAILER_PEOPLE_INIT;
	struct strbuf big = STRBUF_INIT;
	size_t i;

	strbuf_addstr(&big, "x\n\nSigned-off-by: \xff\x1b[31m\xe2\x80\xae Evil <e\rvil@x.org>\n"
			    "Reviewed-by: ");
	for (i = 0; i < 1000; i++)
		strbuf_addch(&big, 'n');
	strbuf_addstr(&big, " <r@x.org>\n");
	trailer_people_parse(&people, big.buf, NULL, 0);
	assert_int_equal(people.nr, 2);
	for (i = 0; i < people.nr; i++) {
		assert_null(strpbrk(people.v[i].name, "\r\n\x1b"));
		assert_null(strpbrk(people.v[i].email, "\r\n\x1b"));
	}
	assert_int_equal(strlen(people.v[1].name), 1000);
	assert_string_equal(people.v[1].email, "r@x.org");
	trailer_people_release(&people);
	strbuf_release(&big);
}

static void head_info(struct commit_info *ci)
{
	struct strbuf head = STRBUF_INIT;
	git_repository *repo = NULL;
	git_oid oid;

	sh_out(&head, "git rev-parse HEAD");
	assert_int_equal(git_repository_open(&repo, repo_dir), 0);
	assert_int_equal(git_oid_fromstr(&oid, head.buf), 0);
	assert_int_equal(commitinfo_read(ci, repo, &oid), 0);
	assert_string_equal(ci->id.hex, head.buf);
	git_repository_free(repo);
	strbuf_release(&head);
}

static void test_commitinfo_kernel_patch(void **state)
{
	struct commit_info ci = COMMIT_INFO_INIT;
	struct strbuf want = STRBUF_INIT;
	char *ident;

	sh("printf 'a\\n' >f && git add f && git commit -q -m root");
	sh("printf 'b\\n' >>f && git add f && printf 'mm/slab: fix it\\n\\nBody.\\n\\n"
	     "Signed-off-by: Zo\\303\\253 \\303\\205ngstr\\303\\266m <zoe@example.net>\\n"
	     "Link: https://lore.kernel.org/r/1.2-1-zoe@example.net\\n' >msg && "
	     "GIT_AUTHOR_NAME=\"$(printf 'Zo\\303\\253 \\303\\205ngstr\\303\\266m')\" "
	     "GIT_AUTHOR_EMAIL=zoe@example.net git commit -q -F msg");
	head_info(&ci);
	assert_string_equal(ci.author_name, "Zoë Ångström");
	assert_string_equal(ci.author_email, "zoe@example.net");
	assert_string_equal(ci.committer_email, "t@example.org");
	assert_string_equal(ci.subject, "mm/slab: fix it");
	assert_string_equal(ci.message_id, "1.2-1-zoe@example.net");
	assert_int_equal(ci.signoffs_nr, 1);
	assert_true(ci.has_author_signoff);
	assert_int_equal(ci.parents_nr, 1);
	sh_out(&want, "git diff-tree -p HEAD^ HEAD | git patch-id --stable | cut -d' ' -f1");
	assert_string_equal(NB_PATCHID_HEX(&ci.patch_id), want.buf);
	ident = commitinfo_author_ident(&ci);
	assert_string_equal(ident, "Zoë Ångström <zoe@example.net>");
	free(ident);
	commitinfo_release(&ci);
	commitinfo_release(&ci);
	strbuf_release(&want);
}

/* A Latin-1 commit with a CR in its subject and no trailers, and a root commit. */
static void test_commitinfo_strange_commit(void **state)
{
	struct commit_info ci = COMMIT_INFO_INIT;

	sh("printf 'a\\n' >f && git add f && printf 'J\\366rg\\r fix\\n\\nbody \\351\\n' >msg && "
	     "GIT_AUTHOR_NAME=\"$(printf 'J\\366rg R\\366del')\" "
	     "git -c i18n.commitEncoding=ISO-8859-1 commit -q -F msg");
	head_info(&ci);
	assert_string_equal(ci.author_name, "Jörg Rödel");
	assert_string_equal(ci.subject, "Jörg fix"); /* a lone CR ends a line */
	assert_string_equal(ci.body, "body é\n");
	assert_null(ci.message_id);
	assert_false(ci.has_author_signoff);
	assert_string_equal(NB_PATCHID_HEX(&ci.patch_id), ""); /* a root commit */
	assert_int_equal(ci.parents_nr, 0);
	commitinfo_release(&ci);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_patchid_text_changes, setup_repo,
						teardown_repo),
		cmocka_unit_test_setup_teardown(test_patchid_mode_and_binary, setup_repo,
						teardown_repo),
		cmocka_unit_test_setup_teardown(test_patchid_merge_root_empty, setup_repo,
						teardown_repo),
		cmocka_unit_test_setup_teardown(test_patchid_none_is_no_patch, setup_repo,
						teardown_repo),
		cmocka_unit_test_setup_teardown(test_patchid_survives_rebase, setup_repo,
						teardown_repo),
		cmocka_unit_test_setup_teardown(test_commitinfo_kernel_patch, setup_repo,
						teardown_repo),
		cmocka_unit_test_setup_teardown(test_commitinfo_strange_commit, setup_repo,
						teardown_repo),
		cmocka_unit_test(test_trailer_parse_kernel_message),
		cmocka_unit_test(test_trailer_msgid_forms),
		cmocka_unit_test(test_trailer_message_id),
		cmocka_unit_test(test_trailer_odd_messages),
		cmocka_unit_test_setup_teardown(test_trailer_people_like_git, setup_repo,
						teardown_repo),
		cmocka_unit_test(test_trailer_reviewed),
		cmocka_unit_test(test_trailer_people_hostile),
	};

	return cmocka_run_group_tests_name("patchid", tests, NULL, NULL);
}
