/*
 * A kernel world (`nextbot sim init DIR --kernel SRC`): mainline is the real Linux
 * source as one commit, and the feeds (mm-stable, mm-next, mm-unstable watched, sched,
 * printk) carry a fixed script of small edits of real files that tinyconfig compiles,
 * authored by the people the source's own MAINTAINERS names for them, with one defect
 * of each kind: a build break, a boot failure, a semantic conflict between two trees,
 * a flaky boot.  Day d of the script is what `sim advance` plays; the world's state is
 * its day, mainline and the patch-ids seen.
 *
 * The source is imported once (git's own `add`, its blobs in one pack of
 * DIR/sim/store.git, which every remote borrows through alternates); each day's
 * branches are rebuilt from mainline by the script, so the same source gives the same
 * commits.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "merge/git/git_int.h"
#include "merge/git/patchid_int.h"
#include "feeds/sim.h"
#include "feeds/world.h"
#include "util/error.h"
#include "util/fileutil.h"
#include "util/runcmd.h"
#include "util/xalloc.h"
#include "util/banned.h"

enum { KT_MAINLINE, KT_MM_STABLE, KT_MM_NEXT, KT_MM_UNSTABLE, KT_SCHED, KT_PRINTK, KT_NR };

static const struct ktree {
	const char *name, *repo, *branch;
	const char *section; /* the MAINTAINERS section whose M: commits and L: hears */
} ktrees[KT_NR] = {
	{ "mainline", "mainline", "master", NULL },
	{ "mm-stable", "mm", "mm-stable", "MEMORY MANAGEMENT" },
	{ "mm-next", "mm", "mm-next", "MEMORY MANAGEMENT" },
	{ "mm-unstable", "mm", "mm-unstable", "MEMORY MANAGEMENT" },
	{ "sched", "sched", "sched", "SCHEDULER" },
	{ "printk", "printk", "printk", "PRINTK" },
};

/* What a scripted patch is: a defect's culprit or partner, or nothing wrong. */
enum kkind { KK_NORMAL, KK_BUILD, KK_BOOT, KK_SEMANTIC, KK_PARTNER, KK_FLAKY };

struct kedit {
	const char *path, *old_text, *new_text;
};

struct kpatch {
	int tree, day, drop_day; /* live from `day` until `drop_day` (0: never dropped) */
	enum kkind kind;
	int partner;             /* a semantic culprit's partner: index in kscript */
	const char *section;     /* the author: person `who` (M: and R: lines, in order) */
	int who;
	const char *subject, *body;
	struct kedit edits[5];
};

#define PRINTK_TAIL "\tret = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, \"printk:online\",\n" \
		    "\t\t\t\t\tconsole_cpu_notify, NULL);\n\tWARN_ON(ret < 0);\n" \
		    "\tprintk_sysctl_init();\n\treturn 0;\n}\nlate_initcall(printk_late_init);"

