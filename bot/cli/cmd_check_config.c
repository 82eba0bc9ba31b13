/* `nextbot check-config`: validate the config and print the plan it resolves to. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "bot/cli/cli_int.h"
#include "bot/config/config.h"
#include "bot/state/state.h"
#include "util/cgroup.h"
#include "util/error.h"
#include "util/size.h"
#include "util/strbuf.h"
#include "util/timespec.h"
#include "util/banned.h"

/* Secrets are shown by the NAME of their variable and whether it is set, never the value. */
static const char *secret_state(const char *env_name)
{
	return config_secret(env_name) ? "set" : "not set";
}

static const char *deadline_kind(const struct config *cfg)
{
	switch (cfg->deadline.kind) {
	case CONFIG_DEADLINE_CLOCK:
		return "UTC time";
	case CONFIG_DEADLINE_DURATION:
		return "after the run's start";
	default:
		return "none";
	}
}

static void print_commands(FILE *out, const char *what, const struct config_command *c,
			     size_t nr)
{
	size_t i, j;

	fprintf(out, "%s:%s\n", what, nr ? "" : " (none)");
	for (i = 0; i < nr; i++) {
		fprintf(out, "  %s (timeout %lds%s): %s\n", c[i].name, c[i].timeout,
			c[i].incremental ? ", incremental search probes" : "", c[i].command);
		for (j = 0; j < c[i].env.nr; j++)
			fprintf(out, "      env %s\n", c[i].env.v[j]);
		for (j = 0; j < c[i].matrix_nr; j++) {
			size_t k;

			fprintf(out, "      matrix %s:", c[i].matrix[j].key);
			for (k = 0; k < c[i].matrix[j].values.nr; k++)
				fprintf(out, " %s", c[i].matrix[j].values.v[k]);
			fputs("\n", out);
		}
	}
}

/* The cells and what runs in each, in order: with a matrix, the night's real plan. */
static void print_cells(FILE *out, const struct config *cfg)
{
	size_t i, j;

	if (cfg->cells_nr == 1 && !*cfg->cells[0].name)
		return;
	fprintf(out, "cells: %zu, each in its own worker, up to %d at once (runner.max_jobs)\n",
		cfg->cells_nr, cfg->runner.max_jobs);
	for (i = 0; i < cfg->cells_nr; i++) {
		const struct config_cell *cell = &cfg->cells[i];

		fprintf(out, "  %s:", cell->name);
		for (j = 0; j < cfg->build_nr; j++)
			if (config_cell_has(cell, &cfg->build[j])) {
				char *name = config_cell_command_name(cell, &cfg->build[j]);

				fprintf(out, " %s", name);
				free(name);
			}
		for (j = 0; j < cfg->test_nr; j++)
			if (config_cell_has(cell, &cfg->test[j])) {
				char *name = config_cell_command_name(cell, &cfg->test[j]);

				fprintf(out, " %s", name);
				free(name);
			}
		fputs("\n", out);
	}
}

static void print_sandbox(FILE *out, const struct config *cfg)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	fprintf(out, "\nsandbox: %s%s%s, network %s\n", config_sandbox_name(cfg->runner.sandbox),
		cfg->runner.bwrap ? " " : "", cfg->runner.bwrap ? cfg->runner.bwrap : "",
		cfg->runner.network ? "allowed" : "none (loopback only)");
	for (i = 0; i < cfg->runner.read_only.nr; i++)
		fprintf(out, "  shown read-only: %s\n", cfg->runner.read_only.v[i]);
	size_format(&sb, cfg->runner.limits.memory);
	fprintf(out, "limits: memory %s, processes %ld", sb.buf, cfg->runner.limits.processes);
	strbuf_reset(&sb);
	if (cfg->runner.limits.cpu) {
		timespec_format_duration(&sb, cfg->runner.limits.cpu);
		fprintf(out, ", cpu %s", sb.buf);
		strbuf_reset(&sb);
	}
	size_format(&sb, cfg->runner.limits.file_size);
	fprintf(out, ", file_size %s\n", sb.buf);
	strbuf_reset(&sb);
	size_format(&sb, cfg->runner.min_free);
	fprintf(out, "disk: below %s free, the workers are reclaimed (runner.min_free)\n",
		sb.buf);
	strbuf_reset(&sb);
	fprintf(out, "cgroups: %s", cgroup_kind_name(cgroup_available(&sb)));
	fprintf(out, " (%s)\n", sb.buf);
	strbuf_reset(&sb);
	if (cfg->runner.cache.on) {
		size_format(&sb, cfg->runner.cache.max);
		fprintf(out, "compiler cache: nextbot's own, in %s, at most %s\n",
			cfg->runner.cache.dir, sb.buf);
	}
	strbuf_release(&sb);
}

