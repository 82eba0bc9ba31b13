/* Room on the disk for a night's commands: workers reclaimed, the step that filled it named. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "bot/night/night.h"
#include "cc/cc.h"
#include "merge/repo/repo.h"
#include "merge/worker/worker.h"
#include "notify/notice.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/log.h"
#include "util/size.h"
#include "util/strbuf.h"
#include "util/strvec.h"
#include "util/xalloc.h"
#include "util/banned.h"

/* Fewer free inodes than this is a full disk too (a build makes many small files). */
#define MIN_FREE_INODES 1000
/* The notes of a night that go to the operator begin with one of these. */
#define NOTE_DISK "disk: "
#define NOTE_INFRA "infrastructure problem"

struct disk {
	unsigned long long avail;       /* bytes free to us */
	unsigned long inodes;           /* inodes free; ULONG_MAX: no such limit */
};

/* The workdir's disk; 0, or -1 when it cannot be looked at (then it is not short). */
static int disk_look(struct disk *out, const char *path)
{
	struct statvfs sv;

	if (statvfs(path, &sv) < 0)
		return -1;
	out->avail = (unsigned long long)sv.f_bavail * sv.f_frsize;
	out->inodes = sv.f_files ? (unsigned long)sv.f_favail : (unsigned long)-1;
	return 0;
}

static int disk_short(const struct disk *d, const struct config *cfg)
{
	return d->avail < (unsigned long long)cfg->runner.min_free ||
	       d->inodes < MIN_FREE_INODES;
}

static void disk_describe(struct strbuf *out, const struct disk *d)
{
	size_format(out, (long long)d->avail);
	strbuf_addstr(out, " free");
	if (d->inodes != (unsigned long)-1)
		strbuf_addf(out, ", %lu inodes", d->inodes);
}

/* A worker holds its git dir or its tree; anything else in workers/ is a cell's folder. */
static int is_worker(const char *dir)
{
	char *git = xstrfmt("%s/git", dir), *tree = xstrfmt("%s/tree", dir);
	int yes = file_is_dir(git) || file_is_dir(tree);

	free(git);
	free(tree);
	return yes;
}

/* The workers under workers/ and its cells' folders (never through a link). */
static void list_workers(struct strvec *out, const char *dir, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	while (d && (de = readdir(d))) {
		char *path;
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		path = xstrfmt("%s/%s", dir, de->d_name);
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
			if (is_worker(path))
				strvec_push(out, path);
			else if (!depth)
				list_workers(out, path, 1);
		}
		free(path);
	}
	if (d)
		closedir(d);
}

/*
 * The commit checked out in `worker` (its git dir's HEAD, written by the checkout
 * child): 40 hex into `out`, or "" when it cannot be told.  Never through a link.
 */
static void worker_head(char out[NB_OID_HEXSZ + 1], const char *worker)
{
	char *path = xstrfmt("%s/git/HEAD", worker), buf[64];
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	size_t i;

	*out = '\0';
	if (fd >= 0)
		close(fd);
	free(path);
	for (i = 0; n >= NB_OID_HEXSZ && i < NB_OID_HEXSZ && strchr("0123456789abcdef", buf[i]);
	     i++)
		;
	if (i == NB_OID_HEXSZ) {
		memcpy(out, buf, NB_OID_HEXSZ);
		out[NB_OID_HEXSZ] = '\0';
	}
}