static const struct kpatch kscript[] = {
	/* 0 */ { KT_MM_NEXT, 0, 0, KK_NORMAL, -1, "PAGE CACHE", 0,
		  "mm/filemap: add a blank line after the declaration in filemap_check_errors()",
		  "checkpatch asks for a blank line between the declarations and the\n"
		  "code of a function.  No functional change.",
		  { { "mm/filemap.c",
		      "\tint ret = 0;\n\t/* Check for outstanding write errors */\n",
		      "\tint ret = 0;\n\n\t/* Check for outstanding write errors */\n" } } },
	/* 1 */ { KT_MM_NEXT, 0, 0, KK_NORMAL, -1, "MEMORY MANAGEMENT", 0,
		  "mm/page_alloc: separate the declarations in nr_free_zone_pages()",
		  "Keep a blank line between the loop's declarations and its code, as\n"
		  "the rest of the file does.  No functional change.",
		  { { "mm/page_alloc.c", "\t\tunsigned long high = high_wmark_pages(zone);\n"
					 "\t\tif (size > high)\n",
		      "\t\tunsigned long high = high_wmark_pages(zone);\n\n"
		      "\t\tif (size > high)\n" } } },
	/* 2 */ { KT_MM_NEXT, 0, 1, KK_BUILD, -1, "PAGE CACHE", 0,
		  "mm/filemap: name the error code err in filemap_check_errors()",
		  "Every other helper of the file calls the error it returns err.  Do\n"
		  "the same here.  No functional change.",
		  { { "mm/filemap.c",
		      "\t\tret = -EIO;\n\treturn ret;\n}\n"
		      "EXPORT_SYMBOL(filemap_check_errors);",
		      "\t\terr = -EIO;\n\treturn err;\n}\n"
		      "EXPORT_SYMBOL(filemap_check_errors);" } } },
	/* 3 */ { KT_SCHED, 0, 0, KK_NORMAL, -1, "SCHEDULER", 4,
		  "sched/core: say what the linker check in sched_init() checks",
		  "The comment only says the linker must not get it wrong.  Say what it\n"
		  "must get right: the order of the scheduling classes.",
		  { { "kernel/sched/core.c", "\t/* Make sure the linker didn't screw up */\n",
		      "\t/* The scheduling classes must be laid out in priority order */\n" } } },
	/* 4 */ { KT_SCHED, 0, 0, KK_NORMAL, -1, "SCHEDULER", 9,
		  "sched/core: document sched_post_fork()",
		  "Say when sched_post_fork() runs: once the new task is visible, so\n"
		  "that what needs its final state can be finished there.",
		  { { "kernel/sched/core.c", "void sched_post_fork(struct task_struct *p)\n{\n",
		      "/* Called once the new task is visible to the rest of the system. */\n"
		      "void sched_post_fork(struct task_struct *p)\n{\n" } } },
	/* 5 */ { KT_MM_UNSTABLE, 0, 0, KK_NORMAL, -1, "MEMORY MANAGEMENT", 0,
		  "mm/util: fix a typo in the comment of vm_memory_committed()",
		  "\"worst case\" reads better as \"the worst case\".",
		  { { "mm/util.c", " * could be about 30~40 microseconds.\n",
		      " * could be about 30 to 40 microseconds.\n" } } },
	/* 6 */ { KT_PRINTK, 1, 2, KK_BOOT, -1, "PRINTK", 3,
		  "printk: do not boot on without the console hotplug callbacks",
		  "Without its CPU hotplug callbacks printk cannot flush the consoles of a\n"
		  "CPU that goes away.  Stop right there instead of warning and booting on.",
		  { { "kernel/printk/printk.c", PRINTK_TAIL,
		      "\tret = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, \"printk:online\",\n"
		      "\t\t\t\t\tconsole_cpu_notify, NULL);\n\tif (ret)\n"
		      "\t\tpanic(\"printk: no CPU hotplug callbacks: %d\\n\", ret);\n"
		      "\tprintk_sysctl_init();\n\treturn 0;\n}\n"
		      "late_initcall(printk_late_init);" } } },
	/* 7 */ { KT_MM_NEXT, 2, 0, KK_PARTNER, -1, "MEMORY MANAGEMENT", 0,
		  "mm: rename vm_memory_committed() to vm_committed_pages()",
		  "The function returns a number of pages, not bytes of memory: say so in\n"
		  "its name, and convert its callers.",
		  { { "include/linux/mman.h", "unsigned long vm_memory_committed(void);\n",
		      "unsigned long vm_committed_pages(void);\n" },
		    { "mm/util.c", "unsigned long vm_memory_committed(void)\n{\n"
				   "\treturn percpu_counter_sum_positive(&vm_committed_as);\n}\n"
				   "EXPORT_SYMBOL_GPL(vm_memory_committed);",
		      "unsigned long vm_committed_pages(void)\n{\n"
		      "\treturn percpu_counter_sum_positive(&vm_committed_as);\n}\n"
		      "EXPORT_SYMBOL_GPL(vm_committed_pages);" },
		    { "fs/proc/meminfo.c", "\tcommitted = vm_memory_committed();\n",
		      "\tcommitted = vm_committed_pages();\n" },
		    { "drivers/hv/hv_balloon.c", "\treturn vm_memory_committed() +\n",
		      "\treturn vm_committed_pages() +\n" },
		    { "drivers/hv/hv_balloon.c", "\t\t\t     vm_memory_committed(), dm->",
		      "\t\t\t     vm_committed_pages(), dm->" } } },
	/* 8 */ { KT_PRINTK, 2, 3, KK_SEMANTIC, 7, "PRINTK", 1,
		  "printk: report the committed memory at late init",
		  "When a boot ends in an out-of-memory report the log rarely says how\n"
		  "much was committed by then.  Say it once printk is fully set up.",
		  { { "kernel/printk/printk.c", PRINTK_TAIL,
		      "\tret = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, \"printk:online\",\n"
		      "\t\t\t\t\tconsole_cpu_notify, NULL);\n\tWARN_ON(ret < 0);\n"
		      "\tprintk_sysctl_init();\n"
		      "\tpr_info(\"printk: %lu pages committed\\n\", vm_memory_committed());\n"
		      "\treturn 0;\n}\nlate_initcall(printk_late_init);" },
		    { "kernel/printk/printk.c", "#include <linux/memblock.h>\n",
		      "#include <linux/memblock.h>\n#include <linux/mman.h>\n" } } },
	/* 9 */ { KT_PRINTK, 3, 4, KK_FLAKY, -1, "PRINTK", 1,
		  "printk: check that the boot consoles have drained at late init",
		  "A boot console still writing at late init loses what it holds when it\n"
		  "is unregistered.  Check the clock against the drain deadline.",
		  { { "kernel/printk/printk.c", PRINTK_TAIL,
		      "\tret = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, \"printk:online\",\n"
		      "\t\t\t\t\tconsole_cpu_notify, NULL);\n\tWARN_ON(ret < 0);\n"
		      "\tprintk_sysctl_init();\n"
		      "\tif (!((local_clock() >> 10) & 3))\n"
		      "\t\tpanic(\"printk: boot consoles did not drain in time\\n\");\n"
		      "\treturn 0;\n}\nlate_initcall(printk_late_init);" } } },
};
#define KSCRIPT_NR (sizeof(kscript) / sizeof(kscript[0]))

