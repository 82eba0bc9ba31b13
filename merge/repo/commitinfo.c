/* One commit, read once and made safe to print, mail and store. */
#include <stdlib.h>
#include <string.h>

#include "merge/repo/commitinfo_int.h"
#include "merge/git/patchid_int.h"
#include "merge/repo/trailer_int.h"
#include "util/error.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* A one-line field: converted to valid UTF-8, control characters replaced, trimmed. */
static char *line(const char *in, const char *charset)
{
	struct strbuf sb = STRBUF_INIT;

	if (in)
		utf8_from_charset(&sb, in, strlen(in), charset);
	utf8_strip_controls(&sb);
	strbuf_trim(&sb);
	return strbuf_detach(&sb, NULL);
}

/* Strings trailer_parse() made from already valid UTF-8, made one-line. */
static char *strip(const char *in)
{
	return line(in, NULL);
}

static void fill_trailers(struct commit_info *out, const char *msg)
{
	struct trailer_info ti = TRAILER_INFO_INIT;
	size_t i;

	trailer_parse(&ti, msg);
	out->subject = strip(ti.subject);
	out->body = ti.body;
	ti.body = NULL;
	out->message_id = ti.message_id ? strip(ti.message_id) : NULL;
	out->signoffs_nr = ti.signoffs_nr;
	out->signoffs = xcalloc(ti.signoffs_nr ? ti.signoffs_nr : 1, sizeof(char *));
	for (i = 0; i < ti.signoffs_nr; i++)
		out->signoffs[i] = strip(ti.signoffs[i]);
	out->has_author_signoff = trailer_has_signoff(msg, out->author_email);
	trailer_info_release(&ti);
}

static int read_commit(struct commit_info *out, git_repository *repo, const git_oid *id,
		       int with_patch_id)
{
	struct strbuf msg = STRBUF_INIT;
	git_commit *c = NULL;
	const git_signature *a, *cm;
	const char *enc, *raw;
	int error = 0;

	commitinfo_release(out);
	if (git_commit_lookup(&c, repo, id) < 0) {
		error = nb_error_set(NB_ENOTFOUND, "no commit %s", git_oid_tostr_s(id));
		goto done;
	}
	git_oid_tostr(out->id.hex, sizeof(out->id), id);
	enc = git_commit_message_encoding(c);
	a = git_commit_author(c);
	cm = git_commit_committer(c);
	out->author_name = line(a->name, enc);
	out->author_email = line(a->email, enc);
	out->committer_name = line(cm->name, enc);
	out->committer_email = line(cm->email, enc);
	out->author_time = (long long)a->when.time;
	out->commit_time = (long long)cm->when.time;
	out->parents_nr = git_commit_parentcount(c);
	raw = git_commit_message(c);
	if (raw)
		utf8_from_charset(&msg, raw, strlen(raw), enc);
	fill_trailers(out, msg.buf);
	if (with_patch_id && merge_patch_id(&out->patch_id, repo, c) < 0) {
		out->patch_id = (struct nb_patchid)NB_PATCHID_NONE;
		nb_error_clear(); /* no patch-id is an answer, not a failure */
	}
done:
	git_commit_free(c);
	strbuf_release(&msg);
	return error;
}

int commitinfo_read(struct commit_info *out, git_repository *repo, const git_oid *id)
{
	return read_commit(out, repo, id, 1);
}

int commitinfo_read_meta(struct commit_info *out, git_repository *repo, const git_oid *id)
{
	return read_commit(out, repo, id, 0);
}

void commitinfo_release(struct commit_info *info)
{
	free(info->author_name);
	free(info->author_email);
	free(info->committer_name);
	free(info->committer_email);
	free(info->subject);
	free(info->body);
	free(info->message_id);
	free_strings(info->signoffs, info->signoffs_nr);
	memset(info, 0, sizeof(*info));
}

char *commitinfo_author_ident(const struct commit_info *info)
{
	return xstrfmt("%s <%s>", info->author_name ? info->author_name : "",
		       info->author_email ? info->author_email : "");
}