/* Whether `a` is later than `b`. */
static int later(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

/*
 * The command that ran last tonight on `hex`, by its log in the night's runs/
 * (step-NNN-<name>-<12 hex>[-pristine].log), into `out`; nothing when none did.
 */
static void last_command(struct strbuf *out, const char *runs_dir, const char *hex)
{
	DIR *d = runs_dir ? opendir(runs_dir) : NULL;
	struct dirent *de;
	struct strbuf tail = STRBUF_INIT;
	struct timespec newest = { 0, 0 };

	strbuf_addf(&tail, "-%.12s", hex);
	while (d && (de = readdir(d))) {
		const char *name = de->d_name, *at = strstr(name, tail.buf), *start;
		char *path;
		struct stat st;

		if (strncmp(name, "step-", 5) || !at || !(start = strchr(name + 5, '-')) ||
		    start >= at)
			continue;
		path = xstrfmt("%s/%s", runs_dir, name);
		if (lstat(path, &st) == 0 && !later(&newest, &st.st_mtim)) {
			newest = st.st_mtim;
			strbuf_reset(out);
			strbuf_add(out, start + 1, at - start - 1);
		}
		free(path);
	}
	if (d)
		closedir(d);
	strbuf_release(&tail);
}

/* "`<command>` of <commit> ("<subject>") in workers/<w>" into `out`. */
static void describe_worker(struct strbuf *out, struct night *n, const char *worker)
{
	struct strbuf cmd = STRBUF_INIT;
	size_t skip = strlen(n->cfg->workdir);
	char hex[NB_OID_HEXSZ + 1];

	worker_head(hex, worker);
	if (*hex)
		last_command(&cmd, n->runs_dir, hex);
	if (cmd.len)
		strbuf_addf(out, "`%s`", cmd.buf);
	else
		strbuf_addstr(out, "the commands");
	if (*hex) {
		struct nb_oid id;
		char *subject = n->repo && nb_oid_parse(&id, hex) == 0
					? repo_commit_subject(n->repo, &id) : xstrdup("");

		strbuf_addf(out, " of %.12s", hex);
		if (*subject)
			strbuf_addf(out, " (\"%s\")", subject);
		free(subject);
	}
	strbuf_addf(out, " in %s", !strncmp(worker, n->cfg->workdir, skip) && worker[skip] == '/'
					   ? worker + skip + 1 : worker);
	strbuf_release(&cmd);
}

/*
 * Removes every worker (each is checked out anew at its next use); the one whose
 * removal freed the most is described in `filler` ("" when none freed anything).
 */
static void reclaim_workers(struct strbuf *filler, struct night *n)
{
	struct strvec workers = STRVEC_INIT;
	unsigned long long most = 0;
	size_t i;

	list_workers(&workers, n->workers_dir, 0);
	for (i = 0; i < workers.nr; i++) {
		struct strbuf who = STRBUF_INIT;
		struct disk before, after;
		int looked = disk_look(&before, n->cfg->workdir) == 0;

		/* described before it goes: its HEAD is in it */
		describe_worker(&who, n, workers.v[i]);
		if (file_remove_tree(workers.v[i]) < 0)
			log_warn("reclaiming the disk: %s", nb_error_last());
		else if (looked && disk_look(&after, n->cfg->workdir) == 0 &&
			 after.avail > before.avail && after.avail - before.avail > most) {
			most = after.avail - before.avail;
			strbuf_reset(filler);
			strbuf_addbuf(filler, &who);
			strbuf_addstr(filler, " held ");
			size_format(filler, (long long)most);
		}
		strbuf_release(&who);
	}
	strvec_clear(&workers);
}

/* The compiler cache's store, which gives way first; NULL: none tonight. */
static const char *cache_dir;

/* Frees what the store must for `floor`; the note of it in `note` (may be NULL). */
static void cache_give_way(struct strbuf *note, unsigned long long floor)
{
	long long freed;

	if (!cache_dir || !(freed = cc_store_give_way(cache_dir, (long long)floor)))
		return;
	if (note) {
		strbuf_addstr(note, "; the compiler cache gave way first (");
		size_format(note, freed);
		strbuf_addstr(note, " removed)");
	}
	log_info("the disk was short: the compiler cache gave way (%lld bytes removed)", freed);
}

/* worker_disk_relief_set()'s: before a worker is judged short. */
static void cache_relief(unsigned long long floor)
{
	cache_give_way(NULL, floor);
}

/*
 * When the disk is short: the compiler cache's store trimmed first; then, if it
 * is still short, every worker removed, and a note naming the one that
 * held the most (`filler` gets its words).  Returns -1 when the disk was not
 * short (nothing done), 0 when there is room now, 1 when it is still short (`d`:
 * what is left).
 */
static int reclaim(struct strbuf *filler, struct disk *d, struct night *n)
{
	struct strbuf note = STRBUF_INIT;
	int still;

	if (disk_look(d, n->cfg->workdir) < 0 || !disk_short(d, n->cfg))
		return -1;
	strbuf_addf(&note, NOTE_DISK "the disk of %s was short (", n->cfg->workdir);
	disk_describe(&note, d);
	strbuf_addstr(&note, ", runner.min_free ");
	size_format(&note, n->cfg->runner.min_free);
	strbuf_addstr(&note, ")");
	cache_give_way(&note, (unsigned long long)n->cfg->runner.min_free);
	if (disk_look(d, n->cfg->workdir) == 0 && !disk_short(d, n->cfg)) {
		strbuf_addstr(&note, "; enough (");
		disk_describe(&note, d);
		strbuf_addstr(&note, " now)");
		log_warn("%s", note.buf);
		strvec_push(&n->run->notes, note.buf);
		strbuf_release(&note);
		return 0;
	}
	reclaim_workers(filler, n);
	if (filler->len)
		strbuf_addf(&note, ": %s", filler->buf);
	still = disk_look(d, n->cfg->workdir) == 0 && disk_short(d, n->cfg);
	strbuf_addstr(&note, still ? "; the workers were removed and it is still short ("
				   : "; the workers were removed (");
	disk_describe(&note, d);
	strbuf_addstr(&note, still ? ")" : " now)");
	log_warn("%s", note.buf);
	strvec_push(&n->run->notes, note.buf);
	strbuf_release(&note);
	return still;
}

/* What the workers said of the disk since the last look (merge/worker/worker.h): notes. */
static void take_events(struct night *n)
{
	struct strvec events = STRVEC_INIT;
	size_t i;

	worker_disk_events_take(&events);
	for (i = 0; i < events.nr; i++)
		strvec_pushf(&n->run->notes, NOTE_DISK "%s", events.v[i]);
	strvec_clear(&events);
}

void night_disk_begin(struct night *n)
{
	worker_min_free_set((unsigned long long)n->cfg->runner.min_free);
	cache_dir = n->cfg->runner.cache.on ? n->cfg->runner.cache.dir : NULL;
	worker_disk_relief_set(cache_dir ? cache_relief : NULL);
	night_disk_reclaim(n, NULL);
}

int night_disk_reclaim(struct night *n, char **why)
{
	struct strbuf filler = STRBUF_INIT, sb = STRBUF_INIT;
	struct disk d;
	int still;

	take_events(n);
	still = reclaim(&filler, &d, n) > 0;

	if (still && why) {
		strbuf_addf(&sb, "the disk of %s is full (", n->cfg->workdir);
		disk_describe(&sb, &d);
		strbuf_addstr(&sb, ") with every worker removed");
		*why = strbuf_detach(&sb, NULL);
	}
	strbuf_release(&filler);
	strbuf_release(&sb);
	return still;
}

void night_disk_finish(struct night *n)
{
	struct notice_operator_notes o = { n->opts->date, n->tag, NULL, 0 };
	struct strvec notes = STRVEC_INIT;
	size_t i;

	/* a full disk never outlives the night that filled it */
	night_disk_reclaim(n, NULL);
	for (i = 0; i < n->run->notes.nr; i++)
		if (!strncmp(n->run->notes.v[i], NOTE_DISK, strlen(NOTE_DISK)) ||
		    !strncmp(n->run->notes.v[i], NOTE_INFRA, strlen(NOTE_INFRA)))
			strvec_push(&notes, n->run->notes.v[i]);
	o.notes = (const char *const *)notes.v;
	o.notes_nr = notes.nr;
	if (!n->opts->no_notify && notice_queue_operator_notes(&n->notices.settings, &o) < 0)
		log_warn("the operator's mail: %s", nb_error_last());
	strvec_clear(&notes);
}
