#!/bin/sh
# Housekeeping after 30 simulated nights, real binary: a sim world (seed 2, one
# tree besides the mm branches, a small project: what gc keeps does not depend on
# the world's size, and its nights cost less) with keep_days 7. Night 1 builds and
# tests (a real flag comes out of it); nights 2-30 run with build: [] and test: []
# to be fast. The flag's patch is
# dropped by flag id after night 2, a never-flagged patch by a commit id prefix after
# night 5. `nextbot gc` then leaves the 7 newest nights by run date (runs/ folders,
# status --json runs, next-YYYYMMDD tags), the work repository packed (git as the
# oracle: no loose objects, fsck clean), every flag and drop exactly as before, and
# a 31st night runs on the packed repository.
. "$(dirname "$0")/lib.sh"

W=$TMP/world
CFG=$W/nextbot.yaml
S=$W/state
REPO=$S/repo.git
# --no-cache: the compiler cache saves nothing in these nights of a 20-file tree
# (CPU 26, 26 s without it; 26, 29 s with it, side by side on a loaded machine)
expect_exit 0 "sim init (seed 2)" "$NEXTBOT" sim init "$W" --seed 2 --trees 1 --files 20 \
	--no-cache
NB() { "$NEXTBOT" -q -c "$CFG" "$@"; }
date_of() { date -u -d "2026-12-01 + $1 days" +%Y-%m-%d; }

# the sim's config with the build and test lists replaced: config BUILD TEST
config() {
	$PYTHON - "$CFG" "$1" "$2" <<'EOF'
import re, sys
path, build, test = sys.argv[1:4]
s = open(path).read()
s = re.sub(r"(?ms)^build:.*?(?=^notify:)", "", s)
s = re.sub(r"(?m)^(keep_days|build_after_each_merge|bisect):.*\n", "", s)
s = s.replace("notify:", "build: %s\ntest: %s\nbuild_after_each_merge: false\n"
              "bisect: {confirm: 1, jobs: 2}\nkeep_days: 7\nnotify:" % (build, test), 1)
open(path, "w").write(s)
EOF
}
config '[{name: build, command: make, timeout: 120}]' '[{name: test, command: make test, timeout: 120}]'
expect_exit 0 "the config is valid" NB check-config

night=1
while [ "$night" -le 30 ]; do
	"$NEXTBOT" sim advance "$W" --days 1 >/dev/null 2>&1 || not_ok "sim advance $night"
	NB run --date "$(date_of $night)" || not_ok "night $night exits $?"
	case $night in
	1)
		config '[]' '[]'
		"$NEXTBOT" -c "$CFG" --json flagged >"$TMP/flags1.json"
		check "night 1 found a real flag" $PYTHON -c "
import json; f = json.load(open('$TMP/flags1.json'))['flags']
assert f and all(x['first_seen'] == '2026-12-02' for x in f), f" ;;
	2)
		FLAG=$($PYTHON -c "import json; print(json.load(open('$TMP/flags1.json'))['flags'][0]['id'])")
		expect_exit 0 "drop flag $FLAG" NB drop "$FLAG" --reason "broke the build" ;;
	5)
		# a new patch of net-next that was never flagged, named by a commit id prefix
		C=$(git -C "$REPO" rev-list --no-merges refs/feeds/net-next --not refs/feeds/origin | tail -1)
		check "net-next has a patch of its own" test -n "$C"
		expect_exit 0 "drop net-next's ${C%????????????????????????????} by commit prefix" \
			NB drop "${C%????????????????????????????}" --reason "not wanted" ;;
	esac
	night=$((night + 1))
done
ok "30 nights ran"

"$NEXTBOT" -c "$CFG" --json status --last 100 >"$TMP/st-before.json"
check "status lists 30 nights before gc" $PYTHON -c "
import json; r = json.load(open('$TMP/st-before.json'))['runs']
assert [x['date'] for x in r] == ['2026-12-%02d' % d for d in range(2, 32)], [x['date'] for x in r]
assert all(x['result'] in ('clean', 'regression') for x in r), [x['result'] for x in r]"
check "30 run folders before gc" test "$(ls "$S/runs" | grep -c '^2026-')" = 30
check "30 tags before gc" test "$(git -C "$REPO" tag -l 'next-*' | wc -l)" = 30
"$NEXTBOT" -c "$CFG" --json flagged >"$TMP/flags-before.json"
$PYTHON -c "import json; print(json.dumps(json.load(open('$S/state.json'))['drops'], sort_keys=True))" \
	>"$TMP/drops-before.json"