static json_object *jstrvec(const struct strvec *sv);

static void jsandbox(json_object *x, const struct config *cfg)
{
	json_object *l = json_object_new_object();

	json_object_object_add(x, "sandbox", json_object_new_string(
						  config_sandbox_name(cfg->runner.sandbox)));
	json_object_object_add(x, "bwrap", cfg->runner.bwrap ? json_object_new_string(
								     cfg->runner.bwrap) : NULL);
	json_object_object_add(x, "network", json_object_new_boolean(cfg->runner.network));
	json_object_object_add(x, "read_only", jstrvec(&cfg->runner.read_only));
	json_object_object_add(x, "min_free", json_object_new_int64(cfg->runner.min_free));
	json_object_object_add(l, "memory", json_object_new_int64(cfg->runner.limits.memory));
	json_object_object_add(l, "processes",
			       json_object_new_int64(cfg->runner.limits.processes));
	json_object_object_add(l, "cpu", json_object_new_int64(cfg->runner.limits.cpu));
	json_object_object_add(l, "file_size",
			       json_object_new_int64(cfg->runner.limits.file_size));
	json_object_object_add(x, "limits", l);
	if (cfg->runner.cache.on) {
		json_object *c = json_object_new_object();

		json_object_object_add(c, "dir", json_object_new_string(cfg->runner.cache.dir));
		json_object_object_add(c, "max", json_object_new_int64(cfg->runner.cache.max));
		json_object_object_add(x, "cache", c);
	}
}

/*
 * What the config cannot say wrong but the host can: no sandbox, a workdir the
 * runner user cannot reach.  Warnings go to stderr; returns 1 if the nights would fail.
 */
static int check_host(const struct config *cfg)
{
	if (cfg->runner.sandbox == CONFIG_SANDBOX_NONE)
		fprintf(stderr, "nextbot: warning: %s\n",
			cfg->runner.sandbox_defaulted
				? "bwrap is not installed: build and test commands run without a "
				  "sandbox (they can read what the runner user can and reach the "
				  "network); install bubblewrap, or say runner.sandbox: none"
				: "runner.sandbox is none: build and test commands run without a "
				  "sandbox (they can read what the runner user can and reach the "
				  "network)");
	if (workdir_check_reach(cfg->workdir, cfg->runner.user) < 0 ||
	    workdir_check_alternates(cfg->workdir, cfg->runner.user) < 0 ||
	    (cfg->runner.sandbox == CONFIG_SANDBOX_BWRAP &&
	     workdir_check_sandbox(cfg->runner.bwrap, cfg->runner.user, cfg->workdir) < 0)) {
		fprintf(stderr, "nextbot: %s\n", nb_error_last());
		return 1;
	}
	return 0;
}

static void print_tree(FILE *out, size_t n, const struct config_tree *t)
{
	size_t i;

	fprintf(out, "  %2zu. %s  %s#%s\n", n, t->name, t->url, t->branch);
	for (i = 0; i < t->contacts.nr; i++)
		fprintf(out, "        contact: %s\n", t->contacts.v[i]);
	if (t->fixes)
		fprintf(out, "        fixes:   %s\n", t->fixes);
}

