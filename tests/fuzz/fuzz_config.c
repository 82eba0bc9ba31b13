/* Fuzz target: the strict YAML config loader (bot/config/config.c) on arbitrary files. */
#include <ctype.h>
#include <stdint.h>
#include <string.h>

#include "bot/config/config.h"
#include "tests/fuzz/fuzz.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* "PATH:LINE:COL: " at the start of msg. */
static int cfg_has_mark(const char *msg, const char *path)
{
	size_t plen = strlen(path);
	const char *p;
	int part;

	if (strncmp(msg, path, plen) || msg[plen] != ':')
		return 0;
	p = msg + plen + 1;
	for (part = 0; part < 2; part++) {
		if (!isdigit((unsigned char)*p) || *p == '0')
			return 0;
		while (isdigit((unsigned char)*p))
			p++;
		if (*p++ != ':')
			return 0;
	}
	return *p == ' ';
}

static int cfg_ref_safe(const char *name)
{
	const char *p;

	if (!name || !*name || *name == '.' || *name == '-')
		return 0;
	for (p = name; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("._-", *p))
			return 0;
	return 1;
}

static void cfg_check_tree(const struct config *cfg, const struct config_tree *t)
{
	FUZZ_CHECK(cfg_ref_safe(t->name), "tree name '%s' is not ref-safe", t->name);
	FUZZ_CHECK(t->url && *t->url && t->branch && *t->branch, "tree %s without url/branch",
		   t->name);
	FUZZ_CHECK(!t->fixes || t->fixes[0] == '/', "fixes path '%s' not absolute", t->fixes);
	FUZZ_CHECK(!config_never_merge_match(cfg, t->name, t->branch),
		   "tree %s matches never_merge but was accepted", t->name);
}

static void cfg_check_commands(const struct config_command *c, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		FUZZ_CHECK(c[i].name && c[i].command, "command without name or command line");
		FUZZ_CHECK(c[i].timeout > 0, "command %s has timeout %ld", c[i].name,
			   c[i].timeout);
	}
}

/* What an accepted config promises its users. */
static void cfg_check_ok(const struct config *cfg)
{
	size_t i;

	FUZZ_CHECK(cfg, "0 returned without a config");
	FUZZ_CHECK(cfg->workdir && cfg->workdir[0] == '/', "workdir '%s' not absolute",
		   cfg->workdir);
	cfg_check_tree(cfg, &cfg->base);
	for (i = 0; i < cfg->trees_nr; i++)
		cfg_check_tree(cfg, &cfg->trees[i]);
	cfg_check_commands(cfg->build, cfg->build_nr);
	cfg_check_commands(cfg->test, cfg->test_nr);
	FUZZ_CHECK(cfg->bisect.confirm >= 0 && cfg->bisect.confirm <= 100, "confirm %d",
		   cfg->bisect.confirm);
	FUZZ_CHECK(cfg->bisect.jobs >= 1 && cfg->bisect.jobs <= 256, "jobs %d", cfg->bisect.jobs);
	FUZZ_CHECK(cfg->keep_days >= 1, "keep_days %d", cfg->keep_days);
	FUZZ_CHECK(cfg->schedule && cfg->notify.from && cfg->merge_identity,
		   "schedule, notify.from or merge_identity missing");
	FUZZ_CHECK(!cfg->git.ssh_key || cfg->git.ssh_key[0] == '/', "ssh_key not absolute");
}

int fuzz_config_one(const uint8_t *data, size_t size)
{
	struct config *cfg = (struct config *)1;
	char *path = xstrfmt("%s/nextbot.yaml", fuzz_tmpdir());
	const char *msg;
	int ret;

	if (file_write_atomic(path, data, size) < 0)
		abort();
	ret = config_load(&cfg, path);
	if (ret == 0) {
		cfg_check_ok(cfg);
	} else {
		msg = nb_error_last();
		FUZZ_CHECK(ret == NB_EINVALID, "config_load returned %d", ret);
		FUZZ_CHECK(cfg == NULL, "failed load left a config behind");
		FUZZ_CHECK(msg && cfg_has_mark(msg, path), "message without FILE:LINE:COL: '%s'",
			   msg ? msg : "(none)");
		/* keys are quoted as written, line breaks too: only UTF-8 is promised */
		FUZZ_CHECK(fuzz_utf8_valid(msg, strlen(msg)), "message not UTF-8: '%s'", msg);
	}
	config_free(ret == 0 ? cfg : NULL);
	free(path);
	return 0;
}

#ifndef FUZZ_REPLAY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_config_one(data, size);
}
#endif