check "two drops, both active" $PYTHON -c "
import json; d = json.load(open('$TMP/drops-before.json'))
assert len(d) == 2 and all(x['active'] for x in d), d"
check "the flag is dropped" $PYTHON -c "
import json; f = json.load(open('$TMP/flags-before.json'))['flags']
assert [x['state'] for x in f if x['id'] == '$FLAG'] == ['dropped'], f"
loose=$(git -C "$REPO" count-objects -v | awk '/^count:/ {print $2}')
check "the nights left loose objects ($loose)" test "$loose" -gt 0

# --- gc --------------------------------------------------------------------------------------
expect_exit 0 "nextbot gc" "$NEXTBOT" -c "$CFG" gc
check "gc says it kept 7 nights" grep -q "kept the runs of 7 nights: 2026-12-25 .. 2026-12-31" "$TMP/out"
check "7 run folders are left, the newest by run date" test \
	"$(ls "$S/runs" | grep '^2026-' | tr '\n' ' ')" = \
	"2026-12-25 2026-12-26 2026-12-27 2026-12-28 2026-12-29 2026-12-30 2026-12-31 "
"$NEXTBOT" -c "$CFG" --json status --last 100 >"$TMP/st-after.json"
check "status --json lists the same 7 nights, unchanged" $PYTHON -c "
import json
before = json.load(open('$TMP/st-before.json'))['runs']
after = json.load(open('$TMP/st-after.json'))['runs']
assert after == before[-7:], [x['date'] for x in after]"
check "the tags of the 7 nights are left" test \
	"$(git -C "$REPO" tag -l 'next-*' | tr '\n' ' ')" = \
	"next-20261225 next-20261226 next-20261227 next-20261228 next-20261229 next-20261230 next-20261231 "
check "the work repository is packed: no loose objects" sh -c \
	"git -C '$REPO' count-objects -v | grep -qx 'count: 0'"
check "a pack holds them" sh -c "ls '$REPO'/objects/pack/*.pack >/dev/null 2>&1"
check "git fsck is clean" sh -c "git -C '$REPO' fsck --no-progress --no-dangling >/dev/null 2>&1"
check "next and the feeds resolve" sh -c "git -C '$REPO' rev-parse -q --verify next^{tree} >/dev/null &&
	git -C '$REPO' rev-parse -q --verify refs/feeds/net-next^{commit} >/dev/null"
"$NEXTBOT" -c "$CFG" --json flagged >"$TMP/flags-after.json"
check "every flag is intact" cmp -s "$TMP/flags-before.json" "$TMP/flags-after.json"
$PYTHON -c "import json; print(json.dumps(json.load(open('$S/state.json'))['drops'], sort_keys=True))" \
	>"$TMP/drops-after.json"
check "every drop is intact" cmp -s "$TMP/drops-before.json" "$TMP/drops-after.json"

# --- life goes on -------------------------------------------------------------------------
"$NEXTBOT" sim advance "$W" --days 1 >/dev/null 2>&1
expect_exit 0 "night 31 runs on the packed repository" NB run --date 2027-01-01
check "night 31 is recorded and tagged" sh -c "'$NEXTBOT' -c '$CFG' --json status |
	$PYTHON -c 'import json,sys; r=json.load(sys.stdin)[\"runs\"][-1]; assert r[\"date\"]==\"2027-01-01\" and r[\"tag\"]==\"next-20270101\" and r[\"result\"] in (\"clean\",\"regression\"), r'"
check "the drops still hold: both patches are left out of next" $PYTHON - "$REPO" "$TMP/drops-after.json" <<'EOF'
import json, subprocess, sys
repo, drops = sys.argv[1], json.load(open(sys.argv[2]))
git = lambda *a: subprocess.run(["git", "-C", repo] + list(a), capture_output=True, text=True).stdout
ids = git("rev-list", "--no-merges", "refs/heads/next", "--not", "refs/feeds/origin").split()
pids = set()
for c in ids:
    diff = git("diff-tree", "-p", "--no-renames", c + "^", c)
    out = subprocess.run(["git", "patch-id", "--stable"], input=diff, capture_output=True, text=True).stdout
    if out:
        pids.add(out.split()[0])
bad = [d["subject"] for d in drops if d["patch_id"] in pids]
assert not bad, bad
EOF

done_testing