/*
 * The tinyconfig a boot needs: 64-bit (busybox-static is x86-64), a serial console, an
 * initramfs, ELF and scripts.
 */
#define KBUILD_CMD "make -s tinyconfig >/dev/null && ./scripts/config -e 64BIT -e PRINTK -e TTY " \
		   "-e SERIAL_8250 -e SERIAL_8250_CONSOLE -e EARLY_PRINTK -e BLK_DEV_INITRD " \
		   "-e BINFMT_ELF -e BINFMT_SCRIPT -e PROC_FS && make -s olddefconfig && " \
		   "make -s -j2 bzImage"

struct kworld {
	char *dir, *src;
	int day;
	struct nb_oid mainline;
	struct nb_oid tips[KT_NR];
	struct nb_oid commits[KSCRIPT_NR];
	struct nb_patchid pids[KSCRIPT_NR];
	struct strbuf maintainers; /* mainline's MAINTAINERS */
	git_repository *store;
	struct sim_world sw;       /* the mem-pack store (feeds/odb.c) needs one */
};

/* ---- MAINTAINERS: the people and lists of a section ---- */

/* The `n`th line of `section` starting with one of `tags` ("MR", "L"), trimmed. */
static int section_line(struct strbuf *out, const char *text, const char *section,
			const char *tags, int n)
{
	struct strbuf head = STRBUF_INIT;
	const char *at, *line;
	int found = -1;

	strbuf_addf(&head, "\n%s\n", section);
	at = strstr(text, head.buf);
	strbuf_release(&head);
	if (!at)
		return -1;
	for (line = at + strlen(section) + 2; *line && *line != '\n';) {
		size_t len = strcspn(line, "\n");

		if (len > 3 && line[1] == ':' && line[2] == '\t' && strchr(tags, line[0]) &&
		    n-- == 0) {
			/* a person ends at '>', a list at its first blank: "(moderated …)" */
			const char *gt = memchr(line, '>', len);
			size_t end = gt ? (size_t)(gt - line) - 2 : strcspn(line + 3, " \n");

			strbuf_reset(out);
			strbuf_add(out, line + 3, end);
			found = 0;
			break;
		}
		line += len + (line[len] == '\n');
	}
	return found;
}

/* Name and address of "Name <addr>" into person (static buffers of the caller). */
static int split_person(struct sim_person *p, struct strbuf *name, struct strbuf *email,
			const char *who)
{
	const char *lt = strchr(who, '<'), *gt = lt ? strchr(lt, '>') : NULL;

	if (!lt || !gt || lt == who)
		return nb_error_set(NB_EINVALID, "sim: MAINTAINERS: not a person: %s", who);
	strbuf_reset(name);
	strbuf_add(name, who, (size_t)(lt - who));
	strbuf_rtrim(name);
	strbuf_reset(email);
	strbuf_add(email, lt + 1, (size_t)(gt - lt - 1));
	p->name = name->buf;
	p->email = email->buf;
	return 0;
}

static int person(struct strbuf *out, struct kworld *k, const char *section, int who)
{
	if (section_line(out, k->maintainers.buf, section, "MR", who) < 0)
		return nb_error_set(NB_ENOTFOUND, "sim: MAINTAINERS has no person %d in %s",
				    who, section);
	return 0;
}

