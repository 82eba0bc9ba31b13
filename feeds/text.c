/* The simulated project's source text: a small kernel-shaped C program with unit tests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feeds/sim.h"
#include "util/xalloc.h"
#include "util/banned.h"

struct sub_desc {
	const char *tree, *ident, *dir, *prefix, *objtype, *var;
	const char *fields[4], *typos[4], *core[3];
};

/* lib belongs to mainline, mm to the mm trees, the rest to one tree each. */
static const struct sub_desc named_subs[] = {
	{ NULL, "lib", "lib", "lib", "struct nb_buf", "b", { "len", "cap", "flags", "refs" },
	  { "length", "capacity", "flag", "ref" }, { "string", "bitmap", NULL } },
	{ "mm", "mm", "mm", "mm", "struct page", "pg", { "flags", "ref_count", "index", "order" },
	  { "flag", "refcount", "idx", "ordr" }, { "page_alloc", "slab", "vmscan" } },
	{ "net-next", "net", "net", "net", "struct sock", "sk",
	  { "sk_rcvbuf", "sk_sndbuf", "sk_state", "sk_backlog" },
	  { "sk_rcvbuff", "sk_sendbuf", "sk_stat", "sk_backlogs" }, { "core", "socket", "route" } },
	{ "vfs", "fs", "fs", "fs", "struct inode", "inode",
	  { "i_ino", "i_size", "i_mode", "i_nlink" },
	  { "i_inode", "i_sz", "i_mod", "i_nlinks" }, { "inode", "namei", "super" } },
	{ "sched", "sched", "kernel/sched", "sched", "struct task", "p",
	  { "prio", "nice", "state", "cpu" }, { "priority", "niceness", "stat", "cpus" },
	  { "core", "fair", NULL } },
};

static const char *const driver_names[] = { "block", "crypto", "sound", "usb", "gpio", "i2c",
					    "spi", "pci", "input", "media", "drm", "rdma",
					    "iommu", "pwm", "rtc", "hwmon", "leds", "mtd",
					    "nfc", "thermal" };

static const char *const core_words[SIM_SLOTS_CORE] = { "batch", "limit", "budget", "weight",
							 "quota", "shift", "hint",  "span" };
static const char *const small_words[SIM_SLOTS_SMALL] = { "scan", "tune" };
static const char *const filler_stems[] = { "pressure", "reclaim", "compact", "writeback",
					    "backlog", "quota", "stats", "balance", "policy",
					    "cache", "audit", "trace" };

/* Tunables in include/nb/params.h: the region two trees may fight over. */
const char *const sim_params[] = { "NB_HASH_SHIFT",    "NB_MAX_BATCH",   "NB_TIMEOUT_MS",
				   "NB_RETRY_LIMIT",   "NB_QUEUE_DEPTH", "NB_SCAN_RATIO",
				   "NB_MIN_FREE_KB",   "NB_WATERMARK",   "NB_BACKOFF_US",
				   "NB_MAX_NR_ZONES" };
const size_t sim_params_nr = sizeof(sim_params) / sizeof(sim_params[0]);
static const int param_values[] = { 10, 64, 100, 5, 128, 25, 1024, 16, 50, 4 };

const char *sim_stem(int k)
{
	return filler_stems[k % (int)(sizeof(filler_stems) / sizeof(filler_stems[0]))];
}

static unsigned hash(const char *s)
{
	unsigned h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h;
}

static void sub_from_desc(struct sim_sub *s, const struct sub_desc *d)
{
	int i;

	s->tree = d->tree ? xstrdup(d->tree) : NULL;
	s->ident = xstrdup(d->ident);
	s->dir = xstrdup(d->dir);
	s->prefix = xstrdup(d->prefix);
	s->objtype = xstrdup(d->objtype);
	s->var = xstrdup(d->var);
	for (i = 0; i < 4; i++) {
		s->fields[i] = xstrdup(d->fields[i]);
		s->typos[i] = xstrdup(d->typos[i]);
	}
	for (i = 0; i < 3 && d->core[i]; i++)
		s->core[i] = xstrdup(d->core[i]);
	s->core_nr = i;
}

