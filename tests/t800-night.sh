#!/bin/sh
# The nightly run on a small hand-made world (real git remotes, real make): a build
# break in one tree is bisected to its patch, confirmed, reverted, flagged and
# reported once; a second run of the night changes nothing; a drop keeps the patch
# out across a rebase; the lock refuses a second writer; a kill -9 loses nothing.
. "$(dirname "$0")/lib.sh"

W=$TMP/world
mkdir -p "$W/src"
cd "$W/src" || exit 1

# --- mainline: a tiny C program with a unit test ----------------------------------------
git_q init -q mainline && cd mainline || exit 1
cat >Makefile <<'EOF'
SRCS := $(wildcard */*.c) main.c
prog: $(SRCS)
	$(CC) -Wall -o $@ $(SRCS)
test: prog
	./prog
.PHONY: test
EOF
mkdir lib
printf 'int add(int a, int b) { return a + b; }\n' >lib/add.c
printf 'int add(int, int);\nint main(void) { return add(1, 2) == 3 ? 0 : 1; }\n' >main.c
git_q add -A && git_q commit -qm "initial" && cd ..

# commit FILE CONTENT SUBJECT: a patch with an author, a sign-off and a Link trailer
patch() {
	mkdir -p "$(dirname "$1")"
	printf '%s\n' "$2" >"$1"
	git add -A
	id=$(printf '%s' "$3" | tr -c 'a-z0-9' '-')
	git -c user.name="Zoë Ångström" -c user.email=zoe@example.org commit -qm "$3

Body of $3.

Signed-off-by: Zoë Ångström <zoe@example.org>
Link: https://lore.kernel.org/r/20261201-$id@example.org"
}

git_q clone -q mainline net && cd net
patch net/a.c 'int net_a(void) { return 1; }' "net: add net_a"
patch net/b.c 'int net_b(void) { return 2 }' "net: add net_b"
patch net/c.c 'int net_c(void) { return 3; }' "net: add net_c"
cd ..
git_q clone -q mainline vfs && cd vfs
patch fs/x.c 'int fs_x(void) { return 4; }' "fs: add fs_x"
cd ..
for r in mainline net vfs; do git clone -q --bare $r "$W/$r.git"; done
BAD=$(git -C net rev-parse HEAD~1)

cat >"$W/nextbot.yaml" <<EOF
workdir: state
base: {name: origin, url: "file://$W/mainline.git", branch: master}
trees:
  - {name: net, url: "file://$W/net.git", branch: master, contacts: ["Net Maintainer <net@example.org>"]}
  - {name: vfs, url: "file://$W/vfs.git", branch: master, contacts: ["vfs@example.org"]}
build:
  - {name: build, command: make, timeout: 60}
test:
  - {name: unit, command: make test, timeout: 60}
bisect: {confirm: 2, jobs: 1}
notify: {from: "nextbot <nextbot@example.org>", list: "list@example.org"}
EOF
NB() { "$NEXTBOT" -q -c "$W/nextbot.yaml" "$@"; }

# --- night 1 ------------------------------------------------------------------------------
expect_exit 0 "night 1 runs" NB run --date 2026-12-05
NB --json flagged >"$TMP/flags.json"
check "one flag, on net's bad patch" $PYTHON - "$TMP/flags.json" "$BAD" <<'EOF'
import json, sys
flags = json.load(open(sys.argv[1]))["flags"]
assert len(flags) == 1, flags
f = flags[0]
assert f["tree"] == "net" and f["commit"] == sys.argv[2], f
assert f["kind"] == "build-failure" and f["state"] == "open", f
assert f["author"]["name"] == "Zoë Ångström", f
assert f["verdict"]["culprit_fails"] >= 2 and f["verdict"]["parent_passes"] >= 2, f
assert f["verdict"]["revert_passes"] >= 1, f
assert f["message_id"].startswith("20261201-net--add-net-b"), f
EOF
REPO=$W/state/repo.git
check "tag next-20261205 exists" sh -c "git -C '$REPO' rev-parse -q --verify refs/tags/next-20261205 >/dev/null"
check "next has the revert" sh -c "git -C '$REPO' log --format=%s next | grep -q '^Revert \"net: add net_b\"'"
check "next has net_c and vfs" sh -c "git -C '$REPO' ls-tree -r --name-only next | grep -q net/c.c &&
	git -C '$REPO' ls-tree -r --name-only next | grep -q fs/x.c"
check "next builds" sh -c "rm -rf '$TMP/co' && git clone -q -b next '$REPO' '$TMP/co' && make -s -C '$TMP/co' test >/dev/null"
check "Next/SHA1s names net's tip" sh -c "git -C '$REPO' show next:Next/SHA1s | grep -q \"^net	$(git -C net rev-parse HEAD)\""
NB --json status >"$TMP/status.json"
check "status says regression, net reverted" $PYTHON - "$TMP/status.json" <<'EOF'
import json, sys
run = json.load(open(sys.argv[1]))["runs"][-1]
assert run["result"] == "regression", run
st = {t["name"]: t["state"] for t in run["trees"]}
assert st["net"] == "reverted" and st["vfs"] == "merged" and st["origin"] == "merged", st
EOF
ls "$W/state/outbox" >"$TMP/outbox1"
check "mails queued" test -s "$TMP/outbox1"
check "a report to the author" sh -c "grep -l 'zoe@example.org' '$W'/state/outbox/* >/dev/null"

expect_exit 0 "report --html" NB report --html "$TMP/report"
FLAG1=$($PYTHON -c 'import json,sys; print(json.load(open(sys.argv[1]))["flags"][0]["id"])' "$TMP/flags.json")
check "the report shows the trees and the flag" sh -c "grep -q '>net<' '$TMP/report/index.html' &&
	grep -q '$FLAG1' '$TMP/report/index.html'"

# --- the same night again: nothing new ------------------------------------------------------
expect_exit 0 "night 1 again" NB run --date 2026-12-05
ls "$W/state/outbox" >"$TMP/outbox2"
check "no new notice for the same breakage" cmp -s "$TMP/outbox1" "$TMP/outbox2"
check "still one flag" sh -c "$NEXTBOT -c '$W/nextbot.yaml' --json flagged | $PYTHON -c 'import json,sys; assert len(json.load(sys.stdin)[\"flags\"]) == 1'"

# --- a second writer is refused ---------------------------------------------------------------
( flock -x 9; sleep 3 ) 9>"$W/state/lock" &
sleep 0.5
expect_exit 1 "a second run exits 1 while the lock is held" NB run --date 2026-12-06
wait

# --- drop the flagged patch, rebase net: it stays out -----------------------------------------
FLAG=$($PYTHON -c 'import json,sys; print(json.load(open(sys.argv[1]))["flags"][0]["id"])' "$TMP/flags.json")
expect_exit 0 "drop the flag" NB drop "$FLAG" --reason "breaks the build"
cd net
OLD=$(git rev-parse HEAD)
GIT_COMMITTER_DATE="2026-12-06T00:00:00Z" git -c user.name=M -c user.email=m@example.org \
	rebase -q --force-rebase HEAD~3
git push -q -f "$W/net.git" HEAD:master
cd ..
check "net was really rebased" test "$OLD" != "$(git -C net rev-parse HEAD)"
expect_exit 0 "night 2 runs" NB run --date 2026-12-06
check "the dropped patch is not in next" sh -c "! git -C '$REPO' ls-tree -r --name-only next | grep -q net/b.c"
check "net_c still is" sh -c "git -C '$REPO' ls-tree -r --name-only next | grep -q net/c.c"
check "night 2 is clean" sh -c "$NEXTBOT -c '$W/nextbot.yaml' --json status | $PYTHON -c 'import json,sys; r=json.load(sys.stdin)[\"runs\"][-1]; assert r[\"result\"]==\"clean\", r'"
check "a dropped notice was queued" sh -c "grep -l '\"kind\": *\"dropped\"' '$W'/state/outbox/* >/dev/null"

# --- kill -9 in the middle of a night; the next run finishes it ------------------------------
"$NEXTBOT" -q -c "$W/nextbot.yaml" run --date 2026-12-07 &
pid=$!
sleep 0.3
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
expect_exit 0 "the night after a kill -9 runs" NB run --date 2026-12-07
check "state.json is valid JSON" $PYTHON -c "import json; json.load(open('$W/state/state.json'))"
check "the killed night is recorded once" sh -c "$NEXTBOT -c '$W/nextbot.yaml' --json status | $PYTHON -c 'import json,sys; d=[r[\"date\"] for r in json.load(sys.stdin)[\"runs\"]]; assert d.count(\"2026-12-07\")==1, d'"

done_testing