/* ---- the source, imported once ---- */

static int run_git(const char *const *argv, const char *const *env, const char *what)
{
	struct runcmd_opts o = RUNCMD_OPTS_INIT;
	struct runcmd_result r = RUNCMD_RESULT_INIT;
	int error;

	o.argv = argv;
	o.env = env;
	o.inherit_env = 1;
	if ((error = runcmd_run(&r, &o)) < 0)
		goto done;
	if (r.exit_code) {
		strbuf_trim(&r.output);
		error = nb_error_set(NB_ERROR, "sim: %s failed (exit %d): %.400s", what,
				     r.exit_code, r.output.buf);
	}
done:
	runcmd_result_release(&r);
	return error;
}

/* SRC a tarball: unpacked into DIR/sim/src (its first folder level dropped). */
static int unpack(struct kworld *k, char **tree)
{
	char *dst = xstrfmt("%s/sim/src", k->dir);
	const char *argv[] = { "tar", "-xf", k->src, "-C", dst, "--strip-components=1", NULL };
	int error;

	if ((error = file_mkdir_p(dst, 0755)) < 0 || (error = run_git(argv, NULL, "tar")) < 0) {
		free(dst);
		return error;
	}
	*tree = dst;
	return 0;
}

/* Mainline: every file of the source in one commit, its objects written by git. */
static int import_source(struct kworld *k, git_oid *tree_oid)
{
	char *store = xstrfmt("%s/sim/store.git", k->dir), *index = NULL, *env_index = NULL;
	char *tree = NULL;
	struct stat st;
	int error, tarball;

	if (stat(k->src, &st) < 0)
		return nb_error_errno(NB_EINVALID, "sim: --kernel %s", k->src);
	tarball = !S_ISDIR(st.st_mode);
	if (tarball && (error = unpack(k, &tree)) < 0)
		goto done;
	if (!tarball)
		tree = xstrdup(k->src);
	index = xstrfmt("%s/sim/import.index", k->dir);
	env_index = xstrfmt("GIT_INDEX_FILE=%s", index);
	{
		const char *env[] = { env_index, NULL };
		/* every blob streamed into one pack (bulk check-in, no delta search),
		   not 75,000 loose files; a night's first fetch still packs mainline's
		   objects anew (localfetch copies whole packs only for long histories) */
		const char *add[] = { "git", "--git-dir", store, "--work-tree", tree, "-c",
				      "core.bigFileThreshold=1", "-c", "pack.compression=1",
				      "-c", "core.autocrlf=false", "add", "-A", "-f", ".", NULL };
		const char *wt[] = { "git", "--git-dir", store, "write-tree", NULL };
		struct runcmd_opts o = RUNCMD_OPTS_INIT;
		struct runcmd_result r = RUNCMD_RESULT_INIT;

		if ((error = run_git(add, env, "git add of the kernel source")) < 0)
			goto done;
		o.argv = wt;
		o.env = env;
		o.inherit_env = 1;
		o.merge_stderr = 0;
		if ((error = runcmd_run(&r, &o)) < 0 || r.exit_code ||
		    git_oid_fromstrn(tree_oid, r.output.buf, NB_OID_HEXSZ) < 0)
			error = error < 0 ? error : nb_error_set(NB_ERROR, "sim: git write-tree");
		runcmd_result_release(&r);
	}
done:
	if (index)
		unlink(index);
	if (tarball && tree)
		file_remove_tree(tree);
	free(store);
	free(index);
	free(env_index);
	free(tree);
	return error;
}

static int read_maintainers(struct kworld *k)
{
	strbuf_reset(&k->maintainers);
	return sim_git_read(&k->maintainers, k->store, k->mainline.hex, "MAINTAINERS");
}

static int commit_mainline(struct kworld *k, const git_oid *tree)
{
	struct sim_person linus = { "Linus Torvalds", "torvalds@linux-foundation.org" };
	const char *base = strrchr(k->src, '/');
	char *msg = xstrfmt("Import %s\n\nThe kernel source of a `nextbot sim init --kernel` "
			    "world, as one commit.\n", base ? base + 1 : k->src);
	int error = sim_git_commit(&k->mainline, k->store, &(struct sim_commit_spec){
					   .tree = tree, .author = &linus,
					   .author_time = SIM_EPOCH, .committer = &linus,
					   .commit_time = SIM_EPOCH, .message = msg });

	free(msg);
	return error;
}

/* ---- a day's branches ---- */

static int live(const struct kpatch *p, int day)
{
	return p->day <= day && (!p->drop_day || day < p->drop_day);
}

