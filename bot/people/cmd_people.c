/* The people room's commands: `nextbot maintainers` (the audit) and `nextbot reviews`. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bot/core/botutil.h"
#include "bot/people/people.h"
#include "merge/repo/repo.h"
#include "util/error.h"
#include "util/log.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

/*
 * libgit2 up, the work repository read-only, and the base's tip as a ref name: 0,
 * or EXIT_FAILED with libgit2 down again.  close_base() gives them back.
 */
static int open_base(const char *cmd, struct repo **repo, char **ref, const struct config *cfg)
{
	char *path;
	int error;

	if (merge_global_init() < 0) {
		bot_error(cmd);
		return EXIT_FAILED;
	}
	path = xstrfmt("%s/repo.git", cfg->workdir);
	error = repo_open_readonly(repo, path);
	free(path);
	if (error < 0) {
		bot_error("the work repository (run a night first)");
		merge_global_shutdown();
		return EXIT_FAILED;
	}
	*ref = xstrfmt("refs/feeds/%s", cfg->base.name);
	return 0;
}

/* What open_base() took, and the command's config. */
static void close_base(struct repo *repo, char *ref, struct config *cfg)
{
	repo_free(repo);
	free(ref);
	config_free(cfg);
	merge_global_shutdown();
}

int people_load_config(struct people **out, const struct config *cfg, struct repo *repo,
		       const char *rev)
{
	struct people_regex_limits l;
	struct people_audit_opts ao = {
		.absent_days = cfg->maintainers.absent_days,
		.window_days = cfg->maintainers.window_days,
	};
	struct people_audit a;
	struct strvec absent = STRVEC_INIT;
	int error;

	people_limits_from_config(&l, cfg);
	error = people_load_limits(out, repo, rev, cfg->maintainers.file, &l);
	if (error < 0 || !*out)
		return error;
	if (people_audit_run(&a, repo, rev, *out, &ao) < 0) {
		log_warn("%s: the audit failed, absent people are not left out: %s", rev,
			 nb_error_last());
		nb_error_clear();
		return 0;
	}
	people_audit_absent(&absent, &a);
	people_set_absent(*out, &absent);
	strvec_clear(&absent);
	people_audit_release(&a);
	return 0;
}

int people_audit_of_config(struct people_audit *out, struct people **p_out,
			   const struct config *cfg, struct repo *repo, const char *ref,
			   int absent_days)
{
	struct people_audit_opts o = {
		.absent_days = absent_days > 0 ? absent_days : cfg->maintainers.absent_days,
		.window_days = cfg->maintainers.window_days,
	};
	struct people_regex_limits l;
	int error;

	memset(out, 0, sizeof(*out));
	people_limits_from_config(&l, cfg);
	if ((error = people_load_limits(p_out, repo, ref, cfg->maintainers.file, &l)) < 0)
		return error;
	if (!*p_out)
		return nb_error_set(NB_ENOTFOUND, "%s has no %s", ref, cfg->maintainers.file);
	return people_audit_run(out, repo, ref, *p_out, &o);
}

int cmd_maintainers(const struct cli_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = { { "absent-days", required_argument, NULL, 'a' },
					       { NULL, 0, NULL, 0 } };
	struct config *cfg = NULL;
	struct repo *repo = NULL;
	struct people *p = NULL;
	struct people_audit a;
	struct strbuf out = STRBUF_INIT;
	char *ref = NULL;
	long days = 0;
	int c, code;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1)
		if (c != 'a' || str_to_long(optarg, &days) < 0 || days < 1 || days > 36500) {
			fprintf(stderr, "usage: nextbot maintainers [--absent-days N] "
					"(N: 1 to 36500)\n");
			return EXIT_USAGE;
		}
	if (optind < argc) {
		fprintf(stderr, "usage: nextbot maintainers [--absent-days N]\n");
		return EXIT_USAGE;
	}
	if ((code = bot_config_open(&cfg, ctx)))
		return code;
	if ((code = open_base("maintainers", &repo, &ref, cfg))) {
		config_free(cfg);
		return code;
	}
	if (people_audit_of_config(&a, &p, cfg, repo, ref, (int)days) < 0) {
		bot_error("maintainers");
		code = EXIT_FAILED;
		goto done;
	}
	people_audit_show(&out, &a, people_problems(p), ctx->json);
	fputs(out.buf, stdout);
	people_audit_release(&a);