static void print_notify(FILE *out, const struct config *cfg)
{
	size_t i;

	fprintf(out, "notify:\n  from: %s\n  list: %s\n  report_url: %s\n  remind_days: %d%s\n",
		cfg->notify.from, cfg->notify.list ? cfg->notify.list : "(none)",
		cfg->notify.report_url ? cfg->notify.report_url : "(none)",
		cfg->notify.remind_days, cfg->notify.remind_days ? "" : " (never remind)");
	fprintf(out, "  operator: %s\n",
		cfg->notify.operator ? cfg->notify.operator
				     : "(none: operator instructions only in `nextbot status`)");
	if (cfg->notify.smtp.url) {
		fprintf(out, "  smtp: %s (tls %s", cfg->notify.smtp.url,
			config_tls_name(cfg->notify.smtp.tls));
		if (cfg->notify.smtp.user)
			fprintf(out, ", user %s", cfg->notify.smtp.user);
		if (cfg->notify.smtp.password_env)
			fprintf(out, ", password from $%s, %s", cfg->notify.smtp.password_env,
				secret_state(cfg->notify.smtp.password_env));
		if (cfg->notify.smtp.ca_file)
			fprintf(out, ", CA certificates %s", cfg->notify.smtp.ca_file);
		fputs(")\n", out);
	} else {
		fputs("  smtp: none (mails stay in the outbox as files)\n", out);
	}
	for (i = 0; i < cfg->notify.webhooks_nr; i++) {
		const struct config_webhook *w = &cfg->notify.webhooks[i];

		fprintf(out, "  webhook: %s (%s)", w->url, config_hook_format_name(w->format));
		if (w->secret_env)
			fprintf(out, " (signed with $%s, %s)", w->secret_env,
				secret_state(w->secret_env));
		fputs("\n", out);
	}
}

static void print_inbox(FILE *out, const struct config *cfg)
{
	size_t i;

	if (!cfg->inbox.configured) {
		fputs("inbox: none (mail commands only through `nextbot mail-in`)\n", out);
		return;
	}
	if (cfg->inbox.url) {
		fprintf(out, "inbox: %s (tls %s, user %s", cfg->inbox.url,
			config_tls_name(cfg->inbox.tls), cfg->inbox.user);
		if (cfg->inbox.password_env)
			fprintf(out, ", password from $%s, %s", cfg->inbox.password_env,
				secret_state(cfg->inbox.password_env));
		if (cfg->inbox.ca_file)
			fprintf(out, ", CA certificates %s", cfg->inbox.ca_file);
		fprintf(out, "), polled every %lds by daemon\n", cfg->inbox.poll);
	} else {
		fputs("inbox: no url (mail commands through `nextbot mail-in`)\n", out);
	}
	fprintf(out, "  authserv_id: %s\n",
		cfg->inbox.authserv_id ? cfg->inbox.authserv_id : "none (From: is believed)");
	fprintf(out, "  max_tests: %d a day\n  test_urls:", cfg->inbox.max_tests);
	for (i = 0; i < cfg->inbox.test_urls.nr; i++)
		fprintf(out, " %s", cfg->inbox.test_urls.v[i]);
	fputs(cfg->inbox.test_urls.nr ? "\n" : " (the hosts of the trees' urls)\n", out);
	fprintf(out, "drop_push: %s\n", cfg->drop_push ? "true" : "false");
}

/* What is valid but unsafe or surprising, on stderr. */
static void print_warnings(const struct config *cfg)
{
	size_t i;

	for (i = 0; i < cfg->warnings.nr; i++)
		fprintf(stderr, "nextbot: warning: %s\n", cfg->warnings.v[i]);
	if (cfg->inbox.configured && !cfg->inbox.authserv_id)
		fputs("nextbot: warning: inbox.authserv_id is not set: a mail command is taken to "
		      "come from whatever its From: says, and From: can be forged; set it to "
		      "the authserv-id your mail server writes in Authentication-Results\n",
		      stderr);
	if (cfg->inbox.url && cfg->inbox.tls == CONFIG_TLS_NONE)
		fputs("nextbot: warning: inbox.tls is none: the IMAP password and the mail go "
		      "over the network in clear text\n",
		      stderr);
}