static void msgid(struct strbuf *out, size_t i, const char *email)
{
	strbuf_addf(out, "20250106080000.%zu-1-%s", i + 1, email);
}

static int commit_patch(struct kworld *k, size_t i, struct nb_oid *tip)
{
	const struct kpatch *p = &kscript[i];
	struct strbuf who = STRBUF_INIT, mnt = STRBUF_INIT, an = STRBUF_INIT, ae = STRBUF_INIT;
	struct strbuf mn = STRBUF_INIT, me = STRBUF_INIT, msg = STRBUF_INIT, id = STRBUF_INIT;
	struct sim_op ops[5];
	struct sim_person author, committer;
	git_commit *c = NULL;
	git_oid oid, tree;
	const char *parents[1] = { tip->hex };
	long long when = SIM_EPOCH + (long long)p->day * 86400 + 8 * 3600 + (long long)i * 60;
	size_t n;
	int error;

	for (n = 0; n < 5 && p->edits[n].path; n++)
		ops[n] = (struct sim_op){ (char *)p->edits[n].path, (char *)p->edits[n].old_text,
					  (char *)p->edits[n].new_text };
	if ((error = person(&who, k, p->section, p->who)) < 0 ||
	    (error = person(&mnt, k, ktrees[p->tree].section, 0)) < 0 ||
	    (error = split_person(&author, &an, &ae, who.buf)) < 0 ||
	    (error = split_person(&committer, &mn, &me, mnt.buf)) < 0 ||
	    (error = merge_oid_to_git(&oid, tip)) < 0)
		goto done;
	if (git_commit_lookup(&c, k->store, &oid) < 0) {
		error = merge_git_fail("sim: %s", ktrees[p->tree].name);
		goto done;
	}
	if ((error = sim_git_apply(&tree, k->store, git_commit_tree_id(c), ops, n)) < 0)
		goto done;
	msgid(&id, i, author.email);
	strbuf_addf(&msg, "%s\n\n%s\n\nSigned-off-by: %s\nLink: https://lore.kernel.org/r/%s\n",
		    p->subject, p->body, who.buf, id.buf);
	if (strcmp(who.buf, mnt.buf))
		strbuf_addf(&msg, "Signed-off-by: %s\n", mnt.buf);
	error = sim_git_commit(&k->commits[i], k->store, &(struct sim_commit_spec){
				       .tree = &tree, .parents = parents, .parents_nr = 1,
				       .author = &author, .author_time = when,
				       .committer = &committer, .commit_time = when + 3600,
				       .message = msg.buf });
	if (!error) {
		*tip = k->commits[i];
		if (merge_oid_to_git(&oid, tip) == 0)
			merge_patch_id_oid(&k->pids[i], k->store, &oid);
	}
done:
	git_commit_free(c);
	strbuf_release(&who);
	strbuf_release(&mnt);
	strbuf_release(&an);
	strbuf_release(&ae);
	strbuf_release(&mn);
	strbuf_release(&me);
	strbuf_release(&msg);
	strbuf_release(&id);
	return error;
}

/* Builds every branch as the script has it on k->day. */
static int build_day(struct kworld *k)
{
	int t, error = 0;
	size_t i;

	for (t = 0; t < KT_NR && !error; t++) {
		if (t == KT_MAINLINE || t == KT_MM_STABLE || t >= KT_SCHED)
			k->tips[t] = k->mainline;
		else
			k->tips[t] = k->tips[t - 1]; /* mm-next on mm-stable, unstable on next */
		for (i = 0; i < KSCRIPT_NR && !error; i++)
			if (kscript[i].tree == t && live(&kscript[i], k->day))
				error = commit_patch(k, i, &k->tips[t]);
	}
	return error;
}

static int publish(struct kworld *k)
{
	struct strbuf path = STRBUF_INIT, ref = STRBUF_INIT;
	int t, error = 0;

	for (t = 0; t < KT_NR && !error; t++) {
		strbuf_reset(&path);
		strbuf_reset(&ref);
		strbuf_addf(&path, "%s/remotes/%s.git", k->dir, ktrees[t].repo);
		strbuf_addf(&ref, "refs/heads/%s", ktrees[t].branch);
		error = sim_git_set_ref(path.buf, ref.buf, k->tips[t].hex);
	}
	strbuf_release(&path);
	strbuf_release(&ref);
	return error;
}

/* ---- the world's files ---- */