static void sub_driver(struct sim_sub *s, int i)
{
	size_t n = sizeof(driver_names) / sizeof(driver_names[0]);
	char name[32];
	struct sub_desc d = { NULL, name, NULL, name, NULL, "dev",
			      { "id", "irq", "flags", "qlen" },
			      { "ident", "irqs", "flag", "q_len" }, { "core", "main", NULL } };
	char *dir, *objtype;

	/* Past the named ones, drivers nest under them: no folder gets too wide. */
	if ((size_t)i < n) {
		snprintf(name, sizeof(name), "%s", driver_names[i]);
		dir = xstrfmt("drivers/%s", name);
	} else {
		snprintf(name, sizeof(name), "drv%03d", i);
		dir = xstrfmt("drivers/%s/%s", driver_names[i % n], name);
	}
	objtype = xstrfmt("struct %s_dev", name);
	d.tree = name;
	d.dir = dir;
	d.objtype = objtype;
	sub_from_desc(s, &d);
	free(dir);
	free(objtype);
}

/* Top-level files, then per subsystem its core files, header and test. */
static int base_file_count(const struct sim_world *w)
{
	size_t i;
	int n = 8;

	for (i = 0; i < w->subs_nr; i++)
		n += w->subs[i].core_nr + 2;
	return n;
}

void sim_subs_build(struct sim_world *w)
{
	size_t i, named = sizeof(named_subs) / sizeof(named_subs[0]);
	int base, extra;

	w->subs_nr = 2 + (size_t)w->ntrees;
	w->subs = xcalloc(w->subs_nr, sizeof(*w->subs));
	for (i = 0; i < w->subs_nr; i++) {
		if (i < named)
			sub_from_desc(&w->subs[i], &named_subs[i]);
		else
			sub_driver(&w->subs[i], (int)(i - named));
		w->subs[i].extras = (struct strvec)STRVEC_INIT;
	}
	base = base_file_count(w);
	extra = w->nfiles > base ? w->nfiles - base : 0;
	for (i = 0; i < w->subs_nr; i++)
		w->subs[i].fillers = extra / (int)w->subs_nr + ((int)i < extra % (int)w->subs_nr);
}

void sim_subs_release(struct sim_world *w)
{
	size_t i;
	int j;

	for (i = 0; i < w->subs_nr; i++) {
		struct sim_sub *s = &w->subs[i];

		free(s->tree);
		free(s->ident);
		free(s->dir);
		free(s->prefix);
		free(s->objtype);
		free(s->var);
		for (j = 0; j < 4; j++) {
			free(s->fields[j]);
			free(s->typos[j]);
		}
		for (j = 0; j < s->core_nr; j++)
			free(s->core[j]);
		strvec_clear(&s->extras);
	}
	free(w->subs);
	w->subs = NULL;
	w->subs_nr = 0;
}

int sim_slot_count(const struct sim_sub *s)
{
	return s->core_nr * SIM_SLOTS_CORE + (s->fillers + (int)s->extras.nr) * SIM_SLOTS_SMALL;
}

static void filler_path(struct strbuf *out, const struct sim_sub *s, int k)
{
	size_t n = sizeof(filler_stems) / sizeof(filler_stems[0]);

	strbuf_addf(out, "%s/opt/%s%d.c", s->dir, filler_stems[k % n], k);
}

void sim_fn_name(struct strbuf *out, const struct sim_sub *s, const char *path, const char *word)
{
	const char *base = strrchr(path, '/');
	size_t len;

	base = base ? base + 1 : path;
	len = strlen(base);
	if (len > 2 && !strcmp(base + len - 2, ".c"))
		len -= 2;
	strbuf_addf(out, "%s_%.*s_%s", s->ident, (int)len, base, word);
}

void sim_slot_locate(struct strbuf *path, struct strbuf *fn, const struct sim_sub *s, int slot)
{
	const char *word;
	int j;

	strbuf_reset(path);
	strbuf_reset(fn);
	if (slot < s->core_nr * SIM_SLOTS_CORE) {
		strbuf_addf(path, "%s/%s.c", s->dir, s->core[slot / SIM_SLOTS_CORE]);
		word = core_words[slot % SIM_SLOTS_CORE];
	} else {
		j = (slot - s->core_nr * SIM_SLOTS_CORE) / SIM_SLOTS_SMALL;
		if (j < s->fillers)
			filler_path(path, s, j);
		else
			strbuf_addstr(path, s->extras.v[j - s->fillers]);
		word = small_words[slot % SIM_SLOTS_SMALL];
	}
	sim_fn_name(fn, s, path->buf, word);
}