/* watch, journey, review_gate (a patch's journey). */
static void print_journey(FILE *out, const struct config *cfg)
{
	size_t i, j;

	fprintf(out, "watch, fetched and never merged:%s\n", cfg->watch_nr ? "" : " (none)");
	for (i = 0; i < cfg->watch_nr; i++)
		print_tree(out, i + 1, &cfg->watch[i]);
	fputs("journey:", out);
	for (i = 0; i < cfg->journey.trees.nr; i++)
		fprintf(out, " %s", cfg->journey.trees.v[i]);
	if (!cfg->journey.trees.nr)
		fputs(" (none)", out);
	fprintf(out, "%s%s%s\n", cfg->journey.list ? ", list " : "",
		cfg->journey.list ? cfg->journey.list : "", cfg->journey.digest ? ", digest" : "");
	for (i = 0; i < cfg->gates_nr; i++) {
		fprintf(out, "review_gate: %s, requires",
			config_gate_policy_name(cfg->gates[i].policy));
		for (j = 0; j < cfg->gates[i].require.nr; j++)
			fprintf(out, "%s %s", j ? " or" : "", cfg->gates[i].require.v[j]);
		fputs(", on", out);
		for (j = 0; j < cfg->gates[i].trees.nr; j++)
			fprintf(out, " %s", cfg->gates[i].trees.v[j]);
		fputs("\n", out);
	}
}

static void print_plan(FILE *out, const struct config *cfg)
{
	size_t i;

	fprintf(out, "config: %s\nworkdir: %s\n", cfg->path, cfg->workdir);
	fprintf(out, "base: %s  %s#%s\n", cfg->base.name, cfg->base.url, cfg->base.branch);
	fprintf(out, "trees, in merge order:%s\n", cfg->trees_nr ? "" : " (none)");
	for (i = 0; i < cfg->trees_nr; i++)
		print_tree(out, i + 1, &cfg->trees[i]);
	fputs("never_merge:", out);
	for (i = 0; i < cfg->never_merge.nr; i++)
		fprintf(out, " %s", cfg->never_merge.v[i]);
	fputs(cfg->never_merge.nr ? "\n" : " (none)\n", out);
	print_journey(out, cfg);
	print_commands(out, cfg->build_after_each_merge ? "build (after each merge)"
							    : "build (once, after all merges)",
			 cfg->build, cfg->build_nr);
	print_commands(out, "test", cfg->test, cfg->test_nr);
	print_cells(out, cfg);
	fprintf(out, "on_breakage: %s\n", config_on_breakage_name(cfg->on_breakage));
	fprintf(out, "bisect: confirm %d, jobs %d\n", cfg->bisect.confirm, cfg->bisect.jobs);
	fprintf(out, "runner: %s, user %s, max_jobs %d", config_runner_kind_name(cfg->runner.kind),
		cfg->runner.user, cfg->runner.max_jobs);
	if (cfg->runner.partition)
		fprintf(out, ", partition %s", cfg->runner.partition);
	for (i = 0; i < cfg->runner.srun_args.nr; i++)
		fprintf(out, "%s%s", i ? " " : ", srun ", cfg->runner.srun_args.v[i]);
	for (i = 0; i < cfg->runner.devices.nr; i++)
		fprintf(out, "%s%s", i ? " " : ", devices ", cfg->runner.devices.v[i]);
	print_sandbox(out, cfg);
	fprintf(out, "schedule: %s (UTC)\n", cfg->schedule);
	fprintf(out, "deadline: %s%s%s%s\n", cfg->deadline.text ? cfg->deadline.text : "none",
		cfg->deadline.text ? " (" : "", cfg->deadline.text ? deadline_kind(cfg) : "",
		cfg->deadline.text ? ")" : "");
	fprintf(out, "keep_days: %d\nmerge_identity: %s\n", cfg->keep_days, cfg->merge_identity);
	if (cfg->git.token_env)
		fprintf(out, "git: token from $%s (%s)", cfg->git.token_env,
			secret_state(cfg->git.token_env));
	else
		fputs("git: token none", out);
	fprintf(out, ", ssh_key %s", cfg->git.ssh_key ? cfg->git.ssh_key : "none");
	if (cfg->git.ca_file)
		fprintf(out, ", ca_file %s", cfg->git.ca_file);
	fputc('\n', out);
	if (cfg->publish.url)
		fprintf(out, "publish: %s#%s\n", cfg->publish.url, cfg->publish.branch);
	else
		fputs("publish: none\n", out);
	print_notify(out, cfg);
	print_inbox(out, cfg);
}

