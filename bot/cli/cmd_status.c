/* `nextbot status` and `nextbot flagged`: read-only views of state.json. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bot/core/botutil.h"
#include "bot/cli/cli_int.h"
#include "bot/state/state.h"
#include "merge/integrate/integrate.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/xalloc.h"
#include "util/strbuf.h"
#include "util/banned.h"

static const char *or_dash(const char *s)
{
	return s ? s : "-";
}

static void print_run(const struct run_record *r)
{
	size_t i;

	printf("%s  %-14s %-12s next %.12s\n", or_dash(r->date), or_dash(r->tag),
	       or_dash(run_result_name(r->result)), or_dash(r->next));
	for (i = 0; i < r->trees_nr; i++) {
		const struct run_tree *t = &r->trees[i];

		printf("  %-20s %-17s %.12s%s%s\n", or_dash(t->name),
		       or_dash(tree_state_name(t->state)), t->sha1 ? t->sha1 : "-           ",
		       t->reason ? "  " : "", t->reason ? t->reason : "");
	}
	for (i = 0; i < r->flags.nr; i++)
		printf("  flag %s\n", r->flags.v[i]);
	for (i = 0; i < r->notes.nr; i++)
		printf("  note: %s\n", r->notes.v[i]);
}

/* The conflict resolutions recorded with `nextbot resolve`. */
static void print_resolutions(const struct config *cfg)
{
	struct rerere_entry *e = NULL;
	char *dir = rerere_dir(cfg->workdir);
	size_t i, nr = 0;

	if (rerere_list(&e, &nr, dir) == 0 && nr) {
		printf("recorded resolutions: %zu\n", nr);
		for (i = 0; i < nr; i++)
			printf("  %-20s %.12s  %s  (%s)\n", e[i].tree, e[i].id, e[i].path,
			       e[i].recorded);
	}
	rerere_list_free(e, nr);
	free(dir);
}

/* The last mails handled by `inbox` and `mail-in`, and the drops made by mail. */
static void print_mail(const struct state *st, size_t last)
{
	size_t i;

	if (!st->inbox_nr)
		return;
	printf("mail handled: %zu (last %zu)\n", st->inbox_nr,
	       st->inbox_nr < last ? st->inbox_nr : last);
	for (i = st->inbox_nr > last ? st->inbox_nr - last : 0; i < st->inbox_nr; i++) {
		const struct inbox_record *r = &st->inbox[i];

		printf("  %s  %-9s %s %s: %s\n", or_dash(r->when),
		       or_dash(mail_outcome_name(r->outcome)), or_dash(r->from), r->key,
		       or_dash(r->summary));
	}
	for (i = st->tests_nr > last ? st->tests_nr - last : 0; i < st->tests_nr; i++) {
		const struct test_request *t = &st->tests[i];
		int why = t->result && t->state != TEST_PASSED;

		printf("  test of %s from %s by %s: %s%s%s\n", or_dash(t->branch), or_dash(t->url),
		       or_dash(t->by), or_dash(test_state_name(t->state)), why ? ": " : "",
		       why ? t->result : "");
	}
	for (i = 0; i < st->drops_nr; i++)
		if (st->drops[i].active && st->drops[i].by)
			printf("  drop of %.12s (\"%s\") by %s in %s\n",
			       or_dash(st->drops[i].commit), or_dash(st->drops[i].subject),
			       st->drops[i].by, or_dash(st->drops[i].mail));
}

/*
 * Operator instructions (never mailed to a list): the last night's conflicts whose
 * files wait in workdir/resolve/ for `nextbot resolve`.
 */
static void print_pending(const struct config *cfg, const struct state *st)
{
	const struct run_record *last = st->runs_nr ? &st->runs[st->runs_nr - 1] : NULL;
	char *dir = rerere_resolve_dir(cfg->workdir);
	struct strvec done = STRVEC_INIT;
	size_t i;

	for (i = 0; last && i < last->conflicts.nr; i++) {
		const char *key = last->conflicts.v[i];
		size_t len = strcspn(key, "/:");
		char *tree = xstrndup(key, len), *meta = xstrfmt("%s/%s.meta", dir, tree);

		if (!strvec_contains(&done, tree) && file_exists(meta)) {
			printf("conflict of %s (%s) waiting for a resolution: edit the files in "
			       "%s/%s/\n  and run `nextbot resolve %s`\n",
			       tree, key + len + (key[len] == '/'), dir, tree, tree);
			strvec_push(&done, tree);
		}
		free(tree);
		free(meta);
	}
	strvec_clear(&done);
	free(dir);
}

static int load_state(struct state *st, const struct cli_ctx *ctx, struct config **cfg)
{
	int code = bot_config_open(cfg, ctx);

	if (code)
		return code;
	if (state_load(st, (*cfg)->workdir) < 0) {
		bot_error("cannot read state");
		config_free(*cfg);
		return EXIT_FAILED;
	}
	return 0;
}

/* A flag's matrix cells, one line each (nothing without a matrix: the command says it). */
static void print_cells(const struct flag *f, const char *indent)
{
	size_t i;

	for (i = 0; i < f->cells_nr; i++) {
		const struct flag_cell *c = &f->cells[i];

		if (!c->env.nr)
			continue;
		printf("%scell %s (since %s): %s\n", indent, or_dash(c->name),
		       or_dash(c->first_seen), or_dash(c->first_error));
	}
}