int sim_slot_is_built(const struct sim_sub *s, int slot)
{
	int j = (slot - s->core_nr * SIM_SLOTS_CORE) / SIM_SLOTS_SMALL;

	return slot < s->core_nr * SIM_SLOTS_CORE || j >= s->fillers;
}

int sim_text_find_fn(const char *text, const char *fn, size_t *start, size_t *end)
{
	struct strbuf pat = STRBUF_INIT;
	const char *p, *e;
	int error = -1;

	strbuf_addf(&pat, " %s(", fn);
	for (p = strstr(text, pat.buf); p; p = strstr(p + 1, pat.buf)) {
		const char *bol = p;

		while (bol > text && bol[-1] != '\n')
			bol--;
		if (*bol == '\t' || *bol == ' ' || memchr(bol, ';', p - bol))
			continue; /* a call or a declaration, not the definition */
		e = strstr(p, "\n}\n");
		if (!e || memchr(p, ';', strchrnul(p, '\n') - p))
			continue;
		*start = bol - text;
		*end = e + 3 - text;
		error = 0;
		break;
	}
	strbuf_release(&pat);
	return error;
}

void sim_slot_fn(struct strbuf *out, const struct sim_sub *s, const char *fn, const char *body)
{
	strbuf_addf(out, "unsigned long %s(const %s *%s, unsigned long v)\n{\n", fn, s->objtype,
		    s->var);
	strbuf_addf(out, "\tunsigned long r = v;\n\n%s\n\n\treturn r;\n}\n", body);
}

/* The body a slot starts with, derived from its name only. */
static void initial_body(struct strbuf *out, const struct sim_sub *s, const char *fn)
{
	unsigned h = hash(fn);

	strbuf_addf(out, "\tr += %s->%s & %u;", s->var, s->fields[h % 4], 3 + (h >> 4) % 60);
}

static void add_slot(struct strbuf *out, const struct sim_sub *s, const char *path,
		       const char *word, const char *body)
{
	struct strbuf fn = STRBUF_INIT, b = STRBUF_INIT;

	sim_fn_name(&fn, s, path, word);
	if (!body) {
		initial_body(&b, s, fn.buf);
		body = b.buf;
	}
	strbuf_addch(out, '\n');
	sim_slot_fn(out, s, fn.buf, body);
	strbuf_release(&fn);
	strbuf_release(&b);
}

static void file_head(struct strbuf *out, const char *path, const char *what)
{
	strbuf_addf(out, "// SPDX-License-Identifier: GPL-2.0\n/*\n * %s - %s\n */\n", path, what);
	strbuf_addstr(out, "#include \"nb/kernel.h\"\n");
}

void sim_new_file(struct strbuf *out, const struct sim_sub *s, const char *path,
		  const char *what, const char *body_a, const char *body_b)
{
	file_head(out, path, what);
	add_slot(out, s, path, small_words[0], body_a);
	add_slot(out, s, path, small_words[1], body_b);
}

/* ---- the tested function and its unit test, one of four shapes per subsystem ---- */

static int tested_shape(const struct sim_sub *s, int sub_index)
{
	return sub_index % 4;
}

void sim_tested_fn(struct strbuf *name, struct strbuf *good, struct strbuf *bad,
		   struct strbuf *subject, const struct sim_sub *s, int sub_index)
{
	static const char *const names[] = { "pages_for", "ring_next", "in_range", "clamp_prio" };
	int shape = tested_shape(s, sub_index);

