#!/bin/sh
# `nextbot sim init DIR --kernel SRC` on a small stand-in for the kernel source (the
# excerpts of Linux 6.1 its script edits, and the MAINTAINERS sections it routes by),
# so that no kernel is needed: mainline is SRC as one commit, objects shared through
# alternates, the branches carry the script's patches by the right people, truth.json
# has a defect a day (build, boot, semantic with its partner, flaky), each dropped the
# next day, and `sim advance` plays the script; a tarball works as a tree does.
# tests/kernel/nights.sh plays the nights on the real source.
. "$(dirname "$0")/lib.sh"
S=$TMP/linux
mkdir -p "$S/mm" "$S/kernel/sched" "$S/kernel/printk" "$S/include/linux" "$S/fs/proc" \
	"$S/drivers/hv"
cat >"$S/mm/filemap.c" <<'EOS'
	for (i = 0; i < folio_batch_count(fbatch); i++)
		filemap_free_folio(mapping, fbatch->folios[i]);
}

int filemap_check_errors(struct address_space *mapping)
{
	int ret = 0;
	/* Check for outstanding write errors */
	if (test_bit(AS_ENOSPC, &mapping->flags) &&
	    test_and_clear_bit(AS_ENOSPC, &mapping->flags))
		ret = -ENOSPC;
	if (test_bit(AS_EIO, &mapping->flags) &&
	    test_and_clear_bit(AS_EIO, &mapping->flags))
		ret = -EIO;
	return ret;
}
EXPORT_SYMBOL(filemap_check_errors);
EOS
cat >"$S/mm/page_alloc.c" <<'EOS'
static unsigned long nr_free_zone_pages(int offset)
{
	struct zoneref *z;
	struct zone *zone;

	/* Just pick one node, since fallback list is circular */
	unsigned long sum = 0;

	struct zonelist *zonelist = node_zonelist(numa_node_id(), GFP_KERNEL);

	for_each_zone_zonelist(zone, z, zonelist, offset) {
		unsigned long size = zone_managed_pages(zone);
		unsigned long high = high_wmark_pages(zone);
		if (size > high)
			sum += size - high;
	}

	return sum;
}
EOS
cat >"$S/kernel/sched/core.c" <<'EOS'
}

void sched_post_fork(struct task_struct *p)
{
	uclamp_post_fork(p);
}

void __init sched_init(void)
{
	unsigned long ptr = 0;
	int i;

	/* Make sure the linker didn't screw up */
	BUG_ON(&idle_sched_class != &fair_sched_class + 1 ||
	       &fair_sched_class != &rt_sched_class + 1 ||
	       &rt_sched_class   != &dl_sched_class + 1);
#ifdef CONFIG_SMP
	BUG_ON(&dl_sched_class != &stop_sched_class + 1);
#endif

}
EOS
cat >"$S/mm/util.c" <<'EOS'
/*
 * The global memory commitment made in the system can be a metric
 * that can be used to drive ballooning decisions when Linux is hosted
 * as a guest. On Hyper-V, the host implements a policy engine for dynamically
 * balancing memory across competing virtual machines that are hosted.
 * Several metrics drive this policy engine including the guest reported
 * memory commitment.
 *
 * The time cost of this is very low for small platforms, and for big
 * platform like a 2S/36C/72T Skylake server, in worst case where
 * vm_committed_as's spinlock is under severe contention, the time cost
 * could be about 30~40 microseconds.
 */
unsigned long vm_memory_committed(void)
{
	return percpu_counter_sum_positive(&vm_committed_as);
}
EXPORT_SYMBOL_GPL(vm_memory_committed);
EOS
cat >"$S/kernel/printk/printk.c" <<'EOS'
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/delay.h>
#include <linux/smp.h>
#include <linux/security.h>
#include <linux/memblock.h>
#include <linux/syscalls.h>
 * makes it difficult to diagnose problems that occur during this time.
 *
 * To mitigate this problem somewhat, only unregister consoles whose memory
 * intersects with the init section. Note that all other boot consoles will
 * get unregistered when the real preferred console is registered.
 */
static int __init printk_late_init(void)
{
	struct console *con;
	int ret;

	for_each_console(con) {
		if (!(con->flags & CON_BOOT))
			continue;

		/* Check addresses that might be used for enabled consoles. */
		if (init_section_intersects(con, sizeof(*con)) ||
		    init_section_contains(con->write, 0) ||
		    init_section_contains(con->read, 0) ||
		    init_section_contains(con->device, 0) ||
		    init_section_contains(con->unblank, 0) ||
		    init_section_contains(con->data, 0)) {
			/*
			 * Please, consider moving the reported consoles out
			 * of the init section.
			 */
			pr_warn("bootconsole [%s%d] uses init memory and must be disabled even before the real one is ready\n",
				con->name, con->index);
			unregister_console(con);
		}
	}
	ret = cpuhp_setup_state_nocalls(CPUHP_PRINTK_DEAD, "printk:dead", NULL,
					console_cpu_notify);
	WARN_ON(ret < 0);
	ret = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, "printk:online",
					console_cpu_notify, NULL);
	WARN_ON(ret < 0);
	printk_sysctl_init();
	return 0;
}
late_initcall(printk_late_init);
EOS
cat >"$S/include/linux/mman.h" <<'EOS'
#endif

