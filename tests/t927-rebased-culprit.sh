#!/bin/sh
# A known culprit is followed by its patch-id.  Night 1 flags a tree's breaker;
# the tree is then rebased (an earlier patch reworded: every later commit gets a
# new id, the breaker keeps its patch-id).  Night 2 acts on the flag again at once,
# on the breaker's new commit, with no new search and no second flag or report.
. "$(dirname "$0")/lib.sh"
R=$TMP/remotes


mkdir -p "$R" "$TMP/src"
cd "$TMP/src" || exit 1
git_q init -q
commit_file check.sh 'if [ -e BROKEN ]; then echo "check.sh:1: FAIL: broken"; exit 1; fi\n' "check: the build"
git_q clone -q --bare . "$R/mainline.git"
git_q checkout -q -b drv
commit_file d1 "1\n" "drv: one"
commit_file d2 "2\n" "drv: two"
commit_file BROKEN "x\n" "drv: break the build"
commit_file d3 "3\n" "drv: three"
git_q push -q "$R/mainline.git" drv:refs/heads/drv 2>/dev/null
git_q clone -q --bare --branch drv . "$R/drv.git"
cd "$TMP" || exit 1
cat >"$TMP/nextbot.yaml" <<EOF
workdir: state
base: {name: origin, url: "$R/mainline.git", branch: master}
trees:
  - {name: drv, url: "$R/drv.git", branch: drv, contacts: ["D <d@example.org>"]}
build:
  - {name: build, command: sh check.sh, timeout: 60}
notify: {from: "nextbot <nextbot@example.org>", list: "next@example.org"}
EOF
NB() { "$NEXTBOT" -q -c "$TMP/nextbot.yaml" "$@"; }
expect_exit 0 "night 1" NB run --date 2026-12-05
NB --json flagged >"$TMP/f1.json"
old=$($PYTHON -c 'import json,sys; print(json.load(open(sys.argv[1]))["flags"][0]["commit"])' "$TMP/f1.json")

# the tree is rebased: "drv: one" reworded, so every commit after it is new
cd "$TMP/src" || exit 1
git_q rebase -q --exec true HEAD~4 2>/dev/null
GIT_SEQUENCE_EDITOR="sed -i '1s/^pick/reword/'" GIT_EDITOR="sed -i '1s/one/one, reworded/'" \
	git_q rebase -q -i HEAD~4 >/dev/null 2>&1
git_q push -q -f "$R/drv.git" drv
new=$(git rev-parse ':/^drv: break the build')
cd "$TMP" || exit 1
check "the breaker has a new commit id" test "$old" != "$new"

expect_exit 0 "night 2" NB run --date 2026-12-06
NB --json flagged >"$TMP/f2.json"
NB --json status >"$TMP/s2.json"
check "one flag, open, now naming the breaker's new commit" $PYTHON - "$TMP/f2.json" "$new" <<'EOF'
import json, sys
flags = json.load(open(sys.argv[1]))["flags"]
print("# flags:", [(f["id"], f["state"], f["commit"][:12]) for f in flags])
sys.exit(not (len(flags) == 1 and flags[0]["state"] == "open" and flags[0]["commit"] == sys.argv[2]))
EOF
check "night 2 acted on it again without a new search (metrics.prom: no bisection)" \
	grep -qx 'nextbot_night_bisections 0' "$TMP/state/metrics.prom"
check "night 2 says the tree was rebased and the breaker reverted" $PYTHON - "$TMP/s2.json" "$new" \
	"$TMP/state/runs/2026-12-06/run.json" <<'EOF'
import json, sys
run = [r for r in json.load(open(sys.argv[1]))["runs"] if r["date"] == "2026-12-06"][0]
notes = " ".join(json.load(open(sys.argv[3])).get("notes") or [])
print("# notes:", notes)
tree = [t for t in run["trees"] if t["name"] == "drv"][0]
sys.exit(not ("was rebased" in notes and "without a new search" in notes and
              tree["state"] == "reverted" and sys.argv[2][:12] in (tree["reason"] or "")))
EOF
done_testing