	strbuf_reset(name);
	strbuf_addf(name, "%s_%s", s->ident, names[shape]);
	if (good)
		strbuf_reset(good);
	if (bad)
		strbuf_reset(bad);
	if (subject)
		strbuf_reset(subject);
	switch (shape) {
	case 0:
		if (good)
			strbuf_addf(good, "unsigned long %s(unsigned long bytes)\n{\n"
				    "\treturn (bytes + NB_PAGE_SIZE - 1) / NB_PAGE_SIZE;\n}\n",
				    name->buf);
		if (bad)
			strbuf_addf(bad, "unsigned long %s(unsigned long bytes)\n{\n"
				    "\treturn bytes / NB_PAGE_SIZE + 1;\n}\n", name->buf);
		if (subject)
			strbuf_addf(subject, "%s: simplify the page rounding in %s()", s->prefix,
				    name->buf);
		break;
	case 1:
		if (good)
			strbuf_addf(good, "unsigned int %s(unsigned int idx, unsigned int size)\n"
				    "{\n\treturn idx + 1 >= size ? 0 : idx + 1;\n}\n", name->buf);
		if (bad)
			strbuf_addf(bad, "unsigned int %s(unsigned int idx, unsigned int size)\n"
				    "{\n\treturn idx + 1 > size ? 0 : idx + 1;\n}\n", name->buf);
		if (subject)
			strbuf_addf(subject, "%s: do not wrap the ring early in %s()", s->prefix,
				    name->buf);
		break;
	case 2:
		if (good)
			strbuf_addf(good, "int %s(long v, long lo, long hi)\n{\n"
				    "\treturn v >= lo && v <= hi;\n}\n", name->buf);
		if (bad)
			strbuf_addf(bad, "int %s(long v, long lo, long hi)\n{\n"
				    "\treturn v >= lo && v < hi;\n}\n", name->buf);
		if (subject)
			strbuf_addf(subject, "%s: use a half-open range check in %s()", s->prefix,
				    name->buf);
		break;
	default:
		if (good)
			strbuf_addf(good, "int %s(int prio)\n{\n\tif (prio < 0)\n\t\treturn 0;\n"
				    "\tif (prio > NB_MAX_PRIO - 1)\n\t\treturn NB_MAX_PRIO - 1;\n"
				    "\treturn prio;\n}\n", name->buf);
		if (bad)
			strbuf_addf(bad, "int %s(int prio)\n{\n\tif (prio < 0)\n\t\treturn 0;\n"
				    "\tif (prio > NB_MAX_PRIO)\n\t\treturn NB_MAX_PRIO;\n"
				    "\treturn prio;\n}\n", name->buf);
		if (subject)
			strbuf_addf(subject, "%s: clamp to NB_MAX_PRIO in %s()", s->prefix,
				    name->buf);
		break;
	}
}

static void tested_decl(struct strbuf *out, const struct sim_sub *s, int sub_index)
{
	struct strbuf name = STRBUF_INIT, good = STRBUF_INIT;
	char *brace;

	sim_tested_fn(&name, &good, NULL, NULL, s, sub_index);
	brace = strchr(good.buf, '\n');
	strbuf_add(out, good.buf, brace - good.buf);
	strbuf_addstr(out, ";\n");
	strbuf_release(&name);
	strbuf_release(&good);
}

static void test_file(struct strbuf *out, const struct sim_sub *s, int sub_index)
{
	struct strbuf name = STRBUF_INIT;
	const char *f;

	sim_tested_fn(&name, NULL, NULL, NULL, s, sub_index);
	f = name.buf;
	strbuf_addf(out, "// SPDX-License-Identifier: GPL-2.0\n/* Unit tests of %s/. */\n"
		    "#include \"kunit.h\"\n#include \"nb/kernel.h\"\n\n"
		    "static void test_%s(void)\n{\n",
		    s->dir, f);
	switch (tested_shape(s, sub_index)) {
	case 0:
		strbuf_addf(out, "\tKUNIT_EXPECT_EQ(%s(0), 0);\n\tKUNIT_EXPECT_EQ(%s(1), 1);\n"
			    "\tKUNIT_EXPECT_EQ(%s(NB_PAGE_SIZE), 1);\n"
			    "\tKUNIT_EXPECT_EQ(%s(NB_PAGE_SIZE + 1), 2);\n", f, f, f, f);
		break;
	case 1:
		strbuf_addf(out, "\tKUNIT_EXPECT_EQ(%s(0, 8), 1);\n"
			    "\tKUNIT_EXPECT_EQ(%s(6, 8), 7);\n"
			    "\tKUNIT_EXPECT_EQ(%s(7, 8), 0);\n", f, f, f);
		break;
	case 2:
		strbuf_addf(out, "\tKUNIT_EXPECT_EQ(%s(0, 0, 10), 1);\n"
			    "\tKUNIT_EXPECT_EQ(%s(10, 0, 10), 1);\n"
			    "\tKUNIT_EXPECT_EQ(%s(11, 0, 10), 0);\n"
			    "\tKUNIT_EXPECT_EQ(%s(-1, 0, 10), 0);\n", f, f, f, f);
		break;
	default:
		strbuf_addf(out, "\tKUNIT_EXPECT_EQ(%s(-5), 0);\n\tKUNIT_EXPECT_EQ(%s(120), 120);\n"
			    "\tKUNIT_EXPECT_EQ(%s(200), NB_MAX_PRIO - 1);\n", f, f, f);
		break;
	}
	strbuf_addf(out, "}\n\nint main(void)\n{\n\tKUNIT_CASE(test_%s);\n"
		    "\treturn kunit_done(\"%s\");\n}\n", f, s->ident);
	strbuf_release(&name);
}

