/* Reading a compiler command line: which compiles the cache may take, and how they split. */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "cc/cc_int.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* How one option is treated. */
enum kind {
	K_BAD,      /* not cacheable: the real compiler runs as asked */
	K_PRE,      /* preprocessing only: the -E pass in the box */
	K_BOTH,     /* both passes (and the key) */
	K_C,        /* -c */
	K_O,        /* -o FILE */
	K_SOURCE,   /* the one source file */
	K_DEP,      /* writes the dependency file: the -E pass only, never sent */
};

/* Preprocessing options whose value may follow as the next argument, or be joined. */
static const char *const pre_value[] = {
	"-include", "-imacros", "-iquote", "-isystem", "-idirafter", "-iprefix", "-iwithprefix",
	"-iwithprefixbefore", "-isysroot", "-I", "-D", "-U", NULL,
};

/* The dependency file's options with a value. */
static const char *const dep_value[] = { "-MF", "-MT", "-MQ", NULL };

/* Preprocessing options of one word. */
static const char *const pre_flag[] = {
	"-H", "-nostdinc", "-nostdinc++", "-undef", "-remap", NULL,
};

/* The dependency file's options of one word. */
static const char *const dep_flag[] = { "-MD", "-MMD", "-MP", "-MG", NULL };

/* Options of one word for both passes. */
static const char *const both_flag[] = {
	"-w", "-pedantic", "-pedantic-errors", "-ansi", "-pthread", "-pipe", "-p", "-pg",
	"-trigraphs", NULL,
};

/*
 * -f options (after "no-") that read or write files of their own, load code, change
 * what the compile reads, or make no object: the service could not give what the
 * box would (a profile, a plugin, a dump).  Any other -f option is plain text to
 * the compiler: its effect is in the key.
 */
static const char *const f_denied[] = {
	"plugin", "dump", "profile", "auto-profile", "branch-probabilities", "callgraph-info",
	"stack-usage", "save-optimization-record", "opt-info", "coverage", "test-coverage",
	"sanitize-blacklist", "sanitize-ignorelist", "sanitize-coverage-allowlist",
	"sanitize-coverage-blocklist", "sanitize-coverage-whitelist",
	"sanitize-coverage-blacklist", "xray", "record-gcc-switches", "record-command-line",
	"modules", "module-", "deps-", "directives-only", "preprocessed", "syntax-only",
	"diagnostics-format", "time-report", "mem-report", "stats", "compare-debug", "pch",
	"embed-bitcode", "crash-diagnostics", "report-bug", "debug-cpp", "use-cuid",
	"input-charset", "create-profile", "lto-dump", "ipa-clones", "callgraph",
	NULL,
};

/*
 * What -Wa, may pass to the assembler: plain switches, no file.  kbuild's 32-bit
 * x86 compiles (tinyconfig) all say -Wa,-mtune=generic32.
 */
static const char *const wa_allowed[] = {
	"--noexecstack", "--64", "--32", "-mrelax-relocations=", "--gdwarf", "-gdwarf",
	"--compress-debug-sections", "-mx86-used-note=", "-mtune=", "-march=", NULL,
};

static int in_list(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (!strcmp(*list, s))
			return 1;
	return 0;
}

static int starts_in_list(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (!strncmp(*list, s, strlen(*list)))
			return 1;
	return 0;
}

/* -Wa,a,b: every item a switch the assembler takes without a file. */
static enum kind assembler_opts(const char *list, const char **why)
{
	struct strbuf item = STRBUF_INIT;
	enum kind k = K_BOTH;

	while (k == K_BOTH) {
		size_t len = strcspn(list, ",");

		strbuf_reset(&item);
		strbuf_add(&item, list, len);
		if (!starts_in_list(wa_allowed, item.buf) || strchr(item.buf, '/')) {
			*why = "an assembler option the cache does not know (-Wa,)";
			k = K_BAD;
		}
		if (!list[len])
			break;
		list += len + 1;
	}
	strbuf_release(&item);
	return k;
}

static enum kind f_option(const char *a, const char **why)
{
	const char *name = a + 2, *eq;

	if (!strncmp(name, "no-", 3))
		name += 3;
	if (starts_in_list(f_denied, name)) {
		*why = "an option that reads or writes files of its own, or makes no object";
		return K_BAD;
	}
	/* an unknown option whose value is a path may read that file: not in the key */
	eq = strchr(name, '=');
	if (eq && strchr(eq, '/') && !strstr(name, "prefix-map=")) {
		*why = "an option naming a file";
		return K_BAD;
	}
	return K_BOTH;
}

/* -Wp,a,b: for the preprocessor; one that writes the dependency file (-MD,FILE) is K_DEP. */
static enum kind wp_option(const char *a)
{
	const char *p;

	for (p = a + 3; p; p = strchr(p + 1, ','))
		if (!strncmp(p, ",-M", 3))
			return K_DEP;
	return K_PRE;
}