/* ---- JSON --------------------------------------------------------------------------- */

static json_object *jstr(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static json_object *jstrvec(const struct strvec *sv)
{
	json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; i < sv->nr; i++)
		json_object_array_add(a, json_object_new_string(sv->v[i]));
	return a;
}

static json_object *jtree(const struct config_tree *t, int with_extras)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "name", jstr(t->name));
	json_object_object_add(o, "url", jstr(t->url));
	json_object_object_add(o, "branch", jstr(t->branch));
	if (with_extras) {
		json_object_object_add(o, "contacts", jstrvec(&t->contacts));
		json_object_object_add(o, "fixes", jstr(t->fixes));
	}
	return o;
}

/* "KEY=VALUE" strings as a JSON object. */
static json_object *jenv(const struct strvec *sv)
{
	json_object *env = json_object_new_object();
	size_t j;

	for (j = 0; j < sv->nr; j++) {
		const char *kv = sv->v[j], *eq = strchr(kv, '=');
		struct strbuf k = STRBUF_INIT;

		strbuf_add(&k, kv, (size_t)(eq - kv));
		json_object_object_add(env, k.buf, json_object_new_string(eq + 1));
		strbuf_release(&k);
	}
	return env;
}

static json_object *jcommands(const struct config_command *c, size_t nr)
{
	json_object *a = json_object_new_array();
	size_t i, j;

	for (i = 0; i < nr; i++) {
		json_object *o = json_object_new_object(), *m = NULL;

		if (c[i].matrix_nr)
			m = json_object_new_object();
		for (j = 0; j < c[i].matrix_nr; j++)
			json_object_object_add(m, c[i].matrix[j].key,
					       jstrvec(&c[i].matrix[j].values));
		json_object_object_add(o, "name", jstr(c[i].name));
		json_object_object_add(o, "command", jstr(c[i].command));
		json_object_object_add(o, "timeout", json_object_new_int64(c[i].timeout));
		json_object_object_add(o, "incremental", json_object_new_boolean(c[i].incremental));
		json_object_object_add(o, "env", jenv(&c[i].env));
		json_object_object_add(o, "matrix", m);
		json_object_array_add(a, o);
	}
	return a;
}

/* A JSON string of `s`, which it frees. */
static json_object *jtake(char *s)
{
	json_object *o = json_object_new_string(s);

	free(s);
	return o;
}

/* Every cell with its name, env and the commands it runs, in order. */
static json_object *jcells(const struct config *cfg)
{
	json_object *a = json_object_new_array();
	size_t i, j;

	for (i = 0; i < cfg->cells_nr; i++) {
		const struct config_cell *cell = &cfg->cells[i];
		json_object *o = json_object_new_object(), *cmds = json_object_new_array();

		for (j = 0; j < cfg->build_nr; j++)
			if (config_cell_has(cell, &cfg->build[j]))
				json_object_array_add(cmds, jtake(
					config_cell_command_name(cell, &cfg->build[j])));
		for (j = 0; j < cfg->test_nr; j++)
			if (config_cell_has(cell, &cfg->test[j]))
				json_object_array_add(cmds, jtake(
					config_cell_command_name(cell, &cfg->test[j])));
		json_object_object_add(o, "name", jstr(cell->name));
		json_object_object_add(o, "env", jenv(&cell->env));
		json_object_object_add(o, "commands", cmds);
		json_object_array_add(a, o);
	}
	return a;
}