/* ---- the API of a subsystem: what a semantic conflict changes ---- */

void sim_api_text(struct sim_api_text *t, const struct sim_sub *s, int rename)
{
	unsigned k = 2 + hash(s->ident) % 4;
	const char *nn;

	memset(t, 0, sizeof(*t));
	strbuf_addf(&t->name, "%s_to_units", s->ident);
	if (rename)
		strbuf_addf(&t->new_name, "%s_units_of", s->ident);
	else
		strbuf_addbuf(&t->new_name, &t->name);
	nn = t->new_name.buf;
	strbuf_addf(&t->decl, "unsigned long %s(unsigned long v);\n", t->name.buf);
	strbuf_addf(&t->def, "unsigned long %s(unsigned long v)\n{\n\treturn v << %u;\n}\n",
		    t->name.buf, k);
	strbuf_addf(&t->caller, "\treturn %s(v) + 1;\n", t->name.buf);
	if (rename) {
		strbuf_addf(&t->new_decl, "unsigned long %s(unsigned long v);\n", nn);
		strbuf_addf(&t->new_def, "unsigned long %s(unsigned long v)\n{\n"
			    "\treturn v << %u;\n}\n", nn, k);
		strbuf_addf(&t->new_caller, "\treturn %s(v) + 1;\n", nn);
	} else {
		strbuf_addf(&t->new_decl,
			    "unsigned long %s(unsigned long v, unsigned int shift);\n", nn);
		strbuf_addf(&t->new_def, "unsigned long %s(unsigned long v, unsigned int shift)\n"
			    "{\n\treturn v << shift;\n}\n", nn);
		strbuf_addf(&t->new_caller, "\treturn %s(v, %u) + 1;\n", nn, k);
	}
}

void sim_api_text_release(struct sim_api_text *t)
{
	strbuf_release(&t->name);
	strbuf_release(&t->new_name);
	strbuf_release(&t->decl);
	strbuf_release(&t->def);
	strbuf_release(&t->caller);
	strbuf_release(&t->new_decl);
	strbuf_release(&t->new_def);
	strbuf_release(&t->new_caller);
}

/* ---- whole files ---- */

static void header(struct strbuf *out, const struct sim_sub *s, int sub_index)
{
	struct sim_api_text api;
	int i;

	sim_api_text(&api, s, 0);
	strbuf_addf(out, "/* SPDX-License-Identifier: GPL-2.0 */\n"
		    "#ifndef NB_%s_H\n#define NB_%s_H\n\n", s->ident, s->ident);
	strbuf_addf(out, "%s {\n", s->objtype);
	for (i = 0; i < 4; i++)
		strbuf_addf(out, "\tunsigned long %s;\n", s->fields[i]);
	strbuf_addstr(out, "};\n\n");
	tested_decl(out, s, sub_index);
	strbuf_addbuf(out, &api.decl);
	strbuf_addstr(out, "\n#endif\n");
	sim_api_text_release(&api);
}

static void core_file(struct strbuf *out, const struct sim_sub *s, int sub_index, int fi)
{
	struct strbuf path = STRBUF_INIT, what = STRBUF_INIT, tmp = STRBUF_INIT;
	struct sim_api_text api;
	int i;

	sim_api_text(&api, s, 0);
	strbuf_addf(&path, "%s/%s.c", s->dir, s->core[fi]);
	strbuf_addf(&what, "%s %s support", s->prefix, s->core[fi]);
	file_head(out, path.buf, what.buf);
	if (fi == 0) {
		strbuf_addch(out, '\n');
		sim_tested_fn(&tmp, &what, NULL, NULL, s, sub_index);
		strbuf_addbuf(out, &what);
		strbuf_addch(out, '\n');
		strbuf_addbuf(out, &api.def);
	} else if (fi == 1) {
		strbuf_addf(out, "\nunsigned long %s_%s_account(unsigned long v)\n{\n%s}\n",
			    s->ident, s->core[fi], api.caller.buf);
	}
	for (i = 0; i < SIM_SLOTS_CORE; i++)
		add_slot(out, s, path.buf, core_words[i], NULL);
	sim_api_text_release(&api);
	strbuf_release(&path);
	strbuf_release(&what);
	strbuf_release(&tmp);
}

