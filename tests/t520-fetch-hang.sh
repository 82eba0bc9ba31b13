#!/bin/sh
# Remotes that hang (they accept the connection and never answer) over https, the
# git protocol and ssh: the night gives each up after git.fetch_timeout without
# data, keeps the last tip of a tree that had one ("stale"), merges the trees that
# answered, and ends; a tree with no earlier tip is fetch-failed, naming the silence.
# A publish url that hangs is given up the same way, noted, and the night recorded.
. "$(dirname "$0")/lib.sh"

W=$TMP/w
mkdir -p "$W/remotes"
git_q init -q "$W/src"
(cd "$W/src" && seq 1 10 >f && git add f && git_q commit -q -m base &&
	git_q init -q --bare ../remotes/base.git && git push -q ../remotes/base.git master &&
	git checkout -q -b for-next && echo t1 >t1 && git add t1 && git_q commit -q -m t1 &&
	git_q init -q --bare ../remotes/t1.git && git push -q ../remotes/t1.git for-next &&
	git_q init -q --bare ../remotes/t2.git && git push -q ../remotes/t2.git for-next) ||
	exit 1

$PYTHON tests/hangd.py >"$TMP/port" &
HANGD=$!
stop_hangd() { kill "$HANGD" 2>/dev/null; wait "$HANGD" 2>/dev/null; }
at_exit stop_hangd
n=0
while [ ! -s "$TMP/port" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
P=$(cat "$TMP/port")
check "the hanging server listens" test -n "$P"

# night 1: t2 answers (it gets a tip); night 2: t2's url points at the hung server
config() {
	cat >"$W/nextbot.yaml" <<YAML
workdir: state
base: {name: origin, url: "file://$W/remotes/base.git", branch: master}
trees:
  - {name: t1, url: "file://$W/remotes/t1.git", branch: for-next}
  - {name: t2, url: "$1", branch: for-next}
  - {name: hung-https, url: "https://127.0.0.1:$P/linux.git", branch: master}
  - {name: hung-git, url: "git://127.0.0.1:$P/linux.git", branch: master}
  - {name: hung-ssh, url: "ssh://git@127.0.0.1:$P/linux.git", branch: master}
build: []
test: []
git: {fetch_timeout: 2s}
${2:+publish: {url: "$2"\}}
YAML
}
NB() { timeout 120 "$NEXTBOT" -q -c "$W/nextbot.yaml" "$@"; }

config "file://$W/remotes/t2.git"
NB run --date 2026-12-05 --no-notify >"$TMP/out1" 2>"$TMP/err1"
check "night 1 ends (not killed by the test's 120 s guard)" test $? -ne 124
config "https://127.0.0.1:$P/t2.git" "ssh://git@127.0.0.1:$P/next.git"
NB run --date 2026-12-06 --no-notify >"$TMP/out2" 2>"$TMP/err2"
check "night 2 ends (not killed by the test's 120 s guard)" test $? -ne 124
NB --json status >"$TMP/status.json"
check "each hung remote is fetch-failed for its silence; t2 is stale; t1 merged; the publish given up" \
	$PYTHON - "$TMP/status.json" "$W/state/runs/2026-12-06/run.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["runs"][-1]
notes = json.load(open(sys.argv[2]))["notes"]
trees = {t["name"]: t for t in run["trees"]}
for name in ("hung-https", "hung-git", "hung-ssh"):
    t = trees[name]
    assert t["state"] == "fetch-failed", t
    assert "no data from the remote for 2 s" in t["reason"], t
t2 = trees["t2"]
assert t2["state"] != "fetch-failed" and "no data from the remote for 2 s" in t2["reason"], t2
assert "last fetched tip" in t2["reason"], t2
assert trees["t1"]["state"] == "merged", trees["t1"]
assert any("publishing to ssh://" in x and "no data from push to ssh://" in x and
           "for 2 s; gave up" in x for x in notes), notes
PY
check "the reasons are logged" grep -q "hung-ssh: fetch of ssh://git@127.0.0.1:$P/linux.git master failed: no data from the remote for 2 s" "$TMP/err2"
check "next-20261206 is tagged" sh -c "git -C '$W/state/repo.git' rev-parse -q --verify refs/tags/next-20261206 >/dev/null"
done_testing