/* watch[], journey, review_gate[] as the file has them, defaults filled in. */
static void jjourney(json_object *o, const struct config *cfg)
{
	json_object *a = json_object_new_array(), *x;
	size_t i;

	for (i = 0; i < cfg->watch_nr; i++)
		json_object_array_add(a, jtree(&cfg->watch[i], 1));
	json_object_object_add(o, "watch", a);
	x = json_object_new_object();
	json_object_object_add(x, "trees", jstrvec(&cfg->journey.trees));
	if (cfg->journey.list_trees.nr) {
		json_object *lists = json_object_new_object();

		for (i = 0; i < cfg->journey.list_trees.nr; i++)
			json_object_object_add(lists, cfg->journey.list_trees.v[i],
					       jstr(cfg->journey.lists.v[i]));
		json_object_object_add(x, "list", lists);
	} else {
		json_object_object_add(x, "list", jstr(cfg->journey.list));
	}
	json_object_object_add(x, "digest", json_object_new_boolean(cfg->journey.digest));
	json_object_object_add(o, "journey", x);
	a = json_object_new_array();
	for (i = 0; i < cfg->gates_nr; i++) {
		x = json_object_new_object();
		json_object_object_add(x, "trees", jstrvec(&cfg->gates[i].trees));
		json_object_object_add(x, "require", jstrvec(&cfg->gates[i].require));
		json_object_object_add(x, "policy",
				       jstr(config_gate_policy_name(cfg->gates[i].policy)));
		json_object_object_add(x, "follow",
				       json_object_new_boolean(cfg->gates[i].follow));
		json_object_object_add(x, "verify",
				       jstr(config_gate_verify_name(cfg->gates[i].verify)));
		json_object_array_add(a, x);
	}
	json_object_object_add(o, "review_gate", a);
}

static json_object *jinbox(const struct config *cfg)
{
	json_object *o;

	if (!cfg->inbox.configured)
		return NULL;
	o = json_object_new_object();
	json_object_object_add(o, "url", jstr(cfg->inbox.url));
	json_object_object_add(o, "tls",
			       cfg->inbox.url ? jstr(config_tls_name(cfg->inbox.tls)) : NULL);
	json_object_object_add(o, "user", jstr(cfg->inbox.user));
	json_object_object_add(o, "password_env", jstr(cfg->inbox.password_env));
	json_object_object_add(o, "ca_file", jstr(cfg->inbox.ca_file));
	json_object_object_add(o, "poll", json_object_new_int64(cfg->inbox.poll));
	json_object_object_add(o, "authserv_id", jstr(cfg->inbox.authserv_id));
	json_object_object_add(o, "max_tests", json_object_new_int(cfg->inbox.max_tests));
	json_object_object_add(o, "test_urls", jstrvec(&cfg->inbox.test_urls));
	return o;
}

static json_object *jnotify(const struct config *cfg)
{
	json_object *o = json_object_new_object(), *hooks = json_object_new_array();
	json_object *smtp = NULL;
	size_t i;

	json_object_object_add(o, "from", jstr(cfg->notify.from));
	json_object_object_add(o, "list", jstr(cfg->notify.list));
	json_object_object_add(o, "operator", jstr(cfg->notify.operator));
	json_object_object_add(o, "report_url", jstr(cfg->notify.report_url));
	json_object_object_add(o, "remind_days", json_object_new_int(cfg->notify.remind_days));
	if (cfg->notify.smtp.url) {
		smtp = json_object_new_object();
		json_object_object_add(smtp, "url", jstr(cfg->notify.smtp.url));
		json_object_object_add(smtp, "tls", jstr(config_tls_name(cfg->notify.smtp.tls)));
		json_object_object_add(smtp, "user", jstr(cfg->notify.smtp.user));
		json_object_object_add(smtp, "password_env", jstr(cfg->notify.smtp.password_env));
		json_object_object_add(smtp, "ca_file", jstr(cfg->notify.smtp.ca_file));
	}
	json_object_object_add(o, "smtp", smtp);
	for (i = 0; i < cfg->notify.webhooks_nr; i++) {
		json_object *w = json_object_new_object();

		json_object_object_add(w, "url", jstr(cfg->notify.webhooks[i].url));
		json_object_object_add(w, "secret_env", jstr(cfg->notify.webhooks[i].secret_env));
		json_object_object_add(
			w, "format", jstr(config_hook_format_name(cfg->notify.webhooks[i].format)));
		json_object_array_add(hooks, w);
	}
	json_object_object_add(o, "webhooks", hooks);
	return o;
}

