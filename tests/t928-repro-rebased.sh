#!/bin/sh
# The Reproduce: block of a culprit whose tree was rebased afterwards, and whose
# server then dropped the old commits (git gc): fetching the night's commit by id
# fails ("not our ref"); the block says the commit is gone, fetches the tree's
# branch, names the commit of the same patch (the flag's patch-id) and reproduces
# the failure with it.
. "$(dirname "$0")/lib.sh"
MAILS=$(cd "$(dirname "$0")" && pwd)/mails.py
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
expect_exit 0 "night 1 flags the breaker" NB run --date 2026-12-05
NB --json flagged >"$TMP/f1.json"
old=$($PYTHON -c 'import json,sys; print(json.load(open(sys.argv[1]))["flags"][0]["commit"])' \
	"$TMP/f1.json")

# the tree is rebased ("drv: one" reworded: every later commit is new) and the
# server forgets the old commits
cd "$TMP/src" || exit 1
GIT_SEQUENCE_EDITOR="sed -i '1s/^pick/reword/'" GIT_EDITOR="sed -i '1s/one/one, reworded/'" \
	git_q rebase -q -i HEAD~4 >/dev/null 2>&1
git_q push -q -f "$R/drv.git" drv
git_q -C "$R/drv.git" reflog expire --expire=now --all
git_q -C "$R/drv.git" gc -q --prune=now
cd "$TMP" || exit 1
check "the server no longer has the night's commit" \
	sh -c "! git -C '$R/drv.git' cat-file -e '$old' 2>/dev/null"

# (the bisect logs name the old commits: they are gone, the logs cannot replay)
check "night 1's Reproduce: block still fails with the flag's first error" \
	$PYTHON "$MAILS" repro "$TMP/state/outbox" "$TMP/f1.json" --expose "$R" --replay no
check "the block says when the night's commit is gone and follows the patch-id" $PYTHON - \
	"$TMP/state/outbox" <<'EOF'
import glob, json, sys
texts = [json.load(open(p))["body"] for p in glob.glob(sys.argv[1] + "/*.json")]
sys.exit(not any("is gone from" in t and "patch-id" in t for t in texts))
EOF
done_testing