/* The kind of a -W… option. */
static enum kind w_option(const char *a, const char **why)
{
	if (!strncmp(a, "-Wp,", 4))
		return wp_option(a);
	if (!strncmp(a, "-Wa,", 4))
		return assembler_opts(a + 4, why);
	if (!strncmp(a, "-Wl,", 4)) {
		*why = "a linker option";
		return K_BAD;
	}
	return K_BOTH;
}

/*
 * The kind of argv[0] (with argv[1] the next argument or NULL); *take says how many
 * arguments it spans.
 */
static enum kind classify(const char *a, const char *next, int *take, const char **why)
{
	size_t i;

	*take = 1;
	if (a[0] != '-' || !a[1]) {
		if (a[0] == '@') {
			*why = "a response file (@FILE)";
			return K_BAD;
		}
		if (!a[0] || (a[0] == '-' && !a[1])) {
			*why = "the source on standard input";
			return K_BAD;
		}
		return K_SOURCE;
	}
	if (!strcmp(a, "-c"))
		return K_C;
	if (!strncmp(a, "-o", 2)) {
		if (!a[2]) {
			*take = 2;
			if (!next) {
				*why = "-o without a file";
				return K_BAD;
			}
		}
		return K_O;
	}
	if (in_list(pre_flag, a))
		return K_PRE;
	if (in_list(dep_flag, a))
		return K_DEP;
	for (i = 0; dep_value[i]; i++) {
		if (strncmp(a, dep_value[i], 3))
			continue;
		if (!a[3]) {
			*take = 2;
			if (!next) {
				*why = "an option without its value";
				return K_BAD;
			}
		}
		return K_DEP;
	}
	if (!strcmp(a, "-Xpreprocessor") || !strcmp(a, "--sysroot")) {
		*take = 2;
		return next ? K_PRE : K_BAD;
	}
	if (!strncmp(a, "--sysroot=", 10))
		return K_PRE;
	for (i = 0; pre_value[i]; i++) {
		size_t len = strlen(pre_value[i]);

		if (strncmp(a, pre_value[i], len))
			continue;
		if (!a[len]) {
			*take = 2;
			if (!next) {
				*why = "an option without its value";
				return K_BAD;
			}
		}
		return K_PRE;
	}
	if (in_list(both_flag, a))
		return K_BOTH;
	if (!strcmp(a, "--param")) {
		*take = 2;
		if (!next) {
			*why = "--param without its value";
			return K_BAD;
		}
		return K_BOTH;
	}
	if (!strncmp(a, "--param=", 8) || !strncmp(a, "-std=", 5) || !strncmp(a, "-O", 2) ||
	    !strncmp(a, "-m", 2))
		return K_BOTH;
	if (!strncmp(a, "-g", 2)) {
		if (!strncmp(a, "-gsplit-dwarf", 13)) {
			*why = "-gsplit-dwarf writes a second file";
			return K_BAD;
		}
		return K_BOTH;
	}
	if (!strncmp(a, "-W", 2))
		return w_option(a, why);
	if (!strncmp(a, "-f", 2) && a[2])
		return f_option(a, why);
	*why = "an option the cache does not know";
	return K_BAD;
}

/* A C or C++ source by its suffix, as gcc reads it. */
static int source_suffix(const char *src)
{
	static const char *const ok[] = { ".c", ".cc", ".cp", ".cxx", ".cpp", ".CPP", ".c++",
					  ".C", NULL };
	const char *slash = strrchr(src, '/'), *dot = strrchr(src, '.');

	return dot && dot > (slash ? slash + 1 : src) && in_list(ok, dot);
}

/*
 * gcc's own names for -MD's file and target when -MF, -MT, -MQ are not given: the
 * -o file with its suffix replaced by .d (without -o: the source's base name), and
 * the -o file as the target.  The -E pass must be told them: it has no -o.
 */
static void dep_names(struct cc_args *a, int has_mf, int has_target)
{
	const char *base = a->output, *slash, *dot;
	struct strbuf d = STRBUF_INIT;

	if (!has_mf) {
		if (!base) {
			base = (slash = strrchr(a->source, '/')) ? slash + 1 : a->source;
			dot = strrchr(base, '.');
		} else {
			slash = strrchr(base, '/');
			dot = strrchr(slash ? slash : base, '.');
		}
		strbuf_add(&d, base, dot && dot != base ? (size_t)(dot - base) : strlen(base));
		strbuf_addstr(&d, ".d");
		strvec_pushl(&a->pre, "-MF", d.buf, NULL);
	}
	if (!has_target && a->output)
		strvec_pushl(&a->pre, "-MQ", a->output, NULL);
	strbuf_release(&d);
}

static int not_cacheable(struct cc_args *a, const char *why)
{
	a->why = why;
	return 0;
}