static const char *kind_name(enum kkind kind)
{
	switch (kind) {
	case KK_BUILD:
	case KK_BOOT:
		return kind == KK_BUILD ? "build" : "boot";
	case KK_SEMANTIC:
		return "semantic";
	case KK_FLAKY:
		return "flaky";
	default:
		return "normal";
	}
}

static void add_str(json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, v ? json_object_new_string(v) : NULL);
}

/* The addresses of a section's M:, R: and L: lines. */
static void section_addrs(json_object *a, struct kworld *k, const char *section)
{
	struct strbuf line = STRBUF_INIT, n = STRBUF_INIT, e = STRBUF_INIT;
	struct sim_person p;
	int i;

	for (i = 0; section_line(&line, k->maintainers.buf, section, "MRL", i) == 0; i++) {
		if (!strchr(line.buf, '<')) {
			strbuf_setlen(&line, strcspn(line.buf, " "));
			json_object_array_add(a, json_object_new_string(line.buf));
		} else if (split_person(&p, &n, &e, line.buf) == 0) {
			json_object_array_add(a, json_object_new_string(p.email));
		}
	}
	nb_error_clear();
	strbuf_release(&line);
	strbuf_release(&n);
	strbuf_release(&e);
}

static json_object *defect_json(struct kworld *k, size_t i, int id)
{
	const struct kpatch *p = &kscript[i];
	const struct kpatch *q = p->kind == KK_SEMANTIC ? &kscript[p->partner] : NULL;
	json_object *o = json_object_new_object(), *a = json_object_new_array();
	struct strbuf who = STRBUF_INIT, mid = STRBUF_INIT, n = STRBUF_INIT, e = STRBUF_INIT;
	struct sim_person author = { "", "" };

	if (person(&who, k, p->section, p->who) == 0)
		split_person(&author, &n, &e, who.buf);
	nb_error_clear();
	json_object_object_add(o, "id", json_object_new_int(id));
	json_object_object_add(o, "day", json_object_new_int(p->day));
	add_str(o, "kind", kind_name(p->kind));
	json_object_array_add(a, json_object_new_string(ktrees[p->tree].name));
	if (q)
		json_object_array_add(a, json_object_new_string(ktrees[q->tree].name));
	json_object_object_add(o, "trees", a);
	a = json_object_new_array();
	if (live(p, k->day))
		json_object_array_add(a, json_object_new_string(ktrees[p->tree].branch));
	json_object_object_add(o, "branches", a);
	add_str(o, "subject", p->subject);
	add_str(o, "patch_id", NB_PATCHID_HEX(&k->pids[i]));
	msgid(&mid, i, author.email);
	add_str(o, "message_id", mid.buf);
	add_str(o, "author", who.buf);
	if (q) {
		json_object *x = json_object_new_object();
		size_t qi = (size_t)p->partner;

		add_str(x, "subject", q->subject);
		add_str(x, "patch_id", NB_PATCHID_HEX(&k->pids[qi]));
		strbuf_reset(&who);
		strbuf_reset(&mid);
		if (person(&who, k, q->section, q->who) == 0 &&
		    split_person(&author, &n, &e, who.buf) == 0)
			msgid(&mid, qi, author.email);
		nb_error_clear();
		add_str(x, "message_id", mid.buf);
		json_object_object_add(o, "partner", x);
	} else {
		json_object_object_add(o, "partner", NULL);
	}
	json_object_object_add(o, "dropped",
			       json_object_new_boolean(p->drop_day && p->drop_day <= k->day));
	a = json_object_new_array();
	section_addrs(a, k, ktrees[p->tree].section);
	if (q)
		section_addrs(a, k, ktrees[q->tree].section);
	json_object_object_add(o, "maintainers", a);
	strbuf_release(&who);
	strbuf_release(&mid);
	strbuf_release(&n);
	strbuf_release(&e);
	return o;
}

static int truth_save(struct kworld *k)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array(), *m;
	size_t i;
	int id = 0, error;

	json_object_object_add(o, "seed", json_object_new_int(0));
	json_object_object_add(o, "days", json_object_new_int(k->day));
	add_str(o, "kernel", k->src);
	for (i = 0; i < KSCRIPT_NR; i++)
		if (kscript[i].kind != KK_NORMAL && kscript[i].kind != KK_PARTNER &&
		    kscript[i].day <= k->day)
			json_object_array_add(a, defect_json(k, i, ++id));
	json_object_object_add(o, "defects", a);
	m = json_object_new_object();
	json_object_object_add(m, "absent", json_object_new_array());
	json_object_object_add(m, "orphans", json_object_new_array());
	json_object_object_add(o, "maintainers", m);
	json_object_object_add(o, "patches", json_object_new_array());
	error = sim_write_json(k->dir, "truth.json", o, 1);
	json_object_put(o);
	return error;
}