static const char makefile_text[] =
	"# SPDX-License-Identifier: GPL-2.0\n"
	"# `make` builds ./vmnb, `make test` builds and runs the unit tests.\n"
	"# Folders named opt/ hold optional modules this configuration does not build.\n"
	"CC ?= cc\n"
	"CFLAGS ?= -O0\n"
	"KCFLAGS := -std=gnu11 -Wall -Werror=implicit-function-declaration -Iinclude\n"
	"SRCS := $(sort $(wildcard init/*.c lib/*.c mm/*.c fs/*.c net/*.c kernel/*.c \\\n"
	"\tkernel/*/*.c drivers/*/*.c drivers/*/*/*.c))\n"
	"SRCS := $(filter-out %/opt/%,$(SRCS))\n"
	"OBJS := $(SRCS:.c=.o)\n"
	"LIBOBJS := $(filter-out init/main.o,$(OBJS))\n"
	"HDRS := $(wildcard include/nb/*.h)\n"
	"TESTS := $(patsubst %.c,%,$(sort $(wildcard tests/test_*.c)))\n"
	"TESTOBJS := $(TESTS:=.o)\n"
	"\n"
	"all: vmnb\n"
	"\n"
	"vmnb: $(OBJS)\n"
	"\t@echo \"  LD      $@\"\n"
	"\t@$(CC) -o $@ $(OBJS)\n"
	"\n"
	"%.o: %.c $(HDRS)\n"
	"\t@echo \"  CC      $@\"\n"
	"\t@$(CC) $(KCFLAGS) $(CFLAGS) -c -o $@ $<\n"
	"\n"
	"built-in.a: $(LIBOBJS)\n"
	"\t@rm -f $@ && ar rcs $@ $(LIBOBJS)\n"
	"\n"
	"# A test compiles to an object of its own (-c, like the kernel's), then links.\n"
	"tests/%.o: tests/%.c tests/kunit.h\n"
	"\t@echo \"  CC      $@\"\n"
	"\t@$(CC) $(KCFLAGS) $(CFLAGS) -c -o $@ $<\n"
	"\n"
	"$(TESTS): %: %.o built-in.a\n"
	"\t@echo \"  LD      $@\"\n"
	"\t@$(CC) $(CFLAGS) -o $@ $< built-in.a\n"
	"\n"
	"test: $(TESTS)\n"
	"\t@for t in $(TESTS); do echo \"  KUNIT   $$t\"; ./$$t || exit 1; done\n"
	"\n"
	"clean:\n"
	"\trm -f vmnb built-in.a $(OBJS) $(TESTOBJS) $(TESTS)\n"
	"\n"
	".PHONY: all test clean\n";

const char *const sim_arch[SIM_ARCHS] = { "x86_64", "arm64", "riscv" };

/* The Makefile; a matrix world's takes ARCH and defines NB_ARCH_<ARCH> for it. */
static void makefile(struct strbuf *out, const struct sim_world *w)
{
	const char *kcflags = "KCFLAGS := -std=gnu11 -Wall -Werror=implicit-function-declaration "
			      "-Iinclude\n";
	const char *at = strstr(makefile_text, kcflags);

	if (!w->matrix || !at) {
		strbuf_addstr(out, makefile_text);
		return;
	}
	strbuf_add(out, makefile_text, (size_t)(at - makefile_text));
	strbuf_addstr(out, "# ARCH picks the configuration: x86_64 (default), arm64 or riscv.\n"
			   "ARCH ?= x86_64\n");
	strbuf_addstr(out, "KCFLAGS := -std=gnu11 -Wall -Werror=implicit-function-declaration "
			   "-Iinclude \\\n\t-DNB_ARCH_$(shell echo $(ARCH) | tr a-z A-Z)\n");
	strbuf_addstr(out, at + strlen(kcflags));
}

