#!/bin/sh
# A night on a simulated world (seed 1, 5 days) with no build or test: next
# is made and tagged, never holds mm-unstable, merges the trees in config order (or
# says why not), carries linux-next's files in their formats, and a second run of
# the same night gives the same tree.
. "$(dirname "$0")/lib.sh"

W=$TMP/w
"$NEXTBOT" -q sim init "$W" --seed 1 >/dev/null || exit 1
"$NEXTBOT" -q sim advance "$W" --days 5 >/dev/null || exit 1
# the same config without build and test
$PYTHON - "$W/nextbot.yaml" <<'EOF'
import re, sys
p = sys.argv[1]
s = open(p).read()
s = re.sub(r"(?m)^build:\n(?:  - [^\n]*\n)+", "build: []\n", s)
s = re.sub(r"(?m)^test:\n(?:  - [^\n]*\n)+", "test: []\n", s)
open(p, "w").write(s)
EOF
check "build and test are empty" sh -c "grep -q '^build: \[\]' '$W/nextbot.yaml' && grep -q '^test: \[\]' '$W/nextbot.yaml'"
NB() { "$NEXTBOT" -q -c "$W/nextbot.yaml" "$@"; }
R=$W/state/repo.git

expect_exit 0 "the night runs" NB run --date 2026-12-05
check "tag next-20261205 exists" sh -c "git -C '$R' rev-parse -q --verify refs/tags/next-20261205 >/dev/null"
check "the tag is next" test "$(git -C "$R" rev-parse next-20261205)" = "$(git -C "$R" rev-parse next)"
check "the tip is linux-next's files commit" sh -c \
	"git -C '$R' log -1 --format=%s next | grep -qx 'Add linux-next specific files for 20261205'"
check "localversion-next" sh -c "test \"\$(git -C '$R' show next:localversion-next)\" = '-next-20261205'"

# no commit of next is reachable only from mm-unstable
check "next holds nothing that only mm-unstable has" sh -c "
	for c in \$(git -C '$W/remotes/mm.git' rev-list mm-unstable --not mm-next mm-stable); do
		git -C '$R' cat-file -e \$c 2>/dev/null || continue
		git -C '$R' merge-base --is-ancestor \$c next && exit 1
	done; exit 0"

git -C "$R" show next:Next/Trees >"$TMP/Trees"
git -C "$R" show next:Next/SHA1s >"$TMP/SHA1s"
git -C "$R" show next:Next/merge.log >"$TMP/merge.log"
NB --json status >"$TMP/status.json"
check "Next/Trees, Next/SHA1s and merge.log are in linux-next's formats" $PYTHON - "$W" "$TMP" <<'EOF'
import json, re, subprocess, sys
w, tmp = sys.argv[1:3]
trees = open(tmp + "/Trees").read().split("\n")
assert trees[:4] == ["Trees included into this release:", "", "Name\tType\tURL", "----\t----\t---"], trees[:4]
rows = [t.split("\t") for t in trees[4:] if t]
assert all(len(r) == 3 and r[1] == "git" and "#" in r[2] for r in rows), rows
names = [r[0] for r in rows]
assert names[0] == "origin", names
assert "mm-unstable" not in names
order = ["origin", "mm-stable", "mm-next", "net-next", "vfs", "sched"]
run = json.load(open(tmp + "/status.json"))["runs"][-1]
states = {t["name"]: t for t in run["trees"]}
merged = [n for n in order if states[n]["state"] != "left-out" and states[n]["state"] != "fetch-failed"]
assert names == merged, (names, merged)
for n in order:
    if states[n]["state"] in ("left-out", "fetch-failed"):
        assert states[n]["reason"], states[n]
sha1s = open(tmp + "/SHA1s").read().split("\n")
assert sha1s[:2] == ["Name\tSHA1", "----\t----"], sha1s[:2]
srows = [s.split("\t") for s in sha1s[2:] if s]
assert [r[0] for r in srows] == names, srows
assert all(re.fullmatch(r"[0-9a-f]{40}", r[1]) for r in srows), srows
log = open(tmp + "/merge.log").read()
assert "$ git checkout master" in log and "$ git reset --hard origin/master" in log, log[:300]
for n in merged[1:]:
    assert re.search(r"^Merging %s/\S+ \([0-9a-f]{12} " % re.escape(n), log, re.M), n
    assert re.search(r"^\$ git merge --no-ff -m Merge branch '\S+' of \S+ %s/" % re.escape(n), log, re.M), n
EOF
check "every merge of next is --no-ff, by the merge identity, at 00:00 UTC" sh -c "
	git -C '$R' log --merges --first-parent --format='%an <%ae> %ad %s' --date=iso-strict-local \
		next-20261205 --not refs/feeds/origin | TZ=UTC awk '
		!/^nextbot <nextbot@example.org> 2026-12-05T00:00:00/ { bad = 1 }
		!/Merge branch / { bad = 1 } END { exit bad }'"

TREE1=$(git -C "$R" rev-parse "next^{tree}")
expect_exit 0 "the same night again" NB run --date 2026-12-05
check "the same next tree" test "$TREE1" = "$(git -C "$R" rev-parse "next^{tree}")"
check "the night is recorded once" sh -c "$NEXTBOT -c '$W/nextbot.yaml' --json status |
	$PYTHON -c 'import json,sys; d=[r[\"date\"] for r in json.load(sys.stdin)[\"runs\"]]; assert d.count(\"2026-12-05\")==1, d'"

# --- a world is a folder its user may move: remotes borrow the store's objects by a
# relative path, and the config names them beside itself ("./remotes/…") ------------
check "the remotes borrow objects by a relative path" sh -c \
	"! grep -q '^/' '$W'/remotes/*.git/objects/info/alternates"
mv "$W" "$TMP/moved"
W=$TMP/moved
R=$W/state/repo.git
old_tip=$(git -C "$W/remotes/net-next.git" rev-parse net-next)
expect_exit 0 "a moved world advances" "$NEXTBOT" -q sim advance "$W"
check "its remotes see the new day's commits" sh -c \
	"git -C '$W/remotes/net-next.git' fsck --no-progress --connectivity-only >/dev/null 2>&1 &&
	 git -C '$W/remotes/mm.git' fsck --no-progress --connectivity-only >/dev/null 2>&1 &&
	 test \"\$(git -C '$W/remotes/net-next.git' rev-list $old_tip..net-next | wc -l)\" -gt 0"
expect_exit 0 "the moved world's night runs" NB run --date 2026-12-06
check "the moved night fetched the new day" test \
	"$(git -C "$R" rev-parse refs/feeds/net-next)" = "$(git -C "$W/remotes/net-next.git" rev-parse net-next)"
check "and tagged next" git -C "$R" rev-parse -q --verify refs/tags/next-20261206
check "no tree of the moved night is stale or failed to fetch" sh -c "$NEXTBOT -c '$W/nextbot.yaml' --json status |
	$PYTHON -c 'import json,sys; r=json.load(sys.stdin)[\"runs\"][-1]; assert r[\"date\"]==\"2026-12-06\", r; assert all(t[\"state\"] not in (\"fetch-failed\", \"stale\") for t in r[\"trees\"]), r'"
done_testing
