/*
 * `nextbot boot-test`: boots a built kernel under QEMU, as KernelCI and 0-day do, with
 * a small initramfs made here from busybox-static whose /init prints the marker and
 * reboots (QEMU runs with -no-reboot: a reboot ends it, a panic too with panic=-1).
 * The serial console is the verdict: the marker is a pass; a panic, an oops or no
 * marker by the timeout is a failure, said with the console's last lines.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bot/cli/cli_int.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/runcmd.h"
#include "util/strbuf.h"
#include "util/strvec.h"
#include "util/xalloc.h"
#include "util/banned.h"

static const char usage[] =
	"usage: nextbot boot-test [--kernel PATH] [--timeout SECONDS] [--qemu CMD]\n";

#define BOOT_MARKER "NEXTBOT-BOOT-OK"
#define BOOT_TIMEOUT_S 300
#define BOOT_QEMU "qemu-system-x86_64"
#define BOOT_BUSYBOX "/bin/busybox"
#define BOOT_TAIL 25 /* console lines shown with a failure */

/* ---- the verdict, from the console alone ---- */

/* First line of `text` holding `needle`, before `end`; NULL if none. */
static const char *line_with(const char *text, const char *end, const char *needle)
{
	const char *at = strstr(text, needle);

	if (!at || at >= end)
		return NULL;
	while (at > text && at[-1] != '\n')
		at--;
	return at;
}

static const char *earlier(const char *a, const char *b)
{
	return !a || (b && b < a) ? b : a;
}

static const char *const panics[] = { "Kernel panic - not syncing", NULL };
static const char *const oopses[] = { "Oops:", "BUG: ", "general protection fault",
				      "WARNING: CPU:", "Unable to handle kernel", NULL };

enum boot_verdict boot_verdict(const char *console, int timed_out, struct strbuf *why)
{
	const char *marker = strstr(console, BOOT_MARKER);
	const char *end = marker ? marker : console + strlen(console);
	const char *line = NULL;
	enum boot_verdict v = BOOT_PASS;
	size_t i;

	for (i = 0; panics[i]; i++)
		line = earlier(line, line_with(console, end, panics[i]));
	if (line) {
		v = BOOT_PANIC;
	} else {
		for (i = 0; oopses[i]; i++) /* the first one the console shows */
			line = earlier(line, line_with(console, end, oopses[i]));
		if (line)
			v = BOOT_OOPS;
	}
	if (v == BOOT_PASS && !marker)
		v = timed_out ? BOOT_TIMEOUT : BOOT_NO_MARKER;
	strbuf_reset(why);
	switch (v) {
	case BOOT_PASS:
		strbuf_addstr(why, "booted: the init of the initramfs ran (" BOOT_MARKER ")");
		break;
	case BOOT_PANIC:
	case BOOT_OOPS:
		strbuf_addstr(why, v == BOOT_PANIC ? "kernel panic: " : "kernel oops: ");
		strbuf_add(why, line, strcspn(line, "\r\n"));
		break;
	case BOOT_TIMEOUT:
		strbuf_addstr(why, "timeout: no " BOOT_MARKER " on the console");
		break;
	default:
		strbuf_addstr(why, "QEMU exited without " BOOT_MARKER " on the console");
		break;
	}
	return v;
}

/* ---- the initramfs: a newc cpio written here ---- */

static void cpio_pad(struct strbuf *out)
{
	while (out->len % 4)
		strbuf_addch(out, '\0');
}

static void cpio_entry(struct strbuf *out, const char *name, unsigned mode, unsigned rdev_major,
		       unsigned rdev_minor, const void *data, size_t len)
{
	static unsigned ino = 300000;

	strbuf_addf(out, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08zX%08X", ino++,
		    mode, 0, 0, 1, 0, (unsigned)len, 0, 0, rdev_major, rdev_minor,
		    strlen(name) + 1, 0);
	strbuf_addstr(out, name);
	strbuf_addch(out, '\0');
	cpio_pad(out);
	strbuf_add(out, data, len);
	cpio_pad(out);
}

static const char init_script[] = "#!/bin/sh\n"
				  "/bin/busybox echo " BOOT_MARKER "\n"
				  "/bin/busybox reboot -f\n";

int boot_initramfs(const char *path, const char *busybox)
{
	struct strbuf out = STRBUF_INIT, bb = STRBUF_INIT;
	int error;

	if (strbuf_read_file(&bb, busybox, 64 << 20) < 0) {
		error = nb_error_errno(NB_ENOTFOUND, "boot-test: %s (Debian: apt-get install "
				       "busybox-static)", busybox);
		goto done;
	}
	cpio_entry(&out, "dev", 040755, 0, 0, NULL, 0);
	cpio_entry(&out, "dev/console", 020600, 5, 1, NULL, 0);
	cpio_entry(&out, "bin", 040755, 0, 0, NULL, 0);
	cpio_entry(&out, "bin/busybox", 0100755, 0, 0, bb.buf, bb.len);
	cpio_entry(&out, "bin/sh", 0120777, 0, 0, "busybox", 7);
	cpio_entry(&out, "proc", 040755, 0, 0, NULL, 0);
	cpio_entry(&out, "init", 0100755, 0, 0, init_script, strlen(init_script));
	cpio_entry(&out, "TRAILER!!!", 0, 0, 0, NULL, 0);
	error = file_write_atomic(path, out.buf, out.len);
done:
	strbuf_release(&out);
	strbuf_release(&bb);
	return error;
}

