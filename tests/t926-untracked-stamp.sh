#!/bin/sh
# Untracked leftovers never decide a verdict.  A tree's test passes whenever an
# untracked stamp is in the worker, and a passing run leaves one once a certain
# patch is in: a search in kept trees would then pass every later probe and end on
# an innocent patch, and the tree (or another) would be called flaky.  With the
# default clean probes, and with `incremental: true` (kept trees, contradictions
# searched again clean), with bisect.confirm 3 as with 2: the breaker is flagged,
# nothing else, nothing flaky.
. "$(dirname "$0")/lib.sh"
R=$TMP/remotes


mkdir -p "$R" "$TMP/src"
cd "$TMP/src" || exit 1
git_q init -q
# the test: fails when BROKEN is there, unless a stamp is; leaves a stamp once
# stamper.txt is in the tree
commit_file check.sh 'if [ ! -e .stamp ] && [ -e BROKEN ]; then echo "check.sh:2: FAIL: broken"; exit 1; fi\nif [ -e stamper.txt ]; then touch .stamp; fi\necho ok\n' "check: the self-test"
git_q clone -q --bare . "$R/mainline.git"
git_q checkout -q -b drivers
i=1
while [ "$i" -le 9 ]; do
	commit_file "drivers/d$i.txt" "driver $i\n" "drivers: add driver $i"
	[ "$i" = 2 ] && commit_file stamper.txt "x\n" "drivers: keep a stamp of passing runs"
	[ "$i" = 6 ] && commit_file BROKEN "x\n" "drivers: break the self-test"
	i=$((i + 1))
done
git_q clone -q --bare --branch drivers . "$R/drivers.git"
cd "$TMP" || exit 1

# night LABEL INCREMENTAL CONFIRM: a fresh workdir, one night; its flags to $TMP/LABEL.json
night() {
	mkdir -p "$TMP/$1"
	cat >"$TMP/$1/nextbot.yaml" <<EOF
workdir: state
base: {name: origin, url: "$R/mainline.git", branch: master}
trees:
  - {name: drivers, url: "$R/drivers.git", branch: drivers, contacts: ["D <d@example.org>"]}
test:
  - {name: selftest, command: sh check.sh, timeout: 60, incremental: $2}
bisect: {confirm: $3}
notify: {from: "nextbot <nextbot@example.org>", list: "next@example.org"}
EOF
	expect_exit 0 "$1: the night runs" "$NEXTBOT" -q -c "$TMP/$1/nextbot.yaml" run \
		--date 2026-12-05 --no-notify
	"$NEXTBOT" -c "$TMP/$1/nextbot.yaml" --json flagged >"$TMP/$1.json"
	check "$1: the breaker is flagged, nothing else, nothing flaky" $PYTHON - "$TMP/$1.json" <<'EOF'
import json, sys
flags = json.load(open(sys.argv[1]))["flags"]
got = [(f["kind"], f["subject"]) for f in flags]
print("# flagged:", got)
sys.exit(got != [("test-failure", "drivers: break the self-test")])
EOF
}

night clean false 2
night kept true 2
check "kept: the search in kept trees was contradicted and made again clean" \
	grep -q "searching again in clean trees" "$TMP/kept.json"
night kept3 true 3
done_testing