static const char kunit_text[] =
	"/* SPDX-License-Identifier: GPL-2.0 */\n"
	"/* A tiny KUnit look-alike: expectations print file:line and count failures. */\n"
	"#ifndef NB_KUNIT_H\n#define NB_KUNIT_H\n\n#include <stdio.h>\n\n"
	"static int kunit_failures;\n\n"
	"#define KUNIT_EXPECT_EQ(a, b)\t\t\t\t\t\t\t\\\n"
	"\tdo {\t\t\t\t\t\t\t\t\\\n"
	"\t\tlong long a__ = (long long)(a), b__ = (long long)(b);\t\\\n"
	"\t\tif (a__ != b__) {\t\t\t\t\t\\\n"
	"\t\t\tfprintf(stderr, \"%s:%d: FAIL: %s == %s (got %lld, want %lld)\\n\", \\\n"
	"\t\t\t\t__FILE__, __LINE__, #a, #b, a__, b__);\t\\\n"
	"\t\t\tkunit_failures++;\t\t\t\t\\\n"
	"\t\t}\t\t\t\t\t\t\t\\\n"
	"\t} while (0)\n\n"
	"#define KUNIT_CASE(fn)\t\t\t\t\t\t\t\\\n"
	"\tdo {\t\t\t\t\t\t\t\t\\\n"
	"\t\tint before__ = kunit_failures;\t\t\t\t\\\n"
	"\t\tfn();\t\t\t\t\t\t\t\\\n"
	"\t\tprintf(\"    %s %s\\n\", kunit_failures == before__ ? \"ok\" : \"not ok\", #fn); \\\n"
	"\t} while (0)\n\n"
	"static inline int kunit_done(const char *suite)\n{\n"
	"\tprintf(\"# %s: %s\\n\", suite, kunit_failures ? \"FAILED\" : \"passed\");\n"
	"\treturn kunit_failures ? 1 : 0;\n}\n\n#endif\n";

static const char types_text[] =
	"/* SPDX-License-Identifier: GPL-2.0 */\n#ifndef NB_TYPES_H\n#define NB_TYPES_H\n\n"
	"#include <stddef.h>\n#include <stdint.h>\n\n"
	"#define NB_PAGE_SIZE\t4096UL\n#define NB_MAX_PRIO\t140\n\n"
	"#define min(a, b)\t((a) < (b) ? (a) : (b))\n#define max(a, b)\t((a) > (b) ? (a) : (b))\n"
	"#define ARRAY_SIZE(x)\t(sizeof(x) / sizeof((x)[0]))\n\n#endif\n";

static void params(struct strbuf *out)
{
	static const char *const what[] = {
		"log2 of the default hash table size", "objects moved per batch",
		"default timeout in milliseconds", "retries before giving up",
		"default queue depth", "percentage of a list scanned per pass",
		"minimum free memory in KiB", "pages above the low watermark",
		"backoff between retries in microseconds", "memory zones per node",
	};
	size_t i;

	strbuf_addstr(out, "/* SPDX-License-Identifier: GPL-2.0 */\n"
			   "/* Tunables shared by every subsystem. */\n"
			   "#ifndef NB_PARAMS_H\n#define NB_PARAMS_H\n");
	for (i = 0; i < sim_params_nr; i++)
		strbuf_addf(out, "\n/*\n * %s\n */\n#define %s\t%d\n", what[i], sim_params[i],
			    param_values[i]);
	strbuf_addstr(out, "\n#endif\n");
}

static int emit_file(int (*emit)(void *, const char *, const char *), void *ctx, const char *path,
		  struct strbuf *text)
{
	int error = emit(ctx, path, text->buf);

	strbuf_reset(text);
	return error;
}

