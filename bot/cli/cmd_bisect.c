/* `nextbot bisect`: standalone bisection of a repository with `git bisect run` semantics. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "bot/core/botutil.h"
#include "bot/cli/cli_int.h"
#include "merge/search/search.h"
#include "merge/repo/repo.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/strvec.h"
#include "util/xalloc.h"
#include "util/banned.h"

__attribute__((format(printf, 1, 2))) static int usage(const char *fmt, ...)
{
	va_list ap;

	fputs("nextbot bisect: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nusage: nextbot bisect --good REV --bad REV [--repo DIR] [--first-parent] "
	      "[--jobs K] [--timeout SECONDS] -- CMD ...\n",
	      stderr);
	return EXIT_USAGE;
}

static int value(struct bisect_repo_opts *o, struct strvec *goods, const char *opt,
		   const char *v)
{
	long n;

	if (!strcmp(opt, "--good")) {
		strvec_push(goods, v);
	} else if (!strcmp(opt, "--bad")) {
		o->bad = v;
	} else if (!strcmp(opt, "--repo")) {
		o->repo = v;
	} else if (!strcmp(opt, "--jobs")) {
		if (str_to_long(v, &n) < 0 || n < 1 || n > 64)
			return usage("--jobs wants a number from 1 to 64, not '%s'", v);
		o->jobs = (unsigned)n;
	} else if (!strcmp(opt, "--timeout")) {
		if (str_to_long(v, &n) < 0 || n < 0)
			return usage("--timeout wants seconds, not '%s'", v);
		o->timeout = (double)n;
	} else {
		return usage("unknown option '%s'", opt);
	}
	return 0;
}

static int parse_bisect_args(struct bisect_repo_opts *o, struct strvec *goods, int argc,
			     char **argv)
{
	int i, rc;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			o->argv = (const char *const *)argv + i + 1;
			break;
		}
		if (!strcmp(argv[i], "--first-parent")) {
			o->first_parent = 1;
			continue;
		}
		if (str_starts_with(argv[i], "--") && i + 1 == argc)
			return usage("%s needs a value", argv[i]);
		if ((rc = value(o, goods, argv[i], argv[i + 1])) != 0)
			return rc;
		i++;
	}
	if (!o->bad || !goods->nr)
		return usage("both --good and --bad are needed");
	if (!o->argv || !o->argv[0])
		return usage("no command given after --");
	o->goods = (const char *const *)goods->v;
	o->goods_nr = goods->nr;
	return 0;
}

static void json_strings(json_object *o, const char *key, const struct strvec *sv)
{
	json_object *arr = json_object_new_array();
	size_t i;

	for (i = 0; i < sv->nr; i++)
		json_object_array_add(arr, json_object_new_string(sv->v[i]));
	json_object_object_add(o, key, arr);
}

static void print_json(const struct bisect_repo_result *r)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "first_bad",
			       r->only_skipped ? NULL : json_object_new_string(r->first_bad.hex));
	json_object_object_add(o, "subject",
			       r->only_skipped ? NULL : json_object_new_string(r->subject));
	json_object_object_add(o, "steps", json_object_new_int((int)r->steps));
	json_object_object_add(o, "rounds", json_object_new_int((int)r->rounds));
	json_strings(o, "skipped", &r->skipped);
	json_strings(o, "candidates", &r->candidates);
	json_strings(o, "log", &r->log);
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
						       JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

static void print_text(const struct bisect_repo_result *r)
{
	size_t i;

	if (!r->only_skipped) {
		printf("%s is the first bad commit\n    %s\n", r->first_bad.hex, r->subject);
	} else {
		printf("There are only 'skip'ped commits left to test.\n"
		       "The first bad commit could be any of:\n");
		for (i = 0; i < r->candidates.nr; i++)
			printf("%s\n", r->candidates.v[i]);
		printf("We cannot bisect more!\n");
	}
	printf("# %u steps in %u rounds\n", r->steps, r->rounds);
	for (i = 0; i < r->log.nr; i++)
		printf("%s\n", r->log.v[i]);
}

static int bisect(const struct cli_ctx *ctx, struct bisect_repo_opts *o)
{
	struct bisect_repo_result r = BISECT_REPO_RESULT_INIT;
	const char *tmp = getenv("TMPDIR");
	char *scratch;
	int err;

	/* checkouts live in a scratch directory: DIR's HEAD and work tree stay as they are */
	scratch = xstrfmt("%s/nextbot-bisect.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(scratch)) {
		nb_error_errno(NB_ERROR, "creating %s", scratch);
		free(scratch);
		return EXIT_FAILED;
	}
	o->scratch = scratch;
	o->exe = bot_runner_exe(scratch);
	err = bisect_repo_run(&r, o);
	log_progress_done();
	file_remove_tree(scratch);
	free(scratch);
	if (err < 0) {
		fprintf(stderr, "nextbot bisect: %s\n", nb_error_last());
		return err == NB_ERROR ? EXIT_FAILED : EXIT_USAGE;
	}
	if (ctx->json)
		print_json(&r);
	else
		print_text(&r);
	err = r.only_skipped ? EXIT_SKIPPED : EXIT_DONE;
	bisect_repo_result_release(&r);
	return err;
}

int cmd_bisect(const struct cli_ctx *ctx, int argc, char **argv)
{
	struct bisect_repo_opts o = { .repo = ".", .jobs = 1 };
	struct strvec goods = STRVEC_INIT;
	int rc;

	if ((rc = parse_bisect_args(&o, &goods, argc, argv)) != 0)
		goto done;
	if (merge_global_init() < 0) {
		fprintf(stderr, "nextbot bisect: %s\n", nb_error_last());
		rc = EXIT_FAILED;
		goto done;
	}
	rc = bisect(ctx, &o);
	merge_global_shutdown();
done:
	strvec_clear(&goods);
	return rc;
}