static int kstate_save(struct kworld *k)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();
	size_t i;
	int error;

	json_object_object_add(o, "version", json_object_new_int(1));
	json_object_object_add(o, "day", json_object_new_int(k->day));
	add_str(o, "source", k->src);
	add_str(o, "mainline", k->mainline.hex);
	for (i = 0; i < KSCRIPT_NR; i++)
		json_object_array_add(a, json_object_new_string(NB_PATCHID_HEX(&k->pids[i])));
	json_object_object_add(o, "patch_ids", a);
	error = sim_write_json(k->dir, "kernel-state.json", o, 1);
	json_object_put(o);
	return error;
}

static void yaml_tree(struct strbuf *sb, struct kworld *k, int t)
{
	struct strbuf line = STRBUF_INIT;
	int i, n = 0;

	strbuf_addf(sb, "  - name: %s\n    url: \"./remotes/%s.git\"\n    branch: %s\n"
		    "    contacts: [", ktrees[t].name, ktrees[t].repo, ktrees[t].branch);
	for (i = 0; section_line(&line, k->maintainers.buf, ktrees[t].section, "ML", i) == 0;
	     i++) {
		if (!strchr(line.buf, '<'))
			strbuf_setlen(&line, strcspn(line.buf, " "));
		strbuf_addstr(sb, n++ ? ", " : "");
		sim_yaml_str(sb, line.buf);
	}
	strbuf_addstr(sb, "]\n");
	strbuf_release(&line);
}

static int config_save(struct kworld *k, int cache)
{
	struct strbuf sb = STRBUF_INIT, self = STRBUF_INIT;
	char *path = xstrfmt("%s/nextbot.yaml", k->dir), *exe = realpath("/proc/self/exe", NULL);
	int error;

	strbuf_addf(&sb, "# A kernel world made by `nextbot sim init --kernel %s`.\n"
		    "# `nextbot sim advance %s` plays a day; `nextbot -c %s run` a night.\n"
		    "workdir: state\nbase: {name: origin, url: \"./remotes/mainline.git\", "
		    "branch: master}\ntrees:\n", k->src, k->dir, path);
	yaml_tree(&sb, k, KT_MM_STABLE);
	yaml_tree(&sb, k, KT_MM_NEXT);
	yaml_tree(&sb, k, KT_SCHED);
	yaml_tree(&sb, k, KT_PRINTK);
	strbuf_addstr(&sb, "never_merge: [mm-unstable]\nwatch:\n");
	yaml_tree(&sb, k, KT_MM_UNSTABLE);
	sim_yaml_str(&self, exe ? exe : "nextbot");
	strbuf_addf(&sb, "# a tinyconfig with what a boot needs: a serial console, an initramfs\n"
		    "build:\n  - name: tinyconfig\n    command: '%s'\n    timeout: 7200\n"
		    "# boots the kernel under QEMU with a busybox initramfs (KVM only where\n"
		    "# runner.devices lists /dev/kvm)\n"
		    "test:\n  - name: boot\n    command: '%s boot-test --kernel "
		    "arch/x86/boot/bzImage'\n    timeout: 900\n"
		    "# every build is a whole kernel: one after all the merges, not each\n"
		    "build_after_each_merge: false\nbisect: {confirm: 1}\n"
		    "notify:\n  from: \"nextbot <nextbot@example.org>\"\n"
		    "  list: \"linux-next@vger.kernel.org\"\n"
		    "  operator: \"Next Operator <ops@example.org>\"\n", KBUILD_CMD, self.buf);
	if (cache)
		strbuf_addstr(&sb, "runner: {cache: {max: 5G}}\n");
	error = file_write_atomic(path, sb.buf, sb.len);
	strbuf_release(&sb);
	strbuf_release(&self);
	free(exe);
	free(path);
	return error;
}

/* ---- loading, saving, the two doors ---- */

static int create_repos(struct kworld *k)
{
	char *store = xstrfmt("%s/sim/store.git", k->dir);
	struct strbuf path = STRBUF_INIT;
	int t, error = 0;

	if (git_repository_init(&k->store, store, 1) < 0)
		error = merge_git_fail("%s", store);
	for (t = 0; t < KT_NR && !error; t++) {
		if (t > KT_MM_STABLE && t <= KT_MM_UNSTABLE)
			continue; /* mm.git once */
		strbuf_reset(&path);
		strbuf_addf(&path, "%s/remotes/%s.git", k->dir, ktrees[t].repo);
		error = sim_git_init_remote(path.buf, "../../../sim/store.git/objects",
					    ktrees[t].branch);
	}
	free(store);
	strbuf_release(&path);
	return error;
}