/* ---- running QEMU ---- */

/*
 * KVM when /dev/kvm opens for reading and writing here (the box shows it only when
 * runner.devices lists it), else TCG.
 */
static int kvm_usable(void)
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

static void qemu_argv(struct strvec *av, const char *qemu, const char *kernel,
		      const char *initrd, int kvm)
{
	const char *p = qemu;

	while (*p) { /* CMD: words split at blanks */
		size_t n = strcspn(p, " \t");

		if (n)
			strvec_pushf(av, "%.*s", (int)n, p);
		p += n;
		p += strspn(p, " \t");
	}
	strvec_pushl(av, "-kernel", kernel, "-initrd", initrd, "-append",
		     "console=ttyS0 earlycon=uart8250,io,0x3f8,115200 panic=-1 oops=panic",
		     "-m", "256M", "-display", "none", "-monitor", "none", "-serial", "stdio",
		     "-no-reboot", NULL);
	if (kvm)
		strvec_pushl(av, "-accel", "kvm", "-cpu", "host", NULL);
	else
		strvec_pushl(av, "-accel", "tcg", NULL);
}

/* The last `n` lines of `text`. */
static const char *tail_lines(const char *text, int n)
{
	const char *p = text + strlen(text);

	while (p > text && (p[-1] == '\n' || p[-1] == '\r'))
		p--;
	while (p > text && n > 0)
		if (*--p == '\n')
			n--;
	return p == text ? p : p + 1;
}

struct boot_args {
	const char *kernel, *qemu;
	long timeout;
};

static int parse_args(struct boot_args *a, int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			return -1;
		if (!strcmp(argv[i], "--kernel"))
			a->kernel = v;
		else if (!strcmp(argv[i], "--qemu"))
			a->qemu = v;
		else if (!strcmp(argv[i], "--timeout")) {
			if (str_to_long(v, &a->timeout) < 0 || a->timeout < 1)
				return -1;
		} else
			return -1;
		i++;
	}
	return 0;
}

static int boot_run(struct runcmd_result *r, const struct boot_args *a, const char *initrd)
{
	struct runcmd_opts o = RUNCMD_OPTS_INIT;
	struct strvec av = STRVEC_INIT;
	int kvm = kvm_usable(), error;

	qemu_argv(&av, a->qemu, a->kernel, initrd, kvm);
	o.argv = (const char *const *)av.v;
	o.inherit_env = 1;
	o.timeout = (double)a->timeout;
	o.output_cap = 8 << 20;
	printf("boot-test: %s, %s, timeout %lds\n", a->kernel,
	       kvm ? "KVM" : "TCG (no usable /dev/kvm)", a->timeout);
	fflush(stdout);
	error = runcmd_run(r, &o);
	strvec_clear(&av);
	return error;
}

int cmd_boot_test(const struct cli_ctx *ctx, int argc, char **argv)
{
	struct boot_args a = { "arch/x86/boot/bzImage", BOOT_QEMU, BOOT_TIMEOUT_S };
	struct runcmd_result r = RUNCMD_RESULT_INIT;
	struct strbuf why = STRBUF_INIT;
	const char *tmp = getenv("TMPDIR");
	char *dir = NULL, *initrd = NULL;
	enum boot_verdict v;
	int code = EXIT_FAILED;

	(void)ctx;
	if (parse_args(&a, argc, argv) < 0) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	if (access(a.kernel, R_OK) < 0) {
		fprintf(stderr, "nextbot: boot-test: %s: %s\n", a.kernel, strerror(errno));
		return EXIT_FAILED;
	}
	dir = xstrfmt("%s/nextbot-boot.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		fprintf(stderr, "nextbot: boot-test: %s: %s\n", dir, strerror(errno));
		goto done;
	}
	initrd = xstrfmt("%s/initramfs.cpio", dir);
	if (boot_initramfs(initrd, BOOT_BUSYBOX) < 0 || boot_run(&r, &a, initrd) < 0) {
		fprintf(stderr, "nextbot: boot-test: %s\n", nb_error_last());
		goto done;
	}
	if (r.exec_failed) {
		fprintf(stderr, "nextbot: boot-test: cannot run '%s' (Debian: apt-get install "
			"qemu-system-x86)\n", a.qemu);
		goto done;
	}
	v = boot_verdict(r.output.buf, r.timed_out, &why);
	if (v != BOOT_PASS)
		printf("%s\n", tail_lines(r.output.buf, BOOT_TAIL));
	if (v == BOOT_TIMEOUT)
		strbuf_addf(&why, " after %lds", a.timeout);
	printf("boot-test: %s: %s\n", v == BOOT_PASS ? "PASS" : "FAIL", why.buf);
	code = v == BOOT_PASS ? EXIT_DONE : EXIT_FAILED;
done:
	if (initrd)
		unlink(initrd);
	if (dir)
		rmdir(dir);
	free(initrd);
	free(dir);
	strbuf_release(&why);
	runcmd_result_release(&r);
	return code;
}
