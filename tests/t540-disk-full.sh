#!/bin/sh
# Disposable workers (issue 28): a patch whose build fills the disk with untracked files
# in its worker.  The workdir is on a small tmpfs in a private mount namespace (root
# only: elsewhere the test says so and skips).  Night 1: tree `fill` fills the bytes
# (its build passes), tree `brk` really breaks the build: brk's patch is flagged and
# nothing else is; the disk notes and the operator's mail name the step that filled it.
# Night 2: fill's patch replaced by one that uses up the inodes and leaves folders
# 5,000 deep and mode 000: the same.  Night 3: fill's patch replaced by a harmless one:
# the night builds and judges as on a roomy disk (brk, fixed meanwhile, is resolved).
# Night 4: a worker holds what a killed night left (nothing settled it): reclaimed first.
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
W=$TMP/world
DISK=$TMP/disk
mkdir -p "$W" "$DISK"
mount -t tmpfs -o size=40m,nr_inodes=8000,mode=755 nbdisk "$DISK" ||
	{ not_ok "mounting a tmpfs"; done_testing; exit 1; }
unmount() { umount "$DISK" 2>/dev/null; }
at_exit unmount
cd "$W" || exit 1

# --- the world: mainline, a tree that fills the disk, a tree that breaks the build ------
git_q init -q mainline && cd mainline || exit 1
mkdir src hooks
cat >build.sh <<'EOF'
#!/bin/sh
# compile (copy) every source, refuse a broken one, then run the hooks
set -e
for f in src/*.c; do cp "$f" "${f%.c}.o"; done
if grep -l BROKEN src/*.c; then echo "src: error: BROKEN" >&2; exit 1; fi
for h in hooks/*.sh; do [ -f "$h" ] && sh "$h"; done
exit 0
EOF
echo 'int a;' >src/a.c
echo 'int b;' >src/b.c
echo '# hooks run after the build' >hooks/README
git_q add -A && git_q commit -qm "initial" && cd ..
git_q clone -q mainline fill
printf '#!/bin/sh\n# a build that leaves 60M of output\nhead -c 60M /dev/zero >fill.out 2>/dev/null\nexit 0\n' \
	>fill/hooks/fill.sh
git_q -C fill add -A && git_q -C fill commit -qm "fill: keep the build's output"
git_q clone -q mainline brk
echo 'int b = BROKEN;' >brk/src/b.c
git_q -C brk add -A && git_q -C brk commit -qm "brk: break b.c"
publish() {
	for r in mainline fill brk; do
		if [ -d "$W/$r.git" ]; then git_q -C "$r" push -q -f "$W/$r.git" HEAD:master
		else git clone -q --bare "$r" "$W/$r.git"; fi
	done
}
publish

cat >"$DISK/nextbot.yaml" <<EOF
workdir: state
base: {name: origin, url: "file://$W/mainline.git", branch: master}
trees:
  - {name: fill, url: "file://$W/fill.git", branch: master, contacts: ["fill@example.org"]}
  - {name: brk, url: "file://$W/brk.git", branch: master, contacts: ["brk@example.org"]}
build:
  - {name: build, command: sh build.sh, timeout: 120}
bisect: {confirm: 1, jobs: 1}
runner: {min_free: 8M}
notify: {from: "nextbot <nextbot@example.org>", list: "list@example.org",
         operator: "ops@example.org"}
EOF
S=$DISK/state
NB() { "$NEXTBOT" -q -c "$DISK/nextbot.yaml" "$@"; }

check "check-config shows runner.min_free" sh -c \
	"'$NEXTBOT' -c '$DISK/nextbot.yaml' check-config | grep -q 'below 8 MiB free, the workers are reclaimed'"

# flags DATE: "tree commit-subject state" of every flag, sorted
flags() {
	"$NEXTBOT" -c "$DISK/nextbot.yaml" --json flagged | $PYTHON -c '
import json, sys
for f in json.load(sys.stdin)["flags"]:
    print(f["tree"], f["kind"], f["state"], f.get("subject"))' | sort
}
# show DATE: the night's result and notes, as comments
show() {
	$PYTHON -c 'import json, sys
r = json.load(open(sys.argv[1]))
print("#", sys.argv[2], r["result"])
for n in r["notes"]:
    print("#   " + n[:400])' "$S/runs/$1/run.json" "$1" 2>/dev/null
}

# --- night 1: fill fills 60M of a 40M disk, brk breaks the build ----------------------
expect_exit 0 "night 1 runs" NB run --date 2026-12-01
show 2026-12-01
flags | sed "s/^/# flag: /"
check "night 1: brk's patch is flagged, nothing else" test "$(flags)" = \
	"brk build-failure open brk: break b.c"
check "night 1: a disk note names fill's merge and the build that filled it" \
	grep -q 'disk: `build` of [0-9a-f]\{12\} (..Merge [^)]*fill.git..) left the disk of' \
	"$S/runs/2026-12-01/run.json"
check "night 1: no infrastructure problem (the workers were reclaimed in time)" \
	sh -c "! grep -q 'infrastructure problem' '$S/runs/2026-12-01/run.json'"
check "night 1: the operator's mail names the step" sh -c \
	"grep -l '\"kind\": *\"operator\"' '$S'/outbox/*.json | xargs grep -l 'next-20261201' |
	 xargs grep -q 'build. of [0-9a-f]* (.*fill.git'"
check "night 1: the operator's mail goes to the operator alone" sh -c \
	"grep -l '\"kind\": *\"operator\"' '$S'/outbox/*.json | xargs grep -h '\"to\"' -A2 |
	 grep -q ops@example.org && ! grep -l '\"kind\": *\"operator\"' '$S'/outbox/*.json |
	 xargs grep -q list@example.org"
check "night 1 left room on the disk" test "$(df -k --output=avail "$DISK" | tail -1)" -gt 8192

# --- night 2: inodes used up, folders 5,000 deep and mode 000 --------------------------
cat >fill/hooks/fill.sh <<'EOF'
#!/bin/sh
# a build that leaves a folder nobody may enter, folders 5,000 deep (beyond PATH_MAX),
# then small files until the inodes run out (dash leaves at the failed redirection)
mkdir -p locked/inner && : >locked/inner/x && chmod 000 locked
python3 -c 'import os
for i in range(5000):
    os.mkdir("d"); os.chdir("d")' || exit 3
test "$(stat -c %a locked)" = 0 || exit 4
mkdir -p many && i=0
while [ $i -lt 20000 ]; do : >many/f$i; i=$((i + 1)); done
exit 0
EOF
git_q -C fill add -A && git_q -C fill commit -qm "fill: keep many small outputs"
publish
expect_exit 0 "night 2 runs" NB run --date 2026-12-02
show 2026-12-02
[ -n "${KEEP:-}" ] && cp -r "$S/runs" "$TMP/runs-kept"
flags | sed "s/^/# flag: /"
# its build fails when the inodes run out (dash leaves at a failed redirection): the
# failure is the full disk's, named, and nobody's (had the deep or the locked folder not
# been made, the build would have failed on a roomy disk, and fill been flagged)
check "night 2: still only brk's flag" test "$(flags)" = "brk build-failure open brk: break b.c"
check "night 2: an infrastructure note names fill's build, which used up the inodes" \
	grep -q 'infrastructure problem, nobody blamed: `build` of [0-9a-f]* (..Merge [^)]*fill.git..) left the disk of .* short ([0-9]* KiB, 0 inodes free)' \
	"$S/runs/2026-12-02/run.json"
check "night 2 left inodes free" test "$(df --output=iavail "$DISK" | tail -1)" -gt 1000

# --- night 3: fill's patch replaced by a harmless one; brk fixed ------------------------
git_q -C fill reset -q --hard HEAD~2
echo 'int c;' >fill/src/c.c
git_q -C fill add -A && git_q -C fill commit -qm "fill: add c.c"
git_q -C brk reset -q --hard HEAD~1
echo 'int b = 2;' >brk/src/b.c
git_q -C brk add -A && git_q -C brk commit -qm "brk: b is 2"
publish
expect_exit 0 "night 3 runs" NB run --date 2026-12-03
show 2026-12-03
flags | sed "s/^/# flag: /"
check "night 3: clean, tagged" sh -c \
	"grep -q '\"result\": *\"clean\"' '$S/runs/2026-12-03/run.json' &&
	 git -C '$S/repo.git' rev-parse -q --verify next-20261203 >/dev/null"
check "night 3: no disk or infrastructure note" \
	sh -c "! grep -q 'disk: \\|infrastructure problem' '$S/runs/2026-12-03/run.json'"
check "night 3: brk's flag resolved, no other flag" test "$(flags)" = \
	"brk build-failure resolved brk: break b.c"
check "night 3: next holds the harmless fill and the fixed brk" sh -c \
	"git -C '$S/repo.git' show next:src/c.c | grep -q 'int c' &&
	 git -C '$S/repo.git' show next:src/b.c | grep -q 'b = 2'"

# --- night 4: what a night killed mid-build left in a worker (no settling after it) ----
# (to its last byte: the run lock's pid cannot be written, and the night goes on)
head -c 34M /dev/zero >"$S/workers/w0/tree/left-by-a-killed-night.o" 2>/dev/null
head -c 40M /dev/zero >"$S/workers/w0/tree/and-the-rest.o" 2>/dev/null
check "night 4 begins with the disk short" test "$(df -k --output=avail "$DISK" | tail -1)" -lt 8192
check "(full)" test "$(df -k --output=avail "$DISK" | tail -1)" -eq 0
# what w0 holds now, in whole MiB (what else is on the disk varies: a sanitized nextbot's
# copy of itself is 14 MiB larger)
held=$(du -sm "$S/workers/w0" | cut -f1)
expect_exit 0 "night 4 runs" NB run --date 2026-12-04
show 2026-12-04
check "night 4: clean, tagged" sh -c \
	"grep -q '\"result\": *\"clean\"' '$S/runs/2026-12-04/run.json' &&
	 git -C '$S/repo.git' rev-parse -q --verify next-20261204 >/dev/null"
check "night 4: a note says the workers were reclaimed, and which held the most" \
	sh -c "grep -o 'disk: the disk of .* was short .*in workers/w0 held [0-9.]* MiB; the workers were removed' \
		'$S/runs/2026-12-04/run.json' |
	       awk -v held=$held '{ for (i = 1; i < NF; i++) if (\$(i + 1) == \"MiB;\") mib = \$i }
				 END { exit !(mib > held - 2 && mib < held + 2) }'"
check "night 4: no infrastructure problem" \
	sh -c "! grep -q 'infrastructure problem' '$S/runs/2026-12-04/run.json'"

done_testing
