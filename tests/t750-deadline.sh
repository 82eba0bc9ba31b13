#!/bin/sh
# The deadline, real binary, real make: with
# `deadline: "5s"` and a slow build (`sleep 3; make`) on a world where net carries a
# build break, the base check and the check after net's merge take over 6 s, so the
# night stops looking for the culprit and ends `unfinished` with everything recorded:
# tag and next in the work repository, state.json, runs/<date>/ (run.json,
# merge.log), the note and the summary. The next night, with the deadline far away and
# a fast build, goes on normally: the culprit is found, reverted and flagged.
. "$(dirname "$0")/lib.sh"

W=$TMP/world
mkdir -p "$W/src"
cd "$W/src" || exit 1
git_q init -q mainline && cd mainline || exit 1
cat >Makefile <<'EOF'
prog: $(wildcard */*.c) main.c
	$(CC) -Wall -o $@ $^
test: prog
	./prog
.PHONY: test
EOF
mkdir lib
printf 'int add(int a, int b) { return a + b; }\n' >lib/add.c
printf 'int add(int, int);\nint main(void) { return add(1, 2) == 3 ? 0 : 1; }\n' >main.c
printf 'prog\n' >.gitignore
git_q add -A && git_q commit -qm "initial" && cd ..
commit() {
	mkdir -p "$(dirname "$1/$2")" && printf '%s\n' "$3" >"$1/$2"
	git_q -C "$1" add -A && git_q -C "$1" commit -qm "$4"
}
git_q clone -q mainline net
commit net net/a.c 'int net_a(void) { return 1; }' "net: add net_a"
commit net net/b.c 'int net_b(void) { return 2 }' "net: add net_b"
commit net net/c.c 'int net_c(void) { return 3; }' "net: add net_c"
git_q clone -q mainline vfs
commit vfs fs/x.c 'int fs_x(void) { return 4; }' "fs: add fs_x"
for r in mainline net vfs; do git clone -q --bare $r "$W/$r.git"; done
BAD=$(git -C net rev-parse HEAD~1)

# config DEADLINE BUILD-COMMAND
config() {
	cat >"$W/nextbot.yaml" <<EOF
workdir: state
base: {name: origin, url: "file://$W/mainline.git", branch: master}
trees:
  - {name: net, url: "file://$W/net.git", branch: master, contacts: ["net@example.org"]}
  - {name: vfs, url: "file://$W/vfs.git", branch: master, contacts: ["vfs@example.org"]}
build:
  - {name: build, command: "$2", timeout: 60}
test: []
bisect: {confirm: 1, jobs: 1}
deadline: "$1"
notify: {from: "nextbot <nextbot@example.org>", list: "list@example.org"}
EOF
}
NB() { "$NEXTBOT" -q -c "$W/nextbot.yaml" "$@"; }
REPO=$W/state/repo.git
S=$W/state
last_run() {
	"$NEXTBOT" -c "$W/nextbot.yaml" --json status | $PYTHON -c "
import json, sys
r = json.load(sys.stdin)['runs'][-1]
$1"
}

# --- night 1: the deadline passes during the checks ---------------------------------------
config 5s "sleep 3; make"
expect_exit 0 "night 1 runs (exit 0) and stops at the deadline" NB run --date 2026-12-01
check "status: night 1 is unfinished and tagged" last_run \
	'assert r["date"] == "2026-12-01" and r["result"] == "unfinished" and r["tag"] == "next-20261201", r'
check "status: every tree has a state" last_run \
	'st = {t["name"]: t["state"] for t in r["trees"]}; assert set(st) == {"origin", "net", "vfs"} and all(st.values()), st'
check "status: next is recorded" last_run 'assert len(r["next"] or "") == 40, r'
check "the tag exists and is next" sh -c \
	"test \"\$(git -C '$REPO' rev-parse next-20261201^{commit})\" = \"\$(git -C '$REPO' rev-parse next)\""
check "the tag is the recorded next" last_run \
	"import subprocess; assert r['next'] == subprocess.check_output(['git', '-C', '$REPO', 'rev-parse', 'next-20261201^{commit}'], text=True).strip()"
check "state.json is valid and holds the night" $PYTHON -c "
import json; s = json.load(open('$S/state.json'))
assert [r['result'] for r in s['runs'] if r['date'] == '2026-12-01'] == ['unfinished']"
check "runs/2026-12-01/run.json says unfinished, with the deadline note" $PYTHON -c "
import json; r = json.load(open('$S/runs/2026-12-01/run.json'))
assert r['result'] == 'unfinished' and r['finished'], r
assert any('deadline' in n for n in r['notes']), r['notes']"
check "runs/2026-12-01/merge.log names both trees" sh -c \
	"grep -q '^Merging net/master' '$S/runs/2026-12-01/merge.log' && grep -q '^Merging vfs/master' '$S/runs/2026-12-01/merge.log'"
check "status text notes the deadline" sh -c \
	"'$NEXTBOT' -c '$W/nextbot.yaml' status | grep -q '^  note: the deadline passed before next was clean'"
check "the summary of night 1 is queued and says so" sh -c \
	"grep -l '\"kind\": *\"summary\"' '$S'/outbox/*.json | xargs grep -l 'next-20261201' | xargs grep -q 'deadline passed'"
check "no culprit was searched past the deadline: no flag" sh -c "'$NEXTBOT' -c '$W/nextbot.yaml' --json flagged |
	$PYTHON -c 'import json,sys; assert json.load(sys.stdin)[\"flags\"] == []'"
check "the lock was released" flock -n "$S/lock" true

# --- night 2: no hurry: it goes on normally ------------------------------------------------
config 10m "make"
expect_exit 0 "night 2 runs" NB run --date 2026-12-02
check "night 2 is not unfinished: a regression, handled" last_run \
	'assert r["date"] == "2026-12-02" and r["result"] in ("clean", "regression"), r'
check "net's bad patch is reverted, vfs merged" last_run \
	'st = {t["name"]: t["state"] for t in r["trees"]}; assert st["net"] == "reverted" and st["vfs"] == "merged", st'
check "the bad patch is flagged" sh -c "'$NEXTBOT' -c '$W/nextbot.yaml' --json flagged |
	$PYTHON -c 'import json,sys; f=json.load(sys.stdin)[\"flags\"]; assert [x[\"commit\"] for x in f] == [\"$BAD\"], f'"
check "night 2 has no deadline note" sh -c "! grep -q deadline '$S/runs/2026-12-02/run.json'"
check "night 2's next builds" sh -c "rm -rf '$TMP/co' && git clone -q -b next '$REPO' '$TMP/co' && make -s -C '$TMP/co' test"
"$NEXTBOT" -c "$W/nextbot.yaml" --json status >"$TMP/status.json"
check "status lists night 1 unfinished, night 2 after it" $PYTHON -c "
import json; r = [(x['date'], x['result']) for x in json.load(open('$TMP/status.json'))['runs']]
print('#', r); assert r == [('2026-12-01', 'unfinished'), ('2026-12-02', 'regression')]"

done_testing
