#!/bin/sh
# The compiler cache on the real kernel (issue 37): a tinyconfig vmlinux built by a
# night (a) without the cache, (b) through it from an empty store (misses), (c)
# again from a clean tree through the same store (hits), each in nextbot's box at
# the same path (kbuild's .cmd files name paths relative to the tree's top, but a
# build elsewhere differs).  Every object, every .*.cmd file (kbuild writes them
# from the compiler's dependency files, through fixdep) and vmlinux must be the
# same, byte for byte, in all three.  Prints the cache's counts and the builds'
# times.  Outside `make check` (`make kernel-check` runs it): 30-60 min on 2 loaded
# cores, most of it the first night's fetch of the source and the three builds.
# The source: NEXTBOT_KERNEL_SRC (an unpacked tree or a tarball), else Debian's
# /usr/src/linux-source-*.tar.xz; without either it skips, saying so.
. "$(dirname "$0")/../lib.sh"

skip() { echo "# skipped: $*"; echo "ok 1 # skip"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root (builds run as nobody)"
[ -x /usr/bin/bwrap ] && [ -x /usr/bin/gcc ] || skip "needs bwrap and gcc"
for t in make flex bison bc perl; do
	command -v $t >/dev/null || skip "needs $t to build a kernel"
done
SRC=${NEXTBOT_KERNEL_SRC:-}
if [ -z "$SRC" ]; then
	for f in /usr/src/linux-source-*.tar.xz; do [ -f "$f" ] && SRC=$f; done
fi
[ -n "$SRC" ] || skip "no kernel source: set NEXTBOT_KERNEL_SRC to a tree or tarball," \
	"or install linux-source"
[ -e "$SRC" ] || skip "NEXTBOT_KERNEL_SRC=$SRC does not exist"
[ -x "$(dirname "$NEXTBOT")/nextbot-cc" ] || { echo "# no nextbot-cc beside $NEXTBOT"; exit 1; }

# the source as one commit of a repository (the tree is only read; Debian's
# .gitignore ignores the whole top level, hence -f)
if [ -f "$SRC" ]; then
	mkdir -p "$TMP/src" && tar -xf "$SRC" -C "$TMP/src" || exit 1
	SRC=$(find "$TMP/src" -mindepth 2 -maxdepth 2 -name Makefile | head -n 1)
	SRC=$(dirname "$SRC")
fi
echo "# the source: $SRC"
G=$TMP/mainline.git
git init -q --bare "$G" || exit 1
git -C "$SRC" --git-dir="$G" --work-tree=. add -f -A &&
	git -C "$SRC" --git-dir="$G" --work-tree=. -c user.name=t -c user.email=t@example.org \
		commit -qm "the kernel" || exit 1
git --git-dir="$G" branch -M master 2>/dev/null
echo "# $(git --git-dir="$G" ls-tree -r --name-only master | wc -l) files committed"

# the build: tinyconfig, vmlinux, its time; the shims' trace kept in the tree
# (the build's time, user and host fixed: init/version-timestamp.o and so vmlinux name
# them, and two builds without any cache differ there otherwise)
BUILD='start=$(date +%s); export NEXTBOT_CC_TRACE=$PWD/.cc-trace KBUILD_BUILD_TIMESTAMP=2026-01-01 KBUILD_BUILD_USER=nextbot KBUILD_BUILD_HOST=nextbot; make -s tinyconfig >/dev/null && make -s -j2 vmlinux; rc=$?; echo "build-seconds $(($(date +%s) - start))"; exit $rc'
# night NAME RUNNER: a night in $TMP/state (always the same path), its outputs kept;
# the state goes between nights but its repository (fetching the kernel is slow)
night() {
	[ -d "$TMP/state" ] && find "$TMP/state" -mindepth 1 -maxdepth 1 ! -name repo.git \
		-exec rm -rf {} +
	cat >"$TMP/nextbot.yaml" <<EOC
workdir: $TMP/state
base: {name: mainline, url: "file://$G", branch: master}
trees:
  - {name: same, url: "file://$G", branch: master, contacts: ["a@example.org"]}
build:
  - {name: vmlinux, command: '$BUILD', timeout: 3600}
runner: $2
notify: {from: "nextbot <nextbot@example.org>", list: "list@example.org"}
EOC
	start=$(date +%s)
	"$NEXTBOT" -c "$TMP/nextbot.yaml" run --date 2026-12-08 --no-notify \
		>"$TMP/$1.out" 2>"$TMP/$1.err"
	echo "# night $1: exit $?, $(($(date +%s) - start)) s"
	tree=$(find "$TMP/state/workers" -maxdepth 3 -name vmlinux -type f | head -n 1)
	tree=${tree%/vmlinux}
	if [ -z "$tree" ]; then
		echo "# night $1 built no vmlinux:"; tail -n 30 "$TMP/$1.err" | sed 's/^/#   /'
		tail -n 30 "$TMP"/state/runs/*/*.log 2>/dev/null | sed 's/^/#   /'
		return 1
	fi
	echo "# night $1: $(grep -h '^build-seconds' "$TMP"/state/runs/*/*.log | head -n 1)"
	grep -h 'compiler cache:' "$TMP/$1.err" | sed 's/^/# /'
	mkdir -p "$TMP/out/$1"
	(cd "$tree" && find . -type f \( -name '*.o' -o -name '.*.cmd' -o -name vmlinux \) |
		sort >"$TMP/out/$1.list" && tar -cf - -T "$TMP/out/$1.list") |
		tar -xf - -C "$TMP/out/$1"
	[ -f "$tree/.cc-trace" ] && cp "$tree/.cc-trace" "$TMP/out/$1.trace"
	return 0
}
# same A B: every file of A's build is B's, byte for byte, and no other
same() {
	n=0
	cmp -s "$TMP/out/$1.list" "$TMP/out/$2.list" ||
		{ echo "# the files differ:"; diff "$TMP/out/$1.list" "$TMP/out/$2.list" | head -n 20; n=1; }
	while read -r f; do
		cmp -s "$TMP/out/$1/$f" "$TMP/out/$2/$f" && continue
		n=$((n + 1))
		[ $n -le 10 ] && echo "# differs: $f" && case $f in
			*.cmd) diff "$TMP/out/$1/$f" "$TMP/out/$2/$f" | head -n 10 | sed 's/^/#   /' ;;
			esac
	done <"$TMP/out/$1.list"
	echo "# $(wc -l <"$TMP/out/$1.list") files compared, $n differ"
	[ $n = 0 ]
}
counts() { # counts NAME: the shims' verdicts
	[ -f "$TMP/out/$1.trace" ] || { echo "no trace"; return; }
	awk '{ n[$1]++ } END { for (k in n) printf "%s %d, ", k, n[k]; print "" }' "$TMP/out/$1.trace"
}