static int sub_files(struct sim_world *w, size_t si,
		       int (*emit)(void *, const char *, const char *), void *ctx)
{
	struct sim_sub *s = &w->subs[si];
	struct strbuf text = STRBUF_INIT, path = STRBUF_INIT, what = STRBUF_INIT;
	int fi, k, error = 0;

	for (fi = 0; fi < s->core_nr && !error; fi++) {
		strbuf_reset(&path);
		strbuf_addf(&path, "%s/%s.c", s->dir, s->core[fi]);
		core_file(&text, s, (int)si, fi);
		error = emit_file(emit, ctx, path.buf, &text);
	}
	for (k = 0; k < s->fillers && !error; k++) {
		strbuf_reset(&path);
		strbuf_reset(&what);
		filler_path(&path, s, k);
		strbuf_addf(&what, "optional %s module %d", s->prefix, k);
		sim_new_file(&text, s, path.buf, what.buf, NULL, NULL);
		error = emit_file(emit, ctx, path.buf, &text);
	}
	if (!error) {
		strbuf_reset(&path);
		strbuf_addf(&path, "include/nb/%s.h", s->ident);
		header(&text, s, (int)si);
		error = emit_file(emit, ctx, path.buf, &text);
	}
	if (!error) {
		strbuf_reset(&path);
		strbuf_addf(&path, "tests/test_%s.c", s->ident);
		test_file(&text, s, (int)si);
		error = emit_file(emit, ctx, path.buf, &text);
	}
	strbuf_release(&text);
	strbuf_release(&path);
	strbuf_release(&what);
	return error;
}

static void top_files_text(struct sim_world *w, struct strbuf *kernel_h, struct strbuf *main_c,
			     struct strbuf *readme)
{
	size_t i;

	strbuf_addstr(kernel_h, "/* SPDX-License-Identifier: GPL-2.0 */\n"
				"#ifndef NB_KERNEL_H\n#define NB_KERNEL_H\n\n"
				"#include \"nb/types.h\"\n#include \"nb/params.h\"\n");
	for (i = 0; i < w->subs_nr; i++)
		strbuf_addf(kernel_h, "#include \"nb/%s.h\"\n", w->subs[i].ident);
	strbuf_addstr(kernel_h, "\n#endif\n");
	strbuf_addf(main_c, "// SPDX-License-Identifier: GPL-2.0\n/* init/main.c - boot */\n"
			    "#include <stdio.h>\n#include \"nb/kernel.h\"\n\nint main(void)\n{\n"
			    "\tprintf(\"vmnb: %zu subsystems, page size %%lu, batch %%d\\n\",\n"
			    "\t       NB_PAGE_SIZE, NB_MAX_BATCH);\n\treturn 0;\n}\n", w->subs_nr);
	strbuf_addstr(readme, "A small kernel-shaped C project played by `nextbot sim`.\n\n"
			      "  make        builds ./vmnb\n"
			      "  make test   builds and runs tests/\n\n"
			      "Subsystems:\n");
	for (i = 0; i < w->subs_nr; i++)
		strbuf_addf(readme, "  %-14s %s\n", w->subs[i].dir,
			    w->subs[i].tree ? w->subs[i].tree : "mainline");
}

int sim_project_files(struct sim_world *w,
		      int (*emit)(void *ctx, const char *path, const char *text), void *ctx)
{
	struct strbuf text = STRBUF_INIT, main_c = STRBUF_INIT, readme = STRBUF_INIT;
	size_t i;
	int error;

	top_files_text(w, &text, &main_c, &readme);
	error = emit_file(emit, ctx, "include/nb/kernel.h", &text);
	if (!error)
		error = emit_file(emit, ctx, "init/main.c", &main_c);
	if (!error)
		error = emit_file(emit, ctx, "README", &readme);
	if (!error) {
		makefile(&text, w);
		error = emit_file(emit, ctx, "Makefile", &text);
	}
	if (!error) {
		strbuf_addstr(&text, "*.o\n*.a\n/vmnb\n/tests/test_*\n!/tests/test_*.c\n");
		error = emit_file(emit, ctx, ".gitignore", &text);
	}
	if (!error) {
		strbuf_addstr(&text, kunit_text);
		error = emit_file(emit, ctx, "tests/kunit.h", &text);
	}
	if (!error) {
		strbuf_addstr(&text, types_text);
		error = emit_file(emit, ctx, "include/nb/types.h", &text);
	}
	if (!error) {
		params(&text);
		error = emit_file(emit, ctx, "include/nb/params.h", &text);
	}
	for (i = 0; i < w->subs_nr && !error; i++)
		error = sub_files(w, i, emit, ctx);
	strbuf_release(&text);
	strbuf_release(&main_c);
	strbuf_release(&readme);
	return error;
}
