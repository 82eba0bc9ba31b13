#!/bin/sh
# The compiler cache gives way to the disk (issue 37): the store never takes its disk
# below runner.min_free, and is trimmed before workers are judged short of room.  The
# workdir (and so the store) is on a 64 MiB tmpfs in a private mount namespace (root
# only: elsewhere the test says so and skips), runner.min_free 16M, the cache's max
# far above the disk.  Night 1: mainline's build compiles nine 6 MiB objects (54
# MiB, more than the disk can give the store): it builds, the store stops short of
# the floor.  Night 2: a tree breaks the build: it is built, searched and flagged,
# nothing else is, and no infrastructure problem is claimed.  Then a store left over
# the floor (as an older nextbot left it) gives way at the next night's start.
if [ -z "${NB_IN_NS:-}" ] && [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
	NB_IN_NS=1 exec unshare -m sh "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"
if [ -z "${NB_IN_NS:-}" ]; then
	echo "# skipped: no private mount namespace here (needs root and unshare -m)"
	ok "skipped: a size-limited tmpfs needs a private mount namespace"
	done_testing
	exit 0
fi
[ -x /usr/bin/bwrap ] && [ -x /usr/bin/gcc ] || { echo "# skipped: needs bwrap and gcc"; echo "ok 1 # skip"; exit 0; }
W=$TMP/world
DISK=$TMP/disk
mkdir -p "$W" "$DISK"
mount -t tmpfs -o size=64m,mode=755 nbdisk "$DISK" ||
	{ not_ok "mounting a tmpfs"; done_testing; exit 1; }
unmount() { umount "$DISK" 2>/dev/null; }
at_exit unmount
cd "$W" || exit 1

git_q init -q mainline && cd mainline || exit 1
mkdir big src
for i in 1 2 3 4 5 6 7 8 9; do
	printf 'char big%d[6 << 20] = { %d };\n' $i $i >big/b$i.c
done
echo 'int b(void) { return 1; }' >src/b.c
# each big object compiled through the cache and dropped: the worker stays small
cat >build.sh <<'EOF2'
set -e
for f in big/*.c; do cc -c "$f" -o big.o; rm -f big.o; done
cc -c src/b.c -o b.o
EOF2
git_q add -A && git_q commit -qm "initial" && cd ..
git_q clone -q mainline brk
for r in mainline brk; do git clone -q --bare "$r" "$W/$r.git"; done

cat >"$DISK/nextbot.yaml" <<EOF
workdir: state
base: {name: origin, url: "file://$W/mainline.git", branch: master}
trees:
  - {name: brk, url: "file://$W/brk.git", branch: master, contacts: ["brk@example.org"]}
build:
  - {name: build, command: sh build.sh, timeout: 300}
bisect: {confirm: 1, jobs: 1}
runner: {min_free: 16M, cache: {max: 1G}}
notify: {from: "nextbot <nextbot@example.org>", list: "list@example.org"}
EOF
S=$DISK/state
NB() { "$NEXTBOT" -q -c "$DISK/nextbot.yaml" "$@"; }
free_kib() { df -k --output=avail "$DISK" | tail -n 1 | tr -d ' '; }
store_kib() { du -sk "$S/ccache" 2>/dev/null | cut -f1; }
show() {
	$PYTHON -c 'import json, sys
r = json.load(open(sys.argv[1]))
print("#", sys.argv[2], r["result"])
for n in r["notes"]:
    print("#   " + n[:300])' "$S/runs/$1/run.json" "$1" 2>/dev/null
}
flags() {
	"$NEXTBOT" -c "$DISK/nextbot.yaml" --json flagged | $PYTHON -c '
import json, sys
for f in json.load(sys.stdin)["flags"]:
    print(f["tree"], f["kind"], f["state"], f.get("subject"))' | sort
}

expect_exit 0 "night 1 runs" NB run --date 2026-12-01 --no-notify
show 2026-12-01
echo "# after night 1: the store $(store_kib) KiB, $(free_kib) KiB free"
check "night 1: the store kept some objects" test "$(store_kib)" -gt 6144
check "night 1: and left the disk its floor (16 MiB)" test "$(free_kib)" -ge 16384
check "night 1: no infrastructure problem" \
	sh -c "! grep -q 'infrastructure problem' '$S/runs/2026-12-01/run.json'"

echo 'int b(void) { return BROKEN; }' >brk/src/b.c
git_q -C brk commit -qam "brk: break b.c"
git_q -C brk push -q "$W/brk.git" HEAD:master
expect_exit 0 "night 2 runs" NB run --date 2026-12-02 --no-notify
show 2026-12-02
check "night 2: brk's patch is flagged, nothing else" test "$(flags)" = \
	"brk build-failure open brk: break b.c"
check "night 2: no infrastructure problem" \
	sh -c "! grep -q 'infrastructure problem' '$S/runs/2026-12-02/run.json'"

# a store over the floor (an older nextbot's, or a disk filled meanwhile): the next
# night's start trims it first, and the night builds and judges as on a roomy disk
mkdir -p "$S/ccache/v1/00"
head -c 30M /dev/urandom >"$S/ccache/v1/00/filler-entry" 2>/dev/null
echo "# a store of $(store_kib) KiB, $(free_kib) KiB free"
git_q -C brk revert --no-edit HEAD >/dev/null
git_q -C brk push -q "$W/brk.git" HEAD:master
expect_exit 0 "night 3 runs" NB run --date 2026-12-03 --no-notify
show 2026-12-03
check "night 3: the store gave way first (a note says so)" \
	grep -q 'the compiler cache gave way first' "$S/runs/2026-12-03/run.json"
check "night 3: no infrastructure problem, and brk's flag is no longer open" sh -c \
	"test -f '$S/runs/2026-12-03/run.json' &&
	 ! grep -q 'infrastructure problem' '$S/runs/2026-12-03/run.json' &&
	 ! \"$NEXTBOT\" -c '$DISK/nextbot.yaml' --json flagged | grep -q '\"open\"'"
done_testing