CACHE="{cache: {dir: $TMP/store, max: 4G}}"
check "a night builds vmlinux without the cache" night plain "{}"
check "a night builds it through the cache, from an empty store" night miss "$CACHE"
check "and again, a clean tree through the same store" night hit "$CACHE"
echo "# the shims said, the first time: $(counts miss)"
echo "# the second time: $(counts hit)"
check "the objects, .cmd files and vmlinux of the misses are the uncached build's" same plain miss
check "those of the hits too" same plain hit
check "the second build's compiles were hits" \
	sh -c "! grep -q '^compiled' '$TMP/out/hit.trace' && grep -q '^hit' '$TMP/out/hit.trace'"
check "kbuild's host programs went through it too (HOSTCC with -Wp,-MMD)" \
	grep -q '^hit scripts/' "$TMP/out/hit.trace"
echo "# what the shims left to the compiler, and why (the second time):"
grep '^uncached' "$TMP/out/hit.trace" | sed 's/^uncached [^:]*: //' | sort | uniq -c | sort -rn |
	sed 's/^/#   /'
# (the compiles kbuild's Kconfig and cc-option make to probe the compiler, to
# /dev/null with -x c, and host programs linked in one command are not objects)
cobjs=$(cd "$TMP/out/hit" && find . -name '.*.o.cmd' | xargs grep -l \
	'^\(saved\)\{0,1\}cmd_[^ ]* := gcc .* -c -o [^ ]*\.o [^ ]*\.c *$' | wc -l)
hits=$(grep -c '^hit .*\.c$' "$TMP/out/hit.trace")
check "every C object kbuild compiled was a hit the second time ($hits of $cobjs)" \
	test "$hits" -ge "$cobjs" -a "$cobjs" -gt 0
done_testing