static int finish(struct kworld *k)
{
	int error;

	k->sw.store = k->store;
	if ((error = read_maintainers(k)) < 0 || (error = build_day(k)) < 0 ||
	    (error = sim_git_flush(&k->sw)) < 0 || (error = publish(k)) < 0 ||
	    (error = truth_save(k)) < 0)
		return error;
	return kstate_save(k);
}

static void kworld_release(struct kworld *k)
{
	/* the mem-pack backend belongs to the store's odb, freed with it */
	git_repository_free(k->store);
	strbuf_release(&k->maintainers);
	free(k->dir);
	free(k->src);
}

int feeds_kernel_init(const char *dir, const char *src, const struct feeds_world_opts *opts)
{
	struct kworld k;
	char *state = xstrfmt("%s/kernel-state.json", dir);
	char *sim = xstrfmt("%s/sim-state.json", dir);
	git_oid tree;
	int error;

	memset(&k, 0, sizeof(k));
	strbuf_init(&k.maintainers, 0);
	if (file_exists(state) || file_exists(sim)) {
		error = nb_error_set(NB_EEXISTS, "sim: %s already holds a world", dir);
		goto done;
	}
	if ((error = file_mkdir_p(dir, 0755)) < 0)
		goto done;
	k.dir = realpath(dir, NULL);
	k.src = realpath(src, NULL);
	if (!k.dir || !k.src) {
		error = nb_error_errno(NB_EINVALID, "sim: %s", k.dir ? src : dir);
		goto done;
	}
	if ((error = create_repos(&k)) < 0 || (error = import_source(&k, &tree)) < 0)
		goto done;
	k.sw.store = k.store;
	if ((error = sim_git_store_setup(&k.sw)) < 0 || (error = commit_mainline(&k, &tree)) < 0 ||
	    (error = finish(&k)) < 0)
		goto done;
	error = config_save(&k, opts->cache);
done:
	kworld_release(&k);
	free(state);
	free(sim);
	return error;
}

static int kstate_load(struct kworld *k, const char *dir)
{
	char *path = xstrfmt("%s/kernel-state.json", dir), *store = NULL;
	json_object *o = json_object_from_file(path), *v = NULL, *a = NULL;
	size_t i;
	int error = 0;

	k->dir = realpath(dir, NULL);
	if (!o || !k->dir || !json_object_object_get_ex(o, "day", &v) ||
	    !json_object_object_get_ex(o, "patch_ids", &a) ||
	    json_object_array_length(a) != KSCRIPT_NR) {
		error = nb_error_set(NB_EINVALID, "sim: %s: not a kernel world's state", path);
		goto done;
	}
	k->day = json_object_get_int(v);
	json_object_object_get_ex(o, "source", &v);
	k->src = xstrdup(json_object_get_string(v) ? json_object_get_string(v) : "");
	json_object_object_get_ex(o, "mainline", &v);
	snprintf(k->mainline.hex, sizeof(k->mainline.hex), "%s",
		 json_object_get_string(v) ? json_object_get_string(v) : "");
	for (i = 0; i < KSCRIPT_NR; i++)
		if (nb_patchid_parse(&k->pids[i],
				     json_object_get_string(json_object_array_get_idx(a, i))) < 0)
			nb_error_clear();
	store = xstrfmt("%s/sim/store.git", k->dir);
	if (git_repository_open_bare(&k->store, store) < 0)
		error = merge_git_fail("%s", store);
done:
	json_object_put(o);
	free(path);
	free(store);
	return error;
}

int feeds_kernel_is_world(const char *dir)
{
	char *path = xstrfmt("%s/kernel-state.json", dir);
	int yes = file_exists(path);

	free(path);
	return yes;
}

int feeds_kernel_advance(const char *dir, int days)
{
	struct kworld k;
	int error;

	memset(&k, 0, sizeof(k));
	strbuf_init(&k.maintainers, 0);
	if ((error = kstate_load(&k, dir)) < 0)
		goto done;
	k.sw.store = k.store;
	if ((error = sim_git_store_setup(&k.sw)) < 0)
		goto done;
	k.day += days;
	error = finish(&k);
done:
	kworld_release(&k);
	return error;
}