done:
	strbuf_release(&out);
	people_free(p);
	close_base(repo, ref, cfg);
	return code;
}

int people_cmd_reviews(const struct cli_ctx *ctx, int argc, char **argv,
		       people_journeys_open_fn *open, people_journeys_close_fn *close)
{
	struct config *cfg = NULL;
	struct repo *repo = NULL;
	struct people *p = NULL;
	struct people_reviews r;
	struct people_journeys j = { 0 };
	struct strbuf out = STRBUF_INIT;
	const char *tree = NULL;
	char *ref = NULL;
	int code, have_j = 0;

	if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
		fprintf(stderr, "usage: nextbot reviews [TREE]\n");
		return EXIT_USAGE;
	}
	tree = argc == 2 ? argv[1] : NULL;
	if ((code = bot_config_open(&cfg, ctx)))
		return code;
	if (tree && !config_tree_find(cfg, tree, NULL)) {
		fprintf(stderr, "nextbot: reviews: no tree '%s' in %s\n", tree, cfg->path);
		config_free(cfg);
		return EXIT_USAGE;
	}
	if ((code = open_base("reviews", &repo, &ref, cfg))) {
		config_free(cfg);
		return code;
	}
	if (people_load_config(&p, cfg, repo, ref) < 0)
		nb_error_clear(); /* suggestions then come from history alone */
	if (open && open(&j, cfg) == 0)
		have_j = 1;
	else
		nb_error_clear(); /* no journeys: ages from author dates */
	if (people_reviews_run(&r, cfg, repo, tree, p, have_j ? &j : NULL) < 0) {
		bot_error("reviews");
		code = EXIT_FAILED;
		goto done;
	}
	people_reviews_show(&out, &r, ctx->json);
	fputs(out.buf, stdout);
	people_reviews_release(&r);
done:
	if (have_j && close)
		close(&j);
	strbuf_release(&out);
	people_free(p);
	close_base(repo, ref, cfg);
	return code;
}

int people_review_lines(struct strvec *out, const struct config *cfg, struct repo *repo,
			size_t max, const struct people_journeys *journeys)
{
	char *ref = xstrfmt("refs/feeds/%s", cfg->base.name);
	struct people *p = NULL;
	struct people_reviews r;
	int error;

	if (people_load_config(&p, cfg, repo, ref) < 0)
		nb_error_clear();
	if ((error = people_reviews_run(&r, cfg, repo, NULL, p, journeys)) == 0) {
		people_reviews_summary(out, &r, max);
		people_reviews_release(&r);
	}
	people_free(p);
	free(ref);
	return error;
}

int people_audit_mail_text(struct strbuf *text, struct strbuf *summary,
			   const struct config *cfg, struct repo *repo)
{
	char *ref = xstrfmt("refs/feeds/%s", cfg->base.name);
	struct strvec absent = STRVEC_INIT;
	struct people *p = NULL;
	struct people_audit a;
	size_t i, orphans = 0, all_absent = 0;
	int error = people_audit_of_config(&a, &p, cfg, repo, ref, 0);

	if (error == 0) {
		people_audit_show(text, &a, people_problems(p), 0);
		people_audit_absent(&absent, &a);
		for (i = 0; i < a.sections_nr; i++) {
			unsigned f = a.sections[i].findings;

			orphans += !!(f & (1u << PEOPLE_FINDING_ORPHAN));
			all_absent += !!(f & (1u << PEOPLE_FINDING_ALL_ABSENT));
		}
		strbuf_addf(summary, "%zu absent, %zu section%s without an active maintainer, "
			    "%zu orphaned", absent.nr, all_absent, all_absent == 1 ? "" : "s",
			    orphans);
		people_audit_release(&a);
	}
	strvec_clear(&absent);
	people_free(p);
	free(ref);
	return error;
}

int people_recipients(struct people_route *out, const struct config *cfg, struct repo *repo,
		      const char *const *paths, size_t paths_nr)
{
	char *ref = xstrfmt("refs/feeds/%s", cfg->base.name);
	struct people_route_opts o;
	struct people *p = NULL;
	int error = people_load_config(&p, cfg, repo, ref);

	people_route_opts_from_config(&o, cfg);
	if (!o.max)
		o.roles[0] = o.roles[1] = o.roles[2] = 0; /* max 0: routing is off */
	people_route(out, error < 0 ? NULL : p, paths, paths_nr, &o);
	people_free(p);
	free(ref);
	return error;
}