static json_object *jplan(const struct config *cfg)
{
	json_object *o = json_object_new_object(), *trees = json_object_new_array(), *x;
	size_t i;

	json_object_object_add(o, "config", jstr(cfg->path));
	json_object_object_add(o, "workdir", jstr(cfg->workdir));
	json_object_object_add(o, "base", jtree(&cfg->base, 0));
	for (i = 0; i < cfg->trees_nr; i++)
		json_object_array_add(trees, jtree(&cfg->trees[i], 1));
	json_object_object_add(o, "trees", trees);
	json_object_object_add(o, "never_merge", jstrvec(&cfg->never_merge));
	jjourney(o, cfg);
	json_object_object_add(o, "build", jcommands(cfg->build, cfg->build_nr));
	json_object_object_add(o, "test", jcommands(cfg->test, cfg->test_nr));
	json_object_object_add(o, "cells", jcells(cfg));
	json_object_object_add(o, "build_after_each_merge",
			       json_object_new_boolean(cfg->build_after_each_merge));
	json_object_object_add(o, "on_breakage", jstr(config_on_breakage_name(cfg->on_breakage)));
	x = json_object_new_object();
	json_object_object_add(x, "confirm", json_object_new_int(cfg->bisect.confirm));
	json_object_object_add(x, "jobs", json_object_new_int(cfg->bisect.jobs));
	json_object_object_add(o, "bisect", x);
	json_object_object_add(o, "deadline", jstr(cfg->deadline.text));
	json_object_object_add(o, "merge_identity", jstr(cfg->merge_identity));
	x = json_object_new_object();
	json_object_object_add(x, "kind", jstr(config_runner_kind_name(cfg->runner.kind)));
	json_object_object_add(x, "user", jstr(cfg->runner.user));
	json_object_object_add(x, "partition", jstr(cfg->runner.partition));
	json_object_object_add(x, "srun_args", jstrvec(&cfg->runner.srun_args));
	json_object_object_add(x, "max_jobs", json_object_new_int(cfg->runner.max_jobs));
	jsandbox(x, cfg);
	json_object_object_add(o, "runner", x);
	x = json_object_new_object();
	json_object_object_add(x, "token_env", jstr(cfg->git.token_env));
	json_object_object_add(x, "ssh_key", jstr(cfg->git.ssh_key));
	json_object_object_add(x, "ca_file", jstr(cfg->git.ca_file));
	json_object_object_add(o, "git", x);
	x = NULL;
	if (cfg->publish.url) {
		x = json_object_new_object();
		json_object_object_add(x, "url", jstr(cfg->publish.url));
		json_object_object_add(x, "branch", jstr(cfg->publish.branch));
	}
	json_object_object_add(o, "publish", x);
	json_object_object_add(o, "notify", jnotify(cfg));
	json_object_object_add(o, "inbox", jinbox(cfg));
	json_object_object_add(o, "drop_push", json_object_new_boolean(cfg->drop_push));
	json_object_object_add(o, "schedule", jstr(cfg->schedule));
	json_object_object_add(o, "keep_days", json_object_new_int(cfg->keep_days));
	return o;
}

int cmd_check_config(const struct cli_ctx *ctx, int argc, char **argv)
{
	struct strvec errors = STRVEC_INIT;
	struct config *cfg = NULL;
	json_object *plan;
	int code;

	if (argc > 1) {
		fprintf(stderr, "nextbot: check-config takes no arguments ('%s')\n"
				"usage: nextbot [-c FILE] [--json] check-config\n",
			argv[1]);
		return EXIT_USAGE;
	}
	if (config_load_all(&cfg, ctx->config_path, &errors) < 0) {
		size_t i;

		for (i = 0; i < errors.nr; i++)
			fprintf(stderr, "nextbot: %s\n", errors.v[i]);
		if (errors.nr > 1)
			fprintf(stderr, "nextbot: %zu errors in %s\n", errors.nr, ctx->config_path);
		strvec_clear(&errors);
		return EXIT_USAGE;
	}
	if (ctx->json) {
		int flags = JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE;

		plan = jplan(cfg);
		printf("%s\n", json_object_to_json_string_ext(plan, flags));
		json_object_put(plan);
	} else {
		print_plan(stdout, cfg);
	}
	print_warnings(cfg);
	code = check_host(cfg) ? EXIT_FAILED : EXIT_DONE;
	config_free(cfg);
	return code;
}