unsigned long vm_memory_committed(void);

static inline void vm_acct_memory(long pages)
EOS
cat >"$S/fs/proc/meminfo.c" <<'EOS'
	int lru;

	si_meminfo(&i);
	si_swapinfo(&i);
	committed = vm_memory_committed();

	cached = global_node_page_state(NR_FILE_PAGES) -
EOS
cat >"$S/drivers/hv/hv_balloon.c" <<'EOS'
 */

static unsigned long get_pages_committed(struct hv_dynmem_device *dm)
{
	return vm_memory_committed() +
		dm->num_pages_ballooned +
		(dm->num_pages_added > dm->num_pages_onlined ?
		 dm->num_pages_added - dm->num_pages_onlined : 0) +
		compute_balloon_floor();
	num_pages_committed = get_pages_committed(dm);

	trace_balloon_status(num_pages_avail, num_pages_committed,
			     vm_memory_committed(), dm->num_pages_ballooned,
			     dm->num_pages_added, dm->num_pages_onlined);

	/* Convert numbers of pages into numbers of HV_HYP_PAGEs. */
EOS
cat >"$S/MAINTAINERS" <<'EOS'
List of maintainers

MEMORY MANAGEMENT
M:	Andrew Morton <akpm@linux-foundation.org>
L:	linux-mm@kvack.org
S:	Maintained
W:	http://www.linux-mm.org
T:	git://git.kernel.org/pub/scm/linux/kernel/git/akpm/mm
T:	quilt git://git.kernel.org/pub/scm/linux/kernel/git/akpm/25-new
F:	include/linux/gfp.h
F:	include/linux/gfp_types.h
F:	include/linux/memory_hotplug.h
F:	include/linux/mm.h
F:	include/linux/mmzone.h
F:	include/linux/pagewalk.h
F:	include/linux/vmalloc.h
F:	mm/
F:	tools/testing/selftests/vm/

PAGE CACHE
M:	Matthew Wilcox (Oracle) <willy@infradead.org>
L:	linux-fsdevel@vger.kernel.org
S:	Supported
T:	git git://git.infradead.org/users/willy/pagecache.git
F:	Documentation/filesystems/locking.rst
F:	Documentation/filesystems/vfs.rst
F:	include/linux/pagemap.h
F:	mm/filemap.c
F:	mm/page-writeback.c
F:	mm/readahead.c
F:	mm/truncate.c

PRINTK
M:	Petr Mladek <pmladek@suse.com>
M:	Sergey Senozhatsky <senozhatsky@chromium.org>
R:	Steven Rostedt <rostedt@goodmis.org>
R:	John Ogness <john.ogness@linutronix.de>
S:	Maintained
T:	git git://git.kernel.org/pub/scm/linux/kernel/git/printk/linux.git
F:	include/linux/printk.h
F:	kernel/printk/

SCHEDULER
M:	Ingo Molnar <mingo@redhat.com>
M:	Peter Zijlstra <peterz@infradead.org>
M:	Juri Lelli <juri.lelli@redhat.com> (SCHED_DEADLINE)
M:	Vincent Guittot <vincent.guittot@linaro.org> (SCHED_NORMAL)
R:	Dietmar Eggemann <dietmar.eggemann@arm.com> (SCHED_NORMAL)
R:	Steven Rostedt <rostedt@goodmis.org> (SCHED_FIFO/SCHED_RR)
R:	Ben Segall <bsegall@google.com> (CONFIG_CFS_BANDWIDTH)
R:	Mel Gorman <mgorman@suse.de> (CONFIG_NUMA_BALANCING)
R:	Daniel Bristot de Oliveira <bristot@redhat.com> (SCHED_DEADLINE)
R:	Valentin Schneider <vschneid@redhat.com> (TOPOLOGY)
L:	linux-kernel@vger.kernel.org
S:	Maintained
T:	git git://git.kernel.org/pub/scm/linux/kernel/git/tip/tip.git sched/core
F:	include/linux/preempt.h
F:	include/linux/sched.h
F:	include/linux/wait.h
F:	include/uapi/linux/sched.h
F:	kernel/sched/

EOS

W=$TMP/world
expect_exit 0 "sim init --kernel on a tree" "$NEXTBOT" sim init "$W" --kernel "$S" --no-cache
mm() { git --git-dir "$W/remotes/mm.git" "$@"; }
check "mainline is the source as one commit" \
	test "$(git --git-dir "$W/remotes/mainline.git" rev-list --count master)" = 1
check "with every file of it" sh -c "git --git-dir '$W/remotes/mainline.git' ls-tree -r \
	--name-only master | sort >'$TMP/files' && (cd '$S' && find . -type f | sed 's|^./||' \
	| sort) | cmp -s - '$TMP/files'"
check "the remotes borrow one store" sh -c \
	"cat '$W'/remotes/*.git/objects/info/alternates | sort -u | grep -qx '../../../sim/store.git/objects'"
check "and hold no objects of their own" sh -c \
	"! find '$W/remotes' -path '*/objects/??/*' -type f | grep -q ."
check "mm-next: the script's three patches" \
	test "$(mm rev-list --count mm-stable..mm-next)" = 3
check "the build break is the last, by the page cache's maintainer" sh -c \
	"git --git-dir '$W/remotes/mm.git' log -1 --format='%an <%ae>|%s' mm-next | grep -qx \
	'Matthew Wilcox (Oracle) <willy@infradead.org>|mm/filemap: name the error code err in filemap_check_errors()'"
check "committed by mm's maintainer" sh -c \
	"git --git-dir '$W/remotes/mm.git' log -1 --format='%cn' mm-next | grep -qx 'Andrew Morton'"
check "with a Link: to its Message-ID" sh -c \
	"git --git-dir '$W/remotes/mm.git' log -1 mm-next | grep -q 'Link: https://lore.kernel.org/r/'"
check "mm-unstable sits on mm-next" test "$(mm rev-list --count mm-next..mm-unstable)" = 1
check "sched carries two patches by SCHEDULER's reviewers" sh -c \
	"git --git-dir '$W/remotes/sched.git' log --format=%an sched |
	 grep -c '^Dietmar Eggemann\$\|^Valentin Schneider\$' | grep -qx 2"
truth() { /usr/bin/python3 -c "import json,sys; t=json.load(open('$W/truth.json')); $1"; }
check "day 0: one defect, the build break" truth \
	"d=t['defects']; assert [x['kind'] for x in d] == ['build'], d; \
	 assert d[0]['trees'] == ['mm-next'] and len(d[0]['patch_id']) == 40, d"
check "its patch-id is the commit's" sh -c "git --git-dir '$W/remotes/mm.git' show mm-next |
	git patch-id --stable | cut -d' ' -f1 | grep -qx \"\$(/usr/bin/python3 -c \
	\"import json; print(json.load(open('$W/truth.json'))['defects'][0]['patch_id'])\")\""
check "the config builds a tinyconfig and boots it" sh -c \
	"grep -q 'make -s tinyconfig' '$W/nextbot.yaml' && grep -q 'boot-test --kernel arch/x86/boot/bzImage' '$W/nextbot.yaml'"
expect_exit 0 "the config is valid" "$NEXTBOT" -c "$W/nextbot.yaml" check-config
expect_exit 2 "a second init refuses" "$NEXTBOT" sim init "$W" --kernel "$S"

mm_next_0=$(mm rev-parse mm-next)
expect_exit 0 "day 1" "$NEXTBOT" sim advance "$W"
check "the build break is dropped" test "$(mm rev-list --count mm-stable..mm-next)" = 2
check "truth says so" truth "d=t['defects']; assert d[0]['dropped'] and d[1]['kind'] == 'boot', d"
check "the boot failure is printk's panic" sh -c \
	"git --git-dir '$W/remotes/printk.git' show printk | grep -q '^+.*panic(\"printk: no CPU hotplug'"
expect_exit 0 "day 2" "$NEXTBOT" sim advance "$W"
check "the semantic conflict: printk calls what mm-next renames" truth \
	"d=t['defects'][2]; assert d['kind'] == 'semantic' and d['trees'] == ['printk', 'mm-next'] \
	 and d['partner']['subject'].startswith('mm: rename vm_memory_committed'), d"
check "each tree builds alone: mm-next converts every caller it has" sh -c \
	"! git --git-dir '$W/remotes/mm.git' grep -q 'vm_memory_committed()' mm-next"
check "printk's new code calls the old name" sh -c \
	"git --git-dir '$W/remotes/printk.git' grep -q 'vm_memory_committed()' printk"
expect_exit 0 "two more days" "$NEXTBOT" sim advance "$W" --days 2
check "the flaky boot came and went" truth \
	"d=t['defects']; assert [x['kind'] for x in d] == ['build', 'boot', 'semantic', 'flaky'] \
	 and all(x['dropped'] for x in d), d"
check "the same source gives the same commits" sh -c \
	"'$NEXTBOT' sim init '$TMP/again' --kernel '$S' --no-cache >/dev/null &&
	 test \"\$(git --git-dir '$TMP/again/remotes/mm.git' rev-parse mm-next)\" = '$mm_next_0'"

tar -C "$TMP" -czf "$TMP/linux.tar.gz" linux
expect_exit 0 "a tarball works as a tree" "$NEXTBOT" sim init "$TMP/tarred" --kernel "$TMP/linux.tar.gz" --no-cache
check "the same files in mainline" \
	test "$(git --git-dir "$TMP/tarred/remotes/mainline.git" rev-parse 'master^{tree}')" = \
	"$(git --git-dir "$W/remotes/mainline.git" rev-parse 'master^{tree}')"
check "the unpacked copy is gone" test ! -e "$TMP/tarred/sim/src"
expect_exit 2 "a missing source is refused" "$NEXTBOT" sim init "$TMP/none" --kernel "$TMP/nope"
done_testing