/* The open flags, with the cells each breaks. */
static void print_open_flags(const struct state *st)
{
	size_t i;

	for (i = 0; i < st->flags_nr; i++) {
		const struct flag *f = &st->flags[i];

		if (f->state != FLAG_OPEN)
			continue;
		printf("  %s  %-13s %s %.12s (\"%s\")\n", or_dash(f->id),
		       or_dash(flag_kind_name(f->kind)), or_dash(f->tree), or_dash(f->commit),
		       or_dash(f->subject));
		print_cells(f, "      ");
	}
}

int cmd_status(const struct cli_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = { { "last", required_argument, NULL, 'n' },
					       { NULL, 0, NULL, 0 } };
	struct state st = STATE_INIT;
	struct config *cfg = NULL;
	long last = 5;
	size_t i, open = 0;
	int c, code;

	optind = 1;
	while ((c = getopt_long(argc, argv, "n:", opts, NULL)) != -1) {
		if (c != 'n' || str_to_long(optarg, &last) < 0 || last < 1) {
			fprintf(stderr, "usage: nextbot status [--last N]\n");
			return EXIT_USAGE;
		}
	}
	if ((code = load_state(&st, ctx, &cfg)))
		return code;
	if (ctx->json) {
		struct strbuf sb = STRBUF_INIT;

		state_runs_json(&sb, &st, (size_t)last);
		fputs(sb.buf, stdout);
		strbuf_release(&sb);
	} else {
		if (!st.runs_nr)
			printf("no nights yet\n");
		for (i = st.runs_nr > (size_t)last ? st.runs_nr - (size_t)last : 0; i < st.runs_nr;
		     i++)
			print_run(&st.runs[i]);
		for (i = 0; i < st.flags_nr; i++)
			open += st.flags[i].state == FLAG_OPEN;
		printf("open flags: %zu of %zu\n", open, st.flags_nr);
		print_mail(&st, (size_t)last);
		print_open_flags(&st);
		print_pending(cfg, &st);
		print_resolutions(cfg);
	}
	state_release(&st);
	config_free(cfg);
	return EXIT_DONE;
}

static void print_flag(const struct flag *f, int verbose)
{
	size_t i;

	printf("%s  %-9s %-13s %s %.12s (\"%s\")\n", or_dash(f->id),
	       or_dash(flag_state_name(f->state)), or_dash(flag_kind_name(f->kind)),
	       or_dash(f->tree), or_dash(f->commit), or_dash(f->subject));
	printf("    author:  %s <%s>\n", or_dash(f->author.name), or_dash(f->author.email));
	if (f->partner_tree)
		printf("    partner: %s %.12s (\"%s\") by %s <%s>\n", f->partner_tree,
		       or_dash(f->partner_commit), or_dash(f->partner_subject),
		       or_dash(f->partner_author.name), or_dash(f->partner_author.email));
	printf("    command: %s, exit %d%s; seen %s .. %s\n", or_dash(f->command), f->exit_code,
	       f->timed_out ? " (timed out)" : "", or_dash(f->first_seen), or_dash(f->last_seen));
	if (f->error)
		printf("    error:   %s\n", f->error);
	print_cells(f, "    ");
	if (f->total)
		printf("    flaky:   failed %d of %d runs\n", f->failing, f->total);
	else
		printf("    verdict: culprit failed %d, parent passed %d, revert passed %d; "
		       "%d bisect steps\n",
		       f->culprit_fails, f->parent_passes, f->revert_passes, f->steps);
	if (f->reason && f->state == FLAG_RESOLVED && f->resolution)
		printf("    resolved: %s: %s\n", flag_resolution_name(f->resolution), f->reason);
	else if (f->reason)
		printf("    reason:  %s\n", f->reason);
	if (f->fix_subject)
		printf("    fix:     \"%s\" (%s, %s)%s%.12s\n", f->fix_subject, or_dash(f->fix_by),
		       or_dash(f->fix_date), f->fix_commit ? ": arrived as " : ": not arrived yet",
		       f->fix_commit ? f->fix_commit : "");
	for (i = 0; i < f->mail_nr; i++)
		printf("    mail:    %s %s by %s in %s%s%s\n", or_dash(f->mail[i].when),
		       or_dash(f->mail[i].command), or_dash(f->mail[i].by),
		       or_dash(f->mail[i].message_id), f->mail[i].text ? ": " : "",
		       f->mail[i].text ? f->mail[i].text : "");
	for (i = 0; i < f->log.nr && verbose; i++)
		printf("    | %s\n", f->log.v[i]);
}

int cmd_flagged(const struct cli_ctx *ctx, int argc, char **argv)
{
	struct state st = STATE_INIT;
	struct config *cfg = NULL;
	size_t i;
	int code, all = argc > 1 && !strcmp(argv[1], "--all");

	if (argc > 1 && !all) {
		fprintf(stderr, "usage: nextbot flagged [--all]\n");
		return EXIT_USAGE;
	}
	if ((code = load_state(&st, ctx, &cfg)))
		return code;
	if (ctx->json) {
		struct strbuf sb = STRBUF_INIT;

		state_flags_json(&sb, &st);
		fputs(sb.buf, stdout);
		strbuf_release(&sb);
	} else {
		size_t shown = 0;

		for (i = 0; i < st.flags_nr; i++) {
			if (!all && st.flags[i].state && st.flags[i].state != FLAG_OPEN)
				continue;
			print_flag(&st.flags[i], ctx->verbosity > 1);
			shown++;
		}
		if (!shown)
			printf(all ? "no flags\n" : "no open flags (--all shows every flag)\n");
	}
	state_release(&st);
	config_free(cfg);
	return EXIT_DONE;
}