int cc_args_parse(struct cc_args *out, int argc, const char *const *argv)
{
	int i, take, compile = 0, has_mf = 0, has_target = 0, outputs = 0;
	const char *why = NULL;

	for (i = 0; i < argc; i += take) {
		const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
		enum kind k = classify(a, next, &take, &why);

		switch (k) {
		case K_BAD:
			return not_cacheable(out, why);
		case K_C:
			compile = 1;
			continue;
		case K_O:
			out->output = take == 2 ? next : a + 2;
			outputs++;
			continue;
		case K_SOURCE:
			if (out->source)
				return not_cacheable(out, "more than one source file");
			out->source = a;
			break;
		case K_DEP:
			out->deps |= !strcmp(a, "-MD") || !strcmp(a, "-MMD");
			out->pp_deps |= !strncmp(a, "-Wp,", 4);
			has_mf |= !strncmp(a, "-MF", 3);
			has_target |= !strncmp(a, "-MT", 3) || !strncmp(a, "-MQ", 3);
			break;
		case K_PRE:
		case K_BOTH:
			break;
		}
		strvec_push(&out->pre, a);
		if (take == 2)
			strvec_push(&out->pre, next);
		if (k == K_DEP)
			continue;
		strvec_push(&out->send, a);
		if (take == 2)
			strvec_push(&out->send, next);
	}
	if (!compile)
		return not_cacheable(out, "not a compile to an object (-c)");
	if (!out->source)
		return not_cacheable(out, "no source file");
	if (outputs > 1)
		return not_cacheable(out, "more than one -o");
	if (out->output && (!strcmp(out->output, "-") || !strncmp(out->output, "/dev/", 5)))
		return not_cacheable(out, "the object goes to a device");
	if (!source_suffix(out->source))
		return not_cacheable(out, "not a C or C++ source");
	if (out->deps)
		dep_names(out, has_mf, has_target);
	return 1;
}

void cc_args_release(struct cc_args *a)
{
	strvec_clear(&a->pre);
	strvec_clear(&a->send);
	a->source = a->output = a->why = NULL;
}

int cc_args_check_send(const char *const *args, size_t n, const char **why)
{
	size_t i;
	int take, sources = 0;

	for (i = 0; i < n; i += (size_t)take) {
		const char *next = i + 1 < n ? args[i + 1] : NULL;
		enum kind k = classify(args[i], next, &take, why);

		if (k == K_SOURCE && !source_suffix(args[i])) {
			*why = "not a C or C++ source";
			return -1;
		}
		sources += k == K_SOURCE;
		if (k != K_PRE && k != K_BOTH && k != K_SOURCE) {
			if (k != K_BAD)
				*why = "an option the service adds or never takes";
			return -1;
		}
	}
	if (sources != 1) {
		*why = "not one source file";
		return -1;
	}
	return 0;
}

int cc_compiler_name(const char *name)
{
	static const char *const cores[] = { "cc", "c89", "c99", "gcc", "g++", "c++", "clang",
					     "clang++", NULL };
	size_t len = strlen(name), end = len, i;
	const char *core;

	if (!len || len > 128 || name[0] == '-' || name[0] == '.')
		return 0;
	for (i = 0; i < len; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.+-",
			    name[i]))
			return 0;
	/* a version suffix: -12, -14.0 */
	for (i = len; i > 0 && strchr("0123456789.", name[i - 1]); i--)
		;
	if (i < len && i > 1 && name[i - 1] == '-' && name[i] != '.')
		end = i - 1;
	for (core = name + end; core > name && core[-1] != '-'; core--)
		;
	for (i = 0; cores[i]; i++)
		if (strlen(cores[i]) == (size_t)(name + end - core) &&
		    !strncmp(core, cores[i], strlen(cores[i])))
			break;
	if (!cores[i])
		return 0;
	return 1;
}

/* An identifier character: the words below are whole only between others. */
static int ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '$';
}

int cc_text_timed(const char *text, size_t len)
{
	static const char *const words[] = { "__DATE__", "__TIME__", "__TIMESTAMP__", NULL };
	const char *p = text, *end = text + len;

	/* every such word begins with "__" and a capital D or T */
	while ((p = memmem(p, (size_t)(end - p), "__", 2))) {
		size_t i;

		for (i = 0; words[i]; i++) {
			size_t wl = strlen(words[i]);

			if ((size_t)(end - p) >= wl && !memcmp(p, words[i], wl) &&
			    (p == text || !ident_char(p[-1])) &&
			    (p + wl == end || !ident_char(p[wl])))
				return 1;
		}
		p += 2;
		while (p < end && *p == '_')
			p++;
	}
	return 0;
}

const char *cc_pp_option(const char *real)
{
	const char *slash = strrchr(real, '/');

	return strstr(slash ? slash + 1 : real, "clang") ? "-frewrite-includes"
							 : "-fdirectives-only";
}

int cc_is_elf(const char *path)
{
	char head[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int elf = fd >= 0 && read(fd, head, 4) == 4 && !memcmp(head, "\x7f" "ELF", 4);

	if (fd >= 0)
		close(fd);
	return elf;
}
