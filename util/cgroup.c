/* Per-command cgroups (v2, or v1's memory and pids): limits, events, cleanup. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/cgroup.h"
#include "util/error.h"
#include "util/log.h"
#include "util/strvec.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define KILL_ROUNDS 300          /* 10 ms each: 3 s for stragglers to die */
#define RMDIR_ROUNDS 100

static pthread_once_t once = PTHREAD_ONCE_INIT;
static enum cgroup_kind host_kind;
static char *parent[2];          /* where the commands' cgroups are made */
static struct strbuf host_why = STRBUF_INIT;
static unsigned long seq;

const char *cgroup_kind_name(enum cgroup_kind k)
{
	return k == CGROUP_V2 ? "v2" : k == CGROUP_V1 ? "v1 (memory, pids)" : "none";
}

static int read_small(struct strbuf *out, const char *path)
{
	strbuf_reset(out);
	return strbuf_read_file(out, path, 65536);
}

static int write_str(const char *path, const char *text)
{
	size_t len = strlen(text);
	int fd = open(path, O_WRONLY | O_CLOEXEC), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, text, len) == (ssize_t)len;
	if (close(fd) < 0)
		ok = 0;
	return ok ? 0 : -1;
}

static int has_word(const char *list, const char *word)
{
	size_t n = strlen(word);
	const char *p = list;

	while ((p = strstr(p, word))) {
		if ((p == list || p[-1] == ' ' || p[-1] == ',' || p[-1] == '\n') &&
		    (!p[n] || p[n] == ' ' || p[n] == ',' || p[n] == '\n'))
			return 1;
		p += n;
	}
	return 0;
}

/*
 * The mount point and root of the hierarchy that is cgroup2 (`controller` NULL) or
 * the v1 one holding `controller`, from /proc/self/mountinfo.
 */
static int find_mount(const char *controller, char **mnt, char **root)
{
	struct strbuf mi = STRBUF_INIT;
	char *line, *save = NULL;
	int found = 0;

	if (read_small(&mi, "/proc/self/mountinfo") < 0)
		return 0;
	for (line = strtok_r(mi.buf, "\n", &save); line && !found;
	     line = strtok_r(NULL, "\n", &save)) {
		char r[4096], m[4096], fstype[64], super[1024];
		const char *dash = strstr(line, " - ");

		if (!dash || sscanf(line, "%*s %*s %*s %4095s %4095s", r, m) != 2 ||
		    sscanf(dash + 3, "%63s %*s %1023s", fstype, super) != 2)
			continue;
		if (controller ? !strcmp(fstype, "cgroup") && has_word(super, controller)
			       : !strcmp(fstype, "cgroup2")) {
			*mnt = xstrdup(m);
			*root = xstrdup(r);
			found = 1;
		}
	}
	strbuf_release(&mi);
	return found;
}

/* Our cgroup in that hierarchy ("0::/x" for v2, "N:a,memory:/x" for v1). */
static char *own_path(const char *controller)
{
	struct strbuf cg = STRBUF_INIT;
	char *line, *save = NULL, *found = NULL;

	if (read_small(&cg, "/proc/self/cgroup") < 0)
		return NULL;
	for (line = strtok_r(cg.buf, "\n", &save); line && !found;
	     line = strtok_r(NULL, "\n", &save)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

		if (!c2)
			continue;
		*c2 = 0;
		if (controller ? has_word(c1 + 1, controller) : !strcmp(line, "0") && !c1[1])
			found = xstrdup(c2 + 1);
	}
	strbuf_release(&cg);
	return found;
}

/* mount point + our path (relative to the mount's root). */
static char *our_dir(const char *controller)
{
	char *mnt = NULL, *root = NULL, *path = own_path(controller), *dir = NULL;
	const char *rel;

	if (path && find_mount(controller, &mnt, &root)) {
		rel = path;
		if (strcmp(root, "/") && !strncmp(path, root, strlen(root)))
			rel = path + strlen(root);
		dir = xstrfmt("%s%s%s", mnt, *rel == '/' ? "" : "/", rel);
		while (strlen(dir) > 1 && dir[strlen(dir) - 1] == '/')
			dir[strlen(dir) - 1] = 0;
	}
	free(mnt);
	free(root);
	free(path);
	return dir;
}

/* 1 when a cgroup can be made (and removed) under `dir`. */
static int can_create(const char *dir)
{
	char *probe = xstrfmt("%s/nextbot-%ld-probe", dir, (long)getpid());
	int ok = mkdir(probe, 0755) == 0 || errno == EEXIST;

	if (ok)
		rmdir(probe);
	free(probe);
	return ok;
}

