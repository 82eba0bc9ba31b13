#!/bin/sh
# `nextbot gc` with the real binary: 30 fabricated nights with keep_days 7 keep the
# runs of the 7 newest nights by run date (their folders, records and tags), flags
# and drops stay, idle worker directories and sent notices go, and the work
# repository is packed: with libgit2 when git is not on PATH, then with git gc.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1
GIT=$(command -v git)

cat >nextbot.yaml <<'EOF'
workdir: state
base: {name: origin, url: "https://example.org/linux.git", branch: master}
trees:
  - {name: t1, url: "https://example.org/t1.git", branch: for-next}
keep_days: 7
EOF
mkdir -p state/runs state/outbox state/workers/w0 state/workers/w1 state/runs/not-a-night

# The work repository: 30 night commits, each tagged, plus loose junk objects.
git_q init -q --bare state/repo.git
git_q init -q w
for d in $(seq 1 30); do
	day=$(printf '2026-01-%02d' "$d")
	echo "$d" >w/f
	git_q -C w add f && git_q -C w commit -q -m "night $day"
	git_q -C w tag "next-$(echo "$day" | tr -d -)"
	mkdir -p "state/runs/$day" && echo "merge log $day" >"state/runs/$day/merge.log"
done
git_q -C w push -q ../state/repo.git master:refs/heads/next 'refs/tags/*:refs/tags/*'
git_q -C state/repo.git tag keep-me next
# pushes over the local transport may arrive as a pack: make sure objects are loose
(cd state/repo.git && for p in objects/pack/*.pack; do [ -e "$p" ] || continue
	mv "$p" "$TMP/p.pack"; rm -f "${p%.pack}".*; git_q unpack-objects -q <"$TMP/p.pack"; done)
for i in $(seq 1 20); do echo "junk $i" | git_q -C state/repo.git hash-object -w --stdin >/dev/null; done
loose_before=$(git_q -C state/repo.git count-objects -v | awk '/^count:/ {print $2}')

# state.json: the runs of 30 nights (shuffled), three flags, two drops.
$PYTHON - <<'EOF'
import json, random
runs = [{"date": "2026-01-%02d" % d, "tag": "next-202601%02d" % d, "next": "0" * 40,
         "result": "clean", "started": None, "finished": None, "trees": [], "flags": [],
         "notes": []} for d in range(1, 31)]
random.Random(7).shuffle(runs)
flags = [{"id": "%012x" % i, "fingerprint": "fp%d" % i, "kind": "build-failure",
          "tree": "t1", "commit": "1" * 40, "subject": "patch %d" % i, "state": "open",
          "first_seen": "2026-01-0%d" % (i + 1), "last_seen": "2026-01-0%d" % (i + 1)}
         for i in range(3)]
drops = [{"tree": "t1", "commit": "2" * 40, "patch_id": "3" * 40, "subject": "dropped %d" % i,
          "reason": "broken", "when": "2026-01-02T00:00:00Z", "active": True} for i in range(2)]
json.dump({"runs": runs, "flags": flags, "drops": drops}, open("state/state.json", "w"))
def notice(i, state, sent):
    return {"version": 1, "id": "%032x" % i, "kind": "summary", "channel": "mail",
            "subject": "s", "from": "nb@example.org", "body": "b", "attempts": 1,
            "recipients": [{"to": "a@example.org", "state": state, "error": None}],
            "state": state, "last_error": None, "created": "2026-01-01T00:00:00Z",
            "next_try": "2026-01-01T00:00:00Z", "sent": sent}
for i in range(5):
    json.dump(notice(i, "sent", "2026-01-0%dT00:00:00Z" % (i + 1)),
              open("state/outbox/%032x.json" % i, "w"))
json.dump(notice(10, "queued", None), open("state/outbox/%032x.json" % 10, "w"))
json.dump(notice(11, "failed", None), open("state/outbox/%032x.json" % 11, "w"))
EOF
# w0 was last used 30 days ago, w1 today
mkdir -p state/workers/w0/tree state/workers/w1/tree
: >state/workers/w0/index
: >state/workers/w1/index
touch -d '30 days ago' state/workers/w0/tree state/workers/w0/index state/workers/w0

# 1: without git on PATH: libgit2's pack builder
expect_exit 0 "gc without git on PATH" env PATH=/nonexistent "$NEXTBOT" -c nextbot.yaml gc
check "says it packed with libgit2" grep -q "repacked .*repo.git with libgit2 pack builder" "$TMP/out"
check "says which runs went" grep -q "removed the runs of 23 nights: 2026-01-01 .. 2026-01-23 (and 23 tags)" "$TMP/out"
check "says which nights stay" grep -q "kept the runs of 7 nights: 2026-01-24 .. 2026-01-30" "$TMP/out"
check "names the idle worker" grep -qx "removed idle worker directory w0" "$TMP/out"
check "counts the sent notices" grep -qx "removed 5 sent notices" "$TMP/out"
check "7 run folders are left" test "$(ls state/runs | grep -c '^2026-')" = 7
check "the newest 7 by run date" test "$(ls state/runs | grep '^2026-' | head -1)" = 2026-01-24
check "other folders in runs/ stay" test -d state/runs/not-a-night
$PYTHON - >"$TMP/st" <<'EOF'
import json
s = json.load(open("state/state.json"))
print(" ".join(sorted(r["date"] for r in s["runs"])))
print(len(s["flags"]), len(s["drops"]), " ".join(f["id"] for f in s["flags"]),
      " ".join(d["subject"] for d in s["drops"]), all(d["active"] for d in s["drops"]))
EOF
check "state.json holds the 7 newest runs" grep -qx "2026-01-24 2026-01-25 2026-01-26 2026-01-27 2026-01-28 2026-01-29 2026-01-30" "$TMP/st"
check "flags and drops intact" grep -qx "3 2 000000000000 000000000001 000000000002 dropped 0 dropped 1 True" "$TMP/st"
check "status still reads the state" sh -c "'$NEXTBOT' -c nextbot.yaml status >/dev/null"
check "the worker used today stays" test -d state/workers/w1
check "the idle worker is gone" test ! -e state/workers/w0
check "queued and failed notices stay" test "$(ls state/outbox | wc -l)" = 2
check "old tags are gone, new ones and others stay" sh -c \
	"test \"\$(git -C state/repo.git tag | tr '\n' ' ')\" = 'keep-me next-20260124 next-20260125 next-20260126 next-20260127 next-20260128 next-20260129 next-20260130 '"
check "no loose objects are left" sh -c \
	"git -C state/repo.git count-objects -v | grep -qx 'count: 0'"
check "there were loose objects" test "$loose_before" -gt 50
check "one pack" test "$(ls state/repo.git/objects/pack/*.pack | wc -l)" = 1
check "git fsck is happy" sh -c "git -C state/repo.git fsck --no-progress --no-dangling 2>/dev/null"
check "next and the kept tags still resolve" sh -c "git -C state/repo.git rev-parse -q --verify next-20260130^{commit} >/dev/null"

# 2: more loose objects, now with git
for i in $(seq 1 5); do echo "more $i" | git_q -C state/repo.git hash-object -w --stdin >/dev/null; done
git_q -C state/repo.git update-ref refs/heads/extra "$(git_q -C state/repo.git commit-tree -m x next^{tree})"
expect_exit 0 "gc with git" "$NEXTBOT" -c nextbot.yaml gc
check "says it ran git gc" grep -q "repacked .*repo.git with git gc --prune=now" "$TMP/out"
check "nothing more to remove" grep -qx "removed no runs" "$TMP/out"
check "no loose objects after git gc" sh -c \
	"git -C state/repo.git count-objects -v | grep -qx 'count: 0'"
check "the new ref survived" sh -c "git -C state/repo.git rev-parse -q --verify extra >/dev/null"
check "-q prints nothing" sh -c "'$NEXTBOT' -q -c nextbot.yaml gc >'$TMP/q' 2>&1 && test ! -s '$TMP/q'"

# 3: usage and the lock
expect_exit 2 "gc takes no arguments" "$NEXTBOT" -c nextbot.yaml gc now
$PYTHON -c '
import fcntl, os, sys, time
fd = os.open("state/lock", os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
open("state/held", "w").close()
time.sleep(5)' &
holder=$!
while [ ! -e state/held ]; do sleep 0.1; done
expect_exit 1 "gc waits for no one: the lock is held" "$NEXTBOT" -c nextbot.yaml gc
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
test -n "$GIT"
done_testing