static int setup_v2(void)
{
	char *base = our_dir(NULL), *p = NULL, *leaf = NULL;
	struct strbuf sb = STRBUF_INIT;
	int ok = 0;

	if (!base)
		return 0;
	p = xstrfmt("%s/cgroup.controllers", base);
	if (read_small(&sb, p) < 0 || !has_word(sb.buf, "memory") || !has_word(sb.buf, "pids")) {
		strbuf_addf(&host_why, "cgroup v2 at %s has no memory and pids controllers; ",
			    base);
		goto done;
	}
	free(p);
	p = xstrfmt("%s/cgroup.subtree_control", base);
	if (read_small(&sb, p) == 0 && has_word(sb.buf, "memory") && has_word(sb.buf, "pids")) {
		ok = can_create(base);
	} else {
		/*
		 * "No internal processes": the controllers can be given to child cgroups
		 * only once nextbot itself has left this one, for a leaf of its own.
		 */
		char pid[32];

		leaf = xstrfmt("%s/nextbot", base);
		snprintf(pid, sizeof(pid), "%ld", (long)getpid());
		free(p);
		p = xstrfmt("%s/cgroup.procs", leaf);
		ok = (mkdir(leaf, 0755) == 0 || errno == EEXIST) && write_str(p, pid) == 0;
		free(p);
		p = xstrfmt("%s/cgroup.subtree_control", base);
		ok = ok && write_str(p, "+memory +pids") == 0 && can_create(base);
	}
	if (ok)
		parent[0] = xstrdup(base);
	else
		strbuf_addf(&host_why, "cgroup v2 at %s is not writable (%s); ", base,
			    strerror(errno));
done:
	strbuf_release(&sb);
	free(p);
	free(leaf);
	free(base);
	return ok;
}

static int setup_v1(void)
{
	char *mem = our_dir("memory"), *pids = our_dir("pids");
	int ok = mem && pids && can_create(mem) && can_create(pids);

	if (ok) {
		parent[0] = mem;
		parent[1] = pids;
		return 1;
	}
	if (mem || pids)
		strbuf_addf(&host_why,
			    "cgroup v1 memory (%s) and pids (%s) are not both writable; ",
			    mem ? mem : "none", pids ? pids : "none");
	free(mem);
	free(pids);
	return 0;
}

static void setup(void)
{
	if (setup_v2()) {
		host_kind = CGROUP_V2;
		strbuf_reset(&host_why);
		strbuf_addf(&host_why, "cgroup v2 under %s", parent[0]);
	} else if (setup_v1()) {
		host_kind = CGROUP_V1;
		strbuf_reset(&host_why);
		strbuf_addf(&host_why, "cgroup v1 under %s and %s", parent[0], parent[1]);
	} else {
		host_kind = CGROUP_NONE;
		strbuf_rtrim(&host_why);
		if (host_why.len && host_why.buf[host_why.len - 1] == ';')
			strbuf_setlen(&host_why, host_why.len - 1);
		if (!host_why.len)
			strbuf_addstr(&host_why, "no cgroup hierarchy with memory and pids");
	}
}

enum cgroup_kind cgroup_available(struct strbuf *why)
{
	pthread_once(&once, setup);
	if (why)
		strbuf_addbuf(why, &host_why);
	return host_kind;
}

static void set_limit(const char *dir, const char *file, long long value)
{
	char *p = xstrfmt("%s/%s", dir, file), num[32];

	snprintf(num, sizeof(num), "%lld", value);
	if (write_str(p, num) < 0 && errno != ENOENT)
		log_warn("cgroup: cannot write %s: %s", p, strerror(errno));
	free(p);
}

int cgroup_create(struct cgroup *cg, long long memory, long processes)
{
	enum cgroup_kind kind = cgroup_available(NULL);
	unsigned long n = __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED);
	int i, nr = kind == CGROUP_V1 ? 2 : 1;

	*cg = (struct cgroup)CGROUP_INIT;
	if (kind == CGROUP_NONE)
		return 0;
	cg->kind = kind;
	for (i = 0; i < nr; i++) {
		char *procs;

		cg->dir[i] = xstrfmt("%s/nextbot-%ld-%lu", parent[i], (long)getpid(), n);
		if (mkdir(cg->dir[i], 0755) < 0 && errno != EEXIST) {
			int e = errno;

			cgroup_destroy(cg);
			errno = e;
			return nb_error_errno(NB_ERROR, "cannot create cgroup");
		}
		procs = xstrfmt("%s/cgroup.procs", cg->dir[i]);
		cg->procs_fd[i] = open(procs, O_WRONLY | O_CLOEXEC);
		free(procs);
		if (cg->procs_fd[i] < 0) {
			int e = errno;

			cgroup_destroy(cg);
			errno = e;
			return nb_error_errno(NB_ERROR, "cannot open a cgroup's cgroup.procs");
		}
	}
	cg->memory = memory;
	cg->processes = processes;
	if (kind == CGROUP_V2) {
		if (memory > 0) {
			set_limit(cg->dir[0], "memory.max", memory);
			/* swap would let a command go past the limit, slowly */
			set_limit(cg->dir[0], "memory.swap.max", 0);
		}
		if (processes > 0)
			set_limit(cg->dir[0], "pids.max", processes);
	} else {
		if (memory > 0) {
			set_limit(cg->dir[0], "memory.limit_in_bytes", memory);
			set_limit(cg->dir[0], "memory.memsw.limit_in_bytes", memory);
		}
		if (processes > 0)
			set_limit(cg->dir[1], "pids.max", processes);
	}
	return 0;
}

int cgroup_join(const struct cgroup *cg)
{
	char buf[24], *p = buf + sizeof(buf);
	long pid = (long)getpid();
	int i;

	/* by hand: no stdio after fork */
	do {
		*--p = (char)('0' + pid % 10);
		pid /= 10;
	} while (pid);
	for (i = 0; i < 2; i++)
		if (cg->procs_fd[i] >= 0 &&
		    write(cg->procs_fd[i], p, (size_t)(buf + sizeof(buf) - p)) < 0)
			return -1;
	return 0;
}

void cgroup_close_procs(struct cgroup *cg)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (cg->procs_fd[i] >= 0)
			close(cg->procs_fd[i]);
		cg->procs_fd[i] = -1;
	}
}

/* The number after `key` in a "key value" file (memory.events, pids.events, …). */
static unsigned long event(const char *dir, const char *file, const char *key)
{
	struct strbuf sb = STRBUF_INIT;
	char *p = xstrfmt("%s/%s", dir, file);
	unsigned long v = 0;
	const char *at;

	if (read_small(&sb, p) == 0) {
		if (!key)
			v = strtoul(sb.buf, NULL, 10);
		else
			for (at = sb.buf; (at = strstr(at, key)); at += strlen(key))
				if ((at == sb.buf || at[-1] == '\n') && at[strlen(key)] == ' ') {
					v = strtoul(at + strlen(key) + 1, NULL, 10);
					break;
				}
	}
	strbuf_release(&sb);
	free(p);
	return v;
}

void cgroup_events(const struct cgroup *cg, struct cgroup_events *out)
{
	memset(out, 0, sizeof(*out));
	if (cg->kind == CGROUP_V2) {
		out->oom_kills = event(cg->dir[0], "memory.events", "oom_kill");
		out->memory_max = event(cg->dir[0], "memory.events", "max");
		out->pids_max = event(cg->dir[0], "pids.events", "max");
	} else if (cg->kind == CGROUP_V1) {
		out->oom_kills = event(cg->dir[0], "memory.oom_control", "oom_kill");
		out->memory_max = event(cg->dir[0], "memory.failcnt", NULL);
		out->pids_max = event(cg->dir[1], "pids.events", "max");
	}
}

/* SIGKILLs every process listed in `dir`/cgroup.procs; 1 if there were any. */
static int kill_listed(const char *dir)
{
	struct strbuf sb = STRBUF_INIT;
	char *p = xstrfmt("%s/cgroup.procs", dir), *s, *end;
	int any = 0;

	if (read_small(&sb, p) == 0)
		for (s = sb.buf;; s = end) {
			long pid = strtol(s, &end, 10);

			if (end == s)
				break;
			if (pid > 0) {
				kill((pid_t)pid, SIGKILL);
				any = 1;
			}
		}
	strbuf_release(&sb);
	free(p);
	return any;
}

void cgroup_destroy(struct cgroup *cg)
{
	struct timespec tick = { 0, 10000000L };
	int i, round;

	cgroup_close_procs(cg);
	for (i = 0; i < 2; i++) {
		char *kill_file;

		if (!cg->dir[i])
			continue;
		kill_file = xstrfmt("%s/cgroup.kill", cg->dir[i]);
		if (cg->kind != CGROUP_V2 || write_str(kill_file, "1") < 0)
			for (round = 0; round < KILL_ROUNDS && kill_listed(cg->dir[i]); round++)
				nanosleep(&tick, NULL);
		free(kill_file);
		for (round = 0; rmdir(cg->dir[i]) < 0 && errno == EBUSY && round < RMDIR_ROUNDS;
		     round++)
			nanosleep(&tick, NULL);
		if (round == RMDIR_ROUNDS)
			log_warn("cgroup: %s still holds a process that does not die", cg->dir[i]);
		free(cg->dir[i]);
		cg->dir[i] = NULL;
	}
	cg->kind = CGROUP_NONE;
}
